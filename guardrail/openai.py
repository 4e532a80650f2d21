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
  own filter does; the verdict is ``stream.guardrail`` once the stream is consumed.
- Other SDK paths that return an answer (``with_raw_response``, ``with_streaming_response``, ``parse``, ``stream``,
  ``client.responses``, ``client.completions``, ``client.beta``) are refused with a :class:`ConfigurationError` that
  names the guarded call; everything else on the client (embeddings, models, files...) is passed through untouched.
  Upstream errors reach the caller.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from guardrail import wire
from guardrail.errors import ConfigurationError, GuardrailBlocked, UnreadableError
from guardrail.guard import Guard
from guardrail.stream.release import AsyncGatedStream, GatedStream, Reading, ReleaseGate
from guardrail.verdict import Timings, Verdict, worst


def _question(messages: Sequence[Any]) -> str:
    for m in reversed(list(messages)):
        role = m.get("role") if isinstance(m, dict) else getattr(m, "role", None)
        if role != "user":
            continue
        content = m.get("content") if isinstance(m, dict) else getattr(m, "content", None)
        if isinstance(content, str):
            return content
        if isinstance(content, list):  # content parts
            return " ".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def _prepare(kwargs: dict[str, Any]) -> tuple[str, list[str], dict[str, Any]]:
    kwargs = dict(kwargs)
    contexts = kwargs.pop("contexts", None)
    question = kwargs.pop("question", None)
    if contexts is None:
        raise ConfigurationError(
            "a guarded chat.completions.create() needs contexts=[...] (the retrieved passages the answer must be "
            "supported by); pass contexts=[] to guard an answer that has none"
        )
    if isinstance(contexts, str) or not all(isinstance(c, str) for c in contexts):
        raise ConfigurationError("contexts= must be a list of strings")
    if question is None:
        question = _question(kwargs.get("messages", ()))
    return question, list(contexts), kwargs


def _dump(obj: Any) -> Any:
    return obj.model_dump(mode="json") if hasattr(obj, "model_dump") else obj


class _SDKChunks:
    """ChunkAdapter for openai's ``ChatCompletionChunk`` objects: every text a chunk adds (content, refusal,
    tool-call arguments), read by :mod:`guardrail.wire`; a chunk it cannot read raises UnreadableError."""

    def __init__(self) -> None:
        self.deltas = wire.DeltaReader()  # one per stream: tool-call arguments arrive as pieces of JSON
        self.template: Any = None  # the last chunk read: the stop chunk takes its id, created and model

    def read(self, chunk: Any) -> Reading:
        self.template = chunk
        deltas = self.deltas.read(_dump(chunk))
        texts: dict[int, str] = {}
        for d in deltas:  # every choice, whatever was asked for: the upstream decides how many it sends
            texts[d.index] = texts.get(d.index, "") + d.text
        return Reading(texts, any(d.finish is not None for d in deltas) or self.deltas.holding)

    def flush(self) -> dict[int, str]:
        """Text still held by unfinished tool-call arguments when the stream ends."""
        return self.deltas.flush()

    def cut(self, chunk: Any, choice: int, text: str) -> Any:
        if not wire.only_content(_dump(chunk)):
            return None  # tool-call or refusal pieces are never cut: the partial chunk is not delivered
        first = chunk.choices[0]
        delta = first.delta.model_copy(update={"content": text})
        return chunk.model_copy(update={"choices": [first.model_copy(update={"delta": delta, "finish_reason": None})]})

    def stop_items(self, choices: Sequence[int], text: str | None, verdict: Verdict) -> list[Any]:
        from openai.types.chat import ChatCompletionChunk

        template = self.template
        return [ChatCompletionChunk.model_validate({
            "id": template.id if template is not None else "guardrail",
            "object": "chat.completion.chunk",
            "created": template.created if template is not None else int(time.time()),
            "model": template.model if template is not None else "",
            "choices": [{"index": i, "delta": {"content": text}, "finish_reason": "content_filter"}
                        for i in (list(choices) or [0])],
        })]

    def mark(self, chunk: Any, verdict: Verdict) -> Any:
        return chunk  # the verdict rides on the stream (``stream.guardrail``)


def _gate(guard: Guard, question: str, contexts: list[str], start: float) -> ReleaseGate[Any]:
    return ReleaseGate(lambda: guard.stream(question, contexts), _SDKChunks(), start)


class GuardedStream(GatedStream[Any]):
    """Iterates guarded ``ChatCompletionChunk``s; ``guardrail`` holds the verdict once consumed."""

    def __init__(self, upstream: Any, gate: ReleaseGate[Any]) -> None:
        super().__init__(upstream, gate, close=upstream.close)

    @property
    def guardrail(self) -> Verdict | None:
        return self.verdict

    def __enter__(self) -> "GuardedStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncGuardedStream(AsyncGatedStream[Any]):
    def __init__(self, upstream: Any, gate: ReleaseGate[Any]) -> None:
        super().__init__(upstream, gate, close=upstream.close)

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


