"""Calibrated sentence support: a small logistic model over the NLI probabilities and the cheap
grounding signals, stored with the model (``guardrail.json``) and applied per sentence.

Features of a sentence (all visible in its evidence):

- ``logit_entailment``: logit of the best entailment probability;
- ``logit_contradiction``: logit of the contradiction probability at the best premise (0 for 2-label models);
- ``coverage``: share of the sentence's content words found in its best premise;
- ``context_coverage``: share found anywhere in the contexts;
- ``unsupported``: 1 when a number, date or name of the sentence is nowhere in the contexts;
- ``absent``: share of the sentence's words (all of them, lower-cased) found nowhere in the contexts;
- ``log_chars``: log(1 + characters of the sentence).

The last two are the lexical signals of the trivial baselines (lexical overlap, answer length): with them in the
fit, the calibrated score beats the two-feature overlap + length logistic only where the NLI model adds to them.

Lexical signals must never lift a sentence the model reads as contradicted: "Gift cards can be returned." against
"Gift cards cannot be returned." has every word in the context. With ``contradiction_cap`` set, a sentence whose
contradiction probability reaches the cap and exceeds its entailment scores at most
``entailment * (1 - contradiction)``: with a cap of 0.5 that is at most 0.25, below any threshold the calibration fit
has produced, so a sentence the model reads as contradicted never passes, however many of its words the context has.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from guardrail.errors import ModelLoadError

FEATURES: tuple[str, ...] = (
    "logit_entailment", "logit_contradiction", "coverage", "context_coverage", "unsupported", "absent", "log_chars",
    "log_context_sentences",
)
#: what ``guardrail calibrate`` fits by default: ``absent`` counts raw words (pronouns and inflections included), so it
#: fails faithful paraphrases ("you can return ...") on data phrased unlike its context; ``log_context_sentences`` is
#: for a calibration fitted over several kinds of data at once (the shipped one: ``benchmarks/dev_sets.py``), where it
#: moves each kind's best threshold to the shared one
DEFAULT_FEATURES: tuple[str, ...] = tuple(f for f in FEATURES if f not in ("absent", "log_context_sentences"))


#: a context of up to this many sentences counts as this many for ``log_context_sentences`` (measured on the four dev
#: sets, benchmarks/results/dev_sets_context_sentences_not_shipped.txt: every floor from 6 to 16 keeps each set's
#: decision at the shared threshold within 0.022 of its best; without a floor BEGIN lost 0.018 AUROC). The shipped
#: calibration uses the feature since session 16 (BENCHMARKS.md): the more sentences a claim's support was chosen
#: among, the lower a supported claim's entailment runs, and one threshold then serves short and long contexts
SHORT_CONTEXT_SENTENCES = 8


def _logit(p: float | None) -> float:
    if p is None or math.isnan(p):
        return 0.0
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def sentence_features(
    entailment: float, contradiction: float | None, coverage: float, context_coverage: float, unsupported: bool,
    absent: float = 0.0,
    chars: int = 0,
    context_sentences: int = 0,
) -> dict[str, float]:
    """A sentence's calibration features; ``context_sentences``: how many sentences the request's contexts hold (the
    premises the sentence's best support was chosen among: the more there are, the lower a supported claim's
    entailment runs and the more a hallucinated one finds some support); counted from
    :data:`SHORT_CONTEXT_SENTENCES` up (contexts that short are read alike)."""
    return {
        "logit_entailment": _logit(entailment),
        "logit_contradiction": _logit(contradiction),
        "coverage": coverage,
        "context_coverage": context_coverage,
        "unsupported": 1.0 if unsupported else 0.0,
        "absent": absent,
        "log_chars": math.log1p(chars),
        "log_context_sentences": math.log1p(max(SHORT_CONTEXT_SENTENCES, context_sentences)),
    }


@dataclass(frozen=True, slots=True)
class Calibrator:
    """``P(supported) = sigmoid(bias + sum(weight * feature))``."""

    features: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float
    #: contradiction probability from which a contradicted sentence scores at most its entailment (None: no cap)
    contradiction_cap: float | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Calibrator":
        try:
            features = tuple(data["features"])
            weights = tuple(float(w) for w in data["weights"])
            bias = float(data["bias"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelLoadError(f"invalid calibration in guardrail.json ({exc}); expected features, weights, bias") from exc
        unknown = set(features) - set(FEATURES)
        if unknown or len(features) != len(weights):
            raise ModelLoadError(f"calibration features {features} do not match weights or known features {FEATURES}")
        cap = data.get("contradiction_cap")
        if cap is not None and not (isinstance(cap, (int, float)) and 0 < cap <= 1):
            raise ModelLoadError(f"invalid contradiction_cap {cap!r} in guardrail.json; expected a probability in (0, 1]")
        return cls(features, weights, bias, None if cap is None else float(cap))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"features": list(self.features), "weights": list(self.weights), "bias": self.bias}
        if self.contradiction_cap is not None:
            out["contradiction_cap"] = self.contradiction_cap
        return out

    def __call__(self, features: Mapping[str, float], entailment: float | None = None,
                 contradiction: float | None = None) -> float:
        z = self.bias + sum(w * features[f] for f, w in zip(self.features, self.weights))
        p = 1.0 / (1.0 + math.exp(-z)) if z > -500 else 0.0
        return self.cap(p, entailment, contradiction)

    def cap(self, score: float, entailment: float | None, contradiction: float | None) -> float:
        """``score``, or at most ``entailment * (1 - contradiction)`` when the model reads the sentence as contradicted."""
        if (self.contradiction_cap is None or entailment is None or contradiction is None
                or math.isnan(contradiction) or contradiction < self.contradiction_cap or contradiction <= entailment):
            return score
        return min(score, entailment * (1.0 - contradiction))


def fit_logistic(x: Sequence[Sequence[float]], y: Sequence[int], *, l2: float = 1.0, iters: int = 50,
                 sample_weight: Sequence[float] | None = None) -> tuple[list[float], float]:
    """L2-regularised logistic regression by Newton's method (numpy only). Returns (weights, bias).
    ``sample_weight``: per-row weights (e.g. so that each data set counts the same)."""
    import numpy as np

    X = np.asarray(x, dtype=np.float64)
    t = np.asarray(y, dtype=np.float64)
    sw = np.ones(len(X)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    Xb = np.hstack([X, np.ones((len(X), 1))])
    w = np.zeros(Xb.shape[1])
    reg = np.eye(Xb.shape[1]) * l2
    reg[-1, -1] = 0.0  # no penalty on the bias
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-(Xb @ w)))
        grad = Xb.T @ (sw * (p - t)) + reg @ w
        hess = (Xb * (sw * p * (1 - p))[:, None]).T @ Xb + reg
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return [float(v) for v in w[:-1]], float(w[-1])


_TOKEN = re.compile(r"\w+")


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens as the lexical-overlap baseline counts them."""
    return _TOKEN.findall(text.lower())


def absent_share(sentence: str, context_tokens: set[str] | frozenset[str]) -> float:
    toks = tokens(sentence)
    return sum(t not in context_tokens for t in toks) / len(toks) if toks else 0.0
