"""The hostile suite, part two: the findings of a hostile-policy review of the local backend and the harness (issue
45), each attacked through the real backend and harness, in both reward modes.

1. Processes a program never waits for are timed with it (a C++ program and a Python stdin program that spread 1.5
   times the CPU limit over 16 children), and what it leaves running ends after each test: 56 detached, chain-forked
   busy processes never starve an honest completion in the other sandbox of the pool.
2. The OOM killer takes the program's processes, never the judge: three 60 MiB strings, then 15 processes filling
   the sandbox's memory, are the program's doing (never ``infra_error``).
3. No execution's files end the fork server or spend the sandbox for the next completion (a tree 1,100 directories
   deep, a path past ``PATH_MAX``, interleaved with honest completions); a sandbox that is spent is said so in the
   answer of the execution that spent it.
4. A score is never read from text the program printed into a checker's message (``Ratio:1``, ``Ratio: 5``), and a
   program never gets its task quarantined.
5. Cleanup ends only what its own execution started: sandboxes that share one kernel's PID namespace (the remote
   harness as root) never end each other's programs.
6. A session sandbox is lent to the next rollout with its scratch empty and its space back.

Runs as root and, in CI, again as an unprivileged account (``.ci/hostile-nonroot``), where cgroups cannot be written:
there the worker's own cleanup holds what it can (see docs/security.md). Safety net: conftest.py's cgroups and every
test's timeout.
"""

import json
import os
import shutil
import tempfile
from pathlib import Path

import anyio
import pytest

from trl_sandbox import CodeEnvironment, SandboxConfig, Scorer, Task, load_tasks
from trl_sandbox.backends.base import ExecResult
from trl_sandbox.backends.mock import MockBackend

HAVE_GXX = bool(shutil.which("g++", path="/usr/local/bin:/usr/bin:/bin"))

# -- 1. processes the program does not wait for ---------------------------------------------------------------------
STDIO_1S = Task.from_row({"task_id": "square-1s", "inputs": ["3\n", "5\n", "7\n", "2\n", "4\n"],
                          "outputs": ["9", "25", "49", "4", "16"], "time_limit": 1})
NATIVE_1S = Task.from_row({"task_id": "square-1s-cpp", "inputs": ["3\n", "5\n", "7\n"], "outputs": ["9", "25", "49"],
                           "time_limit": 1, "language": "cpp"})
# 16 children compute 1.5 s of CPU in all, and write their results to a pipe the program reads; it never waits for
# them (so neither the worker's nor a compiled program's wait() counts them).
PY_UNWAITED = (
    "import os, time\n"
    "x = int(input())\n"
    "r, w = os.pipe()\n"
    "for _ in range(16):\n"
    "    if os.fork() == 0:\n"
    "        t = time.process_time()\n"
    "        while time.process_time() - t < {share}:\n"
    "            pass\n"
    "        os.write(w, b'x')\n"
    "        os._exit(0)\n"
    "got = b''\n"
    "while len(got) < 16:\n"
    "    got += os.read(r, 16)\n"
    "{wait}"
    "print(x * x)\n"
)
CPP_UNWAITED = (
    "#include <cstdio>\n#include <ctime>\n#include <unistd.h>\n#include <sys/wait.h>\n"
    "int main() {\n  long long x; scanf(\"%lld\", &x); int p[2]; pipe(p);\n"
    "  for (int k = 0; k < 16; k++) if (fork() == 0) {\n"
    "    clock_t t = clock(); while ((double)(clock() - t) / CLOCKS_PER_SEC < 1.5 / 16) {}\n"
    "    write(p[1], \"x\", 1); _exit(0); }\n"
    "  char b[16]; int got = 0; while (got < 16) { int n = read(p[0], b, 16); if (n <= 0) break; got += n; }\n"
    "  printf(\"%lld\\n\", x * x); return 0; }\n"
)
# The first run leaves 56 busy processes behind (each a setsid'd grandchild of a chain of forks), then every test
# sleeps 0.8 s: before, they computed for the whole completion, beside the other sandbox's honest completion.
DAEMONS = (
    "import os, time\n"
    "def chain(n):\n"
    "    for _ in range(n):\n"
    "        if os.fork():\n"
    "            os._exit(0)\n"
    "        os.setsid()\n"
    "x = int(input())\n"
    "if not os.path.exists('spawned'):\n"
    "    open('spawned', 'w').close()\n"
    "    if os.fork() == 0:\n"
    "        for _ in range(56):\n"
    "            try:\n"
    "                if os.fork() == 0:\n"
    "                    chain(2)\n"
    "                    while True:\n"
    "                        pass\n"
    "            except OSError:\n"
    "                pass\n"
    "        os._exit(0)\n"
    "time.sleep(0.8)\n"
    "print(x * x)\n"
)
HONEST_QUARTER_SECOND = ("import time\nx = int(input())\nt = time.process_time()\n"
                         "while time.process_time() - t < 0.25:\n    pass\nprint(x * x)\n")


