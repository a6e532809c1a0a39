"""Pool edge cases, each reproduced with the mock backend: deadlines during replacement and deletion, Ctrl-C during
creation (with and without the pool's signal handler, off the main thread), handlers that chain back to ours, ignored
signals, creation pacing shared by the processes of a host, and the package's import graph."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import anyio
import pytest

from trl_sandbox import SandboxPool, Scorer, Task
from trl_sandbox.testing import MockBackend, harness_reply

REPO = Path(__file__).resolve().parent.parent
TASK = Task.from_row({"task_id": "m", "test_list": ["assert f() == 1"]})
HANG = "def f():\n    return 1  # HANG\n"
OK = "def f():\n    return 1\n"


async def answer(request):
    """Passes every completion; one whose program says HANG never answers (a straggler)."""
    if "HANG" in request.harness["program"]:
        await anyio.sleep(3600)
    return harness_reply(request, passed=True)


class SlowSetup(MockBackend):
    """Writing the harness into a new sandbox takes ``write_latency_s``."""

    write_latency_s: float = 0.0

    async def write_files(self, sandbox, files):
        await anyio.sleep(self.write_latency_s)
        await super().write_files(sandbox, files)


def test_a_replacement_cut_off_by_the_deadline_is_deleted_not_leaked():
    backend = SlowSetup(handler=answer)
    pool = SandboxPool(backend, size=1, handle_signals=False)
    with Scorer(pool, batch_deadline_s=0.5) as scorer:
        assert [r.status for r in scorer.score([TASK], [HANG])] == ["cancelled"]
        backend.write_latency_s = 2.0  # replacements now take longer than the deadline
        for _ in range(3):
            assert [r.status for r in scorer.score([TASK], [OK])] == ["cancelled"]
            time.sleep(0.2)
            assert len(backend.live) <= 1, backend.live  # never more sandboxes than the pool's size
        backend.write_latency_s = 0.0
        assert [r.status for r in scorer.score([TASK], [OK])] == ["passed"]
        assert len(pool.live_sandboxes()) == 1
    assert backend.live == {}


class SlowDelete(MockBackend):
    """Deleting the first sandbox takes until ``release`` is set."""

    def __post_init__(self):
        super().__post_init__()
        self.release = threading.Event()

    async def delete(self, sandbox):
        while sandbox.id == self.created[0] and not self.release.is_set():
            await anyio.sleep(0.05)
        await super().delete(sandbox)


def test_a_slow_deletion_after_the_deadline_loses_no_finished_result():
    backend = SlowDelete(handler=answer)
    pool = SandboxPool(backend, size=2, handle_signals=False)
    with Scorer(pool, batch_deadline_s=1.0) as scorer:
        start = time.monotonic()
        results = scorer.score([TASK, TASK], [HANG, OK])
        elapsed = time.monotonic() - start
        backend.release.set()
    assert [r.status for r in results] == ["cancelled", "passed"] and results[1].reward == 1.0
    assert elapsed < 20  # the batch returned at its deadline, not after the deletion (loose guard)
    assert backend.live == {}


def run_script(code: str, timeout: float = 60) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON object last."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)
    assert proc.stdout.strip(), proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["stderr"] = proc.stderr
    return result


PRELUDE = """
import json, os, signal, sys, threading, time
import anyio
from trl_sandbox import SandboxPool
from trl_sandbox.testing import MockBackend

class Staggered(MockBackend):
    # creation i takes 0.2 * i s; once two sandboxes exist (two creations still in flight), Ctrl-C when asked to
    calls = 0
    interrupt = False
    async def create(self, labels):
        Staggered.calls += 1
        await anyio.sleep(0.2 * Staggered.calls)
        sandbox = await super().create(labels)
        if Staggered.interrupt and len(self.created) == 2:  # not a timer: a loaded machine keeps the order
            os.kill(os.getpid(), signal.SIGINT)
        return sandbox

backend = Staggered()
def interrupt_soon():
    Staggered.interrupt = True
"""


@pytest.mark.parametrize("handle_signals", [True, False], ids=["with the pool's handler", "without it"])
def test_ctrl_c_during_creation_deletes_every_sandbox(handle_signals):
    result = run_script(PRELUDE + f"""
pool = SandboxPool(backend, size=4, handle_signals={handle_signals})
interrupt_soon()
try:
    pool.start()
    outcome = "started"
except KeyboardInterrupt:
    outcome = "interrupted"
pool.close()
time.sleep(1.0)  # creations that were in flight have ended by now
print(json.dumps({{"outcome": outcome, "created": len(backend.created), "live": len(backend.live)}}))
""")
    assert result["outcome"] == "interrupted" and result["created"] >= 1, result
    assert result["live"] == 0, result
    assert "Traceback" not in result["stderr"] and "AttributeError" not in result["stderr"], result["stderr"]


def test_ctrl_c_while_a_pool_starts_off_the_main_thread_deletes_every_sandbox():
    result = run_script(PRELUDE + """
pool = SandboxPool(backend, size=4)
errors = []
def start():
    try:
        pool.start()
    except Exception as exc:
        errors.append(type(exc).__name__)
worker = threading.Thread(target=start)
interrupt_soon()
try:
    worker.start()
    worker.join()
    outcome = "started"
except KeyboardInterrupt:
    outcome = "interrupted"
    pool.close()
    worker.join()
