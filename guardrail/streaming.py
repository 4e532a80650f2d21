"""Streaming: check an answer sentence by sentence while it is generated.

- flag / pass policies: every chunk is released at once (time to first token is untouched); the whole
  answer is checked when the stream ends.
- block / fallback policies: a sentence is released only after it passed. The first failing sentence
  stops the stream: nothing of it, or after it, is released.

Released text is always an exact prefix of the generated text (chunks are never rewritten).

>>> s = guard.stream(question, contexts)                      # doctest: +SKIP
>>> for chunk in llm_chunks:                                  # doctest: +SKIP
...     send(s.feed(chunk))
...     if s.stopped: break
>>> end = s.finish(); send(end.text); end.verdict             # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Generic, NamedTuple, Protocol, TypeVar

import numpy as np

from guardrail.checks.evaluator import CheckTimings, Evaluation
from guardrail.checks.faithfulness import FaithfulnessResult, SentenceEvidence
from guardrail.checks.relevance import RetrievalRelevance
from guardrail.errors import InputError
from guardrail.policy import Action
from guardrail.text import split_sentences
from guardrail.verdict import Scores, Timings, Verdict, sentence_reason

if TYPE_CHECKING:
    from guardrail.guard import Guard


class StreamEnd(NamedTuple):
    #: text released by finish() (the checked tail of the answer; "" if the stream was stopped)
    text: str
    verdict: Verdict


class StreamGuard:
    """Per-stream state; one instance per generated answer (not shared between requests)."""

    def __init__(self, guard: Guard, question: str, contexts: Sequence[str]) -> None:
        self.guard = guard
        self.policy = guard.policy
        self.question = question
        self.contexts = list(contexts)
        self.hold = self.policy.action in ("block", "fallback")
        self.text = ""
        self.released = 0
        self._checked_upto = 0
        self.stopped = False
        self._evidence: list[SentenceEvidence] = []
        self._retrieval: RetrievalRelevance | None = None
        self._retrieval_done = False
        self._pairs = 0
        self._tokens = 0
        self._faith_s = 0.0
        self._retr_s = 0.0
        self._failure: tuple[str, ...] = ()
        self._failed_checks: tuple[str, ...] = ()
        self._error: tuple[str, str, BaseException | None] | None = None
        self._started = time.perf_counter()
        self._finished: StreamEnd | None = None

    # ----------------------------------------------------------------- feeding
    def feed(self, chunk: str) -> str:
        """Add generated text; return the text that may be delivered now ("" while held back)."""
        if self.stopped or self._finished is not None:
            return ""
        self.text += chunk
        if not self.hold:
            self.released = len(self.text)
            return chunk
        spans = split_sentences(self.text[self._checked_upto :])
        return self._check_spans(spans[:-1])

    async def afeed(self, chunk: str) -> str:
        """As :meth:`feed`; in hold mode the scoring runs in the guard's worker threads."""
        if not self.hold or self.stopped:
            return self.feed(chunk)
        # a plain worker thread: feed() submits each sentence to the guard's executor with the latency budget
        return await asyncio.to_thread(self.feed, chunk)

    def finish(self, *, time_to_first_token: float | None = None, generation: float | None = None) -> StreamEnd:
        """End of the generation: check what is left and return the final verdict (reported once)."""
        if self._finished is not None:
            return self._finished
        if not self.hold:
            verdict = self.guard.check(self.question, self.contexts, self.text,
                                       time_to_first_token=time_to_first_token, generation=generation)
            self._finished = StreamEnd("", verdict)
            return self._finished
        tail = ""
        if not self.stopped:
            tail = self._check_spans(split_sentences(self.text[self._checked_upto :]), final=True)
        verdict = self._hold_verdict(time_to_first_token, generation)
        self._finished = StreamEnd(tail, self.guard._record(verdict))
        return self._finished

    async def afinish(self, *, time_to_first_token: float | None = None, generation: float | None = None) -> StreamEnd:
        return await asyncio.to_thread(lambda: self.finish(time_to_first_token=time_to_first_token, generation=generation))

    def stop(self, reason: str, check: str) -> None:
        """Stop the stream for a reason found outside the text (e.g. an unreadable upstream event)."""
        self.stopped = True
        self._failure = (reason,)
        self._failed_checks = (check,)

    # ----------------------------------------------------------------- checking
    def _check_spans(self, spans: Sequence[object], final: bool = False) -> str:
        before = self.released
        base = self._checked_upto
        for span in spans:
            start, end = base + span.start, base + span.end  # type: ignore[attr-defined]
            sentence = self.text[start:end]
            if not self._passes(sentence, start):
                self.stopped = True
                break
            self._checked_upto = end
            self.released = end
        if final and not self.stopped:
            self.released = len(self.text)  # trailing whitespace
        return self.text[before : self.released]

    def _run(self, fn, *args):  # type: ignore[no-untyped-def]
        return self.guard._executor.submit(fn, *args).result(timeout=self.policy.latency_budget_s)

    def _passes(self, sentence: str, offset: int) -> bool:
        policy = self.policy
        evaluator = self.guard.evaluator
        try:
            if policy.retrieval_relevance is not None and not self._retrieval_done:
                t0 = time.perf_counter()
                self._retrieval = self._run(evaluator.relevance_check.retrieval, self.question, self.contexts)  # type: ignore[union-attr]
                self._retr_s += time.perf_counter() - t0
                self._retrieval_done = True
                top = self._retrieval.top if self._retrieval else None
                if top is None or top < policy.retrieval_relevance:
                    self._failed_checks = ("retrieval_relevance",)
                    self._failure = (
                        "no passages were retrieved for the question" if top is None else
                        f"no retrieved passage is relevant to the question (best chunk relevance {top:.2f} "
                        f"< {policy.retrieval_relevance:.2f})",
                    )
                    return False
            if policy.faithfulness is None or evaluator.faithfulness_check is None:
                return True
            t0 = time.perf_counter()
            result: FaithfulnessResult = self._run(evaluator.faithfulness_check.run, self.question, self.contexts, sentence)
            self._faith_s += time.perf_counter() - t0
        except (FutureTimeout, TimeoutError):
            return self._on_error("timeout", f"check exceeded the latency budget of {policy.latency_budget_s}s", None)
        except InputError as exc:
            return self._on_error("input", str(exc), exc)
        except Exception as exc:  # noqa: BLE001 - recorded, counted and applied per on_error
            return self._on_error("exception", f"{type(exc).__name__}: {exc}", exc)
        self._pairs += result.pairs
        self._tokens += result.model_tokens
        ok = True
        for ev in result.sentences:
            ev = dataclasses.replace(ev, index=len(self._evidence), start=offset + ev.start, end=offset + ev.end)
            self._evidence.append(ev)
            if ev.score is not None and ev.score < policy.faithfulness:
                ok = False
                self._failed_checks = ("faithfulness",)
                self._failure = (sentence_reason(ev),)
        return ok

    def _on_error(self, reason: str, message: str, exc: BaseException | None) -> bool:
        import logging

        logging.getLogger("guardrail").error("guardrail stream check failed (%s, %s): %s", reason,
                                             self.policy.on_error, message, exc_info=exc)
        if self.guard.observer is not None:
            self.guard.observer.error(reason)
        self._error = (reason, message, exc)
        return self.policy.on_error == "fail_open"

    def _hold_verdict(self, ttft: float | None, generation: float | None) -> Verdict:
        checked = [e.score for e in self._evidence if e.score is not None]
        faith = None
        if self.policy.faithfulness is not None and self._evidence:
            faith = FaithfulnessResult(
                score=float(np.mean(checked)) if checked else None,
                nli_score=float(np.mean([e.entailment for e in self._evidence if e.entailment is not None])) if checked else None,
                calibrated=self.guard.evaluator.faithfulness_check.calibrator is not None,  # type: ignore[union-attr]
                sentences=tuple(self._evidence),
                mode=self.guard.evaluator.faithfulness_config.mode,
                threshold=self.policy.faithfulness,
                pairs=self._pairs,
                model_tokens=self._tokens,
                context_sentences=0,
            )
        evaluation = Evaluation(faith, self._retrieval, None, None, CheckTimings(self._faith_s, self._retr_s, 0.0))
        timings = Timings(self._faith_s + self._retr_s, ttft, generation)
        scores = Scores(faith.score if faith else None, self._retrieval.top if self._retrieval else None, None)
        response = self.text[: self.released]
        if self._error is not None and (self.stopped or self.policy.on_error == "fail_open"):
            reason, message, _ = self._error
            action: Action = self.policy.action if self.stopped else "pass"
            return Verdict(action, "error", scores, (f"scoring failed ({reason}): {message}; applied {self.policy.on_error}",),
                           (), timings, error=message, response=response, evaluation=evaluation)
        if self.stopped:
            return Verdict(self.policy.action, "failed", scores, self._failure, self._failed_checks, timings,
                           response=response, evaluation=evaluation)
        return Verdict("pass", "passed", scores, (), (), timings, response=response, evaluation=evaluation)


