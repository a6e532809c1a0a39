"""The local backend's fork servers, one per sandbox (see ``_forkserver.py``), kept current with what sandboxes may
read.

A fork server restricts itself with Landlock once, when it starts, and cannot widen its own domain afterwards. When
the backend's read-only list grows (a toolchain found after the backend started, see ``_toolchains.py``), the
servers started before are stale: each is restarted before its next execution.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio

from ..errors import InfrastructureError
from ._executions import ForkServer
from .base import Sandbox


class ForkServers:
    """The running fork servers of a local backend's sandboxes, by sandbox id.

    Args:
        launch: The launcher command and config of a sandbox's server, as of now (they name the read-only list).
    """

    def __init__(self, launch: Callable[[Sandbox], tuple[list[str], dict]]) -> None:
        self._launch = launch
        self._servers: dict[str, ForkServer] = {}
        self._versions: dict[str, int] = {}  # the version of the list each server started with
        self._version = 0
        self._restart_lock: anyio.Lock | None = None
        #: Sandboxes whose deletion has begun (:meth:`delete`): no execution starts on them any more. One that did
        #: (Ctrl-C during a batch: the closing pool deletes the sandboxes executions still hold) would find no server
        #: and run a launcher of its own, whose scratch directory in the tree being removed could outlive the deletion.
        self._deleted: set[str] = set()

    def __contains__(self, sandbox_id: str) -> bool:
        return sandbox_id in self._servers

    def get(self, sandbox_id: str) -> ForkServer | None:
        """The server of ``sandbox_id`` (None without one), stale or not."""
        return self._servers.get(sandbox_id)

    def outdate(self) -> None:
        """Mark every running server stale: the read-only list grew."""
        self._version += 1

    async def start(self, sandbox: Sandbox) -> ForkServer:
        """Start ``sandbox``'s server.

        Raises:
            InfrastructureError: it did not start.
        """
        version = self._version  # the list that launch() reads now (it may grow while the server starts)
        server = await ForkServer.start(self._launch(sandbox), Path(sandbox.data))
        self._servers[sandbox.id] = server
        self._versions[sandbox.id] = version
        return server

    async def current(self, sandbox: Sandbox) -> ForkServer | None:
        """``sandbox``'s server (None without one), restarted first when stale (which ends what it runs).

        Raises:
            InfrastructureError: the sandbox's deletion has begun, or the new server did not start (the sandbox has
                none then).
        """
        if sandbox.id in self._deleted:
            raise InfrastructureError(f"local backend: sandbox {sandbox.id} does not exist (it was deleted)")
        server = self._servers.get(sandbox.id)
        if server is None or self._versions.get(sandbox.id) == self._version:
            return server
        if self._restart_lock is None:
            self._restart_lock = anyio.Lock()
        async with self._restart_lock:  # one restart, however many executions arrive at once
            server = self._servers.get(sandbox.id)
            if server is None or self._versions.get(sandbox.id) == self._version:
                return server
            await self.stop(sandbox.id)
            return await self.start(sandbox)

    async def stop(self, sandbox_id: str) -> None:
        """Stop ``sandbox_id``'s server (killing what it runs), if it has one. Not cancellable."""
        server = self._servers.pop(sandbox_id, None)
        self._versions.pop(sandbox_id, None)
        if server is not None:
            with anyio.CancelScope(shield=True):
                await server.stop()

    async def delete(self, sandbox_id: str) -> None:
        """Stop ``sandbox_id``'s server for good: the sandbox is being deleted, and no execution starts on it from
        now on (:meth:`current` raises). Not cancellable."""
        self._deleted.add(sandbox_id)
        await self.stop(sandbox_id)

    async def stop_all(self) -> None:
        """Stop every server."""
        for sandbox_id in list(self._servers):
            await self.stop(sandbox_id)
