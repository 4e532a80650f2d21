"""Block mode, round 20 (wire): line ends some clients honour, and the cost of reading an answer.

- B2: a client that splits an event stream as ``str.splitlines`` does (httpx's ``iter_lines``) also ends lines at VT,
  FF, FS, GS, RS, NEL, U+2028 and U+2029. Such a character in a comment or an ``event``/``id``/``retry`` line, or in a
  data line's JSON string before what reads as a ``data:`` field, showed that client a data line the guard never
  read. The event is unreadable now (a stream stopped in block mode, with the reason); ordinary comments, id, event
  and retry lines, and an answer whose text holds U+2028 (escaped, or raw between sentences), go out byte-intact.
- R1: reading an upstream answer ran on the event loop (a 30 MB JSON answer stalled every request for 12-19 s, and 10M
  keep-alive comments for 134 s). A large body is read in a worker thread, and a stream may send at most
  ``max_stream_events`` events, comments and empty events included. The timing is in
  ``benchmarks/healthz_stall.py``; these tests hold the behaviour.

Real gateway (uvicorn) in front of a scripted upstream, the shipped model, default block policy.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import llm_server
import pytest
from prometheus_client import CollectorRegistry
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.testclient import TestClient
from test_bypass import (  # noqa: F401 - fixtures
    BAD,
    CTX,
    GOOD,
    GOOD2,
    Q,
    assert_blocked,
    assert_delivered,
    chat,
    chunk,
    dumps,
    evaluator,
    gw,
    post,
    script,
    sse,
    upstream,
    words_stream,
)

from guardrail import wire
from guardrail.asgi import GuardrailMiddleware
from guardrail.checks.evaluator import Evaluator
from guardrail.errors import ConfigurationError, UnreadableError
from guardrail.guard import Guard
from guardrail.policy import Policy
from guardrail.server import create_gateway
from guardrail.server_request import RequestLimits
from guardrail.telemetry import Telemetry
from guardrail.wire.fields import walk

SSE = "text/event-stream"


def _data(payload: Any) -> str:
    return "data: " + json.dumps(payload) + "\n\n"


def _iter_lines_text(url: str, sid: str) -> tuple[int, str]:
    """What a client that reads the stream with httpx's ``iter_lines()`` (``str.splitlines``) shows."""
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": Q}], "contexts": CTX, "script": sid}
    texts = []
    with httpx.stream("POST", url + "/v1/chat/completions", json=body, timeout=60) as r:
        for line in r.iter_lines():
            if line.startswith("data: ") and line[6:] != "[DONE]":
                try:
                    payload = json.loads(line[6:])
                except ValueError:
                    continue
                for c in payload.get("choices") or []:
                    texts.append((c.get("delta") or {}).get("content") or "")
        return r.status_code, "".join(texts)


# --------------------------------------------------------------------------- B2: line ends some clients honour
SMUGGLERS = {
    "comment U+2028": ": keep-alive\u2028", "comment U+2029": ":\u2029", "comment NEL": ": x\x85",
    "comment VT": ": x\x0b", "comment FF": ": x\x0c", "comment FS": ": x\x1c", "comment GS": ": x\x1d",
    "id U+2028": "id: 7\u2028", "event U+2028": "event: message\u2028", "retry RS": "retry: 5\x1e",
    "event NEL": "event: message\x85",
}


@pytest.mark.parametrize("case", list(SMUGGLERS))
def test_a_line_end_in_a_comment_or_field_line_smuggles_no_data_line(gw: tuple[str, Telemetry], case: str) -> None:
    url, _ = gw
    smuggled = SMUGGLERS[case] + "data: " + json.dumps(chunk({"content": " " + BAD})) + "\n\n"
    chunks = [_data(chunk({"role": "assistant", "content": ""})), _data(chunk({"content": GOOD2})), smuggled,
              _data(chunk({}, finish="stop")), "data: [DONE]\n\n"]
    sid = script([c.encode() for c in chunks], ctype=SSE)
    r = post(url, sid, stream=True)
    assert_blocked(r)
    assert "line end to some clients" in r.text
    status, shown = _iter_lines_text(url, sid)
    assert status == 200 and "90 days" not in shown and "Mars" not in shown, shown


