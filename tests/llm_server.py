"""A local OpenAI-compatible chat server (Starlette + uvicorn on 127.0.0.1) standing in for a paid LLM API.

The answer is chosen by the test through the request body (the SDK's ``extra_body={"answer": ...}``);
``{"fail": 500}`` makes it return that status. Streams are sent as OpenAI SSE chunks of 5 characters.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


async def chat(request: Request) -> Response:
    body = await request.json()
    if body.get("fail"):
        return JSONResponse({"error": {"message": "upstream exploded", "type": "server_error"}}, status_code=int(body["fail"]))
    answer = body.get("answer", "Hello.")
    answers = list(body.get("answers") or [answer])  # several choices, whatever n the request asked for
    model = body.get("model", "fake")
    created = 1700000000  # fixed, so two identical requests get byte-identical answers
    if not body.get("stream"):
        return JSONResponse({
            "id": "chatcmpl-test", "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": i, "message": {"role": "assistant", "content": a}, "finish_reason": "stop"}
                        for i, a in enumerate(answers)],
            "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10},
        })
    delay = float(body.get("delay", 0.0))

    malformed = bool(body.get("malformed"))

    async def events() -> AsyncIterator[str]:
        def chunk(delta: dict[str, object], finish: str | None = None, index: int = 0) -> str:
            payload = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": created, "model": model,
                       "choices": [{"index": index, "delta": delta, "finish_reason": finish}]}
            return f"data: {json.dumps(payload)}\n\n"

        try:
            yield chunk({"role": "assistant", "content": ""})
            if malformed:
                yield "data: {this is not json\n\n"
            for i in range(0, max(len(a) for a in answers), 5):
                await asyncio.sleep(delay)
                for k, a in enumerate(answers):
                    if a[i : i + 5]:
                        yield chunk({"content": a[i : i + 5]}, index=k)
            for k in range(len(answers)):
                yield chunk({}, "stop", index=k)
            yield "data: [DONE]\n\n"
        finally:
            STREAMS_CLOSED.append(answer)

    return StreamingResponse(events(), media_type="text/event-stream")


#: answers of the streams whose generator ended (normally or because the client went away)
STREAMS_CLOSED: list[str] = []

app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve(asgi_app=app, lifespan: str = "off") -> Iterator[str]:  # type: ignore[no-untyped-def]
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(asgi_app, host="127.0.0.1", port=port, log_level="warning", lifespan=lifespan))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not server.started:
        if time.time() > deadline:
            raise RuntimeError("test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
