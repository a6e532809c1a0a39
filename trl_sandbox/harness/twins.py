"""Twins: a mutable value that crossed between the judge and the worker is one object on each side, kept alike.

KodCode's tests and the program are one process officially (``pipeline/run_test.sh``): a list the test passes is the
list the program changes, a list the program returns and keeps is the list the test changes later. Here they are two
processes (the tests never enter the program's memory), so a mutable value that crosses (``list``, ``dict``,
``set``, ``bytearray``, ``deque``, ``OrderedDict``, ``Counter``, ``defaultdict``, a numpy array) becomes a *twin*: the
receiver builds its own copy once, and both sides remember the pair by a twin id. From then on:

- **Identity**: the object crosses as its twin id, so what comes back is the same object (``f(lst) is lst`` when the
  program returns its argument; ``is not`` when it returns a copy), nested twins and aliasing included (two places
  holding one list on one side hold one list on the other), and a container that contains itself crosses.
- **Mutation**: every message a side sends carries the new contents of each of its twins that changed since its last
  message (``"tws"``), at any depth (each container is compared on its own), and the receiver changes its twin in
  place before it reads the message. So after every call the tests see what the program did to their objects, and
  the program sees what the tests did to the objects it keeps (a constructor that did not copy its argument).
- **Lifetime**: a twin that nothing but this table holds on one side is forgotten there, and the other side is told
  (``"twx"``) so that it stops tracking its copy too (nothing can observe that copy's changes any more); a later
  crossing of that copy makes a new pair. The tables stay as large as what the two sides still hold.

A message's new twins travel in ``"twn"`` (``[[id, contents]...]``): the receiver first makes an empty object for each,
then fills them, then applies ``"tws"``, then forgets ``"twx"``, and only then decodes the message's values, in which a
twin is ``["T", id]`` (see :func:`.values.encode`). Ids are even on the judge's side and odd on the worker's, so the
two never collide. The worker is untrusted: a malformed entry or an unknown id raises ``ValueError`` (the judge then
takes the worker for dead), and a twin's new contents are decoded values like any other (never code, never the
judge's internals): what a program can change is what the tests gave it, as in the one process.
"""

import collections
import marshal
import sys
from operator import is_

from .base import _type

#: The mutable value types that cross as twins (numpy's ``ndarray`` is added when numpy is loaded).
TWIN_TYPES = frozenset({list, dict, set, bytearray, collections.deque, collections.OrderedDict, collections.Counter,
                        collections.defaultdict})


#: The most items (elements of an array, bytes of a ``bytearray``) a twin may hold: every message compares each twin
#: with what the other side last heard of, so a larger value crosses as a copy instead (see :func:`is_twin`).
TWIN_MAX_ITEMS = 10000
_BYTES_PER_ITEM = 64


def is_twin_type(t):
    """Whether values of type ``t`` are mutable values (they cross as twins, or as copies when large)."""
    if t in TWIN_TYPES:
        return True
    return t.__name__ == "ndarray" and _type(t.__module__) is str and t.__module__ == "numpy"


def is_twin(value, t):
    """Whether ``value`` (of a :func:`is_twin_type` type ``t``) crosses as a twin: at most :data:`TWIN_MAX_ITEMS`
    items. A larger one crosses as a copy, and a call's changes to such an argument are copied back after the call
    (:class:`.peer.CallResult`): the cost of keeping it alike would be paid at every message."""
    if t is bytearray:
        return len(value) <= TWIN_MAX_ITEMS * _BYTES_PER_ITEM
    if t in TWIN_TYPES:
        return len(value) <= TWIN_MAX_ITEMS
    return value.size <= TWIN_MAX_ITEMS * 10


def _items(obj):
    t = _type(obj)
    if t is list:
        return obj
    if t is collections.deque or t is set:
        return list(obj)
    if t is collections.defaultdict:
        return [obj.default_factory, *obj.keys(), *obj.values()]
    return [*obj.keys(), *obj.values()]


