"""Verdicts under load: the judged sets of this repository's own benchmarks scored on an idle host and beside
competing processes, compared completion by completion. A verdict must not depend on what else the host runs.

Each set is scored by the local backend through :class:`trl_sandbox.Scorer` (the path ``trl-sandbox score`` takes;
the default config and pool, one sandbox per CPU, except where a set says otherwise) once per condition:

- ``idle``: nothing else started by this script (the host may be shared: its load average is printed);
- ``busy``: ``--load-factor`` (default 3) × the usable cores (``os.sched_getaffinity``) busy loops,
  ``python -c "while True: pass"``, each in its own session, at normal priority (the sandboxes run at nice 10);
- ``scorers``: other scorer processes, as other ranks of a run or other jobs on a shared node: 2 processes, each with
  its own pool of ``ceil(factor × cores / 2)`` local sandboxes, scoring stdin programs that each spend 0.3 s of CPU,
  batch after batch, for the whole condition: ``factor × cores`` executions competing with ours (they take no slot
  of the host's admission limit, as another job's would not). This is the load that cut correct programs when
  per-test limits were wall-clock ones.

The sets (``--sets``, default all; ``--quick`` takes fewer of each):

- ``humaneval``: HumanEval's canonical solutions (benchmarks/throughput.py, scaling.py), plus, for a few tasks, a
  wrong body (``return None``: failed) and a slow one (sleeps 60 s: timeout);
- ``quickstart``: the quick start's 54 tasks (``trl-sandbox train --model tiny``), reference and wrong solutions;
- ``contests``: benchmarks/contests.py's stdin tasks (dozens of tests of a few kB), its correct program and its
  program wrong past a size;
- ``agreement``: every (row, completion variant) of benchmarks/agreement_rows.py (APPS, TACO, LiveCodeBench, KodCode
  rows as the datasets publish them), ``Task.from_row(row)`` as benchmarks/agreement.py scores them;
- ``checkers``: benchmarks/checkers.py's a + b task judged by a C++ testlib checker and by a Python checker, and its
  testlib interactor (ping-pong) against Python and C++ programs, right and wrong (needs g++; skipped without);
- ``timeouts``: benchmarks/timeouts.py's cases (5 tests of 1 s: fast, 0.6 s sleeps within budget, a hang, a busy
  loop, a load that hangs);
- ``cpu``: stdin programs that spend 0.5 s of CPU (they spin on ``time.process_time()``) against a statement limit of
  1 s (``sandbox_time_limit_factor`` 1): correct, and must pass loaded as idle: a CPU-time limit passes them, a
  wall-clock one cuts them when the program gets less than half a core;
- ``sleep``: stdin programs that sleep 60 s against the same 1 s limit: no CPU at all, must time out idle and loaded
  (a CPU-time limit alone would never stop them: the wall-clock backstop must).

A verdict is the status and each test's outcome (``P`` passed, ``F`` failed, ``T`` past its time, ``-`` not run; read
from the judge's records of the run, as ``Task.judge`` reads them), compared per completion between ``idle`` and
each loaded condition. Where a set knows the status a completion must get (a canonical solution passes, a program
that sleeps 60 s times out...), the tables also count the verdicts off it (``unexpected``), idle ones included: the
"idle" host may be busy with other people's work. One table per set (a row per loaded condition: verdicts changed,
passes, timeouts and unexpected verdicts idle and loaded, the median execution seconds, the set's seconds), a
summary, every changed verdict (task, idle -> loaded) and every idle verdict off its expected status. The load
average is sampled every half second while a condition scores (``os.getloadavg()``'s 1-minute figure, which lags a
condition of a minute or two, and the runnable tasks of ``/proc/loadavg``, an instant count): mean and maximum.
Exits 1 when any verdict changed.

    python benchmarks/load.py                       # every set, idle, busy, scorers: about 5 minutes on 2 cores
    python benchmarks/load.py --quick               # fewer of each: about 2.5 minutes on 2 cores
    python benchmarks/load.py --sets cpu,sleep --loads scorers --json load.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import median, progress, table  # noqa: E402

from trl_sandbox import SandboxConfig, Scorer, Task  # noqa: E402
from trl_sandbox.errors import TaskFormatError  # noqa: E402
from trl_sandbox.tasks import harness_records  # noqa: E402

SETS = ("humaneval", "quickstart", "contests", "agreement", "checkers", "timeouts", "cpu", "sleep")
LOADS = ("busy", "scorers")
#: A stdin program that spends ``{cpu}`` s of CPU (not of wall clock) and prints twice its input.
SPIN = (
    "import sys, time\n"
    "n = int(sys.stdin.readline())\n"
    "start = time.process_time()\n"
    "x = 0\n"
    "while time.process_time() - start < {cpu}:\n"
    "    for i in range(2000):\n"
    "        x += i\n"
    "print(2 * n)\n"
)
#: A stdin program that sleeps far past any limit (no CPU at all), then would print the right answer.
SLEEPER = "import sys, time\nn = int(sys.stdin.readline())\ntime.sleep(60)\nprint(2 * n)\n"
#: The statement limit of the ``cpu`` and ``sleep`` sets, seconds per test.
LIMIT_S = 1.0
#: CPU seconds of each program of the ``cpu`` set, and of the ``scorers`` load's programs.
CPU_S = 0.5
LOAD_CPU_S = 0.3
#: Seconds a load process may take to start (a scorer's pool) and to stop.
LOAD_START_S = 120.0
LOAD_STOP_S = 60.0


# -- the sets ----------------------------------------------------------------------------------------------------


@dataclass
class Case:
    """One completion to score: its task (or the error reading its row), the completion, a label for the listing."""

    task: Any
    completion: str
    label: str
    expect: str | None = None  #: the status it must get, where the set knows it


@dataclass
class JudgedSet:
    name: str
    cases: list[Case]
    config: dict[str, Any] = field(default_factory=dict)
    note: str = ""


def _task(row: dict[str, Any]) -> Any:
    """A fresh Task per completion (the per-test outcomes are recorded by task object), or the row's error."""
    try:
        return Task.from_row(row)
    except TaskFormatError as exc:
        return exc
    except Exception as exc:  # noqa: BLE001 - a row trl-sandbox cannot read is a result too (as agreement.py)
        return TaskFormatError(f"{type(exc).__name__}: {exc}")


