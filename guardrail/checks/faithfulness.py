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

:meth:`FaithfulnessCheck.run` reads the response as hypotheses (here), picks and reads their premises
(:mod:`guardrail.checks.pairing`) and builds each sentence's evidence (:mod:`guardrail.checks.evidence`, where the
result types live).
"""

from __future__ import annotations

import dataclasses
import functools
import re

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from guardrail.checks.calibration import Calibrator
from guardrail.checks.claims import (
    advises_yes,
    restriction_of,
    without_source,
    hedged_reply,
    vp_ellipsis,
    aside_claims,
    reason_claims,
    alternative_claim,
    answer_claim,
    asks_yes_no,
    AnswerClaim,
    claim_object,
    conjunct_statements,
    contrast_claims,
    topic_reply,
    claim_subject,
    dependent_reply,
    echoed_subject,
    exceeds_bound,
    framed_claim,
    is_elliptical,
    label_claim,
    label_reply,
    makes_claim,
    negate,
    plain_negation,
    polarity,
    predicate_claim,
    subjectless_predicate,
    pronoun_ellipsis,
    question_referents,
    reason_reply,
    resolve_ellipsis,
    points_at_nothing,
    resolve_pronouns,
    same_for,
    split_claims,
    split_clauses,
    states_quantity,
    yes_no_answer,
    yes_no_only,
    yes_no_statement,
)
from guardrail.checks.evidence import ContextRef as ContextRef
from guardrail.checks.lexicon import AUX, BE, DETERMINERS, NEG_AUX, PREPOSITIONS, PRONOUNS, VERBS, WH, looks_verb, tokenize
from guardrail.checks.evidence import (
    LEAN_CONTRADICTION,
    EvidenceBasis,
    ResponseItem,
    claim_words,
    not_all,
    sentence_evidence,
    sentence_numbers,
    subject_core,
    verbatim_key,
)
from guardrail.checks.evidence import FaithfulnessResult as FaithfulnessResult
from guardrail.checks.evidence import SentenceEvidence as SentenceEvidence
from guardrail.checks.grounding import (
    KnownNumbers,
    Spellings,
    as_context_numbers,
    as_context_units,
    context_terms,
    number_spellings,
)
from guardrail.checks.abandon import give_up_if_abandoned
from guardrail.checks.pairing import PairScores, Units, borrowed_polarity, fit_units, score_pairs, select_premises
from guardrail.checks.premises import PREMISE_MODES, ContextIndex, Premise, PremiseMode
from guardrail.errors import ConfigurationError, InputError, UncheckableError
from guardrail.scorers.cache import LRUCache
from guardrail.scorers.nli import NLIScorer
from guardrail.text import (
    Span,
    is_courtesy,
    content_stems,
    is_answer_fragment,
    is_claim,
    is_lead_in,
    is_refusal,
    lone_surrogate,
    qa_hypothesis,
    remarks_to_reader,
    split_sentences,
    stem,
    token_windows,
    unsupported_language,
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
    #: interleaved with the windows, each after the window of the same rank: a sentence settled by its best window
    #: at ``stop_at`` reads no single one, 782 -> 728 NLI tokens on the reference request, +23% over windows only).
    #: A window keeps what a pronoun refers to, a single sentence is read
    #: more sharply (a claim entailed by one sentence is not "contradicted" by a negation in its neighbour): see
    #: ``benchmarks/premise_units.py`` and ``benchmarks/dev_sets.py --sentences``. None: the number the model's
    #: calibration was fitted with (``sentences`` in its ``guardrail.json``; 0, windows only, when it names none)
    sentences: int | None = None
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
    #: (the max over the rest could only confirm it); None reads all ``top_k`` (or every unit in ``exhaustive``).
    #: 0.85 (was 0.9): v3.4 entails faithful sentences at 0.86-0.89 where v3 reached 0.9, so at 0.9 it read every
    #: premise (1,203 NLI tokens on the reference request instead of 291); dev-set AUROCs equal at both (dev_sets.py
    #: --stop-at)
    stop_at: float | None = 0.85
    #: a claim whose best support does not name its subject ("Gift cards can be returned within 30 days." supported
    #: by "Items can be returned within 30 days.") is capped when a premise that names the subject contradicts it at
    #: least this much ("Gift cards cannot be returned."): SentenceEvidence.subject_conflict. None: off. Measured on
    #: the dev sets (v3, benchmarks/dev_sets.py --subject-conflict): at 0.95 no AUROC or decision changes; it fires
    #: on 7 HaluEval answers, all hallucinated; at 0.9 also on 2 faithful CLIFF summaries (CLIFF 0.780 -> 0.771)
    subject_conflict: float | None = 0.95
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
        if self.top_k < 1 or self.window < 0 or (self.sentences is not None and self.sentences < 0) or self.joined < 0:
            raise ConfigurationError(f"need top_k >= 1, window >= 0 and sentences >= 0, got {self.top_k}, {self.window}, "
                                     f"{self.sentences}")
        if self.subject_conflict is not None and not 0.0 < self.subject_conflict <= 1.0:
            raise ConfigurationError(f"subject_conflict must be within (0, 1] or None, got {self.subject_conflict}")
        if self.threshold is not None and not 0.0 <= self.threshold <= 1.0:
            raise ConfigurationError(f"threshold must be within 0..1, got {self.threshold}")


@dataclass(frozen=True, slots=True)
class _Prepared:
    """What a check reads of its contexts, built once per contexts and budget (a stream checks every sentence against
    the same ones)."""

    index: ContextIndex
    units: Units
    vocab: frozenset[str]
    #: whole context sentences as compared for word-for-word copies (see SentenceEvidence.verbatim)
    copies: frozenset[str]
    #: single context sentences, when the config reads them besides the windows (``sentences`` or ``joined``)
    singles: Units | None


def _stated(sentence: str) -> str:
    """A sentence without the yes/no word before it ("Yes, items can be returned." -> "Items can be returned.")."""
    value, rest = polarity(sentence)
    rest = rest.strip()
    return rest[:1].upper() + rest[1:] if value is not None and rest else sentence.strip()


#: sentences of a stream's earlier answer read for what its pronouns may point at
_RECENT = 6


def _title_words(text: str) -> str | None:
    """A title's words as a noun phrase ("### Basic plan" -> "Basic plan"), or None when it is no short phrase."""
    core = re.sub(r"^[\s#>*_\-\d.)]+|[\s*_:#.]+$", "", text)
    return core if 0 < len(core.split()) <= 6 and "?" not in core else None


def _interrogative(sentence: str) -> bool:
    """A question that asks ("Does the Pro plan include ...?"), not a statement with a tag ("..., right?")."""
    toks = tokenize(sentence)
    first = toks[0].lower() if toks else ""
    return sentence.rstrip().endswith("?") and (first in AUX or first in NEG_AUX or first in WH)


#: words a question to the reader asks with, which presuppose nothing of the contexts' subject ("Have you ever tried
#: ice fishing?", "Are you into painting yourself?", "Are you planning to visit?")
_CHAT_WORDS = frozenset(content_stems(
    "like love enjoy enjoyed been tried try trying planning plan going visit visiting heard seen ever usually mostly "
    "often keen fan fans big into yourself yourselves interested tempted want need fancy thinking considering looking "
    "old young already still also too mind"))


def _remark(text: str, question: str, known: Callable[[], frozenset[str]]) -> bool:
    """A remark to the reader (:func:`~guardrail.text.remarks_to_reader`) that claims nothing here: not advice that
    answers a yes/no question ("I'd go for it!" to "Can I swim there?" leans to its yes: a hedged reply), and, for a
    question, no word but the contexts', the question's, the reader's own ("your kids") and chat's ("Were you surprised
    she won three prizes?", "Would you believe she was born in Paris?" say what they presuppose: judged)."""
    news = _ASKERS_NEWS.fullmatch(text.strip().replace("\u2019", "'"))
    if news is not None:
        # "Congratulations on the new puppy!", "Sorry to hear about the knee.": the asker's own news, in the
        # question's words (a topic the question does not name may presume a claim: "Congrats on your refund!")
        topic = news.group("topic")
        if topic.split()[0].lower() == "that" or any(
                looks_verb(w) and not w.lower().endswith(("ing", "ed")) for w in topic.split()[1:]):
            return False  # a clause, not a name of the news: "Sorry to hear that gift cards expire!" says they do
        return bool(question) and set(content_stems(topic)) - _NEWS_WORDS <= set(content_stems(question))
    if not remarks_to_reader(text):
        return False
    if (hedged_reply(text) is not None or advises_yes(text)) and question and asks_yes_no(question):
        return False
    if not text.rstrip().endswith("?"):
        return True
    return set(content_stems(text)) - _READERS_OWN - _CHAT_WORDS <= known()


