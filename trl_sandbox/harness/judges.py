"""The judges, one per test mode of a request: each loads the program in the worker, runs the tests, and emits one
record per test.

The official harnesses (HumanEval's ``execution.py``, MBPP's) ``exec`` the program and the tests as one module. Here
the tests run in the judge and the program in the worker, and the judge's namespace mirrors the worker's module:
after loading, every module-level name of the program reaches the judge, as a value when it is plain data and as a
remote object otherwise (see :mod:`.values`). ``sys.setrecursionlimit`` in a test applies to the program. For
HumanEval tasks the judge runs the task's own code prefix (trusted) first, so helper functions the tests use
(``poly``, ``encode_cyclic``) are the task's, whatever the program redefines. Where the single module would let the
program's names become the tests', we refuse: a name of the program's never replaces a builtin in the tests'
namespace (its ``def set(*a): return 0`` does not pass ``assert set(f(x)) == set(y)``, nor its ``range`` empty the
tests' loops, nor its ``abs`` pass their tolerance checks), unless it is the function under test itself (MBPP's
``sum``); the modules the tests import are imported after the program's names, so they stay the tests' own.

Modes (the request's ``mode``): ``assert`` (HumanEval, MBPP: :func:`judge_assert`), ``call`` (calls compared with a
reference's outputs, the TRL Daytona example: :func:`judge_call`), ``stdio`` (stdin/stdout tests:
:func:`judge_stdio`), ``function`` (calls with JSON arguments, APPS/TACO and LiveCodeBench: :func:`judge_function`),
``reference`` (the reference's own outputs, trusted code only: :func:`judge_reference`); ``pytest`` is in
:mod:`.pytest_runner`. Each judge is ``judge(emit, worker, req, timeout)``: ``emit`` takes one record (a dict),
``worker`` is a :class:`.processes.Worker`, ``req`` the request, ``timeout`` each test's seconds; it returns the
number of tests it went through.
"""

import ast
import builtins
import copy
import json
import math
import random
import signal
import sys
import time
import types

from .base import (
    TESTS_MODULE,
    ProgramValueError,
    Timeout,
    ValueNotSent,
    WorkerDied,
    _callable,
    _getattr,
    _isinstance,
    _type,
    compiled,
    describe,
    short_repr,
)
from .checkers import run_checker
from .groups import TestSkipper, TreeSkipper
from .interaction import run_interaction
from .compare import apps_key_fix, normalize_stdout, same_call_output, same_output, same_value
from .remote import Remote
from .values import decode, encode, strict_str


class _Missing:
    """Stands for a function the tests call that the program does not define."""

    def __init__(self, name):
        self.name = name

    def __call__(self, *args, **kwargs):
        raise NameError("the program does not define %s()" % self.name)


class _SysForTests(types.ModuleType):
    """``sys`` as the tests see it: the judge's own, but ``setrecursionlimit`` also applies to the program (the
    official harnesses run tests and program in one process)."""

    def __init__(self, worker):
        super().__init__("sys")
        self.__dict__["_worker"] = worker

    def __getattr__(self, name):
        return _getattr(sys, name)

    def setrecursionlimit(self, limit):
        sys.setrecursionlimit(max(int(limit), sys.getrecursionlimit()))
        self.__dict__["_worker"].request({"q": "setrec", "n": int(limit)})


def _test_builtins(worker):
    """The builtins of the test namespace: the judge's, with ``import sys`` giving :class:`_SysForTests`."""
    shim = _SysForTests(worker)
    real_import = builtins.__import__

    def import_(name, globals=None, locals=None, fromlist=(), level=0):
        if name == "sys" and level == 0:
            return shim
        return real_import(name, globals, locals, fromlist, level)

    table = dict(builtins.__dict__)
    table["__import__"] = import_
    return table


