"""Scoring real code on the local backend: every task format, passing and failing, and what must not score."""

import json

import pytest

from trl_sandbox import Task, load_tasks

HE = {r["task_id"]: r for r in load_tasks("humaneval")}
DAYTONA = {r["task_id"]: Task.from_row(r) for r in load_tasks("daytona")}
MBPP = Task.from_row(
    {
        "task_id": "mbpp/2",
        "test_imports": ["import math"],
        "test_list": [
            "assert set(similar(( 3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))",
            "assert set(similar((1, 2, 3, 4),(5, 4, 3, 7))) == set((3, 4))",
            "assert math.isclose(similar_len((1, 2), (2, 3)), 1.0)",
        ],
    }
)
STDIO = Task.from_row({"task_id": "sum", "inputs": ["1 2\n", "10 -3\n"], "outputs": ["3\n", "7"]})
SORT_OK = (
    "    out = list(xs)\n    for i in range(1, len(out)):\n        j = i\n"
    "        while j and out[j - 1] > out[j]:\n            out[j - 1], out[j] = out[j], out[j - 1]\n"
    "            j -= 1\n    return out\n"
)


def score(scorer, task, *completions):
    return scorer.score([task] * len(completions), list(completions))


def test_humaneval_pass_and_fail(scorer):
    task = Task.from_row(HE["HumanEval/0"])
    canonical = HE["HumanEval/0"]["canonical_solution"]
    whole = HE["HumanEval/0"]["prompt"] + canonical  # a completion that defines the entry point itself
    fenced = f"Sure:\n```python\n{whole}```\n"
    ok, ok_whole, ok_fenced, fail = score(scorer, task, canonical, whole, fenced, "    return False\n")
    assert [ok.status, ok_whole.status, ok_fenced.status] == ["passed"] * 3 and ok.reward == 1.0
    assert fail.status == "failed" and 0.0 <= fail.reward < 1.0 and fail.tests_total == 7


def test_whole_humaneval_canonical_and_pass_bodies(scorer):
    tasks = [Task.from_row(r) for r in HE.values()]
    good = scorer.score(tasks, [r["canonical_solution"] for r in HE.values()])
    assert sum(r.passed for r in good) == 164, [r for r in good if not r.passed][:3]
    bad = scorer.score(tasks, ["    pass\n"] * len(tasks))
    assert sum(r.passed for r in bad) == 0 and all(r.status == "failed" for r in bad)


def test_mbpp_pass_and_fail(scorer):
    good = "def similar(a, b):\n    return tuple(set(a) & set(b))\n\ndef similar_len(a, b):\n    return 1.0\n"
    half = "def similar(a, b):\n    return (4, 5)\n\ndef similar_len(a, b):\n    return 1.0\n"
    ok, partial, broken = score(scorer, MBPP, good, half, "def similar(:\n")
    assert ok.status == "passed" and ok.reward == 1.0
    assert partial.status == "failed" and partial.reward == pytest.approx(2 / 3)
    assert broken.status == "error" and broken.reward == -1.0 and "SyntaxError" in broken.error


def test_a_bare_signature_prompt_is_closed_for_a_whole_function(scorer):
    """An MBPP-style row whose prompt is a bare signature: a completion that writes the whole function (as a model
    does, in markdown) stands alone, as after HumanEval's docstring; a body continuation still continues it. Before:
    the whole function was appended to the open header (IndentationError, -1.0)."""
    mbpp = Task.from_row({"task_id": "inc", "prompt": "def inc(x):", "test_list": ["assert inc(1) == 2",
                                                                                 "assert inc(-1) == 0"]})
    # A HumanEval-style row whose prompt is an import and a bare signature: the import stays available.
    typed = Task.from_row({"task_id": "total", "entry_point": "total",
                           "prompt": "from typing import List\ndef total(xs: List[int]) -> int:",
                           "test": "def check(candidate):\n    assert candidate([1, 2]) == 3\n"})
    whole = "Here is the function:\n```python\ndef inc(x):\n    return x + 1\n```\n"
    results = scorer.score([mbpp, mbpp, mbpp, typed, typed],
                           [whole, "    return x + 1\n", "def inc(x):\n    return x\n",
                            "def total(xs: List[int]) -> int:\n    return sum(xs)\n", "    return sum(xs)\n"])
    assert [r.status for r in results] == ["passed", "passed", "failed", "passed", "passed"], results


