"""Python integrations, classes found by an attacker's probe of round 10 (real model; LangChain and LlamaIndex objects,
an ASGI app, the openai SDK over a mock transport):

- LangChain reads a message as the gateway reads a chat completion (:mod:`guardrail.wire`): tool calls (and their
  streamed argument pieces), a refusal or function call in ``additional_kwargs``, text blocks of any type LangChain
  merges into text (``output_text``, ``text_delta``), a reasoning trace as a trace (alone: unreadable); a content
  block that goes back to a lower ``index`` in a stream is unreadable (merged, its text would stand elsewhere); an
  answer that is no text (a structured output, None) is unreadable, blocked with the reason;
- the ASGI middleware does not offer ``http.response.pathsend`` / ``zerocopysend`` on a guarded route, and reads a
  file sent that way all the same as a body;
- the OpenAI wrapper blocks (or replaces) a body the SDK could not parse, and refuses ``stream`` in ``extra_body``;
- LlamaIndex: a fallback for a structured (Pydantic) response is a text Response; plain nodes as sources are read.
"""

from __future__ import annotations

import asyncio
import functools
import json
import operator
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from pydantic import BaseModel

from guardrail.asgi import GuardrailMiddleware, record
from guardrail.checks.evaluator import Evaluator
from guardrail.errors import ConfigurationError, GuardrailBlocked
from guardrail.guard import Guard
from guardrail.langchain import GuardedChain
from guardrail.openai import guard_openai
from guardrail.policy import Policy
from guardrail.scorers.nli import NLIScorer, default_nli_model

CTX = ("Items can be returned within 30 days of delivery. Gift cards cannot be returned. Refunds are issued to the "
       "original payment method within 5 business days.")
GOOD = "Items can be returned within 30 days of delivery."
BAD = "Items can be returned within 90 days of delivery, and shipping to Mars is free."
Q = "How long do I have to return an item?"


@pytest.fixture(scope="module")
def evaluator() -> Evaluator:
    return Evaluator(nli=NLIScorer(default_nli_model()))


def guard(evaluator: Evaluator, action: str = "block") -> Guard:
    return Guard(evaluator, Policy(action=action))


def chain_of(evaluator: Evaluator, answer: Any, action: str = "block") -> GuardedChain:
    """A retrieval chain whose answer is ``answer`` (a value, or a generator function of chunks)."""
    step = RunnableLambda(answer) if callable(answer) else RunnableLambda(lambda _: answer)
    return GuardedChain(guard(evaluator, action), RunnablePassthrough.assign(context=lambda _: [CTX]).assign(answer=step))


# --------------------------------------------------------------------------- LangChain: whole answers
def messages(text: str) -> dict[str, AIMessage]:
    return {
        "tool call (bind_tools)": AIMessage(content="", tool_calls=[{"name": "reply", "args": {"answer": text},
                                                                      "id": "1"}]),
        "refusal in additional_kwargs": AIMessage(content="", additional_kwargs={"refusal": text}),
        "output_text block": AIMessage(content=[{"type": "output_text", "text": text}]),
        "text block and an image": AIMessage(content=[{"type": "text", "text": text},
                                                      {"type": "image_url", "image_url": {"url": "data:,"}}]),
    }


@pytest.mark.parametrize("shape", list(messages(BAD)))
def test_every_text_of_a_message_is_read(evaluator: Evaluator, shape: str) -> None:
    with pytest.raises(GuardrailBlocked, match="Mars"):
        chain_of(evaluator, messages(BAD)[shape]).invoke({"input": Q})
    out = chain_of(evaluator, messages(GOOD)[shape]).invoke({"input": Q})
    assert out["guardrail"].action == "pass" and out["answer"] is not None


@pytest.mark.parametrize("value", [
    AIMessage(content=[{"type": "reasoning", "reasoning": BAD}]),  # a trace and no answer
    AIMessage(content=[{"type": "text", "text": GOOD, "caption": BAD}]),  # a field of a block that is not read
    {"answer": BAD},  # with_structured_output
    None,
], ids=["trace alone", "unknown block field", "structured output", "None"])
def test_an_answer_it_cannot_read_is_blocked_with_the_reason(evaluator: Evaluator, value: Any) -> None:
    with pytest.raises(GuardrailBlocked) as blocked:
        chain_of(evaluator, value).invoke({"input": Q})
    assert blocked.value.verdict.outcome == "error" and blocked.value.verdict.reasons
    chunks = list(chain_of(evaluator, value).stream({"input": Q}))
    assert chunks[-1]["guardrail"].action == "block"
    assert not any("answer" in c and c["answer"] is value for c in chunks)


