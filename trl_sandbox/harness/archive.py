"""The harness as the one file every sandbox gets: a zip archive of this package that ``python`` runs (``zipapp``).

Host side only: this module is not in the archive. The archive holds the package as ``trl_sandbox_harness/`` (every
module of this directory but this one and ``_archive_main.py``), the seccomp filter builder the worker installs when
the backend asks it to forbid process creation (``trl_sandbox/backends/_seccomp.py`` as ``trl_sandbox_seccomp.py``),
the code the judge ends every process of the program with (``trl_sandbox/backends/_reaper.py`` as
``trl_sandbox_reaper.py``, shared with the local backend's launcher), and ``_archive_main.py`` as its
``__main__.py``, which loads the package from the archive and runs :func:`trl_sandbox_harness.__main__.main`. Python
(>= 3.8, even with ``-I -S``) puts the archive first on ``sys.path`` and runs its ``__main__.py``.

Beside each module's source, the archive holds its code as this (the host's) Python compiles it, marshalled, in a
member ``<module path>.pyc-<magic number in hex>`` that starts with the magic number (then ``marshal`` version 2,
whose bytes do not depend on reference counts): a sandbox whose Python has the same one (the same minor version) runs
it instead of compiling the harness on every request (most of a request's own cost; see ``_archive_main.py``); any
other Python compiles the source, as before.

The bytes are a function of the sources and the host's Python version (entries sorted by name, stored uncompressed so
that a Python built without ``zlib`` reads them, a fixed timestamp and fixed permissions, code compiled with fixed
file names): the same source gives the same archive, and :data:`HARNESS_DIGEST` names it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import io
import marshal
import zipfile
from pathlib import Path
from typing import Any

__all__ = ["HARNESS_DIGEST", "HARNESS_FILES", "HARNESS_NAME", "PACKAGE_NAME", "build_archive", "harness_files"]

#: File name of the harness inside each sandbox (written by the pool at creation).
HARNESS_NAME = "trl_sandbox_harness.pyz"
#: The package's name inside the archive (and in the local backend's fork server).
PACKAGE_NAME = "trl_sandbox_harness"
_HERE = Path(__file__).resolve().parent
_SECCOMP = _HERE.parent / "backends" / "_seccomp.py"
_REAPER = _HERE.parent / "backends" / "_reaper.py"
#: Modules of this directory that are not the package's in the archive.
_HOST_ONLY = ("archive.py", "_archive_main.py")
#: DOS timestamps start in 1980: every entry gets this one.
_EPOCH = (1980, 1, 1, 0, 0, 0)


def build_archive(package_dir: Path = _HERE, seccomp: Path = _SECCOMP, reaper: Path = _REAPER) -> bytes:
    """The archive's bytes, built from the sources (see the module docstring).

    Args:
        package_dir: The harness package's directory (default: this one).
        seccomp: The seccomp filter builder's source (default: ``trl_sandbox/backends/_seccomp.py``).
        reaper: The descendant killer's source (default: ``trl_sandbox/backends/_reaper.py``).

    Raises:
        OSError: a source file cannot be read.
    """
    members = {"__main__.py": (Path(package_dir) / "_archive_main.py").read_bytes(),
               "trl_sandbox_seccomp.py": Path(seccomp).read_bytes(),
               "trl_sandbox_reaper.py": Path(reaper).read_bytes()}
    for path in Path(package_dir).glob("*.py"):
        if path.name not in _HOST_ONLY:
            members[f"{PACKAGE_NAME}/{path.name}"] = path.read_bytes()
    suffix = ".pyc-" + importlib.util.MAGIC_NUMBER.hex()
    for name, source in list(members.items()):
        if name != "__main__.py":  # run by Python itself, which compiles it; the rest are the loader's
            code = compile(source, f"<{name}>", "exec", dont_inherit=True)
            # Version 2: no references between objects, whose choice depends on reference counts (the same code
            # gave different bytes in two processes), so the bytes stay a function of the sources.
            members[name[:-3] + suffix] = importlib.util.MAGIC_NUMBER + marshal.dumps(code, 2)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name in sorted(members):
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.create_system = 3  # Unix, so that the permissions below are read as such
            info.external_attr = 0o100644 << 16
            archive.writestr(info, members[name])
    return buffer.getvalue()


@functools.lru_cache(maxsize=None)
def harness_files() -> dict[str, bytes]:
    """Files every sandbox gets at creation: ``{HARNESS_NAME: the archive's bytes}``, built at the first call (it
    compiles the harness: about 70 ms, which ``import trl_sandbox`` does not pay), the same dict after.

    Raises:
        OSError: a source file cannot be read.
    """
    return {HARNESS_NAME: build_archive()}


def __getattr__(name: str) -> Any:
    """``HARNESS_FILES`` (:func:`harness_files`) and ``HARNESS_DIGEST`` (SHA-256 of the archive, hex: the same for the
    same sources), built when first read."""
    if name == "HARNESS_FILES":
        return harness_files()
    if name == "HARNESS_DIGEST":
        return hashlib.sha256(harness_files()[HARNESS_NAME]).hexdigest()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
