"""LangChain integration with langchain-core's fake chat model and an in-memory vector store (no network)."""

from __future__ import annotations

import asyncio
import re
from operator import itemgetter
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import GenerationChunk
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore
from prometheus_client import CollectorRegistry

from guardrail.checks.evaluator import Evaluator
from guardrail.decorator import GuardrailBlocked
from guardrail.guard import Guard
from guardrail.langchain import GuardedChain, GuardrailCallbackHandler
from guardrail.policy import Policy
from guardrail.scorers.nli import NLIScorer, default_nli_model
from guardrail.telemetry import Telemetry

DOCS = ["Items can be returned within 30 days of delivery.",
        "Refunds are issued to the original payment method within 5 business days."]
GOOD = "Items can be returned within 30 days of delivery. Refunds are issued to the original payment method."
BAD = "Items can be returned within 30 days of delivery. Shipping to Mars is free for every customer."


@pytest.fixture(scope="module")
def evaluator() -> Evaluator:
    return Evaluator(nli=NLIScorer(default_nli_model()))


def rag_chain(answer: str, parser: Any = None) -> Any:
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents([Document(page_content=d) for d in DOCS])
    retriever = store.as_retriever(search_kwargs={"k": 2})
    llm = GenericFakeChatModel(messages=iter([AIMessage(content=answer)] * 4))
    prompt = ChatPromptTemplate.from_messages([("system", "Answer from: {context}"), ("human", "{input}")])
    return RunnablePassthrough.assign(context=itemgetter("input") | retriever).assign(
        answer=prompt | llm | (parser or StrOutputParser()))


def make(evaluator: Evaluator, answer: str, action: str = "block", parser: Any = None) -> tuple[GuardedChain, Telemetry]:
    telemetry = Telemetry(CollectorRegistry(), route="lc", model="fake")
    return GuardedChain(Guard(evaluator, Policy(action=action), observer=telemetry), rag_chain(answer, parser)), telemetry


QUESTION = {"input": "How do returns and refunds work?"}


def test_invoke_passes_faithful_and_blocks_hallucinated(evaluator: Evaluator) -> None:
    chain, _ = make(evaluator, GOOD)
    out = chain.invoke(QUESTION)
    assert out["answer"] == GOOD and out["guardrail"].action == "pass" and len(out["context"]) == 2
    chain, _ = make(evaluator, BAD)
    with pytest.raises(GuardrailBlocked, match="Mars"):
        chain.invoke(QUESTION)
    chain, _ = make(evaluator, BAD, action="fallback")
    out = chain.invoke(QUESTION)
    assert "Mars" not in out["answer"] and out["guardrail"].action == "fallback"


def test_stream_releases_passed_sentences_then_stops(evaluator: Evaluator) -> None:
    chain, _ = make(evaluator, BAD)
    chunks = list(chain.stream(QUESTION))
    answer = "".join(c.get("answer", "") for c in chunks)
    assert answer == "Items can be returned within 30 days of delivery. "  # the passed sentence and its space
    assert chunks[-1]["finish_reason"] == "content_filter" and chunks[-1]["guardrail"].action == "block"
    assert any("context" in c for c in chunks)  # the chain's other chunks pass through
    chain, _ = make(evaluator, GOOD)
    chunks = list(chain.stream(QUESTION))
    assert "".join(c.get("answer", "") for c in chunks) == GOOD and chunks[-1]["guardrail"].action == "pass"


def test_astream_is_checked_the_same_way(evaluator: Evaluator) -> None:
    chain, telemetry = make(evaluator, BAD)

    async def collect() -> list[dict[str, Any]]:
        return [c async for c in chain.astream(QUESTION)]

    chunks = asyncio.run(collect())
    assert "Mars" not in "".join(c.get("answer", "") for c in chunks)
    assert chunks[-1]["finish_reason"] == "content_filter"
    assert telemetry.registry.get_sample_value(
        "guardrail_verdicts_total", {"route": "lc", "model": "fake", "action": "block", "outcome": "failed"}) == 1


def test_callback_handler_records_llm_timings(evaluator: Evaluator) -> None:
    chain, _ = make(evaluator, GOOD)
    telemetry = Telemetry(CollectorRegistry(), route="lc", model="fake")
    handler = GuardrailCallbackHandler(telemetry)
    list(chain.chain.stream(QUESTION, config={"callbacks": [handler]}))  # type: ignore[union-attr]
    labels = {"route": "lc", "model": "fake"}
    assert telemetry.registry.get_sample_value("guardrail_generation_duration_seconds_count", labels) == 1
    assert telemetry.registry.get_sample_value("guardrail_time_to_first_token_seconds_count", labels) == 1
    ttft = telemetry.registry.get_sample_value("guardrail_time_to_first_token_seconds_sum", labels)
    total = telemetry.registry.get_sample_value("guardrail_generation_duration_seconds_sum", labels)
    assert 0 < ttft <= total  # type: ignore[operator]


