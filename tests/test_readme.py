"""Every code block of the README runs as a user runs it, and does what the README says.

Each block is matched to one runner below by what it contains; a block no runner recognises fails
``test_every_readme_block_has_a_runner``, so a new snippet cannot land untested. What a CPU machine without a hub
cannot run is substituted, and only that:

- the model id ``Qwen/Qwen3-1.7B-Base`` becomes a tiny random Qwen3 model saved locally (``trl_sandbox.tiny``);
- ``datasets.load_dataset("deepmind/code_contests", ...)`` returns a row written field for field from the published
  schema (``tests/test_formats.py``);
- the GPU launch scripts run with ``DRY_RUN=1`` (they print the ``accelerate launch`` command);
- the install steps are not rerun: they are checked to be the install of ``.ci/run``.

Every snippet runs in a subprocess whose temporary directory (so the local backend's default sandbox root) is this
module's own, checked empty afterwards.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text()
BLOCKS = [(m.group(1), m.group(2)) for m in re.finditer(r"(?ms)^```(\w*)\n(.*?)^```\s*$", README)]
#: Every test here runs the README's commands in subprocesses, each bounded below this (``run_user``: 600 s by
#: default), so that a slow machine fails on the subprocess's own timeout, with its output, not on pytest's.
pytestmark = pytest.mark.timeout(900)
CI_COMMAND = (REPO / ".ci" / "run").read_text().strip().splitlines()[-1]
INSTALL = "python3 -m venv .venv && . .venv/bin/activate && pip install torch==2.13.0 && pip install -e ."
QWEN = "Qwen/Qwen3-1.7B-Base"

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_formats import CODE_CONTESTS


def blocks(*needles):
    """The README blocks that contain every needle (at least one, or the README lost the snippet)."""
    found = [code for _lang, code in BLOCKS if all(n in code for n in needles)]
    assert found, f"no README block contains {needles}"
    return found


@pytest.fixture(scope="module")
def user_tmp():
    """A temporary directory for the snippets (``TMPDIR``): the local backend's default root goes in it, and must be
    empty after every snippet. Mode 0711 so that the sandbox uid can traverse it, as ``/tmp``."""
    path = Path(tempfile.mkdtemp(prefix="trl-sandbox-readme-"))
    path.chmod(0o711)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """The stand-in for ``Qwen/Qwen3-1.7B-Base``: a tiny random Qwen3 model and a locally trained tokenizer."""
    from trl_sandbox.tiny import build_tiny_model

    path = tmp_path_factory.mktemp("tiny-model")
    model, tokenizer = build_tiny_model(seed=0)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def run_user(args, cwd, user_tmp, timeout=600, **kwargs):
    """Run ``args`` as a user's shell would (the venv's ``bin`` first on PATH), then check the local backend left
    nothing in its default root."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "TMPDIR": str(user_tmp),
           "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
    env.update(kwargs.pop("env", {}))
    with subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          **kwargs) as child:
        try:
            out, err = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            # SIGTERM first: the command deletes its sandboxes on it (trl_sandbox.lifecycle), so a command that
            # ran out of time leaves nothing for the next test; SIGKILL only if it does not end.
            child.terminate()
            try:
                out, err = child.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                child.kill()
                out, err = child.communicate()
            pytest.fail(f"{shlex.join(map(str, args))[:200]} did not end within {timeout} s; its stderr ends:\n"
                        f"{(err or '')[-3000:]}")
    proc = subprocess.CompletedProcess(args, child.returncode, out, err)
    root = user_tmp / f"trl-sandbox-{os.geteuid()}"
    left = sorted(p.name for p in root.iterdir()) if root.exists() else []
    assert not left, f"left in the sandbox root: {left}"
    return proc


