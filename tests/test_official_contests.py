"""Official verdicts of code_contests' tester and open-r1's Codeforces runner (issue 36, items 7, 8, 9, 10 and 13),
through the reward as TRL calls it.

Each case gives a published row (field for field as its dataset publishes it: the builders of
``tests/test_official_stdout.py``), programs, and the reward the official harness's verdict makes, read from that
harness's source. Where trl-sandbox keeps a stricter verdict, the case says "departure".

Sources read:
- code_contests: ``google-deepmind/code_contests`` at fa7a4f8: ``execution/tester_sandboxer.cc`` (``SplitAndLowercase``
  l. 135-144, ``ValuesMatch`` l. 146-165, ``OutputsMatch`` l. 256-264, ``Test`` l. 402-409: ``passed`` is the output
  comparison alone, whatever the program's status; ``ExecutionResultFromTestSandboxResult`` l. 655-672);
  ``execution/tester_sandboxer.h`` (``TestOptions``: ``max_execution_duration = absl::Seconds(10)``, l. 94; applied
  as ``RLIMIT_CPU`` in ``CreateSandboxWithFds``, l. 301-302); ``WORKSPACE`` pins abseil 20211102.0, whose
  ``SimpleAtod`` (``absl/strings/numbers.cc`` l. 77-106) is ``absl::from_chars`` in ``chars_format::general``: no
  hexadecimal.
- open-r1 Codeforces: ``guipenedo/piston`` at 7a38da2, ``packages/codeforces/1.0.0/run`` (``timeout
  --preserve-status "$TIME_LIMIT"`` l. 118-124 and 151-158; file mode: ``$TASK_EXECUTABLE > /dev/null``, no
  ``<`` redirection, the output read from ``output.txt``, l. 58-69 and 152-153); ``huggingface/open-r1`` at 1416fa0,
  ``src/open_r1/utils/competitive_programming/cf_scoring.py`` (``TIME_LIMIT`` is the row's ``time_limit``, for
  ``cf_python3`` too, l. 34-49; piston's request carries no ``stdin``; the generated tests are
  ``$CF_TESTS_FOLDER/test_cases_{contest_id:04d}.parquet`` grouped by ``problem_id``, scored after the
  ``official_tests``, l. 59-106).
"""

from __future__ import annotations

import json
import os

import pytest

from tests._official import computing_echo, trl_rewards
from tests.test_official_stdout import code_contests_row, printing


# -- item 10: code_contests' tokens and case --------------------------------------------------------------------

ITEM_10 = [
    # (expected, printed, official reward, why)
    ("5\n", "5\x0c\n", 1.0,
     "SplitAndLowercase keeps '5\\f' one token; ValuesMatch: SimpleAtoi strips ASCII whitespace, 5 == 5"),
    ("5\n", "5 \x0c\n", 0.0,
     "'\\f' alone is a token of its own: ['5', '\\f'] has two tokens, the expected one"),
    ("1 2\n", "1\x0c2\n", 0.0,
     "'1\\f2' is one token (no split on '\\f'), not a number: two tokens expected, one printed"),
    ("abc\n", "abc\x0c\n", 0.0,
     "'abc\\f' is text: 'abc\\f' != 'abc'"),
    ("YES\n", "yes\n", 1.0,
     "AsciiStrToLower on both sides"),
    ("\u00e9t\u00e9\n", "\u00c9T\u00c9\n", 0.0,
     "AsciiStrToLower lowercases ASCII letters only: 'ÉTÉ' becomes 'ÉtÉ', not 'été'"),
    ("16\n", "0x10\n", 0.0,
     "SimpleAtoi (base 10) and SimpleAtod (from_chars, general format) refuse '0x10': text, not 16"),
    ("0x10\n", "0X10\n", 1.0,
     "text, lowercased on both sides"),
    ("0.5\n", "0.500009\n", 1.0,
     "ValuesMatch: |0.500009 - 0.5| < 1e-5"),
    ("nan 0.5\n", "nan 0.5\n", 1.0,
     "OutputsMatch: the same tokens"),
    ("nan 0.5\n", "nan 0.500001\n", 1.0,
     "departure: the tester fails it (ValuesMatch: |nan - nan| < 1e-5 is false); each token is right"),
    ("inf 0.5\n", "inf 0.500001\n", 1.0,
     "departure: the tester fails it (ValuesMatch: |inf - inf| is NaN); each token is right"),
]