#: congratulations, sympathy or a wish about the asker's news, and its topic: "Congrats on getting the surgery booked!"
_ASKERS_NEWS = re.compile(r"(?i)\W*(?:(?:oh|ah|aw+|wow|ooh|huge|many|big|and)\W+)*(?:congratulations|congrats|"
                          r"(?:(?:i'm|i\s+am|so|really|very)\s+)*sorry\s+(?:to\s+hear|about)|enjoy|good\s+luck|"
                          r"best\s+of\s+luck)\s+(?:on|about|with|for)?\s*(?P<topic>(?:(?:the|your|that|this|a|an)\s+)?"
                          r"[^\W\d][\w'-]*(?:\s+[^\W\d][\w'-]*){0,5})[\s!.…]*")
#: words a congratulation's or a wish's topic may add to the question's: "the new job", "getting it booked"
_NEWS_WORDS = frozenset(content_stems("new little big first latest upcoming exciting whole day out get getting got "
                                      "booked booking sorted finally news"))
#: what the reader has that no context names ("How old are your kids?", "Is your own charger playing up?")
_READERS_OWN = frozenset(content_stems(
    "own kids children child family partner wife husband son sons daughter daughters dad mum mom father mother parents "
    "grandparents friends friend dog dogs cat cats pet pets plans plan trip budget schedule"))


def _named_in(claim: str) -> list[str]:
    """The subject and the object of a claim, what a pronoun after it may point at (not a pronoun's contraction: "It's
    unlikely to" of "It's unlikely to make you drowsy." names nothing; not what a sentence likens its subject to:
    "That sounds like a job for the Solvi Pro." names no job an "it" after it is)."""
    subject = claim_subject(claim)
    # (not what a copula says the subject is: "The course is probably the better fit" names no "better fit")
    obj = None if _LIKENS.search(claim) or _COPULA_OBJECT.search(claim) else claim_object(claim)
    return [r for r in (subject, obj) if r and re.split(r"['\u2019]", r.split()[0].lower())[0] not in PRONOUNS]


_COPULA_OBJECT = re.compile(r"(?i)^[^,;:]{1,80}?\b(?:is|are|was|were|'s|'re)\s+(?:\w+ly\s+)?(?:a|an|the|your|our|my|their|"
                            r"its|one|not)\b")
#: a sentence that likens or evaluates rather than states: "That sounds like a job for ...", "It looks like a good fit"
_LIKENS = re.compile(r"(?i)\b(?:sounds?|looks?|seems?|feels?)\s+(?:like|perfect|great|ideal|good)\b")


def _referents(text: str, named: str | None, title: str | None, said: list[str], topic: str | None,
               asked: list[str]) -> list[str]:
    """What a pronoun of ``text`` may point at, nearest first: what a short question or a title just before it named,
    the subject (then the object) of the claim before it, the topic a short question or a title named earlier, what
    the user's question names. A sentence that opens with a yes/no word answers the user's question: its pronoun
    points at what the question names first ("Items can be returned. Yes, they can be returned too." under "Can gift
    cards be returned?")."""
    near = [r for r in (named, title) if r]
    later = [topic] if topic and topic not in near else []
    if asked and polarity(text)[0] is not None:
        return near + asked + said + later
    return near + said + later + asked


#: an instruction to see to a condition ("Make sure the item is unused."): the condition is the claim
_MAKE_SURE = re.compile(r"(?i)\s*(?:please\s+)?(?:make\s+sure|be\s+sure|ensure)\s+(?:that\s+)?"
                        r"(?=(?:the|your|all|any|each|every|it|they)\s)")


#: a reply that opens with a plain yes or no word (not an emoji or a pleasantry: "👍 Items can be returned ...")
_PLAIN_YES_NO = re.compile(r"(?i)\W*(?:yes|no|nope|nah|yeah|yep|yup)\b")
def _cut_off(statement: str) -> bool:
    """A statement that stops before its end: on a word that needs one after it ("Gift cards can", "... can be",
    "... of the"), or of three words or fewer ("you can return")."""
    ws = words(statement)
    return len(ws) <= 3 or bool(ws) and ws[-1].lower() in _NEEDS_MORE


#: words a sentence does not end on: auxiliaries, determiners, prepositions, conjunctions
_NEEDS_MORE = frozenset("""can could may might must shall should will would do does did is are was were be been being
    have has had the a an this that these those my your our their its his her of to for with from in on at by as and or
    but nor so than if when whether because not""".split())
#: a sentence's end: its end mark (then closing quotes, brackets, emphasis or an emoji), or a closing bracket
_ENDED = re.compile(r"(?:[.!?\u2026\u3002][\"'\u201d\u2019)\]*_`]*|[)\]])\W*$")


#: a claim and an exception to it in one sentence, the exception a circumstance ("..., except within 30 days.")
_EXCEPTION_IN = re.compile(r"(?is)(?P<main>[^,;]+?),\s+(?:except(?:\s+for)?|but\s+not|other\s+than|apart\s+from|"
                           r"excluding)\s+(?P<tail>[^,;]{1,80})")
_EXCEPT_ADJUNCT = frozenset("within after before during on in at for by from until if when".split())


def _excepts_subject(main: str, excepted: str) -> bool:
    """The exception names some of what the claim's subject names: a plural or quantified subject ("Items", "All
    products") and an exception of the same number."""
    subject = claim_subject(main)
    if subject is None:  # "Everything can be returned ..., except gift cards."
        first = tokenize(main)[0].lower() if tokenize(main) else ""
        return first in ("everything", "anything", "everyone", "anyone", "everybody")
    words = [w.lower() for w in tokenize(subject)]
    if words[0] in ("all", "every", "each", "any", "most", "everything", "anything", "every", "everyone"):
        return True  # "Every item ..., except gift cards."
    generic = tokenize(excepted)[0].lower() in ("a", "an", "any", "every")  # "..., except a gift card."
    return _plural(subject) and (_plural(excepted) or generic)


def _plural(phrase: str) -> bool:
    head = [w.lower() for w in tokenize(phrase) if w[:1].isalpha()]
    return bool(head) and len(head[-1]) > 3 and head[-1].endswith("s") and not head[-1].endswith(("ss", "us", "is"))


def _negative(statement: str) -> bool:
    """The statement's first auxiliary is negated ("cannot", "is not", "don't")."""
    toks = [t.lower() for t in tokenize(statement)]
    return any(t in NEG_AUX or t in ("not", "never") for t in toks)


_LABEL = re.compile(r"^\s*(?:(?:\d{1,2}[.)]|[-*+\u2022])\s+)?(?P<np>[^\d.!?:;,]+?)\s*(?::|\s[-\u2013\u2014])?\s*$")


def _label_words(text: str) -> str | None:
    """A short label line's words ("Gift cards:", "1. Gift cards", "Gift cards -"), what a pronoun after it may point
    at; None for a sentence (a verb, more than five words, a question)."""
    m = _LABEL.match(text)
    if m is None or text.rstrip().endswith("?"):
        return None
    np_ = m.group("np").strip()
    toks = tokenize(np_)
    if not 0 < len(toks) <= 5 or claim_subject(np_ + " is.") != np_ or any(t.lower() in AUX for t in toks) or \
            polarity(np_)[0] is not None:
        return None
    return np_


#: a sentence that restates the user's question ("You asked whether ...", "You're asking about ...", "You want to
#: know if ..."); with more after it in the same sentence (a dash, a semicolon, "and"/"but" and a clause) it is judged
_RESTATED = re.compile(r"(?i)^\s*(?:you(?:'re|\s+are|\s+were)?\s+(?:asked|asking|wondering|want(?:ed)?\s+to\s+know|"
                       r"would\s+like\s+to\s+know)|your\s+question\s+(?:is|was))\s+(?:whether|if|about|how|what|when"
                       r"|where|why|which|who|\"|\u201c|:)")
