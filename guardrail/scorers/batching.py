"""Cross-request micro-batching: one runner thread per model merges the forward passes of concurrent callers.

Without it, every concurrent check runs its own ``session.run`` and N runs of onnxruntime, each with its own intra-op
threads, fight over the same cores. With it, callers hand their padded batch to a queue; the runner takes what is
waiting (up to ``max_batch`` rows, waiting at most ``max_wait_s`` for company), pads the rows to one length, runs the
model once with all cores, and hands each caller its rows back. FIFO, so a long stream cannot starve a short request;
the queue is bounded, so a flood blocks its producers (back-pressure) instead of growing without limit.

>>> backend = MicroBatcher(OnnxBackend(model_dir))                              # doctest: +SKIP
>>> logits = backend.run({"input_ids": ids, "attention_mask": mask})        # doctest: +SKIP
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from guardrail.scorers.backends import Backend, Task, make_backend

_STOP = object()


@dataclass
class _Job:
    inputs: dict[str, np.ndarray]
    future: Future[np.ndarray]

    @property
    def rows(self) -> int:
        return int(next(iter(self.inputs.values())).shape[0])

    @property
    def length(self) -> int:
        return int(next(iter(self.inputs.values())).shape[1])


class MicroBatcher:
    """A :class:`Backend` that merges concurrent ``run`` calls into shared forward passes (thread-safe)."""

    def __init__(self, backend: Backend, *, max_batch: int = 64, max_wait_s: float = 0.002, max_queue: int = 1024,
                 max_padding_ratio: float = 2.0) -> None:
        self.backend = backend
        self.max_batch = max_batch
        self.max_wait_s = max_wait_s
        self.max_padding_ratio = max_padding_ratio
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=max_queue)
        self._held: Any = None
        self._closed = False
        self.forward_passes = 0  # for benchmarks and tests: how many model calls served how many jobs
        self.jobs = 0
        self._thread = threading.Thread(target=self._loop, name="guardrail-batcher", daemon=True)
        self._thread.start()

    def run(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        if self._closed:
            raise RuntimeError("the micro-batcher is closed")
        job = _Job(inputs, Future())
        self._queue.put(job)
        return job.future.result()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._queue.put(_STOP)
            self._thread.join(5)

    # ----------------------------------------------------------------- the runner
    def _next(self, timeout: float | None) -> Any:
        if self._held is not None:
            job, self._held = self._held, None
            return job
        try:
            return self._queue.get(timeout=timeout) if timeout is not None else self._queue.get()
        except queue.Empty:
            return None

    def _loop(self) -> None:
        import time

        while True:
            first = self._next(None)
            if first is _STOP:
                return
            jobs = [first]
            rows = first.rows
            longest = first.length
            tokens = first.rows * first.length
            deadline = time.perf_counter() + self.max_wait_s
            while rows < self.max_batch:
                job = self._next(max(0.0, deadline - time.perf_counter()))
                if job is None:
                    if time.perf_counter() >= deadline:
                        break
                    continue
                if job is _STOP:
                    self._held = job
                    break
                new_longest = max(longest, job.length)
                padded = (rows + job.rows) * new_longest
                if rows + job.rows > self.max_batch or padded > self.max_padding_ratio * (tokens + job.rows * job.length):
                    self._held = job  # goes first in the next pass
                    break
                jobs.append(job)
                rows += job.rows
                longest = new_longest
                tokens += job.rows * job.length
            self._serve(jobs, longest)

    def _serve(self, jobs: list[_Job], longest: int) -> None:
        self.forward_passes += 1
        self.jobs += len(jobs)
        try:
            if len(jobs) == 1:
                out = self.backend.run(jobs[0].inputs)
                jobs[0].future.set_result(out)
                return
            names = list(jobs[0].inputs)
            merged = {}
            for name in names:
                parts = []
                for job in jobs:
                    a = job.inputs[name]
                    pad = longest - a.shape[1]
                    parts.append(np.pad(a, ((0, 0), (0, pad))) if pad else a)  # 0 = [PAD], mask 0, segment 0
                merged[name] = np.concatenate(parts)
            out = self.backend.run(merged)
            start = 0
            for job in jobs:
                piece = out[start : start + job.rows]
                if piece.ndim == 3:  # token outputs: back to the job's own length
                    piece = piece[:, : job.length]
                job.future.set_result(piece)
                start += job.rows
        except BaseException as exc:  # noqa: BLE001 - every waiting caller gets the error
            for job in jobs:
                if not job.future.done():
                    job.future.set_exception(exc)


def scorer_backend(backend: str, model_dir: Path, task: Task, *, onnx_file: str | None, threads: int | None,
                   pooled: bool, micro_batch: bool, batch_size: int) -> Backend:
    """A scorer's backend as the scorers build it: one thread per pass when a ForwardPool runs passes side by side,
    wrapped in a MicroBatcher when asked (rows of different callers share a pass only when ``batch_size`` allows)."""
    built = make_backend(backend, model_dir, task, onnx_file=onnx_file, threads=1 if pooled else threads)
    if not micro_batch:
        return built
    return MicroBatcher(built, max_batch=1 if batch_size == 1 else max(batch_size, 64))
