"""testlib.h for C++ checkers and interactors: trl-sandbox's own implementation of its API, or the user's official
copy (placeholder: completed with the header itself)."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import ConfigurationError

#: The environment variable naming an official testlib.h to build checkers and interactors with.
TESTLIB_ENV = "TRL_SANDBOX_TESTLIB_H"
#: trl-sandbox's own testlib-compatible header.
OWN_HEADER = Path(__file__).resolve().parent / "data" / "testlib" / "testlib.h"


def testlib_header(configured: str | None = None) -> Path:
    """The testlib header to build with: ``configured`` (``sandbox_testlib_header``), else ``TRL_SANDBOX_TESTLIB_H``,
    else trl-sandbox's own.

    Raises:
        ConfigurationError: a named header does not exist.
    """
    named = configured or os.environ.get(TESTLIB_ENV)
    if named:
        path = Path(named).expanduser()
        if not path.is_file():
            raise ConfigurationError(f"testlib header {named!r} does not exist")
        return path
    return OWN_HEADER
