"""Test images built here, in Python: tar layers, an OCI image layout, a docker save archive (no registry, no
daemon). Each layer is a list of entries ``(name, kind, payload, mode)``: kind ``file`` (payload: bytes), ``dir``,
``symlink`` / ``hardlink`` (payload: the target), ``chardev``, ``fifo``."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from pathlib import Path

_KINDS = {"file": tarfile.REGTYPE, "dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE,
          "chardev": tarfile.CHRTYPE, "fifo": tarfile.FIFOTYPE}


def layer_tar(entries) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, kind, payload, mode in entries:
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.mtime, info.uid, info.gid = _KINDS[kind], mode, 1_700_000_000, 0, 0
            data = None
            if kind == "file":
                info.size, data = len(payload), io.BytesIO(payload)
            elif kind in ("symlink", "hardlink"):
                info.linkname = payload
            elif kind == "chardev":
                info.devmajor, info.devminor = 1, 3
            tar.addfile(info, data)
    return out.getvalue()


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _config(diff_ids, env=("PATH=/usr/bin:/bin",), workdir="/testbed") -> bytes:
    return json.dumps({"architecture": "amd64", "os": "linux",
                       "config": {"Env": list(env), "WorkingDir": workdir},
                       "rootfs": {"type": "layers", "diff_ids": list(diff_ids)}}, sort_keys=True).encode()


def oci_layout(path: Path, layers, *, name: str | None = "example.com/repo/image:1.0", compress=True) -> str:
    """Write an OCI image layout of ``layers`` at ``path``; return the image's digest (its config's)."""
    blobs = path / "blobs" / "sha256"
    blobs.mkdir(parents=True)

    def blob(data: bytes) -> str:
        digest = _sha(data)
        (blobs / digest.split(":")[1]).write_bytes(data)
        return digest

    plain = [layer_tar(entries) for entries in layers]
    stored = [gzip.compress(t, mtime=0) if compress else t for t in plain]
    config = _config([_sha(t) for t in plain])
    manifest = json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": blob(config),
                   "size": len(config)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar" + ("+gzip" if compress else ""),
                    "digest": blob(data), "size": len(data)} for data in stored],
    }).encode()
    descriptor = {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": blob(manifest),
                  "size": len(manifest)}
    if name:
        descriptor["annotations"] = {"io.containerd.image.name": name, "org.opencontainers.image.ref.name": "1.0"}
    (path / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": [descriptor]}))
    (path / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    return _sha(config)


def docker_archive(path: Path, layers, *, tags=("repo/image:2.0",)) -> str:
    """Write a ``docker save`` archive (the format before docker 25) of ``layers``; return the image's digest."""
    plain = [layer_tar(entries) for entries in layers]
    config = _config([_sha(t) for t in plain])
    config_name = _sha(config).split(":")[1] + ".json"
    layer_names = [f"{_sha(t).split(':')[1]}/layer.tar" for t in plain]
    manifest = json.dumps([{"Config": config_name, "RepoTags": list(tags), "Layers": layer_names}]).encode()
    with tarfile.open(path, "w") as tar:
        for name, data in [("manifest.json", manifest), (config_name, config), *zip(layer_names, plain)]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return _sha(config)


def tar_directory(source: Path, target: Path) -> None:
    """An uncompressed tar of ``source``'s contents (an OCI archive, as ``skopeo copy ... oci-archive:`` writes)."""
    with tarfile.open(target, "w") as tar:
        for child in sorted(source.iterdir()):
            tar.add(child, arcname=child.name)
