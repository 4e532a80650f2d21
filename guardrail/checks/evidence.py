"""What faithfulness reports (:class:`SentenceEvidence` per response sentence, :class:`FaithfulnessResult` per
answer), and the step of :meth:`guardrail.checks.faithfulness.FaithfulnessCheck.run` that builds a sentence's evidence
from the model's reading of its premises (:func:`sentence_evidence`): its score (calibrated, or 1.0 for a word-for-word
copy of a context sentence), the premise it came from, the context sentence a user should look at and the grounding
signals.
"""

from __future__ import annotations

import collections
import dataclasses
import difflib
import functools
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from guardrail.checks.calibration import Calibrator, absent_share, sentence_features, tokens
from guardrail.checks.claims import PARTICIPLE_LEAD, claim_names, claim_object, claim_subject, without_frame
from guardrail.checks.lexicon import looks_verb
from guardrail.checks.grounding import (
    KnownNumbers,
    Quantity,
    conversion_of,
    coverage,
    quantities,
    unsupported_terms,
)
from guardrail.checks.pairing import (
    NEGATIONS,
    DeniedList,
    Exclusive,
    PairScores,
    Refs,
    borrowed_polarity,
    denied_lists,
    denied_member,
    denying_clause,
    exclusive_clause,
    exclusive_clauses,
    exclusive_support,
    label_subject,
    negative,
    polar_negative,
)
from guardrail.checks.premises import ContextIndex, Premise, PremiseMode
from guardrail.checks.scales import (Clauses, Denials, context_clauses, context_names, negated_only, number_bounds,
                                     overstated)
from guardrail.text import QA_PREFIX, Span, content_stems, stem, words


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
    #: when single sentences are read (``FaithfulnessConfig.sentences``): the model's reading of the claim's
    #: best-ranked single sentence (the one it is most about). Evidence only: capping the score on its contradiction
    #: as on the best premise's was measured and not shipped (``dev_sets.py --top-sentence-cap``: spurious
    #: contradictions of summaries, CLIFF 0.795 -> 0.676, WiCE 0.817 -> 0.795 with v3.4)
    top_sentence_entailment: float | None = None
    top_sentence_contradiction: float | None = None
    #: the claim's subject ("The Basic plan" in "The Basic plan includes priority support."), when it has one
    subject: str | None = None
    #: when the best-entailing premise does not name that subject (its support is about something else: "The Pro
    #: plan includes priority support."), the strongest contradiction among the premises read that do name it ("The
    #: Basic plan does not include priority support."); None otherwise. At ``FaithfulnessConfig.subject_conflict``
    #: or above it caps the score: the claim moves a fact from one subject to another that the context denies it
    subject_conflict: float | None = None
    #: the contradiction at which ``subject_conflict`` caps the score: ``FaithfulnessConfig.subject_conflict`` for a
    #: sentence about another subject, :data:`BORROWED_DENIAL` for the subject's own sentence when the best premise
    #: only lent the claim its polarity; None when no conflict was found
    conflict_bar: float | None = None
    #: numbers of the sentence (figures, "thirty-one") that neither the contexts nor the question hold, not even as
    #: a unit conversion of one they hold: they cap the score below the threshold (:data:`RULE_CAP`)
    unsupported_numbers: tuple[str, ...] = ()
    #: a clause of the contexts that names the claim's subject and says the opposite of the predicate the claim
    #: repeats (:func:`~guardrail.checks.pairing.denying_clause`): it caps the score below the threshold
    denied_by: ContextRef | None = None
    #: words a near copy of a context sentence swaps in for the sentence's own that no context holds
    #: (:func:`swapped_words`): they cap the score below the threshold
    swapped_words: tuple[str, ...] = ()
    #: what the claim says more strongly than the context clause it is about (:func:`~guardrail.checks.scales.overstated`):
    #: '"will" where the passage says "may"', '"has acquired" where the passage says "agreed to acquire"'. It caps the
    #: score below the threshold
    overstated: tuple[str, ...] = ()
    #: the answer says ``hypothesis`` does not hold: a "no" to a question about several things at once ("Are both X
    #: and Y art dealers?"), which is true when any one of them is not so. ``hypothesis`` is the member the contexts
    #: support least, and the score is its own mirrored about the threshold (:func:`not_all`)
    negated: bool = False

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
class ResponseItem:
    """One piece of the response as checked: a sentence (or a window of a long one, or one claim of a split one) and
    the hypothesis the model reads for it."""

    span: Span
    text: str
    hypothesis: str
    check: bool
    fragment: bool = False
    #: the hypothesis is the statement the answer makes with its question (guardrail.checks.claims)
    claim: bool = False
    #: judged only for contradiction: it fails when the contexts deny it, and passes when they do not (the yes/no
    #: statement of "No, because only 5 days can be carried over.": its reason is judged as a claim of its own, and
    #: the model cannot infer "You cannot carry over 10 days." from it)
    veto: bool = False
    #: a short answer to a wh-question read alone ("23 kg." to "What is the carry-on weight limit?"): its quantities
    #: must be the ones the contexts give what the question asks about (:func:`answered_elsewhere`)
    answers: bool = False
    #: a short answer to a wh-question that names only what the question names ("Litware Inc." to "Who is acquiring
    #: Litware?"): it answers nothing, whatever the model reads of the statement it fills in
    restates: bool = False
    #: with ``veto``: a statement the answer only leans to (a hedged reply's, or the question's beside the statement
    #: a "No, ..." makes of its own): denied by any premise read that contradicts it at this (0: not a lean), and no
    #: rule on its words applies
    lean: float = 0.0
    #: the rules on a claim's words apply (not to a statement the answer only leans to, nor to the question's statement
    #: beside a "No, <statement>.": its words are the question's)
    rules: bool = True
    #: with ``veto``: the statement the answer denies (the yes beside a "No, <its own statement>."): it fails the answer
    #: where the contexts entail it (:data:`AFFIRMED_ENTAILMENT`), and passes otherwise
    affirms: bool = False
    #: one member of a claim that says not all of its members hold ("No." to "Are both X and Y art dealers?"): the
    #: consecutive ``not_all`` items of a span are judged together by :func:`not_all`
    not_all: bool = False


def mirrored(score: float, threshold: float) -> float:
    """``score`` reflected about ``threshold`` (0 -> 1, threshold -> threshold, 1 -> 0), linear on each side: the
    support for "not so" from the support for "so", passing exactly when "so" fails."""
    if score < threshold:
        return threshold + (threshold - score) * (1.0 - threshold) / threshold
    return threshold * (1.0 - score) / (1.0 - threshold) if threshold < 1 else 0.0


def not_all(items: Sequence[ResponseItem], evidence: Sequence[SentenceEvidence],
            threshold: float) -> list[SentenceEvidence]:
    """``evidence`` (one per item) with each run of ``not_all`` items of one span judged as one claim: "not all of
    these hold" is as supported as its least supported member is not, so the run keeps that member's evidence with
    its score mirrored about the threshold (a member the contexts deny makes the claim true; all members supported
    make it false). A run with an unread member (the check stopped before it) stays unread."""
    out: list[SentenceEvidence] = []
    k = 0
    while k < len(items):
        if not items[k].not_all:
            out.append(evidence[k])
            k += 1
            continue
        end = k
        while end < len(items) and items[end].not_all and items[end].span == items[k].span:
            end += 1
        run = list(evidence[k:end])
        unread = [e for e in run if e.score is None]
        if unread:
            out.append(unread[0])
        else:
            weakest = min(run, key=lambda e: e.score if e.score is not None else 0.0)
            score = mirrored(weakest.score if weakest.score is not None else 0.0, threshold)
            out.append(dataclasses.replace(weakest, score=score, supported=score >= threshold, negated=True))
        k = end
    return out


def sentence_numbers(items: Sequence[ResponseItem]) -> list[int]:
    """The sentence number of each item: the parts of one split sentence share its number ("sentence 3" in reasons
    counts sentences, not parts)."""
    ordinals: list[int] = []
    for k, it in enumerate(items):
        same = k > 0 and it.span == items[k - 1].span
        ordinals.append(ordinals[-1] if same else (ordinals[-1] + 1 if ordinals else 0))
    return ordinals


_PUNCT_EDGE = re.compile(r"^[\W_]+|[\W_]+$")
_SPACE = re.compile(r"\s+")


def verbatim_key(sentence: str) -> str:
    """A sentence as compared for a word-for-word copy: case, runs of spaces and edge punctuation ignored."""
    return _SPACE.sub(" ", _PUNCT_EDGE.sub("", sentence.lower()))


