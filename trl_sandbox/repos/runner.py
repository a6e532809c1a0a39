"""Scoring a patch on a repository task: apply it in a fresh tree of the task's image, run the task's eval script,
grade the log. As SWE-bench 5.0's ``run_instance`` (``swebench/harness/run_evaluation.py``, release 5.0.2) does in
a container, here in a tree of the backend's (:meth:`~trl_sandbox.backends.base.Backend.exec_in_image`), with no
daemon.

What runs, in one tree, as root of the tree (the harness's ``CONTAINER_USER``), its output one stream (stdout and
stderr together, as ``docker exec`` gives it):

1. In the repository (``/testbed``): a SWE-smith row's bug patch is applied and committed as the repository's only
   commit (its history holds no parent with the fixed code). Otherwise, when the row names its ``base_commit``, every
   git object that is not an ancestor of it goes (branches, tags, remote refs, stashes, reflogs, then ``git gc
   --prune=now``), so that a fix committed after the base cannot be read from the history (SWE-bench's own images had
   to strip it). Nothing is done where nothing is there to strip: a check of ``git rev-list`` first.
2. The patch is applied by SWE-bench's ``GIT_APPLY_CMDS`` in order (``git apply --verbose``, ``--3way``,
   ``--reject``, ``patch --batch --forward --fuzz=5 -p1 -i``), the tree reset between attempts (``git checkout --
   . ; git clean -fd``), then ``git apply --check --reverse`` (a chain that left it applied); if none succeeds, the
   log says ``>>>>> Patch Apply Failed``: no results, the patch's failure. (SWE-smith's harness tries three of
   these four, without the resets; a patch the fourth applies is applied here too.) Then the test files a SWE-smith
   row names are checked out again: the patch's edits to the tests it is judged by are dropped.
3. The eval script (the row's, with the exit status recorded: :func:`~trl_sandbox.repos.rows.eval_script_of`) runs
   as the tree's PID 1 (on a remote backend, in a sandbox of its own) and ends every process the tests left once
   the test command ends (:data:`~trl_sandbox.repos.rows.END_OTHERS`), so nothing the tests left behind writes after
   the recorded status.

The patch, the eval script and this script come as sealed memory files (``/dev/fd/3``...; on a remote backend,
files opened and unlinked before anything runs), each script read whole before it runs: the tests cannot change
them. The tests do see the tree they run in (the hidden tests are in it once the eval script applied them, as in the
official harness), never the host.

Before anything runs, a patch that would let the tests' own process report for them is refused (:func:`refused`).
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigurationError
from .grading import END_TEST_OUTPUT, START_TEST_OUTPUT, TEST_EXIT_CODE, RepoVerdict, grade
from .rows import END_OTHERS, ENDING_FAILED, RepoTask

#: SWE-bench 5.0's ``GIT_APPLY_CMDS``, in its order.
APPLY_COMMANDS = ("git apply --verbose", "git apply --verbose --3way", "git apply --verbose --reject",
                  "patch --batch --forward --fuzz=5 -p1 -i")
APPLY_PATCH_PASS = ">>>>> Applied Patch"
APPLY_PATCH_FAIL = ">>>>> Patch Apply Failed"
#: What the log says when the task's own preparation failed (its bug patch does not apply to its image).
SETUP_FAILED = ">>>>> trl-sandbox: Task Setup Failed"
#: Seconds a repository task's run may take when the row says nothing: SWE-bench's harness default (``--timeout``).
DEFAULT_TIMEOUT_S = 1800.0
_PATCH_FD, _EVAL_FD, _BUG_FD = 4, 5, 6  # /dev/fd/3 is the runner script itself
# How a script given as a descriptor runs: read whole into bash's memory first, then run (``bash FILE`` reads it as it
# goes, from a file a root process of a remote sandbox could rewrite through /proc/PID/fd while it runs).
_SCRIPT_OF = 'eval "$(</dev/fd/{fd})"'

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
            applied it), ``no_results`` (the log does not describe a test run: ``verdict.reason`` says why),
            ``timeout``, or ``setup_failed`` (the task's own bug patch does not apply to its image: not the model's
            doing).
        log: The whole output, as text.
        duration_s: Seconds the tree ran.
        reward: A Harbor task's verifier reward (``resolved`` when at least 1.0), else None.
    """

    verdict: RepoVerdict
    status: str
    log: str
    duration_s: float
    reward: float | None = None


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


