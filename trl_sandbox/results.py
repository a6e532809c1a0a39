"""The result of scoring one completion (:class:`ScoreResult`), its reward from a verdict, and the per-completion
accounting the scorer keeps while it runs (seconds waited and executed, the program's output)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .backends.base import ExecResult
from .config import UNSCORED_STATUSES, reward_table
from .errors import TaskFormatError
from .tasks import Task, Verdict, harness_records

__all__ = ["OUTPUT_TAIL_CHARS", "STATUSES", "ScoreResult", "Timing", "output_tail", "reward_of", "unscored",
           "verdict_result"]

STATUSES = ("passed", "failed", "error", "compile_error", "timeout", "banned", *UNSCORED_STATUSES)
#: Characters of a program's output kept in :attr:`ScoreResult.output` (its end).
OUTPUT_TAIL_CHARS = 1000


@dataclass(frozen=True)
class ScoreResult:
    """The score of one completion.

    Attributes:
        task_id: The task's id.
        reward: See the table of :mod:`trl_sandbox.scoring`; ``None`` for ``infra_error``, ``invalid_task``, ``cancelled`` and
            ``unserializable`` (TRL skips it).
        passed: True when every test passed.
        tests_passed: Number of tests passed.
        tests_total: The task's number of tests (0 when the task could not be parsed).
        status: One of :data:`STATUSES`.
        duration_s: Wall-clock seconds spent on this completion, waiting for a sandbox included.
        error: Short reason for a non-passing status, else None.
        queue_s: Seconds spent waiting for an idle sandbox and for a slot of the host's admission limit (all attempts,
            the task's checker self-test included).
        exec_s: Seconds spent in the backend's execution (all attempts).
        retries: Executions repeated after an infrastructure failure (0 or 1).
        admission_s: Of ``queue_s``, the seconds spent waiting for a slot of the host's admission limit (the local
            backend: other processes' executions held the host's cores); never counted against the batch deadline.
        output: What the program printed, stdout and stderr as one stream in the order printed (the traceback of an
            exception that ended it included, as ``python3 prog.py`` prints it), on every backend; its end, at most
            :data:`OUTPUT_TAIL_CHARS` characters, starting with ``[... N characters cut]`` when it was longer; empty
            when it printed nothing. A stdin/stdout program's stdout is its answer, compared with the expected one:
            ``error`` quotes it for the failing test.
        failed_test: The index (from 0) of the first test that did not pass, whose message ``error`` gives; None
            when every test passed or none ran (a program that did not load or compile, a banned one).
        score: A task with subtasks: the points earned over the most there are, in [0, 1] (see
            :mod:`trl_sandbox.subtasks`); else None.
        subtask_points: A task with subtasks: the points each subtask earned, in the task's order; else None.
        tests_skipped: Tests not run because none of their subtasks could earn from them any more (the early stop).
    """

    task_id: str
    reward: float | None
    passed: bool
    tests_passed: int
    tests_total: int
    status: str
    duration_s: float
    error: str | None = None
    queue_s: float = 0.0
    exec_s: float = 0.0
    retries: int = 0
    output: str = ""
    failed_test: int | None = None
    admission_s: float = 0.0
    score: float | None = None
    subtask_points: tuple[float, ...] | None = None
    tests_skipped: int = 0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict (the ``trl-sandbox score`` output line)."""
        out = dict(self.__dict__)  # asdict's deep copy, without its cost: every field is a str, a number or None
        if out["subtask_points"] is not None:  # but this tuple of numbers
            out["subtask_points"] = list(out["subtask_points"])
        return out


def reward_of(verdict: Verdict, mode: str = "pass_rate", table: dict[str, float] | None = None) -> float | None:
    """The reward of ``verdict`` under reward ``mode`` (``pass_rate`` | ``all_or_nothing``) and ``table`` (from
    :func:`~trl_sandbox.config.reward_table`; default: the default values). None for the unscored statuses."""
    table = table if table is not None else reward_table(mode)
    if verdict.status == "failed" and mode == "pass_rate" and verdict.score is not None:
        return table["passed"] * verdict.score  # a task with subtasks: its points earned over the most there are
    if verdict.status == "failed" and mode == "pass_rate":
        earned = verdict.tests_passed + verdict.partial  # a checker's partial scores count as fractions of a test
        fraction = earned / verdict.tests_total if verdict.tests_total else 0.0
        return table["passed"] * min(1.0, fraction)
    return table.get(verdict.status)


def verdict_result(task_id: str, verdict: Verdict, duration_s: float, reward: float | None, **timing: Any) -> ScoreResult:
    return ScoreResult(
        task_id=task_id,
        reward=reward,
        passed=verdict.status == "passed",
        tests_passed=verdict.tests_passed,
        tests_total=verdict.tests_total,
        status=verdict.status,
        duration_s=duration_s,
        error=verdict.error,
        failed_test=verdict.failed_test,
        score=verdict.score,
        subtask_points=tuple(verdict.subtask_points) or None,
        tests_skipped=verdict.tests_skipped,
        **timing,
    )



def unscored(
    task: Task | TaskFormatError, status: str, duration_s: float, error: str, **timing: Any
) -> ScoreResult:
    """A result with no reward (``infra_error``, ``invalid_task``, ``cancelled``): TRL skips it."""
    if isinstance(task, Task):
        return ScoreResult(task.task_id, None, False, 0, len(task.tests), status, duration_s, error, **timing)
    return ScoreResult(task.task_id or "?", None, False, 0, 0, status, duration_s, error, **timing)



@dataclass
class Timing:
    """Per-completion accounting across attempts (seconds)."""

    queue_s: float = 0.0
    exec_s: float = 0.0
    retries: int = 0
    output: str = ""
    admission_s: float = 0.0

    def fields(self) -> dict[str, Any]:
        return dict(self.__dict__)



def output_tail(result: ExecResult, key: str | None = None) -> str:
    """The end of what the program printed: ``python harness.pyz`` (remote backends) sends it as the judge's JSON
    ``{"output"}`` record, which printed text cannot forge (with ``key``: the signed one only, see
    :func:`~trl_sandbox.tasks.harness_records`); the local backend returns it as ``stderr``."""
    text = None
    lines = [line for line in result.stdout.splitlines() if line.startswith(b'{"output"')]
    if lines:
        records = harness_records(b"\n".join(lines), key) if key is not None else harness_records(lines[-1])
        if records and isinstance(records[-1].get("output"), str):
            text = records[-1]["output"]
    if text is None:
        text = result.stderr.decode("utf-8", errors="replace")
    if len(text) > OUTPUT_TAIL_CHARS:
        cut = len(text) - OUTPUT_TAIL_CHARS
        return f"[... {cut} characters cut]\n" + text[cut:]
    return text
