"""Claims that say more than the contexts on a scale the model reads loosely: a hedge or a partial quantity made
certain, and a planned event told as done.

The NLI model reads "Taking ibuprofen with food *will prevent* stomach upset." as entailed by "... *may reduce*
stomach upset." (0.80), "Mobile check deposits *will* be available the next business day." by "... are *usually*
available ..." (0.89), "*All* of the job cuts will be in the hardware unit." by "... *mostly* in its hardware unit"
(0.67) and "Contoso *has acquired* Litware." by "Contoso *agreed to acquire* Litware ..., pending regulatory approval."
(0.78). The words settle it: the claim's clause and the context clause it says most about share their content
words, the context clause hedges (a modal, a frequency, a part) where the claim holds a word of certainty of the same
scale that the clause does not hold, or the context clause puts a verb in the future (or a plan) that the claim
puts in the past.

Each rule reads one claim clause against one context clause (the one that shares most of its content words, and at
least half of them): a hedge elsewhere in a long context sentence ("You may cancel at any time; refunds are issued
within 5 days.") says nothing of another clause. A claim that hedges itself is left to the model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from collections import Counter
from dataclasses import dataclass

from guardrail.checks.premises import ContextIndex
from guardrail.text import content_stems

#: words of certainty a claim may hold, by scale, with the hedges of the same scale they override and the words that
#: say the same certainty (a context clause that holds one of them is not hedged on that scale)
_MODAL_HEDGES = frozenset("may might could possibly perhaps likely unlikely usually typically generally often normally "
                          "sometimes occasionally frequently".split())
_PARTS = frozenset("some most many several certain mostly mainly largely partly partially primarily majority".split())


@dataclass(frozen=True, slots=True)
class _Scale:
    name: str
    #: the claim's words of certainty
    strong: frozenset[str]
    #: the context words that hedge on this scale
    hedges: frozenset[str]
    #: multi-word hedges ("as needed")
    phrases: tuple[str, ...] = ()
    #: words of a context clause that make its hedge no hedge on this scale: "You may return items ... provided they
    #: are unused" is what "Items must be unused to be returned." says (a condition said as a requirement)
    moot: frozenset[str] = frozenset()
    #: a permission ("Employees may carry over five days") hedges on this scale: it does against "must", not against
    #: "will" ("Five days will carry over" says what the permission does)
    permission: bool = False


_SCALES = (
    # "is expected to approve": a forecast, not "will approve"
    _Scale("certain future", frozenset("will shall".split()), _MODAL_HEDGES | frozenset("expected expects".split())),
    _Scale("obligation", frozenset("must required requires require mandatory compulsory obligatory".split()),
           # not "can": "Items must be unused." says what "Items can be returned ... if unused." does
           _MODAL_HEDGES | frozenset("should optional optionally recommended recommends advised encouraged".split()),
           ("as needed", "if needed", "when needed", "if necessary", "as necessary"),
           frozenset("if provided providing unless only once when whenever long subject".split()), True),
    # not "can": "The thermostat can learn your schedule and adjust ..." is what "... automatically adjusts" says
    _Scale("certainty", frozenset("always invariably automatically guaranteed guarantees guarantee definitely "
                                  "certainly surely".split()), _MODAL_HEDGES,
           ("in most cases", "in some cases", "in many cases")),
    # not "each": "$15 each" is a price per item
    _Scale("whole", frozenset("all every entire entirely exclusively solely wholly".split()), _PARTS,
           ("in part", "in most cases", "in some cases", "the majority")),
)
#: words that hedge a claim on any scale (a claim that holds one is left to the model)
_ANY_HEDGE = _MODAL_HEDGES | _PARTS | frozenset("can should able".split())
#: a condition the claim puts on itself ("as needed", "when required"): a hedge of its own
_OWN_CONDITION = re.compile(r"\b(?:as|when|if|where)\s+(?:needed|required|necessary|applicable|appropriate)\b")

#: the clauses of a sentence: at semicolons and at a comma or contrast before a conjunction
_CLAUSES = re.compile(r"\s*;\s*|,\s+(?:and|but|while|whereas|whilst|although|though|so)\s+|"
                      r"\s+(?:but|while|whereas|whilst)\s+", re.IGNORECASE)
_WORD = re.compile(r"[a-z][a-z'\u2019-]*")
#: "May" inside a sentence, or before a day ("May 5"): the month
_MONTH_MAY = re.compile(r"(?<=\S )May\b|\bMay(?=\s+\d)")
_NAME = re.compile(r"(?<=[\w,;:'\u2019)] )[A-Z][a-z]+")

#: a verb the context clause puts in the future or in a plan: "will close", "would cut", "expects the deal to close",
#: "agreed to acquire", "is set to join"
_FUTURE = re.compile(
    r"\b(?:will|shall|'ll)\s+(?:not\s+)?(?:[a-z]+ly\s+)?(?:be\s+|have\s+)?(?P<v>[a-z]{2,})\b|"
    r"\b(?:expects?|expected|expecting|plans?|planned|planning|intends?|intended|aims?|aimed|agreed|agrees|set|"
    r"scheduled|due|going|hopes?|hoped|seeks?|sought|proposes?|proposed|prepares?|preparing|promised|promises?|"
    r"pledged|pledges?|vowed|vows?|wants?|wanted|offered|offers?)\s+(?:[a-z$\d.,'%-]+\s+){0,5}?to\s+(?:be\s+)?"
    r"(?P<v2>[a-z]{2,})\b", re.IGNORECASE)
#: a verb the claim puts in the past: "has acquired", "have joined", "had raised", "closed", "was sold"
_PERFECT = re.compile(r"\b(?:has|have|had|'ve)\s+(?:already\s+|now\s+|since\s+|just\s+|recently\s+|officially\s+)?"
                      r"(?:been\s+)?(?P<v>[a-z]{2,}(?:ed|en)|" + "|".join(
                          "sold bought paid made won left taken given begun risen fallen grown gone come become built "
                          "sent spent lost held kept brought told cut shut quit split done run hit set put chosen "
                          "written struck laid led met".split()) + r")\b", re.IGNORECASE)
_PAST = re.compile(r"(?<![\w'-])(?P<v>[a-z]{3,}ed|" + "|".join(
    "sold bought paid made won left took gave began rose fell grew went came became built sent spent lost held kept "
    "brought told cut shut quit split".split()) + r")\b", re.IGNORECASE)
#: words before a verb form that make it no past event: a passive or modal present, an infinitive, an adjective use
_NOT_PAST_BEFORE = frozenset("is are am be being been can could will would may might must shall should to get gets "
                             "not never the a an".split())
_IRREGULAR = {
    "sold": "sell", "bought": "buy", "paid": "pay", "made": "make", "won": "win", "left": "leave", "took": "take",
    "taken": "take", "gave": "give", "given": "give", "began": "begin", "begun": "begin", "rose": "rise",
    "risen": "rise", "fell": "fall", "fallen": "fall", "grew": "grow", "grown": "grow", "went": "go", "gone": "go",
    "came": "come", "become": "become", "became": "become", "built": "build", "sent": "send", "spent": "spend",
    "lost": "lose", "held": "hold", "kept": "keep", "brought": "bring", "told": "tell", "cut": "cut", "shut": "shut",
    "quit": "quit", "split": "split", "done": "do", "did": "do", "run": "run", "ran": "run", "hit": "hit",
    "set": "set", "put": "put", "closed": "close", "chosen": "choose", "chose": "choose", "written": "write",
    "wrote": "write", "signed": "sign", "struck": "strike", "laid": "lay", "led": "lead", "met": "meet",
}


def _bases(verb: str) -> frozenset[str]:
    """The base forms a past tense or participle may come from ("acquired" -> acquire, "stopped" -> stop,
    "carried" -> carry)."""
    v = verb.lower()
    out = {v}
    if v in _IRREGULAR:
        out.add(_IRREGULAR[v])
    if v.endswith("ed") and len(v) > 4:
        out |= {v[:-2], v[:-1]}
        if v.endswith("ied"):
            out.add(v[:-3] + "y")
        if len(v) > 5 and v[-3] == v[-4]:
            out.add(v[:-3])
    return frozenset(out)


def _clauses(sentence: str) -> list[str]:
    return [c for c in _CLAUSES.split(sentence) if c and c.strip()]


@dataclass(frozen=True, slots=True)
class ContextClause:
    """One clause of a context sentence, as the rules compare it: its words as written, its content stems."""

    text: str
    words: frozenset[str]
    stems: frozenset[str]


class Clauses(list[ContextClause]):
    """Every clause of the contexts' sentences, with the clauses each content stem occurs in (a claim is compared
    with the clauses that share its words only: one pass over the contexts, not one per claim)."""

    def __init__(self, items: Sequence[ContextClause]) -> None:
        super().__init__(items)
        self.postings: dict[str, list[int]] = {}
        for k, clause in enumerate(self):
            for st in clause.stems:
                self.postings.setdefault(st, []).append(k)


def context_clauses(index: ContextIndex) -> Clauses:
    """Every clause of every context sentence (read once per request, when a rule needs them)."""
    out = []
    for c, (spans, stems) in enumerate(zip(index.sentences, index.sentence_words)):
        for span, own in zip(spans, stems):
            sentence = span.of(index.contexts[c])
            parts = _clauses(sentence) if _CLAUSES.search(sentence) else [sentence]
            for clause in parts:
                low = _MONTH_MAY.sub("maymonth", clause).lower()  # the month is no hedge
                # a sentence of one clause has its stems in the index already
                out.append(ContextClause(low, frozenset(_WORD.findall(low)),
                                         own if len(parts) == 1 else frozenset(content_stems(clause))))
    return Clauses(out)


_SCALE_WORDS = frozenset(content_stems(" ".join(
    w for s in _SCALES for w in [*s.strong, *s.hedges]))) | frozenset(content_stems(" ".join(_ANY_HEDGE)))


def _aligned(claim: str, clauses: Sequence[ContextClause], index: ContextIndex) -> ContextClause | None:
    """The context clause a claim clause says most about: the most of its content words that the contexts hold
    (IDF-weighted), at least half of them and two."""
    # a compound's parts count ("Contoso-Litware deal" is about Contoso and Litware)
    stems = [s for s in dict.fromkeys([*content_stems(claim), *content_stems(claim.replace("-", " "))])
             if s not in _SCALE_WORDS]
    # words no context holds say nothing of which clause the claim is about (but a claim mostly of them is about none)
    known = [s for s in stems if s in index.vocabulary]
    if len(known) < 2 or 2 * len(known) < len(stems):
        return None
    stems = known
    hits: dict[int, int] = {}
    postings = clauses.postings if isinstance(clauses, Clauses) else Clauses(clauses).postings
    for st in stems:
        for k in postings.get(st, ()):
            hits[k] = hits.get(k, 0) + 1
    best, best_share = None, 0.0
    for k in sorted(k for k, n in hits.items() if n >= 2):
        clause = clauses[k]
        share = index.overlap(stems, clause.stems)
        if share > best_share:
            best, best_share = clause, share
    return best if best_share >= 0.5 else None


#: hedges that count only where they govern what the claim says: "may" before the claim's verb ("may be waived" for
#: "will be waived"), "most" before its noun; not "Orders ship within 24 hours and may be split" for "Orders will ship
#: within 24 hours", nor "our most popular plan" for "All plans ..."
_GOVERNING = frozenset("may might could can should expected expects some most many several certain".split())
_PASSED_OVER = frozenset("be been being not also only of the a an our your their its to which whom".split())


def _governs(clause_text: str, hedge: str, claim_stems: frozenset[str]) -> bool:
    """The first content word after ``hedge`` in the clause (within five words) is one of the claim's."""
    toks = _WORD.findall(clause_text)
    for k, t in enumerate(toks):
        if t != hedge:
            continue
        after = [w for w in toks[k + 1:k + 6] if w not in _PASSED_OVER and not w.endswith("ly")]
        if after and any(a.startswith(b) or b.startswith(a) for a in content_stems(after[0]) for b in claim_stems
                         if min(len(a), len(b)) >= 3):
            return True
    return False


