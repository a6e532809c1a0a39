"""open-r1 Codeforces (``open-r1/codeforces``): ``official_tests`` (``[{input, output}]``), ``generated_checker``
(a Python checker), ``time_limit`` (seconds), ``memory_limit`` (megabytes), ``input_mode`` (``file``: the program
reads ``input.txt`` and writes ``output.txt``).

Official harness: open-r1's ``cf_scoring.py`` (``huggingface/open-r1``
``src/open_r1/utils/competitive_programming/cf_scoring.py``: a test passes when the run exits with 0 and prints
``1``) with the piston runner (``guipenedo/piston`` ``packages/codeforces/1.0.0/run``). The runner removes the
``\\r`` at the end of the input's lines before the program reads it. With a checker, ``checker.py input
correct_output solution_output`` gets the files as the runner writes them and must exit with 0 printing ``1`` or
``100`` (see :func:`trl_sandbox.harness.checkers.run_checker`). Without one, both outputs are normalized
(``normalize_output``: the whole words yes/no upper-cased, every run of ASCII whitespace, newlines included, one
space) and compared by ``diff -b``: the same tokens, yes/no in any case (the ``codeforces`` judge, :data:`JUDGE`).

Time: each test gets the row's ``time_limit`` seconds, for Python too (cf_scoring.py writes ``TIME_LIMIT`` from the
row's ``time_limit`` for ``cf_python3`` as for ``c++17``; the runner runs ``timeout --preserve-status
"$TIME_LIMIT"``), as Codeforces gives it: :data:`TIME_LIMIT_FACTOR`. ``sandbox_time_limit_factor`` gives more.

File mode (``input_mode: file``, old problems): the runner writes ``input.txt``, runs the program with no stdin
(piston's request carries none) and its stdout sent to ``/dev/null``, and reads ``output.txt``
(``$TASK_EXECUTABLE > /dev/null 2>&1``): the program must read and write the files; one that reads stdin or prints
its answer gets nothing and is judged on an empty output (``files_only``).

Generated tests: open-r1 scores ``official_tests`` followed by the problem's generated tests (cf_scoring.py's
``score_submission``: ``problem_data["official_tests"] + await get_generated_tests(problem_data["id"])``), which the
dataset publishes apart, one Parquet file per contest (``generated_tests/test_cases_{contest_id:04d}.parquet``,
columns ``problem_id``, ``input``, ``output``; open-r1 reads them from ``$CF_TESTS_FOLDER``). A row whose
``official_tests_complete`` is false lacks tests that only those files hold. They are scored here when supplied: a
``generated_tests`` column holding the list of ``{input, output}`` or JSON text of it (the published column is their
count, an integer, and holds none), as :func:`add_generated_tests` writes it from the folder (``load_tasks(...,
codeforces_tests=FOLDER)`` does it for every row). Without them such a row is scored on its official tests, and the
first one read logs a warning (once per process).
"""

from __future__ import annotations

import functools
import json
import logging
import os
from collections.abc import Mapping
from typing import Any

from ..errors import ConfigurationError, TaskFormatError
from ._common import Format, json_field, limit_bytes, limit_seconds, stdio_fields

logger = logging.getLogger(__name__)

#: The stdout judge of rows without a checker (piston's ``normalize_output`` and ``diff -b``).
JUDGE: dict[str, Any] = {"mode": "codeforces"}
#: The multiplier of the statement's time limit: piston's runner gives each test ``timeout "$TIME_LIMIT"``, the
#: row's ``time_limit`` in seconds, whatever the language.
TIME_LIMIT_FACTOR = 1.0


def runner_input(text: Any) -> Any:
    """A test's input as the runner gives it to the program: ``sed -i 's/\\r$//'`` (one ``\\r`` at the end of each
    line removed)."""
    if not isinstance(text, str):
        return text
    return "\n".join(line[:-1] if line.endswith("\r") else line for line in text.split("\n"))


def read_codeforces(row: Mapping[str, Any]) -> dict[str, Any]:
    """open-r1 ``codeforces``: ``official_tests`` (``[{input, output}]``), ``generated_checker`` (a Python checker
    in open-r1's convention), ``time_limit`` (seconds), ``memory_limit`` (megabytes), ``input_mode``."""
    file_mode = row.get("input_mode") == "file"
    tests = json_field(row, "official_tests")
    if not isinstance(tests, list) or not all(isinstance(t, Mapping) for t in tests):
        raise TaskFormatError("task field 'official_tests' must be a list of {input, output}")
    generated = supplied_generated_tests(row)
    if generated is not None:
        tests = tests + generated  # open-r1's order: the official tests, then the generated ones
    elif row.get("official_tests_complete") is False:
        _warn_incomplete(row)
    fields = stdio_fields([runner_input(t.get("input")) for t in tests], [t.get("output") for t in tests], JUDGE,
                          time_limit_s=limit_seconds(row.get("time_limit")), time_limit_factor=TIME_LIMIT_FACTOR,
                          memory_limit_bytes=limit_bytes(row.get("memory_limit")),
                          files=("input.txt", "output.txt") if file_mode else None, files_only=file_mode)
    checker = row.get("generated_checker")
    if isinstance(checker, str) and checker.strip():
        fields["default_compare"] = {"checker": checker, "language": "python", "convention": "open-r1"}
    return fields


