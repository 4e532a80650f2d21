"""Block mode, session 10 (round 21): a claim's polarity borrowed from a sibling *clause* or carried by a prefix, and a
number written in citation-marker form.

- "Items cannot be returned." against "Gift cards cannot be returned, but items can be returned within 30 days of
  delivery." (or the same joined by ";"), and "Items are non-returnable." against "... Gift cards are
  non-returnable.", were delivered: the round-20 rule compared whole sentences and negation words only. The clauses
  of a sentence are compared now, the clause that names the subject is read alone, and "non-" words are negative.
- "Items can be returned within [90] days." was read as "within days" (the brackets taken for a citation): a
  bracketed number that a word of its clause follows is a number it states.

Real model, whole answer and word-by-word stream; each hallucination with its faithful twin."""

from __future__ import annotations

import pytest
from test_bypass import upstream  # noqa: F401 - fixture

from block_mode import block_guard, both  # noqa: F401 - fixture

from guardrail.checks.evaluator import Evaluator
from guardrail.checks.pairing import clauses, negative
from guardrail.guard import Guard
from guardrail.policy import Policy
from guardrail.render.blocks import citation_marks
from guardrail.scorers.nli import NLIScorer, default_nli_model
from guardrail.text import Span

BUT = ["Gift cards cannot be returned, but items can be returned within 30 days of delivery."]
SEMI = ["Items can be returned within 30 days of delivery; gift cards cannot be returned."]
NON = ["Items can be returned within 30 days of delivery. Gift cards are non-returnable."]
ONE = ["Items can be returned within 30 days of delivery. Gift cards cannot be returned."]


@pytest.mark.parametrize(("question", "contexts", "answer", "want"), [
    ("Can I return items?", BUT, "Items cannot be returned.", "block"),
    ("Can I return items?", BUT, "No.", "block"),
    ("Can I return items?", SEMI, "Items cannot be returned.", "block"),
    ("Can I return items?", SEMI, "No.", "block"),
    ("Can I return items?", NON, "Items are non-returnable.", "block"),
    ("Can I return gift cards?", BUT, "Yes.", "block"),
    # the faithful twins
    ("Can I return items?", BUT, "Items can be returned within 30 days of delivery.", "pass"),
    ("Can I return gift cards?", BUT, "Gift cards cannot be returned.", "pass"),
    ("Can I return gift cards?", SEMI, "Gift cards cannot be returned.", "pass"),
    ("Can I return gift cards?", SEMI, "No.", "pass"),
    ("Can I return gift cards?", NON, "Gift cards are non-returnable.", "pass"),
])
def test_a_polarity_borrowed_from_a_sibling_clause_does_not_support_a_claim(
        block_guard: Guard, question: str, contexts: list[str], answer: str, want: str) -> None:
    assert both(block_guard, question, contexts, answer) == (want, want)


@pytest.mark.parametrize(("answer", "want"), [
    ("Items can be returned within [90] days.", "block"),
    ("Items can be returned within [90, 120] days.", "block"),
    ("Items can be returned within [^90] days.", "block"),
    ("Items can be returned within 30 days of delivery [1].", "pass"),
    ("According to the policy [1], items can be returned within 30 days of delivery.", "pass"),
])
def test_a_bracketed_number_inside_its_clause_is_a_number(block_guard: Guard, answer: str, want: str) -> None:
    assert both(block_guard, "How long do I have to return an item?", ONE, answer) == (want, want)


def test_clauses_and_negative_words() -> None:
    text = BUT[0]
    parts = [c.of(text) for c in clauses(text, Span(0, len(text)))]
    assert parts == ["Gift cards cannot be returned", "items can be returned within 30 days of delivery."]
    one = "Items can be returned within 30 days of delivery."
    assert clauses(one, Span(0, len(one))) == [Span(0, len(one))]
    assert negative("Gift cards are non-returnable.") and negative("They are nonrefundable.")
    assert not negative("Items are returnable.") and not negative("Nonetheless, items are returnable.")
    assert citation_marks("within [90] days.")[0] == "within [90] days."
    assert citation_marks("within 30 days [1].")[0] == "within 30 days."


