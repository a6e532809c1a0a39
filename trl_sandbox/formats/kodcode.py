"""KodCode (``KodCode/KodCode-V1``): ``test`` is a pytest file that uses the solution's names, run after ``from
solution import *`` as KodCode's pipeline writes it; each test function is one test (all its parameter sets must
pass).

Official harness: ``KodCode-AI/kodcode`` ``pipeline/run_test.sh``: pytest on the test file beside ``solution.py``, in
one process; a row passes when pytest exits 0. Here pytest runs in the judge against the program's names (see
:mod:`trl_sandbox.harness.pytest_runner`), and behaves as that one process:

- the test file's patches (``unittest.mock.patch``/``patch.object``/``patch.dict``, pytest's ``monkeypatch``) reach
  the program, its own internal calls included: ``patch("builtins.sorted", side_effect=AssertionError)`` forbids
  ``sorted``, ``patch("builtins.input", side_effect=[...])`` and ``monkeypatch.setattr("sys.stdin", ...)`` feed its
  input, ``monkeypatch.setenv`` sets its environment, and the test inspects its mocks' calls as usual;
- a skipped test (``@pytest.mark.skip``, ``pytest.skip()``, ``pytest.importorskip``) and an xfail test that fails, or
  passes when not strict, fail nothing (pytest exits 0): each **counts as passed** in the pass rate; a strict xfail
  test that passes fails. Only the tests skip: a skip raised by the program fails the test. A test file that skips
  itself whole (pytest collects nothing, exit status 5, every program fails alike) is ``invalid_task``;
- each test gives the program its own time (``test_timeout_s`` spent in the program); importing pytest, collecting
  the file and the tests' own waits are never charged to it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from ..errors import TaskFormatError
from ._common import Format


#: What KodCode's pipeline writes before a row's ``test`` in ``test_solution.py`` (``KodCode-AI/kodcode``
#: ``step2.2_gen_unit_tests.py`` and ``step3.3.3_gen_unit_tests_sft.py``: ``"from solution import *\n\n" +
#: test_code``; KodCode's RL preprocessing, ``KodCode-AI/code-r1`` ``examples/data_preprocess/kodcode.py``, adds it
#: too): 716 of the 1,648 tests of the repository's ``demo/`` call the solution's functions with no import of their
#: own.
STAR_IMPORT = "from solution import *\n\n"


def read_kodcode(row: Mapping[str, Any]) -> dict[str, Any]:
    """KodCode-V1: ``test`` is a pytest file that uses the solution's names; it runs as KodCode's pipeline writes it,
    after ``from solution import *`` (:data:`STAR_IMPORT`)."""
    test = row.get("test")
    if not isinstance(test, str) or not test.strip():
        raise TaskFormatError("task field 'test' must be a pytest file (a non-empty string)")
    tests = _pytest_functions(test)
    if not tests:
        raise TaskFormatError("the pytest file defines no test function (def test_...)")
    entries = [*_solution_imports(test), *_test_info_functions(row.get("test_info"))]
    return {"format": "pytest", "tests": tests, "setup": STAR_IMPORT + test,
            "entry_points": tuple(dict.fromkeys(entries))}


def _test_info_functions(test_info: Any) -> list[str]:
    """The functions a row's ``test_info`` names (``[{"function_name": ...}]``): what the tests call, even through
    ``from solution import *`` (where a name of the program's that is a builtin's reaches the tests only when it is
    one of these, see :mod:`trl_sandbox.harness.pytest_runner`)."""
    if not isinstance(test_info, list):
        return []
    return [str(info["function_name"]) for info in test_info
            if isinstance(info, Mapping) and isinstance(info.get("function_name"), str)
            and str(info["function_name"]).isidentifier()]


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


def _is_pytest_file(value: Any) -> bool:
    """A pytest file: it imports from ``solution``, or defines a test function or a ``Test`` class at module level
    (a KodCode test that relies on the star import its pipeline adds)."""
    return isinstance(value, str) and bool(re.search(
        r"^\s*(from\s+solution\s+import|import\s+solution\b)|^(async\s+)?def\s+test\w*\s*\(|^class\s+Test\w*",
        value, re.MULTILINE))


FORMAT = Format("kodcode", read_kodcode, lambda r: r.get("entry_point") is None and _is_pytest_file(r.get("test")),
                id_field="question_id")
