"""Whose value is it: what the judge decoded from the program, tracked so that a value that cannot cross is judged
by whose doing it is (see :meth:`.processes.Worker.not_sent`).

A value of the tests' own that the judge cannot send ends the run as ``unserializable`` (a None reward, not the
program's doing); one that holds what the program sent or changed is the program's failure. The judge notes, by
identity, every container and string it decoded from the program (and the test objects the program changed), up to
:data:`PROGRAM_VALUES_BUDGET` items; past it, it presumes the program's data everywhere.
"""

import collections

from .base import _getattr, _isinstance, _type
from .values import _is_namedtuple

#: Containers whose items :func:`.values.encode` sends by value (exact types: an instance of a subclass the tests
#: define is lent as a reference, and its items never cross).
_SENT_CONTAINERS = frozenset({list, tuple, set, frozenset, collections.deque, dict, collections.Counter,
                              collections.OrderedDict, collections.defaultdict, type({}.keys()), type({}.values()),
                              type({}.items())})
#: What :meth:`Worker.received` never notes: shared or small objects.
_NUMBERS = frozenset({int, float, bool, complex, type(None)})
#: How much of what the program sent the judge keeps track of, in bytes (about: a string's or a large integer's own,
#: eight per item of a container, an array's buffer): past it, every value of the tests that cannot cross is presumed
#: to hold the program's (see :meth:`Worker.not_sent`), and what was tracked is let go (the judge's memory stays
#: bounded whatever the program sends).
PROGRAM_VALUES_BUDGET = 64 << 20


def _items_of(obj):
    """The objects :func:`.values.encode` sends as parts of ``obj`` (the keys and values of a mapping), else ()."""
    cls = _type(obj)
    if cls in _SENT_CONTAINERS:
        if _isinstance(obj, dict):
            return [*obj.keys(), *obj.values()]
        if cls is type({}.items()):
            return [part for pair in obj for part in pair]
        return obj
    if _isinstance(obj, tuple) and _is_namedtuple(obj):
        return obj
    return ()


class ProgramValues:
    """The judge's record of the program's values (a mixin of :class:`.processes.Worker`, which sets
    ``from_program = {}``, ``program_bytes = 0`` and ``flooded = False``)."""

    def received(self, value):
        """Note ``value``, just decoded from the worker (an answer, an argument of a callback, an exception's
        arguments, the program's names), or a test object a call changed: it, and every container and string in it
        (and a large integer, but among other plain numbers), by identity (see :meth:`not_sent`). Past
        :data:`PROGRAM_VALUES_BUDGET` bytes, the judge stops tracking (and lets go of what it kept) and presumes the
        program's data everywhere."""
        if self.flooded:
            return
        tracked = self.from_program
        stack = [value]
        while stack:
            obj = stack.pop()
            cls = _type(obj)
            # Only what decoding made anew: shared objects (small ints, "" and one-character strings, (), types,
            # enum members, the judge's own modules and objects coming back) could be the tests' own too.
            if cls is str or cls is bytes or cls is bytearray:
                if len(obj) < 2:
                    continue
                size = len(obj)
            elif cls is int:
                if obj.bit_length() <= 4096:
                    continue
                size = obj.bit_length() >> 3
            elif cls in _SENT_CONTAINERS or (_isinstance(obj, tuple) and _is_namedtuple(obj)):
                if not obj and (cls is tuple or cls is frozenset):
                    continue
                if tracked.get(id(obj)) is obj:
                    continue
                parts = _items_of(obj)
                size = 8 * len(parts)
                # Plain numbers are nothing to note: skip them without a step each (a list of a million ints).
                if len(parts) < 64 or not set(map(_type, parts)) <= _NUMBERS:
                    stack.extend(parts)
            elif (_getattr(cls, "__module__", "") or "").split(".")[0] in ("numpy", "pandas"):
                try:  # an array or a frame, as a whole (its parts are made anew when the tests read them)
                    size = int(_getattr(obj, "size", 0)) * 8
                except Exception:  # noqa: BLE001 - a pandas object whose size is not a number
                    size = 0
            else:
                continue
            tracked[id(obj)] = obj
            self.program_bytes += 64 + size
            if self.program_bytes > PROGRAM_VALUES_BUDGET:
                self.flooded = True
                self.from_program = {}
                return

    def _holds_program_value(self, values):
        """Whether ``values`` (what a message carried, walked as :func:`.values.encode` walks it) hold an object
        :meth:`received` noted."""
        tracked = self.from_program
        if values is None or not tracked:
            return False
        seen = set()
        stack = [values]
        while stack:
            obj = stack.pop()
            if tracked.get(id(obj)) is obj:
                return True
            parts = _items_of(obj)
            if parts and id(obj) not in seen:
                seen.add(id(obj))
                if len(parts) < 64 or not set(map(_type, parts)) <= _NUMBERS:  # (as in received)
                    stack.extend(parts)
        return False
