"""The served side of a model: texts in, the scorer's own numbers out (no HTTP: shared by the uvicorn server and the
Ray Serve deployments).

Each text (or pair) runs in a forward pass of its own (the scorers' ``batch_size=1``), so what a replica returns for
a request is a function of that request alone, however many requests it serves at once: the same numbers, bit for
bit, as the scorer in process.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from guardrail.remote.protocol import EMBEDDING, NLI, model_metadata, tokenizer_sha256
from guardrail.scorers.embedding import EmbeddingScorer
from guardrail.scorers.nli import NLIScorer

__all__ = ["EmbeddingModel", "NLIModel", "ServedModel"]


class ServedModel(Protocol):
    name: str

    def run(self, columns: Sequence[Sequence[str]]) -> tuple[np.ndarray, int]:
        """(values [n, k], model tokens run) for the input columns of one request."""
        ...

    def metadata(self) -> dict[str, Any]: ...

    def load(self) -> None: ...


class NLIModel:
    """``nli``: (premise, hypothesis) -> probabilities [n, num_labels] in the order of ``parameters.labels``."""

    name = NLI

    def __init__(self, scorer: NLIScorer) -> None:
        self.scorer = scorer

    def load(self) -> None:
        self.scorer.probabilities(["Warm-up premise."], ["Warm-up hypothesis."])

    def run(self, columns: Sequence[Sequence[str]]) -> tuple[np.ndarray, int]:
        premises, hypotheses = columns
        return self.scorer.probabilities(premises, hypotheses)

    def labels(self) -> list[str]:
        config = json.loads((self.scorer.model_dir / "config.json").read_text(encoding="utf-8"))
        id2label = self.scorer._id2label or config.get("id2label") or {}
        return [str(id2label.get(i, id2label.get(str(i), f"LABEL_{i}"))) for i in range(self.scorer.labels.num_labels)]

    def metadata(self) -> dict[str, Any]:
        labels = self.labels()
        return model_metadata(NLI, width=len(labels), parameters={
            "labels": labels, "max_length": self.scorer.max_length, "guardrail": self.scorer.metadata,
            "tokenizer_sha256": tokenizer_sha256(self.scorer.model_dir),
        })


class EmbeddingModel:
    """``embedding``: text -> L2-normalised embedding [n, dim] (a long text: its windows averaged, as in process)."""

    name = EMBEDDING

    def __init__(self, scorer: EmbeddingScorer) -> None:
        self.scorer = scorer
        self._dim: int | None = None

    def load(self) -> None:
        self._dim = int(self.scorer.embed(["Warm-up text."]).shape[1])

    def run(self, columns: Sequence[Sequence[str]]) -> tuple[np.ndarray, int]:
        (texts,) = columns
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32), 0
        return self.scorer.embed(texts), 0

    def metadata(self) -> dict[str, Any]:
        from guardrail.scorers.hub import resolve_model_dir

        if self._dim is None:
            self.load()
        return model_metadata(EMBEDDING, width=self._dim, parameters={
            "max_length": self.scorer.max_length,
            "tokenizer_sha256": tokenizer_sha256(resolve_model_dir(self.scorer.model_ref)),
        })
