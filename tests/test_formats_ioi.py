"""open-r1 IOI rows (issue 48): a subtask of a function-style problem, compiled with its grader as piston's
``cms_ioi`` package compiles it, judged by its CMS checker (the score on stdout) or by ``diff -b``, scored as open-r1's
``ioi_scoring.py`` scores it (the lowest test score, rounded to ``score_precision``; no test after one that scores 0),
through the reward as TRL calls it, locally and through the remote harness (the mock backend).

The problem is written here in the published schema (``open-r1/ioi``'s columns, ``open-r1/ioi-test-cases``' rows, the
secret-token protocol of IOI's graders in evaluation mode); its tests are tiny."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tests._official import local_or_remote_harness, trl_rewards
from trl_sandbox import SandboxConfig, Scorer, Task, load_tasks
from trl_sandbox.errors import ConfigurationError, TaskFormatError
from trl_sandbox.formats import detect_format
from trl_sandbox.formats.ioi import submission
from trl_sandbox.harness.compare import same_output
from trl_sandbox.prompts import problem_prompt

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")

IN_SECRET, OUT_SECRET = "d8f1a2c4", "77c0e9b1"
HEADER = "#include <vector>\n\nlong long add_up(std::vector<int> a);\n"
# the grader in evaluation mode (-DEVAL): it checks the input's secret, calls the contestant's function, and prints
# the output's secret and OK before the result, so that a submission that prints an answer itself is caught
GRADER = r"""#include "addup.h"
#include <cstdio>
#include <cstring>
#include <vector>