def _apply(guard: Guard, completion: Any, verdicts: list[tuple[int, Verdict]]) -> Any:
    """``completion.guardrail`` is the verdict of the worst choice (``guardrail_choices``: each choice's); a block
    raises, a fallback replaces the failing choices."""
    verdict = worst([v for _, v in verdicts])
    completion.guardrail = verdict
    completion.guardrail_choices = [v for _, v in verdicts]
    if verdict.action == "block":
        raise GuardrailBlocked(verdict)
    for pos, v in verdicts:
        if v.action == "fallback" and pos < len(completion.choices or []):
            choice = completion.choices[pos]
            message = choice.message.model_copy(update={"content": guard.policy.fallback_message, "tool_calls": None,
                                                        "function_call": None, "refusal": None,
                                                        "audio": None})  # a transcript of the replaced answer too
            completion.choices[pos] = choice.model_copy(update={"message": message, "finish_reason": "content_filter"})
    return completion


def _unreadable(guard: Guard, exc: UnreadableError, total: float) -> Verdict:
    return guard.report(guard.error_verdict(exc, "", timings=Timings(0.0, total, total)))


class _Completions:
    def __init__(self, inner: Any, guard: Guard) -> None:
        self._inner = inner
        self._guard = guard

    def create(self, **kwargs: Any) -> Any:
        question, contexts, kwargs = _prepare(kwargs)
        start = time.perf_counter()
        result = self._inner.create(**kwargs)
        if kwargs.get("stream"):
            return GuardedStream(result, _gate(self._guard, question, contexts, start))
        total = time.perf_counter() - start
        try:
            answers = _answers(result)
        except UnreadableError as exc:
            return _apply(self._guard, result, [(0, _unreadable(self._guard, exc, total))])
        verdicts = [(pos, self._guard.check(question, contexts, text, time_to_first_token=total, generation=total))
                    for pos, text in answers]
        return _apply(self._guard, result, verdicts)

    def __getattr__(self, name: str) -> Any:
        if name in _UNGUARDED_CALLS:
            raise ConfigurationError(
                f"chat.completions.{name} is not guarded: it would return the model's answer unchecked. Use "
                "chat.completions.create(..., contexts=[...]) (stream=True for a stream); the verdict is on the "
                "result's .guardrail")
        return getattr(self._inner, name)


#: SDK call paths that return an answer the wrapper cannot check: refused, never passed through unchecked
_UNGUARDED_CALLS = frozenset({"with_raw_response", "with_streaming_response", "parse", "stream"})
#: client attributes that generate answers outside chat.completions.create
_UNGUARDED_APIS = {"responses": "the Responses API", "completions": "the legacy completions API",
                   "beta": "the beta helpers (chat.completions.parse / stream)"}


class _AsyncCompletions(_Completions):
    async def create(self, **kwargs: Any) -> Any:
        question, contexts, kwargs = _prepare(kwargs)
        start = time.perf_counter()
        result = await self._inner.create(**kwargs)
        if kwargs.get("stream"):
            return AsyncGuardedStream(result, _gate(self._guard, question, contexts, start))
        total = time.perf_counter() - start
        try:
            answers = _answers(result)
        except UnreadableError as exc:
            return _apply(self._guard, result, [(0, _unreadable(self._guard, exc, total))])
        checked = await asyncio.gather(*(
            self._guard.acheck(question, contexts, text, time_to_first_token=total, generation=total)
            for _, text in answers))
        return _apply(self._guard, result, [(pos, v) for (pos, _), v in zip(answers, checked)])


class _Chat:
    def __init__(self, inner: Any, guard: Guard, is_async: bool) -> None:
        self._inner = inner
        self.completions = (_AsyncCompletions if is_async else _Completions)(inner.completions, guard)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class GuardedOpenAI:
    """Proxy of an OpenAI client whose ``chat.completions.create`` is guarded."""

    def __init__(self, client: Any, guard: Guard) -> None:
        import openai

        self._client = client
        self.guard = guard
        self.chat = _Chat(client.chat, guard, isinstance(client, openai.AsyncOpenAI))

    def __getattr__(self, name: str) -> Any:
        if name in _UNGUARDED_APIS:
            raise ConfigurationError(
                f"client.{name} ({_UNGUARDED_APIS[name]}) is not guarded by guard_openai: its answers would reach you "
                "unchecked. Use client.chat.completions.create(..., contexts=[...]), or run `guardrail serve` and "
                "point the client's base_url at it (the gateway guards /v1/responses and /v1/completions too)")
        return getattr(self._client, name)


def guard_openai(client: Any, guard: Guard) -> GuardedOpenAI:
    """Wrap ``openai.OpenAI()`` or ``openai.AsyncOpenAI()``; see the module docstring."""
    return GuardedOpenAI(client, guard)
