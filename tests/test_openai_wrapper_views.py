"""Every way the wrapped openai client hands out a view of itself is guarded or refused (real SDK, real local server).

``with_options`` / ``copy`` give a guarded client whose options reach the request; raw-response and
streaming-response views (client, ``chat``, ``chat.completions``), other answer-writing APIs and the raw HTTP methods
are refused before anything is sent; resources and settings that write no answer pass through.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from llm_server import chat as llm_chat
from llm_server import serve
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from guardrail.checks.evaluator import Evaluator
from guardrail.checks.faithfulness import FaithfulnessCheck
from guardrail.errors import ConfigurationError, GuardrailBlocked
from guardrail.guard import Guard
from guardrail.openai import (
    _CLIENT_REFUSED,
    _COMPLETIONS_PASS_THROUGH,
    _COMPLETIONS_REFUSED,
    _PASS_THROUGH,
    GuardedOpenAI,
    UnguardedPathError,
    guard_openai,
)
from guardrail.policy import Policy
from guardrail.scorers.nli import NLIScorer

CTX = ["Items can be returned within 30 days of delivery. Refunds are issued to the original payment method."]
Q = "How do returns work?"
MSGS = [{"role": "user", "content": Q}]
REFUSED = r"not guarded by guard_openai: .*create\(\.\.\., contexts="

#: the headers of every chat request the server received, in order
SEEN: list[dict[str, str]] = []


async def recording_chat(request: Request) -> Response:
    body = await request.json()
    SEEN.append(dict(request.headers))
    await asyncio.sleep(float(body.get("wait", 0)))  # before answering: lets a test hit the client's timeout
    return await llm_chat(request)


async def list_models(request: Request) -> Response:
    return JSONResponse({"object": "list", "data": [{"id": "fake", "object": "model", "created": 0, "owned_by": "t"}]})


APP = Starlette(routes=[Route("/v1/chat/completions", recording_chat, methods=["POST"]),
                        Route("/v1/models", list_models, methods=["GET"])])


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with serve(APP) as url:
        yield url + "/v1"


@pytest.fixture(scope="module")
def evaluator(tiny_nli: Path) -> Evaluator:
    return Evaluator(nli=NLIScorer(tiny_nli))


@pytest.fixture(scope="module")
def guard(evaluator: Evaluator) -> Guard:
    """Block mode, with a threshold between a faithful sentence's score and a hallucination's."""
    return Guard(evaluator, Policy(action="block", retrieval_relevance=None, faithfulness=_cut(evaluator)[2]))


def _cut(evaluator: Evaluator) -> tuple[str, str, float]:
    check = evaluator.faithfulness_check
    assert isinstance(check, FaithfulnessCheck)
    a, b = "Items can be returned within 30 days of delivery.", "Refunds are paid in gold bars on Mars by the moon king."
    sa, sb = (check.run(Q, CTX, x).score for x in (a, b))
    assert sa is not None and sb is not None and sa != sb
    return (a, b, (sa + sb) / 2) if sa > sb else (b, a, (sa + sb) / 2)


@pytest.fixture(scope="module")
def answers(evaluator: Evaluator) -> tuple[str, str]:
    good, bad, _ = _cut(evaluator)
    return good, bad


def sync_client(base_url: str, guard: Guard) -> GuardedOpenAI:
    return guard_openai(openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0), guard)


def async_client(base_url: str, guard: Guard) -> GuardedOpenAI:
    return guard_openai(openai.AsyncOpenAI(base_url=base_url, api_key="test-key", max_retries=0), guard)


def ask(answer: str, **extra: Any) -> dict[str, Any]:
    return {"model": "fake", "messages": MSGS, "contexts": CTX, "extra_body": {"answer": answer, **extra}}


#: every view of the wrapped client that hands out raw answers, as a path of attribute names
RAW_VIEWS = [("with_raw_response",), ("with_streaming_response",), ("chat", "with_raw_response"),
             ("chat", "with_streaming_response"), ("chat", "completions", "with_raw_response"),
             ("chat", "completions", "with_streaming_response")]


def walk(obj: Any, path: tuple[str, ...]) -> Any:
    for name in path:
        obj = getattr(obj, name)
    return obj


# --------------------------------------------------------------------------- refused views
@pytest.mark.parametrize("make", [sync_client, async_client], ids=["sync", "async"])
@pytest.mark.parametrize("via", ["client", "with_options", "copy"])
@pytest.mark.parametrize("path", RAW_VIEWS, ids=".".join)
def test_raw_views_are_refused_before_anything_is_sent(base_url: str, guard: Guard, make: Any, via: str,
                                                       path: tuple[str, ...]) -> None:
    c = make(base_url, guard)
    c = {"client": c, "with_options": c.with_options(timeout=30) if via == "with_options" else c,
         "copy": c.copy() if via == "copy" else c}[via]
    sent = len(SEEN)
    with pytest.raises(UnguardedPathError, match=REFUSED) as info:
        walk(c, path)
    assert isinstance(info.value, ConfigurationError) and "raw HTTP responses" in str(info.value)
    assert not hasattr(walk(c, path[:-1]), path[-1])  # an AttributeError too: duck-typing probes say "absent"
    assert len(SEEN) == sent


@pytest.mark.parametrize("make", [sync_client, async_client], ids=["sync", "async"])
def test_every_other_way_to_generate_is_refused(base_url: str, guard: Guard, make: Any) -> None:
    c = make(base_url, guard)
    for name in ("responses", "conversations", "completions", "beta", "batches", "realtime", "live", "evals",
                 "decisions", "post", "get", "put", "patch", "delete", "request", "get_api_list",
                 "an_api_a_newer_sdk_adds"):
        with pytest.raises(UnguardedPathError, match=REFUSED):
            getattr(c, name)
    for name in ("parse", "stream", "retrieve", "list", "update", "messages"):
        with pytest.raises(UnguardedPathError, match=REFUSED):
            getattr(c.chat.completions, name)
    with pytest.raises(UnguardedPathError, match=REFUSED):
        c.chat.something_new  # noqa: B018
    for owner in (c, c.chat, c.chat.completions):  # private names of the wrapped objects are not forwarded
        with pytest.raises(AttributeError) as info:
            owner._post  # noqa: B018
        assert not isinstance(info.value, ConfigurationError)
    assert not hasattr(c.chat, "_client") and not hasattr(c.chat.completions, "_client")


@pytest.mark.parametrize("cls", [openai.OpenAI, openai.AsyncOpenAI])
def test_every_public_name_of_the_sdk_client_is_on_a_list(base_url: str, guard: Guard, cls: Any) -> None:
    """Whatever the installed SDK has: each public name is guarded, passed through or refused; none is forwarded
    because nobody thought of it (an unlisted name is refused, and shows up here)."""
    inner = cls(base_url=base_url, api_key="test-key", max_retries=0)
    c = guard_openai(inner, guard)
    names = {n for n in dir(cls) if not n.startswith("_")} | {n for n in vars(inner) if not n.startswith("_")}
    unlisted = names - _PASS_THROUGH - set(_CLIENT_REFUSED) - {"chat", "with_options", "copy"}
    assert not unlisted, f"new SDK names, refused until listed in guardrail/openai.py: {sorted(unlisted)}"
    for name in names - {"chat", "with_options", "copy"}:
        if name in _PASS_THROUGH:
            assert type(getattr(c, name)) is type(getattr(inner, name)), name  # forwarded, not refused
        else:
            with pytest.raises(UnguardedPathError, match=REFUSED):
                getattr(c, name)
    resource = inner.chat.completions
    for name in {n for n in dir(resource) if not n.startswith("_")} - {"create"}:
        assert name in _COMPLETIONS_PASS_THROUGH or name in _COMPLETIONS_REFUSED, name
    for name in {n for n in dir(inner.chat) if not n.startswith("_")} - {"completions"}:
        with pytest.raises(UnguardedPathError, match=REFUSED):
            getattr(c.chat, name)


RAW_HEADER = r"request header .* is not guarded by guard_openai: .*with_raw_response.*create\(\.\.\., contexts="


def _requests(make: Any, base_url: str, guard: Guard, header: str, value: str) -> list[tuple[str, Any]]:
    """The ways one request can carry the SDK's raw-response header: extra_headers=, the wrapped client's
    default_headers, and with_options / copy(default_headers=...)."""
    c = make(base_url, guard)
    inner_cls = type(c._client)
    with_default = guard_openai(inner_cls(base_url=base_url, api_key="test-key", max_retries=0,
                                          default_headers={header: value}), guard)
    return [("extra_headers", (c, {"extra_headers": {header: value}})),
            ("default_headers", (with_default, {})),
            ("with_options", (c.with_options(default_headers={header: value}), {})),
            ("copy", (c.copy(default_headers={header: value}), {}))]


@pytest.mark.parametrize("make", [sync_client, async_client], ids=["sync", "async"])
@pytest.mark.parametrize("header, value", [("X-Stainless-Raw-Response", "true"),
                                           ("x-stainless-raw-response", "stream"),
                                           ("X-STAINLESS-RAW-RESPONSE", "raw"),
                                           ("____stainless_override_cast_to", "str")])
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
def test_the_raw_response_header_is_refused_before_anything_is_sent(base_url: str, guard: Guard,
                                                                    answers: tuple[str, str], make: Any, header: str,
                                                                    value: str, stream: bool) -> None:
    """The SDK's raw-response views are chosen by a request header (what with_raw_response sets): create() refuses
    it, in any spelling and from wherever it would come, with the error the views themselves get."""
    _, bad = answers
    for via, (c, extra) in _requests(make, base_url, guard, header, value):
        sent = len(SEEN)
        with pytest.raises(UnguardedPathError, match=RAW_HEADER) as info:
            result = c.chat.completions.create(**ask(bad), stream=stream, **extra)
            if asyncio.iscoroutine(result):
                asyncio.run(result)
        assert isinstance(info.value, ConfigurationError) and header in str(info.value), via
        assert len(SEEN) == sent, via


@pytest.mark.parametrize("make", [sync_client, async_client], ids=["sync", "async"])
def test_a_raw_response_header_removed_with_omit_is_guarded(base_url: str, guard: Guard, answers: tuple[str, str],
                                                           make: Any) -> None:
    """``extra_headers={header: Omit()}`` takes the client's default header off the request, as the SDK does: the
    answer is then a stream of chunks, and guarded (the faithful one delivered intact, the hallucination stopped)."""
    good, bad = answers
    c = guard_openai(type(make(base_url, guard)._client)(base_url=base_url, api_key="test-key", max_retries=0,
                                                         default_headers={"X-Stainless-Raw-Response": "stream"}), guard)
    omit = {"extra_headers": {"x-stainless-raw-response": openai.Omit()}}

    async def run() -> None:
        for answer in (good, f"{good} {bad}"):
            stream = c.chat.completions.create(**ask(answer), stream=True, **omit)
            if asyncio.iscoroutine(stream):
                stream = await stream
                got = [ch async for ch in stream]
            else:
                got = list(stream)
            assert "x-stainless-raw-response" not in SEEN[-1]
            text = "".join(ch.choices[0].delta.content or "" for ch in got if ch.choices)
            if answer == good:
                assert text == good and stream.guardrail.action == "pass"
            else:
                assert bad[:10] not in text and got[-1].choices[0].finish_reason == "content_filter"
                assert stream.guardrail.action == "block"

    asyncio.run(run())


@pytest.mark.parametrize("value", ["true", "stream"])
def test_a_raw_response_from_the_http_client_is_refused_unread(base_url: str, guard: Guard, answers: tuple[str, str],
                                                               value: str) -> None:
    """A raw response asked for where the wrapper does not look (the http_client's own headers) is not a stream of
    chunks: refused by name, never iterated, sync and async."""
    _, bad = answers
    sync = guard_openai(openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0, http_client=openai.
                                      DefaultHttpxClient(headers={"X-Stainless-Raw-Response": value})), guard)
    with pytest.raises(UnguardedPathError, match=r"not the SDK's stream of chunks.*create\(\.\.\., contexts="):
        sync.chat.completions.create(**ask(bad), stream=True)

    async def run() -> None:
        a = guard_openai(openai.AsyncOpenAI(base_url=base_url, api_key="test-key", max_retries=0, http_client=openai.
                                            DefaultAsyncHttpxClient(headers={"X-Stainless-Raw-Response": value})), guard)
        with pytest.raises(UnguardedPathError, match=r"not the SDK's stream of chunks"):
            await a.chat.completions.create(**ask(bad), stream=True)
        await a.close()

    asyncio.run(run())


@pytest.mark.parametrize("make", [sync_client, async_client], ids=["sync", "async"])
def test_a_guarded_stream_refuses_its_raw_response_and_gives_its_headers(base_url: str, guard: Guard,
                                                                        answers: tuple[str, str], make: Any) -> None:
    """The SDK stream's ``.response`` is an HTTP response whose body is the unchecked answer: refused by name (an
    AttributeError too), before and after iterating; its headers are ``stream.headers``."""
    good, _ = answers
    c = make(base_url, guard)

    async def run() -> None:
        stream = c.chat.completions.create(**ask(good), stream=True)
        if asyncio.iscoroutine(stream):
            stream = await stream
        for _ in range(2):
            with pytest.raises(UnguardedPathError, match=r"stream\.response is not guarded .*stream\.headers") as info:
                stream.response  # noqa: B018
            assert isinstance(info.value, ConfigurationError) and not hasattr(stream, "response")
            assert stream.headers["Content-Type"].startswith("text/event-stream")
            got = [ch async for ch in stream] if hasattr(stream, "__aiter__") else list(stream)
            text = "".join(ch.choices[0].delta.content or "" for ch in got if ch.choices)
            assert text in (good, "")  # delivered intact the first time; nothing is left the second
        assert stream.guardrail.action == "pass"

    asyncio.run(run())


# --------------------------------------------------------------------------- with_options / copy stay guarded
def test_with_options_and_copy_are_guarded_sync(base_url: str, guard: Guard, answers: tuple[str, str]) -> None:
    good, bad = answers
    c = sync_client(base_url, guard)
    views = [c.with_options(timeout=30), c.copy(), c.copy(max_retries=0).with_options(timeout=20)]
    for view in views:
        assert isinstance(view, GuardedOpenAI) and view.guard is guard and view._client is not c._client
        with pytest.raises(GuardrailBlocked):
            view.chat.completions.create(**ask(bad))
        r = view.chat.completions.create(**ask(good))
        assert r.choices[0].message.content == good and r.choices[0].finish_reason == "stop"
        assert r.guardrail.action == "pass"
        with pytest.raises(ConfigurationError, match="needs contexts="):  # no way around the check
            view.chat.completions.create(model="fake", messages=MSGS, extra_body={"answer": bad})
        stream = view.chat.completions.create(**ask(f"{good} {bad}"), stream=True)
        chunks = list(stream)
        text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
        assert bad[:10] not in text and chunks[-1].choices[0].finish_reason == "content_filter"
        assert stream.guardrail is not None and stream.guardrail.action == "block"


def test_with_options_and_copy_are_guarded_async(base_url: str, guard: Guard, answers: tuple[str, str]) -> None:
    good, bad = answers

    async def run() -> None:
        c = async_client(base_url, guard)
        for view in (c.with_options(timeout=30), c.copy(), c.copy().with_options(max_retries=0)):
            assert isinstance(view, GuardedOpenAI) and view.guard is guard
            assert isinstance(view._client, openai.AsyncOpenAI)
            with pytest.raises(GuardrailBlocked):
                await view.chat.completions.create(**ask(bad))
            r = await view.chat.completions.create(**ask(good))
            assert r.choices[0].message.content == good and r.guardrail.action == "pass"
            stream = await view.chat.completions.create(**ask(f"{good} {bad}"), stream=True)
            chunks = [ch async for ch in stream]
            text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
            assert bad[:10] not in text and chunks[-1].choices[0].finish_reason == "content_filter"
        await c.close()

    asyncio.run(run())


def test_options_reach_the_request(base_url: str, guard: Guard, answers: tuple[str, str]) -> None:
    good, _ = answers
    c = sync_client(base_url, guard)
    c.with_options(default_headers={"x-probe": "with-options"}).chat.completions.create(**ask(good))
    assert SEEN[-1].get("x-probe") == "with-options"
    c.copy(default_headers={"x-probe": "copy"}).chat.completions.create(**ask(good))
    assert SEEN[-1].get("x-probe") == "copy"
    c.chat.completions.create(**ask(good))
    assert "x-probe" not in SEEN[-1]  # the original client is unchanged
    with pytest.raises(openai.APITimeoutError):
        c.with_options(timeout=0.2).chat.completions.create(**ask(good, wait=1.5))
    assert c.with_options(timeout=7).timeout == 7 and c.with_options(max_retries=3).max_retries == 3

    async def run() -> None:
        a = async_client(base_url, guard)
        await a.with_options(default_headers={"x-probe": "async"}).chat.completions.create(**ask(good))
        assert SEEN[-1].get("x-probe") == "async"
        with pytest.raises(openai.APITimeoutError):
            await a.with_options(timeout=0.2).chat.completions.create(**ask(good, wait=1.5))
        await a.close()

    asyncio.run(run())


# --------------------------------------------------------------------------- what writes no answer passes through
def test_non_generation_attributes_pass_through(base_url: str, guard: Guard) -> None:
    c = sync_client(base_url, guard)
    assert [m.id for m in c.models.list()] == ["fake"]
    assert [m.id for m in c.with_options(timeout=5).models.list()] == ["fake"]
    assert c.api_key == "test-key" and str(c.base_url) == base_url + "/" and c.max_retries == 0
    for name in ("embeddings", "files", "models", "moderations", "vector_stores", "fine_tuning", "images", "audio"):
        assert getattr(c, name) is getattr(c._client, name)
    assert callable(c.chat.completions.delete) and not c.is_closed()

    async def run() -> None:
        a = async_client(base_url, guard)
        assert [m.id async for m in a.models.list()] == ["fake"]
        assert a.api_key == "test-key" and a.embeddings is a._client.embeddings
        await a.close()
        assert a.is_closed()

    asyncio.run(run())


def test_context_managers_yield_the_guarded_client(base_url: str, guard: Guard, answers: tuple[str, str]) -> None:
    _, bad = answers
    with sync_client(base_url, guard) as c:
        assert isinstance(c, GuardedOpenAI)
        with pytest.raises(GuardrailBlocked):
            c.chat.completions.create(**ask(bad))
    assert c.is_closed()

    async def run() -> None:
        async with async_client(base_url, guard) as a:
            assert isinstance(a, GuardedOpenAI)
            with pytest.raises(GuardrailBlocked):
                await a.chat.completions.create(**ask(bad))
        assert a.is_closed()

    asyncio.run(run())
