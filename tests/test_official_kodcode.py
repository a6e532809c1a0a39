"""KodCode-V1 verdicts against the official harness, ``KodCode-AI/kodcode`` ``pipeline/run_test.sh``.

The official harness writes the row's ``solution`` as ``solution.py`` beside the row's ``test`` file and runs
``timeout 30 pytest --rootdir=. --cov=solution`` in that directory: the test file and the solution are ONE Python
process, and the row passes exactly when pytest exits 0 (anything else is "Fail", 124 is "Fail - Timed Out"). Each
official verdict below is derived from that, and from pytest's own rules for its exit status: 0 when no test failed
(skipped tests, xfailed tests and non-strict xpassed tests fail nothing), 1 when a test failed (a strict xfail test
that passes fails), 5 when no test was collected. The rewards are trl-sandbox's default ``pass_rate`` (passed tests
over the task's test functions; a skipped or xfailed test counts as passed).

Each row is written field for field as ``KodCode/KodCode-V1`` publishes it, and scored through ``code_reward`` as
TRL's ``GRPOTrainer`` calls it (:func:`tests._official.trl_rewards`), with a correct program first and a wrong one.
"""

from __future__ import annotations

import pytest

from tests._official import as_assistant, trl_rewards
from trl_sandbox import SandboxConfig, Scorer, Task


def kodcode_row(question_id: str, question: str, solution: str, test: str, function: str, parameters: str) -> dict:
    """A ``KodCode/KodCode-V1`` row: every published column, with the values such a row has."""
    return {
        "version": "v1.0",
        "style": "instruct",
        "subset": question_id.split("_")[0],
        "question_id": question_id,
        "question": question,
        "solution": solution,
        "test": test,
        "test_info": [{"function_name": function, "parameter_list": parameters,
                       "function_declaration": f"def {function}{parameters}:", "docstring": None}],
        "gpt_pass_sequence": [1, 1, 0, 1, 1, 1, 1, 1, 0, 1],
        "gpt_pass_trial_num": 8,
        "gpt_difficulty": "easy",
        "gpt_pass_percentage": 0.8,
        "trials": {"trial_gpt4o_0": {"file_source": f"{question_id}_solution.py", "solution_code": solution,
                                     "test_code": test, "test_coverage": 100.0, "test_result": "Pass"}},
        "chosen_trial": "trial_gpt4o_0",
        "metadata": {"original_instruction": question, "prompt_id": f"{question_id}_00000", "row_id": 4242,
                     "seed_ids": "['codeforces_1_A']"},
        "benchmark_similarity": 0.41,
        "benchmark_instruction": "",
        "benchmark_task_id": "",
        "filter_reason": "",
        "conversation_id": f"{question_id.lower()}_conversation",
    }


# -- rule 1: the test file's patches reach the program (one process officially) -------------------------------------

SORT_ROW = kodcode_row(
    "Prefill_30001_C",
    "Write a function custom_sort(nums) that returns the list sorted in ascending order without using the built-in "
    "sorted() function.",
    "def custom_sort(nums):\n    result = list(nums)\n    for i in range(1, len(result)):\n        key = result[i]\n"
    "        j = i - 1\n        while j >= 0 and result[j] > key:\n            result[j + 1] = result[j]\n"
    "            j -= 1\n        result[j + 1] = key\n    return result\n",
    "import pytest\nfrom unittest.mock import patch\nfrom solution import custom_sort\n\n\n"
    "@pytest.fixture(autouse=True)\ndef forbid_sorted():\n"
    "    with patch(\"builtins.sorted\", side_effect=AssertionError(\"sorted() is not allowed\")):\n        yield\n\n\n"
    "def test_custom_sort_basic():\n    assert custom_sort([3, 1, 2]) == [1, 2, 3]\n\n\n"
    "def test_custom_sort_duplicates():\n    assert custom_sort([4, 1, 4, 2]) == [1, 2, 4, 4]\n\n\n"
    "def test_custom_sort_empty():\n    assert custom_sort([]) == []\n",
    "custom_sort", "(nums)")

