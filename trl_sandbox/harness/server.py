"""The judge's two ways of taking requests: one request per process (:func:`main`, ``python harness.pyz`` as the
remote backends run it) and a server of many (:func:`serve`, the local backend's judge server in its fork server).

Either way the judge forks (or has the fork server start) the worker before it reads a request, runs the request's
mode (:data:`MODES`), and writes the records (see the package docstring for both).
"""

import ctypes
import json
import os
import select
import signal
import stat
import struct
import sys
import time

from .base import (
    CLEANUP_MARGIN_S,
    PR_SET_DUMPABLE,
    REQUEST_DIR,
    STDIN_PREFIX,
    Timeout,
    WorkerDied,
    add_packages,
    describe,
    record_mac,
)
from .checkers import judge_selftest
from .judges import judge_assert, judge_call, judge_function, judge_reference, judge_stdio
from .peer import ORIGINAL_STREAMS
from . import accounts
from .accounts import claim_program_uid, private_home, sweep_program
from .processes import WORKER_HOME, own_sandbox, run_in_child, spawn_worker
from .pytest_runner import judge_pytest
from .wire import read_frame, receive, send, send_frames
from .zygote import start_zygote

#: The judge of each request mode (see :mod:`.judges`).
MODES = {"assert": judge_assert, "call": judge_call, "stdio": judge_stdio, "reference": judge_reference,
         "function": judge_function, "pytest": judge_pytest, "selftest": judge_selftest}


class SpawnError(Exception):
    """The fork server could not start a worker (an infrastructure failure, not the program's)."""


def _alarm(signum, frame):
    raise Timeout()


def _disarm():
    while True:
        try:
            signal.setitimer(signal.ITIMER_REAL, 0)
            return
        except Timeout:  # the alarm fired just now: it no longer matters
            continue


def _reference_in_child(req, timeout, deadline):
    """Reference mode in a fork of the judge server (:func:`.processes.run_in_child`), so that task code cannot change
    the long-lived server. Returns the records; raises Timeout past ``deadline``."""

    def run(emit):
        emit({"done": judge_reference(emit, None, req, timeout)})

    records = []
    for record in run_in_child(run, deadline):
        if record.get("child_error") == "it ended early":
            records.append({"crash": "the reference run ended early"})
        elif "child_error" in record:
            records.append({"load": "error", "error": record["child_error"]})
        else:
            records.append(record)
    return records


def _ready_worker(ready, output_limit, timeout_s, spawn):
    """The worker started for this request before it arrived (``ready``: :func:`serve`'s) when it still lives, has
    this output limit and was started for a time limit at least this one's: it is told this one (``{"q": "cpu"}``,
    its first message: it lowers its CPU-time limit to what the fork server gives a worker of ``timeout_s``); else a
    new one from ``spawn``."""
    if ready:
        (limit, cpu_s), worker = ready.pop()
        if limit == output_limit and int(timeout_s) <= int(cpu_s) and not select.select([worker.pidfd], [], [], 0)[0]:
            try:
                send(worker.cmd_w, {"q": "cpu", "s": timeout_s})
                return worker
            except OSError:
                pass
        _discard(worker)
    return spawn(output_limit, timeout_s)


def _discard(worker):
    """End a worker that never got a request: its command pipe closed, it exits by itself (a kill could find it still
    setting itself up under the fork server's credentials); killed if it has not within 5 s."""
    os.close(worker.cmd_w)
    worker.cmd_w = None
    select.select([worker.pidfd], [], [], 5.0)
    try:
        worker.close()
    except OSError:
        pass


def _prefork(ready, header, spawn, cpu_s):
    """Start the worker of the next request now, between requests (its fork is then off a request's path), with the
    last request's output limit and a time limit of ``cpu_s`` (the longest yet: the next request lowers it to its
    own). The fork server starts it, from a process that never held a request, as it would for that request. A
    failure is left to the next request's own start."""
    try:
        output_limit = int(header.get("output_limit", 1 << 20))
        ready.append(((output_limit, cpu_s), spawn(output_limit, cpu_s)))
    except (SpawnError, TypeError, ValueError, OSError):
        pass


