"""Readings of session 17 (the false blocks of the production-size blind set, BENCHMARKS.md): a yes to a do-question
says the plain verb ("Unsubscribed contacts count ...", not the emphatic "do count" the model reads as a contrast), a
did-question's verb is not read into its subject, a "No, <statement>." is judged by its statement (the question's
negative statement beside it is not), numbers the answer works out (a count in words, a chain, a sum of figures it
quoted in another sentence), a range's scale word, labelled rows ("Urgent care: $75 copay.") and a contrast word of
the subject's own name. The functions on tables of shapes; the verdicts through the real model, whole and streamed,
each with its twin."""

from __future__ import annotations

import pytest

from block_mode import block_guard, both  # noqa: F401 - fixture
from guardrail.checks.claims import yes_no_statement
from guardrail.checks.grounding import KnownNumbers, quantities
from guardrail.guard import Guard


@pytest.mark.parametrize(("question", "yes", "no"), [
    ("Do unsubscribed contacts count toward my limit?", "Unsubscribed contacts count toward your limit.",
     "Unsubscribed contacts do not count toward your limit."),
    ("Does the Team plan include SSO?", "The Team plan includes SSO.", "The Team plan does not include SSO."),
    ("Does the fee apply to refunds?", "The fee applies to refunds.", "The fee does not apply to refunds."),
    ("Does the hotel have parking?", "The hotel has parking.", "The hotel does not have parking."),
    ("Does the plan cover glasses?", "The plan covers glasses.", "The plan does not cover glasses."),
    ("Does the store match prices?", "The store matches prices.", "The store does not match prices."),
    ("Do I need to tell anyone?", "You need to tell someone.", "You do not need to tell anyone."),
    ("Doesn't the plan include SSO?", "The plan includes SSO.", "The plan does not include SSO."),
    # a past "did" stays (no past forms are made); its verb is not read into the subject
    ("Did the council approve the plan?", "The council did approve the plan.", "The council did not approve the plan."),
    ("Did the city council reject a proposal?", "The city council did reject a proposal.",
     "The city council did not reject a proposal."),
    # a possessive is its noun's determiner; the word before a modal's "be" ends the subject
    ("Will my flood claim be paid?", "Your flood claim will be paid.", "Your flood claim will not be paid."),
    ("Can my son renew his passport online?", "Your son can renew his passport online.",
     "Your son cannot renew his passport online."),
    ("Does my plan cover glasses?", "Your plan covers glasses.", "Your plan does not cover glasses."),
    ("Will the flood claim be paid?", "The flood claim will be paid.", "The flood claim will not be paid."),
    # other auxiliaries as before
    ("Can gift cards be returned?", "Gift cards can be returned.", "Gift cards cannot be returned."),
    ("Will the airline refund my ticket?", "The airline will refund your ticket.",
     "The airline will not refund your ticket."),
])
def test_a_yes_says_the_plain_verb(question: str, yes: str, no: str) -> None:
    assert yes_no_statement(question, True) == yes
    assert yes_no_statement(question, False) == no


def test_a_range_carries_its_scale_word() -> None:
    assert [q.value for q in quantities("revenue of $4.9–5.1 billion")][:2] == [4.9e9, 5.1e9]
    assert [q.value for q in quantities("from 2 to 3 million people")][:2] == [2e6, 3e6]
    assert quantities("raised 6 to 1.5 million")[0].value == 6  # no range: 6 is not 6 million
    assert quantities("between 5-7 days")[0].value == 5


FREEZE = ["Members may freeze their membership for between 1 and 3 months once in any 12-month period, at a cost of "
          "£5 per month."]
TEAM = ["Team: $9 per user per month billed annually, or $12 per user per month billed monthly."]
EXCESS = ["A compulsory excess of £250 applies to every claim. If the driver is under 25, an additional young driver "
          "excess of £300 applies."]


@pytest.mark.parametrize(("contexts", "question", "answer", "unsupported"), [
    # a count in words times a price the contexts give
    (FREEZE, "Can I freeze for two months?", "Two months would cost £10.", ()),
    (FREEZE, "Can I freeze for two months?", "Two months would cost £12.", ("£12",)),
    # a chain: 9 x 10 users, then x 12 months
    (TEAM, "What would 10 people cost?", "10 users would come to $90 a month, or $1,080 for the year.", ()),
    (TEAM, "What would 10 people cost?", "10 users would come to $90 a month, or $1,200 for the year.", ("$1,200",)),
])
def test_numbers_the_answer_works_out(contexts: list[str], question: str, answer: str,
                                      unsupported: tuple[str, ...]) -> None:
    assert KnownNumbers([*contexts, question]).unsupported(answer) == unsupported


def test_a_sum_of_figures_the_answer_quoted_in_another_sentence() -> None:
    answer = ["You pay the £250 compulsory excess and the £300 young driver excess.", "That makes £550 in total."]
    assert KnownNumbers([*EXCESS, "What excess would I pay?"], answer=answer).unsupported(answer[1]) == ()
    assert KnownNumbers([*EXCESS, "What excess would I pay?"], answer=answer).unsupported(
        "That makes £650 in total.") == ("£650",)
    # figures the answer never quoted are no operands
    assert KnownNumbers([*EXCESS, "What excess would I pay?"], answer=answer[1:]).unsupported(answer[1]) == ("£550",)


