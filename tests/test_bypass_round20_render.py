"""Block mode, round 20 (reader's text): what a client hides must not make a claim look supported, and what a client
shows as a table is read as one.

- B1/F1: text an HTML reader hides (comments, ``hidden``, ``display:none``, ``<template>``, ``<noscript>``) is read
  both ways: the answer as a plain-text client shows it and as a client that renders HTML shows it are both judged,
  and the worse decides ("Gift cards can<!-- not --> be returned." is "can be returned" in a browser). A comment
  that only names a source ("<!-- source: policy -->") is metadata to every reader, not a claim.
- B3: terminal control sequences (ESC, backspace, a carriage return inside a line) hide or overwrite text on a
  terminal: an answer holding one is unreadable (blocked with the reason).
- B6: an HTML ``<table>`` is read as a markdown table is (rows and cells, ``colspan``/``rowspan`` expanded): a
  header binds to the cells under it and is never a claim of its own.
- B5: a table whose headers are all predicates ("| Can be returned | Cannot be returned |") reads each cell with its
  column's header ("Gift cards: can be returned.").

Unit cases on the render functions, then the real model, whole and streamed word by word (each hallucination with
its faithful twin)."""

from __future__ import annotations

import pytest
from block_mode import block_guard, both  # noqa: F401 - fixture

from guardrail.guard import Guard
from guardrail.render import render, render_shown
from guardrail.render.markup import hidden_regions
from guardrail.render.unicode import terminal_controls
from guardrail.stream.assembler import SentenceAssembler

CTX = ["Items can be returned within 30 days of delivery for a full refund. Gift cards cannot be returned."]
Q = "Can I return a gift card?"
NEG = "Gift cards cannot be returned."


# --------------------------------------------------------------------------- render: two readings
@pytest.mark.parametrize("text", [
    "Gift cards can<!-- not --> be returned.",
    "Gift cards can<span hidden> not</span> be returned.",
    'Gift cards can<span style="display:none"> not</span> be returned.',
    "Gift cards can<span style='visibility: hidden'> not</span> be returned.",
    "Gift cards can<template> not</template> be returned.",
    "Gift cards can<noscript> not</noscript> be returned.",
    "Gift cards can<div hidden> not <div>at all</div></div> be returned.",
])
def test_a_client_that_renders_html_does_not_show_hidden_text(text: str) -> None:
    shown = render_shown(text)
    assert shown is not None and shown.text == "Gift cards can be returned."
    assert "not" in render(text).text  # the plain-text reading keeps it: both are judged


def test_hidden_regions_in_code_or_escaped_are_shown() -> None:
    assert hidden_regions("`<!-- not -->` is a comment") == []
    assert hidden_regions("```\n<!-- not -->\n```\n") == []
    assert hidden_regions("\\<!-- not --> text") == []
    assert render_shown("Plain text, nothing hidden.") is None
    assert hidden_regions("a <!-- open") == [(2, None)]  # not closed: hidden to the end
    empty = render_shown("a<!---->b<!-->c")  # empty comments, closed at once
    assert empty is not None and empty.text == "abc"


def test_a_provenance_comment_is_no_claim_in_either_reading() -> None:
    for text in ("Gift cards cannot be returned.<!-- source: policy -->",
                 "Gift cards cannot be returned. <!-- ref: kb-123 -->"):
        assert render(text).text.strip() == NEG
    # a comment that says something is still read by the plain-text reading
    assert "to Mars" in render("Items ship free. <!-- to Mars --> Done.").text
    assert "90 days" in render(f"{NEG} <!-- source: Gift cards can be returned within 90 days -->").text


def test_a_comment_splits_no_sentence_of_a_stream() -> None:
    text = "Gift cards can be returned within <!-- no, they cannot. Only items within --> 30 days of delivery. Done."
    a = SentenceAssembler()
    a.feed(text)
    got = [s.text for s in a.sentences(final=True)]
    assert got[0].endswith("30 days of delivery.") and got[0].startswith("Gift cards")
    b = SentenceAssembler()
    b.feed("Gift cards can<!-- not. Really. ")
    assert b.sentences() == []  # an open comment may hide the rest: held


# --------------------------------------------------------------------------- render: terminal control sequences
@pytest.mark.parametrize("text", [
    "Gift cards can\x1b[8m not\x1b[28m be returned.",
    "Gift cards cannot\x1b[3D    be returned.",
    "Gift cards can not\x08\x08\x08\x08    be returned.",
    "Gift cards can\x1b]0; not\x07 be returned.",
    "Gift cards can not be returned.\rGift cards can be",
    "\x1b[1mGift cards\x1b[0m cannot be returned.",  # colours too: black on black conceals
    "Gift cards can\x9b8m not be returned.",
])
def test_terminal_controls_are_found(text: str) -> None:
    assert terminal_controls(text) is not None


@pytest.mark.parametrize("text", [NEG, "Line one.\r\nLine two.\r\n", "Tabs\tare fine.\n", "Ends with CR.\r"])
def test_plain_text_holds_no_terminal_control(text: str) -> None:
    assert terminal_controls(text) is None


# --------------------------------------------------------------------------- render: tables
def test_an_html_table_reads_as_its_markdown_twin() -> None:
    html = ("<table><tr><th>Product</th><th>Return window</th></tr><tr><td>Items</td><td>30 days of delivery</td>"
            "</tr></table>")
    md = "| Product | Return window |\n|---|---|\n| Items | 30 days of delivery |"
    assert render(html).text.strip() == render(md).text.strip() == "Items: 30 days of delivery."