def _humaneval_like(rows: list[dict[str, Any]], extra: int, slow: bool) -> list[Case]:
    cases = [Case(_task(r), r["prompt"] + r["canonical_solution"], "canonical", "passed") for r in rows]
    for r in rows[:extra]:
        cases.append(Case(_task(r), r["prompt"] + "    return None\n", "wrong (return None)", "failed"))
        if slow:
            cases.append(Case(_task(r), r["prompt"] + "    import time\n    time.sleep(60)\n", "slow (sleeps 60 s)",
                              "timeout"))
    return cases


def set_humaneval(quick: bool) -> JudgedSet:
    from trl_sandbox.loading import load_tasks

    rows = load_tasks("humaneval")
    rows = rows[:24] if quick else rows
    extra = 4 if quick else 12
    return JudgedSet("humaneval", _humaneval_like(rows, extra, slow=True),
                     note=f"{len(rows)} canonical solutions; {extra} wrong, {extra} sleeping past the limit")


def set_quickstart(quick: bool) -> JudgedSet:
    from trl_sandbox.loading import load_tasks

    rows = load_tasks("quickstart")
    rows = rows[:18] if quick else rows
    return JudgedSet("quickstart", _humaneval_like(rows, len(rows), slow=False),
                     note=f"{len(rows)} tasks: reference and wrong solutions")


def set_contests(quick: bool) -> JudgedSet:
    import contests

    n_tasks, n_tests = (3, 10) if quick else (12, 40)
    rows = contests.make_tasks(n_tasks, n_tests, 4)
    cases = [Case(_task(r), contests.PROGRAM, "correct", "passed") for r in rows]
    cases += [Case(_task(r), contests.WRONG, "wrong past n = 300", "failed") for r in rows]
    return JudgedSet("contests", cases, note=f"{n_tasks} tasks x {n_tests} stdin tests (up to 4 kB), right and wrong")


def set_agreement(quick: bool) -> JudgedSet:
    import agreement_rows

    cases = []
    for entry in agreement_rows.entries():
        variants = entry["variants"][:2] if quick else entry["variants"]
        for variant in variants:
            cases.append(Case(_task(entry["row"]), variant["completion"], f"{entry['dataset']}: {variant['name']}"))
    return JudgedSet("agreement", cases, note="benchmarks/agreement_rows.py: APPS, TACO, LiveCodeBench, KodCode rows"
                     + (" (2 variants per row)" if quick else ""))


