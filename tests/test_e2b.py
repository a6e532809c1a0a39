"""The e2b backend: the real ``e2b`` SDK (``AsyncSandbox``) against a local fake of E2B's API and of envd
(``fake_e2b.py``), configured through the SDK's own environment variables (``E2B_API_URL``, ``E2B_SANDBOX_URL``,
``E2B_HTTP_VERSION``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest

pytest.importorskip("e2b")

from trl_sandbox import ConfigurationError, SandboxConfig, Scorer, Task, load_tasks  # noqa: E402
from trl_sandbox.backends.e2b import E2BBackend  # noqa: E402
from trl_sandbox.errors import SandboxCreationError  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _remote_attacks import (  # noqa: E402
    check_a_daemon_dies_with_its_completion,
    check_an_unremovable_request_runs_nothing,
    check_forged_records_are_never_paid,
    check_the_program_never_sees_the_services_environment,
    check_the_request_cannot_be_stolen,
)
from _fake_service import humaneval_spread  # noqa: E402
from fake_e2b import FakeE2B  # noqa: E402
from test_hostile import host  # noqa: E402,F401 - a fixture

HE = {r["task_id"]: r for r in load_tasks("humaneval")}
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def fake(sandbox_root):
    server = FakeE2B(sandbox_root)
    server.start()
    yield server
    server.stop()


def _sdk_env(url: str) -> dict[str, str]:
    return {"E2B_API_KEY": "test-key", "E2B_API_URL": url, "E2B_SANDBOX_URL": url, "E2B_HTTP_VERSION": "1.1"}


@pytest.fixture
def service(fake, monkeypatch):
    """The fake, reset, configured through the SDK's own environment variables."""
    fake.requests.clear()
    fake.rate_limit_creates = fake.fail_execs = 0
    fake.fail_creates_after = fake.max_running = None
    fake.create_delay_s = fake.register_delay_s = fake.latency_s = 0.0
    fake.vanish_next_exec = False
    fake.read_only_workdir = False
    for name, value in _sdk_env(fake.url).items():
        monkeypatch.setenv(name, value)
    yield fake
    left = fake.reap()  # deleted now: the next test starts clean, only this one fails
    assert left == [], f"this test left sandboxes on the fake service: {left}"


def config(**overrides):
    options = overrides.pop("options", {})
    return SandboxConfig(sandbox_backend="e2b", sandbox_backend_options=options, **overrides)


