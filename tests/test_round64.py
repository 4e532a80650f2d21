"""Round 64 (the Python integrations): a LangChain chain whose output drops the question was judged with none by
``invoke``/``batch``/``ainvoke`` (its stream read the input's); with no question at all, an answer whose claim leans
on one ("Yes, within 30 days.") was judged as if it stood alone, and the "other items, 30 days" sentence supported
it (a first sentence on a pronoun, "It can be returned within 30 days.", is still judged as written: claims checked
with no question open so); the OpenAI wrapper read a generator ``messages=`` for the question and
handed the SDK the used-up generator (the upstream got ``"messages": []``).

Real model; the real openai SDK against a local server; each with its faithful twin."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from block_mode import block_guard  # noqa: F401 - fixture
from langchain_core.runnables import RunnableLambda
from llm_server import serve
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from guardrail.decorator import GuardrailBlocked
from guardrail.errors import UncheckableError
from guardrail.guard import Guard
from guardrail.langchain import GuardedChain
from guardrail.openai import guard_openai

CTX = "Gift cards and final-sale items cannot be returned. Other items can be returned within 30 days with a receipt."
Q = "Can I return a gift card?"
BAD = "Yes, within 30 days."
GOOD = "No, gift cards cannot be returned."


@pytest.fixture(scope="module")
def guard(block_guard: Guard) -> Guard:  # noqa: F811
    return block_guard


def _chain(answer: str) -> GuardedChain:
    """A RAG chain that keeps only its contexts and answer in its output, as ``.pick(["context", "answer"])`` does."""
    return RunnableLambda(lambda d: {"context": [CTX], "answer": answer})  # type: ignore[return-value]


@pytest.mark.parametrize("path", ["invoke", "batch", "ainvoke"])
def test_a_chain_that_drops_the_question_is_judged_with_its_input(guard: Guard, path: str) -> None:
    def run(answer: str) -> Any:
        guarded = GuardedChain(guard, _chain(answer))
        if path == "invoke":
            return guarded.invoke({"input": Q})
        if path == "batch":
            return guarded.batch([{"input": Q}])[0]
        return asyncio.run(guarded.ainvoke({"input": Q}))
    with pytest.raises(GuardrailBlocked):
        run(BAD)
    assert run(GOOD)["answer"] == GOOD


@pytest.mark.parametrize("answer", [BAD, "Yes, but only with a receipt.", "Yes, any time."])
def test_with_no_question_an_answer_that_leans_on_one_is_unjudgeable(guard: Guard, answer: str) -> None:
    with pytest.raises(UncheckableError):
        guard.evaluator.evaluate("", [CTX], answer)
    assert guard.check("", [CTX], answer).action == "block"
    assert guard.check(Q, [CTX], answer).action == "block"  # (with its question it is judged, and fails)


@pytest.mark.parametrize("answer", [GOOD, "Gift cards cannot be returned. It is final-sale items too.",
                                    "It depends on the item: gift cards cannot be returned."])
def test_with_no_question_a_statement_is_judged_as_written(guard: Guard, answer: str) -> None:
    guard.evaluator.evaluate("", [CTX], answer)  # no UncheckableError: its claims stand alone
    if answer == GOOD:
        assert guard.check("", [CTX], answer).action == "pass"


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[str, list[Any]]]:
    seen: list[Any] = []

    async def chat(request: Request) -> JSONResponse:
        body = json.loads(await request.body())
        seen.append(body["messages"])
        return JSONResponse({"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": GOOD}, "finish_reason": "stop"}]})

    with serve(Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])) as url:
        yield url + "/v1", seen


@pytest.mark.parametrize("is_async", [False, True])
def test_generator_messages_reach_the_model(guard: Guard, upstream: tuple[str, list[Any]], is_async: bool) -> None:
    url, seen = upstream
    messages = [{"role": "system", "content": "Answer from the policy."}, {"role": "user", "content": Q}]
    for given in (iter(messages), list(messages)):
        if is_async:
            client = guard_openai(openai.AsyncOpenAI(api_key="x", base_url=url), guard)
            r = asyncio.run(client.chat.completions.create(model="m", messages=given, contexts=[CTX]))
        else:
            client = guard_openai(openai.OpenAI(api_key="x", base_url=url), guard)
            r = client.chat.completions.create(model="m", messages=given, contexts=[CTX])
        assert r.choices[0].message.content == GOOD
        assert seen[-1] == messages
