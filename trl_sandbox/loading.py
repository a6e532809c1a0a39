"""Loading task rows: the bundled task sets, JSONL and Parquet files, problem package directories (Kattis, Polygon,
Frontier-CS, InteractBench), or any iterable of rows (a ``datasets.Dataset``), and a row's id without reading its
tests."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .errors import ConfigurationError, TaskFormatError
from .formats import DATASET_FORMATS, check_format, detect_format
from .prompts import chat_rows

__all__ = ["BUNDLED_TASKS", "ROW_FIELDS", "TASK_COLUMN", "decode_row", "load_tasks", "lost_fields", "read_jsonl",
           "read_parquet", "task_dataset", "task_id_of"]


#: Task sets shipped in the package (``trl_sandbox/data``): name -> file.
BUNDLED_TASKS = {
    "daytona": "daytona_tasks.jsonl",
    "humaneval": "HumanEval.jsonl.gz",
    "quickstart": "quickstart_tasks.jsonl",
}


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Read a ``.jsonl`` (or gzip-compressed ``.jsonl.gz``) file of JSON objects, skipping blank lines.

    Raises:
        TaskFormatError: the file is missing or unreadable, or a line is not a JSON object (the message gives the
            file and line number).
    """
    import gzip

    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    rows = []
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError as exc:
                    raise TaskFormatError(f"{path}:{lineno}: not valid JSON: {exc}") from None
                if not isinstance(row, dict):
                    raise TaskFormatError(f"{path}:{lineno}: expected a JSON object, got {type(row).__name__}")
                rows.append(row)
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise TaskFormatError(f"cannot read {path}: {exc}") from None
    return rows


def read_parquet(path: str | Path) -> list[dict[str, Any]]:
    """Read a Parquet file's rows (the hub's format for most datasets: ``data/train-00000-of-00001.parquet``) as
    dicts, nested structs as dicts and lists, with pyarrow (installed with ``datasets``).

    Raises:
        TaskFormatError: the file is missing or not Parquet.
    """
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise TaskFormatError(f"cannot read {path}: reading Parquet needs pyarrow (pip install pyarrow)") from None
    try:
        return pq.read_table(path).to_pylist()
    except (OSError, ValueError) as exc:
        raise TaskFormatError(f"cannot read {path} as Parquet: {exc}") from None


def task_id_of(row: Mapping[str, Any], task_format: str | None = None) -> str | None:
    """A row's task id without parsing its tests: ``task_id``, else the natural id of its dataset format
    (``problem_id``, ``question_id``, ``name``, ``id``...), as a string; None when it has none (its id is then a hash
    of its content, see :meth:`Task.from_row`)."""
    value = row.get("task_id")
    if value is None and row.get("instance_id") is not None and row.get("FAIL_TO_PASS") is not None:  # SWE-bench's
        value = row["instance_id"]
    if value is None:
        fmt = task_format or row.get("task_format") or detect_format(row)
        if fmt in DATASET_FORMATS:
            value = row.get(DATASET_FORMATS[fmt].id_field)
    return None if value is None else str(value)


