"""What checker programs and interactors cost per test, against running the same binaries by hand on the host.

Three measurements, in one run, on one backend (``--backend local`` by default; ``harness``: the mock backend running
``python harness.pyz`` per request unisolated, as the remote backends run it, with statically linked judge programs):

1. **Checker overhead per test.** A stdin task of ``--tests`` tests (``a b``, print ``a + b``), solved by a Python
   program and by the same program in C++ (compiled in the sandbox, once per completion), judged (a) by the built-in
   token judge, (b) by a C++ testlib checker (compiled once on the host) and (c) by a Python checker (testlib's exit
   codes). Each completion is scored ``--runs`` times after a warm-up (which compiles and self-tests the checker);
   per-test time = the completion's ``exec_s`` / tests (so a C++ program's compilation is spread over its tests),
   p50 and p99 over the runs; the overhead of (b) and (c) is their p50 minus the token judge's, same program. By
   hand: the same compiled checker binary run with ``subprocess.run`` on the same three files (input, output, answer)
   on the host, ``--tests`` × ``--runs`` times, and the Python checker as ``python -I -S checker.py ...``: what a
   bare fork and exec cost, without a sandbox.
2. **The compile cache.** A cold build of the testlib checker against trl-sandbox's testlib.h (dynamic and
   ``-static``), each into a fresh cache (``--compile-runs`` times), and the cost of a hit: ``compile_judge_program``
   on a key already built (the key's hashing of source, header and flags, the file lock, reading and hashing the
   binary), p50/p99 over ``--hits`` calls, and the key alone (``build_key``).
3. **Interaction round trip.** A testlib interactor (C++) that plays ``K`` rounds of ping-pong (it writes ``i``, the
   program answers ``i + 1``) against a C++ program and a Python program, one test per task, for ``K = 0`` and each
   of ``--rounds``: µs per round trip = (median time of the K test - median time of the K = 0 test) / K (and the same
   from the fastest run of each, the least disturbed by other work: ``us, fastest runs``); the one-time
   cost of an interactive test = the K = 0 test minus a plain stdin test of the same program (its input ``-1``: it
   exits at once). By hand: the same interactor binary and the same program (compiled here with ``g++ -O2``, or
   ``python -I -S``) connected by two ``os.pipe()`` on the host.

The by-hand baselines run at ``--hand-nice`` (default 10, the niceness of the local backend's sandboxes; set when run
as root), so that beside other work both sides get the same share of the CPUs: a ping-pong needs both of its
processes scheduled at once. With ``--backend harness`` every request also starts an interpreter and loads the
harness, and run as root its worker cannot run a C++ program when this interpreter's standard library is private
(pyenv's under ``/root``): those rows are left out then.

The checker and interactor builds go to a temporary ``TRL_SANDBOX_CACHE`` (removed at the end) unless ``--cache DIR``
is given. The machine is stated above the tables (CPU, cores, kernel, load average at the start and at the end); it
is shared: expect noise, and read p99 over a few runs as "the slowest run".

    python benchmarks/checkers.py [--tests 50] [--runs 20] [--rounds 1000 10000] [--backend local] [--cache DIR]
    python benchmarks/checkers.py --quick     # a few tests and rounds: a smoke run of a few seconds
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import median, percentile, progress, table

from trl_sandbox import SandboxConfig, Scorer, Task
from trl_sandbox import judge_programs

#: testlib checker: the answer file's sum against the program's one integer.
CHECKER_CPP = r"""
#include "testlib.h"
int main(int argc, char* argv[]) {
    registerTestlibCmd(argc, argv);
    long long a = inf.readLong(), b = inf.readLong();
    long long want = ans.readLong();
    if (want != a + b) quitf(_fail, "the answer file says %lld for %lld + %lld", want, a, b);
    long long got = ouf.readLong();
    if (got != want) quitf(_wa, "expected %lld, found %lld", want, got);
    quitf(_ok, "%lld", got);
}
"""
#: The same check in Python (testlib's convention: ``checker input output answer``, exit 0 accepts, 1 rejects).
CHECKER_PY = """
import sys
a, b = map(int, open(sys.argv[1]).read().split())
want = int(open(sys.argv[3]).read())
got = open(sys.argv[2]).read().split()
sys.exit(0 if got == [str(want)] and want == a + b else 1)
"""
SUM_PY = "a, b = map(int, input().split())\nprint(a + b)\n"
SUM_CPP = ('#include <cstdio>\nint main() { long long a, b; if (scanf("%lld %lld", &a, &b) != 2) return 1; '
           'printf("%lld\\n", a + b); }\n')

#: testlib interactor: K rounds of ping-pong (it writes i, the program answers i + 1), then -1 (the program exits).
INTERACTOR_CPP = r"""
#include "testlib.h"
#include <iostream>
int main(int argc, char* argv[]) {
    registerInteraction(argc, argv);
    int k = inf.readInt();
    for (int i = 0; i < k; i++) {
        std::cout << i << std::endl;
        int got = ouf.readInt();
        if (got != i + 1) quitf(_wa, "round %d: expected %d, found %d", i, i + 1, got);
    }
    std::cout << -1 << std::endl;
    quitf(_ok, "%d rounds", k);
}
"""
PONG_PY = """
import sys
read = sys.stdin.readline
while True:
    x = int(read())
    if x < 0:
        break
    print(x + 1, flush=True)
