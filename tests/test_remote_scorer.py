"""The remote scorer (guardrail.remote): the OIP v2 server and client against each other on real models (bit-identical
scores and the same verdicts as in process), and the client against a scripted server that fails in every way (clear
errors, bounded retries, the guard fails closed and counts it)."""

from __future__ import annotations

import contextlib
import io
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import llm_server
import numpy as np
import pytest
from prometheus_client import CollectorRegistry
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from guardrail.checks.evaluator import Evaluator
from guardrail.errors import ConfigurationError, RemoteScorerError
from guardrail.guard import Guard
from guardrail.policy import Policy
from guardrail.remote import OIPClient, RemoteEmbeddingScorer, RemoteNLIScorer, scorers_from_url
from guardrail.remote.models import EmbeddingModel, NLIModel
from guardrail.remote.server import create_scorer_app
from guardrail.scorers.embedding import EmbeddingScorer
from guardrail.scorers.nli import NLIScorer, default_nli_model
from guardrail.scorers.pool import ForwardPool
from guardrail.server import ServeConfig, build_app
from guardrail.telemetry import Telemetry

CTX = [
    "Items can be returned within 30 days of delivery. Refunds are issued to the original payment method.",
    "Shipping is free for orders over 50 euros. Express delivery costs 9 euros and takes one business day.",
    "Gift cards cannot be returned. Opened software can be exchanged but not refunded. " * 12,  # windowed premises
]
CASES = [
    ("How do returns work?", CTX, "Items can be returned within 30 days. Refunds go to the original payment method."),
    ("How do returns work?", CTX, "Items can be returned within 90 days. Refunds are paid in cash."),
    ("What does shipping cost?", CTX, "Shipping is free over 50 euros. Express delivery costs 9 euros."),
    ("Can I return a gift card?", CTX, "Yes, gift cards can be returned for a full refund within a year."),
    ("What is the capital of France?", CTX[:1], "Paris is the capital of France."),
]


def verdict_view(v: Any) -> dict[str, Any]:
    out = v.to_dict()
    out.pop("timings")
    return out  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def local() -> tuple[NLIScorer, EmbeddingScorer]:
    return NLIScorer(default_nli_model()), EmbeddingScorer()


@pytest.fixture(scope="module")
def scorer_url() -> Iterator[str]:
    pool = ForwardPool(2)
    app = create_scorer_app([NLIModel(NLIScorer(default_nli_model(), pool=pool)),
                             EmbeddingModel(EmbeddingScorer(pool=pool))])
    with llm_server.serve(app) as url:
        yield url
    pool.close()


# --------------------------------------------------------------------------- server and client against each other
def test_oip_v2_shapes(scorer_url: str) -> None:
    assert httpx.get(scorer_url + "/v2/health/ready").status_code == 200
    assert httpx.get(scorer_url + "/v2/models/nli/ready").json()["ready"] is True
    meta = httpx.get(scorer_url + "/v2/models/nli").json()
    assert [i["name"] for i in meta["inputs"]] == ["premise", "hypothesis"]
    assert meta["outputs"] == [{"name": "probabilities", "datatype": "FP32", "shape": [-1, 3]}]
    assert meta["parameters"]["labels"] == ["entailment", "neutral", "contradiction"]
    assert meta["parameters"]["guardrail"]["threshold"] == NLIScorer(default_nli_model()).metadata["threshold"]
    body = {"id": "r1", "inputs": [
        {"name": "premise", "shape": [2], "datatype": "BYTES", "data": ["The sky is blue.", "It rains."]},
        {"name": "hypothesis", "shape": [2], "datatype": "BYTES", "data": ["The sky has a colour.", "It is dry."]}]}
    out = httpx.post(scorer_url + "/v2/models/nli/infer", json=body).json()
    assert out["model_name"] == "nli" and out["id"] == "r1"
    (tensor,) = out["outputs"]
    assert (tensor["name"], tensor["datatype"], tensor["shape"], len(tensor["data"])) == ("probabilities", "FP32", [2, 3], 6)
    emb = httpx.post(scorer_url + "/v2/models/embedding/versions/1/infer", json={"inputs": [
        {"name": "text", "shape": [1], "datatype": "BYTES", "data": ["hello"]}]}).json()
    assert emb["outputs"][0]["shape"] == [1, 384]
    # bad requests: 400 with the reason; an unknown model: 404
    bad = httpx.post(scorer_url + "/v2/models/nli/infer", json={"inputs": [body["inputs"][0]]})
    assert bad.status_code == 400 and "hypothesis" in bad.json()["error"]
    wrong = {"inputs": [{**body["inputs"][0], "datatype": "FP32"}, body["inputs"][1]]}
    assert httpx.post(scorer_url + "/v2/models/nli/infer", json=wrong).status_code == 400
    assert httpx.post(scorer_url + "/v2/models/nope/infer", json=body).status_code == 404


