"""benchmarks/gpu_step.py: where a GRPO step's time goes. Its CPU mode (the tiny model, the local backend's sandboxes)
runs end to end and reports every phase; the phase arithmetic is checked on made-up timings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import gpu_step  # noqa: E402

#: The phases a step always goes through (``other`` may be 0 within the clock's resolution).
TIMED = ("generation", "scoring (host)", "waiting for scoring", "logprobs, advantages", "forward (loss)", "backward",
         "optimizer")


def test_phases_are_exclusive_and_add_up_to_the_step():
    step = {"generate_and_score": 5.0, "generate": 3.0, "rewards": 1.5, "score": 1.2, "loss": 0.5,
            "backward": 0.75, "optimizer": 0.25, "wall": 7.0}
    phases = gpu_step.exclusive(step)
    assert phases == pytest.approx({"generation": 3.0, "scoring (host)": 0.3, "waiting for scoring": 1.2,
                                    "logprobs, advantages": 0.5, "forward (loss)": 0.5, "backward": 0.75,
                                    "optimizer": 0.25, "other": 0.5})
    rows = gpu_step.summarize([step, {**step, "wall": 9.0}])
    by_phase = {r["phase"]: r for r in rows}
    assert [r["phase"] for r in rows] == [*gpu_step.PHASES, "step (wall clock)"]
    assert by_phase["step (wall clock)"]["total s"] == 16.0 and by_phase["other"]["total s"] == pytest.approx(3.0)
    assert by_phase["generation"]["per step s"] == 3.0 and by_phase["generation"]["share %"] == pytest.approx(37.5)
    assert sum(by_phase[p]["share %"] for p in gpu_step.PHASES) == pytest.approx(100.0)


@pytest.mark.slow
def test_tiny_mode_times_every_phase_of_real_steps(tmp_path, own_sandbox_root):
    pytest.importorskip("trl")
    out = tmp_path / "step.json"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "gpu_step.py"), "--tiny", "--cpu", "--steps", "2",
         "--warm-steps", "1", "--backend-options", json.dumps({"root_dir": str(own_sandbox_root)}),
         "--json", str(out)],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=280,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    data = json.loads(out.read_text())
    phases = {p["phase"]: p for p in data["phases"]}
    for name in TIMED:
        assert phases[name]["total_s"] > 0 and phases[name]["share_pct"] > 0, (name, phases)
    assert phases["other"]["total_s"] >= -1e-3, phases
    assert sum(phases[p]["share_pct"] for p in gpu_step.PHASES) == pytest.approx(100.0, abs=0.5)
    assert phases["step (wall clock)"]["per_step_s"] == pytest.approx(data["step_wall_s"][1])
    assert data["steps"] == 2 and data["skipped"] == 1 and len(data["step_wall_s"]) == 2
    # Real rewards: every completion of the step went to a sandbox and came back scored.
    assert data["sandbox"]["infra_errors"] == 0 and data["sandbox"]["batch_seconds"] > 0
    assert data["batch"]["completions_per_step"] == 8 and data["model"]["parameters"] > 0
    assert "| waiting for scoring |" in result.stdout and "device: CPU" in result.stdout
    assert list(own_sandbox_root.iterdir()) == []
