"""What the fakes of remote services (``fake_daytona.py``, ``fake_e2b.py``, ``fake_hf.py``, ``fake_cwsandbox.py``)
share: the server runs on an event loop in a thread of its own, and each fake sandbox is a sandbox of the *local*
backend, deleted at ``stop()``. In the fakes of E2B, Daytona and HF, each fake sandbox's commands run through an
:class:`Agent` (``_fake_agent.py``), the fake's in-sandbox daemon: a working directory the command's user owns and
keeps, and processes that outlive the command that started them, as on those services."""

from __future__ import annotations

import abc
import asyncio
import base64
import contextlib
import itertools
import json
import shlex
import threading
import time
from pathlib import Path
from typing import Any

from _fake_agent import SOURCE as AGENT_SOURCE

from trl_sandbox.backends.base import ExecResult, SandboxProcess
from trl_sandbox.backends.local import LocalBackend
from trl_sandbox.errors import InfrastructureError


def humaneval_spread(rows: Any) -> list:
    """Every fourth of HumanEval's rows (41 of 164, spread over the set), the fake services' scoring tests' share:
    they test the service's transport; all 164 are scored on the local backend (``test_scoring``) and on Ray
    (``test_ray``), whose sandboxes run the same harness."""
    return list(rows)[::4]


class Agent:
    """The host's side of one fake sandbox's agent (see ``_fake_agent.py``): requests over its stdin, answers and
    output events from its stdout, read by one task of the service's loop. Start it with :meth:`start`.

    Attributes:
        work: The agent's working directory (where the service's ``/tmp/trl-sandbox`` maps to), a local path.
    """

    def __init__(self, process: Any, work: str) -> None:
        self.process, self.work = process, work
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future] = {}
        self._streams: dict[int, AgentProcess] = {}
        self._reader = asyncio.ensure_future(self._read())

    @classmethod
    async def start(cls, local: LocalBackend, sandbox: Any, env: dict[str, str], *, read_only: bool) -> Agent:
        """Start the agent in ``sandbox`` (a local backend's), commands getting ``env`` too; ``read_only``: its
        working directory is made unwritable after each upload (see ``_fake_agent.py``).

        Raises:
            InfrastructureError: it could not be started.
        """
        argv = [*sandbox.python, "-c", AGENT_SOURCE, "ro" if read_only else "rw", json.dumps(env)]
        process = await local.open_process(sandbox, argv, timeout_s=3600)
        try:
            ready = json.loads(await asyncio.wait_for(process.receive_line(1 << 20), 60))
        except BaseException:
            await process.kill()
            raise
        return cls(process, ready["work"])

    async def _read(self) -> None:
        error: BaseException = InfrastructureError("fake agent: it ended")
        try:
            while True:
                message = json.loads(await self.process.receive_line(1 << 28))
                stream = self._streams.get(message["id"])
                if stream is not None and "out" in message:
                    stream.queue.put_nowait(base64.b64decode(message["out"]))
                elif stream is not None and "exit" in message:
                    stream.exit_code = message["exit"]
                    stream.queue.put_nowait(None)
                    stream.done.set()
                    self._streams.pop(message["id"], None)
                else:
                    future = self._pending.pop(message["id"], None)
                    if future is not None and not future.done():
                        future.set_result(message)
        except Exception as exc:  # noqa: BLE001 - the agent (or its sandbox) is gone: every waiter learns it
            error = InfrastructureError(f"fake agent: {exc}")
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(error)
            self._pending.clear()
            for stream in self._streams.values():
                stream.queue.put_nowait(None)
                stream.done.set()
            self._streams.clear()

    async def request(self, message: dict) -> dict:
        """Send one request (an ``id`` is added) and wait for its answer.

        Raises:
            InfrastructureError: the agent is gone, or answered an error.
        """
        message["id"] = request_id = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        if self._reader.done():
            raise InfrastructureError("fake agent: it ended")
        await self.process.send((json.dumps(message) + "\n").encode())
        answer = await future
        if "error" in answer:
            raise InfrastructureError(f"fake agent: {answer['error']}")
        return answer

    async def run(self, command: str, *, stdin: bytes = b"", timeout_s: float | None = None) -> ExecResult:
        """Run ``/bin/sh -c command`` in the working directory's sandbox; its process group is killed at
        ``timeout_s`` (None: never), what it left running stays."""
        answer = await self.request({"op": "run", "command": command, "timeout": timeout_s,
                                     "stdin": base64.b64encode(stdin).decode()})
        return ExecResult(exit_code=answer["exit_code"], stdout=base64.b64decode(answer["stdout"]),
                          stderr=base64.b64decode(answer["stderr"]), duration_s=answer["duration_s"],
                          timed_out=answer["timed_out"], output_truncated=answer["truncated"])

    async def write(self, path: str, data: bytes, *, offset: int | None = None,
                    truncate_to: int | None = None) -> None:
        """Write ``data`` to ``path`` (relative to :attr:`work`), as the service's file API does."""
        message: dict[str, Any] = {"op": "write", "path": path, "data": base64.b64encode(data).decode()}
        if offset is not None:
            message["offset"] = offset
        if truncate_to is not None:
            message["truncate_to"] = truncate_to
        await self.request(message)

    async def spawn(self, command: str) -> AgentProcess:
        """Start ``/bin/sh -c command`` as an interactive process (its stdin open, its stdout streamed)."""
        process = AgentProcess(self)
        message = {"op": "start", "command": command}
        message["id"] = process.id = next(self._ids)
        self._streams[process.id] = process
        future = asyncio.get_running_loop().create_future()
        self._pending[process.id] = future
        await self.process.send((json.dumps(message) + "\n").encode())
        await future
        return process

    def local_path(self, text: str, remote_workdir: str) -> str:
        """``text`` (a command or a path) with the service's working directory replaced by :attr:`work`."""
        return text.replace(remote_workdir, self.work)

    async def close(self) -> None:
        """Stop the agent (its local execution: everything it runs dies with it) and its reader."""
        await self.process.kill()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):  # its own end, else our cancellation
            await self._reader


