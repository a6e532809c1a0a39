"""Sandbox uids of the local backend, allocated host-wide without collisions.

As root, each local sandbox runs its code as a uid of its own (``61000 + n``): ``RLIMIT_NPROC`` counts processes per
uid, so two sandboxes that shared a uid would share one process limit, and a completion holding its processes would
make an honest completion of the other sandbox fail (a thread or a compiler that cannot start). Sandboxes are made by
many processes at once (the ranks of a run, each Ray actor, other runs of the host), so a uid is claimed in a registry
that every process of the host shares: one file per uid in :func:`registry_dir`, held with an exclusive ``flock`` for
as long as the sandbox lives. The kernel releases the lock when its holder dies, so a run that was killed never keeps
its uids; the holder unlinks the file when it releases the uid, and :func:`sweep` removes the files of holders that
died (each backend sweeps when it starts).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ..errors import InfrastructureError
from ._host import hold

#: The first sandbox uid, and how many there are.
UID_BASE = 61000
UID_SPAN = 20000
#: Environment variable naming the registry's directory (default: see :func:`registry_dir`).
REGISTRY_ENV = "TRL_SANDBOX_UID_DIR"


def registry_dir() -> Path:
    """The registry's directory: ``$TRL_SANDBOX_UID_DIR``, else ``/run/trl-sandbox-uids`` (``/run`` is one per host,
    emptied at boot, whatever ``TMPDIR`` each process has), else ``/tmp/trl-sandbox-uids``."""
    configured = os.environ.get(REGISTRY_ENV)
    if configured:
        return Path(configured)
    base = "/run" if os.path.isdir("/run") and os.access("/run", os.W_OK) else "/tmp"
    return Path(base) / "trl-sandbox-uids"


class UidClaim:
    """A uid held by this process until :meth:`release` (or until the process ends).

    Attributes:
        uid: The claimed uid.
    """

    def __init__(self, uid: int, fd: int, path: Path) -> None:
        self.uid, self._fd, self._path = uid, fd, path

    def release(self) -> None:
        """Give the uid back: unlink its file while still holding the lock (a claimer that opened the old file sees
        it unlinked and tries again), then close. Idempotent."""
        if self._fd < 0:
            return
        with contextlib.suppress(OSError):
            os.unlink(self._path)
        os.close(self._fd)
        self._fd = -1
        with contextlib.suppress(OSError):  # the last uid of the host: the directory goes too (empty, or it stays)
            os.rmdir(self._path.parent)


def sweep() -> int:
    """Remove the registry's files that no live process holds (left by runs killed before they released their uids),
    and the directory when nothing is left; never a held one. Returns how many were removed."""
    directory = registry_dir()
    try:
        names = os.listdir(directory)
    except OSError:
        return 0
    removed = 0
    for name in names:
        fd = hold(directory / name) if name.isdigit() else None
        if fd is not None:
            UidClaim(int(name), fd, directory / name).release()  # removes the directory after the last one
            removed += 1
    with contextlib.suppress(OSError):
        os.rmdir(directory)  # empty already (only when nothing is held: rmdir refuses a directory with files)
    return removed


def claim(hint: int = 0) -> UidClaim:
    """Claim a free uid of ``[UID_BASE, UID_BASE + UID_SPAN)``, starting the search at ``UID_BASE + hint % UID_SPAN``.

    Raises:
        InfrastructureError: every uid is held, or the registry's directory cannot be used.
    """
    directory = registry_dir()
    for offset in range(UID_SPAN):
        uid = UID_BASE + (hint + offset) % UID_SPAN
        path = directory / str(uid)
        for _attempt in range(5):  # the directory may be removed by another process's last release meanwhile
            try:
                directory.mkdir(mode=0o700, parents=True, exist_ok=True)
                os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600))
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise InfrastructureError(f"local backend: cannot use the sandbox uid registry {directory}: {exc}; "
                                          f"set {REGISTRY_ENV} to a directory of this host that root can write")
            fd = hold(path)
            if fd is not None:
                return UidClaim(uid, fd, path)
            break
    raise InfrastructureError(f"local backend: all {UID_SPAN} sandbox uids of this host are in use")
