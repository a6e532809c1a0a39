"""trl-sandbox test harness: runs INSIDE the sandbox. Standard library only (Python >= 3.8).

Written into every sandbox at pool creation and run as ``python harness.py`` with one JSON request on stdin
(built by :mod:`trl_sandbox.tasks`). Two processes:

- the *judge* (this process, trusted) never executes model-written code. It reads the request, runs the tests,
  and writes JSON-lines records to its *result channel*: the original stdout, kept on a private descriptor;
- the *worker*, forked *before* the request is read (so the tests and the trusted code never exist in its memory),
  loads the model's program and answers the judge's requests over a pipe: call a function with arguments, or run
  the program on one stdin. It holds no result descriptor, cannot trace the judge (non-dumpable; seccomp), and in
  the local backend cannot signal it (the judge is PID 1 of the sandbox's PID namespace).

Values cross the pipe serialized with exact types (:func:`encode`): the judge compares plain builtins it decoded
itself, so an object with a rigged ``__eq__``/``__hash__``/``__str__``, builtins patched by the code, a patched
harness or patched test helpers have no effect on the verdict. For HumanEval tasks the judge runs the task's own
prompt (trusted) for helper functions the tests use, so a completion redefining them changes nothing.

Request fields: ``mode`` (``assert`` | ``call`` | ``stdio`` | ``reference``), ``program`` (source run by the worker),
``trusted`` (``assert``: source the judge runs first, e.g. the HumanEval prompt), ``setup`` (``assert``: test
module source run by the judge), ``entry`` (``assert``: function the tests call as ``candidate``), ``tests``,
``func_name``, ``test_timeout_s``, ``output_limit``, ``banned`` (runtime bans: ``builtins``, ``modules``,
``imports``).

Records: ``{"ready": true}``, then ``{"load": "error" | "timeout", "error"}`` or one ``{"i": k, ...}`` per test
(``ok`` for ``assert``; ``out`` for ``call``/``stdio``/``reference``; ``error``; ``timeout``), ``{"crash": reason}``
when the worker died, then ``{"done": n}``, then (``python harness.py`` only) ``{"output": text, "truncated"}``:
the first 64 KiB the worker printed. The worker's stdout and stderr are a pipe the judge reads, never the process's
own: remote backends merge a command's stdout and stderr, and nothing the code prints may reach the result channel.

Remote sandboxes: their exec API has no stdin, so the backend uploads the request as a file named
``.trl-sandbox-stdin-*`` and redirects it; the judge unlinks it and becomes non-dumpable before forking the worker.
The worker gets no-new-privs (``sudo`` cannot make it root) and, when the harness runs as root, runs as ``nobody``.
"""

import ast
import builtins
import copy
import ctypes
import io
import json
import math
import os
import random
import select
import signal
import stat
import struct
import sys
import time

# The harness's own references to builtins a task may ban at runtime in the worker (see _apply_bans).
_sorted, _callable = sorted, callable
_MAX_DEPTH = 100
_MAX_MESSAGE = 64 << 20
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
NOBODY = 65534
#: Name prefix of the request files remote backends redirect to our stdin (see _forget_stdin_file).
STDIN_PREFIX = ".trl-sandbox-stdin-"
_OUTPUT_RECORD_LIMIT = 64 << 10


class Unserializable(Exception):
    pass


class _Timeout(BaseException):
    """A test ran past its budget (BaseException: trusted test code does not catch it)."""


class _WorkerDied(BaseException):
    """The worker process exited or crashed."""


# -- serialization (used on both sides) --------------------------------------------------------------------------


