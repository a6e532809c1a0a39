"""The datasets real code-RL runs train on: rows written field for field from each dataset's published schema (the
hub is not reachable here), scored through the real local backend with correct and incorrect solutions, by each
dataset's official rules. Also the stdout judges, limits from the task, and malformed rows.
"""

import base64
import json
import pickle
import zlib

import pytest

from trl_sandbox import CodeReward, SandboxConfig, Scorer, Task, TaskFormatError
from trl_sandbox.harness.compare import same_output
from trl_sandbox.formats import detect_format, parse_compare


def score(scorer, row, *completions, task_format=None):
    task = Task.from_row(row, task_format)
    return scorer.score([task] * len(completions), list(completions))


def fence(code):
    return f"Here is my solution.\n\n```python\n{code}\n```\n"


def statuses(results):
    return [(r.status, r.tests_passed, r.tests_total) for r in results]


# -- the judges --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("output", "expected", "judge", "same"), [
    (" 6\n", "6\n", "tokens", True),
    (" 6\n", "6\n", "lines", False),  # lines keep leading spaces
    ("6  \n\n", "6\n", "lines", True),
    ("1 2\n3\n", "1 2 3", "tokens", True),
    ("1 2\n3\n", "1 2 3", "decimal", False),  # LiveCodeBench counts lines
    ("YES\n", "Yes\n", "tokens", False),
    ("YES\n", "Yes\n", {"mode": "tokens", "ignore_case": True}, True),
    ("0.3333333333333333\n", "0.333333333\n", "float", True),
    ("0.3334\n", "0.333333333\n", "float", False),
    ("0.500000\n", "0.5\n", "float", True),
    ("0.500000\n", "0.5\n", "decimal", True),
    ("0.3333333333333333\n", "0.333333333\n", "decimal", False),
    # Kattis' default validator (problemtools default_validator.cc; it agreed with ours on 20,000 random cases run
    # from a scratch copy): any number of the answer within a tolerance, integers too; glibc's sscanf reads "5e" as 5
    ("4.0005\n", "4\n", {"mode": "kattis", "flags": ["float_tolerance", "1e-3"]}, True),
    ("4.0005\n", "4\n", {"mode": "kattis", "flags": ["float_relative_tolerance", "1e-5"]}, False),
    ("5E\n", "5e\n", {"mode": "kattis", "flags": ["float_tolerance", "0.1", "case_sensitive"]}, True),
    ("ABC\n", "abc\n", {"mode": "kattis", "flags": []}, True),
    ("ABC\n", "abc\n", {"mode": "kattis", "flags": ["case_sensitive"]}, False),
    ("1  2\n", "1 2\n", {"mode": "kattis", "flags": []}, True),
    ("1  2\n", "1 2\n", {"mode": "kattis", "flags": ["space_change_sensitive"]}, False),
    ("\n1 2\n", "1 2\n", {"mode": "kattis", "flags": ["space_change_sensitive"]}, False),
    ("1.5\u0663\n", "1.53\n", {"mode": "kattis", "flags": ["float_tolerance", "1e-6"]}, False),  # ASCII digits only
    ("1000000.5\n", "1000000.0\n", {"mode": "float", "tolerance": 1e-6}, True),  # relative to the expected value
    ("1000000.5\n", "1000000.0\n", {"mode": "float", "tolerance": 1e-6, "absolute_only": True}, False),
    # A declared float judge (the row's compare, sandbox_compare) compares every number within its tolerance,
    # integers too, as testlib's rcmp and Kattis's default validator (float_tolerance 1e-4) do (issue 36, item 12).
    ("1000000.5\n", "1000000\n", {"mode": "float", "tolerance": 1e-6}, True),
    ("1.000000000000141\n", "1\n", {"mode": "float", "tolerance": 1e-4}, True),
    ("0.99995\n", "1\n", {"mode": "float", "tolerance": 1e-4}, True),
    ("1.0002\n", "1\n", {"mode": "float", "tolerance": 1e-4}, False),
    ("100000000000000000001\n", "100000000000000000000\n", "float", True),
    # "integers": "exact" (the datasets' own float judges): an expected integer only by that integer
    ("1000000.5\n", "1000000\n", {"mode": "float", "tolerance": 1e-6, "integers": "exact"}, False),
    ("1.000000000000141\n", "1\n", {"mode": "float", "tolerance": 1e-4, "integers": "exact"}, False),
    ("100000000000000000001\n", "100000000000000000000\n", {"mode": "float", "integers": "exact"}, False),
    ("1000000.0\n", "1000000\n", {"mode": "float", "integers": "exact"}, True),
    ("1000000.0\n", "1000000\n", "float", True),
    ("nan\n", "nan\n", "float", True),
    ("nan\n", "0\n", "float", False),
    ("a b\n", "a b", "exact", False),
    ("a b\r\n", "a b\n", "exact", True),
])
def test_judges(output, expected, judge, same):
    assert same_output(output, expected, parse_compare(judge)) is same


def test_compare_specs_are_checked():
    assert parse_compare('{"mode": "float", "tolerance": 0.001}') == {"mode": "float", "tolerance": 0.001}
    assert parse_compare({"mode": "float", "integers": "exact"}) == {"mode": "float", "integers": "exact"}
    assert parse_compare({"mode": "float", "integers": "tolerance"}) == {"mode": "float"}
    for bad, reason in [("fuzzy", "unknown judge"), ({"mode": "float", "tolerance": -1}, "tolerance"),
                        ({"mode": "float", "integers": "close"}, "integers"),
                        ({"checker": "x", "language": "java"}, "language 'java' is not supported"),
                        ({"checker": "x", "convention": "domjudge"}, "unknown convention"), ("{nope", "not valid JSON")]:
        with pytest.raises(TaskFormatError, match=reason):
            parse_compare(bad)
    with pytest.raises(Exception, match="sandbox_compare"):
        SandboxConfig(sandbox_compare="fuzzy")