PRINT_ROW = kodcode_row(
    "Prefill_30002_C",
    "Write a function format_report(items) that returns the items as numbered lines (\"1. a\"), one per line. It "
    "must return the text and must not print anything.",
    "def format_report(items):\n    return \"\\n\".join(f\"{i}. {item}\" for i, item in enumerate(items, 1))\n",
    "from unittest.mock import patch\nfrom solution import format_report\n\n\n"
    "@patch(\"builtins.print\")\ndef test_format_report(mock_print):\n"
    "    assert format_report([\"a\", \"b\"]) == \"1. a\\n2. b\"\n    mock_print.assert_not_called()\n\n\n"
    "@patch(\"builtins.print\")\ndef test_format_report_empty(mock_print):\n"
    "    assert format_report([]) == \"\"\n    mock_print.assert_not_called()\n",
    "format_report", "(items)")


def test_a_patched_sorted_reaches_the_program(scorer):
    # sorted forbidden by an autouse fixture patching builtins.sorted with side_effect=AssertionError: in the one
    # official process the program's sorted() is that mock, so a program calling sorted() fails every test (pytest
    # exits 1: Fail, 0/3 passed -> 0.0); the insertion sort passes (exit 0: Pass -> 1.0).
    uses_sorted = "def custom_sort(nums):\n    return sorted(nums)\n"
    assert trl_rewards(scorer, SORT_ROW, [SORT_ROW["solution"], uses_sorted]) == [1.0, 0.0]


def test_a_patched_print_reaches_the_program(scorer):
    # print forbidden: @patch("builtins.print") and mock_print.assert_not_called(); a program that prints (even from a
    # helper it calls) makes the mock record a call: exit 1, Fail, 0/2 -> 0.0.
    prints = ("def _show(text):\n    print(text)\n    return text\n\n"
              "def format_report(items):\n    return _show(\"\\n\".join(f\"{i}. {x}\" for i, x in enumerate(items, 1)))\n")
    assert trl_rewards(scorer, PRINT_ROW, [PRINT_ROW["solution"], prints]) == [1.0, 0.0]


INPUT_ROW = kodcode_row(
    "Prefill_30003_C",
    "Write a function add_two_inputs() that reads two integers with input(), one per call, and returns their sum.",
    "def add_two_inputs():\n    a = int(input())\n    b = int(input())\n    return a + b\n",
    "from unittest.mock import patch\nfrom solution import add_two_inputs\n\n\n"
    "def test_add_two_inputs():\n    with patch(\"builtins.input\", side_effect=[\"3\", \"4\"]):\n"
    "        assert add_two_inputs() == 7\n\n\n"
    "@patch(\"builtins.input\", side_effect=[\"-1\", \"1\"])\ndef test_add_two_inputs_zero(mock_input):\n"
    "    assert add_two_inputs() == 0\n    assert mock_input.call_count == 2\n",
    "add_two_inputs", "()")

STDIN_ROW = kodcode_row(
    "Codeforces_30004_I",
    "Write a function main() that reads n on the first line of standard input and n integers on the second, and "
    "prints their sum.",
    "def main():\n    n = int(input())\n    nums = list(map(int, input().split()))\n    print(sum(nums[:n]))\n",
    "import io\nfrom solution import main\n\n\n"
    "def test_main(monkeypatch, capsys):\n    monkeypatch.setattr(\"sys.stdin\", io.StringIO(\"3\\n1 2 3\\n\"))\n"
    "    main()\n    assert capsys.readouterr().out == \"6\\n\"\n\n\n"
    "def test_main_negative(monkeypatch, capsys):\n    monkeypatch.setattr(\"sys.stdin\", io.StringIO(\"2\\n-5 3\\n\"))\n"
    "    main()\n    assert capsys.readouterr().out == \"-2\\n\"\n",
    "main", "()")


def test_patched_input_and_stdin_reach_the_program(scorer):
    # patch("builtins.input", side_effect=[...]) as a context manager and as a decorator: officially the program's
    # input() is the mock, returning "3" then "4" (7) and "-1" then "1" (0), and call_count is 2: exit 0, Pass -> 1.0.
    # Multiplying instead gives 12 and -1: both tests fail, exit 1 -> 0.0.
    multiplies = "def add_two_inputs():\n    return int(input()) * int(input())\n"
    assert trl_rewards(scorer, INPUT_ROW, [INPUT_ROW["solution"], multiplies]) == [1.0, 0.0]
    # monkeypatch.setattr("sys.stdin", io.StringIO(...)): the program's input() reads that StringIO (same process),
    # prints 6 and -2 into capsys: Pass -> 1.0; printing the maximum instead prints 3 and 3: Fail, 0/2 -> 0.0.
    maximum = "import sys\n\ndef main():\n    sys.stdin.readline()\n    print(max(map(int, sys.stdin.readline().split())))\n"
    assert trl_rewards(scorer, STDIN_ROW, [STDIN_ROW["solution"], maximum]) == [1.0, 0.0]


