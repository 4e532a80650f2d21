"""The premises each response sentence is read against, and the model's reading of them (steps of
:meth:`guardrail.checks.faithfulness.FaithfulnessCheck.run`).

:func:`select_premises` picks, for each hypothesis, its premises best-ranked first (windows, single sentences, a joined
premise, as configured) and numbers the distinct (premise, hypothesis) pairs; :func:`score_pairs` reads the pairs
with the NLI model in rounds: round r reads the r-th premise of every sentence that no premise entailed at least
``stop_at`` yet, one model call per round.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from guardrail.checks.claims import without_frame
from guardrail.checks.lexicon import NEG_AUX, tokenize
from guardrail.checks.abandon import give_up_if_abandoned
from guardrail.checks.premises import ContextIndex, Premise, PremiseMode, Ranking
from guardrail.scorers.nli import NLIScorer
from guardrail.text import Span, content_stems

#: candidate premises with their content words (see ContextIndex.units)
Units = list[tuple[Premise, frozenset[str]]]
#: a sentence's premises, best-ranked first, each with the id of its (premise, hypothesis) pair
Refs = list[tuple[int, Premise]]


class PremiseSettings(Protocol):
    """What premise selection and reading use of the configuration (:class:`FaithfulnessConfig`)."""

    @property
    def mode(self) -> PremiseMode: ...

    @property
    def top_k(self) -> int: ...

    @property
    def sentences(self) -> int | None: ...

    @property
    def joined(self) -> int: ...


@dataclass(frozen=True, slots=True)
class PairScores:
    """The model's reading of the pairs, by pair id, and what each sentence read."""

    entailment: dict[int, float]
    contradiction: dict[int, float]
    #: model tokens processed
    tokens: int
    #: per sentence: its premises up to (and including) the one that settled it
    read: list[Refs]


def select_premises(
    hypotheses: Sequence[str | None],
    index: ContextIndex,
    units: Units,
    singles: Units | None,
    question_words: Sequence[str],
    budget: int,
    cfg: PremiseSettings,
    subjects: Sequence[frozenset[str]] | None = None,
) -> tuple[list[tuple[str, str]], list[Refs]]:
    """The distinct (premise text, hypothesis) pairs in id order, and each hypothesis's premises (none for a None
    hypothesis: a sentence that is not checked). ``subjects``: per hypothesis, its claim's subject words: the clauses
    that decide a claim whose premises only lend it its polarity are read too (:func:`borrowed_clauses`)."""
    pair_ids: dict[tuple[str, str], int] = {}
    per_item: list[Refs] = []
    rankings: tuple[Ranking, Ranking | None] | None = None
    for k, hypothesis in enumerate(hypotheses):
        if hypothesis is None:
            per_item.append([])
            continue
        give_up_if_abandoned()  # ranking every premise for every sentence: a step at a time
        refs: Refs = []
        if rankings is None and cfg.mode != "exhaustive":  # the units' words indexed once for the call
            rankings = (Ranking(index, units, question_words), Ranking(index, singles, question_words)
                        if singles is not None else None)
        chosen = [u[0] for u in units] if rankings is None else \
            _premises(hypothesis, index, budget, cfg, rankings)
        if subjects is not None and cfg.mode != "exhaustive":
            chosen += borrowed_clauses(chosen, index, hypothesis, subjects[k])
        for premise in chosen:
            pair = (premise.text, hypothesis)
            refs.append((pair_ids.setdefault(pair, len(pair_ids)), premise))
        per_item.append(refs)
    return list(pair_ids), per_item


def _premises(hypothesis: str, index: ContextIndex, budget: int, cfg: PremiseSettings,
              rankings: tuple[Ranking, Ranking | None]) -> list[Premise]:
    """One hypothesis's premises (candidates mode), best-ranked first."""
    hyp_words = content_stems(hypothesis)
    ranked, ranked_singles = rankings
    chosen = ranked.rank(hyp_words, cfg.top_k)
    if ranked_singles is not None and cfg.sentences:  # (None, left to the model, is resolved before: FaithfulnessCheck)
        chosen = _interleave(chosen, ranked_singles.rank(hyp_words, cfg.sentences))
    if ranked_singles is not None and cfg.joined >= 2:
        joined = _joined_premise(index, ranked_singles.rank(hyp_words, cfg.joined), chosen, budget)
        if joined is not None:
            chosen = [*chosen, joined]
    return chosen


