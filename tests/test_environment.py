"""CodeEnvironment: sandboxed, persistent Python sessions as tools during rollouts, driven directly and through TRL's
real tool-calling loop (``GRPOTrainer(environment_factory=...)``) with the tiny model, its generation scripted to
emit tool calls (a random model emits none)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from trl_sandbox import CodeEnvironment, SandboxConfig
from trl_sandbox.environment import environment_metrics

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_languages import ROW  # a code_contests row as published: 1 public, 1 private, 2 generated tests

RIGHT = "n = int(input())\nprint('YES' if n % 2 == 0 else 'NO')\n"


def config(root, **overrides):
    options = {"sandbox_pool_size": 1, "sandbox_tool_timeout": 1.5, "sandbox_tool_output_chars": 300, **overrides}
    return SandboxConfig(sandbox_backend_options={"root_dir": str(root)}, **options)


def test_sessions_persist_are_isolated_and_end_with_the_block(own_sandbox_root):
    with CodeEnvironment.factory(config(own_sandbox_root)) as make_env:
        a, b = make_env(), make_env()
        instructions = a.reset(**ROW)
        assert "`python(code)`" in instructions and "`submit(code)`" in instructions and "visible tests" in instructions
        b.reset(**ROW)
        assert a.python("x = 6 * 7\nopen('notes.txt', 'w').write('kept')\nprint('stored')") == "stored\n"
        assert a.python("x, open('notes.txt').read()") == "(42, 'kept')\n"  # variables and files persist
        where = a.python("import os\nos.path.abspath('notes.txt')").strip().strip("'")
        # another rollout sees neither the variables nor the files
        assert "NameError: name 'x' is not defined" in b.python("x")
        denied = b.python(f"open({where!r}).read()")
        assert "Error" in denied and "kept" not in denied
        # errors come back as the traceback's last lines; the session goes on
        assert a.python("1 / 0").endswith("ZeroDivisionError: division by zero")
        assert a.python("x + 1") == "43\n"
        # no network, no host files
        # (TEST-NET-1, routed nowhere: a timeout would mean packets left the sandbox, so it does not count)
        denied = a.python("import socket\nsocket.create_connection(('192.0.2.1', 80), timeout=1)")
        assert "PermissionError" in denied or "Network is unreachable" in denied, denied
        assert "Error" in a.python(f"open({str(Path(__file__))!r}).read()")
        assert a.stats.calls == 7 and a.stats.errors == 3
        pool = a._bound.pool
        assert len(pool.live_sandboxes()) == 3  # one scoring sandbox, one session each
    assert pool.live_sandboxes() == [] and list(own_sandbox_root.iterdir()) == []


def test_timeouts_cut_output_and_lost_sessions(own_sandbox_root):
    with CodeEnvironment.factory(config(own_sandbox_root)) as make_env:
        env = make_env()
        env.reset(**ROW)
        env.python("kept = 1")
        out = env.python("while True:\n    pass")
        assert "stopped after the time limit of 1.5 s; the session and its variables remain" in out
        assert env.python("kept") == "1\n" and env.stats.timeouts == 1
        # a cell that ignores the interrupt: the session is killed and restarted
        out = env.python("while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n"
                         "        pass")
        assert "did not stop: the session was restarted; variables and files are lost" in out
        assert "NameError" in env.python("kept") and env.stats.timeouts == 2
        out = env.python("print('x' * 5000)")
        assert "characters cut" in out and "output cut to 300 characters" in out and len(out) < 400
        assert "the session was restarted" in env.python("import os\nos._exit(0)")
        assert env.python("print('back')") == "back\n"
        assert env.python("pass") == "[no output]"


def test_submit_reward_and_no_submission(own_sandbox_root):
    with CodeEnvironment.factory(config(own_sandbox_root, sandbox_no_submission_reward=-0.5)) as make_env:
        right, wrong, silent, broken = make_env(), make_env(), make_env(), make_env()
        for env in (right, wrong, silent):
            env.reset(**ROW)
        assert broken.reset(task_id="x", prompt="no tests here") is None  # not a task: no tools text, reward None
        assert right.submit(f"```python\n{RIGHT}```") == "Submitted. Visible tests: 1/1 passed."
        summary = wrong.submit("print('YES')")
        assert summary == "Submitted. Visible tests: 1/1 passed."  # the public test is even: wrong only later
        assert "does not pass the visible tests (error): SyntaxError" in right.submit("print(")
        right.submit(RIGHT)  # the last submission counts
        metrics = environment_metrics([right, wrong, silent])
        rewards = [right.get_reward(), wrong.get_reward(), silent.get_reward(), broken.get_reward()]
        assert rewards == [1.0, 0.5, -0.5, None]
        assert (metrics["sandbox/tool_calls_per_rollout"], metrics["sandbox/submissions"],
                metrics["sandbox/submitted"], metrics["sandbox/tool_errors"]) == (4 / 3, 4.0, 2 / 3, 0.0)
        assert metrics["sandbox/tool_seconds_p95"] >= metrics["sandbox/tool_seconds_mean"] > 0


def test_sessions_are_released_and_reused(own_sandbox_root):
    with CodeEnvironment.factory(config(own_sandbox_root, sandbox_max_sessions=2)) as make_env:
        envs = [make_env() for _ in range(2)]
        for _ in range(3):  # three rollouts each: at most two session sandboxes, created once
            for env in envs:
                env.reset(**ROW)
                env.python("print(1)")
            for env in envs:
                env.get_reward()
        pool = envs[0]._bound.pool
        assert pool.stats.sessions_created == 2 and len(pool.live_sandboxes()) == 3
        # a third concurrent session waits for a free sandbox: released by the next reset of another rollout
        extra = make_env()
        extra.reset(**ROW)
        envs[0].reset(**ROW)
        envs[0].python("1")
        envs[1].reset(**ROW)  # ends no session (it has none): one is still free
        assert extra.python("2") == "2\n"


def test_concurrent_tool_calls_give_trl_the_same_results(own_sandbox_root):
    """``run_tool_calls`` runs a turn's calls of many rollouts at once; the calls TRL then makes return the kept
    results, in order, and a call that was not run ahead runs as usual. Each call notes its own start and end
    (``t0``, ``t1``, wall clock) in its session: kept results started before ``run_tool_calls`` returned, and the
    sleeps of different rollouts overlapped (no timed bound: the machine is shared)."""
    import time

    with CodeEnvironment.factory(config(own_sandbox_root, sandbox_pool_size=2)) as make_env:
        envs = [make_env() for _ in range(6)]
        for env in envs:
            env.reset(**ROW)
            env.python("pass")  # sessions started
        slow = [f"import time\nt0 = time.time()\ntime.sleep(0.5)\nt1 = time.time()\nv = {i}\nprint(v)"
                for i in range(6)]
        calls = [(env, [("python", {"code": slow[i]}), ("python", {"code": "v * 10"})])
                 for i, env in enumerate(envs)]
        CodeEnvironment.run_tool_calls(calls)
        returned = time.time()
        assert [env.python(slow[i]) for i, env in enumerate(envs)] == [f"{i}\n" for i in range(6)]
        assert [env.python("v * 10") for env in envs] == [f"{i * 10}\n" for i in range(6)]
        assert envs[0].python("v + 1") == "1\n"  # not run ahead: runs now
        spans = [tuple(map(float, env.python("print(t0, t1)").split())) for env in envs]
        assert all(t1 <= returned for _, t1 in spans), (returned, spans)  # kept results: no second run
        overlapping = max(sum(a0 < t1 and t0 < a1 for a0, a1 in spans) for t0, t1 in spans)
        assert overlapping >= 2, spans  # the pool's two sandboxes ran rollouts' calls at the same time


# -- TRL's real tool loop ----------------------------------------------------------------------------------------------

SCRIPT = [
    {"name": "python", "arguments": {"code": "x = 6 * 7\nprint(x)"}},
    {"name": "submit", "arguments": {"code": RIGHT}},
    "Submitted.",
]


@pytest.fixture(scope="module")
def tool_model(tmp_path_factory):
    pytest.importorskip("trl")
    from trl_sandbox.tiny import build_tool_calling_tiny_model

    path = tmp_path_factory.mktemp("tool-model")
    model, tokenizer = build_tool_calling_tiny_model(seed=0)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def scripted(base):
    """``base`` (a GRPOTrainer class) playing :data:`SCRIPT` (see :func:`trl_sandbox.tiny.scripted_policy`)."""
    from trl_sandbox.tiny import scripted_policy

    return scripted_policy(base, SCRIPT)


def dataset(n):
    from datasets import Dataset

    row = {**ROW, "prompt": [{"role": "user", "content": ROW["description"]}]}
    return Dataset.from_list([row] * n)


@pytest.mark.slow
def test_a_plain_grpo_trainer_runs_the_tool_calls(tool_model, tmp_path, own_sandbox_root):
    from trl import GRPOConfig, GRPOTrainer

    os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"
    with CodeEnvironment.factory(config(own_sandbox_root)) as make_env:
        trainer = scripted(GRPOTrainer)(
            model=tool_model, reward_funcs=[], train_dataset=dataset(4), environment_factory=make_env,
            args=GRPOConfig(output_dir=str(tmp_path), max_steps=1, num_generations=2, per_device_train_batch_size=4,
                            max_completion_length=256, use_cpu=True, bf16=False, report_to="none", logging_steps=1))
        trainer.train()
        pool = trainer.environments[0]._bound.pool
    logged = trainer.state.log_history[0]
    assert logged["tools/call_frequency"] == 2.0 and logged["tools/failure_frequency"] == 0.0
    assert logged["rewards/CodeEnvironment/mean"] == 1.0  # the submission passed all 4 tests
    assert pool.live_sandboxes() == [] and list(own_sandbox_root.iterdir()) == []


@pytest.mark.slow
def test_sandbox_grpo_trainer_runs_a_turn_at_once_and_logs_tool_metrics(tool_model, tmp_path, own_sandbox_root,
                                                                        monkeypatch):
    from trl_sandbox import SandboxGRPOConfig, SandboxGRPOTrainer

    os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"
    turns = []
    real = CodeEnvironment.run_tool_calls.__func__
    monkeypatch.setattr(CodeEnvironment, "run_tool_calls",
                        classmethod(lambda cls, calls: (turns.append(len(calls)), real(cls, calls))[1]))
    trainer = scripted(SandboxGRPOTrainer)(  # no reward_funcs: the environment's reward is the only one
        model=tool_model, train_dataset=dataset(8), environment_factory=CodeEnvironment,
        args=SandboxGRPOConfig(output_dir=str(tmp_path), max_steps=2, num_generations=2, per_device_train_batch_size=4,
                               max_completion_length=256, report_to="none", logging_steps=1, sandbox_pool_size=1,
                               sandbox_backend_options={"root_dir": str(own_sandbox_root)}))
    assert trainer.reward_func_names == ["CodeEnvironment"]
    trainer.train()
    assert turns == [4, 4, 4, 4]  # 2 steps x 2 turns, each turn's 4 rollouts run together
    records = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    steps = [r for r in records if "sandbox/tool_calls_per_rollout" in r]
    assert len(steps) == 2 and all(r["sandbox/tool_calls_per_rollout"] == 2.0 for r in steps)
    assert all(r["sandbox/submitted"] == 1.0 and r["rewards/CodeEnvironment/mean"] == 1.0 for r in steps)
    assert all(r["sandbox/tool_seconds_p95"] >= r["sandbox/tool_seconds_mean"] > 0 for r in steps)
    assert trainer.scorer.pool.live_sandboxes() == [] and list(own_sandbox_root.iterdir()) == []


@pytest.mark.slow
def test_a_crash_mid_rollout_leaves_no_session(tool_model, tmp_path, own_sandbox_root):
    from trl_sandbox import SandboxGRPOConfig, SandboxGRPOTrainer

    os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"

    class Crashing(scripted(SandboxGRPOTrainer)):
        def _generate_single_turn(self, prompt_ids, *args, **kwargs):
            if any(self._tokenizer.decode(ids).count("<tool_response>") for ids in prompt_ids):
                assert self.scorer.pool.stats.sessions_created == 4  # the sessions exist
                raise RuntimeError("generation failed")
            return super()._generate_single_turn(prompt_ids, *args, **kwargs)

    trainer = Crashing(
        model=tool_model, reward_funcs=[], train_dataset=dataset(4), environment_factory=CodeEnvironment,
        args=SandboxGRPOConfig(output_dir=str(tmp_path), max_steps=1, num_generations=2, per_device_train_batch_size=4,
                               max_completion_length=256, report_to="none", sandbox_pool_size=1,
                               sandbox_backend_options={"root_dir": str(own_sandbox_root)}))
    with pytest.raises(RuntimeError, match="generation failed"):
        trainer.train()
    assert trainer.scorer.pool.live_sandboxes() == [] and list(own_sandbox_root.iterdir()) == []


# -- AsyncGRPOTrainer: rewards and environments live in a spawned process ---------------------------------------------

SPAWN = """
import functools, json, multiprocessing, pickle, sys
sys.path.insert(0, sys.argv[2])
from test_environment import RIGHT, ROW, config, run_in_spawned_process
from trl_sandbox import CodeEnvironment, CodeReward