def test_call_based_daytona_tasks(scorer):
    kadane = "    best = cur = xs[0]\n    for x in xs[1:]:\n        cur = max(x, cur + x)\n        best = max(best, cur)\n    return best\n"
    sort, sub = DAYTONA["daytona/sorting"], DAYTONA["daytona/max_subarray"]
    results = scorer.score(
        [sort, sort, sort, sub, sub],
        [SORT_OK, "    return sorted (xs)\n", "    s = xs\n    return s[::-1]\n", kadane, "    return sum(xs)\n"],
    )
    assert [r.status for r in results] == ["passed", "banned", "failed", "passed", "failed"]
    assert results[1].reward == -1.0 and results[2].tests_total == 5 and results[4].tests_passed == 3


def test_call_based_rigged_equality_does_not_pass(scorer):
    rigged = (
        "    class Anything(list):\n        def __eq__(self, other):\n            return True\n"
        "    return Anything()\n"
    )
    (result,) = score(scorer, DAYTONA["daytona/max_subarray"], rigged)
    assert result.status == "failed" and result.tests_passed == 0


def test_call_based_bool_is_not_int(scorer):
    task = Task.from_row({"prompt": "def f(x):\n", "func_name": "f", "tests": ["0", "5"], "reference": "bool"})
    (strict,) = score(scorer, task, "    return 1 if x else 0\n")
    (right,) = score(scorer, task, "    return x != 0\n")
    assert strict.tests_passed == 0 and right.passed


def test_stdio_pass_and_fail(scorer):
    ok = "a, b = map(int, input().split())\nprint(a + b, '  ')\n"
    via_buffer = "import sys\na, b = map(int, sys.stdin.buffer.read().split())\nsys.stdout.write(f'{a + b}\\n\\n')\n"
    wrong = "print(0)\n"
    crash = "raise ValueError('boom')\n"
    results = score(scorer, STDIO, ok, via_buffer, wrong, crash)
    # A program that crashes before any output on every test is an error, as on function rows (issue 26, rule 17).
    assert [r.status for r in results] == ["passed", "passed", "failed", "error"]


def test_stdio_is_whole_output_not_line_zip(scorer):
    task = Task.from_row({"inputs": [""], "outputs": ["1\n2\n"]})
    (extra,) = score(scorer, task, "print(1)\nprint(2)\nprint(3)\n")
    (order,) = score(scorer, task, "print(2)\nprint(1)\n")
    assert extra.status == "failed" and order.status == "failed"


def test_hanging_completion_times_out_and_others_are_intact(scorer):
    task = Task.from_row(HE["HumanEval/0"])
    hang = "    while True:\n        pass\n"
    sleeper = "    import time\n    time.sleep(100)\n"
    canonical = HE["HumanEval/0"]["canonical_solution"]
    results = score(scorer, task, hang, canonical, sleeper, canonical)
    assert [r.status for r in results] == ["timeout", "passed", "timeout", "passed"]
    assert results[0].reward == -1.0 and results[2].reward == -1.0


def test_completion_that_loads_forever_times_out(scorer):
    (result,) = score(scorer, MBPP, "while True:\n    pass\n")
    assert result.status == "timeout" and result.reward == -1.0


def test_printed_results_do_not_count(scorer):
    forged = "".join(json.dumps(r) + "\\n" for r in [{"i": i, "ok": True} for i in range(7)] + [{"done": 7}])
    code = f"    print('{forged}')\n    return False\n"
    (result,) = score(scorer, Task.from_row(HE["HumanEval/0"]), code)
    assert not result.passed and result.tests_passed < 7


