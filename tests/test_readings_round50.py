"""Readings of session 19, from a new blind set of multi-sentence answers (r50, written by a helper that saw no code):
36% of its faithful answers were blocked, most by sentences that claim nothing or by statements the guard built
wrongly. Closing courtesies and offers ("Let me know if that doesn't solve it!", "Hope they dry out fine!",
"Congratulations, by the way!"), list lead-ins ("You have two options:"), yes/no statements for question shapes
the subject reader split wrongly ("Is US roaming included ...?", "Can the provider raise prices ...?", "Can the
receiving team score in doubles?"), a name read as a common noun ("norvale's"), a subordinate clause read as a
subject ("Once the report"), a span answer held by a clause about the question, and totals worked out from the
question's count. The functions on tables of shapes; the verdicts through the real model, whole and streamed, each
with a twin that must still fail."""

from __future__ import annotations

import pytest

from block_mode import block_guard, both  # noqa: F401 - fixture
from guardrail.checks.claims import claim_subject, hedged_reply, resolve_pronouns, yes_no_statement
from guardrail.guard import Guard
from guardrail.text import is_lead_in, offer_topics

GIFT = ["Gift cards and final-sale items cannot be returned. Other items can be returned within 30 days with a "
        "receipt. Refunds are issued to the original payment method within 5 business days."]
GIFT_Q = "Can I return a sweater I bought last week?"
GOOD = "Yes, items can be returned within 30 days with a receipt."
BAD = "Yes, items can be returned within 90 days with a receipt."


@pytest.mark.parametrize(("sentence", "offer"), [
    ("Let me know if that doesn't solve it!", True),
    ("Let me know if you'd like me to look at any other clauses.", True),
    ("Anything else I can help with?", True),
    ("Congratulations, by the way!", True),
    ("Hope they dry out fine!", True),
    ("I hope he's okay.", True),
    ("I hope an estimated bill gets sorted quickly!", True),
    ("Enjoy!", True),
    ("Sorry to hear that!", True),
    ("Sorry to hear about the theft.", True),
    ("Happy roasting!", True),
    # a claim inside the formula is judged
    ("Enjoy returning gift cards!", False),
    ("Hope you can return gift cards within ninety days!", False),
    ("Hope gift cards can be returned!", False),
    ("Let me know if you'd like help returning your gift card within ninety days.", False),
    ("Let me know if you'd like to compare the plans.", True),
    # help or a wish that presumes what the answer would claim (round 54)
    ("Let me know if you need help to return your gift cards.", False),
    ("Let me know if you'd like me to walk you through the gift card return.", False),
    ("Let me know if you need help with the return of your gift cards.", False),
    ("Congratulations on your gift card refund!", False),
    ("Sorry to hear that gift cards expire!", False),
    ("I hope everything goes smoothly with your gift card refund!", False),
])
def test_closing_courtesies_and_offers(sentence: str, offer: bool) -> None:
    assert (offer_topics(sentence) is not None) is offer


@pytest.mark.parametrize(("sentence", "lead_in"), [
    ("You have two options:", True),
    ("A few things to keep in mind:", True),
    ("There are three ways to do this:", False),  # "to do this" is more than the lead-in's words
    ("Note:", True),
    ("You have two options to return gift cards:", False),
    ("Gift cards can be returned within ninety days:", False),
])
def test_list_lead_ins(sentence: str, lead_in: bool) -> None:
    assert is_lead_in(sentence) is lead_in


@pytest.mark.parametrize("closing", ["Let me know if that doesn't solve it!", "Hope that sorts it!",
                                     "Congratulations, by the way!", "Enjoy!", "Anything else I can help with?"])
def test_an_answer_with_a_closing_courtesy_is_judged_on_its_claims(block_guard: Guard, closing: str) -> None:
    assert both(block_guard, GIFT_Q, GIFT, f"{GOOD} {closing}") == ("pass", "pass")
    assert both(block_guard, GIFT_Q, GIFT, f"{BAD} {closing}") == ("block", "block")


def test_a_list_after_a_lead_in_is_judged_item_by_item(block_guard: Guard) -> None:
    good = "A few things to keep in mind:\n\n- Gift cards cannot be returned.\n- Other items can be returned within 30 " \
        "days with a receipt.\n"
    bad = good.replace("30 days", "90 days")
    assert both(block_guard, GIFT_Q, GIFT, good) == ("pass", "pass")
    assert both(block_guard, GIFT_Q, GIFT, bad) == ("block", "block")