class AgentProcess(SandboxProcess):
    """An interactive command of an :class:`Agent`, with the interface of a local backend's process (``send``,
    ``receive_line``, ``close_input``, ``wait``, ``terminate``, ``kill``)."""

    def __init__(self, agent: Agent) -> None:
        super().__init__("fake service")
        self.agent = agent
        self.id = 0
        self.queue: asyncio.Queue = asyncio.Queue()
        self.done = asyncio.Event()
        self.exit_code: int | None = None

    async def send(self, data: bytes) -> None:
        if self.done.is_set():
            raise InfrastructureError("fake service: the process has ended")
        await self.agent.request({"op": "send", "process": self.id, "data": base64.b64encode(data).decode()})

    async def _next_chunk(self) -> bytes | None:
        return await self.queue.get()

    async def close_input(self) -> None:
        """Close the process's stdin."""
        if not self.done.is_set():
            await self.agent.request({"op": "close_input", "process": self.id})

    async def wait(self) -> int | None:
        """Its exit status once it ended (``128 + N`` when killed by signal ``N``); None when its agent went away."""
        await self.done.wait()
        return self.exit_code

    async def terminate(self) -> None:
        """Kill its process group (what a service does when it loses the process)."""
        if not self.done.is_set():
            with contextlib.suppress(InfrastructureError):  # the agent is gone: so is the process
                await self.agent.request({"op": "kill", "process": self.id})

    async def kill(self, *, wait_s: float = 0.0) -> None:
        await self.terminate()


