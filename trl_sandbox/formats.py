"""Dataset row formats: the published schemas of the code-RL datasets, read into the fields of a task.

Each reader takes one row exactly as the dataset publishes it (``datasets.load_dataset(...)[i]``, or a line of its
JSONL/Parquet files) and returns the fields :class:`trl_sandbox.tasks.Task` is built from. The rules each dataset's
official harness applies are kept: its comparison of outputs (the judge, see :func:`trl_sandbox.harness.compare.same_output`),
its call convention, its import prelude and its limits.

================ ============================================ =================================================
format           fields it is recognised by                   tests, and the official harness followed
================ ============================================ =================================================
``apps``         ``input_output`` (JSON string: ``inputs``,   stdin/stdout, or calls of ``fn_name`` with each
(APPS, TACO)     ``outputs``, optional ``fn_name``),          input as the argument list; APPS's
                 ``problem_id``, ``starter_code``             ``eval/testing_util.py`` (hendrycks/apps; TACO's
                                                              harness is the same): stripped text, then numbers
                                                              within 1e-5 (``np.allclose``); a tuple result is a
                                                              list, an expected value wrapped in a list matches
``code_contests`` ``public_tests``, ``private_tests``,        stdin/stdout (or ``input_file``/``output_file``),
                 ``generated_tests`` (``{input, output}``),   all three test lists counted; ``OutputsMatch``
                 ``name``, ``time_limit``,                    of google-deepmind/code_contests
                 ``memory_limit_bytes``                       (``execution/tester_sandboxer.cc``): tokens, case
                                                              ignored, numbers within 1e-5 absolute
``livecodebench`` ``public_test_cases``,                      ``stdin``: LiveCodeBench's ``grade_stdio`` (lines,
                 ``private_test_cases`` (JSON, or             else ``Decimal`` tokens); ``functional``: one JSON
                 base64(zlib(pickle(JSON)))), ``metadata``    value per input line, JSON output, a method of
                 (``func_name``), ``question_id``             ``Solution()``; the prelude of
                                                              ``lcb_runner/evaluation/testing_util.py``
``kodcode``      ``test`` (a pytest file importing from       each test function is one test, run by pytest in
                 ``solution``), ``question_id``               the judge (KodCode-V1's ``pytest`` of the file)
``primeintellect`` ``verification_info`` (JSON: ``language``, ``stdin_stdout`` and ``function_call`` tests as
                 ``test_cases``), ``problem_id``              DeepCoder's trainer (rllm) scores them: with
                                                              LiveCodeBench's rules
``deepcoder``    ``tests`` (JSON: a list of LiveCodeBench     each subset with its own rules (``taco``: APPS;
                 tests, or TACO's ``inputs``/``outputs``)     ``lcbv5``, ``primeintellect``, ``codeforces``:
                                                              LiveCodeBench), as rllm's ``RewardCodeFn``
``rstar``        ``question_id``, ``inputs``, ``outputs``     stdin/stdout with LiveCodeBench's rule (rStar-Coder
                 (rStar-Coder ``synthetic_rl_testcase``)      evaluates on LiveCodeBench; its RL rows have no
                                                              harness of their own)
``codeforces``   ``official_tests``, ``generated_checker``,   stdin/stdout (or ``input_mode`` ``file``); with a
(open-r1)        ``time_limit``, ``memory_limit`` (MB),       checker, open-r1's ``cf_scoring.py`` convention
                 ``interaction_format``                       (``checker.py input correct_output
                                                              solution_output`` prints ``1``), else tokens
================ ============================================ =================================================

Every reader raises :class:`~trl_sandbox.errors.TaskFormatError` with the reason for a malformed row (a test list
that is not JSON, inputs without outputs, an interactive problem); the scorer turns it into an ``invalid_task``
result for that row alone.
"""

from __future__ import annotations

import base64
import io
import json
import pickle
import re
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .errors import TaskFormatError

__all__ = ["DATASET_FORMATS", "DEFAULT_JUDGES", "detect_format", "limit_bytes", "limit_seconds", "parse_compare",
           "read_row"]

#: The judge each format's official harness applies to stdout (see :func:`trl_sandbox.harness.compare.same_output`).
DEFAULT_JUDGES: dict[str, dict[str, Any]] = {
    "stdio": {"mode": "lines"},
    "apps": {"mode": "float", "tolerance": 1e-5},
    "code_contests": {"mode": "float", "tolerance": 1e-5, "absolute_only": True, "ignore_case": True},
    "livecodebench": {"mode": "decimal"},
    "primeintellect": {"mode": "decimal"},
    "deepcoder": {"mode": "decimal"},
    "rstar": {"mode": "decimal"},
    "codeforces": {"mode": "tokens"},
}
JUDGE_NAMES = ("exact", "lines", "tokens", "float", "decimal")

