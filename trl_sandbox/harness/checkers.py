"""Checker programs (special judges): a task's own program that decides whether an output is right.

Two conventions: testlib's ``checker input output answer`` (exit code 0 accepts, 3 means the checker failed) and
open-r1's ``checker.py input.txt correct_output.txt solution_output.txt`` (prints ``1`` to accept). A checker runs in
a fork of the judge, never in the program's process, with its three files in its memory only (:func:`run_checker`).
"""

import builtins
import ctypes
import io
import os
import select
import signal
import sys
import time

from .base import PR_SET_DUMPABLE, Timeout, _type, compiled, short_repr
from .wire import close_fds_except

#: File names a checker gets, by convention: testlib's ``checker input output answer`` (exit code 0 accepts) and
#: open-r1's ``checker.py input.txt correct_output.txt solution_output.txt`` (prints ``1`` to accept).
_CHECKER_FILES = {
    "testlib": ("input.txt", "output.txt", "answer.txt"),
    "open-r1": ("input.txt", "correct_output.txt", "solution_output.txt"),
}
#: Seconds a checker may run on one test.
CHECKER_TIMEOUT_S = 10.0


def _check_in_child(source, argv_files, texts, seconds, out_w):
    """The checker's process (a fork of the judge): stdout is ``out_w``, the verdict is the exit status. Never
    returns."""
    try:
        os.dup2(out_w, 1)
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 2)
        close_fds_except(())
        ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        import resource

        cpu = max(1, int(seconds) + 1)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    except BaseException:  # noqa: BLE001
        os._exit(3)
    files = dict(zip(argv_files, texts))
    real_open = io.open

    def open_(file, mode="r", *args, **kwargs):
        if file in files and not any(c in mode for c in "wax+"):
            data = files[file]
            return io.BytesIO(data.encode()) if "b" in mode else io.StringIO(data)
        return real_open(file, mode, *args, **kwargs)

    builtins.open = io.open = open_
    sys.argv = ["checker", *argv_files]
    sys.stdin = io.StringIO("")
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", write_through=True)
    code = 0
    try:
        exec(compiled(source, "<checker>"), {"__name__": "__main__", "__builtins__": builtins})
    except SystemExit as exc:
        code = exc.code if _type(exc.code) is int else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - a checker that crashes rejects (exit code 1, as Python's)
        code = 1
    try:
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001
        pass
    os._exit(code & 0xFF)


def run_checker(compare, input_text, output, answer, worker):
    """Judge one output with the task's checker program (a special judge), run in a fork of the judge: it never
    shares a process with the program, and its three files exist only in its memory (``open`` of the three names
    it is given reads them), so nothing the program left behind can change them. Its verdict is its exit status and
    its stdout, nothing else: the fork keeps no descriptor of the judge (not its result channel, not its connection
    to the host), so even a checker that runs what the program printed (``eval``) cannot write the judge's records.

    ``compare``: ``{"checker": source, "language": "python", "convention": "testlib" | "open-r1"}``. testlib:
    exit code 0 accepts, 3 (``_fail``) means the checker itself failed; open-r1: accepted when it exits cleanly and
    prints ``1``. Returns True, or a failing record (``{"ok": False, "error"}``, or ``{"ok": False, "invalid"}``
    when the checker failed or timed out: the task's fault, not the program's)."""
    convention = compare.get("convention") or "testlib"
    names = _CHECKER_FILES.get(convention, _CHECKER_FILES["testlib"])
    texts = (input_text, answer, output) if convention == "open-r1" else (input_text, output, answer)
    seconds = CHECKER_TIMEOUT_S
    deadline = time.monotonic() + seconds
    if worker.cap is not None:
        deadline = min(deadline, worker.cap)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        _check_in_child(compare["checker"], names, texts, seconds, w)
    os.close(w)
    printed = bytearray()
    timed_out = False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([r], [], [], left)
            if not ready:
                continue
            chunk = os.read(r, 65536)
            if not chunk:
                break
            printed += chunk
            del printed[:-65536]
    finally:
        os.close(r)
        if timed_out:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _, status = os.waitpid(pid, 0)
    if timed_out:
        if worker.cap is not None and time.monotonic() >= worker.cap:
            raise Timeout()
        return {"ok": False, "invalid": "the checker ran past %.0f s" % seconds}
    text = printed.decode("utf-8", errors="replace")
    if os.WIFSIGNALED(status):
        return {"ok": False, "invalid": "the checker was killed by signal %d" % os.WTERMSIG(status)}
    code = os.WEXITSTATUS(status)
    if convention == "open-r1":
        if code == 0 and text.strip() == "1":
            return True
        return {"ok": False, "error": "rejected by the checker: it said %s (exit code %d)"
                % (short_repr(text.strip()[-200:]), code)}
    if code == 0:
        return True
    if code == 3:
        return {"ok": False, "invalid": "the checker failed (exit code 3): %s" % short_repr(text[-300:])}
    return {"ok": False,
            "error": "rejected by the checker (exit code %d): %s" % (code, short_repr(text.strip()[-200:]))}