def test_a_raw_line_end_inside_a_data_lines_string_smuggles_no_data_line(gw: tuple[str, Telemetry]) -> None:
    """A JSON string may hold a raw U+2028 (or NEL, U+2029): the guard reads one data line, a splitlines client two,
    and the second is a data field (here not JSON to the client; a key that spans the split can make both lines
    JSON: ``{"<LS>data: {":1,": 5}<LS>":0}``). The rule is on the line, whatever the second reading holds."""
    url, _ = gw
    inner = json.dumps(chunk({"content": " " + BAD}))
    in_text = "data: " + json.dumps(chunk({"content": " " + GOOD2 + "\u2028data: " + inner}), ensure_ascii=False)
    polyglot = 'data: {"\u2028data: {":1,": 5}\u2028":0}'
    assert json.loads(polyglot[6:]) and json.loads(polyglot.split("\u2028")[1][6:])  # both readings are JSON
    for line in (in_text, polyglot, in_text.replace("\u2028", "\x85"), in_text.replace("\u2028", "\u2029")):
        chunks = [_data(chunk({"role": "assistant", "content": ""})), _data(chunk({"content": GOOD})), line + "\n\n",
                  _data(chunk({}, finish="stop")), "data: [DONE]\n\n"]
        sid = script([c.encode() for c in chunks], ctype=SSE)
        r = post(url, sid, stream=True)
        assert_blocked(r)
        assert "before a data field" in r.text
        status, shown = _iter_lines_text(url, sid)
        assert "90 days" not in shown, shown


def test_ordinary_comments_and_fields_and_a_line_separator_in_the_text_go_out_byte_intact(
        gw: tuple[str, Telemetry]) -> None:
    url, _ = gw
    text_ls = json.dumps(chunk({"content": GOOD + "\u2028"}), ensure_ascii=False)  # raw U+2028 between sentences
    text_esc = json.dumps(chunk({"content": " " + GOOD2 + "\u2029"}))  # escaped: \u2029 in ASCII
    chunks = [": keep-alive\n\n", "retry: 3000\n\n", "id: 7\nevent: message\n" + _data(chunk({"role": "assistant",
                                                                                                "content": ""})),
              "data: " + text_ls + "\n\n", ":\nid: 8\ndata: " + text_esc + "\n\n",
              _data(chunk({}, finish="stop")), "data: [DONE]\n\n"]
    sid = script([c.encode() for c in chunks], ctype=SSE)
    assert_delivered(post(url, sid, stream=True), sid)
    # Cyrillic "х" ends in byte 0x85 (a NEL to a Latin-1 reader): followed by no data field, it is text
    sid = script(b"".join(c.encode() for c in [_data(chunk({"content": GOOD + " \u0445"})),
                                                _data(chunk({}, finish="stop")), "data: [DONE]\n\n"]), ctype=SSE)
    r = post(url, sid, stream=True)
    assert r.status_code == 200 and "line end to some clients" not in r.text


@pytest.mark.parametrize("line", [b": a\x0bb", b":\xe2\x80\xa8", b": \xc2\x85", b": x\x85", b"id: 1\x1e",
                                  b"event: e\x1d", b"retry: 1\x0c"])
def test_the_parser_refuses_a_line_end_in_any_line_but_data(line: bytes) -> None:
    parser = wire.SSEParser()
    events = parser.feed(line + b"\n" + b'data: {"a": 1}\n\n') + parser.close()
    assert [e.malformed is not None for e in events] == [True]


