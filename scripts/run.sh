#!/usr/bin/env bash
# Set up (if needed), then the main job on the embedded default: LoRA fine-tuning of
# Gemma 3 270M with bias evaluated before training and at every checkpoint, ending in
# the before/after compare report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export TOKENIZERS_PARALLELISM=false
exec .venv/bin/accelerate launch --num_processes 1 --num_machines 1 --mixed_precision no \
    --dynamo_backend no train/finetune.py --config configs/demo-gemma-lora.yaml "$@"
