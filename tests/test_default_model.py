"""The shipped default NLI model: evidence on hand-made cases, offline and without torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from guardrail import Evaluator, FaithfulnessCheck, FaithfulnessConfig, NLIScorer, default_nli_model

ROOT = Path(__file__).resolve().parent.parent
CONTEXTS = [
    "Our store opens at 9 am on weekdays. On weekends it opens at 10 am.",
    "Items can be returned within 30 days of delivery. Refunds are issued to the original payment method. "
    "Gift cards cannot be refunded.",
    "Shipping is free for orders over $50. Express delivery costs $15.",
]


@pytest.fixture(scope="module")
def nli() -> NLIScorer:
    return NLIScorer(default_nli_model())


@pytest.mark.parametrize("mode", ["exhaustive", "candidates"])
@pytest.mark.parametrize(
    ("claim", "chunk", "sentence"),
    [
        ("Refunds are issued to the original payment method.", 1, "Refunds are issued to the original payment method."),
        ("Express delivery costs $15.", 2, "Express delivery costs $15."),
        ("On weekends the store opens at 10 am.", 0, "On weekends it opens at 10 am."),
    ],
)
def test_evidence_points_at_the_supporting_sentence(nli: NLIScorer, mode: str, claim: str, chunk: int, sentence: str) -> None:
    r = FaithfulnessCheck(nli, FaithfulnessConfig(mode=mode)).run("", CONTEXTS, claim)
    (s,) = r.sentences
    if mode == "candidates" or "it opens" not in sentence:
        # exhaustive mode reads single sentences: "On weekends it opens at 10 am." never says what "it" is,
        # which is why the default mode reads candidate sentences with their neighbours
        assert s.supported, s
        assert s.sentence is not None and (s.sentence.chunk, s.sentence.text) == (chunk, sentence)
        assert CONTEXTS[chunk][s.sentence.start : s.sentence.end] == sentence
    assert s.sentence is not None and s.sentence.chunk == chunk


def test_hallucinated_sentence_is_named_with_reasons(nli: NLIScorer) -> None:
    response = "Items can be returned within 30 days of delivery. The refund is paid in cash within 60 days."
    r = FaithfulnessCheck(nli).run("How do returns work?", CONTEXTS, response)
    first, second = r.sentences
    assert first.supported and not second.supported
    assert second.score < first.score
    assert "60" in second.unsupported_terms
    assert r.unsupported == (second,)


def test_an_unsupported_sentence_points_at_what_contradicts_it_or_is_closest(nli: NLIScorer) -> None:
    """Nothing entails a hallucinated sentence, so its best-entailment premise can be about anything (the shipping
    chunk, for a claim about returns): the evidence shows the passage that contradicts it, or the closest one."""
    from guardrail import Guard, Policy

    response = "Items can be returned within 30 days of delivery. You can return items within 60 days. " \
               "Refunds are paid in cash at any of our stores."
    r = FaithfulnessCheck(nli).run("How do returns work?", CONTEXTS, response)
    ok, wrong, unrelated = r.sentences
    assert ok.supported and ok.sentence_role == "supports"
    assert not wrong.supported and wrong.sentence_role == "contradicts"
    assert wrong.sentence is not None and wrong.sentence.text == "Items can be returned within 30 days of delivery."
    assert not unrelated.supported and unrelated.sentence_role in ("closest", "contradicts")
    assert unrelated.sentence is not None and unrelated.sentence.chunk == 1  # the returns chunk, not shipping
    verdict = Guard(Evaluator(nli=nli, checks=["faithfulness"]), Policy(action="block", retrieval_relevance=None,
                                                                       response_relevance=None)).check(
        "How do returns work?", CONTEXTS, response)
    assert verdict.action == "block"
    assert any('"You can return items within 60 days." is contradicted by' in x and "contradicting: chunk 1" in x
               for x in verdict.reasons), verdict.reasons
    # a one-word answer no sentence contains: the question picks the sentence to show
    r = FaithfulnessCheck(nli).run("How much does express delivery cost?", CONTEXTS, "$25")
    (s,) = r.sentences
    assert not s.supported and s.sentence is not None and s.sentence.text == "Express delivery costs $15."


def test_faithful_answers_score_above_hallucinated_ones(nli: NLIScorer) -> None:
    check = FaithfulnessCheck(nli)
    pairs = [
        ("Shipping is free for orders over $50.", "Shipping is free for all orders."),
        ("The store opens at 9 am on weekdays.", "The store opens at 7 am on weekdays."),
        ("Refunds are issued to the original payment method.", "Refunds are issued in cash."),
    ]
    for good, bad in pairs:
        assert check.run("", CONTEXTS, good).score > check.run("", CONTEXTS, bad).score, (good, bad)


def test_negation_is_caught(nli: NLIScorer) -> None:
    check = FaithfulnessCheck(nli)
    good, bad = "Gift cards cannot be refunded.", "Gift cards can be refunded within 30 days."
    assert check.run("", CONTEXTS, good).score > check.run("", CONTEXTS, bad).score


def test_short_answers_are_judged_with_the_question(nli: NLIScorer) -> None:
    q = "Which city are Acme's headquarters in?"
    ctx = ["Acme Corp was founded in 1990 by Jane Doe. Its headquarters are in Denver, Colorado."]
    check = FaithfulnessCheck(nli)
    right, wrong = check.run(q, ctx, "Denver"), check.run(q, ctx, "Chicago")
    # a short span is read alone by default (span_claims=False: measured better on HaluEval than the rebuilt
    # statement); yes/no answers are rebuilt (tests/test_yes_no.py)
    assert right.sentences[0].hypothesis == "Denver"
    assert right.score > wrong.score and right.sentences[0].supported and not wrong.sentences[0].supported


def test_evaluator_defaults(nli: NLIScorer) -> None:
    result = Evaluator(nli=nli).evaluate(
        "How long do I have to return an item?", CONTEXTS, "You can return items within 30 days of delivery."
    )
    assert result.faithfulness.score > 0.5
    assert result.retrieval.chunks[1].score == result.retrieval.top
    json.dumps(result.to_dict())  # serialisable


def test_main_job_runs_offline_without_torch(tmp_path: Path) -> None:
    """`guardrail check examples/rag.jsonl` with torch and transformers made unimportable and the hub offline."""
    code = (
        "import sys; sys.modules['torch'] = None; sys.modules['transformers'] = None\n"
        "from guardrail.cli import main\n"
        "sys.exit(main(['check', 'examples/rag.jsonl', '--json']))\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GUARDRAIL_NLI_MODEL": ""}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    rows = {r["id"]: r for r in map(json.loads, proc.stdout.splitlines())}
    # every row is decided by the default policy: the wrong refund fails it, so the run exits 1
    assert proc.returncode == 1 and rows["refund-wrong"]["outcome"] == "failed", proc.stderr
    assert rows["refund-ok"]["outcome"] == "passed"
    assert rows["refund-ok"]["faithfulness"] > rows["refund-wrong"]["faithfulness"]
    assert rows["short-answer"]["faithfulness"] > rows["short-wrong"]["faithfulness"]
    assert rows["off-topic-retrieval"]["retrieval_relevance"] < rows["refund-ok"]["retrieval_relevance"]


def test_guarded_function_blocks_hallucination_and_passes_faithful_answer(nli: NLIScorer) -> None:
    from guardrail import Guard, GuardrailBlocked, Policy, guarded

    guard = Guard(Evaluator(nli=nli), Policy(action="block"))

    @guarded(guard, question="question", contexts="docs")
    def answer(question: str, docs: list[str], text: str) -> str:
        return text

    ok = answer("How long do I have to return an item?", CONTEXTS, "Items can be returned within 30 days of delivery.")
    assert ok.verdict.action == "pass"
    with pytest.raises(GuardrailBlocked) as info:
        answer("How long do I have to return an item?", CONTEXTS, "Items can be returned within 90 days, no receipt needed.")
    assert info.value.verdict.failed_checks == ("faithfulness",)


def test_premises_stop_at_the_first_that_entails(nli: NLIScorer) -> None:
    # (v3 misses "Shipping to Mars is free.": entailment 0.58 against "Shipping is free for orders over $50", see the
    # model card's known failures)
    answer = "Express delivery costs $15. Shipping to Mars takes three weeks."
    q = "How much is shipping?"
    full = FaithfulnessCheck(NLIScorer(default_nli_model(), cache_size=0), FaithfulnessConfig(stop_at=None))
    a = full.run(q, CONTEXTS, answer)
    stop = a.sentences[0].entailment - 0.01  # the supported sentence's best entailment, whatever the model version
    assert stop > 0.5
    early = FaithfulnessCheck(NLIScorer(default_nli_model(), cache_size=0), FaithfulnessConfig(stop_at=stop))
    b = early.run(q, CONTEXTS, answer)
    entailed, made_up = b.sentences
    # it stops at the premise that reaches stop_at (its best window, or the single sentence read after it)
    assert entailed.entailment is not None and entailed.entailment >= stop
    assert entailed.premises_checked <= 2 < a.sentences[0].premises_checked
    # an unsupported sentence reads all its premises: no premise entails it, so none can stop the search
    assert made_up.premises_checked == a.sentences[1].premises_checked > 1
    assert b.pairs < a.pairs and b.model_tokens < a.model_tokens
    assert [s.supported for s in a.sentences] == [s.supported for s in b.sentences] == [True, False]
    assert entailed.entailment == a.sentences[0].entailment  # the top-ranked premise was the best one anyway


def test_windows_and_single_sentences_can_be_read_together(nli: NLIScorer) -> None:
    """``sentences=N`` adds a claim's best N single sentences to its windows: a window resolves "it" ("On weekends it
    opens at 10 am." says what opens only with its neighbour), a sentence alone is read more sharply."""
    claim = "On weekends the store opens at 10 am."
    contexts = ["Our store opens at 9 am on weekdays. On weekends it opens at 10 am. Parking is free after 6 pm.",
                "Items can be returned within 30 days of delivery. Refunds are issued to the original payment method."]
    plain = FaithfulnessCheck(nli, FaithfulnessConfig(top_k=2, sentences=0, stop_at=None)).run("", contexts, claim).sentences[0]
    both = FaithfulnessCheck(nli, FaithfulnessConfig(top_k=2, sentences=2, stop_at=None)).run("", contexts, claim).sentences[0]
    assert both.premises_checked == plain.premises_checked + 2
    assert both.supported and both.entailment >= plain.entailment  # the max over more premises
    assert both.sentence is not None and both.sentence.text == "On weekends it opens at 10 am."
    with pytest.raises(Exception, match="sentences >= 0"):
        FaithfulnessConfig(sentences=-1)


