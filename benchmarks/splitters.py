"""Sentence splitter comparison: ours vs pysbd vs blingfire.

Gold data: real single sentences from ../shared/data (SNLI/MNLI/LingNLI premises and FEVER claims that
are one sentence by construction), shuffled and joined into paragraphs of 3-8 sentences, so every
boundary is known. Plus the hand-made hard cases of tests/test_text.py style (abbreviations, decimals,
numbered lists, quotes, newlines, code). Prints boundary precision/recall/F1, exact-paragraph accuracy
and throughput.

    python benchmarks/splitters.py --data ../shared/data --sentences 400
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from guardrail.text import split_sentences

HARD = [
    ("Dr. Smith paid $3.50. Then he left!", ["Dr. Smith paid $3.50.", "Then he left!"]),
    ("The U.S. economy grew 2.5% in 2023. J. K. Rowling wrote it.", ["The U.S. economy grew 2.5% in 2023.", "J. K. Rowling wrote it."]),
    ("Refunds take 30 days, e.g. for books. Call us.", ["Refunds take 30 days, e.g. for books.", "Call us."]),
    ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
    ("Steps:\n1. Open the box.\n2. Remove the item.", ["Steps:", "1. Open the box.", "2. Remove the item."]),
    ("- first point\n- second point", ["- first point", "- second point"]),
    ("This line is hard\nwrapped in the middle. Next one.", ["This line is hard\nwrapped in the middle.", "Next one."]),
    ("Run:\n```python\nx = 1. \nprint(x)\n```\nThat prints 1.", ["Run:", "```python\nx = 1. \nprint(x)\n```", "That prints 1."]),
    ("in the 19th century.First for Women is a magazine.", ["in the 19th century.", "First for Women is a magazine."]),
    ("Version 3.14 shipped. Pi is 3.14159.", ["Version 3.14 shipped.", "Pi is 3.14159."]),
    ("Prices rose (see Fig. 3). The end... Or not? Yes!", ["Prices rose (see Fig. 3).", "The end...", "Or not?", "Yes!"]),
    ("Mr. and Mrs. Lee arrived at 5 p.m. on Monday. They stayed.", ["Mr. and Mrs. Lee arrived at 5 p.m. on Monday.", "They stayed."]),
]


def load_sentences(data: Path, n: int, seed: int) -> list[str]:
    pool: list[str] = []
    for name, field in (("snli", "premise"), ("mnli", "premise"), ("lingnli", "premise"), ("fever_rte", "hypothesis")):
        with gzip.open(data / "nli" / f"{name}.jsonl.gz", "rt", encoding="utf-8") as fh:
            for i, line in enumerate(fh):
                if i > 20000:
                    break
                s = json.loads(line)[field].strip()
                # one sentence by construction: ends a sentence once, starts with a capital
                if 20 < len(s) < 300 and s[0].isupper() and s[-1] in ".!?" and not re.search(r"[.!?]\s+[A-Z]", s[:-1]):
                    pool.append(s)
    rng = random.Random(seed)
    rng.shuffle(pool)
    return list(dict.fromkeys(pool))[:n]


def paragraphs(sentences: list[str], seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    out, i = [], 0
    while i < len(sentences):
        k = rng.randint(3, 8)
        out.append(sentences[i : i + k])
        i += k
    return out


def boundaries(parts: list[str]) -> set[int]:
    """Character offsets (in the joined text, ignoring whitespace) where a sentence ends."""
    pos, out = 0, set()
    for p in parts[:-1]:
        pos += len(re.sub(r"\s", "", p))
        out.add(pos)
    return out


def splitters() -> dict[str, Callable[[str], list[str]]]:
    out: dict[str, Callable[[str], list[str]]] = {"guardrail": lambda t: [s.of(t) for s in split_sentences(t)]}
    try:
        import pysbd

        seg = pysbd.Segmenter(language="en", clean=False, char_span=False)
        out["pysbd"] = lambda t: [s for s in seg.segment(t) if s.strip()]
    except ImportError:
        pass
    try:
        import blingfire

        out["blingfire"] = lambda t: [s for s in blingfire.text_to_sentences(t).split("\n") if s.strip()]
    except ImportError:
        pass
    return out


def score(split: Callable[[str], list[str]], cases: list[tuple[str, list[str]]]) -> dict[str, float]:
    tp = fp = fn = exact = 0
    for text, gold in cases:
        pred = split(text)
        g, p = boundaries(gold), boundaries(pred)
        tp += len(g & p)
        fp += len(p - g)
        fn += len(g - p)
        exact += [re.sub(r"\s+", " ", s).strip() for s in pred] == [re.sub(r"\s+", " ", s).strip() for s in gold]
    prec = tp / (tp + fp) if tp + fp else 1.0
    rec = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return {"precision": prec, "recall": rec, "f1": f1, "exact": exact / len(cases)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="../shared/data", type=Path)
    ap.add_argument("--sentences", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    sents = load_sentences(args.data, args.sentences, args.seed)
    real = [(" ".join(p), p) for p in paragraphs(sents, args.seed)]
    print(f"real: {len(sents)} sentences in {len(real)} paragraphs; hard cases: {len(HARD)}")
    print(f"{'splitter':<10} {'real F1':>8} {'P':>6} {'R':>6} {'exact':>6} | {'hard F1':>8} {'exact':>6} | {'us/sentence':>11}")
    for name, split in splitters().items():
        r = score(split, real)
        h = score(split, HARD)
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            for text, _gold in real:
                split(text)
            times.append((time.perf_counter() - t0) / len(sents) * 1e6)
        print(
            f"{name:<10} {r['f1']:8.3f} {r['precision']:6.3f} {r['recall']:6.3f} {r['exact']:6.3f} | "
            f"{h['f1']:8.3f} {h['exact']:6.3f} | {statistics.median(times):11.1f}"
        )


if __name__ == "__main__":
    main()
