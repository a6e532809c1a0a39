"""Row formats: each dataset's published schema, read into the fields of a task, and the registry that tells them
apart.

One module per dataset family, each a reader from a row exactly as the dataset publishes it
(``datasets.load_dataset(...)[i]``, or a line of its JSONL/Parquet files) to the fields of a
:class:`~trl_sandbox.tasks.Task` (see :class:`Format`), with its official harness named in its docstring and its
rules kept (its comparison of outputs, see :func:`trl_sandbox.harness.compare.same_output`; its call convention, its
import prelude and its limits):

================== ============================================ ================================================
format (module)    fields it is recognised by                   tests, and the official harness followed
================== ============================================ ================================================
``taco``           ``input_output`` and a column only TACO      stdin/stdout or calls, as APPS's; TACO's
                   publishes (``raw_tags``, ``skill_types``,    ``metrics/testing_util.py``: the stripped text,
                   ``picture_num``...)                          4 s a test
``apps``           ``input_output`` (JSON string: ``inputs``,   stdin/stdout, or calls of ``fn_name`` with each
                   ``outputs``, optional ``fn_name``),          input as the argument list; APPS's
                   ``problem_id``, ``starter_code``             ``eval/testing_util.py``: stripped text and lines,
                                                                then one number a line, 4 s a test
``code_contests``  ``public_tests``, ``private_tests``,         stdin/stdout (or files), all three test lists;
                   ``generated_tests``, ``name``                ``OutputsMatch`` of deepmind/code_contests
``livecodebench``  ``public_test_cases``,                       ``stdin``: ``grade_stdio``; ``functional``: a
                   ``private_test_cases``, ``metadata``         method of ``Solution()``; LiveCodeBench's prelude
``kodcode``        ``test`` (a pytest file importing from       each test function is one test, run by pytest
                   ``solution``), ``question_id``               in the judge
``primeintellect`` ``verification_info`` (JSON ``test_cases``)  as DeepCoder's trainer (rllm) scores them
``deepcoder``      ``tests`` (JSON)                             each subset with its own rules, as rllm's
``rstar``          ``question_id``, ``inputs``, ``outputs``     LiveCodeBench's rule
``codeforces``     ``official_tests``, ``generated_checker``    open-r1's checker convention, else tokens with
(open-r1)                                                       yes/no in any case (piston's runner)
``ioi`` (open-r1)  ``grader_files``, ``test_names``,            one subtask of an IOI problem: C++ compiled with
                   ``subtask``                                  its grader, its CMS checker or ``diff -b``, the
                                                                lowest test score (open-r1's ``ioi_scoring.py``)
``ccplus``         ``test_cases``, ``correct_submissions``      stdin/stdout, its testlib checker (C++)
``aethercode``     ``test_cases``, ``contest_category``         stdin/stdout, its testlib checker or tokens
``interactbench``  ``interactor_non_adaptive``, ``cases``       interactive: its testlib interactor (C++)
``kattis_package`` ``package_tests`` (``load_tasks(DIR)``'s     the package's validator, checker or
``polygon_package`` rows; named by their ``task_format``)       interactor (see :mod:`.package_dirs`)
``frontier_cs``
``humaneval``,     ``entry_point``/``test``, ``test_list``,     trl-sandbox's own formats and HumanEval/MBPP
``mbpp``, ``call``, ``func_name``/``reference``,                (see :mod:`.humaneval`)
``stdio``          ``inputs``/``outputs``
================== ============================================ ================================================

Detection (:func:`detect_format`) tries the formats in the order of :data:`FORMATS`, the public datasets' first.
**Adding a dataset format** is one module with its reader and its :class:`Format`, and one line in :data:`FORMATS`.

Every reader raises :class:`~trl_sandbox.errors.TaskFormatError` with the reason for a malformed row (a test list
that is not JSON, inputs without outputs, an interactive problem); the scorer turns it into an ``invalid_task``
result for that row alone.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from ..errors import TaskFormatError
from . import (aethercode, apps, ccplus, code_contests, codeforces, deepcoder, humaneval, interactbench, ioi, kodcode,
               livecodebench, packages, primeintellect, rstar, taco)
from ._common import JUDGE_NAMES, Format, interactive, limit_bytes, limit_seconds, parse_compare, parse_interactor
from .humaneval import code_prefix

__all__ = ["DATASET_FORMATS", "DEFAULT_JUDGES", "FORMATS", "OWN_FORMATS", "Format", "JUDGE_NAMES", "check_format",
           "code_prefix", "detect_format", "limit_bytes", "limit_seconds", "parse_compare", "parse_interactor",
           "read_row"]

#: Every format by name, in detection order: the public datasets' first, then trl-sandbox's own.
FORMATS: dict[str, Format] = {fmt.name: fmt for fmt in (
    primeintellect.FORMAT,
    taco.FORMAT,
    apps.APPS,
    livecodebench.FORMAT,
    codeforces.FORMAT,
    ioi.FORMAT,
    ccplus.FORMAT,
    aethercode.FORMAT,
    interactbench.FORMAT,
    code_contests.FORMAT,
    kodcode.FORMAT,
    deepcoder.FORMAT,
    rstar.FORMAT,
    packages.KATTIS,
    packages.POLYGON,
    packages.FRONTIER_CS,
    humaneval.MBPP,
    humaneval.STDIO,
    humaneval.CALL,
    humaneval.HUMANEVAL,
)}
#: The public datasets' formats (APPS, TACO, code_contests...), by name.
DATASET_FORMATS: dict[str, Format] = {name: fmt for name, fmt in FORMATS.items() if fmt.dataset}
#: trl-sandbox's own formats (see :mod:`.humaneval`).
OWN_FORMATS: tuple[str, ...] = tuple(name for name, fmt in FORMATS.items() if not fmt.dataset)
#: The stdout judge each format's official harness applies (see :func:`trl_sandbox.harness.compare.same_output`).
DEFAULT_JUDGES: dict[str, dict[str, Any]] = {
    "stdio": humaneval.STDIO_JUDGE,
    "apps": apps.JUDGE,
    "taco": taco.JUDGE,
    "code_contests": code_contests.JUDGE,
    "livecodebench": livecodebench.JUDGE,
    "primeintellect": primeintellect.JUDGE,
    "deepcoder": deepcoder.JUDGE,
    "rstar": rstar.JUDGE,
    "codeforces": codeforces.JUDGE,
    "ioi": ioi.JUDGE,
    "ccplus": ccplus.JUDGE,
    "aethercode": aethercode.JUDGE,
}


def check_format(task_format: str | None) -> None:
    """Raise :class:`TaskFormatError` naming the known formats when ``task_format`` is set and is none of them."""
    if task_format is not None and task_format not in FORMATS:
        known = ", ".join([*DATASET_FORMATS, *OWN_FORMATS])
        raise TaskFormatError(f"unknown task format {task_format!r}; known: {known}")


def detect_format(row: Mapping[str, Any]) -> str | None:
    """The format of ``row`` from its fields (the first of :data:`FORMATS` whose detection matches), else None."""
    for name, fmt in FORMATS.items():
        if fmt.detect is not None and fmt.detect(row):
            return name
    return None


def read_row(row: Mapping[str, Any], task_format: str | None = None) -> dict[str, Any]:
    """Read ``row`` as ``task_format`` (a key of :data:`FORMATS`; default: detected from its fields).

    Returns:
        The task's fields (see :class:`Format`), with ``task_id`` (the row's ``task_id``, else the dataset's id field,
        else ``"{format}-{hash of the tests}"``) and ``dataset`` (the public dataset's format name, else ``""``).

    Raises:
        TaskFormatError: an unknown format name, a row whose format cannot be told from its fields (the message
            lists them), a malformed row, an interactive row without an interactor, or a row without tests.
    """
    check_format(task_format)
    name = task_format or detect_format(row)
    if name is None:
        keys = ", ".join(sorted(map(str, row))) or "none"
        raise TaskFormatError(
            f"cannot tell the task format from the fields [{keys}]. Known formats: HumanEval (entry_point, "
            "test), MBPP (test_list), call-based (func_name, tests, reference), stdin/stdout (inputs, outputs), "
            "APPS/TACO (input_output; TACO with raw_tags, skill_types), code_contests (public_tests, "
            "private_tests, generated_tests), LiveCodeBench (public_test_cases, private_test_cases), "
            "KodCode (test: a pytest file), "
            "PrimeIntellect (verification_info), DeepCoder (tests), rStar-Coder (question_id, inputs, outputs), "
            "open-r1 codeforces (official_tests), Code-Contests-Plus (test_cases, correct_submissions), AetherCode "
            "(test_cases, contest_category), InteractBench (interactor_non_adaptive), open-r1 IOI (grader_files, "
            "test_names, subtask); name one with task_format="
        )
    fmt = FORMATS[name]
    if fmt.dataset:
        fields = fmt.read(row)
        if not fields["tests"]:
            raise TaskFormatError(f"{name} task has no tests")
        own = fields.pop("task_id", None)  # a reader's own id, where no one field is unique (one IOI subtask)
        natural = row.get("task_id", row.get(fmt.id_field) if fmt.id_field else own)
        content = [name, fields["tests"], fields.get("outputs")]
    else:
        prefix = code_prefix(row)  # read first: a bad starter_code is the error reported
        fields = fmt.read(row)
        if not fields["tests"]:
            raise TaskFormatError(f"{name} task has no tests (constant asserts such as 'assert True' do not count)")
        natural = row.get("task_id")
        content = [name, prefix, fields["tests"]]
    if interactive(row) and not fields.get("interactor") and row.get("interactor") is None:
        # every format, trl-sandbox's own too: judged as plain stdin/stdout, a program printing the outputs is paid
        raise TaskFormatError(f"{name} row is an interactive problem and gives no interactor: it cannot be "
                              "judged (give its source in an 'interactor' field, see docs/datasets.md)")
    if natural is None:
        natural = f"{name}-{hashlib.sha1(json.dumps(content, default=str).encode()).hexdigest()[:12]}"
    fields["task_id"] = str(natural)
    fields["dataset"] = name if fmt.dataset else ""
    return fields
