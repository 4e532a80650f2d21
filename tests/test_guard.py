"""Guard, policy, decorator, streaming and telemetry. Thresholds of 0.0 / 1.0 make pass / fail
deterministic with the tiny model; quality on real text is covered in test_default_model.py."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from conftest import delay_faithfulness
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from guardrail.checks.evaluator import Evaluator
from guardrail.decorator import GuardedText, GuardrailBlocked, StreamStopped, guarded
from guardrail.errors import ConfigurationError
from guardrail.guard import Guard
from guardrail.policy import Policy
from guardrail.scorers.nli import NLIScorer
from guardrail.telemetry import Telemetry

CTX = ["Items can be returned within 30 days of delivery. Refunds are issued to the original payment method."]
Q = "How do returns work?"


@pytest.fixture(scope="module")
def evaluator(tiny_nli: Path) -> Evaluator:
    return Evaluator(nli=NLIScorer(tiny_nli))


def make(evaluator: Evaluator, **policy: object) -> tuple[Guard, Telemetry]:
    telemetry = Telemetry(CollectorRegistry(), route="chat", model="test-llm")
    return Guard(evaluator, Policy(**policy), observer=telemetry), telemetry  # type: ignore[arg-type]


def sample(t: Telemetry, name: str, **labels: str) -> float | None:
    return t.registry.get_sample_value(name, {"route": "chat", "model": "test-llm", **labels})


# ----------------------------------------------------------------------------- policy
def test_policy_validation_and_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="pass, flag, block, fallback"):
        Policy(action="drop")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="within 0..1"):
        Policy(faithfulness=1.5)
    with pytest.raises(ConfigurationError, match="every check off"):
        Policy(faithfulness=None, retrieval_relevance=None)
    with pytest.raises(ConfigurationError, match="fail_open, fail_closed"):
        Policy(on_error="ignore")  # type: ignore[arg-type]
    (tmp_path / "p.toml").write_text('action = "fallback"\nfaithfulness = 0.6\non_error = "fail_closed"\n')
    p = Policy.from_file(tmp_path / "p.toml")
    assert (p.action, p.faithfulness, p.on_error) == ("fallback", 0.6, "fail_closed")
    (tmp_path / "p.json").write_text(json.dumps({"action": "block", "faithfulnes": 0.5}))
    with pytest.raises(ConfigurationError, match=r"unknown keys \['faithfulnes'\]"):
        Policy.from_file(tmp_path / "p.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ConfigurationError, match="invalid JSON"):
        Policy.from_file(tmp_path / "bad.json")


# ----------------------------------------------------------------------------- verdicts
def test_pass_flag_block_fallback(evaluator: Evaluator) -> None:
    ok, _ = make(evaluator, action="block", faithfulness=0.0, retrieval_relevance=0.0)
    v = ok.check(Q, CTX, "Items can be returned within 30 days.")
    assert (v.action, v.outcome, v.reasons) == ("pass", "passed", ())
    for action in ("flag", "block", "fallback"):
        g, _ = make(evaluator, action=action, faithfulness=1.0)
        v = g.check(Q, CTX, "Items can be returned within 30 days. Refunds are paid in cash.")
        assert (v.action, v.outcome, v.failed_checks) == (action, "failed", ("faithfulness",))
        assert v.reasons and all(r.startswith("sentence ") for r in v.reasons)
        json.dumps(v.to_dict())


def test_retrieval_relevance_failure_names_the_reason(evaluator: Evaluator) -> None:
    g, _ = make(evaluator, action="block", faithfulness=None, retrieval_relevance=0.2)
    v = g.check("What is the warranty on the X200 laptop?", ["Our cafeteria opens at 8 am."], "Two years.")
    assert v.failed_checks == ("retrieval_relevance",) and "no retrieved passage is relevant" in v.reasons[0]
    v = g.check("What is the warranty?", [], "Two years.")
    assert v.reasons == ("no passages were retrieved for the question",)


def test_policy_checks_must_be_configured_on_the_evaluator(tiny_nli: Path) -> None:
    with pytest.raises(Exception, match="need checks the evaluator does not run"):
        Guard(Evaluator(checks=["retrieval_relevance"]), Policy(faithfulness=0.5))


# ----------------------------------------------------------------------------- errors
def test_scoring_error_fail_open_and_closed(tmp_path: Path, tiny_nli: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    for f in tiny_nli.iterdir():
        (broken / f.name).write_bytes(b"not an onnx file" if f.suffix == ".onnx" else f.read_bytes())
    ev = Evaluator(nli=NLIScorer(broken))
    g, t = make(ev, action="block", on_error="fail_open")
    v = g.check(Q, CTX, "Some answer.")
    assert (v.action, v.outcome) == ("pass", "error") and "ModelLoadError" in v.error
    assert sample(t, "guardrail_check_errors_total", reason="exception") == 1
    assert sample(t, "guardrail_verdicts_total", action="pass", outcome="error") == 1
    g, t = make(ev, action="block", on_error="fail_closed")

    @guarded(g)
    def answer(question: str, contexts: list[str]) -> str:
        return "Some answer."

    with pytest.raises(GuardrailBlocked, match="scoring failed"):
        answer(Q, CTX)
    assert sample(t, "guardrail_check_errors_total", reason="exception") == 1


def test_latency_budget_overrun_is_counted(evaluator: Evaluator) -> None:
    g, t = make(evaluator, action="fallback", latency_budget_s=1e-6, on_error="fail_closed")
    v = g.check(Q, CTX * 20, "Items can be returned within 30 days. " * 10)
    assert (v.outcome, v.action) == ("error", "fallback") and "latency budget" in v.error
    assert sample(t, "guardrail_check_errors_total", reason="timeout") == 1


# ----------------------------------------------------------------------------- decorator & timings
def bucket(t: Telemetry, metric: str, le: str) -> float | None:
    return sample(t, f"{metric}_bucket", le=le)


def assert_timing(t: Telemetry, ttft_bucket: tuple[str, str], total_bucket: tuple[str, str]) -> None:
    """One observation, above the first bound and within the second (the bucket it belongs in)."""
    for metric, (below, within) in (("guardrail_time_to_first_token_seconds", ttft_bucket),
                                    ("guardrail_generation_duration_seconds", total_bucket)):
        assert sample(t, f"{metric}_count") == 1, metric
        assert bucket(t, metric, below) == 0, (metric, below)
        assert bucket(t, metric, within) == 1, (metric, within)


def test_sync_function_timings_and_flag(evaluator: Evaluator) -> None:
    g, t = make(evaluator, action="flag", faithfulness=1.0)

    @guarded(g, question="q", contexts=lambda a: a["docs"])
    def answer(q: str, docs: list[str]) -> str:
        time.sleep(0.35)
        return "Items can be returned within 30 days."

    out = answer(Q, docs=CTX)
    assert isinstance(out, GuardedText) and out == "Items can be returned within 30 days."
    assert out.verdict.action == "flag"
    assert_timing(t, ("0.25", "0.5"), ("0.25", "0.5"))
    assert sample(t, "guardrail_verdicts_total", action="flag", outcome="failed") == 1


def test_async_function_timings_and_block(evaluator: Evaluator) -> None:
    g, t = make(evaluator, action="block", faithfulness=1.0)

    @guarded(g)
    async def answer(question: str, contexts: list[str]) -> str:
        await asyncio.sleep(0.35)
        return "Items can be returned within 30 days."

    with pytest.raises(GuardrailBlocked) as info:
        asyncio.run(answer(Q, CTX))
    assert info.value.verdict.failed_checks == ("faithfulness",)
    assert_timing(t, ("0.25", "0.5"), ("0.25", "0.5"))


def test_generator_timings_flag_mode_releases_everything(evaluator: Evaluator) -> None:
    g, t = make(evaluator, action="flag", faithfulness=1.0)
    chunks = ["", "Items can ", "be returned ", "within 30 days. ", "Refunds are paid in cash."]

    @guarded(g)
    def answer(question: str, contexts: list[str]):  # type: ignore[no-untyped-def]
        time.sleep(0.3)
        yield chunks[0]          # an empty chunk is not the first token
        time.sleep(0.1)
        for c in chunks[1:]:
            yield c
            time.sleep(0.06)

    it = answer(Q, CTX)
    assert "".join(it) == "".join(chunks)
    assert it.verdict is not None and it.verdict.action == "flag"
    # TTFT ~0.40 s, total ~0.64 s
    assert_timing(t, ("0.25", "0.5"), ("0.5", "0.75"))


def test_async_generator_block_mode_stops_before_the_failing_sentence(evaluator: Evaluator) -> None:
    g, t = make(evaluator, action="block", faithfulness=0.0, retrieval_relevance=None)
    verdicts = []

    @guarded(g, on_verdict=verdicts.append)
    async def answer(question: str, contexts: list[str]):  # type: ignore[no-untyped-def]
        await asyncio.sleep(0.3)
        for c in ["Items can be returned ", "within 30 days. Refunds ", "are issued quickly. "]:
            yield c
            await asyncio.sleep(0.1)

    async def consume() -> list[str]:
        return [c async for c in answer(Q, CTX)]

    out = asyncio.run(consume())
    assert "".join(out) == "Items can be returned within 30 days. Refunds are issued quickly. "
    assert verdicts[0].action == "pass"
    # TTFT ~0.3 s; generation ~0.6 s (checking time excluded)
    assert_timing(t, ("0.25", "0.5"), ("0.5", "0.75"))


def test_stream_block_releases_only_passed_sentences(evaluator: Evaluator) -> None:
    """The threshold sits between two sentences' scores: the stream releases the first, never the second."""
    from guardrail.checks.faithfulness import FaithfulnessCheck

    check = evaluator.faithfulness_check
    assert isinstance(check, FaithfulnessCheck)
    a, b = "Items can be returned within 30 days of delivery.", "Refunds are paid in gold bars on Mars by the moon king."
    sa, sb = (check.run(Q, CTX, x).score for x in (a, b))
    assert sa != sb
    good, bad = (a, b) if sa > sb else (b, a)
    g, _ = make(evaluator, action="block", faithfulness=(sa + sb) / 2, retrieval_relevance=None)
    answer = f"{good} {bad} A third sentence that is never reached."
    stream = g.stream(Q, CTX)
    released = ""
    for i in range(0, len(answer), 7):
        released += stream.feed(answer[i : i + 7])
        if stream.stopped:
            break
    end = stream.finish()
    released += end.text
    assert released.strip() == good and bad not in released
    assert stream.stopped and end.verdict.action == "block" and end.verdict.failed_checks == ("faithfulness",)
    assert end.verdict.reasons[0].startswith(f'sentence 2 "{bad}"')
    assert [e.text for e in end.verdict.evaluation.faithfulness.sentences] == [good, bad]


