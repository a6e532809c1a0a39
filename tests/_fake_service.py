"""What the fakes of remote services (``fake_daytona.py``, ``fake_cwsandbox.py``) share: the server runs on an event
loop in a thread of its own, and each fake sandbox is a sandbox of the *local* backend, deleted at ``stop()``."""

from __future__ import annotations

import abc
import asyncio
import threading
import time
from pathlib import Path
from typing import Any

from trl_sandbox.backends.local import LocalBackend


class FakeService(abc.ABC):
    """Base class. Subclasses implement :meth:`_serve` (start the server on the loop, set ``self.url``) and
    :meth:`_close` (stop it), and keep their sandboxes in ``self.sandboxes`` (id -> record with a ``"local"``
    sandbox)."""

    #: Thread name, and the service's name in errors.
    name = "fake service"

    def __init__(self, root_dir: Path) -> None:
        self.root_dir = Path(root_dir)
        self.requests: list[tuple[Any, ...]] = []
        self.sandboxes: dict[str, dict[str, Any]] = {}
        self.created: list[str] = []
        self.deleted: list[str] = []
        #: Interactive commands (interpreter sessions) running now: id -> their local process.
        self.interactive: dict[str, Any] = {}
        self.url = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._local: LocalBackend | None = None

    def start(self) -> str:
        """Start the local backend and the server in their thread; return the server's URL."""
        ready = threading.Event()

        async def begin() -> None:
            self._local = LocalBackend(root_dir=self.root_dir, output_limit_bytes=1 << 20)
            await self._local.start()
            await self._serve()

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(begin())
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name=self.name, daemon=True)
        self._thread.start()
        if not ready.wait(60):
            raise RuntimeError(f"the {self.name} did not start")
        return self.url

    def stop(self) -> None:
        """Delete every local sandbox still there, stop the server and its thread."""
        if self._loop is None:
            return

        async def shutdown() -> None:
            for record in list(self.sandboxes.values()):
                await self._local.delete(record["local"])
            self.sandboxes.clear()
            await self._local.aclose()
            await self._close()

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(60)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def call(self, coroutine: Any) -> Any:
        """Run ``coroutine`` on the service's loop (from the test's thread) and return its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(60)

    def break_sessions(self) -> int:
        """Kill the process of every interactive command running now, as a sandbox that loses them would (out of
        memory, a runner restart); the service itself stays up. Returns how many were killed."""
        processes = list(self.interactive.values())

        async def kill_all() -> None:
            for process in processes:
                await process.terminate()

        self.call(kill_all())
        deadline = time.monotonic() + 30
        while any(p in self.interactive.values() for p in processes) and time.monotonic() < deadline:
            time.sleep(0.02)  # until the service has seen them end
        return len(processes)

    @property
    def alive(self) -> list[str]:
        """Ids of sandboxes that exist (created and not deleted)."""
        return sorted(self.sandboxes)

    @abc.abstractmethod
    async def _serve(self) -> None:
        """Start the server on this loop and set ``self.url``."""

    @abc.abstractmethod
    async def _close(self) -> None:
        """Stop the server."""