# ------------------------------------------------------------------ F2: fallback with several choices
def _two_choices(good: str, bad: str) -> list[bytes]:
    from test_bypass import chunk, sse

    return sse(chunk({"role": "assistant", "content": ""}), chunk({"content": good}, index=0),
               chunk({"content": bad}, index=1), chunk({}, index=0, finish="stop"), chunk({}, index=1, finish="stop"))


GOOD = "Items can be returned within 30 days of delivery."
BAD = "Gift cards can be returned within 90 days."


def test_fallback_replaces_only_the_failing_choice(upstream: str) -> None:  # noqa: F811 - fixture
    """Fallback mode, a stream with n=2 whose choice 1 fails: choice 1 is replaced by the fallback message; choice 0,
    which passed and went out whole, ends as finished and is not spliced with the message (round 21, F2), through
    the gateway and the OpenAI client wrapper."""
    import json

    import httpx
    import llm_server
    import openai
    from prometheus_client import CollectorRegistry
    from test_bypass import script

    from guardrail.openai import guard_openai
    from guardrail.server import create_gateway
    from guardrail.telemetry import Telemetry

    guard = Guard(Evaluator(nli=NLIScorer(default_nli_model())), Policy(action="fallback", retrieval_relevance=None))
    message = guard.policy.fallback_message
    ask = {"model": "m", "messages": [{"role": "user", "content": "Can I return a gift card?"}], "contexts": ONE, "n": 2}
    telemetry = Telemetry(CollectorRegistry(), route="gateway", model="upstream")
    with llm_server.serve(create_gateway(upstream, guard, telemetry), lifespan="on") as url:
        sid = script(_two_choices(GOOD, BAD), ctype="text/event-stream")
        r = httpx.post(url + "/v1/chat/completions", json={**ask, "stream": True, "script": sid}, timeout=60)
    texts: dict[int, str] = {}
    ends: dict[int, str] = {}
    for event in r.text.split("\n\n"):
        if not event.startswith("data: {"):
            continue
        for c in json.loads(event[6:]).get("choices", []):
            texts[c["index"]] = texts.get(c["index"], "") + (c.get("delta", {}).get("content") or "")
            if c.get("finish_reason"):
                ends[c["index"]] = c["finish_reason"]
    assert texts == {0: GOOD, 1: message} and ends == {0: "stop", 1: "content_filter"}, (texts, ends)

    guard = Guard(guard.evaluator, guard.policy)  # the gateway closed its guard as it shut down
    client = guard_openai(openai.OpenAI(base_url=upstream, api_key="k", max_retries=0), guard)
    stream = client.chat.completions.create(**ask, stream=True, extra_body={
        "script": script(_two_choices(GOOD, BAD), ctype="text/event-stream")})
    texts, ends = {}, {}
    for ch in stream:
        for c in ch.choices:
            texts[c.index] = texts.get(c.index, "") + (c.delta.content or "")
            if c.finish_reason:
                ends[c.index] = c.finish_reason
    assert texts == {0: GOOD, 1: message} and ends == {0: "stop", 1: "content_filter"}, (texts, ends)
    guard.close()


# ------------------------------------------------------------------ the session's review
def test_review_findings(block_guard: Guard) -> None:
    """Found by the review of the round-20/21 changes:
    - a carriage return between sentences (a terminal overwrites the line it ends) is refused in a stream as in a
      whole answer; a CRLF is a line break;
    - "Tak." is Polish for yes: no greeting;
    - positive "-able" words are not negative ("understandable")."""
    cr = "Gift cards cannot be returned.\rItems can be returned within 30 days of delivery."
    assert both(block_guard, "How do returns work?", ONE, cr) == ("block", "block")
    assert both(block_guard, "How do returns work?", ONE, cr.replace("\r", "\r\n")) == ("pass", "pass")
    assert both(block_guard, "Can I return a gift card?", ONE, "Tak.") == ("block", "block")
    assert not negative("The delay is understandable.") and not negative("It is unmistakable.")
    assert negative("Gift cards are unreturnable.") and negative("The item is unavailable.")