class ImageAgent:
    """The agent of a fake sandbox made from an image (a repository task's): the interface of :class:`Agent`
    (``run``, ``write``, ``local_path``, ``close``) over the local backend's trees of that image. The service's
    working directory is the image's own ``/tmp/trl-sandbox`` (paths are not rewritten); what is written there is
    kept here and put in each command's tree, and each command runs in a fresh tree as ``/bin/sh -c``, the tree's
    PID 1, so the service's command is not PID 1. As on a service, the command's output ends only once nothing it
    started is left (5 s at most): a process the command left behind can still write to it.

    Args:
        local: The service's local backend. sandbox: The fake sandbox's local sandbox. image: The image (a
        :class:`trl_sandbox.images.Image` of the fake's :attr:`FakeService.images`). remote_workdir: The service's
        working directory (absolute, in the image).
    """

    def __init__(self, local: LocalBackend, sandbox: Any, image: Any, remote_workdir: str) -> None:
        self.local, self.sandbox, self.image, self.remote_workdir = local, sandbox, image, remote_workdir
        self.work = remote_workdir
        self.files: dict[str, bytes] = {}

    async def write(self, path: str, data: bytes, *, offset: int | None = None,
                    truncate_to: int | None = None) -> None:
        """Keep ``data`` for ``path`` (relative to the working directory); ``offset`` and ``truncate_to`` are not
        supported here."""
        assert offset is None and truncate_to is None, "not used by repository tasks"
        self.files[path] = bytes(data)

    async def run(self, command: str, *, stdin: bytes = b"", timeout_s: float | None = None) -> ExecResult:
        """Run ``/bin/sh -c command`` in a fresh tree of the image holding the files written so far."""
        assert not stdin, "repository tasks send no stdin"
        paths = [f"{self.remote_workdir}/{name}" for name in self.files]
        prelude = "".join(f"mkdir -p {shlex.quote(path.rsplit('/', 1)[0])} && cat /dev/fd/{3 + i} > "
                          f"{shlex.quote(path)} || exit 126\n" for i, path in enumerate(paths))
        linger = ("i=0; while [ $i -lt 50 ]; do set -- /proc/[0-9]*; [ $# -le 1 ] && break; i=$((i + 1)); "
                  "sleep 0.1; done")
        script = (f"mkdir -p {shlex.quote(self.remote_workdir)} || exit 126\n{prelude}( {command}\n); status=$?\n"
                  f"{linger}\nexit $status\n")
        return await self.local.exec_in_image(self.sandbox, self.image, ["/bin/sh", "-c", script],
                                              timeout_s=timeout_s or 3600, inputs=list(self.files.values()))

    def local_path(self, text: str, remote_workdir: str) -> str:
        """``text`` unchanged: the image has the service's working directory itself."""
        return text

    async def spawn(self, command: str) -> AgentProcess:
        raise InfrastructureError("fake service: a sandbox made from an image keeps no interactive process here")

    async def close(self) -> None:
        """Nothing to stop: each command's tree ended with it."""


