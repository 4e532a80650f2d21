"""``guardrail eval``: LLM-judged metrics over a dataset through any OpenAI-compatible endpoint."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from guardrail.cli.env import env
from guardrail.cli.records import read_rows
from guardrail.errors import InputError

__all__ = ["cmd_eval"]


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
    results = run(rows, metrics, judge, out, criteria=args.criteria, workers=args.workers)
    table = summary(results, metrics)
    print_summary(table, sys.stdout, price=price)
    print(f"results: {out}")
    failed = [f"{r['metric']} mean {r['mean']:.3f} < {gates[r['metric']]:.3f}" for r in table
              if r["metric"] in gates and r["mean"] is not None and r["mean"] < gates[r["metric"]]]
    if failed:
        print("FAILED: " + "; ".join(failed))
        return 1
    return 0
