"""What the format readers share: the :class:`Format` record of the registry, field readers that name the bad field,
limits written as datasets write them, the fields of stdin/stdout and function tasks, and stdout judges as rows and
the config name them."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import TaskFormatError

#: Judge names a row's ``compare`` or ``sandbox_compare`` may give (see
#: :func:`trl_sandbox.harness.compare.same_output`).
JUDGE_NAMES = ("exact", "lines", "tokens", "float", "decimal", "apps", "taco", "codeforces", "ioi", "kattis")


@dataclass(frozen=True)
class Format:
    """One row format of the registry (:data:`trl_sandbox.formats.FORMATS`).

    Attributes:
        name: The format's name (``task_format=``, a row's ``task_format``): ``apps``, ``humaneval``...
        read: The reader: a row exactly as its dataset publishes it -> the fields of its
            :class:`~trl_sandbox.tasks.Task` (a dict keyed by the Task's attribute names: ``format``, the test kind
            (``humaneval`` | ``mbpp`` | ``call`` | ``stdio`` | ``function`` | ``pytest``), ``tests``, and any of
            ``prompt``, ``func_name``, ``setup``, ``prelude``, ``outputs``, ``reference``, ``reference_code``,
            ``entry_points``, ``header``, ``rule``, ``default_compare``, ``time_limit_s``, ``time_limit_factor``,
            ``test_time_s``, ``memory_limit_bytes``, ``files``, ``files_only``). Raises
            :class:`~trl_sandbox.errors.TaskFormatError` naming what is malformed.
        detect: Whether a row is of this format, from its fields (None: only when named).
        id_field: The field the dataset publishes its ids in (``problem_id``...), if any.
        dataset: A public dataset's format (True), or one of trl-sandbox's own (False).
    """

    name: str
    read: Callable[[Mapping[str, Any]], dict[str, Any]]
    detect: Callable[[Mapping[str, Any]], bool] | None = None
    id_field: str | None = None
    dataset: bool = True


def plain_path(name: str) -> bool:
    """Whether ``name`` is a plain relative path (``graders/nile.h``): no absolute path, no empty, ``.`` or ``..``
    part, no hidden file. Task files written beside a program must be (the harness checks again)."""
    return bool(name) and all(part and not part.startswith(".") for part in name.split("/"))


def json_field(row: Mapping[str, Any], name: str) -> Any:
    """A field published as JSON text (or already decoded).

    Raises:
        TaskFormatError: the text is not JSON.
    """
    value = row.get(name)
    if isinstance(value, (str, bytes)):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise TaskFormatError(f"task field {name!r} is not valid JSON: {exc}") from None
    return value


def text_of(value: Any, what: str) -> str:
    """A test's input or output text: a string, or a list of lines (APPS/TACO publish some so).

    Raises:
        TaskFormatError: neither.
    """
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)  # APPS/TACO sometimes publish an input or output as a list of lines
    if not isinstance(value, str):
        raise TaskFormatError(f"{what} must be a string, got {type(value).__name__}")
    return value


def str_list(row: Mapping[str, Any], name: str, *, required: bool = True) -> tuple[str, ...]:
    """Field ``name``, a list of strings (``()`` when absent and not ``required``).

    Raises:
        TaskFormatError: it is not a list of strings.
    """
    value = row.get(name)
    if value is None and not required:
        return ()
    if isinstance(value, str) or not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        raise TaskFormatError(f"task field {name!r} must be a list of strings, got {type(value).__name__}")
    return tuple(value)


def str_field(row: Mapping[str, Any], name: str, *, required: bool = True) -> str:
    """Field ``name``, a string, non-empty when ``required`` (``""`` when absent and not required).

    Raises:
        TaskFormatError: it is not.
    """
    value = row.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise TaskFormatError(f"task field {name!r} must be a non-empty string, got {value!r:.80}")
    return value


def identifier(row: Mapping[str, Any], name: str) -> str:
    """Field ``name``, a Python identifier.

    Raises:
        TaskFormatError: it is not.
    """
    value = row.get(name)
    if not isinstance(value, str) or not value.isidentifier():
        raise TaskFormatError(f"task field {name!r} must be a Python identifier, got {value!r:.80}")
    return value


def limit_seconds(value: Any) -> float | None:
    """A time limit: seconds as a number, ``{seconds, nanos}`` (code_contests), or text such as ``"2 seconds"``
    (TACO)."""
    if value is None or value == "":
        return None
    if isinstance(value, Mapping):
        total = float(value.get("seconds") or 0) + float(value.get("nanos") or 0) / 1e9
        return total or None
    if isinstance(value, (int, float)):
        return float(value) if value > 0 else None
    if isinstance(value, str):
        match = re.match(r"\s*([\d.]+)\s*(ms|milliseconds?|s|sec|seconds?)?", value)
        if match:
            amount = float(match.group(1))
            unit = match.group(2) or "s"
            return (amount / 1000 if unit.startswith("m") else amount) or None
    raise TaskFormatError(f"cannot read a time limit from {value!r:.80}")


def limit_bytes(value: Any) -> int | None:
    """A memory limit in megabytes (open-r1's ``memory_limit``, TACO's ``"256 megabytes"``), as bytes."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)):
        return int(value * (1 << 20)) if value > 0 else None
    if isinstance(value, str):
        match = re.match(r"\s*([\d.]+)", value)
        if match:
            return int(float(match.group(1)) * (1 << 20)) or None
    raise TaskFormatError(f"cannot read a memory limit from {value!r:.80}")