#: LiveCodeBench's import prelude (``import_string`` of ``lcb_runner/evaluation/testing_util.py``), which the
#: program runs after: its solutions may use ``defaultdict`` or ``List`` without importing them.
LCB_PRELUDE = "\n".join([
    *(f"from {m} import *" for m in ("string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math",
                                      "random", "statistics", "itertools", "functools", "operator", "io", "sys",
                                      "json", "builtins", "typing")),
    *(f"import {m}" for m in ("string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math",
                               "random", "statistics", "itertools", "functools", "operator", "io", "sys", "json")),
    "sys.setrecursionlimit(50000)",
]) + "\n"
#: APPS's prelude (``sol`` in hendrycks/apps ``eval/testing_util.py``; TACO's is the same). numpy is imported when
#: the sandbox has it.
APPS_PRELUDE = (
    "import sys\nimport time\nimport itertools\nfrom itertools import accumulate, product, permutations, "
    "combinations\nimport collections\nfrom collections import Counter, OrderedDict, deque, defaultdict, ChainMap\n"
    "from functools import lru_cache\nimport math\nfrom math import sqrt, sin, cos, tan, ceil, fabs, floor, gcd, "
    "exp, log, log2\nimport fractions\nfrom typing import List, Tuple\ntry:\n    import numpy as np\nexcept "
    "ImportError:\n    pass\nimport random\nimport heapq\nfrom heapq import *\n"
)


# -- helpers ---------------------------------------------------------------------------------------------------------


def _json_field(row: Mapping[str, Any], name: str) -> Any:
    value = row.get(name)
    if isinstance(value, (str, bytes)):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise TaskFormatError(f"task field {name!r} is not valid JSON: {exc}") from None
    return value


class _StringsOnly(pickle.Unpickler):
    """An unpickler that builds no object but builtin values: LiveCodeBench's compressed tests are a pickled JSON
    string; anything that names a class or function is refused (loading a pickle can otherwise run code)."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"refusing to load {module}.{name} from a task's tests")


def _lcb_tests(row: Mapping[str, Any], name: str) -> list[dict[str, Any]]:
    """A LiveCodeBench test list: JSON text, or base64(zlib(pickle(JSON text))) as the private tests are published."""
    value = row.get(name)
    if value is None or value == "":
        return []
    if isinstance(value, list):
        tests = value
    elif isinstance(value, str):
        try:
            tests = json.loads(value)
        except ValueError:
            try:
                raw = zlib.decompress(base64.b64decode(value))
                text = _StringsOnly(io.BytesIO(raw)).load()
                tests = json.loads(text) if isinstance(text, (str, bytes)) else text
            except Exception as exc:  # noqa: BLE001 - any failure is a malformed row
                raise TaskFormatError(f"task field {name!r} is neither JSON nor LiveCodeBench's compressed form: "
                                      f"{exc}") from None
    else:
        raise TaskFormatError(f"task field {name!r} must be a JSON string, got {type(value).__name__}")
    if not isinstance(tests, list) or not all(isinstance(t, Mapping) for t in tests):
        raise TaskFormatError(f"task field {name!r} must be a list of test objects")
    return tests


def _text(value: Any, what: str) -> str:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)  # APPS/TACO sometimes publish an input or output as a list of lines
    if not isinstance(value, str):
        raise TaskFormatError(f"{what} must be a string, got {type(value).__name__}")
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


def _stdio(inputs: Sequence[Any], outputs: Sequence[Any], judge: str, **extra: Any) -> dict[str, Any]:
    if len(inputs) != len(outputs):
        raise TaskFormatError(f"task has {len(inputs)} test inputs but {len(outputs)} outputs")
    return {
        "kind": "stdio",
        "inputs": tuple(_text(v, "a test input") for v in inputs),
        "outputs": tuple(_text(v, "a test output") for v in outputs),
        "default_compare": DEFAULT_JUDGES[judge],
        **extra,
    }


def _function(fn_name: Any, args: Sequence[Any], outputs: Sequence[Any], rule: str, **extra: Any) -> dict[str, Any]:
    if not isinstance(fn_name, str) or not fn_name.isidentifier():
        raise TaskFormatError(f"the function name must be a Python identifier, got {fn_name!r:.80}")
    if len(args) != len(outputs):
        raise TaskFormatError(f"task has {len(args)} test inputs but {len(outputs)} outputs")
    for a in args:
        if not isinstance(a, list):
            raise TaskFormatError(f"a call's input must be its argument list, got {a!r:.80}")
    return {
        "kind": "function",
        "func_name": fn_name,
        "inputs": tuple(json.dumps(a) for a in args),
        "outputs": tuple(json.dumps(o) for o in outputs),
        "rule": rule,
        **extra,
    }


def _lcb_arguments(text: Any) -> list[Any]:
    """LiveCodeBench's functional input: one JSON value per line, the arguments in order."""
    if not isinstance(text, str):
        raise TaskFormatError(f"a functional test input must be a string, got {type(text).__name__}")
    try:
        return [json.loads(line) for line in text.split("\n") if line.strip()]
    except ValueError as exc:
        raise TaskFormatError(f"a functional test input is not one JSON value per line: {exc}") from None


