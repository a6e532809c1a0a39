"""Checker programs (special judges): a task's own program that decides whether an output is right.

Three conventions:

- testlib's ``checker input output answer`` (``registerTestlibCmd``; the codes of testlib.h's ``TResult``): exit 0
  accepts; 1 (wrong answer), 2 (presentation error), 4 (extra output) and 8 (unexpected end of the output) reject;
  7 gives points (``quitp``: ``points X`` leads its message; where there is none, a ``Ratio: X`` that opens it,
  Frontier-CS's form: see :func:`testlib_verdict`); 3
  (``_fail``) means the checker found the jury's data wrong: the task's fault, never the program's. Its message
  goes to stderr (DMOJ's judge reads ``points X`` there too);
- Kattis' output validators (problemtools' ``default_validator`` convention, ``doc/output_validators``):
  ``validator input judge_answer feedback_dir [flags]`` with the program's output on stdin; exit 42 accepts, 43
  rejects, anything else is a judge error; a score in ``feedback_dir/score.txt``;
- open-r1's ``checker.py input correct_output solution_output``, given its files as ``guipenedo/piston``'s
  ``packages/codeforces/1.0.0/run`` writes them (:func:`open_r1_files`) and accepted as open-r1's ``cf_scoring.py``
  accepts it (exit code 0, its stdout ``1`` or ``100`` once its whitespace is removed);
- CMS's (IOI's) ``checker input correct_output user_output``, run as ``guipenedo/piston``'s
  ``packages/cms_ioi/1.0.0/run`` runs ``checker/checker`` for open-r1's IOI rows: its stdout is the test's score in
  [0, 1] (open-r1's ``execute_ioi`` reads ``float(stdout)``; its exit code is not read), its stderr a message; the
  answer file as ``echo "$(cat correct_output.txt)"`` rewrites it (:func:`cms_answer`).

A checker is Python source (run in a fork of the judge) or a compiled program (the host compiled it once per problem,
see ``trl_sandbox/judge_programs.py``; the request carries the binary, run here from a sealed memory file). Either
way it runs once the program's output is final, never in the program's process, and its files are real files only
it can reach (:func:`_memory_file`).
"""

import builtins
import ctypes
import errno
import io
import os
import re
import select
import signal
import stat
import sys
import time

from .base import PR_SET_DUMPABLE, Timeout, _type, compiled, short_repr
from .accounts import sweep_program
from .wire import close_fds_except, read_up_to, write_all

#: The names of a checker's three files, by convention: testlib's ``checker input output answer`` and open-r1's
#: ``checker.py input correct_output solution_output`` (used where the files are a directory's, see
#: :func:`_private_files`).
_CHECKER_FILES = {
    "testlib": ("input.txt", "output.txt", "answer.txt"),
    "open-r1": ("input.txt", "correct_output.txt", "solution_output.txt"),
    "cms": ("input.txt", "correct_output.txt", "user_output.txt"),
}
#: Seconds a checker may run on one test (piston's run: ``run_with_timeout 10 python3 checker.py ...``).
CHECKER_TIMEOUT_S = 10.0
#: The first byte the checker's process writes once it is set up, before the checker runs.
_STARTED = b"\x01"
#: What ``tr -d '[:space:]'`` removes (and ``$(...)``: NUL bytes) from an open-r1 checker's stdout.
_SPACE = {ord(c): None for c in " \t\n\r\x0b\x0c\x00"}
_MEMORY_FILES = []


def cms_answer(answer):
    """The answer file as piston's IOI runner leaves it: read by ``$(cat ...)`` (its NUL bytes and trailing newlines
    dropped), written back by ``echo`` (one newline)."""
    return answer.replace("\x00", "").rstrip("\n") + "\n"


def _strip_cr(text):
    """``sed 's/\\r$//'``: one ``\\r`` at the end of each line removed."""
    lines = text.split("\n")
    return "\n".join(line[:-1] if line.endswith("\r") else line for line in lines)


def _drop_empty_lines(text):
    """``sed '/^$/d'``: the empty lines removed (a line of spaces is not empty); the last line keeps its missing
    newline."""
    lines = text.split("\n")
    ended = text.endswith("\n")
    if ended:
        lines.pop()
    kept = "".join(line + "\n" for line in lines if line)
    return kept if ended or not kept else kept[:-1]


