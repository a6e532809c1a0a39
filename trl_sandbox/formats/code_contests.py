"""code_contests (``deepmind/code_contests``): every test of ``public_tests``, ``private_tests`` and
``generated_tests``; ``time_limit`` (``{seconds, nanos}``) and ``memory_limit_bytes``; ``input_file`` and
``output_file`` for problems that read and write files.

Official comparison: ``OutputsMatch`` of ``google-deepmind/code_contests`` (``execution/tester_sandboxer.cc``):
tokens split on ``" \\n\\t\\r\\v"`` (``SplitAndLowercase``, ``absl::ByAnyChar``: not on ``\\f``, so ``1\\f2`` is
one token) and lowercased as ``absl::AsciiStrToLower`` does (ASCII letters only), then compared by ``ValuesMatch``:
text unless both tokens read as numbers (``absl::SimpleAtoi``/``SimpleAtod``, which strip the ASCII whitespace at a
token's ends, so ``5\\f`` is ``5``), two numbers within 1e-5 absolutely. ``SimpleAtod`` (absl 20211102.0, the
tester's pinned version: ``absl::from_chars`` with ``chars_format::general``) reads no hexadecimal: ``0x10`` is
text, not 16, as here. Departures (see ``docs/datasets.md``): an expected integer is matched only by that integer
(``ValuesMatch`` reads every number, integers too, as a double: it pays ``500000003.000001`` for ``500000003``, and
``10**18 + 1`` for ``10**18``); ``3.0`` still matches ``3``; ``nan`` and ``inf`` match themselves as text, where
``ValuesMatch`` fails them once another token of the output differs from its expected text (``|inf - inf|`` is NaN).

Time: the tester gives every test ``TestOptions.max_execution_duration`` (``execution/tester_sandboxer.h``: 10 s by
default, an ``RLIMIT_CPU``), whatever the statement's ``time_limit``. Departure (stricter, on purpose): a test gets
the statement's limit × ``sandbox_time_limit_factor`` (unset:
:data:`~trl_sandbox.tasks.DEFAULT_TIME_LIMIT_FACTOR`, 3), at most the tester's :data:`TESTER_TIME_LIMIT_S`: the
tester pays a program many times slower than the problem allows.

Crashes: the tester judges a test by its output alone (``Test``: ``test_result->passed = matches``, whatever
``program_status`` says), so a program that prints the right answer and then raises, exits with a non-zero status or
(compiled) is killed by a signal passes that test, here too (``nonzero_exit: "judged"``). Departures: a test past its
time or memory limit fails whatever it printed, and a Python program killed by a signal (a segfault) fails the test
(its output went with the worker process it ran in).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..errors import TaskFormatError
from ._common import Format, json_field, limit_seconds, stdio_fields

#: The tester's seconds per test (``TestOptions.max_execution_duration = absl::Seconds(10)``,
#: ``execution/tester_sandboxer.h``): the most a test gets here.
TESTER_TIME_LIMIT_S = 10.0
#: The stdout judge of code_contests' tester (``OutputsMatch``: ``SplitAndLowercase``'s separators, ASCII
#: lowercasing, ``ValuesMatch``'s 1e-5); ``nonzero_exit: "judged"``: the output alone decides a test, however the
#: run ended (``Test`` sets ``passed`` from ``compare_outputs`` whatever the program's status).
JUDGE: dict[str, Any] = {"mode": "float", "tolerance": 1e-5, "absolute_only": True, "ignore_case": True,
                         "separators": " \n\t\r\x0b", "nonzero_exit": "judged"}


def read_code_contests(row: Mapping[str, Any]) -> dict[str, Any]:
    """``deepmind/code_contests``: every test of ``public_tests``, ``private_tests`` and ``generated_tests``;
    ``time_limit`` (``{seconds, nanos}``) and ``memory_limit_bytes``."""
    inputs: list[Any] = []
    outputs: list[Any] = []
    for name in ("public_tests", "private_tests", "generated_tests"):
        tests = json_field(row, name)
        if tests is None:
            continue
        if not isinstance(tests, Mapping) or not isinstance(tests.get("input"), list) or not isinstance(
                tests.get("output"), list):
            raise TaskFormatError(f"task field {name!r} must be {{'input': [...], 'output': [...]}}")
        if len(tests["input"]) != len(tests["output"]):
            raise TaskFormatError(f"task field {name!r} has {len(tests['input'])} inputs but "
                                  f"{len(tests['output'])} outputs")
        inputs += tests["input"]
        outputs += tests["output"]
    memory = row.get("memory_limit_bytes")
    files = None
    if row.get("input_file") or row.get("output_file"):  # the problem reads and writes files, not stdin/stdout
        files = (_file_name(row.get("input_file") or "input.txt"), _file_name(row.get("output_file") or "output.txt"))
    return stdio_fields(inputs, outputs, JUDGE, time_limit_s=limit_seconds(row.get("time_limit")),
                        test_time_s=TESTER_TIME_LIMIT_S,
                  memory_limit_bytes=int(memory) if isinstance(memory, (int, float)) and memory > 0 else None,
                  files=files)


def _file_name(value: Any) -> str:
    """A problem's input or output file name: a plain name in the working directory."""
    if not isinstance(value, str) or not re.fullmatch(r"[\w.-]+", value) or value in (".", ".."):
        raise TaskFormatError(f"a problem's input or output file must be a plain file name, got {value!r:.80}")
    return value


FORMAT = Format("code_contests", read_code_contests,
                lambda r: any(isinstance(r.get(k), (Mapping, str)) for k in ("public_tests", "private_tests",
                                                                            "generated_tests")),
                id_field="name")
