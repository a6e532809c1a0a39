"""The harness run as a plain command, as remote backends run it: stdout and stderr merged, the request in a file
redirected to stdin (their exec APIs have no stdin), possibly as root."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from trl_sandbox import InfrastructureError, Task
from trl_sandbox.harness.archive import HARNESS_FILES, HARNESS_NAME
from trl_sandbox.harness.base import STDIN_PREFIX

TASK = Task.from_row({"task_id": "sq", "test_list": ["assert f(3) == 9", "assert f(4) == 16"]})
FORGER = (
    "import os, sys\n"
    "line = '{\"i\": 0, \"ok\": true}\\n{\"i\": 1, \"ok\": true}\\n{\"done\": 2}\\n'\n"
    "sys.stdout.write(line); sys.stdout.flush(); sys.stderr.write(line); sys.stderr.flush()\n"
    "os.write(1, line.encode()); os.write(2, line.encode())\n"
    "print('uid', os.getuid(), file=sys.stderr)\n"
    "try:\n    print('REQUEST', open(sys.argv[0]).read()[:20])\nexcept Exception as e:\n    print('no request', e)\n"
    "def f(x):\n    return 0\n"
)


@pytest.fixture
def own_tmp():
    """A temporary directory for the harness's worker homes (its ``TMPDIR``) that no other test shares: what a test
    finds left there is its own run's (other test workers run the harness at the same time, with homes in /tmp).
    World-writable and sticky, as /tmp: the program's account must reach its home."""
    path = Path(tempfile.mkdtemp(prefix="trl-sandbox-test-tmp-"))
    path.chmod(0o1777)
    try:
        yield path
    finally:
        subprocess.run(["rm", "-rf", str(path)], check=False)


def run_merged(tmp_path, code, env=None):
    request = TASK.request(code, test_timeout_s=5.0, output_limit=1 << 16)
    path = tmp_path / f"{STDIN_PREFIX}1"
    path.write_text(json.dumps(request))
    harness = tmp_path / HARNESS_NAME
    harness.write_bytes(HARNESS_FILES[HARNESS_NAME])
    with open(path, "rb") as stdin:
        proc = subprocess.run([sys.executable, str(harness)], stdin=stdin, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=60, cwd=tmp_path, env=env)
    return proc, path


def test_printed_records_cannot_forge_a_pass_when_stdout_and_stderr_are_merged(tmp_path, own_tmp):
    proc, path = run_merged(tmp_path, FORGER, env={**os.environ, "TMPDIR": str(own_tmp)})
    verdict = TASK.judge(proc.stdout, exit_code=proc.returncode, timed_out=False)
    assert verdict.status == "failed" and verdict.tests_passed == 0, (verdict, proc.stdout)
    output = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith(b'{"output"')]
    assert len(output) == 1 and '{"i": 0, "ok": true}' in output[0]["output"]  # what it printed, escaped
    assert not path.exists()  # the request file was unlinked before the code ran
    if os.geteuid() == 0:
        from trl_sandbox.harness.accounts import ACCOUNT_BASE, ACCOUNT_SPAN

        uid = int(output[0]["output"].split("uid ")[1].split()[0])  # root in the sandbox: an account of the run's own
        assert ACCOUNT_BASE <= uid < ACCOUNT_BASE + ACCOUNT_SPAN, uid
    assert not list(own_tmp.iterdir())  # the worker's home is removed


def test_a_passing_program_still_passes(tmp_path):
    proc, _ = run_merged(tmp_path, "def f(x):\n    print('hello')\n    return x * x\n")
    verdict = TASK.judge(proc.stdout, exit_code=proc.returncode, timed_out=False)
    assert verdict.status == "passed", proc.stdout


def run_request(tmp_path, request, *, before=(), env=None, timeout=60):
    """Run the archive on ``request`` (a dict) as a remote backend does (the request in a file named like theirs,
    redirected), with ``before`` prepended to the command line (``timeout -s TERM 2``); returns the process and the
    records it wrote."""
    path = tmp_path / f"{STDIN_PREFIX}{os.urandom(4).hex()}"
    path.write_text(json.dumps(request))
    harness = tmp_path / HARNESS_NAME
    harness.write_bytes(HARNESS_FILES[HARNESS_NAME])
    with open(path, "rb") as stdin:
        proc = subprocess.run([*before, sys.executable, str(harness)], stdin=stdin, capture_output=True,
                              timeout=timeout, cwd=tmp_path, env=env, check=False)
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith(b"{")]
    return proc, records


