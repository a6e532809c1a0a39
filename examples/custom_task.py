"""Add your own coding task, as the ``TASKS`` dictionary of TRL's Daytona example allowed.

A task is a dataset row (a dict); its format is detected from its fields (see docs/tasks.md and docs/datasets.md). This
script writes two new tasks in the call-based format of the Daytona example (the tests are arguments; the expected
outputs come from a reference function, run in its own sandbox, never in the model's), checks them with
``Task.from_row`` (a malformed task is one clear error), scores a right, a wrong and a banned completion for each,
and saves them as a JSONL task file for training:

    python examples/custom_task.py --out my_tasks.jsonl
    trl-sandbox train --tasks my_tasks.jsonl --model tiny      # no download: a tiny model built here, to try it
    trl-sandbox train --tasks my_tasks.jsonl --model Qwen/Qwen3-1.7B-Base   # a real run (from the hub, or its cache)

or, in Python, ``trl_sandbox.task_dataset(load_tasks("my_tasks.jsonl"))`` as a trainer's ``train_dataset``.
"""

import argparse
import json

from trl_sandbox import SandboxConfig, Scorer, Task, TaskFormatError

TASKS = {
    "run_length": {
        "prompt": (
            "def run_length(s: str) -> list[tuple[str, int]]:\n"
            '    """Run-length encode s: run_length("aaab") == [("a", 3), ("b", 1)]."""\n'
        ),
        "func_name": "run_length",
        # One Python expression per test, giving the single argument (random is available, seeded with 0).
        "tests": ['""', '"a"', '"aaabccdddd"', '"".join(random.choice("ab") for _ in range(500))'],
        # The expected outputs: a builtin name, or a function defined in reference_code.
        "reference": "reference",
        "reference_code": (
            "import itertools\n"
            "def reference(s):\n"
            "    return [(ch, len(list(group))) for ch, group in itertools.groupby(s)]\n"
        ),
        "banned_patterns": ["itertools", "groupby"],  # make the model write the loop
    },
    "unique_sorted": {
        "prompt": "def unique_sorted(xs: list[int]) -> list[int]:\n    \"\"\"The distinct values of xs, ascending.\"\"\"\n",
        "func_name": "unique_sorted",
        "tests": ["[]", "[3, 1, 3, 2]", "[random.randint(-50, 50) for _ in range(300)]"],
        "reference": "reference",
        "reference_code": "def reference(xs):\n    return sorted(set(xs))\n",
        "banned_patterns": ["sorted(", ".sort("],
    },
}

COMPLETIONS = {
    "run_length": {
        "right": (
            "    out = []\n    for ch in s:\n        if out and out[-1][0] == ch:\n"
            "            out[-1] = (ch, out[-1][1] + 1)\n        else:\n            out.append((ch, 1))\n    return out\n"
        ),
        "wrong": "    return [(ch, s.count(ch)) for ch in dict.fromkeys(s)]\n",
        "banned": "    from itertools import groupby\n    return [(k, len(list(g))) for k, g in groupby(s)]\n",
    },
    "unique_sorted": {
        "right": (
            "    out = []\n    for x in set(xs):\n        i = 0\n        while i < len(out) and out[i] < x:\n"
            "            i += 1\n        out.insert(i, x)\n    return out\n"
        ),
        "wrong": "    return list(set(xs))\n",
        "banned": "    return sorted(set(xs))\n",
    },
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="my_tasks.jsonl", help="task file to write (JSONL)")
    parser.add_argument("--pool-size", type=int, default=2)
    args = parser.parse_args()

    rows = [{"task_id": name, **fields} for name, fields in TASKS.items()]
    tasks = [Task.from_row(row) for row in rows]  # raises TaskFormatError, naming the field, when a row is wrong
    for task in tasks:
        print(f"task {task.task_id}: format {task.format}, {len(task.tests)} tests")
    try:
        Task.from_row({"task_id": "broken", "prompt": "def f(x):\n", "func_name": "f", "tests": ["1"]})
    except TaskFormatError as exc:
        print(f"a malformed task is rejected: {exc}")

    batch = [(task, kind, code) for task in tasks for kind, code in COMPLETIONS[task.task_id].items()]
    with Scorer.from_config(SandboxConfig(sandbox_pool_size=args.pool_size)) as scorer:
        results = scorer.score([task for task, _, _ in batch], [code for _, _, code in batch])
    for (task, kind, _), result in zip(batch, results):
        reward = "None" if result.reward is None else f"{result.reward:+.2f}"
        print(f"{task.task_id:<14} {kind:<7} {result.status:<7} reward {reward}  "
              f"{result.tests_passed}/{result.tests_total} tests")

    with open(args.out, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(row) + "\n" for row in rows)
    print(f"wrote {len(rows)} tasks to {args.out}: trl-sandbox train --tasks {args.out}")


if __name__ == "__main__":
    main()
