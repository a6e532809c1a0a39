"""What keeps this suite on this machine, and each test to itself: a pytest plugin (``conftest.py`` loads it; the
inner runs of ``test_isolation.py`` load it with ``-p _isolation``).

**No test may address a host outside this machine.** At configure time, for the whole process and all it starts
(see :mod:`trl_sandbox.netguard`):

1. the process moves into a network namespace of its own whose only interface is loopback (``netguard.isolate``,
   when it runs as root with one thread): every child process, Ray's nodes, native HTTP and gRPC clients, DNS and
   the interpreter-exit backstops (``atexit``, which run after every fixture) inherit it, and no packet can leave;
2. the Python-level guard (``netguard.install``) refuses every connection, datagram or name lookup that is not for
   loopback, AF_UNIX or this machine's own addresses, with an error naming the address and the test, and records
   it: a test that made one fails, even if the code under test swallowed the error;
3. the environment every child process inherits: ``TRL_SANDBOX_LOCAL_NETWORK_ONLY`` (a child that imports
   ``trl_sandbox`` installs the guard of 2), and ``HTTP(S)_PROXY``/``ALL_PROXY`` pointing at a loopback port that
   refuses connections, with ``NO_PROXY`` listing this machine's names and addresses: an HTTP client that honours
   them (httpx, requests, aiohttp with ``trust_env``, the ``e2b`` SDK's Rust client ``pyqwest``) reaches nothing
   else, even where 1 is not available.

Not covered where 1 is not available (not root, or threads already running): native code that ignores the proxy
variables (gRPC's C core to a host missing from ``NO_PROXY`` honours them; a raw C socket does not), and child
processes that never import ``trl_sandbox``. The sandboxes' own programs are not this guard's concern: the local
backend runs them in an empty network namespace of their own.

**A leak fails the test that made it, and only that one.** A sandbox pool the test started (during its call) and
left open is closed before its fixtures are torn down (while the fakes it used still answer, with their
environment), and the test fails at teardown; the process-wide pools that ``code_reward`` and ``CodeEnvironment``
keep on purpose until interpreter exit are not leaks. The fakes of remote services delete what a test left on them
in their ``service`` fixtures (``FakeService.reap``).
"""

from __future__ import annotations

import os
import socket
import weakref
from pathlib import Path

import pytest

from trl_sandbox import lifecycle, netguard

_POOLS_BEFORE = pytest.StashKey[weakref.WeakSet]()
_REFUSALS_BEFORE = pytest.StashKey[int]()
_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")

#: Why the process is not in a network namespace of its own (None: it is); set at configure time.
not_isolated: str | None = "not configured yet"
#: A loopback socket bound and never listening: connections to its port are refused (the proxies' address).
_refusing: socket.socket | None = None
_OWNER = pytest.StashKey[bool]()
#: How many refusals (``netguard.refusals()``) have been looked at, by a test or as one outside any test.
_seen = 0
#: Refusals outside any test (collection, between tests): reported at the session's end.
_outside: list[str] = []


#: Set by a process that moved itself into a network namespace of its own: its children are in it too.
_ISOLATED_ENV = "TRL_SANDBOX_TESTS_NETNS"


def _only_loopback() -> bool:
    """Whether this process's network namespace has no interface but loopback."""
    try:
        lines = Path("/proc/net/dev").read_text().splitlines()[2:]
    except OSError:
        return False
    return [line.split(":")[0].strip() for line in lines] == ["lo"]


def _local_names() -> list[str]:
    return sorted({"127.0.0.1", "::1", *netguard.local_addresses(), *netguard.local_names()})