@pytest.mark.parametrize(("value", "smuggles"), [
    ('{"a":"x\u2028data: {}"}', True), ('{"a":"x\u2029 Data : 1"}', True), ('{"a":"x\u0085\ufeffdata:"}', True),
    ('{"a":"\u0445data: 1"}', True),  # the 0x85 byte of "х" to a Latin-1 reader
    ('{"a":"x\u2028y"}', False), ('{"a":"x\u2028 database"}', False), ('{"a":"x\\u2028data: {}"}', False),
    ('{"a":"\u0445\u0445 data"}', False),
])
def test_a_data_line_is_unreadable_only_when_a_split_shows_a_data_field(value: str, smuggles: bool) -> None:
    parser = wire.SSEParser()
    events = parser.feed(b"data: " + value.encode() + b"\n\n")
    assert len(events) == 1 and (events[0].malformed is not None) == smuggles, events[0]


# --------------------------------------------------------------------------- R1: the cost of reading an answer
@pytest.fixture(scope="module")
def capped_gw(upstream: str, evaluator: Evaluator) -> Iterator[str]:
    telemetry = Telemetry(CollectorRegistry(), route="gateway", model="upstream")
    guard = Guard(evaluator, Policy(action="block"), observer=telemetry)
    limits = RequestLimits(max_stream_events=50)
    with llm_server.serve(create_gateway(upstream, guard, telemetry, limits=limits), lifespan="on") as url:
        yield url


def _with_comments(comments: int, *, per_piece: int) -> list[bytes]:
    head = [_data(chunk({"role": "assistant", "content": ""})), _data(chunk({"content": GOOD}))]
    tail = [_data(chunk({}, finish="stop")), "data: [DONE]\n\n"]
    pieces = [":\n\n" * min(per_piece, comments - i) for i in range(0, comments, per_piece)]
    return [p.encode() for p in head + pieces + tail]


@pytest.mark.parametrize("per_piece", [1, 100])
def test_a_stream_over_the_event_cap_is_refused_with_the_reason(capped_gw: str, per_piece: int) -> None:
    r = post(capped_gw, script(_with_comments(60, per_piece=per_piece), ctype=SSE), stream=True)
    assert_blocked(r)
    assert "more than 50 events" in r.text and "max_stream_events" in r.text
    # under the cap (the 4 answer events and 40 comments): delivered as sent
    sid = script(_with_comments(40, per_piece=per_piece), ctype=SSE)
    assert_delivered(post(capped_gw, sid, stream=True), sid)


def test_the_event_cap_is_configured_with_the_other_limits(evaluator: Evaluator) -> None:
    guard = Guard(evaluator, Policy(action="block"))
    assert RequestLimits().max_stream_events == 100_000
    with pytest.raises(ConfigurationError, match="max_stream_events"):
        RequestLimits(max_stream_events=0)

    assert GuardrailMiddleware(Starlette(), guard).max_stream_events == 100_000
    with pytest.raises(ConfigurationError, match="max_stream_events"):
        GuardrailMiddleware(Starlette(), guard, max_stream_events=0)


def test_the_parser_stops_at_the_event_cap_in_one_piece() -> None:
    parser = wire.SSEParser(max_events=3)
    assert len(parser.feed(b":\n\n" * 3)) == 3
    with pytest.raises(UnreadableError, match="more than 3 events"):
        parser.feed(b":\n\n" * 1_000_000)
    closing = wire.SSEParser(max_events=1)
    closing.feed(b":\n\n")
    with pytest.raises(UnreadableError):
        closing.feed(b"data: {}")
        closing.close()  # an event left open at the end counts too


def _big_answer(text: str, zeros: int) -> bytes:
    body = chat(text)
    body["usage"] = {"prompt_tokens": 1, "completion_tokens": 2, "x": [0] * zeros, "y": [1.5] * 10}
    return dumps(body)


def test_a_large_json_answer_is_read_whole_off_the_loop(gw: tuple[str, Telemetry]) -> None:
    url, _ = gw
    bad = _big_answer(BAD, 300_000)
    assert len(bad) > 512 * 1024
    assert_blocked(post(url, script(bad)))
    sid = script(_big_answer(GOOD2, 300_000))
    assert_delivered(post(url, sid), sid)


