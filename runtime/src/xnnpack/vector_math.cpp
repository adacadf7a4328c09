// Transcendental elementwise nodes on floats over whole buffers with Eigen's vectorized exp,
// tanh and erf (XNNPACK evaluates them with its own vectorized approximations too; float
// programs agree with ExecuTorch's within float tolerance, not bit for bit). The scalar forms in
// elementwise_ops.h stay for the nodes that compute one value at a time.
#include <Eigen/Core>
#include <unsupported/Eigen/SpecialFunctions>

#include "xnnpack/elementwise_ops.h"
#include "xnnpack/node_table.h"

namespace etscope::runtime::xnnpack {
namespace {

using Array = Eigen::Map<Eigen::ArrayXf>;
using ConstArray = Eigen::Map<const Eigen::ArrayXf>;

// out = f(x) over node n's input 0, then its output range.
template <typename F>
void run_vector(DelegateState& m, const Node& n, F f) {
  const int64_t count = m.out_shape(n).numel();
  if (count > 0) {
    ConstArray x(m.input(n, 0), static_cast<Eigen::Index>(count));
    Array out(m.output(n), static_cast<Eigen::Index>(count));
    f(x, out);
  }
  apply_output_range(m, n);
}

}  // namespace

void run_gelu(DelegateState& m, const Node& n) {
  run_vector(m, n, [](const ConstArray& x, Array& out) { out = 0.5f * x * (1.0f + (x * 0.70710678118654752f).erf()); });
}

void run_exp(DelegateState& m, const Node& n) {
  run_vector(m, n, [](const ConstArray& x, Array& out) { out = x.exp(); });
}

void run_sigmoid(DelegateState& m, const Node& n) {
  run_vector(m, n, [](const ConstArray& x, Array& out) { out = (1.0f + (-x).exp()).inverse(); });
}

void run_tanh(DelegateState& m, const Node& n) {
  run_vector(m, n, [](const ConstArray& x, Array& out) { out = x.tanh(); });
}

void run_softmax(DelegateState& m, const Node& n) {
  const float* x = m.input(n, 0);
  float* out = m.output(n);
  const Shape& so = m.out_shape(n);
  const int64_t count = so.numel();
  const int64_t c = so.d[so.rank - 1];
  for (int64_t r = 0; r + c <= count && c > 0; r += c) {
    ConstArray xr(x + r, static_cast<Eigen::Index>(c));
    Array o(out + r, static_cast<Eigen::Index>(c));
    o = (xr - xr.maxCoeff()).exp();
    o *= 1.0f / o.sum();
  }
  apply_output_range(m, n);
}

}  // namespace etscope::runtime::xnnpack
