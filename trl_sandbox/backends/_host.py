"""The host's side of the local backend's processes and files: process groups and counts, pipes read and written
without blocking, directory trees that sandboxed code made hard to remove, the sandboxes' root directory that runs of
this host share (:func:`enter_root`, :func:`leave_root`), files held with ``flock`` by the process that owns what
they name (:func:`hold`). Also what ``lifecycle`` asks of this host (:func:`process_alive`)."""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import stat
import uuid
from collections.abc import Callable
from pathlib import Path

import anyio


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` of this host exists (someone else's process counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def hold(path: Path) -> int | None:
    """An open descriptor of ``path`` holding its exclusive ``flock``, when no process holds it (this one through
    another descriptor included) and it is still the file at that name (its last holder may have unlinked it between
    our open and our lock); else None. The kernel releases the lock when the descriptor is closed or its process
    dies, SIGKILL included."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino:
            return fd
    except OSError:  # held by a live process (BlockingIOError), or unlinked (FileNotFoundError)
        pass
    os.close(fd)
    return None


def rmtree(path: Path, _retried: set[str] | None = None) -> None:
    """Remove ``path`` even when sandboxed code left directories without write or search permission, and while
    another process removes the same tree (two ray actors of one node sweeping one leftover)."""
    retried: set[str] = set() if _retried is None else _retried
    top = os.path.abspath(path)

    def onerror(func, p, exc_info):  # shutil callback signature
        if isinstance(exc_info[1], FileNotFoundError):
            return  # removed meanwhile
        try:
            parent = os.path.dirname(p)
            if os.path.abspath(p) != top:  # never the directory that holds the tree (the sandboxes' root_dir)
                os.chmod(parent, stat.S_IRWXU)
            if os.path.isdir(p) and not os.path.islink(p):
                os.chmod(p, stat.S_IRWXU)
            if func in (os.rmdir, os.unlink, os.remove):
                func(p)
            elif os.path.isdir(p) and not os.path.islink(p) and p not in retried:
                retried.add(p)  # a directory that could not be opened or listed: again, now that it may be
                rmtree(Path(p), retried)
        except OSError:
            pass

    shutil.rmtree(path, onerror=onerror)


#: Prefix of the entry by which a live run marks its use of a sandbox root: ``.run-<pid>-<random>``.
_PRESENCE = ".run-"


def enter_root(root: Path, *, private: bool) -> tuple[Path, bool]:
    """Create the sandboxes' root directory ``root`` (mode 0711) when missing and mark this run's use of it with an
    empty file, which keeps it from being removed by another run's :func:`leave_root` (``rmdir`` fails on a
    directory that holds anything) until this run leaves. Returns ``(the presence file, whether this call created
    root)``. Marks of runs whose process is gone (killed before leaving) are removed.

    Race-safe against another run of this host leaving the same root at the same moment: when ``root`` is removed
    between its ``mkdir`` and the mark, both are made again.

    Args:
        private: ``root`` is where other users may create names (the default, under ``/tmp``): refuse a symbolic
            link or a directory owned by another user, which a run would otherwise trust.

    Raises:
        OSError: ``root`` cannot be created, or (``private``) is not a directory of this user.
    """
    created = False
    root.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(20):
        try:
            os.mkdir(root, 0o711)
            created = True
        except FileExistsError:
            pass
        presence = root / f"{_PRESENCE}{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            if private:
                info = os.lstat(root)
                if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
                    raise PermissionError(f"{root} is not a directory of user {os.geteuid()} (another user made "
                                          "it?); remove it, or choose another root_dir")
            os.chmod(root, 0o711)
            presence.touch(mode=0o600, exist_ok=False)
        except FileNotFoundError:  # removed by another run since the mkdir: again
            if attempt == 19:
                raise
            continue
        break
    for stale in root.glob(f"{_PRESENCE}*"):
        pid = stale.name[len(_PRESENCE):].split("-")[0]
        if pid.isdigit() and not process_alive(int(pid)):
            stale.unlink(missing_ok=True)
    return presence, created


def leave_root(presence: Path, *, remove: bool) -> None:
    """Remove this run's presence file from the sandboxes' root, then (``remove``) the root itself when empty: a root
    that holds another live run's presence, sandboxes, or files of anyone, stays (``rmdir`` refuses it)."""
    presence.unlink(missing_ok=True)
    if remove:
        try:
            os.rmdir(presence.parent)
        except OSError:
            pass


def leave_host(presence: Path, remove_root: bool, made: list[Path], release: Callable[[], None]) -> None:
    """Remove what a run of the local backend made on this host outside its sandboxes: the directories ``made`` in
    the sandboxes' root (the judge's package copy, the packages' view), then its presence in the root and
    (:func:`leave_root`) the root, then what ``release`` frees (the parent cgroups where no other live run of this host
    uses them, the sandbox uids it holds)."""
    for path in made:
        rmtree(path)
    leave_root(presence, remove=remove_root)
    release()


def release_host(remove_cgroups: Callable[[], None], claims: dict) -> None:
    """What a local backend that goes away without deleting its sandboxes frees: the uids they held (``claims``: sandbox
    id -> ``_uids.UidClaim``), then the parent cgroups (see :func:`leave_host`)."""
    for claim in list(claims.values()):
        claim.release()
    claims.clear()
    remove_cgroups()


def remove_stale(root: Path, prefix: str) -> None:
    """Remove the entries of ``root`` named ``<prefix><pid>-...`` whose process ``pid`` is gone (made by a run killed
    before it could remove them)."""
    for stale in root.glob(f"{prefix}*"):
        pid = stale.name[len(prefix):].split("-")[0]
        if pid.isdigit() and not process_alive(int(pid)):
            rmtree(stale)


def processes_of(uid: int) -> int:
    """Number of tasks (processes and threads) of ``uid`` now: the base of a per-uid ``RLIMIT_NPROC``."""
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    count += len(os.listdir(f"/proc/{entry}/task"))
            except OSError:
                continue
    return count


def killpg(pid: int) -> None:
    """Kill process group ``pid`` (SIGKILL); a group already gone is fine."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def read_all(fd: int) -> bytes:
    """What the non-blocking pipe ``fd`` holds now, up to its end of file; closes ``fd``."""
    data = b""
    try:
        os.set_blocking(fd, False)
        while True:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                break
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    return data


class Capture:
    """An output stream kept up to ``limit`` bytes (the rest is read and dropped; ``truncated`` says so)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.truncated = False

    def add(self, chunk: bytes) -> None:
        room = self.limit - len(self.data)
        if room > 0:
            self.data += chunk[:room]
        if len(chunk) > room:
            self.truncated = True

    async def drain(self, fd: int) -> None:
        """Read the non-blocking pipe ``fd`` to EOF."""
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                await anyio.wait_readable(fd)
                continue
            if not chunk:
                return
            self.add(chunk)


def write_some(fd: int, data: bytes) -> bytes:
    """Write what fits now into a non-blocking pipe; return the rest (empty when all was written)."""
    try:
        while data:
            data = data[os.write(fd, data) :]
    except BlockingIOError:
        pass
    except OSError:  # the execution exited without reading its input
        return b""
    return data
