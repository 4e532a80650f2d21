"""Shadow judging: a sampled share of live answers is judged by an LLM in the background.

The answer is never delayed: ``submit`` only puts the sample on a bounded queue (or drops it when the queue is
full, counting the drop) and returns. Worker threads run the metrics and hand each score to ``on_score`` (the gateway
records them in Prometheus with a ``judge`` label). Sampling is deterministic per call order with a seeded RNG, so a
test can rely on it; ``rate=1.0`` judges everything.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
from collections.abc import Callable, Sequence
from typing import Any

from guardrail.judge.client import Judge, JudgeError
from guardrail.judge.metrics import METRICS, NEEDS_EMBEDDER, Sample

logger = logging.getLogger("guardrail")

_STOP = object()


class ShadowJudge:
    """Background LLM judging of sampled answers (bounded queue, drops counted, never blocks the caller)."""

    def __init__(
        self,
        judge: Judge,
        metrics: Sequence[str] = ("context_adherence",),
        *,
        rate: float = 0.1,
        max_queue: int = 100,
        workers: int = 2,
        embedder: Any = None,
        on_score: Callable[[str, float], None] | None = None,
        on_drop: Callable[[], None] | None = None,
        on_error: Callable[[str], None] | None = None,
        seed: int = 0,
        metric_kwargs: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        unknown = [m for m in metrics if m not in METRICS]
        if unknown:
            raise ValueError(f"unknown shadow metrics {unknown}; choose from {', '.join(METRICS)}")
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"the shadow sampling rate must be within 0..1, got {rate}")
        self.judge = judge
        self.metrics = tuple(metrics)
        self.rate = rate
        self.embedder = embedder
        self.on_score = on_score
        self.on_drop = on_drop
        self.on_error = on_error
        self.metric_kwargs = metric_kwargs or {}
        self.dropped = 0
        self.judged = 0
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=max_queue)
        self._threads = [threading.Thread(target=self._work, name=f"guardrail-shadow-{i}", daemon=True)
                         for i in range(workers)]
        for t in self._threads:
            t.start()

    def submit(self, question: str, contexts: Sequence[str], answer: str) -> bool:
        """Maybe queue this answer for judging; True when queued. Never blocks."""
        with self._lock:
            if self._rng.random() >= self.rate:
                return False
        try:
            self._queue.put_nowait(Sample(question, list(contexts), answer))
        except queue.Full:
            with self._lock:
                self.dropped += 1
            if self.on_drop is not None:
                self.on_drop()
            return False
        return True

    def join(self) -> None:
        """Wait until everything queued was judged (tests, shutdown)."""
        self._queue.join()

    def close(self) -> None:
        for _ in self._threads:
            self._queue.put(_STOP)
        for t in self._threads:
            t.join(10)

    def _work(self) -> None:
        while True:
            sample = self._queue.get()
            try:
                if sample is _STOP:
                    return
                self._judge(sample)
            finally:
                self._queue.task_done()

    def _judge(self, sample: Sample) -> None:
        for name in self.metrics:
            kwargs = dict(self.metric_kwargs.get(name, {}))
            if name in NEEDS_EMBEDDER:
                kwargs.setdefault("embedder", self.embedder)
            try:
                result = METRICS[name](self.judge, sample, **kwargs)
            except (JudgeError, Exception) as exc:  # noqa: BLE001 - a shadow failure never reaches the caller
                logger.warning("shadow judge %s failed: %s", name, exc)
                if self.on_error is not None:
                    self.on_error(name)
                continue
            if result.score is not None and self.on_score is not None:
                self.on_score(name, result.score)
        with self._lock:
            self.judged += 1
