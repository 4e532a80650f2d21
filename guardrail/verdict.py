"""Verdict: what the guard decided about one answer, and why."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from guardrail.checks.evaluator import Evaluation
from guardrail.policy import Action

Outcome = Literal["passed", "failed", "error"]


@dataclass(frozen=True, slots=True)
class Scores:
    faithfulness: float | None = None
    retrieval_relevance: float | None = None
    response_relevance: float | None = None


@dataclass(frozen=True, slots=True)
class Timings:
    """Seconds. ``time_to_first_token``/``generation`` are None when the guard did not see the generation."""

    check: float
    time_to_first_token: float | None = None
    generation: float | None = None


@dataclass(frozen=True, slots=True)
class Verdict:
    """The decision on one answer.

    ``action`` is what was applied: ``pass`` when every check passed (or scoring failed open),
    else the policy's action. ``outcome`` says why: passed, failed, or error (scoring raised or
    ran over its latency budget; ``error`` holds the reason).
    """

    action: Action
    outcome: Outcome
    scores: Scores
    #: human-readable, one per failed check or unsupported sentence
    reasons: tuple[str, ...]
    failed_checks: tuple[str, ...]
    timings: Timings
    error: str | None = None
    #: the text that was checked (for streams: what had been generated when the verdict was made)
    response: str = ""
    evaluation: Evaluation | None = field(default=None, repr=False, compare=False)
    #: why the answer was not checked (``outcome == "error"``): timeout, overload, unreadable, uncheckable, input,
    #: exception (the ``reason`` label of guardrail_check_errors_total)
    error_reason: str | None = None
    #: the reasons as a client of the gateway or the middleware reads them (:attr:`shown_reasons`): a failing sentence
    #: by its number and place, without its words (None: the same as ``reasons``)
    wire_reasons: tuple[str, ...] | None = None
    #: ``error`` as a client reads it (an error that quotes the answer: GuardrailError.shown); None: the same
    wire_error: str | None = None

    @property
    def shown_reasons(self) -> tuple[str, ...]:
        """The reasons sent to the client with a blocked answer: they never quote the answer, whose blocked sentences
        would reach the client inside the refusal (a chat UI shows an error's message); ``reasons`` (logs, metrics'
        exemplars, the Python API) say which words failed."""
        return self.reasons if self.wire_reasons is None else self.wire_reasons

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"

    @property
    def blocked(self) -> bool:
        return self.action in ("block", "fallback")

    def to_dict(self, *, evidence: bool = True, shown: bool = False) -> dict[str, Any]:
        """The verdict as JSON; ``shown``: as a client reads it, with :attr:`shown_reasons` (no words of the answer)."""
        out: dict[str, Any] = {
            "action": self.action,
            "outcome": self.outcome,
            "scores": dataclasses.asdict(self.scores),
            "reasons": list(self.shown_reasons if shown else self.reasons),
            "failed_checks": list(self.failed_checks),
            "timings": dataclasses.asdict(self.timings),
            "error": self.wire_error if shown and self.wire_error is not None else self.error,
        }
        if evidence and self.evaluation is not None and self.evaluation.faithfulness is not None:
            out["sentences"] = [dataclasses.asdict(s) for s in self.evaluation.faithfulness.sentences]
        return out


_SEVERITY = {"pass": 0, "flag": 1, "fallback": 2, "block": 3}
_OUTCOME = {"passed": 0, "error": 1, "failed": 2}


def worst(verdicts: Sequence[Verdict]) -> Verdict:
    """The verdict that stands for a multi-choice answer (one verdict per choice): the strongest action, then the
    worst outcome."""
    return max(verdicts, key=lambda v: (_SEVERITY[v.action], _OUTCOME[v.outcome]))


def sentence_reason(s: Any, *, quote: bool = True) -> str:
    """'sentence 3 "..." is not supported by the retrieved passages (closest: chunk 2, entailment 0.04, ...)';
    ``quote=False``: 'sentence 3 (characters 40-95 of the answer) is not supported by ... (closest: chunk 2,
    entailment 0.04, ...)', with none of the sentence's words (neither the terms no passage holds nor what it
    overstates)."""
    text = s.text if len(s.text) <= 120 else s.text[:117] + "..."
    role = getattr(s, "sentence_role", None)
    contradicted = role == "contradicts" or (role is None and (s.contradiction or 0) > 0.5)
    parts = []
    if s.sentence is not None:
        parts.append(f"{'contradicting' if contradicted else 'closest' if role == 'closest' else 'best'}: "
                     f"chunk {s.sentence.chunk}")
    if s.entailment is not None:
        parts.append(f"entailment {s.entailment:.2f}")
    contradiction = s.sentence_contradiction if role == "contradicts" else s.contradiction
    if contradiction is not None:
        parts.append(f"contradiction {contradiction:.2f}")
    if s.unsupported_terms and quote:
        parts.append("not in any passage: " + ", ".join(s.unsupported_terms))
    if getattr(s, "overstated", ()) and quote:
        parts.append("says more than the passage: " + ", ".join(s.overstated))
    where = "is contradicted by" if contradicted else "is not supported by"
    detail = f" ({'; '.join(parts)})" if parts else ""
    if not quote:
        return f"sentence {s.index + 1} (characters {s.start}-{s.end} of the answer) {where} the retrieved passages{detail}"
    hyp = getattr(s, "hypothesis", None) or s.text
    if hyp != s.text and not hyp.startswith("Q: "):
        # a short answer read with its question, or one claim of a long sentence: say which statement failed
        claim = hyp if len(hyp) <= 160 else hyp[:157] + "..."
        return f'sentence {s.index + 1} "{text}" (read as "{claim}") {where} the retrieved passages{detail}'
    return f'sentence {s.index + 1} "{text}" {where} the retrieved passages{detail}'
