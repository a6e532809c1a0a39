"""The ``local`` backend: isolated processes on this machine, no account needed (the default).

A local sandbox is a directory: ``{root_dir}/{id}/`` holds ``labels.json``, ``files/`` (what
:meth:`LocalBackend.write_files` wrote, read-only to executions) and ``runs/`` (one fresh scratch directory per
execution, removed when it ends). Every execution is a fresh process started by the trusted launcher
(``_launcher.py``), which puts it in new namespaces with a tmpfs scratch, joins the sandbox's cgroups, sets rlimits,
drops privileges, applies Landlock (``_landlock.py``) and seccomp (``_seccomp.py``) and runs it with a fixed minimal
environment. See :class:`LocalBackend` for the layers and docs/security.md for what each one holds.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import uuid
import weakref
from collections.abc import Mapping, Sequence
from typing import Any
from pathlib import Path, PurePosixPath

import anyio
from anyio.abc import ByteReceiveStream

from ..errors import ConfigurationError, InfrastructureError, IsolationUnavailableError
from ..lifecycle import process_alive
from ..tasks import HARNESS_FILES, HARNESS_NAME
from . import _landlock, _seccomp
from .base import Backend, ExecResult, Sandbox, SandboxProcess

logger = logging.getLogger(__name__)

_LAUNCHER = str(Path(__file__).with_name("_launcher.py"))
_HARNESS_SOURCE = str(Path(__file__).parent.parent / "_harness.py")
_SANDBOX_UID_BASE = 61000
_SANDBOX_UID_SPAN = 20000
# What a sandboxed command sees as its environment: nothing from the host (no tokens, no proxies).
_BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONHASHSEED": "0",
    "PYTHONIOENCODING": "utf-8",
}
_PROBE = (
    "import errno, json, os, socket\n"
    "r = {'uid': os.getuid(), 'env': sorted(os.environ)}\n"
    "try:\n"
    "    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
    "    s.settimeout(1)\n"
    "    s.connect(('127.0.0.1', 9))\n"
    "    r['net'] = 'connected'\n"
    "except OSError as e:\n"
    "    blocked = (errno.ENETUNREACH, errno.EPERM, errno.EACCES)\n"
    "    r['net'] = 'blocked' if e.errno in blocked else errno.errorcode.get(e.errno, str(e))\n"
    "try:\n"
    "    os.listdir('/tmp')\n"
    "    r['fs'] = 'readable'\n"
    "except OSError:\n"
    "    r['fs'] = 'blocked'\n"
    "print(json.dumps(r))\n"
)
_PATHS_PROBE = (
    "import json, os, sys\n"
    "print(json.dumps(sorted({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix,\n"
    "    sys.base_exec_prefix, os.path.dirname(sys.executable))})))\n"
)
# Read-only to sandboxed code (with the interpreter's own prefixes): system binaries and shared libraries.
_SYSTEM_RO = ("/usr", "/lib", "/lib64", "/lib32", "/bin")
_DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")
_CGROUP_V1 = Path("/sys/fs/cgroup")
# Seconds the host waits past an execution's own timeout before it kills the launcher itself.
_HOST_GRACE_S = 2.0
# Seconds a fork server may take to start (import and prepare) and to stop.
_SERVER_START_S = 60.0
_SERVER_STOP_S = 5.0


#: Address space (bytes) a Java or JavaScript program's runtime may reserve: the JVM reserves its heap, class space
#: and thread stacks up front, V8 a 4 GiB pointer cage. Their writable memory is bounded by RLIMIT_DATA and the
#: memory cgroup, as every program's.
RUNTIME_ADDRESS_SPACE_BYTES = 16 << 30
#: Environment variable naming the judge's copy of pytest (see :func:`_copy_judge_packages`).
JUDGE_PATH_ENV = "TRL_SANDBOX_JUDGE_PATH"
#: The distributions pytest runs with (pure Python): the judge imports them to run KodCode's test files.
_JUDGE_DISTRIBUTIONS = ("pytest", "pluggy", "iniconfig", "packaging", "pygments", "exceptiongroup", "tomli")


def _detect_toolchains() -> tuple[dict[str, str], list[str]]:
    """The compilers and runtimes of :data:`trl_sandbox.languages.LANGUAGES` on the sandboxes' ``PATH``: ``({language:
    "tool version"}, extra read-only directories they need)``. The JDK's ``conf`` files link into ``/etc`` (its
    ``java.security``), which Landlock would otherwise hide; nothing else of ``/etc`` becomes readable."""
    from ..languages import LANGUAGES

    found: dict[str, str] = {}
    extra: set[str] = set()
    path = _BASE_ENV["PATH"]
    for lang in LANGUAGES.values():
        if not lang.native:
            continue
        tools = [shutil.which(name, path=path) for name in lang.toolchain]
        if not all(tools):
            continue
        tool = str(tools[0])
        try:
            # The JVM writes /tmp/hsperfdata_<user> unless told not to: this check leaves nothing behind.
            argv = [tool, "-J-XX:-UsePerfData", "-version"] if lang.name == "java" else [tool, "--version"]
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=10, env={"PATH": path, "LC_ALL": "C"},
                                  check=False)
            first = (proc.stdout or proc.stderr).strip().splitlines()[0] if (proc.stdout or proc.stderr) else ""
        except (OSError, subprocess.SubprocessError):
            continue
        version = re.search(r"\d+(?:\.\d+)+", first)
        found[lang.name] = f"{os.path.basename(tool)} {version.group(0) if version else '?'}"
        if lang.name == "java":
            conf = Path(os.path.realpath(tool)).parent.parent / "conf"
            for file in conf.rglob("*") if conf.is_dir() else ():
                real = os.path.realpath(file)
                if not real.startswith(tuple(p + "/" for p in _SYSTEM_RO)):
                    extra.add(os.path.dirname(real))
    top = sorted(extra)
    return found, [d for d in top if not any(d.startswith(o + "/") for o in top)]


def _copy_judge_packages(root_dir: Path) -> Path | None:
    """Copy this interpreter's pytest (and the distributions it imports) into a directory of ``root_dir`` that
    sandboxes may read, for the judge to import (pytest-file tasks): the sandbox's interpreter may not see this one's
    site-packages (another interpreter, or a home directory the sandbox user cannot enter). Only the judge adds it to
    its path; the program never does. Returns None when pytest is not installed here."""
    from importlib import metadata

    sources: dict[str, Path] = {}
    for name in _JUDGE_DISTRIBUTIONS:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        for file in dist.files or ():
            top = file.parts[0]
            if top.endswith((".dist-info", ".egg-info")) or top in ("..", "__pycache__", "bin"):
                continue
            if len(file.parts) == 1 and not top.endswith(".py"):
                continue
            sources.setdefault(top, Path(dist.locate_file(top)))
    for stale in root_dir.glob("judge-lib-*"):  # copies of processes that were killed before closing
        pid = stale.name.split("-")[2]
        if pid.isdigit() and not process_alive(int(pid)):
            _rmtree(stale)
    if "pytest" not in sources:
        return None
    target = root_dir / f"judge-lib-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        target.mkdir(mode=0o755)
        for top, source in sources.items():
            if source.is_dir():
                shutil.copytree(source, target / top, ignore=shutil.ignore_patterns("__pycache__"))
            elif source.is_file():
                shutil.copy2(source, target / top)
        # The file the judge points pytest at (its test module is made in memory: see _harness._pytest_in_child).
        (target / "test_solution.py").write_text("# trl-sandbox: the judge's pytest runs the task's tests from memory\n")
        for path in [target, *target.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
    except OSError as exc:
        logger.warning("trl-sandbox local backend: cannot copy pytest for the judge (%s): pytest-file tasks will need "
                       "pytest in the sandbox's Python", exc)
        _rmtree(target)
        return None
    return target


def _rmtree(path: Path) -> None:
    """Remove ``path`` even when sandboxed code left directories without write or search permission."""

    def onerror(func, p, _exc):  # noqa: ANN001 - shutil callback signature
        try:
            parent = os.path.dirname(p)
            os.chmod(parent, stat.S_IRWXU)
            if os.path.isdir(p) and not os.path.islink(p):
                os.chmod(p, stat.S_IRWXU)
            func(p)
        except OSError:
            pass

    shutil.rmtree(path, onerror=onerror)


class LocalBackend(Backend):
    """Runs each execution in a fresh, isolated process on this machine.

    Isolation layers, each detected at :meth:`start` and named in :meth:`describe` (see docs/security.md):

    - namespaces: new network (no interface up), PID (the code's first process is PID 1: at exit or timeout the
      kernel kills everything it started), IPC, UTS and mount namespaces; in a user namespace when not root;
    - identity: as root, an unprivileged per-sandbox uid (``61000 + n``) with no groups and no-new-privs;
    - Landlock: read/execute only under the interpreter's and system library directories, read the harness files,
      write only the scratch directory; no TCP; signals and abstract unix sockets scoped to the sandbox;
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
        root_dir: Where sandbox directories live. Default: ``{tempfile.gettempdir()}/trl-sandbox-{euid}``.
        python: Interpreter that runs code inside the sandbox. Default: the first of the trainer's interpreter,
            its base interpreter and ``/usr/bin/python3`` that the sandbox user can run.
        site_packages: When False (default), sandboxed Python starts with ``-I -S``: no site-packages, faster
            start. When True, ``-I`` only, so installed packages (numpy...) can be imported.
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
    """

    name = "local"

    def __init__(
        self,
        *,
        root_dir: str | os.PathLike[str] | None = None,
        python: str | None = None,
        site_packages: bool = False,
        memory_limit_bytes: int = 1 << 30,
        output_limit_bytes: int = 1 << 20,
        file_size_limit_bytes: int = 64 << 20,
        max_processes: int = 64,
        max_open_files: int = 256,
        scratch_limit_bytes: int = 64 << 20,
        namespaces: bool | None = None,
        fork_server: bool = True,
        allow_weak_isolation: bool = False,
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
        if sys.platform != "linux":
            raise IsolationUnavailableError("the local backend needs Linux namespaces; use a remote backend here")
        euid = os.geteuid()
        self.root_dir = Path(root_dir or Path(tempfile.gettempdir()) / f"trl-sandbox-{euid}")
        self.python = python
        self.site_packages = site_packages
        self.memory_limit_bytes = memory_limit_bytes
        self.output_limit_bytes = output_limit_bytes
        self.file_size_limit_bytes = file_size_limit_bytes
        self.max_processes = max_processes
        self.max_open_files = max_open_files
        self.scratch_limit_bytes = scratch_limit_bytes
        self.allow_weak_isolation = allow_weak_isolation
        self._is_root = euid == 0
        self._namespaces = namespaces is not False
        self._landlock_abi = 0
        self._landlock_ro: list[str] = []
        self._seccomp = False
        self._cgroups: dict[str, Path] = {}
        self._started = False
        self._layers: list[str] = []
        self.fork_server = fork_server
        self._use_server = False  # decided at start(): fork_server and namespaces
        self._servers: dict[str, _ForkServer] = {}
        self._harness_ok: set[str] = set()
        self._judge_lib: Path | None = None
        #: Languages other than Python whose toolchain the sandboxes have (found at :meth:`start`): ``{"cpp":
        #: "g++ 12.2.0", ...}``.
        self.toolchains: dict[str, str] = {}

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
        self.root_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root_dir, 0o711)
        self._landlock_abi = _landlock.abi_version()
        self._seccomp = _seccomp.supported()
        self._cgroups = self._writable_cgroups()
        self._judge_lib = await anyio.to_thread.run_sync(_copy_judge_packages, self.root_dir)
        self.toolchains, toolchain_dirs = await anyio.to_thread.run_sync(_detect_toolchains)
        if self._judge_lib is not None:  # removed by aclose(); else when this backend is collected or Python exits
            self._judge_lib_finalizer = weakref.finalize(self, _rmtree, self._judge_lib)
        candidates = [self.python] if self.python else self._python_candidates()
        self.python = None
        errors: list[str] = []
        probe_sandbox = await self.create({"trl-sandbox-probe": "1"})
        try:
            for candidate in candidates:
                probe_sandbox.python = self._python_argv(candidate)
                paths, error = await self._probe(probe_sandbox, _PATHS_PROBE, layers=False)
                if error and "unshare" in error:
                    self._namespaces = False
                    paths, error = await self._probe(probe_sandbox, _PATHS_PROBE, layers=False)
                if error:
                    errors.append(f"{candidate}: {error}")
                    continue
                self._landlock_ro = sorted({*paths, *(p for p in _SYSTEM_RO if os.path.exists(p)), *toolchain_dirs})
                if self._judge_lib is not None:
                    self._landlock_ro.append(str(self._judge_lib))
                self._require_layers()
                info, error = await self._probe(probe_sandbox, _PROBE, layers=True)
                if error:
                    errors.append(f"{candidate}: {error}")
                    continue
                self._check_probe(info)
                self.python = candidate
                break
        finally:
            await self.delete(probe_sandbox)
        if self.python is None:
            raise IsolationUnavailableError(
                f"no Python interpreter can be run by the sandbox user ({'; '.join(errors)}). Pass "
                "sandbox_backend_options={'python': '/path/to/python3'} with an interpreter outside any private "
                "home directory."
            )
        if self.fork_server and self._namespaces:
            await self._start_fork_servers()
        self._layers = self._layer_names()
        self._started = True

    async def _start_fork_servers(self) -> None:
        """Switch to fork servers, and prove their layers with the same probe; fall back to one launcher per
        execution (with a warning) when the server cannot start here (e.g. a sandbox Python older than 3.9)."""
        self._use_server = True
        try:
            sandbox = await self.create({"trl-sandbox-probe": "1"})
        except InfrastructureError as exc:
            logger.warning("trl-sandbox local backend: fork server unavailable (%s); one interpreter per execution", exc)
            self._use_server = False
            return
        try:
            info, error = await self._probe(sandbox, _PROBE, layers=True)
            if error:
                raise IsolationUnavailableError(f"the local backend's fork server failed its probe: {error}")
            self._check_probe(info)
        finally:
            await self.delete(sandbox)

    def _require_layers(self) -> None:
        """Refuse (unless weak isolation is allowed) when the available layers cannot hold the containment list."""
        missing = []
        if self._landlock_abi < 1:
            missing.append("Landlock (host files outside the scratch directory would be reachable)")
        if not self._namespaces:
            if not self._seccomp and self._landlock_abi < 4:
                missing.append("network isolation (no network namespace, seccomp or Landlock TCP rules)")
            if not self._is_root and self._landlock_abi < 6:
                missing.append("signal isolation (no PID namespace, no Landlock signal scoping, same uid)")
        if missing and not self.allow_weak_isolation:
            raise IsolationUnavailableError(
                "the local backend cannot isolate code on this machine: missing "
                + "; ".join(missing)
                + ". Run as root or enable unprivileged user namespaces (sysctl user.max_user_namespaces), use a "
                "kernel with Landlock (>= 6.12 for every layer), use a remote backend, or pass "
                "sandbox_allow_weak_isolation=True to run anyway."
            )
        if missing:
            logger.warning("trl-sandbox local backend: WEAK isolation, missing %s", "; ".join(missing))

    def _layer_names(self) -> list[str]:
        layers = []
        if self._use_server:
            layers.append("fork server")
        if self._namespaces:
            layers.append("namespaces net+pid+ipc+uts+mnt" + ("+user" if not self._is_root else ""))
        else:
            layers.append("NO namespaces (subreaper kill, scratch size watchdog)")
        layers.append("uid 61000+n, no groups, no-new-privs" if self._is_root else "own uid, no-new-privs")
        if self._landlock_abi:
            layers.append(_landlock.describe(self._landlock_abi))
        if self._seccomp:
            layers.append("seccomp deny-list")
        if self._cgroups:
            layers.append("cgroup " + "+".join(sorted(self._cgroups)))
        layers += [
            f"rlimits cpu/as=data={self.memory_limit_bytes}/fsize/nproc={self.max_processes}/nofile",
            f"scratch {'tmpfs' if self._namespaces else 'watchdog'} {self.scratch_limit_bytes} B",
            "empty env",
            "nice 10",
            "wall-clock kill",
            f"output cap {self.output_limit_bytes} B",
        ]
        return layers

    @staticmethod
    def _writable_cgroups() -> dict[str, Path]:
        """cgroup v1 ``memory`` and ``pids`` hierarchies this process may create groups in."""
        found = {}
        for controller in ("memory", "pids"):
            base = _CGROUP_V1 / controller
            if (base / "cgroup.procs").exists() and os.access(base, os.W_OK):
                found[controller] = base
        return found

    def describe(self) -> str:
        """One line naming the active isolation layers (logged at pool start)."""
        layers = ", ".join(self._layers) if self._layers else "not started"
        toolchains = ", ".join(f"{name} ({tool})" for name, tool in self.toolchains.items()) or "none"
        return f"local backend (python {self.python}): {layers}; other languages: {toolchains}"

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
        assert info is not None
        problems = []
        if info["uid"] == 0:
            problems.append("code ran as root")
        if info["net"] != "blocked":
            problems.append(f"the network was reachable ({info['net']})")
        if self._landlock_abi and info["fs"] != "blocked":
            problems.append("host files outside the scratch directory were readable")
        expected = {*self._env(), "HOME", "TMPDIR", "PWD", "LC_CTYPE", "TRL_SANDBOX_DENY_PROCESSES"}
        leaked = sorted(set(info["env"]) - expected)
        if leaked:
            problems.append(f"host environment variables leaked: {leaked}")
        if problems:
            raise IsolationUnavailableError("the local backend's isolation probe failed: " + "; ".join(problems))

    async def aclose(self) -> None:
        """Stop the fork servers of sandboxes not deleted (their directories stay, as the contract says), and remove
        the judge's package copy."""
        for sandbox_id in list(self._servers):
            server = self._servers.pop(sandbox_id)
            with anyio.CancelScope(shield=True):
                await server.stop()
        if self._judge_lib is not None:
            self._judge_lib_finalizer()
            self._judge_lib = None

    def _env(self) -> dict[str, str]:
        """The fixed environment of every execution (plus HOME/TMPDIR): where the judge finds pytest, if copied."""
        env = dict(_BASE_ENV)
        if self._judge_lib is not None:
            env[JUDGE_PATH_ENV] = str(self._judge_lib)
        return env

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
        self._create_cgroups(sandbox_id)
        sandbox = self._handle(sandbox_id, dict(labels))
        if self._use_server:
            try:
                self._servers[sandbox_id] = await _ForkServer.start(self._server_launch(sandbox), path)
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
            "harness_path": _HARNESS_SOURCE,
            "runs": str(Path(sandbox.data) / "runs"),
            "scratch_size": self.scratch_limit_bytes,
            "uid": self._uid(sandbox) if self._is_root else os.getuid(),
            "gid": self._uid(sandbox) if self._is_root else os.getgid(),
            "root": self._is_root,
            "seccomp": self._seccomp,
            "env": self._env(),
            "rlimits": rlimits,
        }
        if self._landlock_abi:
            server["landlock"] = {
                "abi": self._landlock_abi,
                "ro": [*self._landlock_ro, sandbox.workdir],
                "dev": list(_DEVICES),
            }
        cfg = {
            "server": server,
            "namespaces": True,
            "userns": not self._is_root,
            "cgroups": [str(g / "cgroup.procs") for g in self._cgroup_dirs(sandbox.id).values() if g.exists()],
        }
        assert self.python is not None
        return [*self._python_argv(self.python), _LAUNCHER], cfg

    def _cgroup_dirs(self, sandbox_id: str) -> dict[str, Path]:
        return {name: base / "trl-sandbox" / sandbox_id for name, base in self._cgroups.items()}

    def _create_cgroups(self, sandbox_id: str) -> None:
        """One memory and one pids cgroup per sandbox (cgroup v1, where writable): caps a whole execution tree."""
        limits = {
            "memory": {"memory.limit_in_bytes": self.memory_limit_bytes + self.scratch_limit_bytes + (64 << 20)},
            "pids": {"pids.max": self.max_processes},
        }
        for name, group in self._cgroup_dirs(sandbox_id).items():
            try:
                group.mkdir(parents=True, exist_ok=True)
                for key, value in limits[name].items():
                    (group / key).write_text(str(value))
            except OSError as exc:
                raise InfrastructureError(f"local backend: cannot create cgroup {group}: {exc}") from exc

    def _delete_cgroups(self, sandbox_id: str) -> None:
        for group in self._cgroup_dirs(sandbox_id).values():
            for _ in range(50):  # processes of a killed execution may take a moment to leave
                try:
                    group.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)

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
        return _SANDBOX_UID_BASE + int(sandbox.id.rsplit("-", 1)[-1], 16) % _SANDBOX_UID_SPAN

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
                if content == HARNESS_FILES[HARNESS_NAME]:
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
        server = self._servers.get(sandbox.id)
        if server is not None:
            harness = (
                sandbox.id in self._harness_ok
                and list(argv) == [*sandbox.python, f"{sandbox.workdir}/{HARNESS_NAME}"]
            )
            if harness:
                return await server.judge(stdin, timeout_s, self.output_limit_bytes)
            request = {"argv": list(argv), "timeout_s": timeout_s}
            return await server.exec(request, stdin, timeout_s, self.output_limit_bytes)
        runs = Path(sandbox.data) / "runs"
        if not runs.is_dir():
            raise InfrastructureError(f"local backend: sandbox {sandbox.id} does not exist")
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
            if not self._is_root and "pids" not in self._cgroups:
                # The process limit is per uid, shared with the trainer: allow only what exists plus the harness's
                # own worker, and forbid the code to create processes at all (seccomp in the worker).
                cfg["env"]["TRL_SANDBOX_DENY_PROCESSES"] = "1"
                nproc = _processes_of(os.getuid()) + self.max_processes
                cfg["rlimits"]["nproc"] = [nproc, nproc]
        if _layers:
            if self._landlock_abi:
                cfg["landlock"] = {
                    "abi": self._landlock_abi,
                    "ro": [*self._landlock_ro, sandbox.workdir],
                    "dev": list(_DEVICES),
                }
            cfg["seccomp"] = self._seccomp
            cfg["cgroups"] = [str(g / "cgroup.procs") for g in self._cgroup_dirs(sandbox.id).values() if g.exists()]
        try:
            return await self._run_launcher(cfg, stdin, timeout_s)
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(_rmtree, scratch)

    async def open_process(self, sandbox: Sandbox, argv: Sequence[str], *, timeout_s: float) -> SandboxProcess:
        """Start ``argv`` as a long-lived execution of ``sandbox``'s fork server, with the same layers as
        :meth:`exec` (its own PID namespace, Landlock scope, slot and uid); the server kills it after ``timeout_s``.

        Raises:
            ConfigurationError: the sandbox has no fork server (``fork_server=False``, or no namespaces).
            InfrastructureError: the sandbox is gone.
        """
        server = self._servers.get(sandbox.id)
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
            # gives C, C++ and Rust programs the soft one (see trl_sandbox._harness._spawn).
            "as": [self.memory_limit_bytes, max(self.memory_limit_bytes, RUNTIME_ADDRESS_SPACE_BYTES)],
            "data": [self.memory_limit_bytes, self.memory_limit_bytes],
            "fsize": [self.file_size_limit_bytes, self.file_size_limit_bytes],
            "nproc": [self.max_processes, self.max_processes],
            "nofile": [self.max_open_files, self.max_open_files],
            "core": [0, 0],
        }

    async def _run_launcher(self, cfg: dict, stdin: bytes, timeout_s: float) -> ExecResult:
        status_r, status_w = os.pipe()
        cfg["status_fd"] = status_w
        try:
            proc = await anyio.open_process(
                [sys.executable, "-I", "-S", _LAUNCHER, json.dumps(cfg)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(status_w,),
                start_new_session=True,
                env={},
            )
        except OSError as exc:
            os.close(status_r)
            raise InfrastructureError(f"local backend: cannot start the launcher: {exc}") from exc
        finally:
            os.close(status_w)

        outputs = {"stdout": _Capture(self.output_limit_bytes), "stderr": _Capture(self.output_limit_bytes)}

        async def feed() -> None:
            assert proc.stdin is not None
            try:
                if stdin:
                    await proc.stdin.send(stdin)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                pass  # the command exited without reading all of its input
            finally:
                await proc.stdin.aclose()

        async def drain(name: str, stream: ByteReceiveStream) -> None:
            async for chunk in stream:
                outputs[name].add(chunk)

        host_killed = False
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(feed)
                tg.start_soon(drain, "stdout", proc.stdout)
                tg.start_soon(drain, "stderr", proc.stderr)
                with anyio.move_on_after(timeout_s + _HOST_GRACE_S):
                    await proc.wait()
                if proc.returncode is None:
                    host_killed = True
                    _killpg(proc.pid)
                    with anyio.CancelScope(shield=True):
                        await proc.wait()
        finally:
            if proc.returncode is None:  # cancelled from outside (batch deadline): leave nothing running
                _killpg(proc.pid)
                with anyio.CancelScope(shield=True):
                    await proc.wait()
            with anyio.CancelScope(shield=True):
                await proc.aclose()
            raw_status = _read_all(status_r)

        if host_killed:
            raise InfrastructureError(f"local backend: the launcher did not finish {_HOST_GRACE_S}s past its timeout")
        try:
            status = json.loads(raw_status)
        except ValueError:
            raise InfrastructureError(
                f"local backend: the launcher exited with {proc.returncode} and no status; stderr: "
                f"{bytes(outputs['stderr'].data[-500:]).decode(errors='replace')}"
            ) from None
        if "error" in status:
            raise InfrastructureError(f"local backend: {status['error']}")
        if status.get("disk_exceeded"):
            outputs["stderr"].data += f"\ntrl-sandbox: killed: scratch directory over {self.scratch_limit_bytes} bytes\n".encode()
        return ExecResult(
            exit_code=status["exit_code"],
            stdout=bytes(outputs["stdout"].data),
            stderr=bytes(outputs["stderr"].data),
            duration_s=status["duration_s"],
            timed_out=status["timed_out"],
            output_truncated=outputs["stdout"].truncated or outputs["stderr"].truncated,
        )

    async def delete(self, sandbox: Sandbox) -> None:
        """Stop the sandbox's fork server (killing running executions) and delete its directory (and anything an
        execution left). Missing sandboxes are ignored."""
        server = self._servers.pop(sandbox.id, None)
        self._harness_ok.discard(sandbox.id)
        if server is not None:
            with anyio.CancelScope(shield=True):
                await server.stop()
        path = self.root_dir / sandbox.id
        if path.exists():
            await anyio.to_thread.run_sync(_rmtree, path)
        await anyio.to_thread.run_sync(self._delete_cgroups, sandbox.id)

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


def _processes_of(uid: int) -> int:
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


def _killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _read_all(fd: int) -> bytes:
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


class _ForkServer:
    """Host side of one sandbox's fork server (``_forkserver.py``): the launcher process, the control socket and
    the judge server's socket.

    :meth:`judge` runs one harness request on the judge server (one round trip); :meth:`exec` runs any other
    command (its four pipe ends travel with the message) and collects stdout, stderr and the status. The fork
    server itself never sees a request's content.
    """

    _ids = itertools.count(1)

    def __init__(self, proc: subprocess.Popen, sock: socket.socket, judge_sock: socket.socket, log_path: Path) -> None:
        self.proc = proc
        self.sock = sock
        self.judge_sock = judge_sock
        self.log_path = log_path
        self._send_lock = anyio.Lock()
        self._judge_lock = anyio.Lock()
        self._judge_buffer = bytearray()
        self._dead: str | None = None

    @classmethod
    async def start(cls, launch: tuple[list[str], dict], sandbox_dir: Path) -> _ForkServer:
        """Start the launcher in server mode and wait for the server's ``ready``.

        Raises:
            InfrastructureError: it could not start, reported an error, or did not answer in time.
        """
        argv, cfg = launch
        host_sock, server_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        host_judge, server_judge = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        log_path = sandbox_dir / "server.log"
        cfg["server"]["control_fd"] = server_sock.fileno()
        cfg["server"]["judge_fd"] = server_judge.fileno()
        try:
            with open(log_path, "wb") as log:
                proc = subprocess.Popen(
                    [*argv, json.dumps(cfg)],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=log,
                    pass_fds=(server_sock.fileno(), server_judge.fileno()),
                    start_new_session=True,
                    cwd=str(sandbox_dir),
                    env={},
                )
        except OSError as exc:
            host_sock.close()
            host_judge.close()
            raise InfrastructureError(f"local backend: cannot start the fork server: {exc}") from exc
        finally:
            server_sock.close()
            server_judge.close()
        host_sock.setblocking(False)
        host_judge.setblocking(False)
        server = cls(proc, host_sock, host_judge, log_path)
        try:
            with anyio.fail_after(_SERVER_START_S):
                await anyio.wait_readable(host_sock)
            reply = host_sock.recv(65536)
            message = json.loads(reply) if reply else {"error": "it exited"}
        except (TimeoutError, OSError, ValueError) as exc:
            message = {"error": f"no answer ({type(exc).__name__})"}
        except BaseException:
            with anyio.CancelScope(shield=True):
                await server.stop()
            raise
        if not message.get("ready"):
            with anyio.CancelScope(shield=True):
                await server.stop()
            raise InfrastructureError(f"local backend: the fork server did not start: {message.get('error')}{server.log_tail()}")
        return server

    def log_tail(self) -> str:
        try:
            tail = self.log_path.read_bytes()[-1000:].decode(errors="replace").strip()
        except OSError:
            return ""
        return f"; its log: {tail}" if tail else ""

    async def _send(self, data: bytes, fds: Sequence[int] = ()) -> None:
        async with self._send_lock:
            while True:
                try:
                    socket.send_fds(self.sock, [data], list(fds))
                    return
                except BlockingIOError:
                    await anyio.wait_writable(self.sock)

    async def judge(self, request: bytes, timeout_s: float, output_limit: int) -> ExecResult:
        """Run one harness request (the bytes the harness reads on stdin) on the judge server.

        Returns what a harness execution would: the records as stdout, the worker's output as stderr.

        Raises:
            InfrastructureError: the judge server is gone, could not start a worker, or did not answer within
                ``timeout_s`` plus a grace period (it is then treated as dead: the sandbox gets replaced).
        """
        if self._dead:
            raise InfrastructureError(self._dead)
        header = json.dumps({"timeout_s": timeout_s, "output_limit": output_limit}).encode()
        async with self._judge_lock:
            try:
                with anyio.fail_after(timeout_s + _HOST_GRACE_S):
                    await self._judge_send(_frame(header) + _frame(request))
                    status = json.loads(await self._judge_frame())
                    records = await self._judge_frame()
                    output = await self._judge_frame()
            except (OSError, ValueError, EOFError, TimeoutError) as exc:
                self._dead = f"local backend: the judge server failed ({type(exc).__name__}: {exc}){self.log_tail()}"
                raise InfrastructureError(self._dead) from None
            except BaseException:  # cancelled mid-request: the stream is out of step; never reuse it
                self._dead = "local backend: a judge request was cancelled; the sandbox must be replaced"
                raise
        if "error" in status:
            raise InfrastructureError(f"local backend: {status['error']}")
        return ExecResult(
            exit_code=status["exit_code"],
            stdout=records,
            stderr=output,
            duration_s=status["duration_s"],
            timed_out=status["timed_out"],
            output_truncated=status.get("truncated", False),
        )

    async def _judge_send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[self.judge_sock.send(view) :]
            except BlockingIOError:
                await anyio.wait_writable(self.judge_sock)

    async def _judge_frame(self) -> bytes:
        buf = self._judge_buffer
        while True:
            if len(buf) >= 4:
                size = int.from_bytes(buf[:4], "little")
                if len(buf) >= 4 + size:
                    frame = bytes(buf[4 : 4 + size])
                    del buf[: 4 + size]
                    return frame
            try:
                chunk = self.judge_sock.recv(1 << 20)
            except BlockingIOError:
                await anyio.wait_readable(self.judge_sock)
                continue
            if not chunk:
                raise EOFError("the judge server closed its socket")
            buf += chunk

    async def exec(self, request: dict, stdin: bytes, timeout_s: float, output_limit: int) -> ExecResult:
        """Run one execution; see :meth:`LocalBackend.exec`.

        Raises:
            InfrastructureError: the server is gone or did not report within ``timeout_s`` plus a grace period.
        """
        if self._dead:
            raise InfrastructureError(self._dead)
        request["id"] = exec_id = next(self._ids)
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        status_r, status_w = os.pipe()
        ours = [in_w, out_r, err_r, status_r]
        for fd in ours:
            os.set_blocking(fd, False)
        finished = False

        def close_ours(fd: int) -> None:
            if fd in ours:
                ours.remove(fd)
                os.close(fd)

        async def write_rest(data: bytes) -> None:
            try:
                while data:
                    await anyio.wait_writable(in_w)
                    data = _write_some(in_w, data)
            finally:
                close_ours(in_w)

        try:
            try:
                await self._send(json.dumps(request).encode(), [in_r, out_w, err_w, status_w])
            except OSError as exc:
                self._dead = f"local backend: the fork server is gone ({exc}){self.log_tail()}"
                raise InfrastructureError(self._dead) from exc
            finally:
                for fd in (in_r, out_w, err_w, status_w):
                    os.close(fd)
            stdout = _Capture(output_limit)
            stderr = _Capture(output_limit)
            status = _Capture(1 << 16)
            with anyio.move_on_after(timeout_s + _HOST_GRACE_S):
                async with anyio.create_task_group() as tg:
                    rest = _write_some(in_w, stdin)
                    if rest:
                        tg.start_soon(write_rest, rest)
                    else:
                        close_ours(in_w)
                    tg.start_soon(stderr.drain, err_r)
                    await stdout.drain(out_r)
                    await status.drain(status_r)
                finished = True
        finally:
            if not finished:  # timed out on our side or cancelled from outside: the server kills it
                with anyio.CancelScope(shield=True), anyio.move_on_after(1):
                    try:
                        await self._send(json.dumps({"cancel": exec_id}).encode())
                    except OSError:
                        pass
            for fd in list(ours):
                close_ours(fd)
        if not finished:
            raise InfrastructureError(f"local backend: the fork server did not finish {_HOST_GRACE_S}s past its timeout")
        try:
            result = json.loads(bytes(status.data))
        except ValueError:
            self._dead = f"local backend: the fork server died during an execution{self.log_tail()}"
            raise InfrastructureError(self._dead) from None
        if "error" in result:
            raise InfrastructureError(f"local backend: {result['error']}")
        return ExecResult(
            exit_code=result["exit_code"],
            stdout=bytes(stdout.data),
            stderr=bytes(stderr.data),
            duration_s=result["duration_s"],
            timed_out=result["timed_out"],
            output_truncated=stdout.truncated or stderr.truncated,
        )

    async def open_process(self, request: dict) -> _LocalProcess:
        """Start one long-lived execution whose stdin and stdout stay open (see :meth:`LocalBackend.open_process`).

        Raises:
            InfrastructureError: the server is gone.
        """
        if self._dead:
            raise InfrastructureError(self._dead)
        request["id"] = exec_id = next(self._ids)
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        status_r, status_w = os.pipe()
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            await self._send(json.dumps(request).encode(), [in_r, out_w, devnull, status_w])
        except OSError as exc:
            for fd in (in_w, out_r, status_r):
                os.close(fd)
            self._dead = f"local backend: the fork server is gone ({exc}){self.log_tail()}"
            raise InfrastructureError(self._dead) from exc
        finally:
            for fd in (in_r, out_w, status_w, devnull):
                os.close(fd)
        for fd in (in_w, out_r):
            os.set_blocking(fd, False)
        return _LocalProcess(self, exec_id, in_w, out_r, status_r)

    async def stop(self) -> None:
        """Close the control socket (the server kills running executions and exits), then reap the launcher,
        killing it after a grace period."""
        self.sock.close()
        self.judge_sock.close()
        self._dead = "local backend: the sandbox was deleted"
        pidfd = None
        try:
            pidfd = os.pidfd_open(self.proc.pid)
            with anyio.move_on_after(_SERVER_STOP_S):
                await anyio.wait_readable(pidfd)
        except OSError:
            pass
        finally:
            if pidfd is not None:
                os.close(pidfd)
        if self.proc.poll() is None:
            _killpg(self.proc.pid)
            await anyio.to_thread.run_sync(self.proc.wait)


class _LocalProcess(SandboxProcess):
    """A long-lived execution of a fork server (see :meth:`_ForkServer.open_process`): our ends of its stdin and
    stdout pipes and its status pipe. Killing it asks the server to cancel it (the server kills its whole PID
    namespace and empties its slot)."""

    def __init__(self, server: _ForkServer, exec_id: int, in_w: int, out_r: int, status_r: int) -> None:
        super().__init__("local backend")
        self.server, self.exec_id = server, exec_id
        self.fds = [in_w, out_r, status_r]
        self.in_w, self.out_r, self.status_r = in_w, out_r, status_r

    async def send(self, data: bytes) -> None:
        if not self.fds:
            raise InfrastructureError("local backend: the session process is closed")
        try:
            while data:
                await anyio.wait_writable(self.in_w)
                data = _write_some(self.in_w, data)
        except OSError as exc:
            raise InfrastructureError(f"local backend: the session process is gone ({exc})") from exc

    async def _next_chunk(self) -> bytes | None:
        if not self.fds:
            raise InfrastructureError("local backend: the session process is closed")
        while True:
            await anyio.wait_readable(self.out_r)
            try:
                return os.read(self.out_r, 1 << 16) or None
            except BlockingIOError:
                continue

    async def close_input(self) -> None:
        """Close the process's stdin (it reads end of file). Idempotent."""
        if self.in_w in self.fds:
            self.fds.remove(self.in_w)
            os.close(self.in_w)

    async def wait(self) -> int | None:
        """Wait for the end of the process and of everything it started; its exit status (``128 + N`` for signal
        ``N``; None when it was killed at its timeout).

        Raises:
            InfrastructureError: the process is closed, or the sandbox could not start it.
        """
        if self.status_r not in self.fds:
            raise InfrastructureError("local backend: the session process is closed")
        data = b""
        while True:
            await anyio.wait_readable(self.status_r)
            chunk = os.read(self.status_r, 4096)
            if not chunk:
                break
            data += chunk
        status = json.loads(data or b"{}")
        if "error" in status or "timed_out" not in status:
            raise InfrastructureError(f"local backend: {status.get('error', 'the process ended without a status')}")
        return status["exit_code"]

    async def terminate(self) -> None:
        """Kill the process and everything it started, keeping our ends open: a reader then sees its output end and
        :meth:`wait` its status (what a remote service sees when a sandbox loses a process)."""
        if self.fds:
            with anyio.CancelScope(shield=True), anyio.move_on_after(2):
                try:
                    await self.server._send(json.dumps({"cancel": self.exec_id}).encode())
                except OSError:
                    pass

    async def kill(self, *, wait_s: float = 0.0) -> None:
        """Ask the fork server to kill the process's PID namespace (at once: ``wait_s`` is not needed here), and
        close our descriptors."""
        if not self.fds:
            return
        await self.terminate()
        fds, self.fds = self.fds, []
        for fd in fds:
            os.close(fd)


def _frame(data: bytes) -> bytes:
    return len(data).to_bytes(4, "little") + data


class _Capture:
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


def _write_some(fd: int, data: bytes) -> bytes:
    """Write what fits now into a non-blocking pipe; return the rest (empty when all was written)."""
    try:
        while data:
            data = data[os.write(fd, data) :]
    except BlockingIOError:
        pass
    except OSError:  # the execution exited without reading its input
        return b""
    return data
