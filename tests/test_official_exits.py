"""How a program's own end is judged (issue 36, items 6 and 11): ``os._exit`` in stdin programs and in function
programs, and the statements a HumanEval or MBPP completion writes after its function.

Each case scores published rows through the reward as TRL calls it (:func:`tests._official.trl_rewards`, or the
scorer on the bundled HumanEval rows and sanitized-MBPP rows copied unchanged) and states the official verdict, read
from the harness's source:

- open-r1 Codeforces: ``guipenedo/piston`` ``packages/codeforces/1.0.0/run`` (7a38da2): the program runs as
  ``python3 $1`` (lines 30-33) with the test's input file as stdin and its stdout a file (line 156); a non-zero exit
  status is a runtime error (``handle_exit_code``, lines 92-116, called at line 162), status 0 goes on to compare the
  output file (``diff -bq`` of the normalized outputs, line 202).
- TACO: ``FlagOpen/TACO`` ``metrics/testing_util.py`` (245eba3), ``execute_std_code``: ``subprocess.run(['python',
  ...])`` per test (line 304); return code 0 goes to ``compare_std_results(result.stdout, ...)`` (line 338), any
  other is retried with the input as a file and fails with ``returncode:N`` (lines 314-336).
- code_contests: ``google-deepmind/code_contests`` ``execution/tester_sandboxer.cc`` (fa7a4f8),
  ``ExecutionResultFromTestSandboxResult`` (lines 655-671): a sandboxee that ends ``OK`` with reason code 0 (its exit
  status) is ``kSuccess``, and its stdout is compared.
- APPS: ``hendrycks/apps`` ``eval/test_one_solution.py`` calls ``run_test`` in its own process, which ``os._exit``
  ends: no result is recorded. LiveCodeBench: ``lcb_runner/evaluation/compute_code_generation_metrics.py``
  ``codegen_check_correctness`` runs it in a ``multiprocessing.Process``; a child that ended with no result counts
  as failed on every test (``if not result: ... consider that all tests failed``). rllm (DeepCoder, PrimeIntellect;
  ``rllm/rewards/code_utils/taco.py`` at 18e446c, ``execute_std_code``) runs ``python3 program`` per test and
  compares the output whatever its exit status.
- HumanEval: ``openai/human-eval`` ``human_eval/execution.py`` (6d43fb9): the program is ``prompt + completion +
  "\\n" + test + "\\n" + "check(entry_point)"`` (lines 27-34), ``exec``'d in one process (line 50); ``"passed"`` is
  appended only when the ``exec`` returns (line 51), ``SystemExit`` is caught as ``failed`` (lines 54-55), and a
  process that ended with no result counts as ``timed out``, not passed (lines 83-84). MBPP: the same procedure on
  ``completion + "\\n" + test_imports + test_list`` (HF ``code_eval``'s ``execute.py``, adapted from human-eval's).
- KodCode: ``KodCode-AI/kodcode``'s ``run_test.sh``: ``pytest`` passes the row when its exit status is 0.
"""

from __future__ import annotations

import pytest

from tests._official import trl_rewards
from tests.test_formats import APPS_CALL, KODCODE, LCB_FUNCTIONAL
from tests.test_harness import run_request
from tests.test_official_limits import FASTIO
from tests.test_official_stdout import apps_row, code_contests_row, codeforces_row, taco_row
from tests.test_verdicts import HE_ROWS, MBPP_ROWS
from trl_sandbox import Task

INPUTS, OUTPUTS = ["3\n", "10\n", "7\n"], ["6\n", "20\n", "14\n"]
ROWS = {
    "codeforces": codeforces_row([{"input": i, "output": o} for i, o in zip(INPUTS, OUTPUTS)], problem="D"),
    "taco": taco_row(INPUTS, OUTPUTS),
    "code_contests": code_contests_row(INPUTS, OUTPUTS),
}

