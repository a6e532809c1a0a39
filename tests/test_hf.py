"""The hf backend: the real ``huggingface_hub.Sandbox`` client against a local fake of the Jobs API and of the in-job
sandbox server (``fake_hf.py``). Scoring (41 HumanEval tasks), the labels and backstop sent, the token kept out of
the sandbox, faults (429, 500, a sandbox that disappears, a slow start) with nothing mis-scored and nothing leaked,
SIGTERM, ``trl-sandbox cleanup``, the refusal of sessions, a hostile program, the missing token."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import anyio
import pytest

pytest.importorskip("huggingface_hub._sandbox")

from trl_sandbox import ConfigurationError, InfrastructureError, SandboxConfig, Scorer, Task, load_tasks
from trl_sandbox.backends.hf import HFBackend
from trl_sandbox.errors import SandboxCreationError
from trl_sandbox.harness.archive import HARNESS_FILES, HARNESS_NAME

sys.path.insert(0, str(Path(__file__).parent))
from _remote_attacks import (
    STEAL_ASSERT,
    STEAL_ASSERT_PROGRAM,
    check_a_daemon_dies_with_its_completion,
    check_forged_records_are_never_paid,
    check_the_program_never_sees_the_services_environment,
    check_the_request_cannot_be_stolen,
)
from _fake_service import humaneval_spread
from fake_hf import TOKEN, USER, FakeHF
from test_daytona import dead_pid, labels_of

HE = {r["task_id"]: r for r in load_tasks("humaneval")}
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def fake(sandbox_root):
    server = FakeHF(sandbox_root)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def service(fake, monkeypatch, tmp_path):
    """The fake, reset; the SDK pointed at it through its own variables (``HF_ENDPOINT``, ``HF_TOKEN``)."""
    import huggingface_hub.constants

    fake.requests.clear()
    fake.rate_limit_creates = fake.fail_creates = fake.fail_execs = fake.vanish_on_exec = 0
    fake.start_delay_s = fake.latency_s = 0.0
    fake.read_only_workdir = False
    monkeypatch.setenv("HF_ENDPOINT", fake.url)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)  # conftest sets it for the other tests
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", fake.url)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # the SDK's pool cache, not the user's
    monkeypatch.setattr(huggingface_hub.constants, "HF_HOME", str(tmp_path / "hf-home"))
    yield fake
    deadline = time.monotonic() + 15  # a create abandoned at its deadline finishes in its thread
    while fake.running and time.monotonic() < deadline:
        time.sleep(0.1)
    left = fake.reap()  # deleted now: the next test starts clean, only this one fails
    assert left == [], f"this test left jobs or sandboxes on the fake service: {left}"


def config(**overrides):
    options = overrides.pop("options", {})
    return SandboxConfig(sandbox_backend="hf", sandbox_backend_options=options, **overrides)


def test_a_missing_token_is_one_error_naming_hf_token(monkeypatch):
    import huggingface_hub

    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)  # no `hf auth login` file either
    with pytest.raises(ConfigurationError, match="set HF_TOKEN"):
        Scorer.from_config(config())
    with pytest.raises(ConfigurationError, match="unknown option .flavour. for the hf backend; its options: .*flavor"):
        Scorer.from_config(config(options={"token": "t", "flavour": "cpu-basic"}))
    with pytest.raises(ConfigurationError, match="must not carry HF_TOKEN"):
        HFBackend(token="t", env_vars={"HF_TOKEN": "t"})


def test_a_refused_token_is_a_configuration_error(service, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_wrong")
    with pytest.raises(ConfigurationError, match="refused the token"):
        Scorer.from_config(config(sandbox_pool_size=1)).start()


def test_labels_backstop_image_and_no_token_in_the_sandbox_and_every_sandbox_is_deleted(service):
    task = Task.from_row(HE["HumanEval/0"])
    with Scorer.from_config(config(sandbox_pool_size=3)) as scorer:
        ok, bad = scorer.score([task, task], [HE["HumanEval/0"]["canonical_solution"],
                                              "    print('debug line')\n    return False\n"])
        assert scorer.pool.backend.describe().startswith("hf (")
    assert ok.status == "passed" and bad.status == "failed" and "debug line" in bad.output
    specs = service.bodies("POST", "/api/jobs")
    assert len(specs) == 3
    for spec in specs:
        labels = spec["labels"]
        assert labels["trl-sandbox"] == "true" and labels["trl-sandbox-rank"] == "0"
        assert {"trl-sandbox-run", "trl-sandbox-pid", "trl-sandbox-created", "trl-sandbox-version"} <= set(labels)
        assert labels["hf-sandbox"] == "1" and labels["hf-sandbox-mode"] == "dedicated"
        assert spec["environment"]["SBX_IDLE_TIMEOUT"] == "600"  # the server-side backstop
        assert spec["dockerImage"] == "python:3.12" and spec["flavor"] == "cpu-basic"
        assert TOKEN not in json.dumps(spec) and set(spec["secrets"]) == {"SBX_TOKEN"}  # only the derived token
    assert sorted(service.deleted[-3:]) == sorted(service.created[-3:])
    assert len(service.bodies("POST", "/v1/exec")) == 2  # one command per completion
    assert service.bodies("GET", "/api/whoami-v2")  # the namespace was resolved once, checking the token


def test_humaneval_canonical_solutions_all_pass(service):
    """Canonical solutions of a spread of HumanEval (:func:`humaneval_spread`): all pass through the fake HF."""
    rows = humaneval_spread(HE.values())
    tasks = [Task.from_row(r) for r in rows]
    with Scorer.from_config(config(sandbox_pool_size=4)) as scorer:
        results = scorer.score(tasks, [r["canonical_solution"] for r in rows])
    assert [r.task_id for r in results if r.status != "passed"] == []
    assert len(results) == 41


def test_rate_limits_and_server_errors_on_create_are_retried(service):
    service.rate_limit_creates, service.fail_creates = 2, 1
    with Scorer.from_config(config(sandbox_pool_size=1)) as scorer:
        assert scorer.pool.backend.stats["rate_limited"] == 2 and scorer.pool.backend.stats["retries"] == 3
        (result,) = scorer.score([Task.from_row(HE["HumanEval/2"])], [HE["HumanEval/2"]["canonical_solution"]])
    assert result.status == "passed"
    assert len(service.bodies("POST", "/api/jobs")) == 4


def test_creations_that_keep_failing_leak_nothing(service):
    service.rate_limit_creates = 1000
    with pytest.raises(SandboxCreationError):
        Scorer.from_config(config(sandbox_pool_size=2, options={"max_retries": 1})).start()
    service.rate_limit_creates = 0


def test_a_slow_start_past_the_deadline_leaks_nothing(service):
    """The job is made but its server is not ready in time: the SDK's start timeout (the backend's
    ``create_timeout_s``) cancels it; and when the pool's own deadline passes first, the sandbox is found by its
    creation label and deleted."""
    service.start_delay_s = 30.0
    with pytest.raises(SandboxCreationError):
        Scorer.from_config(config(sandbox_pool_size=1, options={"create_timeout_s": 1, "max_retries": 0})).start()
    with pytest.raises(SandboxCreationError, match="timed out"):
        Scorer.from_config(config(sandbox_pool_size=2, sandbox_create_timeout=1.0)).start()
    assert len(service.created) >= 3


def test_exec_faults_are_never_scored_as_wrong_answers(service):
    """503s on executions (retried), executions that keep failing, and a sandbox that disappears: every result is
    a pass or an infrastructure error (reward None), none a wrong answer; nothing is left."""
    rows = [HE[f"HumanEval/{i}"] for i in range(12)]
    tasks = [Task.from_row(r) for r in rows]
    solutions = [r["canonical_solution"] for r in rows]
    with Scorer.from_config(config(sandbox_pool_size=2, options={"max_retries": 2})) as scorer:
        service.fail_execs = 2
        first = scorer.score(tasks, solutions)
        service.fail_execs = 1000
        second = scorer.score(tasks[:2], solutions[:2])
        service.fail_execs = 0
        # one sandbox disappears: a completion is retried once, so two vanishings that both hit the same completion
        # (its try and its retry, as happened under load) would make it an infrastructure error, rightly
        service.vanish_on_exec = 1
        third = scorer.score(tasks, solutions)
    results = first + second + third
    misscored = [r for r in results if r.status not in ("passed", "infra_error")]
    assert misscored == []
    assert all(r.status == "passed" for r in first)
    assert all(r.status == "infra_error" and r.reward is None for r in second)
    assert all(r.reward is None for r in third if r.status == "infra_error")
    # the completion whose sandbox vanished was scored again on a replacement
    assert all(r.status == "passed" for r in third) and service.vanish_on_exec == 0
    assert sum(r.retries for r in third) == 1
    assert sum(job["stage"] == "ERROR" for job in service.jobs.values()) >= 1  # the one that vanished


def test_a_test_past_its_time_limit_is_a_timeout(service):
    task = Task.from_row({"task_id": "sleepy", "test_list": ["assert f() == 1"]})
    slow = "import time\ndef f():\n    time.sleep(30)\n    return 1\n"
    with Scorer.from_config(config(sandbox_pool_size=1, sandbox_test_timeout=1.0,
                                   sandbox_completion_timeout=2.0)) as scorer:
        (result,) = scorer.score([task], [slow])
    assert result.status == "timeout" and result.reward == -1.0


def test_a_hostile_program_is_contained(service):
    """The program looks for the token, floods its output, hangs and kills what it can: it fails or times out,
    the token appears nowhere, and the sandbox is still usable afterwards."""
    task = Task.from_row({"task_id": "hostile", "test_list": ["assert f() == 1"]})
    programs = {
        "token": "import os, glob\ndef f():\n    found = [v for v in os.environ.values() if v.startswith('hf_')]\n"
                 "    found += glob.glob(os.path.expanduser('~/.cache/huggingface/token'))\n"
                 "    print(found, dict(os.environ))\n    return 2\n",
        "flood": "import sys\ndef f():\n    while True:\n        sys.stdout.write('x' * 65536)\n",
        "kill": "import os, signal\ndef f():\n    os.kill(os.getppid(), signal.SIGKILL)\n    os.kill(-1, signal.SIGKILL)\n"
                "    return 1\n",
        "fork": "import os\ndef f():\n    for _ in range(10000):\n        try:\n            os.fork()\n"
                "        except OSError:\n            break\n    return 2\n",
    }
    with Scorer.from_config(config(sandbox_pool_size=1, sandbox_test_timeout=2.0,
                                   sandbox_completion_timeout=4.0)) as scorer:
        results = scorer.score([task] * len(programs), list(programs.values()))
        (after,) = scorer.score([Task.from_row(HE["HumanEval/0"])], [HE["HumanEval/0"]["canonical_solution"]])
    statuses = {name: r.status for name, r in zip(programs, results)}
    assert statuses == {"token": "failed", "flood": "timeout", "kill": "error", "fork": "failed"}, statuses
    for result in results:
        assert TOKEN not in result.output
    assert after.status == "passed"


def test_sessions_are_refused_with_one_clear_line(service):
    backend = HFBackend()
    with pytest.raises(ConfigurationError, match="hf backend cannot keep an interpreter session"):
        anyio.run(lambda: backend.open_process(None, ["python3"], timeout_s=1))


SIGNAL_SCRIPT = textwrap.dedent("""
    import time
    from trl_sandbox import SandboxConfig, Scorer
    scorer = Scorer.from_config(SandboxConfig(sandbox_backend="hf", sandbox_pool_size=2)).start()
    print("ready", flush=True)
    time.sleep(120)
