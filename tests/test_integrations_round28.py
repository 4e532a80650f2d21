"""Attack round 28 on the Python integrations and the middleware (real model):

- ASGI middleware with a ``response_extractor``: an answer in the app's own shape under an error status (503, 422)
  went out unchecked, because only OpenAI answer shapes under an error status were read. The app's extractor now
  decides too: a body in which it finds answer text is checked as a 2xx answer is (its status kept when delivered).
- ``@guarded``: a ``str`` subclass was checked on its characters and delivered as its ``__str__``. The text checked
  (its characters, as a plain ``str``) is the text delivered, whole and in chunks.
- LangChain: a runnable chained after a ``GuardedChain`` (``| itemgetter("answer")``) saw the last stream chunk only
  (plain dict chunks are not added up), so the faithful answer was lost; the chunks are ``AddableDict`` now. Misuse
  (a chain that returns a str, streams str chunks, or streams the answer before its documents) raises
  ``ConfigurationError``, not a bare ``TypeError``/``ValueError``; ``{"page_content": ...}`` documents are read.
- ``guardrail.record()`` with arguments of the wrong type raises ``ConfigurationError``."""

from __future__ import annotations

import asyncio
from operator import itemgetter
from typing import Any

import pytest
from langchain_core.runnables import RunnableGenerator, RunnableLambda
from langchain_core.runnables.utils import AddableDict
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient

from guardrail.asgi import GuardrailMiddleware, record
from guardrail.checks.evaluator import Evaluator
from guardrail.decorator import GuardrailBlocked, guarded
from guardrail.errors import ConfigurationError
from guardrail.guard import Guard
from guardrail.langchain import GuardedChain
from guardrail.policy import Policy
from guardrail.scorers.nli import NLIScorer, default_nli_model

CTX = ["Gift cards and final-sale items cannot be returned. Other items can be returned within 30 days of delivery "
       "with a receipt."]
Q = "Can gift cards be returned?"
BAD = "Gift cards can be returned within 30 days."
GOOD = "No, gift cards cannot be returned."


@pytest.fixture(scope="module")
def guard() -> Guard:
    return Guard(Evaluator(nli=NLIScorer(default_nli_model())), Policy(action="block", retrieval_relevance=None))


# --------------------------------------------------------------------------- middleware, the app's own shape
async def ask(request: Request) -> Response:
    body = await request.json()
    record(query=Q, contexts=CTX)
    return JSONResponse({"answer": body["answer"], "note": "degraded"}, status_code=body["status"])


@pytest.mark.parametrize("status", [200, 422, 503])
def test_an_answer_under_an_error_status_is_read_with_the_apps_extractor(guard: Guard, status: int) -> None:
    app = GuardrailMiddleware(Starlette(routes=[Route("/ask", ask, methods=["POST"])]), guard, routes=["/ask"],
                              response_extractor=lambda b: b.get("answer") if isinstance(b, dict) else None)
    with TestClient(app) as client:
        r = client.post("/ask", json={"answer": BAD, "status": status})
        assert r.status_code == 400 and r.json()["error"]["type"] == "guardrail_blocked", r.text
        r = client.post("/ask", json={"answer": GOOD, "status": status})
        assert r.status_code == status and r.json() == {"answer": GOOD, "note": "degraded"}
        assert r.headers["x-guardrail-action"] == "pass"
        # an error body the extractor finds no answer in is the app's error, delivered as sent (a 2xx one is
        # unreadable: blocked)
        r = client.post("/ask", json={"answer": None, "status": status})
        if status >= 400:
            assert r.status_code == status and r.json() == {"answer": None, "note": "degraded"}
        else:
            assert r.status_code == 400 and "response_extractor found no answer" in r.text


def test_record_with_the_wrong_types_is_a_configuration_error(guard: Guard) -> None:
    async def wrong(request: Request) -> Response:
        kind = (await request.json())["kind"]
        try:
            record(query=Q, contexts=CTX[0] if kind == "str" else 5)  # type: ignore[arg-type]
        except ConfigurationError as exc:
            return JSONResponse({"error": str(exc)}, status_code=500)
        return JSONResponse({"answer": GOOD})

    app = GuardrailMiddleware(Starlette(routes=[Route("/ask", wrong, methods=["POST"])]), guard, routes=["/ask"],
                              response_extractor=lambda b: b.get("answer"))
    with TestClient(app) as client:
        for kind in ("str", "int"):
            r = client.post("/ask", json={"kind": kind})
            assert r.status_code == 500 and "takes a list of strings" in r.json()["error"], r.text


