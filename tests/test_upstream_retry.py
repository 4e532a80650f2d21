"""The gateway sends a request again when the upstream's connection fails before any byte of an answer (a kept-alive
connection the upstream closed or reset as it was reused, a refused connection), and never once an answer has begun.

The upstream here is a raw TCP server that reads each request whole and then, for the connections told to fail,
resets or closes the connection without a byte of answer (what a server does to a request that arrives on a
connection it is closing), as the real race looks on the wire."""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import llm_server
import pytest
from prometheus_client import CollectorRegistry

from guardrail.checks.evaluator import Evaluator
from guardrail.guard import Guard
from guardrail.policy import Policy
from guardrail.scorers.nli import NLIScorer
from guardrail.server import create_gateway
from guardrail.telemetry import Telemetry

CTX = ["Items can be returned within 30 days of delivery. Refunds are issued to the original payment method."]
MSGS = [{"role": "user", "content": "How do returns work?"}]
ANSWER = "Items can be returned within 30 days of delivery."
LABELS = {"route": "gateway", "model": "fake"}


def completion(text: str) -> bytes:
    return json.dumps({"id": "c1", "object": "chat.completion", "created": 1, "model": "fake",
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                    "finish_reason": "stop"}]}).encode()


def chunk(text: str) -> bytes:
    return ("data: " + json.dumps({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "fake",
                                   "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]})
            + "\n\n").encode()


def _read_request(conn: socket.socket) -> bytes:
    """One HTTP/1.1 request (headers and a content-length body), or b"" when the peer closed first."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        if not piece:
            return b""
        data += piece
    head, _, rest = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(rest) < length:
        piece = conn.recv(65536)
        if not piece:
            break
        rest += piece
    return head + b"\r\n\r\n" + rest


class Upstream:
    """Connections ``k`` in ``failures`` get ``failures[k]`` ("reset": RST, "close": FIN, with no byte of answer;
    "mid-stream": the head of an SSE answer and one event, then RST); the others the answer in ``body``."""

    def __init__(self, failures: dict[int, str], body: bytes, ctype: str = "application/json") -> None:
        self.failures, self.body, self.ctype = failures, body, ctype
        self.requests = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._connection, args=(conn,), daemon=True).start()

    def _connection(self, conn: socket.socket) -> None:
        with conn:
            while _read_request(conn):
                k = self.requests
                self.requests += 1
                how = self.failures.get(k)
                if how == "reset" or how == "mid-stream":
                    if how == "mid-stream":
                        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                                     b"transfer-encoding: chunked\r\n\r\n")
                        event = chunk(ANSWER + " ")
                        conn.sendall(b"%x\r\n%s\r\n" % (len(event), event))
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    return
                if how == "close":
                    conn.shutdown(socket.SHUT_RDWR)
                    return
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: %s\r\ncontent-length: %d\r\n\r\n%s"
                             % (self.ctype.encode(), len(self.body), self.body))

    def close(self) -> None:
        self.sock.close()


@pytest.fixture(scope="module")
def evaluator(tiny_nli: Path) -> Evaluator:
    return Evaluator(nli=NLIScorer(tiny_nli))


@contextmanager
def gateway(upstream: str, evaluator: Evaluator, **options: object) -> Iterator[tuple[str, Telemetry]]:
    telemetry = Telemetry(CollectorRegistry(), route="gateway", model="fake")
    guard = Guard(evaluator, Policy(retrieval_relevance=None, action="block", faithfulness=0.0), observer=telemetry)
    app = create_gateway(upstream, guard, telemetry, timeout=httpx.Timeout(10.0, connect=2.0), **options)
    with llm_server.serve(app, lifespan="on") as url:
        yield url, telemetry


def post(url: str, stream: bool = False) -> httpx.Response:
    return httpx.post(url + "/v1/chat/completions", timeout=20,
                      json={"model": "fake", "messages": MSGS, "contexts": CTX, "stream": stream})


def count(t: Telemetry, reason: str) -> float:
    return t.registry.get_sample_value("guardrail_upstream_errors_total", {**LABELS, "reason": reason}) or 0.0


@pytest.mark.parametrize("how", ["reset", "close"])
def test_a_request_whose_connection_fails_before_any_answer_is_sent_again(evaluator: Evaluator, how: str) -> None:
    body = completion(ANSWER)
    up = Upstream({0: how, 1: how}, body)
    try:
        with gateway(up.url, evaluator) as (url, t):
            r = post(url)
            assert r.status_code == 200, r.text[:300]
            assert r.content == body  # delivered intact, from the third attempt
            assert up.requests == 3
            assert count(t, "retried") == 2 and count(t, "connect") == 0
    finally:
        up.close()


def test_the_last_failure_reaches_the_caller_when_every_attempt_fails(evaluator: Evaluator) -> None:
    up = Upstream({0: "reset", 1: "reset", 2: "reset"}, completion(ANSWER))
    try:
        with gateway(up.url, evaluator, upstream_retries=2) as (url, t):
            r = post(url)
            assert r.status_code == 502
            error = r.json()["error"]
            assert error["code"] == "upstream_unreachable" and "after 3 attempts" in error["message"]
            assert up.requests == 3
            assert count(t, "retried") == 2 and count(t, "connect") == 1
    finally:
        up.close()


def test_retries_can_be_turned_off(evaluator: Evaluator) -> None:
    up = Upstream({0: "reset"}, completion(ANSWER))
    try:
        with gateway(up.url, evaluator, upstream_retries=0) as (url, t):
            r = post(url)
            assert r.status_code == 502 and r.json()["error"]["code"] == "upstream_unreachable"
            assert up.requests == 1 and count(t, "retried") == 0
            assert post(url).status_code == 200  # the next request is answered (connection 1 is healthy)
    finally:
        up.close()


def test_a_stream_that_breaks_after_its_answer_began_is_not_sent_again(evaluator: Evaluator) -> None:
    """Once the upstream's answer has begun, sending the request again could deliver two different answers: the
    stream ends with the gateway's error event instead, and nothing unchecked is released."""
    up = Upstream({0: "mid-stream"}, completion(ANSWER))
    try:
        with gateway(up.url, evaluator) as (url, t):
            r = post(url, stream=True)
            assert up.requests == 1
            assert count(t, "retried") == 0 and count(t, "stream") == 1
            assert "upstream" in r.text and "[DONE]" not in r.text
    finally:
        up.close()


def test_a_refused_connection_is_tried_again_then_reported(evaluator: Evaluator) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with gateway(f"http://127.0.0.1:{port}/v1", evaluator) as (url, t):
        r = post(url)
        assert r.status_code == 502 and "after 3 attempts" in r.json()["error"]["message"]
        assert count(t, "retried") == 2 and count(t, "connect") == 1


def test_a_negative_retry_count_is_refused(evaluator: Evaluator) -> None:
    from guardrail.errors import ConfigurationError

    telemetry = Telemetry(CollectorRegistry())
    guard = Guard(evaluator, Policy(retrieval_relevance=None), observer=telemetry)
    with pytest.raises(ConfigurationError, match="upstream_retries"):
        create_gateway("http://127.0.0.1:9/v1", guard, telemetry, upstream_retries=-1)
