"""Ending every process a command started, without a PID namespace: stop, then kill, every descendant.

Shared by two places that cannot rely on a PID namespace to do it: the local backend's launcher when the kernel
refuses namespaces (``_launcher.py`` imports this file as ``_reaper``), and the harness's judge on remote backends,
whose program may run as the judge's own user (the harness archive carries this file as ``trl_sandbox_reaper``, see
``trl_sandbox/harness/archive.py``). Standard library only, Python >= 3.8; never imports ``trl_sandbox``.

The caller makes itself a *child subreaper* (:func:`become_subreaper`) before it starts anything: then a process that
double-forks or calls ``setsid`` is re-parented to the caller, not to the sandbox's init, when its parent exits, so
it stays among the caller's descendants where :func:`kill_descendants` finds it.
"""

import ctypes
import os
import signal
import time

#: ``prctl`` option (``<linux/prctl.h>``).
PR_SET_CHILD_SUBREAPER = 36


def become_subreaper():
    """Make this process a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER, 1)``); True when the kernel accepted."""
    try:
        return ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _status(pid):
    """``(parent pid, NSpid list)`` of process ``pid`` as ``/proc`` numbers it (NSpid: its pid in each PID namespace
    from /proc's down to its own; None on a kernel without the line)."""
    parent, nspid = None, None
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("PPid:"):
                parent = int(line.split()[1])
            elif line.startswith("NSpid:"):
                nspid = [int(x) for x in line.split()[1:]]
    if parent is None:
        raise ValueError("no PPid")
    return parent, nspid


def descendants():
    """PIDs, as this process's PID namespace numbers them (what ``os.kill`` takes), of every process whose parent
    chain leads to this process, from one scan of ``/proc``.

    ``/proc`` may belong to an outer PID namespace (a sandbox whose mount of ``/proc`` is the host's): its numbers
    are then translated through each process's ``NSpid`` line, never used as they are, so a wrong number never
    names another process.

    Raises:
        OSError: ``/proc`` cannot be read, or shows another PID namespace on a kernel without ``NSpid``.
    """
    me = int(os.readlink("/proc/self"))  # our pid as /proc numbers it
    _, mine = _status("self")
    if mine is not None:
        depth = len(mine) - 1  # the index of our own namespace in every NSpid line of our descendants
    elif me != os.getpid():
        raise OSError("/proc shows another PID namespace and has no NSpid lines")
    else:
        depth = None
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                table[int(entry)] = _status(entry)
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = set(), {me}
    while frontier:
        frontier = {pid for pid, (parent, _) in table.items() if parent in frontier and pid not in found}
        found |= frontier
    if depth is None:
        return found
    return {table[pid][1][depth] for pid in found if table[pid][1] is not None and len(table[pid][1]) > depth}


def kill_descendants(deadline=None):
    """Stop, then kill, every descendant of this process and reap its children, until it has none left: stopped
    processes cannot fork, so a fork bomb cannot outrun this; orphans come back to us when we are a subreaper.

    Args:
        deadline: ``time.monotonic()`` seconds after which to give up (None: no limit), e.g. a descendant stuck in
            an uninterruptible sleep.

    Returns:
        True when no child is left; False when the deadline passed first, or when ``/proc`` cannot tell the
        descendants (then none was signalled: the children that already ended are reaped).
    """
    while True:
        try:
            pids = descendants()
        except OSError:
            _reap()
            return False
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
        if not _reap():
            return True
        if deadline is not None and time.monotonic() > deadline:
            return False
        if not pids:
            time.sleep(0.001)


def _reap():
    """Reap the children that ended; False when this process has no child left."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        return False
    return True


def kill_tree(pgid, deadline=None):
    """Kill the process group ``pgid`` at once, then every descendant (see :func:`kill_descendants`)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    return kill_descendants(deadline)
