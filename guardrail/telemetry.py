"""Prometheus telemetry. Knows prometheus_client only; reads verdicts by attribute.

Metric names (``guardrail_`` prefix, base units, counters end in ``_total``):

| metric | type | labels | vLLM / OpenTelemetry GenAI counterpart |
|---|---|---|---|
| guardrail_time_to_first_token_seconds | histogram | route, model | vllm:time_to_first_token_seconds / gen_ai.server.time_to_first_token |
| guardrail_generation_duration_seconds | histogram | route, model | vllm:e2e_request_latency_seconds / gen_ai.server.request.duration |
| guardrail_check_duration_seconds | histogram | route, model, check | (none: the guard's own cost) |
| guardrail_faithfulness_score | histogram | route, model | |
| guardrail_retrieval_relevance_score | histogram | route, model | |
| guardrail_response_relevance_score | histogram | route, model | |
| guardrail_verdicts_total | counter | route, model, action, outcome | |
| guardrail_check_errors_total | counter | route, model, reason | |
| guardrail_checks_in_flight | gauge | route, model | |
| guardrail_upstream_errors_total | counter | route, model, reason | (gateway: connect, timeout, status, stream; retried: a connection failure sent again) |
| guardrail_scorer_request_duration_seconds | histogram | route, model, scorer | (remote scorer, ``--scorer-url``: each HTTP attempt) |
| guardrail_scorer_errors_total | counter | route, model, scorer, reason | (remote scorer attempts that failed: connect, timeout, status, protocol) |

Labels are bounded: ``route`` and ``model`` come from configuration, ``check``/``action``/
``outcome``/``reason``/``scorer`` from fixed sets; never prompt text, ids or raw paths.

Nothing is registered on prometheus_client's global registry unless ``registry=REGISTRY`` is passed.
Multi-process servers (gunicorn, uvicorn --workers): set ``PROMETHEUS_MULTIPROC_DIR`` before the
workers start and serve ``/metrics`` with :func:`metrics_app` ``(multiprocess=True)``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, cast

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

#: 0..1 scores, finer around the usual thresholds (0.2 relevance, 0.5 faithfulness)
SCORE_BUCKETS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)
#: generation latencies (as vLLM's TTFT buckets, extended for long answers)
GENERATION_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0)
#: the guard's own latency
CHECK_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1.0, 2.5)
#: bounded error reasons
ERROR_REASONS = ("exception", "timeout", "input", "uncheckable", "unreadable", "overload", "scorer")
UPSTREAM_REASONS = ("connect", "timeout", "status", "stream", "retried")
SCORER_REASONS = ("connect", "timeout", "status", "protocol")
#: the models of a remote scorer (guardrail.remote.protocol)
SCORERS = ("nli", "embedding")


class Telemetry:
    """Records verdicts into Prometheus metrics on ``registry`` (a fresh one by default).

    >>> from prometheus_client import CollectorRegistry
    >>> t = Telemetry(CollectorRegistry(), route="chat", model="llama-3-8b")
    """

    def __init__(self, registry: CollectorRegistry | None = None, *, route: str = "default", model: str = "default") -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.route = route
        self.model = model
        labels = ("route", "model")
        r = self.registry
        self.ttft = Histogram("guardrail_time_to_first_token_seconds", "Time to first non-empty token of the generation.",
                              labels, buckets=GENERATION_BUCKETS, registry=r)
        self.generation = Histogram("guardrail_generation_duration_seconds", "Total generation time, first call to last token.",
                                    labels, buckets=GENERATION_BUCKETS, registry=r)
        self.check_duration = Histogram("guardrail_check_duration_seconds", "Time spent scoring, per check ('total': all).",
                                        (*labels, "check"), buckets=CHECK_BUCKETS, registry=r)
        self.faithfulness = Histogram("guardrail_faithfulness_score", "Faithfulness score of guarded answers.",
                                      labels, buckets=SCORE_BUCKETS, registry=r)
        self.retrieval = Histogram("guardrail_retrieval_relevance_score", "Top-chunk retrieval relevance of guarded answers.",
                                   labels, buckets=SCORE_BUCKETS, registry=r)
        self.response = Histogram("guardrail_response_relevance_score", "Response relevance of guarded answers.",
                                  labels, buckets=SCORE_BUCKETS, registry=r)
        self.verdicts = Counter("guardrail_verdicts", "Verdicts by applied action and outcome.",
                                (*labels, "action", "outcome"), registry=r)
        self.errors = Counter("guardrail_check_errors", "Answers not checked, by reason (exception, timeout, input, uncheckable, unreadable, overload, scorer).",
                              (*labels, "reason"), registry=r)
        self.judge_scores = Histogram("guardrail_judge_score", "Shadow LLM-judge scores of sampled answers.",
                                      (*labels, "judge"), buckets=SCORE_BUCKETS, registry=r)
        self.judge_dropped = Counter("guardrail_judge_dropped", "Sampled answers dropped: the shadow-judge queue was full.",
                                     labels, registry=r)
        self.judge_errors = Counter("guardrail_judge_errors", "Shadow-judge calls that failed, by judge.",
                                    (*labels, "judge"), registry=r)
        self.upstream_errors = Counter("guardrail_upstream_errors", "Gateway upstream failures (connect, timeout, status, stream; retried: an attempt "
                                       "that failed and was sent again).",
                                       (*labels, "reason"), registry=r)
        self.in_flight = Gauge("guardrail_checks_in_flight", "Checks running now.", labels, registry=r,
                               multiprocess_mode="livesum")
        self.scorer_duration = Histogram("guardrail_scorer_request_duration_seconds",
                                         "Remote scorer (--scorer-url) HTTP requests, each attempt, by scorer model.",
                                         (*labels, "scorer"), buckets=CHECK_BUCKETS, registry=r)
        self.scorer_errors = Counter("guardrail_scorer_errors", "Remote scorer attempts that failed (connect, timeout, "
                                     "status, protocol), by scorer model.", (*labels, "scorer", "reason"), registry=r)

    def _labels(self, route: str | None, model: str | None) -> tuple[str, str]:
        return (route or self.route, model or self.model)

    @contextmanager
    def track(self, route: str | None = None, model: str | None = None) -> Iterator[None]:
        gauge = self.in_flight.labels(*self._labels(route, model))
        gauge.inc()
        try:
            yield
        finally:
            gauge.dec()

    def observe(self, verdict: Any, route: str | None = None, model: str | None = None) -> None:
        """Record one verdict (duck-typed: see guardrail.verdict.Verdict)."""
        lab = self._labels(route, model)
        t = verdict.timings
        if t.time_to_first_token is not None:
            self.ttft.labels(*lab).observe(t.time_to_first_token)
        if t.generation is not None:
            self.generation.labels(*lab).observe(t.generation)
        self.check_duration.labels(*lab, "total").observe(t.check)
        ev = verdict.evaluation
        if ev is not None:
            for name in ("faithfulness", "retrieval_relevance", "response_relevance"):
                spent = getattr(ev.timings, name)
                if spent:
                    self.check_duration.labels(*lab, name).observe(spent)
        s = verdict.scores
        for hist, value in ((self.faithfulness, s.faithfulness), (self.retrieval, s.retrieval_relevance),
                            (self.response, s.response_relevance)):
            if value is not None:
                hist.labels(*lab).observe(value)
        self.verdicts.labels(*lab, verdict.action, verdict.outcome).inc()

    def observe_generation(self, time_to_first_token: float | None, generation: float | None,
                           route: str | None = None, model: str | None = None) -> None:
        """Record a generation's timings alone (e.g. from a LangChain callback, without a verdict)."""
        lab = self._labels(route, model)
        if time_to_first_token is not None:
            self.ttft.labels(*lab).observe(time_to_first_token)
        if generation is not None:
            self.generation.labels(*lab).observe(generation)

    def judge_score(self, judge: str, score: float) -> None:
        self.judge_scores.labels(self.route, self.model, judge).observe(score)

    def judge_drop(self) -> None:
        self.judge_dropped.labels(self.route, self.model).inc()

    def judge_error(self, judge: str) -> None:
        self.judge_errors.labels(self.route, self.model, judge).inc()

    def error(self, reason: str, route: str | None = None, model: str | None = None) -> None:
        self.errors.labels(*self._labels(route, model), reason if reason in ERROR_REASONS else "exception").inc()

    def upstream_error(self, reason: str, route: str | None = None, model: str | None = None) -> None:
        self.upstream_errors.labels(*self._labels(route, model), reason if reason in UPSTREAM_REASONS else "stream").inc()

    def scorer_request(self, scorer: str, seconds: float, error: str | None = None) -> None:
        """One HTTP attempt to a remote scorer (the observer of guardrail.remote.OIPClient): its latency, and its
        failure reason (connect, timeout, status, protocol) when it failed."""
        name = scorer if scorer in SCORERS else "other"
        lab = (self.route, self.model, name)
        self.scorer_duration.labels(*lab).observe(seconds)
        if error is not None:
            self.scorer_errors.labels(*lab, error if error in SCORER_REASONS else "protocol").inc()


def metrics_app(registry: CollectorRegistry | None = None, *, multiprocess: bool = False) -> Callable[..., Any]:
    """An ASGI app serving ``/metrics`` for ``registry``; with ``multiprocess=True`` it aggregates
    every worker's metrics from ``PROMETHEUS_MULTIPROC_DIR`` (prometheus_client multiprocess mode)."""
    from prometheus_client import make_asgi_app

    if multiprocess:
        from prometheus_client import multiprocess as mp

        if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            raise RuntimeError("multiprocess metrics need PROMETHEUS_MULTIPROC_DIR set before the workers start")
        collected = CollectorRegistry()
        # prometheus_client leaves MultiProcessCollector.__init__ unannotated: its signature, as typed here
        collector = cast(Callable[[CollectorRegistry], object], mp.MultiProcessCollector)
        collector(collected)
        return make_asgi_app(registry=collected)
    if registry is None:
        raise ValueError("pass the registry your Telemetry records into (Telemetry.registry)")
    return make_asgi_app(registry=registry)
