"""Guard: scores an answer with the evaluator, decides with the policy, reports to an observer.

>>> guard = Guard(Evaluator(nli=NLIScorer(default_nli_model())), Policy(action="block"))   # doctest: +SKIP
>>> verdict = guard.check(question, contexts, answer)                                      # doctest: +SKIP
>>> verdict.action, verdict.reasons                                                         # doctest: +SKIP
('block', ('sentence 2 "The refund window is 60 days." is not supported by the retrieved passages (...)',))

``acheck`` runs the scoring in a worker thread, never on the event loop. ``stream`` checks a
streamed answer sentence by sentence (see :class:`guardrail.stream.StreamGuard`).
"""

from __future__ import annotations

import dataclasses
import logging
import sys
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from guardrail.checks.abandon import abandonable
from guardrail.checks.evaluator import Evaluation, Evaluator
from guardrail.decision import decide
from guardrail.errors import (
    GuardrailError,
    InputError,
    OverloadedError,
    RemoteScorerError,
    UncheckableError,
    UnreadableError,
)
from guardrail.policy import Action, Policy
from guardrail.verdict import Scores, Timings, Verdict

if TYPE_CHECKING:
    from guardrail.stream.check import StreamGuard

__all__ = ["Guard", "GuardObserver", "MultiObserver", "decide"]

logger = logging.getLogger("guardrail")
T = TypeVar("T")


#: a check of at most this many characters (the answer and its contexts together) runs in the quick lane
#: (``Guard(quick_workers=...)``): a typical RAG request (an answer over 10-20k characters of chunks) checks in well
#: under a second
QUICK_CHARS = 20_000


def _size(contexts: Sequence[str], response: str) -> int:
    return len(response) + sum(len(c) for c in contexts if isinstance(c, str))


class GuardObserver(Protocol):
    """What the guard reports to (``guardrail.telemetry.Telemetry`` implements it)."""

    def track(self) -> AbstractContextManager[None]: ...

    def observe(self, verdict: Verdict) -> None: ...

    def error(self, reason: str) -> None: ...


class MultiObserver:
    """Several observers as one (e.g. Prometheus ``Telemetry`` and an OpenTelemetry ``OTelObserver``)."""

    def __init__(self, *observers: GuardObserver) -> None:
        self.observers = observers

    def track(self) -> AbstractContextManager[None]:
        from contextlib import ExitStack

        stack = ExitStack()
        for o in self.observers:
            stack.enter_context(o.track())
        return stack  # type: ignore[return-value]

    def observe(self, verdict: Verdict) -> None:
        for o in self.observers:
            o.observe(verdict)

    def error(self, reason: str) -> None:
        for o in self.observers:
            o.error(reason)


