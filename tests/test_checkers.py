"""Checker programs in C, C++ and Python (testlib's and Kattis' conventions) and interactive problems, scored through
the sandbox as users call it: rows with a ``compare`` checker or an ``interactor``, completions as a model writes them.

Every case runs on the local backend and through the harness as remote backends run it (``python harness.pyz``, one
process per request: here the mock backend running it unisolated, with benign programs only; the compiled checkers
and interactors are then linked statically, as for a remote image). Checkers and interactors are compiled once per
session, into a cache of the session (``TRL_SANDBOX_CACHE``), against trl-sandbox's own testlib.h.
"""

from __future__ import annotations

import os
import shutil

import pytest

from trl_sandbox import SandboxConfig, Scorer, Task
from trl_sandbox.errors import TaskFormatError
from trl_sandbox.backends.mock import MockBackend
from trl_sandbox.testing import run_unsandboxed

GXX = shutil.which("g++")
if GXX is None and os.environ.get("CI") == "true":  # CI installs g++ (.ci/run): its absence is a failure there
    raise RuntimeError("g++ is missing: .ci/run installs it; the checker tests need it")
pytestmark = pytest.mark.skipif(GXX is None, reason="g++ is not installed (apt-get install g++)")

# -- checkers (testlib: checker input output answer) -----------------------------------------------------------------
SUM = r"""
#include "testlib.h"
int main(int argc, char* argv[]) {
    registerTestlibCmd(argc, argv);
    long long a = inf.readLong(), b = inf.readLong();
    long long want = ans.readLong();
    if (want != a + b) quitf(_fail, "the answer file says %lld for %lld + %lld", want, a, b);
    std::string got = ouf.readToken();
    if (got == "crash") { volatile int* p = nullptr; *p = 1; }   // a checker with a bug: not the program's fault
    if (got == "fail") quitf(_fail, "the checker gave up");
    long long value = stringToLongLong(ouf, got.c_str());
    if (value != want) quitf(_wa, "expected %lld, found %lld", want, value);
    quitf(_ok, "%lld", value);
}
"""
#: Frontier-CS's convention: the score of an optimisation problem as a ``Ratio:`` of the best (quitp, exit 7).
RATIO = r"""
#include "testlib.h"
int main(int argc, char* argv[]) {
    registerTestlibCmd(argc, argv);
    double best = ans.readDouble();
    double got = ouf.readDouble(0, best, "score");
    if (got == best) quitf(_ok, "best");
    quitp(got / best, "Ratio: %.4f", got / best);
}
"""
#: FrontierCS issue 106's kind: a checker that returns early with _ok, so an empty output passes.
EMPTY_OK = r"""
#include "testlib.h"
int main(int argc, char* argv[]) {
    registerTestlibCmd(argc, argv);
    if (ouf.seekEof()) quitf(_ok, "nothing to check");
    if (ouf.readLong() != ans.readLong()) quitf(_wa, "wrong");
    quitf(_ok, "ok");
}
"""
#: The AetherCode rewrite's kind: the jury's and the program's files swapped, only as many tokens as printed compared.
SWAPPED = r"""
#include "testlib.h"
int main(int argc, char* argv[]) {
    registerTestlibCmd(argc, argv);
    while (!ouf.seekEof()) {          // as many tokens as the program printed: none, and it passes
        if (ans.seekEof()) quitf(_wa, "long");
        if (ans.readToken() != ouf.readToken()) quitf(_wa, "differs");
    }
    quitf(_ok, "same");
}
"""
KATTIS_C = r"""
#include <stdio.h>
#include <string.h>
int main(int argc, char** argv) {   /* validator input judge_answer feedback_dir: the output on stdin */
    FILE* ans = fopen(argv[2], "r");
    long long want, got;
    if (fscanf(ans, "%lld", &want) != 1) return 1;            /* a judge error */
    char path[4096];
    snprintf(path, sizeof path, "%sjudgemessage.txt", argv[3]);
    if (scanf("%lld", &got) != 1) { FILE* f = fopen(path, "w"); fputs("no number", f); fclose(f); return 43; }
    char extra[2];
    if (scanf("%1s", extra) == 1) return 43;
    return got == want ? 42 : 43;
}
"""
KATTIS_SCORE_PY = """
import sys
want = int(open(sys.argv[2]).read())
got = sys.stdin.read().split()
if not got or not got[0].lstrip("-").isdigit() or not 0 <= int(got[0]) <= want:
    open(sys.argv[3] + "judgemessage.txt", "w").write("not a score")
    sys.exit(43)
open(sys.argv[3] + "score.txt", "w").write(got[0])
sys.exit(42)
"""