@pytest.fixture(scope="module", params=["pass_rate", "all_or_nothing"])
def review_scorer(request, sandbox_root):
    """A pool of two local sandboxes with the hostile suite's small limits (1 s per test), in each reward mode."""
    options = {"root_dir": str(sandbox_root), "scratch_limit_bytes": 16 << 20, "max_processes": 128}
    config = SandboxConfig(sandbox_pool_size=2, sandbox_test_timeout=1.0, sandbox_memory_limit=256 << 20,
                           sandbox_compile_timeout=30.0, sandbox_backend_options=options,
                           sandbox_reward=request.param)
    with Scorer.from_config(config) as scorer:
        yield scorer


def _not_paid(result):
    return not result.passed and result.reward is not None and result.reward <= 0, (result.status, result.error)


def test_processes_a_program_never_waits_for_are_timed_with_it(review_scorer):
    """Before: both passed in about 2.3 s of wall time, their children's CPU counted nowhere."""
    waits = "[os.wait() for _ in range(16)]\n"
    tasks = [STDIO_1S, STDIO_1S]
    programs = [PY_UNWAITED.format(share=1.5 / 16, wait=""), PY_UNWAITED.format(share=0.2 / 16, wait=waits)]
    if HAVE_GXX:
        tasks.append(NATIVE_1S)
        programs.append("```cpp\n" + CPP_UNWAITED + "```")
    elif os.environ.get("CI"):
        pytest.fail("CI must have g++ (see .ci/toolchains)")
    results = review_scorer.score(tasks, programs)
    unwaited, honest = results[0], results[1]
    assert _not_paid(unwaited)[0], _not_paid(unwaited)
    assert honest.status == "passed", (honest.status, honest.error)  # forks that fit the limit still pass
    if HAVE_GXX:
        assert _not_paid(results[2])[0], _not_paid(results[2])


@pytest.mark.serial  # an honest neighbour's time beside attackers: no other test's load on the host
def test_detached_busy_processes_never_starve_an_honest_neighbour(review_scorer):
    """Before: the program passed its own 5 tests while the honest completion in the other sandbox (0.25 CPU-s per
    1 s test) timed out at its wall-clock backstop (1.0 -> -1.0). What the program leaves ends after each test, and
    each sandbox has a core of its own where cgroups can be written."""
    for _ in range(2):
        attacker, honest = review_scorer.score([STDIO_1S, STDIO_1S], [DAEMONS, HONEST_QUARTER_SECOND])
        assert attacker.reward is not None, attacker
        assert honest.status == "passed", (honest.status, honest.error)


# -- 2. the OOM killer takes the program's processes, never the judge ----------------------------------------------
BIG = Task.from_row({"task_id": "big-values", "test_list": ["assert len(f(1)) > 0", "assert len(f(2)) > 0",
                                                            "assert len(f(3)) > 0", "assert len(f(4)) > 0"]})
OOM = (
    "import os, time\n"
    "def f(x):\n"
    "    if x < 4:\n"
    "        return ('%d' % x) * (60 << 20)\n"
    "    for _ in range(15):\n"
    "        if os.fork() == 0:\n"
    "            try:\n"
    "                b = bytearray(100 << 20)\n"
    "                for i in range(0, len(b), 4096):\n"
    "                    b[i] = 1\n"
    "            except MemoryError:\n"
    "                pass\n"
    "            time.sleep(30)\n"
    "            os._exit(0)\n"
    "    time.sleep(2)\n"
    "    return 'x'\n"
)