def run_python(code, cwd, user_tmp, prelude="", timeout=600):
    proc = run_user([sys.executable, "-c", prelude + code], cwd, user_tmp, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, proc.stderr[-4000:]
    return proc


# -- the runners ---------------------------------------------------------------------------------------------------

RUNNERS = {
    "quick start": ("--model tiny", "trl-sandbox plot"),
    "tests": ("python -m pytest",),
    "trainer": ("SandboxGRPOTrainer(", "trainer.train()"),
    "dataset rows": ("load_dataset(",),
    "scorer": ("Scorer.from_config",),
    "plain GRPOTrainer": ("GRPOTrainer(model=", "CodeReward.from_config"),
    "GPU": ('.[vllm]', "train_1gpu.sh"),
    "score": ("trl-sandbox score",),
}


def test_every_readme_block_has_a_runner():
    for lang, code in BLOCKS:
        matched = [name for name, needles in RUNNERS.items() if all(n in code for n in needles)]
        assert len(matched) == 1, f"README block ({lang}) matches {matched or 'no runner'}:\n{code}"
    assert len(BLOCKS) == len(RUNNERS)


def test_the_test_command_is_what_ci_runs():
    (code,) = blocks("python -m pytest")
    assert code.strip() == CI_COMMAND


@pytest.mark.slow
@pytest.mark.timeout(1500)  # above its command's own limit (1200 s: 300 steps took 358 s at load 5 to 10)
def test_the_quick_start_learns(tmp_path, user_tmp):
    """The README's first command (after its install, which is ``.ci/run``'s): a warm start on the warm-up tasks,
    then GRPO on held-apart tasks whose solutions the model never saw; the reward of the last quarter of the steps is
    at least 0.25 above the first quarter's, the pass rate rises with it, and the plot is drawn."""
    (code,) = blocks("--model tiny", "trl-sandbox plot")
    assert code.startswith(INSTALL + " && ") and INSTALL.removesuffix(".") in CI_COMMAND
    commands = code.strip().removeprefix(INSTALL + " && ").split(" && ")
    assert [c.split()[:2] for c in commands] == [["trl-sandbox", "train"], ["trl-sandbox", "plot"]]
    result = run_user(shlex.split(commands[0]), tmp_path, user_tmp, timeout=1200)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "warm start: 100 supervised steps on the 36 warm-up tasks" in result.stderr
    assert "Warning" not in result.stderr, result.stderr[-3000:]
    out = tmp_path / "runs" / "tiny"
    steps = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    steps = [s for s in steps if "reward" in s and "sandbox/pass_rate" in s]
    assert len(steps) == 300
    quarter = len(steps) // 4

    def mean(key, part):
        return sum(s[key] for s in part) / len(part)

    first, last = steps[:quarter], steps[-quarter:]
    assert mean("reward", last) - mean("reward", first) >= 0.25, (mean("reward", first), mean("reward", last))
    assert mean("sandbox/pass_rate", last) > mean("sandbox/pass_rate", first) + 0.1
    assert all(s["sandbox/infra_errors"] == 0 for s in steps)
    plot = run_user(shlex.split(commands[1]), tmp_path, user_tmp)
    assert plot.returncode == 0, plot.stderr
    assert (out / "plots" / "rewards.png").stat().st_size > 10_000
    assert (REPO / "docs" / "images" / "rewards.png").exists()  # the README shows this run's plot


@pytest.mark.slow
@pytest.mark.parametrize("needles", [RUNNERS["trainer"], RUNNERS["plain GRPOTrainer"]], ids=["sandbox", "plain"])
def test_the_training_snippets_train(needles, tmp_path, user_tmp, tiny_model):
    """The two training snippets, as written, with the tiny model in place of Qwen: one step each, metrics logged,
    nothing printed at exit."""
    (code,) = blocks(*needles)
    assert code.count(QWEN) == 1
    run_python(code.replace(QWEN, tiny_model), tmp_path, user_tmp)
    if "SandboxGRPOTrainer" in code:
        records = [json.loads(line) for line in (tmp_path / "out" / "metrics.jsonl").read_text().splitlines()]
        assert any(r.get("sandbox/completions") == 10 for r in records), records
    assert (tmp_path / "out").is_dir()


def test_the_dataset_snippet_reads_published_rows(tmp_path, user_tmp):
    (code,) = blocks("load_dataset(")
    prelude = (
        "import datasets, json\n"
        f"_ROWS = {{'deepmind/code_contests': json.loads({json.dumps(json.dumps([CODE_CONTESTS]))})}}\n"
        "datasets.load_dataset = lambda name, split=None, **kw: datasets.Dataset.from_list(_ROWS[name])\n"
    )
    check = ("\nfrom trl_sandbox.loading import decode_row\nrow = decode_row(train_dataset[0])\n"
             "assert row['name'] == '1_A. Theatre Square' and row['prompt'][-1]['role'] == 'user', row\n"
             "print('ok')\n")
    assert run_python(code + check, tmp_path, user_tmp, prelude=prelude).stdout.strip() == "ok"


#: Rows that do not all have the same fields, as a user's JSONL file mixes them: stdin/stdout rows, one of them
#: banned-pattern-checked, then an MBPP row (published fields: text, code, test_list).
MIXED_ROWS = [
    {"task_id": 1, "prompt": "Print the sum.", "inputs": ["1 2\n"], "outputs": ["3\n"]},
    {"task_id": 2, "prompt": "Sort without sorted().", "inputs": ["3 1 2\n"], "outputs": ["1 2 3\n"],
     "banned_patterns": ["sorted("]},
    {"task_id": 11, "prompt": "Write add(a, b).", "text": "Write a function add(a, b).",
     "code": "def add(a, b):\n    return a + b", "test_list": ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]},
]