def _judge_request(header, request, spawn, ready=()):
    """One request of :func:`serve`: returns (status dict, records, worker output). ``ready``: see :func:`serve`."""
    start = time.monotonic()
    timeout_s = float(header["timeout_s"])
    cap = start + timeout_s
    records = []
    status = {}
    worker = None
    recursion_limit = sys.getrecursionlimit()
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, timeout_s)
            req = json.loads(request)
            if req.get("budget_s"):  # the completion's budget: the command's limit also holds the judge's start
                cap = min(cap, start + float(req["budget_s"]))
            records.append({"ready": True})
            test_timeout = float(req.get("test_timeout_s", 5.0))
            if req["mode"] == "reference":
                records.extend(_reference_in_child(req, test_timeout, cap))
            elif req["mode"] == "selftest":  # task code only, each checker run in a fork of its own
                n = judge_selftest(records.append, None, req, test_timeout)
                records.append({"done": n})
            else:
                output_limit = int(header.get("output_limit", 1 << 20))
                worker = _ready_worker(ready, output_limit, timeout_s, spawn)
                worker.cap = cap
                worker.respawn = lambda: spawn(output_limit, max(1.0, cap - time.monotonic()))
                n = MODES[req["mode"]](records.append, worker, req, test_timeout)
                records.append({"done": n})
        finally:
            _disarm()
    except Timeout:
        status["timed_out"] = True
    except SpawnError as exc:
        status["error"] = str(exc)
    except Exception as exc:  # noqa: BLE001 - a malformed request: reported like a crashed judge
        records.append({"crash": "judge: " + describe(exc)})
    finally:
        sys.setrecursionlimit(recursion_limit)  # a test may have raised it
        sys.stdout = ORIGINAL_STREAMS[0]
    truncated = bool(worker is not None and worker.output is not None and worker.output.truncated)
    output = worker.close() if worker is not None else b""
    release = getattr(spawn, "release", None)
    if worker is not None and release is not None:
        try:  # its slot emptied and checked: whether this execution spent the sandbox, said in this answer
            spent = release(worker)
        except OSError as exc:
            spent = "the fork server is gone (%s)" % (exc,)
        if spent:
            status["spent"] = spent
    timed_out = status.get("timed_out", False) or time.monotonic() >= cap
    status.update(
        exit_code=None if timed_out else 0,
        timed_out=timed_out,
        duration_s=time.monotonic() - start,
        truncated=truncated,
    )
    return status, records, output


def serve(conn, spawn):
    """Judge server loop (the local backend's fork server runs it in a long-lived, isolated process).

    Per request, ``conn`` (a stream socket to the host) carries two frames in: ``{"timeout_s", "output_limit"}``
    and the request as :func:`main` reads it on stdin; and three frames out: ``{"exit_code", "timed_out",
    "duration_s", "truncated", "spent"?}`` (or ``{"error"}`` for an infrastructure failure; ``spent``: why the
    sandbox must be replaced after this execution, whose verdict stands), the records :func:`main` would have
    written, and the worker's output. ``spawn(output_limit, timeout_s)`` returns a :class:`.processes.Worker`
    started by the fork server from a process that never held a request, or raises :class:`SpawnError`;
    ``spawn.release(worker)``, where it exists, is told of each worker the request is done with (killed) and returns
    why the sandbox is spent, or None. Returns at EOF.

    Between requests, the worker of the next one is already started (:func:`_prefork`; a worker never sees more than
    one request), so that a request waits for no fork.
    """
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    signal.signal(signal.SIGALRM, _alarm)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    ORIGINAL_STREAMS[0] = sys.stdout
    add_packages()  # for the tests' own imports (KodCode's test files import numpy, pandas...)
    ready = []  # [((output_limit, cpu_s), worker)]: the next request's worker, started before it arrived
    longest = 0.0  # the longest time limit of a request yet
    while True:
        try:
            header = receive(conn)
            request = read_frame(conn)
        except (WorkerDied, OSError, ValueError, struct.error):
            for _key, worker in ready:
                _discard(worker)
            return
        status, records, output = _judge_request(header, request, spawn, ready)
        send_frames(conn, [json.dumps(status).encode(), "".join(json.dumps(r) + "\n" for r in records).encode(),
                           output])
        if not ready and "error" not in status:
            try:
                longest = max(longest, float(header["timeout_s"]))
            except (KeyError, TypeError, ValueError):
                continue
            _prefork(ready, header, spawn, longest)