def supplied_generated_tests(row: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    """The row's generated tests when the user supplied them: its ``generated_tests`` as a list of ``{input, output}``
    (or JSON text of one), else None (the published column is their count, an integer: nothing supplied).

    Raises:
        TaskFormatError: ``generated_tests`` is a list (or text) but not of ``{input, output}``.
    """
    value = row.get("generated_tests")
    if value is None or isinstance(value, (bool, int, float)):
        return None
    value = json_field(row, "generated_tests")
    if not isinstance(value, list) or not all(isinstance(t, Mapping) and "input" in t and "output" in t
                                              for t in value):
        raise TaskFormatError("task field 'generated_tests' must be the count open-r1/codeforces publishes, or the "
                              "list of {input, output} of the problem's generated tests")
    return value


_WARNED_INCOMPLETE: list[str] = []


def _warn_incomplete(row: Mapping[str, Any]) -> None:
    """Log once per process that a row with ``official_tests_complete: false`` is scored without its generated
    tests."""
    if _WARNED_INCOMPLETE:
        return
    _WARNED_INCOMPLETE.append(str(row.get("id")))
    count = row.get("generated_tests")
    logger.warning(
        "trl-sandbox: open-r1/codeforces problem %s (and any other with official_tests_complete: false) is scored on "
        "its official_tests only%s; open-r1 also scores the problem's generated tests (the dataset's "
        "generated_tests/test_cases_NNNN.parquet files). Supply them with load_tasks(..., codeforces_tests=FOLDER) "
        "or trl_sandbox.formats.codeforces.add_generated_tests(row, FOLDER), or a generated_tests column of "
        "{input, output}.", row.get("id"),
        f" ({count} generated tests not supplied)" if isinstance(count, int) and not isinstance(count, bool) else "",
    )


def generated_tests_file(folder: str | os.PathLike[str], problem_id: str) -> str:
    """The path of the Parquet file of ``problem_id``'s contest in ``folder`` (a copy of the dataset's
    ``generated_tests`` directory): ``test_cases_{contest_id:04d}.parquet``, the contest id being the part of the id
    before ``/`` (as cf_scoring.py's ``get_generated_tests`` names it).

    Raises:
        TaskFormatError: the id is not ``CONTEST/INDEX`` with a numeric contest.
    """
    contest = str(problem_id).split("/")[0]
    if not contest.isdigit():
        raise TaskFormatError(f"open-r1/codeforces id {problem_id!r} does not start with a numeric contest id")
    return os.path.join(os.fspath(folder), f"test_cases_{int(contest):04d}.parquet")


@functools.lru_cache(maxsize=8)
def _contest_tests(path: str) -> dict[str, tuple[dict[str, str], ...]]:
    """A contest file's tests by ``problem_id`` (``{}`` when the file does not exist: open-r1 gives such a problem no
    generated tests). A few contests are kept, so that rows read in order read each file once."""
    if not os.path.isfile(path):
        return {}
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise TaskFormatError(f"cannot read {path}: reading Parquet needs pyarrow (pip install pyarrow)") from None
    try:
        table = pq.read_table(path, columns=["problem_id", "input", "output"])
    except (OSError, ValueError, KeyError) as exc:
        raise TaskFormatError(f"cannot read {path} as open-r1/codeforces generated tests: {exc}") from None
    tests: dict[str, list[dict[str, str]]] = {}
    for problem, test_input, test_output in zip(*(table.column(c).to_pylist() for c in ("problem_id", "input",
                                                                                         "output"))):
        tests.setdefault(str(problem), []).append({"input": test_input, "output": test_output})
    return {problem: tuple(found) for problem, found in tests.items()}


def add_generated_tests(row: Mapping[str, Any], folder: str | os.PathLike[str]) -> dict[str, Any]:
    """``row`` (an open-r1/codeforces row) with its generated tests in ``generated_tests``: JSON text of the list of
    ``{input, output}`` of its problem in ``folder``'s contest file (see :func:`generated_tests_file`; ``[]`` when the
    contest has no file, as open-r1 reads it), ready for :func:`read_codeforces`. Text, so that the column has one
    type in every row: usable with ``datasets.Dataset.map`` (``ds.map(add_generated_tests, fn_kwargs={"folder":
    FOLDER})``), which keeps the tests on disk rather than in memory. A row that already carries its tests is
    returned as it is.

    Raises:
        ConfigurationError: ``folder`` is not a directory.
        TaskFormatError: a contest file cannot be read, or the row has no ``CONTEST/INDEX`` id.
    """
    if not os.path.isdir(folder):
        raise ConfigurationError(f"codeforces_tests: {os.fspath(folder)!r} is not a directory (a copy of "
                                 "open-r1/codeforces' generated_tests folder, with its test_cases_NNNN.parquet files)")
    out = dict(row)
    if supplied_generated_tests(row) is not None:
        return out
    path = generated_tests_file(folder, str(row.get("id")))
    found = _contest_tests(os.path.abspath(path)).get(str(row.get("id")), ())
    out["generated_tests"] = json.dumps([dict(t) for t in found])
    return out


FORMAT = Format("codeforces", read_codeforces, lambda r: r.get("official_tests") is not None, id_field="id")
