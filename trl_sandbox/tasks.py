"""Tasks: dataset rows with tests, turned into harness requests and judged from the harness's records.

A task is a dataset row (a mapping). Its format is detected from its fields:

========== ====================================================== =============================================
format     fields                                                 program and tests
========== ====================================================== =============================================
humaneval  ``prompt``, ``entry_point``, ``test`` (defines          ``prompt + completion`` (or the completion after
           ``check(candidate)``)                                  the prompt when it defines ``entry_point``
                                                                  itself); each assert statement of ``check`` is
                                                                  one test (HumanEval, Chen et al. 2021)
mbpp       ``test_list`` (assert lines), optional                 the completion; each assert line is a test
           ``test_imports``, ``test_setup_code``                  (MBPP, Austin et al. 2021)
call       ``prompt``, ``func_name``, ``tests`` (argument          as humaneval; each test calls ``func_name`` on
           expressions), ``reference``, optional                  one argument and the host compares the output
           ``reference_code``                                     with ``reference`` on the same argument (the
                                                                  TRL Daytona example)
stdio      ``inputs``, ``outputs`` (lists of strings)             the completion run as ``__main__`` per input;
                                                                  whole stdout compared (APPS, CodeContests)
========== ====================================================== =============================================

Any format may carry ``banned_patterns`` (list of strings, matched on tokens) and ``task_id``.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import io
import json
import math
import re
import textwrap
import tokenize
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import InfrastructureError, TaskFormatError

__all__ = ["HARNESS_FILES", "HARNESS_NAME", "Task", "Verdict", "extract_code", "find_banned_pattern"]

#: File name of the test harness inside each sandbox (written by the pool at creation).
HARNESS_NAME = "trl_sandbox_harness.py"
#: Files every sandbox gets at creation: the harness (``trl_sandbox/_harness.py``) and the seccomp filter builder it
#: uses when the backend asks it to forbid process creation (``TRL_SANDBOX_DENY_PROCESSES=1``), as bytes.
HARNESS_FILES = {
    HARNESS_NAME: (Path(__file__).parent / "_harness.py").read_bytes(),
    "trl_sandbox_seccomp.py": (Path(__file__).parent / "backends" / "_seccomp.py").read_bytes(),
}

FORMATS = ("humaneval", "mbpp", "call", "stdio")
_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_WORD_OR_SYMBOL = re.compile(r"\w+|[^\w\s]")
_PYTHON_TAGS = {"python", "py", "python3", ""}


# -- completions -------------------------------------------------------------------------------------------------


def completion_text(completion: Any) -> str:
    """The text of a completion: a string, or TRL's conversational form (a list of messages ``{"role",
    "content"}``, of which the last assistant message counts; ``content`` may be a list of ``{"type": "text"}``
    parts).

    Raises:
        TypeError: the completion is neither a string nor a list of messages.
    """
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        completion = [completion]
    if isinstance(completion, Sequence):
        messages = [m for m in completion if isinstance(m, Mapping)]
        chosen = [m for m in messages if m.get("role") == "assistant"] or messages
        if not chosen:
            return ""
        content = chosen[-1].get("content", "")
        if isinstance(content, str):
            return content
        if isinstance(content, Sequence):
            return "".join(
                part.get("text", "") if isinstance(part, Mapping) else str(part) for part in content
            )
        return str(content)
    raise TypeError(f"a completion must be a string or a list of messages, got {type(completion).__name__}")


def extract_code(completion: Any) -> str:
    """Extract the code of a completion.

    Handles plain text (taken as code), markdown fences (the first ```python/```py/untagged block, else the first
    block; an unclosed fence at the end counts), reasoning before ``</think>`` (dropped), and TRL's
    conversational format (see :func:`completion_text`).
    """
    text = completion_text(completion)
    if "</think>" in text:
        text = text.rsplit("</think>", 1)[1]
    blocks = _FENCE.findall(text)
    if blocks:
        python_blocks = [code for tag, code in blocks if tag.lower() in _PYTHON_TAGS]
        return (python_blocks or [blocks[0][1]])[0]
    return text


def _docstring_positions(source: str) -> set[tuple[int, int]]:
    """(line, column) of string literals that are statements by themselves (docstrings): they name things in
    prose, not in code, so banned patterns ignore them."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    return {
        (node.lineno, node.col_offset)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }


