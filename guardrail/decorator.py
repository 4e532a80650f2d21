"""``@guarded``: guard any generation call (sync, async, generator, async generator).

>>> guard = Guard(Evaluator(nli=NLIScorer(default_nli_model())), Policy(action="block"))   # doctest: +SKIP
>>> @guarded(guard, question="question", contexts="docs")                                  # doctest: +SKIP
... def answer(question: str, docs: list[str]) -> str:
...     return llm(question, docs)
>>> text = answer("How long is the refund window?", docs)   # raises GuardrailBlocked if unsupported
>>> text.verdict.scores.faithfulness                         # flag mode: the verdict rides on the result

- Query and contexts come from the call: a parameter name, or a callable receiving the bound
  arguments (``contexts=lambda a: [d.text for d in a["docs"]]``).
- Time to first token is the first non-empty chunk for streams, the whole call otherwise; total time
  runs from the call to the last chunk. Both are in ``verdict.timings`` and the guard's observer.
- Actions: flag/pass return the answer (``GuardedText``, a ``str`` with ``.verdict``); block raises
  :class:`GuardrailBlocked`; fallback returns the policy's fallback message. Streams in block mode
  release each sentence after it passed and end after the last passed sentence with a
  :class:`StreamStopped` marker chunk (the fallback message in fallback mode).
"""

from __future__ import annotations

import functools
import inspect
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any

from guardrail.errors import ConfigurationError, GuardrailError
from guardrail.guard import Guard
from guardrail.streaming import StreamGuard
from guardrail.verdict import Verdict

DEFAULT_STOP_MARKER = "\n\n[The rest of this answer was withheld: it is not supported by the retrieved sources.]"

Source = str | Callable[[Mapping[str, Any]], Any]


class GuardrailBlocked(GuardrailError):
    """The answer failed the guard and the policy blocks it; ``verdict`` says why."""

    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict
        reasons = "; ".join(verdict.reasons) or verdict.outcome
        super().__init__(f"answer blocked by guardrail: {reasons}")


class _TextWithVerdict(str):
    verdict: Verdict

    def __new__(cls, text: str, verdict: Verdict) -> "_TextWithVerdict":
        obj = super().__new__(cls, text)
        obj.verdict = verdict
        return obj


class GuardedText(_TextWithVerdict):
    """A ``str`` answer carrying the verdict it was delivered with."""


class StreamStopped(_TextWithVerdict):
    """The final chunk of a stream the guard stopped; ``verdict`` says why."""


def _resolver(fn: Callable[..., Any], source: Source, what: str) -> Callable[[Mapping[str, Any]], Any]:
    if callable(source):
        return source
    params = inspect.signature(fn).parameters
    if source not in params and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        raise ConfigurationError(
            f"{fn.__qualname__}() has no parameter {source!r} for the {what}; pass {what}='<parameter name>' "
            f"or a callable taking the bound arguments"
        )

    def get(arguments: Mapping[str, Any]) -> Any:
        if source in arguments:
            return arguments[source]
        kwargs = next((v for v in arguments.values() if isinstance(v, dict) and source in v), None)
        if kwargs is None:
            raise ConfigurationError(f"{fn.__qualname__}() was called without {source!r} (the {what})")
        return kwargs[source]

    return get


class _Call:
    """What one call needs: its query, contexts, and the moment it started."""

    def __init__(self, fn: Callable[..., Any], q: Callable[..., Any], c: Callable[..., Any], args: Any, kwargs: Any) -> None:
        bound = inspect.signature(fn).bind(*args, **kwargs)
        bound.apply_defaults()
        self.question = q(bound.arguments)
        contexts = c(bound.arguments)
        if isinstance(contexts, str) or not isinstance(contexts, (list, tuple)):
            raise ConfigurationError(f"the contexts of {fn.__qualname__}() must be a list of strings, got {type(contexts).__name__}")
        self.contexts = list(contexts)
        self.start = time.perf_counter()


def _apply(guard: Guard, verdict: Verdict, result: Any, on_verdict: Callable[[Verdict], None] | None) -> Any:
    if on_verdict is not None:
        on_verdict(verdict)
    if verdict.action == "block":
        raise GuardrailBlocked(verdict)
    if verdict.action == "fallback":
        return GuardedText(guard.policy.fallback_message, verdict)
    return GuardedText(result, verdict) if isinstance(result, str) else result


