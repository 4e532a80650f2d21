"""Check latency on CPU: median and p95 per request, per check, candidates vs exhaustive premises.

Requests are real rows of the dev benchmarks (BEGIN: one ~150-word knowledge chunk and a dialogue
reply; HaluEval: a short context and answer) plus a RAG-shaped request built from TREC-DL passages
(5 retrieved chunks, a 4-sentence answer).

    python benchmarks/latency.py [--nli-model DIR] [--threads 2]
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import time
from pathlib import Path

import numpy as np

from guardrail.checks.evaluator import Evaluator
from guardrail.checks.faithfulness import FaithfulnessConfig
from guardrail.scorers.embedding import EmbeddingScorer
from guardrail.scorers.nli import NLIScorer, default_nli_model


def rag_requests(data: Path, n: int) -> list[tuple[str, list[str], str]]:
    with gzip.open(data / "retrieval_trecdl19" / "corpus.jsonl.gz", "rt", encoding="utf-8") as fh:
        passages = [json.loads(line)["text"] for _, line in zip(range(5 * n + 50), fh)]
    queries = [json.loads(line)["text"] for line in open(data / "retrieval_trecdl19" / "queries.jsonl", encoding="utf-8")]
    out = []
    for i in range(n):
        chunks = passages[5 * i : 5 * i + 5]
        answer = " ".join(chunks[0].split(". ")[:2]) + ". " + chunks[1].split(". ")[0] + ". It is widely used today."
        out.append((queries[i % len(queries)], chunks, answer))
    return out


def bench_rows(path: Path, n: int) -> list[tuple[str, list[str], str]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for _, line in zip(range(n), fh)]
    return [(r["question"], r["contexts"], r["response"]) for r in rows]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path("../shared/data/bench"))
    ap.add_argument("--nli-model")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("-n", type=int, default=40)
    args = ap.parse_args()
    model = args.nli_model or default_nli_model()
    sets = {
        "begin_dev": bench_rows(args.data / "begin_dev.jsonl.gz", args.n),
        "halueval_qa": bench_rows(args.data / "halueval_qa_dev.jsonl.gz", args.n),
        "rag 5 chunks": rag_requests(args.data, args.n),
    }
    print(f"{'requests':<16} {'mode':<11} {'total p50':>9} {'p95':>7} | {'faith p50':>9} {'retr p50':>8} {'resp p50':>8} | "
          f"{'pairs':>5} {'NLI tok':>7} {'emb tok':>7} {'all tok':>7}")
    # cold: no cache (every text is new, as in the figures before the per-text caches); then "warm chunks": the RAG
    # requests' questions and chunks were seen before (a RAG app retrieves the same chunks again), the answers are new
    runs = [("candidates", sets, 0), ("exhaustive", sets, 0)]
    warm = [(q, c, "An unrelated earlier answer.") for q, c, _ in sets["rag 5 chunks"]]
    runs.append(("candidates", {"rag, warm chunks": sets["rag 5 chunks"]}, 8192))
    for mode, todo, cache in runs:
        nli = NLIScorer(model, threads=args.threads, cache_size=cache)
        emb = EmbeddingScorer(threads=args.threads, cache_size=cache)
        ev = Evaluator(nli=nli, embedder=emb, faithfulness=FaithfulnessConfig(mode=mode))
        ev.evaluate(*sets["begin_dev"][0])  # load models, warm up
        if cache:
            for req in warm:
                ev.evaluate(*req)
        for name, reqs in todo.items():
            totals, faith, retr, resp, pairs, tokens, emb_tokens = [], [], [], [], [], [], []
            for q, c, r in reqs:
                before = emb.tokens_run
                t0 = time.perf_counter()
                res = ev.evaluate(q, c, r)
                totals.append(time.perf_counter() - t0)
                emb_tokens.append(emb.tokens_run - before)
                faith.append(res.timings.faithfulness)
                retr.append(res.timings.retrieval_relevance)
                resp.append(res.timings.response_relevance)
                pairs.append(res.faithfulness.pairs)
                tokens.append(res.faithfulness.model_tokens)
            ms = lambda xs: statistics.median(xs) * 1000  # noqa: E731
            nli_tok, e_tok = statistics.mean(tokens), statistics.mean(emb_tokens)
            print(f"{name:<16} {mode:<11} {ms(totals):8.1f}ms {np.percentile(totals, 95) * 1000:6.1f}ms | "
                  f"{ms(faith):8.1f}ms {ms(retr):7.1f}ms {ms(resp):7.1f}ms | {statistics.mean(pairs):5.1f} "
                  f"{nli_tok:7.0f} {e_tok:7.0f} {nli_tok + e_tok:7.0f}")


if __name__ == "__main__":
    main()
