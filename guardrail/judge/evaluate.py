"""``guardrail eval``: LLM-judged metrics over a dataset, resumable, with a summary and a CI gate.

Rows in our common format (``question``, ``contexts``, ``response``, ``ground_truth``) or with Ragas' field names
(``user_input``, ``retrieved_contexts``, ``response``, ``reference``). Results go to a JSONL file, one row per line as
it finishes: a killed run continues where it stopped (rows already in the file are skipped), and the judge's cache
makes repeated calls free.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from guardrail.errors import InputError
from guardrail.judge.client import Judge, JudgeError, Usage
from guardrail.judge.metrics import METRICS, NEEDS_EMBEDDER, Sample
from guardrail.stats import bootstrap_ci

FIELDS = {"question": ("question", "user_input"), "contexts": ("contexts", "retrieved_contexts"),
          "answer": ("response", "answer"), "reference": ("ground_truth", "reference")}


def to_sample(row: dict[str, Any], where: str) -> Sample:
    def get(name: str) -> Any:
        for key in FIELDS[name]:
            if key in row:
                return row[key]
        return None

    question, contexts, answer, reference = get("question") or "", get("contexts"), get("answer"), get("reference")
    if not isinstance(answer, str):
        raise InputError(f"{where}: needs 'response' (or 'answer') as a string")
    if contexts is None:
        contexts = []
    if isinstance(contexts, str) or not isinstance(contexts, list) or not all(isinstance(c, str) for c in contexts):
        raise InputError(f"{where}: 'contexts' / 'retrieved_contexts' must be a list of strings")
    if not isinstance(question, str) or (reference is not None and not isinstance(reference, str)):
        raise InputError(f"{where}: 'question' and 'reference' must be strings")
    return Sample(question, contexts, answer, reference)


def evaluate_row(judge: Judge, sample: Sample, metrics: Sequence[str], *, embedder: Any = None,
                 criteria: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in metrics:
        kwargs: dict[str, Any] = {}
        if name in NEEDS_EMBEDDER:
            kwargs["embedder"] = embedder
        if name == "g_eval":
            kwargs["criteria"] = criteria or "The answer is correct, complete and supported by the documents."
        try:
            out[name] = METRICS[name](judge, sample, **kwargs).to_dict()
        except JudgeError as exc:  # a clear per-row error, never a silent NaN
            out[name] = {"name": name, "score": None, "error": str(exc)}
    return out


def run(rows: Sequence[dict[str, Any]], metrics: Sequence[str], judge: Judge, out_path: Path, *, embedder: Any = None,
        criteria: str | None = None, workers: int = 4, progress: TextIO | None = sys.stderr) -> list[dict[str, Any]]:
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise InputError(f"unknown metrics {unknown}; choose from {', '.join(METRICS)}")
    if embedder is None and any(m in NEEDS_EMBEDDER for m in metrics):
        from guardrail.scorers.embedding import EmbeddingScorer

        embedder = EmbeddingScorer()
    samples = [(str(r.get("id", i)), to_sample(r, f"row {i + 1}")) for i, r in enumerate(rows)]
    done: set[str] = set()
    if out_path.exists():
        kept = []
        for line in out_path.read_text(encoding="utf-8").splitlines():
            try:
                done.add(str(json.loads(line)["id"]))
                kept.append(line)
            except (json.JSONDecodeError, KeyError, TypeError):
                continue  # a line cut by a kill: dropped, and that row runs again
        out_path.write_text("".join(line + "\n" for line in kept), encoding="utf-8")
    todo = [(i, s) for i, s in samples if i not in done]
    lock = threading.Lock()
    started = time.perf_counter()
    finished = 0
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with out_path.open("a", encoding="utf-8") as fh, ThreadPoolExecutor(max(1, workers)) as pool:
        futures = {pool.submit(evaluate_row, judge, s, metrics, embedder=embedder, criteria=criteria): i for i, s in todo}
        for future in as_completed(futures):
            row = {"id": futures[future], **future.result()}
            with lock:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                fh.flush()
                finished += 1
            if progress is not None:
                rate = finished / max(time.perf_counter() - started, 1e-9)
                eta = (len(todo) - finished) / rate if rate else 0.0
                progress.write(f"\r{finished + len(done)}/{len(samples)} rows, {rate:.2f} rows/s, ETA {eta:.0f} s   ")
                progress.flush()
    if progress is not None and todo:
        progress.write("\n")
    results = [json.loads(line) for line in out_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    wanted = {i for i, _ in samples}
    return [r for r in results if str(r["id"]) in wanted]


def summary(results: Sequence[dict[str, Any]], metrics: Sequence[str]) -> list[dict[str, Any]]:
    out = []
    for name in metrics:
        cells = [r.get(name, {}) for r in results]
        scores = np.array([c["score"] for c in cells if c.get("score") is not None], dtype=float)
        usage = Usage()
        for c in cells:
            u = c.get("usage") or {}
            usage.add(Usage(u.get("prompt_tokens", 0), u.get("completion_tokens", 0), u.get("calls", 0),
                            u.get("cached_calls", 0)))
        ci = bootstrap_ci(lambda i, s=scores: float(s[i].mean()), len(scores)) if len(scores) > 1 else (None, None)
        out.append({"metric": name, "mean": float(scores.mean()) if len(scores) else None, "ci": ci,
                    "scored": len(scores), "not_applicable": sum(1 for c in cells if c.get("score") is None and "error" not in c),
                    "errors": sum(1 for c in cells if "error" in c), "usage": usage.to_dict()})
    return out


def print_summary(rows: Sequence[dict[str, Any]], out: TextIO, price: tuple[float, float] | None = None) -> None:
    """The summary table; with ``price`` (USD per million prompt and completion tokens) a cost column and total."""
    cost_head = f" {'cost USD':>10}" if price else ""
    out.write(f"{'metric':<30} {'mean':>6} {'95% interval':>16} {'scored':>7} {'n/a':>5} {'errors':>7} {'tokens in/out':>16} {'calls (cached)':>15}{cost_head}\n")
    total = 0.0
    for r in rows:
        mean = "-" if r["mean"] is None else f"{r['mean']:.3f}"
        ci = "-" if r["ci"][0] is None else f"[{r['ci'][0]:.3f}, {r['ci'][1]:.3f}]"
        u = r["usage"]
        cost = ""
        if price:
            spent = Usage(u["prompt_tokens"], u["completion_tokens"]).cost(*price)
            total += spent
            r["cost_usd"] = spent
            cost = f" {spent:>10.4f}"
        out.write(f"{r['metric']:<30} {mean:>6} {ci:>16} {r['scored']:>7} {r['not_applicable']:>5} {r['errors']:>7} "
                  f"{u['prompt_tokens']:>8}/{u['completion_tokens']:<7} {u['calls']:>8} ({u['cached_calls']}){cost}\n")
    if price:
        out.write(f"total cost: {total:.4f} USD at {price[0]:g}/{price[1]:g} USD per million prompt/completion tokens\n")
