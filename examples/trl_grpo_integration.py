"""One GRPO step with SandboxGRPOTrainer: the drop-in replacement of trl.GRPOTrainer that owns a sandbox pool.

The toy dataset is the two tasks of TRL's Daytona example (sorting, maximum subarray), shipped with trl-sandbox
(``load_tasks("daytona")``); the step scores 4 completions of one of them per training process.
The sandboxes exist only while ``train()`` runs; the step's metrics (``sandbox/*`` next to TRL's own) are printed
and written to OUTPUT_DIR/metrics.jsonl, which ``trl-sandbox plot OUTPUT_DIR`` draws.

    python examples/trl_grpo_integration.py --model Qwen/Qwen3-0.6B                  # a GPU
    python examples/trl_grpo_integration.py --model tiny                             # CPU, no download (CI)
    accelerate launch --num_processes 2 examples/trl_grpo_integration.py --model Qwen/Qwen3-0.6B
"""

import argparse
import os


from trl_sandbox import SandboxGRPOConfig, SandboxGRPOTrainer, code_reward, load_tasks, task_dataset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="Qwen/Qwen3-0.6B", help="model id or path; 'tiny': a tiny random model")
    parser.add_argument("--output-dir", default="runs/grpo-integration")
    parser.add_argument("--backend", default="local", help="sandbox backend: local (default), daytona")
    parser.add_argument("--pool-size", type=int, default=4, help="sandboxes per training process")
    args = parser.parse_args()

    model, processing_class = args.model, None
    if args.model == "tiny":
        from trl_sandbox.tiny import build_tiny_model

        model, processing_class = build_tiny_model()
    import torch

    on_gpu = torch.cuda.is_available()
    config = SandboxGRPOConfig(
        output_dir=args.output_dir,
        max_steps=1,
        per_device_train_batch_size=4,
        num_generations=4,  # completions per prompt (a GRPO group)
        max_completion_length=128 if on_gpu else 16,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        bf16=on_gpu,
        use_cpu=not on_gpu,
        sandbox_backend=args.backend,
        sandbox_pool_size=args.pool_size,
        sandbox_completion_timeout=10.0,  # seconds per completion (all its tests)
        sandbox_batch_deadline_s=60.0,  # stragglers past this are cancelled (reward None)
    )
    trainer = SandboxGRPOTrainer(
        model=model,
        reward_funcs=[code_reward],
        args=config,
        train_dataset=task_dataset(load_tasks("daytona")),
        processing_class=processing_class,
    )
    trainer.train()

    if trainer.accelerator.is_main_process:
        (logged,) = [entry for entry in trainer.state.log_history if "reward" in entry]
        print(f"step {trainer.state.global_step}: reward {logged['reward']:.3f}")
        for key in sorted(k for k in logged if k.startswith("sandbox/")):
            print(f"  {key:<32} {logged[key]:.4g}")
        pool = trainer.scorer.pool
        print(f"sandboxes: {pool.stats.created} created, {pool.stats.deleted} deleted, {len(pool.live_sandboxes())} left")
        print(f"metrics: {os.path.join(args.output_dir, 'metrics.jsonl')}")


if __name__ == "__main__":
    main()
