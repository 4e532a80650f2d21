"""Block mode must hold: attacks on the real gateway (uvicorn) in front of a scripted upstream, default block policy,
the shipped model.

Every hallucinated answer below once reached the caller. Each case here must be blocked (an error body, or a stream
that ends with ``finish_reason: "content_filter"`` without the claim), and its faithful twin must be delivered byte
for byte (decoded, when the upstream compressed it). No 5xx that is not the upstream's.
"""

from __future__ import annotations

import gzip
import itertools
import json
import zlib
from collections.abc import Iterator
from typing import Any

import httpx
import llm_server
import openai
import pytest
from prometheus_client import CollectorRegistry

from guardrail.checks.evaluator import Evaluator
from guardrail.guard import Guard
from guardrail.policy import Policy
from guardrail.scorers.embedding import EmbeddingScorer
from guardrail.scorers.nli import NLIScorer, default_nli_model
from guardrail.server import create_gateway
from guardrail.telemetry import Telemetry

CTX = ["Items can be returned within 30 days of delivery. Gift cards cannot be returned. "
       "Refunds are issued to the original payment method within 5 business days."]
GOOD = "Items can be returned within 30 days of delivery."
GOOD2 = "Refunds are issued to the original payment method within 5 business days."
BAD = "Items can be returned within 90 days of delivery, and shipping to Mars is free."
MARK = "Mars"  # in BAD only
Q = "How do returns work?"
LABELS = {"route": "gateway", "model": "upstream"}

# --------------------------------------------------------------------------- the scripted upstream
SCRIPTS: dict[str, dict[str, Any]] = {}
_ids = itertools.count()


