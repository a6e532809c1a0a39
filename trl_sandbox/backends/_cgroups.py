"""Per-sandbox cgroups of the local backend, where this process may write: a cap on a whole execution tree's memory
and process count (v1 ``memory`` and ``pids``) and its CPU (v1 ``cpu``: one core per sandbox; the sandboxes of the
host weigh together as one ordinary process per core, see :data:`PARENT_SHARES`), whatever it forks; and the *worker
group* ``<sandbox's group>/w`` (cgroup v2, else v1 ``cpuacct``) that holds each worker of the sandbox's fork server
and everything it starts, whose CPU time the judge reads and whose processes it ends after every test (see
``trl_sandbox/harness/strays.py``). Also what finds and removes the groups of runs that are over (``trl-sandbox
cleanup``).

A sandbox's groups are ``<hierarchy>/trl-sandbox/<sandbox id>``. The cgroup file system holds no file of ours, so
whose they are is recorded beside it: before it makes a sandbox's groups, a process creates the sandbox's *owner
record* ``<owners_dir()>/<sandbox id>`` (the groups' paths, its pid) and holds an exclusive ``flock`` on it until it
removes the groups, or until it ends: the kernel releases the lock of a process that dies, SIGKILL included (a child
it forked without ``exec`` shares the lock until it ends too). So:

- a group whose record a process holds belongs to a live run (of any process, namespace or version that records
  owners): never selected;
- a group whose record no process holds was left by a run that is over: :func:`find_orphans` selects it, and
  :func:`remove_orphan` kills what still runs in it and in its subgroups (only that run's launcher put processes
  there) and removes them;
- a group with no record was made by a trl-sandbox that did not record owners, or by hand: whether its run lives
  cannot be told, so it is selected only on request (``older_than_s``), when it holds no process.

The hierarchies searched are those mounted (:func:`hierarchies`): v1 ones with the ``memory``, ``pids``, ``cpu`` or
``cpuacct`` controller and v2 (unified) ones, where a ``trl-sandbox`` group holds the sandboxes' groups in one tree.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import stat
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import InfrastructureError
from ._host import hold

logger = logging.getLogger(__name__)

_CGROUP_V1 = Path("/sys/fs/cgroup")
#: The group, in each hierarchy, that holds the sandboxes' groups of every run of this host.
_PARENT = "trl-sandbox"
#: The worker group's name, inside a sandbox's group of the accounting hierarchy.
WORKER_GROUP = "w"
#: CPU bandwidth of a sandbox (v1 ``cpu``): a quota of one core per period, a burst of as much (the judge, the fork
#: server and the worker may overlap for a moment on a core of their unused quota, instead of being throttled until
#: the next period: on average the sandbox still gets one core), and a weight equal to its siblings'.
CPU_PERIOD_US = 100_000
CPU_SHARES = 1024
#: The weight of the ``trl-sandbox`` group that holds every sandbox of the host (v1 ``cpu.shares``): the scheduler
#: weighs a group as one entity beside the host's other processes, so at the default (1024) all the sandboxes together
#: weighed as much as one ordinary process, and two busy processes of a neighbour on two cores left every execution
#: of the host half a core (measured: 8 executions of 1 CPU-s each, pool of 2, took 8.1 s instead of 4.1 s idle;
#: 6.1 s at 2048). The admission limit lets one execution per core run (``_admission.py``): the group weighs as that
#: many ordinary (nice 0) processes, so executions share the host's cores as the same number of processes of any
#: other program would, no more (each sandbox's quota is one core) and no less.
PARENT_SHARES = min(1024 * (os.cpu_count() or 1), 262_144)
_V1_CONTROLLERS = ("memory", "pids", "cpu", "cpuacct")
#: Environment variable naming the directory of the owner records (default: see :func:`owners_dir`).
OWNERS_ENV = "TRL_SANDBOX_CGROUP_OWNERS"
#: Sandbox id -> the descriptor by which this process holds the sandbox's owner record.
_held: dict[str, int] = {}
#: Whether this process could not record an owner (and said so).
_unrecorded = False


def owners_dir() -> Path:
    """The owner records' directory: ``$TRL_SANDBOX_CGROUP_OWNERS``, else ``/run/trl-sandbox-cgroups`` where this
    process may write ``/run`` (root: one per host, emptied at boot, as cgroups are), else
    ``/tmp/trl-sandbox-cgroups-<euid>``."""
    configured = os.environ.get(OWNERS_ENV)
    if configured:
        return Path(configured)
    if os.path.isdir("/run") and os.access("/run", os.W_OK):
        return Path("/run/trl-sandbox-cgroups")
    return Path(f"/tmp/trl-sandbox-cgroups-{os.geteuid()}")


def _private(directory: Path) -> bool:
    """Whether ``directory`` is a directory (not a link) of this user that no one else may write: records in it are
    this user's processes' own (a record planted by another user could make a live run's groups look orphaned)."""
    try:
        info = os.lstat(directory)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o022


def hierarchies(mounts: str | None = None) -> list[Path]:
    """The mounted cgroup hierarchies a ``trl-sandbox`` group may be in: v1 ones with the ``memory`` or ``pids``
    controller, and v2 ones.

    Args:
        mounts: The text of ``/proc/self/mounts`` (default: read it; nothing when it cannot be read).
    """
    if mounts is None:
        try:
            mounts = Path("/proc/self/mounts").read_text()
        except OSError:
            mounts = ""
    found: dict[Path, None] = {}
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        point = fields[1].replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")
        if fields[2] == "cgroup2" or (fields[2] == "cgroup" and set(_V1_CONTROLLERS) & set(fields[3].split(","))):
            found[Path(point)] = None
    return list(found)


def _v2_mounts(mounts: str | None = None) -> list[Path]:
    """The mount points of cgroup v2 hierarchies (``/sys/fs/cgroup`` on a v2 host, ``/sys/fs/cgroup/unified`` on a
    hybrid one)."""
    if mounts is None:
        try:
            mounts = Path("/proc/self/mounts").read_text()
        except OSError:
            return []
    return [Path(fields[1]) for fields in (line.split() for line in mounts.splitlines())
            if len(fields) > 2 and fields[2] == "cgroup2"]


class Cgroups:
    """The cgroup hierarchies this process may create groups in, and one group per sandbox in each.

    Args:
        bases: Name -> the hierarchy's directory: ``memory``, ``pids``, ``cpu``, ``cpuacct`` (v1) and ``unified``
            (v2); empty: no cgroups.
        accounting: Which of ``bases`` holds the worker groups (``unified``, else ``cpuacct``), or None.
    """

    def __init__(self, bases: dict[str, Path], accounting: str | None = None) -> None:
        self.bases = bases
        self.accounting = accounting if accounting in bases else None

    @classmethod
    def writable(cls) -> Cgroups:
        """The hierarchies this process may create groups in (none where not writable): v1 ``memory``, ``pids``,
        ``cpu`` (with CFS bandwidth control) and ``cpuacct``, and a v2 hierarchy; the worker groups go to the v2 one
        (its ``cpu.stat`` and ``cgroup.procs`` read fresh through a held descriptor), else to ``cpuacct``."""
        found: dict[str, Path] = {}
        for controller in _V1_CONTROLLERS:
            base = _CGROUP_V1 / controller
            if (base / "cgroup.procs").exists() and os.access(base, os.W_OK):
                if controller == "cpu" and not (base / "cpu.cfs_quota_us").exists():
                    continue
                found[controller] = base
        for base in _v2_mounts():
            if (base / "cgroup.procs").exists() and os.access(base, os.W_OK):
                found["unified"] = base
                break
        accounting = "unified" if "unified" in found else ("cpuacct" if "cpuacct" in found else None)
        return cls(found, accounting)

    def names(self) -> list[str]:
        """What the groups do, for the backend's one-line report: the limits, and where tests are timed."""
        names = [name for name in ("memory", "pids") if name in self.bases]
        if "cpu" in self.bases:
            names.append("cpu (1 core)")
        if self.accounting is not None:
            names.append("worker group (%s)" % ("v2" if self.accounting == "unified" else "v1 cpuacct"))
        return names

    def dirs(self, sandbox_id: str) -> dict[str, Path]:
        """The group of sandbox ``sandbox_id`` in each hierarchy, by name (hierarchies mounted together, as
        ``cpu,cpuacct``, share one directory)."""
        return {name: base / _PARENT / sandbox_id for name, base in self.bases.items()}

    def worker_group(self, sandbox_id: str) -> dict[str, str] | None:
        """The fork server's description of sandbox ``sandbox_id``'s worker group: ``{"kind": "v2" | "v1",
        "dir"}``, or None without one."""
        if self.accounting is None:
            return None
        group = self.bases[self.accounting] / _PARENT / sandbox_id / WORKER_GROUP
        return {"kind": "v2" if self.accounting == "unified" else "v1", "dir": str(group)}

    def procs_files(self, sandbox_id: str) -> list[str]:
        """The ``cgroup.procs`` files a process of the sandbox joins, one per group.

        Raises:
            InfrastructureError: a group of the sandbox is gone (removed from outside, e.g. by a ``trl-sandbox
                cleanup --older-than`` of a host whose runs do not share owner records): the execution never runs
                without its caps, and the pool replaces the sandbox (not the program's fault).
        """
        groups = _unique(self.dirs(sandbox_id).values())
        gone = [str(g) for g in groups if not g.is_dir()]
        if gone:
            raise InfrastructureError(f"local backend: sandbox {sandbox_id}'s cgroup {gone[0]} was removed from "
                                      f"outside this run; the sandbox is replaced")
        return [str(g / "cgroup.procs") for g in groups]

    def create(self, sandbox_id: str, memory_bytes: int, max_processes: int) -> None:
        """Record this process as the owner of the sandbox's groups (held until :meth:`delete` or this process's
        end), then create them: at most ``memory_bytes`` of memory, ``max_processes`` tasks, one core of CPU (see
        :data:`CPU_SHARES`), and the worker group.

        Raises:
            InfrastructureError: a group cannot be created or configured.
        """
        if not self.bases:
            return
        groups = self.dirs(sandbox_id)
        record = _own(sandbox_id, _unique(groups.values()))
        if record is not None:
            _held[sandbox_id] = record
        limits = {"memory": {"memory.limit_in_bytes": memory_bytes}, "pids": {"pids.max": max_processes},
                  "cpu": {"cpu.cfs_period_us": CPU_PERIOD_US, "cpu.cfs_quota_us": CPU_PERIOD_US,
                          "cpu.cfs_burst_us": CPU_PERIOD_US, "cpu.shares": CPU_SHARES}}
        for name, group in groups.items():
            try:
                _make_group(group)
                if name == "cpu":  # the host's group, which another run may have made (or removed and made again)
                    (group.parent / "cpu.shares").write_text(str(PARENT_SHARES))
                for key, value in limits.get(name, {}).items():
                    if key == "cpu.cfs_burst_us" and not (group / key).exists():
                        continue  # (Linux < 5.14)
                    (group / key).write_text(str(value))
                if name == self.accounting:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(group / WORKER_GROUP)
            except OSError as exc:
                self.delete(sandbox_id)
                raise InfrastructureError(f"local backend: cannot create cgroup {group}: {exc}") from exc

    def oom_kills(self, sandbox_id: str) -> int | None:
        """How many processes the OOM killer has killed in the sandbox's memory group so far (v1
        ``memory.oom_control``'s ``oom_kill``), or None where it cannot be read."""
        group = self.dirs(sandbox_id).get("memory")
        if group is None:
            return None
        try:
            for line in (group / "memory.oom_control").read_text().splitlines():
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
        except (OSError, ValueError, IndexError):
            pass
        return None

    def remove_parents(self) -> None:
        """Remove the ``trl-sandbox`` groups that hold the sandboxes' groups, where empty. The kernel refuses to
        remove a group that still has groups (``EBUSY``): those of another run of this host, or sandboxes this one
        leaves, keep theirs; that run removes it when it closes."""
        for base in self.bases.values():
            try:
                (base / _PARENT).rmdir()
            except OSError:
                pass

    def delete(self, sandbox_id: str) -> None:
        """Remove the sandbox's groups, their subgroups first (waiting up to 0.5 s for the processes of a killed
        execution to leave), then its owner record. Where a group stays (a process would not leave), the record
        stays too, released: the group is then an orphan that :func:`remove_orphan` removes."""
        if not self.bases:
            return
        gone = True
        for group in [g for top in _unique(self.dirs(sandbox_id).values()) for g in _tree(top)]:
            for _ in range(50):
                try:
                    group.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)
            else:
                gone = False
        fd = _held.pop(sandbox_id, None)
        if gone:  # whoever holds the record (this process, or the live owner of a sandbox deleted from elsewhere)
            _forget(owners_dir() / sandbox_id)
        if fd is not None:
            os.close(fd)


