"""``guardrail eval``: LLM-judged metrics over a dataset, resumable, with a summary and a CI gate.

Rows in our common format (``question``, ``contexts``, ``response``, ``ground_truth``) or with Ragas' field names
(``user_input``, ``retrieved_contexts``, ``response``, ``reference``). Results go to a JSONL file, one row per line as
it finishes: a killed run continues where it stopped, a re-run judges only the metrics a row lacks or that errored
(a metric added to ``--metrics`` is computed for the rows already there), and the judge's cache makes repeated calls
free. The file is rewritten atomically at the end: one line per input row, in input order.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import tempfile
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


def _key(row: dict[str, Any], index: int) -> str:
    """A row's key in the results file: its ``id``, else its 0-based position."""
    return str(row.get("id", index))


def pending(row: dict[str, Any], metrics: Sequence[str]) -> list[str]:
    """The metrics a results row still needs: absent, or errored last time (a ``score: null`` that does not apply is
    done)."""
    return [m for m in metrics if not isinstance(row.get(m), dict) or "error" in row[m]]


def read_results(out_path: Path) -> dict[str, dict[str, Any]]:
    """An existing results file's rows by id, in file order; when an id is there twice (a resumed run appends the rows
    it finished before it rewrites the file) the later line wins. A line cut by a kill is skipped."""
    found: dict[str, dict[str, Any]] = {}
    if not out_path.exists():
        return found
    for line in out_path.read_text(encoding="utf-8").split("\n"):  # (not splitlines: a U+2028 inside a string)
        try:
            row = json.loads(line)
            key = str(row["id"])
        except (json.JSONDecodeError, KeyError, TypeError, IndexError):
            continue
        if isinstance(row, dict):
            found[key] = row
    return found


def _ends_with_newline(path: Path) -> bool:
    if not path.exists() or path.stat().st_size == 0:
        return True
    with path.open("rb") as fh:
        fh.seek(-1, 2)
        return fh.read(1) == b"\n"


def _replace(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """Write ``rows`` as JSON Lines to a temporary file beside ``path``, then ``os.replace`` it: the old file stays
    whole until the new one is complete."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def run(rows: Sequence[dict[str, Any]], metrics: Sequence[str], judge: Judge, out_path: Path, *, embedder: Any = None,
        criteria: str | None = None, workers: int = 4, progress: TextIO | None = sys.stderr) -> list[dict[str, Any]]:
    """Judge ``metrics`` over ``rows``; the results, one per row in input order, are also in ``out_path``.

    Resumable: a row already in ``out_path`` is judged only for the metrics it lacks or that errored there (the others
    keep their values). Finished rows are appended to ``out_path`` as they come (a killed run loses nothing: the old
    lines are untouched, and the next run reads the latest line of each row); at the end the file is rewritten
    atomically, one line per input row in input order, then the lines of rows not in this input (``--limit``,
    ``--subset``) as they were.
    """
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise InputError(f"unknown metrics {unknown}; choose from {', '.join(METRICS)}")
    samples = [(_key(r, i), to_sample(r, f"row {i + 1}")) for i, r in enumerate(rows)]
    first_at: dict[str, int] = {}
    for n, (key, _) in enumerate(samples, 1):
        if key in first_at:
            raise InputError(f"row {n}: id {key!r} repeats row {first_at[key]}; results are kept by id, so ids must be "
                             "unique (or leave 'id' out to key rows by position)")
        first_at[key] = n
    previous = read_results(out_path)
    todo = [(key, s, need) for key, s in samples if (need := pending(previous.get(key, {}), metrics))]
    if embedder is None and any(m in NEEDS_EMBEDDER for _, _, need in todo for m in need):
        from guardrail.scorers.embedding import EmbeddingScorer

        embedder = EmbeddingScorer()
    complete = len(samples) - len(todo)
    if progress is not None and previous:
        progress.write(f"resuming {out_path}: {complete} of {len(samples)} rows complete, {len(todo)} to judge "
                       f"({sum(len(need) for _, _, need in todo)} metric(s) missing or errored)\n")
    latest = dict(previous)
    lock = threading.Lock()
    started = time.perf_counter()
    finished = 0
    if todo:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        with out_path.open("a", encoding="utf-8") as fh:
            if not _ends_with_newline(out_path):
                fh.write("\n")  # a line cut by a kill stays a line of its own (skipped on reading)
            pool = ThreadPoolExecutor(max(1, workers))
            try:
                futures = {pool.submit(evaluate_row, judge, s, need, embedder=embedder, criteria=criteria): key
                           for key, s, need in todo}
                for future in as_completed(futures):
                    key = futures[future]
                    row: dict[str, Any] = {"id": key}
                    row.update((k, v) for k, v in previous.get(key, {}).items() if k != "id")
                    row.update(future.result())  # an errored metric is replaced in place, a new one appended
                    with lock:
                        latest[key] = row
                        fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                        fh.flush()
                        finished += 1
                    if progress is not None:
                        rate = finished / max(time.perf_counter() - started, 1e-9)
                        eta = (len(todo) - finished) / rate if rate else 0.0
                        progress.write(f"\r{finished + complete}/{len(samples)} rows, {rate:.2f} rows/s, "
                                       f"ETA {eta:.0f} s   ")
                        progress.flush()
            finally:  # interrupted: drop the queued rows, keep what was appended
                pool.shutdown(wait=True, cancel_futures=True)
        if progress is not None:
            progress.write("\n")
    wanted = {key for key, _ in samples}
    results = [latest[key] for key, _ in samples]
    _replace(out_path, results + [r for key, r in latest.items() if key not in wanted])
    return results


def _mean_at(scores: np.ndarray, indices: np.ndarray) -> float:
    """The mean of ``scores`` at ``indices`` (one bootstrap resample)."""
    return float(scores[indices].mean())


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
        ci = bootstrap_ci(functools.partial(_mean_at, scores), len(scores)) if len(scores) > 1 else (None, None)
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
