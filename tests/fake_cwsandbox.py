"""A local fake of the CoreWeave Sandbox gRPC API, for running the real ``cwsandbox`` SDK without a network.

It is a ``grpc.aio`` server on 127.0.0.1 built from the SDK's own generated servicer base class
(``cwsandbox._proto.sandbox_pb2_grpc.SandboxServiceServicer``) and messages, so the client talks to it as it talks to
the real control plane (``CWSANDBOX_BASE_URL=http://127.0.0.1:PORT``). It implements ``CreateSandbox``,
``GetSandbox``, ``ListSandboxes`` (filtered by tags: all must match), ``DeleteSandbox``, ``WriteFile`` and the
bidirectional ``StreamExec`` (init, stdin, close; ready, output, exit). A command ending in ``session`` (an
interpreter session) runs interactively: stdin reaches it as it comes, each line it prints is sent at once; other
commands get their whole stdin first and their output at the end. ``ConnectSandbox`` and every other method
answer UNIMPLEMENTED (the base class's answer); for ``ConnectSandbox`` that makes the SDK fall back from the direct
data plane to the gateway, as it does against a server without one. Deleted sandboxes stay visible to
``GetSandbox`` in a terminal state, as the SDK's ``stop()`` expects. Commands run in sandboxes of the *local* backend, one per fake sandbox:
the remote working directory maps to the local sandbox's files, ``python3`` to its interpreter.

Every request is recorded (``requests``: method name, request message); knobs simulate failures:
``fail_creates`` (that many RESOURCE_EXHAUSTED answers), ``fail_execs`` (that many UNAVAILABLE answers to
StreamExec), ``kill`` (a sandbox id whose next command finds the sandbox gone: NOT_FOUND).
"""

from __future__ import annotations

import asyncio
import shlex
import time
import uuid
from pathlib import Path
from typing import Any

import grpc
from _fake_service import FakeService
from cwsandbox._proto import sandbox_pb2, sandbox_pb2_grpc
from google.protobuf import timestamp_pb2

from trl_sandbox.errors import InfrastructureError

REMOTE_WORKDIR = "/tmp/trl-sandbox"