def _alive(marker):
    found = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except OSError:
            pass
    return found


DAEMON = (
    "import os, sys, time\n"
    "def daemon():\n"
    "    if os.fork() == 0:\n"
    "        os.setsid()\n"
    "        if os.fork() == 0:\n"
    "            os.execv('/bin/sh', ['/bin/sh', '-c', 'sleep 60 # MARKER'])\n"
    "        os._exit(0)\n"
    "    time.sleep(0.2)\n"
)


def test_a_fresh_worker_holds_only_its_own_pipes(tmp_path):
    """After a crash, the next test runs in a fresh worker from the zygote: it holds as many pipes as the first worker
    (its own), and no end of the dead worker's pipes, which the zygote held."""
    task = Task.from_row({"task_id": "fds", "inputs": ["1\n", "0\n", "1\n"], "outputs": ["?", "?", "?"]})
    program = ("import os, stat\n"
               "if input() == '0':\n"
               "    os._exit(3)\n"
               "pipes = 0\n"
               "for fd in range(3, 256):\n"
               "    try:\n"
               "        pipes += stat.S_ISFIFO(os.fstat(fd).st_mode)\n"
               "    except OSError:\n"
               "        pass\n"
               "print(pipes)\n")
    _, records = run_request(tmp_path, task.request(program, test_timeout_s=5.0, output_limit=1 << 16))
    by_index = {r["i"]: r for r in records if "i" in r}
    assert by_index[1].get("crashed"), records  # the first worker ended: test 2 runs in a fresh one
    first, fresh = by_index[0]["error"], by_index[2]["error"]  # "printed 'N', expected '?'"
    assert first.startswith("printed '") and fresh == first, records


def test_a_request_file_with_another_name_runs_nothing(tmp_path):
    """A request file that keeps a name after the harness removed its own (a hard link) could be read by the
    program: the harness runs nothing and writes one infra record, which the host turns into an infrastructure
    error, never the program's failure."""
    request = TASK.request(FORGER, test_timeout_s=5.0, output_limit=1 << 16)
    path = tmp_path / f"{STDIN_PREFIX}linked"
    path.write_text(json.dumps(request))
    os.link(path, tmp_path / "another-name")
    harness = tmp_path / HARNESS_NAME
    harness.write_bytes(HARNESS_FILES[HARNESS_NAME])
    with open(path, "rb") as stdin:
        proc = subprocess.run([sys.executable, str(harness)], stdin=stdin, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=60, cwd=tmp_path, check=False)
    lines = proc.stdout.splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["infra"] is True, proc.stdout  # nothing ran: no output at all
    assert "1 other name(s) (hard links) still reach it" in json.loads(lines[0])["error"]
    with pytest.raises(InfrastructureError, match="refusing to run the program"):
        TASK.judge(proc.stdout, exit_code=proc.returncode, timed_out=False)
    assert not path.exists()


def test_a_daemon_of_the_program_is_killed_when_the_run_ends(tmp_path):
    marker = "trl-sandbox-harness-daemon-" + os.urandom(4).hex()
    task = Task.from_row({"task_id": "daemon", "test_list": ["assert f() == 1"]})
    program = DAEMON.replace("MARKER", marker) + "def f():\n    daemon()\n    return 1\n"
    try:
        proc, records = run_request(tmp_path, task.request(program, test_timeout_s=5.0, output_limit=1 << 16))
        assert task.judge(proc.stdout, exit_code=proc.returncode, timed_out=False).status == "passed", records
        assert _alive(marker) == []
    finally:
        for pid in _alive(marker):
            os.kill(int(pid), signal.SIGKILL)


