"""LLM-judged metrics with the real openai SDK against a scripted local OpenAI-compatible judge (tests/judge_server.py):
the formulas on the definitions' worked examples, ChainPoll polling, strict JSON with one repair turn, retries on 429
(Retry-After) and 500, timeouts, the cache, and `guardrail eval` end to end with a resume after a kill."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

import judge_server
import llm_server
import pytest

from guardrail.cli import main
from guardrail.judge import Judge, JudgeError, Sample, formulas
from guardrail.judge import metrics as m
from guardrail.scorers.embedding import EmbeddingScorer

CTX = ["Items can be returned within 30 days of delivery. Refunds go to the original payment method.",
       "Gift cards cannot be returned."]
GOOD = "Items can be returned within 30 days. Refunds go to the original payment method. Gift cards cannot be returned."
BAD = "Items can be returned within 30 days. Refunds go to the original payment method. Shipping to Mars is free."
Q = "How do returns work?"
BENCH = Path(__file__).resolve().parents[2] / "shared" / "data" / "bench" / "halueval_qa_dev.jsonl.gz"


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with llm_server.serve(judge_server.app) as base:
        yield base + "/v1"


@pytest.fixture()
def judge(url: str, tmp_path: Path) -> Judge:
    judge_server.reset()
    return Judge("judge-model", base_url=url, api_key="k", max_retries=2, timeout=5)


def test_formulas_reproduce_the_worked_examples() -> None:
    assert formulas.f1_from_counts(3, 1, 1) == pytest.approx(0.75)
    assert formulas.answer_correctness(3, 1, 1, 0.85, weights=(0.5, 0.5)) == pytest.approx(0.80)
    assert formulas.entities_recall(["Paris", "France", "1889", "Eiffel", "Gustave", "iron"],
                                    ["paris", "France", "1889", "Eiffel", "tower"]) == pytest.approx(4 / 6, abs=1e-9)
    share, ranked = formulas.context_precision([True, True, True, True, False])
    assert share == pytest.approx(0.8) and ranked == pytest.approx(1.0)
    share, ranked = formulas.context_precision([False, True, False, True])
    assert share == pytest.approx(0.5) and ranked == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert formulas.share([True, True, False]) == pytest.approx(2 / 3) and formulas.share([]) is None
    assert formulas.geval_score(4) == pytest.approx(0.75)
    assert formulas.geval_score(4, {"3": 0.5, "5": 0.5}) == pytest.approx(0.75)
    with pytest.raises(ValueError):
        formulas.answer_correctness(1, 0, 0, 0.5, weights=(0, 0))


def test_claim_faithfulness_two_of_three(judge: Judge) -> None:
    r = m.faithfulness_claims(judge, Sample(Q, CTX, BAD))
    assert r.score == pytest.approx(2 / 3) and "Mars" in r.reason
    assert [v["supported"] for v in r.judgments] == [True, True, False]
    assert r.usage.calls == 2 and r.usage.prompt_tokens > 0
    assert m.faithfulness_claims(judge, Sample(Q, CTX, GOOD)).score == 1.0


def test_chainpoll_polls_n_times_in_one_request_or_many(judge: Judge) -> None:
    votes = iter([True, False, True, True, False] * 4)
    judge_server.OVERRIDE["fully supported"] = lambda p, i: {"reasoning": "r", "supported": next(votes)}
    r = m.context_adherence(judge, Sample(Q, CTX, GOOD), n=5)
    assert r.score == pytest.approx(0.6) and len(r.judgments) == 5 and len(judge_server.CALLS) == 1
    judge_server.CALLS.clear()
    judge_server.SETTINGS["ignore_n"] = True  # an endpoint that answers one choice whatever n is
    r = m.context_adherence(judge, Sample(Q, CTX, BAD + " x"), n=5)
    assert len(r.judgments) == 5 and len(judge_server.CALLS) == 5
    assert m.completeness(judge, Sample(Q, CTX, GOOD), n=3).score == pytest.approx(0.5)


def test_ground_truth_metrics(judge: Judge) -> None:
    ref = "Paris is in France. The tower opened in 1889 and Gustave Eiffel built it."
    judge_server.OVERRIDE["named entities"] = lambda p, i: (
        {"entities": ["Paris", "France", "1889", "Gustave", "Eiffel", "iron"]} if "Paris is in France" in p
        else {"entities": ["Paris", "France", "1889", "Eiffel"]})
    r = m.context_entities_recall(judge, Sample(Q, ["The Eiffel tower in Paris, France, opened in 1889."], "x", ref))
    assert r.score == pytest.approx(4 / 6) and "Gustave" in r.reason
    r = m.context_precision(judge, Sample(Q, ["a", "b", "c", "d", "useless e"], GOOD))
    assert r.extra["share"] == pytest.approx(0.8) and r.score == pytest.approx(1.0)
    r = m.context_recall(judge, Sample(Q, CTX, GOOD, "Returns take 30 days. Returns to Mars are free."))
    assert r.score == pytest.approx(0.5)
    assert m.context_recall(judge, Sample(Q, CTX, GOOD)).score is None  # no reference: says so, never a 0


def test_answer_correctness_and_relevancy_with_the_shipped_embedder(judge: Judge) -> None:
    embedder = EmbeddingScorer()
    s = Sample(Q, CTX, GOOD, "You can return items within 30 days, but not gift cards.")
    r = m.answer_correctness(judge, s, embedder, weights=(0.5, 0.5))
    assert r.extra["f1"] == pytest.approx(0.75)
    assert r.score == pytest.approx(formulas.answer_correctness(3, 1, 1, r.extra["similarity"], (0.5, 0.5)))
    r = m.answer_relevancy_questions(judge, Sample("How long do I have to return an item?", CTX, GOOD), embedder)
    assert r.score == pytest.approx(1.0, abs=1e-3)
    assert m.answer_relevancy_questions(judge, Sample(Q, CTX, "I don't know."), embedder).score == 0.0
    r = m.answer_relevancy_statements(judge, Sample(Q, CTX, GOOD + " The weather is nice."))
    assert r.score == pytest.approx(3 / 4)


def test_g_eval_and_chunk_utilization(judge: Judge) -> None:
    r = m.g_eval(judge, Sample(Q, CTX, GOOD), criteria="Correct and supported.")
    assert r.score == pytest.approx(0.75) and r.extra["steps"] == ["Check the facts.", "Check completeness."]
    assert m.g_eval(judge, Sample(Q, CTX, BAD), criteria="c", steps=["s"]).score == pytest.approx(0.25)
    r = m.chunk_usage(judge, Sample(Q, CTX, GOOD))
    # c0s0 of 2 sentences in chunk 0, c1s1 does not exist in a 1-sentence chunk 1, c9s9 is no key: ignored
    assert r.extra["attribution"] == [True, False] and r.extra["utilization"] == [0.5, 0.0] and r.score == 0.25


def test_malformed_json_gets_one_repair_turn_then_a_clear_error(judge: Judge) -> None:
    judge_server.FAULTS.append(("garbage", None))
    r = m.faithfulness_claims(judge, Sample(Q, CTX, BAD))
    assert r.score == pytest.approx(2 / 3) and r.usage.calls == 3  # claims, repair of the garbage, verify
    judge_server.OVERRIDE["atomic claims"] = lambda p, i: "no JSON here at all"
    with pytest.raises(JudgeError, match="no usable JSON after a repair turn"):
        m.faithfulness_claims(judge, Sample(Q, CTX, BAD))
    judge_server.OVERRIDE["atomic claims"] = lambda p, i: {"claims": "one string"}
    with pytest.raises(JudgeError, match="must be list"):
        m.faithfulness_claims(judge, Sample(Q, CTX, BAD))


@pytest.mark.parametrize("shape", ["empty", "null", "no_message"])
def test_a_reply_with_no_choice_is_a_clear_error(judge: Judge, shape: str) -> None:
    """A judge that answers 200 with ``"choices": []`` was asked again forever (round 56: 7,000 calls in 30 s for one
    row); ``null`` or a choice with no message ended the run in a traceback. Each is a JudgeError (a row's error)."""
    judge_server.FAULTS.append(("no_choices", shape))
    with pytest.raises(JudgeError, match="no choices|no message"):
        m.faithfulness_claims(judge, Sample(Q, CTX, BAD))
    assert len(judge_server.CALLS) == 1


def test_retries_on_429_with_retry_after_and_on_500(judge: Judge) -> None:
    judge_server.FAULTS.extend([("429", 0.2), ("500", None)])
    assert m.faithfulness_claims(judge, Sample(Q, CTX, GOOD)).score == 1.0
    assert len(judge_server.CALLS) == 4  # 429, 500, then claims and verify
    judge_server.FAULTS.extend([("500", None)] * 3)
    with pytest.raises(JudgeError, match="500 after retries"):
        m.faithfulness_claims(judge, Sample(Q, CTX, GOOD))


def test_timeouts_are_a_clear_error(url: str) -> None:
    judge_server.reset()
    judge = Judge("judge-model", base_url=url, api_key="k", max_retries=0, timeout=0.3)
    judge_server.FAULTS.append(("slow", 2.0))
    with pytest.raises(JudgeError, match="did not answer in time"):
        m.faithfulness_claims(judge, Sample(Q, CTX, GOOD))


def test_the_cache_makes_a_rerun_free(url: str, tmp_path: Path) -> None:
    judge_server.reset()
    judge = Judge("judge-model", base_url=url, api_key="k", cache_path=tmp_path / "c.sqlite")
    first = m.faithfulness_claims(judge, Sample(Q, CTX, BAD))
    calls = len(judge_server.CALLS)
    again = m.faithfulness_claims(Judge("judge-model", base_url=url, api_key="k", cache_path=tmp_path / "c.sqlite"),
                                  Sample(Q, CTX, BAD))
    assert len(judge_server.CALLS) == calls and again.score == first.score
    assert again.usage.cached_calls == 2 and again.usage.prompt_tokens == 0


def test_prompts_are_versioned_and_overridable(url: str, tmp_path: Path) -> None:
    judge_server.reset()
    (tmp_path / "claims.md").write_text("version: 7\n---\nCustom: Break the text into atomic claims.\n\nText: {text}\n"
                                        "\nReply with JSON {{\"claims\": []}} {question}\n")
    judge = Judge("judge-model", base_url=url, api_key="k", prompts_dir=tmp_path)
    assert judge.prompt("claims").version == "7" and judge.prompt("verify_claims").version == "1"
    m.faithfulness_claims(judge, Sample(Q, CTX, GOOD))
    assert judge_server.CALLS[0]["messages"][0]["content"].startswith("Custom:")


@pytest.mark.skipif(not BENCH.exists(), reason="../shared/data/bench is not here")
def test_guardrail_eval_end_to_end_and_resume(url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    judge_server.reset()
    data = tmp_path / "halueval.jsonl"
    with gzip.open(BENCH, "rt", encoding="utf-8") as fh:
        rows = [json.loads(next(fh)) for _ in range(8)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "results.jsonl"
    args = ["eval", str(data), "--metrics", "faithfulness_claims,context_adherence", "--model", "judge-model",
            "--base-url", url, "--api-key", "k", "--out", str(out), "--cache", "", "--workers", "2"]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert "faithfulness_claims" in first and "context_adherence" in first
    assert len(out.read_text().splitlines()) == 8
    # a kill: 3 rows kept, one cut mid-line; the rerun judges only the other 5 rows
    lines = out.read_text().splitlines()
    out.write_text("\n".join(lines[:3]) + "\n" + lines[3][:20])
    judge_server.CALLS.clear()
    assert main(args) == 0
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines() if line.startswith('{"id"') and line.endswith("}")]
    assert sorted(set(ids)) == sorted(str(r["id"]) for r in rows)
    assert len(judge_server.CALLS) == 5 * 3  # per row: claims, verify, one ChainPoll request of n polls
    # Ragas field names, and a CI gate
    ragas = tmp_path / "ragas.jsonl"
    ragas.write_text(json.dumps({"user_input": Q, "retrieved_contexts": CTX, "response": BAD}) + "\n")
    code = main(["eval", str(ragas), "--metrics", "faithfulness_claims", "--model", "judge-model", "--base-url", url,
                 "--api-key", "k", "--out", str(tmp_path / "r2.jsonl"), "--cache", "", "--fail-under",
                 "faithfulness_claims=0.9", "--price", "1000000,2000000"])
    printed = capsys.readouterr().out
    assert code == 1 and "FAILED" in printed
    # cost: USD per million tokens; the scripted judge reports prompt chars // 4 and 20 completion tokens a call
    usage = json.loads((tmp_path / "r2.jsonl").read_text().splitlines()[0])["faithfulness_claims"]["usage"]
    expected = usage["prompt_tokens"] * 1.0 + usage["completion_tokens"] * 2.0
    assert f"total cost: {expected:.4f} USD" in printed
    assert main(["eval", str(ragas), "--metrics", "faithfulness_claims", "--model", "m", "--base-url", url,
                 "--api-key", "k", "--out", str(tmp_path / "r3.jsonl"), "--price", "cheap"]) == 2


def test_shadow_judging_through_the_gateway(url: str, tiny_nli: Path) -> None:
    """Sampled answers are judged in the background: scores reach /metrics, overload drops are counted, and the
    answer itself never waits for the judge (the judge here takes 1 s a call)."""
    import httpx
    from prometheus_client import CollectorRegistry

    from guardrail.checks.evaluator import Evaluator
    from guardrail.guard import Guard
    from guardrail.judge.shadow import ShadowJudge
    from guardrail.policy import Policy
    from guardrail.scorers.nli import NLIScorer
    from guardrail.server import create_gateway
    from guardrail.telemetry import Telemetry

    judge_server.reset()
    telemetry = Telemetry(CollectorRegistry(), route="gateway", model="fake")
    shadow = ShadowJudge(Judge("judge-model", base_url=url, api_key="k"), ["context_adherence"], rate=1.0, workers=1,
                         max_queue=1, on_score=telemetry.judge_score, on_drop=telemetry.judge_drop,
                         metric_kwargs={"context_adherence": {"n": 1}})
    guard = Guard(Evaluator(nli=NLIScorer(tiny_nli)), Policy(action="flag", retrieval_relevance=None),
                  observer=telemetry, tap=shadow.submit)
    judge_server.FAULTS.extend([("slow", 1.0)] * 2)
    with llm_server.serve() as upstream, llm_server.serve(create_gateway(upstream + "/v1", guard, telemetry),
                                                          lifespan="on") as gw:
        for answer in ("Returns take 30 days.", "Refunds are quick.", "Gift cards are final.", "Shipping is free."):
            r = httpx.post(gw + "/v1/chat/completions", timeout=30, json={
                "model": "fake", "messages": [{"role": "user", "content": "How do returns work?"}],
                "contexts": CTX, "answer": answer})
            assert r.status_code == 200
        shadow.join()
        metrics = httpx.get(gw + "/metrics").text
    labels = {"route": "gateway", "model": "fake"}
    judged = telemetry.registry.get_sample_value("guardrail_judge_score_count", {**labels, "judge": "context_adherence"})
    dropped = telemetry.registry.get_sample_value("guardrail_judge_dropped_total", labels)
    assert judged and judged >= 1 and dropped and dropped >= 1 and judged + dropped == 4
    assert 'guardrail_judge_score_count{judge="context_adherence"' in metrics
    shadow.close()
