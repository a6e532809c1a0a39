"""pytest files (KodCode): the task's test file run by pytest in a fork of the judge against the program's names.

The program runs in the worker; the test file's ``from solution import f`` gets the program's names (a module made
of them, whose functions are remote objects), so each test's verdict is decided and recorded by trusted code.

The official harness runs the test file and ``solution.py`` in one process, and a row passes when pytest exits 0.
Here, three rules make the two processes behave as that one:

- **Patches reach the program.** What the tests change with ``unittest.mock`` (``patch``, ``patch.object``,
  ``patch.dict``) and pytest's ``monkeypatch`` in modules and in ``os.environ`` is made the same in the worker before
  each request (:class:`Patches`): ``patch("builtins.input", side_effect=[...])``, ``patch("random.randint")``,
  ``patch("solution.helper")`` (the program's own calls to ``helper`` see the mock), ``monkeypatch.setattr(
  "sys.stdin", io.StringIO(...))``, ``monkeypatch.setenv``. The program gets the tests' mocks as remote objects:
  its calls are recorded in the judge, where the test inspects them, and a ``side_effect`` exception is raised in
  the program. It may call a mock, never reach its own methods (``reset_mock``): nothing it does rewrites a record.
- **Skips count as pytest counts them.** A skipped test (``@pytest.mark.skip``, ``pytest.skip()``,
  ``pytest.importorskip``), an xfail test that fails (or raises the ``raises=`` it names) and a non-strict xfail test
  that passes fail nothing, as pytest's exit status 0 says: each counts as *passed*. A strict xfail test that passes
  fails. A skip, xfail or exit raised by the program's code never counts (the tests decide, not the program), nor
  does a test the program timed out or crashed in, xfail or not. A test file that skips itself whole (pytest
  collects no test, exit status 5: every program fails alike) is reported as unsupported, not the program's doing.
- **The judge's time is never the program's.** Importing pytest, collecting the file and the tests' own time
  (fixtures, ``time.sleep``) are outside the program's limits: each test (and the test file's module-level calls)
  gives the program ``test_timeout_s`` of its own time (:attr:`.processes.Worker.budget`). A judge that cannot start
  (pytest not importable, or collection past :data:`JUDGE_START_S`) is reported as unsupported, with ``infra``.

- **Values behave as in the one process.** A mutable value that crosses is one object on each side, kept alike after
  every message and coming back as itself (:mod:`.twins`); the program's module-level names are sent again when a
  call rebinds them; the tests' warnings, loggers, random generators, ``sys.stdin`` and the program's docstring
  examples are bridged (:mod:`.bridge`); the tests run in a writable directory the program shares. The program's own
  ``test_*`` functions (brought by ``from solution import *``) run, without the tests' fixtures, and one that fails
  fails the row, as pytest then exits 1.

One rule makes the two processes stricter than that one, where it would pay a wrong program: **the tests' names stay
theirs.** ``from solution import *`` binds none of the program's names that the test file bound before it (its
``import pytest``, ``import math``: a program's ``pytest`` or ``math`` object, or a module it imported under that
name, never replaces them) nor a builtin's (the program's ``sorted`` never becomes the tests'), but for the functions
the row's ``test_info`` names (:func:`_star_view`); a name the file did not bind (a module the solution imported
and the file uses without importing it, a helper class) still comes from the program, as in one process. And a
program's context manager never swallows a test's failure (see :meth:`.remote.Remote.__exit__`).
"""

import builtins
import io
import linecache
import os
import signal
import sys
import time
import types

from .base import (
    PROGRAM_FILE,
    SOLUTION_MODULE,
    ProgramValueError,
    Timeout,
    Unserializable,
    ValueNotSent,
    WorkerDied,
    _callable,
    _isinstance,
    _type,
    describe,
    harness_file,
)
from .judges import BUILTIN_NAMES, CRASH, load_program
from .patches import Patches, install
from .peer import crossed
from .accounts import PROGRAM_UID, become
from .processes import DELETED, WORKER_HOME, run_in_child
from .remote import Remote


def _import_pytest():
    """Import pytest in the judge: from its path, else from the copy the local backend made readable
    (``$TRL_SANDBOX_JUDGE_PATH``), else from the interpreter's site-packages (the local backend starts Python without
    them: the program never sees them, the judge may). Raises ImportError."""
    try:
        import pytest  # noqa: F401
    except ImportError:
        import site

        paths = [os.environ.get("TRL_SANDBOX_JUDGE_PATH") or "", *site.getsitepackages()]
        for path in paths:
            if path and path not in sys.path:
                sys.path.append(path)
        import pytest  # noqa: F401
    import unittest.mock  # noqa: F401 - the tests' patches go through it (see Patches)
    return sys.modules["pytest"]


