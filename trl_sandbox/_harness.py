"""trl-sandbox test harness: runs INSIDE the sandbox. Standard library only (Python >= 3.8).

Written into every sandbox at pool creation and run as ``python harness.py`` with one JSON request on stdin
(built by :mod:`trl_sandbox.tasks`). Two processes:

- the *judge* (this process, trusted) never executes model-written code. It reads the request, runs the tests,
  decides each verdict, and writes JSON-lines records to its *result channel*: the original stdout, kept on a
  private descriptor;
- the *worker*, forked *before* the request is read (so the tests and the expected outputs never exist in its
  memory), runs the model's program and answers the judge over a pair of pipes. It holds no result descriptor,
  cannot trace the judge (non-dumpable; seccomp), and in the local backend cannot signal it.

One namespace, two processes
----------------------------
The official harnesses (HumanEval's ``execution.py``, MBPP's) ``exec`` the program and the tests as one module. Here
the tests run in the judge and the program in the worker, and the judge's namespace mirrors the worker's module:
after loading, every module-level name of the program reaches the judge, as a *value* when it is plain data and as a
*remote object* (:class:`_Remote`) otherwise (functions, classes, instances of the program's classes, generators,
``re.Match``...). Operating on a remote object (calling it, reading or setting an attribute, iterating it, indexing
it, ``len``, ``str``, arithmetic...) is one round trip to the worker, whose answer is again a value or a remote object.
Arguments travel the other way the same way: plain data by value, the program's own objects back as themselves, and
the test's callables (lambdas, ``key=`` functions) and iterators as remote objects the worker calls back.
Exceptions cross with their class: a builtin or standard library exception as itself, an exception class the
program defines as a class the judge makes for it (so ``except TheirError`` in a test works). Text the program
prints while the test redirects ``sys.stdout`` (``contextlib.redirect_stdout``) reaches the test's stream, and
``sys.setrecursionlimit`` in a test applies to the program.

Values cross with exact types (:func:`encode`): ``None``, ``bool``, ``int`` of any size, ``float``, ``complex``,
``str``, ``bytes``, ``bytearray``, ``list``, ``tuple``, ``dict``, ``set``, ``frozenset``, ``range``, ``Fraction``,
``Decimal``, ``Counter``, ``OrderedDict``, ``defaultdict``, ``deque``, namedtuples, dict views, ``datetime`` values,
enum members of standard library enums, builtins by name. The judge decodes them into fresh objects of those types,
so equality is decided by trusted code. **Nothing the model's code controls decides a comparison with a value**: a
remote object is never equal to a value (its ``__eq__`` is consulted only against another remote object), so an
object with a rigged ``__eq__``, or a subclass of ``int``/``str`` that overrides it, cannot pass ``== expected``.
A value that still cannot cross (nested deeper than :data:`_MAX_DEPTH`, a container that contains itself, a message
over 64 MiB) ends the run with an ``unserializable`` record naming its type: never a wrong answer.

For HumanEval tasks the judge runs the task's own code prefix (trusted) first, so helper functions the tests use
(``poly``, ``encode_cyclic``) are the task's, whatever the program redefines.

Request fields: ``mode`` (``assert`` | ``call`` | ``stdio`` | ``reference``), ``program`` (source run by the worker),
``prelude`` (import statements of the tests, run by the worker after the program, as the official harnesses'
single module would), ``trusted`` (``assert``: code the judge runs first), ``setup`` (``assert``: test module source
run by the judge), ``entry`` (``assert``: function the tests call as ``candidate``), ``tests``, ``expected``
(``call``: encoded return values; ``stdio``: output texts), ``func_name``, ``test_timeout_s``, ``output_limit``,
``stop_on_failure`` (stop at the first failing test: the all-or-nothing reward), ``banned`` (runtime bans:
``builtins``, ``modules``, ``imports``).

Records: ``{"ready": true}``, then ``{"load": "error" | "timeout", "error"}`` or one ``{"i": k, "ok": bool}`` per test
(with ``error``, ``timeout`` or ``unserializable`` when it failed so), ``{"crash": reason}`` when the worker died,
then ``{"done": n}``, then (``python harness.py`` only) ``{"output": text, "truncated"}``: the first 64 KiB the worker
printed. The worker's stdout and stderr are a pipe the judge reads, never the process's own: remote backends merge a
command's stdout and stderr, and nothing the code prints may reach the result channel.

Remote sandboxes: their exec API has no stdin, so the backend uploads the request as a file named
``.trl-sandbox-stdin-*`` and redirects it; the judge unlinks it and becomes non-dumpable before forking the worker.
The worker gets no-new-privs (``sudo`` cannot make it root) and, when the harness runs as root, runs as ``nobody``.
"""

import ast
import builtins
import collections
import copy
import ctypes
import datetime
import decimal
import fractions
import io
import json
import marshal
import math
import os
import random
import select
import signal
import stat
import struct
import sys
import time
import types

# The harness's own references to builtins a task may ban at runtime in the worker (see _apply_bans).
_sorted, _callable, _isinstance, _getattr, _type = sorted, callable, isinstance, getattr, type
_MAX_DEPTH = 200
_MAX_MESSAGE = 64 << 20
#: Integers of more bits than this cross as hexadecimal text (JSON would need int -> str, limited to 4300 digits).
_BIG_INT_BITS = 12000
#: Module-level containers of the program larger than this cross as remote objects, not by value.
_NAME_VALUE_LIMIT = 10000
#: CPython's default recursion limit: the official harnesses run the program with it (a test may raise it).
_DEFAULT_RECURSION_LIMIT = 1000
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
PR_SET_PDEATHSIG = 1
#: Bytes of a compiler's message kept for a ``compile_error`` (its tail: the first error is usually near the end of
#: what fits, and the summary line is last).
COMPILE_MESSAGE_LIMIT = 2000
NOBODY = 65534
#: Name prefix of the request files remote backends redirect to our stdin (see _forget_stdin_file).
STDIN_PREFIX = ".trl-sandbox-stdin-"
_OUTPUT_RECORD_LIMIT = 64 << 10
#: Module name the program's own definitions carry (``__name__`` of its namespace).
SOLUTION_MODULE = "__solution__"
#: Module name of the test namespace in the judge: classes defined by trusted test code carry it.
TESTS_MODULE = "__tests__"


class Unserializable(Exception):
    """A value that cannot cross between the judge and the worker."""


class _Timeout(BaseException):
    """A test ran past its budget (BaseException: trusted test code does not catch it)."""


class _WorkerDied(BaseException):
    """The worker process exited or crashed, or answered garbage."""


class _Unserializable(BaseException):
    """The other side could not send a value (BaseException: trusted test code does not catch it)."""


# -- comparisons (the judge's, and the host's through trl_sandbox.tasks) -----------------------------------------


def same_value(a, b):
    """Whether return value ``a`` equals expected value ``b`` with exact types (``bool`` is not ``int``, a
    ``list`` is not a ``tuple``); floats within 1e-9 relative (NaN equals NaN); dicts by keys then values. Used for
    call-based tasks, whose expected values come from a reference function."""
    ta = _type(a)
    if ta is not _type(b):
        return False
    if ta is float:
        return (a != a and b != b) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if ta is list or ta is tuple:
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if ta is dict:
        return a.keys() == b.keys() and all(same_value(v, b[k]) for k, v in a.items())
    if ta is _Remote:
        return a is b
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001
        return False


def normalize_stdout(text):
    """Output text as stdin/stdout tasks compare it: ``\\r\\n`` as ``\\n``, trailing whitespace of each line and
    trailing blank lines dropped."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def same_stdout(output, expected):
    """Whether a program's ``output`` matches ``expected`` (see :func:`normalize_stdout`)."""
    return normalize_stdout(output) == normalize_stdout(expected)


# -- stdout judges (``compare`` of stdin/stdout requests) ------------------------------------------------------------

#: Judges of a program's stdout against the expected text, by name (see :func:`same_output`).
JUDGES = ("exact", "lines", "tokens", "float", "decimal")
_NUMERIC = None


def _numeric(token):
    """``token`` as a float when it is written as a number (``12``, ``-0.5``, ``1e-9``), else None: words such as
    ``nan`` or ``inf`` stay words."""
    global _NUMERIC
    if _NUMERIC is None:
        import re

        _NUMERIC = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")
    if _NUMERIC.match(token) is None:
        return None
    try:
        return float(token)
    except (ValueError, OverflowError):
        return None


def _is_integer(token):
    return token.lstrip("+-").isdigit()


def _close(got, want, tolerance, absolute_only):
    """testlib's ``doubleCompare`` (``rcmp6`` with 1e-6): equal within ``tolerance`` absolutely, or relatively to
    the expected value; ``absolute_only``: strictly within ``tolerance`` absolutely (code_contests' ``ValuesMatch``)."""
    if math.isnan(got) or math.isnan(want):
        return False
    diff = abs(got - want)
    if absolute_only:
        return diff < tolerance
    return diff <= tolerance or diff <= tolerance * abs(want) * (1 + 1e-15)


def _same_token(got, want, tolerance, absolute_only):
    if got == want:
        return True
    if _is_integer(got) and _is_integer(want):
        return int(got) == int(want)  # integers compare exactly, however large
    a, b = _numeric(got), _numeric(want)
    if a is None or b is None:
        return False
    return _close(a, b, tolerance, absolute_only)


def _decimal_line(line):
    try:
        return [decimal.Decimal(token) for token in line.split()]
    except (decimal.InvalidOperation, ValueError):
        return None


def same_output(output, expected, compare=None):
    """Whether a program's stdout ``output`` matches ``expected`` under the judge ``compare`` (a dict; default
    ``{"mode": "lines"}``). Modes:

    - ``exact``: the same text, byte for byte (``\\r\\n`` read as ``\\n``);
    - ``lines``: the same lines once each line's trailing whitespace and the trailing blank lines are dropped;
    - ``tokens``: the same whitespace-separated tokens (Codeforces' default checker, testlib's ``wcmp``);
    - ``float``: tokens, where two numbers match within ``tolerance`` (default 1e-6) absolutely or relatively to
      the expected one (testlib's ``rcmp6``), or with ``absolute_only`` strictly within it absolutely
      (code_contests' ``OutputsMatch``); integers compare exactly, other tokens as text;
    - ``decimal``: LiveCodeBench's ``grade_stdio``: the outputs stripped, the same number of lines, each line
      (stripped) equal as text or as a list of ``Decimal`` numbers (``0.500`` is ``0.5``, ``0.333`` is not
      ``0.3333``).

    ``ignore_case`` (``tokens``/``float``) compares tokens case-insensitively (code_contests lowercases both).
    """
    compare = compare or {}
    mode = compare.get("mode", "lines")
    if mode == "lines":
        return same_stdout(output, expected)
    if mode == "exact":
        return output.replace("\r\n", "\n") == expected.replace("\r\n", "\n")
    if mode == "decimal":
        got = [line.strip() for line in output.strip().split("\n")]
        want = [line.strip() for line in expected.strip().split("\n")]
        if len(got) != len(want):
            return False
        for a, b in zip(got, want):
            if a != b:
                da, db = _decimal_line(a), _decimal_line(b)
                if da is None or db is None or da != db:
                    return False
        return True
    got, want = output.split(), expected.split()
    if compare.get("ignore_case"):
        got, want = [t.lower() for t in got], [t.lower() for t in want]
    if len(got) != len(want):
        return False
    if mode == "tokens":
        return got == want
    if mode == "float":
        tolerance = float(compare.get("tolerance", 1e-6))
        absolute_only = bool(compare.get("absolute_only"))
        return all(_same_token(a, b, tolerance, absolute_only) for a, b in zip(got, want))
    raise ValueError("unknown judge %r" % (mode,))


