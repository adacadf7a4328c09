#!/usr/bin/env bash
# Runs etscope's benchmarks and prints their figures. Not part of the test suite.
#   bench/run_benchmarks.sh [BUILD_DIR]
# Reference side: when the fixtures' virtualenv exists (build/export-venv, made by
# samples/export/make_fixtures.sh), ExecuTorch's own Python deserializer is timed on the same
# files in the same run and the ratio is printed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
venv="${ETSCOPE_EXPORT_VENV:-$root/build/export-venv}"
out="$build/bench"
mkdir -p "$out"

echo "== machine"
echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/{print $2}') GiB"
echo
echo "== etscope pte on synthetic 2 MB programs"
"$build/bin/pte_bench" generate "$out"
python_bin=""
[ -x "$venv/bin/python" ] && python_bin="$venv/bin/python"
python3 "$root/bench/time_pte.py" --etscope "$build/bin/etscope" ${python_bin:+--reference-python "$python_bin"} \
  "$out/structure_2mb.pte" "$out/weights_2mb.pte" "$root"/tests/data/real/*.pte
echo
echo "== in-process breakdown"
"$build/bin/pte_bench" time "$out/structure_2mb.pte" 20
echo
echo "== ETDump + Inspector: a synthetic 1M-event ETDump and the fixtures, against ExecuTorch's Python Inspector"
"$build/bin/etscope-synth-etdump" "$out/synthetic_1m.etdp" --events 1000000
fixtures="$root/tests/fixtures/executorch"
python3 "$root/bench/time_inspector.py" --bench "$build/bin/inspector_bench" ${python_bin:+--reference-python "$python_bin"} \
  "$out/synthetic_1m.etdp" "$fixtures/cifar10/cifar10.etdp" "$fixtures/simple_conv/simple_conv.etdp"
echo
echo "== tracer cost (cifar10 inference, profiling only, interleaved)"
"$build/bin/inspector_bench" tracer "$build/fixtures/executorch/cifar10/cifar10.pte" --iterations 200
echo
echo "== engines: ExecuTorch's runtime in etscope's worker against ExecuTorch's Python runtime, and etscope's engine (interleaved, 1 thread)"
# Programs as samples/export/export_registry.py writes them (ETSCOPE_ENGINE_BENCH_DIR, default
# build/registry-models); skipped without them or without the venv.
programs="${ETSCOPE_ENGINE_BENCH_DIR:-$root/build/registry-models}"
if [ -n "$python_bin" ] && [ -d "$programs" ]; then
  "$python_bin" "$root/bench/bench_engines.py" --build "$build" --json "$out/engines.json" "$programs" 2>/dev/null
else
  echo "(skipped: needs $venv and programs in $programs)"
fi
echo
echo "== tracer cost inside ExecuTorch's runtime: etscope's streaming tracer against ExecuTorch's ETDumpGen (interleaved, 1 thread)"
if [ -x "$build/bin/etscope-executorch" ]; then
  for p in "$root"/tests/fixtures/executorch/xnnpack/xnn_cnn.pte "$root"/tests/fixtures/executorch/xnnpack/xnn_transformer.pte \
           "$build"/fixtures/executorch/models/vit_tiny.pte "$root"/tests/fixtures/executorch/models/lstm_text.pte; do
    [ -f "$p" ] && "$build/bin/etscope-executorch" --bench-tracers "$p" 200 5 2>/dev/null
  done
else
  echo "(skipped: this build has no ExecuTorch engine)"
fi
echo
echo "== LLMs at real size: etscope generate against ExecuTorch's Python runtime (interleaved, 1 thread, bench/llm.md)"
# Programs as bench/bench_llm.py export writes them (ETSCOPE_LLM_BENCH_DIR, default
# build/llm-bench); skipped without them or without the venv.
llm_programs="${ETSCOPE_LLM_BENCH_DIR:-$root/build/llm-bench}"
if [ -n "$python_bin" ] && [ -d "$llm_programs" ]; then
  "$python_bin" "$root/bench/bench_llm.py" bench --out "$llm_programs" --etscope "$build/bin/etscope" \
    --json "$out/llm.json" 2>/dev/null | sed -n '/^read bandwidth/,$p'
else
  echo "(skipped: needs $venv and programs in $llm_programs, from bench/bench_llm.py export --out DIR)"
fi
