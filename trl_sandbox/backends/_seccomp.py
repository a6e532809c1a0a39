"""A seccomp-BPF deny-list, built and installed through ctypes (no libseccomp needed).

Standard library only: imported by the trusted launcher before it executes sandboxed code. The filter returns
``EPERM`` for system calls sandboxed code has no use for and that would weaken the other layers: creating sockets
(``socketpair`` stays allowed), tracing or reading other processes, mounting, creating or entering namespaces
(``unshare``, ``setns``, ``clone`` with namespace flags; ``clone3`` gets ``ENOSYS`` so libc falls back to
``clone``), eBPF, perf, keyrings, kernel modules, io_uring (which bypasses seccomp), userfaultfd, and x32 system
calls. Any other architecture than the one the filter was built for is killed.
"""

import ctypes
import errno
import platform
import struct

PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
RET_KILL_PROCESS = 0x80000000
BPF_LD_W_ABS = 0x20
BPF_JEQ_K = 0x15
BPF_JGE_K = 0x35
BPF_JSET_K = 0x45
BPF_RET_K = 0x06
X32_SYSCALL_BIT = 0x40000000
NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000

# name -> (x86_64, aarch64)
_DENIED = {
    "socket": (41, 198),
    "ptrace": (101, 117),
    "process_vm_readv": (310, 270),
    "process_vm_writev": (311, 271),
    "mount": (165, 40),
    "umount2": (166, 39),
    "pivot_root": (155, 41),
    "chroot": (161, 51),
    "unshare": (272, 97),
    "setns": (308, 268),
    "bpf": (321, 280),
    "perf_event_open": (298, 241),
    "keyctl": (250, 219),
    "add_key": (248, 217),
    "request_key": (249, 218),
    "kexec_load": (246, 104),
    "kexec_file_load": (320, 294),
    "init_module": (175, 105),
    "finit_module": (313, 273),
    "delete_module": (176, 106),
    "reboot": (169, 142),
    "swapon": (167, 224),
    "swapoff": (168, 225),
    "userfaultfd": (323, 282),
    "io_uring_setup": (425, 425),
    "io_uring_enter": (426, 426),
    "io_uring_register": (427, 427),
    "open_by_handle_at": (304, 265),
    "name_to_handle_at": (303, 264),
    "open_tree": (428, 428),
    "move_mount": (429, 429),
    "fsopen": (430, 430),
    "fsconfig": (431, 431),
    "fsmount": (432, 432),
    "fspick": (433, 433),
    "mount_setattr": (442, 442),
    "fanotify_init": (300, 262),
    "acct": (163, 89),
    "quotactl": (179, 60),
    "syslog": (103, 116),
    # System V IPC and POSIX message queues: objects that would outlive an execution in a shared IPC namespace.
    "shmget": (29, 194),
    "semget": (64, 190),
    "msgget": (68, 186),
    "mq_open": (240, 180),
}
_CLONE = (56, 220)
_CLONE3 = (435, 435)
_ARCH = {"x86_64": (0, 0xC000003E), "aarch64": (1, 0xC00000B7)}


def supported():
    """True when this machine's architecture has a filter (x86_64, aarch64)."""
    return platform.machine() in _ARCH


def _insn(code, jt, jf, k):
    return struct.pack("HBBI", code, jt, jf, k)


_UNSHARE = (272, 97)
_SETNS = (308, 268)
CLONE_NEWPID = 0x20000000


