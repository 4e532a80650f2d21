"""Readings of session 16 (a blind set with retrieval of production size, BENCHMARKS.md): hedged and qualified replies,
"No, <statement>.", verb-phrase ellipsis, attributions, "any" in a yes, pronouns that point at an attribution, at their
own clause's subject or at a person, and the session-15 rules that misfired on long contexts. The functions on tables
of shapes; the verdicts through the real model, whole and streamed, each with its twin."""

from __future__ import annotations

import pytest

from block_mode import block_guard, both  # noqa: F401 - fixture
from test_bypass import evaluator  # noqa: F401 - fixture
from guardrail.checks.claims import (
    claim_subject,
    hedged_reply,
    resolve_pronouns,
    vp_ellipsis,
    without_source,
    yes_no_statement,
)
from guardrail.checks.scales import _qualified
from guardrail.guard import Guard
from guardrail.text import stem


@pytest.mark.parametrize(("reply", "leans"), [
    ("Probably not.", (False,)),
    ("Possibly.", (True,)),
    ("Potentially, yes.", (True,)),
    ("Not necessarily.", (False,)),
    ("Based on the policy, probably not yet.", (False,)),
    ("It's best not to.", (False,)),
    ("It depends.", (None,)),
    ("Only with special approval.", (True,)),  # a yes under a condition (judged with it: restriction_of)
    ("Yes, but with limits.", (True,)),
    ("Only within 30 days of delivery.", None),  # a condition with a figure: a claim of its own
    ("Not under the standard cancellation cover.", (False,)),
    ("No, not under the standard cancellation cover.", (False,)),
    # claims of their own, not hedges
    ("Not in 2024, but yes in 2025.", None),
    ("Probably the best option is to call.", None),
    ("Yes.", None),
    ("No, they cannot.", None),
])
def test_hedged_and_qualified_replies(reply: str, leans: tuple[bool | None] | None) -> None:
    assert hedged_reply(reply) == leans


@pytest.mark.parametrize(("prior", "fragment", "statement"), [
    ("The Pro plan includes priority support.", "The Basic plan does not.",
     "The Basic plan does not include priority support."),
    ("Items can be returned within 30 days.", "Gift cards cannot.", "Gift cards cannot be returned within 30 days."),
    ("Items can be returned within 30 days.", "Gift cards can too.", "Gift cards can be returned within 30 days."),
    ("The Pro plan includes priority support.", "Thanks, it does.", None),  # a pronoun: read elsewhere
    ("Items can be returned within 30 days of delivery.", "Gift cards can", None),  # no sentence: a stream's piece
    ("The plan covered dental care.", "The Basic plan did not.", None),  # a past form's base is not read
])
def test_verb_phrase_ellipsis(prior: str, fragment: str, statement: str | None) -> None:
    assert vp_ellipsis(prior, fragment) == statement


@pytest.mark.parametrize(("question", "yes", "no"), [
    ("Are we owed anything?", "You are owed something.", "You are not owed anything."),
    ("Is there anything I can do?", "There is something you can do.", "There is nothing you can do."),
    ("Can I return any item?", "You can return any item.", "You cannot return any item."),  # a free choice
    ("Can anyone join?", "Anyone can join.", "Nobody can join."),
    ("Do Gold members get lounge access?", "Gold members get lounge access.",
     "Gold members do not get lounge access."),
    ("Does Apple make phones?", "Apple makes phones.", "Apple does not make phones."),
])
def test_statements_of_any_and_of_a_named_kind(question: str, yes: str, no: str) -> None:
    assert yes_no_statement(question, True) == yes
    assert yes_no_statement(question, False) == no


@pytest.mark.parametrize(("sentence", "referents", "read"), [
    ("Team doesn't include it.", ["SSO"], "Team doesn't include SSO."),  # not its own clause's subject
    ("The landlord has to protect it within 30 days of receiving it.", ["the deposit"],
     "The landlord has to protect the deposit within 30 days of receiving the deposit."),  # "it" is no person
    ("The levy isn't final yet — it still needs a council vote.", ["the rail expansion"],
     "The levy isn't final yet — the levy still needs a council vote."),
    ("Unless they agree otherwise in writing, cover is suspended.", ["Ten weeks"], None),  # people, not named
    ("It's worth confirming the dates with HR.", ["Eligibility"], None),  # no referent
    ("Like other items, it needs to be unused, in its original packaging.", ["a swimsuit you bought"],
     "Like other items, a swimsuit you bought needs to be unused, in its original packaging."),
    ("Shoes can be returned if they are unused.", [], "Shoes can be returned if shoes are unused."),
])
def test_pronouns(sentence: str, referents: list[str], read: str | None) -> None:
    assert resolve_pronouns(sentence, referents) == read


