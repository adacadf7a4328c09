// Single-precision and double-precision matrix products on row-major buffers, backed by Eigen's
// blocked GEMM (single-threaded): C = beta * C + alpha * op(A) * op(B).
#pragma once

#include <cstdint>

namespace etscope::rt::kernels {

/// A is m x k (or k x m when trans_a), B is k x n (or n x k when trans_b), C is m x n; all
/// row-major and dense. beta == 0 ignores C's previous contents (NaNs included).
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, const float* b,
          float beta, float* c);
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a, const double* b,
          double beta, double* c);

}  // namespace etscope::rt::kernels
