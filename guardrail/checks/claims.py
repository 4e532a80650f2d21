"""Short answers turned into the statement they make, before NLI reads them.

"Yes." means nothing on its own: against "Gift cards cannot be returned." it is neither entailed nor contradicted,
and "Q: Can gift cards be returned? A: Yes." reads to a small NLI model like the question's own words. An answer to a
question asserts a statement built from that question:

- a yes/no answer ("Yes.", "Sure!", "Correct.", "No, they cannot.", "Nope.") to a yes/no question
  ("Can gift cards be returned?") asserts the question's declarative form, negated for "no"
  ("Gift cards can be returned." / "Gift cards cannot be returned."); a negative question ("Isn't it free?") is
  answered as English speakers do ("Yes" = it is free);
- a short span ("Delhi", "$25", "in 1889") answering a wh-question ("What is the capital of India?", "When was the
  tower completed?") asserts the question with the span in the wh-word's place ("The capital of India is Delhi.").

Rule-based and cheap (no model, no parser): a small lexicon of auxiliaries, determiners, prepositions and common
verbs (:mod:`guardrail.checks.lexicon`) finds the subject. When the question's shape is not one of these,
``answer_claim`` returns None and the check falls back to reading "Q: ... A: ..." (``guardrail.text.qa_hypothesis``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from guardrail.checks.lexicon import (
    AUX,
    BE,
    BOUNDARY_WORDS,
    DETERMINERS,
    DO,
    HAVE,
    MODAL,
    MONTHS,
    NEG_AUX,
    NO,
    PERSON,
    PREPOSITIONS,
    PRONOUNS,
    VERBS,
    WH,
    YES,
    as_sentence,
    looks_verb,
    tokenize,
)
from guardrail.text import is_claim, is_refusal

__all__ = ["AnswerClaim", "answer_claim", "polarity", "yes_no_statement", "wh_statement"]


@dataclass(frozen=True, slots=True)
class AnswerClaim:
    """The statement an answer makes, and how it was built ("yes/no" or "wh-span")."""

    statement: str
    kind: str


def polarity(answer: str) -> tuple[bool | None, str]:
    """(True for yes / False for no / None, the rest of the answer after the yes/no word)."""
    text = answer.strip().replace("’", "'")
    low = text.lower()
    for words_, value in ((NO, False), (YES, True)):  # "no" first: "not really" must not read as yes
        for phrase in sorted(words_, key=len, reverse=True):
            if low == phrase or (low.startswith(phrase) and not low[len(phrase)].isalnum()):
                rest = text[len(phrase):].lstrip(" ,.!;:-—–")
                return value, rest
    return None, text


def yes_no_only(sentence: str) -> bool:
    """A sentence that is a bare yes/no word with pleasantries ("Absolutely!", "Of course!", "Sure thing."): it
    answers a yes/no question when the answer makes no claim, and is a pleasantry beside one."""
    value, rest = polarity(sentence)
    return value is not None and not is_claim(rest)


def makes_claim(sentence: str) -> bool:
    """A sentence that says something about the world: not pleasantries, not an honest refusal ("I could not find
    that in the documents."), not a bare yes/no word."""
    return is_claim(sentence) and not is_refusal(sentence) and not yes_no_only(sentence)


def _subject_end(tokens: list[str], aux_kind: str) -> int:
    """Index of the first token after the subject in the tokens that follow the question's auxiliary."""
    n = len(tokens)
    if n == 0:
        return 0
    first = tokens[0].lower()
    if first in PRONOUNS or first in PERSON:
        return 1
    i = 0
    if first in DETERMINERS:
        i = 1
    elif re.fullmatch(r"\d[\d,.]*", first):
        i = 1
    start = i
    # a proper name: a run of capitalised words (with "of"/"the"/"and" inside when a capital follows)
    if i < n and tokens[i][:1].isupper():
        j = i
        while j < n and (tokens[j][:1].isupper() or (tokens[j].lower() in {"of", "the", "and", "de", "'s"}
                                                      and j + 1 < n and tokens[j + 1][:1].isupper())):
            j += 1
        if j < n and tokens[j].lower() == "'s":  # possessive: "Einstein 's theory"
            return _subject_end(tokens[j + 1:], aux_kind) + j + 1 if j + 1 < n else j + 1
        if j < n and tokens[j - 1].lower().endswith("'s"):  # possessive: "Acme's headquarters"
            return j + _subject_end(tokens[j:], aux_kind)
        return j
    # a common noun phrase: words up to a boundary (preposition, determiner, participle, known verb, "be", ...)
    j = i
    while j < n:
        low = tokens[j].lower()
        if j > start and (low in PREPOSITIONS or low in DETERMINERS or low in BOUNDARY_WORDS or low in AUX
                          or low in NEG_AUX or not re.match(r"[A-Za-z]", low)):
            break
        if j > start and aux_kind != "be" and low in VERBS:
            break
        if j > start and aux_kind == "be" and re.search(r"[a-z]{2,}(ed|en|ing)$", low) and low not in VERBS:
            break
        j += 1
    if j == n or (j < n and tokens[j].lower() in PREPOSITIONS and aux_kind == "be" and j - start > 1):
        # no boundary found before the end, or "be" + "the store open on Sundays": the last word before the end or
        # the preposition is the predicate ("open"), the words before it the subject
        if aux_kind == "be" and j - start >= 2:
            return j - 1
        if aux_kind != "be" and j - start >= 2:
            return start + 1  # "Does the warranty cover ...": a determiner and one noun
    return max(j, start + 1)


def _person(tokens: list[str]) -> list[str]:
    out = []
    for k, tok in enumerate(tokens):
        low = tok.lower()
        rep = PERSON.get(low)
        if rep is None:
            out.append(tok)
        else:
            out.append(rep.capitalize() if k == 0 and tok[:1].isupper() else rep)
    return out


def _negated(aux: str) -> list[str]:
    return ["cannot"] if aux == "can" else [aux, "not"]


def _agree(aux: str, subject: list[str]) -> str:
    """Person agreement after the I -> you swap ("am I" -> "you are", "was I" -> "you were", "do I" -> "you do")."""
    if [w.lower() for w in subject] == ["you"]:
        return {"am": "are", "was": "were", "is": "are", "does": "do", "has": "have"}.get(aux, aux)
    return aux


def _split_question(question: str) -> tuple[str, bool, list[str], list[str]] | None:
    """(auxiliary, negated question, subject tokens, rest tokens) of a yes/no question, or None."""
    q = question.strip().replace("’", "'")
    q = re.sub(r"^(so|and|but|also|then|ok|okay|well|hey|hi|please|tell me|quick question)[,:]?\s+", "", q, flags=re.I)
    toks = tokenize(q.rstrip("?!. "))
    if len(toks) < 2:
        return None
    first = toks[0].lower()
    negq = False
    if first in NEG_AUX:
        aux, negq = NEG_AUX[first], True
    elif first in AUX:
        aux = first
    else:
        return None
    body = toks[1:]
    if body and body[0].lower() == "not":  # "Is not the store open?" (rare, formal)
        negq, body = True, body[1:]
    aux_kind = "be" if aux in BE else "do" if aux in DO else "have" if aux in HAVE else "modal"
    end = _subject_end(body, aux_kind)
    subject, rest = body[:end], body[end:]
    if rest and rest[0].lower() == "not":  # "Does it not include ...?"
        negq, rest = True, rest[1:]
    if not subject or (not rest and aux_kind != "be"):
        return None
    return aux, negq, subject, rest


def _clause(question: str, positive: bool | None = None) -> tuple[list[str], list[str], list[str]] | None:
    """(subject, verb, rest) of a yes/no question turned declarative, the asker's pronouns swapped; the verb is
    negated unless ``positive`` (None: as the question itself is, "Isn't it free?" -> "it is not free")."""
    parts = _split_question(question)
    if parts is None:
        return None
    aux, negq, subject, rest = parts
    subject = _person(subject)
    aux = _agree(aux, subject)
    if positive is None:
        positive = not negq
    # positive "do" stays emphatic ("does cover"): grammatical without inflecting the verb
    return subject, [aux] if positive else _negated(aux), _person(rest)


def yes_no_statement(question: str, yes: bool) -> str | None:
    """The statement a yes (``yes=True``) or no answer to ``question`` makes, or None for other question shapes.

    >>> yes_no_statement("Can gift cards be returned?", True)
    'Gift cards can be returned.'
    >>> yes_no_statement("Can gift cards be returned?", False)
    'Gift cards cannot be returned.'
    >>> yes_no_statement("Isn't the store open on Sundays?", True)
    'The store is open on Sundays.'
    """
    # a negative question is answered by the polarity of the statement: "Isn't it free?" "Yes" = it is free
    clause = _clause(question, positive=yes)
    return as_sentence(clause[0] + clause[1] + clause[2]) if clause else None


def wh_statement(question: str, answer: str) -> str | None:
    """The statement a short span answer to a wh-question makes, or None.

    >>> wh_statement("What is the capital of India?", "Delhi")
    'The capital of India is Delhi.'
    >>> wh_statement("Who wrote Hamlet?", "Shakespeare")
    'Shakespeare wrote Hamlet.'
    >>> wh_statement("When was the Eiffel Tower completed?", "1889")
    'The Eiffel Tower was completed in 1889.'
    """
    q = question.strip().replace("’", "'")
    toks = tokenize(q.rstrip("?!. "))
    ans = tokenize(answer.strip().rstrip(".!"))
    if len(toks) < 2 or not ans:
        return None
    wh = toks[0].lower()
    if wh not in WH or wh == "why":
        return None
    rest = toks[1:]
    nxt = rest[0].lower() if rest else ""
    if wh in ("what", "which", "who", "whom", "whose") and nxt in BE:
        # "What is X?" / "Who was the first X?" -> "X is A."
        subject = _person(rest[1:])
        if not subject:
            return None
        return as_sentence(subject + [nxt] + ans)
    if wh in ("what", "which", "who", "whose") and nxt not in AUX and nxt not in NEG_AUX:
        return _wh_subject(wh, rest, ans)
    if wh in ("when", "where") and (nxt in AUX or nxt in NEG_AUX):
        return _wh_time_place(wh, rest, ans)
    if wh == "how" and len(rest) >= 2 and rest[0].lower() in ("many", "much", "long", "old", "far", "often", "big"):
        # "How long is the warranty?" -> "The warranty is two years."; "How many X does Y have?" -> keep Q:A
        if rest[1].lower() in BE and len(rest) > 2:
            return as_sentence(_person(rest[2:]) + [rest[1].lower()] + ans)
        return None
    if wh in ("what", "who", "whom") and nxt in (DO | MODAL | HAVE):
        # "What did Einstein win in 1921?" -> "Einstein did win A in 1921."
        clause = _clause(" ".join(rest))
        if clause is None or not clause[2]:
            return None
        subject, verb, pred = clause
        return as_sentence(subject + verb + pred[:1] + ans + pred[1:])
    return None


def _wh_subject(wh: str, rest: list[str], ans: list[str]) -> str | None:
    """The answer to a wh-subject question: "Who wrote Hamlet?" -> "A wrote Hamlet."; "Which country hosted X?" ->
    "A hosted X."; "Which city are Acme's headquarters in?" -> "Acme's headquarters are in A."."""
    k = 0
    if wh in ("which", "what", "whose"):
        while k < len(rest) and rest[k].lower() not in AUX and not looks_verb(rest[k]):
            k += 1
        if k >= len(rest):
            return None
        if k >= 1 and rest[k].lower() in AUX and k + 1 < len(rest):
            # "Which city are Acme's headquarters in?" -> "Acme's headquarters are in Denver."
            clause = _clause(" ".join(rest[k:]))
            if clause is not None:
                subject, verb, pred = clause
                tail = ans
                if re.fullmatch(r"\d{3,4}s?", ans[0]) and (not pred or pred[-1].lower() not in PREPOSITIONS):
                    tail = ["in"] + ans  # "What year was the tower built?" + "1889"
                return as_sentence(subject + verb + pred + tail)
    return as_sentence(ans + _person(rest[k:]))


def _wh_time_place(wh: str, rest: list[str], ans: list[str]) -> str | None:
    """The answer to "When / where was X done?": "X was done in / on A." (a preposition added where A has none)."""
    clause = _clause(" ".join(rest))
    if clause is None:
        return None
    subject, verb, pred = clause
    place = ans
    if ans[0].lower() not in PREPOSITIONS:
        if wh == "where":
            place = ["in"] + ans
        elif re.fullmatch(r"\d{3,4}s?", ans[0]) or ans[0].lower() in MONTHS:
            place = ["in"] + ans
        elif re.fullmatch(r"\d{1,2}", ans[0]) and len(ans) > 1 and ans[1].lower() in MONTHS:
            place = ["on"] + ans
    return as_sentence(subject + verb + pred + place)


#: an echo after "yes"/"no" that restates nothing: "they can", "it isn't", "he did not", "that's right"
_ECHO = re.compile(
    r"^(?:(?:i|you|he|she|it|we|they|this|that|there|these|those)\s+"
    r"(?:(?:is|are|was|were|am|can|could|will|would|shall|should|may|might|must|do|does|did|has|have|had)"
    r"(?:\s*n't|\s+not)?|isn't|aren't|wasn't|weren't|can't|cannot|couldn't|won't|wouldn't|shouldn't|mustn't|"
    r"don't|doesn't|didn't|hasn't|haven't|hadn't)|that's\s+(?:right|correct|true)|it\s+is|not|of course|indeed|"
    r"absolutely|definitely|certainly|correct|right|true|sure)?\s*[.!]*$",
    re.I,
)


def answer_claim(question: str, answer: str) -> AnswerClaim | None:
    """The statement ``answer`` makes as an answer to ``question``, when the answer alone is no claim; else None.

    >>> answer_claim("Can gift cards be returned?", "No, they cannot.").statement
    'Gift cards cannot be returned.'
    >>> answer_claim("Can gift cards be returned?", "Yes, they can.").statement
    'Gift cards can be returned.'
    """
    if not question or not question.strip() or not answer.strip():
        return None
    value, rest = polarity(answer)
    if value is not None:
        rest_clean = rest.replace("’", "'").strip()
        if not _ECHO.match(rest_clean):
            # "No, gift cards cannot be returned.": the rest is a statement of its own, read as written;
            # "Yes, within 30 days": a qualifier, read after the question's statement
            if len(tokenize(rest_clean)) >= 4 and any(t.lower() in AUX | set(NEG_AUX) | VERBS or looks_verb(t)
                                                      for t in tokenize(rest_clean)):
                return None
            base = yes_no_statement(question, value)
            if base is None:
                return None
            return AnswerClaim(base[:-1] + ", " + rest_clean.rstrip(".!") + ".", "yes/no")
        # an echo that itself says "not" flips a bare yes ("Yes, it isn't" is rare and read as no)
        if value and re.search(r"n't|\bnot\b|cannot", rest_clean, re.I):
            value = False
        base = yes_no_statement(question, value)
        return AnswerClaim(base, "yes/no") if base else None
    toks = tokenize(answer.strip())
    if len(toks) <= 8 and not any(looks_verb(t) or t.lower() in AUX for t in toks[1:]):
        statement = wh_statement(question, answer)
        if statement:
            return AnswerClaim(statement, "wh-span")
    return None


# --------------------------------------------------------------------------- sub-claims of long sentences

_CONJ_SPLIT = re.compile(r"\s*;\s+|,\s+(?:and|but|while|whereas|although|though)\s+|\s+(?:and|but)\s+(?=(?:he|she|it|they|"
                         r"we)\s)", re.I)
_FINITE = AUX | set(NEG_AUX) | {"won", "wrote", "made", "built", "found", "led", "gave", "took", "became", "began",
                                "ran", "held", "sold", "left", "went", "came", "got", "said", "told", "moved", "died",
                                "married", "joined", "lived", "served", "played", "worked", "returned", "released", "fell",
                                "rose", "grew", "saw", "lost", "kept", "met", "paid", "spent", "sent", "felt",
                                "thought", "brought", "bought", "caught", "taught", "fought", "stood"}
_PRONOUN_SUBJECTS = {"he", "she", "it", "they", "we", "i", "you"}


def _has_verb(tokens: list[str]) -> bool:
    return any(t.lower() in AUX or t.lower() in NEG_AUX or looks_verb(t) for t in tokens)


def _subject_of(tokens: list[str]) -> list[str]:
    """The tokens before a clause's first verb (its subject, roughly), or [] when there is none."""
    for k, tok in enumerate(tokens):
        if k > 0 and (tok.lower() in AUX or tok.lower() in NEG_AUX or looks_verb(tok)):
            return tokens[:k]
    return []


def split_claims(sentence: str, *, min_words: int = 14, min_part_words: int = 4) -> list[str]:
    """A long sentence that joins several facts, as separate claims, each a sentence of its own; else [sentence].

    Split where clauses are joined (";", ", and", ", but", ", while", "and he/the ..."), when both sides hold a verb.
    A right-hand clause with no subject of its own ("..., and moved to Paris") takes the left clause's subject.
    Sentences shorter than ``min_words`` and parts shorter than ``min_part_words`` are kept whole: a fact is split off
    only when it can be read alone.

    >>> split_claims("The couple married in New York in December 2012, and their son, Bear, was born the next year.")
    ['The couple married in New York in December 2012.', 'Their son, Bear, was born the next year.']
    """
    text = sentence.strip()
    if len(text.split()) < min_words:
        return [text]
    pieces = [p.strip(" ,") for p in _CONJ_SPLIT.split(text) if p and p.strip(" ,")]
    if len(pieces) < 2:
        return [text]
    parts: list[str] = []
    subject: list[str] = []
    for k, piece in enumerate(pieces):
        toks = tokenize(piece)
        if len(toks) < min_part_words or not _has_verb(toks):
            return [text]
        if k == 0:
            subject = _subject_of(toks)
        else:
            first = toks[0].lower()
            if (first in AUX or first in NEG_AUX or looks_verb(toks[0])) and subject:
                toks = subject + toks  # "..., and moved to Paris" -> "<subject> moved to Paris"
            elif not (first in _PRONOUN_SUBJECTS or (
                    (toks[0][:1].isupper() or first in DETERMINERS) and any(t.lower() in _FINITE for t in toks[1:9]))):
                # not a clause with its own subject and a finite verb ("their son was born ..."): keep it whole
                return [text]
        parts.append(as_sentence(toks))
    return parts
