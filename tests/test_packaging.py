"""The install lines install this project: the distribution name, the version, and every pip line we print."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import guardrail

ROOT = Path(__file__).resolve().parent.parent
#: the name `guardrail` on PyPI is an unrelated package (an object-permissions library)
DIST = "rag-guardrail"


def test_the_distribution_is_rag_guardrail_and_owns_the_guardrail_package() -> None:
    dist = importlib.metadata.distribution(DIST)
    assert dist.version == guardrail.__version__
    assert "guardrail" in (dist.read_text("top_level.txt") or "guardrail").split() or any(
        str(f).startswith("guardrail") for f in (dist.files or []))
    out = subprocess.run([sys.executable, "-m", "guardrail", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"guardrail {dist.version}"


def test_every_printed_install_line_names_this_project() -> None:
    """README, docs, deploy files and every error message: `pip install 'guardrail[...]'` would install the other
    project; only `rag-guardrail[...]` or a checkout path ('.', -e '.[x]') may appear."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "deploy").rglob("*")),
             *sorted((ROOT / "guardrail").rglob("*.py")), *sorted((ROOT / "guardrail").rglob("*.md"))]
    bad = []
    for path in files:
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in re.finditer(r"pip install[^\n`\"&;|)]*", text):
            for target in re.findall(r"""(?:^|\s)['"]?([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?['"]?""", m.group(0)[len("pip install"):]):
                if target == "guardrail":
                    bad.append(f"{path.relative_to(ROOT)}: {m.group(0)}")
    assert not bad, "install lines that fetch the unrelated PyPI package `guardrail`:\n" + "\n".join(bad)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(rf'^name = "{DIST}"$', pyproject, re.M)
