"""Repository tasks scored end to end on the local backend, without a daemon: a SWE-bench 5.0 row pointing at an
image built here (tests/_repo_image.py), its gold patch, wrong and empty patches, through ``code_reward`` as TRL
calls it and through ``trl-sandbox score``; the tree each execution gets (fresh, its own, no network, no host)."""

from __future__ import annotations

import dataclasses
import json
import os

import anyio
import pytest

import _repo_image as R
from trl_sandbox import SandboxConfig, load_tasks
from trl_sandbox.backends.local import LocalBackend
from trl_sandbox.cli import main as cli_main
from trl_sandbox.repos import read_swebench, read_task
from trl_sandbox.repos.runner import refused, run_task
from trl_sandbox.rewards import CodeReward

WRONG = "mean(xs):\n    return sum(xs) / (len(xs) + 2)"


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """The image (in this uid's test cache, which ``ImageCache()`` finds through ``TRL_SANDBOX_CACHE``) and the
    repository's facts."""
    image, info = R.repo_image(tmp_path_factory.mktemp("repo-image"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRL_SANDBOX_CACHE", str(R.cache_root()))
        yield image, info


def _wrong_patch(info: dict) -> str:
    return info["patch"].replace("+    return sum(xs) / len(xs)", "+    return sum(xs) / (len(xs) + 2)")


def _in_backend(fn):
    async def main():
        backend = LocalBackend()
        await backend.start()
        sandbox = await backend.create({"test": "repo-runner"})
        try:
            return await fn(backend, sandbox)
        finally:
            await backend.delete(sandbox)
            await backend.aclose()

    return anyio.run(main)


def test_a_swebench_row_is_scored_through_code_reward_as_trl_calls_it(repo):
    image, info = repo
    row = R.swebench_row(info)
    completions = [
        "The count is off by one.\n```diff\n" + info["patch"] + "```",  # gold, in markdown
        "```diff\n" + _wrong_patch(info) + "```",  # applies, fixes nothing
        "I cannot find the bug.",  # no diff
        "```diff\n--- a/calc/missing.py\n+++ b/calc/missing.py\n@@ -1 +1 @@\n-x\n+y\n```",  # applies nowhere
    ]
    n = len(completions)
    prompts = [[{"role": "user", "content": row["problem_statement"]}]] * n
    columns = {key: [value] * n for key, value in row.items()}
    for mode, rewards in (("pass_rate", [1.0, 0.0, -1.0, -1.0]), ("all_or_nothing", [1.0, 0.0, -1.0, -1.0])):
        with CodeReward.from_config(SandboxConfig(sandbox_pool_size=2, sandbox_reward=mode)) as reward:
            assert reward(completions, prompts=prompts, **columns) == rewards
            results = reward.score(completions, prompts=prompts, **columns)
        assert [r.status for r in results] == ["passed", "failed", "error", "error"]
        gold, wrong, empty, stray = results
        assert (gold.tests_passed, gold.tests_total, gold.task_id) == (3, 3, "example__calc-1")
        assert wrong.tests_passed == 2 and wrong.failed_test == 0 and "FAIL_TO_PASS 0/1" in wrong.error
        assert "no unified diff" in empty.error and "applies by none" in stray.error
        assert "PASSED tests/test_calc.py::test_mean" in gold.output


def test_pass_rate_pays_the_fail_to_pass_rate_times_the_pass_to_pass_rate(repo):
    image, info = repo
    row = {**R.swebench_row(info), "PASS_TO_PASS": json.dumps([*R.P2P, "tests/test_calc.py::test_missing"])}
    with CodeReward.from_config(SandboxConfig(sandbox_pool_size=1)) as reward:
        [result] = reward.score(["```diff\n" + info["patch"] + "```"], prompts=["fix it"],
                                **{k: [v] for k, v in row.items()})
    assert result.status == "failed" and result.reward == pytest.approx(1.0 * 2 / 3)


def test_trl_sandbox_score_reads_repository_rows(repo, tmp_path, capsys):
    image, info = repo
    tasks = tmp_path / "swebench.jsonl"
    tasks.write_text(json.dumps(R.swebench_row(info)) + "\n")
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps({"task_id": "example__calc-1", "completion": c}) + "\n"
                               for c in ("```diff\n" + info["patch"] + "```", "")))
    out = tmp_path / "out.jsonl"
    assert cli_main(["score", "--tasks", str(tasks), "--completions", str(samples), "--out", str(out),
                     "--sandbox-pool-size", "1"]) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["status"], r["reward"]) for r in sorted(records, key=lambda r: r["index"])] == [
        ("passed", 1.0), ("error", -1.0)]
    assert "1/2 passed" in capsys.readouterr().err


