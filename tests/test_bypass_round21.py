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

import re
from collections.abc import Iterator

import pytest

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


@pytest.fixture(scope="module")
def block_guard() -> Iterator[Guard]:
    guard = Guard(Evaluator(nli=NLIScorer(default_nli_model())), Policy(action="block", retrieval_relevance=None))
    yield guard
    guard.close()


def _both(guard: Guard, question: str, contexts: list[str], answer: str) -> tuple[str, str]:
    whole = guard.check(question, contexts, answer).action
    stream = guard.stream(question, contexts)
    for w in re.findall(r"\S+\s*", answer):
        stream.feed(w)
    return whole, stream.finish().verdict.action


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
    assert _both(block_guard, question, contexts, answer) == (want, want)


@pytest.mark.parametrize(("answer", "want"), [
    ("Items can be returned within [90] days.", "block"),
    ("Items can be returned within [90, 120] days.", "block"),
    ("Items can be returned within [^90] days.", "block"),
    ("Items can be returned within 30 days of delivery [1].", "pass"),
    ("According to the policy [1], items can be returned within 30 days of delivery.", "pass"),
])
def test_a_bracketed_number_inside_its_clause_is_a_number(block_guard: Guard, answer: str, want: str) -> None:
    assert _both(block_guard, "How long do I have to return an item?", ONE, answer) == (want, want)


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
