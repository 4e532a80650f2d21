"""``guardrail check --html``: the report of examples/ through the real command and the shipped models, read back as
HTML, and rendered by a real browser (headless Chromium: Debian's ``chromium``; ``.ci/run`` installs it and sets
GUARDRAIL_REQUIRE_CHROMIUM=1, which turns a missing browser into a failure instead of a skip)."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

from guardrail.cli import main
from guardrail.html_report import _SCRIPT
from guardrail.scorers.nli import default_nli_model

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "rag.jsonl"
VOID = {"meta", "input", "br", "hr", "img", "link", "source", "wbr", "area", "base", "col", "embed", "param", "track"}
#: every element the report writes; anything else in a report came from the data
TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "code", "p", "span", "section", "div", "b", "ul",
        "li", "figure", "figcaption", "svg", "line", "text", "rect", "label", "input", "table", "thead", "tbody", "tr",
        "th", "td", "button", "mark", "sup", "blockquote", "details", "summary", "footer", "script"}
PAYLOAD = "<script>alert(1)</script>"


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node] = field(default_factory=list)
    text: list[str] = field(default_factory=list)  # own text and the children's, in order

    def iter(self) -> Iterator[Node]:
        yield self
        for c in self.children:
            yield from c.iter()

    def find_all(self, tag: str, cls: str | None = None) -> list[Node]:
        return [n for n in self.iter() if n.tag == tag and (cls is None or cls in n.attrs.get("class", "").split())]

    def find(self, tag: str, cls: str | None = None) -> Node:
        found = self.find_all(tag, cls)
        assert found, f"no <{tag} class={cls}>"
        return found[0]

    @property
    def content(self) -> str:
        return "".join(self.text)


class Tree(HTMLParser):
    """The document as Python's HTML parser (the standard's tokenizer rules) reads it: every start tag, every text."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.tags.append((tag, node.attrs))
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        for node in self.stack:
            node.text.append(data)


def check(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The installed command, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "guardrail", "check", *args], capture_output=True, text=True,
                          timeout=600, cwd=cwd)


@dataclass
class Run:
    proc: subprocess.CompletedProcess[str]
    rows: list[dict]  # type: ignore[type-arg]
    html: str
    path: Path

    @property
    def tree(self) -> Tree:
        return Tree(self.html)


