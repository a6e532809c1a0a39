"""Repository tasks on the local backend: what a fresh tree costs and what a small instance's scoring costs.

    python benchmarks/repository.py                  # 200 resets, 20 scorings, 1..4 at once
    python benchmarks/repository.py --resets 500 --scorings 40 --at-once 1 2 4 8

Uses the demo image (``trl_sandbox.repos.demo``: Debian bookworm minbase with python3, git, pytest and patch, plus a
small repository at /testbed with a SWE-bench 5.0 row; its Debian layer built with mmdebstrap once and kept in the
trl-sandbox cache directory).
Prints four tables:

1. **Image**: the Debian layer's build time (when this run built it), the import into a fresh cache (seconds, peak
   resident memory of the importing process) and the imported tree's size on disk.
2. **Reset**: one execution of ``/bin/true`` in a fresh tree, the whole round trip from the host (launcher start,
   namespaces, overlay mount, ``pivot_root``, exec, exit, unmount by the namespace's end, directory removal): p50,
   p99, mean (ms); and, for comparison, one launcher round trip without a tree (the single-program path, no fork
   server).
3. **Scoring**: the gold patch of each row kind scored by ``run_task`` (SWE-bench 5.0: tree, history check, ``git
   apply``, the eval script with its ``git checkout``/``git apply`` of the test patch, pytest, grading; SWE-smith,
   R2E-Gym and Harbor by their own steps) against SWE-bench's fixed tests
   run directly in an unpacked copy of the image (``chroot``, as root; otherwise the host's ``python -m pytest`` in a
   copy of the repository), with no tree, no patch step and no grading.
4. **At once**: N gold scorings at once in N sandboxes, per N: wall seconds for the batch, scorings per second, and
   the largest memory cgroup peak of a sandbox (``memory.peak``, or v1's ``memory.max_usage_in_bytes``, where
   cgroups are writable: everything the tree's processes and its upper layer used).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import median, percentile, progress, table  # noqa: E402

from trl_sandbox.caches import cache_dir  # noqa: E402
from trl_sandbox.repos import demo as R  # noqa: E402


def image_table(work: Path) -> list[dict]:
    from trl_sandbox.images import ImageCache

    start = time.perf_counter()
    layer = R.debian_layer(cache_dir())
    built = time.perf_counter() - start
    repo = R.build_repository(work / "repo")
    layout = R.oci_layout(work / "layout", repo, layer)
    code = ("import resource, sys, time; from trl_sandbox.images import ImageCache; t = time.perf_counter(); "
            "ImageCache(sys.argv[1]).import_image(sys.argv[2]); "
            "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code, str(work / "cache"), str(layout)], capture_output=True,
                         text=True, check=True).stdout.split()
    size = subprocess.run(["du", "-sb", str(work / "cache")], capture_output=True, text=True).stdout.split()[0]
    image = ImageCache(work / "cache").list()[0]
    return [{"layer tar (MB)": layer.stat().st_size / 1e6, "built now (s)": built if built > 1 else "cached",
             "import (s)": float(out[0]), "import peak RSS (MB)": int(out[1]) / 1024,
             "cache size (MB)": int(size) / 1e6, "files' bytes (MB)": image.size_bytes / 1e6}]


async def _with_sandboxes(n: int, fn):
    from trl_sandbox.backends.local import LocalBackend

    backend = LocalBackend(fork_server=False, max_host_executions=0)
    await backend.start()
    sandboxes = [await backend.create({"benchmark": "repository"}) for _ in range(n)]
    try:
        return await fn(backend, sandboxes)
    finally:
        for sandbox in sandboxes:
            await backend.delete(sandbox)
        await backend.aclose()


def reset_table(image, resets: int) -> list[dict]:
    async def run(backend, sandboxes):
        [sandbox] = sandboxes
        tree, plain = [], []
        for i in range(resets + 5):
            start = time.perf_counter()
            await backend.exec_in_image(sandbox, image, ["/bin/true"], timeout_s=30)
            middle = time.perf_counter()
            await backend.exec(sandbox, ["/bin/true"], timeout_s=30)
            end = time.perf_counter()
            if i >= 5:  # warm-up left out
                tree.append((middle - start) * 1000)
                plain.append((end - middle) * 1000)
        return tree, plain

    tree, plain = anyio.run(_with_sandboxes, 1, run)
    return [{"execution": name, "n": len(v), "p50 (ms)": percentile(v, 50), "p99 (ms)": percentile(v, 99),
             "mean (ms)": sum(v) / len(v)} for name, v in (("fresh tree of the image", tree),
                                                            ("launcher, no tree", plain))]


def scoring_table(image, info: dict, scorings: int) -> list[dict]:
    from trl_sandbox.repos import read_swebench
    from trl_sandbox.repos.runner import run_task

    from trl_sandbox.repos import read_task

    work = Path(tempfile.mkdtemp())
    harbor = R.harbor_task(work / "calc-mean")
    kinds = [  # (the row's kind, its task, its gold patch)
        ("SWE-bench 5.0", read_swebench(R.swebench_row(info)), info["patch"]),
        ("SWE-smith (bug patch committed, git gc)", read_task(R.swesmith_row(info)), R.swesmith_fix()),
        ("R2E-Gym", read_task(R.r2e_row(info)), info["patch"]),
        ("Harbor (tests/test.sh)", read_task({"task_dir": str(harbor)}), info["patch"]),
    ]

    async def run(backend, sandboxes):
        times: dict[str, list[float]] = {}
        for kind, task, patch in kinds:
            for _ in range(scorings):
                start = time.perf_counter()
                result = await run_task(backend, sandboxes[0], image, task, patch)
                assert result.status == "resolved", result.log[-2000:]
                times.setdefault(kind, []).append(time.perf_counter() - start)
        return times

    scored = anyio.run(_with_sandboxes, 1, run)
    shutil.rmtree(work)
    direct = []
    with tempfile.TemporaryDirectory() as scratch:
        # The same tests run directly in an unpacked copy of the image, with its own interpreter (chroot: root only;
        # otherwise the host's python in a copy of the repository)
        copy = Path(scratch) / "rootfs"
        if os.geteuid() == 0:
            subprocess.run(["cp", "-a", str(image.rootfs), str(copy)], check=True)
            subprocess.run(["mknod", "-m", "666", str(copy / "dev" / "null"), "c", "1", "3"], check=True)
            argv = ["chroot", str(copy), "/bin/sh", "-c",
                    "cd /testbed && python3 -m pytest -q -rA -p no:cacheprovider tests"]
            tree = copy / "testbed"
            label = "chroot into an unpacked copy: python3 -m pytest"
        else:
            tree = copy / "testbed"
            shutil.copytree(image.rootfs / "testbed", tree, symlinks=True)
            argv = [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "tests"]
            label = "host python -m pytest in a copy of the repository"
        (tree / "tests" / "test_calc.py").write_text(R.TESTS_AFTER)
        (tree / "calc" / "__init__.py").write_text(R.FIXED)
        for _ in range(scorings):
            start = time.perf_counter()
            subprocess.run(argv, cwd=tree, capture_output=True, check=True)
            direct.append(time.perf_counter() - start)
    runs = [(f"run_task, {kind}: tree, patch, tests, verdict", v) for kind, v in scored.items()]
    return [{"run": name, "n": len(v), "median (s)": median(v), "p99 (s)": percentile(v, 99)}
            for name, v in (*runs, (label, direct))]


def at_once_table(image, info: dict, levels: list[int]) -> list[dict]:
    from trl_sandbox.repos import read_swebench
    from trl_sandbox.repos.runner import run_task

    task = read_swebench(R.swebench_row(info))
    rows = []
    for n in levels:
        async def run(backend, sandboxes):
            results = [None] * n
            start = time.perf_counter()

            async def one(i):
                results[i] = await run_task(backend, sandboxes[i], image, task, info["patch"])

            async with anyio.create_task_group() as tg:
                for i in range(n):
                    tg.start_soon(one, i)
            wall = time.perf_counter() - start
            peaks = []
            for sandbox in sandboxes:
                for path in backend._cgroups.procs_files(sandbox.id):
                    for name in ("memory.peak", "memory.max_usage_in_bytes"):  # cgroup v2, v1
                        peak = Path(path).with_name(name)
                        if peak.exists():
                            peaks.append(int(peak.read_text()) / 1e6)
            assert all(r.status == "resolved" for r in results)
            return wall, peaks

        wall, peaks = anyio.run(_with_sandboxes, n, run)
        rows.append({"at once": n, "wall (s)": wall, "scorings/s": n / wall,
                     "memory.peak per sandbox (MB)": max(peaks) if peaks else "no cgroup"})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--resets", type=int, default=200)
    parser.add_argument("--scorings", type=int, default=20)
    parser.add_argument("--at-once", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}, uid {os.geteuid()}, "
          f"kernel {os.uname().release}")
    with tempfile.TemporaryDirectory() as work:
        progress("image")
        print("\n## Image\n\n" + table(image_table(Path(work)), ["layer tar (MB)", "built now (s)", "import (s)",
                                                                  "import peak RSS (MB)", "cache size (MB)",
                                                                  "files' bytes (MB)"]))
        from trl_sandbox.images import ImageCache

        image, info = R.demo_image(ImageCache(Path(work) / "cache"), Path(work) / "shared", layers=cache_dir())
        progress("reset")
        print("\n## Reset\n\n" + table(reset_table(image, args.resets), ["execution", "n", "p50 (ms)", "p99 (ms)",
                                                                          "mean (ms)"]))
        progress("scoring")
        print("\n## Scoring\n\n" + table(scoring_table(image, info, args.scorings), ["run", "n", "median (s)",
                                                                                     "p99 (s)"]))
        progress("at once")
        print("\n## At once\n\n" + table(at_once_table(image, info, args.at_once),
                                         ["at once", "wall (s)", "scorings/s", "memory.peak per sandbox (MB)"]))
    print(f"\nmax RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
