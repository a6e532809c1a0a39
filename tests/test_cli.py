"""The trl-sandbox command, run as users run it (subprocesses)."""

import json
import os
import subprocess
import sys

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
    result = cli("score", "--tasks", "humaneval", "--completions", write_samples(tmp_path / "s.jsonl", samples),
                 "--out", str(tmp_path / "r.jsonl"), "--pool-size", "2", "--backend-options", opts)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [r["task_id"] for r in lines] == [s["task_id"] for s in samples]
    assert [r["passed"] for r in lines] == [True, False] * 5
    for key in ("reward", "tests_passed", "tests_total", "status", "duration_s", "exec_s", "queue_s", "output"):
        assert key in lines[0]
    assert "5/10 passed" in result.stderr and "completions/s" in result.stderr
    assert "scoring" not in result.stderr  # no progress bar when stderr is not a terminal...


def test_score_progress_bars_on_request(tmp_path, sandbox_root):
    samples = [{"task_id": row["task_id"], "completion": row["canonical_solution"]} for row in HE[:6]]
    opts = json.dumps({"root_dir": str(sandbox_root)})
    result = cli("score", "--progress", "--tasks", "humaneval", "--completions",
                 write_samples(tmp_path / "s.jsonl", samples), "--pool-size", "2", "--backend-options", opts)
    assert result.returncode == 0, result.stderr
    assert "creating local sandboxes: 100%" in result.stderr and "2/2" in result.stderr  # ...unless asked
    assert "scoring: 100%" in result.stderr and "6/6" in result.stderr


def test_score_accepts_a_yaml_config_and_writes_stdout(tmp_path, sandbox_root):
    config = tmp_path / "score.yaml"
    config.write_text(f"pool_size: 1\ntest_timeout: 2.0\nbackend_options: '{json.dumps({'root_dir': str(sandbox_root)})}'\n")
    samples = write_samples(tmp_path / "s.jsonl", [{"task_id": "daytona/sorting", "completion": "    return sorted(xs)\n"}])
    result = cli("score", "--config", str(config), "--tasks", "daytona", "--completions", samples)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["status"] == "banned"


