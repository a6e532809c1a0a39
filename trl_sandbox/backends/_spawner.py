"""The judge server's side of the fork server's judge socket (see ``_forkserver.py``): workers asked for and
released. Standard library only; runs in the judge server, a fork of the fork server, never in the trainer.

Protocol (``SOCK_SEQPACKET``, one message per datagram): ``{"cpu_s"}`` with three descriptors (command pipe, reply
pipe, output pipe); the answer is ``{"pid"}`` with the worker's pidfd (and its ``/proc/<pid>/stat``), or ``{"error"}``.
Once the judge has killed a worker it says ``{"released": pid}``; the answer, ``{"spent": reason or null}``, comes
once that worker's slot is emptied and checked, so that the judge's answer to the host says whether the sandbox must
be replaced.
"""

import json
import os
import socket


class Spawner:
    """In the judge server: asks the fork server for a worker (see the module docstring)."""

    def __init__(self, sock, harness, group=None):
        self.sock, self.harness, self.group = sock, harness, group

    def __call__(self, output_limit, timeout_s):
        h = self.harness
        cmd_r, cmd_w = os.pipe()
        reply_r, reply_w = os.pipe()
        out_r, out_w = os.pipe()
        try:
            socket.send_fds(self.sock, [json.dumps({"cpu_s": timeout_s}).encode()], [cmd_r, reply_w, out_w])
            data, fds, _flags, _addr = socket.recv_fds(self.sock, 4096, 2)
        except OSError as exc:
            for fd in (cmd_w, reply_r, out_r):
                os.close(fd)
            raise h.server.SpawnError("the fork server is gone: %s" % exc)
        finally:
            for fd in (cmd_r, reply_w, out_w):
                os.close(fd)
        try:
            msg = json.loads(data)
        except ValueError:
            msg = {"error": "no answer"}
        if "error" in msg or len(fds) not in (1, 2):
            for fd in (cmd_w, reply_r, out_r, *fds):
                os.close(fd)
            raise h.server.SpawnError(msg.get("error", "no pidfd"))
        output = h.processes.WorkerOutput(out_r, output_limit)
        worker = h.processes.Worker(msg["pid"], cmd_w, reply_r, pidfd=fds[0], output=output)
        if self.group is not None:  # every process the program starts, in the group: timed and ended there
            worker.group = worker.cpu = self.group
            if len(fds) == 2:
                os.close(fds[1])
        else:
            worker.cpu = h.cputime.CpuReader(fds[1] if len(fds) == 2 else None)
        return worker

    def release(self, worker):
        """Tell the fork server that ``worker`` (killed, closed) is done with; returns why the sandbox is spent
        (its slot could not be emptied, its space did not come back), else None. Raises OSError when the server is
        gone."""
        socket.send_fds(self.sock, [json.dumps({"released": worker.pid}).encode()], [])
        data, fds, _flags, _addr = socket.recv_fds(self.sock, 4096, 2)
        for fd in fds:
            os.close(fd)
        try:
            spent = json.loads(data).get("spent")
        except (ValueError, AttributeError):
            raise OSError("the fork server gave no answer") from None
        return str(spent) if spent else None