def test_mean_mode_judges_what_a_browser_shows(block_guard: Guard) -> None:
    """``aggregate="mean"``: supported sentences hidden in an HTML comment padded the plain-text reading's mean, and
    the answer a browser shows ("Returns are free of charge.") passed (whole and stream alike: the stream now judges
    the whole answer at its end, every reading)."""
    ctx = ["Items can be returned within 30 days of delivery. Gift cards cannot be returned. Refunds are issued to "
           "the original payment method within 5 business days."]
    copies = " ".join(["Items can be returned within 30 days of delivery. Refunds are issued to the original payment "
                       "method within 5 business days."] * 4)
    guard = Guard(block_guard.evaluator, Policy(action="block", aggregate="mean", retrieval_relevance=None))
    try:
        for answer in (f"Returns are free of charge. <!-- {copies} -->",
                       f"Returns are free of charge. <!-- {copies} Shipping to Mars is free on every order. -->"):
            assert both(guard, "How do returns work?", ctx, answer) == ("block", "block")
        assert both(guard, "How do returns work?", ctx, copies) == ("pass", "pass")
    finally:
        guard.close()


def test_unclosed_html_tables_are_read_in_one_pass() -> None:
    from guardrail.render import render

    assert render("<table>" * 2000 + "Items can be returned.").text.strip() == "Items can be returned."
    assert render("<table><tr><th>Item</th></tr><tr><td>Gift cards</td></tr></table>").text.strip() == "Gift cards."


@pytest.mark.parametrize(("answer", "want"), [
    # a style sheet can hide any element or add text: the answer is not read (round 21, what the fix left)
    ("<style>b{display:none}</style>Gift cards can<b> not</b> be returned.", "block"),
    ('<link rel="stylesheet" href="x.css">Gift cards cannot be returned.', "block"),
])
def test_a_style_sheet_makes_the_answer_unreadable(block_guard: Guard, answer: str, want: str) -> None:
    assert both(block_guard, "Can I return a gift card?", ONE, answer) == (want, want)


def test_a_style_sheet_in_code_is_an_example() -> None:
    from guardrail.render.markup import stylesheet

    assert stylesheet("See:\n\n```html\n<style>b{color:red}</style>\n```") is None
    assert stylesheet("Use `<style>` tags for CSS.") is None and stylesheet("Use \\<style> tags.") is None
    assert stylesheet("<STYLE>b{display:none}</STYLE> text") == "a <style> element at offset 0"


def test_a_style_sheet_is_looked_for_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """The code of the answer is found once, not once per "<style" in it: 2,000 "`<style>`" code spans (20 KB) took
    11 s to check and stalled the gateway's event loop (round 37)."""
    import guardrail.render.markup as markup

    calls = {"blocks": 0, "spans": 0}
    blocks, spans = markup.code_blocks, markup._code_spans

    def counted_blocks(text: str) -> list[tuple[int, int]]:
        calls["blocks"] += 1
        return blocks(text)

    def counted_spans(text: str, a: int, b: int) -> list[tuple[int, int, int, int]]:
        calls["spans"] += 1
        return spans(text, a, b)

    monkeypatch.setattr(markup, "code_blocks", counted_blocks)
    monkeypatch.setattr(markup, "_code_spans", counted_spans)
    examples = "Use `<style>` tags. " * 2000
    assert markup.stylesheet(examples) is None and calls == {"blocks": 1, "spans": 1}
    assert markup.stylesheet(examples + "\\<style>b{}</style>") is None  # escaped, after the examples
    # an escaped backslash does not escape the tag; code ends where it ends
    assert markup.stylesheet(examples + "\\\\<style>b{display:none}</style>") == \
        f"a <style> element at offset {len(examples) + 2}"
    sheet = "```html\n<style>b{}</style>\n```\n<link rel=stylesheet href=x>"
    assert markup.stylesheet(sheet) == f"a linked style sheet at offset {sheet.index('<link')}"


# ------------------------------------------------------------------ round 22: citations as RAG answers write them
@pytest.mark.parametrize("marker", ["(1)", "^[1]", "[doc1]", "[source 2]", "[1](#ref1)", "<sup>1</sup>",
                                    "<sup>[3]</sup>", "\u30104:0\u2020policy.md\u3011", "(1, 2)", "[1]"])
def test_citation_markers_are_no_numbers_the_answer_states(block_guard: Guard, marker: str) -> None:
    """Faithful answers with the citation formats of Azure "on your data", OpenAI file search, Pandoc, HTML were
    blocked ("not in any passage: 1", "4, 0"); the hallucination with the same marker is blocked."""
    good = f"Items can be returned within 30 days of delivery {marker}."
    bad = f"Items can be returned within 90 days of delivery {marker}."
    assert both(block_guard, "How long do I have to return an item?", ONE, good) == ("pass", "pass")
    assert both(block_guard, "How long do I have to return an item?", ONE, bad) == ("block", "block")


