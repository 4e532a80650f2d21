"""Synthetic NLI pairs from a team's own documents (FactCC-style), so the model adapts to a domain
without labels.

For a sentence S of a document, the premise is S with its neighbours (the way the guard reads
context). Hypotheses:

- entailment: S itself, or S with a trailing clause or parenthetical removed (meaning-preserving cuts);
- contradiction: S with a number, year or name swapped for another from the corpus, or negated;
- neutral: S extended with a claim taken from another document (an unsupported addition).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from pathlib import Path

from guardrail.text import split_sentences
from guardrail.training.data import Pair

_NUM = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w.]*\w)")
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
_NAME = re.compile(r"(?<!^)(?<![.!?]\s)\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*")
_NEGATABLE = re.compile(r"\b(is|are|was|were|can|will|has|have|had|does|do|did|should|could|would)\b")


def read_corpus(folder: Path) -> list[str]:
    files = sorted(p for p in folder.rglob("*") if p.suffix.lower() in {".txt", ".md"} and p.is_file())
    if not files:
        raise FileNotFoundError(f"no .txt or .md files under {folder}; --corpus needs a folder of text documents")
    return [p.read_text(encoding="utf-8", errors="replace") for p in files]


def _swap(pattern: re.Pattern[str], sentence: str, pool: Sequence[str], rng: random.Random) -> str | None:
    matches = list(pattern.finditer(sentence))
    if not matches:
        return None
    m = rng.choice(matches)
    choices = [x for x in pool if x != m.group() and x.lower() not in sentence.lower()]
    if not choices:
        return None
    return sentence[: m.start()] + rng.choice(choices) + sentence[m.end() :]


def _change_number(sentence: str, rng: random.Random) -> str | None:
    matches = list(_NUM.finditer(sentence))
    if not matches:
        return None
    m = rng.choice(matches)
    raw = m.group().replace(",", "")
    try:
        value = float(raw)
    except ValueError:
        return None
    new = value * rng.choice([2, 3, 0.5, 10]) + rng.choice([0, 1, 7]) if value else rng.randint(2, 50)
    text = str(int(new)) if "." not in raw else f"{new:.{len(raw.split('.')[1])}f}"
    if text == raw:
        return None
    return sentence[: m.start()] + text + sentence[m.end() :]


def _negate(sentence: str) -> str | None:
    m = _NEGATABLE.search(sentence)
    if not m or re.search(r"\bnot\b|n't\b|\bnever\b", sentence):
        return None
    return sentence[: m.end()] + " not" + sentence[m.end() :]


def _shorten(sentence: str) -> str | None:
    no_paren = re.sub(r"\s*\([^)]*\)", "", sentence)
    if no_paren != sentence and len(no_paren.split()) >= 4:
        return no_paren
    parts = sentence.rsplit(", ", 1)
    if len(parts) == 2 and len(parts[0].split()) >= 5:
        return parts[0].rstrip(",;") + "."
    return None


def corpus_pairs(folder: Path, n: int, *, seed: int = 13) -> list[Pair]:
    """Up to ``n`` labelled pairs (about a third each entailment, contradiction, neutral)."""
    rng = random.Random(seed)
    docs = [[s.of(text) for s in split_sentences(text)] for text in read_corpus(folder)]
    docs = [d for d in docs if d]
    all_text = " ".join(" ".join(d) for d in docs)
    numbers = sorted(set(_NUM.findall(all_text)))
    years = sorted(set(_YEAR.findall(all_text)))
    names = sorted(set(_NAME.findall(all_text)))
    slots = [(d, i) for d, doc in enumerate(docs) for i, s in enumerate(doc) if len(s.split()) >= 5]
    if not slots:
        raise ValueError(f"the corpus in {folder} has no sentence of 5 words or more to build pairs from")
    pairs: list[Pair] = []
    attempts = 0
    while len(pairs) < n and attempts < n * 20:
        attempts += 1
        d, i = rng.choice(slots)
        doc = docs[d]
        sentence = doc[i]
        premise = " ".join(doc[max(0, i - 1) : i + 2])
        kind = rng.choice(["entail", "entail", "number", "year", "name", "negate", "add"])
        hyp: str | None
        label = 2
        if kind == "entail":
            hyp, label = (_shorten(sentence) or sentence), 0
        elif kind == "number":
            hyp = _change_number(sentence, rng) or _swap(_NUM, sentence, numbers, rng)
        elif kind == "year":
            hyp = _swap(_YEAR, sentence, years, rng)
        elif kind == "name":
            hyp = _swap(_NAME, sentence, names, rng)
        elif kind == "negate":
            hyp = _negate(sentence)
        else:
            others = [k for k in range(len(docs)) if k != d]
            if not others:
                continue
            extra = " ".join(rng.choice(docs[rng.choice(others)]).split()[:40])
            hyp, label = sentence.rstrip(".!? ") + ", and " + extra[:1].lower() + extra[1:], 1
        if hyp and hyp != sentence or (hyp and label == 0):
            pairs.append(Pair(premise, hyp, label, False, "corpus", f"{d}:{i}:{kind}:{len(pairs)}"))
    return pairs


# --- hard negatives from the training pool's own pairs -------------------------------------------------------------

_UNITS = [
    ("days", "weeks"), ("weeks", "months"), ("months", "years"), ("hours", "minutes"), ("minutes", "seconds"),
    ("km", "miles"), ("kilometres", "miles"), ("kilometers", "miles"), ("metres", "feet"), ("meters", "feet"),
    ("kg", "pounds"), ("percent", "times"), ("million", "billion"), ("thousand", "million"), ("dollars", "euros"),
]
_UNIT_SWAP = {a: b for a, b in _UNITS} | {b: a for a, b in _UNITS}
_UNIT_RE = re.compile(r"\b(" + "|".join(sorted(map(re.escape, _UNIT_SWAP), key=len, reverse=True)) + r")\b")
_NEGATED = [
    (re.compile(r"\bcannot\b"), "can"), (re.compile(r"\bcan't\b"), "can"), (re.compile(r"\bwon't\b"), "will"),
    (re.compile(r"\b(is|are|was|were|does|do|did|has|have|had|should|could|would|will|can|must) not\b"), r"\1"),
    (re.compile(r"\b(is|are|was|were|does|do|did|has|have|had|should|could|would)n't\b"), r"\1"),
    (re.compile(r"\bnever\b"), "always"), (re.compile(r"\bno longer\b"), "still"),
]
_CONTRACT = {"can": "cannot", "will": "will not"}


def negate(sentence: str) -> str | None:
    """Flip the polarity of a sentence at its first auxiliary: add a negation, or remove the one it has."""
    for pattern, repl in _NEGATED:
        if pattern.search(sentence):
            out = pattern.sub(repl, sentence, count=1)
            return out if out != sentence else None
    m = _NEGATABLE.search(sentence)
    if not m:
        return None
    word = m.group()
    return sentence[: m.start()] + _CONTRACT.get(word, word + " not") + sentence[m.end() :]


def _swap_unit(sentence: str, rng: random.Random) -> str | None:
    matches = list(_UNIT_RE.finditer(sentence))
    if not matches:
        return None
    m = rng.choice(matches)
    return sentence[: m.start()] + _UNIT_SWAP[m.group()] + sentence[m.end() :]


def hard_negatives(pairs: Sequence[Pair], n: int, *, seed: int = 13) -> list[Pair]:
    """Up to ``n`` pairs that a lexical-overlap model gets wrong, built from entailed pairs of the pool.

    For an entailed pair (premise P, hypothesis H), or a sentence S copied out of P:
    - polarity flipped (``can`` -> ``cannot``, ``is not`` -> ``is``): contradiction;
    - a number or year changed: contradiction;
    - a unit swapped (days -> weeks) or a name swapped for one from another premise: not entailed (2-way);
    - S itself: entailed (so that copying alone is not a cue for either label).
    Every word of a perturbed hypothesis but the changed one occurs in the premise: only meaning separates them.
    """
    rng = random.Random(seed)
    entailed = [p for p in pairs if p.label == 0 and len(p.hypothesis.split()) >= 4 and not p.hypothesis.startswith("Q: ")]
    if not entailed:
        return []
    names = sorted({m for p in rng.sample(entailed, min(len(entailed), 5000)) for m in _NAME.findall(p.premise)})
    out: list[Pair] = []
    attempts = 0
    while len(out) < n and attempts < n * 10:
        attempts += 1
        src = rng.choice(entailed)
        if rng.random() < 0.5:
            hyp = src.hypothesis
        else:  # a sentence of the premise, as an answer that quotes its context would
            sentences = [s.of(src.premise) for s in split_sentences(src.premise)]
            sentences = [s for s in sentences if 5 <= len(s.split()) <= 40]
            if not sentences:
                continue
            hyp = rng.choice(sentences)
        kind = rng.choice(["negate", "negate", "number", "unit", "name", "copy"])
        new: str | None
        label, two_way = 2, False
        if kind == "negate":
            new = negate(hyp)
        elif kind == "number":
            new = _change_number(hyp, rng)
        elif kind == "unit":
            new, label, two_way = _swap_unit(hyp, rng), 1, True
        elif kind == "name":
            new, label, two_way = _swap(_NAME, hyp, names, rng), 1, True
        else:
            if hyp == src.hypothesis:
                continue
            new, label = hyp, 0
        if not new or (label != 0 and new == hyp):
            continue
        out.append(Pair(src.premise, new, label, two_way, f"hard_{kind}", f"{src.dataset}:{src.id}:{len(out)}"))
    return out


def negation_contexts(pairs: Sequence[Pair], n: int, *, seed: int = 13) -> list[Pair]:
    """Up to ``n`` pairs whose premise holds an unrelated negated sentence, so that a negation in the context is no
    cue for the label of a claim about something else (the shortcut v2's first run learnt from its hard negatives).

    For an entailed pair (P, H) and a sentence N with a negation ("Gift cards cannot be returned.") taken from another
    premise, the premise is P and N in random order. Hypotheses, in equal shares:
    - H (entailed), and H with its polarity flipped (contradiction);
    - N itself (entailed: a copied context sentence is supported, negated or not), and N flipped (contradiction).
    """
    rng = random.Random(seed)
    entailed = [p for p in pairs if p.label == 0 and len(p.hypothesis.split()) >= 4 and not p.hypothesis.startswith("Q: ")]
    if not entailed:
        return []
    negated: list[str] = []
    for p in rng.sample(entailed, min(len(entailed), 20000)):
        for span in split_sentences(p.premise):
            s = span.of(p.premise)
            if 5 <= len(s.split()) <= 40 and any(pattern.search(s) for pattern, _ in _NEGATED):
                negated.append(s)
    if not negated:
        return []
    out: list[Pair] = []
    attempts = 0
    while len(out) < n and attempts < n * 10:
        attempts += 1
        src = rng.choice(entailed)
        neg = rng.choice(negated)
        if neg in src.premise:
            continue
        parts = [src.premise, neg]
        rng.shuffle(parts)
        premise = " ".join(parts)
        kind = rng.choice(["claim", "claim_flip", "copy", "copy_flip"])
        hyp: str | None
        if kind == "claim":
            hyp, label = src.hypothesis, 0
        elif kind == "claim_flip":
            hyp, label = negate(src.hypothesis), 2
        elif kind == "copy":
            hyp, label = neg, 0
        else:
            hyp, label = negate(neg), 2
        if not hyp:
            continue
        out.append(Pair(premise, hyp, label, False, f"negctx_{kind}", f"{src.dataset}:{src.id}:{len(out)}"))
    return out


def _spans(pattern: re.Pattern[str], text: str) -> list[re.Match[str]]:
    return [m for m in pattern.finditer(text) if m.group().strip()]


def context_swaps(pairs: Sequence[Pair], n: int, *, seed: int = 13) -> list[Pair]:
    """Up to ``n`` pairs whose hypothesis has one name, number or year swapped for another *of its own premise*
    (FactCC's entity swap, which draws replacements from the source document).

    The hard negatives of :func:`hard_negatives` bring in a word the premise lacks, which lexical overlap catches.
    Here every word of the changed hypothesis occurs in the premise, so only reading who did what tells them apart:
    "X was born before Y" against a passage that names both. Shares: a third the unchanged hypothesis (entailed, on
    the same premises, so naming two entities of the premise is no cue), two thirds a swap (not entailed, 2-way: a
    swap can be contradicted or merely unsupported). A replacement shares no word with the span it replaces and
    does not occur in the hypothesis already, so aliases ("Obama" for "Barack Obama") are never swapped.
    """
    rng = random.Random(seed)
    entailed = [p for p in pairs if p.label == 0 and 3 <= len(p.hypothesis.split()) <= 60
                and not p.hypothesis.startswith("Q: ")]
    out: list[Pair] = []
    swapped = attempts = 0
    while len(out) < n and attempts < n * 20 and entailed:
        attempts += 1
        src = rng.choice(entailed)
        hyp = src.hypothesis
        if len(out) - swapped < swapped / 2:  # one unchanged for every two swaps made
            out.append(Pair(src.premise, hyp, 0, True, "ctxswap_keep", f"{src.dataset}:{src.id}:{len(out)}"))
            continue
        pattern = rng.choice([_NAME, _NAME, _NUM, _YEAR])
        spans = _spans(pattern, hyp)
        if not spans:
            continue
        m = rng.choice(spans)
        old = m.group()
        old_words = {w.lower() for w in old.split()}
        pool = sorted({x.group() for x in _spans(pattern, src.premise)})
        choices = [x for x in pool if not old_words & {w.lower() for w in x.split()} and x.lower() not in hyp.lower()]
        if not choices:
            continue
        new = hyp[: m.start()] + rng.choice(choices) + hyp[m.end():]
        out.append(Pair(src.premise, new, 1, True, "ctxswap", f"{src.dataset}:{src.id}:{len(out)}"))
        swapped += 1
    return out


def _lower_first(text: str) -> str:
    """"The tower was built" -> "the tower was built", but names and acronyms keep their capital."""
    first = text.split(" ", 1)[0]
    if first in {"The", "A", "An", "It", "They", "He", "She", "This", "These", "Its", "There", "In", "On", "At"}:
        return text[0].lower() + text[1:]
    return text


def multi_fact_claims(pairs: Sequence[Pair], n: int, *, seed: int = 13, max_premise_chars: int = 900) -> list[Pair]:
    """Up to ``n`` pairs whose claim joins two or three facts and whose support is spread over several sentences
    (WiCE's long Wikipedia claims, summaries that fuse two sentences of an article).

    From k = 2 or 3 pairs (P_i, H_i) of 3-way sets with short premises, the premise is the P_i and one unrelated
    premise, shuffled (so the support sits in different sentences, among a distractor); the claim is the H_i joined
    into one sentence ("H_1, and h_2"). Label: entailment when every part is entailed; contradiction when any part is
    contradicted; otherwise neutral. Half the claims have one non-entailed part: the rest of the claim is supported,
    so a claim that is only partly supported must not read as entailed. A quarter are single facts (k = 1) among
    distractors, so a longer premise is no cue either.
    """
    rng = random.Random(seed)
    pool = [p for p in pairs if not p.two_way and len(p.premise) <= 320 and 15 <= len(p.hypothesis) <= 160
            and not p.hypothesis.startswith("Q: ") and not p.dataset.startswith(("hard_", "negctx_", "ctxswap"))]
    if len(pool) < 10:
        return []
    by_label: dict[int, list[Pair]] = {0: [], 1: [], 2: []}
    for p in pool:
        by_label[p.label].append(p)
    if not by_label[0]:
        return []
    out: list[Pair] = []
    attempts = 0
    while len(out) < n and attempts < n * 10:
        attempts += 1
        k = rng.choice([1, 2, 2, 3])
        bad = k > 1 and rng.random() < 0.5 or k == 1 and rng.random() < 0.5
        parts = [rng.choice(by_label[0]) for _ in range(k)]
        if bad:
            wrong_label = rng.choice([1, 2]) if by_label[1] and by_label[2] else (2 if by_label[2] else 1)
            if not by_label[wrong_label]:
                continue
            parts[rng.randrange(k)] = rng.choice(by_label[wrong_label])
        distractor = rng.choice(pool)
        premises = [p.premise.strip() for p in parts] + [distractor.premise.strip()]
        if len({*premises}) != len(premises):
            continue
        rng.shuffle(premises)
        premise = " ".join(x if x.endswith((".", "!", "?", '"')) else x + "." for x in premises)
        if len(premise) > max_premise_chars:
            continue
        hyps = [p.hypothesis.strip().rstrip(".!") for p in parts]
        if k == 1:
            claim = hyps[0] + "."
        elif k == 2:
            claim = f"{hyps[0]}, and {_lower_first(hyps[1])}."
        else:
            claim = f"{hyps[0]}, {_lower_first(hyps[1])}, and {_lower_first(hyps[2])}."
        labels = {p.label for p in parts}
        label = 2 if 2 in labels else 1 if 1 in labels else 0
        out.append(Pair(premise, claim, label, False, f"multifact_{k}", f"{parts[0].dataset}:{parts[0].id}:{len(out)}"))
    return out


#: a verb that starts a predicate: copulas, auxiliaries and frequent verbs of encyclopedic and policy text
_PREDICATE = re.compile(
    r"\b(is|are|was|were|has|have|had|can|cannot|could|will|would|may|might|must|should|does|do|did|became|becomes|"
    r"remains|remained|includes|included|contains|contained|opened|closed|began|started|ended|won|lost|wrote|"
    r"directed|founded|played|moved|joined|received|released|covers|covered|offers|offered|requires|required|"
    r"runs|ran|serves|served|lies|lay|holds|held|makes|made|takes|took|gives|gave|uses|used|sells|sold|"
    r"produced|published|built|created|developed|designed|owns|owned|leads|led|hosts|hosted)\b")
_PRONOUN_SUBJECT = re.compile(r"^(it|its|this|that|these|those|they|their|he|his|she|her|there|we|our|you|your|i|"
                              r"which|who|such|both|each|one|another|other)\b", re.IGNORECASE)
_FUNCTION_WORDS = frozenset("a an the of in on at to for and or by with from as its their his her our".split())


def _subject_predicate(sentence: str) -> tuple[str, str] | None:
    """("The battery", "is covered for one year.") for a plain declarative sentence, or None."""
    m = _PREDICATE.search(sentence)
    if m is None:
        return None
    subject, predicate = sentence[: m.start()].strip(), sentence[m.start():].strip()
    words = subject.split()
    if not 1 <= len(words) <= 8 or "," in subject or _PRONOUN_SUBJECT.match(subject) or not subject[0].isupper():
        return None
    if any(_PRONOUN_SUBJECT.fullmatch(w) or (w.islower() and w.endswith("ed")) for w in words[1:]):
        return None  # "Chesebro claimed he": a clause, not a subject
    if len(predicate.split()) < 3 or not predicate.endswith("."):
        return None
    return subject, predicate


def _is_name(subject: str) -> bool:
    return all(w[:1].isupper() or w in _FUNCTION_WORDS for w in subject.split())


def _anaphoric(subject: str) -> bool:
    """"The film", "This company": a description that may name an entity mentioned before it."""
    words = subject.split()
    return len(words) <= 3 and words[0].lower() in ("the", "this", "these", "that") and all(w.islower() for w in words[1:])


def _may_corefer(a: str, b: str) -> bool:
    """"Entourage" and "The film" in neighbouring sentences are likely the same thing: never swapped."""
    return (_is_name(a) and _anaphoric(b)) or (_is_name(b) and _anaphoric(a))


def _content(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _FUNCTION_WORDS}


def recombinations(pairs: Sequence[Pair], n: int, *, seed: int = 13, span: int = 3, per_source: int = 3) -> list[Pair]:
    """Up to ``n`` pairs whose hypothesis joins the subject of one premise sentence to the predicate of another:
    "The battery has a two-year warranty." against "The laptop has a two-year warranty. The battery is covered for
    one year.", "Our main office opened in Lisbon in 2021." against "Our main office is in Berlin. We opened a support
    center in Lisbon in 2021.". Every word of the hypothesis is in the premise, so overlap cannot decide; a model
    that reads premises as bags of phrases entails them (v3 did, at 0.85-0.93).

    The premise is the few sentences (at most ``span``) from the first of the two to the second, as the guard reads a
    context: a sentence with its neighbours; up to ``per_source`` pairs of sentences per source premise. Shares: a third the premise's own sentence rebuilt (entailed: the same
    subject and predicate together), two thirds a recombination (not entailed, 2-way). Two subjects that share a
    content word ("The laptop" / "The laptop battery") are never swapped (the result may be true), nor are pronoun
    subjects (whose referent is unknown).
    """
    rng = random.Random(seed)
    sources = sorted({p.premise for p in pairs if 80 <= len(p.premise) <= 3000})
    rng.shuffle(sources)
    out: list[Pair] = []
    swapped = 0
    for i, source in enumerate(sources):
        if len(out) >= n:
            break
        sentences = [x.of(source) for x in split_sentences(source)]
        parts = [(k, sp) for k, x in enumerate(sentences) if (sp := _subject_predicate(x)) is not None]
        close = [(a, b) for a in parts for b in parts if 0 < abs(a[0] - b[0]) < span]
        for (k1, (s1, p1)), (k2, (s2, p2)) in rng.sample(close, min(per_source, len(close))):
            if _content(s1) & _content(s2) or not _content(s1) or _content(p1) == _content(p2) or _may_corefer(s1, s2):
                continue
            premise = " ".join(sentences[min(k1, k2) : max(k1, k2) + 1])
            if len(out) - swapped < swapped / 2:  # one rebuilt for every two recombined
                out.append(Pair(premise, f"{s2} {p2}", 0, True, "recombine_keep", f"recombine:{i}:{k2}"))
                continue
            hypothesis = f"{s1} {p2}"
            if hypothesis.lower() in premise.lower():
                continue
            out.append(Pair(premise, hypothesis, 1, True, "recombine", f"recombine:{i}:{k1}:{k2}"))
            swapped += 1
    return out[:n]


# --- meaning shifts inside near copies ------------------------------------------------------------------------------

#: a weaker word -> a stronger one that the weaker does not entail ("may" -> "must", "usually" -> "always")
_STRENGTHEN = [
    (re.compile(r"\b(may|might|can|could)\b(?! not\b)"), ["must", "will always"]),
    (re.compile(r"\b(usually|often|typically|generally|sometimes|frequently|mostly|normally|commonly)\b"),
     ["always"]),
    (re.compile(r"(?<!as )\b(some|many|several)\b(?= [a-z]+s\b)"), ["all"]),
    (re.compile(r"^(Some|Many|Most|Several)\b(?= [a-z]+s\b)"), ["All"]),
    (re.compile(r"\bup to\b(?= \d)"), ["exactly", "at least"]),
    (re.compile(r"\b(about|around|approximately|nearly|almost)\b(?= \d)"), ["more than", "exactly"]),
    (re.compile(r"\b\d+ or (?=\d)"), [""]),  # "1 or 2 tablets" -> "2 tablets"
    (re.compile(r"\b(partly|partially)\b"), ["fully"]),
]
#: a future or planned event told as done ("will acquire" -> "has acquired")
_DONE = {
    "acquire": "acquired", "open": "opened", "launch": "launched", "release": "released", "become": "become",
    "start": "started", "close": "closed", "join": "joined", "take": "taken", "make": "made", "build": "built",
    "begin": "begun", "end": "ended", "move": "moved", "offer": "offered", "expand": "expanded", "merge": "merged",
    "replace": "replaced", "increase": "increased", "reduce": "reduced", "introduce": "introduced", "add": "added",
    "receive": "received", "complete": "completed", "announce": "announced", "sign": "signed", "win": "won",
    "lose": "lost", "sell": "sold", "buy": "bought", "host": "hosted", "publish": "published", "hire": "hired",
    "return": "returned", "leave": "left", "retire": "retired", "change": "changed", "raise": "raised",
}
_FUTURE = re.compile(r"\b(will|plans to|is expected to|are expected to|is scheduled to|are scheduled to|intends to|"
                     r"is set to|are set to|is going to|are going to|hopes to|aims to)\s+(" + "|".join(_DONE) + r")\b")
_FUTURE_BE = re.compile(r"\bwill be\b")
_COMPARATIVE = re.compile(r"^(?P<a>[A-Z][^,;]{1,60}?) (?P<v>is|are|was|were) (?P<c>(?:\w+er|more \w+|less \w+)) than "
                          r"(?P<b>[^,;]{1,60}?)(?P<end>[.!]?)$")
_CAUSAL = ["because", "since", "as a result of the fact that", "which is why"]


_NEGATION = re.compile(r"\b(not|no|never|none|nothing|neither|nor|without|cannot|unless|if|whether)\b|n't\b", re.IGNORECASE)


def _shift(sentence: str, rng: random.Random) -> tuple[str, str] | None:
    """One meaning shift of ``sentence`` (kind, shifted sentence), or None when none applies."""
    kinds = []
    if any(p.search(sentence) for p, _ in _STRENGTHEN) and not _NEGATION.search(sentence):  # a negation reverses it
        kinds.append("strengthen")
    if _FUTURE.search(sentence) or _FUTURE_BE.search(sentence):
        kinds.append("done")
    if _COMPARATIVE.match(sentence):
        kinds.append("comparative")
    if not kinds:
        return None
    kind = rng.choice(kinds)
    if kind == "strengthen":
        pattern, words = rng.choice([(p, w) for p, w in _STRENGTHEN if p.search(sentence)])
        at = rng.choice(list(pattern.finditer(sentence)))
        return kind, sentence[: at.start()] + rng.choice(words) + sentence[at.end():]
    if kind == "done":
        future = _FUTURE.search(sentence)
        if future is not None:
            aux = "have" if future.group(1).startswith("are") else "has"
            return kind, sentence[: future.start()] + f"{aux} {_DONE[future.group(2)]}" + sentence[future.end():]
        return kind, _FUTURE_BE.sub(rng.choice(["has been", "was"]), sentence, count=1)
    comparison = _COMPARATIVE.match(sentence)
    assert comparison is not None
    a, b, end = comparison.group("a"), comparison.group("b"), comparison.group("end")
    return kind, f"{b[0].upper()}{b[1:]} {comparison.group('v')} {comparison.group('c')} than {_lower_first(a)}{end}"


def meaning_shifts(pairs: Sequence[Pair], n: int, *, seed: int = 13) -> list[Pair]:
    """Up to ``n`` pairs whose hypothesis is a near copy of a supported sentence with its meaning shifted by one
    word or clause that overlap cannot see, the shapes v3.4 entails (attack rounds 22-25):

    - a hedge, modal or quantifier strengthened ("may" -> "must", "usually" -> "always", "some" -> "all", "up to 5"
      -> "exactly 5", "1 or 2" -> "1 and 2"): not entailed (2-way);
    - a planned event told as done ("will acquire" -> "has acquired", "will be" -> "has been"): not entailed;
    - a comparison turned round ("A is lighter than B" -> "B is lighter than A"): not entailed;
    - a cause added that the premise does not state (", because <another sentence of the premise>"): not entailed;
    - two subjects of one premise, one allowed and one denied ("X can be returned. Y cannot be returned."): each
      subject with the other's polarity is contradicted, each sentence copied is entailed (a window that holds both
      polarities must not lend one subject the other's);
    - and, for one in three, the source sentence unchanged (entailed), so that a near copy is no cue either way.
    """
    rng = random.Random(seed)
    entailed = [p for p in pairs if p.label == 0 and 4 <= len(p.hypothesis.split()) <= 60
                and not p.hypothesis.startswith("Q: ")]
    if not entailed:
        return []
    subjects = sorted({sp[0] for p in rng.sample(entailed, min(len(entailed), 8000))
                       for x in split_sentences(p.premise) if (sp := _subject_predicate(x.of(p.premise))) is not None})
    out: list[Pair] = []
    changed = attempts = 0
    while len(out) < n and attempts < n * 20:
        attempts += 1
        src = rng.choice(entailed)
        sentences = [s.of(src.premise) for s in split_sentences(src.premise)]
        sentences = [s for s in sentences if 5 <= len(s.split()) <= 40]
        hyp = src.hypothesis if rng.random() < 0.5 or not sentences else rng.choice(sentences)
        tag = f"{src.dataset}:{src.id}:{len(out)}"
        if len(out) - changed < changed / 2:  # one unchanged for every two shifted
            out.append(Pair(src.premise, hyp, 0, True, "shift_keep", tag))
            continue
        kind = rng.choice(["shift", "shift", "shift", "cause", "polar"])
        if kind == "shift":
            shifted = _shift(hyp, rng)
            if shifted is None or shifted[1] == hyp or shifted[1].lower() in src.premise.lower():
                continue
            out.append(Pair(src.premise, shifted[1], 1, True, f"shift_{shifted[0]}", tag))
        elif kind == "cause":
            # a reason from the premise that is about something else than the claim (the sentence that supports the
            # claim would make a cause the premise arguably gives)
            others = [s for s in sentences if len(s.split()) <= 20 and s[0].isupper() and not _content(s) & _content(hyp)
                      and s.endswith(".")]
            if not others or not hyp.endswith(".") or len(hyp.split()) > 25:
                continue
            reason = _lower_first(rng.choice(others)).rstrip(".!?")
            out.append(Pair(src.premise, f"{hyp[:-1]} {rng.choice(_CAUSAL)} {reason}.", 1, True, "shift_cause", tag))
        else:
            parts = [(s, sp) for s in sentences if (sp := _subject_predicate(s)) is not None and negate(s)]
            if not parts or not subjects:
                continue
            sentence, (subject, predicate) = rng.choice(parts)
            other = rng.choice(subjects)
            if _content(other) & _content(subject):
                continue
            denied = negate(f"{other} {predicate}")
            if denied is None:
                continue
            window = [sentence, denied]
            rng.shuffle(window)
            premise = " ".join(window)
            hyp_kind = rng.choice(["other", "flip", "copy", "copy_denied"])
            if hyp_kind == "other":
                pair = (f"{other} {predicate}", 2)
            elif hyp_kind == "flip":
                pair = (negate(sentence) or "", 2)
            elif hyp_kind == "copy":
                pair = (sentence, 0)
            else:
                pair = (denied, 0)
            if not pair[0]:
                continue
            out.append(Pair(premise, pair[0], pair[1], False, f"shift_polar_{hyp_kind}", tag))
        changed += 1
    return out
