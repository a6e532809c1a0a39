"""Landlock (Linux >= 5.13) through ctypes: confine a process to a few directories, deny TCP, scope signals.

Standard library only: imported by the trusted launcher (``_launcher.py``) before it executes sandboxed code.
Kernel ABI (``landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)``):

- 1: filesystem access rights; ptrace is limited to processes in the same or a nested domain;
- 2: ``REFER`` (links/renames across directories); 3: ``TRUNCATE``; 5: ``IOCTL_DEV``;
- 4: TCP ``bind``/``connect`` rights (handled with no rule = all TCP denied);
- 6: scoping of abstract unix sockets and of signals to the domain.

Everything a ruleset handles and no rule grants is denied, to the process and every process it starts.
"""

import ctypes
import os

SYS_CREATE_RULESET = 444  # same number on x86_64 and aarch64 (generic syscall table)
SYS_ADD_RULE = 445
SYS_RESTRICT_SELF = 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13
TRUNCATE = 1 << 14
IOCTL_DEV = 1 << 15

NET_BIND_TCP = 1 << 0
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
SCOPE_SIGNAL = 1 << 1

READ_ONLY = EXECUTE | READ_FILE | READ_DIR
FILE_RW = READ_FILE | WRITE_FILE | TRUNCATE


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi_version():
    """The kernel's Landlock ABI version, or 0 when Landlock is absent or disabled."""
    version = _libc().syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    return max(0, int(version))


def _handled_fs(abi):
    bits = (1 << 13) - 1  # ABI 1: EXECUTE .. MAKE_SYM
    if abi >= 2:
        bits |= REFER
    if abi >= 3:
        bits |= TRUNCATE
    if abi >= 5:
        bits |= IOCTL_DEV
    return bits


def describe(abi):
    """The protections Landlock gives at ``abi``, for the pool's one-line report."""
    if abi <= 0:
        return ""
    parts = ["fs"]
    if abi >= 4:
        parts.append("tcp")
    if abi >= 6:
        parts.append("signals+abstract-unix")
    return "landlock v%d (%s)" % (abi, "/".join(parts))


def create_ruleset(read_only, read_write, device_files, abi=None, list_only=()):
    """Build a Landlock ruleset and return its file descriptor (to apply with :func:`restrict_self`).

    Building once and applying many times is what the fork server does: each execution only pays for
    ``landlock_restrict_self``. A rule on a directory that is later a mount point also covers the filesystem
    mounted on it (Landlock walks up through mount points).

    Args:
        read_only: Directories readable and executable (interpreter, libraries, harness files).
        read_write: Directories fully writable (the scratch directory).
        device_files: Files readable and writable (``/dev/null``...).
        abi: The ABI to use (``abi_version()`` when None).
        list_only: Directories whose tree may be listed but not read: the directories above an installed-package
            directory that must stay unreadable (see ``_packages.carve``), whose other entries are in ``read_only``.

    Raises:
        OSError: Landlock is unavailable, or a call failed.
    """
    libc = _libc()
    abi = abi_version() if abi is None else abi
    if abi <= 0:
        raise OSError("Landlock is not available on this kernel")
    handled = _handled_fs(abi)
    attr = _RulesetAttr(handled, (NET_BIND_TCP | NET_CONNECT_TCP) if abi >= 4 else 0,
                        (SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL) if abi >= 6 else 0)
    size = 24 if abi >= 6 else (16 if abi >= 4 else 8)
    ruleset = libc.syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        rules = [(p, READ_DIR) for p in list_only]
        rules += [(p, READ_ONLY & handled) for p in read_only]
        rules += [(p, handled) for p in read_write]
        rules += [(p, FILE_RW & handled) for p in device_files]
        for path, access in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except FileNotFoundError:
                continue
            try:
                if not os.path.isdir(path):
                    access &= READ_FILE | WRITE_FILE | EXECUTE | TRUNCATE | IOCTL_DEV
                rule = _PathBeneath(access, fd)
                if libc.syscall(SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH),
                                ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
                    raise OSError(ctypes.get_errno(), "landlock_add_rule failed for %s" % path)
            finally:
                os.close(fd)
    except BaseException:
        os.close(ruleset)
        raise
    return ruleset


def restrict_self(ruleset, libc=None):
    """Confine the calling thread (and its future children) with the ruleset ``ruleset`` (a descriptor from
    :func:`create_ruleset`, left open). No-new-privs must be set before (``prctl``).

    Raises:
        OSError: the kernel refused.
    """
    libc = libc or _libc()
    if libc.syscall(SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")


def restrict(read_only, read_write, device_files, abi=None, list_only=()):
    """Confine the calling thread (and its future children) with Landlock: :func:`create_ruleset` then
    :func:`restrict_self`. Arguments as for :func:`create_ruleset`.

    Raises:
        OSError: Landlock is unavailable, or a call failed. No-new-privs must be set before (``prctl``).
    """
    ruleset = create_ruleset(read_only, read_write, device_files, abi, list_only)
    try:
        restrict_self(ruleset)
    finally:
        os.close(ruleset)
