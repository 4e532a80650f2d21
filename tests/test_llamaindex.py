"""LlamaIndex integration with an in-memory index, mock embeddings and a scripted LLM (no network)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import CompletionResponse, CompletionResponseGen, CustomLLM, LLMMetadata
from llama_index.core.llms.callbacks import llm_completion_callback

from guardrail.checks.evaluator import Evaluator
from guardrail.decorator import GuardrailBlocked
from guardrail.guard import Guard
from guardrail.llamaindex import GuardedQueryEngine, GuardrailFaithfulnessEvaluator, GuardrailRelevancyEvaluator
from guardrail.policy import Policy
from guardrail.scorers.nli import NLIScorer, default_nli_model

DOCS = ["Items can be returned within 30 days of delivery.", "Gift cards cannot be returned."]
GOOD = "Items can be returned within 30 days of delivery."
BAD = "Items can be returned within 90 days, and shipping to Mars is free."


class ScriptedLLM(CustomLLM):
    answer: str = GOOD

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="scripted")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self.answer)

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        yield CompletionResponse(text=self.answer, delta=self.answer)


@pytest.fixture(scope="module")
def evaluator() -> Evaluator:
    return Evaluator(nli=NLIScorer(default_nli_model()))


def engine(answer: str) -> Any:
    index = VectorStoreIndex.from_documents([Document(text=d) for d in DOCS], embed_model=MockEmbedding(embed_dim=8))
    return index.as_query_engine(llm=ScriptedLLM(answer=answer), similarity_top_k=2)


def test_evaluators_return_llamaindex_results(evaluator: Evaluator) -> None:
    faith = GuardrailFaithfulnessEvaluator(evaluator)
    ok = faith.evaluate(query="How long do returns take?", response=GOOD, contexts=DOCS)
    bad = faith.evaluate(query="How long do returns take?", response=BAD, contexts=DOCS)
    assert ok.passing and not bad.passing and ok.score > bad.score and "Mars" in bad.feedback
    result = faith.evaluate_response(query="How long do returns take?", response=engine(BAD).query("How long?"))
    assert not result.passing and sorted(result.contexts) == sorted(DOCS)
    rel = GuardrailRelevancyEvaluator(Evaluator(checks=["response_relevance"]), threshold=0.3)
    assert rel.evaluate(query="How long do returns take?", response=GOOD).passing
    with pytest.raises(ValueError, match="does not run"):
        GuardrailFaithfulnessEvaluator(Evaluator(checks=["response_relevance"]))


def test_guarded_query_engine(evaluator: Evaluator) -> None:
    guard = Guard(evaluator, Policy(action="block", retrieval_relevance=None))
    r = GuardedQueryEngine(engine(GOOD), guard).query("How long do returns take?")
    assert str(r) == GOOD and r.metadata["guardrail"].action == "pass"
    with pytest.raises(GuardrailBlocked):
        GuardedQueryEngine(engine(BAD), guard).query("How long do returns take?")
    fallback = Guard(evaluator, Policy(action="fallback", retrieval_relevance=None))
    r = asyncio.run(GuardedQueryEngine(engine(BAD), fallback).aquery("How long do returns take?"))
    assert "Mars" not in str(r) and r.metadata["guardrail"].action == "fallback"


class TokenLLM(ScriptedLLM):
    """Streams its answer word by word (as a real model does)."""

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        text = ""
        for word in self.answer.split(" "):
            delta = (" " if text else "") + word
            text += delta
            yield CompletionResponse(text=text, delta=delta)


TWO = GOOD + " Shipping to Mars is free for every customer."  # a supported sentence, then a made-up one


def streaming_engine(answer: str) -> Any:
    index = VectorStoreIndex.from_documents([Document(text=d) for d in DOCS], embed_model=MockEmbedding(embed_dim=8))
    return index.as_query_engine(llm=TokenLLM(answer=answer), similarity_top_k=2, streaming=True)


async def atokens(response: Any) -> list[str]:
    return [t async for t in response.response_gen]


@pytest.mark.parametrize("action", ["block", "fallback"])
def test_streaming_query_engine_releases_passed_sentences_then_stops(evaluator: Evaluator, action: str) -> None:
    """A streaming engine's tokens go through the ReleaseGate (before: AttributeError on StreamingResponse.response)."""
    from guardrail.decorator import DEFAULT_STOP_MARKER, StreamStopped

    guard = Guard(evaluator, Policy(action=action, retrieval_relevance=None))
    end = DEFAULT_STOP_MARKER if action == "block" else guard.policy.fallback_message
    bad = GuardedQueryEngine(streaming_engine(TWO), guard)
    for response, tokens in ((r := bad.query("How long do returns take?"), list(r.response_gen)),
                             (r := asyncio.run(bad.aquery("How long do returns take?")), asyncio.run(atokens(r)))):
        assert "".join(tokens) == GOOD + " " + end and isinstance(tokens[-1], StreamStopped)
        assert response.metadata["guardrail"].action == action and tokens[-1].verdict.action == action
    assert "Mars" not in str(bad.query("How long do returns take?"))  # str() reads the guarded tokens too
    good = GuardedQueryEngine(streaming_engine(GOOD), guard)  # the faithful twin: every token, unchanged
    r = good.query("How long do returns take?")
    tokens = list(r.response_gen)
    assert len(tokens) > 1 and "".join(tokens) == GOOD and r.metadata["guardrail"].action == "pass"
    r = asyncio.run(good.aquery("How long do returns take?"))
    assert "".join(asyncio.run(atokens(r))) == GOOD and r.metadata["guardrail"].action == "pass"