def _unique(groups: Iterable[Path]) -> list[Path]:
    """``groups`` without repeats: hierarchies mounted together (``cpu,cpuacct``) name one directory twice."""
    seen: dict[str, Path] = {}
    for group in groups:
        seen.setdefault(os.path.realpath(group), group)
    return list(seen.values())


def _tree(group: Path) -> list[Path]:
    """``group``'s subgroups (the worker group), deepest first, then ``group`` itself: the order they are removed in."""
    found: list[Path] = []
    try:
        children = sorted(entry.path for entry in os.scandir(group) if entry.is_dir(follow_symlinks=False))
    except OSError:
        children = []
    for child in children:
        found += _tree(Path(child))
    return [*found, group]


def _own(sandbox_id: str, groups: list[Path]) -> int | None:
    """Create and hold the owner record of ``sandbox_id``'s ``groups``; returns its descriptor. None where the
    records' directory cannot be used (logged once): the groups are then made without a record, as groups no run
    claims, which cleanup leaves unless asked by age (a sandbox is never refused for the sake of its cleanup)."""
    global _unrecorded
    directory = owners_dir()
    path = directory / sandbox_id
    problem = f"cannot hold {path}"
    for _attempt in range(100):
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not _private(directory):
                raise PermissionError(f"{directory} is not a directory of user {os.geteuid()} that only it may write")
            os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600))
        except FileNotFoundError:  # the directory, removed by another process's last record meanwhile: again
            continue
        except OSError as exc:
            problem = str(exc)
            break
        fd = hold(path)  # None: a sweep holds it for a moment, or removed it (a record no one held): again
        if fd is not None:
            os.write(fd, json.dumps({"pid": os.getpid(), "groups": [str(g) for g in groups]}).encode())
            return fd
        time.sleep(0.001)
    if not _unrecorded:
        _unrecorded = True
        logger.warning("trl-sandbox local backend: the owners of this run's sandbox cgroups are not recorded (%s): "
                       "if it is killed, `trl-sandbox cleanup` finds its cgroups only with --older-than; set %s to a "
                       "directory of this host that only this user may write", problem, OWNERS_ENV)
    return None


