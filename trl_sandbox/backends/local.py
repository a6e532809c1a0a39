"""The ``local`` backend: isolated processes on this machine, no account needed (the default).

A local sandbox is a directory: ``{root_dir}/{id}/`` holds ``labels.json``, ``files/`` (what
:meth:`LocalBackend.write_files` wrote, read-only to executions) and ``runs/`` (one fresh scratch directory per
execution, removed when it ends). Every execution is a fresh process started by the trusted launcher
(``_launcher.py``), which puts it in new namespaces with a tmpfs scratch, joins the sandbox's cgroups, sets rlimits,
drops privileges, applies Landlock (``_landlock.py``) and seccomp (``_seccomp.py``) and runs it with a fixed minimal
environment. See :class:`LocalBackend` for the layers and docs/security.md for what each one holds.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import sys
import tempfile
import time
import uuid
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

import anyio

from ..errors import ConfigurationError, InfrastructureError, IsolationUnavailableError
from ..harness.archive import HARNESS_NAME, harness_files
from . import _cgroups, _landlock, _seccomp, _trees, _uids
from ._admission import HostAdmission, admission_dir
from ._cgroups import Cgroups
from ._executions import LAUNCHER, judge_request, run_launcher
from ._host import enter_root, leave_host, processes_of, release_host, rmtree
from ._judge_packages import JUDGE_PATH_ENV, copy_judge_packages
from ._layers import PATHS_PROBE, PROBE, layer_names, missing_layers, probe_problems, require_layers
from ._packages import DEFAULT_PACKAGES, PACKAGES_ENV, PACKAGES_PROBE, Readable, packages_problem, trainer_site_packages
from ._servers import ForkServers
from ._toolchains import Toolchains, request_language, toolchain_dirs
from .base import Backend, ExecResult, Leftover, Sandbox, SandboxProcess

logger = logging.getLogger(__name__)

#: The harness package's directory: the fork server imports it from there (see _forkserver._import_harness).
_HARNESS_PACKAGE = str(Path(__file__).resolve().parent.parent / "harness")
# What a sandboxed command sees as its environment: nothing from the host (no tokens, no proxies).
_BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONHASHSEED": "0",
    "PYTHONIOENCODING": "utf-8",
}
# Read-only to sandboxed code (with the interpreter's own prefixes): system binaries and shared libraries.
_SYSTEM_RO = ("/usr", "/lib", "/lib64", "/lib32", "/bin")
_DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")


#: Address space (bytes) a Java or JavaScript program's runtime may reserve: the JVM reserves its heap, class space
#: and thread stacks up front, V8 a 4 GiB pointer cage. Their writable memory is bounded by RLIMIT_DATA and the
#: memory cgroup, as every program's.
RUNTIME_ADDRESS_SPACE_BYTES = 16 << 30


class LocalBackend(Backend):
    """Runs each execution in a fresh, isolated process on this machine.

    Isolation layers, each detected at :meth:`start` and named in :meth:`describe` (see docs/security.md):

    - namespaces: new network (no interface up), PID (the code's first process is PID 1: at exit or timeout the
      kernel kills everything it started), IPC, UTS and mount namespaces; in a user namespace when not root;
    - identity: as root, an unprivileged uid of the sandbox's own (``61000 + n``, claimed host-wide: see
      :mod:`._uids`) with no groups and no-new-privs;
    - Landlock: read/execute only under the interpreter's and system library directories (never the files of an
      installed-package directory, but for the packages offered: see :mod:`._packages`), read the harness files,
      write only the execution's own scratch directory; no TCP; signals and abstract unix sockets scoped to the
      execution;
    - seccomp: no sockets (``socketpair`` allowed), ptrace, mount, namespaces, eBPF, io_uring, keyrings...;
    - resources: rlimits on CPU seconds, address space, file size, processes, open files; a per-sandbox memory
      and pids cgroup where cgroups are writable; ``nice`` 10; a wall-clock timeout; a scratch tmpfs of
      ``scratch_limit_bytes`` (or a size watchdog without a mount namespace); stdout/stderr cut at
      ``output_limit_bytes``;
    - a fixed minimal environment and a fresh scratch directory per execution.

    When the kernel refuses namespaces, the backend runs without them if Landlock (ABI >= 6) and seccomp hold
    the containment list instead (a subreaper then kills leftover processes); otherwise :meth:`start` raises
    :class:`~trl_sandbox.errors.IsolationUnavailableError` unless ``allow_weak_isolation`` is set.

    Args:
        root_dir: Where sandbox directories live. Default: ``{tempfile.gettempdir()}/trl-sandbox-{euid}`` (shared by
            the runs of this user: removed by the last one to close). A directory given here that existed before
            :meth:`start` is left in place.
        python: Interpreter that runs code inside the sandbox. Default: the first of the trainer's interpreter,
            its base interpreter and ``/usr/bin/python3`` that the sandbox user can run.
        site_packages: None (default): sandboxed Python gets the distributions ``packages`` of the trainer's
            environment, with what they require (numpy, pandas...: APPS's prelude and KodCode's tests use them),
            read-only, when its Python version is the trainer's (see :mod:`._packages`; a warning names the fix
            otherwise). False: the standard library only. True: ``packages`` as installed for the sandbox
            interpreter itself (``-I`` without ``-S``), for a sandbox interpreter of another version. Either way no
            other installed package is readable.
        packages: The distributions (names as pip knows them) offered to sandboxed Python, with what they require.
            Default: :data:`~trl_sandbox.backends._packages.DEFAULT_PACKAGES` (numpy, pandas, scipy, scikit-learn,
            sortedcontainers, sympy, networkx; those installed). trl-sandbox itself is never offered: it ships
            HumanEval's tests and solutions.
        memory_limit_bytes: Address-space limit per execution (bytes).
        output_limit_bytes: Cap on each of stdout and stderr per execution (bytes).
        file_size_limit_bytes: Largest file an execution may write (bytes).
        max_processes: Process/thread limit per sandbox uid (``RLIMIT_NPROC``).
        max_open_files: Open file descriptor limit (``RLIMIT_NOFILE``).
        scratch_limit_bytes: Size of the scratch directory (bytes): all files an execution writes.
        namespaces: None (default): use namespaces when the kernel allows them. False: never (tests the
            fallback layers).
        fork_server: True (default): with namespaces, each sandbox runs a fork server (``_forkserver.py``), a
            pre-started interpreter that forks every execution and applies every layer to it, and runs the
            trusted harness in the fork (about 1 ms of overhead instead of two interpreter starts). False: one
            launcher and interpreter per execution (the path also used without namespaces).
        allow_weak_isolation: Run without namespaces when the kernel refuses them (logs a warning). Default False:
            :meth:`start` raises :class:`~trl_sandbox.errors.IsolationUnavailableError` instead.
        max_host_executions: The most scoring executions at once on this host, shared by every local pool of the
            host (see :mod:`._admission`; :meth:`admit`). None (default): the host's core count (``os.cpu_count()``);
            0: no limit.
    """

    name = "local"
    shares_host_libraries = True  # its sandboxes run this machine's /usr and /lib, read-only

    def __init__(
        self,
        *,
        root_dir: str | os.PathLike[str] | None = None,
        python: str | None = None,
        site_packages: bool | None = None,
        packages: Sequence[str] | None = None,
        memory_limit_bytes: int = 1 << 30,
        output_limit_bytes: int = 1 << 20,
        file_size_limit_bytes: int = 64 << 20,
        max_processes: int = 64,
        max_open_files: int = 256,
        scratch_limit_bytes: int = 64 << 20,
        namespaces: bool | None = None,
        fork_server: bool = True,
        allow_weak_isolation: bool = False,
        max_host_executions: int | None = None,
    ) -> None:
        for label, value in (
            ("memory_limit_bytes", memory_limit_bytes),
            ("output_limit_bytes", output_limit_bytes),
            ("file_size_limit_bytes", file_size_limit_bytes),
            ("max_processes", max_processes),
            ("max_open_files", max_open_files),
            ("scratch_limit_bytes", scratch_limit_bytes),
        ):
            if not isinstance(value, int) or value <= 0:
                raise ConfigurationError(f"local backend: {label} must be a positive integer, got {value!r}")
        if packages is not None and (isinstance(packages, str) or not all(isinstance(p, str) for p in packages)):
            raise ConfigurationError(f"local backend: packages must be a list of distribution names, got {packages!r}")
        if sys.platform != "linux":
            raise IsolationUnavailableError("the local backend needs Linux namespaces; use a remote backend here")
        euid = os.geteuid()
        self._default_root = not root_dir
        self.root_dir = Path(root_dir or Path(tempfile.gettempdir()) / f"trl-sandbox-{euid}")
        self.python = python
        self.site_packages = site_packages
        self.packages = tuple(DEFAULT_PACKAGES if packages is None else packages)
        self.memory_limit_bytes = memory_limit_bytes
        self.output_limit_bytes = output_limit_bytes
        self.file_size_limit_bytes = file_size_limit_bytes
        self.max_processes = max_processes
        self.max_open_files = max_open_files
        self.scratch_limit_bytes = scratch_limit_bytes
        self.allow_weak_isolation = allow_weak_isolation
        if max_host_executions is None:
            max_host_executions = os.cpu_count() or 1
        if not isinstance(max_host_executions, int) or max_host_executions < 0:
            raise ConfigurationError(f"local backend: max_host_executions must be a non-negative integer or None, got "
                                     f"{max_host_executions!r}")
        self._admission = HostAdmission(admission_dir(), max_host_executions) if max_host_executions else None
        self._is_root = euid == 0
        self._namespaces = namespaces is not False
        self._landlock_abi = 0
        self._reads = Readable()
        self._made: list[Path] = []  # directories of the root this run removes when it leaves
        self._uids: dict[str, _uids.UidClaim] = {}
        self._seccomp = False
        self._cgroups = Cgroups({})
        self._started = False
        self._layers: list[str] = []
        self.fork_server = fork_server
        self._use_server = False  # decided at start(): fork_server and namespaces
        self._servers = ForkServers(self._server_launch)
        self._harness_ok: set[str] = set()
        self._judge_lib: Path | None = None
        self._leave: weakref.finalize | None = None
        self._toolchains = Toolchains(_BASE_ENV["PATH"], _SYSTEM_RO)
        #: The toolchains of other languages found, each looked up at its first completion: ``{"cpp": "g++ 12.2.0"}``.
        self.toolchains: dict[str, str] = self._toolchains.found

    # -- lifecycle -------------------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Detect the isolation layers, pick the sandbox interpreter and prove the layers with a probe execution.

        Raises:
            IsolationUnavailableError: the layers available cannot hold the containment list (and
                ``allow_weak_isolation`` is False), the probe reached the network or the host's files or ran as
                root, or no interpreter is usable by the sandbox user.
        """
        if self._started:
            return
        try:
            presence, created = enter_root(self.root_dir, private=self._default_root)
        except OSError as exc:
            raise ConfigurationError(f"local backend: cannot use {self.root_dir} as root_dir: {exc}") from exc
        if self._is_root:  # the uids of runs killed before they could release them
            await anyio.to_thread.run_sync(_uids.sweep)
        self._landlock_abi = _landlock.abi_version()
        self._seccomp = _seccomp.supported()
        self._cgroups = Cgroups.writable()
        if self._cgroups.bases:  # the owner records of runs killed before they made or after they removed their groups
            await anyio.to_thread.run_sync(_cgroups.sweep_records)
        self._judge_lib = await anyio.to_thread.run_sync(copy_judge_packages, self.root_dir)
        if self._judge_lib is not None:
            self._made.append(self._judge_lib)
        # Removed by aclose(); else when this backend is collected or Python exits.
        release = functools.partial(release_host, self._cgroups.remove_parents, self._uids)
        self._leave = weakref.finalize(self, leave_host, presence, self._default_root or created, self._made, release)
        extra_ro = toolchain_dirs(_BASE_ENV["PATH"], _SYSTEM_RO)  # no process: the versions wait for first use
        candidates = [self.python] if self.python else self._python_candidates()
        self.python = None
        errors: list[str] = []
        probe_sandbox = await self.create({"trl-sandbox-probe": "1"})
        try:
            for candidate in candidates:
                probe_sandbox.python = self._python_argv(candidate)
                paths, error = await self._probe(probe_sandbox, PATHS_PROBE, layers=False)
                if error and "unshare" in error:
                    self._namespaces = False
                    paths, error = await self._probe(probe_sandbox, PATHS_PROBE, layers=False)
                if error:
                    errors.append(f"{candidate}: {error}")
                    continue
                roots = sorted({*paths["prefixes"], *(p for p in _SYSTEM_RO if os.path.exists(p)), *extra_ro})
                self._reads = Readable(roots, [*trainer_site_packages(), *paths["site"]])
                if self._judge_lib is not None:
                    self._reads.readable.append(str(self._judge_lib))
                if self.site_packages is not False and self.packages:
                    search = paths["site"] if self.site_packages else trainer_site_packages()
                    await self._offer_packages(probe_sandbox, candidate, search)
                require_layers(missing_layers(self._landlock_abi, self._namespaces, self._seccomp, self._is_root),
                               self.allow_weak_isolation)
                info, error = await self._probe(probe_sandbox, PROBE, layers=True)
                if error:
                    errors.append(f"{candidate}: {error}")
                    continue
                self._check_probe(info)
                self.python = candidate
                break
        finally:
            await self.delete(probe_sandbox)
        if self.python is not None and self.site_packages is True and self.python != self._python_candidates()[0]:
            logger.warning("trl-sandbox local backend: site_packages=True offers sandboxed code the packages of "
                           "%s, not the trainer's (its interpreter %s cannot be run by the sandbox user); leave "
                           "site_packages unset to offer the trainer's packages read-only", self.python,
                           self._python_candidates()[0])
        if self.python is None:
            raise IsolationUnavailableError(
                f"no Python interpreter can be run by the sandbox user ({'; '.join(errors)}). Pass "
                "sandbox_backend_options={'python': '/path/to/python3'} with an interpreter outside any private "
                "home directory."
            )
        if self.fork_server and self._namespaces:
            await self._start_fork_servers()
        self._layers = layer_names(
            server=self._use_server, namespaces=self._namespaces, is_root=self._is_root, landlock_abi=self._landlock_abi,
            seccomp=self._seccomp, cgroups=self._cgroups.names(), memory_bytes=self.memory_limit_bytes,
            max_processes=self.max_processes, scratch_bytes=self.scratch_limit_bytes,
            output_bytes=self.output_limit_bytes, packages=self._reads.offered)
        self._started = True
        if self._admission is not None:
            self._admission.open()

    async def _start_fork_servers(self) -> None:
        """Switch to fork servers, and prove their layers with the same probe; fall back to one launcher per
        execution (with a warning) when the server cannot start here (e.g. a sandbox Python older than 3.9)."""
        self._use_server = True
        try:
            sandbox = await self.create({"trl-sandbox-probe": "1"})
        except InfrastructureError as exc:
            logger.warning("trl-sandbox local backend: fork server unavailable (%s); one interpreter per execution",
                           exc)
            self._use_server = False
            return
        try:
            info, error = await self._probe(sandbox, PROBE, layers=True)
            if error:
                raise IsolationUnavailableError(f"the local backend's fork server failed its probe: {error}")
            self._check_probe(info)
        finally:
            await self.delete(sandbox)

    def describe(self) -> str:
        """One line naming the active isolation layers (logged at pool start) and the toolchains looked up so far."""
        layers = ", ".join(self._layers) if self._layers else "not started"
        admission = (f"at most {self._admission.slots} executions at once on this host, shared by its pools"
                     if self._admission is not None else "no host-wide limit")
        return (f"local backend (python {self.python}): {layers}; {admission}; other languages: "
                f"{self._toolchains.describe()}")

    def admit(self, on_wait: Callable[[float | None], None] | None = None) -> contextlib.AbstractAsyncContextManager:
        """A slot of the host-wide admission limit, taken in turn with other processes (see :mod:`._admission`)."""
        return self._admission.admit(on_wait) if self._admission is not None else contextlib.nullcontext()

    def _python_candidates(self) -> list[str]:
        seen: list[str] = []
        for path in (sys.executable, getattr(sys, "_base_executable", None), "/usr/bin/python3"):
            if path and os.path.exists(path):
                real = os.path.realpath(path)
                if real not in seen:
                    seen.append(real)
        return seen

    def _python_argv(self, python: str) -> list[str]:
        return [python, "-I"] if self.site_packages else [python, "-I", "-S"]

    async def _probe(self, sandbox: Sandbox, code: str, *, layers: bool) -> tuple[Any, str | None]:
        try:
            result = await self.exec(sandbox, [*sandbox.python, "-c", code], timeout_s=20, _layers=layers)
        except InfrastructureError as exc:
            return None, str(exc)
        if result.exit_code != 0:
            return None, f"probe exited with {result.exit_code}: {result.stderr.decode(errors='replace')[-500:]}"
        try:
            return json.loads(result.stdout), None
        except ValueError:
            return None, f"probe printed {result.stdout[:200]!r}"

    def _check_probe(self, info: dict | None) -> None:
        expected = {*self._env(), "HOME", "TMPDIR", "PWD", "LC_CTYPE", "TRL_SANDBOX_DENY_PROCESSES"}
        problems = probe_problems(info, self._landlock_abi, expected)
        if problems:
            raise IsolationUnavailableError("the local backend's isolation probe failed: " + "; ".join(problems))

    async def aclose(self) -> None:
        """Stop the fork servers of sandboxes not deleted (their directories stay, as the contract says); remove the
        judge's package copy, and the root directory and parent cgroups unless another live run of this host uses them."""
        await self._servers.stop_all()
        if self._admission is not None:
            self._admission.close()
        if self._leave is not None:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self._leave)
            self._judge_lib = None

    def _env(self) -> dict[str, str]:
        """The fixed environment of every execution (plus HOME/TMPDIR): where the judge finds pytest, if copied."""
        env = dict(_BASE_ENV)
        if self._judge_lib is not None:
            env[JUDGE_PATH_ENV] = str(self._judge_lib)
        if self._reads.view is not None:
            env[PACKAGES_ENV] = str(self._reads.view)
        return env

    async def _offer_packages(self, sandbox: Sandbox, python: str, search: list[str]) -> None:
        """Offer the distributions :attr:`packages` installed in the directories ``search`` (and what they require) to
        sandboxed code, read-only (see :mod:`._packages`), when ``python`` can use them; otherwise log why not and
        how to fix it."""
        view = await anyio.to_thread.run_sync(self._reads.offer, self.root_dir, self.packages, search)
        if view is None:
            return
        self._made.append(view)
        info, error = await self._probe(sandbox, PACKAGES_PROBE, layers=False)
        problem = packages_problem(info, error, python, same_version=not self.site_packages)
        if problem is not None:
            logger.warning("trl-sandbox local backend: sandboxed code gets the standard library only, not the "
                           "packages %s: %s. site_packages=False silences this.", ", ".join(self.packages), problem)
            self._reads.withdraw()
            self._made.remove(view)
            await anyio.to_thread.run_sync(rmtree, view)

    # -- contract --------------------------------------------------------------------------------------------------

    async def create(self, labels: Mapping[str, str]) -> Sandbox:
        """Create a sandbox directory with its labels. Fast: no process is started.

        Raises:
            InfrastructureError: the directory could not be created.
        """
        sandbox_id = f"local-{uuid.uuid4().hex[:16]}"
        path = self.root_dir / sandbox_id
        try:
            self.root_dir.mkdir(parents=True, exist_ok=True)
            path.mkdir(mode=0o711)
            (path / "files").mkdir(mode=0o755)
            (path / "runs").mkdir(mode=0o711)
            os.chmod(path, 0o711)
            os.chmod(path / "runs", 0o711)
            os.chmod(path / "files", 0o755)
            record = {"id": sandbox_id, "labels": dict(labels), "created": time.time(), "pid": os.getpid()}
            (path / "labels.json").write_text(json.dumps(record))
        except OSError as exc:
            raise InfrastructureError(f"local backend: cannot create sandbox directory {path}: {exc}") from exc
        self._cgroups.create(sandbox_id, self.memory_limit_bytes + self.scratch_limit_bytes + (64 << 20),
                             self.max_processes)
        sandbox = self._handle(sandbox_id, dict(labels))
        if self._is_root:
            try:
                self._uids[sandbox_id] = await anyio.to_thread.run_sync(_uids.claim, int(sandbox_id[6:], 16))
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await self.delete(sandbox)
                raise
        if self._use_server:
            try:
                await self._servers.start(sandbox)
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await self.delete(sandbox)
                raise
        return sandbox

    def _server_launch(self, sandbox: Sandbox) -> tuple[list[str], dict]:
        """The launcher command and config (without the socket descriptors) of ``sandbox``'s fork server."""
        rlimits = self._rlimits(1.0)
        del rlimits["cpu"]  # per execution, from its timeout
        server: dict[str, Any] = {
            "harness_path": _HARNESS_PACKAGE,
            "runs": str(Path(sandbox.data) / "runs"),
            "scratch_size": self.scratch_limit_bytes,
            "uid": self._uid(sandbox) if self._is_root else os.getuid(),
            "gid": self._uid(sandbox) if self._is_root else os.getgid(),
            "root": self._is_root,
            "seccomp": self._seccomp,
            "env": self._env(),
            "rlimits": rlimits,
            "worker_group": self._cgroups.worker_group(sandbox.id),
        }
        if self._landlock_abi:
            server["landlock"] = self._reads.landlock(self._landlock_abi, sandbox.workdir, _DEVICES)
        cfg = {"server": server, "namespaces": True, "userns": not self._is_root,
               "cgroups": self._cgroups.procs_files(sandbox.id)}
        assert self.python is not None
        return [*self._python_argv(self.python), LAUNCHER], cfg

    def _handle(self, sandbox_id: str, labels: dict[str, str]) -> Sandbox:
        python = self._python_argv(self.python) if self.python else []
        return Sandbox(
            id=sandbox_id,
            labels=labels,
            workdir=str(self.root_dir / sandbox_id / "files"),
            python=python,
            data=self.root_dir / sandbox_id,
        )

    def _uid(self, sandbox: Sandbox) -> int:
        """``sandbox``'s uid (as root), claimed in the host's registry when it was created (or now, for a sandbox
        of another process that this one executes in).

        Raises:
            InfrastructureError: no uid is free on this host.
        """
        claim = self._uids.get(sandbox.id)
        if claim is None:
            claim = self._uids[sandbox.id] = _uids.claim(int(sandbox.id.rsplit("-", 1)[-1], 16))
        return claim.uid

    async def write_files(self, sandbox: Sandbox, files: Mapping[str, bytes]) -> None:
        """Write ``files`` under ``sandbox.workdir`` (readable, not writable, by executions).

        Raises:
            InfrastructureError: the sandbox is gone, or a path is absolute or leaves the sandbox.
        """
        base = Path(sandbox.workdir)
        if not base.is_dir():
            raise InfrastructureError(f"local backend: sandbox {sandbox.id} does not exist")
        for name, content in files.items():
            rel = PurePosixPath(name)
            if rel.is_absolute() or ".." in rel.parts:
                raise InfrastructureError(f"local backend: refusing to write outside the sandbox: {name!r}")
            target = base.joinpath(*rel.parts)
            try:
                target.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
                target.write_bytes(content)
                os.chmod(target, 0o644)
            except OSError as exc:
                raise InfrastructureError(f"local backend: writing {name} into {sandbox.id} failed: {exc}") from exc
            if name == HARNESS_NAME:
                # The fork server runs its own preloaded copy of the harness when the sandbox's is identical.
                if content == harness_files()[HARNESS_NAME]:
                    self._harness_ok.add(sandbox.id)
                else:
                    self._harness_ok.discard(sandbox.id)

    async def exec(
        self,
        sandbox: Sandbox,
        argv: Sequence[str],
        *,
        stdin: bytes = b"",
        timeout_s: float,
        _layers: bool = True,
    ) -> ExecResult:
        """Run ``argv`` isolated, in a fresh scratch directory, for at most ``timeout_s`` seconds.

        Raises:
            InfrastructureError: the sandbox is gone, the launcher could not start or isolate the command, or the
                launcher itself stopped answering.
        """
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        harness = list(argv) == [*sandbox.python, f"{sandbox.workdir}/{HARNESS_NAME}"]
        if harness:
            language = request_language(stdin)
            if language is not None and language not in self._toolchains.probed:
                new = await self._toolchains.look_up(language, self._reads.readable)
                if new:
                    self._reads.widen(new)
                    self._servers.outdate()
        server = await self._servers.current(sandbox)
        if server is not None:
            if harness and sandbox.id in self._harness_ok:
                return await judge_request(server, stdin, timeout_s, self.output_limit_bytes,
                                           lambda: self._cgroups.oom_kills(sandbox.id))
            request = {"argv": list(argv), "timeout_s": timeout_s}
            return await server.exec(request, stdin, timeout_s, self.output_limit_bytes)
        runs = Path(sandbox.data) / "runs"
        if not runs.is_dir():
            raise InfrastructureError(f"local backend: sandbox {sandbox.id} does not exist")
        cgroups = self._cgroups.procs_files(sandbox.id) if _layers else []  # before the scratch: raises when gone
        try:
            scratch = Path(tempfile.mkdtemp(dir=runs))
        except OSError as exc:
            raise InfrastructureError(f"local backend: cannot create scratch directory: {exc}") from exc
        uid = gid = None
        if self._is_root:
            uid = gid = self._uid(sandbox)
            os.chown(scratch, uid, gid)
        os.chmod(scratch, 0o700)
        cfg = {
            "argv": list(argv),
            "cwd": str(scratch),
            "env": {**self._env(), "HOME": str(scratch), "TMPDIR": str(scratch)},
            "timeout_s": timeout_s,
            "rlimits": self._rlimits(timeout_s),
            "uid": uid,
            "gid": gid,
            "namespaces": self._namespaces,
            "userns": self._namespaces and not self._is_root,
            "nice": 10,
        }
        if self._namespaces:
            cfg["scratch_tmpfs"] = {"size": self.scratch_limit_bytes, "inodes": 4096}
        else:
            cfg["scratch_watchdog"] = self.scratch_limit_bytes
            if not self._is_root and "pids" not in self._cgroups.bases:
                # The process limit is per uid, shared with the trainer: allow only what exists plus the harness's
                # own worker, and forbid the code to create processes at all (seccomp in the worker).
                cfg["env"]["TRL_SANDBOX_DENY_PROCESSES"] = "1"
                nproc = processes_of(os.getuid()) + self.max_processes
                cfg["rlimits"]["nproc"] = [nproc, nproc]
        if _layers:
            if self._landlock_abi:
                cfg["landlock"] = self._reads.landlock(self._landlock_abi, sandbox.workdir, _DEVICES)
            cfg["seccomp"] = self._seccomp
            cfg["cgroups"] = cgroups
        try:
            return await run_launcher(cfg, stdin, timeout_s, self.output_limit_bytes, self.scratch_limit_bytes)
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(rmtree, scratch)

    #: Repository tasks: the image from this host's cache, a command in a fresh overlay tree of it (see :mod:`._trees`).
    repo_image, exec_in_image = _trees.repo_image, _trees.exec_in_image

    async def open_process(self, sandbox: Sandbox, argv: Sequence[str], *, timeout_s: float) -> SandboxProcess:
        """Start ``argv`` as a long-lived execution of ``sandbox``'s fork server, with the same layers as
        :meth:`exec` (its own PID namespace, Landlock scope, slot and uid); the server kills it after ``timeout_s``.

        Raises:
            ConfigurationError: the sandbox has no fork server (``fork_server=False``, or no namespaces).
            InfrastructureError: the sandbox is gone.
        """
        server = await self._servers.current(sandbox)
        if server is None:
            raise ConfigurationError("interpreter sessions need the local backend's fork server (fork_server=true, "
                                     "with namespaces)")
        request = {"argv": list(argv), "timeout_s": timeout_s}
        if list(argv) == [*sandbox.python, f"{sandbox.workdir}/{HARNESS_NAME}", "session"]:
            request["session"] = True  # forked from the server's interpreter, which has the harness loaded
        return await server.open_process(request)

    def _rlimits(self, timeout_s: float) -> dict[str, list[int]]:
        cpu = int(timeout_s) + 1
        return {
            "cpu": [cpu, cpu + 1],
            # Address space: the limit, except that the harness lets a Java or JavaScript program's runtime reserve
            # up to the hard limit (the JVM's and V8's reservations are not memory); their writable memory stays
            # under RLIMIT_DATA. The harness lowers the hard limit to the soft one before it runs Python code, and
            # gives C, C++ and Rust programs the soft one (see trl_sandbox.harness.native).
            "as": [self.memory_limit_bytes, max(self.memory_limit_bytes, RUNTIME_ADDRESS_SPACE_BYTES)],
            "data": [self.memory_limit_bytes, self.memory_limit_bytes],
            "fsize": [self.file_size_limit_bytes, self.file_size_limit_bytes],
            "nproc": [self.max_processes, self.max_processes],
            "nofile": [self.max_open_files, self.max_open_files],
            "core": [0, 0],
        }

    async def delete(self, sandbox: Sandbox) -> None:
        """Stop the sandbox's fork server (killing running executions) and delete its directory (and anything an
        execution left). Missing sandboxes are ignored. From its first step, no execution starts on the sandbox."""
        await self._servers.delete(sandbox.id)
        self._harness_ok.discard(sandbox.id)
        path = self.root_dir / sandbox.id
        if path.exists():
            await anyio.to_thread.run_sync(rmtree, path)
        await anyio.to_thread.run_sync(self._cgroups.delete, sandbox.id)
        claim = self._uids.pop(sandbox.id, None)
        if claim is not None:  # after the server is stopped: no process of the sandbox holds the uid any more
            claim.release()

    async def list(self, labels: Mapping[str, str]) -> list[Sandbox]:
        """Return the sandboxes under ``root_dir`` whose labels include ``labels``."""
        found = []
        if not self.root_dir.is_dir():
            return found
        for record_path in sorted(self.root_dir.glob("*/labels.json")):
            try:
                record = json.loads(record_path.read_text())
            except (OSError, ValueError):
                continue
            have = record.get("labels", {})
            if all(have.get(k) == v for k, v in labels.items()):
                found.append(self._handle(record["id"], have))
        return found

    async def leftovers(self, *, older_than_s: float | None = None) -> list[Leftover]:
        """The cgroups of sandboxes with no directory in ``root_dir`` whose run is over (see :mod:`._cgroups`)."""
        found = await anyio.to_thread.run_sync(_cgroups.orphans_beside, self.root_dir, older_than_s)
        return [Leftover(", ".join(map(str, o.groups)), o.reason, o) for o in found]

    async def remove_leftover(self, leftover: Leftover) -> None:
        """Remove an orphaned sandbox's cgroups (killing what still runs in them, when their run recorded them).

        Raises:
            InfrastructureError: a group stays (see :func:`._cgroups.remove_orphan`).
        """
        await anyio.to_thread.run_sync(_cgroups.remove_orphan, leftover.data)

