"""Trainer overhead: ``SandboxGRPOTrainer`` against plain ``trl.GRPOTrainer`` on the tiny CPU model.

Both train ``--steps`` steps on the same prompts with the same settings. The plain trainer's reward is an
in-process function returning 1.0; the sandbox trainer's is :func:`trl_sandbox.code_reward` on the mock backend answering at
once, so that the difference is everything the sandbox trainer adds (pool lifecycle, building requests, judging
results, metrics), not the executions themselves. The table gives the median step time over the steps after the
first, median of ``--runs`` runs, and the time spent inside the reward function per step: for the sandbox
trainer with zero-time executions, that is its whole overhead (the step-time difference is within this shared
machine's noise).

    python benchmarks/trainer_overhead.py
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).parent))
from _common import median, progress, table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="trl-sandbox-overhead-"))
    try:
        return measure(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # on an error too


def measure(args: argparse.Namespace, tmp: Path) -> int:
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from trl_sandbox import SandboxGRPOConfig, SandboxGRPOTrainer, code_reward
    from trl_sandbox.testing import MockBackend, harness_reply
    from trl_sandbox.tiny import build_tiny_model

    progress("building the tiny model")
    model, tokenizer = build_tiny_model()
    model.save_pretrained(tmp / "model")
    tokenizer.save_pretrained(tmp / "model")
    rows = [{"task_id": f"t{i}", "prompt": f"Write a function f{i} that returns {i}.",
             "test_list": [f"assert f{i}() == {i}"] * 3} for i in range(16)]
    dataset = Dataset.from_list(rows)

    class StepTimer(TrainerCallback):
        def __init__(self) -> None:
            self.times: list[float] = []

        def on_step_begin(self, args, state, control, **kwargs):
            self.t0 = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            self.times.append(time.perf_counter() - self.t0)

    common = {"use_cpu": True, "bf16": False, "report_to": "none", "per_device_train_batch_size": 8,
              "num_generations": 4, "max_completion_length": 32, "max_steps": args.steps, "logging_steps": 1,
              "save_strategy": "no", "seed": 0}

    reward_times: list[float] = []

    def timed(fn):
        def reward(*a, **k):
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                reward_times.append(time.perf_counter() - t0)

        reward.__name__ = getattr(fn, "__name__", "code_reward")
        return reward

    @timed
    def in_process_reward(completions, **kwargs):
        # The same rewards as the mock's (every test passes: 1.0), so both runs train identically.
        return [1.0 for _ in completions]

    def plain() -> list[float]:
        timer = StepTimer()
        trainer = GRPOTrainer(model=str(tmp / "model"), reward_funcs=in_process_reward,
                              args=GRPOConfig(output_dir=str(tmp / "plain"), **common), train_dataset=dataset,
                              callbacks=[timer])
        trainer.train()
        return timer.times

    def sandboxed() -> list[float]:
        timer = StepTimer()
        backend = MockBackend(handler=lambda request: harness_reply(request, passed=True))
        trainer = SandboxGRPOTrainer(model=str(tmp / "model"), reward_funcs=timed(code_reward),
                                     args=SandboxGRPOConfig(output_dir=str(tmp / "sandbox"), sandbox_pool_size=8,
                                                            **common),
                                     train_dataset=dataset, callbacks=[timer], sandbox_backend=backend)
        trainer.train()
        return timer.times

    results: dict[str, list[float]] = {"plain GRPOTrainer, in-process reward": [],
                                       "SandboxGRPOTrainer, mock backend (zero-time executions)": []}
    in_reward: dict[str, list[float]] = {name: [] for name in results}
    for run in range(args.runs):
        for name, fn in zip(results, (plain, sandboxed)):
            progress(f"{name}: run {run + 1}/{args.runs}, {args.steps} steps")
            reward_times.clear()
            times = fn()
            results[name].append(median(times[1:]))
            in_reward[name].append(median(reward_times[1:]))
    base = median(next(iter(results.values())))
    out = []
    for name, medians in results.items():
        m = median(medians)
        out.append({"trainer": name, "steps": args.steps, "runs": args.runs, "step s": m,
                    "step - plain, ms": (m - base) * 1000, "in reward ms/step": median(in_reward[name]) * 1000})
    print(f"Tiny Qwen3 on CPU, batch 8, 4 generations, 32 tokens; medians over steps 2..{args.steps} and runs\n")
    print(table(out, ["trainer", "steps", "runs", "step s", "step - plain, ms", "in reward ms/step"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
