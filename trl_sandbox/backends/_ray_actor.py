"""The Ray actor behind one ``ray`` backend sandbox (see :mod:`.ray`): one local-backend sandbox, in the actor's own
process on the node Ray placed it on, with the local backend's isolation layers and nothing else.

This module never imports Ray at import time: :class:`~trl_sandbox.backends.ray.RayBackend` wraps
:class:`SandboxActor` with ``ray.remote`` when it starts. Every method is async (a Ray async actor): one actor serves a
creation, its executions and an interpreter session at once, on the actor's event loop, which the local backend (anyio)
runs on.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping, Sequence
from typing import Any

from .base import ExecResult, Sandbox, SandboxProcess

#: Label of the local sandbox an actor holds (value: the actor process's pid): an actor that starts deletes the local
#: sandboxes of its node whose actor process is gone (killed with ``ray.kill`` or with its node's raylet).
ACTOR_PID_LABEL = "trl-sandbox-ray-actor-pid"


def ordinary_priority() -> None:
    """Run every thread of this process at nice 0 where it may (root, ``CAP_SYS_NICE``); elsewhere leave it.

    Ray starts its workers at nice 15 (its ``worker_niceness`` setting, so that they yield to the raylet and the
    driver): a weight of 1/29 of an ordinary process. An actor's work is its sandbox's executions, which the local
    backend already bounds (one core per sandbox, the host's admission limit); at nice 15, beside two busy processes
    on 2 cores, importing the local backend in the actor took 4.1 s instead of 0.2 s and a pool of 4 actors took
    21 s to start instead of 4 s. Niceness is per thread on Linux, and the threads Ray started before the actor
    keep theirs, so each thread is set (those started later inherit it). Without the privilege, start the cluster
    with ``RAY_worker_niceness=0`` (docs/backends.md).
    """
    try:
        threads = [int(tid) for tid in os.listdir("/proc/self/task")]
    except OSError:
        threads = [0]
    for tid in threads:
        try:
            if os.getpriority(os.PRIO_PROCESS, tid) > 0:
                os.setpriority(os.PRIO_PROCESS, tid, 0)
        except OSError:  # no privilege to lower it, or the thread ended
            pass


class SandboxActor:
    """One local-backend sandbox, served to the driver through async methods (wrapped by ``ray.remote``).

    Args:
        labels: The ray sandbox's labels; its local sandbox carries them too (plus :data:`ACTOR_PID_LABEL`).
        local_options: Keyword arguments of :class:`~trl_sandbox.backends.local.LocalBackend`.
    """

    def __init__(self, labels: Mapping[str, str], local_options: Mapping[str, Any]) -> None:
        ordinary_priority()
        self.labels = dict(labels)
        self.local_options = dict(local_options)
        self.backend: Any = None
        self.sandbox: Sandbox | None = None
        self.processes: dict[int, SandboxProcess] = {}
        self._ids = itertools.count(1)

    async def setup(self) -> dict[str, Any]:
        """Start the local backend (its isolation probe) and create the sandbox; return what the driver's handle needs.

        Raises:
            IsolationUnavailableError: this node cannot isolate code (see the local backend).
            InfrastructureError: the local sandbox could not be created.
        """
        import ray

        ordinary_priority()  # the event loop's thread, which starts the sandbox's processes
        from .local import LocalBackend

        self.backend = LocalBackend(**self.local_options)
        await self.backend.start()
        await self._sweep_dead_actors()
        self.sandbox = await self.backend.create({**self.labels, ACTOR_PID_LABEL: str(os.getpid())})
        return {
            "workdir": self.sandbox.workdir,
            "python": list(self.sandbox.python),
            "node_id": ray.get_runtime_context().get_node_id(),
            "pid": os.getpid(),
            "describe": self.backend.describe(),
        }

    async def _sweep_dead_actors(self) -> None:
        """Delete this node's local sandboxes left by actors whose process is gone (best effort)."""
        from ._host import process_alive

        try:
            for leftover in await self.backend.list({}):
                pid = leftover.labels.get(ACTOR_PID_LABEL, "")
                if pid.isdigit() and not process_alive(int(pid)):
                    await self.backend.delete(leftover)
        except Exception:  # noqa: BLE001 - a leftover directory must not stop a creation
            pass

    def _require(self) -> Sandbox:
        if self.sandbox is None:
            from ..errors import InfrastructureError

            raise InfrastructureError("ray backend: this actor's sandbox is deleted")
        return self.sandbox

    async def node_id(self) -> str:
        """The id of the Ray node this actor runs on."""
        import ray

        return ray.get_runtime_context().get_node_id()

    async def labels_of(self) -> dict[str, str]:
        """The sandbox's labels."""
        return dict(self.labels)

    async def write_files(self, files: Mapping[str, bytes]) -> None:
        await self.backend.write_files(self._require(), files)

    async def exec(self, argv: Sequence[str], stdin: bytes, timeout_s: float) -> ExecResult:
        return await self.backend.exec(self._require(), argv, stdin=stdin, timeout_s=timeout_s)

    async def exec_in_image(self, name: str, cache: str | None, argv: Sequence[str], timeout_s: float,
                            inputs: Sequence[bytes], env: Mapping[str, str], workdir: str | None,
                            limits: Any) -> ExecResult:
        """Run ``argv`` in a tree of the image ``name`` of this node's image cache ``cache`` (None: the node's
        default), as :meth:`~trl_sandbox.backends.local.LocalBackend.exec_in_image` does.

        Raises:
            InfrastructureError: the image is not in this node's cache, or the tree could not be run.
        """
        import anyio.to_thread

        from ..errors import InfrastructureError
        from ..images import ImageCache, ImageError

        try:
            image = await anyio.to_thread.run_sync(ImageCache(cache).get, name)
        except ImageError as exc:
            import socket

            raise InfrastructureError(f"ray backend: node {socket.gethostname()}: {exc}") from None
        return await self.backend.exec_in_image(self._require(), image, argv, timeout_s=timeout_s, inputs=inputs,
                                                env=env, workdir=workdir, limits=limits)

    async def delete(self) -> None:
        """Kill the session processes, delete the local sandbox and close the local backend. Idempotent."""
        for key in list(self.processes):
            process = self.processes.pop(key)
            try:
                await process.kill()
            except Exception:  # noqa: BLE001 - the sandbox's deletion below kills what is left
                pass
        sandbox, self.sandbox = self.sandbox, None
        if self.backend is not None:
            if sandbox is not None:
                await self.backend.delete(sandbox)
            await self.backend.aclose()

    # -- interpreter sessions (Backend.open_process) ----------------------------------------------------------------

    async def process_start(self, argv: Sequence[str], timeout_s: float) -> int:
        process = await self.backend.open_process(self._require(), argv, timeout_s=timeout_s)
        key = next(self._ids)
        self.processes[key] = process
        return key

    def _process(self, key: int) -> SandboxProcess:
        process = self.processes.get(key)
        if process is None:
            from ..errors import InfrastructureError

            raise InfrastructureError("ray backend: the session process is closed")
        return process

    async def process_send(self, key: int, data: bytes) -> None:
        await self._process(key).send(data)

    async def process_next_chunk(self, key: int) -> bytes | None:
        """The next piece of the process's stdout (None at its end)."""
        return await self._process(key)._next_chunk()

    async def process_kill(self, key: int, wait_s: float) -> None:
        process = self.processes.pop(key, None)
        if process is not None:
            await process.kill(wait_s=wait_s)