def load_tasks(
    source: str | Path | Iterable[Mapping[str, Any]],
    *,
    chat: bool = False,
    system_prompt: str | None = None,
    task_format: str | None = None,
    language: str | None = None,
    codeforces_tests: str | Path | None = None,
    ioi_tests: Any = None,
) -> list[dict[str, Any]]:
    """Load task rows from a bundled set name (see :data:`BUNDLED_TASKS`), a ``.jsonl`` / ``.jsonl.gz`` /
    ``.parquet`` file, a problem package directory or a directory of them (Kattis, Polygon, Frontier-CS,
    InteractBench: see :func:`trl_sandbox.formats.package_dirs.read_problem_dirs`), a Harbor task directory or a
    dataset of them (:func:`trl_sandbox.repos.harbor.harbor_rows`), or an iterable of rows (a
    ``datasets.Dataset``, a list of dicts).

    Args:
        source: What to load.
        chat: Turn the rows into conversational prompts with ``starter_code`` (see :func:`chat_rows`).
        system_prompt: With ``chat``: a system message put first.
        task_format: The format of every row (a key of :data:`trl_sandbox.formats.FORMATS`), stored in each row's
            ``task_format`` field, where the reward reads it during training. Default: detected per row from its
            fields.
        language: The language completions are to be written in (``cpp``, ``java``... see
            :mod:`trl_sandbox.languages`), stored in each row's ``language`` field: the reward runs completions as
            that language, and ``chat`` prompts ask for it. Other languages than Python run stdin/stdout rows only.
            Default: each row's own, else the completion's code fence.
        codeforces_tests: A copy of open-r1/codeforces' ``generated_tests`` folder (its
            ``test_cases_NNNN.parquet`` files, one per contest): each open-r1 Codeforces row gets its problem's
            generated tests in ``generated_tests``, scored after its ``official_tests`` as open-r1 scores them (see
            :func:`trl_sandbox.formats.codeforces.add_generated_tests`; every test is then held in memory: with
            ``datasets``, ``dataset.map`` with that function keeps them on disk). Default: the official tests only.
        ioi_tests: open-r1/ioi's tests, which the dataset publishes apart (``open-r1/ioi-test-cases``): its rows (a
            ``datasets.Dataset`` of a year's config, a list of ``{problem_id, test_name, test_input,
            test_output}``) or a copy of its files (a directory of ``<year>/*.parquet``). Each open-r1 IOI row gets
            its subtask's tests in ``test_cases`` (see :func:`trl_sandbox.formats.ioi.add_test_cases`; they are then
            held in memory, a test shared by several subtasks once per row). Default: the rows' own ``test_cases``.

    Returns:
        The rows (dicts), in order. They are not validated: use :meth:`Task.from_row`.

    Raises:
        TaskFormatError: the file is missing or unreadable, a line or row is not a JSON object (the message gives
            the line number), ``task_format`` is unknown, a generated-tests file cannot be read, or a directory is no
            problem package and holds none (or a package in it is malformed).
        ConfigurationError: ``codeforces_tests`` is not a directory, or ``ioi_tests`` a directory without
            the dataset's files.
    """
    check_format(task_format)
    if isinstance(source, (str, Path)):
        name = str(source)
        path = Path(__file__).parent / "data" / BUNDLED_TASKS[name] if name in BUNDLED_TASKS else Path(name)
        if path.is_dir():
            from .formats.package_dirs import read_problem_dirs
            from .repos.harbor import harbor_rows, task_dirs

            rows = harbor_rows(path) if task_dirs(path) else read_problem_dirs(path)
        elif not path.is_file():
            raise TaskFormatError(
                f"cannot read tasks from {name!r}: no such file; bundled sets: {', '.join(BUNDLED_TASKS)}"
            )
        else:
            rows = read_parquet(path) if path.suffix == ".parquet" else read_jsonl(path)
    else:
        rows = []
        for i, row in enumerate(source):
            if not isinstance(row, Mapping):
                raise TaskFormatError(f"row {i} is not a mapping (dataset row): {type(row).__name__}")
            rows.append(dict(row))
    if task_format is not None:
        for row in rows:
            row["task_format"] = task_format
    if language is not None:
        from .languages import language_named

        try:
            name = language_named(language).name
        except ConfigurationError as exc:
            raise TaskFormatError(str(exc)) from None
        for row in rows:
            row["language"] = name
    if codeforces_tests is not None:
        from .formats.codeforces import add_generated_tests

        if not Path(codeforces_tests).is_dir():
            raise ConfigurationError(f"codeforces_tests: {str(codeforces_tests)!r} is not a directory (a copy of "
                                     "open-r1/codeforces' generated_tests folder, with its test_cases_NNNN.parquet "
                                     "files)")
        rows = [add_generated_tests(row, codeforces_tests)
                if (row.get("task_format") or detect_format(row)) == "codeforces" else row for row in rows]
    if ioi_tests is not None:
        from .formats.ioi import add_test_cases, test_case_table

        rows = list(rows)
        ioi_rows = [i for i, row in enumerate(rows) if (row.get("task_format") or detect_format(row)) == "ioi"]
        years = {rows[i]["year"] for i in ioi_rows if isinstance(rows[i].get("year"), (int, str))}
        table = test_case_table(ioi_tests, years)
        for i in ioi_rows:
            rows[i] = add_test_cases(rows[i], table)
    rows = chat_rows(rows, system_prompt=system_prompt) if chat else rows
    mark_row_fields(rows)
    return rows


#: The field :func:`load_tasks` adds to every row when its rows do not all have the same fields: the row's own fields
#: that some other row lacks (a list of names). A row whose list names a field it no longer has lost it on the way
#: to the reward (``datasets.Dataset.from_list`` keeps only the first row's columns): :func:`lost_fields`.
ROW_FIELDS = "task_fields"
#: The column of :func:`task_dataset` that holds each row's fields, as one JSON object (a string).
TASK_COLUMN = "sandbox_task"


def mark_row_fields(rows: list[dict[str, Any]]) -> None:
    """Add :data:`ROW_FIELDS` to every row (in place) when the rows do not all have the same fields (a field whose
    value is None counts as absent, as a dataset's missing value); when they all do, remove it from every row."""
    present = [{k for k, v in row.items() if v is not None and k != ROW_FIELDS} for row in rows]
    for row in rows:
        row.pop(ROW_FIELDS, None)  # the rows as they are now: an earlier list may name a field removed since
    uneven = set().union(*present) - set.intersection(*present) if present else set()
    if not uneven:
        return
    for row, fields in zip(rows, present):
        row[ROW_FIELDS] = sorted(fields & uneven)