"""
PONG_CPP = ('#include <cstdio>\nint main() { long long x; while (scanf("%lld", &x) == 1 && x >= 0) { '
            'printf("%lld\\n", x + 1); fflush(stdout); } }\n')


def fenced(source: str) -> str:
    return f"```cpp\n{source}```"


def machine() -> str:
    """One line: CPU model, cores, kernel, load average now, date."""
    model = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (f"Machine: {model}, {os.cpu_count()} cores, kernel {platform.release()}, load average {load} at the "
            f"start; {today}; Python {platform.python_version()}")


# -- 1. checker overhead -----------------------------------------------------------------------------------------


def sum_tests(n: int) -> tuple[list[str], list[str]]:
    return [f"{i} {3 * i + 1}\n" for i in range(n)], [f"{4 * i + 1}\n" for i in range(n)]


def checker_rows(scorer: Scorer, n_tests: int, runs: int, native: bool) -> list[dict[str, Any]]:
    inputs, outputs = sum_tests(n_tests)
    judges = {"tokens (built-in)": None, "C++ testlib checker": {"checker": CHECKER_CPP, "language": "cpp"},
              "Python checker": {"checker": CHECKER_PY, "language": "python"}}
    programs = {"Python": SUM_PY, "C++": fenced(SUM_CPP)} if native else {"Python": SUM_PY}
    tasks = {}
    for judge, compare in judges.items():
        row = {"task_id": f"sum-{judge}", "inputs": inputs, "outputs": outputs}
        if compare is not None:
            row["compare"] = compare
        tasks[judge] = Task.from_row(row)
    rows = []
    for language, program in programs.items():
        progress(f"checker overhead: {language} program, each judge in turn: warm-up and {runs} runs of {n_tests} "
                 f"tests")
        for judge, task in tasks.items():
            (warm,) = scorer.score([task], [program])  # compiles (if not cached) and self-tests the checker
            assert warm.status == "passed", (language, judge, warm.status, warm.error)
        per_test: dict[str, list[float]] = {judge: [] for judge in tasks}
        statuses: dict[str, set[str]] = {judge: set() for judge in tasks}
        for _ in range(runs):  # the judges in turn, so that the machine's drift reaches each alike
            for judge, task in tasks.items():
                (result,) = scorer.score([task], [program])
                statuses[judge].add(result.status)
                per_test[judge].append(result.exec_s / n_tests * 1000)
        baseline = median(per_test["tokens (built-in)"])
        for judge in tasks:
            p50 = median(per_test[judge])
            rows.append({"program": language, "judge": judge, "status": "/".join(sorted(statuses[judge])),
                         "runs": runs, "per test p50 ms": p50, "per test p99 ms": percentile(per_test[judge], 99),
                         "over tokens p50 ms": p50 - baseline})
    return rows


def by_hand_checker_rows(binary: Path, n_tests: int, runs: int, work: Path) -> list[dict[str, Any]]:
    """The compiled checker and the Python checker run on the host with ``subprocess.run``, no sandbox."""
    inputs, outputs = sum_tests(n_tests)
    files = []
    for i, (text, answer) in enumerate(zip(inputs, outputs)):
        paths = [work / f"{i}.{name}" for name in ("in", "out", "ans")]
        for path, data in zip(paths, (text, answer, answer)):
            path.write_text(data)
        files.append([str(p) for p in paths])
    checker_py = work / "checker.py"
    checker_py.write_text(CHECKER_PY)
    (work / "sum.cpp").write_text(SUM_CPP)
    subprocess.run(["g++", "-O2", "-std=c++17", "-o", str(work / "sum"), str(work / "sum.cpp")], check=True)
    rows = []
    for language, argv in (("Python", [sys.executable, "-I", "-S", "-c", SUM_PY]), ("C++", [str(work / "sum")])):
        progress(f"by hand: the {language} program, {n_tests * runs} runs with the input piped")
        calls = []
        for _ in range(runs):
            for text, answer in zip(inputs, outputs):
                start = time.perf_counter()
                done = subprocess.run(argv, input=text.encode(), capture_output=True, check=False)
                calls.append((time.perf_counter() - start) * 1000)
                assert done.returncode == 0 and done.stdout.decode() == answer, (language, done)
        rows.append({"program": f"{language}, by hand (subprocess.run, input piped)", "judge": "(none)",
                     "status": "exit 0", "runs": len(calls), "per test p50 ms": median(calls),
                     "per test p99 ms": percentile(calls, 99)})
    for name, argv in (("C++ testlib checker binary, subprocess.run", [str(binary)]),
                       ("Python checker, subprocess.run python -I -S", [sys.executable, "-I", "-S", str(checker_py)])):
        progress(f"by hand: {name}, {n_tests * runs} calls")
        calls = []
        for _ in range(runs):
            for paths in files:
                start = time.perf_counter()
                done = subprocess.run([*argv, *paths], capture_output=True, check=False)
                calls.append((time.perf_counter() - start) * 1000)
                assert done.returncode == 0, (name, done.returncode, done.stderr[-300:])
        rows.append({"program": "(none: by hand)", "judge": name, "status": "exit 0", "runs": len(calls),
                     "per test p50 ms": median(calls), "per test p99 ms": percentile(calls, 99)})
    # The judge's own launch (trl_sandbox/harness/checkers.py run_checker: os.fork of the calling Python process,
    # memory files, exec of the binary from its sealed memory file), called here on the host, outside any sandbox.
    from trl_sandbox.harness.checkers import run_checker

    sha = hashlib.sha256(binary.read_bytes()).hexdigest()
    compare = {"checker": "", "language": "cpp", **judge_programs.JudgeBinary("", sha, binary).request_fields()}
    progress(f"by hand: the judge's run_checker in this process, {n_tests * runs} calls")
    calls = []
    for _ in range(runs):
        for text, answer in zip(inputs, outputs):
            start = time.perf_counter()
            verdict = run_checker(compare, text, answer, answer, None)
            calls.append((time.perf_counter() - start) * 1000)
            assert verdict is True, verdict
    rows.append({"program": "(none: by hand)", "judge": "C++ testlib checker binary, the judge's run_checker here "
                 "(a fork of this process)", "status": "accepted", "runs": len(calls),
                 "per test p50 ms": median(calls), "per test p99 ms": percentile(calls, 99)})
    return rows


# -- 2. the compile cache ----------------------------------------------------------------------------------------


def compile_rows(runs: int, hits: int, cache: Path, work: Path) -> tuple[list[dict[str, Any]], Path]:
    """Cold builds of the checker (dynamic, static), each into a fresh cache; then hits on ``cache``. Returns the
    rows and the dynamic binary's path in ``cache``."""
    spec = {"checker": CHECKER_CPP, "language": "cpp"}
    judge_programs.build_key(spec, static=False)  # the compiler's identity (g++ --version), once per process
    rows = []
    dynamic = None
    for static in (False, True):
        kind = "static (-static)" if static else "dynamic"
        cold = []
        for run in range(runs):
            progress(f"compile cache: cold build, {kind}, {run + 1}/{runs}")
            target = cache if run == 0 else Path(tempfile.mkdtemp(prefix=f"cold-{run}-", dir=work))
            if run == 0 and (cache / "judge-programs" / judge_programs.build_key(spec, static=static)).exists():
                target = Path(tempfile.mkdtemp(prefix="cold-0-", dir=work))  # --cache given and built: stay cold
            start = time.perf_counter()
            built = judge_programs.compile_judge_program(spec, static=static, cache=target)
            cold.append(time.perf_counter() - start)
            assert built.compiled, "a cold build came from the cache"
            if target != cache:
                shutil.rmtree(target)
        built = judge_programs.compile_judge_program(spec, static=static, cache=cache)
        if not static:
            dynamic = built.path
        progress(f"compile cache: {hits} hits, {kind}")
        hit, key = [], []
        for _ in range(hits):
            start = time.perf_counter()
            again = judge_programs.compile_judge_program(spec, static=static, cache=cache)
            hit.append((time.perf_counter() - start) * 1000)
            assert not again.compiled
            start = time.perf_counter()
            judge_programs.build_key(spec, static=static)
            key.append((time.perf_counter() - start) * 1000)
        rows.append({"build": f"testlib checker, {kind}", "binary KiB": built.path.stat().st_size / 1024,
                     "cold runs": runs, "cold compile s": median(cold), "hits": hits, "hit p50 ms": median(hit),
                     "hit p99 ms": percentile(hit, 99), "key alone p50 ms": median(key)})
    assert dynamic is not None
    return rows, dynamic


