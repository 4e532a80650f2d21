"""Guard an ``openai.OpenAI`` / ``openai.AsyncOpenAI`` client's chat completions.

>>> import openai
>>> client = guard_openai(openai.OpenAI(), guard)                                    # doctest: +SKIP
>>> completion = client.chat.completions.create(
...     model="gpt-4o-mini", messages=[{"role": "user", "content": question}],
...     contexts=retrieved_chunks,            # the passages the answer must be supported by
... )                                                                                # doctest: +SKIP
>>> completion.guardrail.action, completion.guardrail.reasons                        # doctest: +SKIP

- ``contexts=`` (a list of strings) is taken off the request before it goes upstream; ``question=``
  may override the default question (the last user message).
- Every choice is checked (``n=2`` works, and so does an upstream that sends more choices than asked for).
- Non-streaming: the verdict is ``completion.guardrail`` (the worst choice's; each choice's in
  ``completion.guardrail_choices``). Block raises :class:`GuardrailBlocked`; fallback replaces the failing choices'
  messages with the policy's fallback and sets their ``finish_reason="content_filter"``.
- Streaming (``stream=True``): chunks pass through as they come in flag mode; in block/fallback mode
  each sentence's chunks are held until it passed. A stopped stream ends with a chunk whose
  ``finish_reason`` is ``"content_filter"`` (carrying the fallback text in fallback mode), as OpenAI's
  own filter does; the verdict is ``stream.guardrail`` once the stream is consumed, the HTTP response's headers
  ``stream.headers`` (``x-request-id``...).
- ``client.with_options(...)`` and ``client.copy(...)`` return a *guarded* client (the same guard around the inner
  client's ``with_options(...)`` / ``copy(...)``), so per-request timeouts, headers, retries... keep working.
  ``with guard_openai(...) as client:`` (``async with`` too) yields the guarded client, never the inner one.
- Upstream errors reach the caller.

What the wrapper hands out is decided by explicit lists, and it fails closed: a name on no list is refused.

- Guarded: ``chat.completions.create``; ``with_options`` / ``copy`` (a guarded client).
- Refused with :class:`UnguardedPathError` (a :class:`ConfigurationError` that is also an ``AttributeError``, so
  ``hasattr`` probes say False) naming what is refused, why and the guarded call to use instead:

  - views that hand out the inner client's answers raw: ``with_raw_response`` and ``with_streaming_response`` on the
    client, on ``client.chat`` and on ``client.chat.completions`` (a raw response's body would reach you unchecked),
    and the SDK request headers that select them (``X-Stainless-Raw-Response``, ``____stainless_override_cast_to``,
    in ``extra_headers=`` or the client's ``default_headers``, any spelling): ``create()`` refuses them before
    anything is sent, and a ``stream=True`` result that is not the SDK's stream of chunks is refused unread;
  - a guarded stream's ``response`` (the SDK stream's HTTP response, whose body is the unchecked answer); its headers
    are ``stream.headers``;
  - ``chat.completions.parse`` / ``.stream`` and the stored-completion reads ``chat.completions.retrieve`` / ``list``
    / ``update`` / ``messages`` (they return model answers that were never checked, blocked ones included);
  - APIs that generate answers outside ``chat.completions.create`` (:data:`_UNGUARDED_APIS`): ``responses``,
    ``conversations``, ``completions``, ``beta``, ``batches``, ``realtime``, ``live``, ``evals``, ``decisions``;
  - the raw HTTP methods ``post``, ``get``, ``put``, ``patch``, ``delete``, ``request``, ``get_api_list`` (they reach
    any endpoint, ``/chat/completions`` included);
  - any other public name not on the pass-through list (an endpoint a newer SDK adds is refused until it is listed).
    Private names (``_x``) of the inner client are not forwarded at all (plain ``AttributeError``).

- Passed through untouched (:data:`_PASS_THROUGH`): resources that do not write answers (``embeddings``, ``files``,
  ``models``, ``moderations``, ``uploads``, ``vector_stores``, ``fine_tuning``, ``webhooks``, ``images``, ``videos``,
  ``audio``, ``containers``, ``skills``, ``admin``, ``safety``, ``content_provenance_checks``), settings (``api_key``,
  ``base_url``, ``timeout``, ``max_retries``, ``default_headers``, ``organization``, ``project``...), ``close`` and
  ``is_closed``; and ``chat.completions.delete``.

To use a refused path on purpose, call it on the client you wrapped: it is not guarded, and says so by its name.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from guardrail import wire
from guardrail.checks.claims import question_in_conversation
from guardrail.errors import ConfigurationError, GuardrailBlocked, UnreadableError
from guardrail.guard import Guard
from guardrail.stream.release import AsyncGatedStream, GatedStream, Reading, ReleaseGate
from guardrail.verdict import Timings, Verdict, worst


def _text(m: Any) -> str:
    content = m.get("content") if isinstance(m, dict) else getattr(m, "content", None)
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return " ".join(p["text"] for p in content
                        if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str))
    return ""


def _question(messages: Sequence[Any]) -> str:
    """The last user message, its pronouns read as what the conversation before it named ("Can I return it?" after
    "I bought a gift card.")."""
    listed = list(messages)
    roles = [m.get("role") if isinstance(m, dict) else getattr(m, "role", None) for m in listed]
    for k in range(len(listed) - 1, -1, -1):
        if roles[k] != "user":
            continue
        said = [(r, t) for m, r in zip(listed[:k], roles[:k]) if (t := _text(m))]
        question = _text(listed[k])
        return question_in_conversation(question, [t for r, t in said if r == "user"],
                                        [t for r, t in said if r == "assistant"],
                                        [t for r, t in said if r in ("system", "developer", "tool")]) if question else question
    return ""


#: the openai SDK's own request headers that turn create()'s result into a raw-response view (what
#: ``with_raw_response`` / ``with_streaming_response`` set) or into another type than a completion
_RAW_HEADERS = ("x-stainless-raw-response", "____stainless_override_cast_to")


def _raw_header(default_headers: Mapping[str, Any], extra_headers: Any) -> str | None:
    """The SDK header among :data:`_RAW_HEADERS` that the request would carry (the client's default headers, then
    ``extra_headers=``, merged as the SDK merges them: case-insensitively, an ``Omit()`` value removes one)."""
    import openai

    merged: dict[str, tuple[str, Any]] = {}
    for mapping in (default_headers, extra_headers if isinstance(extra_headers, Mapping) else {}):
        for name, value in mapping.items():
            if not isinstance(name, str):
                continue
            if isinstance(value, openai.Omit):
                merged.pop(name.lower(), None)
            else:
                merged[name.lower()] = (name, value)
    return next((merged[h][0] for h in _RAW_HEADERS if h in merged), None)


def _prepare(kwargs: dict[str, Any], default_headers: Mapping[str, Any]) -> tuple[str, list[str], dict[str, Any]]:
    kwargs = dict(kwargs)
    raw = _raw_header(default_headers, kwargs.get("extra_headers"))
    if raw is not None:
        raise UnguardedPathError(
            f"the request header {raw!r} is not guarded by guard_openai: it is how the SDK's with_raw_response / "
            f"with_streaming_response views ask for the answer, and {_RAW_VIEW}. {_USE}, without that header in "
            "extra_headers= or the client's default_headers. To use it unguarded on purpose, call create() on the "
            "client you wrapped")
    contexts = kwargs.pop("contexts", None)
    question = kwargs.pop("question", None)
    if contexts is None:
        raise ConfigurationError(
            "a guarded chat.completions.create() needs contexts=[...] (the retrieved passages the answer must be "
            "supported by); pass contexts=[] to guard an answer that has none"
        )
    if isinstance(contexts, str):
        raise ConfigurationError("contexts= must be a list of strings, got one string: pass contexts=[text]")
    if isinstance(contexts, Mapping):
        raise ConfigurationError("contexts= must be a list of strings, got a mapping (its keys are no passages): "
                                 "pass contexts=list(passages.values())")
    try:
        contexts = list(contexts)  # read once: a generator or map() is used up by the check below
    except TypeError:
        raise ConfigurationError(f"contexts= must be a list of strings, got {type(contexts).__name__}") from None
    if not all(isinstance(c, str) for c in contexts):
        raise ConfigurationError("contexts= must be a list of strings")
    extra = kwargs.get("extra_body")
    if isinstance(extra, dict) and "stream" in extra:
        raise ConfigurationError("pass stream=True to create(), not in extra_body: the SDK would not read the answer "
                                 "as a stream, and neither could the guard")
    messages = kwargs.get("messages")
    if messages is not None and not isinstance(messages, (list, tuple)):
        # any iterable the SDK takes ("messages=(m for m in history)"), read once here: handed on as the list, or the
        # SDK would send the generator this read used up ("messages": [])
        kwargs = {**kwargs, "messages": list(messages)}
    if question is None:
        question = _question(kwargs.get("messages", ()))
    return question, list(contexts), kwargs


def _dump(obj: Any) -> Any:
    return obj.model_dump(mode="json") if hasattr(obj, "model_dump") else obj


class _SDKChunks:
    """ChunkAdapter for openai's ``ChatCompletionChunk`` objects: every text a chunk adds (content, refusal,
    tool-call arguments), read by :mod:`guardrail.wire`; a chunk it cannot read raises UnreadableError."""

    def __init__(self, choices: int | None = None) -> None:
        # one per stream: tool-call arguments arrive as pieces of JSON; choices: the request's n (a choice beyond it
        # would be shown by a loop over choices[0] as part of the answer: unreadable)
        self.deltas = wire.DeltaReader(choices=choices)
        self.template: Any = None  # the last chunk read: the stop chunk takes its id, created and model

    def read(self, chunk: Any) -> Reading:
        self.template = chunk
        deltas = self.deltas.read(_dump(chunk))
        texts: dict[int, str] = {}
        for d in deltas:  # every choice, whatever was asked for: the upstream decides how many it sends
            texts[d.index] = texts.get(d.index, "") + d.text
        return Reading(texts, any(d.finish is not None for d in deltas) or self.deltas.holding,
                       frozenset(d.index for d in deltas if d.trace))

    def shows(self, choice: int, *, final: bool = False) -> bool:
        return self.deltas.shows(choice, final=final)

    def flush(self) -> dict[int, str]:
        """Text still held by unfinished tool-call arguments when the stream ends."""
        return self.deltas.flush()

    def cut(self, chunk: Any, choice: int, text: str) -> Any:
        if not wire.only_content(_dump(chunk)):
            return None  # tool-call or refusal pieces are never cut: the partial chunk is not delivered
        # the cut choice's own piece (a chunk may carry an empty delta of another choice before it, round 49)
        own = next((c for c in chunk.choices if getattr(c, "index", None) == choice), None)
        if own is None or own.delta is None:
            return None
        delta = own.delta.model_copy(update={"content": text})
        return chunk.model_copy(update={"choices": [own.model_copy(update={"delta": delta, "finish_reason": None})]})

    def stop_items(self, choices: Sequence[int], text: Mapping[int, str | None], verdict: Verdict,
                   finished: frozenset[int] = frozenset()) -> list[Any]:
        from openai.types.chat import ChatCompletionChunk

        template = self.template
        return [ChatCompletionChunk.model_validate({
            "id": template.id if template is not None else "guardrail",
            "object": "chat.completion.chunk",
            "created": template.created if template is not None else int(time.time()),
            "model": template.model if template is not None else "",
            "choices": [{"index": i, "delta": {"content": text.get(i)},
                         "finish_reason": "stop" if i in finished else "content_filter"}
                        for i in (list(choices) or [0])],
        })]

    def mark(self, chunk: Any, verdict: Verdict) -> Any:
        return chunk  # the verdict rides on the stream (``stream.guardrail``)


def _asked_choices(kwargs: dict[str, Any]) -> int | None:
    """The ``n`` of a create() call (``n=`` or ``extra_body={"n": ...}``), 1 when it names none."""
    extra = kwargs.get("extra_body")
    n = kwargs.get("n", extra.get("n", 1) if isinstance(extra, dict) else 1)
    return n if isinstance(n, int) and not isinstance(n, bool) and n >= 1 else None


def _gate(guard: Guard, question: str, contexts: list[str], start: float, choices: int | None = None) -> ReleaseGate[Any]:
    return ReleaseGate(lambda: guard.stream(question, contexts), _SDKChunks(choices), start)


_RESPONSE_REFUSED = ("stream.response is not guarded by guard_openai: it is the raw HTTP response whose body is the "
                     "answer, and reading it (read(), iter_lines(), text...) would hand the answer to you unchecked. "
                     "Use stream.headers for the response's headers (x-request-id, rate limits...) and iterate the "
                     "stream for the checked chunks")


class _ResponseHeaders:
    """The headers of a guarded stream's HTTP response, and a refusal for the response itself."""

    _response: Any  # the SDK stream's HTTP response

    @property
    def headers(self) -> Mapping[str, str]:
        """The upstream HTTP response's headers (``stream.headers.get("x-request-id")``), case-insensitive."""
        headers: Mapping[str, str] = self._response.headers
        return headers

    @property
    def response(self) -> Any:
        raise UnguardedPathError(_RESPONSE_REFUSED)