# --------------------------------------------------------------------------- LangChain: streams
def merged_text(chunks: list[dict[str, Any]]) -> str:
    pieces = [c["answer"] for c in chunks if isinstance(c.get("answer"), AIMessageChunk)]
    return functools.reduce(operator.add, pieces).text if pieces else ""


def text_deltas(second: str) -> Any:
    def gen(_: Any) -> Iterator[AIMessageChunk]:
        yield AIMessageChunk(content=[{"type": "text", "text": "Items can be ", "index": 0}])
        yield AIMessageChunk(content=[{"type": "text_delta", "text": second, "index": 0}])
    return gen


def test_streamed_blocks_are_read_as_langchain_merges_them(evaluator: Evaluator) -> None:
    """``AIMessageChunk.__add__`` merges a delta into the block of the same ``index`` whatever its type."""
    chunks = list(chain_of(evaluator, text_deltas(BAD[len("Items can be "):])).stream({"input": Q}))
    assert chunks[-1]["guardrail"].action == "block" and "Mars" not in merged_text(chunks)
    chunks = list(chain_of(evaluator, text_deltas(GOOD[len("Items can be "):])).stream({"input": Q}))
    assert chunks[-1]["guardrail"].outcome == "passed" and merged_text(chunks) == GOOD


def test_a_block_that_goes_back_to_a_lower_index_is_unreadable(evaluator: Evaluator) -> None:
    def gen(_: Any) -> Iterator[AIMessageChunk]:
        yield AIMessageChunk(content=[{"type": "text", "text": "Gift cards ", "index": 1}])
        yield AIMessageChunk(content=[{"type": "text", "text": "Items can be returned. ", "index": 0}])
    chunks = list(chain_of(evaluator, gen).stream({"input": Q}))
    assert chunks[-1]["guardrail"].action == "block" and "index" in chunks[-1]["guardrail"].reasons[0]


def test_streamed_tool_call_pieces_are_read(evaluator: Evaluator) -> None:
    def gen(text: str) -> Any:
        def inner(_: Any) -> Iterator[AIMessageChunk]:
            args = json.dumps({"answer": text})
            yield AIMessageChunk(content="", tool_call_chunks=[{"name": "reply", "args": args[:20], "id": "1",
                                                                "index": 0}])
            yield AIMessageChunk(content="", tool_call_chunks=[{"name": None, "args": args[20:], "id": None,
                                                                "index": 0}])
        return inner
    chunks = list(chain_of(evaluator, gen(BAD)).stream({"input": Q}))
    assert chunks[-1]["guardrail"].action == "block"
    assert not any(isinstance(c.get("answer"), AIMessageChunk) and "Mars" in str(c["answer"].tool_call_chunks)
                   for c in chunks)
    chunks = list(chain_of(evaluator, gen(GOOD)).stream({"input": Q}))
    assert chunks[-1]["guardrail"].outcome == "passed"


# --------------------------------------------------------------------------- ASGI: files sent past the body messages
def sse_event(delta: dict[str, Any], finish: str | None = None) -> bytes:
    return b"data: " + json.dumps({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}).encode() + b"\n\n"


