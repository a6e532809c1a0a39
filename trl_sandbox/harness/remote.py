"""Remote objects: an object of the other side of the judge-worker conversation, seen through a proxy.

A :class:`Remote` is what :func:`.values.decode` makes of a reference (a function, a class, an instance of the
program's classes, a generator...). Every operation on it is a request its :class:`.peer.Peer` sends; arguments are
encoded by that peer (:meth:`.peer.Peer.encode`), so that this module needs no encoder of its own.
"""

import collections

from .base import ProgramValueError, Timeout, ValueNotSent, WorkerDied, _type

#: The harness's own exceptions: a with-block they end never reaches the other side's ``__exit__`` (the worker may be
#: gone, or the conversation broken).
_HARNESS_EXCEPTIONS = (Timeout, WorkerDied, ValueNotSent, ProgramValueError)


class Remote:
    """An object that lives on the other side; every operation on it is one request to that side.

    Equality with anything but another remote object of the same side is False (decided here, never by the other
    side's code); ordering against values is unsupported. A context manager's ``__exit__`` never swallows a test's
    failure (see :meth:`__exit__`). Everything else (calls, attributes, items, iteration, ``len``, ``bool``, ``str``,
    ``hash``, arithmetic, ``isinstance`` against a remote class) is the other side's answer.
    """

    __slots__ = ("_trl_peer", "_trl_id", "_trl_type", "_trl_base", "_trl_buffer", "_trl_batches", "_trl_class",
                 "__weakref__")

    def __init__(self, peer, handle, type_name, base=None, kind=None):
        object.__setattr__(self, "_trl_peer", peer)
        object.__setattr__(self, "_trl_id", handle)
        object.__setattr__(self, "_trl_type", type_name)
        object.__setattr__(self, "_trl_base", base)
        object.__setattr__(self, "_trl_buffer", None)
        object.__setattr__(self, "_trl_batches", 0)
        object.__setattr__(self, "_trl_class", kind)

    def __getattribute__(self, name):
        # ``__module__`` and ``__doc__`` are the other side's object's (``inspect.getmodule``, ``doctest`` and
        # ``functools.wraps`` read them), not this class's; a side that does not lend them answers as for an absent
        # attribute.
        if name == "__module__" or name == "__doc__":
            try:
                value = object.__getattribute__(self, "_trl_op")("get", name=name)
            except TypeError:
                raise AttributeError(name) from None
            return ProgramText(value) if name == "__doc__" and _type(value) is str else value
        return object.__getattribute__(self, name)

    @property
    def __class__(self):
        """The type the object says it is: a generator, a function, a method or a code object of the other side says
        so (``isinstance(g, types.GeneratorType)``, ``inspect.isfunction``, as ``unittest.mock``'s ``spec`` does);
        anything else is a :class:`Remote`. ``type()`` still tells the truth."""
        kind = object.__getattribute__(self, "_trl_class")
        return Remote if kind is None else kind

    def _trl_op(self, op, *args, **fields):
        peer = object.__getattribute__(self, "_trl_peer")
        msg = {"q": op, "h": object.__getattribute__(self, "_trl_id")}
        if args:
            msg["args"] = [peer.encode(a) for a in args]
        msg.update(fields)
        return peer.request(msg, values=args)

    def _trl_same_side(self, other):
        return _type(other) is Remote and object.__getattribute__(other, "_trl_peer") is object.__getattribute__(
            self, "_trl_peer"
        )

    def __getattr__(self, name):
        return self._trl_op("get", name=name)

    def __setattr__(self, name, value):
        self._trl_op("set", value, name=name)

    def __delattr__(self, name):
        self._trl_op("del", name=name)

    def __call__(self, *args, **kwargs):
        peer = object.__getattribute__(self, "_trl_peer")
        msg = {
            "q": "call",
            "h": object.__getattribute__(self, "_trl_id"),
            "args": [peer.encode(a) for a in args],
        }
        if kwargs:
            msg["kw"] = [[k, peer.encode(v)] for k, v in kwargs.items()]
        return peer.request(msg, mutable=(args, kwargs))

    def __format__(self, spec):
        return self._trl_op("op", spec, name="format")

    def __eq__(self, other):
        if self._trl_same_side(other):
            return self._trl_op("op", other, name="eq")
        if object.__getattribute__(self, "_trl_base") is not None and _type(other) is not Remote:
            # A value type's subclass that keeps its equality: its base value, compared here.
            value = self._trl_op("op", name="value")
            return _type(value) is not Remote and value == other
        return NotImplemented

    def __ne__(self, other):
        if self._trl_same_side(other):
            return self._trl_op("op", other, name="ne")
        if object.__getattribute__(self, "_trl_base") is not None and _type(other) is not Remote:
            value = self._trl_op("op", name="value")
            return _type(value) is Remote or value != other
        return NotImplemented

    def _compare(name):  # noqa: N805 - a helper building methods in the class body
        def compare(self, other):
            if self._trl_same_side(other):
                return self._trl_op("op", other, name=name)
            return NotImplemented

        return compare

    __lt__, __le__, __gt__, __ge__ = _compare("lt"), _compare("le"), _compare("gt"), _compare("ge")

    def __iter__(self):
        it = self._trl_op("op", name="iter")
        return it if _type(it) is Remote else iter(it)

    def __next__(self):
        buffer = object.__getattribute__(self, "_trl_buffer")
        if not buffer:
            # Items come in batches that double up to 1024: list(generator) costs a few round trips, and an infinite
            # generator is never asked for much more than the test takes.
            batches = object.__getattribute__(self, "_trl_batches")
            object.__setattr__(self, "_trl_batches", batches + 1)
            buffer = collections.deque(self._trl_op("next", n=min(1024, 1 << batches)))
            object.__setattr__(self, "_trl_buffer", buffer)
            if not buffer:
                raise StopIteration
        return buffer.popleft()

    def __contains__(self, item):
        return self._trl_op("op", item, name="contains")

    def __getitem__(self, key):
        return self._trl_op("op", key, name="getitem")

    def __setitem__(self, key, value):
        self._trl_op("op", key, value, name="setitem")

    def __delitem__(self, key):
        self._trl_op("op", key, name="delitem")

    def __instancecheck__(self, obj):
        return self._trl_op("op", obj, name="isinstance")

    def __subclasscheck__(self, cls):
        return self._trl_op("op", cls, name="issubclass")

    def __exit__(self, kind, value, traceback):
        """The other side's ``__exit__(kind, value, None)`` (never the traceback: its frames hold this side's
        globals). Its answer suppresses an ordinary exception of the block (a program's ``suppress(KeyError)``), never
        a failure of the test: an ``AssertionError``, or a ``BaseException`` that is not an ``Exception`` (pytest's
        ``Failed`` and ``Skipped``, ``SystemExit``), which it is told only by kind; and an exception it raises
        itself does not replace such a failure. The harness's own exceptions (a timeout, a dead worker) do not reach
        it at all."""
        if kind is not None and issubclass(kind, _HARNESS_EXCEPTIONS):
            return False
        ordinary = kind is None or (issubclass(kind, Exception) and not issubclass(kind, AssertionError))
        try:
            answer = self._trl_op("op", kind, value if ordinary else None, name="exit")
        except _HARNESS_EXCEPTIONS:
            raise
        except BaseException:  # noqa: BLE001 - its own failure while the test's goes on: the test's stays
            if ordinary:
                raise
            return False
        return kind is not None and ordinary and bool(answer)

    def _unary(name):  # noqa: N805 - helpers building methods in the class body
        def unary(self):
            return self._trl_op("op", name=name)

        return unary

    def _binary(name):  # noqa: N805
        def binary(self, other):
            return self._trl_op("op", other, name=name)

        return binary

    __repr__, __str__, __bool__, __len__ = _unary("repr"), _unary("str"), _unary("bool"), _unary("len")
    __hash__, __int__, __float__, __index__ = _unary("hash"), _unary("int"), _unary("float"), _unary("index")
    __neg__, __pos__, __abs__, __invert__ = _unary("neg"), _unary("pos"), _unary("abs"), _unary("invert")
    __enter__ = _unary("enter")

    __add__, __radd__, __sub__, __rsub__ = _binary("add"), _binary("radd"), _binary("sub"), _binary("rsub")
    __mul__, __rmul__, __truediv__, __rtruediv__ = _binary("mul"), _binary("rmul"), _binary("truediv"), _binary(
        "rtruediv")
    __floordiv__, __rfloordiv__, __mod__, __rmod__ = _binary("floordiv"), _binary("rfloordiv"), _binary(
        "mod"), _binary("rmod")
    __pow__, __rpow__, __and__, __rand__ = _binary("pow"), _binary("rpow"), _binary("and"), _binary("rand")
    __or__, __ror__, __xor__, __rxor__ = _binary("or"), _binary("ror"), _binary("xor"), _binary("rxor")
    __lshift__, __rshift__, __matmul__ = _binary("lshift"), _binary("rshift"), _binary("matmul")
    del _compare, _unary, _binary


class ProgramText(str):
    """A docstring of the other side's object: text like any other, but ``doctest`` never runs its examples in this
    process (the judge's runner sends them to the worker: see :meth:`.bridge.JudgeBridge.route_doctests`)."""
