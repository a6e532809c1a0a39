"""The image cache of repository tasks (``trl_sandbox.images``): OCI layouts, OCI and ``docker save`` archives and
root filesystems unpacked once, by digest, with the OCI layer rules (whiteouts, opaque directories, paths resolved
inside the image), nothing of an image reaching the host's files, and two processes importing one image at once.
The images are built here (tests/_images.py): no registry, no daemon."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from _images import docker_archive, oci_layout, tar_directory
from trl_sandbox.cli import main
from trl_sandbox.images import ImageCache, ImageError

BASE = [
    ("etc", "dir", None, 0o755),
    ("etc/os-release", "file", b"ID=test\n", 0o644),
    ("usr/bin/tool", "file", b"#!/bin/sh\necho tool\n", 0o4755),  # setuid: dropped
    ("usr/lib/a.so", "file", b"A", 0o644),
    ("lib", "symlink", "usr/lib", 0o777),
    ("abs", "symlink", "/usr", 0o777),  # absolute: resolved inside the image, never on the host
    ("tmp", "dir", None, 0o1777),
    ("d/x", "file", b"x", 0o644),
    ("d/y", "file", b"y", 0o644),
    ("o/old", "file", b"old", 0o644),
    ("dev/null", "chardev", None, 0o666),
    ("ro", "dir", None, 0o555),
    ("usr/bin/hard", "hardlink", "usr/bin/tool", 0o4755),
]
TOP = [
    ("d/.wh.x", "file", b"", 0o644),
    ("nowhere/deep/.wh.x", "file", b"", 0o644),  # a whiteout over nothing: hides nothing, makes nothing
    ("o/.wh..wh..opq", "file", b"", 0o644),
    ("o/new", "file", b"new", 0o644),
    ("lib/b.so", "file", b"B", 0o644),  # through the lower layer's symlink: usr/lib/b.so
    ("abs/share/c", "file", b"C", 0o644),  # through /usr: the image's usr/share/c
    ("ro/written", "file", b"w", 0o644),  # into a directory the lower layer made read-only
    ("etc/os-release", "file", b"ID=top\n", 0o644),
]


def check_rootfs(rootfs: Path) -> None:
    assert (rootfs / "etc/os-release").read_text() == "ID=top\n"
    assert not (rootfs / "d/x").exists() and (rootfs / "d/y").read_text() == "y"
    assert sorted(os.listdir(rootfs / "o")) == ["new"]
    assert (rootfs / "usr/lib/b.so").read_text() == "B" and os.readlink(rootfs / "lib") == "usr/lib"
    assert (rootfs / "usr/share/c").read_text() == "C" and os.readlink(rootfs / "abs") == "/usr"
    assert (rootfs / "ro/written").read_text() == "w"
    tool = os.stat(rootfs / "usr/bin/tool")
    assert stat.S_IMODE(tool.st_mode) == 0o755  # no setuid bit in the host's cache
    assert os.stat(rootfs / "usr/bin/hard").st_ino == tool.st_ino
    assert stat.S_IMODE(os.stat(rootfs / "tmp").st_mode) & 0o1777 == 0o1777
    assert not (rootfs / "nowhere").exists()
    assert not (rootfs / "dev/null").exists()  # no device node: a sandbox gets a fresh /dev
    assert not any(name.startswith(".wh.") for _, _, files in os.walk(rootfs) for name in files)


def test_an_oci_layout_is_unpacked_with_the_layer_rules(tmp_path):
    digest = oci_layout(tmp_path / "layout", [BASE, TOP])
    cache = ImageCache(tmp_path / "cache")
    image = cache.import_image(tmp_path / "layout")
    assert image.digest == digest and image.kind == "oci-layout"
    assert image.names == ("example.com/repo/image:1.0",)
    assert image.env == {"PATH": "/usr/bin:/bin"} and image.workdir == "/testbed"
    check_rootfs(image.rootfs)
    assert cache.get("example.com/repo/image:1.0") == image == cache.get(digest) == cache.get(digest[7:19])
    assert list((tmp_path / "cache" / ".tmp").iterdir()) == []
    again = cache.import_image(tmp_path / "layout", name="other:tag")  # already there: only the name is added
    assert again.rootfs == image.rootfs and set(again.names) == {"example.com/repo/image:1.0", "other:tag"}
    assert [i.digest for i in cache.list()] == [digest]


def test_docker_save_and_oci_archives_give_the_same_tree(tmp_path):
    digest = docker_archive(tmp_path / "saved.tar", [BASE, TOP], tags=("repo/image:2.0", "plain"))
    oci_layout(tmp_path / "layout", [BASE, TOP], compress=False, name=None)
    tar_directory(tmp_path / "layout", tmp_path / "oci.tar")
    cache = ImageCache(tmp_path / "cache")
    saved = cache.import_image(tmp_path / "saved.tar")
    assert saved.digest == digest and saved.kind == "docker-archive"
    check_rootfs(saved.rootfs)
    assert cache.get("repo/image:2.0") == cache.get("plain:latest") == cache.get("docker.io/library/plain")
    archive = cache.import_image(tmp_path / "oci.tar", name="from-archive")
    assert archive.digest == digest  # the same config: the same image, unpacked once
    assert archive.rootfs == saved.rootfs and "from-archive" in archive.names
    alone = ImageCache(tmp_path / "other").import_image(tmp_path / "oci.tar")
    assert alone.kind == "oci-archive" and alone.digest == digest
    check_rootfs(alone.rootfs)


def test_a_root_filesystem_directory_is_imported_by_its_contents(tmp_path):
    tree = tmp_path / "tree"
    for path, text in {"etc/hostname": "box\n", "usr/bin/python3": "#!x\n"}.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(text)
    (tree / "bin").symlink_to("usr/bin")
    os.mkfifo(tree / "fifo")
    cache = ImageCache(tmp_path / "cache")
    image = cache.import_image(tree, name="tree:1")
    assert image.kind == "rootfs" and (image.rootfs / "etc/hostname").read_text() == "box\n"
    assert os.readlink(image.rootfs / "bin") == "usr/bin" and stat.S_ISFIFO(os.lstat(image.rootfs / "fifo").st_mode)
    assert cache.import_image(tree).digest == image.digest  # the same contents: the same image
    (tree / "etc/hostname").write_text("other\n")
    assert cache.import_image(tree, name="tree:2").digest != image.digest


@pytest.mark.parametrize("layer, message", [
    ([("../escape", "file", b"x", 0o644)], "climbs out"),
    ([("a/../../escape", "file", b"x", 0o644)], "climbs out"),
    ([("link", "hardlink", "../../etc/passwd", 0o644)], "climbs out"),
    ([("link", "hardlink", "etc/shadow", 0o644)], "hard link"),  # the image's own, which it does not have
    ([("link", "hardlink", "no/such/dir/file", 0o644)], "hard link"),
])
def test_a_layer_that_reaches_out_of_the_image_is_refused_and_leaves_nothing(tmp_path, layer, message):
    oci_layout(tmp_path / "layout", [layer])
    cache = ImageCache(tmp_path / "cache")
    with pytest.raises(ImageError, match=message):
        cache.import_image(tmp_path / "layout")
    assert cache.list() == [] and list((tmp_path / "cache" / ".tmp").iterdir()) == []


def test_writes_through_an_images_symlinks_stay_in_the_image(tmp_path):
    """A symlink to the host's root, then entries under it: they land in the image's own directories."""
    outside = tmp_path / "outside"
    outside.mkdir()
    evil = [("root", "symlink", "/", 0o777), ("up", "symlink", "../../../../../..", 0o777),
            ("host", "symlink", str(outside), 0o777)]
    writes = [("root/etc/pwned", "file", b"1", 0o644), ("up/pwned2", "file", b"2", 0o644),
              ("host/pwned3", "file", b"3", 0o644)]
    oci_layout(tmp_path / "layout", [evil, writes])
    image = ImageCache(tmp_path / "cache").import_image(tmp_path / "layout")
    assert (image.rootfs / "etc/pwned").read_text() == "1" and (image.rootfs / "pwned2").read_text() == "2"
    assert (image.rootfs / str(outside).lstrip("/") / "pwned3").read_text() == "3"
    assert list(outside.iterdir()) == [] and not Path("/etc/pwned").exists() and not Path("/pwned2").exists()


def test_a_corrupt_blob_is_refused(tmp_path):
    oci_layout(tmp_path / "layout", [BASE])
    blobs = sorted((tmp_path / "layout/blobs/sha256").iterdir(), key=lambda p: p.stat().st_size)
    layer = blobs[-1]  # the largest blob: the layer
    data = bytearray(layer.read_bytes())
    data[-40] ^= 1
    layer.write_bytes(bytes(data))
    cache = ImageCache(tmp_path / "cache")
    with pytest.raises(ImageError, match="corrupt|not a valid tar"):
        cache.import_image(tmp_path / "layout")
    assert cache.list() == []


def test_what_is_not_an_image_gets_one_line(tmp_path):
    cache = ImageCache(tmp_path / "cache")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ImageError, match="is not an image"):
        cache.import_image(tmp_path / "empty")
    (tmp_path / "x.tar.gz").write_bytes(b"\x1f\x8b" + b"\0" * 64)
    with pytest.raises(ImageError, match="gunzip"):
        cache.import_image(tmp_path / "x.tar.gz")
    with pytest.raises(ImageError, match="no image named 'nope'.*images import"):
        cache.get("nope")


_IMPORT = """
import json, sys
from trl_sandbox.images import ImageCache
image = ImageCache(sys.argv[1]).import_image(sys.argv[2])
record = json.loads((image.rootfs.parent / "image.json").read_text())
print(json.dumps({"rootfs": str(image.rootfs), "ino": image.rootfs.stat().st_ino, "at": record["imported_at"]}))
"""


def test_two_processes_importing_one_image_at_once_unpack_it_once(tmp_path):
    big = [(f"data/{i}", "file", os.urandom(1 << 20), 0o644) for i in range(24)]  # a window for the race
    oci_layout(tmp_path / "layout", [BASE, big, TOP])
    procs = [subprocess.Popen([sys.executable, "-c", _IMPORT, str(tmp_path / "cache"), str(tmp_path / "layout")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-2000:] for o in outs]
    first, second = (json.loads(o[0]) for o in outs)
    assert first == second  # one unpack: the same directory, written once
    assert len(ImageCache(tmp_path / "cache").list()) == 1
    assert list((tmp_path / "cache" / ".tmp").iterdir()) == []


def test_a_killed_imports_temporary_directory_is_removed_by_the_next_import(tmp_path):
    digest = oci_layout(tmp_path / "layout", [BASE])
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    leftover = tmp_path / "cache" / ".tmp" / f"{digest.split(':')[1]}-{dead.stdout.strip()}-0badc0de"
    (leftover / "rootfs").mkdir(parents=True)
    ImageCache(tmp_path / "cache").import_image(tmp_path / "layout")
    assert not leftover.exists()


def test_the_images_command(tmp_path, capsys, monkeypatch):
    digest = oci_layout(tmp_path / "layout", [BASE, TOP])
    cache = str(tmp_path / "cache")
    assert main(["images", "--cache", cache, "import", str(tmp_path / "layout"), "--name", "mine:1"]) == 0
    line = capsys.readouterr().out
    assert line.startswith(digest) and "mine:1" in line and "example.com/repo/image:1.0" in line
    assert main(["images", "list", "--cache", cache]) == 0
    listed = capsys.readouterr().out
    assert digest[:19] in listed and "1 image(s)" in listed
    assert main(["images", "--cache", cache, "remove", "mine:1"]) == 0
    assert "removed " + digest in capsys.readouterr().out
    assert ImageCache(cache).list() == []
    assert main(["images", "--cache", cache, "remove", "mine:1"]) == 2
    assert "no image named 'mine:1'" in capsys.readouterr().err

    monkeypatch.setenv("PATH", str(tmp_path / "nobin"))
    assert main(["images", "--cache", cache, "pull", "python:3.11"]) == 2
    err = capsys.readouterr().err.strip()
    assert "needs skopeo" in err and "apt-get install skopeo" in err and len(err.splitlines()) == 1


def test_pull_copies_with_skopeo_into_the_cache(tmp_path, capsys, monkeypatch):
    """skopeo itself reaches the registry (none is reachable from tests): a stand-in on PATH checks the arguments
    trl-sandbox gives it and writes the OCI layout skopeo would."""
    oci_layout(tmp_path / "pulled", [BASE], name=None)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "skopeo").write_text(
        "#!/bin/sh\n"
        f'[ "$1 $2 $3" = "copy --quiet docker://ghcr.io/o/r:t" ] || {{ echo "bad args: $*" >&2; exit 1; }}\n'
        'dest=${4#oci:}; dest=${dest%:image}\n'
        f'cp -r {tmp_path / "pulled"} "$dest"\n')
    (bin_dir / "skopeo").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    cache = str(tmp_path / "cache")
    assert main(["images", "--cache", cache, "pull", "ghcr.io/o/r:t"]) == 0, capsys.readouterr().err
    assert ImageCache(cache).get("ghcr.io/o/r:t").names == ("ghcr.io/o/r:t",)
    assert [p.name for p in Path(cache).iterdir() if p.name.startswith(".pull-")] == []
    (bin_dir / "skopeo").write_text("#!/bin/sh\necho 'FATA[0000] reading manifest: unauthorized' >&2\nexit 1\n")
    assert main(["images", "--cache", cache, "pull", "ghcr.io/o/private"]) == 2
    assert "pulling ghcr.io/o/private failed: FATA[0000] reading manifest: unauthorized" in capsys.readouterr().err



def test_a_multi_platform_index_is_resolved_to_this_machines_platform(tmp_path):
    """An index of indexes, as registries serve multi-platform images: this machine's manifest is taken."""
    import hashlib
    import platform

    here = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    other = "arm64" if here != "arm64" else "amd64"
    mine = oci_layout(tmp_path / "mine", [[("etc/arch", "file", here.encode(), 0o644)]], name=None)
    theirs = oci_layout(tmp_path / "theirs", [[("etc/arch", "file", other.encode(), 0o644)]], name=None)
    layout = tmp_path / "multi"
    (layout / "blobs/sha256").mkdir(parents=True)
    descriptors = []
    for source, arch in ((tmp_path / "theirs", other), (tmp_path / "mine", here)):
        for blob in (source / "blobs/sha256").iterdir():
            (layout / "blobs/sha256" / blob.name).write_bytes(blob.read_bytes())
        manifest = json.loads((source / "index.json").read_text())["manifests"][0]
        descriptors.append({**manifest, "platform": {"os": "linux", "architecture": arch}})
    nested = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                         "manifests": descriptors}).encode()
    digest = "sha256:" + hashlib.sha256(nested).hexdigest()
    (layout / "blobs/sha256" / digest[7:]).write_bytes(nested)
    (layout / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": [
        {"mediaType": "application/vnd.oci.image.index.v1+json", "digest": digest, "size": len(nested),
         "annotations": {"io.containerd.image.name": "multi:1"}}]}))
    (layout / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    image = ImageCache(tmp_path / "cache").import_image(layout)
    assert image.digest == mine != theirs and (image.rootfs / "etc/arch").read_text() == here
    assert image.names == ("multi:1",)
    descriptors.pop()  # only the other platform left: refused, never unpacked to fail at its first exec
    nested = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                         "manifests": descriptors}).encode()
    digest = "sha256:" + hashlib.sha256(nested).hexdigest()
    (layout / "blobs/sha256" / digest[7:]).write_bytes(nested)
    (layout / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": [
        {"mediaType": "application/vnd.oci.image.index.v1+json", "digest": digest, "size": len(nested)}]}))
    with pytest.raises(ImageError, match=f"has no image for linux/{here} \\(it has linux/{other}\\)"):
        ImageCache(tmp_path / "other").import_image(layout)