def open_r1_files(input_text, answer, output):
    """The checker's three texts as piston's ``packages/codeforces/1.0.0/run`` leaves them: the input with the
    ``\\r`` at its line ends removed (``sed -i 's/\\r$//'``, before the program ran); the answer read by ``$(cat
    correct_output.txt)`` (its NUL bytes and trailing newlines dropped), written back by ``echo`` (one newline), its
    ``\\r`` at line ends and its empty lines removed; the program's output with its empty lines removed
    (``sed -i '/^$/d'``)."""
    correct = _strip_cr(answer.replace("\x00", "").rstrip("\n") + "\n")
    return _strip_cr(input_text), _drop_empty_lines(correct), _drop_empty_lines(output)


def _memory_files_work():
    """Whether this system serves a memory file under ``/proc/self/fd/N`` to its own process (checked once)."""
    if not _MEMORY_FILES:
        works = False
        try:
            fd = os.memfd_create("trl-checker-probe", os.MFD_CLOEXEC)
            try:
                os.write(fd, b"1")
                works = os.stat("/proc/self/fd/%d" % fd).st_size == 1
            finally:
                os.close(fd)
        except (AttributeError, OSError):
            pass
        _MEMORY_FILES.append(works)
    return _MEMORY_FILES[0]


def _private_files(names, datas):
    """Where memory files cannot be named: the three files in a fresh directory (``mkdtemp``: mode 0700, owned by
    the judge's uid, a name no one can know before), removed after the check (:func:`_remove`). Returns the
    directory and the files' paths. Raises OSError."""
    import tempfile

    home = tempfile.mkdtemp(prefix="trl-checker-")
    try:
        paths = []
        for name, data in zip(names, datas):
            path = os.path.join(home, name)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            try:
                write_all(fd, data)
            finally:
                os.close(fd)
            paths.append(path)
    except BaseException:
        _remove(home)
        raise
    return home, paths


def _remove(home):
    import shutil

    try:
        os.chmod(home, 0o700)
    except OSError:
        pass
    shutil.rmtree(home, ignore_errors=True)


def _limit_cpu(seconds):
    """The checker's CPU-time limit: ``seconds`` rounded up, at most the judge's own hard limit."""
    import resource

    cpu = max(1, int(seconds) + 1)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard == resource.RLIM_INFINITY:
        hard = cpu + 1
    resource.setrlimit(resource.RLIMIT_CPU, (min(cpu, hard), hard))


#: Compiled judge programs of this judge process, by the sha256 of their bytes: a sealed, read-only memory file each
#: (a long-lived judge server writes each once), at most :data:`_BINARIES_KEPT` of them.
_BINARIES = {}
_BINARIES_KEPT = 64
_F_ADD_SEALS = 1033
_SEALS = 0x0001 | 0x0002 | 0x0004 | 0x0008  # F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE


def binary_fd(spec):
    """A read-only descriptor of the compiled judge program of ``spec`` (``{"binary": base64, "encoding"?: "zlib",
    "sha256"}``): a memory
    file, sealed against any change (``F_SEAL_WRITE``...), kept for later requests. Raises ValueError when the bytes do
    not have the sha256 the request names."""
    import base64
    import fcntl
    import hashlib

    sha = str(spec.get("sha256") or "")
    fd = _BINARIES.get(sha)
    if fd is not None:
        return fd
    data = base64.b64decode(spec["binary"])
    if spec.get("encoding") == "zlib":
        import zlib

        data = zlib.decompress(data)
    if hashlib.sha256(data).hexdigest() != sha:
        raise ValueError("the judge program's bytes do not match their sha256")
    rw = os.memfd_create("judge-program", os.MFD_CLOEXEC | 0x0002)  # MFD_ALLOW_SEALING
    try:
        write_all(rw, data)
        os.fchmod(rw, 0o500)
        fcntl.fcntl(rw, _F_ADD_SEALS, _SEALS)
        fd = os.open("/proc/self/fd/%d" % rw, os.O_RDONLY | os.O_CLOEXEC)  # no writer left: exec needs none
    finally:
        os.close(rw)
    if len(_BINARIES) >= _BINARIES_KEPT:
        os.close(_BINARIES.pop(next(iter(_BINARIES))))
    _BINARIES[sha] = fd
    return fd


