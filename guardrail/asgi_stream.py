"""The event-stream strategy of :class:`guardrail.asgi.GuardrailMiddleware`, and the pieces its responders share.

An SSE answer (``text/event-stream``, or a 2xx body that turns out to hold one) is parsed incrementally and its events
go through the one releaser, :class:`guardrail.stream.release.ReleaseGate`, by way of :class:`SSEEvents` (a thin
adapter: an event's text per choice, cutting an event, the stop events, marking the end). Block / fallback mode:
events go out once all their text passed; a failing sentence ends the stream with ``finish_reason:
"content_filter"``. Flag / pass mode: events go out as they come and the answer is checked after the last one, in the
background.

An answer the guard cannot read (an unknown ``Content-Encoding``, an event it cannot read) follows ``on_error``:
stopped (block / fallback mode, ``fail_closed``), or delivered and marked as unchecked: ``x-guardrail-action`` and
``x-guardrail-outcome: unchecked`` headers when that is known before the first byte, else a ``guardrail`` field
(``{"action", "outcome": "unchecked", "reasons"}``) on the event that ends the answer. Flag mode never stops a
stream: with ``fail_closed`` the unreadable answer is flagged (``action: flag``), with ``fail_open`` passed
(``action: pass``), as JSON answers are.
"""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from guardrail import wire
from guardrail.errors import UnreadableError
from guardrail.stream.release import Reading, ReleaseGate
from guardrail.verdict import Verdict

if TYPE_CHECKING:
    from guardrail.guard import Guard

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

logger = logging.getLogger("guardrail")

#: events a stream may send, comments and empty events included (``GuardrailMiddleware(max_stream_events=...)``,
#: ``RequestLimits.max_stream_events``): reading each one costs the event loop some microseconds whether it holds text
#: or not, so a flood of keep-alive comments under the byte cap would hold a request (and the loop) for minutes
MAX_STREAM_EVENTS = 100_000
#: a received piece longer than this is decoded and parsed in a worker thread, not on the event loop
OFF_LOOP_BYTES = 256 * 1024
#: ... and one with more JSON values than this (counted by their separators and brackets): 250 KB of "[[[[0]]]]" costs
#: twenty times the parsing and reading of 250 KB of text
OFF_LOOP_VALUES = 20_000


def json_values(data: bytes | bytearray) -> int:
    """About how many JSON values ``data`` holds (its commas and opening brackets: C-speed counts)."""
    return data.count(b",") + data.count(b"[") + data.count(b"{")


def costly(data: bytes | bytearray) -> bool:
    """Reading ``data`` as JSON is work for a worker thread, not the event loop (:data:`OFF_LOOP_BYTES`,
    :data:`OFF_LOOP_VALUES`)."""
    return len(data) > OFF_LOOP_BYTES or json_values(data) > OFF_LOOP_VALUES
#: events read on the event loop between two yields to the other requests
EVENTS_PER_YIELD = 2_000


