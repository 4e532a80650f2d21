"""LlamaIndex: our checks as LlamaIndex evaluators, and a query-engine wrapper that guards responses with their
source nodes as the contexts. Needs ``guardrail[llamaindex]`` (``llama-index-core``).

>>> evaluator = GuardrailFaithfulnessEvaluator(Evaluator(nli=NLIScorer(default_nli_model())))   # doctest: +SKIP
>>> evaluator.evaluate_response(query=q, response=query_engine.query(q)).passing                # doctest: +SKIP
>>> engine = GuardedQueryEngine(index.as_query_engine(), guard)                                 # doctest: +SKIP
>>> engine.query(q).metadata["guardrail"].action                                                # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from guardrail.checks.evaluator import Evaluator
from guardrail.errors import GuardrailBlocked, MissingDependencyError
from guardrail.guard import Guard
from guardrail.verdict import Verdict

try:
    from llama_index.core.evaluation import BaseEvaluator, EvaluationResult
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


class GuardedQueryEngine:
    """Wraps a LlamaIndex query engine: each response is checked against its own source nodes. The verdict is in
    ``response.metadata["guardrail"]``; block raises GuardrailBlocked; fallback replaces the response text."""

    def __init__(self, query_engine: Any, guard: Guard) -> None:
        self.query_engine = query_engine
        self.guard = guard

    @staticmethod
    def _contexts(response: Any) -> list[str]:
        return [n.node.get_content() for n in (getattr(response, "source_nodes", None) or [])]

    def _apply(self, response: Any, verdict: Verdict) -> Any:
        if verdict.action == "block":
            raise GuardrailBlocked(verdict)
        if verdict.action == "fallback":
            response.response = self.guard.policy.fallback_message
        response.metadata = {**(response.metadata or {}), "guardrail": verdict}
        return response

    def query(self, query: str) -> Any:
        response = self.query_engine.query(query)
        return self._apply(response, self.guard.check(query, self._contexts(response), str(response.response or "")))

    async def aquery(self, query: str) -> Any:
        response = await self.query_engine.aquery(query)
        verdict = await self.guard.acheck(query, self._contexts(response), str(response.response or ""))
        return self._apply(response, verdict)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.query_engine, name)