ENV_ROW = kodcode_row(
    "Package_30005_I",
    "Write get_config() returning a dict with 'mode' from the APP_MODE environment variable (default "
    "'development') and 'retries' as the integer MAX_RETRIES (default 3).",
    "import os\n\ndef get_config():\n    return {\"mode\": os.getenv(\"APP_MODE\", \"development\"),\n"
    "            \"retries\": int(os.environ.get(\"MAX_RETRIES\", \"3\"))}\n",
    "import os\nfrom unittest.mock import patch\nfrom solution import get_config\n\n\n"
    "def test_mode_from_env(monkeypatch):\n    monkeypatch.setenv(\"APP_MODE\", \"production\")\n"
    "    assert get_config()[\"mode\"] == \"production\"\n\n\n"
    "def test_defaults(monkeypatch):\n    monkeypatch.delenv(\"APP_MODE\", raising=False)\n"
    "    monkeypatch.delenv(\"MAX_RETRIES\", raising=False)\n"
    "    assert get_config() == {\"mode\": \"development\", \"retries\": 3}\n\n\n"
    "@patch.dict(os.environ, {\"MAX_RETRIES\": \"5\", \"APP_MODE\": \"staging\"})\ndef test_patch_dict():\n"
    "    assert get_config() == {\"mode\": \"staging\", \"retries\": 5}\n",
    "get_config", "()")


def test_environment_changes_reach_the_program(scorer):
    # monkeypatch.setenv/delenv and @patch.dict(os.environ, ...) change os.environ of the one official process: the
    # program reads them through os.getenv and os.environ.get: Pass -> 1.0. A program ignoring the environment passes
    # only test_defaults: exit 1, Fail, 1/3 passed -> pass rate 1/3.
    constant = "def get_config():\n    return {\"mode\": \"development\", \"retries\": 3}\n"
    assert trl_rewards(scorer, ENV_ROW, [ENV_ROW["solution"], constant]) == [1.0, pytest.approx(1 / 3)]


DICE_ROW = kodcode_row(
    "Prefill_30006_C",
    "Write roll_dice(n) that returns a list of n rolls of a six-sided die, each from random.randint(1, 6).",
    "import random\n\ndef roll_dice(n):\n    return [random.randint(1, 6) for _ in range(n)]\n",
    "from unittest.mock import patch\nfrom solution import roll_dice\n\n\n"
    "@patch(\"random.randint\", return_value=4)\ndef test_roll_dice(mock_randint):\n"
    "    assert roll_dice(3) == [4, 4, 4]\n    assert mock_randint.call_count == 3\n"
    "    mock_randint.assert_called_with(1, 6)\n\n\n"
    "def test_roll_dice_range():\n    assert all(1 <= r <= 6 for r in roll_dice(50))\n",
    "roll_dice", "(n)")

ORDER_ROW = kodcode_row(
    "Filter_30007_I",
    "Write compute_tax(amount) (20% of the amount) and process_order(amount), which returns the amount plus "
    "compute_tax(amount), and fetch_discount(code) / checkout(amount, code) applying fetch_discount's percentage.",
    "def compute_tax(amount):\n    return amount * 0.2\n\n"
    "def process_order(amount):\n    return amount + compute_tax(amount)\n\n"
    "def fetch_discount(code):\n    return {\"SAVE10\": 10}.get(code, 0)\n\n"
    "def checkout(amount, code):\n    return amount * (100 - fetch_discount(code)) / 100\n",
    "from unittest.mock import patch\nimport solution\nfrom solution import process_order, checkout\n\n\n"
    "def test_process_order_uses_compute_tax():\n"
    "    with patch(\"solution.compute_tax\", return_value=5.0) as mock_tax:\n"
    "        assert process_order(100.0) == 105.0\n        mock_tax.assert_called_once_with(100.0)\n\n\n"
    "def test_checkout_uses_fetch_discount():\n"
    "    with patch.object(solution, \"fetch_discount\", return_value=50) as mock_discount:\n"
    "        assert checkout(80.0, \"HALF\") == 40.0\n"
    "        assert mock_discount.call_count == 1\n\n\n"
    "def test_process_order_real_tax():\n    assert process_order(50.0) == 60.0\n",
    "process_order", "(amount)")