def _lcb_like(tests: list[Mapping[str, Any]], fn_name: Any, judge: str) -> dict[str, Any]:
    """Tests in LiveCodeBench's form (``input``, ``output``, ``testtype``), read with LiveCodeBench's rules."""
    if not tests:
        raise TaskFormatError("task has no tests")
    types = {str(t.get("testtype") or "stdin") for t in tests}
    if types == {"functional"}:
        if fn_name is None:
            raise TaskFormatError("functional tests need the function's name (metadata 'func_name')")
        try:
            outputs = [json.loads(t["output"]) if isinstance(t["output"], str) else t["output"] for t in tests]
        except (KeyError, ValueError) as exc:
            raise TaskFormatError(f"a functional test output is not JSON: {exc}") from None
        args = [_lcb_arguments(t.get("input")) for t in tests]
        return _function(fn_name, args, outputs, "lcb", header=LCB_PRELUDE)
    if types != {"stdin"}:
        raise TaskFormatError(f"task mixes test types {sorted(types)}")
    return _stdio([t.get("input") for t in tests], [t.get("output") for t in tests], judge, header=LCB_PRELUDE)


def _interactive(row: Mapping[str, Any]) -> bool:
    return bool(row.get("interactive")) or bool(str(row.get("interaction_format") or "").strip())


# -- readers ---------------------------------------------------------------------------------------------------------


def read_apps(row: Mapping[str, Any]) -> dict[str, Any]:
    """APPS (``codeparrot/apps``) and TACO (``BAAI/TACO``) rows: ``input_output`` JSON with ``inputs``,
    ``outputs`` and, for call-based problems, ``fn_name``. TACO's ``time_limit``/``memory_limit`` texts are used."""
    spec = _json_field(row, "input_output")
    if not isinstance(spec, Mapping):
        raise TaskFormatError("task field 'input_output' must be a JSON object with 'inputs' and 'outputs'")
    inputs, outputs = spec.get("inputs"), spec.get("outputs")
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise TaskFormatError("task field 'input_output' needs 'inputs' and 'outputs' lists")
    limits = {"time_limit_s": limit_seconds(row.get("time_limit")), "memory_limit_bytes": limit_bytes(row.get("memory_limit"))}
    if spec.get("fn_name"):
        return _function(spec["fn_name"], inputs, outputs, "apps", header=APPS_PRELUDE, **limits)
    return _stdio(inputs, outputs, "apps", header=APPS_PRELUDE, **limits)


def read_code_contests(row: Mapping[str, Any]) -> dict[str, Any]:
    """``deepmind/code_contests``: every test of ``public_tests``, ``private_tests`` and ``generated_tests``;
    ``time_limit`` (``{seconds, nanos}``) and ``memory_limit_bytes``."""
    inputs: list[Any] = []
    outputs: list[Any] = []
    for name in ("public_tests", "private_tests", "generated_tests"):
        tests = _json_field(row, name)
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
    return _stdio(inputs, outputs, "code_contests", time_limit_s=limit_seconds(row.get("time_limit")),
                  memory_limit_bytes=int(memory) if isinstance(memory, (int, float)) and memory > 0 else None,
                  files=files)


def _file_name(value: Any) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"[\w.-]+", value) or value in (".", ".."):
        raise TaskFormatError(f"a problem's input or output file must be a plain file name, got {value!r:.80}")
    return value


