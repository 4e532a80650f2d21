"""Text as a reader sees it: an answer (or a retrieved context) turned into the plain text a person reads once it is
rendered, so that the checks score what the reader reads, not the bytes that spell it.

>>> render("Gift cards ~~cannot~~ can be returned within &#51;0 days.").text
'Gift cards  can be returned within 30 days.'
>>> render("ⓖⓘⓕⓣ ⓒⓐⓡⓓⓢ, 𝐠𝐢𝐟𝐭 𝐜𝐚𝐫𝐝𝐬, ġịḟṭ, ＧＩＦＴ").text
'gift cards, gift cards, gift, GIFT'

What it does, in this order (each step is one pass; see :func:`render`):

00. **A whole answer that is a JSON document** (structured output) is read by its values, each on a line of its own
    (:mod:`~guardrail.render.structured`): run together, the copied values drown one that no passage supports.

0. **Comments that only name a source** (``<!-- source: policy -->``, ``<!-- ref: kb-123 -->``) are removed: metadata
   to every reader. :func:`render_shown` is the reading of a client that renders HTML: what it may not show is
   removed first, read as the HTML tokenizer reads it (every comment form, bogus ones too: ``<!x>``, ``<?x>``,
   ``</ x>``; elements not shown in the flow: ``<head>``, ``<title>``, ``<datalist>``, a closed ``<dialog>``, media
   fallback content...; elements with ``style``, ``class``, ``hidden`` or another attribute whose effect the guard
   cannot know, as it does not evaluate CSS; images' alt text; see :func:`~guardrail.render.markup.hidden_regions`).
   The checks judge both readings and keep the worse (``Gift cards can<!-- not --> be returned.`` is "can not" in
   plain text, "can" in a browser).
1. **Struck text is removed**, only where every common reader strikes it (cmark-gfm, markdown-it, a browser's
   HTML5 parser): ``~~x~~`` (flanking as CommonMark reads it, within a line; a single ``~`` or ``~~~`` is text),
   ``<del>``, ``<s>``, ``<strike>`` where CommonMark reads raw HTML (not in code spans, link destinations, ``[...]``,
   comments, CDATA, declarations; not broken over lines; within one paragraph), and letters struck with a combining
   overlay (``c̶a̶n̶n̶o̶t̶``). Where readers may disagree the text is read. A stream reads struck text that spans
   sentences as one sentence (:func:`~guardrail.render.markup.struck_regions`).
2. **Markdown blocks**: a table is read as statements, one per row and column: the row's first cell with each other
   cell, and with its header where the cell needs it ("| Item | Return window | Fee |" / "| Shoes | 30 days of
   delivery | 5 |" -> "Shoes: 30 days of delivery. Shoes: fee: 5."; see ``_row``);
   heading, block-quote and rule marks are dropped; a checklist's marks read as the label reply they stand for
   ("- Gift cards ❌" -> "- Gift cards: no": :func:`~guardrail.render.blocks.checklist_marks`). Code (fenced, or
   indented by four columns after a blank line, as CommonMark reads it) is kept as it is: nothing in it is markup
   (``<del>`` there is shown, so it is read). An HTML ``<table>`` is read the same way, parsed into rows and cells (``colspan``/``rowspan`` expanded;
   :mod:`~guardrail.render.tables`), and a table whose headers are all predicates ("| Can be returned | Cannot be
   returned |") reads each cell with its header ("Gift cards: can be returned.").
3. **Inline marks**: emphasis, inline-code ticks, backslash escapes and HTML tags are dropped; a link reads as its
   text (and its title), an image as its alt text. A tag is one only where a reader's parser sees one: attribute
   names as CommonMark allows them (``<Gift cards within 90 days.>`` is text), an HTML element's name (``<Gift
   cards can be returned>`` is text), not escaped (``\\<del>``), not inside another tag's attribute value, not
   inside an element shown as written (``<textarea>``). Text that some reader may see is never dropped: HTML
   comments and hidden elements keep their text in this reading (a plain-text client shows it), only the marks go
   (the reading without them is :func:`render_shown`'s); the values of
   attributes a browser shows (``title``, ``alt``, ``aria-label``, ...) and any other attribute value that is prose
   (``data-note="..."``; not ``style``, ``class``, ``href``...) are kept, and so are bare words in a tag that are no
   HTML attribute.
4. **HTML entities** are decoded (``&#51;0``, ``&#x33;``, ``&amp;``, named ones), after the markup is read, as
   markdown and HTML treat them: ``&lt;del&gt;`` is text, not a tag.
5. **Right-to-left override** (U+202E ... U+202C): the characters between are reversed, as they are displayed.
6. **Unicode**: invisible characters (zero-width, bidi controls, soft hyphen, tags, variation selectors, fillers)
   are dropped; letters in decorated forms map to their base letter (NFKC: fullwidth, mathematical bold / italic /
   script, superscripts; by name: enclosed, parenthesized, circled, negative, squared, regional-indicator and
   small-capital letters, enclosed digits and numbers); combining marks are dropped where the base letter carries
   the meaning (after Latin, Greek, Cyrillic and non-letters: ``ġịḟṭ`` -> ``gift``; the uncased default model reads
   accents the same way), and kept in the scripts whose marks are vowels (Devanagari, Thai, Arabic, Hebrew, ...).
   A superscript after a digit keeps its meaning as a power (``10²`` -> ``10^2``).

Case is kept (sentence splitting and names need it; words are lower-cased where they are compared).

Offsets: :class:`Rendered` maps any span of the rendered text back to the span of the source it came from
(:meth:`Rendered.to_source`), so evidence computed on the rendered text points into the original.

Bounds: rendering is linear in the text (no pattern scans ahead for a closing mark: delimiters are paired with a
bounded stack, as CommonMark does); the statements a table becomes repeat its first cells and headers, and once the
added words would make the text more than twice as long (plus 4096 characters), further rows are read as their cells
once each.

Terminal control sequences are not rendered: :func:`~guardrail.render.unicode.terminal_controls` finds them and the
checks refuse an answer holding one (a terminal hides or overwrites text with them).

Modules: :mod:`~guardrail.render.offsets` (the maps back to the source), :mod:`~guardrail.render.markup` (steps 0, 1,
3 and 4), :mod:`~guardrail.render.blocks` and :mod:`~guardrail.render.tables` (step 2), :mod:`~guardrail.render.unicode`
(steps 5 and 6).

Text layer: this package imports nothing of guardrail outside the text layer (:mod:`guardrail.text`).
"""