""")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_deletes_every_sandbox(service, signum):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", SIGNAL_SCRIPT], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        assert len(service.running) == 2
        proc.send_signal(signum)
        proc.wait(60)
    finally:
        proc.kill()
    assert proc.returncode == -signum, proc.stderr.read()
    assert service.running == []


def cleanup(*args):
    return subprocess.run([sys.executable, "-m", "trl_sandbox.cli", "cleanup", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})


def test_the_sweep_and_cleanup_find_and_delete_a_killed_runs_sandboxes(service):
    backend = HFBackend()

    async def make(labels):
        await backend.start()
        return (await backend.create(labels)).id

    dead = anyio.run(make, labels_of("dead-run", pid=dead_pid()))
    live = anyio.run(make, labels_of("live-run"))  # this test process: a live sibling run
    old = anyio.run(make, labels_of("old-run", host="elsewhere", age_s=3 * 86400))
    with Scorer.from_config(config(sandbox_pool_size=1, sandbox_sweep_orphans=True)) as scorer:
        assert scorer.pool.stats.orphans_deleted == 1
    assert dead not in service.running and live in service.running and old in service.running

    dry = cleanup("--backend", "hf", "--older-than", "24h", "--dry-run")
    assert dry.returncode == 0 and old in dry.stdout and live not in dry.stdout, dry.stderr
    done = cleanup("--backend", "hf", "--older-than", "24h")
    assert done.returncode == 0 and "deleted 1" in done.stderr and old not in service.running, done.stderr
    by_run = cleanup("--backend", "hf", "--run-id", "live-run")
    assert by_run.returncode == 0 and "deleted 1" in by_run.stderr and service.running == [], by_run.stderr
    listed = [body for body in service.bodies("GET", "/api/jobs")]
    assert all(body["stage"] == ["SCHEDULING", "RUNNING"] for body in listed)
    assert USER  # jobs ran under the token's user (the fake's whoami)


def test_compiled_languages_run_through_the_remote_harness(service):
    """C++ and Java completions through the hf API (see ``test_languages.check_remote_languages``)."""
    from test_languages import check_remote_languages

    check_remote_languages(config)


def test_errors_map_to_typed_errors_with_one_actionable_line():
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled, SandboxError

    from trl_sandbox import InfrastructureError

    backend = HFBackend(token="t", namespace="org")

    def http_error(status, headers=None):
        request = httpx2.Request("POST", "https://huggingface.co/api/jobs/org")
        return HfHubHTTPError("error", response=httpx2.Response(status, headers=headers or {}, request=request))

    assert backend._classify(http_error(429, {"Retry-After": "3"})) == 3.0
    assert backend._classify(http_error(503)) == -1.0 and backend._classify(SandboxError("x", status_code=502)) == -1.0
    assert backend._classify(httpx2.ConnectError("refused")) == -1.0
    assert backend._classify(SandboxError("connection lost while running command")) == -1.0
    assert backend._classify(SandboxError("gone", status_code=404)) is None  # not retried: an infrastructure error
    with pytest.raises(ConfigurationError, match="HF_TOKEN"):
        backend._classify(http_error(401))
    with pytest.raises(InfrastructureError, match="no credits left.*billing"):
        backend._classify(http_error(402))
    with pytest.raises(InfrastructureError, match="Jobs permission for namespace 'org'"):
        backend._classify(http_error(403))
    with pytest.raises(ConfigurationError, match="HF_HUB_OFFLINE"):
        backend._classify(OfflineModeIsEnabled("offline"))


MID_RUN_SCRIPT = textwrap.dedent("""
    from trl_sandbox import SandboxConfig, Scorer, Task
    task = Task.from_row({"task_id": "slow", "test_list": ["assert f() == 1"]})
    slow = "import time\\ndef f():\\n    time.sleep(60)\\n    return 1\\n"
    config = SandboxConfig(sandbox_backend="hf", sandbox_pool_size=2, sandbox_test_timeout=90.0,
                           sandbox_completion_timeout=90.0)
    with Scorer.from_config(config) as scorer:
        scorer.score([task] * 4, [slow] * 4)