# -- APPS and TACO -----------------------------------------------------------------------------------------------

APPS_STDIN = {
    "problem_id": 4000,
    "question": "Given two integers a and b, print a + b.",
    "solutions": json.dumps(["a, b = map(int, input().split())\nprint(a + b)\n"]),
    "input_output": json.dumps({"inputs": ["1 2\n", "10 -3\n", "5 5\n"], "outputs": ["3\n", "7\n", "10\n"]}),
    "difficulty": "introductory",
    "url": "https://codeforces.com/problemset/problem/0/A",
    "starter_code": "",
}
APPS_CALL = {
    "problem_id": 2500,
    "question": "Return the number of sheep present (True values) in the array.",
    "solutions": json.dumps(["def count_sheeps(arr):\n    return arr.count(True)"]),
    "input_output": json.dumps({"fn_name": "count_sheeps",
                                "inputs": [[[True, False, True]], [[False]], [[]]],
                                "outputs": [[2], [0], [0]]}),
    "difficulty": "introductory",
    "url": "https://www.codewars.com/kata/54edbc7200b811e956000556",
    "starter_code": "def count_sheeps(arr):\n\t",
}


def test_apps_rows(scorer):
    assert detect_format(APPS_STDIN) == "apps" and Task.from_row(APPS_STDIN).task_id == "4000"
    right = fence("a, b = map(int, input().split())\nprint(a + b)")
    spaced = fence("a, b = map(int, input().split())\nprint(' ', a + b, ' ')")  # ' 3 ' for 3: APPS strips
    wrong = fence("a, b = map(int, input().split())\nprint(a - b)")
    assert statuses(score(scorer, APPS_STDIN, right, spaced, wrong)) == [
        ("passed", 3, 3), ("passed", 3, 3), ("failed", 0, 3)]
    task = Task.from_row(APPS_CALL)
    assert task.format == "function" and task.entry_points[0] == "count_sheeps"
    results = score(scorer, APPS_CALL,
                    fence("def count_sheeps(arr):\n    return arr.count(True)"),  # 2 matches [2] (the APPS rule)
                    fence("def count_sheeps(arr):\n    return [arr.count(True)]"),
                    fence("def count_sheeps(arr):\n    return 1"))
    assert statuses(results) == [("passed", 3, 3), ("passed", 3, 3), ("failed", 0, 3)]


def test_apps_call_results_as_apps_compares_them(scorer):
    row = {"problem_id": 7, "starter_code": "",
           "input_output": json.dumps({"fn_name": "pair", "inputs": [[1], [2]], "outputs": [[[1, 2]], [[2, 3]]]})}
    results = score(scorer, row,
                    "def pair(n):\n    return (n, n + 1)",  # a tuple is a list
                    "def pair(n):\n    return {n: n + 1}")
    assert statuses(results) == [("passed", 2, 2), ("failed", 0, 2)]
    pairs = {"problem_id": 8, "input_output": json.dumps(
        {"fn_name": "pairs", "inputs": [[1]], "outputs": [[[[1, 2], [2, 3]]]]})}
    results = score(scorer, pairs, "def pairs(n):\n    return [(n, n + 1), (n + 1, n + 2)]")  # list of tuples
    assert statuses(results) == [("passed", 1, 1)]


def test_apps_prelude_and_class_solution(scorer):
    row = {"problem_id": 9, "starter_code": "class Solution:\n    def most(self, xs: List[int]) -> int:\n",
           "input_output": json.dumps({"fn_name": "most", "inputs": [[[1, 1, 2]], [[3]]], "outputs": [1, 3]})}
    code = ("class Solution:\n    def most(self, xs: List[int]) -> int:\n"
            "        return Counter(xs).most_common(1)[0][0]")  # List and Counter come from APPS's prelude
    assert statuses(score(scorer, row, fence(code))) == [("passed", 2, 2)]


def test_taco_limits_are_read():
    # TACO's harness gives every test its fixed TIMEOUT (4 s), whatever the row's time_limit text says
    row = {**APPS_STDIN, "time_limit": "2 seconds", "memory_limit": "256 megabytes", "source": "codeforces"}
    task = Task.from_row(row, "taco")
    assert task.test_time_s == 4.0 and task.memory_limit_bytes == 256 << 20 and task.dataset == "taco"
    # The harness's own seconds are not scaled by sandbox_time_limit_factor; a configured cap still applies.
    assert task.test_timeout_s(3.0, 3.0) == 3.0 and task.test_timeout_s(10.0, 3.0) == 4.0
    assert task.test_timeout_s(None, 3.0) == 4.0


# -- code_contests ------------------------------------------------------------------------------------------------

CODE_CONTESTS = {
    "name": "1_A. Theatre Square",
    "description": "Print YES if n is even, else NO.",
    "public_tests": {"input": ["4\n"], "output": ["YES\n"]},
    "private_tests": {"input": ["7\n"], "output": ["NO\n"]},
    "generated_tests": {"input": ["100\n", "1\n"], "output": ["YES\n", "NO\n"]},
    "source": 2,
    "difficulty": 7,
    "solutions": {"language": [3], "solution": ["n=int(input())\nprint('YES' if n%2==0 else 'NO')"]},
    "incorrect_solutions": {"language": [], "solution": []},
    "cf_contest_id": 1,
    "cf_index": "A",
    "cf_points": 0.0,
    "cf_rating": 1000,
    "cf_tags": ["math"],
    "is_description_translated": False,
    "untranslated_description": "",
    "time_limit": {"seconds": 1, "nanos": 0},
    "memory_limit_bytes": 256000000,
    "input_file": "",
    "output_file": "",
}