def test_attributions_and_imperatives_have_no_subject_of_theirs() -> None:
    assert claim_subject("According to the leaflet, low-dose aspirin should only be taken with food.") == \
        "low-dose aspirin"
    assert claim_subject("In 1990, the company was founded.") is None  # a circumstance is no source
    assert claim_subject("Make sure the item is unused.") is None
    assert claim_subject("Return policies vary by store.") == "Return policies"
    assert without_source("According to the policy, items can be returned.") == "Items can be returned."
    assert without_source("In short, items can be returned.") == "In short, items can be returned."


def test_stems_and_bounds() -> None:
    assert {stem(w) for w in ("vote", "voted", "votes", "voting")} == {"vot"}
    assert stem("state") == stem("states") and stem("agree") == stem("agreed")
    assert stem("returnable") == stem("returned") and stem("refundable") == stem("refunds")
    # a negation before a comma does not govern the bound after it
    assert _qualified("Claims go to your operator, not your supplier, within 3 months.") == [("3", "upper", "within")]
    assert _qualified("Do not take more than 8 tablets.") == [("8", "upper", "more than")]


RET = ["Employees must submit expense reports within 30 days. Receipts are required for any expense over $25. "
       "Alcohol is not reimbursable."]
PTO = ["New employees accrue PTO from their first day but cannot use it until they have completed 90 days of service."]
PLANS = ["SSO via SAML is included in the Business plan. The Team plan does not include SSO. The Pro plan includes "
         "priority support."]
LOUNGE = ["Gold members get two free checked bags and priority boarding. Lounge access is exclusive to Platinum "
          "members."]
RAIL = ["The council voted 7-4 to approve the light rail expansion. Construction is scheduled to begin in spring 2026, "
        "with service expected to start in late 2030."]
BRIDGE = ["The Brooklyn Bridge is a hybrid cable-stayed and suspension bridge in New York City. Opened on May 24, 1883, "
          "it was the first fixed crossing of the East River. The bridge was designed by John A. Roebling."]


@pytest.mark.parametrize(("question", "contexts", "answer", "want"), [
    # a hedge is judged for contradiction; the sentence after it carries the claim
    ("I started two weeks ago. Can I take a day of PTO next month?", PTO,
     "Probably not. You can't use PTO until you've completed 90 days of service.", "pass"),
    ("I started two weeks ago. Can I take a day of PTO next month?", PTO,
     "Probably not. You can't use PTO until you've completed 120 days of service.", "block"),
    ("Can I return a gift card?", ["Items can be returned within 30 days of delivery. Gift cards cannot be returned."],
     "Possibly.", "block"),  # what the hedge leans to, denied (contradiction 0.73: LEAN_CONTRADICTION)
    ("Can I work remotely on Fridays?", ["Employees may work remotely up to three days per week. Remote work requests "
                                         "do not require manager approval."], "Only with manager approval.", "block"),
    # the statement after a no is the claim
    ("Can I expense wine at a client dinner?", RET, "No, alcohol isn't reimbursable.", "pass"),
    ("Can I expense wine at a client dinner?", RET, "No, alcohol is reimbursable only with receipts.", "block"),
    # a pronoun is not its own clause's subject
    ("Is SSO available on the Team plan?", PLANS, "No. The Team plan doesn't include it.", "pass"),
    ("Is SSO available on the Team plan?", PLANS, "Yes. The Team plan includes it.", "block"),
    # verb-phrase ellipsis
    ("Which plans include SSO?", PLANS, "The Business plan includes SSO. The Team plan does not.", "pass"),
    ("Which plans include SSO?", PLANS, "The Business plan includes SSO. The Team plan does too.", "block"),
    # a name of a kind in a question ("Gold members")
    ("Do Gold members get lounge access?", LOUNGE, "No, Gold members do not get lounge access.", "pass"),
    ("Do Gold members get lounge access?", LOUNGE, "Yes, Gold members get lounge access.", "block"),
    # an attribution is no part of the claim
    ("What did the council approve?", RAIL, "According to the council, construction is scheduled to begin in spring "
                                            "2026.", "pass"),
    ("What did the council approve?", RAIL, "According to the council, construction is scheduled to begin in spring "
                                            "2027.", "block"),
    # two verbs exchanged between clauses name the same events; "New York" is no "new"
    ("What did the council approve?", RAIL, "Construction is scheduled to start in spring 2026 and service is expected "
                                            "to begin in late 2030.", "pass"),
    ("When did the Brooklyn Bridge open?", BRIDGE, "It opened on May 24, 1883.", "pass"),
    ("When did the Brooklyn Bridge open?", BRIDGE, "It opened on May 24, 1893.", "block"),
])
def test_the_readings_whole_and_streamed(block_guard: Guard, question: str, contexts: list[str], answer: str,
                                         want: str) -> None:
    assert both(block_guard, question, contexts, answer) == (want, want), answer
