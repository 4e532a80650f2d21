"""GuardrailMiddleware where apps put it: under a Mount (root_path), with OPTIONS handlers, behind CORS (real uvicorn,
real model)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import llm_server
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route

from guardrail.asgi import GuardrailMiddleware
from guardrail.checks.evaluator import Evaluator
from guardrail.guard import Guard
from guardrail.policy import Policy
from guardrail.scorers.nli import NLIScorer, default_nli_model

DOCS = ["Items can be returned within 30 days of delivery. Gift cards cannot be returned."]
GOOD = "Items can be returned within 30 days of delivery."
BAD = "Items can be returned within 90 days of delivery, and shipping to Mars is free."


def completion(text: str) -> dict[str, object]:
    return {"id": "c1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}


async def ask(request: Request) -> Response:
    body = await request.json() if request.method == "POST" else {}
    return JSONResponse(completion(body.get("answer") or request.query_params.get("answer", GOOD)))


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    guard = Guard(Evaluator(nli=NLIScorer(default_nli_model()), checks=["faithfulness"]),
                  Policy(action="block", retrieval_relevance=None))
    inner = Starlette(routes=[Route("/ask", ask, methods=["POST", "OPTIONS", "GET"])])
    outer = Starlette(routes=[Mount("/api", app=GuardrailMiddleware(inner, guard, routes=["/ask"]))])
    with llm_server.serve(outer) as base:
        yield base


def _post(url: str, answer: str) -> httpx.Response:
    return httpx.post(url + "/api/ask", timeout=60, json={
        "messages": [{"role": "user", "content": "How do returns work?"}], "contexts": DOCS, "answer": answer})


def test_a_mounted_middleware_guards_its_routes(url: str) -> None:
    """routes=["/ask"] inside an app mounted at /api guards /api/ask (the path the app routes on)."""
    blocked = _post(url, BAD)
    assert blocked.status_code == 400 and blocked.json()["error"]["type"] == "guardrail_blocked"
    ok = _post(url, GOOD)
    assert ok.status_code == 200 and ok.json()["choices"][0]["message"]["content"] == GOOD


def test_options_is_a_preflight_or_nothing(url: str) -> None:
    r = httpx.request("OPTIONS", url + "/api/ask", params={"answer": BAD}, timeout=30)
    assert r.status_code == 405 and "Mars" not in r.text  # not a preflight: refused
    r = httpx.request("OPTIONS", url + "/api/ask", params={"answer": BAD}, timeout=30,
                      headers={"origin": "https://x.test", "access-control-request-method": "POST"})
    assert "Mars" not in r.text and r.content == b""  # a preflight: the app's headers, no body
    r = httpx.get(url + "/api/ask", params={"answer": BAD}, timeout=30)
    assert r.status_code == 405 and json.loads(r.text)["error"]["code"] == "method_not_allowed"
