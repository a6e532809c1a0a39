"""Applying an image's layers to a root filesystem directory, as a container runtime unpacks them.

The rules are the OCI image specification's (``image-spec/layer.md``, "Applying Changesets" and "Whiteouts") and
containerd's applier (``archive/tar.go``), which docker, podman and umoci follow:

- a layer is a tar stream (uncompressed, gzip or zstd); its entries replace what lower layers left at the same path;
- ``.wh.NAME`` deletes ``NAME`` of the lower layers, ``.wh..wh..opq`` in a directory hides every entry the lower
  layers left in it. A whiteout applies to lower layers only: the layer's own entries in that directory stay, so
  the whiteouts are applied first, in a pass of their own;
- paths are resolved inside the root filesystem, as if it were ``/`` (containerd's ``fs.RootPath``): a symlink a
  lower layer made (``lib -> usr/lib``, or ``/usr/lib``) is followed *inside* the root, never to the host's files;
  ``..`` stops at the root. An entry's own last component is never followed: it replaces what is there.

What is not taken from an image, on purpose (the cache is on the host, readable by the host's users): setuid and
setgid bits and file capabilities (``security.capability`` xattrs; no xattr is applied), device nodes (a sandbox
gets a fresh ``/dev`` at run time). Ownership is applied when the importer is root, else every file is the
importer's. Directory modes are applied at the end, so that a read-only directory of one layer does not stop the
next layer from writing into it.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import shutil
import stat
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from ..backends._host import rmtree
from ..errors import ConfigurationError

#: Prefix of a whiteout entry, and the name of an opaque directory's marker (OCI image-spec, layer.md).
WHITEOUT_PREFIX = ".wh."
OPAQUE = ".wh..wh..opq"
#: Symlinks followed while resolving one path inside the root filesystem (Linux's own limit is 40).
MAX_SYMLINKS = 40
#: The host uid and gid every file of an image belongs to when root imports it: nobody's account, which root inside
#: a repository tree maps to (``trl_sandbox/backends/_rootfs.py``), so that the image's files are that root's own
#: (the layer's owners are not kept: images run as root, and one owner is all a one-uid user namespace maps). An
#: import by another user leaves the files that user's, for the same reason. (The local backend's per-sandbox uids
#: start at 61000.)
IMAGE_UID = 60999
_CHUNK = 1 << 20


class ImageError(ConfigurationError):
    """An image cannot be read or unpacked: not an image, a missing or corrupt blob, a layer that breaks the format.
    The message names the image and what is wrong."""


class HashingReader(io.RawIOBase):
    """A read-only stream over ``raw`` that computes the sha256 of every byte read through it.

    Args:
        raw: A binary file object.
    """

    def __init__(self, raw: BinaryIO) -> None:
        self.raw, self.sha256, self.size = raw, hashlib.sha256(), 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        data = self.raw.read(len(buffer))
        self.sha256.update(data)
        self.size += len(data)
        buffer[:len(data)] = data
        return len(data)

    def drain(self) -> str:
        """Read what is left and return ``sha256:<hex>`` of the whole stream."""
        while self.read(_CHUNK):
            pass
        return "sha256:" + self.sha256.hexdigest()


def decompressed(raw: BinaryIO, what: str) -> BinaryIO:
    """``raw`` decompressed by its magic bytes: gzip, zstd (with the ``zstandard`` package) or none.

    Raises:
        ImageError: zstd without the ``zstandard`` package.
    """
    buffered = io.BufferedReader(raw) if not isinstance(raw, io.BufferedReader) else raw  # type: ignore[arg-type]
    magic = buffered.peek(4)[:4]
    if magic[:2] == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=buffered, mode="rb")  # type: ignore[return-value]
    if magic == b"\x28\xb5\x2f\xfd":
        try:
            import zstandard
        except ImportError:
            raise ImageError(f"{what} is zstd-compressed: pip install zstandard") from None
        return zstandard.ZstdDecompressor().stream_reader(buffered)  # type: ignore[return-value]
    return buffered  # type: ignore[return-value]


def _parts(name: str, what: str) -> list[str]:
    """The components of an entry's name, relative to the root; ``..`` is refused (no layer tool writes it)."""
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ImageError(f"{what}: entry {name!r} climbs out of the root filesystem")
    return parts


def resolve(root: Path, parts: list[str], what: str, *, make: bool = True) -> Path | None:
    """The host path of ``parts`` inside ``root``, every component but the last resolved as the root's own
    (symlinks followed inside ``root``: absolute targets from ``root``, ``..`` stopping at it). With ``make``,
    missing directories are made and a file where a directory belongs is replaced by one (the layer's entry says
    there is a directory); without it (a whiteout, which only removes), a missing or non-directory parent gives None.
    Raises ImageError past :data:`MAX_SYMLINKS` symlinks."""
    resolved: list[str] = []
    pending = list(parts[:-1])
    hops = 0
    while pending:
        part = pending.pop(0)
        if part == "..":
            if resolved:
                resolved.pop()
            continue
        here = root.joinpath(*resolved, part)
        try:
            info = os.lstat(here)
        except FileNotFoundError:
            if not make:
                return None
            os.mkdir(here, 0o755)
            resolved.append(part)
            continue
        if stat.S_ISLNK(info.st_mode):
            hops += 1
            if hops > MAX_SYMLINKS:
                raise ImageError(f"{what}: too many symlinks under {'/'.join(parts)!r}")
            target = os.readlink(here)
            if target.startswith("/"):
                resolved = []
            pending = [p for p in target.split("/") if p not in ("", ".")] + pending
            continue
        if not stat.S_ISDIR(info.st_mode):
            if not make:
                return None
            os.unlink(here)  # a file where this layer puts a directory: the layer's directory replaces it
            os.mkdir(here, 0o755)
        resolved.append(part)
    return root.joinpath(*resolved, parts[-1]) if parts else root