def read_livecodebench(row: Mapping[str, Any]) -> dict[str, Any]:
    """LiveCodeBench ``code_generation_lite``: public and private test cases; ``metadata`` JSON with
    ``func_name`` for functional problems (LeetCode's ``class Solution``)."""
    tests = _lcb_tests(row, "public_test_cases") + _lcb_tests(row, "private_test_cases")
    metadata = _json_field(row, "metadata") or {}
    fn_name = metadata.get("func_name") if isinstance(metadata, Mapping) else None
    return _lcb_like(tests, fn_name, "livecodebench")


def read_kodcode(row: Mapping[str, Any]) -> dict[str, Any]:
    """KodCode-V1: ``test`` is a pytest file that imports the solution from the module ``solution``."""
    test = row.get("test")
    if not isinstance(test, str) or not test.strip():
        raise TaskFormatError("task field 'test' must be a pytest file (a non-empty string)")
    return {"kind": "pytest", "test": test}


def read_primeintellect(row: Mapping[str, Any]) -> dict[str, Any]:
    """PrimeIntellect ``verifiable-coding-problems``: ``verification_info`` JSON with ``test_cases`` of type
    ``stdin_stdout`` (``input``, ``output`` texts) or ``function_call`` (``fn_name``, ``input`` argument list,
    ``output``)."""
    info = _json_field(row, "verification_info")
    if not isinstance(info, Mapping) or not isinstance(info.get("test_cases"), list):
        raise TaskFormatError("task field 'verification_info' must be JSON with a 'test_cases' list")
    # The language (``verification_info.language``) is read by trl_sandbox.languages.row_language: other languages
    # than Python run the stdin_stdout tests.
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
        return _function(cases[0].get("fn_name"), [c.get("input") for c in cases], outputs, "apps",
                         header=LCB_PRELUDE)
    if types == {"stdin_stdout"}:
        return _stdio([c.get("input") for c in cases], [c.get("output") for c in cases], "primeintellect",
                      header=LCB_PRELUDE)
    raise TaskFormatError(f"unknown test type {min(types)!r} (expected stdin_stdout or function_call)")


def read_deepcoder(row: Mapping[str, Any]) -> dict[str, Any]:
    """DeepCoder-Preview (``agentica-org/DeepCoder-Preview-Dataset``): ``tests`` JSON, a list of LiveCodeBench
    tests (subsets ``lcbv5``, ``primeintellect``, ``codeforces``) or TACO's ``{inputs, outputs, fn_name}``
    (subset ``taco``)."""
    tests = _json_field(row, "tests")
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
    return _lcb_like(tests, fn_name, "deepcoder")


def read_rstar(row: Mapping[str, Any]) -> dict[str, Any]:
    """rStar-Coder ``synthetic_rl_testcase``: ``inputs`` and ``outputs`` (lists, or JSON text of lists)."""
    inputs, outputs = _json_field(row, "inputs"), _json_field(row, "outputs")
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise TaskFormatError("task fields 'inputs' and 'outputs' must be lists of strings")
    return _stdio(inputs, outputs, "rstar", header=LCB_PRELUDE)


def read_codeforces(row: Mapping[str, Any]) -> dict[str, Any]:
    """open-r1 ``codeforces``: ``official_tests`` (``[{input, output}]``), ``generated_checker`` (a Python checker
    in open-r1's convention), ``time_limit`` (seconds), ``memory_limit`` (megabytes), ``input_mode``."""
    tests = _json_field(row, "official_tests")
    if not isinstance(tests, list) or not all(isinstance(t, Mapping) for t in tests):
        raise TaskFormatError("task field 'official_tests' must be a list of {input, output}")
    fields = _stdio([t.get("input") for t in tests], [t.get("output") for t in tests], "codeforces",
                    time_limit_s=limit_seconds(row.get("time_limit")), memory_limit_bytes=limit_bytes(row.get("memory_limit")),
                    files=("input.txt", "output.txt") if row.get("input_mode") == "file" else None)
    checker = row.get("generated_checker")
    if isinstance(checker, str) and checker.strip():
        fields["default_compare"] = {"checker": checker, "language": "python", "convention": "open-r1"}
    return fields


#: Format name -> (reader, the id field the dataset publishes). Detection order is :data:`_DETECTION`.
DATASET_FORMATS: dict[str, tuple[Callable[[Mapping[str, Any]], dict[str, Any]], str]] = {
    "apps": (read_apps, "problem_id"),
    "taco": (read_apps, "problem_id"),
    "code_contests": (read_code_contests, "name"),
    "livecodebench": (read_livecodebench, "question_id"),
    "kodcode": (read_kodcode, "question_id"),
    "primeintellect": (read_primeintellect, "problem_id"),
    "deepcoder": (read_deepcoder, "problem_id"),
    "rstar": (read_rstar, "question_id"),
    "codeforces": (read_codeforces, "id"),
}


