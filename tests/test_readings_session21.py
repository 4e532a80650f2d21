"""Readings of session 21, from the false blocks of the r58 blind set (faithful summaries, chat replies and short
answers written by a helper that saw no code): the number and name rules failed sentences that say exactly what the
contexts say. A value stated in a clause about another subject than the sentence's ("Lake Orvena is the deepest, but
Lake Selm is bigger, 112 square kilometres ...") was read as Orvena's; the asker's own figure beside the right one
("sale items have 14 days, so at 20 days you're past it") as a value moved from another item; "no more than two per
household" as a miscount of "three per household" (Zone D's); names the contexts spell otherwise ("Belgium's" for
"Belgian", "Flemish" for "Flanders", "A321neos", "Minneapolis-based", "the early 1200s", "50 MP", "l'Aube"), and a total
the sentence works out in so many words ("€20,000 prize plus the €5,000 bonus"), counted as unsupported terms. The
functions on tables of shapes; the verdicts through the real model, each with a twin that must still fail."""

from __future__ import annotations

import pytest

from block_mode import block_guard  # noqa: F401 - fixture
from guardrail.checks.claims import resolve_pronouns, yes_no_statement
from guardrail.checks.grounding import KnownNumbers, context_terms, unsupported_terms
from guardrail.errors import GuardrailError
from guardrail.guard import Guard
from guardrail.text import remarks_to_reader

VOCAB = context_terms([
    "Mara Vossberg (born 1996) is a Belgian road cyclist. In 2021 she won a stage at the Tour de l'Aube. The airline "
    "flies 186-seat Airbus A321neo aircraft. Wool was sold to merchants from Flanders and Florence. The community was "
    "at its largest around 1230. Brightwater Foods, headquartered in Minneapolis, makes cereals. The phone has a "
    "50-megapixel main camera. Offices in Austria, Sweden and France."])


@pytest.mark.parametrize(("sentence", "terms"), [
    ("The rider is Belgium's best climber.", ()),
    ("She won at the Tour de l'Aube.", ()),
    ("She won at the Tour de Suisse.", ("suisse",)),
    ("It flies 186-seat A321neos.", ()),
    ("It flies 186-seat A320s.", ("a320s",)),
    ("Wool went to Flemish and Florentine merchants.", ()),
    ("The abbey peaked in the early 1200s.", ()),
    ("The abbey peaked in the 1970s.", ("1970",)),  # (1996 is of the 1990s)
    ("It is a Minneapolis-based maker of cereals.", ()),
    ("It is a Chicago-based maker of cereals.", ("chicago",)),
    ("It has a 50 MP main camera.", ()),
    ("It has Austrian, Swedish and French offices.", ()),
    ("It has Australian offices.", ("australian",)),  # no stem of Austria's
    ("It has German offices.", ("german",)),
])
def test_names_the_contexts_spell_otherwise(sentence: str, terms: tuple[str, ...]) -> None:
    assert unsupported_terms(sentence, VOCAB) == terms


def test_a_count_per_household_is_no_miscount() -> None:
    """"two per household" counts permits as "a maximum of two resident permits" does; Zone D's "three per household"
    counts nothing else. A count of a thing the contexts count otherwise still fails."""
    known = KnownNumbers(["Households may hold a maximum of two resident permits.",
                          "Zone D permits cost £60 a year per vehicle, with a maximum of three per household."])
    assert known.unsupported("You can have no more than two per household.") == ()
    known = KnownNumbers(["The plan includes four user seats."])
    assert known.unsupported("The plan includes five user seats.") == ("five user",)


def test_a_total_the_sentence_works_out_is_no_unknown_term() -> None:
    """From figures one context sentence gives together, with a word that works it out; not the runner-up's bonus
    added to the winner's prize (round 61), nor a sum no word works out."""
    known = KnownNumbers(["Lodvik won the €20,000 winner's prize and a €5,000 bonus for the course record."])
    said = "€25,000 - the €20,000 winner's prize plus the €5,000 course-record bonus."
    assert known.unsupported(said) == () and known.worked_out(said) == frozenset({"25000"})
    unsaid = "€25,000 - the €20,000 winner's prize and the €5,000 course-record bonus."  # no word works it out
    assert known.unsupported(unsaid) == () and known.worked_out(unsaid) == frozenset()
    apart = KnownNumbers(["The winner receives a €20,000 prize.", "A €5,000 bonus goes to the runner-up."])
    moved = "The winner receives €25,000: the €20,000 prize plus the €5,000 bonus."
    assert apart.worked_out(moved) == frozenset()