time.sleep(1.0)
print(json.dumps({"outcome": outcome, "created": len(backend.created), "live": len(backend.live), "errors": errors}))
""")
    assert result["outcome"] == "interrupted" and result["live"] == 0, result
    assert result["errors"] == ["InfrastructureError"], result  # start() says the pool was closed meanwhile


def test_a_handler_that_chains_back_to_ours_gets_one_call_and_ctrl_c_stays_keyboardinterrupt():
    result = run_script("""
import json, os, signal, time
from trl_sandbox import SandboxPool
from trl_sandbox.testing import MockBackend

first = SandboxPool(MockBackend(), size=1).start()
ours = signal.getsignal(signal.SIGINT)
calls = []
def theirs(signum, frame):  # installed between two pool starts, chaining to what was there (ours)
    calls.append(signum)
    ours(signum, frame)
signal.signal(signal.SIGINT, theirs)
second = SandboxPool(MockBackend(), size=1).start()
try:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(2)
    outcome = "nothing"
except KeyboardInterrupt:
    outcome = "KeyboardInterrupt"
except RecursionError:
    outcome = "RecursionError"
print(json.dumps({"outcome": outcome, "calls": len(calls), "closed": [first.closed, second.closed]}))
""")
    assert result["outcome"] == "KeyboardInterrupt" and result["calls"] == 1, result
    assert result["closed"] == [True, True]


def test_an_ignored_sigint_stays_ignored():
    result = run_script("""
import json, os, signal, time
from trl_sandbox import SandboxPool, Scorer, Task
from trl_sandbox.testing import MockBackend, harness_reply

signal.signal(signal.SIGINT, signal.SIG_IGN)  # as in a background job of a non-interactive shell
backend = MockBackend(handler=lambda request: harness_reply(request, passed=True))
with Scorer(SandboxPool(backend, size=1)) as scorer:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.2)
    (result,) = scorer.score([Task.from_row({"test_list": ["assert f() == 1"]})], ["def f():\\n    return 1\\n"])
    print(json.dumps({"status": result.status, "reward": result.reward,
                      "ignored": signal.getsignal(signal.SIGINT) == signal.SIG_IGN}))
""")
    assert result["status"] == "passed" and result["reward"] == 1.0 and result["ignored"], result


PACED = """
import json, sys, anyio
from trl_sandbox.backends._remote import Pacer

async def main():
    pacer = Pacer(20.0, key="test-account", lock_dir=sys.argv[1])
    times = []
    for _ in range(8):
        times.append(await pacer.wait())  # the turn reserved: sleeping late under load does not move it
    print(json.dumps(times))

anyio.run(main)
"""


def test_creation_pacing_is_shared_by_the_processes_of_a_host(tmp_path):
    """Two processes pacing one account at 20 creations/s take turns at least 1/20 s apart between them, not each
    at 20/s."""
    procs = [subprocess.Popen([sys.executable, "-c", PACED, str(tmp_path)], stdout=subprocess.PIPE, text=True)
             for _ in range(2)]
    times = sorted(t for p in procs for t in json.loads(p.communicate(timeout=60)[0]))
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert len(times) == 16 and min(gaps) >= 0.05 - 1e-6, gaps


def test_the_package_has_no_import_cycle():
    """Module imports inside trl_sandbox (TYPE_CHECKING ones included) form no cycle."""
    package = REPO / "trl_sandbox"
    graph: dict[str, set[str]] = {}
    for path in package.rglob("*.py"):
        module = ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        deps = graph.setdefault(module, set())
        base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                target = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
                names = [f"{target}.{a.name}" for a in node.names]
                deps.update(n for n in names if (package.parent / (n.replace(".", "/") + ".py")).exists())
                if (package.parent / (target.replace(".", "/") + ".py")).exists():
                    deps.add(target)
    state: dict[str, int] = {}

    def visit(module: str, stack: list[str]) -> None:
        state[module] = 1
        for dep in sorted(graph.get(module, ())):
            if state.get(dep) == 1:
                raise AssertionError("import cycle: " + " -> ".join([*stack, module, dep]))
            if dep not in state:
                visit(dep, [*stack, module])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [])



def test_closing_the_pool_waits_for_background_work_then_cancels_what_is_left():
    """``run_soon`` work (a session ending, which still talks to the backend) ends before the pool deletes its
    sandboxes and closes the backend; work past ``delete_timeout_s`` is cancelled rather than left running."""
    backend = MockBackend(handler=answer)
    closed_at = []
    original_aclose = backend.aclose

    async def aclose():
        closed_at.append(time.monotonic())
        await original_aclose()

    backend.aclose = aclose
    seen = {}

    async def ending(name, seconds):
        try:
            await anyio.sleep(seconds)
            seen[name] = (time.monotonic(), len(backend.live))  # the sandboxes are still there
        except anyio.get_cancelled_exc_class():
            seen[name] = "cancelled"
            raise

    pool = SandboxPool(backend, size=1, handle_signals=False, delete_timeout_s=1.0)
    pool.start()
    pool.run_soon(ending, "short", 0.3)
    pool.run_soon(ending, "endless", 3600)
    start = time.monotonic()
    pool.close()
    assert time.monotonic() - start < 10
    finished, sandboxes = seen["short"]
    assert sandboxes == 1 and finished < closed_at[0]
    assert seen["endless"] == "cancelled" and backend.live == {}
