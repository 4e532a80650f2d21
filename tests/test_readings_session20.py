"""Readings of session 20, from a new blind set (r58: news summaries, knowledge-grounded chat replies, short answers
and long Wikipedia-style claims, written by a helper that saw no code), where 34 of 39 faithful chat replies were
blocked. A question to the reader ("Are you into painting yourself?") or a reaction ("Oh nice!", "Ah, bad luck!")
beside a claim claims nothing; a bare "Yes!" before the claim that answers is read as "Yes, <claim>" is; a list's
head ("You'll need to bring:") is judged whole in each item it completes (alone when none follows); a possessive
whose own sentence names its antecedent is read as written ("... pushed the River Tolle over its banks" had become
"... over Two days of heavy rain's banks"). The functions on tables of shapes; the verdicts through the real model,
whole and streamed alike, each with a twin that must still fail."""

from __future__ import annotations

import pytest

from block_mode import block_guard, both  # noqa: F401 - fixture
from guardrail.checks.claims import claim_subject, hedged_reply, resolve_pronouns
from guardrail.checks.faithfulness import _named_in, heads_list
from guardrail.guard import Guard
from guardrail.text import content_stems, is_offer, remarks_to_reader

SCHOOL = ["Enrollment. To enroll a new student in Maplewood Unified School District, families must provide proof of "
          "the child's age (a birth certificate or passport), immunization records, and two proofs of residence "
          "within district boundaries dated within the last 60 days. Kindergarten students must be 5 years old on or "
          "before September 1."]
SCHOOL_Q = "What documents do I need to enroll my child?"


@pytest.mark.parametrize(("line", "heads"), [
    ("You'll need to bring:", True),
    ("You need to provide:", True),
    ("The Basic plan includes:", True),
    ("The following cannot be returned:", True),
    ("Gift cards:", False),  # a label: it claims nothing alone
    ("Here is the policy:", False),  # a lead-in heads nothing the items need
    ("Gift cards can be returned within 30 days.", False),
])
def test_list_heads(line: str, heads: bool) -> None:
    assert heads_list(line) is heads


def test_a_head_is_judged_in_the_items_it_completes(block_guard: Guard) -> None:
    """"You'll need to bring:" then the documents: passes whole and streamed (it blocked, 0.11 alone); with an item
    the contexts do not name, it is blocked both ways."""
    good = ("You'll need to bring:\n\n- Proof of your child's age, such as a birth certificate or passport\n"
            "- Two proofs of residence dated within the last 60 days\n")
    bad = ("You'll need to bring:\n\n- Proof of your child's age, such as a birth certificate or passport\n"
           "- A signed letter from your employer\n")
    assert both(block_guard, SCHOOL_Q, SCHOOL, good) == ("pass", "pass")
    assert both(block_guard, SCHOOL_Q, SCHOOL, bad) == ("block", "block")


def test_a_head_with_no_item_is_judged_as_written(block_guard: Guard) -> None:
    """The head's claim is never dropped: with nothing after it, or with items that complete nothing, it is judged
    alone; its claim is judged in every item it completes."""
    gift = ["Gift cards cannot be returned. Jackets can be returned within 30 days."]
    q = "What can I return?"
    result = block_guard.check(q, gift, "Gift cards can be returned within 90 days at:")
    assert result.action == "block"
    evaluation = result.evaluation
    assert evaluation is not None and evaluation.faithfulness.sentences[0].supported is False
    result = block_guard.check(q, gift, "Gift cards can be returned within 90 days at:\n- any store")
    assert result.action == "block" and result.evaluation is not None
    read = [s.hypothesis for s in result.evaluation.faithfulness.sentences if s.supported is not None]
    assert read == ["Gift cards can be returned within 90 days at any store."]
    stream = block_guard.stream(q, gift)
    assert stream.feed("Gift cards can be returned within 90 days at:\n") == ""  # held for its item
    assert stream.finish().verdict.action == "block"


@pytest.mark.parametrize(("sentence", "remark"), [
    ("Are you into painting yourself?", True),
    ("Have you ever tried ice fishing?", True),
    ("Do you mostly ride in Eco mode?", True),
    ("How old are your kids?", True),
    ("Could you push it back a month?", True),
    ("Have you heard it?", True),
    ("Tempted?", True),
    ("Oh nice!", True),
    ("Sounds fun!", True),
    ("Ah, bad luck!", True),
    ("Nice, congrats on the EV!", True),
    ("Oh wow, that's a nice bit of history!", True),
    ("I'd steer clear of that one.", True),
    ("Worth a try, I think.", True),  # (to a yes/no question, advice is the yes or no it leans to)
    # what says something of the world is no remark
    ("Did you know gift cards can be returned?", False),
    ("Are you aware gift cards can be returned within ninety days?", False),
    ("Are you sure gift cards cannot be returned?", False),
    ("Would you like to return gift cards, which can be returned any time?", False),
    ("Have you heard of the new return policy?", False),
    ("Are you 18?", False),
    ("Gift cards?", False),
    ("Oh nice, gift cards can be returned!", False),
    ("Ooh, winter's a lovely time for Lake Orvena!", False),
    ("I'd avoid heavy rain with them.", False),
    # a review of the session: what a question to the reader presupposes of a third party is a claim
    ("Were you surprised she won three Nobel prizes?", False),
    ("Would you believe she was born in Paris?", False),
    ("How do you feel about her winning three Nobel prizes?", False),
    ("Are you going to visit the museum before it closes on Mondays?", False),
])
def test_remarks_to_the_reader(sentence: str, remark: bool) -> None:
    assert remarks_to_reader(sentence) is remark