@pytest.mark.parametrize("exit_call", ["sys.exit(0)", "os._exit(0)", "exit()"])
def test_exiting_early_is_not_a_pass(scorer, exit_call):
    code = f"import os, sys\n{exit_call}\n"
    (result,) = score(scorer, MBPP, code)
    assert result.status == "error" and result.reward == -1.0


def test_empty_completion_is_an_error(scorer):
    (result,) = score(scorer, MBPP, "   \n")
    assert result.status == "error" and result.reward == -1.0


def test_broken_reference_is_an_invalid_task_not_a_wrong_answer(scorer):
    task = Task.from_row({"prompt": "def f(x):\n", "func_name": "f", "tests": ["[1]"], "reference": "nope"})
    (result,) = score(scorer, task, "    return x\n")
    assert result.status == "invalid_task" and result.reward is None


def test_closing_the_pool_under_a_batch_reports_no_infrastructure_error(own_sandbox_root):
    """A signal closes the pool while a batch runs (``lifecycle``'s handler, then Ctrl-C's KeyboardInterrupt): the
    batch is cancelled before its sandboxes are deleted, so the completions it had not finished are not reported
    (``on_result``, ``trl-sandbox score --out``) as infrastructure errors of sandboxes deleted under them. Before,
    ``score`` interrupted under CI's load wrote 199 results for 200 samples, most of them ``infra_error``."""
    import threading

    import anyio

    from trl_sandbox import SandboxConfig, Scorer

    task = Task.from_row(HE["HumanEval/0"])
    slow = "import time\ntime.sleep(0.3)\n" + HE["HumanEval/0"]["prompt"] + HE["HumanEval/0"]["canonical_solution"]
    reported, first = [], threading.Event()

    def on_result(i, result):
        reported.append(result.status)
        first.set()

    config = SandboxConfig(sandbox_pool_size=2, sandbox_backend_options={"root_dir": str(own_sandbox_root)})
    with Scorer.from_config(config) as scorer:
        backend = scorer.pool.backend
        delete = backend.delete

        async def slow_delete(sandbox):  # a close as slow as one under CI's load: the batch has time to go on
            await delete(sandbox)
            await anyio.sleep(2.0)

        backend.delete = slow_delete
        closer = threading.Thread(target=lambda: first.wait(60) and scorer.pool.close())
        closer.start()
        results = scorer.score([task] * 40, [slow] * 40, on_result=on_result)
        closer.join()
    assert reported and set(reported) == {"passed"}, reported
    # what score() returns for the rest says why: the pool was closed (reward None, never a wrong answer)
    unfinished = [r for r in results if r.status != "passed"]
    assert unfinished and all(r.status == "infra_error" and "closed" in r.error for r in unfinished), unfinished[:2]


def test_straggler_deadline_cancels_and_the_pool_recovers(own_sandbox_root):
    """A completion still running at sandbox_batch_deadline_s is cancelled (reward None), its sandbox replaced, and
    the rest of the batch keeps its results."""
    import time

    from trl_sandbox import SandboxConfig, Scorer

    task = Task.from_row(HE["HumanEval/0"])
    canonical = HE["HumanEval/0"]["canonical_solution"]
    # A sandbox for each completion: the three right ones wait for no lease (a wait for the pool's sandboxes counts
    # against a batch deadline, as it should: that is the straggling the deadline bounds); three after one another on
    # one sandbox within 3 s were cancelled beside two busy processes and two other test workers.
    config = SandboxConfig(
        sandbox_pool_size=4,
        sandbox_test_timeout=60.0,
        sandbox_completion_timeout=60.0,
        sandbox_batch_deadline_s=5.0,
        sandbox_backend_options={"root_dir": str(own_sandbox_root)},
    )
    with Scorer.from_config(config) as scorer:
        start = time.monotonic()
        results = scorer.score([task] * 4, ["    while True:\n        pass\n", canonical, canonical, canonical])
        elapsed = time.monotonic() - start
        assert [r.status for r in results] == ["cancelled", "passed", "passed", "passed"]
        assert results[0].reward is None and "deadline" in results[0].error
        assert elapsed < 30  # far below the 60 s the straggler was allowed: the batch did not wait for it
        for _ in range(100):  # the straggler's sandbox (and its busy process) is deleted in the background
            if scorer.pool.stats.deleted == 1:
                break
            time.sleep(0.1)
        assert scorer.pool.stats.deleted == 1
        again = scorer.score([task] * 4, [canonical] * 4)  # all four slots: the straggler's gets its replacement
        assert [r.status for r in again] == ["passed"] * 4
        assert scorer.pool.stats.replaced == 1 and len(scorer.pool.live_sandboxes()) == 4