@pytest.mark.parametrize(("expected", "printed", "official", "why"), ITEM_10, ids=[w[:40] for *_, w in ITEM_10])
def test_item_10_code_contests_tokens_as_its_tester_splits_and_lowercases(scorer, expected, printed, official, why):
    row = code_contests_row(["1\n"], [expected])
    assert trl_rewards(scorer, row, [printing(printed)]) == [official], why


# -- item 7: code_contests judges a test by its output alone ---------------------------------------------------

ECHO = code_contests_row(["1\n", "2\n"], ["1\n", "2\n"])
ECHO_THEN = "import sys\nprint(input())\nsys.stdout.flush()\n"

ITEM_7 = [
    # (program, official reward, why)
    (ECHO_THEN + "raise ValueError('after the answer')", 1.0,
     "Test: passed = compare_outputs(stdout, expected), whatever program_status (kFailed) says"),
    (ECHO_THEN + "sys.exit(3)", 1.0,
     "a non-zero exit status is kFailed: the output still decides"),
    ("n = input()\nprint(int(n) + 1)\nraise ValueError('after a wrong answer')", 0.0,
     "the output is wrong: failed"),
    ("n = input()\nprint(n if n == '1' else 7)\nraise ValueError", 0.5,
     "one test's output is right, the other's wrong"),
    (ECHO_THEN + "while True:\n    pass", -1.0,
     "departure: the tester passes it (a CPU-limit kill is kTimeout, the output is compared); a test past its "
     "time limit fails here"),
    (ECHO_THEN + "block = b'1' * (400 << 20)", 0.0,
     "departure: the tester compares the output of a run past its memory limit; past the row's 256 MB it fails here"),
    (ECHO_THEN + "import ctypes\nctypes.string_at(0)", -1.0,
     "departure: the tester passes it (SIGSEGV: SIGNALED, the flushed output is compared); a Python program that "
     "ends its own process takes its output with it here"),
]


@pytest.mark.parametrize(("program", "official", "why"), ITEM_7, ids=[w[:40] for *_, w in ITEM_7])
def test_item_7_code_contests_right_output_then_a_crash(scorer, program, official, why):
    assert trl_rewards(scorer, ECHO, [program]) == [official], why


def cpp_rewards(scorer, row, programs):
    """:func:`tests._official.trl_rewards` for C++ programs: each in a ```cpp fence of an assistant message."""
    from trl_sandbox import code_reward

    n = len(programs)
    columns = {k: [v] * n for k, v in row.items() if k != "prompt"}
    completions = [[{"role": "assistant", "content": f"Here it is.\n\n```cpp\n{p}```\n"}] for p in programs]
    return code_reward.bind(scorer)(prompts=[[{"role": "user", "content": "Solve the task."}]] * n,
                                    completions=completions, completion_ids=[[1]] * n, **columns)


def test_item_7_a_compiled_program_crashing_after_the_right_output(scorer):
    """The same for C++: a non-zero ``return`` and ``abort()`` after the answer pass, as in the tester; the same
    programs fail on an open-r1 Codeforces row (piston's ``run``: a non-zero exit code is a runtime error, ``0``)."""
    import shutil

    from tests.test_official_stdout import codeforces_row

    if not shutil.which("g++"):
        if os.environ.get("CI"):
            pytest.fail("CI must have g++ (see .ci/toolchains)")
        pytest.skip("no g++ here (apt-get install g++)")
    returns_3 = "#include <cstdio>\nint main(){int n; scanf(\"%d\",&n); printf(\"%d\\n\",n); return 3;}\n"
    aborts = ("#include <cstdio>\n#include <cstdlib>\nint main(){int n; scanf(\"%d\",&n); printf(\"%d\\n\",n); "
              "fflush(stdout); abort();}\n")
    codeforces = codeforces_row([{"input": "1\n", "output": "1\n"}, {"input": "2\n", "output": "2\n"}], problem="H")
    assert cpp_rewards(scorer, ECHO, [returns_3, aborts]) == [1.0, 1.0]
    assert cpp_rewards(scorer, codeforces, [returns_3, aborts]) == [0.0, 0.0]


