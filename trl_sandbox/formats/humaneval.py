"""HumanEval, MBPP and trl-sandbox's own formats: Python tests that call the program's functions, and plain
stdin/stdout tests.

========== ====================================================== =============================================
format     fields                                                 program and tests
========== ====================================================== =============================================
humaneval  ``entry_point``, ``test`` (defines ``check(candidate)``),  code prefix + completion (or the completion
           ``prompt`` and/or ``starter_code`` (the code prefix)   after the prefix when it defines
                                                                  ``entry_point`` itself); each non-constant
                                                                  assert statement of ``check`` is one test
                                                                  (HumanEval, Chen et al. 2021,
                                                                  ``openai/human-eval`` ``execution.py``)
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

**The code prefix never comes from what the model saw** (:func:`code_prefix`): it is the row's ``starter_code``,
else its ``prompt`` only when that is a string of Python code (HumanEval's own rows).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Mapping, Sequence
from typing import Any

from ..banned import callee_name
from ..errors import TaskFormatError
from ._common import Format, identifier, limit_bytes, limit_seconds, str_field, str_list

#: The stdout judge of trl-sandbox's own stdin/stdout rows.
STDIO_JUDGE: dict[str, Any] = {"mode": "lines"}
#: Statements by which a string prompt shows it is code: it defines or imports something.
_CODE_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)


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


def _is_code(text: str) -> bool:
    """Whether a string prompt is Python code (HumanEval's prompt) rather than an instruction: it parses (alone, or
    as a function header whose body the completion writes) and defines or imports something."""
    for source in (text, text.rstrip() + "\n    pass\n"):
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        return any(isinstance(node, _CODE_DEFINITIONS) for node in tree.body)
    return False


def read_humaneval(row: Mapping[str, Any]) -> dict[str, Any]:
    """A HumanEval row (``openai_humaneval``, MultiPL-E's Python rows): the code prefix, and each non-constant assert
    of ``check(candidate)`` as one test (see :func:`_split_check`)."""
    entry = identifier(row, "entry_point")
    test = str_field(row, "test")
    tests = _split_check(test) or ("check(candidate)",)
    return dict(format="humaneval", prompt=code_prefix(row), func_name=entry, tests=tests,
                setup=f"{_test_module(test)}\ncandidate = {entry}\n", prelude=_imports_of(test), entry_points=(entry,))


def read_mbpp(row: Mapping[str, Any]) -> dict[str, Any]:
    """An MBPP row (``mbpp``, full or sanitized): each assert line of ``test_list`` is one test, after
    ``test_imports`` and ``test_setup_code``."""
    prefix = code_prefix(row)
    imports = "\n".join(str_list(row, "test_imports", required=False))
    setup = imports + "\n" + str_field(row, "test_setup_code", required=False)
    tests = tuple(t for t in str_list(row, "test_list") if _has_test(t))
    return dict(format="mbpp", prompt=prefix, tests=tests, setup=setup, prelude=_imports_of(setup),
                entry_points=_called_names(tests, setup))


def read_call(row: Mapping[str, Any]) -> dict[str, Any]:
    """A call-based row (the TRL Daytona example's): ``func_name`` called on each of ``tests`` (argument
    expressions), compared with ``reference`` (a builtin, or defined by ``reference_code``) on the same argument."""
    prefix = code_prefix(row)
    func_name = identifier(row, "func_name")
    return dict(
        format="call",
        prompt=prefix,
        func_name=func_name,
        tests=str_list(row, "tests"),
        reference=identifier(row, "reference"),
        reference_code=str_field(row, "reference_code", required=False),
        entry_points=(func_name,),
    )


def read_stdio(row: Mapping[str, Any]) -> dict[str, Any]:
    """A stdin/stdout row of trl-sandbox's own: ``inputs`` and ``outputs`` (lists of strings), optional
    ``time_limit`` (seconds) and ``memory_limit`` (megabytes)."""
    inputs, outputs = str_list(row, "inputs"), str_list(row, "outputs")
    if len(inputs) != len(outputs):
        raise TaskFormatError(f"task has {len(inputs)} inputs but {len(outputs)} outputs")
    return dict(format="stdio", tests=inputs, outputs=outputs, default_compare=STDIO_JUDGE,
                time_limit_s=limit_seconds(row.get("time_limit")),
                memory_limit_bytes=limit_bytes(row.get("memory_limit")))


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


def _has_test(line: str) -> bool:
    try:
        return any(_is_test(stmt) for stmt in ast.parse(line).body)
    except SyntaxError:
        return True  # a broken test line is the task's problem: it fails in the judge, as it would officially


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
        if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Call) and callee_name(n.value.func) in own)
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
    """Names of the functions the tests call that neither builtins nor the test code define (MBPP's function).

    When there is none, the function under test is named like a builtin (sanitized MBPP's task 126, ``def sum(a,
    b)``, tested by ``assert sum(10,15) == 6``): it is the name each test calls first, when that is one name. These
    names are also the only builtin names the program may bind in the tests' namespace (see
    :func:`trl_sandbox.harness.judges.judge_assert`)."""
    try:
        known = {n.id for n in ast.walk(ast.parse(defined)) if isinstance(n, ast.Name)}
        known |= {a.asname or a.name.split(".")[0] for n in ast.walk(ast.parse(defined))
                  if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    except SyntaxError:
        known = set()
    names: list[str] = []
    first: set[str] = set()
    for test in tests:
        try:
            tree = ast.parse(test)
        except SyntaxError:
            continue
        calls = [node.func.id for node in ast.walk(tree)
                 if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id not in known]
        first.add(calls[0] if calls else "")
        for name in calls:
            if not hasattr(builtins, name) and name not in names:
                names.append(name)
    if not names and len(first) == 1 and "" not in first:
        return tuple(first)
    return tuple(names)


#: The formats of this module, in detection order (after the public datasets' formats: see the registry).
MBPP = Format("mbpp", read_mbpp, lambda r: r.get("test_list") is not None, dataset=False)
STDIO = Format("stdio", read_stdio, lambda r: r.get("inputs") is not None or r.get("outputs") is not None,
               dataset=False)
CALL = Format("call", read_call, lambda r: r.get("func_name") is not None or r.get("reference") is not None,
              dataset=False)
HUMANEVAL = Format("humaneval", read_humaneval, lambda r: r.get("entry_point") is not None or r.get("test") is not None,
                   dataset=False)