def test_generator_block_with_fallback_and_marker(evaluator: Evaluator) -> None:
    g, _ = make(evaluator, action="fallback", faithfulness=1.0, fallback_message="Sorry.")

    @guarded(g)
    def answer(question: str, contexts: list[str]):  # type: ignore[no-untyped-def]
        yield "Items can be returned within 30 days. "
        yield "More text."

    out = list(answer(Q, CTX))
    assert out == ["Sorry."] and isinstance(out[-1], StreamStopped) and out[-1].verdict.action == "fallback"

    g, _ = make(evaluator, action="block", faithfulness=1.0)
    closed = []

    @guarded(g)
    def answer2(question: str, contexts: list[str]):  # type: ignore[no-untyped-def]
        try:
            yield "Items can be returned within 30 days. "
            yield "More text. "
            yield "Even more."
        finally:
            closed.append(True)

    out = list(answer2(Q, CTX))
    assert len(out) == 1 and isinstance(out[0], StreamStopped) and "withheld" in out[0]
    assert closed == [True]  # the generator was closed, not left running


def test_decorator_configuration_errors(evaluator: Evaluator) -> None:
    g, _ = make(evaluator)
    with pytest.raises(ConfigurationError, match="no parameter 'query'"):
        @guarded(g, question="query")
        def f(question: str, contexts: list[str]) -> str:
            return ""

    @guarded(g)
    def h(question: str, contexts: str) -> str:
        return "x"

    with pytest.raises(ConfigurationError, match="list of strings"):
        h("q", "one string")