def test_synthesize_is_guarded_like_query(evaluator: Evaluator) -> None:
    """synthesize/asynthesize answer from the given nodes: checked against them (before: forwarded unchecked)."""
    from llama_index.core import QueryBundle

    guard = Guard(evaluator, Policy(action="block", retrieval_relevance=None))
    question = QueryBundle("How long do returns take?")
    bad = GuardedQueryEngine(engine(BAD), guard)
    nodes = bad.retrieve(question)  # retrieval produces no answer: forwarded
    assert sorted(n.node.get_content() for n in nodes) == sorted(DOCS)
    with pytest.raises(GuardrailBlocked, match="Mars"):
        bad.synthesize(question, nodes)
    with pytest.raises(GuardrailBlocked, match="Mars"):
        asyncio.run(bad.asynthesize(question, nodes))
    streamed = GuardedQueryEngine(streaming_engine(TWO), guard).synthesize(question, nodes)
    assert "Mars" not in str(streamed) and streamed.metadata["guardrail"].action == "block"
    good = GuardedQueryEngine(engine(GOOD), guard)
    for r in (good.synthesize(question, nodes), asyncio.run(good.asynthesize(question, nodes)),
              good.query(question)):  # a QueryBundle is a query too: its query_str is the question
        assert str(r) == GOOD and r.metadata["guardrail"].action == "pass"


def test_only_answer_free_attributes_are_forwarded(evaluator: Evaluator) -> None:
    """An engine method the wrapper does not guard is refused by name, never forwarded unchecked."""
    from guardrail.errors import ConfigurationError

    guarded = GuardedQueryEngine(engine(BAD), Guard(evaluator, Policy(action="block", retrieval_relevance=None)))
    with pytest.raises(ConfigurationError, match="with_retriever is not guarded.*query/aquery"):
        guarded.with_retriever(guarded.retriever)
    assert guarded.get_prompts() and guarded.callback_manager is not None
    assert not hasattr(guarded, "_query")  # private names are not the engine's API (hasattr, copy still work)


