"""``benchmarks/checkers.py --quick`` runs end to end (a C++ testlib checker and interactor through the local
backend, the compile cache, the by-hand baselines), prints its three tables and leaves no files behind."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GXX = shutil.which("g++")
if GXX is None and os.environ.get("CI") == "true":  # CI installs g++ (.ci/run): its absence is a failure there
    raise RuntimeError("g++ is missing: .ci/run installs it; the checker benchmark needs it")
pytestmark = pytest.mark.skipif(GXX is None, reason="g++ is not installed (apt-get install g++)")


def _leftovers() -> set[str]:
    return {n for n in os.listdir(tempfile.gettempdir()) if n.startswith("trl-bench-checkers-")}


@pytest.mark.timeout(120)
def test_the_quick_run_prints_the_three_tables():
    before = _leftovers()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    env.pop("TRL_SANDBOX_CACHE", None)
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "checkers.py"), "--quick"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=110)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert out.startswith("Machine: ") and "cores, kernel" in out and "load average" in out
    for heading in ("| program | judge | status | runs | per test p50 ms | per test p99 ms | over tokens p50 ms |",
                    "| build | binary KiB | cold runs | cold compile s | hits | hit p50 ms |",
                    "| program | K | runs | stdin test ms | K = 0 test ms | K test ms | us per round trip |"):
        assert heading in out, out
    for row in ("| Python | C++ testlib checker | passed |", "| C++ | Python checker | passed |",
                "| C++ testlib checker binary, subprocess.run |", "| testlib checker, static (-static) |",
                "| C++, through the sandbox | 100 |", "| Python, by hand (two os.pipe()) | 100 |"):
        assert row in out, out
    assert _leftovers() == before  # the temporary compile cache and the by-hand files are removed