def fingerprint(obj):
    """What changes when ``obj`` changes (shallowly: a nested twin has its own): its marshalled contents when they
    are plain data, else the list of its parts, compared by identity (see :func:`same`)."""
    t = _type(obj)
    if t is bytearray:
        return bytes(obj)
    if t.__module__ == "numpy":  # an ndarray
        if obj.dtype.hasobject:
            return list(obj.ravel())
        return (obj.dtype.str, obj.shape, obj.tobytes())
    items = _items(obj)
    try:
        return marshal.dumps(items if t is not dict else obj)
    except ValueError:  # parts that are not plain data: compared by identity
        return list(items)


def same(before, after):
    """Whether two :func:`fingerprint` results say "unchanged"."""
    if _type(before) is list:
        return _type(after) is list and len(before) == len(after) and all(map(is_, before, after))
    return before == after


def empty_like(payload):
    """An empty object of the type ``payload`` (a container's encoding, see :func:`.values.encode`) decodes to, to
    fill once every new twin of the message exists (they may refer to one another). Raises ValueError."""
    tag = payload[0]
    if tag in ("l", "li", "lf", "ls"):
        return []
    if tag == "d":
        return {}
    if tag == "S":
        return set()
    if tag == "Y":
        return bytearray()
    if tag == "q":
        maxlen = payload[1]
        if maxlen is not None and _type(maxlen) is not int:
            raise ValueError("bad deque")
        return collections.deque(maxlen=maxlen)
    if tag == "C":
        return collections.Counter()
    if tag == "O":
        return collections.OrderedDict()
    if tag == "DD":
        return collections.defaultdict()
    if tag in ("np", "npo"):
        return None  # made whole from its contents
    raise ValueError("not a twin's contents: %r" % (tag,))


def fill(obj, new):
    """Make ``obj`` hold what ``new`` (a fresh object of the same type) holds, in place. Raises ValueError when the
    types differ (a malformed message)."""
    t = _type(obj)
    if _type(new) is not t:
        raise ValueError("a twin's contents of another type")
    if t is list or t is bytearray:
        obj[:] = new
    elif t is collections.deque:
        obj.clear()
        obj.extend(new)
    elif t is set:
        obj.clear()
        obj.update(new)
    elif t is collections.defaultdict:
        obj.clear()
        obj.update(new)
        obj.default_factory = new.default_factory
    elif t in (dict, collections.OrderedDict, collections.Counter):
        obj.clear()
        obj.update(new)
    else:  # an ndarray: changed in place only with its shape and dtype (resizing it would free the memory of the
        # views the other side's code holds)
        if obj.shape != new.shape or obj.dtype != new.dtype:
            raise ValueError("an array changed its shape or dtype in place")
        if obj.flags.writeable:
            obj[...] = new


#: How many messages read a twin the other side forgot stays readable (the messages read meanwhile are nested
#: requests made while decoding the one that named it: a remote object's hash).
RETIRING_MESSAGES = 4096


