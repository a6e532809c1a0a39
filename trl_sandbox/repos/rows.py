"""Repository task rows as the datasets publish them, read into :class:`RepoTask`.

SWE-bench 5.0 instances (``swebench/types.py`` and ``make_test_spec`` in ``swebench/harness/utils.py``, release
5.0.2): self-contained since 2026-02, an instance carries its ``image``, its ``eval_script`` (which checks out the
test files at ``base_commit``, applies ``test_patch`` and runs the tests between the output markers), its
``log_parser`` and ``eval_type``, and ``FAIL_TO_PASS`` / ``PASS_TO_PASS`` (JSON strings of test ids, or lists).

Readers of SWE-smith, R2E-Gym rows and Harbor task directories, and the registration of these rows with
``load_tasks``, come with the runner (docs/repositories.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import TaskFormatError
from .grading import END_TEST_OUTPUT, EVAL_TYPES, TEST_EXIT_CODE
from .log_parsers import PARSERS

#: The shell variable the eval script keeps the test command's exit status in (SWE-bench's ``TEST_EXIT_CODE_VAR``).
EXIT_CODE_VAR = "SWEBENCH_TEST_EXIT_CODE"
#: The fields a SWE-bench 5.0 instance must have to be scored.
SWEBENCH_FIELDS = ("instance_id", "image", "eval_script", "log_parser", "FAIL_TO_PASS", "PASS_TO_PASS")
_SCRIPT_HEADER = ("#!/bin/bash", "set -uxo pipefail")
# Ends every other process of the tree, only where the script is its tree's PID 1 (the runner's): anywhere else (a
# container's exec, a shell) it does nothing.
_END_OTHERS = 'if [ "$$" = 1 ]; then kill -KILL -1 2>/dev/null; fi'


@dataclass
class RepoTask:
    """A repository task: what the runner needs to score a patch, and what the model may be shown.

    Attributes:
        instance_id: The row's id.
        image: The image name the row gives (looked up in :class:`trl_sandbox.images.ImageCache`).
        eval_script: The eval script as the runner runs it (``bash``), recording the test command's exit status
            after the end marker (see :func:`eval_script_of`).
        log_parser: A :data:`~trl_sandbox.repos.log_parsers.PARSERS` name.
        eval_type: ``pass_and_fail`` or ``fail_only``.
        fail_to_pass, pass_to_pass: Test ids.
        problem_statement: The issue text (the prompt's substance).
        base_commit: The commit the repository is at (``""`` where the row does not say).
        source: The dataset family (``swebench``).
        repo_dir: Where the repository is in the image (SWE-bench's ``/testbed``).
        timeout_s: Seconds a run may take (None: the runner's default, SWE-bench's 1800 s).
        extra: The row's other fields, kept as published.
    """

    instance_id: str
    image: str
    eval_script: str
    log_parser: str
    eval_type: str
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    problem_statement: str = ""
    base_commit: str = ""
    source: str = "swebench"
    repo_dir: str = "/testbed"
    timeout_s: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def task_id(self) -> str:
        """The id results and metrics name it by (the row's ``instance_id``)."""
        return self.instance_id


def _ids(row: Mapping[str, Any], name: str, where: str) -> list[str]:
    value = row[name]
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise TaskFormatError(f"{where}: {name} is not a JSON list of test ids") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TaskFormatError(f"{where}: {name} must be a list of test ids (strings)")
    return value


def eval_script_of(script: str) -> str:
    """The eval script as it runs: SWE-bench's shebang and ``set -uxo pipefail``, the instance's commands, and the
    test command's exit status kept just before the end marker and echoed after it (SWE-bench 5.0's
    ``record_test_exit_code``), outside the parsed region. Between the two, where the script is its tree's PID 1
    (:mod:`.runner`), ``kill -KILL -1``: every process the tests left behind ends there, before the status is
    written (one that printed a status of its own later would otherwise be the last word).

    Raises:
        TaskFormatError: the script has no end-of-output marker (nothing would tell its test output apart).
    """
    lines = [line for line in script.strip().split("\n") if line not in _SCRIPT_HEADER]
    for i, line in enumerate(lines):
        if END_TEST_OUTPUT in line:
            lines[i:i + 1] = [f"{EXIT_CODE_VAR}=$?", _END_OTHERS, line,
                              f'echo "{TEST_EXIT_CODE}: ${EXIT_CODE_VAR}"']
            return "\n".join([*_SCRIPT_HEADER, *lines]) + "\n"
    raise TaskFormatError(f"the eval_script has no {END_TEST_OUTPUT!r} line: its test output cannot be told apart")


def read_swebench(row: Mapping[str, Any]) -> RepoTask:
    """A SWE-bench 5.0 instance (see the module docstring).

    Raises:
        TaskFormatError: a missing field (one line naming it), ids that are not a list of strings, an unsupported
            ``log_parser`` or ``eval_type``, an eval script without its markers, or ``image_assets`` (binary test
            files the harness downloads by URL: no network in a sandbox).
    """
    where = f"SWE-bench instance {row.get('instance_id', '?')!r}"
    missing = [name for name in SWEBENCH_FIELDS if name not in row or row[name] in (None, "")]
    if missing:
        raise TaskFormatError(f"{where}: missing {', '.join(missing)} (SWE-bench 5.0 rows carry "
                              f"{', '.join(SWEBENCH_FIELDS)}); a row of an older release needs its eval script")
    if row["log_parser"] not in PARSERS:
        raise TaskFormatError(f"{where}: log_parser {row['log_parser']!r} is not supported; use one of "
                              f"{', '.join(sorted(PARSERS))}")
    eval_type = row.get("eval_type") or "pass_and_fail"
    if eval_type not in EVAL_TYPES:
        raise TaskFormatError(f"{where}: eval_type {eval_type!r} is not supported; use one of {', '.join(EVAL_TYPES)}")
    if row.get("image_assets") not in (None, "", "{}", {}):
        raise TaskFormatError(f"{where}: its image_assets are downloaded by URL at scoring time, which a sandbox "
                              "without network cannot do; such instances (SWE-bench Multimodal) are not supported")
    try:
        script = eval_script_of(str(row["eval_script"]))
    except TaskFormatError as exc:
        raise TaskFormatError(f"{where}: {exc}") from None
    known = {*SWEBENCH_FIELDS, "eval_type", "problem_statement", "base_commit"}
    return RepoTask(
        instance_id=str(row["instance_id"]), image=str(row["image"]), eval_script=script,
        log_parser=str(row["log_parser"]), eval_type=eval_type,
        fail_to_pass=_ids(row, "FAIL_TO_PASS", where), pass_to_pass=_ids(row, "PASS_TO_PASS", where),
        problem_statement=str(row.get("problem_statement") or ""), base_commit=str(row.get("base_commit") or ""),
        extra={k: v for k, v in row.items() if k not in known},
    )


def is_repo_row(row: Mapping[str, Any]) -> bool:
    """Whether ``row`` is a repository task's (its ``task_format`` is ``swebench``, or it has SWE-bench's
    ``instance_id`` and ``FAIL_TO_PASS``)."""
    return row.get("task_format") == "swebench" or ("instance_id" in row and "FAIL_TO_PASS" in row)


def read_task(row: Mapping[str, Any]) -> Any:
    """The task of any row: a :class:`RepoTask` for a repository task's row (:func:`is_repo_row`), else
    :meth:`trl_sandbox.tasks.Task.from_row`'s.

    Raises:
        TaskFormatError: the row is malformed (the reader's one-line reason).
    """
    if isinstance(row, Mapping) and is_repo_row(row):
        return read_swebench(row)
    from ..tasks import Task

    return Task.from_row(row)
