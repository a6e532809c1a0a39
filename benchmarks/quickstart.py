"""The README's quick start (``trl-sandbox train --model tiny``) timed as a user runs it, on an idle machine and beside
other busy processes (as on a workstation or a shared training node), with torch's thread settings as the command
sets them and as they were before (two OpenMP threads that spin while they wait).

    python benchmarks/quickstart.py                       # 300 steps; idle, then beside 2 busy processes
    python benchmarks/quickstart.py --steps 60 --loads 0 2 --settings default spinning

Prints one row per (setting, load): the whole command's wall time (imports, warm start, pool start, training, save),
the training time and seconds per step as the command reports them, and the mean sandbox time per step from
``metrics.jsonl``. A busy process is ``python -c "while True: pass"`` at normal priority; the sandboxes run at nice 10.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import progress, table  # noqa: E402

#: Thread settings compared: what ``trl-sandbox train --model tiny`` does now, and torch's defaults on this machine
#: (one OpenMP thread per core, spinning while waiting), which the command used before.
SETTINGS = {
    "default": {},
    "spinning": {"OMP_NUM_THREADS": str(os.cpu_count() or 1), "OMP_WAIT_POLICY": "ACTIVE"},
}


def run_once(steps: int, load: int, setting: str) -> dict:
    """One quick start of ``steps`` GRPO steps beside ``load`` busy processes: its timings."""
    out = Path(tempfile.mkdtemp(prefix="trl-sandbox-quickstart-"))
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(load)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", **SETTINGS[setting]}
    if setting == "default":
        env.pop("OMP_NUM_THREADS", None)
        env.pop("OMP_WAIT_POLICY", None)
    try:
        start = time.perf_counter()
        proc = subprocess.run(["trl-sandbox", "train", "--model", "tiny", "--output-dir", str(out), "--max_steps",
                               str(steps), "--disable_tqdm", "true"], env=env, capture_output=True, text=True,
                              check=False)
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"trl-sandbox train failed:\n{proc.stderr[-3000:]}")
        done = re.search(r"(\d+) steps in ([\d.]+) s \(([\d.]+) s/step\)", proc.stderr)
        records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
        batches = [r["sandbox/batch_seconds"] for r in records if "sandbox/batch_seconds" in r]
        rewards = [r["reward"] for r in records if "reward" in r]
        quarter = max(1, len(rewards) // 4)
        first, last = sum(rewards[:quarter]) / quarter, sum(rewards[-quarter:]) / quarter
        return {
            "setting": setting, "busy processes": load, "steps": int(done.group(1)), "command s": wall,
            "training s": float(done.group(2)), "s/step": float(done.group(3)),
            "sandbox s/step": sum(batches) / max(1, len(batches)),
            "reward first/last quarter": f"{first:.2f} / {last:.2f}",
        }
    finally:
        for proc_ in busy:
            proc_.kill()
            proc_.wait()
        shutil.rmtree(out, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=300, help="GRPO steps per run (the quick start's 300).")
    parser.add_argument("--loads", type=int, nargs="+", default=[0, 2], help="Busy processes beside each run.")
    parser.add_argument("--settings", nargs="+", default=["default"], choices=sorted(SETTINGS),
                        help="Thread settings: default (the command's), spinning (torch's, as before).")
    args = parser.parse_args()
    if shutil.which("trl-sandbox") is None:
        raise SystemExit("trl-sandbox is not on PATH: pip install -e . first")
    rows = []
    for setting in args.settings:
        for load in args.loads:
            progress(f"quick start, {args.steps} steps, settings {setting}, {load} busy processes")
            rows.append(run_once(args.steps, load, setting))
    print(f"{os.cpu_count()} CPUs; `trl-sandbox train --model tiny --max_steps {args.steps}`")
    print(table(rows, ["setting", "busy processes", "steps", "command s", "training s", "s/step", "sandbox s/step",
                       "reward first/last quarter"]))


if __name__ == "__main__":
    main()