class FakeCWSandbox(FakeService, sandbox_pb2_grpc.SandboxServiceServicer):
    """The fake service. ``start()`` returns the base URL (``http://127.0.0.1:PORT``); ``stop()`` deletes every
    local sandbox still there."""

    name = "fake CoreWeave Sandbox server"

    def __init__(self, root_dir: Path) -> None:
        super().__init__(root_dir)
        self.terminated: dict[str, Any] = {}  # id -> Sandbox proto in a terminal state (Get still answers)
        self.fail_creates = 0
        self.fail_execs = 0
        self.kill: str | None = None
        #: Interpreter sessions started.
        self.sessions_opened = 0
        self._server: grpc.aio.Server | None = None

    async def _serve(self) -> None:
        self._server = grpc.aio.server()
        sandbox_pb2_grpc.add_SandboxServiceServicer_to_server(self, self._server)
        port = self._server.add_insecure_port("127.0.0.1:0")
        await self._server.start()
        self.url = f"http://127.0.0.1:{port}"

    async def _close(self) -> None:
        await self._server.stop(grace=None)

    def recorded(self, method: str) -> list[Any]:
        """Recorded request messages of one RPC method."""
        return [request for name, request in self.requests if name == method]

    # -- control plane -----------------------------------------------------------------------------------------------

    @staticmethod
    def _now() -> timestamp_pb2.Timestamp:
        stamp = timestamp_pb2.Timestamp()
        stamp.GetCurrentTime()
        return stamp

    async def CreateSandbox(self, request: Any, context: Any) -> Any:  # noqa: N802 - the gRPC method name
        self.requests.append(("CreateSandbox", request))
        if self.fail_creates > 0:
            self.fail_creates -= 1
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "sandbox quota exceeded")
        sandbox_id = f"sb-{uuid.uuid4().hex[:12]}"
        local = await self._local.create({"fake-cwsandbox": sandbox_id})
        proto = sandbox_pb2.Sandbox()
        proto.CopyFrom(request.sandbox)
        proto.sandbox_id = sandbox_id
        proto.status.CopyFrom(sandbox_pb2.SandboxStatus(
            state=sandbox_pb2.STATE_RUNNING, create_time=self._now(), start_time=self._now(),
            effective_max_lifetime_seconds=request.sandbox.spec.max_lifetime_seconds, runner_id="fake-runner",
        ))
        self.sandboxes[sandbox_id] = {"proto": proto, "local": local}
        self.created.append(sandbox_id)
        return proto

    async def GetSandbox(self, request: Any, context: Any) -> Any:  # noqa: N802
        self.requests.append(("GetSandbox", request))
        record = self.sandboxes.get(request.sandbox_id)
        if record is None:
            if request.sandbox_id in self.terminated:
                return self.terminated[request.sandbox_id]
            await context.abort(grpc.StatusCode.NOT_FOUND, f"sandbox {request.sandbox_id} not found")
        return record["proto"]

    async def ListSandboxes(self, request: Any, context: Any) -> Any:  # noqa: N802
        self.requests.append(("ListSandboxes", request))
        wanted = set(request.tags)
        items = [r["proto"] for r in self.sandboxes.values() if wanted <= set(r["proto"].spec.tags)]
        return sandbox_pb2.ListSandboxesResponse(sandboxes=items)

    async def DeleteSandbox(self, request: Any, context: Any) -> Any:  # noqa: N802
        self.requests.append(("DeleteSandbox", request))
        record = self.sandboxes.pop(request.sandbox_id, None)
        if record is None:
            if request.allow_missing or request.sandbox_id in self.terminated:
                return sandbox_pb2.DeleteSandboxResponse()
            await context.abort(grpc.StatusCode.NOT_FOUND, f"sandbox {request.sandbox_id} not found")
        await self._local.delete(record["local"])
        self.deleted.append(request.sandbox_id)
        proto = record["proto"]
        proto.status.state = sandbox_pb2.STATE_COMPLETED
        proto.status.end_time.CopyFrom(self._now())
        self.terminated[request.sandbox_id] = proto
        return sandbox_pb2.DeleteSandboxResponse(sandbox=proto)

    async def ConnectSandbox(self, request: Any, context: Any) -> Any:  # noqa: N802
        # No direct data plane here: the SDK falls back to the gateway (the methods below).
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, "no direct data plane")

    # -- data plane (gateway) ----------------------------------------------------------------------------------------

    async def WriteFile(self, request: Any, context: Any) -> Any:  # noqa: N802
        self.requests.append(("WriteFile", request.path))
        record = self.sandboxes.get(request.sandbox_id)
        if record is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"sandbox {request.sandbox_id} not found")
        if not request.path.startswith(REMOTE_WORKDIR + "/"):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"this fake only writes under {REMOTE_WORKDIR}")
        await self._local.write_files(record["local"], {request.path[len(REMOTE_WORKDIR) + 1:]: request.content})
        return sandbox_pb2.WriteFileResponse()

    def _local_command(self, local: Any, argv: Any) -> str:
        command = shlex.join(argv).replace(REMOTE_WORKDIR, local.workdir)
        return command.replace("python3 ", shlex.join(local.python) + " ")

    async def StreamExec(self, request_iterator: Any, context: Any) -> Any:  # noqa: N802
        init = None
        stdin = bytearray()
        first = True
        async for message in request_iterator:
            if message.HasField("init"):
                init = message.init
                self.requests.append(("StreamExec", init))
                record = self.sandboxes.get(init.sandbox_id)
                if record is None or self.kill == init.sandbox_id:
                    await context.abort(grpc.StatusCode.NOT_FOUND, f"sandbox {init.sandbox_id} not found")
                if self.fail_execs > 0:
                    self.fail_execs -= 1
                    await context.abort(grpc.StatusCode.UNAVAILABLE, "runner unavailable")
                if first:
                    first = False
                    yield sandbox_pb2.ExecStreamResponse(ready=sandbox_pb2.ExecStreamReady(ready_time=self._now()))
                if init.command and init.command[-1].endswith(" session"):  # the SDK wraps it in sh -c 'cd ...'
                    async for response in self._interactive(record["local"], init, request_iterator):
                        yield response
                    return
            elif message.HasField("close"):
                break
            elif message.stdin:
                stdin += message.stdin
        if init is None:
            return
        local = self.sandboxes[init.sandbox_id]["local"]
        command = self._local_command(local, init.command)
        start = time.monotonic()
        result = await self._local.exec(local, ["/bin/sh", "-c", command], stdin=bytes(stdin), timeout_s=600)
        for stream, data in ((sandbox_pb2.ExecStreamOutput.STREAM_STDOUT, result.stdout),
                             (sandbox_pb2.ExecStreamOutput.STREAM_STDERR, result.stderr)):
            for offset in range(0, len(data), 1 << 16):
                yield sandbox_pb2.ExecStreamResponse(
                    output=sandbox_pb2.ExecStreamOutput(stream=stream, data=data[offset:offset + (1 << 16)]))
        code = result.exit_code if result.exit_code is not None else 137
        yield sandbox_pb2.ExecStreamResponse(exit=sandbox_pb2.ExecStreamExit(exit_code=code))
        self.requests.append(("StreamExec.done", time.monotonic() - start))

    async def _interactive(self, local: Any, init: Any, request_iterator: Any) -> Any:
        """A command that reads stdin as it comes and writes as it goes (an interpreter session): stdin messages are
        written to it at once, each line it prints is sent at once, the end of stdin closes its stdin. The client
        cancelling the stream kills it."""
        process = await self._local.open_process(local, ["/bin/sh", "-c", self._local_command(local, init.command)],
                                                 timeout_s=3600)
        self.sessions_opened += 1
        key = uuid.uuid4().hex
        self.interactive[key] = process

        async def pump_stdin() -> None:
            async for message in request_iterator:
                if message.HasField("close"):
                    await process.close_input()
                    return
                if message.stdin:
                    await process.send(message.stdin)

        feeder = asyncio.ensure_future(pump_stdin())
        try:
            while True:
                try:
                    line = await process.receive_line(1 << 24)
                except InfrastructureError:
                    break
                yield sandbox_pb2.ExecStreamResponse(output=sandbox_pb2.ExecStreamOutput(
                    stream=sandbox_pb2.ExecStreamOutput.STREAM_STDOUT, data=line))
            code = await process.wait()
            yield sandbox_pb2.ExecStreamResponse(exit=sandbox_pb2.ExecStreamExit(
                exit_code=code if code is not None else 137))
        finally:
            feeder.cancel()
            self.interactive.pop(key, None)
            await process.kill()
