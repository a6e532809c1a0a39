"""Values between the judge and the worker: encoded with their exact types, everything else lent as a reference.

Values cross with exact types (:func:`encode`): ``None``, ``bool``, ``int`` of any size, ``float``, ``complex``,
``str``, ``bytes``, ``bytearray``, ``list``, ``tuple``, ``dict``, ``set``, ``frozenset``, ``range``, ``Fraction``,
``Decimal``, ``Counter``, ``OrderedDict``, ``defaultdict``, ``deque``, namedtuples, dict views, ``datetime`` values,
enum members of standard library enums, builtin types by name, ``pathlib`` paths, compiled ``re`` patterns, numpy
arrays and scalars with their dtype, and pandas ``Series``, ``DataFrame`` and ``Index`` with their dtypes (their data,
rebuilt by the receiver). The receiver decodes them into objects of those types (:func:`decode`), so equality is
decided by trusted code. A mutable value (``list``, ``dict``, ``set``, ``bytearray``, ``deque``, ``Counter``,
``OrderedDict``, ``defaultdict``, a numpy array) crosses once, as a *twin* (``["T", id]``, see :mod:`.twins`): the
two sides keep their objects alike after every message and a twin crosses back as the same object, so identity,
aliasing, in-place changes at any depth and containers that contain themselves behave as in one process. Everything
else (functions, classes, instances of the program's classes, generators, ``re.Match``, a ``typing.NamedTuple`` with
methods...) crosses as a reference, which the receiver sees as a :class:`.remote.Remote`. Exceptions cross with
their class and their attributes: a builtin or standard library exception as itself, an exception class the program
defines as a class the judge makes for it (so ``except TheirError`` in a test works).

**Nothing the model's code controls decides a comparison with a value**: a remote object is never equal to a value
(its ``__eq__`` is consulted only against another remote object), so an object with a rigged ``__eq__``, or a
subclass of ``int``/``str`` that overrides it, cannot pass ``== expected``. A value that still cannot cross (nested
deeper than :data:`_MAX_DEPTH`, a message over 64 MiB) raises :class:`.base.Unserializable` naming its type and why
(its ``kind``). Whose doing that is, the judge decides (see :class:`.processes.Worker`): a value of the program's
fails its test; one of the tests' own ends the run with an ``unserializable`` record (a None reward), never a wrong
answer.
"""

import builtins
import collections
import datetime
import decimal
import fractions
import importlib
import sys
import types

from .base import (
    SOLUTION_MODULE,
    TESTS_MODULE,
    Unserializable,
    _callable,
    _getattr,
    _isinstance,
    _type,
)
from . import exceptions
from .arrays import decode_array_like, decode_numpy_scalar, encode_array_like, encode_numpy_scalar, numpy_scalar_types
from .remote import Remote
from .twins import is_twin, is_twin_type

#: Containers nested deeper than this do not cross.
_MAX_DEPTH = 200
#: Integers of more bits than this cross as hexadecimal text (JSON would need int -> str, limited to 4300 digits).
_BIG_INT_BITS = 12000
#: Module-level containers of the program larger than this cross as remote objects, not by value.
NAME_VALUE_LIMIT = 10000

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


#: pathlib's classes, which cross as themselves (``tmp_path / "f.txt"``).
_PATHS = frozenset({"PurePath", "PurePosixPath", "PureWindowsPath", "Path", "PosixPath"})
#: ``re.Pattern`` (a compiled pattern crosses as its pattern and flags, compiled again by the receiver).
_PATTERN = _type(__import__("re").compile(""))
_PLAIN_NAMEDTUPLE = frozenset(collections.namedtuple("_T", "a").__dict__) | {
    "__orig_bases__", "__annotations__", "__annotate__", "__doc__", "__module__", "__qualname__", "_field_defaults",
    "__static_attributes__", "__firstlineno__"}
_OWN_METHODS = {}


