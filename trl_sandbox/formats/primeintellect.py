"""PrimeIntellect (``PrimeIntellect/verifiable-coding-problems``): ``verification_info`` JSON with ``test_cases`` of
type ``stdin_stdout`` (``input``, ``output`` texts) or ``function_call`` (``fn_name``, ``input`` argument list,
``output``).

PrimeIntellect publishes no harness of its own; its rows are scored as DeepCoder's trainer scores them
(``agentica-project/rllm`` ``rllm/rewards/code_reward.py``): with LiveCodeBench's rules (prelude, ``grade_stdio``).
The row's language (``verification_info.language``) is read by :func:`trl_sandbox.languages.row_language`: other
languages than Python run the ``stdin_stdout`` tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import TaskFormatError
from ._common import Format, function_fields, json_field, stdio_fields
from .livecodebench import LCB_PRELUDE

#: The stdout judge (LiveCodeBench's ``grade_stdio``).
JUDGE: dict[str, Any] = {"mode": "decimal"}


def read_primeintellect(row: Mapping[str, Any]) -> dict[str, Any]:
    """PrimeIntellect ``verifiable-coding-problems``: ``verification_info`` JSON with ``test_cases`` of type
    ``stdin_stdout`` (``input``, ``output`` texts) or ``function_call`` (``fn_name``, ``input`` argument list,
    ``output``)."""
    info = json_field(row, "verification_info")
    if not isinstance(info, Mapping) or not isinstance(info.get("test_cases"), list):
        raise TaskFormatError("task field 'verification_info' must be JSON with a 'test_cases' list")
    cases = info["test_cases"]
    if not cases:
        raise TaskFormatError("task has no tests")
    types = {str(c.get("type")) for c in cases if isinstance(c, Mapping)}
    if len(types) != 1 or not all(isinstance(c, Mapping) for c in cases):
        raise TaskFormatError(f"task mixes test types {sorted(types)}")
    if types == {"function_call"}:
        outputs = [c.get("output") for c in cases]
        # An output published as a one-element list is the value (TACO's convention, which PrimeIntellect's rows
        # follow); the APPS rule accepts either.
        return function_fields(cases[0].get("fn_name"), [c.get("input") for c in cases], outputs, "apps",
                         header=LCB_PRELUDE)
    if types == {"stdin_stdout"}:
        return stdio_fields([c.get("input") for c in cases], [c.get("output") for c in cases], JUDGE,
                      header=LCB_PRELUDE)
    raise TaskFormatError(f"unknown test type {min(types)!r} (expected stdin_stdout or function_call)")


FORMAT = Format("primeintellect", read_primeintellect, lambda r: r.get("verification_info") is not None,
                id_field="problem_id")
