"""LlamaIndex: our checks as LlamaIndex evaluators, and a query-engine wrapper that guards responses with their
source nodes as the contexts. Needs ``guardrail[llamaindex]`` (``llama-index-core``).

>>> evaluator = GuardrailFaithfulnessEvaluator(Evaluator(nli=NLIScorer(default_nli_model())))   # doctest: +SKIP
>>> evaluator.evaluate_response(query=q, response=query_engine.query(q)).passing                # doctest: +SKIP
>>> engine = GuardedQueryEngine(index.as_query_engine(), guard)                                 # doctest: +SKIP
>>> engine.query(q).metadata["guardrail"].action                                                # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import contextvars
import re
import time
from collections.abc import AsyncGenerator, Generator, Sequence
from typing import Any

from guardrail.checks.evaluator import Evaluator
from guardrail.decorator import DEFAULT_STOP_MARKER, AsyncGuardedIterator, GuardedIterator, _TextChunks
from guardrail.errors import ConfigurationError, GuardrailBlocked, MissingDependencyError, UnreadableError
from guardrail.guard import Guard
from guardrail.stream.release import ReleaseGate
from guardrail.verdict import Timings, Verdict

try:
    from llama_index.core.base.response.schema import AsyncStreamingResponse, StreamingResponse
    from llama_index.core.evaluation import BaseEvaluator, EvaluationResult
    from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]
    from llama_index.core.instrumentation.event_handlers import BaseEventHandler
    from llama_index.core.instrumentation.events.retrieval import RetrievalEndEvent
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("the LlamaIndex integration needs: pip install 'rag-guardrail[llamaindex]'") from exc


class _GuardrailEvaluator(BaseEvaluator):
    check: str = ""

    def __init__(self, evaluator: Evaluator, threshold: float | None = None) -> None:
        if self.check not in evaluator.checks:
            raise ValueError(f"the Evaluator does not run {self.check!r}; build it with checks=[{self.check!r}, ...]")
        self._evaluator = evaluator
        self._threshold = threshold

    def _get_prompts(self) -> dict[str, Any]:
        return {}

    def _update_prompts(self, prompts: Any) -> None:
        return None

    def _limit(self) -> float:
        if self._threshold is not None:
            return self._threshold
        check = self._evaluator.faithfulness_check
        return check.threshold if self.check == "faithfulness" and check is not None else 0.2

    def _result(self, query: str, contexts: list[str], response: str) -> EvaluationResult:
        ev = self._evaluator.evaluate(query, contexts, response, checks=[self.check])
        limit = self._limit()
        if self.check == "faithfulness":
            faith = ev.faithfulness
            score = faith.score if faith else None
            weak = [s for s in (faith.sentences if faith else ()) if s.score is not None and s.score < limit]
            passing = score is not None and not weak
            feedback = "; ".join(f'sentence {s.index + 1} "{s.text}" is not supported (score {s.score:.2f})' for s in weak)
        else:
            score = ev.response_relevance if self.check == "response_relevance" else (ev.retrieval.top if ev.retrieval else None)
            passing = score is not None and score >= limit
            feedback = ""
        if score is None:
            return EvaluationResult(query=query, contexts=contexts, response=response, passing=False,
                                    invalid_result=True, invalid_reason=f"nothing to score for {self.check}")
        return EvaluationResult(query=query, contexts=contexts, response=response, passing=passing, score=score,
                                feedback=feedback or f"{self.check} {score:.2f} (threshold {limit:.2f})")

    async def aevaluate(self, query: str | None = None, response: str | None = None,
                        contexts: Sequence[str] | None = None, **kwargs: Any) -> EvaluationResult:
        if response is None:
            raise ValueError("a guardrail evaluator needs the response text")
        return await asyncio.to_thread(self._result, query or "", list(contexts or []), response)


class GuardrailFaithfulnessEvaluator(_GuardrailEvaluator):
    """Faithfulness (NLI, per sentence) as a LlamaIndex evaluator: ``passing`` when every sentence is supported."""

    check = "faithfulness"


class GuardrailRelevancyEvaluator(_GuardrailEvaluator):
    """Response relevance (embedding cosine of question and answer) as a LlamaIndex evaluator."""

    check = "response_relevance"


#: the ids of the nodes retrieved during the query this task runs (None outside a guarded query). A context
#: variable, not shared state: concurrent queries each see their own set, and the tasks a query starts (a
#: sub-question engine's ``asyncio.gather``) inherit it.
_RETRIEVED: contextvars.ContextVar[set[str] | None] = contextvars.ContextVar("guardrail_retrieved", default=None)


class _RetrievalRecorder(BaseEventHandler):
    """Notes the nodes each retriever returns (LlamaIndex's ``RetrievalEndEvent``) into the running query's set."""

    @classmethod
    def class_name(cls) -> str:
        return "GuardrailRetrievalRecorder"

    def handle(self, event: Any, **kwargs: Any) -> None:
        seen = _RETRIEVED.get()
        if seen is not None and isinstance(event, RetrievalEndEvent):
            for n in event.nodes or []:
                node = getattr(n, "node", n)
                seen.add(getattr(node, "node_id", ""))
                get = getattr(node, "get_content", None)
                if get is not None:
                    seen.add(_TEXT_KEY + str(get()))


def _record_retrievals() -> None:
    """Attach the recorder to LlamaIndex's root dispatcher once (what it records is per query, see ``_RETRIEVED``)."""
    dispatcher = get_dispatcher()
    if not any(isinstance(h, _RetrievalRecorder) for h in dispatcher.event_handlers):
        dispatcher.add_event_handler(_RetrievalRecorder())


_TEXT_KEY = "\x00text:"
#: the label a citation engine puts before each piece of a retrieved text ("Source 1:\n<piece>\n")
_CITATION_LABEL = re.compile(r"\ASource \d+:\s*")


def _words(text: str) -> str:
    return " ".join(text.split())


def _retrieved(node: Any, text: str, retrieved: set[str]) -> bool:
    """A source node that holds retrieved text: one a retriever returned, a node of a stored document (a neighbour a
    postprocessor fetched: it has a source document), or a piece of a retrieved text (a citation engine's "Source 1:"
    chunks: after its label, the node's whole text lies within one retrieved text). A node that only *contains* a
    retrieved text is not one: text an engine wrote itself (a sub-question's answer) may quote a chunk and add to it,
    and what it adds is no evidence."""
    if getattr(node, "node_id", None) in retrieved or getattr(node, "ref_doc_id", None):
        return True
    piece = _words(_CITATION_LABEL.sub("", text, count=1))
    return bool(piece) and any(piece in _words(t[len(_TEXT_KEY):]) for t in retrieved if t.startswith(_TEXT_KEY))


class GuardedQueryEngine:
    """Wraps a LlamaIndex query engine: each answer is checked against its own source nodes.

    - ``query``/``aquery`` and ``synthesize``/``asynthesize`` (a query bundle and the nodes to answer from: the
      nodes are the contexts) are guarded alike. The verdict is in ``response.metadata["guardrail"]``; block raises
      :class:`GuardrailBlocked`; fallback replaces the response text.
    - A streaming engine (``streaming=True``: a ``StreamingResponse`` or ``AsyncStreamingResponse``) has its
      ``response_gen`` released sentence by sentence through the same :class:`~guardrail.stream.release.ReleaseGate`
      as the other integrations (as ``@guarded`` streams): in block / fallback mode a token goes out once its
      sentence passed; at the first unsupported sentence the stream ends with a
      :class:`~guardrail.decorator.StreamStopped` token (``stop_marker`` in block mode, the fallback message in
      fallback mode). ``str(response)``, ``get_response()`` and ``print_response_stream()`` read the same guarded
      tokens. The verdict is put in ``response.metadata["guardrail"]`` once the stream ended.
    - Other attributes of the wrapped engine are forwarded only when they produce no answer text (``retrieve``,
      ``aretrieve``, ``retriever``, ``callback_manager``, ``get_prompts``, ``update_prompts``); any other one (e.g.
      ``with_retriever``, which returns an unguarded engine) is refused with a :class:`ConfigurationError` that names
      the guarded calls. The unguarded engine stays reachable, on purpose, as ``query_engine``.
    - A response whose answer is not text (e.g. a ``PydanticResponse``) cannot be read: the policy's ``on_error``
      applies (blocked by default in block mode).
    - The contexts of ``query``/``aquery`` are the source nodes that a retriever returned during the query. A
      composite engine also puts text the LLM wrote among its source nodes (a ``SubQuestionQueryEngine``'s "Sub
      question: ... Response: ..." nodes, a graph or multi-step engine's intermediate answers): that text is no
      evidence, or a hallucinated sub-answer would support the same hallucination in the final answer; a node
      counts only when a retriever returned it, it belongs to a stored document, or its text is a piece of a
      retrieved text (a sub-answer that quotes a chunk and adds to it is none of these). When no retrieval was seen
      (an engine that answers from nodes it was handed), every source node counts.
    """

    def __init__(self, query_engine: Any, guard: Guard, *, stop_marker: str = DEFAULT_STOP_MARKER) -> None:
        self.query_engine = query_engine
        self.guard = guard
        self.stop_marker = stop_marker
        _record_retrievals()

    @staticmethod
    def _contexts(response: Any, retrieved: set[str] | None = None) -> list[str]:
        out = []
        for n in getattr(response, "source_nodes", None) or []:
            node = getattr(n, "node", n)  # a NodeWithScore, or a node itself
            get = getattr(node, "get_content", None)
            if get is None:
                raise ConfigurationError(f"source_nodes must be NodeWithScore or nodes with get_content(), got "
                                         f"{type(n).__name__}")
            text = get()
            if retrieved and not _retrieved(node, text, retrieved):
                continue  # made during the query (an engine's own sub-answer), not retrieved: no evidence
            out.append(text)
        return out

    def _apply(self, response: Any, verdict: Verdict) -> Any:
        if verdict.action == "block":
            raise GuardrailBlocked(verdict)
        if verdict.action == "fallback" and not isinstance(getattr(response, "response", None), (str, type(None))):
            # a structured answer (PydanticResponse): the fallback is text, so it comes back as a text Response
            from llama_index.core.base.response.schema import Response

            response = Response(response=self.guard.policy.fallback_message,
                                source_nodes=list(getattr(response, "source_nodes", None) or []),
                                metadata=dict(getattr(response, "metadata", None) or {}))
        elif verdict.action == "fallback":
            response.response = self.guard.policy.fallback_message
        response.metadata = {**(response.metadata or {}), "guardrail": verdict}
        return response

    def _stream(self, question: str, response: Any, start: float, retrieved: set[str] | None = None) -> Any:
        """A streaming response with its tokens released through a :class:`ReleaseGate`."""
        contexts = self._contexts(response, retrieved)
        gate = ReleaseGate(lambda: self.guard.stream(question, contexts), _TextChunks(self.stop_marker), start)

        def on_verdict(verdict: Verdict) -> None:
            response.metadata = {**(response.metadata or {}), "guardrail": verdict}

        source = response.response_gen
        if source is None:  # nothing to release sentence by sentence (a text set beside it is not read): on_error
            exc = UnreadableError(f"a {type(response).__name__} without a response_gen: guardrail cannot read it")
            verdict = self.guard.report(self.guard.error_verdict(exc, "", timings=Timings(0.0)))
            if hasattr(response, "response_txt"):
                response.response_txt = None
            if verdict.action == "fallback":
                response.response_txt = self.guard.policy.fallback_message
                response.metadata = {**(response.metadata or {}), "guardrail": verdict}
                return response
            return self._apply(response, verdict)
        if getattr(response, "response_txt", None) is not None:
            response.response_txt = None  # what str() shows is built from the guarded tokens, not a text set aside
        if isinstance(response, AsyncStreamingResponse):
            response.response_gen = _agen(AsyncGuardedIterator(source, gate, close=getattr(source, "aclose", None),
                                                               on_verdict=on_verdict))
        else:
            response.response_gen = _gen(GuardedIterator(source, gate, close=getattr(source, "close", None),
                                                         on_verdict=on_verdict))
        return response

    def _text(self, response: Any, start: float) -> tuple[str | None, float]:
        """A whole response's answer text (None: it is not text) and the seconds since the query started."""
        total = time.perf_counter() - start
        text = getattr(response, "response", None)
        return (None if text is not None and not isinstance(text, str) else text or ""), total

    def _checked(self, question: str, response: Any, start: float, retrieved: set[str] | None = None) -> Any:
        if isinstance(response, (StreamingResponse, AsyncStreamingResponse)):
            return self._stream(question, response, start, retrieved)
        text, total = self._text(response, start)
        if text is None:
            return self._apply(response, self._unreadable(response, total))
        return self._apply(response, self.guard.check(question, self._contexts(response, retrieved), text,
                                                      time_to_first_token=total, generation=total))

    async def _achecked(self, question: str, response: Any, start: float, retrieved: set[str] | None = None) -> Any:
        if isinstance(response, (StreamingResponse, AsyncStreamingResponse)):
            return self._stream(question, response, start, retrieved)
        text, total = self._text(response, start)
        if text is None:
            return self._apply(response, self._unreadable(response, total))
        return self._apply(response, await self.guard.acheck(question, self._contexts(response, retrieved), text,
                                                             time_to_first_token=total, generation=total))

    def _unreadable(self, response: Any, total: float) -> Verdict:
        exc = UnreadableError(f"a {type(response).__name__} whose answer is a {type(response.response).__name__}, not "
                              "text: guardrail cannot read it")
        return self.guard.report(self.guard.error_verdict(exc, "", timings=Timings(0.0, total, total)))

    def query(self, query: Any) -> Any:
        start = time.perf_counter()
        retrieved: set[str] = set()
        token = _RETRIEVED.set(retrieved)
        try:
            response = self.query_engine.query(query)
        finally:
            _RETRIEVED.reset(token)
        return self._checked(_question(query), response, start, retrieved)

    async def aquery(self, query: Any) -> Any:
        start = time.perf_counter()
        retrieved: set[str] = set()
        token = _RETRIEVED.set(retrieved)
        try:
            response = await self.query_engine.aquery(query)
        finally:
            _RETRIEVED.reset(token)
        return await self._achecked(_question(query), response, start, retrieved)

    def synthesize(self, query_bundle: Any, nodes: Any, additional_source_nodes: Any = None) -> Any:
        """The wrapped engine's ``synthesize``, checked against the nodes it answered from (its source nodes)."""
        start = time.perf_counter()
        response = self.query_engine.synthesize(query_bundle, nodes, additional_source_nodes)
        return self._checked(_question(query_bundle), response, start)

    async def asynthesize(self, query_bundle: Any, nodes: Any, additional_source_nodes: Any = None) -> Any:
        start = time.perf_counter()
        response = await self.query_engine.asynthesize(query_bundle, nodes, additional_source_nodes)
        return await self._achecked(_question(query_bundle), response, start)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # private and protocol names (copy, pickle) are not the engine's API
            raise AttributeError(f"GuardedQueryEngine has no attribute {name!r}; answers come from query/aquery or "
                                 "synthesize/asynthesize")
        if name not in _FORWARDED:
            raise ConfigurationError(
                f"query_engine.{name} is not guarded by GuardedQueryEngine: it could return the model's answer "
                "unchecked. Use query/aquery (streaming engines too) or synthesize/asynthesize; wrap another engine "
                "in its own GuardedQueryEngine")
        return getattr(self.query_engine, name)


#: what GuardedQueryEngine forwards to the wrapped engine: attributes that produce no answer text
_FORWARDED = frozenset({"retrieve", "aretrieve", "retriever", "callback_manager", "get_prompts", "update_prompts"})


def _question(query: Any) -> str:
    """The question of a ``query``: a string or a ``QueryBundle`` (its ``query_str``)."""
    text = query if isinstance(query, str) else getattr(query, "query_str", None)
    if not isinstance(text, str):
        raise ConfigurationError(f"a query is a string or a QueryBundle, got {type(query).__name__}")
    return text


def _gen(tokens: GuardedIterator) -> Generator[str, None, None]:
    """The guarded tokens as the generator a ``StreamingResponse`` holds (closing it stops the model's stream)."""
    try:
        yield from tokens
    finally:
        tokens.close()


async def _agen(tokens: AsyncGuardedIterator) -> AsyncGenerator[str, None]:
    try:
        async for token in tokens:
            yield token
    finally:
        await tokens.aclose()