class GuardedStream(_ResponseHeaders, GatedStream[Any]):
    """Iterates guarded ``ChatCompletionChunk``s; ``guardrail`` holds the verdict once consumed, ``headers`` the HTTP
    response's headers (the SDK stream's ``response`` is refused: its body is the unchecked answer)."""

    def __init__(self, upstream: Any, gate: ReleaseGate[Any]) -> None:
        super().__init__(upstream, gate, close=upstream.close)
        self._response = upstream.response

    @property
    def guardrail(self) -> Verdict | None:
        return self.verdict

    def __enter__(self) -> "GuardedStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncGuardedStream(_ResponseHeaders, AsyncGatedStream[Any]):
    """:class:`GuardedStream` for ``openai.AsyncOpenAI``."""

    def __init__(self, upstream: Any, gate: ReleaseGate[Any]) -> None:
        super().__init__(upstream, gate, close=upstream.close)
        self._response = upstream.response

    @property
    def guardrail(self) -> Verdict | None:
        return self.verdict

    async def close(self) -> None:
        await self.aclose()

    async def __aenter__(self) -> "AsyncGuardedStream":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _answers(completion: Any) -> list[tuple[int, str]]:
    """Every assistant-visible text (content, refusal, tool-call arguments...) of every choice, by position in
    ``choices``: all of them are checked, however many the request asked for (the upstream decides what it sends)."""
    answers = wire.read_answers(_dump(completion))
    return [(a.index, a.text) for a in answers] or [(0, "")]


