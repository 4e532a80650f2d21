"""``@guarded``: guard any generation call (sync, async, generator, async generator; a function, a method or a
callable object, which is guarded as its ``__call__`` is: an ``async def __call__`` like an ``async def``).

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
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import Any

from guardrail.errors import ConfigurationError, GuardrailBlocked
from guardrail.guard import Guard
from guardrail.stream.release import AsyncGatedStream, GatedStream, Reading, ReleaseGate
from guardrail.verdict import Verdict

DEFAULT_STOP_MARKER = "\n\n[The rest of this answer was withheld: it is not supported by the retrieved sources.]"

Source = str | Callable[[Mapping[str, Any]], Any]


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


def _called(fn: Any) -> Callable[..., Any]:
    """What calling ``fn`` runs: ``fn`` itself for a function, method, class or partial; a callable object's bound
    ``__call__`` (so an object whose ``__call__`` is ``async def`` is guarded like an ``async def``)."""
    routine = inspect.isroutine(fn) or isinstance(fn, (type, functools.partial))
    called: Callable[..., Any] = fn if routine else fn.__call__
    return called


def _name(fn: Callable[..., Any]) -> str:
    """How messages name ``fn``: its qualified name; ``Answerer.__call__`` for a callable object (which has none)."""
    if isinstance(fn, functools.partial):
        return f"functools.partial({_name(fn.func)})"
    name = getattr(fn, "__qualname__", None)
    return name if isinstance(name, str) else f"{type(fn).__qualname__}.__call__"


def _resolver(fn: Callable[..., Any], source: Source, what: str) -> Callable[[Mapping[str, Any]], Any]:
    if callable(source):
        return source
    params = inspect.signature(fn).parameters
    if source not in params and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        raise ConfigurationError(
            f"{_name(fn)}() has no parameter {source!r} for the {what}; pass {what}='<parameter name>' "
            f"or a callable taking the bound arguments"
        )

    # the function's own **kwargs: a keyword argument it takes there (never a dict the caller passes as an ordinary
    # argument, such as a request body with a "contexts" key of its own: round 56)
    var_keyword = next((n for n, p in params.items() if p.kind is p.VAR_KEYWORD), None)

    def get(arguments: Mapping[str, Any]) -> Any:
        if source in arguments:
            return arguments[source]
        kwargs = arguments.get(var_keyword) if var_keyword is not None else None
        if not isinstance(kwargs, dict) or source not in kwargs:
            raise ConfigurationError(f"{_name(fn)}() was called without {source!r} (the {what})")
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
            raise ConfigurationError(f"the contexts of {_name(fn)}() must be a list of strings, got {type(contexts).__name__}")
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


class _TextChunks:
    """ChunkAdapter for a generator of text chunks: a stopped stream ends with a :class:`StreamStopped` item."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def read(self, item: str) -> Reading:
        if not isinstance(item, str):
            raise ConfigurationError(f"a guarded generator yielded {type(item).__name__}; it must yield str chunks")
        return Reading({0: item})

    def shows(self, choice: int, *, final: bool = False) -> bool:
        return True  # its items carry no reasoning trace

    def cut(self, item: str, choice: int, text: str) -> str:
        return text

    def stop_items(self, choices: Sequence[int], text: Mapping[int, str | None], verdict: Verdict,
                   finished: frozenset[int] = frozenset()) -> list[str]:
        fallback = next((t for t in text.values() if t is not None), None)  # one choice: a generator's text
        return [StreamStopped(fallback if fallback is not None else self.marker, verdict)]

    def mark(self, item: str, verdict: Verdict) -> str:
        return item  # the verdict rides on the iterator (``verdict``)


def _gate(guard: Guard, call: _Call, marker: str) -> ReleaseGate[str]:
    return ReleaseGate(lambda: guard.stream(call.question, call.contexts), _TextChunks(marker), call.start)