def test_a_large_body_is_read_in_a_worker_thread_a_small_one_on_the_loop(evaluator: Evaluator) -> None:
    """Through the middleware: the response extractor runs where the body is read."""
    seen: dict[str, int] = {}

    def extractor(body: Any) -> str:
        seen["reader"] = threading.get_ident()
        return str(body["choices"][0]["message"]["content"])

    async def ask(request: Request) -> Response:
        seen["loop"] = threading.get_ident()
        zeros = int((await request.json())["zeros"])
        return Response(_big_answer(GOOD, zeros), media_type="application/json")

    guard = Guard(evaluator, Policy(action="block", retrieval_relevance=None))
    app = GuardrailMiddleware(Starlette(routes=[Route("/ask", ask, methods=["POST"])]), guard, routes=["/ask"],
                              response_extractor=extractor)
    with TestClient(app) as client:
        for zeros, off_loop in ((10, False), (300_000, True)):
            r = client.post("/ask", json={"zeros": zeros, "messages": [{"role": "user", "content": Q}],
                                          "contexts": CTX})
            assert r.status_code == 200 and r.headers["x-guardrail-action"] == "pass", r.text
            assert (seen["reader"] != seen["loop"]) == off_loop


def test_a_long_json_text_reads_the_same_numbers() -> None:
    doc = {"a": [0, -1, 10**20, 1.5, -2e-3, 1e300], "b": {"c": 3}, "s": "x" * 300_000}
    raw = json.dumps(doc).encode()
    assert wire.loads(raw) == doc
    assert type(wire.loads(raw)["a"][1]) is int and type(wire.loads(raw)["a"][3]) is float


def test_a_list_of_numbers_is_passed_over_and_a_string_among_them_is_found() -> None:
    assert list(walk({"x": [0] * 1000}, "")) == [(".x", "x", True)]
    found = [(p, s) for p, s, is_key in walk({"x": [0, 1.5, None, True, "words here", [2, "more"]]}, "") if not is_key]
    assert sorted(found) == [(".x[4]", "words here"), (".x[5][1]", "more")]


def test_a_large_request_is_parsed_once_off_the_loop(evaluator: Evaluator, monkeypatch: pytest.MonkeyPatch) -> None:
    """The middleware reads the question, the contexts, the strings an answer may echo and ``n`` from one parse of
    the request body; a body over 256 KB is parsed in a worker thread (a 10 MB request held the loop three times)."""
    import guardrail.wire

    calls: list[tuple[int, int]] = []
    real = guardrail.wire.loads

    def spy(data: bytes) -> Any:
        calls.append((len(data), threading.get_ident()))
        return real(data)

    monkeypatch.setattr(guardrail.wire, "loads", spy)
    seen: dict[str, int] = {}

    async def ask(request: Request) -> Response:
        seen["loop"] = threading.get_ident()
        return Response(dumps(chat(GOOD)), media_type="application/json")

    guard = Guard(evaluator, Policy(action="block", retrieval_relevance=None))
    app = GuardrailMiddleware(Starlette(routes=[Route("/ask", ask, methods=["POST"])]), guard, routes=["/ask"])
    with TestClient(app) as client:
        for padding, off_loop in ((0, False), (300_000, True)):
            body = json.dumps({"messages": [{"role": "user", "content": Q}],
                               "contexts": [*CTX, "Store hours vary. " * (padding // 17)]}).encode()
            calls.clear()
            r = client.post("/ask", content=body, headers={"content-type": "application/json"})
            assert r.status_code == 200 and r.headers["x-guardrail-action"] == "pass", r.text
            parses = [ident for size, ident in calls if size == len(body)]
            assert len(parses) == 1  # question, contexts, echo and n: one parse
            assert (parses[0] != seen["loop"]) == off_loop
    guard.close()
