"""The shipped accelerate configs and launch scripts (examples/launch): valid for accelerate, and their commands
parse as `trl-sandbox train` options. (They target GPUs; CI has none, so the two-process CPU config is the one CI
runs, in tests/test_distributed.py.)"""

import importlib.util
import json
import os
import shlex
import shutil
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


# What the launch scripts call besides bash's builtins; `accelerate` and `trl-sandbox` only when not a dry run.
SCRIPT_TOOLS = ("dirname", "nproc", "grep", "wc", "hostname", "awk")


CPUS = len(os.sched_getaffinity(0))  # what nproc counts, whatever OMP_NUM_THREADS says


def gpuless_env(bin_dir, nvidia_smi=None, **env):
    """The environment of a machine without GPUs: PATH is only ``bin_dir``, holding links to the tools the scripts
    use, so no nvidia-smi is found wherever the real one lives; ``nvidia_smi``: the text of a stand-in script (one
    that fails as nvidia-smi does without a driver, say)."""
    bin_dir.mkdir(exist_ok=True)
    for tool in SCRIPT_TOOLS:
        if shutil.which(tool) and not (bin_dir / tool).exists():
            (bin_dir / tool).symlink_to(shutil.which(tool))
    if nvidia_smi is not None:
        (bin_dir / "nvidia-smi").write_text(nvidia_smi)
        (bin_dir / "nvidia-smi").chmod(0o755)
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("SLURM_") and k not in ("DRY_RUN", "GPUS_PER_NODE", "POOL_SIZE", "BACKEND")}
    return {**base, "PATH": str(bin_dir), **env}


def run_script(script, env, *args):
    return subprocess.run([shutil.which("bash"), str(LAUNCH / script), *args], capture_output=True, text=True,
                          env=env, check=False)


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

    from trl_sandbox.cli import TrainArguments
    from trl_sandbox.trainer import SandboxGRPOConfig

    parser = TrlParser((TrainArguments, SandboxGRPOConfig))
    argv = ["--output_dir", "out", "--use_cpu", "true", "--bf16", "false", "--reward", "all_or_nothing",
            '--reward-values={"error": -0.5}']
    _script, config = parser.parse_args_and_config(argv)
    assert config.sandbox_reward == "all_or_nothing" and config.sandbox_reward_values == {"error": -0.5}


NO_DRIVER = "#!/bin/sh\necho 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.'\nexit 9\n"


