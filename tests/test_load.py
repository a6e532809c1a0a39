"""Verdicts that do not depend on the machine's load, and pools that share the host's cores (issue 38).

- A test's limit is on the program's CPU time (its threads and the children it waited for), with a wall-clock
  backstop of ``WALL_FACTOR`` times the limit (``trl_sandbox/harness/cputime.py``): a program that computes within its
  limit passes however many processes share its core; a program that sleeps is cut by the backstop; one whose
  children compute past the limit in parallel is cut although its wall time stayed under it.
- The local pool's default size follows this process's affinity and the node's ranks (``LOCAL_WORLD_SIZE``), and
  every local pool of a host takes a slot of one admission limit (``os.cpu_count()`` executions at once) per
  execution (``trl_sandbox/backends/_admission.py``).

The busy processes these tests start are our own plain loops (``while True: pass``), each in its own session, killed
at the end of the test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import anyio
import pytest

from trl_sandbox import SandboxConfig, Scorer, Task
from trl_sandbox.backends._admission import HostAdmission, default_size
from trl_sandbox.harness.cputime import WALL_FACTOR
from trl_sandbox.pool import SandboxPool

pytestmark = pytest.mark.serial  # measures or loads the host: no other test beside it (tests/conftest.py)

#: A stdin program that computes for SECONDS of its own CPU time, then echoes its input.
BURN = textwrap.dedent("""
    import time
    t = time.process_time()
    while time.process_time() - t < {seconds}:
        pass
    print(input())
""")


def echo_task(n: int = 3) -> Task:
    return Task.from_row({"task_id": "echo", "inputs": [f"{i}\n" for i in range(n)],
                          "outputs": [f"{i}\n" for i in range(n)]})


@pytest.fixture
def busy_processes():
    """Two busy processes per core (each its own session, as another job's processes are), killed at the end."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
             for _ in range(2 * (os.cpu_count() or 1))]
    time.sleep(0.5)  # running before the test starts
    yield procs
    for proc in procs:
        proc.kill()
    for proc in procs:
        proc.wait(10)


def test_a_cpu_bound_program_within_its_limit_passes_beside_two_busy_processes_per_core(busy_processes,
                                                                                       sandbox_root):
    config = SandboxConfig(sandbox_pool_size=2, sandbox_test_timeout=1.0,
                           sandbox_backend_options={"root_dir": str(sandbox_root)})
    with Scorer.from_config(config) as scorer:
        # 0.4 s of CPU per test against a 1 s limit: sharing a core with two busy loops, each test takes more than
        # its limit of wall time (a wall-clock limit would cut it), and passes.
        results = scorer.score([echo_task()] * 2, [BURN.format(seconds=0.4)] * 2)
    for result in results:
        assert result.status == "passed", result
    # Over the limit of CPU time, it is cut whatever the load.
    with Scorer.from_config(config) as scorer:
        (result,) = scorer.score([echo_task(1)], [BURN.format(seconds=3.0)])
    assert result.status == "timeout", result


def test_a_program_that_sleeps_past_its_limit_is_cut_by_the_wall_clock_backstop(scorer):
    # the shared scorer's tests have 1 s: the backstop is WALL_FACTOR seconds of wall time
    start = time.monotonic()
    (result,) = scorer.score([echo_task(1)], ["import time\ntime.sleep(60)\nprint(input())"])
    took = time.monotonic() - start
    assert result.status == "timeout", result
    assert WALL_FACTOR * 1.0 <= took < WALL_FACTOR * 1.0 + 20, took
    # sleeping within the backstop costs no CPU time: it passes, as a program that waits on I/O would
    (result,) = scorer.score([echo_task(1)], ["import time\ntime.sleep(1.3)\nprint(input())"])
    assert result.status == "passed", result


