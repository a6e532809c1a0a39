"""Tool calls of a turn: TRL's own loop (one rollout after another) against SandboxGRPOTrainer (all at once).

Both trainers run the real GRPO step with ``environment_factory`` and the tiny tool-calling model, whose generation
is scripted (a random model writes no tool calls): each of ``--rollouts`` rollouts calls ``python`` once with a cell
that works for ``--cell-ms`` milliseconds (a share ``--compute`` of it computing, the rest sleeping, as a cell waiting
on I/O or a subprocess does), then ``submit``s a solution, then stops. Computing cells share this machine's CPUs:
on 2 cores, 64 cells of 50 ms of CPU take 1.6 s however they are scheduled. The time inside ``_tool_call_loop`` (the tool calls and the
scripted, instant generation between turns) is measured per step; the first step, which creates the session
sandboxes, is left out.

- **GRPOTrainer**: TRL's loop, with ``CodeEnvironment.factory(...)`` (sessions in the same pool kind): the tool
  calls of a turn run one after another.
- **SandboxGRPOTrainer**: ``environment_factory=CodeEnvironment``: each turn's calls of every rollout run at once.

    python benchmarks/environment.py [--rollouts 64] [--cell-ms 100] [--compute 0.5] [--steps 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import ClassVar

sys.path.insert(0, str(Path(__file__).parent))
from _common import median, progress, table

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"


def scripted(base, cell):
    """``base`` playing: a ``python`` call of ``cell``, then a ``submit``, then text; timing its tool loop."""
    from trl_sandbox.tiny import scripted_policy

    turns = [{"name": "python", "arguments": {"code": cell}},
             {"name": "submit", "arguments": {"code": "print(int(input()) % 2 and 'NO' or 'YES')"}}, "Done."]

    class Timed(scripted_policy(base, turns)):
        tool_seconds: ClassVar[list[float]] = []  # every instance's, in order

        def _tool_call_loop(self, *args, **kwargs):
            start = time.perf_counter()
            try:
                return super()._tool_call_loop(*args, **kwargs)
            finally:
                self.tool_seconds.append(time.perf_counter() - start)

    return Timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rollouts", type=int, default=64)
    parser.add_argument("--cell-ms", type=float, default=100.0)
    parser.add_argument("--compute", type=float, default=0.5, help="Share of a cell's time spent computing (0-1).")
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()

    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from trl_sandbox import CodeEnvironment, SandboxConfig, SandboxGRPOConfig, SandboxGRPOTrainer
    from trl_sandbox.tiny import build_tool_calling_tiny_model

    busy, idle = args.cell_ms * args.compute / 1000, args.cell_ms * (1 - args.compute) / 1000
    cell = (f"import time\ntime.sleep({idle})\nend = time.process_time() + {busy}\n"
            "while time.process_time() < end:\n    pass\nprint('ok')")
    row = {"task_id": "parity", "inputs": ["4\n", "7\n"], "outputs": ["YES\n", "NO\n"],
           "prompt": [{"role": "user", "content": "Print YES if n is even, else NO."}]}
    work = Path(tempfile.mkdtemp(prefix="trl-sandbox-bench-"))
    work.chmod(0o711)
    dataset = Dataset.from_list([row] * (args.rollouts * args.steps))
    common = {"max_steps": args.steps, "num_generations": 8, "per_device_train_batch_size": args.rollouts,
              "max_completion_length": 512, "report_to": "none", "logging_steps": 1, "use_cpu": True, "bf16": False}
    sandbox = {"sandbox_pool_size": 2, "sandbox_max_sessions": args.rollouts, "sandbox_tool_timeout": 30.0,
               "sandbox_backend_options": {"root_dir": str(work / "sandboxes")}}
    rows = []
    try:
        progress("building the tiny tool-calling model")
        model_dir = work / "model"
        model, tokenizer = build_tool_calling_tiny_model()
        model.save_pretrained(model_dir)
        tokenizer.save_pretrained(model_dir)
        progress(f"GRPOTrainer (TRL's loop): {args.steps} steps of {args.rollouts} rollouts")
        with CodeEnvironment.factory(SandboxConfig(**sandbox)) as make_env:
            trl_trainer = scripted(GRPOTrainer, cell)(
                model=str(model_dir), reward_funcs=[], train_dataset=dataset, environment_factory=make_env,
                args=GRPOConfig(output_dir=str(work / "trl"), **common))
            trl_trainer.train()
        progress(f"SandboxGRPOTrainer: {args.steps} steps of {args.rollouts} rollouts")
        ours = scripted(SandboxGRPOTrainer, cell)(
            model=str(model_dir), reward_funcs=[], train_dataset=dataset, environment_factory=CodeEnvironment,
            args=SandboxGRPOConfig(output_dir=str(work / "ours"), **common, **sandbox))
        ours.train()
        for name, trainer in (("GRPOTrainer (TRL's loop)", trl_trainer), ("SandboxGRPOTrainer", ours)):
            per_step = trainer.tool_seconds[1:] or trainer.tool_seconds
            rows.append({"trainer": name, "rollouts": args.rollouts, "cell ms": args.cell_ms, "compute": args.compute,
                         "steps timed": len(per_step), "tool loop s/step": median(per_step),
                         "s per turn": median(per_step) / 2})
        rows[1]["x TRL"] = rows[0]["tool loop s/step"] / rows[1]["tool loop s/step"]
        rows[0]["x TRL"] = 1.0
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(table(rows, ["trainer", "rollouts", "cell ms", "compute", "steps timed", "tool loop s/step", "s per turn", "x TRL"]))


if __name__ == "__main__":
    main()