class GuardedIterator(GatedStream[str]):
    """A guarded generator of text chunks; ``verdict`` is set when it is exhausted."""


class AsyncGuardedIterator(AsyncGatedStream[str]):
    """A guarded async generator of text chunks; ``verdict`` is set when it is exhausted."""


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
        if isinstance(fn, (classmethod, staticmethod)) and not callable(fn):  # (staticmethod is callable since 3.10)
            raise ConfigurationError(
                f"@guarded is applied to a {type(fn).__name__}: put @{type(fn).__name__} outside (above) @guarded, "
                "so that the function is guarded before it becomes a method")
        q = _resolver(fn, question, "question")
        c = _resolver(fn, contexts, "contexts")
        called = _called(fn)

        if inspect.isasyncgenfunction(called):
            @functools.wraps(fn)
            def agen_wrapper(*args: Any, **kwargs: Any) -> AsyncGuardedIterator:
                call = _Call(fn, q, c, args, kwargs)
                agen = fn(*args, **kwargs)
                return AsyncGuardedIterator(_aplain(agen), _gate(guard, call, stop_marker), close=agen.aclose,
                                            on_verdict=on_verdict)
            return agen_wrapper

        if inspect.isgeneratorfunction(called):
            @functools.wraps(fn)
            def gen_wrapper(*args: Any, **kwargs: Any) -> GuardedIterator:
                call = _Call(fn, q, c, args, kwargs)
                gen = fn(*args, **kwargs)
                return GuardedIterator(_plain(gen), _gate(guard, call, stop_marker), close=gen.close,
                                       on_verdict=on_verdict)
            return gen_wrapper

        if inspect.iscoroutinefunction(called):
            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                call = _Call(fn, q, c, args, kwargs)
                result = await fn(*args, **kwargs)
                total = time.perf_counter() - call.start
                text = _text(result, fn)
                verdict = await guard.acheck(call.question, call.contexts, text, time_to_first_token=total,
                                             generation=total)
                return _apply(guard, verdict, text, on_verdict)
            return async_wrapper

        @functools.wraps(fn)
        def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
            call = _Call(fn, q, c, args, kwargs)
            result = fn(*args, **kwargs)
            if inspect.isawaitable(result):
                _refuse_awaitable(result, fn)
            total = time.perf_counter() - call.start
            text = _text(result, fn)
            verdict = guard.check(call.question, call.contexts, text, time_to_first_token=total, generation=total)
            return _apply(guard, verdict, text, on_verdict)
        return sync_wrapper

    return decorate


def _as_written(text: str) -> str:
    """A ``str`` subclass as its characters (a plain ``str``): the text checked is the text delivered, whatever the
    subclass's ``__str__`` would show."""
    return text if type(text) is str else str.__str__(text)


def _plain(gen: Iterator[Any]) -> Iterator[Any]:
    for chunk in gen:
        yield _as_written(chunk) if isinstance(chunk, str) else chunk


async def _aplain(agen: AsyncIterator[Any]) -> AsyncIterator[Any]:
    async for chunk in agen:
        yield _as_written(chunk) if isinstance(chunk, str) else chunk


def _refuse_awaitable(result: Any, fn: Callable[..., Any]) -> None:
    """A call that looked synchronous returned an awaitable (a function that returns a coroutine, an object whose
    ``__call__`` hands one back): its answer is not there to check. The coroutine is closed, never run."""
    if inspect.iscoroutine(result):
        result.close()
    raise ConfigurationError(
        f"{_name(fn)}() returned {type(result).__name__}, an awaitable, but is not an async function, so @guarded "
        "cannot wait for its answer; make it (or its __call__) `async def`, or decorate the async function it calls"
    )


def _text(result: Any, fn: Callable[..., Any]) -> str:
    if isinstance(result, str):
        return _as_written(result)
    raise ConfigurationError(
        f"{_name(fn)}() returned {type(result).__name__}; @guarded needs the answer text (str), "
        "or a generator of str chunks"
    )