def pytest_configure(config: pytest.Config) -> None:
    global not_isolated, _refusing
    if _refusing is not None:
        return  # configured already (an in-process inner run): once per process
    not_isolated = netguard.isolate()
    if not_isolated is None:
        os.environ[_ISOLATED_ENV] = "1"  # pytest-xdist's workers, started after this, inherit the namespace
    elif os.environ.get(_ISOLATED_ENV) == "1" and _only_loopback():
        not_isolated = None  # a pytest-xdist worker (its own threads already run): in its controller's namespace
    netguard.install()
    _refusing = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    _refusing.bind(("127.0.0.1", 0))  # held until the run ends: no one else can listen there
    config.stash[_OWNER] = True
    proxy = f"http://127.0.0.1:{_refusing.getsockname()[1]}"
    for name in _PROXY_VARIABLES:
        os.environ[name] = proxy
    os.environ["NO_PROXY"] = os.environ["no_proxy"] = ",".join(_local_names())
    os.environ[netguard.ENV] = "1"


def pytest_unconfigure(config: pytest.Config) -> None:
    """Close the refusing proxy's socket at the end (it was held for the whole run; left to the interpreter's exit,
    it ended the run with an unclosed-socket ResourceWarning)."""
    global _refusing
    if _refusing is not None and config.stash.get(_OWNER, False):  # the run that opened it (not an inner one)
        _refusing.close()
        _refusing = None


def pytest_report_header(config: pytest.Config) -> str:
    where = "its own network namespace (loopback only)" if not_isolated is None else \
        f"the host's network namespace ({not_isolated})"
    return f"network: this process is in {where}; the socket guard of trl_sandbox.netguard is on"


def _process_wide_pools() -> list[object]:
    """The pools kept open on purpose until interpreter exit: ``code_reward``'s default scorer's and
    ``CodeEnvironment``'s per-process scorers'."""
    from trl_sandbox import environment, rewards

    scorers = [rewards._default_scorer, *environment._PROCESS_SCORERS.values()]  # noqa: SLF001
    return [scorer.pool for scorer in scorers if scorer is not None]


@pytest.fixture
def expected_refusals(request: pytest.FixtureRequest):
    """For a test that makes the network guard refuse on purpose: a function that returns the refusals since the
    test began (messages, oldest first); they do not fail the test."""
    start = len(netguard.refusals())
    yield lambda: netguard.refusals()[start:]
    request.node.stash[_REFUSALS_BEFORE] = len(netguard.refusals())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    global _seen
    refused = netguard.refusals()
    _outside.extend(refused[_seen:])
    item.stash[_REFUSALS_BEFORE] = _seen = len(refused)
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    item.stash[_POOLS_BEFORE] = weakref.WeakSet(lifecycle.open_pools())
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    global _seen
    problems = []
    before = item.stash.get(_POOLS_BEFORE, None)
    if before is not None:
        kept = _process_wide_pools()
        leaked = [p for p in lifecycle.open_pools() if p not in before and not any(p is k for k in kept)]
        for pool in leaked:
            pool.close()
        if leaked:
            what = ", ".join(f"{getattr(getattr(p, 'backend', None), 'name', '?')} x{getattr(p, 'size', '?')}"
                             for p in leaked)
            problems.append(f"this test left {len(leaked)} sandbox pool(s) open (closed now; backend x size: "
                            f"{what})")
    error = None
    try:
        result = yield  # the fixtures' teardown
    except BaseException as exc:  # noqa: BLE001 - raised again below, with what this test also did
        error = exc
    refused = netguard.refusals()
    start = item.stash.get(_REFUSALS_BEFORE, len(refused))
    if len(refused) > start:
        problems.append(f"this test tried to reach a host outside this machine ({len(refused) - start} time(s)):\n"
                        + "\n".join(refused[start:]))
    _seen = len(refused)
    if error is not None:
        for problem in problems:
            error.add_note(problem)
        raise error
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)
    return result


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    refused = _outside + netguard.refusals()[_seen:]
    if refused:  # outside any test: collection, or between two tests
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line("\n".join(["attempts to reach a host outside this machine, outside any test:",
                                           *refused]), red=True)
