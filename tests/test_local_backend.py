"""The local backend: isolation, limits, cleanup, and the backend contract."""

import os
import subprocess
from pathlib import Path

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
        "for family, addr in [(socket.AF_INET, ('127.0.0.1', 22)), (socket.AF_INET, ('192.0.2.1', 53))]:\n"
        "    try:\n        s = socket.socket(family, socket.SOCK_STREAM); s.settimeout(1)\n"
        "        s.connect(addr); print('CONNECTED')\n"
        "    except OSError as e:\n        print('blocked', e.errno)\n"
    )
    result, _ = run(backend, code)
    # refused at once (an errno), never a timeout (errno None: the packets went out; 192.0.2.1 is TEST-NET-1)
    assert b"CONNECTED" not in result.stdout and result.stdout.count(b"blocked") == 2
    assert b"blocked None" not in result.stdout, result.stdout


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
        left = subprocess.run(["pgrep", "-u", str(uid)], capture_output=True, text=True, check=False).stdout.split()
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


def test_an_execution_that_starts_while_its_sandbox_is_deleted_is_refused_and_leaves_nothing(own_sandbox_root):
    """Ctrl-C during a batch: the closing pool deletes the sandboxes that executions still hold, and their
    executions go on. One that starts on a sandbox whose deletion has begun is an infrastructure error at once.
    Before, with fork servers, it ran a launcher of its own in the tree being removed, whose scratch directory could
    keep the sandbox's directory on disk (CI, 2026-12-02: the Ctrl-C test of ``score`` left a ``local-...``)."""
    backend = LocalBackend(root_dir=own_sandbox_root)
    outcome = {}

    async def execute(sandbox):
        await anyio.sleep(0)  # once the deletion has begun (it waits for the fork server to stop)
        try:
            outcome["result"] = await backend.exec(sandbox, [*sandbox.python, "-c", "print(1)"], timeout_s=30)
        except InfrastructureError as exc:
            outcome["error"] = str(exc)

    async def scenario():
        await backend.start()
        try:
            sandbox = await backend.create({})
            async with anyio.create_task_group() as tg:
                tg.start_soon(backend.delete, sandbox)
                tg.start_soon(execute, sandbox)
        finally:
            await backend.aclose()

    anyio.run(scenario)
    assert "does not exist (it was deleted)" in outcome.get("error", ""), outcome
    assert not list(own_sandbox_root.iterdir())


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
                with open(f"/proc/{entry}/stat") as f:
                    head, tail = f.read().rsplit(")", 1)
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


# -- toolchains: looked up when their language is first used -------------------------------------------------------


def _spy_probes(monkeypatch, result=None, delay_s=0.3):
    """Record each toolchain probe of the local backend (the real one unless ``result``), slowed down so that
    completions arriving together overlap it."""
    import time

    from trl_sandbox.backends import _toolchains

    calls = []
    real = _toolchains.probe_toolchain

    def spy(language, *args):
        calls.append(language)
        time.sleep(delay_s)
        return result if result is not None else real(language, *args)

    monkeypatch.setattr(_toolchains, "probe_toolchain", spy)
    return calls