def test_children_that_compute_in_parallel_count_against_the_limit(scorer):
    # two children of 0.7 s of CPU each, waited for: 1.4 s of CPU against the 1 s limit, in 0.7 s of wall time on two
    # idle cores
    program = textwrap.dedent("""
        import os, time
        pids = []
        for _ in range(2):
            pid = os.fork()
            if pid == 0:
                t = time.process_time()
                while time.process_time() - t < 0.7:
                    pass
                os._exit(0)
            pids.append(pid)
        for pid in pids:
            os.waitpid(pid, 0)
        print(input())
    """)
    (result,) = scorer.score([echo_task(1)], [program])
    assert result.status == "timeout", result
    (result,) = scorer.score([echo_task(1)], [program.replace("0.7", "0.2")])  # 0.4 s in all: within
    assert result.status == "passed", result


def test_a_compiled_program_is_timed_on_its_cpu_too(scorer):
    if shutil.which("gcc") is None:  # CI installs it (.ci/toolchains): there, its absence is a failure
        (pytest.fail if os.environ.get("CI") else pytest.skip)("no gcc here (apt-get install gcc)")
    spin = "#include <stdio.h>\nint main(void){volatile unsigned long x=0;for(;;)x++;}\n"
    sleep = "#include <unistd.h>\nint main(void){sleep(60);return 0;}\n"
    task = Task.from_row({"task_id": "c", "inputs": ["1\n"], "outputs": ["1\n"], "language": "c"})
    start = time.monotonic()
    spun, slept = scorer.score([task, task], [f"```c\n{spin}```", f"```c\n{sleep}```"])
    assert (spun.status, slept.status) == ("timeout", "timeout"), (spun, slept)
    assert time.monotonic() - start < 60


# -- pool sizes and the host's admission limit ----------------------------------------------------------------------


def _starve(scorer, share: float) -> None:
    """Leave each sandbox of ``scorer``'s pool ``share`` of a core (its cgroup's CPU quota), as a host whose cores the
    trainer and other runs keep busy leaves it: what its programs compute takes 1 / ``share`` times longer."""
    from trl_sandbox.backends._cgroups import CPU_PERIOD_US

    for sandbox_id in scorer.pool._live:
        group = scorer.pool.backend._cgroups.dirs(sandbox_id)["cpu"]
        if (group / "cpu.cfs_burst_us").exists():
            (group / "cpu.cfs_burst_us").write_text("0")  # a burst may not exceed the quota
        (group / "cpu.cfs_quota_us").write_text(str(int(CPU_PERIOD_US * share)))


def test_a_program_the_host_starves_of_cpu_is_cut_by_its_cpu_time_not_the_wall_clock(sandbox_root):
    """A program within its CPU limit that the host leaves 10 % of a core takes more wall time than the backstop
    (``WALL_FACTOR`` x its limit) and still passes: past the backstop the test goes on while the program is
    runnable, up to ``MAX_WALL_FACTOR`` x its limit. A program that sleeps is cut at the backstop as before, and
    one that computes past its limit is still a timeout. Before: the starved program was a timeout (-1.0)."""
    from trl_sandbox.backends._cgroups import Cgroups

    if "cpu" not in Cgroups.writable().bases:
        # CI runs as root, where the cpu controller is writable: there, its absence is a failure
        (pytest.fail if os.environ.get("CI") else pytest.skip)(
            "needs a writable cpu cgroup controller (a sandbox's CPU quota): run as root")
    config = SandboxConfig(sandbox_pool_size=1, sandbox_test_timeout=1.0, sandbox_completion_timeout=30.0,
                           sandbox_backend_options={"root_dir": str(sandbox_root)})
    programs = [BURN.format(seconds=0.5)]
    if shutil.which("g++", path="/usr/local/bin:/usr/bin:/bin"):
        programs.append("```cpp\n#include <cstdio>\n#include <ctime>\nint main() { char s[64]; scanf(\"%63s\", s);\n"
                        "  clock_t t = clock(); while ((double)(clock() - t) / CLOCKS_PER_SEC < 0.5) {}\n"
                        "  printf(\"%s\\n\", s); }\n```")
    with Scorer.from_config(config) as scorer:
        scorer.score([echo_task(1)], [programs[-1]])  # compiled before the quota (a compiler is no test)
        _starve(scorer, 0.1)
        for program in programs:
            start = time.monotonic()
            (result,) = scorer.score([echo_task(1)], [program])
            took = time.monotonic() - start
            assert result.status == "passed", (program[:20], result.error, result, took)
            assert took > WALL_FACTOR * 1.0, took  # it did outlast the backstop: the check could fail
        start = time.monotonic()
        (result,) = scorer.score([echo_task(1)], ["import time\ntime.sleep(60)\nprint(input())"])
        assert result.status == "timeout" and time.monotonic() - start < WALL_FACTOR * 1.0 + 15, result
        (result,) = scorer.score([echo_task(1)], [BURN.format(seconds=3.0)])
        assert result.status == "timeout", result


