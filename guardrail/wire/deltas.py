"""Stream deltas: the text each SSE event of a chat, completions or Responses stream adds to each choice
(:func:`read_deltas`, :class:`DeltaReader`), and the rewriting of stream events (:func:`with_text` cuts one,
:func:`stop_events` ends a stopped stream)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from guardrail.errors import UnreadableError

from .arguments import ArgumentsReader
from .chat import _assistant_text, _message_pieces, _str_or_none
from .sse import DONE, event_bytes


@dataclass(frozen=True, slots=True)
class Delta:
    """The text one SSE event adds to one choice, and whether the event ends that choice."""

    index: int
    text: str
    finish: str | None = None
    #: raw pieces of tool-call arguments (JSON text) by tool-call key; :class:`DeltaReader` turns them into text
    arguments: tuple[tuple[Any, str], ...] = ()


def read_deltas(payload: Any) -> list[Delta]:
    """The pieces of one streamed chunk (chat, completions or Responses events); UnreadableError for a shape that is
    not one of them. An ``{"error": ...}`` event carries no answer text. Tool-call arguments stay raw JSON pieces in
    ``Delta.arguments``: read a stream with :class:`DeltaReader`, which keeps their state across events."""
    if not isinstance(payload, dict):
        raise UnreadableError(f"a stream event is a JSON {type(payload).__name__}, not an object")
    kind = payload.get("type")
    if isinstance(kind, str) and kind.startswith("response."):
        if kind in ("response.output_text.delta", "response.refusal.delta", "response.custom_tool_call_input.delta"):
            return [Delta(0, _str_or_none(payload.get("delta"), f"{kind}.delta"))]
        if kind == "response.function_call_arguments.delta":
            key = ("response", payload.get("output_index", payload.get("item_id", 0)))
            return [Delta(0, "", None, ((key, _str_or_none(payload.get("delta"), f"{kind}.delta")),))]
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            return [Delta(0, "", kind)]
        return []  # created, in_progress, *.done, added...: the text came in the deltas
    if "choices" not in payload:
        if "error" in payload:
            return []
        raise UnreadableError("a stream event has no 'choices' (not an OpenAI chunk)")
    choices = payload["choices"]
    if not isinstance(choices, list):
        raise UnreadableError("a stream event's 'choices' is not a list")
    out = []
    for pos, choice in enumerate(choices):
        where = f"choices[{pos}]"
        if not isinstance(choice, dict):
            raise UnreadableError(f"{where} of a stream event is a {type(choice).__name__}, not an object")
        index = choice.get("index", pos)
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < 1024:
            raise UnreadableError(f"{where}.index is not a small integer")
        finish = choice.get("finish_reason")
        if finish is not None and not isinstance(finish, str):
            raise UnreadableError(f"{where}.finish_reason is not a string")
        raw: list[tuple[Any, str]] = []
        if "delta" in choice:
            text, raw = _message_pieces(choice["delta"], f"{where}.delta", streamed=True)
        elif "text" in choice:
            text = _str_or_none(choice["text"], f"{where}.text")
        elif "message" in choice:  # some servers send whole messages in chunks
            text = _assistant_text(choice["message"], f"{where}.message")
        else:
            text = ""
        out.append(Delta(index, text, finish, tuple(raw)))
    return out


class DeltaReader:
    """:func:`read_deltas` for one stream: tool-call arguments, streamed as raw pieces of JSON, come out as the text
    of their string values (as :func:`arguments_text` reads a whole one), each character read once."""

    def __init__(self) -> None:
        self._readers: dict[tuple[int, Any], ArgumentsReader] = {}
        self._seen: set[int] = set()  # choices that have had text

    def read(self, payload: Any) -> list[Delta]:
        out = []
        for d in read_deltas(payload):
            text = [d.text]
            for key, piece in d.arguments:
                reader = self._readers.get((d.index, key))
                if reader is None:
                    reader = self._readers[(d.index, key)] = ArgumentsReader()
                    if d.index in self._seen or d.text:
                        text.append("\n")  # a tool call's text starts on its own line
                text.append(reader.feed(piece))
            joined = "".join(text)
            if joined.strip():
                self._seen.add(d.index)
            out.append(Delta(d.index, joined, d.finish) if d.arguments else d)
        return out


def only_content(payload: Any) -> bool:
    """True when the event's text comes from one chat ``delta.content`` string or completions ``text`` (so it
    can be cut with :func:`with_text`)."""
    try:
        (choice,) = payload["choices"]
        if "delta" in choice:
            d = choice["delta"]
            return isinstance(d.get("content"), str) and not any(d.get(k) for k in ("refusal", "tool_calls", "function_call"))
        return isinstance(choice.get("text"), str)
    except (KeyError, TypeError, ValueError, AttributeError):
        return False


def with_text(payload: dict[str, Any], text: str) -> bytes:
    """The event with its single choice's text replaced (used to cut an event at the last passed sentence)."""
    out = json.loads(json.dumps(payload))
    choice = out["choices"][0]
    if "delta" in choice:
        choice["delta"]["content"] = text
    else:
        choice["text"] = text
    choice["finish_reason"] = None
    return event_bytes(out)


def stop_events(template: Any, indices: list[int], text: str | None, info: dict[str, Any]) -> bytes:
    """The final chunk of a stopped stream (``finish_reason: "content_filter"`` for each choice, with the optional
    fallback text and a ``guardrail`` field), then ``[DONE]``; in the shape of ``template`` (the last event)."""
    base = template if isinstance(template, dict) else {}
    if str(base.get("type", "")).startswith("response."):
        events = []
        if text:
            events.append({"type": "response.output_text.delta", "delta": text})
        events.append({"type": "response.incomplete", "response": {"status": "incomplete",
                       "incomplete_details": {"reason": "content_filter"}}, "guardrail": info})
        return b"".join(event_bytes(e) for e in events) + DONE
    first = (base.get("choices") or [{}])[0] if isinstance(base.get("choices"), list) else {}
    chat = not base or not isinstance(first, dict) or "text" not in first
    choices = []
    for i in indices or [0]:
        choice: dict[str, Any] = {"index": i, "finish_reason": "content_filter"}
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
