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

import dataclasses
import re
import time
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, Protocol, TypeVar

import numpy as np

from guardrail.checks.evaluator import CheckTimings, Evaluation
from guardrail.checks.faithfulness import FaithfulnessResult, SentenceEvidence
from guardrail.checks.relevance import RetrievalRelevance
from guardrail.decision import decide, faithfulness_limit, mean_fails, sentence_fails, streams_hold_to_end
from guardrail.errors import UncheckableError, UnreadableError
from guardrail.policy import Action
from guardrail.text import Span, split_sentences
from guardrail.verdict import Scores, Timings, Verdict

if TYPE_CHECKING:
    from guardrail.guard import Guard


class StreamEnd(NamedTuple):
    #: text released by finish() (the checked tail of the answer; "" if the stream was stopped)
    text: str
    verdict: Verdict


#: characters that may end a sentence: only a chunk holding one (or the few characters after one) re-splits the tail
_TERMINATOR = re.compile(r"[.!?…:;\n。！？]")
#: characters after a terminator within which the splitter may still place a boundary there
_SETTLE = 8


class StreamGuard:
    """Per-stream state; one instance per generated answer (not shared between requests).

    Cost is linear in the answer's length however it is chunked: text is split into sentences
    incrementally (only the unchecked tail is re-split, only when a sentence may have ended, and a
    tail longer than ``max_sentence_chars`` without a boundary is checked as one piece), and each
    sentence is scored once. The decision is the guard's (:func:`guardrail.decision.decide`): with ``aggregate="any"`` a
    stream stops at its first unsupported sentence; with ``aggregate="mean"`` a held stream releases nothing before
    the end, where the whole answer is delivered or blocked (a later sentence could pull the mean down).
    """

    def __init__(self, guard: Guard, question: str, contexts: Sequence[str], *, max_sentence_chars: int = 2000) -> None:
        self.guard = guard
        self.policy = guard.policy
        self.question = question
        self.contexts = list(contexts)
        self.hold = self.policy.action in ("block", "fallback")
        self.max_sentence_chars = max_sentence_chars
        self._parts: list[str] = []  # every chunk fed, in order
        self._length = 0
        self._tail = ""  # hold mode: the generated text not yet checked
        self._tail_start = 0  # its offset in the answer
        self._since_terminator: int | None = None  # characters fed since the last terminator in the tail
        self.released = 0
        self.stopped = False
        self._evidence: list[SentenceEvidence] = []
        self._retrieval: RetrievalRelevance | None = None
        self._retrieval_done = False
        self._pairs = 0
        self._tokens = 0
        self._faith_s = 0.0
        self._retr_s = 0.0
        self._stop_reason: tuple[str, str] | None = None
        self._error: BaseException | None = None
        self._failed = False
        self._finished: StreamEnd | None = None
        # hold mode: the retrieval check needs only the question and the chunks, so it starts now and runs while the
        # model writes its first sentence, instead of after it (it is the larger part of the first sentence's wait)
        self._retrieval_started: Future[RetrievalRelevance | None] | BaseException | None = None
        self._retrieval_t0 = time.perf_counter()
        evaluator = guard.evaluator
        if self.hold and self.policy.retrieval_relevance is not None and evaluator.relevance_check is not None:
            try:
                self._retrieval_started = guard.start(self._timed_retrieval)
            except Exception as exc:  # noqa: BLE001 - e.g. overload: raised where the check's result is needed
                self._retrieval_started = exc

    @property
    def text(self) -> str:
        """Everything generated so far."""
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    # ----------------------------------------------------------------- feeding
    def feed(self, chunk: str) -> str:
        """Add generated text; return the text that may be delivered now ("" while held back)."""
        if self.stopped or self._finished is not None or not chunk:
            return ""
        if self.add(chunk):
            return self.release()
        return chunk if not self.hold else ""

    def add(self, chunk: str) -> bool:
        """Cheap part of :meth:`feed` (fine on an event loop): append the text; True when a sentence may have
        ended, so :meth:`release` (which scores; run it in a thread) has work to do. In flag mode always False."""
        if self.stopped or self._finished is not None or not chunk:
            return False
        self._parts.append(chunk)
        self._length += len(chunk)
        if not self.hold:
            self.released = self._length
            return False
        limit = self.guard.evaluator.faithfulness_config.max_response_chars
        if self._length > limit:  # over the limit: unchecked from here, refused before any more model work
            self._error = UncheckableError(
                f"the streamed answer is over {limit:,} characters (max_response_chars); raise the limit to check it")
            self.guard.error_verdict(self._error, "", timings=Timings(0.0))  # log + count now
            if self.policy.on_error == "fail_closed":
                self.stopped = True
                return False
            self.hold = False  # fail_open: delivered unchecked from here on (release() hands out the held tail)
            self._tail += chunk
            return True
        self._tail += chunk
        if streams_hold_to_end(self.policy):
            return False  # decided at the end, on the whole answer
        last = max((m.end() for m in _TERMINATOR.finditer(chunk)), default=None)
        if last is not None:
            self._since_terminator = len(chunk) - last
        elif self._since_terminator is not None:
            self._since_terminator += len(chunk)
            if self._since_terminator > _SETTLE + len(chunk):
                self._since_terminator = None  # the splitter has seen enough after it: no boundary there
        return self._since_terminator is not None or len(self._tail) > self.max_sentence_chars

    def release(self) -> str:
        """Check the sentences completed so far; return the newly released text."""
        if self.stopped:
            return ""
        if not self.hold:  # switched to fail-open delivery: the held tail goes out unchecked
            out, self._tail = self._tail, ""
            self._tail_start = self.released = self._length
            return out
        spans = split_sentences(self._tail)
        complete = spans[:-1]
        if not complete and len(self._tail) > self.max_sentence_chars:
            cut = self._tail.rfind(" ", 0, self.max_sentence_chars)
            complete = [Span(0, cut if cut > 0 else self.max_sentence_chars)]
        return self._check_spans(complete)

    async def afeed(self, chunk: str) -> str:
        """As :meth:`feed`; in hold mode the splitting and scoring run off the event loop."""
        if not self.hold or self.stopped:
            return self.feed(chunk)
        import asyncio  # in the async paths only: sync users' cold start does not pay for asyncio

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
            tail = self._check_spans(split_sentences(self._tail), final=True)
        verdict = self.guard.report(self._verdict(time_to_first_token, generation), self.question, self.contexts)
        self._finished = StreamEnd(tail, verdict)
        return self._finished

    async def afinish(self, *, time_to_first_token: float | None = None, generation: float | None = None) -> StreamEnd:
        import asyncio

        return await asyncio.to_thread(lambda: self.finish(time_to_first_token=time_to_first_token, generation=generation))

    def stop(self, reason: str, check: str) -> None:
        """Stop the stream for a reason found outside the text (e.g. an unreadable upstream event): the answer is
        unchecked from there on, and a hold-mode stream follows ``on_error`` (the caller decides to call this)."""
        self.stopped = True
        self._stop_reason = (check, reason)
        self.guard.error_verdict(UnreadableError(reason), "", timings=Timings(0.0))  # logged and counted

    # ----------------------------------------------------------------- checking
    def _check_spans(self, spans: Sequence[Span], final: bool = False) -> str:
        if streams_hold_to_end(self.policy):
            return self._check_whole(spans, final)
        consumed = 0
        for span in spans:
            sentence = self._tail[span.start : span.end]
            if not self._passes(sentence, self._tail_start + span.start):
                self.stopped = True
                break
            consumed = span.end
        if final and not self.stopped:
            consumed = len(self._tail)  # trailing whitespace
        out = self._tail[:consumed]
        if consumed:
            self._tail = self._tail[consumed:]
            self._tail_start += consumed
            self.released = self._tail_start
        return out

    def _check_whole(self, spans: Sequence[Span], final: bool) -> str:
        """``aggregate="mean"``: nothing is released before the end; there every sentence is scored and the mean
        decides for the whole answer (delivered whole, or blocked whole)."""
        if not final:
            return ""
        for span in spans:
            if not self._passes(self._tail[span.start : span.end], self._tail_start + span.start):
                self.stopped = True
                return ""
        checked = [e.score for e in self._evidence if e.score is not None]
        if mean_fails(self.policy, checked, faithfulness_limit(self.policy, 0.5)):
            self._failed = True
            self.stopped = True
            return ""
        out, self._tail = self._tail, ""
        self._tail_start += len(out)
        self.released = self._tail_start
        return out

    def _passes(self, sentence: str, offset: int) -> bool:
        policy = self.policy
        evaluator = self.guard.evaluator
        try:
            if policy.retrieval_relevance is not None and not self._retrieval_done:
                self._retrieval = self._retrieval_result()
                self._retrieval_done = True
                top = self._retrieval.top if self._retrieval else None
                if top is None or top < policy.retrieval_relevance:
                    self._failed = True
                    return False
            if policy.faithfulness is None or evaluator.faithfulness_check is None:
                return True
            t0 = time.perf_counter()
            evaluator.validate(self.question, self.contexts, sentence)
            result: FaithfulnessResult = self.guard.score(evaluator.faithfulness_check.run, self.question, self.contexts, sentence)
            self._faith_s += time.perf_counter() - t0
        except Exception as exc:  # noqa: BLE001 - logged, counted and applied per on_error at the end
            self._error = exc
            self.guard.error_verdict(exc, sentence, timings=Timings(0.0))  # log + count now
            return self.policy.on_error == "fail_open"
        self._pairs += result.pairs
        self._tokens += result.model_tokens
        ok = True
        for ev in result.sentences:
            ev = dataclasses.replace(ev, index=len(self._evidence), start=offset + ev.start, end=offset + ev.end)
            self._evidence.append(ev)
            if sentence_fails(policy, ev.score, policy.faithfulness):  # type: ignore[arg-type]
                ok = False
                self._failed = True
        return ok

    def _timed_retrieval(self) -> RetrievalRelevance | None:
        t0 = time.perf_counter()
        try:
            return self.guard.evaluator.relevance_check.retrieval(self.question, self.contexts)  # type: ignore[union-attr]
        finally:
            self._retr_s += time.perf_counter() - t0

    def _retrieval_result(self) -> RetrievalRelevance | None:
        started, self._retrieval_started = self._retrieval_started, None
        if isinstance(started, BaseException):
            raise started
        if started is None:
            return self.guard.score(self._timed_retrieval)
        # the latency budget counts from the check's start, as for any other check
        budget = self.policy.latency_budget_s
        remaining = None if budget is None else max(budget - (time.perf_counter() - self._retrieval_t0), 0.0)
        return started.result(timeout=remaining)

    def _verdict(self, ttft: float | None, generation: float | None) -> Verdict:
        """The guard's decision over the checked sentences; scoring errors follow ``on_error`` unless a real
        failure was found, which always wins."""
        timings = Timings(self._faith_s + self._retr_s, ttft, generation)
        response = self.text[: self.released]
        if self._stop_reason is not None:
            check, reason = self._stop_reason
            action: Action = self.policy.action if self.policy.on_error == "fail_closed" else "pass"
            return Verdict(action if self.stopped else "pass", "error", Scores(), (reason,), (), timings,
                           error=reason, response=response)
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
        retrieval = self._retrieval if self._retrieval_done else None
        evaluation = Evaluation(faith, retrieval, None, None, CheckTimings(self._faith_s, self._retr_s, 0.0))
        verdict = decide(self.policy, evaluation, response, timings)
        if self._error is not None and not self._failed:
            reason, message = self.guard.classify(self._error)
            applied: Action = self.policy.action if self.stopped else "pass"
            return dataclasses.replace(
                verdict, action=applied, outcome="error", error=message, error_reason=reason,
                reasons=(f"scoring failed ({reason}): {message}; applied {self.policy.on_error}",),
            )
        return verdict


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
        self.pending: deque[tuple[Item, str]] = deque()  # held items with their text (read once)
        self.budget = 0  # released characters not yet delivered
        self.template: Item | None = None
        self.ttft: float | None = None
        self.checking = 0.0

    def push(self, item: Item) -> list[Item]:
        self.template = item
        try:
            text = self.adapter.content(item)
        except UnreadableError as exc:  # an item the guard cannot read: on_error decides
            if self.stream.policy.on_error == "fail_closed":
                self.stream.stop(str(exc), "format")
                return []
            self.stream.guard.error_verdict(exc, "", timings=Timings(0.0))  # delivered unchecked: logged, counted
            self.pending.append((item, ""))
            return self._drain(final=False)
        if text and self.ttft is None:
            self.ttft = time.perf_counter() - self.start - self.checking
        self.pending.append((item, text))
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
            item, text = self.pending[0]
            finish = a.finish(item)
            if finish is not None and not final:
                break  # the end of the answer goes out only once the whole answer passed
            if len(text) <= self.budget:
                self.budget -= len(text)
                out.append(self.pending.popleft()[0])
                continue
            if split and self.budget > 0:
                piece = a.with_content(item, text[: self.budget], None)
                if piece is not None:  # None: the adapter cannot cut this item (it is not delivered)
                    out.append(piece)
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




