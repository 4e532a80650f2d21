"""Block mode, round 49 (an attack on the middleware, the gateway, the OpenAI wrapper and the CLI with shapes nobody
had listed, BENCHMARKS.md): an answer under an error status whose compression the guard cannot decode, a 1xx status
with a body, a conversation of hundreds of "Explain." turns, JSON rows past Python's number and nesting limits, and a
stream cut that wrote one choice's text into another.

Real model, real middleware and gateway; each attack with its faithful twin."""

from __future__ import annotations

import asyncio
import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from block_mode import block_guard  # noqa: F401 - fixture
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.testclient import TestClient
from test_bypass import (CTX, GOOD, Q, assert_blocked, assert_delivered, chat, dumps, evaluator, gw,  # noqa: F401
                         script, upstream)

from guardrail import wire
from guardrail.asgi import GuardrailMiddleware, record
from guardrail.checks.claims import question_in_conversation
from guardrail.guard import Guard
from guardrail.telemetry import Telemetry

BAD = "Items can be returned within 90 days of delivery."


class _Raw(Response):
    """A response with exactly these status, headers and body bytes."""

    def __init__(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        self.status_code = status
        self.body = body
        self.background = None
        self.raw_headers = [(b"content-type", b"application/json"), *headers,
                            (b"content-length", str(len(body)).encode())]


def _app(guard: Guard, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> GuardrailMiddleware:
    async def ask(request: Request) -> Response:
        record(query=Q, contexts=CTX)
        return _Raw(status, headers, body)

    return GuardrailMiddleware(Starlette(routes=[Route("/ask", ask, methods=["POST"])]), guard, routes=["/ask"])


def _gzip_trailing(body: bytes) -> tuple[list[tuple[bytes, bytes]], bytes]:
    return [(b"content-encoding", b"gzip")], gzip.compress(body) + b"\n"  # httpx ignores bytes after the member


def _identity_then_gzip(body: bytes) -> tuple[list[tuple[bytes, bytes]], bytes]:
    return [(b"content-encoding", b"identity"), (b"content-encoding", b"gzip")], gzip.compress(body)


def _unknown_coding(body: bytes) -> tuple[list[tuple[bytes, bytes]], bytes]:
    return [(b"content-encoding", b"x-vendor")], body


@pytest.mark.parametrize("shape", [_gzip_trailing, _identity_then_gzip, _unknown_coding])
@pytest.mark.parametrize("status", [500, 200])
def test_an_answer_the_guard_cannot_decode_is_never_delivered_unread(block_guard: Guard, shape: Any,
                                                                     status: int) -> None:
    """Compressed so that the guard's decoder refuses it and a lenient client (httpx) may not: under an error status
    as under a 200, the body is refused (never passed on as "an error, as sent")."""
    headers, body = shape(dumps(chat(BAD)))
    client = TestClient(_app(block_guard, status, headers, body))
    r = client.post("/ask", json={})
    assert r.status_code == 400 and "90 days" not in r.text, (r.status_code, r.text)
    assert r.json()["error"]["type"] == "guardrail_blocked"


def test_two_content_encoding_fields_are_one_list(block_guard: Guard) -> None:
    """``identity`` then ``gzip`` is a gzip body to every HTTP client: the guard decodes it and judges the answer, so
    the faithful twin is delivered (decoded) and the hallucination blocked."""
    for text, delivered in ((GOOD, True), (BAD, False)):
        headers, body = _identity_then_gzip(dumps(chat(text)))
        r = TestClient(_app(block_guard, 200, headers, body)).post("/ask", json={})
        if delivered:
            assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == GOOD, r.text
        else:
            assert r.status_code == 400 and "90 days" not in r.text, r.text


def test_a_faithful_error_answer_in_gzip_is_delivered_as_sent(block_guard: Guard) -> None:
    r = TestClient(_app(block_guard, 500, [(b"content-encoding", b"gzip")], gzip.compress(dumps(chat(GOOD))))).post(
        "/ask", json={})
    assert r.status_code == 500 and r.json()["choices"][0]["message"]["content"] == GOOD, r.text


async def _sent(app: Any) -> list[dict[str, Any]]:
    """The messages the middleware sends for one POST /ask."""
    out: list[dict[str, Any]] = []
    body = [{"type": "http.request", "body": b"{}", "more_body": False}]

    async def receive() -> dict[str, Any]:
        return body.pop(0) if body else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        out.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": "/ask", "raw_path": b"/ask", "query_string": b"", "root_path": "",
             "headers": [(b"content-type", b"application/json"), (b"content-length", b"2")],
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80)}
    await app(scope, receive, send)
    return out


