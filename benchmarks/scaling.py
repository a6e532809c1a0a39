"""How the local backend scales on one host: cores, memory per sandbox, pool start, and several scorers at once.

Four sections (``--sections``, default all), each point measured in a fresh process of its own:

1. ``throughput``: completions per second with 1, 2, 4... cores up to every core this process may use. Each point's
   process pins itself to its first ``k`` cores (``os.sched_setaffinity``) before it starts anything, so that the
   scorer and every process of its sandboxes (which inherit the mask) run on those ``k`` cores alone; the pool has
   ``k`` sandboxes. The programs are benchmarks/throughput.py's: HumanEval's canonical solutions (164 tasks, each
   copied ``--repeat`` times per core), scored in one batch after a warm-up batch; the pool's start is not timed.
   ``efficiency`` is the rate per core over the 1-core rate. The table says whether every sandbox process was seen
   held to the mask (read from ``/proc/<pid>/status``).
2. ``memory``: the memory of one sandbox, idle and busy: the proportional set size (PSS, from
   ``/proc/<pid>/smaps_rollup``: shared pages divided among the processes sharing them) summed over its processes
   (the launcher, the fork server, the judge server; busy: with the worker of an execution that sleeps while it
   loads), in MiB, the median over the pool's sandboxes. RSS beside it counts shared pages in full.
3. ``startup``: seconds to start a pool of 2, 4, 8, 16, 32 and 64 sandboxes (``Scorer.start()``: the backend's
   probe and every sandbox's fork server), and to close it.
4. ``ranks``: 1, 2 and 4 scorer processes on this host at once (as the ranks of ``accelerate launch`` on one node,
   each told ``LOCAL_WORLD_SIZE``), each scoring ``cores x --rounds`` stdin programs that each need 1 CPU second
   (they spin on ``time.process_time()``) under a 2 s limit per test, in two ways: ``without admission``, each rank a
   pool of one sandbox per core and no host-wide limit (``max_host_executions=0``: every rank runs as many programs
   at once as there are cores), and ``with admission``, the defaults: each rank a pool of its share of the cores
   (affinity / ``LOCAL_WORLD_SIZE``) and the host-wide admission limit (at most ``os.cpu_count()`` executions at
   once, shared by every pool). The table counts timeouts and gives the median execution's wall time. With the
   limits on CPU time (trl_sandbox/harness/cputime.py) a correct program passes either way, unless the host is so
   oversubscribed that it passes the wall-clock backstop (3 x the limit); before them, the wall-clock limit cut
   correct programs as soon as more ran than there were cores (docs/performance.md).

    python benchmarks/scaling.py                        # about 4 minutes on 16 cores
    python benchmarks/scaling.py --quick                # smaller points: about 2 minutes on 2 cores
    python benchmarks/scaling.py --sections memory,startup --json scaling.json
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).parent))
from _common import progress, table  # noqa: E402

SECTIONS = ("throughput", "memory", "startup", "ranks")
#: A stdin program that spends 1 CPU second (not 1 s of wall clock) and prints twice its input.
CPU_SECOND = (
    "import sys, time\n"
    "n = int(sys.stdin.readline())\n"
    "start = time.process_time()\n"
    "x = 0\n"
    "while time.process_time() - start < 1.0:\n"
    "    for i in range(2000):\n"
    "        x += i\n"
    "print(2 * n)\n"
)
#: The per-test limit of the ranks section, seconds (of CPU time, as the judge enforces it).
RANKS_LIMIT_S = 2.0
#: Seconds one point's process may take before it is stopped (a point takes seconds; a hang loses one point).
POINT_TIMEOUT_S = 100.0


# -- processes of a sandbox ------------------------------------------------------------------------------------------


def _children() -> dict[int, list[int]]:
    """Every process of this host by parent pid (from ``/proc/<pid>/stat``)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    return children


def sandbox_pids(pool: Any, children: dict[int, list[int]] | None = None) -> dict[str, list[int]]:
    """The host pids of every process of each live sandbox of a local-backend ``pool``: its fork server's launcher
    (the process the backend started, ``ForkServer.proc``) and all of its descendants."""
    children = children if children is not None else _children()
    backend = pool.backend
    out = {}
    for sandbox in pool.live_sandboxes():
        server = backend._servers.get(sandbox.id)  # the local backend's fork servers, by sandbox id
        if server is None:
            continue
        pids, stack = [], [server.proc.pid]
        while stack:
            pid = stack.pop()
            pids.append(pid)
            stack.extend(children.get(pid, ()))
        out[sandbox.id] = pids
    return out