def score_pairs(nli: NLIScorer, pairs: list[tuple[str, str]], per_item: list[Refs], stop_at: float | None,
                subjects: Sequence[frozenset[str]] | None = None,
                borrows: Sequence[Callable[[Premise], bool] | None] | None = None) -> PairScores:
    """Read the pairs with the model, in rounds of one call each (all at once when ``stop_at`` is None).
    ``subjects``: per item, the content words of its claim's subject: a premise that does not name them does not stop
    the reading (its support may be about something else; the premises that name the subject are read too).
    ``borrows``: per item, whether a premise only lends the item its negation (:func:`borrowed_polarity`): such a
    premise does not stop the reading either (the sentence that names the subject is read)."""
    subjects = subjects if subjects is not None else [frozenset()] * len(per_item)
    borrows = borrows if borrows is not None else [None] * len(per_item)
    named: dict[str, frozenset[str]] = {}  # each premise's content words, read once per call
    ent_of: dict[int, float] = {}
    con_of: dict[int, float] = {}
    tokens_run = 0
    # round r reads the r-th ranked premise of every sentence not yet entailed; one model call per round
    depth = max((len(refs) for refs in per_item), default=0)
    rounds = [depth] if stop_at is None else list(range(1, depth + 1))
    done = 0
    for upto in rounds:
        want = sorted({pid for refs, words, lends in zip(per_item, subjects, borrows) for pid, _ in refs[done:upto]
                       if pid not in ent_of and not _settled(refs[:done], ent_of, stop_at, words, named, lends)})
        done = upto
        if not want:
            continue
        pred = nli.predict([pairs[i][0] for i in want], [pairs[i][1] for i in want])
        tokens_run += pred.tokens
        for j, pid in enumerate(want):
            ent_of[pid] = float(pred.entailment[j])
            con_of[pid] = float(pred.contradiction[j])
    # what each sentence read: its premises up to (and including) the one that settled it
    read = [[(pid, prem) for pid, prem in refs if pid in ent_of][: _read_upto(refs, ent_of, stop_at, words, named, lends)]
            for refs, words, lends in zip(per_item, subjects, borrows)]
    return PairScores(ent_of, con_of, tokens_run, read)


def fit_units(units: Units, count_many: Callable[[Sequence[str]], list[int]], budget: int, index: ContextIndex) -> Units:
    """Replace any multi-sentence unit whose real token count exceeds the budget by its sentences."""
    counts = count_many([u[0].text for u in units]) if units else []
    out: Units = []
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


#: words that make a sentence negative ("not", "never", "cannot", "isn't", ...)
NEGATIONS = frozenset("no not never none nothing cannot nor neither".split()) | frozenset(NEG_AUX)
#: a subject that is only part of what a sentence about the whole speaks of ("Some items cannot be returned." beside
#: "Items can be returned within 30 days.")
_PARTIAL = frozenset("some certain many most several few not other specific particular".split())
#: an exception a claim makes to its own subject
_EXCEPTING = re.compile(r"(?i)\b(?:except|excepting|excluding|other than|apart from|aside from|besides|but not|save for)\b")


#: a word negative by its prefix: "non-returnable", "nonrefundable", "unreturnable", "ineligible"
_NEGATIVE_WORD = re.compile(r"non-[a-z]{3,}|non[a-z]{2,}(?:able|ible)|un(?:return|refund|transfer|exchange|cancel|accept"
                            r"|redeem|us|avail|reach|access|afford|sell|wash|repair)(?:able|ible)|ineligible|excluded"
                            r"|prohibited|forbidden")


