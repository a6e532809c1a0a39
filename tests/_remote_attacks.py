"""Attacks on what a remote backend's harness holds, shared by the tests of the hf, e2b and daytona backends (each
runs them through its fake service, ``fake_*.py``, whose sandboxes behave as the service's: see ``_fake_agent.py``).

- the request: a program looks for the request (the tests and the expected outputs) where a remote sandbox could
  leave it (a file named ``.trl-sandbox-stdin-*`` in or near the working directory, ``/proc/*/fd/0``, its parent's
  descriptors) and answers from it. It must never pass; where the harness cannot remove the request file, nothing
  may run at all (``infra_error`` with the harness's message);
- a daemon (``setsid``, double fork) started by one completion, which would copy the next completion's request for
  it: it must be gone when its completion's result is in;
- the service's environment (a token in ``env_vars``, the service's own secrets): the judge has it, the program not;
- the command's output: records a program writes there (through a shell of the command that runs as its user) are
  never taken for the judge's.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trl_sandbox import Scorer, Task

# Expected outputs no program computes: only one that read the request can give them.
STEAL_STDIO = Task.from_row({"task_id": "steal-stdio", "inputs": ["7\n", "11\n"],
                             "outputs": ["hidden-4711", "hidden-815"]})
STEAL_ASSERT = Task.from_row({"task_id": "steal-assert", "test_list": ["assert f(7) == 4711", "assert f(11) == 815"]})

# Every request the program can reach: files named like a request (near the working directory, the harness's and
# the home directories, and the loot a daemon may have left), every descriptor of its ancestors (the judge, the
# shells and ``timeout`` above it: stdin pipes included), and every process's stdin that is a file. /proc's own
# numbers throughout (it may show an outer PID namespace, as in the fakes): never os.getppid().
FIND = r"""
import glob, json, os, select, stat, sys

def _read(path, pipes):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return b""
    try:
        kind = os.fstat(fd).st_mode
        if not (stat.S_ISREG(kind) or (pipes and stat.S_ISFIFO(kind))):
            return b""
        chunks = []
        while select.select([fd], [], [], 0)[0]:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return b""
    finally:
        os.close(fd)

def _ancestors():
    chain, pid = [], "self"
    for _ in range(12):
        try:
            with open("/proc/%s/status" % pid) as f:
                pid = [line.split()[1] for line in f if line.startswith("PPid:")][0]
        except (OSError, IndexError):
            break
        if pid == "0":
            break
        chain.append(pid)
    return chain

def requests():
    places = set()
    for start in (os.getcwd(), os.path.dirname(os.path.abspath(sys.argv[0])), os.environ.get("HOME", "/"),
                  os.environ.get("TMPDIR", "/"), "/tmp"):
        for _ in range(4):
            places.add(start)
            start = os.path.dirname(start)
    paths = []
    for place in places:
        for pattern in (".trl-sandbox-stdin-*", "*/.trl-sandbox-stdin-*", ".loot-*"):
            paths += [(path, False) for path in glob.glob(os.path.join(place, pattern))]
    for pid in _ancestors():
        paths += [(path, True) for path in glob.glob("/proc/%s/fd/*" % pid)]
    paths += [(path, False) for path in glob.glob("/proc/[0-9]*/fd/0")]
    found = []
    for path, pipes in paths:
        text = _read(path, pipes).decode("utf-8", "replace")
        for piece in [text] + text.splitlines():
            try:
                request = json.loads(piece)
            except ValueError:
                continue
            if isinstance(request, dict) and "tests" in request:
                found.append(request)
    return found
"""

STEAL_STDIO_PROGRAM = FIND + r"""
data = sys.stdin.read()
for request in requests():
    if data in request.get("tests", []) and request.get("expected"):
        print(request["expected"][request["tests"].index(data)])
        break
else:
    print("nothing found")
"""

STEAL_ASSERT_PROGRAM = FIND + r"""
import re

def f(x):
    for request in requests():
        for test in request.get("tests", []):
            match = re.match(r"assert f\((\d+)\) == (\d+)", str(test))
            if match and int(match.group(1)) == x:
                return int(match.group(2))
    return None
"""

# The daemon: from the first completion, it copies every request it can read into the working directory for the
# next completion (the STEAL programs read ".loot-*" files there), for 60 s. Its marker is in its command line.
_LOOP = FIND + r"""
import time
here = sys.argv[2]
seen = set()
end = time.time() + 60
while time.time() < end:
    for request in requests():
        text = json.dumps(request)
        if text not in seen:
            seen.add(text)
            with open(os.path.join(here, ".loot-%d" % len(seen)), "w") as f:
                f.write(text)
    time.sleep(0.002)
"""
DAEMON_PROGRAM = "import os, sys\nLOOP = " + repr(_LOOP) + r"""

def f(x):
    here = os.path.dirname(os.path.abspath(sys.argv[0]))
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", LOOP, "{marker}", here])
        os._exit(0)
    return 0
