"""The daytona backend: the real SDK against a local fake of the Daytona API (``fake_daytona.py``), plus autospecced
SDK objects where a server is overkill. Also the lifecycle every backend shares: deletion on normal end, on
exception and on SIGINT/SIGTERM, and the orphan sweep and ``trl-sandbox cleanup``."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from unittest.mock import create_autospec

import anyio
import pytest

pytest.importorskip("daytona")

from daytona import AsyncDaytona, DaytonaTimeoutError  # noqa: E402
from daytona._async.filesystem import AsyncFileSystem  # noqa: E402
from daytona._async.process import AsyncProcess  # noqa: E402
from daytona._async.sandbox import AsyncSandbox  # noqa: E402
from daytona_toolbox_api_client_async.exceptions import ApiException  # noqa: E402

from trl_sandbox import ConfigurationError, InfrastructureError, SandboxConfig, Scorer, Task, load_tasks  # noqa: E402
from trl_sandbox.backends.base import Sandbox  # noqa: E402
from trl_sandbox.backends.daytona import DaytonaBackend  # noqa: E402
from trl_sandbox.harness.archive import HARNESS_NAME  # noqa: E402
from trl_sandbox.errors import SandboxCreationError  # noqa: E402
from trl_sandbox.lifecycle import CREATED_FORMAT, orphan_reason, parse_age  # noqa: E402
from trl_sandbox.pool import default_labels  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _remote_attacks import (  # noqa: E402
    check_a_daemon_dies_with_its_completion,
    check_an_unremovable_request_runs_nothing,
    check_forged_records_are_never_paid,
    check_the_program_never_sees_the_services_environment,
    check_the_request_cannot_be_stolen,
)
from _fake_service import humaneval_spread  # noqa: E402
from fake_daytona import FakeDaytona  # noqa: E402

HE = {r["task_id"]: r for r in load_tasks("humaneval")}
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def fake(sandbox_root):
    server = FakeDaytona(sandbox_root)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def service(fake, monkeypatch):
    """The fake, reset, configured through the SDK's own environment variables."""
    fake.requests.clear()
    fake.rate_limit_creates = fake.fail_execs = 0
    fake.fail_creates_after = None
    fake.create_delay_s = fake.register_delay_s = fake.latency_s = 0.0
    fake.read_only_workdir = False
    monkeypatch.setenv("DAYTONA_API_KEY", "test-key")
    monkeypatch.setenv("DAYTONA_API_URL", fake.url)
    monkeypatch.setenv("DAYTONA_TARGET", "us")
    yield fake
    left = fake.reap()  # deleted now: the next test starts clean, only this one fails
    assert left == [], f"this test left sandboxes on the fake service: {left}"


def config(**overrides):
    options = {"use_deprecated_polling": True, **overrides.pop("options", {})}
    return SandboxConfig(sandbox_backend="daytona", sandbox_backend_options=options, **overrides)


