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
from guardrail.checks.grounding import KnownNumbers, context_terms, unsupported_terms
from guardrail.guard import Guard

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
    known = KnownNumbers(["The winner receives €20,000.", "A course record earns a €5,000 bonus."])
    said = "€25,000 - the €20,000 winner's prize plus the €5,000 course-record bonus."
    assert known.unsupported(said) == () and known.worked_out(said) == frozenset({"25000"})
    unsaid = "€25,000 - the €20,000 winner's prize and the €5,000 course-record bonus."  # no word works it out
    assert known.unsupported(unsaid) == () and known.worked_out(unsaid) == frozenset()


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