def test_a_look_again_time_that_passes_while_the_judge_waits_for_a_cpu_is_no_timeout():
    """``TestClock.until``-style deadlines: a time the function returned that passed only because the judge waited
    for a CPU after the call is a look again (before: a Timeout for a program under its limit, on a starved host);
    a time earlier than the call is the end, unless the worker's answer is already there (before: a Timeout too)."""
    from trl_sandbox.harness.base import Timeout
    from trl_sandbox.harness.wire import _read_exact

    r, w = os.pipe()
    try:
        calls = []

        def late_look():  # "look again in 10 ms", then this process is descheduled for 50 ms
            calls.append(1)
            when = time.monotonic() + 0.01
            time.sleep(0.05)
            if len(calls) == 4:
                os.write(w, b"ok")
            return when

        assert _read_exact(r, 2, late_look) == b"ok"
        over = time.monotonic() - 1.0
        with pytest.raises(Timeout):
            _read_exact(r, 2, lambda: over)
        with pytest.raises(Timeout):
            _read_exact(r, 2, over)
        # an answer the worker wrote before the judge looked, late, is read (its CPU time is checked after it)
        os.write(w, b"ok")
        assert _read_exact(r, 2, lambda: over) == b"ok"
        os.write(w, b"ok")
        assert _read_exact(r, 2, over) == b"ok"
    finally:
        os.close(r)
        os.close(w)


def test_runnable_tells_a_computing_process_from_a_sleeping_one():
    from trl_sandbox.harness.cputime import runnable

    spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    sleeper = subprocess.Popen([sys.executable, "-c", "import subprocess, sys, time\n"
                                "child = subprocess.Popen([sys.executable, '-c', 'while True: pass'])\n"
                                "time.sleep(60)"])
    try:
        time.sleep(1.0)
        assert runnable([spin.pid]) is True
        assert runnable([sleeper.pid]) is False  # its busy child is not it
        assert runnable([sleeper.pid], descendants=True) is True
        assert runnable([2 ** 22 + 7]) is None  # nothing to read: unknown, never "asleep"
    finally:
        subprocess.run(["pkill", "-KILL", "-P", str(sleeper.pid)], check=False)  # its child, while it is its parent
        for proc in (spin, sleeper):
            proc.kill()
            proc.wait(10)


def test_the_local_pool_size_follows_affinity_and_local_ranks(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(12)))
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    assert default_size()[0] == 12
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "4")
    size, origin = default_size()
    assert size == 3 and "4 local ranks" in origin and "12 cores" in origin
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "16")
    assert default_size()[0] == 1  # never zero
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "bad")
    assert default_size()[0] == 12
    pool = SandboxPool("local", handle_signals=False)  # not started: its size is decided here
    assert pool.size == 12 and "affinity" in pool.size_origin
    assert SandboxPool("local", size=5, handle_signals=False).size == 5


def test_a_process_pinned_to_one_core_gets_one_sandbox():
    code = ("import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
            "from trl_sandbox.pool import SandboxPool; print(SandboxPool('local', handle_signals=False).size)")
    env = {**os.environ, "LOCAL_WORLD_SIZE": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env, check=True)
    assert out.stdout.strip() == "1"


