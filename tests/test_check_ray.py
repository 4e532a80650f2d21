"""``guardrail check --ray`` and ``guardrail.batch.check_dataset`` against the single-process ``guardrail check``: the
same rows, row for row (timings aside), the same summary, JUnit and exit code, on a real Ray on 127.0.0.1.

The 500 rows are the first 500 of HaluEval's QA dev split (MIT licence; see tests/data/README.md), in the format of
``guardrail check``. Deselect with ``-m "not ray"``.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from guardrail.cli import main

ray = pytest.importorskip("ray", reason="the Ray tests need pip install 'rag-guardrail[ray]'")

pytestmark = pytest.mark.ray

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "rag.jsonl"
HALUEVAL = Path(__file__).resolve().parent / "data" / "halueval_qa_dev_500.jsonl.gz"
CPUS = min(2, len(os.sched_getaffinity(0)))


def rows(out: str) -> list[dict[str, Any]]:
    """The JSON Lines of a run, without the timing fields."""
    objs = [json.loads(line) for line in out.splitlines()]
    for obj in objs:
        obj.pop("timings", None)
    return objs


def summary(err: str, out: str = "") -> list[str]:
    """The closing summary (stderr for machine formats), without the seconds."""
    lines = (err + out).splitlines()
    start = max(i for i, line in enumerate(lines) if line.startswith(("PASSED: ", "FAILED: ")))
    end = next(i for i in range(start, len(lines)) if re.match(r"\d+ rows: ", lines[i]))
    return [re.sub(r" in [\d.]+ s$", "", line) for line in lines[start:end + 1]]


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def halueval(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("halueval") / "halueval_qa_dev_500.jsonl"
    path.write_bytes(gzip.decompress(HALUEVAL.read_bytes()))
    return path


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """A Ray on this machine, for the tests of this module (``--ray`` then uses it as it is)."""
    assert not ray.is_initialized()
    ray.init(address="local", num_cpus=CPUS, include_dashboard=False, _node_ip_address="127.0.0.1",
             log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def test_the_address_is_checked_so_a_file_after_ray_gets_a_clear_message(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["check", "--ray", str(EXAMPLES)])
    assert exc.value.code == 2
    assert "is not a Ray address" in capsys.readouterr().err


def test_the_cli_starts_its_own_local_ray_and_matches_the_single_process(capsys: pytest.CaptureFixture[str]) -> None:
    """``--ray`` without an address, in a process of its own: a local Ray started and stopped by the command."""
    single = run(["check", str(EXAMPLES), "--json"], capsys)
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    proc = subprocess.run([sys.executable, "-m", "guardrail", "check", str(EXAMPLES), "--json", "--ray",
                           "--ray-actors", "1"], capture_output=True, text=True, timeout=170, env=env, cwd=ROOT)
    assert proc.returncode == single[0] == 1, proc.stderr[-3000:]  # refund-wrong fails
    assert rows(proc.stdout) == rows(single[1])
    assert [r["id"] for r in rows(proc.stdout)] == [json.loads(line)["id"] for line in EXAMPLES.open()]
    assert summary(proc.stderr) == summary(single[2])


def test_examples_junit_and_summary_match_with_an_unchecked_row(local_ray: None, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """examples/ and a row the model cannot judge (a script it was not trained on): the same JUnit (the unchecked
    row a test in error), the same summary. (The JSON Lines of examples/ are compared in the test above.)"""
    unchecked = {"id": "zh", "question": "q", "contexts": ["Items can be returned within 30 days."],
                 "response": "您可以在三十天内退货。"}
    data = tmp_path / "rows.jsonl"
    data.write_text(EXAMPLES.read_text() + json.dumps(unchecked, ensure_ascii=False) + "\n", encoding="utf-8")
    single = run(["check", str(data), "--format", "junit"], capsys)
    on_ray = run(["check", str(data), "--format", "junit", "--ray", "--ray-actors", str(CPUS)], capsys)
    assert on_ray[0] == single[0] == 1
    untimed = [re.sub(r' time="[\d.]+"', "", o) for o in (on_ray[1], single[1])]
    assert untimed[0] == untimed[1] and untimed[0].count("<testcase ") == 6 and 'errors="1"' in untimed[0]
    assert summary(on_ray[2]) == summary(single[2])
    assert "(id 'zh')" in on_ray[2]  # reported on stderr as it comes, as without Ray


def test_500_halueval_rows_match_row_for_row(local_ray: None, halueval: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    single = run(["check", str(halueval), "--json"], capsys)
    on_ray = run(["check", str(halueval), "--json", "--ray", "--ray-actors", str(CPUS)], capsys)
    expected, got = rows(single[1]), rows(on_ray[1])
    assert len(got) == len(expected) == 500
    for mine, theirs in zip(got, expected):  # row for row, so a difference names its row
        assert mine == theirs, mine["id"]
    assert on_ray[0] == single[0]
    assert summary(on_ray[2]) == summary(single[2])
    outcomes = {r["outcome"] for r in got}
    assert outcomes == {"passed", "failed"}  # both kinds of rows are compared


def test_an_error_in_the_actors_is_reported_as_without_ray(local_ray: None, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "no-model")
    single = run(["check", str(EXAMPLES), "--json", "--nli-model", missing], capsys)
    on_ray = run(["check", str(EXAMPLES), "--json", "--nli-model", missing, "--ray", "--ray-actors", "1"], capsys)
    assert on_ray[0] == single[0] == 2
    message = f"guardrail: error: model directory '{missing}' does not exist"
    assert message in single[2] and message in on_ray[2]


def test_check_dataset_gives_the_cli_rows(local_ray: None, capsys: pytest.CaptureFixture[str]) -> None:
    from guardrail.batch import RESULT_COLUMNS, check_dataset
    from guardrail.policy import Policy

    _, out, _ = run(["check", str(EXAMPLES), "--json"], capsys)
    expected = {r["id"]: r for r in rows(out)}
    records = [json.loads(line) for line in EXAMPLES.open()]
    ds = ray.data.from_items([{**r, "label": i} for i, r in enumerate(records)])
    result = check_dataset(ds, policy=Policy(), actors=1).take_all()
    assert sorted(r["id"] for r in result) == sorted(expected)
    for row in result:
        assert set(RESULT_COLUMNS) <= set(row) and row["label"] == [r["id"] for r in records].index(row["id"])
        as_cli = json.loads(row["result"])
        as_cli.pop("timings")
        assert as_cli == expected[row["id"]]
        assert row["outcome"] == as_cli["outcome"] and list(row["reasons"]) == as_cli["reasons"]
        assert row["faithfulness"] == pytest.approx(as_cli["faithfulness"])