def negative(text: str) -> bool:
    """The text holds a negation word ("not", "cannot", "never", ...) or a word negative by its prefix
    ("non-returnable")."""
    return any(t.lower() in NEGATIONS or _NEGATIVE_WORD.fullmatch(t.lower()) for t in tokenize(text))


def borrowed_polarity(premise: Premise, index: ContextIndex, hypothesis: str, subject: frozenset[str]) -> list[Span]:
    """The sentences of a premise of several sentences that name the claim's subject (for a claim with no subject,
    such as "You cannot return items.", all of its content words), when all of them say the opposite polarity of the
    claim (negative for a positive claim, positive for a negative one) and another sentence of the premise lends the
    claim its polarity; [] otherwise.

    The model reads a negation anywhere in a window as the claim's: "Items cannot be returned." is entailed at 0.88 by
    "Items can be returned within 30 days of delivery. Gift cards cannot be returned." (round 19, finding 0), and
    "Gift cards can be returned within 30 days." at 0.62 by "Items can be returned within 30 days of delivery. ...
    Gift cards and final-sale items cannot be returned."; the sentences that name the subject say the opposite, and
    they are what decides."""
    against = not negative(hypothesis)  # the polarity the subject's sentences must have to lend nothing
    first = tokenize(hypothesis)[:1]
    if first and first[0].lower() in _PARTIAL or _EXCEPTING.search(hypothesis):
        return []  # a part of the subject ("Some items ..."), or an exception the claim makes itself ("All checking
        #            accounts (except Premium) have no monthly fee.": the excepted one's sentence says the opposite)
    if not subject:  # "You cannot return items." (a bare "No." to "Can I return items?"): what it speaks of
        subject = frozenset(content_stems(hypothesis)) - NEGATIONS
        if not subject:
            return []
    text = index.contexts[premise.chunk]
    inside: list[tuple[Span, frozenset[str]]] = []
    for span, ws in zip(index.sentences[premise.chunk], index.sentence_words[premise.chunk]):
        if premise.span.start <= span.start and span.end <= premise.span.end:
            parts = clauses(text, span)  # "Gift cards cannot be returned, but items can ...": two clauses
            inside += [(span, ws)] if len(parts) == 1 else [(c, frozenset(content_stems(c.of(text)))) for c in parts]
    if len(inside) < 2:
        return []
    naming = [span for span, ws in inside if subject <= ws]
    if not naming or any(negative(span.of(text)) != against for span in naming):
        return []
    if not any(negative(span.of(text)) != against for span, _ in inside if span not in naming):
        return []
    return naming


#: words that make a clause conditional or partial: its polarity holds only in part ("cannot be returned unless
#: unused", "can only be returned in store")
_CONDITIONAL = re.compile(r"(?i)\b(?:unless|only|if|when|once|after|before|until|provided|except|excepting|excluding|"
                          r"other than|apart from|aside from|besides|but not|save for)\b")


#: where a claim joins two clauses ("..., since the clinic is closed", "I'm not sure, but ..."): its negation may be
#: the other clause's
_JOINED = re.compile(r"(?i),\s*(?:but|since|because|as|while|whereas|although|though|yet|and|so|or)\b|;|:\s|\s[\u2013\u2014-]\s")


#: negations that make a bound or a price, not a polarity ("no more than 7 kg", "at no charge", "never take more
#: than 5 days", "free of charge")
_QUANTITY_NEGATION = re.compile(
    r"(?i)\b(?:no|not|never)\s+(?:\w+\s+){0,2}?(?:more|less|later|earlier|fewer|longer|greater|higher|lower)\s+than\b"
    r"|\b(?:must|may|should|can|cannot|shall|will)?\s*(?:not|n't)\s+(?:exceed|be\s+over|go\s+over|surpass)\b"
    r"|\b(?:at\s+)?no\s+(?:extra\s+|additional\s+)?(?:charge|cost|fee|extra\s+cost)s?\b|\bfree\s+of\s+(?:charge|cost)\b")


