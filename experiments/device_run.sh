#!/usr/bin/env bash
# One call on the GPU machine: validate every kernel variant, then bench the ops; results under $OUT.
#   bash experiments/device_run.sh <kernels-tree> [validate] [bench OP...]
# The tree id comes from this machine (`git rev-parse HEAD:kernels`): the device copy has no git HEAD.
set -euo pipefail
tree=$1; shift
mkdir -p /tmp/pp && ln -sfn "$PWD/kernels" /tmp/pp/fpa_kernels
export PYTHONPATH=$PWD:/tmp/pp PYTHONUNBUFFERED=1 FPA_STORE=/tmp/store
out=${OUT:-/tmp/out}
mkdir -p "$out/results" "$out/figures"
while [ $# -gt 0 ]; do
  case $1 in
    validate) python3 experiments/gpu_validation.py --configs 50 --kernels-tree "$tree" --out "$out/gpu_validation.json" \
                > "$out/validate.log" 2>&1 || { tail -40 "$out/validate.log"; exit 1; }
              tail -5 "$out/validate.log"; shift ;;
    bench) shift
           while [ $# -gt 0 ] && [ "$1" != validate ]; do
             python3 -m fp_analysis bench "$1" --kernels-tree "$tree" --out "$out/results/bench.json" \
               --figure "$out/figures/bench_$1.png" 2>&1 | tee "$out/bench_$1.log" | tail -30
             shift
           done ;;
    *) echo "unknown step $1"; exit 2 ;;
  esac
done