def runner_script(repo_dir: str, base_commit: str, *, bug_patch: bool = False,
                  reset_files: Sequence[str] = ()) -> str:
    """The script that prepares the tree, applies the patch (``/dev/fd/4``) and runs the eval script
    (``/dev/fd/5``); see the module docstring. ``bug_patch``: first apply the task's bug (``/dev/fd/6``) and commit
    the result as the repository's only commit; ``reset_files``: check these out again after the patch."""
    apply = " ".join(shlex.quote(command) for command in APPLY_COMMANDS)
    strip = ""
    if bug_patch:
        strip = f"""
git apply --verbose /dev/fd/{_BUG_FD} || {{ echo "{SETUP_FAILED}: its bug patch does not apply"; exit 0; }}
git checkout -q --orphan trl-sandbox-base && git add -A && \\
  git -c user.name=trl-sandbox -c user.email=trl-sandbox@localhost commit -q --no-verify -m "the task's base" || \\
  {{ echo "{SETUP_FAILED}: its base cannot be committed"; exit 0; }}
git for-each-ref --format='delete %(refname)' | grep -v ' refs/heads/trl-sandbox-base$' | git update-ref --stdin
rm -f .git/ORIG_HEAD .git/FETCH_HEAD .git/MERGE_HEAD .git/logs/refs/stash
git reflog expire --expire=now --all && git gc --quiet --prune=now
"""
    elif base_commit:
        base = shlex.quote(base_commit)
        strip = f"""
if [ -n "$(git rev-list -n 1 --all --reflog --not {base} 2>/dev/null)" ] || [ -n "$(git stash list 2>/dev/null)" ]; then
  git update-ref --no-deref HEAD "$(git rev-parse {base})" >/dev/null 2>&1
  git for-each-ref --format='delete %(refname)' | git update-ref --stdin
  rm -f .git/ORIG_HEAD .git/FETCH_HEAD .git/MERGE_HEAD .git/logs/refs/stash
  git reflog expire --expire=now --all && git gc --quiet --prune=now
fi
"""
    reset = ""
    if reset_files:
        reset = f"git checkout HEAD -- {' '.join(shlex.quote(f) for f in reset_files)} 2>/dev/null || true\n"
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
{reset}exec /bin/bash -c {shlex.quote(_SCRIPT_OF.format(fd=_EVAL_FD))}
"""


#: ``PATH`` in R2E-Gym's runtime (``DOCKER_PATH``): its images' virtual environment first.
R2E_PATH = ("/root/.venv/bin:/root/.local/bin:/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:"
            "/sbin:/bin")


def r2e_script(timeout_s: float) -> str:
    """An R2E-Gym task's run, as R2E-Gym's ``DockerRuntime`` does it (``setup_env``, ``apply_patch``, ``run_tests``):
    the image's virtual environment linked into ``/root``, compiled files removed, ``run_tests.sh`` and
    ``r2e_tests`` moved out of ``/testbed`` to ``/root`` (``SKIP_FILES_NEW``) with the held-out ``/r2e_tests``; the
    history stripped to what ``HEAD`` reaches (see :func:`runner_script`); the patch (``/dev/fd/4``) applied with
    ``git apply --whitespace=fix``; the tests linked into the repository, ``bash /root/run_tests.sh`` under
    ``timeout_s`` between the output markers, every other process ended, the exit status recorded."""
    return f"""exec 2>&1
export PATH={R2E_PATH}
cd /testbed || {{ echo "trl-sandbox: no repository at /testbed"; exit 1; }}
mkdir -p /root/.local/bin
ln -s /testbed/.venv /root/.venv 2>/dev/null
ln -s /testbed/.venv/bin/python /root/.local/bin/python 2>/dev/null
ln -s /testbed/.venv/bin/python /root/.local/bin/python3 2>/dev/null
[ -d /testbed/.venv/bin ] && find /testbed/.venv/bin -type f -executable -exec ln -sf {{}} /root/.local/bin/ \\;
find . -name '*.pyc' -delete; find . -name '__pycache__' -exec rm -rf {{}} + 2>/dev/null
if [ -d /r2e_tests ]; then
  find /r2e_tests -name '*.pyc' -delete; find /r2e_tests -name '__pycache__' -exec rm -rf {{}} + 2>/dev/null