""")


def test_sigterm_mid_scoring_deletes_every_sandbox(service):
    """SIGTERM while completions run in the sandboxes (SDK calls blocked in worker threads): the process still ends
    with the signal and every job is cancelled."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", MID_RUN_SCRIPT], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, text=True)
    try:
        deadline = time.monotonic() + 60
        while len(service.bodies("POST", "/v1/exec")) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(service.running) == 2, proc.stderr.read() if proc.poll() is not None else service.running
        time.sleep(0.5)  # the commands are running
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    finally:
        proc.kill()
    assert proc.returncode == -signal.SIGTERM, proc.stderr.read()
    assert service.running == []



def test_pool_mode_packs_sandboxes_on_a_host_job_and_cancels_it_at_the_end(service):
    """``mode="pool"``: one host job (the SDK's ``SandboxPool``) carries the sandboxes; the harness lives in each
    sandbox's home (the fake roots pooled file paths at ``$HOME``, as the SDK's docstring says); the host is
    cancelled when the pool closes."""
    tasks = [Task.from_row(HE[f"HumanEval/{i}"]) for i in range(6)]
    solutions = [HE[f"HumanEval/{i}"]["canonical_solution"] for i in range(6)]
    with Scorer.from_config(config(sandbox_pool_size=3, options={"mode": "pool"})) as scorer:
        results = scorer.score(tasks, solutions)
        assert "pool of 50 sandboxes per host job" in scorer.pool.backend.describe()
        hosts = [job_id for job_id, job in service.jobs.items() if job["pooled"] is not None and
                 job["stage"] == "RUNNING"]
        assert len(hosts) == 1 and len(service.jobs[hosts[0]]["pooled"]) == 3
        spec = service.jobs[hosts[0]]["spec"]
        assert spec["labels"]["hf-sandbox-mode"] == "pool" and TOKEN not in json.dumps(spec)
    assert [r.status for r in results] == ["passed"] * 6
    assert service.running == [] and service.alive == []


