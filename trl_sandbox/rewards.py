"""Reward functions for TRL: ``reward_funcs=[code_reward]``.

A reward function follows TRL's signature, ``(completions, **kwargs) -> list[float | None]``: TRL passes
``prompts``, ``completions``, every dataset column (one value per completion), and ``log_metric``/``log_extra``
(trl >= 1.16). ``None`` tells TRL to skip that completion (it becomes NaN and is left out of the advantage).

Each completion's task is rebuilt from its dataset row (see :mod:`trl_sandbox.tasks` for the formats), and all
completions of the batch are scored at once in the sandbox pool.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from .errors import TaskFormatError
from .scoring import ScoreResult, Scorer, active_scorer
from .tasks import Task

logger = logging.getLogger(__name__)

__all__ = ["CodeReward", "code_reward", "score_metrics"]

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


def score_metrics(results: Sequence[ScoreResult], seconds: float) -> dict[str, float]:
    """Batch metrics logged under ``sandbox/``: pass rates over scored completions, status counts, timings.

    Keys: ``completions`` (scored in the batch), ``pass_rate``, ``tests_pass_rate``, ``infra_errors``, ``timeouts``, ``errors``, ``banned``,
    ``invalid_tasks`` (counts in the batch), ``exec_seconds_mean``, ``batch_seconds``, ``completions_per_second``.
    """
    scored = [r for r in results if r.reward is not None]
    counts = Counter(r.status for r in results)
    tests_total = sum(r.tests_total for r in scored)
    return {
        "sandbox/completions": float(len(results)),
        "sandbox/pass_rate": sum(r.passed for r in scored) / len(scored) if scored else 0.0,
        "sandbox/tests_pass_rate": sum(r.tests_passed for r in scored) / tests_total if tests_total else 0.0,
        "sandbox/infra_errors": float(counts["infra_error"]),
        "sandbox/timeouts": float(counts["timeout"]),
        "sandbox/errors": float(counts["error"]),
        "sandbox/banned": float(counts["banned"]),
        "sandbox/invalid_tasks": float(counts["invalid_task"]),
        "sandbox/exec_seconds_mean": sum(r.duration_s for r in results) / len(results) if results else 0.0,
        "sandbox/batch_seconds": seconds,
        "sandbox/completions_per_second": len(results) / seconds if seconds > 0 else 0.0,
    }


class CodeReward:
    """Reward = fraction of the task's tests passed; -1.0 for code that does not run, times out or uses a banned
    pattern; ``None`` when the sandbox infrastructure failed or the task row is malformed.

    Works with :class:`~trl_sandbox.SandboxGRPOTrainer` (which binds it to the trainer's pool) and with a plain
    ``trl.GRPOTrainer`` (then it uses the active scorer, or starts a default local pool on first call).

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
        for row in rows:
            try:
                tasks.append(Task.from_row(row))
            except TaskFormatError as exc:
                key = str(exc)
                if key not in self._warned:
                    self._warned.add(key)
                    logger.warning("trl-sandbox: skipping completions of a malformed task: %s", exc)
                tasks.append(exc)
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
            log_metric: TRL's metric logger; receives the ``sandbox/*`` metrics of :func:`score_metrics`.
            log_extra: TRL's completions-table logger; receives a ``sandbox_status`` column.
            **kwargs: Dataset columns, each a list of ``B`` values (the task fields), and other TRL arguments.

        Returns:
            ``B`` rewards (floats in [-1, 1], or None).
        """
        start = time.monotonic()
        results = self.score(completions, prompts, **kwargs)
        if log_metric is not None:
            for key, value in score_metrics(results, time.monotonic() - start).items():
                log_metric(key, value)
        if log_extra is not None:
            log_extra("sandbox_status", [r.status for r in results])
        return [r.reward for r in results]


#: The default code reward: ``reward_funcs=[code_reward]``.
code_reward = CodeReward()
