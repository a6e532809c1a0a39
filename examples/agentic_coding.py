"""Agentic coding RL: the model writes code, runs it in its own sandboxed Python session, reads the output, fixes it,
and submits; the reward is the submission's test verdict.

    python examples/agentic_coding.py --model Qwen/Qwen3-1.7B          # a real instruct model (GPU advised)
    python examples/agentic_coding.py --model scripted                # CPU, no hub: the tiny model, scripted

``SandboxGRPOTrainer(environment_factory=CodeEnvironment)`` gives every rollout a ``python`` and a ``submit`` tool
(TRL's tool calling, TRL >= 1.16): the sessions live in sandboxes of the trainer's pool, a turn's tool calls of every
rollout run at once, and every sandbox is deleted when training ends. The task rows are code_contests-style rows as
the dataset publishes them (here one stdin problem, parity, repeated; a step has 8 rollouts, 4 per prompt).

A random tiny model writes no tool calls, so ``--model scripted`` plays a fixed policy instead of generating: turn
one runs a cell, turn two submits a solution. It shows the mechanics (sessions, tool results in the prompt,
rewards, metrics, cleanup) on a CPU in seconds; it does not learn anything.
"""

from __future__ import annotations

import argparse
import os
import tempfile

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

STATEMENT = "Read an integer n and print YES if n is even, otherwise NO."
ROW = {
    "name": "parity", "description": STATEMENT,
    "public_tests": {"input": ["4\n"], "output": ["YES\n"]},
    "private_tests": {"input": ["7\n"], "output": ["NO\n"]},
    "generated_tests": {"input": ["100\n", "1\n"], "output": ["YES\n", "NO\n"]},
    "prompt": [{"role": "user", "content": STATEMENT}],
}
# The scripted policy of --model scripted: one turn per entry.
SCRIPT = [
    {"name": "python", "arguments": {"code": "n = 7\nprint('YES' if n % 2 == 0 else 'NO')"}},
    {"name": "submit", "arguments": {"code": "n = int(input())\nprint('YES' if n % 2 == 0 else 'NO')"}},
    "Done.",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="scripted", help="A chat model with tool calling, or 'scripted'.")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--output-dir", default=None,
                        help="where to keep the run (metrics.jsonl, checkpoint); default: a temporary directory, "
                             "removed when the script ends")
    args = parser.parse_args()
    if args.output_dir is not None:
        run(args, args.output_dir)
        print(f"metrics: {os.path.join(args.output_dir, 'metrics.jsonl')}")
        return
    # Removed when the run ends, by an exception too: no run leaves its checkpoint behind in the temp directory.
    with tempfile.TemporaryDirectory(prefix="agentic-coding-") as output_dir:
        run(args, output_dir)
    print("the run's directory was temporary and is removed; --output-dir DIR keeps metrics.jsonl and the checkpoint")


def run(args: argparse.Namespace, output_dir: str) -> None:
    import torch

    from trl_sandbox import CodeEnvironment, SandboxGRPOConfig, SandboxGRPOTrainer, task_dataset

    model = args.model
    trainer_class = SandboxGRPOTrainer
    if args.model == "scripted":
        from trl_sandbox.tiny import build_tool_calling_tiny_model, scripted_policy

        tiny, tokenizer = build_tool_calling_tiny_model()
        model = os.path.join(output_dir, "tiny-tools")
        tiny.save_pretrained(model)
        tokenizer.save_pretrained(model)
        trainer_class = scripted_policy(SandboxGRPOTrainer, SCRIPT)
    trainer = trainer_class(
        model=model,
        reward_funcs=[],  # the environment owns the reward (get_reward)
        train_dataset=task_dataset([ROW] * 8 * args.steps),
        environment_factory=CodeEnvironment,
        args=SandboxGRPOConfig(
            output_dir=output_dir, max_steps=args.steps, num_generations=4, per_device_train_batch_size=8,
            max_completion_length=1024, max_tool_calling_iterations=4, logging_steps=1, report_to="none",
            bf16=torch.cuda.is_available(), sandbox_tool_timeout=10.0, sandbox_reward="all_or_nothing",
        ),
    )
    trainer.train()
    pool = trainer.scorer.pool
    for record in trainer.state.log_history:
        if "sandbox/tool_calls_per_rollout" in record:
            print(f"step {record['step']}: reward {record['reward']:.2f}, "
                  f"{record['sandbox/tool_calls_per_rollout']:.1f} tool calls per rollout, "
                  f"{record['sandbox/tool_seconds_mean'] * 1000:.0f} ms per call (p95 "
                  f"{record['sandbox/tool_seconds_p95'] * 1000:.0f} ms), submitted {record['sandbox/submitted']:.0%}")
    print(f"sessions created: {pool.stats.sessions_created}; sandboxes left: {len(pool.live_sandboxes())}")


if __name__ == "__main__":
    main()
