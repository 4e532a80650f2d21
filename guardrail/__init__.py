"""guardrail: real-time guardrails for RAG answers.

>>> from guardrail import Evaluator, NLIScorer, EmbeddingScorer           # doctest: +SKIP
>>> ev = Evaluator(nli=NLIScorer(default_nli_model()), embedder=EmbeddingScorer())  # doctest: +SKIP
>>> ev.evaluate(question, contexts, response).faithfulness.score           # doctest: +SKIP
"""

import typing as _typing

from guardrail.checks.evaluator import CHECKS, CheckTimings, Evaluation, Evaluator
from guardrail.checks.faithfulness import (
    ContextRef,
    FaithfulnessCheck,
    FaithfulnessConfig,
    FaithfulnessResult,
    SentenceEvidence,
)
from guardrail.checks.relevance import (
    ChunkRelevance,
    RelevanceCheck,
    RelevanceConfig,
    RetrievalRelevance,
    context_precision,
)
from guardrail.decorator import GuardedText, StreamStopped, guarded
from guardrail.errors import (
    ConfigurationError,
    GuardrailBlocked,
    GuardrailError,
    InputError,
    MissingDependencyError,
    ModelLoadError,
)
from guardrail.guard import Guard
from guardrail.policy import Policy
from guardrail.scorers.embedding import DEFAULT_EMBEDDING_MODEL, EmbeddingScorer
from guardrail.scorers.nli import (
    DEFAULT_NLI_MODEL,
    LabelMap,
    NLIPrediction,
    NLIScorer,
    default_nli_model,
)
from guardrail.stream import StreamEnd, StreamGuard
from guardrail.text import Span, split_sentences
from guardrail.verdict import Scores, Timings, Verdict

__version__ = "0.1.0"

if _typing.TYPE_CHECKING:
    from guardrail.telemetry import Telemetry, metrics_app

#: imported on first use: prometheus_client (and its http.server) costs ~30 ms of a cold start that may never need it
_LAZY = {"Telemetry": "guardrail.telemetry", "metrics_app": "guardrail.telemetry"}


def __getattr__(name: str) -> _typing.Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'guardrail' has no attribute {name!r}")

__all__ = [
    "CHECKS",
    "DEFAULT_EMBEDDING_MODEL",
    "DEFAULT_NLI_MODEL",
    "CheckTimings",
    "ChunkRelevance",
    "ConfigurationError",
    "ContextRef",
    "EmbeddingScorer",
    "Evaluation",
    "Evaluator",
    "FaithfulnessCheck",
    "FaithfulnessConfig",
    "FaithfulnessResult",
    "Guard",
    "GuardedText",
    "GuardrailBlocked",
    "GuardrailError",
    "InputError",
    "LabelMap",
    "MissingDependencyError",
    "ModelLoadError",
    "NLIPrediction",
    "NLIScorer",
    "Policy",
    "RelevanceCheck",
    "RelevanceConfig",
    "RetrievalRelevance",
    "Scores",
    "SentenceEvidence",
    "Span",
    "StreamEnd",
    "StreamGuard",
    "StreamStopped",
    "Telemetry",
    "Timings",
    "Verdict",
    "context_precision",
    "default_nli_model",
    "guarded",
    "metrics_app",
    "split_sentences",
]
