"""Premise units for NLI: what part of the context each response sentence is compared with.

Two modes:

- ``exhaustive``: every context sentence is a premise for every response sentence (the reference
  definition; cost grows with context sentences x response sentences).
- ``candidates`` (default): the largest units that fit the model are ranked by IDF-weighted word
  overlap with the hypothesis, and only the best ``top_k`` go to the model. A chunk that fits in
  the token budget is one unit (so facts spread over two sentences of a chunk are seen together);
  a longer chunk gives one unit per sentence, widened by ``window`` neighbours on each side while
  it fits. Nothing is dropped: a sentence longer than the budget is cut into overlapping token
  windows, each its own unit.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from guardrail.text import (
    Span,
    TokenOffsets,
    content_stems,
    split_sentences,
    token_windows,
)

PremiseMode = Literal["candidates", "exhaustive"]
PREMISE_MODES: tuple[PremiseMode, ...] = ("candidates", "exhaustive")


@dataclass(frozen=True, slots=True)
class Premise:
    """A span of one context chunk used as an NLI premise."""

    chunk: int
    span: Span
    text: str


@dataclass(frozen=True, slots=True)
class ContextIndex:
    """The contexts of one request, split into sentences, with word statistics for ranking."""

    contexts: tuple[str, ...]
    #: per chunk: its sentences (oversized ones already cut into token windows)
    sentences: tuple[tuple[Span, ...], ...]
    #: per chunk, per sentence: its set of content words
    sentence_words: tuple[tuple[frozenset[str], ...], ...]
    #: per chunk, per sentence: token count
    sentence_tokens: tuple[tuple[int, ...], ...]
    idf: dict[str, float]
    default_idf: float
    vocabulary: frozenset[str]

    @classmethod
    def build(
        cls,
        contexts: Sequence[str],
        count_tokens: Callable[[Sequence[str]], list[int]],
        offsets: TokenOffsets,
        max_tokens: int,
    ) -> "ContextIndex":
        all_sents: list[tuple[Span, ...]] = []
        all_words: list[tuple[frozenset[str], ...]] = []
        all_tokens: list[tuple[int, ...]] = []
        df: Counter[str] = Counter()
        n_sent = 0
        all_spans = [split_sentences(text) for text in contexts]
        # one tokenizer call for every sentence of every chunk
        flat = count_tokens([s.of(text) for text, spans in zip(contexts, all_spans) for s in spans])
        offsets_at = 0
        for text, spans in zip(contexts, all_spans):
            sizes = flat[offsets_at : offsets_at + len(spans)]
            offsets_at += len(spans)
            fitted: list[Span] = []
            fitted_sizes: list[int] = []
            for span, size in zip(spans, sizes):
                if size <= max_tokens:
                    fitted.append(span)
                    fitted_sizes.append(size)
                    continue
                for w in token_windows(span.of(text), offsets, max_tokens, max(1, max_tokens * 3 // 4)):
                    piece = Span(span.start + w.start, span.start + w.end)
                    fitted.append(piece)
                    fitted_sizes.append(min(max_tokens, count_tokens([piece.of(text)])[0]))
            words = tuple(frozenset(content_stems(s.of(text))) for s in fitted)
            for ws in words:
                df.update(ws)
            n_sent += len(words)
            all_sents.append(tuple(fitted))
            all_words.append(words)
            all_tokens.append(tuple(fitted_sizes))
        idf = {w: math.log(1 + (n_sent + 1) / (c + 0.5)) for w, c in df.items()}
        return cls(
            tuple(contexts),
            tuple(all_sents),
            tuple(all_words),
            tuple(all_tokens),
            idf,
            math.log(1 + (n_sent + 1) / 0.5),
            frozenset(df),
        )

    @property
    def num_sentences(self) -> int:
        return sum(len(s) for s in self.sentences)

    def overlap(self, hyp_words: Sequence[str], unit_words: frozenset[str]) -> float:
        """IDF-weighted share of the hypothesis' content words found in a unit (0..1)."""
        if not hyp_words:
            return 0.0
        total = sum(self.idf.get(w, self.default_idf) for w in hyp_words)
        hit = sum(self.idf.get(w, self.default_idf) for w in hyp_words if w in unit_words)
        return hit / total if total else 0.0

    def units(self, mode: PremiseMode, max_tokens: int, window: int,
              whole_chunks: bool = False) -> list[tuple[Premise, frozenset[str]]]:
        """Every candidate premise with its content words (independent of the hypothesis): each sentence with up to
        ``window`` neighbours on each side (``whole_chunks``: a chunk that fits the budget is one unit instead)."""
        out: list[tuple[Premise, frozenset[str]]] = []
        for c, text in enumerate(self.contexts):
            sents, words, sizes = self.sentences[c], self.sentence_words[c], self.sentence_tokens[c]
            if not sents:
                continue
            if mode == "exhaustive":
                out.extend((Premise(c, s, s.of(text)), w) for s, w in zip(sents, words))
                continue
            if (whole_chunks or len(sents) <= 2 * window + 1) and sum(sizes) <= max_tokens:
                span = Span(sents[0].start, sents[-1].end)
                out.append((Premise(c, span, span.of(text)), frozenset().union(*words)))
                continue
            for i in range(len(sents)):
                lo, hi, total = i, i, sizes[i]
                for _ in range(window):
                    if lo > 0 and total + sizes[lo - 1] <= max_tokens:
                        lo -= 1
                        total += sizes[lo]
                    if hi + 1 < len(sents) and total + sizes[hi + 1] <= max_tokens:
                        hi += 1
                        total += sizes[hi]
                span = Span(sents[lo].start, sents[hi].end)
                out.append((Premise(c, span, span.of(text)), frozenset().union(*words[lo : hi + 1])))
        return out

    def best_sentence(self, premise: Premise, hyp_words: Sequence[str], tie_words: Sequence[str] = ()) -> Span:
        """The context sentence inside ``premise`` that shares most (IDF-weighted) words with the hypothesis; ties
        (e.g. a one-word answer that no sentence contains) go to the sentence sharing most of ``tie_words`` (the
        question's)."""
        best, best_score = None, (-1.0, -1.0)
        for span, words in zip(self.sentences[premise.chunk], self.sentence_words[premise.chunk]):
            if span.start >= premise.span.start and span.end <= premise.span.end:
                score = (self.overlap(hyp_words, words), self.overlap(tie_words, words) if tie_words else 0.0)
                if score > best_score:
                    best, best_score = span, score
        return best if best is not None else premise.span


