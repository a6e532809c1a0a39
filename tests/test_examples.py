"""The scripts of examples/ run as a user runs them, on small settings, and print what they promise."""

import getpass
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

#: Each example runs in a subprocess bounded below this (``run``: 300 s by default).
pytestmark = pytest.mark.timeout(600)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run(script, *args, cwd, timeout=300):
    """Run an example as a user does, with a fresh temp directory of its own (``TMPDIR``): the example must leave
    nothing there, the local backend's sandbox root (``trl-sandbox-<uid>``, made there) included."""
    # Beside the system's temp directories, not in pytest's private one: the sandbox user must reach the root.
    tmp = Path(tempfile.mkdtemp(prefix="trl-sandbox-examples-"))
    tmp.chmod(0o755)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "TMPDIR": str(tmp)}
    try:
        proc = subprocess.run([sys.executable, str(EXAMPLES / script), *args], capture_output=True, text=True,
                              env=env, cwd=cwd, timeout=timeout, check=False)
        left = {p.name: sorted(c.name for c in p.iterdir()) if p.is_dir() else None for p in tmp.iterdir()}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    root = f"trl-sandbox-{os.geteuid()}"
    assert root not in left, f"the local backend left its root {tmp / root}: {left[root]}"
    # Not the example's: the cache directory that importing torch's compiler (trl does) makes, once per user.
    left.pop(f"torchinductor_{getpass.getuser()}", None)
    assert left == {}, f"{script} left in its temp directory: {left}"
    return proc.stdout


def test_reward_function(tmp_path):
    out = run("reward_function.py", "--pool-size", "2", cwd=tmp_path)
    rows = {line.split()[0]: line.split()[1:4] for line in out.splitlines()[1:6]}
    assert rows == {
        "add": ["passed", "1.00", "3/3"],
        "shout": ["passed", "1.00", "2/2"],
        "square": ["error", "-1.00", "0/2"],
        "mean": ["failed", "0.00", "0/2"],
        "evens": ["passed", "1.00", "2/2"],
    }
    assert "SyntaxError" in out and "TypeError: object of type 'int' has no len()" in out
    assert "total reward: 2.00 over 5 completions" in out and "pass rate: 3/5 = 0.60" in out
    assert "cleanup: deleted 2 of 2 sandboxes (0 left)" in out


def test_custom_task(tmp_path):
    out = run("custom_task.py", "--out", "tasks.jsonl", cwd=tmp_path)
    assert "a malformed task is rejected" in out
    statuses = [line.split()[:3] for line in out.splitlines() if line.startswith(("run_length ", "unique_sorted "))]
    assert [s[2] for s in statuses] == ["passed", "failed", "banned"] * 2
    rows = [json.loads(line) for line in (tmp_path / "tasks.jsonl").read_text().splitlines()]
    assert [r["task_id"] for r in rows] == ["run_length", "unique_sorted"]


@pytest.mark.slow
def test_trl_grpo_integration(tmp_path):
    pytest.importorskip("trl")
    out = run("trl_grpo_integration.py", "--model", "tiny", "--pool-size", "2", "--output-dir", "run", cwd=tmp_path)
    assert "step 1: reward" in out and "sandbox/pass_rate" in out
    assert "sandboxes: 2 created, 2 deleted, 0 left" in out
    lines = (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
    (logged,) = [record for record in map(json.loads, lines) if "reward" in record]
    assert logged["step"] == 1 and logged["sandbox/completions"] == 4


@pytest.mark.slow
def test_agentic_coding(tmp_path):
    """The agentic example with its scripted policy (a random tiny model writes no tool calls): every rollout runs a
    cell, submits, and is rewarded by the tests; every sandbox is deleted."""
    pytest.importorskip("trl")
    out = run("agentic_coding.py", "--model", "scripted", "--steps", "1", "--output-dir", str(tmp_path / "run"),
              cwd=tmp_path)
    assert "step 1: reward 1.00, 2.0 tool calls per rollout" in out and "submitted 100%" in out
    assert "sessions created: 8; sandboxes left: 0" in out
    assert (tmp_path / "run" / "metrics.jsonl").exists() and f"metrics: {tmp_path / 'run' / 'metrics.jsonl'}" in out


@pytest.mark.slow
def test_agentic_coding_without_an_output_dir_removes_its_run(tmp_path):
    """No --output-dir: the run (model, checkpoint, metrics) goes to a temporary directory, removed at the end
    (``run`` checks that the temp directory is left empty)."""
    pytest.importorskip("trl")
    out = run("agentic_coding.py", "--model", "scripted", "--steps", "1", cwd=tmp_path)
    assert "sessions created: 8; sandboxes left: 0" in out and "temporary and is removed" in out
    assert list(tmp_path.iterdir()) == []  # nothing in the working directory either


@pytest.mark.slow
def test_repository_quickstart(tmp_path, monkeypatch):
    pytest.importorskip("trl")
    import _repo_image

    _repo_image.repo_image(tmp_path / "image")  # the demo image, in this uid's test cache (built once per machine)
    monkeypatch.setenv("TRL_SANDBOX_CACHE", str(_repo_image.cache_root()))
    out = run("repository_quickstart.py", "--train", "1", "--output-dir", "run", cwd=tmp_path)
    assert "SWE-bench 5.0  gold patch   passed     1.00  3/3" in out, out
    assert "SWE-bench 5.0  wrong patch  failed     0.00  2/3" in out and "no diff      error     -1.00" in out
    assert "SWE-smith      gold patch   passed     1.00  2/2" in out and "Harbor         gold patch   passed" in out
    assert "trained 1 steps" in out and "sandboxes: 2 created, 2 deleted, 0 left" in out