def polar_negative(text: str) -> bool:
    """:func:`negative`, without the negations that make a bound or a price ("no more than", "at no charge")."""
    return negative(_QUANTITY_NEGATION.sub(" ", text))


def denying_clause(hypothesis: str, subject: frozenset[str], index: ContextIndex) -> Premise | None:
    """The clause of the contexts that denies the claim in its own words: every clause of the contexts that names the
    claim's subject (``subject``: :func:`~guardrail.checks.evidence.subject_core`) says the opposite polarity, and
    one of them says of it nothing but a predicate the claim repeats, unconditionally ("Gift cards cannot be
    returned." against "Gift-cards can be returned within 30 days."); None otherwise.

    The model misses such denials when the claim's subject is spelled otherwise ("Gift-cards": contradiction 0.43) or
    a window lends the claim its support (round 23 B3); the words settle it. Never for a part of the subject ("Some
    gift cards ..."), a clause with a condition or an exception ("cannot be returned unless unused"), nor where any
    clause naming the subject says the claim's polarity."""
    if not subject:
        return None
    hypothesis = without_frame(hypothesis)  # "TL;DR — gift cards can ...": the frame is no second clause
    first = tokenize(hypothesis)[:1]
    if first and first[0].lower() in _PARTIAL or _CONDITIONAL.search(hypothesis) or _JOINED.search(hypothesis):
        return None  # a part, a condition, or two clauses (whose polarity is whose?)
    claim_negative = polar_negative(hypothesis)
    claim_words = frozenset(content_stems(hypothesis))
    negations = frozenset(content_stems(" ".join(NEGATIONS)))
    found: Premise | None = None
    for c, (spans, wss) in enumerate(zip(index.sentences, index.sentence_words)):
        text = index.contexts[c]
        for span, ws in zip(spans, wss):
            if not subject <= ws:
                continue
            for part in clauses(text, span):
                said = part.of(text)
                words_said = frozenset(content_stems(said))
                if not subject <= words_said:
                    continue
                lead = tokenize(said)[:1]
                if lead and lead[0].lower() in _PARTIAL or _CONDITIONAL.search(said) or \
                        polar_negative(said) == claim_negative:
                    return None  # a part of it, a condition, or the claim's own polarity: the words do not settle it
                predicate = words_said - subject - negations
                if found is None and predicate and predicate <= claim_words:
                    found = Premise(c, part, said)
    return found


#: a clause that grants its predicate to one holder alone: "only the Pro supports wireless charging", "phone support is
#: available on the Enterprise plan only", "wireless charging is exclusive to the Pro" (the holder, and what it alone
#: has or does)
_EXCLUSIVE = (
    re.compile(r"(?i)\b(?:only|solely|exclusively)\s+(?:the\s+|a\s+|an\s+)?(?P<holder>(?:[\w'.-]+\s+){0,3}?[\w'.-]+)\s+"
               r"(?P<pred>(?:supports?|has|have|includes?|offers?|comes?\s+with|gets?|receives?|provides?|allows?|"
               r"features?|qualif(?:y|ies)\s+for|(?:can|may)\s+\w+|(?:is|are)\s+(?:eligible|entitled|covered|included|"
               r"allowed|permitted)(?:\s+(?:for|to))?)\b.*)"),
    re.compile(r"(?i)^(?P<pred>.+?)\s+(?:is|are)\s+(?:available|offered|included|provided|supported)\s+(?:on|in|to|for|with)"
               r"\s+(?:the\s+)?(?P<holder>(?:[\w'.-]+\s+){0,3}?[\w'.-]+)\s+(?:only|alone|exclusively)\b"),
    re.compile(r"(?i)^(?P<pred>.+?)\s+(?:is|are)\s+(?:exclusive|unique|limited|restricted)\s+to\s+(?:the\s+)?"
               r"(?P<holder>(?:[\w'.-]+\s+){0,3}?[\w'.-]+)\b"),
)
#: words of an exclusive clause's predicate that say nothing of what the holder alone has
_EXCLUSIVE_GLUE = frozenset(content_stems("supports has have includes offers comes with gets receives provides allows "
                                          "features qualifies for can may eligible entitled covered included allowed "
                                          "permitted available offered supported exclusive unique limited restricted"))


