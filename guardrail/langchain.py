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
- ``stream``/``astream`` pass the chain's other chunks through and release its ``answer`` pieces (strings, message
  chunks whose content is a string or a list of content blocks, ``GenerationChunk``) through the same
  :class:`~guardrail.stream.release.ReleaseGate` as the gateway and the OpenAI wrapper: in block/fallback mode a
  piece goes out unchanged once its sentence passed; a failing sentence ends the stream with a chunk
  ``{"guardrail": verdict, "finish_reason": "content_filter"}`` (plus the fallback answer in fallback mode), a
  finished one with ``{"guardrail": verdict}``.
- Every other Runnable path goes through those: ``batch``/``abatch`` (and ``*_as_completed``) through
  ``invoke``/``ainvoke``, ``transform``/``atransform`` through ``stream``/``astream``. ``astream_events`` and
  ``astream_log`` report the GuardedChain's own run (its input, the chunks ``astream`` released, its output or the
  block), never the wrapped chain's runs, whose events carry the unchecked answer's tokens (also when the
  GuardedChain runs inside a larger chain). The caller's other callback handlers (tracing,
  ``GuardrailCallbackHandler``) still see the wrapped chain's runs.
- ``GuardrailCallbackHandler(telemetry)`` records time to first token and generation time of every LLM call of a
  chain into the Prometheus histograms.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from guardrail import wire
from guardrail.errors import ConfigurationError, GuardrailBlocked, MissingDependencyError, UnreadableError
from guardrail.guard import Guard
from guardrail.stream.release import AsyncGatedStream, GatedStream, Reading, ReleaseGate
from guardrail.telemetry import Telemetry
from guardrail.verdict import Timings, Verdict

try:
    from langchain_core.callbacks import (AsyncCallbackManagerForChainRun, BaseCallbackHandler, BaseCallbackManager,
                                          CallbackManagerForChainRun)
    from langchain_core.runnables import Runnable, RunnableConfig
    from langchain_core.runnables.config import patch_config
    from langchain_core.runnables.utils import AddableDict
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("the LangChain integration needs: pip install 'rag-guardrail[langchain]'") from exc


def _texts(docs: Any) -> list[str]:
    if isinstance(docs, str):
        # the chain's context formatted into one string ("\n\n".join of the documents' page_content, as LangChain's
        # RAG examples do): one passage, not one per character
        return [docs] if docs.strip() else []
    out = []
    for d in docs or []:
        text = d.get("page_content") if isinstance(d, dict) else getattr(d, "page_content", d)
        if not isinstance(text, str):
            raise ConfigurationError(f"context documents must be Documents, {{\"page_content\": str}} dicts or strings, "
                                     f"got {type(d).__name__}")
        out.append(text)
    return out


#: content blocks whose ``text`` is answer text (LangChain merges streamed blocks by ``index`` whatever their type)
_TEXT_BLOCKS = frozenset({None, "text", "text_delta", "output_text"})
#: content blocks of a reasoning trace: text a client may show that is not the answer
_TRACE_BLOCKS = frozenset({"reasoning", "thinking", "reasoning_content"})
#: fields of a LangChain message that are not shown as the answer (ids, token counts, provider metadata)
_MESSAGE_META = frozenset({"id", "name", "type", "example", "response_metadata", "usage_metadata", "role",
                           "chunk_position", "lc", "lc_kwargs"})


def _block_trace(block: dict[str, Any]) -> str:
    parts = [block.get(k) for k in ("reasoning", "thinking", "text")]
    summary = block.get("summary")
    if isinstance(summary, list):
        parts += [s.get("text") if isinstance(s, dict) else s for s in summary]
    return "".join(p for p in parts if isinstance(p, str))


#: media content blocks, and the fields of theirs that hold data or an address, never prose a client shows
_MEDIA_BLOCKS = frozenset({"image_url", "image", "file", "audio", "video", "input_image", "input_audio"})
_MEDIA_FIELDS = frozenset({"type", "url", "data", "mime_type", "source_type", "id", "detail", "format", "base64",
                           "file_id", "filename", "index", "image_url", "input_audio", "source", "media_type"})