@pytest.mark.parametrize("nvidia_smi", [None, NO_DRIVER], ids=["no-nvidia-smi", "no-driver"])
def test_dry_runs_print_the_command_on_a_machine_without_gpus(tmp_path, nvidia_smi):
    """DRY_RUN=1 prints the whole `accelerate launch ... train` command and exits 0 where there is no GPU at all
    (the multi-GPU script stands in 8 GPUs per node, and says so on stderr)."""
    env = gpuless_env(tmp_path / "bin", nvidia_smi, DRY_RUN="1", OMP_NUM_THREADS="1")
    one = run_script("train_1gpu.sh", env, "--max_steps", "3")
    assert one.returncode == 0, one.stderr
    argv = shlex.split(one.stdout)
    assert argv[:7] == ["accelerate", "launch", "--config_file", str(LAUNCH / "1gpu.yaml"), "-m", "trl_sandbox.cli",
                        "train"]
    script, config = train_options(argv)
    assert script.model == "Qwen/Qwen3-1.7B-Base" and script.tasks == "daytona" and config.output_dir == "runs/1gpu"
    assert config.use_vllm and config.vllm_mode == "colocate" and config.vllm_gpu_memory_utilization == 0.3
    assert config.sandbox_backend == "local" and config.sandbox_pool_size == CPUS and config.max_steps == 3
    assert "--bf16" in argv and argv[argv.index("--bf16") + 1] == "true"

    multi = run_script("train_multi_gpu.sh", env, "--max_steps", "3")
    assert multi.returncode == 0, multi.stderr
    assert "no GPU found" in multi.stderr and "GPUS_PER_NODE=8" in multi.stderr
    assert "command not found" not in multi.stderr
    argv = shlex.split(multi.stdout)
    assert argv[:2] == ["accelerate", "launch"] and argv[argv.index("-m") : argv.index("-m") + 3] == [
        "-m", "trl_sandbox.cli", "train"]  # fmt: skip
    launch = argv[2 : argv.index("-m")]
    assert dict(zip(launch[::2], launch[1::2])) == {
        "--config_file": str(LAUNCH / "multi_gpu.yaml"), "--num_processes": "8", "--num_machines": "1",
        "--machine_rank": "0", "--main_process_ip": "127.0.0.1", "--main_process_port": "29500",
    }  # fmt: skip
    script, config = train_options(argv)
    assert script.model == "Qwen/Qwen3-1.7B-Base" and config.output_dir == "runs/multi_gpu" and config.max_steps == 3
    assert config.use_vllm and config.vllm_mode == "colocate" and config.sandbox_backend == "local"
    assert config.sandbox_pool_size == max(1, CPUS // 8)  # this machine's CPUs over the 8 processes

    slurm = run_script("ray_slurm.sbatch", env)
    assert slurm.returncode == 0, slurm.stderr
    assert any(line.split()[:2] == ["srun", "--het-group=0"] and "train" in line.split()
               for line in slurm.stdout.splitlines())


def test_multi_gpu_script_without_gpus_says_so(tmp_path):
    """Not a dry run, on a machine without nvidia-smi: the script's own message, not bash's "command not found"."""
    proc = run_script("train_multi_gpu.sh", gpuless_env(tmp_path / "bin"))
    assert proc.returncode == 2 and "no GPU found" in proc.stderr and "command not found" not in proc.stderr
    assert proc.stdout == ""  # nothing launched


def dry_run_commands(script, *args, **env):
    """The commands a DRY_RUN of ``script`` prints, one argv per line (comment lines left out), outside Slurm."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    proc = subprocess.run(["bash", str(LAUNCH / script), *args], capture_output=True, text=True,
                          env={**base, "DRY_RUN": "1", **env}, check=True)
    return [shlex.split(line) for line in proc.stdout.splitlines() if line.strip() and not line.startswith("#")]


def test_ray_slurm_script_starts_ray_then_trains_on_the_ray_backend(tmp_path):
    commands = dry_run_commands("ray_slurm.sbatch", "--max_steps", "3", GPU_NODES="2", CPU_NODES="3",
                                GPUS_PER_NODE="4", CPUS_PER_NODE="32", HEAD_IP="10.0.0.1")
    head, gpu_workers, cpu_workers, train, plot, stop = commands
    assert head[:3] == ["ray", "start", "--head"] and "--num-cpus=0" in head and "--port=6379" in head
    assert gpu_workers[:2] == ["srun", "--het-group=0"] and "--num-cpus=0" in gpu_workers
    assert "--address=10.0.0.1:6379" in gpu_workers and gpu_workers[-1] == "&"
    assert cpu_workers[:2] == ["srun", "--het-group=1"] and "--nodes=3" in cpu_workers and "--block" in cpu_workers
    resources = next(a for a in cpu_workers if a.startswith("--resources="))
    assert json.loads(resources.partition("=")[2]) == {"sandbox": 32}
    assert plot == ["trl-sandbox", "plot", "runs/ray_slurm"] and stop == ["ray", "stop", "--force"]

    # One launcher per GPU node; the accelerate options, then the train options as `trl-sandbox train` parses them.
    assert train[:2] == ["srun", "--het-group=0"] and "--nodes=2" in train
    launch = train[train.index("accelerate") + 1 : train.index("-m")]
    assert dict(zip(launch[::2], launch[1::2])) == {
        "--config_file": str(LAUNCH / "multi_gpu.yaml"), "--num_processes": "8", "--num_machines": "2",
        "--main_process_ip": "10.0.0.1", "--main_process_port": "29500",
    }  # fmt: skip
    assert train[train.index("--sandbox_backend") + 1] == "ray"
    script, config = train_options(train)
    assert script.model == "Qwen/Qwen3-1.7B-Base" and config.use_vllm and config.vllm_mode == "colocate"
    assert config.sandbox_backend == "ray" and config.max_steps == 3
    assert config.sandbox_pool_size == 12  # 3 nodes x 32 slots over 8 processes
    assert config.sandbox_backend_options == {"address": "auto", "resources": {"sandbox": 1}}
    if importlib.util.find_spec("ray") is not None:  # the options are the backend's own (nothing is contacted)
        from trl_sandbox.backends import get_backend

        backend = get_backend("ray", **config.sandbox_backend_options)
        assert backend.address == "auto" and backend.resources == {"sandbox": 1}

    # The wrapper gives each node's launcher its machine rank and passes every other argument through unchanged.
    (tmp_path / "accelerate").write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    (tmp_path / "accelerate").chmod(0o755)
    wrapper = train[train.index("bash") :]
    out = subprocess.run(wrapper, capture_output=True, text=True, check=True,
                         env={**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}", "SLURM_NODEID": "1"})
    assert out.stdout.splitlines() == ["launch", "--machine_rank", "1", *train[train.index("accelerate") + 1 :]]


def test_ray_slurm_script_on_one_gpu_node_starts_no_other_gpu_worker():
    commands = dry_run_commands("ray_slurm.sbatch")
    assert [c[:2] for c in commands] == [["ray", "start"], ["srun", "--het-group=1"], ["srun", "--het-group=0"],
                                         ["trl-sandbox", "plot"], ["ray", "stop"]]
    _, config = train_options(commands[2])
    assert config.sandbox_pool_size == 16  # the defaults: 4 CPU nodes x 32 slots over 8 GPUs


def test_ray_slurm_script_outside_slurm_says_so():
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_") and k != "DRY_RUN"}
    proc = subprocess.run(["bash", str(LAUNCH / "ray_slurm.sbatch")], capture_output=True, text=True, env=env,
                          check=False)
    assert proc.returncode == 2 and "run it with sbatch" in proc.stderr


def test_kuberay_cluster_keeps_sandboxes_on_cpu_pods_with_what_the_local_backend_needs():
    yaml = pytest.importorskip("yaml")
    text = (LAUNCH / "kuberay.yaml").read_text()
    (cluster,) = yaml.safe_load_all(text)
    assert cluster["apiVersion"] == "ray.io/v1" and cluster["kind"] == "RayCluster"
    spec = cluster["spec"]
    assert spec["headGroupSpec"]["rayStartParams"]["num-cpus"] == "0"

    def containers(group):
        return group["template"]["spec"]["containers"]

    def gpus(group):
        return [c for c in containers(group) for part in ("requests", "limits")
                if any("gpu" in k for k in c.get("resources", {}).get(part, {}))]

    groups = {g["groupName"]: g for g in spec["workerGroupSpecs"]}
    with_sandbox = {name: json.loads(json.loads(g["rayStartParams"]["resources"]))
                    for name, g in groups.items() if "resources" in g["rayStartParams"]}
    assert list(with_sandbox) == ["sandboxes"] and with_sandbox["sandboxes"]["sandbox"] > 0
    sandboxes = groups["sandboxes"]
    assert not gpus(sandboxes)
    for name, group in groups.items():  # a group with GPUs offers Ray no CPU: no sandbox lands there
        assert not gpus(group) or group["rayStartParams"].get("num-cpus") == "0", name
    (worker,) = containers(sandboxes)
    security = worker["securityContext"]
    assert security["runAsUser"] == 0 and security["privileged"] is False
    assert security["capabilities"]["add"] == ["SYS_ADMIN"] and "allowPrivilegeEscalation" not in security
    assert security["appArmorProfile"] == {"type": "Unconfined"}

    # One image everywhere, built as the file and the docs say: Ray's image with this project installed.
    images = {c["image"] for g in [spec["headGroupSpec"], *groups.values()] for c in containers(g)}
    assert len(images) == 1
    docs = (LAUNCH.parent.parent / "docs" / "training.md").read_text()
    for mention in ('pip install "trl-sandbox[ray]"', "rayproject/ray", "examples/launch/kuberay.yaml",
                    "SYS_ADMIN", "appArmorProfile", "runAsUser: 0", '"{\\"sandbox\\":'):
        assert mention in text and mention in docs, mention
    assert "examples/launch/ray_slurm.sbatch" in docs
