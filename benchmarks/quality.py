"""Faithfulness quality on a benchmark in the common format (label 1 = hallucinated).

Prints AUROC, balanced accuracy and F1 at the chosen threshold, each with a bootstrap 95% interval
(resampling whole questions, so both HaluEval answers of a question stay together), and always, beside
it, the trivial baselines: answer length and lexical overlap (share of response words absent from the
contexts). A detector that does not beat them says nothing.

    python benchmarks/quality.py ../shared/data/bench/halueval_qa_dev.jsonl.gz --subset length_matched
    python benchmarks/quality.py ../shared/data/bench/begin_dev.jsonl.gz --mode exhaustive
    python benchmarks/quality.py BENCH --nli-model DIR --question-context never --save preds.jsonl
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from guardrail.checks.faithfulness import FaithfulnessCheck, FaithfulnessConfig
from guardrail.scorers.nli import NLIScorer, default_nli_model
from guardrail.stats import auroc, balanced_accuracy, bootstrap_ci, f1


def load(path: Path, subset: str | None, limit: int | None) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    if subset:
        rows = [r for r in rows if r.get(subset)]
    return rows[:limit] if limit else rows


def group_of(row_id: str) -> str:
    # halueval-qa-17-0 / halueval-qa-17-1 are the two answers of one question
    return re.sub(r"-\d+$", "", row_id) if row_id.startswith("halueval") else row_id


def length_baseline(row: dict[str, Any]) -> float:
    """Answer length in characters (slightly stronger than in words on these sets)."""
    return float(len(row["response"].strip()))


def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def overlap_baseline(row: dict[str, Any]) -> float:
    """Share of response words absent from the contexts (high = likely hallucinated)."""
    resp = _tokens(row["response"])
    if not resp:
        return 0.0
    ctx = set(_tokens(" ".join(row["contexts"])))
    return sum(w not in ctx for w in resp) / len(resp)


def report(name: str, score: np.ndarray, y: np.ndarray, groups: np.ndarray, threshold: float | None) -> dict[str, Any]:
    """``score`` is a hallucination score (high = hallucinated)."""
    a = auroc(score, y)
    lo, hi = bootstrap_ci(lambda i: auroc(score[i], y[i]), len(y), groups=groups)
    out: dict[str, Any] = {"name": name, "auroc": a, "auroc_ci": [lo, hi]}
    line = f"{name:<34} AUROC {a:.3f} [{lo:.3f}, {hi:.3f}]"
    if threshold is not None:
        pred = score >= threshold
        ba = balanced_accuracy(pred, y)
        ba_ci = bootstrap_ci(lambda i: balanced_accuracy(pred[i], y[i]), len(y), groups=groups)
        f = f1(pred, y)
        f_ci = bootstrap_ci(lambda i: f1(pred[i], y[i]), len(y), groups=groups)
        out.update(threshold=threshold, balanced_accuracy=ba, balanced_accuracy_ci=ba_ci, f1=f, f1_ci=f_ci)
        line += f"  bal.acc {ba:.3f} [{ba_ci[0]:.3f}, {ba_ci[1]:.3f}]  F1 {f:.3f} [{f_ci[0]:.3f}, {f_ci[1]:.3f}]  (flag if score >= {threshold:.3f})"
    print(line)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench", type=Path)
    ap.add_argument("--subset", help="keep rows where this field is true, e.g. length_matched")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--nli-model", help="NLI model dir (default: the shipped model)")
    ap.add_argument("--backend", default="onnx", choices=["onnx", "torch"])
    ap.add_argument("--onnx-file")
    ap.add_argument("--mode", default="candidates", choices=["candidates", "exhaustive"])
    ap.add_argument("--question-context", default=None, choices=["fragments", "auto", "always", "never"])
    ap.add_argument("--top-k", type=int, default=FaithfulnessConfig().top_k)
    ap.add_argument("--threshold", type=float, help="faithfulness below this is flagged (default: the model's stored threshold, else 0.5)")
    ap.add_argument("--no-calibration", action="store_true", help="score with the raw NLI entailment only")
    ap.add_argument("--save", type=Path, help="write per-row scores and signals as JSONL")
    args = ap.parse_args()

    rows = load(args.bench, args.subset, args.limit)
    y = np.array([int(r["label"]) == 1 for r in rows])
    groups = np.array([group_of(str(r["id"])) for r in rows])
    nli = NLIScorer(args.nli_model or default_nli_model(), backend=args.backend, onnx_file=args.onnx_file)
    config = FaithfulnessConfig(mode=args.mode, question_context=args.question_context, top_k=args.top_k, threshold=args.threshold)
    check = FaithfulnessCheck(nli, config, calibrator=None if args.no_calibration else "auto")

    faith, nli_only, latencies, tokens, pairs = [], [], [], 0, 0
    saved = []
    for r in rows:
        t0 = time.perf_counter()
        res = check.run(r.get("question", ""), r["contexts"], r["response"])
        latencies.append(time.perf_counter() - t0)
        score = 1.0 if res.score is None else res.score
        faith.append(score)
        nli_only.append(1.0 if res.nli_score is None else res.nli_score)
        tokens += res.model_tokens
        pairs += res.pairs
        if args.save:
            checked = [s for s in res.sentences if s.checked]
            saved.append({
                "id": r["id"], "label": r["label"], "faithfulness": score,
                "min_sentence": min((s.score for s in checked), default=1.0),
                "min_coverage": min((s.coverage for s in checked if s.coverage is not None), default=1.0),
                "max_contradiction": max((s.max_contradiction or 0.0 for s in checked), default=0.0),
                "unsupported_terms": sum(len(s.unsupported_terms) for s in checked),
                "sentences": len(checked), "length": length_baseline(r), "overlap_absent": overlap_baseline(r),
            })
    f = np.array(faith)
    print(f"{args.bench.name}{' [' + args.subset + ']' if args.subset else ''}: {len(rows)} rows, {int(y.sum())} hallucinated; "
          f"model {nli.model_dir.name} ({args.backend}), mode={args.mode}, question_context={args.question_context}")
    print(f"cost: {pairs / len(rows):.1f} NLI pairs and {tokens / len(rows):.0f} model tokens per row; "
          f"latency median {statistics.median(latencies) * 1000:.1f} ms, p95 {np.percentile(latencies, 95) * 1000:.1f} ms per row")
    results = [report("faithfulness (1 - score)" + (", calibrated" if check.calibrator else ""), 1 - f, y, groups, 1 - check.threshold)]
    if check.calibrator:
        results.append(report("NLI only (1 - mean entailment)", 1 - np.array(nli_only), y, groups, None))
    results.append(report("baseline: answer length (chars)", np.array([length_baseline(r) for r in rows]), y, groups, None))
    results.append(report("baseline: lexical overlap (absent)", np.array([overlap_baseline(r) for r in rows]), y, groups, None))
    if args.save:
        args.save.write_text("".join(json.dumps(s) + "\n" for s in saved), encoding="utf-8")


if __name__ == "__main__":
    main()
