"""Text the guard drops must be text every common reader hides: cmark-gfm (GitHub, with its tag filter) and
markdown-it (CommonMark, strikethrough, tables), each through a browser's HTML5 parser (html5lib). What a reader sees is
the text outside ``<script>``, ``<style>``, ``<head>`` and struck elements, and the ``alt`` and ``title`` values a
browser shows (alt text when an image does not load, a tooltip on hover). Wherever one of them shows a word, the guard
reads it: link and image destinations in HTML blocks (where no link is read), reference labels nothing defines, code a
fence the guard once closed too early still holds, table headers, tags GitHub shows as text, tags a no-break space
breaks, links a tag crosses. Faithful markdown still reads cleanly: the URL of an ordinary link is not read.

The property test at the end compares the guard with the real renderers."""

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
from guardrail.telemetry import Telemetry

for _renderer in ("cmarkgfm", "html5lib", "markdown_it"):
    pytest.importorskip(_renderer)
from renderers import shown  # noqa: E402 - after the skips
from test_bypass_round4 import chunks_of  # noqa: E402

HAL = "Gift cards can be returned within 90 days"
TWIN = "Gift cards cannot be returned"


# --------------------------------------------------------------------------- each construct
#: each shows the claim (its words, or "90") to at least one reader; ``c`` is the claim, ``u`` it as one word
SHOWN = {
    "link destination after a closing block tag": lambda c, u: f"</div>\n[see]({u}) ok",
    "link destination in an HTML block": lambda c, u: f"<div>\n[see]({u}) ok\n</div>",
    "image destination and title in an HTML block": lambda c, u: f'<div>\n![chart]({u} "t") ok\n</div>',
    "link in a <pre> block over blank lines": lambda c, u: f"<pre>\n\n[see]({u})\n\n</pre>",
    "link on the line a comment block ends": lambda c, u: f"<!-- x\n\n--> [see]({u})",
    "link after a line holding only a tag": lambda c, u: f"<span>\n[see]({u})",
    "link in a quoted HTML block": lambda c, u: f"> <div>\n> [see]({u})",
    "undefined reference label": lambda c, u: f"[see][{c}]",
    "link crossed by a tag": lambda c, u: f'[see <span title="]({u})">',
    "link crossed by an autolink": lambda c, u: f"[see <https://x.example/]({u})>",
    "tag broken by a no-break space": lambda c, u: f'<a\u00a0href="{c}">see</a>',
    "script tag GitHub shows as text": lambda c, u: f'<script src="{c}"></script>',
    "iframe tag GitHub shows as text": lambda c, u: f'ok <iframe src="{c}"></iframe>',
    "code a longer fence still holds": lambda c, u: f"````\ncode\n```\n[see]({u})\n````",
    "code an indented closer still holds": lambda c, u: f"```\ncode\n    ```\n[see]({u})\n```",
    "fenced code in a block quote": lambda c, u: f"> ```\n> [see]({u})\n> ```",
    "indented code in a list item": lambda c, u: f"- item\n\n        [see]({u})",
    "indented code in a block quote": lambda c, u: f">     [see]({u})",
    "table without rows": lambda c, u: f"| {c} |\n|---|",
    "first column's header": lambda c, u: f"| {c} | Note |\n|---|---|\n| Shoes | yes |",
    "header over cells that say what they are": lambda c, u: f"| Item | {c} |\n|---|---|\n| Shoes | thirty days here |",
    "link title": lambda c, u: f'[see](https://x.example "{c}")',
    "image alt and title": lambda c, u: f'![{c}](x.png "{c}")',
    "tag title attribute": lambda c, u: f'<span title="{c}">ok</span>',
    "img alt attribute": lambda c, u: f'<img src="x.png" alt="{c}">',
    "reference title where used": lambda c, u: f'[see][r]\n\n[r]: https://x.example "{c}"',
    "definition continued by text": lambda c, u: f"[r]: /u {u}",
    "definition inside a paragraph": lambda c, u: f"Text\n[r]: {u}",
    "definition in an HTML block": lambda c, u: f"<div>\n[r]: {u}\n</div>",
    "autolink": lambda c, u: f"<https://x.example/{u}>",
    "email-like autolink": lambda c, u: f"<{u}@x.example>",
    "escaped link": lambda c, u: f"\\[see]({u})",
    "entity prefix that is no entity": lambda c, u: f"Gift cards &notbe {u}",
    "code span": lambda c, u: f"`[see]({u})`",
}


#: hidden by both renderers here, read anyway: a footnote (GitHub.com renders footnotes), a fence's info string
KEPT = {
    "footnote definition": lambda c, u: f"Text.\n\n[^1]: {u}",
    "fence info string": lambda c, u: f"```{u}\ncode\n```",
}


@pytest.mark.parametrize("name", list(KEPT))
def test_what_some_reader_may_show_is_read(name: str) -> None:
    assert "90" in render(KEPT[name](HAL, HAL.replace(" ", "_"))).text


@pytest.mark.parametrize("name", list(SHOWN))
def test_what_a_renderer_shows_is_read(name: str) -> None:
    text = SHOWN[name](HAL, HAL.replace(" ", "_"))
    assert "90" in shown(text), "the variant must show the claim to some reader"
    assert "90" in render(text).text


