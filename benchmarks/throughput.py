"""Throughput: ``trl-sandbox score`` on HumanEval canonical solutions, against one ``python -c`` per completion.

Variants (each scores every canonical solution ``--repeat`` times; the slow ones ``--slow-repeat`` times):

- ``python -c`` per completion, two at a time: the pattern of a copied example script (no isolation at all);
- fork per completion from one interpreter with the fork server's preloaded modules, two at a time, the program and its
  tests run in the child: no isolation, no judge, no messages. The ceiling, on this machine, of any design that gives
  each completion a fresh process (which the isolation requires: no state survives from one completion to the next);
- ``trl-sandbox score``, local backend, fork server (the default);
- ``trl-sandbox score``, local backend, one launcher and interpreter per execution (``fork_server: false``).

Tables:

1. whole process: interpreter start, pool creation and deletion included; the median of ``--runs`` runs, the
   variants alternating. Latency is per completion (``duration_s`` of each result: waiting for a sandbox included);
2. the steady state: the ceiling from its first fork on, and ``Scorer.score`` on a started pool (no interpreter
   start, no pool creation), in the same runs;
3. the isolation overhead per execution: the same programs one at a time, sandboxed (the host's round trip to the
   judge server: ``exec_s``) and by an unisolated fork of the ceiling's interpreter; p50 and p99 of the difference,
   program by program;
4. the start of a pool of 2 local sandboxes (``Scorer.start``), ``--start-runs`` times.

    python benchmarks/throughput.py                  # about 4 minutes on 2 cores
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
loops_n = int(sys.argv[2]) if len(sys.argv) > 2 else 2
gc.collect(); gc.freeze()
started = time.perf_counter()

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
for k in range(loops_n):
    pid = os.fork()
    if pid == 0:
        os.close(r)
        with os.fdopen(w, "w") as out:
            loop(programs[k::loops_n], out)
        os._exit(0)
    loops.append(pid)
os.close(w)
with os.fdopen(r) as results:
    sys.stdout.write(results.read())
for pid in loops:
    os.waitpid(pid, 0)
sys.stdout.write(json.dumps({"steady_s": time.perf_counter() - started}) + "\n")
"""


def fork_ceiling(repeat: int, loops: int = 2) -> tuple[float, float, list[float], int]:
    """The ceiling of any design that gives each completion a fresh process: one interpreter with the fork server's
    preloaded modules forks one child per completion, ``loops`` at a time, and the child compiles and runs the
    program, the tests and the check call itself. No isolation at all, no judge, no messages. Returns (whole process
    seconds, steady-state seconds: from the first fork on, latencies in program order per loop, passed)."""
    from trl_sandbox.loading import load_tasks

    backends = Path(__file__).resolve().parent.parent / "trl_sandbox" / "backends"
    rows = load_tasks("humaneval")
    programs = [
        r["prompt"] + r["canonical_solution"] + "\n" + r["test"] + f"\ncheck({r['entry_point']})\n"
        for _ in range(repeat)
        for r in rows
    ]
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _FORK_CEILING, str(backends), str(loops)],
                          input=json.dumps(programs), capture_output=True, text=True, check=True)
    elapsed = time.perf_counter() - start
    *lines, last = proc.stdout.splitlines()
    results = [json.loads(line) for line in lines]
    return elapsed, json.loads(last)["steady_s"], [d for d, _ in results], sum(ok for _, ok in results)


# In a fresh interpreter: start a pool (timed), score the samples once (timed: the steady state), one at a time or
# ``pool_size`` at a time; prints {"start_s", "steady_s", "exec_s": [per completion, in order], "passed"}.
_STEADY = r"""
import json, sys, time
from trl_sandbox.config import SandboxConfig
from trl_sandbox.loading import load_tasks
from trl_sandbox.scoring import Scorer
from trl_sandbox.tasks import Task

samples = [json.loads(line) for line in open(sys.argv[1])]
size = int(sys.argv[2]) if sys.argv[2] != "0" else None
concurrency = int(sys.argv[3]) if sys.argv[3] != "0" else None
tasks = {}
for row in load_tasks("humaneval"):
    task = Task.from_row(row)
    tasks[task.task_id] = task
t0 = time.perf_counter()
scorer = Scorer.from_config(SandboxConfig(sandbox_pool_size=size, sandbox_max_concurrency=concurrency)).start()
start_s = time.perf_counter() - t0
with scorer:
    t0 = time.perf_counter()
    results = scorer.score([tasks[s["task_id"]] for s in samples], [s["completion"] for s in samples])
    steady_s = time.perf_counter() - t0
print(json.dumps({"start_s": start_s, "steady_s": steady_s, "exec_s": [r.exec_s for r in results],
                  "passed": sum(r.passed for r in results)}))
"""


def score_steady(samples_path: Path, pool_size: int | None, concurrency: int | None = None) -> dict:
    """:data:`_STEADY` in a fresh process."""
    proc = subprocess.run([sys.executable, "-c", _STEADY, str(samples_path), str(pool_size or 0),
                           str(concurrency or 0)],
                          check=True, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    return json.loads(proc.stdout.splitlines()[-1])


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
    parser.add_argument("--iso-repeat", type=int, default=2, help="copies per program for the isolation overhead")
    parser.add_argument("--start-runs", type=int, default=5, help="pool starts timed")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="trl-sandbox-bench-") as tmp:
        return run(args, Path(tmp))