def _has_own_methods(cls):
    """Whether a namedtuple class defines more than a namedtuple has (a ``typing.NamedTuple`` with methods or
    properties): such a value crosses as a reference, so that its methods stay its own."""
    found = _OWN_METHODS.get(cls)
    if found is None:
        fields = set(cls._fields)
        found = _OWN_METHODS[cls] = any(_type(name) is str and name not in _PLAIN_NAMEDTUPLE and name not in fields
                                        for name in cls.__dict__)
        if len(_OWN_METHODS) > _CLASS_CACHE_LIMIT:
            _OWN_METHODS.clear()
    return found


def _is_namedtuple(value):
    cls = _type(value)
    return (
        cls.__bases__ == (tuple,)
        and _type(_getattr(cls, "_fields", None)) is tuple
        and cls.__eq__ is tuple.__eq__
        and cls.__hash__ is tuple.__hash__
    )


def encode(value, peer=None, depth=0, path=None):
    """Encode ``value`` as JSON-able data with its exact type (the types are in the module docstring).

    A mutable value becomes a twin of ``peer``'s (``["T", id]``, its contents in the message's ``"twn"``: see
    :mod:`.twins`). Everything else becomes a reference: ``["R", handle, type name, callable, value base, kind]``
    to an object ``peer`` lends (see :class:`.peer.Peer`), or ``["H", handle]`` for an object the other side lent.
    Without ``peer``, only values encode (mutable ones as plain copies).

    Raises:
        Unserializable: nested deeper than ``_MAX_DEPTH``, or (without ``peer``) a container that contains itself
            or an object that is not a value.
    """
    if depth > _MAX_DEPTH:
        raise Unserializable("a %s nested deeper than %d levels" % (_type_name(value), _MAX_DEPTH), "depth")
    t = _type(value)
    if t is Remote:  # before anything that would read an attribute of it (a request to the other side)
        return as_reference(value, peer)
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
    if is_twin_type(t):
        if peer is None or not is_twin(value, t):  # a copy (a large one: see .twins.is_twin)
            return _encode_contents(value, t, peer, depth, path)
        twins = peer.twins
        tid = twins.find(value)
        if tid is None:
            tid, slot = twins.add(value)
            try:
                contents = _encode_contents(value, t, peer, depth, path)
            except BaseException:
                twins.discard(slot)
                raise
            twins.added(slot, contents)
        return ["T", tid]
    if t is tuple:
        return _encode_contents(value, t, peer, depth, path)
    if t is frozenset:
        return ["FS", _items(value, peer, depth, path)]
    if t is complex:
        return ["c", value.real, value.imag]
    if t is range:
        return ["r", value.start, value.stop, value.step]
    if t is fractions.Fraction:
        return ["Q", encode(value.numerator), encode(value.denominator)]
    if t is decimal.Decimal:
        return ["D", str(value)]
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
        if peer is not None and _has_own_methods(t):  # a NamedTuple with methods: itself, as a reference
            return as_reference(value, peer)
        return ["nt", t.__name__, list(t._fields), _items(value, peer, depth, path)]
    if t.__module__ == "pathlib" and t.__name__ in _PATHS:
        return ["P", t.__name__, str(value)]
    if t is _PATTERN:
        return ["re", encode(value.pattern, peer, depth + 1), value.flags]
    if _isinstance(value, types.ModuleType):
        name = _getattr(value, "__name__", None)
        if _type(name) is str:
            return ["M", name, as_reference(value, peer)]
    if _isinstance(value, type) and issubclass(value, BaseException):
        return exceptions.encode_exception_class(value, peer, depth, _CODEC)
    name = _builtin_name(value)
    if name is not None:
        return ["B", name]
    enum_member = _enum_reference(value)
    if enum_member is not None:
        return enum_member
    if t.__module__ == "numpy" and _isinstance(value, numpy_scalar_types()):
        scalar = encode_numpy_scalar(value)  # with its own type: np.True_ is not True, np.int64 is not an int
        return scalar if scalar is not None else encode(value.item(), peer, depth, path)
    array = encode_array_like(value, t, peer, depth, path, _CODEC)
    if array is not None:
        return array
    if peer is None:
        raise Unserializable("an object of type %s is not a value" % _type_name(value))
    return as_reference(value, peer)


def encode_contents(value, peer):
    """A twin's contents as :func:`encode` sends them (see :mod:`.twins`)."""
    return _encode_contents(value, _type(value), peer, 0, None)


