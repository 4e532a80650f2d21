"""Responses API (``/v1/responses``): every text of a response object (:func:`response_texts`) and of each stream
event (:func:`read_event`).

Texts are keyed by where they sit, so a stream can be reconciled: ``("part", output_index, content_index)`` for a
message's ``output_text`` or ``refusal`` part, ``("args", output_index)`` for a function call's arguments (raw JSON),
``("input", output_index)`` for a custom tool call's input, ``("transcript",)`` for an audio transcript and
``("output_text",)`` for a top-level ``output_text`` that is not the concatenation of the output's text parts (the
SDK's definition of it; when it is, it adds nothing). Stream events that repeat a text in full (``*.done``,
``content_part.*``, ``output_item.*``, ``response.completed``...) give snapshots: the whole text so far of a key,
which :class:`~guardrail.wire.deltas.DeltaReader` checks against what was streamed.

Reasoning items and events, and web/file search calls, are not the answer and are not read (as ``reasoning_content``
in chat); request echoes (``instructions``, ``tools``, ``metadata``...) may hold only strings the request carried.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from guardrail.errors import UnreadableError
from guardrail.render import render
from guardrail.text import answers_anything

from . import fields as f
from .arguments import arguments_text
from .chat import FIELD_BREAK, has_text, kind_name, part_field, part_text, shows_nothing

Key = tuple[Any, ...]
Keyed = tuple[tuple[Key, str], ...]

#: an error object: its message is the server's, not the model's
ERROR_FIELDS: dict[str, f.Rule] = {"message": f.skip, "type": f.atom, "code": f.atom, "param": f.echo,
                                   "status": f.atom, "event_id": f.atom}


def error(value: Any, where: str, sent: f.Echo = None) -> None:
    """The rule of an ``error`` field: null, or an error object."""
    if value is not None:
        f.check(f.obj(value, where), where, ERROR_FIELDS, sent)


RESPONSE_FIELDS: dict[str, f.Rule] = {
    **{k: f.atom for k in ("id", "object", "created_at", "completed_at", "status", "model", "usage", "incomplete_details",
                           "service_tier", "billing", "store", "background", "temperature", "top_p", "top_logprobs",
                           "max_output_tokens", "max_tool_calls", "parallel_tool_calls", "truncation",
                           "previous_response_id", "prompt_cache_retention", "obfuscation")},
    # the request, repeated
    **{k: f.echo for k in ("instructions", "tools", "tool_choice", "text", "reasoning", "metadata", "prompt", "user",
                           "conversation", "include", "prompt_cache_key", "safety_identifier")},
    "error": error,
}
ITEM_FIELDS: dict[str, f.Rule] = {k: f.atom for k in ("id", "type", "status", "role", "call_id", "name")}
#: the fields of a search call: what it searched for and found (the retrieved passages, not the answer: skipped);
#: any other field (a ``content`` list, a ``text``) is one the reader does not know to be text-free (round 53: a
#: search call labelled so carried an answer's ``output_text`` part past the guard)
SEARCH_FIELDS: dict[str, f.Rule] = {**ITEM_FIELDS, **{k: f.skip for k in ("action", "queries", "results")}}
#: the fields of a reasoning item: its text (``summary``, ``content``: a trace) is not the answer
REASONING_FIELDS: dict[str, f.Rule] = {**ITEM_FIELDS, **{k: f.skip for k in ("summary", "content",
                                                                             "encrypted_content")}}


def reasoning_trace(item: Any) -> bool:
    """A reasoning item with text a client may show: a ``summary`` or ``reasoning_text`` parts in ``content``."""
    return isinstance(item, dict) and item.get("type") == "reasoning" and (
        has_text(item.get("summary")) or has_text(item.get("content")))

EVENT_FIELDS: dict[str, f.Rule] = {
    **{k: f.atom for k in ("type", "sequence_number", "item_id", "output_index", "content_index", "response_id",
                           "obfuscation", "annotation_index", "summary_index")},
    "annotation": f.citations,
    "logprobs": f.token,
}
FINISHES = ("response.completed", "response.incomplete", "response.failed")
LIFECYCLE = ("response.created", "response.in_progress", "response.queued", *FINISHES)


def item_texts(item: Any, where: str, i: int, echo: f.Echo = None) -> list[tuple[Key, str]]:
    """The keyed texts of output item ``i``."""
    item = f.obj(item, where)
    kind = item.get("type")
    if kind == "message":
        f.check(item, where, ITEM_FIELDS, echo, read=("content",))
        content = item.get("content")
        if content is None or isinstance(content, str):
            return [(("part", i, 0), content or "")]
        if not isinstance(content, list):
            raise UnreadableError(f"{where}.content is {f.describe(content)}, not a list of parts")
        return [(("part", i, j), part_text(part, f"{where}.content[{j}]", echo)) for j, part in enumerate(content)]
    if kind == "function_call":
        f.check(item, where, ITEM_FIELDS, echo, read=("arguments",))
        return [(("args", i), f.text(item.get("arguments"), f"{where}.arguments"))]
    if kind == "custom_tool_call":
        f.check(item, where, ITEM_FIELDS, echo, read=("input",))
        return [(("input", i), f.text(item.get("input"), f"{where}.input"))]
    if kind in ("web_search_call", "file_search_call"):
        f.check(item, where, SEARCH_FIELDS, echo)
        return []
    if kind == "reasoning":
        f.check(item, where, REASONING_FIELDS, echo)
        return []
    raise UnreadableError(f"{where} is an output item of {kind_name(kind)}, which guardrail cannot read")


def _sdk_output_text(output: list[Any]) -> str:
    """``output_text`` as the openai SDK computes it: every ``output_text`` part of every message, joined."""
    return "".join(part["text"] for item in output if isinstance(item, dict) and item.get("type") == "message"
                   and isinstance(item.get("content"), list)
                   for part in item["content"] if isinstance(part, dict) and part.get("type") == "output_text")


def response_texts(body: Any, where: str, echo: f.Echo = None, *, complete: bool = True) -> list[tuple[Key, str]]:
    """The keyed texts of a response object (``complete``: a whole answer, which must have an ``output`` list; a
    stream's ``response.created`` may have none yet)."""
    body = f.obj(body, where)
    f.check(body, where, RESPONSE_FIELDS, echo, read=("output", "output_text"))
    output = body.get("output")
    if output is None and not complete:
        output = []
    if not isinstance(output, list):
        raise UnreadableError(f"{where} has no 'output' list (not a Responses API object)")
    out: list[tuple[Key, str]] = []
    for i, item in enumerate(output):
        out += item_texts(item, f"{where}.output[{i}]", i, echo)
    extra = f.text(body.get("output_text"), f"{where}.output_text")
    if extra and extra != _sdk_output_text(output):
        out.append((("output_text",), extra))
    if complete and any(reasoning_trace(item) for item in output) and (all(shows_nothing(text) for _, text in out)
                                                 or not answers_anything(render("\n".join(text for _, text in out)).text)):
        # a client that shows the reasoning summary shows it as the answer: nothing checked it
        raise UnreadableError(f"{where} has no answer, only a reasoning summary, which guardrail does not check")
    return out


def response_text(body: Any, echo: f.Echo = None) -> str:
    """The text of a whole response: each item's parts joined, items on their own lines, arguments as their
    string values."""
    pieces: list[str] = []
    item = field = None
    for key, text in response_texts(body, "the answer", echo):
        kind = _part_field(body, key)
        if key[0] == "part" and key[1] == item and kind == field and pieces:
            pieces[-1] += text  # parts of one kind run on; a refusal between texts stands apart (join_parts)
            continue
        item, field = (key[1], kind) if key[0] == "part" else (None, None)
        pieces.append(arguments_text(text) if key[0] == "args" else text)
    return FIELD_BREAK.join(p for p in pieces if p)


def _part_field(body: Any, key: Key) -> str | None:
    """For a message part's key: which field holds its text ("text", "refusal"; None for any other key)."""
    if key[0] != "part":
        return None
    content = body["output"][key[1]].get("content")
    if not isinstance(content, list):
        return "text"
    return part_field(content[key[2]])


@dataclass(frozen=True, slots=True)
class EventText:
    """What one stream event says: text it adds, raw argument pieces it adds, full texts it repeats (all keyed),
    and whether it ends the answer."""

    pieces: Keyed = ()
    arguments: Keyed = ()
    snapshots: Keyed = ()
    finish: str | None = None
    #: the event carries reasoning text (a trace some clients show; not the answer, not checked)
    trace: bool = False


#: the fields of a ``response.reasoning*`` event that hold its text
_TRACE_TEXT = ("delta", "text", "part", "summary", "item")


def is_event(payload: dict[str, Any]) -> bool:
    kind = payload.get("type")
    return isinstance(kind, str) and (kind.startswith("response.") or kind == "error")


def read_event(payload: dict[str, Any], echo: f.Echo = None) -> EventText:
    """One Responses stream event (``payload["type"]`` starts with ``response.``, or is ``error``)."""
    kind = payload["type"]
    where = f"a stream event of {kind_name(kind)}"
    oi = f.index(payload.get("output_index"), f"{where}.output_index")
    part = ("part", oi, f.index(payload.get("content_index"), f"{where}.content_index"))

    def fields(*read: str) -> None:
        f.check(payload, where, EVENT_FIELDS, echo, read=read)

    def value(key: str) -> str:
        return f.text(payload.get(key), f"{where}.{key}")

    if kind in ("response.output_text.delta", "response.refusal.delta"):
        fields("delta")
        f.check_token_list(payload.get("logprobs"), f"{where}.logprobs", value("delta"))
        return EventText(pieces=((part, value("delta")),))
    if kind in ("response.output_text.done", "response.refusal.done"):
        key = "text" if kind == "response.output_text.done" else "refusal"
        fields(key)
        f.check_token_list(payload.get("logprobs"), f"{where}.logprobs", value(key))
        return EventText(snapshots=((part, value(key)),))
    if kind in ("response.content_part.added", "response.content_part.done"):
        fields("part")
        return EventText(snapshots=((part, part_text(payload.get("part"), f"{where}.part", echo)),))
    if kind in ("response.output_item.added", "response.output_item.done"):
        fields("item")
        item = payload.get("item")
        trace = reasoning_trace(item)
        return EventText(snapshots=tuple(item_texts(item, f"{where}.item", oi, echo)), trace=trace)
    if kind == "response.function_call_arguments.delta":
        fields("delta")
        return EventText(arguments=((("args", oi), value("delta")),))
    if kind == "response.function_call_arguments.done":
        fields("arguments", "name")
        f.atom(payload.get("name"), f"{where}.name")
        return EventText(snapshots=((("args", oi), value("arguments")),))
    if kind == "response.custom_tool_call_input.delta":
        fields("delta")
        return EventText(pieces=((("input", oi), value("delta")),))
    if kind == "response.custom_tool_call_input.done":
        fields("input")
        return EventText(snapshots=((("input", oi), value("input")),))
    if kind == "response.audio.transcript.delta":
        fields("delta")
        return EventText(pieces=((("transcript",), value("delta")),))
    if kind == "response.audio.delta":
        fields("delta")
        f.base64(payload.get("delta"), f"{where}.delta")
        return EventText()
    if kind in LIFECYCLE:
        fields("response")
        response = payload.get("response")
        texts = () if response is None else tuple(response_texts(response, f"{where}.response", echo, complete=False))
        return EventText(snapshots=texts, finish=kind if kind in FINISHES else None)
    if kind.startswith("response.reasoning"):  # a reasoning trace is not the answer, but a client may show it
        return EventText(trace=has_text({k: v for k, v in payload.items() if k in _TRACE_TEXT}))
    if kind == "error":
        f.check(payload, where, {**EVENT_FIELDS, **ERROR_FIELDS}, echo)
        return EventText()
    # every other event (audio.done, annotation.added, search progress, events added later): text-free fields only
    fields()
    return EventText()