def set_checkers(quick: bool) -> JudgedSet | None:
    import shutil

    if shutil.which("g++") is None:
        progress("checkers: g++ is not installed: set skipped")
        return None
    import checkers

    n = 5 if quick else 20
    inputs, outputs = checkers.sum_tests(n)
    wrong_py = checkers.SUM_PY.replace("a + b", "a + b + (a > 2)")
    cases = []
    for judge, compare in (("C++ testlib checker", {"checker": checkers.CHECKER_CPP, "language": "cpp"}),
                           ("Python checker", {"checker": checkers.CHECKER_PY, "language": "python"})):
        row = {"task_id": f"sum, {judge}", "inputs": inputs, "outputs": outputs, "compare": compare}
        cases.append(Case(_task(row), checkers.SUM_PY, f"{judge}: Python, right", "passed"))
        cases.append(Case(_task(row), wrong_py, f"{judge}: Python, wrong from a = 3", "failed"))
        cases.append(Case(_task(row), checkers.fenced(checkers.SUM_CPP), f"{judge}: C++, right", "passed"))
    interactor = {"interactor": checkers.INTERACTOR_CPP, "language": "cpp"}
    for k in (10, 1000):
        row = {"task_id": f"pingpong-{k}", "inputs": [f"{k}\n"], "outputs": [""], "interactor": interactor}
        cases.append(Case(_task(row), checkers.PONG_PY, f"interactor, K = {k}: Python, right", "passed"))
        cases.append(Case(_task(row), checkers.fenced(checkers.PONG_CPP), f"interactor, K = {k}: C++, right", "passed"))
        cases.append(Case(_task(row), checkers.PONG_PY.replace("x + 1", "x + 1 + (x == 7)"),
                          f"interactor, K = {k}: Python, wrong at round 7", "failed"))
    return JudgedSet("checkers", cases, config={"sandbox_completion_timeout": 120.0},
                     note=f"a + b, {n} tests, C++ testlib and Python checkers; testlib interactor, K = 10 and 1000")


def set_timeouts(quick: bool) -> JudgedSet:
    import timeouts

    n, budget = 5, 1.0
    cases = []
    for _ in range(1 if quick else 2):
        # fast and within-budget tests pass; a hang or a busy loop in test 2 fails it (tests 0 and 1 keep their
        # credit); a load that hangs times out
        for (name, code, _bound), expect in zip(timeouts.cases(n, budget),
                                                ("passed", "passed", "failed", "failed", "timeout")):
            row = {"task_id": "timeouts", "test_list": [f"assert f({i}) == {i}" for i in range(n)]}
            cases.append(Case(_task(row), code, name, expect))
    return JudgedSet("timeouts", cases, config={"sandbox_test_timeout": budget,
                                                 "sandbox_completion_timeout": n * budget + 5},
                     note=f"benchmarks/timeouts.py's cases: {n} tests, {budget:g} s per test")


def _stdin_rows(prefix: str, count: int) -> list[dict[str, Any]]:
    return [{"task_id": f"{prefix}-{i}", "inputs": [f"{i}\n"], "outputs": [f"{2 * i}\n"], "time_limit": LIMIT_S}
            for i in range(count)]


def set_cpu(quick: bool) -> JudgedSet:
    count = 6 if quick else 12
    program = SPIN.format(cpu=CPU_S)
    cases = [Case(_task(r), program, f"{CPU_S:g} s of CPU", "passed") for r in _stdin_rows("cpu", count)]
    return JudgedSet("cpu", cases,
                     config={"sandbox_time_limit_factor": 1.0},
                     note=f"{count} correct stdin programs, {CPU_S:g} s of CPU each, {LIMIT_S:g} s limit")


def set_sleep(quick: bool) -> JudgedSet:
    count = 3 if quick else 6
    return JudgedSet("sleep", [Case(_task(r), SLEEPER, "sleeps 60 s", "timeout") for r in _stdin_rows("sleep", count)],
                     config={"sandbox_time_limit_factor": 1.0},
                     note=f"{count} stdin programs sleeping 60 s, {LIMIT_S:g} s limit: must time out")


