"""Scoring a patch on a repository task: apply it in a fresh tree of the task's image, run the task's eval script,
grade the log. As SWE-bench 5.0's ``run_instance`` (``swebench/harness/run_evaluation.py``, release 5.0.2) does in
a container, here in a tree of the backend's (:meth:`~trl_sandbox.backends.base.Backend.exec_in_image`), with no
daemon.

What runs, in one tree, as root of the tree (the harness's ``CONTAINER_USER``), its output one stream (stdout and
stderr together, as ``docker exec`` gives it):

1. In the repository (``/testbed``): when the row names its ``base_commit``, every git object that is not an ancestor
   of it goes (branches, tags, remote refs, stashes, reflogs, then ``git gc --prune=now``), so that a fix committed
   after the base cannot be read from the history (SWE-bench's own images had to strip it). Nothing is done where
   nothing is there to strip: a check of ``git rev-list`` first.
2. The patch is applied by the harness's ``GIT_APPLY_CMDS`` in order (``git apply --verbose``, ``--3way``,
   ``--reject``, ``patch --batch --forward --fuzz=5 -p1 -i``), the tree reset between attempts (``git checkout --
   . ; git clean -fd``), then ``git apply --check --reverse`` (a chain that left it applied); if none succeeds, the
   log says ``>>>>> Patch Apply Failed``: no results, the patch's failure.
3. The eval script (the row's, with the exit status recorded: :func:`~trl_sandbox.repos.rows.eval_script_of`) runs
   as the tree's PID 1 and ends every other process of the tree once the test command ends, so nothing the tests
   left behind writes after the recorded status.

The patch, the eval script and this script come as sealed memory files (``/dev/fd/3``...): the tests cannot change
them. The tests do see the tree they run in (the hidden tests are in it once the eval script applied them, as in the
official harness), never the host.

Before anything runs, a patch that would let the tests' own process report for them is refused (:func:`refused`).
"""

from __future__ import annotations

import re
import shlex
import time
from dataclasses import dataclass
from typing import Any

from .grading import RepoVerdict, grade
from .rows import RepoTask

#: SWE-bench 5.0's ``GIT_APPLY_CMDS``, in its order.
APPLY_COMMANDS = ("git apply --verbose", "git apply --verbose --3way", "git apply --verbose --reject",
                  "patch --batch --forward --fuzz=5 -p1 -i")
APPLY_PATCH_PASS = ">>>>> Applied Patch"
APPLY_PATCH_FAIL = ">>>>> Patch Apply Failed"
#: Seconds a repository task's run may take when the row says nothing: SWE-bench's harness default (``--timeout``).
DEFAULT_TIMEOUT_S = 1800.0
_PATCH_FD, _EVAL_FD = 4, 5  # /dev/fd/3 is the runner script itself
# Files a patch may not add or change: each lets code run inside pytest's own process before or around the tests
# (pytest's conftest.py and ini files; Python's site hooks), where it can rewrite what pytest reports.
_REFUSED_NAMES = re.compile(r"(^|/)(conftest\.py|pytest\.ini|sitecustomize\.py|usercustomize\.py|[^/]*\.pth)$")
# Added lines that register or configure pytest plugins from a file pytest reads (setup.cfg, tox.ini, pyproject.toml,
# setup.py): a plugin is code in the reporting process.
_REFUSED_LINES = re.compile(r"pytest11|pytest_plugins|\baddopts\b|\[tool:pytest\]|\[pytest\]|\[tool\.pytest")
# A result line or a harness marker in an added line: a fix never prints what the log parser reads as a verdict.
_FORGED = re.compile(r"\b(PASSED|XFAIL|XPASS)\s+[\w./\[\]-]+::|\.\.\. ok\b|>>>>> ")
_PYTEST_INTERNALS = re.compile(r"^\s*(import|from)\s+_pytest\b|\bTestReport\b|\bpytest_runtest_makereport\b")
_DIFF_PATH = re.compile(r"^(?:\+\+\+|---) (?:[ab]/)?(\S+)", re.MULTILINE)


@dataclass(frozen=True)
class RepoRun:
    """What one run of a repository task gave.

    Attributes:
        verdict: The graded log (:func:`~trl_sandbox.repos.grading.grade`).
        status: ``resolved``, ``unresolved`` (results, not every test as required), ``patch_failed`` (no attempt
            applied it), ``no_results`` (the log does not describe a test run: ``verdict.reason`` says why), or
            ``timeout``.
        log: The whole output, as text.
        duration_s: Seconds the tree ran.
    """

    verdict: RepoVerdict
    status: str
    log: str
    duration_s: float