class EvidenceBasis:
    """What every sentence's evidence is read against: the contexts with their index, vocabulary and whole sentences
    (as compared for copies), the question's words, the calibration and the threshold."""

    def __init__(self, contexts: Sequence[str], index: ContextIndex, vocab: frozenset[str], copies: frozenset[str],
                 question_words: Sequence[str], calibrator: Calibrator | None, threshold: float,
                 reads_singles: bool = False, subject_conflict: float | None = None, question: str = "",
                 answer: Sequence[str] = ()) -> None:
        self.contexts = contexts
        self.question = question
        #: the answer's sentences: a number one of them quotes may be worked on in another ("... £250 ... an extra
        #: £300. That makes £550 in total.")
        self.answer = answer
        #: single context sentences are read besides the windows (FaithfulnessConfig.sentences)
        self.reads_singles = reads_singles
        #: FaithfulnessConfig.subject_conflict
        self.subject_conflict = subject_conflict
        self.index = index
        self.vocab = vocab
        self.copies = copies
        self.question_words = question_words
        self.calibrator = calibrator
        self.threshold = threshold

    @functools.cached_property
    def numbers(self) -> KnownNumbers:
        """The numbers the contexts and the question hold (read once, when a sentence has a number)."""
        return KnownNumbers([*self.contexts, self.question], answer=self.answer, question=self.question)

    @functools.cached_property
    def sentence_words_as_written(self) -> list[tuple[frozenset[str], str]]:
        """Each context sentence's words as written (lower case, hyphens kept), and the sentence (read once, for
        :func:`prefix_antonyms`)."""
        return [(frozenset(w.lower() for w in words(span.of(self.index.contexts[c]))), span.of(self.index.contexts[c]))
                for c, spans in enumerate(self.index.sentences) for span in spans]

    @functools.cached_property
    def exclusives(self) -> list[Exclusive]:
        """The contexts' exclusive clauses ("only the Pro supports ..."), read once per request."""
        return exclusive_clauses(self.index)

    @functools.cached_property
    def denied_lists(self) -> list[DeniedList]:
        """The contexts' clauses that deny a verb to a list of things, read once per request."""
        return denied_lists(self.index)

    @functools.cached_property
    def context_words_as_written(self) -> frozenset[str]:
        """Every word of the contexts as written (lower case), read once."""
        return frozenset().union(*(ws for ws, _ in self.sentence_words_as_written))

    @functools.cached_property
    def clauses(self) -> Clauses:
        """Every clause of the contexts' sentences, read once per request (:mod:`guardrail.checks.scales`)."""
        return context_clauses(self.index)

    @functools.cached_property
    def number_bounds(self) -> dict[str, tuple[frozenset[str], str]]:
        """How the contexts qualify each of their numbers ("up to", "at least", "about"), read once per request."""
        return number_bounds(self.contexts)

    @functools.cached_property
    def denied_words(self) -> dict[str, tuple[frozenset[str], ...]]:
        """The words the contexts hold only right after a negation, with whom they deny them, read once per request."""
        return negated_only(lambda: [(r.text, r.subject) for row in self.sentences_read for r in row], self.contexts)

    @functools.cached_property
    def context_names(self) -> frozenset[str]:
        """The stems of the contexts' names (read once, when a denied word needs them)."""
        return context_names(self.contexts)

    @functools.cached_property
    def sentences_read(self) -> list[list[SentenceRead]]:
        """Per chunk, per sentence: its text and subject (read once, when a rule needs them)."""
        return read_sentences(self.index)

    @functools.cached_property
    def sentence_claims(self) -> list[tuple[frozenset[str], frozenset[str], bool]]:
        """Each context sentence's subject (as :func:`subject_core` names it), the words it says of it (when a
        claim has a word that stands in contrast with another) and whether it says them negated."""
        # what it says of the subject: its words but the subject's ("Pro" is no tier it has)
        return [(r.subject, frozenset(words(r.text)) - frozenset(words(r.named)) - _in_names_only(r.text),
                 polar_negative(r.text)) for row in self.sentences_read for r in row if r.subject]

    @functools.cached_property
    def sentence_restrictions(self) -> list[tuple[frozenset[str], str]]:
        """Each context sentence that restricts its subject to one thing done to it ("Sale items can only be exchanged
        for store credit."): its subject (as :func:`subject_core` names it) and that verb (when a claim says its
        subject can be something)."""
        out = []
        for row in self.sentences_read:
            for r in row:
                m = _ONLY.search(r.text)
                if m is not None and r.named:
                    out.append((r.subject, stem((m.group("verb") or m.group("verb2")).lower())))
        return out

    @functools.cached_property
    def sentence_subjects(self) -> list[list[frozenset[str]]]:
        """Per chunk, per sentence: its subject's words as written (when a claim is a near copy of one)."""
        return [[r.subject_words for r in row] for row in self.sentences_read]

    @functools.cached_property
    def read_quantities(self) -> list[tuple[SentenceRead, frozenset[str], list[Quantity]]]:
        """Each context sentence that states a quantity, read once per request (when a claim has a number): how the
        rules read it, its words and its quantities."""
        out = []
        for row, wss in zip(self.sentences_read, self.index.sentence_words):
            for r, ws in zip(row, wss):
                qs = quantities(r.text, ones=True)
                if qs:
                    out.append((r, ws, qs))
        return out

    @functools.cached_property
    def _by_value(self) -> dict[float, list[tuple[SentenceRead, frozenset[str], list[Quantity]]]]:
        by: dict[float, list[tuple[SentenceRead, frozenset[str], list[Quantity]]]] = {}
        for row in self.read_quantities:
            for v in dict.fromkeys(k.value for k in row[2]):
                by.setdefault(v, []).append(row)
        return by

    def quantities_of(self, value: float) -> list[tuple[SentenceRead, frozenset[str], list[Quantity]]]:
        """The rows of :attr:`read_quantities` that hold a quantity of this value, in their order."""
        return self._by_value.get(value, [])

    @functools.cached_property
    def sentence_quantities(self) -> list[tuple[frozenset[str], frozenset[str], list[Quantity]]]:
        """Each context sentence that states a quantity: its words, its subject's words and its quantities."""
        return [(ws, r.subject, qs) for r, ws, qs in self.read_quantities]

    @functools.cached_property
    def clause_quantities(self) -> list[tuple[frozenset[str], frozenset[str], list[Quantity]]]:
        """As :attr:`sentence_quantities`, with a sentence whose clauses each state a quantity read per clause: "The
        Enterprise plan guarantees 99.95% monthly uptime; the Standard plan guarantees 99.9%." is two rows, each with
        its own subject (a clause that names none has the sentence's)."""
        return [(ws, sw, qs) for ws, sw, qs, _ in self.titled_clause_quantities]

    @functools.cached_property
    def _headings(self) -> dict[int, frozenset[str]]:
        """Per context sentence (by identity): the words of its chunk's first sentence, which names what the chunk is
        about ("Barista Solo 100 - Descaling.", "Slow-cooker chickpea curry.")."""
        return {id(r): wss[0] if wss else frozenset()
                for row, wss in zip(self.sentences_read, self.index.sentence_words) for r in row}

    @functools.cached_property
    def titled_clause_quantities(self) -> list[tuple[frozenset[str], frozenset[str], list[Quantity], frozenset[str]]]:
        """:attr:`clause_quantities` with the words of each row's chunk heading (:attr:`_headings`)."""
        out = []
        for r, ws, qs in self.read_quantities:
            heading = self._headings.get(id(r), frozenset())
            parts = [(c, quantities(c, ones=True)) for c in _CLAUSES.split(r.text) if c] \
                if _CLAUSES.search(r.text) else []
            if sum(1 for _, cq in parts if cq) < 2:
                out.append((ws, r.subject, qs, heading))
                continue
            last = r.subject  # the subject a clause without one says more of: the last one named before it
            for c, cq in parts:
                lead = PARTICIPLE_LEAD.match(c)  # "Opened in 2011, it has ...": the clause after the phrase
                c = c[lead.end():] if lead else c
                first = c.split(maxsplit=1)[0]
                if first.lower() in ("it", "they", "he", "she"):
                    if cq:
                        out.append((frozenset(content_stems(c)) | last, last, cq, heading))
                    continue
                # a clause with no verb of its own ("and a 4,000 mAh battery") says more of that subject
                named = None if looks_verb(first) and not first[:1].isupper() else claim_subject(c)
                if named is None and first[:1].isupper():  # "while Litware's rose 18%": the name it opens with
                    named = _LEADING_NAME.match(c).group()  # type: ignore[union-attr]
                own = frozenset(content_stems(named)) if named else frozenset()
                last = own or last
                if cq:
                    out.append((frozenset(content_stems(c)) | last, last, cq, heading))
        return out

    @functools.cached_property
    def context_tokens(self) -> set[str]:
        """The contexts' tokens, read once and only when the calibration uses them (its "absent" feature)."""
        if self.calibrator is None or "absent" not in self.calibrator.features:
            return set()
        return set(tokens(" ".join(self.contexts)))

    def score(self, entailment: float, contradiction: float | None, cov: float, ctx_cov: float,
              terms: tuple[str, ...], basis: str) -> float:
        """A sentence's support: the calibrated probability when the model ships a calibration, else the entailment."""
        if self.calibrator is None:
            return entailment
        return self.calibrator(sentence_features(entailment, contradiction, cov, ctx_cov, bool(terms),
                                                 absent_share(basis, self.context_tokens), len(basis),
                                                 self.index.num_sentences),
                               entailment, contradiction)


#: a sentence that may hold a number: a digit or a number word
_HAS_NUMBER = re.compile(r"(?i)\d|\b(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|"
                         r"billion)\b")


#: a term that is a figure and nothing else: "550", "1,080", "4.9"
_FIGURE_TERM = re.compile(r"\d[\d,]*(?:\.\d+)?")


def other_values(text: str, about: frozenset[str], basis: EvidenceBasis, named: str | None = None) -> tuple[str, ...]:
    """Quantities a claim gives its subject (``about``) that the sentences whose subject it is give otherwise: one of
    them states the same unit with another value, and none states the claim's ("Carry-on bags must not exceed 23
    kg." where the carry-on sentence says 7 kg and 23 kg is the checked bag's; "The AeroBook 16 weighs 1.2 kg." where
    the 16's sentence says 1.9 kg). The number is in the contexts, said of something else: the model reads the copy
    as support (round 25: 11 of 17 such moves delivered). A rule on any quantity found only in sentences that do
    not name the subject blocked 9 more of 297 faithful probes ("The plan costs $65" for "The Unlimited plan"); this
    one needs the subject's own sentence to say otherwise."""
    if not about or polar_negative(text):  # "The pool is not open at 11 pm" beside "open from 7 am to 10 pm": no
        # conflict ("must not exceed 23 kg" is a bound, not a negation)
        return ()
    # the sentences whose subject is the claim's, no more specific ("A defective item can be exchanged within 60
    # days." says nothing of items in general)
    named = claim_subject(text) if named is None else named
    subject = frozenset(_as_named(named or "", basis.index.vocabulary))  # not its other names ("RAM")
    rows = [(ws, qs) for ws, sw, qs in basis.sentence_quantities if sw == about or subject and sw == subject]
    own = [qs for _, qs in rows]
    if not own:
        return ()
    out: list[str] = []
    first = _CLAUSE_BREAK.split(text, maxsplit=1)[0]
    said = quantities(text, compound_words_only=True)
    asked = quantities(basis.question, ones=True) if basis.question and _HAS_NUMBER.search(basis.question) else []
    clauses = [c for c in _CLAUSES.split(text) if c]
    for q in said:
        def same(k: Quantity) -> bool:
            # amounts of money: of the same unit word ("$25" and "$999", "$25 per" and "$10 per"; not "45 cents"
            # beside "$4.2 billion") and within a thousand times of each other
            if q.currency and k.currency:
                return k.unit == q.unit and max(k.value, q.value) <= 1000 * max(min(k.value, q.value), 1e-9)
            return k.unit == q.unit and not (q.currency or k.currency)

        if not (q.unit or q.currency) or q.unit in ("am", "pm", "a.m", "p.m") or any(
                q.stands_for(k) and same(k) for qs in own for k in qs) or any(
                q.stands_for(k) and same(k) for ws, sw, qs in basis.clause_quantities
                if sw == about or subject and sw == subject for k in qs):
            # a time of day is a point, not an amount: a subject has many ("16 GB" is no "AeroBook 16"); a clause
            # whose subject is the claim's may hold the value in a sentence about something else ("Rent can be
            # increased only once every 12 months, and the landlord must give ... 3 full months' notice")
            continue
        if q.currency and (q.value not in basis.numbers.values or not re.search(
                rf"(?<![\d.,]){re.escape(q.written)}(?![\d])", first)):
            # a price no context holds is the number rule's (a total worked out: "$300 a year"); one after the
            # clause that names the subject may be another thing's ("The single article limit is £300, within an
            # overall baggage limit of £1,500")
            continue
        if any(same(k) and k.value != q.value and not q.hedged for qs in own for k in qs):
            if any(q.stands_for(k) for k in asked) and _ASKERS_FRAME.search(text[:text.find(q.written)]) and any(
                    o is not q and same(k) and o.stands_for(k) for o in said for qs in own for k in qs):
                continue  # the asker's own figure beside the subject's: "sale items have 14 days, so at 20 days ..."
            if _retold_elsewhere(q, next((c for c in clauses if q.written in c), text), about, subject, rows, basis):
                continue
            out.append(q.phrase or q.written)
    return tuple(out)


#: the words before a figure that make it the asker's case, not the subject's value: "so at 20 days you're past it",
#: "if you're 70", "after 20 days"
_ASKERS_FRAME = re.compile(r"(?i)\b(?:at|after|if|beyond|past|since|with|by|over)\s+(?:about\s+|around\s+|only\s+)?"
                           r"[$€£]?$")


def _retold_elsewhere(q: Quantity, clause: str, about: frozenset[str], subject: frozenset[str],
                      own: list[tuple[frozenset[str], list[Quantity]]], basis: EvidenceBasis) -> bool:
    """The clause that states ``q`` is about another subject than the claim's and retells a context sentence of that
    subject that holds q: the clause's own subject is that sentence's ("Lake Orvena is the deepest, but Lake Selm is
    bigger by surface area, 112 square kilometres": Selm's sentence), and it shares :data:`RETOLD_WORDS` of that
    sentence's words, :data:`RETOLD_MARGIN` more than any sentence of the claim's subject. A value moved onto the
    claim's subject is said in a clause whose subject is the claim's ("The Vela X2 comes with a 3-year warranty, the
    same as the Vela Pro, which ..."), whatever else it names."""
    named = claim_subject(clause)
    if not named:
        return False
    theirs = frozenset(_as_named(named, basis.index.vocabulary)) or frozenset(content_stems(named))
    if not theirs or theirs & subject:
        return False
    says = _said(clause) - about
    mine = max((len(says & ws) for ws, _ in own), default=0)
    return any(r.subject and r.subject <= theirs | (r.subject & subject) and not r.subject <= subject and
               len(says & ws) >= max(RETOLD_WORDS, mine + RETOLD_MARGIN)
               for r, ws, ks in basis.quantities_of(q.value) if any(q.stands_for(k) for k in ks))


#: the clauses of a sentence that each may state their own quantity: "Online check-in opens 24 hours before departure
#: and closes 60 minutes before departure." (coordination, a semicolon, a contrast)
_CLAUSES = re.compile(r"\s*;\s*|,?\s+(?:and|but|while|whereas|whilst)\s+(?=\S)")
#: units of one measure: a claim may move a value between two clauses that state durations in other units
_LEADING_NAME = re.compile(r"[A-Z][\w'\u2019.&-]*(?:\s+[A-Z][\w'\u2019.&-]*)*")
_CLAUSE_DETERMINERS = frozenset({"the", "a", "an", "its", "their", "our", "your", "his", "her"})
_DIMENSION = {u: d for d, us in {
    "time": "second sec minute min hour hr day week month year night decade century",
    "weight": "g gram kg kilo kilogram lb lbs pound ounce oz ton tonne mg",
    "length": "cm mm m meter metre km kilometer kilometre mile mi foot feet ft inch inche in",
    "data": "kb mb gb tb", "money": "$ dollar usd euro eur gbp cent buck", "volume": "ml l liter litre gal gallon",
}.items() for u in us.split()}


