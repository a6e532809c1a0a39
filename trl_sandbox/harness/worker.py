"""The worker: the process that runs the model's program, and never sees the tests.

Forked before the request is read (so the tests and the expected outputs never exist in its memory), the worker
loads the program as the module ``__solution__`` (after the task's bans: builtins removed, modules made
unimportable), answers the judge's requests on the program's objects (:class:`WorkerPeer`), and runs the program
on each input of a stdin/stdout task (Python in this process, other languages as processes of their own). It holds
no result descriptor, cannot trace the judge (non-dumpable; seccomp), and in the local backend cannot signal it.
"""

import builtins
import os
import sys

from .base import (DEFAULT_RECURSION_LIMIT, PROGRAM_FILE, SOLUTION_MODULE, Unserializable, _getattr, _type, add_packages,
                   keep_program_source, print_program_traceback)
from .native import build_program, limit_address_space, run_native
from .peer import OPS, ORIGINAL_STREAMS, CallResult, Names, Peer, next_items
from .twins import fingerprint, is_twin_type, same
from .stdio import make_fifos, peak_rss, raise_stack_limit, run_stdin
from .strays import end_own_strays
from .values import NAME_VALUE_LIMIT, as_reference, decode, encode, exception_info
from .wire import receive, send


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


class Quitter:
    """``exit()`` and ``quit()`` as the ``site`` module defines them (the sandbox runs Python with ``-S``)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "Use %s() or Ctrl-D (i.e. EOF) to exit" % self.name

    def __call__(self, code=None):
        raise SystemExit(code)


class WorkerPeer(Peer):
    """The worker's side: runs the program and answers the judge's requests on its objects."""

    def __init__(self, send_fd, recv_fd):
        super().__init__(send_fd, recv_fd)
        self.code = None
        self.base_rss = 0
        self.run_argv = None
        self.managed = False
        self.names_seen = None
        self.bridge = None
        self.interaction = None

    def serve(self, msg):
        op = msg.get("q")
        if op == "stdio":
            files = msg.get("files")
            names = tuple(files) if _type(files) is list and len(files) == 2 else None
            only = bool(msg.get("files_only")) and names is not None
            pipes, self.interaction = (self.interaction, None) if msg.get("interact") else (None, self.interaction)
            if msg.get("interact") and pipes is None:
                raise ValueError("no interaction was started")
            if self.run_argv is not None:  # a compiled program: its own process per test
                reply = run_native(self.run_argv, msg.get("input", ""), int(msg["limit"]), float(msg["timeout"]),
                                   names, self.managed, only, pipes)
                end_own_strays()  # one run is one process's life: what it left ends with it
                return {"a": encode(reply)}
            reply = run_stdin(self.code, msg.get("input", ""), int(msg["limit"]), names, only,
                              answer=lambda ended: send(self.send_fd, self._stdio_answer(ended)), pipes=pipes)
            end_own_strays()
            return self._stdio_answer(reply)
        if op == "fifos":  # an interactive test: the two FIFOs, the program's ends open (see .interaction)
            for fd in self.interaction or ():
                os.close(fd)
            home, self.interaction = make_fifos()
            return {"a": encode(home)}
        if op == "build":
            reply = build_program(msg["build"], msg["program"], float(msg["timeout"]))
            if reply.get("ok"):
                self.run_argv = [str(part) for part in msg["build"]["run"]]
                self.managed = bool(msg["build"].get("managed"))
            return {"a": encode(reply)}
        if self.bridge is not None:  # pytest files: warnings, log records and random states go with the answer
            return self.bridge.serve(lambda: self.answer(lambda: self._operate(op, msg), msg))
        return self.answer(lambda: self._operate(op, msg), msg)

    def _stdio_answer(self, reply):
        """The answer to a ``stdio`` request for ``reply`` (:func:`.stdio.run_stdin`'s), sent by the worker's loop, or
        by ``os._exit`` before it ends this process."""
        reply["rss"] = max(0, reply["rss"] - self.base_rss)  # what the program added to the runtime's own
        return {"a": encode(reply)}

    def _operate(self, op, msg):
        if "patch" in msg:  # the tests changed a module or the environment in the judge (see peer.apply_patches)
            from .peer import apply_patches

            apply_patches(self, msg["patch"])
        if op == "load":
            return self.load(msg)
        if op == "doctest" and self.bridge is not None:  # the program's docstring examples (see .bridge)
            from .bridge import run_doctest

            return run_doctest(self.namespace, msg)
        if op == "setrec":
            return sys.setrecursionlimit(int(msg["n"]))
        target = self.handles[msg["h"]]
        if op == "call":
            args = [decode(a, self) for a in msg.get("args", ())]
            kwargs = {str(k): decode(v, self) for k, v in msg.get("kw", ())}
            # What it changes in its arguments goes back with the twins; a large argument (a copy) is compared after
            # the call, and sent back when changed.
            copies = [(key, value, fingerprint(value)) for key, value in [*enumerate(args), *kwargs.items()]
                      if is_twin_type(_type(value)) and self.twins.find(value) is None]
            result = target(*args, **kwargs)
            changed = [(key, value) for key, value, mark in copies if not same(mark, fingerprint(value))]
            return CallResult(result, changed) if changed else result
        if op == "get":
            return _getattr(target, msg["name"])
        if op == "set":
            return setattr(target, msg["name"], decode(msg["args"][0], self))
        if op == "del":
            return delattr(target, msg["name"])
        if op == "op":
            fn, arity = OPS[msg["name"]]
            return fn(target, *[decode(a, self) for a in msg.get("args", ())][:arity])
        if op == "next":
            return next_items(target, int(msg["n"]), self.pending)
        raise ValueError("unknown request %r" % (op,))

    def load(self, msg):
        """Run the program (and, after it, the tests' imports) as the module ``__solution__``; return its names:
        values, or references to what is not a value or is a container of over ``NAME_VALUE_LIMIT`` items."""
        limit_address_space(managed=False)  # Python code runs in this process from now on: no way back up
        raise_stack_limit()
        add_packages()
        keep_program_source(msg["program"])  # for its tracebacks
        _apply_bans(msg.get("banned") or {})
        self.code = compile(msg["program"], PROGRAM_FILE, "exec")
        if msg["mode"] == "stdio":
            self.base_rss = peak_rss()
            return Names()
        ns = {"__name__": SOLUTION_MODULE, "__builtins__": builtins}
        try:
            exec(self.code, ns)
        except BaseException as exc:
            if _type(exc) is not SystemExit:  # printed as ``python3 prog.py`` prints it, into the result's output
                print_program_traceback(exc)
            raise
        prelude = msg.get("prelude")
        if prelude:  # the tests' imports, seen by the program as in the official harnesses' single module
            try:
                exec(compile(prelude, "<test imports>", "exec"), ns)
            except Exception:  # noqa: BLE001 - e.g. a module the task bans: the judge has its own
                pass
        names = Names()
        for name, value in list(ns.items()):
            if not name.startswith("__"):
                names.append([name, self._name_value(value)])
        if msg.get("one_process") is True:  # pytest files: the tests' process, bridged (see .bridge)
            from .bridge import WorkerBridge

            self.namespace = ns  # from now on, every message says which of its names changed
            self.names_seen = dict(ns)
            self.bridge = WorkerBridge()
        return names

    def _name_value(self, value):
        """A module-level name's value as it crosses: by value, but as a reference when it is a container of over
        ``NAME_VALUE_LIMIT`` items or cannot cross as a value."""
        size = len(value) if _type(value) in (list, tuple, dict, set, frozenset) else 0
        try:
            return encode(value, self) if size <= NAME_VALUE_LIMIT else as_reference(value, self)
        except Unserializable:
            return as_reference(value, self)

    def outgoing(self, msg):
        """Add the program's module-level names that changed since the last message (``"g"``: ``[[name, value or
        None when deleted]...]``; pytest files, where the tests read ``solution.count`` after calls), then the
        twins' news."""
        seen = self.names_seen
        if seen is not None:
            space = self.namespace
            changed = []
            for name, value in list(space.items()):
                if _type(name) is str and not name.startswith("__") and seen.get(name, seen) is not value:
                    changed.append([name, self._name_value(value)])
                    seen[name] = value
            for name in [name for name in seen if name not in space]:
                del seen[name]
                changed.append([name, None])
            if changed:
                msg["g"] = changed
        return Peer.outgoing(self, msg)