#: who a "may" before an active verb permits something ("Employees may carry over ...", "You may return ...")
_PERSONS = frozenset("you we employee employees staff member members customer customers passenger passengers guest "
                     "guests user users student students patient patients traveler travelers traveller travellers "
                     "buyer buyers tenant tenants owner owners holder holders applicant applicants visitor visitors "
                     "client clients subscriber subscribers adults children parents hires residents".split())


def _permits(clause_text: str, hedge: str) -> bool:
    """``hedge`` ("may", "can", "could") grants a person leave to act: a person named before it, an active verb
    after it ("Gold members may access the lounge"; not "Late fees may be waived")."""
    toks = _WORD.findall(clause_text)
    for k, t in enumerate(toks):
        if t == hedge and hedge in ("may", "can", "could") and k + 1 < len(toks) and \
                toks[k + 1] not in ("be", "not", "have") and _PERSONS.intersection(toks[:k]):
            return True
    return False


def _hedged(clause: ContextClause, scale: _Scale, claim_stems: frozenset[str]) -> str | None:
    """The clause's hedge on ``scale``, when it holds one (that governs a word of the claim, for the words that
    may hedge something else) and no word of the scale's certainty."""
    if clause.words & scale.strong or clause.words & scale.moot:
        return None
    hedge = next((w for w in sorted(clause.words & scale.hedges)
                  if (w not in _GOVERNING or _governs(clause.text, w, claim_stems)) and
                  (scale.permission or not _permits(clause.text, w))), None)
    if hedge is None:
        hedge = next((p for p in scale.phrases if re.search(rf"\b{p}\b", clause.text)), None)
    return hedge