# The fast-exit idiom: the answer written and flushed, then the process ended at once (no atexit, no teardown).
FAST_EXIT = "import os\nimport sys\n\nn = int(sys.stdin.readline())\nsys.stdout.write(str(2 * n) + '\\n')\n" \
            "sys.stdout.flush()\nos._exit(0)\n"
# PyRival's template (FastIO writes with os.write when flushed), ended the same way.
PYRIVAL_EXIT = FASTIO + "\n\ndef main():\n    n = int(input())\n    print(2 * n)\n\n\nif __name__ == '__main__':\n" \
                        "    main()\n    sys.stdout.flush()\n    os._exit(0)\n"
# os.write straight to descriptor 1: nothing is buffered in Python.
RAW_WRITE_EXIT = "import os\n\nn = int(input())\nos.write(1, b'%d\\n' % (2 * n))\nos._exit(0)\n"


@pytest.mark.parametrize("fmt", list(ROWS))
@pytest.mark.parametrize("program", [FAST_EXIT, PYRIVAL_EXIT, RAW_WRITE_EXIT], ids=["flush", "pyrival", "os.write"])
def test_os_exit_0_after_the_output_is_a_normal_end(scorer, fmt, program):
    # Official: the process exits 0 and its output file holds the answer: accepted on every test.
    assert trl_rewards(scorer, ROWS[fmt], [program]) == [1.0]


@pytest.mark.parametrize("fmt", list(ROWS))
def test_the_output_is_still_what_is_judged(scorer, fmt):
    # Official: exit status 0 only sends the output to the comparison. A wrong answer before os._exit(0) fails each
    # test; print() without a flush leaves the answer in Python's buffer, which os._exit discards: the output file is
    # empty, a wrong answer on each test (0.0, not an error: the program ran and exited 0).
    wrong = FAST_EXIT.replace("2 * n", "2 * n + 1")
    unflushed = "import os\n\nprint(2 * int(input()))\nos._exit(0)\n"
    assert trl_rewards(scorer, ROWS[fmt], [wrong, unflushed]) == [0.0, 0.0]


@pytest.mark.parametrize("fmt", ["codeforces", "taco"])
def test_a_nonzero_os_exit_stays_a_runtime_error(scorer, fmt):
    # Official: exit status 1 is a runtime error (piston's handle_exit_code; TACO's returncode:1) on every test, though
    # the right answer was flushed: 0.0 (it printed before crashing); with nothing printed, an error (-1.0). A status
    # is its low 8 bits, as the kernel keeps it: os._exit(256) is status 0, a normal end.
    nonzero = FAST_EXIT.replace("os._exit(0)", "os._exit(1)")
    silent = "import os\nos._exit(3)\n"
    wraps = FAST_EXIT.replace("os._exit(0)", "os._exit(256)")
    assert trl_rewards(scorer, ROWS[fmt], [nonzero, silent, wraps]) == [0.0, -1.0, 1.0]


def test_apps_counts_os_exit_as_python3_would_run_it(scorer):
    # Departure (docs/datasets.md): APPS runs the program inside its own process, which os._exit ends with no result
    # recorded. trl-sandbox runs a stdin program as `python3 prog.py` runs it: exit status 0 after the answer passes;
    # a non-zero os._exit fails even where APPS swallows SystemExit and judges the output.
    row = apps_row(INPUTS, OUTPUTS)
    assert trl_rewards(scorer, row, [FAST_EXIT, FAST_EXIT.replace("os._exit(0)", "os._exit(1)")]) == [1.0, 0.0]


def test_every_test_after_an_os_exit_runs_in_a_fresh_worker(scorer):
    # Each test is its own process officially: nothing the program left in its interpreter reaches the next test.
    # Here os._exit ends the worker, and the next test runs in a fresh one: `sys.ran` is never set when a test starts.
    stateful = ("import os, sys\n\nn = int(input())\nprint(-1 if hasattr(sys, 'ran') else 2 * n, flush=True)\n"
                "sys.ran = True\nos._exit(0)\n")
    assert trl_rewards(scorer, ROWS["codeforces"], [stateful]) == [1.0]