# --------------------------------------------------------------------------- @guarded, str subclasses
class Shown(str):
    """Characters one thing, shown another."""

    def __str__(self) -> str:
        return BAD


def test_a_str_subclass_is_delivered_as_the_characters_checked(guard: Guard) -> None:
    @guarded(guard, question=lambda a: Q, contexts=lambda a: CTX)
    def answer() -> str:
        return Shown(GOOD)

    out = answer()
    assert out == GOOD and str(out) == GOOD and out.verdict.action == "pass"

    @guarded(guard, question=lambda a: Q, contexts=lambda a: CTX)
    def chunks() -> Any:
        yield Shown("No, gift cards ")
        yield Shown("cannot be returned.")

    got = list(chunks())
    assert "".join(str(c) for c in got) == GOOD

    @guarded(guard, question=lambda a: Q, contexts=lambda a: CTX)
    async def achunks() -> Any:
        yield Shown(GOOD)

    async def collect() -> list[str]:
        return [str(c) async for c in achunks()]

    assert "".join(asyncio.run(collect())) == GOOD

    @guarded(guard, question=lambda a: Q, contexts=lambda a: CTX)
    def shown_bad() -> str:
        return Shown(BAD) if False else BAD

    with pytest.raises(GuardrailBlocked):
        shown_bad()


# --------------------------------------------------------------------------- LangChain
def _chain(answer: str, docs: Any = None) -> Any:
    return RunnableLambda(lambda x: {"input": x["input"], "context": docs if docs is not None else CTX,
                                     "answer": answer})


def _streaming(answer: str) -> Any:
    def gen(inputs: Any) -> Any:  # dict chunks as LangChain's own chains stream them
        for x in inputs:
            yield AddableDict(input=x["input"])
            yield AddableDict(context=CTX)
            for w in answer.split(" "):
                yield AddableDict(answer=w + " ")

    async def agen(inputs: Any) -> Any:
        async for x in inputs:
            for chunk in gen([x]):
                yield chunk
    return RunnableGenerator(gen, agen)


def test_a_runnable_after_the_guarded_chain_gets_the_whole_answer(guard: Guard) -> None:
    composed = GuardedChain(guard, _streaming(GOOD)) | RunnableLambda(itemgetter("answer"))
    assert "".join(composed.stream({"input": Q})).strip() == GOOD
    assert composed.invoke({"input": Q}).strip() == GOOD

    async def final_output() -> Any:
        async for event in GuardedChain(guard, _streaming(GOOD)).astream_events({"input": Q}, version="v2"):
            if event["event"] == "on_chain_end" and event["name"] == "GuardedChain":
                return event["data"]["output"]
        return None

    out = asyncio.run(final_output())
    assert out["answer"].strip() == GOOD and out["guardrail"].action == "pass"
    # blocked: the hallucination is not in what the composed stream hands on
    blocked = GuardedChain(guard, _streaming(BAD)) | RunnableLambda(lambda d: d.get("answer", ""))
    assert "30 days" not in "".join(blocked.stream({"input": Q}))


def test_langchain_misuse_is_a_configuration_error(guard: Guard) -> None:
    out = GuardedChain(guard, _chain(GOOD, [{"page_content": CTX[0]}])).invoke({"input": Q})
    assert out["guardrail"].action == "pass"
    with pytest.raises(GuardrailBlocked):
        GuardedChain(guard, _chain(BAD, [{"page_content": CTX[0]}])).invoke({"input": Q})
    with pytest.raises(ConfigurationError, match="Documents"):
        GuardedChain(guard, _chain(GOOD, [{"text": CTX[0]}])).invoke({"input": Q})
    with pytest.raises(ConfigurationError, match="must be a dict"):
        GuardedChain(guard, RunnableLambda(lambda x: GOOD)).invoke({"input": Q})

    def str_chunks(inputs: Any) -> Any:
        for _ in inputs:
            yield GOOD

    with pytest.raises(ConfigurationError, match="dict chunks"):
        list(GuardedChain(guard, RunnableGenerator(str_chunks)).stream({"input": Q}))

    def answer_first(inputs: Any) -> Any:
        for _ in inputs:
            yield {"answer": GOOD}
            yield {"context": CTX}

    with pytest.raises(ConfigurationError, match="before"):
        list(GuardedChain(guard, RunnableGenerator(answer_first)).stream({"input": Q}))
