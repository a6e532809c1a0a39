"""A local fake of the Hugging Face Jobs API and of the in-job sandbox server (``sbx-server``), for running the real
``huggingface_hub.Sandbox`` client (2.4) without a network.

Written from the client's own code (``huggingface_hub/_sandbox.py`` and the Jobs methods of ``hf_api.py``), it
serves on 127.0.0.1, in a thread with its own event loop:

- the Hub routes the client calls: ``GET /api/whoami-v2``, ``POST /api/jobs/{namespace}`` (``run_job``: the job
  spec ``_create_job_spec`` builds), ``GET /api/jobs/{namespace}/{id}`` (``inspect_job``), ``GET
  /api/jobs/{namespace}?stage=&label=k=v`` (``list_jobs``), ``POST /api/jobs/{namespace}/{id}/cancel``;
- each job's sandbox server, at the job's exposed URL (``{base}/sbx/{id}--49983.fake``: the client finds it by the
  ``--49983.`` in it): ``GET /health`` (``{"protocol": 3}``), ``PUT /v1/files/write`` (with ``offset`` and
  ``truncate_to`` for ranged writes), ``POST /v1/exec`` (an NDJSON stream of ``stdout``/``stderr``/``exit`` events);
  and a pool host's (``SandboxPool``: a job labelled ``hf-sandbox-mode=pool``): ``POST``/``GET /v1/sandboxes``,
  ``DELETE /v1/sandboxes/{id}``, ``PUT /v1/sandboxes/{id}/files/write`` (paths rooted at the sandbox's home, as the
  SDK's docstring says: an assumption, the server's source is not public here) and ``POST /v1/sandboxes/{id}/exec``,
  each pooled sandbox with a capability token of its own.

Both check the credentials the client sends: the bearer token, and on the sandbox server the ``X-Sandbox-Token``
derived from it and the job's nonce label (``_derive_sandbox_token``). Commands run in sandboxes of the *local*
backend, one per job (or pooled sandbox), through its agent (``_fake_agent.py``: a working directory of the
command's user, processes that outlive their command, the job's environment and secrets, or a pooled sandbox's
``env``, in every command's environment): the remote working directory maps to the agent's, ``python3`` to the local
sandbox's interpreter. ``read_only_workdir`` (see ``_fake_service.py``) makes it unwritable to the commands.

Every request is recorded (``requests``: method, path, JSON body or query); knobs simulate failures:
``rate_limit_creates`` (that many 429 answers, ``Retry-After: 0``), ``fail_creates`` (that many 500 answers),
``fail_execs`` (that many 503 answers to executions), ``vanish_on_exec`` (that many executions find their sandbox
gone: the job is stopped and the server answers 404), ``start_delay_s`` (a new job's server answers ``/health``
only that long after the job is made), ``latency_s`` (added before every answer).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import shlex
import time
import uuid
from pathlib import Path
from typing import Any

from _fake_service import FakeService
from aiohttp import web

from trl_sandbox.backends._remote import ROLE_LABEL

REMOTE_WORKDIR = "/tmp/trl-sandbox"
TOKEN = "hf_fake_token_for_tests"
USER = "fake-user"


def derived(token: str, nonce: str) -> str:
    """The sandbox token the client derives (as ``huggingface_hub._sandbox._derive_sandbox_token``)."""
    return hmac.new(token.encode(), f"hf-sandbox:{nonce}".encode(), hashlib.sha256).hexdigest()


class FakeHF(FakeService):
    """The fake service. ``start()`` returns the endpoint (``http://127.0.0.1:PORT``; the client's
    ``HF_ENDPOINT``); ``stop()`` deletes every local sandbox still there."""

    name = "fake Hugging Face server"

    def __init__(self, root_dir: Path) -> None:
        super().__init__(root_dir)
        self.rate_limit_creates = 0
        self.fail_creates = 0
        self.fail_execs = 0
        self.vanish_on_exec = 0
        self.start_delay_s = 0.0
        self.latency_s = 0.0
        #: Commands running now, and the most that ever ran at once (how concurrent the client's calls were).
        self.execs_in_flight = 0
        self.max_execs_in_flight = 0
        #: Every job ever made: id -> its record (spec, stage, nonce, local sandbox).
        self.jobs: dict[str, dict[str, Any]] = {}
        self._runner: web.AppRunner | None = None

    async def _serve(self) -> None:
        @web.middleware
        async def latency(request: web.Request, handler: Any) -> web.StreamResponse:
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
            return await handler(request)

        app = web.Application(client_max_size=64 << 20, middlewares=[latency])
        app.add_routes([
            web.get("/api/whoami-v2", self.whoami),
            web.post("/api/jobs/{ns}", self.run_job),
            web.get("/api/jobs/{ns}", self.list_jobs),
            web.get("/api/jobs/{ns}/{id}", self.inspect_job),
            web.post("/api/jobs/{ns}/{id}/cancel", self.cancel_job),
            web.get("/sbx/{host}/health", self.health),
            web.put("/sbx/{host}/v1/files/write", self.write),
            web.post("/sbx/{host}/v1/exec", self.execute),
            web.post("/sbx/{host}/v1/sandboxes", self.pool_create),
            web.get("/sbx/{host}/v1/sandboxes", self.pool_list),
            web.delete("/sbx/{host}/v1/sandboxes/{lid}", self.pool_delete),
            web.post("/sbx/{host}/v1/sandboxes/{lid}/exec", self.pool_execute),
            web.put("/sbx/{host}/v1/sandboxes/{lid}/files/write", self.pool_write),
        ])
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

    async def _close(self) -> None:
        await self._runner.cleanup()

    def bodies(self, method: str, path: str) -> list[Any]:
        """Recorded bodies of requests with this method and path."""
        return [body for m, p, body in self.requests if m == method and p == path]

    @staticmethod
    def _error(status: int, message: str, headers: dict | None = None) -> web.Response:
        return web.json_response({"error": message}, status=status, headers=headers)

    @staticmethod
    def _bearer_ok(request: web.Request) -> bool:
        return request.headers.get("Authorization") == f"Bearer {TOKEN}"

    # -- the Hub: jobs -------------------------------------------------------------------------------------------------

    async def whoami(self, request: web.Request) -> web.Response:
        self.requests.append(("GET", "/api/whoami-v2", None))
        if not self._bearer_ok(request):
            return self._error(401, "Invalid credentials in Authorization header")
        return web.json_response({"type": "user", "id": "u-fake", "name": USER, "auth": {"type": "access_token"}})

    def _info(self, job_id: str) -> dict:
        job = self.jobs[job_id]
        spec = job["spec"]
        return {
            "id": job_id, "createdAt": job["created"], "dockerImage": spec.get("dockerImage"),
            "spaceId": spec.get("spaceId"), "owner": {"id": "u-fake", "name": job["ns"], "type": "user"},
            "command": spec.get("command"), "arguments": spec.get("arguments"), "environment": spec.get("environment"),
            "secrets": sorted(spec.get("secrets") or {}), "flavor": spec.get("flavor"), "labels": spec.get("labels"),
            "status": {"stage": job["stage"], "message": None,
                       "exposeUrls": [f"{self.url}/sbx/{job_id}--49983.fake"]},
            "initiator": {"type": "user", "id": "u-fake", "name": USER},
        }

    async def run_job(self, request: web.Request) -> web.Response:
        spec = await request.json()
        self.requests.append(("POST", "/api/jobs", spec))
        if not self._bearer_ok(request):
            return self._error(401, "Invalid credentials in Authorization header")
        if self.rate_limit_creates > 0:
            self.rate_limit_creates -= 1
            return self._error(429, "Too many requests", {"Retry-After": "0"})
        if self.fail_creates > 0:
            self.fail_creates -= 1
            return self._error(500, "Internal server error")
        job_id = uuid.uuid4().hex[:24]
        host = (spec.get("labels") or {}).get("hf-sandbox-mode") == "pool"
        record = None
        image = None
        if (spec.get("labels") or {}).get(ROLE_LABEL):  # a repository task's: a job running its image
            image = spec.get("dockerImage")
            if self.image_error(image):
                return self._error(400, f"Invalid dockerImage: {self.image_error(image)}")
        if not host:  # the job's environment and secrets: every command of the server gets them
            env = {**(spec.get("environment") or {}), **(spec.get("secrets") or {})}
            record = await self._new_local({"fake-hf": job_id}, env, image, REMOTE_WORKDIR)
        self.jobs[job_id] = {"spec": spec, "stage": "RUNNING", "ns": request.match_info["ns"], "record": record,
                             "pooled": {} if host else None,
                             "nonce": (spec.get("labels") or {}).get("hf-sandbox-nonce"),
                             "ready_at": time.monotonic() + self.start_delay_s,
                             "created": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())}
        if not host:
            self.sandboxes[job_id] = record
            self.created.append(job_id)
        return web.json_response(self._info(job_id))

    async def inspect_job(self, request: web.Request) -> web.Response:
        job_id = request.match_info["id"]
        self.requests.append(("GET", f"/api/jobs/{job_id}", None))
        if job_id not in self.jobs:
            return self._error(404, "Job not found")
        return web.json_response(self._info(job_id))

    async def list_jobs(self, request: web.Request) -> web.Response:
        stages = request.query.getall("stage", [])
        wanted = dict(item.split("=", 1) for item in request.query.getall("label", []))
        self.requests.append(("GET", "/api/jobs", {"stage": stages, "label": wanted}))
        if not self._bearer_ok(request):
            return self._error(401, "Invalid credentials in Authorization header")
        items = []
        for job_id, job in self.jobs.items():
            labels = job["spec"].get("labels") or {}
            if job["ns"] == request.match_info["ns"] and (not stages or job["stage"] in stages) \
                    and all(labels.get(k) == v for k, v in wanted.items()):
                items.append(self._info(job_id))
        return web.json_response(items)

    async def _stop_job(self, job_id: str, stage: str) -> None:
        job = self.jobs[job_id]
        if job["stage"] in ("RUNNING", "SCHEDULING"):
            job["stage"] = stage
            for key in [job_id] + [f"{job_id}.{lid}" for lid in job["pooled"] or {}]:
                record = self.sandboxes.pop(key, None)
                if record is not None:
                    await self._delete_local(record)
                    self.deleted.append(key)

    async def cancel_job(self, request: web.Request) -> web.Response:
        job_id = request.match_info["id"]
        self.requests.append(("POST", f"/api/jobs/{job_id}/cancel", None))
        if not self._bearer_ok(request):
            return self._error(401, "Invalid credentials in Authorization header")
        if job_id not in self.jobs:
            return self._error(404, "Job not found")
        await self._stop_job(job_id, "CANCELED")
        return web.json_response({})

    # -- the sandbox server of a job --------------------------------------------------------------------------------

    def _job(self, request: web.Request) -> tuple[dict | None, web.Response | None]:
        """The running job the request is for, or the answer to give (404 gone, 401/403 bad credentials)."""
        job_id = request.match_info["host"].split("--", 1)[0]
        job = self.jobs.get(job_id)
        if job is None or job["stage"] != "RUNNING":
            return None, self._error(404, "no such sandbox (job not running)")
        if not self._bearer_ok(request):
            return None, self._error(401, "bad bearer")
        if request.headers.get("X-Sandbox-Token") != derived(TOKEN, job["nonce"] or ""):
            return None, self._error(403, "bad sandbox token")
        return job, None

    async def health(self, request: web.Request) -> web.Response:
        job_id = request.match_info["host"].split("--", 1)[0]
        job = self.jobs.get(job_id)
        if job is None or job["stage"] != "RUNNING" or time.monotonic() < job["ready_at"]:
            return self._error(503, "starting")
        return web.json_response({"status": "ok", "protocol": 3, "version": "0.7.0"})

    def _local_path(self, job: dict, remote: str) -> str:
        return job["record"]["agent"].local_path(remote, REMOTE_WORKDIR)

    async def write(self, request: web.Request) -> web.Response:
        job, answer = self._job(request)
        path = request.query["path"]
        data = await request.read()
        self.requests.append(("PUT", "/v1/files/write", dict(request.query)))
        if answer is not None:
            return answer
        if not path.startswith(REMOTE_WORKDIR + "/"):
            return self._error(400, f"this fake only writes under {REMOTE_WORKDIR}: {path}")
        truncate_to = request.query.get("truncate_to")
        await job["record"]["agent"].write(
            path[len(REMOTE_WORKDIR) + 1:], data,
            offset=int(request.query["offset"]) if "offset" in request.query else None,
            truncate_to=int(truncate_to) if truncate_to is not None else None)
        return web.json_response({"ok": True})

    async def execute(self, request: web.Request) -> web.StreamResponse:
        job, answer = self._job(request)
        body = await request.json()
        self.requests.append(("POST", "/v1/exec", body))
        if answer is not None:
            return answer
        if self.vanish_on_exec > 0:
            self.vanish_on_exec -= 1
            job_id = request.match_info["host"].split("--", 1)[0]
            await self._stop_job(job_id, "ERROR")
            return self._error(404, "no such sandbox (job not running)")
        if self.fail_execs > 0:
            self.fail_execs -= 1
            return self._error(503, "Service unavailable")
        command = body["cmd"] if isinstance(body["cmd"], str) else shlex.join(body["cmd"])
        command = self._local_path(job, command)
        cwd = self._local_path(job, body.get("cwd") or REMOTE_WORKDIR)
        return await self._run(request, job["record"], body, command, f"cd {shlex.quote(cwd)} && ")

    async def _run(self, request: web.Request, record: dict, body: dict, command: str,
                   prefix: str) -> web.StreamResponse:
        """Run ``command`` through the sandbox's agent (its process group killed at the body's ``timeout``, as the
        server does) and stream its events as the server does."""
        python = shlex.join(record["local"].python)
        if command.startswith("python3 "):
            command = python + command[len("python3"):]
        command = command.replace(" python3 ", f" {python} ")  # sh -c 'exec python3 ...'
        timeout = float(body.get("timeout") or 3600)
        stdin = (body.get("stdin") or "").encode()
        self.execs_in_flight += 1
        self.max_execs_in_flight = max(self.max_execs_in_flight, self.execs_in_flight)
        try:
            result = await record["agent"].run(f"{prefix}{command}", stdin=stdin, timeout_s=timeout)
        finally:
            self.execs_in_flight -= 1
        response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await response.prepare(request)
        for event, data in (("stdout", result.stdout), ("stderr", result.stderr)):
            if data:
                await response.write((json.dumps({"event": event, "data": data.decode("utf-8", "replace")})
                                      + "\n").encode())
        exit_event = {"event": "exit", "exit_code": None if result.timed_out else result.exit_code,
                      "timed_out": result.timed_out, "duration_ms": int(result.duration_s * 1000)}
        await response.write((json.dumps(exit_event) + "\n").encode())
        await response.write_eof()
        return response

    # -- a pool host's sandboxes (SandboxPool): one local sandbox each, $HOME its private directory ------------------

    def _host(self, request: web.Request) -> tuple[str, dict | None, web.Response | None]:
        job_id = request.match_info["host"].split("--", 1)[0]
        job, answer = self._job(request)
        if answer is None and job["pooled"] is None:
            return job_id, None, self._error(404, "not a pool host")
        return job_id, job, answer

    async def pool_create(self, request: web.Request) -> web.Response:
        job_id, job, answer = self._host(request)
        body = await request.json()
        self.requests.append(("POST", "/v1/sandboxes", body))
        if answer is not None:
            return answer
        capacity = int(job["spec"]["environment"].get("SBX_CAPACITY", 50))
        if len(job["pooled"]) >= capacity:
            return web.json_response({"sandboxes": [], "rejected": 1})
        lid, token = uuid.uuid4().hex[:12], uuid.uuid4().hex
        record = await self._new_local({"fake-hf": f"{job_id}.{lid}"}, body.get("env"))
        job["pooled"][lid] = {"token": token, "record": record}
        self.sandboxes[f"{job_id}.{lid}"] = record
        self.created.append(f"{job_id}.{lid}")
        return web.json_response({"sandboxes": [{"id": lid, "token": token}], "rejected": 0})

    async def pool_list(self, request: web.Request) -> web.Response:
        _, job, answer = self._host(request)
        return answer or web.json_response([{"id": lid} for lid in job["pooled"]])

    def _pooled(self, request: web.Request) -> tuple[str, dict | None, web.Response | None]:
        job_id = request.match_info["host"].split("--", 1)[0]
        job = self.jobs.get(job_id)
        lid = request.match_info["lid"]
        if job is None or job["stage"] != "RUNNING" or lid not in (job["pooled"] or {}):
            return lid, None, self._error(404, "no such sandbox")
        if not self._bearer_ok(request) or request.headers.get("X-Sandbox-Token") != job["pooled"][lid]["token"]:
            return lid, None, self._error(403, "bad sandbox token")
        return lid, job, None

    async def pool_delete(self, request: web.Request) -> web.Response:
        lid, job, answer = self._pooled(request)
        self.requests.append(("DELETE", "/v1/sandboxes", lid))
        if answer is not None:
            return answer
        key = f"{request.match_info['host'].split('--', 1)[0]}.{lid}"
        job["pooled"].pop(lid)
        record = self.sandboxes.pop(key, None)
        if record is not None:
            await self._delete_local(record)
            self.deleted.append(key)
        return web.json_response({"killed": True})

    async def pool_write(self, request: web.Request) -> web.Response:
        """``files.write`` in a pooled sandbox: the path is rooted at the sandbox's home (a leading ``/`` too), as
        the SDK's ``SandboxFiles`` docstring says."""
        lid, job, answer = self._pooled(request)
        data = await request.read()
        self.requests.append(("PUT", "/v1/sandboxes/files/write", dict(request.query)))
        if answer is not None:
            return answer
        relative = Path(request.query["path"].lstrip("/"))
        if ".." in relative.parts:
            return self._error(400, "path escapes the sandbox home")
        await job["pooled"][lid]["record"]["agent"].write(str(relative), data)
        return web.json_response({"ok": True})

    async def pool_execute(self, request: web.Request) -> web.StreamResponse:
        lid, job, answer = self._pooled(request)
        body = await request.json()
        self.requests.append(("POST", "/v1/sandboxes/exec", body))
        if answer is not None:
            return answer
        record = job["pooled"][lid]["record"]
        command = body["cmd"] if isinstance(body["cmd"], str) else shlex.join(body["cmd"])
        home = shlex.quote(record["agent"].work)
        cwd = shlex.quote(body.get("cwd") or record["agent"].work)
        return await self._run(request, record, body, command, f"export HOME={home}; cd {cwd} && ")

    @property
    def running(self) -> list[str]:
        """Ids of jobs in a live stage."""
        return sorted(k for k, v in self.jobs.items() if v["stage"] in ("RUNNING", "SCHEDULING"))

    @property
    def leftovers(self) -> list[str]:
        """The jobs :attr:`running` and the sandboxes :attr:`alive`."""
        return sorted(set(self.running) | set(self.alive))

    async def _reap(self) -> None:
        for job_id in self.running:
            await self._stop_job(job_id, "CANCELED")
        await super()._reap()
