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
from collections.abc import Sequence
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


_SCALES = (
    _Scale("certain future", frozenset("will shall".split()), _MODAL_HEDGES),
    _Scale("obligation", frozenset("must required requires require mandatory compulsory obligatory".split()),
           # not "can": "Items must be unused." says what "Items can be returned ... if unused." does
           _MODAL_HEDGES | frozenset("optional optionally recommended recommends advised encouraged".split()),
           ("as needed", "if needed", "when needed", "if necessary", "as necessary")),
    _Scale("certainty", frozenset("always invariably automatically guaranteed guarantees guarantee definitely "
                                  "certainly surely".split()), _MODAL_HEDGES | frozenset({"can"}),
           ("in most cases", "in some cases", "in many cases")),
    _Scale("whole", frozenset("all every each entire entirely exclusively solely wholly".split()), _PARTS,
           ("in part", "in most cases", "in some cases", "the majority")),
)
#: words that hedge a claim on any scale (a claim that holds one is left to the model)
_ANY_HEDGE = _MODAL_HEDGES | _PARTS | frozenset("can should".split())

#: the clauses of a sentence: at semicolons and at a comma or contrast before a conjunction
_CLAUSES = re.compile(r"\s*;\s*|,\s+(?:and|but|while|whereas|whilst|although|though|so)\s+|"
                      r"\s+(?:but|while|whereas|whilst)\s+", re.IGNORECASE)
_WORD = re.compile(r"[a-z][a-z'\u2019-]*")
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


def context_clauses(index: ContextIndex) -> list[ContextClause]:
    """Every clause of every context sentence (read once per request, when a rule needs them)."""
    out = []
    for c, spans in enumerate(index.sentences):
        for span in spans:
            for clause in _clauses(span.of(index.contexts[c])):
                low = clause.lower()
                out.append(ContextClause(low, frozenset(_WORD.findall(low)), frozenset(content_stems(clause))))
    return out


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
    best, best_share = None, 0.0
    for clause in clauses:
        if len(clause.stems.intersection(stems)) < 2:
            continue
        share = index.overlap(stems, clause.stems)
        if share > best_share:
            best, best_share = clause, share
    return best if best_share >= 0.5 else None


def _hedged(clause: ContextClause, scale: _Scale) -> str | None:
    """The clause's hedge on ``scale``, when it holds one and no word of the scale's certainty."""
    if clause.words & scale.strong:
        return None
    hedge = next((w for w in sorted(clause.words & scale.hedges)), None)
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


def overstated(text: str, clauses: Sequence[ContextClause], index: ContextIndex,
               past_forms: frozenset[str]) -> tuple[Overstatement, ...]:
    """What a claim says more strongly than the context clause it is about (see the module docstring).
    ``past_forms``: every word of the contexts as written (a past form the contexts hold themselves is no
    overstatement: "... will close the plant. The plant closed in May.")."""
    out: list[Overstatement] = []
    for part in _clauses(text):
        low = part.lower()
        said = _WORD.findall(low)
        if not said:
            continue
        # a capitalized word inside the clause is a name ("Will Power won the race"), no word of certainty
        names = {w.lower() for w in _NAME.findall(part)}
        hedged_claim = bool(_ANY_HEDGE.intersection(said)) or "as needed" in low
        clause: ContextClause | None = None
        found = False
        if not hedged_claim:
            for scale in _SCALES:
                strong = next((w for w in said if w in scale.strong and w not in names), None)
                if strong is None:
                    continue
                if not found:
                    clause, found = _aligned(part, clauses, index), True
                if clause is None:
                    break
                hedge = _hedged(clause, scale)
                if hedge is not None:
                    out.append(Overstatement(strong, hedge, clause.text))
        out += _told_as_done(part, low, clauses, index, past_forms, clause if found else None, found)
    return tuple(out)


_PLAN_WORDS = frozenset("will would shall expects expected plans planned intends intended aims agreed set scheduled "
                        "due going hopes seeks proposes proposed pending promised pledged".split())


def _told_as_done(part: str, low: str, clauses: Sequence[ContextClause], index: ContextIndex,
                  past_forms: frozenset[str], clause: ContextClause | None, aligned: bool) -> list[Overstatement]:
    """A verb the claim puts in the past that its context clause puts in the future or in a plan."""
    said = set(_WORD.findall(low))
    if said & _PLAN_WORDS:
        return []
    done: list[str] = [m.group("v") for m in _PERFECT.finditer(low)]
    for m in _PAST.finditer(low):
        before = low[:m.start()].split()
        if not before or before[-1] not in _NOT_PAST_BEFORE:
            done.append(m.group("v"))
    # a past form the contexts hold themselves ("The plant closed in May.") is no overstatement; a form that is also
    # the base ("cut", "set") says nothing of the contexts' tense
    done = [v for v in dict.fromkeys(done) if v not in past_forms or _bases(v) == {v} or _IRREGULAR.get(v) == v]
    if not done:
        return []
    if not aligned:
        clause = _aligned(part, clauses, index)
    if clause is None:
        return []
    planned = {(m.group("v") or m.group("v2")).lower(): m.group(0) for m in _FUTURE.finditer(clause.text)}
    out = []
    for v in done:
        hit = next((planned[b] for b in _bases(v) if b in planned), None)
        if hit is not None:
            out.append(Overstatement(v, " ".join(hit.split()), clause.text))
    return out