def test_python_scoring_probes_no_toolchain_and_concurrent_completions_probe_once(own_sandbox_root, monkeypatch):
    """Starting the pool and scoring Python runs no compiler; two C++ completions arriving together probe g++ once,
    and the readiness line says what was probed."""
    from trl_sandbox import SandboxConfig, Scorer, Task

    calls = _spy_probes(monkeypatch)
    config = SandboxConfig(sandbox_pool_size=2, sandbox_backend_options={"root_dir": str(own_sandbox_root)})
    task = Task.from_row({"task_id": "sq", "test_list": ["assert f(3) == 9"]})
    row = {"task_id": "even", "language": "cpp", "inputs": ["4\n", "3\n"], "outputs": ["YES\n", "NO\n"]}
    programs = ["#include <cstdio>\nint main(){int n; std::scanf(\"%d\", &n); std::puts(n % 2 ? \"NO\" : \"YES\");}\n",
                "#include <iostream>\nint main(){int n; std::cin >> n; std::cout << (n % 2 ? \"NO\" : \"YES\") << '\\n';}\n"]
    with Scorer.from_config(config) as scorer:
        backend = scorer.pool.backend
        assert backend.describe().endswith("other languages: probed when first used")
        results = scorer.score([task, task], ["def f(x):\n    return x * x\n", "def f(x):\n    return x ** 2\n"])
        assert [r.status for r in results] == ["passed", "passed"] and calls == []
        results = scorer.score([Task.from_row(row)] * 2, programs)
        assert calls == ["cpp"]
        assert "other languages: cpp (" in backend.describe() and "the others probed when first used" in backend.describe()
        if "cpp" in backend.toolchains:
            assert [r.status for r in results] == ["passed", "passed"], [r.error for r in results]
        else:  # no g++ here: the harness says what to install, as before
            assert all(r.status == "invalid_task" and "apt-get install g++" in r.error for r in results)
        scorer.score([Task.from_row(row)], [programs[0] + "// again\n"])
        assert calls == ["cpp"]


def test_a_toolchain_found_after_start_reaches_the_running_fork_servers(own_sandbox_root, monkeypatch):
    """A toolchain whose directories were not readable when the sandboxes' fork servers started (installed since)
    gets them: the servers, which cannot widen their own Landlock domain, restart before their next execution."""
    import json
    import tempfile

    from trl_sandbox.harness.archive import HARNESS_FILES, HARNESS_NAME
    from trl_sandbox.languages import build_spec

    extra = tempfile.mkdtemp(prefix="trl-sandbox-test-toolchain-")
    try:
        os.chmod(extra, 0o755)
        with open(os.path.join(extra, "conf"), "w") as f:
            f.write("found")
        os.chmod(os.path.join(extra, "conf"), 0o644)
        calls = _spy_probes(monkeypatch, result=("fakejavac 1.0", [extra]), delay_s=0.0)
        read = f"print(open({os.path.join(extra, 'conf')!r}).read())"
        request = {"mode": "stdio", "program": "class Main {}", "tests": [""], "expected": [""], "test_timeout_s": 5.0,
                   "output_limit": 1000, "build": build_spec("java", None, "class Main {}")}

        async def go():
            backend = LocalBackend(root_dir=own_sandbox_root)
            await backend.start()
            try:
                if not backend._landlock_abi:
                    pytest.skip("no Landlock here")
                sandbox = await backend.create({"test": "local"})
                await backend.write_files(sandbox, HARNESS_FILES)
                before = await backend.exec(sandbox, [*sandbox.python, "-c", read], timeout_s=10)
                server = backend._servers.get(sandbox.id)
                await backend.exec(sandbox, [*sandbox.python, f"{sandbox.workdir}/{HARNESS_NAME}"],
                                   stdin=json.dumps(request).encode(), timeout_s=30)
                after = await backend.exec(sandbox, [*sandbox.python, "-c", read], timeout_s=10)
                restarted = backend._servers.get(sandbox.id) not in (server, None)
                await backend.delete(sandbox)
                return before, after, restarted, backend.describe()
            finally:
                await backend.aclose()

        before, after, restarted, described = anyio.run(go)
        assert calls == ["java"]
        assert before.exit_code != 0 and b"PermissionError" in before.stderr, before
        assert after.exit_code == 0 and after.stdout == b"found\n" and restarted, after
        assert "java (fakejavac 1.0)" in described
    finally:
        import shutil

        shutil.rmtree(extra, ignore_errors=True)


# -- nothing left behind -------------------------------------------------------------------------------------------