def test_sdk_calls_in_worker_threads_run_concurrently(service):
    """The SDK is synchronous: its calls run in worker threads, so 4 completions of 1 s each on a pool of 4 are
    executing in the service at the same time (the event loop is never blocked by a call). Measured as the most
    commands the fake service ran at once, not as a wall time (the machine is shared)."""
    task = Task.from_row({"task_id": "second", "test_list": ["assert f() == 1"]})
    one_second = "import time\ndef f():\n    time.sleep(1)\n    return 1\n"
    with Scorer.from_config(config(sandbox_pool_size=4, sandbox_test_timeout=10.0,
                                   sandbox_completion_timeout=10.0)) as scorer:
        service.max_execs_in_flight = 0
        results = scorer.score([task] * 4, [one_second] * 4)
    assert [r.status for r in results] == ["passed"] * 4
    assert service.max_execs_in_flight >= 2, service.max_execs_in_flight  # one call at a time would be 1


# -- training through the fake service ----------------------------------------------------------------------------


def test_a_trainer_step_scores_its_rewards_on_hf_sandboxes_and_leaves_none(service, tiny_model_dir, tmp_path,
                                                                           monkeypatch):
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from trl_sandbox import SandboxGRPOConfig, SandboxGRPOTrainer, code_reward

    # the service fixture turns HF_HUB_OFFLINE off (the backend needs the "Hub", here the fake): the model and its
    # tokenizer are loaded from the local directory only, so nothing is ever asked of a hub
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir, local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir, local_files_only=True)
    run = "hf-trainer-run"
    monkeypatch.setenv("TRL_SANDBOX_RUN_ID", run)
    row = {"task_id": "t0", "prompt": "Write f0.", "test_list": ["assert f0() == 0"] * 2}
    seen = []

    def reward(completions, **kwargs):
        # the tiny model writes random tokens: score a right answer instead, through the trainer's (active) pool
        rewards = code_reward(["def f0():\n    return 0\n"] * len(completions), **kwargs)
        pool = trainer.scorer.pool
        seen.append({"rewards": rewards, "backend": pool.backend.name, "running": list(service.running),
                     "labels": [dict(s.labels) for s in pool.live_sandboxes()]})
        return rewards

    args = SandboxGRPOConfig(
        output_dir=str(tmp_path / "out"), use_cpu=True, bf16=False, report_to="none", per_device_train_batch_size=4,
        num_generations=2, max_completion_length=8, max_steps=1, logging_steps=1, save_strategy="no",
        sandbox_backend="hf", sandbox_pool_size=2,
    )  # fmt: skip
    trainer = SandboxGRPOTrainer(model=model, processing_class=tokenizer, reward_funcs=[reward], args=args,
                                 train_dataset=Dataset.from_list([row] * 4))
    assert service.running == [] and service.bodies("POST", "/api/jobs") == []  # nothing before training begins
    trainer.train()
    assert trainer.state.global_step == 1
    assert len(seen) == 1 and seen[0]["rewards"] == [1.0] * 4, seen
    assert seen[0]["backend"] == "hf" and len(seen[0]["running"]) == 2 and len(seen[0]["labels"]) == 2, seen
    assert all(labels["trl-sandbox-run"] == run and labels["trl-sandbox-rank"] == "0" for labels in seen[0]["labels"])
    specs = service.bodies("POST", "/api/jobs")
    assert len(specs) == 2 and all(spec["labels"]["trl-sandbox-run"] == run for spec in specs)
    assert trainer.scorer.status_counts["completions"] == 4
    assert service.running == [] and service.alive == []  # train() returned: the pool's sandboxes are gone
    assert sorted(service.deleted) == sorted(service.created)


