"""The processes the judge starts and controls: the worker (forked, confined, killed through its pidfd or pid), and
forks of the judge itself that run trusted task code (a checker, pytest, a reference) so that it cannot change a
long-lived judge.

The worker's stdout and stderr are a pipe the judge reads (:class:`WorkerOutput`), never the process's own: remote
backends merge a command's stdout and stderr, and nothing the code prints may reach the result channel. The worker
gets no-new-privs (``sudo`` cannot make it root), a fixed environment (:func:`worker_environment`) and, when the
harness runs as root, runs as an account of this run's own (:mod:`.accounts`, :func:`confine`), whose processes and
temporary files :func:`.accounts.sweep_uid` removes; never ``nobody``, which other runs sharing the kernel may use too.
"""

import ctypes
import io
import os
import select
import signal
import struct
import sys
import time

from . import accounts, strays
from .accounts import PROGRAM_UID
from .base import (
    DEFAULT_PATH,
    OUTPUT_RECORD_LIMIT,
    PR_SET_DUMPABLE,
    PR_SET_NO_NEW_PRIVS,
    PR_SET_PDEATHSIG,
    TESTS_MODULE,
    WORKER_ENV,
    WORKER_KEPT,
    ProgramValueError,
    Timeout,
    Unserializable,
    ValueNotSent,
    WorkerDied,
    _callable,
    _getattr,
    _type,
    describe,
    harness_file,
)
from .cputime import CpuReader, TestClock, open_stat, proc_pid, runnable
from .ownership import PROGRAM_VALUES_BUDGET, ProgramValues  # noqa: F401 - re-exported
from .peer import JUDGE_OPS, OPS, Peer, next_items
from .values import decode, encode, strict_str
from .wire import WorkerOutput, close_fds_except, receive, send  # noqa: F401 - WorkerOutput re-exported
from .worker import run_worker


