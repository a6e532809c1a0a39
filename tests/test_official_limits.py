"""The official verdict on how programs run: real stdin/stdout files, crashes, exit statuses, stacks, time and output
budgets, the packages datasets assume, and what each status means (issue 26, rules 6-10, 13, 16 and 17).

Each test scores published rows through the reward as TRL calls it (:func:`tests._official.trl_rewards`) and states
the official harness's verdict, read from its source:

- open-r1 Codeforces: ``guipenedo/piston`` ``packages/codeforces/1.0.0/run``: ``ulimit -s unlimited``, then
  ``python3 solution.py`` with the input file as stdin; a non-zero exit status is a runtime error (``handle_exit_code``:
  "All other non-zero exit codes should be treated as runtime errors"); each test is its own run.
- APPS: ``hendrycks/apps`` ``eval/testing_util.py``: ``timeout = 4`` s per test; ``call_method`` swallows
  ``SystemExit`` (``_inner_call_method``), so what was printed before ``sys.exit(1)`` is judged; a runtime error fails
  that test and the loop goes on (``continue``); the prelude imports ``numpy as np``.
"""

from __future__ import annotations

import json

import pytest

from tests._official import trl_rewards
from trl_sandbox import SandboxConfig, Scorer, Task
from trl_sandbox.errors import InfrastructureError


def codeforces_row(tests: list[tuple[str, str]], *, time_limit: float = 2.0, memory_limit: float = 256.0) -> dict:
    """An ``open-r1/codeforces`` row (``default`` config), every column as the dataset publishes it."""
    return {
        "id": "1520E", "aliases": None, "contest_id": "1520", "contest_name": "Codeforces Round #719 (Div. 3)",
        "contest_type": "ICPC", "contest_start": 1620225300, "contest_start_year": 2021, "index": "E",
        "time_limit": time_limit, "memory_limit": memory_limit, "title": "Echo",
        "description": "Print the number you are given.", "input_format": "One integer n.",
        "output_format": "Print n.", "interaction_format": None, "note": None,
        "examples": [{"input": tests[0][0], "output": tests[0][1]}], "editorial": None, "rating": 800,
        "tags": ["implementation"], "testset_size": len(tests),
        "official_tests": [{"input": i, "output": o} for i, o in tests], "official_tests_complete": True,
        "input_mode": "stdio", "generated_checker": None, "executable": True, "generated_tests": 0,
        "prompt": "Solve Codeforces 1520E in Python 3.",
    }


def apps_row(inputs: list[str], outputs: list[str]) -> dict:
    """A ``codeparrot/apps`` row, every column as the dataset publishes it."""
    return {"problem_id": 4321, "question": "Read n and print 2n.", "solutions": json.dumps(["print(2*int(input()))"]),
            "input_output": json.dumps({"inputs": inputs, "outputs": outputs}), "difficulty": "introductory",
            "url": "https://codeforces.com/problemset/problem/1/A", "starter_code": ""}


ECHO = codeforces_row([("1\n", "1\n"), ("2\n", "2\n"), ("3\n", "3\n")])