def test_missing_api_key_is_one_clear_error_before_anything_starts(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # the SDK also reads .env files of the working directory
    for name in ("DAYTONA_API_KEY", "DAYTONA_JWT_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigurationError, match="DAYTONA_API_KEY"):
        Scorer.from_config(config())
    with pytest.raises(ConfigurationError, match="unknown option .network_block. for the daytona backend; its options: .*network_block_all"):
        Scorer.from_config(config(options={"api_key": "k", "network_block": True}))


def test_labels_network_block_and_backstops_are_sent_and_every_sandbox_is_deleted_at_the_end(service):
    task = Task.from_row(HE["HumanEval/0"])
    with Scorer.from_config(config(sandbox_pool_size=3)) as scorer:
        ok, bad = scorer.score([task, task], [HE["HumanEval/0"]["canonical_solution"],
                                              "    print('debug line')\n    return False\n"])
        assert scorer.pool.backend.describe().startswith("daytona (")
    assert ok.status == "passed" and bad.status == "failed"
    assert "debug line" in bad.output and ok.output == ""  # the program's output, from the judge's output record
    bodies = service.bodies("POST", "/api/sandbox")
    assert len(bodies) == 3 and len(service.created) == 3
    for body in bodies:
        labels = body["labels"]
        assert labels["trl-sandbox"] == "true" and labels["trl-sandbox-pid"] == str(os.getpid())
        assert labels["trl-sandbox-host"] == socket.gethostname() and labels["trl-sandbox-rank"] == "0"
        assert {"trl-sandbox-run", "trl-sandbox-created", "trl-sandbox-version"} <= set(labels)
        assert body["networkBlockAll"] is True
        assert body["autoStopInterval"] == 15 and body["autoDeleteInterval"] == 0  # the server-side backstop
    assert sorted(service.deleted[-3:]) == sorted(service.created[-3:])
    # one upload and one exec per completion (the request travels as a file: the process API has no stdin)
    assert len(service.bodies("POST", "/toolbox/process/execute")) == 2
    assert all("user" not in body for body in bodies)  # the snapshot's own user unless os_user is given
    with Scorer.from_config(config(sandbox_pool_size=1, options={"os_user": "root"})) as scorer:
        scorer.pool.start()
    assert service.bodies("POST", "/api/sandbox")[-1]["user"] == "root"


def test_the_sdks_default_mode_scores_and_deletes(service, monkeypatch):
    """Without ``use_deprecated_polling`` (what users run): the SDK tries its Socket.IO event stream, which the fake
    does not serve (404), and falls back to polling; a pool still starts, scores, and deletes what it made. The
    Socket.IO path itself is not faked here."""
    monkeypatch.delenv("DAYTONA_USE_DEPRECATED_POLLING", raising=False)
    task = Task.from_row(HE["HumanEval/0"])
    config = SandboxConfig(sandbox_backend="daytona", sandbox_pool_size=1)
    with Scorer.from_config(config) as scorer:
        assert scorer.pool.backend.use_deprecated_polling is None
        (result,) = scorer.score([task], [HE["HumanEval/0"]["canonical_solution"]])
    assert result.status == "passed"
    assert service.deleted[-1:] == service.created[-1:]



def test_network_allow_list_option_is_sent(service):
    with Scorer.from_config(config(sandbox_pool_size=1, options={"network_allow_list": "10.0.0.0/8"})):
        pass
    (body,) = service.bodies("POST", "/api/sandbox")
    assert body["networkBlockAll"] is False and body["networkAllowList"] == "10.0.0.0/8"


def test_an_exception_while_the_pool_is_open_deletes_every_sandbox(service):
    with pytest.raises(RuntimeError, match="boom"), Scorer.from_config(config(sandbox_pool_size=2)):
        assert len(service.alive) == 2
        raise RuntimeError("boom")
    assert service.alive == []


def test_rate_limited_creations_are_retried_after_retry_after(service):
    service.rate_limit_creates = 2
    with Scorer.from_config(config(sandbox_pool_size=1)) as scorer:
        assert scorer.pool.backend.stats["rate_limited"] == 2 and scorer.pool.backend.stats["retries"] == 2
        (result,) = scorer.score([Task.from_row(HE["HumanEval/2"])], [HE["HumanEval/2"]["canonical_solution"]])
        assert result.status == "passed"
    assert len(service.bodies("POST", "/api/sandbox")) == 3


def test_a_failing_or_rate_limited_pool_creation_leaks_nothing(service):
    service.fail_creates_after = len(service.created) + 2  # the quota runs out after two sandboxes
    with pytest.raises(SandboxCreationError, match="then deleted") as info:
        Scorer.from_config(config(sandbox_pool_size=4)).start()
    assert "quota" in str(info.value) and service.alive == []
    service.fail_creates_after = None
    service.rate_limit_creates = 1000  # never lets up: the retries end, and nothing is left behind
    with pytest.raises(SandboxCreationError):
        Scorer.from_config(config(sandbox_pool_size=2, options={"max_retries": 1})).start()
    assert service.alive == []


@pytest.mark.parametrize("knob", ["create_delay_s", "register_delay_s"])
def test_a_creation_the_pool_gives_up_on_leaves_no_sandbox_on_the_service(service, knob):
    """The pool's creation deadline passes while the service is still answering a create it has already carried
    out (the backend's own retry deadline is longer): the sandbox it made is found by its creation label and
    deleted, instead of running until auto-stop; so is one the service makes only after the pool gave up
    (``register_delay_s``: the first sweep by its label finds nothing)."""
    setattr(service, knob, 2.5)
    before = len(service.created)
    with pytest.raises(SandboxCreationError, match="timed out"):
        Scorer.from_config(config(sandbox_pool_size=2, sandbox_create_timeout=1.0)).start()
    assert len(service.created) > before and service.alive == []


def test_a_failing_execution_is_retried_and_never_scored_as_a_wrong_answer(service):
    task = Task.from_row(HE["HumanEval/2"])
    with Scorer.from_config(config(sandbox_pool_size=1, options={"max_retries": 1})) as scorer:
        service.fail_execs = 1  # one 503: retried by the backend
        (first,) = scorer.score([task], [HE["HumanEval/2"]["canonical_solution"]])
        service.fail_execs = 1000  # the service keeps failing: an infrastructure error, reward None
        (second,) = scorer.score([task], [HE["HumanEval/2"]["canonical_solution"]])
        service.fail_execs = 0
    assert first.status == "passed"
    assert second.status == "infra_error" and second.reward is None


def test_a_test_past_its_time_limit_is_a_timeout(service):
    task = Task.from_row({"task_id": "sleepy", "test_list": ["assert f() == 1"]})
    slow = "import time\ndef f():\n    time.sleep(30)\n    return 1\n"
    with Scorer.from_config(config(sandbox_pool_size=1, sandbox_test_timeout=1.0,
                                   sandbox_completion_timeout=2.0)) as scorer:
        (result,) = scorer.score([task], [slow])
    assert result.status == "timeout" and result.reward == -1.0


SIGNAL_SCRIPT = textwrap.dedent("""
    import sys, time
    from trl_sandbox import SandboxConfig, Scorer
    config = SandboxConfig(sandbox_backend="daytona", sandbox_pool_size=2,
                           sandbox_backend_options={"use_deprecated_polling": True})
    scorer = Scorer.from_config(config).start()
    print("ready", flush=True)
    time.sleep(120)
""")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_deletes_every_sandbox_then_does_what_it_did(service, signum):
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
    assert proc.returncode == -signum, proc.stderr.read()  # the signal still ends the process, as before
    assert service.alive == []


# -- where a fake server is overkill: autospecced SDK objects (real signatures) ------------------------------------


def autospec_backend():
    client = create_autospec(AsyncDaytona, instance=True)
    return DaytonaBackend(client=client, max_retries=2), client


def autospec_sandbox():
    remote = create_autospec(AsyncSandbox, instance=True)
    remote.id, remote.labels = "sb-1", {}
    remote.process = create_autospec(AsyncProcess, instance=True)
    remote.fs = create_autospec(AsyncFileSystem, instance=True)
    return Sandbox("sb-1", {}, "/tmp/trl-sandbox", ["python3"], data=remote)


def test_a_create_that_timed_out_after_the_server_made_the_sandbox_deletes_it():
    backend, client = autospec_backend()
    error = DaytonaTimeoutError("Failed to create sandbox: timed out")
    error._attach_sandbox_id("sb-late")
    client.create.side_effect = error
    late = create_autospec(AsyncSandbox, instance=True)
    client.get.return_value = late
    with pytest.raises(InfrastructureError, match="create a sandbox"):
        anyio.run(backend.create, {"trl-sandbox": "true"})
    client.get.assert_awaited_with("sb-late")
    late.delete.assert_awaited()
    assert backend.stats["orphans_deleted"] == 1


def test_raw_api_client_exceptions_are_classified():
    backend, _ = autospec_backend()
    sandbox = autospec_sandbox()
    sandbox.data.process.exec.side_effect = ApiException(status=408, reason="Request Timeout")
    result = anyio.run(lambda: backend.exec(sandbox, ["python3", "-c", "pass"], timeout_s=1))
    assert result.timed_out and result.exit_code is None
    sandbox.data.process.exec.side_effect = ApiException(status=500, reason="Internal Server Error")
    with pytest.raises(InfrastructureError, match="after 3 attempt"):
        anyio.run(lambda: backend.exec(sandbox, ["python3", "-c", "pass"], timeout_s=1))
    assert sandbox.data.process.exec.await_count == 4  # 1 + 3 attempts
    sandbox.data.process.exec.side_effect = ApiException(status=400, reason="Bad Request")
    with pytest.raises(InfrastructureError, match="Bad Request"):
        anyio.run(lambda: backend.exec(sandbox, ["python3", "-c", "pass"], timeout_s=1))


# -- orphans: the sweep at start and `trl-sandbox cleanup` --------------------------------------------------------


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def labels_of(run, *, pid=None, host=None, age_s=0.0):
    labels = default_labels(run)
    labels["trl-sandbox-pid"] = str(pid if pid is not None else os.getpid())
    labels["trl-sandbox-host"] = host or socket.gethostname()
    labels["trl-sandbox-created"] = time.strftime(CREATED_FORMAT, time.gmtime(time.time() - age_s))
    return labels


def test_orphan_rules():
    assert parse_age("24h") == 86400 and parse_age("90m") == 5400 and parse_age("30s") == 30
    for bad in ("soon", "30", "h"):  # a bare number could be seconds or days: the unit is required
        with pytest.raises(ValueError, match="a number and a unit"):
            parse_age(bad)
    assert orphan_reason(labels_of("a", pid=dead_pid())) is not None
    assert orphan_reason(labels_of("a")) is None  # our own process: alive
    assert orphan_reason(labels_of("a", pid=dead_pid()), current_run="a") is None
    other_host = labels_of("b", host="elsewhere", age_s=7200)
    assert orphan_reason(other_host) is None  # cannot tell from here: only by age, when asked
    assert orphan_reason(other_host, older_than_s=3600) is not None
    assert orphan_reason(other_host, older_than_s=3 * 3600) is None
    assert orphan_reason(labels_of("b"), run_id="b") is not None
    assert orphan_reason({"user": "label"}, older_than_s=0) is None  # not ours


def cleanup(*args):
    return subprocess.run([sys.executable, "-m", "trl_sandbox.cli", "cleanup", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})


def test_sweep_at_start_and_the_cleanup_command_delete_orphans_never_a_live_run(service):
    backend = DaytonaBackend(use_deprecated_polling=True)

    async def make(labels):
        await backend.start()
        try:
            return (await backend.create(labels)).id
        finally:
            await backend.aclose()

    dead = anyio.run(make, labels_of("dead-run", pid=dead_pid()))
    live = anyio.run(make, labels_of("live-run"))  # this test process: a live sibling run
    old = anyio.run(make, labels_of("old-run", host="elsewhere", age_s=3 * 86400))
    with Scorer.from_config(config(sandbox_pool_size=1, sandbox_sweep_orphans=True)) as scorer:
        assert scorer.pool.stats.orphans_deleted == 1
    assert dead not in service.alive and live in service.alive and old in service.alive

    dry = cleanup("--backend", "daytona", "--older-than", "24h", "--dry-run")
    assert dry.returncode == 0 and old in dry.stdout and live not in dry.stdout, dry.stderr
    assert "would delete 1" in dry.stderr and old in service.alive
    done = cleanup("--backend", "daytona", "--older-than", "24h")
    assert done.returncode == 0 and "deleted 1" in done.stderr and old not in service.alive
    assert live in service.alive
    by_run = cleanup("--backend", "daytona", "--run-id", "live-run")
    assert by_run.returncode == 0 and "deleted 1" in by_run.stderr and service.alive == []


def test_cleanup_of_the_local_backend(own_sandbox_root):
    from trl_sandbox.backends.local import LocalBackend

    backend = LocalBackend(root_dir=own_sandbox_root)

    async def make():
        await backend.start()
        dead = await backend.create(labels_of("dead-run", pid=dead_pid()))
        live = await backend.create(labels_of("live-run"))
        return dead, live

    dead, live = anyio.run(make)
    options = json.dumps({"root_dir": str(own_sandbox_root)})
    result = cleanup("--backend", "local", "--backend-options", options)
    assert result.returncode == 0 and dead.id in result.stdout and "deleted 1" in result.stderr, result.stderr
    assert not (own_sandbox_root / dead.id).exists() and (own_sandbox_root / live.id).exists()
    # The "dead" sandbox's server still belongs to this (live) test process: stop it and free its cgroups too.
    for sandbox in (dead, live):
        anyio.run(backend.delete, sandbox)
    anyio.run(backend.aclose)


def test_score_command_with_the_daytona_backend_scores_humaneval(service, tmp_path):
    """``trl-sandbox score --backend daytona`` on a spread of HumanEval (:func:`humaneval_spread`), full programs
    (prompt and body): all pass, nothing is left."""
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps({"task_id": k, "completion": r["prompt"] + r["canonical_solution"]}) + "\n"
                               for k, r in humaneval_spread(HE.items())))
    out = tmp_path / "out.jsonl"
    result = subprocess.run(
        [sys.executable, "-m", "trl_sandbox.cli", "score", "--ignore-incomplete", "--tasks", "humaneval", "--completions", str(samples),
         "--out", str(out), "--backend", "daytona", "--backend-options", '{"use_deprecated_polling": true}'],
        capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert sum(r["passed"] for r in results) == 41, [r for r in results if not r["passed"]][:3]
    assert "41/41 passed" in result.stderr
    assert len(service.created) >= 8 and service.alive == []


def check_no_pacing_lock_file_is_left(make_config, monkeypatch, tmp_path):
    """A scorer of a remote backend (``make_config(sandbox_pool_size=1)``) that created a sandbox and closed leaves
    no creation-pacing lock file (see ``backends/_remote.Pacer``) in the lock directory."""
    locks = tmp_path / "locks"
    locks.mkdir()
    monkeypatch.setenv("TRL_SANDBOX_LOCK_DIR", str(locks))
    with Scorer.from_config(make_config(sandbox_pool_size=1)) as scorer:
        assert scorer.pool.stats.created == 1
        assert [p.name for p in locks.iterdir()], "the pacer made no lock file: this check checks nothing"
    assert [p.name for p in locks.iterdir()] == []


def test_closing_leaves_no_pacing_lock_file(service, monkeypatch, tmp_path):
    check_no_pacing_lock_file_is_left(config, monkeypatch, tmp_path)


def test_a_pacing_lock_file_removed_while_a_process_waits_for_its_lock_is_made_again(tmp_path, monkeypatch):
    """Another process removes the lock file (closing) while we wait for its lock: we must not pace on the removed
    file (a third process would make a new one and take the same turn), but on the one at the path."""
    import fcntl
    import threading

    from trl_sandbox.backends import _remote

    pacer = _remote.Pacer(1000.0, key="race", lock_dir=tmp_path)
    holder = os.open(pacer.path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(holder, fcntl.LOCK_EX)
    opened = threading.Event()
    real_flock = fcntl.flock

    def flock(fd, operation):  # called with the file already open: the waiter holds the old file from here on
        opened.set()
        return real_flock(fd, operation)

    monkeypatch.setattr(_remote.fcntl, "flock", flock)
    turns = []
    waiter = threading.Thread(target=lambda: turns.append(pacer._reserve_shared()))
    waiter.start()
    assert opened.wait(10)
    os.unlink(pacer.path)  # what a closing process does, under the lock
    os.close(holder)
    waiter.join(10)
    assert turns and pacer.path.exists(), "the turn was written into the removed file"
    assert float(pacer.path.read_text()) == pytest.approx(turns[0][0] + 0.001)


def test_a_pacer_removes_its_lock_file_once_its_turn_is_past_never_another_processes_turn(tmp_path):
    from trl_sandbox.backends._remote import Pacer

    async def main():
        pacer = Pacer(20.0, key="own", lock_dir=tmp_path)
        await pacer.wait()
        await pacer.wait()  # the file now holds a turn 1/20 s ahead: ours, waited for
        await pacer.aclose()
        assert not pacer.path.exists()
        other = Pacer(20.0, key="other", lock_dir=tmp_path)
        await other.wait()
        other.path.write_text(repr(time.time() + 30))  # a turn another process reserved
        await other.aclose()
        assert other.path.exists()
        other.path.unlink()

    anyio.run(main)


def test_retry_after_headers_decide_the_wait():
    from daytona import DaytonaRateLimitError

    from trl_sandbox.backends.daytona import _retry_after

    def wait(headers):
        return _retry_after(DaytonaRateLimitError("429", status_code=429, headers=headers))

    assert wait({"Retry-After": "2"}) == 2.0 and wait({"retry-after": "0"}) == 0.0
    assert wait({"Retry-After": "1", "Retry-After-Sandbox-Create": "7"}) == 7.0  # the longest per-limit wait
    assert wait({}) == 1.0 and wait({"Retry-After": "soon"}) == 1.0 and wait({"Retry-After": "999"}) == 60.0


def test_compiled_languages_run_through_the_remote_harness(service):
    """C++ and Java completions through the Daytona API (see ``test_languages.check_remote_languages``)."""
    from test_languages import check_remote_languages

    check_remote_languages(config)


def test_code_environment_sessions_run_through_the_session_api(service, caplog):
    """CodeEnvironment sessions through Daytona's session API: one session and one ``runAsync`` command per
    interpreter, input without echo, stdout followed through the log websocket, the session deleted at the end (see
    ``test_environment.check_remote_sessions``)."""
    from test_environment import check_remote_sessions

    check_remote_sessions(config, service, caplog)
    executions = service.bodies("POST", "/toolbox/process/session/exec")
    assert len(executions) == 5 and all(e["runAsync"] and e["suppressInputEcho"] for e in executions)
    assert executions[0]["command"] == ("cd /tmp/trl-sandbox && timeout -k 2 3600 python3 "
                                      f"/tmp/trl-sandbox/{HARNESS_NAME} session")
    assert service.open_sessions == []


SESSION_SIGNAL_SCRIPT = textwrap.dedent("""
    import json, sys, time
    from trl_sandbox import CodeEnvironment, SandboxConfig
    config = SandboxConfig(sandbox_backend="daytona", sandbox_pool_size=1,
                           sandbox_backend_options={"use_deprecated_polling": True})
    row = json.loads(sys.argv[1])
    with CodeEnvironment.factory(config) as make_env:
        envs = [make_env(), make_env()]
        for env in envs:
            env.reset(**row)
            env.python("x = 1")
        print("ready", flush=True)
        time.sleep(120)  # mid-rollout: two sessions open
""")


def test_sigterm_mid_rollout_deletes_the_session_sandboxes(service):
    """A trainer killed with SIGTERM while CodeEnvironment sessions run on Daytona: every sandbox is deleted, the
    session sandboxes as the scoring one, and the signal still ends the process."""
    from test_languages import ROW

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", SESSION_SIGNAL_SCRIPT, json.dumps(ROW)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        assert len(service.alive) == 3 and len(service.open_sessions) == 2
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    finally:
        proc.kill()
    assert proc.returncode == -signal.SIGTERM, proc.stderr.read()
    assert service.alive == [] and service.interactive == {}


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
