"""Faithfulness: is each response sentence entailed by the retrieved context?

For each response sentence the score is the highest entailment probability over its premises
(context spans); the response score is the mean over the checked sentences (Dynamo AI's
"logical consistency"). Every sentence keeps its evidence: the best premise (chunk and span), the
context sentence inside it, entailment and contradiction probabilities, and cheap grounding
signals (coverage, unsupported numbers/names).

Answer fragments that are no claim on their own ("Yes, they can.", "No.") are read with the question:
the hypothesis is "Q: {question} A: {answer}", the format of the yes/no and reading-comprehension pairs the
default model is trained on. Other sentences, short ones ("Delhi") included, are judged alone by default: with
the v2 model that separates right from wrong short answers better (NLI-only AUROC on HaluEval ``length_matched``
0.774 alone vs 0.691 as "Q: ... A: ..."; ``benchmarks/calibration_cv.py --question-context``, see the model card).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from guardrail.checks.calibration import Calibrator, absent_share, sentence_features, tokens
from guardrail.checks.claims import AnswerClaim, answer_claim, polarity, split_claims
from guardrail.checks.grounding import context_terms, coverage, unsupported_terms
from guardrail.checks.premises import (
    PREMISE_MODES,
    ContextIndex,
    Premise,
    PremiseMode,
    rank_units,
)
from guardrail.errors import ConfigurationError, InputError, UncheckableError
from guardrail.scorers.cache import LRUCache
from guardrail.scorers.nli import NLIScorer
from guardrail.text import (
    Span,
    content_stems,
    is_answer_fragment,
    is_claim,
    lone_surrogate,
    qa_hypothesis,
    split_sentences,
    token_windows,
    uncheckable_reason,
    words,
)

QuestionContext = Literal["fragments", "auto", "always", "never"]
QUESTION_CONTEXTS: tuple[QuestionContext, ...] = ("fragments", "auto", "always", "never")


@dataclass(frozen=True, slots=True)
class FaithfulnessConfig:
    """How faithfulness is computed. Defaults are the measured ones (see README, Quality)."""

    mode: PremiseMode = "candidates"
    #: premises per response sentence in ``candidates`` mode
    top_k: int = 4
    #: neighbouring sentences added on each side of a candidate sentence (while it fits)
    window: int = 1
    #: besides the ``top_k`` windows, read the best this-many single context sentences too (ranked the same way;
    #: read first, interleaved with the windows). A window keeps what a pronoun refers to, a single sentence is read
    #: more sharply: see ``benchmarks/premise_units.py``. 0 (the default the shipped calibration was fitted with):
    #: windows only
    sentences: int = 0
    #: after the windows, read one more premise made of the claim's best this-many single context sentences (ranked
    #: the same way, in document order, joined up to the model's length): a claim whose support is spread over two
    #: or three sentences of a chunk is entailed by no single window. 0: off
    joined: int = 0
    #: short answers are read as the statement they make with their question ("Can X be returned?" + "No." ->
    #: "X cannot be returned."; "What is the capital?" + "Delhi" -> "The capital is Delhi."), see
    #: guardrail.checks.claims; where the question's shape allows no statement, ``question_context`` decides
    answer_claims: bool = True
    #: with ``answer_claims``: also rebuild short span answers to wh-questions ("Delhi" -> "The capital is Delhi.");
    #: False (default) reads only yes/no answers as statements and spans alone: rebuilding spans measured worse on
    #: HaluEval (NLI only 0.674 vs 0.797 with v3, benchmarks/dev_sets.py), where a wrong entity in a rebuilt
    #: sentence still reads close to the passage
    span_claims: bool = False
    #: a long sentence that joins clauses ("X was born in 1950, and moved to Paris in 1970"; "...; ...") is checked as
    #: its separate claims, so that one unsupported part fails the sentence and the evidence names that part
    #: (guardrail.checks.claims.split_claims)
    split_claims: bool = False
    #: a chunk that fits the model is one premise (True), or each sentence with ``window`` neighbours is (False):
    #: the model reads a claim against a whole chunk worse than against its sentence and neighbours (a faithful
    #: "Opened electronics carry a 15% restocking fee.": 0.25 against its 5-sentence chunk, 0.91 against the sentence)
    whole_chunks: bool = False
    #: premises are read best-ranked first, and a sentence stops at the first one that entails it at least this much
    #: (the max over the rest could only confirm it); None reads all ``top_k`` (or every unit in ``exhaustive``)
    stop_at: float | None = 0.9
    #: which sentences are read as "Q: {question} A: {sentence}": "fragments" only those that are no claim on their
    #: own ("Yes, they can.", "No."); "auto" also a single short answer ("Delhi"); "always"; "never". None: what the
    #: model was calibrated with (``question_context`` in its guardrail.json; "auto" for models that do not say)
    question_context: QuestionContext | None = None
    #: "auto": a single-sentence response of at most this many words is read with its question
    short_answer_words: int = 6
    #: a sentence is "supported" when its score reaches this; None = the model's stored threshold, else 0.5
    threshold: float | None = None
    #: total characters of all contexts; more is refused with a clear error, never truncated
    max_context_chars: int = 1_000_000
    max_response_chars: int = 100_000

    def __post_init__(self) -> None:
        if self.mode not in PREMISE_MODES:
            raise ConfigurationError(f"mode must be one of {', '.join(PREMISE_MODES)}, got {self.mode!r}")
        if self.question_context is not None and self.question_context not in QUESTION_CONTEXTS:
            raise ConfigurationError(
                f"question_context must be one of {', '.join(QUESTION_CONTEXTS)}, got {self.question_context!r}"
            )
        if self.stop_at is not None and not 0.0 < self.stop_at <= 1.0:
            raise ConfigurationError(f"stop_at must be within (0, 1] or None, got {self.stop_at}")
        if self.top_k < 1 or self.window < 0 or self.sentences < 0 or self.joined < 0:
            raise ConfigurationError(f"need top_k >= 1, window >= 0 and sentences >= 0, got {self.top_k}, {self.window}, "
                                     f"{self.sentences}")
        if self.threshold is not None and not 0.0 <= self.threshold <= 1.0:
            raise ConfigurationError(f"threshold must be within 0..1, got {self.threshold}")


@dataclass(frozen=True, slots=True)
class ContextRef:
    """A span of context chunk ``chunk``; ``text`` is that span's text."""

    chunk: int
    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class SentenceEvidence:
    """Why one response sentence is (not) supported."""

    index: int
    text: str
    #: character span in the response
    start: int
    end: int
    #: the hypothesis sent to the NLI model (the sentence, or question + short answer)
    hypothesis: str
    #: support in 0..1: the calibrated probability when the model ships a calibration, else the
    #: entailment; None when the sentence was not checked (no claim, e.g. "Sure!")
    score: float | None
    #: max entailment over premises
    entailment: float | None
    #: contradiction probability at the best premise (None for 2-label models or unchecked)
    contradiction: float | None
    #: the strongest contradiction over all premises checked
    max_contradiction: float | None
    #: the premise that gave the best entailment (what the score was computed from)
    premise: ContextRef | None
    #: the context sentence a user should look at, closest to the claim inside the premise ``sentence_role`` names
    sentence: ContextRef | None
    #: share of the sentence's content words present in the best premise
    coverage: float | None
    #: share of the sentence's content words present anywhere in the contexts
    context_coverage: float | None
    #: numbers, dates and names of the sentence found nowhere in the contexts
    unsupported_terms: tuple[str, ...]
    premises_checked: int
    supported: bool | None
    #: the sentence repeats a whole context sentence word for word: supported whatever the model reads (score 1.0)
    verbatim: bool = False
    #: where ``sentence`` comes from: "supports" (the best-entailment premise of a supported sentence),
    #: "contradicts" (an unsupported sentence's first premise in rank order with contradiction >= 0.5 and above its
    #: entailment) or "closest" (otherwise, the premise sharing most words with it: when nothing entails, the
    #: best-entailment premise is often about something else)
    sentence_role: str | None = None
    #: the model's contradiction probability at the premise ``sentence`` comes from
    sentence_contradiction: float | None = None

    @property
    def checked(self) -> bool:
        return self.score is not None


