"""`guardrail eval` through the real command (a `python -m guardrail` subprocess, or main() in-process) against the
scripted OpenAI-compatible judge of tests/judge_server.py on 127.0.0.1, and against a closed port: exit codes with a
closing line when rows error, resuming only the errored metrics, a metric added to an existing --out computed only for
it, and a killed run that loses nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import judge_server
import llm_server
import pytest

from guardrail.cli import main

ROOT = Path(__file__).resolve().parents[1]
CTX = ["Items can be returned within 30 days of delivery. Refunds go to the original payment method.",
       "Gift cards cannot be returned."]
ROWS = [
    {"id": "a", "question": "How do returns work?", "contexts": CTX,
     "response": "Items can be returned within 30 days. Gift cards cannot be returned."},
    {"id": "b", "question": "Where do refunds go? (flaky)", "contexts": CTX,
     "response": "Refunds go to the original payment method."},
    {"id": "c", "question": "Can I return a gift card?", "contexts": CTX,
     "response": "Gift cards cannot be returned. Shipping to Mars is free."},
]
#: the words that tell each metric's prompts apart in the judge server's log
PROMPT_OF = {"faithfulness_claims": ("atomic claims", "directly inferred"), "context_adherence": ("fully supported",),
             "completeness": ("how completely",), "retrieval_relevance_llm": ("sufficient to answer",)}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with llm_server.serve(judge_server.app) as base:
        yield base + "/v1"


@pytest.fixture(autouse=True)
def _fresh_judge() -> Iterator[None]:
    judge_server.reset()
    yield
    judge_server.reset()


def calls_for(metric: str) -> int:
    return sum(1 for c in judge_server.CALLS if any(w in c["messages"][0]["content"] for w in PROMPT_OF[metric]))


def write_data(path: Path, rows: list[dict[str, Any]] = ROWS) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def read_out(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def eval_args(data: Path, out: Path, base_url: str, metrics: str, *extra: str) -> list[str]:
    return ["eval", str(data), "--metrics", metrics, "--model", "judge-model", "--base-url", base_url, "--api-key", "k",
            "--out", str(out), "--cache", "", "--workers", "2", "--max-retries", "0", "--timeout", "10", *extra]


def guardrail(args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "guardrail", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=180, env={**os.environ, "OMP_NUM_THREADS": "1"}, **kwargs)


def closed_port() -> int:
    return llm_server.free_port()  # bound then released: nothing listens there


def test_an_unreachable_judge_exits_1_with_a_closing_line_and_the_rerun_fills_every_row(url: str,
                                                                                      tmp_path: Path) -> None:
    data, out = write_data(tmp_path / "data.jsonl"), tmp_path / "out.jsonl"
    dead = f"http://127.0.0.1:{closed_port()}/v1"
    metrics = "faithfulness_claims,context_adherence"
    for extra in ([], ["--fail-under", "faithfulness_claims=0.5"]):
        done = guardrail(eval_args(data, out, dead, metrics, *extra))
        assert done.returncode == 1, done.stdout + done.stderr
        last = done.stdout.strip().splitlines()[-1]
        assert last.startswith("rows: 3, evaluated: 0, errored: 3 (faithfulness_claims 3, context_adherence 3); "
                               "first error: row 'a', faithfulness_claims: the judge endpoint http://127.0.0.1:")
        assert "is unreachable" in last and "run the same command again" in last
        assert "Traceback" not in done.stderr
        rows = read_out(out)
        assert [r["id"] for r in rows] == ["a", "b", "c"]
        assert all(r[m]["score"] is None and "unreachable" in r[m]["error"] for r in rows for m in metrics.split(","))
    assert "FAILED: faithfulness_claims has no scored rows" in done.stdout
    # the judge is back: the errored rows are not "done", they are judged again, and the file has each row once
    done = guardrail(eval_args(data, out, url, metrics, "--fail-under", "faithfulness_claims=0.5"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1] == "rows: 3, evaluated: 3, errored: 0"
    assert "resuming" in done.stderr and "0 of 3 rows complete, 3 to judge (6 metric(s)" in done.stderr
    rows = read_out(out)
    assert [r["id"] for r in rows] == ["a", "b", "c"]
    assert all("error" not in r[m] and r[m]["score"] is not None for r in rows for m in metrics.split(","))
    assert calls_for("faithfulness_claims") == 3 * 2 and calls_for("context_adherence") == 3


def test_a_scored_gate_passes_and_fails_as_before(url: str, tmp_path: Path) -> None:
    data, out = write_data(tmp_path / "data.jsonl"), tmp_path / "out.jsonl"
    done = guardrail(eval_args(data, out, url, "faithfulness_claims", "--fail-under", "faithfulness_claims=0.95"))
    assert done.returncode == 1 and "FAILED: faithfulness_claims mean 0.833 < 0.950" in done.stdout  # c: 1 of 2
    assert done.stdout.strip().splitlines()[-1] == "rows: 3, evaluated: 3, errored: 0"
    judge_server.CALLS.clear()
    done = guardrail(eval_args(data, out, url, "faithfulness_claims", "--fail-under", "faithfulness_claims=0.8"))
    assert done.returncode == 0 and not judge_server.CALLS  # every row complete: nothing judged again
    assert guardrail(eval_args(data, out, url, "faithfulness_claims", "--fail-under", "nope=1")).returncode == 2


def test_a_rerun_judges_only_the_errored_metrics_of_the_errored_rows(url: str, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    data, out = write_data(tmp_path / "data.jsonl"), tmp_path / "out.jsonl"
    # row b gets unusable answers for context_adherence (also on the repair turn); everything else is fine
    judge_server.OVERRIDE["fully supported"] = lambda p, i: (
        "not JSON at all" if "flaky" in p else {"reasoning": "scripted", "supported": "Mars" not in p})
    args = eval_args(data, out, url, "faithfulness_claims,context_adherence")
    assert main(args) == 1
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("rows: 3, evaluated: 2, errored: 1 (context_adherence 1); first error: row 'b', "
                           "context_adherence: the judge 'judge-model' gave no usable JSON after a repair turn")
    first = read_out(out)
    assert [r["id"] for r in first] == ["a", "b", "c"] and "error" in first[1]["context_adherence"]
    judge_server.OVERRIDE.clear()
    judge_server.CALLS.clear()
    assert main(args) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == "rows: 3, evaluated: 3, errored: 0"
    # one ChainPoll request (5 polls in one) for row b's context_adherence; nothing else was asked
    assert len(judge_server.CALLS) == 1 and "flaky" in judge_server.CALLS[0]["messages"][0]["content"]
    second = read_out(out)
    assert [r["id"] for r in second] == ["a", "b", "c"]
    assert second[0] == first[0] and second[2] == first[2]
    assert second[1]["faithfulness_claims"] == first[1]["faithfulness_claims"]
    assert second[1]["context_adherence"]["score"] == 1.0 and "error" not in second[1]["context_adherence"]
    # complete: a third run asks nothing and leaves the file as it is
    before = out.read_bytes()
    judge_server.CALLS.clear()
    assert main(args) == 0 and not judge_server.CALLS and out.read_bytes() == before


def test_a_metric_added_to_an_existing_out_is_computed_only_for_it(url: str, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    data, out = write_data(tmp_path / "data.jsonl"), tmp_path / "out.jsonl"
    assert main(eval_args(data, out, url, "faithfulness_claims,context_adherence")) == 0
    first = read_out(out)
    judge_server.CALLS.clear()
    assert main(eval_args(data, out, url, "faithfulness_claims,context_adherence,completeness")) == 0
    printed = capsys.readouterr()
    assert calls_for("faithfulness_claims") == 0 and calls_for("context_adherence") == 0
    assert calls_for("completeness") == len(judge_server.CALLS) == 3  # one ChainPoll request a row
    assert "0 of 3 rows complete, 3 to judge (3 metric(s)" in printed.err
    second = read_out(out)
    assert [r["id"] for r in second] == ["a", "b", "c"]
    for old, new in zip(first, second):
        assert new["faithfulness_claims"] == old["faithfulness_claims"]
        assert new["context_adherence"] == old["context_adherence"]
        assert new["completeness"]["score"] == 0.5
    # the summary covers every row, the metrics kept from the first run included
    means = {line.split()[0]: line.split()[1] for line in printed.out.splitlines() if line.split()}
    assert means["faithfulness_claims"] == "0.833" and means["completeness"] == "0.500"
    assert printed.out.strip().splitlines()[-1] == "rows: 3, evaluated: 3, errored: 0"
    # a run on part of the input (--limit) adds its metric to those rows and keeps the other rows' lines
    judge_server.CALLS.clear()
    assert main(eval_args(data, out, url, "retrieval_relevance_llm", "--limit", "2")) == 0
    assert calls_for("retrieval_relevance_llm") == len(judge_server.CALLS) == 2
    third = read_out(out)
    assert [r["id"] for r in third] == ["a", "b", "c"]
    assert [("retrieval_relevance_llm" in r) for r in third] == [True, True, False]
    assert third[2] == second[2]


def test_a_killed_run_loses_nothing_and_the_next_one_finishes_it(url: str, tmp_path: Path) -> None:
    rows = [dict(ROWS[i % 3], id=f"r{i}") for i in range(6)]
    data, out = write_data(tmp_path / "data.jsonl", rows), tmp_path / "out.jsonl"
    assert main(eval_args(data, out, url, "faithfulness_claims")) == 0
    original = out.read_text(encoding="utf-8")
    # add a metric with a slow judge, one row at a time, and SIGKILL the run once it has appended a row
    judge_server.SETTINGS["delay_s"] = 0.4
    args = eval_args(data, out, url, "faithfulness_claims,context_adherence")
    args[args.index("--workers") + 1] = "1"
    proc = subprocess.Popen([sys.executable, "-m", "guardrail", *args], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "OMP_NUM_THREADS": "1"})
    deadline = time.time() + 120
    while (proc.poll() is None and time.time() < deadline
           and len(out.read_text(encoding="utf-8").splitlines()) <= len(rows)):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed = out.read_text(encoding="utf-8")
    assert killed.startswith(original)  # the old lines are untouched
    appended = [json.loads(line) for line in killed[len(original):].splitlines() if line.endswith("}")]
    assert 1 <= len(appended) < len(rows) and all("context_adherence" in r for r in appended)
    # the next run judges context_adherence only for the rows the killed one did not finish
    judge_server.SETTINGS["delay_s"] = 0.0
    judge_server.CALLS.clear()
    assert main(args) == 0
    assert calls_for("faithfulness_claims") == 0 and calls_for("context_adherence") == len(rows) - len(appended)
    final = read_out(out)
    assert [r["id"] for r in final] == [r["id"] for r in rows]
    before = [json.loads(line) for line in original.splitlines()]
    assert [r["faithfulness_claims"] for r in final] == [r["faithfulness_claims"] for r in before]
    assert all(r["context_adherence"]["score"] is not None for r in final)
    assert not list(tmp_path.glob(".out.jsonl.*.tmp"))  # no temporary file left behind


def test_duplicate_ids_are_refused_before_any_judging(url: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    data = write_data(tmp_path / "data.jsonl", [ROWS[0], ROWS[1], dict(ROWS[2], id="a")])
    assert main(eval_args(data, tmp_path / "out.jsonl", url, "faithfulness_claims")) == 2
    assert "row 3: id 'a' repeats row 1" in capsys.readouterr().err and not judge_server.CALLS
