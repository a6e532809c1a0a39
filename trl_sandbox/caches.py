"""The directory trl-sandbox's caches share on a host: compiled checkers and interactors (``judge-programs/``),
container images unpacked for repository tasks (``images/``).

Shared by every rank and run of a host (and of a cluster when it is on a shared file system): each cache publishes
an entry by renaming a finished temporary directory into place, under a file lock of its own.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The environment variable naming the cache directory (default ``~/.cache/trl-sandbox``).
CACHE_ENV = "TRL_SANDBOX_CACHE"


def cache_dir() -> Path:
    """The cache directory: ``TRL_SANDBOX_CACHE``, else ``~/.cache/trl-sandbox`` (``XDG_CACHE_HOME`` honoured)."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "trl-sandbox"