# -- interactors -------------------------------------------------------------------------------------------------
GUESS = r"""
#include "testlib.h"
#include <iostream>
int main(int argc, char* argv[]) {
    registerInteraction(argc, argv);
    int n = inf.readInt();
    int queries = 0;
    while (true) {
        std::string op = ouf.readToken("[?!]", "op");
        int x = ouf.readInt(1, 1000, "x");
        if (op == "!") {
            if (x != n) quitf(_wa, "guessed %d, the number is %d", x, n);
            tout << queries << std::endl;
            quitf(_ok, "found %d in %d queries", n, queries);
        }
        if (++queries > 1000) quitf(_wa, "too many queries");
        std::cout << (x < n ? "<" : x > n ? ">" : "=") << std::endl;
    }
}
"""
#: Polygon's way: the checker then reads what the interactor wrote to tout (here, the number of queries).
QUERIES = r"""
#include "testlib.h"
int main(int argc, char* argv[]) {
    registerTestlibCmd(argc, argv);
    int queries = ouf.readInt();
    if (queries > 10) quitf(_wa, "%d queries, at most 10 allowed", queries);
    quitf(_ok, "%d queries", queries);
}
"""
SUM_VALIDATOR_PY = """
import sys
cases = [line.split() for line in open(sys.argv[1]).read().splitlines() if line.strip()]
for a, b in cases:
    print(a, b, flush=True)
    reply = sys.stdin.readline().split()
    if reply != [str(int(a) + int(b))]:
        open(sys.argv[3] + "judgemessage.txt", "w").write("expected %d, got %r" % (int(a) + int(b), reply))
        sys.exit(43)
print("0 0", flush=True)
sys.exit(42)
"""
STUCK_INTERACTOR_PY = """
import sys, time
sys.stdin.readline()
time.sleep(1000)
"""

PY_GUESS = """
lo, hi = 1, 1000
while True:
    m = (lo + hi) // 2
    print("?", m, flush=True)
    r = input()
    if r == "=":
        print("!", m, flush=True)
        break
    lo, hi = (m + 1, hi) if r == "<" else (lo, m - 1)
"""
PY_SCAN = """
for m in range(1, 1001):
    print("?", m, flush=True)
    if input() == "=":
        print("!", m, flush=True)
        break
"""
CPP_GUESS = """```cpp
#include <cstdio>
int main() {
    int lo = 1, hi = 1000;
    while (true) {
        int m = (lo + hi) / 2;
        printf("? %d\\n", m); fflush(stdout);
        char r[4]; if (scanf("%3s", r) != 1) return 1;
        if (r[0] == '=') { printf("! %d\\n", m); fflush(stdout); return 0; }
        if (r[0] == '<') lo = m + 1; else hi = m - 1;
    }
}
```"""
#: Closes its output early, then waits: the interactor sees the end of the output, rejects and exits first.
CPP_CLOSES = """```cpp
#include <cstdio>
#include <unistd.h>
int main() { fclose(stdout); close(1); sleep(100); }
```"""
PY_SUMS = """
import sys
for line in sys.stdin:
    a, b = map(int, line.split())
    if a == b == 0:
        break
    print(a + b, flush=True)
"""


def sum_row(**compare):
    return {"task_id": "sum", "inputs": ["1 2\n", "5 7\n"], "outputs": ["3\n", "12\n"],
            "compare": {"checker": SUM, "language": "cpp", **compare}}


GUESS_ROW = {"task_id": "guess", "inputs": ["37\n", "1000\n"], "outputs": ["", ""],
             "interactor": {"interactor": GUESS, "language": "cpp"}}


