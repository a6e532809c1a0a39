"""AetherCode (``m-a-p/AetherCode``): contest problems (IOI, ICPC, NOI, USACO...) of 2024 and 2025 with their tests
and, where the answer is not unique, a testlib checker.

Schema (the dataset card and its viewer, https://huggingface.co/datasets/m-a-p/AetherCode, configs ``v1_2024`` and
``v1_2025``): ``id`` (an integer), ``description`` (the statement, limits included), ``time_limit`` (an integer,
milliseconds: 40 to 25000), ``memory_limit`` (an integer, megabytes: 128 to 2048), ``checker`` (testlib C++ source,
``""`` where the output is compared as it is), ``test_cases`` (a list of ``{input, output}``), ``year``, ``date``,
``difficulty``, ``contest_category``, ``contest_name``.

Read: every test of ``test_cases``, the checker in testlib's convention (``checker input output answer``: exit
status 0 accepts), ``time_limit`` (milliseconds) and ``memory_limit`` (megabytes). A row with an empty ``checker``
is judged by tokens (testlib's ``wcmp``, what contest judges use when no checker is given).

Uncertain: the card publishes no runner, so no multiplier of the time limit is known: the default one applies
(:data:`~trl_sandbox.tasks.DEFAULT_TIME_LIMIT_FACTOR`, ``sandbox_time_limit_factor`` to change it). The card says
"exact match" for problems without a checker; tokens are the reading here (trailing spaces and line ends differ
between the published answers and correct programs' output).

Reference solutions: none published.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._common import Format, limit_bytes, stdio_fields
from ._contest import checker_spec, io_tests, non_empty_text, positive_number

#: The judge of rows without a checker (testlib's ``wcmp``: tokens).
JUDGE: dict[str, Any] = {"mode": "tokens"}


def read_aethercode(row: Mapping[str, Any]) -> dict[str, Any]:
    """An AetherCode row: ``test_cases`` (``[{input, output}]``), ``checker`` (testlib C++ source or ``""``),
    ``time_limit`` (milliseconds), ``memory_limit`` (megabytes).

    Raises:
        TaskFormatError: ``test_cases`` is not a list of ``{input, output}``, or a limit is not a number.
    """
    inputs, outputs = io_tests(row, "test_cases")
    ms = positive_number(row.get("time_limit"), "time_limit")
    fields = stdio_fields(inputs, outputs, JUDGE, time_limit_s=None if ms is None else ms / 1000.0,
                          memory_limit_bytes=limit_bytes(positive_number(row.get("memory_limit"), "memory_limit")))
    checker = non_empty_text(row.get("checker"))
    if checker is not None:
        fields["default_compare"] = checker_spec(checker, language="cpp", convention="testlib")
    return fields


def is_aethercode(row: Mapping[str, Any]) -> bool:
    """An AetherCode row: ``test_cases`` with its contest columns (``contest_category``, ``contest_name``)."""
    return "test_cases" in row and ("contest_category" in row or "contest_name" in row)


FORMAT = Format("aethercode", read_aethercode, is_aethercode, id_field="id")
