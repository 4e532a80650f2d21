"""OpenAI wire formats: read every assistant-visible text of an answer, and rewrite blocked ones.

One package for every integration (middleware, gateway, client wrapper, demo), so that a shape one of
them can read is a shape all of them check. It knows nothing of ours but text.

Read everything or refuse. Read, per choice (``choices[i]``; the Responses API has one answer):

- chat completions: ``message.content`` as a string or a list of parts (``text``/``output_text``/``refusal``),
  ``message.refusal``, ``message.audio.transcript``, ``message.tool_calls[].function.arguments`` and
  ``.custom.input``, legacy ``message.function_call.arguments``;
- legacy completions: ``text``;
- Responses API: ``output[]`` messages (``output_text`` and ``refusal`` parts), ``function_call`` arguments,
  ``custom_tool_call`` input, and a top-level ``output_text`` that is not the concatenation of those parts;
- SSE chunks of all three: the same fields of ``delta`` (``audio.transcript`` included), completions ``text``, and
  every Responses event that carries text: ``*.delta`` ones, and the ones that repeat it in full (``*.done``,
  ``content_part.*``, ``output_item.*``, ``response.created/completed/...``), held against what was streamed.

Every other field of every object is either known to be text-free (:mod:`~guardrail.wire.fields`: identifiers,
enums, counts, logprobs tokens, base64 data, request echoes) or makes the body or event unreadable
(:class:`UnreadableError`), as do two answer shapes at once (``choices`` and ``output``; a choice with ``message``
and ``text``; a chunk with a ``response.*`` type; a stream that mixes them) and duplicate JSON keys. A reasoning trace
(``reasoning_content``, Responses ``reasoning`` items and events) and web/file search calls are not the answer and
are not checked. Logprobs tokens beside a text (a choice's, a content part's, a Responses part's or delta event's)
spell that text, and so do their ``bytes`` together (a token that shows U+FFFD or half a surrogate pair carries a
piece of a character); an error's message beside an answer (``response.failed``, a Responses object with ``error``)
is withheld, as nothing checked it.

Tool-call arguments are read as the text of their string values (``{"answer": "..."}`` is checked as
"..."), streamed ones incrementally (:class:`DeltaReader`, :class:`ArgumentsReader`).

A body is classified by its content, not its label (:class:`Sniffer`). :class:`SSEParser` reads an event stream as
the WHATWG EventSource rules do (a leading BOM, ``data:`` with or without a space, CR/LF/CRLF line ends, comments,
multi-line data), incrementally: each byte is scanned once, lines end at CR, LF or CRLF only (never at U+2028 inside
a JSON string), an event is bounded in size, and a line that is not a field every client reads the same way
(``data``, ``event``, ``id``, ``retry``, a comment) makes its event unreadable.

Modules (this package re-exports their public names, so ``from guardrail import wire; wire.read_answers`` works):
:mod:`~guardrail.wire.body` (``loads``, ``Decoder``, ``sniff``, ``MAX_BODY_BYTES``), :mod:`~guardrail.wire.sse`
(``SSEParser``, ``SSEEvent``, ``event_bytes``, ``DONE``, ``shown_alike``), :mod:`~guardrail.wire.classify` (``Sniffer``,
``read_answers``, ``request_strings``), :mod:`~guardrail.wire.chat` (messages, field rules, the rewriting of
answers), :mod:`~guardrail.wire.completions`, :mod:`~guardrail.wire.responses` (Responses objects and events),
:mod:`~guardrail.wire.deltas` (stream deltas and the rewriting of stream events), :mod:`~guardrail.wire.fields`
(what a field that is not text may hold), :mod:`~guardrail.wire.arguments` (tool-call arguments).
"""

from __future__ import annotations

from .arguments import ArgumentsReader, arguments_text
from .body import MAX_BODY_BYTES, Decoder, check_charset, loads, sniff
from .chat import Answer, iter_texts, replace_answers
from .classify import Sniffer, is_event_stream, read_answers, request_strings
from .fields import MAX_CHOICES, is_atom
from .deltas import ORIGIN_KEY, WITHHELD, Delta, DeltaReader, only_content, read_deltas, stop_events, with_text, withhold_error_messages
from .sse import DONE, SSEEvent, SSEParser, event_bytes, shown_alike

__all__ = [
    "DONE",
    "MAX_BODY_BYTES",
    "MAX_CHOICES",
    "is_atom",
    "Answer",
    "ArgumentsReader",
    "Decoder",
    "Delta",
    "DeltaReader",
    "SSEEvent",
    "SSEParser",
    "shown_alike",
    "Sniffer",
    "arguments_text",
    "check_charset",
    "event_bytes",
    "is_event_stream",
    "iter_texts",
    "loads",
    "only_content",
    "read_answers",
    "read_deltas",
    "replace_answers",
    "request_strings",
    "sniff",
    "stop_events",
    "with_text",
    "withhold_error_messages",
    "WITHHELD",
    "ORIGIN_KEY",
]