def test_patched_module_functions_reach_the_program(scorer):
    # patch("random.randint", return_value=4): the program's random.randint(1, 6) is the mock: [4, 4, 4],
    # call_count 3, last call (1, 6): Pass -> 1.0. A program rolling randint(0, 5) + 1 returns [5, 5, 5] under the
    # patch: test_roll_dice fails, test_roll_dice_range passes: exit 1, Fail, 1/2 -> 0.5.
    off_by_one = "import random\n\ndef roll_dice(n):\n    return [random.randint(0, 5) + 1 for _ in range(n)]\n"
    assert trl_rewards(scorer, DICE_ROW, [DICE_ROW["solution"], off_by_one]) == [1.0, 0.5]
    # patch("solution.compute_tax") and patch.object(solution, "fetch_discount"): the program's own functions look
    # these names up in the module solution, which the patches changed: process_order(100.0) is 105.0 and checkout
    # applies 50%: Pass -> 1.0. A program computing the tax and the discount inline ignores both mocks: the two
    # patched tests fail (120.0, 72.0, no call), test_process_order_real_tax passes: exit 1, 1/3 passed.
    inline = ("def compute_tax(amount):\n    return amount * 0.2\n\n"
              "def process_order(amount):\n    return amount * 1.2\n\n"
              "def fetch_discount(code):\n    return {\"SAVE10\": 10}.get(code, 0)\n\n"
              "def checkout(amount, code):\n    return amount * (100 - {\"SAVE10\": 10}.get(code, 0)) / 100\n")
    assert trl_rewards(scorer, ORDER_ROW, [ORDER_ROW["solution"], inline]) == [1.0, pytest.approx(1 / 3)]


FILE_ROW = kodcode_row(
    "Package_30012_I",
    "Write count_lines(path) that returns the number of lines of the text file at path.",
    "def count_lines(path):\n    with open(path) as f:\n        return sum(1 for _ in f)\n",
    "from unittest.mock import patch, mock_open\nfrom solution import count_lines\n\n\n"
    "def test_count_lines():\n    with patch(\"builtins.open\", mock_open(read_data=\"a\\nb\\nc\\n\")) as mocked:\n"
    "        assert count_lines(\"data.txt\") == 3\n        mocked.assert_called_once_with(\"data.txt\")\n",
    "count_lines", "(path)")


def test_a_mock_open_file_reaches_the_program(scorer):
    # patch("builtins.open", mock_open(read_data=...)): officially the program's open() returns the mock's file
    # handle, which it iterates in a with block: 3 lines, open called once with "data.txt": Pass -> 1.0. Counting
    # characters instead reads 6: Fail -> 0.0.
    characters = "def count_lines(path):\n    with open(path) as f:\n        return len(f.read())\n"
    assert trl_rewards(scorer, FILE_ROW, [FILE_ROW["solution"], characters]) == [1.0, 0.0]


# -- rule 15: skipped and xfail tests count as pytest counts them -----------------------------------------------------

SKIP_ROW = kodcode_row(
    "Leetcode_30008_I",
    "Write merge_intervals(intervals) that merges overlapping [start, end] intervals and returns them sorted by "
    "start.",
    "def merge_intervals(intervals):\n    merged = []\n    for start, end in sorted(intervals):\n"
    "        if merged and start <= merged[-1][1]:\n            merged[-1][1] = max(merged[-1][1], end)\n"
    "        else:\n            merged.append([start, end])\n    return merged\n",
    "import pytest\nfrom solution import merge_intervals\n\n\n"
    "def test_merge_basic():\n    assert merge_intervals([[1, 3], [2, 6], [8, 10]]) == [[1, 6], [8, 10]]\n\n\n"
    "@pytest.mark.skip(reason=\"property-based version needs hypothesis\")\ndef test_merge_property():\n"
    "    assert merge_intervals(None) == []\n\n\n"
    "def test_merge_with_numpy():\n    np = pytest.importorskip(\"nosuchmodule_numpy_backend\")\n"
    "    assert merge_intervals(np.array([[1, 2]])) == [[1, 2]]\n\n\n"
    "def test_merge_huge():\n    pytest.skip(\"too slow for CI\")\n    assert merge_intervals([[i, i + 1] for i in range(10 ** 7)])\n\n\n"
    "@pytest.mark.xfail(reason=\"touching intervals are kept apart in v1\")\ndef test_merge_touching():\n"
    "    assert merge_intervals([[1, 2], [2, 3]]) == [[1, 2], [2, 3]]\n\n\n"
    "@pytest.mark.xfail(reason=\"unsorted input was not supported in v1\")\ndef test_merge_unsorted():\n"
    "    assert merge_intervals([[8, 10], [1, 3]]) == [[1, 3], [8, 10]]\n",
    "merge_intervals", "(intervals)")

