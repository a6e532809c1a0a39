"""Interpreter sessions (:class:`trl_sandbox.environment.CodeEnvironment`): a persistent Python session per rollout,
cells sent by the host and run in one namespace, as a notebook kernel does (:func:`session_main`).

``python harness.pyz session`` (:func:`run`) runs one directly where the backend isolates each execution by itself
(the local backend), and under a supervisor (:func:`_supervised_session`) on a remote backend, where one sandbox
serves one session after another.
"""

import ast
import builtins
import io
import json
import os
import signal
import sys

from . import accounts
from .accounts import claim_program_uid, private_home, sweep_program
from .processes import confine, own_sandbox, worker_environment
from .stdio import memory_file
from .wire import read_up_to, write_all
from .worker import Quitter


class _CellTimeout(BaseException):
    """Raised in a session's cell when its time is up (a BaseException: ``except Exception`` does not catch it)."""


#: Lines of a cell's traceback kept (its last ones: the error and the frames nearest to it).
SESSION_TRACEBACK_LINES = 12


def _cell_error(exc):
    """The last lines of a cell's traceback, frames of this harness left out."""
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<cell>"]
    lines = traceback.format_list(frames) + traceback.format_exception_only(type(exc), exc)
    text = "".join(lines)
    return "Traceback (most recent call last):\n" + "\n".join(text.splitlines()[-SESSION_TRACEBACK_LINES:])


def session_main(isolated=True):
    """A persistent Python session: run code cells sent by the host in one namespace, as a notebook kernel does.

    Protocol (``python harness.pyz session``), JSON lines (one object per line, ASCII, so that it crosses text streams
    such as remote services' exec APIs): the session first sends ``{"ready": true, "isolated": isolated}``
    (``isolated``: whether a later session in the same sandbox starts clean, see :func:`_supervised_session`). The
    host then sends ``{"code", "timeout", "limit"}`` on stdin and gets one line back per cell on stdout: ``{"out":
    what the cell printed (stdout and stderr as one stream, at most ``limit`` bytes), "truncated": bool, "error": the
    traceback's last lines or None, "timed_out": bool}``. A cell whose last statement is an expression prints its
    value's ``repr`` (unless None). A cell past its ``timeout`` (seconds) is interrupted (``SIGALRM``); the host kills
    the whole session if that does not stop it. ``input()`` reads nothing: the request channel is not the cell's
    stdin. Everything else (variables, imports, files in the working directory) persists until the host ends the
    session: with ``{"close": true}`` or the end of stdin (a remote service's API may have no way to close it).
    """
    request_fd, reply_fd = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.set_inheritable(request_fd, False)
    os.set_inheritable(reply_fd, False)
    sys.stdin = io.StringIO("")
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    builtins.exit, builtins.quit = Quitter("exit"), Quitter("quit")

    def on_alarm(_signum, _frame):
        raise _CellTimeout()

    signal.signal(signal.SIGALRM, on_alarm)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    requests = io.open(request_fd, "rb", buffering=1 << 16, closefd=False)
    write_all(reply_fd, json.dumps({"ready": True, "isolated": bool(isolated)}).encode() + b"\n")
    while True:
        line = requests.readline()
        if not line.endswith(b"\n"):
            os._exit(0)
        req = json.loads(line)
        if req.get("close"):
            os._exit(0)
        limit = int(req.get("limit", 1 << 16))
        out_fd = memory_file("cell")
        saved = os.dup(1), os.dup(2)
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", write_through=True)
        sys.stderr = sys.stdout
        reply = {"error": None, "timed_out": False}
        try:
            signal.setitimer(signal.ITIMER_REAL, max(0.001, float(req.get("timeout", 10.0))))
            try:
                tree = ast.parse(str(req.get("code", "")), "<cell>", "exec")
                last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
                if last is not None:
                    tree.body.pop()
                exec(compile(tree, "<cell>", "exec"), namespace)
                if last is not None:
                    value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)
                    if value is not None:
                        print(repr(value))
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except _CellTimeout:
            reply["timed_out"] = True
        except SystemExit as exc:
            reply["error"] = "SystemExit(%r): the session goes on" % (exc.code,)
        except BaseException as exc:  # noqa: BLE001 - the cell's error, for the model to read
            reply["error"] = _cell_error(exc)[-limit:]
        try:
            sys.stdout.flush()
        except BaseException:  # noqa: BLE001
            pass
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])
        sys.stdout = sys.stderr = sys.__stderr__
        size = os.lseek(out_fd, 0, os.SEEK_END)
        os.lseek(out_fd, 0, os.SEEK_SET)
        raw = read_up_to(out_fd, limit)
        os.close(out_fd)
        reply["out"] = raw.decode("utf-8", errors="replace")
        reply["truncated"] = size > limit
        write_all(reply_fd, json.dumps(reply).encode() + b"\n")


def _supervised_session():
    """An interpreter session on a remote backend, where one sandbox serves one session after another: this process
    stays as a supervisor and forks the session (:func:`session_main`) into a directory of its own, with
    no-new-privs. As root (a remote sandbox's default user), the session runs as an account of its own
    (:mod:`.accounts`), and the supervisor sweeps what that account left (:func:`.accounts.sweep_uid`: processes,
    daemons included, and files in the temporary directories) after it ends, and what the accounts of killed runs
    left before it starts, so that no rollout sees another's state: the session says ``isolated``. As another user
    it cannot sweep: the session says it is not isolated, and the host does not give its sandbox to another session.
    The supervisor holds stdout until it is done, so the host sees the command end only after the sweep."""
    import shutil

    root = os.geteuid() == 0
    if root:
        claim_program_uid()
    home = private_home("trl-sandbox-session-")
    pid = os.fork()
    if pid == 0:
        try:
            # The session's code must not hold the account's claim: unlocked, another run could share the uid;
            # kept by a daemon, the account would never be swept; and the supervisor's death must free it at once,
            # or the next session, started meanwhile, takes the claim for a live run's and leaves its files.
            claim = accounts.claim_fd()
            if claim is not None:
                os.close(claim)
            confine(home)
            env = worker_environment(home)  # the worker's: nothing of the service's environment (tokens...)
            env.pop("TRL_SANDBOX_PACKAGES", None)  # what a cell may import is the interpreter's own
            os.environ.clear()
            os.environ.update(env)
        except BaseException as exc:  # noqa: BLE001 - never run cells half set up
            os.write(2, ("trl-sandbox: session setup failed: %s\n" % (exc,)).encode())
            os._exit(70)
        session_main(isolated=root)
        os._exit(0)

    def stop(_signum, _frame):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, stop)
    while True:
        try:
            os.waitpid(pid, 0)
            break
        except ChildProcessError:
            break
        except InterruptedError:
            continue
    sweep_program()
    shutil.rmtree(home, ignore_errors=True)
    accounts.release()
    os._exit(0)


def run():
    """``python harness.pyz session``: a session of its own where the backend isolates each execution (the local
    backend), else a supervised one (see :func:`_supervised_session`). Never returns."""
    if own_sandbox():
        session_main()
        os._exit(0)
    _supervised_session()
