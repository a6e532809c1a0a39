"""Prompts for task rows: the user message a public dataset's problem becomes (:func:`problem_prompt`), and rows made
conversational for instruct models, their code kept in ``starter_code`` (:func:`chat_rows`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .errors import TaskFormatError
from .formats import DATASET_FORMATS, detect_format, read_row
from .languages import LANGUAGES, row_language, solutions_language

__all__ = ["CHAT_CODE_INSTRUCTION", "CHAT_FUNCTION_INSTRUCTION", "CHAT_MBPP_INSTRUCTION", "CHAT_STDIO_INSTRUCTION",
           "chat_rows", "problem_prompt"]


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


def problem_prompt(row: Mapping[str, Any], dataset_format: str | None = None, language: str | None = None) -> str:
    """The prompt text for a public dataset's row (the user message :func:`chat_rows` makes, and the string prompt
    ``trl-sandbox train`` gives base models for rows without a ``prompt``): its statement (with Codeforces' input
    and output sections), then the starter code when it has one, then what to write (a program for stdin/stdout
    tasks, the function otherwise). ``dataset_format``: default, detected from the fields. ``language``: the
    language a stdin/stdout program is asked in when the row names none (see
    :func:`trl_sandbox.languages.row_language`); default: the one language of the row's published solutions
    (:func:`trl_sandbox.languages.solutions_language`), else Python. An open-r1 IOI row's prompt is its
    ``problem``, as open-r1's recipe gives it (``dataset_prompt_column: problem``)."""
    dataset_format = dataset_format or row.get("task_format") or detect_format(row) or "stdio"
    if dataset_format == "ioi" and isinstance(row.get("problem"), str) and row["problem"].strip():
        return row["problem"]  # open-r1's own prompt (its recipe's dataset_prompt_column): statement, code, format
    statement = next((row[k] for k in _STATEMENT_FIELDS if isinstance(row.get(k), str) and row[k].strip()), "")
    for title, key in (("Input", "input_format"), ("Output", "output_format")):
        if isinstance(row.get(key), str) and row[key].strip():
            statement += f"\n\n{title}\n{row[key].strip()}"
    try:
        kind = read_row(row, dataset_format)["format"] if dataset_format in DATASET_FORMATS else "stdio"
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
            lang = LANGUAGES[row_language(row) or language or solutions_language(row) or "python"]
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
        mbpp = row.get("test_list") is not None and isinstance(row.get("text") if prompt is None else prompt, str)
        if not isinstance(prompt, str) and not mbpp:
            out.append(new)
            continue
        if mbpp:  # the full dataset's rows have no prompt, only text
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
