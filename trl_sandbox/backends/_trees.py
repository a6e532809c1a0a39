"""How the local backend runs a command in a fresh tree of an image (repository tasks): the host's side of the
launcher's tree mode (``_launcher.py``, ``_rootfs.py``).

Each execution gets its own overlay of the image's root filesystem in its own namespaces, under the sandbox's
cgroups and rlimits, and the tree is gone when the execution ends. What the command reads as input (a patch, an
eval script) comes as sealed memory files at ``/dev/fd/3``, ``/dev/fd/4``, ...: it can read them, never change
them, and they are nowhere in its tree.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from ..errors import ConfigurationError, InfrastructureError
from ..images.cache import ImageCache
from ..images.layers import IMAGE_UID
from ._executions import run_launcher
from ._host import rmtree
from .base import ExecResult, Sandbox

if TYPE_CHECKING:
    from ..images.cache import Image

#: Seconds the host gives a tree's launcher past the deadline: PID 1 is killed at the deadline and the kernel then
#: ends every process of the namespace, which for a fork bomb's hundreds of processes at nice 10 beside busy ones
#: takes seconds. Past it the execution is an infrastructure failure, so this must cover what a program can start.
TEARDOWN_GRACE_S = 30.0
#: Where a tree's first input is (the next ones follow: ``/dev/fd/4``, ...).
FIRST_INPUT_FD = 3
_SEALS = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE


@dataclass(frozen=True)
class TreeLimits:
    """What one execution in a tree may use.

    Attributes:
        upper_bytes: Bytes the execution may write into its tree (the upper layer's tmpfs). Past it, writes fail
            with ``ENOSPC``. Its pages count in the sandbox's memory cgroup with the processes' memory: the cgroup's
            limit (``sandbox_memory_limit`` plus the scratch size) bounds both together.
        upper_inodes: Files and directories it may create in the tree.
        memory_bytes: ``RLIMIT_DATA`` of each process (bytes); the sandbox's memory cgroup bounds all of them.
        processes: ``RLIMIT_NPROC``: processes and threads (the sandbox's pids cgroup, where there is one, bounds
            everything the execution starts).
        open_files: ``RLIMIT_NOFILE``.
    """

    upper_bytes: int = 512 << 20
    upper_inodes: int = 1 << 18
    memory_bytes: int = 4 << 30
    processes: int = 256
    open_files: int = 4096


def image_owner(rootfs: Path) -> int:
    """The host uid root inside a tree of ``rootfs`` maps to: its owner, which must be this process's uid (an
    import by this user) or, as root, :data:`~trl_sandbox.images.layers.IMAGE_UID` (an import by root).

    Raises:
        ConfigurationError: the image was imported by another user, or by an older trl-sandbox that kept owners.
    """
    owner = os.stat(rootfs).st_uid
    expected = IMAGE_UID if os.geteuid() == 0 else os.geteuid()
    if owner != expected:
        raise ConfigurationError(
            f"image {rootfs.parent.name} belongs to uid {owner}, not {expected}: import it again as this user "
            f"(trl-sandbox images remove, then import) or use a cache of this user's (--cache)")
    return owner


def sealed_input(data: bytes, name: str) -> int:
    """A memory file holding ``data``, sealed against every change, as a descriptor (close-on-exec)."""
    fd = os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, _SEALS)
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


async def run_in_tree(
    *,
    runs: Path,
    rootfs: Path,
    argv: Sequence[str],
    env: Mapping[str, str],
    workdir: str,
    inputs: Sequence[bytes],
    stdin: bytes,
    timeout_s: float,
    limits: TreeLimits,
    output_limit: int,
    cgroups: Sequence[str],
    seccomp: bool,
    nice: int = 10,
) -> ExecResult:
    """Run ``argv`` (an absolute path inside the image first) as root of a fresh tree of ``rootfs``, in
    ``workdir``, with exactly ``env``, for at most ``timeout_s`` seconds, under ``limits``; ``inputs[i]`` is at
    ``/dev/fd/{3 + i}``. The tree's mount point is a directory made under ``runs`` and removed after.

    Raises:
        ConfigurationError: the image belongs to another user (see :func:`image_owner`).
        InfrastructureError: the tree could not be prepared (overlayfs unavailable, with the kernel's reason) or
            the launcher failed.
    """
    owner = image_owner(rootfs)
    try:
        mountpoint = Path(tempfile.mkdtemp(dir=runs, prefix="tree-"))
    except OSError as exc:
        raise InfrastructureError(f"local backend: cannot create a tree's directory: {exc}") from exc
    fds: list[int] = []
    try:
        fds = [sealed_input(data, f"trl-sandbox-input-{i}") for i, data in enumerate(inputs)]
        for fd in fds:
            os.set_inheritable(fd, True)
        cpu = int(timeout_s) + 1
        cfg = {
            "argv": list(argv),
            "cwd": str(mountpoint),
            "env": dict(env),
            "timeout_s": timeout_s,
            "rlimits": {
                "cpu": [cpu, cpu + 1],
                "data": [limits.memory_bytes, limits.memory_bytes],
                "fsize": [limits.upper_bytes, limits.upper_bytes],
                "nproc": [limits.processes, limits.processes],
                "nofile": [limits.open_files, limits.open_files],
                "core": [0, 0],
            },
            "nice": nice,
            "cgroups": list(cgroups),
            "seccomp": seccomp,
            "inputs": fds,
            "tree": {"rootfs": str(rootfs), "owner": owner, "workdir": workdir, "upper_bytes": limits.upper_bytes,
                     "upper_inodes": limits.upper_inodes},
        }
        return await run_launcher(cfg, stdin, timeout_s, output_limit, limits.upper_bytes, pass_fds=fds,
                                  grace_s=TEARDOWN_GRACE_S)
    finally:
        for fd in fds:
            os.close(fd)
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(rmtree, mountpoint)


def repo_image(self: Any, name: str) -> Image:
    """The local backend's :meth:`~trl_sandbox.backends.base.Backend.repo_image`: this host's image cache entry of
    ``name`` (``$TRL_SANDBOX_CACHE/images``), which :func:`exec_in_image` makes trees of. Blocking.

    Raises:
        trl_sandbox.images.ImageError: the image is not in the cache (the message says how to import it).
    """
    return ImageCache().get(name)


async def exec_in_image(self: Any, sandbox: Sandbox, image: Image, argv: Sequence[str], *,
                        timeout_s: float, inputs: Sequence[bytes] = (), env: Mapping[str, str] | None = None,
                        workdir: str | None = None, limits: TreeLimits | None = None) -> ExecResult:
    """The local backend's :meth:`~trl_sandbox.backends.base.Backend.exec_in_image`: run ``argv`` as root of a
    fresh tree of ``image`` (:func:`run_in_tree`): the image's environment with ``env`` over it, in ``workdir``
    (default: the image's), under the sandbox's cgroups, seccomp and ``limits``; ``inputs[i]`` is readable at
    ``/dev/fd/{3 + i}``. ``self`` is the :class:`~trl_sandbox.backends.local.LocalBackend` (this is its method).

    Raises:
        ConfigurationError: the backend runs without namespaces, or the image belongs to another user.
        InfrastructureError: the sandbox is gone, or the tree could not be prepared (the kernel's reason).
    """
    if not self._namespaces:
        raise ConfigurationError("repository tasks need the local backend's namespaces (namespaces=true)")
    runs = Path(sandbox.data) / "runs"
    if not runs.is_dir():
        raise InfrastructureError(f"local backend: sandbox {sandbox.id} does not exist")
    return await run_in_tree(
        runs=runs, rootfs=image.rootfs, argv=argv, env={"HOME": "/root", **image.env, **(env or {})},
        workdir=workdir or image.workdir, inputs=inputs, stdin=b"", timeout_s=timeout_s,
        limits=limits or TreeLimits(), output_limit=self.output_limit_bytes,
        cgroups=self._cgroups.procs_files(sandbox.id), seccomp=bool(self._seccomp))