def load_program(emit, worker, req, timeout):
    """Load the program in the worker within ``timeout`` seconds of its CPU time (see
    :meth:`.processes.Worker.time_test`); emit a load record and return None on failure, else its names (a dict of
    values and remote objects)."""
    msg = {"q": "load", "mode": req["mode"], "program": req["program"], "banned": req.get("banned"),
           "prelude": req.get("prelude") or "", "one_process": req["mode"] == "pytest"}
    worker.time_test(timeout)
    try:
        answer = worker.request(msg, raw=True)
    except Timeout:
        emit({"load": "timeout", "error": "loading the program took longer than the test time limit"})
        return None
    except WorkerDied:
        emit({"load": "error", "error": "the program ended the worker while loading"})
        return None
    if "e" in answer:
        info = answer["e"]
        emit({"load": "error", "error": str(info.get("desc") if _isinstance(info, dict) else info)[:500]})
        return None
    if "u" in answer:
        emit({"load": "error", "error": "loading the program: %s" % (str(answer["u"])[:200],)})
        return None
    try:
        # Never a dunder name: the worker sends none (a forged answer could, to replace the tests' __builtins__).
        names = {strict_str(name): decode(value, worker) for name, value in answer["names"]
                 if not strict_str(name).startswith("__")}
    except Exception:  # noqa: BLE001 - not the harness's answer
        worker.kill()
        emit({"load": "error", "error": "the program ended the worker while loading"})
        return None
    worker.received(list(names.values()))  # the program's constants: the tests may send them back
    return names


CRASH = {"crash": "the program ended the test run early"}
#: The builtins' names, which a name of the program's never rebinds in the tests' namespace (see the module
#: docstring), but for the functions under test (a request's ``entry`` and ``entries``).
BUILTIN_NAMES = frozenset(builtins.__dict__)


def _run_tests(emit, worker, req, timeout, run_test):
    """Run ``run_test(i, test)`` for each test with its own limit (``timeout`` seconds of the CPU time of the worker
    and of every process the program started, see :meth:`.processes.Worker.time_test`), end what the program left
    running (:meth:`.processes.Worker.end_strays`) and emit its record; stop at the first timeout,
    crash or value of the tests' own that cannot cross (:class:`.base.ValueNotSent`: the run is ``unserializable``),
    and at the first failure when ``stop_on_failure``. With the request's ``groups`` (a task's subtasks), a test
    none of whose subtasks can earn from it any more is skipped (:class:`.groups.TestSkipper`), and a timeout ends
    that test only. A value of the program's that cannot cross
    (:class:`.base.ProgramValueError`) fails its test, even when the test's code caught it."""
    n = 0
    stop_on_failure = req.get("stop_on_failure") is True
    groups = req.get("groups")
    skipper = TestSkipper(groups, len(req["tests"])) if _type(groups) is list and groups else None
    if _type(req.get("score_tree")) is dict:  # a Kattis scoring package's groups (see .groups.TreeSkipper)
        skipper = TreeSkipper(req["score_tree"])
    skipped = []
    for i, test in enumerate(req["tests"]):
        if skipper is not None and not skipper.needed(i):
            skipped.append(i)  # none of its subtasks can earn from it any more (see .groups): not run, counted 0
            continue
        n += 1
        worker.time_test(timeout)
        failures = worker.value_failures
        try:
            record = run_test(i, test)
        except Timeout:
            emit({"i": i, "ok": False, "timeout": True})
            if skipper is not None:  # subtasks: the others still earn; the worker is replaced for the next test
                skipper.ran(i, {"ok": False})
                continue
            break
        except WorkerDied:
            emit(CRASH)
            break
        except ValueNotSent as exc:
            emit({"i": i, "ok": False, "unserializable": str(exc)})
            break
        except ProgramValueError as exc:  # a judge that lets it through: the test's failure all the same
            record = {"i": i, "ok": False, "error": describe(exc)}
        if record.get("ok") and worker.value_failures != failures:  # the test's code caught it (except BaseException)
            record = {"i": i, "ok": False, "error": describe(ProgramValueError(worker.value_failure))}
        worker.end_strays()  # what the program left running computes for no later test (see .strays)
        emit(record)
        if skipper is not None:
            skipper.ran(i, record)
        if stop_on_failure and not record.get("ok"):
            break
    if skipped:
        emit({"skipped": skipped})
    return n


def _failure(test, exc):
    """The error of a failed assert test: the exception, and the failing test's source when it says nothing."""
    text = describe(exc)
    if _type(exc) is AssertionError and not str(exc):
        text = "AssertionError: " + " ".join(test.split())[:300]
    return text