def test_the_admission_limit_is_shared_and_released_by_a_dead_holder(tmp_path):
    async def main():
        a, b = HostAdmission(tmp_path, 2), HostAdmission(tmp_path, 2)
        async with a.admit(), b.admit():
            with anyio.move_on_after(0.2) as scope:  # both slots taken: a third waits
                async with a.admit():
                    pass
            assert scope.cancelled_caught
        async with a.admit(), a.admit():  # freed
            pass
        a.close()
        b.close()

    anyio.run(main)
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import fcntl, os, sys, time
        fds = [os.open({str(tmp_path)!r} + f"/slot-{{i}}", os.O_RDWR) for i in range(2)]
        for fd in fds:
            fcntl.flock(fd, fcntl.LOCK_EX)
        print("held", flush=True)
        time.sleep(60)
    """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"

        async def blocked():
            c = HostAdmission(tmp_path, 2)
            with anyio.move_on_after(0.2) as scope:
                async with c.admit():
                    pass
            assert scope.cancelled_caught
            holder.kill()  # SIGKILL: the kernel releases its locks
            with anyio.fail_after(10):
                async with c.admit():
                    pass
            c.close()

        anyio.run(blocked)
    finally:
        holder.kill()
        holder.wait(10)


#: A neighbour run: HostAdmission(DIR, 1) with 4 executions that take the one slot, hold it HOLD seconds and let it go,
#: one after another for SECONDS (each frees the slot to its own next waiter at once), writing one byte to COUNT per
#: slot taken.
_NEIGHBOUR = textwrap.dedent("""
    import sys, time, anyio
    from trl_sandbox.backends._admission import HostAdmission
    directory, hold, seconds, count = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]

    async def main():
        admission = HostAdmission(directory, 1)
        end = time.monotonic() + seconds
        with open(count, "ab", buffering=0) as f:
            async def execution():
                while time.monotonic() < end:
                    async with admission.admit():
                        f.write(b"x")
                        await anyio.sleep(hold)
            async with anyio.create_task_group() as tg:
                for _ in range(4):
                    tg.start_soon(execution)
    anyio.run(main)
""")


def _neighbour(tmp_path, hold_s, seconds=30.0):
    count = tmp_path / "count"
    count.write_bytes(b"")
    proc = subprocess.Popen([sys.executable, "-c", _NEIGHBOUR, str(tmp_path / "slots"), str(hold_s), str(seconds),
                             str(count)], start_new_session=True)
    deadline = time.monotonic() + 60
    while count.stat().st_size < 3:  # it takes slot after slot before we ask for one
        assert proc.poll() is None and time.monotonic() < deadline, "the neighbour did not start"
        time.sleep(0.05)
    return proc, count


def test_a_waiting_process_gets_a_slot_in_its_turn_and_its_wait_is_reported(tmp_path):
    # The neighbour frees the host's one slot every 20 ms and hands it to its own next execution at once; we ask
    # once. First come, first served across processes: the slot is ours after the neighbour's executions that were
    # already waiting when we came (at most 2 here), however long it keeps taking slots.
    proc, count = _neighbour(tmp_path, 0.02)
    try:
        waits = []

        async def main():
            admission = HostAdmission(tmp_path / "slots", 1)
            before = count.stat().st_size
            with anyio.fail_after(20):
                async with admission.admit(waits.append):
                    taken_meanwhile = count.stat().st_size - before
            admission.close()
            return taken_meanwhile

        taken_meanwhile = anyio.run(main)
        assert proc.poll() is None  # it was still taking slots
        assert taken_meanwhile <= 3, f"the neighbour took {taken_meanwhile} slots while we waited for one"
        assert waits[0] is None and len(waits) == 2 and waits[1] > 0.0  # the wait is reported (in queue_s)
    finally:
        proc.kill()
        proc.wait(10)


def test_a_long_wait_for_a_slot_says_which_process_holds_them(tmp_path, caplog, monkeypatch):
    from trl_sandbox.backends import _admission

    monkeypatch.setattr(_admission, "SLOW_WAIT_S", 0.2)
    proc, _ = _neighbour(tmp_path, 1.0)
    try:
        async def main():
            admission = HostAdmission(tmp_path / "slots", 1)
            with anyio.fail_after(30):
                async with admission.admit():
                    pass
            admission.close()

        with caplog.at_level("WARNING", logger="trl_sandbox.backends._admission"):
            anyio.run(main)
        lines = [r.getMessage() for r in caplog.records if "execution slots" in r.getMessage()]
        assert len(lines) == 1, caplog.text
        assert f"pid {proc.pid} (" in lines[0] and "TRL_SANDBOX_ADMISSION_DIR" in lines[0], lines[0]
    finally:
        proc.kill()
        proc.wait(10)


def test_a_batch_deadline_does_not_count_the_wait_for_a_host_slot(tmp_path, sandbox_root, monkeypatch):
    # Another process holds the host's one slot for 4 s; our batch's deadline is 2 s. The completion waits for the
    # slot, then runs: the wait is in queue_s and admission_s, and the deadline, which is for straggling executions,
    # moved by it (before, the completion was cancelled: reward None).
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import fcntl, os, time
        os.makedirs({str(tmp_path / "slots")!r}, mode=0o700, exist_ok=True)
        fd = os.open({str(tmp_path / "slots" / "slot-0")!r}, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        print("held", flush=True)
        time.sleep(4)
    """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        config = SandboxConfig(sandbox_pool_size=1, sandbox_batch_deadline_s=2.0,
                               sandbox_backend_options={"root_dir": str(sandbox_root), "max_host_executions": 1})
        monkeypatch.setenv("TRL_SANDBOX_ADMISSION_DIR", str(tmp_path / "slots"))
        with Scorer.from_config(config) as scorer:
            result, = scorer.score([echo_task(1)], ["print(input())"])
        assert result.status == "passed", result
        assert result.admission_s > 1.0 and result.queue_s >= result.admission_s, result
    finally:
        holder.kill()
        holder.wait(10)


