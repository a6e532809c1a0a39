"""Checkers and interactors in C and C++: compiled once per problem, into a cache shared by the ranks of a run and by
later runs.

A task's checker or interactor (see :func:`trl_sandbox.formats.parse_compare` and
:func:`~trl_sandbox.formats.parse_interactor`) is trusted task code. It is compiled on this machine, never per
completion: the key of a build is the sha256 of its source, its extra files, the testlib header it includes, the
compiler's identity and the flags (DMOJ's judge caches compiled checkers by a hash of sources and flags, for the same
reason: testlib takes seconds to compile). Builds go to :func:`cache_dir` (``TRL_SANDBOX_CACHE``, else
``~/.cache/trl-sandbox``) under ``judge-programs/``: the first process to need a build compiles it under a file
lock, the others (other ranks, later runs) wait for it and read it. A source that does not compile is recorded too
(``KEY.error``), so that the task is ``invalid_task`` everywhere without compiling again; only the compiler's own
verdict is: a compiler that ran past its time or was killed (a busy or out-of-memory machine) records nothing, and
the task is compiled again at its next use.

The binary travels in each request (base64; the judge in the sandbox runs it from a sealed memory file, see
``trl_sandbox/harness/checkers.py``). For backends whose sandboxes run this machine's libraries (``local``) it is
linked against them (about 70 KB for a testlib checker); for the others it is linked statically (``-static``, about
1.8 MB), so that it runs in any Linux image. Either travels zlib-compressed (about 40 %).

testlib: a source that includes ``testlib.h`` gets the task's own copy when its ``files`` ship one (a Polygon
package's), else the header :func:`trl_sandbox.testlib.testlib_header` names: the user's official copy
(``sandbox_testlib_header``, ``TRL_SANDBOX_TESTLIB_H``) or trl-sandbox's own implementation of its API.

:func:`prepare` compiles the checkers and interactors of many tasks in parallel before training (``trl-sandbox
prepare``); otherwise the scorer compiles each on first use.
"""

from __future__ import annotations

import base64
import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import zlib
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .caches import CACHE_ENV, cache_dir
from .errors import ConfigurationError, InfrastructureError, TaskFormatError
#: Compiler and flags per language: the flags of Codeforces' and Polygon's checker builds (``-O2``, C++17).
COMPILERS = {
    "cpp": ("g++", ["-std=gnu++17", "-O2", "-pipe", "-s"]),
    "c": ("gcc", ["-std=gnu11", "-O2", "-pipe", "-s"]),
}
#: Seconds one compilation may take.
COMPILE_TIMEOUT_S = 120.0
#: Bytes of a compiler's message kept in an error.
MESSAGE_LIMIT = 3000
#: What the gcc driver says when a stage of it was killed (the OOM killer, a signal): not the compiler's verdict.
_KILLED = re.compile(r"(Killed signal terminated program|internal compiler error: Killed|terminated by signal)")


@dataclass(frozen=True)
class JudgeBinary:
    """A compiled checker or interactor.

    Attributes:
        key: The build's cache key (sha256 hex of sources, headers, compiler and flags).
        sha256: The sha256 hex of the binary's bytes (the judge checks it).
        path: Where the binary is in the cache.
        compiled: True when this call compiled it, False when it came from the cache.
    """

    key: str
    sha256: str
    path: Path
    compiled: bool = False

    def request_fields(self) -> dict[str, str]:
        """The fields a harness request carries for this binary: ``binary`` (zlib-compressed, base64: a static
        testlib checker of 1.8 MB travels as about 0.7 MB), ``encoding`` and ``sha256`` (of the binary itself)."""
        packed = zlib.compress(self.path.read_bytes(), 6)
        return {"binary": base64.b64encode(packed).decode("ascii"), "encoding": "zlib", "sha256": self.sha256}


@functools.lru_cache(maxsize=8)
def compiler_identity(compiler: str) -> str:
    """The compiler's identity in a build key: its ``--version`` first line and target (``-dumpmachine``).

    Raises:
        ConfigurationError: the compiler is not installed.
    """
    path = shutil.which(compiler)
    if path is None:
        raise ConfigurationError(
            f"compiling a task's checker or interactor needs {compiler}, which is not installed on this machine: "
            f"install it (Debian/Ubuntu: apt-get install {'g++' if compiler == 'g++' else 'gcc'})")
    version = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    machine = subprocess.run([path, "-dumpmachine"], capture_output=True, text=True, timeout=30).stdout
    return f"{(version.splitlines() or [''])[0]} {machine.strip()}"


def _header(spec: Mapping[str, Any], testlib: str | os.PathLike[str] | None) -> bytes:
    """The testlib header the build uses: the task's own (``files["testlib.h"]``), else the configured one."""
    files = spec.get("files") or {}
    if "testlib.h" in files:
        return str(files["testlib.h"]).encode()
    from .testlib import testlib_header

    return Path(testlib_header(None if testlib is None else str(testlib))).read_bytes()


