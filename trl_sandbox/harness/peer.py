"""The judge-worker conversation: one side (:class:`Peer`), and the operations a side performs on what it lent.

Operating on a remote object (calling it, reading or setting an attribute, iterating it, indexing it, ``len``,
``str``, arithmetic...) is one round trip to the side that lent it, whose answer is again a value or a remote object
(see :mod:`.values`). Arguments travel the other way the same way: plain data by value, the other side's own objects
back as themselves, and the test's callables (lambdas, ``key=`` functions) and iterators as remote objects the
worker calls back. Text the program prints while the test redirects ``sys.stdout``
(``contextlib.redirect_stdout``) reaches the test's stream. The worker's side is :class:`.worker.WorkerPeer`, the
judge's :class:`.processes.Worker`.

Patches (KodCode's pytest files: ``unittest.mock.patch``, pytest's ``monkeypatch``): what the tests change in the
judge's modules and environment is made the same in the worker before each request (:func:`apply_patches`, the
worker's side of a request's ``patch``), so that the program runs as it would in the tests' own process.
"""

import builtins
import io
import operator as _operator
import os
import sys
import types

from .base import SOLUTION_MODULE, Unserializable, ValueNotSent, _getattr, _isinstance, _type
from .remote import Remote
from .twins import Twins, fill
from .values import base_value, decode, encode, encode_contents, exception_info, raise_from
from .wire import receive, send


def next_items(iterator, n, pending):
    """Up to ``n`` (at most 1024) items of ``iterator``. An exception after some items is kept in ``pending`` and
    raised at the next request, as the iterator would have raised it at that ``next()``."""
    if id(iterator) in pending:
        raise pending.pop(id(iterator))
    items = []
    try:
        for _ in range(max(1, min(n, 1024))):
            items.append(next(iterator))
    except StopIteration:
        pass
    except BaseException as exc:  # noqa: BLE001
        if not items:
            raise
        pending[id(iterator)] = exc
    return items


