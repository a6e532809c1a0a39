"""The ``e2b`` backend: sandboxes on E2B (the service of open-r1's code rewards and E2B's ``trl-grpo-python``
cookbook), through the official ``e2b`` SDK's async API, ``AsyncSandbox`` (``pip install 'trl-sandbox[e2b]'``).

What this module adds to the SDK, for scoring during training:

- the API key is checked when the backend is built (before training starts): one :class:`ConfigurationError` that
  names ``E2B_API_KEY``; it is sent to E2B's API only, never into the sandbox (``envs`` carries only what the user
  gives in ``env_vars``);
- sandboxes carry the pool's ownership labels as E2B *metadata*, have no internet access by default
  (``allow_internet_access=False``), and carry E2B's ``timeout`` as the server-side backstop: E2B kills a sandbox
  ``timeout_s`` seconds after its creation whatever the client does, so a trainer killed with SIGKILL leaks a sandbox
  for at most that long. The timeout is a lifetime, not an idle time: a pool that lives longer re-arms it
  (``set_timeout``) before each command once half of it has passed;
- commands run with the process API (``commands.run``: envd's ``process.Process/Start`` stream) under coreutils
  ``timeout`` (E2B's own command ``timeout`` only ends the client's stream, the process runs on) and a client-side
  deadline. A request travels as a file under ``.trl-sandbox-requests/`` (``files.write_files``, one multipart
  upload), which the harness removes, and verifies gone, before any code runs, exactly as for Daytona: the command's
  user must own the working directory (the harness refuses to run anything otherwise: an infrastructure error, never
  a wrong answer). Not ``send_stdin``: envd gives stdin only to a background command, so a completion would cost
  three calls (start, ``send_stdin``, ``close_stdin``, the last one only on recent envd versions) instead of two;
- E2B's concurrency cap and rate limits (HTTP 429, ``RateLimitException``: 20 concurrent sandboxes on the free tier)
  are retried with backoff (E2B sends no ``Retry-After``), 5xx/503 (``ServiceBusyException``) and connection errors
  too; creations are paced (``max_creates_per_s``); a create the client gave up on is found later by its labels
  (the pool's creation sweep), and errors come back as :class:`InfrastructureError`, never as a wrong answer. A
  refused key (401, ``AuthenticationException``) is a :class:`ConfigurationError` with one actionable line;
- ``CodeEnvironment`` sessions: ``commands.run(..., background=True, stdin=True)``, the stdin written with
  ``commands.send_stdin``, stdout followed through the command's event stream (``on_stdout``), ended with
  ``commands.kill``.

Facts about the SDK this relies on were read from its source (e2b 2.63.0): ``AsyncSandbox.create(template, timeout,
metadata, envs, allow_internet_access, **ApiParams)`` -> ``POST /v2/sandboxes``; ``AsyncSandbox.list(query=
SandboxQuery(metadata=))`` (a paginator: ``has_next``/``next_items``) -> ``GET /v2/sandboxes?metadata=``;
``AsyncSandbox.kill(sandbox_id)`` -> ``DELETE /sandboxes/{id}`` (False when already gone); envd at
``<port>-<id>.<domain>`` (or ``E2B_SANDBOX_URL``) speaks Connect RPC with a JSON codec for processes and plain HTTP
for files; ``CommandExitException`` for a non-zero exit (a result, not an error here).
"""

from __future__ import annotations

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

_INSTALL_HINT = "the e2b backend needs the E2B SDK: pip install 'trl-sandbox[e2b]'"
_KEY_HINT = (
    "the e2b backend needs an API key: set E2B_API_KEY (create one at https://e2b.dev/dashboard?tab=keys) or pass "
    "sandbox_backend_options={'api_key': ...}"
)
_REFUSED_HINT = "E2B refused the API key (401): check E2B_API_KEY (https://e2b.dev/dashboard?tab=keys)"
#: Seconds between coreutils ``timeout``'s SIGTERM and its SIGKILL.
_KILL_AFTER_S = 2


def _sdk() -> Any:
    try:
        import e2b
    except ImportError as exc:
        raise ConfigurationError(f"{_INSTALL_HINT} ({exc})") from None
    return e2b


