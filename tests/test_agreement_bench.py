"""The official verdict rules restated in benchmarks/agreement.py give, on known cases, the verdict read from each
harness's source (hendrycks/apps eval/testing_util.py, FlagOpen/TACO metrics/testing_util.py, LiveCodeBench
lcb_runner/evaluation/testing_util.py, KodCode-AI/kodcode pipeline/run_test.sh)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import agreement  # noqa: E402
import agreement_rows  # noqa: E402
from agreement import (  # noqa: E402
    allclose,
    apps_program,
    apps_stdout_ok,
    contest_call_ok,
    lcb_call_ok,
    lcb_program,
    lcb_stdout_ok,
    taco_programs,
    taco_stdout_ok,
)


def apps(stdout: str, expected: str) -> bool:
    return apps_stdout_ok(stdout.splitlines(), expected)


@pytest.mark.parametrize("stdout, expected, want_apps, want_taco, want_lcb", [
    ("6\n", "6\n", True, True, True),
    # np.allclose (relative 1e-5) in APPS only; Decimal equality in LiveCodeBench.
    ("500000000.0\n", "500000003\n", True, False, False),
    ("6.0\n", "6\n", True, False, True),
    ("0.000495\n", "0.0005\n", False, False, False),
    ("0.000500000\n", "0.0005\n", True, False, True),
    # A space for a line break: TACO's set of token character sets accepts one-character tokens only.
    ("1 2\n", "1\n2\n", False, True, False),
    ("10 20\n", "10\n20\n", False, False, False),
    # Lines in another order: APPS compares sets of lines.
    ("30\n10\n", "10\n30\n", True, False, False),
    # Trailing spaces and blank lines: TACO compares the whole text stripped.
    ("10 \n30 \n\n", "10\n30\n", True, False, True),
    ("10\n\n30\n", "10\n30\n", True, False, False),
    ("yes\n", "YES\n", False, False, False),
])
def test_stdout_rules(stdout: str, expected: str, want_apps: bool, want_taco: bool, want_lcb: bool) -> None:
    assert apps(stdout, expected) is want_apps
    assert taco_stdout_ok(stdout, expected) is want_taco
    assert lcb_stdout_ok(stdout, expected) is want_lcb


def test_list_outputs_are_joined() -> None:
    assert apps("10\n30\n", ["10", "30"]) and taco_stdout_ok("10\n30\n", ["10", "30"])


def test_allclose_is_numpy_allclose() -> None:
    assert allclose([1.0], [1.0 + 1e-9])
    assert not allclose([0.000495], [0.0005])
    assert allclose([2.0], [2.0, 2.0])  # numpy broadcasts a one-element operand
    assert not allclose([float("nan")], [float("nan")])
    with pytest.raises(ValueError):
        allclose([1.0, 2.0], [1.0, 2.0, 3.0])


def test_call_rules() -> None:
    assert contest_call_ok((1, 3), [[1, 3]])  # tuple as list, the expected value unwrapped
    assert contest_call_ok([1, 3], [[1, 3]]) and contest_call_ok([[1, 3]], [[1, 3]])
    assert contest_call_ok([(0, 3), (1, 2)], [[[0, 3], [1, 2]]])
    assert contest_call_ok([1.0, 3.0], [[1, 3]])
    assert not contest_call_ok(0.15000000000000002, [0.15])  # no tolerance
    assert lcb_call_ok((1, 2), [1, 2]) and lcb_call_ok([1.0, 2.0], [1, 2])
    assert not lcb_call_ok([[1, 2]], [1, 2])  # no unwrapping


def test_program_forms() -> None:
    program = 'import sys\ndef main():\n    print(1)\nif __name__ == "__main__":\n    main()\n'
    wrapped = apps_program(program)
    assert "\nimport sys\nstdin = sys.stdin\nstdout = sys.stdout\ndef code():\n\tdef main():\n" in wrapped
    assert '\tif __name__ == "__main__":' in wrapped
    plain, taco_wrapped = taco_programs("from heapq import *\nn = 1\nprint(n)\n")
    assert plain.endswith("\nstdin = sys.stdin\nstdout = sys.stdout\nn = 1\nprint(n)\n\n")
    assert "def code():\n\tn = 1\n" in taco_wrapped
    lcb = lcb_program(program)
    assert "__name__" not in lcb and "def wrapped_function():" in lcb and lcb.rstrip().endswith("main()")


def test_rows_are_published_fields() -> None:
    fields = {
        "apps": {"problem_id", "question", "solutions", "input_output", "difficulty", "url", "starter_code"},
        "taco": {"question", "solutions", "starter_code", "input_output", "difficulty", "raw_tags", "name", "source",
                 "tags", "skill_types", "url", "Expected Auxiliary Space", "time_limit", "date", "picture_num",
                 "memory_limit", "Expected Time Complexity"},
        "livecodebench": {"question_title", "question_content", "platform", "question_id", "contest_id",
                          "contest_date", "starter_code", "difficulty", "public_test_cases", "private_test_cases",
                          "metadata"},
        "kodcode": {"question", "solution", "test", "test_info", "gpt_pass_sequence", "gpt_pass_trial_num",
                    "gpt_difficulty", "gpt_pass_percentage", "trials", "chosen_trial", "metadata",
                    "benchmark_similarity", "benchmark_instruction", "benchmark_task_id", "filter_reason",
                    "conversation_id", "style", "subset", "question_id"},
    }
    for entry in agreement_rows.entries():
        assert set(entry["row"]) == fields[entry["dataset"]]
    lcb = [e["row"] for e in agreement_rows.entries(("livecodebench",))]
    assert all(agreement.lcb_spec(row)["inputs"] for row in lcb)


def test_kodcode_exit_status() -> None:
    """Skipped and xfailed tests leave pytest's status 0 (passed); a failing test does not."""
    test = ("import pytest\nfrom solution import f\n\ndef test_ok():\n    assert f() == 1\n\n"
            "@pytest.mark.skip\ndef test_skipped():\n    assert f() == 2\n\n"
            "@pytest.mark.xfail\ndef test_xfail():\n    assert f() == 3\n")
    assert agreement.kodcode_official("def f():\n    return 1\n", test)["passed"]
    assert not agreement.kodcode_official("def f():\n    return 0\n", test)["passed"]