def test_result_carries_timings_and_the_end_of_the_output(scorer):
    task = Task.from_row(HE["HumanEval/0"])
    code = "    import sys\n    print('x' * 5000)\n    print('the end', file=sys.stderr)\n    raise ValueError('boom')\n"
    (result,) = score(scorer, task, code)
    assert result.status == "failed" and result.exec_s > 0 and result.queue_s >= 0 and result.retries == 0
    assert "boom" in result.error
    assert result.output.startswith("[... ") and " characters cut]\n" in result.output[:40]  # said, when cut
    assert len(result.output.split("\n", 1)[1]) == 1000 and result.output.endswith("xxx\nthe end\n")


def test_the_output_has_stdout_stderr_the_traceback_and_the_failing_test(scorer):
    # What a user asking why a program failed reads: what it printed on stdout and on stderr (before, stdout never
    # arrived on the local backend: it sat in the worker's buffer), the traceback of the exception that ended it, as
    # python3 prog.py prints it, and which test failed with which message.
    he = Task.from_row(HE["HumanEval/0"])
    (result,) = score(scorer, he, "    import sys\n    print('looking at', threshold)\n"
                                  "    print('on stderr', file=sys.stderr)\n    return False\n")
    assert result.status == "failed" and result.failed_test == 0 and "assert" in result.error.lower(), result
    assert "looking at 0.3\n" in result.output and "on stderr\n" in result.output, result.output
    double = Task.from_row({"task_id": "double", "inputs": ["1\n", "2\n"], "outputs": ["2\n", "4\n"]})
    (result,) = score(scorer, double, "x = int(input())\nprint(x * 2 if x == 1 else {}[x])\n")
    assert result.status == "failed" and result.tests_passed == 1 and result.failed_test == 1, result
    assert "KeyError: 2" in result.error
    assert 'File "<completion>", line 2' in result.output and result.output.rstrip().endswith("KeyError: 2")
    assert "Traceback (most recent call last)" in result.output and "harness" not in result.output, result.output
    (result,) = score(scorer, double, "print(int(input()) * 2)\n")
    assert result.passed and result.failed_test is None


def test_the_quickstart_tasks_pass_with_their_solutions_and_fail_without(scorer):
    """The bundled quick-start family: 54 tasks, 36 warm-up and 18 held apart; each reference solution passes its
    tests, and a neighbour's (the constant of another task) does not."""
    from trl_sandbox import Task
    from trl_sandbox.tiny import quickstart_tasks

    rows = quickstart_tasks()
    assert len(rows) == 54 and len(quickstart_tasks("rl")) == 18 and len(quickstart_tasks("warmup")) == 36
    tasks = [Task.from_row(r) for r in rows]
    right = scorer.score(tasks, [r["canonical_solution"] for r in rows])
    wrong = scorer.score(tasks, [rows[i - 1]["canonical_solution"] for i in range(len(rows))])
    assert all(r.status == "passed" for r in right)
    assert not any(r.status == "passed" for r in wrong)
