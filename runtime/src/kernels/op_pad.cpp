// Reflection and replication padding of the last 1, 2 or 3 dimensions:
// reflection_pad{1,2,3}d.out(self, padding, out) and replication_pad{1,2,3}d.out. `padding`
// holds (before, after) pairs starting from the last dimension, as F.pad writes them. Reflection
// mirrors without repeating the edge (each pad must be smaller than its dimension), replication
// repeats the edge element (the dimension must not be empty). Padding may be negative (it then
// crops), as in ATen. Elements are moved as bytes, so every dtype works.
#include <cstring>

#include "kernels/register.h"
#include "kernels/util/elementwise_util.h"

namespace etscope::runtime::kernels {
namespace {

template <int K, bool Reflect>
void pad_out(KernelContext& ctx, Args args) {
  static constexpr const char* kNames[2][3] = {
      {"replication_pad1d.out", "replication_pad2d.out", "replication_pad3d.out"},
      {"reflection_pad1d.out", "reflection_pad2d.out", "reflection_pad3d.out"}};
  const char* op = kNames[Reflect ? 1 : 0][K - 1];
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* self = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  IntList pad;
  if (!self || !out || !int_list_arg(ctx, args, 1, &pad, op) || !require_contiguous(ctx, op, {self, out})) return;
  if (pad.size != 2 * K) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: padding must have %d values, has %zu", op, 2 * K, pad.size);
    return;
  }
  if (self->dim() != K + 1 && self->dim() != K + 2) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: self must have rank %d or %d, has %d", op, K + 1, K + 2, self->dim());
    return;
  }
  if (out->dtype() != self->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: out dtype differs from self's", op);
    return;
  }
  const int rank = self->dim();
  std::array<int64_t, kMaxDims> sizes{};
  std::array<int64_t, kMaxDims> before{};
  for (int d = 0; d < rank; ++d) sizes[static_cast<size_t>(d)] = self->size(d);
  for (int j = 0; j < K; ++j) {
    const int d = rank - 1 - j;
    const int64_t lo = pad[static_cast<size_t>(2 * j)], hi = pad[static_cast<size_t>(2 * j + 1)];
    const int64_t n = self->size(d);
    if (lo < -n || hi < -n || lo > (int64_t{1} << 40) || hi > (int64_t{1} << 40)) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: padding (%lld, %lld) is out of range for dimension %d of size %lld", op,
               static_cast<long long>(lo), static_cast<long long>(hi), d, static_cast<long long>(n));
      return;
    }
    if (Reflect ? (lo >= n || hi >= n) : n == 0) {
      ctx.fail(ErrorCode::kInvalidArgument,
               Reflect ? "%s: padding (%lld, %lld) must be smaller than dimension %d of size %lld"
                       : "%s: padding (%lld, %lld) of dimension %d needs a non-empty dimension, it has size %lld",
               op, static_cast<long long>(lo), static_cast<long long>(hi), d, static_cast<long long>(n));
      return;
    }
    const int64_t padded = n + lo + hi;
    if (padded < 0) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: dimension %d would have negative size", op, d);
      return;
    }
    sizes[static_cast<size_t>(d)] = padded;
    before[static_cast<size_t>(d)] = lo;
  }
  if (!resize_or_fail(ctx, out, {sizes.data(), static_cast<size_t>(rank)}, op)) return;
  const size_t es = self->element_size();
  const auto* src = static_cast<const uint8_t*>(self->data());
  auto* dst = static_cast<uint8_t*>(out->data());
  const int64_t total = out->numel();
  std::array<int64_t, kMaxDims> coord{};
  for (int64_t pos = 0; pos < total; ++pos) {
    int64_t off = 0;
    for (int d = 0; d < rank; ++d) {
      const size_t k = static_cast<size_t>(d);
      const int64_t n = self->size(d);
      int64_t i = coord[k] - before[k];
      if (d >= rank - K) {
        if (Reflect) {
          if (i < 0) i = -i;
          if (i >= n) i = 2 * (n - 1) - i;
        } else {
          i = i < 0 ? 0 : (i >= n ? n - 1 : i);
        }
      }
      off += i * self->strides()[k];
    }
    std::memmove(dst + static_cast<size_t>(pos) * es, src + static_cast<size_t>(off) * es, es);
    for (int d = rank - 1; d >= 0; --d) {
      if (++coord[static_cast<size_t>(d)] < sizes[static_cast<size_t>(d)]) break;
      coord[static_cast<size_t>(d)] = 0;
    }
  }
}

}  // namespace

void register_pad_kernels(KernelRegistry& r) {
  const uint32_t bytes = kRealBoolDtypes | kHalfDtypes;
  r.add("aten::reflection_pad1d.out", kernel(pad_out<1, true>, bytes));
  r.add("aten::reflection_pad2d.out", kernel(pad_out<2, true>, bytes));
  r.add("aten::reflection_pad3d.out", kernel(pad_out<3, true>, bytes));
  r.add("aten::replication_pad1d.out", kernel(pad_out<1, false>, bytes));
  r.add("aten::replication_pad2d.out", kernel(pad_out<2, false>, bytes));
  r.add("aten::replication_pad3d.out", kernel(pad_out<3, false>, bytes));
}

}  // namespace etscope::runtime::kernels
