from __future__ import annotations

import pytest

from guardrail.checks.evaluator import Evaluator
from guardrail.checks.relevance import (
    RelevanceCheck,
    RelevanceConfig,
    context_precision,
)
from guardrail.errors import ConfigurationError
from guardrail.scorers.embedding import EmbeddingScorer


@pytest.fixture(scope="module")
def check() -> RelevanceCheck:
    return RelevanceCheck(EmbeddingScorer())


@pytest.mark.parametrize(
    ("relevant", "expected"),
    [([True, False, True], (1 + 2 / 3) / 2), ([False, True], 0.5), ([False, False], 0.0), ([True, True], 1.0), ([], 0.0)],
)
def test_context_precision(relevant: list[bool], expected: float) -> None:
    assert context_precision(relevant) == pytest.approx(expected)


def test_relevant_chunk_scores_above_irrelevant(check: RelevanceCheck) -> None:
    q = "How long do I have to return a product for a refund?"
    chunks = [
        "Our office dog is called Biscuit and loves tennis balls.",
        "You can return any product within 30 days of delivery for a full refund.",
        "The cafeteria serves lunch from noon until 2 pm.",
    ]
    r = check.retrieval(q, chunks)
    scores = [c.score for c in r.chunks]
    assert scores[1] == max(scores) == r.top
    assert r.first == scores[0]
    assert [c.relevant for c in r.chunks] == [False, True, False]
    assert r.context_precision == pytest.approx(0.5)
    assert 0.0 < r.context_relevancy < 1.0


def test_long_chunk_is_judged_by_its_relevant_window(check: RelevanceCheck) -> None:
    q = "What is the boiling point of water at sea level?"
    filler = "The annual report lists the names of all board members and their committees. " * 60
    long_chunk = filler + "Water boils at 100 degrees Celsius at sea level."
    r = check.retrieval(q, [long_chunk, filler])
    # measured 0.196 over the filler alone (onnxruntime 1.32, int8 MiniLM): the relevant window decides the chunk
    assert r.chunks[0].score > r.chunks[1].score + 0.15


def test_response_relevance_and_answer_similarity(check: RelevanceCheck) -> None:
    q = "What is the capital of France?"
    on_topic = check.response(q, "The capital of France is Paris.")
    off_topic = check.response(q, "Bananas are a good source of potassium.")
    assert on_topic is not None and off_topic is not None and on_topic > off_topic + 0.3
    assert check.answer_similarity("Paris is the capital.", "The capital is Paris.") > 0.8
    assert check.response("", "x") is None


def test_evaluator_without_nli_runs_relevance_only() -> None:
    ev = Evaluator(checks=["retrieval_relevance", "response_relevance"])
    r = ev.evaluate("Where is the tower?", ["The Eiffel Tower is in Paris."], "In Paris.", ground_truth="Paris")
    assert r.faithfulness is None and r.retrieval is not None and r.answer_similarity is not None
    d = r.to_dict()
    assert d["faithfulness"] is None and d["retrieval_relevance"] == r.retrieval.top
    with pytest.raises(ConfigurationError, match="needs an NLI model"):
        Evaluator()
    with pytest.raises(ConfigurationError, match="unknown checks"):
        Evaluator(checks=["toxicity"])
    with pytest.raises(ConfigurationError, match="chunk_threshold"):
        RelevanceConfig(chunk_threshold=2.0)


def test_response_relevance_time_is_its_own() -> None:
    from guardrail.checks.evaluator import Evaluator

    ev = Evaluator(checks=["retrieval_relevance", "response_relevance"])
    result = ev.evaluate("How long do returns take?", ["Returns take 30 days."] * 3, "Thirty days.")
    t = result.timings
    assert t.retrieval_relevance > 0 and t.response_relevance > 0
    assert t.retrieval_relevance == pytest.approx(4 * t.response_relevance, rel=1e-2)  # 4 texts vs 1



OPS = ["To rotate database credentials, run `vault rotate db/prod` and then restart the `api-gateway` service. The "
       "`LOG_LEVEL` environment variable accepts DEBUG, INFO, WARNING and ERROR; the default is INFO. Deployments to "
       "production require two approvals in the `#deploys` channel."]


def test_a_short_question_is_scored_against_the_sentence_that_answers_it(check: RelevanceCheck) -> None:
    # the whole chunk covers more than "Do prod deploys need approval?" asks (its window scores under the threshold:
    # 0.18 measured); the guard then reads the chunk's sentences, and the one that answers decides (0.67)
    q = "Do prod deploys need approval?"
    windows_only = check._retrieval(1, [(0, False)], check.embedder.embed([OPS[0]]) @ check.embedder.embed([q])[0],
                                    False)
    assert windows_only.top < check.config.chunk_threshold
    guard_reading, _ = check.evaluate(q, OPS, None, context_relevancy=False)
    assert guard_reading is not None and guard_reading.top >= check.config.chunk_threshold
    assert guard_reading.chunks[0].relevant
    # an off-topic question stays off topic when the sentences are read too
    off, _ = check.evaluate("What is the capital of Peru?", OPS, None, context_relevancy=False)
    assert off is not None and off.top < check.config.chunk_threshold
