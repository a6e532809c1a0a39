"""A code_contests-like workload: tasks with dozens of stdin tests of a few kB each, scored with each stdout judge.

Two measurements, in the same run:

1. **Tests per second**, one sandbox, completions scored one after another, for each judge (``lines``, ``tokens``,
   ``float``, ``decimal`` and a Python checker program), against a fresh ``python -I -S -c PROGRAM`` per test with
   the input piped and the output compared on the host (no sandbox at all: the cheapest way to run a test in its
   own process). Correct completions, so every test runs.
2. **The early stop of ``all_or_nothing``**: the same wrong completions (realistic ones: right on the small tests,
   wrong past a size, as an off-by-one or an overflow-style bug is) scored with ``pass_rate`` (every test runs) and
   with ``all_or_nothing`` (the run stops at the first failing test).

Each figure is the median of ``--runs`` runs (the machine is shared: expect noise).

    python benchmarks/contests.py [--tasks 12] [--tests 40] [--input-kb 4] [--runs 3]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import median, progress, table

from trl_sandbox import SandboxConfig, Scorer, Task
from trl_sandbox.harness.compare import same_output

# Each task: n numbers; print their sum, the maximum and the mean (a float) of the numbers.
PROGRAM = (
    "import sys\n"
    "data = sys.stdin.buffer.read().split()\n"
    "n = int(data[0])\n"
    "xs = list(map(int, data[1:1 + n]))\n"
    "print(sum(xs), max(xs))\n"
    "print(f'{sum(xs) / n:.9f}')\n"
)
# Right while n < 300, then off by one in the sum: the small tests come first, as in code_contests' public tests.
WRONG = PROGRAM.replace("print(sum(xs), max(xs))", "print(sum(xs) + (n >= 300), max(xs))")
CHECKER = (
    "import sys\n"
    "out = open(sys.argv[2]).read().split()\n"
    "ans = open(sys.argv[3]).read().split()\n"
    "ok = len(out) == len(ans) and out[:2] == ans[:2] and abs(float(out[2]) - float(ans[2])) <= 1e-6\n"
    "sys.exit(0 if ok else 1)\n"
)
JUDGES = {
    "lines": "lines",
    "tokens": "tokens",
    "float": "float",
    "decimal": "decimal",
    "checker (Python, testlib)": {"checker": CHECKER, "convention": "testlib"},
}


def make_tasks(n_tasks: int, n_tests: int, input_kb: int) -> list[dict]:
    rng = random.Random(0)
    rows = []
    for t in range(n_tasks):
        inputs, outputs = [], []
        for i in range(n_tests):
            # Sizes grow with the test index up to about input_kb kilobytes (7 bytes per number).
            n = max(2, int((i + 1) / n_tests * input_kb * 1024 / 7))
            xs = [rng.randint(1, 10 ** 6) for _ in range(n)]
            inputs.append(f"{n}\n{' '.join(map(str, xs))}\n")
            outputs.append(f"{sum(xs)} {max(xs)}\n{sum(xs) / n:.9f}\n")
        rows.append({"task_id": f"contest-{t}", "inputs": inputs, "outputs": outputs})
    return rows


def python_c(rows: list[dict], judge: str) -> tuple[float, int]:
    """Seconds to run every test of ``rows`` with a fresh ``python -c`` each; the number of tests passed."""
    passed = 0
    start = time.perf_counter()
    for row in rows:
        for text, want in zip(row["inputs"], row["outputs"]):
            out = subprocess.run([sys.executable, "-I", "-S", "-c", PROGRAM], input=text.encode(),
                                 capture_output=True, check=False).stdout.decode()
            passed += same_output(out, want, {"mode": judge})
    return time.perf_counter() - start, passed


def scored(scorer: Scorer, rows: list[dict], program: str, compare) -> tuple[float, list]:
    tasks = [Task.from_row({**row, "compare": compare}) for row in rows]
    start = time.perf_counter()
    results = [scorer.score([task], [program])[0] for task in tasks]  # one after another: per-test cost
    return time.perf_counter() - start, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("--tests", type=int, default=40)
    parser.add_argument("--input-kb", type=int, default=4)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    rows = make_tasks(args.tasks, args.tests, args.input_kb)
    n_tests = args.tasks * args.tests

    base = {"sandbox_pool_size": 1, "sandbox_test_timeout": 5.0, "sandbox_completion_timeout": 120.0}
    table_rows = []
    baselines = []
    for run in range(args.runs):
        progress(f"python -c baseline: run {run + 1}/{args.runs} ({n_tests} tests)")
        baseline_s, baseline_passed = python_c(rows, "float")
        assert baseline_passed == n_tests, baseline_passed
        baselines.append(baseline_s)
    baseline_s = median(baselines)
    with Scorer.from_config(SandboxConfig(**base)) as scorer:
        scorer.score([Task.from_row(rows[0])], [PROGRAM])  # warm up
        for name, compare in JUDGES.items():
            times = []
            for run in range(args.runs):
                progress(f"judge {name}: run {run + 1}/{args.runs} ({n_tests} tests)")
                seconds, results = scored(scorer, rows, PROGRAM, compare)
                assert all(r.status == "passed" for r in results), [r.error for r in results if not r.passed][:2]
                times.append(seconds)
            seconds = median(times)
            table_rows.append({"judge": name, "tests/s": n_tests / seconds, "python -c tests/s": n_tests / baseline_s,
                               "speed-up": baseline_s / seconds})
    print(f"{args.tasks} tasks x {args.tests} stdin tests (up to {args.input_kb} kB each), correct completions, "
          f"one sandbox, one completion at a time, median of {args.runs} runs:\n")
    print(table(table_rows, ["judge", "tests/s", "python -c tests/s", "speed-up"]))

    stop_rows = []
    for mode in ("pass_rate", "all_or_nothing"):
        progress(f"wrong completions, reward {mode}: {args.runs} runs")
        with Scorer.from_config(SandboxConfig(**base, sandbox_reward=mode)) as scorer:
            scorer.score([Task.from_row(rows[0])], [WRONG])
            runs = [scored(scorer, rows, WRONG, None) for _ in range(args.runs)]
            seconds, results = median([t for t, _ in runs]), runs[0][1]
        ran = sum(r.tests_passed for r in results) + sum(1 for r in results if not r.passed)
        stop_rows.append({"reward": mode, "seconds": seconds, "mean reward": sum(r.reward for r in results) /
                          len(results), "tests passed": sum(r.tests_passed for r in results), "tests run (about)":
                          ran if mode == "all_or_nothing" else n_tests})
    print(f"\nWrong completions (off by one once n >= 300: {stop_rows[0]['tests passed']} of {n_tests} tests pass):\n")
    print(table(stop_rows, ["reward", "seconds", "mean reward", "tests passed", "tests run (about)"]))
    saved = 1 - stop_rows[1]["seconds"] / stop_rows[0]["seconds"]
    print(f"\nall_or_nothing's early stop saves {saved:.0%} of the scoring time of these wrong completions.")


if __name__ == "__main__":
    main()