def test_code_contests_rows(scorer):
    task = Task.from_row(CODE_CONTESTS)
    assert (task.task_id, len(task.tests), task.time_limit_s, task.memory_limit_bytes) == (
        "1_A. Theatre Square", 4, 1.0, 256000000)
    right = "n=int(input())\nprint('YES' if n%2==0 else 'NO')"
    any_case = "n=int(input())\nprint('Yes' if n%2==0 else 'no')"  # code_contests lowercases both sides
    wrong = "n=int(input())\nprint('YES')"
    assert statuses(score(scorer, CODE_CONTESTS, right, any_case, wrong)) == [
        ("passed", 4, 4), ("passed", 4, 4), ("failed", 2, 4)]


def test_code_contests_problems_that_read_files(scorer):
    row = {**CODE_CONTESTS, "input_file": "theatre.in", "output_file": "theatre.out"}
    reads_files = ("n = int(open('theatre.in').read())\n"
                   "open('theatre.out', 'w').write('YES' if n % 2 == 0 else 'NO')")
    assert statuses(score(scorer, row, reads_files, "print('YES')")) == [("passed", 4, 4), ("failed", 2, 4)]
    with pytest.raises(TaskFormatError, match="plain file name"):
        Task.from_row({**CODE_CONTESTS, "input_file": "../x"})


def test_time_limits_come_from_the_row(sandbox_root):
    row = {**CODE_CONTESTS, "time_limit": {"seconds": 0, "nanos": 300_000_000}}
    config = SandboxConfig(sandbox_pool_size=1, sandbox_test_timeout=5.0, sandbox_time_limit_factor=1.0,
                           sandbox_backend_options={"root_dir": str(sandbox_root)})
    slow = "import time\nn=int(input())\ntime.sleep(1.0)\nprint('YES' if n%2==0 else 'NO')"
    fast = "n=int(input())\nprint('YES' if n%2==0 else 'NO')"
    with Scorer.from_config(config) as s:
        results = s.score([Task.from_row(row)] * 3, [slow, fast, slow.replace("1.0", "0.01")])
        # without a limit in the row, the configured 5 s apply
        unlimited = s.score([Task.from_row({**row, "time_limit": None})], [slow])
    assert [r.status for r in results] == ["timeout", "passed", "passed"]
    assert unlimited[0].status == "passed"


def test_memory_limits_come_from_the_row(scorer):
    row = {**CODE_CONTESTS, "memory_limit_bytes": 64 << 20}
    hog = "n=int(input())\nblock = bytearray(200 << 20)\nprint('YES' if n%2==0 else 'NO')"
    fine = "n=int(input())\nblock = bytearray(8 << 20)\nprint('YES' if n%2==0 else 'NO')"
    results = score(scorer, row, hog, fine)
    assert results[0].status == "failed" and "memory limit exceeded" in results[0].error
    assert results[1].status == "passed"


# -- LiveCodeBench ------------------------------------------------------------------------------------------------


def lcb_compress(tests):
    """LiveCodeBench's published form of private tests: base64(zlib(pickle(JSON text)))."""
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests)))).decode()


LCB_STDIN = {
    "question_title": "Sum of Digits",
    "question_content": "Given N, print the sum of its digits, then print it divided by 3.",
    "platform": "atcoder",
    "question_id": "abc999_a",
    "contest_id": "abc999",
    "contest_date": "2024-08-03T00:00:00",
    "starter_code": "",
    "difficulty": "easy",
    "public_test_cases": json.dumps([{"input": "123\n", "output": "6\n2.0\n", "testtype": "stdin"}]),
    "private_test_cases": lcb_compress([{"input": "10\n", "output": "1\n0.333333333\n", "testtype": "stdin"},
                                        {"input": "999\n", "output": "27\n9.0\n", "testtype": "stdin"}]),
    "metadata": "{}",
}
LCB_FUNCTIONAL = {
    "question_title": "find-maximum-number-of-string-pairs",
    "question_content": "Return the maximum number of pairs that can be formed from the array words.",
    "platform": "leetcode",
    "question_id": "2847",
    "contest_id": "biweekly-contest-107",
    "contest_date": "2023-06-24T00:00:00",
    "starter_code": "class Solution:\n    def maximumNumberOfStringPairs(self, words: List[str]) -> int:\n        ",
    "difficulty": "easy",
    "public_test_cases": json.dumps([
        {"input": "[\"cd\", \"ac\", \"dc\", \"ca\", \"zz\"]", "output": "2", "testtype": "functional"},
        {"input": "[\"ab\", \"ba\", \"cc\"]", "output": "1", "testtype": "functional"}]),
    "private_test_cases": lcb_compress([{"input": "[\"aa\", \"ab\"]", "output": "0", "testtype": "functional"}]),
    "metadata": json.dumps({"func_name": "maximumNumberOfStringPairs"}),
}