def _limit_cpu(timeout_s):
    """Lower this process's CPU-time limit to what the fork server gives a worker started for ``timeout_s``
    (``_forkserver.Server._child_common``); no answer."""
    import resource

    cpu = int(float(timeout_s)) + 1
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard == resource.RLIM_INFINITY or cpu + 1 <= hard:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))


def run_worker(cmd_r, reply_w):
    """The worker's main loop: answer the judge's requests (``cmd_r``: the pipe they come on, ``reply_w``: the pipe
    answers go to) until the judge goes away; never returns."""
    builtins.exit, builtins.quit = Quitter("exit"), Quitter("quit")
    sys.setrecursionlimit(DEFAULT_RECURSION_LIMIT)
    try:  # what the program prints reaches the output as it prints it, as stderr does (not lost in a buffer when
        sys.stdout.reconfigure(line_buffering=True)  # its worker is killed): the result's output shows both
    except (AttributeError, ValueError, OSError):
        pass
    ORIGINAL_STREAMS[0] = sys.stdout
    peer = WorkerPeer(reply_w, cmd_r)
    while True:
        try:
            msg = receive(cmd_r)
        except BaseException:  # noqa: BLE001 - the judge went away
            os._exit(0)
        if type(msg) is dict and msg.get("q") == "cpu":  # started before its request (server._ready_worker)
            _limit_cpu(msg["s"])
            continue
        if type(msg) is dict and msg.get("k"):  # a new test: what the program left running ends first
            end_own_strays()
        try:
            peer.incoming(msg)
            reply = peer.serve(msg) if "q" in msg else {"e": {"desc": "RuntimeError: unexpected answer"}}
        except BaseException as exc:  # noqa: BLE001
            reply = {"e": exception_info(exc, peer)}
        try:  # a line it printed without its newline, before the judge may kill this worker
            ORIGINAL_STREAMS[0].flush()
        except BaseException:  # noqa: BLE001 - a stream the program closed or replaced
            pass
        try:
            try:
                peer.outgoing(reply)
            except Unserializable as exc:  # a changed twin that cannot cross (nested too deep): its answer says so
                peer.twins.unsent()
                reply = peer.outgoing({"u": str(exc)})
            peer._sent(send, reply_w, reply)
        except BaseException:  # noqa: BLE001
            os._exit(0)