def command_line(argv: Sequence[str], workdir: str, limit_s: int, stdin_path: str | None) -> str:
    """The shell command :meth:`E2BBackend.exec` runs: ``argv`` in ``workdir`` under coreutils ``timeout -k 2
    limit_s``, its stdin the file ``stdin_path`` if any (see :func:`~trl_sandbox.backends._remote.redirected`: never
    a descriptor of ``timeout`` or of a shell on it)."""
    timeout = f"timeout -k {_KILL_AFTER_S} {limit_s} "
    if stdin_path is None:
        return f"cd {shlex.quote(workdir)} && {timeout}{shlex.join(list(argv))}"
    return f"cd {shlex.quote(workdir)} && {redirected(argv, stdin_path, timeout)}"


class E2BBackend(RemoteImages, Backend):
    """Sandboxes on E2B.

    Args:
        api_key: E2B API key. Default: ``E2B_API_KEY``.
        domain: E2B domain (default: ``E2B_DOMAIN``, else the SDK's ``e2b.app``); ``E2B_API_URL``,
            ``E2B_SANDBOX_URL`` (self-hosted E2B, tests) and ``E2B_HTTP_VERSION`` are honoured too, all read when
            the backend is built (:attr:`endpoint`).
        template: Sandbox template (name or id) to create sandboxes from (default: the SDK's ``base``, which has
            ``python3``; build your own with ``e2b template build`` for other toolchains, see ``docs/backends.md``).
        templates: Repository tasks: the template (name or id) of each task image (``image name -> template``).
            E2B makes sandboxes from templates only; build one per image (a Dockerfile ``FROM IMAGE``, ``e2b
            template build``). A task whose image has none is an infrastructure failure naming this option.
        timeout_s: Server-side backstop: seconds after which E2B kills a sandbox (re-armed while the pool uses it;
            default 900; E2B's maximum is 1 h on the free tier, 24 h on Pro).
        allow_internet_access: Let the sandbox reach the internet (default False: the model's code cannot).
        env_vars: Environment variables of the sandbox (``str -> str``). The trainer's own, and the API key, are
            never sent.
        user: The user commands run as (default: the SDK's, ``user``). With ``"root"`` the harness runs the code as
            ``nobody`` and a session sandbox is cleaned and reused.
        python: Python command inside the sandbox (default ``"python3"``).
        workdir: Directory of the harness inside the sandbox.
        output_limit_bytes: Bytes of output kept per command; the rest is cut (``ExecResult.output_truncated``).
        create_timeout_s: Seconds one sandbox creation may take.
        request_timeout_s: Seconds other API calls (upload, kill, list) may take, retries included.
        exec_grace_s: Seconds past a command's timeout before the client gives up on the sandbox (an infrastructure
            failure: the sandbox is replaced).
        max_creates_per_s: Most sandbox creations started per second by the processes of this host that use the
            same key (shared through a lock file).
        max_retries: Retries of one API call after a 429, a 5xx or a connection error.

    Raises:
        ConfigurationError: the SDK is not installed, no API key is configured, or an option is invalid.
    """

    name = "e2b"
    authenticate_records = True  # the program may write into the command's output (see Backend)
    creations_outlive_cancel = True  # the service finishes a creation whose request was given up on

    def __init__(
        self,
        *,
        api_key: str | None = None,
        domain: str | None = None,
        template: str | None = None,
        templates: Mapping[str, str] | None = None,
        timeout_s: int = 900,
        allow_internet_access: bool = False,
        env_vars: Mapping[str, str] | None = None,
        user: str | None = None,
        python: str = "python3",
        workdir: str = "/tmp/trl-sandbox",
        output_limit_bytes: int = 1 << 20,
        create_timeout_s: float = 120.0,
        request_timeout_s: float = 60.0,
        exec_grace_s: float = 15.0,
        max_creates_per_s: float = 4.0,
        max_retries: int = 8,
    ) -> None:
        self.sdk = _sdk()
        self.api_key = api_key or os.environ.get("E2B_API_KEY")
        if not self.api_key:
            raise ConfigurationError(_KEY_HINT)
        if int(timeout_s) < 60:
            raise ConfigurationError("e2b timeout_s (the server-side backstop) must be at least 60 seconds")
        if max_creates_per_s <= 0 or max_retries < 0:
            raise ConfigurationError("max_creates_per_s must be positive and max_retries >= 0")
        self.domain = domain or os.environ.get("E2B_DOMAIN") or None
        #: Where every call of this backend goes, read once here: the ``domain`` option, else the SDK's own
        #: variables (``E2B_DOMAIN``, ``E2B_API_URL``, ``E2B_SANDBOX_URL``, ``E2B_HTTP_VERSION``). Its sandboxes are
        #: deleted where they were created, at interpreter exit too, whatever the environment has become since.
        self.endpoint = {key: value for key, value in {
            "domain": self.domain, "api_url": os.environ.get("E2B_API_URL"),
            "sandbox_url": os.environ.get("E2B_SANDBOX_URL"), "http_version": os.environ.get("E2B_HTTP_VERSION"),
        }.items() if value}
        self.template = template
        self.templates = {str(k): str(v) for k, v in (templates or {}).items()}
        self.timeout_s = int(timeout_s)
        self.allow_internet_access = bool(allow_internet_access)
        self.env_vars = {str(k): str(v) for k, v in (env_vars or {}).items()}
        self.user = user
        self.python = python
        self.workdir = workdir.rstrip("/") or "/"
        self.output_limit_bytes = int(output_limit_bytes)
        self.create_timeout_s = float(create_timeout_s)
        self.request_timeout_s = float(request_timeout_s)
        self.exec_grace_s = float(exec_grace_s)
        self.max_creates_per_s = float(max_creates_per_s)
        self.max_retries = int(max_retries)
        api_url = self.endpoint.get("api_url") or f"https://api.{self.domain or 'e2b.app'}"
        self._pacer = Pacer(self.max_creates_per_s, key=f"e2b {api_url} {self.api_key}")
        #: Counters: ``retries`` of API calls, ``rate_limited`` (429 answers), ``timeouts_extended``.
        self.stats = {"retries": 0, "rate_limited": 0, "timeouts_extended": 0}

    def _opts(self) -> dict[str, Any]:
        """The SDK's ``ApiParams``: the key (explicitly, so that an ``api_key`` option wins over the environment),
        the :attr:`endpoint` (explicitly: the SDK would read the environment of the moment of each call), the
        per-request timeout, and ``retries=0``: the SDK would otherwise retry 429/502/503/504 itself (3 times, up to
        10 s each) under this backend's own retries, which count, pace and bound them."""
        return {"api_key": self.api_key, **self.endpoint, "request_timeout": self.request_timeout_s, "retries": 0}

    async def aclose(self) -> None:
        """Remove the creation pacer's lock file (see :meth:`~trl_sandbox.backends._remote.Pacer.aclose`); the SDK
        keeps no client to close."""
        await self._pacer.aclose()

    def describe(self) -> str:
        """One line for logs: the domain, the template, the network policy and the backstop."""
        domain = self.domain or "e2b.app"
        network = "internet allowed" if self.allow_internet_access else "no internet access"
        return (f"e2b ({domain}; template {self.template or 'base'}; {network}; killed by E2B at most "
                f"{self.timeout_s}s after its last use)")

    # -- sandboxes ---------------------------------------------------------------------------------------------------

    def _handle(self, sandbox_id: str, labels: Mapping[str, str], remote: Any = None,
                user: str | None = None) -> Sandbox:
        return Sandbox(id=str(sandbox_id), labels=dict(labels or {}), workdir=self.workdir, python=[self.python],
                       data={"remote": remote, "armed": time.monotonic(), "user": user or self.user})

    async def create(self, labels: Mapping[str, str]) -> Sandbox:
        """Create one sandbox (see the module docstring for what it carries).

        Raises:
            ConfigurationError: E2B refused the API key.
            InfrastructureError: creation failed after the retries (quota, concurrency cap that does not let up),
                or timed out.
        """
        return await self._create(labels, self.template)

    async def _create_from_image(self, labels: Mapping[str, str], image: str, lifetime_s: float) -> Sandbox:
        """A repository task's sandbox (see :class:`~trl_sandbox.backends._remote.RemoteImages`): made from the
        template ``templates`` maps ``image`` to (``AsyncSandbox.create(template=...)``), its commands run as
        ``root``, its lifetime (``timeout``) at least ``lifetime_s`` seconds.

        Raises:
            ConfigurationError: ``templates`` names no template for ``image``.
            InfrastructureError: as :meth:`create`.
        """
        template = self.templates.get(image)
        if template is None:
            raise ConfigurationError(
                f"e2b: no template for the image {image!r}: E2B makes sandboxes from templates only; build one from "
                f"it (a Dockerfile 'FROM {image}', e2b template build) and map it with the e2b option "
                f"templates={{{image!r}: TEMPLATE}}")
        return await self._create(labels, template, user="root", lifetime_s=lifetime_s)

    async def _create(self, labels: Mapping[str, str], template: str | None, user: str | None = None,
                      lifetime_s: float = 0.0) -> Sandbox:
        await self._pacer.wait()
        metadata = {str(k): str(v) for k, v in labels.items()}

        async def attempt() -> Any:
            return await self.sdk.AsyncSandbox.create(
                template=template, timeout=max(self.timeout_s, int(math.ceil(lifetime_s))), metadata=metadata, envs=dict(self.env_vars),
                allow_internet_access=self.allow_internet_access, **{**self._opts(),
                                                                     "request_timeout": self.create_timeout_s})

        remote = await self._retrying("create a sandbox", attempt, self.create_timeout_s * 2 + 30.0)
        return self._handle(remote.sandbox_id, metadata, remote, user)

    async def _remote(self, sandbox: Sandbox) -> Any:
        """The SDK's sandbox object (connecting to one known by id only, e.g. from :meth:`list`)."""
        remote = sandbox.data["remote"]
        if remote is None:
            remote = await self.sdk.AsyncSandbox.connect(sandbox.id, **self._opts())
            sandbox.data["remote"] = remote
        return remote

    async def _keep_alive(self, sandbox: Sandbox, remote: Any) -> None:
        """Re-arm E2B's timeout (a lifetime counted from the last ``set_timeout``) once half of it has passed."""
        if time.monotonic() - sandbox.data["armed"] > self.timeout_s / 2:
            await remote.set_timeout(self.timeout_s, **self._opts())
            sandbox.data["armed"] = time.monotonic()
            self.stats["timeouts_extended"] += 1

    async def write_files(self, sandbox: Sandbox, files: Mapping[str, bytes]) -> None:
        """Upload ``files`` under ``sandbox.workdir`` in one request.

        Raises:
            InfrastructureError: the upload failed after the retries, or the sandbox is gone.
        """
        entries = [{"path": f"{self.workdir}/{name}", "data": bytes(data)} for name, data in files.items()]

        async def attempt() -> None:
            remote = await self._remote(sandbox)
            await remote.files.write_files(entries, user=sandbox.data["user"], request_timeout=self.request_timeout_s)

        await self._retrying(f"upload files to sandbox {sandbox.id}", attempt, self.request_timeout_s)

    async def exec(
        self,
        sandbox: Sandbox,
        argv: Sequence[str],
        *,
        stdin: bytes = b"",
        timeout_s: float,
    ) -> ExecResult:
        """Run ``argv`` with ``commands.run`` in ``sandbox.workdir``; see :meth:`Backend.exec`.

        ``stdin`` is uploaded first to a file named ``.trl-sandbox-requests/.trl-sandbox-stdin-*`` and redirected;
        the harness removes it, and verifies it is gone, before any code runs. coreutils ``timeout`` sends SIGTERM at
        ``ceil(timeout_s)`` seconds (the harness then ends the program's processes) and SIGKILL 2 s later (exit
        124/137: ``timed_out``); the client gives up ``exec_grace_s`` later.

        Raises:
            InfrastructureError: the sandbox did not answer in time, is gone, or the API failed after the retries.
        """
        limit = max(1, math.ceil(timeout_s))
        start = time.monotonic()

        async def run() -> ExecResult:
            remote = await self._remote(sandbox)
            await self._keep_alive(sandbox, remote)
            path = None
            if stdin:  # uploaded again on a retry: the harness of a failed attempt may have unlinked it
                path = f"{self.workdir}/{REQUEST_DIR}/{STDIN_PREFIX}{uuid.uuid4().hex}"
                await remote.files.write_files([{"path": path, "data": bytes(stdin)}], user=sandbox.data["user"],
                                               request_timeout=self.request_timeout_s)
            command = command_line(argv, self.workdir, limit, path)
            try:
                result = await remote.commands.run(command, user=sandbox.data["user"],
                                                   timeout=limit + self.exec_grace_s,
                                                   request_timeout=self.request_timeout_s)
            except self.sdk.CommandExitException as exc:  # a non-zero exit: a result
                result = exc
            out, err = (result.stdout or "").encode(), (result.stderr or "").encode()
            code = result.exit_code
            elapsed = time.monotonic() - start
            timed_out = code in (124, 137) and elapsed >= limit
            return ExecResult(
                exit_code=None if timed_out else int(code),
                stdout=out[: self.output_limit_bytes],
                stderr=err[: self.output_limit_bytes],
                duration_s=elapsed,
                timed_out=timed_out,
                output_truncated=len(out) > self.output_limit_bytes or len(err) > self.output_limit_bytes,
            )

        return await self._retrying(f"run a command in sandbox {sandbox.id}", run, timeout_s + self.exec_grace_s)

    async def open_process(self, sandbox: Sandbox, argv: Sequence[str], *, timeout_s: float) -> SandboxProcess:
        """Start ``argv`` in ``sandbox.workdir`` as a long-lived process (an interpreter session):
        ``commands.run(background=True, stdin=True)`` under ``timeout -k 2 ceil(timeout_s)``, its stdin written with
        ``commands.send_stdin``, its stdout followed through the command's event stream. See
        :meth:`Backend.open_process`.

        Raises:
            InfrastructureError: the command could not be started.
        """
        limit = max(1, math.ceil(timeout_s))
        command = (f"cd {shlex.quote(self.workdir)} && timeout -k {_KILL_AFTER_S} {limit} "
                   f"{shlex.join(list(argv))}")
        chunks_in, chunks = anyio.create_memory_object_stream[Any](math.inf)

        async def start() -> Any:
            remote = await self._remote(sandbox)
            await self._keep_alive(sandbox, remote)
            return remote, await remote.commands.run(
                command, background=True, stdin=True, user=self.user, timeout=0,
                on_stdout=lambda text: chunks_in.send_nowait(text.encode()),
                request_timeout=self.request_timeout_s)

        remote, handle = await self._retrying(f"start a session in sandbox {sandbox.id}", start,
                                              self.request_timeout_s)
        return _E2BProcess(self, sandbox.id, remote, handle, chunks_in, chunks)

    async def delete(self, sandbox: Sandbox) -> None:
        """Kill ``sandbox`` (already gone is fine).

        Raises:
            InfrastructureError: the API could not be reached after the retries.
        """
        await self._retrying(f"delete sandbox {sandbox.id}",
                             lambda: self.sdk.AsyncSandbox.kill(sandbox.id, **self._opts()), self.request_timeout_s)

    async def list(self, labels: Mapping[str, str]) -> list[Sandbox]:
        """The account's sandboxes (running or paused) whose metadata includes ``labels`` (the server filters; pages
        are followed).

        Raises:
            InfrastructureError: the API could not be reached after the retries.
        """

        async def attempt() -> list[Sandbox]:
            query = self.sdk.SandboxQuery(metadata={str(k): str(v) for k, v in labels.items()})
            pages = self.sdk.AsyncSandbox.list(query=query, **self._opts())
            found = []
            while pages.has_next:
                found += [self._handle(info.sandbox_id, info.metadata or {}) for info in await pages.next_items()]
            return found

        return await self._retrying("list sandboxes", attempt, self.request_timeout_s)

    # -- retries -----------------------------------------------------------------------------------------------------

    def _classify(self, exc: Exception) -> float | None:
        """429 (the concurrency cap; E2B sends no ``Retry-After``), 5xx, a busy service and connection errors: the
        backoff; a refused key: a :class:`ConfigurationError`; the rest (a sandbox gone, a quota): not retried."""
        sdk = self.sdk
        if isinstance(exc, sdk.AuthenticationException):
            raise ConfigurationError(f"{_REFUSED_HINT} ({describe(exc)})") from None
        if isinstance(exc, sdk.RateLimitException) or "rate limit" in str(exc).lower():
            self.stats["rate_limited"] += 1
            return BACKOFF
        if isinstance(exc, (sdk.SandboxNotFoundException, sdk.SandboxNotRunningException, sdk.NotFoundException)):
            return None
        status = getattr(exc, "status_code", None)
        if isinstance(exc, (sdk.ServiceBusyException, sdk.SandboxUnreachableException, ConnectionError, OSError)) \
                or (isinstance(status, int) and status >= 500):
            return BACKOFF
        try:
            import httpx
        except ImportError:  # pragma: no cover - the SDK depends on it
            return None
        return BACKOFF if isinstance(exc, httpx.TransportError) else None

    async def _retrying(self, what: str, call: Callable[[], Awaitable[T]], deadline_s: float) -> T:
        """``await call()`` within ``deadline_s`` seconds with the retries of :meth:`_classify` (see
        :func:`~trl_sandbox.backends._remote.retrying`).

        Raises:
            ConfigurationError: E2B refused the key.
            InfrastructureError: every other error, the last one after the retries, or the deadline.
        """
        return await retrying(call, what=what, backend="e2b", deadline_s=deadline_s,
                              max_retries=self.max_retries, classify=self._classify, stats=self.stats)