STRICT_ROW = kodcode_row(
    "Apps_30009_I",
    "Write parse_version(text) returning a tuple of ints for 'MAJOR.MINOR.PATCH'; pre-release suffixes such as "
    "'1.0.0-rc1' are not supported and must raise NotImplementedError.",
    "def parse_version(text):\n    if \"-\" in text:\n        raise NotImplementedError(\"pre-release\")\n"
    "    return tuple(int(part) for part in text.split(\".\"))\n",
    "import pytest\nfrom solution import parse_version\n\n\n"
    "def test_parse_version():\n    assert parse_version(\"1.2.3\") == (1, 2, 3)\n\n\n"
    "@pytest.mark.xfail(raises=NotImplementedError, strict=True)\ndef test_pre_release_unsupported():\n"
    "    parse_version(\"1.0.0-rc1\")\n",
    "parse_version", "(text)")


def test_skips_and_xfails_count_as_pytest_counts_them(scorer):
    # Official: test_merge_basic passes; @pytest.mark.skip, importorskip of a missing module and pytest.skip() inside
    # a test are skipped; test_merge_touching fails under a non-strict xfail (xfailed) and test_merge_unsorted passes
    # under one (xpassed): nothing failed, exit 0, Pass -> 1.0 (a skipped or xfailed test counts as passed). A program
    # that never merges fails test_merge_basic only (the xfail tests fail or pass as they like): exit 1, Fail; 5 of the
    # 6 test functions count as passed.
    no_merge = "def merge_intervals(intervals):\n    return [list(i) for i in sorted(intervals)]\n"
    assert trl_rewards(scorer, SKIP_ROW, [SKIP_ROW["solution"], no_merge]) == [1.0, pytest.approx(5 / 6)]
    # strict xfail: a program that raises NotImplementedError makes the test xfail (exit 0, Pass -> 1.0); one that
    # parses the suffix away passes it: XPASS(strict) is a failure, exit 1, Fail, 1/2 -> 0.5.
    lenient = "def parse_version(text):\n    return tuple(int(p) for p in text.split(\"-\")[0].split(\".\"))\n"
    assert trl_rewards(scorer, STRICT_ROW, [STRICT_ROW["solution"], lenient]) == [1.0, 0.5]


def test_a_test_file_that_skips_itself_whole_is_not_the_programs_doing(scorer):
    # Module-level importorskip of a module the environment lacks: pytest collects no test and exits 5, so officially
    # every program Fails alike; trl-sandbox reports the row as invalid_task (reward None, left out of the advantage)
    # rather than 0.0 for every program: a deliberate departure (nothing the program does can change it).
    row = dict(SKIP_ROW, question_id="Leetcode_30010_I", test="import pytest\n"
               "np = pytest.importorskip(\"nosuchmodule_numpy_backend\")\nfrom solution import merge_intervals\n\n\n"
               "def test_merge_numpy():\n    assert merge_intervals(np.array([[1, 3], [2, 4]])) == [[1, 4]]\n")
    assert trl_rewards(scorer, row, [SKIP_ROW["solution"], "def merge_intervals(x):\n    return x\n"]) == [None, None]


# -- no forged verdict: what would pass the official single process fails here ---------------------------------------


