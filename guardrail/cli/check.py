"""``guardrail check``: score records and decide each one with the policy, exactly as the guard does.

Each row is decided by :func:`guardrail.decision.decide` (through :mod:`guardrail.cli.gate`). A row that cannot be
checked (a script the model was not trained on, broken Unicode, over a limit) is reported with its line and id and
counted as unchecked; the run goes on. Exit code: 0 every row passed, 1 a row failed or was unchecked, 2 bad input.
``--html FILE`` also writes the results as one self-contained HTML report (:mod:`guardrail.html_report`).
``--ray [ADDRESS]`` checks the rows on a Ray Data actor pool (:mod:`guardrail.batch.ray_data`): only the loop that
evaluates rows changes; reading, deciding and writing are the code below, so the output is the same row for row.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from guardrail.cli.env import env_threads, nli_model
from guardrail.cli.gate import Gate, RowResult, Tally, build_gate
from guardrail.cli.records import Record, read_path
from guardrail.cli.report import junit, markdown, row_json, summary, table
from guardrail.decision import faithfulness_limit
from guardrail.errors import InputError
from guardrail.html_report import ReportThresholds, html_report

__all__ = ["RowChecker", "cmd_check", "ray_address"]


def _checks(args: argparse.Namespace) -> list[str]:
    from guardrail.checks.evaluator import CHECKS

    return [c.strip() for c in args.checks.split(",") if c.strip()] if args.checks else list(CHECKS)


def _evaluator(args: argparse.Namespace, gate: Gate) -> Any:
    from guardrail.checks.evaluator import Evaluator
    from guardrail.checks.faithfulness import FaithfulnessConfig
    from guardrail.scorers.embedding import EmbeddingScorer
    from guardrail.scorers.nli import NLIScorer, default_nli_model
    from guardrail.scorers.pool import ForwardPool

    threads = env_threads()
    # one pool of forward-pass workers for both models (onnx): a row's passes side by side, one core each
    pool = ForwardPool(threads) if args.backend == "onnx" else None
    nli = None
    if "faithfulness" in gate.checks:
        nli = NLIScorer(nli_model(args.nli_model) or default_nli_model(), backend=args.backend, threads=threads,
                        pool=pool)
    embedder = EmbeddingScorer(args.embedding_model, backend="onnx" if args.embedding_model is None else args.backend,
                               threads=threads, pool=pool)
    if getattr(args, "scorer_url", None):  # the forward passes on a shared scorer pool (guardrail serve-scorer)
        from guardrail.remote import scorers_from_url

        remote_nli, embedder = scorers_from_url(args.scorer_url, nli_model=nli_model(args.nli_model),
                                                embedding_model=args.embedding_model)
        nli = remote_nli if nli is not None else None
    # sentences are flagged unsupported at the threshold that decides (one figure in the evidence and the verdict)
    config = FaithfulnessConfig(mode=args.mode, max_context_chars=args.max_context_chars,
                                threshold=gate.model_threshold)
    return Evaluator(nli=nli, embedder=embedder, checks=gate.checks, faithfulness=config)


def _check_row(evaluator: Any, gate: Gate, rec: Record) -> RowResult:
    start = time.perf_counter()
    try:
        ev = evaluator.evaluate(rec.question, rec.contexts, rec.response, rec.ground_truth)
    except InputError as exc:  # this row cannot be checked (UncheckableError included); the others can
        return RowResult(rec, error=str(exc))
    return RowResult(rec, ev, gate.decide(ev, rec.response, time.perf_counter() - start))


def _model_threshold(evaluator: Any) -> float | None:
    check = evaluator.faithfulness_check
    return check.threshold if check is not None else None


class RowChecker:
    """What checks one row: the evaluator (the models, loaded once) and the gate. The single process builds one;
    ``--ray`` builds one in each actor of its pool, from the same arguments (it is pickled there as
    ``functools.partial(RowChecker, args, gate)``)."""

    def __init__(self, args: argparse.Namespace, gate: Gate) -> None:
        self.gate = gate
        self.evaluator = _evaluator(args, gate)

    def __call__(self, rec: Record) -> RowResult:
        return _check_row(self.evaluator, self.gate, rec)

    @property
    def model_threshold(self) -> float | None:
        return _model_threshold(self.evaluator)


def ray_address(value: str) -> str:
    """``--ray ADDRESS``: local, auto, HOST:PORT or ray://HOST:PORT. Anything else is refused, so that
    ``check --ray data.jsonl`` (the file taken as the address) gets a clear message."""
    if value in ("local", "auto") or re.fullmatch(r"(ray://)?[\w.\-]+:\d+|ray://[\w.\-]+", value):
        return value
    raise argparse.ArgumentTypeError(f"{value!r} is not a Ray address (local, auto, HOST:PORT or ray://HOST:PORT); "
                                     "write the file first: guardrail check FILE --ray [ADDRESS]")


class _Rows:
    """The rows' results in input order, and the NLI model's threshold once a row reached it."""

    def __init__(self, results: Iterator[RowResult], threshold: Callable[[], float | None]) -> None:
        self.results = results
        self._threshold = threshold

    @property
    def model_threshold(self) -> float | None:
        return self._threshold()


@contextmanager
def _checked(args: argparse.Namespace, gate: Gate, records: Sequence[Record]) -> Iterator[_Rows]:
    """The loop that evaluates rows: in this process, or with ``--ray`` on a Ray Data actor pool."""
    if getattr(args, "ray", None) is None:
        checker = RowChecker(args, gate)
        yield _Rows(map(checker, records), lambda: checker.model_threshold)
        return
    from guardrail.batch.ray_data import check_records, ray_session

    seen: list[float | None] = [None]

    def results(rows: Iterator[tuple[RowResult, float | None]]) -> Iterator[RowResult]:
        for result, threshold in rows:
            seen[0] = threshold if threshold is not None else seen[0]
            yield result

    with ray_session(args.ray):
        rows = check_records(records, functools.partial(RowChecker, args, gate),
                             actors=getattr(args, "ray_actors", None), threads=env_threads() or 1)
        yield _Rows(results(rows), lambda: seen[0])


def _write(fmt: str, args: argparse.Namespace, results: list[RowResult], tally: Tally, lines: list[str]) -> None:
    if fmt == "table":
        table(results, sys.stdout, details=args.details)
    elif fmt == "json":
        rows = [row_json(r, args.details) for r in results]
        sys.stdout.write(json.dumps(rows, ensure_ascii=False, indent=2) + "\n")
    elif fmt == "junit":
        junit(results, sys.stdout, tally)
    elif fmt == "markdown":
        markdown(results, sys.stdout, lines)
    if fmt != "markdown":  # machine-readable formats keep stdout clean: the summary goes to stderr
        print("\n".join(lines), file=sys.stdout if fmt == "table" else sys.stderr)


def _html_path(args: argparse.Namespace) -> Path | None:
    """``--html FILE``, refused before any model work when it cannot be written there."""
    if not args.html:
        return None
    path = Path(args.html)
    if path.is_dir() or not path.parent.is_dir():
        raise InputError(f"--html {args.html}: " + ("is a directory" if path.is_dir() else "no such directory")
                         + "; give the path of the HTML file to write")
    return path


def _write_html(path: Path, args: argparse.Namespace, gate: Gate, results: list[RowResult], lines: list[str],
                threshold: float | None) -> None:
    """The HTML report of this run: the same rows, summary and thresholds as the other formats."""
    from guardrail import __version__

    policy = gate.policy
    limit = None
    if "faithfulness" in gate.checks:  # the model's own threshold for "auto", once a row reached the model
        limit = faithfulness_limit(policy, threshold) if threshold is not None else gate.model_threshold
    rule = "any sentence" if policy.aggregate == "any" else "mean"
    thresholds = ReportThresholds(
        faithfulness=limit,
        faithfulness_rule=f"auto: the model's threshold, {rule}" if policy.faithfulness == "auto" else rule,
        retrieval_relevance=policy.retrieval_relevance if "retrieval_relevance" in gate.checks else None,
        response_relevance=policy.response_relevance if "response_relevance" in gate.checks else None,
    )
    source = "<stdin>" if args.file == "-" else args.file
    page = html_report(results, summary=lines, thresholds=thresholds, source=source,
                       generator=f"guardrail {__version__}")
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"--html {args.html}: cannot write the report ({exc.strerror or exc})") from None
    print(f"guardrail: HTML report written to {path} ({len(page.encode('utf-8')) / 1024:.1f} KB)", file=sys.stderr)


def _progress(rows: Iterable[RowResult]) -> Iterable[RowResult]:
    """A progress bar on stderr when it is a terminal (rows, rate, elapsed); nothing otherwise (logs, CI, pipes)."""
    if not sys.stderr.isatty():
        return rows
    from tqdm import tqdm

    bar: Iterable[RowResult] = tqdm(rows, unit="row", file=sys.stderr, leave=False, dynamic_ncols=True,
                                    desc="guardrail check")
    return bar


def cmd_check(args: argparse.Namespace) -> int:
    fmt = "jsonl" if args.json else args.format
    html_path = _html_path(args)
    gate, notes = build_gate(args.policy, args.fail_under or (), _checks(args), checks_given=bool(args.checks))
    for note in notes:
        print(note, file=sys.stderr)
    records = read_path(args.file, max_context_chars=args.max_context_chars)
    results: list[RowResult] = []
    tally = Tally()
    with _checked(args, gate, records) as checked:
        started = time.perf_counter()
        for result in _progress(checked.results):
            results.append(result)
            tally.add(result)
            if result.error is not None and fmt != "table":  # the table shows it in place
                print(f"guardrail: {result.reasons[0]} (id {result.record.id!r})", file=sys.stderr)
            if fmt == "jsonl":
                sys.stdout.write(json.dumps(row_json(result, args.details), ensure_ascii=False) + "\n")
                sys.stdout.flush()
        tally.seconds = time.perf_counter() - started
        reached = "faithfulness" in gate.checks and tally.rows > tally.unchecked
        threshold = checked.model_threshold if reached else None
    lines = summary(results, tally, gate.in_force(threshold))
    _write(fmt, args, results, tally, lines)
    if html_path is not None:
        _write_html(html_path, args, gate, results, lines, threshold)
    return 0 if tally.ok else 1
