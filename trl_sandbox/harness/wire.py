"""Framed messages between the harness's processes, and the descriptor helpers they use.

A frame is a 4-byte little-endian length and that many bytes; a message is one JSON object in one frame. The judge
and the worker talk this way over a pair of pipes (see :mod:`.peer`), the judge server and the host over a socket (see
:func:`.server.serve`), a fork of the judge and the judge over a pipe (see :func:`.processes.run_in_child`).
Anything but a well-formed frame from the worker means the worker is dead to the judge (:class:`.base.WorkerDied`).
"""

import json
import os
import select
import struct
import time

from .base import Timeout, Unserializable, WorkerDied, _callable, _isinstance

#: The largest message either side sends or accepts (bytes).
_MAX_MESSAGE = 64 << 20


class WorkerOutput:
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


def send_frame(fd, data):
    """Write ``data`` (bytes) to ``fd`` as one frame, all of it."""
    data = struct.pack("<I", len(data)) + data
    while data:
        data = data[os.write(fd, data):]


def send_frames(fd, frames):
    """Write each of ``frames`` (bytes) to ``fd`` as a frame, in one write where the descriptor takes it all (the
    reader is woken once, not once per frame)."""
    data = b"".join(struct.pack("<I", len(frame)) + frame for frame in frames)
    while data:
        data = data[os.write(fd, data):]


def send(fd, obj):
    """Write the JSON-able ``obj`` to ``fd`` as one message. Returns False when it was an answer over the message
    limit, replaced by one that says so (what it carried did not cross), else True.

    Raises:
        Unserializable: a request (``"q"``) over the message limit.
    """
    data, whole = _dumps(obj)
    send_frame(fd, data)
    return whole


def _dumps(obj):
    """A message as bytes, and whether it is that message: one over ``_MAX_MESSAGE`` is replaced by an answer saying
    its value cannot cross (the other side would take it for garbage)."""
    data = json.dumps(obj).encode()
    if len(data) > _MAX_MESSAGE:
        if "q" in obj:
            raise Unserializable("a message of %d bytes (over the %d MiB limit)" % (len(data), _MAX_MESSAGE >> 20),
                                 "size")
        data = json.dumps({"u": "a value of %d bytes (over the %d MiB limit)" % (len(data), _MAX_MESSAGE >> 20)})
        return data.encode(), False
    return data, True


def _read_exact(fd, n, deadline, output=None):
    """Read ``n`` bytes from ``fd`` by ``deadline`` (monotonic seconds, None: no limit, or a function returning the
    time to wait until before calling it again: see :meth:`.cputime.TestClock.until`); meanwhile keep draining the
    worker's ``output`` (a :class:`WorkerOutput`) so that a worker printing a lot never blocks.

    A function's time is over only when it is earlier than the moment it was called: one that passed while this
    process waited for a CPU after the call (a starved host, a throttled sandbox) means look again, never the end of
    a test whose CPU time is under its limit. Past the deadline, what the worker has already written is still read
    (the judge looked late, the worker did not: its CPU time is checked after the answer)."""
    chunks = []
    while n:
        if deadline is not None or output is not None:
            while True:
                remaining = None
                if _callable(deadline):
                    called = time.monotonic()
                    when = deadline()
                    remaining = None if when < called else max(0.0, when - time.monotonic())
                elif deadline is not None:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        remaining = None
                if deadline is not None and remaining is None:  # over; but an answer already here is read
                    if not select.select([fd], [], [], 0)[0]:
                        raise Timeout()
                    break
                ready = select.select([fd] if output is None else [fd, output.fd], [], [], remaining)[0]
                if not ready:  # the deadline says whether this was the end, or a moment to look at the CPU time
                    continue
                if output is not None and output.fd in ready:
                    output.take()
                if fd in ready:
                    break
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise WorkerDied()
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_frame(fd, deadline=None, output=None):
    """Read one frame from ``fd`` by ``deadline`` (as :func:`_read_exact`'s), draining ``output`` meanwhile.

    Raises:
        Timeout: past ``deadline``.
        WorkerDied: end of file, or a frame over the message limit.
    """
    (size,) = struct.unpack("<I", _read_exact(fd, 4, deadline, output))
    if size > _MAX_MESSAGE:
        raise WorkerDied()
    return _read_exact(fd, size, deadline, output)


def receive(fd, deadline=None, output=None):
    """Read one message (a JSON object) from ``fd``; as :func:`read_frame`, and ``WorkerDied`` when it is not an
    object (``ValueError`` when it is not JSON)."""
    message = json.loads(read_frame(fd, deadline, output))
    if not _isinstance(message, dict):
        raise WorkerDied()
    return message


def write_all(fd, data):
    """Write all of ``data`` (bytes) to the blocking descriptor ``fd``."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def read_up_to(fd, n):
    """Read from ``fd`` until ``n`` bytes or end of file; returns what was read."""
    chunks, size = [], 0
    while size < n:
        chunk = os.read(fd, min(1 << 20, n - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def close_fds_except(keep):
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