def _is_pytest_file(value: Any) -> bool:
    return isinstance(value, str) and bool(
        re.search(r"^\s*(from\s+solution\s+import|import\s+solution\b)|^def\s+test_\w*\s*\(", value, re.MULTILINE))


_DETECTION: tuple[tuple[str, Callable[[Mapping[str, Any]], bool]], ...] = (
    ("primeintellect", lambda r: r.get("verification_info") is not None),
    ("apps", lambda r: r.get("input_output") is not None),
    ("livecodebench", lambda r: r.get("public_test_cases") is not None or r.get("private_test_cases") is not None),
    ("codeforces", lambda r: r.get("official_tests") is not None),
    ("code_contests", lambda r: any(isinstance(r.get(k), (Mapping, str)) for k in ("public_tests", "private_tests",
                                                                                  "generated_tests"))),
    ("kodcode", lambda r: r.get("entry_point") is None and _is_pytest_file(r.get("test"))),
    ("deepcoder", lambda r: r.get("tests") is not None and r.get("func_name") is None
     and r.get("reference") is None),
    ("rstar", lambda r: r.get("question_id") is not None and r.get("inputs") is not None),
)


def detect_format(row: Mapping[str, Any]) -> str | None:
    """The dataset format of ``row`` from its fields (see the module table), else None (the row may still be one
    of trl-sandbox's own formats: HumanEval, MBPP, call-based, stdin/stdout)."""
    for name, matches in _DETECTION:
        if matches(row):
            return name
    return None


def read_row(row: Mapping[str, Any], task_format: str) -> dict[str, Any]:
    """Read ``row`` as ``task_format`` (a key of :data:`DATASET_FORMATS`).

    Returns:
        Task fields: ``kind`` (``stdio`` | ``function`` | ``pytest``), ``task_id`` (the dataset's id, as a string,
        or None), and per kind ``inputs``/``outputs``, ``func_name``, ``rule``, ``test``, ``header`` (import prelude
        run before the program), ``default_compare``, ``time_limit_s``, ``memory_limit_bytes``, ``files``.

    Raises:
        TaskFormatError: the row is malformed for that format (the message says how), or is interactive.
    """
    reader, id_field = DATASET_FORMATS[task_format]
    if _interactive(row):
        raise TaskFormatError("interactive problems are not supported")
    fields = reader(row)
    natural = row.get("task_id", row.get(id_field))
    fields["task_id"] = None if natural is None else str(natural)
    fields["dataset"] = task_format
    return fields


def parse_compare(value: Any) -> dict[str, Any] | None:
    """A judge as a row's ``compare`` field or ``sandbox_compare`` gives it: a judge name (``"tokens"``), a dict
    ``{"mode": "float", "tolerance": 1e-6, "absolute_only": False, "ignore_case": False}``, a checker ``{"checker":
    SOURCE, "language": "python", "convention": "testlib" | "open-r1"}``, or JSON text of one of those.

    Raises:
        TaskFormatError: an unknown judge name, a bad tolerance, or a checker in a language other than Python.
    """
    if value is None or value == "":
        return None
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("{"):
            try:
                value = json.loads(text)
            except ValueError as exc:
                raise TaskFormatError(f"compare: not valid JSON: {exc}") from None
        else:
            value = {"mode": text}
    if not isinstance(value, Mapping):
        raise TaskFormatError(f"compare must be a judge name or an object, got {type(value).__name__}")
    if "checker" in value:
        source = value["checker"]
        if not isinstance(source, str) or not source.strip():
            raise TaskFormatError("compare: 'checker' must be the checker's source code")
        language = str(value.get("language") or "python").lower()
        if language not in ("python", "python3", "py"):
            raise TaskFormatError(f"compare: {language} checkers are not supported yet (Python checkers only)")
        convention = value.get("convention") or "testlib"
        if convention not in ("testlib", "open-r1"):
            raise TaskFormatError(f"compare: unknown checker convention {convention!r}; use testlib or open-r1")
        return {"checker": source, "language": "python", "convention": convention}
    mode = value.get("mode", "lines")
    if mode not in JUDGE_NAMES:
        raise TaskFormatError(f"compare: unknown judge {mode!r}; use one of {', '.join(JUDGE_NAMES)} or a checker")
    judge: dict[str, Any] = {"mode": mode}
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
    return judge
