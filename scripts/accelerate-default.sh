#!/usr/bin/env bash
# accelerate's default config for this machine, as `accelerate config default` writes it, unless one
# exists (it is kept): a bare `accelerate launch train/finetune.py --config ...` then runs what accelerate
# would run anyway (here, without a GPU: one CPU process, as `queerbias train`), without its five lines
# of "values were not passed" warnings. The file is accelerate's own ($HF_HOME/accelerate/); `accelerate
# config` changes it.
set -euo pipefail
cd "$(dirname "$0")/.."
home="${HF_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/huggingface}/accelerate"
if [ ! -e "$home/default_config.yaml" ] && [ ! -e "$home/default_config.json" ]; then
    .venv/bin/accelerate config default
fi
