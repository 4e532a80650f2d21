from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from guardrail.cli import main

GOOD = {"id": "a1", "question": "Where is the tower?", "contexts": ["The Eiffel Tower is in Paris."], "response": "It is in Paris."}


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def test_jsonl_to_json_keeps_ids_and_names_scores(tiny_nli: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [GOOD, {**GOOD, "id": 7, "response": ""}, {**GOOD, "id": "none", "contexts": []}]
    f = write(tmp_path, "in.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n")
    code, out, err = run_cli(["check", str(f), "--json", "--nli-model", str(tiny_nli)], capsys)
    assert code == 0, err
    objs = [json.loads(line) for line in out.splitlines()]
    assert [o["id"] for o in objs] == ["a1", 7, "none"]
    assert 0.0 <= objs[0]["faithfulness"] <= 1.0
    assert 0.0 <= objs[0]["retrieval_relevance"] <= 1.0
    assert objs[1]["faithfulness"] is None  # empty response: nothing to check
    assert objs[2]["faithfulness"] == 0.0 and objs[2]["retrieval_relevance"] is None


def test_table_output(tiny_nli: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = write(tmp_path, "in.json", json.dumps([GOOD, {**GOOD, "id": "b2"}]))
    code, out, _ = run_cli(["check", str(f), "--nli-model", str(tiny_nli)], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["id", "faithful", "retrieval", "response"]
    assert any(line.startswith("a1 ") for line in lines) and any(line.startswith("b2 ") for line in lines)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (json.dumps(GOOD) + "\n{not json\n", "line 2: invalid JSON"),
        (json.dumps(GOOD) + "\n" + json.dumps({"question": "q", "response": "r"}) + "\n", "line 2: 'contexts' is missing"),
        (json.dumps({**GOOD, "contexts": "one string"}), "got one string"),
        (json.dumps({**GOOD, "response": 3}), "'response' must be a string"),
        ("[1, 2]", "item 1: expected a JSON object"),
        ("", "no input"),
    ],
)
def test_malformed_input_names_the_line(
    content: str, message: str, tiny_nli: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = write(tmp_path, "bad.jsonl", content)
    code, out, err = run_cli(["check", str(f), "--nli-model", str(tiny_nli)], capsys)
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err


def test_non_utf8_bytes(tiny_nli: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = write(tmp_path, "latin1.jsonl", json.dumps(GOOD).encode() + b"\n" + '{"response": "caf\xe9"}'.encode("latin-1"))
    code, _, err = run_cli(["check", str(f), "--nli-model", str(tiny_nli)], capsys)
    assert code == 2 and "line 2 is not valid UTF-8" in err


def test_five_megabyte_context_gets_a_limit_message(tiny_nli: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = write(tmp_path, "big.json", json.dumps({**GOOD, "contexts": ["word " * 1_000_000]}))
    code, _, err = run_cli(["check", str(f), "--nli-model", str(tiny_nli)], capsys)
    assert code == 2 and "over the limit of 1,000,000" in err and "--max-context-chars" in err


def test_missing_file_and_missing_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["check", str(tmp_path / "nope.jsonl")], capsys)
    assert code == 2 and "no such file" in err
    f = write(tmp_path, "in.json", json.dumps(GOOD))
    code, _, err = run_cli(["check", str(f), "--nli-model", str(tmp_path / "no-model")], capsys)
    assert code == 2 and "does not exist" in err


def test_stdin_through_the_installed_command(tiny_nli: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "guardrail.cli", "check", "-", "--json", "--nli-model", str(tiny_nli)],
        input=json.dumps(GOOD).encode(),
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert json.loads(proc.stdout)["id"] == "a1"


EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "rag.jsonl"


def test_fail_under_gates_ci_in_every_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The shipped model on the examples: a wrong answer fails the gate (exit 1), the right ones pass (exit 0)."""
    import xml.etree.ElementTree as ET

    rows = [json.loads(line) for line in EXAMPLES.read_text().splitlines() if line.strip()]
    good = write(tmp_path, "good.jsonl", json.dumps(next(r for r in rows if r["id"] == "refund-ok")) + "\n")
    code, out, _ = run_cli(["check", str(EXAMPLES), "--fail-under", "faithfulness=0.3"], capsys)
    assert code == 1 and "FAILED" in out and "refund-wrong" in out
    code, out, _ = run_cli(["check", str(good), "--fail-under", "faithfulness=0.3"], capsys)
    assert code == 0 and "PASSED: 0 of 1 rows" in out
    code, out, err = run_cli(["check", str(EXAMPLES), "--fail-under", "faithfulness=0.3", "--format", "junit"], capsys)
    suite = ET.fromstring(out).find("testsuite")
    assert code == 1 and suite is not None and int(suite.get("failures", "0")) >= 1
    failing = [tc.get("name") for tc in suite.iter("testcase") if tc.find("failure") is not None]
    assert "refund-wrong" in failing and "refund-ok" not in failing and "FAILED" in err
    code, out, _ = run_cli(["check", str(EXAMPLES), "--fail-under", "faithfulness=0.3", "--format", "markdown"], capsys)
    assert code == 1 and "| ❌ | refund-wrong |" in out and "| ✅ | refund-ok |" in out
    code, out, _ = run_cli(["check", str(EXAMPLES), "--format", "json"], capsys)
    assert code == 0 and [r["id"] for r in json.loads(out)] == [r["id"] for r in rows]  # no gate: exit 0
    code, out, _ = run_cli(["check", str(good), "--details"], capsys)
    assert code == 0 and " ok " in out  # table mode shows every checked sentence with --details
    policy = write(tmp_path, "policy.json", json.dumps({"action": "block", "faithfulness": "auto"}))
    code, out, _ = run_cli(["check", str(EXAMPLES), "--policy", str(policy)], capsys)
    assert code == 1


def test_check_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["check", str(tmp_path)], capsys)
    assert code == 2 and "is a directory" in err
    code, _, err = run_cli(["check", str(EXAMPLES), "--fail-under", "faithfulness"], capsys)
    assert code == 2 and "METRIC=VALUE" in err
    code, _, err = run_cli(["check", str(EXAMPLES), "--fail-under", "speed=0.5"], capsys)
    assert code == 2 and "faithfulness, retrieval_relevance" in err


def test_bad_thread_setting_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GUARDRAIL_THREADS", "abc")
    code, _, err = run_cli(["check", str(EXAMPLES)], capsys)
    assert code == 2 and "GUARDRAIL_THREADS='abc' is not a whole number" in err


def test_calibrate_input_errors_are_clear(tiny_nli: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    row = {"question": "q", "contexts": ["Items can be returned within 30 days."],
           "response": "Items can be returned within 30 days.", "label": 0}
    one_label = tmp_path / "faithful_only.jsonl"
    one_label.write_text("".join(json.dumps(row) + "\n" for _ in range(4)))
    code, _, err = run_cli(["calibrate", str(tiny_nli), "--bench", str(one_label)], capsys)
    assert code == 2 and "found 4 faithful (label 0) and 0 unsupported (label 1)" in err and "Traceback" not in err
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(row) + "\n" + '{"contexts": ["a"], "response": "b"}\n')
    code, _, err = run_cli(["calibrate", str(tiny_nli), "--bench", str(broken)], capsys)
    assert code == 2 and f"{broken}:2: missing label" in err
    broken.write_text('{"oops\n')
    code, _, err = run_cli(["calibrate", str(tiny_nli), "--bench", str(broken)], capsys)
    assert code == 2 and f"{broken}:1: not a JSON object" in err
    code, _, err = run_cli(["calibrate", str(tiny_nli), "--bench", str(tmp_path / "nope.jsonl")], capsys)
    assert code == 2 and "no such file" in err


def test_serve_and_export_argument_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["serve", "--upstream", "ftp://models.internal/v1"], capsys)
    assert code == 2 and "is not an http(s) URL" in err
    code, _, err = run_cli(["export", str(tmp_path / "missing"), "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and "does not exist" in err and "Traceback" not in err