@dataclass(frozen=True, slots=True)
class Overstatement:
    """A claim word that says more than the context clause it is about: ``word`` where the clause says ``hedge``."""

    word: str
    hedge: str
    clause: str

    def __str__(self) -> str:
        return f'"{self.word}" where the passage says "{self.hedge}"'


#: a word the contexts deny of a subject: "is not waterproof", "isn't refundable", "cannot be returned", "never been
#: used", "... but not waterproof" (after a verb, "did not make", the word is no predicate of the subject)
_NEGATED_WORD = re.compile(
    r"(?:\b(?:is|are|was|were|am|be|been|being)\s+(?:not|never)|\b(?:isn|aren|wasn|weren)['\u2019]t|"
    r"(?:\bcannot|\b(?:can|could|will|would|may|might|must|should|shall)\s+not|\b(?:can|couldn|won|wouldn|mightn|"
    r"mustn|shouldn)['\u2019]t|\bnever|\bnot)\s+(?:be|been)|\b(?:but|and|yet|or)\s+not|,\s*not)\s+"
    r"(?:(?!only\b)[a-z]+ly\s+)?(?P<w>[a-z][a-z'\u2019-]{3,})\b")
#: words after a negation that are no predicate it denies ("not only", "not have", "not all")
_NOT_DENIED = frozenset("only just also even always all every each that this these those have been able more less "
                        "much many necessarily quite very really sure exactly merely simply unless until because "
                        "more than enough about over under".split())