fi
for hidden in run_tests.sh r2e_tests; do [ -e "/testbed/$hidden" ] && mv "/testbed/$hidden" "/root/$hidden"; done
[ -d /r2e_tests ] && mv /r2e_tests /root/r2e_tests
[ -f /root/run_tests.sh ] || {{ echo "{SETUP_FAILED}: the image has no /testbed/run_tests.sh"; exit 0; }}
if [ -n "$(git rev-list -n 1 --all --reflog --not HEAD 2>/dev/null)" ] || [ -n "$(git stash list 2>/dev/null)" ]; then
  git update-ref --no-deref HEAD "$(git rev-parse HEAD)" >/dev/null 2>&1
  git for-each-ref --format='delete %(refname)' | git update-ref --stdin
  rm -f .git/ORIG_HEAD .git/FETCH_HEAD .git/MERGE_HEAD .git/logs/refs/stash
  git reflog expire --expire=now --all && git gc --quiet --prune=now
fi
if git apply --whitespace=fix /dev/fd/{_PATCH_FD}; then echo "{APPLY_PATCH_PASS}"
else echo "{APPLY_PATCH_FAIL}"; exit 0; fi
rm -rf /testbed/r2e_tests && ln -s /root/r2e_tests /testbed/r2e_tests
echo "+ : '{START_TEST_OUTPUT}'"
timeout -s KILL {int(timeout_s)} bash /root/run_tests.sh
code=$?
{END_OTHERS}
echo "+ : '{END_TEST_OUTPUT}'"
echo "{TEST_EXIT_CODE}: $code"
"""


#: What the runner prints before each verifier output it reads (Harbor tasks); the last block of each counts.
VERIFIER_BLOCK = ">>>>> trl-sandbox verifier:"


def harbor_script(workdir: str, timeout_s: float, env: dict[str, str]) -> str:
    """A Harbor task's run: apply the patch (``/dev/fd/4``) in ``workdir`` as :func:`runner_script` does, then
    Harbor's test-script verifier: ``/tests`` from the task's ``tests/`` (``/dev/fd/6``, a tar), the reward files
    cleared, ``/tests/test.sh > /logs/verifier/test-stdout.txt 2>&1`` under ``timeout_s`` with ``env``; then every
    other process of the tree ends, and the exit status and the reward files are printed (base64) after
    :data:`VERIFIER_BLOCK` markers (see :mod:`.harbor`)."""
    apply = " ".join(shlex.quote(command) for command in APPLY_COMMANDS)
    exports = "".join(f"export {name}={shlex.quote(value)}\n" for name, value in env.items())
    return f"""exec 2>&1
cd {shlex.quote(workdir)} || {{ echo "trl-sandbox: no working directory {workdir}"; exit 1; }}
applied=""
attempt=0
git_tree=""
git rev-parse --is-inside-work-tree >/dev/null 2>&1 && git_tree=1
for command in {apply}; do
  if [ "$attempt" -gt 0 ] && [ -n "$git_tree" ]; then git checkout -- . ; git clean -fdq; fi
  attempt=$((attempt + 1))
  case "$command" in git*) [ -n "$git_tree" ] || continue ;; esac
  if $command /dev/fd/{_PATCH_FD}; then applied=1; break; fi
  echo "Failed to apply patch: $command"
done
if [ -z "$applied" ]; then echo "{APPLY_PATCH_FAIL}"; exit 0; fi
echo "{APPLY_PATCH_PASS}"
rm -rf /tests /logs/verifier && mkdir -p /tests /logs/verifier && chmod 777 /logs/verifier
tar -xf /dev/fd/{_BUG_FD} -C /tests || {{ echo "{SETUP_FAILED}: the image has no tar to unpack tests/ with"; exit 0; }}
chmod +x /tests/test.sh
{exports}timeout -s KILL {int(timeout_s) + 1} /tests/test.sh > /logs/verifier/test-stdout.txt 2>&1
code=$?
{END_OTHERS}
echo "{VERIFIER_BLOCK} exit $code"
for name in reward.json reward.txt; do
  if [ -f "/logs/verifier/$name" ]; then echo "{VERIFIER_BLOCK} $name $(base64 -w0 "/logs/verifier/$name")"; fi