def start_judge_program(spec, args, fds, seconds, files=(), name="checker", started_on=1):
    """Fork the checker or interactor of ``spec`` (trusted task code) with ``args`` after its name, descriptors
    ``fds`` (``(stdin, stdout, stderr)``) as 0, 1 and 2, and no other but ``files`` (its memory files, named by
    ``args``) and, for a compiled one, its binary. It is not dumpable (until it executes a binary), holds nothing of
    the judge's (not its result channel, not its connection to the host), and has ``seconds`` of CPU time. A Python
    one runs as ``__main__`` in the fork (``sys.argv``, ``sys.stdin`` and ``sys.stdout`` on 0 and 1); a compiled one
    is executed from its memory file (:func:`binary_fd`). Before either starts, the child writes :data:`_STARTED` to
    its descriptor ``started_on`` (its stdout; an interactor's stderr, its stdout being the program's input).
    Returns the pid. Raises OSError or ValueError when it cannot be prepared."""
    program = binary_fd(spec) if spec.get("binary") else None
    pid = os.fork()
    if pid:
        return pid
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        keep = set(files)
        if program is not None:
            keep.add(program)
        close_fds_except(keep)
        ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL if program is not None else signal.SIG_IGN)
        # An interactor that writes to a program that has ended gets EPIPE, not SIGPIPE (ignored across exec): it
        # then reads the end of the program's output and rejects it, as testlib's interactors do.
        piped = program is not None and name != "interactor"
        signal.signal(signal.SIGPIPE, signal.SIG_DFL if piped else signal.SIG_IGN)
        _limit_cpu(seconds)
        write_all(started_on, _STARTED)
    except BaseException:  # noqa: BLE001 - no verdict: the parent sees no start byte
        os._exit(3)
    argv = [name, *[str(a) for a in args], *[str(f) for f in spec.get("flags") or ()]]
    if program is not None:
        try:
            os.execv("/proc/self/fd/%d" % program, argv)
        except BaseException:  # noqa: BLE001
            os._exit(3)
    sys.argv = argv
    code = 0
    try:
        # Any bytes the program wrote read as text (undecodable ones as surrogates), never a crash of the checker
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8", errors="surrogateescape")
        out = _ProgramGone() if name == "interactor" else io.FileIO(1, "w", closefd=False)
        sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", write_through=True)
        exec(compiled(spec[name], "<%s>" % name), {"__name__": "__main__", "__builtins__": builtins})
    except SystemExit as exc:
        code = exc.code if _type(exc.code) is int else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - a checker that crashes exits as Python would (1)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001
            pass
    os._exit(code & 0xFF)


class _ProgramGone(io.RawIOBase):
    """A Python interactor's stdout: what it writes once the program has ended (``EPIPE``) is dropped, as a C++
    interactor's ``std::cout`` drops it, so that it goes on to read the end of the program's output and judges that;
    never a crash of the interactor (a judge error) that a program could cause by leaving early."""

    def writable(self):
        return True

    def write(self, data):
        try:
            return os.write(1, data)
        except BrokenPipeError:
            return len(data)


#: testlib's exit codes (testlib.h ``TResult``, ``_pc(n)`` aside) and what each means here.
TESTLIB_CODES = {0: "ok", 1: "wrong answer", 2: "presentation error", 3: "fail", 4: "extra output", 7: "points",
                 8: "unexpected end of output"}
_NUMBER = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
#: testlib's own result prefix (``InStream::quit``): ``points X`` for ``quitp`` (X its own number), ``ok`` for
#: ``quitf(_ok)``; the checker's message comes after it, and may quote the program's tokens.
_POINTS = re.compile(r"\s*points\s+" + _NUMBER, re.I)
_PREFIX = re.compile(r"\s*(?:points\s+" + _NUMBER + r"|ok)(?:\s+|$)", re.I)
_RATIO = re.compile(r"Ratio(?:Unbounded)?:\s*" + _NUMBER)


def leading_ratio(message):
    """The ``Ratio: X`` (Frontier-CS's partial score) that opens the checker's own message, right after testlib's
    result prefix (``ok``, ``points X``), as a string; else None. A ``Ratio:`` anywhere else is not read: a message
    that quotes the program's output (``quitp(s, "answer %s", got)``) has it after the checker's own words, and a
    program that prints ``Ratio:1`` must not be paid by it."""
    prefix = _PREFIX.match(message)
    found = _RATIO.match(message, prefix.end() if prefix else len(message) - len(message.lstrip()))
    return found.group(1) if found else None


