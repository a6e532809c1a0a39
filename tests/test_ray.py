"""The ray backend on a real Ray cluster (``ray.cluster_utils.Cluster``: a head and two worker nodes as separate raylets
on this machine, the workers carrying a ``sandbox`` resource), no mocks: scoring across nodes, listing and cleanup,
an actor killed mid-batch, the driver SIGKILLed, a hostile program, a ``SandboxGRPOTrainer`` step, two training
processes sharing the cluster, and the errors of a missing or unreachable cluster."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import anyio
import pytest

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

from trl_sandbox import (  # noqa: E402
    CodeEnvironment, ConfigurationError, InfrastructureError, SandboxConfig, Scorer, Task, load_tasks,
)
from trl_sandbox.backends import get_backend  # noqa: E402
from trl_sandbox.backends.ray import RayBackend  # noqa: E402
from trl_sandbox.lifecycle import CREATED_FORMAT  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
NAMESPACE = "trl-sandbox-test"
HE = load_tasks("humaneval")
SQUARE = Task.from_row({"task_id": "square", "test_list": ["assert f(2) == 4", "assert f(3) == 9"]})
SQUARE_OK = "def f(x):\n    return x * x\n"
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
ENV.pop("RAY_ADDRESS", None)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (dead, not yet reaped by its parent) is gone for our purpose
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _cluster_pids(cluster: Cluster) -> set[int]:
    pids = set()
    for node in [cluster.head_node, *cluster.worker_nodes]:
        for infos in node.all_processes.values():
            for info in infos:
                pids.add(info.process.pid)
    return pids


@pytest.fixture(scope="module")
def cluster():
    """A head of 1 CPU (no sandbox resource) and two worker nodes of 1 CPU and 2 ``sandbox`` each; this process
    joined as a driver. At the end, no process of the cluster (raylets, GCS, actor workers) is left."""
    # Started as docs/backends.md advises (workers at nice 0, not Ray's 15; every raylet reads it, those of the
    # nodes tests add included): beside CI's busy processes, a pool of 4 actors started in 5 s instead of 15 s (21 s
    # before the actor set its own threads to nice 0).
    with pytest.MonkeyPatch.context() as env:
        env.setenv("RAY_worker_niceness", "0")
        c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
        workers = [c.add_node(num_cpus=1, resources={"sandbox": 2}) for _ in range(2)]
        c.wait_for_nodes()
        ray.init(address=c.address, namespace=NAMESPACE, logging_level="WARNING")
        c.actor_pids = set()  # actor processes seen by the tests: checked gone at the end too
        c.sandbox_nodes = {n.node_id for n in workers}
        pids = _cluster_pids(c)
        try:
            yield c
        finally:
            ray.shutdown()
            c.shutdown()
            deadline = time.monotonic() + 20
            left = [p for p in pids | c.actor_pids if _alive(p)]
            while left and time.monotonic() < deadline:
                time.sleep(0.2)
                left = [p for p in left if _alive(p)]
            assert not left, f"ray processes left after the cluster's shutdown: {left}"


def config(cluster, **overrides):
    options = {"address": cluster.address, "num_cpus": 0.5, "resources": {"sandbox": 1},
               **overrides.pop("options", {})}
    return SandboxConfig(sandbox_backend="ray", sandbox_backend_options=options, **overrides)


def _actors(label: str, value: str) -> list[str]:
    from trl_sandbox.backends.ray import _decode_name

    names = []
    for entry in ray.util.list_named_actors(all_namespaces=True):
        decoded = _decode_name(entry["name"])
        if decoded and decoded[1].get(label) == value:
            names.append(entry["name"])
    return names


def test_humaneval_canonical_solutions_pass_on_sandboxes_spread_over_the_nodes(cluster):
    # 4 sandboxes of 0.5 CPU: more than one node's CPUs; the "sandbox" resource keeps them off the head
    with Scorer.from_config(config(cluster, sandbox_pool_size=4)) as scorer:
        sandboxes = scorer.pool.live_sandboxes()
        cluster.actor_pids |= {s.data["pid"] for s in sandboxes}
        nodes = {s.data["node_id"] for s in sandboxes}
        assert len(nodes) == 2 and nodes == cluster.sandbox_nodes, nodes
        # the actors run where Ray says, and each reports the node it is on
        assert {ray.get(s.data["actor"].node_id.remote()) for s in sandboxes} == nodes
        results = scorer.score([Task.from_row(r) for r in HE], [r["prompt"] + r["canonical_solution"] for r in HE])
        assert sum(r.passed for r in results) == 164, [(r.task_id, r.status, r.error) for r in results
                                                       if not r.passed][:3]
        assert "local backend" in scorer.pool.backend.describe() and "landlock" in scorer.pool.backend.describe()
        run = scorer.pool.labels["trl-sandbox-run"]
        assert len(_actors("trl-sandbox-run", run)) == 4
    assert _actors("trl-sandbox-run", run) == []  # closing the pool killed its actors


def _labels(run: str, pid: int) -> dict[str, str]:
    import socket

    return {"trl-sandbox": "true", "trl-sandbox-run": run, "trl-sandbox-rank": "0",
            "trl-sandbox-host": socket.gethostname(), "trl-sandbox-pid": str(pid),
            "trl-sandbox-created": time.strftime(CREATED_FORMAT, time.gmtime())}


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.skipif(os.geteuid() != 0, reason="lowering a niceness needs root (CAP_SYS_NICE)")
def test_an_actor_at_rays_worker_niceness_runs_every_thread_at_nice_0():
    """Ray starts its workers at nice 15 (1/29 of an ordinary process's weight); the actor sets each thread of its
    process, those Ray started before it included, back to nice 0 (``_ray_actor.ordinary_priority``)."""
    script = textwrap.dedent("""
        import json, os, threading, time
        stop = threading.Event()
        threads = [threading.Thread(target=stop.wait) for _ in range(3)]
        for t in threads:
            t.start()
        from trl_sandbox.backends._ray_actor import ordinary_priority
        ordinary_priority()
        late = threading.Thread(target=stop.wait)
        late.start()
        nices = [int(open(f"/proc/self/task/{tid}/stat").read().rsplit(")", 1)[1].split()[16])
                 for tid in os.listdir("/proc/self/task")]
        stop.set()
        print(json.dumps(nices))
    """)
    out = subprocess.run(["nice", "-n", "15", sys.executable, "-c", script], capture_output=True, text=True, env=ENV,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    nices = json.loads(out.stdout)
    assert len(nices) == 5 and set(nices) == {0}, nices


def test_list_and_the_cleanup_command_delete_a_dead_runs_actors_never_a_live_runs(cluster):
    backend = RayBackend(address=cluster.address, num_cpus=0.5, resources={"sandbox": 1})

    async def make():
        await backend.start()
        dead = await backend.create(_labels("dead-run", _dead_pid()))
        live = await backend.create(_labels("live-run", os.getpid()))  # this process: a live run
        listed = {s.id: s.labels for s in await backend.list({"trl-sandbox": "true"})}
        return dead, live, listed

    dead, live, listed = anyio.run(make)
    cluster.actor_pids |= {dead.data["pid"], live.data["pid"]}
    assert listed[dead.id]["trl-sandbox-run"] == "dead-run" and listed[live.id]["trl-sandbox-run"] == "live-run"
    assert [s.id for s in anyio.run(backend.list, {"trl-sandbox-run": "live-run"})] == [live.id]

    options = json.dumps({"address": cluster.address})
    done = subprocess.run([sys.executable, "-m", "trl_sandbox.cli", "cleanup", "--backend", "ray", "--backend-options",
                           options], capture_output=True, text=True, timeout=120, env=ENV)
    assert done.returncode == 0 and dead.id in done.stdout and "deleted 1" in done.stderr, done.stderr[-2000:]
    assert _actors("trl-sandbox-run", "dead-run") == [] and len(_actors("trl-sandbox-run", "live-run")) == 1
    deadline = time.monotonic() + 10
    while _alive(dead.data["pid"]) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(dead.data["pid"]) and _alive(live.data["pid"])
    anyio.run(backend.delete, live)
    anyio.run(backend.delete, live)  # deleting one already gone is not an error
    assert _actors("trl-sandbox-run", "live-run") == []


def test_an_actor_killed_mid_batch_is_an_infrastructure_failure_never_a_wrong_answer(cluster):
    tasks = [Task.from_row(r) for r in HE[:40]]
    slow = [f"import time\ntime.sleep(0.15)\n{r['prompt']}{r['canonical_solution']}" for r in HE[:40]]
    with Scorer.from_config(config(cluster, sandbox_pool_size=2)) as scorer:
        victim = scorer.pool.live_sandboxes()[0]
        cluster.actor_pids |= {s.data["pid"] for s in scorer.pool.live_sandboxes()}
        killer = threading.Timer(0.8, lambda: ray.kill(victim.data["actor"], no_restart=True))
        killer.start()
        started = time.monotonic()
        results = scorer.score(tasks, slow)
        killer.join()
        assert time.monotonic() - started < 60
        assert len(results) == 40
        wrong = [(r.task_id, r.status, r.error) for r in results if not r.passed and r.reward is not None]
        assert wrong == [], wrong  # each completion passed (retried on another actor) or has no reward
        assert sum(r.passed for r in results) >= 30
        # the kill hit the batch: a completion retried on another actor, or left without a reward
        assert sum(r.retries for r in results) + sum(r.status == "infra_error" for r in results) >= 1
        assert victim.id not in {s.id for s in scorer.pool.live_sandboxes()}  # the dead actor was dropped
        cluster.actor_pids |= {s.data["pid"] for s in scorer.pool.live_sandboxes()}
        # the pool goes on with a new actor
        assert scorer.score([SQUARE, SQUARE], [SQUARE_OK, SQUARE_OK])[0].passed


def test_a_node_removed_mid_batch_loses_no_result_and_the_batch_finishes(cluster):
    extra = cluster.add_node(num_cpus=1, resources={"sandbox": 2})
    cluster.wait_for_nodes()
    tasks = [Task.from_row(r) for r in HE[:48]]
    slow = [f"import time\ntime.sleep(0.15)\n{r['prompt']}{r['canonical_solution']}" for r in HE[:48]]
    try:
        with Scorer.from_config(config(cluster, sandbox_pool_size=4)) as scorer:
            sandboxes = scorer.pool.live_sandboxes()
            cluster.actor_pids |= {s.data["pid"] for s in sandboxes}
            doomed = [s for s in sandboxes if s.data["node_id"] == extra.node_id]
            assert doomed, "SPREAD placed no sandbox on the third node"
            remover = threading.Timer(0.8, lambda: cluster.remove_node(extra))
            remover.start()
            results = scorer.score(tasks, slow)
            remover.join()
            assert len(results) == 48
            wrong = [(r.task_id, r.status, r.error) for r in results if not r.passed and r.reward is not None]
            assert wrong == [], wrong
            assert sum(r.retries for r in results) + sum(r.status == "infra_error" for r in results) >= 1
            live = scorer.pool.live_sandboxes()
            assert not {s.id for s in doomed} & {s.id for s in live}
            assert all(s.data["node_id"] in cluster.sandbox_nodes for s in live)
            cluster.actor_pids |= {s.data["pid"] for s in live}
    finally:
        if extra in cluster.worker_nodes:
            cluster.remove_node(extra)


DRIVER = textwrap.dedent("""
    import json, sys, time
    from trl_sandbox import SandboxConfig, Scorer
    options = {"address": sys.argv[1], "num_cpus": 0.5, "resources": {"sandbox": 1}}
    scorer = Scorer.from_config(SandboxConfig(sandbox_backend="ray", sandbox_pool_size=2,
                                              sandbox_backend_options=options))
    scorer.start()
    pool = scorer.pool
    print(json.dumps({"run": pool.labels["trl-sandbox-run"], "pids": [s.data["pid"] for s in pool.live_sandboxes()]}),
          flush=True)
    time.sleep(600)
""")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT], ids=["SIGKILL", "SIGTERM", "SIGINT"])
def test_actors_die_with_their_driver_however_it_is_stopped(cluster, sig):
    # SIGKILL: Ray reclaims the actors of a dead driver (they are not detached); SIGTERM and SIGINT: the pool's
    # signal handling and exit handlers close it, or Ray reclaims them: either way, none is left.
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, cluster.address], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        line = driver.stdout.readline()
        assert line, driver.stderr.read()[-2000:]
        info = json.loads(line)
        cluster.actor_pids |= set(info["pids"])
        assert len(_actors("trl-sandbox-run", info["run"])) == 2 and all(map(_alive, info["pids"]))
        driver.send_signal(sig)
        driver.wait(timeout=30)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and (_actors("trl-sandbox-run", info["run"])
                                               or any(map(_alive, info["pids"]))):
            time.sleep(0.25)
        assert _actors("trl-sandbox-run", info["run"]) == [], "named actors outlived their driver"
        assert not any(map(_alive, info["pids"])), "actor processes outlived their driver"
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
        driver.stdout.close()
        driver.stderr.close()


def test_a_driver_that_exits_without_closing_leaves_no_actor_and_joins_no_cluster_again(cluster):
    script = DRIVER.replace("time.sleep(600)", "")  # exits at once: ray's exit handler, then the pool's
    result = subprocess.run([sys.executable, "-c", script, cluster.address], capture_output=True, text=True,
                            timeout=120, env=ENV)
    assert result.returncode == 0, result.stderr[-2000:]
    info = json.loads(result.stdout)
    cluster.actor_pids |= set(info["pids"])
    assert "Connecting to existing Ray cluster" not in result.stderr, result.stderr[-2000:]  # no auto-init at exit
    assert "failed" not in result.stderr, result.stderr[-2000:]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and _actors("trl-sandbox-run", info["run"]):
        time.sleep(0.25)
    assert _actors("trl-sandbox-run", info["run"]) == []


def test_a_full_cluster_is_an_infrastructure_error_not_a_hang(cluster):
    backend = RayBackend(address=cluster.address, resources={"sandbox": 100}, create_timeout_s=2)
    started = time.monotonic()
    with pytest.raises(InfrastructureError, match="no sandbox actor was ready within 2s"):
        anyio.run(backend.create, {"trl-sandbox-run": "too-big"})
    assert time.monotonic() - started < 15
    assert _actors("trl-sandbox-run", "too-big") == []  # the pending actor was killed


FORK_BOMB = "import os\ndef f(x):\n    while True:\n        try:\n            os.fork()\n        except OSError:\n" \
            "            pass\n"
MEMORY_BOMB = "def f(x):\n    a = []\n    while True:\n        a.append(bytearray(8 << 20))\n"


def test_a_fork_bomb_and_a_memory_bomb_are_contained_on_a_ray_sandbox(cluster):
    cfg = config(cluster, sandbox_pool_size=2, sandbox_test_timeout=2.0, sandbox_completion_timeout=10.0)
    with Scorer.from_config(cfg) as scorer:
        cluster.actor_pids |= {s.data["pid"] for s in scorer.pool.live_sandboxes()}
        bomb, memory, good = scorer.score([SQUARE] * 3, [FORK_BOMB, MEMORY_BOMB, SQUARE_OK])
        assert not bomb.passed and bomb.status in ("timeout", "error", "failed", "infra_error"), bomb
        assert not memory.passed and memory.status in ("timeout", "error", "failed", "infra_error"), memory
        assert all(r.reward is None or r.reward <= 0 for r in (bomb, memory))
        assert good.passed
        # the cluster still answers: every node alive, and the sandboxes score again
        assert sum(n["Alive"] for n in ray.nodes()) == 3
        assert all(r.passed for r in scorer.score([SQUARE] * 2, [SQUARE_OK] * 2))


def test_an_interpreter_session_runs_through_the_ray_backend(cluster):
    from test_languages import ROW

    with CodeEnvironment.factory(config(cluster, sandbox_pool_size=1, sandbox_tool_timeout=2.0)) as make_env:
        env = make_env()
        env.reset(**ROW)
        assert env.python("x = 6 * 7\nprint('stored')") == "stored\n"
        assert env.python("x + 1") == "43\n"  # the session keeps its variables between calls
        assert "stopped after the time limit" in env.python("while True:\n    pass")
        assert env.python("x") == "42\n"
        pool = env._bound.pool
        cluster.actor_pids |= {s.data["pid"] for s in pool.live_sandboxes()}
    assert pool.live_sandboxes() == []


def test_an_execution_and_a_session_write_their_own_scratch_slot_only_on_ray(cluster):
    """Finding 3 of the containment review on Ray: the local layers in each actor hold the slots apart (scoring and
    interpreter sessions; see tests/test_hostile.py)."""
    from test_hostile import check_sessions_hold, check_slots_hold

    local = {"scratch_limit_bytes": 16 << 20}
    cfg = config(cluster, sandbox_pool_size=1, sandbox_test_timeout=5.0, sandbox_compile_timeout=30.0,
                 sandbox_max_sessions=1, sandbox_tool_timeout=5.0, options={"local_options": local})
    with Scorer.from_config(cfg) as scorer:
        cluster.actor_pids |= {s.data["pid"] for s in scorer.pool.live_sandboxes()}
        check_slots_hold(scorer)
    with CodeEnvironment.factory(cfg) as make_env:
        pool = check_sessions_hold(make_env)._bound.pool
        cluster.actor_pids |= {s.data["pid"] for s in pool.live_sandboxes()}
    assert pool.live_sandboxes() == []


@pytest.mark.skipif(__import__("shutil").which("g++") is None and os.environ.get("CI") != "true",
                    reason="g++ is not installed (apt-get install g++)")
def test_checker_and_interactive_tasks_are_scored_on_ray(cluster, tmp_path, monkeypatch):
    """A C++ testlib checker and a C++ interactor, compiled once on the driver (statically: the actors' nodes need
    not share its libraries) and run by the judge of each actor's sandbox."""
    from test_checkers import GUESS_ROW, PY_GUESS, sum_row

    monkeypatch.setenv("TRL_SANDBOX_CACHE", str(tmp_path))
    with Scorer.from_config(config(cluster, sandbox_pool_size=2, sandbox_test_timeout=2.0)) as scorer:
        cluster.actor_pids |= {s.data["pid"] for s in scorer.pool.live_sandboxes()}
        checker, guess = Task.from_row(sum_row()), Task.from_row(GUESS_ROW)
        results = scorer.score([checker, checker, guess, guess],
                               ["a, b = map(int, input().split())\nprint(a + b)", "print(3)", PY_GUESS,
                                "print('! 5', flush=True)"])
    assert [(r.status, r.reward) for r in results] == [("passed", 1.0), ("failed", 0.5), ("passed", 1.0),
                                                      ("failed", 0.0)], [r.error for r in results]


def test_a_repository_task_is_scored_in_a_tree_of_its_image_on_the_actors_node(cluster, tmp_path):
    """A SWE-bench 5.0 row on Ray: each actor reads the image from the ``image_cache`` on its node (the test's cache;
    the actors do not see this process's environment) and runs the local backend's tree of it."""
    import _repo_image as R
    from trl_sandbox.rewards import CodeReward

    _, info = R.repo_image(tmp_path)
    row = R.swebench_row(info)
    wrong = info["patch"].replace("+    return sum(xs) / len(xs)", "+    return sum(xs) / (len(xs) + 2)")
    missing = {**row, "image": "example/not-imported:latest"}
    cfg = config(cluster, sandbox_pool_size=2, options={"image_cache": str(R.cache_root() / "images")})
    with CodeReward.from_config(cfg) as reward:
        cluster.actor_pids |= {s.data["pid"] for s in reward.scorer.pool.live_sandboxes()}
        completions = ["```diff\n" + info["patch"] + "```", "```diff\n" + wrong + "```", info["patch"]]
        columns = {key: [row[key], row[key], missing[key]] for key in row}
        results = reward.score(completions, prompts=[row["problem_statement"]] * 3, **columns)
    gold, bad, absent = results
    assert (gold.status, gold.reward, gold.tests_passed) == ("passed", 1.0, 3), gold.error
    assert (bad.status, bad.reward) == ("failed", 0.0), bad.error
    # an image the node lacks is the infrastructure's failure, named with the node and the way to import it
    assert (absent.status, absent.reward) == ("infra_error", None) and "node" in absent.error, absent.error
    assert "PASSED tests/test_calc.py::test_mean" in gold.output


def test_an_unreachable_cluster_is_one_clear_error_and_ray_is_never_started_or_imported_needlessly():
    probe = textwrap.dedent("""
        import sys, anyio
        import trl_sandbox, trl_sandbox.cli, trl_sandbox.backends.ray
        assert "ray" not in sys.modules, "importing trl_sandbox imported ray"
        from trl_sandbox import ConfigurationError
        from trl_sandbox.backends import get_backend
        try:
            anyio.run(get_backend("ray", address="127.0.0.1:1").start)
        except ConfigurationError as exc:
            print(exc)
        import ray
        assert not ray.is_initialized()
    """)
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, env=ENV)
    assert result.returncode == 0, result.stderr[-2000:]
    message = result.stdout.strip()
    assert "\n" not in message and "ray start --head" in message and "127.0.0.1:1" in message, message
    assert time.monotonic() - started < 30

    missing = textwrap.dedent("""
        import sys
        sys.modules["ray"] = None  # as if Ray were not installed
        from trl_sandbox import ConfigurationError, SandboxConfig, Scorer
        try:
            Scorer.from_config(SandboxConfig(sandbox_backend="ray"))
        except ConfigurationError as exc:
            print(exc)
    """)
    result = subprocess.run([sys.executable, "-c", missing], capture_output=True, text=True, timeout=60, env=ENV)
    assert result.stdout.strip() == 'the ray backend needs Ray: pip install "trl-sandbox[ray]"', result.stderr[-2000:]


