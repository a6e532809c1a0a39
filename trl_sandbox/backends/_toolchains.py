"""The toolchains of other languages than Python that the local backend's sandboxes can use, found on the sandboxes'
``PATH``.

Two steps, because their costs differ a few hundred times: :func:`toolchain_dirs` (no process, about a millisecond)
says which directories outside the system ones the toolchains need to read, and runs at the backend's start so that
every sandbox's Landlock list holds them from the first execution; :func:`probe_toolchain` runs a compiler's
``--version`` (the JVM alone takes about half a second) and runs when a language's first completion arrives, once per
backend (:class:`Toolchains`; the language is read from the harness request, :func:`request_language`).

Once per backend rather than once per machine (a cache file): a look-up costs at most about a second per language and
run, off the pool's start, and a cache would need a place that other users cannot write and would go stale when a
toolchain is upgraded.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
from pathlib import Path

import anyio

from ..languages import LANGUAGES

logger = logging.getLogger(__name__)


def _tools(language: str, path: str) -> list[str] | None:
    """The executables of ``language``'s toolchain on ``path``, or None when one is missing or the sandbox users
    cannot run it (see :func:`unusable_reason`)."""
    tools = [shutil.which(name, path=path) for name in LANGUAGES[language].toolchain]
    if not all(tools):
        return None
    for tool in tools:
        reason = unusable_reason(str(tool))
        if reason is not None:
            logger.warning("trl-sandbox local backend: %s is on the sandboxes' PATH but they cannot run it: %s",
                           tool, reason)
            return None
    return [str(t) for t in tools]


def unusable_reason(tool: str) -> str | None:
    """Why a user other than the file's owner and group (a sandbox uid) cannot run ``tool``, or None when it can:
    the real file (links followed) must be executable by others and every directory above it searchable by others,
    as the kernel's permission check asks of a sandbox uid. A rustup toolchain under ``/root`` (mode 0700) fails
    here even when a link to it sits in ``/usr/local/bin``."""
    real = os.path.realpath(tool)
    try:
        if not os.stat(real).st_mode & 0o001:
            return f"{real} is not executable by other users"
        parent = os.path.dirname(real)
        while parent not in ("/", ""):
            mode = os.stat(parent).st_mode
            if not mode & 0o001:
                return f"{parent} (mode {mode & 0o777:04o}) is not searchable by other users"
            parent = os.path.dirname(parent)
    except OSError as exc:
        return f"{real}: {exc.strerror}"
    return None


#: Directory names that never belong in a toolchain made readable: installed Python packages (a virtual environment,
#: ``~/.local``: trl-sandbox's own data, other task data), caches (``~/.cache/huggingface``: datasets, tokens) and
#: credentials.
_NEVER_IN_A_TOOLCHAIN = frozenset({"site-packages", "dist-packages", ".cache", ".ssh", ".gnupg", ".aws", ".config",
                                   ".huggingface", ".netrc"})
#: Files looked at, at most, when a toolchain's prefix is searched for those names (a JDK or a Rust sysroot holds a
#: few thousand): a bigger tree is refused rather than searched.
_PREFIX_SEARCH_LIMIT = 50_000


def _unsafe_prefix(prefix: str) -> str | None:
    """Why the directory ``prefix`` (a toolchain's, see :func:`_extra_dirs`) must not become readable to sandboxed
    code, or None when it may: it is ``/`` or one of its direct children (``/opt``, ``/home``), a user's home
    directory or above one, or it holds (at any depth) one of :data:`_NEVER_IN_A_TOOLCHAIN`, or more files than
    :data:`_PREFIX_SEARCH_LIMIT`."""
    import pwd

    real = os.path.realpath(prefix)
    if real.count("/") < 2 or real == "/":
        return f"{real} is / or a directory right under it"
    try:
        homes = {os.path.realpath(entry.pw_dir) for entry in pwd.getpwall() if entry.pw_dir not in ("", "/")}
    except OSError:
        homes = set()
    homes.add(os.path.realpath(os.path.expanduser("~")))
    for home in homes:
        if home == real or home.startswith(real + "/") or real.startswith(home + "/"):
            return f"{real} is, or is in, or holds the home directory {home}"
    seen = 0
    for _dirpath, dirnames, filenames in os.walk(real):
        seen += len(dirnames) + len(filenames)
        found = _NEVER_IN_A_TOOLCHAIN.intersection(dirnames).union(_NEVER_IN_A_TOOLCHAIN.intersection(filenames))
        if found:
            return f"{real} holds {sorted(found)[0]}"
        if seen > _PREFIX_SEARCH_LIMIT:
            return f"{real} holds more than {_PREFIX_SEARCH_LIMIT} files"
    return None


def _extra_dirs(language: str, tools: list[str], system_dirs: tuple[str, ...]) -> list[str]:
    """Directories outside ``system_dirs`` that ``language``'s toolchain reads.

    - A tool whose real file is elsewhere (a link in ``/usr/local/bin`` to a toolchain in ``/opt``, or to the
      ``bin/rustc`` of a rustup toolchain's sysroot): its toolchain's prefix, the directory above its ``bin``
      (rustc finds its standard library there, g++ its headers, node its modules), unless :func:`_unsafe_prefix`
      refuses it (``/opt`` itself, a home directory, a tree holding Python packages, caches or credentials: a
      virtual environment's ``bin/node``); the tool is then left to fail in the sandbox with its own error, and a
      warning says why.
    - Java: the JDK's ``conf`` files link into ``/etc`` (its ``java.security``), which Landlock would otherwise hide;
      nothing else of ``/etc`` becomes readable."""
    extra: set[str] = set()
    inside = tuple(p.rstrip("/") + "/" for p in system_dirs)
    for tool in tools:
        real = os.path.realpath(tool)
        if real.startswith(inside):
            continue
        prefix = os.path.dirname(os.path.dirname(real))
        reason = _unsafe_prefix(prefix)
        if reason is not None:
            logger.warning("trl-sandbox local backend: the toolchain of %s is not made readable to the sandboxes: %s",
                           tool, reason)
            continue
        extra.add(prefix)
    if language == "java":
        conf = Path(os.path.realpath(tools[0])).parent.parent / "conf"
        for file in conf.rglob("*") if conf.is_dir() else ():
            real = os.path.realpath(file)
            if not real.startswith(inside):
                extra.add(os.path.dirname(real))
    return _outermost(extra)


def _outermost(dirs: set[str] | list[str]) -> list[str]:
    """``dirs`` without those under another of them, sorted."""
    top = sorted(set(dirs))
    return [d for d in top if not any(d.startswith(o + "/") for o in top)]


def toolchain_dirs(path: str, system_dirs: tuple[str, ...]) -> list[str]:
    """The directories outside ``system_dirs`` (read-only to sandboxes already) that the toolchains of
    :data:`trl_sandbox.languages.LANGUAGES` on ``path`` need to read. Runs no process: a few ``which`` look-ups and
    a walk of the JDK's ``conf`` directory."""
    found: set[str] = set()
    for lang in LANGUAGES.values():
        tools = _tools(lang.name, path) if lang.native else None
        if tools:
            found.update(_extra_dirs(lang.name, tools, system_dirs))
    return _outermost(found)


def probe_toolchain(language: str, path: str, system_dirs: tuple[str, ...]) -> tuple[str | None, list[str]]:
    """``language``'s compiler or runtime on ``path`` and its version: ``("g++ 12.2.0", extra read-only directories
    it needs, as :func:`toolchain_dirs` gives them)``, or ``(None, [])`` when it is not installed or does not
    run."""
    tools = _tools(language, path)
    if not tools:
        return None, []
    tool = tools[0]
    try:
        # The JVM writes /tmp/hsperfdata_<user> unless told not to: this check leaves nothing behind.
        argv = [tool, "-J-XX:-UsePerfData", "-version"] if language == "java" else [tool, "--version"]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=10, env={"PATH": path, "LC_ALL": "C"},
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return None, []
    text = (proc.stdout or proc.stderr).strip()
    version = re.search(r"\d+(?:\.\d+)+", text.splitlines()[0] if text else "")
    return f"{os.path.basename(tool)} {version.group(0) if version else '?'}", _extra_dirs(language, tools, system_dirs)


# The language of a harness request's program as ``Task.request`` serializes it (json.dumps; the build spec's first
# key). Inside a JSON string every quote is escaped: no program text can match.
_BUILD_LANGUAGE = re.compile(rb'"build": \{"language": "([a-z]+)"')


def request_language(stdin: bytes) -> str | None:
    """The language other than Python of the program that harness request ``stdin`` builds, else None."""
    if b'"build"' not in stdin:  # Python requests have no build spec
        return None
    found = _BUILD_LANGUAGE.search(stdin)
    if found:
        name = found.group(1).decode()
    else:  # serialized another way
        try:
            name = json.loads(stdin)["build"]["language"]
        except (ValueError, TypeError, KeyError):
            return None
    lang = LANGUAGES.get(name) if isinstance(name, str) else None
    return name if lang is not None and lang.native else None


class Toolchains:
    """The toolchains of other languages that the sandboxes have, each looked up (:func:`probe_toolchain`) when the
    first completion in its language arrives, once.

    Args:
        path: The sandboxes' ``PATH``.
        system_dirs: Directories sandboxes may read already.
    """

    def __init__(self, path: str, system_dirs: tuple[str, ...]) -> None:
        self.path = path
        self.system_dirs = system_dirs
        #: ``{"cpp": "g++ 12.2.0"}``: the toolchains found among those looked up.
        self.found: dict[str, str] = {}
        #: The languages looked up (found or not).
        self.probed: set[str] = set()
        self._locks: dict[str, anyio.Lock] = {}

    async def look_up(self, language: str, readable: list[str]) -> list[str]:
        """Look up ``language``'s toolchain unless done: the first of many completions arriving together probes, the
        others wait for it. Returns to the call that probed the directories it reads (see :func:`toolchain_dirs`)
        that are not under one of ``readable`` (found by :func:`toolchain_dirs` at start unless it was installed
        since); ``[]`` to the others, and when it is missing (nothing to do then: the harness reports such a
        completion ``unsupported``, naming what to install)."""
        lock = self._locks.get(language)
        if lock is None:
            lock = self._locks[language] = anyio.Lock()
        async with lock:
            if language in self.probed:
                return []
            tool, dirs = await anyio.to_thread.run_sync(probe_toolchain, language, self.path, self.system_dirs)
            lang = LANGUAGES[language]
            logger.info("trl-sandbox local backend: %s toolchain: %s", lang.title,
                        tool or f"not found (its completions are unsupported; {lang.install})")
            if tool is not None:
                self.found[language] = tool
            self.probed.add(language)
            new = [d for d in dirs if not any(d == r or d.startswith(r + "/") for r in readable)]
            if new:
                logger.info("trl-sandbox local backend: sandboxes may now read %s (%s); fork servers restart",
                            ", ".join(new), tool)
            return new

    def describe(self) -> str:
        """``cpp (g++ 12.2.0), rust (not found); the others probed when first used``."""
        probed = [f"{name} ({self.found.get(name, 'not found')})" for name in LANGUAGES if name in self.probed]
        if not probed:
            return "probed when first used"
        rest = any(lang.native and name not in self.probed for name, lang in LANGUAGES.items())
        return ", ".join(probed) + ("; the others probed when first used" if rest else "")
