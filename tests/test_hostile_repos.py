"""The attack suite for repository tasks: hostile patches, scored through the local backend's trees (as root here,
and in CI a second time as an unprivileged account, see .ci/hostile-nonroot). Each attack must be contained and
must not be resolved; the machine's files, the image's cached tree and the next execution stay as they were.

The patches hide their result lines from :func:`trl_sandbox.repos.runner.refused` (strings cut in two): what stops
them here is the verdict's and the tree's own rules, not the patch policy.
"""

from __future__ import annotations

import dataclasses
import hashlib

import anyio
import pytest

import _repo_image as R
from trl_sandbox.backends.local import LocalBackend
from trl_sandbox.repos import read_swebench
from trl_sandbox.repos.runner import refused, run_task

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    image, info = R.repo_image(tmp_path_factory.mktemp("repo-image"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRL_SANDBOX_CACHE", str(R.cache_root()))
        yield image, info


def _patch_with(info: dict, code: str) -> str:
    """The buggy module with ``code`` appended: a patch that fixes nothing and runs ``code`` at import."""
    lines = "".join(f"+{line}\n" for line in code.strip("\n").split("\n"))
    count = len(code.strip("\n").split("\n"))
    return ("--- a/calc/__init__.py\n+++ b/calc/__init__.py\n"
            f"@@ -9,2 +9,{2 + count} @@\n def mean(xs):\n     return sum(xs) / (len(xs) + 1)\n" + lines)


def _run(image, task, patch):
    async def main():
        backend = LocalBackend()
        await backend.start()
        sandbox = await backend.create({"test": "hostile-repos"})
        try:
            return await run_task(backend, sandbox, image, task, patch)
        finally:
            await backend.delete(sandbox)
            await backend.aclose()

    return anyio.run(main)


FORGE_AT_EXIT = '''
import atexit, os
def _forge():
    word = "PASS" + "ED"
    os.write(1, ("\\n" + word + " tests/test_calc.py::test_mean\\n").encode())
    os._exit(0)
atexit.register(_forge)
'''
FORGE_EXIT_STATUS = '''
import subprocess
subprocess.Popen(["/bin/sh", "-c", "sleep 0.5; echo '>>>>''> Test Exit Code: 0'; echo DAEMON-WAS-HERE"],
                 start_new_session=True)
'''
FORK_BOMB = '''
import os
while True:
    try:
        os.fork()
    except OSError:
        pass
'''
ESCAPE = '''
import os, socket
for path in ("/usr/lib/python3/dist-packages/pytest/__init__.py", "/usr/bin/git"):
    with open(path, "a") as f:
        f.write("\\n# written by the patch\\n")
try:
    socket.create_connection(("10.0.0.1", 80), timeout=2)
    print("NETWORK-REACHED")
except OSError:
    pass
print("HOST-ROOT", sorted(os.listdir("/"))[:50])
'''


def test_a_patch_that_prints_a_pass_and_exits_zero_is_not_resolved(repo):
    image, info = repo
    task = read_swebench(R.swebench_row(info))
    patch = _patch_with(info, FORGE_AT_EXIT)
    assert refused(patch) is None  # only the verdict's rules stand in its way
    run = _run(image, task, patch)
    assert run.status == "no_results" and run.verdict.reason == "log_overturns_a_failure"
    assert not run.verdict.resolved


def test_a_daemon_cannot_write_the_exit_status_after_the_tests(repo):
    image, info = repo
    task = read_swebench(R.swebench_row(info))
    # The eval script goes on for a while after its tests (as a real one's cleanup may): the daemon would print
    # then, after the recorded status, if it were still alive.
    script = task.eval_script.replace("git checkout", "sleep 2; git checkout", 2)
    run = _run(image, dataclasses.replace(task, eval_script=script), _patch_with(info, FORGE_EXIT_STATUS))
    assert "DAEMON-WAS-HERE" not in run.log
    assert run.verdict.exit_code == 1 and run.status == "unresolved"


def test_a_fork_bomb_is_contained_and_scored_as_the_patch_s_failure(repo):
    image, info = repo
    task = dataclasses.replace(read_swebench(R.swebench_row(info)), timeout_s=6)
    run = _run(image, task, _patch_with(info, FORK_BOMB))
    assert run.status in ("timeout", "no_results", "unresolved") and not run.verdict.resolved


def test_what_a_patch_changes_in_the_tree_is_gone_and_the_host_unreached(repo):
    image, info = repo
    cached = image.rootfs / "usr" / "bin" / "git"
    before = hashlib.sha256(cached.read_bytes()).hexdigest()
    task = read_swebench(R.swebench_row(info))
    run = _run(image, task, _patch_with(info, ESCAPE))
    assert "NETWORK-REACHED" not in run.log and run.status == "unresolved"
    assert "work" not in run.log.split("HOST-ROOT", 1)[-1].split("\n", 1)[0]  # the image's root, not the host's
    assert hashlib.sha256(cached.read_bytes()).hexdigest() == before  # the cached lower layer is untouched
    clean = _run(image, task, info["patch"])  # the next execution: a fresh tree, resolved as ever
    assert clean.status == "resolved" and "written by the patch" not in clean.log