def test_options_are_checked():
    with pytest.raises(ConfigurationError, match="placement"):
        get_backend("ray", placement="random")
    with pytest.raises(ConfigurationError, match="unknown option"):
        get_backend("ray", adress="x")
    assert get_backend("ray", placement="pack").placement == "pack"


# -- training on the cluster -------------------------------------------------------------------------------------


def test_a_trainer_step_scores_its_rewards_on_ray_actors_and_leaves_none(cluster, tiny_model_dir, tmp_path,
                                                                        monkeypatch):
    from datasets import Dataset

    from trl_sandbox import SandboxGRPOConfig, SandboxGRPOTrainer, code_reward

    run = "ray-trainer-run"
    monkeypatch.setenv("TRL_SANDBOX_RUN_ID", run)
    row = {"task_id": "t0", "prompt": "Write f0.", "test_list": ["assert f0() == 0"] * 2}
    seen = []

    def reward(completions, **kwargs):
        # the tiny model writes random tokens: score a right answer instead, through the trainer's (active) pool
        rewards = code_reward(["def f0():\n    return 0\n"] * len(completions), **kwargs)
        pool = trainer.scorer.pool
        sandboxes = pool.live_sandboxes()
        cluster.actor_pids.update(s.data["pid"] for s in sandboxes)
        seen.append({"rewards": rewards, "actors": _actors("trl-sandbox-run", run), "backend": pool.backend.name,
                     "nodes": {s.data["node_id"] for s in sandboxes}, "pids": [s.data["pid"] for s in sandboxes],
                     "ranks": {s.labels["trl-sandbox-rank"] for s in sandboxes}})
        return rewards

    args = SandboxGRPOConfig(
        output_dir=str(tmp_path / "out"), use_cpu=True, bf16=False, report_to="none", per_device_train_batch_size=4,
        num_generations=2, max_completion_length=8, max_steps=1, logging_steps=1, save_strategy="no",
        sandbox_backend="ray", sandbox_pool_size=2,
        sandbox_backend_options={"address": cluster.address, "num_cpus": 0.5, "resources": {"sandbox": 1}},
    )  # fmt: skip
    trainer = SandboxGRPOTrainer(model=tiny_model_dir, reward_funcs=[reward], args=args,
                                 train_dataset=Dataset.from_list([row] * 4))
    assert _actors("trl-sandbox-run", run) == []  # nothing is created before training begins
    trainer.train()
    assert trainer.state.global_step == 1
    assert len(seen) == 1 and seen[0]["rewards"] == [1.0] * 4, seen
    assert seen[0]["backend"] == "ray" and len(seen[0]["actors"]) == 2 and seen[0]["ranks"] == {"0"}
    assert seen[0]["nodes"] <= cluster.sandbox_nodes
    assert trainer.scorer.status_counts["completions"] == 4
    assert _actors("trl-sandbox-run", run) == []  # train() returned: the pool's actors are gone
    deadline = time.monotonic() + 10
    while any(map(_alive, seen[0]["pids"])) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(map(_alive, seen[0]["pids"]))


