"""Every ```python block of the README runs exactly as written (against a local OpenAI-compatible server)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_server import serve
from prometheus_client import CollectorRegistry

from guardrail import Evaluator, Guard, NLIScorer, Policy, Telemetry, default_nli_model
from guardrail.server import create_demo_gateway

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_has_python_examples() -> None:
    assert len(BLOCKS) >= 4


@pytest.fixture(scope="module")
def demo_gateway() -> Iterator[str]:
    """What `guardrail serve --demo` runs (block policy, shipped models), on a free port."""
    guard = Guard(Evaluator(nli=NLIScorer(default_nli_model())), Policy(action="block"))
    with serve(create_demo_gateway(guard, Telemetry(CollectorRegistry())), lifespan="on") as url:
        yield url + "/v1"


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index: int, tmp_path: Path, demo_gateway: str) -> None:
    with serve() as url:
        env = {**os.environ, "OPENAI_BASE_URL": url + "/v1", "OPENAI_API_KEY": "test-key", "GUARDRAIL_URL": demo_gateway}
        proc = subprocess.run([sys.executable, "-c", BLOCKS[index]], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() or "app = " in BLOCKS[index]
    if "GuardedChain(" in BLOCKS[index]:  # LangChain: the faithful answer passes, the made-up one is blocked
        assert "pass -> Items can be returned within 30 days of delivery." in proc.stdout
        assert "block -> sentence 2" in proc.stdout and "1 TTFT series" in proc.stdout
    if "GuardedQueryEngine(" in BLOCKS[index]:  # LlamaIndex: the same through its query engine and evaluator
        assert "pass -> Items can be returned within 30 days of delivery." in proc.stdout
        assert "evaluator passing: False" in proc.stdout and "block -> sentence 1" in proc.stdout
    if "GUARDRAIL_URL" in BLOCKS[index]:  # the demo shows all three outcomes
        assert "passed: Acme Outfitters accepts returns within 30 days" in proc.stdout
        assert "blocked:" in proc.stdout and "finish_reason: content_filter" in proc.stdout