def run(args: argparse.Namespace, tmp: Path) -> int:
    fast = tmp / "fast.jsonl"
    slow = tmp / "slow.jsonl"
    iso = tmp / "iso.jsonl"
    one = tmp / "one.jsonl"
    n_fast = len(humaneval_samples(fast, args.repeat))
    n_slow = len(humaneval_samples(slow, args.slow_repeat))
    n_iso = len(humaneval_samples(iso, args.iso_repeat))
    humaneval_samples(one, 1)
    steady: dict[str, list[float]] = {"ceiling": [], "score": []}

    def ceiling() -> tuple[float, list[float], int]:
        elapsed, steady_s, latencies, ok = fork_ceiling(args.repeat)
        steady["ceiling"].append(n_fast / steady_s)
        return elapsed, latencies, ok

    variants = [
        ("python -c per completion, 2 at a time (no isolation)", n_slow, lambda: python_c(args.slow_repeat)),
        (CEILING, n_fast, ceiling),
        ("trl-sandbox score, local, fork server", n_fast, lambda: score(fast, None, args.pool_size)),
        ("trl-sandbox score, local, launcher per execution", n_slow,
         lambda: score(slow, {"fork_server": False}, args.pool_size)),
    ]
    rows = []
    for i in range(args.runs):  # alternating: a change of the machine's load hits every variant alike
        for name, n, fn in variants:
            progress(f"{name}: run {i + 1}/{args.runs} ({n} completions)")
            elapsed, latencies, ok = fn()
            print(f"  {name}: {n / elapsed:.1f}/s ({elapsed:.1f} s, {ok}/{n} passed)", file=sys.stderr)
            rows.append((name, n, n / elapsed, latencies, ok))
            if name == "trl-sandbox score, local, fork server":
                progress(f"trl-sandbox steady state: run {i + 1}/{args.runs}")
                result = score_steady(fast, args.pool_size)
                steady["score"].append(n_fast / result["steady_s"])
    whole = []
    for name, n, _ in variants:
        mine = [r for r in rows if r[0] == name]
        whole.append({"variant": name, "completions": n, "runs": len(mine),
                      "completions/s": median([r[2] for r in mine]),
                      "p50 ms": median([percentile(r[3], 50) * 1000 for r in mine]),
                      "p99 ms": median([percentile(r[3], 99) * 1000 for r in mine]),
                      "passed": f"{min(r[4] for r in mine)}/{n}"})
    baseline, top = whole[0]["completions/s"], whole[1]["completions/s"]
    for row in whole:
        row["x python -c"] = row["completions/s"] / baseline
        row["% of ceiling"] = 100 * row["completions/s"] / top
    print(f"HumanEval canonical solutions, {os.cpu_count()} CPUs, whole process timed, median of {args.runs} runs "
          f"(variants alternating)\n")
    print(table(whole, ["variant", "completions", "runs", "completions/s", "p50 ms", "p99 ms", "x python -c",
                        "% of ceiling", "passed"]))

    ceiling_rate, score_rate = median(steady["ceiling"]), median(steady["score"])
    print(f"\nSteady state: {n_fast} completions once the interpreter is up (ceiling: after its imports; "
          f"trl-sandbox: after the pool started), median of {args.runs} runs\n")
    print(table([{"variant": CEILING, "completions/s": ceiling_rate, "% of ceiling": 100.0},
                 {"variant": "trl-sandbox, local, fork server (Scorer.score)", "completions/s": score_rate,
                  "% of ceiling": 100 * score_rate / ceiling_rate}],
                ["variant", "completions/s", "% of ceiling"]))

    # Isolation overhead: the same programs one at a time, sandboxed (the host's exec_s of each completion: judge,
    # worker, messages) and by an unisolated fork (fork, compile, run, wait); per execution, the difference.
    progress(f"isolation overhead: {n_iso} executions one at a time, each way")
    diffs, isolated, bare = [], [], []
    for _ in range(args.runs):
        _, _, plain, _ = fork_ceiling(args.iso_repeat, loops=1)
        sandboxed = score_steady(iso, 1, 1)["exec_s"]
        diffs += [s - p for s, p in zip(sandboxed, plain)]
        isolated += sandboxed
        bare += plain
    print(f"\nIsolation overhead per execution: {n_iso} executions x {args.runs} runs, one at a time (sandboxed: "
          "the host's round trip to the judge server; unisolated: fork, run, wait), ms\n")
    print(table([{"measure": "sandboxed", "p50 ms": percentile(isolated, 50) * 1000,
                  "p99 ms": percentile(isolated, 99) * 1000},
                 {"measure": "unisolated fork", "p50 ms": percentile(bare, 50) * 1000,
                  "p99 ms": percentile(bare, 99) * 1000},
                 {"measure": "overhead (sandboxed - unisolated, same program)", "p50 ms": percentile(diffs, 50) * 1000,
                  "p99 ms": percentile(diffs, 99) * 1000}],
                ["measure", "p50 ms", "p99 ms"]))

    progress(f"pool start, 2 local sandboxes: {args.start_runs} runs")
    starts = [score_steady(one, 2)["start_s"] for _ in range(args.start_runs)]
    print(f"\nPool start, 2 local sandboxes (Scorer.start, every layer), {args.start_runs} runs: median "
          f"{median(starts):.3f} s, min {min(starts):.3f} s, max {max(starts):.3f} s")
    return 0


CEILING = "fork per completion, no isolation, 2 at a time (ceiling of a fresh process per completion)"


if __name__ == "__main__":
    sys.exit(main())
