"""Retrieval relevance on TREC-DL 2019 passages (BEIR layout in ../shared/data/bench/retrieval_trecdl19).

- AUROC of chunk relevance: relevant (grade >= 2, the TREC convention) vs judged-not-relevant (grade 1)
  passages of each query, with a bootstrap 95% interval over queries; balanced accuracy at the
  documented threshold and at the best threshold.
- nDCG@10 when each query's passages (all 5,000 of the corpus) are ranked by the score.
- Beside it, the trivial baselines: lexical overlap (share of query words in the passage) and BM25.

    python benchmarks/retrieval.py [--model DIR --onnx-file model.onnx]
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from guardrail.checks.relevance import RelevanceConfig
from guardrail.scorers.embedding import EmbeddingScorer
from guardrail.stats import (
    auroc,
    balanced_accuracy,
    best_threshold,
    bootstrap_ci,
    ndcg_at_k,
)
from guardrail.text import content_words, split_sentences, words


def load(root: Path) -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, int]]]:
    queries = {(o := json.loads(line))["_id"]: o["text"] for line in open(root / "queries.jsonl", encoding="utf-8")}
    with gzip.open(root / "corpus.jsonl.gz", "rt", encoding="utf-8") as fh:
        corpus = {(o := json.loads(line))["_id"]: (o.get("title", "") + " " + o["text"]).strip() for line in fh}
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for line in open(root / "qrels" / "test.tsv", encoding="utf-8"):
        parts = line.split()
        if len(parts) == 3 and parts[2].lstrip("-").isdigit():
            qrels[parts[0]][parts[1]] = int(parts[2])
    return queries, corpus, {q: r for q, r in qrels.items() if q in queries}


def bm25_scores(query: str, docs: list[list[str]], df: Counter[str], avgdl: float, k1: float = 0.9, b: float = 0.4) -> np.ndarray:
    n = len(docs)
    q = content_words(query)
    out = np.zeros(n)
    for i, d in enumerate(docs):
        tf = Counter(d)
        for w in q:
            if tf[w]:
                idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                out[i] += idf * tf[w] * (k1 + 1) / (tf[w] + k1 * (1 - b + b * len(d) / avgdl))
    return out


def evaluate(name: str, score_matrix: np.ndarray, qids: list[str], pids: list[str], qrels: dict[str, dict[str, int]], threshold: float | None) -> None:
    pidx = {p: i for i, p in enumerate(pids)}
    pair_q, pair_s, pair_y = [], [], []
    ndcgs = []
    for qi, q in enumerate(qids):
        rel = qrels[q]
        for p, g in rel.items():
            if p in pidx:
                pair_q.append(qi)
                pair_s.append(score_matrix[qi, pidx[p]])
                pair_y.append(g >= 2)
        ranked = np.argsort(-score_matrix[qi])[:10]
        ndcgs.append(ndcg_at_k([rel.get(pids[i], 0) for i in ranked], list(rel.values())))
    s, y, g = np.array(pair_s), np.array(pair_y), np.array(pair_q)
    # off-topic negatives: for each query, as many passages judged for *other* queries as it has relevant ones
    rng = np.random.default_rng(0)
    off_s, rel_s = [], s[y]
    for qi, q in enumerate(qids):
        others = [pidx[p] for p in pids_judged_elsewhere(q, qrels) if p in pidx]
        n_rel = sum(1 for gr in qrels[q].values() if gr >= 2)
        for i in rng.choice(others, size=min(n_rel, len(others)), replace=False):
            off_s.append(score_matrix[qi, i])
    off = np.array(off_s)
    a_off = auroc(np.concatenate([rel_s, off]), np.concatenate([np.ones(len(rel_s), bool), np.zeros(len(off), bool)]))
    a = auroc(s, y)
    lo, hi = bootstrap_ci(lambda idx: auroc(s[idx], y[idx]), len(s), groups=g, rounds=500)
    nd = float(np.mean(ndcgs))
    nlo, nhi = bootstrap_ci(lambda idx: float(np.mean(np.array(ndcgs)[idx])), len(ndcgs), rounds=1000)
    best = best_threshold(s, y)
    line = f"{name:<28} AUROC {a:.3f} [{lo:.3f}, {hi:.3f}]  nDCG@10 {nd:.3f} [{nlo:.3f}, {nhi:.3f}]  best-threshold {best:.3f} (bal.acc {balanced_accuracy(s >= best, y):.3f})"
    both = np.concatenate([rel_s, off])
    yy = np.concatenate([np.ones(len(rel_s), bool), np.zeros(len(off), bool)])
    best_off = best_threshold(both, yy)
    line += f"\n{'':<28} relevant vs off-topic: AUROC {a_off:.3f}  best-threshold {best_off:.3f} (bal.acc {balanced_accuracy(both >= best_off, yy):.3f})"
    if threshold is not None:
        line += (f"\n{'':<28} at {threshold:.2f}: recall of relevant {float((rel_s >= threshold).mean()):.3f}, "
                 f"grade-1 passages above {float((s[~y] >= threshold).mean()):.3f}, off-topic above {float((off >= threshold).mean()):.3f}")
    print(line)


def pids_judged_elsewhere(q: str, qrels: dict[str, dict[str, int]]) -> list[str]:
    own = set(qrels[q])
    return sorted({p for other, rel in qrels.items() if other != q for p in rel} - own)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path("../shared/data/bench/retrieval_trecdl19"))
    ap.add_argument("--model", default=None, help="embedding model dir (default: shipped int8 MiniLM)")
    ap.add_argument("--onnx-file", default=None)
    ap.add_argument("--sentences", action="store_true",
                    help="also score each passage as the best of itself and its sentences (the guard's second look)")
    args = ap.parse_args()
    queries, corpus, qrels = load(args.data)
    qids = sorted(qrels)
    pids = list(corpus)
    print(f"{len(qids)} judged queries, {len(pids)} passages, {sum(len(r) for r in qrels.values())} judgements "
          f"({sum(g >= 2 for r in qrels.values() for g in r.values())} relevant)")

    emb = EmbeddingScorer(args.model, onnx_file=args.onnx_file)
    t0 = time.perf_counter()
    pv = emb.embed([corpus[p] for p in pids])
    qv = emb.embed([queries[q] for q in qids])
    dt = time.perf_counter() - t0
    print(f"embedded {len(pids) + len(qids)} texts in {dt:.1f}s ({(len(pids) + len(qids)) / dt:.0f}/s)")
    evaluate("embedding cosine (ours)", np.clip(qv @ pv.T, 0, 1), qids, pids, qrels, RelevanceConfig().chunk_threshold)
    if args.sentences:
        # the guard's second look when no chunk reaches the threshold: a passage scores as its best sentence too
        owner, texts = [], []
        for i, p in enumerate(pids):
            sents = split_sentences(corpus[p])
            if len(sents) > 1:
                texts.extend(s.of(corpus[p]) for s in sents)
                owner.extend([i] * len(sents))
        t0 = time.perf_counter()
        sv = emb.embed(texts)
        print(f"embedded {len(texts)} passage sentences in {time.perf_counter() - t0:.1f}s")
        best = qv @ pv.T
        sims = qv @ sv.T
        for j, i in enumerate(owner):
            best[:, i] = np.maximum(best[:, i], sims[:, j])
        evaluate("embedding cosine, best of passage and its sentences", np.clip(best, 0, 1), qids, pids, qrels,
                 RelevanceConfig().chunk_threshold)

    docs = [words(corpus[p]) for p in pids]
    doc_sets = [set(d) for d in docs]
    overlap = np.array([[sum(w in ds for w in content_words(queries[q])) / max(1, len(content_words(queries[q]))) for ds in doc_sets] for q in qids])
    evaluate("baseline: query-word overlap", overlap, qids, pids, qrels, None)
    df: Counter[str] = Counter()
    for d in doc_sets:
        df.update(d)
    avgdl = float(np.mean([len(d) for d in docs]))
    bm25 = np.array([bm25_scores(queries[q], docs, df, avgdl) for q in qids])
    evaluate("baseline: BM25", bm25, qids, pids, qrels, None)


if __name__ == "__main__":
    main()
