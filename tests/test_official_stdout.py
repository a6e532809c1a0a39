"""Official verdicts of the stdout judges (issue 26, rules 2, 3, 4, 11 and 12), through the reward as TRL calls it.

Each case gives a published row (field for field as its dataset publishes it), programs, and the reward the official
harness's verdict makes, read from that harness's source (named at each row). Where the official harness pays a wrong
program, trl-sandbox keeps the stricter verdict: those cases say "departure".

Sources read:
- APPS: ``hendrycks/apps`` ``eval/testing_util.py`` (``run_test``, ``custom_compare_``, ``stripped_string_compare``;
  ``timeout = 4`` per test), ``eval/test_one_solution.py``.
- TACO: ``FlagOpen/TACO`` ``metrics/testing_util.py`` (``execute_std_code``, ``compare_std_results``; ``TIMEOUT = 4``).
- open-r1 Codeforces: ``guipenedo/piston`` ``packages/codeforces/1.0.0/run`` and ``huggingface/open-r1``
  ``src/open_r1/utils/competitive_programming/cf_scoring.py`` (a test passes when the run exits 0 and prints ``1``).
- code_contests: ``google-deepmind/code_contests`` ``execution/tester_sandboxer.cc`` (``OutputsMatch``).
"""

from __future__ import annotations

import json

import pytest

from tests._official import computing_echo, trl_rewards
from trl_sandbox import SandboxConfig, Scorer, Task
from trl_sandbox.formats import detect_format
from trl_sandbox.harness.compare import JUDGES, same_output


def apps_row(inputs, outputs, problem_id=4000):
    """A ``codeparrot/apps`` row: its seven columns."""
    return {
        "problem_id": problem_id,
        "question": "Read the input and print the answer.",
        "solutions": json.dumps(["print(input())"]),
        "input_output": json.dumps({"inputs": inputs, "outputs": outputs}),
        "difficulty": "introductory",
        "url": "https://codeforces.com/problemset/problem/1/A",
        "starter_code": "",
    }


def taco_row(inputs, outputs, time_limit="1 seconds"):
    """A ``BAAI/TACO`` row: its seventeen columns (no id column: TACO publishes none)."""
    return {
        "question": "Read the input and print the answer.",
        "solutions": json.dumps(["print(input())"]),
        "starter_code": "",
        "input_output": json.dumps({"inputs": inputs, "outputs": outputs}),
        "difficulty": "EASY",
        "raw_tags": "['implementation']",
        "name": None,
        "source": "codeforces",
        "tags": "['Implementation']",
        "skill_types": "[]",
        "url": "https://codeforces.com/problemset/problem/1/A",
        "Expected Auxiliary Space": None,
        "time_limit": time_limit,
        "date": "2010-03-13",
        "picture_num": 0,
        "memory_limit": "256 megabytes",
        "Expected Time Complexity": None,
    }


def codeforces_row(tests, checker=None, problem="A"):
    """An ``open-r1/codeforces`` row: its twenty-seven columns."""
    return {
        "id": f"4/{problem}",
        "aliases": None,
        "contest_id": "4",
        "contest_name": "Codeforces Beta Round 4",
        "contest_type": "CF",
        "contest_start": 1268395200,
        "contest_start_year": 2010,
        "index": problem,
        "time_limit": 1.0,
        "memory_limit": 64.0,
        "title": "Split",
        "description": "Read the input and print the answer.",
        "input_format": "One integer n.",
        "output_format": "The answer.",
        "interaction_format": None,
        "note": None,
        "examples": [tests[0]],
        "editorial": None,
        "rating": 800,
        "tags": ["math"],
        "testset_size": len(tests),
        "official_tests": tests,
        "official_tests_complete": True,
        "input_mode": "stdio",
        "generated_checker": checker,
        "executable": True,
        "generated_tests": 0,
    }