# -- values: encoding ----------------------------------------------------------------------------------------------

_FAST = {int: "i", float: "f", str: "s"}
#: Classes this process made for values it decoded (namedtuples, opaque stand-ins, mirrors of exception classes),
#: reused while they are few: a long-lived judge server must not grow with every completion it judges.
_NAMEDTUPLES = {}
_OPAQUE = {}
_MIRRORS = {}
_CLASS_CACHE_LIMIT = 1024


def _cached_class(cache, key, make):
    cls = cache.get(key)
    if cls is None:
        if len(cache) >= _CLASS_CACHE_LIMIT:
            cache.clear()
        cls = cache[key] = make()
    return cls


def _builtin_name(value):
    """The name of ``value`` when it is a builtin *type* (``int``, ``ValueError``): those cross by name. Builtin
    functions (``len``, and above all ``eval``) cross as remote objects: the judge never holds one the worker
    chose."""
    name = _getattr(value, "__name__", None)
    if _isinstance(value, type) and _type(name) is str and _getattr(builtins, name, None) is value:
        return name
    return None


def _is_namedtuple(value):
    cls = _type(value)
    return (
        cls.__bases__ == (tuple,)
        and _type(_getattr(cls, "_fields", None)) is tuple
        and cls.__eq__ is tuple.__eq__
        and cls.__hash__ is tuple.__hash__
    )


def encode(value, peer=None, depth=0, path=None):
    """Encode ``value`` as JSON-able data with its exact type (see the module docstring for the types).

    Everything else becomes a reference: ``["R", handle, type name, callable]`` to an object ``peer`` lends (see
    :class:`_Peer`), or ``["H", handle]`` for an object the other side lent. Without ``peer``, only values encode.

    Raises:
        Unserializable: nested deeper than ``_MAX_DEPTH``, a container that contains itself, or (without ``peer``)
            an object that is not a value.
    """
    if depth > _MAX_DEPTH:
        raise Unserializable("a %s nested deeper than %d levels" % (_type_name(value), _MAX_DEPTH))
    t = _type(value)
    if t is _Remote:  # before anything that would read an attribute of it (a request to the other side)
        return _reference(value, peer)
    if value is None:
        return ["N"]
    if t is bool:
        return ["b", value]
    if t is int:
        return ["i", value] if value.bit_length() <= _BIG_INT_BITS else ["I", "%x" % value]
    if t is float:
        return ["f", value]
    if t is str:
        return ["s", value]
    if t is bytes:
        return ["y", value.hex()]
    if t is list or t is tuple:
        tag = "l" if t is list else "t"
        kinds = set(map(_type, value)) if len(value) > 4 else None
        if kinds is not None and len(kinds) == 1:
            kind = next(iter(kinds))
            fast = _FAST.get(kind)
            if fast is not None and (
                kind is not int or max(max(value).bit_length(), min(value).bit_length()) <= _BIG_INT_BITS
            ):
                return [tag + fast, list(value)]
        return [tag, _items(value, peer, depth, path)]
    if t is dict:
        return ["d", _pairs(value.items(), value, peer, depth, path)]
    if t is set or t is frozenset:
        return ["S" if t is set else "FS", _items(value, peer, depth, path)]
    if t is complex:
        return ["c", value.real, value.imag]
    if t is bytearray:
        return ["Y", value.hex()]
    if t is range:
        return ["r", value.start, value.stop, value.step]
    if t is fractions.Fraction:
        return ["Q", encode(value.numerator), encode(value.denominator)]
    if t is decimal.Decimal:
        return ["D", str(value)]
    if t is collections.Counter:
        return ["C", _pairs(value.items(), value, peer, depth, path)]
    if t is collections.OrderedDict:
        return ["O", _pairs(value.items(), value, peer, depth, path)]
    if t is collections.defaultdict:
        factory = value.default_factory
        return ["DD", encode(factory, peer, depth + 1), _pairs(value.items(), value, peer, depth, path)]
    if t is collections.deque:
        return ["q", value.maxlen, _items(value, peer, depth, path)]
    if t is type({}.keys()):
        return ["dk", _items(value, peer, depth, path)]
    if t is type({}.values()):
        return ["dv", _items(value, peer, depth, path)]
    if t is type({}.items()):
        return ["di", [_items(pair, peer, depth, path) for pair in value]]
    if t is datetime.datetime or t is datetime.time:
        if value.tzinfo is None or _type(value.tzinfo) is datetime.timezone:
            return ["dt", "datetime" if t is datetime.datetime else "time", value.isoformat()]
    if t is datetime.date:
        return ["dt", "date", value.isoformat()]
    if t is datetime.timedelta:
        return ["dt", "timedelta", [value.days, value.seconds, value.microseconds]]
    if _isinstance(value, tuple) and _is_namedtuple(value):
        return ["nt", t.__name__, list(t._fields), _items(value, peer, depth, path)]
    if _isinstance(value, types.ModuleType):
        name = _getattr(value, "__name__", None)
        if _type(name) is str:
            return ["M", name, _reference(value, peer)]
    if _isinstance(value, type) and issubclass(value, BaseException):
        return _encode_exception_class(value, peer, depth)
    name = _builtin_name(value)
    if name is not None:
        return ["B", name]
    enum_member = _enum_reference(value)
    if enum_member is not None:
        return enum_member
    if t.__module__ == "numpy" and _isinstance(value, _numpy_scalar_types()):
        return encode(value.item(), peer, depth, path)
    if peer is None:
        raise Unserializable("an object of type %s is not a value" % _type_name(value))
    return _reference(value, peer)


def _items(values, peer, depth, path):
    path = _enter(values, path)
    try:
        return [encode(v, peer, depth + 1, path) for v in values]
    finally:
        path.discard(id(values))


def _pairs(items, container, peer, depth, path):
    path = _enter(container, path)
    try:
        return [[encode(k, peer, depth + 1, path), encode(v, peer, depth + 1, path)] for k, v in items]
    finally:
        path.discard(id(container))


def _enter(container, path):
    if path is None:
        path = set()
    if id(container) in path:
        raise Unserializable("a %s that contains itself" % _type_name(container))
    path.add(id(container))
    return path


def _type_name(value):
    cls = _type(value)
    module = _getattr(cls, "__module__", "")
    name = _getattr(cls, "__qualname__", cls.__name__)
    return name if module in ("builtins", SOLUTION_MODULE, TESTS_MODULE, None) else "%s.%s" % (module, name)


def _numpy_scalar_types():
    numpy = sys.modules.get("numpy")
    return (numpy.generic,) if numpy is not None else ()


def _enum_reference(value):
    """``["E", module, qualname, member]`` for a member of an enum defined outside the program (the judge resolves it
    among the modules it has loaded)."""
    enum = sys.modules.get("enum")
    if enum is None or not _isinstance(value, enum.Enum):
        return None
    cls = _type(value)
    if cls.__module__ in (SOLUTION_MODULE, TESTS_MODULE):
        return None
    return ["E", cls.__module__, cls.__qualname__, value.name]


def _reference(value, peer):
    """Lend ``value`` to the other side: ``["H", handle]`` when it is the other side's own object, else
    ``["R", handle, type name, callable, value base]`` (see :func:`_value_base`)."""
    if peer is None:
        raise Unserializable("an object of type %s is not a value" % _type_name(value))
    if _type(value) is _Remote and object.__getattribute__(value, "_trl_peer") is peer:
        return ["H", object.__getattribute__(value, "_trl_id")]
    base = _value_base(value)
    return ["R", peer.lend(value), _type_name(value), _callable(value), base.__name__ if base else None]


_VALUE_BASES = (int, float, complex, str, bytes, bytearray, list, tuple, dict, set, frozenset, collections.Counter,
                collections.OrderedDict, collections.defaultdict, collections.deque)


def _value_base(value):
    """The value type an object's class derives from without changing equality (a namedtuple subclass, an
    ``IntEnum``, ``class Stack(list)`` with no ``__eq__``), else None. Such an object compares with values as its base
    value does, in the judge (:meth:`_Remote.__eq__`); a class that overrides ``__eq__`` never equals a value."""
    cls = _type(value)
    for base in cls.__mro__[1:]:
        if base in _VALUE_BASES:
            if cls.__eq__ is base.__eq__ and cls.__ne__ is base.__ne__:
                return base
            return None
    return None


def _base_value(obj):
    """``obj`` as a plain value of its :func:`_value_base`, read through the base type's own methods."""
    base = _value_base(obj)
    if base is None:
        raise TypeError("a %s is not a value" % _type_name(obj))
    if base in (int, float):
        return base(base.__repr__(obj)) if base is float else int.__index__(obj)
    if base is complex:
        return complex(obj.real, obj.imag)
    if base is str:
        return str.__str__(obj)
    if base in (bytes, bytearray):
        return base(memoryview(obj))
    if base in (list, tuple, set, frozenset):
        return base(base.__iter__(obj))
    if base is collections.deque:
        return collections.deque(collections.deque.__iter__(obj), obj.maxlen)
    if base is collections.defaultdict:
        return collections.defaultdict(obj.default_factory, dict.items(obj))
    return base(dict.items(obj))


def _encode_exception_class(cls, peer, depth):
    """``["B", name]`` for a builtin exception class, else ``["X", module, qualname, handle, [bases]]``: the receiver
    uses the class itself when it has it loaded (a standard library exception) and else makes one with that name
    over the same bases."""
    name = _builtin_name(cls)
    if name is not None:
        return ["B", name]
    bases = [_encode_exception_class(b, peer, depth + 1) for b in cls.__bases__ if issubclass(b, BaseException)]
    handle = peer.lend(cls) if peer is not None else None
    return ["X", cls.__module__, cls.__qualname__, handle, bases]


# -- values: decoding ------------------------------------------------------------------------------------------------


