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