def score_fraction(value, points_max=None):
    """A checker's score as the fraction of full marks in [0, 1]: ``value / points_max`` when the task states the
    maximum, else ``value`` itself (testlib's ``quitp`` with a fraction, Frontier-CS's ``Ratio:``); None when it is
    not a finite number, or above 1 with no maximum stated (the task must state ``points_max``)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if number != number or number in (float("inf"), float("-inf")):
        return None
    if points_max:
        number /= float(points_max)
    elif number > 1.0:  # a raw score with no maximum stated: paying it as full marks would pay any score
        return None
    return min(1.0, max(0.0, number))


def testlib_verdict(code, message, points_max=None, what="checker"):
    """The verdict of a testlib checker or interactor from its exit code and message (stdout and stderr): True
    (``_ok``, or points that are full marks), ``{"ok": False, "error", "score"?}`` (rejected; with partial points, the
    fraction in ``score``), or ``{"ok": False, "invalid"}`` (``_fail``, or an exit code testlib never gives).

    The score of exit code 7 is testlib's own ``points X``, which leads its message (``quitp``; DMOJ reads it so);
    a ``Ratio: X`` (Frontier-CS's checkers print one; its judge reads it) only where there is none, and only where it
    opens the checker's words (:func:`leading_ratio`): never from text the program could have written into the
    message. Only the checker's own number can make the task invalid (points above 1 with no ``points_max`` stated);
    a ``Ratio`` that is not a fraction is not read (a program that prints ``Ratio: 5`` cannot void the task)."""
    tail = short_repr(message.strip()[-300:])
    ratio = leading_ratio(message)
    if ratio is not None and score_fraction(ratio, points_max) is None:
        ratio = None
    if code == 0 and ratio is None:
        return True
    if code == 3:
        return {"ok": False, "invalid": "the %s failed (testlib _fail, exit code 3): %s" % (what, tail)}
    if code in (0, 7):
        points = _POINTS.match(message) if code == 7 else None
        found = points.group(1) if points else ratio
        score = score_fraction(found, points_max) if found is not None else None
        if score is None:
            return {"ok": False, "invalid": "the %s gave points it did not state (exit code %d): %s"
                    % (what, code, tail)}
        if score >= 1.0:
            return True
        return {"ok": False, "score": score, "error": "partial score %.4g from the %s: %s" % (score, what, tail)}
    if code in TESTLIB_CODES:
        return {"ok": False, "error": "rejected by the %s (%s): %s" % (what, TESTLIB_CODES[code], tail)}
    return {"ok": False, "invalid": "the %s exited with code %d, which testlib never gives: %s" % (what, code, tail)}


def kattis_verdict(code, feedback, points_max=None, what="output validator"):
    """The verdict of a Kattis validator (problemtools): exit 42 accepts (with the fraction of ``score.txt`` when it
    wrote one below full marks and the task states ``points_max``: ``score``), 43 rejects, any other code is a judge
    error (``invalid``), as is a ``score.txt`` with a rejection or with no ``points_max`` stated. ``feedback``: the
    texts it wrote to ``feedback_dir`` by file name."""
    message = (feedback.get("judgemessage.txt") or feedback.get("teammessage.txt") or "").strip()
    if "score.txt" in feedback and (not points_max or code == 43):
        # problemtools (judge/validate.py): a judge error on a rejection, and unless the problem takes the
        # validator's scores (legacy ``validation: custom score``, a 2023-07 scoring problem), which are not read
        # here yet: never a verdict on the program
        return {"ok": False, "invalid": "the %s wrote score.txt %s" % (
            what, "with a rejection" if code == 43 else "(a test's own score is not supported yet)")}
    if code == 43:
        return {"ok": False, "error": "rejected by the %s: %s" % (what, short_repr(message[-300:]))}
    if code != 42:
        return {"ok": False, "invalid": "the %s exited with code %d (a judge error: 42 accepts, 43 rejects): %s"
                % (what, code, short_repr(message[-300:]))}
    if "score.txt" in feedback and points_max:
        score = score_fraction(feedback["score.txt"].strip(), points_max)
        if score is None:
            return {"ok": False, "invalid": "the %s wrote a score.txt that is not a number" % what}
        if score < 1.0:
            return {"ok": False, "score": score, "error": "partial score %.4g from the %s" % (score, what)}
    return True


def cms_verdict(stdout):
    """The verdict of a CMS checker from its stdout (open-r1's ``execute_ioi``: a non-empty stdout is the score,
    ``float(stdout)``): True at 1, ``{"ok": False, "score", "error"}`` below it, ``{"ok": False, "invalid"}`` when
    it printed nothing or no number in [0, 1] (the checker's fault: open-r1's reward fails the whole subtask
    then)."""
    text = stdout.strip()
    try:
        score = float(text)
    except ValueError:
        score = None
    if score is None or not 0.0 <= score <= 1.0:
        return {"ok": False, "invalid": "the checker printed %s, not a score in [0, 1]" % (short_repr(text[-200:])
                                                                                           if text else "nothing")}
    if score >= 1.0:
        return True
    if score <= 0.0:
        return {"ok": False, "error": "rejected by the checker (score 0)"}
    return {"ok": False, "score": score, "error": "partial score %.4g from the checker" % score}


def feedback_dir():
    """A fresh directory for a Kattis validator's ``feedback_dir`` (``mkdtemp``: mode 0700, a name no one can know
    before) in the judge's temporary directory, where the program cannot write (the local backend's judge has a
    directory of its own; a remote sandbox's program runs as an account of its own, see :mod:`.accounts`)."""
    import tempfile

    return tempfile.mkdtemp(prefix="trl-feedback-")