def encode(value, depth=0):
    """Serialize ``value`` to JSON-able data, with exact types only (no subclasses).

    None -> ["N"], bool -> ["b", v], int -> ["i", v], float -> ["f", repr], str -> ["s", v], bytes -> ["y", hex],
    list/tuple -> ["l"/"t", [items]], dict -> ["d", [[k, v]...] in insertion order], set/frozenset -> ["S"/"F",
    sorted items].
    """
    if depth > _MAX_DEPTH:
        raise Unserializable("nested deeper than %d" % _MAX_DEPTH)
    t = type(value)
    if value is None:
        return ["N"]
    if t is bool:
        return ["b", value]
    if t is int:
        return ["i", value]
    if t is float:
        return ["f", repr(value)]
    if t is str:
        return ["s", value]
    if t is bytes:
        return ["y", value.hex()]
    if t is list or t is tuple:
        return ["l" if t is list else "t", [encode(v, depth + 1) for v in value]]
    if t is dict:  # insertion order kept: code may depend on it (the host compares dicts unordered)
        return ["d", [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]]
    if t is set or t is frozenset:
        items = _sorted((encode(v, depth + 1) for v in value), key=json.dumps)
        return ["S" if t is set else "F", items]
    raise Unserializable("cannot serialize an object of type %s" % t.__name__)


def decode(data):
    """Inverse of :func:`encode`: fresh builtin objects."""
    tag = data[0]
    if tag == "N":
        return None
    if tag in ("b", "i", "s"):
        return data[1]
    if tag == "f":
        return float(data[1])
    if tag == "y":
        return bytes.fromhex(data[1])
    if tag == "l":
        return [decode(v) for v in data[1]]
    if tag == "t":
        return tuple(decode(v) for v in data[1])
    if tag == "d":
        return {decode(k): decode(v) for k, v in data[1]}
    if tag == "S":
        return {decode(v) for v in data[1]}
    if tag == "F":
        return frozenset(decode(v) for v in data[1])
    raise Unserializable("unknown tag %r" % (tag,))


def _describe(exc):
    return ("%s: %s" % (type(exc).__name__, exc))[:500]


# -- framed messages over pipes ----------------------------------------------------------------------------------


def _send_frame(fd, data):
    data = struct.pack("<I", len(data)) + data
    while data:
        data = data[os.write(fd, data):]


def _send(fd, obj):
    _send_frame(fd, json.dumps(obj).encode())


def _read_exact(fd, n, deadline, output=None):
    """Read ``n`` bytes from ``fd`` by ``deadline`` (monotonic seconds, None: no limit); meanwhile keep draining the
    worker's ``output`` (an :class:`_Output`) so that a worker printing a lot never blocks."""
    chunks = []
    while n:
        if deadline is not None or output is not None:
            while True:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise _Timeout()
                ready = select.select([fd] if output is None else [fd, output.fd], [], [], remaining)[0]
                if not ready:
                    raise _Timeout()
                if output is not None and output.fd in ready:
                    output.take()
                if fd in ready:
                    break
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise _WorkerDied()
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _read_frame(fd, deadline=None, output=None):
    (size,) = struct.unpack("<I", _read_exact(fd, 4, deadline, output))
    if size > _MAX_MESSAGE:
        raise _WorkerDied()
    return _read_exact(fd, size, deadline, output)


def _receive(fd, deadline=None, output=None):
    message = json.loads(_read_frame(fd, deadline, output))
    if not isinstance(message, dict):
        raise _WorkerDied()
    return message


class _Output:
    """The worker's stdout and stderr (one pipe), read by the judge server as it goes: the first ``limit`` bytes
    are kept."""

    def __init__(self, fd, limit):
        self.fd, self.limit = fd, limit
        self.data = bytearray()
        self.truncated = False
        os.set_blocking(fd, False)

    def take(self):
        """Read what is available now; True at end of file."""
        while True:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return False
            if not chunk:
                return True
            room = self.limit - len(self.data)
            if room > 0:
                self.data += chunk[:room]
            if len(chunk) > room:
                self.truncated = True

    def finish(self):
        """Read the rest (the worker and everything it started are gone) and close."""
        try:
            self.take()
        finally:
            os.close(self.fd)
        return bytes(self.data)


# -- the worker (runs model code; never sees the tests) ----------------------------------------------------------


class _BlockedImports:
    """A meta-path finder refusing banned modules (and every new import when imports are banned)."""

    def __init__(self, modules, all_imports):
        self.modules = set(modules)
        self.all_imports = all_imports

    def find_spec(self, name, path=None, target=None):
        if self.all_imports or name.split(".")[0] in self.modules:
            raise ImportError("importing %s is not allowed in this task" % name)
        return None