# -- 3. interaction ----------------------------------------------------------------------------------------------


def interaction_rows(scorer: Scorer, rounds: list[int], runs: int, native: bool) -> list[dict[str, Any]]:
    interactor = {"interactor": INTERACTOR_CPP, "language": "cpp"}
    tasks = {k: Task.from_row({"task_id": f"pingpong-{k}", "inputs": [f"{k}\n"], "outputs": [""],
                               "interactor": interactor}) for k in [0, *rounds]}
    plain = Task.from_row({"task_id": "pong-stdin", "inputs": ["-1\n"], "outputs": [""]})
    rows = []
    programs = (("C++", fenced(PONG_CPP)), ("Python", PONG_PY)) if native else (("Python", PONG_PY),)
    for language, program in programs:
        keys = [("stdin", plain), *tasks.items()]
        progress(f"interaction: {language} program, a plain stdin test and K = {[0, *rounds]} in turn: warm-up and "
                 f"{runs} runs")
        for key, task in keys:
            (warm,) = scorer.score([task], [program])
            assert warm.status == "passed", (language, key, warm.status, warm.error)
        times: dict[Any, list[float]] = {key: [] for key, _ in keys}
        for _ in range(runs):
            for key, task in keys:
                (result,) = scorer.score([task], [program])
                assert result.status == "passed", (language, key, result.status, result.error)
                times[key].append(result.exec_s * 1000)
        zero, stdin = median(times[0]), median(times["stdin"])
        for k in rounds:
            rows.append({"program": f"{language}, through the sandbox", "K": k, "runs": runs,
                         "stdin test ms": stdin, "K = 0 test ms": zero, "K test ms": median(times[k]),
                         "us per round trip": (median(times[k]) - zero) / k * 1000,
                         "us, fastest runs": (min(times[k]) - min(times[0])) / k * 1000,
                         "one-time cost ms": zero - stdin})
    return rows


