"""Pictures of a training run, drawn from its ``metrics.jsonl`` (written by :class:`SandboxGRPOTrainer`).

:func:`plot_run` (the ``trl-sandbox plot RUN_DIR`` command) writes three PNG files with matplotlib (headless,
``Agg``):

- ``rewards.png``: the mean reward over steps with its spread (TRL's ``reward`` and ``reward_std``) and each reward
  function's mean (``rewards/{name}/mean``), above the pass rate (``sandbox/pass_rate``) and the fraction of tests
  passed (``sandbox/tests_pass_rate``); like the rewards plot of TRL's Daytona example, plus the pass rate;
- ``sandbox_time.png``: seconds per step spent scoring (``sandbox/batch_seconds``), per completion in its sandbox
  (``sandbox/exec_seconds_mean`` and ``_p95``) and waiting for a sandbox (``sandbox/queue_seconds_mean``), with
  the whole step (``step_time``) for scale;
- ``statuses.png``: completions per step by outcome (passed, failed, timeouts, errors by kind: syntax, runtime,
  exit; banned, infra errors, cancelled...), stacked to the step's completions.

The ± std band stops at the values a reward can take (:func:`reward_range_of`); steps are whole numbers on every
axis. :func:`draw_run` gives the figures without saving them (to inspect them, as the tests do). matplotlib is
imported only when plotting, and only its object API is used (no pyplot state, no backend switch).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .errors import TrlSandboxError

__all__ = ["PlotError", "draw_run", "plot_run", "process_count", "read_metrics", "reward_range_of"]

_STATUS_SERIES = {
    "sandbox/timeouts": "timeout",
    "sandbox/errors_syntax": "error: syntax",
    "sandbox/errors_runtime": "error: runtime",
    "sandbox/errors_exit": "error: exit",
    "sandbox/errors_compile": "compile error",
    "sandbox/banned": "banned",
    "sandbox/infra_errors": "infra error",
    "sandbox/invalid_tasks": "invalid task",
    "sandbox/cancelled": "cancelled",
    "sandbox/unserializable": "unserializable",
}


class PlotError(TrlSandboxError):
    """The run directory has no readable ``metrics.jsonl``, or it holds no logged step."""


def read_metrics(run_dir: str | Path) -> list[dict[str, Any]]:
    """The logged steps of a run: the JSON objects of ``{run_dir}/metrics.jsonl`` (or of ``run_dir`` itself when
    it is that file) that carry a ``step``, in file order. A truncated last line (a run still writing, or killed)
    is skipped.

    Raises:
        PlotError: no such file, or no logged step in it.
    """
    path = Path(run_dir)
    if path.is_dir():
        path = path / "metrics.jsonl"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise PlotError(f"cannot read {path}: {exc.strerror or exc}; is this the output_dir of a "
                        "SandboxGRPOTrainer run?") from None
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("step"), (int, float)):
            records.append(record)
    if not records:
        raise PlotError(f"{path} has no logged step yet (the trainer writes one line per logging step)")
    return records


def _series(records: list[dict[str, Any]], key: str) -> tuple[list[float], list[float]]:
    """(steps, values) of the records that have a finite number under ``key``."""
    steps, values = [], []
    for record in records:
        value = record.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            steps.append(record["step"])
            values.append(float(value))
    return steps, values


def reward_range_of(records: list[dict[str, Any]]) -> tuple[float, float] | None:
    """The values a completion's reward can take, as far as the run's metrics tell: None when unknown.

    TRL logs each step's mean reward and its standard deviation, not its extremes, and a run's reward values are
    not in its metrics. With the code reward alone (one reward function, ``rewards/code_reward/*``: what
    ``trl-sandbox train`` and ``SandboxGRPOTrainer`` use by default), the range is that of the default reward
    values (:data:`~trl_sandbox.config.DEFAULT_REWARD_VALUES`: -1 to 1), widened to the logged means when they leave
    it (custom ``sandbox_reward_values``). Other or several reward functions (TRL sums them, weighted): unknown.
    """
    from .config import DEFAULT_REWARD_VALUES

    names = {k.split("/")[1] for r in records for k in r if k.startswith("rewards/") and k.endswith("/mean")}
    if names != {"code_reward"}:
        return None
    logged = [v for key in ("reward", "rewards/code_reward/mean") for v in _series(records, key)[1]]
    low, high = min(DEFAULT_REWARD_VALUES.values()), max(DEFAULT_REWARD_VALUES.values())
    return min([low, *logged]), max([high, *logged])


def process_count(records: list[dict[str, Any]]) -> int | None:
    """How many training processes the run's per-process metrics (``sandbox/completions``...) were averaged over:
    the largest ``num_processes`` a record carries (TRL's own metrics do not say); None when no record says."""
    counts = [int(v) for v in _series(records, "num_processes")[1]]
    return max(counts) if counts else None


def draw_run(
    records: list[dict[str, Any]], *, title: str = "", reward_range: tuple[float, float] | None = None
) -> dict[str, Any]:
    """The run's figures, drawn and not saved: ``{"rewards.png": Figure, "sandbox_time.png": ...,
    "statuses.png": ...}`` (matplotlib ``Figure`` objects, no pyplot state; a figure whose metrics the run never
    logged is left out).

    Args:
        records: The logged steps (:func:`read_metrics`).
        title: Put before each figure's title (the run's name).
        reward_range: The values a reward can take (low, high), to which the ± std band is clipped; default
            :func:`reward_range_of` the records (the band is left as logged when that is unknown too).
    """
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    prefix = f"{title}: " if title else ""
    figures: dict[str, Any] = {}

    def finish(fig: Any, name: str) -> None:
        for ax in fig.axes:
            # Steps are whole numbers, and a run of one step still gets its one tick.
            ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
            if ax.get_legend_handles_labels()[0]:  # beside the plot, never over its lines or bars
                ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", borderaxespad=0)
        fig.tight_layout()
        figures[name] = fig

    # rewards and pass rate
    steps, reward = _series(records, "reward")
    if steps:
        fig = Figure(figsize=(10, 7))
        top, bottom = fig.subplots(2, 1, sharex=True)
        top.plot(steps, reward, marker="o", markersize=3, label="reward (mean)", color="C0")
        std_steps, std = _series(records, "reward_std")
        if std_steps == steps:
            # mean ± std may pass what any reward can be (a step where most completions got the top reward):
            # the band stops at the reward range.
            low, high = reward_range or reward_range_of(records) or (-math.inf, math.inf)
            top.fill_between(steps, [max(low, r - s) for r, s in zip(reward, std)],
                             [min(high, r + s) for r, s in zip(reward, std)], alpha=0.2, color="C0", label="± std")
        names = sorted({k for r in records for k in r if k.startswith("rewards/") and k.endswith("/mean")})
        if len(names) > 1:
            for i, key in enumerate(names, 1):
                top.plot(*_series(records, key), linestyle="--", color=f"C{i}", label=key.split("/")[1])
        top.set_ylabel("reward")
        top.set_title(f"{prefix}reward per step")
        top.grid(alpha=0.3)
        # Distinct line styles and markers: the two often coincide (every completion passes all or none).
        for key, label, color, style, marker in (("sandbox/pass_rate", "pass rate (all tests)", "C2", "-", "o"),
                                                 ("sandbox/tests_pass_rate", "tests passed", "C3", "--", "x")):
            s, v = _series(records, key)
            if s:
                bottom.plot(s, v, marker=marker, markersize=5, label=label, color=color, linestyle=style)
        bottom.set_ylim(-0.02, 1.02)
        bottom.set_ylabel("fraction")
        bottom.set_xlabel("step")
        bottom.set_title("pass rate of scored completions")
        bottom.grid(alpha=0.3)
        finish(fig, "rewards.png")

    # time
    per_step = (("step_time", "whole training step", ":"), ("sandbox/batch_seconds", "scoring the batch", "-"))
    per_completion = (("sandbox/exec_seconds_mean", "execution (mean)"),
                      ("sandbox/exec_seconds_p95", "execution (p95)"),
                      ("sandbox/queue_seconds_mean", "waiting for a sandbox (mean)"))
    if any(_series(records, key)[0] for key, *_ in (*per_step, *per_completion)):
        fig = Figure(figsize=(10, 7))
        top, bottom = fig.subplots(2, 1, sharex=True)
        for i, (key, label, style) in enumerate(per_step):
            s, v = _series(records, key)
            if s:
                top.plot(s, v, marker="o", markersize=3, label=label, color=f"C{i}", linestyle=style)
        top.set_ylabel("seconds")
        top.set_ylim(bottom=0)
        top.set_title(f"{prefix}sandbox time per step")
        top.grid(alpha=0.3)
        for i, (key, label) in enumerate(per_completion, 2):
            s, v = _series(records, key)
            if s:
                bottom.plot(s, [x * 1000 for x in v], marker="o", markersize=3, label=label, color=f"C{i}")
        bottom.set_ylabel("milliseconds per completion")
        bottom.set_ylim(bottom=0)
        bottom.set_xlabel("step")
        bottom.grid(alpha=0.3)
        finish(fig, "sandbox_time.png")

    # outcomes: stacked bars that add up to the step's completions
    steps, total = _series(records, "sandbox/completions")
    if steps:
        fig = Figure(figsize=(10, 7))
        ax = fig.subplots()
        logged = [r for r in records if isinstance(r.get("sandbox/completions"), (int, float))
                  and math.isfinite(r["sandbox/completions"])]
        bottom_values = [0.0] * len(steps)
        passed_steps, pass_rate = _series(records, "sandbox/pass_rate")
        if passed_steps == steps:
            # pass_rate is over the completions that got a reward; the others are drawn by status below.
            unscored = ("sandbox/infra_errors", "sandbox/invalid_tasks", "sandbox/cancelled", "sandbox/unserializable")
            scored = [t - sum(_value(r, k) for k in unscored) for r, t in zip(logged, total)]
            passed = [p * s for p, s in zip(pass_rate, scored)]
            ax.bar(steps, passed, label="passed", color="C2")
            bottom_values = passed
            others = ("sandbox/timeouts", "sandbox/errors", "sandbox/banned")
            failed = [max(0.0, s - p - sum(_value(r, k) for k in others)) for s, p, r in zip(scored, passed, logged)]
            if any(failed):
                ax.bar(steps, failed, bottom=bottom_values, label="failed (some tests)", color="C1")
                bottom_values = [b + f for b, f in zip(bottom_values, failed)]
        series = dict(_STATUS_SERIES)
        if not any("sandbox/errors_syntax" in r for r in records):  # a run logged before errors were broken down
            series = {("sandbox/errors" if k == "sandbox/errors_syntax" else k): ("error" if k.endswith("syntax")
                      else v) for k, v in series.items() if k not in ("sandbox/errors_runtime", "sandbox/errors_exit")}
        for i, (key, label) in enumerate(series.items()):
            values = [_value(r, key) for r in logged]
            if any(values):
                ax.bar(steps, values, bottom=bottom_values, label=label, color=f"C{i + 3}")
                bottom_values = [b + v for b, v in zip(bottom_values, values)]
        count = process_count(records)
        if count is None:  # one process or several, the metrics do not say: true either way
            ax.set_ylabel("completions per process")
        elif count > 1:
            ax.set_ylabel(f"completions per process (mean over {count} processes)")
        else:
            ax.set_ylabel("completions")
        ax.set_xlabel("step")
        ax.set_title(f"{prefix}outcomes per step")
        ax.grid(alpha=0.3, axis="y")
        finish(fig, "statuses.png")
    return figures


def plot_run(
    run_dir: str | Path,
    out_dir: str | Path | None = None,
    *,
    dpi: int = 120,
    reward_range: tuple[float, float] | None = None,
) -> list[Path]:
    """Draw the run's rewards, pass rate, sandbox time and outcomes per step to PNG files.

    Args:
        run_dir: A run's ``output_dir`` (holding ``metrics.jsonl``), or the ``metrics.jsonl`` file itself.
        out_dir: Where to write the PNG files; default ``{run_dir}/plots`` (created).
        dpi: Resolution; the figures are 10 x 7 inches (1200 x 840 pixels at the default 120).
        reward_range: The values a reward can take, (low, high): the ± std band stops there. Default: as far as
            the metrics tell (see :func:`reward_range_of`).

    Returns:
        The paths written: ``rewards.png``, ``sandbox_time.png`` and ``statuses.png`` (a figure whose metrics
        the run never logged is skipped).

    Raises:
        PlotError: see :func:`read_metrics`.
    """
    records = read_metrics(run_dir)
    base = Path(run_dir) if Path(run_dir).is_dir() else Path(run_dir).parent
    out = Path(out_dir) if out_dir is not None else base / "plots"
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, fig in draw_run(records, title=base.resolve().name, reward_range=reward_range).items():
        fig.savefig(out / name, dpi=dpi)
        written.append(out / name)
    return written


def _value(record: dict[str, Any], key: str) -> float:
    value = record.get(key)
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else 0.0
