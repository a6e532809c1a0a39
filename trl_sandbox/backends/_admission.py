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
import logging
import os
import stat
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio

from ..errors import ConfigurationError

logger = logging.getLogger(__name__)

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


#: Seconds a wait for a slot lasts before one line says who holds the slots (then at most once a minute).
SLOW_WAIT_S = 5.0


class HostAdmission:
    """At most ``slots`` executions at once across every process of this host that uses ``directory``: slot ``i`` is
    the file ``directory/slot-<i>``, taken by holding its exclusive ``flock``. Processes are served in turn.

    Each instance opens the slot files once (one open file description per slot: ``flock`` on one of them conflicts
    with every other process's and instance's, never with its own, which :meth:`admit` tracks). Taking a free slot
    while nobody waits costs one ``flock`` call.

    **Fairness across processes.** A process that finds no free slot joins the queue (``directory/queue/``): one file
    per waiting instance, named by a ticket from a shared counter and held with ``flock`` while it waits, so that a
    crashed waiter's place is seen to be free. While others wait, a slot goes to the instance at the head of the
    queue, which leaves it on taking one and joins its end again if more of its executions wait: every waiting
    process gets a slot in its turn (first come, first served, then round robin), and a neighbour that frees and takes
    slot after slot cannot starve it. Within an instance its own executions wake as soon as it frees a slot; other
    processes' slots are looked at every 5 ms.

    A wait of over :data:`SLOW_WAIT_S` seconds logs one line with the processes that hold the slots (pid and
    command, from ``/proc/locks``) and how to give a run its own limit (:data:`ADMISSION_ENV`).

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
        self._waiting = 0  # executions of this instance waiting for a slot
        self._ticket: tuple[int, int, str] | None = None  # (ticket, fd, file name) while in the queue
        self._said = 0.0  # when the last slow-wait line was logged (monotonic seconds)
        #: Seconds executions spent waiting for a slot, all of them so far.
        self.waited_s = 0.0

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
        (self.directory / "queue").mkdir(mode=0o700, exist_ok=True)
        for i in range(self.slots):
            self._fds.append(os.open(self.directory / f"slot-{i}", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600))

    def close(self) -> None:
        """Release every slot, leave the queue and close the files."""
        self._leave_queue()
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

    # -- the queue of waiting processes ----------------------------------------------------------------------------

    def _new_ticket(self) -> int:
        """The next number of the host's counter (``queue/counter``, 8 bytes, read and written under its lock)."""
        fd = os.open(self.directory / "queue" / "counter", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            data = os.pread(fd, 8, 0)
            number = int.from_bytes(data, "little") if len(data) == 8 else 0
            os.pwrite(fd, (number + 1).to_bytes(8, "little"), 0)
            return number
        finally:
            os.close(fd)

    def _join_queue(self) -> None:
        """Take a place at the end of the queue: a file named by a new ticket, locked before it has its name (a file
        seen in the queue unlocked is a dead waiter's)."""
        if self._ticket is not None:
            return
        queue = self.directory / "queue"
        ticket = self._new_ticket()
        name = f"{ticket:020d}-{os.getpid()}"
        fd = os.open(queue / f".{name}", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.rename(queue / f".{name}", queue / name)
        self._ticket = (ticket, fd, name)

    def _leave_queue(self) -> None:
        if self._ticket is None:
            return
        _, fd, name = self._ticket
        self._ticket = None
        with contextlib.suppress(OSError):
            os.unlink(self.directory / "queue" / name)
        os.close(fd)

    def _others_ahead(self) -> bool:
        """Whether a live waiter of another instance is ahead of this one in the queue (any live waiter, when this one
        is not in it). A dead waiter's file (unlocked) is removed on the way."""
        mine = self._ticket[0] if self._ticket is not None else None
        try:
            names = os.listdir(self.directory / "queue")
        except OSError:
            return False
        for name in sorted(names):
            if name.startswith(".") or "-" not in name:
                continue
            try:
                ticket = int(name.split("-", 1)[0])
            except ValueError:
                continue
            if mine is not None and ticket >= mine:
                return False
            path = self.directory / "queue" / name
            try:
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:  # left the queue meanwhile
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:  # locked: its waiter lives and is ahead
                return True
            finally:
                os.close(fd)
            with contextlib.suppress(OSError):  # unlocked: its waiter died (or is leaving); its place is free
                os.unlink(path)
        return False

    def _take(self) -> int | None:
        """A slot for one execution, when this instance's turn has come: none ahead of it in the queue."""
        if self._others_ahead():
            self._join_queue()
            return None
        slot = self._try()
        if slot is None:
            self._join_queue()
            return None
        self._leave_queue()  # its turn is used: if more of its executions wait, they queue again, at the end
        return slot

    # -- who holds the slots ---------------------------------------------------------------------------------------

    def holders(self) -> list[tuple[int, str]]:
        """The processes of other instances that hold slots now: ``(pid, command line)`` each, from ``/proc/locks``
        (pids as the host numbers them; ``[]`` where it cannot be read)."""
        inodes = {}
        for i in range(len(self._fds)):
            if i not in self._held:
                with contextlib.suppress(OSError):
                    inodes[os.fstat(self._fds[i]).st_ino] = i
        pids: list[int] = []
        try:
            with open("/proc/locks") as f:
                for line in f:
                    parts = line.split()
                    # "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF"
                    if len(parts) >= 6 and parts[1] == "FLOCK" and parts[3] == "WRITE":
                        inode = int(parts[5].rsplit(":", 1)[-1])
                        if inode in inodes and parts[4].isdigit():
                            pids.append(int(parts[4]))
        except (OSError, ValueError):
            return []
        out = []
        for pid in pids:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    command = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            except OSError:
                command = "?"
            out.append((pid, command[:200]))
        return out

    def _say_slow(self, waited_s: float) -> None:
        now = time.monotonic()
        if now - self._said < 60.0:
            return
        self._said = now
        counts: dict[tuple[int, str], int] = {}
        for holder in self.holders():
            counts[holder] = counts.get(holder, 0) + 1
        held = "; ".join(f"pid {pid} ({command}) holds {n}" for (pid, command), n in counts.items()) or (
            "held by this process's own executions")
        logger.warning(
            "trl-sandbox: waited %.0f s for one of this host's %d execution slots (%s): %s. Runs on one host share "
            "its cores, each served in turn; to give this run a limit of its own (and its cores to share with "
            "nobody), set %s to another directory, or max_host_executions in sandbox_backend_options",
            waited_s, self.slots, self.directory, held, ADMISSION_ENV)

    @contextlib.asynccontextmanager
    async def admit(self, on_wait: Callable[[float | None], None] | None = None) -> AsyncIterator[int]:
        """Hold one slot for the body (an execution); waits while every slot of the host is taken, or while other
        processes that waited first have not had their turn. Yields the slot's number.

        Args:
            on_wait: When this execution has to wait: called with None as the wait begins, then with the seconds it
                waited once it has its slot (the scorer counts them in the completion's ``queue_s``, and never
                against its batch deadline).
        """
        self.open()
        slot = self._take() if not self._waiting else None
        if slot is None:
            if on_wait is not None:
                on_wait(None)
            start = time.monotonic()
            self._waiting += 1
            try:
                while slot is None:
                    if self._freed is None or self._freed.is_set():
                        self._freed = anyio.Event()
                    with anyio.move_on_after(_POLL_S):
                        await self._freed.wait()
                    slot = self._take()
                    if slot is None and time.monotonic() - start > SLOW_WAIT_S:
                        self._say_slow(time.monotonic() - start)
            finally:
                self._waiting -= 1
                if not self._waiting:
                    self._leave_queue()
                waited = time.monotonic() - start
                self.waited_s += waited
                if on_wait is not None:  # cancelled too: a wait that began ends
                    on_wait(waited)
        try:
            yield slot
        finally:
            self._held.discard(slot)
            if self._fds:
                fcntl.flock(self._fds[slot], fcntl.LOCK_UN)
            if self._freed is not None:
                self._freed.set()
