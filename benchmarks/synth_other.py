"""Non-Python files of the synthetic repository: shell scripts, requirements, configs.

Every template takes `@N@` (a number unique in the tree) and is about as long as its real
counterpart in a training repository (tens of lines).
"""

from __future__ import annotations

SHELL = """#!/bin/bash
# Fine-tune run @N@: two GPUs on one node.
# Usage: bash scripts/train_@N@.sh [MODEL] [OUTPUT]
set -euo pipefail

MODEL=${1:-meta-llama/Meta-Llama-3-8B-Instruct}
OUTPUT=${2:-saves/run_@N@}
NPROC=2

export CUDA_VISIBLE_DEVICES=0,1
export NCCL_P2P_DISABLE=1
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True

nvidia-smi --query-gpu=name,memory.total --format=csv
python -c 'import torch; print(torch.cuda.device_count())'

if [ ! -d "data" ]; then
    echo "data/ is missing; run scripts/download_data.sh first"
    exit 1
fi

CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node ${NPROC} --master_port 29@N@ \\
    src/train.py \\
    --model_name_or_path ${MODEL} \\
    --output_dir ${OUTPUT} \\
    --bf16 \\
    --flash_attn fa2 \\
    --per_device_train_batch_size 2 \\
    --gradient_accumulation_steps 8

deepspeed --include localhost:0,1 src/train.py \\
    --deepspeed examples/deepspeed/ds_z2_config.json \\
    --model_name_or_path ${MODEL} \\
    --output_dir ${OUTPUT}_ds

for step in 500 1000 1500; do
    echo "evaluating checkpoint-${step}"
    python src/evaluate.py --checkpoint ${OUTPUT}/checkpoint-${step} --task mmlu
done
"""

REQUIREMENTS_BASE = """# Core dependencies of the synthetic training package.
transformers>=4.45.0,<=4.52.4
datasets>=2.16.0,<=3.6.0
accelerate>=0.34.0,<=1.7.0
peft>=0.14.0,<=0.15.2
trl>=0.8.6,<=0.9.6
tokenizers>=0.19.0,<=0.21.1
gradio>=4.38.0,<=5.31.0
scipy
einops
sentencepiece
tiktoken
protobuf
uvicorn
fastapi
sse-starlette
matplotlib>=3.7.0
fire
packaging
pyyaml
numpy<2.0.0
av
librosa
tyro<0.9.0
"""

REQUIREMENTS_GPU = """-r base.txt
--extra-index-url https://download.pytorch.org/whl/cu121
torch==2.3.1+cu121
torchvision==0.18.1+cu121
bitsandbytes>=0.39.0; platform_system == "Linux"
flash-attn>=2.5.6
xformers==0.0.27; sys_platform == "linux"
deepspeed>=0.10.0,<=0.16.9
vllm>=0.4.3,<=0.8.6
liger-kernel>=0.5.5
auto-gptq>=0.5.0
autoawq
apex @ git+https://github.com/NVIDIA/apex.git
unsloth[cu121-torch230]
"""

TRAIN_YAML = """### model
model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct
quantization_bit: 4
quantization_method: bitsandbytes
trust_remote_code: true

### method
stage: sft
do_train: true
finetuning_type: lora
lora_rank: 8
lora_target: all

### dataset
dataset: identity,alpaca_en_demo
template: llama3
cutoff_len: 2048
max_samples: 1000
overwrite_cache: true
preprocessing_num_workers: 16

### output
output_dir: saves/llama3-8b/lora/sft_@N@
logging_steps: 10
save_steps: 500
plot_loss: true
overwrite_output_dir: true

### train
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
learning_rate: 1.0e-4
num_train_epochs: 3.0
lr_scheduler_type: cosine
warmup_ratio: 0.1
bf16: true
flash_attn: fa2
device: cuda
ddp_timeout: 180000000
"""

ACCELERATE_YAML = """compute_environment: LOCAL_MACHINE
debug: false
distributed_type: MULTI_GPU
downcast_bf16: 'no'
gpu_ids: all
machine_rank: 0
main_training_function: main
mixed_precision: bf16
num_machines: 1
num_processes: 2
rdzv_backend: static
same_network: true
tpu_env: []
tpu_use_cluster: false
tpu_use_sudo: false
use_cpu: false
"""

DEEPSPEED_JSON = """{
  "train_batch_size": "auto",
  "train_micro_batch_size_per_gpu": "auto",
  "gradient_accumulation_steps": "auto",
  "gradient_clipping": "auto",
  "zero_allow_untested_optimizer": true,
  "fp16": {
    "enabled": "auto",
    "loss_scale": 0,
    "loss_scale_window": 1000,
    "initial_scale_power": 16,
    "hysteresis": 2,
    "min_loss_scale": 1
  },
  "bf16": {
    "enabled": "auto"
  },
  "zero_optimization": {
    "stage": 2,
    "offload_optimizer": {
      "device": "cpu",
      "pin_memory": true
    },
    "allgather_partitions": true,
    "allgather_bucket_size": 5e8,
    "overlap_comm": false,
    "reduce_scatter": true,
    "reduce_bucket_size": 5e8,
    "contiguous_gradients": true,
    "round_robin_gradients": true
  }
}
"""

# Encoded as GBK with a coding line: porter must write it back in its own encoding.
GBK_PYTHON = '''# -*- coding: gbk -*-
"""旧版工具脚本：把模型放到 GPU 上。"""
import torch


def move_@N@(model):
    # 注释：CUDA 设备
    return model.cuda()
'''
