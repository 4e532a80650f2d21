#!/usr/bin/env bash
# Build the shipped default NLI model from a training run:
#   1. export the best checkpoint to ONNX (fp32) and int8,
#   2. fit the calibrated score + threshold on held-out data (never the evaluation rows):
#      the trainer's held-out NLI claim pairs and an equal number of HaluEval rows outside `length_matched`,
#   3. copy the int8 model, tokenizer, config and guardrail.json into guardrail/models/nli-minilm-l6.
# Usage: scripts/ship_default_model.sh RUN_DIR [EXPORT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
run=${1:?usage: scripts/ship_default_model.sh RUN_DIR [EXPORT_DIR]}
export_dir=${2:-$run/onnx}
dest=guardrail/models/nli-minilm-l6
config=configs/nli-minilm-l6.json

guardrail export "$run/best" --out "$export_dir" --int8
python benchmarks/make_calibration_set.py --config "$config" --out "$run/calibration_nli_heldout.jsonl"
n=$(wc -l < "$run/calibration_nli_heldout.jsonl")
guardrail calibrate "$export_dir" --bench "$run/calibration_nli_heldout.jsonl" ../shared/data/bench/halueval_qa_dev.jsonl.gz \
  --exclude length_matched --limit-per-file "$n"
mkdir -p "$dest"  # MODEL_CARD.md in $dest is kept
cp "$export_dir"/{model.int8.onnx,config.json,tokenizer.json,tokenizer_config.json,guardrail.json} "$dest"/
[ -f "$export_dir/special_tokens_map.json" ] && cp "$export_dir/special_tokens_map.json" "$dest"/
du -sh "$dest"