def test_livecodebench_rows(scorer):
    task = Task.from_row(LCB_STDIN)
    assert (task.task_id, len(task.tests)) == ("abc999_a", 3)
    right = ("def main():\n    n = input().strip()\n    s = sum(map(int, n))\n    print(s)\n    print(s / 3)\n\n"
             "if __name__ == '__main__':\n    main()")  # 0.3333333333333333 for 0.333333333: LCB's Decimal rule
    exact = "n = input().strip()\nprint(sum(map(int, n)))\nprint(round(sum(map(int, n)) / 3, 9))"
    wrong = "n = input().strip()\nprint(sum(map(int, n)))"
    results = score(scorer, LCB_STDIN, fence(right), fence(exact), fence(wrong))
    assert statuses(results) == [("failed", 2, 3), ("passed", 3, 3), ("failed", 0, 3)]
    method = ("class Solution:\n    def maximumNumberOfStringPairs(self, words: List[str]) -> int:\n"
              "        seen, pairs = set(), 0\n        for w in words:\n            if w[::-1] in seen:\n"
              "                pairs += 1\n            seen.add(w)\n        return pairs")
    results = score(scorer, LCB_FUNCTIONAL, fence(method), fence(method.replace("return pairs", "return 1")))
    assert statuses(results) == [("passed", 3, 3), ("failed", 1, 3)]


# A published LiveCodeBench row (code_generation_lite, question 1873_A), its private tests in the compressed form the
# dataset publishes, as quoted in Kaggle's kaggle-benchmarks LiveCodeBench demo (Apache-2.0). Statement shortened.
LCB_1873A = {
    "question_title": "A. Short Sort",
    "question_content": "There are three cards with letters a, b, c placed in a row in some order. [...] Output \"YES\" "
                        "if it is possible, and \"NO\" otherwise. [...] You can output the answer in any case.",
    "platform": "codeforces",
    "question_id": "1873_A",
    "contest_id": "1873",
    "contest_date": "2023-08-21T00:00:00",
    "starter_code": "",
    "difficulty": "easy",
    "public_test_cases": json.dumps([{"input": "6\nabc\nacb\nbac\nbca\ncab\ncba\n",
                                      "output": "YES\nYES\nYES\nNO\nNO\nYES\n", "testtype": "stdin"}]),
    "private_test_cases": "eJxrYJmaz8gABhEZQEZ0tVJmXkFpiZKVgpJhTF5iUnJMnpKOglJ+aQlUNNI1GCJUklpcUlJZkAoSLC5JycxTqtVRQNJuDNWOI"
                          "LAYhCCIMdI0Ji85MQloWjKQSE5KjMlLSgSam5SciG64nz+y2WACJESMJWYY7ibFG8T5KnaKHgAcinnp",
    "metadata": "{}",
}


def test_a_published_livecodebench_row(scorer):
    task = Task.from_row(LCB_1873A)
    assert (task.task_id, len(task.tests)) == ("1873_A", 5)  # 1 public + 4 private tests
    solution = ("t = int(input())\nfor _ in range(t):\n    s = input()\n"
                "    print('{}' if sum(a != b for a, b in zip(s, 'abc')) in (0, 2) else '{}')")
    upper, lower, wrong = solution.format("YES", "NO"), solution.format("yes", "no"), solution.format("YES", "YES")
    assert statuses(score(scorer, LCB_1873A, fence(upper), fence(lower), fence(wrong))) == [
        ("passed", 5, 5), ("failed", 0, 5), ("failed", 3, 5)]  # LiveCodeBench compares case-sensitively
    any_case = {**LCB_1873A, "compare": {"mode": "tokens", "ignore_case": True}}  # what the statement allows
    assert statuses(score(scorer, any_case, fence(lower))) == [("passed", 5, 5)]


def test_compressed_tests_never_run_a_pickle():
    class Boom:
        def __reduce__(self):
            return (print, ("this must never print",))

    row = {**LCB_STDIN, "private_test_cases": base64.b64encode(zlib.compress(pickle.dumps(Boom()))).decode()}
    with pytest.raises(TaskFormatError, match="refusing to load builtins.print"):
        Task.from_row(row)


# -- KodCode: pytest in the judge ---------------------------------------------------------------------------------

KODCODE = {
    "version": "v1.0",
    "question_id": "Leetcode_3_I",
    "question": "Return the indices of the two numbers that add up to target.",
    "solution": "def two_sum(nums, target):\n    seen = {}\n    for i, x in enumerate(nums):\n"
                "        if target - x in seen:\n            return [seen[target - x], i]\n        seen[x] = i\n"
                "    raise ValueError('no pair')",
    "test": "from solution import two_sum\nimport pytest\n\ndef test_basic():\n    assert two_sum([2, 7, 11, 15], 9) == [0, 1]\n\n"
            "@pytest.mark.parametrize('nums,target,want', [([3, 2, 4], 6, [1, 2]), ([3, 3], 6, [0, 1])])\n"
            "def test_params(nums, target, want):\n    assert two_sum(nums, target) == want\n\n"
            "def test_none():\n    with pytest.raises(ValueError):\n        two_sum([1, 2], 7)\n\n"
            "class TestMore:\n    def test_negative(self):\n        assert two_sum([-1, -2, -3], -5) == [1, 2]\n",
    "test_info": [{"function_name": "two_sum", "parameter_list": "(nums, target)"}],
    "gpt_pass_sequence": [1, 2, 3],
    "gpt_pass_trial_num": 3,
    "gpt_difficulty": "easy",
    "gpt_pass_percentage": 1.0,
    "trials": {},
    "chosen_trial": "trial_gpt4o_0",
    "metadata": {},
    "benchmark_similarity": 0.5,
    "benchmark_instruction": "",
    "benchmark_task_id": "",
    "filter_reason": "",
}