def judge_assert(emit, worker, req, timeout):
    """HumanEval and MBPP: run the task's trusted code prefix (``trusted``), put the program's names in the tests'
    namespace, run ``setup`` (HumanEval's ``check``, MBPP's imports and ``test_setup_code``), then each test. A name
    of the program's reaches the tests unless the prefix defines it or it is a builtin's (the tests' ``set``,
    ``range``, ``abs`` stay theirs), but for the functions under test: ``entry`` (HumanEval's ``entry_point``) and
    ``entries`` (the functions MBPP's tests call, which may be named like a builtin)."""
    names = load_program(emit, worker, req, timeout)
    if names is None:
        return 0
    ns = {"__name__": TESTS_MODULE, "__builtins__": _test_builtins(worker)}
    try:
        exec(compiled(req.get("trusted") or "", "<task prompt>"), ns)
    except BaseException as exc:  # noqa: BLE001 - a broken task, reported as such
        emit({"load": "error", "error": "task prompt failed: " + describe(exc)})
        return 0
    trusted = set(ns)
    entry = req.get("entry")
    entries = {str(name) for name in req.get("entries") or ()} | ({entry} if entry else set())
    for name, value in names.items():
        if name in entries or (name not in trusted and name not in BUILTIN_NAMES):
            ns[name] = value
    if entry and entry not in names:
        ns[entry] = _Missing(entry)
    worker.time_test(timeout)
    try:
        exec(compiled(req.get("setup") or "", "<task tests>"), ns)
    except (Timeout, WorkerDied):
        emit({"load": "error", "error": "the task's test setup did not complete with this program"})
        return 0
    except ValueNotSent as exc:  # the setup's own value (MBPP's test_setup_code) cannot reach the program
        emit({"i": 0, "ok": False, "unserializable": str(exc)})
        return 1
    except BaseException as exc:  # noqa: BLE001 - setup that uses the program (MBPP's) failed with it
        emit({"load": "error", "error": "task test setup failed: " + describe(exc)})
        return 0

    def run_test(i, test):
        try:
            exec(compiled(test, "<test %d>" % i), ns)
            return {"i": i, "ok": True}
        except (Timeout, WorkerDied, ValueNotSent):
            raise
        except BaseException as exc:  # noqa: BLE001
            return {"i": i, "ok": False, "error": _failure(test, exc)}

    return _run_tests(emit, worker, req, timeout, run_test)


def judge_call(emit, worker, req, timeout):
    names = load_program(emit, worker, req, timeout)
    if names is None:
        return 0
    func = names.get(req["func_name"])
    if func is None:
        func = _Missing(req["func_name"])
    expected = [decode(e) for e in req.get("expected", ())]

    def run_test(i, literal):
        arg = ast.literal_eval(literal)
        try:
            out = func(arg)
        except (Timeout, WorkerDied, ValueNotSent):
            raise
        except BaseException as exc:  # noqa: BLE001
            return {"i": i, "ok": False, "error": describe(exc)}
        if i < len(expected) and same_value(out, expected[i]):
            return {"i": i, "ok": True}
        want = short_repr(expected[i]) if i < len(expected) else "?"
        return {"i": i, "ok": False, "error": "returned %s, expected %s" % (short_repr(out), want)}

    return _run_tests(emit, worker, req, timeout, run_test)


def _crashed(record, reply, text):
    """Mark ``record`` as a test the program crashed on (it raised, exited non-zero where that counts, or its
    process died), noting whether it printed anything first (:meth:`trl_sandbox.tasks.Task.judge`: a program that
    crashes before any output on every test is an ``error``)."""
    record["crashed"] = True
    record["printed"] = bool((reply or {}).get("out", "").strip())
    record["error"] = str(text)[:500]
    return record