def test_os_exit_0_from_a_thread_or_posix(scorer):
    # os._exit from a thread ends the whole process; posix._exit and `from os import _exit` are the same call.
    thread = ("import os, sys, threading, time\n\nn = int(input())\n\n\ndef answer():\n    print(2 * n, flush=True)\n"
              "    os._exit(0)\n\n\nthreading.Thread(target=answer).start()\ntime.sleep(30)\n")
    posix = "import posix\n\nprint(2 * int(input()), flush=True)\nposix._exit(0)\n"
    imported = "from os import _exit\n\nprint(2 * int(input()), flush=True)\n_exit(0)\n"
    assert trl_rewards(scorer, ROWS["codeforces"], [thread, posix, imported]) == [1.0, 1.0, 1.0]


def test_a_process_ended_around_os_exit_is_a_crash(scorer):
    # Departure (docs/datasets.md): libc's _exit(0) through ctypes ends the process with status 0, which piston would
    # judge on its output; here only os._exit answers before the end, so the worker's death is a crash whose output
    # nobody read, on every test: an error (-1.0).
    libc_exit = "import ctypes\n\nprint(2 * int(input()), flush=True)\nctypes.CDLL(None)._exit(0)\n"
    assert trl_rewards(scorer, ROWS["codeforces"], [libc_exit]) == [-1.0]


def test_os_exit_in_the_remote_harness(tmp_path):
    # `python harness.pyz` (the remote backends' way): a fresh worker comes from the zygote after each os._exit.
    task = Task.from_row(ROWS["codeforces"])
    request = task.request(FAST_EXIT, test_timeout_s=5.0, output_limit=1 << 16)
    _, records = run_request(tmp_path, request)
    assert [r.get("ok") for r in records if "i" in r] == [True, True, True], records


# -- function programs: os._exit(0) is no pass --------------------------------------------------------------------


def test_os_exit_in_a_function_program_fails_as_the_official_harness_fails_it(scorer):
    # HumanEval and MBPP: the check runs in the program's process; os._exit(0) ends it before "passed" is appended,
    # and no result counts as "timed out": failed. APPS call-based and LiveCodeBench functional: no result, every test
    # failed. KodCode: see tests/test_official_kodcode.py (pytest's exit status 0 passes it there: a departure).
    he = HE_ROWS["HumanEval/53"]  # add(x, y)
    (he_result,) = scorer.score([Task.from_row(he)], ["    import os\n    os._exit(0)\n    return x + y\n"])
    mbpp = MBPP_ROWS[0]  # 88: freq_count
    exits = "```python\nimport collections\nimport os\n\ndef freq_count(list1):\n    os._exit(0)\n```"
    (mbpp_result,) = scorer.score([Task.from_row(mbpp)], [exits])
    apps_exit = "import os\n\ndef count_sheeps(arr):\n    os._exit(0)\n"
    lcb_exit = ("import os\n\nclass Solution:\n    def maximumNumberOfStringPairs(self, words):\n"
                "        os._exit(0)\n")
    for result in (he_result, mbpp_result):
        assert not result.passed and result.tests_passed == 0, result
    assert trl_rewards(scorer, APPS_CALL, [apps_exit]) == [-1.0]
    assert trl_rewards(scorer, LCB_FUNCTIONAL, [lcb_exit]) == [-1.0]
    forged = "import os\n\ndef two_sum(nums, target):\n    os._exit(0)\n"
    assert trl_rewards(scorer, KODCODE, [forged]) == [-1.0]


# -- item 11: the statements after the function, one rule for HumanEval and MBPP ----------------------------------

MBPP_88 = "import collections\n\ndef freq_count(list1):\n    return dict(collections.Counter(list1))\n"
HE_53 = "    return x + y\n"  # HumanEval/53's body, as a base model continues the prompt