def read_feedback(home):
    """The texts a Kattis validator wrote to ``home`` (its ``feedback_dir``), by file name: the first 64 KiB of each
    regular file."""
    texts = {}
    try:
        names = os.listdir(home)
    except OSError:
        return texts
    for entry in names[:32]:
        path = os.path.join(home, entry)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                texts[entry] = read_up_to(fd, 65536).decode("utf-8", errors="replace")
        finally:
            os.close(fd)
    return texts


def run_checker(compare, input_text, output, answer, worker):
    """Judge one output with the task's checker program (a special judge), run after the program's output is final
    (:func:`start_judge_program`): it never shares a process with the program, and its files are memory files only
    it can open (:func:`_memory_file`; where ``/proc`` cannot name them, files of a fresh 0700 directory of the
    judge's, removed after), so nothing the program left behind or still runs can read or change them. Its verdict
    is its exit status, its messages and (Kattis) its ``feedback_dir``, nothing else: even a checker that runs what
    the program printed (``eval``) cannot write the judge's records.

    ``compare``: ``{"checker": source, "language": "python"}`` or ``{"checker", "binary": base64, "sha256"}`` (a
    compiled checker), with ``convention`` (``testlib`` | ``kattis`` | ``open-r1`` | ``cms``, see the module docstring),
    ``flags`` and ``points_max``. Returns True, or a failing record (``{"ok": False, "error", "score"?}``, or
    ``{"ok": False, "invalid"}`` when the checker failed, timed out or could not start: the task's fault, not the
    program's)."""
    convention = compare.get("convention") or "testlib"
    if convention == "open-r1":
        texts = open_r1_files(input_text, answer, output)
    elif convention == "cms":
        texts = (input_text, cms_answer(answer), output)
    elif convention == "kattis":
        texts = (input_text, answer)
    else:
        convention = "testlib"
        texts = (input_text, output, answer)
    datas = [text.encode("utf-8", errors="replace") for text in texts]
    seconds = CHECKER_TIMEOUT_S
    deadline = time.monotonic() + seconds
    if worker is not None and worker.cap is not None:
        deadline = min(deadline, worker.cap)
    home = feedback = None
    opened = []
    r = w = None
    try:
        if _memory_files_work():
            opened = [_memory_file(i, data) for i, data in enumerate(datas)]
            paths = ["/proc/self/fd/%d" % fd for fd in opened]
        else:
            names = _CHECKER_FILES.get(convention, _CHECKER_FILES["testlib"])
            home, paths = _private_files(names[:len(datas)], datas)
        stdin = None
        if convention == "kattis":
            feedback = feedback_dir()
            stdin = _memory_file(9, output.encode("utf-8", errors="replace"))
            opened.append(stdin)
            paths = [*paths, feedback + "/"]
        devnull = os.open(os.devnull, os.O_RDWR)
        opened.append(devnull)
        r, w = os.pipe()
        # testlib writes its verdict to stderr; open-r1's and CMS's checkers answer on stdout alone.
        fds = (stdin if stdin is not None else devnull, w, devnull if convention in ("open-r1", "cms") else w)
        try:
            pid = start_judge_program(compare, paths, fds, seconds, files=opened, name="checker")
        except OSError as exc:
            if exc.errno != errno.EAGAIN or worker is None:
                raise
            # The process limit, filled by what the program left running (its output is final): end it, once.
            worker.kill()
            sweep_program()
            try:
                pid = start_judge_program(compare, paths, fds, seconds, files=opened, name="checker")
            except OSError as again:
                if again.errno != errno.EAGAIN:
                    raise
                return {"ok": False, "error": "the program's processes left no room to start the checker"}
        os.close(w)
        w = None
        started, printed, timed_out, status = _wait_checker(pid, r, deadline)
        r = None
        found = read_feedback(feedback) if feedback is not None else {}
    except (OSError, ValueError) as exc:
        return {"ok": False, "invalid": "the checker could not be started: %s" % (exc,)}
    finally:
        for fd in [*opened, *(x for x in (r, w) if x is not None)]:
            os.close(fd)
        for directory in (home, feedback):
            if directory is not None:
                _remove(directory)
    if timed_out:
        if worker is not None and worker.cap is not None and time.monotonic() >= worker.cap:
            raise Timeout()
        return {"ok": False, "invalid": "the checker ran past %.0f s" % seconds}
    if not started:
        return {"ok": False, "invalid": "the checker could not be started"}
    text = printed.decode("utf-8", errors="replace")
    if os.WIFSIGNALED(status):
        return {"ok": False, "invalid": "the checker was killed by signal %d" % os.WTERMSIG(status)}
    code = os.WEXITSTATUS(status)
    points_max = compare.get("points_max")
    if convention == "open-r1":
        if code == 0 and text.translate(_SPACE) in ("1", "100"):
            return True
        return {"ok": False, "error": "rejected by the checker: it said %s (exit code %d)"
                % (short_repr(text.strip()[-200:]), code)}
    if convention == "kattis":
        return kattis_verdict(code, found, points_max)
    if convention == "cms":
        return cms_verdict(text)
    if compare.get("binary") is None and code not in TESTLIB_CODES:  # a Python checker: any other code rejects
        return {"ok": False,
                "error": "rejected by the checker (exit code %d): %s" % (code, short_repr(text.strip()[-200:]))}
    return testlib_verdict(code, text, points_max)