@pytest.mark.parametrize("reward", ["pass_rate", "all_or_nothing"])
def test_a_program_that_fills_the_sandboxs_memory_never_gets_its_judge_killed(sandbox_root, reward):
    """Before: the judge (keeping every value it decoded) was the OOM killer's choice, on the retry's sandbox too:
    ``infra_error``, a None reward and two sandboxes lost. The judge keeps a bounded amount of the program's values,
    and the killer takes the program's processes first. (The default 1 GiB limit: the judge's share is large then.)"""
    config = SandboxConfig(sandbox_pool_size=2, sandbox_test_timeout=10.0, sandbox_reward=reward,
                           sandbox_backend_options={"root_dir": str(sandbox_root)})
    with Scorer.from_config(config) as scorer:
        (result,) = scorer.score([BIG], [OOM])
        assert result.status != "infra_error" and result.reward is not None, (result.status, result.error)
        assert scorer.pool.stats.replaced == 0 and result.retries == 0


# -- 3. an execution's files never end the server, nor spend the next completion's sandbox ---------------------------
SQUARE = Task.from_row({"task_id": "square", "test_list": ["assert f(2) == 4", "assert f(3) == 9"]})
SQUARE_OK = "def f(x):\n    return x * x\n"
DEEP_TREE = ("import os\ndef f(x):\n    for _ in range(1100):\n        os.mkdir('d')\n        os.chdir('d')\n"
             "    return x * x\n")
LONG_PATH = ("import os\ndef f(x):\n    for _ in range(20):\n        os.mkdir('n' * 250)\n        os.chdir('n' * 250)\n"
             "    open('f', 'w').write('x')\n    return x * x\n")


@pytest.mark.serial  # zero retries is its claim: beside two other test workers and two busy processes one was seen
@pytest.mark.parametrize("review_scorer", ["pass_rate"], indirect=True)
@pytest.mark.parametrize("attack", [DEEP_TREE, LONG_PATH], ids=["tree-1100-deep", "path-past-PATH_MAX"])
def test_a_programs_files_never_reach_the_next_completion(review_scorer, attack):
    """Before: the tree ended the fork server (recursion), the long path spent the sandbox, and the host learned it
    only when it lent the sandbox again: in a batch of 8 such completions among 8 honest ones on a pool of two, the
    last honest one got ``infra_error``. Now both trees are emptied (descriptors, no paths, no recursion). In one
    reward mode: the sandbox's scratch is emptied the same way after either."""
    replaced = review_scorer.pool.stats.replaced
    tasks, programs = [SQUARE] * 16, [attack, SQUARE_OK] * 8
    results = review_scorer.score(tasks, programs)
    assert [r.status for r in results] == ["passed"] * 16, [(r.status, r.error) for r in results]
    assert [r.retries for r in results] == [0] * 16  # no execution met a sandbox another one spent
    assert review_scorer.pool.stats.replaced == replaced  # nor was any spent: what they made is removed


@pytest.mark.skipif(os.geteuid() != 0, reason="planting a file in a sandbox's private tmpfs needs root")
def test_a_spent_sandbox_is_said_so_in_the_answer_that_spent_it(own_sandbox_root):
    """A slot that cannot be emptied (here a file planted from outside, in an idle slot) spends the sandbox: the
    answer of the execution reaped then says so (``sandbox_spent``) and keeps its verdict; nothing runs there after."""
    from trl_sandbox.backends.local import LocalBackend
    from trl_sandbox.errors import InfrastructureError
    from trl_sandbox.harness.archive import HARNESS_FILES, HARNESS_NAME

    backend = LocalBackend(root_dir=own_sandbox_root)

    async def scenario():
        await backend.start()
        sandbox = await backend.create({})
        try:
            await backend.write_files(sandbox, HARNESS_FILES)
            server = backend._servers.get(sandbox.id)
            runs = Path(f"/proc/{server.proc.pid}/root") / Path(sandbox.data, "runs").relative_to("/")
            (runs / "2" / "planted").write_text("x")
            argv = [*sandbox.python, f"{sandbox.workdir}/{HARNESS_NAME}"]
            request = json.dumps(SQUARE.request(SQUARE_OK, test_timeout_s=5.0, output_limit=1 << 16)).encode()
            result = await backend.exec(sandbox, argv, stdin=request, timeout_s=20)
            assert result.sandbox_spent and "planted" in result.sandbox_spent, result
            assert SQUARE.judge(result.stdout, exit_code=result.exit_code, timed_out=result.timed_out).status == \
                "passed"
            with pytest.raises(InfrastructureError, match="spent"):
                await backend.exec(sandbox, argv, stdin=request, timeout_s=20)
        finally:
            await backend.delete(sandbox)
            await backend.aclose()

    anyio.run(scenario)