#: the label of a labelled statement ("Nova 8: ")
_LABEL = re.compile(r"\s*([^:.!?]{1,60}):\s+(?=\S)")


def label_subject(hypothesis: str) -> frozenset[str]:
    """The subject of a labelled statement ("Nova 8: wireless charging.", how a table row reads): its label's words."""
    m = _LABEL.match(hypothesis)
    return frozenset(content_stems(m.group(1))) if m else frozenset()


Exclusive = tuple[Premise, frozenset[str], frozenset[str]]


def exclusive_clauses(index: ContextIndex) -> list[Exclusive]:
    """Each exclusive clause of the contexts (:data:`_EXCLUSIVE`): the clause, its holder's words, and the words of
    what the holder alone has; read once per request."""
    return list(_exclusives(index))


def _exclusives(index: ContextIndex) -> Iterator[Exclusive]:
    for c, spans in enumerate(index.sentences):
        text = index.contexts[c]
        for span in spans:
            if not re.search(r"(?i)\b(?:only|alone|solely|exclusive|exclusively|unique|limited|restricted)\b",
                             span.of(text)):
                continue
            for part in clauses(text, span):
                said = part.of(text).strip()
                if polar_negative(said):
                    continue
                for pattern in _EXCLUSIVE:
                    m = pattern.search(said)
                    if m is None:
                        continue
                    holder = frozenset(content_stems(m.group("holder"))) - _EXCLUSIVE_GLUE
                    predicate = frozenset(content_stems(m.group("pred"))) - _EXCLUSIVE_GLUE - holder
                    if holder and predicate:
                        yield Premise(c, part, said), holder, predicate


def exclusive_support(hypothesis: str, subject: frozenset[str], index: ContextIndex,
                      exclusives: Sequence[Exclusive]) -> Premise | None:
    """The exclusive clause that says a negative claim: "The Nova 8 does not support wireless charging." (a "No." to
    "Does the Nova 8 support wireless charging?") beside "only the Pro supports wireless charging" (entailed at
    0.09). The claim says nothing but its subject, a negation and the exclusive predicate; its subject is named in
    the contexts and shares no word with the holder. None otherwise."""
    unlabelled = _LABEL.sub("", hypothesis, count=1)  # "Nova 8: not wireless charging." joins no two clauses
    if not subject or not subject <= index.vocabulary or not polar_negative(hypothesis) or \
            _CONDITIONAL.search(hypothesis) or _JOINED.search(unlabelled):
        return None
    negations = frozenset(content_stems(" ".join(NEGATIONS)))
    said = frozenset(content_stems(hypothesis)) - subject - negations - _EXCLUSIVE_GLUE - {"do", "doe", "did"}
    for premise, holder, predicate in exclusives:
        if said == predicate and not holder & subject:
            return premise
    return None


def exclusive_clause(hypothesis: str, subject: frozenset[str], index: ContextIndex,
                     exclusives: Sequence[Exclusive]) -> Premise | None:
    """The clause of the contexts that grants what the claim says of its subject to another holder alone: "Both
    models support 45 W wired charging, but only the Pro supports wireless charging." against "The Nova 8 supports
    wireless charging." (entailed at 0.76: the model reads the Pro's clause as the Nova's), "Phone support is
    available on the Enterprise plan only." against "Standard customers get phone support."

    The claim is positive, says no "only" or "both" of its own, repeats every content word of the exclusive
    predicate, names no word of the holder, and has a subject of its own that the contexts name (a paraphrase of the
    holder, "the premium model", is not read as another holder). None otherwise."""
    if not subject or polar_negative(hypothesis) or _CONDITIONAL.search(hypothesis) or \
            re.search(r"(?i)\b(?:both|all|every|each|either|also|too|like)\b", hypothesis):
        return None
    if not subject <= index.vocabulary:
        return None
    claim_words = frozenset(content_stems(hypothesis))
    for premise, holder, predicate in exclusives:
        if predicate <= claim_words and not holder & claim_words and not subject & holder:
            return premise
    return None


