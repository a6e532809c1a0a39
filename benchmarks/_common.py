"""Helpers shared by the benchmark scripts: progress lines, medians, percentiles, Markdown tables, HumanEval
samples."""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def progress(message: str) -> None:
    """One timestamped line on stderr, flushed at once, as each stage of a benchmark begins: a long run shows where
    it is, and stdout keeps only the results (the tables)."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def scoring_bar(total: int, desc: str) -> Any:
    """A tqdm bar on stderr for ``total`` completions (shown when stderr is a terminal, as ``trl-sandbox score``
    shows its own); update it from ``Scorer.score``'s ``on_result``."""
    from trl_sandbox.progress import progress_bar

    return progress_bar(None, total=total, desc=desc, unit="completion")


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values`` (nearest rank)."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[rank]


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def table(rows: list[dict[str, Any]], columns: Sequence[str]) -> str:
    """A Markdown table of ``rows`` (floats with 3 significant decimals)."""

    def fmt(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"
        return str(value)

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(fmt(row.get(c, "")) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def humaneval_samples(path: Path, repeat: int) -> list[dict[str, str]]:
    """Write ``repeat`` copies of every HumanEval canonical solution (prompt + body) as a samples file."""
    from trl_sandbox.loading import load_tasks

    rows = load_tasks("humaneval")
    samples = [
        {"task_id": r["task_id"], "completion": r["prompt"] + r["canonical_solution"]}
        for _ in range(repeat)
        for r in rows
    ]
    path.write_text("".join(json.dumps(s) + "\n" for s in samples))
    return samples