def _memory_file(i, data):
    """A memory file (not close-on-exec: a compiled checker opens it by its ``/proc/self/fd`` name) holding
    ``data``, positioned at its start."""
    fd = os.memfd_create("checker-file-%d" % i, 0)
    write_all(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _wait_checker(pid, r, deadline):
    """Read the checker's stdout (its last 64 KiB, after the start byte) until it ends or ``deadline`` passes (then
    kill it); reap it; close ``r``. Returns ``(started, printed, timed_out, wait status)``."""
    started = None
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
            if started is None:
                started = chunk.startswith(_STARTED)
                chunk = chunk[len(_STARTED):] if started else chunk
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
    return bool(started), bytes(printed), timed_out, status


def judge_selftest(emit, worker, req, timeout):
    """The self-test of a task's checker (request mode ``selftest``), before its first use: on the first two tests
    whose answer is not empty, the jury's answer as the output (its line ends ``\n``, as a program prints them:
    ``{"i", "answer": verdict}``: it must be accepted)
    and an empty output (``{"i", "empty": verdict}``: it must not be paid). Runs only task code; ``worker`` is not
    used. Returns the number of tests it went through."""
    n = 0
    expected = req.get("expected") or []
    for i, text in enumerate(req.get("tests") or ()):
        answer = expected[i] if i < len(expected) else ""
        if not str(answer).strip():
            continue
        output = answer.replace("\r\n", "\n")  # as a program on Linux would print it
        emit({"i": i, "answer": run_checker(req["compare"], text, output, answer, None)})
        emit({"i": i, "empty": run_checker(req["compare"], text, "", answer, None)})
        n += 1
        if n == 2:
            break
    return n