def _terms(guard: Guard, q: str, contexts: list[str], answer: str) -> tuple[str, ...]:
    """The terms the rules name against the first answer sentence that names any (the model may still fail what no
    rule fails: these tests are about the rules)."""
    result = guard.check(q, contexts, answer)
    assert result.evaluation is not None
    return next((s.unsupported_terms for s in result.evaluation.faithfulness.sentences if s.unsupported_terms), ())


LAKES = ["Lake Orvena is the deepest lake in the Kessel Highlands, lying at an elevation of 1,140 metres. It covers 86 "
         "square kilometres and reaches a maximum depth of 212 metres.",
         "Lake Selm is the largest lake in the Kessel Highlands by surface area, at 112 square kilometres, but it is "
         "relatively shallow, with a maximum depth of 38 metres."]


def test_a_value_said_in_a_clause_about_another_subject(block_guard: Guard) -> None:
    """The 112 square kilometres are Selm's, in the clause that names Selm: no rule fails it (it failed as a value
    moved from Selm to Orvena); said of Orvena, it is blocked, and named."""
    q = "Is Lake Orvena the largest lake in the Kessel Highlands?"
    good = "Lake Orvena is the deepest, but Lake Selm is bigger by surface area, 112 square kilometres against 86."
    assert _terms(block_guard, q, LAKES, good) == ()
    bad = "Lake Orvena is the deepest and covers 112 square kilometres."
    assert block_guard.check(q, LAKES, bad).action == "block"
    assert _terms(block_guard, q, LAKES, bad) == ("112 square",)


RETURNS = ["Returns policy. You can return most items within 30 days of delivery for a full refund. Sale items can be "
           "returned within 14 days. Gift cards are non-refundable."]


def test_the_askers_own_figure_beside_the_right_one(block_guard: Guard) -> None:
    q = "I bought a lamp in the sale 20 days ago, can I still send it back?"
    good = "Unfortunately sale items only have a 14-day return window, so at 20 days you're past it."
    assert "20 days" not in _terms(block_guard, q, RETURNS, good)  # (no rule fails it: the figure is the asker's)
    for bad in ("Yes, sale items can be returned within 20 days.", "Sale items have a 20-day return window."):
        assert block_guard.check(q, RETURNS, bad).action == "block", bad


PERMITS = ["Residents' parking permits - Zone C. Zone C permits cost £85 a year for the first vehicle and £140 for a "
           "second. Households may hold a maximum of two resident permits.",
           "Residents' parking permits - Zone D. Zone D permits cost £60 a year per vehicle, with a maximum of three per "
           "household."]


def test_a_bound_per_household(block_guard: Guard) -> None:
    q = "How many Zone C permits can we have?"
    assert _terms(block_guard, q, PERMITS, "Zone C households may hold no more than two per household.") == ()
    assert block_guard.check(q, PERMITS, "Zone C households may hold no more than four per household.").action == \
        "block"


DESCALING = ["Barista Duo 300 - Descaling. Descale your machine every 2-3 months. Fill the tank with 500 ml of solution "
             "and 500 ml of water, then press Descale. The cycle takes about 25 minutes.",
             "Barista Solo 100 - Descaling. Descale your Solo 100 every month. Fill the tank with 250 ml of descaling "
             "solution, then press the Power and Cup buttons together. The cycle takes about 15 minutes."]
CURRY = ["Weeknight chickpea curry (serves 4). Fry the onion for 8 minutes. Add the tomatoes and simmer for 10 minutes. "
         "Add the chickpeas and simmer for another 15 minutes.",
         "Slow-cooker chickpea curry. Put everything into the slow cooker and cook on low for 420 minutes."]


@pytest.mark.parametrize(("q", "contexts", "good", "bad"), [
    # the value's sentence names nothing: its chunk's heading says whose it is
    ("How long does the Duo 300 descaling cycle take?", DESCALING, "About 25 minutes.", "About 15 minutes."),
    ("How long does the Solo 100 descaling cycle take?", DESCALING, "About 15 minutes.", "About 25 minutes."),
    # the slow cooker's value, beside the stovetop's in the sentence about the chickpeas
    ("How long does the weeknight curry simmer after the chickpeas go in?", CURRY, "15 minutes.",
     "420 minutes on low."),
])
def test_a_short_answer_with_a_neighbouring_products_value(block_guard: Guard, q: str, contexts: list[str],
                                                            good: str, bad: str) -> None:
    assert block_guard.check(q, contexts, bad).action == "block", bad
    assert _terms(block_guard, q, contexts, good) == (), good