def test_remote_scores_are_bit_identical(scorer_url: str, local: tuple[NLIScorer, EmbeddingScorer]) -> None:
    nli, emb = scorers_from_url(scorer_url)
    premises = ["The sky is blue.", "Paris is in France.", CTX[0], CTX[2]]
    hypotheses = ["The sky has a colour.", "Paris is in Spain.", "Refunds are paid in cash.", "Gift cards are final."]
    remote_probs, _ = nli.probabilities(premises, hypotheses)
    local_probs, _ = local[0].probabilities(premises, hypotheses)
    assert remote_probs.dtype == np.float32 and np.array_equal(remote_probs, local_probs)
    a, b = nli.predict(premises, hypotheses), local[0].predict(premises, hypotheses)
    assert np.array_equal(a.entailment, b.entailment) and np.array_equal(a.contradiction, b.contradiction)
    texts = ["How do returns work?", *CTX, "word " * 600]  # the last one: longer than the model, windowed
    assert np.array_equal(emb.embed(texts), local[1].embed(texts))
    assert np.array_equal(emb.similarity(texts[:1], texts[1:]), local[1].similarity(texts[:1], texts[1:]))
    assert (nli.labels, nli.max_length, nli.metadata) == (local[0].labels, local[0].max_length, local[0].metadata)
    assert emb.max_length == local[1].max_length and nli.loaded and emb.loaded
    nli.close()


def test_remote_verdicts_equal_in_process(scorer_url: str, local: tuple[NLIScorer, EmbeddingScorer]) -> None:
    nli, emb = scorers_from_url(scorer_url)
    policy = Policy(action="block", response_relevance=0.1)
    remote_guard = Guard(Evaluator(nli=nli, embedder=emb, checks=policy.checks), policy)
    local_guard = Guard(Evaluator(nli=local[0], embedder=local[1], checks=policy.checks), policy)
    actions = set()
    for question, contexts, response in CASES:
        r = remote_guard.check(question, contexts, response)
        assert verdict_view(r) == verdict_view(local_guard.check(question, contexts, response))
        actions.add(r.action)
    assert actions == {"pass", "block"}  # the cases exercise both decisions
    nli.close()


def test_gateway_and_cli_use_the_scorer_url(scorer_url: str, tmp_path: Any) -> None:
    app = build_app(ServeConfig(demo=True, scorer_url=scorer_url))
    faith = app.guard.evaluator.faithfulness_check
    assert isinstance(faith.nli, RemoteNLIScorer)
    assert isinstance(app.guard.evaluator.relevance_check.embedder, RemoteEmbeddingScorer)
    msgs = [{"role": "user", "content": "How do returns work?"}]
    with llm_server.serve(app, lifespan="on") as url:
        ok = httpx.post(url + "/v1/chat/completions", json={"model": "demo", "messages": msgs}, timeout=30)
        bad = httpx.post(url + "/v1/chat/completions", json={"model": "demo-hallucinate", "messages": msgs}, timeout=30)
        assert (ok.status_code, ok.headers["x-guardrail-action"]) == (200, "pass")
        assert bad.status_code == 400
        metrics = httpx.get(url + "/metrics/").text
    assert 'guardrail_scorer_request_duration_seconds_count{model="upstream",route="gateway",scorer="nli"}' in metrics
    # guardrail check --scorer-url: the same rows as in process
    from guardrail.cli.main import main

    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"id": str(i), "question": q, "contexts": c, "response": r}) + "\n"
                            for i, (q, c, r) in enumerate(CASES)))
    outs = []
    for extra in ([], ["--scorer-url", scorer_url]):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            code = main(["check", str(rows), "--format", "json", "--details", *extra])
        rows_out = json.loads(buf.getvalue())
        for row in rows_out:  # timings; tokens run (a pair in a local or remote cache costs none)
            row.pop("timings")
            row["details"]["faithfulness"].pop("model_tokens")
        outs.append((code, rows_out))
    assert outs[0] == outs[1]