def blocks(message: Any) -> AIMessageChunk:
    """A chat model that streams content blocks: a text block beside one that holds no answer text."""
    return AIMessageChunk(content=[{"type": "text", "text": message.content},
                                   {"type": "image_url", "image_url": {"url": "data:,"}}])


@pytest.mark.parametrize("parser", [RunnableLambda(lambda m: m), RunnableLambda(blocks),
                                    RunnableLambda(lambda m: GenerationChunk(text=m.content))],
                         ids=["message-chunks", "content-blocks", "generation-chunks"])
def test_stream_reads_message_blocks_and_generation_chunks(evaluator: Evaluator, parser: Any) -> None:
    """Answer pieces that are not strings are read for their text and released unchanged (cut by copy at a stop)."""
    def text(piece: Any) -> str:
        content = getattr(piece, "content", None)
        if isinstance(content, list):
            return "".join(b["text"] for b in content if b.get("type") == "text")
        return str(content if isinstance(content, str) else piece.text)

    chain, _ = make(evaluator, BAD, action="fallback", parser=parser)
    chunks = list(chain.stream(QUESTION))
    pieces = [c["answer"] for c in chunks[:-1] if "answer" in c]
    assert pieces and all(not isinstance(p, str) for p in pieces)
    assert "".join(text(p) for p in pieces) == "Items can be returned within 30 days of delivery. "
    assert chunks[-1]["finish_reason"] == "content_filter" and chunks[-1]["guardrail"].action == "fallback"
    assert "Mars" not in chunks[-1]["answer"]
    chain, _ = make(evaluator, GOOD, parser=parser)
    chunks = list(chain.stream(QUESTION))
    assert "".join(text(c["answer"]) for c in chunks if "answer" in c) == GOOD
    assert chunks[-1]["guardrail"].action == "pass" and chunks[-1]["guardrail"].outcome == "passed"
    out = chain.invoke(QUESTION)  # the whole answer of an invoke is read the same way
    assert out["guardrail"].outcome == "passed"


def leaked(value: Any) -> bool:
    """The hallucinated sentence anywhere in what a caller got, except quoted in the verdict's reason."""
    shown = re.sub(r"'\s+'", "", repr(value))  # a pretty-printed RunLogPatch splits long strings over lines
    return "Mars is free for every" in shown.replace('"Shipping to Mars is free for every customer." is', "")


@pytest.mark.filterwarnings("ignore::langchain_core._api.deprecation.LangChainDeprecationWarning")  # v1, astream_log
@pytest.mark.parametrize("nested", [False, True], ids=["guarded-chain", "inside-a-larger-chain"])
def test_astream_events_report_the_guarded_run_only(evaluator: Evaluator, nested: bool) -> None:
    """astream_events (v1, v2) and astream_log never hand over the wrapped chain's tokens: only what astream released
    (before: every inner run's on_chat_model_stream / on_chain_stream events, the hallucination included)."""
    def runnable(answer: str) -> Any:
        chain, _ = make(evaluator, answer)
        return RunnableLambda(lambda x: x) | chain if nested else chain

    async def events(answer: str, version: str) -> list[dict[str, Any]]:
        return [e async for e in runnable(answer).astream_events(QUESTION, version=version)]  # type: ignore[arg-type]

    async def log(answer: str) -> list[Any]:
        return [patch async for patch in runnable(answer).astream_log(QUESTION)]

    def streamed(events: list[dict[str, Any]]) -> str:
        return "".join(e["data"]["chunk"].get("answer", "") for e in events
                       if e["event"] == "on_chain_stream" and e["name"] == "GuardedChain")

    for version in ("v1", "v2"):
        bad = asyncio.run(events(BAD, version))
        assert not leaked(bad) and streamed(bad) == "Items can be returned within 30 days of delivery. "
        assert any(e["event"] == "on_chain_stream" and e["data"]["chunk"].get("finish_reason") == "content_filter"
                   for e in bad)
        good = asyncio.run(events(GOOD, version))  # the faithful twin: every token, and the retriever's run
        assert streamed(good) == GOOD
        assert [e["data"]["output"]["guardrail"].action for e in good
                if e["event"] == "on_chain_end" and e["name"] == "GuardedChain"] == ["pass"]
    for answer, text in ((BAD, "Items can be returned within 30 days of delivery. "), (GOOD, GOOD)):
        patches = asyncio.run(log(answer))
        run = sum(patches[1:], patches[0])  # the RunLog a caller builds from the patches
        assert not leaked(patches) and "".join(c.get("answer", "") for c in run.state["streamed_output"]) == text