def build_key(spec: Mapping[str, Any], *, static: bool, testlib: str | os.PathLike[str] | None = None) -> str:
    """The cache key of the build of ``spec`` (a checker or interactor spec in C or C++): the sha256 hex of its
    source, extra files, testlib header, compiler identity and flags.

    Raises:
        ConfigurationError: the compiler is missing, or the configured testlib header is.
    """
    source = spec.get("checker", spec.get("interactor"))
    compiler, flags = COMPILERS[spec["language"]]
    blob = json.dumps({
        "source": source, "files": dict(sorted((spec.get("files") or {}).items())), "language": spec["language"],
        "testlib": hashlib.sha256(_header(spec, testlib)).hexdigest(), "compiler": compiler_identity(compiler),
        "flags": [*flags, *(["-static"] if static else [])],
    }, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def compile_judge_program(
    spec: Mapping[str, Any],
    *,
    static: bool,
    testlib: str | os.PathLike[str] | None = None,
    cache: str | os.PathLike[str] | None = None,
) -> JudgeBinary:
    """The compiled binary of ``spec`` (``{"checker" | "interactor": SOURCE, "language": "cpp" | "c", "files"}``),
    from the cache or compiled now (once: other processes wait on the build's file lock).

    Args:
        spec: The checker's or interactor's spec.
        static: Link statically (sandboxes that do not share this machine's libraries).
        testlib: The testlib header to use (default: ``TRL_SANDBOX_TESTLIB_H``, else trl-sandbox's own).
        cache: The cache directory (default :func:`cache_dir`).

    Raises:
        TaskFormatError: the source does not compile (the compiler's message tail; recorded, never retried).
        InfrastructureError: the compiler ran past :data:`COMPILE_TIMEOUT_S` or was killed: not its verdict on the
            source, so nothing is recorded (the next use compiles again).
        ConfigurationError: the compiler is missing, or the cache directory cannot be written.
    """
    key = build_key(spec, static=static, testlib=testlib)
    root = Path(cache) if cache is not None else cache_dir()
    folder = root / "judge-programs"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigurationError(f"cannot create the compile cache {folder}: {exc}; set {CACHE_ENV}") from None
    binary, error = folder / key, folder / f"{key}.error"
    with open(folder / f"{key}.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        compiled = False
        if not binary.exists() and not error.exists():
            _compile(spec, key, static, testlib, folder)
            compiled = True
    if error.exists():
        raise TaskFormatError(f"the {'checker' if 'checker' in spec else 'interactor'} does not compile: "
                              f"{error.read_text(errors='replace')}")
    return JudgeBinary(key, hashlib.sha256(binary.read_bytes()).hexdigest(), binary, compiled)


def _compile(spec: Mapping[str, Any], key: str, static: bool, testlib: Any, folder: Path) -> None:
    """Compile ``spec`` into ``folder/key`` (atomically), or write ``folder/key.error`` when the compiler rejects it.
    Only the compiler's own verdict is recorded: a timeout or a killed compiler raises InfrastructureError."""
    compiler, flags = COMPILERS[spec["language"]]
    what = "checker" if "checker" in spec else "interactor"
    with tempfile.TemporaryDirectory(prefix="trl-build-") as work:
        source = Path(work) / ("main.cpp" if spec["language"] == "cpp" else "main.c")
        source.write_text(spec[what])
        for name, text in (spec.get("files") or {}).items():
            (Path(work) / name).write_text(text)
        if not (Path(work) / "testlib.h").exists():
            (Path(work) / "testlib.h").write_bytes(_header(spec, testlib))
        out = Path(work) / "program"
        argv = [compiler, *flags, *(["-static"] if static else []), "-I", work, "-o", str(out), str(source)]
        if spec["language"] == "c":
            argv.append("-lm")
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S, cwd=work)
        except subprocess.TimeoutExpired:
            raise InfrastructureError(f"compiling the {what} took longer than {COMPILE_TIMEOUT_S:.0f} s (a busy "
                                      "machine?); not recorded, it is compiled again next time") from None
        message = (done.stderr or done.stdout or "").replace(work + "/", "")
        if done.returncode < 0 or _KILLED.search(message):
            raise InfrastructureError(f"the compiler of the {what} was killed ({_tail(message) or done.returncode}); "
                                      "not recorded, it is compiled again next time")
        if done.returncode != 0:
            _atomic_write(folder / f"{key}.error", (message.strip() or "the compiler failed")[-MESSAGE_LIMIT:].encode())
            return
        _atomic_write(folder / key, out.read_bytes(), mode=0o755)


def _tail(message: str) -> str:
    lines = message.strip().splitlines()
    return lines[-1][:200] if lines else ""


def _atomic_write(path: Path, data: bytes, mode: int = 0o644) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def judge_program_specs(task: Any) -> list[dict[str, Any]]:
    """The checker and interactor specs of ``task`` (a :class:`~trl_sandbox.tasks.Task`) that need compiling: its
    stdout judge when it is a C or C++ checker, and its interactor when it is in C or C++."""
    specs = []
    for spec in (task.judge_spec(), task.interactor):
        if spec and spec.get("language") in COMPILERS and ("checker" in spec or "interactor" in spec):
            specs.append(spec)
    return specs


def prepare(
    tasks: Iterable[Any],
    *,
    static: bool,
    testlib: str | os.PathLike[str] | None = None,
    cache: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
) -> dict[str, Any]:
    """Compile the checkers and interactors of ``tasks`` (:class:`~trl_sandbox.tasks.Task` objects) in parallel into
    the cache, each distinct build once. Returns ``{"builds", "compiled", "cached", "errors": [(task_id, message)]}``.

    Raises:
        ConfigurationError: the compiler is missing or the cache cannot be written.
    """
    todo: dict[str, tuple[str, dict[str, Any]]] = {}
    for task in tasks:
        for spec in judge_program_specs(task):
            todo.setdefault(build_key(spec, static=static, testlib=testlib), (task.task_id, spec))
    counts: dict[str, Any] = {"builds": len(todo), "compiled": 0, "cached": 0, "errors": []}

    def build(item: tuple[str, dict[str, Any]]) -> tuple[str, JudgeBinary | str]:
        task_id, spec = item
        try:
            return task_id, compile_judge_program(spec, static=static, testlib=testlib, cache=cache)
        except (TaskFormatError, InfrastructureError) as exc:
            return task_id, str(exc)

    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        for task_id, result in pool.map(build, todo.values()):
            if isinstance(result, str):
                counts["errors"].append((task_id, result))
            elif result.compiled:
                counts["compiled"] += 1
            else:
                counts["cached"] += 1
    return counts


def request_spec(spec: dict[str, Any], *, static: bool, testlib: str | os.PathLike[str] | None = None,
                 cache: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """``spec`` as a harness request carries it: a Python checker or interactor as it is; a C or C++ one compiled
    (:func:`compile_judge_program`) and carried as its binary (``binary``, ``sha256``) in place of its source.

    Raises:
        TaskFormatError: it does not compile.
        ConfigurationError: the compiler is missing or the cache cannot be written.
    """
    if spec.get("language") not in COMPILERS:
        return spec
    built = compile_judge_program(spec, static=static, testlib=testlib, cache=cache)
    what = "checker" if "checker" in spec else "interactor"
    light = {k: v for k, v in spec.items() if k not in (what, "files")}
    return {**light, what: "", **built.request_fields()}


def selftest_request(task: Any, compare: dict[str, Any], test_timeout_s: float) -> dict[str, Any] | None:
    """The harness request that self-tests ``task``'s checker (``compare``, as :func:`request_spec` gives it): the
    jury's answer as the output must be accepted and an empty output must not be paid (see
    ``trl_sandbox/harness/checkers.py``, ``judge_selftest``). None when there is nothing to self-test: no checker,
    or an interactive task (its checker reads what the interactor wrote, not an output)."""
    if "checker" not in compare or task.interactor:
        return None
    return {"mode": "selftest", "compare": compare, "tests": list(task.tests[:64]),
            "expected": list(task.outputs[:64]), "test_timeout_s": test_timeout_s}


def selftest_problem(records: list[dict[str, Any]], answer_is_output: bool = True) -> str | None:
    """Why a checker failed its self-test (its records from :func:`selftest_request`), else None. A checker that
    fails is quarantined: its task is ``invalid_task``, never scored (Frontier-CS issue 106: a checker paid an empty
    program 100/100; a published rewrite of an AetherCode checker swapped the jury's and the program's files).
    ``answer_is_output``: False where the answer file is not an output (the checker spec's ``answer_is_output``):
    only the empty output is checked."""
    answered = [r for r in records if "answer" in r]
    if not answered:
        return None  # no test has a non-empty answer: nothing to compare with
    for record in records:
        verdict = record.get("answer", record.get("empty"))
        if "answer" in record and verdict is not True and answer_is_output:
            reason = verdict.get("invalid") or verdict.get("error") if isinstance(verdict, dict) else verdict
            return f"the checker does not accept the jury's own answer on test {record.get('i')}: {reason}"
        if "empty" in record:
            paid = verdict is True or (isinstance(verdict, dict) and (verdict.get("score") or 0) > 0)
            if paid:
                return f"the checker pays an empty output on test {record.get('i')}"
            if isinstance(verdict, dict) and "invalid" in verdict:  # a program's empty output would void its reward
                return f"the checker fails on an empty output on test {record.get('i')}: {verdict['invalid']}"
    return None
