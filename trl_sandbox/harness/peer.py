"""The judge-worker conversation: one side (:class:`Peer`), and the operations a side performs on what it lent.

Operating on a remote object (calling it, reading or setting an attribute, iterating it, indexing it, ``len``,
``str``, arithmetic...) is one round trip to the side that lent it, whose answer is again a value or a remote object
(see :mod:`.values`). Arguments travel the other way the same way: plain data by value, the other side's own objects
back as themselves, and the test's callables (lambdas, ``key=`` functions) and iterators as remote objects the
worker calls back. Text the program prints while the test redirects ``sys.stdout``
(``contextlib.redirect_stdout``) reaches the test's stream. The worker's side is :class:`.worker.WorkerPeer`, the
judge's :class:`.processes.Worker`.
"""

import collections
import io
import operator as _operator
import sys

from .base import Unserializable, ValueNotSent, _isinstance, _type
from .remote import Remote
from .values import base_value, decode, encode, exception_info, raise_from
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
    "enter": (lambda obj: obj.__enter__(), 0), "exit": (lambda obj: obj.__exit__(None, None, None), 0),
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
    "truediv", "rtruediv", "floordiv", "rfloordiv", "mod", "rmod",
})
#: Mutable argument types whose changes by a call are copied back into the caller's objects.
MUTABLE = (list, dict, set, bytearray, collections.deque)


class Peer:
    """One side of the judge-worker conversation over two pipes.

    :meth:`Peer.request` sends a request and returns its answer, serving the other side's requests that arrive meanwhile
    (a program calling a test's lambda, which calls the program again...). :meth:`Peer.lend` keeps the objects this
    side lent (``handles``); :meth:`Peer.remote` makes one :class:`.remote.Remote` per object the other side lent.

    Messages: requests ``{"q": op, "h": handle, ...}``; answers ``{"a": value}``, ``{"e": exception}`` or
    ``{"u": reason}`` (the value could not be sent), with ``"o"`` (text printed while the caller's ``sys.stdout``
    was redirected) and ``"m"`` (``[[index or name, value]...]``: mutable arguments the call changed).
    """

    def __init__(self, send_fd, recv_fd):
        self.send_fd, self.recv_fd = send_fd, recv_fd
        self.handles = {}
        self._handle_of = {}
        self._proxies = {}
        self.pending = {}
        self.mirrors = {}

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

    def remote(self, handle, type_name, is_callable, base=None):
        """The :class:`.remote.Remote` for the other side's object ``handle`` (one per handle)."""
        proxy = self._proxies.get(handle)
        if proxy is None:
            proxy = self._proxies[handle] = Remote(self, handle, type_name, base)
        return proxy

    # -- talking (the judge's side adds deadlines and treats garbage as a dead worker)

    def _send(self, msg):
        send(self.send_fd, msg)

    def _read(self):
        return receive(self.recv_fd)

    def request(self, msg, mutable=None, raw=False):
        """Send request ``msg`` and return the decoded answer (or raise the exception it reports); copy argument
        changes back into ``mutable`` (``(args, kwargs)`` of a call). ``raw``: return the answer message itself."""
        if sys.stdout is not ORIGINAL_STREAMS[0]:
            msg["cap"] = True
        self._send(msg)
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
            raise_from(answer["e"], self)
        if "u" in answer:
            raise ValueNotSent(str(answer["u"])[:200])
        value = decode(answer["a"], self)
        if mutable is not None and answer.get("m"):
            args, kwargs = mutable
            for key, after in answer["m"]:
                target = args[key] if _type(key) is int and 0 <= key < len(args) else kwargs.get(key)
                _update_in_place(target, decode(after, self))
        return value

    def serve(self, msg):
        """Answer one request of the other side. Each side defines what it serves (:class:`.worker.WorkerPeer`,
        :class:`.processes.Worker`); a bare peer serves nothing."""
        return {"e": {"t": ["B", "TypeError"], "desc": "TypeError: this side serves no requests"}}

    def answer(self, fn, msg):
        """Run ``fn()`` and make its answer message: the value (a :class:`CallResult` carries changed arguments,
        a :class:`Names` the load's names), the exception it raised, or why the value cannot be sent. With
        ``"cap"`` in ``msg``, what it prints is captured and sent along."""
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
                    reply = {"a": encode(value.value, self)}
                    if value.changed:
                        reply["m"] = [[key, encode(v, self)] for key, v in value.changed]
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
    """A call's return value and its changed mutable arguments ``[(index or name, value)...]``."""

    def __init__(self, value, changed):
        self.value, self.changed = value, changed


def _update_in_place(arg, after):
    """Copy the changes a call made to a mutable argument back into the caller's object."""
    try:
        if _type(arg) is list and _type(after) is list:
            arg[:] = after
        elif _type(arg) in (dict, collections.OrderedDict, collections.Counter, collections.defaultdict) and \
                _isinstance(after, dict):
            arg.clear()
            arg.update(after)
        elif _type(arg) is set and _type(after) is set:
            arg.clear()
            arg.update(after)
        elif _type(arg) is bytearray and _type(after) is bytearray:
            arg[:] = after
        elif _type(arg) is collections.deque and _type(after) is collections.deque:
            arg.clear()
            arg.extend(after)
    except Exception:  # noqa: BLE001
        pass


#: ``sys.stdout`` as this process set it up: a test that replaced it wants the program's prints (see "cap").
ORIGINAL_STREAMS = [sys.stdout]