class GuardedIterator(Iterator[str]):
    """Wraps a generator of text chunks; ``verdict`` is set when it is exhausted."""

    def __init__(self, guard: Guard, gen: Iterator[str], call: _Call, marker: str, on_verdict: Callable[[Verdict], None] | None) -> None:
        self._guard = guard
        self._gen = gen
        self._call = call
        self._stream: StreamGuard = guard.stream(call.question, call.contexts)
        self._marker = marker
        self._on_verdict = on_verdict
        self._out: deque[str] = deque()
        self._ttft: float | None = None
        self._checking = 0.0  # seconds spent in checks while the generator was paused (hold mode)
        self._done = False
        self.verdict: Verdict | None = None

    def __iter__(self) -> "GuardedIterator":
        return self

    def __next__(self) -> str:
        while not self._out:
            if self._done:
                raise StopIteration
            try:
                chunk = next(self._gen)
            except StopIteration:
                self._end()
                continue
            if self._ttft is None and chunk:
                self._ttft = time.perf_counter() - self._call.start - self._checking
            t0 = time.perf_counter()
            released = self._stream.feed(chunk)
            self._checking += time.perf_counter() - t0
            if released:
                self._out.append(released)
            if self._stream.stopped:
                self._gen_close()
                self._end()
        return self._out.popleft()

    def _gen_close(self) -> None:
        close = getattr(self._gen, "close", None)
        if close is not None:
            close()

    def _end(self) -> None:
        generation = time.perf_counter() - self._call.start - self._checking
        end = self._stream.finish(time_to_first_token=self._ttft, generation=generation)
        self._finish(end.text, end.verdict)

    def _finish(self, tail: str, verdict: Verdict) -> None:
        self._done = True
        self.verdict = verdict
        if tail:
            self._out.append(tail)
        if self._stream.stopped:
            text = self._guard.policy.fallback_message if verdict.action == "fallback" else self._marker
            self._out.append(StreamStopped(text, verdict))
        if self._on_verdict is not None:
            self._on_verdict(verdict)

    def close(self) -> None:
        self._gen_close()


class AsyncGuardedIterator(AsyncIterator[str]):
    """Wraps an async generator of text chunks; ``verdict`` is set when it is exhausted."""

    def __init__(self, guard: Guard, agen: AsyncIterator[str], call: _Call, marker: str,
                 on_verdict: Callable[[Verdict], None] | None) -> None:
        self._guard = guard
        self._agen = agen
        self._call = call
        self._stream: StreamGuard = guard.stream(call.question, call.contexts)
        self._marker = marker
        self._on_verdict = on_verdict
        self._out: deque[str] = deque()
        self._ttft: float | None = None
        self._checking = 0.0
        self._done = False
        self.verdict: Verdict | None = None

    def __aiter__(self) -> "AsyncGuardedIterator":
        return self

    async def __anext__(self) -> str:
        while not self._out:
            if self._done:
                raise StopAsyncIteration
            try:
                chunk = await self._agen.__anext__()
            except StopAsyncIteration:
                await self._end()
                continue
            if self._ttft is None and chunk:
                self._ttft = time.perf_counter() - self._call.start - self._checking
            t0 = time.perf_counter()
            released = await self._stream.afeed(chunk)
            self._checking += time.perf_counter() - t0
            if released:
                self._out.append(released)
            if self._stream.stopped:
                await self.aclose()
                await self._end()
        return self._out.popleft()

    async def _end(self) -> None:
        generation = time.perf_counter() - self._call.start - self._checking
        end = await self._stream.afinish(time_to_first_token=self._ttft, generation=generation)
        self._done = True
        self.verdict = end.verdict
        if end.text:
            self._out.append(end.text)
        if self._stream.stopped:
            text = self._guard.policy.fallback_message if end.verdict.action == "fallback" else self._marker
            self._out.append(StreamStopped(text, end.verdict))
        if self._on_verdict is not None:
            self._on_verdict(end.verdict)

    async def aclose(self) -> None:
        close = getattr(self._agen, "aclose", None)
        if close is not None:
            await close()


def guarded(
    guard: Guard,
    *,
    question: Source = "question",
    contexts: Source = "contexts",
    on_verdict: Callable[[Verdict], None] | None = None,
    stop_marker: str = DEFAULT_STOP_MARKER,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a function that generates an answer (see the module docstring)."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        q = _resolver(fn, question, "question")
        c = _resolver(fn, contexts, "contexts")

        if inspect.isasyncgenfunction(fn):
            @functools.wraps(fn)
            def agen_wrapper(*args: Any, **kwargs: Any) -> AsyncGuardedIterator:
                call = _Call(fn, q, c, args, kwargs)
                return AsyncGuardedIterator(guard, fn(*args, **kwargs), call, stop_marker, on_verdict)
            return agen_wrapper

        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def gen_wrapper(*args: Any, **kwargs: Any) -> GuardedIterator:
                call = _Call(fn, q, c, args, kwargs)
                return GuardedIterator(guard, fn(*args, **kwargs), call, stop_marker, on_verdict)
            return gen_wrapper

        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                call = _Call(fn, q, c, args, kwargs)
                result = await fn(*args, **kwargs)
                total = time.perf_counter() - call.start
                verdict = await guard.acheck(call.question, call.contexts, _text(result, fn),
                                             time_to_first_token=total, generation=total)
                return _apply(guard, verdict, result, on_verdict)
            return async_wrapper

        @functools.wraps(fn)
        def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
            call = _Call(fn, q, c, args, kwargs)
            result = fn(*args, **kwargs)
            total = time.perf_counter() - call.start
            verdict = guard.check(call.question, call.contexts, _text(result, fn),
                                  time_to_first_token=total, generation=total)
            return _apply(guard, verdict, result, on_verdict)
        return sync_wrapper

    return decorate


def _text(result: Any, fn: Callable[..., Any]) -> str:
    if isinstance(result, str):
        return result
    raise ConfigurationError(
        f"{fn.__qualname__}() returned {type(result).__name__}; @guarded needs the answer text (str), "
        "or a generator of str chunks"
    )