def by_hand_interaction_rows(interactor: Path, rounds: list[int], runs: int, work: Path) -> list[dict[str, Any]]:
    """The interactor binary and the program connected by two ``os.pipe()`` on the host, no sandbox."""
    source = work / "pong.cpp"
    source.write_text(PONG_CPP)
    subprocess.run(["g++", "-O2", "-std=c++17", "-o", str(work / "pong"), str(source)], check=True)
    (work / "pong.py").write_text(PONG_PY)
    for name, text in (("answer", ""), ("tout", "")):
        (work / name).write_text(text)

    def play(argv: list[str], k: int) -> float:
        (work / "input").write_text(f"{k}\n")
        to_program_r, to_program_w = os.pipe()
        from_program_r, from_program_w = os.pipe()
        start = time.perf_counter()
        program = subprocess.Popen(argv, stdin=to_program_r, stdout=from_program_w)
        judge = subprocess.Popen([str(interactor), str(work / "input"), str(work / "tout"), str(work / "answer")],
                                 stdin=from_program_r, stdout=to_program_w, stderr=subprocess.DEVNULL)
        for fd in (to_program_r, to_program_w, from_program_r, from_program_w):
            os.close(fd)
        codes = (program.wait(), judge.wait())
        elapsed = (time.perf_counter() - start) * 1000
        assert codes == (0, 0), (argv, k, codes)
        return elapsed

    rows = []
    for language, argv in (("C++", [str(work / "pong")]), ("Python", [sys.executable, "-I", "-S",
                                                                       str(work / "pong.py")])):
        progress(f"by hand: interactor and {language} program on two os.pipe(), K = 0 and {rounds}, {runs} runs")
        times: dict[int, list[float]] = {k: [] for k in [0, *rounds]}
        for _ in range(runs):
            for k in times:
                times[k].append(play(argv, k))
        zero = median(times[0])
        for k in rounds:
            with_k = median(times[k])
            rows.append({"program": f"{language}, by hand (two os.pipe())", "K": k, "runs": runs,
                         "K = 0 test ms": zero, "K test ms": with_k, "us per round trip": (with_k - zero) / k * 1000,
                         "us, fastest runs": (min(times[k]) - min(times[0])) / k * 1000})
    return rows


