"""What the remote backends (``daytona``, ``e2b``, ``hf``, ``cwsandbox``) share: pacing of creations, the retry loop
of API calls, the command that feeds a request file to the harness (:func:`redirected`), how a session process
ends (:class:`StreamProcess`), and how a repository task runs in a sandbox made from its image
(:class:`RemoteImages`). Each backend only says which errors are worth retrying (its SDK's classes and codes differ),
how its API streams a process's output and how it makes a sandbox from an image."""

from __future__ import annotations

import abc
import fcntl
import hashlib
import logging
import os
import shlex
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio

from ..errors import ConfigurationError, InfrastructureError
from ..netguard import refused_in
from .base import ExecResult, ImageRef, Sandbox, SandboxProcess

T = TypeVar("T")
logger = logging.getLogger(__name__)

#: What a classifier returns for an error retried after the exponential backoff (0.5 s doubling, at most 8 s).
BACKOFF = -1.0


def redirected(argv: Sequence[str], stdin_path: str, prefix: str = "") -> str:
    """The shell command that runs ``argv`` (after ``prefix``, e.g. coreutils ``timeout -k 2 10 ``) with the file
    ``stdin_path`` as its stdin, then removes the file (in case the harness did not get to it) and exits with
    ``argv``'s status. For the remote backends whose exec API has no stdin (the request is uploaded as that file).

    The file is opened by a shell that replaces itself with ``argv`` (``PREFIX /bin/sh -c 'exec ARGV < FILE'``): a
    shell that ran ``ARGV < FILE`` itself would hold the file open in its own process for the whole run (dash
    redirects before it forks, and restores after), and so would ``timeout`` given it as stdin; such a process runs as
    the command's user and is dumpable, so the program could read the request through ``/proc/<pid>/fd/0`` after the
    harness removed its name. The harness's own descriptor is closed to the program (it is not dumpable).
    """
    path = shlex.quote(stdin_path)
    inner = shlex.quote(f"exec {shlex.join(list(argv))} < {path}")
    return f"{prefix}/bin/sh -c {inner}; status=$?; rm -f {path} 2>/dev/null; exit $status"


