"""``trl-sandbox images``: the host's image cache for repository tasks (see :mod:`trl_sandbox.images`).

    trl-sandbox images import PATH [--name NAME]   # an OCI layout, an OCI or docker save tar, or a root filesystem
    trl-sandbox images pull NAME                   # from a registry, through skopeo (the machine must reach it)
    trl-sandbox images list
    trl-sandbox images remove NAME_OR_DIGEST

Every subcommand takes ``--cache DIR`` (default ``$TRL_SANDBOX_CACHE/images``, else ``~/.cache/trl-sandbox/images``).
"""

from __future__ import annotations

import argparse
import time

from ._cli_parsing import one_line_errors

__all__ = ["images_main"]


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000  # type: ignore[assignment]
    return f"{n} B"


def images_main(argv: list[str]) -> int:
    """``trl-sandbox images import|pull|list|remove``: prints one line per image. Returns 0; errors are
    :class:`~trl_sandbox.images.ImageError` (one line, exit status 2 via :func:`trl_sandbox.cli.main`)."""
    from .images import ImageCache, pull_image

    parser = one_line_errors(argparse.ArgumentParser(prog="trl-sandbox images",
                                                     description="The image cache of repository tasks."))
    parser.add_argument("--cache", default=None, help="The cache directory (default ~/.cache/trl-sandbox/images).")
    sub = parser.add_subparsers(dest="action", required=True)
    imp = sub.add_parser("import", help="unpack an OCI layout, an OCI or docker save tar, or a root filesystem")
    imp.add_argument("path")
    imp.add_argument("--name", default=None, help="a name to give it (besides the ones it carries)")
    pull = sub.add_parser("pull", help="pull from a registry with skopeo, then import")
    pull.add_argument("name")
    sub.add_parser("list", help="the images of the cache")
    rm = sub.add_parser("remove", help="delete an image and its names")
    rm.add_argument("reference")
    for p in (imp, pull, rm, sub.choices["list"]):
        p.add_argument("--cache", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        one_line_errors(p)
    ns = parser.parse_args(argv)
    cache = ImageCache(ns.cache)
    if ns.action in ("import", "pull"):
        start = time.monotonic()
        image = cache.import_image(ns.path, name=ns.name) if ns.action == "import" else pull_image(ns.name, cache=cache)
        print(f"{image.digest} {_size(image.size_bytes)} {image.rootfs} ({', '.join(image.names) or 'no name'}; "
              f"{time.monotonic() - start:.1f} s)")
    elif ns.action == "list":
        images = cache.list()
        for image in images:
            print(f"{image.digest[:19]}  {_size(image.size_bytes):>9}  {image.kind:<14} {', '.join(image.names) or '-'}")
        print(f"{len(images)} image(s) in {cache.root}")
    else:
        image = cache.remove(ns.reference)
        print(f"removed {image.digest} ({', '.join(image.names) or 'no name'})")
    return 0