def _measure(q: Quantity) -> str:
    unit = "$" if q.currency else q.unit
    return _DIMENSION.get(unit, unit)


_UNIT_STEMS = frozenset(w for u in _DIMENSION for w in (u, stem(u), stem(u + "s"), stem(u + "es")))


def _said(text: str) -> frozenset[str]:
    """A clause's content stems but its numbers and units: what it says happens."""
    return frozenset(w for w in content_stems(text) if not w[:1].isdigit() and w not in _UNIT_STEMS)


def _bound_to_sibling(q: Quantity, says: frozenset[str], stated: list[Quantity], sentence: SentenceRead) -> bool:
    """``q`` is in one clause of ``sentence``, and a sibling clause that states another value of its measure is the
    one the claim's words (``says``) point to, not q's own. A clause that names nothing of the sentence's subject
    says something of it ("... and closes 60 minutes before departure": online check-in's). A sibling whose value the
    claim's clause states too (``stated``: "open from 24 hours until 90 minutes before departure") has its words
    there for that value."""
    subject = _said(sentence.named)
    clauses = []
    for c in _CLAUSES.split(sentence.text):
        if c:
            said = _said(c)
            clauses.append((said if said & subject else said | subject, quantities(c, ones=True)))
    own = [said for said, ks in clauses if any(q.stands_for(k) for k in ks)]
    if len(own) != 1 or not own[0] - subject:
        return False  # "... and $45 for the second": no predicate of its own, it shares its sibling's ("cost")
    for other, ks in clauses:
        if other is own[0] or not any(_measure(k) == _measure(q) and not q.stands_for(k) for k in ks) or any(
                m.stands_for(k) for m in stated for k in ks):
            continue
        if says & (other - own[0]) and not says & (own[0] - other):
            return True
    return False


def bound_elsewhere(text: str, about: frozenset[str], basis: EvidenceBasis) -> tuple[str, ...]:
    """Quantities of a claim that every context clause holding them binds to another predicate, while a sibling
    clause of the same sentence states the claim's predicate with another value of the same measure: "Online
    check-in closes 24 hours before departure." against "Online check-in opens 24 hours before departure and closes
    60 minutes before departure." (the 24 hours is the opening's). Read whole, the context sentence holds every word
    of the claim and the model entails it (round 25: two values in one sentence bound to the wrong clause). A clause
    decides only when the claim's words point to the sibling alone: a claim that also says what the value's own
    clause says ("opens 24 hours before and closes 60 minutes before") is read as written."""
    if polar_negative(text):
        return ()
    claim = [c for c in _CLAUSES.split(text) if c]
    out: list[str] = []
    for q in quantities(text, compound_words_only=True):
        if not (q.unit or q.currency) or q.unit in ("am", "pm", "a.m", "p.m"):
            continue
        mine = next((c for c in claim if any(q.stands_for(k) for k in quantities(c, ones=True))), text)
        says = _said(mine) - _said(q.phrase or q.written)
        if not says:
            continue
        holders = [r for r, _, ks in basis.quantities_of(q.value) if any(q.stands_for(k) for k in ks)]
        stated = quantities(mine, ones=True)
        if holders and all(_bound_to_sibling(q, says, stated, h) for h in holders):
            out.append(q.phrase or q.written)
    return tuple(out)


#: where a claim's clauses part: a comma, semicolon or colon that is no figure's ("$2,500", "3:30 pm"), brackets, dashes,
#: a coordinating or relative word
_CLAUSE_BREAK = re.compile(r"\s*(?:(?<!\d)[,;:]|[,;:](?!\d)|[()\u2014\u2013])\s*|\s+(?:and|but|while|whereas|which|so)\s+")
#: how many of a claim clause's words a context sentence must share, and how many more than any sentence stating the
#: clause's value, to be the sentence the clause retells (:func:`misplaced_values`)
RETOLD_WORDS = 3
RETOLD_MARGIN = 2


