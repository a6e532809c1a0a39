"""Container images for repository tasks, without a daemon: import (OCI layouts, ``docker save`` archives, root
filesystems), a content-addressed cache every process of the host shares, and pulls through skopeo.

    from trl_sandbox.images import ImageCache
    image = ImageCache().import_image("swebench-astropy.tar")   # once per host; later imports only add names
    image.rootfs                                              # the read-only lower layer of every execution

The command line: ``trl-sandbox images import PATH [--name NAME]``, ``images pull NAME``, ``images list``,
``images remove NAME``.
"""

from .cache import Image, ImageCache
from .layers import ImageError
from .pull import pull_image

__all__ = ["Image", "ImageCache", "ImageError", "pull_image"]
