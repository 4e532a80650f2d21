"""The arithmetic of the LLM-judged metrics, apart from the judging (tested on the definitions' worked examples)."""

from __future__ import annotations

from collections.abc import Sequence


def share(flags: Sequence[bool]) -> float | None:
    """Share of true flags; None (never a silent 0) when there is nothing to count."""
    return sum(flags) / len(flags) if flags else None


def f1_from_counts(tp: int, fp: int, fn: int) -> float:
    """Claim-level F1 as Ragas' answer correctness computes it: TP / (TP + (FP + FN) / 2)."""
    return tp / (tp + 0.5 * (fp + fn)) if tp + fp + fn else 1.0


def answer_correctness(tp: int, fp: int, fn: int, similarity: float, weights: tuple[float, float] = (0.75, 0.25)) -> float:
    """Weighted mean of the claim F1 and the semantic similarity (Ragas' default weights 0.75 / 0.25)."""
    wf, ws = weights
    if wf < 0 or ws < 0 or wf + ws == 0:
        raise ValueError(f"weights must be non-negative and not both 0, got {weights}")
    return (wf * f1_from_counts(tp, fp, fn) + ws * similarity) / (wf + ws)


def context_precision(verdicts: Sequence[bool]) -> tuple[float | None, float | None]:
    """(share of useful chunks, rank-aware precision: the mean of precision@k over the ranks k of useful chunks)."""
    if not verdicts:
        return None, None
    useful = 0
    precisions = []
    for k, v in enumerate(verdicts, 1):
        if v:
            useful += 1
            precisions.append(useful / k)
    return useful / len(verdicts), (sum(precisions) / len(precisions) if precisions else 0.0)


def entities_recall(reference: Sequence[str], found: Sequence[str]) -> float | None:
    """Share of the reference's entities that the contexts name (case-insensitive)."""
    ref = {e.strip().lower() for e in reference if e.strip()}
    if not ref:
        return None
    have = {e.strip().lower() for e in found if e.strip()}
    return len(ref & have) / len(ref)


def geval_score(score: float, probs: dict[str, float] | None = None, scale: tuple[int, int] = (1, 5)) -> float:
    """G-Eval's score on 0..1: the probability-weighted mean of the score tokens when logprobs are given."""
    lo, hi = scale
    if probs:
        valid = {int(k): p for k, p in probs.items() if k.isdigit() and lo <= int(k) <= hi}
        total = sum(valid.values())
        if total > 0:
            score = sum(k * p for k, p in valid.items()) / total
    if not lo <= score <= hi:
        raise ValueError(f"score {score} is outside {lo}..{hi}")
    return (score - lo) / (hi - lo)