class Twins:
    """One side's twins: ``objects`` (id -> object), ``ids`` (``id(object)`` -> id), ``seen`` (id -> the
    :func:`fingerprint` the other side last heard of), and the message being prepared (``new``: twins made since the
    last message, with their encoded contents)."""

    def __init__(self, side):
        self.side = side  # 0: the judge, 1: the worker
        self.objects = {}
        self.ids = {}
        self.seen = {}
        self.next = 2 + side
        self.new = []
        self._sent = None
        self.retiring = {}  # twins the other side forgot lately: still named by the values of messages being read
        self.retired = collections.deque()  # (message count, id), oldest first
        self.messages = 0  # messages read
        self.filling = set()  # twins whose contents a message being read is setting

    def __len__(self):
        return len(self.objects)

    def find(self, obj):
        """The twin id of ``obj`` when it is a twin, else None."""
        tid = self.ids.get(id(obj))
        if tid is not None and self.objects.get(tid) is obj:
            return tid
        return None

    def add(self, obj):
        """Make ``obj`` a new twin: register it, and return its id and the slot of the next message that will carry
        its contents (``slot[1]``, set by the caller once encoded, then :meth:`added`; or :meth:`discard` when they
        cannot be). Its contents may make nested twins, or meet ``obj`` itself."""
        tid = self.next
        self.next += 2
        self.objects[tid] = obj
        self.ids[id(obj)] = tid
        slot = [tid, None]
        self.new.append(slot)
        return tid, slot

    def added(self, slot, contents):
        slot[1] = contents
        self.seen[slot[0]] = fingerprint(self.objects[slot[0]])

    def discard(self, slot):
        """The contents of the twin made with ``slot`` could not be encoded: it is no twin."""
        self.forget(slot[0])
        slot[1] = None  # left out of the message (see outgoing)

    def get(self, tid):
        """The object of twin ``tid``. Raises ValueError for an id this side does not know."""
        if _type(tid) is not int:
            raise ValueError("bad twin id")
        obj = self.objects.get(tid, self)
        if obj is self:
            obj = self.retiring.get(tid, self)
            if obj is self:
                raise ValueError("unknown twin %r" % (tid,))
        return obj

    def forget(self, tid):
        obj = self.objects.pop(tid, None)
        self.seen.pop(tid, None)
        if obj is not None and self.ids.get(id(obj)) == tid:
            del self.ids[id(obj)]

    # -- a message out

    def outgoing(self, msg, encode_contents, held=None):
        """Add to ``msg`` this side's news: ``"tws"``, the new contents of twins that changed (encoded with
        ``encode_contents(obj)``, which may make new twins), ``"twx"``, the twins nothing but this table holds any
        more, and ``"twn"``, the twins made since the last message. ``held(obj)``: how many references this side's
        harness keeps to ``obj`` besides the table (the judge's record of the program's values). Call :meth:`sent`
        once the message is sent, or :meth:`unsent` when it could not be. All or nothing: when a changed twin cannot
        be encoded, what this call noted is undone and the exception (its ``twin``: that object) is raised.

        A twin being filled by a message being read (a nested request while its contents are decoded: a remote
        object's hash) has no fingerprint yet, or is in :attr:`filling`: it is neither compared nor dropped."""
        changed, previous = [], []
        if self.objects:
            fresh = {slot[0] for slot in self.new}
            busy = self.filling
            obj = None
            try:
                for tid, obj in list(self.objects.items()):
                    if tid in fresh or tid in busy or tid not in self.seen:
                        continue
                    now = fingerprint(obj)
                    if not same(self.seen[tid], now):
                        previous.append((tid, self.seen[tid]))
                        self.seen[tid] = now
                        changed.append([tid, encode_contents(obj)])
            except BaseException as exc:
                for tid, before in previous:
                    self.seen[tid] = before
                try:
                    exc.twin = obj  # whose value it is (see .processes.Worker.not_sent)
                except BaseException:  # noqa: BLE001
                    pass
                raise
            finally:
                del obj
        dropped = self._unheld(held) if self.objects else []
        for slot in self.new:
            if slot[1] is None:  # its contents could not be encoded (a discard that failed too, deep in a recursion)
                self.forget(slot[0])
        new, self.new = [slot for slot in self.new if slot[1] is not None], []
        if changed:
            msg["tws"] = changed
        if dropped:
            msg["twx"] = dropped
        if new:
            msg["twn"] = new
        self._sent = (new, previous, dropped)
        return msg

    def _unheld(self, held):
        """The twins nothing but this side's tables (and its fingerprints) holds: forgotten here once the message
        that says so is sent. The count a twin has when only the table holds it is measured on a probe stored and
        read the same way (an interpreter may borrow a reference where another counts it)."""
        probe = {0: object()}
        for key in probe:
            obj = probe[key]
            base = sys.getrefcount(obj)
        dropped = []
        busy = self.filling
        for tid in list(self.objects):
            obj = self.objects[tid]
            if tid in busy or tid not in self.seen:
                continue
            extra = sys.getrefcount(obj) - base
            if held is not None:
                extra -= held(obj)
            if extra <= 0:
                dropped.append(tid)
        return dropped

    def sent(self):
        """The message :meth:`outgoing` prepared was sent: forget what it dropped."""
        if self._sent is not None:
            for tid in self._sent[2]:
                self.forget(tid)
            self._sent = None

    def unsent(self):
        """The message :meth:`outgoing` prepared was not sent: its new twins are forgotten, and the changes it carried
        will be sent with the next one."""
        if self._sent is None:
            return
        new, previous, _ = self._sent
        for tid, before in previous:
            if tid in self.objects:
                self.seen[tid] = before
        for slot in new:
            self.forget(slot[0])
        self._sent = None

    # -- a message in

    def incoming(self, msg, decode, changed=None):
        """Apply the other side's news in ``msg`` before its values are decoded: make ``"twn"``'s twins, fill them
        and apply ``"tws"`` (``decode(payload)`` builds the new contents), then forget ``"twx"``. ``changed(obj)``
        is told of each twin of this side's that the other side changed. Raises ValueError on a malformed entry."""
        new = msg.get("twn") or []
        updates = msg.get("tws") or []
        dropped = msg.get("twx") or []
        if _type(new) is not list or _type(updates) is not list or _type(dropped) is not list:
            raise ValueError("bad twins")
        self.messages += 1
        while self.retired and self.retired[0][0] < self.messages - RETIRING_MESSAGES:
            self.retiring.pop(self.retired.popleft()[1], None)
        made = []
        for entry in new:
            if _type(entry) is not list or len(entry) != 2:
                raise ValueError("bad new twin")
            tid, payload = entry
            if _type(tid) is not int or tid % 2 == self.side or tid in self.objects or _type(payload) is not list:
                raise ValueError("bad new twin")
            obj = empty_like(payload)
            if obj is not None:
                self.objects[tid] = obj
                self.ids[id(obj)] = tid
            made.append((tid, obj, payload))
        # Arrays first, made whole (a container may hold one): plain ones, then arrays of objects, inner ones first
        # (an outer array is encoded, so listed, before the arrays it holds); then the containers, filled in place.
        arrays = [entry for entry in made if entry[1] is None]
        plain = [entry for entry in arrays if entry[2][0] != "npo"]
        nested = [entry for entry in arrays if entry[2][0] == "npo"][::-1]
        containers = [entry for entry in made if entry[1] is not None]
        for tid, _, payload in plain + nested:
            obj = decode(payload)
            self.objects[tid] = obj
            self.ids[id(obj)] = tid
            self.seen[tid] = fingerprint(obj)
        self.filling.update(tid for tid, _, _ in containers)
        try:
            for tid, obj, payload in containers:
                fill(obj, decode(payload))
                self.seen[tid] = fingerprint(obj)
                self.filling.discard(tid)
            for entry in updates:
                if _type(entry) is not list or len(entry) != 2 or _type(entry[1]) is not list:
                    raise ValueError("bad twin update")
                tid, payload = entry
                obj = self.get(tid)
                self.filling.add(tid)
                fill(obj, decode(payload))
                self.seen[tid] = fingerprint(obj)
                self.filling.discard(tid)
                if changed is not None and tid % 2 == self.side:
                    changed(obj)
        finally:
            self.filling.clear()
        for tid in dropped:  # the message's values may still name them: kept for reading, for a while
            self.retiring[tid] = self.get(tid)
            self.retired.append((self.messages, tid))
            self.forget(tid)