def _replaced(choice: Any, text: str) -> Any:
    """A choice that holds ``text`` and nothing of the answer it replaces: a new message (no reasoning trace,
    annotations, audio transcript, tool calls or fields the SDK does not know) and no log-probabilities, which spell
    the replaced answer token by token."""
    message = type(choice.message).model_validate({"role": "assistant", "content": text})
    return type(choice).model_validate({"index": choice.index, "message": message, "finish_reason": "content_filter",
                                        "logprobs": None})


def _apply(guard: Guard, completion: Any, verdicts: list[tuple[int, Verdict]], *, whole: bool = False) -> Any:
    """``completion.guardrail`` is the verdict of the worst choice (``guardrail_choices``: each choice's); a block
    raises, a fallback replaces the failing choices (every choice, and the fields beside them, when the completion
    could not be read: ``whole``)."""
    verdict = worst([v for _, v in verdicts])
    if not hasattr(completion, "choices"):  # the SDK handed back what it could not parse (a str): unreadable
        if verdict.action == "block":
            raise GuardrailBlocked(verdict)
        if verdict.action != "fallback":
            return completion  # on_error fail_open: as received (it cannot carry the verdict)
        from openai.types.chat import ChatCompletion

        completion = ChatCompletion.model_validate({
            "id": "guardrail", "object": "chat.completion", "created": int(time.time()), "model": "",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": guard.policy.fallback_message},
                         "finish_reason": "content_filter"}]})
        verdicts = [(0, verdict)]
    failing = {pos for pos, v in verdicts if v.action == "fallback"}
    if whole and failing and verdict.action != "block":
        failing = set(range(len(completion.choices or [])))
        extra = getattr(completion, "__pydantic_extra__", None)
        if extra:  # fields the SDK does not know were not read: they are not delivered
            extra.clear()
    # attributes of the object, not fields of the completion: an app that serialises it to its client (model_dump,
    # model_dump_json) does not send the verdict, whose reasons quote the answer that was replaced
    object.__setattr__(completion, "guardrail", verdict)
    object.__setattr__(completion, "guardrail_choices", [v for _, v in verdicts])
    if verdict.action == "block":
        raise GuardrailBlocked(verdict)
    for pos in sorted(failing):
        if pos < len(completion.choices or []):
            completion.choices[pos] = _replaced(completion.choices[pos], guard.policy.fallback_message)
    return completion


