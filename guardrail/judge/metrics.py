"""LLM-judged RAG metrics. Each returns a :class:`MetricResult`: a 0-1 score (None, with the reason, when the metric
does not apply: never a silent 0 or NaN), a reason, the raw judgments and the tokens spent.

| metric | definition followed | needs |
|---|---|---|
| ``context_adherence`` | ChainPoll (Galileo): n step-by-step judgments "is the answer supported?", share of yes | contexts |
| ``completeness`` | ChainPoll, numeric 0-1 judgments, mean | contexts |
| ``retrieval_relevance_llm`` | ChainPoll: "is the top chunk sufficient to answer?", share of yes | contexts |
| ``faithfulness_claims`` | Ragas faithfulness: atomic claims, each verified against the contexts; supported / total | contexts |
| ``answer_relevancy_statements`` | DeepEval: share of the answer's statements relevant to the question | |
| ``answer_relevancy_questions`` | Ragas: n questions generated from the answer, mean cosine to the question (shipped embedder); noncommittal = 0 | embedder |
| ``g_eval`` | G-Eval: criteria -> evaluation steps -> 1-5 score, probability-weighted with logprobs, on 0..1 | criteria |
| ``context_recall`` | Ragas: share of the reference's statements attributable to the contexts | reference |
| ``context_entities_recall`` | Ragas: share of the reference's entities found in the contexts | reference |
| ``context_precision`` | Ragas: per-chunk "useful for the answer?" verdicts; share, and rank-aware mean precision@k | reference or answer |
| ``answer_correctness`` | Ragas: claim TP/FP/FN F1 with the reference, weighted with semantic similarity | reference, embedder |
| ``chunk_attribution`` / ``chunk_utilization`` | Galileo: keyed context sentences the answer used; per chunk | contexts |
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from guardrail.judge import formulas
from guardrail.judge.client import Judge, Usage, require
from guardrail.text import split_sentences


@dataclass(frozen=True)
class Sample:
    question: str
    contexts: Sequence[str]
    answer: str
    reference: str | None = None


@dataclass
class MetricResult:
    name: str
    score: float | None
    reason: str
    judgments: list[Any] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "score": self.score, "reason": self.reason, "judgments": self.judgments,
                "usage": self.usage.to_dict(), **self.extra}


def _docs(contexts: Sequence[str]) -> str:
    return "\n".join(f"[{i + 1}] {c}" for i, c in enumerate(contexts)) or "(no documents)"


def _numbered(items: Sequence[str]) -> str:
    return "\n".join(f"{i + 1}. {c}" for i, c in enumerate(items))


def _list_of(key: str, item: type = str, n: int | None = None) -> Callable[[dict[str, Any]], None]:
    def check(obj: dict[str, Any]) -> None:
        values = require(obj, key, list)
        if not all(isinstance(v, item) for v in values):
            raise ValueError(f"{key!r} must be a list of {item.__name__}")
        if n is not None and len(values) != n:
            raise ValueError(f"{key!r} has {len(values)} entries, expected one for each of the {n} items")
    return check


def _verdicts(key: str, n: int) -> Callable[[dict[str, Any]], None]:
    def check(obj: dict[str, Any]) -> None:
        values = require(obj, "verdicts", list)
        if len(values) != n:
            raise ValueError(f"'verdicts' has {len(values)} entries, expected {n} (one per item, in order)")
        for v in values:
            if not isinstance(v, dict) or key not in v:
                raise ValueError(f"each verdict must be an object with {key!r}")
    return check


def _truthy(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip().lower() in ("yes", "true", "1", "supported")
    return bool(value)


# --------------------------------------------------------------------------- ChainPoll
def _chainpoll(judge: Judge, name: str, prompt: str, key: str, *, n: int, temperature: float, numeric: bool = False,
               **values: Any) -> MetricResult:
    def check(obj: dict[str, Any]) -> None:
        if numeric:
            v = require(obj, key, float)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{key!r} must be within 0..1, got {v}")
        else:
            require(obj, key, bool)

    reply = judge.ask(prompt, n=n, temperature=temperature, check=check, **values)
    votes = [float(o[key]) for o in reply.objects]
    score = float(np.mean(votes))
    reason = reply.objects[int(np.argmin(votes))].get("reasoning", "") if votes else ""
    summary = f"{score:.2f} over {n} polls" if numeric else f"{int(sum(votes))} of {n} polls say yes"
    return MetricResult(name, score, f"{summary}; {reason}".strip("; "), reply.objects, reply.usage)


def context_adherence(judge: Judge, s: Sample, *, n: int = 5, temperature: float = 0.7) -> MetricResult:
    return _chainpoll(judge, "context_adherence", "chainpoll_adherence", "supported", n=n, temperature=temperature,
                      contexts=_docs(s.contexts), question=s.question, answer=s.answer)


def completeness(judge: Judge, s: Sample, *, n: int = 5, temperature: float = 0.7) -> MetricResult:
    return _chainpoll(judge, "completeness", "chainpoll_completeness", "completeness", n=n, temperature=temperature,
                      numeric=True, contexts=_docs(s.contexts), question=s.question, answer=s.answer)


def retrieval_relevance_llm(judge: Judge, s: Sample, *, n: int = 5, temperature: float = 0.7) -> MetricResult:
    if not s.contexts:
        return MetricResult("retrieval_relevance_llm", None, "no contexts were retrieved")
    return _chainpoll(judge, "retrieval_relevance_llm", "chainpoll_retrieval", "sufficient", n=n,
                      temperature=temperature, context=s.contexts[0], question=s.question)


# --------------------------------------------------------------------------- claims
def claims(judge: Judge, text: str, question: str = "") -> tuple[list[str], Usage]:
    reply = judge.ask("claims", check=_list_of("claims"), text=text, question=question)
    return [c.strip() for c in reply.objects[0]["claims"] if c.strip()], reply.usage


def _verified(judge: Judge, found: list[str], contexts: Sequence[str], prompt: str, key: str, item: str,
              usage: Usage) -> list[dict[str, Any]]:
    """One verdict ``{item: text, key: bool, "reason"}`` per statement, judged against the contexts."""
    reply = judge.ask(prompt, check=_verdicts(key, len(found)), contexts=_docs(contexts), claims=_numbered(found))
    usage.add(reply.usage)
    return [{item: c, key: _truthy(v[key]), "reason": v.get("reason", "")} for c, v in zip(found, reply.objects[0]["verdicts"])]


def faithfulness_claims(judge: Judge, s: Sample) -> MetricResult:
    found, usage = claims(judge, s.answer, s.question)
    if not found:
        return MetricResult("faithfulness_claims", None, "the answer makes no claims to verify", [], usage)
    verdicts = _verified(judge, found, s.contexts, "verify_claims", "supported", "claim", usage)
    score = formulas.share([v["supported"] for v in verdicts])
    bad = [v["claim"] for v in verdicts if not v["supported"]]
    reason = f"{sum(v['supported'] for v in verdicts)} of {len(verdicts)} claims supported"
    if bad:
        reason += "; unsupported: " + "; ".join(bad)
    return MetricResult("faithfulness_claims", score, reason, verdicts, usage)


def answer_relevancy_statements(judge: Judge, s: Sample) -> MetricResult:
    found, usage = claims(judge, s.answer, s.question)
    if not found:
        return MetricResult("answer_relevancy_statements", None, "the answer has no statements", [], usage)
    reply = judge.ask("relevant_statements", check=_verdicts("verdict", len(found)), question=s.question,
                      claims=_numbered(found))
    usage.add(reply.usage)
    verdicts = [{"statement": c, "verdict": str(v["verdict"]).lower(), "reason": v.get("reason", "")}
                for c, v in zip(found, reply.objects[0]["verdicts"])]
    score = formulas.share([v["verdict"] != "no" for v in verdicts])  # DeepEval counts "idk" as relevant
    return MetricResult("answer_relevancy_statements", score,
                        f"{sum(v['verdict'] != 'no' for v in verdicts)} of {len(verdicts)} statements relevant",
                        verdicts, usage)


def answer_relevancy_questions(judge: Judge, s: Sample, embedder: Any, *, n: int = 3,
                               temperature: float = 0.7) -> MetricResult:
    def check(obj: dict[str, Any]) -> None:
        require(obj, "question", str)
        require(obj, "noncommittal", bool)

    reply = judge.ask("generate_questions", n=n, temperature=temperature, check=check, answer=s.answer)
    generated = [o["question"] for o in reply.objects]
    if any(o["noncommittal"] for o in reply.objects):
        return MetricResult("answer_relevancy_questions", 0.0, "the answer is noncommittal", reply.objects, reply.usage)
    sims = np.asarray(embedder.similarity([s.question], generated)).ravel()
    score = float(np.clip(np.mean(sims), 0.0, 1.0))
    return MetricResult("answer_relevancy_questions", score, f"mean cosine {score:.2f} of {n} generated questions",
                        reply.objects, reply.usage)


# --------------------------------------------------------------------------- G-Eval
def g_eval(judge: Judge, s: Sample, *, criteria: str, steps: Sequence[str] | None = None,
           logprobs: bool = False) -> MetricResult:
    usage = Usage()
    if not steps:
        reply = judge.ask("geval_steps", check=_list_of("steps"), criteria=criteria)
        steps = reply.objects[0]["steps"]
        usage.add(reply.usage)

    def check(obj: dict[str, Any]) -> None:
        v = require(obj, "score", float)
        if not 1 <= v <= 5:
            raise ValueError(f"'score' must be within 1..5, got {v}")

    reply = judge.ask("geval_score", check=check, logprobs=logprobs, criteria=criteria, steps=_numbered(list(steps)),
                      question=s.question, contexts=_docs(s.contexts), answer=s.answer)
    usage.add(reply.usage)
    obj = reply.objects[0]
    probs = reply.logprobs[0] if reply.logprobs else {}
    score = formulas.geval_score(float(obj["score"]), probs)
    return MetricResult("g_eval", score, str(obj.get("reason", "")), [obj], usage,
                        {"steps": list(steps), "weighted": bool(probs)})


# --------------------------------------------------------------------------- ground truth
def _need_reference(name: str, s: Sample) -> MetricResult | None:
    if not s.reference:
        return MetricResult(name, None, "this metric needs a reference (ground-truth) answer")
    return None


def context_recall(judge: Judge, s: Sample) -> MetricResult:
    if (missing := _need_reference("context_recall", s)) is not None:
        return missing
    found, usage = claims(judge, s.reference or "", s.question)
    if not found:
        return MetricResult("context_recall", None, "the reference has no statements", [], usage)
    verdicts = _verified(judge, found, s.contexts, "attributed_statements", "attributed", "statement", usage)
    score = formulas.share([v["attributed"] for v in verdicts])
    return MetricResult("context_recall", score,
                        f"{sum(v['attributed'] for v in verdicts)} of {len(verdicts)} reference statements in the contexts",
                        verdicts, usage)


def context_entities_recall(judge: Judge, s: Sample) -> MetricResult:
    if (missing := _need_reference("context_entities_recall", s)) is not None:
        return missing
    ref = judge.ask("entities", check=_list_of("entities"), text=s.reference)
    ctx = judge.ask("entities", check=_list_of("entities"), text="\n".join(s.contexts))
    usage = Usage()
    usage.add(ref.usage)
    usage.add(ctx.usage)
    ref_e, ctx_e = ref.objects[0]["entities"], ctx.objects[0]["entities"]
    score = formulas.entities_recall(ref_e, ctx_e)
    if score is None:
        return MetricResult("context_entities_recall", None, "the reference names no entities", [], usage)
    have = {e.lower() for e in ctx_e}
    missing_e = [e for e in ref_e if e.lower() not in have]
    return MetricResult("context_entities_recall", score,
                        f"{len(ref_e) - len(missing_e)} of {len(ref_e)} reference entities in the contexts"
                        + (f"; missing: {', '.join(missing_e)}" if missing_e else ""),
                        [{"reference": ref_e, "contexts": ctx_e}], usage)


def context_precision(judge: Judge, s: Sample) -> MetricResult:
    if not s.contexts:
        return MetricResult("context_precision", None, "no contexts were retrieved")
    usage = Usage()
    verdicts = []

    def check(obj: dict[str, Any]) -> None:
        require(obj, "useful", bool)

    for ctx in s.contexts:
        reply = judge.ask("chunk_relevance", check=check, question=s.question, answer=s.reference or s.answer,
                          context=ctx)
        usage.add(reply.usage)
        verdicts.append({"useful": bool(reply.objects[0]["useful"]), "reason": reply.objects[0].get("reason", "")})
    share, ranked = formulas.context_precision([v["useful"] for v in verdicts])
    return MetricResult("context_precision", ranked,
                        f"{sum(v['useful'] for v in verdicts)} of {len(verdicts)} chunks useful (share {share:.2f}); "
                        "score is the rank-aware mean precision@k", verdicts, usage, {"share": share})


def answer_correctness(judge: Judge, s: Sample, embedder: Any, *, weights: tuple[float, float] = (0.75, 0.25)) -> MetricResult:
    if (missing := _need_reference("answer_correctness", s)) is not None:
        return missing
    mine, usage = claims(judge, s.answer, s.question)
    theirs, u2 = claims(judge, s.reference or "", s.question)
    usage.add(u2)

    def check(obj: dict[str, Any]) -> None:
        for k in ("TP", "FP", "FN"):
            _list_of(k)(obj)

    reply = judge.ask("correctness", check=check, question=s.question, claims=_numbered(mine),
                      reference_claims=_numbered(theirs))
    usage.add(reply.usage)
    obj = reply.objects[0]
    tp, fp, fn = len(obj["TP"]), len(obj["FP"]), len(obj["FN"])
    similarity = float(np.clip(np.asarray(embedder.similarity([s.answer], [s.reference])).ravel()[0], 0.0, 1.0))
    score = formulas.answer_correctness(tp, fp, fn, similarity, weights)
    return MetricResult("answer_correctness", score,
                        f"claims TP {tp}, FP {fp}, FN {fn} (F1 {formulas.f1_from_counts(tp, fp, fn):.2f}); "
                        f"similarity {similarity:.2f}; weights {weights}", [obj], usage,
                        {"f1": formulas.f1_from_counts(tp, fp, fn), "similarity": similarity})


# --------------------------------------------------------------------------- chunk attribution / utilization
def chunk_usage(judge: Judge, s: Sample) -> MetricResult:
    """Galileo's chunk attribution (was a chunk used at all?) and utilization (share of its sentences used);
    the score is the mean utilization over chunks, the per-chunk figures are in ``extra``."""
    if not s.contexts:
        return MetricResult("chunk_utilization", None, "no contexts were retrieved")
    keyed = []
    keys: dict[str, int] = {}
    per_chunk = []
    for c, text in enumerate(s.contexts):
        spans = split_sentences(text)
        per_chunk.append(len(spans))
        for i, span in enumerate(spans):
            key = f"c{c}s{i}"
            keys[key] = c
            keyed.append(f"{key}: {span.of(text)}")
    reply = judge.ask("chunk_utilization", check=_list_of("used"), keyed_contexts="\n".join(keyed),
                      question=s.question, answer=s.answer)
    used = {k for k in reply.objects[0]["used"] if k in keys}
    counts = [sum(1 for k in used if keys[k] == c) for c in range(len(s.contexts))]
    utilization = [n / total if total else 0.0 for n, total in zip(counts, per_chunk)]
    attribution = [n > 0 for n in counts]
    score = float(np.mean(utilization))
    return MetricResult("chunk_utilization", score,
                        f"{sum(attribution)} of {len(attribution)} chunks used; {len(used)} sentences used",
                        reply.objects, reply.usage, {"attribution": attribution, "utilization": utilization})


METRICS: dict[str, Callable[..., MetricResult]] = {
    "context_adherence": context_adherence,
    "completeness": completeness,
    "retrieval_relevance_llm": retrieval_relevance_llm,
    "faithfulness_claims": faithfulness_claims,
    "answer_relevancy_statements": answer_relevancy_statements,
    "answer_relevancy_questions": answer_relevancy_questions,
    "g_eval": g_eval,
    "context_recall": context_recall,
    "context_entities_recall": context_entities_recall,
    "context_precision": context_precision,
    "answer_correctness": answer_correctness,
    "chunk_utilization": chunk_usage,
}
#: metrics that need the embedder
NEEDS_EMBEDDER = frozenset({"answer_relevancy_questions", "answer_correctness"})