# -- item 8: time per test ---------------------------------------------------------------------------------------


def test_item_8_time_per_test_from_each_harness():
    from trl_sandbox import SandboxConfig, Task
    from tests.test_official_stdout import codeforces_row

    # open-r1 Codeforces: TIME_LIMIT = the row's time_limit, for cf_python3 too (piston: timeout "$TIME_LIMIT")
    codeforces = Task.from_row({**codeforces_row([{"input": "1\n", "output": "1\n"}]), "time_limit": 2.0})
    assert codeforces.test_timeout_s() == 2.0
    assert codeforces.test_timeout_s(None, 3.0) == 6.0  # what a user who wants more sets
    assert codeforces.test_timeout_s(1.5) == 1.5  # sandbox_test_timeout still caps
    # code_contests: the tester gives 10 s whatever the statement says; here the statement x 3, at most those 10 s
    contests = Task.from_row(code_contests_row(["1\n"], ["1\n"]))  # time_limit {seconds: 1}
    assert contests.test_timeout_s() == 3.0 and contests.test_timeout_s(None, 1.0) == 1.0
    slow_problem = Task.from_row({**code_contests_row(["1\n"], ["1\n"]), "time_limit": {"seconds": 5, "nanos": 0}})
    assert slow_problem.test_timeout_s() == 10.0 and slow_problem.test_timeout_s(None, 20.0) == 10.0
    no_limit = Task.from_row({**code_contests_row(["1\n"], ["1\n"]), "time_limit": None})
    assert no_limit.test_timeout_s() == 10.0
    assert SandboxConfig().sandbox_time_limit_factor is None


@pytest.fixture(scope="module")
def unlimited_scorer(sandbox_root):
    """A scorer with no cap on a test's time: each gets what its row and format give it."""
    from trl_sandbox import SandboxConfig, Scorer

    config = SandboxConfig(sandbox_pool_size=2, sandbox_backend_options={"root_dir": str(sandbox_root)})
    with Scorer.from_config(config) as s:
        yield s


def test_item_8_codeforces_gives_python_the_statements_seconds(unlimited_scorer, sandbox_root):
    from trl_sandbox import SandboxConfig, Scorer
    from tests.test_official_stdout import codeforces_row

    row = {**codeforces_row([{"input": "7\n", "output": "7\n"}], problem="I"), "time_limit": 0.5}
    # piston's run: timeout --preserve-status 0.5 python3 main.py: a 1 s program is killed (exit 124 or 143: "0")
    fast, slow = trl_rewards(unlimited_scorer, row, [computing_echo(0.05), computing_echo(1.0)])
    assert fast == 1.0 and slow < 1.0
    # a user who wants more: sandbox_time_limit_factor=3 gives 1.5 s
    config = SandboxConfig(sandbox_pool_size=1, sandbox_time_limit_factor=3.0,
                           sandbox_backend_options={"root_dir": str(sandbox_root)})
    with Scorer.from_config(config) as scorer:
        assert trl_rewards(scorer, row, [computing_echo(1.0)]) == [1.0]


def test_item_8_code_contests_keeps_the_statement_times_three(unlimited_scorer):
    # departure: code_contests' tester gives both 10 s (TestOptions.max_execution_duration) and pays them
    row = {**code_contests_row(["7\n"], ["7\n"]), "time_limit": {"seconds": 0, "nanos": 500_000_000}}
    within, past = trl_rewards(unlimited_scorer, row, [computing_echo(1.0), computing_echo(2.0)])
    assert within == 1.0 and past < 1.0


