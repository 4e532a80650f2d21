"""Releasing a guarded stream: which items (SDK chunks, SSE events, text chunks) may be delivered, and when.

One releaser for every integration: the middleware and the gateway (SSE events), the OpenAI client wrapper (SDK
chunks) and the ``@guarded`` decorator (text chunks) drive the same :class:`ReleaseGate` through a thin
:class:`ChunkAdapter`. The gate keeps one :class:`~guardrail.stream.check.StreamGuard` per choice of the answer and
an explicit :class:`~guardrail.stream.state.ReleaseState`:

- ``STREAMING`` (flag / pass mode): items go out as they come; the answer is checked at the end.
- ``HOLDING`` (block / fallback mode): items are held in order and go out unchanged once all their text passed; an
  item that ends the answer only once the whole answer passed.
- ``STOPPED``: a choice failed (or the stream could not be read, ``on_error: fail_closed``): the released part of
  the item in which the last passed sentence ends goes out, then the adapter's stop items (e.g. a
  ``finish_reason="content_filter"`` chunk). Every choice's verdict is reported.
- ``FINISHED``: the end went out. An answer delivered in part unchecked (``on_error: fail_open``) has its end item
  marked by the adapter.
"""

from __future__ import annotations

import dataclasses
import time
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from guardrail.errors import UnreadableError
from guardrail.stream.check import StreamGuard
from guardrail.stream.state import ReleaseState
from guardrail.render import render
from guardrail.text import answers_anything
from guardrail.verdict import Timings, Verdict, worst

__all__ = ["AsyncGatedStream", "ChunkAdapter", "GatedStream", "Reading", "ReleaseGate", "ReleaseState"]

Item = TypeVar("Item")
STREAMING, HOLDING, STOPPED, FINISHED = (ReleaseState.STREAMING, ReleaseState.HOLDING, ReleaseState.STOPPED,
                                         ReleaseState.FINISHED)


class Reading(NamedTuple):
    """What one stream item holds, as its adapter reads it."""

    #: the text the item adds to each choice of the answer (choice index -> text)
    texts: Mapping[int, str]
    #: the item ends the answer (or a choice of it): in hold mode it goes out only once the whole answer passed
    ends: bool = False
    #: choices to which the item adds text the guard does not check but a client may show (a reasoning trace): in
    #: hold mode it goes out only once that choice's answer shows something (:meth:`ChunkAdapter.shows`) and some of
    #: it passed; a choice whose answer shows nothing by the end is unreadable (an answer made of a trace alone)
    traces: frozenset[int] = frozenset()


class ChunkAdapter(Protocol[Item]):
    """How a :class:`ReleaseGate` reads and rewrites one kind of stream item (an SDK chunk, an SSE event, text)."""

    def read(self, item: Item) -> Reading:
        """The item's text per choice; :class:`UnreadableError` for an item it cannot read."""
        ...

    def cut(self, item: Item, choice: int, text: str) -> Item | None:
        """The item with only ``text`` (a prefix of its text) for ``choice``; None when it cannot be cut."""
        ...

    def stop_items(self, choices: Sequence[int], text: Mapping[int, str | None], verdict: Verdict,
                   finished: frozenset[int] = frozenset()) -> list[Item]:
        """The items that end a stopped stream (``text``: per choice, the fallback message that replaces it, or None:
        a choice that did not fail ends where it was stopped, with no text added; ``finished``: choices that passed
        and went out whole, which end as finished, not as stopped)."""
        ...

    def shows(self, choice: int, *, final: bool = False) -> bool:
        """The answer text of ``choice`` read so far shows a reader something (only adapters whose items may carry
        ``traces`` need it; ``final``: the stream ended)."""
        ...

    def mark(self, item: Item, verdict: Verdict) -> Item | None:
        """The item that ends the answer, marked as delivered unchecked (``verdict.outcome == "error"``); None when
        this item cannot carry the mark (the gate tries the next one that ends the answer)."""
        ...


@dataclass(slots=True)
class _Held(Generic[Item]):
    item: Item
    texts: dict[int, str]
    ends: bool
    traces: frozenset[int] = frozenset()


