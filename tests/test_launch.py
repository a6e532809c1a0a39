"""The shipped accelerate configs and launch scripts (examples/launch): valid for accelerate, and their commands
parse as `trl-sandbox train` options. (They target GPUs; CI has none, so the two-process CPU config is the one CI
runs, in tests/test_distributed.py.)"""

import os
import shlex
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("trl")
LAUNCH = Path(__file__).resolve().parent.parent / "examples" / "launch"


@pytest.mark.parametrize(
    "name, distributed_type, processes",
    [("1gpu.yaml", "NO", 1), ("multi_gpu.yaml", "MULTI_GPU", 8), ("cpu_2proc.yaml", "MULTI_GPU", 2)],
)
def test_accelerate_loads_the_configs(name, distributed_type, processes):
    from accelerate.commands.config.config_args import load_config_from_file

    config = load_config_from_file(str(LAUNCH / name))
    assert config.distributed_type == distributed_type and config.num_processes == processes


def dry_run(script, **env):
    proc = subprocess.run(["bash", str(LAUNCH / script), "--max_steps", "3"], capture_output=True, text=True,
                          env={**os.environ, "DRY_RUN": "1", **env}, check=True)
    return shlex.split(proc.stdout)


def train_options(argv):
    """The `trl-sandbox train` options of an accelerate command line, parsed as the command parses them."""
    from trl import TrlParser

    from trl_sandbox.cli import TrainArguments
    from trl_sandbox.trainer import SandboxGRPOConfig

    options = argv[argv.index("train") + 1 :]
    parser = TrlParser((TrainArguments, SandboxGRPOConfig))
    # bf16 needs a GPU to validate: parse everything else (a typo in any option name still fails here).
    return parser.parse_args_into_dataclasses([*options, "--bf16", "false", "--use_cpu", "true"])


def test_one_gpu_script_runs_vllm_colocate():
    argv = dry_run("train_1gpu.sh", BACKEND="daytona")
    assert argv[:4] == ["accelerate", "launch", "--config_file", str(LAUNCH / "1gpu.yaml")]
    assert argv[4:7] == ["-m", "trl_sandbox.cli", "train"]
    script, config = train_options(argv)
    assert script.model == "Qwen/Qwen3-1.7B-Base" and config.use_vllm and config.vllm_mode == "colocate"
    assert config.sandbox_backend == "daytona" and config.sandbox_pool_size == 16 and config.max_steps == 3


def test_multi_node_script_counts_processes_over_nodes():
    argv = dry_run("train_multi_gpu.sh", GPUS_PER_NODE="4", NUM_MACHINES="2", MACHINE_RANK="1",
                   MAIN_PROCESS_IP="10.0.0.1", BACKEND="local", POOL_SIZE="6")
    launch = argv[: argv.index("-m")]
    values = dict(zip(launch[2::2], launch[3::2]))
    assert values == {
        "--config_file": str(LAUNCH / "multi_gpu.yaml"), "--num_processes": "8", "--num_machines": "2",
        "--machine_rank": "1", "--main_process_ip": "10.0.0.1", "--main_process_port": "29500",
    }  # fmt: skip
    _, config = train_options(argv)
    assert config.sandbox_pool_size == 6 and config.use_vllm and config.vllm_mode == "colocate"


def test_train_takes_the_reward_flags_as_score_spells_them():
    from trl import TrlParser

    from trl_sandbox.cli import TrainArguments, _sandbox_aliases
    from trl_sandbox.trainer import SandboxGRPOConfig

    parser = TrlParser((TrainArguments, SandboxGRPOConfig))
    argv = ["--output_dir", "out", "--use_cpu", "true", "--bf16", "false", "--reward", "all_or_nothing",
            '--reward-values={"error": -0.5}']
    _script, config = parser.parse_args_and_config(_sandbox_aliases(argv))
    assert config.sandbox_reward == "all_or_nothing" and config.sandbox_reward_values == {"error": -0.5}


def test_multi_gpu_script_without_gpus_says_so():
    """DRY_RUN on a machine without nvidia-smi: the script's own message, not bash's "command not found"."""
    env = {**os.environ, "DRY_RUN": "1", "PATH": "/usr/bin:/bin"}  # no nvidia-smi here
    env.pop("GPUS_PER_NODE", None)
    proc = subprocess.run(["bash", str(LAUNCH / "train_multi_gpu.sh")], capture_output=True, text=True, env=env)
    assert proc.returncode == 2 and "no GPU found" in proc.stderr and "command not found" not in proc.stderr