def _user(uid):
    """The name of ``uid`` from the password database, else ``"uid N"``."""
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return f"uid {uid}"


def _stdin_exposure():
    """Remote backends whose exec API has no stdin upload the request to a file named ``STDIN_PREFIX...`` and
    redirect it to our stdin. Remove that file, then check that nothing but our descriptor reaches the request.

    Returns None when the request can be read through our stdin only (a pipe; a file with no name left), else the
    one-line message of why it can still be reached: :func:`main` then runs nothing. The test is the file's link
    count after the unlink (``fstat``), not the unlink's success: a name the unlink left (it failed, or a hard link
    elsewhere) fails the run.
    """
    try:
        if not stat.S_ISREG(os.fstat(0).st_mode):
            return None  # a pipe has no name, and our /proc/<pid>/fd is closed to the code (we are not dumpable)
        path = os.readlink("/proc/self/fd/0")
    except OSError:
        return None  # no stdin: the request cannot be read by anyone (the judge then fails to parse it)
    failure = None
    if os.path.basename(path).startswith(STDIN_PREFIX) and not path.endswith(" (deleted)"):
        try:
            os.unlink(path)
        except OSError as exc:
            failure = exc
    links = os.fstat(0).st_nlink
    if links == 0:
        directory = os.path.dirname(path)
        if os.geteuid() == 0 and os.path.basename(directory) == REQUEST_DIR:
            try:  # the service's next upload lands where no other user (nobody: the code) can enter
                os.chmod(directory, 0o700)
            except OSError:
                pass
        return None
    uid = os.geteuid()
    refusal = "trl-sandbox: refusing to run the program: "
    if not os.path.basename(path).startswith(STDIN_PREFIX):
        return (f"{refusal}the request came on stdin as the file {path}, which the harness removes only when its "
                f"name starts with {STDIN_PREFIX}, so the program could read the tests and expected outputs; pass the "
                "request through a pipe. No program ran.")
    if failure is None:
        return (f"{refusal}the request file {path} was removed but {links} other name(s) (hard links) still reach "
                "it, so the program could read the tests and expected outputs. No program ran.")
    directory = os.path.dirname(path) or "."
    try:
        info = os.stat(directory)
        owner = f"owned by {_user(info.st_uid)}, mode {stat.S_IMODE(info.st_mode):o}"
    except OSError as exc:
        owner = f"not readable: {exc.strerror}"
    user = _user(uid)
    return (f"{refusal}the request file {path} could not be removed ({failure.strerror or failure}), so the program "
            f"could read the tests and expected outputs. The harness runs as {user} (uid {uid}), which cannot remove "
            f"entries of {directory} ({owner}): run the sandbox's commands as the user that owns that directory (or "
            f"as root), or make it writable by {user}. No program ran.")