BUILDERS: dict[str, Callable[[bool], JudgedSet | None]] = {
    "humaneval": set_humaneval, "quickstart": set_quickstart, "contests": set_contests, "agreement": set_agreement,
    "checkers": set_checkers, "timeouts": set_timeouts, "cpu": set_cpu, "sleep": set_sleep,
}


# -- per-test outcomes -------------------------------------------------------------------------------------------

#: id(task) -> each test's outcome in the last judged run of that task (one Task object per completion).
_OUTCOMES: dict[int, str] = {}
_original_judge = Task.judge


def _recording_judge(self: Task, stdout: bytes, *args: Any, **kwargs: Any) -> Any:
    """``Task.judge``, which also keeps each test's outcome as the judge's records give it."""
    try:
        marks = ["-"] * len(self.tests)
        for record in harness_records(stdout, kwargs.get("key"))[1:]:
            i = record.get("i")
            if isinstance(i, int) and 0 <= i < len(marks) and marks[i] == "-":
                marks[i] = "P" if record.get("ok") is True else "T" if record.get("timeout") else "F"
            elif "load" in record:
                marks = [f"load {record['load']}"]
                break
        _OUTCOMES[id(self)] = "".join(marks)
    except Exception:  # noqa: BLE001 - the marks are a detail; the verdict itself is Task.judge's
        _OUTCOMES.pop(id(self), None)
    return _original_judge(self, stdout, *args, **kwargs)


Task.judge = _recording_judge  # this process only: the scorer judges in the process that calls it


# -- the loads ---------------------------------------------------------------------------------------------------


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


class Load:
    """Competing processes, started with :meth:`start` and ended with :meth:`stop` (each by its own pid)."""

    def __init__(self, kind: str, factor: int, args: argparse.Namespace) -> None:
        self.kind, self.factor, self.args = kind, factor, args
        self.procs: list[subprocess.Popen] = []
        n = factor * cores()
        if kind == "busy":
            self.description = f"{n} busy loops (python -c 'while True: pass'), nice 0"
        else:
            self.pool = math.ceil(n / 2)
            self.description = (f"2 scorer processes x {self.pool} local sandboxes, stdin programs of "
                                f"{LOAD_CPU_S:g} s of CPU back to back")

    def start(self) -> None:
        if self.kind == "busy":
            for _ in range(self.factor * cores()):
                self.procs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                                   start_new_session=True))
            time.sleep(1.0)
            return
        argv = [sys.executable, str(Path(__file__).resolve()), "--load-scorer", str(self.pool)]
        if self.args.allow_weak_isolation:
            argv.append("--allow-weak-isolation")
        for _ in range(2):
            self.procs.append(subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                               start_new_session=True))
        deadline = time.monotonic() + LOAD_START_S
        for proc in self.procs:  # every pool up and scoring before ours starts
            ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            line = proc.stdout.readline() if ready else ""
            if line.strip() != "scoring":
                self.stop()
                raise RuntimeError(f"a load scorer did not start within {LOAD_START_S:g} s (exit {proc.poll()})")
        time.sleep(2.0)

    def stop(self) -> None:
        for proc in self.procs:
            if proc.stdin:  # a load scorer: end of stdin is its signal to finish its batch and close its pool
                try:
                    proc.stdin.close()
                except OSError:
                    pass
            else:
                proc.kill()
        deadline = time.monotonic() + LOAD_STOP_S
        for proc in self.procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self.procs = []


def load_scorer(pool: int, weak: bool) -> int:
    """A competing scorer: its own pool of ``pool`` local sandboxes, scoring CPU-bound stdin programs batch after
    batch until its stdin ends; ``scoring`` on stdout once its first batch is under way. It takes no slot of the
    host's admission limit (``max_host_executions=0``: another job that does not share it), so that the load stays
    at its size whatever the limit admits of the judged sets."""
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    rows = [{"task_id": f"load-{i}", "inputs": [f"{i}\n"], "outputs": [f"{2 * i}\n"]} for i in range(pool)]
    tasks = [Task.from_row(r) for r in rows]
    program = SPIN.format(cpu=LOAD_CPU_S)
    config = SandboxConfig(sandbox_pool_size=pool, sandbox_test_timeout=30.0, sandbox_allow_weak_isolation=weak,
                           sandbox_backend_options={"max_host_executions": 0})
    with Scorer.from_config(config) as scorer:
        first = True
        while not stop.is_set():
            if first:
                threading.Timer(0.5, lambda: print("scoring", flush=True)).start()
                first = False
            scorer.score(tasks, [program] * pool)
    return 0