#: a negation right before a claim word (up to two words between: "not fully waterproof", "isn't really covered")
#: (a comma or a dash ends what the negation governs: "... to your operator, not your supplier, within 3 months")
_NEGATED_BEFORE = re.compile(r"(?i)(?:\b(?:not|never|no|cannot|without|nor|neither)|n['\u2019]t)\s+"
                             r"(?:[^\s,;:\u2013\u2014]+\s+){0,2}$")


def negated_only(sentences: Callable[[], Sequence[tuple[str, frozenset[str]]]],
                 contexts: Sequence[str]) -> dict[str, tuple[frozenset[str], ...]]:
    """The words the contexts hold only right after a negation ("They are water resistant (IPX4) but not
    waterproof.": "waterproof"), each with the subjects it is denied of (``sentences``: each context sentence and
    its subject's stems, a pronoun read as the subject before it; read only when some word is denied), read once per
    request."""
    low = [c.lower() for c in contexts]
    denied = Counter(m.group("w") for t in low for m in _NEGATED_WORD.finditer(t))
    for w in _NOT_DENIED | AUX_WORDS:
        denied.pop(w, None)
    if not denied:
        return {}
    seen = Counter(w for t in low for w in _WORD.findall(t) if w in denied)
    only = {w for w, n in denied.items() if seen[w] == n}
    if not only:
        return {}
    out: dict[str, list[frozenset[str]]] = {}
    for text, subject in sentences():
        for m in _NEGATED_WORD.finditer(text.lower()):
            if m.group("w") in only and subject:
                out.setdefault(m.group("w"), []).append(subject)
    return {w: tuple(subjects) for w, subjects in out.items()}


@dataclass(frozen=True, slots=True)
class Denials:
    """What :func:`denied_words` reads: the claim's subject (its stems), the contexts' denied words and names."""

    subject: frozenset[str]
    words: dict[str, tuple[frozenset[str], ...]]
    names: frozenset[str]


def context_names(contexts: Sequence[str]) -> frozenset[str]:
    """The stems of the words the contexts capitalize inside a sentence, and of their figures: what names a thing
    ("Zephyr X2")."""
    return frozenset(content_stems(" ".join(m.group() for c in contexts for m in _INNER_NAME.finditer(c))))