def misplaced_values(text: str, basis: EvidenceBasis) -> tuple[str, ...]:
    """Quantities of a claim that the contexts state only in sentences that say something else, while the sentence
    the claim's clause retells (most of its words, several more than any sentence holding the value) states another
    value of the same measure: "EC claims must be submitted via the student portal within 10 working days of the
    assessment deadline." against "Claims must be submitted via the student portal no later than 5 working days
    after the assessment deadline ..." (the 10 working days are the outcome email's); "Within 30 days of account
    closure your personal data is deleted" against "After you close your account, we delete your personal data
    within 90 days" (the 30 days are a notice of new sub-processors). The number is in the contexts, said of
    something else, so neither the number rule nor the model (which reads the copy as support) catches it; the
    subject rule (:func:`other_values`) needs the two subjects to be the same words. A value worked out, converted or
    hedged is left to the number rule."""
    rows = basis.read_quantities
    if not rows:
        return ()
    clauses = [c for c in _CLAUSE_BREAK.split(text) if c]
    out: list[str] = []
    said = quantities(text, compound_words_only=True)
    asked = {k.value for k in quantities(basis.question, ones=True)} if basis.question else set()
    for q in said:
        if not (q.unit or q.currency) or q.hedged or q.unit in ("am", "pm", "a.m", "p.m") or \
                q.value not in basis.numbers.values or q.value in asked:
            # a value no context holds is the number rule's (unsupported, or worked out and read as such); one the
            # question gives is the asker's ("For a 40-minute delay ..." after "My train was 40 minutes late.")
            continue
        mine = next((c for c in clauses if any(q.stands_for(k) for k in quantities(c, ones=True))), None)
        if mine is None or polar_negative(mine):  # "not within 30 days" says no value of its own
            continue
        says = _said(mine) - _said(q.phrase or q.written)
        if len(says) < RETOLD_WORDS:
            continue
        measure = _measure(q)
        whole = _said(text) - _said(q.phrase or q.written)  # the claim's words, its other clauses' too
        holding: list[tuple[int, frozenset[str]]] = []  # each sentence holding the value: what it shares
        rival, rival_ws = frozenset[str](), frozenset[str]()
        for r, ws, ks in rows:
            if any(q.stands_for(k) for k in ks) or conversion_of(q, ks) is not None:
                # with the subject a pronoun of it points at ("On Fridays and Saturdays they cost $180.")
                holding.append((len(says & (ws | r.subject)), whole & (ws | r.subject)))
            elif any(_measure(k) == measure and k.qualifier == q.qualifier for k in ks) and \
                    len(says & ws) > len(rival) and not all(
                        any(m.stands_for(k) for m in said) for k in ks if _measure(k) == measure):
                # (a sentence whose values of the measure the claim states too is accounted for: "4.36% AER,
                # compared with 4.45% AER if you take the interest annually")
                rival, rival_ws = says & ws, ws
        support = max((n for n, _ in holding), default=0)
        # the rival retells the clause, and says every word of the claim a sentence holding the value says (a
        # condition of the claim's, "On Saturdays, ...", said only where the value is makes that the sentence retold)
        if len(rival) >= max(RETOLD_WORDS, (len(says) + 1) // 2) and len(rival) >= support + RETOLD_MARGIN and \
                all(h <= rival_ws for _, h in holding):
            out.append(q.phrase or q.written)
    return tuple(out)


#: a comparison of two things a claim makes: "The Nova 8 has a bigger battery than the Nova 8 Pro."
_COMPARISON = re.compile(
    r"(?i)^(?P<a>[^,;:]{2,60}?)\s+(?:is|are|was|were|has|have|had|offers?|offered|guarantees?|guaranteed|receives?|"
    r"received|gets?|got|provides?|provided|costs?|weighs?|lasts?|rose|fell|grew|earns?|earned|takes?|took)\b"
    r"(?P<mid>[^,;:]{0,40}?)\b(?P<cmp>more|less|fewer|higher|lower|bigger|smaller|larger|greater|longer|shorter|"
    r"cheaper|heavier|lighter|older|newer)\b(?P<what>[^,;:]{0,40}?)\bthan\s+(?P<b>[^,;:]{2,60}?)\s*(?:does|do|is|are|did|"
    r"has|have)?[.!]?$")
_GREATER = frozenset({"more", "higher", "bigger", "larger", "greater", "longer", "heavier", "older"})


def _values_of(name: str, claim: frozenset[str], measure: frozenset[str], basis: EvidenceBasis,
               named: bool = False) -> list[Quantity]:
    """The quantities the contexts give ``name``: those of the clauses whose subject is it (exactly, or with words the
    claim also says: "Contoso's" in a claim about shares is "Contoso's shares"); the clauses that name the measure
    the claim compares (``measure``: "battery") when some do; with ``named``, only those."""
    own = frozenset(content_stems(name))
    if not own:
        return []
    rows = basis.clause_quantities
    exact = [(ws, qs) for ws, sw, qs in rows if sw == own]
    near = exact or [(ws, qs) for ws, sw, qs in rows if own <= sw and sw - own <= claim]
    about = [(ws, qs) for ws, qs in near if ws & measure] or ([] if named else near)
    return [q for _, qs in about for q in qs]


def reversed_comparison(text: str, basis: EvidenceBasis) -> tuple[str, ...]:
    """A comparison the contexts' own values reverse: "The Nova 8 has a bigger battery than the Nova 8 Pro." where
    the Nova 8's clause says 4,000 mAh and the Pro's 5,000 mAh; "Non-birth parents receive more paid leave than
    birth parents." against 8 and 16 weeks. The model reads such a claim as it reads its faithful twin (0.56-0.73 for
    both; round 27): the values decide, when each side has one value of a unit the other has too. Comparisons of
    quality ("better", "faster") are left to the model."""
    held = _comparison(text, basis)
    return () if held is None or held[0] else (held[1],)


def comparison_holds(text: str, basis: EvidenceBasis) -> bool:
    """A comparison the contexts' own values bear out ("The Nova 8 Pro has a bigger battery than the Nova 8." beside
    5,000 and 4,000 mAh): the values decide it as they decide the reversed one (:func:`reversed_comparison`), where
    the model reads both alike (0.40 for this one)."""
    held = _comparison(text, basis, named=True)
    return held is not None and held[0]


def _comparison(text: str, basis: EvidenceBasis, named: bool = False) -> tuple[bool, str] | None:
    """(whether the contexts' values bear the comparison out, its words) for a comparison of two sides that each have
    one value of a unit the other has too; None otherwise. With ``named``, only values of clauses that name what the
    claim compares ("battery"): a comparison is borne out by its own measure, never by a price beside it."""
    m = _COMPARISON.match(text.strip())
    if m is None:
        return None
    claim = frozenset(content_stems(text))
    measure = frozenset(content_stems(f"{m.group('mid')} {m.group('what')}")) - frozenset(content_stems(m.group("a")))
    if named and not measure:
        return None
    a = _values_of(m.group("a"), claim, measure, basis, named)
    b = _values_of(m.group("b"), claim, measure, basis, named)
    if named:  # one side's clause may leave the measure to the other's ("...; the Standard plan guarantees 99.9%")
        if not a and not b:
            return None
        a = a or _values_of(m.group("a"), claim, measure, basis)
        b = b or _values_of(m.group("b"), claim, measure, basis)
    units = {("$" if q.currency else q.unit) for q in a} & {("$" if q.currency else q.unit) for q in b} - {""}
    if len(units) != 1:
        return None
    unit = units.pop()
    va = {q.value for q in a if ("$" if q.currency else q.unit) == unit}
    vb = {q.value for q in b if ("$" if q.currency else q.unit) == unit}
    if len(va) != 1 or len(vb) != 1 or va == vb:
        return None
    greater = next(iter(va)) > next(iter(vb))
    return greater == (m.group("cmp").lower() in _GREATER), f"{m.group('cmp')} than"


#: a sentence whose subject is a pronoun: it says something of the subject named before it
_PRONOUN_SUBJECT = re.compile(r"(?i)\s*(?:it|they|he|she)\s+(?:[a-z]+)")
#: question words that say how it asks, not what about
#: how much more a clause that holds another value (and names no word of the question in its subject) must be about
#: the question than the answer's own clauses
ELSEWHERE_MARGIN = 2.0
_ASKING = frozenset(content_stems("how much many long often far old big what which who when where why kind type "
                                  "amount number cost take get need"))


def answered_elsewhere(text: str, basis: EvidenceBasis) -> tuple[str, ...]:
    """Quantities of a short answer that the contexts say of something other than what the question asks about:
    the context sentences most about the question (its words in their subject count twice, in the rest once) state
    the same unit with another value, none of them states the answer's, and they share at least a subject word or
    two words with the question ("23 kg." to "What is the carry-on weight limit?" where the carry-on sentence says
    7 kg and 23 kg is the checked bag's; "1.2 kg." to "How much does the AeroBook 16 weigh?" where 1.2 kg is the
    14's). Read alone, the span is a copy of a context phrase and the model entails it (round 25: 17 of 18 such
    answers delivered)."""
    key = frozenset(basis.question_words) - _ASKING
    if not key:
        return ()
    out: list[str] = []
    for q in quantities(text, compound_words_only=True):
        unit = "$" if q.currency else q.unit
        if not unit:  # a bare number ("23:15", "9.3 and 18 kg") is held by every bare number around
            continue
        if q.value not in basis.numbers.values:  # worked out ("£22.40 altogether" for two fares): the number rule's
            continue

        def kin(k: Quantity) -> bool:  # of the answer's unit
            return ("$" if k.currency else k.unit) == unit

        def says(k: Quantity) -> bool:  # as said, converted ("2 hours" for "120 minutes") or about it ("about 15"),
            # its unit left out in the context ("from 310 pups to around 1,450"; an amount, not the "16" of a name)
            return (kin(k) or not (k.unit or k.currency) and "," in k.written) and (
                q.stands_for(k) or q.hedged and abs(q.value - k.value) <= 0.1 * abs(k.value)) or \
                conversion_of(q, [k]) is not None

        # a clause is about what its words name; where that leaves the clause that holds the answer's value level with
        # the best, its chunk's heading tells them apart: "The cycle takes about 15 minutes." under "Barista Solo 100
        # - Descaling." is the Solo's (r58: neighbouring products' values as short answers passed)
        plain = [(ws, sw, qs) for ws, sw, qs, _ in basis.titled_clause_quantities if any(kin(k) for k in qs)]
        verdict = _held_elsewhere(key, plain, says, kin)
        if verdict is None:
            titled = [(ws | heading, sw, qs) for ws, sw, qs, heading in basis.titled_clause_quantities
                      if any(kin(k) for k in qs)]
            verdict = _held_elsewhere(key, titled, says, kin)
        if verdict:
            out.append(q.phrase or q.written)
    return tuple(out)


def _held_elsewhere(key: frozenset[str], held: list[tuple[frozenset[str], frozenset[str], list[Quantity]]],
                    says: Callable[[Quantity], bool], kin: Callable[[Quantity], bool]) -> bool | None:
    """For :func:`answered_elsewhere`: whether the clauses most about the question (``key``) state another value of
    the answer's unit (``kin``) and none states the answer's (``says``); None when the clauses that hold the answer's
    value are as much about it as the best (another reading may tell them apart)."""
    # a question word in many of their subjects tells them apart less ("care" of "Primary care visit" and "Urgent
    # care" for "an urgent care visit"): a subject word counts twice, shared by n subjects 2/n
    spread = collections.Counter(w for _, sw, _ in held for w in key & sw)
    rows = [(2 * sum(1 / spread[w] for w in key & sw) + len(key & ws), qs, bool(key & sw)) for ws, sw, qs in held]
    best = max((o for o, _, _ in rows), default=0)
    if best < 2:
        return None  # (the headings may name what the clauses do not)
    # the clauses that hold the answer's own value must be clearly less about the question when the best ones
    # name none of its words in their subject: "6pm." to "What time does the Central Library close on Fridays?"
    # is held by the "Friday: 8:30am to 6pm" clause, scored one below the library's holiday sentence, which
    # names the library in passing (r44: faithful spans blocked on a margin of one word)
    own = max((o for o, qs, _ in rows if any(says(k) for k in qs)), default=0.0)
    if own >= best:
        return None
    if not any(named for o, _, named in rows if o == best) and best - own < ELSEWHERE_MARGIN:
        return False
    top = [k for o, qs, _ in rows if o == best for k in qs]
    return any(kin(k) and not says(k) for k in top)


#: a question that asks for a person ("Who chaired the committee?", "Whose design was chosen?")
_WHO = re.compile(r"(?i)^\W*(?:who|whom|whose)\b")
#: a name as a short answer: capitalised words, with the particles names hold ("Paula Greer", "Ludwig van Beethoven")
_NAME_ANSWER = re.compile(r"(?:(?:[A-Z][\w'’.-]*|of|the|de|van|von|der|da|di|le|la|al|bin|and|&)\s+){0,5}[A-Z][\w'’.-]*")
#: names in a context sentence: a capitalised word after its first, with the capitalised words around it
_NAME_IN = re.compile(r"(?<!^)(?<![.!?]\s)\b[A-Z][\w'’-]+(?:\s+(?:(?:van|von|de|der|da|di|le|la|al|bin)\s+)?[A-Z][\w'’-]+)*")
#: capitalised words that name no one
_NO_NAME = frozenset(content_stems("january february march april may june july august september october november "
                                   "december monday tuesday wednesday thursday friday saturday sunday i"))


#: the share of a who-question's words that the sentence most about it must hold for another name there to answer it
#: (HaluEval's two-hop questions: the answer's sentence holds fewer of them than the one about the first hop)
WHO_COVERED = 0.75


def named_elsewhere(text: str, basis: EvidenceBasis) -> tuple[str, ...]:
    """A name given as a short answer to a who-question ("Paula Greer." to "Who chaired the building committee?")
    that the contexts write only in sentences clearly less about the question (by ELSEWHERE_MARGIN of its words) than
    the one most about it, which names someone else ("Councillor Deirdre Okafor, who chaired the building committee,
    ..."): read alone, the span is a copy of a context name and the model entails it (r58: 17 of 37 answers that gave
    another entity's value or name were delivered)."""
    name = text.strip().rstrip(".!").strip()
    if not _WHO.match(basis.question) or _NAME_ANSWER.fullmatch(name) is None or any(c.isdigit() for c in name):
        return ()
    key = frozenset(basis.question_words) - _ASKING
    own = frozenset(content_stems(name)) - _NO_NAME
    if len(key) < 2 or not own or own & key:
        return ()
    index = basis.index
    rows = [(len(key & ws), ws, span.of(index.contexts[c]))
            for c, (spans, words) in enumerate(zip(index.sentences, index.sentence_words))
            for span, ws in zip(spans, words)]
    best = max((o for o, _, _ in rows), default=0)
    if best < max(2, WHO_COVERED * len(key)):
        return ()  # no sentence says what the question asks (a question over two facts: its answer's is less about it)
    held = max((o for o, ws, _ in rows if own <= ws), default=None)
    if held is None or best - held < ELSEWHERE_MARGIN:
        return ()  # a name the contexts lack is the term rule's; one in a sentence about the question is the model's
    # what the question asks the person did or is ("chaired", "the producer"): the sentence that names another must
    # say it (two-hop questions: the sentence most about their words describes the first hop, not the answer's role)
    asked = next((w for w in content_stems(_WHO.sub("", basis.question, count=1)) if w in key), None)
    for o, ws, sentence in rows:
        if o == best and asked in ws and any(frozenset(content_stems(m.group())) - key - _NO_NAME
                                             for m in _NAME_IN.finditer(sentence)):
            return (name,)
    return ()


#: a claim that its subject alone does or is something: "Only final-sale items cannot be returned."
_ONLY_SUBJECT = re.compile(r"(?i)^\W*(?:only|just)\s+(?P<subject>[^,;:]{2,60}?)\s+(?P<aux>can|cannot|can't|may|must|will|won't|"
                          r"are|is|aren't|isn't|do|does|don't|doesn't|have|has|get|gets|qualify|qualifies|include|"
                          r"includes|need|needs|require|requires)\b(?P<pred>[^;:]*)$")
_COORDINATED = re.compile(r"(?i)\b(?:and|or)\b|,")
_ALONE_SUBJECT = re.compile(r"(?i)^\W*(?P<subject>[^,;:]{2,60}?)\s+(?:alone|only)\s+(?P<rest>(?:can|cannot|can't|may|must|"
                            r"will|won't|are|is|aren't|isn't|do|does|don't|doesn't|have|has|get|gets|qualify|"
                            r"qualifies|include|includes|need|needs|require|requires)\b.*)$")
_THE_ONLY = re.compile(r"(?i)^\W*(?P<subject>[^,;:]{2,60}?)\s+(?:are|is)\s+the\s+only\s+(?:\w+\s+){0,3}?"
                       r"(?:that|which|who)\s+(?P<rest>.+)$")


def only_of_many(text: str, basis: EvidenceBasis) -> tuple[str, ...]:
    """("only",) for a claim that its subject alone does something ("Only final-sale items cannot be returned.") where
    a context sentence says it of the subject and others together ("Gift cards and final-sale items cannot be
    returned."): the model reads the copy as support (0.80 entailment, round 37)."""
    said = text.strip().rstrip(".!")
    m = _ONLY_SUBJECT.match(said)
    if m is None:  # "Final-sale items alone cannot ...", "Members only can ...", "X are the only items that cannot ..."
        other = _ALONE_SUBJECT.match(said) or _THE_ONLY.match(said)
        m = _ONLY_SUBJECT.match(f"only {other.group('subject')} {other.group('rest')}") if other else None
    if m is None:
        return ()
    subject = _loose(m.group("subject"))
    pred = _loose(m.group("aux") + m.group("pred")) - _AUXILIARIES
    negative = polar_negative(text)
    if not subject or not pred:
        return ()
    for row in basis.sentences_read:
        for r in row:
            # where the predicate starts: its first auxiliary or verb ("cannot" for "can't", "are" for "is")
            at = _PREDICATE_START.search(r.text)
            if at is None or polar_negative(r.text) != negative:
                continue
            head = r.text[: at.start()]
            others = _loose(head) - subject
            if _COORDINATED.search(head) and subject <= _loose(head) and others and \
                    pred <= _loose(r.text[at.start():]) - _AUXILIARIES:
                return ("only",)
    return ()


#: the auxiliaries and negations a predicate is compared without ("can't be returned" is "cannot be returned": the
#: polarity is compared apart)
_AUXILIARIES = frozenset("can cannot can't may must will won't are is aren't isn't do does don't doesn't not never no "
                         "be been".split())
_PREDICATE_START = re.compile(r"(?i)\b(?:can|cannot|can't|may|must|will|won't|are|is|aren't|isn't|do|does|don't|"
                              r"doesn't|have|has|get|gets|qualify|qualifies|include|includes|need|needs|require|"
                              r"requires)\b")


def _loose(text: str) -> frozenset[str]:
    """The content stems of ``text`` with its hyphenated words read apart ("final-sale" is "final sale")."""
    return frozenset(content_stems(text.replace("-", " ")))


#: a restriction to one thing done to the subject: "can only be exchanged", "are only refunded"
_ONLY = re.compile(r"(?i)\b(?:can|may|will|could|must)\s+only\s+be\s+(?P<verb>[a-z]{3,}(?:ed|en))\b|"
                   r"\b(?:is|are)\s+only\s+(?P<verb2>[a-z]{3,}(?:ed|en))\b")
#: what a claim says can be done to its subject: "can be returned", "are refunded"
_DONE_TO = re.compile(r"(?i)\b(?:can|may|will|could)\s+(?:also\s+)?be\s+(?P<verb>[a-z]{3,}(?:ed|en))\b|"
                      r"\b(?:is|are)\s+(?:also\s+)?(?P<verb2>[a-z]{3,}(?:ed|en))\b")


def restricted_otherwise(text: str, about: frozenset[str], basis: EvidenceBasis,
                         named: str | None = None) -> tuple[str, ...]:
    """The verb of a claim that the contexts restrict its subject from: a sentence about the subject says it "can
    only be exchanged" and the claim says it can be returned ("Sale items can be returned within 30 days for a full
    refund." beside "Sale items can only be exchanged for store credit.": the model entails it at 0.80 from the items
    sentence, and the sale items' sentence contradicts it at 0.83, under the 0.95 bar for another subject; round 25
    B8). Not for a claim that says "only" itself or is negative."""
    if not about or polar_negative(text) or re.search(r"(?i)\bonly\b", text):
        return ()
    m = _DONE_TO.search(text)
    if m is None:
        return ()
    verb = (m.group("verb") or m.group("verb2")).lower()
    named = claim_subject(text) if named is None else named
    subject = frozenset(_as_named(named or "", basis.index.vocabulary))
    allowed = {v for sw, v in basis.sentence_restrictions if sw == about or subject and sw == subject}
    return (verb,) if allowed and stem(verb) not in allowed else ()


#: a word negative by its prefix whose base the contexts may hold: "unused", "non-refundable", "unopened"
_PREFIXED = re.compile(r"(?:un|non-?)(?P<base>[a-z]{2,}(?:ed|en|able|ible|id|ful|ive|al|ent|ant|ing)|paid|known|seen|"
                       r"worn|sold|held|kept|told|done|read|met|set)")
#: "in"/"im"/"il"/"ir" words that are the negation of their base (most words starting so are not: "install")
_IN_NEGATED = frozenset("invalid ineligible inactive incomplete incorrect inaccessible insufficient inadequate "
                        "inapplicable incompatible indirect inedible inexpensive informal insecure impossible improper "
                        "imperfect impractical illegal illegible irregular irreversible irrevocable irrelevant "
                        "irreplaceable".split())


def prefix_antonyms(text: str, basis: EvidenceBasis) -> tuple[str, ...]:
    """Words of a claim whose negation by prefix the contexts hold instead, in sentences of the claim's own polarity:
    "Used items can be returned within 30 days." beside "You may return items within 30 days ... provided they are
    unused." (passed at 0.81), "Unopened software cannot be returned." beside "Opened software ... cannot be
    returned." (0.75). A claim of the other polarity says the same as the sentence ("Used items cannot be returned.")
    and is left to the model, as is a word the contexts also hold as written."""
    everywhere = basis.context_words_as_written
    out: list[str] = []
    for w, others in _antonyms_held(text, basis):
        if w in everywhere:
            continue
        # polarity apart from the word and its antonym ("ineligible" is a negation word of its own)
        negative_claim = polar_negative(_without(text, w))
        polarities = {polar_negative(_without(said, o)) for ws, said in basis.sentence_words_as_written
                      for o in others if o in ws}
        if polarities == {negative_claim}:
            out.append(w)
    return tuple(out)


def prefix_antonym_support(text: str, basis: EvidenceBasis) -> bool:
    """The claim says a context sentence with one of its words negated by a negation instead of a prefix: "Part-time
    employees are not eligible for the annual bonus." for "Part-time employees are ineligible for the annual bonus."
    (entailed at 0.15), "Used items cannot be returned." for "Unused items can be returned." Every other content word
    of the claim is the sentence's, and the two differ in polarity apart from that word."""
    negations = frozenset(content_stems(" ".join(NEGATIONS)))
    for w, others in _antonyms_held(text, basis):
        rest = frozenset(content_stems(_without(text, w))) - negations - {"it"}
        negative_claim = polar_negative(_without(text, w))
        for ws, said in basis.sentence_words_as_written:
            for o in (o for o in others if o in ws and w not in ws):
                if rest and rest <= frozenset(content_stems(_without(said, o))) and \
                        negative_claim != polar_negative(_without(said, o)):
                    return True
    # an opposite predicate (:data:`OPPOSITES`), clause by clause: "The store is not open on Sundays." for "The store
    # is closed on Sundays and public holidays."; not "E-bikes are allowed on the trail." for "Bicycles are not
    # prohibited on the trail, but e-bikes are."
    for w in {x.lower() for x in words(_OTHER_SENSE.sub(" ", text))} & _OPPOSITE.keys():
        mine, other = _OPPOSITE[w]
        own = _clause_of(text, w)
        rest = frozenset(content_stems(_without(own, w))) - negations - {"it"} - _UNIT_STEMS
        negative_claim = polar_negative(_without(own, w))
        if not rest:
            continue
        for chunk, spans in zip(basis.contexts, basis.index.sentences):
            for span in spans:
                for unit, preds in _predicate_units(span.of(chunk), mine | other):
                    if rest <= unit and not preds.keys() & mine and \
                            any(negative != negative_claim for o, negative in preds.items() if o in other):
                        return True
    return False


def _antonyms_held(text: str, basis: EvidenceBasis, lexical: bool = False) -> list[tuple[str, list[str]]]:
    """Each word of a claim (four letters or more) with its negations by prefix, or bases, that the contexts hold
    (``lexical``: and its opposites of :data:`OPPOSITES`)."""
    everywhere = basis.context_words_as_written
    out = []
    for w in dict.fromkeys(w.lower() for w in words(text)):
        if len(w) >= 4:
            others = [o for o in _antonyms(w) + (sorted(_OPPOSITE[w][1]) if lexical and w in _OPPOSITE else [])
                      if o in everywhere]
            if others:
                out.append((w, others))
    return out


#: predicates that say the opposite of each other, each side with its forms: "The store is open on Sundays." for "The
#: store is closed on Sundays." is entailed at 0.6-0.8 (the model reads the rest of the copy)
OPPOSITES = """
open opens opened opening | closed close closes closing
enabled enable enables enabling | disabled disable disables disabling
start starts started starting begin begins began beginning | end ends ended ending
arrive arrives arrived arriving | depart departs departed departing
raise raises raised raising | lower lowers lowered lowering
increase increases increased increasing | decrease decreases decreased decreasing reduce reduces reduced reducing
accept accepts accepted accepting | decline declines declined declining reject rejects rejected rejecting
allowed permitted | prohibited forbidden banned
include includes included including | exclude excludes excluded excluding
"""
#: a word of :data:`OPPOSITES` in another sense: "close to the station" (near), "the opening hours" (a name)
_OTHER_SENSE = re.compile(r"(?i)\bclose(?=\s+(?:to|by)\b|-)|\b(?:opening|closing)(?=\s+(?:hours|times?|date|day|"
                          r"ceremony|remarks|balance|statement))")
#: a clause that is an exception to the one before it: it says no predicate of its own ("..., except registered
#: assistance dogs")
_EXCEPTION_CLAUSE = re.compile(r"(?i)^\W*(?:except|excepting|apart\s+from|other\s+than|unless|save\s+for|excluding)\b")
#: each word of :data:`OPPOSITES`: (the words of its side, the words of the other side)
_OPPOSITE: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    w: (frozenset(mine.split()), frozenset(other.split()))
    for line in OPPOSITES.strip().splitlines() for a, b in [line.split("|")]
    for mine, other in ((a, b), (b, a)) for w in mine.split()}


