"""``check_dataset``: the checks of ``guardrail check`` over a Ray Dataset of your own, on an actor pool.

Each row is read as ``guardrail check`` reads a line of its input (``question``, ``contexts``, ``response``, optional
``id`` and ``ground_truth``; the Ragas and DeepEval names too), checked by the CLI's own row checker (one model load
per actor) and decided by the same policy. The result keeps every input column and adds ``outcome`` (passed, failed,
unchecked), the three gated scores, ``failed_checks``, ``reasons`` and ``result``: the JSON object ``guardrail check
--json`` writes for that row, as a string.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from guardrail.batch.ray_data import BATCH_SIZE, CheckActor, RowCheck, actor_pool, import_ray, pyarrow
from guardrail.cli.check import RowChecker
from guardrail.cli.gate import Gate, build_gate
from guardrail.cli.records import to_record
from guardrail.cli.report import METRICS, metric, row_json
from guardrail.errors import ConfigurationError
from guardrail.policy import Policy

if TYPE_CHECKING:
    import ray.data

__all__ = ["RESULT_COLUMNS", "check_dataset"]

#: the columns ``check_dataset`` adds (an input column of the same name is replaced)
RESULT_COLUMNS = ("outcome", *METRICS, "failed_checks", "reasons", "result")


class _DatasetActor(CheckActor):
    """One actor: the row checker, built once; each batch of rows comes back with the result columns added."""

    def __init__(self, make_check: Callable[[], RowCheck], threads: int | None, details: bool,
                 max_context_chars: int) -> None:
        super().__init__(make_check, threads)
        self.details = details
        self.max_context_chars = max_context_chars

    def __call__(self, batch: Any) -> Any:  # pyarrow.Table in and out
        pa = pyarrow()
        results = []
        for obj in batch.to_pylist():
            rid = obj.get("id")
            where = "row" if rid is None else f"row id {rid!r}"
            results.append(self.run(to_record({**obj, "id": rid}, where, 0, max_context_chars=self.max_context_chars)))
        columns: dict[str, Any] = {
            "outcome": pa.array([r.outcome for r in results], type=pa.string()),
            **{m: pa.array([metric(r.evaluation, m) for r in results], type=pa.float64()) for m in METRICS},
            "failed_checks": pa.array([list(r.verdict.failed_checks) if r.verdict is not None else [] for r in results],
                                      type=pa.list_(pa.string())),
            "reasons": pa.array([r.reasons for r in results], type=pa.list_(pa.string())),
            "result": pa.array([json.dumps(row_json(r, self.details), ensure_ascii=False) for r in results],
                               type=pa.string()),
        }
        table = batch.drop_columns([c for c in RESULT_COLUMNS if c in batch.column_names])
        for name, values in columns.items():
            table = table.append_column(name, values)
        return table


def _gate(policy: Policy | str | Path | None, checks: Sequence[str] | None) -> Gate:
    from guardrail.checks.evaluator import CHECKS

    chosen = list(CHECKS) if checks is None else list(checks)
    unknown = [c for c in chosen if c not in CHECKS]
    if unknown or not chosen:
        raise ConfigurationError(f"checks {chosen}: choose one or more of {', '.join(CHECKS)}")
    if isinstance(policy, Policy):
        return Gate(policy, tuple(chosen))
    gate, _ = build_gate(None if policy is None else str(policy), (), chosen, checks_given=checks is not None)
    return gate


def check_dataset(
    ds: ray.data.Dataset,
    *,
    policy: Policy | str | Path | None = None,
    checks: Sequence[str] | None = None,
    nli_model: str | Path | None = None,
    embedding_model: str | Path | None = None,
    backend: Literal["onnx", "torch"] = "onnx",
    mode: Literal["candidates", "exhaustive"] = "candidates",
    max_context_chars: int = 1_000_000,
    details: bool = False,
    actors: int | None = None,
    batch_size: int = BATCH_SIZE,
    threads: int | None = 1,
) -> ray.data.Dataset:
    """Check every row of ``ds`` as ``guardrail check`` does, lazily (Ray Data runs it when the result is consumed:
    ``write_json``, ``iter_rows``, ``materialize``...). ``policy``: a :class:`~guardrail.policy.Policy`, a policy file,
    or None for the default policy; ``checks``: a subset of the checks; ``nli_model``, ``embedding_model``,
    ``backend``, ``mode``, ``max_context_chars``, ``details``: as the options of ``guardrail check``. The pool has
    ``actors`` actors of one CPU each (default: one per CPU of the cluster), each with ``threads`` onnxruntime
    threads. A row that cannot be read (no ``contexts``, ...) fails the run with a message naming it; a row that
    cannot be checked is ``unchecked`` with its reason. Rows keep their order only with
    ``ds.context.execution_options.preserve_order = True``: give them an ``id``."""
    rt = import_ray()
    from guardrail.cli.main import build_parser

    gate = _gate(policy, checks)
    args: Any = build_parser().parse_args(["check", "-"])  # every option of `guardrail check` at its default...
    args.nli_model = None if nli_model is None else str(nli_model)  # ...and those given here
    args.embedding_model = None if embedding_model is None else str(embedding_model)
    args.backend, args.mode, args.max_context_chars = backend, mode, max_context_chars
    if not rt.is_initialized():
        rt.init()
    make_check = functools.partial(RowChecker, args, gate)
    out: ray.data.Dataset = ds.map_batches(
        _DatasetActor, fn_constructor_args=(make_check, threads, details, max_context_chars), batch_size=batch_size,
        batch_format="pyarrow", compute=actor_pool(actors), num_cpus=1, udf_modifying_row_count=False)
    return out