def judge_stdio(emit, worker, req, timeout):
    """Run the program once per test input; judge its stdout with the request's ``compare`` (a judge of
    :func:`.compare.same_output`, or ``{"checker": source}``: see :func:`.checkers.run_checker`).
    ``memory_limit_bytes``: a test whose run grew the worker's peak resident memory past it fails with "memory limit
    exceeded", as a judge measures it (the sandbox's own limit stays the hard cap). ``files``: ``[input name, output
    name]`` of file-mode problems; ``files_only``: those files are the program's only input and output (no stdin,
    stdout discarded: open-r1 Codeforces' file mode). ``test_compares``: per test, None or what its judge is instead
    (a stdout judge) or over the checker (its ``flags``): a Kattis test group's own ``output_validator_flags``.

    Each test is one run of the program, as ``python3 prog.py < input`` is (see :func:`.stdio.run_stdin`). A run that
    raises, or ends its process (a non-zero ``os._exit``, a signal, a stack overflow), fails that test only: a Python
    program runs in the worker, which is then replaced by a fresh one (:meth:`.processes.Worker.restart`) and the next
    test runs. A non-zero exit status (``sys.exit(1)``) fails the test, unless the request's ``nonzero_exit`` is
    ``"ignored"``: APPS and LiveCodeBench swallow ``SystemExit``, rllm's runner (DeepCoder, PrimeIntellect) ignores
    the exit status, and each judges what was printed; or ``"judged"``: however the run ended (an exception, an exit
    status, ``os._exit``, a signal of a compiled program), what it printed is judged, as code_contests' tester judges
    a test by its output alone. ``os._exit(status)`` ends the run as it ends a ``python3 prog.py`` process (see
    :func:`.stdio._os_exit`): status 0 is a normal end, judged on what reached stdout (Python's unflushed buffer is
    lost); any other status fails the test unless the output is ``"judged"``; the worker it ended is replaced for the
    next test. The first test past its time limit ends the run (the remaining tests are not run), but for a task
    with subtasks (the request's ``groups`` or ``score_tree``): that test fails and the next runs (in a fresh worker
    where the timeout ended this one, a compiled program compiled again there)."""
    build = req.get("build")
    if build:
        if not _build_in_worker(emit, worker, req, build):
            return 0
    elif load_program(emit, worker, req, timeout) is None:
        return 0
    limit = int(req.get("output_limit", 1 << 20))
    expected = req.get("expected") or []
    base_compare = req.get("compare") or {}
    exit_modes = (req.get("nonzero_exit"), base_compare.get("nonzero_exit"))
    exit_ignored = "ignored" in exit_modes
    output_judged = "judged" in exit_modes
    memory = req.get("memory_limit_bytes")
    msg = {"q": "stdio", "limit": limit, "files": req.get("files") or None, "timeout": timeout,
           "files_only": bool(req.get("files_only"))}
    state = {"dead": False}

    interactor = req.get("interactor")

    grouped = bool(req.get("groups") or req.get("score_tree"))  # the tests after a timeout still run

    overrides = req.get("test_compares") if _type(req.get("test_compares")) is list else []

    def run_test(i, text):
        compare = base_compare
        override = overrides[i] if i < len(overrides) else None
        if _type(override) is dict:  # a Kattis group's own validator flags (its judge, or its checker's flags)
            compare = dict(base_compare, **override) if "checker" in base_compare else override
        if not worker.alive and (not build or grouped):  # a checker, an interactor or a timeout ended the worker
            state["dead"] = True
        if state["dead"]:  # the program ended the last test's worker: a fresh one, the program loaded again
            worker.restart()
            state["dead"] = False
            if build:  # compiled again in the fresh worker (subtasks: the later groups still earn)
                if not _build_in_worker(lambda record: None, worker, req, build):
                    raise WorkerDied()
            elif load_program(lambda record: None, worker, req, timeout) is None:
                raise WorkerDied()
            worker.time_test(timeout)
        if interactor:
            return _interactive_test(i, text, expected[i] if i < len(expected) else "", worker, req, timeout,
                                     state)
        if build:  # the worker times the program itself and kills its process group at the backstop; then this
            worker.time_test(timeout, extra_wall=1.0)
        try:
            reply = worker.request(dict(msg, input=text))
        except WorkerDied:
            if build or worker.respawn is None:
                raise
            state["dead"] = True
            return _crashed({"i": i, "ok": False}, None, "the program ended its process (os._exit, a signal, a "
                            "crash or the memory limit)")
        except (Timeout, ValueNotSent):
            raise
        except BaseException as exc:  # noqa: BLE001 - e.g. the scratch directory the program filled
            return {"i": i, "ok": False, "error": describe(exc)}
        if _type(reply) is not dict or _type(reply.get("out")) is not str:
            worker.kill()
            raise WorkerDied()
        if "ended" in reply:  # os._exit: the worker sent this and ended; the next test runs in a fresh one
            ended = reply["ended"]
            state["dead"] = True
            worker.kill()
            if _type(ended) is not int or ended != 0:
                reason = "the program ended its process with os._exit(%s)" % (ended if _type(ended) is int else "?",)
                if not output_judged:
                    return _crashed({"i": i, "ok": False}, reply, reason)
                reply = dict(reply, error=reason)  # code_contests: its output still decides
        if reply.get("timeout"):
            raise Timeout()
        if reply.get("truncated"):
            return {"i": i, "ok": False, "error": "the output went past the limit of %d bytes" % limit}
        rss = reply.get("rss")
        if memory and _type(rss) is int and rss > memory:
            return {"i": i, "ok": False, "error": "memory limit exceeded: %d MiB used, limit %d MiB"
                    % (rss >> 20, memory >> 20)}
        want = expected[i] if i < len(expected) else None
        crash = reply["error"] if "error" in reply else (
            "exit status %s" % (reply["exit"],) if reply.get("exit") and not exit_ignored else None)
        if crash is not None:
            if output_judged and want is not None:  # code_contests' tester: the output alone decides
                if "checker" in compare:
                    verdict = run_checker(compare, text, reply["out"], want, worker)
                    if verdict is True:
                        return {"i": i, "ok": True}
                    if "invalid" in verdict:
                        return dict(verdict, i=i)
                elif same_output(reply["out"], want, compare):
                    return {"i": i, "ok": True}
            return _crashed({"i": i, "ok": False}, reply, crash)
        if want is not None:
            if "checker" in compare:
                verdict = run_checker(compare, text, reply["out"], want, worker)
                if verdict is not True:
                    return dict(verdict, i=i)
                return {"i": i, "ok": True}
            if same_output(reply["out"], want, compare):
                return {"i": i, "ok": True}
        shown = normalize_stdout(want) if want is not None else "?"
        printed = short_repr(normalize_stdout(reply["out"]))
        return {"i": i, "ok": False, "error": "printed %s, expected %s" % (printed, short_repr(shown))}

    return _run_tests(emit, worker, req, timeout, run_test)


