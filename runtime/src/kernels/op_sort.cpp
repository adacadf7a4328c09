// topk.values(self, k, dim, largest, sorted, values, indices): the k largest (or smallest)
// elements along `dim` and their positions. NaN counts as larger than every number, as in
// PyTorch. Equal values come out in the order ExecuTorch's portable kernel gives them: it selects
// (value, position) pairs by value alone with std::partial_sort when k is at most 1/64 of the
// row, else std::nth_element and then std::sort of the first k - 1; the same standard algorithms
// on the same pairs give the same order. The pairs of one row live in scratch sized at load (16
// bytes per element of `dim`), so nothing is allocated while running.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <utility>

#include "kernels/register.h"
#include "kernels/util/half_via_float.h"
#include "kernels/util/elementwise_util.h"

namespace etscope::runtime::kernels {
namespace {

size_t topk_scratch(Args args) {
  if (args.size() < 3 || args[0]->tag != Tag::kTensor || args[0]->tensor == nullptr || args[2]->tag != Tag::kInt) return 0;
  const TensorImpl& self = *args[0]->tensor;
  const int64_t d = normalize_dim(args[2]->scalar.i, self.dim());
  if (d < 0) return 0;
  const int64_t n = self.dim() == 0 ? 1 : self.size(static_cast<int>(d));
  return static_cast<size_t>(std::max<int64_t>(n, 0)) * 16;
}

template <typename T>
bool greater(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return !std::isnan(b);
    if (std::isnan(b)) return false;
  }
  return a > b;
}

void topk_values(KernelContext& ctx, Args args) {
  const char* op = "topk.values";
  if (!check_arg_count(ctx, args, 7, op)) return;
  TensorImpl* self = tensor_arg(ctx, args, 0, op);
  TensorImpl* values = tensor_arg(ctx, args, 5, op);
  TensorImpl* indices = tensor_arg(ctx, args, 6, op);
  if (!self || !values || !indices || !require_contiguous(ctx, op, {self, values, indices})) return;
  if (args[1]->tag != Tag::kInt || args[2]->tag != Tag::kInt || args[3]->tag != Tag::kBool || args[4]->tag != Tag::kBool) {
    ctx.fail(ErrorCode::kCorrupt, "%s: k and dim must be ints, largest and sorted bools", op);
    return;
  }
  if (values->dtype() != self->dtype() || indices->dtype() != ScalarType::kLong) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: values must have self's dtype and indices must be int64", op);
    return;
  }
  const int64_t d = normalize_dim(args[2]->scalar.i, self->dim());
  if (d < 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: dim %lld is out of range for rank %d", op,
             static_cast<long long>(args[2]->scalar.i), self->dim());
    return;
  }
  const int64_t n = self->dim() == 0 ? 1 : self->size(static_cast<int>(d));
  const int64_t k = args[1]->scalar.i;
  if (k < 0 || k > n) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: k %lld is out of range for a dimension of size %lld", op,
             static_cast<long long>(k), static_cast<long long>(n));
    return;
  }
  if (static_cast<size_t>(n) * 16 > ctx.scratch().size()) {
    ctx.fail(ErrorCode::kOutOfResources, "%s: dimension larger than the extent sized at load", op);
    return;
  }
  const bool largest = args[3]->scalar.b;
  std::array<int64_t, kMaxDims> sizes{};
  for (int i = 0; i < self->dim(); ++i) sizes[static_cast<size_t>(i)] = self->size(i);
  if (self->dim() > 0) sizes[static_cast<size_t>(d)] = k;
  const std::span<const int64_t> out_sizes{sizes.data(), static_cast<size_t>(self->dim())};
  if (!resize_or_fail(ctx, values, out_sizes, op) || !resize_or_fail(ctx, indices, out_sizes, op)) return;
  int64_t inner = 1, outer = 1;
  for (int i = 0; i < self->dim(); ++i) {
    if (i < d) outer *= self->size(i);
    if (i > d) inner *= self->size(i);
  }
  const bool sorted = args[4]->scalar.b;
  const bool ok = dispatch_real_and_bool(self->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Pair = std::pair<T, int64_t>;
    static_assert(sizeof(Pair) <= 16);
    auto* queue = reinterpret_cast<Pair*>(ctx.scratch().data());
    const T* x = self->data_as<T>();
    T* v = values->data_as<T>();
    int64_t* idx = indices->data_as<int64_t>();
    if (self->dim() == 0) {
      if (k == 1) {
        v[0] = x[0];
        idx[0] = 0;
      }
      return;
    }
    if (k == 0) return;
    auto by_value_desc = [](const Pair& a, const Pair& b) { return greater(a.first, b.first); };
    auto by_value_asc = [](const Pair& a, const Pair& b) { return greater(b.first, a.first); };
    const bool partial = k * 64 <= n;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const T* row = x + o * n * inner + i;
        for (int64_t j = 0; j < n; ++j) {
          ::new (&queue[j]) Pair(row[j * inner], j);
        }
        auto select = [&](auto cmp) {
          if (partial) {
            std::partial_sort(queue, queue + k, queue + n, cmp);
          } else {
            std::nth_element(queue, queue + (k - 1), queue + n, cmp);
            if (sorted) std::sort(queue, queue + (k - 1), cmp);
          }
        };
        if (largest) {
          select(by_value_desc);
        } else {
          select(by_value_asc);
        }
        for (int64_t j = 0; j < k; ++j) {
          const int64_t at = o * k * inner + j * inner + i;
          v[at] = queue[j].first;
          idx[at] = queue[j].second;
        }
      }
    }
  });
  if (!ok) ctx.fail(ErrorCode::kNotSupported, "%s: dtype %s is not supported", op, scalar_type_name(self->dtype()).c_str());
}

}  // namespace

void register_sort_kernels(KernelRegistry& r) {
  r.add("aten::topk.values", half_kernel<topk_values, topk_scratch>(kRealBoolDtypes));
}

}  // namespace etscope::runtime::kernels