def opposite_copy(text: str, basis: EvidenceBasis) -> tuple[str, ...]:
    """Predicates of a claim that a context clause says the opposite of about everything else the claim's clause
    says, while no clause says the claim's own predicate of it: "The store is open on Sundays." beside "The store is
    closed on Sundays and public holidays."; "Flights to Paris depart from Terminal 2." beside "Flights to Paris
    arrive at Terminal 2 and depart from Terminal 1."; "The summer sale ends on June 1." beside "... starts on June 1
    and ends on June 30." Read clause by clause (:func:`_predicate_units`). Short claims are no near copies for
    :func:`swapped_words`, and the model reads the rest of the copy as support."""
    claim = dict.fromkeys(w.lower() for w in words(_OTHER_SENSE.sub(" ", text)))
    negations = frozenset(content_stems(" ".join(NEGATIONS)))
    out: list[str] = []
    for w in (w for w in claim if w in _OPPOSITE):
        mine, other = _OPPOSITE[w]
        own = _clause_of(text, w)  # "Bicycles are allowed on the trail, but e-bikes aren't.": its first clause
        # (not its units: "an hour and a half" is the "90 minutes" of the clause that says it)
        rest = frozenset(content_stems(_without(own, w))) - negations - {"it"} - _UNIT_STEMS
        if len(rest) < 2:
            continue
        negative_claim = polar_negative(_without(own, w))
        copied = held = False
        for chunk, spans in zip(basis.contexts, basis.index.sentences):
            for span in spans:
                for unit, said in _predicate_units(span.of(chunk), mine | other):
                    if not rest <= unit:
                        continue
                    if said.keys() & mine:
                        held = True
                    elif any(negative == negative_claim for o, negative in said.items() if o in other):
                        copied = True
        if copied and not held:
            out.append(w)
    return tuple(out)


#: where a claim's or a context sentence's clauses part: a sentence's end inside it (a splitter may keep "1 p.m. It
#: is closed" together), a comma, a semicolon, a coordinating or contrasting conjunction
_UNIT_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z])|\s*(?:(?<!\d)[,;:]|[,;:](?!\d))\s*|"
                         r"\s+(?:and|but|while|whereas|whilst|or)\s+(?=\S)")


#: a contrast inside a sentence: its parts say different things ("not prohibited on the trail, but e-bikes are")
_CONTRAST_WORD = re.compile(r"(?i)\b(?:but|while|whereas|whilst|except|although|though|however|unless)\b")


def _clause_of(text: str, word: str) -> str:
    """The clause of ``text`` that holds ``word`` (the text when none is found)."""
    return next((c for c in _UNIT_BREAK.split(text) if word in {x.lower() for x in words(c)}), text)


def _predicate_units(sentence: str, predicates: frozenset[str]) -> list[tuple[frozenset[str], dict[str, bool]]]:
    """The clauses of a context sentence that say one of ``predicates`` of something: (their content stems with the
    sentence's subject, the predicates they say with the polarity each is said with). A clause that names no subject
    has the sentence's (the words before its first predicate: "and depart from Terminal 1" is the flights'); a clause
    with no predicate of its own says the last one before it ("open Monday to Friday ... and on Saturdays from 9 to
    1"); a sentence whose coordination is of nouns ("closed on Sundays and public holidays") is read whole too."""
    plain = _OTHER_SENSE.sub(" ", sentence)
    found = [m for m in re.finditer(r"[A-Za-z]+", plain) if m.group().lower() in predicates]
    if not found:
        return []
    named = claim_subject(sentence)  # its subject, not every word before its first predicate (a verb's object too)
    subject = frozenset(content_stems(named if named else sentence[: found[0].start()]))
    out: list[tuple[frozenset[str], dict[str, bool]]] = []
    last: dict[str, bool] = {}
    for clause in _UNIT_BREAK.split(plain):
        said = {x.lower() for x in words(clause)} & predicates
        if _EXCEPTION_CLAUSE.match(clause):
            last = {}  # an exception says the opposite of the rule before it, or nothing of its own
        elif said:
            last = {o: polar_negative(_without(clause, o)) for o in said}
        out.append((frozenset(content_stems(clause)) | subject, last))
    if len({m.group().lower() for m in found}) == 1 and not _CONTRAST_WORD.search(sentence) and all(
            len(words(c)) <= 3 for c in _UNIT_BREAK.split(plain) if not {x.lower() for x in words(c)} & predicates):
        o = found[0].group().lower()
        out.append((frozenset(content_stems(sentence)), {o: polar_negative(_without(sentence, o))}))
    return out


def _antonyms(word: str) -> list[str]:
    """The word negated by a prefix ("used" -> "unused", "non-refundable" ...), or its base when it is so negated."""
    out = [p + word for p in ("un", "non", "non-") if _PREFIXED.fullmatch(p + word)]
    out += [p + word for p in ("in", "im", "il", "ir") if p + word in _IN_NEGATED]
    m = _PREFIXED.fullmatch(word)
    if m is not None:
        out.append(m.group("base"))
    if word in _IN_NEGATED:
        out.append(word[2:])
    return out


def _without(text: str, word: str) -> str:
    return re.sub(rf"(?i)(?<![\w-]){re.escape(word)}(?![\w-])", "it", text)


#: contrast words a claim may use beside the context's others without a near copy: "Items must be unused." says what
#: "Items can be returned ... if unused." does (modal and quantifier words count only in a near copy)
_LOOSE = frozenset("may can might could must shall usually typically generally often normally mostly sometimes "
                   "occasionally always invariably some several many most certain all every each".split())


#: a contrast word that begins place names ("New York", "New Zealand"): there it is no adjective
_NAME_PART = re.compile(r"\bNew(?=\s+[A-Z])")


def _in_names_only(text: str) -> frozenset[str]:
    """Contrast words a sentence holds only as part of a name ("new" in "... in New York City": the Brooklyn Bridge
    "opened" is no contrast with it)."""
    if _NAME_PART.search(text) and not re.search(r"(?i)\bnew\b", _NAME_PART.sub("", text)):
        return frozenset({"new"})
    return frozenset()