def test_an_image_missing_from_the_cache_is_not_the_models_fault(repo):
    image, info = repo
    row = {**R.swebench_row(info), "image": "example.com/not/imported:1"}
    with CodeReward.from_config(SandboxConfig(sandbox_pool_size=1)) as reward:
        [result] = reward.score(["```diff\n" + info["patch"] + "```"], prompts=["p"],
                                **{k: [v] for k, v in row.items()})
    assert result.status == "infra_error" and result.reward is None
    assert "not/imported" in result.error and "import" in result.error


def test_each_execution_gets_a_fresh_tree_of_its_own_without_network_or_host(repo, tmp_path):
    image, info = repo
    secret = tmp_path / "host-secret.txt"
    secret.write_text("host data")

    async def runs(backend, sandbox):
        first = await backend.exec_in_image(sandbox, image, ["/bin/bash", "-c", (
            "echo changed >> /testbed/calc/__init__.py; echo x > /etc/written; rm -f /usr/bin/git; id -u;"
            "cat /dev/fd/3; echo overwrite > /dev/fd/3 || echo sealed")], timeout_s=30, inputs=[b"the input\n"])
        second = await backend.exec_in_image(sandbox, image, ["/bin/bash", "-c", (
            f"tail -1 /testbed/calc/__init__.py; ls /etc/written 2>&1; command -v git; cat {secret} 2>&1;"
            "python3 -c 'import socket; socket.create_connection((\"10.0.0.1\", 80), timeout=3)' 2>&1 | tail -1;"
            "python3 -c 'import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); print(\"loopback ok\")';"
            "cat /proc/1/cmdline | tr '\\0' ' '; echo;"
            "python3 -c 'import ctypes; c = ctypes.CDLL(None, use_errno=True); "
            "print(\"mount\", c.mount(b\"t\", b\"/mnt\", b\"tmpfs\", 0, None), ctypes.get_errno())'")],
            timeout_s=30)
        return first, second

    first, second = _in_backend(runs)
    assert first.exit_code == 0 and first.stdout.decode().split("\n")[:3] == ["0", "the input", "sealed"]
    out = second.stdout.decode()
    assert "    return sum(xs) / (len(xs) + 1)" in out  # the first run's change is gone
    assert "No such file" in out and "/usr/bin/git" in out  # /etc/written gone, git back
    assert "host data" not in out and f"{secret}: No such file" in out
    assert "Network is unreachable" in out and "loopback ok" in out
    assert "/bin/bash -c" in out  # PID 1 of its tree is its own command
    assert "mount -1 1" in out  # EPERM: nothing can be mounted inside


def test_the_history_after_base_commit_is_gone_before_the_patch_runs(repo):
    image, info = repo
    task = read_swebench(R.swebench_row(info))
    probe = (f"#!/bin/bash\ncd /testbed\necho LOG $(git log --all --reflog --format=%H)\n"
             f"echo CATFILE $(git cat-file -t {info['fix_commit']} 2>/dev/null || echo missing)\n"
             "echo REFS $(git for-each-ref --format='%(refname)') STASH $(git stash list)\n")
    task = dataclasses.replace(task, eval_script=probe)

    async def go(backend, sandbox):
        return await run_task(backend, sandbox, image, task, "")

    log = _in_backend(go).log
    [history] = [line for line in log.splitlines() if line.startswith("LOG ")]
    assert info["base_commit"] in history and info["fix_commit"] not in history
    assert "CATFILE missing" in log and "REFS STASH\n" in log  # no ref, no stash left


def test_a_row_of_each_kind_is_told_apart():
    image_row = R.swebench_row({"base_commit": "a" * 40, "patch": "", "test_patch": "+x\n"})
    assert type(read_task(image_row)).__name__ == "RepoTask"
    assert type(read_task({"task_id": "t", "test_list": ["assert f() == 1"]})).__name__ == "Task"