#: A read-only file pytest is pointed at, in the local backend's copy of pytest (see :func:`_pytest_in_child`).
JUDGE_ANCHOR = "test_solution.py"
#: The test file's module name (``patch("test_solution.X")``; classes it defines carry it).
TEST_MODULE = "test_solution"
#: Seconds the judge may take to start in its fork (pytest's session, collecting the test file: the program's
#: module-level calls there have their own budget) before the run is given up as the infrastructure's failure.
JUDGE_START_S = 60.0
def _skip_types(pytest):
    """The exceptions that make pytest skip or xfail a test, or stop the session: only the tests may raise them."""
    import unittest

    outcomes = sys.modules.get("_pytest.outcomes")
    found = [unittest.SkipTest, pytest.skip.Exception, pytest.xfail.Exception, pytest.exit.Exception]
    if outcomes is not None and isinstance(getattr(outcomes, "OutcomeException", None), type):
        found.append(outcomes.OutcomeException)
    return tuple(found)


def _plain(exc):
    """A failure in plain words: never the harness's own exception names (see :func:`.base.describe`)."""
    if _isinstance(exc, Unserializable):
        return "a value could not cross between the program and the tests: %s" % (exc,)
    return describe(exc)[:500]


def _star_view(solution, space, entries):
    """What ``from solution import *`` binds in the test module whose namespace is ``space``: a module with the
    program's public names (as Python's star import takes them) but those ``space`` already binds and those of
    builtins, unless they are in ``entries`` (the functions under test, which may be named like a builtin)."""
    view = types.ModuleType(solution.__name__)
    names = [name for name in list(solution.__dict__) if _type(name) is str and not name.startswith("_")
             and (name in entries or (name not in space and name not in BUILTIN_NAMES))]
    for name in names:
        view.__dict__[name] = solution.__dict__[name]
    view.__all__ = names
    return view


def _guarded_import(solution, entries):
    """``builtins.__import__`` while the test file runs: ``from solution import *`` in it gets :func:`_star_view`;
    every other import is Python's."""
    real_import = builtins.__import__

    def import_(name, globals=None, locals=None, fromlist=(), level=0):
        module = real_import(name, globals, locals, fromlist, level)
        if module is solution and fromlist and "*" in fromlist and _type(globals) is dict and \
                globals.get("__name__") == TEST_MODULE:
            return _star_view(solution, globals, entries)
        return module

    return import_


def _program_directory():
    """A directory the judge may write that the program may read: the worker's home (``python harness.pyz`` as
    root), the fork server's worker slot (``w`` under the judge's directory), else the shared working directory."""
    for path in (WORKER_HOME[0], os.path.join(os.getcwd(), "w"), os.getcwd()):
        if path and os.path.isdir(path) and os.access(path, os.W_OK):
            return path
    return None


def _remove(path):
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def _pytest_key(nodeid):
    """The test function a pytest item belongs to: its node id after the file, without parameters."""
    key = nodeid.split("::", 1)[-1]
    return key.split("[", 1)[0]


def _start_alarm(emit, cleanup):
    """Give the judge :data:`JUDGE_START_S` to start: past it, report an infrastructure failure, ``cleanup()`` and
    end this fork. Returns the function that disarms it (called when collection is done)."""
    def too_slow(signum, frame):
        emit({"unsupported": "the judge did not start within %g s (pytest's start and collecting the test file)"
                             % JUDGE_START_S, "infra": True})
        cleanup()
        os._exit(0)

    def disarm():
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)  # a test's own signal.alarm() finds what it would have found

    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.setitimer(signal.ITIMER_REAL, JUDGE_START_S)
    return disarm