#: a clause that denies its subject a verb of a list of things: "The warranty does not cover damage caused by descaling
#: neglect, drops or commercial use."
_DENIED_LIST = re.compile(
    r"(?i)^(?P<subj>(?:[\w'-]+\s+){0,5}?[\w'-]+)\s+(?:does\s+not|do\s+not|doesn't|don't|did\s+not|didn't|will\s+not|"
    r"won't|cannot|can't|can\s+not|may\s+not|must\s+not|never)\s+(?P<verb>[a-z]{3,})\s+(?P<obj>.+?)[.!;]?$")
#: a clause that denies a verb to a list of things (its subject): "Gift cards and final-sale items cannot be returned."
_DENIED_SUBJECTS = re.compile(
    r"(?i)^(?P<obj>(?:[\w'-]+[ \t,]+){0,12}?[\w'-]+)\s+(?:cannot|can't|can\s+not|may\s+not|must\s+not|will\s+not|"
    r"won't|are\s+not|aren't|is\s+not|isn't)\s+(?:be\s+)?(?P<verb>[a-z]{3,})[.!;]?$")
#: what separates the members of a list
_MEMBERS = re.compile(r"(?i)\s*,\s*(?:and\s+|or\s+|nor\s+)?|\s+(?:and|or|nor)\s+")


@dataclass(frozen=True, slots=True)
class DeniedList:
    """A clause of the contexts that denies a verb to a list of things (:func:`denied_lists`)."""

    premise: Premise
    #: the words of the clause's subject (None: the list is the subject, "Gift cards and ... cannot be returned.")
    subject: frozenset[str] | None
    #: the verb's stem as any of its forms starts ("includ", "return")
    verb: str
    #: the words of each member of the list
    members: tuple[frozenset[str], ...]


def denied_lists(index: ContextIndex) -> list[DeniedList]:
    """Each clause of the contexts that denies its subject a verb of a list of things ("The warranty does not cover
    damage caused by descaling neglect, drops or commercial use."), or a verb to a list of things ("Gift cards and
    final-sale items cannot be returned."), without a condition: read once per request (:func:`denied_member`)."""
    out = []
    for c, spans in enumerate(index.sentences):
        text = index.contexts[c]
        for span in spans:
            for part in clauses(text, span):
                said = part.of(text).strip()
                if _CONDITIONAL.search(said):
                    continue
                m = _DENIED_LIST.match(said) or _DENIED_SUBJECTS.match(said)
                if m is None:
                    continue
                subject = frozenset(content_stems(m.group("subj"))) if "subj" in m.re.groupindex else None
                verb = m.group("verb").lower().rstrip("e")  # "include", "includes": stems "include", "includ"
                verb = re.sub(r"(?:ed|d)$", "", verb) if subject is None else verb  # "returned": "return"
                members = tuple(ws for ws in map(frozenset, map(content_stems, _MEMBERS.split(m.group("obj")))) if ws)
                if subject != frozenset() and members:
                    out.append(DeniedList(Premise(c, part, said), subject, verb, members))
    return out


def denied_member(hypothesis: str, lists: Sequence[DeniedList]) -> Premise | None:
    """The clause of the contexts that denies its subject a verb of a list of things (or denies a verb to a list of
    things: "Gift cards and final-sale items cannot be returned." against "You can return gift cards."), one of which
    a positive claim says the subject has: "The warranty covers drops." (or a "Yes." to "Does the warranty cover
    drops?") beside "The warranty does not cover damage caused by descaling neglect, drops or commercial use." (passed
    at 0.82: the model reads the list as a whole, and :func:`denying_clause` wants every word of the predicate). The
    claim names the clause's subject, its verb and every word of one member; a claim with a condition or a negation
    of its own is left to the model. ``lists``: :func:`denied_lists` of the contexts."""
    if not lists or polar_negative(hypothesis) or _CONDITIONAL.search(hypothesis):
        return None
    claim_words = frozenset(content_stems(hypothesis))
    for d in lists:
        if d.subject is not None and not d.subject <= claim_words or \
                not any(w.startswith(d.verb) and len(w) - len(d.verb) <= 3 for w in claim_words):
            continue
        if any(ws <= claim_words for ws in d.members):
            return d.premise
    return None


