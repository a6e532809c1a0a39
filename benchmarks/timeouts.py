"""Per-test timeouts: a slow test costs at most its own budget; the other tests of the completion are not held up.

A task with ``--tests`` tests and a per-test budget of ``--test-timeout`` seconds; completions whose tests take
different times. Each row gives the completion's wall-clock time (median of runs) next to the bound the budgets
allow: a test past its budget ends the run (the completion scores -1) after that one budget, and tests within their
budget simply take their time.

    python benchmarks/timeouts.py
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import median, progress, table

from trl_sandbox import SandboxConfig, Scorer, Task


def cases(n: int, budget: float) -> list[tuple[str, str, float]]:
    """(name, completion, bound in seconds): the bound is what the per-test budgets allow."""
    slow = budget * 0.6
    return [
        ("all tests fast", "def f(x):\n    return x\n", 0.0),
        (f"every test {slow:.1f} s (within budget)",
         f"import time\ndef f(x):\n    time.sleep({slow})\n    return x\n", n * slow),
        ("test 2 hangs", "import time\ndef f(x):\n    if x == 2:\n        time.sleep(3600)\n    return x\n", budget),
        ("test 2 busy-loops", "def f(x):\n    while x == 2:\n        pass\n    return x\n", budget),
        ("loading hangs", "import time\ntime.sleep(3600)\ndef f(x):\n    return x\n", budget),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tests", type=int, default=5)
    parser.add_argument("--test-timeout", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    task = Task.from_row({"task_id": "timeouts", "test_list": [f"assert f({i}) == {i}" for i in range(args.tests)]})
    config = SandboxConfig(sandbox_pool_size=1, sandbox_test_timeout=args.test_timeout,
                           sandbox_completion_timeout=args.tests * args.test_timeout + 5)
    rows = []
    with Scorer.from_config(config) as scorer:
        for name, code, bound in cases(args.tests, args.test_timeout):
            progress(f"{name}: {args.runs} runs")
            times, status = [], None
            for _ in range(args.runs):
                t0 = time.perf_counter()
                (result,) = scorer.score([task], [code])
                times.append(time.perf_counter() - t0)
                status = result.status
            rows.append({"completion": name, "status": status, "runs": args.runs, "wall s": median(times),
                         "budget bound s": bound, "over bound s": median(times) - bound})
    print(f"{args.tests} tests, {args.test_timeout} s per test, local backend (median of runs)\n")
    print(table(rows, ["completion", "status", "runs", "wall s", "budget bound s", "over bound s"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
