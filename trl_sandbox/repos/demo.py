"""A demo repository task, made on this machine from Debian's packages (no registry, no daemon): what the repository
quick start (examples/repository_quickstart.py) and trl-sandbox's own tests score.

The image has two layers: a Debian bookworm ``minbase`` root filesystem with python3, git, pytest and patch
(``mmdebstrap``, :func:`debian_layer`), and a small Python package at ``/testbed`` (:func:`build_repository`) whose
``mean`` has a bug at ``base_commit``, with its fix committed after it (on a branch and in the reflog: the history a
leak would come from, which the runner strips), with R2E-Gym's ``run_tests.sh`` beside it and held-out tests at
``/r2e_tests``. Rows of each published schema point at it: :func:`swebench_row` (the bug in ``mean``; ``test_mean``
is FAIL_TO_PASS), :func:`swesmith_row` (a bug patch in ``add``), :func:`r2e_row` (the held-out tests must pass as
expected), :func:`harbor_task` (a task directory whose verifier runs a hidden test of ``mean``).
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

from ..errors import ConfigurationError
from ..images import Image, ImageCache, ImageError

#: The demo image's name in the cache.
IMAGE_NAME = "trl-sandbox-demo/calc:1"
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


def debian_layer(directory: Path, *, build: bool = True) -> Path:
    """The Debian layer (an uncompressed tar of bookworm's ``minbase`` variant with :data:`PACKAGES`), built by
    ``mmdebstrap`` from Debian's packages into ``directory`` once (under a lock) and reused after. ``build=False``:
    only find it (where the caller has no network, as trl-sandbox's tests: .ci/toolchains builds it for them).

    Raises:
        ConfigurationError: ``mmdebstrap`` is not installed (``apt-get install mmdebstrap``), or the layer is not
            there and ``build`` is False.
        subprocess.CalledProcessError: it failed (Debian's mirror unreachable, no root or user namespaces).
    """
    target = directory / f"{SUITE}-{PACKAGES.replace(',', '-')}.tar"
    if target.exists():
        return target
    if not build:
        raise ConfigurationError(f"the demo image's Debian layer {target} is not built: `bash .ci/toolchains` builds "
                                 "it (mmdebstrap, from Debian's packages; it needs the network the tests run without)")
    if shutil.which("mmdebstrap") is None:
        raise ConfigurationError("mmdebstrap is not installed (apt-get install mmdebstrap): the demo image is built "
                                 "from Debian's packages with it")
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


R2E_RUN_TESTS = "python3 -W ignore -m pytest -rA r2e_tests\n"
R2E_TEST = '''from calc import add, mean


def test_add():
    assert add(2, 3) == 5


def test_mean():
    assert mean([1, 2, 3]) == 2
'''
#: What R2E-Gym's parser makes of the held-out tests' log once ``mean`` is fixed (the row's expected output).
R2E_EXPECTED = {"test_1.py::test_add": "PASSED", "test_1.py::test_mean": "PASSED"}


def build_repository(work: Path) -> dict:
    """The repository, with its history, and R2E-Gym's held-out tests: returns ``path``, ``r2e_tests``,
    ``base_commit``, ``fix_commit``, ``patch`` (the gold fix) and ``test_patch``."""
    repo = work / "testbed"
    (repo / "calc").mkdir(parents=True)
    (repo / "tests").mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "calc" / "__init__.py").write_text(BUGGY.split("\n\n\ndef mean")[0] + "\n")
    (repo / "tests" / "test_calc.py").write_text(TESTS)
    (repo / "tests" / "__init__.py").write_text("")  # `pytest` (not `python -m pytest`) imports calc from /testbed
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
    # R2E-Gym's layout: the repository's run_tests.sh (untracked) and the held-out tests at /r2e_tests
    (repo / "run_tests.sh").write_text(R2E_RUN_TESTS)
    r2e_tests = work / "r2e_tests"
    r2e_tests.mkdir()
    (r2e_tests / "__init__.py").write_text("")
    (r2e_tests / "test_1.py").write_text(R2E_TEST)
    return {"path": repo, "r2e_tests": r2e_tests, "base_commit": base, "fix_commit": fix, "patch": patch,
            "test_patch": test_patch}


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


def _tar_trees(trees: dict[str, Path]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        def owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            return info
        for arcname, source in trees.items():
            tar.add(source, arcname=arcname, filter=owned)
    return out.getvalue()


def oci_layout(path: Path, repo: dict, base: Path) -> Path:
    """An OCI image layout at ``path`` (named :data:`IMAGE_NAME`) of two layers: ``base`` (a tar,
    :func:`debian_layer`) and ``repo``'s tree at ``/testbed``."""
    blobs = path / "blobs" / "sha256"
    blobs.mkdir(parents=True)
    base_digest = _sha256_file(base)
    try:
        os.link(base, blobs / base_digest[7:])
    except OSError:  # another file system, or another user's file (protected_hardlinks)
        shutil.copyfile(base, blobs / base_digest[7:])
    layer = _tar_trees({"testbed": repo["path"], "r2e_tests": repo["r2e_tests"]})

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


#: Bump when the repository or its image change: the cached image is rebuilt under the new version.
VERSION = 3


def demo_image(cache: ImageCache, work: Path, layers: Path | None = None, *, build: bool = True) -> tuple[Image, dict]:
    """The demo image in ``cache`` (built and imported once, under a lock, with ``work`` as scratch space; the
    Debian layer kept in ``layers``, default the cache's parent directory) and the repository's facts
    (``base_commit``, ``fix_commit``, ``patch``, ``test_patch``, ``digest``). ``build``: as :func:`debian_layer`'s.

    Raises:
        ConfigurationError: ``mmdebstrap`` is missing, or the layer is not built and ``build`` is False (see
            :func:`debian_layer`).
    """
    root = cache.root
    info_path = root / f"demo-calc-v{VERSION}.json"
    with _locked(root.parent / (root.name + ".demo.lock")):
        if info_path.exists():
            info = json.loads(info_path.read_text())
            try:
                return cache.get(info["digest"]), info
            except ImageError:
                pass  # removed since: built again
        base = debian_layer(layers or root.parent, build=build)
        repo = build_repository(work / "repo")
        layout = oci_layout(work / "layout", repo, base)
        image = cache.import_image(layout)
        info = {k: v for k, v in repo.items() if not isinstance(v, Path)}
        info["digest"] = image.digest
        root.mkdir(parents=True, exist_ok=True)
        info_path.write_text(json.dumps(info))
        for old in root.glob("demo-calc-v*.json"):  # an earlier version's image: not used any more
            if old != info_path:
                try:
                    cache.remove(json.loads(old.read_text())["digest"])
                except (ImageError, ValueError, KeyError):
                    pass
                old.unlink()
        shutil.rmtree(work / "repo", ignore_errors=True)  # the repository and the held-out tests
        shutil.rmtree(layout, ignore_errors=True)
        return image, info


def swesmith_row(info: dict) -> dict:
    """A SWE-smith instance as the dataset publishes it, on the same image: its ``patch`` makes a bug in ``add``
    (on top of the image's tree), FAIL_TO_PASS is ``test_add``; the gold fix is that patch reversed."""
    bug = BUGGY.replace("return a + b", "return a + b + 1")
    return {
        "instance_id": "example__calc.0659b30d.func_pm_op_change__add1", "repo": "swesmith/example__calc.0659b30d",
        "patch": _text_diff("calc/__init__.py", BUGGY, bug), "FAIL_TO_PASS": ["tests/test_calc.py::test_add"],
        "PASS_TO_PASS": ["tests/test_calc.py::test_sub"], "created_at": "2026-01-01T00:00:00",
        "image_name": IMAGE_NAME, "base_commit": info["base_commit"],
        "problem_statement": "add(2, 3) returns 6",
    }


def r2e_row(info: dict) -> dict:
    """An R2E-Gym row as ``R2E-Gym/R2E-Gym-Subset`` publishes it, on the same image: the fix is the gold patch,
    the held-out tests ``/r2e_tests/test_1.py``."""
    return {
        "repo_name": "calc", "docker_image": IMAGE_NAME, "commit_hash": info["fix_commit"],
        "problem_statement": "[ISSUE]\nmean() divides by the count plus one\n[/ISSUE]",
        "expected_output_json": json.dumps(R2E_EXPECTED), "parsed_commit_content": "{}",
        "modified_files": ["calc/__init__.py"], "num_non_test_files": 1,
    }


def swesmith_fix() -> str:
    """The gold fix of :func:`swesmith_row`: its bug patch reversed."""
    return _text_diff("calc/__init__.py", BUGGY.replace("return a + b", "return a + b + 1"), BUGGY)


def _text_diff(path: str, old: str, new: str) -> str:
    import difflib

    lines = difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{path}", f"b/{path}")
    return f"diff --git a/{path} b/{path}\n" + "".join(lines)


HIDDEN_TEST = '''from calc import mean


def test_mean():
    assert mean([1, 2, 3]) == 2
'''
TEST_SH = '''#!/bin/bash
cd /testbed
if python3 -m pytest -q -p no:cacheprovider /tests/test_hidden.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
'''


def harbor_task(directory: Path, *, test_sh: str = TEST_SH, image: str | None = IMAGE_NAME) -> Path:
    """A Harbor task directory on the image: ``task.toml`` naming it, ``instruction.md``, ``tests/test.sh`` (runs the
    hidden ``tests/test_hidden.py`` and writes ``reward.txt``), ``solution/solve.sh``."""
    (directory / "tests").mkdir(parents=True)
    (directory / "solution").mkdir()
    (directory / "environment").mkdir()
    image_line = f'docker_image = "{image}"\n' if image else ""
    (directory / "task.toml").write_text(
        'version = "1.0"\n\n[metadata]\ndifficulty = "easy"\n\n[verifier]\ntimeout_sec = 60.0\n\n'
        f'[agent]\ntimeout_sec = 600.0\n\n[environment]\n{image_line}cpus = 1\nmemory_mb = 1024\n')
    (directory / "instruction.md").write_text("Fix calc.mean: it divides by the count plus one.\n")
    (directory / "tests" / "test.sh").write_text(test_sh)
    (directory / "tests" / "test_hidden.py").write_text(HIDDEN_TEST)
    (directory / "solution" / "solve.sh").write_text(
        "#!/bin/bash\nsed -i 's/(len(xs) + 1)/len(xs)/' calc/__init__.py\n")
    (directory / "environment" / "Dockerfile").write_text(f"FROM {IMAGE_NAME}\nWORKDIR /testbed\n")
    return directory