def test_a_streaming_response_with_its_text_set_aside_is_still_guarded(evaluator: Evaluator) -> None:
    """An engine may return a StreamingResponse whose response_txt is already filled (str() returns it, not the
    tokens) or that has no generator at all: the text set aside is never shown unchecked."""
    from llama_index.core.base.response.schema import StreamingResponse

    class Stub:
        def __init__(self, response: Any) -> None:
            self.response = response

        def query(self, query: Any) -> Any:
            return self.response

    guard = Guard(evaluator, Policy(action="block", retrieval_relevance=None))
    nodes = streaming_engine(GOOD).retrieve("How long do returns take?")
    filled = StreamingResponse(iter([GOOD]), source_nodes=nodes, response_txt=BAD)
    r = GuardedQueryEngine(Stub(filled), guard).query("How long do returns take?")
    assert str(r) == GOOD and "Mars" not in str(r)  # built from the guarded tokens
    with pytest.raises(GuardrailBlocked):  # no generator to release: unreadable, on_error (block) applies
        GuardedQueryEngine(Stub(StreamingResponse(None, source_nodes=nodes, response_txt=BAD)), guard).query("q")


class _OneQuestion:
    """A question generator that asks the engine's one tool the user's question (no LLM call)."""

    @staticmethod
    def make() -> Any:
        from llama_index.core.question_gen.types import BaseQuestionGenerator, SubQuestion

        class Gen(BaseQuestionGenerator):
            def _get_prompts(self) -> dict[str, Any]:
                return {}

            def _update_prompts(self, prompts: Any) -> None:
                pass

            def generate(self, tools: Any, query: Any) -> list[SubQuestion]:
                return [SubQuestion(sub_question=str(getattr(query, "query_str", query)), tool_name="policy")]

            async def agenerate(self, tools: Any, query: Any) -> list[SubQuestion]:
                return self.generate(tools, query)

        return Gen()


def sub_question_engine(answer: str) -> Any:
    from llama_index.core.query_engine import SubQuestionQueryEngine
    from llama_index.core.tools import QueryEngineTool, ToolMetadata

    llm = ScriptedLLM(answer=answer)
    index = VectorStoreIndex.from_documents([Document(text=d) for d in DOCS], embed_model=MockEmbedding(embed_dim=8))
    tool = QueryEngineTool(index.as_query_engine(llm=llm), ToolMetadata(name="policy", description="store policy"))
    return SubQuestionQueryEngine.from_defaults(query_engine_tools=[tool], question_gen=_OneQuestion.make(), llm=llm,
                                                use_async=False, verbose=False)


def test_a_composite_engines_own_sub_answers_are_no_evidence(evaluator: Evaluator) -> None:
    # the sub-question engine puts "Sub question: ... Response: <the LLM's answer>" among its source nodes: a
    # hallucinated sub-answer would support the same hallucination in the final answer
    guard = Guard(evaluator, Policy(action="block", retrieval_relevance=None))
    with pytest.raises(GuardrailBlocked):
        GuardedQueryEngine(sub_question_engine("Gift cards can be returned within 90 days."), guard).query(
            "Can gift cards be returned?")
    with pytest.raises(GuardrailBlocked):
        asyncio.run(GuardedQueryEngine(sub_question_engine("Gift cards can be returned within 90 days."), guard).aquery(
            "Can gift cards be returned?"))
    good = GuardedQueryEngine(sub_question_engine("Gift cards cannot be returned."), guard).query(
        "Can gift cards be returned?")
    assert good.metadata["guardrail"].action == "pass"
    assert str(good) == "Gift cards cannot be returned."


def test_a_citation_engines_copies_of_retrieved_nodes_stay_evidence(evaluator: Evaluator) -> None:
    # CitationQueryEngine answers from "Source 1:\n<retrieved text>" nodes with new ids: they quote retrieved text
    from llama_index.core.query_engine import CitationQueryEngine

    guard = Guard(evaluator, Policy(action="block", retrieval_relevance=None))
    index = VectorStoreIndex.from_documents([Document(text=d) for d in DOCS], embed_model=MockEmbedding(embed_dim=8))
    engine = CitationQueryEngine.from_args(index, llm=ScriptedLLM(answer=GOOD), similarity_top_k=2)
    response = GuardedQueryEngine(engine, guard).query("How long do I have to return an item?")
    assert response.metadata["guardrail"].action == "pass"
    with pytest.raises(GuardrailBlocked):
        GuardedQueryEngine(CitationQueryEngine.from_args(index, llm=ScriptedLLM(answer=BAD), similarity_top_k=2),
                           guard).query("How long do I have to return an item?")


