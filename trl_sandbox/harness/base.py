"""What every module of the harness uses: the exceptions that end a test, the builtins the harness keeps for itself,
the module names of the program and the tests, limits and process constants, short descriptions, trusted code
compilation."""

import linecache
import os
import sys
import traceback

#: The harness's own references to builtins a task may ban at run time in the worker (see
#: ``worker._apply_bans``): taken when the harness is imported, before any ban, by every module that uses them.
_sorted, _callable, _isinstance, _getattr, _type = sorted, callable, isinstance, getattr, type

#: CPython's default recursion limit: the official harnesses run the program with it (a test may raise it).
DEFAULT_RECURSION_LIMIT = 1000
#: ``prctl`` options (``<linux/prctl.h>``).
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
#: The uid and gid code runs as when the harness runs as root (a remote sandbox's default user).
NOBODY = 65534
#: Bytes of what the worker printed that ``python harness.pyz`` sends back in its ``output`` record.
OUTPUT_RECORD_LIMIT = 64 << 10
#: Name prefix of the request files remote backends redirect to the judge's stdin (it unlinks them: see
#: ``server._forget_stdin_file``).
STDIN_PREFIX = ".trl-sandbox-stdin-"
#: The directory of the sandbox's working directory that remote backends upload request files into: the judge, when
#: root, closes it to every other user (mode 0700), so that a later request never lies where the program's account
#: can look.
REQUEST_DIR = ".trl-sandbox-requests"
#: The worker's environment, whatever the command's was (a remote service's may hold tokens or proxies): the local
#: backend's fixed one (``_BASE_ENV`` of ``trl_sandbox/backends/local.py``; tests/test_harness.py keeps them equal),
#: plus :data:`WORKER_KEPT` and ``HOME``/``TMPDIR`` (see ``processes.worker_environment``).
WORKER_ENV = {
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONHASHSEED": "0",
    "PYTHONIOENCODING": "utf-8",
}
#: Variables of the command's environment the worker keeps: ``PATH`` (a service's image may put its toolchains
#: anywhere on it: a JDK under /opt, Node.js under /usr/local) and the package directories a backend offers.
WORKER_KEPT = ("PATH", "TRL_SANDBOX_PACKAGES")
#: The worker's ``PATH`` when the command has none.
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
#: Seconds of a completion's budget (the request's ``budget_s``) the judge keeps for itself to end every process of
#: the program and clean up, before the backend's own kill at the end of the budget.
CLEANUP_MARGIN_S = 0.5
#: Module name the program's own definitions carry (``__name__`` of its namespace).
SOLUTION_MODULE = "__solution__"
#: The file name the program's code is compiled with in the worker (its functions' ``co_filename``).
PROGRAM_FILE = "<completion>"
#: Module name of the test namespace in the judge: classes defined by trusted test code carry it.
TESTS_MODULE = "__tests__"


class Unserializable(Exception):
    """A value that cannot cross between the judge and the worker. ``kind`` says why: ``"depth"`` (nested deeper
    than the limit), ``"cycle"`` (a container that contains itself), ``"size"`` (a message over the limit) or
    ``"value"`` (not a value, and no peer to lend it to)."""

    def __init__(self, message, kind="value"):
        super().__init__(message)
        self.kind = kind


class Timeout(BaseException):
    """A test ran past its budget (BaseException: trusted test code does not catch it)."""


class WorkerDied(BaseException):
    """The worker process exited or crashed, or answered garbage."""


class ValueNotSent(BaseException):
    """The other side could not send a value (BaseException: trusted test code does not catch it). In the judge: a
    value of the tests' own that the judge cannot send to the program (the run's result is ``unserializable``, not
    the program's doing); never raised for what the worker says (see :class:`ProgramValueError`)."""