@pytest.fixture(scope="module", params=["local", "remote-harness"])
def judge_scorer(request, judge_cache, sandbox_root):
    """A scorer on the local backend, and one running the harness as remote backends do (one ``python harness.pyz``
    per request, here unisolated through the mock backend)."""
    local = request.param == "local"
    config = SandboxConfig(sandbox_pool_size=2, sandbox_test_timeout=1.0,
                           sandbox_backend_options={"root_dir": str(sandbox_root)} if local else None)
    with Scorer.from_config(config, backend=None if local else MockBackend(handler=run_unsandboxed)) as scorer:
        yield scorer


def results(scorer, row, completions):
    task = Task.from_row(row)
    return [(r.status, r.reward, r.tests_passed, r.error) for r in scorer.score([task] * len(completions),
                                                                               completions)]


def test_a_testlib_checker_in_cpp_judges_each_output(judge_scorer):
    got = results(judge_scorer, sum_row(), ["a, b = map(int, input().split())\nprint(a + b)", "print(3)",
                                            "print('x')", "print(3)\nprint(3)"])
    assert got[0][:3] == ("passed", 1.0, 2)
    assert got[1][:3] == ("failed", 0.5, 1) and "expected 12, found 3" in got[1][3]
    assert got[2][0] == "failed" and got[2][2] == 0 and "expected integer" in got[2][3].lower()
    assert got[3][0] == "failed" and "extra" in got[3][3].lower()  # testlib: output left unread is not accepted


def test_a_checker_that_crashes_or_fails_is_the_tasks_fault_never_a_wrong_answer(judge_scorer):
    got = results(judge_scorer, sum_row(), ["print('crash')", "print('fail')"])
    assert [(status, reward) for status, reward, *_ in got] == [("invalid_task", None)] * 2
    assert "signal" in got[0][3] and "_fail" in got[1][3]


@pytest.mark.parametrize("checker, reason", [(EMPTY_OK, "pays an empty output"),
                                             (SWAPPED, "pays an empty output")])
def test_a_checker_that_pays_an_empty_output_is_quarantined(judge_scorer, checker, reason):
    row = {"task_id": "hazard", "inputs": ["1 2\n"], "outputs": ["3\n"],
           "compare": {"checker": checker, "language": "c++"}}
    got = results(judge_scorer, row, ["print(3)", "", "print(4)"])
    assert [g[0] for g in got[::2]] == ["invalid_task", "invalid_task"], got
    assert reason in got[0][3] and "quarantined" in got[0][3]


def test_a_checker_that_rejects_the_jurys_answer_is_quarantined(judge_scorer):
    row = {"task_id": "wrong-answer-file", "inputs": ["1 2\n"], "outputs": ["4\n"], "compare": {"checker": SUM,
                                                                                                "language": "cpp"}}
    (status, reward, _, error), = results(judge_scorer, row, ["print(3)"])
    assert (status, reward) == ("invalid_task", None) and "jury's own answer" in error


def test_partial_scores_count_in_pass_rate_and_not_in_all_or_nothing(judge_scorer, sandbox_root):
    row = {"task_id": "ratio", "inputs": ["x\n", "y\n"], "outputs": ["10\n", "8\n"],
           "compare": {"checker": RATIO, "language": "cpp"}}
    got = results(judge_scorer, row, ["print(10 if input() == 'x' else 2)", "print(5)"])
    assert got[0][:3] == ("failed", pytest.approx(0.625), 1)  # 1 + 2/8 of 2 tests
    assert got[1][0] == "failed" and got[1][1] == pytest.approx((0.5 + 0.625) / 2)
    scorer = judge_scorer
    strict = Scorer(scorer.pool, test_timeout_s=1.0, reward_mode="all_or_nothing")
    assert [r.reward for r in strict.score([Task.from_row(row)], ["print(5)"])] == [0.0]


def test_kattis_output_validators_in_c_and_python(judge_scorer):
    row = {"task_id": "kattis", "inputs": ["1 2\n"], "outputs": ["3\n"],
           "compare": {"checker": KATTIS_C, "language": "c", "convention": "kattis"}}
    got = results(judge_scorer, row, ["print(3)", "print(4)", "print('zz')"])
    assert [g[:2] for g in got] == [("passed", 1.0), ("failed", 0.0), ("failed", 0.0)]
    assert "no number" in got[2][3]
    scored = {"task_id": "kattis-score", "inputs": ["-\n"], "outputs": ["8\n"],
              "compare": {"checker": KATTIS_SCORE_PY, "language": "python", "convention": "kattis",
                          "points_max": 8}}
    got = results(judge_scorer, scored, ["print(8)", "print(2)", "print('x')"])
    assert [g[:2] for g in got] == [("passed", 1.0), ("failed", 0.25), ("failed", 0.0)]
    # no maximum stated: problemtools calls a score.txt a judge error (no custom scoring): never the program's verdict
    unstated = {**scored, "compare": {k: v for k, v in scored["compare"].items() if k != "points_max"}}
    got = results(judge_scorer, unstated, ["print(8)"])
    assert got[0][:2] == ("invalid_task", None) and "score.txt" in got[0][3]


