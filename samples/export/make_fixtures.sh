#!/usr/bin/env bash
# Recreate tests/fixtures/executorch/ from scratch with the real ExecuTorch from PyPI.
#
#   samples/export/make_fixtures.sh
#
# Environment:
#   ETSCOPE_EXPORT_VENV  use this existing virtualenv as is (no pip install); default:
#                        create a fresh one at build/export-venv from requirements.txt
#   PYTHON               interpreter for the new venv (default: python3.11, else python3)
#   ETSCOPE_FIXTURE_OUT  output directory (default: tests/fixtures/executorch)
#   ETSCOPE_MOBILENET_CLASSES  classifier width of mobilenet_v2 (default 10, size budget)
#   ETSCOPE_MODELS       space-separated subset of steps, e.g. "infer:mobilenet_v2" (default:
#                        all, see STEPS below); a subset keeps the other results in
#                        build/export-work
#
# Needs network access to PyPI only when it creates the venv. Takes ~15 min on 2 cores.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="${ETSCOPE_FIXTURE_OUT:-$ROOT/tests/fixtures/executorch}"
WORK="$ROOT/build/export-work"

if [[ -n "${ETSCOPE_EXPORT_VENV:-}" ]]; then
  VENV="$ETSCOPE_EXPORT_VENV"
  [[ -x "$VENV/bin/python" ]] || { echo "no python in $VENV" >&2; exit 1; }
else
  VENV="$ROOT/build/export-venv"
  PY="${PYTHON:-$(command -v python3.11 || command -v python3)}"
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install --upgrade pip
  "$VENV/bin/pip" install -r "$HERE/requirements.txt"
fi
PYV="$VENV/bin/python"

STEPS="${ETSCOPE_MODELS:-infer:simple_conv train:xor train:cifar10 infer:cifar10 infer:simple_conv_xnnpack infer:mobilenet_v2}"

# A full run starts from an empty work dir; with ETSCOPE_MODELS set, the results of the
# other steps already in build/export-work are kept and packed again.
if [[ -z "${ETSCOPE_MODELS:-}" ]]; then
  rm -rf "$WORK"
fi
mkdir -p "$WORK"
cd "$HERE"
export PYTHONHASHSEED=0

# The C++ ETDump runner (program-outputs debug level), built against the wheel's own
# headers and libraries. Optional: without a C++ compiler those files are skipped.
ETP="$("$PYV" -c 'import executorch; print(list(executorch.__path__)[0])')"
if "${CXX:-g++}" -O1 -std=c++17 -Wno-deprecated-declarations \
    -DC10_USING_CUSTOM_GENERATED_MACROS -DET_EVENT_TRACER_ENABLED \
    -I"$ETP/include" -I"$ETP/include/executorch/runtime/core/portable_type/c10" \
    "$HERE/etdump_runner/etdump_runner.cpp" -o "$WORK/etdump_runner" \
    -L"$ETP/lib" -Wl,--no-as-needed -lexecutorch -lexecutorch_etdump \
    -lexecutorch_kernels_optimized -lexecutorch_backend_xnnpack -lexecutorch_threadpool \
    -Wl,--as-needed -Wl,-rpath,"$ETP/lib"; then
  export ETSCOPE_ETDUMP_RUNNER="$WORK/etdump_runner"
else
  echo "!!! could not build etdump_runner; program-outputs ETDumps will be missing" >&2
fi
failed=""
for step in $STEPS; do
  kind="${step%%:*}"; model="${step#*:}"
  echo "=== $kind $model"
  script=export_inference.py
  [[ "$kind" == train ]] && script=export_training.py
  set +e
  nice "$PYV" "$script" "$model" "$WORK" > "$WORK/log_${kind}_${model}.txt" 2>&1
  rc=$?
  set -e
  grep '^\[' "$WORK/log_${kind}_${model}.txt" | grep -v cpuinfo || true
  if [[ $rc -ne 0 ]]; then
    echo "!!! $kind $model failed (rc=$rc), see $WORK/log_${kind}_${model}.txt" >&2
    tail -5 "$WORK/log_${kind}_${model}.txt" >&2
    failed="$failed $step"
  fi
done

"$PYV" pack.py "$WORK" "$OUT"
# A two-method program profiled by ExecuTorch's runtime (per-method ETRecord linking).
nice "$PYV" export_two_method_profile.py "$OUT/two_methods" > "$WORK/log_two_methods.txt" 2>&1 || failed="$failed two_methods"
# Transposed convolutions in many configurations, checked by ExecuTorch's runtime.
nice "$PYV" export_conv_transpose.py "$OUT/conv_transpose" > "$WORK/log_conv_transpose.txt" 2>&1 || failed="$failed conv_transpose"
# The operator conformance suite: one small program per operator case, answered by ExecuTorch.
rm -rf "$OUT/ops"
nice "$PYV" export_op_conformance.py "$OUT/ops" > "$WORK/log_ops.txt" 2>&1 || failed="$failed ops"
# Training programs and 20-step runs of ExecuTorch's SGD and torch's AdamW (etscope train's reference).
rm -rf "$OUT/training"
nice "$PYV" export_training_reference.py "$OUT/training" > "$WORK/log_training.txt" 2>&1 || failed="$failed training"
# Small random-weight Llama 3 programs written by ExecuTorch's own LLM exporter (export_llm),
# with ExecuTorch's logits of a prefill and 7 greedy decode steps; export_llm.py without
# --only exports every configuration it knows into build/export-work/llm (not committed).
# --bundle writes the bundled programs (model.bpte) of the small ones before --pack packs them.
rm -rf "$WORK/llm"
LLM_FIXTURES="xnn_8da4w_emb4,xnn_fp32_sdpa,portable_fp32_sdpa,portable_kv_nosdpa,xnn_8da4w_emb4_static,portable_attention_sink_static,portable_local_global_static,xnn_nokv,xnn_bf16_sdpa,portable_bf16_sdpa,portable_fp16_sdpa,portable_quant_kv,xnn_quant_kv_static,portable_static_quant_kv,portable_emb8,portable_emb2_g32,portable_4w"
if nice "$PYV" export_llm.py --out "$WORK/llm" --only "$LLM_FIXTURES" > "$WORK/log_llm.txt" 2>&1; then
  { "$PYV" export_llm.py --bundle "$WORK/llm" && "$PYV" export_llm.py --pack "$WORK/llm" "$OUT/llm"; } || failed="$failed llm"
else
  failed="$failed llm"
fi
# Numeric-gap fixtures on two of those configurations exported with debug.generate_etrecord: the
# exporter's ETRecord as it writes it, one ExecuTorch run (ETDump + debug buffer) on its example
# inputs, write_aot_intermediates.py, and ExecuTorch's Inspector (calculate_numeric_gap) with the
# example inputs as representative inputs; .pte/.etrecord/.inspector.json in llm_etrecord.tar.xz.
rm -rf "$WORK/llm_etrecord"
nice "$PYV" export_llm.py --etrecord-fixtures "$OUT/llm_etrecord" --work "$WORK/llm_etrecord" \
  > "$WORK/log_llm_etrecord.txt" 2>&1 || failed="$failed llm_etrecord"
if [[ -n "$failed" ]]; then
  echo "steps that failed:$failed" >&2
  exit 1
fi