def test_score_does_not_import_torch_or_trl(tmp_path, sandbox_root):
    samples = write_samples(tmp_path / "s.jsonl", [{"task_id": HE[0]["task_id"], "completion": HE[0]["canonical_solution"]}])
    code = (
        "import sys; from trl_sandbox.cli import main\n"
        f"rc = main(['score', '--tasks', 'humaneval', '--completions', {samples!r}, '--out', {str(tmp_path / 'o')!r},"
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
    result = cli("score", "--tasks", "humaneval", "--completions", str(path))
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_score_unreadable_tasks_file(tmp_path):
    result = cli("score", "--tasks", str(tmp_path / "nope.jsonl"), "--completions", str(tmp_path / "x.jsonl"))
    assert result.returncode == 2 and "cannot read tasks" in result.stderr


def test_unknown_backend_is_a_clear_error(tmp_path):
    samples = write_samples(tmp_path / "s.jsonl", [{"task_id": HE[0]["task_id"], "completion": "x"}])
    result = cli("score", "--tasks", "humaneval", "--completions", samples, "--backend", "nope")
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


def test_bad_flags_are_one_line_each(tmp_path):
    samples = write_samples(tmp_path / "s.jsonl", [{"task_id": HE[0]["task_id"], "completion": "x"}])
    base = ("score", "--tasks", "humaneval", "--completions", samples)
    one_line_error(cli(*base, "--backend-options", '{"nosuch": 1}'), "--backend-options", "unknown option 'nosuch'",
                   "local backend", "root_dir")
    result = cli(*base, "--memory-limit", "lots")
    assert result.returncode == 2 and "not a size" in result.stderr and "Traceback" not in result.stderr
    (tmp_path / "empty.jsonl").write_text("")
    one_line_error(cli(*base[:3], "--completions", str(tmp_path / "empty.jsonl")), "holds no samples")
    one_line_error(cli("score", "--tasks", str(tmp_path / "empty.jsonl"), "--completions", samples),
                   "holds no task rows")
    result = cli("cleanup", "--older-than", "3", "--dry-run")
    assert result.returncode == 2 and "a number and a unit" in result.stderr


@pytest.mark.parametrize("args, fragments", [
    (["--max-steps", "abc"], ["invalid int value: 'abc'", "trl-sandbox train --help"]),
    (["--nosuch-flag", "3"], ["unknown options ['--nosuch-flag', '3']"]),
    (["--num-generations", "5"], ["generation_batch_size (32) must be divisible by num_generations (5)"]),
    (["--sandbox-backend", "nosuch"], ["unknown sandbox backend 'nosuch'"]),
    (["--tasks", "SAMPLES"], ["no row is a valid task; row 1 (HumanEval/0): cannot tell the task format", "(and 1 more)"]),
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
    assert main(["score", "--tasks", "humaneval", "--completions", "x.jsonl", "--pool-size", "x"]) == 2
    assert main(["cleanup", "--run-id", "x", "--older-than", "1h"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert [line.split(": error: ")[0] for line in err] == ["trl-sandbox plot", "trl-sandbox score",
                                                            "trl-sandbox cleanup"], err
    assert "required: run_dir" in err[0] and "invalid int value: 'x'" in err[1] and "use one of" in err[2]


def test_sizes_take_units(tmp_path, sandbox_root):
    samples = write_samples(tmp_path / "s.jsonl", [{"task_id": HE[0]["task_id"], "completion": HE[0]["canonical_solution"]}])
    opts = json.dumps({"root_dir": str(sandbox_root)})
    result = cli("score", "--tasks", "humaneval", "--completions", samples, "--pool-size", "1", "--backend-options",
                 opts, "--memory-limit", "512MiB", "--output-limit", "64KiB")
    assert result.returncode == 0 and "1/1 passed" in result.stderr, result.stderr


def test_score_config_file_gives_any_option(tmp_path, sandbox_root):
    samples = write_samples(tmp_path / "s.jsonl", [{"task_id": "daytona/sorting", "completion": "    return xs\n"}])
    config = tmp_path / "score.yaml"
    config.write_text(f"tasks: daytona\ncompletions: {samples}\npool_size: 1\nmemory_limit: 1GiB\n"
                      f"backend_options: '{json.dumps({'root_dir': str(sandbox_root)})}'\n")
    result = cli("score", "--config", str(config))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["task_id"] == "daytona/sorting"


def test_train_without_the_hub_is_one_line(tmp_path):
    result = cli("train", "--model", "no-such-org/no-such-model", "--max-steps", "1", "--output-dir", str(tmp_path))
    one_line_error(result, "cannot load the model 'no-such-org/no-such-model'", "--model tiny")


def test_ctrl_c_on_score_stops_at_once_and_quietly(tmp_path, own_sandbox_root):
    """SIGINT while 200 slow completions are being scored: the command stops (its work cancelled, its sandboxes
    deleted) with one line, exit code 130, and none of the "pool is closed" warnings of the cancelled completions."""
    import signal
    import time

    slow = "import time\ntime.sleep(0.5)\n" + HE[0]["prompt"] + HE[0]["canonical_solution"]
    samples = write_samples(tmp_path / "s.jsonl", [{"task_id": HE[0]["task_id"], "completion": slow}] * 200)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "trl_sandbox.cli", "score", "--tasks", "humaneval", "--completions", samples,
         "--pool-size", "2", "--backend-options", json.dumps({"root_dir": str(own_sandbox_root)})],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(4)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=20)  # before: about 30 s, and thousands of warnings
    assert proc.returncode == 130, err[-2000:]
    assert "interrupted" in err and "Traceback" not in err and "infrastructure error" not in err, err[-2000:]


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
