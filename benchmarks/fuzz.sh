#!/usr/bin/env bash
# The middleware's property-based fuzz tests at 100,000 examples each (CI runs 2,000): every JSON body and every
# event stream (random chunking) is read and checked, or blocked saying why; nothing unread goes out.
#   bash benchmarks/fuzz.sh            (scale 50 = 100,000 examples per test; GUARDRAIL_FUZZ_SCALE to change)
set -euo pipefail
cd "$(dirname "$0")/.."
GUARDRAIL_FUZZ_SCALE=${GUARDRAIL_FUZZ_SCALE:-50} python -m pytest -q -p no:cacheprovider tests/test_wire_properties.py \
  -k "middleware_json_bodies_are_checked_or_blocked or middleware_streams_are_checked_or_stopped" --durations=0
