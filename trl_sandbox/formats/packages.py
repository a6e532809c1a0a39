"""Problem packages read from directories: Kattis (problemtools), Codeforces Polygon and Frontier-CS problems, as rows
of trl-sandbox's own package schema, and the format that reads those rows (``kattis_package``,
``polygon_package``, ``frontier_cs``). The directories are read by :mod:`.package_dirs`
(``load_tasks(DIRECTORY)``).

Row schema (what :func:`trl_sandbox.formats.package_dirs.read_problem_dirs` writes; JSON-able, so it can be kept
as JSONL): ``task_format`` (the package kind), ``task_id`` (the problem's directory name), ``package_tests`` (a list
of ``{name, input, answer}``: the test's path in the package, its input and its answer file's text), ``checker`` (a
checker spec, see :func:`~trl_sandbox.formats._common.parse_compare`) or ``judge`` (a stdout judge, Kattis' default
validator), ``interactor`` (an interactor spec) or None, ``time_limit_s``, ``time_limit_factor``,
``memory_limit_bytes``, and ``reference_solutions`` (a list of ``{path, language, tag, source}``: Kattis'
``submissions/<verdict>/``, Polygon's ``<solutions>`` with their tags, Frontier-CS' ``examples/reference.cpp``),
which the task does not carry; ``subtasks`` (a list of :func:`trl_sandbox.subtasks.read_subtasks` entries: Polygon's
groups with points) when the package scores by groups; ``include_files`` (Kattis' ``include/<language>/``:
``{language: [[path, text], ...]}``, C and C++) when it has them; ``test_compares`` (per test, None or its own
judge, or ``{"flags"}`` for its checker: a Kattis test group's ``output_validator_flags``) when a group sets them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import TaskFormatError
from ._common import Format, parse_compare, parse_interactor, plain_path, stdio_fields

#: The package kinds, by format name.
PACKAGE_FORMATS = ("kattis_package", "polygon_package", "frontier_cs")


def read_package(row: Mapping[str, Any]) -> dict[str, Any]:
    """A package row (see the module docstring): its tests (inputs and answers), its checker or stdout judge, its
    interactor, its limits.

    Raises:
        TaskFormatError: ``package_tests`` is not a list of ``{name, input, answer}``, or a checker, judge or
            interactor spec is malformed.
    """
    tests = row.get("package_tests")
    if not isinstance(tests, list) or not all(isinstance(t, Mapping) and isinstance(t.get("input"), str)
                                              for t in tests):
        raise TaskFormatError("task field 'package_tests' must be a list of {name, input, answer} (rows that "
                              "load_tasks(DIRECTORY) writes)")
    judge = parse_compare(row.get("checker")) or parse_compare(row.get("judge")) or {"mode": "tokens"}
    time_limit = row.get("time_limit_s")
    memory = row.get("memory_limit_bytes")
    fields = stdio_fields([t["input"] for t in tests], [t.get("answer") or "" for t in tests], judge,
                          time_limit_s=float(time_limit) if time_limit else None,
                          time_limit_factor=row.get("time_limit_factor"),
                          memory_limit_bytes=int(memory) if memory else None)
    interactor = parse_interactor(row.get("interactor"))
    if interactor is not None:
        fields["interactor"] = interactor
    includes = row.get("include_files")
    if includes:
        fields["include_files"] = read_include_files(includes)
    per_test = row.get("test_compares")
    if per_test is not None:
        if not isinstance(per_test, list) or len(per_test) != len(tests):
            raise TaskFormatError("task field 'test_compares' must give one entry (None or a judge) per test")
        checker = "checker" in judge

        def one(c: Any) -> dict[str, Any] | None:
            if c is None:
                return None
            if isinstance(c, Mapping) and set(c) == {"flags"} and isinstance(c["flags"], list):
                flags = [str(f) for f in c["flags"]]  # over the checker, else the default validator's
                return {"flags": flags} if checker else parse_compare({"mode": "kattis", "flags": flags})
            return parse_compare(c)

        fields["test_compares"] = tuple(one(c) for c in per_test)
    return fields


def read_include_files(value: Any) -> dict[str, tuple[tuple[str, str], ...]]:
    """A row's ``include_files``: ``{language: [[relative path, text], ...]}`` for C and C++ (see
    :func:`trl_sandbox.formats.kattis_includes.include_files`).

    Raises:
        TaskFormatError: another shape, another language, or a path that is not a plain relative one.
    """
    if not isinstance(value, Mapping):
        raise TaskFormatError("task field 'include_files' must map a language to [[path, text], ...]")
    found = {}
    for language, files in value.items():
        if language not in ("cpp", "c"):
            raise TaskFormatError(f"task field 'include_files': {language!r} files are not supported; cpp and c are")
        if not isinstance(files, list) or not all(
                isinstance(f, (list, tuple)) and len(f) == 2 and all(isinstance(x, str) for x in f) for f in files):
            raise TaskFormatError("task field 'include_files' must map a language to [[path, text], ...]")
        for name, _text in files:
            if not plain_path(name):
                raise TaskFormatError(f"task field 'include_files': {name!r} is not a plain relative path")
        found[str(language)] = tuple((str(n), str(t)) for n, t in files)
    return found


KATTIS = Format("kattis_package", read_package, id_field="task_id")
POLYGON = Format("polygon_package", read_package, id_field="task_id")
FRONTIER_CS = Format("frontier_cs", read_package, id_field="task_id")
