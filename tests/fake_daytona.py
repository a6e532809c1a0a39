"""A local fake of the Daytona HTTP API, for running the real ``daytona`` SDK without a network.

It serves the routes ``AsyncDaytona`` uses for sandboxes (create, get, list, delete) and the toolbox routes of
``AsyncSandbox`` (``process/execute``, ``files/bulk-upload``, and the session API: ``process/session`` create and
delete, ``exec`` with ``runAsync``, the command's state, its log as a websocket, its ``input``) on 127.0.0.1, in a
thread with its own event loop. Its JSON answers are built with the SDK's own generated models (``daytona_api_client_async.models``), so the client
parses them as it parses the real service's. Commands run in sandboxes of the *local* backend, one per fake
sandbox, through its agent (``_fake_agent.py``: a working directory of the command's user, processes that outlive
their command, the sandbox's ``env`` in every command's environment, as Daytona's daemon gives): the remote working
directory maps to the agent's, ``python3`` to the local sandbox's interpreter. ``read_only_workdir`` (see
``_fake_service.py``) makes it unwritable to the commands.

Every request is recorded (``requests``: method, path, JSON body); knobs simulate the service's failures:
``rate_limit_creates`` (that many 429 answers with ``Retry-After: 0`` first), ``fail_creates_after`` (creations beyond
that count answer 403, as an exhausted quota does), ``fail_execs`` (that many 503 answers to executions),
``create_delay_s`` (the sandbox is made at once, the answer comes that much later: a client that gives up meanwhile
has made a sandbox it does not know of), ``register_delay_s`` (the sandbox exists only that much after the request
came: a sweep of a client that gave up meanwhile finds nothing yet), ``latency_s`` (added before every answer, as a network's round trip).
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import uuid
from pathlib import Path
from typing import Any

from _fake_service import FakeService
from aiohttp import web
from daytona.common.process import STDOUT_PREFIX
from daytona_api_client_async import models
from daytona_toolbox_api_client_async import models as toolbox_models

from trl_sandbox.backends._remote import ROLE_LABEL

REMOTE_WORKDIR = "/tmp/trl-sandbox"


class FakeDaytona(FakeService):
    """The fake service. ``start()`` returns the API URL (``http://127.0.0.1:PORT/api``); ``stop()`` deletes
    every local sandbox still there."""

    name = "fake Daytona server"

    def __init__(self, root_dir: Path) -> None:
        super().__init__(root_dir)
        self.rate_limit_creates = 0
        self.fail_creates_after: int | None = None
        self.fail_execs = 0
        self.create_delay_s = 0.0
        self.register_delay_s = 0.0
        #: Seconds added before every answer (a network's round trip).
        self.latency_s = 0.0
        #: Sessions of the process API: id -> {"sandbox", "commands": {id -> command record}}.
        self.sessions: dict[str, dict[str, Any]] = {}
        self._runner: web.AppRunner | None = None

    async def _serve(self) -> None:
        @web.middleware
        async def latency(request: web.Request, handler: Any) -> web.StreamResponse:
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
            return await handler(request)

        app = web.Application(client_max_size=64 << 20, middlewares=[latency])
        app.add_routes([
            web.post("/api/sandbox", self.create),
            web.get("/api/sandbox", self.list),
            web.get("/api/sandbox/{id}", self.get),
            web.delete("/api/sandbox/{id}", self.delete),
            web.post("/toolbox/{id}/process/execute", self.execute),
            web.post("/toolbox/{id}/files/bulk-upload", self.upload),
            web.post("/toolbox/{id}/process/session", self.create_session),
            web.delete("/toolbox/{id}/process/session/{session}", self.delete_session),
            web.post("/toolbox/{id}/process/session/{session}/exec", self.session_execute),
            web.get("/toolbox/{id}/process/session/{session}/command/{command}", self.session_command),
            web.get("/toolbox/{id}/process/session/{session}/command/{command}/logs", self.session_logs),
            web.post("/toolbox/{id}/process/session/{session}/command/{command}/input", self.session_input),
        ])
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # noqa: SLF001 - aiohttp exposes no public accessor
        self.base = f"http://127.0.0.1:{port}"
        self.url = f"{self.base}/api"

    async def _close(self) -> None:
        await self._runner.cleanup()

    def bodies(self, method: str, path: str) -> list[Any]:
        """Recorded JSON bodies of requests with this method and path."""
        return [body for m, p, body in self.requests if m == method and p == path]

    # -- sandboxes ---------------------------------------------------------------------------------------------------

    def _dto(self, sandbox_id: str, body: dict) -> dict:
        return models.Sandbox(
            id=sandbox_id, organization_id="org", name=sandbox_id, user="daytona", env=body.get("env") or {},
            labels=body.get("labels") or {}, public=False, network_block_all=bool(body.get("networkBlockAll")),
            network_allow_list=body.get("networkAllowList"), kvm=False, target=body.get("target") or "us", cpu=1,
            gpu=0, memory=1, disk=3, state="started", auto_stop_interval=body.get("autoStopInterval"),
            auto_delete_interval=body.get("autoDeleteInterval"), toolbox_proxy_url=f"{self.base}/toolbox",
        ).to_dict()

    @staticmethod
    def _error(status: int, message: str, headers: dict | None = None) -> web.Response:
        return web.json_response({"statusCode": status, "message": message, "error": message}, status=status,
                                 headers=headers)

    async def create(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(("POST", "/api/sandbox", body))
        if self.rate_limit_creates > 0:
            self.rate_limit_creates -= 1
            return self._error(429, "Too many requests", {"Retry-After": "0"})
        # the check and the count of this creation, with no await in between: concurrent creations see it
        if self.fail_creates_after is not None and len(self.created) + self.creating >= self.fail_creates_after:
            return self._error(403, "Total CPU limit exceeded: quota reached")
        image = None
        if (body.get("labels") or {}).get(ROLE_LABEL):  # a repository task's: made from the image its build names
            built = re.match(r"FROM (\S+)\n?$", (body.get("buildInfo") or {}).get("dockerfileContent") or "")
            image = built.group(1) if built else "(no FROM line)"
            if self.image_error(image):
                return self._error(400, f"Failed to build the image: {self.image_error(image)}")
        with self._creating():
            if self.register_delay_s:  # a slow service: the sandbox exists only that much later
                await asyncio.sleep(self.register_delay_s)
            sandbox_id = uuid.uuid4().hex
            record = await self._new_local({"fake-daytona": sandbox_id}, body.get("env"), image, REMOTE_WORKDIR)
            dto = self._dto(sandbox_id, body)
            self.sandboxes[sandbox_id] = {**record, "dto": dto}
            self.created.append(sandbox_id)
        if self.create_delay_s:
            await asyncio.sleep(self.create_delay_s)
        return web.json_response(dto)

    async def get(self, request: web.Request) -> web.Response:
        sandbox_id = request.match_info["id"]
        self.requests.append(("GET", f"/api/sandbox/{sandbox_id}", None))
        record = self.sandboxes.get(sandbox_id)
        return web.json_response(record["dto"]) if record else self._error(404, "Sandbox not found")

    async def list(self, request: web.Request) -> web.Response:
        wanted = json.loads(request.query.get("labels") or "{}")
        self.requests.append(("GET", "/api/sandbox", dict(request.query)))
        items = []
        for record in self.sandboxes.values():
            dto = record["dto"]
            if all(dto["labels"].get(k) == v for k, v in wanted.items()):
                items.append(models.SandboxListItem.from_dict(dto).to_dict())
        return web.json_response(models.ListSandboxesResponse.from_dict({"items": items, "nextCursor": None}).to_dict())

    async def delete(self, request: web.Request) -> web.Response:
        sandbox_id = request.match_info["id"]
        self.requests.append(("DELETE", f"/api/sandbox/{sandbox_id}", None))
        record = self.sandboxes.get(sandbox_id)
        if not await self._remove(sandbox_id):
            return self._error(404, "Sandbox not found")
        return web.json_response({**record["dto"], "state": "destroyed"})

    async def _remove(self, sandbox_id: str) -> bool:
        if sandbox_id not in self.sandboxes:
            return False
        for session_id in [k for k, v in self.sessions.items() if v["sandbox"] == sandbox_id]:
            await self._end_session(session_id)
        return await super()._remove(sandbox_id)

    # -- toolbox -----------------------------------------------------------------------------------------------------

    def _local_path(self, record: dict, remote: str) -> str:
        return record["agent"].local_path(remote, REMOTE_WORKDIR)

    async def execute(self, request: web.Request) -> web.Response:
        sandbox_id = request.match_info["id"]
        body = await request.json()
        self.requests.append(("POST", "/toolbox/process/execute", body))
        record = self.sandboxes.get(sandbox_id)
        if record is None:
            return self._error(404, "Sandbox not found")
        if self.fail_execs > 0:
            self.fail_execs -= 1
            return self._error(503, "Service unavailable")
        local = record["local"]
        command = self._local_path(record, body["command"])
        if command.startswith("python3 "):
            command = shlex.join(local.python) + command[len("python3"):]
        command = command.replace(" python3 ", f" {shlex.join(local.python)} ")  # sh -c 'exec python3 ...'
        if body.get("cwd"):
            command = f"cd {shlex.quote(self._local_path(record, body['cwd']))} && {command}"
        timeout = float(body.get("timeout") or 60)
        result = await record["agent"].run(command, timeout_s=timeout)
        if result.timed_out:
            return self._error(408, "command execution timeout")
        return web.json_response({"exitCode": result.exit_code, "result": (result.stdout + result.stderr).decode()})

    async def upload(self, request: web.Request) -> web.Response:
        sandbox_id = request.match_info["id"]
        record = self.sandboxes.get(sandbox_id)
        reader = await request.multipart()
        paths: dict[str, str] = {}
        contents: dict[str, bytes] = {}
        while True:
            part = await reader.next()
            if part is None:
                break
            index, _, kind = (part.name or "").rpartition(".")
            if kind == "path":
                paths[index] = (await part.read()).decode()
            elif kind == "file":
                contents[index] = bytes(await part.read())
            else:
                await part.read()
        files = {paths[i]: data for i, data in contents.items() if i in paths}
        self.requests.append(("POST", "/toolbox/files/bulk-upload", sorted(files)))
        if record is None:
            return self._error(404, "Sandbox not found")
        for remote in files:
            if not remote.startswith(REMOTE_WORKDIR + "/"):
                return self._error(400, f"this fake only writes under {REMOTE_WORKDIR}: {remote}")
        for remote, data in files.items():
            await record["agent"].write(remote[len(REMOTE_WORKDIR) + 1:], data)
        return web.json_response([])

    # -- sessions of the process API (interactive commands) -------------------------------------------------------------

    async def create_session(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(("POST", "/toolbox/process/session", body))
        if request.match_info["id"] not in self.sandboxes:
            return self._error(404, "Sandbox not found")
        if body["sessionId"] in self.sessions:
            return self._error(409, "session already exists")
        self.sessions[body["sessionId"]] = {"sandbox": request.match_info["id"], "commands": {}}
        return web.Response(status=201)

    def _command(self, request: web.Request) -> dict | None:
        session = self.sessions.get(request.match_info["session"])
        return session and session["commands"].get(request.match_info["command"])

    async def session_execute(self, request: web.Request) -> web.Response:
        """Runs the command in a local sandbox as an interactive process (``runAsync`` only): its stdout goes to a log
        that ``/logs`` streams, ``/input`` writes to its stdin, echoed into the log unless ``suppressInputEcho``."""
        body = await request.json()
        self.requests.append(("POST", "/toolbox/process/session/exec", body))
        session = self.sessions.get(request.match_info["session"])
        if session is None:
            return self._error(404, "session not found")
        if not body.get("runAsync"):
            return self._error(400, "this fake runs session commands with runAsync only")
        record = self.sandboxes[session["sandbox"]]
        command = self._local_path(record, body["command"]).replace(" python3 ", f" {shlex.join(record['local'].python)} ")
        process = await record["agent"].spawn(command)
        command_id = uuid.uuid4().hex
        entry = {"command": body["command"], "process": process, "log": bytearray(), "exit_code": None,
                 "echo": not body.get("suppressInputEcho"), "changed": asyncio.Event()}
        entry["reader"] = asyncio.ensure_future(self._read_log(entry))
        session["commands"][command_id] = entry
        self.interactive[command_id] = process
        return web.json_response({"cmdId": command_id}, status=202)

    async def _read_log(self, entry: dict) -> None:
        process = entry["process"]
        try:
            while True:
                line = await process.receive_line(1 << 24)
                entry["log"] += STDOUT_PREFIX + line
                entry["changed"].set()
        except Exception:  # noqa: BLE001 - the end of its output
            pass
        try:
            code = await process.wait()
        except Exception:  # noqa: BLE001
            code = None
        entry["exit_code"] = 137 if code is None else code
        entry["changed"].set()
        for key in [k for k, v in self.interactive.items() if v is process]:
            del self.interactive[key]

    async def session_command(self, request: web.Request) -> web.Response:
        entry = self._command(request)
        if entry is None:
            return self._error(404, "command not found")
        return web.json_response(toolbox_models.Command(id=request.match_info["command"], command=entry["command"],
                                                        exit_code=entry["exit_code"]).to_dict())

    async def session_logs(self, request: web.Request) -> web.StreamResponse:
        """The command's log as a websocket, from its start; with ``follow=true`` it follows until the command
        ends, then closes normally (code 1000)."""
        entry = self._command(request)
        if entry is None:
            return self._error(404, "command not found")
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        sent = 0
        while True:
            entry["changed"].clear()
            if len(entry["log"]) > sent:
                await ws.send_bytes(bytes(entry["log"][sent:]))
                sent = len(entry["log"])
                continue
            if entry["exit_code"] is not None or request.query.get("follow") != "true":
                break
            await entry["changed"].wait()
        await ws.close()
        return ws

    async def session_input(self, request: web.Request) -> web.Response:
        body = await request.json()
        entry = self._command(request)
        if entry is None:
            return self._error(404, "command not found")
        if entry["exit_code"] is not None:
            return self._error(410, "command has already completed")
        data = body["data"] if body["data"].endswith("\n") else body["data"] + "\n"  # as the daemon does
        await entry["process"].send(data.encode())
        if entry["echo"]:
            entry["log"] += STDOUT_PREFIX + data.encode()
            entry["changed"].set()
        return web.Response(status=204)

    async def delete_session(self, request: web.Request) -> web.Response:
        self.requests.append(("DELETE", "/toolbox/process/session", request.match_info["session"]))
        if request.match_info["session"] not in self.sessions:
            return self._error(404, "session not found")
        await self._end_session(request.match_info["session"])
        return web.Response(status=204)

    async def _end_session(self, session_id: str) -> None:
        """Kill every command of the session (as the daemon does when it deletes one)."""
        session = self.sessions.pop(session_id)
        for command_id, entry in session["commands"].items():
            self.interactive.pop(command_id, None)
            await entry["process"].kill()
            entry["reader"].cancel()
            if entry["exit_code"] is None:
                entry["exit_code"] = 137
            entry["changed"].set()

    @property
    def open_sessions(self) -> list[str]:
        """Ids of sessions not deleted."""
        return sorted(self.sessions)
