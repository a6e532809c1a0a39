"""The suite's own guards (``_isolation.py``): no test reaches a host outside this machine, and a leak fails the test
that made it and no other. Nothing here sends a packet anywhere: each refusal happens before a socket is used, or in
a network namespace that has no route out."""

from __future__ import annotations

import errno
import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import _isolation
import anyio
import pytest

from trl_sandbox import netguard

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parent.parent
#: TEST-NET-3 (RFC 5737): documentation only, routed nowhere; and the E2B API's name.
OUTSIDE = ("203.0.113.1", 443)
OUTSIDE_NAME = "api.e2b.dev"


def test_a_connection_to_a_non_local_address_is_refused_naming_it_and_the_test(expected_refusals):
    test = os.environ["PYTEST_CURRENT_TEST"].split(" ")[0]
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        with pytest.raises(netguard.NetworkRefusedError, match="203.0.113.1:443") as info:
            sock.connect(OUTSIDE)
        with pytest.raises(OSError) as unconnected:
            sock.getpeername()  # refused before the kernel was asked: the socket never connected
    assert test in str(info.value) and isinstance(info.value, ConnectionRefusedError)
    assert unconnected.value.errno == errno.ENOTCONN
    with pytest.raises(netguard.NetworkRefusedError, match=f"{OUTSIDE_NAME}.*DNS"):
        socket.create_connection((OUTSIDE_NAME, 443), timeout=1)  # the name is never resolved
    with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as datagrams, \
            pytest.raises(netguard.NetworkRefusedError, match=r"\[2001:db8::1\]:53"):
        datagrams.sendto(b"x", ("2001:db8::1", 53))

    async def through_asyncio() -> None:
        import httpx

        async with httpx.AsyncClient(trust_env=False) as client:
            await client.get(f"https://{OUTSIDE[0]}/")

    with pytest.raises(Exception) as wrapped:  # httpx (through anyio) wraps it; the refusal stays in the chain
        anyio.run(through_asyncio)
    assert netguard.refused_in(wrapped.value)
    assert len(expected_refusals()) == 4 and all(test in message for message in expected_refusals())


def test_loopback_and_this_machines_own_addresses_stay_reachable():
    with socket.socket() as server:
        server.bind(("0.0.0.0", 0))
        server.listen()
        port = server.getsockname()[1]
        for host in ["127.0.0.1", "localhost", *sorted(a for a in netguard.local_addresses() if ":" not in a)]:
            socket.create_connection((host, port), timeout=5).close()
    assert netguard.is_local_address("::1") and netguard.is_local_address("::ffff:127.0.0.1")
    assert not netguard.is_local_address(OUTSIDE[0]) and not netguard.is_local_name(OUTSIDE_NAME)


def test_the_whole_process_is_in_a_network_namespace_with_no_way_out():
    """What the Python-level guard cannot see (native code, a child that never imports trl_sandbox, DNS) has no
    route out: only loopback exists in this process's network namespace, which its children share."""
    if _isolation.not_isolated is not None:
        pytest.skip(f"this process is not in a network namespace of its own: {_isolation.not_isolated}")
    probe = textwrap.dedent("""
        import json, socket
        interfaces = [line.split(":")[0].strip() for line in open("/proc/net/dev").read().splitlines()[2:]]
        out = {"interfaces": interfaces, "guard": socket.socket.connect is socket.socket.__base__.connect}
        try:
            socket.create_connection(("203.0.113.1", 443), timeout=5)
        except OSError as exc:
            out["connect"] = exc.errno
        try:
            socket.getaddrinfo("api.e2b.dev", 443)
        except OSError as exc:
            out["dns"] = type(exc).__name__
        print(json.dumps(out))
    """)
    # -I -S: no site-packages, no trl_sandbox, none of the suite's guard in it: only the namespace stands between
    result = subprocess.run([sys.executable, "-I", "-S", "-c", probe], capture_output=True, text=True, timeout=60)
    out = json.loads(result.stdout)
    assert out == {"interfaces": ["lo"], "guard": True, "connect": errno.ENETUNREACH, "dns": "gaierror"}, result


def test_a_native_http_client_reaches_nothing_outside(monkeypatch):
    """The ``e2b`` SDK does its HTTP in Rust (``pyqwest``), out of the Python guard's sight: the proxy variables send
    it to a loopback port that refuses (and the namespace has no route out anyway)."""
    e2b = pytest.importorskip("e2b")
    monkeypatch.delenv("E2B_API_URL", raising=False)
    monkeypatch.delenv("E2B_SANDBOX_URL", raising=False)

    async def kill() -> None:
        await e2b.AsyncSandbox.kill("i-nonexistent", api_key="k", request_timeout=10, retries=0)

    with pytest.raises(Exception) as info:
        anyio.run(kill)
    assert "api.e2b.app" in str(info.value) and "refused" in str(info.value).lower(), info.value


def test_a_child_process_that_imports_trl_sandbox_has_the_guard():
    code = "import socket, trl_sandbox\nsocket.create_connection(('203.0.113.1', 443), timeout=1)\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    test = os.environ["PYTEST_CURRENT_TEST"].split(" ")[0]
    assert result.returncode == 1 and "NetworkRefusedError" in result.stderr, result.stderr
    assert f"refused 203.0.113.1:443 in test {test}" in result.stderr, result.stderr


INNER = textwrap.dedent("""
    import socket

    from trl_sandbox import SandboxPool, lifecycle
    from trl_sandbox.backends.mock import MockBackend


    def test_leaks_a_pool():
        SandboxPool(MockBackend(), size=1, handle_signals=False).start()


    def test_after_the_leak():
        assert lifecycle.open_pools() == []


    def test_swallows_a_refusal():
        try:
            socket.create_connection(("203.0.113.1", 443), timeout=1)
        except OSError:
            pass


    def test_after_the_refusal():
        pass
""")


def test_a_leak_fails_the_test_that_made_it_and_no_other(pytester, monkeypatch):
    """An inner run of the suite's guards (``-p _isolation``): the test that leaves a pool open, and the one that
    swallows a refused connection, each fail at their teardown; the tests after them pass."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), str(REPO / "tests")]))
    pytester.makepyfile(test_inner=INNER)
    result = pytester.runpytest_subprocess("-p", "_isolation", "-p", "no:cacheprovider", "-p", "no:randomly",
                                           timeout=240)
    result.assert_outcomes(passed=4, errors=2)
    errors = [line for line in result.outlines if line.startswith("ERROR ")]
    assert [line.split(" - ")[0] for line in errors] == ["ERROR test_inner.py::test_leaks_a_pool",
                                                        "ERROR test_inner.py::test_swallows_a_refusal"], errors
    result.stdout.fnmatch_lines(["*this test left 1 sandbox pool(s) open (closed now; backend x size: mock x1)*",
                                 "*refused 203.0.113.1:443 in test test_inner.py::test_swallows_a_refusal*"])
