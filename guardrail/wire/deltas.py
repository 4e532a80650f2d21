"""Stream deltas: the text each SSE event of a chat, completions or Responses stream adds to each choice
(:func:`read_deltas`, :class:`DeltaReader`), and the rewriting of stream events (:func:`with_text` cuts one,
:func:`stop_events` ends a stopped stream).

An event is a chat or completions chunk (``choices``), a Responses event (``type: "response.*"``) or an error; one
that is two of them, or that carries a field no reader knows to be text-free, is unreadable. A stream that mixes
shapes (chunks and Responses events, chat deltas and completion texts) is unreadable too. Responses events that
repeat a text in full are held against what was streamed: the part not streamed yet is new text, a disagreement is
unreadable."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from guardrail.errors import UnreadableError

from . import completions, responses
from . import fields as f
from .arguments import ArgumentsReader
from .chat import (
    CHOICE_FIELDS,
    FIELD_BREAK,
    REASONING,
    TOP_FIELDS,
    _message_pieces,
    answer_shape,
    check_token_spelling,
    choice_text,
    has_text,
    shows_nothing,
)
from .fields import MAX_CHOICES
from .sse import DONE, event_bytes

#: how much answer text is read again, chunk by chunk, to learn whether it shows something (see DeltaReader.shows)
_SHOWN_PREFIX = 4096
_ERROR_EVENT: dict[str, f.Rule] = {**TOP_FIELDS, "error": responses.error}


@dataclass(frozen=True, slots=True)
class Delta:
    """The text one SSE event adds to one choice, and whether the event ends that choice."""

    index: int
    text: str
    finish: str | None = None
    #: raw pieces of tool-call arguments (JSON text) by tool-call key; :class:`DeltaReader` turns them into text
    arguments: tuple[tuple[Any, str], ...] = ()
    #: the pieces of ``text`` by where they sit (Responses events), for :class:`DeltaReader`
    keyed: tuple[tuple[Any, str], ...] = ()
    #: full texts repeated by the event, by key (Responses ``*.done``...): :class:`DeltaReader` reads what is new
    snapshots: tuple[tuple[Any, str], ...] = ()
    #: the event adds reasoning text to this choice (a trace some clients show, not checked: a stream that holds
    #: its answer holds the trace until the answer shows something, see :class:`~guardrail.stream.release.Reading`)
    trace: bool = False


def shape(payload: dict[str, Any]) -> str:
    """'chunk' (``choices``), 'responses' (a Responses event) or 'error'; UnreadableError for none or two."""
    chunk, event = "choices" in payload, responses.is_event(payload)
    if chunk and event:
        raise UnreadableError("a stream event is both a chat chunk and a Responses event (two answer shapes at once)")
    if chunk:
        return "chunk"
    if event:
        return "responses"
    if "error" in payload:
        return "error"
    raise UnreadableError("a stream event has no 'choices' (not an OpenAI chunk)")


def read_deltas(payload: Any, echo: f.Echo = None) -> list[Delta]:
    """The pieces of one streamed chunk (chat, completions or Responses events); UnreadableError for a shape that is
    not one of them. An ``{"error": ...}`` event carries no answer text. Tool-call arguments stay raw JSON pieces in
    ``Delta.arguments`` and repeated full texts in ``Delta.snapshots``: read a stream with :class:`DeltaReader`,
    which keeps their state across events. ``echo``: the strings the request carried (see
    :func:`~guardrail.wire.fields.echo`)."""
    if not isinstance(payload, dict):
        raise UnreadableError(f"a stream event is a JSON {type(payload).__name__}, not an object")
    out = _read_deltas(payload, echo)
    if payload.get("error") and payload.get("type") != "error" and any(_carries(d) for d in out):
        # the OpenAI SDK raises at any event whose "error" is set: its clients stop there, others read on (an error
        # beside no text is read as the chunk's other fields are: an error object's message is text a client shows)
        raise UnreadableError("a stream event carries an error beside answer text: the OpenAI SDK stops at it and "
                              "other clients read on, so they would not show the same answer")
    return out


def _carries(d: Delta) -> bool:
    """The delta holds answer text (or pieces of it: tool-call arguments, keyed or repeated texts)."""
    return bool(d.text or d.arguments or d.keyed or d.snapshots)


def _read_deltas(payload: dict[str, Any], echo: f.Echo) -> list[Delta]:
    kind = shape(payload)
    if kind == "responses":
        ev = responses.read_event(payload, echo)
        return [Delta(0, "".join(t for _, t in ev.pieces), ev.finish, ev.arguments, ev.pieces, ev.snapshots, ev.trace)]
    if kind == "error":
        f.check(payload, "a stream event", _ERROR_EVENT, echo)
        return []
    f.check(payload, "a stream event", TOP_FIELDS, echo, read=("choices",))
    choices = payload["choices"]
    if not isinstance(choices, list):
        raise UnreadableError("a stream event's 'choices' is not a list")
    out: list[Delta] = []
    shapes = set()
    for pos, choice in enumerate(choices):
        where = f"choices[{pos}]"
        if not isinstance(choice, dict):
            raise UnreadableError(f"{where} of a stream event is {f.describe(choice)}, not an object")
        index = choice.get("index", pos)
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < MAX_CHOICES:
            raise UnreadableError(f"{where}.index is not a choice index below {MAX_CHOICES} (at most {MAX_CHOICES} "
                                  "choices are checked per answer)")
        finish = choice.get("finish_reason")
        if finish is not None and not isinstance(finish, str):
            raise UnreadableError(f"{where}.finish_reason is not a string")
        raw: list[tuple[Any, str]] = []
        answer = answer_shape(choice, where)
        shapes.add(answer)
        message = choice.get(answer) if answer in ("delta", "message") else None
        trace = isinstance(message, dict) and any(has_text(message.get(k)) for k in REASONING)
        if answer == "delta":
            f.check(choice, where, CHOICE_FIELDS, echo, read=("delta",))
            keyed: list[tuple[Any, str]] = []
            text, raw = _message_pieces(choice["delta"], f"{where}.delta", streamed=True, echo=echo, keyed=keyed)
            check_token_spelling(choice, text, where)
        elif answer == "text":
            text = completions.choice_text(choice, where, echo)
        elif answer == "message":  # some servers send whole messages in chunks
            text = choice_text(choice, where, echo)
        else:
            f.check(choice, where, CHOICE_FIELDS, echo)
            text = ""
        if any(d.index == index for d in out):
            raise UnreadableError(f"{where} repeats choice {index} in one stream event: a client that reads "
                                  "choices[0] and one that reads by index would show different answers")
        out.append(Delta(index, text, finish, tuple(raw), tuple(keyed) if answer == "delta" else (), trace=trace))
    if {"delta", "text"} <= shapes:
        raise UnreadableError("a stream event mixes chat deltas and completion texts (two answer shapes at once)")
    return out


class DeltaReader:
    """:func:`read_deltas` for one stream: tool-call arguments, streamed as raw pieces of JSON, come out as the text
    of their string values (as :func:`arguments_text` reads a whole one), each character read once; a full text
    repeated by a Responses event adds only what was not streamed (and a text that disagrees with what was streamed
    is unreadable); a stream that changes shape is unreadable."""

    def __init__(self, echo: f.Echo = None, choices: int | None = None) -> None:
        self.echo = echo
        #: how many answers the request asked for (its ``n``; None: not known). A client that reads ``choices[0]``
        #: of every event (the openai SDK's own loop, LangChain) shows any other index as part of the one answer
        self.choices = choices
        self._readers: dict[tuple[int, Any], ArgumentsReader] = {}
        #: the readers that hold characters back (kept as they change: asking every reader on every event cost time
        #: quadratic in the number of tool calls, each streamed with an index of its own; round 29)
        self._holding: set[tuple[int, Any]] = set()
        self._objects: set[str] = set()  # the "object" of every chat chunk read (one, or the stream is unreadable)
        self._seen: set[int] = set()  # choices that have had text
        self._so_far: dict[tuple[int, Any], str] = {}  # keyed text (and raw arguments) streamed so far
        self._shapes: set[str] = set()
        self._shown: set[int] = set()  # choices whose answer text shows something
        self._answer: dict[int, str] = {}  # the answer text of a choice until it shows something
        self._current: dict[int, Any] = {}  # the field (key) a choice's last text came in

    def read(self, payload: Any) -> list[Delta]:
        deltas = read_deltas(payload, self.echo)
        kind = shape(payload)
        if kind != "error":
            self._shapes.add(kind)
            if len(self._shapes) > 1:
                raise UnreadableError("the stream mixes chat chunks and Responses events (two answer shapes at once)")
        if kind == "chunk" and any(_carries(d) for d in deltas):
            # only the chunks that carry text: Azure's content-filter chunks say "object": "" and FastChat's finish
            # chunk names the object its text chunks leave out (round 34), neither shows anything
            obj = payload.get("object")
            self._objects.add(obj if isinstance(obj, str) else repr(obj))
            if len(self._objects) > 1:
                # the OpenAI SDK's stream() helper shows only the events whose object is "chat.completion.chunk"
                raise UnreadableError(
                    "the stream's chunks name different objects (" + ", ".join(sorted(self._objects)) + "): the "
                    "OpenAI SDK's stream() helper skips every chunk that is not a 'chat.completion.chunk', so it "
                    "would not show the answer guardrail read")
        if self.choices is None and kind == "chunk" and isinstance(payload.get("choices"), list) and \
                payload["choices"] and isinstance(payload["choices"][0], dict) and \
                payload["choices"][0].get("index", 0) != 0 and any(d.text or d.keyed for d in deltas):
            # a request that does not say how many answers it asked for (an app's own shape): a client that reads
            # choices[0] of every event shows this event's first choice as part of the one answer (round 32: choice
            # 1's "~~" around choice 0's "not" struck it in the answer shown)
            raise UnreadableError(
                f"a stream event's first choice is choice {payload['choices'][0].get('index')} and the request did "
                "not say how many answers it asked for: a client that reads choices[0] of every event would show it "
                "as part of the answer (send 'n' with the request, or put choice 0 first in every event)")
        if self.choices is not None and kind == "chunk":
            for d in deltas:
                if d.index >= self.choices:
                    raise UnreadableError(
                        f"a stream event carries choice {d.index} of an answer the request asked {self.choices} "
                        "choice(s) of: a client that reads choices[0] of every event would show it as the answer")
        out = []
        for d in deltas:
            text: list[str] = [] if d.keyed else [d.text]
            for key, piece in d.keyed:
                text.append(self._text(d.index, key, piece))
            for key, piece in d.arguments:
                text.append(self._arguments(d.index, key, piece, bool("".join(text))))
            for key, full in d.snapshots:
                rest = self._rest(d.index, key, full)
                if not rest:
                    continue
                if key[0] == "args":
                    text.append(self._arguments(d.index, key, rest, bool("".join(text))))
                else:
                    text.append(self._text(d.index, key, rest))
            joined = "".join(text)
            if joined.strip():
                self._seen.add(d.index)
            if d.index not in self._shown and joined:
                so_far = self._answer[d.index] = self._answer.get(d.index, "") + joined
                if len(so_far) <= _SHOWN_PREFIX and not shows_nothing(so_far):
                    self._shown.add(d.index)
                    del self._answer[d.index]
            out.append(Delta(d.index, joined, d.finish, trace=d.trace) if d.arguments or d.keyed or d.snapshots else d)
        return out

    def shows(self, index: int, *, final: bool = False) -> bool:
        """The answer text of choice ``index`` read so far shows a reader something (a letter or a digit, not only
        blank characters and markup that renders to nothing). Past its first 4,096 characters an answer that showed
        nothing yet is read again only when ``final`` (at the end of the stream)."""
        if index not in self._shown and final and index in self._answer and not shows_nothing(self._answer[index]):
            self._shown.add(index)
        return index in self._shown

    def _switch(self, index: int, key: Any, piece: str) -> None:
        """Text of one field of a choice, after text of another: a field may not take up again once another one
        has had text (content "Gift cards can", refusal "not", content " be returned."): read in the order it came,
        that is a text no client shows (each shows its fields apart)."""
        if not piece or not piece.strip():  # a space or a newline between fields shows nothing
            return
        last = self._current.get(index)
        if last is not None and last != key and self._so_far.get((index, key)):
            raise UnreadableError(
                "the stream interleaves the texts of two fields of one answer (e.g. content and refusal, or two "
                "content parts): a client shows each field on its own, not the text read in the order it came")
        self._current[index] = key

    def _text(self, index: int, key: Any, piece: str) -> str:
        """A keyed piece of text; a new key starts a paragraph of its own."""
        self._switch(index, key, piece)
        k = (index, key)
        before = self._so_far.get(k)
        self._so_far[k] = (before or "") + piece
        if not before and piece and index in self._seen:
            return FIELD_BREAK + piece
        return piece

    def _arguments(self, index: int, key: Any, piece: str, text_before: bool) -> str:
        """A raw piece of a tool call's arguments, as the text of their string values."""
        self._switch(index, key, piece)
        k = (index, key)
        self._so_far[k] = self._so_far.get(k, "") + piece
        reader = self._readers.get(k)
        sep = ""
        if reader is None:
            reader = self._readers[k] = ArgumentsReader()
            if index in self._seen or text_before:
                sep = FIELD_BREAK  # a tool call's text starts a paragraph of its own
        out = sep + reader.feed(piece)
        if reader.holding:
            self._holding.add(k)
        else:
            self._holding.discard(k)
        return out

    @property
    def holding(self) -> bool:
        """A tool call's arguments hold characters not yet read (see :attr:`ArgumentsReader.holding`): the event just
        read must wait for the end of the answer."""
        return bool(self._holding)

    def flush(self) -> dict[int, str]:
        """The stream ended: the text held by unfinished tool-call arguments, per choice (nothing is left unread)."""
        out: dict[int, str] = {}
        for (index, _), reader in self._readers.items():
            text = reader.end()
            if text:
                out[index] = out.get(index, "") + FIELD_BREAK + text
        return out

    def _rest(self, index: int, key: Any, full: str) -> str:
        """What a repeated full text adds to what was streamed under its key."""
        so_far = self._so_far.get((index, key), "")
        if full == so_far:
            return ""
        if not full.startswith(so_far):
            raise UnreadableError("a stream event repeats a text that disagrees with what the stream sent before")
        return full[len(so_far):]


