"""Code-Contests-Plus (``ByteDance-Seed/Code-Contests-Plus``, CodeContests+): problems of deepmind/code_contests
with new tests and a testlib checker per problem.

Schema (the dataset card, https://huggingface.co/datasets/ByteDance-Seed/Code-Contests-Plus, and the reader of
``cai-jianfeng/CodeContests-O``, a dataset built from it: ``src/codecontests_o/data/codecontests.py`` at commit
e5d8334e28fe314fcbb73f9d4e7554049d3ac587, ``_transform_raw_data``): ``id`` (``"1000A"``...), ``title``,
``description``, ``time_limit``, ``memory_limit``, ``checker`` (a testlib checker in C++), ``validator``,
``generator``, ``generator_cmd``, ``correct_submissions`` and ``incorrect_submissions`` (lists of ``{code,
language}``, ``language`` one of ``cpp``, ``py2``, ``py3``, ``java``), and, in the ``1x`` to ``5x`` configs only,
``test_cases`` (a list of ``{input, output}``; the default config publishes the generators without their tests).

Read: every test of ``test_cases`` (stdin, and the expected output as testlib's answer file), the checker in
testlib's convention (``checker input output answer``; exit status 0 accepts), ``time_limit`` in milliseconds (or
code_contests' ``{seconds, nanos}``) and ``memory_limit`` in megabytes. A row without ``checker`` is judged by
tokens, as testlib's ``wcmp``.

Uncertain: no official runner of the dataset is public (the card points to SandboxFusion, whose judging of these
rows is not published), so no multiplier of the time limit is known: the default one applies
(:data:`~trl_sandbox.tasks.DEFAULT_TIME_LIMIT_FACTOR`, ``sandbox_time_limit_factor`` to change it). The units of
``time_limit`` and ``memory_limit`` are read from the dataset card (milliseconds, megabytes).

Reference solutions: ``correct_submissions`` (``{code, language}``) and ``incorrect_submissions``; the task does not
carry them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._common import Format, limit_bytes, limit_seconds, stdio_fields
from ._contest import checker_spec, io_tests, non_empty_text, positive_number

#: The judge of rows without a checker: tokens, as testlib's ``wcmp``.
JUDGE: dict[str, Any] = {"mode": "tokens"}


def read_ccplus(row: Mapping[str, Any]) -> dict[str, Any]:
    """A Code-Contests-Plus row: ``test_cases`` (``[{input, output}]``), ``checker`` (testlib C++ source),
    ``time_limit`` (milliseconds, or ``{seconds, nanos}``), ``memory_limit`` (megabytes).

    Raises:
        TaskFormatError: ``test_cases`` is not a list of ``{input, output}`` (the default config has none: load a
            ``1x`` to ``5x`` config), a limit is not a number, or the checker is empty.
    """
    inputs, outputs = io_tests(row, "test_cases")
    time_limit = row.get("time_limit")
    seconds = (limit_seconds(time_limit) if isinstance(time_limit, Mapping)
               else _ms(positive_number(time_limit, "time_limit")))
    fields = stdio_fields(inputs, outputs, JUDGE, time_limit_s=seconds,
                          memory_limit_bytes=limit_bytes(positive_number(row.get("memory_limit"), "memory_limit")))
    checker = non_empty_text(row.get("checker"))
    if checker is not None:
        fields["default_compare"] = checker_spec(checker, language="cpp", convention="testlib")
    return fields


def _ms(value: float | None) -> float | None:
    """Milliseconds as seconds."""
    return None if value is None else value / 1000.0


def is_ccplus(row: Mapping[str, Any]) -> bool:
    """A Code-Contests-Plus row: ``test_cases`` with the columns only it publishes (``correct_submissions``,
    ``incorrect_submissions``, ``generator_cmd``)."""
    return "test_cases" in row and any(k in row for k in ("correct_submissions", "incorrect_submissions",
                                                           "generator_cmd"))


FORMAT = Format("ccplus", read_ccplus, is_ccplus, id_field="id")