class FakeService(abc.ABC):
    """Base class. Subclasses implement :meth:`_serve` (start the server on the loop, set ``self.url``) and
    :meth:`_close` (stop it), and keep their sandboxes in ``self.sandboxes`` (id -> record with a ``"local"``
    sandbox)."""

    #: Thread name, and the service's name in errors.
    name = "fake service"

    def __init__(self, root_dir: Path) -> None:
        self.root_dir = Path(root_dir)
        #: Sandboxes created while True get a working directory their commands' user cannot write (an agent in
        #: read-only mode): the harness cannot remove a request file there.
        self.read_only_workdir = False
        self.requests: list[tuple[Any, ...]] = []
        self.sandboxes: dict[str, dict[str, Any]] = {}
        self.created: list[str] = []
        self.deleted: list[str] = []
        #: Creations under way (entered with :meth:`_creating` before their first ``await``): a cap or a quota
        #: checked against ``len(self.sandboxes) + self.creating`` or ``len(self.created) + self.creating`` cannot
        #: be passed by creations that run concurrently on the loop.
        self.creating = 0
        #: Interactive commands (interpreter sessions) running now: id -> their local process.
        self.interactive: dict[str, Any] = {}
        self.url = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._local: LocalBackend | None = None
        #: Where the images sandboxes can be made from are (an :class:`~trl_sandbox.images.ImageCache`; None: none).
        self.images: Any = None

    def start(self) -> str:
        """Start the local backend and the server in their thread; return the server's URL."""
        ready = threading.Event()

        async def begin() -> None:
            self._local = LocalBackend(root_dir=self.root_dir, output_limit_bytes=1 << 20)
            await self._local.start()
            # /proc readable by the commands (Landlock's read-only list of every sandbox made from now on), as in a
            # service's sandbox: the harness finds there the processes a program left, and a program can look there
            # for the request. A private attribute of the local backend: this test fake alone reaches for it.
            self._local._reads.widen(["/proc"])
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
                await self._delete_local(record)
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

    @contextlib.contextmanager
    def _creating(self) -> Any:
        """Count a creation in :attr:`creating` while it runs. Enter it right after checking a cap, with no
        ``await`` in between (the check and the count are then one step of the loop), and leave it once the
        sandbox is in ``self.sandboxes`` and ``self.created`` (or the creation failed)."""
        self.creating += 1
        try:
            yield
        finally:
            self.creating -= 1

    def image_error(self, name: str | None) -> str | None:
        """Why a sandbox cannot be made from the image ``name`` (None: it can, or no image was asked for)."""
        if name is None:
            return None
        if self.images is None:
            return f"image {name!r} not found (this fake has no images)"
        try:
            self.images.get(name)
        except Exception as exc:  # noqa: BLE001 - ImageError: the service's answer
            return f"image {name!r} not found: {exc}"
        return None

    async def _new_local(self, labels: dict[str, str], env: dict[str, str] | None = None,
                         image: str | None = None, remote_workdir: str = "/tmp/trl-sandbox") -> dict[str, Any]:
        """A record of a new fake sandbox: ``{"local": its local sandbox, "agent": its Agent}``; ``env``: the
        service's environment variables of the sandbox (every command gets them); ``image``: a sandbox made from
        that image of :attr:`images` (its agent an :class:`ImageAgent`; check :meth:`image_error` first)."""
        local = await self._local.create(labels)
        if image is not None:
            return {"local": local, "agent": ImageAgent(self._local, local, self.images.get(image), remote_workdir),
                    "image": image}
        try:
            agent = await Agent.start(self._local, local, {str(k): str(v) for k, v in (env or {}).items()},
                                      read_only=self.read_only_workdir)
        except BaseException:
            await self._local.delete(local)
            raise
        return {"local": local, "agent": agent}

    async def _delete_local(self, record: dict[str, Any]) -> None:
        """Delete a fake sandbox's agent (if any) and local sandbox."""
        if record.get("agent") is not None:
            await record["agent"].close()
        await self._local.delete(record["local"])

    @property
    def alive(self) -> list[str]:
        """Ids of sandboxes that exist (created and not deleted)."""
        return sorted(self.sandboxes)

    @property
    def leftovers(self) -> list[str]:
        """What a test must not leave on the service: by default the sandboxes :attr:`alive`."""
        return self.alive

    def reap(self) -> list[str]:
        """Delete the :attr:`leftovers` (as the service's API would), so that the next test starts clean, and return
        what they were (sorted; empty when there were none). The ``service`` fixtures fail the test that left them,
        and that test only: the fake is shared by a whole module."""
        left = self.leftovers
        if left:
            self.call(self._reap())
        return left

    async def _reap(self) -> None:
        for sandbox_id in list(self.sandboxes):
            await self._remove(sandbox_id)

    async def _remove(self, sandbox_id: str) -> bool:
        """Delete one sandbox (its agent, its local sandbox) and record it in ``deleted``; False when there is no
        sandbox of that id."""
        record = self.sandboxes.pop(sandbox_id, None)
        if record is None:
            return False
        await self._delete_local(record)
        self.deleted.append(sandbox_id)
        return True

    @abc.abstractmethod
    async def _serve(self) -> None:
        """Start the server on this loop and set ``self.url``."""

    @abc.abstractmethod
    async def _close(self) -> None:
        """Stop the server."""
