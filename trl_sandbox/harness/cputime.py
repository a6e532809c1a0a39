"""A test's time limit, on CPU time: the program's own CPU seconds against the limit, and wall-clock time only as a
backstop for a program that sleeps or blocks (:data:`WALL_FACTOR` times the limit).

Real judges time the program's CPU (problemtools' ``rusage``, Kattis, Codeforces), so that a verdict does not depend
on how busy the machine is: a program that computes for 0.5 s passes a 1 s limit whether it ran alone or shared its
core with five others (and took 3 s of wall time). Where the official harness of a dataset times wall clock on an idle
machine (APPS, LiveCodeBench, HumanEval's ``timeout``), the two agree: an idle program's CPU time is its wall time.

What is timed is the worker process (:class:`CpuReader`): every thread of it (a Python program runs in the worker),
and the children it waited for (a compiled program is the worker's child, waited for at its end; so is what the
program's own processes waited for). Children still running are not counted until they end; the backstop bounds them.
The judge reads the worker's ``/proc/<pid>/stat`` (the kernel's accounting, which the program cannot change; through
the pid its pidfd names in this ``/proc``: the worker may be in a PID namespace of its own). Where ``/proc`` does not
show the worker, the limit is wall clock, as before (the backstop's clock at 1 x the limit).

The backstop is for a program that does not compute; one that is computing is cut by its CPU time. So when the
backstop comes while a thread of the program is runnable (:func:`runnable`: running, or waiting for a core that the
host's other work holds), the test goes on, looked at again every :data:`RUNNABLE_RECHECK_S`, up to
:data:`MAX_WALL_FACTOR` times its limit: on a host whose cores are busy with the trainer's and other runs' work, a
program within its CPU limit still passes, and one that sleeps is cut at the first look that finds it asleep.
"""

import os
import time

from .base import Timeout

#: Wall-clock time a test may run, as a multiple of its limit, before it is cut whatever its CPU time (a program that
#: sleeps, blocks on input, or waits for a lock): enough for a program within its CPU limit to pass on a host with
#: three runnable processes per core; problemtools and DOMjudge also give wall time a multiple of the CPU limit.
WALL_FACTOR = 3.0
#: Wall-clock time a test may run, as a multiple of its limit, while the program keeps a thread runnable past its
#: backstop (see the module's docstring): its CPU time cuts it first unless the host starves it of CPU that long.
MAX_WALL_FACTOR = 10.0
#: Seconds between two looks at whether the program is runnable, once its backstop has passed.
RUNNABLE_RECHECK_S = 0.05
#: Most processes :func:`runnable` looks at (a fork bomb is bounded by its CPU time and the process limit anyway).
_RUNNABLE_MAX_PROCESSES = 256
#: Clock ticks per second of ``/proc/<pid>/stat``'s times.
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
#: The shortest pause between two looks at the CPU time once a test's wall time has passed its limit (seconds).
_MIN_RECHECK_S = 0.01


def proc_pid(pid, pidfd=None):
    """The pid of process ``pid`` as this ``/proc`` names it: from its pidfd's ``fdinfo`` (the ``Pid:`` line, which
    the kernel gives in the PID namespace of the ``/proc`` it is read through), else ``pid``. None when the process
    is not visible there."""
    if pidfd is None:
        return pid
    try:
        with open("/proc/self/fdinfo/%d" % pidfd, "rb") as f:
            for line in f:
                if line.startswith(b"Pid:"):
                    value = int(line.split()[1])
                    return value if value > 0 else None
    except (OSError, ValueError, IndexError):
        pass
    return None


