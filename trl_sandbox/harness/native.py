"""Programs in other languages than Python (C, C++, Java, JavaScript, Rust): written and compiled in the worker's
scratch directory, then run as a process of their own per test.

The command lines come from the host (:mod:`trl_sandbox.languages`); here they are run: the compiler once
(:func:`build_program`, its message's tail kept for a ``compile_error``), the program once per test
(:func:`run_native`), each in a process group of its own that a timeout kills whole, with the sandbox's limits.
"""

import ctypes
import math
import os
import signal
import time

from .base import PR_SET_PDEATHSIG
from .cputime import MAX_WALL_FACTOR, WALL_FACTOR
from .stdio import exit_error as _exit_error
from .stdio import input_hung_up, memory_file, program_files, program_output
from .stdio import wait_child as _wait
from .wire import close_fds_except, read_up_to

#: Bytes of a compiler's message kept for a ``compile_error`` (its tail: the first error is usually near the end of
#: what fits, and the summary line is last).
COMPILE_MESSAGE_LIMIT = 2000


def limit_address_space(managed):
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


def limit_cpu(seconds):
    """Lower this process's CPU-time limit (``RLIMIT_CPU``) to ``seconds``, rounded up to whole seconds (the kernel's
    unit): past it the kernel stops the program (``SIGXCPU``, then ``SIGKILL`` a second later), as problemtools
    limits a program's CPU time; the exact limit is checked on its ``rusage`` at its end."""
    try:
        import resource

        _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
        soft = max(1, int(math.ceil(seconds)))
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
            hard = min(hard, soft + 1)
        else:
            hard = soft + 1
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    except (ImportError, OSError, ValueError):
        pass