def decode(data, peer=None):
    """Inverse of :func:`encode`: fresh objects of the encoded types; references become :class:`_Remote` objects
    of ``peer`` (or, without it, opaque stand-ins equal only to themselves). Data from the worker is untrusted: any
    malformed input raises (``ValueError``, ``TypeError``, ``KeyError``...), never builds anything else."""
    tag = data[0]
    if tag == "N":
        return None
    if tag in ("b", "i", "f", "s"):
        value = data[1]
        if _type(value) is not {"b": bool, "i": int, "f": float, "s": str}[tag]:
            if tag == "f" and _type(value) is int:
                return float(value)
            raise ValueError("bad %s value" % tag)
        return value
    if tag in ("li", "lf", "ls", "ti", "tf", "ts"):
        values = data[1]
        want = {"i": int, "f": float, "s": str}[tag[1]]
        if _type(values) is not list or not set(map(_type, values)) <= {want}:
            if want is not float or not set(map(_type, values)) <= {int, float}:
                raise ValueError("bad fast list")
            values = [float(v) for v in values]
        return list(values) if tag[0] == "l" else tuple(values)
    if tag == "l":
        return [decode(v, peer) for v in data[1]]
    if tag == "t":
        return tuple(decode(v, peer) for v in data[1])
    if tag == "d":
        return {decode(k, peer): decode(v, peer) for k, v in data[1]}
    if tag == "S":
        return {decode(v, peer) for v in data[1]}
    if tag == "FS":
        return frozenset(decode(v, peer) for v in data[1])
    if tag == "I":
        return int(_str(data[1]), 16)
    if tag == "c":
        return complex(_float(data[1]), _float(data[2]))
    if tag == "y":
        return bytes.fromhex(_str(data[1]))
    if tag == "Y":
        return bytearray.fromhex(_str(data[1]))
    if tag == "r":
        return range(_int(data[1]), _int(data[2]), _int(data[3]))
    if tag == "Q":
        return fractions.Fraction(_int(decode(data[1])), _int(decode(data[2])))
    if tag == "D":
        return decimal.Decimal(_str(data[1]))
    if tag == "C":
        return collections.Counter({decode(k, peer): decode(v, peer) for k, v in data[1]})
    if tag == "O":
        return collections.OrderedDict((decode(k, peer), decode(v, peer)) for k, v in data[1])
    if tag == "DD":
        factory = decode(data[1], peer)
        if factory is not None and not _callable(factory):
            raise ValueError("bad defaultdict factory")
        return collections.defaultdict(factory, ((decode(k, peer), decode(v, peer)) for k, v in data[2]))
    if tag == "q":
        maxlen = data[1]
        if maxlen is not None:
            maxlen = _int(maxlen)
        return collections.deque((decode(v, peer) for v in data[2]), maxlen)
    if tag == "dk":
        return dict.fromkeys(decode(v, peer) for v in data[1]).keys()
    if tag == "dv":
        return dict(enumerate(decode(v, peer) for v in data[1])).values()
    if tag == "di":
        return dict((decode(k, peer), decode(v, peer)) for k, v in data[1]).items()
    if tag == "dt":
        kind, value = data[1], data[2]
        if kind == "timedelta":
            return datetime.timedelta(days=_int(value[0]), seconds=_int(value[1]), microseconds=_int(value[2]))
        cls = {"datetime": datetime.datetime, "time": datetime.time, "date": datetime.date}[kind]
        return cls.fromisoformat(_str(value))
    if tag == "nt":
        name, fields = _str(data[1]), tuple(_str(f) for f in data[2])
        cls = _cached_class(_NAMEDTUPLES, (name, fields), lambda: collections.namedtuple(name, fields))
        return cls(*(decode(v, peer) for v in data[3]))
    if tag == "B":
        value = builtins.__dict__[_str(data[1])]
        if not _isinstance(value, type):
            raise ValueError("only builtin types cross by name")
        return value
    if tag == "E":
        cls = _loaded_class(data[1], data[2])
        enum = sys.modules.get("enum")
        if cls is None or enum is None or not issubclass(cls, enum.Enum):
            raise ValueError("unknown enum %r" % (data[2],))
        return cls[_str(data[3])]
    if tag == "X":
        return _exception_class(data, peer)
    if tag == "M":
        module = sys.modules.get(_str(data[1]))
        if module is not None and not _own_module(module):
            return module
        return decode(data[2], peer)
    if tag == "R":
        if peer is None:
            return _opaque(_str(data[2]))
        base = data[4] if len(data) > 4 else None
        return peer.remote(_int(data[1]), _str(data[2]), bool(data[3]), base if _type(base) is str else None)
    if tag == "H":
        if peer is None:
            raise ValueError("no handles here")
        return peer.handles[_int(data[1])]
    raise ValueError("unknown tag %r" % (tag,))


def _int(v):
    if _type(v) is not int:
        raise ValueError("expected an int")
    return v


def _float(v):
    if _type(v) is int:
        return float(v)
    if _type(v) is not float:
        raise ValueError("expected a float")
    return v


def _str(v):
    if _type(v) is not str:
        raise ValueError("expected a str")
    return v


def _opaque(type_name):
    """A stand-in for an object that stayed in the sandbox (host-side decoding): equal only to itself."""
    cls = _cached_class(_OPAQUE, type_name,
                        lambda: _type(type_name, (), {"__repr__": lambda self: "<%s object>" % type_name}))
    return cls()


def _own_module(module):
    return _getattr(module, "__name__", None) in (__name__, "__main__", "trl_sandbox_harness")


def _loaded_class(module_name, qualname):
    """The class ``module_name.qualname`` when that module is already loaded here (never imports), else None."""
    module = sys.modules.get(_str(module_name))
    if module is None or _own_module(module):
        return None
    obj = module
    for part in _str(qualname).split("."):
        if part.startswith("_") and part not in ("__main__",):
            return None
        obj = _getattr(obj, part, None)
    return obj if _isinstance(obj, type) else None


def _exception_class(data, peer):
    """The exception class for an ``["X", ...]`` reference: a standard library class this process has loaded (never
    the harness's own), else a class made here with the same name over the same (resolved) bases, once per class."""
    module, qualname, handle, bases = _str(data[1]), _str(data[2]), data[3], data[4]
    if module not in (SOLUTION_MODULE, TESTS_MODULE):
        cls = _loaded_class(module, qualname)
        if cls is not None and issubclass(cls, BaseException):
            return cls
    def make():
        resolved = tuple(b for b in (decode(b, peer) for b in bases) if _isinstance(b, type)) or (Exception,)
        namespace = {"__module__": module, "__qualname__": qualname}
        try:
            made = _type(qualname.rsplit(".", 1)[-1], resolved, namespace)
        except TypeError:  # incompatible layouts of several builtin bases: keep the first
            made = _type(qualname.rsplit(".", 1)[-1], resolved[:1], namespace)
        if not issubclass(made, BaseException):
            raise ValueError("not an exception class")
        return made

    # One class per class of the other side, for the conversation's length (``except TheirError`` matches what
    # is raised later); kept on the peer, so that it goes with it.
    cache = peer.mirrors if peer is not None else _MIRRORS
    return _cached_class(cache, (handle, module, qualname), make)


def _raise_from(info, peer):
    """Raise, in this process, the exception the other side reported (``{"t": class, "args", "desc"}``)."""
    try:
        cls = decode(info["t"], peer)
        if not (_isinstance(cls, type) and issubclass(cls, BaseException)) or cls in (_Timeout, _WorkerDied):
            raise ValueError("not an exception class")
    except Exception:  # noqa: BLE001 - an exception type we cannot rebuild: its description still tells
        cls = RuntimeError
    desc = str(info.get("desc", ""))[:2000]
    args = None
    if _type(info.get("args")) is list:
        try:
            args = tuple(decode(a, peer) for a in info["args"])
        except Exception:  # noqa: BLE001
            args = None
    if args is None:
        prefix = cls.__name__ + ": "
        args = (desc[len(prefix):] if desc.startswith(prefix) else desc,)
    try:
        exc = cls(*args)
    except Exception:  # noqa: BLE001 - a constructor with other arguments (JSONDecodeError): the args still tell
        exc = cls.__new__(cls)
        exc.args = args
    raise exc


def _exception_info(exc, peer):
    """What :func:`_raise_from` needs to raise ``exc`` on the other side."""
    info = {"desc": _describe(exc)}
    try:
        info["t"] = _encode_exception_class(_type(exc), peer, 0)
    except Exception:  # noqa: BLE001
        info["t"] = ["B", "RuntimeError"]
    try:
        info["args"] = [encode(a) for a in exc.args]
    except Exception:  # noqa: BLE001 - not values: the description is used instead
        pass
    return info


def _describe(exc):
    return ("%s: %s" % (_type(exc).__name__, exc))[:500]


# -- remote objects ------------------------------------------------------------------------------------------------


class _Remote:
    """An object that lives on the other side; every operation on it is one request to that side.

    Equality with anything but another remote object of the same side is False (decided here, never by the other
    side's code); ordering against values is unsupported. Everything else (calls, attributes, items, iteration,
    ``len``, ``bool``, ``str``, ``hash``, arithmetic, ``isinstance`` against a remote class) is the other side's
    answer.
    """

    __slots__ = ("_trl_peer", "_trl_id", "_trl_type", "_trl_base", "_trl_buffer", "_trl_batches", "__weakref__")

    def __init__(self, peer, handle, type_name, base=None):
        object.__setattr__(self, "_trl_peer", peer)
        object.__setattr__(self, "_trl_id", handle)
        object.__setattr__(self, "_trl_type", type_name)
        object.__setattr__(self, "_trl_base", base)
        object.__setattr__(self, "_trl_buffer", None)
        object.__setattr__(self, "_trl_batches", 0)

    def _trl_op(self, op, *args, **fields):
        peer = object.__getattribute__(self, "_trl_peer")
        msg = {"q": op, "h": object.__getattribute__(self, "_trl_id")}
        if args:
            msg["args"] = [encode(a, peer) for a in args]
        msg.update(fields)
        return peer.request(msg)

    def _trl_same_side(self, other):
        return _type(other) is _Remote and object.__getattribute__(other, "_trl_peer") is object.__getattribute__(
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
            "args": [encode(a, peer) for a in args],
        }
        if kwargs:
            msg["kw"] = [[k, encode(v, peer)] for k, v in kwargs.items()]
        return peer.request(msg, mutable=(args, kwargs))

    def __format__(self, spec):
        return self._trl_op("op", spec, name="format")

    def __eq__(self, other):
        if self._trl_same_side(other):
            return self._trl_op("op", other, name="eq")
        if object.__getattribute__(self, "_trl_base") is not None and _type(other) is not _Remote:
            # A value type's subclass that keeps its equality: its base value, compared here.
            value = self._trl_op("op", name="value")
            return _type(value) is not _Remote and value == other
        return NotImplemented

    def __ne__(self, other):
        if self._trl_same_side(other):
            return self._trl_op("op", other, name="ne")
        if object.__getattribute__(self, "_trl_base") is not None and _type(other) is not _Remote:
            value = self._trl_op("op", name="value")
            return _type(value) is _Remote or value != other
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
        return it if _type(it) is _Remote else iter(it)

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

    def __exit__(self, *exc_info):
        return self._trl_op("op", name="exit")

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



def _next_items(iterator, n, pending):
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


import operator as _operator  # noqa: E402 - used by the operations table only

#: Operations one side performs on the objects it lent, by name: (function, how many arguments).
_OPS = {
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
    "value": (lambda obj: _base_value(obj), 0),
}
#: The operations the judge performs on its own objects for the worker (callbacks on the test's lambdas, iterators
#: and objects): nothing that reaches the judge's internals.
_JUDGE_OPS = frozenset({
    "repr", "str", "format", "bool", "len", "hash", "eq", "ne", "lt", "le", "gt", "ge", "iter", "contains",
    "getitem", "int", "float", "index", "neg", "pos", "abs", "add", "radd", "sub", "rsub", "mul", "rmul",
    "truediv", "rtruediv", "floordiv", "rfloordiv", "mod", "rmod",
})
#: Mutable argument types whose changes by a call are copied back into the caller's objects.
_MUTABLE = (list, dict, set, bytearray, collections.deque)


# -- framed messages over pipes ----------------------------------------------------------------------------------


def _send_frame(fd, data):
    data = struct.pack("<I", len(data)) + data
    while data:
        data = data[os.write(fd, data):]


def _send(fd, obj):
    _send_frame(fd, _dumps(obj))


def _dumps(obj):
    """A message as bytes; a message over ``_MAX_MESSAGE`` is replaced by an answer saying its value cannot cross
    (the other side would take it for garbage)."""
    data = json.dumps(obj).encode()
    if len(data) > _MAX_MESSAGE:
        if "q" in obj:
            raise Unserializable("a message of %d bytes (over the %d MiB limit)" % (len(data), _MAX_MESSAGE >> 20))
        data = json.dumps({"u": "a value of %d bytes (over the %d MiB limit)" % (len(data), _MAX_MESSAGE >> 20)})
        data = data.encode()
    return data


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
    if not _isinstance(message, dict):
        raise _WorkerDied()
    return message


