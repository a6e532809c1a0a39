"""Soak: many executions in a row through the local backend must not leak.

Runs ``--executions`` completions (default 10,000) in batches through a :class:`trl_sandbox.Scorer`: a mix of
passing, failing, erroring, timing-out and hostile code (fork bomb, output flood, memory bomb, daemon). After each
batch it records this (trainer) process's open file descriptors, live processes it started beyond each sandbox's
resident launcher, fork server and judge server, scratch directories left
in the sandbox root, cgroups left, and resident memory, and prints a table. Exits non-zero when any of them grew.

    python benchmarks/soak.py                    # 10,000 executions (about 10 minutes on 2 cores)
    python benchmarks/soak.py --executions 500   # quick look
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from trl_sandbox import SandboxConfig, Scorer, Task

TASK = Task.from_row({"task_id": "soak", "test_list": ["assert f(2) == 4", "assert f(3) == 9"]})
# (weight, completion, expected status)
MIX = [
    (40, "def f(x):\n    return x * x\n", "passed"),
    (25, "def f(x):\n    return x + 2\n", "failed"),
    (15, "def f(x)\n    return x\n", "error"),
    (6, "import time\ndef f(x):\n    time.sleep(30)\n", "timeout"),
    (4, ("import os\ndef f(x):\n    while True:\n        try:\n            os.fork()\n        except OSError:\n"
         "            pass\n"), "timeout"),
    (4, "import sys\ndef f(x):\n    while True:\n        sys.stdout.write('x' * 65536)\n", "timeout"),
    (3, "def f(x):\n    return len(bytearray(8 << 30))\n", "failed"),
    (3, ("import os, time\ndef f(x):\n    if os.fork() == 0:\n        os.setsid()\n        time.sleep(60)\n"
         "    return x * x\n"), "passed"),
]


def batch_completions(size: int, offset: int) -> list[str]:
    """``size`` completions following the mix's weights, deterministically."""
    pattern = [code for weight, code, _ in MIX for _ in range(weight)]
    return [pattern[(offset + i) % len(pattern)] for i in range(size)]


# Processes a local sandbox keeps while it exists: the launcher, the fork server and the judge server.
_RESIDENT = ("trl-sbx-server", "trl-sbx-judge")


def stray_processes() -> int:
    """Descendants of this process other than the sandboxes' resident ones (launchers, fork and judge servers):
    executions, and anything they left running."""
    me = os.getpid()
    parents, names = {}, {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            head, tail = stat.rsplit(")", 1)
            parents[int(entry)] = int(tail.split()[1])
            names[int(entry)] = head.split("(", 1)[1]
    stray = 0
    for pid in parents:
        if pid == me:
            continue
        chain, p = [], pid
        while p in parents and p != me:
            chain.append(p)
            p = parents[p]
        if p != me:
            continue
        launcher = len(chain) == 1 and any(names.get(c) == "trl-sbx-server" for c, pp in parents.items() if pp == pid)
        if not launcher and names[pid] not in _RESIDENT:
            stray += 1
    return stray


def snapshot(root: Path, sandbox_ids: set[str]) -> dict[str, int]:
    """Resources of this process and of the sandbox root now; cgroups counted are those of ``sandbox_ids`` (every
    sandbox this soak's pool created), so that other users of the machine do not count."""
    children = stray_processes()
    rss_kb = next(int(line.split()[1]) for line in Path("/proc/self/status").read_text().splitlines()
                  if line.startswith("VmRSS:"))
    cgroups = sum(1 for base in ("/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids") if os.path.isdir(base)
                  for group in Path(base).glob("trl-sandbox/local-*") if group.name in sandbox_ids)
    return {
        "fds": len(os.listdir("/proc/self/fd")),
        "children": children,
        "scratch_dirs": len(list(root.glob("*/runs/*"))),
        "cgroups": cgroups,
        "rss_mb": rss_kb // 1024,
    }


def run(executions: int, batch: int = 100, pool_size: int = 2, echo=print) -> tuple[list[dict], dict]:
    """Run the soak; return (per-batch rows, growth from the first batch to the last)."""
    root = Path(tempfile.mkdtemp(prefix="trl-sandbox-soak-"))
    root.chmod(0o711)
    config = SandboxConfig(
        sandbox_pool_size=pool_size,
        sandbox_test_timeout=0.5,
        sandbox_completion_timeout=2.0,
        sandbox_memory_limit=256 << 20,
        sandbox_output_limit=64 << 10,
        sandbox_backend_options={"root_dir": str(root), "scratch_limit_bytes": 16 << 20, "max_processes": 32},
    )
    rows = []
    unexpected = 0
    created: set[str] = set()
    scorer = Scorer.from_config(config)
    backend_create = scorer.pool.backend.create

    async def recording_create(labels):  # every sandbox the pool makes, replacements included
        sandbox = await backend_create(labels)
        created.add(sandbox.id)
        return sandbox

    scorer.pool.backend.create = recording_create
    try:
        with scorer:
            done = 0
            start = time.perf_counter()
            while done < executions:
                size = min(batch, executions - done)
                completions = batch_completions(size, done)
                t0 = time.perf_counter()
                results = scorer.score([TASK] * size, completions)
                elapsed = time.perf_counter() - t0
                expected = {code: status for _, code, status in MIX}
                unexpected += sum(r.status != expected[c] for r, c in zip(results, completions))
                done += size
                row = {"executions": done, **snapshot(root, created), "per_s": size / elapsed,
                       "infra_errors": sum(r.status == "infra_error" for r in results)}
                rows.append(row)
                echo(" ".join(f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()))
            total = time.perf_counter() - start
    finally:
        shutil.rmtree(root, ignore_errors=True)
    first, last = rows[0], rows[-1]
    growth = {k: last[k] - first[k] for k in ("fds", "children", "scratch_dirs", "cgroups", "rss_mb")}
    growth["unexpected_statuses"] = unexpected
    growth["seconds"] = total
    growth["executions_per_s"] = executions / total
    return rows, growth


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--executions", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--pool-size", type=int, default=2)
    args = parser.parse_args()
    rows, growth = run(args.executions, args.batch, args.pool_size, echo=lambda line: print(line, file=sys.stderr))
    keys = ["executions", "fds", "children", "scratch_dirs", "cgroups", "rss_mb", "infra_errors", "per_s"]
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    step = max(1, len(rows) // 10)
    for row in rows[::step] + ([rows[-1]] if (len(rows) - 1) % step else []):
        print("| " + " | ".join(f"{row[k]:.1f}" if isinstance(row[k], float) else str(row[k]) for k in keys) + " |")
    print(f"\ngrowth first->last batch: {growth}")
    leaked = any(growth[k] > 0 for k in ("fds", "children", "scratch_dirs", "cgroups")) or growth["rss_mb"] > 50
    return 1 if leaked or growth["unexpected_statuses"] else 0


if __name__ == "__main__":
    sys.exit(main())