def _twins(evaluator: Evaluator) -> tuple[str, str, float]:
    """A faithful sentence, a hallucination, and a threshold between their scores (deterministic with the tiny model)."""
    from guardrail.checks.faithfulness import FaithfulnessCheck

    check = evaluator.faithfulness_check
    assert isinstance(check, FaithfulnessCheck)
    a, b = "Items can be returned within 30 days of delivery.", "Refunds are paid in gold bars on Mars by the moon king."
    sa, sb = (check.run(Q, CTX, x).score for x in (a, b))
    assert sa is not None and sb is not None and sa != sb
    return (a, b, (sa + sb) / 2) if sa > sb else (b, a, (sa + sb) / 2)


class Answerer:
    """A callable object, as LLM client wrappers often are."""

    def __init__(self, *answer: str) -> None:
        self.answer = answer

    def __call__(self, question: str, contexts: list[str]) -> str:
        return " ".join(self.answer)


class AsyncAnswerer(Answerer):
    async def __call__(self, question: str, contexts: list[str]) -> str:  # type: ignore[override]
        await asyncio.sleep(0)
        return " ".join(self.answer)


class StreamingAnswerer(Answerer):
    def __call__(self, question: str, contexts: list[str]) -> Iterator[str]:  # type: ignore[override]
        for sentence in self.answer:
            yield sentence + " "


