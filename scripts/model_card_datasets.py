"""Print the model card's training-data table (dataset, task, pairs used, license) from the config and MANIFEST.tsv.

    python scripts/model_card_datasets.py configs/nli-minilm-l6.json
"""

from __future__ import annotations

import csv
import json
import sys
from collections import defaultdict
from pathlib import Path


def main() -> None:
    cfg = json.loads(Path(sys.argv[1]).read_text())
    manifest = Path(cfg["data_dir"]) / "MANIFEST.tsv"
    rows: dict[str, list[dict[str, str]]] = defaultdict(list)
    with open(manifest, encoding="utf-8") as fh:
        for r in csv.DictReader(fh, delimiter="\t"):
            rows[r["dataset"]].append(r)
    print("| dataset | task | rows in pool | max pairs sampled | license |")
    print("|---|---|---|---|---|")
    for name, cap in sorted(cfg["datasets"].items()):
        for r in rows[name]:
            print(f"| {name} | {r['task']} | {r['rows']} | {cap} | {r['license']} |")


if __name__ == "__main__":
    main()