Item = TypeVar("Item")


class ChunkAdapter(Protocol[Item]):
    """How a :class:`ReleaseGate` reads and rewrites one kind of stream item (an SDK chunk, an SSE event)."""

    def content(self, item: Item) -> str: ...

    def finish(self, item: Item) -> str | None: ...

    def with_content(self, item: Item, text: str | None, finish: str | None) -> Item: ...

    def stop_item(self, template: Item | None, text: str | None, verdict: Verdict) -> list[Item]: ...


class ReleaseGate(Generic[Item]):
    """Sans-IO: which stream items may be delivered, given what the :class:`StreamGuard` released.

    Items are held in order and go out unchanged once all their text is released; the item that
    carries the finish reason only once the whole answer passed. A stopped stream delivers the
    released part of the item in which the last passed sentence ends, then the adapter's stop items
    (e.g. a ``finish_reason="content_filter"`` chunk).
    """

    def __init__(self, stream: StreamGuard, adapter: ChunkAdapter[Item], start: float) -> None:
        self.stream = stream
        self.adapter = adapter
        self.start = start
        self.pending: deque[Item] = deque()
        self.budget = 0  # released characters not yet delivered
        self.template: Item | None = None
        self.ttft: float | None = None
        self.checking = 0.0

    def push(self, item: Item) -> list[Item]:
        self.template = item
        text = self.adapter.content(item)
        if text and self.ttft is None:
            self.ttft = time.perf_counter() - self.start - self.checking
        self.pending.append(item)
        if text:
            t0 = time.perf_counter()
            self.budget += len(self.stream.feed(text))
            self.checking += time.perf_counter() - t0
        return self._drain(final=False)

    def _drain(self, final: bool, split: bool = False) -> list[Item]:
        """Deliver the held items whose text is all released, unchanged (a passing answer goes out byte
        for byte). ``split`` (only when a stopped stream closes) also delivers the released part of the
        item in which the last passed sentence ends."""
        a = self.adapter
        out: list[Item] = []
        while self.pending:
            item = self.pending[0]
            text = a.content(item)
            finish = a.finish(item)
            if finish is not None and not final:
                break  # the end of the answer goes out only once the whole answer passed
            if len(text) <= self.budget:
                self.budget -= len(text)
                out.append(self.pending.popleft())
                continue
            if split and self.budget > 0:
                out.append(a.with_content(item, text[: self.budget], None))
                self.budget = 0
            break
        return out

    def end(self) -> tuple[list[Item], Verdict]:
        generation = time.perf_counter() - self.start - self.checking
        end = self.stream.finish(time_to_first_token=self.ttft, generation=generation)
        return self._close(end.text, end.verdict), end.verdict

    async def aend(self) -> tuple[list[Item], Verdict]:
        generation = time.perf_counter() - self.start - self.checking
        end = await self.stream.afinish(time_to_first_token=self.ttft, generation=generation)
        return self._close(end.text, end.verdict), end.verdict

    def _close(self, tail: str, verdict: Verdict) -> list[Item]:
        self.budget += len(tail)
        if not self.stream.stopped:
            return self._drain(final=True)
        out = self._drain(final=False, split=True)  # whatever was released before the stop
        text = self.stream.policy.fallback_message if verdict.action == "fallback" else None
        return [*out, *self.adapter.stop_item(self.template, text, verdict)]

    def drop_pending(self) -> None:
        self.pending.clear()