class LoadSampler:
    """``os.getloadavg()[0]`` and the runnable tasks of ``/proc/loadavg``, every half second, in a thread."""

    def __init__(self) -> None:
        self.avg: list[float] = []
        self.runnable: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.avg.append(os.getloadavg()[0])
            try:
                with open("/proc/loadavg") as f:
                    self.runnable.append(int(f.read().split()[3].split("/")[0]) - 1)  # less this reader
            except (OSError, ValueError, IndexError):
                pass
            self._stop.wait(0.5)

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> dict[str, float]:
        return {"loadavg mean": sum(self.avg) / len(self.avg) if self.avg else float("nan"),
                "loadavg max": max(self.avg, default=float("nan")),
                "runnable mean": sum(self.runnable) / len(self.runnable) if self.runnable else float("nan")}


# -- scoring -----------------------------------------------------------------------------------------------------


def score_set(judged: JudgedSet, args: argparse.Namespace) -> list[dict[str, Any]]:
    """Score every case of ``judged`` with a fresh scorer: per case its status, per-test outcomes and seconds."""
    config = SandboxConfig(sandbox_allow_weak_isolation=args.allow_weak_isolation, **judged.config)
    for case in judged.cases:
        _OUTCOMES.pop(id(case.task), None)
    with Scorer.from_config(config) as scorer:
        results = scorer.score([c.task for c in judged.cases], [c.completion for c in judged.cases])
    return [{"task_id": r.task_id, "label": c.label, "expect": c.expect, "status": r.status,
             "tests": _OUTCOMES.get(id(c.task), ""), "tests_passed": r.tests_passed, "exec_s": r.exec_s,
             "duration_s": r.duration_s, "error": (r.error or "")[:200]} for c, r in zip(judged.cases, results)]


def run_condition(name: str, sets: list[JudgedSet], args: argparse.Namespace, load: Load | None) -> dict[str, Any]:
    if load is not None:
        progress(f"{name}: starting the load: {load.description}")
        load.start()
    try:
        out: dict[str, Any] = {"sets": {}}
        t0 = time.perf_counter()
        with LoadSampler() as sampler:
            for judged in sets:
                progress(f"{name}: {judged.name}: {len(judged.cases)} completions")
                s0 = time.perf_counter()
                out["sets"][judged.name] = score_set(judged, args)
                out.setdefault("set_seconds", {})[judged.name] = time.perf_counter() - s0
        out["seconds"] = time.perf_counter() - t0
        out["load"] = sampler.summary()
        out["load_pids"] = [proc.pid for proc in load.procs] if load is not None else []
        out["description"] = load.description if load else "nothing started by this script"
        return out
    finally:
        if load is not None:
            progress(f"{name}: stopping the load")
            load.stop()


def verdict(result: dict[str, Any]) -> str:
    return f"{result['status']} [{result['tests']}]" if result["tests"] else result["status"]


