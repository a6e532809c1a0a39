"""Keep a process, and what it starts, off every host but this machine: a guard for test suites.

trl-sandbox's own suite turns both layers on for its whole process (``tests/_isolation.py``); another suite can do
the same from its ``conftest.py``'s ``pytest_configure`` (``isolate()`` then ``install()``). Neither is ever
turned on by importing trl-sandbox or by its pytest plugin, except through :data:`ENV` (below).

- :func:`isolate` (kernel-enforced, Linux, needs ``CAP_SYS_ADMIN``, i.e. root): the calling process moves into a
  network namespace of its own whose only interface is loopback. Every thread it starts afterwards, every child
  process (subprocesses, Ray's raylets and workers, sandboxes) and native code that never goes through Python's
  :mod:`socket` (the ``e2b`` SDK's Rust HTTP client ``pyqwest``, gRPC, the C resolver) inherit it: no packet can
  leave the machine (``Network is unreachable``, and DNS fails at once). Threads that already run stay outside, so
  it refuses to act in a process with more than one thread.
- :func:`install` (Python-level, anywhere): :class:`socket.socket`'s ``connect``, ``connect_ex``, ``sendto`` and
  ``sendmsg``, and :func:`socket.getaddrinfo`, ``gethostbyname(_ex)``, ``gethostbyaddr`` and ``getnameinfo`` refuse
  every address but loopback, the unspecified address and this machine's own interface addresses (AF_UNIX and the
  other non-IP families are not checked), and every name but ``localhost`` and the names ``/etc/hosts`` maps to
  such an address: nothing is asked of a DNS server. A refusal raises :class:`NetworkRefusedError`, which names the
  address and the test (pytest's ``PYTEST_CURRENT_TEST``), and is recorded (:func:`refusals`) so that a caller
  that swallows it can still be failed. It does not see code that opens connections outside Python's socket
  module: that is what :func:`isolate` (or a proxy variable pointing nowhere, for HTTP clients that honour one)
  is for.

Child processes: with :data:`ENV` set to a non-empty value in its environment, a process calls :func:`install`
when it imports ``trl_sandbox`` (the suite's subprocesses, CLI runs and Ray actors all do).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import ipaddress
import os
import socket
import struct
import sys
import threading
from collections.abc import Callable
from typing import Any

from .errors import TrlSandboxError

__all__ = ["ENV", "NetworkRefusedError", "install", "install_if_asked", "installed", "is_local_address",
           "is_local_name", "isolate", "local_addresses", "local_names", "refusals", "refused_in", "uninstall"]

#: Environment variable: a process whose environment sets it (non-empty) calls :func:`install` when it imports
#: ``trl_sandbox``.
ENV = "TRL_SANDBOX_LOCAL_NETWORK_ONLY"

_CLONE_NEWNET = 0x40000000
_SIOCGIFFLAGS, _SIOCSIFFLAGS = 0x8913, 0x8914
_IFF_UP, _IFF_RUNNING = 0x1, 0x40
_IP_FAMILIES = (socket.AF_INET, socket.AF_INET6)


class NetworkRefusedError(TrlSandboxError, ConnectionRefusedError):
    """The network guard refused an address or a name that is not this machine's (see :func:`install`).

    An :class:`OSError` (``ECONNREFUSED``), as a firewall's refusal would be: code that falls back on a failed
    connection still does.

    Attributes:
        target: The refused address (``host:port``) or name.
        context: The test it happened in (pytest's ``PYTEST_CURRENT_TEST``), else which process.
    """

    def __init__(self, target: str, context: str) -> None:
        super().__init__(errno.ECONNREFUSED, f"trl-sandbox network guard: refused {target} in {context}: only "
                                             f"loopback, AF_UNIX and this machine's own addresses may be reached")
        self.target, self.context = target, context


# -- what is local ---------------------------------------------------------------------------------------------------

_own: frozenset[str] = frozenset()
_own_names: frozenset[str] = frozenset()


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def local_addresses() -> frozenset[str]:
    """This machine's own interface addresses (IPv4 from ``/proc/net/fib_trie``'s ``LOCAL`` entries, IPv6 from
    ``/proc/net/if_inet6``), read now; empty where ``/proc`` does not have them. Loopback is local anyway."""
    found = set()
    last = None
    for line in _read("/proc/net/fib_trie").splitlines():
        line = line.strip()
        if line.startswith("|--"):
            last = line[3:].strip()
        elif line.startswith("/32 host LOCAL") and last:
            found.add(last)
    for line in _read("/proc/net/if_inet6").splitlines():
        fields = line.split()
        if fields and len(fields[0]) == 32:
            found.add(str(ipaddress.IPv6Address(bytes.fromhex(fields[0]))))
    return frozenset(found)


def is_local_address(host: str) -> bool:
    """Whether ``host``, an IP address (``%scope`` allowed), is this machine's: loopback, unspecified (which Linux
    connects to itself), or one of :func:`local_addresses`. False for a name or anything else."""
    global _own
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback or ip.is_unspecified or str(ip) in _own:
        return True
    _own = local_addresses()  # read again: an address may have been added since
    return str(ip) in _own


def _hosts_names() -> frozenset[str]:
    names = set()
    for line in _read("/etc/hosts").splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) > 1 and is_local_address(fields[0]):
            names.update(name.lower().rstrip(".") for name in fields[1:])
    return frozenset(names)


def local_names() -> frozenset[str]:
    """``localhost`` and the names ``/etc/hosts`` maps to this machine's addresses, read now."""
    return frozenset({"localhost", *_hosts_names()})


