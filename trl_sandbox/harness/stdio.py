"""One run of a program on one test's input: its stdin and stdout as files, and a Python program run in the worker.

A Python program of a stdin/stdout task runs in the worker itself (:func:`run_stdin`: no new interpreter per test);
a program in another language runs as a process of its own (:mod:`.native`). Both read their input from, and write
their output to, files of their own (:func:`program_files`, :func:`program_output`).
"""

import builtins
import io
import os
import sys

from .base import describe
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


def program_files(text, files):
    """``(stdin, stdout)`` descriptors for one run of a program: ``text`` in a memory file, and an empty one. With
    ``files`` (``(input name, output name)``), the input is also written to that file and the output file removed."""
    data = text.encode()
    if files:
        with open(files[0], "wb") as f:
            f.write(data)
        try:
            os.unlink(files[1])
        except OSError:
            pass
    in_fd = memory_file("stdin")
    write_all(in_fd, data)
    os.lseek(in_fd, 0, os.SEEK_SET)
    return in_fd, memory_file("stdout")


def program_output(out_fd, limit, files):
    """``{"out", "truncated"?}`` of a run: the output file of ``files`` when the program wrote it, else what it
    printed to ``out_fd`` (closed here); at most ``limit`` bytes."""
    if files and os.path.isfile(files[1]):
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


def run_stdin(code, text, limit, files=None):
    """Run the compiled program as ``__main__`` with ``text`` on stdin; returns ``{"out", "truncated"?,
    "error"?, "rss"}`` (``rss``: the worker's peak resident memory, bytes). As a Python process would: buffered
    ``sys.stdin``/``sys.stdout`` (``sys.stdin.buffer.readline`` reads a line at a time), ``exit()`` and
    ``quit()``, and the threads the program started but did not join are waited for before its output is read.

    ``files``: ``(input name, output name)`` for problems that read and write files (Codeforces' file mode,
    code_contests' ``input_file``/``output_file``): the input is also that file in the working directory and, when
    the program writes the output file, that file is its output."""
    in_fd, out_fd = program_files(text, files)
    saved_in, saved_out = os.dup(0), os.dup(1)
    os.dup2(in_fd, 0)
    os.dup2(out_fd, 1)
    os.close(in_fd)
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding="utf-8")
    reply = {}
    try:
        exec(code, {"__name__": "__main__", "__builtins__": builtins})
    except SystemExit as exc:
        if exc.code not in (None, 0):
            reply["error"] = "SystemExit(%r)" % (exc.code,)
    except BaseException as exc:  # noqa: BLE001
        reply["error"] = describe(exc)
    threading = sys.modules.get("threading")
    if threading is not None:  # the interpreter waits for non-daemon threads at exit: so do we
        try:
            main = threading.main_thread()
            for thread in threading.enumerate():
                if thread is not main and not thread.daemon:
                    thread.join()
        except BaseException:  # noqa: BLE001
            pass
    try:
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001
        pass
    os.dup2(saved_out, 1)
    os.dup2(saved_in, 0)
    os.close(saved_in)
    os.close(saved_out)
    sys.stdout = sys.stderr
    reply.update(program_output(out_fd, limit, files))
    reply["rss"] = peak_rss()
    return reply
