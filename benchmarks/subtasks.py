"""What the early stop of subtasks saves (docs/datasets.md, "Subtasks"): a stdin problem of ``--groups`` subtasks of
``--tests`` tests each (``n`` in, ``n * n`` out; the inputs grow with the subtask, as olympiad subtasks do), scored
with the early stop and without it (the same row, the judge told of groups it may never give up on: every test
runs, a timeout ending that test only, as with the early stop), on the local backend.

Programs: ``full`` (every test passes: nothing to skip), ``first subtask`` (right on the first subtask only, wrong
from the first test of every other: a typical partial solution), ``wrong`` (wrong everywhere) and ``too slow for
big n`` (right, but past the CPU time limit on every test after the first subtask: the other typical one). Each is
scored ``--runs`` times after a warm-up; the table gives the tests run, the completion's execution seconds (p50 over the
runs) both ways, the ratio, and the reward (which must be the same both ways: the script stops if it is not).

    python benchmarks/subtasks.py [--groups 10] [--tests 10] [--runs 3] [--limit 0.25]
    python benchmarks/subtasks.py --quick      # 3 subtasks of 3 tests, 1 run: a smoke run of a few seconds
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import median, progress, table
from checkers import machine

from trl_sandbox import SandboxConfig, Scorer, Task

PROGRAMS = {
    "full": "n = int(input())\nprint(n * n)\n",
    "first subtask": "n = int(input())\nprint(n * n if n < {first} else 0)\n",
    "wrong": "n = int(input())\nprint(-1)\n",
    "too slow for big n": "n = int(input())\nwhile n >= {first}:\n    pass\nprint(n * n)\n",
}


def problem(groups: int, tests: int) -> dict[str, Any]:
    """The row: subtask ``g`` holds the inputs ``g * tests`` to ``(g + 1) * tests - 1``, worth ``g + 1`` points."""
    inputs = [f"{n}\n" for n in range(groups * tests)]
    outputs = [f"{n * n}\n" for n in range(len(inputs))]
    return {"task_id": f"squares-{groups}x{tests}", "inputs": inputs, "outputs": outputs,
            "subtasks": [{"name": str(g + 1), "points": g + 1, "tests": list(range(g * tests, (g + 1) * tests))}
                         for g in range(groups)]}


def measure(scorer: Scorer, task: Task, code: str, runs: int, early: bool) -> tuple[float, int, float | None]:
    """(p50 exec seconds, tests run, reward) of ``code``; ``early``: the judge is told the subtasks."""
    import trl_sandbox.tasks as tasks

    original = tasks.harness_groups
    if not early:  # the judge told of groups none of which it may give up on: every test runs, timeouts included
        tasks.harness_groups = lambda subtasks: [dict(g, min=False, depends=[]) for g in original(subtasks)]
    try:
        scorer.score([task], [code])  # warm-up
        results = [scorer.score([task], [code])[0] for _ in range(runs)]
    finally:
        tasks.harness_groups = original
    rewards = {r.reward for r in results}
    if len(rewards) != 1:
        raise SystemExit(f"the reward changed between runs: {rewards}")
    ran = len(task.tests) - results[0].tests_skipped
    return median([r.exec_s for r in results]), ran, results[0].reward


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=10)
    parser.add_argument("--tests", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--limit", type=float, default=0.25, help="seconds per test (sandbox_test_timeout)")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.groups, args.tests, args.runs = 3, 3, 1
    print(machine())
    row = problem(args.groups, args.tests)
    task = Task.from_row(row)
    config = SandboxConfig(sandbox_pool_size=1, sandbox_test_timeout=args.limit)
    rows = []
    with Scorer.from_config(config) as scorer:
        for name, template in PROGRAMS.items():
            code = template.format(first=args.tests)
            progress(f"{name}: with the early stop")
            early_s, early_ran, early_reward = measure(scorer, task, code, args.runs, True)
            progress(f"{name}: every test")
            all_s, all_ran, all_reward = measure(scorer, task, code, args.runs, False)
            if early_reward != all_reward:
                raise SystemExit(f"{name}: the early stop changed the reward: {early_reward} != {all_reward}")
            rows.append({"program": name, "reward": early_reward, "tests run (early stop)": early_ran,
                         "tests run (all)": all_ran, "exec s p50 (early stop)": early_s, "exec s p50 (all)": all_s,
                         "all / early stop": all_s / early_s if early_s > 0 else float("nan")})
    print(f"\n{args.groups} subtasks x {args.tests} tests, {args.limit:g} s per test, {args.runs} run(s) each, local "
          "backend, Python programs\n")
    print(table(rows, ["program", "reward", "tests run (early stop)", "tests run (all)", "exec s p50 (early stop)",
                       "exec s p50 (all)", "all / early stop"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
