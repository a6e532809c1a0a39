"""The ``hf`` backend: sandboxes on Hugging Face Jobs through the official ``huggingface_hub`` Sandbox API
(``huggingface_hub.Sandbox``, experimental in 2.4; ``pip install 'trl-sandbox[hf]'``).

What this module adds to the SDK, for scoring during training:

- the token is read when the backend is built (``token=``, else ``HF_TOKEN``, else the ``hf auth login`` file): a
  missing one is one :class:`ConfigurationError` naming ``HF_TOKEN``. It is used by this process only: sandboxes
  are created with ``forward_hf_token=False`` and the token is never put in their environment (the SDK sends the
  job a token *derived* from it, ``SBX_TOKEN``, which authenticates calls to that sandbox's server only);
- ``mode="dedicated"`` (default): one HF Job per sandbox (``Sandbox.create``: a VM of its own). ``mode="pool"``:
  sandboxes packed on shared host jobs (``SandboxPool``), separated on the host by the SDK's server (Landlock, per
  sandbox home and token), not by a VM; see ``docs/backends.md``;
- sandboxes carry the pool's ownership labels (run id, rank, pid, host, creation time) as HF Job labels, and the
  SDK's ``idle_timeout`` as the server-side backstop: a sandbox of a trainer killed with SIGKILL stops after that
  long without activity (24 h at most, the SDK's job timeout). :meth:`HFBackend.list` filters jobs by labels, so the
  orphan sweep and ``trl-sandbox cleanup --backend hf`` find what a killed run left;
- the SDK is synchronous (``httpx``): every call runs in a worker thread (``anyio.to_thread``) under a deadline, so
  the pool's event loop never blocks; a call abandoned at its deadline finishes in its thread, and a sandbox a
  create abandoned that way made is deleted when it appears;
- commands run with ``Sandbox.run`` (the server's ``/exec`` stream): the request travels as the command's stdin
  (``stdin=``, a pipe: unlike Daytona's and E2B's, no file the program could look for); stdout and stderr come back
  apart, cut at ``output_limit_bytes``; the server kills the command's process group at its timeout;
- rate limits (429) are retried after ``Retry-After``, 5xx and connection errors with an exponential backoff,
  creations are paced (``max_creates_per_s``, shared by the processes of this host). A refused token (401) is a
  :class:`ConfigurationError`; exhausted credits (402), a refusal (403) or a sandbox that is gone (404) are
  :class:`InfrastructureError` with one line saying what to do: a reward of None, never a wrong answer.

``CodeEnvironment`` sessions are refused: ``Sandbox.run`` takes stdin as one string given at the start, and a
background process (``run(background=True)``) has no stdin at all, so a long-lived interpreter cannot be fed line by
line through this API.

Facts about the SDK this relies on were read from its source (``huggingface_hub/_sandbox.py``, 2.4.0).
"""

from __future__ import annotations

import math
import os
import shlex
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from ..errors import ConfigurationError, InfrastructureError
from ..harness.base import REQUEST_DIR, STDIN_PREFIX  # the harness removes request files named so
from ._remote import BACKOFF, Pacer, RemoteImages, describe, redirected, retrying
from .base import Backend, ExecResult, Sandbox, SandboxProcess

T = TypeVar("T")

_INSTALL_HINT = "the hf backend needs huggingface_hub 2.4 or newer: pip install 'trl-sandbox[hf]'"
_TOKEN_HINT = (
    "the hf backend needs a Hugging Face token: set HF_TOKEN (a token with the Jobs permission, "
    "https://huggingface.co/settings/tokens), run `hf auth login`, or pass sandbox_backend_options={'token': ...}"
)
_RETRY_STATUSES = {500, 502, 503, 504}
#: Job stages of a sandbox that still exists (may cost money).
_LIVE_STAGES = ["SCHEDULING", "RUNNING"]
_MODES = ("dedicated", "pool")


