"""Block mode, classes found by the probes of round 13 (real gateway, real model, scripted upstream; each
hallucination blocked as a JSON answer and as a stream, its faithful twin delivered byte for byte):

- a noun phrase that only points back ("These items ...", "That one ...", "Such products ...", "Both can ...") is
  read as what it points at, like a pronoun; a phrase whose head names a kind of its own ("This decision ...") is
  kept as written.

The gateway, upstream and helpers are ``tests/test_bypass.py``'s."""

from __future__ import annotations

import pytest
from test_bypass import evaluator, gw, upstream  # noqa: F401 - fixtures
from test_bypass_round5 import CTX
from test_bypass_round6 import assert_blocked_both, assert_delivered_both

from guardrail.checks.claims import resolve_pronouns
from guardrail.telemetry import Telemetry

RETURNS = "What is the return policy?"


@pytest.mark.parametrize(("question", "answer"), [
    ("What about gift cards?", "Such items can be returned within 30 days of delivery."),
    ("Can gift cards be returned?", "Gift cards? That one can be returned within 30 days of delivery."),
    ("Can gift cards be returned?", "Yes, these items can be returned within 30 days of delivery."),
    (RETURNS, "Gift cards are popular gifts. Both can be returned within 30 days of delivery."),
    (RETURNS, "Gift cards are popular gifts. Those products can be returned within 30 days of delivery."),
])
def test_a_noun_phrase_that_points_back_is_read_as_its_referent(gw: tuple[str, Telemetry], question: str,
                                                                answer: str) -> None:
    assert_blocked_both(gw[0], answer, CTX, question)


@pytest.mark.parametrize(("question", "answer"), [
    ("What about gift cards?", "Such items cannot be returned."),
    ("Can gift cards be returned?", "No, these items cannot be returned."),
    (RETURNS, "Items can be returned within 30 days of delivery. Such items are refunded to the original payment "
              "method."),
])
def test_a_faithful_noun_phrase_that_points_back_is_delivered(gw: tuple[str, Telemetry], question: str,
                                                              answer: str) -> None:
    assert_delivered_both(gw[0], answer, CTX, question)


@pytest.mark.parametrize(("sentence", "read"), [
    ("These items can be returned within 30 days.", "Gift cards can be returned within 30 days."),
    ("Such products cannot be returned.", "Gift cards cannot be returned."),
    ("Both can be returned.", "Gift cards can be returned."),
    ("That one is free.", "The Basic plan is free."),
    ("This decision was criticized.", None),  # a head of its own: kept as written
    ("That is correct.", None),
    ("That way, you save money.", None),
    ("You can return these items.", None),  # an object, not a subject that points back
    ("A plan that one can buy is cheap.", None),
])
def test_which_noun_phrases_point_back(sentence: str, read: str | None) -> None:
    assert resolve_pronouns(sentence, ["gift cards", "the Basic plan"]) == read
