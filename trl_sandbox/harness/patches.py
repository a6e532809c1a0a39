"""The tests' patches (KodCode's pytest files): what a test changes in the judge's modules and environment, made the
same in the worker before each request, so that the program runs as it would in the tests' own process.

``unittest.mock`` (``patch``, ``patch.object``, ``patch.dict``) and pytest's ``monkeypatch`` change module attributes
through ``setattr``/``delattr``, which :func:`install` routes through :class:`Patches`; assigning to the tests'
``solution`` module is noted the same way; ``os.environ`` and the working directory are compared before each request.
Each request the judge sends then carries the changes since the last one (``"patch"``, applied by the worker with
:func:`.peer.apply_patches`), with the state :mod:`.bridge` keeps alike (random generators, loggers' levels,
``sys.stdin``).
"""

import builtins
import os
import sys
import types

from .base import Unserializable, _type
from .bridge import JudgeBridge
from .peer import shield_harness
from .values import as_reference, encode

_UNSET = object()
#: Attributes of the judge's modules that are never copied to the worker: its streams (what the program prints
#: reaches the tests' ``sys.stdout`` another way, see :meth:`.peer.Peer.request`) and its import machinery.
_NOT_SYNCED = frozenset(("sys", name) for name in (
    "stdout", "stderr", "__stdout__", "__stderr__", "__stdin__", "modules", "path", "meta_path", "path_hooks",
    "path_importer_cache", "displayhook", "excepthook"))
#: pytest's own variable, changed at each phase of each test.
_PYTEST_VARIABLE = "PYTEST_CURRENT_TEST"


def _is_module(obj):
    return issubclass(_type(obj), types.ModuleType)


def _environ_raw():
    """``os.environ``'s own mapping (compared as it is: cheap when nothing changed)."""
    raw = getattr(os.environ, "_data", None)
    return raw if _type(raw) is dict else dict(os.environ)


