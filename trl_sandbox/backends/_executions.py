"""How the local backend runs an execution from the host: through the launcher, one process per execution
(:func:`run_launcher`), or through a sandbox's fork server (:class:`ForkServer`), which also runs the judge's requests
and long-lived processes (:class:`LocalProcess`, interpreter sessions)."""

from __future__ import annotations

import itertools
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream

from ..errors import InfrastructureError
from ._host import Capture, killpg, read_all, write_some
from .base import ExecResult, SandboxProcess

#: The trusted launcher (``python -I -S _launcher.py CONFIG``): it isolates a command, or starts a fork server.
LAUNCHER = str(Path(__file__).with_name("_launcher.py"))
# Seconds the host waits past an execution's own timeout before it kills the launcher itself.
_HOST_GRACE_S = 2.0
# Seconds a fork server may take to start (import and prepare) and to stop.
_SERVER_START_S = 60.0
_SERVER_STOP_S = 5.0
# Seconds a killed session process has to be confirmed gone (its status written, its slot emptied).
_KILL_CONFIRM_S = 10.0


async def run_launcher(cfg: dict, stdin: bytes, timeout_s: float, output_limit: int, scratch_limit: int,
                       pass_fds: Sequence[int] = (), grace_s: float = _HOST_GRACE_S) -> ExecResult:
    """Run one execution through the launcher (``_launcher.py``, one process per execution): ``cfg`` is its
    configuration (see the launcher's docstring) without ``status_fd``, ``stdin`` the command's input; stdout and
    stderr are kept up to ``output_limit`` bytes each, and a scratch directory past ``scratch_limit`` bytes is reported
    on stderr. ``pass_fds``: more descriptors the launcher inherits (a tree's inputs). The launcher gets
    ``timeout_s`` plus ``grace_s`` seconds before the host kills it (the time the kernel takes to end what the
    command started: a tree's hundreds of processes at nice 10 on a busy host take seconds).

    Raises:
        InfrastructureError: the launcher could not start, reported a setup failure, exited without a status, or did
            not finish in time.
    """
    status_r, status_w = os.pipe()
    cfg["status_fd"] = status_w
    try:
        proc = await anyio.open_process(
            [sys.executable, "-I", "-S", LAUNCHER, json.dumps(cfg)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(status_w, *pass_fds),
            start_new_session=True,
            env={},
        )
    except OSError as exc:
        os.close(status_r)
        raise InfrastructureError(f"local backend: cannot start the launcher: {exc}") from exc
    finally:
        os.close(status_w)

    outputs = {"stdout": Capture(output_limit), "stderr": Capture(output_limit)}

    async def feed() -> None:
        assert proc.stdin is not None
        try:
            if stdin:
                await proc.stdin.send(stdin)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass  # the command exited without reading all of its input
        finally:
            await proc.stdin.aclose()

    async def drain(name: str, stream: ByteReceiveStream) -> None:
        async for chunk in stream:
            outputs[name].add(chunk)

    host_killed = False
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(feed)
            tg.start_soon(drain, "stdout", proc.stdout)
            tg.start_soon(drain, "stderr", proc.stderr)
            with anyio.move_on_after(timeout_s + grace_s):
                await proc.wait()
            if proc.returncode is None:
                host_killed = True
                killpg(proc.pid)
                with anyio.CancelScope(shield=True):
                    await proc.wait()
    finally:
        if proc.returncode is None:  # cancelled from outside (batch deadline): leave nothing running
            killpg(proc.pid)
            with anyio.CancelScope(shield=True):
                await proc.wait()
        with anyio.CancelScope(shield=True):
            await proc.aclose()
        raw_status = read_all(status_r)

    if host_killed:
        raise InfrastructureError(f"local backend: the launcher did not finish {grace_s}s past its timeout")
    try:
        status = json.loads(raw_status)
    except ValueError:
        raise InfrastructureError(
            f"local backend: the launcher exited with {proc.returncode} and no status; stderr: "
            f"{bytes(outputs['stderr'].data[-500:]).decode(errors='replace')}"
        ) from None
    if "error" in status:
        raise InfrastructureError(f"local backend: {status['error']}")
    if status.get("disk_exceeded"):
        outputs["stderr"].data += f"\ntrl-sandbox: killed: scratch directory over {scratch_limit} bytes\n".encode()
    return ExecResult(
        exit_code=status["exit_code"],
        stdout=bytes(outputs["stdout"].data),
        stderr=bytes(outputs["stderr"].data),
        duration_s=status["duration_s"],
        timed_out=status["timed_out"],
        output_truncated=outputs["stdout"].truncated or outputs["stderr"].truncated,
    )


async def judge_request(server: ForkServer, request: bytes, timeout_s: float, output_limit: int,
                        oom_kills: Callable[[], int | None]) -> ExecResult:
    """One harness request on a sandbox's judge server (:meth:`ForkServer.judge`). A judge that died while the OOM
    killer was at work in the sandbox's memory group (``oom_kills()``: how many processes it killed there so far,
    None where unknown) ended by the program's doing: the program filled the sandbox's memory, and the killer takes
    the program's processes first (see ``_accounting.py``), the judge only when nothing else is left. Its result is
    then the program's error (a crash record), never an infrastructure failure that a retry would repeat on another
    sandbox; the sandbox is replaced (``sandbox_spent``).

    Raises:
        InfrastructureError: the judge server failed otherwise.
    """
    before = oom_kills()
    started = time.monotonic()
    try:
        return await server.judge(request, timeout_s, output_limit)
    except InfrastructureError as exc:
        after = oom_kills()
        if before is None or after is None or after <= before:
            raise
        crash = "the judge was killed by the out-of-memory killer after the program filled the sandbox's memory"
        records = "".join(json.dumps(record) + "\n" for record in ({"ready": True}, {"crash": crash}))
        return ExecResult(exit_code=128 + 9, stdout=records.encode(), stderr=str(exc).encode(),
                          duration_s=time.monotonic() - started, sandbox_spent=f"local backend: {crash}")


class ForkServer:
    """Host side of one sandbox's fork server (``_forkserver.py``): the launcher process, the control socket and
    the judge server's socket.

    :meth:`judge` runs one harness request on the judge server (one round trip); :meth:`exec` runs any other
    command (its four pipe ends travel with the message) and collects stdout, stderr and the status. The fork
    server itself never sees a request's content.
    """

    _ids = itertools.count(1)

    def __init__(self, proc: subprocess.Popen, sock: socket.socket, judge_sock: socket.socket, log_path: Path) -> None:
        self.proc = proc
        self.sock = sock
        self.judge_sock = judge_sock
        self.log_path = log_path
        self._send_lock = anyio.Lock()
        self._judge_lock = anyio.Lock()
        self._judge_buffer = bytearray()
        self._dead: str | None = None

    @classmethod
    async def start(cls, launch: tuple[list[str], dict], sandbox_dir: Path) -> ForkServer:
        """Start the launcher in server mode and wait for the server's ``ready``.

        Raises:
            InfrastructureError: it could not start, reported an error, or did not answer in time.
        """
        argv, cfg = launch
        host_sock, server_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        host_judge, server_judge = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        log_path = sandbox_dir / "server.log"
        cfg["server"]["control_fd"] = server_sock.fileno()
        cfg["server"]["judge_fd"] = server_judge.fileno()
        try:
            with open(log_path, "wb") as log:
                proc = subprocess.Popen(
                    [*argv, json.dumps(cfg)],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=log,
                    pass_fds=(server_sock.fileno(), server_judge.fileno()),
                    start_new_session=True,
                    cwd=str(sandbox_dir),
                    env={},
                )
        except OSError as exc:
            host_sock.close()
            host_judge.close()
            raise InfrastructureError(f"local backend: cannot start the fork server: {exc}") from exc
        finally:
            server_sock.close()
            server_judge.close()
        host_sock.setblocking(False)
        host_judge.setblocking(False)
        server = cls(proc, host_sock, host_judge, log_path)
        try:
            with anyio.fail_after(_SERVER_START_S):
                await anyio.wait_readable(host_sock)
            reply = host_sock.recv(65536)
            message = json.loads(reply) if reply else {"error": "it exited"}
        except (TimeoutError, OSError, ValueError) as exc:
            message = {"error": f"no answer ({type(exc).__name__})"}
        except BaseException:
            with anyio.CancelScope(shield=True):
                await server.stop()
            raise
        if not message.get("ready"):
            with anyio.CancelScope(shield=True):
                await server.stop()
            raise InfrastructureError(
                f"local backend: the fork server did not start: {message.get('error')}{server.log_tail()}")
        return server

    def log_tail(self) -> str:
        try:
            tail = self.log_path.read_bytes()[-1000:].decode(errors="replace").strip()
        except OSError:
            return ""
        return f"; its log: {tail}" if tail else ""

    async def _send(self, data: bytes, fds: Sequence[int] = ()) -> None:
        async with self._send_lock:
            while True:
                try:
                    socket.send_fds(self.sock, [data], list(fds))
                    return
                except BlockingIOError:
                    await anyio.wait_writable(self.sock)

    async def judge(self, request: bytes, timeout_s: float, output_limit: int) -> ExecResult:
        """Run one harness request (the bytes the harness reads on stdin) on the judge server.

        Returns what a harness execution would: the records as stdout, the worker's output as stderr.

        Raises:
            InfrastructureError: the judge server is gone, could not start a worker, or did not answer within
                ``timeout_s`` plus a grace period (it is then treated as dead: the sandbox gets replaced).
        """
        if self._dead:
            raise InfrastructureError(self._dead)
        header = json.dumps({"timeout_s": timeout_s, "output_limit": output_limit}).encode()
        async with self._judge_lock:
            try:
                with anyio.fail_after(timeout_s + _HOST_GRACE_S):
                    await self._judge_send(frame(header) + frame(request))
                    status = json.loads(await self._judgeframe())
                    records = await self._judgeframe()
                    output = await self._judgeframe()
            except (OSError, ValueError, EOFError, TimeoutError) as exc:
                self._dead = f"local backend: the judge server failed ({type(exc).__name__}: {exc}){self.log_tail()}"
                raise InfrastructureError(self._dead) from None
            except BaseException:  # cancelled mid-request: the stream is out of step; never reuse it
                self._dead = "local backend: a judge request was cancelled; the sandbox must be replaced"
                raise
        if "error" in status:
            raise InfrastructureError(f"local backend: {status['error']}")
        return ExecResult(
            exit_code=status["exit_code"],
            stdout=records,
            stderr=output,
            duration_s=status["duration_s"],
            timed_out=status["timed_out"],
            output_truncated=status.get("truncated", False),
            sandbox_spent=self._spent(status),
        )

    def _spent(self, status: dict) -> str | None:
        """The ``spent`` reason of an execution's status (see ``_forkserver.py``); from then on this server refuses
        everything, as the fork server itself does, so that nothing more runs on the sandbox before it is replaced."""
        spent = status.get("spent")
        if not spent:
            return None
        reason = f"local backend: the sandbox is spent: {spent}"
        self._dead = self._dead or reason
        return reason

    async def _judge_send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[self.judge_sock.send(view) :]
            except BlockingIOError:
                await anyio.wait_writable(self.judge_sock)

    async def _judgeframe(self) -> bytes:
        buf = self._judge_buffer
        while True:
            if len(buf) >= 4:
                size = int.from_bytes(buf[:4], "little")
                if len(buf) >= 4 + size:
                    frame = bytes(buf[4 : 4 + size])
                    del buf[: 4 + size]
                    return frame
            try:
                chunk = self.judge_sock.recv(1 << 20)
            except BlockingIOError:
                await anyio.wait_readable(self.judge_sock)
                continue
            if not chunk:
                raise EOFError("the judge server closed its socket")
            buf += chunk

    async def exec(self, request: dict, stdin: bytes, timeout_s: float, output_limit: int) -> ExecResult:
        """Run one execution; see :meth:`LocalBackend.exec`.

        Raises:
            InfrastructureError: the server is gone or did not report within ``timeout_s`` plus a grace period.
        """
        if self._dead:
            raise InfrastructureError(self._dead)
        request["id"] = exec_id = next(self._ids)
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        status_r, status_w = os.pipe()
        ours = [in_w, out_r, err_r, status_r]
        for fd in ours:
            os.set_blocking(fd, False)
        finished = False

        def close_ours(fd: int) -> None:
            if fd in ours:
                ours.remove(fd)
                os.close(fd)

        async def write_rest(data: bytes) -> None:
            try:
                while data:
                    await anyio.wait_writable(in_w)
                    data = write_some(in_w, data)
            finally:
                close_ours(in_w)

        try:
            try:
                await self._send(json.dumps(request).encode(), [in_r, out_w, err_w, status_w])
            except OSError as exc:
                self._dead = f"local backend: the fork server is gone ({exc}){self.log_tail()}"
                raise InfrastructureError(self._dead) from exc
            finally:
                for fd in (in_r, out_w, err_w, status_w):
                    os.close(fd)
            stdout = Capture(output_limit)
            stderr = Capture(output_limit)
            status = Capture(1 << 16)
            with anyio.move_on_after(timeout_s + _HOST_GRACE_S):
                async with anyio.create_task_group() as tg:
                    rest = write_some(in_w, stdin)
                    if rest:
                        tg.start_soon(write_rest, rest)
                    else:
                        close_ours(in_w)
                    tg.start_soon(stderr.drain, err_r)
                    await stdout.drain(out_r)
                    await status.drain(status_r)
                finished = True
        finally:
            if not finished:  # timed out on our side or cancelled from outside: the server kills it
                with anyio.CancelScope(shield=True), anyio.move_on_after(1):
                    try:
                        await self._send(json.dumps({"cancel": exec_id}).encode())
                    except OSError:
                        pass
            for fd in list(ours):
                close_ours(fd)
        if not finished:
            raise InfrastructureError(
                f"local backend: the fork server did not finish {_HOST_GRACE_S}s past its timeout")
        try:
            result = json.loads(bytes(status.data))
        except ValueError:
            self._dead = f"local backend: the fork server died during an execution{self.log_tail()}"
            raise InfrastructureError(self._dead) from None
        if "error" in result:
            raise InfrastructureError(f"local backend: {result['error']}")
        return ExecResult(
            exit_code=result["exit_code"],
            stdout=bytes(stdout.data),
            stderr=bytes(stderr.data),
            duration_s=result["duration_s"],
            timed_out=result["timed_out"],
            output_truncated=stdout.truncated or stderr.truncated,
            sandbox_spent=self._spent(result),
        )

    async def open_process(self, request: dict) -> LocalProcess:
        """Start one long-lived execution whose stdin and stdout stay open (see :meth:`LocalBackend.open_process`).

        Raises:
            InfrastructureError: the server is gone.
        """
        if self._dead:
            raise InfrastructureError(self._dead)
        request["id"] = exec_id = next(self._ids)
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        status_r, status_w = os.pipe()
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            await self._send(json.dumps(request).encode(), [in_r, out_w, devnull, status_w])
        except OSError as exc:
            for fd in (in_w, out_r, status_r):
                os.close(fd)
            self._dead = f"local backend: the fork server is gone ({exc}){self.log_tail()}"
            raise InfrastructureError(self._dead) from exc
        finally:
            for fd in (in_r, out_w, status_w, devnull):
                os.close(fd)
        for fd in (in_w, out_r):
            os.set_blocking(fd, False)
        return LocalProcess(self, exec_id, in_w, out_r, status_r)

    async def stop(self) -> None:
        """Close the control socket (the server kills running executions and exits), then reap the launcher,
        killing it after a grace period."""
        self.sock.close()
        self.judge_sock.close()
        self._dead = "local backend: the sandbox was deleted"
        pidfd = None
        try:
            pidfd = os.pidfd_open(self.proc.pid)
            with anyio.move_on_after(_SERVER_STOP_S):
                await anyio.wait_readable(pidfd)
        except OSError:
            pass
        finally:
            if pidfd is not None:
                os.close(pidfd)
        if self.proc.poll() is None:
            killpg(self.proc.pid)
            await anyio.to_thread.run_sync(self.proc.wait)


class LocalProcess(SandboxProcess):
    """A long-lived execution of a fork server (see :meth:`ForkServer.open_process`): our ends of its stdin and
    stdout pipes and its status pipe. Killing it asks the server to cancel it (the server kills its whole PID
    namespace and empties its slot)."""

    def __init__(self, server: ForkServer, exec_id: int, in_w: int, out_r: int, status_r: int) -> None:
        super().__init__("local backend")
        self.server, self.exec_id = server, exec_id
        self.fds = [in_w, out_r, status_r]
        self.in_w, self.out_r, self.status_r = in_w, out_r, status_r
        self._ended: dict | None = None

    async def send(self, data: bytes) -> None:
        if not self.fds:
            raise InfrastructureError("local backend: the session process is closed")
        try:
            while data:
                await anyio.wait_writable(self.in_w)
                data = write_some(self.in_w, data)
        except OSError as exc:
            raise InfrastructureError(f"local backend: the session process is gone ({exc})") from exc

    async def _next_chunk(self) -> bytes | None:
        if not self.fds:
            raise InfrastructureError("local backend: the session process is closed")
        while True:
            await anyio.wait_readable(self.out_r)
            try:
                return os.read(self.out_r, 1 << 16) or None
            except BlockingIOError:
                continue

    async def close_input(self) -> None:
        """Close the process's stdin (it reads end of file). Idempotent."""
        if self.in_w in self.fds:
            self.fds.remove(self.in_w)
            os.close(self.in_w)

    async def _status(self) -> dict:
        """The execution's status, once the server wrote it (it ended, everything it started is gone, its slot is
        emptied); read once, then kept."""
        if self._ended is None:
            data = b""
            while True:
                await anyio.wait_readable(self.status_r)
                chunk = os.read(self.status_r, 4096)
                if not chunk:
                    break
                data += chunk
            try:
                status = json.loads(data or b"{}")
            except ValueError:
                status = {}
            self._ended = status if isinstance(status, dict) else {}
        return self._ended

    async def wait(self) -> int | None:
        """Wait for the end of the process and of everything it started; its exit status (``128 + N`` for signal
        ``N``; None when it was killed at its timeout).

        Raises:
            InfrastructureError: the process is closed, or the sandbox could not start it.
        """
        if self.status_r not in self.fds:
            raise InfrastructureError("local backend: the session process is closed")
        status = await self._status()
        if "error" in status or "timed_out" not in status:
            raise InfrastructureError(f"local backend: {status.get('error', 'the process ended without a status')}")
        return status["exit_code"]

    async def terminate(self) -> None:
        """Kill the process and everything it started, keeping our ends open: a reader then sees its output end and
        :meth:`wait` its status (what a remote service sees when a sandbox loses a process)."""
        if self.fds:
            with anyio.CancelScope(shield=True), anyio.move_on_after(2):
                try:
                    await self.server._send(json.dumps({"cancel": self.exec_id}).encode())
                except OSError:
                    pass

    async def kill(self, *, wait_s: float = 0.0) -> None:
        """Ask the fork server to kill the process's PID namespace (at once: ``wait_s`` is not needed here), wait
        for its status (written once its slot is emptied: the sandbox's scratch is then empty and its space back),
        and close our descriptors.

        Raises:
            InfrastructureError: no status came within :data:`_KILL_CONFIRM_S` seconds, or it says the sandbox is
                spent (its slot could not be emptied, its space did not come back): the sandbox must not be lent to
                another session.
        """
        if not self.fds:
            return
        await self.terminate()
        status: dict = {}
        try:
            with anyio.CancelScope(shield=True), anyio.move_on_after(_KILL_CONFIRM_S):
                status = await self._status()
        finally:
            fds, self.fds = self.fds, []
            for fd in fds:
                os.close(fd)
        if "error" not in status and "timed_out" not in status:
            raise InfrastructureError("local backend: the end of a session process could not be confirmed")
        spent = self.server._spent(status)
        if spent:
            raise InfrastructureError(spent)


def frame(data: bytes) -> bytes:
    """``data`` as one frame of the judge server's socket (a 4-byte little-endian length first)."""
    return len(data).to_bytes(4, "little") + data
