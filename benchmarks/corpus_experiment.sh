#!/usr/bin/env bash
# Does `guardrail train --corpus` help? Fine-tune the trained model on synthetic pairs from HaluEval contexts of the
# rows *outside* `length_matched` (other questions), mixed with a little of the NLI pool against forgetting, and
# compare NLI-only AUROC on the `length_matched` rows (and on BEGIN, whose contexts it never saw).
# Usage: benchmarks/corpus_experiment.sh RUN_DIR   (RUN_DIR/best is the base model)
set -euo pipefail
cd "$(dirname "$0")/.."
run=${1:?usage: benchmarks/corpus_experiment.sh RUN_DIR}
corpus=$run/corpus_halueval_train
mkdir -p "$corpus"
python - "$corpus" <<'PY'
import gzip, json, sys
from pathlib import Path
out = Path(sys.argv[1])
seen = set()
for line in gzip.open("../shared/data/bench/halueval_qa_dev.jsonl.gz", "rt", encoding="utf-8"):
    r = json.loads(line)
    if r.get("length_matched"):
        continue
    ctx = " ".join(r["contexts"])
    if ctx not in seen:
        seen.add(ctx)
        (out / f"doc{len(seen):05d}.txt").write_text(ctx, encoding="utf-8")
print(f"{len(seen)} documents")
PY
cat > "$run/corpus_config.json" <<JSON
{"base_model": "$run/best", "data_dir": "../shared/data/nli",
 "datasets": {"mnli": 1500, "fever_rte": 1500, "nyu_mcqa": 1000, "snli": 1000},
 "held_out_percent": 3.0, "held_out_max_per_dataset": 100, "seed": 13, "max_length": 256, "batch_size": 32,
 "lr": 2e-5, "epochs": 1.0, "eval_every": 100, "patience": 3, "threads": 2, "corpus_pairs": 5000}
JSON
guardrail train --config "$run/corpus_config.json" --out "$run/corpus_ft" --corpus "$corpus"
guardrail export "$run/corpus_ft/best" --out "$run/corpus_ft/onnx" --int8 --drop-fp32
for model in "$run/onnx" "$run/corpus_ft/onnx"; do
  python benchmarks/quality.py ../shared/data/bench/halueval_qa_dev.jsonl.gz --subset length_matched --nli-model "$model" --no-calibration
  python benchmarks/quality.py ../shared/data/bench/begin_dev.jsonl.gz --nli-model "$model" --no-calibration
done