class ProgramValueError(BaseException):
    """A value of the program's could not cross to the tests: one the worker could not send (the program returned,
    raised or passed a value nested too deep, one over the message limit), an answer
    the worker could have forged (the program runs in the worker and can write to its reply pipe), or a value of the
    tests that the program made or changed and the judge cannot send back to it. The test fails: the program chose
    that value, so it is never a None reward. BaseException, handled by each judge as that test's failure: the test
    code's ``except Exception`` or ``pytest.raises(Exception)`` cannot take it for the exception it expects."""


#: How the harness's own exceptions read in a failure's message (never their internal names).
_PLAIN = {"Timeout": "the test ran past its time limit", "WorkerDied": "the program ended its process",
          "ValueNotSent": "a value could not cross between the program and the tests",
          "ProgramValueError": "the program's value could not cross to the tests"}


def describe(exc):
    """``"Type: message"`` of an exception, at most 500 characters: how a failure is reported. The harness's own
    exceptions (:class:`Timeout`, :class:`WorkerDied`, :class:`ValueNotSent`, :class:`ProgramValueError`) read as
    plain words."""
    cls = _type(exc)
    if cls in (Timeout, WorkerDied, ValueNotSent, ProgramValueError):
        text = _PLAIN[cls.__name__]
        return (text + ": " + str(exc))[:500] if str(exc) else text
    return ("%s: %s" % (cls.__name__, exc))[:500]


def keep_program_source(source):
    """Keep the program's ``source`` for its tracebacks' lines (``linecache``, under :data:`PROGRAM_FILE`)."""
    lines = source.splitlines(True) if _type(source) is str else []
    linecache.cache[PROGRAM_FILE] = (sum(map(len, lines)), None, lines, PROGRAM_FILE)


def print_program_traceback(exc):
    """Print ``exc``'s traceback to ``sys.stderr`` (the worker's output, which the result's ``output`` shows), as
    ``python3 prog.py`` prints an uncaught exception: from the program's first frame (the harness's own frames that
    ran it are left out), its lines from :func:`keep_program_source`. Never raises: an exception whose message
    raises, or a stderr the program closed, prints what it can."""
    try:
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != PROGRAM_FILE:
            tb = tb.tb_next
        text = "".join(traceback.format_exception(_type(exc), exc, tb))
        sys.stderr.write(text[-8000:])
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 - a traceback is help for the user, never a reason to fail the worker
        pass


_CODE_CACHE = {}


def compiled(source, filename):
    """``compile(source, filename, "exec")`` for trusted task code, cached: a judge server sees the same prompts
    and tests again for every completion of a prompt (``num_generations``)."""
    key = (source, filename)
    code = _CODE_CACHE.get(key)
    if code is None:
        if len(_CODE_CACHE) >= 4096:
            _CODE_CACHE.clear()
        code = _CODE_CACHE[key] = compile(source, filename, "exec")
    return code


def short_repr(value):
    """``repr(value)``, cut to 200 characters (a value shown in a failing test's message)."""
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def record_mac(key, record):
    """The signature of one record (a dict, without its ``mac``): HMAC-SHA256, hex, keyed by the request's ``key``
    (a secret of the host, which only the judge reads), over the record's JSON with sorted keys. The host keeps only
    the records that carry theirs, so that nothing but the judge can add one, even where the program can write into
    the command's output (see ``trl_sandbox.tasks``)."""
    import hashlib
    import hmac
    import json

    return hmac.new(key.encode(), json.dumps(record, sort_keys=True).encode(), hashlib.sha256).hexdigest()


def add_packages():
    """Put the package directories the backend offers (``$TRL_SANDBOX_PACKAGES``: the local backend's copy of the
    trainer environment's site-packages, read-only) on ``sys.path``, after the standard library."""
    for path in os.environ.get("TRL_SANDBOX_PACKAGES", "").split(os.pathsep):
        if path and path not in sys.path:
            sys.path.append(path)


def harness_file():
    """The file this harness was loaded from: the archive that ``python harness.pyz`` runs, else (the package loaded
    from its directory, as the local backend's fork server does) this module's own file."""
    path = os.path.abspath(__file__)
    while not os.path.exists(path):  # inside the archive: its members are not files
        path = os.path.dirname(path)
    return path
