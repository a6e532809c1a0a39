"""Fresh workers on demand for ``python harness.pyz`` (one process per execution, the remote backends' way).

A program that crashes its worker (``os._exit``, a segfault, a stack overflow) must fail only the test it crashed
on, so the judge needs a fresh worker for the next test. The judge cannot fork one itself once it has read the
request (the tests and expected outputs would be in the new worker's memory), so a *zygote* is forked before the
request is read (:func:`start_zygote`): it forks workers when the judge asks, and hands over their pipes over a
Unix socket (``SCM_RIGHTS``). The local backend's fork server plays this part there (see
``trl_sandbox/backends/_forkserver.py``).
"""

import array
import ctypes
import os
import signal
import socket
import struct

from .base import OUTPUT_RECORD_LIMIT, PR_SET_PDEATHSIG
from .processes import Worker, WorkerOutput, spawn_worker


def _send_fds(sock, data, fds):
    sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])


def _recv_fds(sock, size, count):
    fds = array.array("i")
    data, ancillary, _flags, _addr = sock.recvmsg(size, socket.CMSG_LEN(count * fds.itemsize))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[:len(payload) - (len(payload) % fds.itemsize)])
    return data, list(fds)


def _zygote(sock, home):
    """The zygote's loop: one fresh worker per byte received; exits when the judge goes away. Never returns."""
    try:
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # workers are reaped by the kernel; the judge waits on them
    while True:
        try:
            if not sock.recv(1):
                break
            out_r, out_w = os.pipe()
            worker = spawn_worker(None, out_r, out_w, home, close=(sock.fileno(),))
            _send_fds(sock, struct.pack("i", worker.pid), [worker.cmd_w, worker.reply_r, out_r])
            for fd in (worker.cmd_w, worker.reply_r, out_r):
                os.close(fd)
        except BaseException:  # noqa: BLE001 - the judge sees no answer and ends the run as a crash
            break
    os._exit(0)


def start_zygote(result_fd, home, close=()):
    """Fork the zygote (before the request is read); returns ``spawn()``, which returns a fresh :class:`Worker`
    (raises OSError when the zygote is gone).

    Args:
        result_fd: The judge's result channel, closed in the zygote.
        home: The workers' directory (see :func:`.processes.spawn_worker`).
        close: The judge's other descriptors that neither the zygote nor its workers may hold: the first worker's
            pipe ends (its command pipe's write end, its reply and output pipes' read ends). A fresh worker that
            held them could write commands to the dead worker's pipe or read what it printed.
    """
    judge_end, zygote_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:
        judge_end.close()
        for fd in (result_fd, *close):
            try:
                os.close(fd)
            except OSError:
                pass
        try:  # the request arrives on stdin after this fork: the zygote keeps no way to it
            devnull = os.open(os.devnull, os.O_RDONLY)
            os.dup2(devnull, 0)
            os.close(devnull)
        except OSError:
            os._exit(70)
        _zygote(zygote_end, home)
    zygote_end.close()

    def spawn():
        judge_end.sendall(b"w")
        data, fds = _recv_fds(judge_end, 4, 3)
        if len(data) != 4 or len(fds) != 3:
            for fd in fds:
                os.close(fd)
            raise OSError("the zygote did not start a worker")
        (worker_pid,) = struct.unpack("i", data)
        pidfd = None
        try:
            pidfd = os.pidfd_open(worker_pid)
        except (AttributeError, OSError):
            pass
        return Worker(worker_pid, fds[0], fds[1], pidfd=pidfd, output=WorkerOutput(fds[2], OUTPUT_RECORD_LIMIT))

    return spawn