class Worker(ProgramValues, Peer):
    """The judge's side of the conversation with a worker: its pipes, deadlines, and how to kill it.

    ``pidfd`` (judge server): the worker is not our child; killing it through its pidfd and waiting for the pidfd
    to become readable means it and everything it started are gone. ``output``: its stdout/stderr pipe, drained
    while we wait for answers. ``cap``: a deadline (monotonic seconds) no request may pass: the completion's;
    ``deadline``: the current wait's (compiling, an interaction), or ``clock`` (set by :meth:`time_test`): the
    current test's limit on the worker's CPU time, with its wall-clock backstop (see :mod:`.cputime`). ``budget``
    (pytest files): instead, the CPU seconds the current test may still spend in the program: each request the tests
    make gets what is left, and what it took is deducted, so that the judge's own time between requests (pytest,
    fixtures, a test's ``time.sleep``) is never the program's. ``before_request``: called with this worker before
    each request the judge sends, returns what the request carries for the worker to apply first (``"patch"``;
    pytest files: the tests' patches, made in the worker too). Anything but a well-formed message from the worker
    (garbage the code wrote into a pipe, a closed pipe, an answer that does not decode) means the worker is dead to
    us: it is killed.

    Values that cannot cross: the worker's word that a value of the program's cannot be sent (``{"u": ...}``) is
    never taken as "not the program's doing" (the program runs in the worker and can write that reply itself): it is
    the test's failure (:class:`.base.ProgramValueError`). What the judge cannot send is the tests' own
    (:class:`.base.ValueNotSent`, a None reward) unless it holds what the program made or changed (see
    :meth:`not_sent`). ``value_failures`` counts the program's failures raised so far (``value_failure``: the last
    one's text), so that a test that caught one (``except BaseException``) still fails.
    """

    def __init__(self, pid, cmd_w, reply_r, pidfd=None, output=None, name_fd=None):
        super().__init__(cmd_w, reply_r)
        self.pid, self.cmd_w, self.reply_r = pid, cmd_w, reply_r
        self.pidfd, self.output = pidfd, output
        #: A pidfd that only names the worker in ``/proc`` (see :func:`.cputime.proc_pid`), never used to kill or wait
        #: for it: our own child's, whose pid this process's PID namespace numbers, while this ``/proc`` may be an
        #: outer namespace's (a sandbox that shows its host's ``/proc``), where that pid is another process.
        self.name_fd = pidfd if pidfd is not None else name_fd
        self.cap = None
        self.clock = None
        self.cpu = None  # a CpuReader of the worker, made at the first test (or its WorkerGroup)
        #: The sandbox's worker group (:class:`.strays.WorkerGroup`: every process the program starts), or None.
        self.group = None
        #: Without a group: the next top-level request asks the worker to end what the program left (``"k"``).
        self.strays_pending = False
        self.deadline = None
        self.alive = True
        self.depth = 0
        self.budget = None
        self.before_request = None
        self.on_names = None
        self.after_answer = None
        self.test_modules = (TESTS_MODULE,)
        #: A callable returning a fresh :class:`Worker` (set by the server; None: a dead worker stays dead), and what
        #: the workers this one replaced printed (see :meth:`restart`).
        self.respawn = None
        self.earlier_output = b""
        #: What the judge decoded from the program and the tests' objects a call changed, by id (kept alive, so that
        #: an id names that object alone), and how much of it there is (see :data:`PROGRAM_VALUES_BUDGET`).
        self.from_program = {}
        self.program_bytes = 0
        self.flooded = False
        self.value_failures = 0
        self.value_failure = None

    side = 0

    @property
    def deadline(self):
        return self._deadline

    @deadline.setter
    def deadline(self, value):
        """A wall-clock deadline (monotonic seconds, None: none, or a function returning the time to wait until
        before calling it again, as :func:`.wire.read_frame` takes it) instead of a test's clock."""
        self._deadline, self.clock = value, None

    def time_test(self, seconds, extra_wall=0.0):
        """Start the limit of a test (or of loading the program): ``seconds`` of the worker's CPU time, its threads
        and waited-for children included, cut at :data:`.cputime.WALL_FACTOR` times ``seconds`` (plus
        ``extra_wall``) of wall time (see :mod:`.cputime`)."""
        if self.cpu is None:  # a worker in this PID namespace (the fork server gives its own workers' readers)
            # Named through a pidfd when there is one: in a /proc of another PID namespace the bare pid is another
            # process's (no CPU time then, so the test is timed on wall clock; never a stranger's CPU time).
            self.cpu = CpuReader(open_stat(self.pid, self.name_fd))
        clock = TestClock(self.cpu, seconds, extra_wall, busy=self.computing)
        self.deadline = clock.backstop
        self.clock = clock

    def computing(self):
        """Whether a thread of the program is runnable now (see :func:`.cputime.runnable`): of a process of the
        worker group when there is one (everything the program started), else of the worker and its descendants."""
        if self.group is None:
            return runnable([proc_pid(self.pid, self.name_fd)], descendants=True)
        visible = []  # the group's pids are this PID namespace's; this /proc may number them another's
        for pid in self.group.members():
            try:
                pidfd = os.pidfd_open(pid)
            except OSError:  # gone already
                continue
            try:
                visible.append(proc_pid(pid, pidfd))
            finally:
                os.close(pidfd)
        return runnable(visible)

    def descriptors(self):
        """The descriptors this object needs to talk to, time and end the worker (a fork of the judge that uses it,
        pytest's, keeps them)."""
        fds = [self.cmd_w, self.reply_r, self.pidfd, self.name_fd, self.output.fd if self.output is not None else None]
        for reader in (self.cpu, self.group):
            fds += [getattr(reader, name, None) for name in ("fd", "usage_fd", "procs")]
        return [fd for fd in fds if type(fd) is int]

    def end_strays(self):
        """After a test: end every process the program started and left running (a child it never waited for, a
        ``setsid`` daemon), so that none computes for the next test or beside other sandboxes. With a worker group,
        the judge kills them there (:meth:`.strays.WorkerGroup.end_strays`); without, the worker does it before the
        next test's first request (:func:`.strays.end_own_strays`)."""
        if not self.alive:
            return
        if self.group is not None:
            self.group.end_strays(self.pid)
        else:
            self.strays_pending = True

    def _send(self, msg, values=None):
        if not self.alive:
            raise WorkerDied()
        try:
            self.outgoing(msg)
            self._sent(send, self.send_fd, msg)
        except Unserializable as exc:
            self.twins.unsent()
            twin = getattr(exc, "twin", None)  # a changed twin that could not be sent: whose value is it?
            raise self.not_sent(exc, values if twin is None else (values, twin)) from None
        except OSError:
            self.kill()
            raise WorkerDied() from None

    def held(self, obj):
        return 1 if self.from_program.get(id(obj)) is obj else 0

    def incoming(self, msg):
        """The twins' news, then the program's module-level names that changed (``"g"``), given to
        :attr:`on_names` (``on_names(name, value)``, ``value`` :data:`DELETED` for a deleted name)."""
        Peer.incoming(self, msg)
        changed = msg.get("g")
        if changed is not None and self.on_names is not None:
            names = []
            for name, value in changed:
                name = strict_str(name)
                if name.startswith("__"):
                    raise ValueError("bad name")
                names.append((name, DELETED if value is None else decode(value, self)))
            self.received([value for _, value in names])
            for name, value in names:
                self.on_names(name, value)

    def twin_changed(self, obj):
        self.received(obj)  # a test's object the program changed: it holds the program's values now

    def encode(self, value):
        """``value`` as the judge sends it; raises :meth:`not_sent`'s exception when it cannot cross."""
        try:
            return encode(value, self)
        except Unserializable as exc:
            raise self.not_sent(exc, (value,)) from None

    def not_sent(self, exc, values):
        """The exception for a message of the judge's that cannot be sent (``exc``: the
        :class:`.base.Unserializable` saying why; ``values``: the objects it carried, or None).

        :class:`.base.ValueNotSent` (the run is ``unserializable``: a None reward, not the program's doing) when
        the value is the tests' own, else :class:`.base.ProgramValueError` (the test fails): when it holds an object
        the program sent or a test object a call of the program changed (a list the program grew past the message
        limit, or nested deeper than the depth limit, copied back into the test's argument), or when the program
        sent more than the judge keeps track of. A container that contains itself is always the tests' own: what
        the program sends arrives as fresh objects, which never hold the judge's containers."""
        if exc.kind != "cycle" and (self.flooded or self._holds_program_value(values)):
            return self.program_failure("a value it made or changed could not be sent back to it: %s" % (exc,))
        return ValueNotSent(str(exc))

    def program_failure(self, reason):
        """A :class:`.base.ProgramValueError` for ``reason``, counted (see :attr:`value_failures`)."""
        self.value_failures += 1
        self.value_failure = str(reason)[:300]
        return ProgramValueError(self.value_failure)

    def unsent(self, reason):
        """The worker's answer that a value cannot be sent is its own failure, never a None reward: the program
        chose that value, or wrote that answer itself."""
        return self.program_failure(reason)

    def _read(self):
        deadline, clock, cap = self.deadline, self.clock, self.cap
        if clock is not None:
            deadline = clock.until if cap is None else (lambda: min(clock.until(), cap))
        elif cap is not None and _callable(deadline):
            deadline = (lambda until=deadline: min(until(), cap))
        elif cap is not None:
            deadline = cap if deadline is None else min(deadline, cap)
        try:
            msg = receive(self.reply_r, deadline, self.output)
        except Timeout:
            self.kill()
            raise
        except (WorkerDied, OSError, ValueError, RecursionError, struct.error):
            self.kill()
            raise WorkerDied() from None
        try:
            self.incoming(msg)
        except (Timeout, WorkerDied, ValueNotSent, ProgramValueError):
            raise
        except Exception:  # noqa: BLE001 - news that is not the harness's: the worker is not the harness any more
            self.kill()
            raise WorkerDied() from None
        return msg

    def request(self, msg, mutable=None, raw=False, values=None):
        self.depth += 1
        start = None
        try:
            if self.depth > 200:
                raise RecursionError("calls between the tests and the program nested too deep")
            if self.depth == 1 and self.budget is not None:
                self.time_test(self.budget)
                start = self.clock
            if self.before_request is not None:
                news = self.before_request(self)
                if news:
                    msg["patch"] = news
            if self.depth == 1 and self.strays_pending:
                self.strays_pending = False
                msg["k"] = 1
            answer = super().request(msg, mutable, raw, values)
            if self.depth == 1 and self.clock is not None:
                try:  # threads, or a child the worker waited for, may have used more CPU than the wall time passed
                    self.clock.check()
                except Timeout:
                    self.kill()
                    raise
            return answer
        finally:
            self.depth -= 1
            if start is not None:
                self.budget = max(0.0, self.budget - start.used())

    def _unwrap(self, answer, mutable):
        if self.after_answer is not None:  # pytest files: the program's warnings, log records, random states
            self.after_answer(answer)
        if "e" in answer or "u" in answer:
            return super()._unwrap(answer, mutable)  # raises the program's exception (rebuilt here), or its failure
        try:
            return super()._unwrap(answer, mutable)
        except (Timeout, WorkerDied, ValueNotSent, ProgramValueError):
            raise
        except Exception:  # noqa: BLE001 - an answer that is not a value: the worker is not the harness any more
            self.kill()
            raise WorkerDied() from None

    def serve(self, msg):
        """Callbacks of the worker on objects the judge lent (the tests' lambdas, iterators and objects): calls,
        iteration and the plain operations of :data:`.peer.JUDGE_OPS`; public attributes (read, set and deleted)
        only of instances of classes the tests define, and (read) of the tests' memory files (a ``StringIO`` patched
        in as ``sys.stdin``), of a few standard library classes (a ``queue.Queue``) and of their mocks (see
        :func:`_lent_attribute`). Nothing else of the judge is reachable."""
        op = msg.get("q")

        def run():
            target = self.handles[msg["h"]]
            if op == "call" and _callable(target):
                args = [decode(a, self) for a in msg.get("args", ())]
                kwargs = {str(k): decode(v, self) for k, v in msg.get("kw", ())}
                self.received((args, kwargs))  # a test's callback may keep them, and send them back later
                return target(*args, **kwargs)
            if op == "next":
                return next_items(target, int(msg["n"]), self.pending)
            if op == "op" and msg.get("name") in JUDGE_OPS:
                fn, arity = OPS[msg["name"]]
                return fn(target, *[decode(a, self) for a in msg.get("args", ())][:arity])
            name = msg.get("name")
            if op in ("get", "set", "del") and _type(name) is str and not name.startswith("_"):
                own = _getattr(_type(target), "__module__", None) in self.test_modules
                if op == "get" and (own or _lent_attribute(target, name)):
                    value = _getattr(target, name)
                    if not own and name in _BLOCKING and _type(target) not in (io.StringIO, io.BytesIO):
                        return self.bounded(value)
                    return value
                if op == "set" and own:  # a linked list's node the program relinks, a dataclass it updates
                    value = decode(msg["args"][0], self)
                    self.received(value)
                    return setattr(target, name, value)
                if op == "del" and own:
                    return delattr(target, name)
            raise TypeError("the tests' objects do not support %r here" % (name or op,))

        return self.answer(run, msg)

    def bounded(self, method):
        """``method`` (a lent ``Queue.get``/``put``, ``Event.wait``) waiting at most the current test's remaining
        time: a program that waits on a test's empty queue times out its test, never the judge."""
        name = _getattr(method, "__name__", "")

        def call(*args, **kwargs):
            remaining = 1.0 if self.deadline is None else max(0.0, self.deadline - time.monotonic())
            item = ()
            if name == "put":  # put(item, block=True, timeout=None)
                item, args = args[:1], args[1:]
            names = ("block", "timeout") if name != "wait" else ("timeout",)
            given = dict(zip(names, args), **kwargs)
            timeout = given.get("timeout")
            timeout = remaining if timeout is None else min(float(timeout), remaining)
            if name == "wait":
                return method(timeout)
            return method(*item, block=bool(given.get("block", True)), timeout=timeout)

        return call

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
        if self.cpu is not None:
            self.cpu.close()
            self.cpu = None
        for fd in {self.cmd_w, self.reply_r, self.pidfd, self.name_fd} - {None}:  # name_fd may be pidfd
            os.close(fd)
        self.cmd_w = self.reply_r = self.pidfd = self.name_fd = None
        output, self.output = (self.output.finish() if self.output is not None else b""), None
        return self.earlier_output + output

    def restart(self):
        """Replace this (dead or stuck) worker by a fresh one from :attr:`respawn`, in place: the judge then loads the
        program again. The new worker never saw the request either (the fork server, or a zygote forked before the
        request was read, starts it). Raises :class:`.base.WorkerDied` when no fresh worker can be had."""
        spawn, cap = self.respawn, self.cap
        if spawn is None:
            raise WorkerDied()
        earlier = self.close()
        try:
            fresh = spawn()
        except Exception:  # noqa: BLE001 - e.g. the fork server is gone: the run ends as a crash
            self.earlier_output = earlier
            raise WorkerDied() from None
        # What the program sent and its failures so far stay known: the tests still hold those values.
        kept = {name: self.__dict__[name] for name in ("from_program", "program_bytes", "flooded", "value_failures",
                                                       "value_failure")}
        self.__dict__.update(fresh.__dict__)
        self.__dict__.update(kept)
        self.respawn, self.cap, self.earlier_output = spawn, cap, earlier


