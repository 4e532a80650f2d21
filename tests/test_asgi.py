"""GuardrailMiddleware on a Starlette app: JSON and SSE answers, record(), encodings, pass-through."""

from __future__ import annotations

import contextlib
import gzip
import json
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import delay_faithfulness
from prometheus_client import CollectorRegistry
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route, WebSocketRoute
from starlette.testclient import TestClient
from starlette.websockets import WebSocket

from guardrail.asgi import GuardrailMiddleware, record
from guardrail.checks.evaluator import Evaluator
from guardrail.errors import ConfigurationError
from guardrail.guard import Guard
from guardrail.policy import Policy
from guardrail.scorers.nli import NLIScorer
from guardrail.telemetry import Telemetry

DOCS = ["Items can be returned within 30 days of delivery. Refunds are issued to the original payment method."]
ANSWER = "Items can be returned within 30 days."


def completion(text: str) -> dict[str, object]:
    return {"id": "c1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}


async def ask(request: Request) -> Response:
    """A RAG endpoint: retrieves inside, records what it used, answers in OpenAI's format."""
    body = await request.json()
    record(query=body["question"], contexts=DOCS)
    payload = json.dumps(completion(body.get("answer", ANSWER))).encode()
    if body.get("encoding") == "gzip":
        return Response(gzip.compress(payload), media_type="application/json", headers={"content-encoding": "gzip"})
    if body.get("encoding") == "br":
        return Response(b"\x0b\x02\x80fake-brotli", media_type="application/json", headers={"content-encoding": "br"})
    return Response(payload, media_type="application/json")


async def ask_stream(request: Request) -> Response:
    body = await request.json()
    record(query=body["question"], contexts=DOCS)
    text = body.get("answer", ANSWER)

    async def events():  # type: ignore[no-untyped-def]
        if body.get("malformed"):
            yield "data: {this is not json\n\n"
        for i in range(0, len(text), 6):
            chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
                     "choices": [{"index": 0, "delta": {"content": text[i : i + 6]}, "finish_reason": None}]}
            yield f"data: {json.dumps(chunk)}\n\n"
        yield 'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
        yield "data: [DONE]\n\n"

    headers = {"content-encoding": body["encoding"]} if "encoding" in body else None
    return StreamingResponse(events(), media_type="text/event-stream", headers=headers)


async def ask_choices(request: Request) -> Response:
    """Two choices in every event (n=2)."""
    body = await request.json()
    record(query=body["question"], contexts=DOCS)
    a, b = body["answers"]

    async def events():  # type: ignore[no-untyped-def]
        for i in range(0, max(len(a), len(b)), 6):
            choices = [{"index": n, "delta": {"content": t[i : i + 6]}, "finish_reason": None} for n, t in enumerate((a, b))]
            yield f"data: {json.dumps({'id': 'c1', 'object': 'chat.completion.chunk', 'choices': choices})}\n\n"
        ends = [{"index": n, "delta": {}, "finish_reason": "stop"} for n in (0, 1)]
        yield f"data: {json.dumps({'id': 'c1', 'object': 'chat.completion.chunk', 'choices': ends})}\n\n"
        yield "data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


async def plain(request: Request) -> Response:
    return PlainTextResponse("not json at all")


async def unguarded(request: Request) -> Response:
    return JSONResponse(completion("Anything goes here."))


async def ws(websocket: WebSocket) -> None:
    await websocket.accept()
    await websocket.send_text("hello " + await websocket.receive_text())
    await websocket.close()


started: list[bool] = []


@contextlib.asynccontextmanager
async def lifespan(app):  # type: ignore[no-untyped-def]
    started.append(True)
    yield


def build(evaluator: Evaluator, **policy: object) -> tuple[TestClient, Telemetry]:
    app = Starlette(routes=[Route("/ask", ask, methods=["POST"]), Route("/ask-stream", ask_stream, methods=["POST"]),
                            Route("/ask-choices", ask_choices, methods=["POST"]),
                            Route("/plain", plain, methods=["POST"]), Route("/free", unguarded, methods=["POST"]),
                            WebSocketRoute("/ws", ws)], lifespan=lifespan)
    telemetry = Telemetry(CollectorRegistry(), route="ask", model="m")
    guard = Guard(evaluator, Policy(retrieval_relevance=None, **policy), observer=telemetry)  # type: ignore[arg-type]
    mw = GuardrailMiddleware(app, guard, routes=["/ask", "/ask-stream", "/ask-choices", "/plain"])
    return TestClient(mw), telemetry


@pytest.fixture(scope="module")
def evaluator(tiny_nli: Path) -> Evaluator:
    return Evaluator(nli=NLIScorer(tiny_nli))