def rank_units(
    index: ContextIndex,
    units: Sequence[tuple[Premise, frozenset[str]]],
    hyp_words: Sequence[str],
    top_k: int,
    tie_words: Sequence[str] = (),
) -> list[Premise]:
    """The ``top_k`` units with the highest overlap; ties go to the units sharing most of ``tie_words`` (the
    question's: "$25" shares no word with any passage, "How much does express delivery cost?" does), then to
    context order."""
    return Ranking(index, units, tie_words).rank(hyp_words, top_k)


class Ranking:
    """:func:`rank_units` over one list of units, for every sentence of an answer: the units' words are indexed once
    (word -> the units that hold it) and a sentence's overlap with every unit is summed in arrays, word by word, in
    the sentence's word order (the same order for every unit: equal overlaps stay equal, and ties fall as they did).
    Scoring each unit in Python for each sentence made ranking grow with answer x contexts (round 57: 8.7 s of a
    26.6 s check, an 8.6k-character answer against 100k characters of contexts)."""

    def __init__(self, index: ContextIndex, units: Sequence[tuple[Premise, frozenset[str]]],
                 tie_words: Sequence[str] = ()) -> None:
        self.index = index
        self.units = units
        holders: dict[str, list[int]] = {}
        for i, (_, ws) in enumerate(units):
            for w in ws:
                holders.setdefault(w, []).append(i)
        self.holders = {w: np.asarray(ids, dtype=np.intp) for w, ids in holders.items()}
        self.positions = np.arange(len(units))
        self.ties = -self._scores(tie_words) if tie_words else np.zeros(len(units))

    def _scores(self, words: Sequence[str]) -> np.ndarray:
        """Each unit's :meth:`ContextIndex.overlap` with ``words``: the same additions in the same order, divided by the
        same total (two sums that differ in their last bit may divide to one value, a tie, as they did)."""
        out = np.zeros(len(self.units))
        idf, default = self.index.idf, self.index.default_idf
        for w in words:
            held = self.holders.get(w)
            if held is not None:
                out[held] += idf.get(w, default)
        total = sum(idf.get(w, default) for w in words)
        return out / total if total else out

    def rank(self, hyp_words: Sequence[str], top_k: int) -> list[Premise]:
        if not self.units:
            return []
        order = np.lexsort((self.positions, self.ties, -self._scores(hyp_words)))
        return [self.units[i][0] for i in order[:top_k]]