class _Gated(Generic[Item]):
    """What both stream drivers hold: the gate, the released items not yet taken, and the verdict once ended."""

    def __init__(self, gate: ReleaseGate[Item], on_verdict: Callable[[Verdict], None] | None) -> None:
        self._gate = gate
        self._on_verdict = on_verdict
        self._out: deque[Item] = deque()
        self._done = False
        self.verdict: Verdict | None = None

    def _ended(self, items: list[Item], verdict: Verdict) -> None:
        self._out.extend(items)
        self.verdict = verdict
        self._done = True
        if self._on_verdict is not None:
            self._on_verdict(verdict)


class GatedStream(_Gated[Item], Iterator[Item]):
    """The one synchronous driver of a guarded stream (a decorated generator, the OpenAI client wrapper): items from
    ``source`` go through ``gate``, the released ones come out in order, ``verdict`` is set once the stream ended.
    ``close`` closes the source; it is called when the guard stops the stream, so generation stops too."""

    def __init__(self, source: Iterable[Item], gate: ReleaseGate[Item], *, close: Callable[[], Any] | None = None,
                 on_verdict: Callable[[Verdict], None] | None = None) -> None:
        super().__init__(gate, on_verdict)
        self._it = iter(source)
        self._close = close

    def __iter__(self) -> "GatedStream[Item]":
        return self

    def __next__(self) -> Item:
        while not self._out:
            if self._done:
                raise StopIteration
            try:
                item = next(self._it)
            except StopIteration:
                self._ended(*self._gate.end())
                continue
            self._out.extend(self._gate.push(item))
            if self._gate.stream.stopped:
                self.close()
                self._ended(*self._gate.end())
        return self._out.popleft()

    def close(self) -> None:
        if self._close is not None:
            self._close()


class AsyncGatedStream(_Gated[Item], AsyncIterator[Item]):
    """:class:`GatedStream` for async sources; in hold mode the checks run in a worker thread, off the event loop."""

    def __init__(self, source: AsyncIterable[Item], gate: ReleaseGate[Item], *,
                 close: Callable[[], Awaitable[Any]] | None = None,
                 on_verdict: Callable[[Verdict], None] | None = None) -> None:
        super().__init__(gate, on_verdict)
        self._it = source.__aiter__()
        self._close = close

    def __aiter__(self) -> "AsyncGatedStream[Item]":
        return self

    async def __anext__(self) -> Item:
        while not self._out:
            if self._done:
                raise StopAsyncIteration
            try:
                item = await self._it.__anext__()
            except StopAsyncIteration:
                self._ended(*await self._gate.aend())
                continue
            if self._gate.stream.hold:
                import asyncio

                self._out.extend(await asyncio.to_thread(self._gate.push, item))
            else:
                self._out.extend(self._gate.push(item))
            if self._gate.stream.stopped:
                await self.aclose()
                self._ended(*await self._gate.aend())
        return self._out.popleft()

    async def aclose(self) -> None:
        if self._close is not None:
            await self._close()