def test_kodcode_rows(scorer):
    task = Task.from_row(KODCODE)
    assert task.format == "pytest" and task.tests == ("test_basic", "test_params", "test_none",
                                                       "TestMore::test_negative")
    no_raise = KODCODE["solution"].replace("raise ValueError('no pair')", "return None")
    first_only = KODCODE["solution"].replace("return [seen[target - x], i]", "return [0, 1]")
    forged = "import os\ndef two_sum(nums, target):\n    os._exit(0)"
    results = score(scorer, KODCODE, fence(KODCODE["solution"]), fence(no_raise), fence(first_only), fence(forged))
    assert statuses(results[:3]) == [("passed", 4, 4), ("failed", 3, 4), ("failed", 2, 4)], [r.error for r in results]
    assert results[3].status == "error" and results[3].tests_passed == 0  # os._exit(0) is no pass


def test_kodcode_fixtures_capsys_and_tmp_path(scorer):
    """KodCode tests use pytest's fixtures: ``capsys`` sees what the program prints, and ``tmp_path`` is a directory
    the program can read."""
    row = {"question_id": "Kodcode_io", "test": (
        "from solution import greet, count_lines\n\n"
        "def test_prints(capsys):\n    greet('Ann')\n    assert capsys.readouterr().out == 'Hello, Ann!\\n'\n\n"
        "def test_reads_a_file(tmp_path):\n    path = tmp_path / 'f.txt'\n    path.write_text('a\\nb\\n')\n"
        "    assert count_lines(str(path)) == 2\n")}
    right = "def greet(n):\n    print(f'Hello, {n}!')\n\ndef count_lines(path):\n    return len(open(path).read().splitlines())"
    assert statuses(score(scorer, row, right, right.replace("Hello", "Hi"))) == [("passed", 2, 2), ("failed", 1, 2)]


def test_kodcode_solution_without_the_imported_name(scorer):
    results = score(scorer, KODCODE, fence("def two_summ(nums, target):\n    return [0, 1]"))
    assert statuses(results) == [("failed", 0, 4)]
    assert "cannot import name 'two_sum'" in results[0].error


def test_functions_under_test_named_like_builtins(scorer):
    """The only builtin names a program may bind in the tests' namespace are the functions under test: MBPP's when
    every test calls it first (sanitized MBPP 126, ``def sum(a, b)``), never a builtin the tests merely use
    (``set``, around MBPP 2's ``similar_elements``); KodCode's from its ``test_info``, also through
    ``from solution import *``."""
    sum_row = {"task_id": 126, "test_list": ["assert sum(10,15) == 6", "assert sum(100,150) == 93"]}
    set_row = {"task_id": 2, "test_list": ["assert set(similar_elements((3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))"]}
    assert Task.from_row(sum_row).entry_points == ("sum",)
    assert Task.from_row(set_row).entry_points == ("similar_elements",)
    kod = {"question_id": "Prefill_90005_C", "test": "from solution import *\n\ndef test_sum():\n"
           "    assert sum(10, 15) == 6\n    assert sum([1]) == 1\n",
           "test_info": [{"function_name": "sum", "parameter_list": "(a, b=0)"}]}
    assert Task.from_row(kod).entry_points == ("sum",)
    own_sum = ("def sum(a, b=0):\n    if isinstance(a, list):\n        return len(a)\n    total = 0\n"
               "    for i in range(1, min(a, b)):\n        if a % i == 0 and b % i == 0:\n            total += i\n"
               "    return total\n")
    assert statuses(score(scorer, sum_row, own_sum) + score(scorer, kod, own_sum)) == [("passed", 2, 2),
                                                                                       ("passed", 1, 1)]


def test_kodcode_skips_do_not_pass(scorer):
    skipping = "import pytest\ndef two_sum(nums, target):\n    pytest.skip('no')"
    results = score(scorer, KODCODE, fence(skipping))
    assert results[0].tests_passed == 0 and results[0].status in ("failed", "error")


def test_kodcode_scratch_conftest_is_never_loaded(scorer):
    # The program writes a conftest.py and a pytest.ini into the scratch directory (the judge's working directory):
    # neither may load, or the program would run code in the judge.
    sneaky = ("import os\nopen('conftest.py', 'w').write('import os\\nos._exit(0)\\n')\n"
              "open('pytest.ini', 'w').write('[pytest]\\naddopts = -p no:python\\n')\n" + KODCODE["solution"])
    assert statuses(score(scorer, KODCODE, fence(sneaky))) == [("passed", 4, 4)]


# -- PrimeIntellect, DeepCoder, rStar-Coder ------------------------------------------------------------------------

PRIME = {
    "source": "codeforces",
    "task_type": "verifiable_code",
    "in_source_id": "1_A",
    "prompt": "Solve the following coding problem using the programming language python: print n*(n+1)/2",
    "gold_standard_solution": "```python\nn=int(input())\nprint(n*(n+1)//2)\n```",
    "verification_info": json.dumps({"language": "python", "test_cases": [
        {"type": "stdin_stdout", "input": "3\n", "output": "6\n"},
        {"type": "stdin_stdout", "input": "10\n", "output": "55\n"}]}),
    "metadata": json.dumps({"difficulty": 1}),
    "problem_id": "vfc_1",
}


def test_primeintellect_rows(scorer):
    assert Task.from_row(PRIME).task_id == "vfc_1"
    results = score(scorer, PRIME, PRIME["gold_standard_solution"], fence("n=int(input())\nprint(n*n)"))
    assert statuses(results) == [("passed", 2, 2), ("failed", 0, 2)]
    calls = {**PRIME, "verification_info": json.dumps({"language": "python", "test_cases": [
        {"type": "function_call", "fn_name": "add", "input": [1, 2], "output": [3]},
        {"type": "function_call", "fn_name": "add", "input": [5, 5], "output": [10]}]})}
    results = score(scorer, calls, fence("def add(a, b):\n    return a + b"), fence("def add(a, b):\n    return a"))
    assert statuses(results) == [("passed", 2, 2), ("failed", 0, 2)]
    cpp_calls = {**PRIME, "verification_info": json.dumps({**json.loads(calls["verification_info"]),
                                                           "language": "cpp"})}
    with pytest.raises(TaskFormatError, match="C\\+\\+ completions run stdin/stdout tasks only"):
        Task.from_row(cpp_calls)
    cobol = {**PRIME, "verification_info": json.dumps({**json.loads(PRIME["verification_info"]),
                                                       "language": "cobol"})}
    with pytest.raises(TaskFormatError, match="unknown language 'cobol'"):
        Task.from_row(cobol)