def is_local_name(name: str) -> bool:
    """Whether resolving ``name`` stays on this machine: an IP address (nothing is resolved), ``localhost`` (and
    ``*.localhost``), or a name ``/etc/hosts`` maps to a local address (see :func:`is_local_address`)."""
    global _own_names
    name = name.lower().rstrip(".")
    try:
        ipaddress.ip_address(name.split("%", 1)[0])
        return True
    except ValueError:
        pass
    if name == "localhost" or name.endswith(".localhost") or name in _own_names:
        return True
    _own_names = _hosts_names()
    return name in _own_names


# -- the guard -------------------------------------------------------------------------------------------------------

#: What :func:`install` replaced, (owner, name) -> the original; those a class only inherited are in _inherited.
_originals: dict[tuple[Any, str], Any] = {}
_inherited: set[tuple[Any, str]] = set()
_refused: list[str] = []
_lock = threading.Lock()


def _context() -> str:
    test = os.environ.get("PYTEST_CURRENT_TEST")
    if test:
        return f"test {test}"
    return f"process {os.getpid()} ({' '.join(getattr(sys, 'argv', []))[:120]}), outside any test"


def _refuse(target: str) -> NetworkRefusedError:
    error = NetworkRefusedError(target, _context())
    with _lock:
        _refused.append(str(error))
    if not os.environ.get("PYTEST_CURRENT_TEST"):  # no test will report it (interpreter exit, a child process)
        try:
            sys.stderr.write(f"{error}\n")
        except Exception:  # noqa: BLE001 - stderr may be closed at interpreter exit
            pass
    return error


def _check_address(sock: Any, address: Any) -> None:
    if sock.family in _IP_FAMILIES and isinstance(address, tuple) and address:
        host = address[0].decode() if isinstance(address[0], bytes) else str(address[0])
        if not (is_local_address(host) if _is_ip(host) else is_local_name(host)):
            port = address[1] if len(address) > 1 else "?"
            raise _refuse(f"[{host}]:{port}" if ":" in host else f"{host}:{port}")


def _check_name(host: Any) -> None:
    if host is None:
        return
    name = host.decode() if isinstance(host, bytes) else str(host)
    if name and not is_local_name(name):
        raise _refuse(f"the name {name!r} (it would be asked of a DNS server)")


def _connect(self: socket.socket, address: Any) -> None:
    _check_address(self, address)
    return _originals[(socket.socket, "connect")](self, address)


def _connect_ex(self: socket.socket, address: Any) -> int:
    _check_address(self, address)
    return _originals[(socket.socket, "connect_ex")](self, address)


def _sendto(self: socket.socket, data: Any, *args: Any) -> int:
    if args:
        _check_address(self, args[-1])
    return _originals[(socket.socket, "sendto")](self, data, *args)


def _sendmsg(self: socket.socket, buffers: Any, *args: Any) -> int:
    if len(args) >= 3 and args[2] is not None:
        _check_address(self, args[2])
    return _originals[(socket.socket, "sendmsg")](self, buffers, *args)


def _getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    _check_name(host)
    return _originals[(socket, "getaddrinfo")](host, *args, **kwargs)


