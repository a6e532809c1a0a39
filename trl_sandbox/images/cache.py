"""The host's image cache: every image unpacked once, by digest, for every rank, run and process of the host.

Layout, under ``<cache_dir()>/images`` (``TRL_SANDBOX_CACHE``, else ``~/.cache/trl-sandbox``; see
:mod:`trl_sandbox.caches`), or the directory given:

- ``sha256-<hex>/rootfs/``: the root filesystem (the read-only lower layer every execution of a repository task
  mounts under a fresh upper layer of its own), ``sha256-<hex>/image.json``: its record (digest, names, source kind,
  the config's ``Env``/``WorkingDir``/``User``, bytes);
- ``names/<name>``: a name (``sweb.eval.x86_64.astropy__astropy-12907:latest``) and the digest it points to;
- ``.locks/<hex>``: the import lock of one digest; ``.tmp/``: imports in progress.

An import takes the digest's lock (``flock``: two ranks importing one image at once unpack it once, the second waits
and finds it done; a killed import releases it), unpacks into ``.tmp/<hex>-<pid>-<random>`` and renames that into
place, so an image is there whole or not at all; a temporary directory whose process is gone is removed by the next
import of the same digest.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import secrets
import shutil
import stat
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from ..backends._host import remove_stale, rmtree
from ..caches import cache_dir
from .layers import IMAGE_UID, ImageError, LayerApplier
from .sources import open_source

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


@dataclass(frozen=True)
class Image:
    """An image in the cache.

    Attributes:
        digest: ``sha256:<hex>``: the image ID (its config's digest), or a root filesystem's content digest.
        rootfs: The unpacked root filesystem (never to be written: executions mount it read-only).
        names: The names that point to it in this cache.
        kind: What it was imported from: ``oci-layout``, ``oci-archive``, ``docker-archive`` or ``rootfs``.
        size_bytes: Bytes of regular files in the root filesystem (hard links counted once per name).
        config: The image config's ``config`` object: ``Env`` (``["K=V", ...]``), ``WorkingDir``, ``User``,
            ``Entrypoint``, ``Cmd``.
    """

    digest: str
    rootfs: Path
    names: tuple[str, ...] = ()
    kind: str = ""
    size_bytes: int = 0
    config: Mapping[str, Any] = field(default_factory=dict)

    @property
    def env(self) -> dict[str, str]:
        """The image's environment (``Env``), as a mapping."""
        return dict(item.split("=", 1) for item in self.config.get("Env") or [] if "=" in item)

    @property
    def workdir(self) -> str:
        """The image's working directory (``WorkingDir``), ``/`` when it sets none."""
        return self.config.get("WorkingDir") or "/"


class ImageCache:
    """The image cache of a host (see the module docstring for its layout and guarantees).

    Args:
        root: The cache directory; default ``<cache_dir()>/images``.
    """

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root) if root is not None else cache_dir() / "images"

    def _dir(self, digest: str) -> Path:
        return self.root / digest.replace(":", "-")

    def import_image(self, source: str | os.PathLike[str], *, name: str | None = None) -> Image:
        """Unpack the image at ``source`` into the cache, once (see :mod:`trl_sandbox.images.sources` for the
        kinds of source), and record its names.

        Args:
            source: An OCI layout directory, an OCI or ``docker save`` tar archive, or a root filesystem directory.
            name: A name to give it besides the ones the source carries (required for a root filesystem to be found
                by name).

        Returns:
            The image. Importing an image already there only adds the names.

        Raises:
            ImageError: ``source`` is not an image, is corrupt, or the cache cannot be written.
        """
        with open_source(source) as found:
            names = list(dict.fromkeys(found.names + ([name] if name else [])))
            for item in names:
                _check_name(item)
            final = self._dir(found.digest)
            with self._locked(found.digest):
                if not (final / "image.json").is_file():
                    self._unpack(found, final, str(source))
                for item in names:
                    self._name(item, found.digest)
        return self.get(found.digest)

    @contextmanager
    def _locked(self, digest: str) -> Iterator[None]:
        """Hold ``digest``'s import lock (``flock``, blocking; released by the kernel if this process dies)."""
        try:
            for sub in (".locks", ".tmp", "names"):
                (self.root / sub).mkdir(parents=True, exist_ok=True)
            lock = os.open(self.root / ".locks" / digest.split(":")[1], os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise ImageError(f"cannot write the image cache {self.root}: {exc.strerror}; set TRL_SANDBOX_CACHE") \
                from None
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield
        finally:
            os.close(lock)

    def _unpack(self, found: Any, final: Path, what: str) -> None:
        hexdigest = found.digest.split(":")[1]
        tmp_root = self.root / ".tmp"
        remove_stale(tmp_root, f"{hexdigest}-")  # imports of this digest by processes that are gone
        tmp = tmp_root / f"{hexdigest}-{os.getpid()}-{secrets.token_hex(4)}"
        tmp.mkdir()
        try:
            rootfs = tmp / "rootfs"
            rootfs.mkdir()
            if found.rootfs is not None:
                size = _copy_rootfs(found.rootfs, rootfs)
            else:
                applier = LayerApplier(rootfs, what)
                size = sum(applier.apply(opener, digest, diff_id) for opener, digest, diff_id in found.layers)
                applier.finish()
            rootfs.chmod(0o755)
            record = {"digest": found.digest, "kind": found.kind, "size_bytes": size, "config": found.config,
                      "source": what, "imported_at": time.time()}
            (tmp / "image.json").write_text(json.dumps(record, indent=1) + "\n")
            tmp.chmod(0o755)
            if final.exists():  # a directory without its record: an import from before this scheme, or a hand edit
                rmtree(final)
            os.rename(tmp, final)
        except OSError as exc:
            rmtree(tmp)
            raise ImageError(f"unpacking {what} into {self.root} failed: {exc}") from None
        except BaseException:
            rmtree(tmp)
            raise

    def _name(self, name: str, digest: str) -> None:
        path = self.root / "names" / quote(canonical_name(name), safe="")
        tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}")
        tmp.write_text(json.dumps({"name": name, "digest": digest}) + "\n")
        os.replace(tmp, path)

    def _names(self) -> dict[str, tuple[str, str]]:
        """Canonical name -> (the name as given, digest)."""
        folder = self.root / "names"
        found = {}
        if folder.is_dir():
            for entry in folder.iterdir():
                if not entry.name.startswith("."):
                    try:
                        record = json.loads(entry.read_text())
                        found[unquote(entry.name)] = (record["name"], record["digest"])
                    except (OSError, ValueError, KeyError):
                        continue
        return found

    def get(self, reference: str) -> Image:
        """The image a name or digest refers to.

        Args:
            reference: A name as imported (``repo:tag``; ``repo`` alone means ``repo:latest``, and ``docker.io/``
                or ``docker.io/library/`` may be left out or added), a digest ``sha256:<hex>``, or at least 12 of
                its hex digits.

        Raises:
            ImageError: no image of the cache has that name or digest (the message says how to import one).
        """
        digest = self.resolve(reference)
        folder = self._dir(digest)
        try:
            record = json.loads((folder / "image.json").read_text())
        except (OSError, ValueError):
            raise ImageError(f"image {reference!r} ({digest}) is not in the cache {self.root} (or not whole); "
                             "import it: trl-sandbox images import PATH") from None
        names = tuple(sorted(given for given, d in self._names().values() if d == digest))
        return Image(digest=digest, rootfs=folder / "rootfs", names=names, kind=record.get("kind", ""),
                     size_bytes=int(record.get("size_bytes", 0)), config=record.get("config") or {})

    def resolve(self, reference: str) -> str:
        """The digest ``reference`` (see :meth:`get`) names. Raises ImageError when none."""
        if _DIGEST.fullmatch(reference):
            return reference
        known = self._names().get(canonical_name(reference))
        if known is not None:
            return known[1]
        hexdigits = reference.removeprefix("sha256:")
        if len(hexdigits) >= 12 and all(c in "0123456789abcdef" for c in hexdigits):
            matches = [p.name for p in self.root.glob(f"sha256-{hexdigits}*") if (p / "image.json").is_file()]
            if len(matches) == 1:
                return matches[0].replace("-", ":", 1)
        raise ImageError(f"no image named {reference!r} in the cache {self.root}; import it first "
                         "(trl-sandbox images import PATH --name NAME, or trl-sandbox images pull NAME)")

    def list(self) -> list[Image]:
        """Every whole image of the cache, by digest."""
        if not self.root.is_dir():
            return []
        return [self.get(p.name.replace("-", ":", 1)) for p in sorted(self.root.glob("sha256-*"))
                if (p / "image.json").is_file()]

    def remove(self, reference: str) -> Image:
        """Delete an image and the names that point to it (under its import lock).

        Raises:
            ImageError: no such image.
        """
        image = self.get(reference)
        with self._locked(image.digest):
            for key, (_, digest) in self._names().items():
                if digest == image.digest:
                    (self.root / "names" / quote(key, safe="")).unlink(missing_ok=True)
            gone = self.root / ".tmp" / f"removed-{os.getpid()}-{secrets.token_hex(4)}"
            os.rename(self._dir(image.digest), gone)
            rmtree(gone)
        return image


