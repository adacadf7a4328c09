// The libFuzzer entry point every fuzz/fuzz_<target>.cpp defines. Built with clang's
// -fsanitize=fuzzer it is driven by libFuzzer (scripts/dev.sh fuzz TARGET SECONDS); in every
// other build it is linked with replay_main.cpp, which runs files through it (the CTest replay of
// each target's seed corpus and past findings).
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