def _unreadable(guard: Guard, exc: UnreadableError, total: float) -> Verdict:
    return guard.report(guard.error_verdict(exc, "", timings=Timings(0.0, total, total)))


def _not_a_stream(result: Any) -> UnguardedPathError:
    """The error for a ``create(stream=True)`` whose result is not the SDK's stream of chunks (a raw response the
    header checks did not see coming: from a custom ``http_client``, say); its body is never read."""
    return UnguardedPathError(
        f"create(stream=True) returned {type(result).__name__}, not the SDK's stream of chunks, so guard_openai "
        f"cannot check it: {_RAW_VIEW}. {_USE}; drop whatever asks the SDK for a raw response (the "
        "X-Stainless-Raw-Response header, in extra_headers=, default_headers or the http_client's headers)")


class _Completions:
    def __init__(self, inner: Any, guard: Guard, default_headers: Callable[[], Mapping[str, Any]]) -> None:
        self._inner = inner
        self._guard = guard
        self._default_headers = default_headers  # the wrapped client's, read at each call

    def create(self, **kwargs: Any) -> Any:
        import openai

        question, contexts, kwargs = _prepare(kwargs, self._default_headers())
        start = time.perf_counter()
        result = self._inner.create(**kwargs)
        if kwargs.get("stream"):
            if not isinstance(result, openai.Stream):
                close = getattr(getattr(result, "http_response", result), "close", None)
                if callable(close):
                    close()  # the connection is released, the body never read
                raise _not_a_stream(result)
            return GuardedStream(result, _gate(self._guard, question, contexts, start, _asked_choices(kwargs)))
        total = time.perf_counter() - start
        try:
            answers = _answers(result)
        except UnreadableError as exc:
            return _apply(self._guard, result, [(0, _unreadable(self._guard, exc, total))], whole=True)
        verdicts = [(pos, self._guard.check(question, contexts, text, time_to_first_token=total, generation=total))
                    for pos, text in answers]
        return _apply(self._guard, result, verdicts)

    def __getattr__(self, name: str) -> Any:
        if name in _COMPLETIONS_PASS_THROUGH:
            return getattr(self._inner, name)
        raise _refused(self, "chat.completions", name, _COMPLETIONS_REFUSED)


