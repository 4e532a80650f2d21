"""The model commands: ``guardrail export`` (ONNX), ``guardrail train`` (fine-tune) and ``guardrail calibrate``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from guardrail.errors import InputError

__all__ = ["cmd_calibrate", "cmd_export", "cmd_train"]


def cmd_export(args: argparse.Namespace) -> int:
    from guardrail.training.export import _CHECK_PAIRS, INT8_TOLERANCE, export_onnx, int8_drift, quantize_int8

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
        int8 = quantize_int8(path)
        drift = int8_drift(path, int8, args.task)
        if drift > INT8_TOLERANCE:
            # dynamic int8 breaks some encoders (an MPNet fine-tune: entailment 0.10 -> 0.57): the scorer would load
            # the int8 file, so it goes, and the fp32 model stays whatever --drop-fp32 asked
            int8.unlink()
            print(f"error: int8 quantization changes this model's outputs by {drift:.2f} (largest probability "
                  f"difference on {len(_CHECK_PAIRS)} sample pairs; at most {INT8_TOLERANCE} is accepted): removed "
                  f"{int8}, kept {path} (fp32); use the fp32 model, or quantize another way", file=sys.stderr)
            return 1
        print(f"wrote {int8} (int8 outputs within {drift:.3f} of fp32 on {len(_CHECK_PAIRS)} sample pairs)")
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