class AsyncStreamingAnswerer(Answerer):
    async def __call__(self, question: str, contexts: list[str]) -> AsyncIterator[str]:  # type: ignore[override]
        for sentence in self.answer:
            await asyncio.sleep(0)
            yield sentence + " "


def test_a_callable_object_is_guarded_as_its_call_is(evaluator: Evaluator) -> None:
    """An object with ``__call__`` is guarded like a function of the same kind: an ``async def __call__`` gives a
    coroutine function whose hallucination raises once awaited, a generator ``__call__`` a held stream."""
    good, bad, cut = _twins(evaluator)
    g, _ = make(evaluator, action="block", faithfulness=cut, retrieval_relevance=None)

    sync = guarded(g)(Answerer(good))
    out = sync(Q, CTX)
    assert isinstance(out, GuardedText) and out == good and out.verdict.action == "pass"
    with pytest.raises(GuardrailBlocked):
        guarded(g)(Answerer(bad))(Q, CTX)

    answer = guarded(g)(AsyncAnswerer(good))
    assert inspect.iscoroutinefunction(answer)
    out = asyncio.run(answer(Q, contexts=CTX))
    assert isinstance(out, GuardedText) and out == good and out.verdict.action == "pass"
    with pytest.raises(GuardrailBlocked) as info:
        asyncio.run(guarded(g)(AsyncAnswerer(bad))(Q, CTX))
    assert info.value.verdict.failed_checks == ("faithfulness",)

    chunks = list(guarded(g)(StreamingAnswerer(good, bad))(Q, CTX))
    assert "".join(chunks[:-1]) == good + " " and isinstance(chunks[-1], StreamStopped) and bad not in "".join(chunks)
    assert list(guarded(g)(StreamingAnswerer(good))(Q, CTX)) == [good + " "]

    async def consume(it: Any) -> list[str]:
        return [c async for c in it]

    chunks = asyncio.run(consume(guarded(g)(AsyncStreamingAnswerer(good, bad))(Q, CTX)))
    assert "".join(chunks[:-1]) == good + " " and isinstance(chunks[-1], StreamStopped) and bad not in "".join(chunks)
    assert asyncio.run(consume(guarded(g)(AsyncStreamingAnswerer(good))(Q, CTX))) == [good + " "]


def test_a_callable_object_misconfigured_is_named_in_the_error(evaluator: Evaluator) -> None:
    g, _ = make(evaluator)
    for cls in (Answerer, AsyncAnswerer, StreamingAnswerer):
        with pytest.raises(ConfigurationError, match=rf"{cls.__name__}\.__call__\(\) has no parameter 'docs' for the "
                                                     "contexts; pass contexts="):
            guarded(g, contexts="docs")(cls("x"))
    with pytest.raises(ConfigurationError, match=r"the contexts of Answerer\.__call__\(\) must be a list of strings"):
        guarded(g)(Answerer("x"))(Q, "one string")

    async def reply(question: str, contexts: list[str]) -> str:
        return "x"

    with pytest.raises(ConfigurationError, match=r"functools\.partial\(.*reply\)\(\) has no parameter 'query'"):
        guarded(g, question="query")(functools.partial(reply, contexts=CTX))


def test_a_sync_call_that_returns_a_coroutine_is_refused_unrun(evaluator: Evaluator) -> None:
    """A ``__call__`` (or function) that is not ``async def`` but hands back a coroutine: its answer is not there to
    check, so it is refused, and the coroutine is closed (never run, so no "never awaited" warning either)."""
    g, _ = make(evaluator, action="block", faithfulness=1.0)
    ran, made = [], []

    async def generate() -> str:
        ran.append(True)
        return "Refunds are paid in gold bars on Mars by the moon king."

    class Hidden(Answerer):
        def __call__(self, question: str, contexts: list[str]) -> Any:  # type: ignore[override]
            made.append(generate())
            return made[-1]

    with pytest.raises(ConfigurationError, match=r"Hidden\.__call__\(\) returned coroutine, an awaitable, but is "
                                                 "not an async function.*async def"):
        guarded(g)(Hidden())(Q, CTX)
    assert ran == [] and inspect.getcoroutinestate(made[0]) == inspect.CORO_CLOSED


