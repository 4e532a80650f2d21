"""Struck text is dropped only where every common reader strikes it: cmark-gfm (GitHub), markdown-it with its
strikethrough rule, and a browser (an HTML5 parser) reading what either renders. Markup one of them shows unstruck (a
``~~`` closer followed by a letter, a single ``~``, ``<del>`` in a link destination, in alt text, in a comment, a
strike tag broken over a block's line, a ``<del>`` across a blank line) is read, so a hallucination there is checked.

The property test at the end compares the guard with the real renderers (cmark-gfm, markdown-it, html5lib)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_bypass import (  # noqa: F401 - fixtures
    GOOD,
    assert_blocked,
    assert_delivered,
    chat,
    chunk,
    dumps,
    evaluator,
    gw,
    post,
    script,
    sse,
    upstream,
)

from guardrail.render import render
from guardrail.render.markup import struck_regions
from guardrail.telemetry import Telemetry

for _renderer in ("cmarkgfm", "html5lib", "markdown_it"):
    pytest.importorskip(_renderer)
from renderers import gfm, mdit, visible  # noqa: E402 - after the skips
from test_bypass_round4 import chunks_of  # noqa: E402

HAL = "Gift cards can be returned within 90 days."
TWIN = "Gift cards cannot be returned."
P = GOOD  # "Items can be returned within 30 days of delivery."


# --------------------------------------------------------------------------- the variants
#: each shows the claim unstruck to at least one common reader
SHOWN = {
    "tilde closer followed by a letter": lambda c: f"{P}~~{c}~~x",
    "del inside link destinations": lambda c: f"{P} [a](https://x.example/<del>) {c} [b](https://x.example/</del>)",
    "del inside image alt text": lambda c: f"{P} ![<del>](x){c}</del> ok",
    "del inside comments": lambda c: f"{P} <!-- <del> --> {c} <!-- </del> -->",
    "del broken over a block-quote line": lambda c: f"{P} <del\n>{c}</del> ok",
    "del across paragraphs": lambda c: f"{P} <del>x\n\n{c}\n\n</del>",
    "single tildes": lambda c: f"{P} ~{c}~",
    "del inside CDATA": lambda c: f"{P} <![CDATA[<del>]]>{c}<![CDATA[</del>]]> ok",
    "del inside a processing instruction": lambda c: f"{P} <?x <del> ?>{c}<?x </del> ?> ok",
    "del inside a declaration": lambda c: f"{P} <!x <del>>{c}</del> ok",
    "del in code spans over lines": lambda c: f"{P} `x\n<del>` {c} `</del>`",
    "tildes in an HTML block": lambda c: f"<div>\n~~{c}~~ ok\n</div>",
    "tildes around a multi-line tag": lambda c: f'{P} ~~{c} <span title="~~ b\n">x</span>',
    "tildes in a GFM autolink": lambda c: f"{P} https://x.example/a~~{c.replace(' ', '_')}~~ b",
    "three tildes": lambda c: f"{P} ~~~{c}~~~",
    "del with a no-break space": lambda c: f"{P} <del\u00a0class=x>{c}</del> ok",
    "del across table cells": lambda c: f"| a | b |\n|---|---|\n| <del>x | {c}</del> |",
    "del in a heading, closed on the next line": lambda c: f"# {P} <del>x\n{c}</del>",
    "tildes crossing emphasis": lambda c: f"{P} **x ~~{c}* y~~ z",
}


def _shown_somewhere(md: str, word: str) -> bool:
    return word in visible(gfm(md)) or word in visible(mdit(md))


@pytest.mark.parametrize("name", list(SHOWN))
def test_markup_a_renderer_shows_unstruck_is_read(name: str) -> None:
    text = SHOWN[name](HAL)
    hal = "90" if "_" not in text else "90_days"
    assert _shown_somewhere(text, hal), "the variant must show the claim to some reader"
    assert "90" in render(text).text  # what the checks read holds the claim


STRUCK_EVERYWHERE = [
    "Gift cards ~~cannot~~ can be returned.",
    "Gift cards <del>cannot</del> can be returned.",
    "Gift cards <s>cannot</s> can be <strike>never</strike> returned.",
    "A <S class='x'>b\nc</S> d.",
    "Items can be returned within ~~90~~ 30 days.",
    "Gift cards ~~**cannot**~~ can be returned.",
    "Items (~~90~~) 30 days.",
]


@pytest.mark.parametrize("text", STRUCK_EVERYWHERE)
def test_text_every_renderer_strikes_is_still_dropped(text: str) -> None:
    for shown in (visible(gfm(text)), visible(mdit(text))):
        assert "cannot" not in shown and "90" not in shown and "never" not in shown and "b c" not in shown
    read = render(text).text
    assert "cannot" not in read and "90" not in read and "never" not in read


def test_the_stream_side_reads_the_same_regions() -> None:
    for name, make in SHOWN.items():
        text = make(HAL)
        for start, end in struck_regions(text):
            assert end is None or "90" not in text[start:end], name
    text = "Gift cards ~~cannot be returned. Items~~ can be returned."
    assert struck_regions(text) == [(11, 40)]
    assert struck_regions("a ~~b") == [(2, None)]  # may still close
    assert struck_regions("P ~x~ and ~~y.~~z\n") == []


# --------------------------------------------------------------------------- through the real gateway
GATEWAY = ["tilde closer followed by a letter", "del inside link destinations", "del inside comments",
           "del across paragraphs", "single tildes", "del broken over a block-quote line"]
#: variants whose faithful twin reads as clean prose (the others leave fragments such as "<del" that the model may
#: score as unsupported: read, so blocked, which is the safe side)
CLEAN_TWINS = {"tilde closer followed by a letter", "del inside comments", "single tildes"}


@pytest.mark.parametrize("name", GATEWAY)
def test_hidden_hallucinations_are_blocked_and_twins_delivered(gw: tuple[str, Telemetry], name: str) -> None:
    url, _ = gw
    bad, good = SHOWN[name](HAL), SHOWN[name](TWIN)
    assert_blocked(post(url, script(dumps(chat(bad)))))
    assert_blocked(post(url, script(chunks_of(bad), ctype="text/event-stream"), stream=True))
    if name not in CLEAN_TWINS:
        return
    sid = script(dumps(chat(good)))
    assert_delivered(post(url, sid), sid)
    sid = script(chunks_of(good), ctype="text/event-stream")
    assert_delivered(post(url, sid, stream=True), sid)


# --------------------------------------------------------------------------- against the real renderers
MARKERS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
_PIECES = st.sampled_from([
    "~", "~~", "~~~", " ", "  ", ".", ",", "!", "x", "\n", "\n\n", "\n> ", "\n# ", "\n- ", "\n1. ", "\n    ", "|",
    "<del>", "</del>", "<s>", "</s>", "<strike>", "</strike>", "<DEL>", "<del class=x>", "<s title='a b'>",
    "<del\n>", "</del\n>", "<del\u00a0x>", "</del x>", "<del/>", "<span title=\"", "\">", "<span>", "</span>",
    "[", "]", "](", ")", "![", "[a](u)", "](<", ">)", "`", "``", "<!--", "-->", "<![CDATA[", "]]>", "<?", "?>", "<!x ",
    ">", "<", "\\", "*", "**", "_", "<div>", "</div>", "<textarea>", "</textarea>", "https://x.y/", "\n```\n",
])


@st.composite
def markup(draw: st.DrawFn) -> str:
    parts: list[str] = []
    for word in MARKERS[: draw(st.integers(2, len(MARKERS)))]:
        parts += draw(st.lists(_PIECES, max_size=4))
        parts.append(word)
    parts += draw(st.lists(_PIECES, max_size=4))
    return "".join(parts)


@given(markup())
@settings(max_examples=300, deadline=None, derandomize=True)
def test_every_word_a_renderer_shows_is_read(md: str) -> None:
    shown = visible(gfm(md)) + " " + visible(mdit(md))
    read = render(md).text
    for word in MARKERS:
        if word in shown:
            assert word in read, (word, md)