def _gethostbyname(name: str) -> str:
    _check_name(name)
    return _originals[(socket, "gethostbyname")](name)


def _gethostbyname_ex(name: str) -> Any:
    _check_name(name)
    return _originals[(socket, "gethostbyname_ex")](name)


def _gethostbyaddr(address: str) -> Any:
    if not (is_local_address(address) if _is_ip(address) else is_local_name(address)):
        raise _refuse(f"a reverse lookup of {address!r} (it would be asked of a DNS server)")
    return _originals[(socket, "gethostbyaddr")](address)


def _getnameinfo(sockaddr: Any, flags: int) -> Any:
    if not flags & socket.NI_NUMERICHOST and isinstance(sockaddr, tuple) and sockaddr \
            and not is_local_address(str(sockaddr[0])):
        raise _refuse(f"a reverse lookup of {sockaddr[0]!r} (it would be asked of a DNS server)")
    return _originals[(socket, "getnameinfo")](sockaddr, flags)


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return False
    return True


_PATCHES: dict[tuple[Any, str], Callable[..., Any]] = {
    (socket.socket, "connect"): _connect,
    (socket.socket, "connect_ex"): _connect_ex,
    (socket.socket, "sendto"): _sendto,
    (socket.socket, "sendmsg"): _sendmsg,
    (socket, "getaddrinfo"): _getaddrinfo,
    (socket, "gethostbyname"): _gethostbyname,
    (socket, "gethostbyname_ex"): _gethostbyname_ex,
    (socket, "gethostbyaddr"): _gethostbyaddr,
    (socket, "getnameinfo"): _getnameinfo,
}


def install() -> None:
    """Turn the Python-level guard on for this whole process (every thread, until :func:`uninstall`; at
    interpreter exit too). Idempotent. See the module docstring for what it refuses and what it cannot see."""
    global _own, _own_names
    with _lock:
        if _originals:
            return
        _own, _own_names = local_addresses(), _hosts_names()
        for (owner, name), guarded in _PATCHES.items():
            _originals[(owner, name)] = getattr(owner, name)
            if isinstance(owner, type) and name not in vars(owner):
                _inherited.add((owner, name))
            setattr(owner, name, guarded)


def uninstall() -> None:
    """Turn the Python-level guard off (what :func:`install` replaced is put back). Idempotent."""
    with _lock:
        for (owner, name), original in _originals.items():
            if (owner, name) in _inherited:
                delattr(owner, name)
            else:
                setattr(owner, name, original)
        _originals.clear()
        _inherited.clear()


def installed() -> bool:
    """Whether :func:`install` is in effect."""
    return bool(_originals)


def install_if_asked() -> None:
    """:func:`install` when :data:`ENV` is set in the environment (called when ``trl_sandbox`` is imported)."""
    if os.environ.get(ENV):
        install()


def refusals() -> list[str]:
    """The messages of every refusal in this process so far, oldest first."""
    with _lock:
        return list(_refused)


def refused_in(exc: BaseException | None) -> bool:
    """Whether ``exc`` is a :class:`NetworkRefusedError` or was caused by one (its ``__cause__``/``__context__``
    chain): a refusal, worth no retry."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, NetworkRefusedError):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


# -- the namespace ---------------------------------------------------------------------------------------------------


def isolate() -> str | None:
    """Move this process into a new network namespace whose only interface, loopback, is up (see the module
    docstring). Linux only, and only for a process with one thread (the others would stay outside).

    Returns:
        None once done; else why it was not done, in one line (nothing changed then).

    Raises:
        OSError: the namespace was entered but loopback could not be brought up (this process has no network
            left at all).
    """
    if not sys.platform.startswith("linux"):
        return f"network namespaces are Linux's ({sys.platform})"
    try:
        threads = len(os.listdir("/proc/self/task"))
    except OSError as exc:
        return f"cannot count this process's threads ({exc})"
    if threads != 1:
        return f"this process has {threads} threads: all but the caller would stay outside the namespace"
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(_CLONE_NEWNET) != 0:
        return f"unshare(CLONE_NEWNET): {os.strerror(ctypes.get_errno())} (it needs CAP_SYS_ADMIN)"
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = struct.pack("16sh14x", b"lo", 0)
        flags = struct.unpack("16sh14x", fcntl.ioctl(s, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(s, _SIOCSIFFLAGS, struct.pack("16sh14x", b"lo", flags | _IFF_UP | _IFF_RUNNING))
    return None
