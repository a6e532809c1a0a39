"""The verdict on a repository task's test log, as SWE-bench 5.0 decides it (``swebench/harness/grading.py``,
release 5.0.2: ``get_logs_eval``, ``get_eval_tests_report``, ``get_resolution_status``).

The rules:

1. The log is the eval script's output. A run whose log holds one of the harness's failure markers (``>>>>> Patch
   Apply Failed``, ``Reset Failed``, ``Tests Errored``, ``Tests Timed Out``), or lacks the ``>>>>> Start Test Output``
   / ``>>>>> End Test Output`` pair, has no test results.
2. The region between the markers is parsed by the instance's ``log_parser`` (:mod:`.log_parsers`); when it yields
   nothing, the whole log is. Nothing parsed and no sign that a test runner ran (:data:`SUITE_RAN`: a runner's own
   count of tests, never a zero one) is no result: a suite that never started resolves nothing.
3. The test command's exit status, recorded by the eval script after the end marker, is checked against the log: a
   non-zero status while the parsed log reports no ``FAILED`` or ``ERROR`` test means the log does not describe the
   run (a patch that prints ``PASSED`` lines), and the run has no result. So does a log that reports a test passing
   after reporting it failed (:func:`overturned_failure`; a rule of trl-sandbox's, not the harness's).
4. A FAIL_TO_PASS test passes only as ``PASSED`` or ``XFAIL``; a skipped one fails. A PASS_TO_PASS test is kept when
   ``PASSED``, ``XFAIL`` or ``SKIPPED``. A test missing from the log fails; one with a status word that is none of
   these (a parser kept ``PASSEDx`` as printed) counts in neither list, as in the official report. Under ``eval_type``
   ``fail_only`` (suites whose parser records failures only) a test fails only when the log says ``FAILED``. A pytest
   id that the dataset truncated inside its parameters (``test_x[log(photon``) matches the log's ids that start with
   it when they agree on pass or fail. SWE-smith's rows (``eval_type`` ``swesmith``) are graded by SWE-smith's rules
   instead, with one difference (:func:`_swesmith_report`); R2E-Gym's (``r2e``) must equal the row's expected status
   map (:func:`_r2e_report`).
5. Resolved: every FAIL_TO_PASS test passes and every PASS_TO_PASS test is kept (an empty list counts as all).

One deliberate difference: the official harness takes the first ``>>>>> Test Exit Code`` line anywhere in the log,
so a program that prints one inside the test output chooses its own status. Here only a line after the end marker
counts (the eval script writes it there; the program's output comes before it), the last one when there are several.

Rewards (see :func:`reward`): ``all_or_nothing`` pays 1.0 for resolved, ``pass_rate`` pays the FAIL_TO_PASS rate
times the PASS_TO_PASS rate (Repo2RLEnv's dense reward), and a run without results pays 0.0: it is the patch's doing
(a patch that breaks the build or the test collection). Failures of the machine (an image that cannot be prepared, a
suite killed for the host's reasons) are decided by the runner and never reach this module.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import TaskFormatError
from .log_parsers import PARSERS

START_TEST_OUTPUT = ">>>>> Start Test Output"
END_TEST_OUTPUT = ">>>>> End Test Output"
TEST_EXIT_CODE = ">>>>> Test Exit Code"
#: Markers of an eval script's own failure: the log then holds no test results.
FAILURE_MARKERS = (">>>>> Patch Apply Failed", ">>>>> Reset Failed", ">>>>> Tests Errored", ">>>>> Tests Timed Out")
#: Evidence that a test runner executed (a non-zero count of its own), for a log that parses to nothing.
SUITE_RAN = re.compile(
    r"Executed [1-9]\d* of \d+|TOTAL: [1-9]\d* (?:SUCCESS|FAILED)|[1-9]\d* passing|Tests:\s+[1-9]\d*"
    r"|Test Suites:\s+(?:\d+ \w+, )*[1-9]\d* total|^# tests [1-9]\d*|[1-9]\d* specs?, \d+ failures?|': ok$",
    re.M,
)
EVAL_TYPES = ("pass_and_fail", "fail_only", "swesmith", "r2e")
_PASSING = ("PASSED", "XFAIL")
_EXIT_LINE = re.compile(rf"{re.escape(TEST_EXIT_CODE)}:\s*(-?\d+)")


@dataclass
class RepoVerdict:
    """The verdict on one run of a repository task's tests.

    Attributes:
        has_results: Whether the log describes a test run (rules 1 to 3); False is never resolved.
        reason: Why there are no results (``failure_marker``, ``no_markers``, ``nothing_ran``,
            ``log_contradicts_exit_status``, ``log_overturns_a_failure``; ``timeout`` from the runner), else None.
        f2p_passed, f2p_failed, p2p_kept, p2p_failed: The FAIL_TO_PASS and PASS_TO_PASS test ids by outcome.
        status_map: The parsed log (test id -> status).
        exit_code: The test command's recorded exit status, or None when the log has none.
    """

    has_results: bool
    reason: str | None = None
    f2p_passed: list[str] = field(default_factory=list)
    f2p_failed: list[str] = field(default_factory=list)
    p2p_kept: list[str] = field(default_factory=list)
    p2p_failed: list[str] = field(default_factory=list)
    status_map: dict[str, str] = field(default_factory=dict)
    exit_code: int | None = None

    @property
    def f2p_rate(self) -> float:
        """FAIL_TO_PASS tests passed over their number (1.0 for none, as SWE-bench's ``compute_fail_to_pass``)."""
        total = len(self.f2p_passed) + len(self.f2p_failed)
        return len(self.f2p_passed) / total if total else 1.0

    @property
    def p2p_rate(self) -> float:
        """PASS_TO_PASS tests kept over their number (1.0 for none)."""
        total = len(self.p2p_kept) + len(self.p2p_failed)
        return len(self.p2p_kept) / total if total else 1.0

    @property
    def resolved(self) -> bool:
        """SWE-bench's ``RESOLVED_FULL``: results, every FAIL_TO_PASS test passed and every PASS_TO_PASS one kept."""
        return self.has_results and self.f2p_rate == 1.0 and self.p2p_rate == 1.0


def recorded_exit_code(log: str) -> int | None:
    """The test command's exit status the eval script wrote after the end marker (the last such line), or None."""
    if END_TEST_OUTPUT not in log:
        return None
    found = _EXIT_LINE.findall(log.rsplit(END_TEST_OUTPUT, 1)[1])
    return int(found[-1]) if found else None


def _key(test: str, status_map: dict[str, str]) -> str | None:
    if test in status_map:
        return test
    if test.count("[") > test.count("]"):  # a parametrized id the dataset cut short
        matches = [k for k in status_map if k.startswith(test)]
        if matches and len({status_map[k] in _PASSING for k in matches}) == 1:
            return matches[0]
    return None


def overturned_failure(region: str, parser: Callable[[str], dict[str, str]]) -> str | None:
    """A test the log reports ``FAILED`` or ``ERROR`` and, later, ``PASSED`` or ``XFAIL`` (its id), else None.

    A test runner reports a test's failure after its pass (pytest's ``ERROR`` at teardown follows the ``PASSED``),
    never a pass after its failure; a later pass is printed by something else, to overwrite the verdict (the
    parsers keep a test's last line). Read line by line (a parser that needs several lines to see a result reads
    none here, and this rule does not apply to its logs).
    """
    failed: set[str] = set()
    for line in region.split("\n"):
        for test, status in parser(line).items():
            if status in ("FAILED", "ERROR"):
                failed.add(test)
            elif status in _PASSING and test in failed:
                return test
    return None


def grade(log: str, *, fail_to_pass: Sequence[str], pass_to_pass: Sequence[str], log_parser: str,
          eval_type: str = "pass_and_fail", exit_code: int | None = None,
          expected: Mapping[str, str] | None = None) -> RepoVerdict:
    """The verdict on ``log`` (see the module docstring for the rules and their source).

    Args:
        log: The eval script's whole output (stdout and stderr as one stream), as text.
        fail_to_pass, pass_to_pass: The instance's test ids.
        log_parser: A name of :data:`~trl_sandbox.repos.log_parsers.PARSERS` (the instance's ``log_parser``).
        eval_type: ``pass_and_fail`` or ``fail_only``.
        exit_code: The test command's exit status, when the runner recorded it; default: the one the log records
            after its end marker (:func:`recorded_exit_code`).
        expected: For ``eval_type`` ``r2e``: the status map the log must equal (R2E-Gym's ``expected_output_json``).

    Raises:
        TaskFormatError: an unknown ``log_parser`` or ``eval_type`` (the message lists the supported ones).
    """
    parser = PARSERS.get(log_parser)
    if parser is None:
        raise TaskFormatError(f"log_parser {log_parser!r} is not supported; use one of {', '.join(sorted(PARSERS))}")
    if eval_type not in EVAL_TYPES:
        raise TaskFormatError(f"eval_type {eval_type!r} is not supported; use one of {', '.join(EVAL_TYPES)}")
    if exit_code is None:
        exit_code = recorded_exit_code(log)
    if any(marker in log for marker in FAILURE_MARKERS):
        return RepoVerdict(False, "failure_marker", exit_code=exit_code)
    if START_TEST_OUTPUT not in log or END_TEST_OUTPUT not in log:
        return RepoVerdict(False, "no_markers", exit_code=exit_code)
    region = log.split(START_TEST_OUTPUT)[1].split(END_TEST_OUTPUT)[0]
    status_map = parser(region) or parser(log)
    if not status_map and not SUITE_RAN.search(log):
        return RepoVerdict(False, "nothing_ran", exit_code=exit_code)
    if overturned_failure(region, parser):
        return RepoVerdict(False, "log_overturns_a_failure", status_map=status_map, exit_code=exit_code)
    if exit_code not in (None, 0) and status_map and not any(s in ("FAILED", "ERROR") for s in status_map.values()):
        return RepoVerdict(False, "log_contradicts_exit_status", status_map=status_map, exit_code=exit_code)
    verdict = RepoVerdict(True, status_map=status_map, exit_code=exit_code)
    if eval_type == "swesmith":
        _swesmith_report(verdict, fail_to_pass, pass_to_pass, status_map)
        return verdict
    if eval_type == "r2e":
        _r2e_report(verdict, expected or {}, status_map)
        return verdict
    for test in fail_to_pass:
        key = _key(test, status_map)
        if eval_type == "fail_only":
            (verdict.f2p_failed if status_map.get(test) == "FAILED" else verdict.f2p_passed).append(test)
        elif key is not None and status_map[key] in _PASSING:
            verdict.f2p_passed.append(test)
        elif key is None or status_map[key] in ("FAILED", "ERROR", "SKIPPED"):  # skipped: not a resolution
            verdict.f2p_failed.append(test)
    for test in pass_to_pass:
        key = _key(test, status_map)
        if eval_type == "fail_only":
            (verdict.p2p_failed if status_map.get(test) == "FAILED" else verdict.p2p_kept).append(test)
        elif key is not None and status_map[key] in (*_PASSING, "SKIPPED"):
            verdict.p2p_kept.append(test)
        elif key is None or status_map[key] in ("FAILED", "ERROR", "SKIPPED"):
            verdict.p2p_failed.append(test)
    return verdict


def _swesmith_report(verdict: RepoVerdict, fail_to_pass: Sequence[str], pass_to_pass: Sequence[str],
                     status_map: dict[str, str]) -> None:
    """SWE-smith's ``get_eval_tests_report`` (``swesmith/harness/grading.py``), with one deliberate difference.

    SWE-smith runs only the FAIL_TO_PASS tests' files, so a PASS_TO_PASS test missing from the log is kept, and a
    test fails only when the log says ``FAILED`` or ``ERROR``; ``PASSED`` and ``XFAIL`` pass. Its rule that a
    *FAIL_TO_PASS* test missing from the log passes ("silent success") is not kept: a patch that stops a test from
    being collected would resolve the instance. Here a FAIL_TO_PASS test passes only as ``PASSED`` or ``XFAIL``
    (missing or skipped fails, as SWE-bench decides); a skipped PASS_TO_PASS test is kept, as SWE-bench keeps it
    (SWE-smith counts it in neither list)."""
    for test in fail_to_pass:
        (verdict.f2p_passed if status_map.get(test) in _PASSING else verdict.f2p_failed).append(test)
    for test in pass_to_pass:
        failed = status_map.get(test) in ("FAILED", "ERROR")
        (verdict.p2p_failed if failed else verdict.p2p_kept).append(test)


_ANSI = re.compile(r"\x1b\[\d+m")


def _r2e_report(verdict: RepoVerdict, expected: Mapping[str, str], status_map: dict[str, str]) -> None:
    """R2E-Gym's ``_calculate_reward_r2e`` (``r2egym/agenthub/runtime/docker.py``): the parsed log and the expected
    status map, colour codes removed from their keys and each key cut at `` - ``, must have the same number of
    tests and agree on every one (1.0, else 0.0). Here each expected test the log agrees on is kept
    (``p2p_kept``), each other one failed, and a test the log has beyond the expected ones fails as
    ``unexpected: <id>``: resolved exactly when R2E-Gym pays 1.0; ``pass_rate`` pays the share kept."""
    def keys(status: Mapping[str, str]) -> dict[str, str]:
        clean = {_ANSI.sub("", k): v for k, v in status.items()}
        return {k.split(" - ")[0]: clean[k] for k in sorted(clean)}

    got, want = keys(status_map), keys(expected)
    for test, status in want.items():
        (verdict.p2p_kept if got.get(test) == status else verdict.p2p_failed).append(test)
    verdict.p2p_failed += [f"unexpected: {test}" for test in got if test and test not in want]
    if len(got) != len(want) and not verdict.p2p_failed:  # an empty id, which R2E-Gym counts but skips
        verdict.p2p_failed.append("unexpected: (empty id)")


def reward(verdict: RepoVerdict, mode: str) -> float:
    """The reward of a verdict: ``all_or_nothing`` 1.0 when resolved, else 0.0; ``pass_rate`` the FAIL_TO_PASS rate
    times the PASS_TO_PASS rate (0.0 without results).

    Raises:
        ValueError: an unknown mode.
    """
    if mode == "all_or_nothing":
        return 1.0 if verdict.resolved else 0.0
    if mode == "pass_rate":
        return verdict.f2p_rate * verdict.p2p_rate if verdict.has_results else 0.0
    raise ValueError(f"unknown reward mode {mode!r}; use pass_rate or all_or_nothing")