@pytest.fixture
def own_cgroup_parent(monkeypatch):
    """The parent cgroup of this test's sandboxes, named for the test alone (runs elsewhere on this machine share
    ``trl-sandbox``); None where cgroups are not writable here."""
    import uuid

    from trl_sandbox.backends import _cgroups

    name = f"trl-sandbox-test-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    monkeypatch.setattr(_cgroups, "_PARENT", name)
    bases = _cgroups.Cgroups.writable().bases
    yield [base / name for base in bases.values()] or None
    for base in bases.values():  # what a failed test left (its groups hold no process: they are left empty)
        for group in [*(base / name).glob("*/"), base / name]:
            try:
                group.rmdir()
            except OSError:
                pass


@pytest.fixture
def tmp_root_parent():
    """A directory the sandbox uid can pass through (as /tmp), for a root_dir the backend makes itself."""
    import shutil
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp(prefix="trl-sandbox-test-parent-"))
    path.chmod(0o711)
    yield path
    leftovers = sorted(p.name for p in path.iterdir())
    shutil.rmtree(path, ignore_errors=True)
    assert not leftovers, leftovers


def test_closing_removes_the_root_dir_and_parent_cgroups_it_made(tmp_root_parent, own_cgroup_parent):
    root = tmp_root_parent / "root"

    async def go():
        backend = LocalBackend(root_dir=root)
        await backend.start()
        sandbox = await backend.create({"test": "local"})
        result = await backend.exec(sandbox, [*sandbox.python, "-c", "print(1)"], timeout_s=10)
        if own_cgroup_parent:
            assert all(p.is_dir() for p in own_cgroup_parent)
        await backend.delete(sandbox)
        await backend.aclose()
        return result

    assert anyio.run(go).stdout == b"1\n"
    assert not root.exists()
    assert not any(p.exists() for p in own_cgroup_parent or ())


def test_a_root_dir_that_existed_before_stays(own_sandbox_root, own_cgroup_parent):
    """A root_dir the user made is theirs: the backend leaves it (empty: the fixture checks)."""

    async def go():
        backend = LocalBackend(root_dir=own_sandbox_root)
        await backend.start()
        await backend.aclose()

    anyio.run(go)
    assert own_sandbox_root.is_dir()
    assert not any(p.exists() for p in own_cgroup_parent or ())


