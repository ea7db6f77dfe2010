#!/usr/bin/env bash
# Set-up: a virtual environment in .venv with the CPU build of torch (a bare `torch`
# requirement would pull a multi-GB CUDA build), then queerbias and its dependencies with the
# extras that CI tests: lm-eval (the export) and tracking (TensorBoard).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/python -c "import torch" 2>/dev/null || .venv/bin/pip install -q "torch==2.13.0"
# pip runs again only when pyproject.toml changed since the last install (the package itself
# is installed editable, so code changes need no reinstall).
stamp=".venv/.installed-$(sha256sum pyproject.toml | cut -c1-16)"
if [ ! -e "$stamp" ]; then
    .venv/bin/pip install -q -e ".[test,lm-eval,tracking]"
    rm -f .venv/.installed-*
    touch "$stamp"
fi
bash scripts/accelerate-default.sh
