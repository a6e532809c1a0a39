"""Tasks: dataset rows with tests, turned into harness requests and judged from the harness's records.

A task is a dataset row (a mapping). Its format is detected from its fields:

========== ====================================================== =============================================
format     fields                                                 program and tests
========== ====================================================== =============================================
humaneval  ``entry_point``, ``test`` (defines ``check(candidate)``),  code prefix + completion (or the completion
           ``prompt`` and/or ``starter_code`` (the code prefix)   after the prefix when it defines
                                                                  ``entry_point`` itself); each non-constant
                                                                  assert statement of ``check`` is one test
                                                                  (HumanEval, Chen et al. 2021)
mbpp       ``test_list`` (assert lines), optional                 the completion; each assert line is a test
           ``test_imports``, ``test_setup_code``                  (MBPP, Austin et al. 2021)
call       ``func_name``, ``tests`` (argument expressions),       as humaneval; each test calls ``func_name`` on
           ``reference``, optional ``reference_code``, code       one argument and compares the output with
           prefix as humaneval                                    ``reference`` on the same argument (the TRL
                                                                  Daytona example)
stdio      ``inputs``, ``outputs`` (lists of strings), optional       the completion run as ``__main__`` per input;
           ``time_limit`` (s), ``memory_limit`` (MB)              stdout judged by the row's ``compare`` (default
                                                                  ``lines``)
========== ====================================================== =============================================

Any format may carry ``banned_patterns`` (list of strings, matched on tokens), ``task_id`` and ``task_format``.
The public code-RL datasets (APPS, TACO, code_contests, LiveCodeBench, KodCode, PrimeIntellect, DeepCoder,
rStar-Coder, open-r1 Codeforces) are read as they are published by :mod:`trl_sandbox.formats`; their tasks run as
``stdio``, ``function`` (calls with JSON arguments) or ``pytest`` (a pytest file, in the judge).

**The code prefix never comes from what the model saw.** TRL passes a row's ``prompt`` column to the model; an
instruct model is trained on a conversational ``prompt`` (a list of messages) or on an instruction wrapped around
the code. The code the program starts with (imports, helper functions such as HumanEval's ``poly``, the signature a
function-body completion continues) is therefore the row's ``starter_code`` column (the name APPS, TACO and
LiveCodeBench use), else the ``prompt`` only when it is a string that is Python code (it parses, and defines or
imports something): HumanEval's own rows. :func:`chat_rows` (``load_tasks(..., chat=True)``) turns HumanEval, MBPP
and call-based rows into conversational prompts plus ``starter_code``.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import hashlib
import io
import json
import logging
import re
import textwrap
import tokenize
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigurationError, InfrastructureError, TaskFormatError
from .formats import DATASET_FORMATS, DEFAULT_JUDGES, detect_format, limit_bytes, limit_seconds, parse_compare, read_row
from .languages import LANGUAGES, build_spec, row_language

logger = logging.getLogger(__name__)

__all__ = [
    "Task",
    "Verdict",
    "chat_rows",
    "extract_code",
    "find_banned_pattern",
    "load_tasks",
    "problem_prompt",
    "task_id_of",
]

#: trl-sandbox's own row formats; the public datasets' formats are :data:`trl_sandbox.formats.DATASET_FORMATS`.
FORMATS = ("humaneval", "mbpp", "call", "stdio")
_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_WORD_OR_SYMBOL = re.compile(r"\w+|[^\w\s]")
_PYTHON_TAGS = {"python", "py", "python3", "py3", ""}


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


def _defines(code: str, names: Sequence[str]) -> bool:
    return any(
        re.search(rf"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+{re.escape(name)}\b|^{re.escape(name)}[ \t]*=",
                  code, re.MULTILINE)
        for name in names
    )


def extract_code(completion: Any, entry_points: Sequence[str] = (), language: str = "python") -> str:
    """Extract the code of a completion.

    Rules, in order:

    - reasoning before the last ``</think>`` is dropped;
    - with markdown fences, the code is one block: among the Python blocks (tagged ``python``/``py``/``python3``,
      or untagged; blocks of other languages only when there is no Python block), the **last** one that defines
      one of ``entry_points`` (``def``/``class``/assignment), else the last one. An unclosed fence at the end
      counts (a truncated generation). The last block is what open-r1's ``code_reward``, DeepCoder (rllm) and
      LiveCodeBench take: an answer that shows the buggy line and then the fix is scored on the fix; preferring a
      block that defines the function skips a usage example written after it;
    - without fences, the whole text is the code.

    For another ``language`` (see :mod:`trl_sandbox.languages`), the blocks considered are those tagged with that
    language (or untagged; blocks of other languages only when there is none), and the last one is the code.

    Args:
        completion: A string or TRL's conversational form (see :func:`completion_text`).
        entry_points: Names the task's tests call (``Task.entry_points``).
        language: The language the code is run as (a :data:`~trl_sandbox.languages.LANGUAGES` name).

    Raises:
        TypeError: the completion is neither a string nor a list of messages.
    """
    text = completion_text(completion)
    if "</think>" in text:
        text = text.rsplit("</think>", 1)[1]
    blocks = _FENCE.findall(text)
    if not blocks:
        return text
    if language != "python":
        tags = {language, *LANGUAGES[language].aliases, ""}
        return ([code for tag, code in blocks if tag.lower() in tags] or [code for _tag, code in blocks])[-1]
    python = [code for tag, code in blocks if tag.lower() in _PYTHON_TAGS] or [code for _tag, code in blocks]
    if entry_points:
        defining = [code for code in python if _defines(code, entry_points)]
        if defining:
            return defining[-1]
    return python[-1]


# -- banned patterns -----------------------------------------------------------------------------------------------

#: Calls whose string arguments can become code or a name: strings there are scanned for banned patterns.
_DYNAMIC_CALLS = frozenset({
    "eval", "exec", "compile", "getattr", "setattr", "hasattr", "delattr", "__import__", "import_module",
    "__getattribute__", "__getattr__", "attrgetter", "methodcaller", "find_spec", "reload",
})
#: Objects whose items are names (``__builtins__["sorted"]``, ``globals()["sorted"]``, ``vars(builtins)[...]``,
#: ``builtins.__dict__[...]``, ``sys.modules[...]``): strings used as their keys are scanned too.
_NAME_TABLES = frozenset({"__builtins__", "builtins", "globals", "locals", "vars", "__dict__", "modules"})


def _callee(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call):
        return _callee(node.func)
    return None


def _dynamic_spans(tree: ast.AST) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) source positions of the parts of the code whose strings can become code or names: the
    arguments of :data:`_DYNAMIC_CALLS`, the keys of :data:`_NAME_TABLES`, and f-strings (their ``{...}`` is
    code)."""
    spans = []
    for node in ast.walk(tree):
        parts: list[ast.AST] = []
        if isinstance(node, ast.Call) and _callee(node.func) in _DYNAMIC_CALLS:
            parts = [*node.args, *(k.value for k in node.keywords)]
        elif isinstance(node, ast.Subscript) and _callee(node.value) in _NAME_TABLES:
            parts = [node.slice]
        elif isinstance(node, ast.JoinedStr):
            parts = [node]
        for part in parts:
            if getattr(part, "end_lineno", None) is not None:
                spans.append(((part.lineno, part.col_offset), (part.end_lineno, part.end_col_offset)))
    return spans


