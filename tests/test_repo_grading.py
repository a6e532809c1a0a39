"""The verdict on a repository task's test log, by SWE-bench 5.0's rules (trl_sandbox.repos.grading): real pytest and
unittest output from a small suite run here, wrapped as an eval script writes it; the hacks the rules exist for (a
patch that prints PASSED, skips its FAIL_TO_PASS tests, or forges the exit status), and the rewards."""

from __future__ import annotations

import subprocess
import sys

import pytest

from trl_sandbox import TaskFormatError
from trl_sandbox.repos import PARSERS, grade, recorded_exit_code, reward

SUITE = '''
import pytest, unittest
def test_fixed(): assert 1
def test_broken(): assert 1 == 2, "one - two"
@pytest.mark.skip(reason="later")
def test_skipped(): pass
@pytest.mark.xfail
def test_xfail(): assert 0
@pytest.fixture
def fixture(): raise RuntimeError("setup")
def test_error(fixture): pass
@pytest.mark.parametrize("x", ["a-b", "log(photon", "1"])
def test_param(x): assert x != "1"
class U(unittest.TestCase):
    def test_u1(self): pass
    def test_u2(self): self.fail("no")
'''


@pytest.fixture(scope="module")
def pytest_output(tmp_path_factory):
    """What ``pytest -rA`` prints for SUITE (its real output), and its exit status."""
    folder = tmp_path_factory.mktemp("suite")
    (folder / "test_suite.py").write_text(SUITE)
    done = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "test_suite.py"],
                          cwd=folder, capture_output=True, text=True, timeout=120)
    return done.stdout + done.stderr, done.returncode


def eval_log(body: str, exit_code: int, *, after: str = "") -> str:
    """A log as SWE-bench 5.0's eval script writes it (``set -x``, markers, the exit status after the end)."""
    return ("+ git checkout 0123abc test_suite.py\n+ git apply -v - <<'EOF_114329324912'\n"
            "+ : '>>>>> Start Test Output'\n>>>>> Start Test Output\n" + body +
            f"\n+ SWEBENCH_TEST_EXIT_CODE={exit_code}\n>>>>> End Test Output\n>>>>> Test Exit Code: {exit_code}\n"
            "+ git checkout 0123abc test_suite.py\n" + after)


def test_pytest_results_are_read_as_swe_bench_reads_them(pytest_output):
    body, status = pytest_output
    assert status == 1
    states = PARSERS["parse_log_pytest"](body)
    assert states["test_suite.py::test_fixed"] == "PASSED"
    assert states["test_suite.py::test_broken"] == "FAILED"  # the " - message" is not part of the id
    assert states["test_suite.py::test_xfail"] == "XFAIL" and states["test_suite.py::test_error"] == "ERROR"
    assert states["test_suite.py::test_param[log(photon]"] == "PASSED"
    assert "[1]" not in states  # "SKIPPED [1] test_suite.py:5: later" is a summary, not a test
    assert states["test_suite.py::U::test_u2"] == "FAILED"


def test_the_gold_patch_resolves_and_a_wrong_one_does_not(pytest_output):
    body, status = pytest_output
    log = eval_log(body, status)
    gold = grade(log, fail_to_pass=["test_suite.py::test_fixed", "test_suite.py::test_xfail"],
                 pass_to_pass=["test_suite.py::U::test_u1", "test_suite.py::test_param[a-b]"], log_parser="parse_log_pytest")
    assert gold.resolved and reward(gold, "all_or_nothing") == 1.0 and reward(gold, "pass_rate") == 1.0
    assert gold.exit_code == 1
    wrong = grade(log, fail_to_pass=["test_suite.py::test_fixed", "test_suite.py::test_broken"],
                  pass_to_pass=["test_suite.py::U::test_u1", "test_suite.py::U::test_u2", "test_suite.py::test_error",
                                "tests/gone.py::test_missing"], log_parser="parse_log_pytest")
    assert not wrong.resolved and wrong.f2p_failed == ["test_suite.py::test_broken"]
    assert wrong.p2p_failed == ["test_suite.py::U::test_u2", "test_suite.py::test_error", "tests/gone.py::test_missing"]
    assert reward(wrong, "all_or_nothing") == 0.0 and reward(wrong, "pass_rate") == pytest.approx(0.5 * 0.25)


def test_a_skipped_fail_to_pass_test_is_no_resolution(pytest_output):
    body, status = pytest_output
    verdict = grade(eval_log(body, status), fail_to_pass=["test_suite.py::test_skipped"], pass_to_pass=[],
                    log_parser="parse_log_pytest_v2")
    # pytest's -rA prints skips as "SKIPPED [1] file:line": absent by id, so the F2P test fails either way
    assert not verdict.resolved
    skipped = grade(eval_log("SKIPPED test_suite.py::test_fixed", 0), fail_to_pass=["test_suite.py::test_fixed"],
                    pass_to_pass=["test_suite.py::test_other"], log_parser="parse_log_pytest")
    assert skipped.f2p_failed == ["test_suite.py::test_fixed"] and not skipped.resolved
    kept = grade(eval_log("PASSED t.py::test_f\nSKIPPED t.py::test_p", 0), fail_to_pass=["t.py::test_f"],
                 pass_to_pass=["t.py::test_p"], log_parser="parse_log_pytest")
    assert kept.resolved  # a skipped PASS_TO_PASS test is not a regression


