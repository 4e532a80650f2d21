"""Block mode, classes found by the attackers' probe of round 10, after the round-9 rules (real gateway, real model,
scripted upstream; each hallucination blocked as a JSON answer and as a stream, its faithful twin delivered byte for
byte):

- a stream reads the answer before a sentence as the whole answer would (the rules, no model): a pronoun points at
  what a resolved sentence before it named ("Gift cards? They cannot be returned. However, they can be exchanged
  ...");
- a topic a short question, a title or a label line named stays the topic across a reply ("Gift cards? Sure. They
  ..."; "Gift cards:" / "1. Gift cards" before a pronoun);
- more pronoun forms: demonstratives before a verb ("These can be ..."), objects after a preposition ("all of them"),
  "theyre", a singular "they", and a pronoun of a reply that agrees with nothing the question names;
- an "it" is expletive only before a clause ("It is possible to ..."), not before "if";
- more frames that deny a claim ("It would be wrong to say that", "It is a myth that", "Nobody says that", "I doubt
  that", "It is simply not true that"; "never" flipped), and a reply to "Is it true that X?";
- an exception inside a sentence: "..., except within 30 days." after a prohibition permits it there; "..., except
  gift cards." says the claim does not hold of them.

The gateway, upstream and helpers are ``tests/test_bypass.py``'s."""

from __future__ import annotations

import pytest
from test_bypass import evaluator, gw, upstream  # noqa: F401 - fixtures
from test_bypass_round5 import CTX, DOCTORS
from test_bypass_round6 import assert_blocked_both, assert_delivered_both

from guardrail.telemetry import Telemetry

RETURNS = "What is the return policy?"
P30 = "Items can be returned within 30 days of delivery."


@pytest.mark.parametrize(("contexts", "question", "answer"), [
    (CTX, RETURNS, "Gift cards? They cannot be returned. However, they can be exchanged within 30 days of delivery."),
    (CTX, RETURNS, "Gift cards? Sure. They can be returned within 30 days of delivery."),
    (CTX, RETURNS, "Gift cards:\n\nThey can be returned within 30 days of delivery."),
    (CTX, RETURNS, "1. Gift cards\n\nThey can be returned within 30 days of delivery."),
    (CTX, RETURNS, f"{P30} If you bought gift cards, they can be returned within 30 days of delivery too."),
    (CTX, "Can gift cards be returned?", "These can be returned within 30 days of delivery."),
    (CTX, "Can gift cards be returned?", "Yes, all of them can be returned within 30 days of delivery."),
    (CTX, "Can gift cards be returned?", "Yes, it can be returned within 30 days of delivery."),
    (CTX, "Can a gift card be returned?", "Yes, it is returnable if you ask within 30 days of delivery."),
    (DOCTORS, "Does Dr. Jones work on Mondays?", "Yes, they work on Mondays."),
])
def test_a_pronoun_points_where_a_reader_takes_it(gw: tuple[str, Telemetry], contexts: list[str], question: str,
                                                  answer: str) -> None:
    assert_blocked_both(gw[0], answer, contexts, question)


@pytest.mark.parametrize(("contexts", "question", "answer"), [
    (CTX, RETURNS, "Gift cards? Sure. They cannot be returned."),
    (CTX, RETURNS, "Gift cards:\n\nThey cannot be returned."),
    (CTX, "Can gift cards be returned?", "No, these cannot be returned."),
    (CTX, RETURNS, "Gift cards cannot be returned. Items can be returned within 30 days of delivery; they are refunded "
                   "to the original payment method."),
    (DOCTORS, "Does Dr. Jones work on Mondays?", "No, they do not work on Mondays."),
])
def test_a_faithful_pronoun_is_delivered(gw: tuple[str, Telemetry], contexts: list[str], question: str,
                                         answer: str) -> None:
    assert_delivered_both(gw[0], answer, contexts, question)


@pytest.mark.parametrize(("contexts", "question", "answer"), [
    (CTX, RETURNS, "It would be wrong to say that gift cards cannot be returned."),
    (CTX, RETURNS, "It is a myth that gift cards cannot be returned."),
    (CTX, RETURNS, "Nobody says that gift cards cannot be returned."),
    (CTX, RETURNS, "I doubt that gift cards cannot be returned."),
    (CTX, RETURNS, "It is simply not true that gift cards cannot be returned."),
    (DOCTORS, "Does Dr. Jones work on Mondays?", "It is false that Dr. Jones never works on Mondays."),
    (CTX, RETURNS, "Is it true that gift cards cannot be returned? No."),
    (CTX, RETURNS, "Gift cards cannot be returned, except within 30 days of delivery."),
])
def test_a_denied_or_excepted_claim_is_read_for_what_it_asserts(gw: tuple[str, Telemetry], contexts: list[str],
                                                                question: str, answer: str) -> None:
    assert_blocked_both(gw[0], answer, contexts, question)