@pytest.mark.parametrize(("text", "read"), [
    ("Items can be returned within (90).", "Items can be returned within (90)."),  # the word before takes a number
    ("Items can be returned within [90].", "Items can be returned within [90]."),
    ("Choose option (1) or (2) to continue.", "Choose option (1) or (2) to continue."),
    ("f(1) is 2.", "f(1) is 2."),
    ("The fee is $5 (2).", "The fee is $5."),
])
def test_a_marker_is_a_citation_only_where_a_citation_stands(text: str, read: str) -> None:
    from guardrail.render import render

    assert render(text).text == read


RETAIL = ["Items can be returned within 30 days of delivery for a full refund if unused. Gift cards cannot be returned. "
          "Refunds are issued within 5 business days."]


@pytest.mark.parametrize(("answer", "want"), [
    # round 22, F2: a lead-in that announces a summary of a named thing claims nothing, however long
    ("Here's a summary of the return policy:\n\nItems can be returned within 30 days of delivery.", "pass"),
    ("Here are the key points from the policy:\n\n- Refunds are issued within 5 business days.", "pass"),
    ("Here's a summary of the return policy:\n\nItems can be returned within 90 days of delivery.", "block"),
    ("Here's a summary of why gift cards are always refundable:\n\nRefunds are issued within 5 business days.",
     "block"),
    # F3: a numbered step label numbers the list
    ("**Step 1:** Make sure the item is unused.\n**Step 2:** Return it within 30 days of delivery.\n"
     "**Step 3:** Your refund is issued within 5 business days.", "pass"),
    ("**Step 1:** Make sure the item is unused.\n**Step 2:** Return it within 30 days of delivery.\n"
     "**Step 3:** Your refund is issued within 15 business days.", "block"),
    # B1: the polarity a three-sentence chunk lends
    ("Yes, gift cards can be returned within 30 days.", "block"),
])
def test_round22_answer_shapes(block_guard: Guard, answer: str, want: str) -> None:
    assert both(block_guard, "What is your return policy?", RETAIL, answer) == (want, want)


def test_round22_yes_to_a_gift_card_question(block_guard: Guard) -> None:
    assert both(block_guard, "Can I return a gift card?", RETAIL, "Yes.") == ("block", "block")
    assert both(block_guard, "Can I return a gift card?", RETAIL, "No.") == ("pass", "pass")


def test_an_exception_the_claim_makes_lends_nothing(block_guard: Guard) -> None:
    """"All checking accounts (except Premium) have no monthly fee." against "The Everyday checking account has no
    monthly fee. The Premium checking account has a monthly fee of $15 ...": the Premium sentence says the opposite of
    the claim, and the claim excepts Premium itself (the answer probes' f2-as2, blocked by the round-22 bar)."""
    bank = ["The Everyday checking account has no monthly fee. The Premium checking account has a monthly fee of $15, "
            "which is waived for balances over $5,000. Savings accounts earn 4.1% APY."]
    answer = "All checking accounts (except Premium) have no monthly fee."
    assert both(block_guard, "Which accounts are free?", bank, answer) == ("pass", "pass")


def test_the_subjects_own_sentence_denies_at_the_ordinary_bar(block_guard: Guard) -> None:
    """The best support is about items alone; the window that names gift cards says the opposite polarity ("Gift cards
    and final-sale items cannot be returned."): its denial (0.93) counts at the ordinary contradiction bar, not the
    0.95 a sentence about another subject needs (the answer probes' rt1h passed at 0.62)."""
    ret = ["Items can be returned within 30 days of delivery for a full refund. Returned items must be unused and in "
           "their original packaging. Gift cards and final-sale items cannot be returned. Refunds are issued to the "
           "original payment method within 5 business days after we receive the item."]
    q = "Can I return a gift card?"
    assert both(block_guard, q, ret, "Yes, gift cards can be returned within 30 days.") == ("block", "block")
    assert both(block_guard, q, ret, "No, gift cards can't be returned.") == ("pass", "pass")
    assert both(block_guard, "How long do I have?", ret, "Items can be returned within 30 days of delivery.") == \
        ("pass", "pass")