# -- item 9: open-r1 Codeforces' file mode -------------------------------------------------------------------------


def file_mode_row():
    from tests.test_official_stdout import codeforces_row

    row = codeforces_row([{"input": "3 4\r\n", "output": "7\n"}, {"input": "10 -2\r\n", "output": "8\n"}], problem="J")
    return {**row, "input_mode": "file"}


ITEM_9 = [
    # piston's run, INPUT_MODE=file: input.txt written ('\r' at line ends removed), $TASK_EXECUTABLE > /dev/null
    # 2>&1 with no stdin (cf_scoring.py sends none), the output read from output.txt
    ("a, b = map(int, open('input.txt').read().split())\nopen('output.txt', 'w').write(f'{a + b}\\n')", 1.0,
     "reads input.txt, writes output.txt"),
    ("a, b = map(int, open('input.txt').read().split())\nprint('debug', a, b)\n"
     "open('output.txt', 'w').write(f'{a + b}\\n')", 1.0,
     "stdout goes to /dev/null: what it prints does not count"),
    ("a, b = map(int, open('input.txt').read().split())\nprint(a + b)", 0.0,
     "the answer on stdout is discarded; no output.txt: an empty output"),
    ("import sys\ndata = sys.stdin.read()\nopen('output.txt', 'w').write(str(sum(map(int, data.split()))))", 0.0,
     "no stdin: the program reads nothing and writes 0"),
]


@pytest.mark.parametrize(("program", "official", "why"), ITEM_9, ids=[w[:40] for *_, w in ITEM_9])
def test_item_9_codeforces_file_mode_has_only_the_files(scorer, program, official, why):
    assert trl_rewards(scorer, file_mode_row(), [program]) == [official], why


def test_item_9_a_compiled_program_in_file_mode(scorer):
    import shutil

    if not shutil.which("g++"):
        if os.environ.get("CI"):
            pytest.fail("CI must have g++ (see .ci/toolchains)")
        pytest.skip("no g++ here (apt-get install g++)")
    files = ("#include <cstdio>\nint main(){freopen(\"input.txt\",\"r\",stdin); freopen(\"output.txt\",\"w\",stdout);"
             " long long a,b; scanf(\"%lld %lld\",&a,&b); printf(\"%lld\\n\",a+b);}\n")
    stdio = "#include <cstdio>\nint main(){long long a=0,b=0; scanf(\"%lld %lld\",&a,&b); printf(\"%lld\\n\",a+b);}\n"
    assert cpp_rewards(scorer, file_mode_row(), [files, stdio]) == [1.0, 0.0]


# -- item 13: open-r1 Codeforces' generated tests -------------------------------------------------------------------


def incomplete_row(problem="K"):
    """A row whose ``official_tests_complete`` is false, as published: ``generated_tests`` is the count of the
    problem's tests in the contest's Parquet file, not the tests."""
    from tests.test_official_stdout import codeforces_row

    row = codeforces_row([{"input": "1 2\n", "output": "3\n"}], problem=problem)
    return {**row, "official_tests_complete": False, "generated_tests": 2}


#: The problem's generated tests, as open-r1/codeforces publishes them (columns of test_cases_0004.parquet).
GENERATED = [{"input": "1000000000 1000000000\n", "output": "2000000000\n"}, {"input": "-5 5\r\n", "output": "0\n"}]
SUM = "a, b = map(int, input().split())\nprint(a + b)"
SMALL_ONLY = "a, b = map(int, input().split())\nprint(min(a + b, 10))"  # right on the official test only


def write_contest_file(folder):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{"problem_id": "4/K", **t} for t in GENERATED] + [{"problem_id": "4/L", "input": "0 0\n", "output": "9\n"}]
    pq.write_table(pa.Table.from_pylist(rows), folder / "test_cases_0004.parquet")