def _reference_request() -> tuple[list[str], str]:
    """CONTEXTS and ANSWER of benchmarks/load.py, read without importing it (it imports the other benchmarks)."""
    import ast

    tree = ast.parse((ROOT / "benchmarks" / "load.py").read_text(encoding="utf-8"))
    found = {t.id: ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
             for t in node.targets if isinstance(t, ast.Name) and t.id in ("CONTEXTS", "ANSWER")}
    return found["CONTEXTS"], found["ANSWER"]


def test_the_reference_answer_passes_whole(nli: NLIScorer) -> None:
    """The benchmarks' reference RAG request (benchmarks/load.py: five chunks, a four-sentence answer, every sentence
    faithful) passes: a model that blocks one of them cuts every stream of the load and soak benchmarks (v3.2
    contradicted "Opened electronics carry a 15% restocking fee." at 0.62 against "... are subject to a 15% restocking
    fee" and was taken back. The contradiction comes from the window: "... subject to a 15% restocking fee. Gift cards
    and final-sale items cannot be returned." reads as contradicted (0.62; 0.57 with the float weights), the sentence
    alone entails it (0.88): v3 passed it only with the int8 kernels of AMX CPUs and blocked it on AVX2 ones. The
    shipped model reads the claim's best two single sentences besides the windows (``sentences`` in guardrail.json).)"""
    from guardrail import Guard, Policy

    contexts, answer = _reference_request()
    guard = Guard(Evaluator(nli=nli), Policy(action="block", retrieval_relevance=None))
    for chunks in (contexts, [f"{c} (Policy reference 7-{k}.)" for k, c in enumerate(contexts)]):
        verdict = guard.check("What is the return policy?", chunks, answer)
        assert verdict.action == "pass", verdict.reasons