def lost_fields(row: Mapping[str, Any]) -> list[str]:
    """The fields ``row``'s :data:`ROW_FIELDS` names that it does not have (or has as None): what it lost between
    :func:`load_tasks` and the reward; ``[]`` when it names none or has no such list.

    Raises:
        TaskFormatError: :data:`ROW_FIELDS` is not a list of field names.
    """
    names = row.get(ROW_FIELDS)
    if names is None:
        return []
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise TaskFormatError(f"{ROW_FIELDS} must be a list of field names, got {names!r:.100}")
    return [name for name in names if row.get(name) is None]


def _json_value(value: Any) -> Any:
    """``json.dumps``'s ``default``: arrays (numpy, pyarrow scalars) as their Python values."""
    for method in ("tolist", "as_py"):
        if hasattr(value, method):
            return getattr(value, method)()
    raise TypeError(f"a {type(value).__name__} is not JSON data")


def task_dataset(rows: Iterable[Mapping[str, Any]], *, columns: Iterable[str] = ("prompt", "task_id")) -> Any:
    """A ``datasets.Dataset`` to train on that keeps every field of every row, however the rows differ.

    ``datasets.Dataset.from_list(rows)`` keeps only the columns of the first row (and needs every column to have one
    type across rows): a ``banned_patterns``, ``compare``, ``interactor``, ``starter_code`` or limit that only later
    rows have is dropped, and so is MBPP's ``test_list`` after a stdin/stdout row. This dataset holds each row whole
    as JSON in :data:`TASK_COLUMN`, which :class:`~trl_sandbox.CodeReward` and
    :class:`~trl_sandbox.CodeEnvironment` read back (:func:`decode_row`), beside the ``columns`` that TRL and other
    reward functions read (``prompt`` is the one TRL needs; a column is kept where some row has it, None elsewhere).

    Args:
        rows: Task rows (from :func:`load_tasks`, a list of dicts, a ``datasets.Dataset``).
        columns: Fields also kept as plain columns, for TRL (``prompt``) and other reward functions; ``task_id`` is
            each row's id as a string (its ``task_id``, else its dataset's own id field: see :func:`task_id_of`).

    Returns:
        A ``datasets.Dataset`` with ``columns`` (those some row has) and :data:`TASK_COLUMN`, one row per row.

    Raises:
        TaskFormatError: a row is not a mapping, a value is not JSON data (the message names the row and field), or
            a kept column's values have types that cannot share one column (``prompt`` a string in some rows and a
            list of messages in others).
    """
    from datasets import Dataset

    rows = [dict(row) if isinstance(row, Mapping) else row for row in rows]
    mark_row_fields([row for row in rows if isinstance(row, dict)])
    kept = [c for c in dict.fromkeys(columns) if c != TASK_COLUMN and any(
        isinstance(r, dict) and (r.get(c) if c != "task_id" else task_id_of(r)) is not None for r in rows)]
    table: dict[str, list[Any]] = {c: [] for c in kept}
    table[TASK_COLUMN] = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise TaskFormatError(f"row {i} is not a mapping (dataset row): {type(row).__name__}")
        fields = {k: v for k, v in row.items() if k != "prompt"}
        try:
            table[TASK_COLUMN].append(json.dumps(fields, default=_json_value, ensure_ascii=False))
        except (TypeError, ValueError) as exc:
            bad = next((k for k, v in fields.items() if not _dumps_ok(v)), "?")
            raise TaskFormatError(f"row {i}: field {bad!r} is not JSON data ({exc})") from None
        for c in kept:  # the id as a string (MBPP's are numbers, others' names): one type for the column
            table[c].append(task_id_of(row) if c == "task_id" else row.get(c))
    try:
        return Dataset.from_dict(table)
    except (TypeError, ValueError) as exc:  # pyarrow's ArrowInvalid and ArrowTypeError are ValueError, TypeError
        raise TaskFormatError(f"task_dataset: the columns {kept} cannot be stored with one type each: {exc}") from None


def _dumps_ok(value: Any) -> bool:
    try:
        json.dumps(value, default=_json_value)
    except (TypeError, ValueError):
        return False
    return True


def decode_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A training row as the reward reads it: the fields :func:`task_dataset` stored in :data:`TASK_COLUMN`, with
    the row's other columns (``prompt``...) beside them; a row without that column as it is.

    Raises:
        TaskFormatError: :data:`TASK_COLUMN` is not a JSON object.
    """
    encoded = row.get(TASK_COLUMN)
    if encoded is None:
        return dict(row)
    try:
        fields = json.loads(encoded) if isinstance(encoded, (str, bytes)) else None
    except ValueError as exc:
        raise TaskFormatError(f"{TASK_COLUMN} is not valid JSON: {exc}") from None
    if not isinstance(fields, dict):
        raise TaskFormatError(f"{TASK_COLUMN} must hold a JSON object (a row of task_dataset), got "
                              f"{type(fields if fields is not None else encoded).__name__}")
    out = {k: v for k, v in row.items() if k != TASK_COLUMN}
    out.update(fields)
    return out
