"""Which rows are repository tasks, and the task of any row: the one entry point the reward, the scorer's callers and
``trl-sandbox score`` read rows through (:func:`read_task`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..tasks import Task
from .harbor import read_harbor
from .rows import read_r2e, read_swebench, read_swesmith


def is_repo_row(row: Mapping[str, Any]) -> bool:
    """Whether ``row`` is a repository task's: its ``task_format`` is ``swebench``, ``swesmith``, ``r2e`` or
    ``harbor``, it has SWE-bench's ``instance_id`` and ``FAIL_TO_PASS``, R2E-Gym's ``docker_image`` and
    ``expected_output_json``, or a ``task_dir`` (Harbor's, as TRL's ``HarborSpec`` rows carry it); fields that are
    None count as absent."""
    return (row.get("task_format") in ("swebench", "swesmith", "r2e", "harbor") or (
        row.get("instance_id") is not None and row.get("FAIL_TO_PASS") is not None) or bool(row.get("task_dir"))
        or (row.get("expected_output_json") is not None and bool(row.get("docker_image"))))


def read_task(row: Mapping[str, Any]) -> Any:
    """The task of any row: a :class:`RepoTask` for a repository task's row (:func:`is_repo_row`), else
    :meth:`trl_sandbox.tasks.Task.from_row`'s.

    Raises:
        TaskFormatError: the row is malformed (the reader's one-line reason).
    """
    if isinstance(row, Mapping) and is_repo_row(row):
        # By the fields that hold a value: a batch that mixes the schemas gives each row the others' columns (None).
        if row.get("task_format") == "harbor" or (row.get("task_dir") and row.get("FAIL_TO_PASS") is None):
            return read_harbor(row)
        if row.get("task_format") == "r2e" or (row.get("expected_output_json") is not None
                                                and row.get("FAIL_TO_PASS") is None):
            return read_r2e(row)
        swesmith = row.get("task_format") == "swesmith" or (
            bool(row.get("image_name")) and not row.get("eval_script"))
        return read_swesmith(row) if swesmith else read_swebench(row)
    return Task.from_row(row)