def test_an_interactive_problem_with_a_testlib_interactor_and_a_checker_on_tout(judge_scorer):
    row = {**GUESS_ROW, "compare": {"checker": QUERIES, "language": "cpp"}}
    got = results(judge_scorer, row, [PY_GUESS, CPP_GUESS, PY_SCAN, "print('! 5', flush=True)"])
    assert got[0][:3] == ("passed", 1.0, 2)
    assert got[1][:3] == ("passed", 1.0, 2)   # a C++ program: its own process, the same pipes
    assert got[2][0] == "failed" and "at most 10" in got[2][3]  # the interactor accepts, the checker on tout not
    assert got[3][:3] == ("failed", 0.0, 0) and "guessed 5" in got[3][3]


def test_interaction_failures_follow_problemtools_precedence(judge_scorer):
    closes = CPP_CLOSES
    got = results(judge_scorer, GUESS_ROW, [
        "print('hello')",                          # never reads: the interactor rejects what it wrote
        "input()",                                 # waits for a query it never sent: the wall-clock limit
        "while True: pass",                        # the CPU-time limit
        closes,                                    # closes its output early: the interactor rejected, and first
        "print('? 500', flush=True)\nraise SystemExit(3)",  # crashes: a runtime error
    ])
    assert got[0][0] == "failed" and "op" in got[0][3]
    assert got[1][0] == "timeout" and got[2][0] == "timeout"
    assert got[3][0] == "failed" and "unexpected end of file" in got[3][3].lower()
    assert got[4][0] == "error" and "exit status 3" in got[4][3]


def test_a_program_that_fails_because_the_interactor_rejected_and_left_gets_the_interactors_verdict(judge_scorer):
    # the interactor rejects 2000 (out of range) and exits; the program's next read finds its input closed and
    # raises: the interactor ended first and decides (rule 2), however late its end is seen (six at once, under load)
    got = results(judge_scorer, GUESS_ROW, ["print('? 2000', flush=True)\ninput()"] * 6)
    assert [g[0] for g in got] == ["failed"] * 6, got
    assert all("x" in g[3] for g in got)


def test_a_program_the_interactor_rejected_is_ended_after_a_short_grace_not_at_its_backstop(judge_scorer):
    # It sends an out-of-range query (the interactor rejects it and exits), then sleeps without reading: no CPU
    # limit ends it, and its wall-clock backstop is 3 x 1 s + 1 s per test. The verdict is the interactor's either
    # way; what changes is that the sandbox and its host slot are not held for the backstop of every test.
    sleeper = "import time\nprint('? 2000', flush=True)\ntime.sleep(60)"
    row = {**GUESS_ROW, "inputs": ["37\n"] * 4, "outputs": [""] * 4}
    result, = judge_scorer.score([Task.from_row(row)], [sleeper])
    assert result.status == "failed" and result.tests_passed == 0, result
    backstops = 4 * (3 * 1.0 + 1.0)
    assert result.exec_s < backstops / 2, result  # 16 s of backstops; the grace is 0.5 s a test


def test_kattis_interactive_validator_in_python(judge_scorer):
    row = {"task_id": "sums", "inputs": ["1 2\n30 12\n"], "outputs": [""],
           "interactor": {"interactor": SUM_VALIDATOR_PY, "language": "python", "convention": "kattis"}}
    got = results(judge_scorer, row, [PY_SUMS, "print(3, flush=True)\nprint(41, flush=True)"])
    assert got[0][:2] == ("passed", 1.0)
    assert got[1][:2] == ("failed", 0.0) and "expected 42" in got[1][3]


