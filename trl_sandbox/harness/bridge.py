"""Process-wide state that KodCode's tests set or read, bridged between the judge and the worker.

Officially the tests and the program are one process (``KodCode-AI/kodcode`` ``pipeline/run_test.sh``), so they
share what a process has once: the ``warnings`` machinery (``pytest.warns``, ``recwarn``), the ``logging`` tree
(``caplog``), ``random``'s and numpy's global generators (``random.seed(0)`` in a test, then the program's draws),
and ``sys.stdin`` (``sys.stdin = io.StringIO(...)`` in a test, then the program's ``input()``). Here the program runs
in the worker, so each of these crosses with the messages (the environment, the working directory and the tests'
patches cross in :class:`.pytest_runner.Patches`):

- **warnings**: each request the worker serves runs under ``warnings.catch_warnings(record=True)`` with every warning
  shown; the answer carries them (``"w"``) and the judge issues them again with ``warnings.warn_explicit`` before it
  reads the answer, so the tests' filters, ``pytest.warns`` and ``recwarn`` decide, as in the one process (a warning
  a filter turns into an error is raised in the test at the call, rather than inside the program);
- **logging**: the judge sends its loggers' levels (``"L"``) whenever they change (``caplog.set_level``); a handler
  on the worker's root logger collects the records the program emits, and the judge hands each to its own logger of
  the same name (``"log"``), where ``caplog`` sees it;
- **random**: the generators' states cross both ways (``"R"``, ``"NR"`` before a request when the tests' state
  changed, ``"rnd"``, ``"nrnd"`` in an answer when the program's did), so the program draws what it would draw in
  the tests' process and the tests go on from where the program stopped;
- **sys.stdin**: a memory file (``io.StringIO``, ``io.BytesIO``) the tests assign to ``sys.stdin`` becomes the
  program's ``sys.stdin``, as a remote object the program reads through.

What the worker sends is data (names, numbers, text, the warning's class as exception classes cross): the judge
decides what to do with it.
"""

import importlib
import io
import os
import sys

from .base import PROGRAM_FILE, _type
from .values import decode, encode, strict_str

#: The most log records one answer carries (the rest are dropped: a program logging in a loop).
MAX_RECORDS = 10000


def _numpy_random():
    numpy = sys.modules.get("numpy")
    return getattr(numpy, "random", None) if numpy is not None else None


def _numpy_state(npr):
    """numpy's legacy global generator's state as plain data (its key as a list: never a twin)."""
    name, keys, pos, has_gauss, cached = npr.get_state(legacy=True)
    return [name, keys.tolist(), int(pos), int(has_gauss), float(cached)]


def run_doctest(namespace, msg):
    """The worker's side of the judge's ``doctest`` request (see :meth:`JudgeBridge.route_doctests`): run the
    examples of the docstring ``msg["text"]`` against the program's names; ``[failed, tried, printed]``."""
    import doctest

    test = doctest.DocTestParser().get_doctest(str(msg["text"]), dict(namespace), str(msg["name"]), PROGRAM_FILE, 0)
    printed = io.StringIO()
    runner = doctest.DocTestRunner(verbose=False, optionflags=int(msg.get("flags") or 0))
    result = runner.run(test, out=printed.write)
    return [int(result.failed), int(result.attempted), printed.getvalue()]


