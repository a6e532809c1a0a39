"""open-r1 IOI (``open-r1/ioi``): one row per subtask of an IOI problem (2020 to 2024), function-style: the completion
implements the problem's functions in C++ and is compiled together with the problem's grader, which reads the test's
input and prints what the functions return.

Fields (the dataset card's schema): ``id`` (the problem's code, ``nile``), ``name``, ``year``, ``day``, ``subtask``
(its name), ``score`` (its points), ``score_precision`` (decimals), ``time_limit`` (seconds), ``memory_limit``
(megabytes), ``task_type`` (``Batch`` | ``Communication`` | ``OutputOnly``), ``test_names`` (the subtask's tests),
``grader_files`` (``[[path, text], ...]``: ``graders/grader.cpp``, ``graders/<id>.h``, ``graders/grader_config.json``,
``checker/checker.cpp``...), ``starting_code``, ``statement``, ``problem`` (open-r1's prompt).

Tests: the dataset publishes them apart, in ``open-r1/ioi-test-cases`` (one config per year; columns ``problem_id``,
``test_name``, ``test_input``, ``test_output``), which open-r1's reward reads with ``load_dataset`` at scoring time.
Here a row carries them in ``test_cases`` (open-r1's ``score_subtask`` reads that column first: a mapping of test name
to ``[input, output]``, or a list in ``test_names``' order), or ``load_tasks(rows, ioi_tests=...)`` adds them
(:func:`add_test_cases`) from the test-case rows or a copy of that dataset's Parquet files.

Official harness: open-r1's ``ioi_scoring.py`` and ``ioi_code_reward`` (``huggingface/open-r1``
``src/open_r1/utils/competitive_programming/``) with piston's ``cms_ioi`` package (``guipenedo/piston``
``packages/cms_ioi/1.0.0/compile`` and ``run``, the same scripts as ``huggingface/ioi`` ``run_tests/custom_setup``):

- the completion's code gets open-r1's ``add_includes`` (``#include <bits/stdc++.h>``, the problem's header unless
  it includes it, ``using namespace std;`` unless it says ``std::`` or that already: :func:`submission`), and is
  written to ``graders/<id>.cpp`` beside the grader files;
- compiled as ``g++ -DEVAL -std=gnu++17 -O2 -pipe -s -o graders/<name> graders/<name>.cpp graders/grader.cpp
  graders/stub.cpp`` (the grader and stub where the row has them; ``<name>``: the first header of ``graders/`` by
  name other than ``testlib.h``); a compile error scores 0;
- run once per test with the input on stdin, within the row's ``time_limit`` (piston: ``timeout`` of that many
  seconds; here the CPU-time limit of every stdin/stdout task, factor 1.0) and its ``memory_limit``, the stack
  unlimited;
- judged by ``checker/checker.cpp`` where the row has one, in CMS's convention (``checker input correct_output
  user_output``, its stdout the test's score in [0, 1]: see :mod:`trl_sandbox.harness.checkers`; compiled once on the
  host with the row's own ``testlib.h``), else by ``diff -b`` against the answer (the ``ioi`` judge);
- the subtask scores the lowest of its tests' scores rounded to ``score_precision`` (``SubtaskResult.score``, the
  reward ``ioi_code_reward`` returns), its points that times ``score``; the tests after the first that scores 0 are
  not run (``score_subtask`` with ``test_batch_size`` 1: the early stop of :mod:`trl_sandbox.subtasks`).

So the ``pass_rate`` reward is open-r1's, and ``all_or_nothing`` pays only a subtask solved whole. ``Communication``
tasks (a manager talking to one or more instances of the submission through FIFOs) and ``OutputOnly`` tasks are
refused with why: they are not supported yet.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError, TaskFormatError
from ..subtasks import Subtask
from ._common import Format, limit_bytes, limit_seconds, plain_path, stdio_fields

__all__ = ["FORMAT", "JUDGE", "TIME_LIMIT_FACTOR", "add_test_cases", "grader_build", "read_ioi", "submission",
           "test_case_table", "with_grader"]

#: The stdout judge of rows without a checker (piston's ``diff -bq`` against ``echo "$CORRECT_OUTPUT"``).
JUDGE: dict[str, Any] = {"mode": "ioi"}
#: The multiplier of the row's time limit: piston's runner gives each test ``timeout "$TIME_LIMIT"``.
TIME_LIMIT_FACTOR = 1.0
#: piston's ``cms_ioi`` compile line for the submission and its grader (``-DEVAL``: the graders' evaluation mode).
COMPILE_FLAGS = ("g++", "-DEVAL", "-std=gnu++17", "-O2", "-pipe", "-s")
#: The task types the runner has (``run``'s ``case "$TASK_TYPE"``), and the one supported here.
TASK_TYPES = ("Batch", "Communication", "OutputOnly")


def _grader_files(row: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The row's ``grader_files`` as ``(path, text)`` pairs, the empty ones left out (as open-r1 sends them:
    ``if content``)."""
    value = row.get("grader_files")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise TaskFormatError("task field 'grader_files' is not valid JSON") from None
    if not isinstance(value, Sequence) or isinstance(value, (str, bytes)):
        raise TaskFormatError("task field 'grader_files' must be a list of [path, text] pairs")
    files = []
    for item in value:
        if (not isinstance(item, Sequence) or isinstance(item, (str, bytes)) or len(item) != 2
                or not all(isinstance(part, str) for part in item)):
            raise TaskFormatError("task field 'grader_files' must be a list of [path, text] pairs")
        name, text = item
        if not plain_path(name):
            raise TaskFormatError(f"grader file {name!r}: not a plain relative path")
        if text:
            files.append((name, text))
    return files


