"""Completions: the text of a completion as TRL passes it, the code in it (:func:`extract_code`), and what of a
function-body continuation goes into the program (:func:`continuation_code`)."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .languages import LANGUAGES

__all__ = ["completion_text", "continuation_code", "extract_code", "extract_patch", "is_continuation"]

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_PYTHON_TAGS = {"python", "py", "python3", "py3", ""}


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


_DIFF_TAGS = {"diff", "patch", "udiff"}
_DIFF_START = re.compile(r"^(?:diff --git |--- \S.*\n\+\+\+ )", re.MULTILINE)


def extract_patch(completion: Any) -> str:
    """The unified diff a completion of a repository task proposes (SWE-bench's ``model_patch``).

    Rules, in order: reasoning before the last ``</think>`` is dropped; among markdown blocks, the **last** one
    tagged ``diff``/``patch`` or whose text starts as a diff (``diff --git``, or ``---`` then ``+++``) is the patch
    (the last, as :func:`extract_code` takes the last code block: an answer that shows a first try and then the fix
    is scored on the fix); without such a block, the text from its first diff header to its end. The patch ends with
    a newline (``git apply`` refuses a last hunk without one). No diff gives ``""``: a patch that does not apply,
    the model's failure.

    Raises:
        TypeError: the completion is neither a string nor a list of messages.
    """
    text = completion_text(completion)
    if "</think>" in text:
        text = text.rsplit("</think>", 1)[1]
    blocks = [code for tag, code in _FENCE.findall(text)
              if tag.lower() in _DIFF_TAGS or _DIFF_START.match(code.lstrip("\n"))]
    if blocks:
        patch = blocks[-1].lstrip("\n")
    else:
        start = _DIFF_START.search(text)
        patch = text[start.start():] if start else ""
    return patch if not patch or patch.endswith("\n") else patch + "\n"


def is_continuation(code: str) -> bool:
    """Whether ``code`` continues a function body (its first non-blank line is indented)."""
    first = next((line for line in code.splitlines() if line.strip()), "")
    return first[:1] in (" ", "\t")


@functools.lru_cache(maxsize=4096)  # a task's prompt, once per task rather than once per completion
def close_header(prefix: str) -> str:
    """``prefix`` with an open last header closed: a code prefix that ends in a signature without a body (an
    MBPP-style row whose prompt is ``def inc(x):``) gets a ``pass`` body at its indentation, so that a completion
    that writes the whole function after it runs as it would alone (its own definition replaces the closed one, the
    prefix's imports and helpers stay), instead of failing with ``IndentationError``. A prefix that parses, or that
    a ``pass`` does not mend, is returned unchanged (an empty string stays empty)."""
    try:
        ast.parse(prefix)
        return prefix
    except (SyntaxError, ValueError):
        pass
    last = next((line for line in reversed(prefix.splitlines()) if line.strip()), "")
    indent = last[: len(last) - len(last.lstrip())]
    closed = prefix.rstrip("\n") + "\n" + indent + "    pass\n"
    try:
        ast.parse(closed)
    except (SyntaxError, ValueError):
        return prefix
    return closed


#: First words of a line that continues the statement before it (``if``/``try``/``for``/``while`` clauses).
_CLAUSE = re.compile(r"(?:else|elif|except|finally)\b")


def _top_level_chunks(lines: list[str]) -> list[list[str]]:
    """Split lines into top-level statements' lines: a chunk starts at an unindented non-empty line; indented and
    blank lines, lines closing a bracket, and the clauses of a compound statement (``else``, ``elif``, ``except``,
    ``finally``) continue it; a decorator line joins the chunk after it."""
    chunks: list[list[str]] = []
    decorators: list[str] = []
    for line in lines:
        starts = (bool(line.strip()) and line[:1] not in (" ", "\t", ")", "]", "}")
                  and not (_CLAUSE.match(line) and chunks and not decorators))
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


def continuation_code(code: str) -> str:
    """A function-body continuation as it goes into the program: its indented lines, then every top-level statement
    written after the body, in order, as the official harnesses run the completion (one module: human-eval's
    ``prompt + completion + test + check(entry_point)``, MBPP's completion then its asserts). Helpers, imports and
    constants after the body are there for it to use; a call, a ``print``, the model's own ``assert``, ``sys.exit(1)``
    or ``os._exit(0)`` runs as it would there, before the tests (HumanEval and MBPP follow the same rule). Only what
    is not Python is left out: a top-level chunk that does not parse (prose after the function, a statement the
    length limit cut), which a base model sampled without stop sequences writes and the official harness would fail
    with a ``SyntaxError``."""
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
            ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        kept.append(source)
    program = "\n".join(body).rstrip() + "\n"
    if kept:
        program += "\n\n" + "\n\n\n".join(kept) + "\n"
    return program
