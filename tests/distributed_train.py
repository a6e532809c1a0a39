"""Training script of tests/test_distributed.py, run by ``accelerate launch`` in 2 CPU processes (gloo).

Usage: distributed_train.py OUTPUT_DIR SANDBOX_ROOT. Each rank appends one JSON line per reward call to
OUTPUT_DIR/rank{R}.jsonl: its pool's labels and sandboxes, and what its scorer has scored so far. With
CRASH_RANK=r, rank r raises inside its fourth reward call (a crash mid-training, after three whole steps: their
metrics and completions written) while the other ranks are still busy in theirs (a long reward computation), so
only the launcher's SIGTERM can stop them. Without it, the run ends after those three steps.
"""

import json
import os
import sys
import time

from datasets import Dataset

from trl_sandbox import SandboxGRPOConfig, SandboxGRPOTrainer, code_reward, load_tasks
from trl_sandbox.scoring import active_scorer
from trl_sandbox.tiny import build_tiny_model

output_dir, sandbox_root = sys.argv[1], sys.argv[2]
rank = int(os.environ["RANK"])
crash_rank = int(os.environ.get("CRASH_RANK", "-1"))
calls = 0


def probe(completions, **kwargs):
    """Records this rank's pool after code_reward scored the batch (reward functions run in order)."""
    global calls
    calls += 1
    scorer = active_scorer()
    record = {
        "rank": rank,
        "call": calls,
        "completions": len(completions),
        "labels": scorer.pool.labels,
        "sandboxes": sorted(s.id for s in scorer.pool.live_sandboxes()),
        "scored": dict(scorer.status_counts),
    }
    with open(os.path.join(output_dir, f"rank{rank}.jsonl"), "a") as f:
        f.write(json.dumps(record) + "\n")
    if crash_rank >= 0 and calls == 4:
        if rank == crash_rank:
            raise RuntimeError(f"simulated crash on rank {rank}")
        time.sleep(120)  # still scoring when the other rank dies
    return [0.0] * len(completions)


model, tokenizer = build_tiny_model()
args = SandboxGRPOConfig(
    output_dir=output_dir,
    use_cpu=True,
    bf16=False,
    report_to="none",
    per_device_train_batch_size=4,
    num_generations=4,
    max_completion_length=16,
    max_steps=3 if crash_rank < 0 else 4,
    logging_steps=1,
    save_strategy="no",
    reward_weights=[1.0, 0.0],
    log_completions=True,
    sandbox_pool_size=2,
    sandbox_test_timeout=2.0,
    sandbox_completion_timeout=10.0,
    sandbox_backend_options={"root_dir": sandbox_root},
)
trainer = SandboxGRPOTrainer(
    model=model,
    reward_funcs=[code_reward, probe],
    args=args,
    train_dataset=Dataset.from_list(load_tasks("daytona")),
    processing_class=tokenizer,
)
trainer.train()
