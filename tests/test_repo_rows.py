"""SWE-bench 5.0 rows read as published (trl_sandbox.repos.rows), their eval script recording the test command's exit
status as SWE-bench 5.0 does, and a completion's unified diff (trl_sandbox.completions.extract_patch)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from trl_sandbox import TaskFormatError
from trl_sandbox.completions import extract_patch
from trl_sandbox.repos import grade
from trl_sandbox.repos.rows import END_OTHERS, eval_script_of, read_swebench

PATCH = """diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
"""

#: An instance in SWE-bench 5.0's shape (the fields of ``swebench/types.py`` plus the self-contained evaluation
#: fields), its eval script as the dataset writes them: ``set -x`` markers around the test command.
ROW = {
    "repo": "example/calc", "instance_id": "example__calc-1", "base_commit": "0123abcd" * 5,
    "patch": PATCH, "test_patch": "", "problem_statement": "add() subtracts.", "hints_text": "",
    "created_at": "2026-03-01T00:00:00Z", "version": "1.0", "environment_setup_commit": "0123abcd" * 5,
    "FAIL_TO_PASS": json.dumps(["test_calc.py::test_add"]), "PASS_TO_PASS": json.dumps(["test_calc.py::test_other"]),
    "image": "swebench/sweb.eval.x86_64.example_1776_calc-1:latest", "log_parser": "parse_log_pytest",
    "eval_type": "pass_and_fail",
    "eval_script": "#!/bin/bash\nset -uxo pipefail\ncd \"$REPO\"\n: '>>>>> Start Test Output'\n"
                   "\"$PYTHON\" -m pytest -rA -p no:cacheprovider test_calc.py\n: '>>>>> End Test Output'\n"
                   "git status >/dev/null 2>&1\n",
}


def test_a_swebench_row_is_read_as_published():
    task = read_swebench(ROW)
    assert task.instance_id == "example__calc-1" and task.image == ROW["image"] and task.source == "swebench"
    assert task.fail_to_pass == ["test_calc.py::test_add"] and task.pass_to_pass == ["test_calc.py::test_other"]
    assert task.problem_statement == "add() subtracts." and task.base_commit == ROW["base_commit"]
    assert task.extra["patch"] == PATCH and "eval_script" not in task.extra  # the gold patch, kept as published
    lines = task.eval_script.splitlines()
    end = lines.index(": '>>>>> End Test Output'")
    assert lines[:2] == ["#!/bin/bash", "set -uxo pipefail"] and lines.count("set -uxo pipefail") == 1
    others = END_OTHERS.splitlines()
    assert lines[end - 1 - len(others)] == "SWEBENCH_TEST_EXIT_CODE=$?"
    assert lines[end - len(others):end] == others  # every process the tests left ends before the status
    assert lines[end + 1] == 'echo ">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE"'
    assert read_swebench({**ROW, "FAIL_TO_PASS": ["a"], "eval_type": None}).eval_type == "pass_and_fail"


@pytest.mark.parametrize("fixed, resolved", [(True, True), (False, False)])
def test_the_eval_script_runs_and_its_log_is_graded(tmp_path, fixed, resolved):
    """The script as the runner will run it (here with bash on a test-authored repository, no sandbox needed): its
    xtrace markers and the recorded exit status give the verdict."""
    (tmp_path / "calc.py").write_text(f"def add(a, b):\n    return a {'+' if fixed else '-'} b\n")
    (tmp_path / "test_calc.py").write_text("from calc import add\ndef test_add():\n    assert add(2, 2) == 4\n"
                                           "def test_other():\n    assert add(0, 0) == 0\n")
    task = read_swebench(ROW)
    # END_OTHERS ends every process started after its shell: it runs only in a sandbox (test_repo_runner runs it in
    # trees, test_remote_repos in sandboxes where it is not PID 1); here, on the host, it is left out
    script = task.eval_script.replace(END_OTHERS, "true")
    assert script != task.eval_script
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120,
                          env={"REPO": str(tmp_path), "PYTHON": sys.executable, "PATH": "/usr/bin:/bin"})
    log = done.stdout + done.stderr
    verdict = grade(log, fail_to_pass=task.fail_to_pass, pass_to_pass=task.pass_to_pass, log_parser=task.log_parser,
                    eval_type=task.eval_type)
    assert verdict.has_results and verdict.resolved is resolved, log[-2000:]
    assert verdict.exit_code == (0 if fixed else 1)


@pytest.mark.parametrize("change, message", [
    ({"eval_script": None}, "missing eval_script"),
    ({"image": ""}, "missing image"),
    ({"log_parser": "parse_log_jest"}, "log_parser 'parse_log_jest' is not supported"),
    ({"eval_type": "other"}, "eval_type 'other' is not supported"),
    ({"FAIL_TO_PASS": "not json"}, "FAIL_TO_PASS is not a JSON list"),
    ({"PASS_TO_PASS": [1, 2]}, "PASS_TO_PASS must be a list of test ids"),
    ({"eval_script": "pytest -rA"}, "has no '>>>>> End Test Output' line"),
    ({"image_assets": json.dumps({"test_patch": [{"path": "a.png", "url": "https://x"}]})}, "image_assets"),
])
def test_a_bad_row_is_one_line_naming_the_instance(change, message):
    with pytest.raises(TaskFormatError, match=message) as caught:
        read_swebench({**ROW, **change})
    assert "'example__calc-1'" in str(caught.value) and "\n" not in str(caught.value)


def test_the_patch_of_a_completion():
    assert extract_patch(f"Here is the fix:\n```diff\n{PATCH}```\nThat should do it.") == PATCH
    first_try = PATCH.replace("a + b", "b + a")
    assert extract_patch(f"```diff\n{first_try}```\nBetter:\n```patch\n{PATCH}```") == PATCH  # the last one
    assert extract_patch(f"```\n{PATCH}```") == PATCH  # untagged, but a diff
    assert extract_patch(f"```python\nprint(1)\n```\n```diff\n{PATCH}```") == PATCH
    assert extract_patch("<think>```diff\nnot this\n```</think>\n" + PATCH) == PATCH
    assert extract_patch("I would change calc.py.\n" + PATCH.rstrip("\n")) == PATCH  # a newline ends the last hunk
    assert extract_patch([{"role": "assistant", "content": f"```diff\n{PATCH}```"}]) == PATCH
    plain = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
    assert extract_patch("Change:\n" + plain) == plain
    assert extract_patch("I cannot help with that.") == ""
    assert eval_script_of("#!/bin/bash\n: '>>>>> End Test Output'").endswith('Test Exit Code: $SWEBENCH_TEST_EXIT_CODE"\n')
