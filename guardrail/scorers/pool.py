"""A pool of forward-pass workers shared by the scorers of a process: every core busy, earliest check first.

Why not batches: the shipped models are int8 with *dynamic* activation scales (one scale per input tensor), so a
text's scores would move with its batch mates and their padding. Each text therefore runs in a forward pass of its
own (``batch_size=1``). One such pass on two intra-op threads leaves the second core mostly idle on a short text
(a 165-token chunk: ~10k tokens/s on two threads against ~8k on *one*); two passes side by side, each on one thread,
keep both cores at the single-thread rate. Measured on this project's 2-core machine: the embedder at 7.9k tokens/s
per single-threaded pass, and int8 outputs bit-identical whatever the thread count, so the pool changes no score.

A ``ForwardPool`` owns ``workers`` threads (default: the CPU count). The scorers hand it the forward passes of a call
(``run_all``); it runs at most ``workers`` passes at once (each on one intra-op thread: scorers built with a pool
create their sessions with ``threads=1``) and returns the outputs in order. Passes are taken earliest check first
(the priority is the start time of the check, set by :func:`check_priority`; a call outside one uses its own start
time), so under load the oldest request finishes first instead of all of them finishing late together. Thread-safe;
no global state: the pool is made by the application and passed to the scorers that share it.

>>> pool = ForwardPool(workers=2)                                            # doctest: +SKIP
>>> nli = NLIScorer(pool=pool); embedder = EmbeddingScorer(pool=pool)        # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import os
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from guardrail.errors import ConfigurationError
from guardrail.scorers.backends import Backend

__all__ = ["ForwardPool", "check_priority"]

#: start time (time.monotonic) of the check the current thread works for; None outside a check
_PRIORITY: ContextVar[float | None] = ContextVar("guardrail_check_priority", default=None)


@contextlib.contextmanager
def check_priority(started: float | None = None) -> Iterator[float]:
    """Within the block, forward passes are queued with the priority of a check started at ``started`` (default: now;
    an enclosing check's priority is kept, so nested calls of one request stay at its place in the queue)."""
    outer = _PRIORITY.get()
    value = outer if outer is not None else (time.monotonic() if started is None else started)
    token = _PRIORITY.set(value)
    try:
        yield value
    finally:
        _PRIORITY.reset(token)


@dataclass(order=True)
class _Pass:
    priority: float
    seq: int
    backend: Backend = field(compare=False)
    inputs: dict[str, np.ndarray] = field(compare=False)
    future: Future[np.ndarray] = field(compare=False)


class ForwardPool:
    """``workers`` threads that run forward passes, at most one each at a time, oldest check first."""

    def __init__(self, workers: int | None = None) -> None:
        count = workers if workers is not None else (os.cpu_count() or 1)
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ConfigurationError(f"ForwardPool(workers={workers!r}): give a whole number >= 1 (e.g. the CPU count)")
        self.workers = count
        self._heap: list[_Pass] = []
        self._cv = threading.Condition()
        self._seq = itertools.count()
        self._threads: list[threading.Thread] = []
        self._closed = False
        #: forward passes run so far (for benchmarks and tests)
        self.passes = 0

    def run_all(self, backend: Backend, batches: Sequence[dict[str, np.ndarray]]) -> list[np.ndarray]:
        """Run ``backend`` on every input batch, spread over the workers; the outputs in the order of ``batches``.
        The first error of a pass is raised here (after every pass of the call has ended)."""
        if not batches:
            return []
        priority = _PRIORITY.get()
        if priority is None:
            priority = time.monotonic()
        futures: list[Future[np.ndarray]] = []
        with self._cv:
            if self._closed:
                raise RuntimeError("the forward pool is closed")
            self._start()
            for inputs in batches:
                future: Future[np.ndarray] = Future()
                heapq.heappush(self._heap, _Pass(priority, next(self._seq), backend, inputs, future))
                futures.append(future)
            self._cv.notify(len(batches))
        outputs: list[np.ndarray] = []
        error: BaseException | None = None
        for future in futures:
            try:
                outputs.append(future.result())
            except BaseException as exc:  # noqa: BLE001 - wait for the rest, then raise the first
                error = error or exc
        if error is not None:
            raise error
        return outputs

    def close(self) -> None:
        """Stop the workers once the queued passes have run (new calls are refused)."""
        with self._cv:
            self._closed = True
            self._cv.notify_all()
        for thread in self._threads:
            thread.join(5)

    def _start(self) -> None:  # under self._cv
        while len(self._threads) < self.workers:
            thread = threading.Thread(target=self._work, name=f"guardrail-forward-{len(self._threads)}", daemon=True)
            self._threads.append(thread)
            thread.start()

    def _work(self) -> None:
        while True:
            with self._cv:
                while not self._heap and not self._closed:
                    self._cv.wait()
                if not self._heap:
                    return
                job = heapq.heappop(self._heap)
                self.passes += 1
            if not job.future.set_running_or_notify_cancel():
                continue
            try:
                job.future.set_result(job.backend.run(job.inputs))
            except BaseException as exc:  # noqa: BLE001 - the caller gets it
                job.future.set_exception(exc)

    def __repr__(self) -> str:
        return f"ForwardPool(workers={self.workers})"

    def __getstate__(self) -> Any:  # pragma: no cover - a pool is per process
        raise TypeError("a ForwardPool belongs to one process; make one in each worker process")