class Guard:
    """Checks answers against their contexts and applies a :class:`Policy`.

    ``observer`` receives every verdict (e.g. ``Telemetry``); ``max_workers`` bounds concurrent
    scoring threads (a check that overruns its latency budget keeps its thread until it ends).
    ``max_pending`` bounds the checks admitted and not yet finished (running or queued): past it a new answer is
    refused at once with :class:`OverloadedError` (counted as ``reason="overload"``, handled by ``on_error``;
    the gateway answers 503 with ``Retry-After``) instead of waiting behind an unbounded queue. The bound is applied
    when an answer's checking starts: a stream that was admitted (its first check went through) has its later
    sentences checked whatever the count, since what it already delivered cannot be taken back (the soak benchmark
    withheld 1.2% of its streams mid-way when every sentence was admitted on its own).
    """

    def __init__(
        self,
        evaluator: Evaluator,
        policy: Policy | None = None,
        *,
        observer: GuardObserver | None = None,
        max_workers: int = 4,
        quick_workers: int = 2,
        max_pending: int = 64,
        tap: Callable[[str, Sequence[str], str], object] | None = None,
    ) -> None:
        if max_pending < 1:
            raise InputError(f"max_pending must be >= 1, got {max_pending}")
        self.evaluator = evaluator
        policy = policy or Policy()
        if policy.faithfulness == "auto":  # the model's own calibrated threshold
            check = evaluator.faithfulness_check
            try:
                threshold = check.threshold if check is not None else 0.5
            except GuardrailError as exc:  # a model that does not load fails every check (on_error), not the set-up
                logger.error("guardrail: could not read the NLI model's threshold (%s); using 0.5", exc)
                threshold = 0.5
            policy = dataclasses.replace(policy, faithfulness=threshold)
        self.policy = policy
        missing = set(self.policy.checks) - set(evaluator.checks)
        if missing:
            raise InputError(f"the policy thresholds {sorted(missing)} need checks the evaluator does not run: "
                             f"build it with Evaluator(checks={list(self.policy.checks)})")
        self.observer = observer
        #: called with (question, contexts, answer) of every checked answer; must not block (e.g. ShadowJudge.submit)
        self.tap = tap
        self.max_pending = max_pending
        self._pending = 0
        self._pending_lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="guardrail-check")
        # small checks have lanes of their own: a few heavy answers (long answers over long contexts, seconds to
        # minutes each) took every worker and a one-sentence check waited 37 s behind them (round 57); in its lane it
        # shares the CPU with them instead of queueing
        self._quick = ThreadPoolExecutor(max_workers=quick_workers, thread_name_prefix="guardrail-quick") \
            if quick_workers > 0 else None
        #: each running job's abandon event (:meth:`_abandon`), for as long as its future lives
        self._jobs: weakref.WeakKeyDictionary[Future[Any], threading.Event] = weakref.WeakKeyDictionary()

    def _submit(self, fn: Callable[..., T], *args: Any, admitted: bool = False, size: int | None = None) -> Future[T]:
        """Admission control: run ``fn`` in the worker pool unless ``max_pending`` checks are already pending
        (``admitted``: part of an answer already admitted, e.g. a stream's next sentence; counted, never refused)."""
        with self._pending_lock:
            if not admitted and self._pending >= self.max_pending:
                raise OverloadedError(f"{self._pending} checks are pending (max_pending={self.max_pending}); "
                                      "retry shortly, or add capacity")
            self._pending += 1
        event = threading.Event()
        try:
            quick = self._quick is not None and size is not None and size <= QUICK_CHARS
            future = (self._quick if quick and self._quick is not None else self._executor).submit(
                abandonable, event, fn, *args)
        except BaseException:
            self._release()
            raise
        future.add_done_callback(self._release)
        self._jobs[future] = event
        return future

    def _abandon(self, future: Future[Any]) -> None:
        """Nobody waits for this job any more: dropped if it has not started, stopped at its next step otherwise."""
        future.cancel()
        event = self._jobs.get(future)
        if event is not None:
            event.set()

    def _release(self, _: object = None) -> None:
        with self._pending_lock:
            self._pending -= 1

    def close(self) -> None:
        for event in list(self._jobs.values()):
            event.set()  # running checks stop at their next step
        self._executor.shutdown(wait=False, cancel_futures=True)
        if self._quick is not None:
            self._quick.shutdown(wait=False, cancel_futures=True)

    # ----------------------------------------------------------------- one answer
    def _evaluate(self, question: str, contexts: Sequence[str], response: str) -> Evaluation:
        # block / fallback with "any": the first failing sentence decides, so reading stops there (a long answer whose
        # first sentence fails costs one group of sentences, not the whole answer); pass / flag read every sentence
        stop = self.policy.faithfulness if self.policy.action in ("block", "fallback") and \
            self.policy.aggregate == "any" else None
        return self.evaluator.evaluate(question, contexts, response, checks=self.policy.checks, context_relevancy=False,
                                       stop_below=stop)

    def tracking(self) -> AbstractContextManager[None]:
        """Counts a check as running (``guardrail_checks_in_flight``) while inside: a whole answer's check, or one
        scoring call of a stream."""
        return self.observer.track() if self.observer is not None else nullcontext()

    def check(
        self,
        question: str,
        contexts: Sequence[str],
        response: str,
        *,
        time_to_first_token: float | None = None,
        generation: float | None = None,
    ) -> Verdict:
        start = time.perf_counter()
        with self.tracking():
            future: Future[Evaluation] | None = None
            try:
                self.evaluator.validate(question, contexts, response)  # refused before any model work
                future = self._submit(self._evaluate, question, contexts, response, size=_size(contexts, response))
                evaluation = future.result(timeout=self.policy.latency_budget_s)
            except BaseException as exc:  # noqa: BLE001 - turned into an explicit, counted verdict
                if future is not None:
                    self._abandon(future)  # over its budget (or interrupted): its thread stops at its next step
                if not isinstance(exc, Exception):
                    raise
                return self._error_verdict(exc, response, start, time_to_first_token, generation)
        verdict = decide(self.policy, evaluation, response, Timings(time.perf_counter() - start, time_to_first_token, generation))
        return self._tap(question, contexts, self._finish(verdict))

    async def acheck(
        self,
        question: str,
        contexts: Sequence[str],
        response: str,
        *,
        time_to_first_token: float | None = None,
        generation: float | None = None,
    ) -> Verdict:
        """As :meth:`check`; scoring runs in the guard's worker threads, the event loop stays free."""
        import asyncio  # here, not at the top: a sync-only cold start need not pay for it (~15 ms)

        start = time.perf_counter()
        loop = asyncio.get_running_loop()
        with self.tracking():
            future: Future[Evaluation] | None = None
            try:
                self.evaluator.validate(question, contexts, response)  # refused before any model work
                future = self._submit(self._evaluate, question, contexts, response, size=_size(contexts, response))
                evaluation = await asyncio.wait_for(asyncio.wrap_future(future, loop=loop), self.policy.latency_budget_s)
            except BaseException as exc:  # noqa: BLE001 - turned into an explicit, counted verdict
                if future is not None:
                    # over its budget, or cancelled (the client went away): its thread stops at its next step
                    self._abandon(future)
                if not isinstance(exc, Exception):
                    raise
                return self._error_verdict(exc, response, start, time_to_first_token, generation)
        verdict = decide(self.policy, evaluation, response, Timings(time.perf_counter() - start, time_to_first_token, generation))
        return self._tap(question, contexts, self._finish(verdict))

    def stream(self, question: str, contexts: Sequence[str], *, echo: str = "") -> StreamGuard:
        """A sentence-by-sentence checker for a streamed answer (hold-back in block/fallback mode); ``echo``: the
        caller's own prompt, which the answer repeats before its text (a legacy completion with ``echo: true``)."""
        from guardrail.stream.check import StreamGuard

        return StreamGuard(self, question, contexts, echo=echo)

    # ----------------------------------------------------------------- for stream checkers
    def score(self, fn: Callable[..., T], *args: Any, admitted: bool = False, size: int | None = None) -> T:
        """Run one scoring call in the guard's worker threads within the latency budget (raises on overrun).
        The entry point for checkers that score piece by piece (streams); they decide with :func:`decide`.
        Admission control applies unless ``admitted`` (the answer this call belongs to was admitted before)."""
        future = self._submit(fn, *args, admitted=admitted, size=size)
        try:
            return future.result(timeout=self.policy.latency_budget_s)
        except BaseException:
            self._abandon(future)  # over the budget: its thread stops at its next step
            raise

    def start(self, fn: Callable[..., T], *args: Any, admitted: bool = False) -> Future[T]:
        """Start one scoring call in the guard's worker threads and return at once (admission control applies
        unless ``admitted``: :class:`OverloadedError` when ``max_pending`` checks are pending). For work whose inputs
        are known before the answer is, e.g. a stream's retrieval check while the model writes its first sentence."""
        return self._submit(fn, *args, admitted=admitted)

    def report(self, verdict: Verdict, question: str | None = None, contexts: Sequence[str] | None = None) -> Verdict:
        """Hand a verdict made outside :meth:`check` (e.g. by a stream checker) to the observer (and, given the
        question and contexts, to the tap)."""
        verdict = self._finish(verdict)
        return self._tap(question, contexts, verdict) if question is not None and contexts is not None else verdict

    def error_verdict(self, exc: BaseException, response: str, *, timings: Timings) -> Verdict:
        """The verdict (not yet reported) for a scoring failure, per the policy's ``on_error``; logged and counted."""
        reason, message = self.classify(exc)
        exc_info = exc if reason == "exception" else None  # a traceback only for the unexpected
        logger.error("guardrail check failed (%s, %s): %s", reason, self.policy.on_error, message, exc_info=exc_info)
        if self.observer is not None:
            self.observer.error(reason)
        action: Action = self.policy.action if self.policy.on_error == "fail_closed" else "pass"
        shown = getattr(exc, "shown", None)
        return Verdict(action, "error", Scores(),
                       (f"scoring failed ({reason}): {message}; applied {self.policy.on_error}",), (), timings,
                       error=message, response=response, error_reason=reason,
                       wire_reasons=None if shown is None else
                       (f"scoring failed ({reason}): {shown}; applied {self.policy.on_error}",), wire_error=shown)

    # ----------------------------------------------------------------- internals
    def classify(self, exc: BaseException) -> tuple[str, str]:
        """(reason, message) of a scoring failure; reasons are the bounded metric label values."""
        asyncio = sys.modules.get("asyncio")  # never imported: no asyncio timeout can have been raised
        timeouts = (FutureTimeout, TimeoutError) + ((asyncio.TimeoutError,) if asyncio is not None else ())
        if isinstance(exc, timeouts):
            return "timeout", f"check exceeded the latency budget of {self.policy.latency_budget_s}s"
        if isinstance(exc, OverloadedError):
            return "overload", str(exc)
        if isinstance(exc, RemoteScorerError):
            return "scorer", str(exc)
        if isinstance(exc, UnreadableError):
            return "unreadable", str(exc)
        if isinstance(exc, UncheckableError):
            return "uncheckable", str(exc)
        if isinstance(exc, InputError):
            return "input", str(exc)
        return "exception", f"{type(exc).__name__}: {exc}"

    def _finish(self, verdict: Verdict) -> Verdict:
        if self.observer is not None:
            self.observer.observe(verdict)
        return verdict

    def _tap(self, question: str, contexts: Sequence[str], verdict: Verdict) -> Verdict:
        if self.tap is not None and verdict.outcome != "error":
            try:
                self.tap(question, contexts, verdict.response)
            except Exception:  # noqa: BLE001 - a tap never breaks the answer
                logger.exception("guardrail: the tap failed")
        return verdict

    def _error_verdict(
        self,
        exc: BaseException,
        response: str,
        start: float,
        ttft: float | None,
        generation: float | None,
    ) -> Verdict:
        timings = Timings(time.perf_counter() - start, ttft, generation)
        return self._finish(self.error_verdict(exc, response, timings=timings))
