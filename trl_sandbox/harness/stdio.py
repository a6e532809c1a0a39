"""One run of a program on one test's input: its stdin and stdout as files, and a Python program run in the worker.

A Python program of a stdin/stdout task runs in the worker itself (:func:`run_stdin`: no new interpreter per test);
a program in another language runs as a process of its own (:mod:`.native`). Both read their input from, and write
their output to, files of their own (:func:`program_files`, :func:`program_output`).
"""

import _thread
import builtins
import gc
import io
import os
import posix
import select
import signal
import sys
import time

from . import cputime
from .base import describe, print_program_traceback
from .wire import read_up_to, write_all


def peak_rss():
    """Peak resident memory of this process so far, bytes (``ru_maxrss``, kilobytes on Linux)."""
    try:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    except (ImportError, OSError, ValueError):
        return 0


def memory_file(name):
    """A descriptor of a new file for a program's stdin or stdout: in memory (``memfd_create``, no path another
    process could open), else ``name.txt`` in the working directory."""
    try:
        return os.memfd_create(name, os.MFD_CLOEXEC)
    except (AttributeError, OSError):
        fd = os.open(name + ".txt", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        os.unlink(name + ".txt")
        return fd


def program_files(text, files, only=False):
    """``(stdin, stdout)`` descriptors for one run of a program: ``text`` in a memory file, and an empty one. With
    ``files`` (``(input name, output name)``), the input is also written to that file and the output file removed;
    ``only``: stdin is empty (the input is in the file alone, as piston's runner gives a file-mode program no
    stdin)."""
    data = text.encode()
    if files:
        with open(files[0], "wb") as f:
            f.write(data)
        try:
            os.unlink(files[1])
        except OSError:
            pass
    in_fd = memory_file("stdin")
    if not (files and only):
        write_all(in_fd, data)
    os.lseek(in_fd, 0, os.SEEK_SET)
    return in_fd, memory_file("stdout")


def program_output(out_fd, limit, files, only=False):
    """``{"out", "truncated"?}`` of a run: the output file of ``files`` when the program wrote it, else what it
    printed to ``out_fd`` (closed here); at most ``limit`` bytes. ``only``: the output file alone, empty when the
    program wrote none (piston's runner sends a file-mode program's stdout to ``/dev/null``)."""
    if files and only and not os.path.isfile(files[1]):
        raw = b""
    elif files and os.path.isfile(files[1]):
        with open(files[1], "rb") as f:
            raw = f.read(limit + 1)
    else:
        os.lseek(out_fd, 0, os.SEEK_SET)
        raw = read_up_to(out_fd, limit + 1)
    os.close(out_fd)
    reply = {"out": raw[:limit].decode("utf-8", errors="replace")}
    if len(raw) > limit:
        reply["truncated"] = True
    return reply


def input_hung_up(fd):
    """Whether every writer of the pipe or FIFO ``fd`` (a program's input) has closed it (``POLLHUP``): an
    interactor that ended, or closed the program's input, before the program ended (see
    :func:`.interaction.run_interaction`, rule 2)."""
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return any(events & select.POLLHUP for _, events in poller.poll(0))
    except (OSError, ValueError):
        return False


def wait_child(pid, deadline, usage_out=None, ceiling=None):
    """Wait for child ``pid`` until ``deadline`` (monotonic seconds); past it, kill its process group. Returns
    ``(status, peak resident bytes, timed out)``; ``usage_out`` (a dict), when given, gets ``cpu_s``: the child's
    user and system CPU seconds (``wait4``'s ``rusage``, its waited-for children included). With a ``ceiling``
    (monotonic seconds), the deadline moves on while the child or a descendant of it is runnable, up to the ceiling
    (a program that computes on a busy host is cut by its CPU-time limit, not the wall clock: see :mod:`.cputime`),
    and while that cannot be read (a worker that may not read ``/proc``): the judge, which times the worker with the
    same rule, then ends a program that sleeps."""
    pause = 0.0005
    try:  # woken when it ends, not on the next poll: a compiled program's test costs a fork and exec, no more
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        now = time.monotonic()  # the one clock reading of this look: a wait for a CPU after it moves no deadline
        if (now >= deadline and ceiling is not None and now < ceiling
                and cputime.runnable([cputime.proc_pid(pid, pidfd)], descendants=True) is not False):
            deadline = min(now + cputime.RUNNABLE_RECHECK_S, ceiling)
        if pidfd is not None and now < deadline:
            select.select([pidfd], [], [], max(0.0, deadline - time.monotonic()))
            if usage_out is not None:
                usage_out["end"] = time.monotonic()  # woken by its end (a moment after it)
            continue
        if now >= deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            _pid, status, usage = os.wait4(pid, 0)
            if pidfd is not None:
                os.close(pidfd)
            if usage_out is not None:
                usage_out["cpu_s"] = usage.ru_utime + usage.ru_stime
            return status, usage.ru_maxrss * 1024, True
        time.sleep(pause)
        pause = min(pause * 2, 0.01)
    if pidfd is not None:
        os.close(pidfd)
    try:
        os.killpg(pid, signal.SIGKILL)  # what it left running in its group
    except OSError:
        pass
    if usage_out is not None:
        usage_out["cpu_s"] = usage.ru_utime + usage.ru_stime
    return status, usage.ru_maxrss * 1024, False


def exit_error(status):
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


def exit_status(code):
    """The exit status of ``python3 prog.py`` for ``SystemExit(code)`` (CPython's ``handle_system_exit``): 0 for
    None, an integer's low 8 bits, else 1 (the object is printed to stderr)."""
    if code is None:
        return 0
    if type(code) is int:  # noqa: E721 - exactly int: a bool is printed, as CPython does
        return code & 0xFF
    try:
        sys.stderr.write("%s\n" % (code,))
    except BaseException:  # noqa: BLE001
        pass
    return 1


def raise_stack_limit():
    """Let the main thread's stack grow as far as the hard limit allows: Codeforces and open-r1's runner start
    programs with ``ulimit -s unlimited`` (deep recursion after ``sys.setrecursionlimit``). The address-space limit
    still bounds it."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
        if soft != hard:
            resource.setrlimit(resource.RLIMIT_STACK, (hard, hard))
    except (ImportError, OSError, ValueError):
        pass


def _finish_like_python():
    """What CPython does at exit after ``__main__`` ran (``Py_FinalizeEx``): wait for the threads the program started
    and did not join (non-daemon ones), run its ``atexit`` handlers, flush ``sys.stdout``."""
    threading = sys.modules.get("threading")
    if threading is not None:
        try:
            main = threading.main_thread()
            for thread in threading.enumerate():
                if thread is not main and not thread.daemon:
                    thread.join()
        except BaseException:  # noqa: BLE001
            pass
    atexit = sys.modules.get("atexit")
    if atexit is not None:
        try:
            atexit._run_exitfuncs()
        except BaseException:  # noqa: BLE001 - CPython prints it and goes on
            pass
        try:
            atexit._clear()
        except BaseException:  # noqa: BLE001
            pass
    for stream in (sys.stdout, sys.__stdout__):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001
            pass


#: The run of a stdin program in progress in this process (see :func:`_os_exit`), under ``"current"``.
_RUN = {}
_EXIT_LOCK = _thread.allocate_lock()
_REAL_EXIT = os._exit


def _os_exit(status):
    """``os._exit`` (and ``posix._exit``) while a stdin program runs (:func:`run_stdin`). In ``python3 prog.py`` it
    ends the process at once with ``status``: no ``atexit`` handlers, no flush (what Python still buffered is lost),
    and a judge that runs each test as a process (piston's Codeforces runner, code_contests' tester, TACO's
    ``subprocess.run``) then judges the exit status and what reached the output file. So here the run's answer is
    sent first: what reached descriptor 1 (or the output file) by then, and ``ended``: the exit status (its low 8
    bits); then the process really ends, and the judge replaces the worker for the next test.

    Outside a run, in another process (a fork of the program), or with a status the real ``os._exit`` would refuse,
    it is the real one (the worker dies, and the test is a crash)."""
    run = _RUN.get("current")
    if run is None or os.getpid() != run["pid"] or type(status) not in (int, bool) or not -2**31 <= status < 2**31:
        _REAL_EXIT(status)
    if not _EXIT_LOCK.acquire(timeout=1.0) or _RUN.get("current") is not run:  # another thread answered, or the
        _REAL_EXIT(status)                                                     # run ended meanwhile
    try:
        if run.get("pipes"):  # an interaction: what it wrote is the interactor's already
            reply = {"out": "", "cpu_s": cpu_seconds() - run["cpu_start"]}
        else:
            reply = program_output(run["out"], run["limit"], run["files"], run["only"])
        reply["ended"] = int(status) & 0xFF
        reply["rss"] = peak_rss()
        run["answer"](reply)
    finally:
        _REAL_EXIT(status)


try:  # the harness's own references, taken before any program runs (a program may replace the modules' names)
    import resource as _resource

    _getrusage, _RUSAGE_SELF, _RUSAGE_CHILDREN = _resource.getrusage, _resource.RUSAGE_SELF, _resource.RUSAGE_CHILDREN
except ImportError:  # pragma: no cover - not Linux
    _getrusage = None
_monotonic = time.monotonic


def cpu_seconds():
    """User and system CPU seconds of this process and its waited-for children so far (``getrusage``)."""
    if _getrusage is None:
        return 0.0
    try:
        own, children = _getrusage(_RUSAGE_SELF), _getrusage(_RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    except (OSError, ValueError):
        return 0.0


def make_fifos():
    """The worker's part of starting an interaction (see :mod:`.interaction`): a fresh directory of its own
    (``mkdtemp`` in ``TMPDIR``, the worker's home) with the FIFOs ``to_program`` and ``from_program``, and the
    program's ends opened at once, without blocking: its stdin (``to_program``, for reading) and its stdout
    (``from_program``, read and write: so that the interactor, started next, never reads an end of file before the
    program has started; it does once the program's process has ended). The judge opens the interactor's ends by
    the directory's path, then removes the FIFOs and the directory. Returns ``(directory, (stdin, stdout))``."""
    import tempfile

    home = os.path.abspath(tempfile.mkdtemp(prefix=".trl-interaction-", dir=os.environ.get("TMPDIR") or None))
    for name in ("to_program", "from_program"):
        os.mkfifo(os.path.join(home, name), 0o600)
    in_fd = os.open(os.path.join(home, "to_program"), os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    out_fd = os.open(os.path.join(home, "from_program"), os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    os.set_blocking(in_fd, True)
    return home, (in_fd, out_fd)


#: The file name a stdin program runs as (``python3 solution.py < input``): its ``sys.argv[0]``.
PROGRAM_NAME = "solution.py"


def main_globals():
    """The globals ``python3 solution.py`` gives its ``__main__`` module (CPython >= 3.9: ``__file__`` absolute,
    ``__doc__`` None unless the program has a docstring, which its code then stores; ``__package__``, ``__spec__``
    and ``__cached__`` None, ``__annotations__`` empty, ``__loader__`` a ``SourceFileLoader``). A program that reads ``__file__`` or ``sys.argv[0]`` gets what that run gives it (the
    file itself is not written: a program that opens its own source fails, as one that deleted it would)."""
    from importlib.machinery import SourceFileLoader

    path = os.path.join(os.getcwd(), PROGRAM_NAME)
    return {"__name__": "__main__", "__builtins__": builtins, "__doc__": None, "__package__": None, "__spec__": None,
            "__annotations__": {}, "__loader__": SourceFileLoader("__main__", path), "__cached__": None,
            "__file__": path}


def run_stdin(code, text, limit, files=None, only=False, answer=None, pipes=None):
    """Run the compiled program as ``__main__`` with ``text`` on stdin; returns ``{"out", "truncated"?,
    "error"?, "exit"?, "rss"}`` (``error``: the exception that ended it; ``exit``: a non-zero exit status from
    ``sys.exit``/``exit``; ``rss``: the worker's peak resident memory, bytes).

    As ``python3 prog.py < input > output`` would: ``sys.stdin`` and ``sys.stdout`` (and ``sys.__stdin__``,
    ``sys.__stdout__``) are real files on descriptors 0 and 1, opened as CPython opens them (``mode``, ``fileno()``,
    ``buffer``: PyRival's FastIO template works), ``__file__``, ``__doc__`` and ``sys.argv`` are those of that run
    (:func:`main_globals`), ``exit()`` and ``quit()`` exist, and at the end the threads the
    program did not join are waited for, its ``atexit`` handlers run and stdout is flushed (see
    :func:`_finish_like_python`).

    ``files``: ``(input name, output name)`` for problems that read and write files (Codeforces' file mode,
    code_contests' ``input_file``/``output_file``): the input is also that file in the working directory and, when
    the program writes the output file, that file is its output. ``only`` (Codeforces' file mode): stdin is empty
    and stdout is discarded; the output file is the output.

    ``answer``: sends a reply to the judge. Given, ``os._exit`` ends the run as it ends ``python3 prog.py`` (see
    :func:`_os_exit`): the reply, with ``ended`` (the exit status), is sent before the process ends.

    ``pipes``: an interactive problem's ``(stdin, stdout)`` (see :func:`make_fifos`), instead of ``text`` and an
    output file; the reply's ``out`` is then empty and ``cpu_s`` gives the CPU seconds the run took."""
    if pipes is not None:
        in_fd, out_fd = pipes
    else:
        in_fd, out_fd = program_files(text, files, only)
    cpu_start = cpu_seconds()
    saved_in, saved_out = os.dup(0), os.dup(1)
    os.dup2(in_fd, 0)
    os.dup2(out_fd, 1)
    os.close(in_fd)
    if pipes is not None:  # descriptor 1 its only end: a program that closes it is seen to end its output
        os.close(out_fd)
    streams = sys.stdin, sys.stdout, sys.__stdin__, sys.__stdout__
    sys.stdin = sys.__stdin__ = io.open(0, "r", encoding="utf-8", closefd=False)  # not builtins.open: a task may ban it
    sys.stdout = sys.__stdout__ = io.open(1, "w", encoding="utf-8", closefd=False)
    reply = {}
    if answer is not None:
        _RUN["current"] = {"pid": os.getpid(), "out": out_fd, "limit": limit, "files": files, "only": only,
                           "answer": answer, "pipes": pipes is not None, "cpu_start": cpu_start}
        os._exit = posix._exit = _os_exit
    argv = sys.argv
    sys.argv = [PROGRAM_NAME]
    try:
        exec(code, main_globals())
    except SystemExit as exc:
        status = exit_status(exc.code)
        if status:
            reply["exit"] = status
    except BaseException as exc:  # noqa: BLE001
        reply["error"] = describe(exc)
        print_program_traceback(exc)  # on its stderr, as python3 prog.py prints it: the result's output shows it
    _finish_like_python()
    sys.argv = argv
    ended = _monotonic()  # before its output closes (below): an interactor cannot have seen its end before this
    hung_up = pipes is not None and input_hung_up(0)
    if answer is not None:
        with _EXIT_LOCK:
            _RUN.pop("current", None)
        os._exit = posix._exit = _REAL_EXIT
    # The program's own file objects on 0 and 1 (``sys.stdout = open(1, "w")``) are dropped, and closed, while 0 and 1
    # are still the run's: closed after the restore, they would close the worker's own.
    sys.stdin, sys.stdout, sys.__stdin__, sys.__stdout__ = streams
    gc.collect()
    os.dup2(saved_out, 1)
    os.dup2(saved_in, 0)
    os.close(saved_in)
    os.close(saved_out)
    if pipes is not None:
        reply.update(out="", cpu_s=cpu_seconds() - cpu_start, end=ended, input_closed=hung_up)
    else:
        reply.update(program_output(out_fd, limit, files, only))
    reply["rss"] = peak_rss()
    return reply