class ReleaseGate(Generic[Item]):
    """Sans-IO: which stream items may be delivered, given what each choice's :class:`StreamGuard` released.

    ``open_stream`` makes the checker of one choice (``lambda: guard.stream(question, contexts)``); choice 0's is
    made at once (a held stream starts its retrieval check now), the others when their first text comes. Drive it with
    :meth:`push` (or :meth:`offer`, cheap, then :meth:`take`, which scores: run it off an event loop), and
    :meth:`end` / :meth:`aend` once the source ended or :attr:`stopped` is true.
    """

    def __init__(self, open_stream: Callable[[], StreamGuard], adapter: ChunkAdapter[Item], start: float) -> None:
        self.adapter = adapter
        self.start = start
        self._open = open_stream
        first = open_stream()
        self.guard = first.guard
        self.policy = first.policy
        self.holds = first.holds
        self.streams: dict[int, StreamGuard] = {0: first}
        self.state = HOLDING if self.holds else STREAMING
        self.pending: deque[_Held[Item]] = deque()  # held items with their text (read once)
        self.delivered: dict[int, int] = {0: 0}  # characters of each choice delivered
        self.ttft: float | None = None
        self.checking = 0.0
        self.verdict: Verdict | None = None
        self._due: set[int] = set()  # choices with sentences to check
        self._unread: tuple[BaseException, Verdict] | None = None  # an item went out unread (fail_open, flag mode)
        self._error: Verdict | None = None  # the stream stopped on something it could not read
        self._mark: Verdict | None = None  # the verdict the end item carries (delivered unchecked)
        self._marked = False
        self._traced: set[int] = set()  # choices with a reasoning trace
        self._answered: set[int] = set()  # traced choices whose answer showed something and passed in part

    # ----------------------------------------------------------------- state
    @property
    def stopped(self) -> bool:
        return self.state is STOPPED

    @property
    def stream(self) -> StreamGuard:
        """The first choice's checker (the only one of a single-choice stream)."""
        return self.streams[0]

    def _sync(self) -> None:
        if self.state.open and any(s.stopped for s in self.streams.values()):
            self.state = STOPPED

    # ----------------------------------------------------------------- feeding
    def push(self, item: Item) -> list[Item]:
        """:meth:`offer` then :meth:`take`: the items that may be delivered now."""
        self.offer(item)
        return self.take()

    def offer(self, item: Item) -> bool:
        """Read one item and add its text (cheap: fine on an event loop); True when :meth:`take` has sentences to
        check (it scores: run it in a thread)."""
        if not self.state.open:
            return False
        try:
            reading = self.adapter.read(item)
        except UnreadableError as exc:
            self._unreadable(item, exc)
            return False
        texts = {c: t for c, t in reading.texts.items() if t}
        if self._unread is not None and not self.holds:
            texts = {}  # flag mode: unchecked from the first unreadable item on (its verdict is already reported)
        if texts and self.ttft is None:
            self.ttft = time.perf_counter() - self.start - self.checking
        self.pending.append(_Held(item, texts, reading.ends, reading.traces))
        self._traced |= reading.traces
        for choice, text in texts.items():
            if self._stream(choice).add(text):
                self._due.add(choice)
        self._sync()
        return bool(self._due)

    def take(self) -> list[Item]:
        """Check the sentences completed so far; the items that may be delivered now."""
        if self._due and self.state.open:
            t0 = time.perf_counter()
            for choice in sorted(self._due):
                stream = self.streams[choice]
                stream.release()
                if stream.stopped:
                    break
            self.checking += time.perf_counter() - t0
        self._due.clear()
        self._sync()
        return self._drain(final=False)

    def _stream(self, choice: int) -> StreamGuard:
        stream = self.streams.get(choice)
        if stream is None:
            stream = self.streams[choice] = self._open()
            self.delivered[choice] = 0
        return stream

    def _unreadable(self, item: Item, exc: UnreadableError) -> None:
        """An item the guard cannot read: ``on_error`` decides. Held and failing closed, the stream stops; else the
        item goes out unread, the error is counted once and the answer's verdict says it was not (all) checked."""
        if self.holds and self.policy.on_error == "fail_closed":
            self._error = self.guard.error_verdict(exc, "", timings=Timings(0.0))  # counted now, reported at the end
            self.state = STOPPED
            return
        if self._unread is None:
            verdict = self.guard.error_verdict(exc, "", timings=Timings(0.0))  # logged and counted
            if not self.holds:  # flag mode: the answer's verdict, reported now (the rest is not read)
                verdict = self.guard.report(verdict)
                self._mark = verdict
            self._unread = (exc, verdict)
        self.pending.append(_Held(item, {}, False))

    def abort(self, exc: UnreadableError) -> None:
        """The rest of the stream cannot be read (e.g. corrupt compressed bytes): it ends here whatever the mode, with
        what was released and the stop items; the error (counted once) is the answer's verdict, per ``on_error``."""
        if not self.state.open:
            return
        if self._unread is None or self.holds:  # (flag mode after an unreadable item: that verdict stands)
            self._error = self.guard.error_verdict(exc, "", timings=Timings(0.0))
        self.state = STOPPED

    # ----------------------------------------------------------------- delivering
    def _available(self, choice: int) -> int:
        return self.streams[choice].released - self.delivered[choice]

    def _drain(self, final: bool, split: bool = False) -> list[Item]:
        """Deliver the held items whose text is all released, unchanged (a passing answer goes out byte for byte).
        ``split`` (only when a stopped stream closes) also delivers the released part of the item in which the last
        passed sentence ends."""
        out: list[Item] = []
        while self.pending:
            held = self.pending[0]
            if held.ends and self.holds and not final:
                break  # the end of the answer goes out only once the whole answer passed
            if held.traces and self.holds and not final and not all(map(self._answers, held.traces)):
                break  # a reasoning trace goes out only once the answer shows something and began to pass
            if all(len(text) <= self._available(c) for c, text in held.texts.items()):
                for c, text in held.texts.items():
                    self.delivered[c] += len(text)
                self.pending.popleft()
                out.append(self._marked_item(held))
                continue
            if split and len(held.texts) == 1:
                ((c, text),) = held.texts.items()
                n = self._available(c)
                if n > 0:
                    piece = self.adapter.cut(held.item, c, text[:n])
                    if piece is not None:  # None: the adapter cannot cut this item (it is not delivered)
                        out.append(piece)
                    self.delivered[c] += n
            break
        return out

    def _answers(self, choice: int) -> bool:
        if choice not in self._answered:
            stream = self.streams.get(choice)
            if stream is None or stream.released == 0 or not stream.judged or not self.adapter.shows(choice):
                return False
            self._answered.add(choice)
        return True

    def _bare_traces(self) -> None:
        """At the end of a held stream: a choice that streamed a reasoning trace and an answer that shows nothing or
        answers nothing ("Hope this helps!") has no answer to check, only a trace a client may show (as an unchecked
        JSON message is, it is unreadable)."""
        if not self.holds or not self.state.open:
            return
        bare = sorted(c for c in self._traced if not self.adapter.shows(c, final=True)
                      or not answers_anything(render(self.streams[c].text).text if c in self.streams else ""))
        if not bare:
            return
        exc = UnreadableError(f"choice {bare[0]} of the stream has no answer, only a reasoning trace, which guardrail "
                              "does not check (raise max_tokens so the model reaches its answer)")
        self._unreadable_end(exc)

    def _unreadable_end(self, exc: UnreadableError) -> None:
        if self.policy.on_error == "fail_closed":
            self._error = self.guard.error_verdict(exc, "", timings=Timings(0.0))
            self.state = STOPPED
        elif self._unread is None:  # fail_open: delivered, and the end says it was not checked
            self._unread = (exc, self.guard.error_verdict(exc, "", timings=Timings(0.0)))

    def _marked_item(self, held: _Held[Item]) -> Item:
        if held.ends and self._mark is not None and not self._marked:
            marked = self.adapter.mark(held.item, self._mark)
            if marked is not None:
                self._marked = True
                return marked
        return held.item

    # ----------------------------------------------------------------- the end
    def _closing(self) -> list[StreamGuard]:
        """The choices whose verdicts are made now (none when the answer's verdict is an error already made)."""
        if self._error is not None or (self._unread is not None and not self.holds):
            return []
        if self.stopped or any(s.stopped for s in self.streams.values()):
            for s in self.streams.values():
                s.halt()  # the answer stops: the other choices are decided on what was checked
        if self._unread is not None:
            for s in self.streams.values():
                s.note_unchecked(self._unread[0])
        return list(self.streams.values())

    def _timings(self) -> dict[str, float | None]:
        return {"time_to_first_token": self.ttft, "generation": time.perf_counter() - self.start - self.checking}

    def _flush(self) -> None:
        """Text the adapter still holds when the source ends (e.g. tool-call arguments cut off mid-key): read now, so
        that it is checked with the rest (an adapter without ``flush`` holds nothing)."""
        flush = getattr(self.adapter, "flush", None)
        if flush is None or not self.state.open:
            return
        for choice, text in flush().items():
            if text:
                self._stream(choice).add(text)

    def end(self) -> tuple[list[Item], Verdict]:
        """The source ended (or the stream stopped): the last items and the answer's verdict."""
        self._flush()
        self._bare_traces()
        timings = self._timings()
        verdicts = [s.finish(**timings).verdict for s in self._closing()]
        return self._close(verdicts, timings)

    async def aend(self) -> tuple[list[Item], Verdict]:
        """As :meth:`end`; the choices' checks run in worker threads, side by side."""
        import asyncio

        self._flush()
        self._bare_traces()
        timings = self._timings()
        ends = await asyncio.gather(*(s.afinish(**timings) for s in self._closing()))
        return self._close([e.verdict for e in ends], timings)

    def _close(self, verdicts: list[Verdict], timings: dict[str, float | None]) -> tuple[list[Item], Verdict]:
        if self._error is not None:
            verdict = self.guard.report(dataclasses.replace(
                self._error, timings=Timings(self.checking, timings["time_to_first_token"], timings["generation"])))
        elif not verdicts:
            assert self._unread is not None
            verdict = self._unread[1]
        else:
            verdict = worst(verdicts)
        self.verdict = verdict
        self._sync()
        if not self.stopped:
            self.state = FINISHED
            if self.holds and verdict.outcome == "error":
                self._mark = verdict  # delivered, in part unchecked (fail_open): the end says so
            return self._drain(final=True), verdict
        out = self._drain(final=False, split=True)  # whatever was released before the stop
        return [*out, *self.adapter.stop_items(sorted(self.streams), self._replaced(verdicts, verdict), verdict,
                                               self._whole(verdicts))], verdict

    def _whole(self, verdicts: list[Verdict]) -> frozenset[int]:
        """The choices that passed and whose every character went out (another choice stopped the answer)."""
        if len(verdicts) != len(self.streams):
            return frozenset()
        return frozenset(i for (i, s), v in zip(self.streams.items(), verdicts)
                         if v.action == "pass" and self.delivered.get(i, 0) == len(s.text) and s.text)

    def _replaced(self, verdicts: list[Verdict], verdict: Verdict) -> dict[int, str | None]:
        """Per choice, the fallback message that replaces it: only a choice whose own verdict failed (with several
        choices, the one that passed is not spliced with another's fallback); every choice when the answer's verdict
        is not one per choice (it could not be read)."""
        if verdict.action != "fallback":
            return {i: None for i in self.streams}
        message = self.policy.fallback_message
        if len(verdicts) != len(self.streams):
            return {i: message for i in self.streams}
        return {i: message if v.action == "fallback" else None for i, v in zip(self.streams, verdicts)}


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

    def __iter__(self) -> GatedStream[Item]:
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
            if self._gate.stopped:
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

    def __aiter__(self) -> AsyncGatedStream[Item]:
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
            if self._gate.offer(item):
                import asyncio

                self._out.extend(await asyncio.to_thread(self._gate.take))
            else:
                self._out.extend(self._gate.take())
            if self._gate.stopped:
                await self.aclose()
                self._ended(*await self._gate.aend())
        return self._out.popleft()

    async def aclose(self) -> None:
        if self._close is not None:
            await self._close()
