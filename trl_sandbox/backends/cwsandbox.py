"""The ``cwsandbox`` backend: sandboxes on CoreWeave Sandbox (first published as "Aviato"), through the official
``cwsandbox`` SDK (``pip install 'trl-sandbox[cwsandbox]'``).

What this module adds to the SDK, for scoring during training:

- credentials are checked when the backend is built (before training starts): one :class:`ConfigurationError`;
- sandboxes carry the pool's ownership labels as SDK tags (``key=value`` strings: ``trl-sandbox=true``, run id,
  rank, step, model, host, pid, creation time), so ``Sandbox.list(tags=...)`` finds them; egress is denied
  (``NetworkOptions(deny_egress=True)``); and they carry a server-side lifetime backstop (``max_lifetime_seconds``),
  so that even a trainer killed with SIGKILL leaks a sandbox for at most that long. A sandbox that reaches its
  lifetime mid-training fails its next command and is replaced by the pool;
- commands run with ``Sandbox.exec`` (the SDK's bidirectional ``StreamExec``), the request streamed to stdin (one
  round trip per completion), under ``timeout`` inside the sandbox (so the command and its process group are killed
  there at ``timeout_s``, whatever the client does) and a client-side deadline ``exec_grace_s`` later;
- transient errors (``UNAVAILABLE``, ``RESOURCE_EXHAUSTED`` answers, request timeouts) are retried with exponential
  backoff; creations are paced (``max_creates_per_s``). Every SDK error is mapped: a command past its time limit is
  a ``timed_out`` result (the model's fault); a sandbox that is gone, an API failure, a rejected request are
  :class:`InfrastructureError` (never a wrong answer); bad credentials are :class:`ConfigurationError`.

Facts about the SDK this relies on were read from its source (cwsandbox 1.22): ``Sandbox(container_image=, tags=,
max_lifetime_seconds=, network=, resources=, environment_variables=, base_url=, request_timeout_seconds=)``, ``await
sandbox.start()`` then ``await sandbox`` (waits for RUNNING), ``sandbox.exec(argv, cwd=, timeout_seconds=,
stdin=True)`` returning an awaitable ``Process`` (``ProcessResult.stdout/stderr/returncode``) whose ``stdin``
(``StreamWriter``) takes ``write()`` and ``close()``, ``sandbox.write_file(path, bytes)``,
``sandbox.stop(missing_ok=, graceful_shutdown_seconds=)``, ``Sandbox.delete(id, missing_ok=)`` and
``Sandbox.list(tags=)`` (sandboxes with all the tags; terminal ones left out). Every SDK call returns an
``OperationRef`` that runs on the SDK's own event-loop thread and can be awaited from any loop. Credentials:
``CWSANDBOX_API_KEY``; endpoint: ``CWSANDBOX_BASE_URL`` (default ``https://api.cwsandbox.com``).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import anyio

from ..errors import ConfigurationError, InfrastructureError
from ._remote import BACKOFF, Pacer, StreamProcess, describe, retrying
from .base import Backend, ExecResult, Sandbox, SandboxProcess

T = TypeVar("T")

_INSTALL_HINT = "the cwsandbox backend needs the CoreWeave Sandbox SDK: pip install 'trl-sandbox[cwsandbox]'"
_KEY_HINT = (
    "the cwsandbox backend needs an API key: set CWSANDBOX_API_KEY (from the CoreWeave console) or pass "
    "sandbox_backend_options={'api_key': ...}"
)
#: Exit status of coreutils ``timeout`` when the command ran past its time (TERM worked), and 128 + SIGKILL.
_TIMEOUT_EXIT, _KILLED_EXIT = 124, 137
_KILL_AFTER_S = 2


def _sdk() -> Any:
    try:
        import cwsandbox
    except ImportError as exc:
        raise ConfigurationError(f"{_INSTALL_HINT} ({exc})") from None
    return cwsandbox


def labels_to_tags(labels: Mapping[str, str]) -> list[str]:
    """Ownership labels as SDK tags: one ``"key=value"`` string per label (sorted), since tags are plain strings."""
    return sorted(f"{key}={value}" for key, value in labels.items())


def tags_to_labels(tags: Sequence[str]) -> dict[str, str]:
    """The labels encoded in ``tags`` by :func:`labels_to_tags`; tags without ``=`` are left out."""
    labels = {}
    for tag in tags:
        key, sep, value = str(tag).partition("=")
        if sep:
            labels[key] = value
    return labels


class CWSandboxBackend(Backend):
    """Sandboxes on CoreWeave Sandbox.

    Args:
        api_key: API key. Default: ``CWSANDBOX_API_KEY``.
        base_url: API endpoint. Default: ``CWSANDBOX_BASE_URL``, else the SDK's (``https://api.cwsandbox.com``).
        container_image: Image of every sandbox (default ``"python:3.11"``, the SDK's); it needs ``python3`` and
            coreutils ``timeout``.
        max_lifetime_seconds: Server-side lifetime of a sandbox, in seconds (default 7200): the backstop for a
            trainer that dies without deleting its pool. Longer runs are fine: an expired sandbox is replaced.
        deny_egress: Deny all network egress from the sandbox (default True).
        resources: Resources per sandbox, as the SDK takes them (e.g. ``{"cpu": "1", "memory": "1Gi"}``).
        environment_variables: Environment of the sandbox (``str -> str``). The trainer's own are never sent.
        tags: Extra tags for every sandbox (strings), next to the ownership labels.
        python: Python command inside the sandbox (default ``"python3"``).
        workdir: Directory of the harness inside the sandbox.
        output_limit_bytes: Bytes of stdout and of stderr kept per command; the rest is cut.
        create_timeout_s: Seconds one sandbox may take to be created and reach RUNNING.
        request_timeout_s: Seconds other API calls (file writes, deletion, listing) may take, retries included.
        exec_grace_s: Seconds past a command's timeout before the client gives up on the sandbox (it then counts as
            an infrastructure failure and the sandbox is replaced).
        max_creates_per_s: Most sandbox creations started per second by the processes of this host that use the
            same account (shared through a lock file).
        max_retries: Retries of one API call after a transient error.
        data_plane_mode: The SDK's transport for commands and files (``"auto"``: direct when the service offers it,
            else the gateway; ``"direct"``; ``"gateway"``).

    Raises:
        ConfigurationError: the SDK is not installed, no API key is configured, or an option is invalid.
    """

    name = "cwsandbox"
    authenticate_records = True  # the program may write into the command's output (see Backend)
    creations_outlive_cancel = True  # the service finishes a creation whose request was given up on

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        container_image: str | None = None,
        max_lifetime_seconds: float = 7200.0,
        deny_egress: bool = True,
        resources: Mapping[str, Any] | None = None,
        environment_variables: Mapping[str, str] | None = None,
        tags: Sequence[str] = (),
        python: str = "python3",
        workdir: str = "/tmp/trl-sandbox",
        output_limit_bytes: int = 1 << 20,
        create_timeout_s: float = 180.0,
        request_timeout_s: float = 60.0,
        exec_grace_s: float = 15.0,
        max_creates_per_s: float = 4.0,
        max_retries: int = 6,
        data_plane_mode: str = "auto",
        **unknown: Any,
    ) -> None:
        if unknown:
            raise ConfigurationError(
                f"unknown cwsandbox backend option(s) {sorted(unknown)}; see "
                "trl_sandbox.backends.cwsandbox.CWSandboxBackend"
            )
        self.sdk = _sdk()
        self.api_key = api_key or os.environ.get("CWSANDBOX_API_KEY")
        if not self.api_key:
            raise ConfigurationError(_KEY_HINT)
        self.base_url = base_url or os.environ.get("CWSANDBOX_BASE_URL") or None
        if max_lifetime_seconds is not None and max_lifetime_seconds <= 0:
            raise ConfigurationError("max_lifetime_seconds must be a positive number of seconds")
        if max_creates_per_s <= 0 or max_retries < 0:
            raise ConfigurationError("max_creates_per_s must be positive and max_retries >= 0")
        if data_plane_mode not in ("auto", "direct", "gateway"):
            raise ConfigurationError(f"data_plane_mode must be 'auto', 'direct' or 'gateway', got {data_plane_mode!r}")
        self.container_image = container_image
        self.max_lifetime_seconds = max_lifetime_seconds
        self.deny_egress = bool(deny_egress)
        self.resources = dict(resources) if resources else None
        self.environment_variables = dict(environment_variables or {})
        self.tags = [str(t) for t in tags]
        self.python = python
        self.workdir = workdir.rstrip("/") or "/"
        self.output_limit_bytes = int(output_limit_bytes)
        self.create_timeout_s = float(create_timeout_s)
        self.request_timeout_s = float(request_timeout_s)
        self.exec_grace_s = float(exec_grace_s)
        self.max_creates_per_s = float(max_creates_per_s)
        self.max_retries = int(max_retries)
        self.data_plane_mode = data_plane_mode
        self._auth = self.sdk.AuthHeaders(headers={"Authorization": f"Bearer {self.api_key}"}, strategy="api_key")
        self._pacer = Pacer(self.max_creates_per_s, key=f"cwsandbox {self.base_url} {self.api_key}")
        #: Counters (integers): ``retries`` of API calls, ``rate_limited`` (RESOURCE_EXHAUSTED answers).
        self.stats = {"retries": 0, "rate_limited": 0}
        try:  # our pool deletes its sandboxes on SIGINT/SIGTERM (trl_sandbox.lifecycle); the SDK must not race it
            self.sdk.disable_signal_handlers()
        except RuntimeError:  # the SDK already installed them (another user of it in this process)
            pass

    # -- lifecycle ---------------------------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Remove the creation pacer's lock file (see :meth:`~trl_sandbox.backends._remote.Pacer.aclose`)."""
        await self._pacer.aclose()

    def describe(self) -> str:
        """One line for logs: endpoint, image, network policy and lifetime backstop."""
        network = "egress denied" if self.deny_egress else "egress allowed"
        return (f"cwsandbox ({self.base_url or 'https://api.cwsandbox.com'}; image "
                f"{self.container_image or 'python:3.11'}; {network}; max lifetime {self.max_lifetime_seconds:.0f}s)")

    # -- sandboxes ---------------------------------------------------------------------------------------------------

    def _common(self) -> dict[str, Any]:
        options: dict[str, Any] = {"auth": self._auth}
        if self.base_url:
            options["base_url"] = self.base_url
        return options

    def _handle(self, remote: Any) -> Sandbox:
        return Sandbox(id=str(remote.sandbox_id), labels=tags_to_labels(remote.tags or ()), workdir=self.workdir,
                       python=[self.python], data=remote)

    async def create(self, labels: Mapping[str, str]) -> Sandbox:
        """Create one sandbox and wait until it runs (see the class docstring for what it carries).

        Raises:
            InfrastructureError: creation failed after the retries, or the sandbox did not run within
                ``create_timeout_s`` (it is then deleted).
            ConfigurationError: the service refused the credentials.
        """
        await self._pacer.wait()
        options: dict[str, Any] = {
            "tags": [*labels_to_tags(labels), *self.tags],
            "network": self.sdk.NetworkOptions(deny_egress=self.deny_egress),
            "environment_variables": dict(self.environment_variables),
            "request_timeout_seconds": self.request_timeout_s,
            "data_plane_mode": self.data_plane_mode,
            **self._common(),
        }
        if self.container_image:
            options["container_image"] = self.container_image
        if self.max_lifetime_seconds is not None:
            options["max_lifetime_seconds"] = self.max_lifetime_seconds
        if self.resources:
            options["resources"] = self.resources

        async def attempt() -> Any:
            remote = self.sdk.Sandbox(**options)
            try:
                await remote.start()
                with anyio.fail_after(self.create_timeout_s):
                    await remote  # until RUNNING
            except BaseException:
                if remote.sandbox_id:  # the server made it: do not leak it
                    with anyio.CancelScope(shield=True), anyio.move_on_after(self.request_timeout_s):
                        await self._stop(remote)
                raise
            return remote

        remote = await self._retrying("create a sandbox", attempt, self.create_timeout_s * 2 + 30.0)
        return self._handle(remote)

    async def write_files(self, sandbox: Sandbox, files: Mapping[str, bytes]) -> None:
        """Write ``files`` under ``sandbox.workdir`` (one request per file).

        Raises:
            InfrastructureError: a write failed after the retries.
        """
        for name, data in files.items():
            path = f"{self.workdir}/{name}"
            await self._retrying(f"write {path}", lambda p=path, d=data: sandbox.data.write_file(p, bytes(d)),
                                 self.request_timeout_s)

    async def exec(
        self,
        sandbox: Sandbox,
        argv: Sequence[str],
        *,
        stdin: bytes = b"",
        timeout_s: float,
    ) -> ExecResult:
        """Run ``argv`` in ``sandbox.workdir`` with ``stdin`` streamed in; see :meth:`Backend.exec`.

        The command runs under ``timeout -k 2 ceil(timeout_s)`` inside the sandbox: at the limit its process group
        gets SIGTERM, then SIGKILL (``timed_out``). The client gives up ``exec_grace_s`` later.

        Raises:
            InfrastructureError: the sandbox is gone or did not answer in time, or the API failed after the retries.
        """
        limit = max(1, math.ceil(timeout_s))
        command = ["timeout", "-k", str(_KILL_AFTER_S), str(limit), *argv]

        async def run() -> ExecResult:
            start = time.monotonic()
            try:
                process = sandbox.data.exec(command, cwd=self.workdir, timeout_seconds=limit + self.exec_grace_s,
                                            stdin=True)
                try:
                    if stdin:
                        await process.stdin.write(bytes(stdin))
                    await process.stdin.close()
                except self.sdk.SandboxExecutionError:
                    # The stream ended before the input went (the SDK closes the writer with a generic "stream has
                    # failed" when the call is rejected): the call's own error says why, and a transient one (e.g.
                    # UNAVAILABLE under load) is retried like any other. A call that ended normally without its
                    # input is reported as this error.
                    await process
                    raise
                result = await process
            except self.sdk.SandboxTimeoutError as exc:
                if isinstance(exc, self.sdk.SandboxRequestTimeoutError):
                    raise  # the API, not the command: retried
                raise InfrastructureError(
                    f"cwsandbox: sandbox {sandbox.id} did not report the command's end within "
                    f"{limit + self.exec_grace_s:.0f}s"
                ) from exc
            elapsed = time.monotonic() - start
            code = result.returncode
            out, err = _bytes(result, "stdout"), _bytes(result, "stderr")
            timed_out = code == _TIMEOUT_EXIT or (code == _KILLED_EXIT and elapsed >= limit)
            return ExecResult(
                exit_code=None if timed_out else int(code),
                stdout=out[: self.output_limit_bytes],
                stderr=err[: self.output_limit_bytes],
                duration_s=elapsed,
                timed_out=timed_out,
                output_truncated=len(out) > self.output_limit_bytes or len(err) > self.output_limit_bytes,
            )

        return await self._retrying(f"run a command in sandbox {sandbox.id}", run,
                                    limit + self.exec_grace_s + self.request_timeout_s)

    async def open_process(self, sandbox: Sandbox, argv: Sequence[str], *, timeout_s: float) -> SandboxProcess:
        """Start ``argv`` in ``sandbox.workdir`` as a long-lived process (an interpreter session): one
        ``Sandbox.exec(..., stdin=True)`` left open, its stdin written as requests go and its stdout read as it
        streams. It runs under ``timeout -k 2 ceil(timeout_s)`` inside the sandbox; see :meth:`Backend.open_process`.

        Raises:
            InfrastructureError: the command could not be started.
        """
        limit = max(1, math.ceil(timeout_s))
        command = ["timeout", "-k", str(_KILL_AFTER_S), str(limit), *argv]
        try:
            process = sandbox.data.exec(command, cwd=self.workdir, timeout_seconds=limit + self.exec_grace_s,
                                        stdin=True)
        except Exception as exc:  # noqa: BLE001 - any SDK error
            raise InfrastructureError(f"cwsandbox: could not start a session in sandbox {sandbox.id}: "
                                      f"{describe(exc)}") from exc
        return _CWSandboxProcess(process, sandbox.id)

    async def _stop(self, remote: Any) -> None:
        try:
            await remote.stop(missing_ok=True, graceful_shutdown_seconds=0)
        except self.sdk.SandboxTerminalStateUnavailableError:
            pass  # deleted; the service just did not report the final state in time

    async def delete(self, sandbox: Sandbox) -> None:
        """Delete ``sandbox`` (already gone is fine).

        Raises:
            InfrastructureError: the API could not be reached after the retries.
        """
        await self._retrying(f"delete sandbox {sandbox.id}", lambda: self._stop(sandbox.data), self.request_timeout_s)

    async def list(self, labels: Mapping[str, str]) -> list[Sandbox]:
        """The account's running sandboxes whose tags include every label of ``labels`` (the server filters).

        Raises:
            InfrastructureError: the API could not be reached after the retries.
        """

        async def attempt() -> list[Sandbox]:
            found = await self.sdk.Sandbox.list(tags=labels_to_tags(labels), timeout_seconds=self.request_timeout_s,
                                                **self._common())
            return [self._handle(remote) for remote in found]

        return await self._retrying("list sandboxes", attempt, self.request_timeout_s)

    # -- errors and retries ------------------------------------------------------------------------------------------

    def _classify(self, exc: Exception) -> float | None:
        """Transient errors (``UNAVAILABLE``, ``RESOURCE_EXHAUSTED``, request timeouts): the backoff; refused
        credentials: :class:`ConfigurationError`; the rest (a sandbox gone or stopped, a rejected request, a broken
        stream): not retried."""
        sdk = self.sdk
        if isinstance(exc, sdk.CWSandboxAuthenticationError):
            raise ConfigurationError(f"{_KEY_HINT} (the service said: {exc})") from None
        if isinstance(exc, sdk.SandboxResourceExhaustedError):
            self.stats["rate_limited"] += 1
            return BACKOFF
        if isinstance(exc, (sdk.SandboxUnavailableError, sdk.SandboxRequestTimeoutError, ConnectionError)):
            return BACKOFF
        return None

    async def _retrying(self, what: str, call: Callable[[], Awaitable[T]], deadline_s: float) -> T:
        """``await call()`` within ``deadline_s`` seconds; transient errors retried after an exponential backoff
        (0.5 s doubling, at most 8 s), at most ``max_retries`` times (see
        :func:`~trl_sandbox.backends._remote.retrying`).

        Raises:
            ConfigurationError: the service refused the credentials.
            InfrastructureError: every other error, the last one after the retries, or the deadline.
        """
        return await retrying(call, what=what, backend="cwsandbox", deadline_s=deadline_s,
                              max_retries=self.max_retries, classify=self._classify, stats=self.stats)


