// Single-precision and double-precision matrix products on row-major buffers, backed by Eigen's
// blocked GEMM kernels (single-threaded): C = beta * C + alpha * op(A) * op(B).
//
// Eigen packs panels of A and B into blocking buffers; left alone it allocates them on the heap
// once they pass 128 KiB. Kernels must not allocate while running, so the caller passes those
// buffers in `workspace` (from the kernel's scratch), sized by gemm_workspace_bytes() for the
// same m, n, k.
#pragma once

#include <cstddef>
#include <cstdint>

namespace etscope::runtime::kernels {

/// Bytes of workspace gemm() needs for an m x n x k product of `element_size`-byte elements
/// (4 or 8), including alignment slack. Deterministic, so a ScratchFn can call it at load time.
size_t gemm_workspace_bytes(int64_t m, int64_t n, int64_t k, size_t element_size);

/// A is m x k (or k x m when trans_a), B is k x n (or n x k when trans_b), C is m x n; all
/// row-major and dense. beta == 0 ignores C's previous contents (NaNs included). `workspace` must
/// hold gemm_workspace_bytes(m, n, k, sizeof(T)) bytes; it may alias nothing else.
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, const float* b,
          float beta, float* c, void* workspace);
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a, const double* b,
          double beta, double* c, void* workspace);

/// C (m x n) = A (m x k) * B (k x n), float32, row-major and dense, each output the sum over k in
/// order from zero of rounded products, each sum rounded (no fused multiply-add): the arithmetic
/// of ExecuTorch's portable addmm, bit for bit (checked against ExecuTorch 1.5.1 with 1, 3 and 8
/// rows; its mm sums the last columns of a 50-column product otherwise, so mm keeps the blocked
/// GEMM). 16 columns to a vector, 4 rows at a time
/// (B is read once per 4 rows, unpacked); no workspace. Used where it is also the faster choice
/// (prefer_ordered_gemm): with few rows, where the blocked GEMM spends its time packing B.
/// trans_a: A is stored k x m; trans_b: B is stored n x k (its 16 x 16 tiles are transposed on
/// the way, the sums unchanged).
void gemm_ordered(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c);
inline constexpr int64_t kOrderedGemmMaxRows = 8;
bool prefer_ordered_gemm(int64_t m);

/// out[r * out_stride + j] = sum_i a[r * a_stride + i] * b[i * b_stride + j] for rows x cols
/// outputs, float32, each sum from zero over i in order with fused multiply-adds (as XNNPACK's
/// GEMM kernels add them: its batch matrix multiply's arithmetic, bit for bit), nothing packed:
/// 16 columns to a vector, up to 8 rows of A at a time, each row of B read once per 8 rows of A.
/// With A a convolution's constant filter and B its im2col matrix (NCHW: pixels along the
/// columns) it needs neither packing nor workspace. No workspace; any strides.
void gemm_fma(const float* a, int64_t a_stride, const float* b, int64_t b_stride, int64_t rows, int64_t cols, int64_t k, float* out, int64_t out_stride);

/// Rounds a scratch offset up to the 64-byte alignment gemm()'s workspace (and SIMD loads) want.
constexpr size_t align64(size_t bytes) { return (bytes + 63) & ~size_t{63}; }

}  // namespace etscope::runtime::kernels
