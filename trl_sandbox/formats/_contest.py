"""What the readers of contest datasets with C/C++ judge programs share (Code-Contests-Plus, AetherCode,
InteractBench, Kattis, Polygon and Frontier-CS problem packages): a judge program's language told from its file
name, checker and interactor specs built through :func:`~trl_sandbox.formats._common.parse_compare` and
:func:`~trl_sandbox.formats._common.parse_interactor` (so that they are validated), and test lists of
``{input, output}`` records."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import TaskFormatError
from ._common import json_field, parse_compare, parse_interactor

#: A source file's language by its extension, for judge programs and reference solutions.
SOURCE_LANGUAGES = {".c": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp", ".py": "python",
                    ".py3": "python", ".java": "java", ".kt": "kotlin", ".rs": "rust", ".go": "go", ".js": "javascript"}
#: The languages a judge program (checker, interactor) may be compiled from here.
JUDGE_SOURCE_LANGUAGES = ("c", "cpp", "python")


def language_of(file_name: str) -> str | None:
    """The language of a source file by its extension (``chk.cc`` -> ``cpp``), else None."""
    dot = file_name.rfind(".")
    return SOURCE_LANGUAGES.get(file_name[dot:].lower()) if dot >= 0 else None


def _spec(key: str, source: str, language: str, convention: str, files: Mapping[str, str] | None,
          flags: Any) -> dict[str, Any]:
    """The fields a checker and an interactor share, before they are validated."""
    spec: dict[str, Any] = {key: source, "language": language, "convention": convention}
    if files:
        spec["files"] = dict(files)
    if flags:
        spec["flags"] = flags
    return spec


def checker_spec(source: str, *, language: str = "cpp", convention: str = "testlib",
                 files: Mapping[str, str] | None = None, flags: Any = None,
                 points_max: float | None = None, answer_is_output: bool = True) -> dict[str, Any]:
    """A checker spec (``default_compare``), validated by :func:`~trl_sandbox.formats._common.parse_compare`.

    Raises:
        TaskFormatError: empty source, an unsupported language or convention, bad extra file names.
    """
    spec = _spec("checker", source, language, convention, files, flags)
    if points_max is not None:
        spec["points_max"] = points_max
    if not answer_is_output:
        spec["answer_is_output"] = False
    return parse_compare(spec)  # type: ignore[return-value]


def interactor_spec(source: str, *, language: str = "cpp", convention: str = "testlib",
                    files: Mapping[str, str] | None = None, flags: Any = None) -> dict[str, Any]:
    """An interactor spec (the task's ``interactor``), validated by
    :func:`~trl_sandbox.formats._common.parse_interactor`.

    Raises:
        TaskFormatError: empty source, an unsupported language or convention, bad extra file names.
    """
    return parse_interactor(_spec("interactor", source, language, convention, files, flags))  # type: ignore


def io_tests(row: Mapping[str, Any], name: str) -> tuple[list[Any], list[Any]]:
    """Field ``name``: a list of ``{input, output}`` records (or JSON text of one), as its inputs and outputs.

    Raises:
        TaskFormatError: not such a list.
    """
    tests = json_field(row, name)
    if not isinstance(tests, list) or not all(isinstance(t, Mapping) and "input" in t and "output" in t
                                              for t in tests):
        raise TaskFormatError(f"task field {name!r} must be a list of {{input, output}}")
    return [t["input"] for t in tests], [t["output"] for t in tests]


def non_empty_text(value: Any) -> str | None:
    """``value`` when it is a string with something in it, else None (datasets publish ``""`` for "none")."""
    return value if isinstance(value, str) and value.strip() else None


def positive_number(value: Any, what: str) -> float | None:
    """A positive number (a limit), None when absent or ``0``.

    Raises:
        TaskFormatError: a value that is not a number.
    """
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise TaskFormatError(f"task field {what!r} must be a number, got {value!r:.80}") from None
    return float(value) if value > 0 else None
