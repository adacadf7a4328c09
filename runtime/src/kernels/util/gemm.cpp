#include "kernels/util/gemm.h"

#include <Eigen/Core>

namespace etscope::rt::kernels {
namespace {

template <typename T>
void gemm_impl(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, const T* b, T beta,
               T* c) {
  using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using ConstMap = Eigen::Map<const Mat>;
  Eigen::Map<Mat> C(c, m, n);
  // A transposed row-major matrix is the same bytes read as its transpose.
  ConstMap A(a, trans_a ? k : m, trans_a ? m : k);
  ConstMap B(b, trans_b ? n : k, trans_b ? k : n);
  if (beta == T(0)) {
    C.setZero();
  } else if (beta != T(1)) {
    C *= beta;
  }
  if (trans_a && trans_b) {
    C.noalias() += alpha * (A.transpose() * B.transpose());
  } else if (trans_a) {
    C.noalias() += alpha * (A.transpose() * B);
  } else if (trans_b) {
    C.noalias() += alpha * (A * B.transpose());
  } else {
    C.noalias() += alpha * (A * B);
  }
}

}  // namespace

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, const float* b, float beta,
          float* c) {
  gemm_impl(ta, tb, m, n, k, alpha, a, b, beta, c);
}
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, const double* b,
          double beta, double* c) {
  gemm_impl(ta, tb, m, n, k, alpha, a, b, beta, c);
}

}  // namespace etscope::rt::kernels