_MISSING = object()
#: Standard library classes of the tests' whose listed attributes (their methods) the program may use, as it would in
#: the tests' process: a ``queue.Queue`` it fills or drains, an ``Event`` it sets, a logger it logs to. Nothing that
#: reaches their internals (a logger's handlers, a queue's lock), nothing that blocks without a deadline
#: (``Queue.join``); ``get``, ``put`` and ``wait`` wait at most the current test's time (see :meth:`Worker.bounded`).
_QUEUE = frozenset({"put", "put_nowait", "get", "get_nowait", "qsize", "empty", "full", "task_done", "maxsize"})
_LOGGER = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log",
                     "isEnabledFor", "getEffectiveLevel", "name", "level"})
_LENT_CLASSES = {
    ("queue", "Queue"): _QUEUE, ("queue", "LifoQueue"): _QUEUE, ("queue", "PriorityQueue"): _QUEUE,
    ("queue", "SimpleQueue"): _QUEUE, ("_queue", "SimpleQueue"): _QUEUE,
    ("threading", "Event"): frozenset({"set", "clear", "is_set", "isSet", "wait"}),
    ("logging", "Logger"): _LOGGER, ("logging", "RootLogger"): _LOGGER, ("logging", "LoggerAdapter"): _LOGGER,
}
#: The lent methods that may block: called with the current test's remaining time as their timeout.
_BLOCKING = frozenset({"get", "put", "wait"})
DELETED = object()