options = config(sys.argv[1])
reward = CodeReward.from_config(options)
make_env = functools.partial(CodeEnvironment, config=options)
pickle.dumps((reward, make_env))  # what AsyncRolloutWorker.start checks first
ctx = multiprocessing.get_context("spawn")
queue = ctx.Queue()
process = ctx.Process(target=run_in_spawned_process, args=(reward, make_env, ROW, queue))
process.start()
result = queue.get(timeout=120)
process.join(60)
print(json.dumps([process.exitcode, result, reward.scorer.pool.started]))
"""


def run_in_spawned_process(reward, make_env, row, queue):
    """What ``trl.experimental.async_grpo``'s rollout worker does with what it was given: unpickled in a fresh
    (spawned) interpreter, score completions and run a rollout."""
    rewards = reward([RIGHT, "print('NO')"], prompts=["", ""], **{k: [v, v] for k, v in row.items()})
    env = make_env()
    env.reset(**row)
    env.python("x = 1")
    env.submit(RIGHT)
    queue.put((rewards, env.python("x + 1"), env.get_reward()))


def test_reward_and_environment_factory_pickle_into_a_spawned_process(own_sandbox_root):
    """``AsyncGRPOTrainer`` pickles ``reward_funcs`` and ``environment_factory`` into a spawned, CUDA-free process.
    There, a reward built with ``CodeReward.from_config`` and ``partial(CodeEnvironment, config=...)`` start their
    own pools from the config, and delete them when that process ends. (The trainer itself needs a vLLM server and a
    GPU; this runs what it runs in its scoring process, the same way. The spawning runs in a subprocess of its own,
    so that multiprocessing's resource tracker ends with it.)"""
    import subprocess

    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-c", SPAWN, str(own_sandbox_root), str(Path(__file__).parent)],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    exitcode, (rewards, out, env_reward), parent_pool_started = json.loads(proc.stdout.strip().splitlines()[-1])
    assert exitcode == 0 and rewards == [1.0, 0.5] and out == "2\n" and env_reward == 1.0
    assert parent_pool_started is False  # the parent's copy never started a pool
    assert list(own_sandbox_root.iterdir()) == []  # the child's pools were deleted when it ended


def test_more_rollouts_than_session_sandboxes_is_one_error_at_construction(tool_model, tmp_path):
    """Sessions are held until the batch's rewards: a batch with more rollouts than ``sandbox_max_sessions`` would
    wait for sandboxes that free only after it. Said at once, with the fix."""
    from trl_sandbox import ConfigurationError, SandboxGRPOConfig, SandboxGRPOTrainer

    os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"
    with pytest.raises(ConfigurationError, match="8 rollouts per process .* sandbox_max_sessions=4; raise"):
        SandboxGRPOTrainer(model=tool_model, train_dataset=dataset(8), environment_factory=CodeEnvironment,
                           args=SandboxGRPOConfig(output_dir=str(tmp_path), num_generations=2,
                                                  per_device_train_batch_size=8, sandbox_max_sessions=4))


# -- remote backends (driven from test_daytona.py and test_cwsandbox.py through their fake services) -------------------


def check_remote_sessions(config, service, caplog):
    """CodeEnvironment on a remote backend, through the real SDK against a fake service (``config(**overrides)``
    makes its ``SandboxConfig``): each session is one long-lived ``harness.py session`` command inside a remote
    sandbox, spoken to through the service's streaming API. Variables and files persist, rollouts are separated,
    timeouts interrupt, output is cut, a dead interpreter restarts, submissions are judged, and nothing is left on
    the service. The fakes run commands in local sandboxes as an unprivileged user, so the session says it cannot
    clean up after itself: each rollout gets a new sandbox, and one warning says so."""
    import logging

    from trl_sandbox import environment

    environment._WARNED_NOT_ISOLATED.clear()
    caplog.set_level(logging.WARNING, logger="trl_sandbox")
    overrides = {"sandbox_pool_size": 1, "sandbox_tool_timeout": 1.5, "sandbox_tool_output_chars": 300}
    with CodeEnvironment.factory(config(**overrides)) as make_env:
        a, b = make_env(), make_env()
        a.reset(**ROW)
        b.reset(**ROW)
        assert a.python("x = 6 * 7\nopen('notes.txt', 'w').write('kept')\nprint('stored')") == "stored\n"
        assert a.python("x, open('notes.txt').read()") == "(42, 'kept')\n"
        assert "NameError: name 'x' is not defined" in b.python("x")
        assert "No such file" in b.python("open('notes.txt').read()")
        assert a.python("1 / 0").endswith("ZeroDivisionError: division by zero")
        out = a.python("while True:\n    pass")
        assert "stopped after the time limit of 1.5 s; the session and its variables remain" in out
        assert a.python("x + 1") == "43\n"
        out = a.python("print('é' * 5000)")  # non-ASCII output crosses the text stream intact
        assert "ééé" in out and "characters cut" in out and len(out) < 400
        assert "the session was restarted" in a.python("import os\nos._exit(0)")
        assert a.python("print('back')") == "back\n"
        assert service.break_sessions() == 2  # the service loses both interpreters: not the model's fault...
        lost = a.python("print('x')")
        assert lost.startswith("[the interpreter ended (") and "the session was restarted" in lost
        assert a.python("print('again')") == "again\n"  # ...and the next call gets a new session
        assert a.submit(RIGHT) == "Submitted. Visible tests: 1/1 passed."
        b.submit("print('NO')")
        assert [a.get_reward(), b.get_reward()] == [1.0, 0.5]
        a.reset(**ROW)  # a new rollout: a new session
        assert "NameError" in a.python("x")
        pool = a._bound.pool
        # not isolated (unprivileged): the sandboxes of the ended sessions were deleted, not reused
        assert pool.stats.sessions_created == 5  # a, b, a's two restarts, a's second rollout
    assert service.alive == []
    warnings = [r.getMessage() for r in caplog.records if "cannot clean up after itself" in r.getMessage()]
    assert len(warnings) == 1 and "each CodeEnvironment rollout gets a new sandbox" in warnings[0]


ROOT_SESSIONS = r"""
import json, os, signal, subprocess, sys, time

harness = sys.argv[1]


def start():
    p = subprocess.Popen([sys.executable, harness, "session"], cwd=os.path.dirname(harness),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    return p, json.loads(p.stdout.readline())


def cell(p, code):
    p.stdin.write((json.dumps({"code": code, "timeout": 5, "limit": 10000}) + "\n").encode())
    p.stdin.flush()
    return json.loads(p.stdout.readline())


def nobody():  # the live processes of the sessions' accounts (each session has one: trl_sandbox.harness.accounts)
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                status = open("/proc/%s/status" % name).read()
            except OSError:
                continue
            uid = [line for line in status.splitlines() if line.startswith("Uid:")][0].split()[1:]
            if int(uid[0]) in ACCOUNTS and "\tZ" not in status.split("State:")[1].splitlines()[0]:
                found.append(int(name))
    return found


LEAVE = '''
import os, subprocess
print(os.geteuid(), os.getcwd(), os.environ["HOME"] == os.getcwd())
open("/tmp/leak-file", "w").write("secret")
open("/tmp/shared/nested-leak", "w").write("secret")
os.mkdir("/dev/shm/leak-dir")
open("here.txt", "w").write("x")
subprocess.Popen(["sleep", "300"], start_new_session=True)  # a daemon of its own session
print([line for line in open("/proc/self/status") if line.startswith("NoNewPrivs")][0].split()[1])
'''
HOLDS = '''
import os
held = False
for fd in os.listdir("/proc/self/fd"):
    try:
        held = held or "trl-sandbox-accounts" in os.readlink("/proc/self/fd/" + fd)
    except OSError:  # the listing's own descriptor, closed since
        pass
print(held)
'''  # whether the code holds its account's claim (it must not)
LOOK = "import os\nprint([os.path.exists(p) for p in ('/tmp/leak-file', '/dev/shm/leak-dir')])"
report = {}
os.mkdir("/tmp/shared")
os.chmod("/tmp/shared", 0o1777)  # root's, world-writable, as /tmp/.X11-unix
# 1: a session that ends politely: its supervisor sweeps after it
s1, report["hello"] = start()
report["left"] = cell(s1, LEAVE)["out"].split()
report["holds_claim"] = cell(s1, HOLDS)["out"].strip()
report["nobody_during"] = len(nobody())
s1.stdin.write(b'{"close": true}\n')
s1.stdin.flush()
report["exit"] = s1.wait(20)
report["after_close"] = [nobody(), os.path.exists("/tmp/leak-file"), os.path.exists("/dev/shm/leak-dir"),
                         os.path.exists("/tmp/shared/nested-leak"), os.path.exists(report["left"][1])]
# 2: a session whose supervisor is killed (a lost stream): the next session sweeps before it starts
s2, _ = start()
cell(s2, LEAVE)
s2.kill()
s2.wait()
report["after_kill"] = [len(nobody()) > 0, os.path.exists("/tmp/leak-file")]
s3, report["hello3"] = start()
report["seen"] = cell(s3, LOOK)["out"].strip()
report["nobody_in_s3"] = len(nobody())
s3.stdin.close()  # the end of stdin also ends a session
report["exit3"] = s3.wait(20)
report["after_eof"] = nobody()
print(json.dumps(report))
"""


def test_a_remote_session_as_root_runs_as_an_account_of_its_own_and_leaves_nothing_for_the_next(tmp_path):
    """On a remote backend one sandbox serves one session after another. Run as root there (cwsandbox's
    ``python:3.11``, Daytona with ``os_user="root"``), ``harness.py session`` runs the cells as an account of the
    session's own (never ``nobody``, which other runs on the machine may share) with no-new-privs in a directory of
    its own, and removes what that account left (processes, daemons included, and files in the temporary
    directories): after a session that ends, and before the next one (a session whose supervisor was killed: its
    account's claim, which no process holds any more, is swept). Run here the way a remote sandbox runs it, as root in the harness's directory, inside a
    PID and mount namespace of the test's own with fresh ``/tmp``, ``/var/tmp``, ``/dev/shm`` and ``/run`` (the account
    registry, which the machine's own judges also sweep), so that the sweep cannot touch this machine's."""
    import shutil
    import subprocess

    from trl_sandbox.harness.archive import HARNESS_FILES, HARNESS_NAME

    skip = pytest.fail if os.environ.get("CI") == "true" else pytest.skip  # CI runs this suite as root: never skip
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        skip("needs root and unshare(1) for a PID and mount namespace of the test's own")
    python = None  # an interpreter nobody can run (a remote image's is), outside /tmp (the namespace replaces it)
    for candidate in (os.path.realpath(sys.executable), "/usr/bin/python3"):
        if not os.path.exists(candidate) or candidate.startswith("/tmp/"):
            continue
        try:
            subprocess.run([candidate, "-c", "import traceback, json"], user=65534, group=65534, extra_groups=[],
                           capture_output=True, check=True, cwd="/")
        except (OSError, subprocess.CalledProcessError):
            continue
        python = candidate
        break
    if python is None:
        skip("no Python interpreter here that nobody may run")
    from trl_sandbox.harness.accounts import ACCOUNT_BASE, ACCOUNT_SPAN

    driver = tmp_path / "driver.py"
    driver.write_text(f"ACCOUNTS = range({ACCOUNT_BASE}, {ACCOUNT_BASE + ACCOUNT_SPAN})\n" + ROOT_SESSIONS)
    harness = tmp_path / HARNESS_NAME
    harness.write_bytes(HARNESS_FILES[HARNESS_NAME])
    script = ("set -e; mount --make-rprivate /; mount -t tmpfs tmpfs /mnt; mkdir -m 755 /mnt/work; "
              f"cp {harness} /mnt/work/{HARNESS_NAME}; cp {driver} /mnt/driver.py; "
              "for d in /tmp /var/tmp /dev/shm; do mount -t tmpfs -o mode=1777 tmpfs $d; done; "
              # and /run, where the account registry is: the host's judges (other tests beside this one) claim from
              # it too, and one of them swept the killed session's account in its own /tmp, not in this one's
              "mount -t tmpfs -o mode=755 tmpfs /run; "
              f"exec env TMPDIR=/tmp {python} /mnt/driver.py /mnt/work/{HARNESS_NAME}")
    proc = subprocess.run(["unshare", "--pid", "--fork", "--mount", "--mount-proc", "sh", "-c", script],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["hello"] == {"ready": True, "isolated": True}
    uid, home, home_is_cwd, no_new_privs = report["left"]
    assert ACCOUNT_BASE <= int(uid) < ACCOUNT_BASE + ACCOUNT_SPAN, uid
    assert home.startswith("/tmp/trl-sandbox-session-") and home_is_cwd == "True"
    assert no_new_privs == "1" and report["nobody_during"] == 2  # the session and its daemon
    assert report["holds_claim"] == "False"  # the code can neither unlock its claim nor keep it alive in a daemon
    assert report["exit"] == 0 and report["after_close"] == [[], False, False, False, False]
    assert report["after_kill"] == [True, True]  # the killed supervisor could not sweep...
    assert report["hello3"] == {"ready": True, "isolated": True}
    assert report["seen"] == "[False, False]" and report["nobody_in_s3"] == 1  # ...the next session did
    assert report["exit3"] == 0 and report["after_eof"] == []
