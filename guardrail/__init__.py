"""guardrail: real-time guardrails for RAG answers.

>>> from guardrail import Evaluator, NLIScorer, EmbeddingScorer           # doctest: +SKIP
>>> ev = Evaluator(nli=NLIScorer(default_nli_model()), embedder=EmbeddingScorer())  # doctest: +SKIP
>>> ev.evaluate(question, contexts, response).faithfulness.score           # doctest: +SKIP
"""

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
from guardrail.errors import (
    ConfigurationError,
    GuardrailError,
    InputError,
    MissingDependencyError,
    ModelLoadError,
)
from guardrail.scorers.embedding import DEFAULT_EMBEDDING_MODEL, EmbeddingScorer
from guardrail.scorers.nli import (
    DEFAULT_NLI_MODEL,
    LabelMap,
    NLIPrediction,
    NLIScorer,
    default_nli_model,
)
from guardrail.text import Span, split_sentences

__version__ = "0.1.0"

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
    "GuardrailError",
    "InputError",
    "LabelMap",
    "MissingDependencyError",
    "ModelLoadError",
    "NLIPrediction",
    "NLIScorer",
    "RelevanceCheck",
    "RelevanceConfig",
    "RetrievalRelevance",
    "SentenceEvidence",
    "Span",
    "context_precision",
    "default_nli_model",
    "split_sentences",
]