def _scan(source: str) -> tuple[list[str], set[str]]:
    """Words and single symbols of ``source``'s code (comments, docstrings and other string literals dropped), and
    the words of the string literals that can become code or a name (``getattr(b, "sorted")``,
    ``eval("sorted(xs)")``, ``__builtins__["sorted"]``, f-strings), which are also part of the first list.

    Source that does not parse is scanned whole, string literals included (the cautious reading)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return _WORD_OR_SYMBOL.findall(source), set()
    spans = _dynamic_spans(tree)
    parts: list[str] = []
    in_strings: set[str] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                continue
            words = _WORD_OR_SYMBOL.findall(tok.string)
            if tok.type == tokenize.STRING:
                if not any(start <= tok.start and tok.end <= end for start, end in spans):
                    continue  # text: an assertion message, an error message, a docstring
                in_strings.update(words)
            parts.extend(words)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return _WORD_OR_SYMBOL.findall(source), set()
    return parts, in_strings


def find_banned_pattern(code: str, patterns: Sequence[str]) -> str | None:
    """Return the first of ``patterns`` that ``code`` uses, matched on tokens, else None.

    Both sides are split into words and single symbols, so spacing does not matter (``sorted (xs)`` matches
    ``"sorted("``), words match whole (``"heapq"`` does not match ``myheapq``), and comments and string literals
    are ignored (an assertion message saying ``"sorted("`` is text), except where a string can become code or a
    name: arguments of ``eval``, ``exec``, ``compile``, ``getattr``, ``__import__``, ``importlib.import_module``...,
    keys of ``__builtins__[...]``/``globals()[...]``, and f-strings (``eval("sorted(xs)")`` matches). A call pattern
    ``name(`` also matches any other use of ``name`` (the alias ``s = sorted``, ``getattr(__builtins__,
    "sorted")``), and a method pattern ``.name(`` any attribute ``.name`` or such a string ``"name"``
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


# -- programs: function-body continuations -----------------------------------------------------------------------


def _continuation(code: str) -> bool:
    first = next((line for line in code.splitlines() if line.strip()), "")
    return first[:1] in (" ", "\t")


#: Top-level statements kept after a function-body continuation: definitions the body may use.
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Assign,
                ast.AnnAssign)


def _top_level_chunks(lines: list[str]) -> list[list[str]]:
    """Split lines into top-level statements' lines: a chunk starts at an unindented non-empty line; indented and
    blank lines, and lines closing a bracket, continue it; a decorator line joins the chunk after it."""
    chunks: list[list[str]] = []
    decorators: list[str] = []
    for line in lines:
        starts = bool(line.strip()) and line[:1] not in (" ", "\t", ")", "]", "}")
        if starts:
            chunk = [*decorators, line]
            decorators = []
            if line.startswith("@"):
                decorators = chunk
                continue
            chunks.append(chunk)
        elif decorators:
            decorators.append(line)
        elif chunks:
            chunks[-1].append(line)
    return chunks


def _body_and_definitions(code: str) -> str:
    """A function-body continuation: its indented lines, then only the top-level definitions written after the body
    (helper functions, classes, imports, constants), which the body may call; other text a model writes after the
    function (prose, example calls, ``print``, its own asserts, ``if __name__ == "__main__":``) is dropped, as the
    TRL Daytona example's sanitizer cuts it."""
    lines = code.splitlines()
    body: list[str] = []
    i = 0
    while i < len(lines) and (not lines[i].strip() or lines[i][:1] in (" ", "\t")):
        body.append(lines[i])
        i += 1
    kept = []
    for chunk in _top_level_chunks(lines[i:]):
        source = "\n".join(chunk).rstrip()
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        if tree.body and all(isinstance(stmt, _DEFINITIONS) for stmt in tree.body):
            kept.append(source)
    program = "\n".join(body).rstrip() + "\n"
    if kept:
        program += "\n\n" + "\n\n\n".join(kept) + "\n"
    return program


# -- code prefixes and tests ---------------------------------------------------------------------------------------


def _is_code(text: str) -> bool:
    """Whether a string prompt is Python code (HumanEval's prompt) rather than an instruction: it parses (alone, or
    as a function header whose body the completion writes) and defines or imports something."""
    for source in (text, text.rstrip() + "\n    pass\n"):
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        return any(isinstance(node, (*_DEFINITIONS[:5],)) for node in tree.body)
    return False


def _runnable_prefix(prefix: str) -> str:
    """The code prefix as the judge runs it (for the helpers the tests use): as it is when it parses, else as a
    function header with a ``pass`` body (a prefix that ends at ``def f(x):``), else nothing."""
    for source in (prefix, prefix.rstrip() + "\n    pass\n"):
        try:
            ast.parse(source)
            return source
        except (SyntaxError, ValueError):
            continue
    return ""


def _constant(expr: ast.AST) -> bool:
    """An expression that names and calls nothing: ``True``, ``1 == 1``, a string."""
    return not any(
        isinstance(node, (ast.Name, ast.Call, ast.Attribute, ast.Subscript, ast.Lambda, ast.NamedExpr))
        for node in ast.walk(expr)
    )


def _is_test(stmt: ast.AST) -> bool:
    """A statement that tests something: it contains an assert whose condition is not a constant (HumanEval's
    ``assert True, "This prints if this assert fails"`` tests nothing)."""
    return any(isinstance(node, ast.Assert) and not _constant(node.test) for node in ast.walk(stmt))


def _split_check(test_source: str) -> tuple[str, ...] | None:
    """Split HumanEval's ``check(candidate)`` into tests: each statement that contains a non-constant ``assert``,
    preceded by the statements without one that come before it (constant asserts are dropped). None when the test
    has no such structure."""
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
        if isinstance(stmt, ast.Assert) and _constant(stmt.test):
            continue
        pending.append(ast.unparse(stmt))
        if _is_test(stmt):
            chunks.append("\n".join(pending))
            pending = []
    if not chunks:
        return None
    if pending:
        chunks[-1] += "\n" + "\n".join(pending)
    return tuple(chunks)


def _test_module(test_source: str) -> str:
    """HumanEval's test module without its top-level calls of its own functions (MultiPL-E's rows end with
    ``test_check()``, which would run every assert during setup): the judge runs each assert as one test."""
    try:
        tree = ast.parse(test_source)
    except SyntaxError:
        return test_source
    own = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    tree.body = [
        n for n in tree.body
        if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Call) and _callee(n.value.func) in own)
    ]
    return ast.unparse(tree)