_INNER_NAME = re.compile(r"(?<=[\w,;:)] )(?:[A-Z][\w-]*|\w*\d\w*)")
AUX_WORDS = frozenset("am is are was were be being been do does did have has had can could may might must shall "
                      "should will would".split())


def denied_words(text: str, subject: frozenset[str], denied: dict[str, tuple[frozenset[str], ...]],
                 names: frozenset[str]) -> list[Overstatement]:
    """Words a claim asserts of its subject that the contexts hold only denied of it: "The headphones are waterproof."
    (or "Yes, they are waterproof.") where the contexts say "The Zephyr X2 headphones ... They are water resistant
    (IPX4) but not waterproof." (entailed at 0.75: the model reads the word, not its negation). The denial's subject
    is the claim's, a part of it ("X2 headphones" of "headphones"), or the claim's with only names dropped ("The
    headphones" for "The Zephyr X2 headphones"); not a kind of it ("Personalized items cannot be returned." says
    nothing of "Items must be unused to be returned."). A claim that negates the word itself is the model's."""
    if not denied or not subject:
        return []
    low = text.lower()
    out = []
    for m in _WORD.finditer(low):
        w = m.group()
        if w not in denied or _NEGATED_BEFORE.search(low[max(0, m.start() - 40):m.start()]):
            continue
        if any(d <= subject or (subject <= d and d - subject <= names) for d in denied[w]):
            out.append(Overstatement(w, f"not {w}", ""))
    return out


#: what a qualifier before a number says of it: a ceiling, a floor, an estimate, an exact figure
_BOUND_KINDS = {
    "upper": r"up\s+to|(?:a\s+)?maximum\s+of|max\.?|as\s+(?:many|much)\s+as|(?:no|not)\s+more\s+than|at\s+most|"
             r"less\s+than|fewer\s+than|under|below|within",
    "lower": r"at\s+least|(?:a\s+)?minimum\s+of|min\.?|more\s+than|over|above|(?:no|not)\s+(?:less|fewer)\s+than|"
             r"upwards\s+of",
    "about": r"about|approximately|around|roughly|nearly|almost|circa|some",
    "exact": r"exactly|precisely",
}
_QUALIFIED = re.compile(r"(?i)(?:\b(?P<q>" + "|".join(f"(?P<{k}>{v})" for k, v in _BOUND_KINDS.items()) +
                        r")\s+)?(?<![\w.,])(?P<n>\$?\d[\d,]*(?:\.\d+)?)(?![\w.,]*\d)")


#: a unit of time and "before"/"of"/"after" after a figure: a time relative to an event, not a ceiling or a floor
_DEADLINE_AFTER = re.compile(r"(?i)\s+(?:business\s+|working\s+|calendar\s+)?(?:minutes?|hours?|days?|weeks?|months?|"
                             r"years?)\s+(?:before|prior\b|in\s+advance|ahead|after|since|(?:of|from)\s+(?:the\s+|your\s+)?"
                             r"(?:departure|arrival|delivery|purchase|receipt|booking|check-?in|check-?out|travel|event|"
                             r"appointment|flight|trip|start|end|order|shipment|invoice|notice|diagnosis|treatment))\b")


def _qualified(text: str) -> list[tuple[str, str, str]]:
    """Each number of a text with the kind of its qualifier ("upper", "lower", "about", "exact"; "plain" for none)
    and the qualifier as written."""
    out = []
    for m in _QUALIFIED.finditer(text):
        kind = next((k for k in _BOUND_KINDS if m.group(k)), "plain")
        if kind in ("upper", "lower") and _NEGATED_BEFORE.search(text[max(0, m.start() - 30):m.start()]):
            kind = "lower" if kind == "upper" else "upper"  # "Do not take more than 8": at most 8
        if kind != "plain" and _DEADLINE_AFTER.match(text, m.end()):
            # a time relative to an event is a window, not a ceiling or a floor: "up to 24 hours before departure"
            # (at least 24 hours ahead, round 33), "within 24 hours of departure" (the last 24 hours)
            kind = "plain"
        out.append((m.group("n").lstrip("$").replace(",", ""), kind, " ".join((m.group("q") or "").split())))
    return out