def _sdk() -> Any:
    try:
        import huggingface_hub
        from huggingface_hub import Sandbox as _Sandbox  # noqa: F401 - 2.4+ only
    except ImportError as exc:
        raise ConfigurationError(f"{_INSTALL_HINT} ({exc})") from None
    return huggingface_hub


def _hf_token(explicit: str | None) -> str | None:
    """``explicit``, else ``HF_TOKEN``, else what ``hf auth login`` saved (the SDK's own lookup)."""
    if explicit:
        return explicit
    if os.environ.get("HF_TOKEN"):
        return os.environ["HF_TOKEN"]
    try:
        from huggingface_hub import get_token

        return get_token()
    except Exception:  # noqa: BLE001 - no login file
        return None


class HFBackend(RemoteImages, Backend):
    """Sandboxes on Hugging Face Jobs (``huggingface_hub.Sandbox``).

    Args:
        token: Hugging Face token. Default: ``HF_TOKEN``, else the ``hf auth login`` token. Never sent into a
            sandbox.
        namespace: User or organization the jobs run (and are billed) under. Default: the token's user.
        mode: ``"dedicated"`` (one job, a VM, per sandbox; default) or ``"pool"`` (sandboxes packed on shared host
            jobs of a ``SandboxPool``: cheaper and faster to start, weaker isolation; see ``docs/backends.md``).
        image: Docker image with ``/bin/sh`` and Python 3 (default the SDK's ``"python:3.12"``).
        flavor: Job hardware flavor (default ``"cpu-basic"``; see ``hf jobs hardware``).
        idle_timeout_s: Server-side backstop: seconds without activity after which a sandbox shuts down (the SDK's
            ``idle_timeout``; default 600). Must be longer than any one command (the SDK does not count a running
            foreground command as activity).
        sandboxes_per_host, max_hosts: ``mode="pool"`` only: sandboxes packed per host job, most host jobs.
        env_vars: Environment variables of the sandbox (``str -> str``). The trainer's own are never sent.
        python: Python command inside the sandbox (default ``"python3"``).
        workdir: Directory of the harness inside the sandbox.
        output_limit_bytes: Bytes kept per stream per command; the rest is cut (``ExecResult.output_truncated``).
        create_timeout_s: Seconds a sandbox may take to become ready (the SDK's ``start_timeout``).
        request_timeout_s: Seconds other API calls (upload, delete, list) may take, retries included.
        exec_grace_s: Seconds past a command's timeout before the client gives up on the sandbox (an
            infrastructure failure: the sandbox is replaced).
        max_creates_per_s: Most sandbox creations started per second by the processes of this host using the same
            token (shared through a lock file).
        max_retries: Retries of one API call after a 429, a connection error or a 5xx.
        max_threads: Most SDK calls running at once (each holds a worker thread while it waits).

    Raises:
        ConfigurationError: ``huggingface_hub`` is too old or missing, no token is found, or an option is invalid.
    """

    name = "hf"
    authenticate_records = True  # the program may write into the command's output (see Backend)
    creations_outlive_cancel = True  # the service finishes a creation whose request was given up on

    def __init__(
        self,
        *,
        token: str | None = None,
        namespace: str | None = None,
        mode: str = "dedicated",
        image: str | None = None,
        flavor: str = "cpu-basic",
        idle_timeout_s: float = 600.0,
        sandboxes_per_host: int = 50,
        max_hosts: int | None = None,
        env_vars: Mapping[str, str] | None = None,
        python: str = "python3",
        workdir: str = "/tmp/trl-sandbox",
        output_limit_bytes: int = 1 << 20,
        create_timeout_s: float = 120.0,
        request_timeout_s: float = 60.0,
        exec_grace_s: float = 15.0,
        max_creates_per_s: float = 2.0,
        max_retries: int = 6,
        max_threads: int = 256,
        **unknown: Any,
    ) -> None:
        if unknown:
            raise ConfigurationError(
                f"unknown hf backend option(s) {sorted(unknown)}; see trl_sandbox.backends.hf.HFBackend"
            )
        self.sdk = _sdk()
        self.token = _hf_token(token)
        if not self.token:
            raise ConfigurationError(_TOKEN_HINT)
        if mode not in _MODES:
            raise ConfigurationError(f"hf backend: mode must be one of {', '.join(_MODES)}, not {mode!r}")
        if max_creates_per_s <= 0 or max_retries < 0 or idle_timeout_s <= 0 or sandboxes_per_host < 1:
            raise ConfigurationError("hf backend: max_creates_per_s, idle_timeout_s and sandboxes_per_host must be "
                                     "positive and max_retries >= 0")
        env = dict(env_vars or {})
        if "HF_TOKEN" in env:
            raise ConfigurationError("hf backend: env_vars must not carry HF_TOKEN: the token never enters a sandbox")
        self.namespace = namespace
        self.mode = mode
        self.image = image or self.sdk._sandbox.DEFAULT_IMAGE
        self.flavor = flavor
        self.idle_timeout_s = int(math.ceil(idle_timeout_s))
        self.sandboxes_per_host = int(sandboxes_per_host)
        self.max_hosts = max_hosts
        self.env_vars = env
        self.python = python
        self.workdir = workdir.rstrip("/") or "/"
        self.output_limit_bytes = int(output_limit_bytes)
        self.create_timeout_s = float(create_timeout_s)
        self.request_timeout_s = float(request_timeout_s)
        self.exec_grace_s = float(exec_grace_s)
        self.max_retries = int(max_retries)
        self._limiter = anyio.CapacityLimiter(max_threads)
        self._pacer = Pacer(float(max_creates_per_s), key=f"hf {self._endpoint()} {self.token}")
        self._pool: Any = None
        self._pool_lock = threading.Lock()
        #: Labels of pool-mode sandboxes (pool sandboxes carry no job labels of their own): id -> labels.
        self._pool_labels: dict[str, dict[str, str]] = {}
        #: Their SDK handles (so that a pooled sandbox :meth:`list` finds can be deleted): id -> handle.
        self._pooled: dict[str, Any] = {}
        #: ``$HOME`` of pool-mode sandboxes: id -> path.
        self._homes: dict[str, str] = {}
        #: Counters: ``retries`` of API calls, ``rate_limited`` (429 answers), ``orphans_deleted`` (sandboxes a
        #: create abandoned at its deadline made, deleted when they appeared).
        self.stats = {"retries": 0, "rate_limited": 0, "orphans_deleted": 0}

    # -- lifecycle ---------------------------------------------------------------------------------------------------

    def _endpoint(self) -> str:
        return self.sdk.constants.ENDPOINT

    def _api(self) -> Any:
        return self.sdk.HfApi(token=self.token, endpoint=self._endpoint())

    async def _thread(self, fn: Callable[[], T]) -> T:
        """``fn()`` in a worker thread; abandoned (left to finish there) when the caller is cancelled."""
        return await anyio.to_thread.run_sync(fn, abandon_on_cancel=True, limiter=self._limiter)

    async def start(self) -> None:
        """Resolve the namespace (the token's user) once, which also checks the token.

        Raises:
            ConfigurationError: the token is refused.
            InfrastructureError: the Hub could not be reached.
        """
        await self._ensure_namespace()

    async def _ensure_namespace(self) -> None:
        if self.namespace is None:
            info = await self._retrying("check the token (whoami)",
                                        lambda: self._thread(lambda: self._api().whoami()), self.request_timeout_s)
            self.namespace = info["name"]

    async def aclose(self) -> None:
        """Close the ``SandboxPool`` (``mode="pool"``: cancels the host jobs this process started) and remove the
        creation pacer's lock file (see :meth:`~trl_sandbox.backends._remote.Pacer.aclose`)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            with anyio.CancelScope(shield=True), anyio.move_on_after(self.request_timeout_s):
                await self._thread(pool.close)
        await self._pacer.aclose()

    def describe(self) -> str:
        """One line for logs: the endpoint, the mode, the image and the backstop."""
        kind = "one job (VM) per sandbox" if self.mode == "dedicated" else \
            f"pool of {self.sandboxes_per_host} sandboxes per host job"
        return (f"hf ({self._endpoint()}; {kind}; image {self.image}, flavor {self.flavor}; idle timeout "
                f"{self.idle_timeout_s}s)")

    # -- sandboxes ---------------------------------------------------------------------------------------------------

    def _handle(self, remote: Any, labels: Mapping[str, str]) -> Sandbox:
        return Sandbox(id=str(remote.id), labels=dict(labels), workdir=self.workdir, python=[self.python],
                       data=remote)

    async def create(self, labels: Mapping[str, str]) -> Sandbox:
        """Create one sandbox (see the module docstring for what it carries).

        Raises:
            ConfigurationError: the token is refused.
            InfrastructureError: creation failed after the retries, or did not finish by its deadline (a sandbox
                the SDK makes later is deleted when it appears).
        """
        labels = {str(k): str(v) for k, v in labels.items()}
        await self._ensure_namespace()
        await self._pacer.wait()
        if self.mode == "pool":
            return await self._create_pooled(labels)
        return await self._create_dedicated(labels, self.image)

    async def _create_from_image(self, labels: Mapping[str, str], image: str, lifetime_s: float) -> Sandbox:
        """A repository task's sandbox (see :class:`~trl_sandbox.backends._remote.RemoteImages`): a job of its own
        running ``image`` (``Sandbox.create(image, ...)``, the job's ``dockerImage``), in either ``mode``, with this
        backend's flavor and environment, an idle timeout of at least ``lifetime_s`` seconds (a foreground command
        is no activity to the service); its commands run as the image's user (root in the SWE-bench, SWE-smith and
        R2E-Gym images).

        Raises:
            ConfigurationError: the token is refused.
            InfrastructureError: as :meth:`create`.
        """
        labels = {str(k): str(v) for k, v in labels.items()}
        await self._ensure_namespace()
        await self._pacer.wait()
        return await self._create_dedicated(labels, image, max(self.idle_timeout_s, int(math.ceil(lifetime_s))))

    async def _create_dedicated(self, labels: dict[str, str], image: str,
                                idle_timeout_s: int | None = None) -> Sandbox:
        def attempt() -> Awaitable[Any]:
            abandoned = threading.Event()

            def make() -> Any:
                remote = self.sdk.Sandbox.create(
                    image, flavor=self.flavor, idle_timeout=idle_timeout_s or self.idle_timeout_s,
                    env=dict(self.env_vars),
                    namespace=self.namespace, forward_hf_token=False, labels=labels,
                    start_timeout=self.create_timeout_s, token=self.token)
                if abandoned.is_set():  # the caller gave up meanwhile: nobody holds this sandbox
                    self._kill_quietly(remote.id)
                    remote.close()
                    self.stats["orphans_deleted"] += 1
                return remote

            async def run() -> Any:
                try:
                    return await self._thread(make)
                except BaseException:
                    abandoned.set()
                    raise

            return run()

        remote = await self._retrying("create a sandbox", attempt, self.create_timeout_s + 60.0)
        return self._handle(remote, labels)

    async def _create_pooled(self, labels: dict[str, str]) -> Sandbox:
        def make() -> Any:
            with self._pool_lock:
                if self._pool is None:
                    name = f"trl-sandbox-{labels.get('trl-sandbox-run', 'run')}-{labels.get('trl-sandbox-rank', '0')}"
                    self._pool = self.sdk.SandboxPool(
                        self.image, flavor=self.flavor, sandboxes_per_host=self.sandboxes_per_host, warm_up=1,
                        max_hosts=self.max_hosts, name=name, idle_timeout=self.idle_timeout_s,
                        namespace=self.namespace, start_timeout=self.create_timeout_s, token=self.token)
                pool = self._pool
            return pool.create(env=dict(self.env_vars), idle_timeout=self.idle_timeout_s, forward_hf_token=False)

        remote = await self._retrying("create a pooled sandbox", lambda: self._thread(make),
                                      self.create_timeout_s + 60.0)
        self._pool_labels[str(remote.id)] = labels
        self._pooled[str(remote.id)] = remote
        handle = self._handle(remote, labels)
        try:
            # A pooled sandbox may write only under its private home: the harness lives there (see _write).
            result = await self._retrying(f"find the home of sandbox {remote.id}", lambda: self._thread(
                lambda: remote.run('printf %s "$HOME"', shell=True, check=False)), self.request_timeout_s)
            home = (result.stdout or "").strip()
            if result.exit_code != 0 or not home.startswith("/"):
                raise InfrastructureError(f"hf: pooled sandbox {remote.id} has no usable $HOME ({home[:100]!r})")
        except BaseException:
            with anyio.CancelScope(shield=True):
                try:
                    await self.delete(handle)
                except InfrastructureError:
                    pass
            raise
        self._homes[handle.id] = home.rstrip("/")
        handle.workdir = f"{home.rstrip('/')}/{self.workdir.strip('/').rpartition('/')[2] or 'trl-sandbox'}"
        return handle

    def _kill_quietly(self, job_id: str) -> None:
        try:
            self._api().cancel_job(job_id=job_id, namespace=self.namespace)
        except Exception:  # noqa: BLE001 - the idle timeout stops it later
            pass

    async def write_files(self, sandbox: Sandbox, files: Mapping[str, bytes]) -> None:
        """Write ``files`` under ``sandbox.workdir`` (``files.write``, one request per file; parents are made).

        Raises:
            InfrastructureError: a write failed after the retries, or the sandbox is gone.
        """
        remote = self._remote(sandbox)

        def write() -> None:
            for name, data in files.items():
                self._write(remote, f"{sandbox.workdir}/{name}", bytes(data))

        await self._retrying(f"upload files to sandbox {sandbox.id}", lambda: self._thread(write),
                             self.request_timeout_s)

    def _write(self, remote: Any, path: str, data: bytes) -> None:
        """Write one file (in a worker thread) with ``files.write``. A pooled sandbox's file API roots paths at the
        sandbox's private home (the SDK's docstring): ``path``, absolute as commands see it, is given relative to
        that home there."""
        home = self._homes.get(str(remote.id))
        if home and path.startswith(home + "/"):
            path = path[len(home):]
        remote.files.write(path, data)

    async def exec(
        self,
        sandbox: Sandbox,
        argv: Sequence[str],
        *,
        stdin: bytes = b"",
        timeout_s: float,
    ) -> ExecResult:
        """Run ``argv`` with ``Sandbox.run`` in ``sandbox.workdir``; see :meth:`Backend.exec`.

        ``stdin`` (a harness request: ASCII JSON) is given as the command's stdin (``Sandbox.run(stdin=...)``, a
        string the server writes to a pipe): the request never exists as a file the program could open. Other bytes
        (not ASCII, which the API's string might not carry intact) are written to a file named
        ``.trl-sandbox-requests/.trl-sandbox-stdin-*`` and redirected; the harness removes it, and verifies it is gone,
        before any code runs. The server kills the command's process group at ``ceil(timeout_s)`` seconds
        (``timed_out``); the client gives up ``exec_grace_s`` later.

        Raises:
            InfrastructureError: the sandbox did not answer in time, is gone, or the API failed after the retries.
        """
        remote = self._remote(sandbox)
        server_timeout = max(1, math.ceil(timeout_s))
        limit = self.output_limit_bytes
        start = time.monotonic()

        def run() -> ExecResult:
            command = shlex.join(list(argv))
            text = None
            if stdin and stdin.isascii():  # a request (ASCII JSON): a pipe, never a file the program could open
                text = stdin.decode("ascii")
            elif stdin:  # other bytes: a file the harness removes (written again on a retry: the last try removed it)
                path = f"{sandbox.workdir}/{REQUEST_DIR}/{STDIN_PREFIX}{uuid.uuid4().hex}"
                self._write(remote, path, bytes(stdin))
                command = redirected(argv, path)
            out, err = bytearray(), bytearray()
            cut = [False]

            def keep(buffer: bytearray) -> Callable[[str], None]:
                def add(text: str) -> None:
                    data = text.encode("utf-8", "surrogateescape")
                    room = limit - len(buffer)
                    if len(data) > room:
                        cut[0] = True
                    if room > 0:
                        buffer.extend(data[:room])
                return add

            result = remote.run(command, shell=True, cwd=sandbox.workdir, timeout=server_timeout, check=False,
                                stdin=text, capture_output=False, on_stdout=keep(out), on_stderr=keep(err))
            duration = time.monotonic() - start
            if result.timed_out:
                return ExecResult(None, bytes(out), bytes(err), duration, timed_out=True, output_truncated=cut[0])
            code = result.exit_code
            if code is None and result.signal:
                code = 128 + int(result.signal)
            return ExecResult(exit_code=None if code is None else int(code), stdout=bytes(out), stderr=bytes(err),
                              duration_s=duration, output_truncated=cut[0])

        return await self._retrying(f"run a command in sandbox {sandbox.id}", lambda: self._thread(run),
                                    timeout_s + self.exec_grace_s)

    async def open_process(self, sandbox: Sandbox, argv: Sequence[str], *, timeout_s: float) -> SandboxProcess:
        """Refused: the Sandbox API has no stdin stream for a running process (see the module docstring).

        Raises:
            ConfigurationError: always.
        """
        raise ConfigurationError(
            "the hf backend cannot keep an interpreter session (CodeEnvironment): huggingface_hub's Sandbox API "
            "gives a command its stdin only at the start, not as a stream; use the local, daytona or cwsandbox "
            "backend for sessions"
        )

    def _remote(self, sandbox: Sandbox) -> Any:
        """The SDK handle of ``sandbox`` (a dedicated sandbox found by :meth:`list` has none: it can only be
        deleted)."""
        if sandbox.data is None:
            raise InfrastructureError(f"hf: sandbox {sandbox.id} was listed, not created here: it can only be "
                                      "deleted")
        return sandbox.data

    async def delete(self, sandbox: Sandbox) -> None:
        """Delete ``sandbox``: cancel its job (dedicated), or remove it from its host (pool). Already gone is fine.

        Raises:
            InfrastructureError: the API could not be reached after the retries.
        """
        remote = sandbox.data
        if remote is not None and getattr(remote, "host_id", None):  # pooled: remove it from its host
            def remove() -> None:
                remote.kill()  # the SDK logs and swallows a failure, leaving the handle live: check it
                if not getattr(remote, "_killed", True):
                    raise self.sdk.errors.SandboxError(f"could not remove pooled sandbox {sandbox.id}")

            await self._retrying(f"delete sandbox {sandbox.id}", lambda: self._thread(remove), self.request_timeout_s)
            self._pool_labels.pop(sandbox.id, None)
            self._pooled.pop(sandbox.id, None)
            self._homes.pop(sandbox.id, None)
            return

        def cancel() -> None:
            try:
                self._api().cancel_job(job_id=sandbox.id, namespace=self.namespace)
            except Exception as exc:
                if _status(exc) != 404:
                    raise
            if remote is not None:
                remote.close()  # its HTTP client

        await self._retrying(f"delete sandbox {sandbox.id}", lambda: self._thread(cancel), self.request_timeout_s)

    async def list(self, labels: Mapping[str, str]) -> list[Sandbox]:
        """The namespace's live sandbox jobs (scheduling or running) whose labels include ``labels`` (the Jobs API
        filters), and in ``mode="pool"`` this process's pooled sandboxes that carry them.

        Raises:
            InfrastructureError: the API could not be reached after the retries.
        """
        wanted = {str(k): str(v) for k, v in labels.items()}
        await self._ensure_namespace()

        def find() -> list[Sandbox]:
            jobs = self._api().list_jobs(status=_LIVE_STAGES, labels=wanted, namespace=self.namespace)
            return [Sandbox(id=str(job.id), labels=dict(job.labels or {}), workdir=self.workdir,
                            python=[self.python], data=None) for job in jobs]

        found = await self._retrying("list sandboxes", lambda: self._thread(find), self.request_timeout_s)
        for sandbox_id, own in list(self._pool_labels.items()):
            if all(own.get(k) == v for k, v in wanted.items()):
                found.append(Sandbox(id=sandbox_id, labels=dict(own), workdir=self.workdir, python=[self.python],
                                     data=self._pooled.get(sandbox_id)))
        return found

    # -- errors and retries -----------------------------------------------------------------------------------------

    def _classify(self, exc: Exception) -> float | None:
        """429: after ``Retry-After``; connection errors and 5xx: the backoff; 401: a :class:`ConfigurationError`;
        the rest: not retried (an :class:`InfrastructureError` with a hint where one helps)."""
        if type(exc).__name__ == "OfflineModeIsEnabled":
            raise ConfigurationError("the hf backend needs the Hub, but HF_HUB_OFFLINE is set: unset it for the "
                                     "process that scores") from exc
        status = _status(exc)
        if status == 429:
            self.stats["rate_limited"] += 1
            return _retry_after(exc)
        if status in _RETRY_STATUSES or _is_connection_error(exc):
            return BACKOFF
        if status == 401:
            raise ConfigurationError(f"{_TOKEN_HINT} (the Hub refused the token: {describe(exc)})") from exc
        if status == 402:
            raise InfrastructureError(f"hf: no credits left for Jobs in namespace {self.namespace!r}: add a payment "
                                      f"method or credits on huggingface.co/settings/billing ({describe(exc)})") from exc
        if status == 403:
            raise InfrastructureError(f"hf: the Hub refused (403): the token needs the Jobs permission for namespace "
                                      f"{self.namespace!r}, or a quota is reached ({describe(exc)})") from exc
        return None

    async def _retrying(self, what: str, call: Callable[[], Awaitable[T]], deadline_s: float) -> T:
        """``await call()`` within ``deadline_s`` seconds, retried as :meth:`_classify` says (see
        :func:`~trl_sandbox.backends._remote.retrying`)."""
        return await retrying(call, what=what, backend="hf", deadline_s=deadline_s, max_retries=self.max_retries,
                              classify=self._classify, stats=self.stats)


def _status(exc: BaseException) -> int | None:
    """HTTP status of an SDK error: ``SandboxError.status_code``, or the response of an ``HfHubHTTPError`` (or of
    any ``httpx`` status error)."""
    value = getattr(exc, "status_code", None)
    if isinstance(value, int):
        return value
    response = getattr(exc, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) else None


def _retry_after(exc: BaseException) -> float:
    """Seconds from a 429's ``Retry-After`` header; 1 s when absent, at most 60 s."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    try:
        value = float(headers.get("retry-after", headers.get("Retry-After", "")))
    except (TypeError, ValueError, AttributeError):
        return 1.0
    return min(max(value, 0.0), 60.0)


def _is_connection_error(exc: BaseException) -> bool:
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True
    for module in ("httpx2", "httpx"):
        try:
            lib = __import__(module)
        except ImportError:
            continue
        if isinstance(exc, lib.TransportError):
            return True
    return "connection lost while running command" in str(exc)
