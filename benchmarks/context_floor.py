"""The calibration's ``log_context_sentences`` feature and its floor (``SHORT_CONTEXT_SENTENCES``), swept on cached
dev-set features: for each floor, the out-of-fold AUROC per set, the decision's balanced accuracy at the shared
threshold beside the set's best, and the transfer (fitted on three sets, scored on the fourth).

    cd benchmarks && python context_floor.py FEATURES.jsonl [--floors 0,4,6,8,10,12,16]

FEATURES.jsonl is a ``dev_sets.py --cache`` file extracted with the feature (any floor: the count is recovered from
it when it was extracted with floor 0; with another floor, counts under it read as the floor)."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import dev_sets as D
import numpy as np
from calibration_cv import folds

from guardrail.stats import auroc, balanced_accuracy


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cache", type=Path)
    ap.add_argument("--floors", default="0,4,6,8,10,12,16")
    args = ap.parse_args()
    # the shipped features and the context feature (measured, not shipped: see BENCHMARKS.md)
    D.FEATURES_IN_USE = (*D.SHIPPED_FEATURES, "log_context_sentences")
    names = list(D.SETS)
    data = [(n, r) for n in names for r in D.load(n)]
    cache = {c["key"]: c for c in map(json.loads, args.cache.read_text().splitlines())}
    raw = [cache[f"{n}:{r['id']}"]["features"] for n, r in data]
    counts: dict[str, list[float]] = {}
    for (n, _), fs in zip(data, raw):
        counts.setdefault(n, []).extend(math.expm1(f["log_context_sentences"]) for f in fs[:1])
    for n in names:
        c = counts[n]
        print(f"{n}: context sentences median {np.median(c):.0f}, 10th-90th percentile {np.percentile(c, 10):.0f}-"
              f"{np.percentile(c, 90):.0f}")
    y = np.array([int(r["label"]) == 1 for _, r in data])
    sup = ~y
    which = np.array([n for n, _ in data])
    groups = np.array([D.group_of(n, r) for n, r in data])
    w = np.array([len(data) / (len(names) * int((which == n).sum())) for n, _ in data])
    fold = folds(groups, 5)
    for floor in (float(x) for x in args.floors.split(",")):
        feats = [[dict(f, log_context_sentences=math.log1p(max(floor, math.expm1(f["log_context_sentences"]))))
                  for f in fs] for fs in raw]
        x = np.array([D.weakest(f, D.FEATURES_IN_USE) for f in feats])
        oof = np.zeros(len(data))
        for k in range(5):
            tr, te = fold != k, fold == k
            cal = D.fit(x[tr], sup[tr], w[tr], 1.0)
            oof[te] = [D.row_score(cal, feats[i]) for i in np.flatnonzero(te)]
        t = D.best_shared_threshold(oof, sup, which, names)
        print(f"floor {floor:g}: shared threshold {t:.4f}")
        for n in names:
            m = which == n
            own, own_t = D.best_own(oof[m], sup[m])
            dec = balanced_accuracy(oof[m] >= t, sup[m])
            tr, te = which != n, which == n
            cal = D.fit(x[tr], sup[tr], w[tr], 1.0)
            s_tr = np.array([D.row_score(cal, feats[i]) for i in np.flatnonzero(tr)])
            s_te = np.array([D.row_score(cal, feats[i]) for i in np.flatnonzero(te)])
            t1 = D.best_shared_threshold(s_tr, sup[tr], which[tr], [o for o in names if o != n])
            print(f"  {n}: AUROC {auroc(1 - oof[m], y[m]):.3f}, decision {dec:.3f} vs best {own:.3f} (gap "
                  f"{own - dec:.3f}); transfer AUROC {auroc(1 - s_te, y[te]):.3f}, decision "
                  f"{balanced_accuracy(s_te >= t1, sup[te]):.3f}")


if __name__ == "__main__":
    main()