def _bytes(result: Any, name: str) -> bytes:
    """Raw output of a ``ProcessResult`` (``stdout_bytes``; the decoded text where a version lacks it)."""
    raw = getattr(result, f"{name}_bytes", None)
    if isinstance(raw, (bytes, bytearray)):
        return bytes(raw)
    return str(getattr(result, name, "") or "").encode()



class _CWSandboxProcess(StreamProcess):
    """A session process: one open ``StreamExec`` (the SDK's ``Process``: ``stdin`` a ``StreamWriter``, ``stdout`` a
    ``StreamReader[str]`` of decoded chunks)."""

    def __init__(self, process: Any, sandbox_id: str) -> None:
        super().__init__("cwsandbox", sandbox_id)
        self.process = process

    async def _next_chunk(self) -> bytes | None:
        try:
            text = await self.process.stdout.__anext__()
        except StopAsyncIteration:
            return None
        return text.encode()

    async def send(self, data: bytes) -> None:
        """Write ``data`` to the process's stdin.

        Raises:
            InfrastructureError: the stream is closed or failed (the process ended, the sandbox is gone).
        """
        if self.killed:
            raise InfrastructureError("cwsandbox: the session process is closed")
        try:
            await self.process.stdin.write(bytes(data))
        except Exception as exc:  # noqa: BLE001 - any SDK error
            raise InfrastructureError(f"cwsandbox: the session process in sandbox {self.sandbox_id} is gone "
                                      f"({describe(exc)})") from exc

    async def _wait_end(self) -> bool:
        """Close stdin (the session then ends and cleans up) and wait for the command's exit status."""
        try:
            await self.process.stdin.close()
            await self.process  # its exit status, whatever it is
        except Exception:  # noqa: BLE001 - the stream failed: how the process ended is unknown
            return False
        return True

    async def _stop(self, ended: bool) -> None:
        """Stop reading; cancel the stream of a command that has not ended."""
        self.process.stdout.close()
        if not ended:
            self.process.cancel()
