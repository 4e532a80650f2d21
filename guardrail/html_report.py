"""One self-contained HTML file for a checked dataset: ``guardrail check data.jsonl --html report.html``.

The report shows what the command computed (no model runs here): the summary, histograms of the scores with the
thresholds that decided, and a table of every row, sortable by any score; a failing or unchecked row opens onto its
answer, where each unsupported sentence is highlighted and set beside the context sentence that best supports (or
contradicts) it.

Everything is inline (CSS, SVG, one small script; no external asset), so the file can be attached to a CI run and
opened anywhere. Every text of the data is escaped, and a Content-Security-Policy lets only the report's own script
run: an answer holding ``<script>`` is shown as text. Without JavaScript the report still reads in full (the rows stay
in input order and the filter is hidden).

>>> html = html_report([], summary=["PASSED: 0 of 0 rows failed the policy, 0 unchecked"],
...                    thresholds=ReportThresholds(), source="empty.jsonl")
>>> html.startswith("<!DOCTYPE html>")
True

This module draws; it imports nothing of the command line or the server (a row is anything shaped like
:class:`ReportRow`, as ``guardrail check``'s results are).
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from guardrail.checks.evaluator import Evaluation
    from guardrail.checks.faithfulness import SentenceEvidence

__all__ = ["ReportRecord", "ReportRow", "ReportThresholds", "html_report"]

#: answers of unchecked rows are shown up to this many characters (the reason names the problem)
MAX_UNCHECKED_CHARS = 2000
#: histogram bins over 0..1
BINS = 20


class ReportRecord(Protocol):
    """The input row (``guardrail.cli.records.Record`` has this shape)."""

    @property
    def id(self) -> Any: ...
    @property
    def question(self) -> str: ...
    @property
    def response(self) -> str: ...
    @property
    def line(self) -> int: ...


class ReportRow(Protocol):
    """One checked row (``guardrail.cli.gate.RowResult`` has this shape)."""

    @property
    def record(self) -> ReportRecord: ...
    @property
    def evaluation(self) -> Evaluation | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def outcome(self) -> str: ...
    @property
    def reasons(self) -> list[str]: ...


@dataclass(frozen=True, kw_only=True)
class ReportThresholds:
    """The thresholds that decided, drawn on the histograms (None: the policy does not gate that metric)."""

    faithfulness: float | None = None
    #: how the faithfulness threshold applies, e.g. "auto: the model's threshold, any sentence"
    faithfulness_rule: str = ""
    retrieval_relevance: float | None = None
    response_relevance: float | None = None


# --------------------------------------------------------------------------- text
_SURROGATE = re.compile("[\ud800-\udfff]")


def _esc(text: object) -> str:
    """Escaped for element text and quoted attribute values; lone surrogates (broken Unicode in the data) become
    U+FFFD so that the file can be written as UTF-8."""
    return escape(_SURROGATE.sub("\ufffd", str(text)), quote=True)


def _num(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _attr(x: float | None) -> str:
    """A score as a data attribute for sorting: '' for none."""
    return "" if x is None else repr(round(float(x), 6))


# --------------------------------------------------------------------------- histograms
_W, _H = 272, 132
_LEFT, _RIGHT, _TOP, _BOTTOM = 26, 262, 14, 112


def _x(v: float) -> float:
    return _LEFT + (_RIGHT - _LEFT) * min(max(v, 0.0), 1.0)


def _histogram(title: str, series: Sequence[tuple[str, str, Sequence[float]]], threshold: float | None,
               note: str) -> str:
    """An inline SVG histogram over 0..1 of stacked ``(label, css class, values)`` series, with the threshold line."""
    counts = [[0] * BINS for _ in series]
    for k, (_, _, values) in enumerate(series):
        for v in values:
            counts[k][min(int(v * BINS), BINS - 1)] += 1
    totals = [sum(c[b] for c in counts) for b in range(BINS)]
    peak = max([1, *totals])
    width = (_RIGHT - _LEFT) / BINS
    parts = [f'<svg class="hist" viewBox="0 0 {_W} {_H}" role="img" '
             f'aria-label="{_esc(title)}">']
    parts.append(f'<line class="axis" x1="{_LEFT}" y1="{_BOTTOM}" x2="{_RIGHT}" y2="{_BOTTOM}"/>')
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<text class="tick" x="{_x(tick):.1f}" y="{_BOTTOM + 13}">{tick:g}</text>')
    parts.append(f'<text class="tick" x="{_LEFT - 4}" y="{_TOP + 4}" text-anchor="end">{peak}</text>')
    parts.append(f'<text class="tick" x="{_LEFT - 4}" y="{_BOTTOM}" text-anchor="end">0</text>')
    for b in range(BINS):
        y = float(_BOTTOM)
        lo, hi = b / BINS, (b + 1) / BINS
        for k, (label, css, _) in enumerate(series):
            n = counts[k][b]
            if not n:
                continue
            h = (_BOTTOM - _TOP) * n / peak
            y -= h
            parts.append(f'<rect class="{css}" x="{_LEFT + b * width + 0.5:.1f}" y="{y:.1f}" width="{width - 1:.1f}" '
                         f'height="{h:.1f}"><title>{lo:.2f}–{hi:.2f}: {n} {_esc(label)}</title></rect>')
    if threshold is not None:
        x = _x(threshold)
        parts.append(f'<line class="threshold" data-threshold="{threshold!r}" x1="{x:.1f}" y1="{_TOP - 6}" '
                     f'x2="{x:.1f}" y2="{_BOTTOM}"/>')
        anchor = "end" if threshold > 0.8 else "start"
        dx = -3 if anchor == "end" else 3
        parts.append(f'<text class="threshold-label" x="{x + dx:.1f}" y="{_TOP}" text-anchor="{anchor}">'
                     f'{threshold:.3f}</text>')
    parts.append("</svg>")
    legend = " ".join(f'<span class="item"><span class="key {css}"></span>{_esc(label)} ({len(values)})</span>'
                      for label, css, values in series)
    line = ' <span class="item"><span class="key threshold"></span>threshold</span>' if threshold is not None else ""
    return (f'<figure><figcaption>{_esc(title)}</figcaption>{"".join(parts)}'
            f'<p class="legend">{legend}{line}</p><p class="note">{_esc(note)}</p></figure>')


def _metric(ev: Evaluation | None, name: str) -> float | None:
    return ev.headline(name) if ev is not None else None


def _by_outcome(rows: Sequence[ReportRow], name: str) -> list[tuple[str, str, list[float]]]:
    out = []
    for outcome in ("passed", "failed"):
        values = [v for r in rows if r.outcome == outcome and (v := _metric(r.evaluation, name)) is not None]
        out.append((outcome, outcome, values))
    return out


def _histograms(rows: Sequence[ReportRow], t: ReportThresholds) -> str:
    figures = []
    if any(_metric(r.evaluation, "faithfulness") is not None for r in rows):
        rule = f" ({t.faithfulness_rule})" if t.faithfulness_rule else ""
        figures.append(_histogram("Faithfulness (rows)", _by_outcome(rows, "faithfulness"), t.faithfulness,
                                  f"each row's mean sentence support; threshold{rule}"))
        sentences = [s for r in rows if r.evaluation is not None and r.evaluation.faithfulness is not None
                     for s in r.evaluation.faithfulness.sentences if s.score is not None]
        figures.append(_histogram(
            "Sentence support",
            [("supported", "passed", [s.score for s in sentences if s.supported and s.score is not None]),
             ("unsupported", "failed", [s.score for s in sentences if not s.supported and s.score is not None])],
            t.faithfulness, "every checked sentence; one below the threshold is unsupported"))
    for name, title, threshold in (("retrieval_relevance", "Retrieval relevance (best chunk)", t.retrieval_relevance),
                                   ("response_relevance", "Response relevance", t.response_relevance)):
        if any(_metric(r.evaluation, name) is not None for r in rows):
            note = "cosine similarity to the question" + ("" if threshold is not None else "; not gated")
            figures.append(_histogram(title, _by_outcome(rows, name), threshold, note))
    return f'<section id="histograms">{"".join(figures)}</section>' if figures else ""


# --------------------------------------------------------------------------- rows
_COLUMNS = (("line", "#"), ("outcome", "result"), ("id", "id"), ("faithfulness", "faithfulness"),
            ("retrieval_relevance", "retrieval"), ("response_relevance", "response"), ("unsupported", "unsupported"))
_ROLE = {"contradicts": "contradicted by", "closest": "closest", "supports": "supported by"}
_BADGE = {"passed": "pass", "failed": "FAIL", "unchecked": "UNCHECKED"}


def _answer(response: str, sentences: Sequence[SentenceEvidence]) -> str:
    """The answer as sent, each checked sentence wrapped where it stands: unsupported ones in ``<mark>``."""
    out, at = [], 0
    # several readings of one span (a question the answer asks itself and its reply, a sentence's claims): the one that
    # fails is drawn, never a passing one over it (round 56)
    for s in sorted((s for s in sentences if s.score is not None),
                    key=lambda s: (s.start, s.supported is not False, s.score)):
        if s.start < at or s.end > len(response) or s.end <= s.start:
            continue  # offsets that do not fit the answer as sent: the evidence list below still shows the sentence
        out.append(_esc(response[at:s.start]))
        body = f'{_esc(response[s.start:s.end])}<sup>{s.index + 1}</sup>'
        title = f"sentence {s.index + 1}: support {_num(s.score, 2)}"
        if s.supported is False:
            out.append(f'<mark class="unsupported" data-score="{_attr(s.score)}" title="{_esc(title)}">{body}</mark>')
        else:
            out.append(f'<span class="supported" data-score="{_attr(s.score)}" title="{_esc(title)}">{body}</span>')
        at = s.end
    out.append(_esc(response[at:]))
    return "".join(out)


def _evidence(s: SentenceEvidence, limit: float | None) -> str:
    """One sentence beside its best evidence."""
    bad = s.supported is False
    figures = [f"support <b>{_num(s.score, 2)}</b>" + (f" &lt; {limit:.3f}" if bad and limit is not None else "")]
    if s.entailment is not None:
        figures.append(f"entailment {s.entailment:.2f}")
    contradiction = s.sentence_contradiction if s.sentence_role == "contradicts" else s.contradiction
    if contradiction is not None:
        figures.append(f"contradiction {contradiction:.2f}")
    text = f'<mark class="unsupported">{_esc(s.text)}</mark>' if bad else _esc(s.text)
    left = (f'<div class="sentence {"unsupported" if bad else "supported"}"><span class="num">{s.index + 1}</span> '
            f'{text}<div class="figures">{" · ".join(figures)}</div></div>')
    terms = ""
    if s.unsupported_terms:
        terms = f'<div class="terms">not in any passage: {_esc(", ".join(s.unsupported_terms))}</div>'
    if s.sentence is None:
        return left + f'<div class="source none">no passage to compare with{terms}</div>'
    role = _ROLE.get(s.sentence_role or "", "best")
    premise = ""
    if s.premise is not None and s.premise.text.strip() != s.sentence.text.strip():
        premise = (f'<details><summary>premise scored (chunk {s.premise.chunk})</summary>'
                   f'<blockquote>{_esc(s.premise.text)}</blockquote></details>')
    return left + (f'<div class="source {_esc(s.sentence_role or "best")}"><span class="role">{_esc(role)}</span> '
                   f'<span class="chunk">chunk {s.sentence.chunk}</span>'
                   f"<blockquote>{_esc(s.sentence.text)}</blockquote>"
                   f"{premise}{terms}</div>")


def _detail(r: ReportRow, limit: float | None) -> str:
    rec = r.record
    parts = []
    if rec.question:
        parts.append(f'<p class="question"><span class="label">question</span> {_esc(rec.question)}</p>')
    ev = r.evaluation
    if ev is None:
        shown = rec.response[:MAX_UNCHECKED_CHARS]
        more = f" … ({len(rec.response) - len(shown):,} more characters)" if len(shown) < len(rec.response) else ""
        parts.append(f'<p class="error">{_esc(r.reasons[0] if r.reasons else r.error or "unchecked")}</p>')
        parts.append(f'<p class="answer"><span class="label">answer</span> {_esc(shown)}{_esc(more)}</p>')
        return "".join(parts)
    sentences = ev.faithfulness.sentences if ev.faithfulness is not None else ()
    parts.append(f'<p class="answer"><span class="label">answer</span> {_answer(rec.response, sentences)}</p>')
    checked = [s for s in sentences if s.score is not None]
    if checked:
        parts.append('<div class="evidence"><div class="head">sentence</div><div class="head">best evidence</div>'
                     + "".join(_evidence(s, limit) for s in checked) + "</div>")
    others = [x for x in r.reasons if not x.startswith("sentence ")]  # the sentences are shown above
    if others:
        parts.append('<ul class="reasons">' + "".join(f"<li>{_esc(x)}</li>" for x in others) + "</ul>")
    return "".join(parts)


def _row(r: ReportRow, limit: float | None) -> str:
    ev = r.evaluation
    faith = ev.faithfulness if ev is not None else None
    unsupported = len(faith.unsupported) if faith is not None else None
    checked = sum(1 for s in faith.sentences if s.checked) if faith is not None else 0
    scores = {m: _metric(ev, m) for m in ("faithfulness", "retrieval_relevance", "response_relevance")}
    data = " ".join(f'data-{m.replace("_", "-")}="{_attr(v)}"' for m, v in scores.items())
    cells = "".join(f'<td class="score">{_num(v)}</td>' for v in scores.values())
    count = "–" if unsupported is None else f"{unsupported}/{checked}"
    head = (f'<tr class="summary"><td class="line">{r.record.line}</td>'
            f'<td><span class="badge {r.outcome}">{_BADGE.get(r.outcome, _esc(r.outcome))}</span></td>'
            f'<td class="id">{_esc(r.record.id)}</td>{cells}<td class="count">{count}</td></tr>')
    detail = ""
    if r.outcome != "passed":
        detail = f'<tr class="detail"><td colspan="{len(_COLUMNS)}">{_detail(r, limit)}</td></tr>'
    return (f'<tbody class="row {_esc(r.outcome)}" data-line="{r.record.line}" data-outcome="{_esc(r.outcome)}" '
            f'data-id="{_esc(r.record.id)}" {data} data-unsupported="{"" if unsupported is None else unsupported}">'
            f"{head}{detail}</tbody>")


def _table(rows: Sequence[ReportRow], limit: float | None) -> str:
    heads = "".join(f'<th data-key="{key.replace("_", "-")}" scope="col"><button type="button">{label}</button></th>'
                    for key, label in _COLUMNS)
    body = "".join(_row(r, limit) for r in rows)
    return (f'<section id="rows-section"><h2>Rows</h2>'
            '<p class="controls"><label><input type="checkbox" id="only-failing"> failing and unchecked only</label>'
            '<span class="hint">click a column to sort; no score sorts lowest</span></p>'
            f'<table id="rows"><thead><tr>{heads}</tr></thead>{body}</table></section>')


# --------------------------------------------------------------------------- page
_STYLE = """
:root{--pass:#1a7f37;--fail:#cf222e;--warn:#9a6700;--line:#d0d7de;--mute:#57606a;--bg2:#f6f8fa}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;margin:0 auto;padding:16px 24px;
max-width:1240px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:20px 0 8px}
.meta,.note,.hint,.label{color:var(--mute);font-size:12px}
.verdict{font-weight:600;padding:2px 8px;border-radius:4px;color:#fff}
.verdict.passed{background:var(--pass)}.verdict.failed{background:var(--fail)}
.cards{display:flex;gap:10px;margin:10px 0}
.card{border:1px solid var(--line);border-radius:6px;padding:6px 14px;min-width:96px}
.card b{display:block;font-size:20px}.card.failed b{color:var(--fail)}.card.passed b{color:var(--pass)}
.card.unchecked b{color:var(--warn)}
#summary ul{margin:6px 0;padding-left:18px;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px}
#histograms{display:flex;flex-wrap:wrap;gap:12px}
figure{margin:0;border:1px solid var(--line);border-radius:6px;padding:8px 10px;flex:1 1 250px;max-width:400px}
.hist{width:100%;height:auto}
figcaption{font-weight:600;margin-bottom:2px}figure p{margin:2px 0}
.hist .axis{stroke:#8c959f}.hist .tick{font-size:10px;fill:var(--mute);text-anchor:middle}
.hist rect.passed,.key.passed{fill:#4ac26b;background:#4ac26b}
.hist rect.failed,.key.failed{fill:#ff8182;background:#ff8182}
.hist .threshold{stroke:var(--fail);stroke-width:1.5;stroke-dasharray:4 3}
.hist .threshold-label{font-size:10px;fill:var(--fail)}
.key{display:inline-block;width:10px;height:10px;margin:0 3px 0 8px;border-radius:2px}
.key.threshold{height:0;border-top:2px dashed var(--fail);border-radius:0}
.legend{font-size:12px}.legend .item{white-space:nowrap}
.controls{display:none;gap:16px;align-items:center}body[data-ready] .controls{display:flex}
body.only-failing tbody.passed{display:none}
table{border-collapse:collapse;width:100%}
th{text-align:left;border-bottom:2px solid var(--line);padding:0}
th button{font:inherit;font-weight:600;background:none;border:0;padding:6px 8px;cursor:pointer;width:100%;
text-align:left}
th[aria-sort=ascending] button::after{content:" ▲"}th[aria-sort=descending] button::after{content:" ▼"}
td{padding:5px 8px;vertical-align:top}
tbody.row{border-bottom:1px solid var(--line)}
tr.summary td.score,tr.summary td.count,tr.summary td.line{font-variant-numeric:tabular-nums}
td.id{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;word-break:break-all}
.badge{font-size:11px;font-weight:700;padding:1px 6px;border-radius:10px;border:1px solid}
.badge.passed{color:var(--pass)}.badge.failed{color:var(--fail)}.badge.unchecked{color:var(--warn)}
tbody.failed tr.summary{background:#fff5f5}tbody.unchecked tr.summary{background:#fff8c5}
tr.detail td{padding:4px 8px 12px 40px}
.question,.answer{margin:4px 0;white-space:pre-wrap;overflow-wrap:anywhere}
mark.unsupported{background:#ffd7d5;color:inherit;border-bottom:2px solid var(--fail);padding:0 1px}
span.supported{border-bottom:2px solid #4ac26b}
sup{font-size:9px;color:var(--mute);margin-left:1px}
.evidence{display:grid;grid-template-columns:1fr 1fr;gap:4px 16px;margin:8px 0;font-size:13px}
.evidence .head{font-size:11px;text-transform:uppercase;color:var(--mute);border-bottom:1px solid var(--line)}
.evidence .sentence,.evidence .source{padding:4px 0;overflow-wrap:anywhere}
.num{display:inline-block;min-width:18px;font-size:11px;color:var(--mute)}
.figures,.terms{font-size:12px;color:var(--mute)}.terms{color:var(--warn)}
.role{font-size:11px;font-weight:600;text-transform:uppercase}
.source.contradicts .role{color:var(--fail)}.source.supports .role{color:var(--pass)}
.chunk{font-size:11px;color:var(--mute)}
blockquote{margin:2px 0 0;padding:2px 8px;border-left:3px solid var(--line);background:var(--bg2)}
details summary{font-size:11px;color:var(--mute);cursor:pointer}
.error{color:var(--warn);font-weight:600;overflow-wrap:anywhere}
.reasons{margin:4px 0;color:var(--fail)}
footer{margin-top:20px;color:var(--mute);font-size:12px}
"""

#: sorting (click a header; again for the other direction) and the filter; rows start worst first
_SCRIPT = """(function () {
  "use strict";
  var body = document.body, table = document.getElementById("rows");
  if (!table) { return; }
  var rank = {unchecked: 0, failed: 1, passed: 2};
  var heads = table.tHead.rows[0].cells, current = null, dir = 1;
  function key(row, k) {
    var v = row.getAttribute("data-" + k);
    if (k === "id") { return v; }
    if (k === "outcome") { return v in rank ? rank[v] : 3; }
    return v === "" ? -1 : parseFloat(v);
  }
  function sort(k, d) {
    var rows = Array.prototype.slice.call(table.tBodies);
    rows.sort(function (a, b) {
      var x = key(a, k), y = key(b, k);
      return (x < y ? -d : x > y ? d : 0) || key(a, "line") - key(b, "line");
    });
    rows.forEach(function (r) { table.appendChild(r); });
    for (var i = 0; i < heads.length; i++) {
      if (heads[i].getAttribute("data-key") === k) {
        heads[i].setAttribute("aria-sort", d > 0 ? "ascending" : "descending");
      } else { heads[i].removeAttribute("aria-sort"); }
    }
    current = k; dir = d;
    body.setAttribute("data-sort", k + (d > 0 ? " ascending" : " descending"));
  }
  Array.prototype.forEach.call(heads, function (th) {
    th.querySelector("button").addEventListener("click", function () {
      var k = th.getAttribute("data-key");
      sort(k, k === current ? -dir : 1);
    });
  });
  var only = document.getElementById("only-failing");
  only.addEventListener("change", function () { body.classList.toggle("only-failing", only.checked); });
  sort(table.tHead.querySelector("[data-key=faithfulness]") ? "faithfulness" : "line", 1);
  body.setAttribute("data-ready", "1");
})();"""


def _csp() -> str:
    """Only the report's own script runs (by its hash); no network, no other script, whatever the data holds."""
    digest = base64.b64encode(hashlib.sha256(_SCRIPT.encode("utf-8")).digest()).decode("ascii")
    return f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'"


def _summary(rows: Sequence[ReportRow], summary: Iterable[str], t: ReportThresholds) -> str:
    counts = {o: sum(1 for r in rows if r.outcome == o) for o in ("passed", "failed", "unchecked")}
    ok = not counts["failed"] and not counts["unchecked"]
    cards = f'<div class="card"><b>{len(rows)}</b>rows</div>' + "".join(
        f'<div class="card {o}"><b>{n}</b>{o}</div>' for o, n in counts.items())
    lines = "".join(f"<li>{_esc(x)}</li>" for x in summary)
    threshold = f' data-threshold="{t.faithfulness!r}"' if t.faithfulness is not None else ""
    return (f'<section id="summary" data-rows="{len(rows)}" data-passed="{counts["passed"]}" '
            f'data-failed="{counts["failed"]}" data-unchecked="{counts["unchecked"]}"{threshold}>'
            f'<p><span class="verdict {"passed" if ok else "failed"}">{"PASSED" if ok else "FAILED"}</span></p>'
            f'<div class="cards">{cards}</div><ul>{lines}</ul></section>')


def html_report(rows: Sequence[ReportRow], *, summary: Sequence[str], thresholds: ReportThresholds, source: str,
                generator: str = "guardrail") -> str:
    """The report as one HTML document.

    ``summary``: the closing lines the command printed (shown as they are); ``thresholds``: the ones that decided,
    drawn on the histograms; ``source``: the input's name, for the title.
    """
    limit = thresholds.faithfulness
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_csp()}">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>guardrail check: {_esc(source)}</title><style>{_STYLE}</style></head>\n<body>"
        f'<h1>guardrail check: <code>{_esc(source)}</code></h1>'
        f'<p class="meta">{len(rows)} rows scored by {_esc(generator)}; failing and unchecked rows open onto their '
        "answer: unsupported sentences are highlighted, each beside its best evidence.</p>"
        f"{_summary(rows, summary, thresholds)}{_histograms(rows, thresholds)}{_table(rows, limit)}"
        f"<footer>{_esc(generator)} · self-contained report: no external assets</footer>"
        f"<script>{_SCRIPT}</script></body></html>\n"
    )
