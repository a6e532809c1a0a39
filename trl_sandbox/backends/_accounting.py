"""What the kernel accounts of a local sandbox's executions, as its fork server sets it up (see ``_forkserver.py``):
the worker group each worker joins (its CPU time and its processes, read and ended by the judge after every test, see
``trl_sandbox/harness/strays.py``), and the order in which the OOM killer takes the sandbox's processes. Standard
library only; imported by the fork server, never by the trainer.
"""

import os

#: ``oom_score_adj`` of the fork server and the judge (as root), and of every execution: when the sandbox's memory
#: cgroup is full, the OOM killer takes the processes of executions first (a program that returns three 60 MiB
#: strings, then fills the group with 15 processes, got the judge killed: ``infra_error`` and two sandboxes lost),
#: and the judge and the server only when nothing else is left (-1000 would leave no victim at all then).
OOM_SERVER = b"-999"
OOM_EXECUTION = b"1000"


class OomScores:
    """The fork server's OOM score, and its children's. A child inherits the score its parent has at the fork, and
    only a process with ``CAP_SYS_RESOURCE`` can set one below its floor (the last value such a process set): so
    the server raises its own to :data:`OOM_EXECUTION` for the instant of each fork (as root, that is the child's
    floor too, which the code, without capabilities, cannot lower) and goes back to :data:`OOM_SERVER`. In a user
    namespace the server cannot go below the score it started with, and keeps it."""

    def __init__(self):
        self.fd = os.open("/proc/self/oom_score_adj", os.O_RDWR | os.O_CLOEXEC)  # opened before Landlock
        self.own = os.pread(self.fd, 16, 0).strip() or b"0"
        if self._set(OOM_SERVER):
            self.own = OOM_SERVER

    def _set(self, value):
        try:
            os.pwrite(self.fd, value, 0)
            return True
        except OSError:  # a value below what this process may set (a user namespace)
            return False

    def fork(self, fork):
        """``fork()`` (the server's fork function) with the child at :data:`OOM_EXECUTION`; the server gets its own
        score back (after a failed fork too). Returns what ``fork`` returned."""
        self._set(OOM_EXECUTION)
        try:
            pid = fork()
        except BaseException:
            self._set(self.own)
            raise
        if pid != 0:
            self._set(self.own)
        return pid


def open_worker_group(group):
    """The sandbox's worker group (``{"kind", "dir"}``, see ``trl_sandbox/backends/_cgroups.py``; None: none),
    opened before the fork server restricts itself: ``{"join"}`` (its ``cgroup.procs``, written with each worker's
    pid) and what the judge reads: ``{"usage"}`` (``cpu.stat`` or ``cpuacct.usage``) and, for v2, ``{"procs"}``
    (v1's is opened anew each time, by path: its directory is in the server's and the judge's Landlock domain)."""
    if not group:
        return None
    directory = group["dir"]
    opened = {"kind": group["kind"], "dir": directory,
              "join": os.open(os.path.join(directory, "cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC)}
    opened["usage"] = os.open(os.path.join(directory, "cpu.stat" if group["kind"] == "v2" else "cpuacct.usage"),
                              os.O_RDONLY | os.O_CLOEXEC)
    if group["kind"] == "v2":
        opened["procs"] = os.open(os.path.join(directory, "cgroup.procs"), os.O_RDONLY | os.O_CLOEXEC)
    return opened
