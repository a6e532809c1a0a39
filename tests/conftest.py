"""Shared fixtures. Every test runs inside a safety net: where cgroup v1 pids/memory controllers are writable, the
whole pytest process (and so every sandbox it starts) is put in a cgroup capped at 2048 tasks and 8 GiB, so that a
containment regression cannot take the machine down; pytest-timeout bounds every test. ``_isolation.py`` (loaded
below) keeps the whole process off every host but this machine, and makes a leak fail only the test that made it."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
os.environ.setdefault("OMP_NUM_THREADS", "1")

# A suite started in the background by a non-interactive shell (`nohup`, `&` in a script, some CI runners) inherits
# SIGINT ignored, and so would every process the tests start; trl-sandbox rightly leaves an ignored SIGINT ignored
# (trl_sandbox.lifecycle), so the tests that stop a run with SIGINT would wait for nothing. Here SIGINT acts as
# Ctrl-C does, and the processes the tests start get its default back (a handler is reset at exec, SIG_IGN is not).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

pytest_plugins = ["_isolation"]

_CGROUPS = {"pids": {"pids.max": "2048"}, "memory": {"memory.limit_in_bytes": str(8 << 30)}}


@pytest.fixture(scope="session", autouse=True)
def safety_net():
    """Put this test process in pids/memory cgroups where writable; undo at the end."""
    made = []
    name = f"trl-sandbox-tests-{os.getpid()}"
    for controller, limits in _CGROUPS.items():
        base = Path("/sys/fs/cgroup") / controller
        if not os.access(base, os.W_OK):
            continue
        group = base / name
        try:
            group.mkdir()
            for key, value in limits.items():
                (group / key).write_text(value)
            (group / "cgroup.procs").write_text(str(os.getpid()))
            made.append((base, group))
        except OSError:
            continue
    yield [str(g) for _, g in made]
    for base, group in made:
        try:
            for pid in (group / "cgroup.procs").read_text().split():
                (base / "cgroup.procs").write_text(pid)
            group.rmdir()
        except OSError:
            pass


@pytest.fixture(scope="session", autouse=True)
def uid_registry():
    """At the end, the sandbox uid registry's files that no live process holds (tests kill training processes and
    Ray actors on purpose, which cannot release their uids) are removed: the tests leave no file behind."""
    yield
    from trl_sandbox.backends import _uids

    _uids.sweep()


@pytest.fixture(scope="session", autouse=True)
def cgroup_leftovers():
    """At the end, the sandbox cgroups of runs that are over (tests kill training processes and Ray actors on purpose,
    which cannot remove theirs) are removed with their owner records: the tests leave no cgroup behind. Never a live
    run's (see ``backends/_cgroups``), nor groups no run claims."""
    yield
    from trl_sandbox import InfrastructureError
    from trl_sandbox.backends import _cgroups

    found, _unclaimed = _cgroups.find_orphans(_cgroups.hierarchies())
    for orphan in found:
        with contextlib.suppress(InfrastructureError):
            _cgroups.remove_orphan(orphan)
    _cgroups.sweep_records()


@pytest.fixture(scope="session", autouse=True)
def pacing_lock_dir():
    """The remote backends' creation-pacing lock files (see ``backends/_remote.Pacer``) in a directory of the session,
    removed at the end: the tests leave no file behind."""
    path = tempfile.mkdtemp(prefix="trl-sandbox-locks-")
    os.environ["TRL_SANDBOX_LOCK_DIR"] = path
    yield path
    os.environ.pop("TRL_SANDBOX_LOCK_DIR", None)
    shutil.rmtree(path, ignore_errors=True)


#: The directory the pytest-xdist workers of one run share (made by the controlling process, which the workers
#: inherit their environment from, and removed by it at the end).
_RUN_DIR_ENV = "TRL_SANDBOX_TESTS_RUN_DIR"


def pytest_configure(config):
    """The controlling process of a pytest-xdist run (``-n``) makes the directory its workers share."""
    if getattr(config, "workerinput", None) is None and getattr(config.option, "numprocesses", None):
        os.environ[_RUN_DIR_ENV] = tempfile.mkdtemp(prefix="trl-sandbox-tests-run-")


def pytest_unconfigure(config):
    if getattr(config, "workerinput", None) is None and os.environ.get(_RUN_DIR_ENV):
        shutil.rmtree(os.environ.pop(_RUN_DIR_ENV), ignore_errors=True)


def _run_dir() -> Path | None:
    """Under pytest-xdist, the directory every worker of this run shares; else None."""
    path = os.environ.get(_RUN_DIR_ENV)
    return Path(path) if path else None


