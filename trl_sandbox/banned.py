"""Banned patterns: what a task forbids a completion to use (``banned_patterns``: ``"sorted("``, ``"import heapq"``),
checked on the code's tokens before it runs (:func:`find_banned_pattern`) and enforced again in the sandbox at run
time (:func:`runtime_bans`: builtins removed, modules made unimportable, see :mod:`trl_sandbox.harness.worker`)."""

from __future__ import annotations

import ast
import builtins
import io
import re
import textwrap
import tokenize
from collections.abc import Sequence
from typing import Any

__all__ = ["callee_name", "find_banned_pattern", "runtime_bans"]

_WORD_OR_SYMBOL = re.compile(r"\w+|[^\w\s]")


#: Calls whose string arguments can become code or a name: strings there are scanned for banned patterns.
_DYNAMIC_CALLS = frozenset({
    "eval", "exec", "compile", "getattr", "setattr", "hasattr", "delattr", "__import__", "import_module",
    "__getattribute__", "__getattr__", "attrgetter", "methodcaller", "find_spec", "reload",
})


#: Objects whose items are names (``__builtins__["sorted"]``, ``globals()["sorted"]``, ``vars(builtins)[...]``,
#: ``builtins.__dict__[...]``, ``sys.modules[...]``): strings used as their keys are scanned too.
_NAME_TABLES = frozenset({"__builtins__", "builtins", "globals", "locals", "vars", "__dict__", "modules"})


def callee_name(node: ast.AST) -> str | None:
    """The name a call or reference ends with: ``f`` of ``f``, ``m`` of ``obj.m``, ``g`` of ``g(x)(y)``; else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call):
        return callee_name(node.func)
    return None


def _dynamic_spans(tree: ast.AST) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) source positions of the parts of the code whose strings can become code or names: the
    arguments of :data:`_DYNAMIC_CALLS`, the keys of :data:`_NAME_TABLES`, and f-strings (their ``{...}`` is
    code)."""
    spans = []
    for node in ast.walk(tree):
        parts: list[ast.AST] = []
        if isinstance(node, ast.Call) and callee_name(node.func) in _DYNAMIC_CALLS:
            parts = [*node.args, *(k.value for k in node.keywords)]
        elif isinstance(node, ast.Subscript) and callee_name(node.value) in _NAME_TABLES:
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
