"""What a constant stub earns: the best of ``return True/False/0/1/[]/''/None`` and ``pass`` on every HumanEval task
(and sanitized MBPP's, with ``--mbpp``), under each reward mode. A stub that earns reward is a policy's first hack.

    python benchmarks/stubs.py [--mbpp sanitized-mbpp.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import progress, scoring_bar, table

from trl_sandbox import SandboxConfig, Scorer, Task, load_tasks

CONSTANTS = ["True", "False", "0", "1", "[]", "''", "None"]


def stubs_for(task: Task) -> list[str]:
    """Every stub, as a completion of ``task``: a body for HumanEval (the prompt has the signature), a whole function
    (any arguments) for MBPP."""
    if task.format == "humaneval":
        return [f"    return {c}\n" for c in CONSTANTS] + ["    pass\n"]
    name = task.entry_points[0] if task.entry_points else "f"
    return [f"def {name}(*args, **kwargs):\n    return {c}\n" for c in CONSTANTS] + [
        f"def {name}(*args, **kwargs):\n    pass\n"
    ]


def measure(name: str, tasks: list[Task], mode: str) -> dict[str, object]:
    config = SandboxConfig(sandbox_reward=mode, sandbox_test_timeout=5.0)
    completions = [(t, s) for t in tasks for s in stubs_for(t)]
    progress(f"{name}, reward {mode}: {len(completions)} stub completions of {len(tasks)} tasks")
    with Scorer.from_config(config) as scorer, scoring_bar(len(completions), f"{name}, {mode}") as bar:
        results = scorer.score([t for t, _ in completions], [s for _, s in completions],
                               on_result=lambda i, result: bar.update(1))
    per_task: dict[str, list[float]] = {}
    passes_with_pass: set[str] = set()
    for (task, stub), result in zip(completions, results):
        reward = result.reward if result.reward is not None else 0.0
        per_task.setdefault(task.task_id, []).append(reward)
        if stub.strip().endswith("pass") and reward > 0:
            passes_with_pass.add(task.task_id)
    best = [max(rewards) for rewards in per_task.values()]
    return {
        "set": name,
        "reward": mode,
        "tasks": len(per_task),
        "tasks a stub earns reward on": sum(b > 0 for b in best),
        "mean best stub reward": round(sum(best) / len(best), 3),
        "max": round(max(best), 3),
        "tasks `pass` earns reward on": len(passes_with_pass),
        "tasks a stub passes": sum(b >= 1.0 for b in best),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mbpp", help="sanitized-mbpp.json (google-research/mbpp).")
    args = parser.parse_args()
    sets = [("HumanEval", [Task.from_row(r) for r in load_tasks("humaneval")])]
    if args.mbpp:
        rows = json.loads(Path(args.mbpp).read_text())
        sets.append(("sanitized MBPP", [Task.from_row(r) for r in rows]))
    out = [measure(name, tasks, mode) for name, tasks in sets for mode in ("pass_rate", "all_or_nothing")]
    print(table(out, list(out[0])))


if __name__ == "__main__":
    main()