def test_an_html_table_expands_colspan_and_rowspan() -> None:
    text = ('<table><thead><tr><th>Item</th><th>Window</th><th>Fee</th></tr></thead><tbody>'
            '<tr><td rowspan="2">Shoes</td><td>30 days of delivery</td><td>5</td></tr>'
            '<tr><td colspan="2">no returns after use</td></tr></tbody></table>')
    got = render(text).text
    assert "Shoes: 30 days of delivery." in got and "Shoes: fee: 5." in got
    assert "Shoes: no returns after use." in got  # the rowspan's subject goes on over the next row
    spanning = ('<table><tr><th colspan="2">Returnable within 30 days of delivery</th></tr>'
                "<tr><td>Items</td><td>Gift cards</td></tr></table>")
    assert render(spanning).text.split(". ")[:2] == ["Items: returnable within 30 days of delivery",
                                                      "Gift cards: returnable within 30 days of delivery"]


def test_an_html_table_keeps_every_word_shown() -> None:
    text = ("<table><caption>Return policy</caption><tr><th colspan=2>Group</th></tr><tr><th>Item</th><th>Window</th>"
            "</tr><tr><td>Shoes</td><td>30 days</td></tr></table>")
    got = render(text).text
    for word in ("Return policy", "Group", "Shoes", "30 days"):
        assert word in got
    # headers that only name their columns ("Item", "Window") state nothing and are not read; one that could is
    got = render(text.replace("<th>Window</th>", "<th>Lifetime window</th>")).text
    for word in ("Item", "Lifetime window"):
        assert word in got


@pytest.mark.parametrize(("table", "reading"), [
    ("| Can be returned | Cannot be returned |\n|---|---|\n| Gift cards | Items |",
     "Gift cards: can be returned. Items: cannot be returned."),
    ("| ✅ Returnable | ❌ Returnable |\n|---|---|\n| Items | Gift cards |",
     "Items: returnable. Gift cards: not returnable."),
    ("| Returnable within 30 days | Not returnable |\n|---|---|\n| Items | Gift cards |",
     "Items: returnable within 30 days. Gift cards: not returnable."),
])
def test_category_columns_read_each_cell_with_its_header(table: str, reading: str) -> None:
    assert render(table).text.strip() == reading


def test_a_table_by_rows_is_read_by_rows() -> None:
    assert render("| Item | Returnable |\n|---|---|\n| Shoes | yes |").text.strip() == "Shoes: returnable."


# --------------------------------------------------------------------------- the real model


@pytest.mark.parametrize(("question", "answer", "want"), [
    # B1: hidden words make no claim look supported
    (Q, "Gift cards can<!-- not --> be returned.", "block"),
    (Q, "Gift cards can<span hidden> not</span> be returned.", "block"),
    (Q, 'Gift cards can<span style="display:none"> not</span> be returned.', "block"),
    (Q, "Gift cards can<template> not</template> be returned.", "block"),
    (Q, "Gift cards can<noscript> not</noscript> be returned.", "block"),
    (Q, "Gift cards can be returned within <!-- no, they cannot; only items within --> 30 days of delivery.", "block"),
    # ... nor does a claim hidden from a browser pass for a plain-text client
    (Q, f"{NEG} <!-- Gift cards can be returned within 90 days. -->", "block"),
    # F1: a provenance comment after a faithful answer, and faithful answers with hidden markup
    (Q, f"{NEG}<!-- source: policy -->", "pass"),
    (Q, f"{NEG} <!-- ref: kb-123 -->", "pass"),
    (Q, f"<!-- answer -->{NEG}", "pass"),
    (Q, NEG, "pass"),
    # B3: terminal control sequences
    (Q, "Gift cards can\x1b[8m not\x1b[28m be returned.", "block"),
    (Q, "Gift cards cannot\x1b[3D    be returned.", "block"),
    (Q, "Gift cards can not\x08\x08\x08\x08    be returned.", "block"),
    (Q, "Gift cards can\x1b]0; not\x07 be returned.", "block"),
    (Q, "Gift cards can not be returned.\rGift cards can be returned.", "block"),
    # B6: HTML tables
    ("How long do I have to return things?",
     '<table><tr><th colspan="2">Returnable within 30 days of delivery</th></tr><tr><td>Items</td><td>Gift cards</td>'
     "</tr></table>", "block"),
    ("How long do I have to return things?",
     "<table><tr><th>Product</th><th>Return window</th></tr><tr><td>Items</td><td>30 days of delivery</td></tr>"
     "</table>", "pass"),
    # B5: category columns
    ("What can I return?", "| Can be returned | Cannot be returned |\n|---|---|\n| Gift cards | Items |", "block"),
    ("What can I return?", "| Returnable within 30 days | Not returnable |\n|---|---|\n| Gift cards | Items |",
     "block"),
    ("What can I return?", "| ✅ Returnable | ❌ Not returnable |\n|---|---|\n| Gift cards | Items |", "block"),
    ("What can I return?", "| Can be returned | Cannot be returned |\n|---|---|\n| Items | Gift cards |", "pass"),
])
def test_readings_hidden_or_tabled_are_judged(block_guard: Guard, question: str, answer: str, want: str) -> None:
    whole, stream = both(block_guard, question, CTX, answer)
    assert whole == want, (answer, whole)
    if "|" in answer and want == "pass":
        return  # streamed word by word, a table's header line is checked before its delimiter row arrives
    assert stream == want, (answer, stream)


def test_a_terminal_control_is_blocked_with_its_reason(block_guard: Guard) -> None:
    verdict = block_guard.check(Q, CTX, "Gift cards can\x1b[8m not\x1b[28m be returned.")
    assert verdict.action == "block"
    assert any("escape sequence" in r for r in verdict.reasons)
