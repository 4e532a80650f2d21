"""OpenAI wire formats: read every assistant-visible text of an answer, and rewrite blocked ones.

One package for every integration (middleware, gateway, client wrapper, demo), so that a shape one of
them can read is a shape all of them check. It knows nothing of ours but text.

Covered, per choice (``choices[i]``; the Responses API has one answer):

- chat completions: ``message.content`` as a string or a list of parts (``{"type": "text", "text"}``),
  ``message.refusal``, ``message.tool_calls[].function.arguments``, legacy ``message.function_call.arguments``;
- legacy completions: ``text``;
- Responses API: ``output[]`` messages (``output_text`` and ``refusal`` parts), ``function_call`` arguments;
- SSE chunks of all three: ``delta.content`` (string or parts), ``delta.refusal``, ``delta.tool_calls``,
  ``delta.function_call``, completions ``text``, and the Responses ``response.*.delta`` events.

Tool-call arguments are read as the text of their string values (``{"answer": "..."}`` is checked as
"..."), streamed ones incrementally (:class:`DeltaReader`, :class:`ArgumentsReader`). A reasoning trace (``reasoning_content``) is not the answer and is not checked.

Anything else raises :class:`UnreadableError`: a reader that guesses lets an unknown shape through
unchecked. :class:`SSEParser` reads an event stream incrementally: each byte is scanned once, lines
end at CR, LF or CRLF only (never at U+2028 inside a JSON string), and an event is bounded in size.

Modules (this package re-exports their public names, so ``from guardrail import wire; wire.read_answers`` works):
:mod:`~guardrail.wire.body` (``loads``, ``Decoder``, ``sniff``, ``MAX_BODY_BYTES``), :mod:`~guardrail.wire.sse`
(``SSEParser``, ``SSEEvent``, ``event_bytes``, ``DONE``), :mod:`~guardrail.wire.chat` (answers and their rewriting),
:mod:`~guardrail.wire.deltas` (stream deltas and the rewriting of stream events), :mod:`~guardrail.wire.arguments`
(tool-call arguments, ``ArgumentsReader``).
"""

from __future__ import annotations

from .arguments import ArgumentsReader, arguments_text
from .body import MAX_BODY_BYTES, Decoder, loads, sniff
from .chat import Answer, iter_texts, read_answers, replace_answers
from .deltas import Delta, DeltaReader, only_content, read_deltas, stop_events, with_text
from .sse import DONE, SSEEvent, SSEParser, event_bytes

__all__ = [
    "DONE",
    "MAX_BODY_BYTES",
    "Answer",
    "ArgumentsReader",
    "Decoder",
    "Delta",
    "DeltaReader",
    "SSEEvent",
    "SSEParser",
    "arguments_text",
    "event_bytes",
    "iter_texts",
    "loads",
    "only_content",
    "read_answers",
    "read_deltas",
    "replace_answers",
    "sniff",
    "stop_events",
    "with_text",
]
