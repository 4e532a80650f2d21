"""Block mode, round 21 (reader's text): the reading "as a browser shows it" follows the HTML tokenizer and drops
what a browser may not show, and a checklist's marks are read.

- B1: every form the HTML tokenizer reads as a comment hides its text: ``<!-- -->`` (and ``--!>``), bogus comments
  (``<!...>``, ``<![CDATA[...]]>`` in HTML content, ``<?...>``, ``</`` and no letter, to the next ``>``); one not
  closed hides the rest (a stream holds it).
- B2: elements whose content is not shown in the flow (``<title>``, ``<datalist>``, a closed ``<dialog>`` or
  ``<details>`` beyond its summary, ``<rp>``, a ``<select>`` beyond its selected option, the fallback content of
  ``<video>``/``<object>``/``<iframe>``...) and an image's alt text (``![alt](url)``, ``<img alt>``) are dropped from
  the shown reading; the plain-text reading keeps them, and the worse decides.
- B3: the guard does not evaluate CSS: an element with a ``style`` or ``class`` attribute, or ``hidden`` (in any
  spelling, ``<span/hidden>``), ``popover``, ``inert`` or ``aria-hidden``, shows what the guard cannot know; the
  shown reading drops it (struck by ``text-decoration:line-through`` too). The trade-off, kept: a faithful answer
  whose meaning rests on a styled word is blocked (``Gift cards <span style="color:red">cannot</span> be returned.``
  reads "Gift cards be returned." in a browser the guard cannot rule out); unstyled emphasis is read as shown.
- F1: a checklist's marks ("- Gift cards ❌") read as the label reply they stand for ("- Gift cards: no").

Unit cases on the render functions, then the real model, whole and streamed word by word (each hallucination with
its faithful twin)."""

from __future__ import annotations

import re

import pytest
from block_mode import block_guard, both  # noqa: F401 - fixture

from guardrail.guard import Guard
from guardrail.render import render, render_shown
from guardrail.render.blocks import checklist_marks
from guardrail.render.markup import hidden_regions
from guardrail.stream.assembler import SentenceAssembler

CTX = ["Items can be returned within 30 days of delivery for a full refund. Gift cards cannot be returned."]
Q = "Can I return a gift card?"
NEG = "Gift cards cannot be returned."
SHOWN = "Gift cards can be returned."


# --------------------------------------------------------------------------- render: what a browser may not show
@pytest.mark.parametrize("hider", [
    # B1: comments and bogus comments
    "<!not>", "<![CDATA[ not ]]>", "</ not>", "<? not >", "<!-- not --!>", "<!DOCTYPE not>", "</>", "</1 not>",
    # B2: elements not shown in the flow
    "<title> not</title>", "<datalist><option> not</option></datalist>", "<dialog> not</dialog>",
    "<noembed> not</noembed>", "<noframes> not</noframes>", "<head> not</head>", "<script> not</script>",
    "<video src=v.mp4> not</video>", "<audio src=a.mp3> not</audio>", "<canvas> not</canvas>",
    "<object data=x.pdf> not</object>", "<iframe src=x> not</iframe>", "<picture> not</picture>",
    "<svg><desc> not</desc></svg>", "<bdo dir=rtl>ton</bdo>", "<details><summary></summary> not</details>",
    '<img src="pixel.png" alt=" not">', "<IMG SRC=p.png ALT=not>",
    # B3: attributes whose effect the guard cannot know
    '<span style="display:/**/none"> not</span>', '<span style="display&colon;none"> not</span>',
    '<span style="font-size:0"> not</span>', '<span style="color:transparent"> not</span>',
    '<span style="position:absolute;left:-9999px"> not</span>', '<span class="hidden"> not</span>',
    '<span class="sr-only"> not</span>', "<span/hidden> not</span>", "<span hidden=until-found> not</span>",
    '<span aria-hidden="true"> not</span>', "<span inert> not</span>", "<div popover> not</div>",
    "<font color=white> not</font>", '<span style="text-decoration:line-through"> not</span>',
    "<span class=x/> not</span>",  # "/>" does not close a span (HTML5)
    '<span class="a"><span>really</span> not</span>',  # nested
])
def test_the_shown_reading_drops_what_a_browser_may_not_show(hider: str) -> None:
    text = f"Gift cards can{hider} be returned."
    shown = render_shown(text)
    assert shown is not None and re.sub(r"\s+", " ", shown.text) == SHOWN, (hider, shown)