def _apply_bans(banned):
    for name in banned.get("builtins", []):
        builtins.__dict__.pop(name, None)
    modules = banned.get("modules", [])
    if modules:  # (scanning sys.modules touches every module name: pages a fork would otherwise share)
        for name in list(sys.modules):
            if name.split(".")[0] in modules:
                del sys.modules[name]
    if modules or banned.get("imports"):
        sys.meta_path.insert(0, _BlockedImports(modules, banned.get("imports")))
    if banned.get("imports"):
        def _no_import(name, *args, **kwargs):
            raise ImportError("importing %s is not allowed in this task" % name)
        builtins.__import__ = _no_import


def _worker(cmd_r, reply_w):
    state = {"ns": None, "code": None}
    while True:
        try:
            msg = _receive(cmd_r)
        except BaseException:  # noqa: BLE001 - the judge went away
            os._exit(0)
        try:
            reply = _work(state, msg)
        except BaseException as exc:  # noqa: BLE001 - the code's failures are answers
            reply = {"error": _describe(exc), "exc_type": type(exc).__name__}
        try:
            _send(reply_w, reply)
        except BaseException:  # noqa: BLE001
            os._exit(0)


def _work(state, msg):
    op = msg["op"]
    if op == "load":
        _apply_bans(msg.get("banned") or {})
        state["code"] = compile(msg["program"], "<completion>", "exec")
        if msg["mode"] == "stdio":
            return {"names": []}
        ns = {"__name__": "__solution__", "__builtins__": builtins}
        state["ns"] = ns
        exec(state["code"], ns)
        names = _sorted(k for k, v in list(ns.items()) if _callable(v) and not k.startswith("__"))
        return {"names": names}
    if op == "call":
        func = state["ns"].get(msg["name"])
        if not _callable(func):
            raise NameError("the program does not define %s()" % msg["name"])
        args = [decode(a) for a in msg["args"]]
        kwargs = {k: decode(v) for k, v in msg.get("kwargs", {}).items()}
        out = func(*args, **kwargs)
        reply = {"out": encode(out)}
        try:
            reply["args_after"] = [encode(a) for a in args]
        except Unserializable:
            pass
        return reply
    if op == "stdio":
        return _run_stdin(state["code"], msg["input"], int(msg["limit"]))
    raise ValueError("unknown op %r" % op)