def _media_only(block: Any) -> bool:
    """A media block whose strings are all data, addresses or ids (an ``alt`` text or a caption is not)."""
    if not isinstance(block, dict) or block.get("type") not in _MEDIA_BLOCKS:
        return False
    stack: list[Any] = [block]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, val in node.items():
                if key not in _MEDIA_FIELDS and not (isinstance(val, str) and wire.is_atom(val)):
                    return False
                stack.append(val)
        elif isinstance(node, list):
            stack.extend(node)
    return True


def _openai_message(value: Any, *, streamed: bool) -> dict[str, Any]:
    """A LangChain message (chunk) as the OpenAI message (delta) it stands for, so that :mod:`guardrail.wire` reads it
    as the gateway reads an answer: every text a client may show (content strings and text blocks of any type that
    LangChain merges into text, tool calls and their streamed argument pieces, ``additional_kwargs`` such as a
    refusal or a function call), a reasoning trace as a trace, and a field or block it does not know to be text-free
    as unreadable."""
    message: dict[str, Any] = {}
    content = getattr(value, "content", None)
    trace: list[str] = []
    if isinstance(content, list):
        parts: list[Any] = []
        for block in content:
            if isinstance(block, str):
                parts.append({"type": "text", "text": block})
            elif isinstance(block, dict) and block.get("type") in _TRACE_BLOCKS:
                trace.append(_block_trace(block))
            elif isinstance(block, dict) and block.get("type") in _TEXT_BLOCKS and "text" in block:
                # as a text part; its other fields go along (the reader decides: prose it does not read is unreadable)
                parts.append({**{k: v for k, v in block.items() if k not in ("index", "id")}, "type": "text"})
            elif isinstance(block, dict) and block.get("type") == "tool_use":
                args = block.get("input", block.get("partial_json", ""))
                message.setdefault("tool_calls", []).append({
                    "index": block.get("index", 0), "id": block.get("id"), "type": "function",
                    "function": {"name": block.get("name"), "arguments": args if isinstance(args, str)
                                 else json.dumps(args)}})
            elif _media_only(block):
                continue  # an image, a file: its data and address are no answer text
            else:
                parts.append(block)  # the reader decides (text it does not know is unreadable)
        message["content"] = parts
    elif content is not None:
        message["content"] = content
    extra = dict(getattr(value, "additional_kwargs", None) or {})
    whole = list(getattr(value, "tool_calls", None) or []) + list(getattr(value, "invalid_tool_calls", None) or [])
    # a stream's pieces carry their calls' pieces; a model that does not stream hands the stream one whole message,
    # whose calls are whole (round 51: they went out unread)
    calls = (list(getattr(value, "tool_call_chunks", None) or []) or whole) if streamed else whole
    if calls:
        extra.pop("tool_calls", None)  # the provider's raw copy of the same calls
        for k, call in enumerate(calls):
            args = call.get("args")
            message.setdefault("tool_calls", []).append({
                "index": call.get("index", k) if streamed else k, "id": call.get("id"), "type": "function",
                "function": {"name": call.get("name"), "arguments": args if isinstance(args, str) or args is None
                             else json.dumps(args)}})
    for key, val in extra.items():
        if key in ("reasoning_content", "reasoning"):
            trace.append(val if isinstance(val, str) else json.dumps(val))
        elif key in message and message[key] != val:
            # ``additional_kwargs={"content": ...}`` beside the message's own content: the guard would read one and
            # the caller the other (round 51)
            raise UnreadableError(f"the message's additional_kwargs hold a {key!r} that differs from its own {key}: "
                                  "the guard cannot tell which one the caller shows")
        elif key not in _MESSAGE_META:
            message[key] = val
    if trace:
        message["reasoning_content"] = "".join(trace)
    return message


def _piece_text(value: Any) -> str:
    """The answer text of a value that is only text: a string or a ``GenerationChunk`` (``text``); UnreadableError
    for any other value (a message is read by :func:`_message_text`)."""
    if isinstance(value, str):
        return value
    text = getattr(value, "text", None)
    if isinstance(text, str) and not hasattr(value, "content"):
        return text
    raise UnreadableError(f"the answer is {type(value).__name__}, not text, a message or a GenerationChunk "
                          "(a structured output is not read: guard the text it is made from)")