def compare(idle: dict[str, Any], loaded: dict[str, Any], load_name: str) -> tuple[list[dict], list[dict]]:
    """Per set: the table row for ``loaded`` against ``idle``; and every changed verdict."""
    rows, changed = [], []
    for name, base in idle["sets"].items():
        other = loaded["sets"][name]
        diffs = [(a, b) for a, b in zip(base, other) if (a["status"], a["tests"]) != (b["status"], b["tests"])]
        rows.append({"set": name, "load": load_name, "completions": len(base), "verdicts changed": len(diffs),
                     "passed idle": sum(r["status"] == "passed" for r in base),
                     "passed loaded": sum(r["status"] == "passed" for r in other),
                     "unexpected idle": sum(r["expect"] not in (None, r["status"]) for r in base),
                     "unexpected loaded": sum(r["expect"] not in (None, r["status"]) for r in other),
                     "timeouts idle": sum(r["status"] == "timeout" for r in base),
                     "timeouts loaded": sum(r["status"] == "timeout" for r in other),
                     "median exec s idle": median([r["exec_s"] for r in base]),
                     "median exec s loaded": median([r["exec_s"] for r in other]),
                     "set s idle": idle["set_seconds"][name], "set s loaded": loaded["set_seconds"][name]})
        for a, b in diffs:
            changed.append({"set": name, "load": load_name, "task": a["task_id"], "completion": a["label"],
                            "idle": verdict(a), "loaded": verdict(b),
                            "loaded error": " ".join(b["error"].split()).replace("|", "\\|")[:100]})
    return rows, changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default=",".join(SETS), help=f"comma-separated, of {', '.join(SETS)}")
    parser.add_argument("--loads", default=",".join(LOADS), help=f"comma-separated, of {', '.join(LOADS)}")
    parser.add_argument("--load-factor", type=int, default=3, help="competing executions per usable core (3)")
    parser.add_argument("--quick", action="store_true", help="fewer of each set (about 2.5 minutes on 2 cores)")
    parser.add_argument("--allow-weak-isolation", action="store_true",
                        help="run the sandboxes even where the kernel cannot hold every isolation layer")
    parser.add_argument("--json", type=Path, help="also write every completion's verdicts as JSON to this file")
    parser.add_argument("--load-scorer", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.load_scorer:
        return load_scorer(args.load_scorer, args.allow_weak_isolation)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind: the loads are stopped, the pools deleted
    names = [s.strip() for s in args.sets.split(",") if s.strip()]
    loads = [s.strip() for s in args.loads.split(",") if s.strip()]
    if set(names) - set(SETS) or set(loads) - set(LOADS):
        parser.error(f"choose sets among {', '.join(SETS)} and loads among {', '.join(LOADS)}")
    sets = [s for s in (BUILDERS[n](args.quick) for n in names) if s is not None]

    n = cores()
    start_load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{n} usable cores (os.cpu_count() {os.cpu_count()}); load average {start_load} at the start; local "
          f"backend, the default pool of {os.cpu_count()} sandboxes per scorer; "
          f"{'quick' if args.quick else 'full'} sets\n")
    conditions = {"idle": run_condition("idle", sets, args, None)}
    for kind in loads:
        conditions[kind] = run_condition(kind, sets, args, Load(kind, args.load_factor, args))

    print("Conditions (load average sampled every 0.5 s while scoring; runnable: tasks running or waiting for a "
          "CPU, /proc/loadavg):\n")
    print(table([{"condition": name, "competing load": c["description"], "seconds": c["seconds"], **c["load"]}
                 for name, c in conditions.items()],
                ["condition", "competing load", "seconds", "loadavg mean", "loadavg max", "runnable mean"]) + "\n")
    all_rows, all_changed = [], []
    for kind in loads:
        rows, changed = compare(conditions["idle"], conditions[kind], kind)
        all_rows += rows
        all_changed += changed
    columns = ["load", "completions", "verdicts changed", "passed idle", "passed loaded", "timeouts idle",
               "timeouts loaded", "unexpected idle", "unexpected loaded", "median exec s idle", "median exec s loaded",
               "set s idle", "set s loaded"]
    for judged in sets:
        print(f"{judged.name}: {judged.note}\n")
        print(table([r for r in all_rows if r["set"] == judged.name], columns) + "\n")
    print(f"Summary ({args.load_factor} x {n} cores of competing load):\n")
    print(table(all_rows, ["set", *columns[:9]]) + "\n")
    print(f"{len(all_changed)} verdicts changed under load"
          + (" (idle -> loaded; test outcomes P passed, F failed, T past its time, - not run):\n" if all_changed
             else "."))
    if all_changed:
        print(table(all_changed, ["set", "load", "task", "completion", "idle", "loaded", "loaded error"]))
    off = [{"set": name, "task": r["task_id"], "completion": r["label"], "expected": r["expect"],
            "idle": verdict(r), "error": " ".join(r["error"].split()).replace("|", "\\|")[:100]}
           for name, results in conditions["idle"]["sets"].items() for r in results
           if r["expect"] not in (None, r["status"])]
    if off:
        print(f"\n{len(off)} idle verdicts off the status their set expects (the host is shared: its own load "
              "counts):\n")
        print(table(off, ["set", "task", "completion", "expected", "idle", "error"]))
    if args.json:
        args.json.write_text(json.dumps({"cores": n, "quick": args.quick, "load_factor": args.load_factor,
                                         "conditions": conditions, "rows": all_rows, "changed": all_changed},
                                        indent=1) + "\n")
    return 1 if all_changed else 0


if __name__ == "__main__":
    sys.exit(main())
