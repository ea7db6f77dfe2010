#!/usr/bin/env bash
# Set up (if needed) and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
# Three workers of one thread each (pytest-xdist; QUEERBIAS_TEST_WORKERS=0 runs in one process): the
# tests' models are tiny, so a second thread per forward pass costs more in contention than it saves,
# and on two cores a third worker fills the time the others wait on their subprocesses, locks and
# servers (the whole suite on 2 idle cores: 11 min with two workers, 9 min 21 s with three).
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
exec .venv/bin/python -m pytest -q -n "${QUEERBIAS_TEST_WORKERS:-3}" --dist worksteal "$@"