def test_deepcoder_and_rstar_rows(scorer):
    lcb_subset = {"problem": "print n squared", "solutions": [], "tests": json.dumps([
        {"input": "3\n", "output": "9\n", "testtype": "stdin", "metadata": {}}])}
    taco_subset = {"problem": "add", "solutions": [], "tests": json.dumps(
        {"fn_name": "add", "inputs": [[1, 2]], "outputs": [[3]]})}
    assert detect_format(lcb_subset) == "deepcoder" and Task.from_row(taco_subset).format == "function"
    assert statuses(score(scorer, lcb_subset, "print(int(input())**2)", "print(3)")) == [
        ("passed", 1, 1), ("failed", 0, 1)]
    assert statuses(score(scorer, taco_subset, "def add(a, b):\n    return a + b")) == [("passed", 1, 1)]
    rstar = {"question_id": "rstar_17", "question": "print the input reversed",
             "inputs": json.dumps(["abc\n", "xy\n"]), "outputs": json.dumps(["cba\n", "yx\n"])}
    assert detect_format(rstar) == "rstar" and Task.from_row(rstar).task_id == "rstar_17"
    assert statuses(score(scorer, rstar, "print(input()[::-1])", "print(input())")) == [
        ("passed", 2, 2), ("failed", 0, 2)]


# -- open-r1 codeforces and checkers -------------------------------------------------------------------------------

CHECKER = """import sys
def main():
    inp, correct, out = (open(p).read().split() for p in sys.argv[1:4])
    n = int(inp[0])
    try:
        a, b = map(int, out)
    except ValueError:
        print(0)
        return
    print(1 if a + b == n and a > 0 and b > 0 else 0)
main()
"""
CODEFORCES = {
    "id": "4/A",
    "aliases": None,
    "contest_id": "4",
    "contest_name": "Codeforces Beta Round 4",
    "contest_type": "CF",
    "contest_start": 1268395200,
    "contest_start_year": 2010,
    "index": "A",
    "time_limit": 1.0,
    "memory_limit": 64.0,
    "title": "Split",
    "description": "Print any two positive integers a, b with a + b = n.",
    "input_format": "One integer n (2 <= n <= 100).",
    "output_format": "Two integers.",
    "interaction_format": None,
    "note": None,
    "examples": [{"input": "5\n", "output": "1 4\n"}],
    "editorial": None,
    "rating": 800,
    "tags": ["math"],
    "testset_size": 2,
    "official_tests": [{"input": "5\n", "output": "1 4\n"}, {"input": "2\n", "output": "1 1\n"}],
    "official_tests_complete": True,
    "input_mode": "stdio",
    "generated_checker": CHECKER,
    "executable": True,
    "generated_tests": 0,
}


def test_codeforces_rows_with_their_checker(scorer):
    task = Task.from_row(CODEFORCES)
    assert task.task_id == "4/A" and task.time_limit_s == 1.0 and task.memory_limit_bytes == 64 << 20
    other_answer = "n=int(input())\nprint(n-1, 1)"  # not the answer file's, accepted by the checker
    wrong = "n=int(input())\nprint(n, 0)"
    garbage = "print('hello')"
    results = score(scorer, CODEFORCES, fence(other_answer), fence(wrong), fence(garbage))
    assert statuses(results) == [("passed", 2, 2), ("failed", 0, 2), ("failed", 0, 2)]
    assert "rejected by the checker" in results[1].error


def test_testlib_checker_in_a_row(scorer):
    testlib = CHECKER.replace("print(0)\n        return", "sys.exit(1)").replace(
        "print(1 if a + b == n and a > 0 and b > 0 else 0)", "sys.exit(0 if a + b == n and a > 0 and b > 0 else 2)")
    testlib = testlib.replace("inp, correct, out", "inp, out, correct")
    row = {"task_id": "split", "inputs": ["5\n", "9\n"], "outputs": ["1 4\n", "1 8\n"],
           "compare": {"checker": testlib, "language": "python"}}
    results = score(scorer, row, "n=int(input())\nprint(2, n-2)", "print(1, 1)")
    assert statuses(results) == [("passed", 2, 2), ("failed", 0, 2)]
    broken = {**row, "compare": {"checker": "import sys\nsys.exit(3)"}}
    assert score(scorer, broken, "print(1)")[0].status == "invalid_task"  # testlib's _fail: the task's fault


def test_checker_files_cannot_be_forged(scorer):
    # The program writes the files a checker reads (answer.txt, output.txt...) into the scratch directory: the
    # checker never reads them; its files exist only in its memory.
    row = {"task_id": "forge", "inputs": ["5\n"], "outputs": ["1 4\n"],
           "compare": {"checker": CHECKER, "convention": "open-r1"}}
    forged = ("for name in ('input.txt', 'correct_output.txt', 'solution_output.txt', 'answer.txt', 'output.txt'):\n"
              "    open(name, 'w').write('2 2 3')\nprint('nope')")
    assert statuses(score(scorer, row, forged)) == [("failed", 0, 1)]


