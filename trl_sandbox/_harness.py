"""trl-sandbox test harness: runs INSIDE the sandbox, next to model-written code. Standard library only.

Written into every sandbox at pool creation and run as ``python harness.py`` with one JSON request on stdin
(built by :mod:`trl_sandbox.tasks`). It writes JSON-lines records to its *result channel*: the original stdout,
duplicated to a private descriptor before any model code runs. The code's own stdout and stderr both go to stderr,
so nothing the code prints can be taken for a result.

Request fields: ``mode`` (``assert`` | ``call`` | ``stdio`` | ``reference``), ``program`` (source), ``setup``
(source run after the program, ``assert`` mode), ``tests`` (list of strings, meaning depends on the mode),
``func_name`` (``call``/``reference``), ``test_timeout_s`` (seconds per test), ``output_limit`` (bytes per test
output, ``stdio``).

Records, in order: ``{"ready": true}`` (harness started, before any model code), then either ``{"load": "error"
| "timeout", "error": str}`` (the program did not load) or one ``{"i": k, ...}`` per test, then ``{"done": n}``.
A per-test record has ``ok`` (``assert``), ``out`` (``call``/``stdio``: the output, serialized) or ``error``,
and ``timeout: true`` when the test ran past ``test_timeout_s`` (the harness stops at the first timeout).

Outputs are serialized with strict types (see :func:`encode`): an object of any other type, or of a subclass
(a rigged ``__eq__``), cannot be serialized and fails the test. Expected outputs are never sent here: the host
compares.
"""

import ast
import builtins
import copy
import io
import json
import math
import os
import random
import signal
import sys

_write = os.write
_dumps = json.dumps
_MAX_DEPTH = 100


class _TestTimeout(BaseException):
    """Raised by the interval timer in the test that ran past its budget (BaseException: `except Exception`
    in model code does not swallow it)."""


def _on_alarm(signum, frame):
    raise _TestTimeout()


class Unserializable(Exception):
    pass