# --------------------------------------------------------------------------- a scripted server that misbehaves
class Scripted:
    """An OIP server answering the real metadata and, for inference, what ``mode`` says; it counts the calls."""

    def __init__(self, metadata: dict[str, Any]) -> None:
        self.metadata = metadata
        self.mode = "ok"
        self.fail_first = 0
        self.calls = 0
        self.lock = threading.Lock()
        self.app = Starlette(routes=[Route("/v2/models/{name}", self.meta), Route("/v2/models/{name}/infer", self.infer,
                                                                                  methods=["POST"])])

    async def meta(self, request: Request) -> Response:
        return JSONResponse(self.metadata[request.path_params["name"]])

    async def infer(self, request: Request) -> Response:
        import asyncio

        body = await request.json()
        with self.lock:
            self.calls += 1
            calls = self.calls
        n = body["inputs"][0]["shape"][0]
        name = request.path_params["name"]
        width = 3 if name == "nli" else 384
        mode = "500" if calls <= self.fail_first else self.mode
        if mode == "500":
            return JSONResponse({"error": "model exploded"}, status_code=500)
        if mode == "400":
            return JSONResponse({"error": "bad input"}, status_code=400)
        if mode == "slow":
            await asyncio.sleep(1.0)
        if mode == "garbage":
            return PlainTextResponse("<html>proxy error</html>")
        rows, cols = (n + 1, width) if mode == "length" else (n, width + 1) if mode == "shape" else (n, width)
        data: list[Any] = [1.0 / cols] * (rows * cols)
        if mode == "strings":
            data = [str(x) for x in data]
        out = {"name": "probabilities" if name == "nli" else "embedding", "shape": [rows, cols], "datatype": "FP32",
               "data": data}
        return JSONResponse({"model_name": name, "outputs": [out]})


@pytest.fixture(scope="module")
def scripted(scorer_url: str) -> Iterator[tuple[Scripted, str]]:
    meta = {m: httpx.get(f"{scorer_url}/v2/models/{m}").json() for m in ("nli", "embedding")}
    server = Scripted(meta)
    with llm_server.serve(server.app) as url:
        yield server, url


@pytest.mark.parametrize(("mode", "reason", "calls", "message"), [
    ("500", "status", 3, "HTTP 500: model exploded (after 3 attempts)"),
    ("slow", "timeout", 3, "no answer in time"),
    ("400", "status", 1, "refused the request (HTTP 400: bad input)"),
    ("garbage", "protocol", 1, "not JSON"),
    ("shape", "protocol", 1, "has shape [2, 4], expected [2, 3]"),
    ("length", "protocol", 1, "has shape [3, 3], expected [2, 3]"),
    ("strings", "protocol", 1, "not numbers"),
])
def test_client_errors_are_clear_and_retries_bounded(scripted: tuple[Scripted, str], mode: str, reason: str,
                                                     calls: int, message: str) -> None:
    server, url = scripted
    server.mode, server.calls, server.fail_first = mode, 0, 0
    telemetry = Telemetry(CollectorRegistry(), route="chat", model="test-llm")
    # a short timeout only where it is the point: on a loaded machine a 500 answered after 0.3 s counts as a timeout
    nli = RemoteNLIScorer(url, timeout=0.3 if mode == "slow" else 5.0, retries=2, observer=telemetry)
    nli.client.backoff = 0.01
    with pytest.raises(RemoteScorerError) as info:
        nli.predict(["a.", "b."], ["c.", "d."])
    assert info.value.reason == reason and info.value.url == url and info.value.model == "nli"
    assert str(info.value).startswith(f"remote scorer {url} (model 'nli'): ") and message in str(info.value)
    assert server.calls == calls
    labels = {"route": "chat", "model": "test-llm", "scorer": "nli"}
    # every attempt timed (and the one metadata request of the first use)
    assert telemetry.registry.get_sample_value("guardrail_scorer_request_duration_seconds_count", labels) == calls + 1
    assert telemetry.registry.get_sample_value("guardrail_scorer_errors_total", {**labels, "reason": reason}) == calls
    nli.close()


