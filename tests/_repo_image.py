"""A repository task's image, built on this machine (no registry, no daemon): a Debian bookworm root filesystem
from Debian's packages (``mmdebstrap``: python3, git, pytest, patch) as the first layer, and a small Python
repository at ``/testbed`` as the second, with a bug at ``base_commit`` and its fix committed after it (on a branch
and in the reflog: the history a leak would come from). Rows of each published schema point at it.

The Debian layer is built once and cached in ``/var/tmp/trl-sandbox-tests`` (``TRL_SANDBOX_TEST_IMAGES``), as are
the imported images (one cache per uid). Without ``mmdebstrap`` the tests that need it are skipped, except in CI
(``CI`` set), where that is a failure: .ci/toolchains installs it.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(os.environ.get("TRL_SANDBOX_TEST_IMAGES", "/var/tmp/trl-sandbox-tests"))
IMAGE_NAME = "trl-sandbox-tests/calc:1"
PACKAGES = "python3,git,python3-pytest,patch"
SUITE = "bookworm"

BUGGY = '''def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mean(xs):
    return sum(xs) / (len(xs) + 1)
'''
FIXED = BUGGY.replace("(len(xs) + 1)", "len(xs)")
TESTS = '''from calc import add, sub


def test_add():
    assert add(2, 3) == 5


def test_sub():
    assert sub(2, 3) == -1
'''
TESTS_AFTER = TESTS.replace("from calc import add, sub", "from calc import add, mean, sub") + '''

def test_mean():
    assert mean([1, 2, 3]) == 2
'''
F2P = ["tests/test_calc.py::test_mean"]
P2P = ["tests/test_calc.py::test_add", "tests/test_calc.py::test_sub"]


@contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _shared_dir() -> Path:
    ROOT.mkdir(parents=True, exist_ok=True)
    try:
        os.chmod(ROOT, 0o1777)  # every uid's run (the unprivileged hostile run too) keeps its images here
    except PermissionError:
        pass
    return ROOT


def debian_layer() -> Path:
    """The Debian layer (an uncompressed tar), built once. Skips (fails in CI) without ``mmdebstrap``."""
    target = _shared_dir() / f"{SUITE}-{PACKAGES.replace(',', '-')}.tar"
    if target.exists():
        return target
    if shutil.which("mmdebstrap") is None:
        message = "mmdebstrap is not installed (apt-get install mmdebstrap): the repository image cannot be built"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    with _locked(target.with_suffix(".lock")):
        if not target.exists():
            partial = target.with_suffix(f".{os.getpid()}.part.tar")  # mmdebstrap's format is the name's suffix
            subprocess.run(["mmdebstrap", "--quiet", "--variant=minbase", f"--include={PACKAGES}", SUITE,
                            str(partial)], check=True, timeout=900)
            os.chmod(partial, 0o644)
            partial.rename(target)
    return target


def _git(repo: Path, *args: str) -> str:
    env = {"PATH": os.environ["PATH"], "HOME": str(repo.parent), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def _diff(repo: Path, old: str, new: str, path: str) -> str:
    (repo / path).write_text(new)
    patch = _git(repo, "diff", "--", path)
    (repo / path).write_text(old)
    return patch


def build_repository(work: Path) -> dict:
    """The repository, with its history: returns ``path``, ``base_commit``, ``fix_commit``, ``patch`` (the gold
    fix) and ``test_patch``."""
    repo = work / "testbed"
    (repo / "calc").mkdir(parents=True)
    (repo / "tests").mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "calc" / "__init__.py").write_text(BUGGY.split("\n\n\ndef mean")[0] + "\n")
    (repo / "tests" / "test_calc.py").write_text(TESTS)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "initial")
    (repo / "calc" / "__init__.py").write_text(BUGGY)
    _git(repo, "commit", "-q", "-am", "add mean")
    base = _git(repo, "rev-parse", "HEAD").strip()
    patch = _diff(repo, BUGGY, FIXED, "calc/__init__.py")
    test_patch = _diff(repo, TESTS, TESTS_AFTER, "tests/test_calc.py")
    (repo / "calc" / "__init__.py").write_text(FIXED)
    (repo / "tests" / "test_calc.py").write_text(TESTS_AFTER)
    _git(repo, "commit", "-q", "-am", "fix mean: divide by the count (the leak)")
    fix = _git(repo, "rev-parse", "HEAD").strip()
    _git(repo, "branch", "upstream-fix", fix)
    _git(repo, "reset", "-q", "--hard", base)
    return {"path": repo, "base_commit": base, "fix_commit": fix, "patch": patch, "test_patch": test_patch}


def eval_script(base: str, test_patch: str) -> str:
    """An eval script as SWE-bench 5.0 writes one (``make_eval_script_list``): check the test files out at the
    base, apply the test patch, run the tests between the markers, check the test files out again."""
    return "\n".join([
        "#!/bin/bash", "set -uxo pipefail", "cd /testbed", "git config --global --add safe.directory /testbed",
        "git status", f"git checkout {base} -- tests/test_calc.py",
        "git apply -v - <<'EOF_114329324912'", test_patch.rstrip("\n"), "EOF_114329324912",
        ": '>>>>> Start Test Output'", "python3 -m pytest -rA tests/test_calc.py", ": '>>>>> End Test Output'",
        f"git checkout {base} -- tests/test_calc.py", ""])


def swebench_row(repo: dict) -> dict:
    """A SWE-bench 5.0 instance as the dataset publishes it (``FAIL_TO_PASS`` as a JSON string)."""
    return {
        "repo": "example/calc", "instance_id": "example__calc-1", "base_commit": repo["base_commit"],
        "patch": repo["patch"], "test_patch": repo["test_patch"],
        "problem_statement": "mean() divides by the count plus one", "hints_text": "", "created_at": "2026-01-01",
        "version": "1.0", "FAIL_TO_PASS": json.dumps(F2P), "PASS_TO_PASS": json.dumps(P2P),
        "environment_setup_commit": repo["base_commit"], "image": IMAGE_NAME,
        "eval_script": eval_script(repo["base_commit"], repo["test_patch"]), "log_parser": "parse_log_pytest",
        "eval_type": "pass_and_fail",
    }


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return "sha256:" + digest.hexdigest()


def _tar_tree(source: Path, arcname: str) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        def owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            return info
        tar.add(source, arcname=arcname, filter=owned)
    return out.getvalue()


def oci_layout(path: Path, repo: dict) -> Path:
    """An OCI image layout of the two layers at ``path`` (named :data:`IMAGE_NAME`)."""
    blobs = path / "blobs" / "sha256"
    blobs.mkdir(parents=True)
    base = debian_layer()
    base_digest = _sha256_file(base)
    try:
        os.link(base, blobs / base_digest[7:])
    except OSError:  # another file system, or another user's file (protected_hardlinks)
        shutil.copyfile(base, blobs / base_digest[7:])
    layer = _tar_tree(repo["path"], "testbed")

    def blob(data: bytes) -> str:
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        (blobs / digest[7:]).write_bytes(data)
        return digest

    layer_digest = blob(layer)
    config = json.dumps({
        "architecture": {"x86_64": "amd64", "aarch64": "arm64"}.get(os.uname().machine, os.uname().machine),
        "os": "linux",
        "config": {"Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"],
                   "WorkingDir": "/testbed"},
        "rootfs": {"type": "layers", "diff_ids": [base_digest, layer_digest]}}).encode()
    layer_type = "application/vnd.oci.image.layer.v1.tar"
    manifest = json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": blob(config),
                   "size": len(config)},
        "layers": [{"mediaType": layer_type, "digest": base_digest, "size": os.stat(base).st_size},
                   {"mediaType": layer_type, "digest": layer_digest, "size": len(layer)}]}).encode()
    index = {"schemaVersion": 2, "manifests": [{
        "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": blob(manifest), "size": len(manifest),
        "annotations": {"io.containerd.image.name": IMAGE_NAME}}]}
    (path / "index.json").write_text(json.dumps(index))
    (path / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    return path


def cache_root() -> Path:
    """This uid's ``TRL_SANDBOX_CACHE`` for the tests (shared by the test processes and runs of this uid)."""
    return _shared_dir() / f"cache-{os.geteuid()}"