def test_a_patch_that_prints_passed_is_not_believed():
    """A conftest.py of the patch prints PASSED for every test while the real run fails (exit status 1)."""
    forged = "PASSED t.py::test_f\nPASSED t.py::test_p\n"
    verdict = grade(eval_log(forged, 1), fail_to_pass=["t.py::test_f"], pass_to_pass=["t.py::test_p"],
                    log_parser="parse_log_pytest")
    assert not verdict.has_results and verdict.reason == "log_contradicts_exit_status" and not verdict.resolved
    assert reward(verdict, "pass_rate") == 0.0
    # ... nor when it also prints an exit status of 0 inside the test output (the official harness takes that one)
    verdict = grade(eval_log(forged + ">>>>> Test Exit Code: 0\n", 1), fail_to_pass=["t.py::test_f"],
                    pass_to_pass=["t.py::test_p"], log_parser="parse_log_pytest")
    assert verdict.exit_code == 1 and not verdict.resolved
    assert recorded_exit_code(eval_log("x", 3)) == 3 and recorded_exit_code("no markers") is None


@pytest.mark.parametrize("log, reason", [
    ("PASSED t.py::test_f\n", "no_markers"),
    (eval_log("PASSED t.py::test_f", 0, after=">>>>> Patch Apply Failed\n"), "failure_marker"),
    (eval_log("collected 0 items\n\nno tests ran in 0.01s", 5), "nothing_ran"),
])
def test_a_run_without_test_results_resolves_nothing(log, reason):
    verdict = grade(log, fail_to_pass=["t.py::test_f"], pass_to_pass=[], log_parser="parse_log_pytest",
                    eval_type="fail_only")
    assert not verdict.has_results and verdict.reason == reason
    assert reward(verdict, "all_or_nothing") == 0.0 and reward(verdict, "pass_rate") == 0.0


def test_fail_only_suites_fail_only_what_the_log_says_failed():
    verdict = grade(eval_log("FAILED t.py::test_a - boom\n3 passing", 1), fail_to_pass=["t.py::test_b"],
                    pass_to_pass=["t.py::test_a", "t.py::test_c"], log_parser="parse_log_pytest", eval_type="fail_only")
    assert verdict.f2p_passed == ["t.py::test_b"] and verdict.p2p_failed == ["t.py::test_a"]


def test_a_truncated_parametrized_id_matches_when_its_candidates_agree():
    log = eval_log("PASSED t.py::test_g[log(photon)]\nPASSED t.py::test_g[log(photons)]\nFAILED t.py::test_h[a-1]\n"
                   "PASSED t.py::test_h[a-2]", 1)
    assert grade(log, fail_to_pass=["t.py::test_g[log(photon"], pass_to_pass=[], log_parser="parse_log_pytest").resolved
    mixed = grade(log, fail_to_pass=["t.py::test_h[a-"], pass_to_pass=[], log_parser="parse_log_pytest")
    assert mixed.f2p_failed == ["t.py::test_h[a-"]  # one passed, one failed: no match, so it fails


def test_django_sympy_and_seaborn_logs():
    django = eval_log("test_a (m.T.test_a) ... ok\ntest_b (m.T.test_b) ... FAIL\ntest_c (m.T.test_c) ... skipped 'x'\n"
                      "test_d (m.T.test_d) ... System check identified no issues (0 silenced).\nok\nRan 4 tests", 1)
    states = PARSERS["parse_log_django"](django)
    assert states == {"test_a (m.T.test_a)": "PASSED", "test_b (m.T.test_b)": "FAILED",
                      "test_c (m.T.test_c)": "SKIPPED", "test_d (m.T.test_d)": "PASSED"}
    sympy = "test_one ok\ntest_two F\ntest_three E\n____ sympy/core/tests/test_x.py:test_two ____\n"
    assert PARSERS["parse_log_sympy"](sympy) == {"test_one": "PASSED", "test_two": "FAILED", "test_three": "ERROR",
                                                 "sympy/core/tests/test_x.py:test_two": "FAILED"}
    assert PARSERS["parse_log_seaborn"]("t.py::test_a PASSED [ 50%]\nFAILED t.py::test_b - x") == {
        "t.py::test_a": "PASSED", "t.py::test_b": "FAILED"}


def test_an_unknown_parser_or_eval_type_is_one_line():
    with pytest.raises(TaskFormatError, match="log_parser 'parse_log_jest' is not supported; use one of"):
        grade("", fail_to_pass=[], pass_to_pass=[], log_parser="parse_log_jest")
    with pytest.raises(TaskFormatError, match="eval_type 'some' is not supported"):
        grade("", fail_to_pass=[], pass_to_pass=[], log_parser="parse_log_pytest", eval_type="some")