_OTHER_POOL = textwrap.dedent("""
    import json, sys
    from trl_sandbox import SandboxConfig, Scorer, Task
    root, size, program = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    task = Task.from_row({"task_id": "t", "inputs": ["1\\n"], "outputs": ["1\\n"]})
    config = SandboxConfig(sandbox_pool_size=size, sandbox_backend_options={"root_dir": root})
    with Scorer.from_config(config) as scorer:
        print("ready", flush=True)
        sys.stdin.readline()
        results = scorer.score([task] * (2 * size), [program] * (2 * size))
    print(json.dumps([[r.status, r.output] for r in results]), flush=True)
""")
#: Prints when it started and ended (the realtime clock, which the sandboxes share with the host) to stderr.
_STAMPED = textwrap.dedent("""
    import sys, time
    sys.stderr.write("start %.6f\\n" % time.time())
    time.sleep(0.3)
    sys.stderr.write("end %.6f\\n" % time.time())
    print(input())
""")


def _intervals(outputs: list[str]) -> list[tuple[float, float]]:
    found = []
    for output in outputs:
        stamps = dict(line.split() for line in output.splitlines() if line.startswith(("start ", "end ")))
        found.append((float(stamps["start"]), float(stamps["end"])))
    return found


def test_two_pools_on_one_host_never_run_more_executions_than_cores(sandbox_root):
    cores = os.cpu_count() or 1
    size = cores + 1  # each pool alone could run more than the host's cores
    other = subprocess.Popen([sys.executable, "-c", _OTHER_POOL, str(sandbox_root), str(size), _STAMPED],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             cwd=str(Path(__file__).resolve().parent.parent))
    try:
        assert other.stdout.readline().strip() == "ready"
        task = Task.from_row({"task_id": "t", "inputs": ["1\n"], "outputs": ["1\n"]})
        config = SandboxConfig(sandbox_pool_size=size, sandbox_backend_options={"root_dir": str(sandbox_root)})
        with Scorer.from_config(config) as scorer:
            other.stdin.write("go\n")
            other.stdin.flush()
            mine = scorer.score([task] * (2 * size), [_STAMPED] * (2 * size))
        theirs = json.loads(other.stdout.readline())
        assert other.wait(60) == 0
    finally:
        other.kill()
    assert all(r.status == "passed" for r in mine) and all(status == "passed" for status, _ in theirs)
    intervals = _intervals([r.output for r in mine]) + _intervals([output for _, output in theirs])
    events = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals],
                    key=lambda e: (e[0], e[1]))
    running = most = 0
    for _, step in events:
        running += step
        most = max(most, running)
    assert 1 <= most <= cores, (most, cores)
