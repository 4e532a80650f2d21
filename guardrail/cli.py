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


def _print_table(results: Sequence[tuple[Record, Any]], out: TextIO) -> None:
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
        for s in faith.unsupported if faith else ():
            where = ""
            if s.sentence is not None:
                snippet = s.sentence.text if len(s.sentence.text) < 90 else s.sentence.text[:87] + "..."
                where = f"; best: chunk {s.sentence.chunk} \"{snippet}\""
            contra = "" if s.contradiction is None else f", contradiction {s.contradiction:.2f}"
            terms = f"; not in context: {', '.join(s.unsupported_terms)}" if s.unsupported_terms else ""
            out.write(f"{'':<{w}}    sentence {s.index + 1} \"{s.text}\": entailment {s.entailment:.2f}{contra}{where}{terms}\n")


def _evaluator(args: argparse.Namespace) -> Any:
    from guardrail.checks.evaluator import CHECKS, Evaluator
    from guardrail.checks.faithfulness import FaithfulnessConfig
    from guardrail.scorers.embedding import EmbeddingScorer
    from guardrail.scorers.nli import NLIScorer, default_nli_model

    checks = [c.strip() for c in args.checks.split(",")] if args.checks else list(CHECKS)
    threads = int(os.environ["GUARDRAIL_THREADS"]) if os.environ.get("GUARDRAIL_THREADS") else None
    nli = None
    if "faithfulness" in checks:
        model = args.nli_model or os.environ.get("GUARDRAIL_NLI_MODEL") or default_nli_model()
        nli = NLIScorer(model, backend=args.backend, threads=threads)
    embedder = EmbeddingScorer(args.embedding_model, backend="onnx" if args.embedding_model is None else args.backend, threads=threads)
    config = FaithfulnessConfig(mode=args.mode, max_context_chars=args.max_context_chars)
    return Evaluator(nli=nli, embedder=embedder, checks=checks, faithfulness=config)


def cmd_check(args: argparse.Namespace) -> int:
    if args.file == "-":
        records = read_records(sys.stdin.buffer, "<stdin>", max_context_chars=args.max_context_chars)
    else:
        path = Path(args.file)
        if not path.is_file():
            raise InputError(f"{path}: no such file")
        with path.open("rb") as fh:
            records = read_records(fh, str(path), max_context_chars=args.max_context_chars)
    evaluator = _evaluator(args)
    results = []
    for rec in records:
        ev = evaluator.evaluate(rec.question, rec.contexts, rec.response, rec.ground_truth)
        if args.json:
            row = {"id": rec.id, **ev.to_dict()}
            if not args.details:
                row.pop("details")
                row["unsupported_sentences"] = [
                    {"index": s.index, "text": s.text, "entailment": s.entailment, "contradiction": s.contradiction}
                    for s in (ev.faithfulness.unsupported if ev.faithfulness else ())
                ]
            sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
            sys.stdout.flush()
        else:
            results.append((rec, ev))
    if not args.json:
        _print_table(results, sys.stdout)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from guardrail.training.export import export_onnx, quantize_int8

    src = args.model
    if src == "minilm":
        from guardrail.training.train import resolve_base_model

        src = resolve_base_model("minilm")
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
    threads = int(os.environ["GUARDRAIL_THREADS"]) if os.environ.get("GUARDRAIL_THREADS") else None
    cfg = ServeConfig(
        upstream=args.upstream, demo=args.demo, policy_file=args.policy, action=args.action, on_error=args.on_error,
        nli_model=args.nli_model
        or os.environ.get("GUARDRAIL_NLI_MODEL") or None, backend=args.backend, route_name=args.route_name,
        model_label=args.model_label, timeout=args.timeout, threads=threads,
        upstream_api_key=os.environ.get("GUARDRAIL_UPSTREAM_API_KEY"), multiprocess=args.workers > 1,
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
    check.add_argument("--json", action="store_true", help="one JSON object per input instead of a table")
    check.add_argument("--details", action="store_true", help="with --json: full per-sentence evidence")
    check.add_argument("--nli-model", help="NLI model directory or hub id (default: $GUARDRAIL_NLI_MODEL, then the shipped model)")
    check.add_argument("--embedding-model", help="embedding model directory or hub id (default: shipped all-MiniLM-L6-v2)")
    check.add_argument("--backend", choices=["onnx", "torch"], default="onnx")
    check.add_argument("--mode", choices=["candidates", "exhaustive"], default="candidates", help="premise selection")
    check.add_argument("--checks", help="comma-separated subset of faithfulness,retrieval_relevance,response_relevance")
    check.add_argument("--max-context-chars", type=int, default=1_000_000)
    check.set_defaults(func=cmd_check)

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