def test_passing_json_answer_is_byte_identical_with_headers(evaluator: Evaluator) -> None:
    client, _ = build(evaluator, action="block", faithfulness=0.0)
    r = client.post("/ask", json={"question": "How do returns work?"})
    assert r.status_code == 200 and r.content == json.dumps(completion(ANSWER)).encode()
    assert r.headers["x-guardrail-action"] == "pass" and float(r.headers["x-guardrail-faithfulness"]) >= 0


def test_block_gives_a_documented_error(evaluator: Evaluator) -> None:
    client, t = build(evaluator, action="block", faithfulness=1.0)
    r = client.post("/ask", json={"question": "How do returns work?"})
    assert r.status_code == 400
    err = r.json()["error"]
    assert err["type"] == "guardrail_blocked" and err["code"] == "content_filter" and err["reasons"]
    assert t.registry.get_sample_value("guardrail_verdicts_total",
                                       {"route": "ask", "model": "m", "action": "block", "outcome": "failed"}) == 1


def test_flag_and_fallback(evaluator: Evaluator) -> None:
    client, _ = build(evaluator, action="flag", faithfulness=1.0)
    r = client.post("/ask", json={"question": "q"})
    assert r.status_code == 200 and r.headers["x-guardrail-action"] == "flag"
    assert r.json()["choices"][0]["message"]["content"] == ANSWER
    client, _ = build(evaluator, action="fallback", faithfulness=1.0, fallback_message="Ask a human.")
    r = client.post("/ask", json={"question": "q"})
    choice = r.json()["choices"][0]
    assert choice["message"]["content"] == "Ask a human." and choice["finish_reason"] == "content_filter"
    assert int(r.headers["content-length"]) == len(r.content)


def test_gzip_answers_are_checked_and_unknown_encodings_refused(evaluator: Evaluator) -> None:
    client, _ = build(evaluator, action="block", faithfulness=1.0)
    r = client.post("/ask", json={"question": "q", "encoding": "gzip"})
    assert r.status_code == 400  # decoded, checked, blocked: never delivered unchecked
    r = client.post("/ask", json={"question": "q", "encoding": "br"})
    # unreadable: on_error (fail_closed by default in block mode) blocks it, with the reason
    assert r.status_code == 400 and r.json()["error"]["code"] == "unchecked"
    assert "'br'" in r.json()["error"]["message"] and r.headers["x-guardrail-outcome"] == "error"
    client, _ = build(evaluator, action="flag", faithfulness=0.0)
    r = client.post("/ask", json={"question": "q", "encoding": "gzip"}, headers={"accept-encoding": "identity"})
    assert r.status_code == 200 and r.headers["x-guardrail-action"] == "pass"
    client, _ = build(evaluator, action="flag", faithfulness=0.0)
    r = client.post("/ask", json={"question": "q", "encoding": "br"})
    assert r.headers["x-guardrail-outcome"] == "unchecked"


def test_sse_block_stops_with_content_filter(evaluator: Evaluator) -> None:
    client, _ = build(evaluator, action="block", faithfulness=1.0)
    r = client.post("/ask-stream", json={"question": "q", "answer": "First claim here. Second claim there."})
    events = [e for e in r.text.split("\n\n") if e]
    payloads = [json.loads(e[6:]) for e in events if e != "data: [DONE]"]
    assert events[-1] == "data: [DONE]"
    assert payloads[-1]["choices"][0]["finish_reason"] == "content_filter" and payloads[-1]["guardrail"]["action"] == "block"
    text = "".join(p["choices"][0]["delta"].get("content") or "" for p in payloads)
    assert "First claim" not in text  # threshold 1.0: nothing passes, nothing is released


def test_sse_pass_is_byte_identical(evaluator: Evaluator) -> None:
    bare = TestClient(Starlette(routes=[Route("/ask-stream", ask_stream, methods=["POST"])]))
    expected = bare.post("/ask-stream", json={"question": "q", "answer": "One. Two three. Four."}).content
    done = b"data: [DONE]\n\n"
    assert expected.endswith(done)
    for action in ("flag", "block"):
        client, t = build(evaluator, action=action, faithfulness=0.0)
        r = client.post("/ask-stream", json={"question": "q", "answer": "One. Two three. Four."})
        if action == "block":
            assert r.content == expected, action
        else:  # flag mode: every event as it came, then one chunk with no choices carrying the verdict, then [DONE]
            assert r.content.startswith(expected[: -len(done)]) and r.content.endswith(done)
            extra = r.content[len(expected) - len(done) : -len(done)]
            verdict_event = json.loads(extra.decode().removeprefix("data: "))
            assert verdict_event["choices"] == [] and verdict_event["guardrail"]["action"] == "pass"
            assert verdict_event["guardrail"]["outcome"] == "passed" and "faithfulness" in verdict_event["guardrail"]["scores"]
        # the verdict gets recorded too
        labels = {"route": "ask", "model": "m", "action": "pass", "outcome": "passed"}
        deadline = time.time() + 10
        while t.registry.get_sample_value("guardrail_verdicts_total", labels) != 1 and time.time() < deadline:
            time.sleep(0.02)
        assert t.registry.get_sample_value("guardrail_verdicts_total", labels) == 1, action


