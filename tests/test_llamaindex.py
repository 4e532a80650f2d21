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