def build(allow_pid_namespaces=False, allow_sockets=False):
    """The BPF program (bytes of ``struct sock_filter``) for this architecture.

    Args:
        allow_pid_namespaces: Let ``unshare(CLONE_NEWPID)`` and ``setns(fd, CLONE_NEWPID)`` through (exactly those
            flags): the fork server's filter, so that it can start each execution in a new PID namespace. Both
            need ``CAP_SYS_ADMIN``, which executions never hold.
        allow_sockets: Let ``socket`` through: a repository tree's filter (its tests serve on loopback, the only
            interface of its network namespace).

    Raises:
        OSError: unsupported architecture.
    """
    if not supported():
        raise OSError("no seccomp filter for architecture %s" % platform.machine())
    column, audit_arch = _ARCH[platform.machine()]
    special = {_UNSHARE[column], _SETNS[column]} if allow_pid_namespaces else set()
    if allow_sockets:
        special.add(_DENIED["socket"][column])
    denied = sorted({numbers[column] for numbers in _DENIED.values()} - special)
    # Conditional jumps to labels, resolved once the layout is known: (opcode, k, label).
    checks = []
    if column == 0:
        checks.append((BPF_JGE_K, X32_SYSCALL_BIT, "deny"))
    checks += [(BPF_JEQ_K, nr, "deny") for nr in denied]
    checks.append((BPF_JEQ_K, _CLONE3[column], "enosys"))
    checks.append((BPF_JEQ_K, _CLONE[column], "clone"))
    if allow_pid_namespaces:
        checks.append((BPF_JEQ_K, _UNSHARE[column], "unshare"))
        checks.append((BPF_JEQ_K, _SETNS[column], "setns"))
    head = [
        _insn(BPF_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        _insn(BPF_JEQ_K, 1, 0, audit_arch),
        _insn(BPF_RET_K, 0, 0, RET_KILL_PROCESS),
        _insn(BPF_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
    ]
    first = len(head)
    labels = {}
    labels["allow"] = first + len(checks)
    labels["deny"] = labels["allow"] + 1
    labels["enosys"] = labels["deny"] + 1
    labels["clone"] = labels["enosys"] + 1
    labels["unshare"] = labels["clone"] + 4
    labels["setns"] = labels["unshare"] + 4
    body = list(head)
    for offset, (op, k, label) in enumerate(checks):
        index = first + offset
        body.append(_insn(op, labels[label] - index - 1, 0, k))
    deny = RET_ERRNO | errno.EPERM
    body += [
        _insn(BPF_RET_K, 0, 0, RET_ALLOW),
        _insn(BPF_RET_K, 0, 0, deny),
        _insn(BPF_RET_K, 0, 0, RET_ERRNO | errno.ENOSYS),
        _insn(BPF_LD_W_ABS, 0, 0, 16),  # clone flags: low 32 bits of args[0]
        _insn(BPF_JSET_K, 0, 1, NAMESPACE_FLAGS),
        _insn(BPF_RET_K, 0, 0, deny),
        _insn(BPF_RET_K, 0, 0, RET_ALLOW),
    ]
    if allow_pid_namespaces:
        for offset in (16, 24):  # unshare: args[0] == CLONE_NEWPID; setns: args[1] == CLONE_NEWPID
            body += [
                _insn(BPF_LD_W_ABS, 0, 0, offset),
                _insn(BPF_JEQ_K, 0, 1, CLONE_NEWPID),
                _insn(BPF_RET_K, 0, 0, RET_ALLOW),
                _insn(BPF_RET_K, 0, 0, deny),
            ]
    return b"".join(body)


class _Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def prepare(program=None):
    """The ``sock_fprog`` for ``program`` (default :func:`build`), ready for :func:`install`: a fork server
    prepares it once and installs it in every execution without rebuilding."""
    program = build() if program is None else program
    buf = ctypes.create_string_buffer(program, len(program))
    prog = _Fprog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
    prog._keep = buf  # the filter's memory lives as long as the structure
    return prog


def install(program=None, libc=None):
    """Install the filter on the calling thread (inherited by children and across ``execve``).

    Args:
        program: Filter bytes (default :func:`build`) or a structure from :func:`prepare`.

    No-new-privs must be set first. Raises OSError when the kernel refuses.
    """
    prog = program if isinstance(program, _Fprog) else prepare(program)
    libc = libc or ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")


_FORK = {"x86_64": (57, 58)}  # fork, vfork (aarch64 has neither: it forks through clone)
CLONE_THREAD = 0x00010000


def build_no_processes():
    """A second filter (filters stack) that forbids creating processes while allowing threads: ``fork`` and
    ``vfork`` get ``EPERM``, ``clone`` without ``CLONE_THREAD`` gets ``EPERM``, ``clone3`` gets ``ENOSYS`` (libc
    falls back to ``clone``). Used where process counts cannot be bounded per sandbox (no PID namespace, no
    cgroup, no separate uid)."""
    if not supported():
        raise OSError("no seccomp filter for architecture %s" % platform.machine())
    column, audit_arch = _ARCH[platform.machine()]
    forks = _FORK.get(platform.machine(), ())
    deny = RET_ERRNO | errno.EPERM
    body = [
        _insn(BPF_LD_W_ABS, 0, 0, 4),
        _insn(BPF_JEQ_K, 1, 0, audit_arch),
        _insn(BPF_RET_K, 0, 0, RET_KILL_PROCESS),
        _insn(BPF_LD_W_ABS, 0, 0, 0),
    ]
    checks = [(nr, "deny") for nr in forks] + [(_CLONE3[column], "enosys"), (_CLONE[column], "clone")]
    first = len(body)
    labels = {"allow": first + len(checks)}
    labels.update(deny=labels["allow"] + 1, enosys=labels["allow"] + 2, clone=labels["allow"] + 3)
    for offset, (nr, label) in enumerate(checks):
        body.append(_insn(BPF_JEQ_K, labels[label] - (first + offset) - 1, 0, nr))
    body += [
        _insn(BPF_RET_K, 0, 0, RET_ALLOW),
        _insn(BPF_RET_K, 0, 0, deny),
        _insn(BPF_RET_K, 0, 0, RET_ERRNO | errno.ENOSYS),
        _insn(BPF_LD_W_ABS, 0, 0, 16),  # clone flags
        _insn(BPF_JSET_K, 1, 0, CLONE_THREAD),
        _insn(BPF_RET_K, 0, 0, deny),
        _insn(BPF_RET_K, 0, 0, RET_ALLOW),
    ]
    return b"".join(body)
