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
- Non-streaming: the verdict is ``completion.guardrail``. Block raises :class:`GuardrailBlocked`;
  fallback replaces the message with the policy's fallback and sets ``finish_reason="content_filter"``.
- Streaming (``stream=True``): chunks pass through as they come in flag mode; in block/fallback mode
  each sentence's chunks are held until it passed. A stopped stream ends with a chunk whose
  ``finish_reason`` is ``"content_filter"`` (carrying the fallback text in fallback mode), as OpenAI's
  own filter does; the verdict is ``stream.guardrail`` once the stream is consumed.
- Everything else on the client is passed through untouched; upstream errors reach the caller.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from guardrail import wire
from guardrail.errors import ConfigurationError, GuardrailBlocked, UnreadableError
from guardrail.guard import Guard
from guardrail.stream.release import AsyncGatedStream, GatedStream, Reading, ReleaseGate
from guardrail.verdict import Timings, Verdict


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
    if kwargs.get("n", 1) != 1:
        raise ConfigurationError("guarded completions support n=1 only; request one choice")
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
        text = "".join(d.text for d in self.deltas.read(_dump(chunk)) if d.index == 0)
        return Reading({0: text}, bool(chunk.choices) and chunk.choices[0].finish_reason is not None)

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
            "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "content_filter"}],
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


def _answer(completion: Any) -> str:
    """Every assistant-visible text of the (single) choice: content, refusal, tool-call arguments."""
    answers = wire.read_answers(_dump(completion))
    return answers[0].text if answers else ""


def _apply(guard: Guard, completion: Any, verdict: Verdict) -> Any:
    completion.guardrail = verdict
    if verdict.action == "block":
        raise GuardrailBlocked(verdict)
    if verdict.action == "fallback" and completion.choices:
        choice = completion.choices[0]
        message = choice.message.model_copy(update={"content": guard.policy.fallback_message, "tool_calls": None,
                                                    "function_call": None, "refusal": None,
                                                    "audio": None})  # a transcript of the replaced answer too
        completion.choices[0] = choice.model_copy(update={"message": message, "finish_reason": "content_filter"})
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
            text = _answer(result)
        except UnreadableError as exc:
            return _apply(self._guard, result, _unreadable(self._guard, exc, total))
        verdict = self._guard.check(question, contexts, text, time_to_first_token=total, generation=total)
        return _apply(self._guard, result, verdict)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _AsyncCompletions(_Completions):
    async def create(self, **kwargs: Any) -> Any:
        question, contexts, kwargs = _prepare(kwargs)
        start = time.perf_counter()
        result = await self._inner.create(**kwargs)
        if kwargs.get("stream"):
            return AsyncGuardedStream(result, _gate(self._guard, question, contexts, start))
        total = time.perf_counter() - start
        try:
            text = _answer(result)
        except UnreadableError as exc:
            return _apply(self._guard, result, _unreadable(self._guard, exc, total))
        verdict = await self._guard.acheck(question, contexts, text, time_to_first_token=total, generation=total)
        return _apply(self._guard, result, verdict)


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
        return getattr(self._client, name)


def guard_openai(client: Any, guard: Guard) -> GuardedOpenAI:
    """Wrap ``openai.OpenAI()`` or ``openai.AsyncOpenAI()``; see the module docstring."""
    return GuardedOpenAI(client, guard)
