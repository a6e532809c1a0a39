"""What crossing between the tests and the program costs, against the same work in plain Python.

Each row scores one completion (median of ``--runs``) and reports its execution time in the sandbox (``exec_s``:
loading the program, running every test, the judge's messages) next to the plain-Python time of the same program
and tests in one process (``exec``) or, for stdin programs, ``python -c`` with the input piped:

- ``len`` of a 10**6-element list passed as an argument (one call; the list crosses once);
- 10,000 calls of a small function in one test (one round trip each);
- ``list()`` of a 10**5-item generator the program returns (items cross in batches);
- a stdin program reading 200,000 lines with ``sys.stdin.buffer.readline``;
- KodCode (pytest files, the tests in the judge and the program in the worker, their values kept alike as in one
  process: see ``trl_sandbox/harness/twins.py``): 1,000 calls each passing a fresh 10-item list (1,000 twins made and
  forgotten), 1,000 calls on an object that keeps a growing dict, 1,000 calls on an object that keeps the test's
  10**5-element list (a twin both sides compare after every call), a 10**5-element list sorted in place by the
  program, a file of 20 one-call tests; against KodCode's own ``pytest`` run of ``solution.py`` and
  ``test_solution.py`` in one process (``pipeline/run_test.sh``, without ``--cov``).

    python benchmarks/costs.py [--runs 3] [--kodcode]
"""

from __future__ import annotations

import argparse
from typing import Any
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import median, progress, table

from trl_sandbox import SandboxConfig, Scorer, Task

LINES = 200_000
STDIN = f"{LINES}\n" + "".join(f"{i}\n" for i in range(LINES))
STDIN_PROGRAM = (
    "import sys\nread = sys.stdin.buffer.readline\nn = int(read())\n"
    "print(sum(int(read()) for _ in range(n)))\n"
)
CASES = [
    ("len of a 10**6-element list", "def f(xs):\n    return len(xs)\n", "assert f(list(range(10 ** 6))) == 10 ** 6"),
    ("10,000 calls in one test", "def f(x):\n    return x + 1\n",
     "assert all(f(i) == i + 1 for i in range(10000))"),
    ("list() of a 10**5-item generator", "def f(n):\n    yield from range(n)\n",
     "assert list(f(10 ** 5)) == list(range(10 ** 5))"),
]


KODCODE_CASES = [
    ("KodCode: 1,000 calls, each with a new 10-item list", "def total(xs):\n    return sum(xs)\n",
     "from solution import total\n\n\ndef test_many():\n    for i in range(1000):\n"
     "        assert total([i] * 10) == 10 * i\n"),
    ("KodCode: 1,000 calls on an object keeping a dict",
     "class Counter:\n    def __init__(self):\n        self.seen = {}\n\n    def add(self, key):\n"
     "        self.seen[key] = self.seen.get(key, 0) + 1\n        return self.seen\n",
     "from solution import Counter\n\n\ndef test_counts():\n    c = Counter()\n    for i in range(1000):\n"
     "        seen = c.add(i % 50)\n    assert seen[0] == 20 and len(seen) == 50\n"),
    ("KodCode: a 10**5-element list sorted in place", "def sort_in_place(xs):\n    xs.sort()\n",
     "from solution import sort_in_place\n\n\ndef test_sorted():\n    xs = list(range(10 ** 5, 0, -1))\n"
     "    sort_in_place(xs)\n    assert xs[0] == 1 and xs[-1] == 10 ** 5\n"),
    ("KodCode: 1,000 calls on an object keeping a 10**5-element list",
     "class Table:\n    def __init__(self, rows):\n        self.rows = rows\n\n    def get(self, i):\n"
     "        return self.rows[i]\n",
     "from solution import Table\n\n\ndef test_lookups():\n    rows = list(range(10 ** 5))\n    t = Table(rows)\n"
     "    assert all(t.get(i) == i for i in range(1000))\n    assert rows[0] == 0\n"),
    ("KodCode: 20 tests of one call each", "def double(x):\n    return 2 * x\n",
     "from solution import double\n\n\n" + "".join(f"def test_{i}():\n    assert double({i}) == {2 * i}\n\n\n"
                                                    for i in range(20))),
]


def plain_pytest(program: str, test: str) -> float:
    """KodCode's own run (``pipeline/run_test.sh``): ``solution.py`` and ``test_solution.py`` in one directory and
    one ``pytest`` process (without coverage), timed from start to exit."""
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        Path(directory, "solution.py").write_text(program)
        Path(directory, "test_solution.py").write_text(test)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir=."],
                       cwd=directory, capture_output=True, check=True)
        return time.perf_counter() - start


def kodcode_row(name: str, program: str, test: str) -> dict:
    function = program.split("def ", 1)[1].split("(", 1)[0] if program.startswith("def") else \
        program.split("class ", 1)[1].split(":", 1)[0]
    return {"question_id": name, "question": name, "solution": program, "test": test,
            "test_info": [{"function_name": function, "parameter_list": "(*args)",
                           "function_declaration": f"def {function}(*args):", "docstring": None}]}


def plain_exec(program: str, test: str) -> float:
    start = time.perf_counter()
    exec(program + "\n" + test, {})  # noqa: S102  the baseline: the same code with no sandbox at all
    return time.perf_counter() - start


def plain_stdin() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-I", "-S", "-c", STDIN_PROGRAM], input=STDIN.encode(), capture_output=True,
                   check=True)
    return time.perf_counter() - start


def measure(scorer: Scorer, name: str, task: Task, program: str, runs: int, plain: Any) -> dict:
    """One table row: ``program`` scored ``runs`` times (median execution seconds) against ``plain()``'s median."""
    sandboxed, statuses = [], set()
    for _ in range(runs):
        (result,) = scorer.score([task], [program])
        sandboxed.append(result.exec_s)
        statuses.add(result.status)
    baseline = median([plain() for _ in range(runs)])
    return {"case": name, "status": "/".join(sorted(statuses)), "runs": runs, "sandbox s": median(sandboxed),
            "plain Python s": baseline, "x plain": median(sandboxed) / baseline}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--kodcode", action="store_true", help="Only the KodCode (pytest file) cases.")
    args = parser.parse_args()
    rows = []
    config = SandboxConfig(sandbox_pool_size=1, sandbox_test_timeout=30.0, sandbox_completion_timeout=60.0)
    with Scorer.from_config(config) as scorer:
        for name, program, test in KODCODE_CASES:
            progress(f"{name}: {args.runs} runs in a sandbox and in one pytest process")
            task = Task.from_row(kodcode_row(name, program, test))
            rows.append(measure(scorer, name, task, program, args.runs, lambda: plain_pytest(program, test)))
        if args.kodcode:
            print(table(rows, ["case", "status", "runs", "sandbox s", "plain Python s", "x plain"]))
            return
        for name, program, test in CASES:
            progress(f"{name}: {args.runs} runs in a sandbox and in plain Python")
            task = Task.from_row({"task_id": name, "test_list": [test]})
            rows.append(measure(scorer, name, task, program, args.runs, lambda: plain_exec(program, test)))
        progress(f"stdin, {LINES:,} lines: {args.runs} runs in a sandbox and in plain Python")
        task = Task.from_row({"task_id": "stdin", "inputs": [STDIN], "outputs": [f"{sum(range(LINES))}\n"]})
        rows.append(measure(scorer, f"stdin: {LINES:,} lines with sys.stdin.buffer.readline", task, STDIN_PROGRAM,
                            args.runs, plain_stdin))
    print(table(rows, ["case", "status", "runs", "sandbox s", "plain Python s", "x plain"]))


if __name__ == "__main__":
    main()