def _run_stdin(code, text, limit):
    with open("stdin.txt", "wb") as f:
        f.write(text.encode())
    in_fd = os.open("stdin.txt", os.O_RDONLY)
    out_fd = os.open("stdout.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    saved_in, saved_out = os.dup(0), os.dup(1)
    os.dup2(in_fd, 0)
    os.dup2(out_fd, 1)
    os.close(in_fd)
    os.close(out_fd)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8")
    reply = {}
    try:
        exec(code, {"__name__": "__main__", "__builtins__": builtins})
    except SystemExit as exc:
        if exc.code not in (None, 0):
            reply["error"] = "SystemExit(%r)" % (exc.code,)
    except BaseException as exc:  # noqa: BLE001
        reply["error"] = _describe(exc)
    try:
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001
        pass
    os.dup2(saved_out, 1)
    os.dup2(saved_in, 0)
    os.close(saved_in)
    os.close(saved_out)
    sys.stdout = sys.stderr
    with open("stdout.txt", "rb") as f:
        raw = f.read(limit + 1)
    reply["out"] = raw[:limit].decode("utf-8", errors="replace")
    if len(raw) > limit:
        reply["truncated"] = True
    return reply


# -- the judge (trusted) -----------------------------------------------------------------------------------------


class _Worker:
    """The judge's handle on a worker: its pipes, and how to kill it.

    ``pidfd`` (judge server): the worker is not our child; killing it through its pidfd and waiting for the pidfd
    to become readable means it and everything it started are gone. ``output``: its stdout/stderr pipe, drained
    while we wait for answers. ``cap``: a deadline (monotonic seconds) no request may pass: the completion's.
    """

    def __init__(self, pid, cmd_w, reply_r, pidfd=None, output=None):
        self.pid, self.cmd_w, self.reply_r = pid, cmd_w, reply_r
        self.pidfd, self.output = pidfd, output
        self.cap = None
        self.alive = True

    def request(self, msg, deadline):
        if not self.alive:
            raise _WorkerDied()
        if self.cap is not None:
            deadline = self.cap if deadline is None else min(deadline, self.cap)
        try:
            _send(self.cmd_w, msg)
            return _receive(self.reply_r, deadline, self.output)
        except _Timeout:
            self.kill()
            raise
        except Exception:  # noqa: BLE001 - a closed pipe, or garbage the code wrote into it: it is dead to us
            self.kill()
            raise _WorkerDied()
        except _WorkerDied:
            self.kill()
            raise

    def kill(self):
        if self.alive:
            self.alive = False
            if self.pidfd is not None:
                try:
                    signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                select.select([self.pidfd], [], [], 10.0)  # readable: it exited, and its PID namespace is empty
                return
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass

    def close(self):
        """Kill the worker and release every descriptor; returns its output (bytes)."""
        self.kill()
        for fd in (self.cmd_w, self.reply_r, self.pidfd):
            if fd is not None:
                os.close(fd)
        return self.output.finish() if self.output is not None else b""


def _deny_processes():
    """Forbid the worker to create processes (threads stay allowed): the backend asks for it where it cannot
    bound process counts per sandbox. Fails closed: without the filter the worker exits."""
    try:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import trl_sandbox_seccomp

        trl_sandbox_seccomp.install(trl_sandbox_seccomp.build_no_processes())
    except BaseException as exc:  # noqa: BLE001
        os.write(2, ("trl-sandbox: cannot forbid process creation: %s\n" % exc).encode())
        os._exit(70)


def _spawn_worker(result_fd, out_r, out_w, home):
    """Fork the worker (``main``). Its stdout and stderr are ``out_w``, a pipe the judge reads: remote backends
    merge a command's stdout and stderr, so nothing the code prints may reach the result channel directly. When the
    harness runs as root (a remote sandbox's default user), the worker runs as ``nobody`` in ``home``."""
    cmd_r, cmd_w = os.pipe()
    reply_r, reply_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(result_fd)
            os.close(out_r)
            os.close(cmd_w)
            os.close(reply_r)
            devnull = os.open(os.devnull, os.O_RDONLY)  # stdin carries the request: never readable here
            os.dup2(devnull, 0)
            os.close(devnull)
            os.dup2(out_w, 1)
            os.dup2(out_w, 2)
            os.close(out_w)
            # No setuid program (sudo, su) can give the code more privileges than it starts with.
            if ctypes.CDLL(None).prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                os._exit(70)
            if home is not None:
                os.chdir(home)
                os.setgroups([])
                os.setresgid(NOBODY, NOBODY, NOBODY)
                os.setresuid(NOBODY, NOBODY, NOBODY)
            if os.environ.get("TRL_SANDBOX_DENY_PROCESSES") == "1":
                _deny_processes()
        except BaseException as exc:  # noqa: BLE001 - never run the code half set up
            os.write(2, ("trl-sandbox: worker setup failed: %s\n" % (exc,)).encode())
            os._exit(70)
        _worker(cmd_r, reply_w)
        os._exit(0)
    os.close(cmd_r)
    os.close(reply_w)
    os.close(out_w)
    return _Worker(pid, cmd_w, reply_r, output=_Output(out_r, _OUTPUT_RECORD_LIMIT))


class _Candidate:
    """Stands in the judge for a function of the model's program: calls it in the worker."""

    def __init__(self, worker, name, clock):
        self._worker, self._name, self._clock = worker, name, clock

    def __call__(self, *args, **kwargs):
        msg = {
            "op": "call",
            "name": self._name,
            "args": [encode(a) for a in args],
            "kwargs": {k: encode(v) for k, v in kwargs.items()},
        }
        reply = self._worker.request(msg, self._clock["deadline"])
        if "error" in reply:
            exc_type = getattr(builtins, reply.get("exc_type", ""), None)
            message = str(reply["error"])
            if isinstance(exc_type, type) and issubclass(exc_type, Exception):
                prefix = exc_type.__name__ + ": "
                if message.startswith(prefix):  # described again by the judge: no "TypeError: TypeError: ..."
                    message = message[len(prefix):]
            else:
                exc_type = RuntimeError
            raise exc_type(message)
        for arg, after in zip(args, reply.get("args_after", [])):
            _update_in_place(arg, decode(after))  # tests that check in-place mutation see it
        return decode(reply["out"])


def _update_in_place(arg, after):
    try:
        if type(arg) is list and type(after) is list:
            arg[:] = after
        elif type(arg) is dict and type(after) is dict:
            arg.clear()
            arg.update(after)
        elif type(arg) is set and type(after) is set:
            arg.clear()
            arg.update(after)
    except Exception:  # noqa: BLE001
        pass


def _load(emit, worker, req, deadline):
    """Load the program in the worker; emit a load record and return None on failure, else its names."""
    msg = {"op": "load", "mode": req["mode"], "program": req["program"], "banned": req.get("banned")}
    try:
        reply = worker.request(msg, deadline)
    except _Timeout:
        emit({"load": "timeout", "error": "loading the program took longer than the test time limit"})
        return None
    except _WorkerDied:
        emit({"load": "error", "error": "the program ended the worker while loading"})
        return None
    if "error" in reply:
        emit({"load": "error", "error": reply["error"]})
        return None
    return reply["names"]


_CODE_CACHE = {}


def _compiled(source, filename):
    """``compile(source, filename, "exec")`` for trusted task code, cached: a judge server sees the same prompts
    and tests again for every completion of a prompt (``num_generations``)."""
    key = (source, filename)
    code = _CODE_CACHE.get(key)
    if code is None:
        if len(_CODE_CACHE) >= 4096:
            _CODE_CACHE.clear()
        code = _CODE_CACHE[key] = compile(source, filename, "exec")
    return code


def _judge_assert(emit, worker, req, timeout):
    names = _load(emit, worker, req, time.monotonic() + timeout)
    if names is None:
        return 0
    clock = {"deadline": None}
    ns = {"__name__": "__tests__", "__builtins__": builtins}
    try:
        exec(_compiled(req.get("trusted") or "", "<task prompt>"), ns)
    except BaseException as exc:  # noqa: BLE001 - a broken task, reported as such
        emit({"load": "error", "error": "task prompt failed: " + _describe(exc)})
        return 0
    trusted = set(ns)
    entry = req.get("entry")
    for name in names:
        if name not in trusted or name == entry:
            ns[name] = _Candidate(worker, name, clock)
    if entry and entry not in ns:
        ns[entry] = _Candidate(worker, entry, clock)
    try:
        exec(_compiled(req.get("setup") or "", "<task tests>"), ns)
    except BaseException as exc:  # noqa: BLE001
        emit({"load": "error", "error": "task test setup failed: " + _describe(exc)})
        return 0
    n = 0
    for i, test in enumerate(req["tests"]):
        n += 1
        clock["deadline"] = time.monotonic() + timeout
        try:
            exec(_compiled(test, "<test %d>" % i), ns)
            emit({"i": i, "ok": True})
        except _Timeout:
            emit({"i": i, "ok": False, "timeout": True})
            break
        except _WorkerDied:
            emit(_CRASH)
            break
        except BaseException as exc:  # noqa: BLE001
            emit({"i": i, "ok": False, "error": _describe(exc)})
    return n


_CRASH = {"crash": "the program ended the test run early"}


def _judge_requests(emit, worker, req, timeout, messages, record_of):
    """Load the program, then send the worker one message per test (``messages``, in order) and emit
    ``record_of(i, reply)`` for each; stop at the first timeout or when the worker dies."""
    if _load(emit, worker, req, time.monotonic() + timeout) is None:
        return 0
    n = 0
    for i, msg in enumerate(messages):
        n += 1
        try:
            reply = worker.request(msg, time.monotonic() + timeout)
        except _Timeout:
            emit({"i": i, "timeout": True})
            break
        except _WorkerDied:
            emit(_CRASH)
            break
        emit(record_of(i, reply))
    return n


def _call_record(i, reply):
    try:
        decode(reply["out"])  # the worker's reply is untrusted: it must at least be a valid value
        return {"i": i, "out": reply["out"]}
    except Exception:  # noqa: BLE001
        return {"i": i, "error": str(reply.get("error", "invalid reply"))[:500]}


def _judge_call(emit, worker, req, timeout):
    messages = (
        {"op": "call", "name": req["func_name"], "args": [encode(ast.literal_eval(literal))]}
        for literal in req["tests"]
    )
    return _judge_requests(emit, worker, req, timeout, messages, _call_record)


def _judge_stdio(emit, worker, req, timeout):
    limit = int(req.get("output_limit", 1 << 20))

    def record(i, reply):
        out = {"i": i, "out": str(reply.get("out", ""))[:limit]}
        if reply.get("truncated"):
            out["truncated"] = True
        if "error" in reply:
            out["error"] = str(reply["error"])[:500]
        return out

    messages = ({"op": "stdio", "input": text, "limit": limit} for text in req["tests"])
    return _judge_requests(emit, worker, req, timeout, messages, record)


def _limited(fn, seconds):
    def on_alarm(signum, frame):
        raise _Timeout()

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _judge_reference(emit, worker, req, timeout):
    """Evaluate the test arguments (``random`` seeded with 0, once, as in the TRL Daytona example) and the
    reference on each. Runs only trusted task code: the worker is not used."""
    ns = {"__name__": "__reference__", "__builtins__": builtins, "random": random, "math": math}
    try:
        _limited(lambda: exec(compile(req.get("program") or "", "<reference>", "exec"), ns), timeout)
    except BaseException as exc:  # noqa: BLE001
        emit({"load": "error", "error": _describe(exc)})
        return 0
    name = req["func_name"]
    func = ns.get(name, getattr(builtins, name, None))
    if not callable(func):
        emit({"load": "error", "error": "reference %r is neither defined nor a builtin" % name})
        return 0
    random.seed(0)
    args = []
    for i, expr in enumerate(req["tests"]):
        try:
            args.append(eval(compile(expr, "<test %d>" % i, "eval"), ns))
        except BaseException as exc:  # noqa: BLE001
            emit({"load": "error", "error": "test %d argument %r: %s" % (i, expr, _describe(exc))})
            return 0
    n = 0
    for i, arg in enumerate(args):
        n += 1
        literal = repr(arg)
        try:
            same = ast.literal_eval(literal) == arg
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            same = False
        if not same:
            emit({"i": i, "error": "argument of test %d is not a Python literal: %s" % (i, literal[:200])})
            continue
        try:
            out = _limited(lambda: func(copy.deepcopy(arg)), timeout)
            emit({"i": i, "arg": literal, "out": encode(out)})
        except BaseException as exc:  # noqa: BLE001
            emit({"i": i, "error": _describe(exc)})
    return n


_MODES = {"assert": _judge_assert, "call": _judge_call, "stdio": _judge_stdio, "reference": _judge_reference}


# -- the judge server (local backend's fork server) ---------------------------------------------------------------


class SpawnError(Exception):
    """The fork server could not start a worker (an infrastructure failure, not the program's)."""


def _alarm(signum, frame):
    raise _Timeout()


def _disarm():
    while True:
        try:
            signal.setitimer(signal.ITIMER_REAL, 0)
            return
        except _Timeout:  # the alarm fired just now: it no longer matters
            continue


def _reference_in_child(req, timeout, deadline):
    """Reference mode in a fork of the judge server, so that task code cannot change the long-lived server.
    Returns the records; raises _Timeout past ``deadline``."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        records = []
        try:
            records.append({"done": _judge_reference(records.append, None, req, timeout)})
        except BaseException as exc:  # noqa: BLE001
            records.append({"load": "error", "error": _describe(exc)})
        _send(w, {"records": records})
        os._exit(0)
    os.close(w)
    try:
        return _receive(r, deadline)["records"]
    except _WorkerDied:
        return [{"crash": "the reference run ended early"}]
    finally:
        os.close(r)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)


def _judge_request(header, request, spawn):
    """One request of :func:`serve`: returns (status dict, records, worker output)."""
    start = time.monotonic()
    timeout_s = float(header["timeout_s"])
    cap = start + timeout_s
    records = []
    status = {}
    worker = None
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, timeout_s)
            req = json.loads(request)
            records.append({"ready": True})
            test_timeout = float(req.get("test_timeout_s", 5.0))
            if req["mode"] == "reference":
                records.extend(_reference_in_child(req, test_timeout, cap))
            else:
                worker = spawn(int(header.get("output_limit", 1 << 20)), timeout_s)
                worker.cap = cap
                n = _MODES[req["mode"]](records.append, worker, req, test_timeout)
                records.append({"done": n})
        finally:
            _disarm()
    except _Timeout:
        status["timed_out"] = True
    except SpawnError as exc:
        status["error"] = str(exc)
    except Exception as exc:  # noqa: BLE001 - a malformed request: reported like a crashed judge
        records.append({"crash": "judge: " + _describe(exc)})
    output = worker.close() if worker is not None else b""
    timed_out = status.get("timed_out", False) or time.monotonic() >= cap
    status.update(
        exit_code=None if timed_out else 0,
        timed_out=timed_out,
        duration_s=time.monotonic() - start,
        truncated=bool(worker is not None and worker.output is not None and worker.output.truncated),
    )
    return status, records, output


def serve(conn, spawn):
    """Judge server loop (the local backend's fork server runs it in a long-lived, isolated process).

    Per request, ``conn`` (a stream socket to the host) carries two frames in: ``{"timeout_s", "output_limit"}``
    and the request as :func:`main` reads it on stdin; and three frames out: ``{"exit_code", "timed_out",
    "duration_s", "truncated"}`` (or ``{"error"}`` for an infrastructure failure), the records :func:`main` would
    have written, and the worker's output. ``spawn(output_limit, timeout_s)`` returns a :class:`_Worker` started by
    the fork server from a process that never held a request, or raises :class:`SpawnError`. Returns at EOF.
    """
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    signal.signal(signal.SIGALRM, _alarm)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    while True:
        try:
            header = _receive(conn)
            request = _read_frame(conn)
        except (_WorkerDied, OSError, ValueError, struct.error):
            return
        status, records, output = _judge_request(header, request, spawn)
        _send(conn, status)
        _send_frame(conn, "".join(json.dumps(r) + "\n" for r in records).encode())
        _send_frame(conn, output)


def _forget_stdin_file():
    """Remote backends have no stdin in their exec API: they upload the request to a file named
    ``STDIN_PREFIX...`` and redirect it to our stdin. Unlink it before the worker exists, so the code can never
    open it (our descriptor stays readable to us alone: we are not dumpable)."""
    try:
        if stat.S_ISREG(os.fstat(0).st_mode):
            path = os.readlink("/proc/self/fd/0")
            if os.path.basename(path).startswith(STDIN_PREFIX):
                os.unlink(path)
    except OSError:
        pass


def main():
    """Run one request from stdin; records on stdout (see the module docstring).

    Order matters: the request file is unlinked and this process made non-dumpable (its ``/proc`` entries, its
    descriptors and memory closed to processes of the same uid) before the worker is forked, and the request is read
    only after, so the tests never enter the worker's memory.
    """
    result_fd = os.dup(1)  # the result channel: the worker never holds it
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the file-size limit fails instead of killing
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    _forget_stdin_file()
    try:
        ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    home = None
    if os.geteuid() == 0:
        import tempfile

        home = tempfile.mkdtemp(prefix="trl-sandbox-worker-")
        os.chown(home, NOBODY, NOBODY)
    out_r, out_w = os.pipe()
    worker = _spawn_worker(result_fd, out_r, out_w, home)  # before the request is read

    def emit(record):
        data = (json.dumps(record) + "\n").encode()
        while data:
            data = data[os.write(result_fd, data):]

    req = json.loads(sys.stdin.buffer.read())
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    emit({"ready": True})
    n = _MODES[req["mode"]](emit, worker, req, float(req.get("test_timeout_s", 5.0)))
    output = worker.close()
    emit({"done": n})
    # What the code printed, JSON-escaped on the result channel (it cannot add records), for error messages.
    emit({"output": output.decode("utf-8", errors="replace"), "truncated": worker.output.truncated})
    if home is not None:
        import shutil

        shutil.rmtree(home, ignore_errors=True)
    os._exit(0)


if __name__ == "__main__":
    main()