HEALTH = ["Primary care visit: $30 copay. Specialist visit: $60 copay; no referral is required. Urgent care: $75 copay. "
          "Emergency room: $500 copay, waived if you are admitted."]
LEAVE = ["The primary caregiver is entitled to 16 weeks at full base salary. The secondary caregiver is entitled to 6 "
         "weeks at full base salary. Secondary caregiver leave may be taken in up to three separate blocks of at least "
         "one week each; primary caregiver leave must be taken in a single continuous block."]
CONTACTS = ["Contacts that have been imported but never emailed still count toward your limit. Every unique email "
            "address in your audience counts as one contact, including unsubscribed contacts, until you archive or "
            "delete them. Archived contacts do not count toward your limit."]
KILI = ["The first recorded ascent to the summit was made in 1889 by the German geologist Hans Meyer and the Austrian "
        "mountaineer Ludwig Purtscheller, accompanied by local guides. Today, tens of thousands of people attempt the "
        "climb each year. Climbers must be accompanied by a licensed guide, and most ascents take between five and "
        "nine days.", "Several established routes lead to the summit. The Marangu route is the only one that offers "
        "hut accommodation; all others require camping."]
GIFT = ["Gift cards and final-sale items cannot be returned. Other items can be returned within 30 days with a receipt."]
POOL = ["Only members can use the pool. Members and their guests can use the sauna."]
BUDGET = ["Revenue guidance for the fourth quarter is $4.9 billion to $5.1 billion, below the $5.3 billion analysts "
          "had expected."]


@pytest.mark.parametrize(("question", "contexts", "answer", "want"), [
    # a labelled row names its subject: the answer's figure is urgent care's
    ("What will I pay for an urgent care visit?", HEALTH, "A $75 copay.", "pass"),
    ("What will I pay for an urgent care visit?", HEALTH, "A $30 copay.", "block"),
    # "secondary" is the subject's own name, not a contrast with "primary"
    ("Can I split my secondary caregiver leave?", LEAVE, "Yes.", "pass"),
    ("How long is secondary caregiver leave?", LEAVE, "The secondary caregiver is entitled to 16 weeks at full base "
                                                      "salary.", "block"),  # the primary caregiver's
    # the plain verb of a yes
    ("Do unsubscribed contacts count toward my limit?", CONTACTS, "Yes.", "pass"),
    ("Do archived contacts count toward my limit?", CONTACTS, "Yes.", "block"),
    # a no with its own statement is judged by it, not by the question's negative statement beside it ("You cannot
    # climb Kilimanjaro on your own.": contradiction 0.99 against the very sentence that makes it true)
    ("Can I climb Kilimanjaro on my own?", KILI, "No. Climbers must be accompanied by a licensed guide.", "pass"),
    ("Can I climb Kilimanjaro on my own?", KILI, "No. Climbers must hold a mountaineering permit from the army.", "block"),
    # "only" where the contexts say it of the subject and others together
    ("How do returns work?", GIFT, "Only final-sale items cannot be returned.", "block"),
    ("How do returns work?", GIFT, "Final-sale items cannot be returned.", "pass"),
    ("How do returns work?", GIFT, "Only final sale items can't be returned.", "block"),
    ("How do returns work?", GIFT, "Final-sale items alone cannot be returned.", "block"),
    ("How do returns work?", GIFT, "Final-sale items are the only items that cannot be returned.", "block"),
    ("Who can use the sauna?", POOL, "Members only can use the sauna.", "block"),
    ("Who can use the pool?", POOL, "Only members can use the pool.", "pass"),
    ("Who can use the pool?", POOL, "Only members can use the sauna.", "block"),
    # ... but a no is wrong where the contexts say yes outright (the yes it denies is entailed)
    ("Do climbers need a licensed guide?", KILI, "No, most ascents take between five and nine days.", "block"),
    ("Do climbers need a licensed guide?", KILI, "Yes, climbers must be accompanied by a licensed guide.", "pass"),
    # a range's scale word
    ("What revenue does the company expect?", BUDGET, "It guided revenue to $4.9–5.1 billion.", "pass"),
    ("What revenue does the company expect?", BUDGET, "It guided revenue to $4.5–5.1 billion.", "block"),
])
def test_the_readings_whole_and_streamed(block_guard: Guard, question: str, contexts: list[str], answer: str,
                                         want: str) -> None:
    assert both(block_guard, question, contexts, answer) == (want, want), answer


@pytest.mark.parametrize(("question", "answer", "statement"), [
    ("What does the Pro plan include?", "SSO", "The Pro plan does include SSO."),  # was "The Pro does plan SSO include."
    ("What does the Basic plan cost?", "$9 a month", "The Basic plan does cost $9 a month."),
    ("What does the warranty cover?", "Water damage", "The warranty does cover Water damage."),
    ("What did Einstein win in 1921?", "The Nobel Prize", "Einstein did win The Nobel Prize in 1921."),
])
def test_a_wh_question_asks_for_its_verbs_object(question: str, answer: str, statement: str) -> None:
    from guardrail.checks.claims import wh_statement

    assert wh_statement(question, answer) == statement