def other_words(text: str, about: frozenset[str], basis: EvidenceBasis, named: str | None = None) -> tuple[str, ...]:
    """Words of a claim that the sentences whose subject is the claim's say otherwise: one of them holds a word in
    contrast (:data:`CONTRASTS`) and none holds the claim's ("The AeroBook 16 has an OLED display." where the 16's
    sentence says LCD and OLED is the 14's; "Economy passengers must check one bag" where theirs says "may"). The
    words are in the contexts, said of something else or otherwise: the model reads the claim as entailed by the
    sibling's sentence."""
    if not about or polar_negative(text):
        return ()
    named = (claim_subject(text) if named is None else named) or ""
    own_words = frozenset(words(named))  # what the claim says of its subject ("standard" in "Standard shipping" is not)
    said = [w for w in words(text) if w in _CONTRAST and w not in _LOOSE and w not in own_words]
    if not said:
        return ()
    subject = frozenset(_as_named(named, basis.index.vocabulary))  # not its other names ("OLED")
    # what those sentences say of it, their subject's own words included ("Secondary caregiver leave may be taken in
    # up to three separate blocks; primary caregiver leave must ...": "secondary" is held, "primary" no contrast)
    own = [(ws | sw, negative) for sw, ws, negative in basis.sentence_claims if sw == about or subject and sw == subject]
    if not own:
        return ()
    held = frozenset().union(*(ws for ws, _ in own))
    # a word in contrast that a negated sentence holds says nothing against the claim's ("Rollover is not available on
    # Basic or Unlimited plans." beside "Rollover is only available on the Standard and Plus plans.")
    places = {p for ws, negative in own if not negative for h in ws for p in _CONTRAST.get(h, [])}
    # neither the word nor a synonym of it ("receipt" for "delivery") is said of the subject, and a contrast is
    return tuple(w for w in said if w not in held and not set(_CONTRAST[w]) & places and any(
        o[0] == m[0] and o[1] != m[1] for o in places for m in _CONTRAST[w]))


def _first_single(refs: Refs, index: ContextIndex) -> int | None:
    """The position in ``refs`` of the best-ranked premise that is one context sentence (None: none was read)."""
    for k, (_, premise) in enumerate(refs):
        if premise.span in index.sentences[premise.chunk]:
            return k
    return None


#: the contradiction at which a statement judged only for contradiction (``ResponseItem.veto``) fails: as high as the
#: subject-conflict cap, since the model reads a comparison a reason supports ("You cannot take 20 credits." after
#: "Students may take up to 18 credits.") as contradicted at 0.6-0.9 (round 14: 7 faithful replies of 22 blocked at
#: 0.5, 1 at 0.95)
VETO_CONTRADICTION = 0.95
#: the entailment at which the statement a "No, <statement>." denies (``ResponseItem.affirms``) fails the answer: the
#: contexts say yes outright. The model entails a yes from a sentence that shares its words at 0.86-0.87 ("You need to
#: take amoxicillin with food." from "they can be taken with or without food": 2 faithful answers of 273 blocked at
#: 0.85 on a blind set, none at 0.9)
AFFIRMED_ENTAILMENT = 0.9
#: a premise that negates or excepts something: the model may read what it denies as affirmed
_NEGATED_PREMISE = re.compile(r"(?i)\b(?:not|no|never|none|nothing|cannot|nor|neither|without|except|unless|excludes?|"
                              r"excluded|only)\b|n't\b")
#: the contradiction, at any premise read, that fails what a hedged reply leans to (``ResponseItem.lean``): "Possibly."
#: to "Can I return a gift card?" beside "Gift cards cannot be returned." reads "You can return a gift card." as
#: contradicted at 0.73 only (round 36). Only a yes is read so: the model reads negative statements as contradicted by
#: premises about something else ("You cannot pay by check." at 0.95 and more beside a store's payment terms; "You do
#: not qualify for parental leave." for "Not yet."): a hedged no, and the question's statement beside a "No,
#: <statement>.", fail only at their best premise (VETO_CONTRADICTION)
LEAN_CONTRADICTION = 0.7
#: the contradiction at which the sentence that names a claim's subject, read alone, denies a claim whose best premise
#: only lent it its polarity (:func:`~guardrail.checks.pairing.borrowed_polarity`): the model's ordinary bar (a
#: contradiction read as such: the calibration's ``contradiction_cap``), not the 0.95 a sentence about another subject
#: needs (``FaithfulnessConfig.subject_conflict``)
BORROWED_DENIAL = 0.5
#: how far below the threshold a sentence that a rule fails scores at most: ``threshold * RULE_CAP * entailment``. The
#: rules: a number no context holds (a soft calibration feature let "Refunds are issued within 5-7 business days.",
#: 7 in no passage, pass at 0.49 beside the 5 it copies: round 23 B2), and a clause that denies the claim in its own
#: words (:func:`~guardrail.checks.pairing.denying_clause`: round 23 B3)
RULE_CAP = 0.9


def sentence_evidence(number: int, item: ResponseItem, refs: Refs, pairs: PairScores, basis: EvidenceBasis,
                      about: frozenset[str] | None = None) -> SentenceEvidence:
    """The evidence of one item, sentence ``number``, from the model's reading of the premises it read (``refs``);
    ``about``: the words of its subject and names (:func:`claim_words`, computed here when not given)."""
    # what the grounding signals read: the sentence, or for a short answer the statement it makes
    text = item.hypothesis if item.claim else item.text
    # the names and figures of what the model reads: a rewrite of the sentence ("3 months" read as the contexts' "90
    # days", a parenthesised conversion dropped) carries its own; a "Q: ... A: ..." reading carries the question's
    terms = unsupported_terms(without_frame(text), basis.vocab)  # "TL;DR: ..." names no "DR"
    if terms and not item.claim and item.hypothesis != text and not item.hypothesis.startswith(QA_PREFIX):
        # what the model reads is a rewrite: a term it no longer holds ("3 months" read as the contexts' "90 days", a
        # parenthesised conversion dropped) is not the answer's; one a rewrite brings in (a pronoun read as a name of
        # the question's) is not the answer's either
        kept = frozenset(unsupported_terms(without_frame(item.hypothesis), basis.vocab))
        terms = tuple(t for t in terms if t in kept)
    if not item.check:
        return SentenceEvidence(number, item.text, item.span.start, item.span.end, item.hypothesis,
                                None, None, None, None, None, None, None, None, terms, 0, None)
    about = subject_core(text, claim_words(text), basis.index) if about is None else about
    subject = claim_subject(text)  # as written (the rules below compare it with the contexts' subjects)
    numbers = basis.numbers.unsupported(text) if _HAS_NUMBER.search(text) else ()
    if not numbers and _HAS_NUMBER.search(text):
        numbers = other_values(text, about, basis, subject) or bound_elsewhere(text, about, basis) or \
            misplaced_values(text, basis)
    if not numbers and item.answers and _HAS_NUMBER.search(text):
        numbers = answered_elsewhere(text, basis)
    if not numbers and item.answers:
        numbers = named_elsewhere(text, basis)
    if not numbers and " than " in text:
        numbers = reversed_comparison(text, basis)
    if item.restates:  # the question's own words given back as its answer
        numbers = (*numbers, item.text.strip().rstrip(".!"))
    if terms and not numbers and _HAS_NUMBER.search(text):
        # a figure the number rule read as worked out from the figures the answer quoted ("That makes £550 in total."
        # after the £250 and £300 it quoted) is no term the contexts lack
        worked = basis.numbers.worked_out(text)
        values = {float(w) for w in worked if _FIGURE_TERM.fullmatch(w)}  # "22.4" is the "£22.40" worked out
        terms = tuple(t for t in terms if not (_FIGURE_TERM.fullmatch(t) and float(t.replace(",", "")) in values))
    terms = tuple(dict.fromkeys([*terms, *(n for n in numbers if n.replace(",", "").lstrip("$€£").rstrip("%")
                                           not in terms)]))
    if not refs:  # no context at all: nothing can support the sentence
        return SentenceEvidence(number, item.text, item.span.start, item.span.end, item.hypothesis,
                                0.0, 0.0, None, None, None, None, 0.0, 0.0, terms, 0, False)
    ent = np.array([pairs.entailment[pid] for pid, _ in refs])
    con = np.array([pairs.contradiction[pid] for pid, _ in refs])
    best = int(ent.argmax())
    premise = refs[best][1]
    hyp_words = content_stems(text)
    entailment = float(ent[best])
    contradiction = None if np.isnan(con[best]) else float(con[best])
    cov = coverage(hyp_words, frozenset(content_stems(premise.text)))
    ctx_cov = coverage(hyp_words, basis.index.vocabulary)
    score = basis.score(entailment, contradiction, cov, ctx_cov, terms, text)
    top_ent = top_con = None
    single = _first_single(refs, basis.index) if basis.reads_singles else None
    if single is not None and not np.isnan(con[single]):  # shown, not capped on: measured, CLIFF 0.780 -> 0.676 (v3.4)
        top_ent, top_con = float(ent[single]), float(con[single])
    conflict, against = _subject_conflict(about, premise, refs, con)
    bar = basis.subject_conflict  # how sure a denial of the subject must be to cap the sentence
    if against is not None and bar is not None and _says_opposite(against, basis.index, about, negative(text)):
        # the sentence that names the subject, alone, says the opposite polarity of the claim ("Gift cards cannot be
        # returned." against "Gift cards can be returned within 30 days.", whose best support is about items): it
        # denies at the ordinary bar, as when a window only lent the polarity
        bar = BORROWED_DENIAL
    inside, denier = _denied_inside(borrowed_polarity(premise, basis.index, text, about), premise, refs, ent, con)
    if inside is not None and bar is not None and (conflict is None or inside > conflict or inside >= BORROWED_DENIAL):
        # the subject's own sentence says the opposite and the best premise only lent the polarity: that sentence
        # decides at the ordinary contradiction bar ("Yes." to "Can I return a gift card?" against "Items can be
        # returned ... Gift cards cannot be returned.": 0.90, under the 0.95 a sentence about another subject needs)
        conflict, against, bar = inside, denier, BORROWED_DENIAL
    if conflict is not None and bar is not None and conflict >= bar and conflict > entailment:
        score = min(score, entailment * (1.0 - conflict))
    if item.veto and item.affirms:
        # the statement a "No, <its own statement>." denies: the no is wrong where the contexts entail it outright
        # ("No, most ascents take five to nine days." to "Do climbers need a licensed guide?" beside "Climbers must be
        # accompanied by a licensed guide.": the yes is entailed at 0.9 and more)
        # (not from a premise with a negation in it: the model reads "compatible with standard faucets but not with
        # pull-out faucets" as saying "It works with pull-out faucets." at 0.9)
        affirmed = entailment >= AFFIRMED_ENTAILMENT and entailment > (contradiction or 0.0) and \
            not _NEGATED_PREMISE.search(premise.text)
        score = min(score, basis.threshold * RULE_CAP * (1.0 - entailment)) if affirmed else max(score, basis.threshold)
        numbers = ()
    elif item.veto:
        denied = (contradiction is not None and contradiction >= VETO_CONTRADICTION and contradiction > entailment) or (
            conflict is not None and bar is not None and conflict >= bar and conflict > entailment)
        if item.lean > 0 and not denied:
            # a statement the answer only leans to ("Possibly.", "No, <its own statement>."): any premise read that
            # denies it outright fails it (its best-entailed premise may be about something else, round 36)
            against_k = [k for k in range(len(refs)) if not np.isnan(con[k]) and con[k] >= item.lean and
                         con[k] > ent[k]]
            if against_k:
                denied, contradiction = True, float(max(con[k] for k in against_k))
        score = min(score, entailment * (1.0 - max(contradiction or 0.0, conflict or 0.0))) if denied \
            else max(score, basis.threshold)
        if not item.rules:
            numbers = ()  # judged for contradiction only: the rules on its words are the claim's, not the lean's
    if score < basis.threshold and not numbers and " than " in text and contradiction is not None and \
            contradiction < VETO_CONTRADICTION and comparison_holds(text, basis):
        score = basis.threshold  # the contexts' values bear the comparison out
    if score < basis.threshold and not numbers and prefix_antonym_support(text, basis):
        # "Part-time employees are not eligible for ..." for "Part-time employees are ineligible for ...": the words
        # settle what the model misses (entailment 0.15)
        score = basis.threshold
    named = about or label_subject(text)  # "Nova 8: wireless charging." (a table row) is about its label
    if score < basis.threshold and not numbers and basis.exclusives and \
            exclusive_support(text, named, basis.index, basis.exclusives) is not None:
        # "The Nova 8 does not support wireless charging." beside "only the Pro supports wireless charging": the
        # words settle what the model misses (entailment 0.09)
        score = basis.threshold
    if numbers:  # a number no passage holds: the sentence fails whatever the model reads
        score = min(score, basis.threshold * RULE_CAP * entailment)
    ruled = item.rules
    denial = ((denying_clause(text, about, basis.index) if about else None) or
              (exclusive_clause(text, named, basis.index, basis.exclusives) if basis.exclusives else None) or
              denied_member(text, basis.denied_lists)) if ruled else None
    swapped = (swapped_words(text, basis.index, lambda: basis.sentence_subjects) or other_words(
        text, about, basis, subject) or restricted_otherwise(text, about, basis, subject) or
        prefix_antonyms(text, basis) or opposite_copy(text, basis) or only_of_many(text, basis)) if ruled else ()
    if ruled and not swapped and text != item.text:  # as written: "Fabrikam ... announced that it will acquire ..."
        swapped = swapped_words(item.text, basis.index, lambda: basis.sentence_subjects)
    if swapped:  # a near copy of a context sentence with a word of its own swapped in
        score = min(score, basis.threshold * RULE_CAP * entailment)
        terms = tuple(dict.fromkeys([*terms, *swapped]))
    if denial is not None:  # the subject's own clause says the opposite of what the claim repeats of it
        score = min(score, basis.threshold * RULE_CAP * entailment)
    denied_words = basis.denied_words
    over = overstated(text, lambda: basis.clauses, basis.index, basis.context_words_as_written,
                      Denials(about, denied_words, basis.context_names) if denied_words else None,
                      basis.number_bounds if _HAS_NUMBER.search(text) else None) \
        if ruled and score >= basis.threshold * RULE_CAP * entailment else ()
    if over:  # a hedge made certain, a part made whole, a plan told as done
        score = min(score, basis.threshold * RULE_CAP * entailment)
    verbatim, source = _copy_of(item, text, refs, basis.copies)
    if verbatim:
        score = 1.0
        if source is not None:  # the evidence is the copied sentence itself, not what the model happened to entail most
            premise = source
    shown, role, shown_con = premise, "supports", contradiction
    if score < basis.threshold:
        shown, role, shown_con = _unsupported_evidence(refs, ent, con)
        if against is not None and conflict is not None and bar is not None and conflict >= bar:
            shown, role, shown_con = against, "contradicts", conflict
        elif denial is not None:
            shown, role, shown_con = denial, "contradicts", None
    sent_span = basis.index.best_sentence(shown, content_stems(item.hypothesis), basis.question_words)
    return SentenceEvidence(
        index=number,
        text=item.text,
        start=item.span.start,
        end=item.span.end,
        hypothesis=item.hypothesis,
        score=score,
        entailment=entailment,
        contradiction=contradiction,
        max_contradiction=None if np.isnan(con).all() else float(np.nanmax(con)),
        premise=ContextRef(premise.chunk, premise.span.start, premise.span.end, premise.text),
        sentence=ContextRef(shown.chunk, sent_span.start, sent_span.end, sent_span.of(basis.contexts[shown.chunk])),
        coverage=cov,
        context_coverage=ctx_cov,
        unsupported_terms=terms,
        premises_checked=len(refs),
        supported=score >= basis.threshold,
        verbatim=verbatim,
        sentence_role=role,
        sentence_contradiction=shown_con,
        top_sentence_entailment=top_ent,
        top_sentence_contradiction=top_con,
        subject=subject,
        subject_conflict=conflict,
        conflict_bar=bar if conflict is not None else None,
        unsupported_numbers=numbers,
        denied_by=None if denial is None else ContextRef(denial.chunk, denial.span.start, denial.span.end, denial.text),
        swapped_words=swapped,
        overstated=tuple(str(o) for o in over),
    )


