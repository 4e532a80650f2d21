"""LangChain: guard a retrieval chain's answers, stream them sentence by sentence, and time its LLM calls.
Needs ``guardrail[langchain]`` (``langchain-core``).

>>> rag = create_retrieval_chain(retriever, combine_docs_chain)                         # doctest: +SKIP
>>> guarded = GuardedChain(guard, rag)                                                  # doctest: +SKIP
>>> out = guarded.invoke({"input": "How long do I have to return an item?"})            # doctest: +SKIP
>>> out["answer"], out["guardrail"].action                                              # doctest: +SKIP

- ``GuardedChain(guard, chain)`` runs ``chain`` and checks its ``answer`` against its ``context`` documents (the
  output keys of ``create_retrieval_chain``; configurable). Without a chain it checks an input that already holds
  ``{question, context, answer}``. The output is the chain's dict plus ``guardrail`` (the verdict); block raises
  :class:`guardrail.decorator.GuardrailBlocked`, fallback replaces the answer.
- ``stream``/``astream`` pass the chain's other chunks through and release ``answer`` pieces as the gateway does: in
  block/fallback mode a sentence goes out once it passed; a failing sentence ends the stream with a chunk
  ``{"guardrail": verdict, "finish_reason": "content_filter"}`` (plus the fallback answer in fallback mode).
- ``GuardrailCallbackHandler(telemetry)`` records time to first token and generation time of every LLM call of a
  chain into the Prometheus histograms.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from guardrail.errors import GuardrailBlocked, MissingDependencyError
from guardrail.guard import Guard
from guardrail.telemetry import Telemetry
from guardrail.verdict import Verdict

try:
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.runnables import Runnable, RunnableConfig
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("the LangChain integration needs: pip install 'rag-guardrail[langchain]'") from exc


def _texts(docs: Any) -> list[str]:
    out = []
    for d in docs or []:
        text = getattr(d, "page_content", d)
        if not isinstance(text, str):
            raise TypeError(f"context documents must be Documents or strings, got {type(d).__name__}")
        out.append(text)
    return out


ChainDict = dict[str, Any]
"""A chain's input, output and stream chunks: dicts of named values (``input``, ``context``, ``answer``, ...)."""