@pytest.mark.parametrize(("question", "yes", "no"), [
    ("I'm on council tax support, do I have to pay full whack to get rid of my old sofa?",
     "If you're on council tax support, you have to pay full whack to get rid of your old sofa.",
     "If you're on council tax support, you do not have to pay full whack to get rid of your old sofa."),
    ("I live on Quarry Lane, can I still get to my house during the works?",
     "If you live on Quarry Lane, you can still get to your house during the works.",
     "If you live on Quarry Lane, you cannot still get to your house during the works."),
    ("Quick one, can I bring my dog?", "You can bring your dog.", "You cannot bring your dog."),
    ("Thinking of heading there in winter, is the lake frozen?", "The lake is frozen.", "The lake is not frozen."),
    # the question's "this"/"that" before a noun is its determiner, not its subject
    ("Is this curry vegan?", "This curry is vegan.", "This curry is not vegan."),
    ("Does this plan include SSO?", "This plan includes SSO.", "This plan does not include SSO."),
    ("Can this bike go off-road?", "This bike can go off-road.", "This bike cannot go off-road."),
    ("Are those tickets refundable?", "Those tickets are refundable.", "Those tickets are not refundable."),
    ("Does this include VAT?", "This includes VAT.", "This does not include VAT."),
    ("Is this available in blue?", "This is available in blue.", "This is not available in blue."),
    ("Is this worth it?", "This is worth it.", "This is not worth it."),
])
def test_the_statement_a_yes_or_no_makes(question: str, yes: str, no: str) -> None:
    assert yes_no_statement(question, True) == yes
    assert yes_no_statement(question, False) == no


@pytest.mark.parametrize(("sentence", "referents", "read"), [
    # a thing named before an object pronoun: read as written (the question's topic is no better guess)
    ("The council chose to renovate the 1962 Elm Street library instead of replacing it.", ["Harwick Falls"], None),
    ("You can return it within 30 days.", ["a gift card"], "You can return a gift card within 30 days."),
    # "she" is a person: not "the Stellborg Marathon"; a person's name before "of"
    ("She pulled away at 35 km.", ["the Stellborg Marathon", "Amina Lodvik of Sweden"],
     "Amina Lodvik of Sweden pulled away at 35 km."),
])
def test_pronouns_read_as_what_they_point_at(sentence: str, referents: list[str], read: str | None) -> None:
    assert resolve_pronouns(sentence, referents) == read


def _action(guard: Guard, q: str, contexts: list[str], answer: str) -> str:
    try:
        return guard.check(q, contexts, answer).action
    except GuardrailError:  # an answer the guard cannot judge: block mode blocks it (on_error)
        return "block"


@pytest.mark.parametrize(("q", "contexts", "bad", "good"), [
    # a name one letter off shares a stem: only a place and its people's word match ("Belgium"/"Belgian")
    ("Who founded Valtrix?", ["Valtrix was founded by Roberto Bianchi in 1998."],
     "Valtrix was founded by Roberta Bianchi.", "Valtrix was founded by Roberto Bianchi."),
    # a value moved onto the asked subject in a clause whose subject it is, whatever else the clause names
    ("How long is the warranty on the Vela X2?", ["The Vela X2 comes with a 1-year warranty.",
                                                  "The Vela Pro includes a 3-year warranty and free shipping on all "
                                                  "orders."],
     "The Vela X2 comes with a 3-year warranty, the same as the Vela Pro, which includes free shipping on all orders.",
     "The Vela X2 comes with a 1-year warranty, while the Vela Pro includes a 3-year warranty and free shipping on all "
     "orders."),
    # the asker's figure stated as the subject's value (not "at 20 days", the asker's case)
    ("Do children take 40 mg?", ["The adult dose is 40 mg once daily. The dose for children is 10 mg once daily."],
     "Yes, the dose for children is 40 mg once daily after a 10 mg starting dose.",
     "No, the dose for children is 10 mg once daily."),
    # "them" cannot be "the receipt": the referents decide
    ("What is the policy for gift cards?", ["Gift cards are sold at the front desk. Gift cards cannot be returned. "
                                            "Shoes can be returned within 30 days with the receipt."],
     "Gift cards are sold at the front desk. You can bring the receipt within 30 days and return them.",
     "Gift cards are sold at the front desk. They cannot be returned."),
    # a claim in brackets after a pointer is judged; a title there names the page
    ("Can gift cards be returned?", ["Gift cards cannot be returned. Other items can be returned within 30 days."],
     "Gift cards cannot be returned. For details, see our returns policy (gift cards can be refunded in cash at any "
     "time).",
     "Gift cards cannot be returned. For details, see our returns policy (Returns and refunds)."),
    # the heading tells the neighbouring machines apart whatever the question's wording
    ("How long does descaling take on the Solo 100?", DESCALING, "About 25 minutes.", "About 15 minutes."),
])
def test_review_of_the_session(block_guard: Guard, q: str, contexts: list[str], bad: str, good: str) -> None:
    """Round 61, a review of the session's rules: each hallucination blocked, each faithful twin delivered."""
    assert _action(block_guard, q, contexts, bad) == "block", bad
    assert _action(block_guard, q, contexts, good) == "pass", good