def _imports_of(*sources: str) -> str:
    """The top-level ``import`` statements of test code: the program sees them too, as in the official harnesses
    (one module: the program, then the tests)."""
    found = []
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        found += [ast.unparse(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    return "\n".join(dict.fromkeys(found))


def _called_names(tests: Sequence[str], defined: str) -> tuple[str, ...]:
    """Names of the functions the tests call that neither builtins nor the test code define (MBPP's function)."""
    try:
        known = {n.id for n in ast.walk(ast.parse(defined)) if isinstance(n, ast.Name)}
        known |= {a.asname or a.name.split(".")[0] for n in ast.walk(ast.parse(defined))
                  if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    except SyntaxError:
        known = set()
    names: list[str] = []
    for test in tests:
        try:
            tree = ast.parse(test)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                name = node.func.id
                if name not in known and not hasattr(builtins, name) and name not in names:
                    names.append(name)
    return tuple(names)


# -- verdicts ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """How a completion did against its task.

    Attributes:
        status: ``passed`` (all tests), ``failed`` (ran, some tests failed), ``error`` (did not load, crashed or
            ended the harness early), ``timeout`` (a test or the whole run ran past its time), ``banned`` (uses a
            banned pattern; not run), ``unserializable`` (a value the tests compare could not cross between the
            program and the tests: not the model's fault).
        tests_passed: Number of tests passed.
        tests_total: The task's own number of tests.
        error: A short reason for ``error``/``timeout``/``banned``/``unserializable`` (or the first failing test's
            error).
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


def _identifier(row: Mapping[str, Any], name: str) -> str:
    value = row.get(name)
    if not isinstance(value, str) or not value.isidentifier():
        raise TaskFormatError(f"task field {name!r} must be a Python identifier, got {value!r:.80}")
    return value


def code_prefix(row: Mapping[str, Any]) -> str:
    """The code a row's program starts with: its ``starter_code``, else its ``prompt`` when that is a string of
    Python code (see the module docstring), else ``""``. Ends with a newline when not empty.

    Raises:
        TaskFormatError: ``starter_code`` is not a string.
    """
    starter = row.get("starter_code")
    if starter is not None:
        if not isinstance(starter, str):
            raise TaskFormatError(f"task field 'starter_code' must be a string, got {type(starter).__name__}")
        prefix = starter
    else:
        prompt = row.get("prompt")
        prefix = prompt if isinstance(prompt, str) and _is_code(prompt) else ""
    if prefix and not prefix.endswith("\n"):
        prefix += "\n"
    return prefix


_WARNED_NO_PREFIX: set[str] = set()


@dataclass(frozen=True)
class Task:
    """One coding task, parsed from a dataset row by :meth:`from_row`.

    Attributes:
        task_id: The row's ``task_id``, else a hash of its content.
        format: ``humaneval`` | ``mbpp`` | ``call`` | ``stdio`` | ``function`` | ``pytest`` (see the module
            docstring).
        prompt: The code prefix (see :func:`code_prefix`): code the completion continues (``humaneval``/``call``),
            else ``""`` (``mbpp`` rows may have one from ``starter_code``).
        func_name: Function under test (``entry_point`` / ``func_name``), else None.
        tests: Test sources (``humaneval``/``mbpp``), argument expressions (``call``), stdin texts (``stdio``), JSON
            argument lists (``function``) or test function names (``pytest``).
        setup: Test code the judge runs after the program's names are in place, before the tests
            (``humaneval``/``mbpp``); the pytest file (``pytest``).
        prelude: The tests' import statements, which the program sees too (``humaneval``/``mbpp``).
        outputs: Expected stdout per test (``stdio``), or expected return values as JSON (``function``).
        reference: Reference function name (``call``).
        reference_code: Source defining the reference (``call``, optional).
        banned_patterns: Patterns the completion may not contain (see :func:`find_banned_pattern`).
        entry_points: Names the tests call (for choosing among a completion's code blocks).
        dataset: The public dataset format the row was read as (``apps``, ``livecodebench``...), else ``""``.
        header: Import prelude run before the program (LiveCodeBench's and APPS's harnesses add one).
        rule: ``function`` tasks: how a return value is compared (``apps`` | ``lcb``, see
            ``trl_sandbox.harness.compare.same_call_output``).
        compare: The row's own stdout judge (its ``compare`` field), else None.
        default_compare: The stdout judge of the dataset's official harness.
        time_limit_s: The row's time limit per test (seconds), else None.
        memory_limit_bytes: The row's memory limit (bytes), else None.
        files: ``(input file, output file)`` of problems that read and write files (Codeforces' file mode,
            code_contests' ``input_file``/``output_file``), else ``()``.
        language: The language the row asks completions to be written in (see
            :func:`trl_sandbox.languages.row_language`), else None (the completion's code fence, then
            ``sandbox_language``, decide).
    """

    task_id: str
    format: str
    prompt: str = ""
    func_name: str | None = None
    tests: tuple[str, ...] = ()
    setup: str = ""
    prelude: str = ""
    outputs: tuple[str, ...] = ()
    reference: str | None = None
    reference_code: str = ""
    banned_patterns: tuple[str, ...] = field(default=())
    entry_points: tuple[str, ...] = ()
    dataset: str = ""
    header: str = ""
    rule: str = ""
    compare: dict[str, Any] | None = None
    default_compare: dict[str, Any] | None = None
    time_limit_s: float | None = None
    memory_limit_bytes: int | None = None
    files: tuple[str, ...] = ()
    language: str | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any], task_format: str | None = None) -> Task:
        """Parse a dataset row, detecting its format from its fields.

        Args:
            row: The row, as the dataset publishes it.
            task_format: The format to read it as (a public dataset's, see :data:`trl_sandbox.formats.
                DATASET_FORMATS`, or one of :data:`FORMATS`); default: the row's ``task_format`` field, else
                detected from the fields.

        Raises:
            TaskFormatError: the row matches no format, or a field has the wrong type or is malformed; the message
                names it.
        """
        if not isinstance(row, Mapping):
            raise TaskFormatError(f"a task must be a mapping (dataset row), got {type(row).__name__}")
        task_format = task_format or row.get("task_format") or None
        _check_task_format(task_format)
        compare = parse_compare(row.get("compare"))
        banned = _str_list(row, "banned_patterns", required=False)
        dataset_format = task_format if task_format in DATASET_FORMATS else None
        if task_format is None:
            dataset_format = detect_format(row)
        task = (cls._from_dataset_row(row, dataset_format, compare, banned) if dataset_format is not None
                else cls._from_own_row(row, task_format, compare, banned))
        language = row_language(row)
        if language is not None and LANGUAGES[language].native:
            if task.format != "stdio":
                raise TaskFormatError(f"{LANGUAGES[language].title} completions run stdin/stdout tasks only; this "
                                      f"row's tests are {task.format} tests")
            task = dataclasses.replace(task, language=language)
        elif language is not None:
            task = dataclasses.replace(task, language=language)
        return task

    @classmethod
    def _from_own_row(cls, row: Mapping[str, Any], task_format: str | None, compare: dict[str, Any] | None,
                      banned: tuple[str, ...]) -> Task:
        prefix = code_prefix(row)
        common: dict[str, Any] = {"banned_patterns": banned, "compare": compare}
        own = task_format or _own_format(row)
        if own == "mbpp":
            fmt = "mbpp"
            imports = "\n".join(_str_list(row, "test_imports", required=False))
            setup = imports + "\n" + _str_field(row, "test_setup_code", required=False)
            tests = tuple(t for t in _str_list(row, "test_list") if _has_test(t))
            fields = dict(prompt=prefix, tests=tests, setup=setup, prelude=_imports_of(setup),
                          entry_points=_called_names(tests, setup), **common)
        elif own == "stdio":
            fmt = "stdio"
            inputs, outputs = _str_list(row, "inputs"), _str_list(row, "outputs")
            if len(inputs) != len(outputs):
                raise TaskFormatError(f"task has {len(inputs)} inputs but {len(outputs)} outputs")
            fields = dict(tests=inputs, outputs=outputs, default_compare=DEFAULT_JUDGES["stdio"],
                          time_limit_s=limit_seconds(row.get("time_limit")),
                          memory_limit_bytes=limit_bytes(row.get("memory_limit")), **common)
        elif own == "call":
            fmt = "call"
            func_name = _identifier(row, "func_name")
            fields = dict(
                prompt=prefix,
                func_name=func_name,
                tests=_str_list(row, "tests"),
                reference=_identifier(row, "reference"),
                reference_code=_str_field(row, "reference_code", required=False),
                entry_points=(func_name,),
                **common,
            )
        elif own == "humaneval":
            fmt = "humaneval"
            entry = _identifier(row, "entry_point")
            test = _str_field(row, "test")
            tests = _split_check(test) or ("check(candidate)",)
            fields = dict(prompt=prefix, func_name=entry, tests=tests,
                          setup=f"{_test_module(test)}\ncandidate = {entry}\n",
                          prelude=_imports_of(test), entry_points=(entry,), **common)
        else:
            keys = ", ".join(sorted(map(str, row))) or "none"
            raise TaskFormatError(
                f"cannot tell the task format from the fields [{keys}]. Known formats: HumanEval (entry_point, "
                "test), MBPP (test_list), call-based (func_name, tests, reference), stdin/stdout (inputs, outputs), "
                "APPS/TACO (input_output), code_contests (public_tests, private_tests, generated_tests), "
                "LiveCodeBench (public_test_cases, private_test_cases), KodCode (test: a pytest file), "
                "PrimeIntellect (verification_info), DeepCoder (tests), rStar-Coder (question_id, inputs, outputs), "
                "open-r1 codeforces (official_tests); name one with task_format="
            )
        if not fields["tests"]:
            raise TaskFormatError(f"{fmt} task has no tests (constant asserts such as 'assert True' do not count)")
        task_id = row.get("task_id")
        if task_id is None:
            digest = hashlib.sha1(json.dumps([fmt, prefix, fields["tests"]], default=str).encode()).hexdigest()
            task_id = f"{fmt}-{digest[:12]}"
        if fmt in ("humaneval", "call") and not prefix and not isinstance(row.get("prompt"), str):
            key = f"{fmt}:{task_id}"
            if key not in _WARNED_NO_PREFIX and len(_WARNED_NO_PREFIX) < 100:
                _WARNED_NO_PREFIX.add(key)
                logger.warning(
                    "trl-sandbox: task %s has a conversational prompt and no 'starter_code' column: the completion "
                    "must be a whole program (its imports and helper functions included). Keep the task's code in "
                    "'starter_code' (load_tasks(..., chat=True) does).", task_id,
                )
        return cls(task_id=str(task_id), format=fmt, **fields)

    @classmethod
    def _from_dataset_row(cls, row: Mapping[str, Any], dataset_format: str, compare: dict[str, Any] | None,
                          banned: tuple[str, ...]) -> Task:
        spec = read_row(row, dataset_format)
        kind = spec["kind"]
        common: dict[str, Any] = dict(
            dataset=dataset_format, banned_patterns=banned, compare=compare, header=spec.get("header", ""),
            default_compare=spec.get("default_compare"), time_limit_s=spec.get("time_limit_s"),
            memory_limit_bytes=spec.get("memory_limit_bytes"), files=tuple(spec.get("files") or ()),
        )
        if kind == "pytest":
            test = spec["test"]
            tests = _pytest_functions(test)
            if not tests:
                raise TaskFormatError("the pytest file defines no test function (def test_...)")
            fields = dict(tests=tests, setup=test, entry_points=_solution_imports(test), **common)
        elif kind == "function":
            fields = dict(func_name=spec["func_name"], tests=spec["inputs"], outputs=spec["outputs"],
                          rule=spec["rule"], entry_points=(spec["func_name"], "Solution"), **common)
        else:
            fields = dict(tests=spec["inputs"], outputs=spec["outputs"], **common)
        if not fields["tests"]:
            raise TaskFormatError(f"{dataset_format} task has no tests")
        task_id = spec.get("task_id")
        if task_id is None:
            digest = hashlib.sha1(json.dumps([dataset_format, fields["tests"], fields.get("outputs")],
                                             default=str).encode()).hexdigest()
            task_id = f"{dataset_format}-{digest[:12]}"
        return cls(task_id=str(task_id), format=kind, **fields)

    # -- programs ------------------------------------------------------------------------------------------------

    def extract(self, completion: Any, language: str = "python") -> str:
        """The code of ``completion`` (see :func:`extract_code`) in ``language``, preferring a Python block that
        defines a function the tests call."""
        return extract_code(completion, self.entry_points, language)

    def program(self, code: str) -> str:
        """The program to run for extracted completion ``code``.

        ``humaneval``/``call``: a function-body continuation (first line indented) is appended to the code prefix,
        keeping only the definitions written after the body (see :func:`_body_and_definitions`); any other
        completion is appended after the prefix whole, so a completion that defines the function replaces the
        prefix's docstring-only definition while the prefix's imports and helpers stay available. ``mbpp``: the
        prefix (``starter_code``, usually none) and the completion. ``stdio``: the completion alone.
        """
        if self.format in ("humaneval", "call"):
            if _continuation(code):
                return self.prompt + _body_and_definitions(code)
            return self.prompt + "\n" + code if self.prompt else code
        if self.format == "mbpp" and self.prompt:
            return self.prompt + "\n" + code
        if self.header:
            return self.header + "\n" + code
        return code

    def test_timeout_s(self, default_s: float, factor: float = 1.0) -> float:
        """Seconds each test of this task gets: the row's time limit times ``factor`` (``sandbox_time_limit_factor``:
        a Python solution is slower than the C++ a contest's limits were set for), at most ``default_s``
        (``sandbox_test_timeout``, the configured maximum); ``default_s`` when the row gives no limit."""
        if self.time_limit_s is None:
            return default_s
        return min(default_s, self.time_limit_s * factor)

    def judge_spec(self, default: dict[str, Any] | None = None) -> dict[str, Any]:
        """The stdout judge of this task: the row's own ``compare``, else ``default`` (``sandbox_compare``), else the
        judge of the dataset's official harness (see :data:`trl_sandbox.formats.DEFAULT_JUDGES`)."""
        return self.compare or default or self.default_compare or {"mode": "lines"}

    def scored_code(self, code: str) -> str:
        """The part of ``code`` that goes into the program (what banned patterns are checked against)."""
        if self.format in ("humaneval", "call") and _continuation(code):
            return _body_and_definitions(code)
        return code

    def request(
        self,
        code: str,
        *,
        test_timeout_s: float,
        output_limit: int,
        args: Sequence[str] = (),
        expected: Sequence[Any] = (),
        stop_on_failure: bool = False,
        compare: dict[str, Any] | None = None,
        language: str = "python",
        compile_timeout_s: float = 30.0,
    ) -> dict:
        """The harness request (JSON-able dict) that runs ``code`` against this task's tests.

        Args:
            code: Extracted completion code.
            test_timeout_s: Budget of each test, and of loading the program, in seconds.
            output_limit: Bytes of stdout kept per ``stdio`` test.
            args: ``call`` tasks: the argument literals from :meth:`expected_from_reference`.
            expected: ``call`` tasks: the encoded expected outputs from :meth:`expected_from_reference`.
            stop_on_failure: Stop at the first failing test (the ``all_or_nothing`` reward needs no more).
            compare: The default stdout judge (``sandbox_compare``), used when the row names none (see
                :meth:`judge_spec`).
            language: The language ``code`` is in; other than ``python``, only for ``stdio`` tasks: the program is
                the code alone, compiled and run by the harness (see :mod:`trl_sandbox.languages`).
            compile_timeout_s: Seconds the compiler may run (``sandbox_compile_timeout``).
        """
        if LANGUAGES[language].native:
            if self.format != "stdio":
                raise ValueError(f"{language} code runs stdin/stdout tasks only, not {self.format} tasks")
            return {"mode": "stdio", "program": code, "test_timeout_s": test_timeout_s, "output_limit": output_limit,
                    "stop_on_failure": stop_on_failure, "tests": list(self.tests), "expected": list(self.outputs),
                    "compare": self.judge_spec(compare), "memory_limit_bytes": self.memory_limit_bytes,
                    "files": list(self.files) or None, "build": build_spec(language, self.memory_limit_bytes, code),
                    "compile_timeout_s": compile_timeout_s}
        base = {
            "program": self.program(code),
            "test_timeout_s": test_timeout_s,
            "output_limit": output_limit,
            "banned": runtime_bans(self.banned_patterns),
            "stop_on_failure": stop_on_failure,
        }
        if self.format in ("humaneval", "mbpp"):
            trusted = _runnable_prefix(self.prompt) if self.format == "humaneval" else ""
            entry = self.func_name if self.format == "humaneval" else None
            return {"mode": "assert", "trusted": trusted, "entry": entry, "setup": self.setup,
                    "prelude": self.prelude, "tests": list(self.tests), **base}
        if self.format == "call":
            return {"mode": "call", "func_name": self.func_name, "tests": list(args), "expected": list(expected),
                    **base}
        if self.format == "function":
            return {"mode": "function", "func_name": self.func_name, "rule": self.rule, "tests": list(self.tests),
                    "expected": list(self.outputs), **base}
        if self.format == "pytest":
            return {"mode": "pytest", "setup": self.setup, "tests": list(self.tests), "module": "solution", **base}
        return {"mode": "stdio", "tests": list(self.tests), "expected": list(self.outputs),
                "compare": self.judge_spec(compare), "memory_limit_bytes": self.memory_limit_bytes,
                "files": list(self.files) or None, **base}

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
        """Parse the reference execution's output into (argument literals, encoded expected outputs), one per test.

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

    def judge(self, stdout: bytes, *, exit_code: int | None, timed_out: bool, stderr: bytes = b"") -> Verdict:
        """Judge one execution of the harness from its result channel (``stdout``) and exit status.

        The judge process in the sandbox decides each test (``ok``); this counts them against this task's own
        number of tests, never against a number the run reports.

        Raises:
            InfrastructureError: the harness never started (no ``ready`` record), so nothing of the code ran.
            TaskFormatError: the task's own machinery failed in the sandbox (its checker failed or timed out, pytest
                is not importable there): ``invalid_task``, not the program's fault.
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
            if record.get("load") == "unsupported":
                raise TaskFormatError(f"task {self.task_id}: {record.get('error')}")
            if "invalid" in record:
                raise TaskFormatError(f"task {self.task_id}: {record['invalid']}")
            if "load" in record:
                status = {"timeout": "timeout", "compile_error": "compile_error"}.get(record["load"], "error")
                return Verdict(status, 0, total, str(record.get("error"))[:500])
            i = record.get("i")
            if isinstance(i, int) and 0 <= i < total and i not in by_index:
                by_index[i] = record
            if "done" in record:
                done = True
            if "crash" in record:
                crashed = str(record["crash"])[:500]
        passed = sum(1 for record in by_index.values() if record.get("ok") is True)
        failing = [by_index[i] for i in sorted(by_index) if by_index[i].get("ok") is not True]
        first_error = None
        if failing:
            first_error = failing[0].get("error") or f"test {sorted(by_index)[0]} failed"
        if timed_out or any(r.get("timeout") for r in by_index.values()):
            return Verdict("timeout", passed, total, "a test ran past its time limit")
        if exit_code == 128 + 24:  # SIGXCPU: the CPU-time rlimit
            return Verdict("timeout", passed, total, "the CPU time limit was reached")
        unserializable = next((r["unserializable"] for r in by_index.values() if r.get("unserializable")), None)
        if unserializable is not None:
            return Verdict("unserializable", passed, total,
                           f"a value could not cross between the program and the tests: {unserializable}"[:500])
        if crashed is not None:
            return Verdict("error", passed, total, crashed)
        if not done:
            return Verdict("error", passed, total, f"the program ended the test run early (exit code {exit_code})")
        return Verdict("passed" if passed == total else "failed", passed, total, first_error)


def _check_task_format(task_format: str | None) -> None:
    """Raise :class:`TaskFormatError` naming the known formats when ``task_format`` is set and is none of them."""
    if task_format is not None and task_format not in DATASET_FORMATS and task_format not in FORMATS:
        raise TaskFormatError(f"unknown task format {task_format!r}; known: {', '.join([*DATASET_FORMATS, *FORMATS])}")


def _own_format(row: Mapping[str, Any]) -> str | None:
    """Which of trl-sandbox's own formats (:data:`FORMATS`) ``row`` is, from its fields, else None."""
    if row.get("test_list") is not None:
        return "mbpp"
    if row.get("inputs") is not None or row.get("outputs") is not None:
        return "stdio"
    if row.get("func_name") is not None or row.get("reference") is not None:
        return "call"
    if row.get("entry_point") is not None or row.get("test") is not None:
        return "humaneval"
    return None


def _pytest_functions(source: str) -> tuple[str, ...]:
    """The test functions of a pytest file, as pytest names them after the file: ``test_x`` at module level and
    ``TestX::test_y`` in classes (parameter sets of one function count as one test).

    Raises:
        TaskFormatError: the file does not parse.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise TaskFormatError(f"the pytest file does not parse: {exc}") from None
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            names.append(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            names += [f"{node.name}::{n.name}" for n in node.body
                      if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test")]
    return tuple(dict.fromkeys(names))


def _solution_imports(source: str) -> tuple[str, ...]:
    """Names a pytest file imports from ``solution`` (for choosing among a completion's code blocks)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ()
    return tuple(a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "solution"
                 for a in n.names if a.name != "*")


def _has_test(line: str) -> bool:
    try:
        return any(_is_test(stmt) for stmt in ast.parse(line).body)
    except SyntaxError:
        return True  # a broken test line is the task's problem: it fails in the judge, as it would officially


# -- loading -----------------------------------------------------------------------------------------------------

#: Task sets shipped in the package (``trl_sandbox/data``): name -> file.
BUNDLED_TASKS = {
    "daytona": "daytona_tasks.jsonl",
    "humaneval": "HumanEval.jsonl.gz",
    "quickstart": "quickstart_tasks.jsonl",
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


#: The instruction :func:`chat_rows` puts before a task's code (HumanEval, call-based).
CHAT_CODE_INSTRUCTION = (
    "Complete the following Python function. Write the whole function (with any imports and helpers it needs) in "
    "one ```python code block."
)
#: The instruction :func:`chat_rows` puts after an MBPP task's text and tests (the MBPP paper's prompt format).
CHAT_MBPP_INSTRUCTION = "Write the function in one ```python code block."


#: Where each dataset format publishes the problem statement (the first that is a non-empty string is used).
_STATEMENT_FIELDS = ("question", "question_content", "description", "problem", "prompt", "text")
#: The instruction :func:`chat_rows` puts after a stdin/stdout problem's statement (``{language}``: the language's
#: name, ``{tag}``: its code fence tag).
CHAT_STDIO_INSTRUCTION = (
    "Write a {language} program that reads the input from standard input and prints the answer to standard output. "
    "Put the whole program in one ```{tag} code block."
)
#: The instruction :func:`chat_rows` puts after a function problem's statement (and its starter code).
CHAT_FUNCTION_INSTRUCTION = "Write the solution in one ```python code block."


def problem_prompt(row: Mapping[str, Any], dataset_format: str | None = None, language: str = "python") -> str:
    """The prompt text for a public dataset's row (the user message :func:`chat_rows` makes, and the string prompt
    ``trl-sandbox train`` gives base models for rows without a ``prompt``): its statement (with Codeforces' input
    and output sections), then the starter code when it has one, then what to write (a program for stdin/stdout
    tasks, the function otherwise). ``dataset_format``: default, detected from the fields. ``language``: the
    language a stdin/stdout program is asked in when the row names none (see
    :func:`trl_sandbox.languages.row_language`)."""
    dataset_format = dataset_format or row.get("task_format") or detect_format(row) or "stdio"
    statement = next((row[k] for k in _STATEMENT_FIELDS if isinstance(row.get(k), str) and row[k].strip()), "")
    for title, key in (("Input", "input_format"), ("Output", "output_format")):
        if isinstance(row.get(key), str) and row[key].strip():
            statement += f"\n\n{title}\n{row[key].strip()}"
    try:
        kind = read_row(row, dataset_format)["kind"] if dataset_format in DATASET_FORMATS else "stdio"
    except TaskFormatError:
        kind = "stdio"
    parts = [statement.strip()]
    starter = row.get("starter_code")
    if kind != "stdio" and isinstance(starter, str) and starter.strip():
        parts.append(f"Complete this starter code:\n\n```python\n{starter.rstrip()}\n```")
    info = row.get("test_info")
    if kind == "pytest" and isinstance(info, list):  # KodCode: the functions its tests import
        signatures = [f"def {i['function_name']}{i.get('parameter_list') or '()'}" for i in info
                      if isinstance(i, Mapping) and isinstance(i.get("function_name"), str)]
        if signatures:
            parts.append("The tests call:\n\n```python\n" + "\n".join(signatures) + "\n```")
    if kind == "stdio":
        try:
            lang = LANGUAGES[row_language(row) or language]
        except (TaskFormatError, KeyError):
            lang = LANGUAGES["python"]
        parts.append(CHAT_STDIO_INSTRUCTION.format(language=lang.title, tag=lang.name))
    else:
        parts.append(CHAT_FUNCTION_INSTRUCTION)
    return "\n\n".join(p for p in parts if p)


def chat_rows(rows: Iterable[Mapping[str, Any]], *, system_prompt: str | None = None) -> list[dict[str, Any]]:
    """Turn task rows into rows with a conversational ``prompt`` (TRL's list of messages) for instruct models,
    keeping the code in ``starter_code`` so that scoring never depends on what the model saw.

    - HumanEval and call-based rows: the user message is :data:`CHAT_CODE_INSTRUCTION` and the row's code prompt in
      a fence; ``starter_code`` is the code prompt;
    - MBPP rows (``text`` in the full dataset, ``prompt`` in the sanitized one): the task's text, then "Your code
      should pass these tests:" and the tests (the MBPP paper's format), then :data:`CHAT_MBPP_INSTRUCTION`;
    - public datasets' rows (APPS, code_contests, LiveCodeBench... see :mod:`trl_sandbox.formats`): the problem
      statement (``question``, ``description``, ``question_content``...), the starter code of function problems,
      then :data:`CHAT_STDIO_INSTRUCTION` or :data:`CHAT_FUNCTION_INSTRUCTION`;
    - rows whose ``prompt`` is already conversational are kept as they are.

    Args:
        rows: Task rows (not changed).
        system_prompt: A system message put first, if given.

    Returns:
        New rows (dicts) with every field of the originals.
    """
    out = []
    for row in rows:
        new = dict(row)
        prompt = row.get("prompt")
        dataset_format = row.get("task_format") or detect_format(row)
        if dataset_format in DATASET_FORMATS and not isinstance(prompt, list):
            messages = [{"role": "system", "content": system_prompt}] if system_prompt else []
            new["prompt"] = [*messages, {"role": "user", "content": problem_prompt(row, dataset_format)}]
            out.append(new)
            continue
        if not isinstance(prompt, str):
            out.append(new)
            continue
        if row.get("test_list") is not None:
            text = row.get("text") if isinstance(row.get("text"), str) else prompt
            tests = "\n".join(row.get("test_list") or ())
            content = f"{text}\nYour code should pass these tests:\n\n{tests}\n\n{CHAT_MBPP_INSTRUCTION}"
        else:
            new.setdefault("starter_code", prompt)
            content = f"{CHAT_CODE_INSTRUCTION}\n\n```python\n{prompt.rstrip()}\n```"
        messages = [{"role": "system", "content": system_prompt}] if system_prompt else []
        new["prompt"] = [*messages, {"role": "user", "content": content}]
        out.append(new)
    return out


def read_parquet(path: str | Path) -> list[dict[str, Any]]:
    """Read a Parquet file's rows (the hub's format for most datasets: ``data/train-00000-of-00001.parquet``) as
    dicts, nested structs as dicts and lists, with pyarrow (installed with ``datasets``).

    Raises:
        TaskFormatError: the file is missing or not Parquet.
    """
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise TaskFormatError(f"cannot read {path}: reading Parquet needs pyarrow (pip install pyarrow)") from None
    try:
        return pq.read_table(path).to_pylist()
    except (OSError, ValueError) as exc:
        raise TaskFormatError(f"cannot read {path} as Parquet: {exc}") from None


def task_id_of(row: Mapping[str, Any], task_format: str | None = None) -> str | None:
    """A row's task id without parsing its tests: ``task_id``, else the natural id of its dataset format
    (``problem_id``, ``question_id``, ``name``, ``id``...), as a string; None when it has none (its id is then a hash
    of its content, see :meth:`Task.from_row`)."""
    value = row.get("task_id")
    if value is None:
        fmt = task_format or row.get("task_format") or detect_format(row)
        if fmt in DATASET_FORMATS:
            value = row.get(DATASET_FORMATS[fmt][1])
    return None if value is None else str(value)


def load_tasks(
    source: str | Path | Iterable[Mapping[str, Any]],
    *,
    chat: bool = False,
    system_prompt: str | None = None,
    task_format: str | None = None,
    language: str | None = None,
) -> list[dict[str, Any]]:
    """Load task rows from a bundled set name (see :data:`BUNDLED_TASKS`), a ``.jsonl`` / ``.jsonl.gz`` /
    ``.parquet`` file, or an iterable of rows (a ``datasets.Dataset``, a list of dicts).

    Args:
        source: What to load.
        chat: Turn the rows into conversational prompts with ``starter_code`` (see :func:`chat_rows`).
        system_prompt: With ``chat``: a system message put first.
        task_format: The format of every row (a key of :data:`trl_sandbox.formats.DATASET_FORMATS` or one of
            :data:`FORMATS`), stored in each row's ``task_format`` field, where the reward reads it during training.
            Default: detected per row from its fields.
        language: The language completions are to be written in (``cpp``, ``java``... see
            :mod:`trl_sandbox.languages`), stored in each row's ``language`` field: the reward runs completions as
            that language, and ``chat`` prompts ask for it. Other languages than Python run stdin/stdout rows only.
            Default: each row's own, else the completion's code fence.

    Returns:
        The rows (dicts), in order. They are not validated: use :meth:`Task.from_row`.

    Raises:
        TaskFormatError: the file is missing or unreadable, a line or row is not a JSON object (the message gives
            the line number), or ``task_format`` is unknown.
    """
    _check_task_format(task_format)
    if isinstance(source, (str, Path)):
        name = str(source)
        path = Path(__file__).parent / "data" / BUNDLED_TASKS[name] if name in BUNDLED_TASKS else Path(name)
        if not path.is_file():
            raise TaskFormatError(
                f"cannot read tasks from {name!r}: no such file; bundled sets: {', '.join(BUNDLED_TASKS)}"
            )
        rows = read_parquet(path) if path.suffix == ".parquet" else read_jsonl(path)
    else:
        rows = []
        for i, row in enumerate(source):
            if not isinstance(row, Mapping):
                raise TaskFormatError(f"row {i} is not a mapping (dataset row): {type(row).__name__}")
            rows.append(dict(row))
    if task_format is not None:
        for row in rows:
            row["task_format"] = task_format
    if language is not None:
        from .languages import language_named

        try:
            name = language_named(language).name
        except ConfigurationError as exc:
            raise TaskFormatError(str(exc)) from None
        for row in rows:
            row["language"] = name
    return chat_rows(rows, system_prompt=system_prompt) if chat else rows