def _lent_attribute(target, name):
    """Whether the worker may read attribute ``name`` of the judge's ``target``: any public one of a memory file
    (``io.StringIO``, ``io.BytesIO``: a test's stdin) and of the standard library classes of :data:`_LENT_CLASSES`,
    and of a mock (``unittest.mock``) only what is not the mock's
    own API: its children and the attributes the test configured (``response.json``, ``handle.read``), never
    ``reset_mock``, ``call_count`` or ``assert_called_with``, so the program can call a test's mock but never
    rewrite what it recorded."""
    cls = _type(target)
    if cls is io.StringIO or cls is io.BytesIO:
        return True
    names = _LENT_CLASSES.get((_getattr(cls, "__module__", None), _getattr(cls, "__qualname__", None)))
    if names is not None:
        return name in names
    mock = sys.modules.get("unittest.mock")
    return mock is not None and issubclass(cls, mock.NonCallableMock) and _getattr(cls, name, _MISSING) is _MISSING


def _deny_processes():
    """Forbid the worker to create processes (threads stay allowed): the backend asks for it where it cannot
    bound process counts per sandbox. Fails closed: without the filter the worker exits."""
    try:
        import trl_sandbox_seccomp  # the archive's copy of trl_sandbox/backends/_seccomp.py (see .archive)

        trl_sandbox_seccomp.install(trl_sandbox_seccomp.build_no_processes())
    except BaseException as exc:  # noqa: BLE001
        os.write(2, ("trl-sandbox: cannot forbid process creation: %s\n" % exc).encode())
        os._exit(70)


