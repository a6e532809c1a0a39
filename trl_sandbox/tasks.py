"""Tasks: a dataset row read as tests (:class:`Task`), the harness request that runs a completion against them, and
the verdict read back from the harness's records (:class:`Verdict`).

A task is a dataset row (a mapping) read by its format's reader (:mod:`trl_sandbox.formats`: HumanEval, MBPP,
call-based and stdin/stdout rows of trl-sandbox's own, and the public code-RL datasets as they publish them). Its
tests run as one of the harness's modes: ``humaneval``/``mbpp`` as asserts, ``call`` against a reference function,
``stdio`` per input, ``function`` as calls with JSON arguments, ``pytest`` as a pytest file (see
:mod:`trl_sandbox.harness`).

**The code prefix never comes from what the model saw.** TRL passes a row's ``prompt`` column to the model; an
instruct model is trained on a conversational ``prompt`` (a list of messages) or on an instruction wrapped around
the code. The code the program starts with (imports, helper functions such as HumanEval's ``poly``, the signature a
function-body completion continues) is therefore the row's ``starter_code`` column (the name APPS, TACO and
LiveCodeBench use), else the ``prompt`` only when it is a string that is Python code (it parses, and defines or
imports something): HumanEval's own rows (see :func:`trl_sandbox.formats.code_prefix`).
:func:`~trl_sandbox.prompts.chat_rows` (``load_tasks(..., chat=True)``) turns HumanEval, MBPP and call-based rows into
conversational prompts plus ``starter_code``.

Code extraction: :mod:`.completions`; banned patterns: :mod:`.banned`; rows: :mod:`.loading`, :mod:`.prompts`.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import hmac
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .banned import runtime_bans
from .completions import close_header, continuation_code, extract_code, is_continuation
from .errors import InfrastructureError, TaskFormatError
from .formats import check_format, ioi, parse_compare, parse_interactor, read_row
from .formats._common import str_list
from .harness.base import record_mac
from .harness.cputime import WALL_FACTOR
from .harness.groups import test_score
from .languages import LANGUAGES, build_spec, row_language, solutions_language, with_files
from .loading import lost_fields
from .subtasks import Subtask, harness_groups, read_score_tree, read_subtasks, subtask_points, tree_score

logger = logging.getLogger(__name__)

__all__ = ["Task", "Verdict"]


@functools.lru_cache(maxsize=4096)  # a task's prompt: parsed once per task, not once per completion
def _runnable_prefix(prefix: str) -> str:
    """The code prefix as the judge runs it (for the helpers the tests use): as it is when it parses, else as a
    function header with a ``pass`` body (a prefix that ends at ``def f(x):``), else nothing."""
    for source in (prefix, prefix.rstrip() + "\n    pass\n"):
        try:
            ast.parse(source)
            return source
        except (SyntaxError, ValueError):
            continue
    return ""


#: Seconds per test of a task whose row and format give no limit (``sandbox_test_timeout`` unset).
DEFAULT_TEST_TIMEOUT_S = 5.0
#: The multiplier of a row's statement time limit where its format's official harness names none and the user set
#: no ``sandbox_time_limit_factor`` (code_contests, APPS rows and trl-sandbox's own rows with a ``time_limit``): the
#: limits were set for C++, and Python is slower.
DEFAULT_TIME_LIMIT_FACTOR = 3.0


@dataclass(frozen=True)
class Verdict:
    """How a completion did against its task.

    Attributes:
        status: ``passed`` (all tests), ``failed`` (ran, some tests failed), ``error`` (did not load, crashed or
            ended the harness early), ``timeout`` (a test or the whole run ran past its time), ``banned`` (uses a
            banned pattern; not run), ``unserializable`` (a value of the tests' own could not be sent to the
            program: not the model's fault; a value of the program's that cannot cross fails its test instead).
        tests_passed: Number of tests passed.
        tests_total: The task's own number of tests.
        error: A short reason for ``error``/``timeout``/``banned``/``unserializable`` (or the first failing test's
            error).
        partial: The partial scores of the tests not passed, summed (each a fraction of full marks in [0, 1]: a
            checker's testlib points, Frontier-CS ``Ratio:``, Kattis ``score.txt``); the ``pass_rate`` reward counts
            them, ``all_or_nothing`` pays only full marks.
        failed_test: The index (from 0, in the task's order of tests) of the first test that did not pass, whose
            message ``error`` is; None when none failed or the program did not get to its tests.
        score: A task with subtasks: the points earned over the most there are, in [0, 1] (what ``pass_rate``
            pays, see :mod:`trl_sandbox.subtasks`); else None.
        subtask_points: A task with subtasks: the points each earned, in the task's order of subtasks.
        tests_skipped: Tests not run because none of their subtasks could earn from them any more.
    """

    status: str
    tests_passed: int
    tests_total: int
    error: str | None = None
    partial: float = 0.0
    failed_test: int | None = None
    score: float | None = None
    subtask_points: tuple[float, ...] = ()
    tests_skipped: int = 0


def harness_records(stdout: bytes, key: str | None = None) -> list[dict]:
    """The records of one harness run: the JSON objects of ``stdout``, one per line (other lines, such as what a
    remote service merged into the command's output, are skipped).

    Args:
        stdout: The command's standard output.
        key: The secret the request carried (the scorer sends one to backends whose program may write into the
            command's output: ``Backend.authenticate_records``). Given, only the records whose ``mac`` is theirs
            (:func:`trl_sandbox.harness.base.record_mac`) are kept, without it; and a first ``infra`` record with
            none, the judge's refusal written before it read the request (a forged one can only make a completion an
            infrastructure error, which is never paid).
    """
    records: list[dict] = []
    for line in stdout.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        if key is not None:
            mac = record.pop("mac", None)
            signed = isinstance(mac, str) and hmac.compare_digest(mac, record_mac(key, record))
            if not signed and (records or mac is not None or not record.get("infra") or record.get("ready")):
                continue
        records.append(record)
    return records


def _refused(records: list[dict]) -> None:
    """Raise when the harness refused to start (its first record is ``{"infra": true, "error"}``: on a remote
    sandbox the request file could not be removed, so no program ran; see ``harness/server.py``): the sandbox's
    configuration is at fault, never the program.

    Raises:
        InfrastructureError: with the harness's own message (which user, which directory, what to change).
    """
    if records and records[0].get("infra") and not records[0].get("ready"):
        raise InfrastructureError(str(records[0].get("error"))[:1000])


_WARNED_NO_PREFIX: set[str] = set()
#: The words of the error of a row that lost fields between load_tasks and the reward (the reward says it loudly).
LOST_FIELDS = "lost its field(s)"


@dataclass(frozen=True)
class Task:
    """One coding task, parsed from a dataset row by :meth:`from_row`.

    Attributes:
        task_id: The row's ``task_id``, else a hash of its content.
        format: ``humaneval`` | ``mbpp`` | ``call`` | ``stdio`` | ``function`` | ``pytest``: how the tests run (see
            the module docstring).
        prompt: The code prefix (see :func:`trl_sandbox.formats.code_prefix`): code the completion continues
            (``humaneval``/``call``), else ``""`` (``mbpp`` rows may have one from ``starter_code``).
        func_name: Function under test (``entry_point`` / ``func_name``), else None.
        tests: Test sources (``humaneval``/``mbpp``), argument expressions (``call``), stdin texts (``stdio``), JSON
            argument lists (``function``) or test function names (``pytest``).
        setup: Test code the judge runs after the program's names are in place, before the tests
            (``humaneval``/``mbpp``); the pytest file (``pytest``).
        prelude: The tests' import statements, which the program sees too (``humaneval``/``mbpp``).
        outputs: Expected stdout per test (``stdio``), or expected return values as JSON (``function``).
        reference: Reference function name (``call``).
        reference_code: Source defining the reference (``call``, optional).
        banned_patterns: Patterns the completion may not contain (see
            :func:`trl_sandbox.banned.find_banned_pattern`).
        entry_points: Names the tests call (for choosing among a completion's code blocks).
        dataset: The public dataset format the row was read as (``apps``, ``livecodebench``...), else ``""``.
        header: Import prelude run before the program (LiveCodeBench's and APPS's harnesses add one).
        rule: ``function`` tasks: how a return value is compared (``apps`` | ``lcb``, see
            ``trl_sandbox.harness.compare.same_call_output``).
        compare: The row's own stdout judge (its ``compare`` field), else None.
        default_compare: The stdout judge of the dataset's official harness.
        time_limit_s: The row's statement time limit per test (seconds), scaled by ``sandbox_time_limit_factor``
            when the user sets it, else by :attr:`time_limit_factor`; else None.
        time_limit_factor: The official harness's multiplier of the statement limit (1.0 for open-r1 Codeforces:
            piston's ``timeout "$TIME_LIMIT"``, for Python too), else None (:data:`DEFAULT_TIME_LIMIT_FACTOR`).
        test_time_s: The official harness's own seconds per test (LiveCodeBench's 6 s, TACO's and APPS's fixed
            timeouts: see each format's module), used as they are; with a statement limit too (code_contests: its
            tester's 10 s), the most a test gets, whatever the factor. Else None.
        memory_limit_bytes: The row's memory limit (bytes), else None.
        files: ``(input file, output file)`` of problems that read and write files (Codeforces' file mode,
            code_contests' ``input_file``/``output_file``), else ``()``.
        files_only: With ``files``: the program gets nothing on stdin and its stdout is discarded, so the output file
            is its only output (open-r1 Codeforces' ``input_mode: file``, as piston's runner runs it); else it also
            gets the input on stdin, and its stdout counts when it writes no output file.
        language: The language the row asks completions to be written in (see
            :func:`trl_sandbox.languages.row_language`), else None (the completion's code fence, then
            ``sandbox_language``, decide).
        solutions_language: The one language of the row's published solutions (code_contests' ``solutions``, see
            :func:`trl_sandbox.languages.solutions_language`), else None: a guess, used only for a completion whose
            code fence names no language when ``sandbox_language`` is not set.
        interactor: An interactive problem's interactor (see :func:`trl_sandbox.formats.parse_interactor`): the
            program's stdin and stdout are connected to it, and it decides each test, with the checker of
            :meth:`judge_spec` then run on what it wrote to ``tout`` when the row gives one; else None.
        subtasks: ``stdio`` tasks scored by groups of tests with points (the row's ``subtasks``, or its package's
            groups; see :mod:`trl_sandbox.subtasks`), else ``()``.
        score_tree: A Kattis scoring package's test data groups (see :func:`trl_sandbox.subtasks.read_score_tree`),
            else None.
        grader: open-r1 IOI's grader build (see :func:`trl_sandbox.formats.ioi.grader_build`), else None.
        include_files: Kattis' ``include/cpp/``, ``include/c/`` by language (see :func:`.languages.with_files`).
        test_compares: Per test, None or its own judge (``{"flags"}`` over the checker): Kattis groups' own flags.
    """

    task_id: str
    format: str
    prompt: str = ""
    func_name: str | None = None
    tests: tuple[str, ...] = ()
    setup: str = ""
    prelude: str = ""
    outputs: tuple[str, ...] = ()
    reference: str | None = None
    reference_code: str = ""
    banned_patterns: tuple[str, ...] = field(default=())
    entry_points: tuple[str, ...] = ()
    dataset: str = ""
    header: str = ""
    rule: str = ""
    compare: dict[str, Any] | None = None
    default_compare: dict[str, Any] | None = None
    time_limit_s: float | None = None
    time_limit_factor: float | None = None
    test_time_s: float | None = None
    memory_limit_bytes: int | None = None
    files: tuple[str, ...] = ()
    files_only: bool = False
    language: str | None = None
    solutions_language: str | None = None
    interactor: dict[str, Any] | None = None
    subtasks: tuple[Subtask, ...] = ()
    score_tree: dict[str, Any] | None = None
    grader: dict[str, Any] | None = None
    include_files: dict[str, tuple[tuple[str, str], ...]] | None = None
    test_compares: tuple[dict[str, Any] | None, ...] = ()

    @classmethod
    def from_row(cls, row: Mapping[str, Any], task_format: str | None = None) -> Task:
        """Parse a dataset row, detecting its format from its fields (see :mod:`trl_sandbox.formats`).

        Args:
            row: The row, as the dataset publishes it.
            task_format: The format to read it as (a key of :data:`trl_sandbox.formats.FORMATS`: a public dataset's
                or one of trl-sandbox's own); default: the row's ``task_format`` field, else detected from the fields.

        Raises:
            TaskFormatError: the row matches no format, a field has the wrong type or is malformed, or the row lost a
                field its :data:`~trl_sandbox.loading.ROW_FIELDS` names (see :func:`~trl_sandbox.loading.task_dataset`);
                the message names it.
        """
        if not isinstance(row, Mapping):
            raise TaskFormatError(f"a task must be a mapping (dataset row), got {type(row).__name__}")
        lost = lost_fields(row)
        if lost:
            raise TaskFormatError(
                f"the row {LOST_FIELDS} {', '.join(lost)} on the way to the reward (load_tasks read them in it; "
                "datasets.Dataset.from_list keeps only the first row's columns): build the training dataset with "
                "trl_sandbox.task_dataset(rows)")
        task_format = task_format or row.get("task_format") or None
        check_format(task_format)
        compare = parse_compare(row.get("compare"))
        banned = str_list(row, "banned_patterns", required=False)
        fields = read_row(row, task_format)
        if "interactor" in row and not fields.get("interactor"):
            fields["interactor"] = parse_interactor(row["interactor"])
        if row.get("score_tree") is not None:
            if fields.get("format") != "stdio":
                raise TaskFormatError("task field 'score_tree': only stdin/stdout tasks are scored by test groups")
            fields["score_tree"] = read_score_tree(row["score_tree"], len(fields.get("tests") or ()))
        if row.get("subtasks") is not None and not fields.get("subtasks"):
            if fields.get("format") != "stdio":
                raise TaskFormatError("task field 'subtasks': only stdin/stdout tasks are scored by subtasks")
            fields["subtasks"] = read_subtasks(row["subtasks"], len(fields.get("tests") or ()))
        task = cls(banned_patterns=banned, compare=compare, **fields)
        if task.format in ("humaneval", "call") and not task.prompt and not isinstance(row.get("prompt"), str):
            key = f"{task.format}:{task.task_id}"
            if key not in _WARNED_NO_PREFIX and len(_WARNED_NO_PREFIX) < 100:
                _WARNED_NO_PREFIX.add(key)
                logger.warning(
                    "trl-sandbox: task %s has a conversational prompt and no 'starter_code' column: the completion "
                    "must be a whole program (its imports and helper functions included). Keep the task's code in "
                    "'starter_code' (load_tasks(..., chat=True) does).", task.task_id,
                )
        language = row_language(row)
        if language is not None and LANGUAGES[language].native and task.format != "stdio":
            raise TaskFormatError(f"{LANGUAGES[language].title} completions run stdin/stdout tasks only; this "
                                  f"row's tests are {task.format} tests")
        if language is not None:
            task = dataclasses.replace(task, language=language)
        guess = solutions_language(row) if task.format == "stdio" else None
        if guess is not None:
            task = dataclasses.replace(task, solutions_language=guess)
        return task

    # -- programs ------------------------------------------------------------------------------------------------

    def extract(self, completion: Any, language: str = "python") -> str:
        """The code of ``completion`` (see :func:`~trl_sandbox.completions.extract_code`) in ``language``, preferring
        a Python block that defines a function the tests call."""
        return extract_code(completion, self.entry_points, language)

    def program(self, code: str) -> str:
        """The program to run for extracted completion ``code``.

        ``humaneval``/``call``: a function-body continuation (first line indented) is appended to the code prefix
        with every statement written after the body, as in the official one module; only text that is not Python is
        left out (see :func:`~trl_sandbox.completions.continuation_code`). Any other completion is appended after the
        prefix whole, so a completion that defines the function replaces the prefix's docstring-only definition while
        the prefix's imports and helpers stay available. ``mbpp``: the prefix (``starter_code``, usually none) and the
        completion, a continuation read the same way. A completion that is not a continuation after a prefix ending in
        a bare signature (``def inc(x):``) stands alone: the signature gets a ``pass`` body first
        (:func:`~trl_sandbox.completions.close_header`), as HumanEval's docstring is a body. ``stdio``: the
        completion alone.
        """
        if self.format in ("humaneval", "call"):
            if is_continuation(code):
                return self.prompt + continuation_code(code)
            return close_header(self.prompt) + "\n" + code if self.prompt else code
        if self.format == "mbpp" and self.prompt:
            if is_continuation(code):
                return self.prompt + "\n" + continuation_code(code)
            return close_header(self.prompt) + "\n" + code
        if self.header:
            return self.header + "\n" + code
        return code

    def test_timeout_s(self, cap_s: float | None = None, factor: float | None = None) -> float:
        """Seconds each test of this task gets, as its dataset's official harness gives them: the row's statement
        limit (:attr:`time_limit_s`) times ``factor`` (``sandbox_time_limit_factor``, when the user set it) or else
        the format's own :attr:`time_limit_factor` (open-r1 Codeforces: 1) or :data:`DEFAULT_TIME_LIMIT_FACTOR`, at
        most the harness's own :attr:`test_time_s` when it has one (code_contests' 10 s); without a statement limit,
        the harness's own time per test (:attr:`test_time_s`), else :data:`DEFAULT_TEST_TIMEOUT_S`; at most ``cap_s``
        (``sandbox_test_timeout``) when the user set one."""
        if self.time_limit_s is not None:
            if factor is None:
                factor = self.time_limit_factor if self.time_limit_factor is not None else DEFAULT_TIME_LIMIT_FACTOR
            seconds = self.time_limit_s * factor
            if self.test_time_s is not None:
                seconds = min(seconds, float(self.test_time_s))
        elif self.test_time_s is not None:
            seconds = float(self.test_time_s)
        else:
            seconds = DEFAULT_TEST_TIMEOUT_S
        return min(cap_s, seconds) if cap_s is not None else seconds

    def completion_budget_s(self, test_timeout_s: float) -> float:
        """Wall-clock seconds one completion's whole run gets: every test's wall-clock backstop
        (:data:`~trl_sandbox.harness.cputime.WALL_FACTOR` times its limit, which is on CPU time) plus a second each
        (loading the program, the judge's messages), plus 5 s for the judge's start: LiveCodeBench's global timeout
        ``(timeout + 1) * len(tests) + 5`` (``lcb_runner/evaluation/compute_code_generation_metrics.py``) with the
        backstop for its ``timeout``, for every format. No budget cuts a program whose every test stays within its
        CPU limit, however busy the machine."""
        return (WALL_FACTOR * test_timeout_s + 1.0) * max(1, len(self.tests)) + 5.0

    def output_limit_bytes(self, configured: int) -> int:
        """Bytes of stdout kept per test: ``configured`` (``sandbox_output_limit``), but never less than twice the
        largest expected output of this task plus 64 KiB, so that no correct output is cut."""
        largest = max((len(o.encode("utf-8", errors="replace")) for o in self.outputs if isinstance(o, str)), default=0)
        return max(int(configured), 2 * largest + (64 << 10))

    @property
    def nonzero_exit(self) -> str:
        """How a non-zero exit status of a stdin program counts, by the dataset's official harness (the ``nonzero_exit``
        of its judge, :data:`trl_sandbox.formats.DEFAULT_JUDGES`): ``"ignored"`` where it swallows ``SystemExit``
        and judges the output (APPS, TACO, LiveCodeBench, DeepCoder); ``"judged"`` where the output alone decides,
        however the run ended (code_contests' tester: an exception or a crash after the right output passes); else
        ``"fails"`` (a runtime error, as a contest judge and a plain ``python3 prog.py`` run count it)."""
        return str((self.default_compare or {}).get("nonzero_exit") or "fails")

    def judge_spec(self, default: dict[str, Any] | None = None) -> dict[str, Any]:
        """The stdout judge of this task: the row's own ``compare``, else ``default`` (``sandbox_compare``), else the
        judge of the dataset's official harness (see :data:`trl_sandbox.formats.DEFAULT_JUDGES`).

        A ``float`` judge the row or the user declares compares every number within its tolerance, integers included
        (testlib's ``rcmp``, Kattis's default validator with ``float_tolerance``: ``1.000000000000141`` is ``1``). A
        dataset's own ``float`` judge (code_contests' ``OutputsMatch``, rllm's comparison for DeepCoder and
        PrimeIntellect) reads every token as a double after the text differs, which pays integer problems wrongly
        (``500000003.000001`` for ``500000003``, ``10**18 + 1`` for ``10**18``): there an expected integer is matched
        only by that integer (``"integers": "exact"``)."""
        declared = self.compare or default
        if declared:
            return declared
        spec = self.default_compare or {"mode": "lines"}
        if spec.get("mode") == "float":
            spec = {**spec, "integers": "exact"}
        return spec

    def scored_code(self, code: str) -> str:
        """The part of ``code`` that goes into the program (what banned patterns are checked against)."""
        if self.format in ("humaneval", "call") or (self.format == "mbpp" and self.prompt):
            if is_continuation(code):
                return continuation_code(code)
        return code

    def request(
        self,
        code: str,
        *,
        test_timeout_s: float,
        output_limit: int,
        args: Sequence[str] = (),
        expected: Sequence[Any] = (),
        stop_on_failure: bool = False,
        compare: dict[str, Any] | None = None,
        language: str = "python",
        compile_timeout_s: float = 30.0,
        judge: dict[str, Any] | None = None,
    ) -> dict:
        """The harness request (JSON-able dict) that runs ``code`` against this task's tests.

        Args:
            code: Extracted completion code.
            test_timeout_s: Budget of each test, and of loading the program, in seconds.
            output_limit: Bytes of stdout kept per ``stdio`` test.
            args: ``call`` tasks: the argument literals from :meth:`expected_from_reference`.
            expected: ``call`` tasks: the encoded expected outputs from :meth:`expected_from_reference`.
            stop_on_failure: Stop at the first failing test (the ``all_or_nothing`` reward needs no more).
            compare: The default stdout judge (``sandbox_compare``), used when the row names none (see
                :meth:`judge_spec`).
            language: The language ``code`` is in; other than ``python``, only for ``stdio`` tasks: the program is
                the code alone, compiled and run by the harness (see :mod:`trl_sandbox.languages`).
            compile_timeout_s: Seconds the compiler may run (``sandbox_compile_timeout``).
            judge: ``stdio`` tasks: the request's ``compare`` and ``interactor`` as the scorer prepared them (a
                compiled checker's or interactor's binary in place of its source, see
                :mod:`trl_sandbox.judge_programs`); default: :meth:`judge_spec` and :attr:`interactor` as they are.
        """
        if self.subtasks or self.score_tree:  # the full score may not need every test; the harness skips by groups
            stop_on_failure = False
        if LANGUAGES[language].native:
            if self.format != "stdio":
                raise ValueError(f"{language} code runs stdin/stdout tasks only, not {self.format} tasks")
            build = build_spec(language, self.memory_limit_bytes, code)
            if self.grader is not None and language == "cpp":
                code, build = ioi.with_grader(self.grader, code, build)
            elif self.include_files and language in self.include_files:
                build = with_files(build, self.include_files[language])
            return {"mode": "stdio", "program": code, "test_timeout_s": test_timeout_s, "output_limit": output_limit,
                    "stop_on_failure": stop_on_failure, "tests": list(self.tests), "expected": list(self.outputs),
                    "memory_limit_bytes": self.memory_limit_bytes, "files": list(self.files) or None,
                    "files_only": self.files_only, "nonzero_exit": self.nonzero_exit, "build": build,
                    "compile_timeout_s": compile_timeout_s, **self._judge_fields(compare, judge)}
        base = {
            "program": self.program(code),
            "test_timeout_s": test_timeout_s,
            "output_limit": output_limit,
            "banned": runtime_bans(self.banned_patterns),
            "stop_on_failure": stop_on_failure,
        }
        if self.format in ("humaneval", "mbpp"):
            trusted = _runnable_prefix(self.prompt) if self.format == "humaneval" else ""
            entry = self.func_name if self.format == "humaneval" else None
            return {"mode": "assert", "trusted": trusted, "entry": entry, "entries": list(self.entry_points),
                    "setup": self.setup, "prelude": self.prelude, "tests": list(self.tests), **base}
        if self.format == "call":
            return {"mode": "call", "func_name": self.func_name, "tests": list(args), "expected": list(expected),
                    **base}
        if self.format == "function":
            return {"mode": "function", "func_name": self.func_name, "rule": self.rule, "tests": list(self.tests),
                    "expected": list(self.outputs), **base}
        if self.format == "pytest":
            return {"mode": "pytest", "setup": self.setup, "tests": list(self.tests), "module": "solution",
                    "entries": list(self.entry_points), **base}
        return {"mode": "stdio", "tests": list(self.tests), "expected": list(self.outputs),
                "memory_limit_bytes": self.memory_limit_bytes,
                "files": list(self.files) or None, "files_only": self.files_only, "nonzero_exit": self.nonzero_exit,
                **base, **self._judge_fields(compare, judge)}

    def _judge_fields(self, compare: dict[str, Any] | None, judge: dict[str, Any] | None) -> dict[str, Any]:
        """A ``stdio`` request's ``compare`` and ``interactor``: ``judge`` (prepared by the scorer) over this task's
        own (:meth:`judge_spec`, :attr:`interactor`)."""
        fields: dict[str, Any] = {"compare": self.judge_spec(compare)}
        if self.interactor:
            fields["interactor"] = self.interactor
        if self.subtasks:
            fields["groups"] = harness_groups(self.subtasks)
        if self.score_tree:
            fields["score_tree"] = self.score_tree
        if self.test_compares and not (self.compare or compare):  # with the task's own judge only
            fields["test_compares"] = list(self.test_compares)
        fields.update(judge or {})
        return fields

    # -- reference outputs (call tasks) --------------------------------------------------------------------------

    @property
    def reference_key(self) -> str:
        """Cache key of the reference outputs: a hash of the reference and the test expressions."""
        blob = json.dumps([self.reference, self.reference_code, self.tests])
        return hashlib.sha256(blob.encode()).hexdigest()

    def reference_request(self, *, test_timeout_s: float) -> dict:
        """The harness request that evaluates the test arguments and the reference outputs (``call`` tasks).

        Run in its own execution: the expected outputs never exist in a process that runs model code.
        """
        return {
            "mode": "reference",
            "program": self.reference_code,
            "func_name": self.reference,
            "tests": list(self.tests),
            "test_timeout_s": test_timeout_s,
        }

    def expected_from_reference(self, stdout: bytes, *, key: str | None = None
                                ) -> tuple[tuple[str, ...], tuple[Any, ...]]:
        """Parse the reference execution's output into (argument literals, encoded expected outputs), one per test.
        ``key``: the request's, when it carried one (see :func:`harness_records`).

        Raises:
            TaskFormatError: the reference or a test expression failed (the task is broken, not the model).
            InfrastructureError: the harness did not run, or refused to (a first ``infra`` record).
        """
        records = harness_records(stdout, key)
        _refused(records)
        if not any(r.get("ready") for r in records):
            raise InfrastructureError("the reference run produced no harness output")
        for record in records:
            if "load" in record:
                raise TaskFormatError(f"task {self.task_id}: reference failed: {record.get('error')}")
        by_index = {r["i"]: r for r in records if isinstance(r.get("i"), int)}
        args, expected = [], []
        for i in range(len(self.tests)):
            record = by_index.get(i)
            if record is None or "error" in record:
                reason = record.get("error") if record else "no result"
                raise TaskFormatError(f"task {self.task_id}: reference on test {i} failed: {reason}")
            args.append(record["arg"])
            expected.append(record["out"])
        return tuple(args), tuple(expected)

    # -- judging -------------------------------------------------------------------------------------------------

    def judge(self, stdout: bytes, *, exit_code: int | None, timed_out: bool, stderr: bytes = b"",
              key: str | None = None) -> Verdict:
        """Judge one execution of the harness from its result channel (``stdout``) and exit status.

        The judge process in the sandbox decides each test (``ok``); this counts them against this task's own
        number of tests, never against a number the run reports. ``key``: the request's, when it carried one: only
        the records the judge signed with it count (see :func:`harness_records`).

        Raises:
            InfrastructureError: the harness never started (no ``ready`` record), so nothing of the code ran; it
                refused to (a first ``infra`` record: the request stayed reachable); or the judge could not start its
                own machinery (an ``infra`` record).
            TaskFormatError: the task's own machinery failed in the sandbox (its checker failed or timed out, pytest
                is not importable there): ``invalid_task``, not the program's fault.
        """
        seen: dict[int, dict] = {}
        verdict = self._judge_records(stdout, exit_code, timed_out, stderr, key, seen)
        return self._subtask_verdict(verdict, seen) if self.subtasks or self.score_tree else verdict

    def _subtask_verdict(self, verdict: Verdict, seen: Mapping[int, dict]) -> Verdict:
        """``verdict`` with the subtasks' score (see :mod:`trl_sandbox.subtasks`), from the records of the tests that
        ran (``seen``, by test index; a test not run counts 0): full marks pass, however a test worth nothing did;
        points earned make a failure of a timeout or a crash on a later test (their credit is kept); nothing earned
        leaves the verdict's status as it is (``error``, ``timeout``...)."""
        if verdict.status not in ("passed", "failed", "timeout", "error") or not any(i >= 0 for i in seen):
            return dataclasses.replace(verdict, score=0.0)
        if self.score_tree:  # Kattis: problemtools' groups (a test with no record is not accepted)
            fraction, earned = tree_score(self.score_tree, {i: seen[i].get("ok") is True for i in seen if i >= 0})
        else:
            scores = [test_score(seen[i]) if i in seen else 0.0 for i in range(len(self.tests))]
            earned = subtask_points(self.subtasks, scores)
            fraction = min(1.0, sum(earned) / sum(s.points for s in self.subtasks))
        status = verdict.status
        if fraction >= 1.0 - 1e-9:
            status, fraction = "passed", 1.0
        elif fraction > 0 or status == "passed":
            status = "failed"
        return dataclasses.replace(verdict, status=status, score=fraction, subtask_points=earned,
                                   tests_skipped=seen.get(-2, {}).get("skipped", 0))

    def _judge_records(self, stdout: bytes, exit_code: int | None, timed_out: bool, stderr: bytes,
                       key: str | None, seen: dict[int, dict]) -> Verdict:
        """:meth:`judge` without the subtasks; the records of the tests are put in ``seen`` (by test index; ``-2``:
        ``{"skipped": count}``, the tests the judge skipped)."""
        total = len(self.tests)
        records = harness_records(stdout, key)
        _refused(records)
        if not records or not records[0].get("ready"):
            if timed_out:  # nothing of the program ran: the sandbox was too slow to start the judge
                raise InfrastructureError("the judge did not start within the completion's time budget")
            tail = stderr[-300:].decode(errors="replace")
            raise InfrastructureError(f"the harness did not start (exit code {exit_code}): {tail}")
        by_index: dict[int, dict] = {}
        done = False
        crashed = None
        for record in records[1:]:
            if record.get("infra"):  # the judge itself could not start (pytest's import...): not the program's doing
                raise InfrastructureError(f"the judge could not start: {record.get('error')}")
            if record.get("load") == "unsupported":
                raise TaskFormatError(f"task {self.task_id}: {record.get('error')}")
            if "invalid" in record:
                raise TaskFormatError(f"task {self.task_id}: {record['invalid']}")
            if "load" in record:
                status = {"timeout": "timeout", "compile_error": "compile_error"}.get(record["load"], "error")
                return Verdict(status, 0, total, str(record.get("error"))[:500])
            i = record.get("i")
            if isinstance(i, int) and 0 <= i < total and i not in by_index:
                by_index[i] = record
            if "done" in record:
                done = True
            if "crash" in record:
                crashed = str(record["crash"])[:500]
            if isinstance(record.get("skipped"), list):
                seen[-2] = {"skipped": sum(1 for i in record["skipped"] if isinstance(i, int) and 0 <= i < total)}
        seen.update(by_index)
        passed = sum(1 for record in by_index.values() if record.get("ok") is True)
        failing = [by_index[i] for i in sorted(by_index) if by_index[i].get("ok") is not True]
        partial = sum(min(1.0, max(0.0, float(r["score"]))) for r in failing
                      if isinstance(r.get("score"), (int, float)) and not isinstance(r["score"], bool)
                      and r["score"] == r["score"])
        first_error = None
        first_failed = next((i for i in sorted(by_index) if by_index[i].get("ok") is not True), None)
        if failing:
            first_error = failing[0].get("error") or f"test {first_failed} failed"
        timed_out_test = next((i for i in sorted(by_index) if by_index[i].get("timeout")), None)
        if timed_out or timed_out_test is not None or exit_code == 128 + 24:  # 152: SIGXCPU, the CPU-time rlimit
            if timed_out_test is not None:
                reason = f"test {timed_out_test} ran past its time limit"
            elif exit_code == 128 + 24:
                reason = "the CPU time limit was reached"
            else:
                reason = "the completion's time budget ran out"
            if passed or partial:  # the tests already passed keep their credit: a failure, not a timeout of the whole
                return Verdict("failed", passed, total, f"{reason} after {passed} passed test(s)", partial,
                               timed_out_test if timed_out_test is not None else first_failed)
            return Verdict("timeout", passed, total, reason, failed_test=timed_out_test)
        unserializable = next((r["unserializable"] for r in by_index.values() if r.get("unserializable")), None)
        if unserializable is not None:
            return Verdict("unserializable", passed, total,
                           f"a value could not cross between the program and the tests: {unserializable}"[:500])
        if crashed is not None:
            return Verdict("error", passed, total, crashed)
        if not done:
            return Verdict("error", passed, total, f"the program ended the test run early (exit code {exit_code})")
        if not passed and failing and all(r.get("crashed") and not r.get("printed") for r in failing):
            # It crashed before any output on every test it ran (a stdin program's `import nosuchmod`, `1/0`,
            # `sys.exit(3)`): the same `error` as a function program that does not load.
            return Verdict("error", 0, total, first_error, failed_test=first_failed)
        return Verdict("passed" if passed == total else "failed", passed, total, first_error, partial,
                       None if passed == total else first_failed)