def test_acheck_keeps_the_event_loop_free(evaluator: Evaluator) -> None:
    g, _ = make(evaluator, action="flag", faithfulness=0.5)
    long_ctx = [" ".join(f"Sentence {i} says fact {i} about returns." for i in range(400))]

    async def main() -> tuple[int, float]:
        ticks = 0
        done = False

        async def ticker() -> None:
            nonlocal ticks
            while not done:
                ticks += 1
                await asyncio.sleep(0.005)

        task = asyncio.create_task(ticker())
        t0 = time.perf_counter()
        await g.acheck(Q, long_ctx, "Sentence 3 says fact 3 about returns. " * 5)
        spent = time.perf_counter() - t0
        done = True
        await task
        return ticks, spent

    ticks, spent = asyncio.run(main())
    assert spent > 0.05 and ticks >= 3  # the loop kept ticking while scoring ran


# ----------------------------------------------------------------------------- metrics
def test_metrics_exposition_parses_with_samples(evaluator: Evaluator) -> None:
    g, t = make(evaluator, action="flag", faithfulness=0.5)
    g.check(Q, CTX, "Items can be returned within 30 days.", time_to_first_token=0.2, generation=1.1)
    families = {f.name: f for f in text_string_to_metric_families(generate_latest(t.registry).decode())}
    for name in ("guardrail_time_to_first_token_seconds", "guardrail_generation_duration_seconds",
                 "guardrail_check_duration_seconds", "guardrail_faithfulness_score",
                 "guardrail_retrieval_relevance_score"):
        assert families[name].type == "histogram" and any(s.value > 0 for s in families[name].samples), name
    assert families["guardrail_verdicts"].type == "counter"
    checks = {s.labels.get("check") for s in families["guardrail_check_duration_seconds"].samples}
    assert {"total", "faithfulness", "retrieval_relevance"} <= checks
    assert sample(t, "guardrail_checks_in_flight") == 0


def test_metrics_asgi_app_serves_the_registry(evaluator: Evaluator) -> None:
    from starlette.testclient import TestClient

    from guardrail.telemetry import metrics_app

    g, t = make(evaluator, action="flag", faithfulness=0.0, retrieval_relevance=0.0)
    g.check(Q, CTX, "Items can be returned within 30 days.")
    body = TestClient(metrics_app(t.registry)).get("/").text
    assert 'guardrail_verdicts_total{action="pass",model="test-llm",outcome="passed",route="chat"} 1.0' in body


CHILD = """
import sys
from prometheus_client import CollectorRegistry
from guardrail.telemetry import Telemetry
from guardrail.verdict import Scores, Timings, Verdict
t = Telemetry(CollectorRegistry(), route="chat", model="m")
with t.track():
    t.observe(Verdict("flag", "failed", Scores(0.3, 0.8, None), ("r",), ("faithfulness",), Timings(0.01, 0.2, 1.0)))
"""


def test_multiprocess_mode_aggregates_workers(tmp_path: Path) -> None:
    from prometheus_client import multiprocess

    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    for _ in range(2):
        subprocess.run([sys.executable, "-c", CHILD], env=env, check=True, timeout=60)
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=str(tmp_path))
    labels = {"route": "chat", "model": "m"}
    assert registry.get_sample_value("guardrail_verdicts_total", {**labels, "action": "flag", "outcome": "failed"}) == 2
    assert registry.get_sample_value("guardrail_faithfulness_score_count", labels) == 2
    assert registry.get_sample_value("guardrail_time_to_first_token_seconds_bucket", {**labels, "le": "0.25"}) == 2
    assert registry.get_sample_value("guardrail_checks_in_flight", labels) == 0


def test_block_mode_defaults_to_fail_closed_and_any_sentence() -> None:
    assert Policy(action="block").on_error == "fail_closed" and Policy(action="fallback").on_error == "fail_closed"
    assert Policy(action="flag").on_error == "fail_open" and Policy(action="block", on_error="fail_open").on_error == "fail_open"
    assert Policy().aggregate == "any"
    with pytest.raises(ConfigurationError, match="any, mean"):
        Policy(aggregate="median")  # type: ignore[arg-type]


def test_one_unsupported_sentence_fails_however_many_pass(evaluator: Evaluator) -> None:
    from guardrail.checks.evaluator import CheckTimings, Evaluation
    from guardrail.guard import decide
    from guardrail.verdict import Timings

    base = evaluator.faithfulness_check.run(Q, CTX, "Items can be returned within 30 days. Refunds go back.")  # type: ignore[union-attr]
    sentences = tuple(dataclasses.replace(base.sentences[0], index=i, score=0.9) for i in range(81))
    sentences += (dataclasses.replace(base.sentences[0], index=81, score=0.1, text="A made-up claim."),)
    faith = dataclasses.replace(base, sentences=sentences, score=sum(s.score for s in sentences) / len(sentences))
    evaluation = Evaluation(faith, None, None, None, CheckTimings(0, 0, 0))
    assert faith.score > 0.85
    v = decide(Policy(action="block", retrieval_relevance=None), evaluation, "x", Timings(0.0))
    assert v.action == "block" and v.failed_checks == ("faithfulness",) and "made-up" in v.reasons[0]
    v = decide(Policy(action="block", retrieval_relevance=None, aggregate="mean"), evaluation, "x", Timings(0.0))
    assert v.action == "pass"


