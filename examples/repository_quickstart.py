"""Repository tasks on CPU without a Docker daemon: a SWE-bench 5.0 row, a SWE-smith row and a Harbor task
directory scored by trl-sandbox's local backend, then (``--train N``) N GRPO steps of a tiny model on them.

The demo image (``trl_sandbox.repos.demo``) is built from Debian's packages with ``mmdebstrap`` the first time (about
20 s; ``apt-get install mmdebstrap``) and imported into the image cache, as you would import a real one:

    docker save sweb.eval.x86_64.django__django-11099 -o django.tar   # where docker runs
    trl-sandbox images import django.tar                               # on the training node

    python examples/repository_quickstart.py             # score the gold patch, a wrong one and a chat answer
    python examples/repository_quickstart.py --train 2   # and 2 GRPO steps of a tiny random model (CPU)
"""

import argparse
import tempfile
from pathlib import Path

from trl_sandbox import SandboxConfig, load_tasks
from trl_sandbox.images import ImageCache
from trl_sandbox.repos import demo
from trl_sandbox.rewards import CodeReward

PROMPT = ("Here is an issue in the repository at /testbed:\n\n{issue}\n\nAnswer with a unified diff (```diff) that "
          "fixes it.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, default=0, help="GRPO steps of a tiny model after scoring (default 0)")
    parser.add_argument("--output-dir", default="runs/repository-quickstart")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as work:
        image, info = demo.demo_image(ImageCache(), Path(work))  # once; after that, found in the cache
        print(f"image {demo.IMAGE_NAME} ({image.digest[:19]}), {image.size_bytes / 1e6:.0f} MB")
        harbor = demo.harbor_task(Path(work) / "tasks" / "calc-mean")
        rows = [demo.swebench_row(info), demo.swesmith_row(info), *load_tasks(harbor.parent.parent)]

        gold = "The division is off by one.\n```diff\n" + info["patch"] + "```"
        wrong = "```diff\n" + info["patch"].replace("+    return sum(xs) / len(xs)", "+    return sum(xs) / 2") + "```"
        cases = [
            (rows[0], "SWE-bench 5.0", "gold patch", gold),
            (rows[0], "SWE-bench 5.0", "wrong patch", wrong),
            (rows[0], "SWE-bench 5.0", "no diff", "I would rewrite mean() from scratch."),
            (rows[1], "SWE-smith", "gold patch", "```diff\n" + demo.swesmith_fix() + "```"),
            (rows[2], "Harbor", "gold patch", gold),
        ]
        # As TRL calls a reward: the dataset's columns as keyword arguments, one value per completion.
        batch = [row for row, *_ in cases]
        columns = {key: [row.get(key) for row in batch] for key in {k for row in batch for k in row}}
        with CodeReward.from_config(SandboxConfig(sandbox_pool_size=2)) as reward:
            results = reward.score([completion for *_, completion in cases], **columns)
        print(f"{'row':<14} {'completion':<12} {'status':<8} {'reward':>6}  tests")
        for (_, kind, name, _), result in zip(cases, results):
            print(f"{kind:<14} {name:<12} {result.status:<8} {result.reward:>6.2f}  "
                  f"{result.tests_passed}/{result.tests_total}  {result.error or ''}")

        if args.train:
            train(rows, args)


def train(rows: list, args: argparse.Namespace) -> None:
    """A few GRPO steps of a tiny random model on the repository rows (its answers hold no diff: reward -1)."""
    from trl_sandbox import SandboxGRPOConfig, SandboxGRPOTrainer, code_reward, task_dataset
    from trl_sandbox.tiny import build_tiny_model

    model, tokenizer = build_tiny_model()
    for row in rows:
        row["prompt"] = [{"role": "user", "content": PROMPT.format(issue=row.get("problem_statement")
                                                                   or row.get("prompt", ""))}]
    config = SandboxGRPOConfig(output_dir=args.output_dir, max_steps=args.train, per_device_train_batch_size=4,
                               num_generations=4, max_completion_length=16, logging_steps=1, report_to="none",
                               save_strategy="no", bf16=False, use_cpu=True, sandbox_pool_size=2)
    trainer = SandboxGRPOTrainer(model=model, reward_funcs=[code_reward], args=config,
                                 train_dataset=task_dataset(rows), processing_class=tokenizer)
    trainer.train()
    rewards = [entry["reward"] for entry in trainer.state.log_history if "reward" in entry]
    pool = trainer.scorer.pool
    print(f"trained {trainer.state.global_step} steps, rewards {rewards}; sandboxes: {pool.stats.created} created, "
          f"{pool.stats.deleted} deleted, {len(pool.live_sandboxes())} left")


if __name__ == "__main__":
    main()