class Pacer:
    """Spaces events (sandbox creations) at least ``1 / per_s`` seconds apart, across concurrent callers and, through
    a lock file, across the processes of this host that pace the same account: 8 ranks on one machine create at the
    configured rate together, not at 8 times it (one account has one rate limit). As Prime Intellect's ``verifiers``
    does, the shared state is a small file holding the time of the next free turn, read and written under an
    exclusive ``flock``.

    Args:
        per_s: Most events per second (positive).
        key: What identifies the account (e.g. backend name, API URL and key): processes pacing the same key share
            one pace. None: this process alone.
        lock_dir: Where the lock files live (default: ``$TRL_SANDBOX_LOCK_DIR``, else the system's temporary
            directory).
    """

    def __init__(self, per_s: float, key: str | None = None, lock_dir: str | os.PathLike[str] | None = None) -> None:
        self.interval_s = 1.0 / per_s
        self._next = 0.0
        self._lock: anyio.Lock | None = None
        self.path: Path | None = None
        if key is not None:
            digest = hashlib.sha256(key.encode()).hexdigest()[:16]
            directory = lock_dir or os.environ.get("TRL_SANDBOX_LOCK_DIR") or tempfile.gettempdir()
            self.path = Path(directory) / f"trl-sandbox-pace-{os.geteuid()}-{digest}"

    async def wait(self) -> float:
        """Return when this caller's turn has come (at once when the last turn is long past).

        Returns:
            The time of the turn reserved for this caller: wall-clock seconds (``time.time()``) for a shared pacer,
            ``time.monotonic()`` seconds otherwise. Turns are at least ``1 / per_s`` apart, whatever the sleeps.
        """
        if self._lock is None:  # made on first use: it belongs to the event loop of the caller
            self._lock = anyio.Lock()
        async with self._lock:
            if self.path is not None:
                turn, wait = await anyio.to_thread.run_sync(self._reserve_shared)
            else:
                now = time.monotonic()
                turn = max(now, self._next)
                wait = turn - now
                self._next = turn + self.interval_s
        if wait > 0:
            await anyio.sleep(wait)
        return turn

    def _locked(self, create: bool) -> int | None:
        """The lock file, open and locked (``flock``, exclusive), and still the one at :attr:`path`: a file another
        process removed (:meth:`aclose`) while we waited for its lock is dropped and the path opened again, so that
        two processes never hold the locks of two different files. None when the file does not exist and ``create``
        is False. The caller closes the descriptor (which releases the lock)."""
        assert self.path is not None
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | (os.O_CREAT if create else 0), 0o600)
            except FileNotFoundError:
                return None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                held, named = os.fstat(fd), os.stat(self.path)
            except FileNotFoundError:  # removed meanwhile
                os.close(fd)
                continue
            except BaseException:
                os.close(fd)
                raise
            if (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino):
                return fd
            os.close(fd)  # replaced meanwhile

    @staticmethod
    def _next_turn(fd: int, now: float) -> float:
        """The time of the next free turn stored in the locked file ``fd`` (0 when none; ``now`` when the wall clock
        went back, so that the stored turn means nothing)."""
        try:
            next_turn = float(os.pread(fd, 64, 0) or b"0")
        except ValueError:
            next_turn = 0.0
        return now if next_turn > now + 3600 else next_turn

    def _reserve_shared(self) -> tuple[float, float]:
        """Take the next turn from the lock file (wall-clock times: shared between processes); the turn's time and
        the seconds to wait for it."""
        fd = self._locked(create=True)
        assert fd is not None
        try:
            now = time.time()
            turn = max(now, self._next_turn(fd, now))
            data = repr(turn + self.interval_s).encode()
            os.ftruncate(fd, 0)
            os.pwrite(fd, data, 0)
            return turn, turn - now
        finally:
            os.close(fd)  # releases the lock

    def _remove_shared(self) -> float | None:
        """Remove the lock file when the turn it holds is past (a file made again later holds the same: no turn);
        else leave it and return the seconds until that turn. Under the lock, and only the file at :attr:`path`
        (see :meth:`_locked`): a process that opened it before the removal finds it gone and makes a new one."""
        fd = self._locked(create=False)
        if fd is None:
            return None
        try:
            now = time.time()
            wait = self._next_turn(fd, now) - now
            if wait > 0:
                return wait
            os.unlink(self.path)
            return None
        finally:
            os.close(fd)

    async def aclose(self) -> None:
        """Remove this pacer's lock file (shared pacers), so that a run leaves no file behind. The file holds the
        time of the next free turn: it is removed once that time has passed (waiting for it when it is at most one
        interval away, i.e. our own last turn); a turn further away was reserved by another process pacing the same
        key, which removes the file when it closes. Errors removing it are ignored (a file left is harmless)."""
        if self.path is None:
            return
        with anyio.CancelScope(shield=True):
            for _ in range(2):
                try:
                    wait = await anyio.to_thread.run_sync(self._remove_shared)
                except OSError:
                    return
                if wait is None or wait > self.interval_s:
                    return
                await anyio.sleep(wait)


async def retrying(
    call: Callable[[], Awaitable[T]],
    *,
    what: str,
    backend: str,
    deadline_s: float,
    max_retries: int,
    classify: Callable[[Exception], float | None],
    stats: dict[str, int],
) -> T:
    """``await call()`` within ``deadline_s`` seconds, retrying the errors ``classify`` accepts.

    Args:
        call: Makes one attempt (called again for each retry).
        what: The action, for messages (``"create a sandbox"``).
        backend: The backend's name, for messages.
        deadline_s: Seconds for all attempts together, waits included.
        max_retries: Most retries after the first attempt.
        classify: For an error, the seconds to wait before retrying it (e.g. a server's ``Retry-After``),
            :data:`BACKOFF` for the exponential backoff, or None when it is not worth retrying. It may raise a
            :class:`ConfigurationError` itself (refused credentials). A refusal of
            :mod:`trl_sandbox.netguard` is never retried, and never classified.
        stats: Its ``"retries"`` counter is increased for each retry.

    Raises:
        ConfigurationError: from ``call`` or ``classify``.
        InfrastructureError: from ``call``; for an error not retried; for the last error after ``max_retries``
            retries; or when the deadline passes.
    """
    end = time.monotonic() + deadline_s
    backoff = 0.5
    attempt = 0
    while True:
        try:
            with anyio.fail_after(max(0.0, end - time.monotonic())):
                return await call()
        except TimeoutError:
            raise InfrastructureError(f"{backend}: could not {what} within {deadline_s:.0f}s") from None
        except (ConfigurationError, InfrastructureError):
            raise
        except Exception as exc:  # noqa: BLE001 - classified by the backend
            # a test suite's network guard refused the address (see netguard): no retry changes that
            wait = None if refused_in(exc) else classify(exc)
            if wait is None:
                raise InfrastructureError(f"{backend}: could not {what}: {describe(exc)}") from exc
            if wait == BACKOFF:
                wait, backoff = backoff, min(backoff * 2, 8.0)
            attempt += 1
            if attempt > max_retries or time.monotonic() + wait >= end:
                raise InfrastructureError(
                    f"{backend}: could not {what} after {attempt} attempt(s): {describe(exc)}"
                ) from exc
            stats["retries"] += 1
            await anyio.sleep(wait)