def _interactive_test(i, text, answer, worker, req, timeout, state):
    """One test of an interactive problem (see :func:`.interaction.run_interaction`): its record. A worker the program
    ended (``os._exit``, a crash) or that ran past the time is replaced for the next test (``state["dead"]``)."""
    try:
        verdict, reply = run_interaction(worker, req["interactor"], req.get("compare"), text, answer, timeout,
                                         int(req.get("output_limit", 1 << 20)), native=bool(req.get("build")))
    except Timeout:
        if not req.get("build"):
            state["dead"] = True
        raise
    if (reply is None or "ended" in reply or not worker.alive) and not req.get("build"):
        state["dead"] = True  # a compiled program's dead worker ends the run at the next test (WorkerDied)
        worker.kill()
    if verdict is True:
        return {"i": i, "ok": True}
    if "crash" in verdict:
        return _crashed({"i": i, "ok": False}, None, verdict["crash"])
    return dict(verdict, i=i)


def _build_in_worker(emit, worker, req, build):
    """Have the worker write and compile a program in another language (see :func:`.native.build_program`); emit the
    load record of a failure (``compile_error``, or ``unsupported`` when the toolchain is missing or processes are
    forbidden) and return False, else True."""
    compile_timeout = float(req.get("compile_timeout_s") or 30.0)
    worker.deadline = time.monotonic() + compile_timeout + 5.0
    title = str(build.get("title") or build.get("language"))
    try:
        reply = worker.request({"q": "build", "build": build, "program": req["program"], "timeout": compile_timeout})
    except Timeout:
        emit({"load": "compile_error", "error": "compiling took longer than %.0f s" % compile_timeout})
        return False
    except WorkerDied:
        emit({"load": "error", "error": "the worker ended while compiling"})
        return False
    except BaseException as exc:  # noqa: BLE001 - e.g. the scratch directory is full
        emit({"load": "error", "error": "writing the program: " + describe(exc)})
        return False
    if _type(reply) is not dict:
        worker.kill()
        emit({"load": "error", "error": "the worker ended while compiling"})
        return False
    if reply.get("missing"):
        emit({"load": "unsupported", "error": "the sandbox has no %s toolchain (%s not found): install it there (%s)"
              % (title, reply["missing"], build.get("install") or "see the docs")})
        return False
    if reply.get("denied"):
        emit({"load": "unsupported", "error": "the sandbox cannot run its %s toolchain (%s): install it where other "
              "users can read it (%s)" % (title, reply["denied"], build.get("install") or "see the docs")})
        return False
    if reply.get("forbidden"):
        emit({"load": "unsupported", "error": "%s programs need to start processes, which this sandbox forbids "
              "(%s); run with namespaces or a pids cgroup, or on a remote backend" % (title, reply["forbidden"])})
        return False
    if not reply.get("ok"):
        emit({"load": "compile_error", "error": str(reply.get("error") or "compilation failed")})
        return False
    return True