def test_interactive_and_file_mode(scorer):
    interactive = {**CODEFORCES, "interaction_format": "Interact with the jury's program through stdin/stdout."}
    with pytest.raises(TaskFormatError, match="interactive problem and gives no interactor"):
        Task.from_row(interactive)
    # A row of trl-sandbox's own says it is interactive and gives no interactor: refused as documented, never judged
    # as a plain stdin/stdout row, where a program that prints the expected outputs would be paid.
    own = {"task_id": "guess", "interactive": True, "inputs": ["37\n"], "outputs": ["37\n"]}
    with pytest.raises(TaskFormatError, match="interactive problem and gives no interactor"):
        Task.from_row(own)
    from trl_sandbox import CodeReward

    assert CodeReward(scorer)(["print(37)"], prompts=["Guess."], **{k: [v] for k, v in own.items()}) == [None]
    file_mode = {**CODEFORCES, "input_mode": "file", "generated_checker": None}
    writes_file = "n = int(open('input.txt').read())\nopen('output.txt', 'w').write(f'1 {n-1}\\n')"
    assert statuses(score(scorer, file_mode, writes_file)) == [("passed", 2, 2)]


# -- bad rows never crash a batch ------------------------------------------------------------------------------------


def test_unknown_rows_name_their_fields_and_the_formats():
    with pytest.raises(TaskFormatError, match=r"fields \[difficulty, question\].*APPS/TACO.*task_format="):
        Task.from_row({"question": "?", "difficulty": "easy"})
    with pytest.raises(TaskFormatError, match="unknown task format 'nope'"):
        Task.from_row(APPS_STDIN, "nope")


def test_malformed_rows_are_invalid_and_the_batch_is_scored(scorer):
    bad_json = {**APPS_STDIN, "input_output": "{not json"}
    uneven = {**CODE_CONTESTS, "private_tests": {"input": ["1\n", "2\n"], "output": ["NO\n"]}}
    reward = CodeReward(scorer)
    rows = [bad_json, APPS_STDIN, uneven, CODE_CONTESTS]
    completions = ["print(1)", fence("a, b = map(int, input().split())\nprint(a + b)"), "print(1)",
                   "n=int(input())\nprint('YES' if n%2==0 else 'NO')"]
    columns = {k: [r.get(k) for r in rows] for k in {k for r in rows for k in r}}
    metrics = {}
    rewards = reward(completions=completions, prompts=["p"] * 4, log_metric=metrics.__setitem__, **columns)
    assert rewards == [None, 1.0, None, 1.0]
    assert metrics["sandbox/invalid_tasks"] == 2.0


def test_dataset_rows_the_way_trl_passes_them(scorer):
    """TRL passes every column as a keyword list; rows of several formats in one batch, conversational prompts."""
    rows = [LCB_FUNCTIONAL, PRIME, KODCODE]
    completions = [
        [{"role": "assistant", "content": fence(
            "class Solution:\n    def maximumNumberOfStringPairs(self, words):\n"
            "        return sum(1 for i, a in enumerate(words) for b in words[i + 1:] if a == b[::-1])")}],
        [{"role": "assistant", "content": PRIME["gold_standard_solution"]}],
        [{"role": "assistant", "content": fence(KODCODE["solution"])}],
    ]
    columns = {k: [r.get(k) for r in rows] for k in {k for r in rows for k in r} if k != "prompt"}
    prompts = [[{"role": "user", "content": "Solve it."}]] * 3
    rewards = CodeReward(scorer)(completions=completions, prompts=prompts, **columns)
    assert rewards == [1.0, 1.0, 1.0]


# -- files and datasets, as users load them ------------------------------------------------------------------------