#: Operations one side performs on the objects it lent, by name: (function, how many arguments).
OPS = {
    "repr": (repr, 0), "str": (str, 0), "format": (format, 1), "bool": (bool, 0), "len": (len, 0),
    "hash": (hash, 0), "eq": (_operator.eq, 1), "ne": (_operator.ne, 1), "lt": (_operator.lt, 1),
    "le": (_operator.le, 1), "gt": (_operator.gt, 1), "ge": (_operator.ge, 1), "iter": (iter, 0),
    "contains": (lambda obj, item: item in obj, 1), "getitem": (_operator.getitem, 1),
    "setitem": (_operator.setitem, 2), "delitem": (_operator.delitem, 1),
    "isinstance": (lambda cls, obj: _isinstance(obj, cls), 1),
    "issubclass": (lambda cls, sub: issubclass(sub, cls), 1),
    "enter": (lambda obj: obj.__enter__(), 0),
    "exit": (lambda obj, kind=None, value=None: obj.__exit__(kind, value, None), 2),  # never a traceback: see Remote
    "int": (int, 0), "float": (float, 0), "index": (_operator.index, 0), "neg": (_operator.neg, 0),
    "pos": (_operator.pos, 0), "abs": (abs, 0), "invert": (_operator.invert, 0),
    "add": (_operator.add, 1), "radd": (lambda a, b: b + a, 1), "sub": (_operator.sub, 1),
    "rsub": (lambda a, b: b - a, 1), "mul": (_operator.mul, 1), "rmul": (lambda a, b: b * a, 1),
    "truediv": (_operator.truediv, 1), "rtruediv": (lambda a, b: b / a, 1),
    "floordiv": (_operator.floordiv, 1), "rfloordiv": (lambda a, b: b // a, 1), "mod": (_operator.mod, 1),
    "rmod": (lambda a, b: b % a, 1), "pow": (pow, 1), "rpow": (lambda a, b: b ** a, 1),
    "and": (_operator.and_, 1), "rand": (lambda a, b: b & a, 1), "or": (_operator.or_, 1),
    "ror": (lambda a, b: b | a, 1), "xor": (_operator.xor, 1), "rxor": (lambda a, b: b ^ a, 1),
    "lshift": (_operator.lshift, 1), "rshift": (_operator.rshift, 1), "matmul": (_operator.matmul, 1),
    "value": (lambda obj: base_value(obj), 0),
}
#: The operations the judge performs on its own objects for the worker (callbacks on the test's lambdas, iterators
#: and objects): nothing that reaches the judge's internals.
JUDGE_OPS = frozenset({
    "repr", "str", "format", "bool", "len", "hash", "eq", "ne", "lt", "le", "gt", "ge", "iter", "contains",
    "getitem", "int", "float", "index", "neg", "pos", "abs", "add", "radd", "sub", "rsub", "mul", "rmul",
    "truediv", "rtruediv", "floordiv", "rfloordiv", "mod", "rmod", "enter", "exit",
})


class Peer:
    """One side of the judge-worker conversation over two pipes.

    :meth:`Peer.request` sends a request and returns its answer, serving the other side's requests that arrive meanwhile
    (a program calling a test's lambda, which calls the program again...). :meth:`Peer.lend` keeps the objects this
    side lent (``handles``); :meth:`Peer.remote` makes one :class:`.remote.Remote` per object the other side lent.

    Messages: requests ``{"q": op, "h": handle, ...}``; answers ``{"a": value}``, ``{"e": exception}`` or
    ``{"u": reason}`` (the value could not be sent), with ``"o"`` (text printed while the caller's ``sys.stdout``
    was redirected). Every message also carries the sender's twins' news (``"twn"``, ``"tws"``, ``"twx"``: see
    :mod:`.twins`), so that a mutable value that crossed stays one object changed on both sides.
    """

    #: 0 on the judge's side, 1 on the worker's (see :class:`.twins.Twins`).
    side = 1

    def __init__(self, send_fd, recv_fd):
        self.send_fd, self.recv_fd = send_fd, recv_fd
        self.twins = Twins(self.side)
        self.handles = {}
        self._handle_of = {}
        self._proxies = {}
        self.pending = {}
        self.mirrors = {}
        self.patched = {}
        self.namespace = None
        self.bridge = None

    def lend(self, obj):
        """The handle the other side refers to ``obj`` by (one per object, kept while this peer lives)."""
        handle = self._handle_of.get(id(obj))
        if handle is None or self.handles.get(handle) is not obj:
            handle = len(self.handles) + 1
            self.handles[handle] = obj
            self._handle_of[id(obj)] = handle
        return handle

    def encode(self, value):
        """``value`` as this side sends it (:func:`.values.encode` with this peer lending what is not a value)."""
        return encode(value, self)

    def remote(self, handle, type_name, is_callable, base=None, kind=None):
        """The :class:`.remote.Remote` for the other side's object ``handle`` (one per handle); ``kind``: the type
        it says it is (see :class:`.remote.Remote`)."""
        proxy = self._proxies.get(handle)
        if proxy is None:
            proxy = self._proxies[handle] = Remote(self, handle, type_name, base, kind)
        return proxy

    # -- talking (the judge's side adds deadlines and treats garbage as a dead worker)

    def _send(self, msg, values=None):
        self.outgoing(msg)
        self._sent(send, self.send_fd, msg)

    def _sent(self, send_fn, fd, msg):
        """Send ``msg`` with ``send_fn`` (:func:`.wire.send`), then settle what :meth:`outgoing` prepared."""
        try:
            whole = send_fn(fd, msg)
        except BaseException:
            self.twins.unsent()
            raise
        if whole:
            self.twins.sent()
        else:
            self.twins.unsent()

    def _read(self):
        msg = receive(self.recv_fd)
        self.incoming(msg)
        return msg

    def outgoing(self, msg):
        """Add this side's news to ``msg`` before it is sent: its twins' changes (see :mod:`.twins`)."""
        return self.twins.outgoing(msg, lambda obj: encode_contents(obj, self), self.held)

    def incoming(self, msg):
        """Apply the other side's news in ``msg`` (its twins' changes) before the message's values are decoded."""
        if "twn" in msg or "tws" in msg or "twx" in msg:
            self.twins.incoming(msg, lambda payload: decode(payload, self), self.twin_changed)

    def held(self, obj):
        """How many references this side's harness keeps to ``obj`` besides the twins' table (see
        :meth:`.twins.Twins.outgoing`)."""
        return 0

    def twin_changed(self, obj):
        """The other side changed ``obj``, a twin of this side's (the judge notes it as the program's doing)."""

    def request(self, msg, mutable=None, raw=False, values=None):
        """Send request ``msg`` and return the decoded answer (or raise the exception it reports). ``mutable``:
        ``(args, kwargs)`` of a call (their changes come back through the twins, a large one's in the answer's
        ``"m"``). ``raw``: return the answer message itself.
        ``values``: the objects ``msg`` carries encoded (default: ``mutable``), for telling whose doing a message
        that cannot be sent is (see :meth:`.processes.Worker.not_sent`)."""
        if sys.stdout is not ORIGINAL_STREAMS[0]:
            msg["cap"] = True
        self._send(msg, mutable if values is None else values)
        while True:
            incoming = self._read()
            if "q" in incoming:
                self._send(self.serve(incoming))
                continue
            printed = incoming.get("o")
            if _type(printed) is str and printed:
                sys.stdout.write(printed)
            return incoming if raw else self._unwrap(incoming, mutable)

    def _unwrap(self, answer, mutable):
        if "e" in answer:
            try:
                raise_from(answer["e"], self)
            except BaseException as exc:  # noqa: BLE001 - marked, then raised on
                own = _getattr(exc, "__dict__", None)
                self.received((_getattr(exc, "args", None), list(own.values()) if _type(own) is dict else None))
                try:
                    exc._trl_crossed = True  # raised by the other side's code (see :func:`crossed`)
                except BaseException:  # noqa: BLE001 - an exception class that refuses attributes
                    pass
                raise
        if "u" in answer:
            raise self.unsent(str(answer["u"])[:200])
        value = decode(answer["a"], self)
        self.received(value)
        if mutable is not None and _type(answer.get("m")) is list:
            args, kwargs = mutable
            for key, after in answer["m"]:
                target = args[key] if _type(key) is int and 0 <= key < len(args) else kwargs.get(key)
                if target is not None and _type(target) is _type(after := decode(after, self)):
                    fill(target, after)  # a large argument the call changed (a copy, not a twin)
                    self.received(target)
        return value

    def received(self, value):
        """Note ``value``, just decoded from the other side (what the judge tracks: see
        :meth:`.processes.Worker.received`); a bare peer notes nothing."""

    def unsent(self, reason):
        """The exception for the other side's answer that its value could not be sent (``{"u": reason}``): here
        :class:`.base.ValueNotSent`; the judge never takes the worker's word for it (see
        :meth:`.processes.Worker.unsent`)."""
        return ValueNotSent(reason)

    def serve(self, msg):
        """Answer one request of the other side. Each side defines what it serves (:class:`.worker.WorkerPeer`,
        :class:`.processes.Worker`); a bare peer serves nothing."""
        return {"e": {"t": ["B", "TypeError"], "desc": "TypeError: this side serves no requests"}}

    def answer(self, fn, msg):
        """Run ``fn()`` and make its answer message: the value (a :class:`Names` is the load's names), the exception
        it raised, or why the value cannot be sent. With ``"cap"`` in ``msg``, what it prints is captured and sent
        along."""
        capture = msg.get("cap") is True
        saved = sys.stdout
        if capture:
            sys.stdout = io.StringIO()
        try:
            try:
                value = fn()
                if _type(value) is Names:
                    reply = {"names": list(value)}
                elif _type(value) is CallResult:
                    reply = {"a": encode(value.value, self),
                             "m": [[key, encode(changed, self)] for key, changed in value.changed]}
                else:
                    reply = {"a": encode(value, self)}
            except Unserializable as exc:
                reply = {"u": str(exc)}
            except BaseException as exc:  # noqa: BLE001 - the code's failures are answers
                reply = {"e": exception_info(exc, self)}
        finally:
            if capture:
                printed, sys.stdout = sys.stdout, saved
                try:
                    reply["o"] = printed.getvalue()
                except Exception:  # noqa: BLE001 - the code replaced the stream with something else
                    pass
        return reply


class Names(list):
    """The load answer: ``[[name, encoded value]...]``, already encoded (see :meth:`.worker.WorkerPeer.load`)."""


class CallResult:
    """A call's return value and the large arguments it changed (``[(index or name, value)...]``: they crossed as
    copies, see :func:`.twins.is_twin`)."""

    def __init__(self, value, changed):
        self.value, self.changed = value, changed


#: ``sys.stdout`` as this process set it up: a test that replaced it wants the program's prints (see "cap").
ORIGINAL_STREAMS = [sys.stdout]


def crossed(exc):
    """Whether ``exc`` was raised by the other side's code and rebuilt here (:meth:`Peer._unwrap` marks it)."""
    return _getattr(exc, "_trl_crossed", False) is True


# -- patches: the tests' changes to modules and the environment, made in the worker too ---------------------------

#: This package's name: ``trl_sandbox_harness`` in a sandbox, ``trl_sandbox.harness`` on the host.
_PACKAGE = __name__.rpartition(".")[0]
#: Builtins a test's patch also replaces in the worker's ``builtins`` module (for the library code the program
#: calls), not only in the program's namespace: none of them is called by the harness's code while it answers.
PATCHABLE_BUILTINS = frozenset({
    "print", "input", "sorted", "sum", "open", "reversed", "filter", "any", "all", "abs", "round", "pow", "divmod",
    "chr", "ord", "bin", "oct", "hex", "zip", "exit", "quit", "help",
})
#: What the worker had before the first patch of a name: the name was absent.
_ABSENT = object()
_SHIELDED = set()


def shield_harness(module):
    """Before ``module`` is patched in this process: each of the harness's own modules that refers to it gets a copy
    of its attributes as they are now (the harness's messages never go through a test's ``json.dumps`` mock or a
    patched ``time.monotonic``). ``sys`` stays shared: the harness follows the tests' ``sys.stdout``."""
    if module is sys or module is builtins or id(module) in _SHIELDED:
        return
    _SHIELDED.add(id(module))
    copy = None
    for name, loaded in list(sys.modules.items()):
        if loaded is None or not (name == _PACKAGE or name.startswith(_PACKAGE + ".")):
            continue
        space = _getattr(loaded, "__dict__", None)
        if _type(space) is not dict:
            continue
        for key, value in list(space.items()):
            if value is module:
                if copy is None:
                    copy = types.SimpleNamespace(**{k: v for k, v in vars(module).items() if _type(k) is str})
                space[key] = copy


def program_namespace(peer):
    """The program's module namespace (``__solution__``): the globals of a function of the program's that the worker
    lent (its functions, its classes' methods), else None (a program without functions runs no code in the tests)."""
    if peer.namespace is not None:
        return peer.namespace
    for obj in list(peer.handles.values()):
        try:
            candidates = [obj, _getattr(obj, "__wrapped__", None), _getattr(obj, "__func__", None)]
            if _isinstance(obj, type):
                candidates += list(obj.__dict__.values())
            for candidate in candidates:
                candidate = _getattr(candidate, "__func__", candidate)
                space = candidate.__globals__ if _type(candidate) is types.FunctionType else None
                if _type(space) is dict and space.get("__name__") == SOLUTION_MODULE:
                    peer.namespace = space
                    return space
        except Exception:  # noqa: BLE001 - an object of the program's that refuses to be looked at
            continue
    return None


def _slot_get(container, name):
    if _type(container) is dict:
        return container.get(name, _ABSENT)
    return container.__dict__.get(name, _ABSENT)


def _slot_set(container, name, value):
    if _type(container) is dict:
        if value is _ABSENT:
            container.pop(name, None)
        else:
            container[name] = value
    elif value is _ABSENT:
        if name in container.__dict__:
            delattr(container, name)
    else:
        setattr(container, name, value)


def _patch_targets(peer, target, name):
    """Where a patch of the judge's ``target`` (``"S"``: the tests' solution module; ``"B"``: builtins; else a
    module's name) lands in the worker: the program's namespace, and the worker's own module of that name."""
    if target in ("S", "B"):
        space = program_namespace(peer)
        found = [space] if space is not None else []
        if target == "B" and name in PATCHABLE_BUILTINS:
            found.append(builtins)
        return found
    module = sys.modules.get(target)
    if module is None:
        try:
            __import__(target)
            module = sys.modules.get(target)
        except BaseException:  # noqa: BLE001 - not importable here (a ban, a missing package): nothing uses it
            return []
    if module is None or target == _PACKAGE or target.startswith(_PACKAGE + "."):
        return []
    shield_harness(module)
    return [module]


def apply_patches(peer, ops):
    """The worker's side of a request's ``"patch"`` (``[[target, name, mode, value]...]``), before it is served:
    ``mode`` ``"set"`` gives the name the judge's value (plain data by value, anything else as a remote object, so calls
    reach the test's mock and its ``side_effect`` comes back), ``"del"`` removes it, ``"restore"`` puts back what
    the worker had before the first patch of that name. ``target`` ``"E"``: an environment variable (value a str,
    or None: unset); ``"C"``: the working directory (``monkeypatch.chdir``); ``"R"``, ``"NR"``, ``"L"``: state of
    the tests' process (see :mod:`.bridge`)."""
    for target, name, mode, value in ops:
        name = str(name)
        if target in ("R", "NR", "L"):  # random's and numpy's states, the loggers' levels (see .bridge)
            if peer.bridge is not None:
                peer.bridge.apply(target, decode(value, peer))
            continue
        if target == "C":
            if "cwd" not in peer.patched:
                peer.patched["cwd"] = os.getcwd()
            path = peer.patched.pop("cwd") if mode == "restore" else str(decode(value, peer))
            try:
                os.chdir(path)
            except OSError:  # a directory the program may not enter: its relative paths fail as they would
                pass
            continue
        if target == "E":
            key = ("E", name)
            if key not in peer.patched:
                peer.patched[key] = os.environ.get(name)
            if mode == "restore":
                value = peer.patched.pop(key)
            else:
                value = decode(value, peer) if mode == "set" else None
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = str(value)
            continue
        new = decode(value, peer) if mode == "set" else _ABSENT
        for container in _patch_targets(peer, str(target), name):
            key = (id(container), name)
            if mode == "restore":
                if key in peer.patched:
                    _slot_set(container, name, peer.patched.pop(key)[1])
                continue
            if key not in peer.patched:
                peer.patched[key] = (container, _slot_get(container, name))
            _slot_set(container, name, new)
    return None