def stdio_fields(inputs: Sequence[Any], outputs: Sequence[Any], judge: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """The fields of a stdin/stdout task: one test per input text, its expected output, the dataset's stdout ``judge``
    (``default_compare``) and ``extra`` fields (``header``, ``time_limit_s``, ``time_limit_factor``, ``test_time_s``,
    ``memory_limit_bytes``, ``files``, ``files_only``).

    Raises:
        TaskFormatError: as many inputs as outputs are needed, each a string (or a list of lines).
    """
    if len(inputs) != len(outputs):
        raise TaskFormatError(f"task has {len(inputs)} test inputs but {len(outputs)} outputs")
    if "files" in extra:
        extra["files"] = tuple(extra["files"] or ())
    return {
        "format": "stdio",
        "tests": tuple(text_of(v, "a test input") for v in inputs),
        "outputs": tuple(text_of(v, "a test output") for v in outputs),
        "default_compare": judge,
        **extra,
    }


def function_fields(fn_name: Any, args: Sequence[Any], outputs: Sequence[Any], rule: str,
                    **extra: Any) -> dict[str, Any]:
    """The fields of a function task: calls of ``fn_name`` (a function, or a method of ``class Solution``) with each
    test's argument list, compared with the expected value by ``rule`` (``apps`` | ``lcb``, see
    :func:`trl_sandbox.harness.compare.same_call_output`); arguments and values as JSON.

    Raises:
        TaskFormatError: the name is not an identifier, an input is not an argument list, or the counts differ.
    """
    if not isinstance(fn_name, str) or not fn_name.isidentifier():
        raise TaskFormatError(f"the function name must be a Python identifier, got {fn_name!r:.80}")
    if len(args) != len(outputs):
        raise TaskFormatError(f"task has {len(args)} test inputs but {len(outputs)} outputs")
    for a in args:
        if not isinstance(a, list):
            raise TaskFormatError(f"a call's input must be its argument list, got {a!r:.80}")
    return {
        "format": "function",
        "func_name": fn_name,
        "tests": tuple(json.dumps(a) for a in args),
        "outputs": tuple(json.dumps(o) for o in outputs),
        "rule": rule,
        "entry_points": (fn_name, "Solution"),
        **extra,
    }


def interactive(row: Mapping[str, Any]) -> bool:
    """Whether the row is an interactive problem (an interactor talks with the program), by its ``interactive`` flag
    or open-r1 Codeforces' ``interaction_format``."""
    return bool(row.get("interactive")) or bool(str(row.get("interaction_format") or "").strip())


#: The languages a checker or an interactor may be written in, by the names rows use.
JUDGE_PROGRAM_LANGUAGES = {"python": "python", "python3": "python", "py": "python", "cpp": "cpp", "c++": "cpp",
                           "cc": "cpp", "cxx": "cpp", "c": "c"}
#: How a checker is called and what its exit status means (see :mod:`trl_sandbox.harness.checkers`): testlib's
#: ``checker input output answer`` (0 accepts, 7 points, 3 the checker failed), Kattis' output validators
#: (``validator input judge_answer feedback_dir`` with the output on stdin; 42 accepts, 43 rejects) and open-r1's
#: ``checker.py input correct_output solution_output``, and CMS's (IOI's) ``checker input correct_output
#: user_output`` printing the score in [0, 1] on stdout.
CHECKER_CONVENTIONS = ("testlib", "kattis", "open-r1", "cms")
#: How an interactor is called: testlib's ``interactor input tout answer`` and Kattis' interactive output validators.
INTERACTOR_CONVENTIONS = ("testlib", "kattis")


def _judge_program(value: Mapping[str, Any], key: str, conventions: tuple[str, ...], what: str) -> dict[str, Any]:
    """A checker's or an interactor's spec: ``{key: SOURCE, "language", "convention", "files", "flags",
    "points_max", "answer_is_output"}`` (``files``: extra files its source includes, name to text; ``flags``: extra
    arguments, Kattis' ``validator_flags``; ``points_max``: the score that is full marks, for checkers that give
    points; ``answer_is_output: false``: the answer file is not an output the checker would accept, e.g.
    Frontier-CS' best values, so the self-test only checks that an empty output is not paid)."""
    source = value[key]
    if not isinstance(source, str) or not source.strip():
        raise TaskFormatError(f"{what}: {key!r} must be the {what}'s source code")
    language = JUDGE_PROGRAM_LANGUAGES.get(str(value.get("language") or "python").lower())
    if language is None:
        raise TaskFormatError(f"{what}: language {value.get('language')!r} is not supported; use one of "
                              f"{', '.join(sorted(set(JUDGE_PROGRAM_LANGUAGES.values())))}")
    convention = value.get("convention") or "testlib"
    if convention not in conventions:
        raise TaskFormatError(f"{what}: unknown convention {convention!r}; use {' or '.join(conventions)}")
    files = value.get("files") or {}
    if not isinstance(files, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) and k and "/" not in k and not k.startswith(".")
            for k, v in files.items()):
        raise TaskFormatError(f"{what}: 'files' must map plain file names to their text")
    flags = value.get("flags") or []
    if isinstance(flags, str):
        flags = flags.split()
    if not isinstance(flags, (list, tuple)) or not all(isinstance(f, str) for f in flags):
        raise TaskFormatError(f"{what}: 'flags' must be a list of strings")
    spec: dict[str, Any] = {key: source, "language": language, "convention": convention}
    if files:
        spec["files"] = dict(files)
    if flags:
        spec["flags"] = list(flags)
    if value.get("points_max") is not None:
        try:
            points_max = float(value["points_max"])
        except (TypeError, ValueError):
            points_max = 0.0
        if not points_max > 0:
            raise TaskFormatError(f"{what}: points_max must be a number > 0, got {value['points_max']!r}")
        spec["points_max"] = points_max
    if value.get("answer_is_output") is False:  # the answer file is not an output (an optimum's value): see
        spec["answer_is_output"] = False        # trl_sandbox.judge_programs.selftest_problem
    return spec


