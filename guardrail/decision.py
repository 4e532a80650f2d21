"""The one decision: scores + policy -> pass or the policy's action, with the reasons.

Every place that turns scores into a verdict calls this module: ``Guard.check``, the stream checker (which may only
release what the final decision would also release) and the CLI gate (``guardrail check``). The rules live here once:

- faithfulness, ``aggregate="any"`` (default): the answer fails when any checked sentence scores below the limit;
  a stream stops before the first such sentence, and releases every sentence before it (each of them passed, and no
  later sentence can make them fail);
- faithfulness, ``aggregate="mean"``: the answer fails when the mean of the checked sentences is below the limit. No
  sentence decides alone, so a held (block / fallback) stream releases nothing until the end, where the whole answer
  is decided: delivered whole, or not at all (``streams_hold_to_end``);
- retrieval relevance: the best chunk's relevance must reach its threshold (no chunk at all fails), for an answer
  that makes a claim: an answer with no checked sentence ("I could not find that in the documents.", "Sure!") takes
  nothing from the passages, so irrelevant passages do not fail it (a stream releases such sentences and stops at
  the first claim);
- response relevance: the answer's relevance must reach its threshold;
- an empty answer passes unless ``empty_answer="fail"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from guardrail.policy import Action, Policy
from guardrail.verdict import Scores, Timings, Verdict, sentence_reason

if TYPE_CHECKING:
    from guardrail.checks.evaluator import Evaluation
    from guardrail.checks.faithfulness import SentenceEvidence

__all__ = ["decide", "faithfulness_limit", "sentence_fails", "mean_fails", "streams_hold_to_end", "gate_failures"]


def faithfulness_limit(policy: Policy, model_threshold: float) -> float | None:
    """The faithfulness threshold in force: the policy's number, the model's own for "auto", None when off."""
    if policy.faithfulness is None:
        return None
    return model_threshold if policy.faithfulness == "auto" else float(policy.faithfulness)


def sentence_fails(policy: Policy, score: float | None, limit: float | None) -> bool:
    """True when this one sentence fails the whole answer, whatever the other sentences score (``aggregate="any"``)."""
    return policy.aggregate == "any" and limit is not None and score is not None and score < limit


def mean_fails(policy: Policy, scores: Sequence[float], limit: float | None) -> bool:
    """True when the answer fails on its mean (``aggregate="mean"``); no checked sentence: nothing fails."""
    return policy.aggregate == "mean" and limit is not None and bool(scores) and sum(scores) / len(scores) < limit


def streams_hold_to_end(policy: Policy) -> bool:
    """A held stream may release a sentence before the end only when a later sentence cannot fail it: not so for
    ``aggregate="mean"``, where the whole answer is decided at the end."""
    return policy.aggregate == "mean"


def _faithfulness_failures(policy: Policy, sentences: Sequence[SentenceEvidence], mean: float | None,
                           limit: float, quote: bool = True) -> list[str]:
    weak = [s for s in sentences if s.score is not None and s.score < limit]
    if policy.aggregate == "any":
        return [sentence_reason(s, quote=quote) for s in weak]
    if mean is not None and mean < limit:
        return [*(sentence_reason(s, quote=quote) for s in weak), f"faithfulness {mean:.2f} is below {limit:.2f}"]
    return []


def gate_failures(policy: Policy, *, limit: float | None, sentences: Sequence[SentenceEvidence] = (),
                  mean: float | None = None, retrieval_top: float | None = None, retrieval_checked: bool = False,
                  response_relevance: float | None = None, empty: bool = False,
                  claims: bool = True, quote: bool = True) -> list[tuple[str, list[str]]]:
    """(check, reasons) for every check the scores fail under ``policy``; [] = the answer passes. ``claims=False``:
    the answer makes no claim (no sentence was checked), so retrieval relevance does not gate it. ``quote=False``:
    the reasons name a failing sentence by its number and place, not its words (:func:`sentence_reason`)."""
    out: list[tuple[str, list[str]]] = []
    if policy.empty_answer == "fail" and empty:
        out.append(("empty_answer", ["the answer is empty (empty_answer='fail')"]))
    if limit is not None and mean is not None:
        reasons = _faithfulness_failures(policy, sentences, mean, limit, quote)
        if reasons:
            out.append(("faithfulness", reasons))
    if policy.retrieval_relevance is not None and retrieval_checked and claims:
        if retrieval_top is None:
            out.append(("retrieval_relevance", ["no passages were retrieved for the question"]))
        elif retrieval_top < policy.retrieval_relevance:
            out.append(("retrieval_relevance", [
                f"no retrieved passage is relevant to the question (best chunk relevance {retrieval_top:.2f} "
                f"< {policy.retrieval_relevance:.2f})"]))
    if policy.response_relevance is not None and response_relevance is not None \
            and response_relevance < policy.response_relevance:
        out.append(("response_relevance", [
            f"the answer does not address the question (relevance {response_relevance:.2f} < "
            f"{policy.response_relevance:.2f})"]))
    return out


def decide(policy: Policy, evaluation: Evaluation, response: str, timings: Timings) -> Verdict:
    """Apply the policy to an evaluation: the verdict of ``Guard.check``, of a stream's end, and of the CLI gate."""
    faith = evaluation.faithfulness
    retrieval = evaluation.retrieval
    limit = faithfulness_limit(policy, faith.threshold) if faith is not None else None
    def failures(quote: bool) -> list[tuple[str, list[str]]]:
        return gate_failures(
            policy,
            limit=limit,
            sentences=faith.sentences if faith is not None else (),
            mean=faith.score if faith is not None else None,
            retrieval_top=retrieval.top if retrieval is not None else None,
            retrieval_checked=retrieval is not None,
            response_relevance=evaluation.response_relevance,
            empty=not response.strip(),
            claims=faith is None or any(s.checked for s in faith.sentences),
            quote=quote,
        )

    scores = Scores(faith.score if faith else None, retrieval.top if retrieval else None, evaluation.response_relevance)
    found = failures(True)
    failed = tuple(check for check, _ in found)
    reasons = tuple(r for _, rs in found for r in rs)
    # what a client reads with the refusal: the failing sentences by number and place, not by their words
    shown = tuple(r for _, rs in failures(False) for r in rs) if failed else ()
    action: Action = policy.action if failed else "pass"
    return Verdict(action, "failed" if failed else "passed", scores, reasons, failed, timings,
                   response=response, evaluation=evaluation, wire_reasons=shown if shown != reasons else None)
