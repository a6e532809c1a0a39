"""InteractBench (``kmsgk/InteractBench``): interactive contest problems, each with a testlib interactor in C++.

Schema (``problems.jsonl`` of https://huggingface.co/datasets/kmsgk/InteractBench, as the benchmark's own importer
reads it: github ``kmsgk0/InteractBench`` ``scripts/import_from_jsonl.py`` at commit
a73b980816753ead7bf83b536e8422fbf6339fef): ``problem_id``, ``description``, ``difficulty``, ``cate``,
``cpu_time_limit_ms``, ``memory_limit_mb``, ``interactor_mode`` (``non_adaptive`` | ``adaptive`` | ``both``),
``interactor_non_adaptive`` and ``interactor_adaptive`` (testlib interactors, C++ source), ``generator``. The tests
are not in the rows: the dataset's ``test_cases/*.tar.zst`` shards unpack to ``<problem_id>/cases/NNN.in``
(``001``-``100`` for the non-adaptive interactor, ``101``-``200`` for the adaptive one).

Official judge (``interactbench/runners/run_main.py`` and ``eval_defaults.py``, same commit): go-judge connects the
program and ``interactor in.txt tout.txt`` (testlib's interactor convention, no answer file); the interactor's exit
status decides (0 OK, 1 WA, 2 PE, else RE). The program gets ``cpu_time_limit_ms`` of CPU time (× 2 for Python and
Java, × 1 for C++: ``LANGUAGE_TIME_MULTIPLIER``), twice that of wall time, and ``memory_limit_mb``; the interactor 4 ×
both. Cases by mode (``select_cases``): ``non_adaptive`` and ``both`` run cases 001-100 with the non-adaptive
interactor (``BOTH_NON = 100``, ``BOTH_ADAPTIVE = 0``), ``adaptive`` runs 101-200 with the adaptive one.

Read: the interactor of the row's mode (testlib convention) and its cases' inputs, from a ``cases`` field the user
supplies (``{"001": text, ...}`` or ``[{name, input}]``: :func:`add_cases` reads them from the unpacked folder;
``load_tasks(FOLDER)`` on the folder of problems that the importer writes reads rows and cases together). The time
factor is C++'s (1): a Python program gets the statement's limit, half what the benchmark gives it (set
``sandbox_time_limit_factor=2`` for Python). The query counts the interactor writes to ``tout`` (``queries=``,
``query_limit=``) are not read.

Reference solutions: none published. The IOI-style rows (``ioi.jsonl``: ``interactor_files``, ``problem_json``,
graders) are not read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from ..errors import TaskFormatError
from ._common import Format, json_field, limit_bytes, stdio_fields
from ._contest import interactor_spec, non_empty_text, positive_number

#: The judge's CPU time multiplier for C++ (``LANGUAGE_TIME_MULTIPLIER["cpp"]``).
TIME_LIMIT_FACTOR = 1.0
#: The case numbers each interactor runs (``select_cases`` with ``BOTH_NON = 100``, ``BOTH_ADAPTIVE = 0``).
CASE_POOLS = {"non_adaptive": range(1, 101), "both": range(1, 101), "adaptive": range(101, 201)}


def _mode(row: Mapping[str, Any]) -> str:
    """The row's interactor mode as ``_normalize_interactor_mode`` reads it (unset or unknown: ``both``)."""
    value = str(row.get("interactor_mode") or "").strip().lower().replace("-", "_").replace(" ", "_")
    return value if value in CASE_POOLS else "both"


def _cases(row: Mapping[str, Any]) -> dict[int, str]:
    """The supplied ``cases`` by case number.

    Raises:
        TaskFormatError: none supplied, or not a mapping or list of named inputs with numeric names.
    """
    value = json_field(row, "cases")
    if value is None:
        raise TaskFormatError(f"InteractBench problem {row.get('problem_id')!r}: its tests are not in the row; "
                              "unpack the dataset's test_cases/*.tar.zst and add them with "
                              "trl_sandbox.formats.interactbench.add_cases(row, FOLDER), or load the problems' folder "
                              "with load_tasks(FOLDER)")
    if isinstance(value, list):
        value = {t.get("name"): t.get("input") for t in value if isinstance(t, Mapping)}
    if not isinstance(value, Mapping):
        raise TaskFormatError("task field 'cases' must map case names (001...) to input texts")
    cases: dict[int, str] = {}
    for name, text in value.items():
        stem = os.path.splitext(os.path.basename(str(name)))[0]
        if not stem.isdigit() or not isinstance(text, str):
            raise TaskFormatError(f"task field 'cases': {name!r} must be a numeric case name with its input text")
        cases[int(stem)] = text
    return cases


def read_interactbench(row: Mapping[str, Any]) -> dict[str, Any]:
    """An InteractBench row (``problems.jsonl``) with its ``cases``: the interactor of its ``interactor_mode`` and
    the inputs of that interactor's cases; ``cpu_time_limit_ms`` and ``memory_limit_mb``.

    Raises:
        TaskFormatError: no cases supplied, no interactor for the mode, or a limit that is not a number.
    """
    mode = _mode(row)
    key = "interactor_adaptive" if mode == "adaptive" else "interactor_non_adaptive"
    source = non_empty_text(row.get(key))
    if source is None:
        raise TaskFormatError(f"InteractBench problem {row.get('problem_id')!r} (interactor_mode {mode!r}) has no "
                              f"{key}")
    cases = _cases(row)
    chosen = [n for n in CASE_POOLS[mode] if n in cases]
    ms = positive_number(row.get("cpu_time_limit_ms"), "cpu_time_limit_ms")
    fields = stdio_fields([cases[n] for n in chosen], [""] * len(chosen), {"mode": "tokens"},
                          time_limit_s=None if ms is None else ms / 1000.0, time_limit_factor=TIME_LIMIT_FACTOR,
                          memory_limit_bytes=limit_bytes(positive_number(row.get("memory_limit_mb"),
                                                                         "memory_limit_mb")))
    fields["interactor"] = interactor_spec(source, language="cpp", convention="testlib")
    return fields


def add_cases(row: Mapping[str, Any], folder: str | os.PathLike[str]) -> dict[str, Any]:
    """``row`` with ``cases``: the ``NNN.in`` files of ``folder/<problem_id>/cases`` (the unpacked
    ``test_cases/*.tar.zst``), name to text.

    Raises:
        TaskFormatError: the problem has no cases folder.
    """
    path = os.path.join(os.fspath(folder), str(row.get("problem_id")), "cases")
    if not os.path.isdir(path):
        raise TaskFormatError(f"InteractBench: no cases folder {path} (unpack the dataset's test_cases shards there)")
    cases = {}
    for name in sorted(os.listdir(path)):
        if re.fullmatch(r"\d+\.in", name):
            with open(os.path.join(path, name), encoding="utf-8", errors="replace") as f:
                cases[name[:-3]] = f.read()
    return {**row, "cases": cases}


def is_interactbench(row: Mapping[str, Any]) -> bool:
    """An InteractBench row: ``interactor_non_adaptive`` or ``interactor_adaptive``."""
    return "interactor_non_adaptive" in row or "interactor_adaptive" in row


FORMAT = Format("interactbench", read_interactbench, is_interactbench, id_field="problem_id")
