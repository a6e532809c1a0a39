"""``benchmarks/load.py`` runs end to end on its smallest mode: two small sets scored idle and beside busy loops,
its tables printed, its exit status telling whether a verdict changed, and no busy loop left behind.

The verdicts themselves are not asserted equal here (that is what the benchmark measures, and on a loaded machine
with wall-clock limits a CPU-bound program may be cut): only what holds either way. A program that sleeps 60 s
against a 1 s limit times out idle and loaded; a fast correct one passes both times."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.serial  # measures or loads the host: no other test beside it (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[1]


def _is_busy_loop(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"while True: pass" in f.read().split(b"\0")
    except OSError:
        return False


@pytest.mark.timeout(150)
def test_the_smallest_run_compares_verdicts_idle_and_loaded(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    out_json = tmp_path / "load.json"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "load.py"), "--quick", "--sets", "sleep,timeouts",
                           "--loads", "busy", "--load-factor", "1", "--json", str(out_json)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=140)
    out = done.stdout
    assert done.returncode in (0, 1), done.stderr[-3000:]
    assert "usable cores" in out and "| condition | competing load | seconds | loadavg mean |" in out, out
    assert "busy loops (python -c" in out, out
    for name in ("sleep", "timeouts"):
        assert f"\n{name}: " in out, out
    assert "| set | load | completions | verdicts changed |" in out, out
    result = json.loads(out_json.read_text())
    changed = result["changed"]
    assert (done.returncode == 1) == bool(changed), (done.returncode, changed)
    assert f"{len(changed)} verdicts changed under load" in out, out
    for condition in ("idle", "busy"):
        sleep = result["conditions"][condition]["sets"]["sleep"]
        assert len(sleep) == 3 and all(r["status"] == "timeout" and r["tests"] in ("T", "-") for r in sleep), sleep
        fast = result["conditions"][condition]["sets"]["timeouts"][0]
        assert fast["label"] == "all tests fast" and fast["status"] == "passed" and fast["tests"] == "PPPPP", fast
    rows = {row["set"]: row for row in result["rows"]}
    assert rows["sleep"]["timeouts idle"] == rows["sleep"]["timeouts loaded"] == 3, rows
    pids = result["conditions"]["busy"]["load_pids"]
    assert len(pids) == result["cores"]  # --load-factor 1
    assert not any(_is_busy_loop(pid) for pid in pids), pids  # every busy loop it started is gone