def test_stream_error_then_real_failure_reports_the_failure(evaluator: Evaluator, monkeypatch: pytest.MonkeyPatch) -> None:
    """fail_open: a scoring error on sentence 1 is delivered unchecked, and a real failure on sentence 2 still decides."""
    g, t = make(evaluator, action="block", on_error="fail_open", retrieval_relevance=None, faithfulness=0.5)
    check = evaluator.faithfulness_check
    real = check.run  # type: ignore[union-attr]
    calls = {"n": 0}

    def flaky(question, contexts, sentence, **kwargs):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("scorer hiccup")
        result = real(question, contexts, sentence, **kwargs)
        return dataclasses.replace(result, sentences=tuple(dataclasses.replace(s, score=0.0) for s in result.sentences))

    monkeypatch.setattr(check, "run", flaky)
    s = g.stream(Q, CTX)
    # (sentences with a verb: a short verbless span first is held and read with the sentence after it)
    out = s.feed("The first sentence is here. The second sentence is there. ")
    end = s.finish()
    assert out == "The first sentence is here. " and s.stopped  # sentence 1 went out with its space
    assert (end.verdict.action, end.verdict.outcome, end.verdict.failed_checks) == ("block", "failed", ("faithfulness",))
    assert sample(t, "guardrail_check_errors_total", reason="exception") == 1