def number_bounds(contexts: Sequence[str]) -> dict[str, tuple[frozenset[str], str]]:
    """Per number of the contexts: the kinds of qualifier it has there, and one as written (read once per request)."""
    kinds: dict[str, set[str]] = {}
    said: dict[str, str] = {}
    for c in contexts:
        for n, kind, q in _qualified(c):
            kinds.setdefault(n, set()).add(kind)
            said.setdefault(n, f"{q} {n}".strip())
    return {n: (frozenset(k), said[n]) for n, k in kinds.items()}


def rebounded(text: str, bounds: dict[str, tuple[frozenset[str], str]]) -> list[Overstatement]:
    """A number a claim qualifies otherwise than the contexts always do: "about 1 in 10" or "at least 30 days" where
    they say "up to"; "exactly 600" where they say "about" (the model reads the figure, not its bound). A plain figure
    either way is the model's ("30 hours" for "up to 30 hours")."""
    out = []
    for n, kind, q in _qualified(text) if bounds else ():
        held = bounds.get(n)
        if kind == "plain" or held is None or len(held[0]) != 1:
            continue
        (theirs,) = held[0]
        if theirs != "plain" and theirs != kind:
            out.append(Overstatement(f"{q} {n}", held[1], ""))
    return out


#: a hedge on a ceiling ("may take up to 5 days"): a claim that restates the ceiling says what it says
_CEILING_HEDGE = re.compile(r"(?i)\b(?:may|might|can|could)\s+(?:take|last|require|need)\s+"
                            r"(?:up\s+to|as\s+long\s+as)\b")


def overstated(text: str, clauses: Sequence[ContextClause] | Callable[[], Sequence[ContextClause]],
               index: ContextIndex, past_forms: frozenset[str], denied: Denials | None = None,
               bounds: dict[str, tuple[frozenset[str], str]] | None = None) -> tuple[Overstatement, ...]:
    """What a claim says more strongly than the context clause it is about (see the module docstring).
    ``clauses``: :func:`context_clauses` (or a callable that makes them, called only when a rule needs them);
    ``past_forms``: every word of the contexts as written (a past form the contexts hold themselves is no
    overstatement: "... will close the plant. The plant closed in May."); ``denied``: the claim's subject and
    what the contexts deny (:func:`negated_only`, :func:`denied_words`);
    ``bounds``: :func:`number_bounds`."""
    out: list[Overstatement] = rebounded(text, bounds or {})
    if denied is not None:
        out += denied_words(text, denied.subject, denied.words, denied.names)
    for part in _clauses(text):
        low = part.lower()
        said = _WORD.findall(low)
        if not said:
            continue
        # a capitalized word inside the clause is a name ("Will Power won the race"), no word of certainty
        names = {w.lower() for w in _NAME.findall(part)}
        aligned: list[ContextClause | None] = []

        def clause_of(part: str = part, aligned: list[ContextClause | None] = aligned) -> ContextClause | None:
            if not aligned:  # the clause it is about, found once and only when a rule needs it
                aligned.append(_aligned(part, clauses() if callable(clauses) else clauses, index))
            return aligned[0]

        if not (_ANY_HEDGE.intersection(said) or _OWN_CONDITION.search(low)):  # a claim that hedges itself: the model's
            for scale in _SCALES:
                strong = next((w for w in said if w in scale.strong and w not in names), None)
                if strong is None:
                    continue
                clause = clause_of()
                if clause is None:
                    break
                hedge = _hedged(clause, scale, frozenset(content_stems(part)))
                if hedge is not None and _CEILING_HEDGE.search(clause.text) and \
                        any(k == "upper" for _, k, _ in _qualified(part)):
                    hedge = None  # "may take up to 5 days" is what "will take no more than 5 days" says
                if hedge is not None:
                    out.append(Overstatement(strong, hedge, clause.text))
        out += _told_as_done(low, past_forms, clause_of)
        out += _double_negation(low, clause_of)
    return tuple(out)


#: a negation of a word that itself denies: "not excluded", "no longer excluded", "isn't exempt from": the claim holds
_DOUBLE_NEGATION = re.compile(
    r"(?:\b(?:not|never)|\bno\s+longer|n['\u2019]t)\s+(?:(?:be|been|being)\s+)?(?:any\s+more\s+|anymore\s+)?"
    r"(?P<w>excluded|exempt|exempted|prohibited|forbidden|banned|barred|disallowed|ineligible|restricted|"
    r"denied|refused|rejected|void|invalid|precluded)\b")