# -- 4. a score the program prints is never read from a checker's message -----------------------------------------
# A testlib checker that quotes the program's answer in its message, as many do (``quitp(score, "answer %s", got)``).
QUOTING = r"""
#include "testlib.h"
int main(int argc, char* argv[]) {
    registerTestlibCmd(argc, argv);
    std::string want = ans.readToken();
    std::string got = ouf.readLine();
    if (got == want) quitp(1.0, "correct");
    quitp(0.0, "answer %s is not %s", got.c_str(), want.c_str());
}
"""
QUOTING_ROW = {"task_id": "quoting-checker", "inputs": ["x\n", "y\n"], "outputs": ["10\n", "10\n"],
               "compare": {"checker": QUOTING, "language": "cpp"}}


@pytest.mark.skipif(not HAVE_GXX and not os.environ.get("CI"), reason="no g++ here (apt-get install g++)")
def test_a_score_the_program_prints_is_never_read_from_a_quoting_checker(review_scorer, judge_cache):
    """Before: ``print('Ratio:1')`` got 1.0 (the last ``Ratio:`` anywhere in the message), ``print('Ratio: 5')`` got
    ``invalid_task`` and quarantined the task for the rest of the run. The score is testlib's own ``points``."""
    task = Task.from_row(QUOTING_ROW)
    forged = review_scorer.score([task] * 3, ["print('Ratio:1')", "print('Ratio: 5')", "print('points 1')"])
    assert [(r.status, r.reward) for r in forged] == [("failed", 0.0)] * 3, [(r.status, r.error) for r in forged]
    (honest,) = review_scorer.score([task], ["input()\nprint(10)"])
    assert honest.status == "passed", (honest.status, honest.error)  # never quarantined by a program


@pytest.mark.skipif(not HAVE_GXX and not os.environ.get("CI"), reason="no g++ here (apt-get install g++)")
def test_the_audit_tries_printed_scores_and_rates_the_quoting_checker_ok(sandbox_root, judge_cache, tmp_path):
    """``trl-sandbox audit`` scores programs that print ``Ratio:1``, ``Ratio: 5`` and ``points 1`` on rows with a
    checker: none is paid, so the row is ``ok`` (it was ``trivial_paid`` by the first one before)."""
    from trl_sandbox.audit import audit_tasks

    config = SandboxConfig(sandbox_pool_size=2, sandbox_test_timeout=2.0,
                           sandbox_backend_options={"root_dir": str(sandbox_root)})
    row = {**QUOTING_ROW, "task_id": "quoting-checker-audit"}
    with Scorer.from_config(config) as scorer:
        report = audit_tasks([row], scorer)
    (audit,) = report.rows
    names = [program["kind"] for program in audit.programs]
    assert {"ratio-1", "ratio-5", "points-1"} <= set(names), names
    assert audit.verdict in ("ok", "no_reference"), (audit.verdict, audit.findings)


# -- 5. cleanup ends only what its own execution started ------------------------------------------------------------
async def _shared_host(request):
    """A fake remote backend whose sandboxes are all this host, as root: each command is ``python harness.pyz`` as
    the remote backends run it, beside the others, in one PID namespace (a self-hosted runner, a pool host)."""
    from trl_sandbox.harness.archive import HARNESS_FILES, HARNESS_NAME

    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        harness = Path(tmp) / HARNESS_NAME
        harness.write_bytes(HARNESS_FILES[HARNESS_NAME])
        with anyio.fail_after(request.timeout_s + 10):
            proc = await anyio.run_process(["/usr/bin/python3", "-I", "-S", str(harness)], input=request.stdin,
                                           cwd=tmp, env={"PATH": "/usr/bin:/bin"}, check=False)
    return ExecResult(proc.returncode, proc.stdout, proc.stderr, 0.0)


