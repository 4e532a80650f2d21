"""What ``guardrail check`` writes: a table, JSON, JSON Lines, JUnit XML, markdown, and the closing summary.

Every format shows the same result for a row (passed, failed or unchecked: :class:`~guardrail.cli.gate.RowResult`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from guardrail.checks.evaluator import Evaluation
    from guardrail.checks.faithfulness import SentenceEvidence
    from guardrail.cli.gate import RowResult, Tally

__all__ = ["fmt", "junit", "markdown", "metric", "row_json", "summary", "table"]

METRICS = ("faithfulness", "retrieval_relevance", "response_relevance")
MARK = {"passed": "pass", "failed": "FAIL", "unchecked": "UNCHECKED"}


def fmt(x: float | None) -> str:
    return "   -  " if x is None else f"{x:6.3f}"


def metric(ev: Evaluation | None, name: str) -> float | None:
    return ev.headline(name) if ev is not None else None


def _sentence_line(s: SentenceEvidence, details: bool) -> str:
    where = ""
    if s.sentence is not None:
        snippet = s.sentence.text if len(s.sentence.text) < 90 else s.sentence.text[:87] + "..."
        label = {"contradicts": "contradicted by", "closest": "closest"}.get(s.sentence_role or "", "best")
        where = f"; {label}: chunk {s.sentence.chunk} \"{snippet}\""
    contradiction = s.sentence_contradiction if s.sentence_role == "contradicts" else s.contradiction
    contra = "" if contradiction is None else f", contradiction {contradiction:.2f}"
    terms = f"; not in context: {', '.join(s.unsupported_terms)}" if s.unsupported_terms else ""
    mark = "" if not details else ("  ok " if s.supported else "  NO ")
    return f"{mark}  sentence {s.index + 1} \"{s.text}\": entailment {s.entailment:.2f}{contra}{where}{terms}"


def _table_row(r: RowResult, rid: str, w: int, out: TextIO, details: bool) -> None:
    ev = r.evaluation
    faith = ev.faithfulness if ev is not None else None
    unsupported = f"{len(faith.unsupported)}/{sum(1 for s in faith.sentences if s.checked)}" if faith else "0/0"
    if ev is None:
        unsupported = "-"
    cells = "  ".join(f"{fmt(metric(ev, m)):>{width}}" for m, width in zip(METRICS, (8, 9, 8)))
    out.write(f"{rid:<{w}}  {cells}  {unsupported:<11}  {MARK[r.outcome]}\n")
    if r.error is not None:
        out.write(f"{'':<{w}}    {r.reasons[0]}\n")
        return
    shown = [x for x in faith.sentences if x.checked] if faith and details else (faith.unsupported if faith else ())
    for s in shown:
        out.write(f"{'':<{w}}  {_sentence_line(s, details)}\n")
    if r.outcome == "failed":  # the sentences are listed above; the other reasons follow
        for reason in r.reasons:
            if not reason.startswith("sentence "):
                out.write(f"{'':<{w}}    {reason}\n")


def table(results: Sequence[RowResult], out: TextIO, *, details: bool = False) -> None:
    ids = [str(r.record.id) for r in results]
    w = max([2, *map(len, ids)])
    out.write(f"{'id':<{w}}  faithful  retrieval  response  unsupported  result\n")
    for r, rid in zip(results, ids):
        _table_row(r, rid, w, out, details)


def row_json(r: RowResult, details: bool) -> dict[str, Any]:
    """One row: its scores (and evidence with ``details``), its outcome, the checks it failed and why."""
    if r.evaluation is None:
        return {"id": r.record.id, "line": r.record.line, "outcome": "unchecked", "error": r.error}
    ev = r.evaluation
    row: dict[str, Any] = {"id": r.record.id, **ev.to_dict()}
    if not details:
        row.pop("details")
        row["unsupported_sentences"] = [
            {"index": s.index, "text": s.text, "entailment": s.entailment, "contradiction": s.contradiction}
            for s in (ev.faithfulness.unsupported if ev.faithfulness else ())
        ]
    row["outcome"] = r.outcome
    row["failed_checks"] = list(r.verdict.failed_checks) if r.verdict is not None else []
    row["reasons"] = r.reasons
    return row


def junit(results: Sequence[RowResult], out: TextIO, tally: Tally) -> None:
    """JUnit XML: a failing row is a failing test, an unchecked row a test in error."""
    from xml.sax.saxutils import escape, quoteattr

    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(f'<testsuites><testsuite name="guardrail check" tests="{tally.rows}" failures="{tally.failed}" '
              f'errors="{tally.unchecked}" time="{tally.seconds:.3f}">\n')
    for r in results:
        scores = ", ".join(f"{m}={v:.3f}" for m in METRICS if (v := metric(r.evaluation, m)) is not None)
        out.write(f'  <testcase classname="guardrail" name={quoteattr(str(r.record.id))}>')
        reasons = r.reasons
        if r.outcome != "passed":
            tag = "failure" if r.outcome == "failed" else "error"
            out.write(f"<{tag} message={quoteattr(reasons[0] if reasons else r.outcome)}>"
                      f"{escape(chr(10).join(reasons))}</{tag}>")
        out.write(f"<system-out>{escape(scores)}</system-out></testcase>\n")
    out.write("</testsuite></testsuites>\n")


def markdown(results: Sequence[RowResult], out: TextIO, summary_lines: Sequence[str]) -> None:
    """A table for a pull-request comment, then the summary as a list."""
    icon = {"passed": "✅", "failed": "❌", "unchecked": "⚠️"}
    out.write("| | id | faithfulness | retrieval | response | why |\n|---|---|---|---|---|---|\n")
    for r in results:
        cells = [fmt(metric(r.evaluation, m)).strip() for m in METRICS]
        why = "<br>".join(f.strip().replace("|", "\\|") for f in r.reasons)
        out.write(f"| {icon[r.outcome]} | {r.record.id} | {' | '.join(cells)} | {why} |\n")
    out.write("\n" + "\n".join(f"- {line}" for line in summary_lines) + "\n")


def summary(results: Sequence[RowResult], tally: Tally, thresholds: Sequence[str]) -> list[str]:
    """The verdict of the run, the thresholds that decided it, each metric's mean, and the closing count."""
    verdict = "PASSED" if tally.ok else "FAILED"
    lines = [f"{verdict}: {tally.failed} of {tally.rows} rows failed the policy, {tally.unchecked} unchecked"]
    lines.append("thresholds: " + (", ".join(thresholds) if thresholds else "none (no check the policy gates ran)"))
    for name in METRICS:
        values = [v for r in results if (v := metric(r.evaluation, name)) is not None]
        if values:
            lines.append(f"{name}: mean {sum(values) / len(values):.3f} over {len(values)} rows")
    lines.append(tally.line())
    return lines