def judge_function(emit, worker, req, timeout):
    """Call ``func_name`` with each test's JSON argument list and compare with the JSON expected value. When the
    program defines ``class Solution`` (LeetCode's form), the function is a method of one instance of it, as in
    LiveCodeBench's and APPS's harnesses."""
    names = load_program(emit, worker, req, timeout)
    if names is None:
        return 0
    name = req["func_name"]
    rule = req.get("rule") or "lcb"
    func = None
    solution = names.get("Solution")
    if _type(solution) is Remote and "class Solution" in req["program"]:
        worker.time_test(timeout)
        try:
            func = _getattr(solution(), name)
        except (Timeout, WorkerDied, ValueNotSent):
            emit({"load": "error", "error": "Solution() did not complete"})
            return 0
        except BaseException as exc:  # noqa: BLE001
            emit({"load": "error", "error": "Solution(): " + describe(exc)})
            return 0
    if func is None:
        func = names.get(name)
    if func is None or not _callable(func):
        func = _Missing(name)
    expected = req.get("expected") or []

    def run_test(i, arguments):
        args = json.loads(arguments)
        if rule == "apps" and args:
            args = [apps_key_fix(args[0]), *args[1:]]
        want = json.loads(expected[i]) if i < len(expected) else None
        if rule == "apps":
            want = apps_key_fix(want)
            if _type(want) is list and len(want) == 1:
                want = [apps_key_fix(want[0])]
        try:
            out = func(*args)
        except (Timeout, WorkerDied, ValueNotSent):
            raise
        except BaseException as exc:  # noqa: BLE001
            return {"i": i, "ok": False, "error": describe(exc)}
        if i < len(expected) and same_call_output(out, want, rule):
            return {"i": i, "ok": True}
        return {"i": i, "ok": False, "error": "returned %s, expected %s" % (short_repr(out), short_repr(want))}

    return _run_tests(emit, worker, req, timeout, run_test)


def _limited(fn, seconds):
    def on_alarm(signum, frame):
        raise Timeout()

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def judge_reference(emit, worker, req, timeout):
    """Evaluate the test arguments (``random`` seeded with 0, once, as in the TRL Daytona example) and the
    reference on each. Runs only trusted task code: the worker is not used."""
    ns = {"__name__": "__reference__", "__builtins__": builtins, "random": random, "math": math}
    try:
        _limited(lambda: exec(compile(req.get("program") or "", "<reference>", "exec"), ns), timeout)
    except BaseException as exc:  # noqa: BLE001
        emit({"load": "error", "error": describe(exc)})
        return 0
    name = req["func_name"]
    func = ns.get(name, _getattr(builtins, name, None))
    if not _callable(func):
        emit({"load": "error", "error": "reference %r is neither defined nor a builtin" % name})
        return 0
    random.seed(0)
    args = []
    for i, expr in enumerate(req["tests"]):
        try:
            args.append(eval(compile(expr, "<test %d>" % i, "eval"), ns))
        except BaseException as exc:  # noqa: BLE001
            emit({"load": "error", "error": "test %d argument %r: %s" % (i, expr, describe(exc))})
            return 0
    n = 0
    for i, arg in enumerate(args):
        n += 1
        literal = repr(arg)
        try:
            same = ast.literal_eval(literal) == arg
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            same = False
        if not same:
            emit({"i": i, "error": "argument of test %d is not a Python literal: %s" % (i, literal[:200])})
            continue
        try:
            out = _limited(lambda: func(copy.deepcopy(arg)), timeout)
            emit({"i": i, "arg": literal, "out": encode(out)})
        except BaseException as exc:  # noqa: BLE001
            emit({"i": i, "error": describe(exc)})
    return n