#: what makes a context clause deny: a negation, or a word that denies
_DENYING = re.compile(
    r"\b(?:not|no|never|none|nothing|cannot|neither|nor|excluded|exempt|prohibited|forbidden|banned|barred|"
    r"disallowed|ineligible|non-[a-z]+|non(?:refundable|returnable|transferable))\b|n['\u2019]t\b")


def _double_negation(low: str, clause_of: Callable[[], ContextClause | None]) -> list[Overstatement]:
    """A claim that negates a word that denies ("Opened software is no longer excluded from returns.", "Drops are not
    excluded from the warranty.") says the claim holds; the model reads the negation and the denial apart and
    entails it from the clause that denies (0.53-0.64). Against a context clause that denies, it is the opposite of
    what the clause says; a clause that says the same double negation is the model's."""
    m = _DOUBLE_NEGATION.search(low)
    clause = clause_of() if m is not None else None
    if m is None or clause is None or _DOUBLE_NEGATION.search(clause.text):
        return []
    denial = _DENYING.search(clause.text)
    if denial is None:
        return []
    # "Staff aren't exempt" says nothing against "Students are exempt ..., but staff are not."
    subject = frozenset(content_stems(low[:m.start()]))
    if subject and not subject & clause.stems:
        return []
    return [Overstatement(" ".join(m.group(0).split()), denial.group(0), clause.text)]


_PAST_PLAN = re.compile(r"(?i)(?:planned|intended|aimed|hoped|sought|wanted|offered|proposed|promised|pledged|vowed)\b")
_WAS = re.compile(r"(?i)\b(?:was|were|had\s+been)\s+$")
_CONDITION_BEFORE = re.compile(r"\b(?:once|after|when|whenever|until|as\s+soon\s+as|by\s+the\s+time|before|if)\b"
                               r"(?:(?!,).){0,40}$")
#: words in which the contexts may tell that a plan was carried out
_COMPLETED = frozenset("completed finalized finalised finished concluded consummated".split())
_PLAN_WORDS = frozenset("will would shall expects expected plans planned intends intended aims agreed set scheduled "
                        "due going hopes seeks proposes proposed pending promised pledged".split())


def _told_as_done(low: str, past_forms: frozenset[str],
                  clause_of: Callable[[], ContextClause | None]) -> list[Overstatement]:
    """A verb the claim puts in the past that its context clause puts in the future or in a plan."""
    said = set(_WORD.findall(low))
    if said & _PLAN_WORDS:
        return []
    if past_forms & _COMPLETED:  # the contexts tell a completion in their own words ("completed the purchase in May")
        return []
    done: list[str] = [m.group("v") for m in _PERFECT.finditer(low)
                       if not _CONDITION_BEFORE.search(low[max(0, m.start() - 60):m.start()])]
    for m in _PAST.finditer(low):
        before = low[max(0, m.start() - 24):m.start()].split()  # the word before it (a bounded look back)
        if _CONDITION_BEFORE.search(low[max(0, m.start() - 60):m.start()]):
            continue  # "once your order has shipped": a condition, no event told
        if not before or before[-1] not in _NOT_PAST_BEFORE:
            done.append(m.group("v"))
    # a past form the contexts hold themselves ("The plant closed in May.") is no overstatement; a form that is also
    # the base ("cut", "set") says nothing of the contexts' tense
    done = [v for v in dict.fromkeys(done) if v not in past_forms or _bases(v) == {v} or _IRREGULAR.get(v) == v]
    if not done:
        return []
    clause = clause_of()
    if clause is None:
        return []
    # a plan told in the past ("planned to launch in April", "was expected to close") may have been carried out,
    # or not, in words the rule does not read ("went on sale on June 12"): only a plan still open counts
    years = re.findall(r"\b\d{4}\b", low)
    planned = {(m.group("v") or m.group("v2")).lower(): m.group(0) for m in _FUTURE.finditer(clause.text)
               if not _PAST_PLAN.match(m.group(0)) and not _WAS.search(clause.text[max(0, m.start() - 12):m.start()])
               # a claim dated outside the plan's own phrase ("aims to cut ... by 2030, after reducing them
               # ... between 2015 and 2023") tells another event
               and all(y in clause.text[m.start():].split(",")[0] for y in years)}
    out = []
    for v in done:
        hit = next((planned[b] for b in _bases(v) if b in planned), None)
        if hit is not None:
            out.append(Overstatement(v, " ".join(hit.split()), clause.text))
    return out