def test_the_trainer_snippets_dataset_keeps_every_rows_fields(tmp_path, user_tmp):
    """The README's dataset line, on rows that differ in fields, then the reward as TRL calls it (every column of a
    batch as a keyword argument): a banned program is refused and the MBPP row is scored. With
    ``Dataset.from_list`` (the README before) the banned program was paid 1.0 and the MBPP row scored None."""
    (code,) = blocks(*RUNNERS["trainer"])
    (line,) = [ln for ln in code.splitlines() if ln.startswith("tasks = ")]
    assert 'load_tasks("daytona")' in line and "task_dataset(" in line
    (tmp_path / "mixed.jsonl").write_text("".join(json.dumps(r) + "\n" for r in MIXED_ROWS))
    program = (
        "from trl_sandbox import code_reward, load_tasks, task_dataset\n"
        + line.replace('"daytona"', repr(str(tmp_path / "mixed.jsonl"))) + "\n"
        "batch = [tasks[i] for i in range(len(tasks))]\n"
        "columns = {k: [row[k] for row in batch] for k in tasks.column_names if k != 'prompt'}\n"
        "completions = ['a, b = map(int, input().split())\\nprint(a + b)', 'print(*sorted(map(int, input().split())))',"
        " 'def add(a, b):\\n    return a + b']\n"
        "print(code_reward(completions, prompts=[row['prompt'] for row in batch], **columns))\n"
    )
    assert run_python(program, tmp_path, user_tmp).stdout.strip() == "[1.0, -1.0, 1.0]"


def test_rows_that_lost_fields_are_refused_loudly_not_scored(tmp_path, user_tmp):
    """``Dataset.from_list`` on those rows keeps the first row's columns: the reward refuses the rows that lost
    fields (None, with one error line each naming the lost fields and ``task_dataset``) instead of paying a banned
    program or guessing the MBPP row's format."""
    (tmp_path / "mixed.jsonl").write_text("".join(json.dumps(r) + "\n" for r in MIXED_ROWS))
    program = (
        "from datasets import Dataset\nfrom trl_sandbox import code_reward, load_tasks\n"
        f"tasks = Dataset.from_list(load_tasks({str(tmp_path / 'mixed.jsonl')!r}))\n"
        "batch = [tasks[i] for i in range(len(tasks))]\n"
        "columns = {k: [row[k] for row in batch] for k in tasks.column_names if k != 'prompt'}\n"
        "completions = ['a, b = map(int, input().split())\\nprint(a + b)', 'print(*sorted(map(int, input().split())))',"
        " 'def add(a, b):\\n    return a + b']\n"
        "print(code_reward(completions, prompts=[row['prompt'] for row in batch], **columns))\n"
    )
    proc = run_python(program, tmp_path, user_tmp)
    assert proc.stdout.strip() == "[1.0, None, None]", proc.stderr
    lost = [ln for ln in proc.stderr.splitlines() if "lost its field(s)" in ln]
    assert len(lost) == 2 and "banned_patterns" in lost[0] and "test_list" in lost[1], proc.stderr
    assert all("trl_sandbox.task_dataset(rows)" in ln for ln in lost)


def test_the_scorer_snippet_prints_what_it_says(tmp_path, user_tmp):
    (code,) = blocks("Scorer.from_config")
    expected = re.search(r"print\(.*\)\s*#\s*(\S+)", code).group(1)
    assert run_python(code, tmp_path, user_tmp).stdout.strip() == expected == "164"


def test_the_score_example_prints_what_it_says(tmp_path, user_tmp):
    (code,) = blocks("trl-sandbox score")
    script, expected = code.split("\n# ", 1)
    proc = run_user(["bash", "-euo", "pipefail", "-c", script], tmp_path, user_tmp)
    assert proc.returncode == 0, proc.stderr
    summary = proc.stderr.strip().splitlines()[-1]
    figures = r"[0-9.]+ completions/s \([0-9.]+ s\)"
    assert re.sub(figures, "", summary) == re.sub(figures, "", expected.strip()), (summary, expected)
    assert len((tmp_path / "results.jsonl").read_text().splitlines()) == 164


def test_the_gpu_commands(tmp_path, user_tmp):
    """The GPU block: the ``vllm`` extra exists; each launch script, dry-run, prints an ``accelerate launch`` of
    ``trl-sandbox train`` (the multi-GPU one told there are 2 GPUs: this machine has none)."""
    (code,) = blocks(".[vllm]", "train_1gpu.sh")
    lines = [line.split("#")[0].strip() for line in code.strip().splitlines()]
    assert lines[0] == 'pip install -e ".[vllm]"'
    assert re.search(r'(?m)^vllm = \["trl\[vllm\]', (REPO / "pyproject.toml").read_text())
    for line in lines[1:]:
        proc = run_user(shlex.split(line), REPO, user_tmp, env={"DRY_RUN": "1", "GPUS_PER_NODE": "2"})
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith("accelerate launch") and "trl_sandbox.cli train" in proc.stdout, proc.stdout