def only_content(payload: Any) -> bool:
    """True when the event's only text is one chat ``delta.content`` string or one completions ``text`` (so it can be
    cut with :func:`with_text`): no other text field of the delta, the choice or the event holds anything."""
    try:
        if not isinstance(payload, dict) or "type" in payload:
            return False
        (choice,) = payload["choices"]
        if answer_shape(choice, "choices[0]") == "delta":
            d = choice["delta"]
            return isinstance(d.get("content"), str) and not any(v for k, v in d.items() if k not in ("content", "role"))
        return isinstance(choice.get("text"), str)
    except (KeyError, TypeError, ValueError, AttributeError, UnreadableError):
        return False


def with_text(payload: dict[str, Any], text: str, index: int = 0) -> bytes:
    """The event with choice ``index``'s text replaced, and only that choice (used to cut an event at the last passed
    sentence: an empty delta of another choice beside it must not take the text, round 49); its logprobs (tokens of
    the whole text) are dropped."""
    out = json.loads(json.dumps(payload))
    choices = out["choices"]
    choice = next((c for c in choices if isinstance(c, dict) and c.get("index", 0) == index), choices[0])
    out["choices"] = [choice]
    if "delta" in choice:
        choice["delta"]["content"] = text
    else:
        choice["text"] = text
    if choice.get("logprobs") is not None:
        choice["logprobs"] = None
    choice["finish_reason"] = None
    return event_bytes(out)


