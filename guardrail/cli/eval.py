"""``guardrail eval``: LLM-judged metrics over a dataset through any OpenAI-compatible endpoint.

Exit code, as ``guardrail check``'s: 0 every row was judged on every metric (and each ``--fail-under`` met); 1 a
``--fail-under`` was not met, or a row errored (judge unreachable, unusable answers: run the same command again to
retry only what errored); 2 bad input or arguments. The run ends with a line: rows, evaluated, errored (per metric) and
the first error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from guardrail.cli.env import env
from guardrail.cli.records import read_rows
from guardrail.errors import InputError

__all__ = ["cmd_eval", "outcome"]


def _gates(specs: Sequence[str], metrics: Sequence[str]) -> dict[str, float]:
    """``--fail-under METRIC=VALUE``: a judged metric's mean must reach VALUE."""
    gates: dict[str, float] = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        try:
            gates[name.strip()] = float(value) if sep else float("nan")
        except ValueError:
            raise InputError(f"--fail-under {spec!r}: expected METRIC=VALUE") from None
        if name.strip() not in metrics or gates[name.strip()] != gates[name.strip()]:
            raise InputError(f"--fail-under {spec!r}: expected METRIC=VALUE with METRIC one of --metrics")
    return gates


def _price(spec: str | None) -> tuple[float, float] | None:
    """``--price PROMPT,COMPLETION`` in USD per million tokens."""
    if not spec:
        return None
    try:
        prompt_price, completion_price = (float(x) for x in spec.split(","))
    except ValueError:
        raise InputError(f"--price {spec!r}: expected PROMPT,COMPLETION in USD per million tokens, "
                         "e.g. --price 0.15,0.60") from None
    if prompt_price < 0 or completion_price < 0:
        raise InputError(f"--price {spec!r}: prices cannot be negative")
    return prompt_price, completion_price


def outcome(results: Sequence[dict[str, Any]], metrics: Sequence[str]) -> tuple[int, str]:
    """(rows that errored on some metric, the closing line: rows, evaluated, errored per metric, the first error)."""
    per_metric = {m: 0 for m in metrics}
    errored = 0
    first = ""
    for row in results:
        bad = [m for m in metrics if isinstance(row.get(m), dict) and "error" in row[m]]
        errored += bool(bad)
        for m in bad:
            per_metric[m] += 1
        if bad and not first:
            first = f"; first error: row {row['id']!r}, {bad[0]}: {row[bad[0]]['error']}"
    counts = ", ".join(f"{m} {n}" for m, n in per_metric.items() if n)
    line = (f"rows: {len(results)}, evaluated: {len(results) - errored}, errored: {errored}"
            + (f" ({counts}){first}; run the same command again to retry only the errored metrics" if errored else ""))
    return errored, line


def cmd_eval(args: argparse.Namespace) -> int:
    from guardrail.judge.client import Judge
    from guardrail.judge.evaluate import print_summary, run, summary

    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    rows = read_rows(Path(args.data), args.subset, args.limit)
    out = Path(args.out) if args.out else Path(args.data).with_suffix("").with_suffix(".eval.jsonl")
    gates = _gates(args.fail_under or (), metrics)
    judge = Judge(args.model, base_url=args.base_url or env("OPENAI_BASE_URL"),
                  api_key=args.api_key or env("OPENAI_API_KEY"), timeout=args.timeout,
                  max_retries=args.max_retries, max_concurrency=args.workers, cache_path=args.cache or None,
                  prompts_dir=args.prompts)
    price = _price(args.price)
    results = run(rows, metrics, judge, out, criteria=args.criteria, workers=args.workers,
                  progress=sys.stderr)  # the stderr of this call, not of the import
    table = summary(results, metrics)
    print_summary(table, sys.stdout, price=price)
    print(f"results: {out}")
    failed = []
    for r in table:
        if r["metric"] not in gates:
            continue
        if r["mean"] is None:  # nothing scored: the gate cannot be met
            failed.append(f"{r['metric']} has no scored rows (needs {gates[r['metric']]:.3f})")
        elif r["mean"] < gates[r["metric"]]:
            failed.append(f"{r['metric']} mean {r['mean']:.3f} < {gates[r['metric']]:.3f}")
    if failed:
        print("FAILED: " + "; ".join(failed))
    errored, line = outcome(results, metrics)
    print(line)
    return 1 if failed or errored else 0
