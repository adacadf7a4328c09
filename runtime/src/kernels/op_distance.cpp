// p-norm distances between rows: _cdist_forward.out(x1, x2, p, compute_mode?, out) for every
// pair of rows of x1 [..., P, M] and x2 [..., R, M] (batch dims broadcast) into [..., P, R], and
// _pdist_forward.out(self, p, out) for the pairs i < j of rows of self [N, M] into
// [N (N - 1) / 2]. p = 0 counts differing coordinates, p = inf takes the largest difference, other
// p >= 0 give (sum |a - b|^p)^(1/p). Sums in double.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/register.h"
#include "kernels/util/half_via_float.h"
#include "kernels/util/elementwise_util.h"

namespace etscope::runtime::kernels {
namespace {

template <typename T>
double distance(const T* a, const T* b, int64_t m, double p) {
  double acc = 0;
  for (int64_t i = 0; i < m; ++i) {
    const double d = std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
    if (p == 0) {
      acc += d != 0 ? 1.0 : 0.0;
    } else if (std::isinf(p)) {
      acc = std::max(acc, d);
    } else if (p == 1) {
      acc += d;
    } else if (p == 2) {
      acc += d * d;
    } else {
      acc += std::pow(d, p);
    }
  }
  if (p == 0 || std::isinf(p) || p == 1) return acc;
  return p == 2 ? std::sqrt(acc) : std::pow(acc, 1.0 / p);
}

bool read_p(KernelContext& ctx, const EValue& v, double* p, const char* op) {
  if (v.tag != Tag::kDouble && v.tag != Tag::kInt) {
    ctx.fail(ErrorCode::kCorrupt, "%s: p is not a number", op);
    return false;
  }
  *p = v.scalar_as_double();
  if (!(*p >= 0)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: p must be a non-negative number", op);
    return false;
  }
  return true;
}

void cdist_forward_out(KernelContext& ctx, Args args) {
  const char* op = "_cdist_forward.out";
  if (!check_arg_count(ctx, args, 5, op)) return;
  TensorImpl* x1 = tensor_arg(ctx, args, 0, op);
  TensorImpl* x2 = tensor_arg(ctx, args, 1, op);
  TensorImpl* out = tensor_arg(ctx, args, 4, op);
  double p = 2;
  if (!x1 || !x2 || !out || !require_contiguous(ctx, op, {x1, x2, out}) || !read_p(ctx, *args[2], &p, op)) return;
  if (x1->dim() < 2 || x2->dim() < 2 || x1->size(x1->dim() - 1) != x2->size(x2->dim() - 1) ||
      x2->dtype() != x1->dtype() || out->dtype() != x1->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: needs x1 [..., P, M] and x2 [..., R, M] of one float dtype", op);
    return;
  }
  std::array<int64_t, kMaxDims> batch{};
  int brank = 0;
  if (!broadcast_shape(x1->sizes().first(static_cast<size_t>(x1->dim() - 2)),
                       x2->sizes().first(static_cast<size_t>(x2->dim() - 2)), &batch, &brank) ||
      brank + 2 > kMaxDims) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: the batch dimensions of x1 and x2 do not broadcast", op);
    return;
  }
  const int64_t rows1 = x1->size(x1->dim() - 2), rows2 = x2->size(x2->dim() - 2), m = x1->size(x1->dim() - 1);
  std::array<int64_t, kMaxDims> sizes = batch;
  sizes[static_cast<size_t>(brank)] = rows1;
  sizes[static_cast<size_t>(brank + 1)] = rows2;
  if (!resize_or_fail(ctx, out, {sizes.data(), static_cast<size_t>(brank + 2)}, op)) return;
  int64_t nbatch = 1;
  for (int d = 0; d < brank; ++d) nbatch *= batch[static_cast<size_t>(d)];
  const std::span<const int64_t> bshape{batch.data(), static_cast<size_t>(brank)};
  const bool ok = dispatch_float(x1->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    BroadcastIndex i1(bshape, x1->sizes().first(static_cast<size_t>(x1->dim() - 2)));
    BroadcastIndex i2(bshape, x2->sizes().first(static_cast<size_t>(x2->dim() - 2)));
    T* y = out->data_as<T>();
    for (int64_t b = 0; b < nbatch; ++b, i1.advance(), i2.advance()) {
      const T* a = x1->data_as<T>() + i1.index() * rows1 * m;
      const T* c = x2->data_as<T>() + i2.index() * rows2 * m;
      for (int64_t i = 0; i < rows1; ++i) {
        for (int64_t j = 0; j < rows2; ++j) *y++ = static_cast<T>(distance(a + i * m, c + j * m, m, p));
      }
    }
  });
  if (!ok) ctx.fail(ErrorCode::kNotSupported, "%s: only float32 and float64 are supported", op);
}

void pdist_forward_out(KernelContext& ctx, Args args) {
  const char* op = "_pdist_forward.out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* self = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  double p = 2;
  if (!self || !out || !require_contiguous(ctx, op, {self, out}) || !read_p(ctx, *args[1], &p, op)) return;
  if (self->dim() != 2 || out->dtype() != self->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: needs self [N, M] and out of self's dtype", op);
    return;
  }
  const int64_t n = self->size(0), m = self->size(1);
  const int64_t sizes[1] = {n > 1 ? n * (n - 1) / 2 : 0};
  if (!resize_or_fail(ctx, out, sizes, op)) return;
  const bool ok = dispatch_float(self->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = self->data_as<T>();
    T* y = out->data_as<T>();
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = i + 1; j < n; ++j) *y++ = static_cast<T>(distance(x + i * m, x + j * m, m, p));
    }
  });
  if (!ok) ctx.fail(ErrorCode::kNotSupported, "%s: only float32 and float64 are supported", op);
}

}  // namespace

void register_distance_kernels(KernelRegistry& r) {
  r.add("aten::_cdist_forward.out", half_kernel<cdist_forward_out>(kFloatDtypes));
  r.add("aten::_pdist_forward.out", half_kernel<pdist_forward_out>(kFloatDtypes));
}

}  // namespace etscope::runtime::kernels
