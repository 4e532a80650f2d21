"""Faithfulness mechanics with a tiny model (128 positions, so windowing is exercised hard)."""

from __future__ import annotations

from pathlib import Path

import pytest

from guardrail.checks.faithfulness import FaithfulnessCheck, FaithfulnessConfig
from guardrail.checks.grounding import context_terms, unsupported_terms
from guardrail.errors import ConfigurationError, InputError
from guardrail.scorers.nli import NLIScorer

LONG_CONTEXT = " ".join(
    f"In year {1900 + i} the village council of Brookfield approved project number {i} for the bridge." for i in range(120)
) + " The secret ingredient of the soup is saffron."


@pytest.fixture(scope="module")
def nli(tiny_nli: Path) -> NLIScorer:
    return NLIScorer(tiny_nli)


def test_long_context_is_windowed_not_truncated_exhaustive(nli: NLIScorer) -> None:
    check = FaithfulnessCheck(nli, FaithfulnessConfig(mode="exhaustive"))
    assert nli.tokenizer.count(LONG_CONTEXT) > 10 * nli.max_length
    r = check.run("", [LONG_CONTEXT], "The soup contains saffron. The bridge was approved.")
    assert r.context_sentences == 121
    assert r.pairs == 121 * 2
    for s in r.sentences:
        assert s.premises_checked == 121


def test_candidates_reach_the_end_of_a_long_context(nli: NLIScorer) -> None:
    from guardrail.checks.premises import ContextIndex, rank_units
    from guardrail.text import content_stems

    tok = nli.tokenizer
    contexts = ["Unrelated opening chunk about weather.", LONG_CONTEXT]
    index = ContextIndex.build(contexts, tok.count_many, tok.offsets, 100)
    units = index.units("candidates", 100, window=1)
    claim = "The secret ingredient of the soup is saffron."
    picked = rank_units(index, units, content_stems(claim), top_k=3)
    assert picked[0].chunk == 1 and picked[0].text.endswith(claim)
    assert index.best_sentence(picked[0], content_stems(claim)).of(LONG_CONTEXT) == claim
    assert all(tok.count(p.text) <= 100 for p in picked)

    r = FaithfulnessCheck(nli, FaithfulnessConfig(top_k=3)).run("", contexts, claim)
    (s,) = r.sentences
    assert s.premises_checked == 3 and r.pairs == 3
    assert contexts[s.premise.chunk][s.premise.start : s.premise.end] == s.premise.text
    assert tok.count(s.premise.text) + tok.count(claim) + 3 <= nli.max_length


def test_oversized_sentence_is_split_into_windows(nli: NLIScorer) -> None:
    giant = " ".join(f"token{i}" for i in range(400)) + "."
    check = FaithfulnessCheck(nli, FaithfulnessConfig(mode="exhaustive"))
    r = check.run("", [giant], "token399 is here.")
    assert r.context_sentences > 1  # the single 400-word sentence became several windows
    assert r.sentences[0].premises_checked == r.context_sentences


def test_long_response_sentence_is_checked_in_pieces(nli: NLIScorer) -> None:
    response = " ".join(f"claim{i}" for i in range(300)) + "."
    r = FaithfulnessCheck(nli).run("", ["A short context."], response)
    assert len(r.sentences) > 1
    assert r.sentences[-1].text.endswith("claim299.")


def test_empty_response_has_no_score(nli: NLIScorer) -> None:
    r = FaithfulnessCheck(nli).run("q?", ["ctx."], "")
    assert r.score is None and r.sentences == ()


def test_no_contexts_means_unsupported(nli: NLIScorer) -> None:
    r = FaithfulnessCheck(nli).run("Where?", [], "It is in Paris. It opened in 1889.")
    assert r.score == 0.0
    assert all(s.supported is False and s.premise is None for s in r.sentences)
    assert r.pairs == 0


def test_short_answer_is_read_with_its_question(nli: NLIScorer) -> None:
    q = "Which city hosted the 2010 summit?"
    auto = FaithfulnessCheck(nli).run(q, ["The 2010 summit took place in Delhi."], "Delhi")
    # this model says no question_context ("auto": short answers with the question); spans are not rebuilt by
    # default (span_claims=False, measured better on HaluEval); span_claims=True rebuilds the statement
    assert auto.sentences[0].hypothesis == f"Q: {q} A: Delhi"
    spans = FaithfulnessCheck(nli, FaithfulnessConfig(span_claims=True)).run(q, ["The 2010 summit took place in Delhi."],
                                                                             "Delhi")
    assert spans.sentences[0].hypothesis == "Delhi hosted the 2010 summit."
    shapeless = FaithfulnessCheck(nli, FaithfulnessConfig(question_context="always")).run(
        "Tell me the host city of the 2010 summit.", ["The 2010 summit took place in Delhi."], "Delhi")
    assert shapeless.sentences[0].hypothesis == "Q: Tell me the host city of the 2010 summit. A: Delhi"
    never = FaithfulnessCheck(nli, FaithfulnessConfig(question_context="never")).run(q, ["x."], "Delhi")
    assert never.sentences[0].hypothesis == "Delhi"
    long = FaithfulnessCheck(nli).run(q, ["x."], "The summit was in Delhi. India was the host.")
    assert all(s.hypothesis == s.text for s in long.sentences)
    # a pronoun is read as what it points at: the subject of the claim before it (round 9)
    pronoun = FaithfulnessCheck(nli).run(q, ["x."], "The summit was in Delhi. It was hosted by India.")
    assert [s.hypothesis for s in pronoun.sentences] == ["The summit was in Delhi.", "The summit was hosted by India."]


def test_filler_sentence_is_not_scored(nli: NLIScorer) -> None:
    r = FaithfulnessCheck(nli).run("q", ["Refunds take 30 days."], "Sure! Refunds take 30 days. Hope this helps!")
    assert [s.checked for s in r.sentences] == [False, True, False]
    assert r.score == r.sentences[1].score


def test_unsupported_terms_find_wrong_numbers_and_names(nli: NLIScorer) -> None:
    ctx = ["Refunds are accepted within 30 days. Contact Maria Lopez in Madrid."]
    r = FaithfulnessCheck(nli).run("", ctx, "The refund window is 60 days. Contact Maria Lopez in Barcelona.")
    assert r.sentences[0].unsupported_terms == ("60",)
    assert r.sentences[1].unsupported_terms == ("barcelona",)
    assert unsupported_terms("It cost $1,200 in March 2020.", context_terms(["The price was 1200 dollars in March 2020."])) == ()


def test_limits_and_bad_input(nli: NLIScorer) -> None:
    check = FaithfulnessCheck(nli)
    with pytest.raises(InputError, match="max_context_chars"):
        check.run("q", ["x" * 1_000_001], "r")
    with pytest.raises(InputError, match="list of strings"):
        check.run("q", "a single string", "r")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="candidates, exhaustive"):
        FaithfulnessConfig(mode="fast")  # type: ignore[arg-type]


def test_candidates_cost_less_than_exhaustive(nli: NLIScorer) -> None:
    response = "The bridge was approved in 1950. The soup contains saffron. Brookfield has a council."
    ex = FaithfulnessCheck(nli, FaithfulnessConfig(mode="exhaustive")).run("", [LONG_CONTEXT], response)
    ca = FaithfulnessCheck(nli, FaithfulnessConfig(mode="candidates")).run("", [LONG_CONTEXT], response)
    assert ca.pairs < ex.pairs / 10
    assert ca.model_tokens < ex.model_tokens
