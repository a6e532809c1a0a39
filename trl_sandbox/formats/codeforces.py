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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import TaskFormatError
from ._common import Format, json_field, limit_bytes, limit_seconds, stdio_fields

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
    fields = stdio_fields([runner_input(t.get("input")) for t in tests], [t.get("output") for t in tests], JUDGE,
                          time_limit_s=limit_seconds(row.get("time_limit")), time_limit_factor=TIME_LIMIT_FACTOR,
                          memory_limit_bytes=limit_bytes(row.get("memory_limit")),
                          files=("input.txt", "output.txt") if file_mode else None, files_only=file_mode)
    checker = row.get("generated_checker")
    if isinstance(checker, str) and checker.strip():
        fields["default_compare"] = {"checker": checker, "language": "python", "convention": "open-r1"}
    return fields


FORMAT = Format("codeforces", read_codeforces, lambda r: r.get("official_tests") is not None, id_field="id")