def code_contests_row(inputs, outputs):
    """A ``deepmind/code_contests`` row: its columns."""
    return {
        "name": "1_A. Echo",
        "description": "Read the input and print the answer.",
        "public_tests": {"input": inputs[:1], "output": outputs[:1]},
        "private_tests": {"input": inputs[1:], "output": outputs[1:]},
        "generated_tests": {"input": [], "output": []},
        "source": 2,
        "difficulty": 7,
        "solutions": {"language": [3], "solution": ["print(input())"]},
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


def printing(text):
    """A program that reads its input and prints ``text`` exactly (no newline added)."""
    return f"import sys\nsys.stdin.read()\nsys.stdout.write({text!r})"


# -- rule 2: integers are compared as integers; each format keeps its own official judge -------------------------

BIG = "500000003"

RULE_2 = [
    # (row, program, official reward, why)
    (apps_row(["1\n"], [BIG + "\n"]), printing(BIG + "\n"), 1.0,
     "APPS: the same text"),
    (apps_row(["1\n"], [BIG + "\n"]), printing("500000003.0\n"), 1.0,
     "APPS: one number a line, np.allclose(500000003.0, 500000003): the same value, paid"),
    (apps_row(["1\n"], [BIG + "\n"]), printing("500001000.0\n"), 0.0,
     "departure: APPS pays it (np.allclose: |997| <= 1e-8 + 1e-5 * 500000003); not the integer"),
    (apps_row(["1\n"], [BIG + "\n"]), printing("500000004\n"), 0.0,
     "departure: APPS pays it (np.allclose, relative 1e-5); a different integer is wrong"),
    (apps_row(["1\n"], ["0.0005\n"]), printing("0.000500000\n"), 1.0,
     "APPS: np.allclose(0.0005, 0.0005)"),
    (apps_row(["1\n"], ["0.0005\n"]), printing("0.000495\n"), 0.0,
     "APPS: np.allclose fails (|5e-6| > 1e-8 + 1e-5 * 0.0005); token sets differ; round(., 3): 0.0 != 0.001"),
    (apps_row(["1\n"], ["1 2\n"]), printing("1 2\n"), 1.0,
     "APPS: the same text"),
    (apps_row(["1\n"], ["1 2\n"]), printing("1\n2\n"), 0.0,
     "APPS: lines count: ['1', '2'] is not ['1 2']; float('1 2') fails; {{1}, {2}} is not {{1, 2}}"),
    (apps_row(["1\n"], ["1 2\n"]), printing("2 1\n"), 0.0,
     "departure: APPS pays it (check 5 compares each line's tokens as a set); order counts here"),
    (apps_row(["1\n"], ["0.1234 5\n"]), printing("0.1231 5\n"), 0.0,
     "departure: APPS pays it (check 6 rounds every number to 3 decimals); 0.1231 is not 0.1234 within 1e-5"),
    (apps_row(["1\n"], ["0.25 5\n"]), printing("0.250000 5\n"), 1.0,
     "APPS: check 6, every token a number, rounded to 3 decimals, equal"),
    (apps_row(["1\n"], ["1\n2\n"]), printing("1\n\n2 \n"), 1.0,
     "APPS: check 4, the non-empty lines are one number each: np.allclose([1, 2], [1, 2])"),
    (apps_row(["1\n"], ["a b\nc\n"]), printing("a  b\n\nc \n"), 1.0,
     "APPS: check 5, each non-empty line's tokens equal"),
    (apps_row(["1\n"], ["YES 0.5\n"]), printing("YES 0.5000001\n"), 0.0,
     "APPS: not the text; float('YES 0.5') fails; token sets differ; float('YES') fails check 6"),
    (taco_row(["1\n"], [BIG + "\n"]), printing(BIG + "\n"), 1.0,
     "TACO: stripped_string_compare"),
    (taco_row(["1\n"], [BIG + "\n"]), printing("500000003.0\n"), 0.0,
     "TACO: stdout is text: '500000003.0' != '500000003'; float('.') fails its per-character check"),
    (taco_row(["1\n"], [BIG + "\n"]), printing("500001000.0\n"), 0.0,
     "TACO: not the same text"),
    (taco_row(["1\n"], ["0.0005\n"]), printing("0.000495\n"), 0.0,
     "TACO: not the same text"),
    (taco_row(["1\n"], ["0.5\n"]), printing("0.50\n"), 0.0,
     "TACO: not the same text (TACO is not APPS: its stdout is never read as numbers)"),
    (taco_row(["1\n"], ["1 2\n"]), printing("1\n2\n"), 0.0,
     "TACO: not the same text; the stdout's tokens' character sets {{1}, {2}} are not the line's {{1, 2}}"),
    (taco_row(["1\n"], ["1\n2\n"]), printing("2 1\n"), 0.0,
     "departure: TACO pays it (check 5: the sets of each token's characters, {{2}, {1}}, equal {{1}, {2}})"),
    (taco_row(["1\n"], ["1 2\n"]), printing("  1 2\r\n\n"), 1.0,
     "TACO: universal newlines, then stripped_string_compare"),
    (code_contests_row(["1\n"], [BIG + "\n"]), printing("500000003.000001\n"), 0.0,
     "departure: code_contests pays it (ValuesMatch reads both as doubles: |1e-6| < 1e-5); not the integer"),
    (code_contests_row(["1\n"], [BIG + "\n"]), printing("500000003.0\n"), 1.0,
     "code_contests: both doubles, equal"),
    (code_contests_row(["1\n"], ["1 4\n"]), printing("1\xa04\n"), 0.0,
     "code_contests: SplitAndLowercase splits on ' \\n\\t\\r\\v' only: '1\\xa04' is one token"),
]


@pytest.mark.parametrize(("row", "program", "official", "why"), RULE_2, ids=[w[:40] for *_, w in RULE_2])
def test_rule_2_integers_and_each_formats_own_judge(scorer, row, program, official, why):
    assert trl_rewards(scorer, row, [program]) == [official], why


def test_rule_2_taco_rows_are_detected_as_taco():
    # A TACO row as published is TACO's, not APPS's, without task_format=; APPS rows stay APPS's.
    assert detect_format(taco_row(["1\n"], ["1\n"])) == "taco"
    assert detect_format(apps_row(["1\n"], ["1\n"])) == "apps"


# -- rule 11: TACO's and APPS's fixed per-test timeout ------------------------------------------------------------


@pytest.fixture(scope="module")
def long_scorer(sandbox_root):
    config = SandboxConfig(sandbox_pool_size=2, sandbox_test_timeout=10.0, sandbox_completion_timeout=30.0,
                           sandbox_time_limit_factor=1.0, sandbox_backend_options={"root_dir": str(sandbox_root)})
    with Scorer.from_config(config) as s:
        yield s


def test_rule_11_taco_and_apps_give_each_test_their_fixed_timeout(long_scorer):
    # TACO (metrics/testing_util.py): subprocess.run(..., timeout=TIMEOUT), TIMEOUT = 4, whatever the row's
    # time_limit says: a 1 s program passes on a "0.5 seconds" row; one that runs past 4 s times out (-1: not passed).
    taco = taco_row(["7\n"], ["7\n"], time_limit="0.5 seconds")
    # APPS (eval/testing_util.py): signal.alarm(timeout), timeout = 4, per test; APPS rows give no limit.
    apps = apps_row(["7\n"], ["7\n"])
    taco_rewards = trl_rewards(long_scorer, taco, [computing_echo(1), computing_echo(30)])
    apps_rewards = trl_rewards(long_scorer, apps, [computing_echo(1), computing_echo(30)])
    assert taco_rewards[0] == 1.0 and apps_rewards[0] == 1.0
    assert taco_rewards[1] <= 0.0 and apps_rewards[1] <= 0.0


# -- rule 3: open-r1 Codeforces rows without a checker ------------------------------------------------------------

YES_NO = codeforces_row([{"input": "4\n", "output": "YES\n"}, {"input": "3\n", "output": "NO\n"}], problem="B")
SPLIT = codeforces_row([{"input": "5\n", "output": "1 4\n"}], problem="C")


def answering(yes, no):
    return f"n = int(input())\nprint({yes!r} if n % 2 == 0 else {no!r})"


RULE_3 = [
    # piston's run: normalize_output upper-cases the whole words yes/no (sed 's/\b(yes)\b/YES/ig'), turns every
    # newline into a space, squeezes [:space:] runs (ASCII whitespace) into one space and trims; then diff -b.
    (YES_NO, answering("YES", "NO"), 1.0, "the same text"),
    (YES_NO, answering("yes", "no"), 1.0, "yes/no in any case"),
    (YES_NO, answering("yEs", "No"), 1.0, "yes/no in any case"),
    (YES_NO, answering("NO", "YES"), 0.0, "the wrong words"),
    (YES_NO, answering("yess", "noo"), 0.0, "not the whole words yes/no"),
    (SPLIT, printing("1 4\n"), 1.0, "the same text"),
    (SPLIT, printing("1\n4\n"), 1.0, "newlines become spaces: line structure does not count"),
    (SPLIT, printing("  1 \t  4  \n\n"), 1.0, "whitespace runs squeezed, trimmed"),
    (SPLIT, printing("1\xa04\n"), 0.0, "NBSP is not [:space:] for tr (bytes c2 a0): one token '1\\xa04'"),
    (SPLIT, printing("1\x1c4\n"), 0.0, "\\x1c is not [:space:] for tr: one token"),
    (SPLIT, printing("14\n"), 0.0, "one token '14'"),
]


@pytest.mark.parametrize(("row", "program", "official", "why"), RULE_3, ids=[w[:40] for *_, w in RULE_3])
def test_rule_3_codeforces_without_a_checker(scorer, row, program, official, why):
    assert trl_rewards(scorer, row, [program]) == [official], why


# -- rule 4: open-r1 checkers get what the official runner gives them ---------------------------------------------

FILES_CHECKER = """import os
import sys
from pathlib import Path

inp, ans, out = sys.argv[1:4]
text = Path(inp).read_text()
answer = open(ans, "rb").read()
with open(out, "r+") as f:
    output = f.read()
ok = (
    os.path.getsize(out) == len(output.encode())
    and os.path.getsize(ans) == len(answer)
    and "\\r" not in text and b"\\r" not in answer
    and b"\\n\\n" not in answer and "\\n\\n" not in output and not output.startswith("\\n")
    and output.encode() == answer
    and int(text) == sum(map(int, output.split()))
)
print(100 if ok else 0)
"""

RULE_4_TESTS = [{"input": "5\r\n", "output": "1 4\r\n\r\n"}, {"input": "9\r\n", "output": "\r\n4 5\r\n"}]


def test_rule_4_checkers_read_real_files_as_the_runner_writes_them(scorer):
    # piston's run: the input's '\r' at line ends removed (sed -i 's/\r$//'); the answer read by $(cat ...), echoed
    # back, its '\r' at line ends and its empty lines removed; the program's empty lines removed (sed '/^$/d');
    # files on disk (mktemp, correct_output.txt); the checker's stdout with its whitespace removed must be "1" or
    # "100", and open-r1 needs the run's exit code 0 (the checker's).
    row = codeforces_row(RULE_4_TESTS, checker=FILES_CHECKER, problem="D")
    exact = "n = int(input())\nprint(*((1, 4) if n == 5 else (4, 5)))"
    blank_lines = "n = int(input())\nprint()\nprint(*((1, 4) if n == 5 else (4, 5)))\nprint()\nprint()"
    wrong = "n = int(input())\nprint(2, n - 2)"
    assert trl_rewards(scorer, row, [exact, blank_lines, wrong]) == [1.0, 1.0, 0.0]


@pytest.mark.parametrize(("checker", "official"), [
    ("print(1)", 1.0),                                # "1"
    ("print(' 1 0 0 ')", 1.0),                        # tr -d '[:space:]' gives "100"
    ("print(1)\nraise SystemExit(1)", 0.0),           # open-r1: result["run"]["code"] == 0 is needed
    ("print(10)", 0.0),                               # neither "1" nor "100"
    ("import sys\nsys.stdout.write('1')", 1.0),
])
def test_rule_4_what_a_checker_may_answer(scorer, checker, official):
    # Each checker accepts the jury's answer and rejects an empty output (else its self-test quarantines it: issue
    # 37); what it answers for another output ("2 3") is the case under test.
    checker = ("import sys\nout = open(sys.argv[3]).read().split()\n"
               "if not out or out == open(sys.argv[2]).read().split():\n    print(1 if out else 0)\n"
               "    raise SystemExit\n") + checker
    row = codeforces_row([{"input": "5\n", "output": "1 4\n"}], checker=checker, problem="E")
    assert trl_rewards(scorer, row, [printing("2 3\n")]) == [official]


def test_rule_4_the_program_cannot_reach_the_checkers_files(scorer):
    # The program writes every file name a checker could read into its directory, and a thread of it keeps
    # looking for the checker's files after its output is final: the checker reads its own, never those.
    checker = ("import sys\nans, out = (open(p).read().split() for p in sys.argv[2:4])\n"
               "print(1 if ans == out else 0)")
    row = codeforces_row([{"input": "5\n", "output": "1 4\n"}, {"input": "7\n", "output": "3 4\n"}],
                         checker=checker, problem="F")
    forger = (
        "import os, threading, time\n"
        "for name in ('input.txt', 'correct_output.txt', 'solution_output.txt', 'answer.txt', 'output.txt'):\n"
        "    open(name, 'w').write('2 2')\n"
        "def forge():\n"
        "    end = time.time() + 2\n"
        "    while time.time() < end:\n"
        "        for base in ('/tmp', os.getcwd(), os.path.dirname(os.getcwd())):\n"
        "            try:\n"
        "                for d in os.listdir(base):\n"
        "                    for f in ('correct_output.txt', 'solution_output.txt'):\n"
        "                        try:\n"
        "                            open(os.path.join(base, d, f), 'w').write('2 2')\n"
        "                        except OSError:\n"
        "                            pass\n"
        "            except OSError:\n"
        "                pass\n"
        "threading.Thread(target=forge, daemon=True).start()\n"
        "input()\nprint(2, 2)\n"
    )
    assert trl_rewards(scorer, row, [forger]) == [0.0]


# -- rule 12: the judge never crashes on the program's output -----------------------------------------------------

HOSTILE = ["--5", "\u00b2", "9" * 5000, "nan", "inf", "1e99999", "+-3", "-0x5", "sNaN", "5" * 5000 + ".5", "\u0665"]
#: The judges that read ``\u0665`` (ARABIC-INDIC DIGIT FIVE) as 5, as their official harness does: Python's
#: ``Decimal`` (LiveCodeBench's ``grade_stdio``) and ``float`` (APPS's ``np.allclose`` check).
READS_UNICODE_DIGITS = {"decimal", "apps", "apps-row"}


def hostile_program(text):
    """Prints ``text`` on the first test's input, the right answers on the others."""
    return (f"import sys\nn = input().strip()\nif n == '1':\n    sys.stdout.write({text!r} + '\\n')\n"
            f"elif n == '2':\n    print(7)\nelse:\n    print('1' * 5000)")


RAW_BYTES = ("import sys\nn = input().strip()\nif n == '1':\n    sys.stdout.buffer.write(b'\\xff\\xfe5\\n')\n"
             "elif n == '2':\n    print(7)\nelse:\n    print('1' * 5000)")
INPUTS, OUTPUTS = ["1\n", "2\n", "3\n"], ["5\n", "7\n", "1" * 5000 + "\n"]
HOSTILE_ROWS = {
    **{mode: {"task_id": f"hostile-{mode}", "inputs": INPUTS, "outputs": OUTPUTS, "compare": mode}
       for mode in JUDGES},
    "apps-row": apps_row(INPUTS, OUTPUTS),
    "taco-row": taco_row(INPUTS, OUTPUTS),
    "code_contests-row": code_contests_row(INPUTS, OUTPUTS),
    "codeforces-row": codeforces_row([{"input": i, "output": o} for i, o in zip(INPUTS, OUTPUTS)], problem="G"),
}


@pytest.mark.parametrize("name", list(HOSTILE_ROWS))
def test_rule_12_hostile_output_is_a_wrong_answer_on_that_test(scorer, name):
    # Every official judge fails such a test (a text that is not the expected one, or a number that is not its
    # value) and scores the others: 2 of 3 tests pass, never an error of the judge.
    programs = [hostile_program(t) for t in HOSTILE] + [RAW_BYTES, hostile_program("5")]
    expected = [2 / 3] * (len(HOSTILE) - 1) + [1.0 if name in READS_UNICODE_DIGITS else 2 / 3, 2 / 3, 1.0]
    assert trl_rewards(scorer, HOSTILE_ROWS[name], programs) == [pytest.approx(r) for r in expected]


@pytest.mark.parametrize("mode", JUDGES)
def test_rule_12_same_output_never_raises(mode):
    texts = [*HOSTILE, "\ufffd", "1" * 5000, "-" * 100, "1e-99999", "Infinity", "-inf", "1_000", "\x00", ""]
    for got in texts:
        for want in texts + ["5", "0.5", "YES"]:
            for judge in ({"mode": mode}, {"mode": mode, "ignore_case": True}, {"mode": mode, "integers": "exact"},
                          {"mode": mode, "tolerance": 1e-6, "absolute_only": True}):
                assert same_output(got + "\n", want + "\n", judge) in (True, False)


# -- issue 36, item 12: a tolerance the row or the user declares covers expected integers ---------------------------

# A real-valued problem judged as Kattis judges it: problemtools' default validator
# (support/default_validator/default_validator.cc) with `float_tolerance 1e-4` reads every judge token that parses as
# a double ("1" included) as a number, and accepts the team's number within 1e-4 absolutely or relatively; other
# tokens compare as text. Written as a trl-sandbox stdin/stdout row with its declared judge.
KATTIS_RATIO = {"task_id": "kattis-style-ratio", "inputs": ["49 49\n", "5 2\n", "1 3\n"],
                "outputs": ["1\n", "2.5\n", "0.333333333\n"], "time_limit": 1.0,
                "compare": {"mode": "float", "tolerance": 1e-4}}
RATIO = "a, b = map(float, input().split())\nprint(a * (1.0 / b))\n"  # 49 * (1 / 49) prints 0.9999999999999999


def test_item_12_a_declared_tolerance_covers_expected_integers(scorer):
    # Kattis: 0.9999999999999999 for 1 is within 1e-4: accepted, like 2.5 and 0.3333333333333333; a ratio off by 1e-3
    # is not. "integers": "exact" declares the other rule: test 1 fails.
    off = RATIO.replace("1.0 / b", "1.001 / b")
    exact = {**KATTIS_RATIO, "compare": {**KATTIS_RATIO["compare"], "integers": "exact"}}
    assert trl_rewards(scorer, KATTIS_RATIO, [RATIO, off]) == [1.0, 0.0]
    assert trl_rewards(scorer, exact, [RATIO]) == [pytest.approx(2 / 3)]


def test_item_12_a_datasets_own_float_judge_keeps_the_integer_rule(scorer):
    # code_contests' OutputsMatch would pay it (|1e-16| < 1e-5); its expected integers stay integers here (the
    # departure of rule 2), while the same judge declared by the user (sandbox_compare) covers them.
    row = code_contests_row(["49 49\n"], ["1\n"])
    assert trl_rewards(scorer, row, [RATIO]) == [0.0]
    task = Task.from_row(row)
    assert task.judge_spec()["integers"] == "exact"
    declared = {"mode": "float", "tolerance": 1e-5, "absolute_only": True, "ignore_case": True}
    assert task.judge_spec(declared) == declared
    assert same_output("0.9999999999999999\n", "1\n", task.judge_spec(declared))