def image_cache_dir() -> Path:
    """The image cache under :func:`cache_root` (where ``ImageCache()`` looks with ``TRL_SANDBOX_CACHE`` set)."""
    return cache_root() / "images"


#: Bump when the repository or its image change: the cached image is rebuilt under the new version.
VERSION = 1


def repo_image(work: Path):
    """The repository image in this uid's cache (built and imported once per machine and uid, under a lock, with
    ``work`` as scratch space) and the repository's facts (``base_commit``, ``fix_commit``, ``patch``,
    ``test_patch``): ``(Image, dict)``."""
    from trl_sandbox.images import ImageCache, ImageError

    cache_dir = image_cache_dir()
    cache = ImageCache(cache_dir)
    info_path = cache_dir / f"calc-v{VERSION}.json"
    with _locked(cache_root().with_suffix(".lock")):
        if info_path.exists():
            info = json.loads(info_path.read_text())
            try:
                return cache.get(info["digest"]), info
            except ImageError:
                pass  # removed since: built again
        repo = build_repository(work / "repo")
        layout = oci_layout(work / "layout", repo)
        image = cache.import_image(layout)
        info = {k: v for k, v in repo.items() if k != "path"}
        info["digest"] = image.digest
        info_path.write_text(json.dumps(info))
        shutil.rmtree(work / "repo", ignore_errors=True)
        shutil.rmtree(layout, ignore_errors=True)
        return image, info