@pytest.mark.parametrize("patch, why", [
    ("--- /dev/null\n+++ b/conftest.py\n@@ -0,0 +1 @@\n+import os\n", "conftest.py"),
    ("--- a/setup.cfg\n+++ b/setup.cfg\n@@ -1 +1,2 @@\n [metadata]\n+[tool:pytest]\n", "plugins"),
    ("--- a/calc/__init__.py\n+++ b/calc/__init__.py\n@@ -1 +1,2 @@\n x\n+print('PASSED tests/t.py::test_a')\n",
     "prints test results"),
    ("--- a/calc/__init__.py\n+++ b/calc/__init__.py\n@@ -1 +1,2 @@\n x\n+from _pytest import reports\n",
     "internals"),
    ("--- a/lib/x.pth\n+++ b/lib/x.pth\n@@ -1 +1 @@\n-a\n+import os\n", "x.pth"),
])
def test_patches_that_would_report_for_the_tests_are_refused(patch, why):
    assert why in refused(patch)


def test_ordinary_fixes_are_not_refused(repo):
    image, info = repo
    assert refused(info["patch"]) is None and refused(_wrong_patch(info)) is None
    assert refused("--- a/src/_pytest/x.py\n+++ b/src/_pytest/x.py\n@@ -1 +1 @@\n-a\n+from _pytest import x\n",
                   "pytest-dev/pytest") is None


def test_an_image_of_another_user_is_refused_with_the_fix(repo, tmp_path):
    from trl_sandbox.backends._trees import image_owner
    from trl_sandbox.errors import ConfigurationError

    foreign = tmp_path / "rootfs"
    foreign.mkdir()
    if os.geteuid() == 0:
        os.chown(foreign, 12345, 12345)
    else:
        pytest.skip("making a directory of another user needs root")
    with pytest.raises(ConfigurationError, match="import it again as this user"):
        image_owner(foreign)


def test_a_swesmith_row_is_scored_as_swesmith_scores_it(repo):
    image, info = repo
    row = R.swesmith_row(info)
    task = read_task(row)
    assert (task.source, task.eval_type, task.image) == ("swesmith", "swesmith", R.IMAGE_NAME)
    assert "pytest --disable-warnings --color=no --tb=no --verbose tests/test_calc.py" in task.eval_script
    fix = R.swesmith_fix()
    # the patch that edits the test it is judged by instead of the code: the test file is checked out again
    cheat = ("--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -4,2 +4,2 @@\n def test_add():\n"
             "-    assert add(2, 3) == 5\n+    assert add(2, 3) == 6\n")
    other = "```diff\n" + _wrong_patch(info) + "```"  # applies (to mean), fixes nothing
    completions = ["```diff\n" + fix + "```", "```diff\n" + cheat + "```", other]
    with CodeReward.from_config(SandboxConfig(sandbox_pool_size=2)) as reward:
        results = reward.score(completions, prompts=["p"] * 3, **{k: [v] * 3 for k, v in row.items()})
    assert [(r.status, r.reward) for r in results] == [("passed", 1.0), ("failed", 0.0), ("failed", 0.0)], [
        (r.error, r.output) for r in results]
    assert "tests/test_calc.py::test_add PASSED" in results[0].output


def test_a_swesmith_base_has_no_parent_with_the_fixed_code(repo):
    image, info = repo
    task = dataclasses.replace(read_task(R.swesmith_row(info)), eval_script=(
        "#!/bin/bash\ncd /testbed\necho COMMITS $(git rev-list --all --reflog | wc -l)\n"
        f"echo OLD $(git cat-file -t {info['base_commit']} 2>/dev/null || echo missing)\n"
        "grep -c 'a + b + 1' calc/__init__.py\n"))

    async def go(backend, sandbox):
        return await run_task(backend, sandbox, image, task, R.swesmith_fix())

    log = _in_backend(go).log
    assert "COMMITS 1" in log and "OLD missing" in log and "\n0\n" in log  # one commit, the bug; the fix applied


def test_a_swesmith_bug_patch_that_does_not_apply_is_not_the_models_fault(repo):
    image, info = repo
    row = {**R.swesmith_row(info), "patch": "--- a/nothing.py\n+++ b/nothing.py\n@@ -1 +1 @@\n-a\n+b\n"}
    with CodeReward.from_config(SandboxConfig(sandbox_pool_size=1)) as reward:
        [result] = reward.score(["```diff\n" + R.swesmith_fix() + "```"], prompts=["p"],
                                **{k: [v] for k, v in row.items()})
    assert result.status == "invalid_task" and result.reward is None and "bug patch" in result.error


