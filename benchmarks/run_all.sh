#!/usr/bin/env bash
# Reproduce every figure of the README and the model card; outputs land in benchmarks/results/.
# Usage: benchmarks/run_all.sh [MODEL_DIR] [FP32_EXPORT_DIR]   (defaults: the shipped model; no fp32 comparison)
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-guardrail/models/nli-minilm-l6}
fp32=${2:-}
bench=../shared/data/bench
out=benchmarks/results
mkdir -p "$out"
q() { python benchmarks/quality.py "$@" --nli-model "$model"; }

q $bench/halueval_qa_dev.jsonl.gz --subset length_matched             | tee "$out/halueval_length_matched.txt"
q $bench/halueval_qa_dev.jsonl.gz                                     | tee "$out/halueval_full.txt"
q $bench/begin_dev.jsonl.gz                                           | tee "$out/begin_dev.txt"
for mode in exhaustive; do
  q $bench/halueval_qa_dev.jsonl.gz --subset length_matched --mode $mode | tee "$out/halueval_length_matched_$mode.txt"
  q $bench/begin_dev.jsonl.gz --mode $mode                                | tee "$out/begin_dev_$mode.txt"
done
for qc in never always; do
  q $bench/halueval_qa_dev.jsonl.gz --subset length_matched --question-context $qc --no-calibration | tee "$out/halueval_length_matched_qc_$qc.txt"
done
q $bench/halueval_qa_dev.jsonl.gz --subset length_matched --no-calibration | tee "$out/halueval_length_matched_qc_auto_nli_only.txt"
if [ -n "$fp32" ]; then
  python benchmarks/quality.py $bench/halueval_qa_dev.jsonl.gz --subset length_matched --nli-model "$fp32" --onnx-file model.onnx | tee "$out/halueval_length_matched_fp32.txt"
  python benchmarks/quality.py $bench/begin_dev.jsonl.gz --nli-model "$fp32" --onnx-file model.onnx | tee "$out/begin_dev_fp32.txt"
  python benchmarks/nli_heldout.py --config configs/nli-minilm-l6.json --model "$fp32" | tee "$out/nli_heldout.txt"
fi
python benchmarks/retrieval.py | tee "$out/retrieval_trecdl19.txt"
python benchmarks/splitters.py | tee "$out/splitters.txt"
python benchmarks/latency.py --nli-model "$model" | tee "$out/latency.txt"
# speed under load, cold start, streaming and context length (issue 10); the shipped model, a quiet machine
python benchmarks/python_api.py -n 40 --cold 9 | tee "$out/python_api.txt"
(cd benchmarks && python load.py --requests 48 --concurrency 1 4 16) | tee "$out/load.txt"
{ python benchmarks/stream_ttft.py -n 20
  python benchmarks/stream_ttft.py -n 12 --chunk-delay 0.02 --new-chunks
  python benchmarks/stream_ttft.py -n 20 --action flag --gap 0.3; } | tee "$out/stream_ttft.txt"
python benchmarks/context_scaling.py --rounds 3 | tee "$out/context_scaling.txt"