def _forget(record: Path) -> None:
    """Remove an owner record, and the records' directory when it was the last (in a directory this user may not
    trust, nothing: no record of ours is there)."""
    if not _private(record.parent):
        return
    with contextlib.suppress(OSError):
        record.unlink()
    with contextlib.suppress(OSError):
        record.parent.rmdir()


def _read_record(fd: int) -> dict:
    """The content of an owner record open at ``fd`` (empty when unreadable: one being written)."""
    try:
        record = json.loads(os.pread(fd, 1 << 16, 0))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def sweep_records() -> int:
    """Remove the owner records that no process holds and whose groups are all gone (a run killed between its
    record and its groups, or between removing them); never a held one, never one whose group exists (that group
    is an orphan for :func:`find_orphans`). Returns how many were removed."""
    directory = owners_dir()
    try:
        names = sorted(os.listdir(directory)) if _private(directory) else []
    except OSError:
        return 0
    removed = 0
    for name in names:
        fd = hold(directory / name)
        if fd is None:
            continue
        try:
            groups = _read_record(fd).get("groups", [])
            if not any(Path(g).exists() for g in groups if isinstance(g, str)):
                _forget(directory / name)
                removed += 1
        finally:
            os.close(fd)
    return removed


# -- orphans ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Orphan:
    """A sandbox's groups that its run left, as :func:`find_orphans` found them.

    Attributes:
        sandbox_id: The sandbox's id (the groups' name).
        groups: The groups, one per hierarchy.
        reason: Why they are orphans (a short sentence).
        recorded: Their owner record exists and no process holds it: what still runs in them is that run's, and may
            be killed. False: no run claims them (selected by age); they are removed only when empty.
    """

    sandbox_id: str
    groups: tuple[Path, ...]
    reason: str
    recorded: bool