class _Output:
    """The worker's stdout and stderr (one pipe), read by the judge as it goes: the first ``limit`` bytes are
    kept."""

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


# -- one side of the conversation ------------------------------------------------------------------------------------


class _Peer:
    """One side of the judge-worker conversation over two pipes.

    :meth:`request` sends a request and returns its answer, serving the other side's requests that arrive meanwhile
    (a program calling a test's lambda, which calls the program again...). :meth:`lend` keeps the objects this
    side lent (``handles``); :meth:`remote` makes one :class:`_Remote` per object the other side lent.

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
        handle = self._handle_of.get(id(obj))
        if handle is None or self.handles.get(handle) is not obj:
            handle = len(self.handles) + 1
            self.handles[handle] = obj
            self._handle_of[id(obj)] = handle
        return handle

    def remote(self, handle, type_name, is_callable, base=None):
        proxy = self._proxies.get(handle)
        if proxy is None:
            proxy = self._proxies[handle] = _Remote(self, handle, type_name, base)
        return proxy

    # -- talking (the judge's side adds deadlines and treats garbage as a dead worker)

    def _send(self, msg):
        _send(self.send_fd, msg)

    def _read(self):
        return _receive(self.recv_fd)

    def request(self, msg, mutable=None, raw=False):
        """Send request ``msg`` and return the decoded answer (or raise the exception it reports); copy argument
        changes back into ``mutable`` (``(args, kwargs)`` of a call). ``raw``: return the answer message itself."""
        if sys.stdout is not _ORIGINAL_STREAMS[0]:
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
            _raise_from(answer["e"], self)
        if "u" in answer:
            raise _Unserializable(str(answer["u"])[:200])
        value = decode(answer["a"], self)
        if mutable is not None and answer.get("m"):
            args, kwargs = mutable
            for key, after in answer["m"]:
                target = args[key] if _type(key) is int and 0 <= key < len(args) else kwargs.get(key)
                _update_in_place(target, decode(after, self))
        return value

    def serve(self, msg):
        """Answer one request of the other side. Each side defines what it serves (:class:`_WorkerPeer`,
        :class:`_Worker`); a bare peer serves nothing."""
        return {"e": {"t": ["B", "TypeError"], "desc": "TypeError: this side serves no requests"}}

    def answer(self, fn, msg):
        """Run ``fn()`` and make its answer message: the value (a :class:`_CallResult` carries changed arguments,
        a :class:`_Names` the load's names), the exception it raised, or why the value cannot be sent. With
        ``"cap"`` in ``msg``, what it prints is captured and sent along."""
        capture = msg.get("cap") is True
        saved = sys.stdout
        if capture:
            sys.stdout = io.StringIO()
        try:
            try:
                value = fn()
                if _type(value) is _Names:
                    reply = {"names": list(value)}
                elif _type(value) is _CallResult:
                    reply = {"a": encode(value.value, self)}
                    if value.changed:
                        reply["m"] = [[key, encode(v, self)] for key, v in value.changed]
                else:
                    reply = {"a": encode(value, self)}
            except Unserializable as exc:
                reply = {"u": str(exc)}
            except BaseException as exc:  # noqa: BLE001 - the code's failures are answers
                reply = {"e": _exception_info(exc, self)}
        finally:
            if capture:
                printed, sys.stdout = sys.stdout, saved
                try:
                    reply["o"] = printed.getvalue()
                except Exception:  # noqa: BLE001 - the code replaced the stream with something else
                    pass
        return reply


class _Names(list):
    """The load answer: ``[[name, encoded value]...]``, already encoded (see :meth:`_WorkerPeer.load`)."""


class _CallResult:
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
_ORIGINAL_STREAMS = [sys.stdout]


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


class _Quitter:
    """``exit()`` and ``quit()`` as the ``site`` module defines them (the sandbox runs Python with ``-S``)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "Use %s() or Ctrl-D (i.e. EOF) to exit" % self.name

    def __call__(self, code=None):
        raise SystemExit(code)


def _fingerprint(value):
    """Bytes that change when a plain mutable argument changes (None: not comparable this way)."""
    try:
        return marshal.dumps(value)
    except ValueError:
        return None


class _WorkerPeer(_Peer):
    """The worker's side: runs the program and answers the judge's requests on its objects."""

    def __init__(self, send_fd, recv_fd):
        super().__init__(send_fd, recv_fd)
        self.code = None
        self.base_rss = 0
        self.run_argv = None
        self.managed = False

    def serve(self, msg):
        op = msg.get("q")
        if op == "stdio":
            files = msg.get("files")
            names = tuple(files) if _type(files) is list and len(files) == 2 else None
            if self.run_argv is not None:  # a compiled program: its own process per test
                reply = _run_native(self.run_argv, msg["input"], int(msg["limit"]), float(msg["timeout"]), names,
                                    self.managed)
                return {"a": encode(reply)}
            reply = _run_stdin(self.code, msg["input"], int(msg["limit"]), names)
            reply["rss"] = max(0, reply["rss"] - self.base_rss)  # what the program added to the runtime's own
            return {"a": encode(reply)}
        if op == "build":
            reply = _build(msg["build"], msg["program"], float(msg["timeout"]))
            if reply.get("ok"):
                self.run_argv = [str(part) for part in msg["build"]["run"]]
                self.managed = bool(msg["build"].get("managed"))
            return {"a": encode(reply)}
        return self.answer(lambda: self._operate(op, msg), msg)

    def _operate(self, op, msg):
        if op == "load":
            return self.load(msg)
        if op == "setrec":
            return sys.setrecursionlimit(int(msg["n"]))
        target = self.handles[msg["h"]]
        if op == "call":
            args = [decode(a, self) for a in msg.get("args", ())]
            kwargs = {str(k): decode(v, self) for k, v in msg.get("kw", ())}
            before = [(i, a, _fingerprint(a)) for i, a in enumerate(args) if _type(a) in _MUTABLE]
            before += [(k, v, _fingerprint(v)) for k, v in kwargs.items() if _type(v) in _MUTABLE]
            result = target(*args, **kwargs)
            changed = [(key, value) for key, value, mark in before if mark is None or _fingerprint(value) != mark]
            return _CallResult(result, changed)
        if op == "get":
            return _getattr(target, msg["name"])
        if op == "set":
            return setattr(target, msg["name"], decode(msg["args"][0], self))
        if op == "del":
            return delattr(target, msg["name"])
        if op == "op":
            fn, arity = _OPS[msg["name"]]
            return fn(target, *[decode(a, self) for a in msg.get("args", ())][:arity])
        if op == "next":
            return _next_items(target, int(msg["n"]), self.pending)
        raise ValueError("unknown request %r" % (op,))

    def load(self, msg):
        """Run the program (and, after it, the tests' imports) as the module ``__solution__``; return its names:
        values, or references to what is not a value or is a container of over ``_NAME_VALUE_LIMIT`` items."""
        _address_space(managed=False)  # Python code runs in this process from now on: no way back up
        _apply_bans(msg.get("banned") or {})
        self.code = compile(msg["program"], "<completion>", "exec")
        if msg["mode"] == "stdio":
            self.base_rss = _peak_rss()
            return _Names()
        ns = {"__name__": SOLUTION_MODULE, "__builtins__": builtins}
        exec(self.code, ns)
        prelude = msg.get("prelude")
        if prelude:  # the tests' imports, seen by the program as in the official harnesses' single module
            try:
                exec(compile(prelude, "<test imports>", "exec"), ns)
            except Exception:  # noqa: BLE001 - e.g. a module the task bans: the judge has its own
                pass
        names = _Names()
        for name, value in list(ns.items()):
            if name.startswith("__"):
                continue
            size = len(value) if _type(value) in (list, tuple, dict, set, frozenset) else 0
            try:
                encoded = encode(value, self) if size <= _NAME_VALUE_LIMIT else _reference(value, self)
            except Unserializable:
                encoded = _reference(value, self)
            names.append([name, encoded])
        return names


def _worker(cmd_r, reply_w):
    """The worker's main loop: answer the judge's requests until it goes away."""
    builtins.exit, builtins.quit = _Quitter("exit"), _Quitter("quit")
    sys.setrecursionlimit(_DEFAULT_RECURSION_LIMIT)
    _ORIGINAL_STREAMS[0] = sys.stdout
    peer = _WorkerPeer(reply_w, cmd_r)
    while True:
        try:
            msg = _receive(cmd_r)
        except BaseException:  # noqa: BLE001 - the judge went away
            os._exit(0)
        try:
            reply = peer.serve(msg) if "q" in msg else {"e": {"desc": "RuntimeError: unexpected answer"}}
        except BaseException as exc:  # noqa: BLE001
            reply = {"e": _exception_info(exc, peer)}
        try:
            _send(reply_w, reply)
        except BaseException:  # noqa: BLE001
            os._exit(0)


def _peak_rss():
    """Peak resident memory of this process so far, bytes (``ru_maxrss``, kilobytes on Linux)."""
    try:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    except (ImportError, OSError, ValueError):
        return 0


def _memory_file(name):
    """A descriptor of a new file for a program's stdin or stdout: in memory (``memfd_create``, no path another
    process could open), else ``name.txt`` in the working directory."""
    try:
        return os.memfd_create(name, os.MFD_CLOEXEC)
    except (AttributeError, OSError):
        fd = os.open(name + ".txt", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        os.unlink(name + ".txt")
        return fd


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read_up_to(fd, n):
    chunks, size = [], 0
    while size < n:
        chunk = os.read(fd, min(1 << 20, n - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _program_files(text, files):
    """``(stdin, stdout)`` descriptors for one run of a program: ``text`` in a memory file, and an empty one. With
    ``files`` (``(input name, output name)``), the input is also written to that file and the output file removed."""
    data = text.encode()
    if files:
        with open(files[0], "wb") as f:
            f.write(data)
        try:
            os.unlink(files[1])
        except OSError:
            pass
    in_fd = _memory_file("stdin")
    _write_all(in_fd, data)
    os.lseek(in_fd, 0, os.SEEK_SET)
    return in_fd, _memory_file("stdout")


def _program_output(out_fd, limit, files):
    """``{"out", "truncated"?}`` of a run: the output file of ``files`` when the program wrote it, else what it
    printed to ``out_fd`` (closed here); at most ``limit`` bytes."""
    if files and os.path.isfile(files[1]):
        with open(files[1], "rb") as f:
            raw = f.read(limit + 1)
    else:
        os.lseek(out_fd, 0, os.SEEK_SET)
        raw = _read_up_to(out_fd, limit + 1)
    os.close(out_fd)
    reply = {"out": raw[:limit].decode("utf-8", errors="replace")}
    if len(raw) > limit:
        reply["truncated"] = True
    return reply


def _run_stdin(code, text, limit, files=None):
    """Run the compiled program as ``__main__`` with ``text`` on stdin; returns ``{"out", "truncated"?,
    "error"?, "rss"}`` (``rss``: the worker's peak resident memory, bytes). As a Python process would: buffered
    ``sys.stdin``/``sys.stdout`` (``sys.stdin.buffer.readline`` reads a line at a time), ``exit()`` and
    ``quit()``, and the threads the program started but did not join are waited for before its output is read.

    ``files``: ``(input name, output name)`` for problems that read and write files (Codeforces' file mode,
    code_contests' ``input_file``/``output_file``): the input is also that file in the working directory and, when
    the program writes the output file, that file is its output."""
    in_fd, out_fd = _program_files(text, files)
    saved_in, saved_out = os.dup(0), os.dup(1)
    os.dup2(in_fd, 0)
    os.dup2(out_fd, 1)
    os.close(in_fd)
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding="utf-8")
    reply = {}
    try:
        exec(code, {"__name__": "__main__", "__builtins__": builtins})
    except SystemExit as exc:
        if exc.code not in (None, 0):
            reply["error"] = "SystemExit(%r)" % (exc.code,)
    except BaseException as exc:  # noqa: BLE001
        reply["error"] = _describe(exc)
    threading = sys.modules.get("threading")
    if threading is not None:  # the interpreter waits for non-daemon threads at exit: so do we
        try:
            main = threading.main_thread()
            for thread in threading.enumerate():
                if thread is not main and not thread.daemon:
                    thread.join()
        except BaseException:  # noqa: BLE001
            pass
    try:
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001
        pass
    os.dup2(saved_out, 1)
    os.dup2(saved_in, 0)
    os.close(saved_in)
    os.close(saved_out)
    sys.stdout = sys.stderr
    reply.update(_program_output(out_fd, limit, files))
    reply["rss"] = _peak_rss()
    return reply


def _address_space(managed):
    """Set this process's address-space limit (``RLIMIT_AS``) for what it runs next: for a Java or JavaScript runtime
    (``managed``), up to the hard limit (the JVM and V8 reserve far more address space than they use; their
    writable memory stays under ``RLIMIT_DATA``); for anything else, the soft limit, made hard too, so that the code
    cannot raise it again."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        value = hard if managed else soft
        if (soft, hard) != (value, value):
            resource.setrlimit(resource.RLIMIT_AS, (value, value))
    except (ImportError, OSError, ValueError):
        pass


def _spawn(argv, stdin_fd, stdout_fd, stderr_fd, managed=False):
    """Fork and ``execvp`` ``argv`` (searched on ``PATH``) with the given descriptors as 0, 1 and 2 and no other;
    the child leads a process group of its own (so that a timeout kills what it started) and dies with this
    process. ``managed``: a Java or JavaScript runtime (see :func:`_address_space`). Returns its pid.

    Raises:
        OSError: the exec failed (``ENOENT``: the program or compiler is not installed).
    """
    err_r, err_w = os.pipe()  # close-on-exec: EOF on a successful exec, else the errno
    pid = os.fork()
    if pid == 0:
        try:
            os.close(err_r)
            os.setpgid(0, 0)
            ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            for target, fd in ((0, stdin_fd), (1, stdout_fd), (2, stderr_fd)):
                os.dup2(fd, target)
            _close_fds_except({err_w})
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            _address_space(managed)
            # One malloc arena: glibc reserves 64 MiB of address space per thread's arena, and a JVM's threads
            # would otherwise exhaust the sandbox's address-space limit before its program starts.
            os.execvpe(argv[0], argv, dict(os.environ, MALLOC_ARENA_MAX="1"))
        except OSError as exc:
            os.write(err_w, str(exc.errno or 0).encode())
        except BaseException:  # noqa: BLE001
            os.write(err_w, b"0")
        os._exit(127)
    os.close(err_w)
    data = _read_up_to(err_r, 32)
    os.close(err_r)
    if data:
        os.waitpid(pid, 0)
        errno = int(data) if data.isdigit() else 0
        raise OSError(errno, os.strerror(errno) if errno else "exec failed", argv[0])
    return pid


def _wait(pid, deadline):
    """Wait for child ``pid`` until ``deadline`` (monotonic seconds); past it, kill its process group. Returns
    ``(status, peak resident bytes, timed out)``."""
    pause = 0.0005
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() >= deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            _pid, status, usage = os.wait4(pid, 0)
            return status, usage.ru_maxrss * 1024, True
        time.sleep(pause)
        pause = min(pause * 2, 0.01)
    try:
        os.killpg(pid, signal.SIGKILL)  # what it left running in its group
    except OSError:
        pass
    return status, usage.ru_maxrss * 1024, False


def _exit_error(status):
    """A program's failure from its wait status, as a judge reports it; None for exit code 0."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = "signal %d" % number
        return "killed by %s" % (name,)
    code = os.WEXITSTATUS(status)
    return "exit status %d" % code if code else None


def _build(build, program, timeout):
    """Write ``program`` to ``build["source"]`` in the working directory and run the compiler (``build["compile"]``;
    none for interpreted languages), for at most ``timeout`` seconds. Returns ``{"ok": True}``, ``{"ok": False,
    "error": the compiler's message tail, "timeout"?: True}``, or ``{"ok": False, "missing": executable}`` when the
    toolchain is not installed, or ``{"ok": False, "forbidden": reason}`` when this sandbox may not create
    processes."""
    source = str(build["source"])
    if "/" in source or source.startswith("."):
        return {"ok": False, "error": "bad source file name %r" % (source,)}
    with open(source, "w", encoding="utf-8") as f:
        f.write(program)
    argv = [str(part) for part in build.get("compile") or ()]
    toolchain = [str(t) for t in build.get("toolchain") or ()]
    if not argv:
        return _check_toolchain(toolchain)
    out_fd = _memory_file("compiler")
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        pid = _spawn(argv, devnull, out_fd, out_fd, managed=bool(build.get("managed")))
    except OSError as exc:
        os.close(out_fd)
        if exc.errno == 2:  # ENOENT
            return {"ok": False, "missing": argv[0]}
        if exc.errno in (1, 11, 13):  # EPERM, EAGAIN, EACCES: no process may be created or run here
            return {"ok": False, "forbidden": "cannot run %s: %s" % (argv[0], exc.strerror)}
        raise
    finally:
        os.close(devnull)
    status, _rss, timed_out = _wait(pid, time.monotonic() + timeout)
    size = os.lseek(out_fd, 0, os.SEEK_END)
    os.lseek(out_fd, max(0, size - COMPILE_MESSAGE_LIMIT), os.SEEK_SET)
    message = _read_up_to(out_fd, COMPILE_MESSAGE_LIMIT).decode("utf-8", errors="replace")
    message = message.replace(os.getcwd() + "/", "")  # the sandbox's own paths say nothing to the reader
    os.close(out_fd)
    if timed_out:
        return {"ok": False, "timeout": True, "error": "compiling took longer than %.0f s" % timeout}
    failure = _exit_error(status)
    if failure is not None:
        return {"ok": False, "error": (message.strip() or failure)[-COMPILE_MESSAGE_LIMIT:]}
    return _check_toolchain(toolchain[1:])  # e.g. java after javac


def _check_toolchain(names):
    """``{"ok": True}`` when each executable of ``names`` is on ``PATH``, else ``{"ok": False, "missing": name}``."""
    for name in names:
        if not any(os.access(os.path.join(d, name), os.X_OK) for d in os.environ.get("PATH", "").split(":") if d):
            return {"ok": False, "missing": name}
    return {"ok": True}


def _run_native(argv, text, limit, timeout, files=None, managed=False):
    """Run the compiled program ``argv`` once with ``text`` on stdin, for at most ``timeout`` seconds; returns
    ``{"out", "truncated"?, "error"?, "timeout"?, "rss"}`` as :func:`_run_stdin` does (``rss``: the program's
    peak resident memory, bytes). Its stderr is the worker's (part of the completion's output). ``files`` as for
    :func:`_run_stdin`."""
    in_fd, out_fd = _program_files(text, files)
    try:
        pid = _spawn(argv, in_fd, out_fd, 2, managed)
    finally:
        os.close(in_fd)
    status, rss, timed_out = _wait(pid, time.monotonic() + timeout)
    reply = {"rss": rss}
    if timed_out:
        reply["timeout"] = True
    else:
        failure = _exit_error(status)
        if failure is not None:
            reply["error"] = failure
    reply.update(_program_output(out_fd, limit, files))
    return reply


# -- the judge (trusted) -----------------------------------------------------------------------------------------


class _Worker(_Peer):
    """The judge's side of the conversation with a worker: its pipes, deadlines, and how to kill it.

    ``pidfd`` (judge server): the worker is not our child; killing it through its pidfd and waiting for the pidfd
    to become readable means it and everything it started are gone. ``output``: its stdout/stderr pipe, drained
    while we wait for answers. ``cap``: a deadline (monotonic seconds) no request may pass: the completion's;
    ``deadline``: the current test's. Anything but a well-formed message from the worker (garbage the code wrote
    into a pipe, a closed pipe, an answer that does not decode) means the worker is dead to us: it is killed.
    """

    def __init__(self, pid, cmd_w, reply_r, pidfd=None, output=None):
        super().__init__(cmd_w, reply_r)
        self.pid, self.cmd_w, self.reply_r = pid, cmd_w, reply_r
        self.pidfd, self.output = pidfd, output
        self.cap = None
        self.deadline = None
        self.alive = True
        self.depth = 0

    def _send(self, msg):
        if not self.alive:
            raise _WorkerDied()
        try:
            _send(self.send_fd, msg)
        except Unserializable as exc:
            raise _Unserializable(str(exc)) from None
        except OSError:
            self.kill()
            raise _WorkerDied() from None

    def _read(self):
        deadline = self.deadline
        if self.cap is not None:
            deadline = self.cap if deadline is None else min(deadline, self.cap)
        try:
            return _receive(self.reply_r, deadline, self.output)
        except _Timeout:
            self.kill()
            raise
        except (_WorkerDied, OSError, ValueError, RecursionError, struct.error):
            self.kill()
            raise _WorkerDied() from None

    def request(self, msg, mutable=None, raw=False):
        self.depth += 1
        try:
            if self.depth > 200:
                raise RecursionError("calls between the tests and the program nested too deep")
            return super().request(msg, mutable, raw)
        finally:
            self.depth -= 1

    def _unwrap(self, answer, mutable):
        if "e" in answer or "u" in answer:
            return super()._unwrap(answer, mutable)  # raises the program's exception (rebuilt here)
        try:
            return super()._unwrap(answer, mutable)
        except (_Timeout, _WorkerDied, _Unserializable):
            raise
        except Exception:  # noqa: BLE001 - an answer that is not a value: the worker is not the harness any more
            self.kill()
            raise _WorkerDied() from None

    def serve(self, msg):
        """Callbacks of the worker on objects the judge lent (the tests' lambdas, iterators and objects): calls,
        iteration and the plain operations of :data:`_JUDGE_OPS`; attributes only of instances of classes the tests
        define, and never private ones. Nothing else of the judge is reachable."""
        op = msg.get("q")

        def run():
            target = self.handles[msg["h"]]
            if op == "call" and _callable(target):
                args = [decode(a, self) for a in msg.get("args", ())]
                kwargs = {str(k): decode(v, self) for k, v in msg.get("kw", ())}
                return target(*args, **kwargs)
            if op == "next":
                return _next_items(target, int(msg["n"]), self.pending)
            if op == "op" and msg.get("name") in _JUDGE_OPS:
                fn, arity = _OPS[msg["name"]]
                return fn(target, *[decode(a, self) for a in msg.get("args", ())][:arity])
            if op == "get" and _type(msg.get("name")) is str and not msg["name"].startswith("_"):
                if _getattr(_type(target), "__module__", None) == TESTS_MODULE:
                    return _getattr(target, msg["name"])
            raise TypeError("the tests' objects do not support %r here" % (msg.get("name") or op,))

        return self.answer(run, msg)

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


def _private_home(prefix):
    """A new directory of this sandbox's temporary directory for the code to work in, owned by ``nobody`` when this
    process is root (the code then runs as ``nobody``, see :func:`_confine`)."""
    import tempfile

    home = tempfile.mkdtemp(prefix=prefix)
    if os.geteuid() == 0:
        os.chown(home, NOBODY, NOBODY)
    return home


def _confine(home):
    """In the process that will run the code (a remote sandbox's worker or session): no-new-privs, so that no setuid
    program (``sudo``, ``su``) can give the code more privileges than it starts with; then, given a ``home``, work
    there and, when root, become ``nobody``. Exits (70) when no-new-privs cannot be set."""
    if ctypes.CDLL(None).prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        os._exit(70)
    if home is not None:
        os.chdir(home)
        if os.geteuid() == 0:
            os.setgroups([])
            os.setresgid(NOBODY, NOBODY, NOBODY)
            os.setresuid(NOBODY, NOBODY, NOBODY)


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
            _confine(home)
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


class _Missing:
    """Stands for a function the tests call that the program does not define."""

    def __init__(self, name):
        self.name = name

    def __call__(self, *args, **kwargs):
        raise NameError("the program does not define %s()" % self.name)


class _SysForTests(types.ModuleType):
    """``sys`` as the tests see it: the judge's own, but ``setrecursionlimit`` also applies to the program (the
    official harnesses run tests and program in one process)."""

    def __init__(self, worker):
        super().__init__("sys")
        self.__dict__["_worker"] = worker

    def __getattr__(self, name):
        return _getattr(sys, name)

    def setrecursionlimit(self, limit):
        sys.setrecursionlimit(max(int(limit), sys.getrecursionlimit()))
        self.__dict__["_worker"].request({"q": "setrec", "n": int(limit)})


def _test_builtins(worker):
    """The builtins of the test namespace: the judge's, with ``import sys`` giving :class:`_SysForTests`."""
    shim = _SysForTests(worker)
    real_import = builtins.__import__

    def import_(name, globals=None, locals=None, fromlist=(), level=0):
        if name == "sys" and level == 0:
            return shim
        return real_import(name, globals, locals, fromlist, level)

    table = dict(builtins.__dict__)
    table["__import__"] = import_
    return table


def _load(emit, worker, req, deadline):
    """Load the program in the worker; emit a load record and return None on failure, else its names (a dict of
    values and remote objects)."""
    msg = {"q": "load", "mode": req["mode"], "program": req["program"], "banned": req.get("banned"),
           "prelude": req.get("prelude") or ""}
    worker.deadline = deadline
    try:
        answer = worker.request(msg, raw=True)
    except _Timeout:
        emit({"load": "timeout", "error": "loading the program took longer than the test time limit"})
        return None
    except _WorkerDied:
        emit({"load": "error", "error": "the program ended the worker while loading"})
        return None
    if "e" in answer:
        info = answer["e"]
        emit({"load": "error", "error": str(info.get("desc") if _isinstance(info, dict) else info)[:500]})
        return None
    if "u" in answer:
        emit({"load": "error", "error": "loading the program: %s" % (str(answer["u"])[:200],)})
        return None
    try:
        return {_str(name): decode(value, worker) for name, value in answer["names"]}
    except Exception:  # noqa: BLE001 - not the harness's answer
        worker.kill()
        emit({"load": "error", "error": "the program ended the worker while loading"})
        return None


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


_CRASH = {"crash": "the program ended the test run early"}


def _run_tests(emit, worker, req, timeout, run_test):
    """Run ``run_test(i, test)`` for each test with its own deadline and emit its record; stop at the first timeout,
    crash or value that cannot cross, and at the first failure when ``stop_on_failure``."""
    n = 0
    stop_on_failure = req.get("stop_on_failure") is True
    for i, test in enumerate(req["tests"]):
        n += 1
        worker.deadline = time.monotonic() + timeout
        try:
            record = run_test(i, test)
        except _Timeout:
            emit({"i": i, "ok": False, "timeout": True})
            break
        except _WorkerDied:
            emit(_CRASH)
            break
        except _Unserializable as exc:
            emit({"i": i, "ok": False, "unserializable": str(exc)})
            break
        emit(record)
        if stop_on_failure and not record.get("ok"):
            break
    return n


def _failure(test, exc):
    """The error of a failed assert test: the exception, and the failing test's source when it says nothing."""
    text = _describe(exc)
    if _type(exc) is AssertionError and not str(exc):
        text = "AssertionError: " + " ".join(test.split())[:300]
    return text


def _judge_assert(emit, worker, req, timeout):
    names = _load(emit, worker, req, time.monotonic() + timeout)
    if names is None:
        return 0
    ns = {"__name__": TESTS_MODULE, "__builtins__": _test_builtins(worker)}
    try:
        exec(_compiled(req.get("trusted") or "", "<task prompt>"), ns)
    except BaseException as exc:  # noqa: BLE001 - a broken task, reported as such
        emit({"load": "error", "error": "task prompt failed: " + _describe(exc)})
        return 0
    trusted = set(ns)
    entry = req.get("entry")
    for name, value in names.items():
        if name not in trusted or name == entry:
            ns[name] = value
    if entry and entry not in names:
        ns[entry] = _Missing(entry)
    worker.deadline = time.monotonic() + timeout
    try:
        exec(_compiled(req.get("setup") or "", "<task tests>"), ns)
    except (_Timeout, _WorkerDied):
        emit({"load": "error", "error": "the task's test setup did not complete with this program"})
        return 0
    except BaseException as exc:  # noqa: BLE001 - setup that uses the program (MBPP's) failed with it
        emit({"load": "error", "error": "task test setup failed: " + _describe(exc)})
        return 0

    def run_test(i, test):
        try:
            exec(_compiled(test, "<test %d>" % i), ns)
            return {"i": i, "ok": True}
        except (_Timeout, _WorkerDied, _Unserializable):
            raise
        except BaseException as exc:  # noqa: BLE001
            return {"i": i, "ok": False, "error": _failure(test, exc)}

    return _run_tests(emit, worker, req, timeout, run_test)


def _short(value):
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def _judge_call(emit, worker, req, timeout):
    names = _load(emit, worker, req, time.monotonic() + timeout)
    if names is None:
        return 0
    func = names.get(req["func_name"])
    if func is None:
        func = _Missing(req["func_name"])
    expected = [decode(e) for e in req.get("expected", ())]

    def run_test(i, literal):
        arg = ast.literal_eval(literal)
        try:
            out = func(arg)
        except (_Timeout, _WorkerDied, _Unserializable):
            raise
        except BaseException as exc:  # noqa: BLE001
            return {"i": i, "ok": False, "error": _describe(exc)}
        if i < len(expected) and same_value(out, expected[i]):
            return {"i": i, "ok": True}
        want = _short(expected[i]) if i < len(expected) else "?"
        return {"i": i, "ok": False, "error": "returned %s, expected %s" % (_short(out), want)}

    return _run_tests(emit, worker, req, timeout, run_test)


def _judge_stdio(emit, worker, req, timeout):
    """Run the program once per test input; judge its stdout with the request's ``compare`` (a judge of
    :func:`same_output`, or ``{"checker": source}``: see :func:`_run_checker`). ``memory_limit_bytes``: a test whose
    run grew the worker's peak resident memory past it fails with "memory limit exceeded", as a judge measures it
    (the sandbox's own limit stays the hard cap). ``files``: ``[input name, output name]`` of file-mode problems."""
    build = req.get("build")
    if build:
        if not _build_in_worker(emit, worker, req, build):
            return 0
    elif _load(emit, worker, req, time.monotonic() + timeout) is None:
        return 0
    limit = int(req.get("output_limit", 1 << 20))
    expected = req.get("expected") or []
    compare = req.get("compare") or {}
    memory = req.get("memory_limit_bytes")
    msg = {"q": "stdio", "limit": limit, "files": req.get("files") or None, "timeout": timeout}

    def run_test(i, text):
        if build:  # the worker times the program itself and kills its process group; this is the backstop
            worker.deadline += 1.0
        try:
            reply = worker.request(dict(msg, input=text))
        except (_Timeout, _WorkerDied, _Unserializable):
            raise
        except BaseException as exc:  # noqa: BLE001 - e.g. the scratch directory the program filled
            return {"i": i, "ok": False, "error": _describe(exc)}
        if _type(reply) is not dict or _type(reply.get("out")) is not str:
            worker.kill()
            raise _WorkerDied()
        if reply.get("timeout"):
            raise _Timeout()
        if reply.get("truncated"):
            return {"i": i, "ok": False, "error": "the output went past the limit of %d bytes" % limit}
        rss = reply.get("rss")
        if memory and _type(rss) is int and rss > memory:
            return {"i": i, "ok": False, "error": "memory limit exceeded: %d MiB used, limit %d MiB"
                    % (rss >> 20, memory >> 20)}
        want = expected[i] if i < len(expected) else None
        if want is not None and "error" not in reply:
            if "checker" in compare:
                verdict = _run_checker(compare, text, reply["out"], want, worker)
                if verdict is not True:
                    return dict(verdict, i=i)
                return {"i": i, "ok": True}
            if same_output(reply["out"], want, compare):
                return {"i": i, "ok": True}
        record = {"i": i, "ok": False}
        if "error" in reply:
            record["error"] = str(reply["error"])[:500]
        else:
            shown = normalize_stdout(want) if want is not None else "?"
            record["error"] = "printed %s, expected %s" % (_short(normalize_stdout(reply["out"])), _short(shown))
        return record

    return _run_tests(emit, worker, req, timeout, run_test)


def _build_in_worker(emit, worker, req, build):
    """Have the worker write and compile a program in another language (see :func:`_build`); emit the load record
    of a failure (``compile_error``, or ``unsupported`` when the toolchain is missing or processes are forbidden)
    and return False, else True."""
    compile_timeout = float(req.get("compile_timeout_s") or 30.0)
    worker.deadline = time.monotonic() + compile_timeout + 5.0
    title = str(build.get("title") or build.get("language"))
    try:
        reply = worker.request({"q": "build", "build": build, "program": req["program"], "timeout": compile_timeout})
    except _Timeout:
        emit({"load": "compile_error", "error": "compiling took longer than %.0f s" % compile_timeout})
        return False
    except _WorkerDied:
        emit({"load": "error", "error": "the worker ended while compiling"})
        return False
    except BaseException as exc:  # noqa: BLE001 - e.g. the scratch directory is full
        emit({"load": "error", "error": "writing the program: " + _describe(exc)})
        return False
    if _type(reply) is not dict:
        worker.kill()
        emit({"load": "error", "error": "the worker ended while compiling"})
        return False
    if reply.get("missing"):
        emit({"load": "unsupported", "error": "the sandbox has no %s toolchain (%s not found): install it there (%s)"
              % (title, reply["missing"], build.get("install") or "see the docs")})
        return False
    if reply.get("forbidden"):
        emit({"load": "unsupported", "error": "%s programs need to start processes, which this sandbox forbids "
              "(%s); run with namespaces or a pids cgroup, or on a remote backend" % (title, reply["forbidden"])})
        return False
    if not reply.get("ok"):
        emit({"load": "compile_error", "error": str(reply.get("error") or "compilation failed")})
        return False
    return True


# -- checker programs (special judges) -----------------------------------------------------------------------------

#: File names a checker gets, by convention: testlib's ``checker input output answer`` (exit code 0 accepts) and
#: open-r1's ``checker.py input.txt correct_output.txt solution_output.txt`` (prints ``1`` to accept).
_CHECKER_FILES = {
    "testlib": ("input.txt", "output.txt", "answer.txt"),
    "open-r1": ("input.txt", "correct_output.txt", "solution_output.txt"),
}
#: Seconds a checker may run on one test.
CHECKER_TIMEOUT_S = 10.0


def _close_fds_except(keep):
    """Close every descriptor from 3 up but those in ``keep``."""
    try:
        import resource

        top = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):
        top = 65536
    if top < 0 or top > (1 << 20):
        top = 1 << 20
    low = 3
    for fd in sorted(f for f in keep if f >= 3):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, top)


def _in_child(fn, deadline, keep=()):
    """Run ``fn(emit)`` in a fork of this (trusted) process, so that task code (a checker, pytest) cannot change a
    long-lived judge; returns the list of records it emitted, ``{"child_error": ...}`` last when it failed. Raises
    :class:`_Timeout` past ``deadline`` (monotonic seconds), after killing it.

    The child keeps only its record pipe and the descriptors in ``keep``: never the judge's result channel or its
    connection to the host, so that even task code that evaluates what the program printed (a checker calling
    ``eval``) cannot write the judge's records."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            _close_fds_except({w, *keep})
            ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        except (OSError, AttributeError):
            pass
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        try:
            fn(lambda record: _send(w, record))
            _send(w, {"end": True})
        except BaseException as exc:  # noqa: BLE001
            try:
                _send(w, {"child_error": _describe(exc)})
            except BaseException:  # noqa: BLE001
                pass
        os._exit(0)
    os.close(w)
    records = []
    try:
        while True:
            try:
                record = _receive(r, deadline)
            except _WorkerDied:
                records.append({"child_error": "it ended early"})
                break
            if record.get("end"):
                break
            records.append(record)
    finally:
        os.close(r)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
    return records


def _check_in_child(source, argv_files, texts, seconds, out_w):
    """The checker's process (a fork of the judge): stdout is ``out_w``, the verdict is the exit status. Never
    returns."""
    try:
        os.dup2(out_w, 1)
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 2)
        _close_fds_except(())
        ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        import resource

        cpu = max(1, int(seconds) + 1)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    except BaseException:  # noqa: BLE001
        os._exit(3)
    files = dict(zip(argv_files, texts))
    real_open = io.open

    def open_(file, mode="r", *args, **kwargs):
        if file in files and not any(c in mode for c in "wax+"):
            data = files[file]
            return io.BytesIO(data.encode()) if "b" in mode else io.StringIO(data)
        return real_open(file, mode, *args, **kwargs)

    builtins.open = io.open = open_
    sys.argv = ["checker", *argv_files]
    sys.stdin = io.StringIO("")
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", write_through=True)
    code = 0
    try:
        exec(_compiled(source, "<checker>"), {"__name__": "__main__", "__builtins__": builtins})
    except SystemExit as exc:
        code = exc.code if _type(exc.code) is int else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - a checker that crashes rejects (exit code 1, as Python's)
        code = 1
    try:
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001
        pass
    os._exit(code & 0xFF)


def _run_checker(compare, input_text, output, answer, worker):
    """Judge one output with the task's checker program (a special judge), run in a fork of the judge: it never
    shares a process with the program, and its three files exist only in its memory (``open`` of the three names
    it is given reads them), so nothing the program left behind can change them. Its verdict is its exit status and
    its stdout, nothing else: the fork keeps no descriptor of the judge (not its result channel, not its connection
    to the host), so even a checker that runs what the program printed (``eval``) cannot write the judge's records.

    ``compare``: ``{"checker": source, "language": "python", "convention": "testlib" | "open-r1"}``. testlib:
    exit code 0 accepts, 3 (``_fail``) means the checker itself failed; open-r1: accepted when it exits cleanly and
    prints ``1``. Returns True, or a failing record (``{"ok": False, "error"}``, or ``{"ok": False, "invalid"}``
    when the checker failed or timed out: the task's fault, not the program's)."""
    convention = compare.get("convention") or "testlib"
    names = _CHECKER_FILES.get(convention, _CHECKER_FILES["testlib"])
    texts = (input_text, answer, output) if convention == "open-r1" else (input_text, output, answer)
    seconds = CHECKER_TIMEOUT_S
    deadline = time.monotonic() + seconds
    if worker.cap is not None:
        deadline = min(deadline, worker.cap)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        _check_in_child(compare["checker"], names, texts, seconds, w)
    os.close(w)
    printed = bytearray()
    timed_out = False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([r], [], [], left)
            if not ready:
                continue
            chunk = os.read(r, 65536)
            if not chunk:
                break
            printed += chunk
            del printed[:-65536]
    finally:
        os.close(r)
        if timed_out:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _, status = os.waitpid(pid, 0)
    if timed_out:
        if worker.cap is not None and time.monotonic() >= worker.cap:
            raise _Timeout()
        return {"ok": False, "invalid": "the checker ran past %.0f s" % seconds}
    text = printed.decode("utf-8", errors="replace")
    if os.WIFSIGNALED(status):
        return {"ok": False, "invalid": "the checker was killed by signal %d" % os.WTERMSIG(status)}
    code = os.WEXITSTATUS(status)
    if convention == "open-r1":
        if code == 0 and text.strip() == "1":
            return True
        return {"ok": False, "error": "rejected by the checker: it said %s (exit code %d)"
                % (_short(text.strip()[-200:]), code)}
    if code == 0:
        return True
    if code == 3:
        return {"ok": False, "invalid": "the checker failed (exit code 3): %s" % _short(text[-300:])}
    return {"ok": False, "error": "rejected by the checker (exit code %d): %s" % (code, _short(text.strip()[-200:]))}


# -- function calls with JSON arguments (APPS/TACO call-based, LiveCodeBench functional) --------------------------


def _apps_key_fix(value):
    """APPS's ``run_test``: JSON forces dict keys to strings; a dict whose keys are all integers gets them back."""
    if _type(value) is dict:
        try:
            return {int(k): v for k, v in value.items()}
        except (TypeError, ValueError):
            return value
    return value


def _same_call_output(out, want, rule):
    """Whether a call's return value ``out`` matches the JSON-decoded ``want`` by the dataset's rule.

    ``lcb`` (LiveCodeBench's ``grade_call_based``): a tuple counts as a list, then ``==``. ``apps`` (APPS/TACO's
    ``run_test``): the same, or ``out`` equals ``want[0]`` when ``want`` is a non-empty list (expected values are
    often wrapped in a list), or a list of tuples equals ``want[0]`` as a list of lists. ``==`` runs here, on
    decoded values: a remote object never equals a value."""
    if _type(out) is tuple:
        out = list(out)
    try:
        if out == want:
            return True
        if rule != "apps":
            return False
        if _type(want) is list and want:
            if out == want[0]:
                return True
            if _type(out) is list and out and _type(out[0]) is tuple and [list(x) for x in out] == want[0]:
                return True
    except Exception:  # noqa: BLE001
        return False
    return False


def _judge_function(emit, worker, req, timeout):
    """Call ``func_name`` with each test's JSON argument list and compare with the JSON expected value. When the
    program defines ``class Solution`` (LeetCode's form), the function is a method of one instance of it, as in
    LiveCodeBench's and APPS's harnesses."""
    deadline = time.monotonic() + timeout
    names = _load(emit, worker, req, deadline)
    if names is None:
        return 0
    name = req["func_name"]
    rule = req.get("rule") or "lcb"
    func = None
    solution = names.get("Solution")
    if _type(solution) is _Remote and "class Solution" in req["program"]:
        worker.deadline = deadline
        try:
            func = _getattr(solution(), name)
        except (_Timeout, _WorkerDied, _Unserializable):
            emit({"load": "error", "error": "Solution() did not complete"})
            return 0
        except BaseException as exc:  # noqa: BLE001
            emit({"load": "error", "error": "Solution(): " + _describe(exc)})
            return 0
    if func is None:
        func = names.get(name)
    if func is None or not _callable(func):
        func = _Missing(name)
    expected = req.get("expected") or []

    def run_test(i, arguments):
        args = json.loads(arguments)
        if rule == "apps" and args:
            args = [_apps_key_fix(args[0]), *args[1:]]
        want = json.loads(expected[i]) if i < len(expected) else None
        if rule == "apps":
            want = _apps_key_fix(want)
            if _type(want) is list and len(want) == 1:
                want = [_apps_key_fix(want[0])]
        try:
            out = func(*args)
        except (_Timeout, _WorkerDied, _Unserializable):
            raise
        except BaseException as exc:  # noqa: BLE001
            return {"i": i, "ok": False, "error": _describe(exc)}
        if i < len(expected) and _same_call_output(out, want, rule):
            return {"i": i, "ok": True}
        return {"i": i, "ok": False, "error": "returned %s, expected %s" % (_short(out), _short(want))}

    return _run_tests(emit, worker, req, timeout, run_test)


# -- pytest files (KodCode) ------------------------------------------------------------------------------------------


def _import_pytest():
    """Import pytest in the judge: from its path, else from the copy the local backend made readable
    (``$TRL_SANDBOX_JUDGE_PATH``), else from the interpreter's site-packages (the local backend starts Python without
    them: the program never sees them, the judge may). Raises ImportError."""
    try:
        import pytest  # noqa: F401
    except ImportError:
        import site

        paths = [os.environ.get("TRL_SANDBOX_JUDGE_PATH") or "", *site.getsitepackages()]
        for path in paths:
            if path and path not in sys.path:
                sys.path.append(path)
        import pytest  # noqa: F401
    return sys.modules["pytest"]


#: A read-only file pytest is pointed at, in the local backend's copy of pytest (see _pytest_in_child).
JUDGE_ANCHOR = "test_solution.py"
#: The worker's home when ``python harness.py`` runs as root (the worker runs as ``nobody`` there).
_WORKER_HOME = [None]


def _program_directory():
    """A directory the judge may write that the program may read: the worker's home (``python harness.py`` as
    root), the fork server's worker slot (``w`` under the judge's directory), else the shared working directory."""
    for path in (_WORKER_HOME[0], os.path.join(os.getcwd(), "w"), os.getcwd()):
        if path and os.path.isdir(path) and os.access(path, os.W_OK):
            return path
    return None


def _pytest_key(nodeid):
    """The test function a pytest item belongs to: its node id after the file, without parameters."""
    key = nodeid.split("::", 1)[-1]
    return key.split("[", 1)[0]


def _pytest_in_child(emit, worker, req, names, timeout):
    """pytest's side of :func:`_judge_pytest`, in a fork of the judge. The test file never exists on disk: pytest is
    pointed at this harness's own file (read-only to everything in the sandbox) and a plugin gives it, as that
    file's module, a module made from the test source in memory. A program that watches the scratch directories
    finds no test file to read, nor one to replace."""
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    os.environ.pop("PYTEST_ADDOPTS", None)
    try:
        pytest = _import_pytest()
    except ImportError as exc:
        emit({"unsupported": "pytest cannot be imported in the sandbox (pytest-file tasks need it): %s" % (exc,)})
        return
    solution = types.ModuleType(req.get("module") or "solution")
    solution.__dict__.update(names)
    sys.modules[solution.__name__] = solution
    source = req["setup"]
    anchor = os.path.join(os.environ.get("TRL_SANDBOX_JUDGE_PATH") or "/nonexistent", JUDGE_ANCHOR)
    if not os.path.isfile(anchor):
        anchor = os.path.abspath(__file__)
    # tmp_path and tempfile: a directory of the program's (it reads the files a test writes there), as its user.
    shared = _program_directory()
    if os.geteuid() == 0 and _WORKER_HOME[0] is not None:
        os.setgroups([])
        os.setresgid(NOBODY, NOBODY, NOBODY)
        os.setresuid(NOBODY, NOBODY, NOBODY)
    basetemp = None
    if shared is not None:
        import tempfile

        basetemp = tempfile.mkdtemp(prefix=".pytest-", dir=shared)
        os.environ["TMPDIR"] = basetemp
        tempfile.tempdir = None
    os.chdir(os.path.dirname(anchor))  # pytest collects from here (a fork: the judge's directory is unchanged)

    class TestFile(pytest.Module):
        def _getobj(self):
            module = types.ModuleType("test_solution")
            module.__file__ = anchor
            sys.modules[module.__name__] = module
            exec(compile(source, "test_solution.py", "exec"), module.__dict__)
            return module

    keys = {key: i for i, key in enumerate(req["tests"])}
    outcome = {}

    class Plugin:
        @pytest.hookimpl(tryfirst=True)
        def pytest_pycollect_makemodule(self, module_path, parent):
            return TestFile.from_parent(parent, path=module_path)

        def pytest_runtest_setup(self, item):
            worker.deadline = time.monotonic() + timeout

        def pytest_runtest_makereport(self, item, call):
            key = keys.get(_pytest_key(item.nodeid))
            if key is None:
                return
            state = outcome.setdefault(key, {"ok": True, "ran": False})
            if call.when == "call":
                state["ran"] = True
            if call.excinfo is not None:
                state["ok"] = False
                exc = call.excinfo.value
                if _isinstance(exc, _Timeout):
                    state["timeout"] = True
                elif _isinstance(exc, _WorkerDied):
                    state["crash"] = True
                    state["error"] = "the program ended the worker"
                elif "error" not in state:
                    state["error"] = _describe(exc)[:500]

    argv = [anchor, "-q", "--capture=sys", "-p", "no:cacheprovider", "-p", "no:stepwise", "--noconftest", "-c", os.devnull,
            "--rootdir", os.path.dirname(anchor), "--confcutdir", os.path.dirname(anchor)]
    if basetemp is not None:
        argv += ["--basetemp", os.path.join(basetemp, "t")]
    if req.get("stop_on_failure") is True:
        argv.append("-x")
    saved = sys.stdout
    report = sys.stdout = io.StringIO()  # pytest's report is not the result channel
    try:
        pytest.main(argv, plugins=[Plugin()])
    finally:
        sys.stdout = saved
        if basetemp is not None:
            import shutil

            shutil.rmtree(basetemp, ignore_errors=True)
    if not outcome:  # nothing ran: the test file did not import (the program lacks a name it imports...)
        lines = [line for line in report.getvalue().splitlines() if line.startswith("E ")]
        reason = lines[-1][1:].strip() if lines else "no test ran"
        for i in range(len(req["tests"])):
            emit({"i": i, "ok": False, "error": "the tests did not run: %s" % (reason[:400],)})
        return
    for i in range(len(req["tests"])):
        state = outcome.get(i)
        if state is None:
            continue
        record = {"i": i, "ok": state["ok"] and state["ran"]}
        if state.get("timeout"):
            record["timeout"] = True
        elif not state["ran"] and state["ok"]:
            record["error"] = "skipped"
        elif "error" in state:
            record["error"] = state["error"]
        emit(record)
        if state.get("crash"):
            emit(_CRASH)
            break


def _judge_pytest(emit, worker, req, timeout):
    """KodCode: run the task's pytest file against the program. pytest runs in a fork of the judge (trusted), the
    program in the worker; the file's ``from solution import f`` gets the program's names (a module made of them),
    so each test's verdict is decided and recorded here: ``os._exit(0)`` in the program ends the worker, and that
    test and the ones after it fail. Each test function is one test (all its parameter sets must pass); a skipped
    test does not pass. No ``conftest.py``, ini file or plugin of the scratch directory is ever loaded, and plugins
    installed in the interpreter are not auto-loaded."""
    names = _load(emit, worker, req, time.monotonic() + timeout)
    if names is None:
        return 0
    try:
        _import_pytest()  # here, once: a judge server's later requests fork with pytest already loaded
    except ImportError:
        pass
    keep = [fd for fd in (worker.cmd_w, worker.reply_r, worker.pidfd,
                          worker.output.fd if worker.output is not None else None) if fd is not None]
    records = _in_child(lambda out: _pytest_in_child(out, worker, req, names, timeout), worker.cap or
                        time.monotonic() + 3600, keep=keep)
    for record in records:
        if "unsupported" in record:
            emit({"load": "unsupported", "error": record["unsupported"]})
            return 0
        if "child_error" in record:  # pytest itself failed here: not the program's doing
            emit({"load": "unsupported", "error": "pytest failed in the judge: %s" % (record["child_error"],)})
            return 0
        emit(record)
    return len(req["tests"])


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
    func = ns.get(name, _getattr(builtins, name, None))
    if not _callable(func):
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


_MODES = {"assert": _judge_assert, "call": _judge_call, "stdio": _judge_stdio, "reference": _judge_reference,
          "function": _judge_function, "pytest": _judge_pytest}


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
    """Reference mode in a fork of the judge server (:func:`_in_child`), so that task code cannot change the
    long-lived server. Returns the records; raises _Timeout past ``deadline``."""

    def run(emit):
        emit({"done": _judge_reference(emit, None, req, timeout)})

    records = []
    for record in _in_child(run, deadline):
        if record.get("child_error") == "it ended early":
            records.append({"crash": "the reference run ended early"})
        elif "child_error" in record:
            records.append({"load": "error", "error": record["child_error"]})
        else:
            records.append(record)
    return records


def _judge_request(header, request, spawn):
    """One request of :func:`serve`: returns (status dict, records, worker output)."""
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
    finally:
        sys.setrecursionlimit(recursion_limit)  # a test may have raised it
        sys.stdout = _ORIGINAL_STREAMS[0]
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
    _ORIGINAL_STREAMS[0] = sys.stdout
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
    _forget_stdin_file()
    try:
        ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    home = None
    if os.geteuid() == 0 or not os.access(".", os.W_OK):
        # A directory of the worker's own (removed at the end): a compiled program's files, or anything the code
        # writes, go there; as root, the worker runs as nobody in it.
        home = _private_home("trl-sandbox-worker-")
        _WORKER_HOME[0] = home
    out_r, out_w = os.pipe()
    worker = _spawn_worker(result_fd, out_r, out_w, home)  # before the request is read
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    _ORIGINAL_STREAMS[0] = sys.stdout

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


# -- interpreter sessions (trl_sandbox.environment.CodeEnvironment) ----------------------------------------------


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

    Protocol (``python harness.py session``), JSON lines (one object per line, ASCII, so that it crosses text streams
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
    import ast

    request_fd, reply_fd = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.set_inheritable(request_fd, False)
    os.set_inheritable(reply_fd, False)
    sys.stdin = io.StringIO("")
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    builtins.exit, builtins.quit = _Quitter("exit"), _Quitter("quit")

    def on_alarm(_signum, _frame):
        raise _CellTimeout()

    signal.signal(signal.SIGALRM, on_alarm)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    requests = io.open(request_fd, "rb", buffering=1 << 16, closefd=False)
    _write_all(reply_fd, json.dumps({"ready": True, "isolated": bool(isolated)}).encode() + b"\n")
    while True:
        line = requests.readline()
        if not line.endswith(b"\n"):
            os._exit(0)
        req = json.loads(line)
        if req.get("close"):
            os._exit(0)
        limit = int(req.get("limit", 1 << 16))
        out_fd = _memory_file("cell")
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
        raw = _read_up_to(out_fd, limit)
        os.close(out_fd)
        reply["out"] = raw.decode("utf-8", errors="replace")
        reply["truncated"] = size > limit
        _write_all(reply_fd, json.dumps(reply).encode() + b"\n")


def _own_sandbox():
    """True when this process runs where the backend isolates each execution by itself (the local backend: a fresh,
    writable scratch directory that is not the harness's own, an unprivileged uid); False on a remote backend, whose
    commands all run in the sandbox's one working directory, as the sandbox's user."""
    here = os.path.dirname(os.path.abspath(__file__))
    return (os.geteuid() != 0 and os.access(".", os.W_OK)
            and os.path.realpath(os.getcwd()) != os.path.realpath(here))


#: Where an unprivileged process can leave files in a sandbox (world-writable directories).
_SHARED_TEMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/var/lock")


def _sweep(uid):
    """Remove what processes of ``uid`` left in this sandbox: kill every process of that uid (through a helper that
    takes that uid, so the signal reaches nothing else), then remove the files and directories that uid owns in the
    world-writable temporary directories (:data:`_SHARED_TEMP_DIRS` and the world-writable directories in them).
    Runs as root."""
    import shutil
    import tempfile

    def alive():
        # /proc/<pid>/status, not the owner of /proc/<pid>: a process that made itself non-dumpable shows as root's
        found = 0
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    with open("/proc/%s/status" % name, "rb") as f:
                        for line in f:
                            if line.startswith(b"State:") and line.split()[1] in (b"Z", b"X"):
                                break  # a zombie: dead already, reaped by its parent whenever it wants
                            if line.startswith(b"Uid:"):
                                found += uid in [int(x) for x in line.split()[1:]]
                                break
                except (OSError, ValueError):
                    pass
        return found

    deadline = time.monotonic() + 5.0
    while True:
        pid = os.fork()
        if pid == 0:
            try:
                os.setgroups([])
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
                for _ in range(20):  # a fork bomb may add processes between two rounds
                    try:
                        os.kill(-1, signal.SIGKILL)  # every process this uid may signal, this one excepted
                    except OSError:
                        break
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        if not alive() or time.monotonic() > deadline:
            break
        time.sleep(0.01)

    def clear(directory):
        # what uid owns goes; a world-writable directory of another owner (/tmp/.X11-unix) is searched too
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if st.st_uid == uid:
                if stat.S_ISDIR(st.st_mode):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    try:
                        os.unlink(entry.path)
                    except OSError:
                        pass
            elif stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_IWOTH:
                clear(entry.path)

    for directory in {os.path.realpath(d) for d in (*_SHARED_TEMP_DIRS, tempfile.gettempdir())}:
        clear(directory)


def _supervised_session():
    """An interpreter session on a remote backend, where one sandbox serves one session after another: this process
    stays as a supervisor and forks the session (:func:`session_main`) into a directory of its own, with
    no-new-privs. As root (a remote sandbox's default user), the session runs as ``nobody``, and the supervisor
    sweeps what ``nobody`` left (:func:`_sweep`: processes, daemons included, and files in the temporary
    directories) before the session starts and after it ends, so that no rollout sees another's state: the session
    says ``isolated``. As another user it cannot sweep: the session says it is not isolated, and the host does not
    give its sandbox to another session. The supervisor holds stdout until it is done, so the host sees the command
    end only after the sweep."""
    import shutil

    root = os.geteuid() == 0
    if root:
        _sweep(NOBODY)
    home = _private_home("trl-sandbox-session-")
    pid = os.fork()
    if pid == 0:
        try:
            _confine(home)
            os.environ["HOME"] = os.environ["TMPDIR"] = home
            for name in list(os.environ):
                if name.startswith("TRL_SANDBOX_"):
                    del os.environ[name]
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
    if root:
        _sweep(NOBODY)
    shutil.rmtree(home, ignore_errors=True)
    os._exit(0)


if __name__ == "__main__":
    if sys.argv[1:] == ["session"]:
        if _own_sandbox():
            session_main()
        else:
            _supervised_session()
    else:
        main()