def _encode_contents(value, t, peer, depth, path):
    """The encoding of a container's contents (a twin's, see :mod:`.twins`, or a tuple's)."""
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
    if t is set:
        return ["S", _items(value, peer, depth, path)]
    if t is bytearray:
        return ["Y", value.hex()]
    if t is collections.Counter:
        return ["C", _pairs(value.items(), value, peer, depth, path)]
    if t is collections.OrderedDict:
        return ["O", _pairs(value.items(), value, peer, depth, path)]
    if t is collections.defaultdict:
        factory = value.default_factory
        return ["DD", encode(factory, peer, depth + 1), _pairs(value.items(), value, peer, depth, path)]
    if t is collections.deque:
        return ["q", value.maxlen, _items(value, peer, depth, path)]
    array = encode_array_like(value, t, peer, depth, path, _CODEC)
    if array is None:
        raise Unserializable("an object of type %s is not a value" % _type_name(value))
    return array


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
        raise Unserializable("a %s that contains itself" % _type_name(container), "cycle")
    path.add(id(container))
    return path


def _type_name(value):
    cls = _type(value)
    module = _getattr(cls, "__module__", "")
    name = _getattr(cls, "__qualname__", cls.__name__)
    return name if module in ("builtins", SOLUTION_MODULE, TESTS_MODULE, None) else "%s.%s" % (module, name)


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


def as_reference(value, peer):
    """Lend ``value`` to the other side: ``["H", handle]`` when it is the other side's own object, else
    ``["R", handle, type name, callable, value base]`` (see :func:`_value_base`)."""
    if peer is None:
        raise Unserializable("an object of type %s is not a value" % _type_name(value))
    if _type(value) is Remote and object.__getattribute__(value, "_trl_peer") is peer:
        return ["H", object.__getattribute__(value, "_trl_id")]
    base = _value_base(value)
    return ["R", peer.lend(value), _type_name(value), _callable(value), base.__name__ if base else None,
            _FAITHFUL.get(_type(value))]


#: The types a remote object says it is (its ``__class__``, see :class:`.remote.Remote`), so that
#: ``isinstance(g, types.GeneratorType)``, ``inspect.isfunction``, ``inspect.getsource`` and ``doctest`` see the
#: program's generators and functions as what they are.
_FAITHFUL = {types.GeneratorType: "generator", types.FunctionType: "function", types.MethodType: "method",
             types.CodeType: "code", types.CoroutineType: "coroutine", types.AsyncGeneratorType: "async_generator",
             types.BuiltinFunctionType: "builtin_function_or_method"}
_FAITHFUL_TYPES = {name: cls for cls, name in _FAITHFUL.items()}


_VALUE_BASES = (int, float, complex, str, bytes, bytearray, list, tuple, dict, set, frozenset, collections.Counter,
                collections.OrderedDict, collections.defaultdict, collections.deque)


def _value_base(value):
    """The value type an object's class derives from without changing equality (a namedtuple subclass, an
    ``IntEnum``, ``class Stack(list)`` with no ``__eq__``), else None. Such an object compares with values as its base
    value does, in the judge (:meth:`.remote.Remote.__eq__`); a class that overrides ``__eq__`` never equals a value."""
    cls = _type(value)
    for base in cls.__mro__[1:]:
        if base in _VALUE_BASES:
            if cls.__eq__ is base.__eq__ and cls.__ne__ is base.__ne__:
                return base
            return None
    return None


def base_value(obj):
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


# -- values: decoding ------------------------------------------------------------------------------------------------