_RESTATED_MORE = re.compile(r"\s[\u2014\u2013-]\s|;|,\s+(?:and|but|so)\s|\.\s+\S|[?\"\u201d]\s+\S")
#: a label before an answer's text ("A:", "Answer:"; "Response 1:" from LlamaIndex's accumulate modes, round 51): no
#: part of the claim (its number is no figure the contexts must hold)
_QA_LABEL = re.compile(r"^\s*[*_]{0,2}(?:Q|A|Question|Answer|Response(?:\s+\d{1,3})?)[*_]{0,2}\s*:[*_]{0,2}\s+")
#: words after a name that make no other name of it ("Litware Inc.", "Contoso Ltd.")
_NAME_SUFFIXES = frozenset(stem(w) for w in "inc ltd llc corp corporation co plc gmbh ag sa company group".split())
_POINTER = re.compile(r"(?i)\b(?:it|its|they|them|their|this|that|these|those|he|she|him|her|one|ones)\b")
#: a clause after a yes/no word that starts like a reason and is none: "Yes, as long as it is unused.", "as of May"
_NO_REASON = re.compile(r"(?i)^[\s,;:\u2014-]*(?:as\s+(?:long|soon|far|well|much|many|of|if|though|a\s+rule)\b|since\s+"
                        r"(?:\d|then|last|early|late|january|february|march|april|may|june|july|august|september|"
                        r"october|november|december)\b)")
_CONDITION_LEAD = re.compile(r"(?i)^(?:if|when|once|after|before|unless|assuming|provided|suppose|say)\b[^,]+,")
#: a list item: its marker, then its text
_ITEM = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,3}[.)])\s+(?P<body>\S.*?)\s*$", re.S)
_MARKUP = re.compile(r"^\s*(?:(?:[-*+\u2022]|\d{1,3}[.)])\s+)?[*_]*|[*_]*\s*$")


_WHAT_LEAD = re.compile(r"(?i)^(?:here(?:'s| is| are)|these are|this is|below (?:is|are)|that's|that is)\s+(?:what|everything)"
                        r"\s+(?:that\s+)?(?P<clause>.+:)$")


#: a line whose subject only points at the list after it: "The following cannot be returned:", "These items are
#: not refundable:", "Items below are covered:"
_PLACEHOLDER_HEAD = re.compile(
    r"(?i)^(?:the\s+following|these|those|the\s+ones\s+below|(?:the\s+)?(?:items|products|things|ones)\s+"
    r"(?:below|listed\s+below)|the\s+(?:items|products|things)\s+below)(?:\s+(?:items|products|things|ones))?\s+"
    r"(?P<pred>(?:can|cannot|can't|may|must|will|won't|are|aren't|is|isn't|were|weren't|do|don't|does|doesn't|"
    r"should|shouldn't)\b.+)$")


def _list_head(text: str) -> tuple[str, str] | None:
    """A line that the list items after it complete: a label ("Gift cards:", "- Basic plan:") -> ("label", its words),
    a clause whose subject only points at the items ("The following cannot be returned:") -> ("subject", what it says
    of them), or a clause that ends where its complement would stand ("The Basic plan includes:", "You can return:",
    "Refunds go to:") -> ("clause", the clause); None for other lines (a generic lead-in, "Here is the policy:", heads nothing
    the items need)."""
    t = _MARKUP.sub("", text.strip()).strip()
    if not t.endswith(":") or t.count(":") > 1 or t[:-1].rstrip().endswith("?"):
        return None
    placeholder = _PLACEHOLDER_HEAD.match(t[:-1].strip())
    if placeholder is not None:  # "The following cannot be returned:": each item is the subject
        return "subject", placeholder.group("pred").strip()
    what = _WHAT_LEAD.match(t)
    if what is not None:  # "Here is what the Pro plan includes:" -> "The Pro plan includes"
        t = what.group("clause")[:1].upper() + what.group("clause")[1:]
    toks = tokenize(t[:-1])
    if not toks or len(toks) > 14:
        return None
    last = toks[-1].lower()
    # the clause stops at its verb or a preposition: "includes:", "You can return:", "are:", "go to:"
    verb_end = last in AUX or last in NEG_AUX or last in BE or last in PREPOSITIONS or (
        looks_verb(toks[-1]) and (last not in VERBS or len(toks) == 1 or toks[-2].lower() in AUX | BE | set(NEG_AUX)
                                  or toks[-2].lower() in PRONOUNS or toks[-2].lower() == "to"))
    if not verb_end:
        label = _label_words(t)
        if label is not None:
            return "label", label
    if is_lead_in(t) or len(toks) < 2 or not verb_end:
        return None
    return "clause", t[:-1].strip()


def heads_list(text: str) -> bool:
    """A line the list items after it complete, and whose claim is judged in them ("You'll need to bring:", "The
    following cannot be returned:"); a label line ("Gift cards:") claims nothing alone."""
    opens = _list_head(text)
    return opens is not None and opens[0] != "label"


def _complement(body: str) -> bool:
    """A list item that is no clause of its own: a noun phrase ("5 GB of storage", "Priority support") or a predicate
    ("returnable within 30 days"), which says something only with the line it completes."""
    toks = tokenize(body)
    return bool(toks) and len(toks) <= 16 and not body.rstrip().endswith("?") and not any(
        x.lower() in AUX or x.lower() in NEG_AUX or x.lower() in BE or x.lower() in PRONOUNS or
        (x.lower().endswith(("s", "ed")) and x.lower() not in VERBS and looks_verb(x) and k > 0)
        for k, x in enumerate(toks))


def _under_head(head: tuple[str, str], body: str) -> str | None:
    """What a list item says under its head: "Gift cards:" + "returnable within 30 days" -> "Gift cards are returnable
    within 30 days."; "Basic plan:" + "priority support" -> "Basic plan: priority support."; "The Basic plan
    includes:" + "Priority support" -> "The Basic plan includes priority support."; None for an item that is a
    clause of its own (read as usual)."""
    body = body.strip().strip("*_").strip().rstrip(".;,")
    if not body or not _complement(body):
        return None
    kind, words_ = head
    if kind == "subject":  # "The following cannot be returned:" + "Gift cards" -> "Gift cards cannot be returned."
        return f"{body[:1].upper()}{body[1:]} {words_}."
    if kind == "label":
        made = predicate_claim(words_, body)
        return (made.rstrip(".") + ".") if made else f"{words_}: {body}."
    lead = body.split(maxsplit=1)[0]
    if lead[:1].isupper() and lead[1:].islower() and lead.lower() in (DETERMINERS | STOP_LEADS):
        body = body[:1].lower() + body[1:]
    return f"{words_} {body}."


