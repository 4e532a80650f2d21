"""The gateway on a real uvicorn server, in front of a real local upstream, with the real openai SDK."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import llm_server
import openai
import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from guardrail.checks.evaluator import Evaluator
from guardrail.guard import Guard
from guardrail.policy import Policy
from guardrail.scorers.nli import NLIScorer
from guardrail.server import create_gateway
from guardrail.telemetry import Telemetry

CTX = ["Items can be returned within 30 days of delivery. Refunds are issued to the original payment method."]
MSGS = [{"role": "user", "content": "How do returns work?"}]
LABELS = {"route": "gateway", "model": "fake"}


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    with llm_server.serve() as url:
        yield url + "/v1"


@pytest.fixture(scope="module")
def evaluator(tiny_nli: Path) -> Evaluator:
    return Evaluator(nli=NLIScorer(tiny_nli))


@contextmanager
def gateway(upstream: str, evaluator: Evaluator, timeout: float = 30.0, **policy: object) -> Iterator[tuple[str, Telemetry]]:
    telemetry = Telemetry(CollectorRegistry(), route="gateway", model="fake")
    guard = Guard(evaluator, Policy(retrieval_relevance=None, **policy), observer=telemetry)  # type: ignore[arg-type]
    app = create_gateway(upstream, guard, telemetry, timeout=httpx.Timeout(timeout, connect=2.0))
    with llm_server.serve(app, lifespan="on") as url:
        yield url, telemetry


def sdk(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key="caller-key", max_retries=0)


def split(evaluator: Evaluator) -> tuple[str, str, float]:
    check = evaluator.faithfulness_check
    a, b = "Items can be returned within 30 days of delivery.", "Refunds are paid in gold bars on Mars by the moon king."
    sa, sb = (check.run("How do returns work?", CTX, x).score for x in (a, b))  # type: ignore[union-attr]
    return (a, b, (sa + sb) / 2) if sa > sb else (b, a, (sa + sb) / 2)


def test_faithful_answer_passes_byte_identical(upstream: str, evaluator: Evaluator) -> None:
    body = {"model": "fake", "messages": MSGS, "answer": "Returns take 30 days."}
    direct = httpx.post(upstream + "/chat/completions", json=body)
    with gateway(upstream, evaluator, action="block", faithfulness=0.0) as (url, t):
        r = httpx.post(url + "/v1/chat/completions", json={**body, "contexts": CTX})
        assert r.status_code == 200 and r.content == direct.content
        assert r.headers["x-guardrail-action"] == "pass"
        c = sdk(url).chat.completions.create(model="fake", messages=MSGS, extra_body={"contexts": CTX, "answer": "Hi."})
        assert c.choices[0].message.content == "Hi."
        for stream in (False, True):
            raw = httpx.post(upstream + "/chat/completions", json={**body, "stream": stream}).content
            via = httpx.post(url + "/v1/chat/completions", json={**body, "stream": stream, "contexts": CTX}).content
            assert via == raw, stream
        metrics = httpx.get(url + "/metrics/").text
        families = {f.name for f in text_string_to_metric_families(metrics)}
        assert "guardrail_faithfulness_score" in families and "guardrail_generation_duration_seconds" in families
        assert httpx.get(url + "/healthz").json()["status"] == "ok"


def test_hallucination_blocked_for_the_sdk(upstream: str, evaluator: Evaluator) -> None:
    with gateway(upstream, evaluator, action="block", faithfulness=1.0) as (url, t):
        with pytest.raises(openai.BadRequestError, match="blocked by guardrail"):
            sdk(url).chat.completions.create(model="fake", messages=MSGS, extra_body={"contexts": CTX, "answer": "Gold."})
        assert t.registry.get_sample_value("guardrail_verdicts_total", {**LABELS, "action": "block", "outcome": "failed"}) == 1


def test_blocked_stream_parses_and_ends_with_content_filter(upstream: str, evaluator: Evaluator) -> None:
    good, bad, threshold = split(evaluator)
    with gateway(upstream, evaluator, action="block", faithfulness=threshold) as (url, _):
        stream = sdk(url).chat.completions.create(model="fake", messages=MSGS, stream=True,
                                                  extra_body={"contexts": CTX, "answer": f"{good} {bad} Never."})
        chunks = list(stream)  # the SDK raises on any event it cannot parse
    text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
    assert text.strip() == good and bad[:12] not in text
    assert chunks[-1].choices[0].finish_reason == "content_filter"


def test_upstream_errors_reach_the_client_and_are_counted(upstream: str, evaluator: Evaluator) -> None:
    with gateway(upstream, evaluator, action="block", faithfulness=0.5) as (url, t):
        with pytest.raises(openai.InternalServerError):
            sdk(url).chat.completions.create(model="fake", messages=MSGS, extra_body={"contexts": CTX, "fail": 500})
        assert t.registry.get_sample_value("guardrail_upstream_errors_total", {**LABELS, "reason": "status"}) == 1
    dead = f"http://127.0.0.1:{llm_server.free_port()}/v1"
    with gateway(dead, evaluator, action="block", faithfulness=0.5) as (url, t):
        r = httpx.post(url + "/v1/chat/completions", json={"model": "fake", "messages": MSGS, "contexts": CTX})
        assert r.status_code == 502 and "unreachable" in r.json()["error"]["message"]
        assert t.registry.get_sample_value("guardrail_upstream_errors_total", {**LABELS, "reason": "connect"}) == 1


def test_malformed_sse_follows_on_error(upstream: str, evaluator: Evaluator) -> None:
    body = {"model": "fake", "messages": MSGS, "contexts": CTX, "stream": True, "malformed": True, "answer": "Fine."}
    with gateway(upstream, evaluator, action="block", faithfulness=0.0, on_error="fail_closed") as (url, t):
        r = httpx.post(url + "/v1/chat/completions", json=body, timeout=20)
        events = [e for e in r.text.split("\n\n") if e]
        assert events[-1] == "data: [DONE]"
        last = json.loads(events[-2][6:])
        assert last["choices"][0]["finish_reason"] == "content_filter" and "not valid JSON" in last["guardrail"]["reasons"][0]
        assert t.registry.get_sample_value("guardrail_check_errors_total", {**LABELS, "reason": "unreadable"}) == 1
    with gateway(upstream, evaluator, action="flag", faithfulness=0.0) as (url, t):
        r = httpx.post(url + "/v1/chat/completions", json=body, timeout=20)
        assert "data: {this is not json" in r.text and r.text.endswith("data: [DONE]\n\n")
        assert t.registry.get_sample_value("guardrail_check_errors_total", {**LABELS, "reason": "unreadable"}) == 1


def test_slow_upstream_times_out_clearly(upstream: str, evaluator: Evaluator) -> None:
    body = {"model": "fake", "messages": MSGS, "contexts": CTX, "stream": True, "delay": 3, "answer": "Slow answer."}
    with gateway(upstream, evaluator, timeout=0.5, action="flag", faithfulness=0.0) as (url, t):
        t0 = time.perf_counter()
        r = httpx.post(url + "/v1/chat/completions", json=body, timeout=20)
        assert time.perf_counter() - t0 < 10
        assert '"upstream_error"' in r.text and "the upstream stream broke off" in r.text  # the gateway's own words
        assert "x_guardrail_origin" not in r.text  # its signature stays inside
        assert t.registry.get_sample_value("guardrail_upstream_errors_total", {**LABELS, "reason": "timeout"}) == 1


def test_client_disconnect_closes_the_upstream_stream(upstream: str, evaluator: Evaluator) -> None:
    answer = "A long answer. " * 40
    body = {"model": "fake", "messages": MSGS, "contexts": CTX, "stream": True, "delay": 0.05, "answer": answer}
    with gateway(upstream, evaluator, action="flag", faithfulness=0.0) as (url, t):
        with httpx.stream("POST", url + "/v1/chat/completions", json=body, timeout=20) as r:
            next(r.iter_bytes())  # first bytes, then the client goes away
        deadline = time.time() + 10
        while answer not in llm_server.STREAMS_CLOSED and time.time() < deadline:
            time.sleep(0.05)
        assert answer in llm_server.STREAMS_CLOSED  # the upstream request was closed, not left running
        assert t.registry.get_sample_value("guardrail_checks_in_flight", LABELS) in (None, 0.0)


# --------------------------------------------------------------------------- an upstream that trickles its answer
def trickler(first: bytes, ctype: bytes, every: float = 0.2) -> object:
    """An upstream that sends its headers and ``first`` at once, then one byte every ``every`` seconds for ever
    (each read well inside any per-read timeout; whitespace in JSON, blank lines in SSE: nothing a reader refuses):
    a slowloris answer. Records when the gateway closes its request."""
    byte = b"\n" if ctype == b"text/event-stream" else b" "
    import asyncio

    async def app(scope: Any, receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):  # the request body
            pass
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", ctype)]})
        await send({"type": "http.response.body", "body": first, "more_body": True})
        while True:
            try:
                message = await asyncio.wait_for(receive(), every)
            except asyncio.TimeoutError:
                await send({"type": "http.response.body", "body": byte, "more_body": True})
                continue
            if message["type"] == "http.disconnect":  # the gateway closed the upstream request
                TRICKLES_CLOSED.append(first)
                return

    return app


TRICKLES_CLOSED: list[bytes] = []


@contextmanager
def deadline_gateway(upstream_app: object, evaluator: Evaluator, deadline: float,
                     **policy: object) -> Iterator[tuple[str, Telemetry, Guard]]:
    telemetry = Telemetry(CollectorRegistry(), route="gateway", model="fake")
    with llm_server.serve(upstream_app) as up:
        guard = Guard(evaluator, Policy(retrieval_relevance=None, **policy), observer=telemetry)  # type: ignore[arg-type]
        app = create_gateway(up + "/v1", guard, telemetry, timeout=httpx.Timeout(30.0, connect=2.0),
                             upstream_deadline=deadline)
        with llm_server.serve(app, lifespan="on") as url:
            yield url, telemetry, guard


def test_an_upstream_body_that_trickles_is_cut_at_the_deadline(evaluator: Evaluator) -> None:
    body = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": "Returns take"}}]})
    with deadline_gateway(trickler(body[:-20].encode(), b"application/json"), evaluator, 1.0, action="block",
                          faithfulness=0.0) as (url, t, _):
        t0 = time.perf_counter()
        r = httpx.post(url + "/v1/chat/completions", json={"model": "fake", "messages": MSGS, "contexts": CTX}, timeout=20)
        assert time.perf_counter() - t0 < 5  # the 1 s deadline, not the 30 s per-read timeout, and not for ever
        assert r.status_code == 504
        err = r.json()["error"]
        assert err["type"] == err["code"] == "upstream_timeout" and "1 s deadline" in err["message"], err
        assert t.registry.get_sample_value("guardrail_upstream_errors_total", {**LABELS, "reason": "timeout"}) == 1
    assert body[:-20].encode() in TRICKLES_CLOSED  # the upstream request was closed, not left trickling


def test_an_upstream_stream_that_trickles_ends_at_the_deadline_with_nothing_unchecked(evaluator: Evaluator) -> None:

    def event(text: str) -> bytes:
        return ("data: " + json.dumps({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "fake",
                                       "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]})
                + "\n\n").encode()

    good, bad, threshold = split(evaluator)
    first = event(good + " ") + event(bad[:-1])  # the second sentence is cut off: the rest trickles for ever
    with deadline_gateway(trickler(first, b"text/event-stream"), evaluator, 1.0, action="block",
                          faithfulness=threshold) as (url, t, _):
        t0 = time.perf_counter()
        r = httpx.post(url + "/v1/chat/completions", timeout=20,
                       json={"model": "fake", "messages": MSGS, "contexts": CTX, "stream": True})
        assert time.perf_counter() - t0 < 5
        assert r.status_code == 200
        events = [e for e in r.text.split("\n\n") if e.strip()]
        assert events[-1] == "data: [DONE]" and json.loads(events[-2][6:])["choices"][0]["finish_reason"] == "content_filter"
        answer = "".join(events[:-2])  # what passed went out, the rest did not (the reason names it, in the last chunk)
        assert good in answer and bad[:12] not in answer
        assert t.registry.get_sample_value("guardrail_upstream_errors_total", {**LABELS, "reason": "timeout"}) == 1
    with deadline_gateway(trickler(first, b"text/event-stream"), evaluator, 1.0, action="flag", faithfulness=0.0) as (url, t, _):
        r = httpx.post(url + "/v1/chat/completions", timeout=20,
                       json={"model": "fake", "messages": MSGS, "contexts": CTX, "stream": True})
        assert '"upstream_error"' in r.text and "did not finish within the gateway's 1 s deadline" in r.text
        assert "x_guardrail_origin" not in r.text  # the gateway's own words: delivered, its signature stays inside
        assert t.registry.get_sample_value("guardrail_upstream_errors_total", {**LABELS, "reason": "timeout"}) == 1
    assert first in TRICKLES_CLOSED  # the upstream request was closed, not left trickling


def test_a_stream_blocked_mid_way_closes_its_upstream_request(evaluator: Evaluator) -> None:
    """Block mode cuts a stream at its unsupported sentence while the upstream is still sending: the upstream request
    is closed then (its connection back in the pool), not left open until the upstream ends. Each upstream here
    never ends; with one pooled connection, the second and third requests would wait for it (504) if it leaked."""

    def event(text: str) -> bytes:
        return ("data: " + json.dumps({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "fake",
                                       "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]})
                + "\n\n").encode()

    good, bad, threshold = split(evaluator)
    telemetry = Telemetry(CollectorRegistry())
    guard = Guard(evaluator, Policy(retrieval_relevance=None, action="block", faithfulness=threshold), observer=telemetry)
    first = [event(good + " ") + event(bad + " ") + event(f"More follows {k}") for k in range(3)]
    upstreams = [trickler(f, b"text/event-stream", every=0.1) for f in first]

    SEEN: list[int] = []

    async def counted(scope: Any, receive: Any, send: Any) -> None:
        k = len(SEEN)
        SEEN.append(k)
        await upstreams[k](scope, receive, send)

    with llm_server.serve(counted) as up:
        app = create_gateway(up + "/v1", guard, telemetry, timeout=httpx.Timeout(30.0, connect=2.0, pool=3.0),
                             upstream_connections=1)
        with llm_server.serve(app, lifespan="on") as url:
            for k in range(3):
                t0 = time.perf_counter()
                r = httpx.post(url + "/v1/chat/completions", timeout=20,
                               json={"model": "fake", "messages": MSGS, "contexts": CTX, "stream": True})
                assert r.status_code == 200, (k, r.status_code, r.text[:300])
                chunks = [json.loads(e[6:]) for e in r.text.split("\n\n") if e.startswith("data: {")]
                delivered = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c.get("choices"))
                assert chunks[-1]["choices"][0]["finish_reason"] == "content_filter"
                assert good in delivered and bad[:12] not in delivered
                assert time.perf_counter() - t0 < 10
                deadline = time.time() + 5
                while first[k] not in TRICKLES_CLOSED and time.time() < deadline:
                    time.sleep(0.05)
                assert first[k] in TRICKLES_CLOSED, f"request {k}: the upstream request was left open"
