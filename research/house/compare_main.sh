#!/usr/bin/env bash
# Run the same small study and scoring runs on two checkouts of queerbias and diff what they write
# (issue 47: "scores, tables and refusals are byte-identical before and after").
#
#   research/house/compare_main.sh OLD_CHECKOUT NEW_CHECKOUT [WORK]     (WORK default /work/verify)
#
# Both sides get identical inputs: tiny random models built once by OLD's tests/tiny_models.py,
# the shipped pair sets, ../shared/data (gruff/lou; skipped when absent), the checkout's own
# configs/smoke-train.yaml and configs/smoke-study.yaml (each checkout's file is in its own key
# dialect; only max_steps/seeds/output_dir are overridden). Outputs go to WORK/{old,new}/; masked
# copies (mask_outputs.py: timestamps, wall times, paths, versions, fingerprints) to
# WORK/masked/{old,new}/, and `diff -r` of those to WORK/diff.txt. Every command runs under
# `nice -n 19`, one at a time. SKIP="train study" leaves steps out.
set -u
OLD=$(cd "$1" && pwd); NEW=$(cd "$2" && pwd); WORK=${3:-/work/verify}
HERE=$(cd "$(dirname "$0")" && pwd)
SHARED=${SHARED_DATA:-$(dirname "$OLD")/shared/data}
[ -d "$SHARED" ] || SHARED=/work/shared/data
PY=${PYTHON:-python}   # the venv's python, e.g. PYTHON=/work/main/.venv/bin/python
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OMP_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false
SKIP=${SKIP:-}
MODELS=$WORK/models
mkdir -p "$WORK"

if [ ! -f "$MODELS/.done" ]; then
  rm -rf "$MODELS"; mkdir -p "$MODELS"
  (cd "$OLD" && PYTHONPATH=src:tests nice -n 19 "$PY" -c "
from pathlib import Path
from tiny_models import BUILDERS
for name in ['gpt2', 'bert', 'german-bert', 'opt', 'bloom', 'llama', 'gemma', 'xlm-roberta', 'xlm']:
    BUILDERS[name](Path('$MODELS') / name)
") >/dev/null 2>&1 && touch "$MODELS/.done" || { echo "building tiny models failed"; exit 1; }
fi

skip() { case " $SKIP " in *" $1 "*) return 0;; esac; return 1; }