def test_pass_through_routes_bodies_websockets_and_lifespan(evaluator: Evaluator) -> None:
    client, t = build(evaluator, action="block", faithfulness=1.0)
    with client:  # runs the lifespan
        assert started
        assert client.post("/free", json={}).json() == completion("Anything goes here.")  # unguarded route
        # a 2xx answer on a guarded route that is not readable is never delivered unchecked in block mode
        r = client.post("/plain", json={"question": "q"})
        assert r.status_code == 400 and r.json()["error"]["code"] == "unchecked" and "not json at all" not in r.text
        assert client.get("/ask").status_code == 405  # other methods go to the app untouched
        with client.websocket_connect("/ws") as socket:
            socket.send_text("there")
            assert socket.receive_text() == "hello there"
    assert t.registry.get_sample_value("guardrail_verdicts_total",
                                       {"route": "ask", "model": "m", "action": "block", "outcome": "failed"}) is None


def test_record_outside_a_request_is_a_no_op() -> None:
    assert record(query="q", contexts=["c"]) is False
    with pytest.raises(ConfigurationError, match="list of strings"):
        import contextvars

        from guardrail.asgi import _current, _Recording

        ctx = contextvars.copy_context()
        ctx.run(lambda: (_current.set(_Recording()), record(contexts="one string")))  # type: ignore[arg-type]


