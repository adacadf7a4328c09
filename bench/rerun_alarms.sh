#!/usr/bin/env bash
# Back-to-back reruns of real programs into one store, for measuring compare's false alarms
# (issue 28): every program is run RUNS times in a row with each engine (`etscope run P
# --iterations 20 --store S`), tagged prog=, engine= and batch=, on the machine as it is (a busy
# machine is the load being measured). Then bench/rerun_alarms (etscope-rerun-alarms) compares
# consecutive runs of each program and engine, counts method-level alarms and pairs with
# operator alarms, and plants a 20% slowdown of one operator in each pair's B run.
#
#   bench/rerun_alarms.sh BUILD_DIR STORE [RUNS] [BATCH]      # RUNS default 12, BATCH default 1
#   BUILD_DIR/bin/etscope-rerun-alarms STORE [--batch BATCH]
#
# ETSCOPE_RERUN_REPEAT=K makes each of the RUNS a `run --repeat K` set instead (K runs, each its
# own load, tagged set=); compare them with `etscope-rerun-alarms STORE --batch BATCH --sets`.
#
# ExecuTorch's engine runs cifar10 with its portable kernels at ~1.6 s per execution, so that
# program gets RUNS/2 runs with it (ETSCOPE_RERUN_SLOW_RUNS overrides).
set -euo pipefail
build=${1:?build directory}
store=${2:?store file}
runs=${3:-12}
batch=${4:-1}
slow_runs=${ETSCOPE_RERUN_SLOW_RUNS:-$(( (runs + 1) / 2 ))}
repeat=${ETSCOPE_RERUN_REPEAT:-1}
here=$(cd "$(dirname "$0")/.." && pwd)
etscope="$build/bin/etscope"
fx="$here/tests/fixtures/executorch"
programs=(
  "xnn_cnn=$fx/xnnpack/xnn_cnn.pte"
  "xnn_transformer=$fx/xnnpack/xnn_transformer.pte"
  "mlp_layernorm=$fx/models/mlp_layernorm.pte"
  "cifar10=$build/fixtures/executorch/cifar10/cifar10.pte"
)
for entry in "${programs[@]}"; do
  name=${entry%%=*}
  pte=${entry#*=}
  for engine in executorch etscope; do
    n=$runs
    if [[ $name == cifar10 && $engine == executorch ]]; then n=$slow_runs; fi
    for ((i = 0; i < n; ++i)); do
      "$etscope" run "$pte" --engine "$engine" --iterations 20 --repeat "$repeat" --store "$store" \
        --tag prog="$name" --tag engine="$engine" --tag batch="$batch" > /dev/null
    done
    echo "$name $engine: $n runs"
  done
done