class UnguardedPathError(ConfigurationError, AttributeError):
    """A path of the wrapped client that would return answers unchecked (or that the wrapper does not know to be
    safe) was asked for. Also an ``AttributeError``: ``hasattr(client, "responses")`` is False on a guarded client."""


_USE = ("Use client.chat.completions.create(..., contexts=[...]) (stream=True for a stream); the verdict is on the "
        "result's .guardrail")
_RAW_VIEW = ("it hands out the wrapped client's raw HTTP responses, whose body would reach you unchecked "
             "(the guard can only check answers it parses itself)")

#: ``client.chat.completions`` names refused, with why (everything not in _COMPLETIONS_PASS_THROUGH is refused)
_COMPLETIONS_REFUSED = {
    "with_raw_response": _RAW_VIEW,
    "with_streaming_response": _RAW_VIEW,
    "parse": "it would return the model's answer unchecked",
    "stream": "it would return the model's answer unchecked",
    "retrieve": "it returns a stored answer that was never checked (a blocked one too)",
    "list": "it returns stored answers that were never checked (blocked ones too)",
    "update": "it returns a stored answer that was never checked (a blocked one too)",
    "messages": "it returns stored messages that were never checked (blocked answers too)",
}
#: ``client.chat.completions`` names passed through: they return no answer
_COMPLETIONS_PASS_THROUGH = frozenset({"delete"})
#: ``client.chat`` names refused (``chat.completions`` is the guarded resource; nothing else is passed through)
_CHAT_REFUSED = {"with_raw_response": _RAW_VIEW, "with_streaming_response": _RAW_VIEW}
#: client attributes that generate answers outside chat.completions.create
_UNGUARDED_APIS = {
    "responses": "the Responses API",
    "conversations": "the Responses API's conversations",
    "completions": "the legacy completions API",
    "beta": "the beta helpers (chat.completions.parse / stream, assistants, realtime)",
    "batches": "the Batch API (it runs chat completions offline)",
    "realtime": "the Realtime API",
    "live": "the Live API",
    "evals": "the Evals API (its runs generate answers)",
    "decisions": "the Decisions API (the model answers questions)",
}
_GATEWAY = ("; or run `guardrail serve` and point the client's base_url at it (the gateway guards /v1/responses and "
            "/v1/completions too)")
