"""Round 57 (concurrency, cancellation, lifecycle; a helper's attack round on the gateway and the scorer pool).

A client that goes away releases what its request held: the upstream request of an answer that is no stream (it was
held up to the 600 s deadline, the model server generating for nobody) and the check of its answer (a worker thread
scored it to the end, 16-18 s of CPU, logged as delivered); a check over its latency budget stops too. A flag-mode
stream left before its end is checked and counted on what the client read. Streams count in
``guardrail_checks_in_flight`` (the HPA scales on it). A refusal of an answer the guard cannot judge quotes none of its
words. The scorer pool reads a chunked body only up to its limit. Real uvicorn servers, a real upstream."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import llm_server
import pytest
from prometheus_client import CollectorRegistry

from guardrail.checks.abandon import give_up_if_abandoned
from guardrail.checks.evaluator import Evaluator
from guardrail.errors import UncheckableError
from guardrail.guard import Guard
from guardrail.policy import Policy
from guardrail.scorers.nli import NLIScorer
from guardrail.server import create_gateway
from guardrail.telemetry import Telemetry

CTX = ["Items can be returned within 30 days of delivery. Gift cards cannot be returned."]
MSGS = [{"role": "user", "content": "How do returns work?"}]
LABELS = {"route": "gateway", "model": "fake"}


class SlowEvaluator(Evaluator):
    """An evaluator whose check takes up to 20 s, a step at a time (as a long answer over long contexts does)."""

    def __init__(self, nli: NLIScorer) -> None:
        super().__init__(nli=nli)
        self.steps = 0
        self.stopped = threading.Event()

    def evaluate(self, *args: Any, **kwargs: Any) -> Any:
        try:
            for _ in range(2000):
                give_up_if_abandoned()
                self.steps += 1
                time.sleep(0.01)
        finally:
            self.stopped.set()
        return super().evaluate(*args, **kwargs)


@pytest.fixture
def slow(tiny_nli: Path) -> SlowEvaluator:
    return SlowEvaluator(NLIScorer(tiny_nli))


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    with llm_server.serve() as url:
        yield url + "/v1"


@contextmanager
def gateway(upstream: str, evaluator: Evaluator, **policy: Any) -> Iterator[tuple[str, Telemetry]]:
    telemetry = Telemetry(CollectorRegistry(), route="gateway", model="fake")
    guard = Guard(evaluator, Policy(retrieval_relevance=None, **policy), observer=telemetry)
    app = create_gateway(upstream, guard, telemetry, timeout=httpx.Timeout(30.0, connect=2.0))
    with llm_server.serve(app, lifespan="on") as url:
        yield url, telemetry
    guard.close()


def test_a_check_over_its_budget_stops_its_thread(slow: SlowEvaluator) -> None:
    guard = Guard(slow, Policy(retrieval_relevance=None, latency_budget_s=0.2))
    t0 = time.perf_counter()
    verdict = guard.check("How do returns work?", CTX, "Items can be returned within 30 days of delivery.")
    assert verdict.outcome == "error" and verdict.error_reason == "timeout"
    assert slow.stopped.wait(2.0), "the check went on after its budget"
    assert time.perf_counter() - t0 < 2.0 and slow.steps < 150
    guard.close()


def test_a_cancelled_acheck_stops_its_thread(slow: SlowEvaluator) -> None:
    guard = Guard(slow, Policy(retrieval_relevance=None))

    async def main() -> None:
        task = asyncio.ensure_future(guard.acheck("How do returns work?", CTX, "Items can be returned."))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert slow.stopped.wait(2.0) and slow.steps < 150
    guard.close()


def test_a_client_that_goes_away_gives_up_its_check(upstream: str, slow: SlowEvaluator,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    """The middleware watches for the client while it checks: gone, the check stops and the request is logged as
    closed by the client (499), not as delivered; a client that waits gets its verdict (the twin)."""
    body = {"model": "fake", "messages": MSGS, "contexts": CTX, "answer": "Items can be returned within 30 days."}
    with caplog.at_level(logging.INFO, logger="guardrail.access"), gateway(upstream, slow, action="block") as (url, _):
        with pytest.raises(httpx.TimeoutException):
            httpx.post(url + "/v1/chat/completions", json=body, timeout=1.0)
        assert slow.stopped.wait(5.0), "the check went on for nobody"
        assert slow.steps < 600
        deadline = time.time() + 5
        statuses: list[Any] = []
        while 499 not in statuses and time.time() < deadline:
            time.sleep(0.05)
            statuses = [getattr(r, "guardrail", {}).get("status") for r in caplog.records]
        assert 499 in statuses, statuses


TRICKLED: list[float] = []


async def slow_json(scope: Any, receive: Any, send: Any) -> None:
    """An upstream that takes 15 s to write an answer that is no stream, and notes when its client goes away."""
    if scope["type"] != "http":
        return
    await receive()
    try:
        message = await asyncio.wait_for(receive(), 15)
        if message["type"] == "http.disconnect":
            TRICKLED.append(time.time())
            return
    except asyncio.TimeoutError:
        pass
    body = json.dumps({"id": "c", "object": "chat.completion", "created": 1, "model": "fake", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "Items can be returned."}, "finish_reason": "stop"}]})
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body.encode()})


def test_a_client_that_goes_away_releases_the_upstream_request(tiny_nli: Path) -> None:
    evaluator = Evaluator(nli=NLIScorer(tiny_nli))
    with llm_server.serve(slow_json) as up, gateway(up + "/v1", evaluator, action="flag") as (url, _):
        with pytest.raises(httpx.TimeoutException):
            httpx.post(url + "/v1/chat/completions", json={"model": "fake", "messages": MSGS, "contexts": CTX},
                       timeout=1.0)
        left = time.time()
        deadline = left + 5
        while not TRICKLED and time.time() < deadline:
            time.sleep(0.05)
        assert TRICKLED and TRICKLED[0] - left < 3, "the upstream request was held after the client left"


def test_a_flag_stream_left_early_is_checked_and_counted(upstream: str, tiny_nli: Path) -> None:
    evaluator = Evaluator(nli=NLIScorer(tiny_nli))
    answer = "Items can be returned within 30 days of delivery. " * 30
    body = {"model": "fake", "messages": MSGS, "contexts": CTX, "stream": True, "delay": 0.05, "answer": answer}
    with gateway(upstream, evaluator, action="flag", faithfulness=0.0) as (url, t):
        with httpx.stream("POST", url + "/v1/chat/completions", json=body, timeout=20) as r:
            it = r.iter_bytes()
            for _ in range(5):
                next(it)  # a few sentences read, then the client goes away
        deadline = time.time() + 10
        counted = 0.0
        while time.time() < deadline:
            counted = sum(t.registry.get_sample_value("guardrail_verdicts_total", {**LABELS, "action": a, "outcome": o})
                          or 0.0 for a in ("pass", "flag") for o in ("passed", "failed"))
            if counted:
                break
            time.sleep(0.05)
        assert counted == 1.0


def test_streams_count_in_flight(tiny_nli: Path) -> None:
    """Each scoring call of a stream counts in ``guardrail_checks_in_flight`` while it runs."""
    telemetry = Telemetry(CollectorRegistry(), route="gateway", model="fake")
    guard = Guard(Evaluator(nli=NLIScorer(tiny_nli)), Policy(retrieval_relevance=None, action="block",
                                                             faithfulness=0.0), observer=telemetry)
    seen: list[float] = []
    check = guard.evaluator.faithfulness_check
    assert check is not None
    run = check.run

    def watched(*args: Any, **kwargs: Any) -> Any:
        seen.append(telemetry.registry.get_sample_value("guardrail_checks_in_flight", LABELS) or 0.0)
        return run(*args, **kwargs)

    check.run = watched  # type: ignore[method-assign]
    stream = guard.stream("How do returns work?", CTX)
    stream.feed("Items can be returned within 30 days of delivery. Gift cards cannot be returned. ")
    stream.finish()
    assert seen and all(v >= 1.0 for v in seen)
    assert telemetry.registry.get_sample_value("guardrail_checks_in_flight", LABELS) == 0.0
    guard.close()


def test_a_refusal_of_an_answer_that_cannot_be_judged_quotes_none_of_it(upstream: str, tiny_nli: Path) -> None:
    """"Yes, absolutely, definitely!" to "Can I return that one?" cannot be judged: blocked, and neither the 400's
    message nor a stream's last event says its words; the Python verdict's reasons (logs) still do."""
    evaluator = Evaluator(nli=NLIScorer(tiny_nli))
    words = "absolutely, definitely"
    body = {"model": "fake", "messages": [{"role": "user", "content": "Can I return that one?"}], "contexts": CTX,
            "answer": f"Yes, {words}!"}
    with gateway(upstream, evaluator, action="block") as (url, _):
        r = httpx.post(url + "/v1/chat/completions", json=body, timeout=20)
        assert r.status_code == 400 and words not in r.text
        assert "says yes or no to a question" in r.json()["error"]["message"]
        streamed = httpx.post(url + "/v1/chat/completions", json={**body, "stream": True}, timeout=20)
        assert "content_filter" in streamed.text and words not in streamed.text
    guard = Guard(evaluator, Policy(retrieval_relevance=None, action="block"))
    verdict = guard.check("Can I return that one?", CTX, f"Yes, {words}!")
    assert verdict.blocked and words in verdict.reasons[0] and words not in verdict.shown_reasons[0]
    assert words not in json.dumps(verdict.to_dict(shown=True)) and words in json.dumps(verdict.to_dict())
    guard.close()
    assert UncheckableError("x", shown="y").shown == "y"


def test_the_scorer_reads_a_chunked_body_up_to_its_limit(tiny_nli: Path) -> None:
    from guardrail.remote.models import NLIModel
    from guardrail.remote.server import MAX_BODY_BYTES, create_scorer_app

    app = create_scorer_app([NLIModel(NLIScorer(tiny_nli))], load=False)
    read = 0

    async def chunks() -> Any:
        nonlocal read
        piece = b" " * (1 << 20)
        for _ in range(MAX_BODY_BYTES // len(piece) + 8):
            read += len(piece)
            yield piece

    async def main() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://scorer") as client:
            return await client.post("/v2/models/nli/infer", content=chunks())

    response = asyncio.run(main())
    assert response.status_code == 413
    assert read < MAX_BODY_BYTES + (4 << 20)  # refused as the limit was passed, not after the whole body


class HeavyEvaluator(Evaluator):
    """An evaluator whose check of a long answer takes up to 20 s (a step at a time); a short one is quick."""

    def evaluate(self, question: str, contexts: Any, response: Any, **kwargs: Any) -> Any:
        if len(response) > 1000:
            for _ in range(2000):
                give_up_if_abandoned()
                time.sleep(0.01)
        return super().evaluate(question, contexts, response, **kwargs)


def test_a_small_check_is_not_queued_behind_heavy_ones(tiny_nli: Path) -> None:
    """Heavy checks (over QUICK_CHARS of answer and contexts) fill the workers; a small one runs in the quick lane at
    once (round 57: 37 s behind four heavy ones), and the heavy ones are given up when the guard closes."""
    from guardrail.guard import QUICK_CHARS

    guard = Guard(HeavyEvaluator(nli=NLIScorer(tiny_nli)), Policy(retrieval_relevance=None), max_workers=1)
    long_answer = "Items can be returned within 30 days of delivery. " * 100
    big = [" ".join(["Gift cards cannot be returned."] * 40)] * (QUICK_CHARS // 1200 + 1)
    heavy = [threading.Thread(target=guard.check, args=("How do returns work?", big, long_answer)) for _ in range(2)]
    for t in heavy:
        t.start()
    time.sleep(0.3)
    t0 = time.perf_counter()
    verdict = guard.check("How do returns work?", CTX, "Items can be returned within 30 days of delivery.")
    assert verdict.outcome != "error" and time.perf_counter() - t0 < 5.0
    assert all(t.is_alive() for t in heavy)  # still running (and queued) behind the one worker
    guard.close()
    for t in heavy:
        t.join(5.0)
    assert not any(t.is_alive() for t in heavy)