@pytest.fixture(scope="module")
def examples_report(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """One run of the command on examples/: the JSON with the full evidence on stdout, the report beside it."""
    path = tmp_path_factory.mktemp("report") / "report.html"
    proc = check([str(EXAMPLES), "--format", "json", "--details", "--html", str(path)])
    assert proc.returncode == 1, proc.stderr  # refund-wrong fails the default policy
    return Run(proc, json.loads(proc.stdout), path.read_text(encoding="utf-8"), path)


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """Rows whose every text tries to become markup (and one that cannot be checked, with broken Unicode)."""
    folder = tmp_path_factory.mktemp("hostile")
    pwn = "<img src=x onerror=\"document.body.setAttribute('data-pwned','img')\">"
    run = "<script>document.body.setAttribute('data-pwned','script')</script>"
    rows = [
        {"id": f'x"><svg onload=alert(1)>{PAYLOAD}', "question": f"Where is the tower? {PAYLOAD}",
         "contexts": [f"The Eiffel Tower is in Paris. {PAYLOAD} {run}", f"</td></tr></table>{pwn}"],
         "response": f"It is in Rome. {PAYLOAD} {run} {pwn} Quotes: \" ' &amp; &lt;b&gt;"},
        {"id": "unchecked", "question": "q", "contexts": ["The Eiffel Tower is in Paris."],
         "response": f"Это Москва. {PAYLOAD} {pwn}"},
        {"id": "broken", "question": "q", "contexts": ["c"], "response": "caf\ud800 " + PAYLOAD},
    ]
    data = folder / "hostile.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    path = folder / "report.html"
    proc = check([str(data), "--format", "json", "--html", str(path)])
    assert proc.returncode == 1, proc.stderr
    return Run(proc, json.loads(proc.stdout), path.read_text(encoding="utf-8"), path)


def shipped_threshold() -> float:
    return float(json.loads((Path(default_nli_model()) / "guardrail.json").read_text())["threshold"])


def report_rows(tree: Tree) -> dict[str, Node]:
    rows = tree.root.find_all("tbody", "row")
    return {r.attrs["data-id"]: r for r in rows}


# --------------------------------------------------------------------------- what the report says
def test_summary_counts_are_the_commands(examples_report: Run) -> None:
    outcomes = [r["outcome"] for r in examples_report.rows]
    summary = examples_report.tree.root.find("section")
    assert summary.attrs["id"] == "summary"
    assert int(summary.attrs["data-rows"]) == len(outcomes) == 5
    for outcome in ("passed", "failed", "unchecked"):
        assert int(summary.attrs[f"data-{outcome}"]) == outcomes.count(outcome)
    # the closing lines of the command (on stderr with --format json) are the report's, word for word
    lines = [li.content for li in summary.find_all("li")]
    stderr = examples_report.proc.stderr.splitlines()
    assert lines and all(line in stderr for line in lines)
    tally = re.search(r"(\d+) rows: (\d+) passed, (\d+) failed, (\d+) unchecked", examples_report.proc.stderr)
    assert tally is not None
    cards = {c.attrs["class"].split()[-1]: c.find("b").content for c in summary.find_all("div", "card")}
    assert [cards["card"], cards["passed"], cards["failed"], cards["unchecked"]] == list(tally.groups())
    assert summary.find("span", "verdict").content == "FAILED"


def test_one_row_element_per_input_row_with_the_commands_scores(examples_report: Run) -> None:
    rows = report_rows(examples_report.tree)
    assert len(examples_report.tree.root.find_all("tbody", "row")) == len(examples_report.rows)
    assert set(rows) == {str(r["id"]) for r in examples_report.rows}
    for r in examples_report.rows:
        row = rows[str(r["id"])]
        assert row.attrs["data-outcome"] == r["outcome"]
        for name in ("faithfulness", "retrieval_relevance", "response_relevance"):
            shown = row.attrs["data-" + name.replace("_", "-")]
            assert float(shown) == pytest.approx(r[name], abs=1e-6)
        assert f"{r['faithfulness']:.3f}" in row.find("tr", "summary").content


def test_failing_rows_highlight_each_unsupported_sentence_beside_its_evidence(examples_report: Run) -> None:
    rows = report_rows(examples_report.tree)
    failing = [r for r in examples_report.rows if r["outcome"] == "failed"]
    assert {r["id"] for r in failing} >= {"refund-wrong", "short-wrong"}
    for r in failing:
        row = rows[r["id"]]
        sentences = r["details"]["faithfulness"]["sentences"]
        unsupported = [s for s in sentences if s["supported"] is False]
        assert unsupported, r["id"]
        answer = row.find("p", "answer")
        marked = [m.content for m in answer.find_all("mark", "unsupported")]
        # the mark holds the sentence and its number
        assert marked == [f"{s['text']}{s['index'] + 1}" for s in unsupported]
        cells = row.find("div", "evidence").children
        for s in unsupported:
            left = next(c for c in cells if "sentence" in c.attrs.get("class", "").split()
                        and c.find("span", "num").content == str(s["index"] + 1))
            right = cells[cells.index(left) + 1]  # beside it
            assert left.find("mark", "unsupported").content == s["text"]
            assert f"support {s['score']:.2f}" in left.content
            assert right.find("blockquote").content == s["sentence"]["text"]
            assert f"chunk {s['sentence']['chunk']}" in right.find("span", "chunk").content
    for r in examples_report.rows:  # nothing passing is marked
        if r["outcome"] == "passed":
            assert not rows[str(r["id"])].find_all("mark")


def test_the_threshold_shown_is_the_shipped_one(examples_report: Run) -> None:
    threshold = shipped_threshold()
    assert {r["details"]["faithfulness"]["threshold"] for r in examples_report.rows} == {threshold}
    tree = examples_report.tree
    assert float(tree.root.find("section").attrs["data-threshold"]) == threshold
    figures = {f.find("figcaption").content: f for f in tree.root.find_all("figure")}
    for caption in ("Faithfulness (rows)", "Sentence support"):
        line = figures[caption].find("line", "threshold")
        assert float(line.attrs["data-threshold"]) == threshold
        assert figures[caption].find("text", "threshold-label").content == f"{threshold:.3f}"
    assert f"faithfulness {threshold:.3f} (auto, any sentence)" in examples_report.proc.stderr
    retrieval = figures["Retrieval relevance (best chunk)"].find("line", "threshold")
    assert float(retrieval.attrs["data-threshold"]) == 0.2  # the default policy's


def test_self_contained_and_small(examples_report: Run) -> None:
    tree = examples_report.tree
    assert [t for t, _ in tree.tags if t == "script"] == ["script"]
    assert not [(t, a) for t, a in tree.tags if {"src", "href"} & set(a) or t in ("link", "img", "iframe")]
    assert "url(" not in examples_report.html and "@import" not in examples_report.html
    assert examples_report.path.stat().st_size < 200_000


# --------------------------------------------------------------------------- untrusted data
def test_no_script_from_the_data(hostile_report: Run) -> None:
    tree = hostile_report.tree
    scripts = tree.root.find_all("script")
    assert len(scripts) == 1 and scripts[0].content == _SCRIPT  # ours, and only ours
    assert {t for t, _ in tree.tags} <= TAGS
    assert not [(t, a) for t, a in tree.tags for k in a if k.startswith("on") or k in ("src", "href")]
    # the data reads as the text it is
    text = tree.root.content
    assert text.count(PAYLOAD) >= 4 and "onerror=\"document.body" in text and "<svg onload=alert(1)>" in text
    rows = report_rows(tree)
    assert set(rows) == {f'x"><svg onload=alert(1)>{PAYLOAD}', "unchecked", "broken"}
    # a Content-Security-Policy admits the report's script alone, should anything ever slip through
    csp = next(a["content"] for t, a in tree.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in csp and re.search(r"script-src 'sha256-[A-Za-z0-9+/=]+'$", csp)


def test_unchecked_rows_appear_marked(hostile_report: Run) -> None:
    rows = report_rows(hostile_report.tree)
    summary = hostile_report.tree.root.find("section")
    assert int(summary.attrs["data-unchecked"]) == 2
    for rid in ("unchecked", "broken"):
        row = rows[rid]
        assert row.attrs["data-outcome"] == "unchecked" and "unchecked" in row.attrs["class"].split()
        assert row.find("span", "badge").content == "UNCHECKED"
        assert "could not be checked" in row.find("p", "error").content
    assert "caf\ufffd" in rows["broken"].find("p", "answer").content  # broken Unicode shown as U+FFFD


def test_html_path_refused_before_any_model_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", str(EXAMPLES), "--html", str(tmp_path / "missing" / "r.html")])
    assert code == 2 and "no such directory" in capsys.readouterr().err


# --------------------------------------------------------------------------- a real browser
def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        message = "chromium not found: apt-get install chromium (Debian) to render the HTML report in a real browser"
        if os.environ.get("GUARDRAIL_REQUIRE_CHROMIUM"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def browse(page: Path, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [chromium(), "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
         f"--user-data-dir={profile}", *args, page.resolve().as_uri()],
        capture_output=True, text=True, timeout=180)


def test_chromium_runs_the_report_and_sorts_it(examples_report: Run, tmp_path: Path) -> None:
    proc = browse(examples_report.path, tmp_path / "profile", "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = Tree(proc.stdout)
    body = dom.root.find("body")
    assert body.attrs.get("data-ready") == "1", "the report's script did not run"
    assert body.attrs.get("data-sort") == "faithfulness ascending"
    shown = [r.attrs["data-id"] for r in dom.root.find_all("tbody", "row")]
    worst_first = [str(r["id"]) for r in sorted(examples_report.rows, key=lambda r: r["faithfulness"])]
    assert shown == worst_first != [str(r["id"]) for r in examples_report.rows]
    sorted_by = [th.attrs["data-key"] for th in dom.root.find_all("th") if th.attrs.get("aria-sort") == "ascending"]
    assert sorted_by == ["faithfulness"]


def test_chromium_screenshot(examples_report: Run, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    proc = browse(examples_report.path, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,1600",
                  "--hide-scrollbars")
    assert proc.returncode == 0 and shot.is_file(), proc.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    assert struct.unpack(">II", data[16:24]) == (1280, 1600)


def test_chromium_runs_no_script_of_the_data(hostile_report: Run, tmp_path: Path) -> None:
    proc = browse(hostile_report.path, tmp_path / "profile", "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    body = Tree(proc.stdout).root.find("body")
    assert body.attrs.get("data-ready") == "1" and "data-pwned" not in body.attrs


def test_the_report_imports_neither_the_cli_nor_the_server() -> None:
    """DESIGN.md: the command line imports the report, never the reverse."""
    import guardrail.html_report as report

    source = Path(report.__file__).read_text(encoding="utf-8")
    ours = set(re.findall(r"^\s*(?:from|import)\s+(guardrail[\w.]*)", source, re.M))
    assert ours <= {"guardrail.checks.evaluator", "guardrail.checks.faithfulness"}, ours  # types only