#: first words of an item that are lower-cased when it completes a clause ("The plan includes:" + "A free month")
STOP_LEADS = frozenset({"priority", "free", "unlimited"})


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
        self._prepared: LRUCache[_Prepared] = LRUCache(64)
        self._numbers: LRUCache[Spellings] = LRUCache(64)
        self._known_numbers: LRUCache[KnownNumbers] = LRUCache(64)
        self._stems: LRUCache[frozenset[str]] = LRUCache(64)
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

    def _items(self, question: str, response: str, hyp_budget: int, preceding: str = "",
               titles: Callable[[int, int], bool] | None = None,
               preceding_title: str | None = None, state: dict[str, Any] | None = None,
               known: Callable[[], frozenset[str]] = frozenset) -> list[ResponseItem]:
        """The response's pieces as checked. ``known``: the content words of the contexts and the question, worked out
        when a question to the reader needs them (one of other words may presuppose a claim: "Are you enjoying the
        lifetime warranty?")."""
        cfg = self.config
        tok = self.nli.tokenizer
        spans = split_sentences(response)
        before = split_sentences(preceding)
        previous = before[-1].of(preceding).strip() if before else ""  # the sentence before this response's first
        if self.config.answer_claims:
            previous = _QA_LABEL.sub("", previous, count=1)
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
        items: list[ResponseItem] = []
        # an answer that makes no claim at all ("Great question! Absolutely!") answers a yes/no question with its
        # yes/no words; beside a claim, "Sure!" is a pleasantry and the claim is what is judged
        # a question to the reader or a reaction ("Have you been?", "Oh nice!") claims nothing beside a claim (here or
        # in the answer before this part); alone it is judged, as the reply it is
        remark = [cfg.answer_claims and _remark(span.of(response), q, known) for span in pieces]
        claimless = not any(makes_claim(span.of(response)) and not r for span, r in zip(pieces, remark))
        beside_claim = any(remark) and (not claimless or any(
            makes_claim(sp.of(preceding)) and not remarks_to_reader(sp.of(preceding)) for sp in before[-_RECENT:]))
        # what a pronoun may point at ("They can be returned." under "Can gift cards be returned?"): a title or a
        # short question just before it, the subject of the claim before it, else what the user's question names
        asked = question_referents(q) if q and cfg.answer_claims else []
        title = _title_words(preceding_title) if preceding_title else None
        # a stream checks a sentence apart from the answer before it: that answer is read (by the rules, no model) as
        # the whole answer would be, for what was last named in it (a claim's subject, a topic a short question or a
        # title named), so that its pronouns point where the whole answer's do
        earlier: dict[str, Any] = {"mentioned": [], "topic": None}
        if preceding.strip():  # its last few sentences: what a pronoun points at was named close by
            recent = preceding[before[-_RECENT].start:] if len(before) > _RECENT else preceding
            self._items(question, recent, hyp_budget, state=earlier, known=known)
        mentioned: list[str] = earlier["mentioned"]
        topic: str | None = title or earlier["topic"]
        topic_age = 0 if title else earlier.get("topic_age", 0)  # sentences since the topic was named
        # the line a list's items complete ("The Basic plan includes:"), and the items read since
        head: tuple[str, str] | None = earlier.get("head")
        head_age: int = earlier.get("head_age", 0)
        head_at = len(items)  # the head's own items (a head in the answer before this part was judged there)
        for at, span in enumerate(pieces):
            text = span.of(response)
            if cfg.answer_claims:  # "Q: Can gift cards be returned?" / "A: No.": a question and its reply
                text = _QA_LABEL.sub("", text, count=1)
            prior, previous = previous, text
            if remark[at] and beside_claim:
                # "The museum opened in 1983. Are you into painting yourself?": the facts are what is judged (and what
                # a pronoun after the remark points at is what the claim before it named: "Same. They must be ...")
                if items and items[-1].check and not items[-1].fragment and not _interrogative(items[-1].hypothesis):
                    mentioned = _named_in(items[-1].hypothesis) or mentioned
                items.append(ResponseItem(span, text, text, False, False))
                if not text.rstrip().endswith("?"):  # a reaction is no sentence a reply leans on; a question may be
                    previous = prior
                continue
            if cfg.answer_claims and is_courtesy(text):
                # "Thanks for asking!", "I understand your frustration.", "Have a great trip!": courtesy claims
                # nothing, and nothing after it leans on it ("Good news! Covered up to $2,500." reads "Covered ..."
                # as the sentence before the courtesy, or the question, would have it)
                items.append(ResponseItem(span, text, text, False, False))
                previous = prior
                continue
            if cfg.answer_claims and prior and items and items[-1].text == prior and items[-1].check and \
                    polarity(text)[0] is not None and asks_yes_no(prior):
                # "### Can gift cards be returned?" then "No, gift cards cannot be returned.": the question the answer
                # asks itself asserts nothing when its reply follows; the reply is what is judged (alone, a question
                # is read as written: "Have you seen this movie?" says nothing the contexts hold)
                last = items[-1]
                items[-1] = ResponseItem(last.span, last.text, last.text, False, False)
            if cfg.answer_claims and prior and polarity(text)[0] is not None and is_claim(polarity(text)[1]) and \
                    not dependent_reply(text) and not is_elliptical(polarity(text)[1]) and asks_yes_no(prior):
                # "Can gift cards be returned? Yes, items can be returned within 30 days.": the yes answers the
                # question (judged as its statement), and the claim after it is judged as well
                said = yes_no_statement(_QA_LABEL.sub("", prior, count=1).strip(), bool(polarity(text)[0]))
                if said is not None and tok.count(said) <= hyp_budget:
                    items.append(ResponseItem(span, text, said, True, True, claim=True))
            title_before, title = title, None
            if items and items[-1].check and not items[-1].fragment and not _interrogative(items[-1].hypothesis):
                mentioned = _named_in(items[-1].hypothesis) or mentioned
            topic_age += 1
            if topic_age > _RECENT:  # a topic is read as far back as a stream reads (the same answer, the same reading)
                topic = None
            label = _label_words(prior) if prior and not title_before else None
            if label:  # "Gift cards:" / "1. Gift cards" before it
                title_before, topic, topic_age = label, label, 0
            if cfg.answer_claims and _RESTATED.match(text) and not _RESTATED_MORE.search(text):
                # "You asked whether gift cards can be returned." restates the question: it claims nothing
                items.append(ResponseItem(span, text, text, False, False))
                continue
            if is_refusal(text):  # "I could not find that in the documents.": an honest refusal claims nothing
                items.append(ResponseItem(span, text, text, False, False))
                continue
            if titles is not None and titles(span.start, span.end):  # "### Return policy", a source's link
                items.append(ResponseItem(span, text, text, False, False))
                previous = prior
                title = topic = _title_words(text)
                topic_age = 0
                continue
            opens = _list_head(text) if cfg.answer_claims else None
            if opens is not None:  # "The Basic plan includes:" is judged with each item, and as written when none follows
                head, head_age, head_at = opens, 0, len(items)
            elif head is not None:
                head_age += 1
                item = _ITEM.match(text)
                # an ordered list's numbers are not read (render.list_numbers): its items are the lines after the
                # head that are no clause of their own
                body = item.group("body") if item is not None else text if (
                    response[:span.start].rstrip(" \t").endswith("\n") and _complement(text.strip())) else None
                if body is None or head_age > _RECENT:  # the list ended (a stream reads as far back)
                    head = None
                else:
                    made_item = _under_head(head, body)
                    if made_item is not None and tok.count(made_item) <= hyp_budget:
                        if head_age == 1 and head[0] != "label":
                            # the head's claim is judged whole in each item it completes ("You'll need to bring:" +
                            # "- Immunization records"): alone it is a clause cut before its object, which no context
                            # states as written
                            items[head_at:] = [dataclasses.replace(it, check=False) for it in items[head_at:]]
                        items.append(ResponseItem(span, text, made_item, True, False, claim=True))
                        continue
            # "- Gift cards: yes" to "What can I return?": the yes is said of the label, as the question asks it
            labelled = ((label_reply(q, text) if q else None) or label_claim(text)) if cfg.answer_claims else None
            if labelled is None and cfg.answer_claims and prior and not prior.rstrip().endswith(":") and \
                    is_claim(prior) and polarity(prior)[0] is None:
                # "Gift cards. Returnable within 30 days.": a predicate with no subject is said of the noun
                # phrase before it (a label line, "Gift cards:", is read as a topic below)
                labelled = predicate_claim(echoed_subject(prior) or prior, text)
            elif labelled is None and cfg.answer_claims and asked and not (prior or "").rstrip().endswith(":") and \
                    subjectless_predicate(text):
                # "Yes! Covered up to $2,500." (or after a courtesy, or first) to "Is flood damage covered?": the
                # predicate is said of what the question asks about, not of "Yes"
                labelled = predicate_claim(asked[0], text)
            if labelled is not None and tok.count(labelled) <= hyp_budget:
                # "Gift cards: returnable within 30 days." claims "Gift cards are returnable within 30 days."
                items.append(ResponseItem(span, text, labelled, True, False, claim=True))
                continue
            pronoun = pronoun_ellipsis(text)
            reply_rest = ""
            named = echoed_subject(prior) if prior else None
            if named:
                topic, topic_age = named, 0
            if pronoun is None and prior and prior.rstrip().endswith("?") and cfg.answer_claims:
                # a reply to a question the answer asks itself: "Gift cards? Yes." claims what "Gift cards too."
                # claims; "Are gift cards excluded? No." claims "Gift cards are not excluded."
                value, rest = polarity(text)
                if value is not None and (not is_claim(rest) or is_elliptical(rest)):
                    own = yes_no_statement(prior, value) if named is None else None
                    framed = framed_claim(own) if own else None
                    if framed is not None:  # "Is it true that X? No." claims the opposite of X
                        own = framed[0] if framed[1] else negate(framed[0])
                    if own is not None and not is_claim(rest) and tok.count(own) <= hyp_budget:
                        if items and items[-1].text == prior:  # the question claims nothing: its answer is judged
                            last = items[-1]
                            items[-1] = ResponseItem(last.span, last.text, last.text, False, False)
                        items.append(ResponseItem(span, text, own, True, True, claim=True))
                        continue
                    if named is not None:
                        pronoun, reply_rest = value, rest.strip()
                if value is not None and named is None and (dependent_reply(text) or not makes_claim(rest)):
                    # "Can gift cards be returned? Yes, within 30 days.": the reply is the question's statement with
                    # what qualifies it ("Gift cards can be returned, within 30 days.")
                    made_reply = answer_claim(prior, text)
                    if made_reply is not None and tok.count(made_reply.statement) <= hyp_budget:
                        if items and items[-1].text == prior:
                            last = items[-1]
                            items[-1] = ResponseItem(last.span, last.text, last.text, False, False)
                        items.append(ResponseItem(span, text, made_reply.statement, True, True, claim=True))
                        continue
            if pronoun is not None:
                # "Those too." claims what was said before of what the pronoun points at: the subject a short
                # question just named ("Items can be returned within 30 days. Gift cards? Those too." -> "Gift cards
                # can be returned within 30 days."), else the subject of the user's yes/no question
                named = echoed_subject(prior) if prior else None
                said = next((it.hypothesis for it in reversed(items) if it.check and (it.claim or it.hypothesis == it.text)
                             and not it.text.rstrip().endswith("?")), None)
                if said is None:  # a stream checks sentence by sentence: what was said is in the answer before it
                    said = next((_stated(sp.of(preceding)) for sp in reversed(before)
                                 if makes_claim(sp.of(preceding)) and not sp.of(preceding).rstrip().endswith("?")), None)
                stated = None
                if named is not None:
                    for base in (said, yes_no_statement(q, True) if q else None):
                        if base is not None and stated is None:
                            stated = resolve_ellipsis(base, f"{named} too." if pronoun else f"Not {named}.")
                    if stated is not None and reply_rest:  # "Gift cards? Yes, within 30 days."
                        stated = resolve_ellipsis(stated, reply_rest) or f"{stated} {reply_rest}"
                elif q:
                    stated = yes_no_statement(q, pronoun)
                if stated is not None and tok.count(stated) <= hyp_budget:
                    items.append(ResponseItem(span, text, stated, True, True, claim=True))
                    continue
            same = same_for(text) if cfg.answer_claims else None
            if same is not None and prior and makes_claim(prior) and not is_elliptical(prior):
                # "The same applies to gift cards." is "Gift cards too." after the claim before it
                made_text = resolve_ellipsis(prior, same) or f"{prior} {same}"
                if tok.count(made_text) <= hyp_budget:
                    items.append(ResponseItem(span, text, made_text, True, False, claim=True))
                    continue
            if prior and is_elliptical(text) and makes_claim(prior) and not is_elliptical(prior):
                # "Items can be returned within 30 days. Gift cards too.": the ellipsis claims what the sentence before
                # it claims, of gift cards ("Gift cards can be returned within 30 days."); a shape not rebuilt is
                # read after that sentence. Either way it is judged for what a reader takes from it
                made_text = resolve_ellipsis(prior, text) or f"{prior} {text}"
                if tok.count(made_text) <= hyp_budget:
                    items.append(ResponseItem(span, text, made_text, True, False, claim=True))
                    continue
            advised = yes_no_statement(q, True) if q and cfg.answer_claims and advises_yes(text) and asks_yes_no(q) \
                else None
            if advised is not None and tok.count(advised) <= hyp_budget:
                # "I'd go for it!" to "Can I swim at the beaches?" recommends the yes: judged as the yes is
                items.append(ResponseItem(span, text, advised, True, True, claim=True))
                continue
            hedged = hedged_reply(text) if q and cfg.answer_claims else None
            condition = restriction_of(text) if hedged is not None and hedged[0] else None
            base = yes_no_statement(q, True) if condition is not None else None
            if base is not None and condition is not None and tok.count(base) + tok.count(condition) <= hyp_budget:
                # "Only with manager approval." to "Can I work remotely on Fridays?": a yes under a condition, and the
                # condition is a claim ("You can work remotely on Fridays only with manager approval.")
                items.append(ResponseItem(span, text, f"{base.rstrip('.!')} {condition}.", True, True, claim=True))
                continue
            if hedged is not None:
                # "Probably not.", "Possibly.", "Only with special approval." to a yes/no question: the hedge or the
                # restriction asserts neither statement outright (what it restricts follows): it fails only where the
                # contexts deny the statement it leans to ("You cannot take a day of PTO next month." for "Probably
                # not."); "It depends." leans to none and claims nothing
                leans = yes_no_statement(q, hedged[0]) if hedged[0] is not None else None
                if leans is not None and tok.count(leans) <= hyp_budget:
                    items.append(ResponseItem(span, text, leans, True, True, claim=True, veto=True, rules=False,
                                               lean=LEAN_CONTRADICTION if hedged[0] else 0.0))
                    continue
                if hedged[0] is None or asks_yes_no(q):
                    items.append(ResponseItem(span, text, text, False))
                    continue
            elided = vp_ellipsis(prior, text) if prior and cfg.answer_claims and makes_claim(prior) else None
            if elided is not None and tok.count(elided) <= hyp_budget:
                # "The Pro plan includes priority support. The Basic plan does not.": what the sentence before says,
                # denied of the Basic plan
                items.append(ResponseItem(span, text, elided, True, False, claim=True))
                continue
            topical = topic_reply(text) if q and cfg.answer_claims else None
            if topical is not None:
                # "As for the Basic plan, yes." to "Does the Basic plan include priority support?" answers the question;
                # about another subject ("As for gift cards, no.") it says the question's statement of that subject
                said_yes = bool(polarity(topical[1])[0])
                base = yes_no_statement(q, said_yes)
                about = {w for w in content_stems(topical[0])}
                if base is not None and not about <= set(content_stems(q)):
                    base = resolve_ellipsis(yes_no_statement(q, True) or "", f"{topical[0]} too." if said_yes
                                            else f"Not {topical[0]}.")
                if base and tok.count(base) <= hyp_budget:
                    items.append(ResponseItem(span, text, base, True, True, claim=True))
                    continue
            contrast = contrast_claims(text) if cfg.answer_claims else None
            if contrast is not None and all(tok.count(p) <= hyp_budget for p in contrast):
                # "Gift cards can be returned, but sale items can't.": each clause is a claim of its own
                items.extend(ResponseItem(span, text, p, True, False, claim=True) for p in contrast)
                continue
            asides = aside_claims(text) if cfg.answer_claims else None
            if asides is not None and all(tok.count(p) <= hyp_budget for p in asides):
                # "Items (including gift cards) can be returned within 30 days." also claims it of gift cards; "(except
                # gift cards)" claims they cannot
                items.extend(ResponseItem(span, text, p, True, False, claim=True) for p in asides)
                continue
            reasons = reason_claims(text) if cfg.answer_claims else None
            if reasons is not None and tok.count(text) <= hyp_budget and tok.count(reasons[1]) <= hyp_budget:
                # "Gift cards cannot be returned because they are sold at a discount.": the reason is a claim of its
                # own; the sentence is read whole beside it (its main clause alone may lose what the reason says:
                # "The Pro plan costs more because it includes phone support.")
                items.extend(ResponseItem(span, text, p, True, False, claim=True) for p in (text.strip(), reasons[1]))
                continue
            exception = _EXCEPTION_IN.fullmatch(text.strip())
            if exception is not None and cfg.answer_claims:
                # "Gift cards cannot be returned, except within 30 days." also claims its exception: that gift cards can
                # be returned within 30 days (an exception to a prohibition is a permission)
                main = exception.group("main").strip()
                tail = exception.group("tail").rstrip(".!").strip()
                adjunct = tokenize(tail)[0].lower() in _EXCEPT_ADJUNCT
                flipped = resolve_ellipsis(main, f"Except {tail}.")
                # "..., except gift cards." says the main claim does not hold of them (when they are of the kind the
                # subject names: "Items ..., except gift cards."; not "The clinic is open ..., except Sundays.");
                # "..., except within 30 days." after a prohibition permits it there
                if flipped is not None and negate(main) is not None and (
                        _negative(main) if adjunct else _excepts_subject(main, tail)):
                    parts = [main.rstrip(".!,;") + ".", flipped]
                    if all(tok.count(p) <= hyp_budget for p in parts):
                        items.extend(ResponseItem(span, text, p, True, False, claim=True) for p in parts)
                        continue
            framed = framed_claim(text)
            if framed is not None:
                # "It is not true that gift cards cannot be returned." claims that they can: never a yes/no echo
                claim_text, asserted = framed
                stated = claim_text if asserted else negate(claim_text)
                if stated is None:  # no auxiliary to flip: read as written
                    items.append(ResponseItem(span, text, text, True, False, claim=True))
                    continue
                stated = resolve_pronouns(stated, _referents(text, named, title_before, mentioned, topic, asked)) or stated
                stated = stated[:1].upper() + stated[1:]
                if tok.count(stated) <= hyp_budget:
                    items.append(ResponseItem(span, text, stated, True, False, claim=True))
                    continue
            chose = alternative_claim(q, text) if q and cfg.answer_claims and " or " in q else None
            if chose is not None and tok.count(chose) <= hyp_budget:
                # "You can return both." to "Can I return gift cards or items?" claims it of both
                items.append(ResponseItem(span, text, chose, True, False, claim=True))
                continue
            if cfg.answer_claims and not text.rstrip().endswith("?") and not yes_no_answer(text) and is_claim(text) \
                    and not (q and dependent_reply(text)):
                # "Yes, they can be returned within 30 days." under "Can gift cards be returned?" claims that gift
                # cards can: a pronoun is read as what it points at (alone, any context about anything returnable
                # within 30 days would entail it)
                resolved = resolve_pronouns(text, _referents(text, named, title_before, mentioned, topic, asked),
                                            loose=bool(asked) and polarity(text)[0] is not None)
                if resolved is not None and tok.count(resolved) <= hyp_budget:
                    items.append(ResponseItem(span, text, resolved, True, False, claim=True))
                    continue
            short = len(pieces) == 1 and len(words(text)) <= cfg.short_answer_words
            # "Yes, they can." is no claim alone: it is checked as the answer to the question, wherever it stands
            mode = self.question_context
            # a yes/no answer with its hedges and echo ("I'm afraid not.", "They can't.") is one too
            fragment = bool(q) and mode != "never" and (is_answer_fragment(text) or
                                                        (is_claim(text) and yes_no_answer(text)))
            yes_no = claimless and bool(q) and polarity(text)[0] is not None
            span_reply = False  # a short answer to a wh-question, read alone ("23 kg.")
            if q and cfg.answer_claims and mode != "never" and (fragment or short or polarity(text)[0] is not None):
                made = answer_claim(q, text) if (fragment or short or yes_no) else None
                if made is not None and made.kind == "wh-span" and not cfg.span_claims:
                    made = None
                # "1.2 kg." to "How much does the AeroBook 16 weigh?" (whether or not its statement can be built)
                span_reply = made is None and short and not preceding.strip() and polarity(text)[0] is None and \
                    not any(looks_verb(t) and not (k and _COUNT.fullmatch(ts[k - 1]))  # "15 minutes" is no verb
                            for ts in (tokenize(text),) for k, t in enumerate(ts)) and \
                    bool(tokenize(q)) and tokenize(q)[0].lower() in WH
                reason = reason_reply(text) if made is None else None
                statement = yes_no_statement(q, bool(polarity(text)[0])) if reason else None
                over = exceeds_bound(statement, reason) if reason and statement else None
                yes = bool(polarity(text)[0])
                if reason and statement and states_quantity(statement) and states_quantity(reason) and (
                        over is None or over != yes) and tok.count(reason) <= hyp_budget \
                        and tok.count(statement) <= hyp_budget:
                    # "No, because only 5 days can be carried over.": the reason is a claim of its own, and the
                    # answer's statement ("You cannot carry over 10 days.") must not be denied by the contexts (the
                    # model is not asked to infer a comparison from the reason); without a quantity the statement
                    # and its reason are judged together ("You can return a gift card, because items can be ...")
                    items.append(ResponseItem(span, text, reason, True, False, claim=True))
                    items.append(ResponseItem(span, text, statement, True, False, claim=True, veto=True))
                    continue
                if made is None and polarity(text)[0] is not None and is_claim(polarity(text)[1]):
                    # "No, gift cards cannot be returned.": the statement after the yes/no word is the claim; a
                    # clause that cannot stand alone ("Yes, because items can be returned.", "You can, within 30
                    # days.") is attached to the question's statement, which the yes/no word claims
                    rest = polarity(text)[1]
                    made = answer_claim(q, text) or AnswerClaim(rest[0].upper() + rest[1:], "stated")
                why = reason_reply(text) if made is not None and made.kind == "yes/no" and \
                    not _NO_REASON.match(polarity(text)[1]) else None
                if why is not None and not _POINTER.search(why.split(maxsplit=1)[-1]):
                    # "No, as only the Pro plan includes priority support.": the statement and its reason are two
                    # claims, each judged alone (joined, the model read the pair as contradicted, 0.96, though each
                    # part is entailed); a pronoun as the reason's subject is what the question asks about ("No,
                    # because they are treated as cash."), one elsewhere keeps the joined reading ("... includes it")
                    why = resolve_pronouns(why, _referents(text, named, title_before, mentioned, topic, asked)) or why
                    said = yes_no_statement(q, bool(polarity(text)[0]))
                    if said is not None and not points_at_nothing(why) and tok.count(why) <= hyp_budget and \
                            tok.count(said) <= hyp_budget:
                        items.append(ResponseItem(span, text, said, True, fragment, claim=True))
                        items.append(ResponseItem(span, text, why[:1].upper() + why[1:], True, False, claim=True))
                        continue
                if made is not None and made.kind == "yes/no" and _CONDITION_LEAD.match(made.statement):
                    # "If you buy a gift card, you can return it.": a pronoun read as what its condition names
                    own = resolve_pronouns(made.statement, [])
                    if own is not None:
                        made = AnswerClaim(own[:1].upper() + own[1:], made.kind)
                # a reply that is all the answer says, to the user's question (not to one the answer asks itself:
                # "Gift cards? Sure.")
                bare = claimless and state is None and (fragment or yes_no) and not (prior or "").rstrip().endswith("?")
                if made is not None and made.kind == "yes/no" and bare and points_at_nothing(made.statement):
                    # "Yes." to "Can I return it?" (or "that one?", "mine?") with nothing before it that says what it
                    # is: "You can return it." is entailed by any context about anything returnable, so the answer
                    # cannot be judged. Only when the reply is all the answer says ("Yes. It removes 99.9% of lead."
                    # is judged on its claim; a stream holds a bare reply until the sentence after it completes)
                    why = ("points at something nothing the guard can read names (no earlier message names it): it "
                           "cannot be judged; send the conversation (or a question that names what it asks about)")
                    raise UncheckableError(f"the answer {text.strip()!r} says yes or no to {q!r}, which {why}",
                                           shown=f"the answer says yes or no to a question which {why}")
                if made is None and not reason and bare and yes_no_answer(text) and not yes_no_only(text):
                    # "Yes." to "And a gift card?", "What about jackets?", "I want to return it.": no statement can be
                    # built, and "Q: ... A: Yes." reads to the model like the question's own words
                    why = ("the guard cannot turn into the statement the answer makes (not a yes/no question it can "
                           "read, e.g. a follow-up that leaves out its verb): it cannot be judged; send the question "
                           "in full")
                    raise UncheckableError(f"the answer {text.strip()!r} says yes or no to {q!r}, which {why}",
                                           shown=f"the answer says yes or no to a question which {why}")
                members = conjunct_statements(q) if made is not None and made.kind == "yes/no" else None
                if members is not None and all(tok.count(m) <= hyp_budget for m in members):
                    # "Yes." to "Are both X and Y art dealers?" claims it of each; "No." that not both are (judged
                    # together: any member the contexts do not support makes it true)
                    yes = bool(polarity(text)[0])
                    items.extend(ResponseItem(span, text, m, True, fragment, claim=True, not_all=not yes)
                                 for m in members)
                    continue
                if made is not None and made.kind == "stated" and tok.count(made.statement) <= hyp_budget:
                    # "No, alcohol isn't reimbursable." to "Can I expense wine?": the statement after the no is the
                    # claim; the question's statement ("You cannot expense wine.") may need what the model cannot
                    # infer (wine is alcohol), so it fails only where the contexts deny it
                    items.append(ResponseItem(span, text, made.statement, True, fragment, claim=True))
                    # only a yes: the model reads the negative statement of a no ("You cannot wash the filter with
                    # warm soapy water.") as contradicted by the very rule that makes it true ("rinse the filter with
                    # cold water only ... avoid hot water, detergent": 0.99; r35, 8 faithful answers of 273 blocked)
                    yes = bool(polarity(text)[0])
                    if yes and _ENDED.search(text) is None and asks_yes_no(q) and _cut_off(made.statement):
                        # cut off before its end ("Yes, gift cards can", an answer stopped at its length limit or
                        # broken off): the statement is a fragment the model entails from anything (0.78), so the reply
                        # is judged as the yes or no it shows, as a bare "Yes." is
                        own = yes_no_statement(q, yes)
                        if own is not None and tok.count(own) <= hyp_budget and own != made.statement:
                            items.append(ResponseItem(span, text, own, True, fragment, claim=True))
                            continue
                    said = yes_no_statement(q, True) if yes and asks_yes_no(q) and _PLAIN_YES_NO.match(text) else None
                    if said is not None and tok.count(said) <= hyp_budget and said != made.statement:
                        items.append(ResponseItem(span, text, said, True, fragment, claim=True, veto=True, rules=False))
                    # a no is wrong where the contexts say yes outright: the yes it denies fails it when entailed
                    # ("No, most ascents take five to nine days." to "Do climbers need a licensed guide?")
                    denied = yes_no_statement(q, True) if not yes and asks_yes_no(q) and _PLAIN_YES_NO.match(text) \
                        else None
                    if denied is not None and tok.count(denied) <= hyp_budget and denied != made.statement:
                        items.append(ResponseItem(span, text, denied, True, fragment, claim=True, veto=True, rules=False,
                                                  affirms=True))
                    continue
                if made is not None and tok.count(made.statement) <= hyp_budget:
                    items.append(ResponseItem(span, text, made.statement, True, fragment, claim=True))
                    continue
            if not q and claimless and state is None and cfg.answer_claims and mode != "never" and \
                    is_answer_fragment(text) and polarity(text)[0] is not None and not yes_no_only(text) and \
                    not (prior or "").rstrip().endswith("?"):
                # "Yes." with no question: it says nothing the contexts could support or deny
                why = ("says yes or no, and no question came with it: it cannot be judged; send the question (record "
                       "it, or pass it to the check)")
                raise UncheckableError(f"the answer {text.strip()!r} {why}", shown=f"the answer {why}")
            if not q and cfg.answer_claims and mode != "never" and not mentioned and not preceding.strip() and \
                    not any(it.check for it in items):
                # the answer's first claim leans on a question that did not come: "Yes, within 30 days." (the rest
                # names no subject). (A first sentence on a pronoun, "It can be returned within 30 days.", is judged
                # as written: claims checked with no question, WiCE's "He served as mayor ...", open so; measured,
                # refusing them took wice_dev from 0.837 to 0.793)
                opening, rest = polarity(text)
                if opening is not None and _PLAIN_YES_NO.match(text) and rest.strip() and \
                        claim_subject(rest) is None and not subjectless_predicate(rest):
                    why = ("says yes or no, and no question came with it: it cannot be judged; send the question "
                           "(record it, or pass it to the check)")
                    raise UncheckableError(f"the answer {text.strip()!r} {why}", shown=f"the answer {why}")
            # measured (model card): short claims ("Delhi") are judged better alone than as "Q: ... A: Delhi"
            use_q = bool(q) and (mode == "always" or (mode == "auto" and short) or fragment)
            hyp = qa_hypothesis(q, text) if use_q else text
            if use_q and tok.count(hyp) > hyp_budget:
                hyp = text
            if not use_q and (bid := _MAKE_SURE.match(text)) is not None:
                # "Make sure the item is unused.": the instruction's condition is what the contexts can state
                hyp = text[bid.end()][:1].upper() + text[bid.end() + 1:]
            elif not use_q:
                hyp = without_source(text)  # "According to the policy, items can be returned ...": the claim
            check = is_claim(text) or fragment  # pleasantries alone claim nothing ("Thanks!", "Hope this helps.")
            parts = (split_claims(text) if cfg.split_claims else split_clauses(text)) if check and not use_q \
                else [text]
            if len(parts) > 1 and all(tok.count(p) <= hyp_budget for p in parts):
                items.extend(ResponseItem(span, text, part, True, False, claim=True) for part in parts)
                continue
            # "Litware Inc." to "Who is acquiring Litware?", "The Nova 8." to "Which Nova 8 model supports ...?": a
            # span made of the question's own words (but for a company suffix or article) names no answer; not
            # under a question that offers alternatives ("Which is cheaper, X or Y?")
            spanned = frozenset(content_stems(text)) - _NAME_SUFFIXES
            restates = span_reply and bool(spanned) and spanned <= frozenset(content_stems(q)) and \
                not re.search(r"(?i)\bor\b|\bbetween\b", q)
            items.append(ResponseItem(span, text, hyp, check, fragment, answers=span_reply, restates=restates))
        if state is not None:
            if items and items[-1].check and not items[-1].fragment and not _interrogative(items[-1].hypothesis):
                mentioned = _named_in(items[-1].hypothesis) or mentioned
            state.update(mentioned=mentioned, topic=topic, topic_age=topic_age, head=head, head_age=head_age)
        return items

    @property
    def sentences(self) -> int:
        """Single sentences read besides the windows: the config's, else the number the model was calibrated with."""
        if self.config.sentences is not None:
            return self.config.sentences
        return int(self.nli.metadata.get("sentences", 0))

    def _config(self) -> FaithfulnessConfig:
        """The config with the model's own settings filled in where it leaves them to the model."""
        if self.config.sentences is None:
            self.config = dataclasses.replace(self.config, sentences=self.sentences)
        return self.config

    def run(self, question: str, contexts: Sequence[str], response: str, *, preceding: str = "",
            titles: Callable[[int, int], bool] | None = None, preceding_title: str | None = None,
            stop_below: StopBelow = None) -> FaithfulnessResult:
        """Check ``response`` (``preceding``: the answer's text before it, when it is a part of a streamed answer: a
        sentence with no verb of its own, "Gift cards too.", is read after the sentence before it; ``titles``: which
        spans of ``response`` are titles that claim nothing in the text as sent, a heading or a source's link, see
        :class:`~guardrail.checks.evaluator.ReaderFaithfulnessCheck`; ``preceding_title``: the title that ends
        ``preceding``, which a pronoun of ``response``'s first sentence may point at; ``stop_below``: read the
        sentences in order, :data:`STOP_GROUP` checked ones at a time, and stop after the group where one scores below
        this ("auto": the model's threshold): the sentences after it are not read (evidence with no score). For a
        verdict that one failing sentence decides (block mode): a long answer whose first sentence fails costs one
        group, not the whole answer)."""
        cfg = self._config()
        _validate(question, contexts, response, cfg)
        tok = self.nli.tokenizer
        max_len = self.nli.max_length
        special = tok.special_tokens(pair=True)
        hyp_budget = max(8, (max_len - special) // 2)
        vocabulary = functools.cache(lambda: self._vocabulary(contexts) | frozenset(content_stems(question)))
        items = self._items(question, response, hyp_budget, preceding, titles, preceding_title, known=vocabulary)
        # "1240" is read against "1,240" as the same number the contexts write; "not non-returnable" as "returnable"
        spellings = self._spellings(contexts)
        items = [dataclasses.replace(it, hypothesis=plain_negation(as_context_numbers(it.hypothesis, spellings)))
                 if it.check else it for it in items]
        if any(it.check and _HAS_DIGIT_OR_WORD.search(it.hypothesis) for it in items):
            # "Audit logs are kept for 3 months." read as the contexts write it ("... for 90 days"), when the number
            # rule finds it a conversion of theirs: the model does not convert units (0.04 as written)
            known_units = self._known(contexts, question)
            items = [dataclasses.replace(it, hypothesis=as_context_units(it.hypothesis, known_units))
                     if it.check and _HAS_DIGIT_OR_WORD.search(it.hypothesis) else it for it in items]
        if any(it.check and _CONVERSION.search(it.hypothesis) for it in items):
            # "It weighs 1.3 kg (2.9 lb).": a conversion in brackets that the contexts' number holds is read by the
            # number rule, not by the model (which reads "(2.9 lb)" beside "1.3 kg" as contradicted: 0.64); one the
            # contexts do not hold ("(3.9 lb)") stays for both to read
            known = self._known(contexts, question)
            items = [dataclasses.replace(it, hypothesis=_without_conversions(it.hypothesis, known))
                     if it.check and _CONVERSION.search(it.hypothesis) else it for it in items]
        checked = [it for it in items if it.check]
        hyp_tokens = tok.count_many([it.hypothesis for it in checked]) if checked else [0]
        # a few tokens of slack: joined sentences can tokenize slightly longer than their parts
        budget = max(8, max_len - special - max(hyp_tokens) - 4)
        prepared = self._prepare(contexts, budget)
        basis = EvidenceBasis(contexts, prepared.index, prepared.vocab, prepared.copies,
                              content_stems(question) if question else [], self.calibrator, self.threshold,
                              reads_singles=prepared.singles is not None and bool(cfg.sentences),
                              subject_conflict=cfg.subject_conflict, question=question,
                              answer=[it.text for it in items])
        # premise selection, then the model's reading of the pairs, then each sentence's evidence
        numbers = sentence_numbers(items)
        limit = None if stop_below is None else (basis.threshold if stop_below == "auto" else float(stop_below))
        evidence: list[SentenceEvidence] = []
        n_pairs = n_tokens = 0
        for group in _groups(items, None if limit is None else STOP_GROUP):
            give_up_if_abandoned()
            part = [items[i] for i in group]
            if limit is not None and any(e.score is not None and e.score < limit for e in evidence):
                # the answer has failed: what follows is not read (the verdict is decided)
                evidence += [sentence_evidence(numbers[i], dataclasses.replace(items[i], check=False), [], _NO_PAIRS,
                                               basis) for i in group]
                continue
            subjects = [subject_core(t, claim_words(t), prepared.index) if it.check else frozenset()
                        for it, t in ((it, it.hypothesis if it.claim else it.text) for it in part)]
            pairs, per_item = select_premises([it.hypothesis if it.check else None for it in part], prepared.index,
                                              prepared.units, prepared.singles, basis.question_words, budget, cfg,
                                              subjects)
            borrows = [functools.partial(_lends_polarity, prepared.index, it.hypothesis, words) if it.check else None
                       for it, words in zip(part, subjects)]
            scores = score_pairs(self.nli, pairs, per_item, cfg.stop_at, subjects, borrows)
            for i, it, refs, about in zip(group, part, scores.read, subjects):
                give_up_if_abandoned()  # the rules on a sentence's words scan the contexts: a step at a time
                evidence.append(sentence_evidence(numbers[i], it, refs, scores, basis, about))
            n_pairs += len(scores.entailment)
            n_tokens += scores.tokens
        evidence = not_all(items, evidence, basis.threshold)
        judged = [e for e in evidence if e.score is not None]
        return FaithfulnessResult(
            score=float(np.mean([e.score for e in judged])) if judged else None,
            nli_score=float(np.mean([e.entailment for e in judged])) if judged else None,
            calibrated=basis.calibrator is not None,
            sentences=tuple(evidence),
            mode=cfg.mode,
            threshold=basis.threshold,
            pairs=n_pairs,
            model_tokens=n_tokens,
            context_sentences=prepared.index.num_sentences,
        )

    def _known(self, contexts: Sequence[str], question: str) -> KnownNumbers:
        """The numbers the contexts and the question hold (cached per request texts)."""
        key = (*contexts, "\x00", question)
        found = self._known_numbers.get(key)
        if found is None:
            found = KnownNumbers([*contexts, question], question=question)
            self._known_numbers.put(key, found)
        return found

    def _vocabulary(self, contexts: Sequence[str]) -> frozenset[str]:
        """The contexts' content words (cached per contexts, as the premises are)."""
        key = tuple(contexts)
        found = self._stems.get(key)
        if found is None:
            found = frozenset(w for c in contexts for w in content_stems(c))
            self._stems.put(key, found)
        return found

    def _spellings(self, contexts: Sequence[str]) -> Spellings:
        """How the contexts write their numbers (cached per contexts, as the premises are)."""
        key = tuple(contexts)
        found = self._numbers.get(key)
        if found is None:
            found = number_spellings(contexts)
            self._numbers.put(key, found)
        return found

    def _prepare(self, contexts: Sequence[str], budget: int) -> _Prepared:
        """The contexts' sentence index, premise units and vocabulary, built once per contexts (cached)."""
        cfg = self._config()
        tok = self.nli.tokenizer
        key = (tuple(contexts), budget)
        prepared = self._prepared.get(key)
        if prepared is None:
            index = ContextIndex.build(contexts, tok.count_many, tok.offsets, budget)
            units = fit_units(index.units(cfg.mode, budget, cfg.window, cfg.whole_chunks), tok.count_many, budget, index)
            copies = frozenset(verbatim_key(sp.of(c)) for c in contexts for sp in split_sentences(c))
            singles = None
            if (cfg.sentences or cfg.joined) and cfg.mode == "candidates" and (cfg.window or cfg.whole_chunks or cfg.joined):
                singles = fit_units(index.units(cfg.mode, budget, 0), tok.count_many, budget, index)
            prepared = _Prepared(index, units, context_terms(contexts), copies, singles)
            self._prepared.put(key, prepared)
        return prepared


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
    # the question's language alone never makes an answer uncheckable: the answer is judged against the contexts
    # (a question the readings cannot parse is no help to them, and retrieval relevance is not measured for it)
    reason = unsupported_language(response, what="answer")
    shown = unsupported_language(response, what="answer", quote=False) if reason is not None else None
    if reason is None:
        broken = next((i for i, c in enumerate(contexts) if lone_surrogate(c) is not None), None)
        if broken is not None:
            reason = f"context {broken + 1} holds a lone surrogate (broken Unicode); fix the text before checking it"
    if reason is not None:
        raise UncheckableError(reason, shown=shown)


def _lends_polarity(index: ContextIndex, hypothesis: str, subject: frozenset[str], premise: Premise) -> bool:
    """The premise only lends the claim its polarity (:func:`~guardrail.checks.pairing.borrowed_polarity`)."""
    return bool(borrowed_polarity(premise, index, hypothesis, subject))


#: a number a unit may follow: "15", "1,200", "2.5", "ten"
_COUNT = re.compile(r"(?i)\d[\d,.]*|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|"
                    r"fifty|sixty|hundred|thousand|million|billion")


#: a threshold to stop reading at (FaithfulnessCheck.run): a number, or "auto" for the model's own
StopBelow = float | Literal["auto"] | None
#: checked sentences read per group when reading stops at the first failure (one model call per premise round each)
STOP_GROUP = 16
_NO_PAIRS = PairScores({}, {}, 0, [])


#: a figure or a number word that may carry a unit ("3 months", "two weeks")
_HAS_DIGIT_OR_WORD = re.compile(r"(?i)\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a)\s+"
                                r"(?:year|month|week|day|hour|minute)s?\b")
#: a number in brackets after another ("1.3 kg (2.9 lb)", "30 days (about 4 weeks)", "$45 (about EUR 42)")
_CONVERSION = re.compile(r"(?<=[\w%])\s*\((?:(?:about|approx\.?|approximately|around|roughly|~|\u2248|or|i\.e\.,?|=)\s*)?"
                         r"[$\u20ac\u00a3]?\s*\d[\d,.]*\s*[^\W\d_]*(?:\s+[^\W\d_]+)?\)")


def _without_conversions(hypothesis: str, known: KnownNumbers) -> str:
    """``hypothesis`` without the bracketed conversions the contexts' numbers hold."""
    missing = known.unsupported(hypothesis)

    def drop(m: re.Match[str]) -> str:
        inside = m.group(0)
        return m.group(0) if any(n in inside for n in missing) else ""
    return _CONVERSION.sub(drop, hypothesis)


def _groups(items: Sequence[ResponseItem], size: int | None) -> list[range]:
    """Consecutive runs of ``items`` holding ``size`` checked ones each (the last may hold fewer); one run of all
    when ``size`` is None."""
    if size is None:
        return [range(len(items))]
    out: list[range] = []
    start = count = 0
    for k, it in enumerate(items):
        count += it.check
        if count >= size and (k + 1 == len(items) or items[k + 1].span != it.span):  # a sentence's parts read together
            out.append(range(start, k + 1))
            start, count = k + 1, 0
    if start < len(items):
        out.append(range(start, len(items)))
    return out

