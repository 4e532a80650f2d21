"""The ``guardrail`` command: its parser and ``main``. Each command lives in its own module of this package."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from guardrail.cli.check import cmd_check, ray_address
from guardrail.cli.eval import cmd_eval
from guardrail.cli.model import cmd_calibrate, cmd_export, cmd_train
from guardrail.cli.serve import cmd_serve
from guardrail.cli.serve_scorer import serve_scorer_parser
from guardrail.errors import GuardrailError

__all__ = ["build_parser", "main"]

Sub = argparse._SubParsersAction  # the subcommands of build_parser


def _check_parser(sub: Sub[argparse.ArgumentParser]) -> None:
    check = sub.add_parser(
        "check", help="score and gate {id, question, contexts, response} records (JSON or JSONL)",
        description="Score each record and decide it with the policy, as the guard and the gateway do: by default "
                    "the default policy (faithfulness 'auto' = the NLI model's threshold, any unsupported sentence "
                    "fails the row; retrieval relevance 0.2). Exit 0: every row passed; 1: a row failed or could "
                    "not be checked; 2: bad input.")
    check.add_argument("file", help="JSON/JSONL file, or - for stdin; field names of Ragas (user_input, "
                                    "retrieved_contexts, response, reference) and DeepEval (input, actual_output, "
                                    "retrieval_context, expected_output) are read too")
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
                       help="override a threshold of the policy (repeatable; METRIC: faithfulness, "
                            "retrieval_relevance, response_relevance; VALUE within 0..1, or auto for faithfulness: "
                            "the NLI model's own threshold)")
    check.add_argument("--policy", help="decide with this policy file (JSON or TOML): its thresholds and aggregate")
    check.add_argument("--html", metavar="FILE",
                       help="also write one self-contained HTML report: summary, score histograms, every row sortable "
                            "by score, failing rows with their unsupported sentences beside the best evidence")
    check.add_argument("--ray", nargs="?", const="local", type=ray_address, metavar="ADDRESS",
                       help="check the rows on Ray Data, over a pool of actors (one model load each): same output. "
                            "Without ADDRESS a local Ray is started for the run; auto or ray://HOST:PORT: a cluster "
                            "(needs guardrail[ray]; put --ray after FILE)")
    check.add_argument("--ray-actors", type=int, metavar="N",
                       help="with --ray: actors in the pool, one CPU each (default: one per CPU of the Ray cluster)")
    check.add_argument("--scorer-url", metavar="URL",
                       help="run the forward passes on a shared scorer pool (guardrail serve-scorer, or any Open "
                            "Inference Protocol v2 server hosting the models), e.g. http://127.0.0.1:8100")
    check.set_defaults(func=cmd_check)


def _eval_parser(sub: Sub[argparse.ArgumentParser]) -> None:
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


def _model_parsers(sub: Sub[argparse.ArgumentParser]) -> None:
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


def _train_parser(sub: Sub[argparse.ArgumentParser]) -> None:
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


def _serve_parser(sub: Sub[argparse.ArgumentParser]) -> None:
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
    srv.add_argument("--scorer-url", metavar="URL",
                     help="run the forward passes on a shared scorer pool (guardrail serve-scorer, or any Open "
                          "Inference Protocol v2 server hosting the models), e.g. http://127.0.0.1:8100; the "
                          "tokenizers stay local (--nli-model: the directory of the model the pool runs)")
    srv.add_argument("--scorer-timeout", type=float, default=10.0,
                     help="with --scorer-url: seconds per scorer request before it is retried")
    srv.add_argument("--scorer-retries", type=int, default=2,
                     help="with --scorer-url: retries after a connection error, timeout or 5xx (then --on-error applies)")
    srv.add_argument("--route-name", default="gateway", help="the 'route' label of the metrics")
    srv.add_argument("--model-label", default="upstream", help="the 'model' label of the metrics")
    srv.add_argument("--timeout", type=float, default=60.0,
                     help="seconds to wait for each read of the upstream's answer (the whole answer: --upstream-deadline)")
    srv.add_argument("--upstream-deadline", type=float, default=600.0, metavar="SECONDS",
                     help="total seconds for one upstream answer, headers and whole body or stream (a body not "
                          "complete by then: 504 upstream_timeout; a stream: ends with an error event)")
    srv.add_argument("--upstream-connections", type=int, default=100, metavar="N",
                     help="requests open to the upstream at once, per worker (more wait for a free connection up to "
                          "--timeout, then 504)")
    srv.add_argument("--upstream-retries", type=int, default=2, metavar="N",
                     help="times a request is sent again when the upstream's connection failed before any byte of "
                          "an answer (refused, reset, closed as it was reused), as the OpenAI SDKs do; never after a "
                          "timeout or once an answer began")
    srv.add_argument("--workers", type=int, default=1,
                     help="worker processes (metrics are aggregated with PROMETHEUS_MULTIPROC_DIR)")
    srv.add_argument("--max-response-chars", type=int, default=100_000,
                     help="longest answer checked, in characters (a longer one is unchecked and follows --on-error)")
    srv.add_argument("--max-contexts", type=int, default=256, help="retrieved chunks per request (more: 400)")
    srv.add_argument("--max-context-chars", type=int, default=100_000,
                     help="characters of a request's chunks together (more: 400)")
    srv.add_argument("--max-body-bytes", type=int, default=10 * 1024 * 1024, help="request body size (more: 413)")
    srv.add_argument("--max-stream-events", type=int, default=100_000,
                     help="events of an upstream stream, comments and keep-alives included (more: unreadable)")
    srv.add_argument("--log-level", choices=["debug", "info", "warning", "error"], default="info",
                     help="info logs one line per guarded request (route, status, action, scores, check and "
                          "upstream time)")
    srv.add_argument("--log-format", choices=["json", "text"], default="json",
                     help="json: one JSON object per line; text: key=value pairs")
    srv.set_defaults(func=cmd_serve)


def build_parser() -> argparse.ArgumentParser:
    from guardrail import __version__

    parser = argparse.ArgumentParser(prog="guardrail", description="Real-time guardrails for RAG answers.")
    parser.add_argument("--version", action="version", version=f"guardrail {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    _check_parser(sub)
    _eval_parser(sub)
    _model_parsers(sub)
    _serve_parser(sub)
    serve_scorer_parser(sub)
    _train_parser(sub)
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
