"""Programming languages of completions: how each is compiled and run in a sandbox, and how a completion's language
is chosen.

Python is the default and runs in the harness's own worker (see :mod:`trl_sandbox.harness`). The other languages
run stdin/stdout tasks: the harness's worker writes the source into its scratch directory, runs the compiler there
(with every isolation layer the sandbox has: compilers are untrusted input's first reader), then runs the program
once per test. The command lines follow what contest judges use:

=============  =============================================  ================================================
language       compile                                        run
=============  =============================================  ================================================
``cpp``        ``g++ -O2 -std=c++17 -o main main.cpp``        ``./main``
``c``          ``gcc -O2 -std=c11 -o main main.c -lm``        ``./main``
``java``       ``javac -encoding UTF-8 -d . Name.java``       ``java -Xss64m -Xmx<heap> ... <class with main>``
``javascript`` ``node --check main.js`` (a syntax check)      ``node main.js``
``rust``       ``rustc -O --edition 2021 -o main main.rs``    ``./main``
=============  =============================================  ================================================

Java: the source file is named after its public class, and the class that declares ``main`` runs, whatever its name
(as Kattis and Codeforces accept). Its heap is the row's memory limit (256 MiB when the row has none, at most
512 MiB), and its virtual-memory reservations are kept small so that it starts under the sandbox's address-space
limit.

A completion's language comes from, in order (:func:`completion_language`): the row's own (``language``;
PrimeIntellect's ``verification_info.language``), the tag of the completion's code fence (```` ```cpp ````),
``sandbox_language`` of the config when set, then a guess from the row's published solutions (code_contests'
``solutions.language`` when they are all in one language, :func:`solutions_language`), else Python. A guess never
beats what the completion or the user says: a row whose published solutions are all C++ still runs a ```` ```python
```` completion as Python.

Stdlib only: ``trl-sandbox score`` imports neither torch nor trl.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import ConfigurationError, TaskFormatError

__all__ = ["LANGUAGES", "Language", "SOURCE_SUFFIXES", "build_spec", "completion_language", "language_named",
           "row_language", "solutions_language", "with_files"]


@dataclass(frozen=True)
class Language:
    """How one language is compiled and run.

    Args:
        name: Canonical name (``cpp``, ``java``...), the value of ``sandbox_language`` and of a row's ``language``.
        title: Human name (``C++``).
        aliases: Other names and code-fence tags that mean this language (lower case).
        source: File name of the source (Java: taken from the public class instead, see :func:`build_spec`).
        compile: Compiler command line (``{source}`` is replaced), or ``()`` for none.
        run: Command line that runs the program once per test.
        toolchain: Executables that must be on the sandbox's ``PATH``.
        install: What to install when they are missing (Debian package names).
    """

    name: str
    title: str
    aliases: tuple[str, ...]
    source: str
    compile: tuple[str, ...]
    run: tuple[str, ...]
    toolchain: tuple[str, ...]
    install: str

    @property
    def native(self) -> bool:
        """Whether completions run as their own program (every language but Python, which the worker runs)."""
        return self.name != "python"


#: The JVM's own reservations, kept small so that it starts under ``RLIMIT_AS`` (the sandbox's memory limit):
#: class space, code cache, metaspace; one compiler tier and a serial collector (fewer threads).
_JVM_FLAGS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:CICompilerCount=1",
              "-XX:CompressedClassSpaceSize=32m", "-XX:ReservedCodeCacheSize=32m", "-XX:MaxMetaspaceSize=128m",
              "-XX:-UsePerfData", "-Xshare:auto")

LANGUAGES: dict[str, Language] = {
    lang.name: lang
    for lang in (
        Language("python", "Python", ("python3", "py", "py3", "python2", "pypy", "pypy3"), "main.py", (), (),
                 (), ""),
        Language("cpp", "C++", ("c++", "cxx", "cc", "cpp17", "c++17", "gnu++17", "g++"), "main.cpp",
                 ("g++", "-O2", "-std=c++17", "-pipe", "-o", "main", "{source}"), ("./main",), ("g++",),
                 "apt-get install g++"),
        Language("c", "C", ("gcc", "c11"), "main.c",
                 ("gcc", "-O2", "-std=c11", "-pipe", "-o", "main", "{source}", "-lm"), ("./main",), ("gcc",),
                 "apt-get install gcc"),
        Language("java", "Java", ("java8", "java11", "java17", "java21"), "Main.java",
                 ("javac", "-J-Xmx256m", *(f"-J{flag}" for flag in _JVM_FLAGS), "-encoding", "UTF-8", "-d", ".",
                  "{source}"),
                 ("java", "-Xss64m", "-Xmx{heap}", *_JVM_FLAGS, "-cp", ".", "{main_class}"), ("javac", "java"),
                 "apt-get install default-jdk-headless"),
        Language("javascript", "JavaScript", ("js", "node", "nodejs", "javascript (node)"), "main.js",
                 ("node", "--openssl-config=/dev/null", "--check", "{source}"),
                 ("node", "--openssl-config=/dev/null", "--max-old-space-size={heap_mib}", "--stack-size=16000",
                  "{source}"), ("node",), "apt-get install nodejs"),
        Language("rust", "Rust", ("rs", "rustc"), "main.rs",
                 ("rustc", "-O", "--edition", "2021", "-C", "debuginfo=0", "-o", "main", "{source}"), ("./main",),
                 ("rustc",), "apt-get install rustc"),
    )
}

_BY_ALIAS = {alias: lang for lang in LANGUAGES.values() for alias in (lang.name, *lang.aliases)}
#: deepmind/code_contests' ``Language`` enum (``contest_problem.proto``): 1 PYTHON (2), 2 CPP, 3 PYTHON3, 4 JAVA.
CODE_CONTESTS_LANGUAGES = {1: "python", 2: "cpp", 3: "python", 4: "java"}
#: Heap of a Java or JavaScript program when the row gives no memory limit, and the most it gets (bytes).
DEFAULT_HEAP_BYTES, MAX_HEAP_BYTES = 256 << 20, 512 << 20


def language_named(name: str) -> Language:
    """The :class:`Language` called ``name`` (any case; aliases such as ``c++``, ``js``, ``python3``).

    Raises:
        ConfigurationError: no language has that name (the message lists the known ones).
    """
    lang = _BY_ALIAS.get(str(name).strip().lower())
    if lang is None:
        raise ConfigurationError(f"unknown language {name!r}; known: {', '.join(LANGUAGES)}")
    return lang


def row_language(row: Mapping[str, Any]) -> str | None:
    """The language a dataset row asks completions to be written in, else None: the row's ``language`` (what
    ``load_tasks(..., language=)`` writes), else PrimeIntellect's ``verification_info.language``. The languages of a
    row's published solutions are only a guess (:func:`solutions_language`), not read here.

    Raises:
        TaskFormatError: the row names a language that is not supported.
    """
    value = row.get("language")
    if value is None:
        info = row.get("verification_info")
        if isinstance(info, str):
            import json

            try:
                info = json.loads(info)
            except ValueError:
                info = None
        if isinstance(info, Mapping):
            value = info.get("language")
    if value is None or str(value).strip() == "":
        return None
    try:
        return language_named(str(value)).name
    except ConfigurationError as exc:
        raise TaskFormatError(str(exc)) from None


def solutions_language(row: Mapping[str, Any]) -> str | None:
    """A guess from a code_contests row's published solutions: the one language of ``solutions.language``
    (deepmind/code_contests' ``Language`` numbers, :data:`CODE_CONTESTS_LANGUAGES`) when every solution is in it,
    else None (the published rows mostly mix Python, C++ and Java). Used only when neither the completion's code
    fence nor ``sandbox_language`` names a language (see :func:`completion_language`): the solutions say what
    humans wrote, not what the model was asked for."""
    solutions = row.get("solutions")
    numbers = solutions.get("language") if isinstance(solutions, Mapping) else None
    if isinstance(numbers, list) and numbers:
        names = {CODE_CONTESTS_LANGUAGES.get(n) for n in numbers}
        if len(names) == 1 and None not in names:
            return names.pop()
    return None


_FENCE_TAG = re.compile(r"```[ \t]*([\w+#-]+)")


def fence_language(text: str) -> str | None:
    """The language of the last tagged code fence of ``text`` whose tag names a known language, else None."""
    for tag in reversed(_FENCE_TAG.findall(text)):
        lang = _BY_ALIAS.get(tag.lower())
        if lang is not None:
            return lang.name
    return None


def completion_language(row_lang: str | None, text: str, default: str | None = None,
                        guess: str | None = None) -> str:
    """The language to run a completion as, the first that says one: the row's own (:func:`row_language`), the
    completion's last tagged code fence (:func:`fence_language`), ``default`` (``sandbox_language`` when the user set
    it), ``guess`` (the row's solutions' language, :func:`solutions_language`), else Python."""
    return row_lang or fence_language(text) or (language_named(default).name if default else None) or guess or "python"


_COMMENTS_AND_STRINGS = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.DOTALL)
_CLASS = re.compile(r"\b(public\s+)?(?:(?:final|abstract|static|strictfp)\s+)*(?:class|interface|enum|record)\s+"
                    r"([A-Za-z_$][\w$]*)")
_MAIN = re.compile(r"\bstatic\s+(?:final\s+)?(?:public\s+)?void\s+main\s*\(|\bpublic\s+static\s+void\s+main\s*\(")


def java_classes(source: str) -> tuple[str | None, str | None]:
    """(public top-level class, class that declares ``main``) of Java ``source``, each None when absent.

    Comments and string literals are ignored; the class of ``main`` is the innermost class declaration whose body
    contains it. Static nested classes count (``java Outer$Inner`` runs them, as javac names them).
    """
    code = _COMMENTS_AND_STRINGS.sub(lambda m: " " * len(m.group(0)), source)
    public = None
    stack: list[tuple[str, int]] = []  # (binary class name, brace depth of its body)
    pending: str | None = None
    depth = 0
    main_class = None
    events = sorted([(m.start(), "class", m) for m in _CLASS.finditer(code)]
                    + [(m.start(), "main", m) for m in _MAIN.finditer(code)]
                    + [(i, c, None) for i, c in enumerate(code) if c in "{}"], key=lambda e: e[0])
    for _pos, kind, match in events:
        if kind == "class":
            name = match.group(2)
            pending = f"{stack[-1][0]}${name}" if stack else name
            if match.group(1) and not stack and public is None:
                public = name
        elif kind == "{":
            depth += 1
            if pending is not None:
                stack.append((pending, depth))
                pending = None
        elif kind == "}":
            if stack and stack[-1][1] == depth:
                stack.pop()
            depth -= 1
        elif kind == "main" and stack and main_class is None:
            main_class = stack[-1][0]
    return public, main_class


#: The source files of a language that its compiler takes with the program (problemtools' ``config/languages.yaml``
#: ``files`` patterns).
SOURCE_SUFFIXES = {"cpp": (".cc", ".C", ".cpp", ".cxx", ".c++"), "c": (".c",)}


def with_files(build: dict[str, Any], files: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """``build`` (see :func:`build_spec`) with a task's own ``files`` (``(relative path, text)``: a Kattis package's
    ``include/<language>/``) written beside the program and, those that are the language's source files
    (:data:`SOURCE_SUFFIXES`), compiled with it, in path order after the program's source (problemtools compiles
    every source file of the submission's directory together)."""
    suffixes = SOURCE_SUFFIXES.get(str(build.get("language")), ())
    sources = sorted(name for name, _ in files if name.endswith(suffixes)) if suffixes else []
    compile_argv = list(build.get("compile") or ())
    if sources and build.get("source") in compile_argv:
        at = compile_argv.index(build["source"]) + 1
        compile_argv[at:at] = sources
    return {**build, "files": [list(f) for f in files], "compile": compile_argv}