def test_every_other_runnable_path_is_guarded(evaluator: Evaluator) -> None:
    """batch/abatch (as completed too) and transform/atransform go through invoke/stream; callbacks given to the
    GuardedChain still see the wrapped chain's LLM calls."""
    def chain(answer: str) -> GuardedChain:
        return make(evaluator, answer)[0]

    async def atransform(answer: str) -> list[dict[str, Any]]:
        async def inputs() -> Any:
            yield QUESTION
        return [c async for c in chain(answer).atransform(inputs())]

    assert isinstance(chain(BAD).batch([QUESTION], return_exceptions=True)[0], GuardrailBlocked)
    assert isinstance(asyncio.run(chain(BAD).abatch([QUESTION], return_exceptions=True))[0], GuardrailBlocked)
    assert isinstance(list(chain(BAD).batch_as_completed([QUESTION], return_exceptions=True))[0][1], GuardrailBlocked)
    for chunks in (list(chain(BAD).transform(iter([QUESTION]))), asyncio.run(atransform(BAD))):
        assert not leaked(chunks) and chunks[-1]["finish_reason"] == "content_filter"
    assert chain(GOOD).batch([QUESTION])[0]["answer"] == GOOD
    for chunks in (list(chain(GOOD).transform(iter([QUESTION]))), asyncio.run(atransform(GOOD))):
        assert "".join(c.get("answer", "") for c in chunks) == GOOD and chunks[-1]["guardrail"].action == "pass"
    telemetry = Telemetry(CollectorRegistry(), route="lc", model="fake")
    chain(GOOD).invoke(QUESTION, config={"callbacks": [GuardrailCallbackHandler(telemetry)]})
    assert telemetry.registry.get_sample_value("guardrail_generation_duration_seconds_count",
                                               {"route": "lc", "model": "fake"}) == 1


def test_a_context_formatted_into_one_string_is_one_passage(evaluator: Evaluator) -> None:
    """``RunnablePassthrough.assign(context=retriever | format_docs)``, as LangChain's RAG examples write it: the
    context is one string, read as one passage (it was read character by character, and every answer blocked)."""
    def chain(answer: str) -> GuardedChain:
        store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
        store.add_documents([Document(page_content=d) for d in DOCS])
        retriever = store.as_retriever(search_kwargs={"k": 2})
        docs_text = RunnableLambda(lambda docs: "\n\n".join(d.page_content for d in docs))
        llm = GenericFakeChatModel(messages=iter([AIMessage(content=answer)] * 4))
        prompt = ChatPromptTemplate.from_messages([("system", "Answer from: {context}"), ("human", "{input}")])
        rag = RunnablePassthrough.assign(context=itemgetter("input") | retriever | docs_text).assign(
            answer=prompt | llm | StrOutputParser())
        return GuardedChain(Guard(evaluator, Policy(action="block")), rag)

    out = chain(GOOD).invoke(QUESTION)
    assert out["answer"] == GOOD and out["guardrail"].action == "pass"
    assert "".join(c.get("answer", "") for c in chain(GOOD).stream(QUESTION)) == GOOD
    with pytest.raises(GuardrailBlocked, match="Mars"):
        chain(BAD).invoke(QUESTION)


def test_a_context_streamed_in_pieces_is_all_of_them(evaluator: Evaluator) -> None:
    """A generator formatting the documents streams the context in pieces; LangChain merges them (its ``invoke``
    reads them all), and so does the guard: it judged against the last piece alone, passing what ``invoke`` blocks
    and blocking what it passes."""
    def chain(answer: str) -> GuardedChain:
        def pieces(docs: Any) -> Any:  # a generator: LCEL streams each piece it yields
            for d in DOCS:
                yield d + "\n\n"

        llm = GenericFakeChatModel(messages=iter([AIMessage(content=answer)] * 4))
        prompt = ChatPromptTemplate.from_messages([("system", "Answer from: {context}"), ("human", "{input}")])
        rag = RunnablePassthrough.assign(context=itemgetter("input") | RunnableLambda(pieces)).assign(
            answer=prompt | llm | StrOutputParser())
        return GuardedChain(Guard(evaluator, Policy(action="block")), rag)

    first_only = "Items can be returned within 30 days of delivery."  # supported by the first document only
    streamed = list(chain(first_only).stream(QUESTION))
    assert "".join(c.get("answer", "") for c in streamed) == first_only
    refund = "Refunds are issued to the original payment method within 5 business days."  # the second document
    assert "".join(c.get("answer", "") for c in chain(refund).stream(QUESTION)) == refund
    chunks = list(chain(BAD).stream(QUESTION))
    assert "Mars" not in "".join(c.get("answer", "") for c in chunks) and chunks[-1]["guardrail"].action == "block"


