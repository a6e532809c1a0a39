"""The layout rules of docs/architecture.md, checked on the source: no import circle (module-level, ``TYPE_CHECKING``
and in-function imports alike), a harness that needs nothing but the standard library and reaches sandboxes as one
archive whose bytes depend on its sources alone, and modules of a size a reader can hold in mind."""

from __future__ import annotations

import ast
import importlib.util
import marshal
import io
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from trl_sandbox.harness.archive import HARNESS_DIGEST, HARNESS_FILES, HARNESS_NAME, build_archive

PACKAGE = Path(__file__).resolve().parent.parent / "trl_sandbox"
#: docs/architecture.md: "no module over about 600 lines"; the longest ones are named there.
MAX_LINES = 650


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that ``name`` imports anywhere in its source."""
    found = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            targets = [f"{base}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        for target in targets:
            while target not in modules and "." in target:
                target = target.rpartition(".")[0]
            if target in modules and target != name:
                found.add(target)
    return found


def test_no_module_imports_a_module_that_imports_it_back():
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            current = todo.pop()
            if current == goal:
                return True
            if current not in seen:
                seen.add(current)
                todo += graph[current]
        return False

    circles = sorted((a, b) for a in graph for b in graph[a] if reaches(b, a))
    assert not circles, f"import circles (module, a module it imports that leads back to it): {circles}"


def test_the_harness_needs_only_the_standard_library_and_itself():
    archive = {"trl_sandbox_seccomp", "trl_sandbox_reaper", "trl_sandbox_harness"}  # its other members
    allowed = set(sys.stdlib_module_names) | {"pytest", "__future__"} | archive
    for path in sorted((PACKAGE / "harness").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in allowed, f"{path.name} imports {name}"


def test_the_archive_is_built_from_the_sources_alone(tmp_path):
    """Same sources, same bytes (whatever the files' times and order on disk): the digest names the archive."""
    copy = tmp_path / "harness"
    shutil.copytree(PACKAGE / "harness", copy, ignore=shutil.ignore_patterns("__pycache__"))
    for i, path in enumerate(sorted(copy.iterdir())):
        os.utime(path, (1_000_000_000 + i, 1_000_000_000 + i))
    seccomp = tmp_path / "seccomp.py"
    seccomp.write_bytes((PACKAGE / "backends" / "_seccomp.py").read_bytes())
    assert build_archive(copy, seccomp) == HARNESS_FILES[HARNESS_NAME] == build_archive()
    import hashlib

    assert hashlib.sha256(HARNESS_FILES[HARNESS_NAME]).hexdigest() == HARNESS_DIGEST
    # in another process too (marshal version 4 chooses references by reference counts: under xdist it differed)
    fresh = subprocess.run([sys.executable, "-I", "-c", "import hashlib, sys; sys.path.insert(0, sys.argv[1]); "
                            "from trl_sandbox.harness.archive import build_archive; "
                            "print(hashlib.sha256(build_archive()).hexdigest())", str(PACKAGE.parent)],
                           capture_output=True, text=True, timeout=60, check=False)
    assert fresh.stdout.strip() == HARNESS_DIGEST, fresh.stderr[-2000:]
    (copy / "judges.py").write_text((copy / "judges.py").read_text() + "\n# changed\n")
    assert build_archive(copy, seccomp) != HARNESS_FILES[HARNESS_NAME]
    names = zipfile.ZipFile(io.BytesIO(HARNESS_FILES[HARNESS_NAME])).namelist()
    sources = [p.name for p in (PACKAGE / "harness").glob("*.py") if p.name not in ("archive.py", "_archive_main.py")]
    package = [f"trl_sandbox_harness/{name}" for name in sources]
    modules = ["trl_sandbox_reaper.py", "trl_sandbox_seccomp.py", *package]
    compiled = [name[:-3] + ".pyc-" + importlib.util.MAGIC_NUMBER.hex() for name in modules]
    assert names == sorted(["__main__.py", *modules, *compiled])


def _rezip(data, replace):
    """The archive ``data`` with members replaced (``{name: bytes}``) or left out (``{name: None}``), in order."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as old, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as new:
        for info in old.infolist():
            body = replace.get(info.filename, old.read(info))
            if body is not None:
                new.writestr(info, body)
    return out.getvalue()


@pytest.mark.parametrize("bytecode", ["this Python's", "none"])
def test_the_archive_runs_as_one_file_with_an_isolated_interpreter(tmp_path, bytecode):
    """``python -I -S harness.pyz`` (how the sandboxes run it): no site-packages, no script directory on the path;
    the archive alone puts its package there. With the host's compiled code (a sandbox whose Python reads it), and
    without (any other Python: it compiles the sources)."""
    import json

    from trl_sandbox import Task

    task = Task.from_row({"task_id": "sq", "test_list": ["assert f(3) == 9", "assert f(4) == 15"]})
    request = task.request("def f(x):\n    return x * x\n", test_timeout_s=5.0, output_limit=1 << 16)
    archive = tmp_path / HARNESS_NAME
    data = HARNESS_FILES[HARNESS_NAME]
    if bytecode == "none":
        names = zipfile.ZipFile(io.BytesIO(data)).namelist()
        data = _rezip(data, {name: None for name in names if ".pyc-" in name})
    archive.write_bytes(data)
    proc = subprocess.run([sys.executable, "-I", "-S", str(archive)], input=json.dumps(request).encode(),
                          capture_output=True, timeout=60, cwd=tmp_path, check=False)
    verdict = task.judge(proc.stdout, exit_code=proc.returncode, timed_out=False, stderr=proc.stderr)
    assert (verdict.status, verdict.tests_passed) == ("failed", 1), (verdict, proc.stderr[-2000:])


def test_the_archive_runs_the_compiled_code_named_as_its_source(tmp_path):
    """The loader runs a module's compiled member when this Python's magic number names it (here one that says so),
    its code's file name the source's path inside the archive, as tracebacks show it."""
    marker = "import sys\nsys.stdout.write('compiled ' + sys._getframe().f_code.co_filename)\nsys.exit(0)\n"
    member = "trl_sandbox_harness/__main__.pyc-" + importlib.util.MAGIC_NUMBER.hex()
    code = importlib.util.MAGIC_NUMBER + marshal.dumps(compile(marker, "<elsewhere>", "exec"))
    archive = tmp_path / HARNESS_NAME
    archive.write_bytes(_rezip(HARNESS_FILES[HARNESS_NAME], {member: code}))
    proc = subprocess.run([sys.executable, "-I", "-S", str(archive)], input=b"{}", capture_output=True, timeout=60,
                          cwd=tmp_path, check=False)
    assert proc.stdout.decode() == f"compiled {archive}/trl_sandbox_harness/__main__.py", proc.stderr[-2000:]


def test_modules_are_of_a_size_a_reader_can_hold():
    sizes = {str(p.relative_to(PACKAGE)): len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py")}
    long = {name: n for name, n in sizes.items() if n > MAX_LINES}
    assert not long, f"split these by concept (docs/architecture.md): {long}"