# PyRival's FastIO template (pajenegod/PyRival, templates/template.py), as a large share of Codeforces Python
# solutions begin: it reads `file.mode`, `file.fileno()` and writes with os.write at flush.
FASTIO = '''
import os
import sys
from io import BytesIO, IOBase

BUFSIZE = 8192


class FastIO(IOBase):
    newlines = 0

    def __init__(self, file):
        self._fd = file.fileno()
        self.buffer = BytesIO()
        self.writable = "x" in file.mode or "r" not in file.mode
        self.write = self.buffer.write if self.writable else None

    def read(self):
        while True:
            b = os.read(self._fd, max(os.fstat(self._fd).st_size, BUFSIZE))
            if not b:
                break
            ptr = self.buffer.tell()
            self.buffer.seek(0, 2), self.buffer.write(b), self.buffer.seek(ptr)
        self.newlines = 0
        return self.buffer.read()

    def readline(self):
        while self.newlines == 0:
            b = os.read(self._fd, max(os.fstat(self._fd).st_size, BUFSIZE))
            self.newlines = b.count(b"\\n") + (not b)
            ptr = self.buffer.tell()
            self.buffer.seek(0, 2), self.buffer.write(b), self.buffer.seek(ptr)
        self.newlines -= 1
        return self.buffer.readline()

    def flush(self):
        if self.writable:
            os.write(self._fd, self.buffer.getvalue())
            self.buffer.truncate(0), self.buffer.seek(0)


class IOWrapper(IOBase):
    def __init__(self, file):
        self.buffer = FastIO(file)
        self.flush = self.buffer.flush
        self.writable = self.buffer.writable
        self.write = lambda s: self.buffer.write(s.encode("ascii"))
        self.read = lambda: self.buffer.read().decode("ascii")
        self.readline = lambda: self.buffer.readline().decode("ascii")


sys.stdin, sys.stdout = IOWrapper(sys.stdin), IOWrapper(sys.stdout)
input = lambda: sys.stdin.readline().rstrip("\\r\\n")
'''


# -- rule 6: stdin and stdout are real files ------------------------------------------------------------------------


@pytest.mark.parametrize("name, program", [
    # Official (piston: `python3 solution.py < input`): each prints the number, so each passes.
    ("pyrival fastio", FASTIO + "print(int(input()))\n"),
    ("modes and descriptors", "import os, sys\nassert sys.stdin.mode == 'r' and sys.stdout.mode == 'w'\n"
                              "assert sys.stdin.fileno() == 0 and sys.stdout.fileno() == 1\n"
                              "os.write(sys.stdout.fileno(), sys.stdin.buffer.read())\n"),
    ("sys.__stdout__", "import sys\nsys.__stdout__.write(sys.__stdin__.readline())\n"),
    ("atexit flush", "import atexit, sys\nn = input()\natexit.register(lambda: sys.stdout.write(n + '\\n'))\n"),
    ("unjoined thread", "import threading\nn = input()\nthreading.Thread(target=lambda: print(n)).start()\n"),
])
def test_stdin_and_stdout_are_real_files(scorer, name, program):
    wrong = program.replace("print(int(input()))", "print(int(input()) + 1)") if "FastIO" in program else "print(0)"
    assert trl_rewards(scorer, ECHO, [program, wrong]) == [1.0, 0.0 if "FastIO" in program else 0.0]


# -- rule 9: an unlimited stack, and a crash fails its own test only -------------------------------------------------


def test_deep_recursion_gets_the_stack_codeforces_gives(scorer):
    # Official: `ulimit -s unlimited`, so an lru_cache recursion 200,000 deep (C stack frames) runs and prints n.
    deep = ("import sys\nfrom functools import lru_cache\nsys.setrecursionlimit(10**6)\n@lru_cache(None)\n"
            "def depth(k):\n    return 0 if k == 0 else 1 + depth(k - 1)\n"
            "n = int(input())\nassert depth(200000) == 200000\nprint(n)\n")
    assert trl_rewards(scorer, ECHO, [deep, deep.replace("print(n)", "print(n + 1)")]) == [1.0, 0.0]


@pytest.mark.parametrize("crash", ["import os\nos._exit(1)", "import ctypes\nctypes.string_at(0)", "raise ValueError",
                                   "import sys\nsys.exit(3)"])
def test_a_crash_on_one_test_fails_that_test_only(scorer, crash):
    # Official: each test is its own `python3 solution.py` run, so the crash on n == 2 (os._exit, a segfault, an
    # exception, exit status 3: a runtime error each) fails test 2 only; tests 1 and 3 pass: 2/3.
    program = "n = int(input())\nif n == 2:\n" + "".join("    " + line + "\n" for line in crash.splitlines()) + \
        "print(n)\n"
    assert trl_rewards(scorer, ECHO, [program]) == [pytest.approx(2 / 3)]


# -- rule 10: SystemExit after correct output, as each format's harness counts it --------------------------------


