#!/usr/bin/env bash
# The GPU benchmark in one command (bench/gpu_bench.py; writes BENCHMARKS.md, section gpu), then the
# seed study's scale (bench/seed_scale.py; writes docs/study.md, section seed-scale-cuda).
#
#   bash bench/gpu.sh                # on a machine with one CUDA GPU: measure, write the table
#   bash bench/gpu.sh --cpu-smoke    # anywhere: a tiny version on the CPU (the tests run it)
#
# A GPU machine without network needs what `python bench/gpu_assets.py` gathers, once, where
# the embedded model and ../shared are: bench/.gpu-assets/ (ignored by git; carry that folder).
# On a machine without CUDA the plain command says "no GPU" and measures nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-}
if [ -z "$PY" ]; then
    if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
# Without an install, queerbias runs from src/. Carried pure-Python wheels go to a folder that
# gpu_bench.py puts behind the machine's own packages, so they only fill what is missing.
if ! "$PY" -c "import queerbias" 2>/dev/null; then
    export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
fi
if [ -d bench/.gpu-assets/wheels ] && ! "$PY" -c "import datasets" 2>/dev/null; then
    QUEERBIAS_BENCH_SITE=$(mktemp -d)
    "$PY" -m pip install -q --no-index --no-deps --no-compile --target "$QUEERBIAS_BENCH_SITE" \
        bench/.gpu-assets/wheels/*.whl
    export QUEERBIAS_BENCH_SITE
fi
export TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
"$PY" bench/gpu_bench.py "$@"
# The seed study at the paper's scale (docs/study.md): per-model costs measured on the GPU, which replace
# the CPU run's estimate there. Not part of --cpu-smoke (the tests run bench/seed_scale.py themselves).
case " $* " in
    *" --cpu-smoke "*) ;;
    *) exec "$PY" bench/seed_scale.py --device cuda --write ;;
esac
