"""Do checkers judge the same against trl-sandbox's testlib.h and the official one?

Compiles every checker of a directory (default: the official repository's ``checkers/``) against both headers,
runs each on many generated (input, output, answer) cases and compares what the two builds say: the exit code
(the verdict), the points (``points X`` on stderr, as DMOJ reads it) and the whole stderr message. Validators
(``validators/``, input on stdin) and interactors (``interactors/``, the program's replies on stdin) of the
repository are compared too when ``--repo`` is given.

    git clone https://github.com/MikeMirzayanov/testlib /tmp/testlib-official   # or extract a mirror there
    python benchmarks/testlib_headers.py --repo /tmp/testlib-official [--official PATH/testlib.h] [--jobs 16]

``--official`` defaults to ``REPO/testlib.h``; ``--checkers`` to ``REPO/checkers``. Prints a table:
checker | cases | same verdict | same points | same message | differences (the first few listed).
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from trl_sandbox.testlib import OWN_HEADER  # noqa: E402

CXX = ["g++", "-std=gnu++17", "-O2"]

INTS = ["0", "1", "-1", "42", "2147483647", "-2147483648", "2147483648", "9223372036854775807",
        "-9223372036854775808", "9223372036854775808", "007", "-0", "+5", "1e3", "12a", "0x10", "--1", "-", "00"]
REALS = ["0", "1", "-1", "3.14159", "3.1416", "3.15", "1e-7", "1E+3", "1000.0000001", "-0.0", ".5", "5.", "1e",
         "1e+", "inf", "nan", "1e400", "-1e400", "1.5e-6", "0.000001", "2.0000015", "abc", "1..2", "1e5e5",
         "+-1", "1-", "123456789.123456789"]
WORDS = ["a", "abc", "ABC", "Abc", "hello", "world", "0", "-12", "12", "123456789012345678901234567890", "x y",
         "\t", "YES", "NO", "yes", "No", "Case", "1:", "2:"]


def _ws(rng: random.Random) -> str:
    return rng.choice([" ", "  ", "\n", "\r\n", "\t", " \n", "\n\n"])


def _join(tokens: list[str], rng: random.Random, tidy: bool) -> str:
    if tidy:
        return " ".join(tokens) + "\n"
    text = rng.choice(["", " ", "\n"]) if rng.random() < 0.2 else ""
    for i, t in enumerate(tokens):
        text += t + (_ws(rng) if i + 1 < len(tokens) else "")
    return text + rng.choice(["", "\n", "\r\n", " \n", "\n\n\n", "  "])


def _mutate(tokens: list[str], pool: list[str], rng: random.Random) -> list[str]:
    out = list(tokens)
    op = rng.randrange(7)
    if op == 0 and out:
        out[rng.randrange(len(out))] = rng.choice(pool)
    elif op == 1:
        out.insert(rng.randrange(len(out) + 1), rng.choice(pool))
    elif op == 2 and out:
        out.pop(rng.randrange(len(out)))
    elif op == 3:
        out = out[: rng.randrange(len(out) + 1)]
    elif op == 4 and out:
        i = rng.randrange(len(out))
        out[i] = out[i].upper() if rng.random() < 0.5 else out[i].lower()
    elif op == 5:
        out = out + [rng.choice(pool)]
    return out


def _numbers_case(rng: random.Random, real: bool, tol: float) -> list[str]:
    n = rng.choice([1, 1, 2, 3, 5, 7])
    if real:
        return [repr(round(rng.uniform(-1e3, 1e3), rng.randrange(0, 9))) for _ in range(n)]
    return [str(rng.randrange(-10**9, 10**9)) for _ in range(n)]


def _near(tok: str, rng: random.Random, tol: float) -> str:
    try:
        v = float(tok)
    except ValueError:
        return tok
    scale = rng.choice([0.0, 0.1, 0.5, 0.99, 1.01, 2.0, 10.0]) * tol
    v2 = v + rng.choice([-1, 1]) * scale * (max(1.0, abs(v)) if rng.random() < 0.5 else 1.0)
    return rng.choice(["%.10f", "%.3f", "%g", "%.15g", "%e"]) % v2


def kind_of(name: str) -> tuple[str, float]:
    """A checker's kind from its file name: what its answers look like, and the tolerance of real checkers."""
    tol = {"acmp": 1.5e-6, "rcmp": 1.5e-6, "dcmp": 1e-6, "rcmp4": 1e-4, "rcmp6": 1e-6, "rcmp9": 1e-9,
           "rncmp": 1.5e-5, "pointscmp": 0.5, "pointsinfo": 0.5}
    if name in tol:
        return ("real", tol[name])
    if name in ("yesno", "nyesno"):
        return ("yesno", 0.0)
    if name in ("fcmp", "lcmp"):
        return ("lines", 0.0)
    if name.startswith("case"):
        return (name, 0.0)
    if name in ("wcmp", "hcmp"):
        return ("words", 0.0)
    return ("int", 0.0)


