"""The ``daytona`` backend: sandboxes on Daytona (the remote service of TRL's Daytona example), through the official
``daytona`` SDK's async client (``pip install 'trl-sandbox[daytona]'``).

What this module adds to the SDK, for scoring during training:

- credentials are checked when the backend is built (before training starts): one :class:`ConfigurationError`;
- sandboxes carry the pool's ownership labels, have their network blocked (``network_block_all``; an allow-list
  option), and carry server-side backstops: auto-stop after ``auto_stop_interval_min`` minutes without activity, with
  auto-delete on stop, so that even a trainer killed with SIGKILL leaks a sandbox for at most that long;
- commands run with the process API (``process.exec``: never the stateful code interpreter, whose state would leak
  between completions) under a server-side timeout and a client-side deadline. The process API has no stdin and
  merges stdout and stderr: a request is uploaded as a file under ``.trl-sandbox-requests/``, which the harness
  removes, and verifies gone, before the code runs (it refuses to run anything otherwise: the command's user must
  own the working directory), and the harness never lets the code write to the command's output (see
  :mod:`trl_sandbox.harness`);
- rate limits (HTTP 429) are retried after the server's ``Retry-After``, connection errors and 5xx with exponential
  backoff, creations are paced (``max_creates_per_s``), and a create that timed out after the server made the
  sandbox deletes it. Errors come back as :class:`InfrastructureError`, whether the SDK wrapped them
  (``DaytonaError`` subclasses) or let raw API-client exceptions through.

Facts about the SDK this relies on were read from its source (daytona 0.226): ``AsyncDaytona.create(params,
timeout=)``, ``AsyncSandbox.process.exec(command, cwd=, env=, timeout=)`` (HTTP 408 / ``DaytonaTimeoutError`` when the
server-side timeout kills the command), ``AsyncSandbox.fs.upload_files([FileUpload(bytes, path)])``,
``AsyncSandbox.delete()``, ``AsyncDaytona.list(ListSandboxesQuery(labels=))`` (an async iterator).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import shlex
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import anyio

from ..errors import ConfigurationError, InfrastructureError
from ..harness.base import REQUEST_DIR, STDIN_PREFIX  # the harness removes request files named so
from ._remote import BACKOFF, Pacer, RemoteImages, StreamProcess, describe, redirected, retrying
from .base import Backend, ExecResult, Sandbox, SandboxProcess

T = TypeVar("T")

_INSTALL_HINT = "the daytona backend needs the Daytona SDK: pip install 'trl-sandbox[daytona]'"
_KEY_HINT = (
    "the daytona backend needs an API key: set DAYTONA_API_KEY (create one in the Daytona dashboard, "
    "https://app.daytona.io/dashboard/keys) or pass sandbox_backend_options={'api_key': ...}"
)
_RETRY_STATUSES = {500, 502, 503, 504}
#: Seconds between coreutils ``timeout``'s SIGTERM and its SIGKILL of a session command at its lifetime.
_KILL_AFTER_S = 2


def _sdk() -> Any:
    try:
        import daytona
    except ImportError as exc:
        raise ConfigurationError(f"{_INSTALL_HINT} ({exc})") from None
    return daytona


def _env_reader() -> Callable[[str], str | None]:
    """How the SDK reads its variables: the process environment, then ``.env`` / ``.env.local`` files (an internal
    helper of the SDK; the process environment alone where it moved)."""
    try:
        from daytona._utils.env import DaytonaEnvReader

        return DaytonaEnvReader().get
    except Exception:  # noqa: BLE001 - an SDK version without it
        return os.environ.get


class DaytonaBackend(RemoteImages, Backend):
    """Sandboxes on Daytona.

    Args:
        api_key: Daytona API key. Default: ``DAYTONA_API_KEY`` (or ``DAYTONA_JWT_TOKEN`` with
            ``DAYTONA_ORGANIZATION_ID``).
        api_url: API URL. Default: ``DAYTONA_API_URL``, else the SDK's (``https://app.daytona.io/api``).
        target: Region. Default: ``DAYTONA_TARGET``, else the organization's default.
        snapshot: Snapshot to create sandboxes from (default: Daytona's default Python snapshot).
        image: Container image to build sandboxes from instead of a snapshot (e.g. ``"python:3.12-slim"``); only
            then do ``cpu``, ``memory_gib`` and ``disk_gib`` apply (a Daytona rule).
        cpu, memory_gib, disk_gib: Resources per sandbox (vCPUs, GiB, GiB) for image-based sandboxes.
        network_block_all: Block every network access from the sandbox (default True).
        network_allow_list: Comma-separated CIDR blocks the sandbox may reach (e.g. a package mirror); implies
            ``network_block_all=False`` for those addresses only.
        auto_stop_interval_min: Server-side backstop: minutes without activity after which Daytona stops a
            sandbox (0 disables it; default 15). With ``auto_delete_interval_min=0`` a stopped sandbox is deleted,
            so a sandbox of a killed trainer costs at most this long.
        auto_delete_interval_min: Minutes after stopping before Daytona deletes the sandbox (0: at once, the
            default; -1 never, not recommended).
        env_vars: Environment variables of the sandbox (``str -> str``). The trainer's own are never sent.
        os_user: The user commands run as (default: the snapshot's, ``daytona`` in Daytona's own). With ``"root"``
            the harness runs the code as ``nobody`` and a CodeEnvironment session sandbox is cleaned and reused for
            the next rollout; as another user each session gets a new sandbox (see ``docs/environment.md``).
        python: Python command inside the sandbox (default ``"python3"``).
        workdir: Directory of the harness inside the sandbox.
        output_limit_bytes: Bytes of output kept per command; the rest is cut (``ExecResult.output_truncated``).
        create_timeout_s: Seconds one sandbox creation may take (the SDK's ``timeout``).
        request_timeout_s: Seconds other API calls (upload, delete, list) may take, retries included.
        exec_grace_s: Seconds past a command's timeout before the client gives up on the sandbox (it then counts as
            an infrastructure failure and the sandbox is replaced).
        max_creates_per_s: Most sandbox creations started per second by the processes of this host that use the
            same account (shared through a lock file; rate-limit friendly).
        max_retries: Retries of one API call after a 429, a connection error or a 5xx.
        use_deprecated_polling: Passed to ``DaytonaConfig`` (poll sandbox states instead of a Socket.IO stream).
        client: An ``AsyncDaytona`` (or a test double) to use instead of building one; credentials are then not
            checked here.

    Raises:
        ConfigurationError: the SDK is not installed, no API key is configured, or an option is invalid.
    """

    name = "daytona"
    authenticate_records = True  # the program may write into the command's output (see Backend)
    creations_outlive_cancel = True  # the service finishes a creation whose request was given up on

    def __init__(
        self,
        *,
        api_key: str | None = None,
        api_url: str | None = None,
        target: str | None = None,
        snapshot: str | None = None,
        image: str | None = None,
        cpu: int | None = None,
        memory_gib: int | None = None,
        disk_gib: int | None = None,
        network_block_all: bool = True,
        network_allow_list: str | None = None,
        auto_stop_interval_min: int = 15,
        auto_delete_interval_min: int = 0,
        env_vars: Mapping[str, str] | None = None,
        os_user: str | None = None,
        python: str = "python3",
        workdir: str = "/tmp/trl-sandbox",
        output_limit_bytes: int = 1 << 20,
        create_timeout_s: float = 120.0,
        request_timeout_s: float = 60.0,
        exec_grace_s: float = 15.0,
        max_creates_per_s: float = 4.0,
        max_retries: int = 6,
        use_deprecated_polling: bool | None = None,
        client: Any = None,
        **unknown: Any,
    ) -> None:
        if unknown:
            raise ConfigurationError(
                f"unknown daytona backend option(s) {sorted(unknown)}; see trl_sandbox.backends.daytona.DaytonaBackend"
            )
        self.sdk = _sdk()
        env = _env_reader()
        self.api_key = api_key or env("DAYTONA_API_KEY")
        self.api_url = api_url or os.environ.get("DAYTONA_API_URL")  # the SDK reads the URL from the process only
        self.target = target or env("DAYTONA_TARGET")
        jwt = env("DAYTONA_JWT_TOKEN") and env("DAYTONA_ORGANIZATION_ID")
        if client is None and not self.api_key and not jwt:
            raise ConfigurationError(_KEY_HINT)
        if (cpu or memory_gib or disk_gib) and not image:
            raise ConfigurationError("cpu, memory_gib and disk_gib apply to image-based sandboxes: also set 'image'")
        if auto_stop_interval_min < 0 or auto_delete_interval_min < -1:
            raise ConfigurationError("auto_stop_interval_min must be >= 0 and auto_delete_interval_min >= -1 (minutes)")
        if max_creates_per_s <= 0 or max_retries < 0:
            raise ConfigurationError("max_creates_per_s must be positive and max_retries >= 0")
        self.snapshot, self.image = snapshot, image
        self.cpu, self.memory_gib, self.disk_gib = cpu, memory_gib, disk_gib
        self.network_block_all = bool(network_block_all) and not network_allow_list
        self.network_allow_list = network_allow_list
        self.auto_stop_interval_min = int(auto_stop_interval_min)
        self.auto_delete_interval_min = int(auto_delete_interval_min)
        self.env_vars = dict(env_vars or {})
        self.os_user = os_user
        self.python = python
        self.workdir = workdir.rstrip("/") or "/"
        self.output_limit_bytes = int(output_limit_bytes)
        self.create_timeout_s = float(create_timeout_s)
        self.request_timeout_s = float(request_timeout_s)
        self.exec_grace_s = float(exec_grace_s)
        self.max_creates_per_s = float(max_creates_per_s)
        self.max_retries = int(max_retries)
        self.use_deprecated_polling = use_deprecated_polling
        self.client = client
        self._own_client = client is None
        self._pacer = Pacer(self.max_creates_per_s, key=f"daytona {self.api_url} {self.api_key or jwt}")
        #: Counters (integers): ``retries`` of API calls, ``rate_limited`` (429 answers), ``orphans_deleted`` (a
        #: create that timed out after the server made the sandbox).
        self.stats = {"retries": 0, "rate_limited": 0, "orphans_deleted": 0}

    # -- lifecycle ---------------------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Build the SDK client (on the pool's event loop: the SDK's HTTP session belongs to it)."""
        if self.client is None:
            config = self.sdk.DaytonaConfig(
                api_key=self.api_key,
                api_url=self.api_url,
                target=self.target,
                use_deprecated_polling=self.use_deprecated_polling,
                otel_enabled=False,
            )
            try:
                self.client = self.sdk.AsyncDaytona(config)
            except self.sdk.DaytonaError as exc:
                raise ConfigurationError(f"{_KEY_HINT} ({exc})") from None

    async def aclose(self) -> None:
        """Close the SDK client (its HTTP session) if this backend built it, and remove the creation pacer's lock
        file (see :meth:`~trl_sandbox.backends._remote.Pacer.aclose`)."""
        client, self.client = self.client, None
        if client is not None and self._own_client:
            with anyio.CancelScope(shield=True):
                await client.close()
        await self._pacer.aclose()

    def describe(self) -> str:
        """One line for logs: the API URL, the network policy and the backstop."""
        network = "network blocked" if self.network_block_all else f"network allow-list {self.network_allow_list!r}"
        url = self.api_url or "https://app.daytona.io/api"
        return (f"daytona ({url}; {network}; auto-stop after {self.auto_stop_interval_min} min idle, "
                f"auto-delete {self.auto_delete_interval_min} min after stop)")

    # -- sandboxes ---------------------------------------------------------------------------------------------------

    def _params(self, labels: Mapping[str, str], image: str | None = None, lifetime_s: float = 0.0) -> Any:
        common: dict[str, Any] = {
            "language": "python",
            "labels": {str(k): str(v) for k, v in labels.items()},
            "env_vars": dict(self.env_vars),
            "network_block_all": self.network_block_all,
            "network_allow_list": self.network_allow_list,
            "auto_stop_interval": max(self.auto_stop_interval_min, int(math.ceil(lifetime_s / 60)))
            if self.auto_stop_interval_min else 0,
            "auto_delete_interval": self.auto_delete_interval_min,
        }
        if image is not None:  # a repository task's sandbox: its image, as root (SWE-bench's harness runs as root)
            return self.sdk.CreateSandboxFromImageParams(image=image, resources=self._resources(),
                                                         **{**common, "os_user": "root"})
        if self.os_user:
            common["os_user"] = self.os_user
        if self.image:
            return self.sdk.CreateSandboxFromImageParams(image=self.image, resources=self._resources(), **common)
        return self.sdk.CreateSandboxFromSnapshotParams(snapshot=self.snapshot, **common)

    def _resources(self) -> Any:
        if self.cpu or self.memory_gib or self.disk_gib:
            return self.sdk.Resources(cpu=self.cpu, memory=self.memory_gib, disk=self.disk_gib)
        return None

    def _handle(self, remote: Any) -> Sandbox:
        return Sandbox(id=str(remote.id), labels=dict(remote.labels or {}), workdir=self.workdir,
                       python=[self.python], data=remote)

    async def create(self, labels: Mapping[str, str]) -> Sandbox:
        """Create one sandbox (see the class docstring for what it carries).

        Raises:
            InfrastructureError: creation failed after the retries, or timed out (a sandbox the server made
                anyway is deleted first).
        """
        return await self._create(labels)

    async def _create_from_image(self, labels: Mapping[str, str], image: str, lifetime_s: float) -> Sandbox:
        """A repository task's sandbox (see :class:`~trl_sandbox.backends._remote.RemoteImages`): Daytona builds it
        from ``image`` (``CreateSandboxFromImageParams(image=...)``: the SDK sends a one-line ``FROM image``
        build, cached by Daytona as a snapshot), runs its commands as ``root``, with this backend's resources,
        network policy and backstop, its auto-stop (where on) at least ``lifetime_s`` seconds.

        Raises:
            InfrastructureError: as :meth:`create`.
        """
        return await self._create(labels, image, lifetime_s)

    async def _create(self, labels: Mapping[str, str], image: str | None = None, lifetime_s: float = 0.0) -> Sandbox:
        await self._pacer.wait()

        async def attempt() -> Any:
            try:
                return await self.client.create(self._params(labels, image, lifetime_s),
                                                timeout=self.create_timeout_s)
            except self.sdk.DaytonaTimeoutError as exc:
                if getattr(exc, "sandbox_id", None):
                    await self._delete_id(exc.sandbox_id)
                raise

        remote = await self._retrying("create a sandbox", attempt, self.create_timeout_s * 2 + 30.0)
        return self._handle(remote)

    async def _delete_id(self, sandbox_id: str) -> None:
        """Delete a sandbox known only by id (a create that timed out after the server made it); best effort."""
        try:
            with anyio.fail_after(self.request_timeout_s):
                remote = await self.client.get(sandbox_id)
                await remote.delete()
            self.stats["orphans_deleted"] += 1
        except Exception:  # noqa: BLE001 - the server-side backstop deletes it later
            pass

    async def write_files(self, sandbox: Sandbox, files: Mapping[str, bytes]) -> None:
        """Upload ``files`` under ``sandbox.workdir`` in one request.

        Raises:
            InfrastructureError: the upload failed after the retries.
        """
        uploads = [self.sdk.FileUpload(bytes(data), f"{self.workdir}/{name}") for name, data in files.items()]
        await self._retrying("upload files", lambda: sandbox.data.fs.upload_files(uploads), self.request_timeout_s)

    async def exec(
        self,
        sandbox: Sandbox,
        argv: Sequence[str],
        *,
        stdin: bytes = b"",
        timeout_s: float,
    ) -> ExecResult:
        """Run ``argv`` with ``process.exec`` in ``sandbox.workdir``; see :meth:`Backend.exec`.

        ``stdin`` (the process API has none) is uploaded first to a file named
        ``.trl-sandbox-requests/.trl-sandbox-stdin-*`` and redirected; the harness removes it, and verifies it is
        gone, before any code runs. stdout and stderr come back merged in ``stdout``.
        The server kills the command at ``ceil(timeout_s)`` seconds (``timed_out``); the client gives up
        ``exec_grace_s`` later.

        Raises:
            InfrastructureError: the sandbox did not answer in time, is gone, or the API failed after the retries.
        """
        server_timeout = max(1, math.ceil(timeout_s))
        start = time.monotonic()

        async def run() -> ExecResult:
            command = shlex.join(list(argv))
            if stdin:  # uploaded again on a retry: the harness of a failed attempt may have unlinked it
                path = f"{self.workdir}/{REQUEST_DIR}/{STDIN_PREFIX}{uuid.uuid4().hex}"
                await sandbox.data.fs.upload_files([self.sdk.FileUpload(bytes(stdin), path)])
                command = redirected(argv, path)
            try:
                response = await sandbox.data.process.exec(command, cwd=self.workdir, timeout=server_timeout)
            except self.sdk.DaytonaTimeoutError as exc:
                if _status(exc) == 408 or isinstance(exc, self.sdk.DaytonaProcessExecutionTimeoutError):
                    return ExecResult(None, b"", b"", time.monotonic() - start, timed_out=True)
                raise
            except Exception as exc:  # noqa: BLE001 - raw API-client exceptions (not wrapped by the SDK)
                if _status(exc) == 408:
                    return ExecResult(None, b"", b"", time.monotonic() - start, timed_out=True)
                raise
            out = (response.result or "").encode()
            truncated = len(out) > self.output_limit_bytes
            code = response.exit_code
            return ExecResult(
                exit_code=int(code) if code is not None else None,
                stdout=out[: self.output_limit_bytes],
                stderr=b"",
                duration_s=time.monotonic() - start,
                output_truncated=truncated,
            )

        return await self._retrying(f"run a command in sandbox {sandbox.id}", run, timeout_s + self.exec_grace_s)

    async def open_process(self, sandbox: Sandbox, argv: Sequence[str], *, timeout_s: float) -> SandboxProcess:
        """Start ``argv`` in ``sandbox.workdir`` as a long-lived process (an interpreter session) with the session
        API: a session of its own (``create_session``), the command run in it asynchronously
        (``execute_session_command(run_async=True, suppress_input_echo=True)``) under ``timeout -k 2
        ceil(timeout_s)``, its stdin written with ``send_session_command_input`` and its stdout followed through the
        log stream (``get_session_command_logs_async``). See :meth:`Backend.open_process`.

        Raises:
            InfrastructureError: the session or the command could not be started.
        """
        api = sandbox.data.process
        session_id = f"trl-sandbox-{uuid.uuid4().hex}"
        limit = max(1, math.ceil(timeout_s))
        command = (f"cd {shlex.quote(self.workdir)} && timeout -k {_KILL_AFTER_S} {limit} "
                   f"{shlex.join(list(argv))}")
        await self._retrying(f"start a session in sandbox {sandbox.id}", lambda: api.create_session(session_id),
                             self.request_timeout_s)
        try:
            request = self.sdk.SessionExecuteRequest(command=command, run_async=True, suppress_input_echo=True)
            response = await self._retrying(f"start a session command in sandbox {sandbox.id}",
                                            lambda: api.execute_session_command(session_id, request),
                                            self.request_timeout_s)
        except BaseException:
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await self._delete_session(api, session_id)
            raise
        return _DaytonaProcess(self, sandbox.id, api, session_id, response.cmd_id)

    async def _delete_session(self, api: Any, session_id: str) -> None:
        """Delete a session of the process API (already gone is fine), which kills its commands.

        Raises:
            InfrastructureError: the API could not be reached after the retries.
        """
        await self._retrying(f"delete session {session_id}", lambda: _gone_is_fine(api.delete_session(session_id)),
                             self.request_timeout_s)

    async def delete(self, sandbox: Sandbox) -> None:
        """Delete ``sandbox`` (already gone is fine).

        Raises:
            InfrastructureError: the API could not be reached after the retries.
        """
        await self._retrying(f"delete sandbox {sandbox.id}", lambda: _gone_is_fine(sandbox.data.delete()),
                             self.request_timeout_s)

    async def list(self, labels: Mapping[str, str]) -> list[Sandbox]:
        """The account's sandboxes whose labels include ``labels`` (the server filters; pages are followed).

        Raises:
            InfrastructureError: the API could not be reached after the retries.
        """

        async def attempt() -> list[Sandbox]:
            query = self.sdk.ListSandboxesQuery(labels=dict(labels))
            return [self._handle(remote) async for remote in self.client.list(query)]

        return await self._retrying("list sandboxes", attempt, self.request_timeout_s)

    # -- retries -----------------------------------------------------------------------------------------------------

    def _classify(self, exc: Exception) -> float | None:
        """429: after ``Retry-After``; connection errors and 5xx: the backoff; the rest: not retried."""
        status = _status(exc)
        if status == 429:
            self.stats["rate_limited"] += 1
            return _retry_after(exc)
        if status in _RETRY_STATUSES or _is_connection_error(exc, self.sdk):
            return BACKOFF
        return None

    async def _retrying(self, what: str, call: Callable[[], Awaitable[T]], deadline_s: float) -> T:
        """``await call()`` within ``deadline_s`` seconds: 429 retried after ``Retry-After``, connection errors and
        5xx after an exponential backoff (0.5 s doubling, at most 8 s), at most ``max_retries`` times (see
        :func:`~trl_sandbox.backends._remote.retrying`).

        Raises:
            InfrastructureError: every other error, the last one after the retries, or the deadline.
        """
        return await retrying(call, what=what, backend="daytona", deadline_s=deadline_s,
                              max_retries=self.max_retries, classify=self._classify, stats=self.stats)


async def _gone_is_fine(call: Awaitable[Any]) -> None:
    """``await call``, a deletion: a 404 (already gone) is success."""
    try:
        await call
    except Exception as exc:  # noqa: BLE001 - the others are the caller's to classify
        if _status(exc) != 404:
            raise


def _status(exc: BaseException) -> int | None:
    """HTTP status of an SDK error (``status_code``) or a raw API-client exception (``status``)."""
    for name in ("status_code", "status"):
        value = getattr(exc, name, None)
        if isinstance(value, int):
            return value
    return None


def _retry_after(exc: BaseException) -> float:
    """Seconds to wait from a 429's ``Retry-After`` header (any case; Daytona also sends per-limit variants named
    ``Retry-After-<limit>``: the longest wins), in seconds; 1 s when absent, at most 60 s."""
    headers = getattr(exc, "headers", None) or {}
    try:
        items = dict(headers).items()
    except (TypeError, ValueError):
        items = ()
    waits = []
    for key, value in items:
        if str(key).lower().startswith("retry-after"):
            try:
                waits.append(float(value))
            except (TypeError, ValueError):
                continue
    return min(max(waits), 60.0) if waits and max(waits) >= 0 else 1.0


def _is_connection_error(exc: BaseException, sdk: Any) -> bool:
    if isinstance(exc, (sdk.DaytonaConnectionError, ConnectionError, asyncio.TimeoutError)):
        return True
    try:
        import aiohttp
    except ImportError:  # pragma: no cover - the SDK depends on it
        return False
    return isinstance(exc, aiohttp.ClientConnectionError)


class _DaytonaProcess(StreamProcess):
    """A session command (see :meth:`DaytonaBackend.open_process`): its stdout arrives through the log stream, which
    a task of the event loop follows into a queue, and which ends when the command ends."""

    def __init__(self, backend: DaytonaBackend, sandbox_id: str, api: Any, session_id: str, command_id: str) -> None:
        super().__init__("daytona", sandbox_id)
        self.backend, self.api = backend, api
        self.session_id, self.command_id = session_id, command_id
        self.ended_cleanly = False
        self.finished = anyio.Event()
        self._chunks_in, self._chunks = anyio.create_memory_object_stream[Any](math.inf)
        self._follower = asyncio.get_running_loop().create_task(self._follow())

    async def _follow(self) -> None:
        try:
            await self.api.get_session_command_logs_async(
                self.session_id, self.command_id, lambda text: self._chunks_in.send_nowait(text.encode()),
                lambda _text: None)
            self.ended_cleanly = True
            self._chunks_in.send_nowait(None)
        except Exception as exc:  # noqa: BLE001 - given to the reader: the session is lost
            self._chunks_in.send_nowait(exc)
        finally:
            self.finished.set()

    async def _ended(self) -> bool:
        """Whether the command has ended: its log stream ended cleanly, or the API reports its exit status."""
        if self.ended_cleanly:
            return True
        try:
            command = await self.api.get_session_command(self.session_id, self.command_id)
        except Exception:  # noqa: BLE001 - unknown
            return False
        return getattr(command, "exit_code", None) is not None

    async def _next_chunk(self) -> bytes | None:
        item = await self._chunks.receive()
        if isinstance(item, Exception):
            raise item
        return item

    async def send(self, data: bytes) -> None:
        """Send ``data`` (one JSON line: text) to the command's stdin.

        Raises:
            InfrastructureError: the command or its sandbox is gone, or the API failed.
        """
        if self.killed or self.finished.is_set():
            raise InfrastructureError("daytona: the session process has ended")
        try:
            await self.api.send_session_command_input(self.session_id, self.command_id, data.decode())
        except Exception as exc:  # noqa: BLE001 - input is not retried: it may have arrived
            raise InfrastructureError(f"daytona: could not write to the session in sandbox {self.sandbox_id}: "
                                      f"{describe(exc)}") from exc

    async def _wait_end(self) -> bool:
        """Wait until the log stream ends, or the API reports the command's exit status (polled every 0.25 s)."""
        while not await self._ended():
            with anyio.move_on_after(0.25):
                if self.finished.is_set():  # the stream failed: only the API can tell
                    await anyio.sleep(0.25)
                await self.finished.wait()
        return True

    async def _stop(self, ended: bool) -> None:
        """Stop following the log; delete the session, which kills what is left of the command."""
        self._follower.cancel()
        await self.backend._delete_session(self.api, self.session_id)