def claim_words(text: str) -> frozenset[str]:
    """The words that say what a claim is about: its subject's content words and the names it mentions."""
    subject = claim_subject(text)
    return frozenset(content_stems(" ".join([subject or "", *claim_names(without_frame(text))])))


def _as_named(phrase: str, vocab: frozenset[str]) -> list[str]:
    """The content stems of ``phrase`` with hyphenated words split and a closed compound split where the contexts
    (``vocab``) write it as two words ("Giftcards" -> gift, card)."""
    stems: list[str] = []
    for w in [p for w in content_stems(phrase) for p in ([w] if "-" not in w or w in vocab else
                                                          content_stems(w.replace("-", " ")))]:
        if w not in vocab and len(w) >= 6:
            split = next(((w[:i], stem(w[i:])) for i in range(3, len(w) - 2)
                          if w[:i] in vocab and stem(w[i:]) in vocab), None)
            if split is not None:  # "giftcard" where the contexts say "gift card"
                stems.extend(split)
                continue
        stems.append(w)
    return stems


def subject_core(text: str, about: frozenset[str], index: ContextIndex) -> frozenset[str]:
    """The words of a claim's subject as the contexts name it (:func:`claim_words` otherwise): hyphenated words split
    ("Gift-cards", "E-gift cards"), a closed compound split where the contexts write it as two words ("Giftcards"),
    and when no context sentence names the subject whole, its modifiers dropped from the left until one does
    ("Unused gift cards", "Physical gift cards", "Even gift cards" -> "gift cards"). A context sentence about gift
    cards says what holds of every kind of gift card: "Gift cards cannot be returned." denies "Unused gift cards can
    be returned within 30 days.", which read with all its words found no sentence naming its subject and so no
    conflict (round 23 B3). A subject no context names (a person: "You can return gift cards ...", "We accept ...")
    gives way to the claim's object."""
    subject = claim_subject(text)
    vocab = index.vocabulary
    stems = _as_named(subject or "", vocab)
    if not set(stems) & vocab:
        # "You can return gift cards ...", "Customers may return gift cards ..." (no context names customers): the
        # claim is about what it says they can do it with
        obj = re.sub(r"(?i)^(?:of|for|to|with|on|about)\s+", "", claim_object(text) or "")
        if not set(_as_named(obj, vocab)) & vocab:
            return about
        subject, stems = obj, _as_named(obj, vocab)
        about = about | frozenset(stems)
    names = about - frozenset(content_stems(subject or ""))
    whole = frozenset(stems) | names

    def named(ws: frozenset[str]) -> bool:
        return any(ws <= sw for chunk in index.sentence_words for sw in chunk)

    if not stems or named(frozenset(stems)):  # the subject as written (its names aside: they need not be beside it)
        return whole
    for k in range(1, len(stems)):
        if named(frozenset(stems[k:])):
            return frozenset(stems[k:]) | names
    return whole


#: the fewest words a claim shares in order with a context sentence for a swapped word in it to count (a near copy)
SWAP_MIN_SHARED = 6
#: sets of words that stand in contrast: within a set, each "|" part is one meaning (its words are synonyms), and a
#: word of one part put in the place of a word of another changes what is said ("full" / "partial", "delivery" /
#: "purchase", "LCD" / "OLED"). Synonyms ("receipt" for "delivery", "compulsory" for "mandatory") are no contrast.
CONTRASTS = """
full, complete, entire | partial
used, opened, worn, damaged | unused, unopened, new, unworn, undamaged
refundable, returnable, exchangeable | nonrefundable, non-refundable, nonreturnable, non-returnable
free, complimentary, included, waived | paid, extra, additional, charged, chargeable
optional, voluntary, elective | mandatory, required, compulsory, obligatory
minimum, min, lowest, least | maximum, max, highest, most
before, prior, preceding | after, following
earlier, sooner | later
first, earliest | last, latest, final
daily | weekly | monthly | quarterly | annual, annually, yearly
hourly | daily
purchase, order, buying, checkout | delivery, receipt, arrival, shipment, dispatch
online, website, app | store, in-store, branch, counter
domestic, national | international, foreign, overseas
digital, electronic, virtual | physical, plastic, printed
economy, coach | business | premium
basic | standard | premium, plus | pro, professional | enterprise, business
lcd | oled, amoled | led
wired | wireless, bluetooth
manual, manually | automatic, automatically
temporary, provisional | permanent
public | private
internal | external
increase, increases, increased, rise, rises, rose, raise, raised, higher, more, greater | decrease, decreases, decreased, reduce, reduces, reduced, reduction, fall, falls, fell, drop, drops, dropped, lower, less, fewer
allowed, permitted, accepted, eligible | prohibited, forbidden, banned, excluded, ineligible, rejected
adult, adults | child, children, kid, kids, minor, minors, infant, infants
weekday, weekdays | weekend, weekends
morning | afternoon | evening | night, overnight
male, men, man | female, women, woman
mild | moderate | severe
north, northern | south, southern | east, eastern | west, western
monday | tuesday | wednesday | thursday | friday | saturday | sunday
january | february | march | april | may | june | july | august | september | october | november | december
tablet, tablets, pill, pills | capsule, capsules | injection, injections
cash | card, cards, credit | cheque, check
fixed | variable
secured | unsecured
lifetime | limited
may, can, might, could | must, shall
usually, typically, generally, often, normally, mostly, sometimes, occasionally | always, invariably
some, several, many, most, certain | all, every, each
primary | secondary
profit, profits, gain, gains, surplus | loss, losses, deficit
income, revenue, revenues | expense, expenses, cost, costs
cash | stock, shares, equity
buyer, buyers, purchaser, acquirer | seller, sellers, vendor, target
employer, employers | employee, employees, staff
employee, employees, staff | contractor, contractors, freelancer, freelancers
lender, lenders | borrower, borrowers
landlord, landlords | tenant, tenants
incoming, inbound, import, imports | outgoing, outbound, export, exports
upload, uploads | download, downloads
input, inputs | output, outputs
full | half, partial
usb-c | usb-a | micro-usb | lightning
left | right
upper | lower
"""
#: each word's places in :data:`CONTRASTS`: (set, part) for every set it is in ("may" the modal, "May" the month)
_CONTRAST: dict[str, list[tuple[int, int]]] = {}
for _set, _line in enumerate(line for line in CONTRASTS.strip().splitlines() if line.strip()):
    for _part, _words in enumerate(_line.split("|")):
        for _w in _words.split(","):
            _CONTRAST.setdefault(_w.strip().lower(), []).append((_set, _part))
#: words that say a claim holds without exception, and the hedges they override ("The battery *always* lasts 18
#: hours." inserted in a copy of "The battery *usually* lasts 18 hours" or "lasts *up to* 18 hours")
_FREQUENCY_HEDGES = frozenset("usually typically generally often normally mostly sometimes occasionally may might".split())
_ABSOLUTE: dict[str, frozenset[str]] = {
    "always": _FREQUENCY_HEDGES, "never": _FREQUENCY_HEDGES, "invariably": _FREQUENCY_HEDGES,
    "guaranteed": _FREQUENCY_HEDGES, "guarantees": _FREQUENCY_HEDGES,
    "exactly": frozenset("up about approximately around roughly nearly almost".split()),
    "all": frozenset("some most many certain several".split()), "every": frozenset("some most many certain several".split()),
}


_NEGATORS = frozenset("not no never cannot can't won't isn't aren't doesn't don't didn't nor neither none".split())


def _contrasted(replaced: list[str], put: list[str]) -> list[str]:
    """The words of ``put`` that stand in contrast with a word of ``replaced`` (:data:`CONTRASTS`)."""
    out = []
    for w in put:
        mine = _CONTRAST.get(w, [])
        if any(o[0] == m[0] and o[1] != m[1] for r in replaced for o in _CONTRAST.get(r, []) for m in mine) and \
                w not in replaced:
            out.append(w)
    return out


@dataclass(frozen=True, slots=True)
class SentenceRead:
    """A context sentence as the rules read it: its text, its subject as written (``named``), and that subject's
    stems as the contexts name it (``subject``, :func:`_as_named`) and its words (``subject_words``). A sentence whose
    subject is a pronoun has the subject named before it ("The AeroBook 14 has ... It weighs 1.2 kg.": the 14's)."""

    text: str
    named: str
    subject: frozenset[str]
    subject_words: frozenset[str]