# --------------------------------------------------------------------------- shared helpers
def header(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> str | None:
    """The value of header ``name``: repeated fields combined as one list (RFC 9110 section 5.3), as HTTP clients read
    them (two ``Content-Encoding`` fields, ``identity`` then ``gzip``, are a gzip body to httpx)."""
    values = [v.decode("latin-1") for k, v in headers if k.lower() == name]
    return ", ".join(values) if values else None


def without(headers: Iterable[tuple[bytes, bytes]], *names: bytes) -> list[tuple[bytes, bytes]]:
    return [(k, v) for k, v in headers if k.lower() not in names]


def info(verdict: Verdict) -> dict[str, Any]:
    return {"action": verdict.action, "outcome": verdict.outcome, "reasons": list(verdict.shown_reasons)}


def unchecked_info(verdict: Verdict) -> dict[str, Any]:
    """The mark of an answer delivered (in part) unchecked, in the body: what was done, and why."""
    return {"action": verdict.action, "outcome": "unchecked", "reasons": list(verdict.shown_reasons)}


def unchecked_headers(verdict: Verdict) -> list[tuple[bytes, bytes]]:
    """The mark of an answer delivered unchecked, in the headers."""
    return [(b"x-guardrail-action", verdict.action.encode()), (b"x-guardrail-outcome", b"unchecked")]


class Exchange(Protocol):
    """What the stream responder uses of the request it answers (``guardrail.asgi._Exchange``)."""

    guard: Guard
    started: float
    closed: bool
    send: Send
    verdict: Verdict | None
    #: the secret with which the gateway signs the error events it writes itself
    origin: str
    #: the answer's stream carried an error event (the upstream's, or the gateway's for a stream that broke off or
    #: timed out): logged with the request
    stream_error: bool
    #: events the answer's stream may send (comments and empty events included); one more makes it unreadable
    max_stream_events: int

    def question_contexts(self) -> tuple[str, list[str]]: ...

    def echo(self) -> frozenset[str]: ...

    def echoed_prompt(self) -> str | None: ...

    def choices(self) -> int | None: ...

    def unchecked(self, exc: Exception) -> Verdict: ...

    async def refuse(self, verdict: Verdict) -> None: ...

    def spawn(self, coro: Awaitable[Any]) -> None: ...


Ex = TypeVar("Ex", bound=Exchange)


class Responder(ABC, Generic[Ex]):
    """One strategy per kind of answer: what to do with the response start and each body piece."""

    def __init__(self, ex: Ex) -> None:
        self.ex = ex

    @abstractmethod
    async def start(self, message: Message) -> None:
        """The app's ``http.response.start``."""

    @abstractmethod
    async def body(self, data: bytes, more: bool) -> None:
        """One ``http.response.body`` piece (``more``: not the last)."""


# --------------------------------------------------------------------------- the adapter
class SSEEvents:
    """ChunkAdapter for the events of an OpenAI event stream (chat completions, completions, Responses API)."""

    def __init__(self, echo: frozenset[str] | None = None, choices: int | None = None) -> None:
        # one per stream: tool-call arguments arrive as pieces of JSON; echo: the request's strings (see wire.fields);
        # choices: the request's n (a choice beyond it is unreadable)
        self.deltas = wire.DeltaReader(echo=echo, choices=choices)
        self.template: Any = None  # the last readable payload: the stop events take its shape
        self._peeked: tuple[wire.SSEEvent, Reading | UnreadableError] | None = None
        self._done = False  # [DONE] was read: clients read nothing after it

    def quiet(self, ev: wire.SSEEvent) -> bool:
        """Read ``ev`` ahead of the gate: True when it holds no answer text, no reasoning trace and does not end the
        answer (it may go out before the gate opens). The gate's :meth:`read` of this event then returns this reading (read once)."""
        try:
            reading: Reading | UnreadableError = self._read(ev)
        except UnreadableError as exc:
            reading = exc
        self._peeked = (ev, reading)
        return isinstance(reading, Reading) and not reading.ends and not any(reading.texts.values()) \
            and not reading.traces

    def read(self, ev: wire.SSEEvent) -> Reading:
        if self._peeked is not None and self._peeked[0] is ev:
            reading, self._peeked = self._peeked[1], None
            if isinstance(reading, UnreadableError):
                raise reading
            return reading
        return self._read(ev)

    def _read(self, ev: wire.SSEEvent) -> Reading:
        if ev.done:
            self._done = True
            return Reading({}, True)
        if ev.empty:
            return Reading({})
        if ev.malformed is not None:
            raise UnreadableError(f"the stream sent an event that guardrail cannot read: {ev.malformed}")
        if self._done:
            raise UnreadableError("the stream sent an event after [DONE]: clients stop reading there, so what they show "
                                  "is not the answer guardrail read")
        unlike = wire.shown_alike(ev)
        if unlike is not None:
            raise UnreadableError(f"the stream sent an event that guardrail cannot read: {unlike}")
        try:
            deltas = self.deltas.read(ev.payload)
        except UnreadableError as exc:
            raise UnreadableError(f"the stream sent an event that guardrail cannot read: {exc}") from None
        self.template = ev.payload
        texts: dict[int, str] = {}
        for d in deltas:
            texts[d.index] = texts.get(d.index, "") + d.text
        if not ev.terminated and (any(texts.values()) or any(d.trace for d in deltas)):
            raise UnreadableError("the stream ended inside an event that carries text (no blank line after it): "
                                  "browsers and the OpenAI SDK drop such an event, so they would not show the answer "
                                  "guardrail read")
        # an event whose tool-call arguments end inside a key, a held value or a number goes out with the answer's
        # end: what it carries is read only with a later event
        return Reading(texts, any(d.finish is not None for d in deltas) or self.deltas.holding,
                       frozenset(d.index for d in deltas if d.trace))

    def shows(self, choice: int, *, final: bool = False) -> bool:
        return self.deltas.shows(choice, final=final)

    def flush(self) -> dict[int, str]:
        """Text still held by unfinished tool-call arguments when the stream ends (read before the verdict)."""
        return self.deltas.flush()

    def cut(self, ev: wire.SSEEvent, choice: int, text: str) -> wire.SSEEvent | None:
        if not wire.only_content(ev.payload):
            return None  # tool-call or refusal pieces are never cut
        return wire.SSEEvent(wire.with_text(ev.payload, text, choice))

    def stop_items(self, choices: Sequence[int], text: Mapping[int, str | None], verdict: Verdict,
                   finished: frozenset[int] = frozenset()) -> list[wire.SSEEvent]:
        return [wire.SSEEvent(wire.stop_events(self.template, list(choices) or [0], text, info(verdict), finished),
                              done=True)]

    def verdict_event(self, verdict: Verdict) -> wire.SSEEvent | None:
        """A chunk with no choices that carries the verdict (``guardrail``), in the shape of the stream's chunks (as a
        usage chunk is); None for a Responses API stream (its clients type every event) or before any chunk."""
        base = self.template
        if not isinstance(base, dict) or not isinstance(base.get("choices"), list):
            return None
        payload = {k: base[k] for k in ("id", "object", "created", "model") if k in base}
        payload.update({"choices": [], "guardrail": verdict.to_dict(evidence=False, shown=True)})
        return wire.SSEEvent(wire.event_bytes(payload), payload)

    def mark(self, ev: wire.SSEEvent, verdict: Verdict) -> wire.SSEEvent | None:
        if not isinstance(ev.payload, dict):
            return None  # [DONE]: the mark goes on a JSON event
        payload = {**ev.payload, "guardrail": unchecked_info(verdict)}
        return wire.SSEEvent(wire.event_bytes(payload), payload)


def _offer_all(gate: ReleaseGate[wire.SSEEvent], events: list[wire.SSEEvent]) -> bool:
    """Offer events to the gate until it stops; True when a check is due (see ReleaseGate.offer)."""
    due = False
    for ev in events:
        due = gate.offer(ev) or due
        if gate.stopped:
            break
    return due


def _withheld(ev: wire.SSEEvent, ex: Exchange) -> wire.SSEEvent:
    """The event with its error messages withheld (logged here for the operator; see wire.withhold_error_messages);
    an event that carries an error marks the exchange's ``stream_error``."""
    payload, messages = wire.withhold_error_messages(ev.payload, ex.origin)
    if not messages:
        return ev
    ex.stream_error = True
    for message in filter(None, messages):
        logger.warning("guardrail: an upstream error event in a guarded stream; its message, withheld from the "
                       "client: %r", message[:2000])
    return wire.SSEEvent(wire.event_bytes(payload), payload)


# --------------------------------------------------------------------------- the strategy
class StreamResponder(Responder[Exchange]):
    """An SSE answer, through the release gate. ``buffered``: an event stream found in a complete body (sent with
    another label), checked as a stream and sent as one body."""

    def __init__(self, ex: Exchange, *, buffered: bool = False) -> None:
        super().__init__(ex)
        self.buffered = buffered
        self.parser = wire.SSEParser(max_events=ex.max_stream_events)
        self._values = 0  # JSON values of the event being read, about (see _parse)
        self.decoder: wire.Decoder | None = None
        # None: not open yet (the events before the answer's first text go out as they come), or, without an adapter,
        # the body goes out as received (unread)
        self.gate: ReleaseGate[wire.SSEEvent] | None = None
        self.start_msg: Message = {}
        self.out: list[bytes] = []
        self.adapter: SSEEvents | None = None
        self.done: list[bytes] = []  # flag mode: [DONE] waits for the verdict event

    async def start(self, message: Message, decoded: bool = False) -> None:
        ex = self.ex
        headers = list(message.get("headers", []))
        if not decoded:
            try:
                self.decoder = wire.Decoder(header(headers, b"content-encoding"))
                for k, v in headers:  # every Content-Type a client may take
                    if k.lower() == b"content-type":
                        wire.check_charset(v.decode("latin-1"))
            except UnreadableError as exc:  # nothing is sent yet: on_error decides for the whole answer
                verdict = ex.unchecked(exc)
                if verdict.blocked:
                    await ex.refuse(verdict)
                else:  # delivered as received, marked
                    await self._start({**message, "headers": headers + unchecked_headers(verdict)})
                return
        self.adapter = SSEEvents(ex.echo(), ex.choices())  # the gate opens at the answer's first text (see _open)
        await self._start({**message, "headers": without(headers, b"content-length", b"content-encoding")})

    def _open(self, adapter: SSEEvents) -> ReleaseGate[wire.SSEEvent]:
        """The gate, opened at the answer's first text (or its end): the question and contexts are read now, so an app
        that retrieves inside its streaming generator and calls ``record()`` before yielding the answer's text (a
        role chunk or comments may come first) has its contexts used; a later ``record()`` is refused."""
        ex = self.ex
        try:
            question, contexts = ex.question_contexts()
        except UnreadableError as exc:  # a question the guard cannot read: the answer cannot be judged
            self.gate = ReleaseGate(lambda: ex.guard.stream("", []), adapter, ex.started)
            self.gate.abort(exc)
            return self.gate
        # "echo": true: each choice repeats the caller's prompt first; the answer is what follows it (as in a JSON body)
        echo = ex.echoed_prompt() or ""
        self.gate = ReleaseGate(lambda: ex.guard.stream(question, contexts, echo=echo), adapter, ex.started)
        return self.gate

    async def _start(self, message: Message) -> None:
        if self.buffered:
            self.start_msg = message
        else:
            await self.ex.send(message)

    def _decode(self, data: bytes, more: bool) -> bytes:
        if self.decoder is not None:
            data = self.decoder.decode(data)
            if not more:
                data += self.decoder.flush()
        return data

    def _feed(self, data: bytes, more: bool) -> list[wire.SSEEvent]:
        events = self.parser.feed(data)
        if not more:
            events += self.parser.close()
        return [_withheld(ev, self.ex) for ev in events]

    async def _parse(self, data: bytes, more: bool) -> list[wire.SSEEvent]:
        """The events these bytes complete; a large piece (32 MB of comments in one message is 10M events), or one
        that may end a large event (24 MB of JSON sent in 64 KB pieces, parsed when its last piece comes), is decoded
        and parsed in a worker thread, so the other requests do not wait for it."""
        if len(data) > OFF_LOOP_BYTES:
            return await asyncio.to_thread(lambda: self._feed(self._decode(data, more), more))
        data = self._decode(data, more)  # a small compressed piece may decode to a large one
        self._values += json_values(data)  # of the event being read: its pieces may be small, it is not
        if len(data) + self.parser.pending > OFF_LOOP_BYTES or self._values > OFF_LOOP_VALUES:
            events = await asyncio.to_thread(self._feed, data, more)
        else:
            events = self._feed(data, more)
        if events:
            self._values = json_values(self.parser.pending_bytes)
        return events

    async def body(self, data: bytes, more: bool) -> None:
        adapter = self.adapter
        if adapter is None:  # unread: as received
            await self._emit([data], final=not more)
            return
        try:
            events = await self._parse(data, more)
        except UnreadableError as exc:
            # the rest cannot be read (corrupt encoding, an oversized event, too many events): it ends here
            (self.gate or self._open(adapter)).abort(exc)
            events = []
        early: list[bytes] = []  # before the answer's first text: no text, nothing to check, out at once
        gate = self.gate
        first = 0
        if gate is None:
            while first < len(events) and adapter.quiet(events[first]):
                early.append(events[first].raw)
                first += 1
                if first % EVENTS_PER_YIELD == 0:
                    await asyncio.sleep(0)
            if first == len(events) and more:
                await self._emit(early, final=False)
                return
            gate = self._open(adapter)
        due = False
        if sum(len(ev.raw) for ev in events[first:]) > OFF_LOOP_BYTES or \
                sum(json_values(ev.raw) for ev in events[first:]) > OFF_LOOP_VALUES:
            # a large event's fields are read in a worker thread, as its JSON was parsed (a walk over 12M numbers)
            due = await asyncio.to_thread(_offer_all, gate, events[first:])
        else:
            for i in range(first, len(events)):
                due = gate.offer(events[i]) or due
                if gate.stopped:
                    break
                if (i + 1) % EVENTS_PER_YIELD == 0:  # reading events is cheap, but a piece may hold thousands of them
                    await asyncio.sleep(0)
        items = await asyncio.to_thread(gate.take) if due else gate.take()
        if not gate.holds and not gate.stopped:  # flag mode: [DONE] waits for the verdict event
            self.done.extend(ev.raw for ev in items if ev.done)
            items = [ev for ev in items if not ev.done]
        chunks = early + [ev.raw for ev in items]
        if gate.stopped or (not more and gate.holds):
            last, self.ex.verdict = await gate.aend()
            await self._emit(self.done + chunks + [ev.raw for ev in last], final=True)
        elif not more:
            # flag / pass mode: the client has every word as it came; the check runs now, and the stream ends with a
            # chunk carrying the verdict (as a JSON answer carries it), then [DONE]
            await self._emit(chunks, final=False)
            last, verdict = await gate.aend()
            self.ex.verdict = verdict
            # (an answer delivered in part unread carries the "unchecked" mark on its end event already)
            marked = (self.adapter.verdict_event(verdict) if self.adapter is not None and verdict.outcome != "error"
                      else None)
            await self._emit([ev.raw for ev in last] + ([marked.raw] if marked is not None else []) + self.done,
                             final=True)
        else:
            await self._emit(chunks, final=False)

    def abandoned(self) -> Awaitable[Verdict] | None:
        """The check of a flag-mode stream whose client went away before its end: the client read every word that
        came (flag mode holds nothing back), so what came is checked and counted, as a whole stream is (round 57: it was
        checked and counted nowhere, though the client had read a contradicted sentence); None when there is nothing
        to do (the stream ended, or the gate holds text back: what went out was checked and passed)."""
        gate = self.gate
        if gate is None or gate.verdict is not None or gate.holds or gate.stopped or self.ex.closed:
            return None

        async def check() -> Verdict:
            _, verdict = await gate.aend()
            return verdict

        return check()

    async def _emit(self, chunks: list[bytes], final: bool) -> None:
        if final:
            self.ex.closed = True
        if self.buffered:
            self.out.extend(chunks)
            if final:
                body = b"".join(self.out)
                headers = list(self.start_msg["headers"]) + [(b"content-length", str(len(body)).encode())]
                await self.ex.send({**self.start_msg, "headers": headers})
                await self.ex.send({"type": "http.response.body", "body": body, "more_body": False})
            return
        body = b"".join(chunks)
        if body or final:
            await self.ex.send({"type": "http.response.body", "body": body, "more_body": not final})
