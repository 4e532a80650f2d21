"""Retrieval relevance (query vs chunks), response relevance (query vs response) and answer
similarity (response vs ground truth), from bi-encoder cosine similarity.

Scores are cosines clipped to 0..1. A chunk is *relevant* when its score reaches
``chunk_threshold``. The default 0.20 is the rounded balanced-accuracy optimum (0.174) for telling
TREC-DL 2019 relevant passages (grade >= 2) from off-topic ones with the shipped all-MiniLM-L6-v2
(AUROC 0.996, balanced accuracy 0.97; ``benchmarks/retrieval.py``). It does not separate relevant
from merely *related* passages (grade 1: AUROC 0.59), which no cosine threshold does well.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from guardrail.errors import ConfigurationError
from guardrail.scorers.embedding import EmbeddingScorer
from guardrail.text import sentence_windows, split_sentences, unsupported_language


@dataclass(frozen=True, slots=True)
class RelevanceConfig:
    chunk_threshold: float = 0.20
    #: a context sentence counts towards context relevancy at this score
    sentence_threshold: float = 0.20
    #: compute context relevancy (embeds every context sentence: the costliest relevance signal)
    context_relevancy: bool = True

    def __post_init__(self) -> None:
        for name in ("chunk_threshold", "sentence_threshold"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ConfigurationError(f"{name} must be within 0..1, got {value}")


@dataclass(frozen=True, slots=True)
class ChunkRelevance:
    index: int
    score: float
    relevant: bool


@dataclass(frozen=True, slots=True)
class RetrievalRelevance:
    #: the best chunk's score (None without contexts)
    top: float | None
    #: the first (highest-ranked by the retriever) chunk's score
    first: float | None
    chunks: tuple[ChunkRelevance, ...]
    #: mean of precision@k over the ranks k that hold a relevant chunk (0 when none is relevant)
    context_precision: float | None
    #: share of context sentences relevant to the query
    context_relevancy: float | None
    threshold: float


def context_precision(relevant: Sequence[bool]) -> float:
    """Rank-weighted precision: mean of precision@k over the ranks k holding a relevant chunk.

    >>> context_precision([True, False, True])
    0.8333333333333333
    """
    hits = 0
    total = 0.0
    for k, rel in enumerate(relevant, start=1):
        if rel:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0


def _clip(x: float) -> float:
    return float(min(1.0, max(0.0, x)))


class RelevanceCheck:
    """Query/chunk, query/response and response/ground-truth similarity with one embedder."""

    def __init__(self, embedder: EmbeddingScorer, config: RelevanceConfig | None = None) -> None:
        self.embedder = embedder
        self.config = config or RelevanceConfig()

    def retrieval(self, question: str, contexts: Sequence[str]) -> RetrievalRelevance | None:
        """Each chunk's relevance to the question, context precision and context relevancy; None when there is no
        question (no user text, an image only): nothing to be relevant to, not checked."""
        result, _ = self.evaluate(question, contexts, None)
        return result

    def evaluate(
        self,
        question: str,
        contexts: Sequence[str] | None,
        response: str | None,
        *,
        context_relevancy: bool | None = None,
    ) -> tuple[RetrievalRelevance | None, float | None]:
        """Retrieval relevance (when ``contexts`` is not None) and response relevance (when ``response``
        is not None) from one embedding batch: the question is embedded once."""
        cfg = self.config
        with_sentences = cfg.context_relevancy if context_relevancy is None else context_relevancy
        empty = RetrievalRelevance(None, None, (), None, None, cfg.chunk_threshold)
        if not question.strip() or unsupported_language(question) is not None:
            # no question (no user text, an image only), or one in a language the embedding model was not trained
            # on: nothing it can measure relevance to, not checked (faithfulness decides)
            return None, None
        texts, owners = self._texts(question, contexts, with_sentences)
        answer = response if response is not None and response.strip() else None
        if answer is not None:
            texts.append(answer)
        vecs = self.embedder.embed(texts)
        sims = vecs[1:] @ vecs[0]
        resp_rel = _clip(float(sims[-1])) if answer is not None else None
        if contexts is None:
            return None, resp_rel
        if not contexts:
            return empty, resp_rel
        if not with_sentences:
            # a chunk scores as its best window or its best sentence; the sentences are embedded only when no window
            # reaches the threshold: a short question ("How long was the trial?") scores low against a whole chunk
            # that covers more than it asks, and high against the sentence that answers it
            windows = sims[:len(owners)]
            if float(windows.max(initial=0.0)) < cfg.chunk_threshold:
                sentences, more = self._sentences(contexts)
                if sentences:
                    extra = self.embedder.embed(sentences) @ vecs[0]
                    owners = owners + more
                    sims = np.concatenate([windows, extra])
        return self._retrieval(len(contexts), owners, sims, with_sentences), resp_rel

    @staticmethod
    def _sentences(contexts: Sequence[str]) -> tuple[list[str], list[tuple[int, bool]]]:
        """The sentences of chunks that have more than one (a one-sentence chunk's window is its sentence)."""
        texts: list[str] = []
        owners: list[tuple[int, bool]] = []
        for c, text in enumerate(contexts):
            sents = split_sentences(text)
            if len(sents) > 1:
                texts.extend(s.of(text) for s in sents)
                owners.extend((c, True) for _ in sents)
        return texts, owners

    def _texts(self, question: str, contexts: Sequence[str] | None,
               with_sentences: bool) -> tuple[list[str], list[tuple[int, bool]]]:
        """The texts to embed, the question first, then each chunk's windows (and its sentences with
        ``with_sentences``); and the owner of each text after the question: (chunk, is_sentence)."""
        tok = self.embedder.tokenizer
        body = self.embedder.max_length - tok.special_tokens(pair=False)
        texts: list[str] = [question]
        owners: list[tuple[int, bool]] = []  # (chunk, is_sentence)
        for c, text in enumerate(contexts or ()):
            sents = split_sentences(text)
            # a chunk scores as its best window, so a long chunk is judged by its relevant part
            for w in sentence_windows(text, sents, tok.count, tok.offsets, body) or []:
                texts.append(w.of(text))
                owners.append((c, False))
            if with_sentences:
                for s in sents:
                    texts.append(s.of(text))
                    owners.append((c, True))
        return texts, owners

    def _retrieval(self, chunks_count: int, owners: list[tuple[int, bool]], sims: np.ndarray,
                   with_sentences: bool) -> RetrievalRelevance:
        """Each chunk's score (its best window), context precision and context relevancy, from the similarities of
        the texts to the question (in ``owners`` order)."""
        cfg = self.config
        chunk_scores = np.zeros(chunks_count, dtype=np.float32)
        sent_scores: list[float] = []
        for (c, is_sentence), sim in zip(owners, sims):
            if is_sentence:
                sent_scores.append(float(sim))
            # a chunk scores as its best window or sentence: a sentence answers a short question better than a
            # window that says more
            chunk_scores[c] = max(chunk_scores[c], float(sim))
        chunks = tuple(
            ChunkRelevance(i, _clip(float(s)), _clip(float(s)) >= cfg.chunk_threshold) for i, s in enumerate(chunk_scores)
        )
        relevancy = None
        if with_sentences:
            relevancy = float(np.mean([s >= cfg.sentence_threshold for s in sent_scores])) if sent_scores else 0.0
        return RetrievalRelevance(
            top=max(c.score for c in chunks),
            first=chunks[0].score,
            chunks=chunks,
            context_precision=context_precision([c.relevant for c in chunks]),
            context_relevancy=relevancy,
            threshold=cfg.chunk_threshold,
        )

    def response(self, question: str, response: str) -> float | None:
        """Cosine of query and response, clipped to 0..1 (None if either is empty)."""
        if not response.strip():
            return None
        return self.evaluate(question, None, response)[1]

    def answer_similarity(self, response: str, ground_truth: str) -> float | None:
        if not ground_truth.strip() or not response.strip():
            return None
        return _clip(float(self.embedder.similarity([response], [ground_truth])[0, 0]))
