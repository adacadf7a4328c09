#!/usr/bin/env bash
# etscope developer entry point. On a fresh Debian machine:
#   scripts/dev.sh demo   install dependencies, build, inspect a bundled sample program
#   scripts/dev.sh test   install dependencies, build, run every test, then again under ASan+UBSan
# Other verbs: setup (dependencies only), build, asan, bench, fuzz TARGET SECONDS (docs/fuzzing.md).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
jobs="$(nproc 2>/dev/null || echo 2)"

# Debian packages the build needs. libimgui-dev, libglfw3-dev, libsqlite3-dev and libzip-dev are
# for the viewer, the run store and ETRecord archives; xz-utils unpacks the large test fixtures;
# The run store: libsqlite3-dev (the default store), libpq-dev (PostgreSQL stores) and libssl-dev
# (SHA-256 of the stored files); the store tests start a throwaway server from Debian's
# postgresql package (tests/store/postgres_fixture.sh), which the package's own cluster does not need
# to be running for.
# libpng-dev writes the viewer's screenshots, which its tests take under xvfb (xauth) with Mesa's
# software OpenGL (libgl1-mesa-dri) and a DejaVu font. libgraphviz-dev lays out the viewer's
# operator graph (Graphviz's dot, through libgvc). The tokenizers (tokenizer/, docs/llm.md) split text
# with PCRE2 (libpcre2-dev), read SentencePiece .model files with libsentencepiece-dev and NFC-normalize
# with ICU (libicu-dev); without the last two etscope builds and refuses those files.
# lld links the test and tool binaries faster than the default linker (CMakeLists.txt).
packages=(cmake make g++ pkg-config flatbuffers-compiler libflatbuffers-dev libcli11-dev
          nlohmann-json3-dev libeigen3-dev catch2 libimgui-dev libglfw3-dev libsqlite3-dev libzip-dev xz-utils
          libpng-dev fonts-dejavu-core xvfb xauth libgl1-mesa-dri
          libpq-dev libssl-dev postgresql libgraphviz-dev libpcre2-dev libsentencepiece-dev libicu-dev lld)

setup() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "etscope setup: installing ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
  fetch_executorch
}

# ExecuTorch's own runtime for the ExecuTorch engine (executorch/, run --engine executorch): the
# pinned executorch wheel, fetched without its dependencies (no torch) and unpacked into
# .deps/executorch-<version>/ where cmake/executorch.cmake finds it. The C++ libraries inside do not
# depend on the Python version. The build never needs it: without it, etscope builds without the
# ExecuTorch engine and says so.
executorch_version=1.5.1
executorch_wheel=executorch-1.5.1-cp311-cp311-manylinux_2_28_x86_64.whl
executorch_sha256=274c28c2fe2b76acb03f9fa381537425c40e0098dcf886baf6d97a1a55ffe300

fetch_executorch() {
  local dest=".deps/executorch-$executorch_version"
  [ -f "$dest/executorch/share/cmake/executorch-config.cmake" ] && return 0
  if [ "$(uname -m)" != "x86_64" ]; then
    echo "etscope setup: the pinned executorch wheel is for x86_64; the ExecuTorch engine is not built here" >&2
    return 0
  fi
  local py
  py="$(command -v python3 || true)"
  if [ -z "$py" ] || ! "$py" -m pip --version >/dev/null 2>&1; then
    echo "etscope setup: installing python3-pip to fetch the executorch wheel"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3 python3-pip >/dev/null || true
    py="$(command -v python3 || true)"
  fi
  mkdir -p .deps
  if ! "$py" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.11 \
         --platform manylinux_2_28_x86_64 "executorch==$executorch_version" -d .deps >/dev/null 2>&1; then
    echo "etscope setup: could not fetch executorch==$executorch_version from PyPI: the ExecuTorch engine is not built" >&2
    return 0
  fi
  if ! echo "$executorch_sha256  .deps/$executorch_wheel" | sha256sum -c --quiet -; then
    echo "etscope setup: .deps/$executorch_wheel does not have the pinned SHA-256: not used" >&2
    rm -f ".deps/$executorch_wheel"
    return 0
  fi
  rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
  "$py" -m zipfile -e ".deps/$executorch_wheel" "$dest.tmp"
  # Only the C++ package is used: its headers, libraries, CMake files and version.
  mkdir -p "$dest/executorch"
  for part in include lib share version.py; do mv "$dest.tmp/executorch/$part" "$dest/executorch/"; done
  rm -rf "$dest.tmp" ".deps/$executorch_wheel"
  echo "etscope setup: ExecuTorch $executorch_version's C++ runtime in $dest (for run --engine executorch)"
}

