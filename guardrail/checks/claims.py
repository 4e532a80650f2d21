"""Short answers turned into the statement they make, before NLI reads them.

"Yes." means nothing on its own: against "Gift cards cannot be returned." it is neither entailed nor contradicted,
and "Q: Can gift cards be returned? A: Yes." reads to a small NLI model like the question's own words. An answer to a
question asserts a statement built from that question:

- a yes/no answer ("Yes.", "Sure!", "Correct.", "No, they cannot.", "Nope.") to a yes/no question
  ("Can gift cards be returned?") asserts the question's declarative form, negated for "no"
  ("Gift cards can be returned." / "Gift cards cannot be returned."); a negative question ("Isn't it free?") is
  answered as English speakers do ("Yes" = it is free). Hedges around the answer say neither ("Unfortunately, no.",
  "I'm afraid not.", "Good news: yes!"), a short echo of the auxiliary is the answer ("They can't.", "It is."), and
  so are the symbols that say yes or no ("👍", "✅", "❌", "🙅"): :func:`polarity`;
- a short span ("Delhi", "$25", "in 1889") answering a wh-question ("What is the capital of India?", "When was the
  tower completed?") asserts the question with the span in the wh-word's place ("The capital of India is Delhi.").

Rule-based and cheap (no model, no parser): a small lexicon of auxiliaries, determiners, prepositions and common
verbs (:mod:`guardrail.checks.lexicon`) finds the subject. When the question's shape is not one of these,
``answer_claim`` returns None and the check falls back to reading "Q: ... A: ..." (``guardrail.text.qa_hypothesis``).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from guardrail.checks.lexicon import (
    AUX,
    BE,
    BOUNDARY_WORDS,
    DETERMINERS,
    DO,
    ECHO_ADVERBS,
    ECHO_SUBJECTS,
    HAVE,
    HEDGES,
    MODAL,
    MONTHS,
    NEG_AUX,
    NEG_AUX_BARE,
    NO,
    NO_SYMBOLS,
    PERSON,
    DEMONYMS,
    PREPOSITIONS,
    PRONOUNS,
    SOFT_YES,
    UNSURE,
    VERBS,
    WEAK_ANSWER_WORDS,
    TOKEN,
    WH,
    YES,
    YES_SYMBOLS,
    as_sentence,
    join_tokens,
    looks_verb,
    tokenize,
)
from guardrail.text import content_stems, is_answer_fragment, is_claim, is_refusal, split_sentences

__all__ = ["AnswerClaim", "answer_claim", "conjunct_statements", "polarity", "yes_no_answer", "yes_no_statement",
           "wh_statement"]


@dataclass(frozen=True, slots=True)
class AnswerClaim:
    """The statement an answer makes, and how it was built ("yes/no" or "wh-span")."""

    statement: str
    kind: str


# --------------------------------------------------------------------------- reading a yes/no answer

#: apostrophes as typed or rendered ("can’t", "canʼt"): read as "'"
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\uff07": "'"})
#: characters that only decorate a yes/no symbol: variation selectors, joiner, skin tones, gender signs, keycap
_SYMBOL_MODIFIERS = frozenset("\ufe0e\ufe0f\u200d\u2640\u2642\u20e3") | frozenset(map(chr, range(0x1F3FB, 0x1F400)))
#: what a vote weighs: an echo of the question's auxiliary ("they can't") decides over a yes/no word, a word over a
#: symbol, and any of them over politeness ("Sure, no." / "OK, they can't."); an unsure phrase ("Not sure.",
#: "Maybe.") leaves the answer without a yes/no reading
_ECHO, _WORD, _SYMBOL, _SOFT, _UNSURE = 3, 2, 1, 0, -1
#: parts of an answer read from its start: more are left to the rest (a bound on the work per sentence)
_MAX_PARTS = 64


def _phrase(text: str) -> str:
    return r"\s+".join(re.escape(w) for w in text.split())


#: yes/no words and phrases, hedges and unsure phrases -> True / False / None (a hedge or an unsure phrase: no vote)
_PARTS: dict[str, bool | None] = {**{h: None for h in HEDGES}, **{y: True for y in YES if "," not in y},
                                  **{n: False for n in NO}, **{u: None for u in UNSURE}}
_PART = re.compile("(?:" + "|".join(_phrase(p) for p in sorted(_PARTS, key=len, reverse=True)) + r")(?![\w'])", re.I)
#: "Yesss", "Yeahh", "Nooo", "Nopee", "Nahh"
_ELONGATED = re.compile(r"(y+e+s+|y+e+a+h+|y+e+p+|y+u+p+|n+o+p+e+|n+a+h+|n+o+)(?![\w'])", re.I)
_ECHO_AUX = "|".join(re.escape(a) for a in sorted(AUX | set(NEG_AUX) | set(NEG_AUX_BARE), key=len, reverse=True))
_ECHO_ADV = "|".join(sorted(ECHO_ADVERBS, key=len, reverse=True))
#: a short answer that echoes the question's auxiliary: "They can't.", "It is not.", "You can.", "It's not.",
#: "They really can't.", "It can be."
_ECHO_PART = re.compile(
    rf"(?P<subj>{'|'.join(sorted(ECHO_SUBJECTS | {'i', 'we'}, key=len, reverse=True))})"
    rf"(?:\s+(?:{_ECHO_ADV}))?\s+(?P<aux>{_ECHO_AUX})(?P<neg>\s*n't|\s+not)?(?:\s+(?:{_ECHO_ADV}))?"
    rf"(?:\s+(?:be|been|do|have|done|had))?(?:\s+(?:{_ECHO_ADV}))?(?![\w'])"
    r"|(?P<subj2>it|that|there|he|she|they|you|we|i)'(?:s|re|ve|ll|d|m)\s+not(?![\w'])",
    re.I,
)


def _skippable(ch: str) -> bool:
    """Space, punctuation and decoration between the parts of an answer ("Yes!! 😊 They can.")."""
    if ch.isspace():
        return True
    if ch in YES_SYMBOLS or ch in NO_SYMBOLS:
        return False
    cat = unicodedata.category(ch)
    return cat[0] == "P" or cat in ("So", "Sk", "Cf", "Mn", "Me")


def _skip(text: str, pos: int) -> int:
    n = len(text)
    while pos < n and _skippable(text[pos]):
        pos += 1
    return pos


def _part(text: str, pos: int, after_vote: bool) -> tuple[int, tuple[bool, ...], int, bool] | None:
    """The answer part at ``pos``: (its end, its votes, their weight, whether it must stand before punctuation, the end
    or another part), or None when the text there is no part of a yes/no answer."""
    ch = text[pos]
    if ch in YES_SYMBOLS or ch in NO_SYMBOLS:  # a run of symbols: 👍, ✅✅, 🙅🏽♀, 👍 👍
        end, votes = pos, set()
        while end < len(text) and (text[end] in YES_SYMBOLS or text[end] in NO_SYMBOLS or text[end] in
                                   _SYMBOL_MODIFIERS or text[end] == " "):
            if text[end] in YES_SYMBOLS or text[end] in NO_SYMBOLS:
                votes.add(text[end] in YES_SYMBOLS)
            end += 1
        return end, tuple(sorted(votes)), _SYMBOL, False
    if not ch.isalpha():
        return None
    m = _PART.match(text, pos)
    if m:
        word = " ".join(m.group().lower().split())
        value = _PARTS[word]
        weak = word in WEAK_ANSWER_WORDS
        if value is None:
            return m.end(), (), _UNSURE if word in UNSURE else _WORD, weak
        return m.end(), (value,), _SOFT if word in SOFT_YES else _WORD, weak
    m = _ELONGATED.match(text, pos)
    if m:
        word = m.group().lower()
        return m.end(), (word[0] == "y",), _WORD, re.fullmatch("n+o+", word) is not None
    m = _ECHO_PART.match(text, pos)
    if m and (after_vote or (m.group("subj") or m.group("subj2")).lower() in ECHO_SUBJECTS):
        aux = (m.group("aux") or "").lower()
        negative = bool(m.group("subj2") or m.group("neg") or aux in NEG_AUX or aux in NEG_AUX_BARE)
        return m.end(), (not negative,), _ECHO, True
    return None


def _scan(text: str) -> tuple[list[tuple[int, bool]], int]:
    """The yes/no votes at the start of ``text`` as (weight, value), and where the rest of the answer starts: the
    first word after the last vote that is no part of a yes/no answer (the end when only hedges follow)."""
    votes: list[tuple[int, bool]] = []
    n = len(text)
    pos = _skip(text, 0)
    rest = n
    for _ in range(_MAX_PARTS):
        if pos >= n:
            return votes, n
        part = _part(text, pos, bool(votes))
        if part is None:
            break
        end, values, weight, weak = part
        if weight == _UNSURE:
            return [], 0
        nxt = _skip(text, end)
        # "No, ..." / "No they can't" / "Not." answer; "No gift cards ...", "Not every ...", "Right now" do not
        if weak and nxt < n and not text[end:nxt].strip() and _part(text, nxt, True) is None:
            break
        if values:
            votes.extend((weight, v) for v in values)
            rest = nxt
        pos = nxt
    return votes, (rest if votes else 0)


#: dismay that opens a reply: "Oh no, poor thing!"
_OH_NO = re.compile(r"(?i)\W*(?:oh|ah|aw+)\s+no+\b(?!\s*,?\s*(?:it|they|you|that|this|gift|items?|we)\b)")


def polarity(answer: str) -> tuple[bool | None, str]:
    """(True for yes / False for no / None, the rest of the answer after its yes/no part).

    A yes/no answer is read from the start of the answer: yes/no words and phrases ("Yes", "Nope", "Of course not",
    "For sure"), the symbols and emoji that say them (👍 ✅ ✔ ☑ 👌 💯 🆗 / 👎 ❌ ✗ 🙅 🚫 ⛔), short echoes of the
    question's auxiliary ("They can't.", "It is not."; "I" and "we" only after a yes/no word), and the hedges around
    them that say neither ("Unfortunately", "I'm afraid", "Good news:", "sorry"). An echo decides over a word ("Yes,
    they cannot." is a no), a word over a symbol, any of them over politeness ("Sure, no."); an answer that says both
    at the same weight ("👍👎") or says it is unsure ("Not sure.", "Maybe.", "Yes and no.") reads as None. Words that
    are ordinary words too ("No gift cards ...", "Right now ...", "Not every ...") answer only before punctuation,
    the end or another part of the answer.

    >>> polarity("Unfortunately, no.")
    (False, '')
    >>> polarity("👍")
    (True, '')
    >>> polarity("They can’t.")
    (False, '')
    >>> polarity("No gift cards can be returned.")[0] is None
    True
    """
    if _OH_NO.match(answer):  # "Oh no, poor thing!", "Oh no!": dismay, not a no (what follows is judged as written)
        return None, answer
    text = answer.strip().translate(_APOSTROPHES)
    votes, start = _scan(text)
    if not votes:
        return None, text
    top = max(w for w, _ in votes)
    values = {v for w, v in votes if w == top}
    if len(values) != 1:
        return None, text
    return values.pop(), text[start:].strip()


def yes_no_answer(sentence: str) -> bool:
    """A sentence that is a yes/no answer and nothing more: its yes/no words, symbols or echo with the hedges and
    pleasantries around them ("Unfortunately, no.", "👍", "They can't.", "Absolutely!"). It makes no claim of its own:
    where the answer makes no claim, it is read with the question as that answer."""
    value, rest = polarity(sentence)
    return value is not None and not is_claim(rest)


def yes_no_only(sentence: str) -> bool:
    """A yes/no answer that is also a pleasantry ("Absolutely!", "Of course!", "Sure thing.", "👍"): it answers a
    yes/no question when the answer makes no claim, and is a pleasantry beside one (a stream holds it until it knows
    which). An answer read as one wherever it stands is not: a bare answer word ("Yes.", "No, they can.") or words no
    pleasantry has ("Unfortunately not.", "They can't."); a stream checks it as it comes, as a whole answer does."""
    return yes_no_answer(sentence) and not is_claim(sentence) and not is_answer_fragment(sentence)


_ADDITIVE_LEAD = ("and also", "and", "also", "including", "plus", "even", "same for", "likewise", "as do", "as does")
_ADDITIVE_TAIL = ("as well", "too", "also", "alike")
_NEGATIVE_LEAD = ("but not", "except for", "except", "excluding", "apart from", "other than", "not even", "not")
_NEGATIVE_TAIL = ("not", "excluded", "excepted")


def _strip_words(text: str, words: tuple[str, ...], lead: bool) -> tuple[str, bool]:
    low = text.lower()
    for w in words:
        if lead and (low == w or low.startswith(w + " ")):
            return text[len(w):].strip(" ,"), True
        if not lead and (low == w or low.endswith(" " + w)):
            return text[: len(text) - len(w)].strip(" ,"), True
    return text, False


#: the longest sentence read as an ellipsis of the one before it
ELLIPSIS_MAX_WORDS = 8


def is_elliptical(sentence: str) -> bool:
    """A short sentence with no verb that is no yes/no answer: "Gift cards too.", "Also on weekends.", "Within 90
    days.". Alone it asserts nothing a model can check (it mentions gift cards: entailed by any context that does);
    what it claims is the sentence before it with a part replaced or added, so it is read after that sentence."""
    toks = [t for t in tokenize(sentence) if any(c.isalnum() for c in t)]
    if not 0 < len(toks) <= ELLIPSIS_MAX_WORDS or not is_claim(sentence) or is_refusal(sentence):
        return False
    # a verb: an auxiliary, or a verb form that no determiner or name comes right before ("The Basic plan too.": a noun)
    if any(t.lower() in AUX or t.lower() in NEG_AUX or (looks_verb(t) and not (k and (toks[k - 1].lower() in DETERMINERS
                                                                                    or toks[k - 1][:1].isupper())))
           for k, t in enumerate(toks)):
        return False
    if polarity(sentence)[0] is not None:
        return False
    # an ellipsis says what it adds to or takes from the sentence before ("too", "also", "except", "not"), or adds a
    # circumstance to it ("Within 90 days."); a bare noun phrase ("Contact Maria Lopez.") may be anything
    core = sentence.strip().rstrip(".!;").strip()
    marked = any(_strip_words(core, words, lead)[1] for words, lead in (
        (_ADDITIVE_LEAD, True), (_ADDITIVE_TAIL, False), (_NEGATIVE_LEAD, True), (_NEGATIVE_TAIL, False)))
    return marked or toks[0].lower() in PREPOSITIONS


#: what a pronoun ellipsis ("Those too.", "Same for them.", "Same here.") may be made of besides its additive or
#: negative mark
_PRONOUN_ELLIPSIS = frozenset("those these they them it that this ones one the same for goes applies to here".split())


_REPLY_EDGE = re.compile(r"(?i)^(?:yes|yeah|yep|sure|absolutely|of\s+course|indeed|definitely|certainly)\b[\s,!.]*"
                         r"|[\s,]+(?:yes|yeah|yep|sure|absolutely|of\s+course|indeed|definitely|certainly)$")


def pronoun_ellipsis(sentence: str) -> bool | None:
    """A sentence that is a pronoun and an additive or negative mark, no more ("Those too.", "They also.", "Same for
    them.", "Those not."): True when it adds its referent to what was said (a yes), False when it takes it out (a
    no), None for any other sentence. Alone it names nothing; after a yes/no question it answers it, of the
    question's subject (:func:`yes_no_statement`)."""
    core = sentence.strip().rstrip(".!;").strip()
    if not core or len(core) > 48:
        return None
    core = _REPLY_EDGE.sub("", core).strip(" ,")  # "Yes, those too.", "Those too, yes."
    rest, add_lead = _strip_words(core, _ADDITIVE_LEAD, lead=True)
    rest, add_tail = _strip_words(rest, _ADDITIVE_TAIL, lead=False)
    rest, neg_lead = _strip_words(rest, _NEGATIVE_LEAD, lead=True)
    rest, neg_tail = _strip_words(rest, _NEGATIVE_TAIL, lead=False)
    toks = [t.lower() for t in tokenize(rest) if any(c.isalnum() for c in t)]
    marked = add_lead or add_tail or neg_lead or neg_tail or "same" in toks
    if not marked or not toks or not set(toks) <= _PRONOUN_ELLIPSIS or not set(toks) - {"the", "for", "to", "goes",
                                                                                        "applies", "here"}:
        return None
    return not (neg_lead or neg_tail)


_ECHO_LEAD = re.compile(r"(?i)^(?:(?:and|but|so|now)\s*,?\s+)?(?:(?:what|how)\s+about|as\s+for|regarding)\s+")


def echoed_subject(sentence: str) -> str | None:
    """The noun phrase a short question names ("Gift cards?", "What about express shipping?" -> "express
    shipping"), the referent of a pronoun ellipsis after it; None for any other sentence."""
    t = sentence.strip()
    if not t.endswith("?"):
        return None
    core = _ECHO_LEAD.sub("", t.rstrip("?").strip()).strip(" ,")
    toks = [x for x in tokenize(core) if any(c.isalnum() for c in x)]
    if not 0 < len(toks) <= 5 or any(x.lower() in AUX or x.lower() in NEG_AUX for x in toks):
        return None
    return core


def resolve_ellipsis(prior: str, fragment: str) -> str | None:
    """The statement an elliptical sentence makes after ``prior``, or None when its shape is not read:

    >>> resolve_ellipsis("Items can be returned within 30 days of delivery.", "Gift cards too.")
    'Gift cards can be returned within 30 days of delivery.'
    >>> resolve_ellipsis("Items can be returned within 30 days of delivery.", "Except gift cards.")
    'Gift cards cannot be returned within 30 days of delivery.'
    >>> resolve_ellipsis("Items can be returned.", "Within 90 days.")
    'Items can be returned within 90 days.'

    A noun phrase takes the place of the prior sentence's subject (negated after "not", "except"...: "Gift cards
    not."); a prepositional phrase is added to the prior sentence ("Also on weekends.")."""
    core = fragment.strip().rstrip(".!;").strip()
    core, _ = _strip_words(core, _ADDITIVE_LEAD, lead=True)
    core, _ = _strip_words(core, _ADDITIVE_TAIL, lead=False)
    core, neg_lead = _strip_words(core, _NEGATIVE_LEAD, lead=True)
    core, neg_tail = _strip_words(core, _NEGATIVE_TAIL, lead=False)
    negative = neg_lead or neg_tail
    toks = tokenize(core)
    ptoks = tokenize(prior.strip().rstrip(".!").strip())
    if not toks or not ptoks:
        return None
    if toks[0].lower() in PREPOSITIONS:  # an adjunct: "Within 90 days.", "Also on weekends."
        if not negative:
            return as_sentence(ptoks + [toks[0].lower(), *toks[1:]])
        if not _EXCEPTION.match(fragment.strip()):
            return None
        # an exception to the prior sentence holds its opposite there: "Gift cards cannot be returned. Except within
        # 30 days." -> "Gift cards can be returned within 30 days."
        flipped = negate(join_tokens(ptoks))
        return as_sentence(tokenize(flipped.rstrip(".!")) + [toks[0].lower(), *toks[1:]]) if flipped else None
    found = claim_subject(prior)
    subject = tokenize(found) if found else _subject_of(ptoks)
    if not subject or ptoks[: len(subject)] != subject:
        return None
    predicate = ptoks[len(subject):]
    if negative:
        if "," in predicate:  # "Not gift cards." after "Refunds are issued, within 5 days.": the adjunct is not negated
            predicate = predicate[:predicate.index(",")]
        first = predicate[0].lower()
        if first in NEG_AUX:  # the prior is negative: "not" flips it back
            predicate = [NEG_AUX[first], *predicate[1:]]
        elif first in AUX:
            predicate = [*_negated(first), *predicate[1:]]
        else:
            return None
    lead = toks[0]
    if lead.lower() in DETERMINERS or lead[:1].islower():
        toks = [lead[:1].upper() + lead[1:], *toks[1:]]
    return as_sentence(toks + predicate)


def vp_ellipsis(prior: str, fragment: str) -> str | None:
    """The statement a sentence that ends at its auxiliary makes after ``prior`` ("The Basic plan does not." after
    "The Pro plan includes priority support." -> "The Basic plan does not include priority support."; "Gift cards
    cannot." after "Items can be returned." -> "Gift cards cannot be returned."), or None for other shapes.

    >>> vp_ellipsis("The Pro plan includes priority support.", "The Basic plan does not.")
    'The Basic plan does not include priority support.'
    >>> vp_ellipsis("Items can be returned within 30 days.", "Gift cards can too.")
    'Gift cards can be returned within 30 days.'
    """
    if not fragment.rstrip().endswith((".", "!")):
        return None  # a piece that ends without a full stop is no sentence ("Gift cards can" cut at a field's end)
    toks = [t for t in tokenize(fragment.strip().rstrip(".!;").strip())]
    while toks and toks[-1].lower() in ("too", "either", "as", "well", ","):
        toks = toks[:-1]
    neg = bool(toks) and toks[-1].lower() == "not"
    if neg:
        toks = toks[:-1]
    if len(toks) < 2 or len(toks) > 7 or toks[-1].lower() not in AUX | set(NEG_AUX) or any(
            t.lower() in AUX or t.lower() in NEG_AUX or not re.fullmatch(r"[\w'&.-]+", t) for t in toks[:-1]):
        return None
    subject, aux = toks[:-1], toks[-1]
    if any(t.lower() in PRONOUNS or t.lower() in PERSON for t in subject) or not any(t[:1].isalpha() for t in subject):
        return None
    found = claim_subject(prior)
    ptoks = tokenize(prior.strip().rstrip(".!").strip())
    if not found or ptoks[: len(tokenize(found))] != tokenize(found):
        return None
    predicate = ptoks[len(tokenize(found)):]
    if not predicate:
        return None
    first = predicate[0].lower()
    if first in AUX or first in NEG_AUX:
        rest = predicate[1:]
        if rest and rest[0].lower() == "not":
            rest = rest[1:]
    elif aux.lower() in ("do", "does", "did", "don't", "doesn't", "didn't") and re.fullmatch(r"[a-z]+", first):
        base = first[:-3] + "y" if first.endswith("ies") else first[:-2] if re.search(r"(?:s|sh|ch|x|z)es$", first) \
            else first[:-1] if first.endswith("s") and not first.endswith("ss") else first
        if base.endswith("ed"):
            return None  # a past form: its base is not read
        rest = [base, *predicate[1:]]
    else:
        return None
    if not rest:
        return None
    lead = subject[0]
    subject = [lead[:1].upper() + lead[1:], *subject[1:]]
    return as_sentence(subject + [aux] + (["not"] if neg else []) + rest)


#: the marks of an exception ("Except within 30 days.", "But not after 30 days."), not of a plain negation ("Not
#: after 30 days.")
_EXCEPTION = re.compile(r"(?i)(?:and\s+|also\s+)?(?:except(?:\s+for)?|but\s+not|excluding|apart\s+from|other\s+than|"
                        r"unless)\b")


def negate(statement: str) -> str | None:
    """The statement with its first auxiliary's polarity flipped, or None when it has no auxiliary after its subject
    (a lexical verb would need its base form: "includes" -> "does not include").

    >>> negate("Gift cards cannot be returned.")
    'Gift cards can be returned.'
    >>> negate("they can be returned within 30 days")
    'They cannot be returned within 30 days.'
    >>> negate("The plan is not free.")
    'The plan is free.'
    """
    toks = tokenize(statement.strip().rstrip(".!").strip())
    subject = claim_subject(statement)
    skip = len(tokenize(subject)) if subject else 1
    if "never" in (t.lower() for t in toks[1:]):  # "Dr. Jones never works on Mondays." -> "Dr. Jones works ..."
        k = next(i for i, t in enumerate(toks) if i and t.lower() == "never")
        return as_sentence([*toks[:k], *toks[k + 1:]])
    for k, tok in enumerate(toks):
        low = tok.lower()
        if k < skip:
            continue
        if low == "never":  # "Dr. Jones never works on Mondays." -> "Dr. Jones works on Mondays."
            return as_sentence([*toks[:k], *toks[k + 1:]])
        if low in NEG_AUX or low in NEG_AUX_BARE:
            return as_sentence([*toks[:k], (NEG_AUX.get(low) or NEG_AUX_BARE[low]), *toks[k + 1:]])
        if low in AUX:
            if k + 1 < len(toks) and toks[k + 1].lower() == "not":
                return as_sentence([*toks[:k], tok, *toks[k + 2:]])
            return as_sentence([*toks[:k], *_negated(low), *toks[k + 1:]])
        if looks_verb(tok) and not tok[:1].isupper():
            return None
    return None


#: a frame that denies the claim after it: "It is not true that X", "It's not the case that X", "Not true that X",
#: "It is false that X", "There is no way (that) X"
_ADVERB = r"(?:\s+(?:simply|just|certainly|definitely|absolutely|really|actually|clearly|plainly))?"
_DENIED = re.compile(
    r"(?i)\s*(?:(?:it|that|this)(?:'s|\s+is|\s+was)" + _ADVERB + r"\s+not|(?:it|that|this)\s+(?:isn't|wasn't|isnt|wasnt)|"
    r"not|(?:it|that|this)(?:'s|\s+is|\s+was)" + _ADVERB + r"\s+(?:false|untrue|incorrect|wrong|a\s+myth|a\s+mistake|"
    r"a\s+misconception))"
    r"(?:\s+(?:at\s+all|really|quite|entirely))?\s*(?:true|correct|right|accurate|so|the\s+case|fair\s+to\s+say)?"
    r"\s*(?:,\s*|\s+)that\s+(?P<claim>.+)"
    r"|\s*there\s+is\s+no\s+way\s+(?:that\s+)?(?P<claim2>.+)"
    r"|\s*it\s+(?:would|will)\s+be\s+(?:wrong|incorrect|false|inaccurate|a\s+mistake|misleading|untrue)\s+to\s+"
    r"(?:say|claim|state|think|suggest|assume)\s+(?:that\s+)?(?P<claim3>.+)"
    r"|\s*(?:nobody|no\s+one|none\s+of\s+the\s+\w+)\s+(?:says|claims|states|thinks|believes|suggests)\s+(?:that\s+)?"
    r"(?P<claim4>.+)"
    r"|\s*(?:i|we)\s+(?:doubt|deny|dispute)\s+(?:that\s+)?(?P<claim5>.+)"
    # a rhetorical question that denies: "Who says gift cards can't be returned?"
    r"|\s*who\s+(?:says|said|claims|claimed|told\s+you|thinks|ever\s+said)\s+(?:that\s+)?(?P<claim6>[^?]+?)\s*\?+")
_OPINION = (r"(?:(?:i|we)\s*(?:(?:really|strongly|do|honestly|personally)\s+)?(?:believe|think|feel|guess|suppose|"
            r"reckon|assume|understand|expect|would\s+say|'d\s+say|(?:am|'m|are|'re)\s+(?:pretty\s+|fairly\s+|quite\s+|"
            r"very\s+|almost\s+)?(?:sure|certain|confident|positive))|my\s+(?:guess|understanding|impression|sense)\s+is)")
#: a frame that asserts the claim after it: "It is true that X", "It is the case that X"; an opinion or a hedge
#: ("If you ask me, X", "I believe X", "As far as I know, X"); a question that presupposes it ("Did you know X?",
#: "Isn't it great that X?"); an uncertainty or a refusal before "but" ("I'm not sure, but X")
_AFFIRMED = re.compile(
    r"(?i)\s*(?:it|that|this)(?:'s|\s+is)\s+(?:true|correct|right|the\s+case|so)\s*,?\s+that\s+(?P<claim>.+)"
    r"|\s*(?:(?:if\s+you\s+ask\s+me|in\s+my\s+(?:honest\s+)?(?:opinion|view|experience|understanding)|personally|"
    r"to\s+my\s+knowledge|as\s+far\s+as\s+(?:i|we)\s+(?:know|can\s+tell)|from\s+what\s+(?:i|we)\s+(?:know|understand|"
    r"can\s+tell|(?:have\s+)?read)|honestly|frankly|to\s+be\s+(?:honest|fair|clear)|believe\s+it\s+or\s+not|"
    r"interestingly|surprisingly|fun\s+fact|in\s+fact|actually)\s*[,:\u2014-]?\s+)?"
    + _OPINION + r"\s*,?\s+(?:that\s+)?(?P<claim2>.+)"
    r"|\s*(?:if\s+you\s+ask\s+me|in\s+my\s+(?:honest\s+)?(?:opinion|view|experience|understanding)|personally|"
    r"to\s+my\s+knowledge|as\s+far\s+as\s+(?:i|we)\s+(?:know|can\s+tell)|from\s+what\s+(?:i|we)\s+(?:know|understand|"
    r"can\s+tell|(?:have\s+)?read)|believe\s+it\s+or\s+not|fun\s+fact)\s*[,:\u2014-]?\s+(?P<claim3>.+)"
    r"|\s*(?:did|do)\s+you\s+know\s+(?:that\s+)?(?P<claim4>[^?]+?)\s*\?+"
    r"|\s*(?:isn't|is\s+it\s+not|wasn't|ain't)\s+it\s+(?:great|nice|good|wonderful|amazing|cool|true|interesting|"
    r"convenient|handy|lucky|fortunate)\s+that\s+(?P<claim5>[^?]+?)\s*\?+"
    r"|\s*(?:i'm|i\s+am|we're|we\s+are)\s+not\s+(?:entirely\s+|completely\s+|totally\s+|100%\s+)?(?:sure|certain)"
    r"(?:\s+(?:about\s+(?:that|this|it)|if\s+(?:that|this|it)\s+helps))?\s*,\s*but\s+(?P<claim6>.+)")
#: the refusal before "but" of a sentence ("I couldn't find that in the documents, but X"): X is the claim
_BUT = re.compile(r"(?i)(?P<lead>.+?),?\s+but\s+(?P<claim>.+)")


def framed_claim(sentence: str) -> tuple[str, bool] | None:
    """(the claim a "that"-frame speaks of, True when it asserts it / False when it denies it), or None: "It is not
    true that gift cards cannot be returned." denies "gift cards cannot be returned". It is no yes/no answer (the
    "It is not" is no echo of the question): it claims the opposite of what follows."""
    text = sentence.strip().replace("\u2019", "'")
    m = _DENIED.fullmatch(text)
    if m:
        claim = next(g for g in (m.group(f"claim{n}") for n in ("", "2", "3", "4", "5", "6")) if g)
        return _as_statement(claim), False
    m = _AFFIRMED.fullmatch(text)
    if m:
        claim = next(g for g in (m.group(f"claim{n}") for n in ("", "2", "3", "4", "5", "6")) if g)
        return _as_statement(claim), True
    m = _BUT.fullmatch(text)
    if m and is_refusal(m.group("lead").strip().rstrip(",")):
        return _as_statement(m.group("claim")), True
    m = _NAV.fullmatch(text)
    if m and claim_subject(m.group("claim")) is not None and any(
            t.lower() in AUX or t.lower() in NEG_AUX for t in tokenize(m.group("claim"))):
        # "See [gift cards can be returned within 30 days](https://...)." claims what the link's text says
        return _as_statement(m.group("claim")), True
    return None


#: a pointer to more reading before a clause (a link's text, rendered): "See ...", "Read more: ..."
_NAV = re.compile(r"(?i)\s*(?:see(?:\s+also)?|refer\s+to|(?:read|learn)\s+more\s*:|more\s+info(?:rmation)?\s*:|"
                  r"details\s*:|sources?\s*:)\s+(?P<claim>.+)")
#: "The same applies to gift cards.", "Ditto for gift cards.": an ellipsis of what was said before
_SAME_FOR = re.compile(
    r"(?i)\s*(?:(?:and\s+|but\s+)?(?:the\s+same|same|this|that|it)\s+(?:also\s+)?(?:applies|apply|goes|holds|is\s+true|"
    r"counts)\s+(?:also\s+)?(?:to|for|of|with)|ditto\s+(?:for|with)|same\s+(?:for|with|goes\s+for)|likewise\s+(?:for|with)"
    r")\s+(?P<np>[^.!?,;]{1,60}?)(?:\s+(?:too|as\s+well|also))?\s*(?:[,;].*)?[.!]*")


def same_for(sentence: str) -> str | None:
    """"The same applies to gift cards." -> "Gift cards too." (read after the claim before it), else None."""
    m = _SAME_FOR.fullmatch(sentence.strip())
    if m is None:
        return None
    np = m.group("np").strip()
    return f"{np[:1].upper()}{np[1:]} too."


def _as_statement(claim: str) -> str:
    """A claim cut out of a frame, as a sentence: "gift cards can't be returned?" -> "gift cards can't be returned."."""
    claim = claim.strip().rstrip("?").rstrip()
    return claim if claim.endswith((".", "!")) else claim + "."


_NEGATIVE_WORDS = frozenset("no not never none nothing cannot".split()) | frozenset(NEG_AUX)
_INCLUDING = r"including|incl\.|such\s+as|e\.\s?g\.,?|eg|for\s+example|for\s+instance|like|especially|particularly|notably"
_EXCLUDING = r"except(?:\s+for)?|excluding|but\s+not|other\s+than|apart\s+from|not\s+including|besides"
#: a subject with an aside that names members of it: "Items (including gift cards) can be returned.", "Items, such as
#: gift cards, can ...", "Items (except gift cards) can ..."
_ASIDE = re.compile(
    r"(?is)(?P<subject>[^,()\[\]]{2,80}?)\s*(?:\(\s*(?P<kw>" + _INCLUDING + "|" + _EXCLUDING + r")\s+(?P<members>[^()]{1,80}?)"
    r"\s*\)|,\s*(?P<kw2>" + _INCLUDING + "|" + _EXCLUDING + r")\s+(?P<members2>[^,()]{1,80}?)\s*,)\s+(?P<predicate>\S.*)")


def aside_claims(sentence: str) -> list[str] | None:
    """The claims of a sentence whose subject carries an aside naming some of its members: the sentence without the
    aside, and what it says of the members: "Items (including gift cards) can be returned within 30 days." ->
    "Items can be returned within 30 days." and "Gift cards can be returned within 30 days."; with "except" the
    members' claim is negated ("Gift cards cannot be returned within 30 days."). None when the sentence has no such
    aside, or its predicate has no auxiliary to negate for an exception.

    >>> aside_claims("Items (including gift cards) can be returned within 30 days.")
    ['Items can be returned within 30 days.', 'Gift cards can be returned within 30 days.']
    >>> aside_claims("Items, except gift cards, can be returned.")
    ['Items can be returned.', 'Gift cards cannot be returned.']
    """
    m = _ASIDE.fullmatch(sentence.strip())
    if m is None:
        return None
    subject, predicate = m.group("subject").strip(), m.group("predicate").strip()
    kw = (m.group("kw") or m.group("kw2") or "").lower()
    members = (m.group("members") or m.group("members2") or "").strip().rstrip(".,;")
    subject_toks = [t.lower() for t in tokenize(subject)]
    if not members or not claim_subject(f"{subject} {predicate}") or len(subject_toks) > SUBJECT_MAX_TOKENS or any(
            t in AUX or t in NEG_AUX or t in BE for t in subject_toks) or \
            tokenize(members)[0].lower() in PREPOSITIONS | {"of"}:
        return None  # the aside is not on the subject ("Returns, especially of gift cards, ...", "Refunds are issued
        #              (like all payments) within 5 days.")
    main = f"{subject} {predicate}"
    of_members = f"{members[:1].upper()}{members[1:]} {predicate}"
    if tokenize(members)[0].lower() in PRONOUNS:
        return None  # "like I mentioned": no member of the subject
    if re.fullmatch(_EXCLUDING, kw, flags=re.I):
        if _NEGATIVE_WORDS & {t.lower() for t in tokenize(predicate)}:
            return None  # "(except Premium) have no monthly fee": an exception to a negative claim is not read
        negated = negate(of_members)
        if negated is None:
            return None
        of_members = negated[:1].upper() + negated[1:]
    return [main[:1].upper() + main[1:], of_members]


_BECAUSE = re.compile(r"(?is)(?P<main>.+?),?\s+because\s+(?!of\b)(?P<why>\S.*)")


def reason_claims(sentence: str) -> list[str] | None:
    """The two claims of a sentence that gives a reason: what it says, and the reason as a statement of its own ("Gift
    cards cannot be returned because they are treated as cash." -> "Gift cards cannot be returned." and "Gift cards
    are treated as cash."). Read whole, the model entails the sentence from the first fact alone (0.70): the reason,
    which no passage states, rides along. None when either side is no clause with a verb ("because of the fee"), the
    main clause has no subject of its own, or a pronoun in the reason points at nothing the main clause names.

    >>> reason_claims("Gift cards cannot be returned because they are treated as cash.")
    ['Gift cards cannot be returned.', 'Gift cards are treated as cash.']
    >>> reason_claims("Refunds are issued because of the fee.") is None
    True
    """
    m = _BECAUSE.fullmatch(sentence.strip())
    if m is None:
        return None
    main, why = m.group("main").strip().rstrip(",;:"), m.group("why").strip()
    main_toks, why_toks = tokenize(main), tokenize(why)
    if len(main_toks) < 3 or len(why_toks) < 3 or not _has_verb(main_toks) or not _has_verb(why_toks):
        return None
    subject = claim_subject(main)
    if subject is None or subject.lower() in PRONOUNS or "because" in why.lower().split():
        return None
    if _POINTING_WORD.search(why):
        resolved = resolve_pronouns(why, [subject])
        if resolved is None or _POINTING_WORD.search(resolved):
            return None
        why = resolved
    return [as_sentence(main_toks), as_sentence(tokenize(why))]


_POINTING_WORD = re.compile(r"(?i)\b(?:it|its|they|them|their|this|these|those|he|she|him|her)\b")


#: adjectives that start a predicate with no subject ("Free for members.", "Available on the Pro plan.")
_PREDICATE_ADJECTIVES = frozenset("free available eligible included excluded valid invalid open closed required "
                                  "optional subject due possible allowed permitted prohibited forbidden mandatory "
                                  "compatible incompatible covered exempt entitled liable responsible able unable "
                                  "non-refundable nonrefundable refundable returnable".split())
#: labels that introduce a whole statement, not a subject ("Note: ...", "Short answer: ...")
_DISCOURSE_LABELS = frozenset("note notes tip tips important warning caution summary answer update tldr tl;dr "
                              "conclusion result bottom line short long key point fyi ps p.s reminder example "
                              "source sources reference step details info information".split())


def _noun_label(label: str) -> bool:
    """A short noun phrase that can be a subject: "Gift cards", "The Basic plan", "Priority support"."""
    toks = [t for t in tokenize(label) if t[:1].isalnum()]
    low = [t.lower() for t in toks]
    return (0 < len(toks) <= 5 and not any(t in AUX or t in NEG_AUX or t in BE or t in PRONOUNS or t in WH
                                           for t in low)
            and not set(low) & _DISCOURSE_LABELS and low[-1] not in DETERMINERS and low[0] not in PREPOSITIONS
            and not any(ch.isdigit() for ch in label))


def predicate_claim(subject: str, predicate: str) -> str | None:
    """``predicate`` (a sentence with no subject: "Returnable within 30 days.", "Cannot be returned.", "Includes
    priority support.") said of ``subject``, or None when it has a subject of its own or is no predicate."""
    subject, predicate = subject.strip().rstrip(".?!:"), predicate.strip()
    toks = tokenize(predicate)
    if not toks or not _noun_label(subject):
        return None
    first = toks[0].lower()
    second = toks[1].lower() if len(toks) > 1 else ""
    body = predicate[:1].lower() + predicate[1:]
    if first in AUX or first in NEG_AUX or first in NEG_AUX_BARE or first == "not" and second not in DETERMINERS:
        verb: list[str] = []
    elif first.endswith(("able", "ible")) or first in _PREDICATE_ADJECTIVES or (
            len(first) > 4 and first.endswith("ed") and second not in DETERMINERS):
        verb = ["are" if (_number(tokenize(subject)) or "singular") == "plural" else "is"]
    elif first.endswith("s") and looks_verb(first) and second not in AUX and second not in BE:
        verb = []  # "Includes priority support."
    else:
        return None
    subject = subject[:1].upper() + subject[1:]
    return " ".join([subject, *verb, body]).replace(" ,", ",")


def subjectless_predicate(sentence: str) -> bool:
    """A statement that starts with its predicate and names no subject ("Covered up to $2,500.", "Returnable within
    30 days.", "Cannot be returned."): an adjective, a participle or a negated auxiliary first; not a question."""
    text = sentence.strip()
    toks = tokenize(text)
    if not toks or text.endswith("?") or claim_subject(text) is not None:
        return False
    first = toks[0].lower()
    second = toks[1].lower() if len(toks) > 1 else ""
    if any(claim_subject(rest) is not None for rest in re.split(r"(?<!\d),\s+|,(?!\d)\s*", text)[1:3]):
        return False  # "Formed in Corrigan in 2012 by ..., The Lowlight Parade reached ...": the phrase opens a clause
    return first.endswith(("able", "ible")) or first in _PREDICATE_ADJECTIVES or (
        len(first) > 4 and first.endswith("ed") and second not in DETERMINERS) or first in ("cannot", "can't")


_LABEL_VALUE = re.compile(r"\s*(?:[-*+\u2022]\s+)?(?P<label>[^:\n]{1,60}?)\s*[:\u2014\u2013]\s+(?P<value>\S.*)", re.S)


def label_claim(sentence: str) -> str | None:
    """The statement of a "label: value" line whose value is a predicate of the label: "Gift cards: returnable within
    30 days." -> "Gift cards are returnable within 30 days."; "Gift cards: cannot be returned." -> "Gift cards cannot
    be returned.". None for other lines ("Note: gift cards ...", "Gift cards: they cannot be returned.")."""
    m = _LABEL_VALUE.fullmatch(sentence.strip())
    if m is None or len(m.group("label").strip()) < 2 or m.group("value").rstrip().endswith("?"):
        return None
    made = predicate_claim(m.group("label"), m.group("value"))
    return made if made is None or made.endswith((".", "!", "?")) else made + "."


#: a question that asks which things something holds of: "What can I return?" (the asker does it), "Which items are
#: covered?" (said of them)
_WHAT_OBJECT = re.compile(r"(?i)^(?:what|which(?:\s+[a-z-]+){0,2})\s+(?:can|could|may|should|must|will|do|does|did)\s+"
                          r"(?:i|we|you)\s+\w+")
_WHAT_SUBJECT = re.compile(r"(?i)^(?:what|which(?:\s+[a-z-]+){0,2})\s+(?P<aux>is|are|was|were|can|could|may|will|must|"
                           r"cannot|can't|isn't|aren't)\s+(?P<pred>[^?]+?)\s*\?$")
#: a label that ends in what it says of its noun ("Gift cards returnable", "Pets allowed")
_LABEL_PREDICATE = re.compile(r"(?i)^(?P<noun>.+?)\s+(?P<pred>[a-z]+(?:able|ible)|allowed|permitted|eligible|covered|"
                              r"included|excluded|accepted|available|required|refundable|free)$")


def _yes_no_of_label(question: str, label: str, value: bool) -> str | None:
    """"- Gift cards: yes" to "Can gift cards be returned?": the label names what the question asks about, and the
    value answers it (as "Gift cards: yes" without the bullet reads): the question's yes or no statement."""
    claim = answer_claim(question, "Yes." if value else "No.")
    said = set(content_stems(label))
    if claim is None or claim.kind != "yes/no" or not said or not said <= set(content_stems(question)):
        return None
    return claim.statement


def label_reply(question: str, sentence: str) -> str | None:
    """The statement of a "label: yes" (or "no") line: a yes/no said of the label. Under a question that asks which
    things something holds of, the label is such a thing ("What can I return?" + "- Gift cards: yes" -> "You can
    return gift cards."; + "no" -> "You cannot return gift cards."); a label that ends in its own predicate says it
    of its noun whatever the question ("Gift cards returnable: yes" -> "Gift cards are returnable."). None for other
    lines: read as written ("Gift cards: yes." to "What can I return?" reads to the model as a bare label)."""
    m = _LABEL_VALUE.fullmatch(sentence.strip())
    if m is None:
        return None
    value, rest = polarity(m.group("value"))
    label = m.group("label").strip().strip("*_").strip()
    extra = rest.strip(" .!*_,;:")
    if value is None or not label or len(tokenize(label)) > 8 or polarity(label)[0] is not None:
        return None
    if extra and len(tokenize(extra)) > 8:
        return None
    own = _LABEL_PREDICATE.fullmatch(label)
    if own is not None:
        noun, pred = own.group("noun"), own.group("pred")
        be = "are" if (_number(tokenize(noun)) or "singular") == "plural" else "is"
        made = f"{noun} {be} {pred}."
    else:
        q = question.strip()
        thing = label[:1].lower() + label[1:] if label[:1].isupper() and label[1:2].islower() else label
        subject_asked = _WHAT_SUBJECT.match(q)
        if _WHAT_OBJECT.match(q):
            claim = answer_claim(q, thing)
            if claim is None or claim.kind != "wh-span":
                return None
            made = claim.statement
        elif subject_asked is not None:
            aux = subject_asked.group("aux").lower()
            if aux in ("is", "are"):  # "Which items are covered?" + "Flood damage: yes": "Flood damage is covered."
                aux = "are" if (_number(tokenize(thing)) or "singular") == "plural" else "is"
            made = f"{thing} {aux} {subject_asked.group('pred')}."
        else:
            asked = _yes_no_of_label(q, label, value)
            # "- Gift cards: yes, within 30 days": the yes with what it adds
            return asked if asked is None or not extra else asked.rstrip(".") + " " + extra + "."
        made = made[:1].upper() + made[1:]
    said = made if value else negate(made)
    return said if said is None or not extra else said.rstrip(".") + " " + extra + "."


_DOUBLE_NEGATION = (
    # "no longer" after a form of "be" or an auxiliary is "not" (a claim about now); before a main verb ("you no
    # longer get") or a comparison ("no longer than 22 inches") it is kept as written
    (re.compile(r"(?i)\b(is|are|was|were|be|been|am|will|can|could|would|should|may|might|must|has|have|had)\s+no\s+"
                r"longer\b(?!\s+(?:than|before|after)\b)"), r"\1 not"),
    (re.compile(r"(?i)\b(is|are|was|were)n['\u2019]t\s+(?:non-?|un(?=[a-z]+(?:able|ible)\b))"), r"\1 "),
    (re.compile(r"(?i)\bnot\s+(?:non-?|un(?=[a-z]+(?:able|ible)\b))"), ""),
    # "not excluded from returns" is "included in returns": the model reads the negation and the exclusion apart
    (re.compile(r"(?i)\b(is|are|was|were|be|been)\s+not\s+excluded\s+from\b"), r"\1 included in"),
)


def plain_negation(sentence: str) -> str:
    """Double negations said plainly: "Gift cards are not non-returnable." -> "Gift cards are returnable."; "not
    unavailable" -> "available"; "no longer" -> "not" (a claim about now). The model reads a double negation as a
    negation, so "not non-returnable" against "cannot be returned" would read as agreeing."""
    for pattern, repl in _DOUBLE_NEGATION:
        sentence = pattern.sub(repl, sentence)
    return sentence


#: a time after a noun phrase ("a gift card last week"): no part of what it names
_TRAILING_TIME = re.compile(r"(?i)\s+(?:(?:last|next|this|every|each)\s+\w+|\w+\s+ago|yesterday|today|tomorrow|"
                            r"recently|earlier|online|in\s+store)\b.*$")
def _coordinated(referent: str, sentence: str) -> str:
    """``referent`` with the noun phrases coordinated to it in ``sentence`` ("a jacket" -> "a jacket and a gift card")."""
    m = re.search(re.escape(referent) + r"(?:\s*,\s*[^,.;:!?]{1,40}?)*\s+(?:and|or)\s+[^,.;:!?]{1,40}", sentence)
    return m.group(0).strip() if m else referent


#: how many messages before the question a pronoun of it may point into, how much of each is read, and the longest
#: question read this way (each bound keeps the reading linear and small: it runs on every request)
CONVERSATION_MESSAGES = 4
CONVERSATION_MESSAGE_CHARS = 1000
CONVERSATION_QUESTION_CHARS = 300
_POINTING = re.compile(r"(?i)\b(?:it|its|they|them|their|this|that|these|those|he|she|him|her|one)\b")


#: a demonstrative or possessive that stands for a noun phrase ("return this", "that one within 30 days", "mine")
_BARE_POINTER = re.compile(
    r"(?i)\b(?:(?:this|that|these|those)(?:\s+ones?)?|mine|yours|ours|theirs|hers)\b(?=\s*(?:[.?!,;:)]|$)|\s+(?:within"
    r"|after|before|for|in|on|at|by|to|from|with|without|if|now|today|tomorrow|later|back|again|online|anymore|too"
    r"|also|here|there|yet|still|instead|anyway|as well)\b)")


def points_at_nothing(statement: str) -> bool:
    """The statement still has a word that only points ("it", "them", "that one", "this", "mine") once the referents
    of its own words are read ("If you buy a gift card, you can return it." points at its gift card): it is about
    nothing the guard can name, and any context about anything of the kind entails it.

    >>> points_at_nothing("You can return that one.")
    True
    >>> points_at_nothing("If you buy a gift card, you can return it.")
    False
    """
    text = (resolve_pronouns(statement, []) if _LEADING_CLAUSE.match(statement) else None) or statement
    # "Members can bring their kids.": a possessive names its owner's things, most often the subject's; "It will
    # rain tomorrow.": an "it" of the weather or the time points at nothing
    text = re.sub(r"(?i)\b(?:their|its|his|her)\b(?=\s+\w)", "the", text)
    text = _WEATHER_IT.sub("The weather", text)
    return resolve_pronouns(text, ["the thing"]) is not None or bool(_BARE_POINTER.search(text))


_WEATHER_IT = re.compile(r"(?i)^it(?=\s+(?:(?:will|would|can|could|may|might|is|was|does|did)\s+(?:not\s+)?)?(?:be\s+)?"
                         r"(?:rain|rains|raining|snow|snows|snowing|sunny|cloudy|windy|cold|hot|warm|late|early|dark|"
                         r"light|noon|midnight|\d))")


def question_in_conversation(question: str, earlier: Sequence[str], assistant: Sequence[str] = (),
                             setting: Sequence[str] = (), _depth: int = 0) -> str:
    """The question with its pronouns read as what the conversation before it named: after "I bought a gift card
    last week.", "Can I return it?" is "Can I return a gift card?". The nearest message first, the subject (not "I"
    or "you") then the object of its last sentences, and what a question there asked about; the user's messages
    (``earlier``) before the assistant's (``assistant``): the model's own turn must not choose what the user's "it"
    is. A coordination stays whole ("a jacket and a gift card"). Alone, "Can I return it?" answered "Yes."
    claims "You can return it.", which any context about anything returnable entails. The question as written when
    it has no pronoun or nothing before it names a referent. The question's own message is read first ("I have a
    gift card. Can I return it?"), ``setting`` (system, developer and tool messages, instructions) last."""
    meta = _meta_turn(question, earlier, assistant, setting, _depth) if _depth < _META_DEPTH else None
    if meta is not None:  # "Are you sure?", "Please answer with just yes or no.": no question of its own
        return meta
    follow = _follow_up(question, earlier)
    if follow is not None:  # "And a gift card?" after "Can I return a jacket?": "Can I return a gift card?"
        return follow
    if len(question) > CONVERSATION_QUESTION_CHARS or not _POINTING.search(question):
        return question  # a long question names what it asks about; one with no pronoun has nothing to resolve
    parts = re.split(r"(?<=[.!?])\s+", question.strip())
    own, question = " ".join(parts[:-1]), parts[-1]
    prefix = own + " " if own else ""
    referents: list[str] = []
    # filler turns ("Thanks.", "Okay.") name nothing and do not push a referent out of reach
    said = [t for t in earlier if len(t.split()) > 2]
    turns = [*([own] if own else []), *reversed(said[-CONVERSATION_MESSAGES:]),
             *reversed(list(assistant)[-CONVERSATION_MESSAGES:]), *reversed(list(setting)[-CONVERSATION_MESSAGES:])]
    for text in turns:
        for sentence in reversed(re.split(r"(?<=[.!?])\s+", text.strip()[-CONVERSATION_MESSAGE_CHARS:])[-3:]):
            found = list(question_referents(sentence)) if sentence.rstrip().endswith("?") else [
                r for r in (claim_subject(sentence), claim_object(sentence)) if r]
            found = [_coordinated(r, sentence) for r in found]
            # "the specs of the AeroBook 16": what "it" then points at is the AeroBook 16 as often as its specs
            found = [t for r in found for t in ([r.rsplit(" of ", 1)[1]] if " of " in r and
                                                 len(r.rsplit(" of ", 1)[1]) > 2 else []) + [r]]
            for r in found:
                r = _TRAILING_TIME.sub("", r).strip()
                r = _person_phrase(r)
                low = r.lower()
                if low not in _PERSONAL and low not in PRONOUNS and r not in referents and \
                        not {w.lower() for w in tokenize(r)} <= _NOT_REFERENTS and \
                        _number(tokenize(r)) is not None and not any(
                            t.lower() in _PERSONAL or t.lower() in PERSON or t.lower() in ("me", "us", "him", "her")
                            for t in tokenize(r)):
                    referents.append(r)
    referents = [r for r in referents if not _names_a_person(r)] + [r for r in referents if _names_a_person(r)]
    if not referents:
        return prefix + question
    resolved = resolve_pronouns(question, referents)
    if resolved is None:
        return prefix + question
    # the question alone, resolved: its own message's earlier sentences said what it points at
    return resolved if resolved.rstrip().endswith("?") or not question.rstrip().endswith("?") else resolved + "?"


#: a user turn that asks for a confirmation of what the assistant just said ("Are you sure?", "Really?", "Is that
#: right?", "Can you double-check?"): a yes to it restates the assistant's claim, a no takes it back
_CONFIRMATION = re.compile(
    r"(?i)^\s*(?:(?:ok(?:ay)?|so|wait|hmm+|hm|um+|oh|really|seriously|but)[,.!\s]+)*(?:"
    r"(?:are|r)\s+(?:you|u)\s+(?:sure|certain|positive)(?:\s+about\s+(?:that|this|it))?"
    r"|(?:you|u)\s+(?:sure|certain|positive)"
    r"|(?:is|was)\s+(?:that|this|it)\s+(?:right|correct|true|so|accurate)"
    r"|(?:that'?s|thats)\s+(?:right|correct|true)"
    r"|(?:can|could|would)\s+(?:you|u)\s+(?:please\s+)?(?:confirm|double[-\s]?check|check\s+again|verify)(?:\s+(?:that|this|it))?"
    r"|really|seriously|for\s+real|truly|honestly|sure|right|correct|true|confirm)\s*[?!.]*\s*$")
#: a user turn that only asks for a form of the answer ("Please answer with just yes or no.", "Be brief.", "Explain.",
#: "In one word?"): the question is the one before it
_FORM_ONLY = re.compile(
    r"(?i)^\s*(?:(?:ok(?:ay)?|so|and|but|please|pls|just|now|again|sorry)[,.!\s]+)*(?:"
    r"(?:please\s+|pls\s+|just\s+|can\s+you\s+|could\s+you\s+)*(?:answer|reply|respond|say)"
    r"(?:\s+(?:me|it|that|this|the\s+question|my\s+question))?(?:\s+(?:with|in|using))?(?:\s+(?:just|only|simply|a|one))*"
    r"(?:\s+(?:(?:a\s+)?(?:yes|no|yes\s+or\s+no|yes/no|true\s+or\s+false|one\s+word|a\s+word|word|sentence|short|"
    r"briefly|clearly|simply|directly|plainly|in\s+english|english)))*(?:\s+please)?"
    r"|(?:just\s+|only\s+)?(?:yes\s+or\s+no|yes/no|true\s+or\s+false|in\s+(?:one|a|two|a\s+few)\s+words?|"
    r"in\s+short|briefly|tl;?dr)(?:\s+please)?"
    r"|(?:please\s+)?(?:be\s+(?:brief|concise|short|clear|direct|specific)|keep\s+it\s+(?:short|brief|simple)|"
    r"(?:explain|elaborate|clarify|summari[sz]e|rephrase|simplify)(?:\s+(?:that|this|it|please|more|again|briefly))*|"
    r"(?:say|tell\s+me)\s+(?:it\s+|that\s+)?again|go\s+on|continue|try\s+again|once\s+more|and\??|well\??|so\??)"
    r"(?:\s+please)?)\s*[?!.]*\s*$")


#: how many turns that stand for the one before them ("Are you sure?" after "Explain." after ...) are followed back
#: (a request of 600 "Explain." turns must not recurse 600 deep, round 49)
_META_DEPTH = 8


def _meta_turn(question: str, earlier: Sequence[str], assistant: Sequence[str],
               setting: Sequence[str], depth: int = 0) -> str | None:
    """The question a user turn that is no question of its own stands for, or None for any other turn.

    - A request for the form of the answer ("Please answer with just yes or no.", "Be brief.", "Explain."): the user's
      question before it, read in the conversation as it was.
    - A request for confirmation ("Are you sure?", "Is that right?", "Really?"): whether what the assistant last said
      holds ("Is it true that gift cards cannot be returned?"), so that "Yes, I'm sure." restates that claim and
      "No." takes it back. Read as written, "Are you sure?" + "Yes, I'm sure." claims "You are sure.", which the
      context contradicts or cannot judge. None (the turn read as written) when the assistant's last turn makes no
      claim the guard can restate."""
    if len(question) > CONVERSATION_QUESTION_CHARS or not earlier and not assistant:
        return None
    text = question.strip()
    if _FORM_ONLY.match(text):
        before = [t for t in earlier if t.strip()]
        while before and _FORM_ONLY.match(before[-1].strip()):  # "Explain." after "Be brief.": the question before both
            before.pop()
        if not before:
            return None
        return question_in_conversation(before[-1], before[:-1], assistant, setting, depth + 1)
    if not _CONFIRMATION.match(text):
        return None
    earlier, assistant = [t for t in earlier if t.strip()], [t for t in assistant if t.strip()]
    while len(earlier) >= 2 and len(assistant) >= 2 and _CONFIRMATION.match(earlier[-1].strip()) and \
            _RECONFIRMED.fullmatch(assistant[-1].strip()):
        # "Are you sure?" / "Yes, I'm sure." / "Are you sure?": the second asks about the claim the first asked
        # about (read as written it asked whether "You are sure.", round 30)
        earlier, assistant = earlier[:-1], assistant[:-1]
    said = next((t for t in reversed(assistant) if t.strip()), "")
    if not said:
        return None
    value, rest = polarity(said)
    sentences = [sp.of(said.strip()) for sp in split_sentences(said.strip())]
    statement: str | None = None
    if value is not None and earlier and not is_claim(rest):
        # the assistant answered "No." or "Unfortunately not.": what that answer says to the question before
        before = [t for t in earlier if t.strip()]
        asked = question_in_conversation(before[-1], before[:-1], (), setting, depth + 1) if before else ""
        statement = yes_no_statement(asked, value) if asked else None
    if statement is None:
        lead = sentences[0] if sentences else ""
        if value is not None and rest and is_claim(rest) and len(sentences) >= 1:
            lead = split_sentences(rest)[0].of(rest) if split_sentences(rest) else rest  # "No, gift cards cannot ..."
        statement = lead if makes_claim(lead) and not lead.rstrip().endswith("?") else None
    if statement is None:
        return None
    body = statement.strip().rstrip(".!")
    first = body.split(" ", 1)[0]
    if first not in ("I",) and not (len(first) > 1 and first[1:2].isupper()):
        body = body[:1].lower() + body[1:]
    return f"Is it true that {body}?"


#: an assistant's reply to a request for confirmation that only confirms ("Yes, I'm sure.", "Yes.", "Absolutely.")
_RECONFIRMED = re.compile(
    r"(?i)\W*(?:(?:yes|yeah|yep|yup|absolutely|definitely|certainly|indeed|correct|right|positive|sure)\b[\s,.!]*)+"
    r"(?:i\s*(?:'m|\u2019m|am)\s+(?:quite\s+|completely\s+|absolutely\s+)?(?:sure|certain|positive)"
    r"|that(?:'s|\u2019s|\s+is)\s+(?:right|correct))?[\s.!]*|\W*i\s*(?:'m|\u2019m|am)\s+(?:quite\s+)?"
    r"(?:sure|certain|positive)[\s.!]*")
#: a follow-up that names only a new noun phrase and means the question before it ("And a gift card?", "What about
#: jackets?", "Gift cards too?", "And if it's a gift card?")
_FOLLOW_UP = re.compile(
    r"(?i)^\s*(?:(?:ok(?:ay)?|so|and|but)[,\s]+)?(?:and|also|but|plus|(?:what|how)\s+about|same\s+(?:for|with)|and\s+for"
    r"|what\s+of|if\s+(?:it'?s|it\s+is|they\s+are|they'?re))\s+(?P<np>[^?.!,;:]{1,80}?)\s*\?+\s*$"
    r"|^\s*(?:and\s+)?(?P<np2>[^?.!,;:]{1,80}?)(?:,)?\s+(?:too|as\s+well|also)\s*\?+\s*$")


def _follow_up(question: str, earlier: Sequence[str]) -> str | None:
    """The user's question before a follow-up that names only a new noun phrase, with that phrase in the place of
    the one it replaces: "Can I return a jacket?" then "And a gift card?" asks "Can I return a gift card?". The
    phrase replaced is the question's only referent, or the one that shares a word with the new phrase ("Can
    students take 18 credits?" then "And graduate students?"); None when the follow-up is not of this shape or the
    place is not clear (a bare "Yes." to it is then unchecked)."""
    m = _FOLLOW_UP.match(question) if len(question) <= CONVERSATION_QUESTION_CHARS else None
    if m is None or not earlier:
        return None
    np = (m.group("np") or m.group("np2") or "").strip()
    toks = tokenize(np)
    if not toks or _POINTING.fullmatch(np) or {t.lower() for t in toks} <= (PRONOUNS | _PERSONAL | _NOT_REFERENTS) \
            or any(t.lower() in AUX or t.lower() in NEG_AUX or t.lower() in WH for t in toks):
        return None  # "And those?", "And?", "But can I?": nothing new named
    before = next((t for t in reversed(earlier) if t.strip()), "")
    asked = re.split(r"(?<=[.!?])\s+", before.strip()[-CONVERSATION_MESSAGE_CHARS:])[-1]
    if not asked.rstrip().endswith("?"):
        return None
    if toks[0].lower() in DETERMINERS:
        np = np[:1].lower() + np[1:]
    if toks[0].lower() in PREPOSITIONS:
        # "Is the store open on Sundays?" then "And on Mondays?": the phrase of that preposition that ends the question
        ends = re.search(rf"(?i)\b{re.escape(toks[0])}\s+[^,;:?]{{1,60}}(?=\?+\s*$)", asked)
        return asked[: ends.start()] + np + asked[ends.end():] if ends else None
    core = [t for t in toks if t.lower() not in DETERMINERS]
    if len(core) == 1 and re.fullmatch(r"[A-Za-z]{0,3}\d[\w.-]*", core[0]):
        # "What about the 16?" after "How much does the AeroBook 14 weigh?": the model number of the product asked
        models = list(re.finditer(r"(?<=[A-Za-z] )[A-Za-z]{0,3}\d[\w.-]*\b", asked))
        if len(models) == 1:
            return asked[: models[0].start()] + core[0] + asked[models[0].end():]
    refs = [r for r in question_referents(asked) if r.lower() not in _PERSONAL and r.lower() not in PRONOUNS]

    def content(phrase: list[str]) -> set[str]:
        return {w.lower().rstrip("s") for w in phrase if w.lower() not in DETERMINERS and w[:1].isalnum()}

    words = content(toks)
    shared = [r for r in refs if words & content(tokenize(r))]
    place = shared[0] if len(shared) == 1 else refs[0] if len(refs) == 1 else None
    if place is None or place not in asked:
        return None
    return asked.replace(place, np, 1)


#: words that name nothing a pronoun points at ("Hello there.", "Please.")
_NOT_REFERENTS = frozenset("hello hi hey there please thanks thank ok okay sure well so yes no good great morning "
                           "afternoon evening".split())


def _person_phrase(referent: str) -> str:
    """"My gift card" as "your gift card": the asker's possessive read as the answer reads it."""
    toks = referent.split()
    if toks and toks[0].lower() in ("my", "our"):
        return " ".join(["your", *toks[1:]])
    return referent


#: subject pronouns read as what they point at, with the number of the noun phrase each needs
_SUBJECT_PRONOUNS = {"they": "plural", "it": "singular", "he": "person", "she": "person"}
#: object pronouns after a verb ("you can return it")
_OBJECT_PRONOUNS = {"them": "plural", "it": "singular"}
_CONTRACTED = {"'s": "is", "'re": "are", "'ve": "have", "'ll": "will", "'d": "would"}
#: an "it" that points at nothing: "It depends.", "It seems ...", "It is possible to ...", "It is true that ..."
_EXPLETIVE_VERBS = frozenset("depends depended seems seemed appears appeared looks looked means meant happens happened "
                             "matters mattered turns turned follows rains snows".split())
_CLAUSE_WORDS = frozenset("to that whether".split())
#: reply words before the claim of a sentence, left out of the claim ("Yes, they can be returned." -> "Gift cards
#: can be returned.")
_REPLY_LEAD = re.compile(
    r"(?i)^\s*(?:(?:yes|yeah|yep|yup|sure|absolutely|of\s+course|indeed|definitely|certainly|correct|right|true|"
    r"no|nope|nah|not\s+really|unfortunately|sadly|luckily|fortunately|good\s+news|no\s+doubt|without\s+a\s+doubt|"
    r"(?:that|this|it)(?:'s|\s+is)\s+(?:not\s+)?(?:true|right|correct|wrong|false)|not\s+true)\b[\s,!.:;\u2014\u2013-]*)+")


def _number(tokens: list[str]) -> str | None:
    """"plural" / "singular" for a noun phrase, None when it is none (a pronoun, no word)."""
    words = [t.lower() for t in tokens if t[:1].isalnum()]
    if not words or words[0] in PRONOUNS or words[0] in PERSON or words[0] in WH or words[0] in AUX or \
            words[0] in NEG_AUX or words[-1] in DETERMINERS or (len(words) == 1 and words[0].endswith(("ly", "ing"))):
        return None  # no noun phrase: "Remotely", "Getting", "Every", "Does the Pro plan"
    head = words[-1]
    if len(tokens) > 1 and tokens[-1][:1].isupper() and "and" not in words:  # a name: "Dr. Jones" ("Items": no)
        return "singular"
    if "and" in words or words[0] in {"these", "those", "both", "all", "many", "several", "most", "some"} or (
            len(head) > 3 and head.endswith("s") and not head.endswith(("ss", "us", "is", "'s"))):
        return "plural"
    return "singular"


def _agrees(referent: str, kind: str) -> bool:
    number = _number(tokenize(referent))
    return number is not None and (number == kind or (kind == "person" and number == "singular"
                                                      and _names_a_person(referent)))


#: verbs of saying and thinking: their subject "they" is people ("they said", "unless they agree")
_SAYING = frozenset("said say says told tell tells think thinks thought believe believes believed agree agrees agreed "
                    "expect expects expected argue argues argued claim claims claimed state states stated announce "
                    "announces announced report reports reported note notes noted confirm confirms confirmed warn "
                    "warns warned estimate estimates estimated decide decides decided want wants wanted added explained "
                    "suggested suggest suggests recommend recommends recommended".split())
#: nouns of groups of people that "they" points at
_GROUPS = frozenset("staff officials authorities analysts experts researchers scientists doctors employees workers "
                    "company companies council government board committee team police regulators investors "
                    "shareholders members residents people users customers critics opponents supporters".split())


def _said_by(toks: list[str], k: int) -> bool:
    """``toks[k]`` is the subject of a verb of saying or thinking (an adverb or auxiliary may stand between)."""
    for j in range(k + 1, min(k + 4, len(toks))):
        low = toks[j].lower()
        if low in _SAYING:
            return True
        if low not in AUX and low not in NEG_AUX and low not in ECHO_ADVERBS and low not in ("also", "not", "have",
                                                                                           "had", "would", "will"):
            return False
    return False


def _person_noun(referent: str) -> bool:
    """The referent's head is a noun of a person ("the landlord", "a pharmacist")."""
    toks = [t for t in tokenize(referent) if t[:1].isalpha()]
    if not toks:
        return False
    head = toks[-1].lower()
    stem_ = head[:-1] if head.endswith("s") else head
    return head in _PERSON_NOUNS or stem_ in _PERSON_NOUNS or (
        len(stem_) > 5 and stem_.endswith(("ist", "ian")) and stem_ not in _NOT_PEOPLE)


def _group_noun(referent: str) -> bool:
    toks = [t.lower() for t in tokenize(referent) if t[:1].isalpha()]
    return bool(toks) and toks[-1] in _GROUPS


#: nouns of people: "the doctor", "a spokeswoman" are what "he"/"she" can point at; "the Basic plan" is not
_PERSON_NOUNS = frozenset(
    "man woman boy girl child person doctor nurse surgeon dentist patient officer minister president chancellor premier "
    "senator governor mayor author writer teacher professor student player coach manager director chief leader king "
    "queen prince princess father mother son daughter husband wife brother sister friend spokesman spokeswoman "
    "spokesperson actor actress singer artist founder owner chairman chairwoman ceo judge lawyer customer employee "
    "worker driver pilot captain soldier victim suspect witness farmer scientist researcher engineer agent "
    "representative member candidate winner champion pharmacist physician attorney receptionist cashier clerk teller "
    "therapist technician guard host hostess waiter waitress chef cook tenant landlord client applicant student "
    "instructor advisor adviser counselor counsellor editor reporter journalist attendant engineer volunteer "
    "partner officer agent nurse midwife caregiver guest visitor passenger traveler traveller buyer seller".split())


#: words with a person's suffix that name no person
_NOT_PEOPLE = frozenset("checklist playlist wishlist waitlist shortlist".split())


def _names_a_person(referent: str) -> bool:
    """A referent "he"/"she" can point at: a name ("Dr. Jones", "Maria Lopez") or a noun of a person ("the doctor")."""
    toks = [t for t in tokenize(referent) if t[:1].isalpha()]
    if not toks:
        return False
    if _person_noun(referent):
        return True  # "the pharmacist", "a physician"
    if toks[0].lower() in DETERMINERS and toks[0] not in _TITLES:
        return False  # "the Stellborg Marathon", "the Orrin 7": a person's name takes no article
    if "of" in toks[1:] and toks[0][:1].isupper():  # "Amina Lodvik of Sweden": the name before "of"
        toks = toks[:toks.index("of", 1)]
    words = [t for t in toks if t.lower() not in DETERMINERS]
    return bool(words) and all(t[:1].isupper() for t in words)


def _verb_after(toks: list[str], k: int) -> bool:
    """A finite verb right after ``toks[k]`` (an adverb may stand between): "they can", "it really costs"."""
    for j in range(k + 1, min(k + 3, len(toks))):
        low = toks[j].lower()
        if low in AUX or low in NEG_AUX or low in NEG_AUX_BARE or (looks_verb(toks[j]) and not toks[j][:1].isupper()):
            return True
        if low not in ECHO_ADVERBS and low not in {"also", "only", "never", "always", "now", "usually", "still"}:
            return False
    return False


def _expletive(toks: list[str], k: int) -> bool:
    """An "it" that points at nothing: "It depends", "It is possible to ...", "It's not true that ..."."""
    nxt = [t.lower() for t in toks[k + 1: k + 6]]
    if toks[k].lower() != "it" and not toks[k].lower().startswith("it'"):
        return False
    if nxt and nxt[0] in _EXPLETIVE_VERBS:
        return True
    if "worth" in nxt[:2] and (toks[k].lower().startswith("it'") or nxt[0] in BE):
        return True  # "It's worth confirming ...", "It is worth checking ..."
    when = nxt[1:3] if nxt and nxt[0] in ("is", "was", "'s") else nxt[:2] if toks[k].lower().startswith("it'") else []
    if when and (when[0] in _TIME_WORDS or when[0] in ("still", "already", "only", "nearly", "almost") and len(when) > 1
                 and when[1] in _TIME_WORDS):
        return True  # the time or the weather: "Because it's April, ...", "It's raining", "it's already 5pm"
    # "It is possible to ...", "It's not true that ...", "It would be best to ...": a copula, then a clause word
    # within a few words (an adjective or a noun between)
    contracted = toks[k].lower().startswith("it'")
    if not contracted and not (nxt and (nxt[0] in BE or nxt[0] in NEG_AUX or nxt[0] in MODAL)):
        return False
    return any(w in _CLAUSE_WORDS for w in (nxt[:4] if contracted else nxt[1:5]))


#: words after "it's" that make it the time or the weather
_TIME_WORDS = frozenset("""january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday weekend winter spring summer autumn fall morning afternoon
    evening night midnight noon late early dark light raining snowing sunny windy cold hot freezing warm""".split())
def _may_refer(referent: str) -> bool:
    """A phrase a pronoun may be read as: not one that opens with a preposition ("of our clinics"), a gerund ("using
    my Solvi Home"), a participle ("Owned by the department since 1978"), an interjection ("Oh") or the asker's own
    words ("my ...")."""
    first = referent.split()[0].lower().strip(",.!?") if referent.split() else ""
    return bool(first) and first not in PREPOSITIONS and first not in ("of", "than", "as") and \
        first not in _INTERJECTIONS and not (
        len(first) > 4 and first.endswith(("ing", "ed")) and first not in _NOUNS_LIKE_VERBS) and not re.search(
        r"(?i)\b(?:my|i|me)\b", referent)


_MAKE_VERBS = frozenset("make makes made making find finds found keep keeps kept".split())
_DUMMY_IT_ADJECTIVES = frozenset("easy easier hard harder possible impossible difficult simple simpler likely unlikely "
                                 "worth clear safe safer quicker faster cheaper tricky".split())
#: words that open a reply as a cry, never as what it names
_INTERJECTIONS = frozenset("oh ooh ah aw aww wow whoa yay ugh hmm hey hi hello ouch yikes oops gosh".split())
#: nouns with a verb's ending that may head a referent ("Wedding venues", "Building 4", "Heating costs")
_NOUNS_LIKE_VERBS = frozenset("wedding building heating parking booking housing clothing training funding "
                              "meeting morning evening ceiling shipping pricing bedding".split())
#: adverbs that may open a subject without being part of what it names ("Even the researchers say ...")
_FOCUS_ADVERBS = frozenset("even also still just only both".split())
#: a noun phrase a determiner opens: "the 1962 Elm Street library", "a new permit"
_DETERMINED_PHRASE = re.compile(r"(?i)\b(?:the|a|an|this|that|these|those|his|her|their|its|your|our|my)\s+[\w-]")
#: the small words a noun phrase ends before ("the library instead of", "the receipt within 30 days")
_PHRASE_ENDS = ("instead|rather|and|or|but|to|of|in|on|at|for|with|within|before|after|by|from|than|then|so|if|when|"
                "because|while")
#: such a phrase up to its last word before a small word or a mark: its determiner and its head
_PHRASE_HEAD = re.compile(rf"(?i)(?P<det>\w+)(?:\s+(?!(?:{_PHRASE_ENDS})\b)[\w'-]+){{0,5}}?"
                          rf"\s+(?P<last>(?!(?:{_PHRASE_ENDS})\b)[\w'-]+)(?=\s*(?:[,.;:!?]|$|\s+(?:{_PHRASE_ENDS})\b))")


def _object_named_before(prefix: str, kind: str) -> bool:
    """The words before an object pronoun name a thing after the sentence's subject that agrees with it (``kind``:
    "singular" or "plural"; "The council chose to renovate the 1962 Elm Street library instead of replacing"): the
    pronoun most likely points at it, which the referents cannot tell; the sentence is read as written. One that does
    not agree ("bring the receipt ... and return them") leaves the pronoun to the referents."""
    subject = claim_subject(prefix + " x.")
    at = prefix.find(subject) if subject else -1
    after = prefix[at + len(subject):] if subject and at >= 0 else prefix
    for m in _DETERMINED_PHRASE.finditer(after):
        head = _PHRASE_HEAD.match(after, m.start())
        if head is None:
            continue
        det, last = head.group("det").lower(), head.group("last").lower()
        plural = det in ("these", "those") or (last.endswith("s") and not last.endswith("ss") and det not in
                                                ("a", "an", "this", "that"))
        if (kind == "plural") == plural:
            return True
    return False


def resolve_pronouns(sentence: str, referents: list[str], *, loose: bool = False) -> str | None:
    """The sentence with its pronouns read as what they point at, its reply words left out; None when it has no such
    pronoun or nothing to read it as.

    Read: subjects ("they", "it", "he", "she", "these", "those", "this", "that" before a verb, "they're", "theyre"),
    objects after a verb, a preposition or a gerund ("return it", "all of them", "returning them"), possessives
    ("their", "its"). A pronoun takes a referent of the sentence's own before it ("If you bought gift cards, they
    ..."), else the first of ``referents`` that agrees in number; "they" and "he"/"she" with none that agrees (a
    singular "they"), and any pronoun of a sentence that answers the question (``loose``), take the first referent.

    "They can be returned within 30 days." claims nothing a model can check: any context that says anything can be
    returned within 30 days entails it. Under "Can gift cards be returned?" it claims that gift cards can.

    >>> resolve_pronouns("Yes, they can be returned within 30 days.", ["gift cards"])
    'Gift cards can be returned within 30 days.'
    >>> resolve_pronouns("It costs $25 per month.", ["gift cards", "the Basic plan"])
    'The Basic plan costs $25 per month.'
    >>> resolve_pronouns("You can return it within 30 days.", ["a gift card"])
    'You can return a gift card within 30 days.'
    >>> resolve_pronouns("It depends on the item.", ["the plan"]) is None
    True
    """
    text = sentence.strip().replace("\u2019", "'")
    lead = _REPLY_LEAD.match(text)
    if lead and lead.end() < len(text):
        text = text[lead.end():]
    spans = [(m.group(), m.start(), m.end()) for m in TOKEN.finditer(text)]
    toks = [t for t, _, _ in spans]
    edits: list[tuple[int, int, str]] = []
    for k, (tok, start, end) in enumerate(spans):
        low = tok.lower()
        m = re.fullmatch(r"(they|it|he|she)('s|'re|'ve|'ll|'d)|(theyre|theyll|theyve)", low)
        base, contraction = (m.group(1), m.group(2)) if m and m.group(1) else (low, None)
        if m and m.group(3):
            base, contraction = "they", {"theyre": "'re", "theyll": "'ll", "theyve": "'ve"}[m.group(3)]
        prev = toks[k - 1].lower() if k else ""
        possessive = anaphoric = as_object = False
        pair = base in ("he", "she") and k + 2 < len(toks) and toks[k + 1].lower() == "or" and \
            toks[k + 2].lower() in ("he", "she")  # "he or she" is one pronoun
        # a question's subject comes after its auxiliary: "Can they be returned?", "Is it safe?"
        inverted = (k == 1 and (toks[0].lower() in AUX or toks[0].lower() in NEG_AUX) or  # "Can they ...?"
                    k >= 2 and (prev in AUX or prev in NEG_AUX) and toks[0].lower() in WH) and \
            text.rstrip().endswith("?")  # "How much does it weigh?"
        if base in _SUBJECT_PRONOUNS and (contraction or inverted or _verb_after(toks, k + 2 if pair else k)):
            if base == "it" and (_expletive(toks, k) or (inverted and (any(
                    t.lower() in _CLAUSE_WORDS for t in toks[k + 1: k + 5]) or (k + 2 < len(toks) and toks[k + 1].lower()
                    in ("true", "false", "ok", "okay", "fine", "possible", "necessary", "required", "allowed", "likely",
                        "worth", "better", "best", "normal", "common"))))):
                continue  # "Is it possible to return ...?"
            if base in ("he", "she") and prev == "or" and k > 1 and toks[k - 2].lower() in ("he", "she"):
                continue  # the second of "he or she": read with the first
            if pair:
                end = spans[k + 2][2]
            kind = _SUBJECT_PRONOUNS[base]
        elif (np_end := _anaphoric_np(toks, k)) is not None:
            # "These items can be returned.", "That one is free.", "Such products ...", "Both can ...": a noun
            # phrase that only points back, read as what it points at
            kind, end, anaphoric = _anaphoric_kind(toks[k:np_end + 1]), spans[np_end][2], True
        elif low in _DEMONSTRATIVES and _verb_after(toks, k) and not _reply_phrase(toks, k) and (
                k == 0 or prev in _CLAUSE_START or prev.endswith("ly")) and not _points_at_what_was_said(toks, k):
            # "These can be returned.", "This includes priority support."; not a relative "that" ("a plan that covers
            # ..."), nor a "this" that points at what was said ("This means ...", "This even helps ...")
            kind = _DEMONSTRATIVES[low]
        elif low in _OBJECT_PRONOUNS and k > 0 and (
                (looks_verb(toks[k - 1]) and prev not in BE) or prev in PREPOSITIONS or prev == "of"
                or prev.endswith("ing")):
            if low == "it" and prev in PREPOSITIONS and k + 1 < len(toks) and toks[k + 1].lower() == "to":
                continue  # "for it to be ..." is read with its verb: kept as written
            if low == "it" and prev in _MAKE_VERBS and k + 1 < len(toks) and (
                    toks[k + 1].lower() in _DUMMY_IT_ADJECTIVES or toks[k + 1].lower().endswith("er")):
                continue  # "which might make it easier to fit around work": the "it" of what follows
            kind, as_object = _OBJECT_PRONOUNS[low], looks_verb(toks[k - 1]) and prev not in PREPOSITIONS
            if (as_object or prev.endswith("ing") and prev not in PREPOSITIONS) and \
                    _object_named_before(text[:start], _OBJECT_PRONOUNS[low]):
                continue  # "... chose to renovate the library instead of replacing it": the library, read as written
        elif low in _POSSESSIVES and k + 1 < len(toks) and toks[k + 1][:1].isalpha():
            kind, possessive = _POSSESSIVES[low], True
        else:
            continue
        # "Please tell me if I can return it": a word of greeting or politeness names nothing; nor does a pronoun's
        # contraction ("She'll need two injections ..., and since she's nine weeks old": not "She'll")
        own = [r for r in _named_in_prefix(text[:start]) if not {w.lower() for w in tokenize(r)} <= _NOT_REFERENTS
               and re.split(r"['\u2019]", r.split()[0].lower())[0] not in PRONOUNS]
        # a reply ("Yes, refunds are issued once they are returned.") speaks of what was asked before what it names
        order = referents + own if loose else own + referents
        if as_object:  # the object of a verb is not its own clause's subject ("Team doesn't include it."), and
            # rarely a sibling of it ("The Nova 8 doesn't support it." after "The Nova 8 Pro supports wireless
            # charging.": the charging)
            subject = (claim_subject(text[:start] + "x.") or "").lower()
            kin = {w for w in subject.split() if w not in DETERMINERS and len(w) > 2}
            order = [r for r in order if r.lower() != subject]
            order = [r for r in order if not kin & set(r.lower().split())] + \
                [r for r in order if kin & set(r.lower().split())]
        if low in ("it", "its") or base == "it":  # "it" is no person ("The landlord has to protect it")
            order = [r for r in order if not _person_noun(r)]
        if base == "they" and _said_by(toks, k) and not any(_names_a_person(r) or _person_noun(r) or _group_noun(r)
                                                             for r in order[:1]):
            continue  # "they said", "unless they agree": people the referents do not name, read as written
        if possessive and own and not loose:
            continue  # "... pushed the River Tolle over its banks": the sentence names what "its" points at, read whole
        if possessive and order and {w.lower() for w in tokenize(order[0])} & {"you", "i", "we", "your", "that", "which",
                                                                               "who"}:
            continue  # "its" read as a long phrase ("a swimsuit you bought's") garbles the claim: read as written
        order = [r for r in order if _may_refer(r)]
        referent = next((r for r in order if _agrees(r, kind)), None)
        if referent is None and (loose or anaphoric or kind == "plural") and order:
            referent = order[0]  # a singular "they"; a reply's pronoun points at what was asked
        if referent is None and kind == "person":
            continue  # "he"/"she" with no person named before it: read as written
        if referent is None:
            return None
        words = referent.split()
        if len(words) > 1 and (words[0].lower() in _FOCUS_ADVERBS or words[0].lower().endswith("ly") and
                               words[1].lower() in DETERMINERS):
            words = words[1:]  # "Even the researchers say ..., so they ...", "Normally the museum is ...": not the adverb
        if start == 0:
            words[0] = words[0][:1].upper() + words[0][1:]
        elif words[0].lower() in DETERMINERS or (referent in own and len(words) == 1 and text.startswith(referent)
                                                 and referent.lower().endswith("s")):
            # "Shoes can be returned if they are unused": the capital was the sentence's ("if shoes are unused"); a
            # name stays one ("Norvale narrowed its outlook": "Norvale's outlook", not "norvale's")
            words[0] = words[0].lower()
        replacement = " ".join(words)
        if possessive:
            replacement += "'" if replacement.endswith("s") else "'s"
        if contraction:
            replacement += " " + _CONTRACTED[contraction]
        edits.append((start, end, replacement))
    if not edits:
        return None
    for start, end, replacement in reversed(edits):
        text = text[:start] + replacement + text[end:]
    text = text.strip()
    return text[:1].upper() + text[1:]


#: head nouns that say nothing of what a demonstrative noun phrase points at ("these items", "that one", "such
#: products"): the phrase is read as its referent. A head that names a kind ("this decision", "that plan") is kept as
#: written, since its referent may be an event or a thing the referents do not hold.
_ANAPHORIC_HEADS = frozenset("one ones item items product products thing things article articles good goods kind kinds "
                             "type types sort sorts option options purchase purchases".split())
#: determiners of such a phrase, and "both"/"each"/"either" standing alone before a verb ("Both can be returned.")
_ANAPHORIC_DETERMINERS = frozenset("these those this that such".split())
_ANAPHORIC_ALONE = {"both": "plural", "each": "singular", "either": "singular"}


def _anaphoric_np(toks: list[str], k: int) -> int | None:
    """The index of the last token of a noun phrase starting at ``toks[k]`` that only points back ("these items",
    "that one", "such products", "both" before a verb), when it opens a clause and a verb follows it; else None."""
    low = toks[k].lower()
    prev = toks[k - 1].lower() if k else ""
    if k and prev not in _CLAUSE_START and not prev.endswith("ly"):
        return None  # a relative "that" ("a plan that ..."), an object ("return these items")
    if low in _ANAPHORIC_ALONE:  # "Both can ...", "Each is ...": an auxiliary right after it ("both plans": no)
        nxt = toks[k + 1].lower() if k + 1 < len(toks) else ""
        return k if nxt in AUX or nxt in NEG_AUX or nxt in NEG_AUX_BARE else None
    if low not in _ANAPHORIC_DETERMINERS:
        return None
    for j in range(k + 1, min(k + 4, len(toks))):
        word = toks[j].lower()
        if not word[:1].isalpha() or word in AUX or word in NEG_AUX or word in BE:
            return None
        if word in _ANAPHORIC_HEADS:
            return j if _verb_after(toks, j) else None
        if looks_verb(toks[j]) or toks[j][:1].isupper():
            return None
    return None


def _anaphoric_kind(phrase: list[str]) -> str:
    head, first = phrase[-1].lower(), phrase[0].lower()
    if first in _ANAPHORIC_ALONE:
        return _ANAPHORIC_ALONE[first]
    return "plural" if first in ("these", "those") or (head.endswith("s") and head != "goods") or head == "goods" \
        else "singular"


#: tokens after which a new clause starts
_CLAUSE_START = frozenset({",", ";", ":", "\u2014", "\u2013", "-", "(", "and", "but", "so", "yes", "no"})
#: demonstratives before a verb ("These can be returned."), and their number
_DEMONSTRATIVES = {"these": "plural", "those": "plural", "this": "singular", "that": "singular"}
#: possessive pronouns ("Their return window is 30 days."), and the number of what they point at
_POSSESSIVES = {"their": "plural", "its": "singular"}
#: "That is correct.", "This is why ...": a demonstrative that points at what was said, not at a thing
_REPLY_WORDS = frozenset("correct right true wrong false it all why because how what so not the a an".split())
#: a topic named at the start of a sentence: "As for gift cards, ...", "Regarding the Basic plan, ..."
_TOPIC_LEAD = re.compile(r"(?i)^\s*(?:as\s+for|as\s+to|regarding|concerning|about|when\s+it\s+comes\s+to|for)\s+"
                         r"(?P<np>[^,;:]+?)\s*[,;:]\s*$")


#: verbs whose subject "this"/"that" is what was said, not a thing ("This means ...", "That helps ...")
_DISCOURSE_VERBS = frozenset("means meant helps helped shows showed allows allowed makes made ensures ensured lets "
                             "gives gave explains explained suggests suggested implies implied indicates indicated "
                             "happens happened matters mattered depends depended sounds sounded seems seemed way "
                             "applies applied works worked".split())


def _points_at_what_was_said(toks: list[str], k: int) -> bool:
    """A "this"/"that" whose verb (past any adverb) says something of what was said: "This means ...", "That even
    helps ..."."""
    if toks[k].lower() not in ("this", "that"):
        return False
    for tok in toks[k + 1: k + 4]:
        low = tok.lower()
        if low in _DISCOURSE_VERBS:
            return True
        if low not in ECHO_ADVERBS and low not in {"also", "only", "even", "usually", "often", "really"}:
            return False
    return False


def _reply_phrase(toks: list[str], k: int) -> bool:
    """A demonstrative that points at what was said ("That is correct.", "This is why ..."), not at a thing."""
    nxt = [t.lower() for t in toks[k + 1: k + 4]]
    return bool(nxt) and nxt[0] in ("is", "'s", "was", "isn't", "wasn't") and len(nxt) > 1 and (
        nxt[1] in _REPLY_WORDS or (nxt[1] == "not" and len(nxt) > 2 and nxt[2] in _REPLY_WORDS))


_LEADING_CLAUSE = re.compile(r"(?i)^(?:if|when|once|after|because|since|although|though|while)\s+([^,;]+),")


def _named_in_prefix(prefix: str) -> list[str]:
    """What the sentence named before a pronoun: a topic ("As for gift cards,"), the object or subject of a clause
    ("If you bought gift cards, they ..."; "Items can be returned; they ...")."""
    core = prefix.strip()
    if not core:
        return []
    m = _TOPIC_LEAD.match(core)
    if m:
        return [m.group("np").strip()]
    # the sentence's own subject, when it opens with one: "Shoes can be returned if they are unused" (they: shoes)
    main = claim_subject(core)
    lead = _LEADING_CLAUSE.match(core)
    if lead is not None and (main is None or main.lower() in ("you", "i", "we")):
        # "If you buy a gift card, you can return it": the asker names nothing; the clause before names the thing
        named = [r for r in (claim_object(lead.group(1)), claim_subject(lead.group(1)))
                 if r and r.lower() not in ("you", "i", "we")]
        return [r for r in named if _number(tokenize(r)) is not None]
    clause = core.rstrip(" ,;:\u2014\u2013-")
    person = re.match(r"(?i)((?:you|we|i)\s+\S+.*?)\s+(?:if|when|once|unless|provided|as long as|because|since|"
                      r"so long as)\b", clause)
    if main is None and person is not None:
        # "You can return items within 30 days if they are unused": the asker names nothing; the object is named
        obj = claim_object(person.group(1) + ".")
        return [obj] if obj and obj.lower() not in ("you", "i", "we") and _number(tokenize(obj)) is not None else []
    if main is None and clause == core and not core.endswith(("and", "but", "so")):
        return []  # the pronoun is inside a clause that has not ended: "If they ...", "No doubt they ..."
    clause = re.sub(r"(?i)\s+(?:and|but|so)$", "", clause)
    if main is not None:
        return [main] if _number(tokenize(main)) is not None else []
    clause = re.sub(r"(?i)^(?:if|when|once|after|because|since|although|though|while)\s+", "", clause)
    return [r for r in (claim_object(clause), claim_subject(clause)) if r and _number(tokenize(r)) is not None]


_ABOUT_TOPIC = re.compile(r"(?i)\b(?:about|regarding|concerning)\s+(?P<np>[^?.!,;:]+)")


def question_referents(question: str) -> list[str]:
    return list(_question_referents(question))


#: a question that asks whether a statement holds ("Is it true that gift cards cannot be returned?")
_TRUE_THAT = re.compile(r"(?i)^\s*(?:is|isn't|isnt)\s+it\s+(?:really\s+|actually\s+)?(?:true|the\s+case|correct|right|so)"
                        r"\s+that\s+(.{3,}?)\s*\?*\s*$")


#: a question whether the reader saw or heard of something ("Did you see Femke Rijns came second?", "Have you heard
#: that the museum closed?"): a pronoun of the reply points at what the statement names, not at the reader
_PERCEIVED = re.compile(r"(?i)^\s*(?:did|have|had)\s+you\s+(?:already\s+|ever\s+)?(?:see|seen|hear|heard|read|notice|"
                        r"noticed|catch|caught)\s+(?:that\s+)?(?=[^\W\d]+\s+[^\W\d]+\s+\S+\s+\S+)(.{3,}?)\s*\?*\s*$")


@functools.lru_cache(maxsize=256)  # a stream asks it once per sentence of the same question
def _question_referents(question: str) -> tuple[str, ...]:
    """What a pronoun of the answer may point at in the question: its subject, its object, the topic it asks about
    ("How much does the Basic plan cost?" -> ["the Basic plan"]; "Can I return a gift card?" -> ["a gift card"];
    "Tell me about gift cards." -> ["gift cards"])."""
    q = question.strip().replace("\u2019", "'")
    if not q:
        return ()
    out: list[str] = []
    embedded = _TRUE_THAT.match(q) or _PERCEIVED.match(q)
    if embedded:  # "Is it true that gift cards cannot be returned?": what the statement names
        written = embedded.group(1).strip()
        clause = written[:1].upper() + written[1:] + "."
        found = [r if not r.startswith(clause[:1]) or not written.startswith(r[:1].lower() + r[1:]) else
                 r[:1].lower() + r[1:] for r in (claim_subject(clause), claim_object(clause)) if r]
        return tuple(r for r in (join_tokens(_person(tokenize(r))) for r in found)
                     if r.lower() not in PRONOUNS and _number(tokenize(r)) is not None)
    toks = tokenize(q.rstrip("?!. "))
    first = toks[0].lower() if toks else ""
    clause_q = q
    if first in WH:
        # "How much does the Basic plan cost?" -> "does the Basic plan cost?"; "What is the return policy?" -> X
        k = next((i for i, t in enumerate(toks) if t.lower() in AUX or t.lower() in NEG_AUX), None)
        if k is not None and toks[k].lower() in BE and first in ("what", "who", "which") and k == 1:
            np = [t for t in toks[k + 1:] if t not in ("?", ".", "!")]
            if np and (np[0].lower() in DETERMINERS or np[0][:1].isupper() or not looks_verb(np[0])) and \
                    not re.search(r"[a-z]{2,}(ed|en)$", np[0].lower()):
                low = [t.lower() for t in np]
                of = low.index("of") if "of" in low else -1
                if 0 < of < len(np) - 1 and low[of - 1] in _ASPECTS:
                    # "What are the specs of the X200?": "It weighs 1.3 kg." is the X200, not its specs
                    out.append(join_tokens(_person(np[of + 1:])))
                out.append(join_tokens(_person(np)))
            k = None
        # "Which plan has phone support?": the wh-phrase is the subject the answer names, not a referent
        clause_q = " ".join(toks[k:]) + "?" if k is not None and (k == 1 or first == "how") else ""
    parts = _split_question(clause_q) if clause_q else None
    if parts is not None:
        _, _, subject, rest = parts
        out.append(join_tokens(_person(subject)))
        if rest and (looks_verb(rest[0]) or rest[0].lower() in VERBS) and rest[0].lower() not in BE:
            obj: list[str] = []
            for t in rest[1:]:
                if t.lower() in PREPOSITIONS or not t[:1].isalnum() or t.lower() in AUX:
                    break
                obj.append(t)
            if obj and not looks_verb(obj[0]):
                out.append(join_tokens(_person(obj)))
    m = _ABOUT_TOPIC.search(q)
    if m:
        out.append(m.group("np").strip())
    return tuple(r for r in out if _number(tokenize(r)) is not None)


#: nouns that ask about an aspect of what follows their "of" ("the specs of the X200", "the price of the Pro plan")
_ASPECTS = frozenset("specs specifications features details dimensions size weight price cost costs fees terms "
                     "conditions rules requirements benefits advantages pros cons limits options hours schedule "
                     "policy policies status".split())


#: the longest subject read by :func:`claim_subject`, in tokens
SUBJECT_MAX_TOKENS = 6


#: list markers and dashes that open a line, never part of a noun phrase
_MARKERS = frozenset({"-", "*", "+", "\u2022", "\u2013", "\u2014"})


_LEAD_ADVERBIAL = re.compile(
    r"(?i)^\s*(?:(?:[a-z]{3,}ly|see|look|listen|well|so|anyway|ok|okay|alright|plus|also|still|now|today|currently|generally|usually|typically|normally|overall|"
    r"basically|however|additionally|importantly|of\s+course|in\s+general|in\s+addition|as\s+a\s+rule|in\s+most\s+cases|"
    r"in\s+practice|at\s+the\s+moment|right\s+now|these\s+days|for\s+now|for\s+example|for\s+instance)\s*,\s*|"
    r"(?:meanwhile|moreover|furthermore|separately|elsewhere|later|earlier)\s*,\s*|"
    r"(?:meanwhile|moreover|furthermore|separately|elsewhere|additionally|however|later|earlier)\s+(?=(?-i:[A-Z]))|"
    r"(?:please\s+)?(?:note|remember|keep\s+in\s+mind|be\s+aware)\s+that\s+|"
    r"(?:please\s+note|note|nb|n\.b\.|important|tip|pro\s+tip|reminder|warning|caution|update|fyi|ps|p\.s\.|"
    r"heads[-\s]up|keep\s+in\s+mind|remember)\s*:\s+|"
    r"(?:fyi|btw|tl;?dr|in\s+short|in\s+brief|in\s+a\s+nutshell|in\s+summary|to\s+summari[sz]e|to\s+sum\s+up|"
    r"bottom\s+line|short\s+answer|quick\s+answer|long\s+story\s+short|good\s+news|bad\s+news|summary|in\s+fact|"
    r"as\s+it\s+happens|that\s+said|even\s+so|by\s+the\s+way|all\s+in\s+all|in\s+any\s+case|in\s+other\s+words)"
    r"\s*[,:\u2014\u2013-]\s*)(?=\S)")


def claim_subject(sentence: str) -> str | None:
    """The subject of a plain declarative claim ("The Basic plan" in "The Basic plan includes priority support."),
    or None: no verb, a pronoun or an anaphoric subject ("They", "It", "This"), or a long or clause-like opening. A
    sentence adverb before it ("Typically, the Basic plan ...", "Note that the Basic plan ...") is no part of it, nor
    is a frame of at most four words before a colon or a dash ("TL;DR — gift cards ...", "Good news: gift cards
    ...") when a subject and its verb follow."""
    if _IMPERATIVE.match(sentence):  # "Make sure the item is unused.", "Return it within 30 days.": no subject
        return None
    frame = _FRAME.match(sentence)
    if frame is not None:
        rest = _plain_subject(sentence[frame.end():])
        if rest is not None:
            return rest
    lead = _ATTRIBUTION.match(sentence)
    if lead is not None:  # "According to the leaflet, low-dose aspirin should ...": the aspirin, never the leaflet
        return _plain_subject(sentence[lead.end():])
    phrase = PARTICIPLE_LEAD.match(sentence)
    if phrase is not None:  # "Opened in 2011, it has ...", "Founded in 1147, the abbey grew ...": the clause's subject
        return _plain_subject(sentence[phrase.end():])
    return _plain_subject(sentence)


#: a participle phrase that opens a sentence before its clause: "Opened in 2011, ", "Founded in 1147 by monks, "
PARTICIPLE_LEAD = re.compile(r"\s*(?:[A-Z][a-z]{2,}ed|Built|Born|Founded|Made|Held|Known|Written|Sold|Run|Set|Begun|"
                             r"Grown|Shown|Taken|Given|Known)\s+(?:in|by|on|at|from|for|with|over|under|after|since|as|"
                             r"near|to|into|between|during)\b[^,;:.!?]{0,100},\s+(?=\S)")


#: an imperative: a verb that opens the sentence before an object or "sure"
_IMPERATIVE = re.compile(r"(?i)\s*(?:please\s+)?(?:make|keep|return|send|bring|take|check|contact|call|email|use|"
                         r"include|attach|submit|ask|choose|select|click|go|visit|fill|complete|remember|note|ensure|"
                         r"avoid|request|print|pack|remove|store|follow)\s+(?:sure|it|them|your|the|a|an|this|that|"
                         r"these|those|all|any|us|our)\b")
#: a source before a comma that opens a claim ("According to the leaflet, ...", "Under the policy, ..."): no part of
#: its subject (a circumstance, "In 1990, the company was founded.", leaves the claim without a plain subject)
_ATTRIBUTION = re.compile(r"(?i)\s*(?:according\s+to|based\s+on|as\s+per|per|as\s+(?:stated|noted|described|explained|"
                          r"mentioned|set\s+out|outlined)\s+in|under\s+(?:the|this|your|our)\s+(?:\w+\s+)?(?:policy|"
                          r"terms|rules|plan|agreement|contract|guidelines))\b[^,;:.!?]{0,60},\s+(?=\w)")


#: a frame before a claim: at most four words and a colon or a dash ("TL;DR —", "Good news:", "Bottom line -")
_FRAME = re.compile(r"\s*(?:[*_]{0,2})(?:[^\W\d_][\w;'’.&/]*)(?:\s+[^\W\d_][\w;'’.&/]*){0,3}(?:[*_]{0,2})\s*"
                    r"(?::|\u2014|\u2013|\s-\s|--)\s*(?:[*_]{0,2})(?=\w)")


def without_frame(sentence: str) -> str:
    """``sentence`` without a frame that opens it and says nothing ("TL;DR — ", "Good news: ", "In short, ",
    "Typically, "), when a subject and its verb follow; as it is otherwise."""
    frame = _FRAME.match(sentence)
    if frame is not None and _plain_subject(sentence[frame.end():]) is not None:
        return sentence[frame.end():]
    lead = _LEAD_ADVERBIAL.match(sentence)
    if lead is not None and _plain_subject(sentence[lead.end():]) is not None:
        return sentence[lead.end():]
    return sentence


def without_source(sentence: str) -> str:
    """``sentence`` without the source it opens with ("According to the policy, items can be returned ..." -> "Items
    can be returned ..."), when a subject and its verb follow; as it is otherwise. The model reads a claim attributed
    to a source as less entailed than the claim (0.49 against 0.92)."""
    lead = _ATTRIBUTION.match(sentence)
    if lead is None or _plain_subject(sentence[lead.end():]) is None:
        return sentence
    rest = sentence[lead.end():]
    return rest[:1].upper() + rest[1:]


#: words that open a subordinate clause before the main one ("Once the report is filed, a replacement will be issued.")
_SUBORDINATORS = frozenset("if when while although though because once after before until unless since whenever "
                           "whereas".split())


def _plain_subject(sentence: str, main: bool = True) -> str | None:
    toks = tokenize(_LEAD_ADVERBIAL.sub("", sentence, count=1))
    if main and toks and toks[0].lower() in _SUBORDINATORS and "," in sentence:
        # the main clause's subject: "a replacement", not "Once the report" (a pronoun after it points there)
        return _plain_subject(sentence.split(",", 1)[1], main=False)

    def verb(k: int) -> bool:  # a finite verb here: an auxiliary, or a verb form that is not capitalised (a name)
        tok = toks[k]
        return tok.lower() in AUX or tok.lower() in NEG_AUX or (looks_verb(tok) and not tok[:1].isupper())

    end = next((k for k in range(1, len(toks)) if verb(k)), None)
    if end is None:
        return None
    while end + 1 < len(toks) and verb(end + 1) and toks[end].lower() not in AUX and toks[end].lower() not in NEG_AUX:
        end += 1  # "The Basic plan includes", "Gift cards can": a noun that looks like a verb ends the subject
    subject = toks[:end]
    while subject and (subject[0] in _MARKERS or re.fullmatch(r"\d{1,3}[.)]?", subject[0]) and len(subject) > 1
                       and subject[1] in (".", ")")):
        subject = subject[1:]  # a list item's marker ("- The council approved ...") is no part of the subject
        if subject and subject[0] in (".", ")"):
            subject = subject[1:]
    if "," in subject:  # "The film, directed by X,": the subject is what comes before the apposition
        subject = subject[: subject.index(",")]
    if any(t in _MARKERS or t in ("\u2014", "\u2013", ":", ";") for t in subject):
        return None  # a dash or a colon inside: no noun phrase ("Sure thing \u2014 just send ...")
    words = [t for t in subject if any(c.isalnum() for c in t)]
    if len(words) > 2 and words[-1].lower() in _PERSONAL_SUBJECTS:
        # "The info I have only says ...", "The car you rented is ...": a relative clause without "that" follows
        subject = subject[: len(subject) - 1 - subject[::-1].index(words[-1])]
        words = words[:-1]
    if not words or len(subject) > SUBJECT_MAX_TOKENS or words[0].lower() in PRONOUNS or \
            words[0].lower() in BOUNDARY_WORDS or words[0].lower() in ("please", "simply") or \
            words[0].lower() in PREPOSITIONS or words[0].lower() in _SUBORDINATORS:
        return None
    return join_tokens(subject)


#: pronouns that open a relative clause without "that" after a noun ("the info I have")
_PERSONAL_SUBJECTS = frozenset({"i", "you", "we", "they", "he", "she"})


def claim_object(sentence: str) -> str | None:
    """The noun phrase right after a claim's verb ("items" in "You can return items within 30 days.", "phone
    support" in "The Pro plan includes phone support."), or None (a pronoun, a number, a preposition first)."""
    toks = tokenize(sentence)

    def verb(tok: str) -> bool:
        low = tok.lower()
        return low in AUX or low in NEG_AUX or low in NEG_AUX_BARE or (looks_verb(tok) and not tok[:1].isupper())

    k = next((i for i in range(1, len(toks)) if verb(toks[i])), None)
    if toks and toks[0].lower() in _PERSONAL and len(toks) > 1 and toks[1][:1].isalpha():
        k = 1 if verb(toks[1]) else 2  # "you bought gift cards": after a personal pronoun, the verb (known or not)
    if k is None:
        return None
    while k < len(toks) and (verb(toks[k]) or toks[k].lower() in {"not", "also", "only", "still", "really", "never",
                                                                 "be", "been", "being"}):
        k += 1
    phrase: list[str] = []
    while k < len(toks) and toks[k][:1].isalpha() and toks[k].lower() not in PREPOSITIONS and \
            toks[k].lower() not in AUX and toks[k].lower() not in {"and", "or", "but", "that", "which", "who", "if"}:
        phrase.append(toks[k])
        k += 1
    if not phrase or phrase[0].lower() in PRONOUNS or phrase[0].lower() in _NOT_OBJECTS or \
            len(phrase) > SUBJECT_MAX_TOKENS:
        return None
    return join_tokens(phrase)


_PERSONAL = frozenset({"i", "you", "we", "they", "he", "she"})
#: words after a verb that are no noun phrase a pronoun could point at
_NOT_OBJECTS = frozenset("today tomorrow yesterday tonight now here there then soon later again away back home "
                         "free available possible open closed".split())


def claim_names(sentence: str) -> list[str]:
    """The capitalised words of a claim past its first word ("Basic" in "Priority support is included in the Basic
    plan."): the names a fact may be moved to, wherever they stand in the sentence."""
    toks = tokenize(sentence)
    return [t for k, t in enumerate(toks) if k > 0 and t[:1].isupper() and t.isalpha() and len(t) > 1
            and toks[k - 1] not in (".", "!", "?", ":") and t.lower() not in PRONOUNS and t != "I"]


def makes_claim(sentence: str) -> bool:
    """A sentence that says something about the world: not pleasantries, not an honest refusal ("I could not find
    that in the documents."), not a yes/no answer alone ("Unfortunately not.", "👍")."""
    return is_claim(sentence) and not is_refusal(sentence) and not yes_no_answer(sentence)


def _capitalised(token: str) -> bool:
    """A word written as a name: a capital first, or a brand's camel case ("iPhone", "eBay"; not a unit: "kWh",
    "mAh", "pH")."""
    return token[:1].isupper() or re.fullmatch(r"[a-z]{1,2}[A-Z][a-z]{2,}[A-Za-z]*", token) is not None


#: "this laptop", "that route": a thing the conversation named before
_DEMONSTRATIVE_PHRASE = re.compile(r"(?i)\b(?:this|that|these|those)\s+[a-z][a-z-]*\s+\w")
#: words that follow "Is this ...?" as what is said of "this", not as its noun: "Is this worth it?", "Is this free?"
_PREDICATE_WORDS = frozenset("worth free open safe true ok okay right wrong possible allowed enough normal good bad fine "
                             "correct new real ready due part one same different vegan halal kosher gluten".split())
#: endings of adjectives and participles: "Is this available in blue?", "Is that covered?"
_ADJECTIVE_END = re.compile(r"(?:able|ible|ed|en|ing|ful|ous|ive|ic|al|ent|ant|ary|ly|less|ish)$")


def _demonstrative_determiner(tokens: list[str], aux_kind: str) -> bool:
    """The question's "this"/"that"/"these"/"those" is its subject's determiner ("Does this plan include SSO?", "Is
    this curry vegan?"), not the subject itself ("Does this include VAT?", "Is this available in blue?", "Is this
    worth it?"): a lower-case word follows that is no verb, adjective or small word, and something is said after
    it (a verb, or for "be" anything but a preposition)."""
    if tokens[0].lower() not in ("this", "that", "these", "those") or len(tokens) < 3:
        return False
    noun, after = tokens[1], tokens[2].lower()
    if not re.fullmatch(r"[a-z][a-z-]*", noun) or noun in AUX or noun in PREPOSITIONS or \
            noun in DETERMINERS or noun in BOUNDARY_WORDS or noun in _PREDICATE_WORDS or noun in PRONOUNS:
        return False
    if noun in VERBS:  # "Does this plan include SSO?": a verb right after it makes the first its noun
        return aux_kind != "be" and after in VERBS and after not in AUX
    if aux_kind == "be":
        return not _ADJECTIVE_END.search(noun) and after not in PREPOSITIONS and after not in ("to", "it", "them") \
            and re.fullmatch(r"[a-z][a-z-]*", after) is not None
    return after in VERBS or after in _NOT_BASE_VERBS


def _subject_end(tokens: list[str], aux_kind: str) -> int:
    """Index of the first token after the subject in the tokens that follow the question's auxiliary."""
    n = len(tokens)
    if n == 0:
        return 0
    first = tokens[0].lower()
    possessive = first in _POSSESSIVE_DETERMINERS and n > 1 and tokens[1] not in AUX and tokens[1] not in NEG_AUX \
        and re.fullmatch(r"[a-z0-9][a-z0-9-]*", tokens[1]) is not None
    if (first in PRONOUNS or first in PERSON) and not possessive and not (len(tokens[0]) > 1 and tokens[0].isupper()) \
            and not _demonstrative_determiner(tokens, aux_kind):
        return 1  # ("US roaming", "IT support": a name written in capitals is no pronoun)
    i = 0
    if first in DETERMINERS or possessive:  # "my flood claim", "our pets": a possessive is the noun's determiner
        i = 1
    elif re.fullmatch(r"\d[\d,.]*", first):
        i = 1
    start = i
    # a proper name: a run of capitalised words (with "of"/"the"/"and" inside when a capital follows; a brand written
    # in camel case, "iPhone", "eBay", is one)
    if i < n and _capitalised(tokens[i]):
        j = i
        while j < n and (_capitalised(tokens[j]) and not (j > i and tokens[j].lower() in DEMONYMS and j + 1 < n
                                                           and tokens[j + 1][:1].islower())
                         or (j > i and re.fullmatch(r"\d{1,4}[A-Za-z]{0,3}", tokens[j]) is not None
                             and _capitalised(tokens[j - 1]))  # a model's number: "the AeroBook 16", "iPhone 15"
                         or (tokens[j].lower() in {"of", "the", "and", "de", "'s"}
                                                      and j + 1 < n and tokens[j + 1][:1].isupper())
                         or (tokens[j] == "." and tokens[j - 1] in _TITLES)):  # "Dr. Smith"
            j += 1
        if j < n and tokens[j].lower() == "'s":  # possessive: "Einstein 's theory"
            return _subject_end(tokens[j + 1:], aux_kind) + j + 1 if j + 1 < n else j + 1
        if j < n and tokens[j - 1].lower().endswith("'s"):  # possessive: "Acme's headquarters"
            return j + _subject_end(tokens[j:], aux_kind)
        if i > 0 and j < n and tokens[i - 1].lower() in DETERMINERS and (
                tokens[i - 1].lower() != "both" or aux_kind != "be"):  # "Are both X and Y flowering plants?"
            # "the Basic plan": a determiner, a name and the common nouns it qualifies (up to the verb)
            while j + 1 < n and _noun_here(tokens, j, aux_kind):
                j += 1
        elif aux_kind == "be" and j + 1 < n and _noun_here(tokens, j, aux_kind) and (tokens[j].lower() not in VERBS or tokens[j].lower().endswith("ing")) \
                and (re.fullmatch(r"[a-z]{2,}(ed|en)", tokens[j + 1].lower()) or tokens[j + 1].lower() in _PARTICIPLES):
            return j + 1  # "Is US roaming included on the Plus plan?": a name and the noun it qualifies, then the participle
        elif i == 0 and aux_kind != "be" and j + 1 < n and re.fullmatch(r"[a-z][a-z-]*", tokens[j]) and \
                tokens[j].lower() not in VERBS and tokens[j].lower() not in PREPOSITIONS and \
                tokens[j].lower() not in DETERMINERS and tokens[j].lower() not in BOUNDARY_WORDS and \
                tokens[j + 1].lower() in VERBS:
            return j + 1  # "Do Gold members get ...?": a name and the noun it qualifies, then the verb
        return j
    # a common noun phrase: words up to a boundary (preposition, determiner, participle, known verb, "be", ...)
    j = i
    while j < n:
        low = tokens[j].lower()
        if j > start and (low in PREPOSITIONS or low in DETERMINERS or low in BOUNDARY_WORDS or low in AUX
                          or low in NEG_AUX or not re.match(r"[A-Za-z]", low)):
            break
        if j > start and aux_kind != "be" and low in VERBS and not (
                _verb_follows(tokens, j) and not (aux_kind == "modal" and _plural_object(tokens, j + 1))) and not (
                j + 1 < n and tokens[j + 1].lower() in ("and", "be")):  # "the Basic plan and the Pro plan"; "Will
            break  # the flood claim be paid?": the word before a modal's "be" ends the subject
        if j > start and aux_kind == "be" and re.search(r"[a-z]{2,}(ed|en|ing)$", low) and low not in VERBS and \
                j + 2 != n:  # "Is standard shipping free?": the word before the last one is no participle
            break
        j += 1
    if aux_kind != "be" and j < n and j - start >= 2 and tokens[j].lower() in DETERMINERS and \
            tokens[j].lower() not in ("both", "all") and re.fullmatch(r"[a-z]+", tokens[j - 1]):
        return j - 1  # "Did the council approve the plan?": a noun phrase does not run into a determiner; its verb does
    if aux_kind != "be" and j < n and j - start >= 2 and tokens[j].lower() in PREPOSITIONS and \
            re.fullmatch(r"[a-z]+", tokens[j - 1]) and not tokens[j - 1].lower().endswith(_NOUN_ENDINGS) and \
            not any(t.lower() in VERBS for t in tokens[start:j]):
        # "Can the receiving team score in doubles?": a noun phrase with no verb before the preposition ends in it
        return j - 1
    if j == n or (j < n and tokens[j].lower() in PREPOSITIONS and aux_kind == "be" and j - start > 1):
        # no boundary found before the end, or "be" + "the store open on Sundays": the last word before the end or
        # the preposition is the predicate ("open"), the words before it the subject
        if aux_kind == "be" and j - start >= 2:
            return j - 1
        if aux_kind != "be" and j - start >= 2:
            return start + 1  # "Does the warranty cover ...": a determiner and one noun
    return max(j, start + 1)


_TITLES = frozenset("Dr Mr Mrs Ms Mx Prof St Sr Jr Gen Col Capt Lt Sgt Rev Hon".split())
#: possessive determiners: "Will my flood claim be paid?" is about "my flood claim", not "my"
_POSSESSIVE_DETERMINERS = frozenset("my our your his her its their".split())


#: endings of nouns that are no verb ("the gift card holder in Canada")
_NOUN_ENDINGS = ("er", "or", "ion", "ment", "ness", "ity", "ance", "ence", "ship", "ist", "ism", "s")


def _plural_object(tokens: list[str], k: int) -> bool:
    """``tokens[k]`` reads as a plural noun, not a verb, after a modal's bare verb: "Can the provider raise *prices*?"
    (no verb after a modal takes -s)."""
    return k < len(tokens) and tokens[k].lower().endswith("s") and tokens[k].lower() not in VERBS


def _verb_follows(tokens: list[str], j: int) -> bool:
    """A verb right after ``tokens[j]``: then ``tokens[j]`` is a noun that looks like a verb ("the Basic plan
    include ...", "the return policy cover ...")."""
    return j + 1 < len(tokens) and (tokens[j + 1].lower() in VERBS or (
        looks_verb(tokens[j + 1]) and tokens[j + 1].lower() not in BE and tokens[j + 1].lower() not in AUX))


def _noun_here(tokens: list[str], j: int, aux_kind: str) -> bool:
    """``tokens[j]`` continues a noun phrase: a lower-case word that is no preposition, determiner, auxiliary or (in a
    do/modal question) the verb."""
    low = tokens[j].lower()
    if not re.fullmatch(r"[a-z][a-z-]*", low) or low in PREPOSITIONS or low in DETERMINERS or low in BOUNDARY_WORDS \
            or low in AUX or low in NEG_AUX:
        return False
    if aux_kind == "be":  # "Was the Eiffel Tower built in 1889?": a participle is the predicate, not a noun
        return j + 1 < len(tokens) and not (re.fullmatch(r"[a-z]{2,}(ed|en)", low) or low in _PARTICIPLES) and \
            tokens[j + 1].lower() != "than"  # "Is the AeroBook 14 lighter than ...?"
    if aux_kind == "modal" and j + 1 < len(tokens) and tokens[j + 1].lower() in ("be", "have", "get"):
        return True  # "Can the Pro plan be returned?": the word before the bare verb ends the subject
    if j + 1 < len(tokens) and tokens[j + 1].lower() == "and":
        return True  # "Do both the Basic plan and the Pro plan ...?": a noun ends the first member
    return low not in VERBS or _verb_follows(tokens, j)


#: irregular participles that end a "be" question's subject ("Was the Eiffel Tower built ...?")
_PARTICIPLES = frozenset("built made sold born found held known given taken written shown paid sent kept left spent "
                         "lost told said seen done run won bought brought led put set cut shut hit read split".split())


def _person(tokens: list[str]) -> list[str]:
    out = []
    for k, tok in enumerate(tokens):
        low = tok.lower()
        rep = PERSON.get(low) if tok != "US" else None  # "in the US" is the country
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
    q = re.sub(r"^(so|and|but|also|then|ok|okay|well|hey|hi|please|tell me|quick (?:question|q)|one more thing|"
               r"question)[,:]?\s+", "", q, flags=re.I)
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
    if 1 < end < len(body) and body[end - 1].lower() == "and":  # "the Basic plan and | the Pro plan"
        end -= 1
    while 0 < end < len(body) - 1 and (body[end].lower() == "and" or body[end] == "," and "and" in body[end:]) and (
            body[0].lower() == "both" or body[end + 1].lower() in DETERMINERS or body[end + 1][:1].isupper()):
        # a coordinated subject: "both the Basic plan and the Pro plan", "X and the Y", "X, Y and Z"
        more = _subject_end(body[end + 1:], aux_kind)
        if end + 1 + more >= len(body) and aux_kind == "be":
            break
        end += 1 + more
    subject, rest = body[:end], body[end:]
    if rest and rest[0].lower() == "not":  # "Does it not include ...?"
        negq, rest = True, rest[1:]
    if not subject or (not rest and aux_kind != "be"):
        return None
    return aux, negq, subject, rest


def _clause(question: str, positive: bool | None = None, plain: bool = False,
            asked_object: bool = False) -> tuple[list[str], list[str], list[str]] | None:
    """(subject, verb, rest) of a yes/no question turned declarative, the asker's pronouns swapped; the verb is
    negated unless ``positive`` (None: as the question itself is, "Isn't it free?" -> "it is not free"); with
    ``plain``, a positive "do"/"does" gives way to the verb it carries ("The plan includes SSO."); ``asked_object``:
    the question asks for its verb's object (a wh-question), so the word after the subject is the verb."""
    parts = _split_question(question)
    if parts is None:
        return None
    aux, negq, subject, rest = parts
    if not asked_object and aux not in BE and aux not in HAVE and len(rest) == 1 and len(subject) > 2 and \
            subject[-1].lower() in VERBS \
            and subject[-2][:1].isalpha() and subject[-2].lower() not in DETERMINERS:
        # a yes/no question's last word is the object of its verb: "Does the Basic plan include support?" (not
        # "the Basic plan include" + "support"; a wh-question's verb may end it: "How much does the plan cost?")
        subject, rest = subject[:-1], subject[-1:] + rest
    subject = _person(subject)
    aux = _agree(aux, subject)
    if positive is None:
        positive = not negq
    rest = _person(rest)
    if plain and positive and aux.lower() in ("do", "does") and rest and re.fullmatch(r"[a-z]+", rest[0]) and \
            rest[0] not in _NOT_BASE_VERBS:
        # "Do unsubscribed contacts count ...?" + yes: "Unsubscribed contacts count ..." (the model reads the emphatic
        # "do count" as a contrast with what the contexts say: contradiction 0.99 where the plain verb is entailed)
        return subject, [], [_third_person(rest[0]) if aux.lower() == "does" else rest[0]] + rest[1:]
    # a positive "did" stays emphatic ("did win"): grammatical without the verb's past form
    return subject, [aux] if positive else _negated(aux), rest


#: words that may follow a question's "do" without being its verb ("Do all plans ...", "Does not ...")
_NOT_BASE_VERBS = frozenset("not all both each every also still really actually ever always usually only even just "
                            "so".split())


def _third_person(verb: str) -> str:
    """``verb``'s third person singular present: "include" -> "includes", "apply" -> "applies", "have" -> "has"."""
    if verb == "have":
        return "has"
    if re.search(r"(?:s|sh|ch|x|z|o)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"


#: frames that ask a yes/no question indirectly: "Do you know if I can return a gift card?", "Could you check whether
#: gift cards are refundable?", "Please tell me if ...", "I wonder whether ...", "Is it true that ...": a yes or no
#: answers the clause inside, not the frame ("You do know if you can return a gift card.")
_ASKED_INDIRECTLY = re.compile(
    r"(?i)^(?:(?:hi|hello|hey|ok|okay|so|also|and|but)\b[,!.]?\s+)?(?:(?:"
    r"(?:do|does|did) (?:you|anyone|anybody) (?:happen to )?(?:know|think|believe|reckon|suppose|remember)"
    r"|(?:can|could|would|will) you (?:please |kindly )?(?:tell me|let me know|check|confirm|verify|find out|clarify)"
    r"|(?:please,? |kindly )?(?:tell me|let me know|confirm|check|clarify|find out)"
    r"|i(?:'d| would) (?:like|love) to know|i (?:want|need) to know|i(?:'m| am) (?:not sure|unsure|curious)"
    r"|(?:i(?:'m| am| was) )?wondering|i wonder(?:ed)?|any idea"
    r") (?:if|whether)|(?:do|does) (?:you|anyone) (?:think|believe|reckon|suppose|know that)|would you say(?: that)?"
    r"|is it (?:true|correct|right|the case|so) that)\s+(?P<clause>.+?)[\s?.!]*$")
#: a statement with a tag that asks for confirmation: "Gift cards can be returned, right?", "..., can't they?"
_TAGGED = re.compile(
    r"(?i)^(?P<clause>.+?),\s*(?:right|correct|true|yes|no|yeah|ok|okay|isn'?t (?:it|that (?:right|so|true))"
    r"|is (?:it|that) (?:right|correct|true|so)|am i right|(?:(?:is|are|was|were|do|does|did|could|would|should"
    r"|have|has|had|may|might|must)(?:n'?t)?|can|ca'?n'?t|cannot|will|won'?t) (?:it|they|i|you|we|he|she|there|this"
    r"|that|these|those))\s*\?+$")
_ASKS_NOTHING = re.compile(r"(?i)(?:yes or no|true or false|right|correct|ok(?:ay)?|please|thanks?|thank you)[?.!]*")
_AGREE_TAGS = frozenset("right correct true yes no yeah ok okay is am isn't isnt".split())
#: a condition before the question: "If I buy a gift card, can I return it?"
_CONDITION_FIRST = re.compile(
    r"(?i)^(?P<cond>(?:if|when|once|after|before|unless|assuming|provided|suppose|say)\b[^,?]{2,200}),\s*(?P<main>.+\?)$")
_WH_LEAD = frozenset("what which who whom whose when where why how".split())


def _declared(clause: str, yes: bool, by_truth: bool = False) -> str | None:
    """A declarative clause the asker wants confirmed ("I can return a gift card"), as the statement a yes (or no)
    makes, the asker's pronouns swapped; None when it is not a clause with a verb."""
    clause = re.sub(r"(?i)\bI'm\b", "I am", clause.strip().replace("\u2019", "'")).rstrip(" ?.!,")
    toks = tokenize(clause)
    if len(toks) < 2 or toks[0].lower() in _WH_LEAD or not any(
            t.lower() in AUX or t.lower() in NEG_AUX or looks_verb(t) for t in toks[1:]):
        return None
    swapped = _person(toks)
    for k in range(1, len(swapped)):  # "you am" / "you was": the asker's verb agrees with "you"
        if swapped[k - 1].lower() == "you" and swapped[k].lower() in ("am", "was"):
            swapped[k] = "are" if swapped[k].lower() == "am" else "were"
    statement = as_sentence(swapped)
    if by_truth and any(t.lower() in NEG_AUX or t.lower() in ("not", "never") for t in swapped):
        # "Gift cards can't be returned, can they?": "no" agrees (they cannot), "yes" says they can
        return negate(statement) if yes else statement
    return statement if yes else negate(statement)


def _asked_statement(question: str, yes: bool) -> str | None:
    """The statement a yes or no makes to a question asked indirectly, with a tag, or after a condition; None for
    other shapes."""
    q = question.strip().replace("\u2019", "'")
    m = _ASKED_INDIRECTLY.match(q)
    if m:
        inner = m.group("clause")
        first = inner.split(maxsplit=1)[0].lower() if inner.split() else ""
        if first in AUX or first in NEG_AUX:  # "Is it true that can I ...?" is rare; "Do you think can ..." too
            return yes_no_statement(inner.rstrip(" .!") + "?", yes)
        return _declared(inner, yes)
    m = _TAGGED.match(q)
    if m:
        # an auxiliary tag ("..., can they?") is answered by the truth of the positive clause, as a negative
        # question is; "..., right?" by agreeing with the clause as said
        tag = q[m.end("clause"):].strip(" ,?").lower()
        return _declared(m.group("clause"), yes, by_truth=tag.split()[0] not in _AGREE_TAGS if tag else False)
    m = _CONDITION_FIRST.match(q)
    if m:
        main = yes_no_statement(m.group("main"), yes)
        if main is None:
            return None
        cond = join_tokens(_person(tokenize(m.group("cond"))))
        lead = main.split(maxsplit=1)[0]
        if lead in ("You", "It", "They", "There", "The", "A", "An", "This", "That", "These", "Those", "We", "He",
                    "She", "Your", "Its", "Their"):
            main = lead.lower() + main[len(lead):]
        return f"{cond[0].upper()}{cond[1:]}, {main}"
    return None


#: predicates that relate the members of a coordinated subject to each other ("Are X and Y from the same country?",
#: "Are X and Y married?"): said of the pair, not of each member
_COLLECTIVE = frozenset("same different similar alike together related married siblings brothers sisters twins "
                        "partners friends rivals neighbours neighbors equal identical both".split())
#: the auxiliary a single member takes where the pair takes a plural one ("Are X and Y ...?" -> "X is ...")
_SINGULAR_AUX = {"are": "is", "were": "was", "do": "does", "have": "has"}


def _conjuncts(subject: list[str]) -> list[list[str]] | None:
    """The members of a coordinated subject ("Larry Gagosian and Steve Dildarian", "X, Y and Z"), or None."""
    members: list[list[str]] = [[]]
    for k, tok in enumerate(subject):
        if tok.lower() == "and" or (tok == "," and k + 1 < len(subject) and subject[k + 1].lower() != "and"):
            members.append([])
        elif tok != ",":
            members[-1].append(tok)
    if len(members) < 2 or any(not m for m in members):
        return None
    return members


def conjunct_statements(question: str) -> list[str] | None:
    """The statements a "yes" makes, one per member, to a yes/no question about two or more things at once ("Are
    both X and Y flowering plants?"); a "no" says that not all of them hold. None when the question is not of that
    shape or its predicate relates the members to each other ("the same country", "married"). A plural noun said of
    one named member becomes singular ("X is an art dealer.").

    >>> conjunct_statements("Are Larry Gagosian and Steve Dildarian both art dealers?")
    ['Larry Gagosian is an art dealer.', 'Steve Dildarian is an art dealer.']
    >>> conjunct_statements("Were both the Hanover Hound and the Toy Trawler Spaniel introduced to France?")
    ['The Hanover Hound was introduced to France.', 'The Toy Trawler Spaniel was introduced to France.']
    >>> conjunct_statements("Are Hans Fallada and John Buchan both from the same country?") is None
    True
    """
    parts = _split_question(question)
    if parts is None:
        return None
    aux, negq, subject, rest = parts
    if negq:
        return None
    both = False
    if subject and subject[0].lower() == "both":
        both, subject = True, subject[1:]
    if rest and rest[0].lower() == "both":
        both, rest = True, rest[1:]
    if aux not in BE and aux not in HAVE and len(rest) == 1 and len(subject) > 2 and subject[-1].lower() in VERBS:
        subject, rest = subject[:-1], subject[-1:] + rest  # "Do both X and Y include support?"
    members = _conjuncts(subject)
    if members is None or not rest or len(members) > 6:
        return None
    if len({m[-1][:1].isupper() for m in members}) > 1:  # "the Basic and Pro plans": a head noun the members share
        return None
    if any(t.lower() in _COLLECTIVE for t in rest) or any(t.lower() in ("each", "other", "another") for t in rest):
        return None
    named = all(m[0][:1].isupper() for m in members)
    if not (both or named):  # "Are cats and dogs mammals?" splits only with "both"; names split as they are
        return None
    out: list[str] = []
    for m in members:
        plural = not m[-1][:1].isupper() and m[-1].lower().endswith("s") and not m[-1].lower().endswith("ss")
        verb = aux if plural else _SINGULAR_AUX.get(aux, aux)
        pred = list(rest)
        if not plural and aux in BE and pred and pred[0].lower() not in DETERMINERS and pred[-1].lower().endswith("s") \
                and not pred[-1].lower().endswith("ss") and pred[-1][:1].islower() and \
                not re.search(r"(ed|en)$", pred[0].lower()) and not any(t.lower() in PREPOSITIONS for t in pred):
            # "Are X and Y both art dealers?" -> "X is an art dealer." (the plural noun said of one member)
            noun = pred[-1]
            noun = noun[:-3] + "y" if noun.lower().endswith("ies") else noun[:-2] if re.search(
                r"(ches|shes|xes|sses)$", noun.lower()) else noun[:-1]
            pred = ["an" if pred[0][:1].lower() in "aeiou" else "a"] + pred[:-1] + [noun]
        out.append(as_sentence(_person(m) + [verb] + _person(pred)))
    return out


def asks_yes_no(sentence: str) -> bool:
    """An inverted yes/no question ("Can gift cards be returned?", "If I buy one, can I return it?"), which asserts
    nothing; not a statement with a tag ("Gift cards cannot be returned, right?") nor a frame around a clause ("Is it
    true that ...?"), which assert their clause."""
    q = sentence.strip().replace("\u2019", "'")
    if not q.endswith("?") or _TAGGED.match(q) or _ASKED_INDIRECTLY.match(q):
        return False
    m = _CONDITION_FIRST.match(q)
    return _clause(m.group("main") if m else q) is not None


def yes_no_statement(question: str, yes: bool) -> str | None:
    """The statement a yes (``yes=True``) or no answer to ``question`` makes, or None for other question shapes.

    >>> yes_no_statement("Can gift cards be returned?", True)
    'Gift cards can be returned.'
    >>> yes_no_statement("Can gift cards be returned?", False)
    'Gift cards cannot be returned.'
    >>> yes_no_statement("Isn't the store open on Sundays?", True)
    'The store is open on Sundays.'
    >>> yes_no_statement("Do you know if I can return a gift card?", False)
    'You cannot return a gift card.'
    >>> yes_no_statement("Gift cards can be returned, right?", True)
    'Gift cards can be returned.'
    >>> yes_no_statement("If I buy a gift card, can I return it?", True)
    'If you buy a gift card, you can return it.'
    """
    spans = split_sentences(question.strip())
    if len(spans) > 1:
        resolved = question_in_conversation(question.strip(), [])
        if resolved != question.strip() and len(split_sentences(resolved)) == 1:
            return yes_no_statement(resolved, yes)  # "I bought a gift card. Can I return it?"
        # "That sounds great. Can I return gift cards?": a yes or no answers the message's last question, when the
        # message ends with it ("Can I return gift cards? How long do I have?" + "Yes.": none it can be read as)
        said = [sp.of(question.strip()) for sp in spans]
        # what follows the question and asks nothing more: "Thanks!", "Yes or no?", "Right?"
        while len(said) > 1 and (not said[-1].rstrip().endswith("?") and not is_claim(said[-1]) or
                                 _ASKS_NOTHING.fullmatch(said[-1].strip())):
            said.pop()
        questions = [k for k, t in enumerate(said) if t.rstrip().endswith("?")]
        if any(_DEMONSTRATIVE_PHRASE.search(said[k]) for k in questions):
            return None  # "I bought the AeroBook 16. Is this laptop waterproof?": which laptop, the words cannot say
        if len(questions) == 1 and questions[0] < len(said) - 1:
            # "Can I fly business class to Tokyo? The flight is 13 hours.": what follows the one question tells the
            # guard about the asker, and a yes or no answers the question
            return yes_no_statement(said[questions[0]], yes)
        last = said[-1]
        if _DEMONSTRATIVE_PHRASE.search(last):
            return None  # "I bought the AeroBook 16. Is this laptop waterproof?": which laptop, the words cannot say
        return yes_no_statement(last, yes) if last.rstrip().endswith("?") else None
    asked = _asked_statement(question, yes)
    if asked is not None or _ASKED_INDIRECTLY.match(question.strip()) or _TAGGED.match(question.strip()):
        return asked
    # a negative question is answered by the polarity of the statement: "Isn't it free?" "Yes" = it is free
    clause = _clause(question, positive=yes, plain=True)
    if clause is None:
        return _after_lead(question, yes)
    subject, verb, rest = clause
    if not yes and [t.lower() for t in subject] == ["there"] and verb[-1:] == ["not"] and rest:
        # "Are there (any) monthly fees?" + no: "There are no monthly fees." (not "There are not monthly fees.");
        # "Is there anything I can do?" + no: "There is nothing you can do."
        if rest[0].lower() in _NOTHING:
            verb, rest = verb[:-1] + [_NOTHING[rest[0].lower()]], rest[1:]
        else:
            rest = rest[1:] if rest[0].lower() in ("any", "some") else rest
            verb = verb[:-1] + ["no"]
    modal = any(v.lower() in _MODALS for v in verb)
    if len(subject) == 1 and subject[0].lower() in _NOTHING and not (yes and modal):
        # "Did anyone call?": "Someone did call." / "Nobody did call."; "Can anyone join?" + no: "Nobody can join."
        # (+ yes: "Anyone can join.")
        subject = [_ASSERTED[subject[0].lower()] if yes else _NOTHING[subject[0].lower()]]
        verb = [_POSITIVE.get(v.lower(), v) for v in verb if v.lower() != "not"]
    if yes and not modal:
        # "Are we owed anything?" + yes: "We are owed something." ("any" asks; after "can" it is a free choice:
        # "Can I return any item?" + yes is "You can return any item.")
        rest = [_ASSERTED.get(t.lower(), t) for t in rest]
    return as_sentence(subject + verb + rest)


#: a chat question after a clause that sets it up: "I'm on council tax support, do I have to pay ...?", "Quick one,
#: can I bring my dog?"
_LEAD_THEN_QUESTION = re.compile(r"(?i)^\s*(?P<lead>[^?;:]{2,160}?),\s+(?P<question>(?:can|could|may|might|will|would|"
                                 r"shall|should|must|do|does|did|is|are|was|were|am|have|has|had|can't|cannot|"
                                 r"won't|don't|doesn't|didn't|isn't|aren't|wasn't|weren't|haven't|hasn't)\b[^?]*\?)\s*$")
#: a lead that states something of the asker: a condition for the answer ("I'm on council tax support", "my dad
#: lives up north", "we have two kids")
_ASKERS_LEAD = re.compile(r"(?i)^(?:i|i'm|i've|i'd|we|we're|we've|my|our)\b")


_ASKERS_WORDS = {"i": "you", "i'm": "you're", "i've": "you've", "i'd": "you'd", "i'll": "you'll", "me": "you",
                 "my": "your", "mine": "yours", "we": "you", "we're": "you're", "we've": "you've", "us": "you",
                 "our": "your"}
_ASKERS_WORD = re.compile(r"(?i)\b(?:i'm|i've|i'd|i'll|we're|we've|i|me|my|mine|we|us|our)\b(?!')")


def _after_lead(question: str, yes: bool) -> str | None:
    """The statement a yes or no to a question after a lead clause makes: the lead, when it tells something of the
    asker, is its condition ("I'm on council tax support, do I have to pay full whack?" + no: "If you're on council
    tax support, you do not have to pay full whack."); other leads ("Quick one,", "Thinking of going in winter,")
    ask nothing of it."""
    m = _LEAD_THEN_QUESTION.match(question.replace("\u2019", "'"))
    if m is None or "," in m.group("question"):
        return None
    lead, asked = m.group("lead").strip(), m.group("question")
    if _ASKERS_LEAD.match(lead) and not lead.lower().startswith(("if ", "when ")):
        lead = _ASKERS_WORD.sub(lambda w: _ASKERS_WORDS[w.group().lower()], lead)
        return yes_no_statement(f"If {lead[:1].lower() + lead[1:]}, {asked}", yes)
    return yes_no_statement(asked, yes)


#: what a yes asserts where the question asks with "any": the existential word
_ASSERTED = {"anything": "something", "anyone": "someone", "anybody": "somebody", "anywhere": "somewhere",
             "any": "some"}
_MODALS = frozenset("can could may might will would shall should must cannot can't couldn't won't wouldn't "
                    "shouldn't mustn't".split())
#: a negated auxiliary's positive form, where the subject carries the "no" ("Nobody can join.")
_POSITIVE = {"cannot": "can", "can't": "can", "couldn't": "could", "won't": "will", "wouldn't": "would",
             "shouldn't": "should", "mustn't": "must", "isn't": "is", "aren't": "are", "wasn't": "was",
             "weren't": "were", "doesn't": "does", "don't": "do", "didn't": "did", "hasn't": "has", "haven't": "have"}
#: what a no says where the question asks with "anything", "anyone"
_NOTHING = {"anything": "nothing", "anyone": "nobody", "anybody": "nobody", "anywhere": "nowhere"}


#: words that open a clause or phrase that cannot stand as a sentence after a yes/no word ("Yes, because ...",
#: "No, unless ...", "Yes, by a vote of 7 to 2."): the answer is the question's statement with it attached
_SUBORDINATE = frozenset("because since as if unless provided providing although though while whereas when once "
                         "until so given assuming except".split())


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
        # "What did Einstein win in 1921?" -> "Einstein did win A in 1921."; the question asks for the object, so the
        # word after the subject is its verb ("What does the Pro plan include?": not "the Pro" + "plan include")
        clause = _clause(" ".join(rest), asked_object=True)
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


def _trim(rest: str) -> str:
    """The rest of a yes/no answer without the marks and symbols around it ("within 30 days 👍." -> "within 30
    days")."""
    end = len(rest)
    while end and (rest[end - 1] in ".!?…,;: " or rest[end - 1] in YES_SYMBOLS or rest[end - 1] in NO_SYMBOLS
                   or unicodedata.category(rest[end - 1]) in ("So", "Sk", "Cf", "Mn", "Me", "Zs")):
        end -= 1
    return rest[:end].strip()


def _dependent(toks: list[str]) -> bool:
    """Words that cannot stand as a sentence: a subordinate clause or a prepositional phrase ("because ...",
    "within 30 days")."""
    first = toks[0].lower() if toks else ""
    return first in _SUBORDINATE or (first in PREPOSITIONS and first != "to")


#: subordinators of a reason ("because ..."): a reply with one claims the reason, and its yes/no statement is what the
#: reason is for (an inference the model is not asked to make; it must only not be denied)
REASONS = frozenset("because since as given".split())


_QUANTITY = re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|"
                       r"fifty|hundred|thousand|unlimited|more|less|fewer|over|under|after|before|until)\b", re.I)


def states_quantity(statement: str) -> bool:
    """The statement names a number, an amount or a time ("20 credits", "unlimited data", "at 11 pm"): whether it
    follows from a reason is a comparison the model does not make."""
    return _QUANTITY.search(statement) is not None


_BOUND = re.compile(r"(?i)\b(?:up\s+to|at\s+most|no\s+more\s+than|not\s+more\s+than|a\s+maximum\s+of|maximum\s+of|"
                    r"max(?:imum)?|limited\s+to|capped\s+at|cannot\s+exceed|may\s+not\s+exceed)\s+(?:\$)?(?P<n>\d[\d,]*(?:\.\d+)?)"
                    r"\s*(?P<unit>[a-z]+)?")
_AMOUNT = re.compile(r"(?i)(?:\$)?(?P<n>\d[\d,]*(?:\.\d+)?)\s*(?:-\s*)?(?P<unit>[a-z]+)?")


def exceeds_bound(statement: str, reason: str) -> bool | None:
    """Whether the amount a statement asks about is over the bound its reason states ("You can take 24 credits." with
    "Students may take up to 18 credits." -> True; 12 credits -> False), None when they cannot be compared (no bound,
    no amount, other units). The model does not compare numbers; this comparison decides a reply's statement."""
    bound = _BOUND.search(reason)
    amount = _AMOUNT.search(statement)
    if bound is None or amount is None:
        return None
    unit_b, unit_a = (bound.group("unit") or "").lower(), (amount.group("unit") or "").lower()
    if unit_b and unit_a and unit_b.rstrip("s") != unit_a.rstrip("s") and unit_a not in ("more", "of"):
        return None
    return float(amount.group("n").replace(",", "")) > float(bound.group("n").replace(",", ""))


#: a reply that hedges its yes or no ("Probably not.", "Possibly.", "Potentially, yes.", "Not necessarily.", "It
#: depends."): it asserts neither statement outright
_HEDGED_REPLY = re.compile(
    r"(?i)\W*(?P<h>probably|possibly|maybe|perhaps|likely|unlikely|potentially|presumably|conceivably|"
    r"probably\s+not(?:\s+any\s*time\s+soon)?|i\s+wouldn'?t|i\s+would\s+not|not\s+directly|"
    # advice that leans to a yes or a no ("I'd go for it!", "I'd steer clear of that one.", "Worth a try, I think.")
    r"i'?d\s+(?:steer\s+clear(?:\s+of\s+(?:it|that|that\s+one|them|those))?|think\s+twice|avoid\s+(?:it|that|that\s+one|"
    r"them)|skip\s+(?:it|that|that\s+one)|hold\s+off)|"
    r"not\s+necessarily|not\s+entirely|not\s+strictly|not\s+always|not\s+quite|not\s+exactly|not\s+really|"
    r"not\s+conclusively|not\s+fully|not\s+completely|not\s+yet|(?:it(?:'s|\s+is|\u2019s)\s+)?(?:best|better)\s+not(?:\s+to)?|"
    r"(?:it|that)\s+depends|depends|"
    # "You may.", "It might be.", "They could well." (to "Do I get compensation?"): a yes the answer only allows
    r"(?:you|it|they|we|he|she|that|this)\s+(?:may|might|could)(?:\s+well)?(?:\s+(?:be|have|do|get|qualify))?"
    r"(?:\s+not)?)(?:[\s,]+(?P<p>not\s+yet|yes|yeah|no|not|so|yet))?"
    # what a reply adds that claims nothing: regret, a hedge ("Better not, sorry!", "Not directly, sadly.")
    r"(?:\s*,?\s*(?:sorry|sadly|unfortunately|i'?m\s+afraid|i\s+think|i'?d\s+say|i\s+guess|for\s+now))?\s*[.!\u2026]*\s*")
#: advice that says yes ("I'd go for it!", "Worth a try, I think."): to a yes/no question, the yes it recommends
_ADVISES_YES = re.compile(r"(?i)\W*(?:(?:i'?d|i\s+would)\s+(?:(?:definitely|probably|just)\s+)?(?:go\s+for\s+it|give\s+it\s+a\s+"
                          r"(?:go|try|shot))|(?:(?:it'?s|it\s+is|definitely|probably|well)\s+)?worth\s+a\s+(?:try|shot|go)"
                          r"(?:\s*,?\s*i\s+think)?)\s*[.!\u2026]*\s*")


def advises_yes(sentence: str) -> bool:
    """Advice that recommends what a yes/no question asks ("I'd go for it!", "Worth a try, I think."): the yes it says.

    >>> advises_yes("I'd go for it!"), advises_yes("Worth a try, I think."), advises_yes("I'd go for the Pro plan.")
    (True, True, False)
    """
    return _ADVISES_YES.fullmatch(sentence) is not None


#: advice that leans to a no ("I'd steer clear of that one.", "I'd think twice.")
_ADVISES_NO = re.compile(r"i'?d\s+(?:steer|think|avoid|skip|hold)")
#: a source before a reply ("Based on the policy, probably not.")
_REPLY_SOURCE = re.compile(r"(?i)\s*(?:based\s+on|according\s+to|from|going\s+by|under)\s+[^,;:.!?]{1,40},\s*")
#: a reply that is only a restriction of its yes or no ("Only with special approval.", "Not under the standard
#: cover.", "Only if your doctor has told you to."): what it restricts follows in the sentences after it
_RESTRICTED_REPLY = re.compile(
    r"(?i)\W*(?P<h>only|not)\s+(?:if|when|with|without|in|on|under|for|after|before|during|by|through|via|at|from|"
    r"within|as|once|until|where|without)\b[^.!?;:,]*[.!]?\s*")


_CONDITIONED = re.compile(r"(?i)\W*(?:with|under|subject\s+to)\s+(?:some\s+|certain\s+|a\s+few\s+)?(?:limits|limitations|"
                          r"conditions|exceptions|restrictions|caveats)\s*[.!]?\s*")


def restriction_of(sentence: str) -> str | None:
    """The condition a reply puts on its yes ("Only with manager approval." -> "only with manager approval"; "Yes,
    but only if you have the receipt." -> "only if you have the receipt"; "Not without approval." -> "only with
    approval"), or None: the condition is a claim of its own, judged as part of the question's statement."""
    said, rest = polarity(sentence)
    core = re.sub(r"(?i)^\W*but\s+", "", rest) if said and rest else sentence
    m = _RESTRICTED_REPLY.fullmatch(core)
    if m is None or (said is False):
        return None
    phrase = core.strip().rstrip(".!").strip()
    without = re.match(r"(?i)not\s+without\s+", phrase)
    if without is not None:
        return "only with " + phrase[without.end():]
    return phrase[:1].lower() + phrase[1:] if phrase.lower().startswith("only") else None


def hedged_reply(sentence: str) -> tuple[bool | None] | None:
    """``(yes,)`` for a reply that hedges or restricts a yes (``True``) or a no (``False``) without a claim of its
    own, ``(None,)`` for one that takes no side ("It depends."); None for any other sentence.

    >>> hedged_reply("Probably not."), hedged_reply("Possibly."), hedged_reply("Only with special approval.")
    ((False,), (True,), (True,))
    >>> hedged_reply("It depends."), hedged_reply("Probably the best option is to call.")
    ((None,), None)
    """
    source = _REPLY_SOURCE.match(sentence)
    if source is not None:
        sentence = sentence[source.end():]
    m = _HEDGED_REPLY.fullmatch(sentence)
    if m is not None:
        h = " ".join(m.group("h").lower().split())
        if h.endswith("depends"):
            return (None,)
        return (not (h.startswith("not") or h == "unlikely" or " not" in h or "n't" in h or _ADVISES_NO.match(h) or
                     (m.group("p") or "").lower().split()[:1] in (["no"], ["not"], ["yet"])),)
    m = _RESTRICTED_REPLY.fullmatch(sentence)
    if m is not None:
        if re.search(r"\d", sentence):
            return None  # "Only within 30 days of delivery.": a condition of its own, judged as the claim it makes
        # "Only with special approval." and "Not without approval." are a yes under a condition the sentences after
        # it give; "Not under the standard cover." a no
        only = m.group("h").lower() == "only" or re.match(r"(?i)\W*not\s+without\b", sentence) is not None
        return (only,)
    said, rest = polarity(sentence)
    if said is not None and rest:
        # "No, not under the standard cover.", "Yes, but only in limited circumstances.", "Yes, but with limits."
        rest = re.sub(r"(?i)^\W*but\s+", "", rest)
        if _CONDITIONED.fullmatch(rest):
            return (said,)
        inner = hedged_reply(rest)
        if inner is not None and inner[0] is not None:
            return (said,) if inner[0] == said or rest.lower().startswith("only") else None
    return None


def reason_reply(answer: str) -> str | None:
    """The reason clause of a yes/no reply that gives one ("No, because only 5 days can be carried over." -> "Only 5
    days can be carried over."), else None."""
    value, rest = polarity(answer)
    toks = tokenize(_trim(rest))
    if value is None or not toks or toks[0].lower() not in REASONS:
        return None
    clause = re.sub(r"(?i)^(?:because|since|as|given(?:\s+that)?)\s+", "", _trim(rest)).strip()
    if not clause or clause.lower().startswith("of ") or not any(
            t.lower() in AUX or t.lower() in NEG_AUX or looks_verb(t) for t in tokenize(clause)):
        return None  # "Yes, because of the fee." keeps the joined reading
    clause = clause.rstrip(".!;, ")
    return clause[:1].upper() + clause[1:] + "."


def dependent_reply(answer: str) -> bool:
    """A yes/no answer (or echo) followed by a clause that cannot stand alone: "Yes, because items can be returned.",
    "They can, as long as they are unused.": its claim is the question's statement with the clause attached."""
    value, rest = polarity(answer)
    return value is not None and _dependent(tokenize(_trim(rest)))


_ONLY = frozenset({"only", "just", "solely"})
_COMPARES = re.compile(r"(?i)\b(?:first|last|earlier|later|sooner|more|less|fewer|older|younger|bigger|larger|smaller"
                       r"|longer|shorter|higher|lower|taller|better|worse|faster|slower|cheaper|closer|farther|further"
                       r"|most|least|[a-z]{3,}est|than)\b")


def alternatives(question: str) -> tuple[str, str, int, int] | None:
    """The two options of a question that offers a choice ("Can I return gift cards or only items?" -> "gift cards",
    "only items"; "Is the window 30 or 90 days?" -> "30 days", "90 days"), with where "<a> or <b>" stands in it; None
    for other questions. The first option runs back from "or" to a verb, an auxiliary, a preposition or a colon, the
    second to the question mark."""
    q = question.strip().replace("\u2019", "'")
    if not q.endswith("?") or q.lower().count(" or ") != 1 or len(q) > 300 or _COMPARES.search(q):
        return None  # a comparison ("Who was born first: X or Y?") is read as the model reads it, not as an option
    spans = [(m.group(), m.start(), m.end()) for m in TOKEN.finditer(q)]
    k = next((i for i, (t, _, _) in enumerate(spans) if t.lower() == "or"), None)
    if k is None or k == 0 or k + 1 >= len(spans):
        return None
    end = len(spans) - 1 if spans[-1][0] == "?" else len(spans)
    j = k - 1
    while j >= 0:
        low = spans[j][0].lower()
        if low in AUX or low in NEG_AUX or low in PREPOSITIONS or low in PRONOUNS or low in (":", ",", ";") or (
                j < k - 1 and looks_verb(spans[j][0]) and low not in DETERMINERS and not spans[j][0][:1].isupper()):
            break
        j -= 1
    first = j + 1
    if first >= k or end <= k + 1:
        return None
    a = q[spans[first][1]:spans[k - 1][2]]
    b = q[spans[k + 1][1]:spans[end - 1][2]]
    if re.fullmatch(r"\d[\d.,]*", a) and re.match(r"\d", b) and len(b.split()) > 1:
        a = a + " " + " ".join(b.split()[1:])  # "30 or 90 days": the unit is both options'
    elif first < k - 1 and re.fullmatch(r"\d[\d.,]*", spans[k - 1][0]) and re.match(r"\d", b):
        first = k - 1  # "Is the return window 30 or 90 days?": the option is the number
        a = spans[k - 1][0] + (" " + " ".join(b.split()[1:]) if len(b.split()) > 1 else "")
    a, b = (" ".join(w for w in o.split() if w.lower() not in _ONLY) for o in (a, b))
    if not a or not b or len(a.split()) > 8 or len(b.split()) > 8:
        return None
    return a, b, spans[first][1], spans[end - 1][2]


def _option_words(option: str) -> set[str]:
    return {w.lower().rstrip("s") for w in tokenize(option) if w[:1].isalnum() and w.lower() not in DETERMINERS
            and w.lower() not in _ONLY}


def alternative_claim(question: str, answer: str) -> str | None:
    """The statement a reply to a question that offers a choice makes: "Both." -> the question's statement of both
    options ("You can return gift cards and items."), "Neither." -> its negation, "The former." / a bare option ("Only
    items.", "Store credit.") -> the statement of that option; a clause with "both" or "either" standing for the
    options ("You can return both.") -> the clause with them. None for other replies and questions."""
    alt = alternatives(question)
    if alt is None:
        return None
    a, b, start, end = alt
    q = question.strip().replace("\u2019", "'")
    reply = answer.strip().rstrip(".!").strip()
    low = reply.lower()
    pronoun = re.search(r"(?i)\b(both|either|neither)(?:\s+of\s+them|\s+options)?\b(?=\s*(?:[.!,;]|$|\s+(?:within|after|"
                        r"before|for|in|on|at|by|to|from|with|without|if|are|is|can|cannot|can't|will|do|does|may)\b))",
                        reply)
    if " " in low and pronoun is not None and low.split()[0] not in ("both", "either", "neither"):
        # "You can return both." -> "You can return gift cards and items."
        joined = {"both": f"{a} and {b}", "either": f"{a} or {b}", "neither": f"neither {a} nor {b}"}[
            pronoun.group(1).lower()]
        return as_sentence(tokenize(reply[:pronoun.start()] + joined + reply[pronoun.end():]))
    chosen: str | None = None
    if re.fullmatch(r"(?:both(?: of them| options)?|both are|yes,? both)", low):
        chosen = f"{a} and {b}"
    elif re.fullmatch(r"(?:the )?(?:former|first(?: one)?)", low):
        chosen = a
    elif re.fullmatch(r"(?:the )?(?:latter|second(?: one)?|last(?: one)?)", low):
        chosen = b
    elif re.fullmatch(r"(?:neither(?: of them)?|none of them|no,? neither)", low):
        chosen = "neither " + a + " nor " + b
    elif len(tokenize(reply)) <= 8:
        words_ = _option_words(reply)
        wa, wb = _option_words(a), _option_words(b)
        in_a, in_b = words_ & (wa - wb), words_ & (wb - wa)  # the words that tell the options apart
        if words_ and (in_a or in_b) and not (in_a and in_b) and words_ <= (wa | wb):
            # "Only items.": the option chosen ("only" claims the other is not, which a small model reads as a
            # claim against any context that does not say so)
            chosen = a if in_a else b
    if chosen is None:
        return None
    made = q[:start] + chosen + q[end:]
    head = q[:start].rstrip()
    if head.endswith(":") and head.split()[0].lower() in ("which", "what", "who"):
        # "Which can be returned: items or gift cards?" + "Gift cards." -> "Gift cards can be returned."
        rest = head[:-1].split(maxsplit=1)
        if len(rest) == 2 and rest[1].split()[0].lower() in AUX | set(NEG_AUX):
            return as_sentence(tokenize(chosen[:1].upper() + chosen[1:] + " " + rest[1]))
        return None
    return yes_no_statement(made, True)


_FIGURE_AMOUNT = re.compile(r"[$\u20ac\u00a3]?\d[\d,]*(?:\.\d+)?%?")


def _corrected(question: str, rest: str) -> str | None:
    """The statement a "no" with a corrected amount makes: "Do I have 60 days to return items?" + "No, 30 days." ->
    "You do have 30 days to return items."; None unless the question states one amount and the reply one, alone or
    with a unit or a word before it ("$15", "30 days", "only 25")."""
    toks = tokenize(rest)
    amounts = _FIGURE_AMOUNT.findall(rest)
    asked = _FIGURE_AMOUNT.findall(question)
    if len(amounts) != 1 or len(asked) != 1 or len(toks) > 4 or any(
            t.lower() in AUX or t.lower() in NEG_AUX or looks_verb(t) for t in toks):
        return None
    return yes_no_statement(question.replace(asked[0], amounts[0], 1), True)


_TOPIC_REPLY = re.compile(
    r"(?i)\s*(?:as\s+(?:for|to)|regarding|concerning|about|for|with|re:?)?\s*(?P<np>[a-z0-9][^,:;\u2014\u2013?!.]{1,60}?)"
    r"\s*(?:,|:|\u2014|\u2013|\s-)\s*(?:the\s+answer\s+is\s+)?(?P<rest>[^,]{1,40}?)\s*[.!]*\s*")


def topic_reply(sentence: str) -> tuple[str, str] | None:
    """A yes or no after the topic it is about: "As for the Basic plan, yes." -> ("the Basic plan", "yes"); "Gift
    cards \u2014 no." -> ("Gift cards", "no"); None for other sentences."""
    if polarity(sentence)[0] is not None:  # "Happily, yes.", "Good news: no.": a hedge, not a topic
        return None
    m = _TOPIC_REPLY.fullmatch(sentence)
    if m is None or polarity(m.group("rest"))[0] is None or is_claim(polarity(m.group("rest"))[1]):
        return None
    np_ = m.group("np").strip()
    toks = tokenize(np_)
    if not toks or any(t.lower() in AUX or t.lower() in NEG_AUX or t.lower() in PRONOUNS for t in toks) or \
            polarity(np_)[0] is not None or len(toks) > 6 or (len(toks) == 1 and toks[0].lower().endswith("ly")) or \
            {t.lower() for t in toks} <= HEDGES_WORDS:
        return None
    return np_, m.group("rest")


#: single words of the hedges ("honestly", "well", "good", "news"): no topic a reply is about
HEDGES_WORDS = frozenset(w for h in HEDGES for w in h.split())


#: a clause, then a contrast whose second clause is only a subject and an auxiliary ("..., but sale items can't.")
_CONTRAST_ECHO = re.compile(
    r"(?i)(?P<main>[^,;]{6,300}?)(?:\s*(?:,|;|\u2014|-)?\s+(?:but|whereas|while|though|however,?|and)\s+|\s*;\s+)"
    r"(?P<np>(?:the\s+|a\s+|an\s+|all\s+|most\s+)?[a-z0-9][\w'-]*(?:\s+[\w'-]+){0,4}?)\s+"
    r"(?P<aux>can(?:not|'t|\s+not)?|could(?:n't|\s+not)?|do(?:n't|es(?:n't)?|\s+not|es\s+not)?|did(?:n't|\s+not)?"
    r"|is(?:n't|\s+not)?|are(?:n't|\s+not)?|was(?:n't|\s+not)?|were(?:n't|\s+not)?|will(?:\s+not)?|won't"
    r"|would(?:n't|\s+not)?|should(?:n't|\s+not)?|ha(?:s|ve)(?:n't|\s+not)?|may(?:\s+not)?|might(?:\s+not)?"
    r"|must(?:n't|\s+not)?)(?:\s+(?:too|either|also))?\s*[.!]?")


def contrast_claims(sentence: str) -> tuple[str, str] | None:
    """The two claims of a sentence whose second clause echoes the first with another subject: "Gift cards can be
    returned, but sale items can't." -> "Gift cards can be returned.", "Sale items cannot be returned."; None for
    other sentences (or when the first clause has no auxiliary to flip)."""
    m = _CONTRAST_ECHO.fullmatch(sentence.strip().replace("\u2019", "'"))
    if m is None:
        return None
    main = m.group("main").strip().rstrip(",;") + "."
    subject = claim_subject(main)
    np_ = m.group("np").strip()
    if not subject or not main.startswith(subject) or np_.lower() in PRONOUNS or np_.lower() in _PERSONAL:
        return None
    said = np_[:1].upper() + np_[1:] + main[len(subject):]
    aux = m.group("aux").lower()
    toks = [t.lower() for t in tokenize(main)]
    main_negative = any(t in NEG_AUX or t in ("not", "never") for t in toks)
    echo_negative = "n't" in aux or "not" in aux
    if echo_negative != main_negative:
        flipped = negate(said)
        if flipped is None and not main_negative:  # "The Pro plan includes X" -> "The Pro plan does not include X"
            rest = said[len(np_):].split(maxsplit=1)
            verb = rest[0] if rest else ""
            base = verb[:-2] if verb.endswith("es") and verb[:-2].lower() in VERBS else verb[:-1]
            if verb.endswith("s") and base.lower() in VERBS:
                flipped = f"{said[:len(np_)]} does not {base}" + (f" {rest[1]}" if len(rest) > 1 else ".")
        said = flipped or ""
    return (main, said) if said else None


#: a reply that echoes the question with a modal of possibility: "It may be.", "They might.", "Yes, it could."
_HEDGED_ECHO = re.compile(
    rf"(?i)\s*(?:(?:yes|yeah|well|maybe|possibly|perhaps)\s*,?\s*)?(?:{'|'.join(sorted(ECHO_SUBJECTS, key=len, reverse=True))})"
    rf"(?:\s+(?:{_ECHO_ADV}))?\s+(?:may|might|could)(?![\w'])")
_NAMED_ECHO = re.compile(
    r"(?i)\s*(?P<np>[^\W\d_][\w'\u2019 -]{0,60}?)\s+(?:(?:certainly|definitely|indeed|really|still|also|do)\s+)?"
    r"(?P<aux>[a-z]+(?:n['\u2019]t)?)(?P<not>\s+not)?(?:\s+be)?(?:\s*,?\s*(?:indeed|too|as\s+well|yes|no))?\s*[.!]*\s*")


def named_echo(question: str, answer: str) -> bool | None:
    """The answer a reply that names the question's subject and echoes its auxiliary gives ("Gift cards can." /
    "Gift cards cannot be." to "Can gift cards be returned?", "The Basic plan does." to "Does the Basic plan include
    ...?"): True for a yes, False for a no, None for any other reply. Read as written, "Gift cards can." was entailed
    by a context that says gift cards cannot be returned (0.80): it names nothing the model can check; "They can." is
    read with the question already."""
    m = _NAMED_ECHO.fullmatch(answer)
    q_toks = tokenize(question.strip())
    if m is None or not q_toks or not question.rstrip().endswith("?"):
        return None
    aux = m.group("aux").lower().replace("\u2019", "'")
    base = NEG_AUX.get(aux, aux)
    if base not in AUX or base != q_toks[0].lower():
        return None
    named = frozenset(content_stems(m.group("np")))
    if not named or not named <= frozenset(content_stems(question)):
        return None
    return not (aux in NEG_AUX or m.group("not"))


def answer_claim(question: str, answer: str) -> AnswerClaim | None:
    """The statement ``answer`` makes as an answer to ``question``, when the answer alone is no claim; else None.

    >>> answer_claim("Can gift cards be returned?", "No, they cannot.").statement
    'Gift cards cannot be returned.'
    >>> answer_claim("Can gift cards be returned?", "Yes, they can.").statement
    'Gift cards can be returned.'
    >>> answer_claim("Can gift cards be returned?", "Unfortunately not.").statement
    'Gift cards cannot be returned.'
    >>> answer_claim("Can gift cards be returned?", "👍").statement
    'Gift cards can be returned.'
    """
    if not question or not question.strip() or not answer.strip():
        return None
    chosen = alternative_claim(question, answer)
    if chosen is not None:  # "Both." to "Can I return gift cards or items?"
        return AnswerClaim(chosen, "yes/no")
    hedged = _HEDGED_ECHO.match(answer)
    if hedged is not None and tokenize(question.strip())[:1] and \
            tokenize(question.strip())[0].lower() not in ("may", "might", "can", "could"):
        # "It may be." to "Will the late fee be waived?": a hedge, no yes (read as one, it claimed "The late fee
        # will be waived.")
        return None
    echoed = named_echo(question, answer)
    if echoed is not None:  # "Gift cards can." to "Can gift cards be returned?"
        base = yes_no_statement(question, echoed)
        if base:
            return AnswerClaim(base, "yes/no")
    value, rest = polarity(answer)
    if value is not None:
        # the echo ("they can", "it isn't") and hedges ("sadly") are read by polarity: what is left qualifies the
        # answer ("Yes, within 30 days") or is a statement of its own ("No, gift cards cannot be returned.")
        rest_clean = _trim(rest)
        corrected = _corrected(question, rest_clean) if not value and rest_clean else None
        if corrected is not None:  # "No, 30 days." to "Do I have 60 days to return items?"
            return AnswerClaim(corrected, "yes/no")
        base = yes_no_statement(question, value)
        if not rest_clean:
            return AnswerClaim(base, "yes/no") if base else None
        toks = tokenize(rest_clean)
        opens_with_subject = bool(_subject_of(toks)) and toks[0].lower() not in AUX | set(NEG_AUX) | VERBS and \
            not looks_verb(toks[0])
        if not _dependent(toks) and (len(toks) >= 4 or opens_with_subject and len(toks) >= 3) and any(
                t.lower() in AUX | set(NEG_AUX) | VERBS or looks_verb(t) for t in toks):
            # read as written: a statement of its own ("No, gift cards cannot be returned.", "No, alcohol isn't
            # reimbursable.")
            return None
        if base is None:
            return None
        return AnswerClaim(base[:-1] + ", " + rest_clean + ".", "yes/no")
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


#: where a sentence joins two clauses that stand alone: a semicolon, a dash, or a comma and a conjunction
_HARD_BREAK = re.compile(r"\s*;\s+|\s+[\u2014\u2013]\s+|\s+--?\s+|,\s+(?:and|but|while|whereas|yet)\s+(?=[^\W\d_])")


def split_clauses(sentence: str) -> list[str]:
    """A sentence that joins two clauses with a semicolon, a dash or ", and" (", but", ", while"), each with its own
    subject (no pronoun) and verb ("Items can be
    returned within 30 days; gift cards cannot be returned."), as its clauses, each a sentence of its own; else
    [sentence]. Read whole, the copied first clause carried the second: a hallucinated "gift cards can be returned"
    passed and the faithful "gift cards cannot" was capped by the gift-card sentence's conflict with the whole (round
    25 B5). A frame before a dash ("TL;DR — ...") is no clause."""
    text = sentence.strip()
    pieces = [p.strip() for p in _HARD_BREAK.split(text) if p.strip()]
    if len(pieces) < 2 or len(pieces) > 4:
        return [text]
    out = []
    for piece in pieces:
        toks = tokenize(piece)
        if len(toks) < 4 or _plain_subject(piece) is None or not _has_verb(toks):
            return [text]
        out.append(as_sentence(toks))
    return out


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
