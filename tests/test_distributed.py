"""Two real training processes (``accelerate launch --config_file examples/launch/cpu_2proc.yaml``: 2 CPU
processes, gloo): each rank owns its own pool, labelled with its rank; every rank scores; every pool is deleted at the
end, and when one rank crashes, every rank's pool is still deleted (the crashing rank in ``train()``'s ``finally``, the
others by the SIGTERM the launcher sends them). Each launch starts three interpreters that import torch and TRL
(about 20 CPU-seconds), so the scoring and the crash share one launch."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("trl")
#: Each launch is a subprocess bounded below pytest's timeout (240 s and 300 s).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

SCRIPT = Path(__file__).with_name("distributed_train.py")
CONFIG = Path(__file__).resolve().parent.parent / "examples" / "launch" / "cpu_2proc.yaml"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(out: Path, root: Path, **env: str) -> subprocess.CompletedProcess:
    accelerate = Path(sys.executable).with_name("accelerate")
    cmd = [
        str(accelerate), "launch", "--config_file", str(CONFIG), "--main_process_port", str(_free_port()),
        str(SCRIPT), str(out), str(root),
    ]  # fmt: skip
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "TMPDIR": _launch_tmp(out), **env}
    return subprocess.run(cmd, env=environment, capture_output=True, text=True, timeout=240)


def _launch_tmp(base: Path) -> str:
    """A temporary directory for a launch (``TMPDIR``) inside the test's own: torch's elastic agent makes a
    ``torchelastic_*`` directory there per launch and leaves it."""
    path = base / "tmp"
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


def records(out: Path, rank: int) -> list[dict]:
    path = out / f"rank{rank}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def assert_nothing_left(root: Path, sandbox_ids: set[str]) -> None:
    assert list(root.iterdir()) == []  # every sandbox directory of both ranks deleted
    for controller in ("pids", "memory"):
        groups = Path("/sys/fs/cgroup") / controller / "trl-sandbox"
        if groups.is_dir():
            assert not sandbox_ids & {p.name for p in groups.iterdir()}
    stray = subprocess.run(["pgrep", "-f", str(SCRIPT)], capture_output=True, text=True).stdout.split()
    assert stray == []


def test_two_processes_score_in_their_own_pools_and_a_crash_in_one_deletes_every_ranks_pool(tmp_path,
                                                                                             own_sandbox_root):
    """One launch: three whole steps (each rank scores in its own pool, labelled with its rank and the shared run
    id; TRL logs the metrics and gathers both ranks' completions), then rank 1 crashes in its fourth reward call
    while rank 0 is busy in its own: both pools are deleted (the crashing rank in ``train()``'s ``finally``, the other
    by the SIGTERM the launcher sends it). The normal end of a two-process run deleting its pools is
    test_two_processes_train_on_the_default_tasks'."""
    out = tmp_path / "out"
    out.mkdir()
    proc = launch(out, own_sandbox_root, CRASH_RANK="1")
    ranks = {rank: records(out, rank) for rank in (0, 1)}
    assert all(len(r) == 4 for r in ranks.values()), (ranks, proc.stderr[-3000:])  # 3 steps + the crash's call
    third = {rank: r[2] for rank, r in ranks.items()}
    assert {rank: rec["labels"]["trl-sandbox-rank"] for rank, rec in third.items()} == {0: "0", 1: "1"}
    assert third[0]["labels"]["trl-sandbox-run"] == third[1]["labels"]["trl-sandbox-run"]  # one run id, shared
    assert {"trl-sandbox-step", "trl-sandbox-model"} <= set(third[0]["labels"])
    assert not set(third[0]["sandboxes"]) & set(third[1]["sandboxes"])  # two pools
    assert all(len(rec["sandboxes"]) == 2 and rec["scored"]["completions"] == 12 for rec in third.values())

    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics if "sandbox/completions" in m] == [1, 2, 3]
    assert all(m["sandbox/completions"] == 4.0 and m["sandbox/pool_size"] == 2.0 for m in metrics if "reward" in m)
    import pandas as pd

    table = pd.read_parquet(out / "completions" / "completions_00003.parquet")
    assert len(table) == 8  # both ranks' completions (gathered by TRL)
    assert set(table["sandbox_status"]) <= {"passed", "failed", "error", "timeout", "banned"}
    assert {"sandbox_error", "sandbox_stderr"} <= set(table.columns)

    assert proc.returncode != 0
    assert "simulated crash on rank 1" in proc.stderr
    # Rank 0 was busy in its reward call: the launcher's SIGTERM stopped it, after its pool was deleted
    # (lifecycle's handler re-raises the signal, so the exit status stays "killed by SIGTERM").
    assert "rank      : 0 (local_rank: 0)\n  exitcode  : -15" in proc.stderr
    assert all(r[-1]["scored"]["completions"] >= 16 for r in ranks.values())  # the fourth batch was scored too
    ids = {sid for r in ranks.values() for rec in r for sid in rec["sandboxes"]}
    assert len(ids) == 4
    assert_nothing_left(own_sandbox_root, ids)


def test_two_processes_train_on_the_default_tasks(tmp_path, own_sandbox_root):
    """``accelerate launch ... -m trl_sandbox.cli train --model tiny --tasks daytona``: the 2 tasks (the default of
    ``--model MODEL``) do not fill one batch of 2 processes (8 prompts for 2 steps); the command repeats them to the
    rows ``max_steps`` needs (as the seed repeats its prompts). Without the repeat no step runs."""
    accelerate = Path(sys.executable).with_name("accelerate")
    cmd = [str(accelerate), "launch", "--config_file", str(CONFIG), "--main_process_port", str(_free_port()),
           "-m", "trl_sandbox.cli", "train", "--model", "tiny", "--tasks", "daytona", "--max_steps", "2",
           "--max_completion_length", "16", "--num_generations", "2", "--per_device_train_batch_size", "4", "--sandbox_pool_size", "1",
           "--sandbox_backend_options", json.dumps({"root_dir": str(own_sandbox_root)}),
           "--output_dir", str(tmp_path / "run")]  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "TMPDIR": _launch_tmp(tmp_path)}
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "2 steps in" in proc.stderr and "no training step ran" not in proc.stderr
    steps = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [s["step"] for s in steps if "sandbox/completions" in s] == [1, 2]
    assert list(own_sandbox_root.iterdir()) == []