@pytest.mark.parametrize("answer", [
    "It would be wrong to say that gift cards can be returned.",
    "Is it true that gift cards cannot be returned? Yes.",
    "Items can be returned within 30 days of delivery, except gift cards.",
])
def test_a_faithful_denial_or_exception_is_delivered(gw: tuple[str, Telemetry], answer: str) -> None:
    assert_delivered_both(gw[0], answer, CTX, RETURNS)


# --------------------------------------------------------------------------- round 11: faithful answers the rules above
# once blocked (an independent probe of 122 faithful answers, whole and streamed: 6 newly blocked, now delivered)
RET = ("Items can be returned within 30 days of delivery for a full refund. Returned items must be unused and in their "
       "original packaging. Gift cards cannot be returned. Refunds are issued to the original payment method within 5 "
       "business days after we receive the item.")
PHONE = ("Our support team is available 24/7 by chat. Phone support is available Monday to Friday, 8 am to 6 pm. All "
         "plans include chat support. Phone support is included in all plans except the Free plan.")
CLINIC = ("The clinic is open every day from 8 am to 8 pm except Sundays. Walk-in patients are seen on a first-come, "
          "first-served basis.")
WARRANTY = ("The laptop comes with a two-year limited warranty. The warranty covers manufacturing defects. It does not "
            "cover accidental damage or water damage. Customers can buy AppleCare-style extended protection, called "
            "CarePlus, which covers accidental damage for three years.")


@pytest.mark.parametrize(("contexts", "question", "answer"), [
    # a pronoun of a subordinate clause points at its own sentence's subject, not at the claim before it
    ([RET], "Can I return a gift card?", "No, gift cards cannot be returned. Other items can be returned within 30 days "
                                          "of delivery, as long as they are unused and in their original packaging."),
    ([RET], "Can I return shoes?", "Gift cards cannot be returned. Shoes can be returned within 30 days if they are "
                                   "unused and in their original packaging."),
    ([RET], "Can I return opened items?", "Gift cards cannot be returned. Other items can be returned only if they are "
                                          "unused."),
    # an exception that is not of the subject's kind is read with its claim
    ([PHONE], "Which plans include phone support?", "Phone support is included in all plans, except the Free plan."),
    ([CLINIC], "When is the clinic open?", "The clinic is open every day from 8 am to 8 pm, except Sundays."),
    # a relative "that" is no demonstrative
    ([WARRANTY], "What does the warranty cover?", "The two-year limited warranty covers manufacturing defects. CarePlus "
                                                  "is an extended protection plan that covers accidental damage for "
                                                  "three years."),
])
def test_faithful_answers_the_pronoun_and_exception_rules_once_blocked(gw: tuple[str, Telemetry],
                                                                      contexts: list[str], question: str,
                                                                      answer: str) -> None:
    assert_delivered_both(gw[0], answer, contexts, question)


# --------------------------------------------------------------------------- round 12: bypasses the round-11 fixes opened
PLANS_CTX = ["The Pro plan includes priority support and a dedicated account manager. The Basic plan does not include "
             "priority support. Both plans include email support."]


@pytest.mark.parametrize(("contexts", "question", "answer"), [
    # a reply speaks of what was asked before what the sentence names
    (CTX, "Can I return gift cards?", "Yes, refunds are issued to the original payment method within 5 business days "
                                      "once they are returned."),
    # "this" before a verb that says something of a thing is read as the thing
    (CTX, "Can I return a gift card?", "This can be returned within 30 days of delivery."),
    (PLANS_CTX, "What does the Basic plan include?", "Basic plan:\nThis includes priority support."),
    (CTX, "Can I return gift cards?", "Honestly these can be returned within 30 days of delivery."),
    # a tag question is a statement: what it names is what a pronoun after it points at
    (CTX, RETURNS, f"{P30} Gift cards cannot be returned, right? They can be returned within 30 days of delivery as "
                   "well."),
    # a topic is read as far back in the whole answer as a stream reads before a sentence
    (CTX, "How do returns work?", "Gift cards:\nGreat question! Happy to help! Happy to help! Great question! Happy to "
                                  "help! You can return them within 30 days of delivery."),
])
def test_round_12_bypasses_are_blocked(gw: tuple[str, Telemetry], contexts: list[str], question: str,
                                       answer: str) -> None:
    assert_blocked_both(gw[0], answer, contexts, question)


@pytest.mark.parametrize("answer", [
    "Every item can be returned within 30 days of delivery, except gift cards.",
    "Everything can be returned within 30 days of delivery, except gift cards.",
    "Items can be returned within 30 days of delivery, except any gift card.",
    "All items can be returned within 30 days of delivery, except a gift card.",
])
def test_an_exception_to_a_quantified_or_generic_claim_is_delivered(gw: tuple[str, Telemetry], answer: str) -> None:
    assert_delivered_both(gw[0], answer, CTX, RETURNS)
