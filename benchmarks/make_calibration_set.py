"""Write the trainer's held-out NLI claim pairs as rows in the common benchmark format, for calibration.

Only claim-like tasks (nli3, nli2, fact2, fact3): a question-shaped hypothesis (qa2) or a "Q: .. A: .."
pair is not a response. label 1 = not entailed. These pairs were never trained on (hash split by
dataset and id, see guardrail.training.data.is_held_out).

    python benchmarks/make_calibration_set.py --config configs/nli-minilm-l6.json --out runs/calibration_nli_heldout.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from guardrail.training.data import build_mix, read_rows

CLAIM_TASKS = {"nli3", "nli2", "fact2", "fact3"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", type=Path, default=Path("configs/nli-minilm-l6.json"))
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    cfg = json.loads(args.config.read_text())
    mix = build_mix(Path(cfg["data_dir"]), cfg["datasets"], held_out_percent=cfg["held_out_percent"],
                    held_out_max_per_dataset=cfg["held_out_max_per_dataset"], seed=cfg["seed"])
    tasks = {}
    for name in {p.dataset for p in mix.held_out}:
        for row in read_rows(Path(cfg["data_dir"]) / f"{name}.jsonl.gz"):
            tasks[(name, str(row["id"]))] = str(row["task"])
    rows = [
        {"id": f"{p.dataset}:{p.id}", "question": "", "contexts": [p.premise], "response": p.hypothesis,
         "label": 0 if p.label == 0 else 1}
        for p in mix.held_out if tasks.get((p.dataset, p.id)) in CLAIM_TASKS
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    print(f"wrote {len(rows)} rows ({sum(r['label'] for r in rows)} not entailed) to {args.out}")


if __name__ == "__main__":
    main()