def test_this_thing_after_a_conversation_is_not_judged_against_any_thing(block_guard: Guard) -> None:
    """"I bought the AeroBook 16. Is this laptop waterproof?": the words cannot say which laptop; "Yes." is not judged
    as "This laptop is waterproof." against whichever laptop is (it is refused, as before)."""
    contexts = ["The AeroBook 14 is waterproof. The AeroBook 16 is not waterproof."]
    assert _action(block_guard, "I bought the AeroBook 16. Is this laptop waterproof?", contexts, "Yes.") == "block"
    assert yes_no_statement("I bought the AeroBook 16. Is this laptop waterproof?", True) is None


@pytest.mark.parametrize(("remark", "question", "claims"), [
    # the asker's own news in the question's words claims nothing beside a claim (r62: faithful chat replies blocked)
    ("Congratulations on the new puppy!", "We just got a 9 week old lab puppy!! What vaccines does she need?", False),
    ("Congrats on getting the surgery booked!", "I'm having knee surgery next month. Can I pause my membership?",
     False),
    ("Sorry to hear about the knee.", "I'm having knee surgery next month. Can I pause my membership?", False),
    # a topic the question does not name may presume a claim: judged
    ("Congrats on your gift card refund!", "Can I return a gift card?", True),
])
def test_the_askers_news(block_guard: Guard, remark: str, question: str, claims: bool) -> None:
    contexts = ["Members can freeze their membership on medical grounds with a doctor's note. Puppies need two "
                "vaccinations, three to four weeks apart. Gift cards cannot be returned."]
    result = block_guard.check(question, contexts, remark + " Members can freeze their membership with a doctor's note.")
    assert result.evaluation is not None
    first = result.evaluation.faithfulness.sentences[0]
    assert (first.score is not None) is claims, remark


@pytest.mark.parametrize(("sentence", "read"), [
    ("Because it's April, he'll need to stay on his lead.", None),  # the time: no referent
    ("It is cold in winter.", None),
    ("It is 5 km long.", "The lake is 5 km long."),
])
def test_an_it_of_time_or_weather(sentence: str, read: str | None) -> None:
    assert resolve_pronouns(sentence, ["the lake"]) == read


@pytest.mark.parametrize(("remark", "is_remark"), [
    ("Exciting project!", True), ("Great choice for a fit dog!", True), ("Ooh, tight timing.", True),
    ("Free shipping!", False), ("Good value for money!", False),
])
def test_a_verdict_on_the_askers_plan(remark: str, is_remark: bool) -> None:
    assert remarks_to_reader(remark) is is_remark


BRIDGES = ["The Corran Bridge is a cable-stayed road bridge over the River Ardle. Opened in 2011, it has a main span of "
           "260 metres and carries four lanes of traffic.",
           "The Ferrier Bridge, 1.5 km upstream, is an older steel arch bridge completed in 1927 with a main span of "
           "148 metres."]


def test_a_sentence_after_a_participle_phrase_is_about_its_chunk(block_guard: Guard) -> None:
    """"Opened in 2011, it has a main span of 260 metres": the Corran Bridge's (it read as "Opened in 2011"); a
    value the contexts leave unitless ("from 310 pups to around 1,450") is the answer's value."""
    q = "What is the main span of the Corran Bridge?"
    assert _terms(block_guard, q, BRIDGES, "260 metres.") == ()
    assert block_guard.check(q, BRIDGES, "148 metres.").action == "block"
    seals = ["Counts rose from about 310 pups in 1984 to a peak of around 1,450 in 2017 before declining slightly."]
    assert _terms(block_guard, "What was the peak seal pup count?", seals, "Around 1,450 pups, in 2017.") == ()