def _scan(source: str) -> tuple[list[str], set[str]]:
    """Words and single symbols of ``source`` (comments and docstrings dropped, other string literals scanned
    inside: ``getattr(b, "sorted")`` yields ``sorted``), and the words found inside those string literals."""
    parts: list[str] = []
    in_strings: set[str] = set()
    docstrings = _docstring_positions(source)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                continue
            if tok.type == tokenize.STRING and tok.start in docstrings:
                continue
            words = _WORD_OR_SYMBOL.findall(tok.string)
            if tok.type == tokenize.STRING:
                in_strings.update(words)
            parts.extend(words)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return _WORD_OR_SYMBOL.findall(source), set()
    return parts, in_strings


def find_banned_pattern(code: str, patterns: Sequence[str]) -> str | None:
    """Return the first of ``patterns`` that ``code`` uses, matched on tokens, else None.

    Both sides are split into words and single symbols, so spacing does not matter (``sorted (xs)`` matches
    ``"sorted("``), words match whole (``"heapq"`` does not match ``myheapq``), comments and docstrings are
    ignored, and the text inside other string literals is scanned (``eval("sorted(xs)")`` matches). A call
    pattern ``name(`` also matches any other use of ``name`` (the alias ``s = sorted``, ``getattr(__builtins__,
    "sorted")``), and a method pattern ``.name(`` any attribute ``.name`` or the string ``"name"``
    (``getattr(xs, "sort")``). Runtime checks in the sandbox back this up (see :func:`runtime_bans`).
    """
    if not patterns:
        return None
    code = textwrap.dedent(code)  # a function-body continuation parses once dedented
    code_tokens, string_words = _scan(code)
    present = set(code_tokens)
    for pattern in patterns:
        want = _WORD_OR_SYMBOL.findall(pattern)
        if not want:
            continue
        n = len(want)
        if any(code_tokens[i : i + n] == want for i in range(len(code_tokens) - n + 1)):
            return pattern
        if n == 2 and want[1] == "(" and want[0].isidentifier() and want[0] in present:
            return pattern
        if n == 3 and want[0] == "." and want[2] == "(" and want[1].isidentifier():
            if want[1] in string_words or any(
                code_tokens[i : i + 2] == [".", want[1]] for i in range(len(code_tokens) - 1)
            ):
                return pattern
    return None


def runtime_bans(patterns: Sequence[str]) -> dict[str, Any]:
    """What the sandbox enforces at run time for ``patterns``, behind the static check: builtins removed
    (``"sorted("`` removes ``sorted``), modules made unimportable (``"heapq"``, ``"import heapq"``), and no new
    imports at all for ``"import "`` / ``"__import__"``."""
    names: set[str] = set()
    modules: set[str] = set()
    imports = False
    for pattern in patterns:
        want = _WORD_OR_SYMBOL.findall(pattern)
        if want in (["import"], ["__import__"], ["__import__", "("]):
            imports = True
        elif len(want) == 2 and want[1] == "(" and want[0].isidentifier() and hasattr(builtins, want[0]):
            names.add(want[0])
        elif len(want) == 1 and want[0].isidentifier() and not hasattr(builtins, want[0]):
            modules.add(want[0])
        elif len(want) >= 2 and want[0] in ("import", "from") and want[1].isidentifier():
            modules.add(want[1])
    return {"builtins": sorted(names), "modules": sorted(modules), "imports": imports}


def _continuation(code: str) -> bool:
    first = next((line for line in code.splitlines() if line.strip()), "")
    return first[:1] in (" ", "\t")


