#!/usr/bin/env bash
# etscope developer entry point. On a fresh Debian machine:
#   scripts/dev.sh demo   install dependencies, build, inspect a bundled sample program
#   scripts/dev.sh test   install dependencies, build, run every test, then again under ASan+UBSan
# Other verbs: setup (dependencies only), build, asan, bench.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
jobs="$(nproc 2>/dev/null || echo 2)"

# Debian packages the build needs. libimgui-dev, libglfw3-dev, libsqlite3-dev and libzip-dev are
# for the viewer, the run store and ETRecord archives; xz-utils unpacks the large test fixtures;
# libpng-dev writes the viewer's screenshots, which its tests take under xvfb (xauth) with Mesa's
# software OpenGL (libgl1-mesa-dri) and a DejaVu font.
packages=(cmake make g++ pkg-config flatbuffers-compiler libflatbuffers-dev libcli11-dev
          nlohmann-json3-dev libeigen3-dev catch2 libimgui-dev libglfw3-dev libsqlite3-dev libzip-dev xz-utils
          libpng-dev fonts-dejavu-core xvfb xauth libgl1-mesa-dri)

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
}

build() {
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build -j "$jobs"
}

asan() {
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DETSCOPE_SANITIZE=ON >/dev/null
  cmake --build build-asan -j "$jobs"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan -j "$jobs" --output-on-failure
}

case "${1:-}" in
  setup) setup ;;
  build) setup; build ;;
  demo)
    setup; build
    build/bin/etscope pte tests/data/real/xor_training.pte --instructions
    build/bin/etscope ptd tests/data/real/xor_training.ptd
    ;;
  test)
    setup; build
    ctest --test-dir build -j "$jobs" --output-on-failure
    asan
    ;;
  asan) setup; asan ;;
  bench) setup; build; bench/run_benchmarks.sh ;;
  *)
    echo "usage: scripts/dev.sh demo|test|setup|build|asan|bench" >&2
    exit 2
    ;;
esac
