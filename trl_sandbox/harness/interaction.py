"""Interactive problems: the program and the task's interactor, connected by two pipes, judged as Kattis
problemtools' ``interactive`` runner judges them (``support/interactive/interactive.cc`` and ``problemtools/run``).

The pipes are direct: FIFOs the worker makes in its own directory, opening the program's ends at once
(:func:`.stdio.make_fifos`); the judge opens the interactor's ends, removes the FIFOs, starts the interactor (a fork of
the judge: never in the program's reach, see :func:`.checkers.start_judge_program`), then has the worker run the
program on its ends. Nothing relays the bytes.

Conventions: testlib's ``interactor input tout answer`` (``registerInteraction``: it reads the program's output on
stdin and writes to the program on stdout; ``tout`` is a file it writes for the problem's checker, which then runs on
``input tout answer`` when the task has one, as Polygon runs it) and Kattis' interactive output validators
(``validator input judge_answer feedback_dir [flags]``, 42 accepts, 43 rejects).

Time, as problemtools: the program's CPU time (its process and children: ``rusage``) within the test's limit, the
whole interaction within :data:`.cputime.WALL_FACTOR` times the limit of wall time (a program that blocks on a read
the interactor never answers, or sleeps; problemtools gives twice the limit, ours is the backstop of every test);
the interactor has its own limits (:data:`INTERACTOR_CPU_S`, and :data:`INTERACTOR_GRACE_S` of wall time after the
program ended). Verdict precedence, as problemtools': (1) the interactor's judge error (a crash, a timeout,
an exit code its convention never gives, testlib's ``_fail``): the task's fault, ``invalid``; (2) an interactor that
rejected and exited before the program ended: its verdict (the program then sees its input end, and whatever it does
next is not held against it twice; "before": the program's input had hung up when it ended, as the worker sees it, or
the interactor's end was seen first); (3) the program's time limit; (4) the program's crash; (5) the interactor's
verdict. The judge keeps the read end of the program's output open until the program ends, as problemtools does, so
that a program whose interactor accepted and exited is not killed by ``SIGPIPE`` for writing more.
"""

import errno
import os
import signal
import stat
import threading
import time

from .base import Timeout, WorkerDied, _type, describe
from .checkers import (
    _STARTED,
    CHECKER_TIMEOUT_S,
    _memory_file,
    _remove,
    feedback_dir,
    kattis_verdict,
    read_feedback,
    run_checker,
    start_judge_program,
    testlib_verdict,
)
from .cputime import WALL_FACTOR
from .accounts import PROGRAM_UID, sweep_program
from .wire import read_up_to

#: CPU seconds of the interactor per test: the most of 4 × the test's limit (Frontier-CS's interactor limit) and
#: this many.
INTERACTOR_CPU_S = 10.0
#: Wall seconds the interactor may run after the program ended before it is a judge error.
INTERACTOR_GRACE_S = 5.0
#: Bytes of the interactor's messages (stderr) kept.
MESSAGE_LIMIT = 65536