@pytest.mark.parametrize("trailer, passes", [
    # human-eval: the trailer runs before check(); SystemExit is caught as "failed: 1", os._exit leaves no result.
    ("import sys\nsys.exit(1)\n", False),
    ("import os\nos._exit(0)\n", False),
    ("raise SystemExit\n", False),
    # the model's own wrong assert fails there too; a right one, an example print and a __main__ block (which does
    # not run: the program is not __main__ there either) change nothing
    ("assert {call} == 0\n", False),
    ("assert {call} == {value}\n", True),
    ("print({call})\n", True),
    ("if __name__ == '__main__':\n    import sys\n    sys.exit(1)\n", True),
    ("try:\n    import numpy\nexcept ImportError:\n    numpy = None\nelse:\n    pass\n", True),
])
def test_statements_after_the_function_run_in_humaneval_and_mbpp_alike(scorer, trailer, passes):
    he_trailer = trailer.format(call="add(2, 3)", value=5)
    mbpp_trailer = trailer.format(call="freq_count([1, 1])", value="{1: 2}")
    he_task, mbpp_task = Task.from_row(HE_ROWS["HumanEval/53"]), Task.from_row(MBPP_ROWS[0])
    he_result, mbpp_result = scorer.score([he_task, mbpp_task], [HE_53 + "\n\n" + he_trailer,
                                                                 f"```python\n{MBPP_88}\n\n{mbpp_trailer}```"])
    # A trailer that exits or fails ends the program while it loads: an error (-1.0) in both.
    assert (he_result.reward, mbpp_result.reward) == ((1.0, 1.0) if passes else (-1.0, -1.0)), (he_result, mbpp_result)


def test_a_continuation_leaves_out_only_what_is_not_python(scorer):
    # Text a base model writes after the body that is no Python (prose, a statement the length limit cut) is left
    # out; human-eval would fail the whole program with a SyntaxError (a departure: docs/datasets.md).
    task = Task.from_row(HE_ROWS["HumanEval/53"])
    prose = HE_53 + "\n\nThis function adds the two numbers.\n\nprint(add(2, 3))\nprint(add(2,"
    assert task.program(prose).endswith("    return x + y\n\n\nprint(add(2, 3))\n")
    (result,) = scorer.score([task], [prose])
    assert result.passed, result


# -- the __main__ module of `python3 solution.py`: what a program reads of its own file --------------------------
MAIN_READER = ("import os, sys\n"
               "print(os.path.basename(__file__), os.path.isabs(__file__), sys.argv, __doc__, __name__, __package__,\n"
               "      __spec__, __cached__, sorted(k for k in globals() if k.startswith('__')))\n"
               "print(input())\n")


@pytest.mark.parametrize("docstring", ["", '"""Reads its own file name."""\n'], ids=["plain", "docstring"])
def test_a_stdin_program_sees_the_main_module_python3_gives_it(scorer, tmp_path, docstring):
    """A jury-accepted Kattis program failed with ``NameError: name '__file__' is not defined`` (issue 48, item 4):
    the program's ``__file__``, ``sys.argv``, ``__doc__`` and the other ``__main__`` globals are those of
    ``python3 solution.py < input`` (problemtools', piston's and TACO's way), here run for the expected output."""
    import subprocess
    import sys

    program = docstring + MAIN_READER + "print(__doc__)\n"
    (tmp_path / "solution.py").write_text(program)
    expected = subprocess.run([sys.executable, "solution.py"], input="7\n", capture_output=True, text=True,
                              cwd=tmp_path, check=True, timeout=60).stdout
    row = {"task_id": "main-module", "inputs": ["7\n"], "outputs": [expected]}
    assert "solution.py True ['solution.py']" in expected
    (result,) = scorer.score([Task.from_row(row)], [program])
    assert result.passed, (expected, result.output, result.error)
    request = Task.from_row(row).request(program, test_timeout_s=5.0, output_limit=1 << 16)
    (tmp_path / "remote").mkdir()
    _, records = run_request(tmp_path / "remote", request)  # the remote harness's worker too
    assert [r.get("ok") for r in records if "i" in r] == [True], records