def describe(exc: BaseException) -> str:
    """``Type: message`` of an error, at most 500 characters."""
    return f"{type(exc).__name__}: {exc}"[:500]


class StreamProcess(SandboxProcess):
    """A session process of a remote service whose API streams the process's stdout in chunks of text: subclasses
    give :meth:`send`, :meth:`_next_chunk`, :meth:`_wait_end` and :meth:`_stop`; :class:`SandboxProcess` cuts the
    chunks into lines, and this class ends the process. The session protocol is ASCII JSON lines (see
    :func:`trl_sandbox.harness.session.session_main`), so a service that decodes each chunk on its own loses nothing.

    Args:
        backend: The backend's name, for messages.
        sandbox_id: The sandbox's id, for messages.
    """

    def __init__(self, backend: str, sandbox_id: str) -> None:
        super().__init__(backend)
        self.sandbox_id = sandbox_id
        self.killed = False

    @abc.abstractmethod
    async def _wait_end(self) -> bool:
        """Wait for the end of a process asked to end (it may never come: the caller bounds the wait); whether its
        end was confirmed."""

    @abc.abstractmethod
    async def _stop(self, ended: bool) -> None:
        """Release what the process holds on the service; stop it there when it has not ended (``ended`` False).

        Raises:
            InfrastructureError: the service could not be reached.
        """

    async def kill(self, *, wait_s: float = 0.0) -> None:
        """Wait ``wait_s`` seconds at most for the process to end by itself (:meth:`_wait_end`), then stop it
        (:meth:`_stop`). Idempotent; see :meth:`SandboxProcess.kill`.

        Raises:
            InfrastructureError: the end could not be confirmed, or the service could not be reached (the sandbox
                should not be reused).
        """
        if self.killed:
            return
        self.killed = True
        with anyio.CancelScope(shield=True):
            ended = False
            with anyio.move_on_after(wait_s):
                ended = await self._wait_end()
            await self._stop(ended)
        if not ended:
            raise InfrastructureError(f"{self.backend}: the session process in sandbox {self.sandbox_id} did not end")


#: Where a repository task's inputs are uploaded in its sandbox, under the backend's working directory; the command
#: opens them and removes the directory before anything of the task runs.
INPUTS_DIR = ".trl-sandbox-inputs"
#: The label a repository task's sandbox carries beside its pool's (the pool's sweep finds it by those).
ROLE_LABEL = "trl-sandbox-role"
#: The first line of a command whose preparation failed (the inputs could not be opened or removed): an
#: infrastructure failure, not the task's result. Printed before any of the task's code runs.
PREPARATION_FAILED = "trl-sandbox: the repository task's inputs could not be prepared"


#: Seconds a repository task's sandbox is kept by its service past the task's deadline (uploads, deletion).
LIFETIME_GRACE_S = 120.0


def image_command(argv: Sequence[str], inputs: Sequence[str], *, directory: str, workdir: str,
                  env: Mapping[str, str]) -> str:
    """The bash script a remote backend runs for :meth:`~trl_sandbox.backends.base.Backend.exec_in_image`: it opens
    ``inputs[i]`` (absolute paths) as descriptor ``3 + i``, removes ``directory`` (where they were uploaded: no name
    of them stays for the task's code to open or change), changes to ``workdir`` (if any), exports ``env`` and
    replaces itself with ``argv``. On a failure of its own it prints :data:`PREPARATION_FAILED` and exits 125."""
    fail = f"{{ echo {shlex.quote(PREPARATION_FAILED)}; exit 125; }}"
    lines = []
    if inputs:
        opens = " ".join(f"{3 + i}<{shlex.quote(path)}" for i, path in enumerate(inputs))
        lines.append(f"{{ exec {opens}; }} 2>/dev/null || {fail}")  # the marker first: no shell error before it
    quoted = shlex.quote(directory)
    lines.append(f"rm -rf {quoted} 2>/dev/null; [ ! -e {quoted} ] || {fail}")
    if workdir:
        lines.append(f"cd {shlex.quote(workdir)} 2>/dev/null || {fail}")
    lines.extend(f"export {name}={shlex.quote(value)}" for name, value in env.items())
    lines.append(f"exec {shlex.join(list(argv))}")
    return "\n".join(lines)