@pytest.mark.parametrize(("text", "reading"), [
    ("Gift cards can ![not](https://example.com/pixel.png) be returned.", "Gift cards can be returned."),
    ("Gift cards can ![not][img] be returned.\n\n[img]: https://example.com/p.png", "Gift cards can be returned."),
    ("Gift cards can<ruby>re<rp> not</rp><rt>x</rt></ruby> be returned.", "Gift cards canrex be returned."),
    ("Gift cards can<select><option>x</option><option> not</option></select> be returned.",
     "Gift cards canx be returned."),
    ("Gift cards can<select><option> not</option><option selected>x</option></select> be returned.",
     "Gift cards canx be returned."),
    ("Gift cards<details><summary> can</summary> not</details> be returned.", "Gift cards can be returned."),
])
def test_the_shown_reading_keeps_only_what_is_shown(text: str, reading: str) -> None:
    shown = render_shown(text)
    assert shown is not None and re.sub(r"\s+", " ", shown.text).strip() == reading


@pytest.mark.parametrize("text", [
    "Gift cards can<b> not</b> be returned.", "Gift cards can<em> not</em> be returned.",
    "Gift cards can<dialog open> not</dialog> be returned.",
    "Gift cards can<details open><summary>Why</summary> not</details> be returned.",
    'Gift cards can<span aria-hidden="false"> not</span> be returned.', "Gift cards can<mark> not</mark> be returned.",
    "Gift cards can **not** be returned.", "x < y and y > z.", "`<!x>` and `![x](y)` are code",
    "Gift cards can \\<!x> be returned.", "Gift cards can \\![x](y) be returned.",
])
def test_what_a_browser_shows_stays(text: str) -> None:
    assert render_shown(text) is None


def test_the_plain_reading_keeps_what_the_shown_reading_drops() -> None:
    for text in ('Gift cards can<img src="p.png" alt=" not"> be returned.',
                 "Gift cards can ![not](https://example.com/pixel.png) be returned.",
                 '<span class="sr-only">Gift cards can not be returned.</span>',
                 "Gift cards can<dialog> not</dialog>."):
        assert "not" in render(text).text, text


def test_an_unclosed_comment_or_tag_hides_the_rest_and_a_stream_holds_it() -> None:
    for opener in ("<!", "<![CDATA[", "<?", "</ ", "<span class='x", "<span/hidden"):
        text = f"Gift cards can{opener} not. Really."
        assert hidden_regions(text)[-1] == (14, None), opener
        a = SentenceAssembler()
        a.feed(text + " More")
        assert [s.text for s in a.sentences()] == [], opener  # held: what closes it decides what the sentence says
    a = SentenceAssembler()
    a.feed("Gift cards can<! not. Really> be returned. Next")
    assert [s.text for s in a.sentences()] == ["Gift cards can<! not. Really> be returned."]


@pytest.mark.parametrize(("text", "reading"), [
    ("- Items ✅\n- Gift cards ❌", "- Items: yes\n- Gift cards: no"),
    ("- Items: ✅\n- Gift cards: ❌", "- Items: yes\n- Gift cards: no"),
    ("- ✅ Items\n- ❌ Gift cards", "- Items: yes\n- Gift cards: no"),
    ("1. **Gift cards** ❌", "1. **Gift cards**: no"),
    ("* Store credit ✔️", "* Store credit: yes"),
    ("Gift cards ✗", "Gift cards: no"),
])
def test_a_checklist_mark_reads_as_its_label_reply(text: str, reading: str) -> None:
    got, _ = checklist_marks(text)
    assert got == reading