#: hidden by every reader: the guard drops it too (clean reading of faithful markdown)
HIDDEN = {
    "link destination": ("See [the policy](https://example.com/returns).", "See the policy."),
    "image destination": ("![a chart](https://example.com/chart.png) here", "a chart here"),
    "reference link and its definition": ("See [docs][1].\n\n[1]: https://example.com/returns\n",
                                          "See docs.\n\n\n"),
    "definition title is kept": ('See [docs][1].\n\n[1]: https://example.com/r "Returns"', "See docs.\n\nSource: Returns"),
    "reference label case": ("See [docs][Ref].\n\n[REF]: https://example.com/r", "See docs.\n\n"),
    "link after an inline tag": ("<b>Note</b>: see [docs](https://example.com/returns).", "Note: see docs."),
    "href attribute": ('<a href="https://example.com/returns">docs</a> ok', "docs ok"),
    "heading and code": ("# Returns\n\nUse `code` here.\n\n```python\nx = 1\n```", "Returns\n\nUse code here.\n\n"
                         "```python\nx = 1\n```"),
    "fence closed, then a link": ("```\nx\n```\nSee [docs](https://example.com/r).", "```\nx\n```\nSee docs."),
    "list paragraph indented four": ("1. Step\n\n    See [docs](https://example.com/r).", "Step\n\n    See docs."),
    "closing block tag then a blank line": ("</div>\n\nSee [docs](https://example.com/r).", "\n\n\nSee docs."),
}


@pytest.mark.parametrize("name", list(HIDDEN))
def test_faithful_markup_reads_cleanly(name: str) -> None:
    text, expected = HIDDEN[name]
    assert render(text).text == expected
    assert "example.com" not in shown(text)  # hidden by every reader, so not read either


def test_tables_read_their_headers_once() -> None:
    table = "| Shipping | Cost |\n|---|---|\n| Standard shipping | $4.99 |\n| Express shipping | $12 |"
    assert render(table).text == "Standard shipping: cost: $4.99. \nExpress shipping: cost: $12. "
    assert render("| Item | Window |\n|---|---|\n| Shoes | 30 days |").text == "Shoes: 30 days. "
    assert render("| Item | Free window |\n|---|---|\n| Shoes | 30 days |").text == "Item, Free window: Shoes: 30 days. "


# --------------------------------------------------------------------------- against the real renderers
MARKERS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
_PIECES = st.sampled_from([
    " ", "\n", "\n\n", ".", "x", "\n> ", "\n- ", "\n1. ", "\n    ", "\n  ", "\n# ", "|", "\n|---|---|\n", "\n|---|\n",
    "<div>", "</div>", "\n<div>\n", "\n</div>\n", "<span>", "</span>", "\n<span>\n", "<pre>", "</pre>", "<p>", "<b>",
    "</b>", "<!--", "-->", "<?", "?>", "<!X ", ">", "<", "<![CDATA[", "]]>", "<script>", "</script>", "<style>",
    "</style>", "<textarea>", "</textarea>",
    "[", "]", "](", ")", "![", "](<", ">)", " \"", "\" ", "[r]", "][r]", "\n[r]: ", "\n[R]: /u ", "[^1]", "]:",
    "[a](u)", "[a](u \"", "<https://x.y/", "<a@", "https://x.y/", "`", "``", "\n```\n", "\n````\n", "\n~~~ ", "\n```",
    "<span title=\"", "<img alt=\"", "<a href=\"", "<a title='", "\">", "'>", " class=", "\u00a0", "&", ";", "&amp;",
    "\\", "*", "**", "_", "~~", "<del>", "</del>",
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
    seen = shown(md)
    read = render(md).text
    for word in MARKERS:
        if word in seen:
            assert word in read, (word, md, read)


# --------------------------------------------------------------------------- through the real gateway
GATEWAY = {
    "link destination after a closing block tag": lambda c: f"{GOOD}\n</div>\n[See the policy]({c}).",
    "undefined reference label": lambda c: f"{GOOD} See [the policy][{c}].",
    "table without rows": lambda c: f"{GOOD}\n\n| {c}. |\n|---|",
}
#: faithful answers with the same markup read cleanly and are delivered byte for byte
FAITHFUL = [
    "Items can be returned within [30 days of delivery](https://example.com/returns).",
    "Items can be returned within [30 days of delivery][1].\n\n[1]: https://example.com/returns",
    "<div>\n\nItems can be returned within 30 days of delivery.\n\n</div>",
]
#: streamed, a table's header line is checked alone (the stream cuts sentences at line ends, before the table is
#: seen), so a faithful table is delivered whole only from a JSON answer
TABLE = "| Item | Return window |\n|---|---|\n| Items | [30 days of delivery](https://example.com/returns) |"


@pytest.mark.parametrize("name", list(GATEWAY))
def test_hidden_markup_hallucinations_are_blocked(gw: tuple[str, Telemetry], name: str) -> None:
    url, _ = gw
    bad = GATEWAY[name](HAL)
    assert HAL in render(bad).text.replace("_", " ")
    assert_blocked(post(url, script(dumps(chat(bad)))))
    assert_blocked(post(url, script(chunks_of(bad), ctype="text/event-stream"), stream=True))


@pytest.mark.parametrize("text", FAITHFUL)
def test_faithful_twins_are_delivered(gw: tuple[str, Telemetry], text: str) -> None:
    url, _ = gw
    assert "example.com" not in render(text).text
    sid = script(dumps(chat(text)))
    assert_delivered(post(url, sid), sid)
    sid = script(chunks_of(text), ctype="text/event-stream")
    assert_delivered(post(url, sid, stream=True), sid)


def test_faithful_table_is_delivered(gw: tuple[str, Telemetry]) -> None:
    url, _ = gw
    # headers that only name their columns are not read; a header that states something is (below)
    assert render(TABLE).text == "Items: 30 days of delivery. "
    sid = script(dumps(chat(TABLE)))
    assert_delivered(post(url, sid), sid)
    bad = TABLE.replace("Return window", HAL)  # a hallucinated header: read, so blocked
    assert_blocked(post(url, script(dumps(chat(bad)))))