RANK_DRIVER = textwrap.dedent("""
    import json, sys
    from trl_sandbox import SandboxConfig, Scorer, Task, load_tasks
    from trl_sandbox.pool import default_labels
    address, run, rank = sys.argv[1], sys.argv[2], int(sys.argv[3])
    options = {"address": address, "num_cpus": 0.5, "resources": {"sandbox": 1}}
    config = SandboxConfig(sandbox_backend="ray", sandbox_pool_size=2, sandbox_backend_options=options,
                           sandbox_sweep_orphans=True)  # the sweep must spare the other (live) process's actors
    scorer = Scorer.from_config(config, labels=default_labels(run, rank=rank)).start()
    pool = scorer.pool
    rows = load_tasks("humaneval")[rank * 20:(rank + 1) * 20]

    def score():
        results = scorer.score([Task.from_row(r) for r in rows], [r["prompt"] + r["canonical_solution"] for r in rows])
        return sum(r.passed for r in results)

    def listed(labels):
        return sorted(s.id for s in pool.run(pool.backend.list, labels, timeout_s=60))

    def report(**extra):
        mine = {"trl-sandbox-run": run, "trl-sandbox-rank": str(rank)}
        print(json.dumps({"live": sorted(s.id for s in pool.live_sandboxes()),
                          "pids": [s.data["pid"] for s in pool.live_sandboxes()],
                          "mine": listed(mine), "own_labels": listed(pool.labels),
                          "run": listed({"trl-sandbox-run": run}), **extra}), flush=True)

    report(passed=score())
    for command in sys.stdin:
        command = command.strip()
        if command == "list":
            report()
        elif command == "score":
            report(passed=score())
        elif command == "close":
            scorer.close()
            import ray
            names = [e["name"] for e in ray.util.list_named_actors(all_namespaces=True)]
            print(json.dumps({"closed": True, "names": names}), flush=True)
        elif command == "exit":
            break
""")