side() {  # side NAME CHECKOUT
  local name=$1 root=$2 out=$WORK/$1
  rm -rf "$out"; mkdir -p "$out/log" "$out/refusals"
  export QUEERBIAS_CACHE=$out/cache PYTHONPATH=$root/src
  qb() { local tag=$1; shift; (cd "$root" && nice -n 19 "$PY" -m queerbias.cli "$@") \
           >"$out/log/$tag.out" 2>"$out/log/$tag.err"; echo "$?" >"$out/log/$tag.rc"; }
  echo "[$name] $root"
  qb prepare models prepare tiny
  [ "$(cat "$out/log/prepare.rc")" = 0 ] || { echo "[$name] models prepare tiny failed: $out/log/prepare.err"; exit 1; }
  # (a) the pair suite: causal and masked families on a shipped set, a run per command
  qb score score --pairs queerbias-de --sample 30 --seed 0 --identical drop --out "$out/score" --no-progress \
     --model "$MODELS/gpt2" --model "$MODELS/bert" --model "$MODELS/german-bert" --model "$MODELS/opt" \
     --model "$MODELS/bloom" --model "$MODELS/llama" --model "$MODELS/gemma" --model "$MODELS/xlm-roberta"
  qb run-xlm run pairs --model "$MODELS/xlm" --kind masked --data queerbias-de --sample 30 --out "$out/run-xlm" --no-progress
  qb run-frames run pairs --model "$MODELS/gpt2" --data queerbias-de-frames --sample 12 --sample-unit frame \
     --out "$out/run-frames" --no-progress
  qb run-tiny run pairs --model embedded:tiny --data queerbias-de:test --sample 40 --out "$out/run-tiny" --no-progress
  qb knowledge run knowledge --model "$MODELS/bert" --data queerbias-knowledge --sample 20 --out "$out/knowledge" --no-progress
  qb report report --out "$out/report" gpt2="$out/score/gpt2" bert="$out/score/bert"
  # (b) the other suites on the shared data
  if [ -d "$SHARED/gruff" ]; then
    qb gruff gruff score --model "$MODELS/gpt2" --templates "$SHARED/gruff" --sample 8 --settings none \
       --out "$out/gruff" --no-progress
  fi
  if [ -d "$SHARED/lou" ]; then
    qb lou lou lm --model "$MODELS/gpt2" --data "$SHARED/lou" --task x-stance-de --sample 6 --resamples 100 \
       --out "$out/lou" --no-progress
    qb lou-llama lou lm --model "$MODELS/llama" --data "$SHARED/lou" --task x-stance-de --sample 6 --resamples 100 \
       --out "$out/lou-llama" --no-progress
  fi
  qb gifi gifi run --model "$MODELS/gpt2" --dimensions GDR --groups er sie xier --sample 2 --max-new-tokens 4 \
     --runs 1 --n-resamples 50 --out "$out/gifi" --no-progress
  # (c) compare
  qb compare compare --resamples 200 --out "$out/compare" gpt2="$out/score/gpt2" llama="$out/score/llama"
  [ -d "$out/lou" ] && qb compare-lou compare --resamples 100 --out "$out/compare-lou" before="$out/lou" after="$out/lou-llama"
  # (d) training and a study
  if ! skip train; then
    qb train train --config configs/smoke-train.yaml output_dir="$out/train" max_steps=2 eval_every=2
    # CDA (no pair batches) with the scorer's batch size at checkpoints set, in the checkout's own key
    # (issue 47 renamed eval.batch_size to eval.sequences_per_batch)
    local evalkey=eval.batch_size
    grep -q examples_per_device "$root/configs/smoke-train.yaml" && evalkey=eval.sequences_per_batch
    qb train-cda train --config configs/smoke-train.yaml output_dir="$out/train-cda" max_steps=2 eval_every=2 \
       objective=cda pairs.train=null pairs.mine=null equalise=null $evalkey=4
  fi
  if ! skip study; then
    "$PY" - "$root/configs/smoke-study.yaml" "$out/study.yaml" "$out/study" <<'PYEOF'
import sys, yaml
raw = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
raw["output_dir"], raw["seeds"] = sys.argv[3], [0]
raw["training"] = {"overrides": {"max_steps": 2, "eval_every": 2}}
yaml.safe_dump(raw, open(sys.argv[2], "w", encoding="utf-8"), sort_keys=False, allow_unicode=True)
PYEOF
    qb study study --config "$out/study.yaml"
  fi
  # (f) listings, exports and a card written again
  qb benchmarks benchmarks
  qb suites suites
  qb export export lm-eval --model "$MODELS/gpt2" --pairs queerbias-de --sample 20 --out "$out/export"
  [ -d "$SHARED/gruff" ] && qb gruff-generate gruff generate --templates "$SHARED/gruff" --sample 8 --out "$out/gruff-generate/items.csv"
  [ -d "$out/train" ] && qb card card --out "$out/card/README.md" "$out/train"
  # (e) refusals: the one-line messages and exit codes
  printf 'sent_more,sent_less,group\nSchwule sind nett.,Heteros sind nett.,gay\n,Heteros sind laut.,gay\n' >"$out/refusals/bad-row.csv"
  printf 'sent_more,sent_less,group\nSchwule sind nett.,Heteros sind nett.,gay,extra\n' >"$out/refusals/extra-field.csv"
  printf 'model: embedded:tiny\nlearning_rat: 0.1\n' >"$out/refusals/bad-key.yaml"
  printf 'model: embedded:tiny\nmax_steps: 0\n' >"$out/refusals/bad-value.yaml"
  printf 'model: embedded:tiny\nobjective: nonsense\n' >"$out/refusals/bad-objective.yaml"
  printf 'model: embedded:tiny\nmax_steps: 1\nmax_steps: 2\n' >"$out/refusals/twice.yaml"
  qb ref-bad-row score --model "$MODELS/gpt2" --pairs "$out/refusals/bad-row.csv" --out "$out/refusals/o1"
  qb ref-extra-field score --model "$MODELS/gpt2" --pairs "$out/refusals/extra-field.csv" --out "$out/refusals/o2"
  qb ref-bad-key train --config "$out/refusals/bad-key.yaml" output_dir="$out/refusals/t1"
  qb ref-bad-value train --config "$out/refusals/bad-value.yaml" output_dir="$out/refusals/t2"
  qb ref-bad-objective train --config "$out/refusals/bad-objective.yaml" output_dir="$out/refusals/t3"
  qb ref-twice train --config "$out/refusals/twice.yaml" output_dir="$out/refusals/t4"
  qb ref-override train --config configs/smoke-train.yaml output_dir="$out/refusals/t5" lora.nonsense=3
  qb ref-sample score --model "$MODELS/gpt2" --sample 0 --out "$out/refusals/o3"
  qb ref-kind score --model "$MODELS/gpt2" --kind masked --sample 3 --out "$out/refusals/o4"
  qb ref-xlm score --model "$MODELS/xlm" --sample 3 --out "$out/refusals/o5"
  qb ref-retired score --model "$MODELS/gpt2" --pairs queerbias-de-contrary --out "$out/refusals/o6"
  qb ref-compare compare --resamples 0 --out "$out/refusals/c1" "$out/score/gpt2" "$out/score/bert"
  qb ref-gruff run gruff --batch-size 0 --out "$out/refusals/g1"
  qb ref-gifi gifi run --config "$out/refusals/bad-key.yaml" --out "$out/refusals/g2"
  unset QUEERBIAS_CACHE PYTHONPATH
}