def test_the_program_cannot_forge_a_pass(scorer):
    # Each of these would pass the official harness (its program runs in pytest's process) and fails here:
    # - os._exit(0) in the middle of a test: pytest's process exits 0 -> officially "Pass"; here -1.0 (error).
    exits = "import os\n\ndef merge_intervals(intervals):\n    os._exit(0)\n"
    # - raising unittest.SkipTest (or pytest's own Skipped, here a class named like it) from the program: officially
    #   pytest reports every test that calls it skipped and exits 0 -> "Pass"; here the program's exception is never
    #   one of the test runners' (a class the judge makes for it): it fails test_merge_basic, the two xfail tests take
    #   it as the failure they expect (as they would any exception), the three skipped before calling it pass -> 5/6,
    #   what a program raising ValueError gets.
    skips = "import unittest\n\ndef merge_intervals(intervals):\n    raise unittest.SkipTest('not today')\n"
    fake_skip = ("class Skipped(BaseException):\n    pass\n\nSkipped.__module__ = '_pytest.outcomes'\n\n"
                 "def merge_intervals(intervals):\n    raise Skipped('skip')\n")
    # - writing result records to every descriptor: the judge's result channel is not among them, and the bytes
    #   that reach the worker's answer pipe are garbage to the judge, which ends the run: -1.0 (error).
    records = ("import os\n\ndef merge_intervals(intervals):\n    for fd in range(3, 256):\n        try:\n"
               "            os.write(fd, b'{\"i\": 0, \"ok\": true}\\n{\"done\": 6}\\n')\n        except OSError:\n"
               "            pass\n    return []\n")
    rewards = trl_rewards(scorer, SKIP_ROW, [SKIP_ROW["solution"], exits, skips, fake_skip, records])
    assert rewards == [1.0, -1.0, pytest.approx(5 / 6), pytest.approx(5 / 6), -1.0], rewards
    raises = "def merge_intervals(intervals):\n    raise ValueError('no')\n"
    assert trl_rewards(scorer, SKIP_ROW, [raises]) == [pytest.approx(5 / 6)]
    # - resetting the print mock after printing (print.reset_mock()): officially the program's print IS the mock,
    #   reset_mock() erases the call and assert_not_called() passes -> "Pass"; here the program may call the test's
    #   mocks but never reach their methods: 0.0.
    resets = ("def format_report(items):\n    text = \"\\n\".join(f\"{i}. {x}\" for i, x in enumerate(items, 1))\n"
              "    print(text)\n    print.reset_mock()\n    return text\n")
    # - patching pytest in its own process: sys.modules['pytest'] and _pytest.outcomes do not exist where the tests
    #   run; the program's print still reaches the test's mock: 0.0.
    patches_pytest = ("import sys, types\nsys.modules['pytest'] = types.ModuleType('pytest')\n\n"
                      "def format_report(items):\n    print('x')\n"
                      "    return \"\\n\".join(f\"{i}. {x}\" for i, x in enumerate(items, 1))\n")
    assert trl_rewards(scorer, PRINT_ROW, [PRINT_ROW["solution"], resets, patches_pytest]) == [1.0, 0.0, 0.0]


# -- rule 16: the judge's own start-up and time are never charged to the program ---------------------------------------

CACHE_ROW = kodcode_row(
    "Evol_30011_I",
    "Implement TTLCache(ttl) with set(key, value) and get(key), where get returns None once ttl seconds have passed "
    "since the key was set.",
    "import time\n\nclass TTLCache:\n    def __init__(self, ttl):\n        self.ttl = ttl\n        self.data = {}\n\n"
    "    def set(self, key, value):\n        self.data[key] = (value, time.monotonic() + self.ttl)\n\n"
    "    def get(self, key):\n        value, expires = self.data.get(key, (None, 0.0))\n"
    "        return value if time.monotonic() < expires else None\n",
    "import time\nimport pytest\nfrom solution import TTLCache\n\n\n"
    "def _brute_force_inversions(values):\n    return sum(1 for i in range(len(values)) for j in range(i + 1, len(values))\n"
    "               if values[i] > values[j])\n\n\n"
    "REFERENCE = _brute_force_inversions([(i * 7919) % 6007 for i in range(6000)])\n"
    "SHARED = TTLCache(ttl=60)\nSHARED.set(\"reference\", REFERENCE)\n\n\n"
    "def test_shared_cache():\n    assert SHARED.get(\"reference\") == REFERENCE\n\n\n"
    "def test_expiry():\n    cache = TTLCache(ttl=0.3)\n    cache.set(\"a\", 1)\n    assert cache.get(\"a\") == 1\n"
    "    time.sleep(0.8)\n    assert cache.get(\"a\") is None\n",
    "TTLCache", "(ttl)")


