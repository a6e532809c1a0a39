"""The ``mock`` backend: a real implementation of the backend contract that calls a handler function instead of
running anything. Users and our own tests drive scoring and the trainer with it from pytest (see
:mod:`trl_sandbox.testing` for the fixture and reply helpers).
"""

from __future__ import annotations

import inspect
import itertools
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from ..errors import ConfigurationError, InfrastructureError
from ..harness.archive import HARNESS_NAME
from .base import Backend, ExecResult, Sandbox

#: The files the tests see the harness under: requests whose argv ends with it carry a harness request.
_HARNESS_SUFFIX = HARNESS_NAME


@dataclass
class ExecRequest:
    """What :class:`MockBackend` passes to its handler for one ``exec`` call.

    Attributes:
        sandbox: The sandbox the command runs in.
        argv: The command.
        stdin: Its standard input (bytes).
        timeout_s: Its timeout, seconds.
    """

    sandbox: Sandbox
    argv: list[str]
    stdin: bytes
    timeout_s: float

    @property
    def harness(self) -> dict[str, Any] | None:
        """The decoded harness request when the command runs the test harness, else None. Keys: ``mode``,
        ``program``, ``tests``, ``func_name``... (see :mod:`trl_sandbox.harness`)."""
        if self.argv and self.argv[-1].endswith(_HARNESS_SUFFIX):
            return json.loads(self.stdin)
        return None


Handler = Callable[[ExecRequest], "ExecResult | Awaitable[ExecResult]"]


@dataclass(eq=False)
class MockBackend(Backend):
    """A backend whose ``exec`` calls ``handler(ExecRequest) -> ExecResult`` (sync or async).

    The handler may raise :class:`~trl_sandbox.errors.InfrastructureError` to simulate a failed sandbox, sleep to
    simulate latency, or build its reply with :func:`trl_sandbox.testing.harness_reply`.

    Args:
        handler: The exec handler. Default: every command fails with an infrastructure error saying no handler
            was set.
        create_latency_s: Seconds each ``create`` takes (to measure pool creation concurrency).
        exec_latency_s: Seconds added to each ``exec`` round trip (a remote-like backend).
        fail_create: When set, ``create`` raises :class:`InfrastructureError` once this many sandboxes exist.

    Attributes:
        live: Sandboxes created and not yet deleted, by id.
        created, deleted: Ids, in order.
        requests: Every :class:`ExecRequest`, in order.
    """

    handler: Handler | None = None
    create_latency_s: float = 0.0
    exec_latency_s: float = 0.0
    fail_create: int | None = None
    live: dict[str, Sandbox] = field(default_factory=dict)
    created: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    requests: list[ExecRequest] = field(default_factory=list)
    name: str = "mock"

    def __post_init__(self) -> None:
        self._ids = itertools.count()

    async def create(self, labels: Mapping[str, str]) -> Sandbox:
        """Create a mock sandbox (after ``create_latency_s``)."""
        if self.create_latency_s:
            await anyio.sleep(self.create_latency_s)
        if self.fail_create is not None and len(self.live) >= self.fail_create:
            raise InfrastructureError(f"mock: creation refused after {self.fail_create} sandboxes")
        sandbox = Sandbox(
            id=f"mock-{next(self._ids)}", labels=dict(labels), workdir="/sandbox", python=["python3"], data={}
        )
        self.live[sandbox.id] = sandbox
        self.created.append(sandbox.id)
        return sandbox

    async def write_files(self, sandbox: Sandbox, files: Mapping[str, bytes]) -> None:
        """Store ``files`` in ``sandbox.data``."""
        self._check(sandbox)
        sandbox.data.update(files)

    async def exec(
        self, sandbox: Sandbox, argv: Sequence[str], *, stdin: bytes = b"", timeout_s: float
    ) -> ExecResult:
        """Call the handler with an :class:`ExecRequest` (after ``exec_latency_s``)."""
        self._check(sandbox)
        request = ExecRequest(sandbox, list(argv), stdin, timeout_s)
        self.requests.append(request)
        if self.exec_latency_s:
            await anyio.sleep(self.exec_latency_s)
        if self.handler is None:
            raise InfrastructureError("mock backend: no handler set (assign MockBackend.handler)")
        reply = self.handler(request)
        if inspect.isawaitable(reply):
            reply = await reply
        if not isinstance(reply, ExecResult):
            raise TypeError(f"mock handler must return an ExecResult, got {type(reply).__name__}")
        return reply

    async def delete(self, sandbox: Sandbox) -> None:
        """Forget ``sandbox``."""
        if self.live.pop(sandbox.id, None) is not None:
            self.deleted.append(sandbox.id)

    async def list(self, labels: Mapping[str, str]) -> list[Sandbox]:
        """Live sandboxes whose labels include ``labels``."""
        return [s for s in self.live.values() if all(s.labels.get(k) == v for k, v in labels.items())]

    def _check(self, sandbox: Sandbox) -> None:
        if sandbox.id not in self.live:
            raise InfrastructureError(f"mock: sandbox {sandbox.id} does not exist")


_installed: list[MockBackend] = []


def install(backend: MockBackend) -> None:
    """Make ``backend`` what the name ``"mock"`` resolves to (used by the pytest fixture)."""
    _installed.append(backend)


def uninstall(backend: MockBackend) -> None:
    """Undo :func:`install`."""
    if backend in _installed:
        _installed.remove(backend)


def installed_mock_backend() -> MockBackend:
    """The backend the name ``"mock"`` resolves to.

    Raises:
        ConfigurationError: no mock backend is installed (outside the ``mock_sandbox_backend`` fixture).
    """
    if not _installed:
        raise ConfigurationError(
            "the 'mock' sandbox backend exists only in tests: use the `mock_sandbox_backend` pytest fixture "
            "(from trl_sandbox.testing), or pass a MockBackend instance as the backend"
        )
    return _installed[-1]