side old "$OLD"
side new "$NEW"
if ! skip train; then
  # an earlier config (OLD's smoke-train.yaml, old key names) on NEW: it should train as OLD did, with warnings
  mkdir -p "$WORK/new/oldkeys"
  (cd "$NEW" && QUEERBIAS_CACHE=$WORK/new/cache PYTHONPATH=$NEW/src nice -n 19 "$PY" -m queerbias.cli train \
     --config "$OLD/configs/smoke-train.yaml" output_dir="$WORK/new/oldkeys/train" max_steps=2 eval_every=2) \
     >"$WORK/new/log/train-oldkeys.out" 2>"$WORK/new/log/train-oldkeys.err"
  echo $? >"$WORK/new/log/train-oldkeys.rc"
fi
"$PY" "$HERE/mask_outputs.py" "$WORK" "$OLD" "$NEW"
diff -r "$WORK/masked/old" "$WORK/masked/new" >"$WORK/diff.txt"
if [ -d "$WORK/masked/new/oldkeys/train" ]; then  # its folder is one level deeper: read it as OLD's
  rm -rf "$WORK/masked/oldkeys"; cp -r "$WORK/masked/new/oldkeys/train" "$WORK/masked/oldkeys"
  grep -rl "oldkeys/train" "$WORK/masked/oldkeys" | xargs -r sed -i 's#oldkeys/train#train#g; s#(\.\./\.\./\.\./\.\./\.\./<ROOT>#(../../../../<ROOT>#'
  diff -r "$WORK/masked/old/train" "$WORK/masked/oldkeys" >"$WORK/diff-oldkeys.txt"
fi
echo "rc: $(for f in "$WORK"/old/log/*.rc; do t=$(basename "$f" .rc); echo -n "$t=$(cat "$f")/$(cat "$WORK/new/log/$t.rc" 2>/dev/null) "; done)"
echo "diff: $(grep -c '^diff ' "$WORK/diff.txt") files differ ($WORK/diff.txt)"