ISLAND = ["Around Inis Corra. The island is 9 km long and has about 150 permanent residents. Bicycles can be hired next "
          "to the pier for €20 a day. Highlights include the ruined 12th-century chapel of St Fechin, the lighthouse at "
          "the island's western tip, and a sandy beach at Tra Mhor that is lifeguarded in July and August."]


def test_a_chat_reply_is_judged_on_its_facts(block_guard: Guard) -> None:
    """Questions back and reactions around the facts claim nothing; the facts are judged (a wrong month is blocked),
    and a reply that is only a question is still judged as the reply it is."""
    q = "Any tips for a day on Inis Corra?"
    good = "Oh nice! You can hire a bike by the pier for €20 a day. Are your kids keen on bicycles?"
    bad = "Oh nice! You can hire a bike by the pier for €35 a day. Are your kids keen on bicycles?"
    assert both(block_guard, q, ISLAND, good) == ("pass", "pass")
    assert both(block_guard, q, ISLAND, bad) == ("block", "block")
    # a question that presupposes a thing no context names is judged: "the free ferry pass" is a claim
    presumes = "Oh nice! You can hire a bike by the pier for €20 a day. Have you used the free ferry pass yet?"
    assert block_guard.check(q, ISLAND, presumes).action == "block"
    alone = block_guard.check(q, ISLAND, "Are your kids keen on bicycles?")
    assert alone.evaluation is not None
    assert [s.supported for s in alone.evaluation.faithfulness.sentences] != [None]  # judged, not skipped


def test_a_bare_yes_or_no_before_a_true_sentence_is_judged(block_guard: Guard) -> None:
    """"Yes!" or "Nope!" then a sentence the contexts hold: the reply is judged as the statement it makes (a review of
    this session found a veto-only reading let a wrong yes or no pass: measured on four blind sets it also cost more
    catches than it saved faithful answers, and was dropped); advice to a yes/no question is its yes."""
    plans = ["The Pro plan costs $20 per month and includes email support. Phone support is available only on the "
             "Enterprise plan."]
    assert both(block_guard, "Does the Pro plan include email support?", plans,
                "Nope! Phone support is available only on the Enterprise plan.") == ("block", "block")
    assert both(block_guard, "Is there a free trial?", plans, "Yes! The Pro plan costs $20 per month.") == \
        ("block", "block")
    assert both(block_guard, "Does the Pro plan include email support?", plans,
                "Yes! The Pro plan costs $20 per month and includes email support.") == ("pass", "pass")


def test_readings_that_were_garbled() -> None:
    """A possessive whose sentence names its antecedent is read as written; an expletive "It's" names nothing a
    pronoun after it points at, and a subject ends before a relative clause without "that"."""
    assert resolve_pronouns("Two days of heavy rain pushed the River Tolle over its banks.", ["the river"]) is None
    assert _named_in("It's unlikely to make you drowsy.") == []
    assert claim_subject("The info I have only says she missed the season.") == "The info"
    assert claim_subject("Meanwhile Nordwind, which flew 4.2 million passengers, is axing its route.") == "Nordwind"
    assert is_offer("Fingers crossed it's soon!") and is_offer("Hope the water goes down soon.")


@pytest.mark.parametrize(("reply", "leans"), [
    ("Better not, sorry!", (False,)), ("I wouldn't!", (False,)), ("I'd steer clear of that one.", (False,)),
    ("Apparently yes!", None),  # asserts the yes: judged as it
    ("Not directly, sadly.", (False,)), ("Probably not any time soon!", (False,)),
    ("Apparently, gift cards can be returned.", None), ("I wouldn't return it.", None)])
def test_hedged_replies(reply: str, leans: tuple[bool] | None) -> None:
    """A reply that hedges its yes or no fails only where the contexts deny what it leans to."""
    assert hedged_reply(reply) == leans


def test_figures_joined_to_their_units_match() -> None:
    """"45 metres." is covered by "a 45-metre waterfall" (it was blocked at 0.28 with entailment 0.86)."""
    assert set(content_stems("45 metres.")) <= set(content_stems("the Ilvar Falls, a 45-metre waterfall"))


MARATHON = ["Swedish runner Amina Lodvik won the Stellborg Marathon on Sunday in 2:21:47, a course record, beating the "
            "previous mark set by Ethiopia's Tsige Alemu in 2019 by 38 seconds. The men's race was won by Moroccan "
            "Youssef Bennani in 2:07:12."]


def test_a_name_answered_elsewhere(block_guard: Guard) -> None:
    """"Tsige Alemu." to "Who won the men's race?": the men's race sentence names Youssef Bennani, and Tsige Alemu is
    only the old record's holder (read alone, the copied name was entailed); the right name passes, and a name the
    sentence about the question holds passes whatever else it names."""
    q = "Who won the men's race?"
    wrong = block_guard.check(q, MARATHON, "Tsige Alemu.")
    assert wrong.action == "block" and wrong.evaluation is not None
    assert "Tsige Alemu" in wrong.evaluation.faithfulness.sentences[0].unsupported_terms
    assert block_guard.check(q, MARATHON, "Youssef Bennani.").action == "pass"
    # a two-hop question, whose answer's sentence is less about its words than the first hop's: not this rule's
    hop = ["The Vs. Tour was a concert tour by the American rock band Pearl Jam to support its second album, Vs. "
           "It was the band's first collaboration with producer Brendan O'Brien."]
    two_hop = block_guard.check("Who was the producer of the studio album that was supported by Pearl Jam's Vs. Tour?",
                                hop, "Brendan O'Brien")
    assert two_hop.evaluation is not None
    assert not two_hop.evaluation.faithfulness.sentences[0].unsupported_terms
