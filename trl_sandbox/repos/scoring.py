"""A repository task's completion scored by a :class:`~trl_sandbox.scoring.Scorer`: its patch run by
:func:`.runner.run_task` on a sandbox of the scorer's pool, turned into a :class:`~trl_sandbox.results.ScoreResult`.

Statuses and rewards (the reward table of the scorer's mode, :func:`~trl_sandbox.config.reward_table`):

- ``passed``: resolved (every FAIL_TO_PASS test passes, every PASS_TO_PASS test is kept): ``passed`` (1.0).
- ``failed``: results, not resolved: in ``pass_rate`` mode ``passed`` × the FAIL_TO_PASS rate × the PASS_TO_PASS
  rate (Repo2RLEnv's dense reward), or × a Harbor verifier's reward (clamped to [0, 1]; 1.0 or more is
  ``passed``); in ``all_or_nothing`` mode ``failed``.
- ``error``: no diff in the completion, a patch that applies by no attempt, or a log that describes no test run
  (the patch broke the build or the collection; its printed results contradict the exit status or overturn a
  failure; a Harbor verifier that wrote no readable reward): ``error``.
- ``timeout``: the run passed its deadline (the task's, else 1800 s): ``timeout``.
- ``banned``: a patch refused before it runs (:func:`.runner.refused`): ``banned``.
- ``infra_error`` (None): the image is not in the cache, the tree could not be prepared, the backend does not run
  repository tasks.
- ``invalid_task`` (None): the task's own bug patch (SWE-smith) does not apply to its image, or its image has no
  ``tar`` to unpack a Harbor task's tests with.

``tests_passed`` counts the FAIL_TO_PASS tests passed and the PASS_TO_PASS tests kept, of ``tests_total`` (both
lists); ``output`` is the log's end.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import anyio

from ..completions import extract_patch
from ..errors import ConfigurationError, InfrastructureError
from ..images import ImageError
from ..results import OUTPUT_TAIL_CHARS, ScoreResult
from .rows import RepoTask
from .runner import DEFAULT_TIMEOUT_S, SETUP_FAILED, RepoRun, refused, run_task

logger = logging.getLogger(__name__)
_STATUS = {"resolved": "passed", "unresolved": "failed", "patch_failed": "error", "no_results": "error",
           "timeout": "timeout"}
_REASONS = {"patch_failed": "the patch applies by none of SWE-bench's git apply / patch attempts",
            "nothing_ran": "no test ran (the build or the test collection failed)",
            "no_markers": "the eval script's output has no test-output markers (it stopped before its tests)",
            "failure_marker": "the log holds a harness failure marker",
            "log_contradicts_exit_status": "the log reports no failure but the test command exited non-zero: the "
                                           "printed results are not the run's",
            "log_overturns_a_failure": "the log reports a test passing after it failed: the printed results are "
                                       "not the run's",
            "no_reward_file": "the verifier (tests/test.sh) wrote no reward file",
            "empty_reward_file": "the verifier's reward file is empty",
            "unreadable_reward_file": "the verifier's reward file holds no number"}


def budget_s(task: RepoTask) -> float:
    """Seconds one completion of ``task`` may take: its run's deadline plus the tree's setup."""
    return (task.timeout_s or DEFAULT_TIMEOUT_S) + 30.0


def _tail(log: str) -> str:
    if len(log) <= OUTPUT_TAIL_CHARS:
        return log
    return f"[... {len(log) - OUTPUT_TAIL_CHARS} characters cut]" + log[-OUTPUT_TAIL_CHARS:]


def _result(task: RepoTask, run: RepoRun | None, status: str, reward: float | None, error: str | None,
            duration_s: float, **timing: Any) -> ScoreResult:
    if task.source == "harbor":  # one verdict: the verifier's
        return ScoreResult(task.task_id, reward, status == "passed", int(status == "passed"), 1, status, duration_s,
                           error, output=_tail(run.log) if run is not None else "", **timing)
    total = len(task.fail_to_pass) + len(task.pass_to_pass)
    verdict = run.verdict if run is not None else None
    passed = len(verdict.f2p_passed) + len(verdict.p2p_kept) if verdict is not None and verdict.has_results else 0
    failing = [*verdict.f2p_failed, *verdict.p2p_failed] if verdict is not None else []
    order = [*task.fail_to_pass, *task.pass_to_pass]
    failed_test = order.index(failing[0]) if failing and failing[0] in order else None
    return ScoreResult(task.task_id, reward, status == "passed", passed, total, status, duration_s, error,
                       output=_tail(run.log) if run is not None else "", failed_test=failed_test, **timing)


async def score_repo(scorer: Any, task: RepoTask, completion: Any) -> ScoreResult:
    """Score ``completion`` (a string or a conversational completion holding a unified diff) on ``task`` with
    ``scorer``'s pool, reward mode and reward table; see the module docstring for the statuses. One retry on another
    sandbox after an infrastructure failure. Never raises for the completion's or the machine's failures: they are
    results."""
    start = time.monotonic()
    table = scorer.rewards
    try:
        patch = extract_patch(completion)
    except TypeError as exc:
        return _result(task, None, "error", table["error"], str(exc), 0.0)
    if not patch.strip():
        return _result(task, None, "error", table["error"], "no unified diff in the completion", 0.0)
    reason = refused(patch, str(task.extra.get("repo", "")))
    if reason is not None:
        return _result(task, None, "banned", table["banned"], reason, time.monotonic() - start)
    try:
        image = await anyio.to_thread.run_sync(scorer.pool.backend.repo_image, task.image)
    except (ImageError, ConfigurationError) as exc:
        return _result(task, None, "infra_error", None, f"image {task.image!r}: {exc}", time.monotonic() - start)
    error: Exception | None = None
    queue_s = exec_s = 0.0
    for attempt in range(2):
        queued = time.monotonic()
        try:
            async with scorer.pool.lease(timeout_s=scorer.deadline_s(1, [task])) as lease, \
                    scorer.pool.backend.admit(None):
                began = time.monotonic()
                queue_s += began - queued
                try:
                    run = await run_task(scorer.pool.backend, lease.sandbox, image, task, patch)
                except BaseException:
                    lease.broken = True
                    raise
                finally:
                    exec_s += time.monotonic() - began
        except ConfigurationError as exc:
            return _result(task, None, "infra_error", None, str(exc), time.monotonic() - start,
                           queue_s=queue_s, exec_s=exec_s)
        except InfrastructureError as exc:
            error = exc
            if scorer.pool.closed:
                break
            logger.warning("trl-sandbox: infrastructure error on %s: %s", task.task_id, exc)
            continue
        if run.status == "setup_failed":
            message = run.log[run.log.rindex(SETUP_FAILED):].split("\n", 1)[0]
            return _result(task, run, "invalid_task", None, message, time.monotonic() - start, queue_s=queue_s,
                           exec_s=exec_s, retries=attempt)
        status = _STATUS[run.status]
        if status == "passed":
            reward = table["passed"]
        elif status == "failed":
            rate = (run.verdict.f2p_rate * run.verdict.p2p_rate if run.reward is None
                    else min(1.0, max(0.0, run.reward)))
            reward = table["passed"] * rate if scorer.reward_mode == "pass_rate" else table["failed"]
        else:
            reward = table[status]
        message = None
        if run.status == "unresolved" and run.reward is not None:
            message = f"the verifier's reward is {run.reward:g}"
        elif run.status == "unresolved":
            message = (f"FAIL_TO_PASS {len(run.verdict.f2p_passed)}/{len(task.fail_to_pass)} passed, PASS_TO_PASS "
                       f"{len(run.verdict.p2p_kept)}/{len(task.pass_to_pass)} kept")
        elif run.status == "timeout":
            message = f"the run passed its deadline of {task.timeout_s or DEFAULT_TIMEOUT_S:.0f}s"
        elif run.status != "resolved":
            message = _REASONS.get(run.status) or _REASONS.get(run.verdict.reason or "", run.verdict.reason)
        return _result(task, run, status, reward, message, time.monotonic() - start, queue_s=queue_s,
                       exec_s=exec_s, retries=attempt)
    return _result(task, None, "infra_error", None, str(error), time.monotonic() - start, queue_s=queue_s,
                   exec_s=exec_s, retries=1)