def test_score_command_reads_published_files(tmp_path, sandbox_root):
    """``trl-sandbox score`` on a JSONL of APPS rows (no ``task_id``: ``problem_id`` is the id; one row malformed)
    and on a Parquet file of code_contests rows, with ``--compare`` setting the default judge."""
    import subprocess
    import sys

    import pyarrow as pa
    import pyarrow.parquet as pq

    bad = {**APPS_STDIN, "problem_id": 4001, "input_output": "{oops"}
    (tmp_path / "apps.jsonl").write_text(json.dumps(APPS_STDIN) + "\n" + json.dumps(bad) + "\n")
    pq.write_table(pa.Table.from_pylist([CODE_CONTESTS]), tmp_path / "cc.parquet")
    samples = [{"task_id": 4000, "completion": fence("a, b = map(int, input().split())\nprint(a + b)")},
               {"task_id": "4001", "completion": "print(1)"},
               {"task_id": "4000", "completion": "print(0)"}]
    (tmp_path / "apps-samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    (tmp_path / "cc-samples.jsonl").write_text(json.dumps(
        {"task_id": "1_A. Theatre Square", "completion": "n=int(input())\nprint('yes' if n%2==0 else 'no')"}) + "\n")
    opts = json.dumps({"root_dir": str(sandbox_root)})

    def run(tasks, completions, *extra):
        out = tmp_path / "out.jsonl"
        result = subprocess.run(
            [sys.executable, "-m", "trl_sandbox.cli", "score", "--tasks", str(tmp_path / tasks), "--completions",
             str(tmp_path / completions), "--out", str(out), "--pool-size", "1", "--backend-options", opts, *extra],
            check=False, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        return [json.loads(line) for line in out.read_text().splitlines()]

    results = run("apps.jsonl", "apps-samples.jsonl")
    assert [(r["task_id"], r["status"]) for r in results] == [
        ("4000", "passed"), ("4001", "invalid_task"), ("4000", "failed")]
    assert "not valid JSON" in results[1]["error"]
    assert run("cc.parquet", "cc-samples.jsonl")[0]["status"] == "passed"  # code_contests ignores case
    assert run("cc.parquet", "cc-samples.jsonl", "--compare", "tokens")[0]["status"] == "failed"


def test_load_tasks_from_a_dataset_with_a_named_format():
    from datasets import Dataset

    from trl_sandbox import load_tasks

    rows = load_tasks(Dataset.from_list([APPS_STDIN]), task_format="taco")
    assert rows[0]["task_format"] == "taco" and Task.from_row(rows[0]).dataset == "taco"
    with pytest.raises(TaskFormatError, match="unknown task format"):
        load_tasks([APPS_STDIN], task_format="appz")


def test_chat_prompts_for_published_rows():
    from trl_sandbox.prompts import chat_rows, problem_prompt

    stdio, functional, kodcode = chat_rows([CODEFORCES, LCB_FUNCTIONAL, KODCODE], system_prompt="Be brief.")
    text = stdio["prompt"][1]["content"]
    assert stdio["prompt"][0] == {"role": "system", "content": "Be brief."}
    assert text.startswith(CODEFORCES["description"]) and "Input\nOne integer n" in text
    assert "standard input" in text and "starter code" not in text
    text = functional["prompt"][1]["content"]
    assert LCB_FUNCTIONAL["starter_code"].rstrip() in text and "standard input" not in text
    assert "def two_sum(nums, target)" in kodcode["prompt"][1]["content"]
    assert problem_prompt(APPS_STDIN).startswith(APPS_STDIN["question"])


@pytest.mark.parametrize("fork_server", [True, False])
def test_a_checker_that_runs_the_output_cannot_forge_records(own_sandbox_root, fork_server):
    """A generated checker may ``eval`` or ``exec`` what the program printed: then the program's text runs in the
    checker's process. It must not reach the judge's result channel (``python harness.py``) or its connection to the
    host (fork server): the checker's fork keeps no descriptor but its own verdict pipe."""
    # It accepts the answer and rejects an empty output (its self-test, issue 37), and runs any other output.
    checker = ("import sys\nout = open(sys.argv[2]).read()\nif out == open(sys.argv[3]).read():\n    sys.exit(0)\n"
               "try:\n    exec(out)\nexcept Exception:\n    pass\nsys.exit(1)\n")
    row = {"task_id": "executing-checker", "inputs": ["1\n", "2\n"], "outputs": ["1\n", "2\n"],
           "compare": {"checker": checker}}
    script = ("import os\nfor fd in range(3, 256):\n    try:\n"
              "        os.write(fd, b'{\"i\": 0, \"ok\": true}\\n{\"i\": 1, \"ok\": true}\\n{\"done\": 2}\\n')\n"
              "    except OSError:\n        pass\n")
    config = SandboxConfig(sandbox_pool_size=1, sandbox_test_timeout=2.0,
                           sandbox_backend_options={"root_dir": str(own_sandbox_root), "fork_server": fork_server})
    with Scorer.from_config(config) as s:
        result = s.score([Task.from_row(row)], [f"print({script!r})"])[0]
    assert (result.status, result.tests_passed) == ("failed", 0), result


@pytest.mark.slow
def test_train_on_a_parquet_file_of_published_rows(tmp_path, own_sandbox_root):
    """``trl-sandbox train --tasks FILE.parquet``: code_contests rows as published (no prompt, no task_id); the
    statement becomes the prompt, a malformed row is left out with a warning, every completion is scored."""
    import subprocess
    import sys

    import pyarrow as pa
    import pyarrow.parquet as pq

    other = {**CODE_CONTESTS, "name": "2_B. Odd", "description": "Print YES if n is odd."}
    broken = {**CODE_CONTESTS, "name": "3_C. Broken", "private_tests": {"input": ["1\n", "2\n"], "output": ["NO\n"]}}
    pq.write_table(pa.Table.from_pylist([CODE_CONTESTS, other, broken]), tmp_path / "cc.parquet")
    out = tmp_path / "run"
    result = subprocess.run(
        [sys.executable, "-m", "trl_sandbox.cli", "train", "--model", "tiny", "--tasks", str(tmp_path / "cc.parquet"),
         "--max-steps", "1", "--max-completion-length", "16", "--num-generations", "2",
         "--per-device-train-batch-size", "4", "--sandbox-pool-size", "2", "--sandbox-backend-options",
         json.dumps({"root_dir": str(own_sandbox_root)}), "--output-dir", str(out)],
        check=False, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "3_C. Broken" in result.stderr and "left out" in result.stderr
    steps = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    steps = [r for r in steps if "sandbox/completions" in r]
    assert steps and all(r["sandbox/invalid_tasks"] == 0 and r["sandbox/completions"] == 4 for r in steps)


def test_a_batch_parses_each_row_once(scorer, monkeypatch):
    """TRL repeats each row num_generations times in a batch; a row with megabytes of compressed tests is parsed
    once per batch, not once per completion."""
    calls = []
    original = Task.from_row.__func__

    def counting(cls, row, task_format=None):
        calls.append(row.get("question_id"))
        return original(cls, row, task_format)

    monkeypatch.setattr(Task, "from_row", classmethod(counting))
    rows = [LCB_1873A] * 4 + [LCB_STDIN] * 4
    columns = {k: [dict(r).get(k) for r in rows] for k in {k for r in rows for k in r}}
    rewards = CodeReward(scorer)(completions=["print('NO')"] * 8, prompts=["p"] * 8, **columns)
    assert len(rewards) == 8 and sorted(calls) == ["1873_A", "abc999_a"]