class _Interactor:
    """The interactor's process as the judge watches it: a thread reads its messages and reaps it, noting when it
    ended (``ended``: monotonic seconds)."""

    def __init__(self, pid, err_r):
        self.pid, self.err_r = pid, err_r
        self.message = bytearray()
        self.started = None
        self.status = None
        self.ended = None
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self):
        try:
            while True:
                chunk = os.read(self.err_r, 65536)
                if not chunk:
                    break
                if self.started is None:
                    self.started = chunk.startswith(_STARTED)
                    chunk = chunk[len(_STARTED):] if self.started else chunk
                self.message += chunk
                del self.message[:-MESSAGE_LIMIT]
        except OSError:
            pass
        _, self.status = os.waitpid(self.pid, 0)
        self.ended = time.monotonic()

    def wait(self, deadline, kill=True):
        """Wait for it to end until ``deadline``; past it, kill it (unless not ``kill``). Returns False when it had
        not ended by itself."""
        self.thread.join(max(0.0, deadline - time.monotonic()))
        if self.thread.is_alive():
            if kill:
                self.kill()
            return False
        return True

    def kill(self):
        """Kill it and wait for the watching thread (which reaps it)."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.thread.join()

    def close(self):
        """Whatever happened: the process gone and reaped, the thread ended, then its message pipe closed."""
        if self.thread.is_alive():
            self.kill()
        os.close(self.err_r)


def _open_fifo(name, flags, dir_fd):
    """Open the FIFO ``name`` of the directory ``dir_fd``, never following a link and never blocking; refuse anything
    but a FIFO with one name (the worker runs the program's code: what it names is not trusted). Returns a blocking
    descriptor."""
    fd = os.open(name, flags | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    info = os.fstat(fd)
    if not stat.S_ISFIFO(info.st_mode) or info.st_nlink != 1:
        os.close(fd)
        raise OSError("not a FIFO of its own: %s" % name)
    os.set_blocking(fd, True)
    return fd


def _open_pipes(home):
    """The interactor's ends of the FIFOs the worker made in ``home`` (``(from_program, to_program)``), opened through
    the directory itself (``O_DIRECTORY | O_NOFOLLOW``, owned by the worker's user), then unlinked from it. Raises
    OSError for anything else."""
    dir_fd = os.open(home, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    opened = []
    try:
        if os.fstat(dir_fd).st_uid not in (os.geteuid(), PROGRAM_UID[0]):
            raise OSError("the interaction's directory is not the worker's")
        opened.append(_open_fifo("from_program", os.O_RDONLY, dir_fd))
        opened.append(_open_fifo("to_program", os.O_WRONLY, dir_fd))
        first, second = (os.fstat(fd) for fd in opened)
        if (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino):
            raise OSError("the interaction's two FIFOs are one")
        for name in ("to_program", "from_program"):
            os.unlink(name, dir_fd=dir_fd)
    except BaseException:
        for fd in opened:
            os.close(fd)
        raise
    finally:
        os.close(dir_fd)
    return opened[0], opened[1]


def _leftovers_gone(worker):
    """End what the program may have left holding its end of the pipes (a descriptor it duplicated, a process it
    detached): the worker, and with it its PID namespace (local backend; remote as root where the kernel allows);
    as root, every process of this run's account."""
    worker.kill()
    sweep_program()


#: Seconds a program may go on once its interactor rejected it and ended (its verdict is given): then it is ended.
REJECTED_GRACE_S = 0.5
#: The exit statuses by which an interactor does not reject outright, by convention: testlib's ``_ok`` (0) and
#: ``_points`` (7), Kattis' accept (42). Any other end rejects the program, whatever it does next.
NOT_REJECTED = {"testlib": (0, 7), "kattis": (42,)}


#: Seconds the interactor gets to end by itself once the program's run ended, before the program's leftovers are
#: ended (see :func:`_leftovers_gone`) and its grace starts.
SETTLE_S = 0.2


#: Seconds by which an interactor's end must come before a compiled program's measured end to count as first: the
#: worker sees the program's end when it is woken by it, a scheduling delay after (a Python program's end is exact).
NATIVE_END_SLACK_S = 0.05


def run_interaction(worker, spec, compare, text, answer, timeout, limit, native=False):
    """Run one interactive test: the program against the interactor ``spec`` (``{"interactor": source}`` or a
    compiled one, ``convention`` ``testlib`` | ``kattis``, ``flags``, ``points_max``) on input ``text`` with the
    jury's ``answer``. ``compare``: the task's checker, run on ``input tout answer`` after a testlib interactor
    accepted (else None). ``timeout``: the program's CPU seconds; the interaction gets
    :data:`.cputime.WALL_FACTOR` times that of wall time.
    ``native``: a compiled program (its end is known a moment late: see :data:`NATIVE_END_SLACK_S`).

    What the program does cannot make the interactor look broken (an ``invalid`` verdict, which voids the reward):
    a program whose earlier tests left processes or threads that fill the process limit fails the test; a program
    that keeps its output open after its run (a duplicated descriptor, a detached process) has it closed, its worker
    killed (:func:`_leftovers_gone`), before the interactor's grace starts.

    Returns ``(verdict, reply)``: ``verdict`` True, ``{"ok": False, "error", "score"?}``, ``{"ok": False,
    "crash"}`` (the program crashed or broke the interaction) or ``{"ok": False, "invalid"}``; ``reply`` the worker's
    reply, or None when it has none. The worker may be killed (``worker.alive``): the caller replaces it. Raises
    :class:`.base.Timeout` when the program ran past its time (the verdict of an interactor that rejected first
    aside), :class:`.base.WorkerDied` when the worker's answer is not the harness's."""
    convention = spec.get("convention") or "testlib"
    home = worker.request({"q": "fifos"})
    if _type(home) is not str or not home.startswith("/"):
        worker.kill()
        raise WorkerDied()
    opened = []
    feedback = None
    interactor = None
    try:
        try:
            from_program, to_program = _open_pipes(home)
        except OSError as exc:
            worker.kill()
            return {"ok": False, "crash": "the interaction's pipes could not be opened: %s" % exc}, None
        opened += [from_program, to_program]
        data = [t.encode("utf-8", errors="replace") for t in (text, answer or "")]
        input_fd, answer_fd = _memory_file(0, data[0]), _memory_file(2, data[1])
        opened += [input_fd, answer_fd]
        tout_fd = None
        if convention == "kattis":
            feedback = feedback_dir()
            args = ["/proc/self/fd/%d" % input_fd, "/proc/self/fd/%d" % answer_fd, feedback + "/"]
        else:
            tout_fd = _memory_file(1, b"")
            opened.append(tout_fd)
            args = ["/proc/self/fd/%d" % fd for fd in (input_fd, tout_fd, answer_fd)]
        err_r, err_w = os.pipe()
        try:
            pid = start_judge_program(spec, args, (from_program, to_program, err_w),
                                      max(INTERACTOR_CPU_S, 4 * timeout), files=opened, name="interactor",
                                      started_on=2)
        except OSError as exc:
            os.close(err_r)
            if exc.errno != errno.EAGAIN:
                return {"ok": False, "invalid": "the interactor could not be started: %s" % (exc,)}, None
            _leftovers_gone(worker)  # the process limit, filled by what the program left running
            return {"ok": False, "crash": "the program's processes left no room to start the interactor"}, None
        except ValueError as exc:
            os.close(err_r)
            return {"ok": False, "invalid": "the interactor could not be started: %s" % (exc,)}, None
        finally:
            os.close(err_w)
        try:
            interactor = _Interactor(pid, err_r)
        except RuntimeError:  # no thread could be started: the process limit again
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(err_r)
            _leftovers_gone(worker)
            return {"ok": False, "crash": "the program's processes left no room to run the interaction"}, None
        os.close(to_program)  # the interactor's alone: the program sees its input end when the interactor ends
        opened.remove(to_program)
        wall = WALL_FACTOR * timeout
        backstop = time.monotonic() + wall + 1.0
        not_rejected = NOT_REJECTED.get(convention, (0,))

        ended_program = []

        def until():
            # The interactor has rejected and ended: the program ends REJECTED_GRACE_S later (it cannot change the
            # verdict any more), not at its backstop, which would hold the sandbox and a host slot for nothing. A
            # Python program runs in the worker, which is killed (and replaced for the next test); a compiled one is
            # the worker's child, killed through the worker group where there is one (else at its own limit), so
            # that the worker, which holds the binary, runs the next test.
            status = interactor.status
            if interactor.ended is not None and status is not None and not (
                    os.WIFEXITED(status) and os.WEXITSTATUS(status) in not_rejected):
                end = interactor.ended + REJECTED_GRACE_S
                if not native:
                    return min(backstop, end)
                if time.monotonic() >= end and not ended_program:
                    ended_program.append(worker.end_strays())
            return min(backstop, time.monotonic() + 0.05)  # look again in 50 ms

        worker.deadline = until
        reply = None
        timed_out = False
        broken = None
        started = time.monotonic()
        try:
            reply = worker.request({"q": "stdio", "interact": True, "limit": limit, "timeout": timeout})
        except Timeout:
            timed_out = True
        except WorkerDied:
            pass
        except Exception as exc:  # noqa: BLE001 - e.g. the worker's own descriptors, which the program closed
            broken = describe(exc)
            worker.kill()
        program_end = time.monotonic()
        if timed_out:  # the program was cut at the deadline (the worker may be killed already)
            program_end = min(program_end, until())
            worker.kill()
        elif _type(reply) is dict and _type(reply.get("end")) is float:  # when the program's run ended (the same
            program_end = min(program_end, max(started, reply["end"]))  # system-wide monotonic clock)
        os.close(from_program)
        opened.remove(from_program)
        if reply is not None and (_type(reply) is not dict or _type(reply.get("out")) is not str):
            worker.kill()
            raise WorkerDied()
        grace = max(INTERACTOR_GRACE_S, wall)
        if not interactor.wait(time.monotonic() + SETTLE_S, kill=False):
            _leftovers_gone(worker)  # nothing of the program may hold its output open any more
        finished = interactor.wait(time.monotonic() + grace)
        message = bytes(interactor.message).decode("utf-8", errors="replace")
        found = read_feedback(feedback) if feedback is not None else {}
        tout = b""
        if tout_fd is not None:
            os.lseek(tout_fd, 0, os.SEEK_SET)
            tout = read_up_to(tout_fd, 64 << 20)
    finally:
        for fd in opened:
            os.close(fd)
        if feedback is not None:
            _remove(feedback)
        if interactor is not None:
            interactor.close()
    if broken is not None:
        return {"ok": False, "crash": broken}, reply
    # (1) the interactor's own failure: the task's fault
    if not finished:
        return {"ok": False, "invalid": "the interactor did not finish %.0f s after the program ended"
                % max(INTERACTOR_GRACE_S, wall)}, reply
    if not interactor.started:
        return {"ok": False, "invalid": "the interactor could not be started"}, reply
    status = interactor.status
    if os.WIFSIGNALED(status):
        return {"ok": False, "invalid": "the interactor was killed by signal %d" % os.WTERMSIG(status)}, reply
    code = os.WEXITSTATUS(status)
    points_max = spec.get("points_max")
    if convention == "kattis":
        verdict = kattis_verdict(code, found, points_max, what="interactive validator")
    else:
        verdict = testlib_verdict(code, message, points_max, what="interactor")
    if verdict is not True and "invalid" in verdict:
        return verdict, reply
    # (2) it rejected, and ended before the program did
    slack = NATIVE_END_SLACK_S if native else 0.0
    # Ended first: it closed the program's input before the program ended (the worker saw the input hung up: the
    # program then failed on what the interactor did), or its end was seen before the program's.
    if verdict is not True and "score" not in verdict and (
            (_type(reply) is dict and reply.get("input_closed") is True)
            or (interactor.ended is not None and interactor.ended < program_end - slack)):
        return verdict, reply
    # (3) the program's time, (4) its crash: the caller reports them
    cpu = (reply or {}).get("cpu_s")
    if timed_out or (reply or {}).get("timeout") or (_type(cpu) in (int, float) and cpu > timeout):
        raise Timeout()
    if reply is None:
        return {"ok": False, "crash": "the program ended its process"}, None
    if reply.get("error") or reply.get("exit") or reply.get("ended"):
        return {"ok": False, "crash": reply.get("error") or "exit status %s" % (reply.get("exit") or
                                                                             reply.get("ended"),)}, reply
    # (5) the interactor's verdict, then the checker on what it wrote to tout
    if verdict is True and compare and "checker" in compare and convention == "testlib":
        verdict = run_checker(compare, text, tout.decode("utf-8", errors="replace"), answer or "", worker)
    return verdict, reply


__all__ = ["CHECKER_TIMEOUT_S", "INTERACTOR_CPU_S", "INTERACTOR_GRACE_S", "run_interaction"]
