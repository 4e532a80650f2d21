"""Answers: every assistant-visible text of a chat completion, completion or Responses API object
(:func:`read_answers`), and the rewriting of blocked ones (:func:`replace_answers`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from guardrail.errors import UnreadableError

from .arguments import arguments_text


def _parts_text(parts: Any, where: str) -> str:
    if parts is None:
        return ""
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list):
        raise UnreadableError(f"{where} is a {type(parts).__name__}, not text or a list of parts")
    out = []
    for part in parts:
        if not isinstance(part, dict):
            raise UnreadableError(f"{where} holds a {type(part).__name__} part")
        kind = part.get("type")
        if kind in ("text", "output_text", "input_text") and isinstance(part.get("text"), str):
            out.append(part["text"])
        elif kind == "refusal" and isinstance(part.get("refusal"), str):
            out.append(part["refusal"])
        else:
            raise UnreadableError(f"{where} holds a part of type {kind!r} that guardrail cannot read")
    return "".join(out)


def _str_or_none(value: Any, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise UnreadableError(f"{where} is a {type(value).__name__}, not a string")
    return value


def _join(pieces: list[str]) -> str:
    return "\n".join(p for p in pieces if p)


def _assistant_text(msg: Any, where: str) -> str:
    """Every assistant-visible text of a message."""
    text, _ = _message_pieces(msg, where, streamed=False)
    return text


def _message_pieces(msg: Any, where: str, *, streamed: bool) -> tuple[str, list[tuple[Any, str]]]:
    """The text of a message, or (``streamed``) of a chunk's delta plus its raw tool-call argument pieces by tool-call
    key: streamed arguments are pieces of one JSON document, read by an :class:`ArgumentsReader` per tool call."""
    if msg is None and streamed:
        return "", []
    if not isinstance(msg, dict):
        raise UnreadableError(f"{where} is a {type(msg).__name__}, not an object")
    pieces = [_parts_text(msg.get("content"), f"{where}.content"), _str_or_none(msg.get("refusal"), f"{where}.refusal")]
    raw: list[tuple[Any, str]] = []
    calls = msg.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            raise UnreadableError(f"{where}.tool_calls is not a list")
        for i, call in enumerate(calls):
            fn = call.get("function") if isinstance(call, dict) else None
            if not isinstance(call, dict) or (fn is None and not streamed):
                raise UnreadableError(f"{where}.tool_calls[{i}] is not an object with a function")
            if fn is None:
                continue
            if not isinstance(fn, dict):
                raise UnreadableError(f"{where}.tool_calls[{i}].function is not an object")
            arguments = _str_or_none(fn.get("arguments"), f"{where}.tool_calls[{i}].function.arguments")
            if streamed:
                key = call.get("index", i)
                raw.append((("tool", key if isinstance(key, int) and not isinstance(key, bool) else i), arguments))
            else:
                pieces.append(arguments_text(arguments))
    legacy = msg.get("function_call")
    if legacy is not None:
        if not isinstance(legacy, dict):
            raise UnreadableError(f"{where}.function_call is not an object")
        arguments = _str_or_none(legacy.get("arguments"), f"{where}.function_call.arguments")
        if streamed:
            raw.append((("function_call",), arguments))
        else:
            pieces.append(arguments_text(arguments))
    return ("".join(pieces), raw) if streamed else (_join(pieces), raw)


@dataclass(frozen=True, slots=True)
class Answer:
    """The assistant-visible text of one choice (``index`` is its position in ``choices``)."""

    index: int
    text: str


def read_answers(body: Any) -> list[Answer]:
    """Every choice's text of a chat completion, completion or Responses API object; UnreadableError otherwise."""
    if not isinstance(body, dict):
        raise UnreadableError(f"the answer is a JSON {type(body).__name__}, not an object")
    if body.get("object") == "response" or ("output" in body and "choices" not in body):
        return [Answer(0, _response_text(body))]
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        raise UnreadableError("the answer has no 'choices' list (not an OpenAI chat/completions/responses object)")
    out = []
    for i, choice in enumerate(choices):
        where = f"choices[{i}]"
        if not isinstance(choice, dict):
            raise UnreadableError(f"{where} is a {type(choice).__name__}, not an object")
        if "message" in choice:
            out.append(Answer(i, _assistant_text(choice["message"], f"{where}.message")))
        elif "text" in choice:
            out.append(Answer(i, _str_or_none(choice["text"], f"{where}.text")))
        else:
            raise UnreadableError(f"{where} has neither 'message' nor 'text'")
    return out


def _response_text(body: dict[str, Any]) -> str:
    output = body.get("output")
    if not isinstance(output, list):
        raise UnreadableError("the Responses API object has no 'output' list")
    pieces = []
    for i, item in enumerate(output):
        where = f"output[{i}]"
        if not isinstance(item, dict):
            raise UnreadableError(f"{where} is not an object")
        kind = item.get("type")
        if kind == "message":
            pieces.append(_parts_text(item.get("content"), f"{where}.content"))
        elif kind in ("function_call", "custom_tool_call"):
            pieces.append(arguments_text(_str_or_none(item.get("arguments", item.get("input")), f"{where}.arguments")))
        elif kind in ("reasoning", "web_search_call", "file_search_call"):
            continue  # not answer text
        else:
            raise UnreadableError(f"{where} has type {kind!r}, which guardrail cannot read")
    return _join(pieces)


def replace_answers(body: dict[str, Any], indices: set[int], text: str) -> dict[str, Any]:
    """Replace the text of the given choices (all of a Responses object) by ``text``, drop their tool calls,
    and mark them ``finish_reason: "content_filter"``. Returns ``body`` (changed in place)."""
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
            for key in ("tool_calls", "function_call", "refusal"):
                msg.pop(key, None)
            msg["content"] = text
        else:
            choice["text"] = text
        choice["finish_reason"] = "content_filter"
    return body


def iter_texts(answers: list[Answer]) -> Iterator[tuple[int, str]]:
    for a in answers:
        yield a.index, a.text
