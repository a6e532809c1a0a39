"""A local fake of the E2B service, for running the real ``e2b`` SDK (2.63) without a network.

Written from the SDK's own client code (``e2b/api/client/api/sandboxes``, ``e2b/sandbox_async``, ``e2b/envd``):

- the REST API the ``AsyncSandbox`` class methods call (``ConnectionConfig.api_url``, set with ``E2B_API_URL``):
  ``POST /v2/sandboxes`` (201, a ``Sandbox`` model), ``GET /v2/sandboxes?metadata=k=v&...`` (a list of
  ``ListedSandbox``), ``DELETE /sandboxes/{id}`` (204; 404 when gone), ``POST /sandboxes/{id}/timeout`` (204);
- envd, the daemon in each sandbox (``E2B_SANDBOX_URL`` sends every sandbox's traffic here; the SDK names the
  sandbox in its ``E2b-Sandbox-Id`` header): ``GET /health``, ``POST /files`` (multipart, one part per file, the
  file name is the path; answers a list of ``WriteInfo``), and the Connect RPCs of ``process.Process`` with the
  SDK's JSON codec: ``Start`` (server stream: enveloped ``StartResponse`` messages, a start event with the pid, data
  events, an end event, then the end-of-stream envelope), ``SendInput``, ``CloseStdin``, ``SendSignal`` (unary).
  Messages are built and parsed with the SDK's own protobuf classes (``e2b.envd.process.process_pb``).

The SDK must speak HTTP/1.1 to it (``E2B_HTTP_VERSION=1.1``: the default, HTTP/2, needs TLS or prior knowledge).
Commands run in sandboxes of the *local* backend, one per fake sandbox, through its agent (``_fake_agent.py``: a
working directory of the command's user, processes that outlive their command, the sandbox's ``envVars`` in every
command's environment, as envd gives): the remote working directory maps to the agent's, ``python3`` to the local
sandbox's interpreter. ``read_only_workdir`` (see ``_fake_service.py``) makes it unwritable to the commands.

Knobs simulate the service's failures: ``rate_limit_creates`` (that many 429 answers first: E2B's concurrency cap),
``max_running`` (creations past that many live sandboxes, those being created included, answer 429, as the free
tier's 20), ``fail_creates_after`` (403 past that count: a quota), ``fail_execs`` (that many 502 answers to
``Start``, as E2B's edge proxy gives), ``create_delay_s`` (the sandbox is made at once, the answer comes that much
later), ``register_delay_s`` (the sandbox exists only that much after the request came: a sweep of a client that gave
up meanwhile finds nothing yet), ``vanish_next_exec`` (the sandbox is deleted while the next command runs, as one killed by E2B),
``latency_s`` (added before every answer).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shlex
import struct
import urllib.parse
import uuid
from pathlib import Path
from typing import Any

from _fake_service import FakeService
from aiohttp import web
from e2b.envd.process import process_pb
from protobuf import Oneof

from trl_sandbox.backends._remote import ROLE_LABEL

REMOTE_WORKDIR = "/tmp/trl-sandbox"
ENVD_VERSION = "0.6.7"


def _envelope(flags: int, payload: bytes) -> bytes:
    return struct.pack(">BI", flags, len(payload)) + payload


class FakeE2B(FakeService):
    """The fake service. ``start()`` returns its URL (both the API and envd); ``stop()`` deletes every local sandbox
    still there."""

    name = "fake E2B server"

    def __init__(self, root_dir: Path) -> None:
        super().__init__(root_dir)
        self.rate_limit_creates = 0
        self.max_running: int | None = None
        self.fail_creates_after: int | None = None
        self.fail_execs = 0
        self.create_delay_s = 0.0
        self.register_delay_s = 0.0
        self.vanish_next_exec = False
        self.latency_s = 0.0
        #: Templates made from images (``template -> image name`` of :attr:`images`): a repository task's sandbox.
        self.template_images: dict[str, str] = {}
        #: Processes started with ``Start``: pid -> {"sandbox", "process" (local, stdin ones), "task"}.
        self.processes: dict[int, dict[str, Any]] = {}
        self._next_pid = 100
        self._runner: web.AppRunner | None = None

    async def _serve(self) -> None:
        @web.middleware
        async def latency(request: web.Request, handler: Any) -> web.StreamResponse:
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
            return await handler(request)

        app = web.Application(client_max_size=64 << 20, middlewares=[latency])
        app.add_routes([
            web.post("/v2/sandboxes", self.create),
            web.get("/v2/sandboxes", self.list),
            web.delete("/sandboxes/{id}", self.delete),
            web.post("/sandboxes/{id}/timeout", self.set_timeout),
            web.get("/health", self.health),
            web.post("/files", self.write_files),
            web.post("/process.Process/Start", self.start_process),
            web.post("/process.Process/SendInput", self.send_input),
            web.post("/process.Process/CloseStdin", self.close_stdin),
            web.post("/process.Process/SendSignal", self.send_signal),
        ])
        self._runner = web.AppRunner(app, shutdown_timeout=2.0)  # streams of killed processes: do not wait
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # noqa: SLF001 - aiohttp exposes no public accessor
        self.url = f"http://127.0.0.1:{port}"

    async def _close(self) -> None:
        await self._runner.cleanup()

    def bodies(self, method: str, path: str) -> list[Any]:
        """Recorded bodies of requests with this method and path."""
        return [body for m, p, body in self.requests if m == method and p == path]

    @staticmethod
    def _error(status: int, message: str) -> web.Response:
        return web.json_response({"code": status, "message": message}, status=status)

    # -- REST API ----------------------------------------------------------------------------------------------------

    async def create(self, request: web.Request) -> web.Response:
        if request.headers.get("X-API-Key") != "test-key":
            return self._error(401, "Invalid API key")
        body = await request.json()
        self.requests.append(("POST", "/v2/sandboxes", body))
        if self.rate_limit_creates > 0:
            self.rate_limit_creates -= 1
            return self._error(429, "Rate limit exceeded")
        # the checks and the count of this creation, with no await in between: concurrent creations see it
        if self.max_running is not None and len(self.sandboxes) + self.creating >= self.max_running:
            return self._error(429, f"You have reached the maximum number of concurrent E2B sandboxes "
                                    f"({self.max_running})")
        if self.fail_creates_after is not None and len(self.created) + self.creating >= self.fail_creates_after:
            return self._error(403, "Team quota exceeded: out of credits")
        image = None
        if (body.get("metadata") or {}).get(ROLE_LABEL):  # a repository task's: its template's image
            image = self.template_images.get(body.get("templateID", "base"), f"(template {body.get('templateID')})")
            if self.image_error(image):
                return self._error(404, f"template {body.get('templateID')!r} not found")
        with self._creating():
            if self.register_delay_s:  # a slow service: the sandbox exists only that much later
                await asyncio.sleep(self.register_delay_s)
            sandbox_id = "i" + uuid.uuid4().hex[:19]
            record = await self._new_local({"fake-e2b": sandbox_id}, body.get("envVars"), image, REMOTE_WORKDIR)
            self.sandboxes[sandbox_id] = {**record, "body": body, "startedAt": "2026-11-25T00:00:00Z"}
            self.created.append(sandbox_id)
        if self.create_delay_s:
            await asyncio.sleep(self.create_delay_s)
        return web.json_response({
            "templateID": body.get("templateID", "base"), "sandboxID": sandbox_id, "clientID": "fake",
            "envdVersion": ENVD_VERSION, "envdAccessToken": "envd-token", "domain": None,
        }, status=201)

    async def list(self, request: web.Request) -> web.Response:
        if request.headers.get("X-API-Key") != "test-key":
            return self._error(401, "Invalid API key")
        self.requests.append(("GET", "/v2/sandboxes", dict(request.query)))
        wanted = {urllib.parse.unquote(k): urllib.parse.unquote(v)
                  for k, v in urllib.parse.parse_qsl(request.query.get("metadata", ""))}
        items = []
        for sandbox_id, record in self.sandboxes.items():
            metadata = record["body"].get("metadata") or {}
            if all(metadata.get(k) == v for k, v in wanted.items()):
                items.append({
                    "templateID": record["body"].get("templateID", "base"), "sandboxID": sandbox_id,
                    "clientID": "fake", "startedAt": record["startedAt"], "endAt": "2026-11-25T01:00:00Z",
                    "cpuCount": 2, "memoryMB": 512, "diskSizeMB": 1024, "state": "running",
                    "envdVersion": ENVD_VERSION, "metadata": metadata,
                })
        return web.json_response(items)

    async def delete(self, request: web.Request) -> web.Response:
        sandbox_id = request.match_info["id"]
        self.requests.append(("DELETE", f"/sandboxes/{sandbox_id}", None))
        if not await self._remove(sandbox_id):
            return self._error(404, f"sandbox {sandbox_id} not found")
        return web.Response(status=204)

    async def set_timeout(self, request: web.Request) -> web.Response:
        sandbox_id = request.match_info["id"]
        self.requests.append(("POST", "/sandboxes/timeout", await request.json()))
        if sandbox_id not in self.sandboxes:
            return self._error(404, f"sandbox {sandbox_id} not found")
        return web.Response(status=204)

    async def _remove(self, sandbox_id: str) -> bool:
        record = self.sandboxes.pop(sandbox_id, None)
        if record is None:
            return False
        for pid, entry in list(self.processes.items()):
            if entry["sandbox"] == sandbox_id:
                await self._end_process(pid)
        await self._delete_local(record)
        self.deleted.append(sandbox_id)
        return True

    # -- envd --------------------------------------------------------------------------------------------------------

    def _sandbox(self, request: web.Request) -> dict | None:
        return self.sandboxes.get(request.headers.get("E2b-Sandbox-Id", ""))

    def _gone(self, request: web.Request) -> web.Response:
        # What E2B's proxy answers for a sandbox that does not exist (a plain 502 with this message).
        return web.json_response({"message": "The sandbox was not found", "sandboxId":
                                  request.headers.get("E2b-Sandbox-Id"), "code": 502}, status=502)

    async def health(self, request: web.Request) -> web.Response:
        return web.Response(status=204) if self._sandbox(request) else self._gone(request)

    async def write_files(self, request: web.Request) -> web.Response:
        record = self._sandbox(request)
        if record is None:
            return self._gone(request)
        reader = await request.multipart()
        files: dict[str, bytes] = {}
        while True:
            part = await reader.next()
            if part is None:
                break
            # the raw file name (aiohttp's ``filename`` keeps the base name only): the file's path in the sandbox
            match = re.search(r'filename="([^"]*)"', part.headers.get("Content-Disposition", ""))
            files[match.group(1) if match else ""] = bytes(await part.read())
        if len(files) == 1 and "path" in request.query:  # one file: envd writes it to ``path``
            files = {request.query["path"]: next(iter(files.values()))}
        self.requests.append(("POST", "/files", sorted(files)))
        infos = []
        for remote in files:
            if not remote.startswith(REMOTE_WORKDIR + "/"):
                return web.json_response({"code": 400, "message": f"this fake writes under {REMOTE_WORKDIR} only"},
                                         status=400)
        for remote, data in files.items():
            await record["agent"].write(remote[len(REMOTE_WORKDIR) + 1:], data)
            infos.append({"name": remote.rsplit("/", 1)[-1], "type": "file", "path": remote})
        return web.json_response(infos)

    def _local_command(self, record: dict, command: str) -> str:
        command = record["agent"].local_path(command, REMOTE_WORKDIR)
        return command.replace(" python3 ", f" {shlex.join(record['local'].python)} ")

    async def start_process(self, request: web.Request) -> web.StreamResponse:
        """``process.Process/Start``: a Connect server stream of JSON messages."""
        raw = await request.read()
        message = process_pb.StartRequest.from_json(raw[5:], ignore_unknown_fields=True)
        command = list(message.process.args)[-1]
        self.requests.append(("POST", "/process.Process/Start", {"command": command, "stdin": message.stdin,
                                                                 "cwd": message.process.cwd}))
        record = self._sandbox(request)
        if record is None:
            return self._gone(request)
        if self.fail_execs > 0:
            self.fail_execs -= 1
            return web.json_response({"message": "Bad gateway", "code": 502}, status=502)
        response = web.StreamResponse(headers={"Content-Type": "application/connect+json"})
        await response.prepare(request)

        async def send(event: Any) -> None:
            out = process_pb.StartResponse(event=process_pb.ProcessEvent(event=event))
            await response.write(_envelope(0, out.to_json().encode()))

        self._next_pid += 1
        pid = self._next_pid
        sandbox_id = request.headers["E2b-Sandbox-Id"]
        agent = record["agent"]
        local_command = self._local_command(record, command)
        entry: dict[str, Any] = {"sandbox": sandbox_id, "process": None}
        self.processes[pid] = entry
        error = None
        try:
            await send(Oneof("start", process_pb.ProcessEvent.StartEvent(pid=pid)))
            if self.vanish_next_exec:
                self.vanish_next_exec = False
                await self._remove(sandbox_id)
                error = {"code": "unavailable", "message": "the connection to the sandbox ended before the stream "
                                                          "completed"}
            elif message.stdin:
                # One task reads the process (never two readers of its pipes: ``_end_process`` stops that task
                # before it kills the process); this handler forwards what it reads.
                process = await agent.spawn(local_command)
                queue: asyncio.Queue = asyncio.Queue()
                entry.update(process=process, queue=queue, reader=asyncio.ensure_future(self._pump(process, queue)))
                self.interactive[str(pid)] = process
                while True:
                    kind, value = await queue.get()
                    if kind == "line":
                        await send(Oneof("data", process_pb.ProcessEvent.DataEvent(output=Oneof("stdout", value))))
                        continue
                    break
                self.interactive.pop(str(pid), None)
                self.processes.pop(pid, None)
                await send(Oneof("end", process_pb.ProcessEvent.EndEvent(
                    exit_code=137 if value is None else value, exited=value is not None,
                    status="exit status" if value is not None else "signal: killed")))
            else:
                task = asyncio.ensure_future(agent.run(local_command))
                entry["task"] = task
                result = await task
                if result.stdout:
                    await send(Oneof("data", process_pb.ProcessEvent.DataEvent(output=Oneof("stdout", result.stdout))))
                if result.stderr:
                    await send(Oneof("data", process_pb.ProcessEvent.DataEvent(output=Oneof("stderr", result.stderr))))
                code = result.exit_code
                await send(Oneof("end", process_pb.ProcessEvent.EndEvent(
                    exit_code=137 if code is None else code, exited=code is not None, status="exit status")))
            await response.write(_envelope(2, json.dumps({"error": error} if error else {}).encode()))
        except (ConnectionResetError, asyncio.CancelledError):
            pass  # the client went away (its deadline): the process runs on, as in E2B, until killed
        finally:
            if entry.get("process") is None and entry.get("task") is not None and entry["task"].done():
                self.processes.pop(pid, None)
        return response

    @staticmethod
    async def _pump(process: Any, queue: asyncio.Queue) -> None:
        while True:
            try:
                line = await process.receive_line(1 << 24)
            except Exception:  # noqa: BLE001 - the end of its output
                break
            queue.put_nowait(("line", line))
        try:
            code = await process.wait()
        except Exception:  # noqa: BLE001
            code = None
        queue.put_nowait(("end", code))

    def _unary(self, request_body: bytes, cls: Any) -> Any:
        return cls.from_json(request_body, ignore_unknown_fields=True)

    async def send_input(self, request: web.Request) -> web.Response:
        message = self._unary(await request.read(), process_pb.SendInputRequest)
        entry = self.processes.get(message.process.selector.value)
        if entry is None or entry["process"] is None or self._sandbox(request) is None:
            return web.json_response({"code": "not_found", "message": "process not found"}, status=404)
        await entry["process"].send(bytes(message.input.input.value))
        return web.json_response({})

    async def close_stdin(self, request: web.Request) -> web.Response:
        return web.json_response({})

    async def send_signal(self, request: web.Request) -> web.Response:
        message = self._unary(await request.read(), process_pb.SendSignalRequest)
        pid = message.process.selector.value
        self.requests.append(("POST", "/process.Process/SendSignal", pid))
        if pid not in self.processes:
            return web.json_response({"code": "not_found", "message": "process not found"}, status=404)
        await self._end_process(pid)
        return web.json_response({})

    async def _end_process(self, pid: int) -> None:
        entry = self.processes.pop(pid, None)
        if entry is None:
            return
        self.interactive.pop(str(pid), None)
        if entry.get("reader") is not None:
            entry["reader"].cancel()
            with contextlib.suppress(BaseException):
                await entry["reader"]
        if entry.get("process") is not None:
            with contextlib.suppress(Exception):
                await entry["process"].kill()
            entry["queue"].put_nowait(("end", None))
        if entry.get("task") is not None:
            entry["task"].cancel()
