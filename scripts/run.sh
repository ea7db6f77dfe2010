#!/usr/bin/env bash
# Set up (if needed), then the main job on the embedded default: mitigate Gemma 3 270M with
# LoRA and the contrast objective (configs/demo-gemma-lora.yaml), scoring held-out pairs
# (queerbias-de:test) before training and at the end, ending in the before/after compare
# report (distance to indifference with its bootstrap interval) in runs/train/demo-gemma-lora/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export TOKENIZERS_PARALLELISM=false
# Without a GPU: two CPU processes of one thread each (DDP over gloo) share training and
# scoring on a 2-core machine. With a GPU: one process.
if .venv/bin/python -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)"; then
    launch=(--num_processes 1 --num_machines 1 --mixed_precision no --dynamo_backend no)
else
    launch=(--config_file configs/accelerate/cpu-2proc.yaml --main_process_port 0)
fi
exec .venv/bin/accelerate launch "${launch[@]}" train/finetune.py --config configs/demo-gemma-lora.yaml "$@"
