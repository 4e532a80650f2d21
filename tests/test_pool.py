"""The forward-pass pool: the same scores as passes in the caller's thread, oldest check first, errors to the caller."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from guardrail.checks.evaluator import Evaluator
from guardrail.errors import ConfigurationError
from guardrail.scorers.embedding import EmbeddingScorer
from guardrail.scorers.nli import NLIScorer, default_nli_model
from guardrail.scorers.pool import ForwardPool, check_priority

CONTEXTS = [
    "Items can be returned within 30 days of delivery. Refunds go to the original payment method.",
    "Gift cards and final-sale items cannot be returned. Opened electronics carry a 15% restocking fee.",
    "Standard shipping is free on orders over $50 and takes 3 to 5 business days.",
]
ANSWERS = [
    "You can return items within 30 days. Gift cards cannot be returned.",
    "Gift cards can be returned within 90 days. Shipping is always free.",
    "Refunds go to the original payment method. Opened electronics carry a restocking fee of 15%.",
]


def test_pooled_scores_equal_unpooled_scores_bit_for_bit_under_concurrency() -> None:
    """The shipped int8 models, every text in its own pass: the pool (one thread per pass, passes side by side, many
    checks at once) changes no score, not even in the last bit."""
    plain = Evaluator(nli=NLIScorer(default_nli_model(), cache_size=0), embedder=EmbeddingScorer(cache_size=0))
    pool = ForwardPool(workers=2)
    pooled = Evaluator(nli=NLIScorer(default_nli_model(), cache_size=0, pool=pool),
                       embedder=EmbeddingScorer(cache_size=0, pool=pool))
    q = "What is the return policy?"
    expected = [plain.evaluate(q, CONTEXTS, a) for a in ANSWERS]
    got: dict[int, object] = {}
    barrier = threading.Barrier(9)

    def one(i: int) -> None:
        barrier.wait()
        got[i] = pooled.evaluate(q, CONTEXTS, ANSWERS[i % 3])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 9
    for i, ev in got.items():
        want = expected[i % 3]
        assert [s.entailment for s in ev.faithfulness.sentences] == [s.entailment for s in want.faithfulness.sentences]  # type: ignore[attr-defined]
        assert ev.faithfulness.score == want.faithfulness.score  # type: ignore[attr-defined]
        assert ev.retrieval == want.retrieval and ev.response_relevance == want.response_relevance  # type: ignore[attr-defined]
    assert pool.passes > 0  # the passes went through the pool
    a, b = EmbeddingScorer(cache_size=0), EmbeddingScorer(cache_size=0, pool=pool)
    np.testing.assert_array_equal(a.embed(CONTEXTS + ANSWERS), b.embed(CONTEXTS + ANSWERS))
    pool.close()


class _Recorder:
    """A backend whose first pass waits for a signal, so the queue fills up behind it; records the order of passes."""

    def __init__(self) -> None:
        self.order: list[str] = []
        self.gate = threading.Event()
        self.started = threading.Event()

    def run(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        tag = str(inputs["tag"][0])
        if tag == "blocker":
            self.started.set()
            self.gate.wait(10)
        self.order.append(tag)
        if tag.startswith("boom"):
            raise RuntimeError(f"pass {tag} failed")
        return np.zeros((1, 3), dtype=np.float32)


def _feed(tag: str) -> dict[str, np.ndarray]:
    return {"tag": np.array([tag])}


def test_the_oldest_check_goes_first_and_outputs_come_back_in_order() -> None:
    pool = ForwardPool(workers=1)
    backend = _Recorder()
    blocker = threading.Thread(target=pool.run_all, args=(backend, [_feed("blocker")]))
    blocker.start()
    assert backend.started.wait(5)
    results: dict[str, list[np.ndarray]] = {}

    def check(name: str, started: float, n: int) -> None:
        with check_priority(started):
            results[name] = pool.run_all(backend, [_feed(f"{name}{i}") for i in range(n)])

    late = threading.Thread(target=check, args=("late", 200.0, 3))
    late.start()
    time.sleep(0.1)  # the late check's passes are queued first...
    early = threading.Thread(target=check, args=("early", 100.0, 2))
    early.start()
    time.sleep(0.1)
    backend.gate.set()  # ...but the check that started earlier runs first
    for t in (blocker, late, early):
        t.join(10)
    assert backend.order == ["blocker", "early0", "early1", "late0", "late1", "late2"]
    assert len(results["late"]) == 3 and len(results["early"]) == 2
    pool.close()


def test_a_failed_pass_reaches_its_caller_and_not_the_others() -> None:
    pool = ForwardPool(workers=2)
    backend = _Recorder()
    backend.gate.set()
    with pytest.raises(RuntimeError, match="pass boom1 failed"):
        pool.run_all(backend, [_feed("ok0"), _feed("boom1"), _feed("ok2")])
    assert len(pool.run_all(backend, [_feed("ok3"), _feed("ok4")])) == 2  # the pool keeps serving
    pool.close()
    with pytest.raises(RuntimeError, match="closed"):
        pool.run_all(backend, [_feed("ok5")])


def test_an_error_in_the_side_by_side_relevance_check_reaches_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    pool = ForwardPool(workers=2)
    embedder = EmbeddingScorer(pool=pool)
    ev = Evaluator(nli=NLIScorer(default_nli_model(), pool=pool), embedder=embedder)

    def broken(texts: object) -> np.ndarray:
        raise RuntimeError("embedding backend went away")

    monkeypatch.setattr(embedder, "embed", broken)
    with pytest.raises(RuntimeError, match="embedding backend went away"):
        ev.evaluate("What is the return policy?", CONTEXTS, ANSWERS[0])
    pool.close()


def test_bad_pool_settings_are_refused(tiny_nli: Path) -> None:
    for workers in (0, -1, 1.5, True):
        with pytest.raises(ConfigurationError, match="whole number"):
            ForwardPool(workers=workers)  # type: ignore[arg-type]
    pool = ForwardPool(workers=1)
    with pytest.raises(ConfigurationError, match="not both"):
        NLIScorer(tiny_nli, pool=pool, micro_batch=True)
    with pytest.raises(ConfigurationError, match="not both"):
        EmbeddingScorer(pool=pool, micro_batch=True)