class Patches:
    """The tests' changes, in this fork of the judge, to modules (through ``unittest.mock`` and pytest's
    ``monkeypatch``, whose module-global ``setattr``/``delattr`` are :meth:`setattr`/:meth:`delattr`, or by
    assigning to the solution module) and to ``os.environ``; :meth:`sync` makes the same changes in the worker
    before each request (the request's ``patch`` operations, see :func:`.peer.apply_patches`).

    A module's attribute is set in the judge too (a test reads ``solution.helper`` back as its mock), after the
    harness's own modules got a copy of that module (:func:`.peer.shield_harness`: a test's ``json.dumps`` mock never
    carries the harness's messages). A *builtin* is never replaced in the judge's ``builtins`` (pytest and the harness
    keep theirs): it shadows the builtin in the test module's namespace, where the test's own code sees it, and in
    the program's. Nested patches of one builtin undo in order (a stack per name)."""

    def __init__(self, solution):
        self.solution = solution  # the test file's module "solution" (its patches land in the program's namespace)
        self.originals = {}  # (id(module), name) -> (module, the value before the tests' first change, or _UNSET)
        self.dirty = set()  # keys changed since the last sync; ("B", name) for builtins
        self.builtins = {}  # name -> the values the tests set, innermost last (_UNSET: deleted)
        self.shadowed = {}  # name -> the test module's own global before a builtin shadowed it (or _UNSET)
        self.test_globals = None
        self.env = dict(os.environ)  # the environment the worker started with (as the judge's, here)
        self.env_seen = dict(_environ_raw())
        self.env_sent = {}  # variable -> what the worker was last told
        self.cwd = self.cwd_sent = os.getcwd()  # monkeypatch.chdir(tmp_path): the program works there too
        self.bridge = JudgeBridge()  # warnings, logging, random, sys.stdin

    # -- the tests' side: unittest.mock's and monkeypatch's setattr/delattr

    def setattr(self, obj, name, value):
        if _type(name) is str and _is_module(obj):
            if obj is builtins:
                return self._builtin(name, value)
            self.note(obj, name)
        return builtins.setattr(obj, name, value)

    def delattr(self, obj, name):
        if _type(name) is str and _is_module(obj):
            if obj is builtins:
                return self._builtin(name, _UNSET)
            self.note(obj, name)
        return builtins.delattr(obj, name)

    def note(self, module, name):
        """``module.name`` is about to change."""
        key = (id(module), name)
        if key not in self.originals:
            shield_harness(module)
            self.originals[key] = (module, module.__dict__.get(name, _UNSET))
        self.dirty.add(key)

    def _builtin(self, name, value):
        real = builtins.__dict__.get(name, _UNSET)
        stack = self.builtins.setdefault(name, [])
        if value is real or (value is _UNSET and real is _UNSET):  # an undo (a patch's exit, monkeypatch's undo)
            if stack:
                stack.pop()
        else:
            stack.append(value)
        space = self.test_globals
        if space is not None:
            if name not in self.shadowed:
                self.shadowed[name] = space.get(name, _UNSET)
            if stack and stack[-1] is not _UNSET:
                space[name] = stack[-1]
            else:
                own = self.shadowed.pop(name) if not stack else _UNSET
                if own is _UNSET:
                    space.pop(name, None)
                else:
                    space[name] = own
        self.dirty.add(("B", name))

    # -- the worker's side

    def sync(self, worker):
        """What changed since the last request, as the operations the request carries (``"patch"``, applied by the
        worker before it serves the request: see :func:`.peer.apply_patches`)."""
        ops = []
        if self.dirty:
            dirty, self.dirty = self.dirty, set()
            for key in dirty:
                op = self._builtin_op(worker, key[1]) if key[0] == "B" else self._module_op(worker, key)
                if op is not None:
                    ops.append(op)
        raw = _environ_raw()
        if raw != self.env_seen:
            self.env_seen = dict(raw)
            ops += self._environment_ops(worker)
        try:
            cwd = os.getcwd()
        except OSError:  # the tests removed it
            cwd = self.cwd_sent
        if cwd != self.cwd_sent:
            self.cwd_sent = cwd
            ops.append(["C", "", "restore", None] if cwd == self.cwd else ["C", "", "set", encode(cwd)])
        ops += self.bridge.ops(lambda value: _encode(worker, value))
        return ops

    def _builtin_op(self, worker, name):
        stack = self.builtins.get(name)
        if not stack:
            return ["B", name, "restore", None]
        if stack[-1] is _UNSET:
            return ["B", name, "del", None]
        return ["B", name, "set", _encode(worker, stack[-1])]

    def _module_op(self, worker, key):
        module, original = self.originals[key]
        name = key[1]
        module_name = module.__dict__.get("__name__")
        if module is self.solution:
            target = "S"
        elif _type(module_name) is not str or (module_name, name) in _NOT_SYNCED or name.startswith("__"):
            return None
        else:
            target = module_name
        current = module.__dict__.get(name, _UNSET)
        if current is original:
            return [target, name, "restore", None]
        if current is _UNSET:
            return [target, name, "del", None]
        return [target, name, "set", _encode(worker, current)]

    def _environment_ops(self, worker):
        now = dict(os.environ)
        ops = []
        for name in set(now) | set(self.env) | set(self.env_sent):
            if name == _PYTEST_VARIABLE:
                continue
            value = now.get(name)
            want = ("restore",) if value == self.env.get(name) else ("set", value) if value is not None else ("del",)
            if self.env_sent.get(name, ("restore",)) == want:
                continue
            if want[0] == "restore":
                self.env_sent.pop(name, None)
            else:
                self.env_sent[name] = want
            ops.append(["E", name, want[0], encode(value) if want[0] == "set" else None])
        return ops


def _encode(worker, value):
    """A patch's value as the worker gets it: plain data by value, anything else lent (a remote object there)."""
    try:
        return encode(value, worker)
    except Unserializable:
        return as_reference(value, worker)


def install(patches, pytest):
    """Route ``unittest.mock``'s and pytest's ``monkeypatch`` module's ``setattr``/``delattr`` through ``patches``."""
    import unittest.mock

    monkeypatch = getattr(getattr(pytest, "MonkeyPatch", None), "__module__", None) or "_pytest.monkeypatch"
    for module in (unittest.mock, sys.modules.get(monkeypatch)):
        if module is not None:
            module.setattr = patches.setattr
            module.delattr = patches.delattr