def encode(value, depth=0):
    """Serialize ``value`` to JSON-able data, with exact types only (no subclasses).

    None -> ["N"], bool -> ["b", v], int -> ["i", v], float -> ["f", repr], str -> ["s", v], bytes -> ["y", hex],
    list/tuple -> ["l"/"t", [items]], dict -> ["d", [[k, v]...] sorted], set/frozenset -> ["S"/"F", sorted items].
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
    if t is dict:
        items = [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]
        items.sort(key=_dumps)
        return ["d", items]
    if t is set or t is frozenset:
        items = sorted((encode(v, depth + 1) for v in value), key=_dumps)
        return ["S" if t is set else "F", items]
    raise Unserializable("cannot serialize an object of type %s" % t.__name__)


def _emit(fd, record):
    data = (_dumps(record) + "\n").encode()
    while data:
        data = data[_write(fd, data) :]


def _limited(fn, seconds):
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _describe(exc):
    text = "%s: %s" % (type(exc).__name__, exc)
    return text[:500]


def _load(fd, program, namespace, timeout):
    """Compile and run the program; emit a load record and return False when it fails."""
    try:
        code = compile(program, "<completion>", "exec")
        _limited(lambda: exec(code, namespace), timeout)
    except _TestTimeout:
        _emit(fd, {"load": "timeout", "error": "loading the program took longer than %ss" % timeout})
        return False
    except BaseException as exc:  # noqa: BLE001 - any failure of the code is a result, not a harness crash
        _emit(fd, {"load": "error", "error": _describe(exc)})
        return False
    return True


def _run_assert(fd, req, timeout):
    ns = {"__name__": "__solution__", "__builtins__": builtins}
    if not _load(fd, req["program"], ns, timeout) or not _load(fd, req.get("setup") or "", ns, timeout):
        return 0
    n = 0
    for i, test in enumerate(req["tests"]):
        n += 1
        try:
            code = compile(test, "<test %d>" % i, "exec")
            _limited(lambda: exec(code, ns), timeout)
            _emit(fd, {"i": i, "ok": True})
        except _TestTimeout:
            _emit(fd, {"i": i, "ok": False, "timeout": True})
            break
        except BaseException as exc:  # noqa: BLE001
            _emit(fd, {"i": i, "ok": False, "error": _describe(exc)})
    return n


def _run_call(fd, req, timeout):
    ns = {"__name__": "__solution__", "__builtins__": builtins}
    if not _load(fd, req["program"], ns, timeout):
        return 0
    func = ns.get(req["func_name"])
    if not callable(func):
        _emit(fd, {"load": "error", "error": "the program does not define %s()" % req["func_name"]})
        return 0
    n = 0
    for i, literal in enumerate(req["tests"]):
        n += 1
        arg = ast.literal_eval(literal)
        try:
            out = _limited(lambda: func(arg), timeout)
            _emit(fd, {"i": i, "out": encode(out)})
        except _TestTimeout:
            _emit(fd, {"i": i, "timeout": True})
            break
        except BaseException as exc:  # noqa: BLE001
            _emit(fd, {"i": i, "error": _describe(exc)})
    return n


def _run_stdio(fd, req, timeout):
    try:
        code = compile(req["program"], "<completion>", "exec")
    except BaseException as exc:  # noqa: BLE001
        _emit(fd, {"load": "error", "error": _describe(exc)})
        return 0
    limit = int(req.get("output_limit", 1 << 20))
    n = 0
    saved_in = os.dup(0)
    for i, text in enumerate(req["tests"]):
        n += 1
        with open("stdin.txt", "wb") as f:
            f.write(text.encode())
        in_fd = os.open("stdin.txt", os.O_RDONLY)
        out_fd = os.open("stdout.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(in_fd, 0)
        os.dup2(out_fd, 1)
        os.close(in_fd)
        os.close(out_fd)
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8")
        ns = {"__name__": "__main__", "__builtins__": builtins}
        record = {"i": i}
        try:
            _limited(lambda: exec(code, ns), timeout)
        except _TestTimeout:
            record["timeout"] = True
        except SystemExit as exc:
            if exc.code not in (None, 0):
                record["error"] = "SystemExit(%r)" % (exc.code,)
        except BaseException as exc:  # noqa: BLE001
            record["error"] = _describe(exc)
        try:
            sys.stdout.flush()
        except BaseException:  # noqa: BLE001 - a closed or broken stdout is the program's problem
            pass
        os.dup2(2, 1)
        os.dup2(saved_in, 0)
        with open("stdout.txt", "rb") as f:
            raw = f.read(limit + 1)
        record["out"] = raw[:limit].decode("utf-8", errors="replace")
        if len(raw) > limit:
            record["truncated"] = True
        _emit(fd, record)
        if record.get("timeout"):
            break
    return n


def _run_reference(fd, req, timeout):
    """Evaluate the test arguments (``random`` seeded with 0, once, as in the TRL Daytona example) and the
    reference function on each. Runs in its own execution, never with model code."""
    ns = {"__name__": "__reference__", "__builtins__": builtins, "random": random, "math": math}
    if not _load(fd, req.get("program") or "", ns, timeout):
        return 0
    name = req["func_name"]
    func = ns.get(name, getattr(builtins, name, None))
    if not callable(func):
        _emit(fd, {"load": "error", "error": "reference %r is neither defined nor a builtin" % name})
        return 0
    random.seed(0)
    args = []
    for i, expr in enumerate(req["tests"]):
        try:
            args.append(eval(compile(expr, "<test %d>" % i, "eval"), ns))
        except BaseException as exc:  # noqa: BLE001
            _emit(fd, {"load": "error", "error": "test %d argument %r: %s" % (i, expr, _describe(exc))})
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
            _emit(fd, {"i": i, "error": "argument of test %d is not a Python literal: %s" % (i, literal[:200])})
            continue
        try:
            out = _limited(lambda: func(copy.deepcopy(arg)), timeout)
            _emit(fd, {"i": i, "arg": literal, "out": encode(out)})
        except BaseException as exc:  # noqa: BLE001
            _emit(fd, {"i": i, "error": _describe(exc)})
    return n


_MODES = {"assert": _run_assert, "call": _run_call, "stdio": _run_stdio, "reference": _run_reference}


def main():
    fd = os.dup(1)  # the result channel: nothing the code prints reaches it
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    req = json.loads(sys.stdin.buffer.read())
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the file-size limit fails instead of killing us
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    _emit(fd, {"ready": True})
    n = _MODES[req["mode"]](fd, req, float(req.get("test_timeout_s", 5.0)))
    _emit(fd, {"done": n})
    try:
        sys.stderr.flush()
    finally:
        os._exit(0)  # skip atexit handlers and finalizers the code may have registered


if __name__ == "__main__":
    main()
