"""Exceptions between the judge and the worker: an exception crosses with its class and its attributes (see
:mod:`.values`, which passes itself as ``codec``: this module imports nothing of the harness's values).

A builtin or standard library exception class crosses as itself; an exception class the program defines becomes a
class the judge makes for it, once per class (``except TheirError`` in a test works). The test runners' own classes
(pytest's outcomes, unittest's ``SkipTest``) named by the other side are never resolved to the real ones.
"""

from .base import SOLUTION_MODULE, TESTS_MODULE, Timeout, WorkerDied, _getattr, _isinstance, _type, describe


def encode_exception_class(cls, peer, depth, codec):
    """``["B", name]`` for a builtin exception class, else ``["X", module, qualname, handle, [bases]]``: the receiver
    uses the class itself when it has it loaded (a standard library exception) and else makes one with that name
    over the same bases."""
    name = codec._builtin_name(cls)
    if name is not None:
        return ["B", name]
    bases = [encode_exception_class(b, peer, depth + 1, codec) for b in cls.__bases__ if issubclass(b, BaseException)]
    handle = peer.lend(cls) if peer is not None else None
    return ["X", cls.__module__, cls.__qualname__, handle, bases]


#: The test runners' own exceptions (pytest's ``Skipped``, ``Failed``, ``XFailed``, ``Exit``, unittest's
#: ``SkipTest``) decide a test's outcome: a class the other side names from these modules is never resolved to the
#: real one (a program's "skip" would count as the tests'), nor taken as a base; it is made here, a stranger to them.
_TEST_RUNNER_MODULES = frozenset({"_pytest", "pytest", "pluggy", "unittest"})


def _not_a_runners(cls):
    """Whether ``cls`` is not one of the test runners' classes (see :data:`_TEST_RUNNER_MODULES`)."""
    return (_getattr(cls, "__module__", "") or "").split(".")[0] not in _TEST_RUNNER_MODULES


def exception_class(data, peer, codec):
    """The exception class for an ``["X", ...]`` reference: a standard library class this process has loaded (never
    the harness's own), else a class made here with the same name over the same (resolved) bases, once per class."""
    module, qualname, handle, bases = codec.strict_str(data[1]), codec.strict_str(data[2]), data[3], data[4]
    if module not in (SOLUTION_MODULE, TESTS_MODULE) and module.split(".")[0] not in _TEST_RUNNER_MODULES:
        cls = codec._loaded_class(module, qualname)
        if cls is not None and issubclass(cls, BaseException):
            return cls

    def make():
        decoded = (codec.decode(b, peer) for b in bases)
        resolved = tuple(b for b in decoded if _isinstance(b, type) and _not_a_runners(b)) or (Exception,)
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
    cache = peer.mirrors if peer is not None else codec._MIRRORS
    return codec._cached_class(cache, (handle, module, qualname), make)


def raise_from(info, peer, codec):
    """Raise, in this process, the exception the other side reported (``{"t": class, "args", "desc"}``)."""
    try:
        cls = codec.decode(info["t"], peer)
        if not (_isinstance(cls, type) and issubclass(cls, BaseException)) or cls in (Timeout, WorkerDied):
            raise ValueError("not an exception class")
    except Exception:  # noqa: BLE001 - an exception type we cannot rebuild: its description still tells
        cls = RuntimeError
    desc = str(info.get("desc", ""))[:2000]
    args = None
    if _type(info.get("args")) is list:
        try:
            args = tuple(codec.decode(a, peer) for a in info["args"])
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
    attributes = info.get("attrs")
    for entry in attributes if _type(attributes) is list else ():
        try:
            name = codec.strict_str(entry[0])
            if not name.startswith("__"):
                setattr(exc, name, codec.decode(entry[1], peer))
        except Exception:  # noqa: BLE001 - one that does not decode or cannot be set is left out
            pass
    raise exc


def exception_info(exc, peer, codec):
    """What :func:`raise_from` needs to raise ``exc`` on the other side."""
    info = {"desc": describe(exc)}
    try:
        info["t"] = encode_exception_class(_type(exc), peer, 0, codec)
    except Exception:  # noqa: BLE001
        info["t"] = ["B", "RuntimeError"]
    try:
        info["args"] = [codec.encode(a) for a in exc.args]
    except Exception:  # noqa: BLE001 - not values: the description is used instead
        pass
    attributes = []
    try:
        own = _getattr(exc, "__dict__", None)
        for name, value in list(own.items()) if _type(own) is dict else ():
            if _type(name) is str and not name.startswith("__"):
                try:
                    attributes.append([name, codec.encode(value, peer)])
                except Exception:  # noqa: BLE001 - one that cannot cross is left out
                    pass
    except Exception:  # noqa: BLE001 - an exception that refuses to be looked at
        pass
    if attributes:
        info["attrs"] = attributes  # what its __init__ set (``InsufficientFunds(...).shortfall``)
    return info
