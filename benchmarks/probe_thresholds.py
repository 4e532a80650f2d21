"""The block decision at each threshold on the four dev sets and on the hand-written answer probes, for one model
directory's calibration: what a shipped threshold costs realistic RAG answers (``probes/realistic_answers.py``, the
"realistic" column; all probes, rule cases included, in "probes") beside what it gains on the dev sets.

    cd benchmarks && python probe_thresholds.py MODEL_DIR FEATURES.jsonl

FEATURES.jsonl is a ``dev_sets.py --cache`` file whose features include the calibration's (the probes are scored
here, faithfulness only, with the model directory as given: its guardrail.json decides the score)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import dev_sets
import numpy as np

sys.path.insert(0, str(Path(__file__).parent / "probes"))

from realistic_answers import T  # noqa: E402
from rule_cases import CASES  # noqa: E402

from guardrail.checks.calibration import Calibrator  # noqa: E402
from guardrail.checks.evaluator import Evaluator  # noqa: E402
from guardrail.guard import Guard  # noqa: E402
from guardrail.policy import Policy  # noqa: E402
from guardrail.scorers.nli import NLIScorer  # noqa: E402
from guardrail.stats import balanced_accuracy  # noqa: E402


def probe_scores(model: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per probe: the lowest sentence score (0 for an answer the guard cannot judge), faithful or not, realistic or
    a rule case."""
    guard = Guard(Evaluator(nli=NLIScorer(model)), Policy(action="block", retrieval_relevance=None, faithfulness=0.0))
    rows = [(q, ctx, a, f, True) for _, _, q, ctx, a, f in T]
    rows += [(c["q"], c["ctx"], c["a"], c["faithful"], False) for c in CASES]
    low, good, real = [], [], []
    for q, ctx, a, faithful, realistic in rows:
        if faithful is None:
            continue
        v = guard.check(q, ctx, a)
        faith = v.evaluation.faithfulness if v.evaluation else None
        scores = [s.score for s in faith.sentences if s.score is not None] if faith else []
        low.append(0.0 if v.error else min(scores, default=1.0))
        good.append(bool(faithful))
        real.append(realistic)
    guard.close()
    return np.array(low), np.array(good), np.array(real)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", type=Path)
    ap.add_argument("cache", type=Path)
    args = ap.parse_args()
    meta = json.loads((args.model / "guardrail.json").read_text(encoding="utf-8"))
    cal, shipped = Calibrator.from_dict(meta["calibration"]), float(meta["threshold"])
    cache = {c["key"]: c for c in map(json.loads, args.cache.read_text(encoding="utf-8").splitlines())}
    sets: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name in dev_sets.SETS:
        rows = dev_sets.load(name)
        sets[name] = (np.array([dev_sets.row_score(cal, cache[f"{name}:{r['id']}"]["features"]) for r in rows]),
                      np.array([int(r["label"]) != 1 for r in rows]))
    low, good, real = probe_scores(args.model)
    sets["realistic"] = (low[real], good[real])
    sets["probes"] = (low, good)
    print(f"model {args.model} (shipped threshold {shipped}); balanced accuracy of the block decision per threshold; "
          f"realistic: {int(good[real].sum())} faithful / {int((~good[real]).sum())} hallucinated answers")
    print("threshold | " + " | ".join(sets) + " | mean of the dev sets | faithful realistic answers blocked")
    for t in sorted({*np.round(np.arange(0.2, 0.66, 0.04), 2), shipped}):
        b = {n: balanced_accuracy(s >= t, y) for n, (s, y) in sets.items()}
        s_r, y_r = sets["realistic"]
        print(f"{t:.4g} | " + " | ".join(f"{b[n]:.3f}" for n in sets) +
              f" | {np.mean([b[n] for n in dev_sets.SETS]):.3f} | {int((y_r & (s_r < t)).sum())}")


if __name__ == "__main__":
    main()