def test_a_question_streamed_in_pieces_is_all_of_them(evaluator: Evaluator) -> None:
    """A chain that rewrites the question streams it token by token under the question key; the guard judged the
    answer against the last piece ("card?") and refused a faithful "No."."""
    docs = ["Gift cards cannot be returned.", "Other items can be returned within 30 days."]

    def rewrite(_: Any) -> Any:
        yield from ("Can ", "I ", "return ", "a ", "gift ", "card?")

    llm = GenericFakeChatModel(messages=iter([AIMessage(content="No.")] * 2))
    prompt = ChatPromptTemplate.from_messages([("system", "Answer from: {context}"), ("human", "{input}")])
    rag = RunnablePassthrough.assign(input=RunnableLambda(rewrite)).assign(context=RunnableLambda(lambda _: docs)) \
        .assign(answer=prompt | llm | StrOutputParser())
    chunks = list(GuardedChain(Guard(evaluator, Policy(action="block")), rag).stream({"input": "gift card return?"}))
    assert "".join(c.get("answer", "") for c in chunks) == "No." and chunks[-1]["guardrail"].action == "pass"


# --------------------------------------------------------------------------- round 51
def _tool_chain(evaluator: Evaluator, text: str, **message: Any) -> GuardedChain:
    """A RAG chain whose model does not stream: ``stream()`` hands the chain one whole message."""
    msg = AIMessage(content="", tool_calls=[{"name": "reply_to_customer", "args": {"text": text}, "id": "call_1"}],
                    **message)
    llm = GenericFakeChatModel(messages=iter([msg] * 4), disable_streaming=True)
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents([Document(page_content=d) for d in DOCS])
    prompt = ChatPromptTemplate.from_messages([("system", "Answer from: {context}"), ("human", "{input}")])
    rag = RunnablePassthrough.assign(context=itemgetter("input") | store.as_retriever(search_kwargs={"k": 2})).assign(
        answer=prompt | llm)
    return GuardedChain(Guard(evaluator, Policy(action="block")), rag)


def _delivered_calls(chunks: list[Any]) -> tuple[list[str], str]:
    args = [c["answer"].tool_calls[0]["args"]["text"] for c in chunks
            if "answer" in c and getattr(c["answer"], "tool_calls", None)]
    return args, chunks[-1]["guardrail"].action


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_whole_message_streamed_has_its_tool_calls_read(evaluator: Evaluator, mode: str) -> None:
    """A model that does not stream yields one whole AIMessage from ``stream()``: its ``tool_calls`` (no
    ``tool_call_chunks``) are read as ``invoke`` reads them (round 51: the hallucinated call went out, verdict pass)."""
    async def collect(chain: GuardedChain) -> list[Any]:
        return [c async for c in chain.astream(QUESTION)]

    def run(chain: GuardedChain) -> list[Any]:
        return list(chain.stream(QUESTION)) if mode == "stream" else asyncio.run(collect(chain))

    args, action = _delivered_calls(run(_tool_chain(evaluator, BAD)))
    assert "Mars" not in " ".join(args) and action == "block"
    args, action = _delivered_calls(run(_tool_chain(evaluator, GOOD)))
    assert args == [GOOD] and action == "pass"


def test_additional_kwargs_that_contradict_the_message_are_unreadable(evaluator: Evaluator) -> None:
    """``additional_kwargs={"content": ...}`` beside another ``content``: the guard cannot tell which one the caller
    shows, so the answer is unreadable (blocked with the reason), never checked on the other text."""
    def chain(content: str, extra: str) -> GuardedChain:
        llm = GenericFakeChatModel(messages=iter([AIMessage(content=content, additional_kwargs={"content": extra})] * 4))
        store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
        store.add_documents([Document(page_content=d) for d in DOCS])
        prompt = ChatPromptTemplate.from_messages([("system", "Answer from: {context}"), ("human", "{input}")])
        rag = RunnablePassthrough.assign(context=itemgetter("input") | store.as_retriever(search_kwargs={"k": 2})) \
            .assign(answer=prompt | llm)
        return GuardedChain(Guard(evaluator, Policy(action="block")), rag)

    with pytest.raises(GuardrailBlocked, match="additional_kwargs"):
        chain(BAD, GOOD).invoke(QUESTION)
    out = chain(GOOD, GOOD).invoke(QUESTION)
    assert out["answer"].content == GOOD and out["guardrail"].action == "pass"