def _body_only(code: str) -> str:
    """Keep the lines of a function-body continuation up to the first non-empty unindented line (the rest is
    text the model wrote after the function, as in the TRL Daytona example's sanitizer)."""
    kept = []
    for line in code.splitlines():
        if line.strip() and line[:1] not in (" ", "\t"):
            break
        kept.append(line)
    return "\n".join(kept).rstrip() + "\n"


# -- verdicts ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """How a completion did against its task.

    Attributes:
        status: ``passed`` (all tests), ``failed`` (ran, some tests failed), ``error`` (did not load, crashed or
            ended the harness early), ``timeout`` (a test or the whole run ran past its time), ``banned`` (uses a
            banned pattern; not run).
        tests_passed: Number of tests passed.
        tests_total: The task's own number of tests.
        error: A short reason for ``error``/``timeout``/``banned`` (or the first failing test's error).
    """

    status: str
    tests_passed: int
    tests_total: int
    error: str | None = None


def _records(stdout: bytes) -> list[dict]:
    records = []
    for line in stdout.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def _same(a: Any, b: Any) -> bool:
    """Compare two :func:`trl_sandbox._harness.encode` trees with exact types; floats within 1e-9 relative (NaN
    equals NaN); dicts regardless of order."""
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return False
        if len(a) == 2 and a[0] == "f" and b[0] == "f":
            x, y = float(a[1]), float(b[1])
            return (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)
        if len(a) == 2 and a[0] == "d" and b[0] == "d":  # dicts compare unordered
            if len(a[1]) != len(b[1]):
                return False
            key = json.dumps
            return all(_same(x, y) for x, y in zip(sorted(a[1], key=key), sorted(b[1], key=key)))
        return all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _normalize_output(text: str) -> str:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


# -- tasks -------------------------------------------------------------------------------------------------------


def _str_list(row: Mapping[str, Any], name: str, *, required: bool = True) -> tuple[str, ...]:
    value = row.get(name)
    if value is None and not required:
        return ()
    if isinstance(value, str) or not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        raise TaskFormatError(f"task field {name!r} must be a list of strings, got {type(value).__name__}")
    return tuple(value)


def _str_field(row: Mapping[str, Any], name: str, *, required: bool = True) -> str:
    value = row.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise TaskFormatError(f"task field {name!r} must be a non-empty string, got {value!r:.80}")
    return value


def _split_check(test_source: str) -> tuple[str, ...] | None:
    """Split HumanEval's ``check(candidate)`` into tests: each statement that contains an ``assert``, preceded by
    the statements without one that come before it. None when the test has no such structure."""
    try:
        module = ast.parse(test_source)
    except SyntaxError:
        return None
    check = next((n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "check"), None)
    if check is None:
        return None
    chunks: list[str] = []
    pending: list[str] = []
    for stmt in check.body:
        pending.append(ast.unparse(stmt))
        if any(isinstance(node, ast.Assert) for node in ast.walk(stmt)):
            chunks.append("\n".join(pending))
            pending = []
    if not chunks:
        return None
    if pending:
        chunks[-1] += "\n" + "\n".join(pending)
    return tuple(chunks)


@dataclass(frozen=True)
class Task:
    """One coding task, parsed from a dataset row by :meth:`from_row`.

    Attributes:
        task_id: The row's ``task_id``, else a hash of its content.
        format: ``humaneval`` | ``mbpp`` | ``call`` | ``stdio`` (see the module docstring).
        prompt: Code the completion continues (``humaneval``/``call``), else ``""``.
        func_name: Function under test (``entry_point`` / ``func_name``), else None.
        tests: Test sources (``humaneval``/``mbpp``), argument expressions (``call``) or stdin texts (``stdio``).
        setup: Code run after the program, before the tests (``humaneval``/``mbpp``).
        outputs: Expected stdout per test (``stdio``).
        reference: Reference function name (``call``).
        reference_code: Source defining the reference (``call``, optional).
        banned_patterns: Patterns the completion may not contain (see :func:`find_banned_pattern`).
    """

    task_id: str
    format: str
    prompt: str = ""
    func_name: str | None = None
    tests: tuple[str, ...] = ()
    setup: str = ""
    outputs: tuple[str, ...] = ()
    reference: str | None = None
    reference_code: str = ""
    banned_patterns: tuple[str, ...] = field(default=())

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Task:
        """Parse a dataset row, detecting its format from its fields.

        Raises:
            TaskFormatError: the row matches no format, or a field has the wrong type; the message names it.
        """
        if not isinstance(row, Mapping):
            raise TaskFormatError(f"a task must be a mapping (dataset row), got {type(row).__name__}")
        prompt = row.get("prompt")
        prompt_text = prompt if isinstance(prompt, str) else ""
        if prompt_text and not prompt_text.endswith("\n"):
            prompt_text += "\n"
        banned = _str_list(row, "banned_patterns", required=False)
        common: dict[str, Any] = {"banned_patterns": banned}
        if row.get("test_list") is not None:
            fmt = "mbpp"
            setup = "\n".join(_str_list(row, "test_imports", required=False))
            setup += "\n" + _str_field(row, "test_setup_code", required=False)
            fields = dict(tests=_str_list(row, "test_list"), setup=setup, **common)
        elif row.get("inputs") is not None or row.get("outputs") is not None:
            fmt = "stdio"
            inputs, outputs = _str_list(row, "inputs"), _str_list(row, "outputs")
            if len(inputs) != len(outputs):
                raise TaskFormatError(f"task has {len(inputs)} inputs but {len(outputs)} outputs")
            fields = dict(tests=inputs, outputs=outputs, **common)
        elif row.get("func_name") is not None or row.get("reference") is not None:
            fmt = "call"
            fields = dict(
                prompt=prompt_text,
                func_name=_identifier(row, "func_name"),
                tests=_str_list(row, "tests"),
                reference=_identifier(row, "reference"),
                reference_code=_str_field(row, "reference_code", required=False),
                **common,
            )
        elif row.get("entry_point") is not None or row.get("test") is not None:
            fmt = "humaneval"
            entry = _identifier(row, "entry_point")
            test = _str_field(row, "test")
            tests = _split_check(test) or ("check(candidate)",)
            fields = dict(
                prompt=prompt_text, func_name=entry, tests=tests, setup=f"{test}\ncandidate = {entry}\n", **common
            )
        else:
            keys = ", ".join(sorted(map(str, row)))
            raise TaskFormatError(
                f"cannot tell the task format from the fields [{keys}]: expected HumanEval (prompt, entry_point, "
                "test), MBPP (test_list), call-based (prompt, func_name, tests, reference) or stdin/stdout "
                "(inputs, outputs)"
            )
        if not fields["tests"]:
            raise TaskFormatError(f"{fmt} task has no tests")
        task_id = row.get("task_id")
        if task_id is None:
            digest = hashlib.sha1(json.dumps([fmt, prompt_text, fields["tests"]], default=str).encode()).hexdigest()
            task_id = f"{fmt}-{digest[:12]}"
        return cls(task_id=str(task_id), format=fmt, **fields)

    # -- programs ------------------------------------------------------------------------------------------------

    def program(self, code: str) -> str:
        """The program to run for extracted completion ``code``.

        ``humaneval``/``call``: a function-body continuation (first line indented) is cut at the first unindented
        line and appended to the prompt; any other completion is appended after the prompt whole, so a
        completion that defines the function replaces the prompt's docstring-only definition while the prompt's
        imports and helpers stay available. ``mbpp``/``stdio``: the completion alone.
        """
        if self.format in ("humaneval", "call"):
            if _continuation(code):
                return self.prompt + _body_only(code)
            return self.prompt + "\n" + code
        return code

    def scored_code(self, code: str) -> str:
        """The part of ``code`` that goes into the program (what banned patterns are checked against)."""
        if self.format in ("humaneval", "call") and _continuation(code):
            return _body_only(code)
        return code

    def request(self, code: str, *, test_timeout_s: float, output_limit: int, args: Sequence[str] = ()) -> dict:
        """The harness request (JSON-able dict) that runs ``code`` against this task's tests.

        Args:
            code: Extracted completion code.
            test_timeout_s: Budget of each test, and of loading the program, in seconds.
            output_limit: Bytes of stdout kept per ``stdio`` test.
            args: ``call`` tasks: the argument literals from :meth:`expected_from_reference`.
        """
        base = {
            "program": self.program(code),
            "test_timeout_s": test_timeout_s,
            "output_limit": output_limit,
            "banned": runtime_bans(self.banned_patterns),
        }
        if self.format in ("humaneval", "mbpp"):
            trusted = self.prompt if self.format == "humaneval" else ""
            entry = self.func_name if self.format == "humaneval" else None
            return {"mode": "assert", "trusted": trusted, "entry": entry, "setup": self.setup,
                    "tests": list(self.tests), **base}
        if self.format == "call":
            return {"mode": "call", "func_name": self.func_name, "tests": list(args), **base}
        return {"mode": "stdio", "tests": list(self.tests), **base}

    # -- reference outputs (call tasks) --------------------------------------------------------------------------

    @property
    def reference_key(self) -> str:
        """Cache key of the reference outputs: a hash of the reference and the test expressions."""
        blob = json.dumps([self.reference, self.reference_code, self.tests])
        return hashlib.sha256(blob.encode()).hexdigest()

    def reference_request(self, *, test_timeout_s: float) -> dict:
        """The harness request that evaluates the test arguments and the reference outputs (``call`` tasks).

        Run in its own execution: the expected outputs never exist in a process that runs model code.
        """
        return {
            "mode": "reference",
            "program": self.reference_code,
            "func_name": self.reference,
            "tests": list(self.tests),
            "test_timeout_s": test_timeout_s,
        }

    def expected_from_reference(self, stdout: bytes) -> tuple[tuple[str, ...], tuple[Any, ...]]:
        """Parse the reference execution's output into (argument literals, expected outputs), one per test.

        Raises:
            TaskFormatError: the reference or a test expression failed (the task is broken, not the model).
            InfrastructureError: the harness did not run.
        """
        records = _records(stdout)
        if not any(r.get("ready") for r in records):
            raise InfrastructureError("the reference run produced no harness output")
        for record in records:
            if "load" in record:
                raise TaskFormatError(f"task {self.task_id}: reference failed: {record.get('error')}")
        by_index = {r["i"]: r for r in records if isinstance(r.get("i"), int)}
        args, expected = [], []
        for i in range(len(self.tests)):
            record = by_index.get(i)
            if record is None or "error" in record:
                reason = record.get("error") if record else "no result"
                raise TaskFormatError(f"task {self.task_id}: reference on test {i} failed: {reason}")
            args.append(record["arg"])
            expected.append(record["out"])
        return tuple(args), tuple(expected)

    # -- judging -------------------------------------------------------------------------------------------------

    def judge(
        self,
        stdout: bytes,
        *,
        exit_code: int | None,
        timed_out: bool,
        expected: Sequence[Any] = (),
        stderr: bytes = b"",
    ) -> Verdict:
        """Judge one execution of the harness from its result channel (``stdout``) and exit status.

        Tests are counted against this task's own number of tests, never against a number the run reports.

        Raises:
            InfrastructureError: the harness never started (no ``ready`` record), so nothing of the code ran.
        """
        total = len(self.tests)
        records = _records(stdout)
        if not records or not records[0].get("ready"):
            if timed_out:
                return Verdict("timeout", 0, total, "the run timed out before the harness started")
            tail = stderr[-300:].decode(errors="replace")
            raise InfrastructureError(f"the harness did not start (exit code {exit_code}): {tail}")
        by_index: dict[int, dict] = {}
        done = False
        crashed = None
        for record in records[1:]:
            if "load" in record:
                status = "timeout" if record["load"] == "timeout" else "error"
                return Verdict(status, 0, total, str(record.get("error"))[:500])
            i = record.get("i")
            if isinstance(i, int) and 0 <= i < total and i not in by_index:
                by_index[i] = record
            if "done" in record:
                done = True
            if "crash" in record:
                crashed = str(record["crash"])[:500]
        passed = 0
        first_error = None
        for i in range(total):
            record = by_index.get(i)
            if record is None:
                continue
            if self._passes(i, record, expected):
                passed += 1
            elif first_error is None:
                first_error = record.get("error") or f"test {i} failed"
        if timed_out or any(r.get("timeout") for r in by_index.values()):
            return Verdict("timeout", passed, total, "a test ran past its time limit")
        if exit_code == 128 + 24:  # SIGXCPU: the CPU-time rlimit
            return Verdict("timeout", passed, total, "the CPU time limit was reached")
        if crashed is not None:
            return Verdict("error", passed, total, crashed)
        if not done:
            return Verdict("error", passed, total, f"the program ended the test run early (exit code {exit_code})")
        return Verdict("passed" if passed == total else "failed", passed, total, first_error)

    def _passes(self, i: int, record: dict, expected: Sequence[Any]) -> bool:
        if self.format in ("humaneval", "mbpp"):
            return record.get("ok") is True
        if "error" in record or record.get("timeout") or "out" not in record:
            return False
        if self.format == "call":
            return i < len(expected) and _same(record["out"], expected[i])
        if record.get("truncated"):
            return False
        return isinstance(record["out"], str) and _normalize_output(record["out"]) == _normalize_output(
            self.outputs[i]
        )


def _identifier(row: Mapping[str, Any], name: str) -> str:
    value = row.get(name)
    if not isinstance(value, str) or not value.isidentifier():
        raise TaskFormatError(f"task field {name!r} must be a Python identifier, got {value!r:.80}")
    return value


# -- loading -----------------------------------------------------------------------------------------------------

#: Task sets shipped in the package (``trl_sandbox/data``): name -> file.
BUNDLED_TASKS = {
    "daytona": "daytona_tasks.jsonl",
    "humaneval": "HumanEval.jsonl.gz",
}


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Read a ``.jsonl`` (or gzip-compressed ``.jsonl.gz``) file of JSON objects, skipping blank lines.

    Raises:
        TaskFormatError: the file is missing or unreadable, or a line is not a JSON object (the message gives the
            file and line number).
    """
    import gzip

    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    rows = []
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError as exc:
                    raise TaskFormatError(f"{path}:{lineno}: not valid JSON: {exc}") from None
                if not isinstance(row, dict):
                    raise TaskFormatError(f"{path}:{lineno}: expected a JSON object, got {type(row).__name__}")
                rows.append(row)
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise TaskFormatError(f"cannot read {path}: {exc}") from None
    return rows


def load_tasks(source: str | Path) -> list[dict[str, Any]]:
    """Load task rows from a bundled set name (see :data:`BUNDLED_TASKS`) or a ``.jsonl`` / ``.jsonl.gz`` file.

    Returns:
        The rows (dicts), in file order. They are not validated: use :meth:`Task.from_row`.

    Raises:
        TaskFormatError: the file is missing or unreadable, or a line is not a JSON object (the message gives the
            line number).
    """
    name = str(source)
    path = Path(__file__).parent / "data" / BUNDLED_TASKS[name] if name in BUNDLED_TASKS else Path(name)
    if not path.is_file():
        raise TaskFormatError(f"cannot read tasks from {name!r}: no such file; bundled sets: {', '.join(BUNDLED_TASKS)}")
    return read_jsonl(path)
