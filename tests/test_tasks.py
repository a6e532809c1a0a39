"""Task formats, code extraction, banned patterns and judging (no sandbox)."""

import json

import pytest

from trl_sandbox import Task, TaskFormatError, extract_code, load_tasks
from trl_sandbox.banned import find_banned_pattern

HE_ROW = {
    "task_id": "t/add",
    "prompt": 'def add(a, b):\n    """Add."""\n',
    "entry_point": "add",
    "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n    x = candidate(2, 2)\n    assert x == 4\n",
}


def test_detects_each_format():
    assert Task.from_row(HE_ROW).format == "humaneval"
    assert Task.from_row({"test_list": ["assert f(1) == 1"]}).format == "mbpp"
    assert Task.from_row({"inputs": ["1\n"], "outputs": ["1\n"]}).format == "stdio"
    call = {"prompt": "def f(x):\n", "func_name": "f", "tests": ["[1]"], "reference": "sorted"}
    assert Task.from_row(call).format == "call"


def test_humaneval_check_is_split_into_assert_tests():
    task = Task.from_row(HE_ROW)
    assert len(task.tests) == 2
    assert "x = candidate(2, 2)" in task.tests[1]  # setup statements travel with the assert after them
    he = [Task.from_row(r) for r in load_tasks("humaneval")]
    assert len(he) == 164 and he[0].task_id == "HumanEval/0" and len(he[0].tests) == 7


@pytest.mark.parametrize(
    "row, message",
    [
        ({"prompt": "x"}, "cannot tell the task format"),
        ({"test_list": "assert f()"}, "list of strings"),
        ({"inputs": ["1"], "outputs": []}, "1 inputs but 0 outputs"),
        ({"entry_point": "not an id", "test": "def check(c): pass"}, "identifier"),
        ({"func_name": "f", "tests": [], "reference": "sorted"}, "no tests"),
        ("a string", "mapping"),
    ],
)
def test_bad_task_rows_get_one_clear_error(row, message):
    with pytest.raises(TaskFormatError, match=message):
        Task.from_row(row)


def test_load_tasks_errors(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1}\nnot json\n')
    with pytest.raises(TaskFormatError, match="bad.jsonl:2"):
        load_tasks(bad)
    with pytest.raises(TaskFormatError, match="bundled sets"):
        load_tasks(tmp_path / "missing.jsonl")


@pytest.mark.parametrize(
    "completion, code",
    [
        ("    return 1\n", "    return 1\n"),
        ("Here:\n```python\ndef f():\n    return 1\n```\nDone.", "def f():\n    return 1\n"),
        ("```\nx = 1\n```", "x = 1\n"),
        ("```js\nlet x\n```\n```py\ny = 2\n```", "y = 2\n"),
        ("```python\ntruncated = True\n", "truncated = True\n"),
        ("<think>```python\nwrong\n```</think>```python\nright\n```", "right\n"),
        ([{"role": "assistant", "content": "```python\nz = 3\n```"}], "z = 3\n"),
        ([{"role": "assistant", "content": [{"type": "text", "text": "q = 4"}]}], "q = 4"),
    ],
)
def test_extract_code(completion, code):
    assert extract_code(completion) == code


@pytest.mark.parametrize(
    "code, banned",
    [
        ("return sorted (xs)", "sorted("),
        ("return sorted(\n    xs)", "sorted("),
        ("xs . sort ( )", ".sort("),
        ("import heapq", "heapq"),
        ("return eval('sorted(xs)')", "sorted("),
        ("myheapq = 1", None),
        ("# sorted(xs) would be cheating\nreturn xs", None),
        ("importlib = 1", None),
    ],
)
def test_banned_patterns_match_tokens(code, banned):
    patterns = ["sorted(", ".sort(", "heapq", "import "]
    assert find_banned_pattern(code, patterns) == banned


def test_program_assembly():
    task = Task.from_row(HE_ROW)
    # A continuation keeps every statement after the body (the official one module runs them: issue 36, item 11) and
    # leaves out only text that is not Python.
    body = "    return a + b\nprint('after the function')\nThat is all.\n"
    assert task.program(body) == HE_ROW["prompt"] + "    return a + b\n\n\nprint('after the function')\n"
    whole = "def add(a, b):\n    return a + b\n"
    assert task.program(whole).endswith(whole) and task.program(whole).startswith(HE_ROW["prompt"])
    assert Task.from_row({"test_list": ["assert f() == 1"]}).program("x = 1") == "x = 1"
    # An MBPP row with starter_code reads a continuation the same way as HumanEval (one rule: issue 36, item 11).
    mbpp = Task.from_row({"test_list": ["assert inc(1) == 2"], "starter_code": "def inc(x):\n"})
    assert mbpp.program("    return x + 1\nThat adds one.\nimport sys\nsys.exit(1)\n") == \
        "def inc(x):\n\n    return x + 1\n\n\nimport sys\n\n\nsys.exit(1)\n"


def _stdout(*records):
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def test_judge_counts_against_the_tasks_own_tests():
    task = Task.from_row(HE_ROW)
    # extra records with out-of-range indices and duplicate claims do not add passes
    out = _stdout({"ready": True}, {"i": 0, "ok": True}, {"i": 5, "ok": True}, {"i": 0, "ok": True}, {"done": 9})
    verdict = task.judge(out, exit_code=0, timed_out=False)
    assert (verdict.status, verdict.tests_passed, verdict.tests_total) == ("failed", 1, 2)


def test_judge_statuses():
    task = Task.from_row(HE_ROW)
    ready = {"ready": True}
    assert task.judge(_stdout(ready, {"load": "error", "error": "SyntaxError"}), exit_code=0, timed_out=False).status == "error"
    assert task.judge(_stdout(ready, {"i": 0, "ok": True}), exit_code=0, timed_out=False).status == "error"  # no done
    # A run past its budget keeps the tests it passed (issue 26, rule 7): failed with their pass rate, not timeout.
    cut = task.judge(_stdout(ready, {"i": 0, "ok": True}), exit_code=None, timed_out=True)
    assert (cut.status, cut.tests_passed) == ("failed", 1)
    assert task.judge(_stdout(ready, {"i": 0, "ok": False}), exit_code=None, timed_out=True).status == "timeout"
    assert task.judge(_stdout(ready, {"i": 0, "ok": False, "timeout": True}, {"done": 1}), exit_code=0,
                      timed_out=False).status == "timeout"
    full = _stdout(ready, {"i": 0, "ok": True}, {"i": 1, "ok": True}, {"done": 2})
    assert task.judge(full, exit_code=0, timed_out=False).status == "passed"