def test_a_sub_answer_that_quotes_a_chunk_and_adds_to_it_is_no_evidence(evaluator: Evaluator) -> None:
    # the sub-answer node ("Sub question: ... Response: <chunk> <hallucination>") holds a whole retrieved chunk: what
    # it adds would support the same words in the final answer if holding a chunk were enough
    guard = Guard(evaluator, Policy(action="block", retrieval_relevance=None))
    bad, question = GOOD + " Shipping to Mars is free.", "How long do I have to return an item, and is shipping free?"
    with pytest.raises(GuardrailBlocked) as info:
        GuardedQueryEngine(sub_question_engine(bad), guard).query(question)
    assert info.value.verdict.failed_checks == ("faithfulness",)
    with pytest.raises(GuardrailBlocked):
        asyncio.run(GuardedQueryEngine(sub_question_engine(bad), guard).aquery(question))
    for run in (lambda e: e.query(question), lambda e: asyncio.run(e.aquery(question))):
        good = run(GuardedQueryEngine(sub_question_engine(GOOD), guard))
        assert any(n.node.get_content().startswith("Sub question:") for n in good.source_nodes)
        assert str(good) == GOOD and good.metadata["guardrail"].action == "pass"


def test_a_citation_engines_pieces_of_nodes_without_a_document_stay_evidence(evaluator: Evaluator) -> None:
    # nodes built without a document have no ref_doc_id, and the citation engine gives its "Source N:" pieces new ids:
    # a piece counts because, after its label, its text lies within a retrieved text
    from llama_index.core.query_engine import CitationQueryEngine
    from llama_index.core.schema import TextNode

    guard = Guard(evaluator, Policy(action="block", retrieval_relevance=None))
    rules = " ".join(f"Rule {i}: items of kind {i} can be returned within {i + 10} days of delivery." for i in range(12))
    nodes = [TextNode(text=d) for d in [*DOCS, rules]]
    assert not any(n.ref_doc_id for n in nodes)
    index = VectorStoreIndex(nodes, embed_model=MockEmbedding(embed_dim=8))

    def cited(answer: str) -> GuardedQueryEngine:
        return GuardedQueryEngine(CitationQueryEngine.from_args(index, llm=ScriptedLLM(answer=answer), similarity_top_k=3,
                                                                citation_chunk_size=64, citation_chunk_overlap=0), guard)

    kind4 = "Items of kind 4 can be returned within 14 days of delivery."
    for answer in (GOOD, kind4):
        response = cited(answer).query("How long do I have to return an item?")
        assert len(response.source_nodes) > len(nodes)  # the long rule was cut into pieces, each with its own label
        assert str(response) == answer and response.metadata["guardrail"].action == "pass"
    with pytest.raises(GuardrailBlocked):
        cited(BAD).query("How long do I have to return an item?")


@pytest.mark.parametrize("mode", ["accumulate", "compact_accumulate"])
def test_the_accumulate_modes_labels_are_no_claim(evaluator: Evaluator, mode: str) -> None:
    """LlamaIndex's accumulate modes answer "Response 1: <answer>": the label is no part of the claim (round 51: its
    number failed every faithful answer)."""
    guard = Guard(evaluator, Policy(action="block", retrieval_relevance=None))

    def accumulating(answer: str) -> Any:
        index = VectorStoreIndex.from_documents([Document(text=d) for d in DOCS], embed_model=MockEmbedding(embed_dim=8))
        return index.as_query_engine(llm=ScriptedLLM(answer=answer), similarity_top_k=2, response_mode=mode)

    r = GuardedQueryEngine(accumulating(GOOD), guard).query("How long do returns take?")
    assert str(r).startswith("Response 1: ") and GOOD in str(r) and r.metadata["guardrail"].action == "pass"
    with pytest.raises(GuardrailBlocked):
        GuardedQueryEngine(accumulating(BAD), guard).query("How long do returns take?")