def memory_kib(pid: int) -> tuple[int | None, int] | None:
    """``(PSS, RSS)`` of ``pid`` in KiB from ``/proc/<pid>/smaps_rollup``; where the kernel has no such file, PSS is
    None and RSS comes from ``/proc/<pid>/status``. None when the process is gone."""
    values = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("Pss", "Rss"):
                    values[key] = int(rest.split()[0])
    except FileNotFoundError:
        if os.path.exists(f"/proc/{pid}"):
            try:
                with open(f"/proc/{pid}/status") as f:
                    for line in f:
                        if line.startswith("VmRSS:"):
                            return None, int(line.split()[1])
            except OSError:
                return None
        return None
    except (OSError, ValueError):
        return None
    if "Rss" not in values:
        return None
    return values.get("Pss"), values["Rss"]


def allowed_cpus(pid: int) -> set[int] | None:
    """The CPUs ``pid`` may run on (``Cpus_allowed_list``), or None when it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Cpus_allowed_list:"):
                    cpus = set()
                    for part in line.split(":", 1)[1].strip().split(","):
                        lo, _, hi = part.partition("-")
                        cpus.update(range(int(lo), int(hi or lo) + 1))
                    return cpus
    except OSError:
        return None
    return None


# -- one point, in its own process -----------------------------------------------------------------------------------


def _scorer(pool_size: int | None, options: dict, weak: bool, **config: Any) -> Any:
    from trl_sandbox import SandboxConfig, Scorer

    return Scorer.from_config(SandboxConfig(sandbox_pool_size=pool_size, sandbox_backend_options=options,
                                            sandbox_allow_weak_isolation=weak, **config))


def _humaneval(repeat: int, prefix: str = "") -> tuple[list, list]:
    from trl_sandbox import Task
    from trl_sandbox.loading import load_tasks

    rows = load_tasks("humaneval")
    tasks = [Task.from_row(r) for r in rows]
    completions = [prefix + r["prompt"] + r["canonical_solution"] for r in rows]
    return tasks * repeat, completions * repeat


def point_throughput(cores: list[int], repeat: int, options: dict, weak: bool) -> dict:
    os.sched_setaffinity(0, cores)  # before the pool: every sandbox process inherits it
    k = len(cores)
    tasks, completions = _humaneval(repeat * k)
    scorer = _scorer(k, options, weak)
    t0 = time.perf_counter()
    scorer.start()
    start_s = time.perf_counter() - t0
    try:
        scorer.score(tasks[:4 * k], completions[:4 * k])  # warm-up
        t0 = time.perf_counter()
        results = scorer.score(tasks, completions)
        seconds = time.perf_counter() - t0
        pids = [p for group in sandbox_pids(scorer.pool).values() for p in group]
        masks = [allowed_cpus(p) for p in pids]
        held = all(m is None or m <= set(cores) for m in masks) and bool(pids)
    finally:
        scorer.close()
    return {"cores": k, "completions": len(results), "seconds": seconds, "per_s": len(results) / seconds,
            "passed": sum(r.passed for r in results), "pool_start_s": start_s, "affinity_held": held,
            "sandbox_processes": len(pids)}


def point_memory(sandboxes: int, options: dict, weak: bool, sleep_s: float = 1.5) -> dict:
    tasks, completions = _humaneval(1, prefix=f"import time\ntime.sleep({sleep_s})\n")
    scorer = _scorer(sandboxes, options, weak).start()
    try:
        time.sleep(0.5)
        idle = _sample(scorer.pool)
        samples: list[dict[str, tuple[int, float, int]]] = []
        stop = threading.Event()

        def sampler() -> None:
            while not stop.is_set():
                samples.append(_sample(scorer.pool))
                stop.wait(0.1)

        thread = threading.Thread(target=sampler, daemon=True)
        thread.start()
        results = scorer.score(tasks[:sandboxes], completions[:sandboxes])
        stop.set()
        thread.join()
    finally:
        scorer.close()
    idle_procs = {sid: n for sid, (n, _, _) in idle.items()}
    busy: dict[str, tuple[int, float, int]] = {}
    for sample in samples:  # per sandbox: its sample with an execution running (more processes), the largest RSS
        for sid, value in sample.items():
            if value[0] > idle_procs.get(sid, 0) and (sid not in busy or value[2] > busy[sid][2]):
                busy[sid] = value

    def med(values: dict, i: int, scale: float = 1 / 1024) -> float | None:
        return statistics.median(v[i] for v in values.values()) * scale if values else None

    return {"sandboxes": sandboxes, "idle_pss_mib": med(idle, 1), "idle_rss_mib": med(idle, 2),
            "idle_processes": med(idle, 0, 1), "busy_pss_mib": med(busy, 1), "busy_rss_mib": med(busy, 2),
            "busy_processes": med(busy, 0, 1), "busy_seen": len(busy), "passed": sum(r.passed for r in results)}


def _sample(pool: Any) -> dict[str, tuple[int, float, int]]:
    """Per sandbox: (processes, PSS KiB or NaN where the kernel gives none, RSS KiB) now."""
    out = {}
    for sid, pids in sandbox_pids(pool).items():
        readings = [m for m in map(memory_kib, pids) if m is not None]
        pss = float("nan") if any(m[0] is None for m in readings) else float(sum(m[0] for m in readings))
        out[sid] = (len(readings), pss, sum(m[1] for m in readings))
    return out


def point_startup(sandboxes: int, options: dict, weak: bool) -> dict:
    scorer = _scorer(sandboxes, options, weak)
    t0 = time.perf_counter()
    scorer.start()
    start_s = time.perf_counter() - t0
    live = len(scorer.pool.live_sandboxes())
    t0 = time.perf_counter()
    scorer.close()
    return {"sandboxes": sandboxes, "start_s": start_s, "close_s": time.perf_counter() - t0, "live": live}


def point_rank(pool_size: int | None, programs: int, options: dict, weak: bool) -> dict:
    """One rank: start the pool (``pool_size`` None: the default size), say ``ready``, wait for ``go`` on stdin,
    score ``programs`` stdin programs."""
    from trl_sandbox import Task

    tasks = [Task.from_row({"task_id": f"cpu-{i}", "inputs": [f"{i}\n"], "outputs": [f"{2 * i}\n"],
                            "time_limit": RANKS_LIMIT_S}) for i in range(programs)]
    scorer = _scorer(pool_size, options, weak, sandbox_time_limit_factor=1.0).start()
    try:
        print("ready", flush=True)
        sys.stdin.readline()
        t0 = time.perf_counter()
        results = scorer.score(tasks, [CPU_SECOND] * programs)
        seconds = time.perf_counter() - t0
        size = scorer.pool.size
    finally:
        scorer.close()
    statuses: dict[str, int] = {}
    for r in results:
        statuses[r.status] = statuses.get(r.status, 0) + 1
    return {"seconds": seconds, "statuses": statuses, "exec_s": [r.exec_s for r in results], "pool_size": size}


# -- the parent: one subprocess per point ----------------------------------------------------------------------------


def _child_argv(args: argparse.Namespace, kind: str, **params: Any) -> list[str]:
    spec = {"kind": kind, "options": json.loads(args.backend_options), "weak": args.allow_weak_isolation, **params}
    return [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(spec)]


def _stop(proc: subprocess.Popen) -> None:
    """End a point's process as Ctrl-C would (its pool deletes its sandboxes), then for good."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _run_child(args: argparse.Namespace, kind: str, timeout_s: float, **params: Any) -> dict:
    proc = subprocess.Popen(_child_argv(args, kind, **params), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        out, err = proc.communicate(timeout=timeout_s)
    finally:
        _stop(proc)
    if proc.returncode != 0:
        tail = err.strip().splitlines()[-3:]
        raise RuntimeError(f"{kind} point {params} failed (exit {proc.returncode}): {' / '.join(tail)}")
    return json.loads(out.strip().splitlines()[-1])


def _points(n: int) -> list[int]:
    points, k = [], 1
    while k < n:
        points.append(k)
        k *= 2
    return points + [n]


def _point(args: argparse.Namespace, kind: str, key: str, value: Any, **params: Any) -> dict:
    """One point's row; a point that failed is a row with its ``error`` (the section goes on)."""
    try:
        return _run_child(args, kind, POINT_TIMEOUT_S, **params)
    except Exception as exc:  # noqa: BLE001 - the other points are still worth measuring
        progress(f"{kind}: {key} {value}: FAILED: {exc}")
        return {key: value, "error": str(exc)}


def section_throughput(args: argparse.Namespace) -> list[dict]:
    cpus = sorted(os.sched_getaffinity(0))
    rows = []
    for k in _points(len(cpus)):
        progress(f"throughput: {k} core(s), {164 * args.repeat * k} completions")
        rows.append(_point(args, "throughput", "cores", k, cores=cpus[:k], repeat=args.repeat))
    base = rows[0].get("per_s")
    for row in rows:
        if base and "per_s" in row:
            row["efficiency"] = row["per_s"] / (base * row["cores"])
    return rows


def section_memory(args: argparse.Namespace) -> list[dict]:
    progress(f"memory: a pool of {args.memory_sandboxes} sandboxes, idle then busy")
    return [_point(args, "memory", "sandboxes", args.memory_sandboxes, sandboxes=args.memory_sandboxes)]


def section_startup(args: argparse.Namespace) -> list[dict]:
    rows = []
    for n in args.startup_sizes:
        progress(f"startup: a pool of {n} sandboxes")
        rows.append(_point(args, "startup", "sandboxes", n, sandboxes=n))
    return rows


def section_ranks(args: argparse.Namespace) -> list[dict]:
    cores = len(os.sched_getaffinity(0))
    programs = cores * args.rounds
    rows = []
    for ranks in (1, 2, 4):
        for admission in (False, True):
            mode = "with admission" if admission else "without admission"
            progress(f"ranks: {ranks} scorer process(es) {mode}, {programs} 1-CPU-second programs each")
            try:
                rows.append(_ranks_point(args, ranks, cores, programs, admission))
            except Exception as exc:  # noqa: BLE001 - the other points are still worth measuring
                progress(f"ranks: {ranks} {mode}: FAILED: {exc}")
                rows.append({"ranks": ranks, "admission": mode, "error": str(exc)})
    return rows


def _ranks_point(args: argparse.Namespace, ranks: int, cores: int, programs: int, admission: bool) -> dict:
    """``ranks`` scorer processes started together, each told ``LOCAL_WORLD_SIZE=ranks``; each scores once every
    pool is up. Without admission: pools of ``cores`` sandboxes and no host-wide limit; with it: the defaults."""
    options = json.loads(args.backend_options)
    if not admission:
        options["max_host_executions"] = 0
    spec_args = argparse.Namespace(**{**vars(args), "backend_options": json.dumps(options)})
    env = {**os.environ, "LOCAL_WORLD_SIZE": str(ranks)}
    procs = [subprocess.Popen(_child_argv(spec_args, "rank", pool_size=None if admission else cores,
                                          programs=programs),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=env)
             for _ in range(ranks)]
    try:
        deadline = time.monotonic() + POINT_TIMEOUT_S
        for p in procs:  # every pool up before any rank scores
            ready, _, _ = select.select([p.stdout], [], [], max(0.0, deadline - time.monotonic()))
            line = p.stdout.readline() if ready else ""
            if line.strip() != "ready":
                _stop(p)
                raise RuntimeError(f"a rank did not start its pool within {POINT_TIMEOUT_S:g} s: "
                                   f"{p.stderr.read()[-1500:]}")
        t0 = time.perf_counter()
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        outs = []
        for p in procs:
            out, err = p.communicate(timeout=POINT_TIMEOUT_S)
            if p.returncode != 0:
                raise RuntimeError(f"a rank failed (exit {p.returncode}): {err[-1500:]}")
            outs.append(json.loads(out.strip().splitlines()[-1]))
        wall = time.perf_counter() - t0
    finally:
        for p in procs:
            _stop(p)
    statuses: dict[str, int] = {}
    for out in outs:
        for status, n in out["statuses"].items():
            statuses[status] = statuses.get(status, 0) + n
    total = ranks * programs
    passed, timeouts = statuses.get("passed", 0), statuses.get("timeout", 0)
    exec_s = sorted(s for out in outs for s in out["exec_s"])
    return {"ranks": ranks, "admission": "with admission" if admission else "without admission",
            "sandboxes": sum(out["pool_size"] for out in outs), "programs": total, "passed": passed,
            "timeouts": timeouts,
            "other": total - passed - timeouts, "timeout %": 100.0 * timeouts / total, "wall s": wall,
            "median exec s": exec_s[len(exec_s) // 2] if exec_s else float("nan"), "statuses": statuses}


def child(spec: dict) -> int:
    kind = spec.pop("kind")
    fn = {"throughput": point_throughput, "memory": point_memory, "startup": point_startup, "rank": point_rank}[kind]
    print(json.dumps(fn(**spec)), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sections", default=",".join(SECTIONS), help=f"comma-separated, of {', '.join(SECTIONS)}")
    parser.add_argument("--quick", action="store_true", help="smaller points (about 2 minutes on 2 cores)")
    parser.add_argument("--repeat", type=int, help="throughput: copies of the 164 programs per core (default 2; 1 "
                                                     "with --quick)")
    parser.add_argument("--memory-sandboxes", type=int, help="memory: pool size (default 8; 4 with --quick)")
    parser.add_argument("--startup-sizes", help="startup: pool sizes (default 2,4,8,16,32,64; 2,4,8,16 with --quick)")
    parser.add_argument("--rounds", type=int, help="ranks: programs per sandbox of each rank (default 2; 1 with "
                                                     "--quick)")
    parser.add_argument("--backend-options", default="{}", help="JSON: the local backend's options (e.g. root_dir)")
    parser.add_argument("--allow-weak-isolation", action="store_true",
                        help="run the sandboxes even where the kernel cannot hold every isolation layer")
    parser.add_argument("--json", type=Path, help="also write the results as JSON to this file")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(json.loads(args.child))
    # `timeout` sends SIGTERM: unwind, so that the running point is stopped and its pool deleted.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}; choose among {', '.join(SECTIONS)}")
    args.repeat = args.repeat or (1 if args.quick else 2)
    args.memory_sandboxes = args.memory_sandboxes or (4 if args.quick else 8)
    args.startup_sizes = [int(s) for s in (args.startup_sizes or ("2,4,8,16" if args.quick else "2,4,8,16,32,64"))
                          .split(",")]
    args.rounds = args.rounds or (1 if args.quick else 2)

    cpus = len(os.sched_getaffinity(0))
    result: dict[str, Any] = {"cpu_count": os.cpu_count(), "usable_cpus": cpus, "quick": args.quick,
                              "weak_isolation_allowed": args.allow_weak_isolation}
    print(f"{cpus} usable CPUs (os.cpu_count() {os.cpu_count()}); every point in a fresh process\n")
    columns = {
        "throughput": ["cores", "completions", "seconds", "per_s", "efficiency", "passed", "affinity_held",
                       "sandbox_processes", "pool_start_s"],
        "memory": ["sandboxes", "idle_pss_mib", "idle_rss_mib", "idle_processes", "busy_pss_mib", "busy_rss_mib",
                   "busy_processes", "busy_seen", "passed"],
        "startup": ["sandboxes", "start_s", "close_s", "live"],
        "ranks": ["ranks", "admission", "sandboxes", "programs", "passed", "timeouts", "other", "timeout %",
                  "wall s", "median exec s"],
    }
    titles = {
        "throughput": "Throughput by cores (HumanEval canonical solutions; per_s: completions/s; pool = cores)",
        "memory": "Memory per sandbox (MiB, median over the pool; busy: an execution sleeping while it loads)",
        "startup": "Pool start and close (seconds)",
        "ranks": f"Scorer processes on one host, without admission (each a pool of {cpus} sandboxes, no host-wide "
                 f"limit) and with it (the defaults); programs of 1 CPU second, {RANKS_LIMIT_S:g} s limit of CPU time",
    }
    run = {"throughput": section_throughput, "memory": section_memory, "startup": section_startup,
           "ranks": section_ranks}
    failed = 0
    for name in sections:
        t0 = time.perf_counter()
        try:
            rows = run[name](args)
        except Exception as exc:  # noqa: BLE001 - one section's failure must not lose the others
            failed += 1
            progress(f"{name}: FAILED: {exc}")
            result[name] = {"error": str(exc)}
            continue
        result[name] = rows
        result[f"{name}_seconds"] = time.perf_counter() - t0
        errors = any("error" in row for row in rows)
        failed += errors
        print(f"{titles[name]}:\n")
        print(table(rows, columns[name] + (["error"] if errors else [])) + "\n", flush=True)
        if args.json:  # after every section: a run stopped later keeps what it measured
            args.json.write_text(json.dumps(result, indent=2) + "\n")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
