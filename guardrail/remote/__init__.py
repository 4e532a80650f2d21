"""Remote scorers: the scorers served over the Open Inference Protocol v2 (``guardrail serve-scorer``, on uvicorn or
Ray Serve) and the clients that stand in for them (``--scorer-url``)."""

from guardrail.remote.client import (
    OIPClient,
    RemoteEmbeddingScorer,
    RemoteNLIScorer,
    ScorerObserver,
    scorers_from_url,
)
from guardrail.remote.protocol import EMBEDDING, NLI

__all__ = ["EMBEDDING", "NLI", "OIPClient", "RemoteEmbeddingScorer", "RemoteNLIScorer", "ScorerObserver",
           "scorers_from_url"]
