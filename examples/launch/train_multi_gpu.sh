#!/usr/bin/env bash
# GRPO on several GPUs, on one machine or several, with sandboxed code rewards. One training process per GPU, each
# with a colocated vLLM engine and its own sandbox pool (labelled with its rank; all ranks share one run id). Run
# the same command on every node, with MACHINE_RANK set to 0..NUM_MACHINES-1 and MAIN_PROCESS_IP to node 0's address.
#
#   bash examples/launch/train_multi_gpu.sh                                         # all GPUs of this machine
#   NUM_MACHINES=2 MACHINE_RANK=0 MAIN_PROCESS_IP=10.0.0.1 bash examples/launch/train_multi_gpu.sh   # node 0 of 2
#   NUM_MACHINES=2 MACHINE_RANK=1 MAIN_PROCESS_IP=10.0.0.1 bash examples/launch/train_multi_gpu.sh   # node 1 of 2
#
# Environment: MODEL (Qwen/Qwen3-1.7B-Base), TASKS (daytona), OUTPUT_DIR (runs/multi_gpu), BACKEND (local; daytona
# for more sandboxes than the nodes' CPUs), GPUS_PER_NODE (from nvidia-smi), NUM_MACHINES (1), MACHINE_RANK (0),
# MAIN_PROCESS_IP (127.0.0.1), MAIN_PROCESS_PORT (29500), POOL_SIZE (sandboxes per process; default: this node's CPUs
# divided among its GPUs for local, 16 otherwise), VLLM_MEM (0.3), DRY_RUN=1 (print the command, run nothing; on any
# machine: without a GPU, GPUS_PER_NODE stands at 8 unless set).
# Extra arguments go to `trl-sandbox train`. Needs: pip install 'trl-sandbox[vllm]' on every node.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MODEL="${MODEL:-Qwen/Qwen3-1.7B-Base}"
TASKS="${TASKS:-daytona}"
OUTPUT_DIR="${OUTPUT_DIR:-runs/multi_gpu}"
BACKEND="${BACKEND:-local}"
if [[ -z "${GPUS_PER_NODE:-}" ]]; then
    # A missing nvidia-smi, or one without a driver to talk to, counts as no GPU (never a silent `set -e` exit).
    GPUS_PER_NODE="$( { nvidia-smi -L 2>/dev/null || true; } | grep -c '^GPU ' || true)"
fi
NUM_MACHINES="${NUM_MACHINES:-1}"
MACHINE_RANK="${MACHINE_RANK:-0}"
MAIN_PROCESS_IP="${MAIN_PROCESS_IP:-127.0.0.1}"
MAIN_PROCESS_PORT="${MAIN_PROCESS_PORT:-29500}"
VLLM_MEM="${VLLM_MEM:-0.3}"
if (( GPUS_PER_NODE < 1 )); then
    if [[ -z "${DRY_RUN:-}" ]]; then
        echo "train_multi_gpu.sh: no GPU found (nvidia-smi lists none, or is missing): set GPUS_PER_NODE" >&2; exit 2
    fi
    # A dry run prints the command on any machine: 8 GPUs per node (multi_gpu.yaml's count) stand in.
    echo "train_multi_gpu.sh: no GPU found; DRY_RUN shows the command for GPUS_PER_NODE=8" >&2
    GPUS_PER_NODE=8
fi
if [[ "$BACKEND" == local ]]; then
    cpus="$(unset OMP_NUM_THREADS OMP_THREAD_LIMIT; nproc)"  # not OMP_NUM_THREADS, which nproc answers when set
    POOL_SIZE="${POOL_SIZE:-$(( cpus / GPUS_PER_NODE > 0 ? cpus / GPUS_PER_NODE : 1 ))}"
else
    POOL_SIZE="${POOL_SIZE:-16}"
fi

cmd=(accelerate launch --config_file "$here/multi_gpu.yaml"
    --num_processes "$(( GPUS_PER_NODE * NUM_MACHINES ))" --num_machines "$NUM_MACHINES"
    --machine_rank "$MACHINE_RANK" --main_process_ip "$MAIN_PROCESS_IP" --main_process_port "$MAIN_PROCESS_PORT"
    -m trl_sandbox.cli train
    --model "$MODEL" --tasks "$TASKS" --output_dir "$OUTPUT_DIR"
    --bf16 true --use_vllm true --vllm_mode colocate --vllm_gpu_memory_utilization "$VLLM_MEM"
    --sandbox_backend "$BACKEND" --sandbox_pool_size "$POOL_SIZE"
    "$@")
if [[ -n "${DRY_RUN:-}" ]]; then
    printf '%q ' "${cmd[@]}"; echo
    exit 0
fi
"${cmd[@]}"
if [[ "$MACHINE_RANK" == 0 ]]; then trl-sandbox plot "$OUTPUT_DIR"; fi