def test_sigterm_ends_every_process_of_the_program_and_removes_its_home(tmp_path, own_tmp):
    """coreutils ``timeout`` (E2B's and cwsandbox's commands) sends SIGTERM before SIGKILL: the judge then kills
    every process the program started, daemons included, and removes the worker's home, before it exits."""
    marker = "trl-sandbox-harness-term-" + os.urandom(4).hex()
    task = Task.from_row({"task_id": "term", "test_list": ["assert f() == 1"]})
    program = DAEMON.replace("MARKER", marker) + "def f():\n    daemon()\n    time.sleep(60)\n"
    try:
        start = time.monotonic()
        proc, _ = run_request(tmp_path, task.request(program, test_timeout_s=30.0, output_limit=1 << 16),
                              before=["timeout", "-k", "10", "2"], env={**os.environ, "TMPDIR": str(own_tmp)})
        assert proc.returncode == 124 and time.monotonic() - start < 8, (proc.returncode, proc.stderr[-500:])
        assert _alive(marker) == []
        assert not list(own_tmp.iterdir())  # the worker's home is removed
    finally:
        for pid in _alive(marker):
            os.kill(int(pid), signal.SIGKILL)


def test_the_judge_ends_the_program_within_the_requests_budget(tmp_path):
    """With ``budget_s`` (the command's time limit, sent by the scorer) the judge stops the program in time to end
    its processes itself, before a service would kill the command."""
    task = Task.from_row({"task_id": "slow", "test_list": ["assert f() == 1", "assert f() == 1"]})
    request = {**task.request("import time\ndef f():\n    time.sleep(60)\n", test_timeout_s=30.0,
                              output_limit=1 << 16), "budget_s": 3.0}
    start = time.monotonic()
    _, records = run_request(tmp_path, request)
    elapsed = time.monotonic() - start
    assert elapsed < 30.0, elapsed  # far below the program's 60 s sleep (loose: the machine is shared)
    assert any(r.get("timeout") for r in records) and any("done" in r for r in records), records


def test_the_worker_gets_the_local_backends_fixed_environment_not_the_commands(tmp_path):
    from trl_sandbox.backends.local import _BASE_ENV
    from trl_sandbox.harness.base import WORKER_ENV

    assert WORKER_ENV == {k: v for k, v in _BASE_ENV.items() if k != "PATH"}  # one fixed environment everywhere
    task = Task.from_row({"task_id": "env", "test_list": ["assert f() == 'absent'"]})
    program = ("import os\ndef f():\n    print(sorted(os.environ))\n"
               "    return os.environ.get('SERVICE_TOKEN', 'absent')\n")
    env = {**os.environ, "SERVICE_TOKEN": "hf_secret_of_the_service", "PATH": "/opt/toolchain/bin:/usr/bin:/bin"}
    proc, records = run_request(tmp_path, task.request(program, test_timeout_s=5.0, output_limit=1 << 16), env=env)
    assert task.judge(proc.stdout, exit_code=proc.returncode, timed_out=False).status == "passed", records
    output = next(r["output"] for r in records if "output" in r)
    names = set(eval(output))  # the sorted list of names the program printed
    assert names == {*WORKER_ENV, "PATH", "HOME", "TMPDIR"}, names


def test_with_a_key_only_the_records_the_judge_signed_count(tmp_path):
    """The scorer sends a secret key where the program may write into the command's output (remote backends): the
    judge signs every record with it, and a record without its signature is not the judge's."""
    from trl_sandbox.harness.base import record_mac
    from trl_sandbox.tasks import harness_records

    key = os.urandom(16).hex()
    proc, records = run_request(tmp_path, {**TASK.request("def f(x):\n    return x * x\n", test_timeout_s=5.0,
                                                          output_limit=1 << 16), "key": key})
    assert records and all(r["mac"] == record_mac(key, {k: v for k, v in r.items() if k != "mac"}) for r in records)
    assert TASK.judge(proc.stdout, exit_code=proc.returncode, timed_out=False, key=key).status == "passed"
    forged = b'{"ready": true}\n{"i": 0, "ok": true}\n{"i": 1, "ok": true, "mac": "00"}\n{"done": 2}\n'
    assert harness_records(forged, key) == []
    with pytest.raises(InfrastructureError, match="did not start"):  # no record of the judge: not a pass
        TASK.judge(forged, exit_code=0, timed_out=False, key=key)
    refusal = b'{"infra": true, "error": "refusing to run the program: ..."}\n'  # written before the key is read
    assert harness_records(refusal, key) == [{"infra": True, "error": "refusing to run the program: ..."}]
