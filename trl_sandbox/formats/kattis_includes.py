"""Kattis' ``include/<language>/`` files: a grader or a driver that problemtools adds beside every submission of that
language and compiles with it (problemtools a185fe9: ``model/includes.py``, ``run/source.py``: the files copied into
the submission's directory, then every source file of the language compiled together). C and C++ are supported; a
task's row carries them (``include_files``), and :func:`trl_sandbox.languages.with_files` adds them to a completion's
build.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import TaskFormatError

__all__ = ["INCLUDE_LANGUAGES", "include_files"]

#: problemtools' language ids (``config/languages.yaml``) whose ``include/<id>/`` files are supported here, with
#: trl-sandbox's name of the language.
INCLUDE_LANGUAGES = {"cpp": "cpp", "c": "c"}


def include_files(root: Path) -> dict[str, list[list[str]]]:
    """A Kattis package's ``include/<language>/`` files, compiled with every submission of that language
    (problemtools a185fe9 ``model/includes.py``, ``run/source.py``): ``{language: [[path, text], ...]}``, C and C++.

    Raises:
        TaskFormatError: include files of another language or ``include/default/`` (for every language: a Python
            one runs in the judge's process here), not UTF-8, or named as the submission's (``main.cpp``, ``main``).
    """
    include = root / "include"
    found: dict[str, list[list[str]]] = {}
    if not include.is_dir():
        return found
    for folder in sorted(p for p in include.iterdir() if p.is_dir()):
        files = sorted(p for p in folder.rglob("*") if p.is_file())
        if not files:
            continue
        language = INCLUDE_LANGUAGES.get(folder.name)
        if language is None:
            raise TaskFormatError(f"{root}: include/{folder.name}/ files (added to every submission of that "
                                  "language) are not supported yet; include/cpp/ and include/c/ are")
        entries = []
        for path in files:
            name = path.relative_to(folder).as_posix()
            if name in ("main", f"main.{language}") or any(part.startswith(".") for part in name.split("/")):
                raise TaskFormatError(f"{root}: include/{folder.name}/{name}: a name the submission's own files take")
            try:
                entries.append([name, path.read_text(encoding="utf-8")])
            except UnicodeDecodeError:
                raise TaskFormatError(f"{root}: include/{folder.name}/{name} is not UTF-8 text") from None
        found[language] = entries
    return found