#: client names refused, with why (with_options / copy are guarded; a name on no list is refused)
_CLIENT_REFUSED = {
    **{name: f"it is {api}, whose answers the guard does not check" for name, api in
       _UNGUARDED_APIS.items()},
    "with_raw_response": _RAW_VIEW,
    "with_streaming_response": _RAW_VIEW,
    **{name: "the raw HTTP methods reach any endpoint (/chat/completions included) and their answers would reach "
             "you unchecked" for name in ("post", "get", "put", "patch", "delete", "request", "get_api_list")},
}
#: client names passed through untouched: resources that write no answer, settings and lifecycle
_PASS_THROUGH = frozenset({
    # resources
    "embeddings", "files", "models", "moderations", "uploads", "vector_stores", "fine_tuning", "webhooks", "images",
    "videos", "audio", "containers", "skills", "admin", "safety", "content_provenance_checks",
    # settings
    "api_key", "admin_api_key", "organization", "project", "webhook_secret", "websocket_base_url", "base_url",
    "workload_identity", "timeout", "max_retries", "default_headers", "default_query", "auth_headers", "custom_auth",
    "user_agent", "platform_headers", "qs",
    # lifecycle
    "close", "is_closed",
})


def _refused(owner: object, path: str, name: str, refused: dict[str, str]) -> AttributeError:
    """The error for ``owner.name`` (``path`` is how the caller reaches owner): a plain AttributeError for private
    names (never forwarded), else an UnguardedPathError that says what is refused, why and what to use instead."""
    if name.startswith("_"):
        return AttributeError(f"{type(owner).__name__!r} object has no attribute {name!r} (guard_openai does not "
                              "forward private attributes of the wrapped client)")
    why = refused.get(name, "guard_openai does not know it to be safe: only the names its module docstring lists "
                            "are passed through")
    extra = _GATEWAY if path == "client" and name in _UNGUARDED_APIS else ""
    return UnguardedPathError(f"{path}.{name} is not guarded by guard_openai: {why}. {_USE}{extra}. To use it "
                              "unguarded on purpose, call it on the client you wrapped")


class _AsyncCompletions(_Completions):
    async def create(self, **kwargs: Any) -> Any:
        import openai

        question, contexts, kwargs = _prepare(kwargs, self._default_headers())
        start = time.perf_counter()
        result = await self._inner.create(**kwargs)
        if kwargs.get("stream"):
            if not isinstance(result, openai.AsyncStream):
                close = getattr(getattr(result, "http_response", result), "aclose", None)
                if callable(close):
                    await close()
                raise _not_a_stream(result)
            return AsyncGuardedStream(result, _gate(self._guard, question, contexts, start, _asked_choices(kwargs)))
        total = time.perf_counter() - start
        try:
            answers = _answers(result)
        except UnreadableError as exc:
            return _apply(self._guard, result, [(0, _unreadable(self._guard, exc, total))], whole=True)
        checked = await asyncio.gather(*(
            self._guard.acheck(question, contexts, text, time_to_first_token=total, generation=total)
            for _, text in answers))
        return _apply(self._guard, result, [(pos, v) for (pos, _), v in zip(answers, checked)])


class _Chat:
    def __init__(self, client: Any, guard: Guard, is_async: bool) -> None:
        self.completions = (_AsyncCompletions if is_async else _Completions)(
            client.chat.completions, guard, lambda: client.default_headers)

    def __getattr__(self, name: str) -> Any:
        raise _refused(self, "chat", name, _CHAT_REFUSED)


class GuardedOpenAI:
    """Proxy of an OpenAI client whose ``chat.completions.create`` is guarded; see the module docstring for what else
    it hands out."""

    def __init__(self, client: Any, guard: Guard) -> None:
        import openai

        self._client = client
        self.guard = guard
        self.chat = _Chat(client, guard, isinstance(client, openai.AsyncOpenAI))

    def with_options(self, **options: Any) -> GuardedOpenAI:
        """The wrapped client's ``with_options(**options)``, guarded by the same guard."""
        return GuardedOpenAI(self._client.with_options(**options), self.guard)

    def copy(self, **options: Any) -> GuardedOpenAI:
        """The wrapped client's ``copy(**options)``, guarded by the same guard."""
        return GuardedOpenAI(self._client.copy(**options), self.guard)

    def __enter__(self) -> GuardedOpenAI:
        self._client.__enter__()
        return self  # never the wrapped client's own __enter__ result: that is the unguarded client

    def __exit__(self, *exc: Any) -> None:
        self._client.__exit__(*exc)

    async def __aenter__(self) -> GuardedOpenAI:
        await self._client.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._client.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        if name in _PASS_THROUGH:
            return getattr(self._client, name)
        raise _refused(self, "client", name, _CLIENT_REFUSED)


def guard_openai(client: Any, guard: Guard) -> GuardedOpenAI:
    """Wrap ``openai.OpenAI()`` or ``openai.AsyncOpenAI()``; see the module docstring."""
    return GuardedOpenAI(client, guard)