#: where a sentence joins two clauses that may say opposite things of two subjects: ", but", ", while", ", whereas",
#: ", although", ", though", ", yet", ";" and a dash
_CLAUSE_BREAK = re.compile(r",\s+(?:but|while|whereas|although|though|yet)\s+|;\s+|\s+[\u2013\u2014]\s+|\s+--\s+", re.I)


def clauses(text: str, span: Span) -> list[Span]:
    """The clauses of the sentence ``span`` of ``text``, split where it joins two (:data:`_CLAUSE_BREAK`); the
    sentence itself when it has one."""
    out, start = [], span.start
    for m in _CLAUSE_BREAK.finditer(text, span.start, span.end):
        if text[start : m.start()].strip():
            out.append(Span(start, m.start()))
        start = m.end()
    if text[start : span.end].strip():
        out.append(Span(start, span.end))
    return out or [span]


def borrowed_clauses(premises: Sequence[Premise], index: ContextIndex, hypothesis: str,
                     subject: frozenset[str]) -> list[Premise]:
    """The clauses that decide a claim whose premises only lend it its polarity (:func:`borrowed_polarity`) and that
    are no whole sentence, so that no premise holds them alone: read after the others ("Items cannot be returned."
    against "Gift cards cannot be returned, but items can be returned within 30 days.")."""
    extra: list[Premise] = []
    have = {(p.chunk, p.span) for p in premises}
    for premise in premises[:2]:
        for span in borrowed_polarity(premise, index, hypothesis, subject):
            if (premise.chunk, span) not in have and span not in index.sentences[premise.chunk]:
                have.add((premise.chunk, span))
                extra.append(Premise(premise.chunk, span, span.of(index.contexts[premise.chunk])))
    return extra[:2]


def _settles(pid: int, premise: Premise, ent_of: dict[int, float], stop_at: float | None,
             subject: frozenset[str], named: dict[str, frozenset[str]],
             borrowed: Callable[[Premise], bool] | None = None) -> bool:
    """The premise entails the sentence at least ``stop_at`` and names its subject (when it has one); ``named``
    memoizes each premise's content words; ``borrowed``: the premise's negation is another subject's (a premise that
    only lends its negation settles nothing: :func:`borrowed_polarity`)."""
    if stop_at is None or ent_of.get(pid, 0.0) < stop_at:
        return False
    if borrowed is not None and borrowed(premise):
        return False
    if not subject:
        return True
    words = named.get(premise.text)
    if words is None:
        words = named[premise.text] = frozenset(content_stems(premise.text))
    return subject <= words


def _settled(read: Refs, ent_of: dict[int, float], stop_at: float | None, subject: frozenset[str],
             named: dict[str, frozenset[str]], borrowed: Callable[[Premise], bool] | None = None) -> bool:
    """A sentence is settled once a premise it read settles it (:func:`_settles`)."""
    return any(_settles(pid, premise, ent_of, stop_at, subject, named, borrowed) for pid, premise in read)


def _read_upto(refs: Refs, ent_of: dict[int, float], stop_at: float | None, subject: frozenset[str],
               named: dict[str, frozenset[str]], borrowed: Callable[[Premise], bool] | None = None) -> int:
    """How many of a sentence's ranked premises it read: up to the first that settled it."""
    for n, (pid, premise) in enumerate(refs, 1):
        if pid not in ent_of:
            return n - 1
        if _settles(pid, premise, ent_of, stop_at, subject, named, borrowed):
            return n
    return len(refs)