def _remove(path: Path) -> None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        rmtree(path)  # also a directory the image left without write or search permission
    else:
        os.unlink(path)


class LayerApplier:
    """Applies layers, in order, to one root filesystem directory (see the module docstring for the rules).

    Args:
        root: The directory that becomes the image's root filesystem (made by the caller, empty at first).
        what: The image's name, for error messages.
    """

    def __init__(self, root: Path, what: str) -> None:
        self.root, self.what = root, what
        self.as_root = os.geteuid() == 0
        self.dir_modes: dict[Path, tuple[int, int, int, float]] = {}
        self.skipped_devices = 0

    def apply(self, open_layer: Callable[[], BinaryIO], digest: str | None, diff_id: str | None) -> int:
        """Apply one layer: a pass that verifies it and applies its whiteouts, then a pass that writes its entries.

        Args:
            open_layer: Opens the layer's blob (as stored: compressed or not), once per pass.
            digest: ``sha256:<hex>`` of the blob as stored (OCI descriptors), or None where the format has none.
            diff_id: ``sha256:<hex>`` of the uncompressed tar (the image config's ``rootfs.diff_ids``), or None.

        Returns:
            The bytes of regular files the layer wrote.

        Raises:
            ImageError: a digest does not match, or the layer is not a valid tar stream.
        """
        what = f"{self.what}: layer {digest or diff_id or '?'}"
        whiteouts: list[list[str]] = []
        with open_layer() as raw:
            stored = HashingReader(raw)
            plain = HashingReader(decompressed(stored, what))  # type: ignore[arg-type]
            try:
                with tarfile.open(fileobj=plain, mode="r|") as tar:
                    for member in tar:
                        parts = _parts(member.name, what)
                        if parts and parts[-1].startswith(WHITEOUT_PREFIX):
                            whiteouts.append(parts)
            except (tarfile.TarError, EOFError, OSError) as exc:
                raise ImageError(f"{what} is not a valid tar stream: {exc}") from None
            got_diff = plain.drain()
            got_digest = stored.drain()
        if digest is not None and got_digest != digest:
            raise ImageError(f"{what} is corrupt: its sha256 is {got_digest}")
        if diff_id is not None and got_diff != diff_id:
            raise ImageError(f"{what} is corrupt: its uncompressed sha256 is {got_diff}, the config says {diff_id}")
        for parts in whiteouts:
            target = resolve(self.root, parts, what, make=False)
            if target is None:
                continue  # nothing below to hide
            parent = target.parent
            if parts[-1] == OPAQUE:
                if parent.is_dir() and not parent.is_symlink():
                    for entry in list(os.scandir(parent)):
                        _remove(Path(entry.path))
            else:
                _remove(parent / parts[-1][len(WHITEOUT_PREFIX):])
        written = 0
        with open_layer() as raw:
            with tarfile.open(fileobj=decompressed(raw, what), mode="r|") as tar:  # type: ignore[arg-type]
                for member in tar:
                    parts = _parts(member.name, what)
                    if parts and parts[-1].startswith(WHITEOUT_PREFIX):
                        continue
                    written += self._entry(tar, member, parts, what)
        return written

    def _entry(self, tar: tarfile.TarFile, member: tarfile.TarInfo, parts: list[str], what: str) -> int:
        if not parts:  # the root itself ("./")
            if member.isdir():
                self.dir_modes[self.root] = (member.mode, member.uid, member.gid, member.mtime)
            return 0
        path = resolve(self.root, parts, what)
        assert path is not None  # made as needed
        mode = member.mode & 0o1777  # setuid and setgid bits are never kept (see the module docstring)
        if member.isdir():
            if not (path.is_dir() and not path.is_symlink()):
                _remove(path)
                os.mkdir(path, 0o755)
            self.dir_modes[path] = (mode, member.uid, member.gid, member.mtime)
            return 0
        if member.isdev():
            if member.isfifo():
                _remove(path)
                os.mkfifo(path, mode)
                self._own(path, member)
            else:
                self.skipped_devices += 1
            return 0
        _remove(path)
        if member.issym():
            os.symlink(member.linkname, path)
            self._own(path, member)
            return 0
        if member.islnk():
            source = resolve(self.root, _parts(member.linkname, what), what, make=False)
            try:
                if source is None:
                    raise FileNotFoundError(2, "No such file or directory")
                os.link(source, path, follow_symlinks=False)
            except OSError as exc:
                raise ImageError(f"{what}: hard link {member.name!r} -> {member.linkname!r}: {exc.strerror}") from None
            return 0
        if not member.isreg():
            return 0
        source_file = tar.extractfile(member)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as out:
            if source_file is not None:
                shutil.copyfileobj(source_file, out, _CHUNK)
        self._own(path, member)
        os.chmod(path, mode)
        os.utime(path, (member.mtime, member.mtime))
        return member.size

    def _own(self, path: Path, member: tarfile.TarInfo) -> None:
        if self.as_root:
            os.lchown(path, IMAGE_UID, IMAGE_UID)

    def finish(self) -> None:
        """Apply the directories' modes, owners and times, deepest first (after every layer)."""
        for path in sorted(self.dir_modes, key=lambda p: len(p.parts), reverse=True):
            mode, uid, gid, mtime = self.dir_modes[path]
            if not path.is_dir() or path.is_symlink():
                continue
            if self.as_root:
                os.lchown(path, IMAGE_UID, IMAGE_UID)
            os.chmod(path, mode | (0 if self.as_root else stat.S_IRWXU))  # the importer can still remove it
            os.utime(path, (mtime, mtime))
