"""Chat completions: every assistant-visible text of a message or a stream's delta (content as a string or parts,
refusal, audio transcript, tool-call and function-call arguments, custom tool input), the field rules of chat and
completions objects, and the rewriting of blocked answers (:func:`replace_answers`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from guardrail.errors import UnreadableError
from guardrail.render import render
from guardrail.text import answers_anything

from . import fields as f
from .arguments import arguments_text

#: fields of a message (or a stream's delta) that are not answer text; content, refusal, audio, tool_calls and
#: function_call are read. A reasoning trace is not the answer and is not checked.
REASONING = {"reasoning_content": f.skip, "reasoning": f.skip, "reasoning_details": f.skip}
MESSAGE_FIELDS: dict[str, f.Rule] = {"role": f.atom, "name": f.atom, "annotations": f.citations, **REASONING}
PART_FIELDS: dict[str, f.Rule] = {"type": f.atom, "annotations": f.citations, "logprobs": f.token}
AUDIO_FIELDS: dict[str, f.Rule] = {"id": f.atom, "data": f.base64, "expires_at": f.atom, "format": f.atom}
TOOL_CALL_FIELDS: dict[str, f.Rule] = {"id": f.atom, "type": f.atom, "index": f.atom}
FUNCTION_FIELDS: dict[str, f.Rule] = {"name": f.atom}
#: fields of a choice besides its answer (``message``, ``delta`` or ``text``); a stop string repeats the request
CHOICE_FIELDS: dict[str, f.Rule] = {
    "index": f.atom, "finish_reason": f.atom, "logprobs": f.token, "stop_reason": f.echo, "matched_stop": f.echo,
    "native_finish_reason": f.atom, "content_filter_results": f.atom, "content_filter_offsets": f.atom,
}
#: fields of a chat completion, a completion or one of their stream chunks besides ``choices`` (vendor ones included)
TOP_FIELDS: dict[str, f.Rule] = {
    "id": f.atom, "object": f.atom, "created": f.atom, "model": f.atom, "usage": f.atom, "system_fingerprint": f.atom,
    "service_tier": f.atom, "obfuscation": f.atom, "prompt_filter_results": f.atom, "x_groq": f.atom,
    "provider": f.atom, "citations": f.atom,
}
#: the keys of a choice that hold its answer, one per shape
ANSWER_SHAPES = ("message", "delta", "text")

_TEXT_PARTS = {"text": "text", "output_text": "text", "input_text": "text", "refusal": "refusal"}


def kind_name(kind: Any) -> str:
    """A ``type`` value for a message: quoted when it is an identifier, never when it is prose."""
    return repr(kind) if isinstance(kind, str) and len(kind) <= 60 and f.is_atom(kind) else "an unknown type"


def part_text(part: Any, where: str, echo: f.Echo = None) -> str:
    """The text of one content part (``text``, ``output_text``, ``input_text`` or ``refusal``)."""
    if not isinstance(part, dict):
        raise UnreadableError(f"{where} is {f.describe(part)}, not a content part")
    kind = part.get("type")
    key = _TEXT_PARTS.get(kind) if isinstance(kind, str) else None
    if key is None or not isinstance(part.get(key), str):
        raise UnreadableError(f"{where} is a part of {kind_name(kind)} that guardrail cannot read")
    f.check(part, where, PART_FIELDS, echo, read=(key,))
    f.check_token_list(part.get("logprobs"), f"{where}.logprobs", part[key])  # the tokens spell the part's text
    return str(part[key])


def _parts_text(parts: Any, where: str, echo: f.Echo = None) -> str:
    if parts is None:
        return ""
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list):
        raise UnreadableError(f"{where} is {f.describe(parts)}, not text or a list of parts")
    texts = [part_text(part, f"{where}[{j}]", echo) for j, part in enumerate(parts)]
    return join_parts(texts, [part_field(part) for part in parts])


def part_field(part: Any) -> str | None:
    """Which field of a (read) content part holds its text: "text" or "refusal"."""
    kind = part.get("type") if isinstance(part, dict) else None
    return _TEXT_PARTS.get(kind) if isinstance(kind, str) else None


def join_parts(texts: list[str], fields: list[str | None]) -> str:
    """The texts of a message's parts as a client shows them: parts of one kind run on ("Gift cards can" + " be
    returned."), a refusal between texts stands apart (:data:`FIELD_BREAK`): the SDK's ``output_text`` and LangChain's
    ``.text()`` show the text parts without the refusal, so no sentence is read across a change of kind."""
    out = ""
    for k, text in enumerate(texts):
        if k and fields[k] != fields[k - 1]:
            out += FIELD_BREAK
        out += text
    return out


def _str_or_none(value: Any, where: str) -> str:
    return f.text(value, where)


#: what stands between two texts of one answer (content and refusal, two tool calls...): a paragraph break, so that
#: no sentence is read across them (a client shows each on its own)
FIELD_BREAK = "\n\n"


def _join(pieces: list[str]) -> str:
    return FIELD_BREAK.join(p for p in pieces if p)


def _assistant_text(msg: Any, where: str, echo: f.Echo = None) -> str:
    """Every assistant-visible text of a message."""
    text, _ = _message_pieces(msg, where, streamed=False, echo=echo)
    return text


def _audio_transcript(audio: Any, where: str, echo: f.Echo) -> str:
    if audio is None:
        return ""
    audio = f.obj(audio, where)
    f.check(audio, where, AUDIO_FIELDS, echo, read=("transcript",))
    return f.text(audio.get("transcript"), f"{where}.transcript")


def _message_pieces(msg: Any, where: str, *, streamed: bool, echo: f.Echo = None,
                    keyed: list[tuple[Any, str]] | None = None) -> tuple[str, list[tuple[Any, str]]]:
    """The text of a message, or (``streamed``) of a chunk's delta plus its raw tool-call argument pieces by tool-call
    key: streamed arguments are pieces of one JSON document, read by an :class:`ArgumentsReader` per tool call.
    ``keyed`` (streamed): filled with the delta's text pieces by the field they belong to (content, refusal, audio
    transcript, a custom tool's input), which a stream must not interleave. Every field is read or text-free
    (:mod:`~guardrail.wire.fields`); anything else is unreadable."""
    if msg is None and streamed:
        return "", []
    if not isinstance(msg, dict):
        raise UnreadableError(f"{where} is {f.describe(msg)}, not an object")
    f.check(msg, where, MESSAGE_FIELDS, echo, read=("content", "refusal", "audio", "tool_calls", "function_call"))
    pieces = [_parts_text(msg.get("content"), f"{where}.content", echo), f.text(msg.get("refusal"), f"{where}.refusal"),
              _audio_transcript(msg.get("audio"), f"{where}.audio", echo)]
    raw: list[tuple[Any, str]] = []
    calls = msg.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            raise UnreadableError(f"{where}.tool_calls is not a list")
        for i, call in enumerate(calls):
            w = f"{where}.tool_calls[{i}]"
            if not isinstance(call, dict):
                raise UnreadableError(f"{w} is not an object with a function")
            f.check(call, w, TOOL_CALL_FIELDS, echo, read=("function", "custom"))
            fn, custom = call.get("function"), call.get("custom")
            if fn is not None and custom is not None:
                raise UnreadableError(f"{w} carries two tool-call shapes at once (function and custom)")
            if custom is not None:  # a custom tool's input is free text
                custom = f.obj(custom, f"{w}.custom")
                f.check(custom, f"{w}.custom", FUNCTION_FIELDS, echo, read=("input",))
                pieces.append(f.text(custom.get("input"), f"{w}.custom.input"))
                if keyed is not None:
                    key = call.get("index", i)
                    keyed.append((("custom", key if isinstance(key, int) and not isinstance(key, bool) else i),
                                  pieces[-1]))
                continue
            if fn is None:
                if not streamed:
                    raise UnreadableError(f"{w} is not an object with a function")
                continue  # a streamed tool call's first piece: its id and type
            fn = f.obj(fn, f"{w}.function")
            f.check(fn, f"{w}.function", FUNCTION_FIELDS, echo, read=("arguments",))
            arguments = f.text(fn.get("arguments"), f"{w}.function.arguments")
            if streamed:
                key = call.get("index", i)
                raw.append((("tool", key if isinstance(key, int) and not isinstance(key, bool) else i), arguments))
            else:
                pieces.append(arguments_text(arguments))
    legacy = msg.get("function_call")
    if legacy is not None:
        legacy = f.obj(legacy, f"{where}.function_call")
        f.check(legacy, f"{where}.function_call", FUNCTION_FIELDS, echo, read=("arguments",))
        arguments = f.text(legacy.get("arguments"), f"{where}.function_call.arguments")
        if streamed:
            raw.append((("function_call",), arguments))
        else:
            pieces.append(arguments_text(arguments))
    if streamed:
        if keyed is not None:
            keyed[:0] = [(key, p) for key, p in zip((("content",), ("refusal",), ("audio",)), pieces[:3]) if p]
            keyed[:] = [(key, p) for key, p in keyed if p]
        return "".join(pieces), raw
    text = _join(pieces)
    trace = next((k for k in REASONING if has_text(msg.get(k))), None)
    if trace is not None and (shows_nothing(text) or not answers_anything(render(text).text)):
        # a client that shows the trace shows it as the answer ("Hope this helps!" beside it answers nothing): nothing
        # checked it
        raise UnreadableError(f"{where} has no answer, only a reasoning trace ({trace}), which guardrail does not "
                              "check (raise max_tokens so the model reaches its answer)")
    return text, raw


#: markup that shows nothing: HTML comments, tags, entities, markdown emphasis and rule marks
_SILENT_MARKUP = re.compile(r"<!--.*?(?:-->|$)|</?[A-Za-z][^<>]*>|&[#0-9A-Za-z]{1,32};?|[*_~`#>|=-]+", re.S)


def shows_nothing(text: str) -> bool:
    """No letter or digit a reader would see: blank characters (zero-width, word joiners, blank letters) and markup
    that renders to nothing ("**", "<br>", "<!-- -->", "&nbsp;") only."""
    return not any(not f.is_blank(ch) for ch in _SILENT_MARKUP.sub("", text))


def has_text(value: Any) -> bool:
    """A reasoning field that holds any text (a string, or one inside a list or an object)."""
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, dict):
        return any(has_text(v) for v in value.values())
    if isinstance(value, list):
        return any(has_text(v) for v in value)
    return False


def answer_shape(choice: dict[str, Any], where: str) -> str | None:
    """Which answer a choice carries (``message``, ``delta`` or ``text``), None for none; two at once are
    unreadable (a client may read either)."""
    shapes = [k for k in ANSWER_SHAPES if k in choice]
    if len(shapes) > 1:
        raise UnreadableError(f"{where} carries two answer shapes at once ({' and '.join(shapes)})")
    return shapes[0] if shapes else None


def choice_text(choice: dict[str, Any], where: str, echo: f.Echo = None) -> str:
    """The text of a chat completion's choice (``message``)."""
    f.check(choice, where, CHOICE_FIELDS, echo, read=("message",))
    text = _assistant_text(choice["message"], f"{where}.message", echo)
    check_token_spelling(choice, text, where)
    return text