int main() {
#ifdef EVAL
  char secret[64];
  if (scanf("%63s", secret) != 1 || strcmp(secret, "SECRET_IN") != 0) {
    printf("SECRET_OUT\nPV\nwrong input secret\n");
    return 0;
  }
#endif
  int n;
  if (scanf("%d", &n) != 1) return 1;
  std::vector<int> a(n);
  for (int &x : a) scanf("%d", &x);
  long long r = add_up(a);
#ifdef EVAL
  printf("SECRET_OUT\nOK\n");
#endif
  printf("%lld\n", r);
  return 0;
}
""".replace("SECRET_IN", IN_SECRET).replace("SECRET_OUT", OUT_SECRET)
# a CMS checker: checker input correct_output user_output, the score on stdout, a message on stderr; within a tenth
# of the answer scores a third (rounded to 0.33 by score_precision)
CHECKER = r"""#include "verdict.h"
#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char **argv) {
  if (argc < 4) return 1;
  FILE *ans = fopen(argv[2], "r"), *out = fopen(argv[3], "r");
  char want_secret[64], got_secret[64], ok[16];
  long long want, got;
  if (!ans || fscanf(ans, "%63s %15s %lld", want_secret, ok, &want) != 3) return 1;
  if (!out || fscanf(out, "%63s", got_secret) != 1 || strcmp(want_secret, got_secret) != 0)
    return verdict("0", "Output isn't correct: protocol violation");
  if (fscanf(out, "%15s", ok) != 1 || strcmp(ok, "OK") != 0) return verdict("0", "Output isn't correct");
  if (fscanf(out, "%lld", &got) != 1) return verdict("0", "Output isn't correct");
  if (got == want) return verdict("1", "Output is correct");
  if (llabs(got - want) * 10 <= llabs(want)) return verdict("0.333333", "Output is partially correct");
  return verdict("0", "Output isn't correct");
}
"""
VERDICT_H = ('#include <cstdio>\nstatic int verdict(const char *score, const char *message) {\n'
             '  printf("%s\\n", score);\n  fprintf(stderr, "%s\\n", message);\n  return 0;\n}\n')
CONFIG = json.dumps({"code": "addup", "name": "Add Up", "time_limit": 1.0, "task_type": "Batch",
                     "memory_limit": 268435456})
GRADER_FILES = [["graders/grader.cpp", GRADER], ["graders/addup.h", HEADER], ["graders/grader_config.json", CONFIG],
                ["checker/checker.cpp", CHECKER], ["checker/verdict.h", VERDICT_H], ["graders/stub.cpp", ""]]


def _case(name: str, values: list[int]) -> dict:
    """A row of open-r1/ioi-test-cases."""
    return {"year": 2024, "day": "day1", "problem_name": "Add Up", "problem_id": "addup", "test_name": name,
            "test_input": f"{IN_SECRET}\n{len(values)}\n{' '.join(map(str, values))}\n",
            "test_output": f"{OUT_SECRET}\nOK\n{sum(values)}\n"}


CASES = [_case("1-01", [1, 2, 3]), _case("1-02", [4, 5, 6]),  # sums 6 and 15
         _case("2-01", [1000000000, 1000000000, 1000000000]), _case("2-02", [2000000000, 7])]


def _row(subtask: str, score: int, tests: list[str], grader_files=GRADER_FILES) -> dict:
    """A row of open-r1/ioi (its columns as the dataset card lists them)."""
    return {"year": 2024, "name": "Add Up", "id": "addup", "day": "day1", "subtask": subtask,
            "statement": "Return the sum of the array.", "score": score, "time_limit": 1.0, "memory_limit": 256,
            "score_precision": 2, "task_type": "Batch", "test_names": tests,
            "starting_code": '#include "addup.h"\n\nlong long add_up(std::vector<int> a) {\n\treturn 0;\n}\n',
            "grader_files": grader_files, "problem": "# Add Up\n\nReturn the sum ... ```cpp\n<your code here>\n```"}


SMALL = _row("01-small", 30, ["1-01", "1-02"])
FULL = _row("02-full", 70, ["1-01", "1-02", "2-01", "2-02"])


GOOD = ('#include "addup.h"\n\nlong long add_up(std::vector<int> a) {\n  long long s = 0;\n'
        '  for (int x : a) s += x;\n  return s;\n}')
# no includes and no std:: at all: open-r1's add_includes supplies bits/stdc++.h, the header and the namespace
BARE = "long long add_up(vector<int> a) {\n  return accumulate(a.begin(), a.end(), 0LL);\n}"
INT_SUM = "long long add_up(std::vector<int> a) {\n  int s = 0;\n  for (int x : a) s += x;\n  return s;\n}"
CLOSE = ("long long add_up(std::vector<int> a) {\n  long long s = 0;\n  for (int x : a) s += x;\n"
         "  return s >= 10 ? s + 1 : s;\n}")
PRINTS = ('#include <cstdio>\nlong long add_up(std::vector<int> a) {\n  long long s = 0;\n'
          '  for (int x : a) s += x;\n  printf("%lld\\n", s);\n  return s;\n}')
LOOP = ("long long add_up(std::vector<int> a) {\n  volatile long long s = 0;\n  while (true) s++;\n"
        "  return s;\n}")
BROKEN = "long long add_up(std::vector<int> a) {\n  return a.sum();\n}"


@pytest.fixture(scope="module", params=["local", "remote-harness"])
def ioi_scorer(request, sandbox_root):
    """A local-backend scorer, and one running the harness as remote backends do (the mock backend)."""
    local = request.param == "local"
    with local_or_remote_harness(local, sandbox_root) as scorer:
        yield scorer, local


def test_rows_as_published_are_detected_and_read_with_their_tests():
    rows = load_tasks([SMALL, FULL], ioi_tests=CASES)
    assert [detect_format(r) for r in rows] == ["ioi", "ioi"]
    small, full = (Task.from_row(r) for r in rows)
    assert (small.task_id, full.task_id) == ("2024/addup/01-small", "2024/addup/02-full")
    assert small.tests == (CASES[0]["test_input"], CASES[1]["test_input"]) and len(full.tests) == 4
    assert (small.language, small.time_limit_s, small.memory_limit_bytes) == ("cpp", 1.0, 256 << 20)
    assert small.default_compare["convention"] == "cms" and small.default_compare["files"] == {"verdict.h": VERDICT_H}
    assert small.grader["compile"] == ["g++", "-DEVAL", "-std=gnu++17", "-O2", "-pipe", "-s", "-o", "graders/addup",
                                       "graders/addup.cpp", "graders/grader.cpp"]  # the empty stub is not sent
    assert [path for path, _ in small.grader["files"]] == ["graders/grader.cpp", "graders/addup.h",
                                                           "graders/grader_config.json"]  # no checker source
    assert (small.subtasks[0].points, small.subtasks[0].precision) == (30.0, 2)
    assert problem_prompt(rows[0]) == SMALL["problem"]  # open-r1's own prompt column


def test_add_includes_is_open_r1s():
    assert submission("int f() { return 1; }", "addup") == (
        '#include <bits/stdc++.h>\n#include "addup.h"\n\nusing namespace std;\n\nint f() { return 1; }')
    assert submission('#include "addup.h"\nstd::vector<int> v;', "addup") == (
        '#include <bits/stdc++.h>\n#include "addup.h"\nstd::vector<int> v;')
    assert submission("", "addup") == ""


def test_subtasks_score_as_open_r1_scores_them(ioi_scorer):
    ioi_scorer, local = ioi_scorer
    small, full = load_tasks([SMALL, FULL], ioi_tests=CASES)
    completions = [GOOD, BARE, INT_SUM, CLOSE, PRINTS, LOOP, BROKEN]
    if not local:  # the transport: the verdicts' code is the same as the local backend's
        assert trl_rewards(ioi_scorer, full, [GOOD, INT_SUM, CLOSE]) == [1.0, 0.0, 0.33]
        return
    # a timeout and a compile error are the model's errors: -1 by default (sandbox_reward_values), open-r1 pays 0
    assert trl_rewards(ioi_scorer, small, completions) == [1.0, 1.0, 1.0, 0.33, 0.0, -1.0, -1.0]
    task = Task.from_row(full)
    fenced = [[{"role": "assistant", "content": f"Here is my solution.\n\n```cpp\n{code}\n```\n"}]
              for code in (GOOD, INT_SUM, CLOSE)]
    good, int_sum, close = ioi_scorer.score([task] * 3, fenced)
    assert [r.reward for r in (good, int_sum, close)] == [1.0, 0.0, 0.33]
    assert (good.status, good.subtask_points, good.tests_skipped) == ("passed", (70.0,), 0)
    # 2-01 overflows an int and scores 0: 2-02 cannot change the subtask's score and is not run (open-r1's early stop)
    assert (int_sum.status, int_sum.tests_passed, int_sum.tests_skipped, int_sum.subtask_points) == (
        "failed", 2, 1, (0.0,))
    assert close.subtask_points == (70 * 0.33,) and close.tests_skipped == 0


def test_all_or_nothing_pays_a_whole_subtask_only(sandbox_root):
    config = SandboxConfig(sandbox_pool_size=2, sandbox_test_timeout=1.0, sandbox_reward="all_or_nothing",
                           sandbox_backend_options={"root_dir": str(sandbox_root)})
    (small,) = load_tasks([SMALL], ioi_tests=CASES)
    with Scorer.from_config(config) as scorer:
        assert trl_rewards(scorer, small, [GOOD, CLOSE]) == [1.0, 0.0]


def test_without_a_checker_the_output_is_compared_by_diff_b(scorer):
    files = [f for f in GRADER_FILES if not f[0].startswith("checker/")]
    (row,) = load_tasks([_row("01-small", 30, ["1-01", "1-02"], files)], ioi_tests=CASES)
    assert Task.from_row(row).default_compare == {"mode": "ioi"}
    # a leading space on the grader's first line is a difference for diff -b, as a blank line would be
    spaced = ('#include <cstdio>\nlong long add_up(std::vector<int> a) {\n  printf(" ");\n'
              '  long long s = 0;\n  for (int x : a) s += x;\n  return s;\n}')
    assert trl_rewards(scorer, row, [GOOD, CLOSE, spaced]) == [1.0, 0.0, 0.0]


def test_the_ioi_judge_agrees_with_gnu_diff_b(tmp_path):
    if shutil.which("diff") is None:
        pytest.skip("needs diff")
    import random

    rng = random.Random(48)
    pieces = ["a", "b", "1", " ", "  ", "\t", "\r", "\n", "\n\n", "\v", "\f", "x y"]
    answer_file, output_file = tmp_path / "answer", tmp_path / "output"
    disagreements = []
    for _ in range(300):
        answer = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        output = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8))) if rng.random() < 0.5 else answer
        if not answer.strip("\n"):
            continue  # piston sends no correct_output for an empty answer
        # the runner: CORRECT_OUTPUT=$(cat correct_output.txt); diff -bq <(echo "$CORRECT_OUTPUT") "$SOLUTION_OUTPUT"
        answer_file.write_text(answer.rstrip("\n") + "\n")
        output_file.write_text(output)
        official = subprocess.run(["diff", "-bq", str(answer_file), str(output_file)],
                                  capture_output=True).returncode == 0
        if same_output(output, answer, {"mode": "ioi"}) != official:
            disagreements.append((answer, output, official))
    assert disagreements == []


@pytest.mark.parametrize("change, message", [
    ({"task_type": "Communication"}, "Communication.*not supported yet"),
    ({"task_type": "OutputOnly"}, "OutputOnly.*not supported yet"),
    ({"grader_files": [["graders/grader.cpp", GRADER]]}, "no graders/<problem>.h"),
    ({"grader_files": [["../grader.cpp", GRADER]]}, "not a plain relative path"),
    ({"grader_files": GRADER_FILES + [["graders/addup.cpp", "x"]]}, "the submission's own file"),
    ({"test_cases": {"1-01": ["in", "out"]}}, "test '1-02' is missing"),
    ({"score": "thirty"}, "subtask's points"),
    ({"id": "../addup"}, "a plain file name"),
    ({"test_cases": {"1-01": ["in", "\n"], "1-02": ["in", "out"]}}, "empty answer, which the official runner"),
])
def test_a_bad_row_is_one_clear_error(change, message):
    cases = {c["test_name"]: [c["test_input"], c["test_output"]] for c in CASES}
    row = {**SMALL, "test_cases": json.dumps(cases), **change}
    with pytest.raises(TaskFormatError, match=message):
        Task.from_row(row)


def test_a_row_without_its_tests_says_how_to_add_them(tmp_path):
    with pytest.raises(TaskFormatError, match="ioi_tests="):
        Task.from_row(SMALL)
    (row,) = load_tasks([SMALL], ioi_tests=CASES[2:])  # the table lacks this subtask's tests: still says so
    with pytest.raises(TaskFormatError, match="carries no tests"):
        Task.from_row(row)
    with pytest.raises(ConfigurationError, match="ioi-test-cases"):
        load_tasks([SMALL], ioi_tests=tmp_path)
    with pytest.raises(ConfigurationError, match="neither the test-case rows nor a directory"):
        load_tasks([SMALL], ioi_tests=5)


def test_the_tests_are_read_from_a_copy_of_the_test_case_dataset(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    (tmp_path / "2024").mkdir()
    pq.write_table(pa.Table.from_pylist(CASES), tmp_path / "2024" / "train-00000-of-00001.parquet")
    small, full = load_tasks([SMALL, FULL], ioi_tests=tmp_path)
    assert Task.from_row(full).outputs == tuple(c["test_output"] for c in CASES)