def test_closing_leaves_no_pacing_lock_file(service, monkeypatch, tmp_path):
    from test_daytona import check_no_pacing_lock_file_is_left

    check_no_pacing_lock_file_is_left(config, monkeypatch, tmp_path)


# -- what the harness holds on a remote sandbox: the request, the processes, the environment (see _remote_attacks.py)


def test_a_program_cannot_read_the_request(service):
    check_the_request_cannot_be_stolen(config)


def test_the_request_is_never_a_file_even_where_the_harness_could_not_remove_one(service):
    """The request is the command's stdin (a pipe): with a working directory the command's user cannot write, the
    stealing programs still find nothing and are scored as usual; no request file is ever written."""
    service.read_only_workdir = True
    check_the_request_cannot_be_stolen(config)
    written = [body["path"] for body in service.bodies("PUT", "/v1/files/write")]
    assert written and not [path for path in written if ".trl-sandbox-stdin-" in path], written


def test_a_request_file_the_harness_cannot_remove_runs_nothing(service):
    """Bytes that are not ASCII still travel as a file: where the harness cannot remove it, it runs nothing and
    says why (an infrastructure error for the scorer, never the program's failure)."""
    service.read_only_workdir = True
    request = STEAL_ASSERT.request(STEAL_ASSERT_PROGRAM + "# \u00e9\n", test_timeout_s=3.0, output_limit=1 << 16)
    payload = json.dumps(request, ensure_ascii=False).encode()
    assert not payload.isascii()
    backend = HFBackend()

    async def run():
        await backend.start()
        sandbox = await backend.create({"trl-sandbox-test": "request-file"})
        try:
            await backend.write_files(sandbox, HARNESS_FILES)
            return await backend.exec(sandbox, [*sandbox.python, f"{sandbox.workdir}/{HARNESS_NAME}"], stdin=payload,
                                      timeout_s=30)
        finally:
            await backend.delete(sandbox)
            await backend.aclose()

    result = anyio.run(run)
    with pytest.raises(InfrastructureError, match="refusing to run the program: the request file .* could not be "
                                                  "removed .*No program ran"):
        STEAL_ASSERT.judge(result.stdout, exit_code=result.exit_code, timed_out=result.timed_out)


def test_a_daemon_dies_with_its_completion_and_never_reads_the_next_request(service):
    check_a_daemon_dies_with_its_completion(config)


def test_the_program_never_sees_the_services_environment(service):
    """Neither ``env_vars`` nor the job's own secret (``SBX_TOKEN``, the token of the sandbox's server)."""
    check_the_program_never_sees_the_services_environment(config, also=("SBX_TOKEN",))


def test_records_a_program_writes_into_the_commands_output_are_never_paid(service):
    check_forged_records_are_never_paid(config)
