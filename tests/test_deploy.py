"""deploy/ against a real Prometheus: every dashboard and rule expression evaluates and returns data.

Needs Debian's ``prometheus`` package (``apt-get install prometheus``; ``.ci/run`` installs it and sets
GUARDRAIL_REQUIRE_PROMETHEUS=1, which turns a missing binary into a failure instead of a skip).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
import yaml
from llm_server import free_port, serve
from prometheus_client import CollectorRegistry

from guardrail.checks.evaluator import Evaluator
from guardrail.guard import Guard
from guardrail.policy import Policy
from guardrail.remote.client import RemoteNLIScorer
from guardrail.remote.models import NLIModel
from guardrail.remote.server import create_scorer_app
from guardrail.scorers.nli import NLIScorer
from guardrail.server import create_gateway
from guardrail.telemetry import Telemetry

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"
DASHBOARD = json.loads((DEPLOY / "grafana" / "dashboards" / "guardrail.json").read_text())
RULES = yaml.safe_load((DEPLOY / "prometheus" / "guardrail.rules.yml").read_text())
CTX = ["Items can be returned within 30 days of delivery. Refunds are issued to the original payment method."]
MSGS = [{"role": "user", "content": "How do returns work?"}]


def binary(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        message = f"{name} not found: apt-get install prometheus (Debian) to run the deploy tests"
        if os.environ.get("GUARDRAIL_REQUIRE_PROMETHEUS"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def dashboard_exprs() -> list[str]:
    return [t["expr"] for p in DASHBOARD["panels"] for t in p["targets"]]


def substitute(expr: str) -> str:
    expr = expr.replace("$__rate_interval", "1m").replace("$__interval", "15s").replace("$__range", "5m")
    return re.sub(r"\$(route|model|instance)\b", ".*", expr)


def split_top(expr: str, ops: tuple[str, ...]) -> list[str]:
    """Split a PromQL expression at top-level operators (outside (), {}, [] and strings)."""
    parts, depth, quote, start, i = [], 0, "", 0, 0
    while i < len(expr):
        c = expr[i]
        if quote:
            quote = "" if c == quote else quote
        elif c in "\"'":
            quote = c
        elif c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
        elif depth == 0:
            for op in ops:
                if expr.startswith(op, i):
                    parts.append(expr[start:i])
                    start = i = i + len(op)
                    break
            else:
                i += 1
            continue
        i += 1
    parts.append(expr[start:])
    return [p.strip() for p in parts]


def alert_signals(expr: str) -> list[str]:
    """The left side of each comparison of an alert: what must have data for the alert to be meaningful."""
    signals = []
    for part in split_top(expr, (" and ", " or ", " unless ")):
        signals.append(split_top(part, (">=", "<=", "==", "!=", ">", "<"))[0])
    return signals


def exported_names() -> set[str]:
    names = set()
    for family in Telemetry(CollectorRegistry()).registry.collect():
        names.add(family.name)
        if family.type == "counter":
            names.add(family.name + "_total")
    return names


# --------------------------------------------------------------------------- static checks
def test_every_queried_metric_is_exported() -> None:
    exprs = dashboard_exprs() + [r["expr"] for g in RULES["groups"] for r in g["rules"]]
    exported = exported_names()
    used = {re.sub(r"_(bucket|sum|count)$", "", m) for e in exprs for m in re.findall(r"\bguardrail_[a-z_]+", e)}
    assert used and used <= exported, used - exported


def test_dashboard_structure() -> None:
    variables = {v["name"]: v for v in DASHBOARD["templating"]["list"]}
    assert {"datasource", "route", "model", "instance"} <= set(variables)
    for p in DASHBOARD["panels"]:
        assert p["datasource"]["uid"] == "${datasource}", p["title"]
        assert p["targets"] and all(t["expr"].strip() for t in p["targets"]), p["title"]
        assert p["fieldConfig"]["defaults"].get("unit"), p["title"]
        for var in re.findall(r"\$(\w+)", " ".join(t["expr"] for t in p["targets"])):
            assert var in variables or var.startswith("__"), (p["title"], var)
    titles = " ".join(p["title"] for p in DASHBOARD["panels"]).lower()
    for needed in ("verdicts", "block rate", "time to first token", "generation", "check latency", "faithfulness",
                   "retrieval", "response", "errors", "in-flight"):
        assert needed in titles, needed
    assert {p["type"] for p in DASHBOARD["panels"]} >= {"timeseries", "heatmap"}


def test_promtool_accepts_config_and_rules() -> None:
    promtool = binary("promtool")
    for args in (["check", "config", str(DEPLOY / "prometheus" / "prometheus.yml")],
                 ["check", "rules", str(DEPLOY / "prometheus" / "guardrail.rules.yml")]):
        proc = subprocess.run([promtool, *args], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_deployment_files_are_consistent() -> None:
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    assert {"guardrail", "prometheus", "grafana"} <= set(compose["services"])
    for service in compose["services"].values():
        for volume in service.get("volumes", []):
            assert (DEPLOY / volume.split(":")[0]).exists(), volume
    assert (DEPLOY / compose["services"]["guardrail"]["build"]["context"] / compose["services"]["guardrail"]["build"]["dockerfile"]).exists()
    kinds = {yaml.safe_load(p.read_text())["kind"] for p in (DEPLOY / "k8s").glob("*.yaml")}
    assert kinds == {"Deployment", "Service", "ServiceMonitor", "HorizontalPodAutoscaler", "RayService"}
    hpa = yaml.safe_load((DEPLOY / "k8s" / "hpa.yaml").read_text())
    assert hpa["spec"]["metrics"][0]["pods"]["metric"]["name"] in exported_names()


def gateway_args(manifest: str) -> list[str]:
    """The command line a gateway Deployment runs: the image's ENTRYPOINT, then the manifest's args."""
    line = re.search(r"^ENTRYPOINT (.+)$", (DEPLOY / "Dockerfile").read_text(), re.M)
    assert line is not None
    entrypoint = json.loads(line.group(1))
    deployment = yaml.safe_load((DEPLOY / "k8s" / manifest).read_text())
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert entrypoint[0] == "guardrail" and "command" not in container
    return [*entrypoint[1:], *container["args"]]


def test_gateway_manifests_run_real_commands() -> None:
    from guardrail.cli.main import build_parser

    for manifest in ("deployment.yaml", "deployment-scorer-pool.yaml"):
        args = build_parser().parse_args(gateway_args(manifest))  # every flag exists (else argparse exits)
        assert args.command == "serve" and args.upstream
    plain, pooled = (yaml.safe_load((DEPLOY / "k8s" / m).read_text())
                     for m in ("deployment.yaml", "deployment-scorer-pool.yaml"))
    # the same gateway (name, labels, probes, volumes: the Service, HPA and ServiceMonitor apply as they are)...
    for doc in (plain, pooled):
        doc["spec"]["template"]["spec"]["containers"][0].pop("resources")
    args = [d["spec"]["template"]["spec"]["containers"][0].pop("args") for d in (plain, pooled)]
    assert plain == pooled
    # ...with its forward passes on the scorer pool
    assert args[1][: len(args[0])] == args[0] and args[1][len(args[0]):][0] == "--scorer-url"


def test_ray_service_is_a_scorer_pool_the_gateway_can_reach() -> None:
    service = yaml.safe_load((DEPLOY / "k8s" / "ray-scorer.yaml").read_text())
    assert service["apiVersion"] == "ray.io/v1" and service["kind"] == "RayService"
    serve_config = yaml.safe_load(service["spec"]["serveConfigV2"])
    port = serve_config["http_options"]["port"]
    [app] = serve_config["applications"]
    # KubeRay serves the application on the Service <name>-serve-svc: the URL the gateway variant calls
    url = gateway_args("deployment-scorer-pool.yaml")
    assert url[url.index("--scorer-url") + 1] == f"http://{service['metadata']['name']}-serve-svc:{port}"
    assert app["route_prefix"] == "/"
    for name in ("nli", "embedding"):
        opts = app["args"][name]
        assert 1 <= opts["min_replicas"] <= opts["max_replicas"] and opts["num_cpus"] > 0
    cluster = service["spec"]["rayClusterConfig"]
    assert cluster["rayVersion"] == "2.60.0"
    ray_image = (DEPLOY / "Dockerfile.ray").read_text()
    assert f"rayproject/ray:{cluster['rayVersion']}-" in ray_image and "[ray]" in ray_image
    groups = [cluster["headGroupSpec"], *cluster["workerGroupSpecs"]]
    for group in groups:
        container = group["template"]["spec"]["containers"][0]
        assert container["image"] == "guardrail-ray:latest"
        assert container["resources"]["requests"] == container["resources"]["limits"]
    for group in cluster["workerGroupSpecs"]:
        assert group["minReplicas"] <= group["replicas"] <= group["maxReplicas"]
    # the largest replica fits in a worker pod
    cpus = max(float(g["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"])
               for g in cluster["workerGroupSpecs"])
    assert max(app["args"][m]["num_cpus"] for m in ("nli", "embedding")) <= cpus
    module, _, attr = app["import_path"].partition(":")
    assert importlib.util.find_spec(module) is not None, module


def test_ray_service_serve_config_passes_ray_serves_own_schema() -> None:
    schema = pytest.importorskip("ray.serve.schema", reason="needs Ray Serve (pip install 'rag-guardrail[ray]')")
    service = yaml.safe_load((DEPLOY / "k8s" / "ray-scorer.yaml").read_text())
    serve_config = yaml.safe_load(service["spec"]["serveConfigV2"])
    config = schema.ServeDeploySchema.parse_obj(serve_config)
    assert [a.name for a in config.applications] == ["guardrail-scorer"]
    # the import path builds the application from the args (what Serve does on the cluster; no Ray needed to bind)
    [app] = serve_config["applications"]
    module, _, attr = app["import_path"].partition(":")
    application = getattr(importlib.import_module(module), attr)(app["args"])
    assert type(application).__name__ == "Application"


# --------------------------------------------------------------------------- live Prometheus
@pytest.fixture(scope="module")
def prometheus(tiny_nli: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    prom = binary("prometheus")
    tmp = tmp_path_factory.mktemp("prometheus")
    evaluator = Evaluator(nli=NLIScorer(tiny_nli))
    with ExitStack() as stack:
        upstream = stack.enter_context(serve()) + "/v1"
        # a shared scorer pool (the app of `guardrail serve-scorer`) for one route, so the scorer panel has data
        scorer_pool = stack.enter_context(serve(create_scorer_app([NLIModel(NLIScorer(tiny_nli))])))
        gateways = {}
        for route, action, threshold in (("answers-pass", "block", 0.0), ("answers-flag", "flag", 1.0),
                                         ("answers-block", "block", 1.0)):
            telemetry = Telemetry(CollectorRegistry(), route=route, model="test-llm")
            # the pass route also runs the response-relevance check (off by default), so its panel has data
            policy = Policy(action=action, faithfulness=threshold, retrieval_relevance=0.0,  # type: ignore[arg-type]
                            response_relevance=0.0 if route == "answers-pass" else None)
            # a stand-in for the shadow LLM judge (tested for real in test_judge.py): its metrics feed the judge panels
            tap = None
            if route == "answers-pass":
                def tap(q: str, c: object, a: str, t: Telemetry = telemetry) -> None:
                    t.judge_score("context_adherence", 0.9)
                    t.judge_drop()
            route_evaluator = evaluator
            if route == "answers-pass":  # its forward passes on the scorer pool, each request timed in telemetry
                route_evaluator = Evaluator(nli=RemoteNLIScorer(scorer_pool, model=tiny_nli, observer=telemetry))
            guard = Guard(route_evaluator, policy, observer=telemetry, tap=tap)
            gateways[route] = stack.enter_context(serve(create_gateway(upstream, guard, telemetry), lifespan="on"))
        # the deploy rules, evaluated every second instead of every 30 s
        rules = (DEPLOY / "prometheus" / "guardrail.rules.yml").read_text().replace("interval: 30s", "interval: 1s")
        (tmp / "rules.yml").write_text(rules)
        targets = [url.removeprefix("http://") for url in gateways.values()]
        (tmp / "prometheus.yml").write_text(yaml.safe_dump({
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(tmp / "rules.yml")],
            "scrape_configs": [{"job_name": "guardrail", "metrics_path": "/metrics/",
                                "static_configs": [{"targets": targets}]}],
        }))
        port = free_port()
        proc = subprocess.Popen([prom, f"--config.file={tmp / 'prometheus.yml'}", f"--storage.tsdb.path={tmp / 'data'}",
                                 f"--web.listen-address=127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        stack.callback(proc.wait, 20)
        stack.callback(proc.terminate)
        url = f"http://127.0.0.1:{port}"
        wait_for(lambda: len(query(url, 'up{job="guardrail"} == 1')) == 3, 60, "Prometheus to scrape the three gateways")

        # traffic after the first scrapes, so rates are non-zero: pass, flag, block, a scoring error, an upstream error
        for base in gateways.values():
            for i in range(3):
                r = httpx.post(base + "/v1/chat/completions", timeout=30,
                               json={"model": "m", "messages": MSGS, "contexts": CTX, "answer": f"Returns take {i + 30} days.",
                                     "stream": i == 2})
                assert r.status_code in (200, 400)
        block = gateways["answers-block"]
        httpx.post(block + "/v1/chat/completions", json={"model": "m", "messages": MSGS, "contexts": ["x" * 1_000_001]}, timeout=60)
        httpx.post(block + "/v1/chat/completions", json={"model": "m", "messages": MSGS, "contexts": CTX, "fail": 500}, timeout=30)
        wait_for(lambda: bool(query(url, "guardrail:check_duration_seconds:p99_5m"))
                 and bool(query(url, "guardrail:block_ratio:rate5m")), 60, "the recording rules")
        time.sleep(2)  # a few more scrapes after the last request
        yield url


def query(url: str, expr: str) -> list[dict[str, object]]:
    r = httpx.get(url + "/api/v1/query", params={"query": expr}, timeout=10)
    body = r.json()
    assert body["status"] == "success", (expr, body)
    return body["data"]["result"]  # type: ignore[no-any-return]


def wait_for(condition, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if condition():
                return
        except (httpx.HTTPError, AssertionError, ValueError):  # ValueError: a non-JSON "starting up" page
            pass
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def test_every_dashboard_query_returns_data(prometheus: str) -> None:
    for expr in dashboard_exprs():
        assert query(prometheus, substitute(expr)), expr


def test_dashboard_variables_resolve(prometheus: str) -> None:
    for var in DASHBOARD["templating"]["list"]:
        if var["type"] != "query":
            continue
        metric, label = re.fullmatch(r"label_values\((\w+), (\w+)\)", var["query"]["query"]).groups()  # type: ignore[union-attr]
        r = httpx.get(prometheus + f"/api/v1/label/{label}/values", params={"match[]": metric}).json()
        assert r["status"] == "success" and r["data"], var["name"]
    routes = httpx.get(prometheus + "/api/v1/label/route/values").json()["data"]
    assert {"answers-pass", "answers-flag", "answers-block"} <= set(routes)


def test_every_rule_evaluates_and_its_signal_has_data(prometheus: str) -> None:
    for group in RULES["groups"]:
        for rule in group["rules"]:
            query(prometheus, rule["expr"])  # evaluates without error
            if "record" in rule:
                assert query(prometheus, rule["record"]), rule["record"]
            else:
                for signal in alert_signals(rule["expr"]):
                    assert query(prometheus, signal), (rule["alert"], signal)
    actions = {s["metric"]["action"] for s in query(prometheus, "guardrail:verdicts:rate5m")}  # type: ignore[index]
    assert {"pass", "flag", "block"} <= actions