def test_systemexit_after_output_follows_each_formats_rule(scorer):
    exits = "import sys\nprint(2 * int(input()))\nsys.exit(1)\n"
    # APPS: call_method swallows SystemExit and judges the output: passed. Codeforces (piston): exit status 1 is a
    # runtime error on every test: the program printed before crashing, so each test fails (0.0, not -1.0).
    assert trl_rewards(scorer, apps_row(["1\n", "5\n"], ["2\n", "10\n"]), [exits]) == [1.0]
    echo_exits = "import sys\nprint(int(input()))\nsys.exit(1)\n"
    assert trl_rewards(scorer, ECHO, [echo_exits, "import sys\nprint(int(input()))\nsys.exit(0)\n"]) == [0.0, 1.0]


# -- rule 17: one meaning per status -------------------------------------------------------------------------------


@pytest.mark.parametrize("program", ["import nosuchmod\nprint(int(input()))", "1/0\nprint(int(input()))",
                                     "import sys\nsys.exit(3)"])
def test_a_program_that_crashes_before_any_output_is_an_error_on_every_format(scorer, program):
    # Official: a runtime error on every test (piston: non-zero exit; APPS: exception or, for sys.exit(3) with no
    # output, a wrong answer). trl-sandbox's status rule (docs/rewards.md): a program that crashes before any output
    # on every test is `error` (-1.0), as a function program that does not load is.
    (result,) = scorer.score([Task.from_row(ECHO)], [program])
    assert (result.status, result.reward) == ("error", -1.0), result
    function_row = {"task_id": "f", "test_list": ["assert f(1) == 1"], "test_imports": []}
    function_program = program.replace("print(int(input()))", "def f(x): return x")
    (same,) = scorer.score([Task.from_row(function_row)], [function_program])
    assert (same.status, same.reward) == ("error", -1.0)


# -- rule 7: a completion's budget follows its tests ---------------------------------------------------------------


def test_the_completion_budget_covers_every_tests_limit(sandbox_root):
    n = 10
    row = codeforces_row([(f"{i}\n", f"{i}\n") for i in range(n)], time_limit=1.0)
    slow = "import time\nn = int(input())\ntime.sleep(0.4)\nprint(n)\n"  # 0.4 s per test: within each limit
    task = Task.from_row(row)
    # LiveCodeBench's (t + 1) * n + 5, with each test's wall-clock backstop (3 t) for its t: limits are on CPU time
    assert task.completion_budget_s(3.0) == pytest.approx((3 * 3.0 + 1) * n + 5)
    options = {"root_dir": str(sandbox_root)}
    with Scorer.from_config(SandboxConfig(sandbox_pool_size=1, sandbox_backend_options=options)) as default:
        # Official: every test within its limit passes, however many tests there are: 1.0.
        assert trl_rewards(default, row, [slow]) == [1.0]
    capped = SandboxConfig(sandbox_pool_size=1, sandbox_completion_timeout=2.0, sandbox_backend_options=options)
    with Scorer.from_config(capped) as scorer:
        # A cap the user set cuts the run, but the tests already passed keep their credit: failed, never timeout.
        (result,) = scorer.score([task], [slow])
        assert result.status == "failed" and 0 < result.tests_passed < n and result.reward > 0, result


# -- rule 8: the output limit follows the expected output ----------------------------------------------------------


def test_a_correct_output_larger_than_the_output_limit_is_not_cut(scorer):
    n = 200_000
    expected = "".join(f"{i}\n" for i in range(n))  # about 1.3 MB, over the default 1 MiB sandbox_output_limit
    assert len(expected) > 1 << 20
    row = codeforces_row([(f"{n}\n", expected)])
    program = "import sys\nn = int(input())\nsys.stdout.write(''.join(f'{i}\\n' for i in range(n)))\n"
    # Official (piston): no output cap: the output matches: passed.
    assert trl_rewards(scorer, row, [program, program.replace("range(n)", "range(n + 1)")]) == [1.0, 0.0]


