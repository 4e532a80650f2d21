"""Letters struck through with a combining overlay are read as struck (withdrawn), whichever overlay strikes them:
every combining mark of canonical combining class 1 (Overlay), not only U+0334-U+0338. Other combining marks
(accents, enclosing circles) still just drop on Latin letters, and a script's own overlay signs stay on its letters."""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Iterator

import pytest

from guardrail.checks.evaluator import Evaluator
from guardrail.guard import Guard
from guardrail.policy import Policy
from guardrail.render import render
from guardrail.scorers.nli import NLIScorer, default_nli_model

#: every overlay mark of the Unicode data this Python has
OVERLAYS = [chr(cp) for cp in range(sys.maxunicode + 1) if unicodedata.combining(chr(cp)) == 1]
#: the overlays for symbols (U+20D0 block) that were read as no stroke at all
SYMBOL_OVERLAYS = "\u20d2\u20d3\u20d8\u20d9\u20da\u20e5\u20e6\u20ea\u20eb"


def struck(word: str, mark: str) -> str:
    return "".join(ch + mark for ch in word)


def test_the_overlays_are_all_there() -> None:
    assert set("\u0334\u0335\u0336\u0337\u0338" + SYMBOL_OVERLAYS) <= set(OVERLAYS)


@pytest.mark.parametrize("mark", OVERLAYS, ids=lambda m: f"U+{ord(m):04X}")
def test_every_overlay_strikes_a_latin_letter(mark: str) -> None:
    source = "Gift cards can" + struck("not", mark) + " be returned."
    r = render(source)
    assert r.text == "Gift cards can be returned.", unicodedata.name(mark)
    assert r.source == source and r.changed


@pytest.mark.parametrize("mark", SYMBOL_OVERLAYS, ids=lambda m: f"U+{ord(m):04X}")
def test_a_word_struck_with_a_symbol_overlay_is_withdrawn(mark: str) -> None:
    assert render(f"Gift cards {struck('cannot', mark)} can be returned.").text == "Gift cards  can be returned."
    assert render(f"Returns within {struck('90', mark)} 30 days.").text == "Returns within  30 days."


def test_several_overlays_strike_their_letter_once() -> None:
    assert render("an\u0336\u20e5\u20d2d").text == "ad"
    assert render("ca\u0301\u20e5nnot").text == "cnnot"  # the letter goes with its accent


def test_accents_and_enclosing_marks_still_just_drop() -> None:
    assert render("ca\u0301n\u0300n\u0302o\u0308t\u0327 be returned").text == "cannot be returned"
    for mark in ("\u0301", "\u0308", "\u0323", "\u20d0", "\u20d7", "\u20dd", "\u20e3", "\u20e7", "\u20e8"):
        assert unicodedata.combining(mark) != 1
        assert render("Gift cards can" + struck("not", mark) + " be returned.").text == \
            "Gift cards cannot be returned.", unicodedata.name(mark)


def test_symbols_drawn_with_a_stroke_are_read_as_symbols() -> None:
    """Precomposed ``≠``, ``∉``... decompose to a symbol and U+0338: they are the symbols, nothing is struck."""
    assert render("5 \u2260 6, x \u2209 A, a \u226e b").text == "5 \u2260 6, x \u2209 A, a \u226e b"


def test_a_scripts_own_overlay_signs_stay_and_generic_overlays_strike_any_letter() -> None:
    assert render("हिन्दी\u1cd4 भाषा").text == "हिन्दी\u1cd4 भाषा"  # a Vedic tone sign on Devanagari
    assert render("कि\u0336 ख").text == " ख"  # the letter with its vowel sign
    assert render("कि\u20e5 ख").text == " ख"
    assert render("कीं").text == "कीं"  # a mark after a spacing vowel sign is kept


def test_offsets_still_point_into_the_source() -> None:
    source = "Gift cards can" + struck("not", "\u20e5") + " be returned. Refunds take 5 days."
    r = render(source)
    assert r.text == "Gift cards can be returned. Refunds take 5 days."
    start = r.text.index("Refunds")
    assert source[slice(*r.to_source(start, len(r.text)))] == "Refunds take 5 days."


# --------------------------------------------------------------------------- through the shipped model
CTX = ["Items can be returned within 30 days of delivery. Gift cards cannot be returned. "
       "Refunds are issued to the original payment method within 5 business days."]
Q = "Can gift cards be returned?"


@pytest.fixture(scope="module")
def guard() -> Iterator[Guard]:
    g = Guard(Evaluator(nli=NLIScorer(default_nli_model())), Policy(action="block"))
    yield g
    g.close()


@pytest.mark.parametrize("mark", ["\u20e5", "\u20d2", "\u20eb"], ids=lambda m: f"U+{ord(m):04X}")
def test_a_negation_struck_with_a_symbol_overlay_is_blocked(guard: Guard, mark: str) -> None:
    answer = "Gift cards can" + struck("not", mark) + " be returned."
    verdict = guard.check(Q, CTX, answer)
    assert verdict.action == "block" and verdict.outcome == "failed", verdict.reasons
    assert verdict.response == answer  # the client would have received the text as sent
    assert guard.check(Q, CTX, "Gift cards cannot be returned.").action == "pass"