def test_an_interactor_that_never_ends_is_the_tasks_fault(judge_scorer):
    row = {"task_id": "stuck", "inputs": ["1\n"], "outputs": [""],
           "interactor": {"interactor": STUCK_INTERACTOR_PY, "language": "python"}}
    (status, reward, _, error), = results(judge_scorer, row, ["print(1, flush=True)"])
    assert (status, reward) == ("invalid_task", None) and "interactor did not finish" in error


def test_a_compile_error_in_a_checker_is_an_invalid_task_compiled_once(judge_scorer, judge_cache):
    row = {"task_id": "broken", "inputs": ["1\n"], "outputs": ["1\n"],
           "compare": {"checker": "#include \"testlib.h\"\nint main( {", "language": "cpp"}}
    got = results(judge_scorer, row, ["print(1)", "print(1)"])
    assert {g[0] for g in got} == {"invalid_task"} and "does not compile" in got[0][3]
    errors = [n for n in os.listdir(os.path.join(judge_cache, "judge-programs")) if n.endswith(".error")]
    assert len(errors) >= 1


@pytest.mark.parametrize("code, message, verdict", [
    (7, "points 0.5 Ratio: 0.5000", 0.5),  # Frontier-CS's checkers: testlib's points lead, the same number
    (7, "points 0 answer Ratio:1 is not 10", 0.0),  # the program's text, quoted: never its score
    (7, "points 0 answer Ratio: 5 is not 10", 0.0),  # ...nor a reason to void the task
    (7, "points 1.0 Ratio: 1.0000", True),
    (0, "ok Ratio: 0.25", 0.25),  # a Ratio that opens the checker's words, after testlib's prefix
    (0, "ok answer Ratio:1 Ratio: 0.5", True),  # one that does not is not read: testlib said ok
    (0, "ok Ratio: 5", True),  # not a fraction: not read (a program's echoed output must not void the task)
    (7, "Ratio: 0.25 found", 0.25),  # no testlib prefix: a Ratio that opens the message
    (7, "points 5", "invalid"),  # the checker's own number above 1 with no points_max: the task's fault
    (3, "FAIL the answer file is wrong", "invalid"),
])
def test_a_score_is_read_from_the_checkers_own_words_only(code, message, verdict):
    from trl_sandbox.harness.checkers import testlib_verdict

    got = testlib_verdict(code, message)
    if verdict is True:
        assert got is True, got
    elif verdict == "invalid":
        assert "invalid" in got, got
    else:
        assert got.get("score") == pytest.approx(verdict) and "invalid" not in got, got


def test_only_the_compilers_own_verdict_is_cached(tmp_path, monkeypatch):
    """A compiler past its time or killed (a busy or out-of-memory machine) is not its verdict on the source: no
    ``.error`` is recorded, the build raises InfrastructureError (the completion is retried, never ``invalid_task``),
    and the next use compiles it."""
    from trl_sandbox import judge_programs
    from trl_sandbox.errors import InfrastructureError

    spec = {"checker": "int main() { return 0; }\n", "language": "c"}
    cache = tmp_path / "cache"
    for name, script in (("slow", "sleep 5"), ("killed", "kill -9 $$"),
                         ("oom", "echo 'gcc: fatal error: Killed signal terminated program cc1' >&2; exit 1")):
        fake = tmp_path / name
        fake.write_text(f"#!/bin/sh\n{script}\n")
        fake.chmod(0o755)
        monkeypatch.setitem(judge_programs.COMPILERS, "c", (str(fake), []))
        monkeypatch.setattr(judge_programs, "COMPILE_TIMEOUT_S", 1.0)
        monkeypatch.setattr(judge_programs, "build_key", lambda *a, **k: "key-" + name)
        with pytest.raises(InfrastructureError, match="not recorded"):
            judge_programs.compile_judge_program(spec, static=False, cache=cache)
        assert not list((cache / "judge-programs").glob("*.error")), name
    refused = tmp_path / "refuses"
    refused.write_text("#!/bin/sh\necho 'main.c:1: error: nope' >&2\nexit 1\n")
    refused.chmod(0o755)
    monkeypatch.setitem(judge_programs.COMPILERS, "c", (str(refused), []))
    monkeypatch.setattr(judge_programs, "build_key", lambda *a, **k: "key-refused")
    with pytest.raises(TaskFormatError, match="nope"):
        judge_programs.compile_judge_program(spec, static=False, cache=cache)
    assert [p.name for p in (cache / "judge-programs").glob("*.error")] == ["key-refused.error"]