def confine(home):
    """In the process that will run the code (a remote sandbox's worker or session): no-new-privs, so that no setuid
    program (``sudo``, ``su``) can give the code more privileges than it starts with; then, given a ``home``, work
    there and, when root, become :data:`PROGRAM_UID` (and die with the process that forked it: the credentials'
    change cleared that). Exits (70) when no-new-privs cannot be set."""
    if ctypes.CDLL(None).prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        os._exit(70)
    if home is not None:
        os.chdir(home)
        if os.geteuid() == 0:
            accounts.become(PROGRAM_UID[0])
            ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def worker_environment(home):
    """The environment the code runs with: :data:`.base.WORKER_ENV`, the variables of :data:`.base.WORKER_KEPT` this
    process has (``PATH`` else :data:`.base.DEFAULT_PATH`), and ``HOME`` and ``TMPDIR`` set to ``home`` (else the
    working directory). Nothing else of this process's environment: a remote service gives its commands its own
    (``env_vars``, tokens, proxies), which reach the judge only."""
    env = dict(WORKER_ENV)
    for name in WORKER_KEPT:
        if os.environ.get(name):
            env[name] = os.environ[name]
    env.setdefault("PATH", DEFAULT_PATH)
    env["HOME"] = env["TMPDIR"] = home if home is not None else os.getcwd()
    return env


