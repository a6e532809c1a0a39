"""C++, Java (and the other compiled languages) scored in the sandbox, against compiling and running each completion
plainly on the host, in the same run.

Workload: ``--completions`` distinct correct completions (each a slightly different program, so that nothing is
compiled twice) of a code_contests-style task with ``--tests`` stdin tests. Two ways to judge them:

- **plain**: on the host, no sandbox, ``--jobs`` at a time: ``g++ -O2 -std=c++17 main.cpp -o main`` (or ``javac``,
  ``rustc -O``...) in a temporary directory, then ``./main < input`` per test, output compared on the host. This is
  what a copied example script does, with no isolation at all.
- **trl-sandbox**: ``Scorer.score`` with the local backend, a pool of ``--jobs`` sandboxes: the compiler and the
  program run inside the sandbox with every isolation layer.

A third row shows the batch dedup: the same number of completions, all identical, compiled and run once.
Each figure is the median of ``--runs`` runs (the machine is shared: expect noise).

    python benchmarks/languages.py [--languages cpp java] [--completions 16] [--tests 10] [--jobs 2] [--runs 3]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import median, progress, scoring_bar, table

from trl_sandbox import SandboxConfig, Scorer, Task
from trl_sandbox.harness.compare import same_output
from trl_sandbox.languages import LANGUAGES, build_spec

# Each program: read n numbers, print their sum plus a constant k (0 for every program: k only makes sources differ).
SOURCES = {
    "cpp": "#include <bits/stdc++.h>\nusing namespace std;\nint main() {{ int n; cin >> n; long long s = {k};"
           " for (int i = 0; i < n; i++) {{ long long x; cin >> x; s += x; }} cout << s << endl; }}\n",
    "c": "#include <stdio.h>\nint main(void) {{ int n; scanf(\"%d\", &n); long long s = {k}; for (int i = 0; i < n;"
         " i++) {{ long long x; scanf(\"%lld\", &x); s += x; }} printf(\"%lld\\n\", s); return 0; }}\n",
    "java": "import java.util.*;\npublic class Main {{ public static void main(String[] a) {{ Scanner in = new"
            " Scanner(System.in); int n = in.nextInt(); long s = {k}; for (int i = 0; i < n; i++) s += in.nextLong();"
            " System.out.println(s); }} }}\n",
    "javascript": "const d = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\n"
                  "let s = {k}; for (let i = 1; i <= d[0]; i++) s += d[i]; console.log(String(s));\n",
    "rust": "use std::io::Read;\nfn main() {{ let mut t = String::new(); std::io::stdin().read_to_string(&mut t)"
            ".unwrap(); let v: Vec<i64> = t.split_whitespace().map(|x| x.parse().unwrap()).collect();"
            " let mut s: i64 = {k}; for i in 1..=(v[0] as usize) {{ s += v[i]; }} println!(\"{{}}\", s); }}\n",
}


def make_task(tests: int) -> Task:
    inputs, outputs = [], []
    for i in range(tests):
        xs = list(range(i, i + 200))
        inputs.append(f"{len(xs)}\n{' '.join(map(str, xs))}\n")
        outputs.append(f"{sum(xs)}\n")
    return Task.from_row({"task_id": "sum", "inputs": inputs, "outputs": outputs})


def sources(language: str, n: int, distinct: bool) -> list[str]:
    # "+ 0" repeated i times: a different source text with the same behaviour.
    return [SOURCES[language].format(k="0" + " + 0" * (i if distinct else 0)) for i in range(n)]


def plain_one(language: str, source: str, task: Task) -> bool:
    """Compile and run one program on the host with no sandbox; True when every test passes."""
    spec = build_spec(language, None, source)
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, spec["source"]).write_text(source)
        if spec["compile"]:
            subprocess.run(spec["compile"], cwd=tmp, check=True, capture_output=True)
        ok = True
        for text, want in zip(task.tests, task.outputs):
            out = subprocess.run(spec["run"], cwd=tmp, input=text.encode(), capture_output=True, timeout=10,
                                 check=False).stdout
            ok &= same_output(out.decode(), want, {"mode": "lines"})
        return ok


def plain(language: str, programs: list[str], task: Task, jobs: int) -> tuple[float, int]:
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        passed = sum(pool.map(lambda s: plain_one(language, s, task), programs))
    return time.perf_counter() - start, passed


def sandboxed(scorer: Scorer, language: str, programs: list[str], task: Task) -> tuple[float, int]:
    tag = {"javascript": "js"}.get(language, language)
    start = time.perf_counter()
    with scoring_bar(len(programs), language) as bar:
        results = scorer.score([task] * len(programs), [f"```{tag}\n{p}```" for p in programs],
                               on_result=lambda i, result: bar.update(1))
    return time.perf_counter() - start, sum(r.passed for r in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--languages", nargs="+", default=["cpp", "java"], choices=sorted(SOURCES))
    parser.add_argument("--completions", type=int, default=16)
    parser.add_argument("--tests", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    task = make_task(args.tests)
    rows = []
    root = tempfile.mkdtemp(prefix="trl-sandbox-bench-")
    Path(root).chmod(0o711)
    config = SandboxConfig(sandbox_pool_size=args.jobs, sandbox_test_timeout=10.0,
                           sandbox_backend_options={"root_dir": root})
    try:
        progress(f"starting the sandbox pool (size {args.jobs})")
        with Scorer.from_config(config) as scorer:
            for language in args.languages:
                if not all(shutil.which(t) for t in LANGUAGES[language].toolchain):
                    print(f"skipping {language}: {LANGUAGES[language].install}", file=sys.stderr)
                    continue
                distinct, same = sources(language, args.completions, True), sources(language, args.completions, False)
                for variant, fn, programs in (
                    ("plain compile + run per completion (no sandbox)", plain, distinct),
                    ("trl-sandbox, distinct completions", sandboxed, distinct),
                    ("trl-sandbox, identical completions (one compile)", sandboxed, same),
                ):
                    times, passed = [], 0
                    for run in range(args.runs):
                        progress(f"{language}, {variant}: run {run + 1}/{args.runs} ({args.completions} completions "
                                 f"x {args.tests} tests)")
                        if fn is plain:
                            seconds, passed = plain(language, programs, task, args.jobs)
                        else:
                            seconds, passed = sandboxed(scorer, language, programs, task)
                        times.append(seconds)
                    s = median(times)
                    rows.append({"language": language, "variant": variant, "completions": args.completions,
                                 "tests each": args.tests, "runs": args.runs, "seconds": s,
                                 "completions/s": args.completions / s, "passed": f"{passed}/{args.completions}"})
                base = next(r for r in rows if r["language"] == language and r["variant"].startswith("plain"))
                for r in rows:
                    if r["language"] == language:
                        r["x plain"] = base["seconds"] / r["seconds"]
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(table(rows, ["language", "variant", "completions", "tests each", "runs", "seconds", "completions/s",
                       "x plain", "passed"]))


if __name__ == "__main__":
    main()
