"""Training data for the NLI cross-encoder: the shared pool, a held-out split, a sampled mix.

Every pair carries its `task`, which decides how it is supervised: 3-way tasks train all three
classes; 2-way tasks (entailment / not_entailment) only constrain the entailment probability,
so a "not entailment" row never pretends to know whether it is neutral or a contradiction.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from guardrail.text import QA_FORMAT

LABELS: tuple[str, str, str] = ("entailment", "neutral", "contradiction")

#: tasks supervised on the three classes
THREE_WAY_TASKS = frozenset({"nli3", "fact3"})
#: tasks supervised on entailment vs not (the label "not_entailment", or any non-entailment label)
TWO_WAY_TASKS = frozenset({"nli2", "fact2", "qa2", "para2", "mcqa2"})



@dataclass(frozen=True, slots=True)
class Pair:
    premise: str
    hypothesis: str
    #: index into LABELS for 3-way rows; for 2-way rows 0 = entailment, 1 = not entailment
    label: int
    two_way: bool
    dataset: str
    id: str


def is_held_out(dataset: str, row_id: str, percent: float) -> bool:
    """Deterministic held-out membership by (dataset, id): stable across runs, machines and mixes."""
    digest = hashlib.sha1(f"{dataset}\x00{row_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % 10_000 < percent * 100


def read_rows(path: Path) -> Iterator[dict[str, object]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def to_pairs(row: Mapping[str, object], *, boolq_statements: bool = False) -> list[Pair]:
    """The training pairs of one pool row. ``boolq_statements``: a yes/no question also yields the statements its
    two answers make ("Can X be returned?" -> "X can be returned." / "X cannot be returned."), as the check reads
    short answers (:mod:`guardrail.checks.claims`)."""
    task = str(row["task"])
    label = str(row["label"])
    premise, hypothesis = str(row["premise"]).strip(), str(row["hypothesis"]).strip()
    dataset, row_id = str(row["dataset"]), str(row["id"])
    if not premise or not hypothesis:
        return []
    if task in THREE_WAY_TASKS and label in LABELS:
        return [Pair(premise, hypothesis, LABELS.index(label), False, dataset, row_id)]
    if task in TWO_WAY_TASKS:
        return [Pair(premise, hypothesis, 0 if label == "entailment" else 1, True, dataset, row_id)]
    if task == "boolq" and label in ("entailment", "contradiction"):
        # a yes/no question becomes two short answers: the right one is entailed, the wrong one contradicted
        question = hypothesis.rstrip("?") + "?"
        question = question[0].upper() + question[1:]
        yes_right = label == "entailment"
        pairs = [
            Pair(premise, QA_FORMAT.format(question=question, answer="yes"), 0 if yes_right else 2, False, dataset, row_id),
            Pair(premise, QA_FORMAT.format(question=question, answer="no"), 2 if yes_right else 0, False, dataset, row_id),
        ]
        if boolq_statements:
            from guardrail.checks.claims import yes_no_statement

            for yes in (True, False):
                statement = yes_no_statement(question, yes)
                if statement:
                    pairs.append(Pair(premise, statement, 0 if yes == yes_right else 2, False, dataset, row_id))
        return pairs
    return []


@dataclass(frozen=True, slots=True)
class Mix:
    train: list[Pair]
    held_out: list[Pair]


def build_mix(
    data_dir: Path,
    datasets: Mapping[str, int],
    *,
    held_out_percent: float,
    held_out_max_per_dataset: int,
    seed: int,
    boolq_statements: bool = False,
) -> Mix:
    """Sample at most ``datasets[name]`` training pairs from each ``data_dir/name.jsonl.gz``.

    Rows whose (dataset, id) hash falls in the held-out share are never trained on; up to
    ``held_out_max_per_dataset`` of them per dataset form the model-selection split.
    """
    rng = random.Random(seed)
    train: list[Pair] = []
    held: list[Pair] = []
    for name, limit in sorted(datasets.items()):
        path = data_dir / f"{name}.jsonl.gz"
        if not path.exists():
            raise FileNotFoundError(f"training dataset {name!r} not found at {path}; check `data_dir` in the config")
        tr: list[Pair] = []
        ho: list[Pair] = []
        for row in read_rows(path):
            # rows of one case (VitaminC's claim against two revisions) stay on one side of the split
            key = str(row["group"]) if row.get("group") else None
            for pair in to_pairs(row, boolq_statements=boolq_statements):
                out = is_held_out(pair.dataset, key if key is not None else pair.id, held_out_percent)
                (ho if out else tr).append(pair)
        rng.shuffle(tr)
        rng.shuffle(ho)
        train.extend(tr[:limit])
        held.extend(ho[:held_out_max_per_dataset])
    rng.shuffle(train)
    return Mix(train, held)