def _object_of(value: Any, what: str, plain: Callable[[str], dict[str, Any]]) -> Any:
    """A field given as JSON text of an object (``"{...}"``) parsed, other text made an object by ``plain``, anything
    else as it is. Raises TaskFormatError for text that starts as JSON and is not."""
    if not isinstance(value, str):
        return value
    if value.strip().startswith("{"):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise TaskFormatError(f"{what}: not valid JSON: {exc}") from None
    return plain(value)


def parse_interactor(value: Any) -> dict[str, Any] | None:
    """An interactor as a row's ``interactor`` field gives it: ``{"interactor": SOURCE, "language": "cpp" | "c" |
    "python", "convention": "testlib" | "kattis", "files": {...}, "flags": [...]}``, JSON text of one, or the source
    alone (a testlib interactor in C++). None when absent.

    Raises:
        TaskFormatError: not source code, an unknown language or convention.
    """
    if value is None or value == "":
        return None
    value = _object_of(value, "interactor", lambda text: {"interactor": text, "language": "cpp"})
    if not isinstance(value, Mapping) or "interactor" not in value:
        raise TaskFormatError("interactor must be its source code or an object with an 'interactor' field")
    return _judge_program(value, "interactor", INTERACTOR_CONVENTIONS, "interactor")


def parse_compare(value: Any) -> dict[str, Any] | None:
    """A judge as a row's ``compare`` field or ``sandbox_compare`` gives it: a judge name (``"tokens"``), a dict
    ``{"mode": "float", "tolerance": 1e-6, "absolute_only": False, "ignore_case": False, "integers": "tolerance"}``
    (``"integers": "exact"``: an expected integer only by that integer), a checker ``{"checker": SOURCE,
    "language": "python" | "cpp" | "c", "convention": "testlib" | "kattis" | "open-r1" | "cms", "files": {name: text},
    "flags": [...], "points_max": float}``, or JSON text of one of those.

    Raises:
        TaskFormatError: an unknown judge name, a bad tolerance, or a checker in an unknown language or convention.
    """
    if value is None or value == "":
        return None
    value = _object_of(value, "compare", lambda text: {"mode": text.strip()})
    if not isinstance(value, Mapping):
        raise TaskFormatError(f"compare must be a judge name or an object, got {type(value).__name__}")
    if "checker" in value:
        return _judge_program(value, "checker", CHECKER_CONVENTIONS, "checker")
    mode = value.get("mode", "lines")
    if mode not in JUDGE_NAMES:
        raise TaskFormatError(f"compare: unknown judge {mode!r}; use one of {', '.join(JUDGE_NAMES)} or a checker")
    judge: dict[str, Any] = {"mode": mode}
    if mode == "kattis":  # Kattis' default validator: its flags are its settings
        flags = value.get("flags") or []
        flags = flags.split() if isinstance(flags, str) else flags
        if not isinstance(flags, (list, tuple)) or not all(isinstance(f, str) for f in flags):
            raise TaskFormatError("compare: the kattis judge's flags must be a list of strings")
        from ..harness.compare import kattis_flags

        try:
            kattis_flags(list(flags))
        except ValueError as exc:
            raise TaskFormatError(f"compare: Kattis default validator flags {' '.join(flags)!r}: {exc}") from None
        return {"mode": "kattis", "flags": list(flags)}
    if "tolerance" in value:
        try:
            tolerance = float(value["tolerance"])
        except (TypeError, ValueError):
            tolerance = -1.0
        if not tolerance >= 0:
            raise TaskFormatError(f"compare: tolerance must be a number >= 0, got {value['tolerance']!r}")
        judge["tolerance"] = tolerance
    for flag in ("absolute_only", "ignore_case"):
        if value.get(flag):
            judge[flag] = True
    integers = value.get("integers")
    if integers not in (None, "tolerance", "exact"):
        raise TaskFormatError(f"compare: integers must be 'tolerance' or 'exact', got {integers!r}")
    if integers == "exact":
        judge["integers"] = "exact"
    return judge
