"""pytest files (KodCode): the task's test file run by pytest in a fork of the judge against the program's names.

The program runs in the worker; the test file's ``from solution import f`` gets the program's names (a module made
of them, whose functions are remote objects), so each test's verdict is decided and recorded by trusted code.
"""

import io
import os
import sys
import time
import types

from .base import NOBODY, Timeout, WorkerDied, _isinstance, describe, harness_file
from .judges import CRASH, load_program
from .processes import WORKER_HOME, run_in_child


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
    return sys.modules["pytest"]


#: A read-only file pytest is pointed at, in the local backend's copy of pytest (see :func:`_pytest_in_child`).
JUDGE_ANCHOR = "test_solution.py"



def _program_directory():
    """A directory the judge may write that the program may read: the worker's home (``python harness.pyz`` as
    root), the fork server's worker slot (``w`` under the judge's directory), else the shared working directory."""
    for path in (WORKER_HOME[0], os.path.join(os.getcwd(), "w"), os.getcwd()):
        if path and os.path.isdir(path) and os.access(path, os.W_OK):
            return path
    return None


def _pytest_key(nodeid):
    """The test function a pytest item belongs to: its node id after the file, without parameters."""
    key = nodeid.split("::", 1)[-1]
    return key.split("[", 1)[0]


def _pytest_in_child(emit, worker, req, names, timeout):
    """pytest's side of :func:`judge_pytest`, in a fork of the judge. The test file never exists on disk: pytest is
    pointed at a file read-only to everything in the sandbox (the local backend's ``test_solution.py`` in its copy of
    pytest, else the harness's own archive) and a plugin gives it, as that file's module, a module made from the test
    source in memory. A program that watches the scratch directories
    finds no test file to read, nor one to replace."""
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    os.environ.pop("PYTEST_ADDOPTS", None)
    try:
        pytest = _import_pytest()
    except ImportError as exc:
        emit({"unsupported": "pytest cannot be imported in the sandbox (pytest-file tasks need it): %s" % (exc,)})
        return
    solution = types.ModuleType(req.get("module") or "solution")
    solution.__dict__.update(names)
    sys.modules[solution.__name__] = solution
    source = req["setup"]
    anchor = os.path.join(os.environ.get("TRL_SANDBOX_JUDGE_PATH") or "/nonexistent", JUDGE_ANCHOR)
    if not os.path.isfile(anchor):
        anchor = harness_file()
    # tmp_path and tempfile: a directory of the program's (it reads the files a test writes there), as its user.
    shared = _program_directory()
    if os.geteuid() == 0 and WORKER_HOME[0] is not None:
        os.setgroups([])
        os.setresgid(NOBODY, NOBODY, NOBODY)
        os.setresuid(NOBODY, NOBODY, NOBODY)
    basetemp = None
    if shared is not None:
        import tempfile

        basetemp = tempfile.mkdtemp(prefix=".pytest-", dir=shared)
        os.environ["TMPDIR"] = basetemp
        tempfile.tempdir = None
    os.chdir(os.path.dirname(anchor))  # pytest collects from here (a fork: the judge's directory is unchanged)

    class TestFile(pytest.Module):
        def _getobj(self):
            module = types.ModuleType("test_solution")
            module.__file__ = anchor
            sys.modules[module.__name__] = module
            exec(compile(source, "test_solution.py", "exec"), module.__dict__)
            return module

    keys = {key: i for i, key in enumerate(req["tests"])}
    outcome = {}

    class Plugin:
        @pytest.hookimpl(tryfirst=True)
        def pytest_pycollect_makemodule(self, module_path, parent):
            return TestFile.from_parent(parent, path=module_path)

        def pytest_collect_file(self, file_path, parent):
            # The archive as the anchor: not a .py file, so pytest's own collector leaves it to this one.
            if file_path.suffix != ".py" and str(file_path) == anchor:
                return TestFile.from_parent(parent, path=file_path)
            return None

        def pytest_runtest_setup(self, item):
            worker.deadline = time.monotonic() + timeout

        def pytest_runtest_makereport(self, item, call):
            key = keys.get(_pytest_key(item.nodeid))
            if key is None:
                return
            state = outcome.setdefault(key, {"ok": True, "ran": False})
            if call.when == "call":
                state["ran"] = True
            if call.excinfo is not None:
                state["ok"] = False
                exc = call.excinfo.value
                if _isinstance(exc, Timeout):
                    state["timeout"] = True
                elif _isinstance(exc, WorkerDied):
                    state["crash"] = True
                    state["error"] = "the program ended the worker"
                elif "error" not in state:
                    state["error"] = describe(exc)[:500]

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
        if basetemp is not None:
            import shutil

            shutil.rmtree(basetemp, ignore_errors=True)
    if not outcome:  # nothing ran: the test file did not import (the program lacks a name it imports...)
        lines = [line for line in report.getvalue().splitlines() if line.startswith("E ")]
        reason = lines[-1][1:].strip() if lines else "no test ran"
        for i in range(len(req["tests"])):
            emit({"i": i, "ok": False, "error": "the tests did not run: %s" % (reason[:400],)})
        return
    for i in range(len(req["tests"])):
        state = outcome.get(i)
        if state is None:
            continue
        record = {"i": i, "ok": state["ok"] and state["ran"]}
        if state.get("timeout"):
            record["timeout"] = True
        elif not state["ran"] and state["ok"]:
            record["error"] = "skipped"
        elif "error" in state:
            record["error"] = state["error"]
        emit(record)
        if state.get("crash"):
            emit(CRASH)
            break


def judge_pytest(emit, worker, req, timeout):
    """KodCode: run the task's pytest file against the program. pytest runs in a fork of the judge (trusted), the
    program in the worker; the file's ``from solution import f`` gets the program's names (a module made of them),
    so each test's verdict is decided and recorded here: ``os._exit(0)`` in the program ends the worker, and that
    test and the ones after it fail. Each test function is one test (all its parameter sets must pass); a skipped
    test does not pass. No ``conftest.py``, ini file or plugin of the scratch directory is ever loaded, and plugins
    installed in the interpreter are not auto-loaded."""
    names = load_program(emit, worker, req, time.monotonic() + timeout)
    if names is None:
        return 0
    try:
        _import_pytest()  # here, once: a judge server's later requests fork with pytest already loaded
    except ImportError:
        pass
    keep = [fd for fd in (worker.cmd_w, worker.reply_r, worker.pidfd,
                          worker.output.fd if worker.output is not None else None) if fd is not None]
    records = run_in_child(lambda out: _pytest_in_child(out, worker, req, names, timeout), worker.cap or
                        time.monotonic() + 3600, keep=keep)
    for record in records:
        if "unsupported" in record:
            emit({"load": "unsupported", "error": record["unsupported"]})
            return 0
        if "child_error" in record:  # pytest itself failed here: not the program's doing
            emit({"load": "unsupported", "error": "pytest failed in the judge: %s" % (record["child_error"],)})
            return 0
        emit(record)
    return len(req["tests"])