def _members(group: Path) -> list[int]:
    """The processes in ``group`` now (none when it is gone)."""
    try:
        return [int(pid) for pid in (group / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _all_members(group: Path) -> list[int]:
    """The processes in ``group`` and its subgroups now."""
    return [pid for g in _tree(group) for pid in _members(g)]


def find_orphans(bases: Iterable[Path], *, skip: Callable[[str], bool] = lambda name: False,
                 older_than_s: float | None = None, now: float | None = None) -> tuple[list[Orphan], int]:
    """The sandboxes' groups under ``<base>/trl-sandbox`` of each of ``bases`` whose run is over (see the module
    docstring); never those a live process's record claims. Lists only: removes nothing.

    Args:
        bases: Hierarchies (:func:`hierarchies`, or :attr:`Cgroups.bases`' values); one directory may be given twice.
        skip: Sandbox ids not to select (those whose sandbox directory exists: they go with their sandbox).
        older_than_s: Also select groups no record claims, created more than this many seconds ago, that hold no
            process. None: never select those.
        now: The time (``time.time()``) for ages.

    Returns:
        The orphans, and how many groups no record claims were not selected (for a hint).
    """
    by_id: dict[str, list[Path]] = {}
    for base in dict.fromkeys(bases):
        try:
            entries = sorted(os.scandir(base / _PARENT), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                by_id.setdefault(entry.name, []).append(Path(entry.path))
    directory = owners_dir()
    records = _private(directory)
    now = time.time() if now is None else now
    found, unclaimed = [], 0
    for sandbox_id, groups in sorted(by_id.items()):
        if skip(sandbox_id):
            continue
        fd = hold(directory / sandbox_id) if records else None
        if fd is not None:  # a record no one holds: its owner is gone
            try:
                pid = _read_record(fd).get("pid")
            finally:
                os.close(fd)
            left = len({member for g in groups for member in _all_members(g)})
            reason = f"its run's process {pid} is gone" + (f"; {left} process(es) of it left, to kill" if left else "")
            found.append(Orphan(sandbox_id, tuple(groups), reason, recorded=True))
            continue
        if records and (directory / sandbox_id).exists():  # held: a live run's
            continue
        try:
            age = now - min(g.stat().st_mtime for g in groups)
        except OSError:  # removed meanwhile
            continue
        if older_than_s is None or age <= older_than_s or any(_all_members(g) for g in groups):
            unclaimed += 1
            continue
        found.append(Orphan(sandbox_id, tuple(groups), f"no run claims it (made by a trl-sandbox that did not record "
                            f"owners?), created {age / 3600:.1f} h ago, empty", recorded=False))
    return found, unclaimed


def orphans_beside(sandboxes: Path, older_than_s: float | None = None) -> list[Orphan]:
    """:func:`find_orphans` in the mounted hierarchies, but for the sandboxes whose directory is in ``sandboxes`` (a
    local backend's ``root_dir``: they go with their sandbox). Logs a hint when groups no run claims are left alone."""
    found, unclaimed = find_orphans(hierarchies(), skip=lambda name: (sandboxes / name).exists(),
                                    older_than_s=older_than_s)
    if unclaimed:
        logger.warning("trl-sandbox local backend: %d sandbox cgroup(s) that no run claims (made by a trl-sandbox "
                       "that did not record owners?) are left alone; --older-than AGE selects the empty ones older "
                       "than AGE", unclaimed)
    return found


def _kill_members(group: Path) -> None:
    """SIGKILL every process in ``group``: all at once where the kernel can (``cgroup.kill``, v2), else one by one,
    each through a pidfd taken while it is in the group (a pid reused meanwhile by another process is never hit)."""
    if (group / "cgroup.kill").exists():
        with contextlib.suppress(OSError):
            (group / "cgroup.kill").write_text("1")
            return
    for pid in _members(group):
        try:
            pidfd = os.pidfd_open(pid)
        except ProcessLookupError:  # gone
            continue
        except OSError:  # no pidfd_open (Linux < 5.3): by pid, just after seeing it in the group
            if pid in _members(group):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            continue
        try:
            if pid in _members(group):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        except OSError:
            pass
        finally:
            os.close(pidfd)


def remove_orphan(orphan: Orphan, wait_s: float = 10.0) -> None:
    """Remove ``orphan``'s groups (a recorded one's processes killed first, waiting up to ``wait_s`` seconds for
    them to leave), then its owner record, then the ``trl-sandbox`` groups that held them where empty (a live run
    with no sandbox at this moment makes its own again, as when another run closes).

    Raises:
        InfrastructureError: a group stays: its processes would not end, a process joined a group no run claims, or
            another process holds its record now (a cleanup running beside this one).
    """
    record = owners_dir() / orphan.sandbox_id
    fd = hold(record) if orphan.recorded else None
    if orphan.recorded and fd is None and record.exists():
        raise InfrastructureError(f"local backend: the owner record {record} of cgroup {orphan.sandbox_id} is held "
                                  "by a live process now (another cleanup?); left")
    try:
        deadline = time.monotonic() + wait_s
        for group in [g for top in orphan.groups for g in _tree(top)]:
            while True:
                try:
                    group.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if fd is None or time.monotonic() > deadline:
                        raise InfrastructureError(f"local backend: cannot remove cgroup {group}: {exc}; "
                                                  f"{len(_members(group))} process(es) in it (see "
                                                  f"{group / 'cgroup.procs'})") from None
                    _kill_members(group)
                    time.sleep(0.01)
        if fd is not None:
            _forget(record)
    finally:
        if fd is not None:
            os.close(fd)
    for parent in dict.fromkeys(g.parent for g in orphan.groups):
        with contextlib.suppress(OSError):
            parent.rmdir()


def _make_group(group: Path) -> None:
    """Create ``group`` and its parent: another run's :meth:`Cgroups.remove_parents` may remove the parent, empty,
    between the two ``mkdir`` calls, so the pair is tried again (raises the last ``OSError`` past a few tries). Not
    ``Path.mkdir(exist_ok=True)``: it checks again after ``EEXIST``, and raises when the parent was removed since."""
    for attempt in range(20):
        for path in (group.parent, group):
            try:
                os.mkdir(path)
            except FileExistsError:
                pass
            except FileNotFoundError:  # the parent, removed by another run since its mkdir
                if attempt == 19:
                    raise
                break
        else:
            return