def _spawn(argv, stdin_fd, stdout_fd, stderr_fd, managed=False, cpu_s=None):
    """Fork and ``execvp`` ``argv`` (searched on ``PATH``) with the given descriptors as 0, 1 and 2 and no other;
    the child leads a process group of its own (so that a timeout kills what it started) and dies with this
    process. ``managed``: a Java or JavaScript runtime (see :func:`limit_address_space`). ``cpu_s``: its CPU-time
    limit in seconds (see :func:`limit_cpu`). Returns its pid.

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
            close_fds_except({err_w})
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            limit_address_space(managed)
            if cpu_s is not None:
                limit_cpu(cpu_s)
            # One malloc arena: glibc reserves 64 MiB of address space per thread's arena, and a JVM's threads
            # would otherwise exhaust the sandbox's address-space limit before its program starts.
            os.execvpe(argv[0], argv, dict(os.environ, MALLOC_ARENA_MAX="1"))
        except OSError as exc:
            os.write(err_w, str(exc.errno or 0).encode())
        except BaseException:  # noqa: BLE001
            os.write(err_w, b"0")
        os._exit(127)
    os.close(err_w)
    data = read_up_to(err_r, 32)
    os.close(err_r)
    if data:
        os.waitpid(pid, 0)
        errno = int(data) if data.isdigit() else 0
        raise OSError(errno, os.strerror(errno) if errno else "exec failed", argv[0])
    return pid


def _relative_path(name):
    """Whether ``name`` is a plain relative path below the working directory (``main.cpp``, ``graders/nile.cpp``):
    no absolute path, no ``.`` or ``..`` part, no hidden file."""
    parts = name.split("/")
    return bool(name) and all(part and not part.startswith(".") for part in parts)


def build_program(build, program, timeout):
    """Write ``program`` to ``build["source"]`` in the working directory, and the task's own ``build["files"]``
    (``[[relative path, text], ...]``: an IOI problem's graders, compiled with it) beside it, and run the compiler
    (``build["compile"]``; none for interpreted languages), for at most ``timeout`` seconds. Returns ``{"ok":
    True}``, ``{"ok": False, "error": the compiler's message tail, "timeout"?: True}``, or ``{"ok": False,
    "missing": executable}`` when the toolchain is not installed, ``{"ok": False, "denied": reason}`` when the sandbox
    may not read or run it, or ``{"ok": False, "forbidden": reason}`` when this sandbox may not create processes."""
    source = str(build["source"])
    files = [(str(name), str(text)) for name, text in build.get("files") or ()]
    for name in [source, *(name for name, _text in files)]:
        if not _relative_path(name):
            return {"ok": False, "error": "bad source file name %r" % (name,)}
    for name, text in [*files, (source, program)]:  # the task's files first: the program's name is its own
        folder = os.path.dirname(name)
        if folder:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        with open(name, "w", encoding="utf-8") as f:
            f.write(text)
    argv = [str(part) for part in build.get("compile") or ()]
    toolchain = [str(t) for t in build.get("toolchain") or ()]
    if not argv:
        return _check_toolchain(toolchain)
    out_fd = memory_file("compiler")
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        pid = _spawn(argv, devnull, out_fd, out_fd, managed=bool(build.get("managed")))
    except OSError as exc:
        os.close(out_fd)
        if exc.errno == 2:  # ENOENT
            return {"ok": False, "missing": argv[0]}
        if exc.errno == 13:  # EACCES: the file, or a directory above it, is closed to the sandbox (mode, Landlock)
            return {"ok": False, "denied": "%s: %s" % (argv[0], exc.strerror)}
        if exc.errno in (1, 11):  # EPERM, EAGAIN: no process may be created here
            return {"ok": False, "forbidden": "cannot run %s: %s" % (argv[0], exc.strerror)}
        raise
    finally:
        os.close(devnull)
    status, _rss, timed_out = _wait(pid, time.monotonic() + timeout)
    size = os.lseek(out_fd, 0, os.SEEK_END)
    os.lseek(out_fd, max(0, size - COMPILE_MESSAGE_LIMIT), os.SEEK_SET)
    message = read_up_to(out_fd, COMPILE_MESSAGE_LIMIT).decode("utf-8", errors="replace")
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


def run_native(argv, text, limit, timeout, files=None, managed=False, only=False, pipes=None):
    """Run the compiled program ``argv`` once with ``text`` on stdin, within ``timeout`` seconds of its CPU time
    (threads and waited-for children included) and :data:`.cputime.WALL_FACTOR` times that of wall time (up to
    :data:`.cputime.MAX_WALL_FACTOR` while it computes, see :func:`.stdio.wait_child`); returns
    ``{"out", "truncated"?, "error"?, "timeout"?, "rss"}`` as :func:`.stdio.run_stdin` does (``rss``: the program's
    peak resident memory, bytes). Its stderr is the worker's (part of the completion's output). ``files`` as for
    :func:`.stdio.run_stdin` (``only``: the files alone, no stdin, stdout discarded). ``pipes``: an interactive
    problem's ``(stdin, stdout)`` instead (the reply's ``out`` is empty; ``cpu_s``: the program's CPU seconds)."""
    in_fd, out_fd = pipes if pipes is not None else program_files(text, files, only)
    probe = os.dup(in_fd) if pipes is not None else None  # whether its input hung up before it ended (and closed)
    try:
        pid = _spawn(argv, in_fd, out_fd, 2, managed, cpu_s=timeout)
    except BaseException:
        if probe is not None:
            os.close(probe)
        raise
    finally:
        os.close(in_fd)
        if pipes is not None:
            os.close(out_fd)
    usage = {}
    begun = time.monotonic()
    status, rss, timed_out = _wait(pid, begun + WALL_FACTOR * timeout, usage, ceiling=begun + MAX_WALL_FACTOR * timeout)
    hung_up = probe is not None and input_hung_up(probe)
    if probe is not None:
        os.close(probe)
    if usage.get("cpu_s", 0.0) >= timeout or (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU):
        timed_out = True
    reply = {"rss": rss}
    if pipes is not None:
        reply.update(out="", cpu_s=usage.get("cpu_s", 0.0), end=usage.get("end", time.monotonic()),
                     input_closed=hung_up)
    if timed_out:
        reply["timeout"] = True
    else:
        failure = _exit_error(status)
        if failure is not None:
            reply["error"] = failure
    if pipes is None:
        reply.update(program_output(out_fd, limit, files, only))
    return reply