# -- rule 13: the packages datasets assume ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def default_scorer(sandbox_root):
    """A scorer with the limits a user gets (each format's own time per test), not the shared scorer's 1 s: the
    programs here import numpy and pandas, which is charged to their time and took 3.7 s on a machine at load 5
    to 10."""
    config = SandboxConfig(sandbox_pool_size=2, sandbox_backend_options={"root_dir": str(sandbox_root)})
    with Scorer.from_config(config) as scorer:
        yield scorer


def test_apps_prelude_numpy_is_importable_by_default(default_scorer):
    pytest.importorskip("numpy")  # the trainer's environment has it (torch installs it)
    row = apps_row(["3\n", "4\n"], ["6\n", "8\n"])
    uses_np = "n = int(input())\nprint(int(np.array([n, n]).sum()))\n"  # APPS's prelude: import numpy as np
    assert trl_rewards(default_scorer, row, [uses_np, uses_np.replace(".sum()", ".sum() + 1")]) == [1.0, 0.0]


def test_kodcode_tests_and_solutions_import_numpy_and_pandas_by_default(default_scorer):
    pytest.importorskip("numpy")
    pytest.importorskip("pandas")
    from tests.test_official_kodcode import kodcode_row

    test = ("import numpy as np\nimport pandas as pd\nfrom solution import column_means\n\n\n"
            "def test_means():\n    frame = pd.DataFrame({'a': [1, 2, 3], 'b': [4.0, 5.0, 6.0]})\n"
            "    assert np.allclose(column_means(frame), [2.0, 5.0])\n")
    solution = "import numpy as np\n\n\ndef column_means(frame):\n    return np.asarray(frame.mean(axis=0))\n"
    row = kodcode_row("Package_90001_I", "Return the mean of each column of a DataFrame.", solution, test,
                      "column_means", "(frame)")
    # Official (KodCode's environment has numpy, pandas and scikit-learn): the solution passes, a wrong one fails.
    assert trl_rewards(default_scorer, row, [solution, solution.replace("axis=0", "axis=1")]) == [1.0, 0.0]


def test_standard_library_only_stays_an_option(sandbox_root):
    pytest.importorskip("numpy")
    config = SandboxConfig(sandbox_pool_size=1, sandbox_backend_options={"root_dir": str(sandbox_root),
                                                                        "site_packages": False})
    with Scorer.from_config(config) as scorer:
        (result,) = scorer.score([Task.from_row(ECHO)], ["import numpy\nprint(int(input()))"])
        assert result.status == "error" and "numpy" in result.error


def test_packages_of_another_python_version_are_refused_with_the_fix():
    from trl_sandbox.backends._packages import packages_problem

    version = list(__import__("sys").version_info[:2])
    other = packages_problem({"version": [3, 8], "unreadable": []}, None, "/usr/bin/python3.8")
    assert other is not None and "python" in other and "version" in other
    # The sandbox interpreter's own packages (site_packages=True) need no particular version.
    assert packages_problem({"version": [3, 8], "unreadable": []}, None, "/usr/bin/python3.8", same_version=False) \
        is None
    hidden = packages_problem({"version": version, "unreadable": ["/x/numpy"]}, None, "/usr/bin/python3")
    assert hidden is not None and "/x/numpy" in hidden
    assert packages_problem({"version": version, "unreadable": []}, None, "/usr/bin/python3") is None


# -- rule 16: the judge's own start is never the program's verdict --------------------------------------------------


def test_a_judge_that_did_not_start_is_an_infrastructure_failure():
    task = Task.from_row(ECHO)
    with pytest.raises(InfrastructureError):
        task.judge(b"", exit_code=None, timed_out=True)


def test_no_error_text_shows_an_internal_name():
    from trl_sandbox.harness.base import ProgramValueError, Timeout, ValueNotSent, WorkerDied, describe

    for exc in (Timeout(), WorkerDied(), ValueNotSent("x"), ProgramValueError("x")):
        text = describe(exc)
        assert "Timeout" not in text and "WorkerDied" not in text and "ValueNotSent" not in text, text
        assert "ProgramValueError" not in text, text
