"""The backend contract: the one interface every sandbox backend implements.

Everything above this module (the pool, the scorer, the trainer) talks only to :class:`Backend`; everything below it
is one module per implementation (``local.py``, ``mock.py``, remote backends later). The contract is async (anyio):
each call may be awaited concurrently with others, and each call is bounded by a deadline.

Errors: a method raises :class:`~trl_sandbox.errors.InfrastructureError` (or a subclass) when the sandbox machinery
fails. The code's own failures (non-zero exit, timeout, crash) are returned in :class:`ExecResult`, never raised.
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigurationError, InfrastructureError

__all__ = ["Backend", "ExecResult", "ImageRef", "InfrastructureError", "Leftover", "Sandbox", "SandboxProcess"]


@dataclass
class Sandbox:
    """A handle to one sandbox of a backend.

    Attributes:
        id: Backend-unique identifier (string).
        labels: Ownership labels given at creation (``str -> str``); used by :meth:`Backend.list`.
        workdir: Absolute path, as commands inside the sandbox see it, of the directory that
            :meth:`Backend.write_files` writes into. Executions may read it; they run in a fresh scratch directory
            of their own (local backend) or in the sandbox's working directory (remote backends).
        python: The command (argv prefix) that starts a Python 3 interpreter inside the sandbox.
        data: Backend-private state (for instance the remote SDK object). Callers must not use it.
    """

    id: str
    labels: dict[str, str]
    workdir: str
    python: list[str]
    data: Any = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class Leftover:
    """Something a backend made on this host for a sandbox that is gone, left by a run that is over (the local
    backend: a sandbox's cgroups, when its run was killed), as :meth:`Backend.leftovers` finds it.

    Attributes:
        name: What it is, for people (paths).
        reason: Why it is left over (a short sentence).
        data: Backend-private state. Callers must not use it.
    """

    name: str
    reason: str
    data: Any = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class ImageRef:
    """A repository task's image as a remote backend runs it: by name, the service making the sandbox from it (see
    :meth:`Backend.repo_image`).

    Attributes:
        name: The image's name as the row gives it (``swebench/sweb.eval.x86_64.astropy_1776_astropy-12907``).
        workdir: Its ``WorkingDir`` when this host's image cache holds it, else ``""`` (not known here).
    """

    name: str
    workdir: str = ""


@dataclass(frozen=True)
class ExecResult:
    """The outcome of one command run in a sandbox.

    Attributes:
        exit_code: The command's exit status; ``128 + N`` when it was killed by signal ``N``; ``None`` when it was
            killed because it ran past its timeout.
        stdout: Standard output, at most the backend's output cap (bytes).
        stderr: Standard error, at most the backend's output cap (bytes).
        duration_s: Wall-clock run time of the command, in seconds.
        timed_out: True when the command ran past its wall-clock timeout and was killed (with all its processes).
        output_truncated: True when stdout or stderr went past the output cap and was cut.
        sandbox_spent: Why the sandbox must not run anything more after this command (it left what cannot be
            removed: a slot the local backend could not empty, scratch space that did not come back), else None. The
            result itself stands; the pool replaces the sandbox before it lends it again.
    """

    exit_code: int | None
    stdout: bytes
    stderr: bytes
    duration_s: float
    timed_out: bool = False
    output_truncated: bool = False
    sandbox_spent: str | None = None


class SandboxProcess(abc.ABC):
    """A long-lived process in a sandbox, talked to through its stdin and stdout (see :meth:`Backend.open_process`):
    the interpreter of a :class:`~trl_sandbox.environment.CodeEnvironment` session. Its stderr is discarded.
    Implementations give :meth:`send`, :meth:`kill` and :meth:`_next_chunk` (how their transport delivers stdout);
    this class cuts that output into lines.

    Args:
        backend: The backend's name, for messages.
    """

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.buffer = bytearray()
        #: Why the output ended (``"ended"``, ``"is gone (...)"``), once it has.
        self.ended: str | None = None

    @abc.abstractmethod
    async def send(self, data: bytes) -> None:
        """Write ``data`` to the process's stdin.

        Raises:
            InfrastructureError: the process or its sandbox is gone.
        """

    @abc.abstractmethod
    async def _next_chunk(self) -> bytes | None:
        """The next piece of stdout as it arrives; None at its end. May raise what the transport raises."""

    async def receive_line(self, limit: int) -> bytes:
        """Read the next line of the process's stdout, its newline included (wrap in a deadline: it waits for it).

        Raises:
            InfrastructureError: the process ended (end of file), its sandbox is gone or the transport failed, or the
                line is longer than ``limit`` bytes.
        """
        while b"\n" not in self.buffer:
            if len(self.buffer) > limit:
                raise InfrastructureError(f"{self.backend}: the session process sent an overlong line")
            if self.ended is not None:
                raise InfrastructureError(f"{self.backend}: the session process {self.ended}")
            try:
                chunk = await self._next_chunk()
            except InfrastructureError:
                raise
            except Exception as exc:  # noqa: BLE001 - any transport error: the session is lost, not the code's fault
                self.ended = f"is gone ({type(exc).__name__}: {exc})"[:500]
                raise InfrastructureError(f"{self.backend}: the session process {self.ended}") from exc
            if chunk is None:
                self.ended = "ended"
            else:
                self.buffer += chunk
        end = self.buffer.index(b"\n") + 1
        if end > limit + 1:
            raise InfrastructureError(f"{self.backend}: the session process sent an overlong line")
        line = bytes(self.buffer[:end])
        del self.buffer[:end]
        return line

    @abc.abstractmethod
    async def kill(self, *, wait_s: float = 0.0) -> None:
        """Kill the process and everything it started; release its descriptors. Idempotent.

        Args:
            wait_s: Seconds to give a process that was asked to end (a session sent ``{"close": true}``) to end by
                itself first, where ending it from outside is coarse (a remote service's stream). 0: at once.

        Raises:
            InfrastructureError: the end of the process could not be confirmed (its sandbox must not be reused).
        """


class Backend(abc.ABC):
    """Abstract sandbox backend.

    Lifecycle: call :meth:`start` once before use (it validates configuration and credentials and may raise
    :class:`~trl_sandbox.errors.ConfigurationError`), and :meth:`aclose` once at the end. In between, sandboxes are
    created, used and deleted through the methods below; any of them may run concurrently.

    Implementations: :class:`~trl_sandbox.backends.local.LocalBackend` (``"local"``) and
    :class:`~trl_sandbox.backends.mock.MockBackend` (``"mock"``, for tests).
    """

    #: Registry name (``sandbox_backend`` value).
    name: str = "abstract"
    #: Whether the code the harness runs may be able to write into the command's output (a remote sandbox, whose
    #: command runs as one user: a shell of the command, alive and of that user, lends its stdout through
    #: ``/proc/<pid>/fd/1``). The scorer then sends a secret key in each request and keeps only the records the judge
    #: signed with it (see :func:`trl_sandbox.harness.base.record_mac`).
    authenticate_records: bool = False
    #: Whether the sandboxes share this machine's system libraries: a task's compiled checker or interactor is then
    #: linked against them (small); else it is linked statically, to run in any Linux image (see
    #: :mod:`trl_sandbox.judge_programs`).
    shares_host_libraries: bool = False
    #: Whether a creation the client gave up on (cancelled, timed out) may still be completed by the service, which
    #: then holds a sandbox the pool never saw (a cloud API that keeps working on a request whose connection
    #: closed). The pool then looks for it by its labels until it appears, ``CUT_SHORT_WAIT_S`` (30 s) at most, when
    #: it closes (see :meth:`trl_sandbox.pool.SandboxPool.close`).
    creations_outlive_cancel: bool = False

    async def start(self) -> None:
        """Validate configuration and check that the backend can work. Default: nothing to check.

        Raises:
            ConfigurationError: missing credentials, unusable options, or (local) no isolation available.
        """

    async def aclose(self) -> None:
        """Release client resources (connections, threads). Does not delete sandboxes. Default: nothing."""

    def describe(self) -> str:
        """One line for logs: the backend and the isolation layers it provides."""
        return self.name

    @abc.abstractmethod
    async def create(self, labels: Mapping[str, str]) -> Sandbox:
        """Create one sandbox carrying ``labels`` (``str -> str``) and return its handle.

        Raises:
            InfrastructureError: the sandbox could not be created.
        """

    @abc.abstractmethod
    async def write_files(self, sandbox: Sandbox, files: Mapping[str, bytes]) -> None:
        """Write ``files`` (relative path -> content bytes) under ``sandbox.workdir``, replacing existing files.

        Raises:
            InfrastructureError: the sandbox is gone or the write failed.
        """

    @abc.abstractmethod
    async def exec(
        self,
        sandbox: Sandbox,
        argv: Sequence[str],
        *,
        stdin: bytes = b"",
        timeout_s: float,
    ) -> ExecResult:
        """Run ``argv`` in ``sandbox`` with ``stdin`` as standard input, for at most ``timeout_s`` seconds.

        The command and every process it starts are killed at the timeout (``ExecResult.timed_out``). Output past
        the backend's cap is cut (``ExecResult.output_truncated``).

        Raises:
            InfrastructureError: the command could not be run (sandbox died, backend error, lost connection).
        """

    def repo_image(self, name: str) -> Any:
        """The image a repository task names, as :meth:`exec_in_image` takes it: the local backend's is this host's
        :class:`~trl_sandbox.images.ImageCache` entry (it unpacks the image here); the remote and ray backends return
        an :class:`ImageRef` (the service, or the node, makes the sandbox from the name). Blocking (call it in a
        thread).

        Raises:
            ConfigurationError: this backend does not run repository tasks (the default).
            trl_sandbox.images.ImageError: the image is not in the cache (the message says how to import it).
        """
        raise ConfigurationError(f"the {self.name} backend does not run repository tasks yet; use the local, ray, "
                                 "daytona, e2b or hf backend")

    async def exec_in_image(self, sandbox: Sandbox, image: Any, argv: Sequence[str], *, timeout_s: float,
                            inputs: Sequence[bytes] = (), env: Mapping[str, str] | None = None,
                            workdir: str | None = None, limits: Any = None) -> ExecResult:
        """Run ``argv`` (a path inside the image first) as root of a fresh tree of ``image`` (a
        :class:`trl_sandbox.images.Image`) in ``sandbox``, with the image's environment and ``env`` over it, in
        ``workdir`` (default: the image's ``WorkingDir``), for at most ``timeout_s`` seconds; ``inputs[i]`` is
        readable by the command at ``/dev/fd/{3 + i}`` and cannot be changed by it. What the command writes is gone
        when it ends. Repository tasks run through this (see :mod:`trl_sandbox.repos.runner`).

        Raises:
            ConfigurationError: this backend does not run repository tasks (the default), or cannot run this image.
            InfrastructureError: the tree could not be prepared, or the command could not be run.
        """
        raise ConfigurationError(f"the {self.name} backend does not run repository tasks yet; use the local, ray, "
                                 "daytona, e2b or hf backend")

    @abc.abstractmethod
    async def delete(self, sandbox: Sandbox) -> None:
        """Delete ``sandbox`` and everything in it. Deleting a sandbox that is already gone is not an error.

        Raises:
            InfrastructureError: the backend could not be reached to delete it.
        """

    @abc.abstractmethod
    async def list(self, labels: Mapping[str, str]) -> list[Sandbox]:
        """Return the sandboxes (of this backend's account or machine) whose labels include all of ``labels``.

        Raises:
            InfrastructureError: the backend could not be reached.
        """

    async def leftovers(self, *, older_than_s: float | None = None) -> list[Leftover]:
        """What this backend made on this host outside its sandboxes, for sandboxes that are gone, whose run is over;
        never a live run's. Lists only. Default: nothing (a remote backend keeps everything in its sandboxes).

        Args:
            older_than_s: Also select leftovers whose run cannot be told, made more than this many seconds ago.
        """
        return []

    async def remove_leftover(self, leftover: Leftover) -> None:
        """Remove ``leftover`` (from :meth:`leftovers`).

        Raises:
            InfrastructureError: it could not be removed (the message says why).
        """
        raise InfrastructureError(f"{self.name}: this backend leaves nothing outside its sandboxes to remove")

    async def open_process(self, sandbox: Sandbox, argv: Sequence[str], *, timeout_s: float) -> SandboxProcess:
        """Start ``argv`` in ``sandbox`` as a long-lived process (an interpreter session), killed after ``timeout_s``
        seconds at the latest, with the isolation of :meth:`exec`. Default: not supported.

        Raises:
            ConfigurationError: this backend cannot keep a process (message says which can).
            InfrastructureError: the process could not be started.
        """
        from ..errors import ConfigurationError

        raise ConfigurationError(
            f"the {self.name} backend cannot keep an interpreter session (CodeEnvironment); use the local, daytona, "
            "cwsandbox or e2b backend"
        )

    def admit(
        self, on_wait: Callable[[float | None], None] | None = None
    ) -> contextlib.AbstractAsyncContextManager[Any]:
        """An async context held around one scoring execution (``async with backend.admit(): await
        backend.exec(...)``): it waits while the machine that runs it already runs as many executions as it has
        cores. Default: nothing to wait for (a service's sandboxes run on its machines). The local backend shares one
        limit among every pool of the host, serving waiting processes in turn (see :mod:`._admission`).

        Args:
            on_wait: When the execution has to wait: called with None as the wait begins, then with the seconds
                it waited.
        """
        return contextlib.nullcontext()

    async def health_check(self, sandbox: Sandbox, *, timeout_s: float = 10.0) -> bool:
        """Return True when ``sandbox`` runs a trivial Python command within ``timeout_s`` seconds."""
        try:
            result = await self.exec(sandbox, [*sandbox.python, "-c", "pass"], timeout_s=timeout_s)
        except InfrastructureError:
            return False
        return result.exit_code == 0