@pytest.mark.parametrize("text", [
    "Items can be returned within 30 days ✅",  # a sentence, no noun phrase: left as it is
    "- Items returned within 30 days ✅", "```\n- Gift cards ❌\n```", "- Gift cards ❌ and items ✅",
])
def test_a_mark_after_more_than_a_noun_phrase_is_left(text: str) -> None:
    assert checklist_marks(text) == (text, None)


def test_a_checklist_reading_points_back_at_its_item() -> None:
    r = render("- Items ✅\n- Gift cards ❌")
    at = r.text.index("Gift cards")
    assert r.source[slice(*r.to_source(at, len(r.text)))] == "Gift cards ❌"


# --------------------------------------------------------------------------- the real model


WHAT = "What can I return?"


@pytest.mark.parametrize(("question", "answer", "want"), [
    # B1: comment forms
    (Q, "Gift cards can<!not> be returned.", "block"),
    (Q, "Gift cards can<![CDATA[ not ]]> be returned.", "block"),
    (Q, "Gift cards can</ not> be returned.", "block"),
    (Q, "Gift cards can<? not > be returned.", "block"),
    (Q, f"{NEG}<!-- source: policy -->", "pass"),
    # B2: not shown in the flow
    (Q, "Gift cards can<datalist><option> not</option></datalist> be returned.", "block"),
    (Q, "Gift cards can<dialog> not</dialog> be returned.", "block"),
    (Q, "Gift cards can<video src=v.mp4> not</video> be returned.", "block"),
    (Q, "Gift cards can<title> not</title> be returned.", "block"),
    (Q, "Gift cards can<select><option>x</option><option> not</option></select> be returned.", "block"),
    (Q, "Gift cards can ![not](https://example.com/pixel.png) be returned.", "block"),
    (Q, 'Gift cards can<img src="https://example.com/p.png" alt=" not"> be returned.', "block"),
    # an image's alt text is read as a sentence: "Return policy" scores 0.29 under the session-16 calibration (a
    # known false block, MODEL_CARD.md "Still wrong")
    pytest.param(Q, f"{NEG} ![Return policy](https://example.com/policy.png)", "pass",
                 marks=pytest.mark.xfail(strict=True, reason="known false block (session 16)")),
    (Q, f"<details open><summary>Answer</summary>{NEG}</details>", "pass"),
    # B3: style, class and hiding attributes
    (Q, 'Gift cards can<span style="display:/**/none"> not</span> be returned.', "block"),
    (Q, 'Gift cards can<span style="font-size:0"> not</span> be returned.', "block"),
    (Q, 'Gift cards can<span class="hidden"> not</span> be returned.', "block"),
    (Q, "Gift cards can<span/hidden> not</span> be returned.", "block"),
    (Q, 'Gift cards can<span style="text-decoration:line-through"> not</span> be returned.', "block"),
    (Q, f'<span class="answer">{NEG}</span>', "pass"),  # the whole answer styled: the plain reading is judged
    (Q, "Gift cards <b>cannot</b> be returned.", "pass"),  # unstyled emphasis is read as shown
    # the trade-off, documented: a faithful claim whose negation is styled reads "Gift cards be returned." in a
    # browser whose CSS the guard cannot rule out
    (Q, 'Gift cards <span style="color:red">cannot</span> be returned.', "block"),
    # F1: checklists
    (WHAT, "- Items ✅\n- Gift cards ❌", "pass"),
    (WHAT, "- ✅ Items\n- ❌ Gift cards", "pass"),
    (WHAT, "- Items ✅\n- Gift cards ✅", "block"),
    (WHAT, "- Items: ✅\n- Gift cards: ✅", "block"),
    (WHAT, "- ❌ Items\n- ❌ Gift cards", "block"),
])
def test_readings_of_a_browser_and_checklists_are_judged(block_guard: Guard, question: str, answer: str,
                                                          want: str) -> None:
    whole, stream = both(block_guard, question, CTX, answer)
    assert (whole, stream) == (want, want), answer