def _message_text(value: Any) -> str:
    """Every answer text of a whole answer (a string, a message, a GenerationChunk), read as the gateway reads a chat
    completion; UnreadableError for what it cannot read (a trace with no answer, a field it does not know...)."""
    if isinstance(value, str) or not hasattr(value, "content"):
        return _piece_text(value)
    body = {"object": "chat.completion", "choices": [
        {"index": 0, "message": {"role": "assistant", **_openai_message(value, streamed=False)}, "finish_reason": "stop"}]}
    return "".join(text for _, text in wire.iter_texts(wire.read_answers(body)))


def _cut_piece(value: Any, text: str) -> Any:
    """The answer value with only ``text`` (a prefix of its text); None when it cannot be copied."""
    if isinstance(value, str):
        return text
    copy = getattr(value, "model_copy", None)
    if copy is None:
        return None
    return copy(update={"content": text} if hasattr(value, "content") else {"text": text})


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
    def _parts(self, out: Any, input: Any = None) -> tuple[str, list[str], str]:
        """The question (the chain's output's, else its input's, as a stream reads it: a chain that drops the question
        from its output, ``.pick(["context", "answer"])``, is still judged with it), the contexts and the answer."""
        if not isinstance(out, dict) or self.answer_key not in out:
            raise ConfigurationError(f"the chain's output must be a dict with {self.answer_key!r} (and "
                                     f"{self.context_key!r}); got {type(out).__name__}: set answer_key/context_key "
                                     "to its keys")
        asked = out.get(self.question_key)
        if not isinstance(asked, str) and isinstance(input, dict):
            asked = input.get(self.question_key)
        return str(asked or ""), _texts(out.get(self.context_key)), out[self.answer_key]

    def _verdict(self, question: str, contexts: list[str], value: Any, total: float) -> Verdict:
        try:
            answer = _message_text(value)
        except UnreadableError as exc:  # blocked in block mode, with the reason (on_error decides)
            return self.guard.report(self.guard.error_verdict(exc, "", timings=Timings(0.0, total, total)))
        return self.guard.check(question, contexts, answer, time_to_first_token=total, generation=total)

    async def _averdict(self, question: str, contexts: list[str], value: Any, total: float) -> Verdict:
        try:
            answer = _message_text(value)
        except UnreadableError as exc:
            return self.guard.report(self.guard.error_verdict(exc, "", timings=Timings(0.0, total, total)))
        return await self.guard.acheck(question, contexts, answer, time_to_first_token=total, generation=total)

    def _apply(self, out: dict[str, Any], verdict: Verdict) -> dict[str, Any]:
        if verdict.action == "block":
            raise GuardrailBlocked(verdict)
        result = {**out, "guardrail": verdict}
        if verdict.action == "fallback":
            result[self.answer_key] = self.guard.policy.fallback_message
        return result

    def invoke(self, input: ChainDict, config: RunnableConfig | None = None, **kwargs: Any) -> ChainDict:
        return self._call_with_config(self._invoke, input, config, **kwargs)

    async def ainvoke(self, input: ChainDict, config: RunnableConfig | None = None, **kwargs: Any) -> ChainDict:
        return await self._acall_with_config(self._ainvoke, input, config, **kwargs)

    def _invoke(self, input: ChainDict, run_manager: CallbackManagerForChainRun, config: RunnableConfig,
                **kwargs: Any) -> ChainDict:
        start = time.perf_counter()
        out = self.chain.invoke(input, _inner(config), **kwargs) if self.chain is not None else input
        question, contexts, answer = self._parts(out, input)
        total = time.perf_counter() - start
        return self._apply(out, self._verdict(question, contexts, answer, total))

    async def _ainvoke(self, input: ChainDict, run_manager: AsyncCallbackManagerForChainRun, config: RunnableConfig,
                       **kwargs: Any) -> ChainDict:
        start = time.perf_counter()
        out = await self.chain.ainvoke(input, _inner(config), **kwargs) if self.chain is not None else input
        question, contexts, answer = self._parts(out, input)
        total = time.perf_counter() - start
        return self._apply(out, await self._averdict(question, contexts, answer, total))

    # ----------------------------------------------------------------- streams
    def stream(self, input: ChainDict, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[ChainDict]:
        yield from self._transform_stream_with_config(iter([input]), self._stream, config, **kwargs)

    async def astream(self, input: ChainDict, config: RunnableConfig | None = None, **kwargs: Any) -> AsyncIterator[ChainDict]:
        async for chunk in self._atransform_stream_with_config(_one(input), self._astream, config, **kwargs):
            yield chunk

    def _stream(self, inputs: Iterator[ChainDict], run_manager: CallbackManagerForChainRun, config: RunnableConfig,
                **kwargs: Any) -> Iterator[ChainDict]:
        # AddableDict chunks, as LangChain's own dict streams are: a runnable after this one (``| itemgetter(...)``)
        # and the run's output (``astream_events``' on_chain_end) are the chunks added up, not the last one alone
        for chunk in self._stream_items(inputs, run_manager, config, **kwargs):
            yield AddableDict(chunk)

    async def _astream(self, inputs: AsyncIterator[ChainDict], run_manager: AsyncCallbackManagerForChainRun,
                       config: RunnableConfig, **kwargs: Any) -> AsyncIterator[ChainDict]:
        async for chunk in self._astream_items(inputs, run_manager, config, **kwargs):
            yield AddableDict(chunk)

    def _stream_items(self, inputs: Iterator[ChainDict], run_manager: CallbackManagerForChainRun,
                      config: RunnableConfig, **kwargs: Any) -> Iterator[ChainDict]:
        input = next(inputs)
        if self.chain is None:
            yield self._invoke(input, run_manager, config)
            return
        feed = _ChainFeed(self, input)
        upstream = self.chain.stream(input, _inner(config), **kwargs)
        items = (item for chunk in upstream for item in feed.split(chunk))
        head = yield from feed.before_answer(items)
        gate = feed.gate()

        def close() -> None:
            items.close()
            getattr(upstream, "close", lambda: None)()

        yield from GatedStream(itertools.chain(head, items), gate, close=close)
        yield from feed.last(gate)

    async def _astream_items(self, inputs: AsyncIterator[ChainDict], run_manager: AsyncCallbackManagerForChainRun,
                             config: RunnableConfig, **kwargs: Any) -> AsyncIterator[ChainDict]:
        input = await inputs.__anext__()
        if self.chain is None:
            yield await self._ainvoke(input, run_manager, config)
            return
        feed = _ChainFeed(self, input)
        upstream = self.chain.astream(input, _inner(config), **kwargs)
        items = feed.asplit(upstream)
        head: list[ChainDict] = []
        async for item in items:  # as feed.before_answer, for an async source
            if feed.is_answer(item):
                head.append(item)
                break
            yield item
        gate = feed.gate()

        async def close() -> None:
            await items.aclose()
            aclose = getattr(upstream, "aclose", None)
            if aclose is not None:
                await aclose()

        async for item in AsyncGatedStream(_prepend(head, items), gate, close=close):  # checks off the event loop
            yield item
        for item in feed.last(gate):
            yield item


def _inner(config: RunnableConfig) -> RunnableConfig:
    """The config the wrapped chain runs with: a child run of the GuardedChain's, reported to the caller's callback
    handlers (tracing, :class:`GuardrailCallbackHandler`) but not to the handlers that stream runs to the caller
    (``astream_events``, ``astream_log``, at any depth): those would hand over the unchecked answer's tokens. What
    those streams report of a GuardedChain is its own run: its input, the chunks ``stream``/``astream`` released
    and its output (or the block)."""
    callbacks = config.get("callbacks")
    if isinstance(callbacks, BaseCallbackManager):  # (always, under the GuardedChain's run)
        manager = callbacks.copy()
        for handler in [*manager.handlers, *manager.inheritable_handlers]:
            if _streams_runs(handler):
                manager.remove_handler(handler)
        return patch_config(config, callbacks=manager)
    inner = config.copy()
    if isinstance(callbacks, list):
        inner["callbacks"] = [h for h in callbacks if not _streams_runs(h)]
    return inner


def _streams_runs(handler: Any) -> bool:
    """A handler that turns runs into a stream for the caller (langchain-core's ``_StreamingCallbackHandler`` mixin of
    the ``astream_events`` and ``astream_log`` handlers, read by what it does)."""
    return callable(getattr(handler, "tap_output_aiter", None)) or callable(getattr(handler, "tap_output_iter", None))


async def _one(item: ChainDict) -> AsyncIterator[ChainDict]:
    yield item


async def _prepend(head: Iterable[ChainDict], rest: AsyncIterable[ChainDict]) -> AsyncIterator[ChainDict]:
    for item in head:
        yield item
    async for item in rest:
        yield item


def _merged(so_far: Any, piece: Any, key: str) -> Any:
    """A streamed value's pieces added up, as LangChain merges a stream's chunks (strings and lists add)."""
    try:
        return so_far + piece
    except TypeError:
        raise ConfigurationError(f"the chain streamed {key!r} in pieces that do not add up ({type(so_far).__name__} "
                                 f"and {type(piece).__name__}): stream a list of documents or one string") from None


class _ChainFeed:
    """One stream of a GuardedChain, before its :class:`ReleaseGate`: each chunk split into the rest (no answer text)
    and its answer piece ``{answer_key: piece}``, the question and documents noted on the way."""

    def __init__(self, owner: GuardedChain, input: ChainDict) -> None:
        self.owner = owner
        self.start = time.perf_counter()
        self.question = str(input.get(owner.question_key, "")) if isinstance(input, dict) else ""
        self.contexts: list[str] | None = None
        self._context: Any = None  # the context's pieces merged so far, as LangChain merges a stream's chunks
        self._asked: str | None = None  # the same for the question
        self._answered = False

    def split(self, chunk: Any) -> list[ChainDict]:
        o = self.owner
        if not isinstance(chunk, dict):
            raise ConfigurationError(f"GuardedChain streams dict chunks (as create_retrieval_chain does), got "
                                     f"{type(chunk).__name__}: guard a chain that returns {{question, context, answer}}")
        if o.question_key in chunk and isinstance(chunk[o.question_key], str):
            # a question streamed in pieces (a chain that rewrites it token by token) is all of them, merged as
            # LangChain merges the chunks; the first piece replaces the input's
            self._asked = chunk[o.question_key] if self._asked is None else self._asked + chunk[o.question_key]
            self.question = self._asked
        if o.context_key in chunk:
            # a context streamed in pieces (a generator formatting the documents, a retriever yielding a list at a
            # time) is all of them, merged as LangChain merges the chunks (strings and lists add up)
            if self._answered:
                raise ConfigurationError(f"the chain streamed more of {o.context_key!r} after {o.answer_key!r} had "
                                         "begun: the guard judges the answer against the documents it has when the "
                                         "answer starts; stream the documents first")
            piece = chunk[o.context_key]
            if piece is not None:  # a None piece adds nothing (LangChain's merge skips it too)
                self._context = piece if self._context is None else _merged(self._context, piece, o.context_key)
                self.contexts = _texts(self._context)
        rest = {k: v for k, v in chunk.items() if k != o.answer_key}
        out = [rest] if rest else []
        if o.answer_key in chunk:
            self._answered = True
            if self.contexts is None:
                raise ConfigurationError(f"the chain streamed {o.answer_key!r} before {o.context_key!r}: the guard "
                                         "needs the documents first")
            out.append({o.answer_key: chunk[o.answer_key]})
        return out

    def is_answer(self, item: ChainDict) -> bool:
        return self.owner.answer_key in item

    def before_answer(self, items: Iterator[ChainDict]) -> Generator[ChainDict, None, list[ChainDict]]:
        """Yield the items before the first answer piece as they come (the gate opens once the documents came);
        return that piece (none when the chain streamed no answer)."""
        for item in items:
            if self.is_answer(item):
                return [item]
            yield item
        return []

    async def asplit(self, chunks: AsyncIterable[Any]) -> AsyncGenerator[ChainDict, None]:
        async for chunk in chunks:
            for item in self.split(chunk):
                yield item

    def gate(self) -> ReleaseGate[ChainDict]:
        """The releaser of the answer, opened once its first piece came (or the chain ended without one)."""
        guard, question, contexts = self.owner.guard, self.question, self.contexts or []
        return ReleaseGate(lambda: guard.stream(question, contexts), _ChainChunks(self.owner.answer_key), self.start)

    @staticmethod
    def last(gate: ReleaseGate[ChainDict]) -> list[ChainDict]:
        """The chunk that ends a finished stream: the verdict (a stopped one ended with the adapter's stop chunk)."""
        return [] if gate.stopped else [{"guardrail": gate.verdict}]


class _ChainChunks:
    """ChunkAdapter for the items of :class:`_ChainFeed`: an answer piece is read as text (:func:`_piece_text`) and cut
    as a copy with less text; the rest holds no text and goes out in order. A stopped stream ends with
    ``{"guardrail": verdict, "finish_reason": "content_filter"}`` (plus the fallback answer in fallback mode)."""

    def __init__(self, answer_key: str) -> None:
        self.answer_key = answer_key
        self.deltas = wire.DeltaReader(choices=1)  # one per stream: tool-call arguments arrive as pieces of JSON
        self._block = -1  # the highest content-block index streamed so far
        self._types: dict[Any, Any] = {}  # each content-block index streamed so far, with its block's type
        self._last_key: Any = None  # the last index that is no integer ("lc_...")

    def read(self, item: ChainDict) -> Reading:
        if self.answer_key not in item:
            return Reading({})
        value = item[self.answer_key]
        if isinstance(value, str) or not hasattr(value, "content"):
            return Reading({0: _piece_text(value)})
        self._check_order(value)
        chunk = {"object": "chat.completion.chunk", "choices": [
            {"index": 0, "delta": _openai_message(value, streamed=True), "finish_reason": None}]}
        deltas = self.deltas.read(chunk)
        return Reading({0: "".join(d.text for d in deltas)}, self.deltas.holding,
                       frozenset(d.index for d in deltas if d.trace))

    def _check_order(self, value: Any) -> None:
        """LangChain merges streamed content blocks by their ``index``: a block that goes back to a lower index would
        be shown in another place than the guard read it."""
        content = getattr(value, "content", None)
        for block in content if isinstance(content, list) else []:
            index = block.get("index") if isinstance(block, dict) else None
            if index is None or isinstance(index, bool):
                continue
            kind = "text" if block.get("type") in _TEXT_BLOCKS else block.get("type")  # "text_delta" is text too
            if index in self._types and self._types[index] != kind:
                # merged into the block first streamed at that index, it takes that block's type: text merged into
                # a reasoning or image block is no text to ``.text`` (round 32)
                raise UnreadableError(f"a streamed content block of type {kind!r} reuses index {index!r} of a "
                                      f"{self._types[index]!r} block: merged, its text would not be shown as text")
            if isinstance(index, int):
                if index < self._block:
                    raise UnreadableError(f"a streamed content block goes back to index {index} after {self._block}: "
                                          "merged, its text would stand elsewhere than where it was read")
                self._block = index
            elif index in self._types and index != self._last_key:
                raise UnreadableError(f"a streamed content block goes back to index {index!r}: merged, its text "
                                      "would stand elsewhere than where it was read")
            else:
                self._last_key = index
            self._types.setdefault(index, kind)

    def shows(self, choice: int, *, final: bool = False) -> bool:
        return self.deltas.shows(choice, final=final)

    def flush(self) -> dict[int, str]:
        """Text still held by unfinished tool-call arguments when the stream ends."""
        return self.deltas.flush()

    def cut(self, item: ChainDict, choice: int, text: str) -> ChainDict | None:
        value = item[self.answer_key]
        if getattr(value, "tool_call_chunks", None) or getattr(value, "tool_calls", None) or \
                set(getattr(value, "additional_kwargs", None) or {}) - _MESSAGE_META:
            return None  # tool calls, a refusal...: never cut, the partial item is not delivered
        piece = _cut_piece(value, text)  # its text (a string content) and nothing else
        return None if piece is None else {self.answer_key: piece}

    def stop_items(self, choices: Sequence[int], text: Mapping[int, str | None], verdict: Verdict,
                   finished: frozenset[int] = frozenset()) -> list[ChainDict]:
        chunk: ChainDict = {"guardrail": verdict, "finish_reason": "content_filter"}
        fallback = next((t for t in text.values() if t is not None), None)  # one answer: a chain's output
        if fallback is not None:
            chunk[self.answer_key] = fallback
        return [chunk]

    def mark(self, item: ChainDict, verdict: Verdict) -> ChainDict:
        return item  # no item ends the answer: the verdict comes in the last chunk


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
