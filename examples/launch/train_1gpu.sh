#!/usr/bin/env bash
# GRPO on one GPU with sandboxed code rewards: vLLM generates on the training GPU ("colocate", as in TRL's Daytona
# example), completions run in sandboxes (local: this machine's CPUs; daytona: remote), then the run is plotted.
#
#   bash examples/launch/train_1gpu.sh                                  # defaults below
#   MODEL=Qwen/Qwen3-4B-Base BACKEND=daytona POOL_SIZE=32 bash examples/launch/train_1gpu.sh --max_steps 200
#
# Environment: MODEL (Qwen/Qwen3-1.7B-Base), TASKS (daytona | humaneval | FILE.jsonl), OUTPUT_DIR (runs/1gpu),
# BACKEND (local), POOL_SIZE (sandboxes; default: CPU count for local, 16 otherwise), VLLM_MEM (0.3: fraction of GPU
# memory for vLLM), DRY_RUN=1 (print the command, run nothing). Extra arguments go to `trl-sandbox train` (any
# SandboxGRPOConfig field, e.g. --max_steps 200 --sandbox_batch_deadline_s 120). Needs: pip install 'trl-sandbox[vllm]'.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MODEL="${MODEL:-Qwen/Qwen3-1.7B-Base}"
TASKS="${TASKS:-daytona}"
OUTPUT_DIR="${OUTPUT_DIR:-runs/1gpu}"
BACKEND="${BACKEND:-local}"
# The CPUs this process may use (nproc would answer OMP_NUM_THREADS instead, when it is set).
cpus="$(unset OMP_NUM_THREADS OMP_THREAD_LIMIT; nproc)"
if [[ "$BACKEND" == local ]]; then POOL_SIZE="${POOL_SIZE:-$cpus}"; else POOL_SIZE="${POOL_SIZE:-16}"; fi
VLLM_MEM="${VLLM_MEM:-0.3}"

cmd=(accelerate launch --config_file "$here/1gpu.yaml" -m trl_sandbox.cli train
    --model "$MODEL" --tasks "$TASKS" --output_dir "$OUTPUT_DIR"
    --bf16 true --use_vllm true --vllm_mode colocate --vllm_gpu_memory_utilization "$VLLM_MEM"
    --sandbox_backend "$BACKEND" --sandbox_pool_size "$POOL_SIZE"
    "$@")
if [[ -n "${DRY_RUN:-}" ]]; then
    printf '%q ' "${cmd[@]}"; echo
    exit 0
fi
"${cmd[@]}"
trl-sandbox plot "$OUTPUT_DIR"