# ccache, when installed, makes rebuilds in fresh clones cheap (it is optional: nothing installs it).
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

build() {
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DETSCOPE_WERROR=ON "${launcher[@]}" >/dev/null
  cmake --build build -j "$jobs"
}

asan() {
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DETSCOPE_SANITIZE=ON -DETSCOPE_WERROR=ON -DETSCOPE_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
  cmake --build build-asan -j "$jobs"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    LSAN_OPTIONS="suppressions=$root/tests/lsan_suppressions.txt" \
    ctest --test-dir build-asan -j "$jobs" --output-on-failure
}

# Coverage-guided fuzzing of one target (fuzz/fuzz_<target>.cpp) with clang's libFuzzer, ASan and
# UBSan, on a copy of its seed corpus; new crashes are copied into fuzz/findings/<target>/ (which
# every build's replay test then runs). Needs clang and libclang-rt-dev (Debian).
fuzz() {
  local target="${1:?usage: scripts/dev.sh fuzz pte|ptd|bpte|etdump|etrecord|graph_json|pickle|npy|xnnpack|run|tokenizer SECONDS}" seconds="${2:-60}"
  command -v clang++ >/dev/null || { echo "etscope fuzz: needs clang++ (apt-get install clang libclang-rt-dev)" >&2; exit 2; }
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DETSCOPE_LIBFUZZER=ON \
    -DETSCOPE_BUILD_TESTS=OFF -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
  cmake --build build-fuzz -j "$jobs" --target "etscope-fuzz-$target"
  local work="build-fuzz/corpus-$target" findings="fuzz/findings/$target"
  mkdir -p "$work" build-fuzz/artifacts
  cp -n "fuzz/corpus/$target"/* "$work"/ 2>/dev/null || true
  set +e
  "build-fuzz/bin/etscope-fuzz-$target" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix=build-fuzz/artifacts/ -print_final_stats=1 "$work" 2>&1 | tee "build-fuzz/fuzz-$target.log" | tail -25
  set -e
  local found=(build-fuzz/artifacts/crash-* build-fuzz/artifacts/leak-* build-fuzz/artifacts/timeout-* build-fuzz/artifacts/oom-*)
  local n=0
  for f in "${found[@]}"; do
    [ -e "$f" ] || continue
    mkdir -p "$findings"
    mv "$f" "$findings/"
    n=$((n + 1))
  done
  echo "etscope fuzz $target: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "build-fuzz/fuzz-$target.log" | grep -o '[0-9]*$') executions in ${seconds} s, $n new findings$( [ "$n" -gt 0 ] && echo " (moved to $findings)")"
}

case "${1:-}" in
  setup) setup ;;
  build) setup; build ;;
  demo)
    setup; build
    # The core loop on the bundled cifar10 sample: inspect the program, run it under the
    # profiler with an ETDump, and read the trace back joined with the export-time ETRecord.
    sample=tests/fixtures/executorch/cifar10
    unpacked=build/fixtures/executorch/cifar10
    mkdir -p build/demo
    build/bin/etscope pte "$unpacked/cifar10.pte"
    build/bin/etscope run "$unpacked/cifar10.pte" --input "$sample/cifar10.input0.npy" --iterations 10 \
      --etdump build/demo/cifar10.etdp
    build/bin/etscope inspect --etdump build/demo/cifar10.etdp --etrecord "$unpacked/cifar10.etrecord" \
      --block Execute --sort total --top 12
    build/bin/etscope inspect --etdump build/demo/cifar10.etdp --etrecord "$unpacked/cifar10.etrecord" \
      --block Execute --by-type --modules
    build/bin/etscope trace --etdump build/demo/cifar10.etdp --etrecord "$unpacked/cifar10.etrecord" \
      -o build/demo/cifar10.trace.json
    ;;
  test)
    setup; build
    ctest --test-dir build -j "$jobs" --output-on-failure
    asan
    ;;
  asan) setup; asan ;;
  bench) setup; build; bench/run_benchmarks.sh ;;
  fuzz) shift; fuzz "$@" ;;
  *)
    echo "usage: scripts/dev.sh demo|test|setup|build|asan|bench|fuzz TARGET SECONDS" >&2
    exit 2
    ;;
esac
