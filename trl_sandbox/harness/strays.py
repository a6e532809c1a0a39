"""The processes a program started, whatever it did to them: their CPU time, and their end after every test.

A program may start processes it never waits for (``fork`` without ``wait``, ``setsid`` and double forks, a busy
daemon left behind). Their CPU time is in neither the worker's ``/proc/<pid>/stat`` (``cutime`` counts only the
children it waited for) nor a compiled program's ``rusage``, ``RLIMIT_CPU`` starts again in every fork, and a process
group does not hold what called ``setsid``. So, where the local backend can write cgroups, each worker of a sandbox and
everything it starts are in the sandbox's *worker group* (``<sandbox's cgroup>/w``, see
``trl_sandbox/backends/_cgroups.py``), which the program cannot leave: :class:`WorkerGroup` reads the group's CPU
time (a test's clock, :mod:`.cputime`) and ends every process of it but the worker after each test
(:meth:`WorkerGroup.end_strays`). The fork server opens the group's files before it restricts itself and hands them
to the judge, as it hands it each worker's ``/proc/<pid>/stat``.

Without a worker group (no writable cgroups, remote backends), what remains is the worker's own cleanup: as PID 1 of
a PID namespace of its own (the local backend; a remote backend as root), it kills every other process of its
namespace and reaps them after each run of the program and before the first request of every later test
(:func:`end_own_strays`), so their CPU time, once reaped, counts in the worker's. docs/security.md says what that
leaves.
"""

import ctypes
import os
import signal
import time

#: Seconds :meth:`WorkerGroup.end_strays` keeps killing what the program left before it gives up (a process stuck in
#: the kernel; a fork bomb is bounded by the sandbox's process limit and dies in a few rounds).
END_STRAYS_S = 2.0


class WorkerGroup:
    """The worker group of a sandbox, as the judge holds it.

    Args:
        kind: ``"v2"`` (cgroup v2: ``cpu.stat`` and ``cgroup.procs`` read through held descriptors) or ``"v1"`` (the
            ``cpuacct`` controller: ``cpuacct.usage`` through a held descriptor, ``cgroup.procs`` opened anew each
            time, since v1 keeps a descriptor's list of processes for a second).
        usage_fd: A descriptor of the group's ``cpu.stat`` (v2) or ``cpuacct.usage`` (v1), open for the judge's
            lifetime (never closed here).
        procs: A descriptor (v2) or the path (v1) of the group's ``cgroup.procs``.
    """

    def __init__(self, kind, usage_fd, procs):
        self.kind, self.usage_fd, self.procs = kind, usage_fd, procs

    def seconds(self):
        """CPU seconds (user and system) of every process that has been in the group so far, running or ended,
        waited for or not; None when it cannot be read."""
        try:
            data = os.pread(self.usage_fd, 4096, 0)
            if self.kind == "v1":
                return int(data) / 1e9
            for line in data.split(b"\n"):
                if line.startswith(b"usage_usec "):
                    return int(line.split()[1]) / 1e6
        except (OSError, ValueError):
            pass
        return None

    def close(self):
        """Nothing: the group's descriptors last as long as the judge (a :class:`.cputime.CpuReader`'s interface)."""

    def members(self):
        """The pids (as the judge's PID namespace numbers them) of the processes in the group now; zombies excluded
        (v2)."""
        try:
            if self.kind == "v1":
                with open(self.procs, "rb") as f:
                    data = f.read()
            else:
                data = os.pread(self.procs, 1 << 16, 0)
            return [int(pid) for pid in data.split()]
        except (OSError, ValueError):
            return []

    def end_strays(self, keep):
        """SIGKILL every process of the group but ``keep`` (the worker), until none is left (at most
        :data:`END_STRAYS_S` seconds); returns how many were signalled. Each through a pidfd taken while it is in the
        group, so that a pid reused meanwhile by a process outside it is never hit."""
        killed = 0
        deadline = time.monotonic() + END_STRAYS_S
        while True:
            others = [pid for pid in self.members() if pid != keep]
            if not others or time.monotonic() > deadline:
                return killed
            pidfds = {}
            for pid in others:
                try:
                    pidfds[pid] = os.pidfd_open(pid)
                except OSError:  # gone already
                    pass
            still = set(self.members())
            for pid, pidfd in pidfds.items():
                try:
                    if pid in still:
                        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                        killed += 1
                except OSError:
                    pass
                finally:
                    os.close(pidfd)
            time.sleep(0.0005)  # killed processes leave the group as they exit


def end_own_strays():
    """In the worker, as PID 1 of a PID namespace of its own: kill every other process of the namespace (what the
    program left: ``kill(-1)`` from a namespace's init reaches all of it and never the init), then reap what ended, so
    that its CPU time counts in the worker's (``cutime``). Elsewhere (no namespace of its own) it only reaps: a
    ``kill(-1)`` would reach every process of the uid. Returns True when it killed."""
    killed = False
    if os.getpid() == 1:
        try:
            os.kill(-1, signal.SIGKILL)
            killed = True
        except OSError:  # ESRCH: nothing else runs
            pass
    reap_children(wait=killed)
    return killed


def reap_children(wait=False):
    """Reap this process's children that ended (zombies hold a pid and the uid's process count); with ``wait``, also
    those still ending, killed a moment ago, until none is left (at most :data:`END_STRAYS_S` seconds)."""
    deadline = time.monotonic() + END_STRAYS_S
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except OSError:  # ChildProcessError: no child left
            return
        if pid:
            continue
        if not wait or time.monotonic() > deadline:
            return
        time.sleep(0.0005)


_CLONE_NEWPID = 0x20000000


def fork_in_own_pidns():
    """``fork()``, the child in a new PID namespace of its own where the kernel allows it (root with
    ``CAP_SYS_ADMIN``): the child is its PID 1, so that when it ends, everything it started ends with it, and what it
    leaves never outlives it (as the local backend's workers). This process goes back to its own namespace for its
    later children. Else a plain ``fork()``. Returns what ``os.fork`` returns."""
    if os.geteuid() != 0:
        return os.fork()
    libc = ctypes.CDLL(None, use_errno=True)
    try:
        own = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return os.fork()
    try:
        if libc.unshare(_CLONE_NEWPID) != 0:  # refused (a container without CAP_SYS_ADMIN): a plain fork
            return os.fork()
        pid = -1
        try:
            pid = os.fork()
        finally:
            if pid != 0 and libc.setns(own, _CLONE_NEWPID) != 0:
                raise OSError(ctypes.get_errno(), "cannot go back to the judge's PID namespace")
        return pid
    finally:
        os.close(own)
