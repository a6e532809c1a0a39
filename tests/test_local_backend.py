"""The local backend: isolation, limits, cleanup, and the backend contract."""

import os
import subprocess

import anyio
import pytest

from trl_sandbox import InfrastructureError, UnknownBackendError
from trl_sandbox.backends import get_backend
from trl_sandbox.backends.local import LocalBackend


def run(backend, code, *, timeout_s=5.0, stdin=b""):
    async def go():
        sandbox = await backend.create({"test": "local"})
        try:
            return await backend.exec(sandbox, [*sandbox.python, "-c", code], stdin=stdin, timeout_s=timeout_s), sandbox
        finally:
            await backend.delete(sandbox)

    return anyio.run(go)


@pytest.fixture(scope="module")
def backend(sandbox_root):
    b = LocalBackend(root_dir=sandbox_root, output_limit_bytes=4096)
    anyio.run(b.start)
    yield b
    anyio.run(b.aclose)


def test_describe_names_the_active_layers(backend):
    text = backend.describe()
    assert "namespaces net+pid" in text and "landlock" in text and "seccomp" in text and "rlimits" in text


def test_runs_with_empty_env_unprivileged_in_own_pid_namespace(backend, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_secret_should_not_leak")
    code = "import os, sys; print(os.getpid(), os.getuid(), sorted(os.environ)); print(sys.stdin.read())"
    result, _ = run(backend, code, stdin=b"hello")
    pid, uid, env = result.stdout.decode().splitlines()[0].split(" ", 2)
    assert result.exit_code == 0 and pid == "1"
    assert int(uid) != 0 or os.geteuid() != 0
    assert "HF_TOKEN" not in env and "hello" in result.stdout.decode()


def test_network_is_unreachable(backend):
    code = (
        "import socket\n"
        "for family, addr in [(socket.AF_INET, ('127.0.0.1', 22)), (socket.AF_INET, ('8.8.8.8', 53))]:\n"
        "    try:\n        s = socket.socket(family, socket.SOCK_STREAM); s.settimeout(1)\n"
        "        s.connect(addr); print('CONNECTED')\n"
        "    except OSError as e:\n        print('blocked', e.errno)\n"
    )
    result, _ = run(backend, code)
    assert b"CONNECTED" not in result.stdout and result.stdout.count(b"blocked") == 2


def test_timeout_kills_the_whole_process_tree(backend):
    code = (
        "import os, time\n"
        "for _ in range(3):\n"
        "    if os.fork() == 0:\n"
        "        os.setsid()\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(600)\n"
        "        time.sleep(600)\n"
        "time.sleep(600)\n"
    )
    result, sandbox = run(backend, code, timeout_s=1.0)
    assert result.timed_out and result.exit_code is None
    if os.geteuid() == 0:
        uid = backend._uid(sandbox)
        left = subprocess.run(["pgrep", "-u", str(uid)], capture_output=True, text=True).stdout.split()
        assert left == [], f"processes survived the sandbox: {left}"


def test_output_is_capped(backend):
    result, _ = run(backend, "import sys; sys.stdout.write('x' * 100000); sys.stderr.write('y' * 100000)")
    assert result.output_truncated and len(result.stdout) == 4096 and len(result.stderr) == 4096


def test_memory_limit(sandbox_root):
    b = LocalBackend(root_dir=sandbox_root, memory_limit_bytes=128 << 20)
    anyio.run(b.start)
    try:
        result, _ = run(b, "x = bytearray(512 << 20)")
    finally:
        anyio.run(b.aclose)
    assert result.exit_code != 0 and b"MemoryError" in result.stderr


def test_scratch_is_fresh_and_removed(backend, sandbox_root):
    async def go():
        sandbox = await backend.create({"test": "scratch"})
        try:
            first = await backend.exec(sandbox, [*sandbox.python, "-c", "open('left.txt','w').write('x'); import os; print(os.getcwd())"], timeout_s=5)
            second = await backend.exec(sandbox, [*sandbox.python, "-c", "import os; print(os.listdir('.'))"], timeout_s=5)
            return first, second, list((sandbox_root / sandbox.id / "runs").iterdir())
        finally:
            await backend.delete(sandbox)

    first, second, runs = anyio.run(go)
    assert second.stdout.strip() == b"[]" and runs == []
    assert not os.path.exists(first.stdout.decode().strip())


def test_write_files_list_and_delete(backend):
    async def go():
        a = await backend.create({"run": "r1", "rank": "0"})
        b = await backend.create({"run": "r2", "rank": "0"})
        await backend.write_files(a, {"pkg/data.txt": b"payload"})
        read = await backend.exec(a, [*a.python, "-c", f"print(open('{a.workdir}/pkg/data.txt').read())"], timeout_s=5)
        listed = {s.id for s in await backend.list({"run": "r1"})}
        with pytest.raises(InfrastructureError):
            await backend.write_files(a, {"../escape": b"x"})
        await backend.delete(a)
        await backend.delete(b)
        await backend.delete(b)  # deleting twice is fine
        with pytest.raises(InfrastructureError, match="does not exist"):
            await backend.exec(a, ["true"], timeout_s=1)
        return read, listed, a.id, await backend.list({"rank": "0"})

    read, listed, a_id, after = anyio.run(go)
    assert read.stdout.strip() == b"payload" and listed == {a_id} and after == []


def test_unknown_backend_name_is_one_clear_error():
    with pytest.raises(UnknownBackendError, match="available backends: 'local'"):
        get_backend("dayton")


def test_system_v_ipc_and_message_queues_are_denied(backend):
    """They would outlive an execution in the sandbox's IPC namespace (seccomp denies creating them)."""
    code = (
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "print(libc.shmget(0, 4096, 0o1600), ctypes.get_errno(), libc.semget(0, 1, 0o1600), libc.msgget(0, 0o1600))\n"
    )
    result, _ = run(backend, code)
    assert result.stdout.split() == [b"-1", str(__import__("errno").EPERM).encode(), b"-1", b"-1"], result


def _judge_processes():
    """PIDs of the judge servers started by this process (descendants named ``trl-sbx-judge``)."""
    me, parents, names = os.getpid(), {}, {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                head, tail = open(f"/proc/{entry}/stat").read().rsplit(")", 1)
            except OSError:
                continue
            parents[int(entry)], names[int(entry)] = int(tail.split()[1]), head.split("(", 1)[1]
    found = []
    for pid, name in names.items():
        p = pid
        while p in parents and p != me:
            p = parents[p]
        if p == me and name == "trl-sbx-judge":
            found.append(pid)
    return found


def test_a_dead_judge_server_is_an_infrastructure_failure_and_the_sandbox_is_replaced(sandbox_root):
    """Killing a sandbox's judge server (as a crash would) costs no reward: the completion is retried on a new
    sandbox and passes."""
    import signal

    from trl_sandbox import SandboxConfig, Scorer, Task

    task = Task.from_row({"task_id": "sq", "test_list": ["assert f(3) == 9"]})
    config = SandboxConfig(sandbox_pool_size=1, sandbox_backend_options={"root_dir": str(sandbox_root)})
    others = set(_judge_processes())  # judges of pools other tests keep open
    with Scorer.from_config(config) as scorer:
        (first,) = scorer.score([task], ["def f(x):\n    return x * x\n"])
        judges = set(_judge_processes()) - others
        assert first.status == "passed" and len(judges) == 1
        os.kill(judges.pop(), signal.SIGKILL)
        (second,) = scorer.score([task], ["def f(x):\n    return x * x\n"])
        assert second.status == "passed", second
        assert set(_judge_processes()) - others


def test_each_execution_starts_from_its_own_random_seed(backend):
    """Workers are forked from one server without Python's after-fork handlers; the server reseeds ``random``
    before each fork, as a fresh interpreter would be seeded."""
    import json

    from trl_sandbox.harness.archive import HARNESS_FILES, HARNESS_NAME

    request = {"mode": "stdio", "program": "import random, sys\nprint(random.random(), file=sys.stderr)\n",
               "tests": [""], "expected": [""], "test_timeout_s": 5.0, "output_limit": 1000}

    async def go():
        sandbox = await backend.create({"test": "local"})
        try:
            await backend.write_files(sandbox, HARNESS_FILES)
            outs = []
            for _ in range(3):
                result = await backend.exec(sandbox, [*sandbox.python, f"{sandbox.workdir}/{HARNESS_NAME}"],
                                            stdin=json.dumps(request).encode(), timeout_s=10)
                outs.append(result.stderr.decode().strip())  # what the program printed on stderr
            return outs
        finally:
            await backend.delete(sandbox)

    outs = anyio.run(go)
    assert len(outs) == 3 and len(set(outs)) == 3, outs