async def scripted(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while True:
            msg = await receive()
            if msg["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            else:
                await send({"type": "lifespan.shutdown.complete"})
                return
    body = b""
    while True:
        msg = await receive()
        body += msg.get("body", b"")
        if not msg.get("more_body"):
            break
    script = SCRIPTS[json.loads(body)["script"]]
    await send({"type": "http.response.start", "status": script.get("status", 200), "headers": script.get("headers", [])})
    chunks = script["chunks"]
    for i, chunk in enumerate(chunks):
        await send({"type": "http.response.body", "body": chunk, "more_body": i < len(chunks) - 1})


def script(chunks: list[bytes] | bytes, *, status: int = 200, ctype: str | None = "application/json",
           headers: list[tuple[bytes, bytes]] | None = None) -> str:
    sid = f"s{next(_ids)}"
    hs = list(headers or [])
    if ctype is not None:
        hs.append((b"content-type", ctype.encode()))
    SCRIPTS[sid] = {"status": status, "headers": hs, "chunks": [chunks] if isinstance(chunks, bytes) else chunks}
    return sid


def raw_of(sid: str) -> bytes:
    return b"".join(SCRIPTS[sid]["chunks"])


# --------------------------------------------------------------------------- answers
def chat(*contents: Any, **message: Any) -> dict[str, Any]:
    choices = [{"index": i, "message": {"role": "assistant", "content": c, **message}, "finish_reason": "stop"}
               for i, c in enumerate(contents)]
    return {"id": "c1", "object": "chat.completion", "created": 1, "model": "m", "choices": choices}


def tool_call(args: str) -> dict[str, Any]:
    return chat(None, tool_calls=[{"id": "t1", "type": "function", "function": {"name": "answer", "arguments": args}}])


def dumps(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def sse(*payloads: Any, sep: bytes = b"\n\n", done: bool = True) -> list[bytes]:
    out = [b"data: " + (p if isinstance(p, bytes) else json.dumps(p, ensure_ascii=False).encode()) + sep for p in payloads]
    if done:
        out.append(b"data: [DONE]" + sep)
    return out


def chunk(delta: dict[str, Any] | None = None, index: int = 0, finish: str | None = None, **choice: Any) -> dict[str, Any]:
    c: dict[str, Any] = {"index": index, "finish_reason": finish, **choice}
    if delta is not None:
        c["delta"] = delta
    return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [c]}


def words_stream(text: str, **delta_extra: Any) -> list[dict[str, Any]]:
    pieces = [w + " " for w in text.split(" ")]
    pieces[-1] = pieces[-1].rstrip()
    return [chunk({"role": "assistant", "content": ""})] + [chunk({"content": p}) for p in pieces] + [chunk({}, finish="stop")]


# --------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def evaluator() -> Evaluator:
    return Evaluator(nli=NLIScorer(default_nli_model()))


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    with llm_server.serve(scripted) as url:
        yield url + "/v1"


@pytest.fixture(scope="module")
def gw(upstream: str, evaluator: Evaluator) -> Iterator[tuple[str, Telemetry]]:
    telemetry = Telemetry(CollectorRegistry(), route="gateway", model="upstream")
    guard = Guard(evaluator, Policy(action="block"), observer=telemetry)  # the defaults under test
    with llm_server.serve(create_gateway(upstream, guard, telemetry), lifespan="on") as url:
        yield url, telemetry


def post(url: str, sid: str, path: str = "/v1/chat/completions", question: str = Q, contexts: list[str] = CTX,
         **extra: Any) -> httpx.Response:
    body = {"model": "m", "messages": [{"role": "user", "content": question}], "contexts": contexts, "script": sid, **extra}
    return httpx.post(url + path, json=body, timeout=60)


def delivered_text(r: httpx.Response) -> str:
    """Every answer text the caller received (JSON choices or SSE deltas), as the openai SDK would show it."""
    if r.headers.get("content-type", "").startswith("text/event-stream") or r.text.lstrip().startswith("data:"):
        return r.text if r.status_code < 300 else ""
    return r.text if 200 <= r.status_code < 300 else ""


def assert_blocked(r: httpx.Response) -> None:
    assert r.status_code < 500, r.text
    if r.status_code >= 400:
        err = r.json()["error"]
        assert err["type"] == "guardrail_blocked", err
        return
    # a stream: it ends with content_filter and the claim never went out as answer text
    events = [e for e in r.text.replace("\r\n", "\n").replace("\r", "\n").split("\n\n") if e.strip()]
    if "event: response.incomplete" in events[-1]:
        # a Responses API stream ends with its stop event, as the API's own streams end (no [DONE])
        final, answer_events = json.loads(events[-1].split("data: ", 1)[1]), events[:-1]
        assert final.get("type") == "response.incomplete", final
    else:
        assert events[-1].strip() == "data: [DONE]", r.text[-300:]
        final = json.loads(events[-2].split("data: ", 1)[1])
        assert any(c.get("finish_reason") == "content_filter" for c in final.get("choices", [])), final
        answer_events = events[:-2]
    assert not any(MARK in e or "90 days" in e or "\u041c" in e for e in answer_events), answer_events


def assert_delivered(r: httpx.Response, sid: str) -> None:
    assert 200 <= r.status_code < 300, r.text
    expected = raw_of(sid)
    enc = dict(SCRIPTS[sid]["headers"]).get(b"content-encoding")
    if enc == b"gzip":
        expected = gzip.decompress(expected)
    elif enc == b"deflate":
        expected = zlib.decompress(expected)
    assert r.content == expected
    assert r.headers.get("x-guardrail-outcome", "passed") == "passed"


# --------------------------------------------------------------------------- JSON shapes
JSON_CASES: dict[str, Any] = {
    "n=2": (lambda a: chat(GOOD, a)),
    "content parts": (lambda a: chat([{"type": "text", "text": a}])),
    "tool_calls arguments": (lambda a: tool_call(json.dumps({"answer": a}))),
    "legacy function_call": (lambda a: chat(None, function_call={"name": "answer", "arguments": json.dumps({"text": a})})),
    "refusal": (lambda a: chat(None, refusal=a)),
    "completions n=2": (lambda a: {"object": "text_completion", "choices": [{"index": 0, "text": GOOD}, {"index": 1, "text": a}]}),
    "responses api": (lambda a: {"object": "response", "output": [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": a, "annotations": []}]}]}),
}


@pytest.mark.parametrize("case", list(JSON_CASES))
def test_json_shapes(gw: tuple[str, Telemetry], case: str) -> None:
    url, _ = gw
    path = {"completions n=2": "/v1/completions", "responses api": "/v1/responses"}.get(case, "/v1/chat/completions")
    build = JSON_CASES[case]
    assert_blocked(post(url, script(dumps(build(BAD))), path))
    good = script(dumps(build(GOOD2)))
    assert_delivered(post(url, good, path), good)


@pytest.mark.parametrize("variant", ["status 201", "status 203", "text/plain", "no content-type", "gzip", "deflate"])
def test_json_transport_variants(gw: tuple[str, Telemetry], variant: str) -> None:
    url, _ = gw

    def make(answer: str) -> str:
        body = dumps(chat(answer))
        if variant.startswith("status"):
            return script(body, status=int(variant.split()[1]))
        if variant == "text/plain":
            return script(body, ctype="text/plain")
        if variant == "no content-type":
            return script(body, ctype=None)
        packed = gzip.compress(body) if variant == "gzip" else zlib.compress(body)
        return script(packed, headers=[(b"content-encoding", variant.encode())])

    assert_blocked(post(url, make(BAD)))
    good = make(GOOD)
    r = post(url, good)
    assert_delivered(r, good)
    assert "content-encoding" not in r.headers


@pytest.mark.parametrize("body", [
    dumps(chat(GOOD))[:-3] + b"\xff" + dumps(chat(GOOD))[-3:],   # one invalid UTF-8 byte
    dumps(chat(GOOD)) + b" trailing garbage",
    b'{"choices": [{"message": {"role": "assistant", "content": "' + GOOD.encode() + b' \\ud800"}}]}',  # lone surrogate
    dumps(chat(GOOD + " " + "More words here. " * 7000)),  # over 100,000 characters
    dumps({"choices": ["x"]}),
    dumps({"choices": [{"message": {"content": 5}}]}),
    dumps({"result": BAD}),  # unknown shape
    b"[" * 100000,  # deeply nested
], ids=["invalid utf-8", "trailing garbage", "lone surrogate", "over 100k chars", "choices of strings",
        "number content", "unknown shape", "deep nesting"])
def test_unreadable_or_unjudgeable_answers_are_blocked(gw: tuple[str, Telemetry], body: bytes) -> None:
    url, t = gw
    before = t.registry.get_sample_value("guardrail_verdicts_total", {**LABELS, "action": "block", "outcome": "error"}) or 0
    r = post(url, script(body))
    assert r.status_code == 400 and r.json()["error"]["code"] == "unchecked", r.text[:300]
    assert r.headers["x-guardrail-outcome"] == "error"
    after = t.registry.get_sample_value("guardrail_verdicts_total", {**LABELS, "action": "block", "outcome": "error"})
    assert after == before + 1


def test_over_limit_contexts_are_blocked_not_passed(gw: tuple[str, Telemetry]) -> None:
    url, _ = gw
    r = post(url, script(dumps(chat(GOOD))), contexts=[CTX[0] + " x" * 600_000])
    assert r.status_code == 400 and "max_context_chars" in r.json()["error"]["message"]


# --------------------------------------------------------------------------- SSE shapes
def two_choice_stream(a: str, b: str) -> list[bytes]:
    events = [{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [
        {"index": 0, "delta": {"content": x}, "finish_reason": None},
        {"index": 1, "delta": {"content": y}, "finish_reason": None}]} for x, y in zip(a.split(" "), b.split(" "))]
    spaced = []
    for i, ev in enumerate(events):
        if i < len(events) - 1:
            for c in ev["choices"]:
                c["delta"]["content"] += " "
        spaced.append(ev)
    return sse(*spaced, chunk({}, finish="stop"))


SSE_CASES: dict[str, Any] = {
    "two choices in one event": lambda a: two_choice_stream(GOOD + " " + GOOD2, a + " " + GOOD2),
    "delta.tool_calls": lambda a: sse(chunk({"tool_calls": [{"index": 0, "id": "t", "type": "function",
                                                             "function": {"name": "f", "arguments": ""}}]}),
                                      *[chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]})
                                        for p in (json.dumps({"answer": a})[i:i + 7] for i in range(0, len(a) + 20, 7))],
                                      chunk({}, finish="tool_calls")),
    "delta.refusal": lambda a: sse(*[chunk({"refusal": w + " "}) for w in a.split(" ")], chunk({}, finish="stop")),
    "CRLF separators": lambda a: sse(*words_stream(a), sep=b"\r\n\r\n"),
    "raw U+2028 in a string": lambda a: sse(*[json.dumps(c, ensure_ascii=False).encode().replace(b"delivery.", "delivery.\u2028".encode())
                                              for c in words_stream(a)]),
    "no [DONE], no final blank line": lambda a: [b"".join(sse(*words_stream(a), done=False)).rstrip(b"\n")],
    "responses api events": lambda a: sse({"type": "response.created", "response": {"id": "r"}},
                                          *[{"type": "response.output_text.delta", "delta": w + " "} for w in a.split(" ")],
                                          {"type": "response.completed", "response": {"id": "r"}}, done=False),
}


@pytest.mark.parametrize("case", list(SSE_CASES))
def test_sse_shapes(gw: tuple[str, Telemetry], case: str) -> None:
    url, _ = gw
    build = SSE_CASES[case]
    path = "/v1/responses" if "responses" in case else "/v1/chat/completions"
    # two choices are an answer to a request for two (for one, a reader of choices[0] would mix them: round 9)
    extra = {"n": 2} if "two choices" in case else {}
    assert_blocked(post(url, script(build(BAD), ctype="text/event-stream"), path, stream=True, **extra))
    good = script(build(GOOD), ctype="text/event-stream")
    assert_delivered(post(url, good, path, stream=True, **extra), good)


@pytest.mark.parametrize("label", ["application/json", "text/plain", None, "status 201"])
def test_mislabelled_event_streams(gw: tuple[str, Telemetry], label: str | None) -> None:
    url, _ = gw
    status = 201 if label == "status 201" else 200
    ctype = "text/event-stream" if label == "status 201" else label
    assert_blocked(post(url, script(sse(*words_stream(BAD)), ctype=ctype, status=status), stream=True))
    good = script(sse(*words_stream(GOOD)), ctype=ctype, status=status)
    r = post(url, good, stream=True)
    assert r.status_code == status and r.content == raw_of(good)


@pytest.mark.parametrize("event", [
    chunk({"content": ["a", "b"]}), chunk({"content": 5}), {"choices": "x"}, b"{not json", {"unknown": True},
], ids=["list content", "number content", "choices string", "not json", "unknown shape"])
def test_unreadable_stream_events_stop_the_stream(gw: tuple[str, Telemetry], event: Any) -> None:
    url, _ = gw
    events = words_stream(GOOD)
    r = post(url, script(sse(*events[:3], event, *events[3:]), ctype="text/event-stream"), stream=True)
    assert_blocked(r)
    assert "cannot read" in r.text


def test_corrupt_gzip_stream_is_not_a_5xx(gw: tuple[str, Telemetry]) -> None:
    url, _ = gw
    packed = gzip.compress(b"".join(sse(*words_stream(GOOD))))
    broken = packed[:30] + bytes(b ^ 0x55 for b in packed[30:60]) + packed[60:]
    r = post(url, script([broken[:40], broken[40:]], ctype="text/event-stream",
                         headers=[(b"content-encoding", b"gzip")]), stream=True)
    assert r.status_code < 500
    assert "upstream_error" in r.text or "content_filter" in r.text


# --------------------------------------------------------------------------- decisions
def test_one_unsupported_sentence_among_supported_ones_blocks(gw: tuple[str, Telemetry]) -> None:
    url, _ = gw
    many = " ".join([GOOD, GOOD2, "Gift cards cannot be returned."] * 3) + " Every customer also gets a free television."
    r = post(url, script(dumps(chat(many))))
    # the refusal names the sentence by number and place, not by its words (round 37)
    error = r.json()["error"]
    assert r.status_code == 400 and f"sentence 10 (characters {many.index('Every')}-" in error["message"], error
    assert "television" not in r.text
    r = post(url, script(sse(*words_stream(many)), ctype="text/event-stream"), stream=True)
    assert "content_filter" in r.text and "television" not in "".join(r.text.split("data: [DONE]")[0].split("content_filter")[0])


@pytest.mark.parametrize("answer", ["Возврат возможен в течение 90 дней.", "退货期限为九十天。", GOOD + " 退货期限为九十天。"])
def test_scripts_the_model_cannot_judge_are_blocked(gw: tuple[str, Telemetry], answer: str) -> None:
    url, _ = gw
    r = post(url, script(dumps(chat(answer), ensure_ascii=False) if False else json.dumps(chat(answer), ensure_ascii=False).encode()))
    assert r.status_code == 400 and "script the model was not trained on" in r.json()["error"]["message"]


def test_yes_no_fragment_is_judged_with_the_question(gw: tuple[str, Telemetry]) -> None:
    url, _ = gw
    r = post(url, script(dumps(chat("Sure! Yes, they can."))), question="Can gift cards be returned?")
    assert r.status_code == 400
    good = script(dumps(chat("No, they cannot.")))
    assert_delivered(post(url, good, question="Can gift cards be returned?"), good)


@pytest.mark.parametrize("answer", ["Gift cards can be returned.", "Yes, gift cards can be returned within 30 days.",
                                    "Refunds are not issued to the original payment method."])
def test_polarity_flip_built_from_context_words_is_blocked(gw: tuple[str, Telemetry], answer: str) -> None:
    # every word is in the context, so lexical signals say "supported": the model's contradiction must decide
    url, _ = gw
    assert_blocked(post(url, script(dumps(chat(answer)))))
    copy = script(dumps(chat("Gift cards cannot be returned. " + GOOD2)))  # copies of context sentences pass
    assert_delivered(post(url, copy), copy)


# --------------------------------------------------------------------------- requests that once crashed
@pytest.mark.parametrize("body", [
    b'{"model": "m", "messages": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    b'{"model": "m", "messages": 5}',
    b'{"model": "m", "messages": [{"role": "user", "content": "Hi \\ud800"}]}',
    b'{"model": "m", "messages": [{"role": "user", "content": 5}]}',
    b'{"model": "m", "messages": [], "contexts": "one string"}',
    b'{"model": "m", "messages": [], "stream": "yes"}',
    b"[1, 2]",
    b"\xff\xfe",
], ids=["deep nesting", "messages number", "lone surrogate", "content number", "contexts string", "stream string",
        "array body", "not utf-8"])
def test_malformed_requests_get_a_400(gw: tuple[str, Telemetry], body: bytes) -> None:
    url, _ = gw
    r = httpx.post(url + "/v1/chat/completions", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["type"] == "invalid_request_error" and r.json()["error"]["message"]


def test_trailing_slash_does_not_walk_around_the_guard(gw: tuple[str, Telemetry]) -> None:
    url, _ = gw
    for path in ("/v1/chat/completions/", "/v1//chat/completions"):
        assert_blocked(post(url, script(dumps(chat(BAD))), path))


def test_the_openai_sdk_never_sees_the_claim(gw: tuple[str, Telemetry]) -> None:
    url, _ = gw
    client = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
    for build in (JSON_CASES["n=2"], JSON_CASES["tool_calls arguments"]):
        with pytest.raises(openai.BadRequestError, match="blocked by guardrail"):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": Q}],
                                           extra_body={"contexts": CTX, "script": script(dumps(build(BAD)))})
    stream = client.chat.completions.create(model="m", messages=[{"role": "user", "content": Q}], stream=True,
                                            extra_body={"contexts": CTX, "script": script(
                                                SSE_CASES["two choices in one event"](BAD), ctype="text/event-stream")})
    chunks = list(stream)
    text = "".join(c.delta.content or "" for ch in chunks for c in ch.choices)
    assert MARK not in text and chunks[-1].choices[0].finish_reason == "content_filter"


# --------------------------------------------------------------------------- load and flag mode
def test_timeouts_under_load_do_not_deliver(upstream: str, evaluator: Evaluator) -> None:
    """A latency budget no check can meet: every answer is unchecked, so block mode blocks every one."""
    import concurrent.futures

    telemetry = Telemetry(CollectorRegistry(), route="gateway", model="upstream")
    # no caches: this answer was checked before in the module, and a cached check can finish within the budget
    uncached = Evaluator(nli=NLIScorer(default_nli_model(), cache_size=0), embedder=EmbeddingScorer(cache_size=0))
    guard = Guard(uncached, Policy(action="block", latency_budget_s=0.001), observer=telemetry)
    with llm_server.serve(create_gateway(upstream, guard, telemetry), lifespan="on") as url:
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            rs = list(pool.map(lambda _: post(url, script(dumps(chat(BAD)))), range(16)))
    assert all(r.status_code == 400 and r.json()["error"]["code"] == "unchecked" for r in rs)
    assert telemetry.registry.get_sample_value("guardrail_verdicts_total",
                                               {**LABELS, "action": "block", "outcome": "error"}) == 16
    assert (telemetry.registry.get_sample_value("guardrail_check_errors_total", {**LABELS, "reason": "timeout"}) or 0) >= 1


def test_flag_mode_marks_and_counts_what_it_could_not_check(upstream: str, evaluator: Evaluator) -> None:
    telemetry = Telemetry(CollectorRegistry(), route="gateway", model="upstream")
    guard = Guard(evaluator, Policy(action="flag"), observer=telemetry)
    with llm_server.serve(create_gateway(upstream, guard, telemetry), lifespan="on") as url:
        raw = dumps({"result": BAD})
        r = post(url, script(raw))
        assert r.status_code == 200 and r.content == raw and r.headers["x-guardrail-outcome"] == "unchecked"
        r = post(url, script(dumps(chat(BAD))))
        assert r.status_code == 200 and r.headers["x-guardrail-action"] == "flag"
    assert telemetry.registry.get_sample_value("guardrail_check_errors_total", {**LABELS, "reason": "unreadable"}) == 1
    assert telemetry.registry.get_sample_value("guardrail_verdicts_total",
                                               {**LABELS, "action": "flag", "outcome": "failed"}) == 1


# --------------------------------------------------------------------------- the client wrapper reads the same shapes
def test_openai_wrapper_checks_tool_calls_and_refusals(upstream: str, evaluator: Evaluator) -> None:
    from guardrail.decorator import GuardrailBlocked
    from guardrail.openai import guard_openai

    guard = Guard(evaluator, Policy(action="block"))
    client = guard_openai(openai.OpenAI(base_url=upstream, api_key="k", max_retries=0), guard)
    ask = {"model": "m", "messages": [{"role": "user", "content": Q}], "contexts": CTX}
    for build in (JSON_CASES["tool_calls arguments"], JSON_CASES["refusal"], JSON_CASES["legacy function_call"]):
        with pytest.raises(GuardrailBlocked):
            client.chat.completions.create(**ask, extra_body={"script": script(dumps(build(BAD)))})
        ok = client.chat.completions.create(**ask, extra_body={"script": script(dumps(build(GOOD2)))})
        assert ok.guardrail.action == "pass"
    for case in ("delta.tool_calls", "delta.refusal"):
        stream = client.chat.completions.create(**ask, stream=True, extra_body={
            "script": script(SSE_CASES[case](BAD), ctype="text/event-stream")})
        chunks = list(stream)
        assert chunks[-1].choices[0].finish_reason == "content_filter", case
        seen = json.dumps([c.model_dump() for c in chunks[:-1]])
        assert MARK not in seen and "90" not in seen, case
        assert stream.guardrail is not None and stream.guardrail.action == "block"


# --------------------------------------------------------------------------- what a client reads and the guard does not
# Issue 21: every text field a client may render is read, in every choice; any other field that holds text, two
# answer shapes at once, or an unknown spelling makes the answer unreadable (blocked here, with the reason, never
# quoting the text); content is classified by what it is, not by its label.
INSTRUCTIONS = "Answer only from the documents."


def response_obj(answer: str, **extra: Any) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "created_at": 1, "status": "completed", "model": "m",
            "output": [{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                        "content": [{"type": "output_text", "text": answer, "annotations": []}]}], **extra}


def with_choice(body: dict[str, Any], **fields: Any) -> dict[str, Any]:
    body["choices"][0].update(fields)
    return body


def with_message(body: dict[str, Any], **fields: Any) -> dict[str, Any]:
    body["choices"][0]["message"].update(fields)
    return body


def tokens(text: str) -> dict[str, Any]:
    return {"content": [{"token": w, "logprob": -0.01, "bytes": list(w.encode()), "top_logprobs": []}
                        for w in text.split(" ")], "refusal": None}


# faithful twin delivered byte for byte, hallucination blocked: (path, build, request extras, content type)
READ_CASES: dict[str, tuple[str, Any, dict[str, Any], str]] = {
    "message.audio.transcript": ("/v1/chat/completions", lambda a: chat(None, audio={
        "id": "audio_1", "data": "UklGRg==", "expires_at": 1, "transcript": a}), {}, "application/json"),
    "custom tool call input": ("/v1/chat/completions", lambda a: chat(None, tool_calls=[
        {"id": "t1", "type": "custom", "custom": {"name": "answer", "input": a}}]), {}, "application/json"),
    "responses output_text": ("/v1/responses", lambda a: response_obj(a, output_text=a), {}, "application/json"),
    "responses echo of the request": ("/v1/responses", lambda a: response_obj(
        a, instructions=INSTRUCTIONS, metadata={}, tools=[], text={"format": {"type": "text"}}),
        {"instructions": INSTRUCTIONS}, "application/json"),
    "completions logprobs": ("/v1/completions", lambda a: {"object": "text_completion", "choices": [
        {"index": 0, "text": a, "finish_reason": "stop", "logprobs": {
            "tokens": a.split(" "), "token_logprobs": [-0.1] * len(a.split(" ")),
            "top_logprobs": [{w: -0.1} for w in a.split(" ")], "text_offset": list(range(len(a.split(" "))))}}]},
        {}, "application/json"),
    "vendor fields": ("/v1/chat/completions", lambda a: {**with_choice(chat(a), logprobs=tokens(a), stop_reason=None,
        content_filter_results={"hate": {"filtered": False, "severity": "safe"}}), "system_fingerprint": "fp_1",
        "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}, "x_groq": {"id": "req_1"},
        "timings": {"predicted_ms": 12.5}}, {}, "application/json"),
    "JSON labelled text/event-stream": ("/v1/chat/completions", lambda a: chat(a), {}, "text/event-stream"),
}


@pytest.mark.parametrize("case", list(READ_CASES))
def test_every_text_field_is_read(gw: tuple[str, Telemetry], case: str) -> None:
    url, _ = gw
    path, build, extra, ctype = READ_CASES[case]
    assert_blocked(post(url, script(dumps(build(BAD)), ctype=ctype), path, **extra))
    good = script(dumps(build(GOOD2)), ctype=ctype)
    assert_delivered(post(url, good, path, **extra), good)


def _chat_and_output(a: str) -> dict[str, Any]:
    return {**chat(GOOD), "output": response_obj(a)["output"]}


# never delivered: (path, body, content type, a word of the reason)
UNREADABLE_CASES: dict[str, tuple[str, bytes, str, str]] = {
    "choices and output": ("/v1/chat/completions", dumps(_chat_and_output(BAD)), "application/json", "two answer shapes"),
    "object response with choices": ("/v1/responses", dumps({**_chat_and_output(BAD), "object": "response"}),
                                     "application/json", "two answer shapes"),
    "completions choice with message and text": ("/v1/completions", dumps({"object": "text_completion", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": GOOD}, "text": BAD}]}), "application/json",
        "two answer shapes"),
    "chat and completion choices": ("/v1/chat/completions", dumps({"choices": [
        {"index": 0, "message": {"role": "assistant", "content": GOOD}}, {"index": 1, "text": BAD}]}),
        "application/json", "two answer shapes"),
    "unknown top-level field": ("/v1/chat/completions", dumps({**chat(GOOD), "explanation": BAD}), "application/json",
                                "does not know"),
    "unknown choice field": ("/v1/chat/completions", dumps(with_choice(chat(GOOD), note={"text": [BAD]})),
                             "application/json", "does not know"),
    "unknown message field": ("/v1/chat/completions", dumps(with_message(chat(GOOD), summary=BAD)), "application/json",
                              "does not know"),
    "field name is the text": ("/v1/chat/completions", dumps({**chat(GOOD), BAD: 1}), "application/json", "name"),
    "text in usage": ("/v1/chat/completions", dumps({**chat(GOOD), "usage": {"details": {"note": BAD}}}),
                      "application/json", "identifier"),
    "text in model": ("/v1/chat/completions", dumps({**chat(GOOD), "model": BAD}), "application/json", "identifier"),
    "annotation title": ("/v1/chat/completions", dumps(with_message(chat(GOOD), annotations=[{"type": "url_citation",
        "url_citation": {"url": "https://example.com", "title": BAD, "start_index": 0, "end_index": 5}}])),
        "application/json", "names no source"),
    "a sentence as a logprobs token": ("/v1/chat/completions", dumps(with_choice(chat(GOOD), logprobs={"content": [
        {"token": BAD, "logprob": 0.0, "bytes": None, "top_logprobs": []}]})), "application/json", "token"),
    "instructions the request did not send": ("/v1/responses", dumps(response_obj(GOOD, instructions=BAD)),
                                              "application/json", "did not send"),
    "the same key twice": ("/v1/chat/completions", dumps(chat(GOOD))[:-1] + b', "choices": '
                           + json.dumps(chat(BAD)["choices"]).encode() + b"}", "application/json", "twice"),
    "neither JSON nor SSE, labelled text/event-stream": ("/v1/chat/completions", BAD.encode(), "text/event-stream",
                                                         "not valid JSON"),
}


@pytest.mark.parametrize("case", list(UNREADABLE_CASES))
def test_text_the_guard_does_not_read_is_never_delivered(gw: tuple[str, Telemetry], case: str) -> None:
    url, _ = gw
    path, body, ctype, reason = UNREADABLE_CASES[case]
    r = post(url, script(body, ctype=ctype), path)
    assert r.status_code == 400 and r.json()["error"]["code"] == "unchecked", r.text[:300]
    assert reason in r.json()["error"]["message"]
    assert MARK not in r.text  # the reason names the field, never the text in it


def test_output_text_that_is_not_the_output_is_read_too(gw: tuple[str, Telemetry]) -> None:
    url, _ = gw
    assert_blocked(post(url, script(dumps(response_obj(GOOD2, output_text=BAD))), "/v1/responses"))


# --------------------------------------------------------------------------- streams
def responses_stream(text: str, *, deltas: bool = True, done: tuple[str, ...] = ("text", "part", "item", "completed"),
                     instructions: str | None = None) -> list[dict[str, Any]]:
    """A Responses API stream as OpenAI sends it; ``deltas``/``done`` choose which events carry the text."""
    at = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    part = {"type": "output_text", "text": text, "annotations": []}
    item = {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "content": [part]}
    response = {"id": "resp_1", "object": "response", "created_at": 1, "status": "in_progress", "model": "m",
                "instructions": instructions, "output": []}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": response}]
    if deltas:
        events += [{"type": "response.output_item.added", "output_index": 0, "item": {**item, "content": []}},
                   {"type": "response.content_part.added", **at, "part": {**part, "text": ""}}]
        words = [w + " " for w in text.split(" ")]
        words[-1] = words[-1].rstrip()
        events += [{"type": "response.output_text.delta", **at, "delta": w} for w in words]
    if "text" in done:
        events.append({"type": "response.output_text.done", **at, "text": text})
    if "part" in done:
        events.append({"type": "response.content_part.done", **at, "part": part})
    if "item" in done:
        events.append({"type": "response.output_item.done", "output_index": 0, "item": item})
    if "completed" in done:
        events.append({"type": "response.completed",
                       "response": {**response, "status": "completed", "output": [item], "usage": {"input_tokens": 1}}})
    return [{**ev, "sequence_number": i} for i, ev in enumerate(events)]


def spelled(payloads: list[Any], field: bytes = b"data: ", end: bytes = b"\n", bom: bool = False,
            indent: int | None = None, extra: bytes = b"") -> list[bytes]:
    """An event stream spelled as the WHATWG rules allow: the ``data`` field with or without its space, any line end,
    multi-line data (``indent``), comments and other fields (``extra``), a BOM first."""
    out = [b"\xef\xbb\xbf"] if bom else []
    for p in [*payloads, "[DONE]"]:
        text = p if isinstance(p, str) else json.dumps(p, indent=indent)
        out.append(extra + b"".join(field + line.encode() + end for line in text.split("\n")) + end)
    return out


SSE_READ_CASES: dict[str, tuple[str, Any, dict[str, Any]]] = {
    "responses: the whole event sequence": ("/v1/responses", lambda a: sse(
        *responses_stream(a, instructions=INSTRUCTIONS), done=False), {"instructions": INSTRUCTIONS}),
    "responses: output_text.done only": ("/v1/responses", lambda a: sse(
        *responses_stream(a, deltas=False, done=("text",)), done=False), {}),
    "responses: content_part.done only": ("/v1/responses", lambda a: sse(
        *responses_stream(a, deltas=False, done=("part",)), done=False), {}),
    "responses: output_item.done only": ("/v1/responses", lambda a: sse(
        *responses_stream(a, deltas=False, done=("item",)), done=False), {}),
    "responses: response.completed only": ("/v1/responses", lambda a: sse(
        *responses_stream(a, deltas=False, done=("completed",)), done=False), {}),
    "delta.audio.transcript": ("/v1/chat/completions", lambda a: sse(
        *[chunk({"audio": {"id": "a1", "transcript": w + " "}}) for w in a.split(" ")], chunk({}, finish="stop")), {}),
    "data: without a space": ("/v1/chat/completions", lambda a: spelled(words_stream(a), field=b"data:"), {}),
    "CRLF line ends, comments, event names": ("/v1/chat/completions", lambda a: spelled(
        words_stream(a), end=b"\r\n", extra=b": keep-alive\r\nevent: message\r\nid: 1\r\n"), {}),
}


@pytest.mark.parametrize("case", list(SSE_READ_CASES))
def test_every_stream_text_is_read(gw: tuple[str, Telemetry], case: str) -> None:
    url, _ = gw
    path, build, extra = SSE_READ_CASES[case]
    assert_blocked(post(url, script(build(BAD), ctype="text/event-stream"), path, stream=True, **extra))
    good = script(build(GOOD), ctype="text/event-stream")
    assert_delivered(post(url, good, path, stream=True, **extra), good)


def test_an_event_stream_labelled_json_with_a_bom_is_read_as_one(gw: tuple[str, Telemetry]) -> None:
    """Read as a stream, and refused as one: a BOM before the first event is skipped by browsers and not by the OpenAI
    SDK, which drops that event (round 29), so the two would show different answers."""
    url, _ = gw
    one = lambda a: spelled([chunk({"role": "assistant", "content": a}), chunk({}, finish="stop")], bom=True)  # noqa: E731
    for answer in (BAD, GOOD):
        r = post(url, script(one(answer)), stream=True)
        assert_blocked(r)
        assert "byte order mark" in r.text and MARK not in r.text
    good = script(spelled([chunk({"role": "assistant", "content": GOOD}), chunk({}, finish="stop")]))
    r = post(url, good, stream=True)
    assert r.status_code == 200 and r.content == raw_of(good)


def _responses_then(a: str, event: dict[str, Any]) -> list[bytes]:
    return sse(*responses_stream(GOOD, done=()), event, done=False)


SSE_UNREADABLE_CASES: dict[str, tuple[str, list[bytes]]] = {
    "a done event that disagrees with the deltas": ("/v1/responses", _responses_then(BAD, {
        "type": "response.output_text.done", "item_id": "msg_1", "output_index": 0, "content_index": 0, "text": BAD})),
    "response.completed with another answer": ("/v1/responses", _responses_then(BAD, {
        "type": "response.completed", "response": response_obj(BAD)})),
    "a chat chunk with a response type": ("/v1/chat/completions", sse(
        *words_stream(GOOD)[:2], {**chunk({"content": "Items "}), "type": "response.output_text.delta", "delta": BAD},
        *words_stream(GOOD)[2:])),
    "chat chunks then Responses events": ("/v1/chat/completions", sse(
        *words_stream(GOOD)[:-1], {"type": "response.output_text.delta", "delta": BAD}, words_stream(GOOD)[-1])),
    "an unknown field in a delta": ("/v1/chat/completions", sse(
        *words_stream(GOOD)[:2], chunk({"content": "x", "note": BAD}), *words_stream(GOOD)[2:])),
    "a space before data:": ("/v1/chat/completions", sse(*words_stream(GOOD)[:2]) [:-1] + [
        b" data: " + json.dumps(chunk({"content": BAD})).encode() + b"\n\n"] + sse(*words_stream(GOOD)[2:])),
    "a second BOM": ("/v1/chat/completions", [b"\xef\xbb\xbf\xef\xbb\xbf"] + sse(*words_stream(BAD))),
    "a BOM before the first event": ("/v1/chat/completions", [b"\xef\xbb\xbf"] + sse(*words_stream(GOOD))),
    # clients that split lines at LF only (aiohttp's line iteration) or read each data line as one chunk (an httpx
    # iter_lines loop) would not read these events as browsers do (round 30)
    "CR line ends": ("/v1/chat/completions", spelled(words_stream(GOOD), end=b"\r")),
    "multi-line data": ("/v1/chat/completions", spelled(words_stream(GOOD), indent=1, end=b"\r\n")),
}


@pytest.mark.parametrize("case", list(SSE_UNREADABLE_CASES))
def test_stream_text_the_guard_does_not_read_is_never_delivered(gw: tuple[str, Telemetry], case: str) -> None:
    url, _ = gw
    path, chunks = SSE_UNREADABLE_CASES[case]
    r = post(url, script(chunks, ctype="text/event-stream"), path, stream=True)
    assert_blocked(r)
    assert "cannot read" in r.text and MARK not in r.text


def test_a_done_event_that_adds_a_claim_is_checked(gw: tuple[str, Telemetry]) -> None:
    url, _ = gw
    full = GOOD + " " + BAD
    r = post(url, script(_responses_then(full, {"type": "response.output_text.done", "item_id": "msg_1",
                                                "output_index": 0, "content_index": 0, "text": full}),
                         ctype="text/event-stream"), "/v1/responses", stream=True)
    assert_blocked(r)


def test_the_openai_sdk_never_sees_text_the_guard_did_not_read(gw: tuple[str, Telemetry]) -> None:
    url, _ = gw
    client = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
    for body in (READ_CASES["message.audio.transcript"][1](BAD), with_message(chat(GOOD), summary=BAD)):
        with pytest.raises(openai.BadRequestError, match="blocked by guardrail"):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": Q}],
                                           extra_body={"contexts": CTX, "script": script(dumps(body))})
    with pytest.raises(openai.BadRequestError, match="blocked by guardrail"):
        client.responses.create(model="m", input=Q, extra_body={
            "contexts": CTX, "script": script(dumps(response_obj(GOOD2, output_text=BAD)))})
    events = list(client.responses.create(model="m", input=Q, stream=True, extra_body={
        "contexts": CTX, "script": script(sse(*responses_stream(BAD, deltas=False, done=("completed",)), done=False),
                                          ctype="text/event-stream")}))
    assert events[-1].type == "response.incomplete"  # the stop event (its guardrail field names the failing claim)
    assert MARK not in json.dumps([e.model_dump() for e in events[:-1]])
    good = client.responses.create(model="m", input=Q, extra_body={
        "contexts": CTX, "script": script(dumps(response_obj(GOOD2, output_text=GOOD2)))})
    assert good.output_text == GOOD2