def _count_splits(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """``{"chars": n}``: the characters the stream's sentence splitter is handed from now on."""
    import guardrail.stream.assembler as streaming

    seen = {"chars": 0}
    real = streaming.split_sentences

    def counting(text: str):  # type: ignore[no-untyped-def]
        seen["chars"] += len(text)
        return real(text)

    monkeypatch.setattr(streaming, "split_sentences", counting)
    return seen


def test_stream_splitting_is_linear_in_the_answer(evaluator: Evaluator, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fed one character at a time, the splitter sees each character a bounded number of times."""
    seen = _count_splits(monkeypatch)
    g, _ = make(evaluator, action="block", faithfulness=0.0, retrieval_relevance=None)
    for n in (2_000, 8_000):
        seen["chars"] = 0
        text = ("Items can be returned within 30 days, e.g. by mail. " * 400)[:n]
        s = g.stream(Q, CTX)
        released = "".join(s.feed(ch) for ch in text) + s.finish().text
        assert released == text
        assert seen["chars"] < 40 * n, (n, seen["chars"])
    # one long run of text without a sentence end is checked in bounded pieces, not re-split as it grows
    seen["chars"] = 0
    s = g.stream(Q, CTX)
    text = "word " * 4000
    released = "".join(s.feed(text[i:i + 10]) for i in range(0, len(text), 10)) + s.finish().text
    assert released == text and seen["chars"] < 40 * len(text)


def test_a_stream_that_holds_much_re_reads_a_bounded_multiple_of_it(evaluator: Evaluator,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Bare pleasantries ("Ok. Ok. ...", a model in a repetition loop) are held for a claim, and the held text was
    re-split at every sentence end: 16 KB took over a minute (round 37). The re-reading is now bounded by a multiple
    of the text (it waits while over it), and the verdict is the one word-by-word feeding gave."""
    seen = _count_splits(monkeypatch)
    g, _ = make(evaluator, action="block", faithfulness=0.0, retrieval_relevance=None)
    for n in (500, 2_000):
        seen["chars"] = 0
        s = g.stream(Q, CTX)
        outs = [s.feed("Ok. ") for _ in range(n)]
        end = s.finish()
        assert not any(outs) and end.text == "Ok. " * n and end.verdict.action == "pass"  # held to the end, whole
        assert seen["chars"] < 12 * 4 * n, (n, seen["chars"])  # was about n * n * 2 (0.5 M chars, 8 M chars)
    # a claim after the held replies still releases them with it, and a failing one still stops the stream
    g, _ = make(evaluator, action="block", faithfulness=1.0, retrieval_relevance=None)
    s = g.stream(Q, CTX)
    out = "".join(s.feed("Ok. ") for _ in range(2_000)) + s.feed("Items can be returned within 30 days. ")
    end = s.finish()
    assert out == "" and end.text == "" and s.stopped and end.verdict.action == "block"


def test_a_stream_looks_for_a_style_sheet_a_bounded_number_of_times(evaluator: Evaluator,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Every chunk holding "`<style>`" had the whole text looked at for a style sheet, on the event loop (round 37:
    300 such chunks held ``/healthz`` for 9 s). The looks are bounded by a multiple of the text, nothing goes out
    while one is owed, and a style sheet after many examples in code is still refused before it is released."""
    import guardrail.stream.check as check

    seen = {"calls": 0, "chars": 0}
    real = check.stylesheet

    def counting(text: str) -> str | None:
        seen["calls"] += 1
        seen["chars"] += len(text)
        return real(text)

    monkeypatch.setattr(check, "stylesheet", counting)
    g, _ = make(evaluator, action="block", faithfulness=0.0, retrieval_relevance=None)
    first = "Items can be returned within 30 days. "
    for n in (300, 3_000):
        seen.update(calls=0, chars=0)
        s = g.stream(Q, CTX)
        out = s.feed(first) + "".join(s.feed("Use `<style>` tags. ") for _ in range(n))
        end = s.finish()
        assert out + end.text == first + "Use `<style>` tags. " * n and end.verdict.action == "pass"
        assert seen["chars"] < 10 * len(s.text) and seen["calls"] < 80, (n, seen)  # was n looks at the whole text
    s = g.stream(Q, CTX)
    out = s.feed(first) + "".join(s.feed("Use `<style>` tags. ") for _ in range(1_000))
    out += s.feed("<style>b{display:none}</style>") + s.feed("Gift cards can<b> not</b> be returned. ")
    end = s.finish()
    assert s.stopped and "<style>b" not in out + end.text
    assert (end.verdict.action, end.verdict.outcome) == ("block", "error")


def test_stream_over_the_limit_is_unchecked(evaluator: Evaluator) -> None:
    from guardrail.checks.evaluator import Evaluator as Ev
    from guardrail.checks.faithfulness import FaithfulnessConfig

    small = Ev(nli=evaluator.faithfulness_check.nli, faithfulness=FaithfulnessConfig(max_response_chars=50))  # type: ignore[union-attr]
    g, t = make(small, action="block", faithfulness=0.0, retrieval_relevance=None)
    s = g.stream(Q, CTX)
    out = s.feed("Items can be returned within 30 days. ") + s.feed("x" * 60)
    end = s.finish()
    assert s.stopped and "x" not in out and (end.verdict.action, end.verdict.outcome) == ("block", "error")
    assert sample(t, "guardrail_check_errors_total", reason="uncheckable") == 1


def test_admission_control_refuses_at_once_past_max_pending(evaluator: Evaluator, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    gate = threading.Event()
    delay_faithfulness(evaluator, monkeypatch, lambda: gate.wait(10))
    telemetry = Telemetry(CollectorRegistry(), route="chat", model="test-llm")
    g = Guard(evaluator, Policy(action="block", retrieval_relevance=None), observer=telemetry, max_workers=2, max_pending=2)
    with ThreadPoolExecutor(2) as pool:
        running = [pool.submit(g.check, Q, CTX, "Items can be returned within 30 days.") for _ in range(2)]
        time.sleep(0.2)
        t0 = time.perf_counter()
        v = g.check(Q, CTX, "Items can be returned within 30 days.")
        assert time.perf_counter() - t0 < 0.5  # refused at once, not queued
        assert (v.action, v.outcome, v.error_reason) == ("block", "error", "overload")
        gate.set()
        assert all(f.result().outcome != "error" for f in running)
    assert sample(telemetry, "guardrail_check_errors_total", reason="overload") == 1
    assert g.check(Q, CTX, "Items can be returned within 30 days.").outcome != "error"  # capacity is back


def test_an_admitted_stream_is_not_refused_mid_way(evaluator: Evaluator, monkeypatch: pytest.MonkeyPatch) -> None:
    """Admission control counts a stream once: past max_pending a *new* answer is refused, but a stream whose first
    sentence was admitted has its next sentences checked and released (what it delivered cannot be taken back)."""
    import threading

    gate, holding = threading.Event(), threading.Event()
    delay_faithfulness(evaluator, monkeypatch, lambda: gate.wait(10) if holding.is_set() else None)
    telemetry = Telemetry(CollectorRegistry(), route="chat", model="test-llm")
    g = Guard(evaluator, Policy(action="block", faithfulness=0.0, retrieval_relevance=None), observer=telemetry,
              max_workers=2, max_pending=1)
    stream = g.stream(Q, CTX)
    first = stream.feed("Items can be returned within 30 days. Refunds")
    assert first == "Items can be returned within 30 days. "  # admitted, checked, released with its space
    with ThreadPoolExecutor(1) as pool:
        holding.set()
        busy = pool.submit(g.check, Q, CTX, "Refunds are issued to the original payment method.")
        deadline = time.monotonic() + 5
        while g._pending < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        holding.clear()  # the busy check waits on the gate; later checks run at once
        refused = g.check(Q, CTX, "Items can be returned within 30 days.")  # a new answer: refused at once
        second = stream.feed(" are issued to the original payment method.")
        end = stream.finish()
        gate.set()
        assert busy.result().outcome != "error"
    assert (refused.outcome, refused.error_reason) == ("error", "overload")
    assert first + second + end.text == ("Items can be returned within 30 days. "
                                         "Refunds are issued to the original payment method.")
    assert (end.verdict.action, end.verdict.outcome) == ("pass", "passed")
    assert sample(telemetry, "guardrail_check_errors_total", reason="overload") == 1


def test_empty_answers_are_a_policy_choice(evaluator: Evaluator) -> None:
    g, _ = make(evaluator, action="block", retrieval_relevance=None)
    assert g.check(Q, CTX, "  ").action == "pass"
    g, _ = make(evaluator, action="block", retrieval_relevance=None, empty_answer="fail")
    v = g.check(Q, CTX, "")
    assert v.action == "block" and v.failed_checks == ("empty_answer",) and "empty" in v.reasons[0]
    s = g.stream(Q, CTX)
    assert s.finish().verdict.failed_checks == ("empty_answer",)


def test_block_stream_runs_the_retrieval_check_while_the_first_sentence_is_written(evaluator: Evaluator) -> None:
    """The retrieval check needs no answer: a hold-mode stream starts it when it is opened, so the first sentence
    waits only for its own faithfulness check. A flag-mode stream does no work before the answer is complete."""
    embedder = evaluator.relevance_check.embedder  # type: ignore[union-attr]
    contexts = [f"Stores open at {h} am on weekdays and close at six." for h in range(7, 10)]  # new texts: not cached
    g, telemetry = make(evaluator, action="flag")
    before = embedder.tokens_run
    flagged = g.stream("When do stores open? (flag)", contexts)
    time.sleep(0.2)
    assert embedder.tokens_run == before
    g, telemetry = make(evaluator, action="block", faithfulness=0.0, retrieval_relevance=0.0)
    stream = g.stream("When do stores open?", contexts)
    deadline = time.monotonic() + 10
    while embedder.tokens_run == before and time.monotonic() < deadline:  # no text fed yet
        time.sleep(0.01)
    ran = embedder.tokens_run - before
    assert ran > 0
    released = stream.feed("Stores open at 7 am on weekdays. ") + stream.finish().text
    assert released == "Stores open at 7 am on weekdays. "
    assert embedder.tokens_run - before == ran  # the check ran once, before the text came
    end = stream.finish()
    assert end.verdict.action == "pass" and end.verdict.evaluation.retrieval is not None
    assert end.verdict.evaluation.timings.retrieval_relevance > 0
    flagged.finish()


def test_a_stream_opened_past_max_pending_is_blocked_as_overloaded(evaluator: Evaluator, monkeypatch: pytest.MonkeyPatch) -> None:
    """The early retrieval check is admitted like any check: refused at stream open, the stream's first sentence is
    held and the answer blocked with reason overload (fail closed), never delivered unchecked."""
    import threading

    gate = threading.Event()
    delay_faithfulness(evaluator, monkeypatch, lambda: gate.wait(10))
    telemetry = Telemetry(CollectorRegistry(), route="chat", model="test-llm")
    g = Guard(evaluator, Policy(action="block", faithfulness=0.0, retrieval_relevance=0.0), observer=telemetry,
              max_workers=1, max_pending=1)
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(g.check, Q, CTX, "Items can be returned within 30 days.")
        time.sleep(0.2)
        stream = g.stream(Q, CTX)
        out = stream.feed("Items can be returned within 30 days. ")
        end = stream.finish()
        gate.set()
        assert running.result().outcome != "error"
    assert out + end.text == ""
    assert (end.verdict.action, end.verdict.outcome, end.verdict.error_reason) == ("block", "error", "overload")
    assert sample(telemetry, "guardrail_check_errors_total", reason="overload") == 1
