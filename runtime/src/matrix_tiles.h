// Intel AMX tiles (the matrix units of Sapphire Rapids and later Xeons): whether this process
// may use them. Kernels with a tile path (qd8_layers.cpp) check it and keep their AVX-512 or
// portable path otherwise.
#pragma once

namespace etscope::runtime {

/// True when this build has tile code (compiled for a CPU with AMX-TILE and AMX-INT8), the CPU
/// running it has both, the OS saves tile state (XCR0), and Linux gave this process the
/// permission to use tile data (arch_prctl ARCH_REQ_XCOMP_PERM, asked once on the first call).
bool matrix_tiles_available();

}  // namespace etscope::runtime