class WorkerBridge:
    """The worker's side: what the program did to the shared state while it served a request."""

    def __init__(self):
        import logging
        import random

        self.random = random
        self.records = []
        self.random_seen = random.getstate()
        self.numpy_seen = None
        self.levels = {}
        sink = self.records

        class Forward(logging.Handler):
            def emit(self, record):
                if len(sink) < MAX_RECORDS:
                    try:
                        text = record.getMessage()
                    except Exception:  # noqa: BLE001 - the program's own formatting error: its text as given
                        text = str(record.msg)
                    sink.append([str(record.name), int(record.levelno), str(text), str(record.pathname),
                                 int(record.lineno), str(record.funcName)])

        self.logging = logging
        logging.getLogger().addHandler(Forward(0))

    def serve(self, answer):
        """Run ``answer()`` (which returns the reply) with the program's warnings recorded, and add what the program
        did to the shared state: ``"w"``, ``"log"``, ``"rnd"``, ``"nrnd"``."""
        import warnings

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            reply = answer()
        if caught:
            shown = []
            for item in caught[:MAX_RECORDS]:
                try:
                    shown.append([encode(item.category), str(item.message), str(item.filename), int(item.lineno)])
                except Exception:  # noqa: BLE001 - a warning whose class cannot cross is left out
                    continue
            reply["w"] = shown
        if self.records:
            reply["log"] = list(self.records)
            del self.records[:]
        state = self.random.getstate()
        if state != self.random_seen:
            self.random_seen = state
            reply["rnd"] = encode(state)
        npr = _numpy_random()
        if npr is not None:
            state = _numpy_state(npr)
            if state != self.numpy_seen:
                self.numpy_seen = state
                reply["nrnd"] = encode(state)
        return reply

    def apply(self, target, value):
        """The judge's ``"R"`` (``random``'s state), ``"NR"`` (numpy's) or ``"L"`` (its loggers' levels)."""
        if target == "R":
            self.random.setstate(value)
            self.random_seen = self.random.getstate()
        elif target == "NR":
            try:
                numpy = importlib.import_module("numpy")  # optional: the tests seeded it, so the judge has it
            except ImportError:
                return
            npr = numpy.random
            name, keys, pos, has_gauss, cached = value
            npr.set_state((name, numpy.array(keys, dtype=numpy.uint32), pos, has_gauss, cached))
            self.numpy_seen = _numpy_state(npr)
        elif target == "L":
            for name in set(self.levels) - set(value):
                self.logging.getLogger(name or None).setLevel(0)
            for name, level in value.items():
                self.logging.getLogger(name or None).setLevel(int(level))
            self.levels = dict(value)


