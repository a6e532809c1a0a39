"""Repository tasks on the remote backends (``daytona``, ``e2b``, ``hf``) against their fake services: each execution
gets a sandbox of its own made from the task's image by the SDK's own parameter (Daytona's
``CreateSandboxFromImageParams(image=)``, an E2B template built from the image, an HF job's ``dockerImage``), runs
the same runner script as the local backend, as root, and is deleted after it. The fakes run such a sandbox's
commands in the local backend's trees of the image, with the service's command not the tree's PID 1 (as on a
service), and keep a command's output open while anything it left behind runs (as a service's process API does)."""

from __future__ import annotations

import importlib.util
import time

import _repo_image as R
import pytest
from test_hostile_repos import _patch_with

from trl_sandbox import SandboxConfig, load_tasks
from trl_sandbox.backends._remote import ROLE_LABEL
from trl_sandbox.images import ImageCache
from trl_sandbox.repos import read_swebench
from trl_sandbox.repos.runner import refused
from trl_sandbox.rewards import CodeReward

pytestmark = pytest.mark.timeout(600)
BACKENDS = ("daytona", "e2b", "hf")
E2B_TEMPLATE = "swe-demo"  # the E2B template a user built from the demo image
# A daemon started by the tests (its own session, away from pytest's process group) that writes a pass and an exit
# status of 0 straight into the eval script's output (the pipe pytest keeps a copy of while it captures fd 1), a
# second after the tests: the status line it forges would come after the recorded one if it were still alive when
# the script records it.
DAEMON = '''
import fcntl, os, stat, subprocess
out = [fd for fd in range(3, 256) if os.path.exists("/proc/self/fd/%d" % fd)
       and stat.S_ISFIFO(os.fstat(fd).st_mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE != os.O_RDONLY]
word = ">" * 5 + " Test Exit Code: 0"
for fd in out[:1]:
    subprocess.Popen(["/bin/sh", "-c", "sleep 1; printf '\\\\nFORGED-BY-DAEMON\\\\n%s\\\\n' '" + word + "'"],
                     stdout=fd, start_new_session=True)
'''


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """The demo image, in this uid's test cache."""
    return R.repo_image(tmp_path_factory.mktemp("repo-image"))


def _fake(kind: str, root):
    pytest.importorskip({"daytona": "daytona", "e2b": "e2b", "hf": "huggingface_hub"}[kind])
    if kind == "hf" and importlib.util.find_spec("huggingface_hub") is not None:
        import huggingface_hub

        if not hasattr(huggingface_hub, "Sandbox"):
            pytest.skip("huggingface_hub has no Sandbox")
    if kind == "daytona":
        from fake_daytona import FakeDaytona as cls
    elif kind == "e2b":
        from fake_e2b import FakeE2B as cls
    else:
        from fake_hf import FakeHF as cls
    server = cls(root)
    server.images = ImageCache(R.cache_root() / "images")
    if kind == "e2b":
        server.template_images = {E2B_TEMPLATE: R.IMAGE_NAME}
    server.start()
    return server


@pytest.fixture(scope="module")
def fakes(sandbox_root):
    started: dict[str, object] = {}
    yield lambda kind: started.get(kind) or started.setdefault(kind, _fake(kind, sandbox_root))
    for server in started.values():
        server.stop()


@pytest.fixture(params=BACKENDS)
def service(request, fakes, repo, monkeypatch, tmp_path):
    """``(kind, fake)``: the fake of one backend, its SDK pointed at it through the SDK's own variables, reset; the
    trainer's host has no image cache (``TRL_SANDBOX_CACHE`` empty): the service makes the sandboxes. At the end,
    every sandbox a repository task made is deleted and none is left."""
    kind = request.param
    fake = fakes(kind)
    fake.requests.clear()
    monkeypatch.setenv("TRL_SANDBOX_CACHE", str(tmp_path / "trainer-cache"))
    if kind == "daytona":
        for name, value in {"DAYTONA_API_KEY": "test-key", "DAYTONA_API_URL": fake.url, "DAYTONA_TARGET": "us"}.items():
            monkeypatch.setenv(name, value)
    elif kind == "e2b":
        for name, value in {"E2B_API_KEY": "test-key", "E2B_API_URL": fake.url, "E2B_SANDBOX_URL": fake.url,
                            "E2B_HTTP_VERSION": "1.1"}.items():
            monkeypatch.setenv(name, value)
    else:
        import huggingface_hub.constants
        from fake_hf import TOKEN

        monkeypatch.setenv("HF_ENDPOINT", fake.url)
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", fake.url)
        monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
        monkeypatch.setattr(huggingface_hub.constants, "HF_HOME", str(tmp_path / "hf-home"))
    before = set(fake.created)
    yield kind, fake
    deadline = time.monotonic() + 15
    while getattr(fake, "running", None) and time.monotonic() < deadline:
        time.sleep(0.1)
    made = [sid for sid in fake.created if sid not in before]
    left = fake.reap()
    assert left == [], f"this test left sandboxes on the fake service: {left}"
    assert set(made) <= set(fake.deleted), "a sandbox of this test was not deleted by the backend"


def config(kind: str, **overrides) -> SandboxConfig:
    options = {"daytona": {"use_deprecated_polling": True}, "e2b": {"templates": {R.IMAGE_NAME: E2B_TEMPLATE}},
               "hf": {}}[kind]
    return SandboxConfig(sandbox_backend=kind, sandbox_backend_options={**options, **overrides.pop("options", {})},
                         **overrides)