def refused(patch: str, repo: str = "") -> str | None:
    """Why ``patch`` is refused before it runs, or None. Refused: adding or changing a ``conftest.py``,
    ``pytest.ini``, ``sitecustomize.py``, ``usercustomize.py`` or ``.pth`` file; added lines that register or
    configure a pytest plugin (``pytest11`` entry points, ``pytest_plugins``, ``addopts``, an ini section of
    pytest's); added lines that print a result line or a harness marker (``PASSED path::test``, ``>>>>> ``); added
    lines that reach pytest's internals (``_pytest``, ``TestReport``, the report hook), except in a repository whose
    name says it is pytest's own. Each is code running inside the process that reports the results.
    A fix for the issues these datasets collect needs none of them.
    """
    for path in dict.fromkeys(_DIFF_PATH.findall(patch)):
        if path != "/dev/null" and _REFUSED_NAMES.search(path):
            return f"the patch changes {path}, which runs inside pytest's own process (it could rewrite the results)"
    pytest_repo = "pytest" in repo.lower()
    for line in patch.splitlines():
        if not line.startswith("+") or line.startswith("+++"):
            continue
        if _REFUSED_LINES.search(line):
            return f"the patch configures pytest plugins ({line[1:].strip()[:80]!r})"
        if _FORGED.search(line[1:]) and ("print" in line or "write" in line or "'" in line or '"' in line):
            return f"the patch prints test results or harness markers ({line[1:].strip()[:80]!r})"
        if not pytest_repo and _PYTEST_INTERNALS.search(line[1:]):
            return f"the patch reaches pytest's internals ({line[1:].strip()[:80]!r})"
    return None


def runner_script(repo_dir: str, base_commit: str) -> str:
    """The script that prepares the tree, applies the patch (``/dev/fd/4``) and runs the eval script
    (``/dev/fd/5``); see the module docstring."""
    apply = " ".join(shlex.quote(command) for command in APPLY_COMMANDS)
    strip = ""
    if base_commit:
        base = shlex.quote(base_commit)
        strip = f"""
if [ -n "$(git rev-list -n 1 --all --reflog --not {base} 2>/dev/null)" ] || [ -n "$(git stash list 2>/dev/null)" ]; then
  git update-ref --no-deref HEAD "$(git rev-parse {base})" >/dev/null 2>&1
  git for-each-ref --format='delete %(refname)' | git update-ref --stdin
  rm -f .git/ORIG_HEAD .git/FETCH_HEAD .git/MERGE_HEAD .git/logs/refs/stash
  git reflog expire --expire=now --all && git gc --quiet --prune=now
fi
"""
    return f"""exec 2>&1
cd {shlex.quote(repo_dir)} || {{ echo "trl-sandbox: no repository at {repo_dir}"; exit 1; }}
{strip}
applied=""
attempt=0
for command in {apply}; do
  if [ "$attempt" -gt 0 ]; then git checkout -- . ; git clean -fdq; fi
  attempt=$((attempt + 1))
  if $command /dev/fd/{_PATCH_FD}; then applied=1; break; fi
  echo "Failed to apply patch: $command"
done
if [ -z "$applied" ] && git apply --check --reverse /dev/fd/{_PATCH_FD} 2>/dev/null; then applied=1; fi
if [ -z "$applied" ]; then echo "{APPLY_PATCH_FAIL}"; exit 0; fi
echo "{APPLY_PATCH_PASS}"
exec /bin/bash /dev/fd/{_EVAL_FD}
"""


async def run_task(backend: Any, sandbox: Any, image: Any, task: RepoTask, patch: str, *,
                   timeout_s: float | None = None, limits: Any = None) -> RepoRun:
    """Run ``patch`` on ``task`` in a fresh tree of ``image`` in ``sandbox`` and grade it.

    Args:
        backend, sandbox: Where it runs (:meth:`~trl_sandbox.backends.base.Backend.exec_in_image`).
        image: The task's :class:`~trl_sandbox.images.Image`.
        patch: A unified diff (``""`` applies nothing: the tests run on the unchanged repository).
        timeout_s: Seconds the whole run may take (default: the task's, else :data:`DEFAULT_TIMEOUT_S`).
        limits: The tree's :class:`~trl_sandbox.backends._trees.TreeLimits` (default: the backend's).

    Raises:
        ConfigurationError: the backend does not run repository tasks, or cannot run this image.
        InfrastructureError: the tree could not be prepared or the run could not be completed.
    """
    timeout_s = timeout_s or task.timeout_s or DEFAULT_TIMEOUT_S
    script = runner_script(task.repo_dir, task.base_commit)
    start = time.monotonic()
    result = await backend.exec_in_image(
        sandbox, image, ["/bin/bash", "/dev/fd/3"], timeout_s=timeout_s,
        inputs=[script.encode(), patch.encode(), task.eval_script.encode()], limits=limits)
    log = (result.stdout + result.stderr).decode(errors="replace")
    duration = time.monotonic() - start
    if result.timed_out:
        return RepoRun(RepoVerdict(False, "timeout"), "timeout", log, duration)
    verdict = grade(log, fail_to_pass=task.fail_to_pass, pass_to_pass=task.pass_to_pass,
                    log_parser=task.log_parser, eval_type=task.eval_type)
    if APPLY_PATCH_FAIL in log and APPLY_PATCH_PASS not in log:
        status = "patch_failed"
    elif not verdict.has_results:
        status = "no_results"
    else:
        status = "resolved" if verdict.resolved else "unresolved"
    return RepoRun(verdict, status, log, duration)
