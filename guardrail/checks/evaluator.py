"""The sans-IO entry point: question + contexts + response in, typed scores and evidence out."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from guardrail.checks.faithfulness import (
    FaithfulnessCheck,
    FaithfulnessConfig,
    FaithfulnessResult,
    _validate,
)
from guardrail.checks.relevance import (
    RelevanceCheck,
    RelevanceConfig,
    RetrievalRelevance,
)
from guardrail.errors import ConfigurationError
from guardrail.scorers.embedding import EmbeddingScorer
from guardrail.scorers.nli import NLIScorer

CheckName = Literal["faithfulness", "retrieval_relevance", "response_relevance"]
CHECKS: tuple[CheckName, ...] = ("faithfulness", "retrieval_relevance", "response_relevance")


@dataclass(frozen=True, slots=True)
class CheckTimings:
    """Seconds spent in each check (0.0 for a check that did not run). Retrieval and response relevance
    share one embedding batch; its time is split by the number of texts each check embeds (question and chunks vs
    the answer). ``response_relevance`` also holds the answer-similarity time."""

    faithfulness: float = 0.0
    retrieval_relevance: float = 0.0
    response_relevance: float = 0.0

    @property
    def total(self) -> float:
        return self.faithfulness + self.retrieval_relevance + self.response_relevance


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Scores and evidence for one response. ``None`` means "not computed" (check off, or no input)."""

    faithfulness: FaithfulnessResult | None
    retrieval: RetrievalRelevance | None
    response_relevance: float | None
    answer_similarity: float | None
    timings: CheckTimings

    @property
    def faithfulness_score(self) -> float | None:
        return self.faithfulness.score if self.faithfulness else None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict with the headline scores at the top level."""
        return {
            "faithfulness": self.faithfulness_score,
            "retrieval_relevance": self.retrieval.top if self.retrieval else None,
            "context_precision": self.retrieval.context_precision if self.retrieval else None,
            "context_relevancy": self.retrieval.context_relevancy if self.retrieval else None,
            "response_relevance": self.response_relevance,
            "answer_similarity": self.answer_similarity,
            "details": {
                "faithfulness": dataclasses.asdict(self.faithfulness) if self.faithfulness else None,
                "retrieval": dataclasses.asdict(self.retrieval) if self.retrieval else None,
            },
            "timings": dataclasses.asdict(self.timings),
        }


class Evaluator:
    """Runs the checks on one (question, contexts, response). Models are passed in; no globals.

    >>> ev = Evaluator(nli=NLIScorer("path/to/nli"), embedder=EmbeddingScorer())   # doctest: +SKIP
    >>> result = ev.evaluate("When was it founded?", ["Acme was founded in 1990."], "In 1990.")  # doctest: +SKIP
    >>> round(result.faithfulness.score, 2)                                          # doctest: +SKIP
    0.97

    Thread-safe: scorers load lazily under a lock and onnxruntime sessions serve concurrent calls.
    """

    def __init__(
        self,
        *,
        nli: NLIScorer | None = None,
        embedder: EmbeddingScorer | None = None,
        checks: Iterable[str] = CHECKS,
        faithfulness: FaithfulnessConfig | None = None,
        relevance: RelevanceConfig | None = None,
    ) -> None:
        chosen = tuple(dict.fromkeys(checks))
        unknown = [c for c in chosen if c not in CHECKS]
        if unknown:
            raise ConfigurationError(f"unknown checks {unknown}; choose from {', '.join(CHECKS)}")
        self.checks: tuple[str, ...] = chosen
        self.faithfulness_config = faithfulness or FaithfulnessConfig()
        self._faith: FaithfulnessCheck | None = None
        self._rel: RelevanceCheck | None = None
        if "faithfulness" in chosen:
            if nli is None:
                raise ConfigurationError(
                    "the faithfulness check needs an NLI model: pass nli=NLIScorer('path/to/model-dir') "
                    "(any Hugging Face NLI model) or leave 'faithfulness' out of checks"
                )
            self._faith = FaithfulnessCheck(nli, self.faithfulness_config)
        if {"retrieval_relevance", "response_relevance"} & set(chosen):
            self._rel = RelevanceCheck(embedder or EmbeddingScorer(), relevance)

    @property
    def faithfulness_check(self) -> FaithfulnessCheck | None:
        return self._faith

    @property
    def relevance_check(self) -> RelevanceCheck | None:
        return self._rel

    def validate(self, question: str, contexts: Sequence[str], response: str) -> None:
        """Raise InputError (UncheckableError for text the model cannot judge or over the limits) before any model
        work: types, sizes, broken Unicode, scripts the model was not trained on."""
        _validate(question, contexts, response, self.faithfulness_config)

    def evaluate(
        self,
        question: str,
        contexts: Sequence[str],
        response: str,
        ground_truth: str | None = None,
        *,
        checks: Iterable[str] | None = None,
        context_relevancy: bool | None = None,
    ) -> Evaluation:
        """Run the checks (all of this evaluator's, or the subset ``checks``) on one answer.

        ``context_relevancy=False`` skips embedding every context sentence (the guard does: no policy
        threshold uses it); None follows ``RelevanceConfig.context_relevancy``.
        """
        self.validate(question, contexts, response)
        run = self.checks if checks is None else tuple(checks)
        extra = [c for c in run if c not in self.checks]
        if extra:
            raise ConfigurationError(f"checks {extra} were not configured on this Evaluator (it runs {list(self.checks)})")
        contexts = list(contexts)
        t0 = time.perf_counter()
        faith = self._faith.run(question, contexts, response) if self._faith and "faithfulness" in run else None
        t1 = time.perf_counter()
        retrieval, resp_rel = None, None
        if self._rel is not None and ("retrieval_relevance" in run or "response_relevance" in run):
            retrieval, resp_rel = self._rel.evaluate(
                question,
                contexts if "retrieval_relevance" in run else None,
                response if "response_relevance" in run else None,
                context_relevancy=context_relevancy,
            )
        t2 = time.perf_counter()
        similarity = None
        if ground_truth is not None:
            rel = self._rel or RelevanceCheck(EmbeddingScorer())
            self._rel = rel
            similarity = rel.answer_similarity(response, ground_truth)
        t3 = time.perf_counter()
        # retrieval and response relevance share one embedding batch: its time is split by the texts each needs
        # (the question and the chunks for retrieval, the answer for response relevance; the answer-similarity
        # time goes to response relevance)
        shared = t2 - t1
        retr_texts = 1 + len(contexts) if "retrieval_relevance" in run else 0
        resp_texts = 1 if "response_relevance" in run else 0
        total = retr_texts + resp_texts
        retr_s = shared * retr_texts / total if total else 0.0
        resp_s = shared - retr_s + (t3 - t2)
        return Evaluation(faith, retrieval, resp_rel, similarity, CheckTimings(t1 - t0, retr_s, resp_s))
