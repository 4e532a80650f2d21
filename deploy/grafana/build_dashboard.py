"""Generate deploy/grafana/dashboards/guardrail.json (run after changing panels: python deploy/grafana/build_dashboard.py)."""

from __future__ import annotations

import json
from pathlib import Path

SEL = 'route=~"$route", model=~"$model", instance=~"$instance"'
DS = {"type": "prometheus", "uid": "${datasource}"}


def target(expr: str, legend: str = "", ref: str = "A", fmt: str | None = None) -> dict[str, object]:
    t: dict[str, object] = {"datasource": DS, "expr": expr, "legendFormat": legend, "refId": ref}
    if fmt:
        t["format"] = fmt
    return t


def panel(pid: int, title: str, kind: str, targets: list[dict[str, object]], unit: str, x: int, y: int,
          w: int = 12, h: int = 8, description: str = "", **extra: object) -> dict[str, object]:
    p: dict[str, object] = {
        "id": pid, "title": title, "type": kind, "datasource": DS, "description": description,
        "gridPos": {"x": x, "y": y, "w": w, "h": h}, "targets": targets,
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
    }
    p.update(extra)
    return p


def quantiles(metric: str, by: str = "") -> list[dict[str, object]]:
    extra = f", {by}" if by else ""
    legend = f"{{{{{by}}}}} " if by else ""
    return [target(f"histogram_quantile({q}, sum by (le{extra}) (rate({metric}_bucket{{{SEL}}}[$__rate_interval])))",
                   f"{legend}p{int(q * 100)}", ref) for q, ref in ((0.5, "A"), (0.95, "B"), (0.99, "C"))]


def heatmap(pid: int, title: str, metric: str, x: int, y: int) -> dict[str, object]:
    return panel(pid, title, "heatmap", [target(f"sum by (le) (increase({metric}_bucket{{{SEL}}}[$__rate_interval]))",
                                                "{{le}}", fmt="heatmap")],
                 "short", x, y, w=8, description=f"Distribution of {metric} (0..1) over time.",
                 options={"calculate": False, "yAxis": {"unit": "percentunit"}, "cellGap": 1})