@pytest.fixture(scope="session", autouse=True)
def admission_dir():
    """The host-wide admission limit's slot files (see ``backends/_admission.py``) in a directory of the test run
    (shared by its pytest-xdist workers: one limit for the host, as every run of a user shares it), removed at the
    end: a user's stay between runs, the tests leave no file behind."""
    shared = _run_dir()
    path = str(shared / "admission") if shared is not None else tempfile.mkdtemp(prefix="trl-sandbox-admission-")
    os.environ["TRL_SANDBOX_ADMISSION_DIR"] = path
    yield path
    os.environ.pop("TRL_SANDBOX_ADMISSION_DIR", None)
    if shared is None:
        shutil.rmtree(path, ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    """In pytest-xdist's workers (``-n``, the default: pyproject's addopts), the tests marked ``serial`` are left out:
    they measure or depend on the host's load (busy processes, verdicts idle and loaded, leak counts), which the other
    workers' tests change. They run alone afterwards: ``python -m pytest -m serial -n 0`` (the README's test command
    does both)."""
    if getattr(config, "workerinput", None) is None:
        return
    serial = [item for item in items if item.get_closest_marker("serial") is not None]
    if serial:
        config.hook.pytest_deselected(items=serial)
        items[:] = [item for item in items if item.get_closest_marker("serial") is None]
    # The longest modules first (``--dist loadscope`` hands modules out in this order): one that came last, as the
    # alphabet puts test_readme and test_smollm2, kept one worker busy for minutes after the others were done.
    items.sort(key=lambda item: LONGEST_FIRST.index(item.path.name) if item.path.name in LONGEST_FIRST
               else len(LONGEST_FIRST))


#: The modules that take longest beside CI's two busy processes (a timeline of each worker's tests, 2026-12-02, four
#: workers: test_readme 470 s, test_checkers 429 s, test_cli 260 s, test_smollm2 252 s ...), longest first; the
#: others keep their order after them.
LONGEST_FIRST = ("test_readme.py", "test_checkers.py", "test_cli.py", "test_smollm2.py", "test_hostile.py",
                 "test_e2b.py", "test_ray.py", "test_daytona.py", "test_hf.py", "test_distributed.py",
                 "test_formats.py", "test_examples.py")


@contextlib.contextmanager
def _empty_root(prefix):
    """A sandbox root the unprivileged sandbox uid can traverse (mode 0711), which must be empty at the end."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o711)
    yield path
    leftovers = [p.name for p in path.iterdir()]
    shutil.rmtree(path, ignore_errors=True)
    assert not leftovers, f"sandboxes left behind: {leftovers}"


@pytest.fixture(scope="session")
def sandbox_root():
    """A sandbox root shared by the session (session-scoped scorers keep their sandboxes in it until the end)."""
    with _empty_root("trl-sandbox-tests-") as path:
        yield path


@pytest.fixture
def own_sandbox_root():
    """A sandbox root for one test, which must leave it empty (for tests that check cleanup)."""
    with _empty_root("trl-sandbox-test-") as path:
        yield path


@pytest.fixture(scope="session")
def scorer(sandbox_root):
    """A started local-backend scorer shared by the scoring tests (2 sandboxes, short timeouts)."""
    from trl_sandbox import SandboxConfig, Scorer

    config = SandboxConfig(
        sandbox_pool_size=2,
        sandbox_test_timeout=1.0,
        sandbox_completion_timeout=6.0,
        sandbox_backend_options={"root_dir": str(sandbox_root)},
    )
    with Scorer.from_config(config) as s:
        yield s


@pytest.fixture(scope="session")
def judge_cache():
    """The session's compile cache (``TRL_SANDBOX_CACHE``) for tasks' checkers and interactors: each compiled once per
    test run, removed at the end."""
    path = tempfile.mkdtemp(prefix="trl-sandbox-judge-cache-")
    before = os.environ.get("TRL_SANDBOX_CACHE")
    os.environ["TRL_SANDBOX_CACHE"] = path
    yield path
    if before is None:
        os.environ.pop("TRL_SANDBOX_CACHE", None)
    else:
        os.environ["TRL_SANDBOX_CACHE"] = before
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """The tiny Qwen3 model and its locally trained tokenizer (``trl_sandbox.tiny``), saved once for the session: the
    trainer tests of every backend load it from here, with no hub access."""
    pytest.importorskip("trl")
    from trl_sandbox.tiny import build_tiny_model

    path = tmp_path_factory.mktemp("tiny")
    model, tokenizer = build_tiny_model()
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)