"""


# Records written into the command's output through the descriptors of its ancestors (a shell of the command,
# alive and of the program's user when the sandbox's user is not root): the host must not take them for the judge's.
FORGE_PROGRAM = FIND + r"""
def f(x):
    forged = b'\n{"i": 0, "ok": true}\n{"i": 1, "ok": true}\n{"done": 2}\n'
    for pid in _ancestors():
        for fd in ("1", "2"):
            try:
                out = os.open("/proc/%s/fd/%s" % (pid, fd), os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                continue
            try:
                os.write(out, forged)
            except OSError:
                pass
            os.close(out)
    return None
"""


def _alive(marker: str) -> list[str]:
    """PIDs (this host's /proc) of processes with ``marker`` in their command line."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(pid)
            except OSError:
                pass
    return found


def _scored_nothing(result: Any) -> bool:
    return result.status in ("failed", "error") and result.reward is not None and result.reward <= 0


def check_the_request_cannot_be_stolen(config: Callable[..., Any]) -> None:
    """On a working directory the command's user owns (as on the service), the stealing programs find nothing: the
    stdin one and the assert one fail, and no hidden output appears in what they printed."""
    with Scorer.from_config(config(sandbox_pool_size=1, sandbox_test_timeout=3.0)) as scorer:
        results = scorer.score([STEAL_STDIO, STEAL_ASSERT], [STEAL_STDIO_PROGRAM, STEAL_ASSERT_PROGRAM])
    for result in results:
        assert _scored_nothing(result), result
        assert "hidden-" not in (result.output or ""), result.output


def check_forged_records_are_never_paid(config: Callable[..., Any]) -> None:
    """A wrong program that writes passing records into the command's output, through its ancestors' descriptors, is
    never paid: the scorer keeps only the records the judge signed with the request's secret."""
    with Scorer.from_config(config(sandbox_pool_size=1, sandbox_test_timeout=3.0)) as scorer:
        (result,) = scorer.score([STEAL_ASSERT], [FORGE_PROGRAM])
    assert _scored_nothing(result), result


def check_an_unremovable_request_runs_nothing(config: Callable[..., Any], service: Any) -> None:
    """Where the harness cannot remove the request file (the command's user cannot write the working directory),
    nothing runs: ``infra_error`` (no reward, never the program's failure) with the harness's message, which names
    the directory and the fix."""
    service.read_only_workdir = True
    with Scorer.from_config(config(sandbox_pool_size=1, sandbox_test_timeout=3.0)) as scorer:
        results = scorer.score([STEAL_STDIO, STEAL_ASSERT], [STEAL_STDIO_PROGRAM, STEAL_ASSERT_PROGRAM])
    for result in results:
        assert result.status == "infra_error" and result.reward is None and not result.passed, result
        assert "refusing to run the program" in result.error and "could not be removed" in result.error, result
        assert ".trl-sandbox-requests" in result.error and "No program ran" in result.error, result.error


def check_a_daemon_dies_with_its_completion(config: Callable[..., Any]) -> None:
    """A daemon (``setsid``, double fork) a completion starts is gone once its result is in, so it never reads the
    next completion's request: the next completion, which looks for what the daemon would have copied, fails."""
    marker = "trl-sandbox-daemon-" + secrets.token_hex(6)
    task = Task.from_row({"task_id": "daemon", "test_list": ["assert f(0) == 0"]})
    try:
        with Scorer.from_config(config(sandbox_pool_size=1, sandbox_test_timeout=3.0)) as scorer:
            (first,) = scorer.score([task], [DAEMON_PROGRAM.replace("{marker}", marker)])
            assert first.status == "passed", first
            assert _alive(marker) == [], "the daemon outlived its completion"
            results = scorer.score([STEAL_STDIO, STEAL_ASSERT], [STEAL_STDIO_PROGRAM, STEAL_ASSERT_PROGRAM])
        for result in results:
            assert _scored_nothing(result), result
    finally:
        for pid in _alive(marker):  # a failing run must not leave it behind either
            try:
                os.kill(int(pid), 9)
            except OSError:
                pass


def check_the_program_never_sees_the_services_environment(config: Callable[..., Any], also: tuple[str, ...] = ()
                                                          ) -> None:
    """A secret in the service's environment (``env_vars``) reaches the judge (its tests see it) but never the
    program, nor do the service's own variables named in ``also`` (which the judge sees too)."""
    secret = "service-secret-" + secrets.token_hex(8)
    names = ("TRL_FAKE_SERVICE_SECRET", *also)
    judge_sees = [f"assert __import__('os').environ.get('TRL_FAKE_SERVICE_SECRET') == {secret!r}"]
    judge_sees += [f"assert {name!r} in __import__('os').environ" for name in also]  # tests run in the judge
    task = Task.from_row({"task_id": "environment", "test_list": ["assert f() == []", *judge_sees]})
    program = (f"import os\ndef f():\n    print(dict(os.environ))\n"
               f"    return [n for n in {names!r} if n in os.environ]\n")
    options = {"env_vars": {"TRL_FAKE_SERVICE_SECRET": secret}}
    with Scorer.from_config(config(sandbox_pool_size=1, options=options)) as scorer:
        (result,) = scorer.score([task], [program])
    assert result.status == "passed", result
    assert secret not in (result.output or "") and "PATH" in (result.output or ""), result.output
