"""The gateway's requests: their bounds (:class:`RequestLimits`) and their validation (:func:`validate_request`), both
before the upstream is called or any model work starts (see :mod:`guardrail.server`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from guardrail import wire
from guardrail.asgi import MAX_REQUEST_BYTES, ambiguous_request, prompt_question, request_contexts
from guardrail.asgi_stream import MAX_STREAM_EVENTS
from guardrail.errors import ConfigurationError, InputError

#: nesting deeper than this in a request is refused (400), not parsed into a RecursionError
MAX_REQUEST_DEPTH = 64


@dataclass(frozen=True)
class RequestLimits:
    """Bounds of one gateway request, checked before the upstream is called and before any model work; over a
    bound the request is refused with a 4xx that names it (an upstream answer over its bound: 502).

    CPU budget (measured with the shipped models on one core): the contexts cost about 0.1 ms per character (their
    windows are embedded for retrieval relevance and indexed for faithfulness), so the default 100,000 characters
    keep them near 10 s at worst and typical RAG requests (10-20k characters) near 1-2 s; each answer costs about
    0.3 ms per character against typical contexts, and more against long ones (the rules compare each sentence with
    the contexts: about 0.7 ms per character against 100k characters through the gateway, 1.7 ms before premise
    ranking moved to arrays, round 57), bounded by the evaluator (``FaithfulnessConfig.max_response_chars``); there
    are at most ``max_choices`` answers, and the question is read from its last 4,000 characters
    (``Evaluator(max_question_chars=...)``). A check whose client went away, or that ran past
    ``Policy.latency_budget_s``, stops at its next step. Lower the limits for a tighter budget."""

    #: request body (413)
    max_body_bytes: int = MAX_REQUEST_BYTES
    #: JSON nesting of the request (400)
    max_depth: int = MAX_REQUEST_DEPTH
    #: ``n``: answers per request, each of them checked (400)
    max_choices: int = wire.MAX_CHOICES
    #: retrieved chunks per request (400)
    max_contexts: int = 256
    #: total characters of the contexts (400); the evaluator's ``max_context_chars`` applies too; None: only that
    max_context_chars: int | None = 100_000
    #: an upstream answer, decoded (a JSON body, or a whole stream) (502 / an error event)
    max_upstream_bytes: int = wire.MAX_BODY_BYTES
    #: events of an upstream stream, comments and empty events included (over it: unreadable, per on_error)
    max_stream_events: int = MAX_STREAM_EVENTS
    #: seconds a request body may take to arrive (408): a body that trickles in holds a connection
    body_timeout_s: float = 30.0

    def __post_init__(self) -> None:
        for name in ("max_body_bytes", "max_depth", "max_choices", "max_contexts", "max_upstream_bytes",
                     "max_stream_events"):
            if getattr(self, name) < 1:
                raise ConfigurationError(f"RequestLimits.{name} must be at least 1, got {getattr(self, name)}")
        if not self.body_timeout_s > 0:
            raise ConfigurationError(f"RequestLimits.body_timeout_s must be above 0, got {self.body_timeout_s}")
        if self.max_choices > wire.MAX_CHOICES:
            raise ConfigurationError(f"RequestLimits.max_choices is at most {wire.MAX_CHOICES} (the answers' readers "
                                     f"check that many choices per answer), got {self.max_choices}")
        if self.max_context_chars is not None and self.max_context_chars < 1:
            raise ConfigurationError(f"RequestLimits.max_context_chars must be at least 1, got {self.max_context_chars}")


_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = np.zeros(256, dtype=np.int32)
_STEP[[0x5B, 0x7B]] = 1
_STEP[[0x5D, 0x7D]] = -1


def json_depth(raw: bytes) -> int:
    """Deepest bracket nesting of a JSON text (brackets inside strings counted too: an upper bound). Vectorized, in
    slices of 1 MB: 10 MB of brackets take milliseconds and little memory."""
    brackets = raw.translate(None, _NOT_BRACKETS)
    best = level = 0
    for i in range(0, len(brackets), 1 << 20):
        levels = np.cumsum(_STEP[np.frombuffer(brackets[i : i + (1 << 20)], dtype=np.uint8)]) + level
        best = max(best, int(levels.max()))
        level = int(levels[-1])
    return best



#: a request body above this is parsed with Python hooks (see :func:`validate_request`)
_LONG_REQUEST_BYTES = 256 * 1024


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    return dict(pairs)  # a Python call: the interpreter may hand the GIL to the event loop here


def _number(text: str) -> int | float:
    return float(text) if any(c in text for c in ".eE") else int(text)


def dumps(payload: Any) -> bytes:
    """The request as UTF-8 JSON (UnicodeEncodeError for a lone surrogate). A large one is written by the Python
    encoder, which lets the event loop run as it writes (the C encoder holds the GIL to the end: 0.35 s for 340,000
    content parts)."""
    encoder = json.JSONEncoder(ensure_ascii=False)
    text = "".join(encoder.iterencode(payload)) if _large(payload) else encoder.encode(payload)
    return text.encode("utf-8")


def _large(payload: Any) -> bool:
    messages = payload.get("messages") if isinstance(payload, dict) else None
    if not isinstance(messages, list):
        return False
    parts = 0
    for m in messages[:1000]:
        content = m.get("content") if isinstance(m, dict) else None
        parts += len(content) if isinstance(content, list) else 0
    return len(messages) > 1000 or parts > 1000


def validate_request(raw: bytes, limits: RequestLimits | None = None, *, max_context_chars: int | None = None) -> dict[str, Any]:
    """The request as a dict, or InputError saying what is wrong (a 400, never a 500)."""
    limits = limits or RequestLimits()
    if json_depth(raw) > limits.max_depth:
        raise InputError(f"the request JSON is nested deeper than {limits.max_depth} levels")
    try:
        # a large body is read with a Python call per object and number: the C parser holds the GIL for as long as
        # it reads, and the event loop waited for it (340,000 content parts: /healthz 2.4 s, round 30); each call lets
        # it run
        payload = json.loads(raw, object_pairs_hook=_object, parse_int=_number, parse_float=_number) \
            if len(raw) > _LONG_REQUEST_BYTES else json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        raise InputError("the request body must be a JSON object (OpenAI chat/completions format)") from None
    except ValueError:  # an integer past Python's digit limit (sys.get_int_max_str_digits)
        raise InputError("the request JSON holds a number too long to read (over 4,300 digits)") from None
    if not isinstance(payload, dict):
        raise InputError("the request body must be a JSON object (OpenAI chat/completions format)")
    _check_fields(payload, limits)
    _check_contexts(payload, limits, max_context_chars)
    try:
        dumps(payload)
    except UnicodeEncodeError as exc:
        raise InputError(f"the request holds a lone surrogate (broken Unicode) at {exc.start}; send valid UTF-8 text") from None
    return payload


def _check_fields(payload: dict[str, Any], limits: RequestLimits) -> None:
    """The types of the fields the gateway reads (``messages``, ``contexts``/``documents``, ``stream``) and ``n``."""
    messages = payload.get("messages")
    if messages is not None:
        if not isinstance(messages, list):
            raise InputError(f"'messages' must be a list of message objects, got {type(messages).__name__}")
        for i, m in enumerate(messages):
            if not isinstance(m, dict) or not isinstance(m.get("role"), str):
                raise InputError(f"messages[{i}] must be an object with a string 'role'")
            content = m.get("content")
            if content is not None and not isinstance(content, (str, list)):
                raise InputError(f"messages[{i}].content must be a string or a list of parts, got {type(content).__name__}")
    _, problem = request_contexts(payload)
    if problem is not None:
        raise InputError(problem)
    problem = ambiguous_request(payload)
    if problem is not None:
        raise InputError(problem)
    messages = payload.get("messages")
    if not (isinstance(messages, list) and any(isinstance(m, dict) and m.get("role") == "user" for m in messages)):
        _, problem = prompt_question(payload)  # no user message ("messages": null or []): the prompt is the question
        if problem is not None:
            raise InputError(problem)
    if "stream" in payload and not isinstance(payload["stream"], bool):
        raise InputError("'stream' must be true or false")
    n = payload.get("n")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise InputError(f"'n' must be a positive integer, got {n!r}")
    if n is not None and n > limits.max_choices:
        raise InputError(f"'n' is {n}, over the limit of {limits.max_choices} answers per request "
                         "(each answer is checked; RequestLimits.max_choices)")


def _check_contexts(payload: dict[str, Any], limits: RequestLimits, max_context_chars: int | None) -> None:
    """The number of contexts and their total size."""
    chunks, _ = request_contexts(payload)
    if chunks is not None:
        if len(chunks) > limits.max_contexts:
            raise InputError(f"the request has {len(chunks):,} contexts, over the limit of {limits.max_contexts:,} "
                             "(RequestLimits.max_contexts)")
        caps = [c for c in (limits.max_context_chars, max_context_chars) if c is not None]
        if caps:
            cap = min(caps)
            total = sum(len(c) for c in chunks)
            if total > cap:
                raise InputError(f"the contexts total {total:,} characters, over the limit of {cap:,} "
                                 "(max_context_chars); send fewer or shorter chunks (refused before the upstream is "
                                 "called)")
