"""Command line: ``guardrail check``, ``guardrail export``, ``guardrail train``.

Environment variables are read here and only here: ``GUARDRAIL_NLI_MODEL`` (default NLI model
directory or hub id) and ``GUARDRAIL_THREADS`` (onnxruntime threads).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from guardrail.errors import GuardrailError, InputError


@dataclass(frozen=True, slots=True)
class Record:
    id: Any
    question: str
    contexts: list[str]
    response: str
    ground_truth: str | None
    line: int


def _decode(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            f"{name}: line {line} is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "re-encode the file as UTF-8"
        ) from None


def _record(obj: Any, where: str, line: int, max_context_chars: int) -> Record:
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a JSON object with question, contexts and response, got {type(obj).__name__}")
    response = obj.get("response")
    if not isinstance(response, str):
        raise InputError(f"{where}: 'response' must be a string" + ("" if "response" in obj else " (missing)"))
    question = obj.get("question", "")
    if not isinstance(question, str):
        raise InputError(f"{where}: 'question' must be a string")
    contexts = obj.get("contexts")
    if contexts is None:
        raise InputError(f"{where}: 'contexts' is missing; give the retrieved chunks as a list of strings ([] for none)")
    if isinstance(contexts, str):
        raise InputError(f"{where}: 'contexts' must be a list of strings, got one string; wrap it: [\"...\"]")
    if not isinstance(contexts, list) or not all(isinstance(c, str) for c in contexts):
        raise InputError(f"{where}: 'contexts' must be a list of strings")
    total = sum(len(c) for c in contexts)
    if total > max_context_chars:
        raise InputError(
            f"{where}: contexts total {total:,} characters, over the limit of {max_context_chars:,}; "
            "pass --max-context-chars to raise it"
        )
    truth = obj.get("ground_truth")
    if truth is not None and not isinstance(truth, str):
        raise InputError(f"{where}: 'ground_truth' must be a string")
    return Record(obj.get("id", line), question, contexts, response, truth, line)


def read_records(stream: BinaryIO, name: str, *, max_context_chars: int) -> list[Record]:
    """JSON (an object or a list of objects) or JSONL. Errors name the file and line."""
    text = _decode(stream.read(), name)
    stripped = text.lstrip()
    if not stripped:
        raise InputError(f"{name}: no input")
    if stripped[0] == "[":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{name}: line {exc.lineno}: invalid JSON ({exc.msg})") from None
        return [_record(o, f"{name}: item {i}", i, max_context_chars) for i, o in enumerate(data, 1)]
    if stripped[0] == "{":
        try:
            data = json.loads(text)
            return [_record(data, name, 1, max_context_chars)]
        except json.JSONDecodeError:
            pass  # JSON Lines
    records = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{name}: line {n}: invalid JSON ({exc.msg} at column {exc.colno})") from None
        records.append(_record(obj, f"{name}: line {n}", n, max_context_chars))
    return records


def _fmt(x: float | None) -> str:
    return "   -  " if x is None else f"{x:6.3f}"


def _print_table(results: Sequence[tuple[Record, Any]], out: TextIO, *, details: bool = False) -> None:
    ids = [str(r.id) for r, _ in results]
    w = max([2, *map(len, ids)])
    out.write(f"{'id':<{w}}  faithful  retrieval  response  unsupported\n")
    for (_rec, ev), rid in zip(results, ids):
        faith = ev.faithfulness
        unsupported = len(faith.unsupported) if faith else 0
        checked = sum(1 for s in faith.sentences if s.checked) if faith else 0
        out.write(
            f"{rid:<{w}}  {_fmt(ev.faithfulness_score):>8}  {_fmt(ev.retrieval.top if ev.retrieval else None):>9}"
            f"  {_fmt(ev.response_relevance):>8}  {unsupported}/{checked}\n"
        )
        shown = [x for x in faith.sentences if x.checked] if faith and details else (faith.unsupported if faith else ())
        for s in shown:
            where = ""
            if s.sentence is not None:
                snippet = s.sentence.text if len(s.sentence.text) < 90 else s.sentence.text[:87] + "..."
                label = {"contradicts": "contradicted by", "closest": "closest"}.get(s.sentence_role or "", "best")
                where = f"; {label}: chunk {s.sentence.chunk} \"{snippet}\""
            contradiction = s.sentence_contradiction if s.sentence_role == "contradicts" else s.contradiction
            contra = "" if contradiction is None else f", contradiction {contradiction:.2f}"
            terms = f"; not in context: {', '.join(s.unsupported_terms)}" if s.unsupported_terms else ""
            mark = "" if not details else ("  ok " if s.supported else "  NO ")
            out.write(f"{'':<{w}}  {mark}  sentence {s.index + 1} \"{s.text}\": entailment {s.entailment:.2f}{contra}{where}{terms}\n")


def env_threads() -> int | None:
    """``GUARDRAIL_THREADS`` (onnxruntime intra-op threads), validated: a clear error, never a traceback."""
    raw = os.environ.get("GUARDRAIL_THREADS", "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise InputError(f"GUARDRAIL_THREADS={raw!r} is not a whole number; set it to the number of threads "
                         "(e.g. 2) or unset it") from None
    if value < 1:
        raise InputError(f"GUARDRAIL_THREADS={value} must be at least 1")
    return value


def _evaluator(args: argparse.Namespace) -> Any:
    from guardrail.checks.evaluator import CHECKS, Evaluator
    from guardrail.checks.faithfulness import FaithfulnessConfig
    from guardrail.scorers.embedding import EmbeddingScorer
    from guardrail.scorers.nli import NLIScorer, default_nli_model

    checks = [c.strip() for c in args.checks.split(",")] if args.checks else list(CHECKS)
    threads = env_threads()
    nli = None
    if "faithfulness" in checks:
        model = args.nli_model or os.environ.get("GUARDRAIL_NLI_MODEL") or default_nli_model()
        nli = NLIScorer(model, backend=args.backend, threads=threads)
    embedder = EmbeddingScorer(args.embedding_model, backend="onnx" if args.embedding_model is None else args.backend, threads=threads)
    config = FaithfulnessConfig(mode=args.mode, max_context_chars=args.max_context_chars)
    return Evaluator(nli=nli, embedder=embedder, checks=checks, faithfulness=config)


GATE_METRICS = ("faithfulness", "retrieval_relevance", "response_relevance")


def _metric(ev: Any, name: str) -> float | None:
    if name == "faithfulness":
        return ev.faithfulness_score  # type: ignore[no-any-return]
    if name == "retrieval_relevance":
        return ev.retrieval.top if ev.retrieval else None
    return ev.response_relevance  # type: ignore[no-any-return]


def _gates(args: argparse.Namespace) -> dict[str, float]:
    """``--fail-under METRIC=VALUE`` (repeatable) and the thresholds of ``--policy FILE``."""
    gates: dict[str, float] = {}
    if args.policy:
        from guardrail.policy import Policy

        policy = Policy.from_file(args.policy)
        gates.update({m: getattr(policy, m) for m in GATE_METRICS if getattr(policy, m) is not None})
    for spec in args.fail_under or ():
        name, sep, value = spec.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or name not in GATE_METRICS:
            raise InputError(f"--fail-under {spec!r}: expected METRIC=VALUE with METRIC one of {', '.join(GATE_METRICS)}")
        try:
            gates[name] = float(value)
        except ValueError:
            raise InputError(f"--fail-under {spec!r}: {value!r} is not a number") from None
        if not 0.0 <= gates[name] <= 1.0:
            raise InputError(f"--fail-under {spec!r}: the value must be within 0..1")
    return gates


def _row_failures(ev: Any, gates: dict[str, float]) -> list[str]:
    out = []
    for name, limit in gates.items():
        value = _metric(ev, name)
        if value is not None and value < limit:
            out.append(f"{name} {value:.3f} < {limit:.3f}")
            if name == "faithfulness" and ev.faithfulness is not None:
                out.extend(f'  unsupported sentence {u.index + 1}: "{u.text}"' for u in ev.faithfulness.unsupported)
    return out


def _row_json(rec: Record, ev: Any, details: bool) -> dict[str, Any]:
    row = {"id": rec.id, **ev.to_dict()}
    if not details:
        row.pop("details")
        row["unsupported_sentences"] = [
            {"index": s.index, "text": s.text, "entailment": s.entailment, "contradiction": s.contradiction}
            for s in (ev.faithfulness.unsupported if ev.faithfulness else ())
        ]
    return row


def _junit(results: Sequence[tuple[Record, Any, list[str]]], out: TextIO, seconds: float) -> None:
    from xml.sax.saxutils import escape, quoteattr

    failures = sum(1 for *_, f in results if f)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(f'<testsuites><testsuite name="guardrail check" tests="{len(results)}" failures="{failures}" '
              f'time="{seconds:.3f}">\n')
    for rec, ev, fails in results:
        scores = ", ".join(f"{m}={_metric(ev, m):.3f}" for m in GATE_METRICS if _metric(ev, m) is not None)
        out.write(f'  <testcase classname="guardrail" name={quoteattr(str(rec.id))}>')
        if fails:
            out.write(f"<failure message={quoteattr(fails[0])}>{escape(chr(10).join(fails))}</failure>")
        out.write(f"<system-out>{escape(scores)}</system-out></testcase>\n")
    out.write("</testsuite></testsuites>\n")


def _markdown(results: Sequence[tuple[Record, Any, list[str]]], out: TextIO, summary: list[str]) -> None:
    out.write("| | id | faithfulness | retrieval | response | why |\n|---|---|---|---|---|---|\n")
    for rec, ev, fails in results:
        cells = [_fmt(_metric(ev, m)).strip() for m in GATE_METRICS]
        why = "<br>".join(f.strip().replace("|", "\\|") for f in fails)
        out.write(f"| {'❌' if fails else '✅'} | {rec.id} | {' | '.join(cells)} | {why} |\n")
    out.write("\n" + "\n".join(f"- {line}" for line in summary) + "\n")


def cmd_check(args: argparse.Namespace) -> int:
    import time

    fmt = "jsonl" if args.json else args.format
    gates = _gates(args)
    if args.file == "-":
        records = read_records(sys.stdin.buffer, "<stdin>", max_context_chars=args.max_context_chars)
    else:
        path = Path(args.file)
        if path.is_dir():
            raise InputError(f"{path} is a directory; give a JSON or JSON Lines file (or - for stdin)")
        if not path.is_file():
            raise InputError(f"{path}: no such file")
        with path.open("rb") as fh:
            records = read_records(fh, str(path), max_context_chars=args.max_context_chars)
    evaluator = _evaluator(args)
    if gates.get("faithfulness") == "auto":  # a policy file's "auto": the model's stored threshold
        check = evaluator.faithfulness_check
        gates["faithfulness"] = check.threshold if check is not None else 0.5
    results: list[tuple[Record, Any, list[str]]] = []
    started = time.perf_counter()
    for rec in records:
        ev = evaluator.evaluate(rec.question, rec.contexts, rec.response, rec.ground_truth)
        fails = _row_failures(ev, gates)
        results.append((rec, ev, fails))
        if fmt == "jsonl":
            row = _row_json(rec, ev, args.details)
            if gates:
                row["failed"] = fails
            sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
            sys.stdout.flush()
    # the gate: any row below a threshold, or the mean below it, fails the run
    summary = []
    failed = sum(1 for *_, f in results if f)
    mean_fails = []
    for name, limit in gates.items():
        values = [v for _, ev, _ in results if (v := _metric(ev, name)) is not None]
        mean = sum(values) / len(values) if values else None
        if mean is not None and mean < limit:
            mean_fails.append(f"mean {name} {mean:.3f} < {limit:.3f}")
        summary.append(f"{name}: mean {_fmt(mean).strip()} over {len(values)} rows, "
                       f"{sum(v < limit for v in values)} below {limit:.3f}")
    ok = not failed and not mean_fails
    if gates:
        summary.insert(0, f"{'PASSED' if ok else 'FAILED'}: {failed} of {len(results)} rows below a threshold"
                          + (f"; {'; '.join(mean_fails)}" if mean_fails else ""))
    if fmt == "table":
        _print_table([(r, ev) for r, ev, _ in results], sys.stdout, details=args.details)
    elif fmt == "json":
        rows = [{**_row_json(r, ev, args.details), **({"failed": f} if gates else {})} for r, ev, f in results]
        sys.stdout.write(json.dumps(rows, ensure_ascii=False, indent=2) + "\n")
    elif fmt == "junit":
        _junit(results, sys.stdout, time.perf_counter() - started)
    elif fmt == "markdown":
        _markdown(results, sys.stdout, summary)
    if gates and fmt != "markdown":
        print("\n".join(summary), file=sys.stderr if fmt in ("json", "jsonl", "junit") else sys.stdout)
    return 0 if ok else 1


def _read_rows(path: Path, subset: str | None, limit: int | None) -> list[dict[str, Any]]:
    import gzip

    if not path.is_file():
        raise InputError(f"{path}: no such file" + (" (it is a directory)" if path.is_dir() else ""))
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    text = _decode(raw, str(path))
    if text.lstrip().startswith("["):
        rows = json.loads(text)
    else:
        rows = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise InputError(f"{path}: line {n}: invalid JSON ({exc.msg})") from None
    if not all(isinstance(r, dict) for r in rows):
        raise InputError(f"{path}: every row must be a JSON object")
    if subset:
        rows = [r for r in rows if r.get(subset)]
    return rows[:limit] if limit else rows


def cmd_eval(args: argparse.Namespace) -> int:
    from guardrail.judge.client import Judge
    from guardrail.judge.evaluate import print_summary, run, summary

    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    rows = _read_rows(Path(args.data), args.subset, args.limit)
    out = Path(args.out) if args.out else Path(args.data).with_suffix("").with_suffix(".eval.jsonl")
    gates: dict[str, float] = {}
    for spec in args.fail_under or ():
        name, sep, value = spec.partition("=")
        try:
            gates[name.strip()] = float(value) if sep else float("nan")
        except ValueError:
            raise InputError(f"--fail-under {spec!r}: expected METRIC=VALUE") from None
        if name.strip() not in metrics or gates[name.strip()] != gates[name.strip()]:
            raise InputError(f"--fail-under {spec!r}: expected METRIC=VALUE with METRIC one of --metrics")
    judge = Judge(args.model, base_url=args.base_url or os.environ.get("OPENAI_BASE_URL"),
                  api_key=args.api_key or os.environ.get("OPENAI_API_KEY"), timeout=args.timeout,
                  max_retries=args.max_retries, max_concurrency=args.workers, cache_path=args.cache or None,
                  prompts_dir=args.prompts)
    price = None
    if args.price:
        try:
            prompt_price, completion_price = (float(x) for x in args.price.split(","))
        except ValueError:
            raise InputError(f"--price {args.price!r}: expected PROMPT,COMPLETION in USD per million tokens, "
                             "e.g. --price 0.15,0.60") from None
        if prompt_price < 0 or completion_price < 0:
            raise InputError(f"--price {args.price!r}: prices cannot be negative")
        price = (prompt_price, completion_price)
    results = run(rows, metrics, judge, out, criteria=args.criteria, workers=args.workers)
    table = summary(results, metrics)
    print_summary(table, sys.stdout, price=price)
    print(f"results: {out}")
    failed = [f"{r['metric']} mean {r['mean']:.3f} < {gates[r['metric']]:.3f}" for r in table
              if r["metric"] in gates and r["mean"] is not None and r["mean"] < gates[r["metric"]]]
    if failed:
        print("FAILED: " + "; ".join(failed))
        return 1
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from guardrail.training.export import export_onnx, quantize_int8

    src = args.model
    if src == "minilm":
        from guardrail.training.train import resolve_base_model

        src = resolve_base_model("minilm")
    elif not Path(src).is_dir():
        raise InputError(f"model directory {src!r} does not exist; export takes a Hugging Face model directory "
                         "(config.json and weights, e.g. a run's best/ folder) or 'minilm'")
    out = Path(args.out)
    path = export_onnx(Path(src), out, args.task)
    print(f"wrote {path}")
    if args.int8:
        print(f"wrote {quantize_int8(path)}")
        if args.drop_fp32:
            path.unlink()
            print(f"removed {path} (shipping int8 only)")
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    from guardrail.training.train import run

    try:
        return _train(run, args)
    except (FileNotFoundError, FileExistsError, ValueError) as exc:
        raise InputError(str(exc)) from None


def _train(run: Any, args: argparse.Namespace) -> int:
    if args.resume:
        if args.config or args.out or args.corpus:
            raise InputError("--resume RUN_DIR continues a run with its own saved config; drop --config/--out/--corpus")
        result = run(None, Path(args.resume), resume=True, max_steps=args.max_steps, epochs=args.epochs)
    else:
        if not (args.config and args.out):
            raise InputError("a new run needs --config and --out (or continue one with --resume RUN_DIR)")
        result = run(Path(args.config), Path(args.out), corpus=args.corpus, max_steps=args.max_steps)
    print(json.dumps({k: v for k, v in result.items() if k != "history"}))
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    from guardrail.training.calibrate import calibrate, load_rows

    rows = load_rows(
        [Path(b) for b in args.bench], exclude=args.exclude or (), only=args.only or (), limit_per_file=args.limit_per_file
    )
    if not rows:
        raise InputError("no rows left to calibrate on after --exclude/--only")
    meta = calibrate(Path(args.model), rows, mode=args.mode)
    print(json.dumps(meta, indent=2))
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    import dataclasses
    import tempfile

    import uvicorn

    from guardrail.server import CONFIG_ENV, ServeConfig, build_app

    if bool(args.upstream) == bool(args.demo):
        raise InputError("give either --upstream URL (an OpenAI-compatible base URL ending in /v1) or --demo")
    if args.upstream:
        from urllib.parse import urlsplit

        parts = urlsplit(args.upstream)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise InputError(f"--upstream {args.upstream!r} is not an http(s) URL; give the model server's "
                             "OpenAI-compatible base URL, e.g. http://127.0.0.1:8001/v1")
    threads = env_threads()
    cfg = ServeConfig(
        upstream=args.upstream, demo=args.demo, policy_file=args.policy, action=args.action, on_error=args.on_error,
        nli_model=args.nli_model
        or os.environ.get("GUARDRAIL_NLI_MODEL") or None, backend=args.backend, route_name=args.route_name,
        model_label=args.model_label, timeout=args.timeout, threads=threads,
        upstream_api_key=os.environ.get("GUARDRAIL_UPSTREAM_API_KEY"), multiprocess=args.workers > 1,
        judge_model=args.judge_model, judge_base_url=args.judge_base_url,
        judge_api_key=os.environ.get("GUARDRAIL_JUDGE_API_KEY"),
        judge_metrics=tuple(m.strip() for m in args.judge_metrics.split(",") if m.strip()), judge_rate=args.judge_rate,
    )
    target = "the built-in demo upstream" if args.demo else args.upstream
    print(f"guardrail gateway on http://{args.host}:{args.port}/v1 -> {target} ({args.workers} worker(s)); "
          "metrics at /metrics", file=sys.stderr)
    if args.workers == 1:
        uvicorn.run(build_app(cfg), host=args.host, port=args.port, log_level="warning")
        return 0
    # several processes: prometheus_client multiprocess mode needs its directory before the workers import it
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="guardrail-metrics-")
    os.environ[CONFIG_ENV] = json.dumps(dataclasses.asdict(cfg))
    uvicorn.run("guardrail.server:app_from_env", factory=True, workers=args.workers, host=args.host, port=args.port,
                log_level="warning")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="guardrail", description="Real-time guardrails for RAG answers.")
    sub = parser.add_subparsers(dest="command", required=True)

    check = sub.add_parser("check", help="score {id, question, contexts, response} records (JSON or JSONL)")
    check.add_argument("file", help="JSON/JSONL file, or - for stdin")
    check.add_argument("--json", action="store_true", help="same as --format jsonl")
    check.add_argument("--details", action="store_true",
                       help="every checked sentence with its evidence (table), or the full evidence (json/jsonl)")
    check.add_argument("--nli-model", help="NLI model directory or hub id (default: $GUARDRAIL_NLI_MODEL, then the shipped model)")
    check.add_argument("--embedding-model", help="embedding model directory or hub id (default: shipped all-MiniLM-L6-v2)")
    check.add_argument("--backend", choices=["onnx", "torch"], default="onnx")
    check.add_argument("--mode", choices=["candidates", "exhaustive"], default="candidates", help="premise selection")
    check.add_argument("--checks", help="comma-separated subset of faithfulness,retrieval_relevance,response_relevance")
    check.add_argument("--max-context-chars", type=int, default=1_000_000)
    check.add_argument("--format", choices=["table", "json", "jsonl", "junit", "markdown"], default="table",
                       help="table (default), json (one array), jsonl (one object a row, streamed), junit (XML for CI: "
                            "failing rows are failing tests), markdown (for a pull-request comment)")
    check.add_argument("--fail-under", action="append", metavar="METRIC=VALUE",
                       help="exit 1 when any row, or the mean, is below VALUE (repeatable; METRIC: faithfulness, "
                            "retrieval_relevance, response_relevance)")
    check.add_argument("--policy", help="take --fail-under thresholds from a policy file (JSON or TOML)")
    check.set_defaults(func=cmd_check)

    ev = sub.add_parser("eval", help="LLM-judged metrics over a dataset through any OpenAI-compatible endpoint")
    ev.add_argument("data", help="JSON/JSONL(.gz) rows: question/contexts/response[/ground_truth] or Ragas names")
    ev.add_argument("--metrics", required=True,
                    help="comma-separated: context_adherence, completeness, retrieval_relevance_llm, faithfulness_claims, "
                         "answer_relevancy_statements, answer_relevancy_questions, g_eval, context_recall, "
                         "context_entities_recall, context_precision, answer_correctness, chunk_utilization")
    ev.add_argument("--model", required=True, help="the judge model name at the endpoint")
    ev.add_argument("--base-url", help="OpenAI-compatible base URL (default: $OPENAI_BASE_URL, else OpenAI)")
    ev.add_argument("--api-key", help="default: $OPENAI_API_KEY")
    ev.add_argument("--out", help="results JSONL (default: DATA.eval.jsonl); an existing one is resumed")
    ev.add_argument("--cache", default=str(Path.home() / ".cache" / "guardrail" / "judge.sqlite"),
                    help="judgment cache (SQLite); '' turns it off")
    ev.add_argument("--workers", type=int, default=4, help="rows judged at once (and the request concurrency limit)")
    ev.add_argument("--timeout", type=float, default=60.0)
    ev.add_argument("--max-retries", type=int, default=3, help="retries on 429/5xx/connection errors (Retry-After honoured)")
    ev.add_argument("--price", metavar="PROMPT,COMPLETION",
                    help="USD per million prompt and completion tokens (e.g. 0.15,0.60): adds each metric's cost "
                         "(cached judgments cost nothing) to the summary")
    ev.add_argument("--criteria", help="G-Eval criteria")
    ev.add_argument("--prompts", help="folder of prompt files overriding the shipped ones by name")
    ev.add_argument("--subset", help="keep rows where this field is true")
    ev.add_argument("--limit", type=int)
    ev.add_argument("--fail-under", action="append", metavar="METRIC=VALUE", help="exit 1 when a metric's mean is below VALUE")
    ev.set_defaults(func=cmd_eval)

    export = sub.add_parser("export", help="export a Hugging Face model directory to ONNX (needs guardrail[torch])")
    export.add_argument("model", help="model directory, or 'minilm' for the all-MiniLM-L6-v2 weights")
    export.add_argument("--out", required=True)
    export.add_argument("--task", choices=["sequence-classification", "feature-extraction"], default="sequence-classification")
    export.add_argument("--int8", action="store_true", help="also write a dynamically quantized model.int8.onnx")
    export.add_argument("--drop-fp32", action="store_true", help="with --int8: keep only model.int8.onnx")
    export.set_defaults(func=cmd_export)

    cal = sub.add_parser("calibrate", help="fit the calibrated score and threshold into MODEL/guardrail.json")
    cal.add_argument("model", help="NLI model directory (with an ONNX file)")
    cal.add_argument("--bench", nargs="+", required=True, help="labelled JSONL(.gz) files in the common format")
    cal.add_argument("--exclude", nargs="*", help="drop rows where these fields are true (keep evaluation rows out)")
    cal.add_argument("--only", nargs="*", help="keep only rows where these fields are true")
    cal.add_argument("--limit-per-file", type=int, help="at most this many rows from each file (balance the sources)")
    cal.add_argument("--mode", choices=["candidates", "exhaustive"], default="candidates")
    cal.set_defaults(func=cmd_calibrate)

    srv = sub.add_parser("serve", help="run the guarded OpenAI-compatible gateway")
    srv.add_argument("--upstream", help="upstream OpenAI-compatible base URL, e.g. http://127.0.0.1:8001/v1")
    srv.add_argument("--demo", action="store_true", help="use the built-in demo upstream and documents (offline)")
    srv.add_argument("--host", default="127.0.0.1")
    srv.add_argument("--port", type=int, default=8000)
    srv.add_argument("--policy", help="policy file (JSON or TOML); default: --action with default thresholds")
    srv.add_argument("--action", choices=["pass", "flag", "block", "fallback"], default="block")
    srv.add_argument("--judge-model", help="shadow judging: an LLM judges a sampled share of answers in the background "
                                          "(never delaying them); scores in guardrail_judge_score{judge=...}")
    srv.add_argument("--judge-base-url", help="the judge's OpenAI-compatible base URL (key: $GUARDRAIL_JUDGE_API_KEY)")
    srv.add_argument("--judge-metrics", default="context_adherence", help="comma-separated judge metrics")
    srv.add_argument("--judge-rate", type=float, default=0.1, help="share of answers judged (0..1)")
    srv.add_argument("--on-error", choices=["fail_closed", "fail_open"],
                     help="answers that cannot be read, judged or scored in time: fail_closed treats them as failing "
                          "(the default in block/fallback mode), fail_open delivers them marked unchecked (default in "
                          "flag mode)")
    srv.add_argument("--nli-model", help="NLI model directory or hub id (default: the shipped model)")
    srv.add_argument("--backend", choices=["onnx", "torch"], default="onnx")
    srv.add_argument("--route-name", default="gateway", help="the 'route' label of the metrics")
    srv.add_argument("--model-label", default="upstream", help="the 'model' label of the metrics")
    srv.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for the upstream")
    srv.add_argument("--workers", type=int, default=1,
                     help="worker processes (metrics are aggregated with PROMETHEUS_MULTIPROC_DIR)")
    srv.set_defaults(func=cmd_serve)

    train = sub.add_parser("train", help="fine-tune an NLI cross-encoder (needs guardrail[train])")
    train.add_argument("--config", help="JSON training config, e.g. configs/nli-minilm-l6.json")
    train.add_argument("--out", help="run directory (checkpoints, metrics); keep it outside the checkout")
    train.add_argument("--corpus", help="folder of .txt files: add synthetic pairs from your own documents")
    train.add_argument("--resume", metavar="RUN_DIR",
                       help="continue a stopped run exactly where its last checkpoint left it (model, optimizer, "
                            "scheduler, RNG, data position)")
    train.add_argument("--epochs", type=float,
                       help="with --resume: a new length for the run (the learning-rate decay is stretched or shortened "
                            "from the current step)")
    train.add_argument("--max-steps", type=int,
                       help="stop after this many steps in total (the schedule still spans the whole run); "
                            "continue later with --resume")
    train.set_defaults(func=cmd_train)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except GuardrailError as exc:
        print(f"guardrail: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. piped into head
        return 0


if __name__ == "__main__":
    sys.exit(main())