def test_two_training_processes_share_the_cluster_and_never_touch_each_others_actors(cluster):
    from trl_sandbox.backends.ray import _decode_name

    run = "shared-run"  # two ranks of one run: only the rank label tells their actors apart
    procs = [subprocess.Popen([sys.executable, "-c", RANK_DRIVER, cluster.address, run, str(rank)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=ENV) for rank in (0, 1)]

    def ask(proc, command=None):
        if command:
            proc.stdin.write(command + "\n")
            proc.stdin.flush()
        line = proc.stdout.readline()
        if not line:
            proc.kill()
            raise AssertionError(proc.stderr.read()[-3000:])
        return json.loads(line)

    def ranks_of(names):
        return sorted(_decode_name(n)[1]["trl-sandbox-rank"] for n in names if (_decode_name(n) or ("", {}))[1]
                      .get("trl-sandbox-run") == run)

    try:
        first = [ask(p) for p in procs]  # each started its pool (and swept orphans) and scored 20 completions
        for report in first:
            cluster.actor_pids |= set(report["pids"])
            assert report["passed"] == 20, report
        a, b = [ask(p, "list") for p in procs]  # both alive: each lists only its own actors
        assert len(a["live"]) == 2 and len(b["live"]) == 2 and not set(a["live"]) & set(b["live"])
        assert a["mine"] == a["own_labels"] == a["live"] and b["mine"] == b["own_labels"] == b["live"], (a, b)
        assert a["run"] == b["run"] == sorted(a["live"] + b["live"])  # the run's label alone selects both ranks
        assert ranks_of(_actors("trl-sandbox-run", run)) == ["0", "0", "1", "1"]

        closed = ask(procs[0], "close")  # rank 0 closes its pool: rank 1's actors stay, and still score
        assert closed["closed"] and ranks_of(closed["names"]) == ["1", "1"], closed
        assert ranks_of(_actors("trl-sandbox-run", run)) == ["1", "1"]
        deadline = time.monotonic() + 10
        while any(map(_alive, a["pids"])) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(map(_alive, a["pids"])) and all(map(_alive, b["pids"]))
        after = ask(procs[1], "score")
        assert after["passed"] == 20 and after["live"] == b["live"] and after["mine"] == b["live"], after

        ask(procs[1], "close")
        for proc in procs:
            proc.stdin.write("exit\n")
            proc.stdin.flush()
            assert proc.wait(timeout=60) == 0, proc.stderr.read()[-3000:]
        assert _actors("trl-sandbox-run", run) == []
        deadline = time.monotonic() + 10
        while any(map(_alive, a["pids"] + b["pids"])) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(map(_alive, a["pids"] + b["pids"]))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                stream.close()