# -- rows and packages as the datasets publish them, scored end to end ---------------------------------------------
def test_code_contests_plus_and_aethercode_rows(judge_scorer):
    ccplus = {"id": "1A", "title": "Sum", "description": "Print a + b.", "time_limit": 1000, "memory_limit": 256,
              "checker": SUM, "validator": "", "generator": "", "generator_cmd": "",
              "correct_submissions": [{"code": "print(sum(map(int, input().split())))", "language": "py3"}],
              "incorrect_submissions": [{"code": "print(0)", "language": "py3"}],
              "test_cases": [{"input": "1 2\n", "output": "3\n"}, {"input": "5 7\n", "output": "12\n"}]}
    aether = {"id": 60001, "description": "Print a + b.", "time_limit": 1000, "memory_limit": 256, "checker": SUM,
              "test_cases": [{"input": "2 3\n", "output": "5\n"}], "year": 2025, "date": "2025/01/01",
              "difficulty": "Easy", "contest_category": "ICPC", "contest_name": "Our own"}
    right, wrong = ccplus["correct_submissions"][0]["code"], ccplus["incorrect_submissions"][0]["code"]
    assert [g[:2] for g in results(judge_scorer, ccplus, [right, wrong])] == [("passed", 1.0), ("failed", 0.0)]
    assert [g[:2] for g in results(judge_scorer, aether, [right, wrong])] == [("passed", 1.0), ("failed", 0.0)]


VALIDATE_H = "#include <cstdio>\nstatic inline int accept() { return 42; }\nstatic inline int reject() { return 43; }\n"
VALIDATOR_CPP = """#include "validate.h"
#include <fstream>
int main(int argc, char** argv) {
    std::ifstream answer(argv[2]);
    long long want, got;
    answer >> want;
    if (scanf("%lld", &got) != 1) return reject();
    return got == want ? accept() : reject();
}
"""


def _kattis_package(root, validation, validator, name):
    (root / "data" / "secret").mkdir(parents=True)
    (root / "problem.yaml").write_text(f"name: Sum\nvalidation: {validation}\nlimits:\n  time_limit: 1\n")
    for i, (given, answer) in enumerate([("1 2\n", "3\n"), ("30 12\n", "42\n")]):
        (root / "data" / "secret" / f"{i}.in").write_text(given)
        (root / "data" / "secret" / f"{i}.ans").write_text(answer)
    folder = root / "output_validators" / "v"
    folder.mkdir(parents=True)
    for file_name, text in validator.items():
        (folder / file_name).write_text(text)
    (root / "submissions" / "accepted").mkdir(parents=True)
    (root / "submissions" / "accepted" / "a.py").write_text(name)


def test_kattis_packages_with_a_cpp_validator_and_its_header_and_an_interactive_one(judge_scorer, tmp_path):
    from trl_sandbox import load_tasks

    _kattis_package(tmp_path / "custom", "custom", {"validate.cpp": VALIDATOR_CPP, "validate.h": VALIDATE_H},
                    "print(sum(map(int, input().split())))")
    (custom,) = load_tasks(tmp_path / "custom")
    got = results(judge_scorer, custom, ["print(sum(map(int, input().split())))", "print(3)"])
    assert [g[:3] for g in got] == [("passed", 1.0, 2), ("failed", 0.5, 1)]
    interactive = "import sys\n" + SUM_VALIDATOR_PY.split("import sys\n", 1)[1]
    _kattis_package(tmp_path / "inter", "custom interactive", {"interact.py": interactive}, PY_SUMS)
    (inter,) = load_tasks(tmp_path / "inter")
    got = results(judge_scorer, inter, [PY_SUMS, "print(3, flush=True)"])  # right for "1 2" only
    assert [g[:2] for g in got] == [("passed", 1.0), ("failed", 0.5)]