def open_stat(pid, pidfd=None):
    """A descriptor of ``/proc/<pid>/stat`` of process ``pid`` (see :func:`proc_pid`), or None when it cannot be
    opened. Reading it later reads that process's numbers, whatever namespace the reader is in."""
    visible = proc_pid(pid, pidfd)
    if visible is None:
        return None
    try:
        return os.open("/proc/%d/stat" % visible, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None


def runnable(pids, descendants=False):
    """True when a thread of one of the processes ``pids`` (as this ``/proc`` numbers them; None: not visible) is
    running or runnable (state ``R`` in ``/proc/<pid>/task/<tid>/stat``: computing, or waiting for a CPU); with
    ``descendants``, their children too (``/proc/<pid>/task/<tid>/children``), :data:`_RUNNABLE_MAX_PROCESSES`
    processes at most. False when every thread read is asleep; None when no process could be read at all (gone, or a
    ``/proc`` this process may not read: a landlocked worker's)."""
    pending, seen, read = list(pids), set(), False
    while pending and len(seen) < _RUNNABLE_MAX_PROCESSES:
        pid = pending.pop()
        if pid in seen or pid is None or pid <= 0:
            continue
        seen.add(pid)
        try:
            tids = os.listdir("/proc/%d/task" % pid)
        except OSError:
            continue
        for tid in tids:
            base = "/proc/%d/task/%s/" % (pid, tid)
            try:
                with open(base + "stat", "rb") as f:
                    data = f.read(512)
                read = True
                if data[data.rindex(b")") + 2:][:1] == b"R":
                    return True
                if descendants:
                    with open(base + "children", "rb") as f:
                        pending += [int(child) for child in f.read().split()]
            except (OSError, ValueError):
                continue
    return False if read else None


class CpuReader:
    """The CPU seconds a process used so far, from ``fd`` (its ``/proc/<pid>/stat``, see :func:`open_stat`; None: not
    known): user and system time of all its threads, and of the children it waited for (``utime + stime + cutime +
    cstime``, in clock ticks of 10 ms). ``seconds()`` returns None when it cannot be read."""

    def __init__(self, fd):
        self.fd = fd

    def seconds(self):
        if self.fd is None:
            return None
        try:
            data = os.pread(self.fd, 1024, 0)
            fields = data[data.rindex(b")") + 2:].split()
            return sum(int(x) for x in fields[11:15]) / _TICKS  # fields 14 to 17 of proc(5)
        except (OSError, ValueError, IndexError):
            return None

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class TestClock:
    """One test's limit: ``limit`` CPU seconds of the worker (``reader``, a :class:`CpuReader` or None), and at most
    ``WALL_FACTOR * limit + extra_wall`` seconds of wall time, or up to ``MAX_WALL_FACTOR * limit + extra_wall`` while
    ``busy()`` (a callable: whether a process of the program is runnable, see :func:`runnable`; None: never) says it
    is computing when the backstop comes. :meth:`until` says how long to wait before looking again; :meth:`check`
    raises :class:`.base.Timeout` when the CPU time is over the limit."""

    def __init__(self, reader, limit, extra_wall=0.0, busy=None):
        now = time.monotonic()
        self.reader, self.limit = reader, float(limit)
        self.start = reader.seconds() if reader is not None else None
        if self.start is None:  # no CPU time to read: wall clock, as the official harnesses on an idle machine
            self.reader = None
        self.look = now + self.limit
        self.backstop = now + (WALL_FACTOR * self.limit if self.reader is not None else self.limit) + extra_wall
        # Only a CPU-timed test goes past its backstop: on wall clock alone, a runnable program is just slow.
        self.busy = busy if self.reader is not None else None
        self.ceiling = now + MAX_WALL_FACTOR * self.limit + extra_wall

    def _past_backstop(self, now):
        """Whether the wall-clock backstop has passed at ``now``; moved on by :data:`RUNNABLE_RECHECK_S` instead while
        the program is runnable (below the ceiling)."""
        if now < self.backstop:
            return False
        if self.busy is not None and now < self.ceiling and self.busy() is True:
            self.backstop = min(now + RUNNABLE_RECHECK_S, self.ceiling)
            return False
        return True

    def used(self):
        """CPU seconds used since the test started (wall seconds without a reader)."""
        if self.reader is not None:
            now = self.reader.seconds()
            if now is not None:
                return now - self.start
        return self.limit + time.monotonic() - self.look

    def until(self):
        """The monotonic time to wait until before calling again. The test is over its limit (its CPU time, or the
        wall-clock backstop) when it returns a time earlier than the call (a fixed time that has passed, see
        :func:`.wire.read_frame`); a time that passes while the caller waits for a CPU only means: look again."""
        now = time.monotonic()
        if self._past_backstop(now):
            return self.backstop
        if now < self.look:
            return min(self.look, self.backstop)
        used = self.used()
        if used >= self.limit:
            return self.look  # passed already, and the same at every later call
        self.look = now + max(self.limit - used, _MIN_RECHECK_S)  # CPU time never runs ahead of one thread's wall
        return min(self.look, self.backstop)

    def check(self):
        """Raise :class:`.base.Timeout` when the test's CPU time is over its limit (after an answer: threads, or a
        child the worker waited for, may have used more CPU than the wall time that passed)."""
        if self.reader is not None and self.used() > self.limit:
            raise Timeout()