class GuardedChain(Runnable[ChainDict, ChainDict]):
    """A Runnable that guards the answer of a RAG chain (see the module docstring)."""

    def __init__(self, guard: Guard, chain: Runnable[Any, Any] | None = None, *, question_key: str = "input",
                 context_key: str = "context", answer_key: str = "answer") -> None:
        self.guard = guard
        self.chain = chain
        self.question_key = question_key
        self.context_key = context_key
        self.answer_key = answer_key

    # ----------------------------------------------------------------- one answer
    def _parts(self, out: Any) -> tuple[str, list[str], str]:
        if not isinstance(out, dict) or self.answer_key not in out:
            raise TypeError(f"the chain's output must be a dict with {self.answer_key!r} (and {self.context_key!r}); "
                            f"got {type(out).__name__}: set answer_key/context_key to its keys")
        answer = out[self.answer_key]
        answer = getattr(answer, "content", answer)
        if not isinstance(answer, str):
            raise TypeError(f"the {self.answer_key!r} value must be text, got {type(answer).__name__}")
        return str(out.get(self.question_key, "")), _texts(out.get(self.context_key)), answer

    def _apply(self, out: dict[str, Any], verdict: Verdict) -> dict[str, Any]:
        if verdict.action == "block":
            raise GuardrailBlocked(verdict)
        result = {**out, "guardrail": verdict}
        if verdict.action == "fallback":
            result[self.answer_key] = self.guard.policy.fallback_message
        return result

    def invoke(self, input: ChainDict, config: RunnableConfig | None = None, **kwargs: Any) -> ChainDict:
        start = time.perf_counter()
        out = self.chain.invoke(input, config, **kwargs) if self.chain is not None else input
        question, contexts, answer = self._parts(out)
        total = time.perf_counter() - start
        return self._apply(out, self.guard.check(question, contexts, answer, time_to_first_token=total, generation=total))

    async def ainvoke(self, input: ChainDict, config: RunnableConfig | None = None, **kwargs: Any) -> ChainDict:
        start = time.perf_counter()
        out = await self.chain.ainvoke(input, config, **kwargs) if self.chain is not None else input
        question, contexts, answer = self._parts(out)
        total = time.perf_counter() - start
        verdict = await self.guard.acheck(question, contexts, answer, time_to_first_token=total, generation=total)
        return self._apply(out, verdict)

    # ----------------------------------------------------------------- streams
    def _stop_chunk(self, verdict: Verdict) -> dict[str, Any]:
        chunk: dict[str, Any] = {"guardrail": verdict, "finish_reason": "content_filter"}
        if verdict.action == "fallback":
            chunk[self.answer_key] = self.guard.policy.fallback_message
        return chunk

    def stream(self, input: ChainDict, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[ChainDict]:
        if self.chain is None:
            yield self.invoke(input, config)
            return
        state = _StreamState(self, input)
        for chunk in self.chain.stream(input, config, **kwargs):
            for piece in state.push(chunk):
                yield piece
            if state.stopped:
                break
        yield from state.end()

    async def astream(self, input: ChainDict, config: RunnableConfig | None = None, **kwargs: Any) -> AsyncIterator[ChainDict]:
        if self.chain is None:
            yield await self.ainvoke(input, config)
            return
        state = _StreamState(self, input)
        async for chunk in self.chain.astream(input, config, **kwargs):
            for piece in await asyncio.to_thread(state.push, chunk):  # scoring stays off the event loop
                yield piece
            if state.stopped:
                break
        for piece in await asyncio.to_thread(lambda: list(state.end())):
            yield piece


class _StreamState:
    """One stream of a GuardedChain: collects the question and contexts, feeds answer pieces to the guard."""

    def __init__(self, owner: GuardedChain, input: ChainDict) -> None:
        self.owner = owner
        self.start = time.perf_counter()
        self.ttft: float | None = None
        self.question = str(input.get(owner.question_key, "")) if isinstance(input, dict) else ""
        self.contexts: list[str] | None = None
        self.stream: Any = None
        self.stopped = False

    def _ensure(self) -> Any:
        if self.stream is None:
            self.stream = self.owner.guard.stream(self.question, self.contexts or [])
        return self.stream

    def push(self, chunk: Any) -> list[ChainDict]:
        o = self.owner
        if not isinstance(chunk, dict):
            raise TypeError(f"GuardedChain streams dict chunks (as create_retrieval_chain does), got {type(chunk).__name__}")
        out: list[ChainDict] = []
        rest = {k: v for k, v in chunk.items() if k != o.answer_key}
        if o.question_key in chunk and isinstance(chunk[o.question_key], str):
            self.question = chunk[o.question_key]
        if o.context_key in chunk:
            self.contexts = _texts(chunk[o.context_key])
        if rest:
            out.append(rest)
        if o.answer_key in chunk:
            piece = chunk[o.answer_key]
            piece = getattr(piece, "content", piece)
            if self.contexts is None:
                raise ValueError(f"the chain streamed {o.answer_key!r} before {o.context_key!r}: the guard needs the "
                                 "documents first")
            if piece and self.ttft is None:
                self.ttft = time.perf_counter() - self.start
            released = self._ensure().feed(piece)
            if released:
                out.append({o.answer_key: released})
            self.stopped = self.stream.stopped
        return out

    def end(self) -> Iterator[ChainDict]:
        stream = self._ensure()
        end = stream.finish(time_to_first_token=self.ttft, generation=time.perf_counter() - self.start)
        if end.text:
            yield {self.owner.answer_key: end.text}
        if stream.stopped:
            yield self.owner._stop_chunk(end.verdict)
        else:
            yield {"guardrail": end.verdict}


@dataclass
class _Run:
    """One LLM call being timed: when it started, and its time to first token once a token came."""

    start: float
    first_token: float | None = None


class GuardrailCallbackHandler(BaseCallbackHandler):
    """Time to first token and total generation time of every LLM / chat-model call, into ``telemetry``."""

    def __init__(self, telemetry: Telemetry) -> None:
        self.telemetry = telemetry
        self._runs: dict[UUID, _Run] = {}

    def on_llm_start(self, serialized: Any, prompts: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._runs[run_id] = _Run(time.perf_counter())

    def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._runs[run_id] = _Run(time.perf_counter())

    def on_llm_new_token(self, token: str | list[str | dict[str, Any]], *, run_id: UUID, **kwargs: Any) -> None:
        # a chat model may stream content blocks (a list) instead of a string: any non-empty token is the first one
        run = self._runs.get(run_id)
        if run is not None and run.first_token is None and token:
            run.first_token = time.perf_counter() - run.start

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        run = self._runs.pop(run_id, None)
        if run is not None:
            total = time.perf_counter() - run.start
            self.telemetry.observe_generation(run.first_token if run.first_token is not None else total, total)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._runs.pop(run_id, None)