def check_token_spelling(choice: dict[str, Any], text: str, where: str) -> None:
    """A choice's logprobs tokens (``content`` and ``refusal``) spell its content and its refusal (a chunk's: its
    delta's), whole and in order; anything else is unreadable."""
    if choice.get("logprobs") is None:
        return
    message = choice.get("message") if isinstance(choice.get("message"), dict) else choice.get("delta")
    message = message if isinstance(message, dict) else {}
    content = message.get("content")
    if isinstance(content, list):  # parts: their texts in order
        content = "".join(str(p.get("text") or p.get("refusal") or "") for p in content if isinstance(p, dict))
    refusal = message.get("refusal")
    # a field that is empty leaves its tokens to spell the choice's text (an answer in a tool call or a transcript)
    f.check_logprobs(choice["logprobs"], where, {"content": content if isinstance(content, str) and content else text,
                                                  "refusal": refusal if isinstance(refusal, str) and refusal else text})


@dataclass(frozen=True, slots=True)
class Answer:
    """The assistant-visible text of one choice (``index`` is its position in ``choices``)."""

    index: int
    text: str


def replace_answers(body: dict[str, Any], indices: set[int], text: str) -> dict[str, Any]:
    """Replace the text of the given choices (all of a Responses object) by ``text``, drop every other text they
    carry (tool calls, refusal, audio, annotations, logprobs), and mark them ``finish_reason: "content_filter"``.
    Returns ``body`` (changed in place)."""
    if "choices" not in body:
        body["output"] = [{"type": "message", "role": "assistant", "status": "completed",
                           "content": [{"type": "output_text", "text": text, "annotations": []}]}]
        if "output_text" in body:
            body["output_text"] = text
        return body
    for i in indices:
        choice = body["choices"][i]
        if "message" in choice:
            msg = choice["message"]
            for key in ("tool_calls", "function_call", "refusal", "audio", "annotations"):
                msg.pop(key, None)
            msg["content"] = text
        else:
            choice["text"] = text
        if choice.get("logprobs") is not None:
            choice["logprobs"] = None  # the tokens of the text it replaced
        choice["finish_reason"] = "content_filter"
    return body


def iter_texts(answers: list[Answer]) -> Iterator[tuple[int, str]]:
    for a in answers:
        yield a.index, a.text