# -- --kodcode-demo: KodCode's test directories against their recorded verdicts ----------------------------------------
# The pairs below are written for these tests, in the layout and schema of KodCode-AI/kodcode's demo/ folder.

_DOUBLE = 'def double(x):\n    """Twice x."""\n    return 2 * x'
_DOUBLE_TEST = "from solution import double\n\ndef test_double():\n    assert double(4) == 8\n    assert double(0) == 0"


def _trial(folder: Path, data: dict, program: str, test: str, result: str) -> None:
    import json

    folder.mkdir(parents=True)
    (folder / "data.json").write_text(json.dumps(data, indent=2))
    (folder / "solution.py").write_text(program)
    (folder / "test_solution.py").write_text("from solution import *\n\n" + test)
    (folder / "run_test.sh").write_text("#!/bin/bash\ntimeout 30 pytest --cov=solution --cov-report term\n")
    (folder / "test_result.txt").write_text(result)


def _demo_tree(root: Path) -> None:
    """Two self-verification trials of one question (one passing, one failing) and one cross-verification trial whose
    recorded Pass this machine's re-run contradicts (its program squares instead of doubling)."""
    experiment = "KodCode_algorithm_3_1700000000"
    own = root / "demo" / experiment / f"self_verification_{experiment}" / "00000000"
    metadata = {"prompt_id": "00000000", "row_id": 0, "seed_ids": [7], "mode": "algorithm"}
    for n, (program, result) in enumerate([(_DOUBLE, "Pass\nCoverage: 100%\n"),
                                           ("def double(x):\n    return x + 2", "Fail\nCoverage: 100%\n")]):
        data = {"metadata": metadata, "instruction": "Write `double(x)`, twice x.", "solution_code": program,
                "test_code": _DOUBLE_TEST, "file_source": f"x_sanitized_prepared_results{n}.jsonl"}
        _trial(own / f"trial_m_{n}", data, program, _DOUBLE_TEST, result)
    cross = root / "demo" / f"SFT_{experiment}" / f"cross_verification_SFT_{experiment}" / "Algorithm_00000000_I"
    wrong = "def double(x):\n    return x * x"
    data = {"style": "instruct", "subset": "Algorithm", "question_id": "Algorithm_00000000_I",
            "question": "Write `double(x)`, twice x.", "solution": _DOUBLE, "test_code": _DOUBLE_TEST,
            "test_info": [{"function_name": "double", "parameter_list": "(x)",
                           "function_declaration": "def double(x):", "docstring": "Twice x."}],
            "gpt_pass_sequence": [1, 0], "gpt_pass_trial_num": 1, "gpt_difficulty": "medium",
            "gpt_pass_percentage": 0.5, "r1_response": f"<think>\nok\n</think>\n```python\n{wrong}\n```",
            "r1_solution": wrong, "metadata": {**metadata, "original_instruction": ""},
            "file_source": "x_prepared_results0.jsonl"}
    _trial(cross / "trial_r1_0", data, wrong, _DOUBLE_TEST, "Pass\nCoverage: 100%\n")


