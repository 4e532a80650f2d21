"""The block decision on the four dev sets: one calibration, one threshold, measured out of fold (issue 19).

Sets (../shared/data/bench): HaluEval QA ``length_matched`` (short QA), BEGIN dev (knowledge-grounded dialogue),
``wice_dev`` (long Wikipedia claims against their cited pages), ``cliff_dev`` (news summaries with human-annotated
errors). Label 1 = hallucinated / not (fully) supported.

For a model, every row runs through the faithfulness check as the guard runs it (uncalibrated); each checked sentence
keeps its features. Then:

- the calibration (a logistic over the features of a row's weakest sentence, equal weight per set) is fitted out of
  fold: 5 folds grouped by question / claim / article over the four sets pooled;
- a row's score is what the guard decides on: the *lowest* calibrated sentence score (a word-for-word copy of a
  context sentence scores 1.0, a contradicted sentence is capped); a row is blocked when it is below the threshold;
- the threshold is the one that maximises the mean balanced accuracy over the four sets (each set counts the same),
  chosen on the out-of-fold scores; per set we print the decision's balanced accuracy at that shared threshold beside
  the best threshold for that set alone;
- beside every AUROC (95% bootstrap interval, resampling groups): NLI only (1 - minimum sentence entailment), lexical
  overlap (share of answer words absent from the contexts), answer length, and the two-feature logistic over
  [overlap, log length] fitted on the same folds;
- transfer: fitted on three sets, scored on the fourth (no row of the fourth in the fit).

    python benchmarks/dev_sets.py MODEL_DIR [--cache FEATURES.jsonl] [--joined 3] [--sentences 2] [--no-answer-claims] [--write]

``--write`` stores the calibration fitted on all rows and the shared threshold in MODEL_DIR/guardrail.json.
Model tokens per row are reported (the cost of a setting).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import re
import sys
import time
from pathlib import Path
from collections.abc import Iterator
from typing import Any

import numpy as np
from calibration_cv import folds, overlap_absent, sigmoid  # the same baselines and folds as the two-set script

from guardrail.checks.calibration import FEATURES, Calibrator, fit_logistic, sentence_features
from guardrail.checks.evidence import RULE_CAP, mirrored
from guardrail.errors import UncheckableError
from guardrail.checks.faithfulness import FaithfulnessCheck, FaithfulnessConfig
from guardrail.scorers.nli import NLIScorer
from guardrail.stats import auroc, balanced_accuracy, bootstrap_ci

BENCH = Path(__file__).resolve().parents[2] / "shared" / "data" / "bench"
SETS = {
    "halueval_length_matched": ("halueval_qa_dev.jsonl.gz", "length_matched"),
    "begin_dev": ("begin_dev.jsonl.gz", None),
    "wice_dev": ("wice_dev.jsonl.gz", None),
    "cliff_dev": ("cliff_dev.jsonl.gz", None),
}
#: the shipped calibration's features: no context-wide overlap (with it the fit leans on overlap, 3.9 against 0.44 on
#: the model, and "Gift cards can be returned too." passed at entailment 0.18 against "Gift cards cannot be returned.")
SHIPPED_FEATURES = ("logit_entailment", "logit_contradiction", "coverage", "unsupported")


def load(name: str, bench: Path = BENCH) -> list[dict[str, Any]]:
    file, subset = SETS[name]
    with gzip.open(bench / file, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return [r for r in rows if not subset or r.get(subset)]


def group_of(name: str, row: dict[str, Any]) -> str:
    """Rows that share a question, claim or article stay in one fold."""
    rid = str(row["id"])
    if name.startswith("halueval"):
        return name + ":" + re.sub(r"-\d+$", "", rid)
    if name.startswith("cliff"):  # cliff-xsum-34687720-BART: the article's summaries by both systems together
        return name + ":" + rid.rsplit("-", 1)[0]
    return f"{name}:{rid}"


def extract(model: Path, rows: list[tuple[str, dict[str, Any]]], config: FaithfulnessConfig) -> Iterator[dict[str, Any]]:
    """One feature record per row, yielded as it is made (the caller stores them as they come)."""
    check = FaithfulnessCheck(NLIScorer(model), config, calibrator=None)
    started = time.perf_counter()
    unchecked: dict[str, int] = {}
    for n, (name, r) in enumerate(rows):
        try:
            res = check.run(r.get("question") or "", r["contexts"], r["response"])
        except UncheckableError as exc:
            # the guard cannot judge the answer ("yes, he is" to a question whose "he" names nothing it can read):
            # block mode blocks it, so it scores as the lowest answer (as one with no checked sentence)
            unchecked[name] = unchecked.get(name, 0) + 1
            yield {"key": f"{name}:{r['id']}", "features": [], "tokens": 0, "pairs": 0, "min_entailment": 0.0,
                   "unchecked": str(exc)}
            continue
        sents = [s for s in res.sentences if s.checked]
        feats = []
        for s in sents:
            basis = s.hypothesis if not s.hypothesis.startswith("Q: ") else s.text
            f = sentence_features(s.entailment or 0.0, s.contradiction, s.coverage or 0.0, s.context_coverage or 0.0,
                                  bool(s.unsupported_terms), 0.0, len(basis), res.context_sentences)
            f["verbatim"] = 1.0 if s.verbatim else 0.0
            if s.unsupported_numbers:
                f["unsupported_number"] = 1.0
            if s.denied_by is not None:
                f["denied_by_rule"] = 1.0
            if s.swapped_words:
                f["swapped_word"] = 1.0
            if s.overstated:
                f["overstated"] = 1.0
            if s.negated:  # a "no" to "Are both X and Y ...?": the features are the least supported member's
                f["negated"] = 1.0
            f["max_contradiction"] = s.max_contradiction if s.max_contradiction is not None else 0.0
            if s.subject_conflict is not None:
                f["subject_conflict"] = s.subject_conflict
                if s.conflict_bar is not None:
                    f["conflict_bar"] = s.conflict_bar
            if s.top_sentence_contradiction is not None:
                f["top_entailment"] = s.top_sentence_entailment or 0.0
                f["top_contradiction"] = s.top_sentence_contradiction
            feats.append(f)
        yield {"key": f"{name}:{r['id']}", "features": feats, "tokens": res.model_tokens, "pairs": res.pairs,
               "min_entailment": min((s.entailment or 0.0 for s in sents), default=1.0)}
        if (n + 1) % 200 == 0:
            print(f"  {n + 1}/{len(rows)} rows, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    for name, k in sorted(unchecked.items()):
        print(f"  {name}: {k} answer(s) unchecked (scored lowest, as block mode blocks them)", file=sys.stderr)


def weakest(feats: list[dict[str, float]], features: tuple[str, ...]) -> list[float]:
    """The features of the sentence with the lowest entailment, which the calibration is fitted on; a negated member
    ("No." to "Are both X and Y ...?", scored mirrored) is no sentence whose support the fit can learn from."""
    feats = [f for f in feats if not f.get("negated")]
    if not feats:
        return [0.0] * len(features)
    i = min(range(len(feats)), key=lambda k: feats[k]["logit_entailment"])
    return [feats[i][f] for f in features]


def fit(x: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float) -> Calibrator:
    """A calibrator over raw features (standardisation folded in); ``w`` = per-row weights."""
    mu, sd = x.mean(0), x.std(0) + 1e-9
    coef, b = fit_logistic(((x - mu) / sd).tolist(), y.astype(int).tolist(), l2=l2, sample_weight=w.tolist())
    weights = [c / s for c, s in zip(coef, sd)]
    bias = b - sum(c * m / s for c, m, s in zip(coef, mu, sd))
    return Calibrator(FEATURES_IN_USE, tuple(weights), bias, CAP)


FEATURES_IN_USE: tuple[str, ...] = SHIPPED_FEATURES
CAP: float | None = 0.5
#: also cap on the strongest contradiction over the premises read (at least this), not only the best-entailed one's:
#: measured and not shipped (v3: CLIFF 0.789 -> 0.712 at 0.5, 0.776 at 0.97; spurious contradictions from other chunks)
ANY_PREMISE_CONTRADICTION: float | None = None
#: also cap on the contradiction of the claim's best-ranked single sentence (with --sentences): measured, not shipped
#: (v3.4, --sentences 2: CLIFF 0.795 -> 0.676, WiCE 0.817 -> 0.795, HaluEval 0.877 -> 0.880)
TOP_SENTENCE_CAP = False
#: a sentence with a number no context holds scores below the threshold (--no-number-cap: measured without)
NUMBER_CAP = True
#: a sentence denied by a clause of the contexts in its own words scores below the threshold (--no-denial-cap)
DENIAL_CAP = True
#: a near copy of a context sentence with a word of its own swapped in scores below the threshold (--no-swap-cap)
SWAP_CAP = True
#: the threshold the number cap is set under (the shipped model's; the cap is relative to the threshold in the guard)
SHIPPED_THRESHOLD = 0.3961
#: cap on the contradiction of a premise that names the claim's subject when its best support does not
#: (FaithfulnessConfig.subject_conflict; --subject-conflict)
SUBJECT_CONFLICT: float | None = FaithfulnessConfig().subject_conflict


def row_score(cal: Calibrator, feats: list[dict[str, float]]) -> float:
    """What the guard decides on: the lowest calibrated sentence score (copies 1.0, contradictions capped)."""
    if not feats:
        return 1.0
    scores = []
    for f in feats:
        if f.get("verbatim"):
            scores.append(1.0)
            continue
        ent, con = sigmoid(np.array(f["logit_entailment"])), sigmoid(np.array(f["logit_contradiction"]))
        score = cal(f, float(ent), float(con) if f["logit_contradiction"] != 0.0 else None)
        bar = f.get("conflict_bar", SUBJECT_CONFLICT) if SUBJECT_CONFLICT is not None else None
        if bar is not None and f.get("subject_conflict", 0.0) >= bar:
            score = cal.cap(score, float(ent), f["subject_conflict"]) if f["subject_conflict"] > float(ent) else score
        if NUMBER_CAP and f.get("unsupported_number") or DENIAL_CAP and f.get("denied_by_rule") or \
                SWAP_CAP and f.get("swapped_word"):
            score = min(score, SHIPPED_THRESHOLD * RULE_CAP * float(ent))  # as the guard caps it (evidence.RULE_CAP)
        if TOP_SENTENCE_CAP and "top_contradiction" in f:  # the claim's best-ranked single sentence caps it too
            score = cal.cap(score, f["top_entailment"], f["top_contradiction"])
        if ANY_PREMISE_CONTRADICTION is not None and f.get("max_contradiction", 0.0) >= ANY_PREMISE_CONTRADICTION:
            score = cal.cap(score, float(ent), f["max_contradiction"])
        if f.get("negated"):  # as the guard judges "not all of them" (evidence.not_all)
            score = mirrored(score, SHIPPED_THRESHOLD)
        scores.append(score)
    return min(scores)


def best_shared_threshold(support: np.ndarray, supported: np.ndarray, which: np.ndarray, names: list[str],
                          max_gap: float | None = None) -> float:
    """The threshold with the best mean balanced accuracy over the sets; with ``max_gap``, the lowest threshold (the
    fewest answers blocked) at which every set's balanced accuracy is within ``max_gap`` of its own best threshold's,
    when there is one."""
    cands = np.unique(np.round(support, 4))
    best, best_t = -1.0, 0.5
    own = {n: best_own(support[which == n], supported[which == n])[0] for n in names}
    for t in cands:
        accs = {n: balanced_accuracy(support[which == n] >= t, supported[which == n]) for n in names}
        if max_gap is not None and all(own[n] - a <= max_gap for n, a in accs.items()):
            return float(t)
        m = np.mean(list(accs.values()))
        if m > best:
            best, best_t = m, float(t)
    return best_t


def best_own(support: np.ndarray, supported: np.ndarray) -> tuple[float, float]:
    best, best_t = -1.0, 0.5
    for t in np.unique(np.round(support, 4)):
        b = balanced_accuracy(support >= t, supported)
        if b > best:
            best, best_t = b, float(t)
    return best, best_t


def ci(score: np.ndarray, y: np.ndarray, groups: np.ndarray) -> str:
    a = auroc(score, y)
    lo, hi = bootstrap_ci(lambda i: auroc(score[i], y[i]), len(y), groups=groups)
    return f"{a:.3f} [{lo:.3f}, {hi:.3f}]"


def main() -> None:
    global FEATURES_IN_USE, CAP, ANY_PREMISE_CONTRADICTION, TOP_SENTENCE_CAP, SUBJECT_CONFLICT, NUMBER_CAP, DENIAL_CAP, SWAP_CAP
    global SHIPPED_THRESHOLD
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", type=Path)
    ap.add_argument("--cache", type=Path, help="JSONL of extracted features (reused when present; one per setting)")
    ap.add_argument("--joined", type=int, default=None, help="FaithfulnessConfig.joined (default: the config default)")
    ap.add_argument("--sentences", type=int, default=None,
                    help="FaithfulnessConfig.sentences: single sentences read besides the windows (default: the config's)")
    ap.add_argument("--no-span-claims", action="store_true", help="FaithfulnessConfig.span_claims=False")
    ap.add_argument("--split-claims", action="store_true", help="FaithfulnessConfig.split_claims")
    ap.add_argument("--no-answer-claims", action="store_true", help="read short answers as 'Q: A:' (the v2 reading)")
    ap.add_argument("--features", default=",".join(SHIPPED_FEATURES), help=f"subset of {', '.join(FEATURES)}")
    ap.add_argument("--cap", type=float, default=0.5, help="contradiction cap (0: none)")
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument("--any-premise-contradiction", type=float, default=None, metavar="MIN",
                    help="also cap on the strongest contradiction over the premises when it reaches MIN (not the guard's "
                         "rule: measured only)")
    ap.add_argument("--no-number-cap", action="store_true",
                    help="score a sentence with a number no context holds as the model and calibration do (no cap)")
    ap.add_argument("--no-denial-cap", action="store_true",
                    help="score a sentence a clause denies in its own words as the model and calibration do (no cap)")
    ap.add_argument("--no-swap-cap", action="store_true",
                    help="score a near copy with a swapped-in word as the model and calibration do (no cap)")
    ap.add_argument("--top-sentence-cap", action="store_true",
                    help="also cap on the contradiction of the claim's best single sentence (needs --sentences)")
    ap.add_argument("--subject-conflict", type=float, default=FaithfulnessConfig().subject_conflict,
                    help="cap at a contradiction of the claim's subject at least this (0: off; default: the config's)")
    ap.add_argument("--stop-at", type=float, default=None,
                    help="FaithfulnessConfig.stop_at (default: the config default; 0: read every premise)")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--max-gap", type=float, default=None,
                    help="shared threshold: the lowest at which every set's decision is within this of its best "
                         "(default: the best mean balanced accuracy)")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--write", action="store_true", help="store the calibration and threshold in MODEL/guardrail.json")
    args = ap.parse_args()
    FEATURES_IN_USE = tuple(f.strip() for f in args.features.split(",") if f.strip())
    CAP = args.cap or None
    ANY_PREMISE_CONTRADICTION = args.any_premise_contradiction
    TOP_SENTENCE_CAP = args.top_sentence_cap
    NUMBER_CAP = not args.no_number_cap
    DENIAL_CAP = not args.no_denial_cap
    SWAP_CAP = not args.no_swap_cap
    SUBJECT_CONFLICT = args.subject_conflict or None
    names = [n.strip() for n in args.sets.split(",")]
    cfg_kwargs: dict[str, Any] = {"threshold": 0.5, "answer_claims": not args.no_answer_claims}
    if args.joined is not None:
        cfg_kwargs["joined"] = args.joined
    if args.sentences is not None:
        cfg_kwargs["sentences"] = args.sentences
    if args.split_claims:
        cfg_kwargs["split_claims"] = True
    if args.stop_at is not None:
        cfg_kwargs["stop_at"] = args.stop_at or None
    if args.no_span_claims:
        cfg_kwargs["span_claims"] = False
    config = FaithfulnessConfig(**cfg_kwargs)

    data = [(n, r) for n in names for r in load(n)]
    cache: dict[str, Any] = {}
    if args.cache and args.cache.exists():
        cache = {c["key"]: c for c in map(json.loads, args.cache.read_text().splitlines())}
    todo = [(n, r) for n, r in data if f"{n}:{r['id']}" not in cache]
    if todo:
        print(f"extracting {len(todo)} rows with {args.model} ({config})", file=sys.stderr)
        if args.cache:
            args.cache.parent.mkdir(parents=True, exist_ok=True)
        for i, c in enumerate(extract(args.model, todo, config), 1):
            cache[c["key"]] = c
            if args.cache and (i % 100 == 0 or i == len(todo)):  # resumable: an interrupted run keeps its rows
                tmp = args.cache.with_suffix(".tmp")
                tmp.write_text("".join(json.dumps(c) + "\n" for c in cache.values()))
                tmp.replace(args.cache)
    feats = [cache[f"{n}:{r['id']}"]["features"] for n, r in data]
    y = np.array([int(r["label"]) == 1 for _, r in data])
    supported = ~y
    which = np.array([n for n, _ in data])
    groups = np.array([group_of(n, r) for n, r in data])
    x = np.array([weakest(f, FEATURES_IN_USE) for f in feats])
    w = np.array([len(data) / (len(names) * int((which == n).sum())) for n, _ in data])
    w[[bool(f) and all(g.get("negated") for g in f) for f in feats]] = 0.0  # nothing the fit can learn from
    nli_only = np.array([1 - cache[f"{n}:{r['id']}"]["min_entailment"] for n, r in data])
    tokens = np.array([cache[f"{n}:{r['id']}"]["tokens"] for n, r in data], dtype=float)
    length = np.array([len(r["response"].strip()) for _, r in data], dtype=float)
    overlap = np.array([overlap_absent(r) for _, r in data])
    two = np.column_stack([overlap, np.log1p(length)])

    fold = folds(groups, args.folds)
    oof = np.zeros(len(data))  # support score (higher = supported)
    oof_two = np.zeros(len(data))
    for k in range(args.folds):
        tr, te = fold != k, fold == k
        cal = fit(x[tr], supported[tr], w[tr], args.l2)
        oof[te] = [row_score(cal, feats[i]) for i in np.flatnonzero(te)]
        mu, sd = two[tr].mean(0), two[tr].std(0) + 1e-9
        cw, cb = fit_logistic(((two[tr] - mu) / sd).tolist(), supported[tr].astype(int).tolist(), l2=args.l2,
                              sample_weight=w[tr].tolist())
        oof_two[te] = sigmoid(((two[te] - mu) / sd) @ np.array(cw) + cb)
    threshold = best_shared_threshold(oof, supported, which, names, args.max_gap)
    if args.max_gap is not None:
        # the guard caps a rule's sentence relative to its own threshold (SHIPPED_THRESHOLD here): a threshold chosen
        # with caps at another value may not meet the criterion at itself. Choose among the thresholds visited the
        # lowest that meets it with the caps at itself
        visited: dict[float, np.ndarray] = {}
        t = threshold
        while t not in visited and len(visited) < 4:
            SHIPPED_THRESHOLD = t
            oof_t = np.zeros(len(data))
            for k in range(args.folds):
                tr, te = fold != k, fold == k
                cal = fit(x[tr], supported[tr], w[tr], args.l2)
                oof_t[te] = [row_score(cal, feats[i]) for i in np.flatnonzero(te)]
            visited[t] = oof_t
            t = best_shared_threshold(oof_t, supported, which, names, args.max_gap)
        meets = [v for v, o in visited.items() if all(
            best_own(o[which == n], supported[which == n])[0] - balanced_accuracy(o[which == n] >= v,
                                                                                   supported[which == n])
            <= args.max_gap for n in names)]
        threshold = min(meets) if meets else max(visited)
        SHIPPED_THRESHOLD, oof = threshold, visited[threshold]

    print(f"model {args.model}; check {config}; features {', '.join(FEATURES_IN_USE)} (weakest sentence), cap {CAP}; "
          f"{args.folds} folds by question/claim/article over {len(names)} sets pooled, each set weighted equally; "
          "AUROC for 'hallucinated' [95% bootstrap interval]")
    rule = ("best mean balanced accuracy over the sets" if args.max_gap is None else
            f"the lowest with every set's decision within {args.max_gap} of its best")
    print(f"shared threshold ({rule}, out of fold): {threshold:.4f}")
    header = ("set", "rows", "calibrated (oof)", "NLI only", "overlap+length (oof)", "overlap", "length",
              "decision @shared", "best own thr", "tokens/row")
    print(" | ".join(header))
    report: dict[str, Any] = {}
    for n in names:
        m = which == n
        g = groups[m]
        dec = balanced_accuracy(oof[m] >= threshold, supported[m])
        own, own_t = best_own(oof[m], supported[m])
        cells = [n, str(int(m.sum())), ci(1 - oof[m], y[m], g), ci(nli_only[m], y[m], g), ci(1 - oof_two[m], y[m], g),
                 ci(overlap[m], y[m], g), ci(length[m], y[m], g), f"{dec:.3f}", f"{own:.3f} (t={own_t:.3f})",
                 f"{tokens[m].mean():.0f}"]
        print(" | ".join(cells))
        report[n] = {"calibrated_oof": auroc(1 - oof[m], y[m]), "nli_only": auroc(nli_only[m], y[m]),
                     "two_feature_oof": auroc(1 - oof_two[m], y[m]), "overlap": auroc(overlap[m], y[m]),
                     "length": auroc(length[m], y[m]), "decision_bacc": dec, "best_bacc": own,
                     "tokens_per_row": float(tokens[m].mean())}
    print("transfer: fitted on the other sets only, scored on this one (AUROC; decision at the others' shared threshold):")
    for n in names if len(names) > 1 else []:
        tr, te = which != n, which == n
        cal = fit(x[tr], supported[tr], w[tr], args.l2)
        s_tr = np.array([row_score(cal, feats[i]) for i in np.flatnonzero(tr)])
        t = best_shared_threshold(s_tr, supported[tr], which[tr], [o for o in names if o != n], args.max_gap)
        s = np.array([row_score(cal, feats[i]) for i in np.flatnonzero(te)])
        print(f"  -> {n}: {ci(1 - s, y[te], groups[te])}; decision {balanced_accuracy(s >= t, supported[te]):.3f} "
              f"at {t:.4f}")
    if args.write:
        cal = fit(x, supported, w, args.l2)
        path = args.model / "guardrail.json"
        meta = json.loads(path.read_text()) if path.exists() else {}
        meta.update({
            "threshold": round(float(threshold), 4),
            "calibration": cal.to_dict(),
            "question_context": meta.get("question_context", "fragments"),
            # the premises the calibration was fitted on: single sentences besides the windows
            "sentences": args.sentences if args.sentences is not None else int(meta.get("sentences", 0)),
            "calibration_fit": {"sets": names, "rows": len(data), "row_feature": "weakest sentence",
                                "row_score": "lowest calibrated sentence score", "set_weights": "equal",
                                "l2": args.l2, "out_of_fold": report,
                                "command": f"python benchmarks/dev_sets.py MODEL --features {','.join(FEATURES_IN_USE)}"
                                           f" --cap {args.cap}"
                                           + (f" --sentences {args.sentences}" if args.sentences is not None else "")
                                           + (f" --stop-at {args.stop_at}" if args.stop_at is not None else "")
                                           + (f" --max-gap {args.max_gap}" if args.max_gap is not None else "")
                                           + " --write"},
        })
        path.write_text(json.dumps(meta, indent=2) + "\n")
        print(f"wrote calibration and threshold {threshold:.4f} to {path}")
    assert all(math.isfinite(v) for r in report.values() for v in r.values())


if __name__ == "__main__":
    main()
