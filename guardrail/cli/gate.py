"""The CLI gate: which policy decides each row, and the row's result. The decision itself is
:func:`guardrail.decision.decide`, the one the guard and the gateway make: no threshold is compared here.

The policy: ``--policy FILE`` or the default :class:`~guardrail.policy.Policy` (faithfulness "auto" = the NLI model's
stored threshold, aggregate "any", retrieval relevance 0.2), with ``--fail-under METRIC=VALUE`` overriding thresholds
(``faithfulness=auto`` included).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from guardrail.decision import decide, faithfulness_limit
from guardrail.errors import InputError
from guardrail.policy import Policy
from guardrail.verdict import Timings, Verdict

if TYPE_CHECKING:
    from guardrail.checks.evaluator import Evaluation
    from guardrail.cli.records import Record

__all__ = ["GATE_METRICS", "Gate", "RowResult", "Tally", "build_gate", "parse_fail_under"]

GATE_METRICS = ("faithfulness", "retrieval_relevance", "response_relevance")
RowOutcome = Literal["passed", "failed", "unchecked"]


def parse_fail_under(specs: Sequence[str]) -> dict[str, float | Literal["auto"]]:
    """``--fail-under METRIC=VALUE`` (repeatable): VALUE within 0..1, or ``auto`` for faithfulness."""
    out: dict[str, float | Literal["auto"]] = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or name not in GATE_METRICS:
            raise InputError(f"--fail-under {spec!r}: expected METRIC=VALUE with METRIC one of {', '.join(GATE_METRICS)}")
        value = value.strip()
        if value == "auto":
            if name != "faithfulness":
                raise InputError(f"--fail-under {spec!r}: 'auto' (the NLI model's own threshold) is for faithfulness "
                                 "only; give a number within 0..1")
            out[name] = "auto"
            continue
        try:
            number = float(value)
        except ValueError:
            raise InputError(f"--fail-under {spec!r}: {value!r} is not a number (or 'auto' for faithfulness)") from None
        if not 0.0 <= number <= 1.0:
            raise InputError(f"--fail-under {spec!r}: the value must be within 0..1")
        out[name] = number
    return out


@dataclass(frozen=True, slots=True)
class Gate:
    """The policy that decides every row, and the checks the evaluator runs."""

    policy: Policy
    checks: tuple[str, ...]

    @property
    def model_threshold(self) -> float | None:
        """The threshold the faithfulness check should flag sentences with: the policy's number (so the evidence and
        the decision give one figure), None for "auto" (the model's own)."""
        value = self.policy.faithfulness
        return None if value is None or value == "auto" else float(value)

    def in_force(self, model_threshold: float | None) -> list[str]:
        """The thresholds that decide, for the summary: 'faithfulness 0.428 (auto, any sentence)', ..."""
        out = []
        for name in GATE_METRICS:
            value = getattr(self.policy, name)
            if value is None or name not in self.checks:
                continue
            if name == "faithfulness":
                rule = "any sentence" if self.policy.aggregate == "any" else "mean"
                if model_threshold is None and value == "auto":  # no row reached the model
                    out.append(f"faithfulness auto (the model's threshold, {rule})")
                    continue
                limit = faithfulness_limit(self.policy, model_threshold if model_threshold is not None else 0.5)
                out.append(f"faithfulness {limit:.3f} ({'auto, ' if value == 'auto' else ''}{rule})")
            else:
                out.append(f"{name} {value:.3f}")
        return out

    def decide(self, evaluation: Evaluation, response: str, seconds: float) -> Verdict:
        return decide(self.policy, evaluation, response, Timings(seconds))


def build_gate(policy_file: str | None, fail_under: Sequence[str], checks: Sequence[str], *,
               checks_given: bool) -> tuple[Gate, list[str]]:
    """The gate, and notes for stderr (policy thresholds on checks ``--checks`` leaves out: not applied)."""
    overrides = parse_fail_under(fail_under)
    policy = Policy.from_file(policy_file) if policy_file else Policy()
    if overrides:
        policy = dataclasses.replace(policy, **overrides)  # type: ignore[arg-type]
    left_out = [m for m in GATE_METRICS if m not in checks]
    asked = [m for m in left_out if m in overrides]
    if asked:
        raise InputError(f"--fail-under {', '.join(asked)}: --checks leaves that check out; add it to --checks")
    notes = []
    if checks_given and policy_file:
        notes = [f"note: --checks leaves out {m}; the policy's threshold for it ({getattr(policy, m)}) is not applied"
                 for m in left_out if getattr(policy, m) is not None]
    return Gate(policy, tuple(checks)), notes


@dataclass(frozen=True, slots=True)
class RowResult:
    """One row: its verdict (``decide``), or why it could not be checked."""

    record: Record
    evaluation: Evaluation | None = None
    verdict: Verdict | None = None
    error: str | None = None

    @property
    def outcome(self) -> RowOutcome:
        if self.error is not None or self.evaluation is None:
            return "unchecked"
        return "passed" if self.verdict is None or self.verdict.passed else "failed"

    @property
    def reasons(self) -> list[str]:
        if self.error is not None:
            return [f"{self.record.where or 'row'}: could not be checked: {self.error}"]
        return list(self.verdict.reasons) if self.verdict is not None else []


@dataclass(slots=True)
class Tally:
    """The closing count of a run."""

    rows: int = 0
    passed: int = 0
    failed: int = 0
    unchecked: int = 0
    seconds: float = 0.0

    def add(self, result: RowResult) -> None:
        self.rows += 1
        setattr(self, result.outcome, getattr(self, result.outcome) + 1)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.unchecked

    def line(self) -> str:
        return (f"{self.rows} rows: {self.passed} passed, {self.failed} failed, {self.unchecked} unchecked "
                f"in {self.seconds:.2f} s")