def main():
    """Run one request from stdin; records on stdout (see the module docstring).

    Order matters:

    1. the request file (remote backends) is removed, and verified gone (:func:`_stdin_exposure`): if it cannot be,
       the judge writes one ``{"infra": true, "error"}`` record (the host's ``infra_error``: no reward, retried on
       another sandbox) and starts nothing: fail closed, no worker ever exists while the request can be read;
    2. this process is made non-dumpable (its ``/proc`` entries, its descriptors and memory closed to processes of
       the same uid) and a child subreaper, so that every process the code starts, daemons included, stays among its
       descendants; as root, it claims an account of this run's own for the code (:mod:`.accounts`), after removing
       every process and temporary file of the accounts of runs killed before their end;
    3. the worker is forked, then the zygote (which drops the worker's pipe ends), and only then is the request read:
       the tests never enter the worker's memory. Every record after it carries the signature of the request's
       ``key`` when it has one (:func:`.base.record_mac`): on a remote sandbox the program may be able to write into
       the command's output, and the host keeps only signed records;
    4. at the end, and on SIGTERM, SIGINT or SIGHUP (coreutils ``timeout`` sends SIGTERM before SIGKILL), every
       descendant is stopped then killed and, as root, every process and temporary file of this run's account (never
       another's: several sandboxes may share one kernel); the worker's home is removed. As root the worker is PID 1
       of a PID namespace of its own where the kernel allows it: killing it ends everything the program started.
       With a ``budget_s`` in the request (the backend's time limit for the whole command) the program's requests
       stop :data:`.base.CLEANUP_MARGIN_S` before it, so that this cleanup ends before the service's own kill, which
       would orphan what the code started.
    """
    started = time.monotonic()
    result_fd = os.dup(1)  # the result channel: the worker never holds it
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the file-size limit fails instead of killing

    key = []  # the request's key, once read: every later record carries its signature

    def emit(record):
        if key:
            record = {**record, "mac": record_mac(key[0], record)}
        data = (json.dumps(record) + "\n").encode()
        while data:
            data = data[os.write(result_fd, data):]

    exposure = _stdin_exposure()
    if exposure is not None:
        emit({"infra": True, "error": exposure})
        os._exit(0)
    try:
        ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    import trl_sandbox_reaper  # the archive's copy of trl_sandbox/backends/_reaper.py (see .archive)

    trl_sandbox_reaper.become_subreaper()
    root = os.geteuid() == 0
    if root:  # this run's own account: what a killed run left under its account is swept first (see .accounts)
        claim_program_uid()
    home = None
    if not own_sandbox():
        # A directory of the worker's own (removed at the end): a compiled program's files, or anything the code
        # writes, go there, not into the sandbox's working directory, which the next command uses; as root, the
        # worker runs as nobody in it.
        home = private_home("trl-sandbox-worker-")
        WORKER_HOME[0] = home

    def leave(status):
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)  # once: a second signal does not start the cleanup again
        trl_sandbox_reaper.kill_descendants(time.monotonic() + 5.0)
        if root:
            sweep_program()
        if home is not None:
            import shutil

            shutil.rmtree(home, ignore_errors=True)
        accounts.release()
        os._exit(status)

    status = 1
    try:
        out_r, out_w = os.pipe()
        worker = spawn_worker(result_fd, out_r, out_w, home)  # before the request is read
        # fresh workers after a crash: also forked before the read, without the first worker's pipe ends
        worker.respawn = start_zygote(result_fd, home, close=(worker.cmd_w, worker.reply_r, out_r))
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, lambda number, _frame: leave(128 + number))
        sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
        ORIGINAL_STREAMS[0] = sys.stdout
        add_packages()  # for the tests' own imports (KodCode's test files import numpy, pandas...)

        req = json.loads(sys.stdin.buffer.read())
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        if isinstance(req.get("key"), str):
            key.append(req["key"])
        budget = req.get("budget_s")
        if budget:
            worker.cap = started + max(float(budget) / 2, float(budget) - CLEANUP_MARGIN_S)
        emit({"ready": True})
        n = MODES[req["mode"]](emit, worker, req, float(req.get("test_timeout_s", 5.0)))
        truncated = worker.output is not None and worker.output.truncated
        trl_sandbox_reaper.kill_descendants(time.monotonic() + 5.0)  # nothing the code started writes any more
        output = worker.close()
        emit({"done": n})
        # What the code printed, JSON-escaped on the result channel (it cannot add records), for error messages.
        emit({"output": output.decode("utf-8", errors="replace"), "truncated": truncated})
        status = 0
    except BaseException:  # noqa: BLE001 - the judge failed: the host sees no "done" (an error), the cleanup runs
        import traceback

        traceback.print_exc()
    finally:
        leave(status)
