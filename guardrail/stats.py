"""Evaluation statistics (numpy only): AUROC, thresholded metrics, bootstrap intervals, nDCG."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np


def auroc(scores: Sequence[float] | np.ndarray, positives: Sequence[bool] | np.ndarray) -> float:
    """Area under the ROC curve (ties count half); NaN when one class is missing.

    >>> auroc([0.1, 0.4, 0.35, 0.8], [False, False, True, True])
    0.75
    """
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(positives, dtype=bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    order = np.argsort(s, kind="mergesort")
    sorted_s = s[order]
    ranks = np.empty(len(s), dtype=np.float64)
    # average ranks over ties
    _, first, counts = np.unique(sorted_s, return_index=True, return_counts=True)
    avg = first + (counts - 1) / 2.0 + 1.0
    ranks[order] = np.repeat(avg, counts)
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def balanced_accuracy(pred: np.ndarray, positives: np.ndarray) -> float:
    y = np.asarray(positives, dtype=bool)
    p = np.asarray(pred, dtype=bool)
    tpr = (p & y).sum() / max(1, y.sum())
    tnr = (~p & ~y).sum() / max(1, (~y).sum())
    return float((tpr + tnr) / 2)


def f1(pred: np.ndarray, positives: np.ndarray) -> float:
    y = np.asarray(positives, dtype=bool)
    p = np.asarray(pred, dtype=bool)
    tp = (p & y).sum()
    denom = 2 * tp + (p & ~y).sum() + (~p & y).sum()
    return float(2 * tp / denom) if denom else 0.0


def best_threshold(scores: np.ndarray, positives: np.ndarray) -> float:
    """The threshold t maximising balanced accuracy of ``score >= t`` (positives score high)."""
    s = np.asarray(scores, dtype=np.float64)
    cands = np.unique(s)
    best_t, best = float(cands[0]), -1.0
    for t in cands if len(cands) < 2000 else np.quantile(s, np.linspace(0, 1, 2001)):
        ba = balanced_accuracy(s >= t, positives)
        if ba > best:
            best_t, best = float(t), ba
    return best_t


def bootstrap_ci(
    metric: Callable[[np.ndarray], float], n: int, *, rounds: int = 1000, seed: int = 0, groups: np.ndarray | None = None
) -> tuple[float, float]:
    """95% percentile interval of ``metric(indices)`` over resamples of ``range(n)``
    (whole groups are resampled together when ``groups`` is given, e.g. both answers of a question)."""
    rng = np.random.default_rng(seed)
    vals = []
    if groups is not None:
        uniq, inverse = np.unique(groups, return_inverse=True)
        members = [np.flatnonzero(inverse == g) for g in range(len(uniq))]
    for _ in range(rounds):
        if groups is None:
            idx = rng.integers(0, n, n)
        else:
            pick = rng.integers(0, len(members), len(members))
            idx = np.concatenate([members[g] for g in pick])
        v = metric(idx)
        if not math.isnan(v):
            vals.append(v)
    if not vals:
        return (float("nan"), float("nan"))
    lo, hi = np.percentile(vals, [2.5, 97.5])
    return float(lo), float(hi)


def ndcg_at_k(ranked_gains: Sequence[float], ideal_gains: Sequence[float], k: int = 10) -> float:
    """nDCG@k with gains as given (TREC: the graded relevance) and log2 discounts."""
    def dcg(g: Sequence[float]) -> float:
        return sum((2**x - 1) / math.log2(i + 2) for i, x in enumerate(list(g)[:k]))

    ideal = dcg(sorted(ideal_gains, reverse=True))
    return dcg(ranked_gains) / ideal if ideal > 0 else 0.0