def test_kodcode_demo_rows(tmp_path: Path) -> None:
    """Each test directory becomes a KodCode-V1 row (its published fields; a self-verification pair's test_info and
    gpt_pass_* as KodCode's pipeline computes them), read alike from a folder and from a git directory."""
    import shutil
    import subprocess

    _demo_tree(tmp_path)
    pairs = agreement.kodcode_demo_pairs(str(tmp_path))
    assert [p["id"] for p in pairs] == ["cross/algorithm_3/Algorithm_00000000_I/trial_r1_0",
                                        "self/algorithm_3/00000000/trial_m_0", "self/algorithm_3/00000000/trial_m_1"]
    assert [p["recorded_passed"] for p in pairs] == [True, True, False]
    assert all(set(p["row"]) == set(agreement.KODCODE_FIELDS) for p in pairs)
    cross, good, bad = pairs
    assert cross["program"].endswith("x * x") and cross["row"]["solution"] == _DOUBLE
    assert bad["program"].endswith("x + 2") and bad["row"]["solution"] == bad["program"]
    assert good["row"]["test"] == _DOUBLE_TEST and good["row"]["question_id"] == "Algorithm_00000000_I"
    assert good["row"]["test_info"] == cross["row"]["test_info"]
    assert good["row"]["gpt_pass_sequence"] == [1, 0] and good["row"]["gpt_difficulty"] == "medium"
    if shutil.which("git"):
        git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
        subprocess.run([*git, "init", "-q"], check=True)
        subprocess.run([*git, "add", "demo"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", "demo"], check=True)
        assert agreement.kodcode_demo_pairs(str(tmp_path / ".git")) == pairs


def test_kodcode_test_info() -> None:
    """KodCode's extract_function_info_from_ast, as step3.2_combine_kodcode.py calls it."""
    source = ('def f(a, b=2, *rest, c, d=None, **kw):\n    """Doc."""\n    def inner(x):\n        return x\n'
              '    return inner(a)\n')
    assert agreement.kodcode_test_info(source) == [
        {"function_name": "f", "parameter_list": "(a, b=2, *rest, c, d=None, **kw)",
         "function_declaration": "def f(a, b=2, *rest, c, d=None, **kw):", "docstring": "Doc."},
        {"function_name": "inner", "parameter_list": "(x)", "function_declaration": "def inner(x):",
         "docstring": None}]
    assert agreement.kodcode_test_info("class A:\n    pass\n") is None
    assert agreement.kodcode_test_info("def broken(:\n") == []


def test_kodcode_demo_compare(tmp_path: Path, scorer) -> None:
    """Our verdicts against the recorded ones; the official harness re-run on the disagreement only, which gives our
    verdict here: an environment difference, left out of the agreement where environments match."""
    _demo_tree(tmp_path)
    results = agreement.kodcode_demo_compare(scorer, agreement.kodcode_demo_pairs(str(tmp_path)), workers=1)
    assert [(r["passed"], r["class"]) for r in results] == [(False, "environment"), (True, "agree"), (False, "agree")]
    assert results[0]["official"]["passed"] is False and results[0]["environment_differs"]
    assert results[1]["official"] is None and results[2]["official"] is None
    everything = agreement.kodcode_demo_summary(results)[-1]
    assert everything["pairs"] == "all" and everything["count"] == 3
    assert (everything["agree"], everything["disagree: environment"], everything["disagree: trl-sandbox's departure"],
            everything["paid, official re-run fails"], everything["environments match"]) == (2, 1, 0, 0, 2)
    assert everything["agreement % (environments match)"] == "100.00"
    assert everything["agreement % (all)"] == "66.67"
