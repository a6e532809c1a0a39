"""Reward functions for TRL: ``reward_funcs=[code_reward]``.

A reward function follows TRL's signature, ``(completions, **kwargs) -> list[float | None]``: TRL passes
``prompts``, ``completions``, every dataset column (one value per completion), and ``log_metric``/``log_extra``
(trl >= 1.16). ``None`` tells TRL to skip that completion (it becomes NaN and is left out of the advantage).

Each completion's task is rebuilt from its dataset row (see :mod:`trl_sandbox.tasks` for the formats), and all
completions of the batch are scored at once in the sandbox pool.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from .errors import TaskFormatError
from .loading import TASK_COLUMN, decode_row, task_id_of
from .repos import read_task
from .scoring import Scorer, ScoreResult, active_scorer
from .tasks import LOST_FIELDS, Task

logger = logging.getLogger(__name__)

__all__ = ["METRICS", "CodeReward", "code_reward", "error_kind", "percentile", "score_metrics"]

# Keyword arguments TRL passes that are not dataset columns.
_TRL_KWARGS = {"completion_ids", "trainer_state", "log_extra", "log_metric", "environments"}
_default_scorer: Scorer | None = None


def _fallback_scorer() -> Scorer:
    """A process-wide local scorer for use outside SandboxGRPOTrainer (closed at interpreter exit)."""
    global _default_scorer
    if _default_scorer is None or not _default_scorer.pool.started:
        from .config import SandboxConfig

        logger.info("trl-sandbox: no sandbox pool bound or active; starting a default local pool")
        _default_scorer = Scorer.from_config(SandboxConfig()).start()
    return _default_scorer


def _row_key(row: dict[str, Any]) -> Any:
    """A hashable stand-in for ``row``'s content (its task fields; the prompt does not change the task), or None
    when a value is neither plain data nor a container of it."""
    try:
        return tuple(
            (k, v if v is None or isinstance(v, (str, int, float)) else json.dumps(v, sort_keys=True))
            for k, v in sorted(row.items()) if k != "prompt"
        )
    except (TypeError, ValueError):
        return None


def rows_from_kwargs(n: int, prompts: Sequence[Any] | None, kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    """Rebuild the ``n`` dataset rows of a batch from TRL's reward keyword arguments (one list per column)."""
    columns = {
        k: v for k, v in kwargs.items() if k not in _TRL_KWARGS and isinstance(v, (list, tuple)) and len(v) == n
    }
    rows = [{k: v[i] for k, v in columns.items()} for i in range(n)]
    if prompts is not None:
        for row, prompt in zip(rows, prompts):
            row["prompt"] = prompt
    return rows


#: The metrics :class:`CodeReward` logs for each batch through TRL's ``log_metric`` (TRL averages them over the
#: processes and over the steps of a logging interval), with their meaning.
METRICS = {
    "sandbox/completions": "completions in the batch (per process)",
    "sandbox/pass_rate": "fraction of scored completions that passed every test (None rewards left out)",
    "sandbox/tests_pass_rate": "fraction of tests passed, over the scored completions",
    "sandbox/subtask_score": "mean points earned over the most there are, over the scored completions of tasks with "
                             "subtasks (0 when the batch has none)",
    "sandbox/tests_skipped": "tests not run because none of their subtasks could earn from them any more",
    "sandbox/timeouts": "completions that ran past a time limit",
    "sandbox/errors": "completions that did not load or compile, crashed or ended the test run early",
    "sandbox/errors_syntax": "errors that are empty or do not parse (SyntaxError, IndentationError)",
    "sandbox/errors_runtime": "errors that raised while loading (NameError, ImportError...)",
    "sandbox/errors_exit": "errors that ended the run early (sys.exit, os._exit, a crash of the program's process)",
    "sandbox/errors_compile": "completions in a compiled language that did not compile (status compile_error)",
    "sandbox/banned": "completions that used a banned pattern (not run)",
    "sandbox/infra_errors": "completions the infrastructure failed to score (reward None)",
    "sandbox/invalid_tasks": "completions of malformed task rows (reward None)",
    "sandbox/cancelled": "completions cancelled at the straggler deadline sandbox_batch_deadline_s (reward None)",
    "sandbox/unserializable": "completions whose tests' own values could not be sent to the program (reward None)",
    "sandbox/retries": "executions repeated after an infrastructure failure, plus the backend's own request retries",
    "sandbox/exec_seconds_mean": "mean seconds of one completion's execution in its sandbox",
    "sandbox/exec_seconds_p95": "95th percentile of the same (per process)",
    "sandbox/queue_seconds_mean": "mean seconds a completion waited for an idle sandbox or a host execution slot",
    "sandbox/admission_seconds_mean": "of those, mean seconds waiting for a host execution slot (other runs' "
                                      "executions held the host's cores; never counted against the batch deadline)",
    "sandbox/batch_seconds": "wall-clock seconds to score the whole batch",
    "sandbox/completions_per_second": "completions scored per second of batch_seconds",
    "sandbox/pool_size": "live sandboxes in the process's pool after the batch",
}