def stop_events(template: Any, indices: list[int], texts: Mapping[int, str | None], info: dict[str, Any],
                finished: frozenset[int] = frozenset()) -> bytes:
    """The final chunk of a stopped stream (``finish_reason: "content_filter"`` for each choice, with the fallback text
    that replaces it, if any, and a ``guardrail`` field), then ``[DONE]``; in the shape of ``template`` (the last
    event). A Responses API stream ends with its ``response.incomplete`` event and no ``[DONE]``, as the API's own
    streams end: a client that parses every ``data:`` line of such a stream as JSON reads the stop, not an error."""
    base = template if isinstance(template, dict) else {}
    if str(base.get("type", "")).startswith("response."):
        events: list[dict[str, Any]] = []
        text = next((t for t in texts.values() if t), None)
        if text:
            events.append({"type": "response.output_text.delta", "delta": text})
        events.append({"type": "response.incomplete", "response": {"status": "incomplete",
                       "incomplete_details": {"reason": "content_filter"}}, "guardrail": info})
        # named as the Responses API names its events: a client that listens by event type sees the stop too
        return b"".join(b"event: " + e["type"].encode() + b"\n" + event_bytes(e) for e in events)
    first = (base.get("choices") or [{}])[0] if isinstance(base.get("choices"), list) else {}
    chat = not base or not isinstance(first, dict) or "text" not in first
    choices = []
    for i in indices or [0]:
        choice: dict[str, Any] = {"index": i, "finish_reason": "stop" if i in finished else "content_filter"}
        text = texts.get(i)
        if chat:
            choice["delta"] = {"content": text} if text else {}
        else:
            choice["text"] = text or ""
        choices.append(choice)
    payload = {
        "id": base.get("id", "guardrail"),
        "object": base.get("object", "chat.completion.chunk"),
        "created": base.get("created", 0),
        "model": base.get("model", ""),
        "choices": choices,
        "guardrail": info,
    }
    return event_bytes(payload) + DONE


