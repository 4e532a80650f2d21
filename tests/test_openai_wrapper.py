"""The real openai SDK, through the wrapper, against a real local server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from llm_server import serve
from prometheus_client import CollectorRegistry

from guardrail.checks.evaluator import Evaluator
from guardrail.checks.faithfulness import FaithfulnessCheck
from guardrail.decorator import GuardrailBlocked
from guardrail.errors import ConfigurationError
from guardrail.guard import Guard
from guardrail.openai import guard_openai
from guardrail.policy import Policy
from guardrail.scorers.nli import NLIScorer
from guardrail.telemetry import Telemetry

CTX = ["Items can be returned within 30 days of delivery. Refunds are issued to the original payment method."]
MSGS = [{"role": "system", "content": "Answer from the documents."}, {"role": "user", "content": "How do returns work?"}]


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with serve() as url:
        yield url + "/v1"


@pytest.fixture(scope="module")
def evaluator(tiny_nli: Path) -> Evaluator:
    return Evaluator(nli=NLIScorer(tiny_nli))


@pytest.fixture(scope="module")
def split_answer(evaluator: Evaluator) -> tuple[str, str]:
    """Two sentences and a threshold between their scores: the first passes, the second fails."""
    check = evaluator.faithfulness_check
    assert isinstance(check, FaithfulnessCheck)
    a, b = "Items can be returned within 30 days of delivery.", "Refunds are paid in gold bars on Mars by the moon king."
    sa, sb = (check.run("How do returns work?", CTX, x).score for x in (a, b))
    good, bad = (a, b) if sa > sb else (b, a)
    return good, bad


def threshold(evaluator: Evaluator, good: str, bad: str) -> float:
    check = evaluator.faithfulness_check
    sg, sb = (check.run("How do returns work?", CTX, x).score for x in (good, bad))  # type: ignore[union-attr]
    return (sg + sb) / 2


def client(base_url: str, evaluator: Evaluator, **policy: object) -> tuple[guard_openai, Telemetry]:  # type: ignore[valid-type]
    telemetry = Telemetry(CollectorRegistry(), route="chat", model="fake")
    guard = Guard(evaluator, Policy(retrieval_relevance=None, **policy), observer=telemetry)  # type: ignore[arg-type]
    return guard_openai(openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0), guard), telemetry


def test_non_streaming_pass_keeps_the_answer(base_url: str, evaluator: Evaluator) -> None:
    c, t = client(base_url, evaluator, action="block", faithfulness=0.0)
    r = c.chat.completions.create(model="fake", messages=MSGS, contexts=CTX, extra_body={"answer": "Returns take 30 days."})
    assert r.choices[0].message.content == "Returns take 30 days." and r.choices[0].finish_reason == "stop"
    assert r.guardrail.action == "pass"
    assert t.registry.get_sample_value("guardrail_generation_duration_seconds_count", {"route": "chat", "model": "fake"}) == 1


def test_non_streaming_block_and_fallback(base_url: str, evaluator: Evaluator) -> None:
    c, _ = client(base_url, evaluator, action="block", faithfulness=1.0)
    with pytest.raises(GuardrailBlocked) as info:
        c.chat.completions.create(model="fake", messages=MSGS, contexts=CTX, extra_body={"answer": "Refunds are in gold."})
    assert info.value.verdict.failed_checks == ("faithfulness",)
    c, _ = client(base_url, evaluator, action="fallback", faithfulness=1.0, fallback_message="Please contact support.")
    r = c.chat.completions.create(model="fake", messages=MSGS, contexts=CTX, extra_body={"answer": "Refunds are in gold."})
    assert r.choices[0].message.content == "Please contact support."
    assert r.choices[0].finish_reason == "content_filter" and r.guardrail.action == "fallback"


def test_stream_block_ends_with_content_filter(base_url: str, evaluator: Evaluator, split_answer: tuple[str, str]) -> None:
    good, bad = split_answer
    c, _ = client(base_url, evaluator, action="block", faithfulness=threshold(evaluator, good, bad))
    stream = c.chat.completions.create(model="fake", messages=MSGS, contexts=CTX, stream=True,
                                       extra_body={"answer": f"{good} {bad} Never reached."})
    chunks = list(stream)
    text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
    assert text.strip() == good and bad[:10] not in text
    assert chunks[-1].choices[0].finish_reason == "content_filter"
    assert all(ch.choices[0].finish_reason is None for ch in chunks[:-1])
    assert stream.guardrail.action == "block" and stream.guardrail.reasons[0].startswith("sentence 2")


def test_stream_flag_mode_delivers_every_chunk_unchanged(base_url: str, evaluator: Evaluator) -> None:
    answer = "Items can be returned within 30 days. Refunds are paid in gold."
    raw = openai.OpenAI(base_url=base_url, api_key="k", max_retries=0)
    direct = [ch.model_dump() for ch in raw.chat.completions.create(model="fake", messages=MSGS, stream=True,
                                                                     extra_body={"answer": answer})]
    c, t = client(base_url, evaluator, action="flag", faithfulness=1.0)
    stream = c.chat.completions.create(model="fake", messages=MSGS, contexts=CTX, stream=True, extra_body={"answer": answer})
    guarded = [ch.model_dump() for ch in stream]
    for d in direct + guarded:
        d.pop("created")
    assert guarded == direct
    assert stream.guardrail.action == "flag"
    assert t.registry.get_sample_value("guardrail_time_to_first_token_seconds_count", {"route": "chat", "model": "fake"}) == 1


def test_async_stream_block(base_url: str, evaluator: Evaluator, split_answer: tuple[str, str]) -> None:
    good, bad = split_answer
    guard = Guard(evaluator, Policy(action="fallback", faithfulness=threshold(evaluator, good, bad),
                                    retrieval_relevance=None, fallback_message="Sorry."))
    c = guard_openai(openai.AsyncOpenAI(base_url=base_url, api_key="k", max_retries=0), guard)

    async def run() -> tuple[list[object], object]:
        stream = await c.chat.completions.create(model="fake", messages=MSGS, contexts=CTX, stream=True,
                                                 extra_body={"answer": f"{good} {bad}"})
        return [ch async for ch in stream], stream.guardrail

    chunks, verdict = asyncio.run(run())
    text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)  # type: ignore[attr-defined]
    # the passed sentence, then the fallback text in the final content_filter chunk
    assert text == good + " Sorry."
    assert bad[:10] not in text
    assert chunks[-1].choices[0].finish_reason == "content_filter"  # type: ignore[attr-defined]
    assert verdict.action == "fallback"  # type: ignore[attr-defined]


def test_upstream_error_reaches_the_caller(base_url: str, evaluator: Evaluator) -> None:
    c, _ = client(base_url, evaluator, action="block", faithfulness=0.5)
    with pytest.raises(openai.InternalServerError):
        c.chat.completions.create(model="fake", messages=MSGS, contexts=CTX, extra_body={"fail": 500})
    with pytest.raises(ConfigurationError, match="needs contexts="):
        c.chat.completions.create(model="fake", messages=MSGS)
    assert c.models is not None  # everything else passes through to the client


def test_every_choice_is_checked_in_json_answers(base_url: str, evaluator: Evaluator,
                                                  split_answer: tuple[str, str]) -> None:
    """n=2 works, and an upstream that sends more choices than asked for has each of them checked."""
    good, bad = split_answer
    cut = threshold(evaluator, good, bad)
    c, _ = client(base_url, evaluator, action="block", faithfulness=cut)
    r = c.chat.completions.create(model="fake", messages=MSGS, contexts=CTX, n=2, extra_body={"answers": [good, good]})
    assert [ch.message.content for ch in r.choices] == [good, good] and len(r.guardrail_choices) == 2
    with pytest.raises(GuardrailBlocked):  # the hallucination in choice 1 (n not even asked for)
        c.chat.completions.create(model="fake", messages=MSGS, contexts=CTX, extra_body={"answers": [good, bad]})
    c, _ = client(base_url, evaluator, action="fallback", faithfulness=cut, fallback_message="Please contact support.")
    r = c.chat.completions.create(model="fake", messages=MSGS, contexts=CTX, extra_body={"answers": [good, bad]})
    assert r.choices[0].message.content == good and r.choices[0].finish_reason == "stop"
    assert r.choices[1].message.content == "Please contact support." and r.choices[1].finish_reason == "content_filter"
    assert r.guardrail.action == "fallback" and [v.action for v in r.guardrail_choices] == ["pass", "fallback"]


def test_every_choice_is_checked_in_streams(base_url: str, evaluator: Evaluator, split_answer: tuple[str, str]) -> None:
    good, bad = split_answer
    c, _ = client(base_url, evaluator, action="block", faithfulness=threshold(evaluator, good, bad))
    for answers in ([good, bad], [bad, good]):
        stream = c.chat.completions.create(model="fake", messages=MSGS, contexts=CTX, stream=True,
                                           extra_body={"answers": answers})
        texts: dict[int, str] = {}
        finish: dict[int, str | None] = {}
        for chunk in stream:
            for ch in chunk.choices:
                texts[ch.index] = texts.get(ch.index, "") + (ch.delta.content or "")
                finish[ch.index] = ch.finish_reason or finish.get(ch.index)
        failing = answers.index(bad)
        assert bad[:10] not in texts.get(failing, "")  # none of the hallucination went out
        assert "content_filter" in finish.values() and stream.guardrail.action == "block"


def test_sdk_paths_that_would_skip_the_check_are_refused(base_url: str, evaluator: Evaluator) -> None:
    c, _ = client(base_url, evaluator, action="block")
    for name in ("with_raw_response", "with_streaming_response", "parse", "stream"):
        with pytest.raises(ConfigurationError, match=r"not guarded.*create\(\.\.\., contexts="):
            getattr(c.chat.completions, name)
    for name in ("responses", "completions", "beta"):
        with pytest.raises(ConfigurationError, match="not guarded by guard_openai"):
            getattr(c, name)
    assert c.models is not None  # the rest of the client is passed through


def test_contexts_from_a_generator_are_read_once(base_url: str, evaluator: Evaluator) -> None:
    """``contexts=(d.page_content for d in docs)``: the check that they are strings used the generator up, and the
    answer was judged against no passage (a faithful answer blocked, with nothing saying why)."""
    c, _ = client(base_url, evaluator, action="block")
    good = "Items can be returned within 30 days of delivery."
    for contexts in ((t for t in CTX), map(str, CTX)):
        r = c.chat.completions.create(model="fake", messages=MSGS, contexts=contexts, extra_body={"answer": good})
        assert r.choices[0].message.content == good and r.guardrail.action == "pass"  # type: ignore[attr-defined]
    with pytest.raises(GuardrailBlocked):
        c.chat.completions.create(model="fake", messages=MSGS, contexts=(t for t in CTX),
                                  extra_body={"answer": "Items can be returned within 90 days of delivery."})
    with pytest.raises(ConfigurationError, match="got one string"):
        c.chat.completions.create(model="fake", messages=MSGS, contexts=CTX[0], extra_body={"answer": good})
    with pytest.raises(ConfigurationError, match="got int"):
        c.chat.completions.create(model="fake", messages=MSGS, contexts=3, extra_body={"answer": good})
    with pytest.raises(ConfigurationError, match="got a mapping"):
        c.chat.completions.create(model="fake", messages=MSGS, contexts={"doc1": CTX[0]}, extra_body={"answer": good})