def _pytest_in_child(emit, worker, req, names, timeout):
    """pytest's side of :func:`judge_pytest`, in a fork of the judge. The test file never exists on disk: pytest is
    pointed at a file read-only to everything in the sandbox (the local backend's ``test_solution.py`` in its copy of
    pytest, else the harness's own archive) and a plugin gives it, as that file's module, a module made from the test
    source in memory. A program that watches the scratch directories finds no test file to read, nor one to
    replace."""
    scratch = []  # the directory of pytest's temporary files, removed at the end
    workdir = []  # the tests' working directory, in it
    disarm = _start_alarm(emit, lambda: [_remove(path) for path in scratch])
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    os.environ.pop("PYTEST_ADDOPTS", None)
    pytest = _import_pytest()  # already imported by judge_pytest: its failure is reported there
    skip_types = _skip_types(pytest)
    patches = None

    class SolutionModule(types.ModuleType):
        """The test file's ``solution``: assigning to it (``solution.helper = fake``) is a patch too."""

        def __setattr__(self, name, value):
            if patches is not None:
                patches.note(self, name)
            types.ModuleType.__setattr__(self, name, value)

        def __delattr__(self, name):
            if patches is not None:
                patches.note(self, name)
            types.ModuleType.__delattr__(self, name)

    solution = SolutionModule(req.get("module") or "solution")
    solution.__dict__.update(names)
    sys.modules[solution.__name__] = solution
    # The program's functions say they belong to its module (``__module__``, ``co_filename``): ``inspect.getsource``
    # and ``doctest.testmod(solution)`` find it, and its source, here, as in the tests' process. The source is the
    # judge's own copy of the program (nothing the program runs can change what the tests read).
    sys.modules[SOLUTION_MODULE] = solution
    program = req["program"]
    linecache.cache[PROGRAM_FILE] = (len(program), None, program.splitlines(True), PROGRAM_FILE)
    source = req["setup"]
    anchor = os.path.join(os.environ.get("TRL_SANDBOX_JUDGE_PATH") or "/nonexistent", JUDGE_ANCHOR)
    if not os.path.isfile(anchor):
        anchor = harness_file()
    # tmp_path and tempfile: a directory of the program's (it reads the files a test writes there), as its user.
    shared = _program_directory()
    if os.geteuid() == 0 and WORKER_HOME[0] is not None:
        become(PROGRAM_UID[0])
    basetemp = None
    if shared is not None:
        import tempfile

        basetemp = tempfile.mkdtemp(prefix=".pytest-", dir=shared)
        scratch.append(basetemp)
        os.environ["TMPDIR"] = basetemp
        tempfile.tempdir = None
        # The tests' working directory, as the directory run_test.sh runs pytest in: writable, and the program's too
        # (a test writes "data.txt" where it runs and the program opens it by that name). pytest starts in the
        # anchor's directory and moves there at the session's start, so that it comes back to a directory that
        # outlives the worker's home (where this one is) when it ends.
        workdir.append(tempfile.mkdtemp(prefix="cwd-", dir=basetemp))
    os.chdir(os.path.dirname(anchor))  # (a fork: the judge's own directory is unchanged)
    patches = Patches(solution)
    patches.cwd = patches.cwd_sent = None  # the worker is told the tests' directory before the first call
    install(patches, pytest)
    worker.before_request = patches.sync

    def renamed(name, value):  # the program rebound or deleted a module-level name: the tests' module says so too
        if value is DELETED:
            solution.__dict__.pop(name, None)
        else:
            solution.__dict__[name] = value

    worker.on_names = renamed
    worker.after_answer = lambda answer: patches.bridge.after(answer, worker)
    patches.bridge.route_doctests(worker)
    worker.test_modules = worker.test_modules + (TEST_MODULE,)
    collect_errors = []

    class TestFile(pytest.Module):
        def _getobj(self):
            module = types.ModuleType(TEST_MODULE)
            module.__file__ = anchor
            sys.modules[module.__name__] = module
            patches.test_globals = module.__dict__
            worker.deadline, worker.budget = None, timeout  # the file's own calls into the program: one test's budget
            saved_import = builtins.__import__
            builtins.__import__ = _guarded_import(solution, frozenset(req.get("entries") or ()))
            try:
                exec(compile(source, "test_solution.py", "exec"), module.__dict__)
            except BaseException as exc:  # noqa: BLE001 - kept to say why no test ran; pytest reports it too
                if crossed(exc) and _isinstance(exc, skip_types):  # the program's skip: an error, never a skip
                    error = RuntimeError("the program raised %s" % (_type(exc).__name__,))
                    collect_errors.append(error)
                    raise error from None
                if not _isinstance(exc, skip_types):  # a skip of the test file's own: pytest reports it
                    collect_errors.append(exc)
                raise
            finally:
                builtins.__import__ = saved_import
            return module

    keys = {key: i for i, key in enumerate(req["tests"])}
    outcome = {}
    foreign = []  # the program's own test functions that failed
    skipped_file = []
    last_error = [None]  # the exception text of the phase pytest is about to report
    value_failures = [0]  # the program's failures to send a value when the current test started

    class Plugin:
        @pytest.hookimpl(tryfirst=True)
        def pytest_pycollect_makeitem(self, collector, name, obj):
            # An object of the program's in the tests' module (through `from solution import *`): its `test_*`
            # functions run, as in the one process, but are never given the tests' fixtures (their parameters would
            # hand it the tests' data); nothing else of the program's is collected.
            if _type(obj) is not Remote:
                return None
            if _type(name) is str and name.startswith("test") and _callable(obj):
                return pytest.Function.from_parent(collector, name=name, callobj=lambda: obj())
            return []

        @pytest.hookimpl(tryfirst=True)
        def pytest_pycollect_makemodule(self, module_path, parent):
            return TestFile.from_parent(parent, path=module_path)

        def pytest_collect_file(self, file_path, parent):
            # The archive as the anchor: not a .py file, so pytest's own collector leaves it to this one.
            if file_path.suffix != ".py" and str(file_path) == anchor:
                return TestFile.from_parent(parent, path=file_path)
            return None

        def pytest_sessionstart(self, session):
            install(patches, pytest)  # an older pytest loads its monkeypatch module with its plugins
            if workdir:
                os.chdir(workdir[0])

        def pytest_collectreport(self, report):
            if report.skipped and isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
                skipped_file.append(str(report.longrepr[2]))

        def pytest_collection_finish(self, session):
            disarm()
            emit({"collected": True})

        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_setup(self, item):
            worker.deadline, worker.budget = None, timeout  # the program's own time in this test
            value_failures[0] = worker.value_failures

        @pytest.hookimpl(trylast=True)
        def pytest_runtest_teardown(self, item, nextitem):
            worker.end_strays()  # what the program left running computes for no later test (see .strays)

        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_makereport(self, item, call):
            last_error[0] = None
            key = keys.get(_pytest_key(item.nodeid))
            caught = worker.value_failures != value_failures[0]  # the test's code may have caught it
            if key is None or (call.excinfo is None and not caught):
                return
            state = outcome.setdefault(key, {})
            exc = call.excinfo.value if call.excinfo is not None else ProgramValueError(worker.value_failure)
            last_error[0] = _plain(exc)
            if _isinstance(exc, (Timeout, WorkerDied)):
                # The worker is gone, and its home with the tests' directory: pytest must not be left in it.
                os.chdir(os.path.dirname(anchor))
            if _isinstance(exc, Timeout):
                state["timeout"] = True
            elif _isinstance(exc, WorkerDied):
                state["crash"] = True
            elif _isinstance(exc, ValueNotSent):
                state["unserializable"] = str(exc)[:300]
            elif _isinstance(exc, ProgramValueError) or caught:
                # The test fails whatever pytest makes of it: an xfail test, or pytest.raises(BaseException).
                state["forced"] = _plain(exc if _isinstance(exc, ProgramValueError) else
                                         ProgramValueError(worker.value_failure))
            elif crossed(exc) and _isinstance(exc, skip_types):
                state["forced"] = "the program raised %s: only a test may skip, xfail or stop the run" % (
                    _type(exc).__name__,)
            else:
                return
            if "error" not in state:  # the test fails whatever pytest makes of it (an xfail test included)
                state["error"] = state.get("forced") or last_error[0]

        def pytest_runtest_logreport(self, report):
            key = keys.get(_pytest_key(report.nodeid))
            if key is None:  # not a test of the row's file: one the program brought (``from solution import *``)
                if report.failed and _pytest_key(report.nodeid) not in foreign:
                    foreign.append(_pytest_key(report.nodeid))
                return
            state = outcome.setdefault(key, {})
            if report.when == "call":
                state["ran"] = True
            if report.failed:
                state["failed"] = True
                if "error" not in state:
                    text = str(report.longrepr or "").strip().splitlines()
                    state["error"] = last_error[0] or (text[-1] if text else "the test failed")[:500]
            elif report.skipped:
                state["skipped"] = True

    argv = [anchor, "-q", "--capture=sys", "-p", "no:cacheprovider", "-p", "no:stepwise", "--noconftest", "-c",
            os.devnull, "--rootdir", os.path.dirname(anchor), "--confcutdir", os.path.dirname(anchor)]
    if basetemp is not None:
        argv += ["--basetemp", os.path.join(basetemp, "t")]
    if req.get("stop_on_failure") is True:
        argv.append("-x")
    saved = sys.stdout
    report = sys.stdout = io.StringIO()  # pytest's report is not the result channel
    try:
        pytest.main(argv, plugins=[Plugin()])
    finally:
        sys.stdout = saved
        disarm()
        os.chdir("/")  # out of the tests' directory, removed with the rest
        for path in scratch:
            _remove(path)
    if not outcome:
        _nothing_ran(emit, req, collect_errors, skipped_file, report.getvalue())
        return
    for i in range(len(req["tests"])):
        state = outcome.get(i)
        if state is None:
            continue
        broken = state.get("timeout") or state.get("crash") or state.get("unserializable") or state.get("forced")
        ok = not broken and not state.get("failed") and (state.get("ran") is True or state.get("skipped") is True)
        if ok and foreign:  # the one pytest process collects them too, and exits 1: the row fails
            ok = False
            state["error"] = ("the program's own test %s failed (its file's `from solution import *` brings it into "
                              "the tests, and pytest runs it)" % (foreign[0],))
        record = {"i": i, "ok": bool(ok)}
        if state.get("timeout"):
            record["timeout"] = True
        if state.get("unserializable"):
            record["unserializable"] = state["unserializable"]
        if ok and state.get("skipped"):
            record["skipped"] = True
        elif not ok:
            record["error"] = state.get("error") or "the test did not run"
        emit(record)
        if state.get("crash"):
            emit(CRASH)
            break