@pytest.mark.parametrize(("question", "yes", "statement"), [
    ("Is US roaming included on the Plus plan?", False, "US roaming is not included on the Plus plan."),
    ("Can US customers get a refund?", True, "US customers can get a refund."),
    ("Can the provider raise prices when the contract renews?", True,
     "The provider can raise prices when the contract renews."),
    ("Can the receiving team score in doubles?", False, "The receiving team cannot score in doubles."),
    ("Does the warranty cover water damage?", True, "The warranty covers water damage."),
    ("Can the return policy cover sale items?", True, "The return policy can cover sale items."),
    ("Is it included?", True, "It is included."),
])
def test_yes_no_statements_of_more_question_shapes(question: str, yes: bool, statement: str) -> None:
    assert yes_no_statement(question, yes) == statement


def test_a_name_keeps_its_capital_and_a_subordinate_clause_is_no_subject() -> None:
    assert resolve_pronouns("Norvale narrowed its full-year outlook to 3%. Its margin held.".split(". ")[1],
                            ["Norvale"]) == "Norvale's margin held."
    # a possessive whose own sentence names what it points at is read as written (session 20: "Two days of heavy rain
    # pushed the River Tolle over its banks" had become "... over Two days of heavy rain's banks")
    assert resolve_pronouns("Norvale narrowed its full-year outlook to 3%.", []) is None
    assert resolve_pronouns("Shoes can be returned if they are unused.", []) == \
        "Shoes can be returned if shoes are unused."
    assert claim_subject("Once the report is filed, a replacement will be issued.") == "a replacement"
    assert claim_subject("If gift cards are unused, they can be returned.") is None


@pytest.mark.parametrize(("reply", "leans"), [("You may.", (True,)), ("You may not.", (False,)),
                                               ("It might be.", (True,)),
                                               ("You may be entitled to compensation.", None)])
def test_a_modal_reply_is_a_hedged_yes_or_no(reply: str, leans: tuple[bool] | None) -> None:
    assert hedged_reply(reply) == leans


LIBRARY = [
    "Central Library opening hours. Monday to Thursday: 8:30am to 8pm. Friday: 8:30am to 6pm. Saturday: 10am to 5pm. "
    "The Central Library is closed on public holidays.",
    "Holiday arrangements. Between Christmas and New Year (27 to 30 December) the Central Library will open from "
    "10am to 4pm and the branch libraries will be closed.",
]
RAIL = ["Fares. An Anytime Day Return from Kingsport to Marlow costs £18.40. An Off-Peak Day Return costs £11.20 and "
        "is valid on trains departing Kingsport after 09:30 on weekdays."]


def test_a_span_held_by_a_clause_about_the_question_is_no_value_from_elsewhere(block_guard: Guard) -> None:
    """"6pm." to "What time does the Central Library close on Fridays?": the Friday clause holds it, though the
    holiday sentence names the library too (it was blocked as a value answered elsewhere)."""
    result = block_guard.check("What time does the Central Library close on Fridays?", LIBRARY, "6pm.")
    assert result.action == "pass", result.reasons


def test_a_total_worked_from_the_questions_count(block_guard: Guard) -> None:
    """"£22.40 altogether." for two fares of £11.20: no number the contexts lack (the model may still judge the
    span); "£24.40" is one."""
    q = "How much would two Off-Peak Day Returns from Kingsport to Marlow cost?"
    worked = block_guard.check(q, RAIL, "That's £22.40 altogether for two Off-Peak Day Returns.")
    wrong = block_guard.check(q, RAIL, "That's £24.40 altogether for two Off-Peak Day Returns.")
    assert worked.evaluation is not None and wrong.evaluation is not None
    assert all(not s.unsupported_numbers for s in worked.evaluation.faithfulness.sentences)
    assert any(s.unsupported_numbers for s in wrong.evaluation.faithfulness.sentences) and wrong.action == "block"


def test_a_sentence_that_ends_its_paragraph_goes_out_at_once(block_guard: Guard) -> None:
    """A passed sentence followed by a blank line is released with it, not when the next sentence starts (round 53:
    it waited out a 2 s pause of the model); one followed by a space waits (an abbreviation may go on), and so does a
    blank line inside a code block."""
    q = "Can I return a gift card?"
    s = block_guard.stream(q, GIFT)
    assert s.feed("Gift cards cannot be returned.\n\n") == "Gift cards cannot be returned.\n\n"
    assert s.feed("Other items can be returned within 90 days with a receipt.\n\n") == ""
    assert s.finish().verdict.action == "block"
    s = block_guard.stream(q, GIFT)
    assert s.feed("Gift cards cannot be returned. ") == ""
    s.finish()
    s = block_guard.stream(q, GIFT)
    assert s.feed("```\nGift cards cannot be returned.\n\n") == ""
    s.finish()