def test_a_harbor_directory_is_scored_by_its_verifier(repo, tmp_path):
    image, info = repo
    R.harbor_task(tmp_path / "tasks" / "calc-mean")
    R.harbor_task(tmp_path / "tasks" / "calc-json", test_sh=R.TEST_SH.replace(
        "echo 1 > /logs/verifier/reward.txt", "echo '{\"reward\": 0.5, \"other\": 1}' > /logs/verifier/reward.json"))
    R.harbor_task(tmp_path / "tasks" / "calc-silent", test_sh="#!/bin/bash\nexit 0\n")
    rows = load_tasks(tmp_path)  # a dataset directory, HarborSpec's layout
    assert [r["task_id"] for r in rows] == ["calc-json", "calc-mean", "calc-silent"]
    assert rows[1]["prompt"].startswith("Fix calc.mean") and rows[1]["task_format"] == "harbor"
    gold = "```diff\n" + info["patch"] + "```"
    completions = [gold, gold, "```diff\n" + _wrong_patch(info) + "```", gold]
    batch = [rows[0], rows[1], rows[1], rows[2]]
    columns = {key: [row[key] for row in batch] for key in batch[0]}
    with CodeReward.from_config(SandboxConfig(sandbox_pool_size=2)) as reward:
        results = reward.score(completions, **columns)
    assert [(r.status, r.reward) for r in results] == [
        ("failed", 0.5), ("passed", 1.0), ("failed", 0.0), ("error", -1.0)], [(r.error, r.output) for r in results]
    assert "reward is 0.5" in results[0].error and "no reward file" in results[3].error


def test_trls_harbor_rows_score_as_they_are(repo, tmp_path):
    """A row of TRL's HarborSpec.train_dataset: an empty prompt and the task's directory (no task_format)."""
    image, info = repo
    task_dir = R.harbor_task(tmp_path / "calc-mean")
    row = {"prompt": [{"role": "user", "content": ""}], "task_dir": str(task_dir), "task_index": 0}
    with CodeReward.from_config(SandboxConfig(sandbox_pool_size=1)) as reward:
        assert reward(["```diff\n" + info["patch"] + "```"], **{k: [v] for k, v in row.items()}) == [1.0]


def test_a_harbor_task_built_from_a_dockerfile_is_refused_with_the_fix(tmp_path):
    from trl_sandbox.errors import TaskFormatError

    R.harbor_task(tmp_path / "t", image=None)
    with pytest.raises(TaskFormatError, match=r"docker build -t NAME .*\(trl-sandbox images import"):
        load_tasks(tmp_path / "t")


def test_an_r2e_gym_row_is_scored_as_r2e_gym_scores_it(repo):
    image, info = repo
    row = R.r2e_row(info)
    task = read_task(row)
    assert (task.source, task.eval_type, task.task_id) == ("r2e", "r2e", f"calc-{info['fix_commit'][:12]}")
    completions = ["```diff\n" + info["patch"] + "```", "```diff\n" + _wrong_patch(info) + "```"]
    for mode, rewards in (("pass_rate", [1.0, 0.5]), ("all_or_nothing", [1.0, 0.0])):
        with CodeReward.from_config(SandboxConfig(sandbox_pool_size=2, sandbox_reward=mode)) as reward:
            results = reward.score(completions, prompts=["p"] * 2, **{k: [v] * 2 for k, v in row.items()})
        assert [(r.status, r.reward) for r in results] == list(zip(["passed", "failed"], rewards)), [
            (r.error, r.output) for r in results]
    assert "PASSED r2e_tests/test_1.py::test_mean" in results[0].output


def test_r2e_gym_s_held_out_tests_are_out_of_the_tree_when_the_patch_is_applied(repo):
    from trl_sandbox.repos.runner import r2e_script

    image, info = repo
    # the runner's own steps up to the patch, then a look at the tree
    script = r2e_script(60).split("if git apply")[0] + "ls -a /testbed; ls /; exit 0\n"

    async def before_patch(backend, sandbox):
        return await backend.exec_in_image(sandbox, image, ["/bin/bash", "/dev/fd/3"], timeout_s=60,
                                           inputs=[script.encode(), b""])

    out = _in_backend(before_patch).stdout.decode()
    assert "calc" in out and "run_tests.sh" not in out and "r2e_tests" not in out, out
