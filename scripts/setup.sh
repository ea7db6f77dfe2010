#!/usr/bin/env bash
# One-time set-up: a virtual environment in .venv with the CPU build of torch
# (a bare `torch` requirement would pull a multi-GB CUDA build) and queerbias.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
if ! .venv/bin/python -c "import queerbias, torch" 2>/dev/null || [ "${QUEERBIAS_REINSTALL:-0}" = 1 ]; then
    .venv/bin/pip install -q --upgrade pip
    .venv/bin/python -c "import torch" 2>/dev/null || .venv/bin/pip install -q "torch==2.13.0"
    .venv/bin/pip install -q -e ".[test]"
fi