_SYNTAX_ERRORS = ("SyntaxError", "IndentationError", "TabError", "empty completion")
_EXIT_ERRORS = ("ended the test run early", "ended the worker")


def error_kind(result: ScoreResult) -> str | None:
    """What kind of ``error`` a result is: ``syntax`` (empty, or does not parse), ``exit`` (ended the run early:
    ``sys.exit``, ``os._exit``, a crash of the program's process), ``runtime`` (raised while loading) or ``compile``
    (status ``compile_error``); None for other statuses."""
    if result.status == "compile_error":
        return "compile"
    if result.status != "error":
        return None
    text = result.error or ""
    if text.startswith(_SYNTAX_ERRORS):
        return "syntax"
    if text.startswith("SystemExit") or any(marker in text for marker in _EXIT_ERRORS):
        return "exit"
    return "runtime"


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values`` by the nearest-rank method; 0.0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def score_metrics(
    results: Sequence[ScoreResult], seconds: float, *, backend_retries: int = 0, pool_size: int | None = None
) -> dict[str, float]:
    """The batch metrics of :data:`METRICS` (all floats; keys prefixed ``sandbox/``).

    Args:
        results: The batch's results.
        seconds: Wall-clock seconds the batch took.
        backend_retries: Request retries the backend made during the batch (e.g. Daytona's 429/5xx retries).
        pool_size: Live sandboxes in the pool; the key is left out when None.
    """
    scored = [r for r in results if r.reward is not None]
    counts = Counter(r.status for r in results)
    tests_total = sum(r.tests_total for r in scored)
    graded = [r for r in scored if r.score is not None]
    executed = [r.exec_s for r in results if r.exec_s > 0]
    metrics = {
        "sandbox/completions": float(len(results)),
        "sandbox/pass_rate": sum(r.passed for r in scored) / len(scored) if scored else 0.0,
        "sandbox/tests_pass_rate": sum(r.tests_passed for r in scored) / tests_total if tests_total else 0.0,
        "sandbox/subtask_score": sum(r.score for r in graded) / len(graded) if graded else 0.0,
        "sandbox/tests_skipped": float(sum(r.tests_skipped for r in results)),
        "sandbox/timeouts": float(counts["timeout"]),
        "sandbox/errors": float(counts["error"] + counts["compile_error"]),
        **{f"sandbox/errors_{kind}": float(sum(error_kind(r) == kind for r in results))
           for kind in ("syntax", "runtime", "exit", "compile")},
        "sandbox/banned": float(counts["banned"]),
        "sandbox/infra_errors": float(counts["infra_error"]),
        "sandbox/invalid_tasks": float(counts["invalid_task"]),
        "sandbox/cancelled": float(counts["cancelled"]),
        "sandbox/unserializable": float(counts["unserializable"]),
        "sandbox/retries": float(sum(r.retries for r in results) + backend_retries),
        "sandbox/exec_seconds_mean": sum(executed) / len(executed) if executed else 0.0,
        "sandbox/exec_seconds_p95": percentile(executed, 95),
        "sandbox/queue_seconds_mean": sum(r.queue_s for r in results) / len(results) if results else 0.0,
        "sandbox/admission_seconds_mean": sum(r.admission_s for r in results) / len(results) if results else 0.0,
        "sandbox/batch_seconds": seconds,
        "sandbox/completions_per_second": len(results) / seconds if seconds > 0 else 0.0,
    }
    if pool_size is not None:
        metrics["sandbox/pool_size"] = float(pool_size)
    return metrics


def _backend_retries(scorer: Scorer) -> int:
    stats = getattr(scorer.pool.backend, "stats", None)
    return int(stats.get("retries", 0)) if isinstance(stats, dict) else 0


#: Characters of a program's output shown in the completions table (``sandbox_stderr``).
TABLE_OUTPUT_CHARS = 300