def spawn_worker(result_fd, out_r, out_w, home, close=()):
    """Fork the worker (``main``). Its stdout and stderr are ``out_w``, a pipe the judge reads: remote backends
    merge a command's stdout and stderr, so nothing the code prints may reach the result channel directly. When the
    harness runs as root (a remote sandbox's default user), the worker is PID 1 of a PID namespace of its own where
    the kernel allows it (:func:`.strays.fork_in_own_pidns`) and runs as this run's account (:data:`PROGRAM_UID`) in
    ``home``; it never holds the account's claim. Its environment is :func:`worker_environment`'s. ``close``: more
    descriptors the worker must not keep (``result_fd`` may be None: the zygote holds none)."""
    cmd_r, cmd_w = os.pipe()
    reply_r, reply_w = os.pipe()
    pid = strays.fork_in_own_pidns()
    if pid == 0:
        try:
            for fd in (result_fd, accounts.claim_fd(), *close):
                if fd is not None:
                    os.close(fd)
            os.setsid()  # its own session and process group: kill(0, ...) reaches nothing of the judge's
            os.close(out_r)
            os.close(cmd_w)
            os.close(reply_r)
            devnull = os.open(os.devnull, os.O_RDONLY)  # stdin carries the request: never readable here
            os.dup2(devnull, 0)
            os.close(devnull)
            os.dup2(out_w, 1)
            os.dup2(out_w, 2)
            os.close(out_w)
            deny = os.environ.get("TRL_SANDBOX_DENY_PROCESSES") == "1"
            confine(home)
            env = worker_environment(home)
            os.environ.clear()  # unsetenv() each: the C environment that exec() passes on is emptied too
            os.environ.update(env)
            if deny:
                _deny_processes()
        except BaseException as exc:  # noqa: BLE001 - never run the code half set up
            os.write(2, ("trl-sandbox: worker setup failed: %s\n" % (exc,)).encode())
            os._exit(70)
        run_worker(cmd_r, reply_w)
        os._exit(0)
    os.close(cmd_r)
    os.close(reply_w)
    os.close(out_w)
    name_fd = None
    try:  # our child, not reaped yet: its pid cannot have been reused
        name_fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # Python < 3.9, Linux < 5.3: the pid as this /proc numbers it, as before
        pass
    return Worker(pid, cmd_w, reply_r, output=WorkerOutput(out_r, OUTPUT_RECORD_LIMIT), name_fd=name_fd)


def run_in_child(fn, deadline, keep=(), records=None):
    """Run ``fn(emit)`` in a fork of this (trusted) process, so that task code (a checker, pytest) cannot change a
    long-lived judge; returns the list of records it emitted (appended to ``records`` as they come, when given),
    ``{"child_error": ...}`` last when it failed. Raises :class:`.base.Timeout` past ``deadline`` (monotonic
    seconds), after killing it (``records`` then holds what came before).

    The child keeps only its record pipe and the descriptors in ``keep``: never the judge's result channel or its
    connection to the host, so that even task code that evaluates what the program printed (a checker calling
    ``eval``) cannot write the judge's records."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            close_fds_except({w, *keep})
            ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        except (OSError, AttributeError):
            pass
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        try:
            fn(lambda record: send(w, record))
            send(w, {"end": True})
        except BaseException as exc:  # noqa: BLE001
            try:
                send(w, {"child_error": describe(exc)})
            except BaseException:  # noqa: BLE001
                pass
        os._exit(0)
    os.close(w)
    records = [] if records is None else records
    try:
        while True:
            try:
                record = receive(r, deadline)
            except WorkerDied:
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


def own_sandbox():
    """True when this process runs where the backend isolates each execution by itself (the local backend: a fresh,
    writable scratch directory that is not the harness's own, an unprivileged uid); False on a remote backend, whose
    commands all run in the sandbox's one working directory, as the sandbox's user."""
    here = os.path.dirname(harness_file())
    return (os.geteuid() != 0 and os.access(".", os.W_OK)
            and os.path.realpath(os.getcwd()) != os.path.realpath(here))


#: The worker's home when ``python harness.pyz`` runs as root (the worker runs as ``nobody`` there), set by
#: :func:`.server.main`.
WORKER_HOME = [None]
