// Dropout: native_dropout.
#include <cmath>

#include "kernels/register.h"
#include "kernels/util/half_via_float.h"
#include "kernels/util/kernel_util.h"
#include "kernels/util/random.h"

namespace etscope::runtime::kernels {
namespace {

// native_dropout.out(input, p, train?, out0, out1): in training, keeps each element with
// probability 1 - p (drawn from the runtime's random stream, kernels/util/random.h) and scales kept ones by 1 / (1 - p); out1 is the bool keep mask. Otherwise
// out0 = input and the mask is all true.
void native_dropout_out(KernelContext& ctx, Args args) {
  const char* op = "native_dropout.out";
  if (!check_arg_count(ctx, args, 5, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  TensorImpl* mask = tensor_arg(ctx, args, 4, op);
  if (!in || !out || !mask || !require_contiguous(ctx, op, {in, out, mask})) return;
  if (out->dtype() != in->dtype() || mask->dtype() != ScalarType::kBool) {
    ctx.fail(ErrorCode::kNotSupported, "%s: out must have the input's dtype and mask must be bool", op);
    return;
  }
  const double p = args[1]->scalar_as_double();
  if (!(p >= 0.0 && p <= 1.0)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: p must be in [0, 1], got %g", op, p);
    return;
  }
  const bool train = args[2]->tag == Tag::kBool && args[2]->scalar.b;
  if (!resize_or_fail(ctx, out, in->sizes(), op) || !resize_or_fail(ctx, mask, in->sizes(), op)) return;
  const int64_t n = in->numel();
  bool* m = mask->data_as<bool>();
  const bool ok = dispatch_float(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in->data_as<T>();
    T* y = out->data_as<T>();
    if (!train) {
      if (y != x) std::memmove(y, x, in->nbytes());
      std::fill(m, m + n, true);
      return;
    }
    const T scale = p < 1.0 ? static_cast<T>(1.0 / (1.0 - p)) : T(0);
    const RandomDraws draws(static_cast<uint64_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const bool keep = draws.uniform(static_cast<uint64_t>(i)) >= p;
      m[i] = keep;
      y[i] = keep ? x[i] * scale : T(0);
    }
  });
  if (!ok) ctx.fail(ErrorCode::kNotSupported, "%s: only float32 and float64 are supported", op);
}

}  // namespace

void register_dropout_kernels(KernelRegistry& r) {
  r.add("aten::native_dropout.out", half_kernel<native_dropout_out>(kFloatDtypes));
}

}  // namespace etscope::runtime::kernels