@pytest.mark.parametrize("kind", ["http.response.pathsend", "http.response.zerocopysend"])
def test_a_file_sent_by_path_or_descriptor_is_read(evaluator: Evaluator, tmp_path: Path, kind: str) -> None:
    offered: list[Any] = []

    def app_for(answer: str) -> Any:
        path = tmp_path / "answer.sse"
        path.write_bytes(sse_event({"content": answer}) + sse_event({}, "stop") + b"data: [DONE]\n\n")

        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            await receive()
            offered.append(dict(scope.get("extensions") or {}))
            record(query=Q, contexts=[CTX])
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"text/event-stream")]})
            await send({"type": "http.response.body", "body": sse_event({"role": "assistant", "content": ""}),
                        "more_body": True})
            if kind.endswith("pathsend"):
                await send({"type": kind, "path": str(path)})
            else:
                with open(path, "rb") as f:
                    await send({"type": kind, "file": f.fileno(), "more_body": False})
        return app

    async def run(answer: str) -> bytes:
        mw = GuardrailMiddleware(app_for(answer), guard(evaluator), routes=["/ask"])
        got: list[dict[str, Any]] = []
        requests = [{"type": "http.request", "body": b"{}", "more_body": False}]

        async def receive() -> dict[str, Any]:
            return requests.pop(0) if requests else {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            got.append(message)

        scope = {"type": "http", "method": "POST", "path": "/ask", "raw_path": b"/ask", "headers": [],
                 "root_path": "", "extensions": {kind: {}, "http.response.trailers": {}}}
        await mw(scope, receive, send)
        assert all(m["type"] in ("http.response.start", "http.response.body") for m in got)
        return b"".join(m.get("body", b"") for m in got)

    blocked = asyncio.run(run(BAD))
    events = [e for e in blocked.split(b"\n\n") if e.startswith(b"data: {")]
    assert b"content_filter" in events[-1] and not any(b"Mars" in e for e in events[:-1])
    delivered = asyncio.run(run(GOOD))
    assert GOOD.encode() in delivered and b"content_filter" not in delivered
    assert kind not in offered[0] and "http.response.trailers" in offered[0]


# --------------------------------------------------------------------------- the OpenAI wrapper: bodies the SDK cannot parse
def mock_client(body: bytes, ctype: str) -> openai.OpenAI:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, content=body, headers={"content-type": ctype}))
    return openai.OpenAI(base_url="http://upstream.test/v1", api_key="k", max_retries=0,
                         http_client=httpx.Client(transport=transport))


def test_a_body_the_sdk_cannot_parse_is_blocked_or_replaced(evaluator: Evaluator) -> None:
    client = guard_openai(mock_client(BAD.encode(), "text/plain"), guard(evaluator))
    with pytest.raises(GuardrailBlocked, match="unreadable"):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": Q}], contexts=[CTX])
    replacing = guard(evaluator, "fallback")
    fallback = guard_openai(mock_client(BAD.encode(), "text/plain"), replacing)
    completion = fallback.chat.completions.create(model="m", messages=[{"role": "user", "content": Q}], contexts=[CTX])
    assert completion.choices[0].message.content == replacing.policy.fallback_message
    assert completion.guardrail.action == "fallback"
    with pytest.raises(ConfigurationError, match="stream=True"):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": Q}], contexts=[CTX],
                                       extra_body={"stream": True})
    body = json.dumps({"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": GOOD}, "finish_reason": "stop"}]}).encode()
    ok = guard_openai(mock_client(body, "application/json"), guard(evaluator))
    assert ok.chat.completions.create(model="m", messages=[{"role": "user", "content": Q}],
                                      contexts=[CTX]).choices[0].message.content == GOOD


# --------------------------------------------------------------------------- LlamaIndex
def test_llamaindex_structured_fallback_and_plain_nodes(evaluator: Evaluator) -> None:
    from llama_index.core.base.response.schema import PydanticResponse, Response
    from llama_index.core.schema import NodeWithScore, TextNode

    from guardrail.llamaindex import GuardedQueryEngine

    class Answer(BaseModel):
        answer: str

    class Engine:
        def __init__(self, response: Any) -> None:
            self.response = response

        def query(self, q: Any) -> Any:
            return self.response

    nodes = [NodeWithScore(node=TextNode(text=CTX), score=1.0)]
    structured = PydanticResponse(response=Answer(answer=BAD), source_nodes=nodes)
    out = GuardedQueryEngine(Engine(structured), guard(evaluator, "fallback")).query(Q)
    assert isinstance(out, Response) and str(out) == guard(evaluator).policy.fallback_message
    assert out.metadata["guardrail"].action == "fallback"
    plain = Response(BAD, source_nodes=[TextNode(text=CTX)])  # nodes themselves, not NodeWithScore
    with pytest.raises(GuardrailBlocked, match="Mars"):
        GuardedQueryEngine(Engine(plain), guard(evaluator)).query(Q)
    assert GuardedQueryEngine(Engine(Response(GOOD, source_nodes=[TextNode(text=CTX)])),
                              guard(evaluator)).query(Q).metadata["guardrail"].action == "pass"