def test_item_13_a_row_without_its_generated_tests_warns_once(scorer, monkeypatch, caplog):
    import logging

    from trl_sandbox import Task
    from trl_sandbox.formats import codeforces

    monkeypatch.setattr(codeforces, "_WARNED_INCOMPLETE", [])
    with caplog.at_level(logging.WARNING, logger="trl_sandbox.formats.codeforces"):
        tasks = [Task.from_row(incomplete_row("K")), Task.from_row(incomplete_row("L"))]
        assert trl_rewards(scorer, incomplete_row("K"), [SMALL_ONLY]) == [1.0]  # only the official test
    warnings = [r for r in caplog.records if r.name == "trl_sandbox.formats.codeforces"]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    message = warnings[0].getMessage()
    assert "4/K" in message and "official_tests only" in message and "2 generated tests" in message
    assert "codeforces_tests" in message and [len(t.tests) for t in tasks] == [1, 1]
    complete = {**incomplete_row("M"), "official_tests_complete": True}
    monkeypatch.setattr(codeforces, "_WARNED_INCOMPLETE", [])
    caplog.clear()
    Task.from_row(complete)
    assert not [r for r in caplog.records if r.name == "trl_sandbox.formats.codeforces"]


def test_item_13_generated_tests_in_a_column_are_scored_after_the_official_ones(scorer):
    from trl_sandbox import Task

    row = {**incomplete_row(), "generated_tests": GENERATED}
    task = Task.from_row(row)
    # the runner's input: '\r' at line ends removed, for the generated tests too
    assert task.tests == ("1 2\n", "1000000000 1000000000\n", "-5 5\n")
    assert trl_rewards(scorer, row, [SUM, SMALL_ONLY]) == [1.0, pytest.approx(2 / 3)]


def test_item_13_generated_tests_from_the_datasets_folder(scorer, tmp_path):
    from trl_sandbox import Task, load_tasks
    from trl_sandbox.errors import ConfigurationError, TaskFormatError
    from trl_sandbox.formats.codeforces import add_generated_tests, generated_tests_file

    write_contest_file(tmp_path)
    assert generated_tests_file(tmp_path, "4/K") == str(tmp_path / "test_cases_0004.parquet")
    (row,) = load_tasks([incomplete_row()], codeforces_tests=tmp_path)
    assert json.loads(row["generated_tests"]) == GENERATED  # text: one column type for datasets.Dataset.map
    assert trl_rewards(scorer, row, [SUM, SMALL_ONLY]) == [1.0, pytest.approx(2 / 3)]
    # a contest without a file: no generated tests, as open-r1 reads it (and nothing is missing any more)
    other = {**incomplete_row(), "id": "5/A", "contest_id": "5"}
    assert add_generated_tests(other, tmp_path)["generated_tests"] == "[]"
    assert len(Task.from_row(add_generated_tests(other, tmp_path)).tests) == 1
    with pytest.raises(ConfigurationError, match="not a directory"):
        load_tasks([incomplete_row()], codeforces_tests=tmp_path / "nowhere")
    with pytest.raises(TaskFormatError, match="generated_tests"):
        Task.from_row({**incomplete_row(), "generated_tests": [{"input": "1 2\n"}]})


def test_item_13_generated_tests_through_datasets_map(tmp_path):
    """``Dataset.map(add_generated_tests, ...)``: a problem with no tests first, one with tests later, in batches
    written apart: the column is text in every row, so the map neither fails nor drops the tests."""
    datasets = pytest.importorskip("datasets")
    from trl_sandbox import Task
    from trl_sandbox.formats.codeforces import add_generated_tests

    write_contest_file(tmp_path)
    none = {**incomplete_row(), "id": "5/A", "contest_id": "5"}
    ds = datasets.Dataset.from_list([none, none, incomplete_row()])
    out = ds.map(add_generated_tests, fn_kwargs={"folder": str(tmp_path)}, writer_batch_size=1)
    assert [len(Task.from_row(row).tests) for row in out] == [1, 1, 3]