def _check_name(name: str) -> None:
    if not name or len(name) > 255 or any(c.isspace() or ord(c) < 32 for c in name):
        raise ImageError(f"invalid image name {name!r}: expected a name such as repo/name:tag")


def canonical_name(name: str) -> str:
    """A name as docker resolves it, so that its spellings meet: ``python`` -> ``docker.io/library/python:latest``,
    ``owner/repo:tag`` -> ``docker.io/owner/repo:tag``; a registry host (a first component with ``.`` or ``:``, or
    ``localhost``) is kept, and a digest reference (``@sha256:...``) keeps no default tag."""
    first, _, rest = name.partition("/")
    if not rest or ("." not in first and ":" not in first and first != "localhost"):
        name = "docker.io/" + name
    host, _, path = name.partition("/")
    if host == "docker.io" and "/" not in path:
        name = f"docker.io/library/{path}"
    last = name.rsplit("/", 1)[-1]
    if ":" not in last and "@" not in last:
        name += ":latest"
    return name


def _copy_rootfs(source: Path, target: Path) -> int:
    """Copy a root filesystem tree: symlinks as links, no devices or sockets (FIFOs kept), setuid and setgid bits
    dropped, owners kept when root. Returns the bytes of regular files copied."""
    as_root = os.geteuid() == 0
    size = 0
    directories = []
    for dirpath, dirnames, filenames in os.walk(source):
        relative = os.path.relpath(dirpath, source)
        here = target if relative == "." else target / relative
        directories.append((Path(dirpath), here))
        for entry in dirnames + filenames:
            src, dst = Path(dirpath) / entry, here / entry
            info = os.lstat(src)
            mode = stat.S_IMODE(info.st_mode) & 0o1777
            if stat.S_ISLNK(info.st_mode):
                os.symlink(os.readlink(src), dst)
            elif stat.S_ISDIR(info.st_mode):
                os.mkdir(dst, 0o755)
                continue
            elif stat.S_ISREG(info.st_mode):
                shutil.copyfile(src, dst, follow_symlinks=False)
                os.chmod(dst, mode)
                os.utime(dst, ns=(info.st_atime_ns, info.st_mtime_ns))
                size += info.st_size
            elif stat.S_ISFIFO(info.st_mode):
                os.mkfifo(dst, mode)
            else:
                continue  # devices and sockets: a sandbox gets a fresh /dev
            if as_root:
                os.lchown(dst, IMAGE_UID, IMAGE_UID)
    for src, dst in reversed(directories):
        info = os.lstat(src)
        if as_root:
            os.lchown(dst, IMAGE_UID, IMAGE_UID)
        os.chmod(dst, (stat.S_IMODE(info.st_mode) & 0o1777) | (0 if as_root else stat.S_IRWXU))
        os.utime(dst, ns=(info.st_atime_ns, info.st_mtime_ns))
    return size
