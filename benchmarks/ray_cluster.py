"""The ray backend on a ``ray.cluster_utils.Cluster`` (a head and worker nodes as separate raylets on this machine).

- Overhead: the 164 HumanEval canonical solutions scored through :class:`~trl_sandbox.scoring.Scorer` on one
  sandbox, local backend against ray backend (one actor on a worker node of 1 CPU): milliseconds per completion and
  the difference, the cost of carrying each completion through an actor call. Pool creation is not timed.
- Throughput: the same completions on a pool of one sandbox per worker node (``num_cpus=1``, nodes of 1 CPU each,
  the head given none), with 1, 2 and 3 worker nodes: completions per second. The local backend with the same pool
  size is given for reference.

Each figure is the median of ``--runs`` batches on one pool (after a short warm-up batch). The nodes share this
machine's cores: on 2 cores, 3 nodes cannot scale past 2.

    python benchmarks/ray_cluster.py                  # about 2 minutes on 2 cores
    python benchmarks/ray_cluster.py --runs 5 --repeat 2 --nodes 4
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import median, progress, table

from trl_sandbox.config import SandboxConfig
from trl_sandbox.loading import load_tasks
from trl_sandbox.scoring import Scorer
from trl_sandbox.tasks import Task


def workload(repeat: int) -> tuple[list[Task], list[str]]:
    rows = load_tasks("humaneval") * repeat
    return [Task.from_row(r) for r in rows], [r["prompt"] + r["canonical_solution"] for r in rows]


def timed_batches(config: SandboxConfig, tasks: list[Task], completions: list[str], runs: int,
                  label: str) -> tuple[float, float, int]:
    """``(median seconds per batch, pool start seconds, nodes holding the sandboxes)``: the pool started once, a
    warm-up batch, then ``runs`` timed batches; every completion must pass."""
    t0 = time.perf_counter()
    with Scorer.from_config(config).start() as scorer:
        started = time.perf_counter() - t0
        sandboxes = scorer.pool.live_sandboxes()
        nodes = len({s.data.get("node_id") if isinstance(s.data, dict) else None for s in sandboxes})
        scorer.score(tasks[:8], completions[:8])  # warm-up: the fork servers' first children, the actors' first calls
        times = []
        for i in range(runs):
            t0 = time.perf_counter()
            results = scorer.score(tasks, completions)
            times.append(time.perf_counter() - t0)
            failed = [(r.task_id, r.status, r.error) for r in results if not r.passed]
            assert not failed, failed[:3]
            progress(f"{label}: run {i + 1}/{runs}: {len(completions)} completions in {times[-1]:.2f} s")
    return median(times), started, nodes


def local_config(pool: int) -> SandboxConfig:
    return SandboxConfig(sandbox_backend="local", sandbox_pool_size=pool)


def ray_config(address: str, pool: int) -> SandboxConfig:
    return SandboxConfig(sandbox_backend="ray", sandbox_pool_size=pool,
                         sandbox_backend_options={"address": address, "num_cpus": 1})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="timed batches per figure (the median is given)")
    parser.add_argument("--repeat", type=int, default=1, help="copies of the 164 completions per batch")
    parser.add_argument("--nodes", type=int, default=3, help="throughput with 1..NODES worker nodes")
    parser.add_argument("--no-local", action="store_true", help="skip the local backend's figures")
    args = parser.parse_args(argv)

    import ray
    from ray.cluster_utils import Cluster

    os.environ.pop("RAY_ADDRESS", None)
    tasks, completions = workload(args.repeat)
    n = len(completions)
    progress("starting a Ray cluster: a head of 0 CPUs and one worker node of 1 CPU")
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, logging_level=logging.WARNING)

        overhead = []
        if not args.no_local:
            seconds, started, _ = timed_batches(local_config(1), tasks, completions, args.runs, "local, 1 sandbox")
            overhead.append({"backend": "local", "sandboxes": 1, "completions": n, "runs": args.runs,
                             "pool start s": started, "seconds": seconds, "ms per completion": seconds / n * 1000})
        seconds, started, _ = timed_batches(ray_config(cluster.address, 1), tasks, completions, args.runs,
                                         "ray, 1 sandbox")
        overhead.append({"backend": "ray (1 worker node)", "sandboxes": 1, "completions": n, "runs": args.runs,
                         "pool start s": started, "seconds": seconds, "ms per completion": seconds / n * 1000})
        if len(overhead) == 2:
            overhead[1]["overhead ms"] = overhead[1]["ms per completion"] - overhead[0]["ms per completion"]

        scaling = []
        for nodes in range(1, args.nodes + 1):
            if nodes > 1:
                progress(f"adding worker node {nodes} (1 CPU)")
                cluster.add_node(num_cpus=1)
                cluster.wait_for_nodes()
            seconds, _, used = timed_batches(ray_config(cluster.address, nodes), tasks, completions, args.runs,
                                             f"ray, {nodes} nodes x 1 sandbox")
            assert used == nodes, f"the {nodes} sandboxes are on {used} nodes, not one per node"
            row = {"worker nodes": nodes, "sandboxes": nodes, "completions": n, "runs": args.runs,
                   "seconds": seconds, "completions/s": n / seconds}
            row["x 1 node"] = row["completions/s"] / scaling[0]["completions/s"] if scaling else 1.0
            if not args.no_local:
                local_s, _, _ = timed_batches(local_config(nodes), tasks, completions, args.runs,
                                           f"local, {nodes} sandboxes")
                row["local completions/s"] = n / local_s
            scaling.append(row)
    finally:
        progress("shutting the cluster down")
        ray.shutdown()
        cluster.shutdown()

    cores = os.cpu_count()
    print(f"\nPer-completion overhead, HumanEval canonical solutions, one sandbox (median of {args.runs}; "
          f"{cores} CPUs)\n")
    print(table(overhead, ["backend", "sandboxes", "completions", "runs", "pool start s", "seconds",
                           "ms per completion", "overhead ms"]))
    columns = ["worker nodes", "sandboxes", "completions", "runs", "seconds", "completions/s", "x 1 node"]
    if not args.no_local:
        columns.append("local completions/s")
    print(f"\nThroughput, one sandbox of 1 CPU per worker node (median of {args.runs}; the nodes share this machine's "
          f"{cores} CPUs)\n")
    print(table(scaling, columns))
    return 0


if __name__ == "__main__":
    sys.exit(main())