@contextlib.contextmanager
def niceness(nice: int) -> Iterator[int]:
    """This process (and what it starts) at ``nice`` for the by-hand baselines, as the local backend runs its
    sandboxes (nice 10), then back: lowering it again needs root, so elsewhere it stays as it is. Yields the
    niceness the baselines ran at."""
    old = os.getpriority(os.PRIO_PROCESS, 0)
    if os.geteuid() != 0 or nice == old:
        yield old
        return
    os.setpriority(os.PRIO_PROCESS, 0, nice)
    try:
        yield nice
    finally:
        os.setpriority(os.PRIO_PROCESS, 0, old)


def native_programs_run(backend: str) -> bool:
    """Whether the backend's worker can run a C++ program: ``python harness.pyz`` run as root runs the program as
    ``nobody``, whose worker cannot import the standard library of an interpreter installed under ``/root``
    (pyenv's); the same check as tests/test_checkers.py's."""
    if backend != "harness" or os.geteuid() != 0:
        return True
    path = os.path.dirname(os.__file__)
    while path != "/":
        if not os.stat(path).st_mode & 0o001:
            return False
        path = os.path.dirname(path)
    return True


def make_scorer(backend: str, test_timeout: float) -> Scorer:
    base = {"sandbox_pool_size": 1, "sandbox_test_timeout": test_timeout, "sandbox_completion_timeout": 300.0}
    if backend == "harness":
        from trl_sandbox.backends.mock import MockBackend
        from trl_sandbox.testing import run_unsandboxed

        return Scorer.from_config(SandboxConfig(**base), backend=MockBackend(handler=run_unsandboxed))
    return Scorer.from_config(SandboxConfig(**base, sandbox_backend=backend))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tests", type=int, default=50, help="tests of the checker task (default 50)")
    parser.add_argument("--runs", type=int, default=20, help="timed scores of each completion (default 20)")
    parser.add_argument("--rounds", type=int, nargs="+", default=[1000, 10000],
                        help="ping-pong rounds of the interactive tests (default 1000 10000)")
    parser.add_argument("--compile-runs", type=int, default=3, help="cold builds of each kind (default 3)")
    parser.add_argument("--hits", type=int, default=200, help="compile-cache hits timed (default 200)")
    parser.add_argument("--backend", default="local",
                        help="a backend name (default local), or 'harness': the mock backend running python "
                             "harness.pyz per request, unisolated, as remote backends run it (static binaries)")
    parser.add_argument("--cache", type=Path, default=None,
                        help="the compile cache to use and keep (default: a temporary one, removed at the end)")
    parser.add_argument("--hand-nice", type=int, default=10,
                        help="the niceness of the by-hand baselines (default 10, the local backend's sandboxes'; "
                             "applied when run as root)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 5 tests, 3 runs, 100 rounds, 1 cold build each, 20 hits")
    args = parser.parse_args()
    if args.quick:
        args.tests, args.runs, args.rounds, args.compile_runs, args.hits = 5, 3, [100], 1, 20
    if shutil.which("g++") is None:
        parser.error("g++ is not installed: the checkers and interactors are C++ (apt-get install g++)")
    about = machine()
    work = Path(tempfile.mkdtemp(prefix="trl-bench-checkers-"))
    cache = args.cache.resolve() if args.cache is not None else work / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    before = os.environ.get(judge_programs.CACHE_ENV)
    os.environ[judge_programs.CACHE_ENV] = str(cache)
    try:
        compile_table, checker_binary = compile_rows(args.compile_runs, args.hits, cache, work)
        interactor_binary = judge_programs.compile_judge_program(
            {"interactor": INTERACTOR_CPP, "language": "cpp"}, static=False, cache=cache).path
        hand = work / "hand"
        hand.mkdir()
        with niceness(args.hand_nice) as hand_nice:
            by_hand = by_hand_checker_rows(checker_binary, args.tests, args.runs, hand)
            hand_rounds = by_hand_interaction_rows(interactor_binary, args.rounds, args.runs, hand)
        test_timeout = max(5.0, max(args.rounds) / 1000)  # the Python program's rounds on a loaded machine
        native = native_programs_run(args.backend)
        with make_scorer(args.backend, test_timeout) as scorer:
            checkers = checker_rows(scorer, args.tests, args.runs, native)
            rounds = interaction_rows(scorer, args.rounds, args.runs, native)
    finally:
        if before is None:
            os.environ.pop(judge_programs.CACHE_ENV, None)
        else:
            os.environ[judge_programs.CACHE_ENV] = before
        shutil.rmtree(work, ignore_errors=True)

    print(about)
    print(f"Load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}. Backend: {args.backend}. "
          f"Each sandbox row: exec_s of a scored completion (medians and p99 over {args.runs} runs after a warm-up); "
          f"the by-hand rows ran at nice {hand_nice}.")
    if not native:
        print("No C++ program rows: run as root, this backend's worker (nobody) cannot read this interpreter's "
              "standard library.")
    print()
    print(f"Checker overhead per test ({args.tests} stdin tests a completion; by hand: one call per test):\n")
    print(table(checkers + by_hand, ["program", "judge", "status", "runs", "per test p50 ms", "per test p99 ms",
                                     "over tokens p50 ms"]))
    print("\nThe compile cache (trl-sandbox's testlib.h, g++ -O2; a hit: compile_judge_program on a built key):\n")
    print(table(compile_table, ["build", "binary KiB", "cold runs", "cold compile s", "hits", "hit p50 ms",
                                "hit p99 ms", "key alone p50 ms"]))
    print("\nInteraction round trip (a C++ testlib interactor, K rounds of ping-pong, one test a task):\n")
    print(table(rounds + hand_rounds, ["program", "K", "runs", "stdin test ms", "K = 0 test ms", "K test ms",
                                       "us per round trip", "us, fastest runs", "one-time cost ms"]))


if __name__ == "__main__":
    main()