def test_the_default_root_is_shared_by_live_runs_and_removed_by_the_last(tmp_root_parent, own_cgroup_parent,
                                                                        monkeypatch):
    """``$TMPDIR/trl-sandbox-<euid>`` (here under a test directory): two live backends share it and the parent cgroup;
    closing one leaves both to the other, which keeps working; closing the second removes them."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_root_parent))
    root = tmp_root_parent / f"trl-sandbox-{os.geteuid()}"

    async def use(backend):
        sandbox = await backend.create({"test": "local"})
        try:
            return (await backend.exec(sandbox, [*sandbox.python, "-c", "print(2)"], timeout_s=10)).stdout
        finally:
            await backend.delete(sandbox)

    async def go():
        first, second = LocalBackend(), LocalBackend()
        assert first.root_dir == root
        await first.start()
        await second.start()
        kept = await second.create({"test": "kept"})
        assert await use(first) == b"2\n" and await use(second) == b"2\n"
        await first.aclose()
        assert root.is_dir() and all(p.is_dir() for p in own_cgroup_parent or ())
        assert await use(second) == b"2\n"
        await second.delete(kept)
        assert root.is_dir()  # the second run's mark holds it while it lives, even with no sandbox
        await second.aclose()

    anyio.run(go)
    assert not root.exists()
    assert not any(p.exists() for p in own_cgroup_parent or ())


def test_the_default_root_must_be_this_users_directory(tmp_root_parent, monkeypatch):
    """Anyone may create names in /tmp: a symbolic link there is refused, not followed."""
    import tempfile

    from trl_sandbox import ConfigurationError

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_root_parent))
    elsewhere = tmp_root_parent / "elsewhere"
    elsewhere.mkdir()
    (tmp_root_parent / f"trl-sandbox-{os.geteuid()}").symlink_to(elsewhere)
    try:
        with pytest.raises(ConfigurationError, match="is not a directory of user"):
            anyio.run(LocalBackend().start)
        assert list(elsewhere.iterdir()) == []
    finally:
        (tmp_root_parent / f"trl-sandbox-{os.geteuid()}").unlink()
        elsewhere.rmdir()


def test_runs_entering_and_leaving_one_root_and_cgroup_parent_at_once_never_fail(tmp_root_parent,
                                                                                 own_cgroup_parent):
    """A run that starts while another removes the shared root or parent cgroup makes them again: threads race
    ``mkdir`` against ``rmdir`` for a while, and every entry holds its root, every sandbox gets its groups."""
    import threading

    from trl_sandbox.backends._cgroups import Cgroups
    from trl_sandbox.backends._host import enter_root, leave_root

    root = tmp_root_parent / "shared"
    cgroups = Cgroups.writable()
    errors = []

    def run(n):
        try:
            for i in range(150):
                presence, _ = enter_root(root, private=True)
                assert presence.exists()
                if own_cgroup_parent and i % 3 == 0:
                    cgroups.create(f"race-{n}-{i}", 1 << 30, 64)
                    assert all(p.is_dir() for p in cgroups.dirs(f"race-{n}-{i}").values())
                    cgroups.delete(f"race-{n}-{i}")
                    cgroups.remove_parents()
                leave_root(presence, remove=True)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(repr(exc))

    threads = [threading.Thread(target=run, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert not root.exists()
    assert not any(p.exists() for p in own_cgroup_parent or ())


def test_the_uid_registry_never_hands_out_a_held_uid_and_sweeps_what_the_dead_left(tmp_path, monkeypatch):
    """Claims of one process and of another never share a uid; a claim whose holder died (its file stays, unlocked)
    is swept; a held one never is."""
    import subprocess
    import sys

    from trl_sandbox.backends import _uids

    monkeypatch.setenv(_uids.REGISTRY_ENV, str(tmp_path / "uids"))
    mine = [_uids.claim(0) for _ in range(3)]
    assert len({c.uid for c in mine}) == 3
    script = ("import json, os\nfrom trl_sandbox.backends import _uids\n"
              "print(json.dumps([_uids.claim(0).uid for _ in range(3)]), flush=True)\nos._exit(0)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60,
                         env={**os.environ, _uids.REGISTRY_ENV: str(tmp_path / "uids")}).stdout
    theirs = __import__("json").loads(out)  # that process died holding them: its files stay, unlocked
    assert not {c.uid for c in mine} & set(theirs)
    assert sorted(int(p.name) for p in (tmp_path / "uids").iterdir()) == sorted([c.uid for c in mine] + theirs)
    assert _uids.sweep() == 3
    assert sorted(int(p.name) for p in (tmp_path / "uids").iterdir()) == sorted(c.uid for c in mine)
    for claim in mine:
        claim.release()
    assert not (tmp_path / "uids").exists()


# -- cgroups of runs that are over ---------------------------------------------------------------------------------

#: A run of the local backend in a process of its own: it prints its sandbox's id once the sandbox exists, then, for
#: each line it reads, runs one execution and prints its output; at end of input it deletes the sandbox and closes.
_RUN = """
import json, sys
import anyio
from trl_sandbox.backends import _cgroups
_cgroups._PARENT = sys.argv[1]
from trl_sandbox.backends.local import LocalBackend

async def main():
    backend = LocalBackend(root_dir=sys.argv[2], fork_server=sys.argv[3] == "server")
    await backend.start()
    sandbox = await backend.create({"test": "cgroups"})
    await backend.exec(sandbox, [*sandbox.python, "-c", "pass"], timeout_s=30)
    print(json.dumps({"id": sandbox.id}), flush=True)
    while await anyio.to_thread.run_sync(sys.stdin.readline):
        result = await backend.exec(sandbox, [*sandbox.python, "-c", "print(6 * 7)"], timeout_s=30)
        print(result.stdout.decode().strip(), flush=True)
    await backend.delete(sandbox)
    await backend.aclose()