class _E2BProcess(StreamProcess):
    """A background command with stdin (see :meth:`E2BBackend.open_process`): its stdout arrives through the
    command's event stream (the handle's ``on_stdout``), which a task of the event loop follows to the end."""

    def __init__(self, backend: E2BBackend, sandbox_id: str, remote: Any, handle: Any, chunks_in: Any,
                 chunks: Any) -> None:
        super().__init__("e2b", sandbox_id)
        self.backend, self.remote, self.handle = backend, remote, handle
        self._chunks_in, self._chunks = chunks_in, chunks
        self.finished = anyio.Event()
        import asyncio

        self._follower = asyncio.get_running_loop().create_task(self._follow())

    async def _follow(self) -> None:
        try:
            await self.handle.wait()
            self._chunks_in.send_nowait(None)
        except self.backend.sdk.CommandExitException:
            self._chunks_in.send_nowait(None)  # a non-zero exit (a killed interpreter): the end of its output
        except Exception as exc:  # noqa: BLE001 - given to the reader: the session is lost
            self._chunks_in.send_nowait(exc)
        finally:
            self.finished.set()

    async def _next_chunk(self) -> bytes | None:
        item = await self._chunks.receive()
        if isinstance(item, Exception):
            raise InfrastructureError(f"e2b: the session in sandbox {self.sandbox_id} was lost: {describe(item)}")
        return item

    async def send(self, data: bytes) -> None:
        """Send ``data`` to the command's stdin.

        Raises:
            InfrastructureError: the command or its sandbox is gone, or the API failed.
        """
        if self.killed or self.finished.is_set():
            raise InfrastructureError("e2b: the session process has ended")
        try:
            await self.remote.commands.send_stdin(self.handle.pid, data,
                                                  request_timeout=self.backend.request_timeout_s)
        except Exception as exc:  # noqa: BLE001 - input is not retried: it may have arrived
            raise InfrastructureError(f"e2b: could not write to the session in sandbox {self.sandbox_id}: "
                                      f"{describe(exc)}") from exc

    async def _wait_end(self) -> bool:
        await self.finished.wait()
        return True

    async def _stop(self, ended: bool) -> None:
        """Kill the command (SIGKILL through envd) unless it ended; stop following its stream."""
        if not ended:
            with contextlib.suppress(Exception):
                with anyio.fail_after(self.backend.request_timeout_s):
                    await self.remote.commands.kill(self.handle.pid)
        self._follower.cancel()
        with contextlib.suppress(Exception):
            await self.handle.disconnect()