def test_the_judges_own_time_is_never_charged_to_the_program(own_sandbox_root):
    # Official: one pytest process under a 30 s limit for the whole run; importing pytest, collecting the file (its
    # module-level brute-force reference, ~1 s) and the test's own time.sleep(0.8) are pytest's time, not a limit of
    # the program's. The cache passes both tests: exit 0, Pass -> 1.0. A cache that never expires fails test_expiry:
    # Fail, 1/2 -> 0.5. Here each test gives the program 0.5 s, less than the judge alone spends.
    config = SandboxConfig(sandbox_pool_size=1, sandbox_test_timeout=0.5,
                           sandbox_backend_options={"root_dir": str(own_sandbox_root)})
    never_expires = ("class TTLCache:\n    def __init__(self, ttl):\n        self.data = {}\n\n"
                     "    def set(self, key, value):\n        self.data[key] = value\n\n"
                     "    def get(self, key):\n        return self.data.get(key)\n")
    with Scorer.from_config(config) as scorer:
        assert trl_rewards(scorer, CACHE_ROW, [CACHE_ROW["solution"], never_expires]) == [1.0, 0.5]
        # A program that really is slow at module level in the test file times out, in plain words.
        slow = CACHE_ROW["solution"].replace("self.ttl = ttl", "self.ttl = ttl\n        while ttl == 60:\n            pass")
        result = scorer.score([Task.from_row(CACHE_ROW)], [as_assistant(slow)])[0]
        assert result.status == "timeout" and "Timeout" not in (result.error or ""), result


# -- the test file as KodCode's pipeline writes it: `from solution import *` first -----------------------------------

NO_IMPORT_ROW = kodcode_row(
    "Algorithm_30013_C",
    "Write integer_sqrt(n) returning the largest integer whose square is at most n.",
    "def integer_sqrt(n):\n    r = int(n ** 0.5)\n    while r * r > n:\n        r -= 1\n"
    "    while (r + 1) * (r + 1) <= n:\n        r += 1\n    return r\n",
    "import pytest\n\n\ndef test_small():\n    assert integer_sqrt(15) == 3\n    assert integer_sqrt(16) == 4\n\n\n"
    "def test_large():\n    assert integer_sqrt(10 ** 18) == 10 ** 9\n",
    "integer_sqrt", "(n)")

CLASS_ONLY_ROW = kodcode_row(
    "Algorithm_30014_C",
    "Implement Stack with push, pop and is_empty.",
    "class Stack:\n    def __init__(self):\n        self.items = []\n\n    def push(self, x):\n"
    "        self.items.append(x)\n\n    def pop(self):\n        return self.items.pop()\n\n"
    "    def is_empty(self):\n        return not self.items\n",
    "class TestStack:\n    def test_push_pop(self):\n        s = Stack()\n        s.push(1)\n        s.push(2)\n"
    "        assert s.pop() == 2\n\n    def test_empty(self):\n        assert Stack().is_empty()\n",
    "Stack", "()")


def test_a_test_without_its_own_import_runs_as_the_pipeline_writes_it(scorer):
    # KodCode's pipeline writes test_solution.py as "from solution import *\n\n" + the row's test (KodCode-AI/kodcode
    # step2.2_gen_unit_tests.py; 716 of its 1,648 demo tests have no solution import of their own): a correct
    # program passes (exit 0: Pass -> 1.0), a wrong one fails the test it gets wrong. A file of Test classes alone,
    # with no import, is a KodCode row too.
    off_by_one = "def integer_sqrt(n):\n    return int(n ** 0.5) + 1\n"
    assert trl_rewards(scorer, NO_IMPORT_ROW, [NO_IMPORT_ROW["solution"], off_by_one]) == [1.0, 0.0]
    no_pop = CLASS_ONLY_ROW["solution"].replace("return self.items.pop()", "return self.items[0]")
    assert trl_rewards(scorer, CLASS_ONLY_ROW, [CLASS_ONLY_ROW["solution"], no_pop]) == [1.0, 0.5]