def cases_for(name: str, count: int, seed: int) -> list[tuple[str, str, str]]:
    """``count`` (input, output, answer) texts for the checker ``name``, deterministic in ``seed``."""
    rng = random.Random(f"{name}:{seed}")
    kind, tol = kind_of(name)
    out: list[tuple[str, str, str]] = []
    garbage = ["", " ", "\n", "\r\n", "\x00", "\xff", "garbage here", "1 2 3 4 5 6 7 8 9", "\xef\xbb\xbf1\n"]
    for i in range(count):
        if kind == "real":
            ans = _numbers_case(rng, True, tol)
            if name in ("acmp", "rcmp", "dcmp", "pointscmp", "pointsinfo"):
                ans = ans[:1]
            outp = [_near(t, rng, tol) for t in ans]
            pool = REALS
        elif kind == "int":
            ans = _numbers_case(rng, False, 0)
            if name == "icmp":
                ans = ans[:1]
            outp = list(ans)
            if name == "uncmp":
                rng.shuffle(outp)
            pool = INTS
        elif kind == "yesno":
            ans = [rng.choice(["YES", "NO", "yes", "No"]) for _ in range(1 if name == "yesno" else rng.randrange(1, 6))]
            outp = [rng.choice([t, t.lower(), t.upper(), "YES", "NO", "Yes"]) for t in ans]
            pool = WORDS
        elif kind == "words":
            if name == "hcmp":
                ans = [rng.choice(["0", "-17", "123456789012345678901234567890", "5"])]
            else:
                ans = [rng.choice(WORDS[:10]) for _ in range(rng.randrange(1, 6))]
            outp = list(ans)
            pool = WORDS + INTS
        elif kind == "lines":
            lines = [" ".join(rng.choice(WORDS[:10]) for _ in range(rng.randrange(0, 4)))
                     for _ in range(rng.randrange(1, 4))]
            ans, outp, pool = lines, list(lines), WORDS
        else:  # Case N: ...
            per = 1 if name == "caseicmp" else None
            ans = []
            for c in range(1, rng.randrange(1, 4) + 1):
                vals = [str(rng.randrange(-100, 100)) if name != "casewcmp" else rng.choice(WORDS[:6])
                        for _ in range(per or rng.randrange(0, 4))]
                ans += ["Case", f"{c}:"] + vals
            outp, pool = list(ans), INTS + ["Case", "1:", "2:", "3:"]
        if rng.random() < 0.55:
            outp = _mutate(outp, pool, rng)
            if rng.random() < 0.3:
                outp = _mutate(outp, pool, rng)
        tidy = rng.random() < 0.4
        if kind == "lines":
            ans_text = "\n".join(ans) + "\n"
            out_text = rng.choice(["\n", "\r\n"]).join(outp) + rng.choice(["", "\n", "\n\n", " \n"])
        else:
            ans_text = " ".join(ans) + "\n"
            out_text = _join(outp, rng, tidy)
        if i % 17 == 5:
            out_text = rng.choice(garbage)
        if i % 29 == 7:  # a broken answer file: the jury's fault
            ans_text = rng.choice(["", "x\n", "Case 2: 5\n", "\n"])
        out.append(("1\n", out_text, ans_text))
    return out


def compile_one(src: Path, header: Path, dest: Path) -> tuple[bool, float, str]:
    """Compile ``src`` with ``header`` as testlib.h into ``dest``: (ok, seconds, compiler output)."""
    work = dest.parent / (dest.name + ".src")
    work.mkdir(parents=True, exist_ok=True)
    (work / "testlib.h").write_bytes(header.read_bytes())
    (work / src.name).write_bytes(src.read_bytes())
    started = time.perf_counter()
    proc = subprocess.run(CXX + ["-o", str(dest), str(work / src.name)], capture_output=True, text=True)
    return proc.returncode == 0, time.perf_counter() - started, proc.stderr


_POINTS = re.compile(r"^points (\S+)", re.M)


