"""The toolchains of other languages than Python that the local backend's sandboxes can use: found on the sandboxes'
``PATH`` at start, with the directories outside the system ones that they need to read."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from ..languages import LANGUAGES


def detect_toolchains(path: str, system_dirs: tuple[str, ...]) -> tuple[dict[str, str], list[str]]:
    """The compilers and runtimes of :data:`trl_sandbox.languages.LANGUAGES` on the sandboxes' ``PATH`` (``path``):
    ``({language: "tool version"}, extra read-only directories they need)``, those under ``system_dirs`` (read-only to
    sandboxes already) left out. The JDK's ``conf`` files link into ``/etc`` (its ``java.security``), which Landlock
    would otherwise hide; nothing else of ``/etc`` becomes readable."""
    found: dict[str, str] = {}
    extra: set[str] = set()
    for lang in LANGUAGES.values():
        if not lang.native:
            continue
        tools = [shutil.which(name, path=path) for name in lang.toolchain]
        if not all(tools):
            continue
        tool = str(tools[0])
        try:
            # The JVM writes /tmp/hsperfdata_<user> unless told not to: this check leaves nothing behind.
            argv = [tool, "-J-XX:-UsePerfData", "-version"] if lang.name == "java" else [tool, "--version"]
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=10, env={"PATH": path, "LC_ALL": "C"},
                                  check=False)
            first = (proc.stdout or proc.stderr).strip().splitlines()[0] if (proc.stdout or proc.stderr) else ""
        except (OSError, subprocess.SubprocessError):
            continue
        version = re.search(r"\d+(?:\.\d+)+", first)
        found[lang.name] = f"{os.path.basename(tool)} {version.group(0) if version else '?'}"
        if lang.name == "java":
            conf = Path(os.path.realpath(tool)).parent.parent / "conf"
            for file in conf.rglob("*") if conf.is_dir() else ():
                real = os.path.realpath(file)
                if not real.startswith(tuple(p + "/" for p in system_dirs)):
                    extra.add(os.path.dirname(real))
    top = sorted(extra)
    return found, [d for d in top if not any(d.startswith(o + "/") for o in top)]
