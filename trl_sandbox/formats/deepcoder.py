"""DeepCoder-Preview (``agentica-org/DeepCoder-Preview-Dataset``): ``tests`` JSON, a list of LiveCodeBench tests
(subsets ``lcbv5``, ``primeintellect``, ``codeforces``) or TACO's ``{inputs, outputs, fn_name}`` (subset ``taco``).

Official harness: DeepCoder's trainer, ``agentica-project/rllm`` ``rllm/rewards/code_reward.py`` (``RewardCodeFn``):
each subset with its own rules (``taco``: APPS's; the others: LiveCodeBench's).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..errors import TaskFormatError
from ._common import Format, json_field
from .apps import read_apps
from .livecodebench import lcb_like

#: The stdout judge of the LiveCodeBench-like subsets.
JUDGE: dict[str, Any] = {"mode": "decimal"}


def read_deepcoder(row: Mapping[str, Any]) -> dict[str, Any]:
    """DeepCoder-Preview (``agentica-org/DeepCoder-Preview-Dataset``): ``tests`` JSON, a list of LiveCodeBench
    tests (subsets ``lcbv5``, ``primeintellect``, ``codeforces``) or TACO's ``{inputs, outputs, fn_name}``
    (subset ``taco``)."""
    tests = json_field(row, "tests")
    if isinstance(tests, Mapping):
        return read_apps({**row, "input_output": tests})
    if not isinstance(tests, list) or not all(isinstance(t, Mapping) for t in tests):
        raise TaskFormatError("task field 'tests' must be a JSON list of tests or {inputs, outputs}")
    fn_name = None
    for test in tests:
        metadata = test.get("metadata") or {}
        if isinstance(metadata, str):
            try:
                metadata = json.loads(metadata)
            except ValueError:
                metadata = {}
        if isinstance(metadata, Mapping) and metadata.get("func_name"):
            fn_name = metadata["func_name"]
    return lcb_like(tests, fn_name, JUDGE)


FORMAT = Format("deepcoder", read_deepcoder,
                lambda r: r.get("tests") is not None and r.get("func_name") is None and r.get("reference") is None,
                id_field="problem_id")
