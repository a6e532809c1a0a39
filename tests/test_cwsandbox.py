"""The cwsandbox backend: the real ``cwsandbox`` SDK over gRPC against a local fake of the CoreWeave Sandbox API
(``fake_cwsandbox.py``, built from the SDK's own servicer classes), plus autospecced SDK objects where a server is
overkill. Covers create (tags, lifetime backstop, egress), exec (stdin, timeout), error mapping, tag listing, and
cleanup on normal end, on crash (SIGTERM) and by ``trl-sandbox cleanup``."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from unittest.mock import create_autospec

import anyio
import pytest

pytest.importorskip("cwsandbox")

import cwsandbox  # noqa: E402

from trl_sandbox import ConfigurationError, InfrastructureError, SandboxConfig, Scorer, Task, load_tasks  # noqa: E402
from trl_sandbox.backends.base import Sandbox  # noqa: E402
from trl_sandbox.backends.cwsandbox import CWSandboxBackend, labels_to_tags, tags_to_labels  # noqa: E402
from trl_sandbox.scoring import JUDGE_START_S  # noqa: E402
from trl_sandbox.errors import SandboxCreationError  # noqa: E402
from trl_sandbox.pool import default_labels  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from fake_cwsandbox import REMOTE_WORKDIR, FakeCWSandbox  # noqa: E402
from test_daytona import dead_pid, labels_of  # noqa: E402

HE = {r["task_id"]: r for r in load_tasks("humaneval")}
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def fake(sandbox_root):
    server = FakeCWSandbox(sandbox_root)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def service(fake, monkeypatch):
    """The fake, reset, configured through the SDK's own environment variables."""
    fake.requests.clear()
    fake.fail_creates = fake.fail_execs = 0
    fake.kill = None
    monkeypatch.setenv("CWSANDBOX_API_KEY", "test-key")
    monkeypatch.setenv("CWSANDBOX_BASE_URL", fake.url)
    yield fake
    left = fake.reap()  # deleted now: the next test starts clean, only this one fails
    assert left == [], f"this test left sandboxes on the fake service: {left}"


def config(**overrides):
    return SandboxConfig(sandbox_backend="cwsandbox", sandbox_backend_options=overrides.pop("options", {}),
                         **overrides)