done
echo "{VERIFIER_BLOCK} test-stdout"
tail -c 2000 /logs/verifier/test-stdout.txt
"""


def harbor_reward(log: str) -> tuple[float | None, str | None, int | None]:
    """The reward the verifier wrote, read from the runner's log (the last block of each file): ``reward.json``
    when present (its ``reward``, else its first value), else ``reward.txt``; with the reason when there is none
    (``no_reward_file``, ``empty_reward_file``, ``unreadable_reward_file``) and the verifier's exit status."""
    import base64
    import json

    blocks: dict[str, str] = {}
    code = None
    for line in log.splitlines():
        if line.startswith(VERIFIER_BLOCK):
            fields = line[len(VERIFIER_BLOCK):].split()
            if fields[:1] == ["exit"] and len(fields) == 2 and fields[1].lstrip("-").isdigit():
                code, blocks = int(fields[1]), {}  # a later run of the verifier's output: start again
            elif fields[:1] in (["reward.json"], ["reward.txt"]):
                blocks[fields[0]] = fields[1] if len(fields) > 1 else ""
    if not blocks:
        return None, "no_reward_file", code
    name = "reward.json" if "reward.json" in blocks else "reward.txt"
    try:
        text = base64.b64decode(blocks[name]).decode().strip()
    except ValueError:
        return None, "unreadable_reward_file", code
    if not text:
        return None, "empty_reward_file", code
    try:
        if name == "reward.json":
            rewards = json.loads(text)
            value = rewards.get("reward", next(iter(rewards.values()))) if isinstance(rewards, dict) else None
        else:
            value = text
        reward = float(value)
    except (ValueError, TypeError, StopIteration):
        return None, "unreadable_reward_file", code
    if reward != reward or reward in (float("inf"), float("-inf")):
        return None, "unreadable_reward_file", code
    return reward, None, code


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
    if task.source == "harbor":
        if not (task.repo_dir or image.workdir):
            raise ConfigurationError(f"Harbor task {task.task_id!r}: the working directory of its image "
                                     f"{task.image!r} is not known here: import the image on this host (trl-sandbox "
                                     "images import) so that its WorkingDir is read, or use the local backend")
        script = harbor_script(task.repo_dir or image.workdir, task.verifier_timeout_s or timeout_s,
                               task.verifier_env)
        inputs = [script.encode(), patch.encode(), b"", task.verifier_tests]
    elif task.source == "r2e":
        inputs = [r2e_script(timeout_s - 60.0).encode(), patch.encode()]
    else:
        script = runner_script(task.repo_dir, task.base_commit, bug_patch=bool(task.bug_patch),
                               reset_files=task.reset_files)
        inputs = [script.encode(), patch.encode(), task.eval_script.encode()]
        if task.bug_patch:
            inputs.append(task.bug_patch.encode())
    start = time.monotonic()
    result = await backend.exec_in_image(sandbox, image, ["/bin/bash", "-c", _SCRIPT_OF.format(fd=3)],
                                         timeout_s=timeout_s, inputs=inputs, limits=limits)
    log = (result.stdout + result.stderr).decode(errors="replace")
    duration = time.monotonic() - start
    if result.timed_out:
        return RepoRun(RepoVerdict(False, "timeout"), "timeout", log, duration)
    if task.source == "harbor":
        return _harbor_run(log, duration)
    verdict = grade(log, fail_to_pass=task.fail_to_pass, pass_to_pass=task.pass_to_pass,
                    log_parser=task.log_parser, eval_type=task.eval_type, expected=task.expected)
    if SETUP_FAILED in log and APPLY_PATCH_PASS not in log:
        status = "setup_failed"
    elif APPLY_PATCH_FAIL in log and APPLY_PATCH_PASS not in log:
        status = "patch_failed"
    elif not verdict.has_results:
        status = "no_results"
    else:
        status = "resolved" if verdict.resolved else "unresolved"
    return RepoRun(verdict, status, log, duration)


def _harbor_run(log: str, duration: float) -> RepoRun:
    # What the tests print can reach this log (a process may open PID 1's stdout), but only before the verifier's
    # exit line, which is written after every other process ended: a setup failure counts only without one.
    if APPLY_PATCH_FAIL in log and APPLY_PATCH_PASS not in log:
        return RepoRun(RepoVerdict(False, "failure_marker"), "patch_failed", log, duration)
    if ENDING_FAILED in log:  # processes of the tests outlived the verifier: what follows may be theirs
        return RepoRun(RepoVerdict(False, "failure_marker"), "no_results", log, duration)
    reward, reason, code = harbor_reward(log)
    if code is None and SETUP_FAILED in log:
        return RepoRun(RepoVerdict(False, "setup_failed"), "setup_failed", log, duration)
    if code == 137:  # `timeout -s KILL`: the verifier ran past [verifier] timeout_sec (Harbor: no reward)
        return RepoRun(RepoVerdict(False, "timeout", exit_code=code), "timeout", log, duration)
    if reward is None:
        return RepoRun(RepoVerdict(False, reason, exit_code=code), "no_results", log, duration)
    verdict = RepoVerdict(True, exit_code=code)
    return RepoRun(verdict, "resolved" if reward >= 1.0 else "unresolved", log, duration, reward)