@dataclass(frozen=True, slots=True)
class FaithfulnessResult:
    #: mean sentence score; None when nothing in the response could be checked (e.g. empty)
    score: float | None
    #: mean entailment over the checked sentences (equals ``score`` without calibration)
    nli_score: float | None
    calibrated: bool
    sentences: tuple[SentenceEvidence, ...]
    mode: PremiseMode
    threshold: float
    #: NLI pairs scored and model tokens processed (cost)
    pairs: int
    model_tokens: int
    context_sentences: int

    @property
    def unsupported(self) -> tuple[SentenceEvidence, ...]:
        return tuple(s for s in self.sentences if s.supported is False)


@dataclass(frozen=True, slots=True)
class _Item:
    span: Span
    text: str
    hypothesis: str
    check: bool
    fragment: bool = False
    #: the hypothesis is the statement the answer makes with its question (guardrail.checks.claims)
    claim: bool = False


class FaithfulnessCheck:
    """Scores a response against its contexts with an NLI model.

    >>> check = FaithfulnessCheck(NLIScorer("path/to/nli"))        # doctest: +SKIP
    >>> r = check.run("Where is it?", ["The tower is in Paris."], "It is in Rome.")  # doctest: +SKIP
    >>> r.unsupported[0].text                                        # doctest: +SKIP
    'It is in Rome.'
    """

    def __init__(
        self,
        nli: NLIScorer,
        config: FaithfulnessConfig | None = None,
        *,
        calibrator: Calibrator | None | Literal["auto"] = "auto",
    ) -> None:
        self.nli = nli
        self.config = config or FaithfulnessConfig()
        self._prepared: LRUCache[tuple[ContextIndex, list, frozenset[str], frozenset[str], list | None]] = LRUCache(64)
        self._calibrator = calibrator

    @property
    def question_context(self) -> str:
        """The question-context mode in use: the config's, else the one the model was calibrated with."""
        if self.config.question_context is not None:
            return self.config.question_context
        return str(self.nli.metadata.get("question_context", "auto"))

    @property
    def calibrator(self) -> Calibrator | None:
        """The model's stored calibration (``guardrail.json``) unless one was passed or disabled (None)."""
        if self._calibrator == "auto":
            data = self.nli.metadata.get("calibration")
            self._calibrator = Calibrator.from_dict(data) if data else None
        return self._calibrator

    @property
    def threshold(self) -> float:
        if self.config.threshold is not None:
            return self.config.threshold
        return float(self.nli.metadata.get("threshold", 0.5))

    def _items(self, question: str, response: str, hyp_budget: int) -> list[_Item]:
        cfg = self.config
        tok = self.nli.tokenizer
        spans = split_sentences(response)
        pieces: list[Span] = []
        for span in spans:
            text = span.of(response)
            if tok.count(text) <= hyp_budget:
                pieces.append(span)
                continue
            # a sentence longer than half the model is checked piece by piece, never truncated
            for w in token_windows(text, tok.offsets, hyp_budget, hyp_budget):
                pieces.append(Span(span.start + w.start, span.start + w.end))
        q = question.strip()
        items = []
        for span in pieces:
            text = span.of(response)
            short = len(pieces) == 1 and len(words(text)) <= cfg.short_answer_words
            # "Yes, they can." is no claim alone: it is checked as the answer to the question, wherever it stands
            mode = self.question_context
            fragment = bool(q) and mode != "never" and is_answer_fragment(text)
            if q and cfg.answer_claims and mode != "never" and (fragment or short or polarity(text)[0] is not None):
                made = answer_claim(q, text) if (fragment or short) else None
                if made is not None and made.kind == "wh-span" and not cfg.span_claims:
                    made = None
                if made is None and polarity(text)[0] is not None and is_claim(polarity(text)[1]):
                    # "No, gift cards cannot be returned.": the statement after the yes/no word is the claim
                    rest = polarity(text)[1]
                    made = AnswerClaim(rest[0].upper() + rest[1:], "stated")
                if made is not None and tok.count(made.statement) <= hyp_budget:
                    items.append(_Item(span, text, made.statement, True, fragment, claim=True))
                    continue
            # measured (model card): short claims ("Delhi") are judged better alone than as "Q: ... A: Delhi"
            use_q = bool(q) and (mode == "always" or (mode == "auto" and short) or fragment)
            hyp = qa_hypothesis(q, text) if use_q else text
            if use_q and tok.count(hyp) > hyp_budget:
                hyp = text
            check = len(pieces) == 1 or is_claim(text) or fragment
            parts = split_claims(text) if cfg.split_claims and check and not use_q else [text]
            if len(parts) > 1 and all(tok.count(p) <= hyp_budget for p in parts):
                items.extend(_Item(span, text, part, True, False, claim=True) for part in parts)
                continue
            items.append(_Item(span, text, hyp, check, fragment))
        return items

    def run(self, question: str, contexts: Sequence[str], response: str) -> FaithfulnessResult:
        cfg = self.config
        _validate(question, contexts, response, cfg)
        tok = self.nli.tokenizer
        max_len = self.nli.max_length
        special = tok.special_tokens(pair=True)
        hyp_budget = max(8, (max_len - special) // 2)
        items = self._items(question, response, hyp_budget)
        checked = [it for it in items if it.check]
        hyp_tokens = tok.count_many([it.hypothesis for it in checked]) if checked else [0]
        # a few tokens of slack: joined sentences can tokenize slightly longer than their parts
        budget = max(8, max_len - special - max(hyp_tokens) - 4)
        # the contexts' sentence index, premise units and vocabulary, built once per contexts (a stream checks every
        # sentence against the same ones)
        key = (tuple(contexts), budget)
        prepared = self._prepared.get(key)
        if prepared is None:
            index = ContextIndex.build(contexts, tok.count_many, tok.offsets, budget)
            units = _fit_units(index.units(cfg.mode, budget, cfg.window, cfg.whole_chunks), tok.count_many, budget, index)
            # whole context sentences as compared for word-for-word copies (see SentenceEvidence.verbatim)
            copies = frozenset(_verbatim_key(sp.of(c)) for c in contexts for sp in split_sentences(c))
            singles = None
            if (cfg.sentences or cfg.joined) and cfg.mode == "candidates" and (cfg.window or cfg.whole_chunks or cfg.joined):
                singles = _fit_units(index.units(cfg.mode, budget, 0), tok.count_many, budget, index)
            prepared = (index, units, context_terms(contexts), copies, singles)
            self._prepared.put(key, prepared)
        index, units, vocab, copies, singles = prepared
        calibrator = self.calibrator
        threshold = self.threshold
        ctx_tokens: set[str] | None = None

        question_words = content_stems(question) if question else []
        pair_ids: dict[tuple[str, str], int] = {}
        per_item: list[list[tuple[int, Premise]]] = []
        for it in items:
            if not it.check:
                per_item.append([])
                continue
            hyp_words = content_stems(it.hypothesis)
            if cfg.mode == "exhaustive":
                chosen = [u[0] for u in units]
            else:
                chosen = rank_units(index, units, hyp_words, cfg.top_k, question_words)
                if singles is not None and cfg.sentences:
                    chosen = _interleave(rank_units(index, singles, hyp_words, cfg.sentences, question_words), chosen)
                if singles is not None and cfg.joined >= 2:
                    joined = _joined_premise(index, rank_units(index, singles, hyp_words, cfg.joined, question_words),
                                             chosen, budget)
                    if joined is not None:
                        chosen = [*chosen, joined]
            refs = []
            for premise in chosen:
                key = (premise.text, it.hypothesis)
                refs.append((pair_ids.setdefault(key, len(pair_ids)), premise))
            per_item.append(refs)
        keys = list(pair_ids)
        ent_of: dict[int, float] = {}
        con_of: dict[int, float] = {}
        tokens_run = 0
        # round r reads the r-th ranked premise of every sentence not yet entailed; one model call per round
        depth = max((len(refs) for refs in per_item), default=0)
        rounds = [depth] if cfg.stop_at is None else list(range(1, depth + 1))
        done = 0
        for upto in rounds:
            want = sorted({pid for refs in per_item for pid, _ in refs[done:upto] if pid not in ent_of
                           and not _settled(refs[:done], ent_of, cfg.stop_at)})
            done = upto
            if not want:
                continue
            pred = self.nli.predict([keys[i][0] for i in want], [keys[i][1] for i in want])
            tokens_run += pred.tokens
            for j, pid in enumerate(want):
                ent_of[pid] = float(pred.entailment[j])
                con_of[pid] = float(pred.contradiction[j])
        # what each sentence read: its premises up to (and including) the one that settled it
        per_item = [[(pid, prem) for pid, prem in refs if pid in ent_of][: _read_upto(refs, ent_of, cfg.stop_at)]
                    for refs in per_item]

        evidence: list[SentenceEvidence] = []
        scores: list[float] = []
        nli_scores: list[float] = []
        # the parts of one split sentence share its number ("sentence 3" in reasons counts sentences, not parts)
        ordinals: list[int] = []
        for k, it in enumerate(items):
            same = k > 0 and it.span == items[k - 1].span
            ordinals.append(ordinals[-1] if same else (ordinals[-1] + 1 if ordinals else 0))
        for i, (it, refs) in zip(ordinals, zip(items, per_item)):
            # what the grounding signals read: the sentence, or for a short answer the statement it makes
            basis = it.hypothesis if it.claim else it.text
            terms = unsupported_terms(basis, vocab)
            if not it.check:
                evidence.append(
                    SentenceEvidence(i, it.text, it.span.start, it.span.end, it.hypothesis,
                                     None, None, None, None, None, None, None, None, terms, 0, None)
                )
                continue
            if not refs:  # no context at all: nothing can support the sentence
                evidence.append(
                    SentenceEvidence(i, it.text, it.span.start, it.span.end, it.hypothesis,
                                     0.0, 0.0, None, None, None, None, 0.0, 0.0, terms, 0, False)
                )
                scores.append(0.0)
                nli_scores.append(0.0)
                continue
            ent = np.array([ent_of[pid] for pid, _ in refs])
            con = np.array([con_of[pid] for pid, _ in refs])
            best = int(ent.argmax())
            premise = refs[best][1]
            hyp_words = content_stems(basis)
            entailment = float(ent[best])
            contradiction = None if np.isnan(con[best]) else float(con[best])
            cov = coverage(hyp_words, frozenset(content_stems(premise.text)))
            ctx_cov = coverage(hyp_words, index.vocabulary)
            score = entailment
            if calibrator is not None:
                if ctx_tokens is None:
                    ctx_tokens = set(tokens(" ".join(contexts))) if "absent" in calibrator.features else set()
                score = calibrator(sentence_features(entailment, contradiction, cov, ctx_cov, bool(terms),
                                                     absent_share(basis, ctx_tokens), len(basis)),
                                   entailment, contradiction)
            verbatim = False
            if (it.claim or not it.fragment) and len(words(basis)) >= 3:
                # a word-for-word copy of a whole context sentence says what the context says: the model's reading
                # of it (a negation elsewhere in the passage can pull a copy towards "contradicted") does not count
                verbatim = _verbatim_key(basis) in copies
                if verbatim:
                    score = 1.0
                    # the evidence is the copied sentence itself, not what the model happened to entail most
                    key = _verbatim_key(basis)
                    source = next((p for _, p in refs if key in _verbatim_key(p.text)), None)
                    if source is not None:
                        premise = source
            scores.append(score)
            nli_scores.append(entailment)
            shown, role = premise, "supports"
            if score < threshold:
                # in rank order (most shared words first): the model's contradiction with a passage about something
                # else means little ("$25" against the returns policy), with the passage on the topic it means much
                cons = np.nan_to_num(con, nan=0.0)
                k = next((j for j in range(len(refs)) if cons[j] >= 0.5 and cons[j] > ent[j]), None)
                shown, role = (refs[0][1], "closest") if k is None else (refs[k][1], "contradicts")
                shown_con = None if np.isnan(con[k or 0]) else float(con[k or 0])
            else:
                shown_con = contradiction
            sent_span = index.best_sentence(shown, content_stems(it.hypothesis), question_words)
            evidence.append(
                SentenceEvidence(
                    index=i,
                    text=it.text,
                    start=it.span.start,
                    end=it.span.end,
                    hypothesis=it.hypothesis,
                    score=score,
                    entailment=entailment,
                    contradiction=contradiction,
                    max_contradiction=None if np.isnan(con).all() else float(np.nanmax(con)),
                    premise=ContextRef(premise.chunk, premise.span.start, premise.span.end, premise.text),
                    sentence=ContextRef(shown.chunk, sent_span.start, sent_span.end, sent_span.of(contexts[shown.chunk])),
                    coverage=cov,
                    context_coverage=ctx_cov,
                    unsupported_terms=terms,
                    premises_checked=len(refs),
                    supported=score >= threshold,
                    verbatim=verbatim,
                    sentence_role=role,
                    sentence_contradiction=shown_con,
                )
            )
        return FaithfulnessResult(
            score=float(np.mean(scores)) if scores else None,
            nli_score=float(np.mean(nli_scores)) if nli_scores else None,
            calibrated=calibrator is not None,
            sentences=tuple(evidence),
            mode=cfg.mode,
            threshold=threshold,
            pairs=len(ent_of),
            model_tokens=tokens_run,
            context_sentences=index.num_sentences,
        )


def _joined_premise(index: ContextIndex, best: list[Premise], chosen: list[Premise], budget: int) -> Premise | None:
    """One premise made of the best-ranked single sentences, in document order, as many as fit ``budget`` tokens;
    None when they are fewer than two or one window already holds them all."""
    picked: list[Premise] = []
    used = 0
    for premise in best:
        size = _premise_tokens(index, premise)
        if used + size > budget:
            continue
        picked.append(premise)
        used += size
    if len(picked) < 2:
        return None
    for window in chosen:  # a window that already holds every picked sentence read them together
        if all(p.chunk == window.chunk and window.span.start <= p.span.start and p.span.end <= window.span.end
               for p in picked):
            return None
    picked.sort(key=lambda p: (p.chunk, p.span.start))
    text = " ".join(p.text.strip() for p in picked)
    first = picked[0]
    last = max((p for p in picked if p.chunk == first.chunk), key=lambda p: p.span.end)
    return Premise(first.chunk, Span(first.span.start, last.span.end), text)


def _premise_tokens(index: ContextIndex, premise: Premise) -> int:
    sents, sizes = index.sentences[premise.chunk], index.sentence_tokens[premise.chunk]
    return sum(size for span, size in zip(sents, sizes) if premise.span.start <= span.start and span.end <= premise.span.end) or 1


def _interleave(first: list[Premise], second: list[Premise]) -> list[Premise]:
    """first[0], second[0], first[1], ...; a premise already taken (same chunk and span) is not read twice."""
    out: list[Premise] = []
    seen: set[tuple[int, int, int]] = set()
    for i in range(max(len(first), len(second))):
        for part in (first, second):
            if i < len(part):
                p = part[i]
                key = (p.chunk, p.span.start, p.span.end)
                if key not in seen:
                    seen.add(key)
                    out.append(p)
    return out


def _fit_units(
    units: list[tuple[Premise, frozenset[str]]],
    count_many: "object",
    budget: int,
    index: ContextIndex,
) -> list[tuple[Premise, frozenset[str]]]:
    """Replace any multi-sentence unit whose real token count exceeds the budget by its sentences."""
    counts = count_many([u[0].text for u in units]) if units else []  # type: ignore[operator]
    out: list[tuple[Premise, frozenset[str]]] = []
    for unit, n in zip(units, counts):
        if n <= budget:
            out.append(unit)
            continue
        premise = unit[0]
        text = index.contexts[premise.chunk]
        for span, ws in zip(index.sentences[premise.chunk], index.sentence_words[premise.chunk]):
            if span.start >= premise.span.start and span.end <= premise.span.end:
                out.append((Premise(premise.chunk, span, span.of(text)), ws))
    seen: set[tuple[int, int, int]] = set()
    deduped = []
    for unit in out:
        key = (unit[0].chunk, unit[0].span.start, unit[0].span.end)
        if key not in seen:
            seen.add(key)
            deduped.append(unit)
    return deduped


def _settled(read: list[tuple[int, Premise]], ent_of: dict[int, float], stop_at: float | None) -> bool:
    """A sentence is settled once a premise it read entails it at least ``stop_at``."""
    return stop_at is not None and any(ent_of.get(pid, 0.0) >= stop_at for pid, _ in read)


def _read_upto(refs: list[tuple[int, Premise]], ent_of: dict[int, float], stop_at: float | None) -> int:
    """How many of a sentence's ranked premises it read: up to the first that settled it."""
    for n, (pid, _) in enumerate(refs, 1):
        if pid not in ent_of:
            return n - 1
        if stop_at is not None and ent_of[pid] >= stop_at:
            return n
    return len(refs)


_PUNCT_EDGE = re.compile(r"^[\W_]+|[\W_]+$")
_SPACE = re.compile(r"\s+")


def _verbatim_key(sentence: str) -> str:
    """A sentence as compared for a word-for-word copy: case, runs of spaces and edge punctuation ignored."""
    return _SPACE.sub(" ", _PUNCT_EDGE.sub("", sentence.lower()))


def check_sizes(question: object, contexts: object, response: object, cfg: FaithfulnessConfig) -> None:
    """Types and sizes of the texts as sent (InputError / UncheckableError), before any rendering or model work."""
    if not isinstance(response, str):
        raise InputError(f"response must be a string, got {type(response).__name__}")
    if not isinstance(question, str):
        raise InputError(f"question must be a string, got {type(question).__name__}")
    if isinstance(contexts, str) or not isinstance(contexts, Sequence) or not all(isinstance(c, str) for c in contexts):
        raise InputError("contexts must be a list of strings (one per retrieved chunk)")
    total = sum(len(c) for c in contexts)
    if total > cfg.max_context_chars:
        raise UncheckableError(
            f"contexts total {total:,} characters, over the limit of {cfg.max_context_chars:,} "
            "(max_context_chars); send fewer or shorter chunks, or raise the limit"
        )
    if len(response) > cfg.max_response_chars:
        raise UncheckableError(
            f"response is {len(response):,} characters, over the limit of {cfg.max_response_chars:,} "
            "(max_response_chars); raise the limit to check it"
        )


def _validate(question: str, contexts: Sequence[str], response: str, cfg: FaithfulnessConfig) -> None:
    check_sizes(question, contexts, response, cfg)
    reason = uncheckable_reason(response, what="answer") or uncheckable_reason(question, what="question")
    if reason is None:
        broken = next((i for i, c in enumerate(contexts) if lone_surrogate(c) is not None), None)
        if broken is not None:
            reason = f"context {broken + 1} holds a lone surrogate (broken Unicode); fix the text before checking it"
    if reason is not None:
        raise UncheckableError(reason)
