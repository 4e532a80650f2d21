"""LLM-judged RAG metrics through any OpenAI-compatible endpoint (offline evaluation, or sampled in the background).

Depends on the core types and the embedder only; never on the guard or the integrations.
"""

from guardrail.judge.client import Judge, JudgeError, Usage
from guardrail.judge.metrics import METRICS, MetricResult, Sample

__all__ = ["METRICS", "Judge", "JudgeError", "MetricResult", "Sample", "Usage"]
