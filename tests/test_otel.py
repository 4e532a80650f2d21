"""OpenTelemetry spans for guard verdicts, checked with the SDK's in-memory exporter (no global provider)."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from prometheus_client import CollectorRegistry

from guardrail.checks.evaluator import Evaluator
from guardrail.guard import Guard, MultiObserver
from guardrail.otel import OTelObserver
from guardrail.policy import Policy
from guardrail.scorers.nli import NLIScorer
from guardrail.telemetry import Telemetry

CTX = ["Items can be returned within 30 days of delivery."]
ANSWER = "Items can be returned within 30 days. Shipping to Mars is free."


@pytest.fixture()
def traced() -> tuple[InMemorySpanExporter, object]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter, provider.get_tracer("test")


@pytest.mark.parametrize("record_text", [False, True])
def test_each_check_is_a_child_span_with_evaluation_events(tiny_nli: Path, traced: tuple, record_text: bool) -> None:
    exporter, tracer = traced
    telemetry = Telemetry(CollectorRegistry(), route="r", model="m")
    observer = MultiObserver(telemetry, OTelObserver(tracer, record_text=record_text))
    guard = Guard(Evaluator(nli=NLIScorer(tiny_nli)), Policy(action="flag", faithfulness=1.0), observer=observer)
    with tracer.start_as_current_span("rag request") as parent:  # type: ignore[attr-defined]
        verdict = guard.check("How do returns work?", CTX, ANSWER, time_to_first_token=0.1, generation=0.4)
    spans = {s.name: s for s in exporter.get_finished_spans()}
    span = spans["guardrail check"]
    assert span.parent is not None and span.parent.span_id == parent.get_span_context().span_id
    attrs = dict(span.attributes)
    assert attrs["guardrail.action"] == "flag" and attrs["guardrail.outcome"] == "failed"
    assert list(attrs["guardrail.failed_checks"]) == ["faithfulness"]
    assert attrs["guardrail.faithfulness"] == pytest.approx(verdict.scores.faithfulness)
    assert attrs["guardrail.time_to_first_token_s"] == 0.1 and attrs["guardrail.generation_s"] == 0.4
    assert span.end_time - span.start_time == pytest.approx(verdict.timings.check * 1e9, rel=0.01, abs=1e6)
    events = {e.attributes["gen_ai.evaluation.name"]: dict(e.attributes) for e in span.events
              if e.name == "gen_ai.evaluation.result"}
    assert events["faithfulness"]["gen_ai.evaluation.score.label"] == "fail"
    assert events["retrieval_relevance"]["gen_ai.evaluation.score.label"] == "pass"
    text_attrs = [k for k in attrs if k in ("guardrail.reasons", "guardrail.response")]
    text_attrs += [k for e in events.values() for k in e if k == "gen_ai.evaluation.explanation"]
    if record_text:
        assert "Mars" in attrs["guardrail.response"] and "gen_ai.evaluation.explanation" in events["faithfulness"]
    else:
        assert not text_attrs  # no answer text unless asked for
        assert all("Mars" not in str(v) for v in attrs.values())
    # the Prometheus side of the MultiObserver saw the same verdict
    assert telemetry.registry.get_sample_value(
        "guardrail_verdicts_total", {"route": "r", "model": "m", "action": "flag", "outcome": "failed"}) == 1


def test_unchecked_answers_mark_the_span_as_error(tiny_nli: Path, traced: tuple) -> None:
    exporter, tracer = traced
    guard = Guard(Evaluator(nli=NLIScorer(tiny_nli)), Policy(action="block"), observer=OTelObserver(tracer))
    verdict = guard.check("q", CTX, "Возврат возможен в течение 90 дней.")
    span = exporter.get_finished_spans()[-1]
    assert verdict.outcome == "error" and span.status.status_code.name == "ERROR"
    assert span.attributes["guardrail.error_reason"] == "uncheckable"
