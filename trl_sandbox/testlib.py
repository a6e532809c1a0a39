"""Which ``testlib.h`` contest checkers and interactors are compiled against.

Contest problems ship checkers and interactors written in C++ against testlib.h (Mike Mirzayanov's library, MIT).
trl-sandbox ships its own, independent implementation of that API (``trl_sandbox/data/testlib/testlib.h``, written
from scratch; none of the original's text) so that they compile without a download. Users who prefer the official
header fetch a pinned release with ``trl-sandbox testlib download`` and point trl-sandbox at it with the
``TRL_SANDBOX_TESTLIB_H`` environment variable or the ``sandbox_testlib_header`` config field.

Standard library only: the host side imports this without torch or trl.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from .errors import ConfigurationError

__all__ = ["OFFICIAL_RELEASE", "OWN_HEADER", "TESTLIB_ENV", "download_testlib", "testlib_header"]

#: trl-sandbox's own testlib-compatible header (package data).
OWN_HEADER: Path = Path(__file__).resolve().parent / "data" / "testlib" / "testlib.h"

#: The official header, pinned to one commit of github.com/MikeMirzayanov/testlib (the last commit touching
#: testlib.h as of 2026-02-06; testlib 0.9.45) and the sha256 of that file.
OFFICIAL_RELEASE: dict[str, str] = dict(
    version="0.9.45",
    commit="2d20123984e9479b8a56ebe0d6a51e23ad7c35b3",
    url="https://raw.githubusercontent.com/MikeMirzayanov/testlib/2d20123984e9479b8a56ebe0d6a51e23ad7c35b3/testlib.h",
    sha256="bb323e3c89285214966076e0d23d5a295c5f6126da7ff198c1276ddb95ecb1a0",
)

#: Environment variable naming a testlib.h to use instead of trl-sandbox's own.
TESTLIB_ENV = "TRL_SANDBOX_TESTLIB_H"

_DEFAULT_DEST = Path("~/.cache/trl-sandbox/testlib/testlib.h")
_MARKERS = (b"registerTestlibCmd", b"InStream")


def _check_header(path: Path, origin: str) -> Path:
    if not path.is_file():
        raise ConfigurationError(
            f"{origin} names {str(path)!r}, which is not a file; point it at a testlib.h (fetch the official one "
            f"with `trl-sandbox testlib download`) or unset it to use trl-sandbox's own header"
        )
    try:
        head = path.read_bytes()
    except OSError as exc:
        raise ConfigurationError(f"{origin} names {str(path)!r}, which cannot be read ({exc})") from exc
    if not all(marker in head for marker in _MARKERS):
        raise ConfigurationError(
            f"{origin} names {str(path)!r}, which does not look like testlib.h (no registerTestlibCmd/InStream); "
            f"point it at a testlib.h or fetch one with `trl-sandbox testlib download`"
        )
    return path.resolve()


def testlib_header(configured: str | None = None) -> Path:
    """The testlib.h to compile checkers and interactors against.

    Args:
        configured: a path from the configuration (``sandbox_testlib_header``); ``None`` or ``""`` for none.

    Returns:
        ``configured`` when given, else the file named by the ``TRL_SANDBOX_TESTLIB_H`` environment variable when
        set and non-empty, else :data:`OWN_HEADER` (trl-sandbox's own implementation of testlib's API). ``~`` is
        expanded.

    Raises:
        ConfigurationError: a named file is missing, unreadable, or does not look like testlib.h (it must mention
            ``registerTestlibCmd`` and ``InStream``, as every testlib.h since the 0.9 series does).
    """
    if configured:
        return _check_header(Path(configured).expanduser(), "sandbox_testlib_header")
    from_env = os.environ.get(TESTLIB_ENV, "")
    if from_env:
        return _check_header(Path(from_env).expanduser(), f"${TESTLIB_ENV}")
    return OWN_HEADER


def download_testlib(dest: Path | None = None, *, timeout: float = 60.0) -> Path:
    """Download the official testlib.h pinned in :data:`OFFICIAL_RELEASE` and verify its sha256.

    Args:
        dest: where to write it; default ``~/.cache/trl-sandbox/testlib/testlib.h``. Parent folders are created.
            The file is written to a temporary name beside it and renamed, so a reader never sees half a file.
        timeout: seconds for the HTTP request.

    Returns:
        The path written (absolute).

    Raises:
        ConfigurationError: the download failed (network, HTTP error), or the bytes' sha256 differs from the
            pinned one (nothing is written then). The message says how to fetch the file by hand instead.
    """
    target = Path(dest if dest is not None else _DEFAULT_DEST).expanduser().resolve()
    url = OFFICIAL_RELEASE["url"]
    by_hand = (
        f"download {url} yourself, check its sha256 is {OFFICIAL_RELEASE['sha256']}, and set "
        f"{TESTLIB_ENV} to its path"
    )
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            data = response.read()
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise ConfigurationError(f"could not download testlib.h from {url} ({exc}); {by_hand}") from exc
    digest = hashlib.sha256(data).hexdigest()
    if digest != OFFICIAL_RELEASE["sha256"]:
        raise ConfigurationError(
            f"testlib.h from {url} has sha256 {digest}, not the pinned {OFFICIAL_RELEASE['sha256']}; refusing to "
            f"use it (a proxy may have altered it); {by_hand}"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".testlib-", suffix=".h.part", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
