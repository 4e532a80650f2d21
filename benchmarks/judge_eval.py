"""`guardrail eval` on the whole HaluEval QA dev set (7,774 rows) against a local scripted OpenAI-compatible judge,
killed mid-run (SIGKILL) and resumed (issue 11).

Prints rows judged before the kill, the rows the resumed run judged (it must judge only the missing ones: judge
calls / calls per row), that every row is in the results exactly once, throughput, and the summary table.

    python benchmarks/judge_eval.py [--kill-after 1500] [--workers 16]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))

import judge_server  # noqa: E402  (the tests' scripted judge)
from middleware_overhead import served  # noqa: E402

BENCH = HERE.parents[1] / "shared" / "data" / "bench" / "halueval_qa_dev.jsonl.gz"
METRICS = "faithfulness_claims,context_adherence"
CALLS_PER_ROW = 3  # claims, verify, one ChainPoll request of n polls


def lines_of(path: Path) -> list[str]:
    if not path.exists():
        return []
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("{") and line.endswith("}")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kill-after", type=int, default=1500, help="rows written before the first run is killed")
    ap.add_argument("--workers", type=int, default=16)
    args = ap.parse_args()
    with gzip.open(BENCH, "rt", encoding="utf-8") as fh:
        total = sum(1 for line in fh if line.strip())
    work = Path(tempfile.mkdtemp(prefix="guardrail-eval-"))
    out = work / "results.jsonl"
    with served(judge_server.app) as url:
        cmd = [sys.executable, "-m", "guardrail.cli", "eval", str(BENCH), "--metrics", METRICS, "--model", "judge",
               "--base-url", url + "/v1", "--api-key", "k", "--out", str(out), "--cache", "", "--workers",
               str(args.workers)]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        while proc.poll() is None and len(lines_of(out)) < args.kill_after:
            time.sleep(0.2)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        first_s = time.perf_counter() - t0
        before = len(lines_of(out))
        print(f"run 1: killed (SIGKILL) after {first_s:.1f} s with {before} of {total} rows written "
              f"({before / first_s:.0f} rows/s, {len(judge_server.CALLS)} judge calls)")
        judge_server.CALLS.clear()
        t1 = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, env=env)
        second_s = time.perf_counter() - t1
        calls = len(judge_server.CALLS)
    rows = [json.loads(line) for line in lines_of(out)]
    ids = [r["id"] for r in rows]
    judged_again = calls / CALLS_PER_ROW
    print(f"run 2 (resumed): exit {done.returncode} in {second_s:.1f} s; {calls} judge calls = {judged_again:.0f} rows "
          f"judged, {total - before} were missing ({(total - before) / second_s:.0f} rows/s)")
    print(f"results: {len(rows)} rows, {len(set(ids))} distinct ids of {total}; "
          f"every row exactly once: {len(rows) == len(set(ids)) == total}")
    print(done.stdout[-2500:])
    assert done.returncode == 0 and len(set(ids)) == total


if __name__ == "__main__":
    main()