class CodeReward:
    """Reward = fraction of the task's tests passed (``sandbox_reward="pass_rate"``, the default) or 1.0/0.0 for
    all/not all passed (``"all_or_nothing"``); -1.0 for code that does not run, times out or uses a banned pattern
    (values configurable with ``sandbox_reward_values``); ``None`` when the sandbox infrastructure failed, the task
    row is malformed, the batch deadline cancelled it or a value could not cross between program and tests.

    Works with :class:`~trl_sandbox.SandboxGRPOTrainer` (which binds it to the trainer's pool) and with a plain
    ``trl.GRPOTrainer`` or a trainer that patches it (Unsloth's): there, build it with :meth:`from_config` and use it
    as a context manager, so that it owns its pool for the length of the block::

        with CodeReward.from_config(SandboxConfig(sandbox_pool_size=8)) as reward:
            GRPOTrainer(model, reward_funcs=[reward], args=GRPOConfig(...), train_dataset=ds).train()

    Without either, it uses the active scorer, or starts a default local pool on first call (deleted at exit).

    Args:
        scorer: The :class:`~trl_sandbox.scoring.Scorer` to use; None: the active one, else a default local one.
        name: The name TRL shows in its metrics (``rewards/{name}/mean``).

    Example:
        >>> from trl_sandbox import code_reward
        >>> rows = {"entry_point": ["add"], "test": ["def check(candidate):\\n    assert candidate(1, 2) == 3\\n"]}
        >>> code_reward(["def add(a, b):\\n    return a + b\\n"], prompts=[""], **rows)  # doctest: +SKIP
        [1.0]
    """

    def __init__(self, scorer: Scorer | None = None, *, name: str = "code_reward") -> None:
        self.scorer = scorer
        self.__name__ = name
        self._warned: set[str] = set()
        self._config: Any = None  # set by from_config: what a pickled copy rebuilds its pool from
        self._lazy = False  # a copy unpickled in another process: starts its pool on first use

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as the config and name, never the pool (its threads and sandboxes stay in this process).

        ``AsyncGRPOTrainer`` (``trl.experimental.async_grpo``) scores in a spawned process: there, a reward built
        with :meth:`from_config` starts its own pool from the same config on first use, deleted when that process
        ends; a bound or default reward uses that process's active or default pool."""
        return (_unpickle_reward, (self._config, self.__name__))

    @classmethod
    def from_config(
        cls,
        config: Any = None,
        *,
        backend: Any = None,
        name: str = "code_reward",
        run_id: str | None = None,
    ) -> CodeReward:
        """A reward that owns a pool built from ``config``; start it with ``with reward:`` (or :meth:`start`).

        Args:
            config: A :class:`~trl_sandbox.config.SandboxConfig` (or any object with its ``sandbox_*`` fields, such
                as a ``SandboxGRPOConfig``); None: the defaults (local backend).
            backend: A :class:`~trl_sandbox.backends.Backend` instance overriding ``config.sandbox_backend``.
            name: The reward's name in TRL's metrics.
            run_id: The run label of its sandboxes; default ``$TRL_SANDBOX_RUN_ID``, else a random id. The rank label
                comes from ``$RANK`` (set by ``accelerate launch`` and ``torchrun``).

        Raises:
            ConfigurationError, UnknownBackendError: bad sandbox options (nothing is started).
        """
        from .config import SandboxConfig
        from .lifecycle import default_labels

        config = config if config is not None else SandboxConfig()
        scorer = Scorer.from_config(config, backend=backend)
        scorer.pool.labels = {
            **default_labels(run_id or os.environ.get("TRL_SANDBOX_RUN_ID")),
            **(getattr(config, "sandbox_labels", None) or {}),
        }
        rank = os.environ.get("LOCAL_RANK", "0")
        scorer.pool.progress = None if rank == "0" else False
        reward = cls(scorer, name=name)
        reward._config = config
        return reward

    def start(self) -> CodeReward:
        """Start the pool of a reward built with :meth:`from_config` (idempotent); return self.

        Raises:
            ValueError: the reward has no scorer of its own.
            ConfigurationError, SandboxCreationError: see :meth:`~trl_sandbox.pool.SandboxPool.start`.
        """
        if self.scorer is None:
            raise ValueError("this CodeReward has no pool of its own; build it with CodeReward.from_config()")
        self.scorer.start()
        return self

    def close(self) -> None:
        """Delete the pool's sandboxes (idempotent; see :meth:`~trl_sandbox.pool.SandboxPool.close`)."""
        if self.scorer is not None:
            self.scorer.close()

    def __enter__(self) -> CodeReward:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def bind(self, scorer: Scorer) -> CodeReward:
        """A copy of this reward that scores in ``scorer``."""
        return CodeReward(scorer, name=self.__name__)

    def __repr__(self) -> str:
        return f"CodeReward(name={self.__name__!r}, bound={self.scorer is not None})"

    def score(self, completions: Sequence[Any], prompts: Sequence[Any] | None = None, **kwargs: Any) -> list[ScoreResult]:
        """Score a batch and return the full :class:`~trl_sandbox.scoring.ScoreResult` of each completion.

        Arguments are those of :meth:`__call__`.
        """
        rows = rows_from_kwargs(len(completions), prompts, kwargs)
        tasks: list[Task | TaskFormatError] = []
        parsed: dict[Any, Task] = {}  # a batch repeats each row num_generations times: parse it once
        for row in rows:
            encoded = row.get(TASK_COLUMN)  # a task_dataset row: its fields, whole, as one JSON string
            key = ("task", encoded) if isinstance(encoded, str) else _row_key(row)
            if key is not None and key in parsed:
                tasks.append(parsed[key])
                continue
            try:
                row = decode_row(row)
                tasks.append(read_task(row))
                if key is not None:
                    parsed[key] = tasks[-1]
            except TaskFormatError as exc:
                exc.task_id = task_id_of(row)
                key = str(exc)
                if key not in self._warned:
                    self._warned.add(key)
                    lost = LOST_FIELDS in str(exc)
                    # A row that lost fields on the way is the dataset's construction, not one bad row: said loudly.
                    (logger.error if lost else logger.warning)(
                        "trl-sandbox: skipping completions of a malformed task (reward None): %s%s", exc,
                        f" (task {exc.task_id})" if exc.task_id else "")
                tasks.append(exc)
        if self._lazy and self.scorer is not None and not self.scorer.pool.started and not self.scorer.pool.closed:
            self.scorer.start()  # an unpickled copy (AsyncGRPOTrainer's scoring process): deleted at its exit
        scorer = self.scorer or active_scorer() or _fallback_scorer()
        return scorer.score(tasks, list(completions))

    def __call__(
        self,
        completions: Sequence[Any],
        prompts: Sequence[Any] | None = None,
        log_metric: Callable[[str, float], None] | None = None,
        log_extra: Callable[[str, list], None] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        """Score ``completions`` (TRL reward function signature).

        Args:
            completions: ``B`` completions: strings, or lists of messages (conversational).
            prompts: ``B`` prompts; a string prompt is the code the completion continues (HumanEval, call-based).
            log_metric: TRL's metric logger; receives the ``sandbox/*`` metrics of :data:`METRICS`.
            log_extra: TRL's completions-table logger (shown and saved with ``log_completions=True``); receives
                the columns ``sandbox_status``, ``sandbox_error`` (short reason) and ``sandbox_stderr`` (the end
                of what the program printed, stdout and stderr as one stream).
            **kwargs: Dataset columns, each a list of ``B`` values (the task fields), and other TRL arguments.

        Returns:
            ``B`` rewards (floats in [-1, 1], or None).
        """
        start = time.monotonic()
        scorer = self.scorer or active_scorer()
        retries_before = _backend_retries(scorer) if scorer is not None else 0
        results = self.score(completions, prompts, **kwargs)
        if log_metric is not None:
            scorer = scorer or self.scorer or active_scorer() or _default_scorer
            metrics = score_metrics(
                results,
                time.monotonic() - start,
                backend_retries=_backend_retries(scorer) - retries_before if scorer is not None else 0,
                pool_size=len(scorer.pool.live_sandboxes()) if scorer is not None else None,
            )
            for key, value in metrics.items():
                log_metric(key, value)
        if log_extra is not None:
            log_extra("sandbox_status", [r.status for r in results])
            log_extra("sandbox_error", [r.error or "" for r in results])
            log_extra("sandbox_stderr", [r.output[-TABLE_OUTPUT_CHARS:] for r in results])
        return [r.reward for r in results]


def _unpickle_reward(config: Any, name: str) -> CodeReward:
    """Rebuild a pickled :class:`CodeReward` (see :meth:`CodeReward.__reduce__`)."""
    if config is None:
        return CodeReward(name=name)
    reward = CodeReward.from_config(config, name=name)
    reward._lazy = True
    return reward


#: The default code reward: ``reward_funcs=[code_reward]``.
code_reward = CodeReward()
