"""Pulling an image from a registry without a daemon: ``skopeo copy`` into an OCI layout, then the cache's import.

skopeo (containers/skopeo, in Debian and Ubuntu as ``skopeo``) is the registry client podman and buildah use: it
speaks the registry API with the credentials of ``~/.docker/config.json`` or ``$XDG_RUNTIME_DIR/containers/auth.json``
(``skopeo login``), picks this machine's platform from a multi-platform image and verifies every blob. trl-sandbox
runs it as a subprocess and never talks to a registry itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .cache import Image, ImageCache
from .layers import ImageError

#: Seconds a pull may take before it is stopped (a large image over a slow link takes minutes).
PULL_TIMEOUT_S = 3600.0


def pull_image(name: str, *, cache: ImageCache | None = None, timeout_s: float = PULL_TIMEOUT_S) -> Image:
    """Pull ``name`` from its registry with skopeo and import it into ``cache`` under that name.

    Args:
        name: A reference as docker takes it (``python:3.11-slim``, ``ghcr.io/owner/repo:tag``,
            ``docker.io/swebench/sweb.eval.x86_64.astropy_1776_astropy-12907:latest``).
        cache: The cache (default: the host's, :class:`ImageCache`).
        timeout_s: Seconds the copy may take.

    Returns:
        The imported image.

    Raises:
        ImageError: skopeo is not installed (the message says how to install it, or how to import an image saved
            elsewhere), the pull failed (skopeo's own message), or it took longer than ``timeout_s``.
    """
    skopeo = shutil.which("skopeo")
    if skopeo is None:
        raise ImageError("pulling an image needs skopeo, which is not installed (apt-get install skopeo); or, on a "
                         "machine that has the image, `docker save NAME -o image.tar` (or `skopeo copy`) and "
                         "`trl-sandbox images import image.tar`")
    cache = cache or ImageCache()
    cache.root.mkdir(parents=True, exist_ok=True)
    reference = name if "://" not in name else name.split("://", 1)[1]
    with tempfile.TemporaryDirectory(prefix=".pull-", dir=cache.root) as tmp:
        layout = Path(tmp) / "layout"
        command = [skopeo, "copy", "--quiet", f"docker://{reference}", f"oci:{layout}:image"]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s,
                                  env={**os.environ, "TMPDIR": tmp})
        except subprocess.TimeoutExpired:
            raise ImageError(f"pulling {name} took more than {timeout_s:.0f} s; stopped") from None
        if done.returncode != 0:
            message = (done.stderr or done.stdout).strip().splitlines()
            raise ImageError(f"pulling {name} failed: {message[-1] if message else f'skopeo exit {done.returncode}'}")
        return cache.import_image(layout, name=reference)
