#include "kernels/util/gemm.h"

#include <Eigen/Core>
#include <algorithm>
#include <cstring>

namespace etscope::runtime::kernels {
namespace {

using Eigen::Index;
using Eigen::internal::general_matrix_matrix_product;
using Eigen::internal::level3_blocking;

// Eigen's blocking descriptor pointing at caller-provided packing buffers, so its GEMM never
// allocates (the default gemm_blocking_space allocates them).
template <typename T>
class WorkspaceBlocking : public level3_blocking<T, T> {
 public:
  WorkspaceBlocking(T* block_a, T* block_b, Index mc, Index nc, Index kc) {
    this->m_blockA = block_a;
    this->m_blockB = block_b;
    this->m_mc = mc;
    this->m_nc = nc;
    this->m_kc = kc;
  }
};

// Blocking sizes for the column-major product Eigen runs: rows x cols x depth.
void blocking_sizes(Index rows, Index cols, Index depth, size_t element_size, Index* kc, Index* mc, Index* nc) {
  *kc = depth, *mc = rows, *nc = cols;
  if (element_size == sizeof(double)) {
    Eigen::internal::computeProductBlockingSizes<double, double, 1, Index>(*kc, *mc, *nc, Index{1});
  } else {
    Eigen::internal::computeProductBlockingSizes<float, float, 1, Index>(*kc, *mc, *nc, Index{1});
  }
  *mc = std::min(*mc, rows);
  *nc = std::min(*nc, cols);
}

template <int LhsOrder, int RhsOrder, typename T>
void run_product(Index rows, Index cols, Index depth, const T* lhs, Index lhs_stride, const T* rhs, Index rhs_stride,
                 T* res, T alpha, level3_blocking<T, T>& blocking) {
  general_matrix_matrix_product<Index, T, LhsOrder, false, T, RhsOrder, false, Eigen::ColMajor, 1>::run(
      rows, cols, depth, lhs, lhs_stride, rhs, rhs_stride, res, 1, rows, alpha, blocking, nullptr);
}

template <typename T>
void gemm_impl(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, const T* b, T beta,
               T* c, void* workspace) {
  if (beta == T(0)) {
    std::fill(c, c + m * n, T(0));
  } else if (beta != T(1)) {
    for (int64_t i = 0; i < m * n; ++i) c[i] *= beta;
  }
  if (m == 0 || n == 0 || k == 0 || alpha == T(0)) return;
  // Row-major C (m x n) is column-major C^T (n x m) = op(B)^T (n x k) * op(A)^T (k x m). A
  // row-major operand read as column-major is its own transpose, so each storage-order
  // combination maps to one template instance without copying.
  Index kc, mc, nc;
  blocking_sizes(n, m, k, sizeof(T), &kc, &mc, &nc);
  auto* base = reinterpret_cast<uint8_t*>(align64(reinterpret_cast<uintptr_t>(workspace)));
  T* block_a = reinterpret_cast<T*>(base);
  T* block_b = reinterpret_cast<T*>(base + align64(static_cast<size_t>(kc * mc) * sizeof(T)));
  WorkspaceBlocking<T> blocking(block_a, block_b, mc, nc, kc);
  constexpr int kCol = Eigen::ColMajor, kRow = Eigen::RowMajor;
  if (!trans_b && !trans_a) {
    run_product<kCol, kCol>(n, m, k, b, n, a, k, c, alpha, blocking);
  } else if (!trans_b && trans_a) {
    run_product<kCol, kRow>(n, m, k, b, n, a, m, c, alpha, blocking);
  } else if (trans_b && !trans_a) {
    run_product<kRow, kCol>(n, m, k, b, k, a, k, c, alpha, blocking);
  } else {
    run_product<kRow, kRow>(n, m, k, b, k, a, m, c, alpha, blocking);
  }
}

}  // namespace

size_t gemm_workspace_bytes(int64_t m, int64_t n, int64_t k, size_t element_size) {
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  Index kc, mc, nc;
  blocking_sizes(n, m, k, element_size, &kc, &mc, &nc);
  // + 64: gemm() aligns the workspace pointer itself, so callers may pass any offset.
  return align64(static_cast<size_t>(kc * mc) * element_size) + align64(static_cast<size_t>(kc * nc) * element_size) +
         64;
}

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, const float* b, float beta,
          float* c, void* workspace) {
  gemm_impl(ta, tb, m, n, k, alpha, a, b, beta, c, workspace);
}
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, const double* b,
          double beta, double* c, void* workspace) {
  gemm_impl(ta, tb, m, n, k, alpha, a, b, beta, c, workspace);
}

}  // namespace etscope::runtime::kernels
