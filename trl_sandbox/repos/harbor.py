"""Harbor task directories, as TRL's ``trl.experimental.harbor`` (``HarborSpec``), OpenEnv's ``harbor_env``,
Repo2RLEnv and rLLM read them, scored as Harbor's test-script verifier scores them.

A task is a directory: ``task.toml`` (``[environment] docker_image``, ``[verifier] timeout_sec`` and ``env``,
``[agent] timeout_sec``), ``instruction.md`` (the prompt), ``environment/`` (its image's build context),
``tests/test.sh`` (the verifier), ``solution/`` (the oracle, never shown). A dataset is a directory of them, or of a
``tasks/`` folder of them (``HarborSpec``'s layout). :func:`harbor_rows` turns one into rows, ``load_tasks(DIR)``'s
(``task_dir``, ``prompt``, ``task_id``: TRL's ``HarborSpec.train_dataset`` has the same ``task_dir`` column, so its
rows score too), and :func:`read_harbor` a row into a :class:`~trl_sandbox.repos.rows.RepoTask`.

The verifier, as Harbor's ``Verifier._verify_test_script`` runs it (and benchflow's internalized copy of it): the
task's ``tests/`` directory goes to ``/tests`` only now (the tree the completion's patch was applied to never held
it), the reward files are cleared, ``/tests/test.sh`` runs with the task's ``[verifier].env`` under its timeout with
its output to ``/logs/verifier/test-stdout.txt``, then the reward is read: ``/logs/verifier/reward.json`` when
present (authoritative: its ``reward``, else its first value, as TRL's ``HarborEnv`` reads ``rewards``), else
``reward.txt`` (one number). A reward file written despite a non-zero exit is accepted, as Harbor accepts it.

Differences, each on purpose: a run that wrote no reward file, or an empty or unreadable one, scores ``error`` (in
Harbor a verifier error; here the completion ran in that tree and may have stopped the verifier, so its penalty
cannot become ``None``). ``[verifier].env`` values are passed as written: ``${VAR}`` references to the host's
environment (Harbor resolves them, for LLM judges' keys) are not resolved, since the code under test would read
them. ``[verifier].user`` is not applied: the tree's only user is its root. Tasks whose image is built from
``environment/Dockerfile`` are refused with the commands to build and import it (no daemon here).
"""

from __future__ import annotations

import io
import re
import sys
import tarfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import TaskFormatError
from .rows import RepoTask

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: Seconds the verifier may run when ``[verifier] timeout_sec`` is not set (Harbor's ``VerifierConfig`` default).
DEFAULT_VERIFIER_TIMEOUT_S = 600.0
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def is_task_dir(path: Path) -> bool:
    """Whether ``path`` is a Harbor task directory (it holds ``task.toml``)."""
    return (path / "task.toml").is_file()


def task_dirs(path: Path) -> list[Path]:
    """The task directories of ``path``: itself when it is one, else those of its ``tasks/`` folder, else its
    subdirectories that are (sorted, as ``HarborSpec`` sorts them)."""
    if is_task_dir(path):
        return [path]
    root = path / "tasks" if (path / "tasks").is_dir() else path
    return sorted(p.parent for p in root.glob("*/task.toml"))


def harbor_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of the Harbor tasks under ``path`` (see :func:`task_dirs`): ``task_format`` ``harbor``, ``task_id``
    (the directory's name), ``task_dir`` (absolute), ``prompt`` (``instruction.md``). Each task is read here, so a
    malformed one is reported now.

    Raises:
        TaskFormatError: no task under ``path``, or a task that :func:`read_harbor` refuses.
    """
    rows = []
    for directory in task_dirs(path):
        row = {"task_format": "harbor", "task_id": directory.name, "task_dir": str(directory.resolve())}
        task = read_harbor(row)
        rows.append({**row, "prompt": task.problem_statement})
    if not rows:
        raise TaskFormatError(f"{path}: no Harbor task (a directory with task.toml) in it")
    return rows


def _tests_archive(tests: Path) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for child in sorted(tests.iterdir()):
            tar.add(child, arcname=child.name)
    return out.getvalue()


def read_harbor(row: Mapping[str, Any]) -> RepoTask:
    """The task of a row naming a Harbor task directory (``task_dir``), read from that directory: its image
    (``[environment] docker_image``, or the row's ``image``), instruction, verifier (``tests/``), timeouts and
    verifier environment. The completion's patch is applied in the image's working directory.

    Raises:
        TaskFormatError: no such directory, no ``task.toml`` or ``tests/test.sh``, a ``task.toml`` that does not
            parse, no image (a task built from ``environment/Dockerfile``: the message says how to import it), or a
            malformed ``[verifier].env``.
    """
    directory = Path(str(row["task_dir"]))
    where = f"Harbor task {directory}"
    if not is_task_dir(directory):
        raise TaskFormatError(f"{where}: no task.toml (a Harbor task is a directory with task.toml, "
                              "instruction.md and tests/test.sh)")
    try:
        config = tomllib.loads((directory / "task.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise TaskFormatError(f"{where}: task.toml does not parse: {exc}") from None
    tests = directory / "tests"
    if not (tests / "test.sh").is_file():
        raise TaskFormatError(f"{where}: no tests/test.sh (Harbor's test-script verifier)")
    environment = config.get("environment") or {}
    image = row.get("image") or environment.get("docker_image")
    if not image:
        build = directory / "environment" / "Dockerfile"
        hint = (f"it builds its image from {build}: build it where docker runs (docker build -t NAME "
                f"{build.parent} && docker save NAME -o image.tar), import it here (trl-sandbox images import "
                "image.tar), and name it in task.toml ([environment] docker_image = \"NAME\") or the row's image")
        raise TaskFormatError(f"{where}: no image; " + (hint if build.is_file() else "set [environment] "
                                                         "docker_image in task.toml"))
    verifier = config.get("verifier") or {}
    env = verifier.get("env") or {}
    if not isinstance(env, Mapping) or not all(_ENV_NAME.fullmatch(str(k)) for k in env):
        raise TaskFormatError(f"{where}: [verifier].env must be a table of variable names to values")
    timeout = float(verifier.get("timeout_sec") or DEFAULT_VERIFIER_TIMEOUT_S)
    instruction = directory / "instruction.md"
    return RepoTask(
        instance_id=str(row.get("task_id") or directory.name), image=str(image), eval_script="", log_parser="",
        eval_type="harbor", fail_to_pass=[], pass_to_pass=[],
        problem_statement=instruction.read_text() if instruction.is_file() else "", source="harbor", repo_dir="",
        timeout_s=timeout + 60.0, verifier_tests=_tests_archive(tests),
        verifier_env={str(k): str(v) for k, v in env.items()}, verifier_timeout_s=timeout,
        extra={"task_dir": str(directory), "agent_timeout_s": (config.get("agent") or {}).get("timeout_sec")},
    )