def test_a_polygon_package_with_an_interactor_and_a_checker_on_tout(judge_scorer, tmp_path):
    from trl_sandbox import load_tasks

    root = tmp_path / "guess"
    (root / "tests").mkdir(parents=True)
    (root / "files").mkdir()
    for i, number in enumerate(("37", "1000"), 1):
        (root / "tests" / f"{i:02d}").write_text(number + "\n")
        (root / "tests" / f"{i:02d}.a").write_text("\n")
    (root / "files" / "check.cpp").write_text(QUERIES)
    (root / "files" / "interactor.cpp").write_text(GUESS)
    (root / "problem.xml").write_text("""<?xml version="1.0" encoding="utf-8"?>
<problem revision="1" short-name="guess">
  <judging input-file="" output-file="">
    <testset name="tests">
      <time-limit>1000</time-limit><memory-limit>268435456</memory-limit><test-count>2</test-count>
      <input-path-pattern>tests/%02d</input-path-pattern><answer-path-pattern>tests/%02d.a</answer-path-pattern>
      <tests><test method="manual"/><test method="manual"/></tests>
    </testset>
  </judging>
  <assets>
    <checker name="check.cpp" type="testlib"><source path="files/check.cpp" type="cpp.g++17"/></checker>
    <interactor><source path="files/interactor.cpp" type="cpp.g++17"/></interactor>
  </assets>
</problem>
""")
    (row,) = load_tasks(root)
    got = results(judge_scorer, row, [PY_GUESS, PY_SCAN])
    assert got[0][:2] == ("passed", 1.0) and got[1][0] == "failed" and "at most 10" in got[1][3]


def test_frontier_cs_partial_scores_with_placeholder_answers(judge_scorer, tmp_path):
    from trl_sandbox import load_tasks

    root = tmp_path / "algorithmic" / "problems" / "0"
    (root / "testdata").mkdir(parents=True)
    (root / "config.yaml").write_text("type: default\nchecker: chk.cc\ntime: 1s\nmemory: 256m\n"
                                      "subtasks:\n  - score: 100\n    n_cases: 2\n")
    # As Frontier-CS' own: the .ans file is a placeholder, the checker scores the output against the input alone.
    (root / "chk.cc").write_text(r"""#include "testlib.h"
int main(int argc, char* argv[]) {
    registerTestlibCmd(argc, argv);
    int n = inf.readInt();
    int got = ouf.readInt(1, n, "k");
    quitp(double(got) / n, "Ratio: %.6f", double(got) / n);
}
""")
    for i, n in ((1, 4), (2, 10)):
        (root / "testdata" / f"{i}.in").write_text(f"{n}\n")
        (root / "testdata" / f"{i}.ans").write_text("zzz\n")
    (row,) = load_tasks(tmp_path / "algorithmic" / "problems")
    got = results(judge_scorer, row, ["print(input())", "print(2)", ""])
    assert got[0][:2] == ("passed", 1.0)
    assert got[1][0] == "failed" and got[1][1] == pytest.approx((0.5 + 0.2) / 2)


def test_an_interactbench_folder(judge_scorer, tmp_path):
    from trl_sandbox import load_tasks

    problem = tmp_path / "ib_guess"
    (problem / "interactor").mkdir(parents=True)
    (problem / "cases").mkdir()
    (problem / "meta.json").write_text('{"difficulty": "easy", "cate": [], "cpu_time_limit_ms": 1000, '
                                       '"memory_limit_mb": 256, "interactor_mode": "non_adaptive"}')
    (problem / "interactor" / "non_adaptive.cpp").write_text(GUESS)
    for i, number in enumerate(("5", "999"), 1):
        (problem / "cases" / f"{i:03d}.in").write_text(number + "\n")
    (row,) = load_tasks(tmp_path)
    got = results(judge_scorer, row, [PY_GUESS, "print('! 5', flush=True)"])
    assert [g[:3] for g in got] == [("passed", 1.0, 2), ("failed", 0.5, 1)]


# -- what a program may do to void its reward: never (review of issue 37); hostile programs run on local only --------
FILL_PROCESS_LIMIT = """import threading, time
threading.stack_size(32768)
def _fill():
    for _ in range(20000):
        try:
            threading.Thread(target=time.sleep, args=(20,), daemon=True).start()
        except RuntimeError:
            time.sleep(0.0005)
threading.Thread(target=_fill, daemon=True).start()
time.sleep(0.3)
"""
CPP_DETACHED_HOLDER = """```cpp
#include <cstdio>
#include <unistd.h>
int main() {
    printf("! 5\\n"); fflush(stdout);
    if (fork() == 0) { setsid(); sleep(30); return 0; }   // keeps the output open, out of the program's group
    usleep(100000);
}
```"""


