// Transcendental elementwise nodes on floats over whole buffers with Eigen's vectorized exp,
// tanh and erf (XNNPACK evaluates them with its own vectorized approximations too; float
// programs agree with ExecuTorch's within float tolerance, not bit for bit). The scalar forms in
// elementwise_ops.h stay for the nodes that compute one value at a time.
#include <algorithm>

#include <Eigen/Core>
#include <unsupported/Eigen/SpecialFunctions>

#include "xnnpack/elementwise_ops.h"
#include "xnnpack/node_table.h"

namespace etscope::runtime::xnnpack {
namespace {

// Eigen evaluates an expression over an unaligned buffer with scalar code up to the first
// aligned element and after the last whole packet, so a value's result (an ulp of exp's, a
// sum's order) would depend on where the buffer happens to start. Every block of kBlock values
// goes through aligned buffers of fixed size instead: the same instructions for every element at
// any address, so a run gives the same bytes whatever the allocations before it.
constexpr Eigen::Index kBlock = 64;
using Block = Eigen::Map<Eigen::Array<float, kBlock, 1>, Eigen::Aligned64>;
using ConstBlock = Eigen::Map<const Eigen::Array<float, kBlock, 1>, Eigen::Aligned64>;

// f(block, i, len) for each block of count values of x in turn, copied into an aligned buffer
// (the last padded with zeros).
template <typename F>
void for_each_block(const float* x, int64_t count, F f) {
  alignas(64) float in[kBlock];
  for (int64_t i = 0; i < count; i += kBlock) {
    const int64_t len = std::min<int64_t>(kBlock, count - i);
    std::copy(x + i, x + i + len, in);
    std::fill(in + len, in + kBlock, 0.0f);
    f(ConstBlock(in), i, len);
  }
}

// out[i] = f(x)[i] for count values (x may be out), a block at a time.
template <typename F>
void blockwise(const float* x, float* out, int64_t count, F f) {
  alignas(64) float res[kBlock];
  for_each_block(x, count, [&](const ConstBlock& a, int64_t i, int64_t len) {
    Block o(res);
    f(a, o);
    std::copy(res, res + len, out + i);
  });
}

// out = f(x) over node n's input 0, then its output range.
template <typename F>
void run_vector(DelegateState& m, const Node& n, F f) {
  blockwise(m.input(n, 0), m.output(n), m.out_shape(n).numel(), f);
  apply_output_range(m, n);
}

}  // namespace

void run_gelu(DelegateState& m, const Node& n) {
  run_vector(m, n, [](const ConstBlock& x, Block& out) { out = 0.5f * x * (1.0f + (x * 0.70710678118654752f).erf()); });
}

void run_exp(DelegateState& m, const Node& n) {
  run_vector(m, n, [](const ConstBlock& x, Block& out) { out = x.exp(); });
}

void run_sigmoid(DelegateState& m, const Node& n) {
  run_vector(m, n, [](const ConstBlock& x, Block& out) { out = (1.0f + (-x).exp()).inverse(); });
}

void run_tanh(DelegateState& m, const Node& n) {
  run_vector(m, n, [](const ConstBlock& x, Block& out) { out = x.tanh(); });
}

void run_softmax(DelegateState& m, const Node& n) {
  const float* x = m.input(n, 0);
  float* out = m.output(n);
  const Shape& so = m.out_shape(n);
  const int64_t count = so.numel();
  const int64_t c = so.d[so.rank - 1];
  for (int64_t r = 0; r + c <= count && c > 0; r += c) {
    // The row's largest value and the sum of the exponentials in one fixed order (the blocks'
    // sums, each over a block of fixed size, added in row order).
    float top = x[r];
    for (int64_t j = 1; j < c; ++j) top = std::max(top, x[r + j]);
    float* o = out + r;
    blockwise(x + r, o, c, [top](const ConstBlock& v, Block& e) { e = (v - top).exp(); });
    float sum = 0.0f;  // the padding's zeros add nothing
    for_each_block(o, c, [&sum](const ConstBlock& v, int64_t, int64_t) { sum += v.sum(); });
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j < c; ++j) o[j] *= inv;
  }
  apply_output_range(m, n);
}

}  // namespace etscope::runtime::xnnpack
