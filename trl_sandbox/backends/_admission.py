"""How many executions run at once on this host: the local pool's default size per process, and one admission limit
shared by every pool of the host.

Several training ranks on one node each open a pool. Were each to take every core (``os.cpu_count()`` sandboxes), 8
ranks on a 96-core node would run 768 programs at once: every program slows, and the ones near their limit time out
(measured in docs/performance.md, "Scaling on one host"). So:

- a pool's default size is the cores this process may run on (its affinity, ``os.sched_getaffinity``) divided among
  the ranks on this node (``LOCAL_WORLD_SIZE``, which torchrun and ``accelerate launch`` set): :func:`default_size`;
- every execution of every pool of the host first takes one of ``os.cpu_count()`` admission slots
  (:class:`HostAdmission`): a lock file per slot in one directory of the host (:func:`admission_dir`), held with
  ``flock`` while the execution runs. The kernel releases a lock when its holder dies (SIGKILL included), so a
  crashed rank never keeps a slot. A pool whose batch arrives while the others are idle uses every free slot its
  sandboxes can fill.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import anyio

from ..errors import ConfigurationError

#: The environment variable naming the number of training processes on this node (torchrun, ``accelerate launch``).
LOCAL_RANKS_ENV = "LOCAL_WORLD_SIZE"
#: The environment variable naming the admission limit's directory (default: see :func:`admission_dir`).
ADMISSION_ENV = "TRL_SANDBOX_ADMISSION_DIR"
#: Seconds between two looks at the other processes' slots while every slot is taken (a slot this process frees wakes
#: its own waiters at once).
_POLL_S = 0.005


def affinity_cores() -> int:
    """The number of CPUs this process may run on (``os.sched_getaffinity``; ``os.cpu_count()`` where unknown)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def local_ranks() -> int:
    """The number of training processes on this node: ``LOCAL_WORLD_SIZE`` when it is a positive integer, else 1."""
    try:
        value = int(os.environ.get(LOCAL_RANKS_ENV, "1"))
    except ValueError:
        return 1
    return max(1, value)


def admission_dir() -> Path:
    """The slot files' directory, one per host and user: ``$TRL_SANDBOX_ADMISSION_DIR``, else
    ``/run/trl-sandbox-admission`` where this process may write ``/run`` (root: emptied at boot), else
    ``{tempfile.gettempdir()}/trl-sandbox-admission-<euid>``. It stays between runs (a few empty files): removing a
    slot file another process has open would let two processes hold "the same" slot."""
    configured = os.environ.get(ADMISSION_ENV)
    if configured:
        return Path(configured)
    if os.path.isdir("/run") and os.access("/run", os.W_OK):
        return Path("/run/trl-sandbox-admission")
    return Path(tempfile.gettempdir()) / f"trl-sandbox-admission-{os.geteuid()}"


def default_size() -> tuple[int, str]:
    """The local pool's default number of sandboxes, and where it comes from (for the pool's readiness line): this
    process's cores (affinity) divided among the node's ranks, at least 1."""
    cores, ranks = affinity_cores(), local_ranks()
    size = max(1, cores // ranks)
    if ranks == 1:
        return size, f"the {cores} cores of this process's affinity"
    return size, f"{cores} cores of this process's affinity / {ranks} local ranks ({LOCAL_RANKS_ENV})"


class HostAdmission:
    """At most ``slots`` executions at once across every process of this host that uses ``directory``: slot ``i`` is
    the file ``directory/slot-<i>``, taken by holding its exclusive ``flock``.

    Each instance opens the slot files once (one open file description per slot: ``flock`` on one of them conflicts
    with every other process's and instance's, never with its own, which :meth:`admit` tracks). Taking a free slot
    costs one ``flock`` call; while every slot is taken, a waiter wakes when this instance frees one and looks at the
    others' every 5 ms.

    Args:
        directory: Where the slot files live (created, mode 0700; see :func:`admission_dir`).
        slots: The most executions at once (the host's core count, ``os.cpu_count()``).
    """

    def __init__(self, directory: Path, slots: int) -> None:
        if slots < 1:
            raise ValueError(f"slots must be positive, got {slots}")
        self.directory, self.slots = Path(directory), slots
        self._fds: list[int] = []
        self._held: set[int] = set()
        self._freed: anyio.Event | None = None  # made in the event loop, at the first wait
        self._next = os.getpid() % slots  # processes start looking at different slots

    def open(self) -> None:
        """Create the directory and open the slot files (idempotent).

        Raises:
            ConfigurationError: the directory is not this user's own (another user could hold every slot).
        """
        if self._fds:
            return
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(self.directory)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
            raise ConfigurationError(f"local backend: the admission directory {self.directory} is not a private "
                                     f"directory of this user; remove it, or set {ADMISSION_ENV} to another")
        for i in range(self.slots):
            self._fds.append(os.open(self.directory / f"slot-{i}", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600))

    def close(self) -> None:
        """Release every slot and close the files."""
        fds, self._fds = self._fds, []
        self._held.clear()
        for fd in fds:
            os.close(fd)

    def _try(self) -> int | None:
        for k in range(self.slots):
            i = (self._next + k) % self.slots
            if i in self._held:
                continue
            try:
                fcntl.flock(self._fds[i], fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                    continue
                raise
            self._held.add(i)
            self._next = (i + 1) % self.slots
            return i
        return None

    @contextlib.asynccontextmanager
    async def admit(self) -> AsyncIterator[int]:
        """Hold one slot for the body (an execution); waits while every slot of the host is taken. Yields the slot's
        number."""
        self.open()
        slot = self._try()
        while slot is None:
            if self._freed is None or self._freed.is_set():
                self._freed = anyio.Event()
            with anyio.move_on_after(_POLL_S):
                await self._freed.wait()
            slot = self._try()
        try:
            yield slot
        finally:
            self._held.discard(slot)
            if self._fds:
                fcntl.flock(self._fds[slot], fcntl.LOCK_UN)
            if self._freed is not None:
                self._freed.set()