def grader_build(problem_id: str, files: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """The build of a submission to ``problem_id`` with its grader ``files`` (``(path, text)``, the checker's left
    out), as piston's ``cms_ioi`` ``compile`` makes it: ``{"source": "graders/<id>.cpp", "files", "compile",
    "run"}`` (see :func:`trl_sandbox.languages.build_spec`, whose C++ build it replaces).

    Raises:
        TaskFormatError: ``graders/`` holds no header naming the problem (the script then fails to compile every
            submission), or a grader file has the submission's name.
    """
    headers = sorted(os.path.basename(name) for name, _ in files
                     if os.path.dirname(name) == "graders" and name.endswith(".h") and not name.endswith("/testlib.h"))
    if not headers:
        raise TaskFormatError("open-r1 IOI row: grader_files hold no graders/<problem>.h, from which piston's "
                              "compile script names the program")
    name = headers[0][:-2]
    source = f"graders/{problem_id.lower()}.cpp"
    if any(path == source for path, _ in files):
        raise TaskFormatError(f"open-r1 IOI row: grader_files hold {source}, the submission's own file")
    present = {path for path, _ in files}
    sources = [f"graders/{name}.cpp", *(p for p in ("graders/grader.cpp", "graders/stub.cpp") if p in present)]
    return {"source": source, "files": [list(f) for f in files],
            "compile": [*COMPILE_FLAGS, "-o", f"graders/{name}", *sources], "run": [f"./graders/{name}"]}


def with_grader(grader: dict[str, Any], code: str, build: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A C++ completion's ``code`` and harness ``build`` (:func:`trl_sandbox.languages.build_spec`) for a task with
    the ``grader`` of :func:`read_ioi`: the code with open-r1's includes (:func:`submission`), the build with the
    grader's files, source name and command lines."""
    return submission(code, grader["problem"]), {**build, **{k: grader[k] for k in ("source", "files", "compile",
                                                                                  "run")}}


def submission(code: str, problem_id: str) -> str:
    """open-r1's ``add_includes`` (``ioi_utils.py``): ``#include <bits/stdc++.h>``, then ``#include "<id>.h"`` unless
    the code has that line's text, then ``using namespace std;`` unless the code says it or ``std::``, before the
    code; an empty code stays empty."""
    if not code:
        return code
    header = "#include <bits/stdc++.h>\n"
    include = f'#include "{problem_id}.h"'
    if include not in code:
        header += include + "\n"
    if "using namespace std;" not in code and "std::" not in code:
        header += "\nusing namespace std;\n\n"
    return header + code


def _test_cases(row: Mapping[str, Any], names: Sequence[str]) -> list[tuple[str, str]]:
    """The ``(input, output)`` of each test of ``names`` from the row's ``test_cases``."""
    value = row.get("test_cases")
    if value is None:
        raise TaskFormatError(
            f"open-r1 IOI row {row.get('id')!r} subtask {row.get('subtask')!r} carries no tests: open-r1/ioi "
            "publishes them apart, in open-r1/ioi-test-cases; add them with load_tasks(rows, ioi_tests=...) (the "
            "test-case rows, or a copy of that dataset's files) or a 'test_cases' column")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise TaskFormatError("task field 'test_cases' is not valid JSON") from None
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        if len(value) != len(names):
            raise TaskFormatError(f"task field 'test_cases' has {len(value)} tests for {len(names)} test_names")
        value = dict(zip(names, value))
    if not isinstance(value, Mapping):
        raise TaskFormatError("task field 'test_cases' must map test names to [input, output]")
    tests = []
    for name in names:
        case = value.get(name)
        if isinstance(case, Mapping):
            case = (case.get("test_input", case.get("input")), case.get("test_output", case.get("output")))
        if (not isinstance(case, Sequence) or isinstance(case, (str, bytes)) or len(case) != 2
                or not all(isinstance(part, str) for part in case)):
            raise TaskFormatError(f"task field 'test_cases': test {name!r} is missing or not [input, output]")
        tests.append((case[0], case[1]))
    return tests


def read_ioi(row: Mapping[str, Any]) -> dict[str, Any]:
    """An open-r1/ioi row (one subtask) with its tests (see the module docstring).

    Raises:
        TaskFormatError: an unsupported task type, malformed grader files, no ``test_names`` or no tests supplied
            (the message says how to add them), points or precision that are not numbers.
    """
    task_type = row.get("task_type")
    if task_type != "Batch":
        kind = ("a manager that talks to the submission through FIFOs" if task_type == "Communication" else
                "answers submitted as files" if task_type == "OutputOnly" else "a type piston's runner does not have")
        raise TaskFormatError(f"open-r1 IOI row {row.get('id')!r}: task_type {task_type!r} ({kind}) is not "
                              "supported yet; only Batch tasks are")
    problem_id = row.get("id")
    if not isinstance(problem_id, str) or not problem_id or "/" in problem_id or problem_id.startswith("."):
        raise TaskFormatError("task field 'id' must be the problem's code (open-r1/ioi's 'id', a plain file name)")
    names = row.get("test_names")
    if (not isinstance(names, Sequence) or isinstance(names, (str, bytes)) or not names
            or not all(isinstance(n, str) for n in names)):
        raise TaskFormatError("task field 'test_names' must be the subtask's non-empty list of test names")
    tests = _test_cases(row, names)
    for name, (_, answer) in zip(names, tests):
        if not answer.replace("\x00", "").strip("\n"):
            # piston's runner judges nothing then ([ -n "$CORRECT_OUTPUT" ]) and open-r1 reads the program's own
            # output as the test's score: a program printing 1 would be paid
            raise TaskFormatError(f"open-r1 IOI row {problem_id!r}: test {name!r} has an empty answer, which the "
                                  "official runner does not judge (the program's output is read as its score)")
    files = _grader_files(row)
    checker_files = {name: text for name, text in files if name.startswith("checker/")}
    build = grader_build(problem_id, [(n, t) for n, t in files if not n.startswith("checker/")])
    points = row.get("score")
    precision = row.get("score_precision", 2)
    if isinstance(points, bool) or not isinstance(points, (int, float)) or points < 0:
        raise TaskFormatError(f"task field 'score' must be the subtask's points, got {points!r}")
    if isinstance(precision, bool) or not isinstance(precision, int) or precision < 0:
        raise TaskFormatError(f"task field 'score_precision' must be a whole number of decimals, got {precision!r}")
    fields = stdio_fields([t[0] for t in tests], [t[1] for t in tests], JUDGE,
                          time_limit_s=limit_seconds(row.get("time_limit")), time_limit_factor=TIME_LIMIT_FACTOR,
                          memory_limit_bytes=limit_bytes(row.get("memory_limit")))
    checker = checker_files.pop("checker/checker.cpp", None)
    if checker is not None:
        extra = {name.split("/", 1)[1]: text for name, text in checker_files.items() if name.count("/") == 1}
        fields["default_compare"] = {"checker": checker, "language": "cpp", "convention": "cms", "files": extra}
    # open-r1's reward pays the subtask's score in [0, 1]; with no points (a subtask 0, the samples) it still does
    fields["subtasks"] = (Subtask(str(row.get("subtask") or "1"), float(points) or 1.0, tuple(range(len(tests))),
                                  "min", precision=precision),)
    fields["language"] = "cpp"
    fields["task_id"] = "/".join(str(part) for part in (row.get("year"), problem_id, row.get("subtask"))
                                 if part is not None)
    fields["grader"] = {"kind": "ioi", "problem": problem_id, **build}
    return fields


def test_case_table(source: Any, years: Iterable[int] = ()) -> dict[tuple[str, str], tuple[str, str]]:
    """open-r1/ioi-test-cases as ``{(problem_id, test_name): (input, output)}``: from its rows (an iterable of
    ``{problem_id, test_name, test_input, test_output}``: a ``datasets.Dataset`` of one year's config, a list), or
    from a copy of the dataset's files (a directory holding ``<year>/*.parquet``; ``years``: the years to read, else
    all).

    Raises:
        ConfigurationError: a directory without such Parquet files.
        TaskFormatError: a row without those fields, or a file that cannot be read.
    """
    table: dict[tuple[str, str], tuple[str, str]] = {}

    def add(rows: Iterable[Mapping[str, Any]]) -> None:
        for case in rows:
            try:
                table[(str(case["problem_id"]), str(case["test_name"]))] = (case["test_input"], case["test_output"])
            except (KeyError, TypeError):
                raise TaskFormatError("ioi_tests: a test case must have problem_id, test_name, test_input and "
                                      "test_output (open-r1/ioi-test-cases' columns)") from None

    if not isinstance(source, (str, os.PathLike, Iterable)) or isinstance(source, (bytes, Mapping)):
        raise ConfigurationError(f"ioi_tests: {type(source).__name__} is neither the test-case rows nor a directory")
    if isinstance(source, (str, os.PathLike)):
        root = Path(source)
        wanted = {str(y) for y in years}
        paths = sorted(p for p in root.glob("*/*.parquet") if not wanted or p.parent.name in wanted)
        if not root.is_dir() or not paths:
            raise ConfigurationError(f"ioi_tests: {str(source)!r} is not a copy of open-r1/ioi-test-cases (a "
                                     "directory of <year>/*.parquet files)")
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise TaskFormatError("ioi_tests: reading Parquet needs pyarrow (pip install pyarrow)") from None
        columns = ["problem_id", "test_name", "test_input", "test_output"]
        for path in paths:
            try:
                data = pq.read_table(path, columns=columns).to_pydict()
            except (OSError, ValueError, KeyError) as exc:
                raise TaskFormatError(f"cannot read {path} as open-r1/ioi-test-cases: {exc}") from None
            add(dict(zip(columns, values)) for values in zip(*(data[c] for c in columns)))
    else:
        add(source)
    return table


def add_test_cases(row: Mapping[str, Any], table: Mapping[tuple[str, str], tuple[str, str]]) -> dict[str, Any]:
    """``row`` (an open-r1/ioi row) with its subtask's tests in ``test_cases`` (JSON text of ``{test_name: [input,
    output]}``) from ``table`` (:func:`test_case_table`), ready for :func:`read_ioi`; a row that carries them is
    returned as it is, and one whose tests ``table`` lacks without them (reading it then says what is missing).
    """
    out = dict(row)
    if row.get("test_cases") is not None:
        return out
    problem = str(row.get("id"))
    names = row.get("test_names") or ()
    if isinstance(names, (str, bytes)) or not all(isinstance(n, str) for n in names):
        return out  # reading it says what is wrong
    found = {name: list(table[(problem, name)]) for name in names if (problem, name) in table}
    if names and len(found) == len(names):
        out["test_cases"] = json.dumps(found)
    return out


def _detect(row: Mapping[str, Any]) -> bool:
    return row.get("grader_files") is not None and row.get("test_names") is not None and "subtask" in row


FORMAT = Format("ioi", read_ioi, _detect, id_field=None)
