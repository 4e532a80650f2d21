"""Calibrated faithfulness, fitted on the dev benchmarks and reported out of fold (issue 13).

For a model, every row of HaluEval QA ``length_matched`` and BEGIN dev is run through the faithfulness check
without calibration; each sentence keeps its features (guardrail.checks.calibration.FEATURES). A row is represented
by its weakest sentence (lowest entailment), which is the sentence the block decision turns on. Then:

- out of fold: 5 folds grouped by question, stratified over the pooled two sets; the calibration is fitted on four
  folds of both sets and scores the fifth. AUROC per set with bootstrap 95% intervals (resampling questions);
- beside it, always: NLI only (1 - minimum sentence entailment, nothing fitted), answer length, lexical overlap,
  and the two-feature logistic over [lexical overlap, log answer length] fitted on the same folds;
- transfer: fitted on one set, scored on the other (a hint of how it does on data it never saw);
- ``--write``: the calibration fitted on all rows of both sets and its threshold (best balanced accuracy of the
  out-of-fold scores) go into MODEL_DIR/guardrail.json.

    python benchmarks/calibration_cv.py guardrail/models/nli-minilm-l6 [--write] [--cache runs/features.jsonl]
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from guardrail.checks.calibration import (
    DEFAULT_FEATURES,
    FEATURES,
    Calibrator,
    absent_share,
    fit_logistic,
    sentence_features,
    tokens,
)
from guardrail.checks.faithfulness import FaithfulnessCheck, FaithfulnessConfig
from guardrail.scorers.nli import NLIScorer
from guardrail.stats import auroc, balanced_accuracy, best_threshold, bootstrap_ci

BENCH = Path(__file__).resolve().parents[2] / "shared" / "data" / "bench"
SETS = {"halueval_length_matched": ("halueval_qa_dev.jsonl.gz", "length_matched"), "begin_dev": ("begin_dev.jsonl.gz", None)}


def load(name: str) -> list[dict[str, Any]]:
    file, subset = SETS[name]
    with gzip.open(BENCH / file, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return [r for r in rows if not subset or r.get(subset)]


def group_of(row_id: str) -> str:
    return re.sub(r"-\d+$", "", row_id) if row_id.startswith("halueval") else row_id


def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def overlap_absent(row: dict[str, Any]) -> float:
    resp = _tokens(row["response"])
    ctx = set(_tokens(" ".join(row["contexts"])))
    return sum(w not in ctx for w in resp) / len(resp) if resp else 0.0


def perturbed(rows: list[dict[str, Any]], seed: int = 13) -> list[dict[str, Any]]:
    """Overlap-blind probes: each faithful row with one answer sentence changed using the context's own words.

    A name swapped for another name of the context, a number for another number of the context, or the polarity
    flipped (``guardrail.training.synthetic.negate``). Label 1 (unsupported); the group stays the source row's, so a
    probe and its source fall in the same fold. Lexical overlap and length barely move, so only a reader of meaning
    separates a probe from its source.
    """
    import random

    from guardrail.text import split_sentences
    from guardrail.training.synthetic import _NAME, _NUM, _swap, negate

    rng = random.Random(seed)
    out = []
    for r in rows:
        if int(r["label"]) != 0:
            continue
        ctx = " ".join(r["contexts"])
        resp = r["response"]
        spans = split_sentences(resp)
        order = ["name", "number", "negate"]
        rng.shuffle(order)
        for span in rng.sample(spans, len(spans)):
            sent = span.of(resp)
            new = None
            for kind in order:
                if kind == "name":
                    new = _swap(_NAME, " " + sent, sorted(set(_NAME.findall(ctx))), rng)
                    new = new[1:] if new else None
                elif kind == "number":
                    new = _swap(_NUM, sent, sorted(set(_NUM.findall(ctx))), rng)
                else:
                    new = negate(sent)
                if new and new != sent:
                    break
                new = None
            if new:
                out.append({**r, "id": f"{r['id']}~{kind}", "label": 1, "probe_of": r["id"], "probe": kind,
                            "response": resp[: span.start] + new + resp[span.end :]})
                break
    return out


def extract(model_dir: Path, rows: list[dict[str, Any]], question_context: str | None = None) -> list[dict[str, Any]]:
    config = FaithfulnessConfig(threshold=0.5, question_context=question_context)  # type: ignore[arg-type]
    check = FaithfulnessCheck(NLIScorer(model_dir), config, calibrator=None)
    out = []
    for r in rows:
        res = check.run(r.get("question", ""), r["contexts"], r["response"])
        ctx = set(tokens(" ".join(r["contexts"])))
        sents = [s for s in res.sentences if s.checked]
        feats = [sentence_features(s.entailment or 0.0, s.contradiction, s.coverage or 0.0, s.context_coverage or 0.0,
                                   bool(s.unsupported_terms), absent_share(s.text, ctx), len(s.text),
                                   res.context_sentences) for s in sents]
        ents = [s.entailment or 0.0 for s in sents]
        out.append({"id": r["id"], "features": feats, "min_entailment": min(ents) if ents else 1.0})
    return out


def row_x(feats: list[dict[str, float]], features: tuple[str, ...] = FEATURES) -> list[float]:
    if not feats:  # nothing checkable: a neutral row
        return [0.0] * len(features)
    weakest = min(range(len(feats)), key=lambda i: feats[i]["logit_entailment"])
    return [feats[weakest][f] for f in features]


def folds(groups: np.ndarray, k: int, seed: int = 13) -> np.ndarray:
    uniq = np.unique(groups)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(uniq))
    fold_of = {g: i % k for i, g in zip(range(len(uniq)), uniq[order])}
    return np.array([fold_of[g] for g in groups])


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def fit_predict(x_tr: np.ndarray, y_tr: np.ndarray, x_te: np.ndarray, l2: float) -> np.ndarray:
    mu, sd = x_tr.mean(0), x_tr.std(0) + 1e-9
    w, b = fit_logistic(((x_tr - mu) / sd).tolist(), y_tr.astype(int).tolist(), l2=l2)
    return sigmoid(((x_te - mu) / sd) @ np.array(w) + b)


def line(name: str, score: np.ndarray, y: np.ndarray, groups: np.ndarray) -> str:
    a = auroc(score, y)
    lo, hi = bootstrap_ci(lambda i: auroc(score[i], y[i]), len(y), groups=groups)
    return f"  {name:<48} AUROC {a:.3f} [{lo:.3f}, {hi:.3f}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", type=Path)
    ap.add_argument("--cache", type=Path, help="JSONL of extracted features (reused when present)")
    ap.add_argument("--write", action="store_true", help="write the calibration fitted on all rows into MODEL/guardrail.json")
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--features", default=",".join(DEFAULT_FEATURES),
                    help=f"comma-separated subset of {', '.join(FEATURES)} (default: all but absent, as shipped)")
    ap.add_argument("--cap", type=float, default=0.5,
                    help="contradiction cap: a sentence with contradiction >= CAP above its entailment scores at most "
                         "entailment * (1 - contradiction) (stored with --write; default 0.5 as shipped, 0 for none)")
    ap.add_argument("--fit-probes", action="store_true",
                    help="fit on the overlap-blind probes too (training folds only), not just score them")
    ap.add_argument("--question-context", default=None, choices=["fragments", "auto", "always", "never"],
                    help="how short answers are read (default: the model's own setting); use its own --cache per value")
    args = ap.parse_args()
    args.cap = args.cap or None  # --cap 0: no cap
    features = tuple(f.strip() for f in args.features.split(",") if f.strip())
    if set(features) - set(FEATURES):
        ap.error(f"unknown features {sorted(set(features) - set(FEATURES))}; known: {', '.join(FEATURES)}")

    data: dict[str, list[dict[str, Any]]] = {name: load(name) for name in SETS}
    probes: dict[str, list[dict[str, Any]]] = {name: perturbed(rows) for name, rows in data.items()}
    cache: dict[str, Any] = {}
    if args.cache and args.cache.exists():
        cache = {c["id"]: c for c in map(json.loads, args.cache.read_text().splitlines())}
    todo = [r for part in (data, probes) for rows in part.values() for r in rows if r["id"] not in cache]
    if todo:
        for c in extract(args.model, todo, args.question_context):
            cache[c["id"]] = c
        if args.cache:
            args.cache.parent.mkdir(parents=True, exist_ok=True)
            args.cache.write_text("".join(json.dumps(c) + "\n" for c in cache.values()))

    names = list(SETS)
    rows = [(n, r) for n in names for r in data[n]] + [(n, r) for n in names for r in probes[n]]
    is_probe = np.array([r.get("probe_of") is not None for _, r in rows])
    y = np.array([int(r["label"]) == 1 for _, r in rows])  # True = hallucinated
    groups = np.array([f"{n}:{group_of(str(r.get('probe_of') or r['id']))}" for n, r in rows])
    which = np.array([n for n, _ in rows])
    x = np.array([row_x(cache[r["id"]]["features"], features) for _, r in rows])
    weakest = [row_x(cache[r["id"]]["features"], ("logit_entailment", "logit_contradiction")) for _, r in rows]
    ent = sigmoid(np.array([w[0] for w in weakest]))
    con = sigmoid(np.array([w[1] for w in weakest]))
    nli_only = np.array([1 - cache[r["id"]]["min_entailment"] for _, r in rows])
    length = np.array([len(r["response"].strip()) for _, r in rows], dtype=float)
    overlap = np.array([overlap_absent(r) for _, r in rows])
    two = np.column_stack([overlap, np.log1p(length)])
    fit_rows = ~is_probe | args.fit_probes
    # the calibration may use lexical features too: the question is whether the model adds to them
    fold = folds(groups, args.folds)
    oof = np.zeros(len(rows))
    oof_two = np.zeros(len(rows))
    supported = ~y
    for k in range(args.folds):
        tr, te = (fold != k) & fit_rows, fold == k
        oof[te] = 1 - fit_predict(x[tr], supported[tr], x[te], args.l2)
        oof_two[te] = 1 - fit_predict(two[tr], supported[tr], two[te], args.l2)

    def capped(unsupported: np.ndarray) -> np.ndarray:
        if args.cap is None:
            return unsupported
        hit = (con >= args.cap) & (con > ent)
        return np.where(hit, np.maximum(unsupported, 1 - ent * (1 - con)), unsupported)

    oof = capped(oof)
    print(f"model {args.model}; question_context={args.question_context}; features {', '.join(features)} of the weakest "
          f"sentence; contradiction cap {args.cap}; {args.folds} folds by question, fitted on both sets pooled"
          f"{' and their probes' if args.fit_probes else ''}; AUROC for 'hallucinated' with 95% bootstrap intervals "
          "(questions resampled)")
    report: dict[str, Any] = {}
    scores = [("calibrated, out of fold", oof), ("NLI only (1 - min sentence entailment)", nli_only),
              ("baseline: overlap + log length logistic, out of fold", oof_two),
              ("baseline: lexical overlap (absent share)", overlap), ("baseline: answer length", length)]
    for n in names:
        m = (which == n) & ~is_probe
        print(f"{n} ({int(m.sum())} rows, {int(y[m].sum())} hallucinated):")
        for label, score in scores:
            print(line(label, score[m], y[m], groups[m]))
        report[n] = {"calibrated_oof": auroc(oof[m], y[m]), "nli_only": auroc(nli_only[m], y[m]),
                     "two_feature_oof": auroc(oof_two[m], y[m]), "overlap": auroc(overlap[m], y[m]),
                     "length": auroc(length[m], y[m])}
    threshold = best_threshold(1 - oof[~is_probe], supported[~is_probe])
    bal = balanced_accuracy((1 - oof[~is_probe]) >= threshold, supported[~is_probe])
    print("overlap-blind probes: each faithful row against itself with one name, number or polarity changed using the "
          "context's words (benchmarks/calibration_cv.py perturbed); AUROC, and the share of probes that pass the threshold:")
    for n in names:
        src = {str(r["probe_of"]) for m, (nn, r) in zip(is_probe, rows) if m and nn == n}
        m = (which == n) & (is_probe | np.array([str(r["id"]) in src for _, r in rows]))
        print(f"{n} probes ({int((m & is_probe).sum())} probes of {len(src)} faithful rows):")
        for label, score in scores:
            print(line(label, score[m], y[m], groups[m]))
        passed = float(((1 - oof[m & is_probe]) >= threshold).mean())
        print(f"  probes passing the calibrated threshold: {passed:.3f}")
        report[f"{n}_probes"] = {"calibrated_oof": auroc(oof[m], y[m]), "nli_only": auroc(nli_only[m], y[m]),
                                 "two_feature_oof": auroc(oof_two[m], y[m]), "overlap": auroc(overlap[m], y[m]),
                                 "length": auroc(length[m], y[m]), "probes_passing": passed}
    print("transfer (fitted on one set only, scored on the other):")
    for a, b in [(names[0], names[1]), (names[1], names[0])]:
        tr, te = (which == a) & fit_rows, (which == b) & ~is_probe
        s = np.zeros(len(rows))
        s[te] = 1 - fit_predict(x[tr], supported[tr], x[te], args.l2)
        s = capped(s)
        s2 = 1 - fit_predict(two[tr], supported[tr], two[te], args.l2)
        print(line(f"calibrated {a} -> {b}", s[te], y[te], groups[te]))
        print(line(f"overlap + length {a} -> {b}", s2, y[te], groups[te]))
    print(f"threshold on the out-of-fold support score: {threshold:.4f} (balanced accuracy {bal:.3f}, pooled dev rows)")
    if args.write:
        xf, yf = x[fit_rows], supported[fit_rows]
        mu, sd = xf.mean(0), xf.std(0) + 1e-9
        w, b = fit_logistic(((xf - mu) / sd).tolist(), yf.astype(int).tolist(), l2=args.l2)
        # fold the standardisation into the weights: the runtime calibrator takes raw features
        weights = [wi / si for wi, si in zip(w, sd)]
        bias = b - sum(wi * mi / si for wi, mi, si in zip(w, mu, sd))
        cal = Calibrator(features, tuple(weights), bias, args.cap)
        path = args.model / "guardrail.json"
        meta = json.loads(path.read_text()) if path.exists() else {}
        command = f"python benchmarks/calibration_cv.py MODEL --features {','.join(features)}"
        command += (f" --cap {args.cap}" if args.cap is not None else "") + (" --fit-probes" if args.fit_probes else "")
        meta.update({
            "question_context": args.question_context or meta.get("question_context", "auto"),
            "threshold": round(float(threshold), 4),
            "calibration": cal.to_dict(),
            "calibration_fit": {"sets": names, "rows": int(fit_rows.sum()), "row_feature": "weakest sentence",
                                "probes_in_fit": bool(args.fit_probes), "l2": args.l2, "out_of_fold_auroc": report,
                                "command": command + " --write"},
        })
        path.write_text(json.dumps(meta, indent=2) + "\n")
        print(f"wrote calibration and threshold to {path}")
    assert all(math.isfinite(v) for r in report.values() for v in r.values())


if __name__ == "__main__":
    main()
