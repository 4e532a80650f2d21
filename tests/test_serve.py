"""The gateway's lifecycle: `guardrail serve` as a process, build_app and app_from_env, and a shutdown that drains
flag-mode checks and closes what it opened."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import llm_server
import pytest
from conftest import delay_faithfulness
from prometheus_client import CollectorRegistry

from guardrail.checks.evaluator import Evaluator
from guardrail.errors import ConfigurationError
from guardrail.guard import Guard
from guardrail.policy import Policy
from guardrail.scorers.nli import NLIScorer
from guardrail.server import CONFIG_ENV, Gateway, ServeConfig, app_from_env, build_app
from guardrail.telemetry import Telemetry

CTX = ["Items can be returned within 30 days of delivery."]
MSGS = [{"role": "user", "content": "How do returns work?"}]


def test_guardrail_serve_runs_and_stops_cleanly() -> None:
    port = llm_server.free_port()
    proc = subprocess.Popen([sys.executable, "-m", "guardrail.cli", "serve", "--demo", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        r = httpx.post(url + "/v1/chat/completions", timeout=30,
                       json={"model": "demo-hallucinate", "messages": MSGS})
        assert r.status_code == 400 and r.json()["error"]["type"] == "guardrail_blocked"
        for path in ("/metrics", "/metrics/"):  # both, no redirect
            m = httpx.get(url + path)
            assert m.status_code == 200 and "guardrail_verdicts_total" in m.text, path
        models = httpx.get(url + "/v1/models")  # unguarded /v1 routes go to the upstream
        assert models.status_code == 200 and models.json()["data"]
        ready = httpx.get(url + "/readyz")
        assert ready.status_code == 200 and ready.json() == {"status": "ready", "models": "loaded",
                                                             "upstream": "reachable"}
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    # uvicorn shuts down gracefully, then re-raises the captured SIGTERM (exit status -15 since uvicorn 0.29)
    assert proc.returncode in (0, -signal.SIGTERM) and "Traceback" not in err, err
    # one structured line per guarded request (JSON by default): what was decided, never what was said
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    requests = [rec for rec in lines if rec.get("event") == "request"]
    assert len(requests) == 1, err
    rec = requests[0]
    assert rec["route"] == "/v1/chat/completions" and rec["status"] == 400 and rec["action"] == "block"
    # faithfulness is the mean over the answer's sentences: the demo's faithful first one and the hallucination
    assert rec["outcome"] == "failed" and 0 <= rec["faithfulness"] < 0.75 and rec["check_ms"] > 0
    assert rec["total_ms"] >= rec["check_ms"] and rec["upstream_first_byte_ms"] is not None
    assert rec["level"] == "info" and rec["logger"] == "guardrail.access"
    assert "demo-hallucinate" not in json.dumps(requests)  # nothing of the request or the answer


@pytest.mark.parametrize("argv, expected", [
    (["--port", "99999"], "--port 99999 is out of range: give a whole number from 1 to 65535"),
    (["--judge-rate", "5"], "--judge-rate 5.0 is out of range: give a number from 0 to 1"),
    (["--max-contexts", "-1"], "--max-contexts -1 is out of range"),
    (["--max-response-chars", "0"], "--max-response-chars 0 is out of range"),
    (["--workers", "0"], "--workers 0 is out of range"),
    (["--timeout", "0"], "--timeout 0.0 is out of range"),
    (["--upstream-deadline", "0"], "--upstream-deadline 0.0 is out of range: give a number from 0.1 to 86400"),
])
def test_serve_refuses_bad_options_in_one_line(argv: list[str], expected: str) -> None:
    r = subprocess.run([sys.executable, "-m", "guardrail", "serve", "--demo", *argv], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and expected in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and "guardrail gateway on" not in r.stderr
    assert len([line for line in r.stderr.splitlines() if line.strip()]) == 1, r.stderr


def test_serve_says_when_the_port_is_taken_before_loading_anything() -> None:
    import socket

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        t0 = time.time()
        r = subprocess.run([sys.executable, "-m", "guardrail", "serve", "--demo", "--port", str(port)],
                           capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in r.stderr and "pick another --port" in r.stderr
    assert "Traceback" not in r.stderr and "guardrail gateway on" not in r.stderr
    assert time.time() - t0 < 20  # refused before the models load


def test_readyz_says_not_ready_while_the_upstream_is_down(tiny_nli: Path) -> None:
    evaluator = Evaluator(nli=NLIScorer(tiny_nli), checks=["faithfulness"])
    telemetry = Telemetry(CollectorRegistry(), route="gateway", model="fake")
    guard = Guard(evaluator, Policy(action="block", retrieval_relevance=None), observer=telemetry)
    dead = f"http://127.0.0.1:{llm_server.free_port()}/v1"  # nothing listens there
    with llm_server.serve(Gateway(dead, guard, telemetry).app, lifespan="on") as url:
        r = httpx.get(url + "/readyz", timeout=10)
        assert r.status_code == 503 and r.json()["status"] == "not ready"
        assert r.json()["upstream"].startswith("unreachable")
        assert httpx.get(url + "/healthz").status_code == 200  # alive, just not ready
    with llm_server.serve() as upstream, llm_server.serve(Gateway(upstream + "/v1", guard, telemetry).app,
                                                           lifespan="on") as url:
        r = httpx.get(url + "/readyz", timeout=10)
        assert r.status_code == 200 and r.json()["status"] == "ready"


def test_build_app_and_app_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigurationError, match="either an upstream URL"):
        build_app(ServeConfig())
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    with pytest.raises(ConfigurationError, match=CONFIG_ENV):
        app_from_env()
    monkeypatch.setenv(CONFIG_ENV, json.dumps({"demo": True, "action": "flag", "on_error": "fail_closed"}))
    app = app_from_env()
    assert app.guard.policy.action == "flag" and app.guard.policy.on_error == "fail_closed"
    with llm_server.serve(app, lifespan="on") as url:
        r = httpx.post(url + "/v1/chat/completions", json={"model": "demo-hallucinate", "messages": MSGS}, timeout=30)
        assert r.status_code == 200 and r.headers["x-guardrail-action"] == "flag"


def test_shutdown_drains_flag_checks_and_closes(tiny_nli: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    evaluator = Evaluator(nli=NLIScorer(tiny_nli))
    delay_faithfulness(evaluator, monkeypatch, lambda: time.sleep(1.0))
    telemetry = Telemetry(CollectorRegistry(), route="gateway", model="fake")
    guard = Guard(evaluator, Policy(action="flag", retrieval_relevance=None), observer=telemetry)
    with llm_server.serve() as upstream:
        gateway = Gateway(upstream + "/v1", guard, telemetry)
        with llm_server.serve(gateway.app, lifespan="on") as url:
            r = httpx.post(url + "/v1/chat/completions", timeout=30, json={
                "model": "fake", "messages": MSGS, "contexts": CTX, "stream": True, "answer": "Returns take 30 days."})
            assert r.status_code == 200 and r.text.endswith("data: [DONE]\n\n")
            # the check runs after the last byte; the server now shuts down while it is still running
        assert gateway.client is None  # the upstream client was closed
    total = sum(s.value for f in telemetry.registry.collect() if f.name == "guardrail_verdicts" for s in f.samples
                if s.name == "guardrail_verdicts_total")
    assert total == 1  # the pending check finished during shutdown: none lost
    with pytest.raises(RuntimeError):
        guard._executor.submit(print)  # closed