anyio.run(main)
"""


def test_cleanup_removes_the_cgroups_a_killed_run_left_and_never_a_live_runs(tmp_root_parent, own_cgroup_parent,
                                                                           own_sandbox_root, tmp_path, monkeypatch,
                                                                           capsys):
    """A run killed with SIGKILL leaves its sandbox's cgroups (its sandbox directory then removed, as a test's
    temporary root is): ``trl-sandbox cleanup --backend local`` lists them (``--dry-run``: only that), then kills
    what still runs in them and removes them, and the parent groups; the groups of a live run in another process
    (empty between its executions, without a fork server) stay, and that run goes on working."""
    import json
    import signal
    import sys

    from trl_sandbox.backends import _cgroups
    from trl_sandbox.backends._host import rmtree
    from trl_sandbox.cli import main

    if not own_cgroup_parent:
        pytest.skip("no writable cgroup v1 memory/pids hierarchy here (root on a host with cgroup v1): the local "
                    "backend makes no cgroups to leave behind")
    owners = tmp_path / "owners"
    monkeypatch.setenv(_cgroups.OWNERS_ENV, str(owners))
    parent = own_cgroup_parent[0].name
    runs, stray = {}, None
    try:
        for name, mode in (("killed", "server"), ("live", "launcher")):
            runs[name] = subprocess.Popen([sys.executable, "-c", _RUN, parent, str(tmp_root_parent / name), mode],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ids = {name: json.loads(run.stdout.readline())["id"] for name, run in runs.items()}
        killed = [p / ids["killed"] for p in own_cgroup_parent]
        live = [p / ids["live"] for p in own_cgroup_parent]
        runs["killed"].kill()
        runs["killed"].wait()
        rmtree(tmp_root_parent / "killed")
        # A process that outlived its run in the run's groups (only the run's launcher puts processes there).
        stray = subprocess.Popen(["sleep", "600"])
        for group in killed:
            (group / "cgroup.procs").write_text(str(stray.pid))
        assert all(g.is_dir() for g in killed + live)
        assert not any(_cgroups._members(g) for g in live)  # the live run's groups are empty between executions

        options = ["--backend", "local", "--backend-options", json.dumps({"root_dir": str(own_sandbox_root)})]
        capsys.readouterr()
        assert main(["cleanup", *options, "--dry-run"]) == 0
        out, err = capsys.readouterr()
        assert f"{killed[0]}" in out and "process(es) of it left, to kill" in out, out
        assert ids["live"] not in out, out
        assert "1 leftover(s) of gone sandboxes; would remove 1" in err, err
        assert all(g.is_dir() for g in killed + live) and stray.poll() is None

        assert main(["cleanup", *options]) == 0
        out, err = capsys.readouterr()
        assert ids["killed"] in out and ids["live"] not in out and "removed 1" in err, (out, err)
        assert not any(g.exists() for g in killed)
        assert stray.wait(timeout=60) == -signal.SIGKILL
        assert all(g.is_dir() for g in live)

        runs["live"].stdin.write("again\n")
        runs["live"].stdin.flush()
        assert runs["live"].stdout.readline() == "42\n"
        assert all(g.is_dir() for g in live)
        runs["live"].stdin.close()
        assert runs["live"].wait(timeout=120) == 0
    finally:
        for process in [*runs.values(), stray]:
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
    assert not any(p.exists() for p in own_cgroup_parent)
    assert not owners.exists()  # every owner record went with its groups


_MOUNTS_V1 = """cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0
cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0
cgroup /sys/fs/cgroup/pids cgroup rw,relatime,pids 0 0
cgroup /sys/fs/cgroup/systemd cgroup rw,relatime,name=systemd 0 0
cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0
"""
_MOUNTS_V2 = """proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0
cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime,nsdelegate,memory_recursiveprot 0 0
cgroup2 /mnt/my\\040cgroups cgroup2 rw 0 0
"""


def test_orphaned_cgroups_are_told_from_live_ones_in_a_v2_tree(tmp_path, monkeypatch):
    """The rules on a cgroup v2 layout (one ``trl-sandbox`` tree; here directories standing for it, as this machine
    mounts v1): a group whose owner record no process holds is selected, with its process count; one whose record a
    process holds never is; one no record claims only on request (``older_than_s``), old enough and empty; one whose
    sandbox directory exists goes with its sandbox. Stale records (no group, no holder) are swept; others stay."""
    import json
    import time

    from trl_sandbox.backends import _cgroups
    from trl_sandbox.backends._host import hold

    assert _cgroups.hierarchies(_MOUNTS_V1) == [Path("/sys/fs/cgroup/cpu"), Path("/sys/fs/cgroup/memory"),
                                                Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup/unified")]
    assert _cgroups.hierarchies(_MOUNTS_V2) == [Path("/sys/fs/cgroup"), Path("/mnt/my cgroups")]

    owners = tmp_path / "owners"
    owners.mkdir(mode=0o700)
    monkeypatch.setenv(_cgroups.OWNERS_ENV, str(owners))
    base = tmp_path / "cgroup2"
    old = time.time() - 7200
    for name, members in (("local-dead", "101\n102\n"), ("local-live", ""), ("local-unclaimed-old", ""),
                          ("local-unclaimed-busy", "103\n"), ("local-unclaimed-new", ""), ("local-has-dir", "")):
        group = base / "trl-sandbox" / name
        group.mkdir(parents=True)
        (group / "cgroup.procs").write_text(members)
        if name != "local-unclaimed-new":
            os.utime(group, (old, old))
    (owners / "local-dead").write_text(json.dumps({"pid": 4242, "groups": [str(base / "trl-sandbox/local-dead")]}))
    (owners / "local-has-dir").write_text(json.dumps({"pid": 1, "groups": [str(base / "trl-sandbox/local-has-dir")]}))
    (owners / "local-live").write_text("{}")
    (owners / "local-stale").write_text(json.dumps({"pid": 4243, "groups": [str(base / "trl-sandbox/local-gone")]}))
    (owners / "local-stale-held").write_text("{}")
    held = [hold(owners / "local-live"), hold(owners / "local-stale-held")]
    try:
        def select(**options):
            found, unclaimed = _cgroups.find_orphans([base, base], skip=lambda name: name == "local-has-dir",
                                                     **options)
            return {o.sandbox_id: (o.recorded, o.reason, o.groups) for o in found}, unclaimed

        found, unclaimed = select()
        assert list(found) == ["local-dead"] and unclaimed == 3
        assert found["local-dead"] == (True, "its run's process 4242 is gone; 2 process(es) of it left, to kill",
                                       (base / "trl-sandbox/local-dead",))
        found, unclaimed = select(older_than_s=3600)
        assert sorted(found) == ["local-dead", "local-unclaimed-old"] and unclaimed == 2
        assert not found["local-unclaimed-old"][0] and "created 2.0 h ago, empty" in found["local-unclaimed-old"][1]

        assert _cgroups.sweep_records() == 1  # local-stale: its group is gone and no one holds it
        assert sorted(p.name for p in owners.iterdir()) == ["local-dead", "local-has-dir", "local-live",
                                                            "local-stale-held"]
    finally:
        for fd in held:
            os.close(fd)


def test_cleanup_selects_cgroups_no_run_claims_only_by_age_and_empty(own_cgroup_parent, own_sandbox_root, tmp_path,
                                                                      monkeypatch, capsys, caplog):
    """Groups with no owner record (made by a trl-sandbox that did not record owners, or by hand): whether their run
    lives cannot be told, so cleanup only names how many it leaves; ``--older-than`` selects the empty ones older
    than that, never one that holds a process or a younger one."""
    import json
    import logging
    import time

    from trl_sandbox.backends import _cgroups
    from trl_sandbox.cli import main

    if not own_cgroup_parent:
        pytest.skip("no writable cgroup v1 memory/pids hierarchy here (root on a host with cgroup v1)")
    monkeypatch.setenv(_cgroups.OWNERS_ENV, str(tmp_path / "owners"))
    old = time.time() - 3 * 3600
    busy = subprocess.Popen(["sleep", "600"])
    try:
        for parent in own_cgroup_parent:
            for name in ("local-old", "local-old-busy", "local-new"):
                (parent / name).mkdir(parents=True)
                if name != "local-new":
                    os.utime(parent / name, (old, old))
            (parent / "local-old-busy" / "cgroup.procs").write_text(str(busy.pid))
        options = ["--backend", "local", "--backend-options", json.dumps({"root_dir": str(own_sandbox_root)})]
        with caplog.at_level(logging.WARNING, logger="trl_sandbox.backends._cgroups"):
            assert main(["cleanup", *options]) == 0
        assert "3 sandbox cgroup(s) that no run claims" in caplog.text
        assert all((p / name).is_dir() for p in own_cgroup_parent for name in ("local-old", "local-old-busy"))
        capsys.readouterr()
        assert main(["cleanup", *options, "--older-than", "1h"]) == 0
        out, err = capsys.readouterr()
        assert len(out.splitlines()) == 1 and all(f"{p / 'local-old'}" in out for p in own_cgroup_parent), out
        assert "no run claims it" in out and "created 3.0 h ago, empty" in out and "removed 1" in err, (out, err)
        assert not any((p / "local-old").exists() for p in own_cgroup_parent)
        assert all((p / name).is_dir() for p in own_cgroup_parent for name in ("local-old-busy", "local-new"))
    finally:
        busy.kill()
        busy.wait()  # reaped: out of its group
        for group in [p / name for p in own_cgroup_parent for name in ("local-old-busy", "local-new")]:
            if group.exists():
                group.rmdir()
    assert not (tmp_path / "owners").exists()


def test_a_sandbox_whose_owner_cannot_be_recorded_still_gets_its_cgroups(own_cgroup_parent, tmp_path, monkeypatch,
                                                                          caplog):
    """A records' directory others may write (or one that cannot be made) is not trusted: the groups are made
    without a record (no run claims them: cleanup leaves them), and one warning says how to fix it."""
    import logging

    from trl_sandbox.backends import _cgroups

    if not own_cgroup_parent:
        pytest.skip("no writable cgroup v1 memory/pids hierarchy here (root on a host with cgroup v1)")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv(_cgroups.OWNERS_ENV, str(shared))
    monkeypatch.setattr(_cgroups, "_unrecorded", False)
    cgroups = _cgroups.Cgroups.writable()
    with caplog.at_level(logging.WARNING, logger="trl_sandbox.backends._cgroups"):
        cgroups.create("local-unrecorded-1", 1 << 30, 64)
        cgroups.create("local-unrecorded-2", 1 << 30, 64)
    try:
        assert caplog.text.count("are not recorded") == 1 and _cgroups.OWNERS_ENV in caplog.text
        assert all(g.is_dir() for g in cgroups.dirs("local-unrecorded-1").values()) and list(shared.iterdir()) == []
        found, unclaimed = _cgroups.find_orphans(cgroups.bases.values())
        assert found == [] and unclaimed == 2
    finally:
        cgroups.delete("local-unrecorded-1")
        cgroups.delete("local-unrecorded-2")
        cgroups.remove_parents()
    assert shared.is_dir()  # not ours to remove


def test_an_execution_never_runs_without_its_cgroups(own_sandbox_root):
    """Without a fork server a sandbox's cgroups are empty between executions, so a cleanup from outside (another
    host's records, ``--older-than``) can remove them: the next execution is then an infrastructure error (the pool
    replaces the sandbox), never a run without its memory and process caps."""
    from trl_sandbox.backends._cgroups import Cgroups
    from trl_sandbox.errors import InfrastructureError

    if not Cgroups.writable().bases:
        pytest.skip("no writable cgroup hierarchy here")
    backend = LocalBackend(root_dir=own_sandbox_root, fork_server=False)

    async def scenario():
        await backend.start()
        sandbox = await backend.create({})
        try:
            ok = await backend.exec(sandbox, [*sandbox.python, "-c", "print(1)"], timeout_s=30)
            assert ok.exit_code == 0, ok.stderr
            groups = list(backend._cgroups.dirs(sandbox.id).values())
            for group in groups:
                for removed in [*group.glob("*/"), group]:  # the worker group first
                    removed.rmdir()
            with pytest.raises(InfrastructureError, match="was removed from outside this run"):
                await backend.exec(sandbox, [*sandbox.python, "-c", "print(1)"], timeout_s=30)
        finally:
            await backend.delete(sandbox)
            await backend.aclose()

    anyio.run(scenario)


def test_a_judge_the_oom_killer_ended_is_the_programs_error_never_an_infrastructure_failure():
    """``judge_request``: the judge server's failure while the OOM killer worked in the sandbox's memory group (the
    program filled it) is the program's crash, and the sandbox is replaced; any other failure stays an
    infrastructure error (retried elsewhere, reward None)."""
    from trl_sandbox.backends._executions import judge_request
    from trl_sandbox.errors import InfrastructureError
    from trl_sandbox.tasks import Task

    class DeadJudge:
        async def judge(self, request, timeout_s, output_limit):
            raise InfrastructureError("local backend: the judge server failed (EOFError)")

    kills = iter([3, 4])
    result = anyio.run(judge_request, DeadJudge(), b"{}", 5.0, 1 << 16, lambda: next(kills))
    assert result.sandbox_spent and "out-of-memory" in result.sandbox_spent
    task = Task.from_row({"task_id": "t", "test_list": ["assert f() == 1"]})
    verdict = task.judge(result.stdout, exit_code=result.exit_code, timed_out=False)
    assert verdict.status == "error" and "out-of-memory" in verdict.error
    with pytest.raises(InfrastructureError):
        anyio.run(judge_request, DeadJudge(), b"{}", 5.0, 1 << 16, lambda: 3)
    with pytest.raises(InfrastructureError):
        anyio.run(judge_request, DeadJudge(), b"{}", 5.0, 1 << 16, lambda: None)


def test_the_hosts_sandboxes_weigh_as_one_ordinary_process_per_core(own_sandbox_root):
    """The scheduler weighs the host's ``trl-sandbox`` cpu group as one entity beside the host's other processes: at
    the default weight (1024) every sandbox of the host together weighed as one ordinary process, and two busy
    processes on 2 cores left the host's executions one core (8 executions of 1 CPU-s: 8.1 s instead of 4.1 s). The
    group weighs as many ordinary processes as the admission limit lets executions run (one per core)."""
    from trl_sandbox.backends._cgroups import PARENT_SHARES, Cgroups

    cpu = Cgroups.writable().bases.get("cpu")
    if cpu is None:
        pytest.skip("no writable v1 cpu hierarchy here")
    assert PARENT_SHARES == min(1024 * os.cpu_count(), 262_144)
    backend = LocalBackend(root_dir=own_sandbox_root)

    async def scenario():
        await backend.start()
        sandbox = await backend.create({})
        try:
            return int((cpu / "trl-sandbox" / "cpu.shares").read_text())
        finally:
            await backend.delete(sandbox)
            await backend.aclose()

    assert anyio.run(scenario) == PARENT_SHARES