from __future__ import annotations

from guardrail.render.blocks import (
    checklist_marks,
    citation_marks,
    definition_lists,
    list_numbers,
    markdown_blocks,
    task_boxes,
)
from guardrail.render.markup import (
    dangling_link_tails,
    hidden_html,
    hidden_regions,
    html_entities,
    inline_marks,
    prose_fences,
    provenance_comments,
    struck_html,
)
from guardrail.render.offsets import Pass, PassMap, Rendered
from guardrail.render.structured import json_document
from guardrail.render.tables import html_tables
from guardrail.render.unicode import apostrophes, look_alikes, rtl_overrides, surrogate_pairs, unicode_forms
from guardrail.text import split_sentences

__all__ = ["Rendered", "answer_start", "echo_span", "render", "render_shown"]

_PASSES: tuple[Pass, ...] = (surrogate_pairs, json_document, prose_fences, provenance_comments, struck_html, html_tables, definition_lists,
                             markdown_blocks, task_boxes, checklist_marks,
                             citation_marks, dangling_link_tails, inline_marks, list_numbers, html_entities, rtl_overrides, apostrophes, unicode_forms,
                             look_alikes)


def render(text: str) -> Rendered:
    """``text`` as a reader sees it (see the module docs), with the map back to ``text``."""
    if not isinstance(text, str):
        raise TypeError(f"render() takes a string, got {type(text).__name__}")
    return _run(text, _PASSES)


def render_shown(text: str) -> Rendered | None:
    """``text`` as a client that renders HTML shows it: what :func:`render` reads, without what such a client may not
    show (comments, hidden and styled elements, alt text; see :func:`~guardrail.render.markup.hidden_regions`).
    None when it hides nothing (the reading is :func:`render`'s). The checks judge both readings and keep the worse:
    a hidden word may make a claim look supported in one of them ("Gift cards can<!-- not --> be returned.")."""
    if not isinstance(text, str):
        raise TypeError(f"render_shown() takes a string, got {type(text).__name__}")
    if not hidden_regions(text):
        return None
    return _run(text, (hidden_html, *_PASSES))


def _run(text: str, passes: tuple[Pass, ...]) -> Rendered:
    maps: list[PassMap] = []
    current = text
    for step in passes:
        current, m = step(current)
        if m is not None:
            maps.append(m)
    return Rendered(text, current, tuple(maps))


def answer_start(prompt: str, text: str) -> int:
    r"""Where the answer starts in ``text`` (see :func:`echo_span`)."""
    return echo_span(prompt, text)[0]


def echo_span(prompt: str, text: str) -> tuple[int, int]:
    r"""Where the answer starts in a completion ``text`` that repeats the caller's ``prompt`` first (``echo: true``),
    as the guard reads the two together (rendered, then split into sentences): after the prompt when a sentence ends
    with it (a full stop, a paragraph break after an unpunctuated instruction), else at the start of the prompt's last
    sentence, which the completion finishes ("...\nA: Gift cards bought in the U.S. " + "can be returned." is one
    sentence, judged whole; so is a soft line break before markup, "A: Gift cards\n" + "**can** be returned."). 0
    when the text does not repeat the prompt (it is judged whole). With it, where that sentence ends in ``text`` (the
    prompt's end when the prompt ends it).

    >>> echo_span("Policy: see below.\nA: Gift cards", "Policy: see below.\nA: Gift cards can be returned.")
    (19, 49)
    >>> echo_span("Write a reply to a customer", "Write a reply to a customer\n\nGift cards cannot be returned.")
    (27, 27)
    >>> echo_span("Q: Can I?\nA: Gift cards\n", "Q: Can I?\nA: Gift cards\n**can** be returned.")
    (10, 44)
    >>> echo_span("Gift cards", "Gift cards can be returned.")
    (0, 27)
    """
    if not text.startswith(prompt):
        return 0, 0
    # only the prompt's last paragraph can be finished by the answer, and only the answer's first sentence can finish
    # it: the rest is not read (a long prompt costs no more than a short one)
    paragraph = prompt.rfind("\n\n", 0, max(0, len(prompt.rstrip()) - 1))
    cut = max(paragraph + 2 if paragraph >= 0 else 0, len(prompt) - ECHO_TAIL_CHARS, 0)
    stop_at = len(prompt) + ECHO_TAIL_CHARS
    end = len(prompt.rstrip()) - cut
    shown = render(text[cut:stop_at])
    for span in split_sentences(shown.text):
        start, stop = shown.to_source(span.start, span.end)
        if start < end <= stop:
            return (len(prompt), len(prompt)) if stop <= end else (cut + start, cut + stop)
    return len(prompt), len(prompt)


#: how much of an echoed prompt's end, and of the answer after it, :func:`answer_start` reads
ECHO_TAIL_CHARS = 2000
