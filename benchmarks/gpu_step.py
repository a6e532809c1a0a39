"""Where a GRPO step's time goes: a few ``SandboxGRPOTrainer`` steps on HumanEval, with a model built from a config.

No hub: the tokenizer is trained here on the bundled task texts (:func:`trl_sandbox.tiny.build_tiny_tokenizer`) and
the model is a Qwen3 causal LM built from a config of ``--size`` (random weights, bf16 on a GPU). A random model writes
random tokens, whose scoring is only a syntax error; so, unless ``--warm-steps 0``, a short supervised warm start on
the HumanEval canonical solutions first teaches it to write code (it then memorises some of them: this measures
throughput, not a model). GRPO then trains ``--steps`` steps on the HumanEval prompts (string prompts, the
completion continues the function), generation by transformers (TRL's ``model.generate`` path, no vLLM), rewards
from the local backend's sandboxes (:data:`trl_sandbox.code_reward`, every completion run against its tests).

Each phase is timed on the main thread with wrappers around the methods that do it (``torch.cuda.synchronize()``
before and after each on a GPU, so that queued kernels are charged to the phase that queued them):

- ``generation``: TRL's ``GRPOTrainer._generate`` (prompt tokenization, ``model.generate``, decoding);
- ``scoring (host)``: ``GRPOTrainer._calculate_rewards`` less the time in ``Scorer.score``: the reward function's
  own work on the trainer's thread (tasks rebuilt from the rows, metrics), and TRL's gather of the rewards;
- ``waiting for scoring``: the time in ``Scorer.score``: the batch's executions in the sandboxes, while the training
  loop is blocked (the reward is synchronous);
- ``logprobs, advantages``: the rest of ``GRPOTrainer._generate_and_score_completions`` (padding, old or reference
  log-probabilities when the config computes them, advantages, TRL's metrics);
- ``forward (loss)``: ``GRPOTrainer.compute_loss``; ``backward``: ``accelerator.backward``;
- ``optimizer``: from the ``on_pre_optimizer_step`` callback to ``on_optimizer_step`` (``optimizer.step()``);
- ``other``: the step's wall-clock time less the phases above (gradient clipping, the scheduler, logging, callbacks,
  the data loader).

A step's wall-clock time runs from the end of the previous step (the first: from the start of training, after the
sandbox pool started). The table covers the steps after the first ``--skip`` (warm-up: CUDA kernels, allocator):
total seconds, seconds per step, share of the steps' wall-clock time in %.

    python benchmarks/gpu_step.py                       # on a GPU: --size 300m, bf16, 64 completions a step
    python benchmarks/gpu_step.py --tiny                # on a CPU: the tiny model, 2 steps, a minute or less
    python benchmarks/gpu_step.py --json step.json      # the same table as JSON too
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
sys.path.insert(0, str(Path(__file__).parent))
from _common import progress, table  # noqa: E402

#: Qwen3 shapes by ``--size``; the names give the parameter count with a 1024-token vocabulary, about.
SIZES = {
    "tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, head_dim=16),
    "20m": dict(hidden_size=512, intermediate_size=1536, num_hidden_layers=6, num_attention_heads=8,
                num_key_value_heads=4, head_dim=64),
    "90m": dict(hidden_size=768, intermediate_size=2560, num_hidden_layers=12, num_attention_heads=12,
                 num_key_value_heads=4, head_dim=64),
    "300m": dict(hidden_size=1024, intermediate_size=3072, num_hidden_layers=24, num_attention_heads=16,
                 num_key_value_heads=8, head_dim=64),
    "450m": dict(hidden_size=1024, intermediate_size=3072, num_hidden_layers=28, num_attention_heads=16,
                 num_key_value_heads=8, head_dim=128),
}
#: The phases of the table, in order.
PHASES = ("generation", "scoring (host)", "waiting for scoring", "logprobs, advantages", "forward (loss)", "backward",
          "optimizer", "other")


def build_model(size: str, dtype: Any, seed: int = 0) -> tuple[Any, Any]:
    """A random Qwen3 causal LM of ``SIZES[size]`` in ``dtype`` and the locally trained tokenizer (1024 tokens)."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    from trl_sandbox.tiny import build_tiny_tokenizer

    tokenizer = build_tiny_tokenizer()
    config = Qwen3Config(
        vocab_size=len(tokenizer), max_position_embeddings=4096, tie_word_embeddings=True,
        bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
        **SIZES[size],
    )
    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(config).to(dtype)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return model, tokenizer