def build() -> dict[str, object]:
    panels = [
        panel(1, "Verdicts per second by action", "timeseries",
              [target(f"sum by (action) (rate(guardrail_verdicts_total{{{SEL}}}[$__rate_interval]))", "{{action}}")],
              "reqps", 0, 0, description="pass / flag / block / fallback decisions of the guard."),
        panel(2, "Block rate", "timeseries",
              [target(f'sum(rate(guardrail_verdicts_total{{{SEL}, action=~"block|fallback"}}[$__rate_interval])) '
                      f"/ sum(rate(guardrail_verdicts_total{{{SEL}}}[$__rate_interval]))", "blocked or replaced")],
              "percentunit", 12, 0, description="Share of answers blocked or replaced by the fallback."),
        panel(3, "Time to first token (p50 / p95 / p99)", "timeseries",
              quantiles("guardrail_time_to_first_token_seconds"), "s", 0, 8),
        panel(4, "Total generation time (p50 / p95 / p99)", "timeseries",
              quantiles("guardrail_generation_duration_seconds"), "s", 12, 8),
        panel(5, "Check latency p95 by check", "timeseries",
              [target(f"histogram_quantile(0.95, sum by (le, check) (rate(guardrail_check_duration_seconds_bucket{{{SEL}}}[$__rate_interval])))",
                      "{{check}}")], "s", 0, 16, description="The guard's own cost, per check ('total' is the whole check)."),
        panel(6, "In-flight checks", "timeseries",
              [target(f"sum(guardrail_checks_in_flight{{{SEL}}})", "in flight")], "short", 12, 16),
        heatmap(7, "Faithfulness score", "guardrail_faithfulness_score", 0, 24),
        heatmap(8, "Retrieval relevance (top chunk)", "guardrail_retrieval_relevance_score", 8, 24),
        heatmap(9, "Response relevance", "guardrail_response_relevance_score", 16, 24),
        panel(10, "Mean scores (moving, 5m)", "timeseries", [
            target(f"sum(rate(guardrail_faithfulness_score_sum{{{SEL}}}[5m])) / sum(rate(guardrail_faithfulness_score_count{{{SEL}}}[5m]))", "faithfulness", "A"),
            target(f"sum(rate(guardrail_retrieval_relevance_score_sum{{{SEL}}}[5m])) / sum(rate(guardrail_retrieval_relevance_score_count{{{SEL}}}[5m]))", "retrieval relevance", "B"),
        ], "percentunit", 0, 32, description="Drift shows here first: compare with the same hours of past days."),
        panel(11, "Errors per second", "timeseries", [
            target(f"sum by (reason) (rate(guardrail_check_errors_total{{{SEL}}}[$__rate_interval]))", "scoring: {{reason}}", "A"),
            target(f"sum by (reason) (rate(guardrail_upstream_errors_total{{{SEL}}}[$__rate_interval]))", "upstream: {{reason}}", "B"),
        ], "reqps", 12, 32, description="Answers not checked (unreadable, uncheckable, timeout, overload, input, "
                                         "scorer, exception) and gateway upstream errors."),
        panel(12, "Shadow LLM-judge scores (mean, 15m)", "timeseries", [
            target(f"sum by (judge) (rate(guardrail_judge_score_sum{{{SEL}}}[15m])) / "
                   f"sum by (judge) (rate(guardrail_judge_score_count{{{SEL}}}[15m]))", "{{judge}}", "A"),
        ], "percentunit", 0, 40, description="Sampled answers judged by an LLM in the background (--judge-model): "
                                             "compare with the inline faithfulness mean."),
        panel(13, "Shadow judging: judged and dropped per second", "timeseries", [
            target(f"sum by (judge) (rate(guardrail_judge_score_count{{{SEL}}}[$__rate_interval]))", "judged: {{judge}}", "A"),
            target(f"sum(rate(guardrail_judge_dropped_total{{{SEL}}}[$__rate_interval]))", "dropped (queue full)", "B"),
        ], "reqps", 12, 40),
        panel(14, "Remote scorer requests (p50 / p95 / p99) by model", "timeseries",
              quantiles("guardrail_scorer_request_duration_seconds", by="scorer"), "s", 0, 48, w=24,
              description="Gateways with --scorer-url: each HTTP attempt to the shared scorer pool (OIP v2), by scorer "
                          "model (nli, embedding). Failed attempts: guardrail_scorer_errors_total; answers that could "
                          "not be scored show as 'scoring: scorer' under Errors per second."),
    ]

    def var(name: str, label: str) -> dict[str, object]:
        return {"name": name, "label": label, "type": "query", "datasource": DS, "refresh": 2, "includeAll": True,
                "multi": True, "allValue": ".*", "current": {"text": "All", "value": "$__all"},
                "query": {"query": f"label_values(guardrail_verdicts_total, {name})", "refId": f"{name}-values"},
                "definition": f"label_values(guardrail_verdicts_total, {name})"}

    return {
        "uid": "guardrail-overview", "title": "guardrail: RAG answer guard", "tags": ["guardrail", "llm", "rag"],
        "schemaVersion": 39, "version": 1, "editable": True, "refresh": "30s", "time": {"from": "now-6h", "to": "now"},
        "templating": {"list": [
            {"name": "datasource", "label": "Prometheus", "type": "datasource", "query": "prometheus", "current": {}},
            var("route", "Route"), var("model", "Model"), var("instance", "Instance"),
        ]},
        "panels": panels,
    }


if __name__ == "__main__":
    out = Path(__file__).resolve().parent / "dashboards" / "guardrail.json"
    out.write_text(json.dumps(build(), indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")