def _nothing_ran(emit, req, collect_errors, skipped_file, report):
    """No test ran: the test file did not import (the program lacks a name it imports, its module-level call into
    the program failed or timed out...), or it skipped itself whole."""
    if not collect_errors and skipped_file:
        # pytest collects no test and exits 5: every program fails alike, none by its own doing.
        emit({"unsupported": "pytest skipped the whole test file, so no test ran: %s" % (skipped_file[0][:300],)})
        return
    exc = collect_errors[0] if collect_errors else None
    if exc is not None:
        reason = _plain(exc)
    else:
        lines = [line for line in report.splitlines() if line.startswith("E ")]
        reason = lines[-1][1:].strip() if lines else "no test ran"
    for i in range(len(req["tests"])):
        record = {"i": i, "ok": False, "error": "the tests did not run: %s" % (reason[:400],)}
        if i == 0 and _isinstance(exc, Timeout):
            record["timeout"] = True
        emit(record)
    if _isinstance(exc, WorkerDied):
        emit(CRASH)


def judge_pytest(emit, worker, req, timeout):
    """KodCode: run the task's pytest file against the program (see the module docstring for its rules). pytest runs
    in a fork of the judge (trusted), the program in the worker; the file's ``from solution import f`` gets the
    program's names (a module made of them), so each test's verdict is decided and recorded here: ``os._exit(0)`` in
    the program ends the worker, and that test and the ones after it fail. Each test function is one test (all its
    parameter sets must pass; a skipped one counts as passed). No ``conftest.py``, ini file or plugin of the scratch
    directory is ever loaded, and plugins installed in the interpreter are not auto-loaded."""
    try:
        _import_pytest()  # before the program's load, outside its limits; a judge server's later forks have it
    except ImportError as exc:  # the sandbox's image lacks pytest: a setup to fix (invalid_task), not a retry
        emit({"load": "unsupported",
              "error": "pytest cannot be imported in the sandbox (pytest-file tasks need it): %s" % (exc,)})
        return 0
    except Timeout:  # the run's whole time went on importing pytest
        emit({"load": "unsupported", "infra": True, "error": "importing pytest in the sandbox took the whole run"})
        return 0
    names = load_program(emit, worker, req, timeout)
    if names is None:
        return 0
    keep = worker.descriptors()  # its pipes, and what times it (its CPU reader, its worker group)
    records = []
    try:
        run_in_child(lambda out: _pytest_in_child(out, worker, req, names, timeout), worker.cap or
                     time.monotonic() + 3600, keep=keep, records=records)
    except Timeout:
        if not any(record.get("collected") for record in records):  # the judge never got to the first test
            emit({"load": "unsupported", "infra": True,
                  "error": "the judge did not start in time (pytest's start and collecting the test file)"})
            return 0
        raise
    for record in records:
        if "collected" in record:
            continue
        if "unsupported" in record:
            failure = {"load": "unsupported", "error": record["unsupported"]}
            if record.get("infra"):
                failure["infra"] = True
            emit(failure)
            return 0
        if "child_error" in record:
            if any("collected" in earlier for earlier in records):
                # The tests' process ended once the program's code had run in it (a state it sent crashed it): the
                # program's doing, never a None reward.
                reason = "the tests' process ended while running the program's tests (%s)" % (record["child_error"],)
                for i in range(len(req["tests"])):
                    emit({"i": i, "ok": False, "error": reason[:500]})
                emit(CRASH)
                return len(req["tests"])
            emit({"load": "unsupported", "infra": True, "error": "pytest failed in the judge: %s" % (
                record["child_error"],)})  # pytest itself failed before any test: not the program's doing
            return 0
        emit(record)
    return len(req["tests"])
