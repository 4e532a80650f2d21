"""OpenTelemetry: each guard verdict becomes a span (a child of the caller's current span) with one
``gen_ai.evaluation.result`` event per score, as the GenAI semantic conventions name them. Needs ``guardrail[otel]``.

>>> from opentelemetry import trace                                                      # doctest: +SKIP
>>> guard = Guard(evaluator, policy, observer=MultiObserver(telemetry, OTelObserver(trace.get_tracer("rag"))))  # doctest: +SKIP

Attributes: ``guardrail.action``, ``guardrail.outcome``, ``guardrail.failed_checks``, ``guardrail.<score>``,
``guardrail.check_duration_s``, ``guardrail.time_to_first_token_s``, ``guardrail.generation_s``,
``guardrail.error_reason``, ``guardrail.unsupported_sentences`` (a count). Events: ``gen_ai.evaluation.result`` with
``gen_ai.evaluation.name`` (faithfulness, retrieval_relevance, response_relevance), ``gen_ai.evaluation.score.value``
and ``gen_ai.evaluation.score.label`` (``pass``/``fail``). No prompt, answer or reason text is recorded unless
``record_text=True`` (then ``guardrail.reasons`` and ``gen_ai.evaluation.explanation``): answers often hold personal
data, and the reasons quote the answer.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from guardrail.errors import MissingDependencyError
from guardrail.verdict import Verdict

try:
    from opentelemetry import trace
    from opentelemetry.trace import Status, StatusCode
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("OpenTelemetry spans need: pip install 'rag-guardrail[otel]'") from exc

SCORES = ("faithfulness", "retrieval_relevance", "response_relevance")


class OTelObserver:
    """A guard observer (``Guard(observer=...)``) that writes spans; combine it with ``Telemetry`` through
    :class:`guardrail.guard.MultiObserver`."""

    def __init__(self, tracer: Any = None, *, record_text: bool = False, span_name: str = "guardrail check") -> None:
        self.tracer = tracer if tracer is not None else trace.get_tracer("guardrail")
        self.record_text = record_text
        self.span_name = span_name

    @contextmanager
    def track(self) -> Iterator[None]:
        yield

    def observe(self, verdict: Verdict) -> None:
        end = time.time_ns()
        start = end - int(verdict.timings.check * 1e9)
        attributes: dict[str, Any] = {
            "guardrail.action": verdict.action,
            "guardrail.outcome": verdict.outcome,
            "guardrail.failed_checks": list(verdict.failed_checks),
            "guardrail.check_duration_s": verdict.timings.check,
        }
        for name in SCORES:
            value = getattr(verdict.scores, name)
            if value is not None:
                attributes[f"guardrail.{name}"] = value
        if verdict.timings.time_to_first_token is not None:
            attributes["guardrail.time_to_first_token_s"] = verdict.timings.time_to_first_token
        if verdict.timings.generation is not None:
            attributes["guardrail.generation_s"] = verdict.timings.generation
        if verdict.error_reason:
            attributes["guardrail.error_reason"] = verdict.error_reason
        faith = verdict.evaluation.faithfulness if verdict.evaluation is not None else None
        if faith is not None:
            attributes["guardrail.unsupported_sentences"] = len(faith.unsupported)
        if self.record_text:
            attributes["guardrail.reasons"] = list(verdict.reasons)
            attributes["guardrail.response"] = verdict.response
        span = self.tracer.start_span(self.span_name, start_time=start, attributes=attributes)
        for name in SCORES:
            value = getattr(verdict.scores, name)
            if value is None:
                continue
            event: dict[str, Any] = {
                "gen_ai.evaluation.name": name,
                "gen_ai.evaluation.score.value": value,
                "gen_ai.evaluation.score.label": "fail" if name in verdict.failed_checks else "pass",
            }
            if self.record_text and name in verdict.failed_checks:
                event["gen_ai.evaluation.explanation"] = "; ".join(verdict.reasons)
            span.add_event("gen_ai.evaluation.result", event, timestamp=end)
        if verdict.outcome == "error":
            span.set_status(Status(StatusCode.ERROR, f"not checked: {verdict.error_reason or 'error'}"))
        span.end(end_time=end)

    def error(self, reason: str) -> None:
        span = trace.get_current_span()
        if span.is_recording():
            span.add_event("guardrail.check_error", {"guardrail.error_reason": reason})