class JudgeBridge:
    """The judge's side: the tests' state to send before a request (:meth:`ops`), the program's to take from an
    answer (:meth:`after`)."""

    def __init__(self):
        import random

        self.random = random
        self.random_sent = None
        self.numpy_sent = None
        self.levels_sent = None
        self.stdin_sent = None

    def ops(self, encode_value):
        """The ``patch`` operations for what the tests changed since the last request; ``encode_value(value)``
        encodes a value for the worker (a memory file is lent)."""
        ops = []
        state = self.random.getstate()
        if state != self.random_sent:
            self.random_sent = state
            ops.append(["R", "", "set", encode(state)])
        npr = _numpy_random()
        if npr is not None:
            state = _numpy_state(npr)
            if state != self.numpy_sent:
                self.numpy_sent = state
                ops.append(["NR", "", "set", encode(state)])
        logging = sys.modules.get("logging")
        if logging is not None:
            levels = {"": logging.root.level}
            for name, logger in list(logging.Logger.manager.loggerDict.items()):
                if _type(logger) is logging.Logger and logger.level:
                    levels[name] = logger.level
            if levels != self.levels_sent:
                self.levels_sent = levels
                ops.append(["L", "", "set", encode(levels)])
        stdin = sys.stdin if _type(sys.stdin) in (io.StringIO, io.BytesIO) else None
        if stdin is not self.stdin_sent:
            self.stdin_sent = stdin
            ops.append(["sys", "stdin", "restore", None] if stdin is None else
                       ["sys", "stdin", "set", encode_value(stdin)])
        return ops

    def route_doctests(self, worker):
        """Make ``doctest`` run the program's docstring examples in the worker: the judge's
        ``DocTestRunner.run`` sends a test whose docstring is the program's (:class:`.remote.ProgramText`) to the
        worker (its ``doctest`` request), which runs it against the program's names and answers what failed and
        what was tried, and what the examples printed; the runner counts them as its own, so ``doctest.testmod(
        solution)`` reports them as in the tests' process. The program's text never runs here."""
        import doctest

        from .remote import ProgramText

        run = doctest.DocTestRunner.run

        def routed(runner, test, compileflags=None, out=None, clear_globs=True):
            if not isinstance(test.docstring, ProgramText):
                return run(runner, test, compileflags, out, clear_globs)
            reply = worker.request({"q": "doctest", "text": str(test.docstring), "name": str(test.name),
                                    "flags": int(runner.optionflags)})
            failed, tried, printed = reply
            if _type(failed) is not int or _type(tried) is not int or _type(printed) is not str or \
                    not 0 <= failed <= tried:
                raise RuntimeError("the program's docstring examples gave no count")
            (out or sys.stdout.write)(printed)
            runner.failures += failed
            runner.tries += tried
            if isinstance(getattr(runner, "_stats", None), dict):  # Python 3.13: (failed, tried, skipped)
                runner._stats[test.name] = (failed, tried, 0)
            elif isinstance(getattr(runner, "_name2ft", None), dict):
                runner._name2ft[test.name] = (failed, tried)
            return doctest.TestResults(failed, tried)

        doctest.DocTestRunner.run = routed

    def after(self, answer, peer):
        """Take the program's news from ``answer``: issue its warnings, hand on its log records, take its generators'
        states. Malformed entries are skipped (the worker's data decides nothing else)."""
        shown = answer.get("w")
        if _type(shown) is list and shown:
            import warnings

            for entry in shown:
                try:
                    category = decode(entry[0], peer)
                    if not (isinstance(category, type) and issubclass(category, Warning)) or any(
                            not issubclass(base, Exception) for base in category.__mro__[:-2]):
                        category = UserWarning  # a warning, and nothing else: never one of pytest's outcomes
                    message, lineno = strict_str(entry[1]), entry[3]
                    if _type(lineno) is not int:
                        lineno = 0
                except Exception:  # noqa: BLE001
                    continue
                # Issued as from the program's source, which the judge has (never a file the program names: pytest
                # reads the line of a warning's file to show it).
                warnings.warn_explicit(message, category, PROGRAM_FILE, lineno, module=SOLUTION)
        records = answer.get("log")
        if _type(records) is list and records:
            import logging

            for entry in records:
                try:
                    name, level, text, path, lineno, function = entry
                    if _type(level) is not int or _type(lineno) is not int:
                        continue
                    record = logging.makeLogRecord({
                        "name": strict_str(name), "levelno": level, "levelname": logging.getLevelName(level),
                        "msg": strict_str(text), "args": None, "pathname": strict_str(path),
                        "filename": os.path.basename(strict_str(path)), "module": SOLUTION, "lineno": lineno,
                        "funcName": strict_str(function)})
                except Exception:  # noqa: BLE001
                    continue
                # The tests' logger of that name when they have one, else the root logger (never one made for the
                # program's names: the judge's memory is not the program's to grow).
                logger = logging.Logger.manager.loggerDict.get(record.name)
                if _type(logger) is not logging.Logger:
                    logger = logging.getLogger()
                logger.handle(record)
        if "rnd" in answer:
            try:
                state = decode(answer["rnd"])
                self.random.setstate(state)
                self.random_sent = self.random.getstate()
            except Exception:  # noqa: BLE001 - not a state: the tests' generator stays as it was
                pass
        npr = _numpy_random()
        if "nrnd" in answer and npr is not None:
            try:
                numpy = sys.modules["numpy"]
                name, keys, pos, has_gauss, cached = decode(answer["nrnd"])
                # Checked here: numpy takes a position past its key and later reads out of bounds.
                if strict_str(name) != "MT19937" or _type(keys) is not list or len(keys) != 624 or \
                        _type(pos) is not int or not 0 <= pos <= 624 or has_gauss not in (0, 1):
                    raise ValueError("not a state")
                npr.set_state((name, numpy.array(keys, dtype=numpy.uint32), pos, int(has_gauss), float(cached)))
                self.numpy_sent = _numpy_state(npr)
            except Exception:  # noqa: BLE001
                pass


#: The ``module`` of a log record the program emitted (its module's name in the tests' process).
SOLUTION = "solution"
