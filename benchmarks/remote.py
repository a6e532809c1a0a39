"""Remote-like backends: concurrent pool creation and scoring makespan, with the mock backend given latencies.

- Pool creation: ``N`` sandboxes whose ``create`` takes ``--create-latency`` seconds each, created by
  :meth:`SandboxPool.start`: concurrent creation takes about one latency whatever ``N``. The local backend's own
  creation (starting a fork server per sandbox) is measured too.
- Makespan: ``--completions`` completions scored with a pool of ``--pool-size`` sandboxes whose every execution
  costs ``--exec-latency`` seconds of round trip. The ideal is ``ceil(completions / pool) * exec_latency``: every
  completion needs exactly one execution (all its tests in one round trip) and the pool is never idle.

- With ``--e2b`` / ``--hf``: the e2b / hf backend with its real SDK against its local fake (``tests/fake_e2b.py``,
  ``tests/fake_hf.py``: no account, not the real service) with ``--exec-latency`` added to every HTTP answer; pool
  start and the makespan of ``--completions`` HumanEval completions on ``min(--pool-size, 16)`` sandboxes, one run.

    python benchmarks/remote.py
    python benchmarks/remote.py --no-local --runs 1 --completions 64 --pool-size 8 --e2b --hf
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).parent))
from _common import median, progress, table

from trl_sandbox.loading import load_tasks
from trl_sandbox.pool import SandboxPool
from trl_sandbox.scoring import Scorer
from trl_sandbox.tasks import Task
from trl_sandbox.testing import MockBackend, harness_reply


def pool_creation(sizes: list[int], latency: float, runs: int) -> list[dict]:
    rows = []
    for n in sizes:
        progress(f"pool creation, mock backend: {n} sandboxes, {runs} runs")
        times = []
        for _ in range(runs):
            backend = MockBackend(handler=lambda r: harness_reply(r, passed=True), create_latency_s=latency)
            pool = SandboxPool(backend, size=n)
            t0 = time.perf_counter()
            pool.start()
            times.append(time.perf_counter() - t0)
            pool.close()
        t = median(times)
        rows.append({"backend": f"mock, create {latency * 1000:.0f} ms", "sandboxes": n, "runs": runs,
                     "seconds": t, "x one creation": t / latency})
    return rows


def local_creation(sizes: list[int], runs: int) -> list[dict]:
    from trl_sandbox.backends.local import LocalBackend

    async def go(n: int) -> float:
        backend = LocalBackend()
        await backend.start()
        one = []
        try:
            t0 = time.perf_counter()
            sandboxes = []
            async with anyio.create_task_group() as tg:
                async def create() -> None:
                    sandboxes.append(await backend.create({"benchmark": "1"}))
                for _ in range(n):
                    tg.start_soon(create)
            elapsed = time.perf_counter() - t0
            for sandbox in sandboxes:
                await backend.delete(sandbox)
            t0 = time.perf_counter()
            sandbox = await backend.create({"benchmark": "1"})
            one.append(time.perf_counter() - t0)
            await backend.delete(sandbox)
        finally:
            await backend.aclose()
        return elapsed, one[0]

    rows = []
    for n in sizes:
        progress(f"pool creation, local backend: {n} sandboxes, {runs} runs")
        results = [anyio.run(go, n) for _ in range(runs)]
        t, single = median([r[0] for r in results]), median([r[1] for r in results])
        rows.append({"backend": "local (fork server)", "sandboxes": n, "runs": runs, "seconds": t,
                     "x one creation": t / single})
    return rows


def makespan(completions: int, pool_size: int, create_latency: float, exec_latency: float, runs: int) -> dict:
    rows = load_tasks("humaneval")
    tasks = [Task.from_row(rows[i % len(rows)]) for i in range(completions)]
    samples = [rows[i % len(rows)]["prompt"] + rows[i % len(rows)]["canonical_solution"] for i in range(completions)]
    times, trips = [], []
    for run in range(runs):
        progress(f"scoring makespan, mock backend: run {run + 1}/{runs} ({completions} completions, pool {pool_size})")
        calls = []

        def handler(request, calls=calls):
            calls.append(1)
            return harness_reply(request, passed=True)

        backend = MockBackend(handler=handler, create_latency_s=create_latency, exec_latency_s=exec_latency)
        with Scorer(SandboxPool(backend, size=pool_size)) as scorer:
            t0 = time.perf_counter()
            results = scorer.score(tasks, samples)
            times.append(time.perf_counter() - t0)
        assert all(r.passed for r in results)
        trips.append(len(calls) / completions)
    ideal = math.ceil(completions / pool_size) * exec_latency
    t = median(times)
    return {"completions": completions, "pool": pool_size, "exec latency ms": exec_latency * 1000, "runs": runs,
            "makespan s": t, "ideal s": ideal, "x ideal": t / ideal, "round trips per completion": median(trips)}


def e2b_through_fake(completions: int, pool_size: int, latency: float) -> dict:
    """The e2b backend, real SDK, against ``tests/fake_e2b.py`` with ``latency`` seconds added to every HTTP answer
    (commands run in local sandboxes): pool start and the makespan of ``completions`` HumanEval completions."""
    import os
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from fake_e2b import FakeE2B

    from trl_sandbox.config import SandboxConfig

    rows = load_tasks("humaneval")
    tasks = [Task.from_row(rows[i % len(rows)]) for i in range(completions)]
    samples = [rows[i % len(rows)]["canonical_solution"] for i in range(completions)]
    with tempfile.TemporaryDirectory(prefix="trl-sandbox-bench-") as root:
        os.chmod(root, 0o755)
        fake = FakeE2B(Path(root))
        url = fake.start()
        os.environ.update({"E2B_API_KEY": "test-key", "E2B_API_URL": url, "E2B_SANDBOX_URL": url,
                           "E2B_HTTP_VERSION": "1.1", "TRL_SANDBOX_LOCK_DIR": root})  # pacing lock file: in root
        fake.latency_s = latency
        progress(f"e2b backend through its fake: {completions} completions, pool {pool_size}")
        try:
            scorer = Scorer.from_config(SandboxConfig(sandbox_backend="e2b", sandbox_pool_size=pool_size))
            t0 = time.perf_counter()
            scorer.start()
            start_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            results = scorer.score(tasks, samples)
            span = time.perf_counter() - t0
            scorer.close()
        finally:
            fake.stop()
    assert all(r.passed for r in results), [r for r in results if not r.passed][:2]
    return {"completions": completions, "pool": pool_size, "latency ms": latency * 1000, "pool start s": start_s,
            "makespan s": span, "per completion per slot s": span * pool_size / completions}


def hf_through_fake(completions: int, pool_size: int, latency: float) -> dict:
    """The hf backend, real ``huggingface_hub.Sandbox`` client, against ``tests/fake_hf.py`` with ``latency`` seconds
    added to every HTTP answer (Jobs API and in-job sandbox server; commands run in local sandboxes): pool start and the
    makespan of ``completions`` HumanEval completions. The SDK is pointed at the fake as ``tests/test_hf.py`` does."""
    import os
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import huggingface_hub.constants
    from fake_hf import TOKEN, FakeHF

    from trl_sandbox.config import SandboxConfig

    rows = load_tasks("humaneval")
    tasks = [Task.from_row(rows[i % len(rows)]) for i in range(completions)]
    samples = [rows[i % len(rows)]["canonical_solution"] for i in range(completions)]
    names = ("HF_ENDPOINT", "HF_TOKEN", "HF_HUB_OFFLINE", "HF_HOME", "TRL_SANDBOX_LOCK_DIR")
    saved_env = {name: os.environ.get(name) for name in names}
    saved_constants = {name: getattr(huggingface_hub.constants, name) for name in ("ENDPOINT", "HF_HUB_OFFLINE", "HF_HOME")}
    with tempfile.TemporaryDirectory(prefix="trl-sandbox-bench-") as root:
        os.chmod(root, 0o755)
        fake = FakeHF(Path(root) / "sandboxes")
        (Path(root) / "sandboxes").mkdir()
        os.chmod(Path(root) / "sandboxes", 0o755)
        url = fake.start()
        hf_home = str(Path(root) / "hf-home")  # the SDK's pool cache, not the user's
        os.environ.update({"HF_ENDPOINT": url, "HF_TOKEN": TOKEN, "HF_HOME": hf_home,
                           "TRL_SANDBOX_LOCK_DIR": root})  # the creation pacer's lock file: in root, removed with it
        os.environ.pop("HF_HUB_OFFLINE", None)
        huggingface_hub.constants.ENDPOINT = url
        huggingface_hub.constants.HF_HUB_OFFLINE = False
        huggingface_hub.constants.HF_HOME = hf_home
        fake.latency_s = latency
        progress(f"hf backend through its fake: {completions} completions, pool {pool_size}")
        try:
            scorer = Scorer.from_config(SandboxConfig(sandbox_backend="hf", sandbox_pool_size=pool_size))
            t0 = time.perf_counter()
            scorer.start()
            start_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            results = scorer.score(tasks, samples)
            span = time.perf_counter() - t0
            scorer.close()
        finally:
            fake.stop()
            for name, value in saved_env.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            for name, value in saved_constants.items():
                setattr(huggingface_hub.constants, name, value)
    assert all(r.passed for r in results), [r for r in results if not r.passed][:2]
    return {"completions": completions, "pool": pool_size, "latency ms": latency * 1000, "pool start s": start_s,
            "makespan s": span, "per completion per slot s": span * pool_size / completions}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--create-latency", type=float, default=0.1)
    parser.add_argument("--exec-latency", type=float, default=0.05)
    parser.add_argument("--completions", type=int, default=256)
    parser.add_argument("--pool-size", type=int, default=32)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-local", action="store_true", help="skip the local backend's creation timing")
    parser.add_argument("--e2b", action="store_true",
                        help="also the e2b backend (real SDK) against tests/fake_e2b.py, with --exec-latency per answer")
    parser.add_argument("--hf", action="store_true",
                        help="also the hf backend (real huggingface_hub client) against tests/fake_hf.py, with "
                             "--exec-latency per answer")
    args = parser.parse_args(argv)

    rows = pool_creation([1, 8, 32, 128], args.create_latency, args.runs)
    if not args.no_local:
        rows += local_creation([1, 4, 16], max(1, args.runs // 2))
    print(f"Pool creation (median of runs)\n\n{table(rows, ['backend', 'sandboxes', 'runs', 'seconds', 'x one creation'])}\n")
    row = makespan(args.completions, args.pool_size, args.create_latency, args.exec_latency, args.runs)
    columns = ["completions", "pool", "exec latency ms", "runs", "makespan s", "ideal s", "x ideal",
               "round trips per completion"]
    print(f"Scoring makespan, mock backend as a remote one (median of runs)\n\n{table([row], columns)}")
    if args.e2b:
        row = e2b_through_fake(args.completions, min(args.pool_size, 16), args.exec_latency)
        columns = ["completions", "pool", "latency ms", "pool start s", "makespan s", "per completion per slot s"]
        print(f"\ne2b backend through its fake (real SDK, one run)\n\n{table([row], columns)}")
    if args.hf:
        row = hf_through_fake(args.completions, min(args.pool_size, 16), args.exec_latency)
        columns = ["completions", "pool", "latency ms", "pool start s", "makespan s", "per completion per slot s"]
        print(f"\nhf backend through its fake (real huggingface_hub client, one run)\n\n{table([row], columns)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