def run_checker(binary: Path, case_dir: Path, texts: tuple[str, str, str]) -> tuple[int, str | None, str]:
    """Run a checker on one case: (exit code, points or None, stderr)."""
    case_dir.mkdir(parents=True, exist_ok=True)
    for name, text in zip(("in", "out", "ans"), texts):
        (case_dir / name).write_bytes(text.encode("latin-1"))
    # relative names, so that messages naming a file read the same for both builds
    proc = subprocess.run([str(binary), "in", "out", "ans"], cwd=case_dir, capture_output=True, timeout=20)
    err = proc.stderr.decode("latin-1")
    m = _POINTS.search(err)
    return proc.returncode, (m.group(1) if m else None), err


def run_stdin(binary: Path, args: list[str], stdin_text: str, cwd: Path | None = None) -> tuple[int, str | None, str]:
    """Run a validator or interactor with ``stdin_text`` on stdin."""
    proc = subprocess.run([str(binary), *args], input=stdin_text.encode("latin-1"), capture_output=True, timeout=20,
                          cwd=cwd)
    err = proc.stderr.decode("latin-1")
    m = _POINTS.search(err)
    return proc.returncode, (m.group(1) if m else None), err


VALIDATOR_INPUTS = {
    "ival": ["5\n", "0\n", "101\n", "5", "5 \n", " 5\n", "5\n\n", "05\n", "abc\n", "", "100\r\n"],
    "nval": ["3\n1 2 3\n", "3\n1 2\n", "3\n1  2 3\n", "3\n1 2 3 \n", "2\n1000000000000000 -1000000000000000\n",
             "2\n1000000000000001 0\n", "0\n\n", "1\n5", "1\n-0\n"],
    "sval": ["abc\n", "ABC\n", "\n", "a b\n", "a" * 101 + "\n", "z\n", "abc"],
    "case-nval": ["2\n1\n5\n2\n1 2\n", "2\n1\n5\n2\n1 2000\n", "1\n0\n\n", "1\n2\n1 2\n", "11\n", "1\n1\n5 \n"],
    "bipartite-graph-validator": ["2 2 1\n1 1\n", "2 2 2\n1 1\n1 1\n", "2 2 1\n3 1\n", "2 2 0\n", "2 2 0"],
    "undirected-graph-validator": ["3 2\n1 2\n2 3\n", "3 1\n1 1\n", "3 2\n1 2\n2 1\n", "3 0\n", "1001 0\n"],
    "undirected-tree-validator": ["3\n1 2\n2 3\n", "3\n1 2\n1 2\n", "3\n1 2\n3 3\n", "4\n1 2\n2 3\n3 1\n", "2\n1 2"],
    "validate-using-testset-and-group": ["2 4\n", "11 2\n", "3 4\n", "2 4", "100 100\n"],
}
VALIDATOR_ARGS = [[], ["--testset", "pretests"], ["--group", "even-n-and-m"]]
INTERACTOR_CASES = [("2\n1 2\n3 4\n", "3\n7\n"), ("2\n1 2\n3 4\n", "3\n"), ("1\n5 5\n", "x\n"), ("1\n5 5\n", ""),
                    ("1\n5 5\n", "10 11\n"), ("3\n1 1\n2 2\n3 3\n", "2 4 6")]