def test_retries_recover_and_refused_connections(scripted: tuple[Scripted, str]) -> None:
    server, url = scripted
    server.mode, server.calls, server.fail_first = "ok", 0, 2
    nli = RemoteNLIScorer(url, retries=2)
    assert nli.predict(["a."], ["b."]).entailment.shape == (1,) and server.calls == 3
    server.calls, server.fail_first = 0, 3
    with pytest.raises(RemoteScorerError, match="after 3 attempts"):
        nli.predict(["c."], ["d."])
    port = llm_server.free_port()  # nothing listens there
    start = time.perf_counter()
    with pytest.raises(RemoteScorerError, match=rf"remote scorer http://127.0.0.1:{port} \(model 'nli'\): cannot connect"):
        RemoteNLIScorer(f"http://127.0.0.1:{port}", retries=1).predict(["a."], ["b."])
    assert time.perf_counter() - start < 5
    with pytest.raises(ConfigurationError, match="not an http"):
        OIPClient("127.0.0.1:8100")
    # a server running another tokenizer is refused at load
    server.metadata["nli"]["parameters"]["tokenizer_sha256"] = "0" * 64
    try:
        with pytest.raises(ConfigurationError, match="another tokenizer"):
            RemoteNLIScorer(url).predict(["a."], ["b."])
    finally:
        server.metadata["nli"]["parameters"].pop("tokenizer_sha256")


@pytest.mark.parametrize("mode", ["500", "slow", "shape"])
def test_guard_fails_closed_and_counts_scorer_errors(scripted: tuple[Scripted, str], scorer_url: str, mode: str) -> None:
    server, url = scripted
    server.mode, server.calls, server.fail_first = mode, 0, 0
    telemetry = Telemetry(CollectorRegistry(), route="chat", model="test-llm")
    nli = RemoteNLIScorer(url, timeout=0.3, retries=1, observer=telemetry)
    _, embedder = scorers_from_url(scorer_url)  # relevance works: the NLI scorer alone is down
    guard = Guard(Evaluator(nli=nli, embedder=embedder), Policy(action="block"), observer=telemetry)
    question, contexts, response = CASES[0]
    verdict = guard.check(question, contexts, response)
    assert (verdict.action, verdict.outcome, verdict.error_reason) == ("block", "error", "scorer")
    assert verdict.blocked and url in (verdict.error or "")
    labels = {"route": "chat", "model": "test-llm"}
    assert telemetry.registry.get_sample_value("guardrail_check_errors_total", {**labels, "reason": "scorer"}) == 1
    # flag mode with the default on_error delivers it marked unchecked, still counted
    flag = Guard(Evaluator(nli=nli, embedder=embedder), Policy(action="flag"), observer=telemetry)
    v = flag.check(question, contexts, response)
    assert (v.outcome, v.error_reason) == ("error", "scorer") and not v.blocked
    assert telemetry.registry.get_sample_value("guardrail_check_errors_total", {**labels, "reason": "scorer"}) == 2
    nli.close()
    embedder.close()


def test_cli_options(capsys: pytest.CaptureFixture[str]) -> None:
    from guardrail.cli.main import build_parser, main
    from guardrail.cli.serve import _config

    args = build_parser().parse_args(["serve", "--demo", "--scorer-url", "http://pool:8100", "--scorer-retries", "4"])
    cfg = _config(args)
    assert (cfg.scorer_url, cfg.scorer_timeout, cfg.scorer_retries) == ("http://pool:8100", 10.0, 4)
    assert main(["serve", "--demo", "--scorer-url", "pool:8100"]) == 2
    assert "--scorer-url 'pool:8100' is not an http(s) URL" in capsys.readouterr().err
    assert main(["serve-scorer", "--replicas", "2"]) == 2
    assert "--replicas: only with --ray" in capsys.readouterr().err


def test_readyz_follows_the_scorer_pool_and_shutdown_closes_its_client() -> None:
    """With --scorer-url the pool is part of readiness: ready while it answers, 503 once it is gone; the gateway's
    shutdown closes the pooled HTTP client."""
    pool = ForwardPool(2)
    scorer_app = create_scorer_app([NLIModel(NLIScorer(default_nli_model(), pool=pool)),
                                    EmbeddingModel(EmbeddingScorer(pool=pool))])
    with contextlib.ExitStack() as stack:
        scorer = stack.enter_context(llm_server.serve(scorer_app))
        app = build_app(ServeConfig(demo=True, scorer_url=scorer))
        client = app.guard.evaluator.faithfulness_check.nli.client  # type: ignore[union-attr]
        with llm_server.serve(app, lifespan="on") as url:
            r = httpx.get(url + "/readyz", timeout=10)
            assert r.status_code == 200 and r.json()["scorer_pool"] == "ready"
            stack.close()  # the scorer pool goes away
            r = httpx.get(url + "/readyz", timeout=10)
            assert r.status_code == 503 and r.json()["scorer_pool"] == "not ready"
            assert httpx.get(url + "/healthz").status_code == 200
        assert client._http.is_closed  # closed at the gateway's shutdown
    pool.close()
