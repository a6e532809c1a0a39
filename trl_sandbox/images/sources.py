"""Where an image comes from, read without a daemon: an OCI image layout directory, an archive of one (``skopeo copy
... oci-archive:``, docker 25's ``docker save``), a ``docker save`` archive of the older format, or an unpacked root
filesystem directory.

Formats, as their specifications define them:

- **OCI image layout** (``image-spec/image-layout.md``): ``oci-layout``, ``index.json``, ``blobs/<alg>/<hex>``. The
  index names manifests (or nested indexes); the manifest names the config and the layers by digest. A multi-platform
  index is resolved to this machine's platform (``linux`` and ``amd64`` / ``arm64``).
- **docker save** (moby's ``image/tarexport``): ``manifest.json``, a list of ``{"Config", "RepoTags", "Layers"}``
  whose paths are inside the archive; the layers' uncompressed digests are the config's ``rootfs.diff_ids``.
- **root filesystem**: a directory holding ``usr/`` or ``bin/`` and ``etc/`` (what ``mmdebstrap`` or ``umoci
  unpack`` write); its digest is computed from its contents.

Every blob is checked against its digest while it is read; the image's digest is its config's (the image ID docker and
podman show), or the root filesystem's content digest.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import stat
import tarfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from .layers import ImageError

#: OCI annotations that hold an image's name in an index: containerd's full name, else the spec's own (which may be
#: a tag alone, as ``skopeo copy ... oci:DIR:TAG`` writes it). The first present is the name.
NAME_ANNOTATIONS = ("io.containerd.image.name", "org.opencontainers.image.ref.name")
_INDEX_TYPES = ("application/vnd.oci.image.index.v1+json", "application/vnd.docker.distribution.manifest.list.v2+json")
_GOARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


@dataclass
class ImageSource:
    """An image as read from its source, before it is unpacked.

    Attributes:
        kind: ``oci-layout``, ``oci-archive``, ``docker-archive`` or ``rootfs``.
        digest: ``sha256:<hex>``: the config's digest (the image ID), or the root filesystem's content digest.
        names: The names the source gives it (``RepoTags``, the index's name annotations).
        config: The image config's ``config`` object (``Env``, ``WorkingDir``, ``User``, ``Entrypoint``, ``Cmd``),
            empty for a root filesystem.
        layers: Per layer, ``(open, blob digest or None, diff_id or None)``; empty for a root filesystem.
        rootfs: The directory, for a root filesystem source.
    """

    kind: str
    digest: str
    names: list[str] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    layers: list[tuple[Callable[[], BinaryIO], str | None, str | None]] = field(default_factory=list)
    rootfs: Path | None = None


class _Files:
    """Files of a directory or of an uncompressed tar archive, by their path inside it."""

    def __init__(self, base: Path, tar: tarfile.TarFile | None = None) -> None:
        self.base, self.tar = base, tar
        self.members = {m.name.removeprefix("./"): m for m in tar.getmembers()} if tar is not None else {}

    def exists(self, name: str) -> bool:
        if self.tar is not None:
            return name in self.members
        return (self.base / name).is_file()

    def opener(self, name: str) -> Callable[[], BinaryIO]:
        if self.tar is None:
            path = self.base / name
            if not path.is_file():
                raise ImageError(f"{self.base}: {name} is missing")
            return lambda: open(path, "rb")
        member = self.members.get(name)
        if member is None or not member.isfile():
            raise ImageError(f"{self.base}: {name} is missing from the archive")
        tar = self.tar
        return lambda: tar.extractfile(member)  # type: ignore[return-value]

    def read(self, name: str) -> bytes:
        with self.opener(name)() as f:
            return f.read()

    def json(self, name: str, digest: str | None = None) -> Any:
        data = self.read(name)
        if digest is not None and "sha256:" + hashlib.sha256(data).hexdigest() != digest:
            raise ImageError(f"{self.base}: {name} is corrupt (its sha256 is not {digest})")
        try:
            return json.loads(data)
        except ValueError as exc:
            raise ImageError(f"{self.base}: {name} is not JSON: {exc}") from None


def _blob(digest: str) -> str:
    algorithm, _, hexdigest = digest.partition(":")
    if algorithm != "sha256" or len(hexdigest) != 64 or not all(c in "0123456789abcdef" for c in hexdigest):
        raise ImageError(f"unsupported or malformed digest {digest!r} (sha256 only)")
    return f"blobs/sha256/{hexdigest}"


def _platform_matches(descriptor: dict[str, Any]) -> bool:
    wanted = descriptor.get("platform") or {}
    arch = _GOARCH.get(platform.machine(), platform.machine())
    return wanted.get("os", "linux") == "linux" and wanted.get("architecture", arch) == arch


def _oci(files: _Files, kind: str) -> ImageSource:
    index = files.json("index.json")
    names: list[str] = []
    manifests = index.get("manifests") or []
    for _ in range(4):  # an index may name indexes (multi-platform images)
        if not manifests:
            raise ImageError(f"{files.base}: index.json names no manifest")
        chosen = [m for m in manifests if _platform_matches(m)]
        if not chosen:  # every manifest names a platform, none this machine's: its programs could not run here
            offered = sorted({f"{(m.get('platform') or {}).get('os')}/{(m.get('platform') or {}).get('architecture')}"
                              for m in manifests})
            raise ImageError(f"{files.base} has no image for linux/{_GOARCH.get(platform.machine(), platform.machine())}"
                             f" (it has {', '.join(offered)})")
        descriptor = chosen[0]
        annotations = descriptor.get("annotations") or {}
        names += [annotations[key] for key in NAME_ANNOTATIONS if annotations.get(key)][:1]
        document = files.json(_blob(descriptor["digest"]), descriptor["digest"])
        if descriptor.get("mediaType") in _INDEX_TYPES or document.get("mediaType") in _INDEX_TYPES:
            manifests = document.get("manifests") or []
            continue
        break
    else:
        raise ImageError(f"{files.base}: indexes nested too deeply")
    config_digest = document["config"]["digest"]
    config = files.json(_blob(config_digest), config_digest)
    diff_ids = (config.get("rootfs") or {}).get("diff_ids") or []
    layers = document.get("layers") or []
    if len(diff_ids) != len(layers):
        raise ImageError(f"{files.base}: the manifest has {len(layers)} layers, the config {len(diff_ids)} diff_ids")
    return ImageSource(kind=kind, digest=config_digest, names=_unique(names), config=config.get("config") or {},
                       layers=[(files.opener(_blob(layer["digest"])), layer["digest"], diff_id)
                               for layer, diff_id in zip(layers, diff_ids)])


def _docker(files: _Files) -> ImageSource:
    manifest = files.json("manifest.json")
    if not isinstance(manifest, list) or not manifest:
        raise ImageError(f"{files.base}: manifest.json names no image")
    if len(manifest) > 1:
        raise ImageError(f"{files.base} holds {len(manifest)} images; save one image per archive")
    entry = manifest[0]
    config_data = files.read(entry["Config"])
    digest = "sha256:" + hashlib.sha256(config_data).hexdigest()
    config = json.loads(config_data)
    diff_ids = (config.get("rootfs") or {}).get("diff_ids") or []
    layers = entry.get("Layers") or []
    if len(diff_ids) != len(layers):
        raise ImageError(f"{files.base}: manifest.json has {len(layers)} layers, the config {len(diff_ids)} diff_ids")
    return ImageSource(kind="docker-archive", digest=digest, names=_unique(entry.get("RepoTags") or []),
                       config=config.get("config") or {},
                       layers=[(files.opener(path), None, diff_id) for path, diff_id in zip(layers, diff_ids)])


def _unique(names: list[str]) -> list[str]:
    return list(dict.fromkeys(names))


def looks_like_rootfs(path: Path) -> bool:
    """Whether ``path`` is a directory that holds a root filesystem (``usr/`` or ``bin/``, and ``etc/``)."""
    return path.is_dir() and (path / "etc").is_dir() and ((path / "usr").is_dir() or (path / "bin").is_dir())


def tree_digest(root: Path) -> str:
    """``sha256:<hex>`` of a directory tree's contents: every entry's relative path, type, permission bits, symlink
    target and file contents, in sorted order (owners and times left out: an unprivileged copy has other ones).
    Devices, sockets and FIFOs count by name and type only."""
    digest = hashlib.sha256()
    for path in _walk(root):
        info = os.lstat(path)
        relative = os.path.relpath(path, root).encode("utf-8", "surrogateescape")
        digest.update(b"%s\0%o\0" % (relative, info.st_mode & 0o170777 & ~0o6000))
        if stat.S_ISLNK(info.st_mode):
            digest.update(os.readlink(path).encode("utf-8", "surrogateescape"))
        elif stat.S_ISREG(info.st_mode):
            with open(path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    digest.update(chunk)
        digest.update(b"\0")
    return "sha256:" + digest.hexdigest()


def _walk(root: Path) -> Iterator[str]:
    entries = sorted(os.scandir(root), key=lambda e: e.name)
    for entry in entries:
        yield entry.path
        if entry.is_dir(follow_symlinks=False):
            yield from _walk(Path(entry.path))


@contextmanager
def open_source(path: str | os.PathLike[str]) -> Iterator[ImageSource]:
    """Read the image at ``path`` (the kinds in the module docstring); blobs stay readable inside the block.

    Raises:
        ImageError: ``path`` is none of them, or its metadata is missing or corrupt.
    """
    source = Path(path)
    if source.is_dir():
        if (source / "index.json").is_file() and (source / "oci-layout").is_file():
            yield _oci(_Files(source), "oci-layout")
        elif (source / "manifest.json").is_file():
            yield _docker(_Files(source))
        elif looks_like_rootfs(source):
            yield ImageSource(kind="rootfs", digest=tree_digest(source), rootfs=source)
        else:
            raise ImageError(f"{source} is not an image: expected an OCI layout (index.json, oci-layout), a docker "
                             "save directory (manifest.json) or a root filesystem (etc/ and usr/)")
        return
    if not source.is_file():
        raise ImageError(f"no image at {source}")
    try:
        tar = tarfile.open(source, mode="r:")  # random access needs an uncompressed archive
    except tarfile.ReadError:
        raise ImageError(f"{source} is not an uncompressed tar archive of an image (decompress a .tar.gz first: "
                         "gunzip, or docker save without | gzip)") from None
    with tar:
        files = _Files(source, tar)
        if files.exists("index.json") and files.exists("oci-layout"):
            yield _oci(files, "oci-archive")
        elif files.exists("manifest.json"):
            yield _docker(files)
        else:
            raise ImageError(f"{source} is a tar archive but not an image (no index.json or manifest.json in it)")
