"""Throughput: ``trl-sandbox score`` on HumanEval canonical solutions, against one ``python -c`` per completion.

Each variant scores every canonical solution ``--repeat`` times; the time is the whole process's (interpreter start,
pool creation and deletion included), and the table gives the median of ``--runs`` runs. Latency is per completion
(``duration_s`` of each result: waiting for a sandbox included).

- ``python -c`` per completion, two at a time: the pattern of a copied example script (no isolation at all);
- fork per completion from one interpreter with the fork server's preloaded modules, two at a time, the program and its
  tests run in the child: no isolation, no judge, no messages. The ceiling, on this machine, of any design that gives
  each completion a fresh process (which the isolation requires: no state survives from one completion to the next);
- ``trl-sandbox score``, local backend, fork server (the default);
- ``trl-sandbox score``, local backend, one launcher and interpreter per execution (``fork_server: false``).

    python benchmarks/throughput.py                  # about 2 minutes on 2 cores
    python benchmarks/throughput.py --repeat 5 --runs 1
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import humaneval_samples, median, percentile, progress, table


def python_c(repeat: int, workers: int = 2) -> tuple[float, list[float], int]:
    """One fresh ``python -c`` per completion (program, tests and the check call), ``workers`` at a time."""
    from trl_sandbox.loading import load_tasks

    rows = load_tasks("humaneval")
    programs = [
        r["prompt"] + r["canonical_solution"] + "\n" + r["test"] + f"\ncheck({r['entry_point']})\n"
        for _ in range(repeat)
        for r in rows
    ]

    def one(code: str) -> tuple[float, bool]:
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=False)
        return time.perf_counter() - t0, proc.returncode == 0

    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(one, programs))
    elapsed = time.perf_counter() - start
    return elapsed, [d for d, _ in results], sum(ok for _, ok in results)


_FORK_CEILING = r"""
import gc, json, os, sys, time
sys.path.insert(0, sys.argv[1])
from _forkserver import PRELOAD
for name in PRELOAD:
    __import__(name)
programs = json.loads(sys.stdin.read())
gc.collect(); gc.freeze()

def loop(part, out):
    for program in part:
        t0 = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            try:
                exec(compile(program, "<completion>", "exec"), {"__name__": "__main__"})
            except BaseException:
                os._exit(1)
            os._exit(0)
        ok = os.waitpid(pid, 0)[1] == 0
        out.write(json.dumps([time.perf_counter() - t0, ok]) + "\n")

r, w = os.pipe()
loops = []
for k in range(2):
    pid = os.fork()
    if pid == 0:
        os.close(r)
        with os.fdopen(w, "w") as out:
            loop(programs[k::2], out)
        os._exit(0)
    loops.append(pid)
os.close(w)
with os.fdopen(r) as results:
    sys.stdout.write(results.read())
for pid in loops:
    os.waitpid(pid, 0)
"""


def fork_ceiling(repeat: int) -> tuple[float, list[float], int]:
    """The ceiling of any design that gives each completion a fresh process: one interpreter with the fork server's
    preloaded modules forks one child per completion, two at a time, and the child compiles and runs the program,
    the tests and the check call itself. No isolation at all, no judge, no messages."""
    from trl_sandbox.loading import load_tasks

    backends = Path(__file__).resolve().parent.parent / "trl_sandbox" / "backends"
    rows = load_tasks("humaneval")
    programs = [
        r["prompt"] + r["canonical_solution"] + "\n" + r["test"] + f"\ncheck({r['entry_point']})\n"
        for _ in range(repeat)
        for r in rows
    ]
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _FORK_CEILING, str(backends)], input=json.dumps(programs),
                          capture_output=True, text=True, check=True)
    elapsed = time.perf_counter() - start
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    return elapsed, [d for d, _ in results], sum(ok for _, ok in results)


def score(samples_path: Path, options: dict | None, pool_size: int | None) -> tuple[float, list[float], int]:
    """``trl-sandbox score`` in a fresh process; returns (wall seconds, latencies, passed)."""
    out = samples_path.with_suffix(".out.jsonl")
    cmd = [sys.executable, "-m", "trl_sandbox.cli", "score", "--tasks", "humaneval",
           "--completions", str(samples_path), "--out", str(out)]
    if options:
        cmd += ["--backend-options", json.dumps(options)]
    if pool_size:
        cmd += ["--pool-size", str(pool_size)]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    elapsed = time.perf_counter() - start
    results = [json.loads(line) for line in out.read_text().splitlines()]
    return elapsed, [r["duration_s"] for r in results], sum(r["passed"] for r in results)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=20, help="copies of each of the 164 solutions (fast variants)")
    parser.add_argument("--slow-repeat", type=int, default=2, help="copies for the slow variants")
    parser.add_argument("--runs", type=int, default=3, help="runs per variant (the table shows medians)")
    parser.add_argument("--pool-size", type=int, default=None, help="sandboxes (default: the CPU count)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="trl-sandbox-bench-") as tmp:
        return run(args, Path(tmp))


def run(args: argparse.Namespace, tmp: Path) -> int:
    fast = tmp / "fast.jsonl"
    slow = tmp / "slow.jsonl"
    n_fast = len(humaneval_samples(fast, args.repeat))
    n_slow = len(humaneval_samples(slow, args.slow_repeat))
    variants = [
        ("python -c per completion, 2 at a time (no isolation)", n_slow, lambda: python_c(args.slow_repeat)),
        ("fork per completion, no isolation, 2 at a time (ceiling of a fresh process per completion)", n_fast,
         lambda: fork_ceiling(args.repeat)),
        ("trl-sandbox score, local, fork server", n_fast, lambda: score(fast, None, args.pool_size)),
        ("trl-sandbox score, local, launcher per execution", n_slow,
         lambda: score(slow, {"fork_server": False}, args.pool_size)),
    ]
    rows = []
    for name, n, fn in variants:
        rates, p50s, p99s, passed = [], [], [], []
        for i in range(args.runs):
            progress(f"{name}: run {i + 1}/{args.runs} ({n} completions)")
            elapsed, latencies, ok = fn()
            rates.append(n / elapsed)
            p50s.append(percentile(latencies, 50) * 1000)
            p99s.append(percentile(latencies, 99) * 1000)
            passed.append(ok)
            print(f"  {name}: {n / elapsed:.1f}/s ({elapsed:.1f} s, {ok}/{n} passed)", file=sys.stderr)
        rows.append({"variant": name, "completions": n, "runs": args.runs, "completions/s": median(rates),
                     "p50 ms": median(p50s), "p99 ms": median(p99s), "passed": f"{min(passed)}/{n}"})
    baseline = rows[0]["completions/s"]
    for row in rows:
        row["x python -c"] = row["completions/s"] / baseline
    print(f"HumanEval canonical solutions, {os.cpu_count()} CPUs, whole process timed, median of {args.runs} runs\n")
    print(table(rows, ["variant", "completions", "runs", "completions/s", "p50 ms", "p99 ms", "x python -c", "passed"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
