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
    objs = [json.loads(line) for line in out.splitlines()]
    assert [o["id"] for o in objs] == ["a1", 7, "none"]
    assert 0.0 <= objs[0]["faithfulness"] <= 1.0
    assert 0.0 <= objs[0]["retrieval_relevance"] <= 1.0
    assert objs[1]["faithfulness"] is None  # empty response: nothing to check
    assert "faithfulness" not in objs[1]["failed_checks"]  # an empty answer passes (empty_answer="pass")
    assert objs[2]["faithfulness"] == 0.0 and objs[2]["retrieval_relevance"] is None
    # no passage at all fails the default policy's retrieval check, and so the run
    assert objs[2]["outcome"] == "failed" and "retrieval_relevance" in objs[2]["failed_checks"]
    assert code == 1, err


def test_table_output(tiny_nli: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = write(tmp_path, "in.json", json.dumps([GOOD, {**GOOD, "id": "b2"}]))
    code, out, _ = run_cli(["check", str(f), "--nli-model", str(tiny_nli)], capsys)
    lines = out.splitlines()
    assert lines[0].split() == ["id", "faithful", "retrieval", "response", "unsupported", "result"]
    rows = [line for line in lines if line.startswith(("a1 ", "b2 "))]
    assert len(rows) == 2 and all(line.split()[-1] in ("pass", "FAIL") for line in rows)
    assert code == (1 if any(line.split()[-1] == "FAIL" for line in rows) else 0)  # the result column is the gate
    assert lines[-1].startswith("2 rows: ") and " unchecked in " in lines[-1]


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
    row = json.loads(proc.stdout)
    assert row["id"] == "a1" and row["outcome"] in ("passed", "failed"), proc.stderr.decode()
    assert proc.returncode == (0 if row["outcome"] == "passed" else 1), proc.stderr.decode()


EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "rag.jsonl"


def test_fail_under_gates_ci_in_every_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The shipped model on the examples: a wrong answer fails the gate (exit 1), the right ones pass (exit 0)."""
    import xml.etree.ElementTree as ET

    rows = [json.loads(line) for line in EXAMPLES.read_text().splitlines() if line.strip()]
    good = write(tmp_path, "good.jsonl", json.dumps(next(r for r in rows if r["id"] == "refund-ok")) + "\n")
    code, out, _ = run_cli(["check", str(EXAMPLES), "--fail-under", "faithfulness=0.3"], capsys)
    assert code == 1 and "FAILED" in out and "refund-wrong" in out
    code, out, _ = run_cli(["check", str(good), "--fail-under", "faithfulness=0.3"], capsys)
    assert code == 0 and "PASSED: 0 of 1 rows failed" in out and "1 rows: 1 passed, 0 failed, 0 unchecked" in out
    code, out, err = run_cli(["check", str(EXAMPLES), "--fail-under", "faithfulness=0.3", "--format", "junit"], capsys)
    suite = ET.fromstring(out).find("testsuite")
    assert code == 1 and suite is not None and int(suite.get("failures", "0")) >= 1
    failing = [tc.get("name") for tc in suite.iter("testcase") if tc.find("failure") is not None]
    assert "refund-wrong" in failing and "refund-ok" not in failing and "FAILED" in err
    code, out, _ = run_cli(["check", str(EXAMPLES), "--fail-under", "faithfulness=0.3", "--format", "markdown"], capsys)
    assert code == 1 and "| ❌ | refund-wrong |" in out and "| ✅ | refund-ok |" in out
    code, out, _ = run_cli(["check", str(EXAMPLES), "--format", "json"], capsys)
    assert [r["id"] for r in json.loads(out)] == [r["id"] for r in rows]
    assert code == 1  # no flags: the default policy still decides, and refund-wrong fails it
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


# ------------------------------------------------------------------ the gate is the guard's decision (shipped model)
REFUND = ["Items can be returned within 30 days of delivery for a full refund. Items must be unused and in their "
          "original packaging.", "Shipping is free for orders over $50."]
MIXED = {"id": "mixed", "question": "How long do I have to return an item?", "contexts": REFUND,
         "response": "You can return items within 30 days of delivery, as long as they are unused and in the original "
                     "packaging. Shipping is free for orders over $50. Refunds are paid in cash at any of our stores."}


def _outcomes(out: str) -> dict[str, str]:
    return {o["id"]: o["outcome"] for o in map(json.loads, out.splitlines())}


def test_policy_file_with_aggregate_any_fails_one_unsupported_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One made-up sentence among supported ones: the mean is above the policy's threshold, the sentence below it.
    aggregate "any" fails the row (as the gateway blocks it) in every format; aggregate "mean" passes it."""
    import xml.etree.ElementTree as ET

    f = write(tmp_path, "mixed.jsonl", json.dumps(MIXED) + "\n")
    _, out, _ = run_cli(["check", str(f), "--json", "--details"], capsys)
    row = json.loads(out)
    scores = [s["score"] for s in row["details"]["faithfulness"]["sentences"] if s["score"] is not None]
    mean = row["faithfulness"]
    assert len(scores) == 3 and min(scores) < mean - 0.2  # the premise: one weak sentence, a mean well above it
    limit = round((min(scores) + mean) / 2, 3)
    policies = {}
    for aggregate in ("any", "mean"):
        policies[aggregate] = write(tmp_path, f"{aggregate}.json",
                                    json.dumps({"action": "block", "faithfulness": limit, "aggregate": aggregate}))
    code, out, err = run_cli(["check", str(f), "--policy", str(policies["any"]), "--json"], capsys)
    row = json.loads(out)
    assert code == 1 and row["outcome"] == "failed" and row["failed_checks"] == ["faithfulness"]
    assert row["reasons"] and row["reasons"][0].startswith('sentence 3 "Refunds are paid in cash')
    assert [s["index"] for s in row["unsupported_sentences"]] == [2]  # the evidence agrees with the verdict
    assert f"faithfulness {limit:.3f} (any sentence)" in err and "FAILED: 1 of 1 rows failed" in err
    code, out, _ = run_cli(["check", str(f), "--policy", str(policies["any"])], capsys)
    assert code == 1 and out.splitlines()[1].split()[-1] == "FAIL"
    code, out, _ = run_cli(["check", str(f), "--policy", str(policies["any"]), "--format", "junit"], capsys)
    suite = ET.fromstring(out).find("testsuite")
    assert code == 1 and suite is not None and suite.get("failures") == "1"
    code, out, _ = run_cli(["check", str(f), "--policy", str(policies["mean"]), "--json"], capsys)
    assert code == 0 and json.loads(out)["outcome"] == "passed"


def test_no_flags_is_the_default_guards_decision(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without --policy or --fail-under a row fails exactly when the default Guard (Policy()) blocks it."""
    from guardrail import Evaluator, Guard, NLIScorer, Policy, default_nli_model

    rows = [json.loads(line) for line in EXAMPLES.read_text().splitlines() if line.strip()] + [MIXED]
    f = write(tmp_path, "rows.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    code, out, _ = run_cli(["check", str(f), "--json"], capsys)
    got = _outcomes(out)
    guard = Guard(Evaluator(nli=NLIScorer(default_nli_model())), Policy(action="block"))
    try:
        verdicts = {r["id"]: guard.check(r["question"], r["contexts"], r["response"]) for r in rows}
    finally:
        guard.close()
    assert got == {k: v.outcome for k, v in verdicts.items()}
    assert verdicts["refund-wrong"].blocked and verdicts["mixed"].blocked and not verdicts["refund-ok"].blocked
    assert code == 1
    wrong = write(tmp_path, "wrong.jsonl", json.dumps(MIXED) + "\n")  # mean above the threshold, one sentence below
    code, out, _ = run_cli(["check", str(wrong)], capsys)
    assert code == 1 and "FAILED: 1 of 1 rows failed" in out and out.splitlines()[1].split()[-1] == "FAIL"


def test_fail_under_faithfulness_auto_is_the_models_threshold(capsys: pytest.CaptureFixture[str]) -> None:
    from guardrail import NLIScorer, default_nli_model

    threshold = float(NLIScorer(default_nli_model()).metadata.get("threshold", 0.5))
    code, out, _ = run_cli(["check", str(EXAMPLES), "--json"], capsys)
    default = _outcomes(out)
    code, out, err = run_cli(["check", str(EXAMPLES), "--json", "--fail-under", "faithfulness=auto"], capsys)
    assert code == 1 and _outcomes(out) == default and default["refund-wrong"] == "failed"
    assert f"faithfulness {threshold:.3f} (auto, any sentence)" in err
    code, out, _ = run_cli(["check", str(EXAMPLES), "--json", "--fail-under", "faithfulness=0"], capsys)
    assert _outcomes(out)["refund-wrong"] == "passed"  # the override is applied: 0 lets every sentence through
    code, _, err = run_cli(["check", str(EXAMPLES), "--fail-under", "retrieval_relevance=auto"], capsys)
    assert code == 2 and "for faithfulness only" in err


def test_ragas_and_deepeval_field_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q, ctx, answer, truth = MIXED["question"], REFUND, "You can return items within 60 days.", "Within 30 days."
    names = {
        "ours": {"question": q, "contexts": ctx, "response": answer, "ground_truth": truth},
        "ragas": {"user_input": q, "retrieved_contexts": ctx, "response": answer, "reference": truth},
        "deepeval": {"input": q, "retrieval_context": ctx, "actual_output": answer, "expected_output": truth},
    }
    results = {}
    for kind, fields in names.items():
        f = write(tmp_path, f"{kind}.jsonl", json.dumps({"id": kind, **fields}) + "\n")
        code, out, err = run_cli(["check", str(f), "--json"], capsys)
        assert code == 1, err  # 60 days against 30: the same failing row whatever the names
        results[kind] = json.loads(out)
    keys = ("faithfulness", "retrieval_relevance", "response_relevance", "answer_similarity", "outcome")
    assert results["ours"]["answer_similarity"] is not None and results["ours"]["retrieval_relevance"] > 0.2
    for kind in ("ragas", "deepeval"):
        assert {k: results[kind][k] for k in keys} == {k: results["ours"][k] for k in keys}, kind
    f = write(tmp_path, "none.jsonl", json.dumps({"input": q, "actual_output": answer}) + "\n")
    code, _, err = run_cli(["check", str(f)], capsys)
    assert code == 2 and "'contexts' is missing" in err and "'retrieval_context'" in err


def test_an_unchecked_row_is_reported_and_the_batch_goes_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import xml.etree.ElementTree as ET

    ok = {"id": "ok", "question": MIXED["question"], "contexts": REFUND,
          "response": "You can return items within 30 days of delivery."}
    russian = {"id": "ru", "question": MIXED["question"], "contexts": REFUND,
               "response": "Возврат возможен в течение тридцати дней после доставки."}
    wrong = {**ok, "id": "wrong", "response": "You can return items within 60 days."}
    f = write(tmp_path, "rows.jsonl", "".join(json.dumps(r) + "\n" for r in (ok, russian, wrong)))
    code, out, _ = run_cli(["check", str(f)], capsys)
    lines = out.splitlines()
    assert [line.split()[-1] for line in lines if line.startswith(("ok ", "ru ", "wrong "))] == ["pass", "UNCHECKED", "FAIL"]
    assert any("line 2: could not be checked" in line and "script" in line for line in lines)
    assert code == 1 and lines[-1].startswith("3 rows: 1 passed, 1 failed, 1 unchecked in ")
    code, out, err = run_cli(["check", str(f), "--json"], capsys)
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["outcome"] for r in rows] == ["passed", "unchecked", "failed"]
    assert rows[1]["line"] == 2 and "script" in rows[1]["error"] and "line 2" in err and "'ru'" in err
    code, out, _ = run_cli(["check", str(f), "--format", "junit"], capsys)
    suite = ET.fromstring(out).find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "1", "1")
    only = write(tmp_path, "only.jsonl", "".join(json.dumps(r) + "\n" for r in (ok, russian)))
    code, out, _ = run_cli(["check", str(only)], capsys)
    assert code == 1 and "FAILED: 0 of 2 rows failed the policy, 1 unchecked" in out  # unchecked alone fails the run


def test_version_and_python_dash_m(capsys: pytest.CaptureFixture[str]) -> None:
    import guardrail

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0 and capsys.readouterr().out.strip() == f"guardrail {guardrail.__version__}"
    proc = subprocess.run([sys.executable, "-m", "guardrail", "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "usage: guardrail" in proc.stdout and all(c in proc.stdout for c in ("check", "eval", "serve", "train"))
    proc = subprocess.run([sys.executable, "-m", "guardrail", "--version"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == f"guardrail {guardrail.__version__}"


def test_a_progress_bar_on_a_terminal_and_none_elsewhere(tmp_path: Path) -> None:
    """`guardrail check` shows a progress bar when stderr is a terminal (a pseudo-terminal here), and nothing extra
    when it is a pipe (CI logs); the closing summary is there in both."""
    import os
    import pty
    import subprocess
    import sys

    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"id": f"r{i}", "question": "How long do returns take?",
                                        "contexts": ["Items can be returned within 30 days."],
                                        "response": "Items can be returned within 30 days."}) + "\n"
                            for i in range(3)))
    cmd = [sys.executable, "-m", "guardrail", "check", str(rows), "--json"]
    piped = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert "row/s" not in piped.stderr and "3 rows" in piped.stderr
    controller, terminal = pty.openpty()
    import fcntl
    import struct
    import termios

    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))  # a terminal 120 columns wide
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=terminal, timeout=120)
        os.close(terminal)
        seen = b""
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(controller)
    assert proc.returncode == piped.returncode
    assert b"guardrail check" in seen and b"row" in seen and b"3 rows" in seen
