"""The demo repository task's image for the tests (:mod:`trl_sandbox.repos.demo`: built from Debian's packages with
``mmdebstrap``, no registry, no daemon), cached between test runs in ``/var/tmp/trl-sandbox-tests``
(``TRL_SANDBOX_TEST_IMAGES``): the Debian layer once per machine, by .ci/toolchains (the tests themselves run
without a network), the imported image once per uid, by the first test that needs it. Without the layer the tests
that need it are skipped, except in CI (``CI`` set), where that is a failure."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from trl_sandbox.errors import ConfigurationError
from trl_sandbox.images import ImageCache
from trl_sandbox.repos.demo import (F2P, FIXED, IMAGE_NAME, P2P, TEST_SH, TESTS_AFTER, demo_image,  # noqa: F401
                                    harbor_task, r2e_row, swebench_row, swesmith_fix, swesmith_row)

ROOT = Path(os.environ.get("TRL_SANDBOX_TEST_IMAGES", "/var/tmp/trl-sandbox-tests"))


def _shared_dir() -> Path:
    ROOT.mkdir(parents=True, exist_ok=True)
    try:
        os.chmod(ROOT, 0o1777)  # every uid's run (the unprivileged hostile run too) keeps its images here
    except PermissionError:
        pass
    return ROOT


def cache_root() -> Path:
    """This uid's ``TRL_SANDBOX_CACHE`` for the tests (shared by the test processes and runs of this uid)."""
    return _shared_dir() / f"cache-{os.geteuid()}"


def repo_image(work: Path):
    """The demo image in this uid's test cache and the repository's facts: ``(Image, dict)``."""
    try:
        return demo_image(ImageCache(cache_root() / "images"), work, layers=_shared_dir(), build=False)
    except ConfigurationError as exc:
        if os.environ.get("CI"):
            pytest.fail(str(exc))
        pytest.skip(str(exc))