def warm_start(model: Any, tokenizer: Any, rows: list[dict], steps: int, device: Any, *, batch_size: int = 16,
               learning_rate: float = 5e-4, seed: int = 0) -> list[float]:
    """``steps`` AdamW steps of next-token loss on ``rows``' canonical solutions (the prompt masked out), on
    ``device``, as :func:`trl_sandbox.tiny.warm_start` does on a CPU, with the learning rate warmed up linearly over
    the first tenth of the steps and gradients clipped at norm 1. Returns the loss of every step."""
    import torch

    rng = random.Random(seed)
    from trl_sandbox.tiny import padded_batch, supervised_examples

    examples = supervised_examples(tokenizer, rows)
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    warmup = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / warmup))
    model.train()
    losses = []
    for _ in range(steps):
        batch = [rng.choice(examples) for _ in range(batch_size)]
        input_ids, labels, attention = padded_batch(batch, tokenizer.pad_token_id, device)
        loss = model(input_ids=input_ids, attention_mask=attention, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item())
    del optimizer, schedule
    model.eval()
    return losses


class PhaseClock:
    """Inclusive seconds per timed method, on the main thread, with ``sync()`` (``torch.cuda.synchronize`` on a GPU)
    before and after each call; :meth:`snapshot` closes a step."""

    def __init__(self, sync: Any) -> None:
        self.sync = sync
        self.inclusive: dict[str, float] = defaultdict(float)
        self.steps: list[dict[str, float]] = []  # per step: inclusive seconds by name, and "wall"
        self._last = 0.0
        self._optimizer_t0 = 0.0

    def wrap(self, name: str, fn: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.sync()
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.sync()
                self.inclusive[name] += time.perf_counter() - t0

        return timed

    def begin(self) -> None:
        self.sync()
        self.inclusive.clear()
        self._last = time.perf_counter()

    def optimizer_begin(self) -> None:
        self.sync()
        self._optimizer_t0 = time.perf_counter()

    def optimizer_end(self) -> None:
        self.sync()
        self.inclusive["optimizer"] += time.perf_counter() - self._optimizer_t0

    def snapshot(self) -> None:
        self.sync()
        now = time.perf_counter()
        self.steps.append({**self.inclusive, "wall": now - self._last})
        self.inclusive.clear()
        self._last = now


def exclusive(step: dict[str, float]) -> dict[str, float]:
    """The phases of :data:`PHASES` (exclusive seconds) from one step's inclusive timings."""
    get = step.get
    phases = {
        "generation": get("generate", 0.0),
        "scoring (host)": get("rewards", 0.0) - get("score", 0.0),
        "waiting for scoring": get("score", 0.0),
        "logprobs, advantages": get("generate_and_score", 0.0) - get("generate", 0.0) - get("rewards", 0.0),
        "forward (loss)": get("loss", 0.0),
        "backward": get("backward", 0.0),
        "optimizer": get("optimizer", 0.0),
    }
    phases["other"] = get("wall", 0.0) - get("generate_and_score", 0.0) - sum(
        get(k, 0.0) for k in ("loss", "backward", "optimizer"))
    return phases


def summarize(steps: list[dict[str, float]]) -> list[dict[str, Any]]:
    """The table's rows: per phase, total seconds over ``steps``, seconds per step, share of their wall time (%)."""
    totals = defaultdict(float)
    wall = sum(s["wall"] for s in steps)
    for step in steps:
        for name, seconds in exclusive(step).items():
            totals[name] += seconds
    n = max(1, len(steps))
    rows = [{"phase": name, "total s": totals[name], "per step s": totals[name] / n,
             "share %": 100.0 * totals[name] / wall if wall else 0.0} for name in PHASES]
    rows.append({"phase": "step (wall clock)", "total s": wall, "per step s": wall / n, "share %": 100.0})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tiny", action="store_true", help="the CPU mode: tiny model, small batch, 2 steps")
    parser.add_argument("--size", choices=sorted(SIZES), help="model shape (default: 300m on a GPU, tiny with --tiny)")
    parser.add_argument("--steps", type=int, help="GRPO steps (default 6; 2 with --tiny)")
    parser.add_argument("--skip", type=int, default=1, help="first steps left out of the table (warm-up)")
    parser.add_argument("--batch", type=int, help="completions per step (default 64; 8 with --tiny)")
    parser.add_argument("--generations", type=int, help="completions per prompt (default 8; 4 with --tiny)")
    parser.add_argument("--max-completion-length", type=int, help="tokens (default 256; 32 with --tiny)")
    parser.add_argument("--warm-steps", type=int, help="supervised warm-start steps (default 100; 0 with --tiny)")
    parser.add_argument("--warm-lr", type=float, default=5e-4, help="the warm start's peak learning rate")
    parser.add_argument("--pool-size", type=int, help="sandboxes (default: the CPU count, at most 16; 2 with --tiny)")
    parser.add_argument("--backend-options", default="{}", help="JSON: sandbox_backend_options (e.g. root_dir)")
    parser.add_argument("--allow-weak-isolation", action="store_true",
                        help="run the sandboxes even where the kernel cannot hold every isolation layer")
    parser.add_argument("--cpu", action="store_true", help="train on the CPU even where a GPU is present")
    parser.add_argument("--json", type=Path, help="also write the results as JSON to this file")
    args = parser.parse_args(argv)
    tiny = args.tiny
    args.size = args.size or ("tiny" if tiny else "300m")
    args.steps = args.steps or (2 if tiny else 6)
    args.batch = args.batch or (8 if tiny else 64)
    args.generations = args.generations or (4 if tiny else 8)
    args.max_completion_length = args.max_completion_length or (32 if tiny else 256)
    args.warm_steps = args.warm_steps if args.warm_steps is not None else (0 if tiny else 100)
    args.pool_size = args.pool_size or (2 if tiny else min(os.cpu_count() or 1, 16))
    if args.batch % args.generations:
        parser.error("--batch must be a multiple of --generations")
    if args.skip >= args.steps:
        parser.error("--skip must be less than --steps")
    tmp = Path(tempfile.mkdtemp(prefix="trl-sandbox-gpu-step-"))
    try:
        return run(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(args: argparse.Namespace, tmp: Path) -> int:
    import torch
    import transformers
    import trl
    from datasets import Dataset
    from transformers import PrinterCallback, ProgressCallback, TrainerCallback

    from trl_sandbox import SandboxGRPOConfig, SandboxGRPOTrainer, code_reward
    from trl_sandbox.loading import load_tasks

    cuda = torch.cuda.is_available() and not args.cpu
    device = torch.device("cuda" if cuda else "cpu")
    dtype = torch.bfloat16 if cuda else torch.float32
    if not cuda:
        torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    device_name = torch.cuda.get_device_name(0) if cuda else f"CPU ({platform.processor() or platform.machine()}, " \
                                                             f"{os.cpu_count()} cores)"
    progress(f"building the {args.size} model ({'bf16' if cuda else 'fp32'}) on {device_name}")
    t0 = time.perf_counter()
    model, tokenizer = build_model(args.size, dtype)
    model.to(device)
    params = sum(p.numel() for p in model.parameters())
    build_s = time.perf_counter() - t0
    rows = load_tasks("humaneval")
    rows = [{k: r[k] for k in ("task_id", "prompt", "canonical_solution", "test", "entry_point")} for r in rows]
    warm_losses: list[float] = []
    t0 = time.perf_counter()
    if args.warm_steps:
        progress(f"warm start: {args.warm_steps} supervised steps on the canonical solutions")
        warm_losses = warm_start(model, tokenizer, rows, args.warm_steps, device, learning_rate=args.warm_lr)
        sync()
    warm_s = time.perf_counter() - t0

    options = json.loads(args.backend_options)
    config = SandboxGRPOConfig(
        output_dir=str(tmp / "out"), report_to="none", use_cpu=not cuda, bf16=cuda,
        per_device_train_batch_size=args.batch, num_generations=args.generations,
        max_completion_length=args.max_completion_length, max_steps=args.steps, logging_steps=1,
        save_strategy="no", seed=0, disable_tqdm=True, learning_rate=1e-6,
        sandbox_backend="local", sandbox_pool_size=args.pool_size, sandbox_backend_options=options,
        sandbox_allow_weak_isolation=args.allow_weak_isolation,
    )
    clock = PhaseClock(sync)
    logged: list[dict[str, Any]] = []

    class Timing(TrainerCallback):
        def on_train_begin(self, *a: Any, **k: Any) -> None:
            clock.begin()

        def on_pre_optimizer_step(self, *a: Any, **k: Any) -> None:
            clock.optimizer_begin()

        def on_optimizer_step(self, *a: Any, **k: Any) -> None:
            clock.optimizer_end()

        def on_step_end(self, *a: Any, **k: Any) -> None:
            clock.snapshot()

        def on_log(self, args: Any, state: Any, control: Any, logs: dict | None = None, **k: Any) -> None:
            if logs:
                logged.append(dict(logs))

    trainer = SandboxGRPOTrainer(model=model, reward_funcs=[code_reward], args=config,
                                 train_dataset=Dataset.from_list(rows), processing_class=tokenizer,
                                 callbacks=[Timing()])
    trainer.remove_callback(ProgressCallback)
    trainer.remove_callback(PrinterCallback)  # one printed dict per step otherwise
    trainer._generate_and_score_completions = clock.wrap("generate_and_score", trainer._generate_and_score_completions)
    trainer._generate = clock.wrap("generate", trainer._generate)
    trainer._calculate_rewards = clock.wrap("rewards", trainer._calculate_rewards)
    trainer.scorer.score = clock.wrap("score", trainer.scorer.score)
    trainer.compute_loss = clock.wrap("loss", trainer.compute_loss)
    trainer.accelerator.backward = clock.wrap("backward", trainer.accelerator.backward)
    pool_start = {}
    start_sandboxes = trainer._start_sandboxes

    def timed_start() -> None:
        t = time.perf_counter()
        start_sandboxes()
        pool_start["s"] = time.perf_counter() - t
        pool_start["layers"] = trainer.scorer.pool.backend.describe()

    trainer._start_sandboxes = timed_start
    progress(f"GRPO: {args.steps} steps of {args.batch} completions ({args.batch // args.generations} prompts x "
             f"{args.generations}), at most {args.max_completion_length} tokens, {args.pool_size} sandboxes")
    t0 = time.perf_counter()
    trainer.train()
    train_s = time.perf_counter() - t0
    if len(clock.steps) != args.steps:
        raise RuntimeError(f"timed {len(clock.steps)} steps of {args.steps}")

    measured = clock.steps[args.skip:]
    phase_rows = summarize(measured)
    step_logs = [entry for entry in logged if "sandbox/completions" in entry][args.skip:]

    def mean_of(key: str) -> float | None:
        values = [entry[key] for entry in step_logs if isinstance(entry.get(key), (int, float))]
        return sum(values) / len(values) if values else None

    result = {
        "device": device_name,
        "dtype": str(dtype).replace("torch.", ""),
        "model": {"size": args.size, "parameters": params, **SIZES[args.size], "vocab_size": len(tokenizer)},
        "batch": {"completions_per_step": args.batch, "prompts_per_step": args.batch // args.generations,
                  "generations": args.generations, "max_completion_length": args.max_completion_length,
                  "mean_completion_length": mean_of("completions/mean_length"),
                  "gradient_checkpointing": bool(getattr(config, "gradient_checkpointing", None)
                                                 or getattr(config, "activation_checkpointing", None))},
        "steps": args.steps, "skipped": args.skip,
        "phases": [{"phase": r["phase"], "total_s": r["total s"], "per_step_s": r["per step s"],
                    "share_pct": r["share %"]} for r in phase_rows],
        "step_wall_s": [s["wall"] for s in clock.steps],
        "step_phases_s": [exclusive(s) for s in clock.steps],
        "sandbox": {"pool_size": args.pool_size, "pool_start_s": pool_start.get("s"),
                    "layers": pool_start.get("layers"), "pass_rate": mean_of("sandbox/pass_rate"),
                    "reward": mean_of("reward"), "batch_seconds": mean_of("sandbox/batch_seconds"),
                    "exec_seconds_mean": mean_of("sandbox/exec_seconds_mean"),
                    "errors": mean_of("sandbox/errors"), "timeouts": mean_of("sandbox/timeouts"),
                    "infra_errors": mean_of("sandbox/infra_errors")},
        "setup_s": {"model_build": build_s, "warm_start": warm_s, "train_call": train_s},
        "warm_start_loss": {"first": warm_losses[0], "last": warm_losses[-1]} if warm_losses else None,
        "versions": {"python": platform.python_version(), "torch": torch.__version__,
                     "transformers": transformers.__version__, "trl": trl.__version__},
        "cpu_count": os.cpu_count(),
    }
    print(f"device: {device_name}; torch {torch.__version__}, transformers {transformers.__version__}, "
          f"trl {trl.__version__}")
    print(f"model: Qwen3 {args.size}, {params / 1e6:.1f}M parameters, {result['dtype']}, vocabulary "
          f"{len(tokenizer)}; gradient checkpointing {result['batch']['gradient_checkpointing']}")
    mean_len = result["batch"]["mean_completion_length"]
    print(f"batch: {args.batch} completions a step = {args.batch // args.generations} HumanEval prompts x "
          f"{args.generations}, at most {args.max_completion_length} tokens"
          + (f" (mean {mean_len:.0f})" if mean_len is not None else ""))
    sandbox = result["sandbox"]
    print(f"sandboxes: {args.pool_size}, pool started in {sandbox['pool_start_s']:.2f} s; {sandbox['layers']}")
    if warm_losses:
        print(f"warm start: {args.warm_steps} steps in {warm_s:.1f} s, loss {warm_losses[0]:.2f} -> "
              f"{warm_losses[-1]:.2f}")
    fmt = {k: v for k, v in sandbox.items() if isinstance(v, float)}
    print("sandbox, mean over the steps: " + ", ".join(f"{k} {v:.3g}" for k, v in fmt.items() if k != "pool_start_s"))
    print(f"\nsteps {args.skip + 1}..{args.steps} of {args.steps} (step wall clock: "
          + ", ".join(f"{w:.2f}" for w in result["step_wall_s"]) + " s)\n")
    print(table(phase_rows, ["phase", "total s", "per step s", "share %"]))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