class RemoteImages:
    """Repository tasks on a remote backend (a mixin of :class:`~trl_sandbox.backends.base.Backend` subclasses that
    implement ``_create_from_image(labels, image, lifetime_s) -> Sandbox``: the service makes a sandbox from the
    image by the
    SDK's own parameter, its commands run as root). Each execution gets a sandbox of its own, made from the task's
    image and deleted after it, as SWE-bench's harness makes one container per instance; the pool's sandbox it was
    leased with only bounds how many run at once. What runs in it is the same runner script as on the local
    backend (:mod:`trl_sandbox.repos.runner`), so the verdict is the same code."""

    def repo_image(self, name: str) -> ImageRef:
        """``name`` as an :class:`~trl_sandbox.backends.base.ImageRef`, with its ``WorkingDir`` when this host's image
        cache holds it (a Harbor task runs there; see :func:`trl_sandbox.repos.runner.run_task`). Blocking."""
        from ..images import ImageCache, ImageError

        try:
            return ImageRef(name, ImageCache().get(name).workdir)
        except ImageError:
            return ImageRef(name)

    async def exec_in_image(self, sandbox: Sandbox, image: Any, argv: Sequence[str], *, timeout_s: float,
                            inputs: Sequence[bytes] = (), env: Mapping[str, str] | None = None,
                            workdir: str | None = None, limits: Any = None) -> ExecResult:
        """Run ``argv`` in a new sandbox made from ``image`` (an :class:`~trl_sandbox.backends.base.ImageRef` or a
        name), labelled as ``sandbox`` (plus :data:`ROLE_LABEL`), as root, in ``workdir`` (default: the image's when
        known, else the backend's working directory), with ``env`` over the image's environment, for at most
        ``timeout_s`` seconds; ``inputs[i]`` is uploaded, opened as ``/dev/fd/{3 + i}`` and its file removed before
        ``argv`` runs (:func:`image_command`). The sandbox is deleted afterwards (a deletion that fails is logged:
        the pool's sweep deletes it by its labels when the pool closes). ``limits`` do not apply: CPU, memory and
        disk are the backend's sandbox resources. See :meth:`~trl_sandbox.backends.base.Backend.exec_in_image`.

        Raises:
            ConfigurationError: the backend cannot make a sandbox from this image (e.g. no E2B template for it).
            InfrastructureError: the sandbox could not be made, the inputs not prepared, or the command not run.
        """
        ref = image if isinstance(image, ImageRef) else ImageRef(str(image))
        # its service-side backstop (lifetime, idle or auto-stop timeout) outlasts the task's own deadline
        box = await self._create_from_image({**sandbox.labels, ROLE_LABEL: "repository-task"}, ref.name,
                                            timeout_s + LIFETIME_GRACE_S)
        try:
            names = [f"{INPUTS_DIR}/{i}" for i in range(len(inputs))]
            if names:
                await self.write_files(box, dict(zip(names, (bytes(data) for data in inputs))))
            command = image_command(argv, [f"{box.workdir}/{name}" for name in names],
                                    directory=f"{box.workdir}/{INPUTS_DIR}", workdir=workdir or ref.workdir,
                                    env=env or {})
            result = await self.exec(box, ["/bin/bash", "-c", command], timeout_s=timeout_s)
        finally:
            problem = None
            with anyio.CancelScope(shield=True):
                with anyio.move_on_after(getattr(self, "request_timeout_s", 60.0)) as scope:
                    try:
                        await self.delete(box)
                    except InfrastructureError as exc:
                        problem = str(exc)
                if scope.cancelled_caught:
                    problem = "the deletion ran out of time"
            if problem is not None:
                logger.warning("trl-sandbox: the sandbox %s of a repository task was not deleted (%s); the pool "
                               "deletes it by its labels when it closes", box.id, problem)
        if result.exit_code == 125 and result.stdout.startswith(PREPARATION_FAILED.encode()):
            raise InfrastructureError(f"{self.name}: {PREPARATION_FAILED} in sandbox {box.id}")
        return result