@pytest.mark.skipif(os.geteuid() != 0 or not os.access("/usr/bin/python3", os.X_OK),
                    reason="the remote harness sweeps an account only as root (with /usr/bin/python3)")
def test_sandboxes_sharing_a_kernel_never_end_each_others_programs():
    """Before: each judge, as root, killed every process of ``nobody`` and removed its files (another run's worker
    and home among them): 1 of 24 canonical HumanEval solutions passed on such a host. Each run has an account of
    its own now, and its worker a PID namespace of its own."""
    rows = list(load_tasks("humaneval"))[:24]
    config = SandboxConfig(sandbox_pool_size=4, sandbox_test_timeout=10.0)
    with Scorer.from_config(config, backend=MockBackend(handler=_shared_host)) as scorer:
        results = scorer.score([Task.from_row(r) for r in rows], [r["canonical_solution"] for r in rows])
    assert [r.status for r in results] == ["passed"] * 24, [(r.task_id, r.status, r.error) for r in results]
    assert not os.path.exists("/run/trl-sandbox-accounts"), "the accounts' claims were left behind"


# -- 6. a session sandbox is lent back with its scratch empty and its space back ------------------------------------
SESSION_ROW = {"task_id": "square", "test_list": ["assert f(2) == 4"]}
FILL_SCRATCH = ("n = 0\ntry:\n    while True:\n        with open('f%d' % n, 'wb') as fh:\n"
                "            fh.write(b'x' * 4096)\n        n += 1\nexcept OSError as e:\n    print('filled', n)\n")
WRITE_8_MIB = "open('big', 'wb').write(b'y' * (8 << 20))\nprint('wrote')"


def test_a_session_sandbox_is_lent_back_with_its_scratch_empty_and_its_space_back(own_sandbox_root):
    """Before: a rollout that filled its scratch left the next rollout on the same kept sandbox unable to write
    8 MiB (its names were cleared, its space not yet: the sandbox was lent before its slot was emptied)."""
    config = SandboxConfig(sandbox_pool_size=1, sandbox_max_sessions=1, sandbox_tool_timeout=10.0,
                           sandbox_backend_options={"root_dir": str(own_sandbox_root),
                                                    "scratch_limit_bytes": 16 << 20})
    with CodeEnvironment.factory(config) as make_env:
        for _ in range(3):
            first = make_env()
            first.reset(**SESSION_ROW)
            assert "filled" in first.python(FILL_SCRATCH)
            second = make_env()
            first.reset(**SESSION_ROW)  # ends the first rollout's session: its sandbox goes back to the pool
            second.reset(**SESSION_ROW)
            out = second.python(WRITE_8_MIB)
            assert "wrote" in out, out
            second.reset(**SESSION_ROW)


@pytest.mark.skipif(os.geteuid() != 0, reason="accounts are claimed as root only")
def test_a_run_claims_an_account_of_its_own_and_sweeps_those_of_killed_runs():
    """The claims' registry is root's alone; a claim that no process holds (its run was killed before its cleanup)
    has its uid swept and is given back by the next run; the last release removes the registry."""
    from trl_sandbox.harness import accounts

    swept = []
    first = accounts.claim(swept.append)
    assert first is not None and accounts.ACCOUNT_BASE <= first < accounts.ACCOUNT_BASE + accounts.ACCOUNT_SPAN
    directory = accounts.registry_dir()
    info = os.stat(directory)
    assert info.st_uid == 0 and not info.st_mode & 0o077
    held_fd = accounts.claim_fd()
    accounts._CLAIM[:] = [None, None]  # as a killed run leaves it: the file stays, no process holds it
    os.close(held_fd)
    try:
        second = accounts.claim(swept.append)
        assert swept == [first] and second is not None
        assert not os.path.exists(os.path.join(directory, str(first)))
    finally:
        accounts.release()
    assert not os.path.exists(directory)
