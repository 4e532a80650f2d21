"""Block mode, session 10 (round 20, finding B4): the content parts of one message are read as a client shows them.

A message whose parts are text | refusal | text ("Gift cards can" / "not" / " be returned within 30 days of
delivery.") was read as one sentence, "Gift cards cannot be returned within 30 days of delivery.", and delivered, while
the openai SDK's ``response.output_text`` and LangChain's ``AIMessage.text()`` show the text parts alone: "Gift cards
can be returned within 30 days of delivery.". Parts of one kind run on; a change of kind stands apart, as two fields of
one answer do (real gateway, real model, scripted upstream; each hallucination with its faithful twin)."""

from __future__ import annotations

from typing import Any

import pytest
from test_bypass import (  # noqa: F401 - fixtures
    CTX,
    assert_blocked,
    assert_delivered,
    dumps,
    evaluator,
    gw,
    post,
    script,
    upstream,
)

from guardrail.telemetry import Telemetry
from guardrail.wire.chat import FIELD_BREAK, join_parts

Q = "Can I return a gift card?"
SPLIT_BAD = [("text", "Gift cards can"), ("refusal", "not"), ("text", " be returned within 30 days of delivery.")]
SPLIT_GOOD = [("text", "Gift cards cannot"), ("text", " be returned.")]


def _chat(parts: list[tuple[str, str]]) -> dict[str, Any]:
    content = [{"type": kind, kind: text} for kind, text in parts]
    return {"id": "c1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}


def _response(parts: list[tuple[str, str]]) -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": []} if kind == "text"
               else {"type": "refusal", "refusal": text} for kind, text in parts]
    return {"id": "r1", "object": "response", "status": "completed", "output": [
        {"type": "message", "id": "m1", "status": "completed", "role": "assistant", "content": content}]}


@pytest.mark.parametrize(("path", "build"), [("/v1/chat/completions", _chat), ("/v1/responses", _response)])
def test_a_refusal_between_text_parts_stands_apart(gw: tuple[str, Telemetry], path: str, build: Any) -> None:
    url, _ = gw
    assert_blocked(post(url, script(dumps(build(SPLIT_BAD))), path, question=Q, contexts=CTX))
    good = script(dumps(build(SPLIT_GOOD)))  # a sentence over two parts of one kind is one sentence
    assert_delivered(post(url, good, path, question=Q, contexts=CTX), good)


def test_join_parts() -> None:
    assert join_parts(["Gift cards can", " be returned."], ["text", "text"]) == "Gift cards can be returned."
    assert join_parts(["Gift cards can", "not", " be returned."], ["text", "refusal", "text"]) == \
        f"Gift cards can{FIELD_BREAK}not{FIELD_BREAK} be returned."
    assert join_parts([], []) == ""


# ------------------------------------------------------------------ B7: a WebSocket on a guarded route

def test_a_websocket_on_a_guarded_route_is_refused(evaluator: Any) -> None:  # noqa: F811 - fixture
    """A chat UI streaming answers over a socket on the guarded path got them unread; the handshake is refused
    (1008: the server answers 403), a socket on another path is served as before (real uvicorn, real client)."""
    import asyncio

    import llm_server
    import websockets
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route, WebSocketRoute
    from starlette.websockets import WebSocket

    from guardrail.asgi import GuardrailMiddleware
    from guardrail.guard import Guard
    from guardrail.policy import Policy

    async def ask(request: Any) -> JSONResponse:
        return JSONResponse({"answer": "Gift cards cannot be returned."})

    async def socket(ws: WebSocket) -> None:
        await ws.accept()
        await ws.send_text("Gift cards can be returned within 90 days.")
        await ws.close()

    app = Starlette(routes=[Route("/ask", ask, methods=["POST"]), WebSocketRoute("/ask", socket),
                            WebSocketRoute("/live", socket)])
    guard = Guard(evaluator, Policy(action="block"))
    with llm_server.serve(GuardrailMiddleware(app, guard, routes=["/ask"])) as url:
        ws_url = url.replace("http://", "ws://")

        async def talk(path: str) -> str:
            async with websockets.connect(ws_url + path) as conn:
                return str(await conn.recv())

        with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
            asyncio.run(talk("/ask"))
        assert refused.value.response.status_code == 403
        assert asyncio.run(talk("/live")) == "Gift cards can be returned within 90 days."  # not a guarded route
    guard.close()