def test_missing_api_key_is_one_clear_error_before_anything_starts(monkeypatch):
    monkeypatch.delenv("E2B_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="E2B_API_KEY") as info:
        Scorer.from_config(config())
    assert "\n" not in str(info.value)
    with pytest.raises(ConfigurationError, match="unknown option .templat. for the e2b backend"):
        Scorer.from_config(config(options={"api_key": "k", "templat": "base"}))


def test_a_refused_key_is_a_configuration_error(service, monkeypatch):
    monkeypatch.setenv("E2B_API_KEY", "wrong-key")
    with pytest.raises((ConfigurationError, SandboxCreationError), match="E2B_API_KEY"):
        Scorer.from_config(config(sandbox_pool_size=1)).start()


def test_metadata_backstop_and_scoring_then_every_sandbox_is_killed(service):
    task = Task.from_row(HE["HumanEval/0"])
    with Scorer.from_config(config(sandbox_pool_size=2)) as scorer:
        ok, bad = scorer.score([task, task], [HE["HumanEval/0"]["canonical_solution"],
                                              "    print('debug line')\n    return False\n"])
        assert scorer.pool.backend.describe().startswith("e2b (")
    assert ok.status == "passed" and bad.status == "failed", (ok, bad)
    assert "debug line" in bad.output
    bodies = service.bodies("POST", "/v2/sandboxes")
    assert len(bodies) == 2
    for body in bodies:
        assert body["metadata"]["trl-sandbox"] == "true" and body["metadata"]["trl-sandbox-pid"] == str(os.getpid())
        assert {"trl-sandbox-run", "trl-sandbox-rank", "trl-sandbox-created"} <= set(body["metadata"])
        assert body["timeout"] == 900 and body["allow_internet_access"] is False
        assert "test-key" not in json.dumps(body.get("envVars") or {})  # the key never goes into the sandbox
    assert sorted(service.deleted[-2:]) == sorted(service.created[-2:])


def test_humaneval_canonical_solutions_pass(service):
    """Canonical solutions of a spread of HumanEval (:func:`humaneval_spread`): all pass through the fake E2B."""
    rows = humaneval_spread(HE.values())
    tasks = [Task.from_row(r) for r in rows]
    with Scorer.from_config(config(sandbox_pool_size=8)) as scorer:
        results = scorer.score(tasks, [r["canonical_solution"] for r in rows])
    failed = [(t.task_id, r.status, r.output[-300:]) for t, r in zip(tasks, results) if r.status != "passed"]
    assert failed == [] and len(results) == 41


def test_rate_limits_and_the_concurrency_cap_are_retried(service):
    service.rate_limit_creates = 2
    with Scorer.from_config(config(sandbox_pool_size=1)) as scorer:
        assert scorer.pool.backend.stats["rate_limited"] == 2
        (result,) = scorer.score([Task.from_row(HE["HumanEval/2"])], [HE["HumanEval/2"]["canonical_solution"]])
        assert result.status == "passed"
    # the free tier's cap: a pool larger than the cap cannot start, and leaves nothing behind. Unpaced, the three
    # creations run at once: the fake counts the ones under way against its cap
    service.max_running = 2
    with pytest.raises(SandboxCreationError):
        Scorer.from_config(config(sandbox_pool_size=3, options={"max_retries": 1, "max_creates_per_s": 1000})).start()
    assert service.alive == []


def test_a_failing_pool_creation_leaks_nothing(service):
    service.fail_creates_after = len(service.created) + 2
    with pytest.raises(SandboxCreationError) as info:
        Scorer.from_config(config(sandbox_pool_size=4)).start()
    assert "quota" in str(info.value) and service.alive == []


@pytest.mark.parametrize("knob", ["create_delay_s", "register_delay_s"])
def test_a_slow_creation_past_the_deadline_leaves_no_sandbox(service, knob):
    """The pool gives up on its creations at 1 s: the service made them (``create_delay_s``: the sandbox exists, the
    answer is late) or makes them only later (``register_delay_s``: the first sweep finds nothing), and either way
    they are found by their labels and deleted before ``start`` raises."""
    setattr(service, knob, 2.5)
    before = len(service.created)
    with pytest.raises(SandboxCreationError, match="timed out"):
        Scorer.from_config(config(sandbox_pool_size=2, sandbox_create_timeout=1.0)).start()
    assert len(service.created) > before and service.alive == []


def test_faults_during_execution_are_never_a_wrong_answer(service, caplog):
    task = Task.from_row(HE["HumanEval/2"])
    right = HE["HumanEval/2"]["canonical_solution"]
    with Scorer.from_config(config(sandbox_pool_size=1, options={"max_retries": 1})) as scorer:
        service.fail_execs = 1  # one 502 from the proxy: retried
        (first,) = scorer.score([task], [right])
        service.fail_execs = 1000  # keeps failing: infra error, reward None
        (second,) = scorer.score([task], [right])
        service.fail_execs = 0
        service.vanish_next_exec = True  # the sandbox disappears mid-command
        (third,) = scorer.score([task], [right])
        (fourth,) = scorer.score([task], [right])  # the pool replaced it
    assert first.status == "passed"
    assert second.status == "infra_error" and second.reward is None
    # the vanished sandbox is an infrastructure error (SandboxNotRunningException), retried by the scorer on a
    # fresh sandbox: right, never wrong
    assert third.status == "passed" and third.retries == 1, third
    assert fourth.status == "passed"
    assert "SandboxNotRunningException" in caplog.text and len(service.alive) == 0


def test_a_test_past_its_time_limit_is_a_timeout(service):
    task = Task.from_row({"task_id": "sleepy", "test_list": ["assert f() == 1"]})
    slow = "import time\ndef f():\n    time.sleep(30)\n    return 1\n"
    with Scorer.from_config(config(sandbox_pool_size=1, sandbox_test_timeout=1.0,
                                   sandbox_completion_timeout=2.0)) as scorer:
        (result,) = scorer.score([task], [slow])
    assert result.status == "timeout" and result.reward == -1.0


def test_hostile_programs_are_contained(service, host):  # noqa: F811 - the fixture imported above
    """The Python attack suite of ``test_hostile`` through E2B's process API: every attack scores nothing, the good
    completions among them pass, nothing of the host leaks into a result."""
    from test_hostile import ATTACKS, GOOD, SOURCE_MARKER

    tasks = [task for _n, task, _t, _b in ATTACKS] + [task for task, _c in GOOD]
    completions = [host.fill(template) for _n, _task, template, _b in ATTACKS] + [code for _t, code in GOOD]
    with Scorer.from_config(config(sandbox_pool_size=2, sandbox_test_timeout=1.0, sandbox_completion_timeout=4.0,
                                   sandbox_output_limit=64 << 10)) as scorer:
        results = scorer.score(tasks, completions)
    failures = []
    for (name, _task, _template, banned), result in zip(ATTACKS, results):
        if result.passed or (result.reward is not None and result.reward > 0):
            failures.append(f"{name}: scored {result.status} {result.reward} ({result.error})")
        if banned and result.status != "banned":
            failures.append(f"{name}: expected banned, got {result.status}")
        for leak in (host.secret, SOURCE_MARKER, "root:x:0:0"):
            if leak in (result.error or ""):
                failures.append(f"{name}: leaked {leak[:20]!r}")
    assert [r.status for r in results[len(ATTACKS):]] == ["passed"] * len(GOOD)
    failures += host.problems()
    assert not failures, "\n".join(failures)


def test_a_program_past_its_cpu_limit_times_out_where_the_sandbox_shows_its_hosts_proc(service):
    """The harness here runs in a local sandbox whose ``/proc`` is its host's, where the pid its fork returned names
    another process. Before: the judge read that process's CPU time, so a program computing 2 CPU-seconds against a
    1 s limit was cut only at the 3 s wall-clock backstop, or passed when it ended before it (a slow solution paid).
    The worker is now named through its pidfd: its own CPU time cuts it."""
    task = Task.from_row({"task_id": "spin", "test_list": ["assert f() == 1"]})
    spin = "import time\ndef f():\n    t = time.process_time()\n    while time.process_time() - t < {}:\n" \
           "        pass\n    return 1\n"
    with Scorer.from_config(config(sandbox_pool_size=2, sandbox_test_timeout=1.0,
                                   sandbox_completion_timeout=8.0)) as scorer:
        over, within = scorer.score([task, task], [spin.format(2.0), spin.format(0.2)])
    assert over.status == "timeout" and over.reward == -1.0, over
    assert within.status == "passed", within


SIGNAL_SCRIPT = textwrap.dedent("""
    import time
    from trl_sandbox import SandboxConfig, Scorer
    scorer = Scorer.from_config(SandboxConfig(sandbox_backend="e2b", sandbox_pool_size=2)).start()
    print("ready", flush=True)
    time.sleep(120)
""")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_kills_every_sandbox(service, signum):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", SIGNAL_SCRIPT], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        assert len(service.alive) == 2
        proc.send_signal(signum)
        proc.wait(60)
    finally:
        proc.kill()
    assert proc.returncode == -signum, proc.stderr.read()
    assert service.alive == []


EXIT_SCRIPT = textwrap.dedent("""
    import os
    from trl_sandbox import SandboxConfig, Scorer
    scorer = Scorer.from_config(SandboxConfig(sandbox_backend="e2b", sandbox_pool_size=2)).start()
    print(len(scorer.pool.live_sandboxes()), flush=True)
    for name in ("E2B_API_URL", "E2B_SANDBOX_URL", "E2B_HTTP_VERSION"):
        del os.environ[name]  # as a test's monkeypatch restores them: the SDK alone would now call E2B itself
    # the pool is left open: the interpreter-exit backstop deletes its sandboxes
""")


def test_the_exit_backstop_deletes_where_the_sandboxes_were_created(service):
    """Once the environment that pointed the SDK at the fake is gone, the backstop at interpreter exit deletes on the
    fake all the same (the backend's ``endpoint``), never on E2B's real API."""
    before = len(service.created)
    result = subprocess.run([sys.executable, "-c", EXIT_SCRIPT], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 0 and result.stdout.strip() == "2", result.stderr
    assert len(service.created) == before + 2 and service.alive == [], result.stderr
    assert sorted(service.deleted[-2:]) == sorted(service.created[-2:])
    assert "e2b.app" not in result.stderr and "network guard" not in result.stderr, result.stderr


def test_what_a_test_leaves_on_the_fake_is_deleted_before_the_next_one(service):
    """``FakeService.reap``, which the ``service`` fixture calls after each test: a sandbox left on purpose is deleted
    (the fixture then fails the test that left it; here, it finds nothing)."""
    backend = E2BBackend()

    async def leave_one() -> str:
        await backend.start()
        try:
            return (await backend.create({"trl-sandbox": "true"})).id
        finally:
            await backend.aclose()

    left = anyio.run(leave_one)
    assert service.alive == [left]
    assert service.reap() == [left] and service.alive == [] and service.deleted[-1] == left
    assert service.reap() == []


def test_an_exception_while_the_pool_is_open_kills_every_sandbox(service):
    with pytest.raises(RuntimeError, match="boom"), Scorer.from_config(config(sandbox_pool_size=2)):
        assert len(service.alive) == 2
        raise RuntimeError("boom")
    assert service.alive == []


def cleanup(*args):
    return subprocess.run([sys.executable, "-m", "trl_sandbox.cli", "cleanup", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})


def test_cleanup_finds_and_kills_a_killed_runs_sandboxes(service):
    from test_daytona import dead_pid, labels_of

    backend = E2BBackend()

    async def make(labels):
        await backend.start()
        try:
            return (await backend.create(labels)).id
        finally:
            await backend.aclose()

    dead = anyio.run(make, labels_of("dead-run", pid=dead_pid()))
    live = anyio.run(make, labels_of("live-run"))
    with Scorer.from_config(config(sandbox_pool_size=1, sandbox_sweep_orphans=True)) as scorer:
        assert scorer.pool.stats.orphans_deleted == 1
    assert dead not in service.alive and live in service.alive
    old = anyio.run(make, labels_of("old-run", host="elsewhere", age_s=3 * 86400))
    dry = cleanup("--backend", "e2b", "--older-than", "24h", "--dry-run")
    assert dry.returncode == 0 and old in dry.stdout and live not in dry.stdout, dry.stderr
    done = cleanup("--backend", "e2b", "--older-than", "24h")
    assert done.returncode == 0 and "deleted 1" in done.stderr and old not in service.alive, done.stderr
    by_run = cleanup("--backend", "e2b", "--run-id", "live-run")
    assert by_run.returncode == 0 and "deleted 1" in by_run.stderr and service.alive == []


def test_code_environment_sessions_run_through_the_process_stream(service, caplog):
    from test_environment import check_remote_sessions

    check_remote_sessions(config, service, caplog)
    starts = [b for b in service.bodies("POST", "/process.Process/Start") if b["stdin"]]
    assert starts and all("harness" in b["command"] and " session" in b["command"] for b in starts)
    assert service.interactive == {}


def test_the_timeout_backstop_is_re_armed_while_the_pool_uses_a_sandbox(service):
    """E2B's ``timeout`` is a lifetime: once half of it has passed, the next command re-arms it first."""
    backend = E2BBackend(timeout_s=120)

    async def run():
        await backend.start()
        sandbox = await backend.create({"trl-sandbox": "true"})
        try:
            first = await backend.exec(sandbox, ["true"], timeout_s=5)
            sandbox.data["armed"] -= 61  # more than half of the 120 s has passed
            second = await backend.exec(sandbox, ["sh", "-c", "echo out; echo err >&2; exit 3"], timeout_s=5)
            late = await backend.exec(sandbox, ["sleep", "10"], timeout_s=1)
        finally:
            await backend.delete(sandbox)
            await backend.aclose()
        return first, second, late

    first, second, late = anyio.run(run)
    assert first.exit_code == 0 and backend.stats["timeouts_extended"] == 1
    assert service.bodies("POST", "/sandboxes/timeout") == [{"timeout": 120}]
    assert (second.exit_code, second.stdout, second.stderr) == (3, b"out\n", b"err\n")
    assert late.timed_out and late.exit_code is None and late.duration_s < 5


def test_a_batch_under_every_fault_has_zero_mis_scored_and_zero_leaks(service):
    """429s at creation, 502s and a vanishing sandbox during the batch, with latency: every result is either the
    right verdict or an infrastructure error (reward None); nothing is left on the service."""
    rows = list(HE.values())[:40]
    tasks = [Task.from_row(r) for r in rows]
    completions = [r["canonical_solution"] if i % 2 == 0 else "    return None\n" for i, r in enumerate(rows)]
    service.latency_s = 0.01
    service.rate_limit_creates = 3
    with Scorer.from_config(config(sandbox_pool_size=4, options={"max_retries": 2})) as scorer:
        service.fail_execs = 3
        service.vanish_next_exec = True
        results = scorer.score(tasks, completions)
    mis_scored = [(t.task_id, r.status) for i, (t, r) in enumerate(zip(tasks, results))
                  if r.reward is not None and r.passed != (i % 2 == 0)]
    assert mis_scored == []
    assert sum(r.reward is None for r in results) <= 4  # the scorer's retry absorbs most faults
    assert service.fail_execs == 0 and not service.vanish_next_exec  # the faults did happen


SESSION_SIGNAL_SCRIPT = textwrap.dedent("""
    import json, sys, time
    from trl_sandbox import CodeEnvironment, SandboxConfig
    config = SandboxConfig(sandbox_backend="e2b", sandbox_pool_size=1)
    row = json.loads(sys.argv[1])
    with CodeEnvironment.factory(config) as make_env:
        envs = [make_env(), make_env()]
        for env in envs:
            env.reset(**row)
            env.python("x = 1")
        print("ready", flush=True)
        time.sleep(120)  # mid-rollout: two sessions open
""")


def test_sigterm_mid_rollout_kills_the_session_sandboxes(service):
    from test_languages import ROW

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", SESSION_SIGNAL_SCRIPT, json.dumps(ROW)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        assert len(service.alive) == 3 and len(service.interactive) == 2
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    finally:
        proc.kill()
    assert proc.returncode == -signal.SIGTERM, proc.stderr.read()
    assert service.alive == [] and service.interactive == {}


def test_compiled_languages_run_through_the_remote_harness(service):
    """C++ and Java completions through E2B's process API (see ``test_languages.check_remote_languages``)."""
    from test_languages import check_remote_languages

    check_remote_languages(config)


def test_sdk_errors_are_classified(monkeypatch):
    """How each of the SDK's errors is treated: retried with backoff, a configuration error, or not retried."""
    import e2b

    from trl_sandbox.backends._remote import BACKOFF

    monkeypatch.setenv("E2B_API_KEY", "k")
    backend = E2BBackend()
    quota = e2b.SandboxException("403: Team quota exceeded")
    quota.status_code = 403
    server = e2b.SandboxException("500: internal")
    server.status_code = 500
    for retried in (e2b.RateLimitException("429: Rate limit exceeded"), e2b.ServiceBusyException("503"),
                    e2b.SandboxUnreachableException("unknown state"), ConnectionError("refused"), server):
        assert backend._classify(retried) == BACKOFF, retried
    for final in (e2b.SandboxNotFoundException("gone"), e2b.SandboxNotRunningException("killed"), quota,
                  e2b.TimeoutException("deadline")):
        assert backend._classify(final) is None, final
    with pytest.raises(ConfigurationError, match="E2B_API_KEY"):
        backend._classify(e2b.AuthenticationException("401: Unauthorized"))
    assert backend.stats["rate_limited"] == 1


# -- training through the fake service ----------------------------------------------------------------------------


def test_a_trainer_step_scores_its_rewards_on_e2b_sandboxes_and_leaves_none(service, tiny_model_dir, tmp_path,
                                                                            monkeypatch):
    from datasets import Dataset

    from trl_sandbox import SandboxGRPOConfig, SandboxGRPOTrainer, code_reward

    run = "e2b-trainer-run"
    monkeypatch.setenv("TRL_SANDBOX_RUN_ID", run)
    row = {"task_id": "t0", "prompt": "Write f0.", "test_list": ["assert f0() == 0"] * 2}
    seen = []

    def reward(completions, **kwargs):
        # the tiny model writes random tokens: score a right answer instead, through the trainer's (active) pool
        rewards = code_reward(["def f0():\n    return 0\n"] * len(completions), **kwargs)
        pool = trainer.scorer.pool
        seen.append({"rewards": rewards, "backend": pool.backend.name, "alive": list(service.alive),
                     "labels": [dict(s.labels) for s in pool.live_sandboxes()]})
        return rewards

    args = SandboxGRPOConfig(
        output_dir=str(tmp_path / "out"), use_cpu=True, bf16=False, report_to="none", per_device_train_batch_size=4,
        num_generations=2, max_completion_length=8, max_steps=1, logging_steps=1, save_strategy="no",
        sandbox_backend="e2b", sandbox_pool_size=2,
    )  # fmt: skip
    trainer = SandboxGRPOTrainer(model=tiny_model_dir, reward_funcs=[reward], args=args,
                                 train_dataset=Dataset.from_list([row] * 4))
    assert service.alive == [] and service.bodies("POST", "/v2/sandboxes") == []  # nothing before training begins
    trainer.train()
    assert trainer.state.global_step == 1
    assert len(seen) == 1 and seen[0]["rewards"] == [1.0] * 4, seen
    assert seen[0]["backend"] == "e2b" and len(seen[0]["alive"]) == 2 and len(seen[0]["labels"]) == 2, seen
    assert all(labels["trl-sandbox-run"] == run and labels["trl-sandbox-rank"] == "0" for labels in seen[0]["labels"])
    bodies = service.bodies("POST", "/v2/sandboxes")
    assert len(bodies) == 2 and all(body["metadata"]["trl-sandbox-run"] == run for body in bodies)
    assert trainer.scorer.status_counts["completions"] == 4
    assert service.alive == []  # train() returned: the pool's sandboxes are gone
    assert sorted(service.deleted[-2:]) == sorted(service.created[-2:])


def test_closing_leaves_no_pacing_lock_file(service, monkeypatch, tmp_path):
    from test_daytona import check_no_pacing_lock_file_is_left

    check_no_pacing_lock_file_is_left(config, monkeypatch, tmp_path)


# -- what the harness holds on a remote sandbox: the request, the processes, the environment (see _remote_attacks.py)


def test_a_program_cannot_read_the_request(service):
    check_the_request_cannot_be_stolen(config)


def test_a_request_file_the_harness_cannot_remove_runs_nothing(service):
    check_an_unremovable_request_runs_nothing(config, service)


def test_a_daemon_dies_with_its_completion_and_never_reads_the_next_request(service):
    check_a_daemon_dies_with_its_completion(config)


def test_the_program_never_sees_the_services_environment(service):
    check_the_program_never_sees_the_services_environment(config)


def test_records_a_program_writes_into_the_commands_output_are_never_paid(service):
    check_forged_records_are_never_paid(config)