@pytest.fixture(scope="module")
def local_scorer(judge_cache, sandbox_root):
    config = SandboxConfig(sandbox_pool_size=1, sandbox_test_timeout=1.0,
                           sandbox_backend_options={"root_dir": str(sandbox_root)})
    with Scorer.from_config(config) as scorer:
        yield scorer


@pytest.mark.parametrize("program", ["import os\nos.dup(1)\nprint('! 5', flush=True)", CPP_DETACHED_HOLDER])
def test_a_program_that_keeps_its_output_open_fails_it_does_not_void_the_task(local_scorer, program):
    got = results(local_scorer, GUESS_ROW, [program, PY_GUESS])
    assert got[0][:2] == ("failed", 0.0), got
    assert got[1][:2] == ("passed", 1.0)  # the task is not quarantined


@pytest.mark.parametrize("row, program", [(sum_row(), FILL_PROCESS_LIMIT + "print(4)"),
                                          (GUESS_ROW, FILL_PROCESS_LIMIT + "print('! 5', flush=True)")])
def test_a_program_that_fills_the_process_limit_fails_it_does_not_void_the_task(local_scorer, row, program):
    (status, reward, _, error), = results(local_scorer, row, [program])
    assert status in ("failed", "error") and reward is not None, error


def test_a_kattis_validator_that_fails_on_an_empty_output_is_quarantined(local_scorer):
    sloppy = "import sys\nwant = int(open(sys.argv[2]).read())\nsys.exit(42 if int(sys.stdin.read()) == want else 43)\n"
    row = {"task_id": "sloppy", "inputs": ["1 2\n"], "outputs": ["3\n"],
           "compare": {"checker": sloppy, "language": "python", "convention": "kattis"}}
    (status, reward, _, error), = results(local_scorer, row, ["print(3)"])
    assert (status, reward) == ("invalid_task", None) and "fails on an empty output" in error


def test_undecodable_bytes_do_not_crash_a_python_interactor(local_scorer):
    row = {"task_id": "sums-bytes", "inputs": ["1 2\n"], "outputs": [""],
           "interactor": {"interactor": SUM_VALIDATOR_PY, "language": "python", "convention": "kattis"}}
    (status, reward, _, _), = results(local_scorer, row, ["import os\ninput()\nos.write(1, b'\\xff\\n')"])
    assert (status, reward) == ("failed", 0.0)


def test_a_checker_that_fails_on_a_programs_output_quarantines_its_task(local_scorer):
    row = {**sum_row(), "task_id": "sum-quarantine"}
    got = results(local_scorer, row, ["print('crash')"])
    assert got[0][:2] == ("invalid_task", None)
    later = results(local_scorer, row, ["a, b = map(int, input().split())\nprint(a + b)"])
    assert later[0][0] == "invalid_task" and "quarantined after a judge error" in later[0][3]


def test_points_above_one_need_their_maximum(local_scorer):
    raw = RATIO.replace('quitp(got / best, "Ratio: %.4f", got / best)', 'quitp(got, "points")')
    row = {"task_id": "raw-points", "inputs": ["x\n"], "outputs": ["10\n"],
           "compare": {"checker": raw, "language": "cpp"}}
    assert results(local_scorer, row, ["print(5)"])[0][:2] == ("invalid_task", None)
    stated = {**row, "task_id": "raw-points-max", "compare": {**row["compare"], "points_max": 10}}
    assert results(local_scorer, stated, ["print(5)"])[0][:2] == ("failed", 0.5)


def test_a_program_that_reopens_its_streams_passes_every_test(local_scorer):
    row = {"task_id": "reopen", "inputs": ["1 2\n", "3 4\n", "5 6\n"], "outputs": ["3\n", "7\n", "11\n"]}
    for program in ["import sys\nsys.stdout = open(1, 'w')\nprint(sum(map(int, input().split())))",
                    "import sys\nsys.stdin = open(0)\nprint(sum(map(int, sys.stdin.readline().split())))"]:
        assert results(local_scorer, row, [program])[0][:2] == ("passed", 1.0)