#: what a client reads in place of an upstream's error message inside a guarded stream
WITHHELD = ("the upstream reported an error; its message is withheld (text in a guarded stream is checked or not "
            "delivered, and error text is not checked): it is in the gateway's log")


#: the key by which the gateway signs the error events it writes itself (their messages are its own: delivered)
ORIGIN_KEY = "x_guardrail_origin"


def withhold_error_messages(payload: Any, origin: str | None = None) -> tuple[Any, list[str]]:
    """A stream event with the message of every error it carries replaced by :data:`WITHHELD` (chat ``{"error":
    {...}}``, Responses ``{"type": "error", "message"}`` and ``response.failed``'s ``response.error``): an SDK shows
    that message to its user, and nothing checked it. The type and code of the error stay. Returns the event (the
    same object when nothing changed) and the messages withheld (to be logged)."""
    if not isinstance(payload, dict):
        return payload, []
    found: list[str] = []

    def scrub(err: Any) -> Any:
        if isinstance(err, dict) and origin is not None and err.get(ORIGIN_KEY) == origin:
            found.append("")  # the gateway's own error: its message stays, its signature goes
            return {k: v for k, v in err.items() if k != ORIGIN_KEY}
        if isinstance(err, dict) and isinstance(err.get("message"), str) and err["message"] not in ("", WITHHELD):
            found.append(err["message"])
            return {**err, "message": WITHHELD}
        return err

    out = payload
    if "error" in payload:
        out = {**out, "error": scrub(payload["error"])}
    if payload.get("type") == "error":
        out = scrub(out)
    response = payload.get("response")
    if isinstance(response, dict) and "error" in response:
        out = {**out, "response": {**response, "error": scrub(response["error"])}}
    return (out, found) if found else (payload, [])