@pytest.mark.parametrize("text", [BAD, GOOD])
def test_a_1xx_status_carries_no_body(block_guard: Guard, text: str) -> None:
    """An app that starts its response with a 103 and a body (which an HTTP/1.1 server may write after the 1xx head,
    where a client reads it as the final response): the body never goes out, whatever it says."""
    smuggled = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n" + dumps(chat(text))

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await receive()
        await send({"type": "http.response.start", "status": 103,
                    "headers": [(b"content-length", str(len(smuggled)).encode())]})
        await send({"type": "http.response.body", "body": smuggled, "more_body": False})

    sent = asyncio.run(_sent(GuardrailMiddleware(app, block_guard, routes=["/ask"])))
    assert sent[0]["status"] == 103
    assert b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body") == b""


# --------------------------------------------------------------------------- a conversation of form-only turns
def test_form_only_turns_are_followed_back_without_recursion() -> None:
    question = "Can I return a gift card?"
    assert question_in_conversation("Explain.", [question] + ["Explain."] * 2000) == question
    assert question_in_conversation("Are you sure?", [question] + ["Explain.", "Are you sure?"] * 500,
                                    ["No, gift cards cannot be returned."] * 1000) is not None


@pytest.mark.parametrize("stream", [False, True])
def test_hundreds_of_explain_turns_are_judged(gw: tuple[str, Telemetry], stream: bool) -> None:
    """600 user turns of "Explain." after the question (25 KB): a 500 before; now the question before them is the
    one the answer is judged against, the hallucination blocked and the faithful twin delivered."""
    messages = [{"role": "user", "content": "Can I return an item I bought 40 days ago?"}] + \
        [{"role": "user", "content": "Explain."}] * 600
    for text, delivered in ((GOOD, True), (BAD, False)):
        sid = script(dumps(chat(text)))
        r = httpx.post(gw[0] + "/v1/chat/completions", json={"model": "m", "messages": messages, "contexts": CTX,
                                                              "script": sid}, timeout=120)
        assert r.status_code != 500, r.text
        if delivered:
            assert_delivered(r, sid)
        else:
            assert_blocked(r)


# --------------------------------------------------------------------------- the CLI's rows
@pytest.mark.parametrize("row, says", [
    ('{"id": ' + "9" * 5000 + ', "question": "q", "contexts": ["c"], "response": "r"}', "number too long"),
    ('{"question": "q", "contexts": ["c"], "response": "r", "meta": ' + "[" * 100_000 + "]" * 100_000 + "}",
     "nested too deeply"),
])
def test_cli_rows_past_pythons_json_limits_are_input_errors(tmp_path: Path, row: str, says: str) -> None:
    """Exit 2 with a message that names the line, as for any malformed row (a traceback and exit 1 read to a CI job
    as "a row failed")."""
    f = tmp_path / "rows.jsonl"
    f.write_text(row + "\n")
    done = subprocess.run([sys.executable, "-m", "guardrail", "check", str(f), "--json"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert "line 1" in done.stderr and says in done.stderr and "Traceback" not in done.stderr, done.stderr[-2000:]


# --------------------------------------------------------------------------- a cut of the second choice
def test_a_cut_keeps_the_choice_it_cuts() -> None:
    """A chunk with an empty delta of choice 0 before choice 1's text: the cut piece is choice 1's."""
    payload = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [
        {"index": 0, "delta": {}, "finish_reason": None},
        {"index": 1, "delta": {"content": "Gift cards cannot be returned. Items"}, "finish_reason": None}]}
    cut = json.loads(wire.with_text(payload, "Gift cards cannot be returned. ", 1).decode().split("data: ", 1)[1])
    assert cut["choices"] == [{"index": 1, "delta": {"content": "Gift cards cannot be returned. "},
                               "finish_reason": None}]


def test_the_openai_wrapper_cut_keeps_the_choice_it_cuts() -> None:
    from openai.types.chat import ChatCompletionChunk

    from guardrail.openai import _SDKChunks

    chunk = ChatCompletionChunk.model_validate({
        "id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [
            {"index": 0, "delta": {}, "finish_reason": None},
            {"index": 1, "delta": {"content": "Gift cards cannot be returned. Items"}, "finish_reason": None}]})
    adapter = _SDKChunks.__new__(_SDKChunks)
    piece = adapter.cut(chunk, 1, "Gift cards cannot be returned. ")
    # (a chunk of two choices is not cut at all: the released prefix is not delivered, never given to choice 0)
    assert piece is None or [(c.index, c.delta.content) for c in piece.choices] == [
        (1, "Gift cards cannot be returned. ")]
    one = chunk.model_copy(update={"choices": chunk.choices[1:]})
    piece = adapter.cut(one, 1, "Gift cards cannot be returned. ")
    assert piece is not None and [(c.index, c.delta.content) for c in piece.choices] == [
        (1, "Gift cards cannot be returned. ")]