def test_missing_api_key_is_one_clear_error_before_anything_starts(monkeypatch):
    monkeypatch.delenv("CWSANDBOX_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="CWSANDBOX_API_KEY"):
        Scorer.from_config(config())
    monkeypatch.setenv("CWSANDBOX_API_KEY", "k")
    with pytest.raises(ConfigurationError, match="unknown option .image. for the cwsandbox backend; its options: .*container_image"):
        Scorer.from_config(config(options={"image": "python:3.12"}))



def test_labels_round_trip_through_tags():
    labels = default_labels("run-1", rank=3)
    assert tags_to_labels(labels_to_tags(labels)) == labels
    assert "trl-sandbox=true" in labels_to_tags(labels) and tags_to_labels(["plain-tag"]) == {}


def test_create_exec_and_delete_with_tags_lifetime_and_no_egress(service):
    task = Task.from_row(HE["HumanEval/0"])
    scorer = Scorer.from_config(config(sandbox_pool_size=3, options={"max_lifetime_seconds": 900,
                                                                       "tags": ["team-rl"]}))
    scorer.pool.labels = {**scorer.pool.labels, "trl-sandbox-step": "7", "trl-sandbox-model": "tiny"}
    with scorer:
        ok, bad = scorer.score([task, task], [HE["HumanEval/0"]["canonical_solution"],
                                              "    print('debug line')\n    return False\n"])
        assert scorer.pool.backend.describe().startswith("cwsandbox (")
    assert ok.status == "passed" and ok.reward == 1.0 and bad.status == "failed" and bad.reward < 1.0
    assert "debug line" in bad.output and ok.output == ""
    creates = service.recorded("CreateSandbox")
    assert len(creates) == 3 and len(service.created) == 3
    for request in creates:
        spec = request.sandbox.spec
        labels = tags_to_labels(spec.tags)
        assert labels["trl-sandbox"] == "true" and labels["trl-sandbox-pid"] == str(os.getpid())
        assert labels["trl-sandbox-rank"] == "0" and labels["trl-sandbox-step"] == "7"
        assert labels["trl-sandbox-model"] == "tiny" and "trl-sandbox-run" in labels and "team-rl" in spec.tags
        assert spec.max_lifetime_seconds == 900  # the server-side backstop
        assert spec.network.deny_egress is True
    assert sorted(service.deleted[-3:]) == sorted(service.created[-3:])
    execs = [" ".join(r.command) for r in service.recorded("StreamExec") if "harness" in " ".join(r.command)]
    # the SDK wraps the command for its cwd; inside it, coreutils timeout kills it at the completion's budget, plus
    # the judge's start (JUDGE_START_S)
    budget = math.ceil(scorer.budget_s(task) + JUDGE_START_S)  # (t + 1) * n + 5 for the task's n tests of t seconds
    assert len(execs) == 2 and all(f"exec timeout -k 2 {budget} python3 {REMOTE_WORKDIR}/" in c for c in execs), execs


def test_a_test_past_its_time_limit_is_a_timeout(service):
    task = Task.from_row({"task_id": "slow", "test_list": ["assert f() == 1"]})
    slow = "def f():\n    while True:\n        pass\n"
    with Scorer.from_config(config(sandbox_pool_size=1, sandbox_test_timeout=1.0)) as scorer:
        (result,) = scorer.score([task], [slow])
    assert result.status == "timeout" and result.reward == -1.0


def test_the_whole_command_is_killed_at_its_timeout_inside_the_sandbox(service):
    async def run():
        backend = CWSandboxBackend()
        sandbox = await backend.create(default_labels("t"))
        try:
            start = time.monotonic()
            result = await backend.exec(sandbox, ["sh", "-c", "sleep 30"], timeout_s=1)
            return result, time.monotonic() - start
        finally:
            await backend.delete(sandbox)

    result, elapsed = anyio.run(run)
    assert result.timed_out and result.exit_code is None and elapsed < 15


def test_transient_errors_are_retried_and_a_dead_sandbox_is_infra_not_wrong(service):
    task = Task.from_row(HE["HumanEval/2"])
    with Scorer.from_config(config(sandbox_pool_size=2)) as scorer:
        service.fail_execs = 2  # UNAVAILABLE twice, then fine
        (first,) = scorer.score([task], [HE["HumanEval/2"]["canonical_solution"]])
        # Both rejections met and retried (by the SDK once, by the backend the rest: how they split depends on
        # whether the rejection arrives before the input is written, i.e. on the machine's load)
        assert first.status == "passed" and service.fail_execs == 0
        assert scorer.pool.backend.stats["retries"] >= 1
        # a sandbox that is gone (e.g. past its max lifetime) answers NOT_FOUND: not retried on it
        victim = scorer.pool.live_sandboxes()[0].id
        service.kill = victim
        results = scorer.score([task] * 2, [HE["HumanEval/2"]["canonical_solution"]] * 2)
        # the completion that met the dead sandbox is retried on the other one: both pass, and the dead one is
        # deleted (replaced when next needed)
        assert [r.status for r in results] == ["passed", "passed"]
        assert victim not in {s.id for s in scorer.pool.live_sandboxes()}
        service.kill = None
    assert service.alive == []


def test_a_failing_pool_creation_is_retried_then_leaks_nothing(service):
    service.fail_creates = 2  # RESOURCE_EXHAUSTED twice: retried
    with Scorer.from_config(config(sandbox_pool_size=2)) as scorer:
        assert len(scorer.pool.live_sandboxes()) == 2
    assert scorer.pool.backend.stats["rate_limited"] == 2
    service.fail_creates = 100
    with pytest.raises(SandboxCreationError):
        Scorer.from_config(config(sandbox_pool_size=2, options={"max_retries": 1})).start()
    assert service.alive == []


SIGNAL_SCRIPT = textwrap.dedent("""
    import time
    from trl_sandbox import SandboxConfig, Scorer
    scorer = Scorer.from_config(SandboxConfig(sandbox_backend="cwsandbox", sandbox_pool_size=2)).start()
    print("ready", flush=True)
    time.sleep(120)
""")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_crash_signal_deletes_every_sandbox_then_does_what_it_did(service, signum):
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


def test_tag_listing_and_the_cleanup_command(service):
    backend = CWSandboxBackend()

    async def make(labels):
        return (await backend.create(labels)).id

    dead = anyio.run(make, labels_of("dead-run", pid=dead_pid()))
    live = anyio.run(make, labels_of("live-run"))
    listed = anyio.run(backend.list, {"trl-sandbox": "true", "trl-sandbox-run": "live-run"})
    assert [s.id for s in listed] == [live] and listed[0].labels["trl-sandbox-run"] == "live-run"
    assert service.recorded("ListSandboxes")[-1].tags == ["trl-sandbox-run=live-run", "trl-sandbox=true"]

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = [sys.executable, "-m", "trl_sandbox.cli", "cleanup", "--backend", "cwsandbox"]
    dry = subprocess.run([*run, "--dry-run"], capture_output=True, text=True, timeout=120, env=env)
    assert dry.returncode == 0 and dead in dry.stdout and live not in dry.stdout, dry.stderr
    done = subprocess.run(run, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0 and "deleted 1" in done.stderr and service.alive == [live]
    by_run = subprocess.run([*run, "--run-id", "live-run"], capture_output=True, text=True, timeout=120, env=env)
    assert by_run.returncode == 0 and "deleted 1" in by_run.stderr and service.alive == []


def test_score_command_with_the_cwsandbox_backend(service, tmp_path):
    samples = tmp_path / "samples.jsonl"
    chosen = list(HE.items())[:40]
    samples.write_text("".join(json.dumps({"task_id": k, "completion": r["canonical_solution"]}) + "\n"
                               for k, r in chosen))
    out = tmp_path / "out.jsonl"
    result = subprocess.run(
        [sys.executable, "-m", "trl_sandbox.cli", "score", "--ignore-incomplete", "--tasks", "humaneval", "--completions", str(samples),
         "--out", str(out), "--backend", "cwsandbox", "--pool-size", "4"],
        capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "40/40 passed" in result.stderr
    assert service.alive == []


# -- where a fake server is overkill: autospecced SDK objects (real signatures) ------------------------------------


def autospec_sandbox():
    remote = create_autospec(cwsandbox.Sandbox, instance=True)
    remote.sandbox_id, remote.tags = "sb-1", ()
    return Sandbox("sb-1", {}, "/tmp/trl-sandbox", ["python3"], data=remote)


def test_sdk_errors_are_classified(monkeypatch):
    monkeypatch.setenv("CWSANDBOX_API_KEY", "k")
    backend = CWSandboxBackend(max_retries=1)
    sandbox = autospec_sandbox()

    def failing(exc):
        def exec_(*args, **kwargs):
            raise exc
        return exec_

    sandbox.data.exec.side_effect = failing(cwsandbox.SandboxNotFoundError("gone"))
    with pytest.raises(InfrastructureError, match="SandboxNotFoundError"):
        anyio.run(lambda: backend.exec(sandbox, ["true"], timeout_s=1))
    sandbox.data.exec.side_effect = failing(cwsandbox.SandboxUnavailableError("busy"))
    with pytest.raises(InfrastructureError, match="after 2 attempt"):
        anyio.run(lambda: backend.exec(sandbox, ["true"], timeout_s=1))
    sandbox.data.exec.side_effect = failing(cwsandbox.CWSandboxAuthenticationError("bad key"))
    with pytest.raises(ConfigurationError, match="CWSANDBOX_API_KEY"):
        anyio.run(lambda: backend.exec(sandbox, ["true"], timeout_s=1))
    sandbox.data.exec.side_effect = failing(cwsandbox.SandboxCommandTimeoutError("late"))
    with pytest.raises(InfrastructureError, match="did not report the command's end"):
        anyio.run(lambda: backend.exec(sandbox, ["true"], timeout_s=1))


def test_compiled_languages_run_through_the_remote_harness(service):
    """C++ and Java completions through the CoreWeave Sandbox API (see ``test_languages.check_remote_languages``)."""
    from test_languages import check_remote_languages

    check_remote_languages(config)


def test_code_environment_sessions_stream_through_the_api(service, caplog):
    """CodeEnvironment sessions through the CoreWeave Sandbox API: one ``StreamExec`` left open per session, stdin
    written and stdout read as they go (see ``test_environment.check_remote_sessions``)."""
    from test_environment import check_remote_sessions

    check_remote_sessions(config, service, caplog)
    assert service.sessions_opened == 5


def test_closing_leaves_no_pacing_lock_file(service, monkeypatch, tmp_path):
    from test_daytona import check_no_pacing_lock_file_is_left

    check_no_pacing_lock_file_is_left(config, monkeypatch, tmp_path)
