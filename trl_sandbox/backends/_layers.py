"""The local backend's isolation layers on this host: whether they can hold the containment list (refused unless
weak isolation is allowed), the probe execution that proves them at start, and the one line that names them.

See docs/security.md for what each layer holds.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

from ..errors import IsolationUnavailableError
from . import _landlock

logger = logging.getLogger(__name__)

#: The interpreter's directories (read-only to sandboxed code) and its installed-package directories (never readable
#: whole: see _packages).
PATHS_PROBE = (
    "import json, os, site, sys\n"
    "prefixes = sorted({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix,\n"
    "    sys.base_exec_prefix, os.path.dirname(sys.executable))})\n"
    "print(json.dumps({'prefixes': prefixes, 'site': site.getsitepackages() + [site.getusersitepackages()]}))\n"
)

#: Run sandboxed at start: prints the uid, the environment's names, and whether the network and ``/tmp`` were
#: reachable (see :func:`probe_problems`).
PROBE = (
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


def missing_layers(landlock_abi: int, namespaces: bool, seccomp: bool, is_root: bool) -> list[str]:
    """What the containment list lacks with these layers (Landlock's ABI, 0 when absent; namespaces; a seccomp
    filter; running as root), one phrase each; empty when nothing."""
    missing = []
    if landlock_abi < 1:
        missing.append("Landlock (host files outside the scratch directory would be reachable)")
    if not namespaces:
        if not seccomp and landlock_abi < 4:
            missing.append("network isolation (no network namespace, seccomp or Landlock TCP rules)")
        if not is_root and landlock_abi < 6:
            missing.append("signal isolation (no PID namespace, no Landlock signal scoping, same uid)")
    return missing


def require_layers(missing: Sequence[str], allow_weak: bool) -> None:
    """Refuse ``missing`` layers (:func:`missing_layers`) unless ``allow_weak``, which logs a warning instead.

    Raises:
        IsolationUnavailableError: a layer is missing and weak isolation is not allowed; the message names the fixes.
    """
    if missing and not allow_weak:
        raise IsolationUnavailableError(
            "the local backend cannot isolate code on this machine: missing "
            + "; ".join(missing)
            + ". Run as root or enable unprivileged user namespaces (sysctl user.max_user_namespaces), use a "
            "kernel with Landlock (>= 6.12 for every layer), use a remote backend, or pass "
            "sandbox_allow_weak_isolation=True to run anyway."
        )
    if missing:
        logger.warning("trl-sandbox local backend: WEAK isolation, missing %s", "; ".join(missing))


def probe_problems(info: dict | None, landlock_abi: int, expected_env: Iterable[str]) -> list[str]:
    """What :data:`PROBE`'s output ``info`` shows the layers let through: root, the network, host files (with
    Landlock), environment variables other than ``expected_env``; empty when nothing."""
    assert info is not None
    problems = []
    if info["uid"] == 0:
        problems.append("code ran as root")
    if info["net"] != "blocked":
        problems.append(f"the network was reachable ({info['net']})")
    if landlock_abi and info["fs"] != "blocked":
        problems.append("host files outside the scratch directory were readable")
    leaked = sorted(set(info["env"]) - set(expected_env))
    if leaked:
        problems.append(f"host environment variables leaked: {leaked}")
    return problems


def layer_names(*, server: bool, namespaces: bool, is_root: bool, landlock_abi: int, seccomp: bool,
                cgroups: Sequence[str], memory_bytes: int, max_processes: int, scratch_bytes: int, output_bytes: int,
                packages: Sequence[str]) -> list[str]:
    """The active layers, one phrase each, for the backend's one-line report (sizes in bytes; ``packages``: the
    distributions offered)."""
    layers = []
    if server:
        layers.append("fork server")
    if namespaces:
        layers.append("namespaces net+pid+ipc+uts+mnt" + ("+user" if not is_root else ""))
    else:
        layers.append("NO namespaces (subreaper kill, scratch size watchdog)")
    layers.append("uid 61000+n (host-wide registry), no groups, no-new-privs" if is_root else "own uid, no-new-privs")
    if landlock_abi:
        layers.append(_landlock.describe(landlock_abi))
    if seccomp:
        layers.append("seccomp deny-list")
    if cgroups:
        layers.append("cgroup " + "+".join(cgroups))
    layers += [
        f"rlimits cpu/as=data={memory_bytes}/fsize/nproc={max_processes}/nofile",
        f"scratch {'tmpfs' if namespaces else 'watchdog'} {scratch_bytes} B"
        + (", a slot per execution" if server and landlock_abi else ""),
        "packages " + (", ".join(packages) or "none (standard library only)"),
        "empty env",
        "nice 10",
        ("tests timed on the CPU of every process the program starts (worker group), its leftovers ended after each "
         "test" if any(name.startswith("worker group") for name in cgroups) else
         "tests timed on CPU (the worker and what it waited for)") + " (3x wall backstop)", "wall-clock kill",
        f"output cap {output_bytes} B",
    ]
    return layers