def build_spec(language: str, memory_limit_bytes: int | None = None, source: str = "") -> dict[str, Any]:
    """The harness's ``build`` request for a program in ``language`` (a :class:`Language` name): ``{"language",
    "source" (file name), "compile" (argv or []), "run" (argv)}``.

    Args:
        language: A name of :data:`LANGUAGES` other than ``python``.
        memory_limit_bytes: The row's memory limit: the heap of Java and JavaScript programs (default 256 MiB,
            at most 512 MiB).
        source: The program's source (Java: its public class names the file, its ``main`` class runs).
    """
    lang = LANGUAGES[language]
    heap = min(memory_limit_bytes or DEFAULT_HEAP_BYTES, MAX_HEAP_BYTES)
    filename, main_class = lang.source, "Main"
    if lang.name == "java":
        public, main = java_classes(source)
        filename = f"{public}.java" if public else "Main.java"
        main_class = main or public or "Main"
    values = {"source": filename, "heap": f"{heap >> 20}m", "heap_mib": str(heap >> 20), "main_class": main_class}
    return {
        "language": lang.name,
        "title": lang.title,
        "source": filename,
        "compile": [part.format(**values) for part in lang.compile],
        "run": [part.format(**values) for part in lang.run],
        "toolchain": list(lang.toolchain),
        "managed": lang.name in ("java", "javascript"),
        "install": lang.install,
    }