def test_overload_is_a_503_with_retry_after(tiny_nli: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past max_pending, a guarded answer is refused at once with 503 + Retry-After (block mode), not queued."""
    import threading

    evaluator = Evaluator(nli=NLIScorer(tiny_nli))
    gate = threading.Event()
    delay_faithfulness(evaluator, monkeypatch, lambda: gate.wait(10))
    app = Starlette(routes=[Route("/ask", ask, methods=["POST"])])
    telemetry = Telemetry(CollectorRegistry(), route="ask", model="m")
    guard = Guard(evaluator, Policy(action="block", retrieval_relevance=None), observer=telemetry, max_pending=1)
    client = TestClient(GuardrailMiddleware(app, guard, routes=["/ask"]))
    first = threading.Thread(target=lambda: client.post("/ask", json={"question": "q"}))
    first.start()
    time.sleep(0.3)
    r = client.post("/ask", json={"question": "q"})
    gate.set()
    first.join(10)
    assert r.status_code == 503 and r.headers["retry-after"] == "1"
    assert r.json()["error"]["code"] == "overloaded"
    assert telemetry.registry.get_sample_value("guardrail_check_errors_total",
                                               {"route": "ask", "model": "m", "reason": "overload"}) == 1


# --------------------------------------------------------------------------- issue 20: one release path, labels that tell
def sse_payloads(r: Any) -> list[dict[str, Any]]:
    events = [e for e in r.text.split("\n\n") if e]
    assert events[-1] == "data: [DONE]", r.text[-200:]
    return [json.loads(e[6:]) for e in events[:-1] if e.startswith("data: {") and not e.startswith("data: {this")]


def streamed_text(payloads: list[dict[str, Any]], index: int = 0) -> str:
    return "".join(c["delta"].get("content") or "" for p in payloads for c in p["choices"] if c["index"] == index)


def wait_for(t: Telemetry, name: str, labels: dict[str, str], value: float) -> float | None:
    deadline = time.time() + 10  # flag-mode checks run after the last byte, in the background
    while t.registry.get_sample_value(name, labels) != value and time.time() < deadline:
        time.sleep(0.02)
    return t.registry.get_sample_value(name, labels)


def test_held_stream_over_the_limit_fail_open_is_delivered_whole_and_counted_once(evaluator: Evaluator) -> None:
    """A block-mode stream that crosses max_response_chars with on_error fail_open goes out whole (not cut), with
    its finish and [DONE], its end marked unchecked; the error is counted once and the verdict says it."""
    from guardrail.checks.faithfulness import FaithfulnessConfig

    small = Evaluator(nli=evaluator.faithfulness_check.nli, faithfulness=FaithfulnessConfig(max_response_chars=100))  # type: ignore[union-attr]
    client, t = build(small, action="block", faithfulness=0.0, on_error="fail_open")
    answer = " ".join(["Items can be returned within 30 days."] * 11)  # 417 characters
    payloads = sse_payloads(client.post("/ask-stream", json={"question": "q", "answer": answer}))
    assert streamed_text(payloads) == answer
    last = payloads[-1]
    assert last["choices"][0]["finish_reason"] == "stop"
    assert last["guardrail"]["action"] == "pass" and last["guardrail"]["outcome"] == "unchecked"
    assert "max_response_chars" in last["guardrail"]["reasons"][0]
    labels = {"route": "ask", "model": "m"}
    assert t.registry.get_sample_value("guardrail_check_errors_total", {**labels, "reason": "uncheckable"}) == 1
    assert t.registry.get_sample_value("guardrail_verdicts_total", {**labels, "action": "pass", "outcome": "error"}) == 1


@pytest.mark.parametrize(("on_error", "action"), [("fail_closed", "flag"), ("fail_open", "pass")])
def test_flag_mode_unreadable_answers_are_delivered_and_labelled_alike(evaluator: Evaluator, on_error: str,
                                                                       action: str) -> None:
    """Flag mode never blocks: an answer the guard cannot read is delivered and marked unchecked, with the action
    ``on_error`` gives it (fail_closed: flag, fail_open: pass), for a JSON body as for a stream."""
    client, t = build(evaluator, action="flag", faithfulness=0.0, on_error=on_error)
    labels = {"route": "ask", "model": "m"}
    r = client.post("/plain", json={"question": "q"})
    assert r.status_code == 200 and r.text == "not json at all"
    assert (r.headers["x-guardrail-action"], r.headers["x-guardrail-outcome"]) == (action, "unchecked")
    r = client.post("/ask-stream", json={"question": "q", "malformed": True, "answer": "Fine. All good."})
    assert r.status_code == 200 and "data: {this is not json" in r.text
    payloads = sse_payloads(r)
    assert streamed_text(payloads) == "Fine. All good."
    assert payloads[-1]["choices"][0]["finish_reason"] == "stop"
    assert payloads[-1]["guardrail"]["action"] == action and payloads[-1]["guardrail"]["outcome"] == "unchecked"
    assert wait_for(t, "guardrail_verdicts_total", {**labels, "action": action, "outcome": "error"}, 2) == 2
    assert t.registry.get_sample_value("guardrail_check_errors_total", {**labels, "reason": "unreadable"}) == 2
    assert t.registry.get_sample_value("guardrail_verdicts_total", {**labels, "action": action, "outcome": "passed"}) is None


def test_every_choice_of_a_stream_is_observed(evaluator: Evaluator) -> None:
    """n=2 streams: one verdict per choice reaches telemetry, also when one choice stops the stream."""
    good = "Items can be returned within 30 days of delivery."  # a context sentence word for word: scores 1.0
    bad = "Refunds are paid in gold bars on Mars by the moon king."
    labels = {"route": "ask", "model": "m"}
    client, t = build(evaluator, action="block", faithfulness=0.99)
    # choice 1 fails mid-stream (its next sentence has begun), while choice 0 is still being written
    answers = [f"{good} {good} {good}", f"{bad} More words follow."]
    payloads = sse_payloads(client.post("/ask-choices", json={"question": "q", "answers": answers}))
    assert payloads[-1]["choices"][0]["finish_reason"] == "content_filter" and bad[:10] not in streamed_text(payloads, 1)
    assert t.registry.get_sample_value("guardrail_verdicts_total", {**labels, "action": "block", "outcome": "failed"}) == 1
    assert t.registry.get_sample_value("guardrail_verdicts_total", {**labels, "action": "pass", "outcome": "passed"}) == 1
    for action in ("block", "flag"):
        client, t = build(evaluator, action=action, faithfulness=0.0)
        r = client.post("/ask-choices", json={"question": "q", "answers": [good, good]})
        assert [streamed_text(sse_payloads(r), i) for i in (0, 1)] == [good, good]
        assert wait_for(t, "guardrail_verdicts_total", {**labels, "action": "pass", "outcome": "passed"}, 2) == 2, action


def test_held_stream_with_an_unreadable_part_fail_open_says_so(evaluator: Evaluator) -> None:
    """Block mode with on_error fail_open: an event the guard cannot read goes out unread, the rest is checked, and
    the answer is not reported as passed: its end is marked unchecked, the verdict is an error, counted once. An
    encoding it cannot read is passed through as received, marked in the headers (not cut to nothing)."""
    client, t = build(evaluator, action="block", faithfulness=0.0, on_error="fail_open")
    labels = {"route": "ask", "model": "m"}
    r = client.post("/ask-stream", json={"question": "q", "malformed": True, "answer": "Fine. All good."})
    payloads = sse_payloads(r)
    assert "data: {this is not json" in r.text and streamed_text(payloads) == "Fine. All good."
    assert payloads[-1]["choices"][0]["finish_reason"] == "stop"
    assert (payloads[-1]["guardrail"]["action"], payloads[-1]["guardrail"]["outcome"]) == ("pass", "unchecked")
    assert t.registry.get_sample_value("guardrail_verdicts_total", {**labels, "action": "pass", "outcome": "error"}) == 1
    assert t.registry.get_sample_value("guardrail_check_errors_total", {**labels, "reason": "unreadable"}) == 1
    bare = TestClient(Starlette(routes=[Route("/ask-stream", ask_stream, methods=["POST"])]))
    expected = bare.post("/ask-stream", json={"question": "q", "encoding": "x-custom"}).content
    r = client.post("/ask-stream", json={"question": "q", "encoding": "x-custom"})
    assert r.status_code == 200 and r.content == expected and b"[DONE]" in expected
    assert (r.headers["x-guardrail-action"], r.headers["x-guardrail-outcome"]) == ("pass", "unchecked")


GIFT_CARDS = ["Gift cards cannot be returned."]
ROLE_CHUNK = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
              "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]}


async def ask_retrieving(request: Request) -> Response:
    """A streaming RAG endpoint that retrieves inside its generator, after a keep-alive comment and the role chunk,
    and records then (``late``: after the answer's first text)."""
    body = await request.json()
    docs = DOCS if body["retrieves"] == "returns" else GIFT_CARDS

    async def events():  # type: ignore[no-untyped-def]
        yield ": keep-alive\n\n"
        yield f"data: {json.dumps(ROLE_CHUNK)}\n\n"
        if not body.get("late"):
            record(query=body["question"], contexts=docs)
        for i in range(0, len(ANSWER), 6):
            piece = {"index": 0, "delta": {"content": ANSWER[i : i + 6]}, "finish_reason": None}
            chunk = {**ROLE_CHUNK, "choices": [piece]}
            yield f"data: {json.dumps(chunk)}\n\n"
            if body.get("late"):
                record(query=body["question"], contexts=docs)
        yield f"data: {json.dumps({**ROLE_CHUNK, 'choices': [{'index': 0, 'delta': {}, 'finish_reason': 'stop'}]})}\n\n"
        yield "data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


@pytest.fixture(scope="module")
def real_evaluator() -> Evaluator:
    from guardrail.scorers.nli import default_nli_model

    return Evaluator(nli=NLIScorer(default_nli_model()))


def test_record_inside_a_streaming_generator_is_used(real_evaluator: Evaluator) -> None:
    """record() called in the response's generator before the answer's first text (a comment and the role chunk went
    out already) is what the answer is checked against, not the contexts the client sent; a later record() is
    refused. Before: the client's contexts were used (read at the first bytes), so a client could pass its own."""
    from guardrail.errors import ConfigurationError

    def run(app: Any, **body: Any) -> Any:
        return TestClient(app).post("/ask-retrieving", json={"question": "How long do I have to return an item?",
                                                             **body})

    bare = Starlette(routes=[Route("/ask-retrieving", ask_retrieving, methods=["POST"])])
    guard = Guard(real_evaluator, Policy(action="block", retrieval_relevance=None))
    guarded = GuardrailMiddleware(bare, guard, routes=["/ask-retrieving"])
    # the app retrieved passages that do not support the answer; the client sends some that do: blocked
    r = run(guarded, retrieves="gift cards", contexts=DOCS)
    payloads = sse_payloads(r)
    assert payloads[0] == ROLE_CHUNK and r.text.startswith(": keep-alive\n\n")  # what precedes the text goes out
    assert streamed_text(payloads) == "" and payloads[-1]["choices"][0]["finish_reason"] == "content_filter"
    # the faithful twin: the app's passages support it (the client's do not): delivered byte for byte
    expected = run(bare, retrieves="returns", contexts=GIFT_CARDS).content
    assert run(guarded, retrieves="returns", contexts=GIFT_CARDS).content == expected
    assert streamed_text(sse_payloads(run(guarded, retrieves="returns", contexts=GIFT_CARDS))) == ANSWER
    with pytest.raises(ConfigurationError, match=r"record\(\) came after"):
        run(guarded, retrieves="gift cards", contexts=DOCS, late=True)