def _image_sandboxes(kind: str, fake) -> list[dict]:
    """The creation requests of sandboxes made from an image (a repository task's)."""
    found = []
    for method, path, body in fake.requests:
        if method != "POST" or not isinstance(body, dict):
            continue
        labels = body.get("labels") or body.get("metadata") or {}
        if isinstance(labels, dict) and labels.get(ROLE_LABEL):
            found.append(body)
    return found


def _score(kind, rows, completions, **overrides):
    columns = {key: [row[key] for row in rows] for key in rows[0]}
    with CodeReward.from_config(config(kind, sandbox_pool_size=2, **overrides)) as reward:
        return reward.score(completions, prompts=["Fix the bug."] * len(rows), **columns)


def test_a_swebench_row_is_scored_in_a_sandbox_made_from_its_image(service, repo):
    kind, fake = service
    _, info = repo
    row = R.swebench_row(info)
    wrong = info["patch"].replace("+    return sum(xs) / len(xs)", "+    return sum(xs) / (len(xs) + 2)")
    daemon = _patch_with(info, DAEMON)
    assert refused(daemon) is None
    results = _score(kind, [row] * 3, ["```diff\n" + info["patch"] + "```", "```diff\n" + wrong + "```", daemon])
    gold, bad, forged = results
    assert (gold.status, gold.reward, gold.tests_passed) == ("passed", 1.0, 3), (gold.error, gold.output)
    assert "PASSED tests/test_calc.py::test_mean" in gold.output
    assert (bad.status, bad.reward) == ("failed", 0.0), bad.error
    # the daemon was ended before the exit status was recorded: nothing it wrote reached the log
    assert (forged.status, forged.reward) == ("failed", 0.0), (forged.error, forged.output)
    assert "FORGED-BY-DAEMON" not in forged.output
    made = _image_sandboxes(kind, fake)
    assert len(made) == 3, made  # one sandbox per execution, each made from the image by the SDK's parameter
    if kind == "daytona":
        assert all(b["buildInfo"]["dockerfileContent"].strip() == f"FROM {R.IMAGE_NAME}" for b in made)
    elif kind == "e2b":
        assert {b["templateID"] for b in made} == {E2B_TEMPLATE}
    else:
        assert {b["dockerImage"] for b in made} == {R.IMAGE_NAME}


@pytest.mark.parametrize("service", ["daytona"], indirect=True)  # one backend suffices to show the attack works
def test_the_daemon_attack_is_caught_by_ending_what_the_tests_left(repo, service):
    """The attack above is a real one: with :data:`~trl_sandbox.repos.rows.END_OTHERS` out of the eval script,
    the daemon's status is the log's last word (the test would not catch a regression otherwise)."""
    kind, fake = service
    from trl_sandbox.repos import rows

    _, info = repo
    task = read_swebench(R.swebench_row(info))
    assert rows.END_OTHERS in task.eval_script
    row = R.swebench_row(info)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rows, "END_OTHERS", "true")
        (forged,) = _score(kind, [row], [_patch_with(info, DAEMON)])
    assert "FORGED-BY-DAEMON" in forged.output, forged.output


@pytest.mark.parametrize("service", ["daytona"], indirect=True)  # the same runner script on every backend
def test_a_harbor_task_is_scored_by_its_verifier_in_a_sandbox_of_its_image(service, repo, tmp_path, monkeypatch):
    kind, fake = service
    _, info = repo
    R.harbor_task(tmp_path / "tasks" / "calc-mean")
    (row,) = load_tasks(tmp_path / "tasks")
    gold = "```diff\n" + info["patch"] + "```"
    # without the image here, the verifier's working directory is not known: the infrastructure's failure
    (unknown,) = _score(kind, [row], [gold])
    assert (unknown.status, unknown.reward) == ("infra_error", None) and "images import" in unknown.error
    monkeypatch.setenv("TRL_SANDBOX_CACHE", str(R.cache_root()))  # the image imported on this host too
    (scored,) = _score(kind, [row], [gold])
    assert (scored.status, scored.reward) == ("passed", 1.0), (scored.error, scored.output)


def test_an_image_the_service_cannot_make_is_an_infrastructure_failure(service, repo):
    kind, fake = service
    _, info = repo
    row = {**R.swebench_row(info), "image": "example/not-imported:latest"}
    (result,) = _score(kind, [row], [info["patch"]])
    assert (result.status, result.reward) == ("infra_error", None), result
    if kind == "e2b":  # no template for it: the option to set is named
        assert "templates" in result.error, result.error


def test_a_backend_without_repository_tasks_says_so_and_never_scores_zero(repo):
    from trl_sandbox import Scorer
    from trl_sandbox.backends.mock import MockBackend
    from trl_sandbox.repos import read_task

    _, info = repo
    backend = MockBackend()
    with Scorer.from_config(SandboxConfig(sandbox_pool_size=1), backend=backend) as scorer:
        (result,) = scorer.score([read_task(R.swebench_row(info))], [info["patch"]])
    assert (result.status, result.reward) == ("infra_error", None)
    assert "the mock backend does not run repository tasks yet; use the local, ray" in result.error
    assert backend.requests == []  # nothing ran