def decode(data, peer=None):
    """Inverse of :func:`encode`: fresh objects of the encoded types; references become :class:`.remote.Remote` objects
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
        return int(strict_str(data[1]), 16)
    if tag == "c":
        return complex(_float(data[1]), _float(data[2]))
    if tag == "y":
        return bytes.fromhex(strict_str(data[1]))
    if tag == "Y":
        return bytearray.fromhex(strict_str(data[1]))
    if tag == "r":
        return range(_int(data[1]), _int(data[2]), _int(data[3]))
    if tag == "Q":
        return fractions.Fraction(_int(decode(data[1])), _int(decode(data[2])))
    if tag == "D":
        return decimal.Decimal(strict_str(data[1]))
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
        return cls.fromisoformat(strict_str(value))
    if tag == "nt":
        name, fields = strict_str(data[1]), tuple(strict_str(f) for f in data[2])
        cls = _cached_class(_NAMEDTUPLES, (name, fields), lambda: collections.namedtuple(name, fields))
        return cls(*(decode(v, peer) for v in data[3]))
    if tag == "B":
        value = builtins.__dict__[strict_str(data[1])]
        if not _isinstance(value, type):
            raise ValueError("only builtin types cross by name")
        return value
    if tag == "E":
        cls = _loaded_class(data[1], data[2])
        enum = sys.modules.get("enum")
        if cls is None or enum is None or not issubclass(cls, enum.Enum):
            raise ValueError("unknown enum %r" % (data[2],))
        return cls[strict_str(data[3])]
    if tag == "X":
        return exceptions.exception_class(data, peer, _CODEC)
    if tag in ("np", "npo", "pdI", "pdS", "pdF", "pdc", "pdx"):
        return decode_array_like(tag, data, peer, _CODEC)
    if tag == "M":
        module = sys.modules.get(strict_str(data[1]))
        if module is not None and not _own_module(module):
            return module
        return decode(data[2], peer)
    if tag == "R":
        if peer is None:
            return _opaque(strict_str(data[2]))
        base = data[4] if len(data) > 4 else None
        kind = _FAITHFUL_TYPES.get(data[5]) if len(data) > 5 and _type(data[5]) is str else None
        return peer.remote(_int(data[1]), strict_str(data[2]), bool(data[3]), base if _type(base) is str else None,
                           kind)
    if tag == "P":
        name = strict_str(data[1])
        if name not in _PATHS:
            raise ValueError("bad path")
        return getattr(importlib.import_module("pathlib"), name)(strict_str(data[2]))
    if tag == "re":
        pattern = decode(data[1])
        if _type(pattern) not in (str, bytes):
            raise ValueError("bad pattern")
        return importlib.import_module("re").compile(pattern, _int(data[2]))
    if tag == "T":
        if peer is None:
            raise ValueError("no twins here")
        return peer.twins.get(data[1])
    if tag == "ng":
        return decode_numpy_scalar(data)
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


def strict_str(v):
    if _type(v) is not str:
        raise ValueError("expected a str")
    return v


def _opaque(type_name):
    """A stand-in for an object that stayed in the sandbox (host-side decoding): equal only to itself."""
    cls = _cached_class(_OPAQUE, type_name,
                        lambda: _type(type_name, (), {"__repr__": lambda self: "<%s object>" % type_name}))
    return cls()


#: This package's own name: ``trl_sandbox_harness`` in a sandbox, ``trl_sandbox.harness`` on the host.
_PACKAGE = __name__.rpartition(".")[0]


def _own_module(module):
    """Whether ``module`` is the harness's own (never a source of classes for what the other side sends)."""
    name = _getattr(module, "__name__", None)
    return name in ("__main__", "trl_sandbox_harness", _PACKAGE) or (
        _type(name) is str and name.startswith(_PACKAGE + "."))


def _loaded_class(module_name, qualname):
    """The class ``module_name.qualname`` when that module is already loaded here (never imports), else None."""
    module = sys.modules.get(strict_str(module_name))
    if module is None or _own_module(module):
        return None
    obj = module
    for part in strict_str(qualname).split("."):
        if part.startswith("_") and part not in ("__main__",):
            return None
        obj = _getattr(obj, part, None)
    return obj if _isinstance(obj, type) else None


def raise_from(info, peer):
    """Raise, in this process, the exception the other side reported (see :func:`.exceptions.raise_from`)."""
    return exceptions.raise_from(info, peer, _CODEC)


def exception_info(exc, peer):
    """What :func:`raise_from` needs to raise ``exc`` on the other side (see :func:`.exceptions.exception_info`)."""
    return exceptions.exception_info(exc, peer, _CODEC)


#: This module, as :mod:`.arrays` uses it.
_CODEC = sys.modules[__name__]
