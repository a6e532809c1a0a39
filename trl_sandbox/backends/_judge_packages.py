"""The judge's copy of pytest in the local backend: the distributions pytest runs with, copied where sandboxes may read
them, for the judge to import when it runs a KodCode test file (see :mod:`trl_sandbox.harness.pytest_runner`).

The sandbox's interpreter may not see this one's site-packages (another interpreter, or a home directory the sandbox
user cannot enter). Only the judge adds the copy to its path (``$TRL_SANDBOX_JUDGE_PATH``); the program never does.
"""

from __future__ import annotations

import logging
import os
import shutil
import uuid
from pathlib import Path

from ._host import remove_stale, rmtree

logger = logging.getLogger(__name__)

#: Environment variable naming the judge's copy of pytest (see :func:`copy_judge_packages`).
JUDGE_PATH_ENV = "TRL_SANDBOX_JUDGE_PATH"
#: The distributions pytest runs with (pure Python): the judge imports them to run KodCode's test files.
_JUDGE_DISTRIBUTIONS = ("pytest", "pluggy", "iniconfig", "packaging", "pygments", "exceptiongroup", "tomli")


def copy_judge_packages(root_dir: Path) -> Path | None:
    """Copy this interpreter's pytest (and the distributions it imports) into a directory of ``root_dir`` that
    sandboxes may read, for the judge to import (pytest-file tasks): the sandbox's interpreter may not see this one's
    site-packages (another interpreter, or a home directory the sandbox user cannot enter). Only the judge adds it to
    its path; the program never does. Returns None when pytest is not installed here."""
    from importlib import metadata

    sources: dict[str, Path] = {}
    for name in _JUDGE_DISTRIBUTIONS:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        for file in dist.files or ():
            top = file.parts[0]
            if top.endswith((".dist-info", ".egg-info")) or top in ("..", "__pycache__", "bin"):
                continue
            if len(file.parts) == 1 and not top.endswith(".py"):
                continue
            sources.setdefault(top, Path(dist.locate_file(top)))
    remove_stale(root_dir, "judge-lib-")  # copies of processes that were killed before closing
    if "pytest" not in sources:
        return None
    target = root_dir / f"judge-lib-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        target.mkdir(mode=0o755)
        for top, source in sources.items():
            if source.is_dir():
                shutil.copytree(source, target / top, ignore=shutil.ignore_patterns("__pycache__"))
            elif source.is_file():
                shutil.copy2(source, target / top)
        # The file the judge points pytest at (its test module is made in memory: see harness.pytest_runner).
        anchor = "# trl-sandbox: the judge's pytest runs the task's tests from memory\n"
        (target / "test_solution.py").write_text(anchor)
        for path in [target, *target.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
    except OSError as exc:
        logger.warning("trl-sandbox local backend: cannot copy pytest for the judge (%s): pytest-file tasks will need "
                       "pytest in the sandbox's Python", exc)
        rmtree(target)
        return None
    return target