def compare(label: str, pairs: list[tuple[tuple, tuple]], diffs_shown: int = 3) -> dict:
    """Tally agreement of (ours, official) result pairs; each result is (code, points, stderr, case)."""
    row = {"checker": label, "cases": len(pairs), "verdict": 0, "points": 0, "message": 0, "diffs": []}
    for ours, official in pairs:
        row["verdict"] += ours[0] == official[0]
        row["points"] += ours[1] == official[1]
        row["message"] += ours[2] == official[2]
        if (ours[0], ours[1]) != (official[0], official[1]) and len(row["diffs"]) < diffs_shown:
            row["diffs"].append(f"case {ours[3]!r}: ours {ours[0]} {ours[2].strip()[:80]!r} / "
                                f"official {official[0]} {official[2].strip()[:80]!r}")
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, help="the official testlib repository (a checkout or extracted mirror)")
    parser.add_argument("--official", type=Path, help="the official testlib.h (default: REPO/testlib.h)")
    parser.add_argument("--checkers", type=Path, help="checker sources (default: REPO/checkers)")
    parser.add_argument("--ours", type=Path, default=OWN_HEADER, help="the header under test (default: ours)")
    parser.add_argument("--cases", type=int, default=200, help="cases per checker")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=8)
    ns = parser.parse_args(argv)
    official = ns.official or (ns.repo / "testlib.h" if ns.repo else None)
    checkers_dir = ns.checkers or (ns.repo / "checkers" if ns.repo else None)
    if official is None or checkers_dir is None:
        parser.error("give --repo, or both --official and --checkers")
    sources = sorted(checkers_dir.glob("*.cpp"))
    extra: list[Path] = []
    if ns.repo:
        extra = sorted((ns.repo / "validators").glob("*.cpp")) + sorted((ns.repo / "interactors").glob("*.cpp"))
    rows, times = [], []
    with tempfile.TemporaryDirectory(prefix="testlib-bench-") as tmp, ThreadPoolExecutor(ns.jobs) as pool:
        root = Path(tmp)
        builds = {}
        jobs = {(src, side): pool.submit(compile_one, src, header, root / side / src.stem)
                for src in sources + extra for side, header in (("ours", ns.ours), ("official", official))}
        for (src, side), fut in jobs.items():
            ok, secs, log = fut.result()
            if not ok:
                print(f"compile failed: {src.name} against {side}:\n{log[:2000]}", file=sys.stderr)
            builds[(src, side)] = (ok, secs)
        for src in sources + extra:
            times.append((src.stem, builds[(src, "ours")][1], builds[(src, "official")][1]))
        for src in sources:
            if not (builds[(src, "ours")][0] and builds[(src, "official")][0]):
                rows.append({"checker": src.stem, "cases": 0, "verdict": 0, "points": 0, "message": 0,
                             "diffs": ["did not compile"]})
                continue
            cases = cases_for(src.stem, ns.cases, ns.seed)

            def one(i: int, side: str, src: Path = src, cases: list = cases) -> tuple:
                code, points, err = run_checker(root / side / src.stem, root / "cases" / side / src.stem / str(i),
                                                cases[i])
                return code, points, err, cases[i][1:]

            ours = list(pool.map(lambda i: one(i, "ours"), range(len(cases))))
            theirs = list(pool.map(lambda i: one(i, "official"), range(len(cases))))
            rows.append(compare(src.stem, list(zip(ours, theirs))))
        for src in extra:
            if not (builds[(src, "ours")][0] and builds[(src, "official")][0]):
                rows.append({"checker": src.stem, "cases": 0, "verdict": 0, "points": 0, "message": 0,
                             "diffs": ["did not compile"]})
                continue
            pairs = []
            if src.parent.name == "validators":
                for text in VALIDATOR_INPUTS.get(src.stem, ["1\n"]):
                    for args in VALIDATOR_ARGS:
                        r = [run_stdin(root / side / src.stem, args, text) + ((args, text),)
                             for side in ("ours", "official")]
                        pairs.append((r[0], r[1]))
            else:
                for k, (inp, replies) in enumerate(INTERACTOR_CASES):
                    r = []
                    for side in ("ours", "official"):
                        d = root / "interact" / side / str(k)
                        d.mkdir(parents=True, exist_ok=True)
                        (d / "in").write_text(inp)
                        res = run_stdin(root / side / src.stem, ["in", "tout"], replies, cwd=d)
                        tout = (d / "tout").read_text() if (d / "tout").exists() else None
                        r.append((res[0], res[1], res[2] + f"\n[tout={tout!r}]", (inp, replies)))
                    pairs.append((r[0], r[1]))
            rows.append(compare(src.parent.name[:-1] + " " + src.stem, pairs))
    print("| checker | cases | same verdict (exit code) | same points | same stderr | differences |")
    print("|---|---|---|---|---|---|")
    total = [0, 0, 0, 0]
    for r in rows:
        n = r["cases"]
        total = [total[0] + n, total[1] + r["verdict"], total[2] + r["points"], total[3] + r["message"]]

        def pct(k: str, r: dict = r, n: int = n) -> str:
            return f"{r[k]}/{n}" + (f" ({100 * r[k] / n:.1f} %)" if n else "")
        print(f"| {r['checker']} | {n} | {pct('verdict')} | {pct('points')} | {pct('message')} | "
              f"{'; '.join(r['diffs']) or '-'} |")
    print(f"| **all** | {total[0]} | {total[1]} | {total[2]} | {total[3]} | |")
    print()
    print(f"compile time, g++ -std=gnu++17 -O2 (s), {ns.jobs} compiles at a time (use --jobs 1 for unloaded "
          "timings): program | ours | official")
    for name, mine, theirs in times:
        print(f"  {name:36s} {mine:6.2f} {theirs:6.2f}")
    if times:
        mean_ours, mean_official = (sum(t[k] for t in times) / len(times) for k in (1, 2))
        print(f"  {'mean':36s} {mean_ours:6.2f} {mean_official:6.2f}")
    return 0 if total[0] == total[1] == total[2] else 1


if __name__ == "__main__":
    sys.exit(main())