#: a labelled row: "Urgent care: $75 copay." (a label of a few words, then what it has)
_LABEL_SENTENCE = re.compile(r"\s*([A-Z][^:.!?;,]{0,40}?):\s+(?=\S)")
#: labels that name no subject: "Note: ...", "Important: ..."
_NOT_LABELS = frozenset("note notes important tip tips warning caution example examples update summary answer q a "
                        "nb ps please remember reminder".split())


def read_sentences(index: ContextIndex) -> list[list[SentenceRead]]:
    """Per chunk, per sentence: :class:`SentenceRead`."""
    out: list[list[SentenceRead]] = []
    for c, spans in enumerate(index.sentences):
        row: list[SentenceRead] = []
        last: SentenceRead | None = None
        for span in spans:
            said = span.of(index.contexts[c])
            named = claim_subject(said) or ""
            label = _LABEL_SENTENCE.match(said)
            if label and label.group(1).startswith(named) and not label.group(1).lower() in _NOT_LABELS:
                named = label.group(1)  # "Urgent care: $75 copay.", "Primary care visit: $30 copay." (a row of a list)
            read = SentenceRead(said, named, frozenset(_as_named(named, index.vocabulary)), frozenset(words(named)))
            lead = PARTICIPLE_LEAD.match(said)
            if not read.subject and last is not None and _PRONOUN_SUBJECT.match(said[lead.end():] if lead else said):
                read = dataclasses.replace(read, subject=last.subject, subject_words=last.subject_words)
            if read.subject:
                last = read
            row.append(read)
        out.append(row)
    return out


def _transposed(source: list[str], claim: list[str], ops: Sequence[tuple[str, int, int, int, int]]) -> list[str]:
    """The words of two places a claim exchanges in its copy of ``source`` ("Fabrikam ... will acquire Northwind"
    for "Northwind ... will acquire Fabrikam"; "5% ... and 8%" for "8% ... and 5%"): roles or values swapped."""
    out: list[str] = []
    replaced = [op for op in ops if op[0] == "replace"]
    for a, b in itertools.combinations(replaced, 2):
        if claim[a[3]:a[4]] == source[b[1]:b[2]] and claim[b[3]:b[4]] == source[a[1]:a[2]] and \
                claim[a[3]:a[4]] != claim[b[3]:b[4]] and not (_verb_at(claim, a[3]) and _verb_at(claim, b[3])):
            out += [w for w in claim[a[3]:a[4]] + claim[b[3]:b[4]] if w not in out]
    return out


#: words after which the next is a verb ("scheduled to begin", "will start")
_BEFORE_VERB = frozenset("to will would can could may might must shall should do does did".split())


def _verb_at(claim: list[str], i: int) -> bool:
    """The claim's word ``i`` is a verb by its place: two verbs exchanged between two clauses ("Construction is
    scheduled to *start* ..., service is expected to *begin* ..." for "... to begin ..., ... to start ...") name the
    same event however they are paired, where exchanged names, roles or values do not."""
    return i > 0 and claim[i - 1] in _BEFORE_VERB


def _moved_to(source: list[str], claim: list[str], ops: Sequence[tuple[str, int, int, int, int]],
              own: frozenset[str], others: Sequence[frozenset[str]]) -> list[str]:
    """The words of another context subject of the same kind a claim puts in place of its copy's subject's ("The
    AeroBook *16* has a 14-inch OLED display ..." copying the 14's sentence; "The *Everyday Checking* account pays 4.1%
    APY" copying the savings account's): the fact moved to a sibling, which shares a word of the copied subject
    ("AeroBook", "account"); "Tickets can be changed ..." for "Flights can be changed ..." beside "Basic Economy
    tickets cannot ..." names no sibling of flights. Also "All" or "every" in place of the subject's qualifier ("All
    passengers may check ..." copying "Economy passengers may check ..."). ``own``: the copied sentence's subject
    words; ``others``: the other sentences' subjects."""
    out: list[str] = []
    kind = own - _DETERMINER_WORDS
    for tag, i1, i2, j1, j2 in ops:
        if tag != "replace":
            continue
        old, new = set(source[i1:i2]), claim[j1:j2]
        if not new or not old <= own:
            continue
        if new in (["all"], ["every"], ["any"]) and old - _DETERMINER_WORDS:
            out += [w for w in new if w not in out]
            continue
        if any(set(new) <= sw and not set(new) & own and (sw - set(new) - _DETERMINER_WORDS) & kind for sw in others):
            out += [w for w in new if w not in out]
    return out


_DETERMINER_WORDS = frozenset("the a an this that these those our your their its".split())


def _overrides(source: list[str], claim: list[str], ops: Sequence[tuple[str, int, int, int, int]]) -> list[str]:
    """Absolute words ("always", "exactly", "all") a claim inserts in a copy of a sentence that hedges: the copy says
    more than the sentence."""
    said = set(source)
    return [w for tag, i1, i2, j1, j2 in ops if tag in ("insert", "replace") for w in claim[j1:j2]
            if w in _ABSOLUTE and w not in said and _ABSOLUTE[w] & said]


def swapped_words(text: str, index: ContextIndex,
                  subjects_of: Callable[[], list[list[frozenset[str]]]] | None = None) -> tuple[str, ...]:
    """Words a near copy of a context sentence puts in place of the sentence's own where they say something else: "Items
    can be returned within 30 days of delivery for a *partial* refund if unused." copies the items sentence but for
    "partial" in the place of "full"; "within 30 days of *purchase*" for "of delivery"; "even if *used*" for "if
    unused". The model reads such a copy as entailed (0.53-0.92).

    A near copy: every word of the claim but at most two substitutions and two additions of at most two words each is
    the sentence's in its order (words the sentence has and the claim drops do not count: a copy may say less), at
    least :data:`SWAP_MIN_SHARED` of them and four in five of the claim's. A substitution counts when the two words
    stand in contrast (:data:`CONTRASTS`: "full" / "partial", "economy" / "business", "LCD" / "OLED"), not when they
    are synonyms ("receipt" for "delivery", "staff" for "employees": measured in round 24, a rule on any word no
    context holds blocked 20 of 181 faithful paraphrases). A claim that is a near copy of some sentence with no
    contrast (the context says it that way too) has none."""
    claim = words(text)
    if len(claim) < SWAP_MIN_SHARED:
        return ()
    stems = frozenset(content_stems(text))
    out: list[str] = []
    subjects: list[list[frozenset[str]]] | None = None
    flat: list[frozenset[str]] | None = None
    at: dict[tuple[int, int], int] = {}
    for c, (spans, wss) in enumerate(zip(index.sentences, index.sentence_words)):
        for k, (span, ws) in enumerate(zip(spans, wss)):
            if len(stems & ws) < max(3, (len(stems) * 3) // 5):
                continue
            source = words(span.of(index.contexts[c]))
            ops = [op for op in difflib.SequenceMatcher(None, source, claim, autojunk=False).get_opcodes()
                   if op[0] != "equal"]
            if any(tag in ("delete", "replace") and _NEGATORS & set(source[i1:i2]) for tag, i1, i2, _, _ in ops):
                # the claim drops the sentence's "not" (or puts a word in its place: "Rollover is *only* available
                # on the Standard and Plus plans." beside "Rollover is *not* available on Basic or Unlimited plans."):
                # it says the opposite polarity, no near copy
                continue
            changed = [op for op in ops if op[0] != "delete"]  # words the claim drops: it says less
            moved = _transposed(source, claim, changed)
            # exchanged words are the sentence's own: they count as copied
            shared = len(claim) - sum(j2 - j1 for _, _, _, j1, j2 in changed) + sum(1 for _ in moved)
            if len(changed) > 4 or shared < SWAP_MIN_SHARED or shared * 5 < len(claim) * 4 or \
                    any(j2 - j1 > 3 or (tag == "replace" and i2 - i1 > 3) for tag, i1, i2, j1, j2 in changed) or \
                    not moved and any(j2 - j1 > 2 or (tag == "replace" and i2 - i1 > 2)
                                      for tag, i1, i2, j1, j2 in changed):
                continue
            if subjects is None:
                subjects = subjects_of() if subjects_of is not None else [
                    [r.subject_words for r in row] for row in read_sentences(index)]
            own = subjects[c][k]
            if flat is None:  # every sentence's subject, once (not per near copy: round 57)
                flat, at = [], {}
                for cc, ss in enumerate(subjects):
                    for kk, sw in enumerate(ss):
                        if sw:
                            at[(cc, kk)] = len(flat)
                            flat.append(sw)
            pos = at.get((c, k))
            others = flat if pos is None else flat[:pos] + flat[pos + 1:]
            contrast = [w for tag, i1, i2, j1, j2 in changed if tag == "replace"
                        for w in _contrasted(source[i1:i2], claim[j1:j2])]
            contrast += [w for w in moved + _moved_to(source, claim, changed, own, others) + _overrides(
                source, claim, changed) if w not in contrast]
            if not contrast:
                return ()  # a near copy of this sentence that says what it says
            out += [w for w in contrast if w not in out]
    return tuple(out)


def names_subject(subject_words: frozenset[str], premise: Premise) -> bool:
    """The premise names every word of the claim's subject and names (:func:`claim_words`)."""
    return subject_words <= frozenset(content_stems(premise.text))


def _subject_conflict(words: frozenset[str], best: Premise, refs: Refs,
                      con: np.ndarray) -> tuple[float | None, Premise | None]:
    """(contradiction, premise): when the best-entailing premise does not name all of the claim's subject and names,
    the strongest contradiction among the premises read that name those it misses; (None, None) otherwise (see
    SentenceEvidence.subject_conflict)."""
    missing = words - frozenset(content_stems(best.text))
    if not missing:
        return None, None
    about = [k for k, (_, p) in enumerate(refs) if not np.isnan(con[k]) and names_subject(missing, p)]
    if not about:
        return None, None
    k = max(about, key=lambda i: con[i])
    return float(con[k]), refs[k][1]


def _says_opposite(premise: Premise, index: ContextIndex, words: frozenset[str], claim_negative: bool) -> bool:
    """Every sentence of ``premise`` that names ``words`` (the claim's subject) says the opposite polarity of the
    claim (and there is one)."""
    if not words:
        return False
    text = index.contexts[premise.chunk]
    naming = [span for span, ws in zip(index.sentences[premise.chunk], index.sentence_words[premise.chunk])
              if premise.span.start <= span.start and span.end <= premise.span.end and words <= ws]
    return bool(naming) and all(negative(span.of(text)) != claim_negative for span in naming)


def _denied_inside(naming: list[Span], best: Premise, refs: Refs, ent: np.ndarray,
                   con: np.ndarray) -> tuple[float | None, Premise | None]:
    """(contradiction, premise): when the best premise only lent a negative claim its negation
    (:func:`~guardrail.checks.pairing.borrowed_polarity`: ``naming`` are its sentences that name the subject), the
    strongest contradiction of those sentences read alone, where it outweighs their entailment; (None, None)
    otherwise."""
    inside = [k for k, (_, p) in enumerate(refs) if p.chunk == best.chunk and p.span in naming
              and not np.isnan(con[k]) and con[k] > ent[k]]
    if not inside:
        return None, None
    k = max(inside, key=lambda i: con[i])
    return float(con[k]), refs[k][1]


def _copy_of(item: ResponseItem, text: str, refs: Refs, copies: frozenset[str]) -> tuple[bool, Premise | None]:
    """Whether ``text`` repeats a whole context sentence word for word, and the premise that holds the copy.

    A word-for-word copy says what the context says: the model's reading of it (a negation elsewhere in the passage
    can pull a copy towards "contradicted") does not count."""
    if not ((item.claim or not item.fragment) and len(words(text)) >= 3):
        return False, None
    key = verbatim_key(text)
    if key not in copies:
        return False, None
    return True, next((p for _, p in refs if key in verbatim_key(p.text)), None)


def _unsupported_evidence(refs: Refs, ent: np.ndarray, con: np.ndarray) -> tuple[Premise, str, float | None]:
    """The premise an unsupported sentence's context sentence comes from, its role and its contradiction."""
    # in rank order (most shared words first): the model's contradiction with a passage about something
    # else means little ("$25" against the returns policy), with the passage on the topic it means much
    cons = np.nan_to_num(con, nan=0.0)
    k = next((j for j in range(len(refs)) if cons[j] >= 0.5 and cons[j] > ent[j]), None)
    shown, role = (refs[0][1], "closest") if k is None else (refs[k][1], "contradicts")
    return shown, role, None if np.isnan(con[k or 0]) else float(con[k or 0])
