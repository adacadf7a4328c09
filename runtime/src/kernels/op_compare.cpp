// Comparisons: eq, ne, lt, le, gt, ge with a Tensor (broadcast) or a Scalar other; where.self_out
// (selects by a condition) and allclose.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/register.h"
#include "kernels/util/half_via_float.h"
#include "kernels/util/elementwise_util.h"
#include "kernels/util/operands_util.h"

namespace etscope::runtime::kernels {
namespace {

// <cmp>.Scalar_out(self, other, out): out (usually bool) = self <cmp> other. An integral tensor
// compared with an Int or Bool scalar compares exactly in int64, a float32 tensor in float32,
// everything else in double.
template <typename Cmp>
void compare_scalar(KernelContext& ctx, Args args, const char* op, Cmp cmp) {
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  if (!in || !out || !require_contiguous(ctx, op, {in, out})) return;
  const EValue& s = *args[1];
  if (s.tag != Tag::kInt && s.tag != Tag::kDouble && s.tag != Tag::kBool) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: other must be a scalar", op);
    return;
  }
  if (!is_supported_dtype(in->dtype()) || !is_supported_dtype(out->dtype())) {
    ctx.fail(ErrorCode::kNotSupported, "%s: unsupported dtypes %s -> %s", op, scalar_type_name(in->dtype()).c_str(),
             scalar_type_name(out->dtype()).c_str());
    return;
  }
  if (!resize_or_fail(ctx, out, in->sizes(), op)) return;
  const int64_t n = in->numel();
  dispatch_real_and_bool(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in->data_as<T>();
    auto run = [&](auto rhs) {
      if (out->dtype() == ScalarType::kBool) {
        bool* y = out->data_as<bool>();
        for (int64_t i = 0; i < n; ++i) y[i] = cmp(static_cast<decltype(rhs)>(x[i]), rhs);
      } else {
        for (int64_t i = 0; i < n; ++i)
          store_from<bool>(out->dtype(), out->data(), i, cmp(static_cast<decltype(rhs)>(x[i]), rhs));
      }
    };
    // A scalar never widens a floating tensor's type (ATen's wrapped-number rule): a float32
    // tensor compares against the scalar rounded to float32.
    if (std::is_integral_v<T> && s.tag != Tag::kDouble) {
      run(static_cast<int64_t>(s.tag == Tag::kBool ? (s.scalar.b ? 1 : 0) : s.scalar.i));
    } else if (std::is_same_v<T, float>) {
      run(static_cast<float>(s.scalar_as_double()));
    } else {
      run(s.scalar_as_double());
    }
  });
}

void eq_scalar_out(KernelContext& ctx, Args args) {
  compare_scalar(ctx, args, "eq.Scalar_out", [](auto a, auto b) { return a == b; });
}
void ne_scalar_out(KernelContext& ctx, Args args) {
  compare_scalar(ctx, args, "ne.Scalar_out", [](auto a, auto b) { return a != b; });
}
void lt_scalar_out(KernelContext& ctx, Args args) {
  compare_scalar(ctx, args, "lt.Scalar_out", [](auto a, auto b) { return a < b; });
}
void le_scalar_out(KernelContext& ctx, Args args) {
  compare_scalar(ctx, args, "le.Scalar_out", [](auto a, auto b) { return a <= b; });
}
void gt_scalar_out(KernelContext& ctx, Args args) {
  compare_scalar(ctx, args, "gt.Scalar_out", [](auto a, auto b) { return a > b; });
}
void ge_scalar_out(KernelContext& ctx, Args args) {
  compare_scalar(ctx, args, "ge.Scalar_out", [](auto a, auto b) { return a >= b; });
}

// Comparisons: out (any real or bool dtype) = a <cmp> b.
template <typename Cmp>
void compare_tensor(KernelContext& ctx, Args args, const char* op, Cmp cmp) {
  Operands o;
  if (!operands(ctx, args, false, op, &o)) return;
  binary_elementwise(ctx, *o.a, *o.b, *o.out, op, cmp);
}
void eq_tensor_out(KernelContext& ctx, Args args) {
  compare_tensor(ctx, args, "eq.Tensor_out", [](auto a, auto b) { return a == b; });
}
void ne_tensor_out(KernelContext& ctx, Args args) {
  compare_tensor(ctx, args, "ne.Tensor_out", [](auto a, auto b) { return a != b; });
}
void lt_tensor_out(KernelContext& ctx, Args args) {
  compare_tensor(ctx, args, "lt.Tensor_out", [](auto a, auto b) { return a < b; });
}
void le_tensor_out(KernelContext& ctx, Args args) {
  compare_tensor(ctx, args, "le.Tensor_out", [](auto a, auto b) { return a <= b; });
}
void gt_tensor_out(KernelContext& ctx, Args args) {
  compare_tensor(ctx, args, "gt.Tensor_out", [](auto a, auto b) { return a > b; });
}
void ge_tensor_out(KernelContext& ctx, Args args) {
  compare_tensor(ctx, args, "ge.Tensor_out", [](auto a, auto b) { return a >= b; });
}

// where.self_out(condition, self, other, out): out = condition ? self : other, the three
// broadcast together.
void where_self_out(KernelContext& ctx, Args args) {
  const char* op = "where.self_out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* cond = tensor_arg(ctx, args, 0, op);
  TensorImpl* a = tensor_arg(ctx, args, 1, op);
  TensorImpl* b = tensor_arg(ctx, args, 2, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  if (!cond || !a || !b || !out || !require_contiguous(ctx, op, {cond, a, b, out})) return;
  if ((cond->dtype() != ScalarType::kBool && cond->dtype() != ScalarType::kByte) || !is_supported_dtype(a->dtype()) ||
      !is_supported_dtype(b->dtype()) || !is_supported_dtype(out->dtype())) {
    ctx.fail(ErrorCode::kNotSupported, "%s: condition must be bool and values real or bool", op);
    return;
  }
  std::array<int64_t, kMaxDims> s1{}, s2{};
  int d1 = 0, d2 = 0;
  if (!broadcast_shape(cond->sizes(), a->sizes(), &s1, &d1) ||
      !broadcast_shape({s1.data(), static_cast<size_t>(d1)}, b->sizes(), &s2, &d2)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: shapes do not broadcast", op);
    return;
  }
  if (!resize_or_fail(ctx, out, {s2.data(), static_cast<size_t>(d2)}, op)) return;
  const int64_t n = out->numel();
  const uint8_t* c = cond->data_as<uint8_t>();
  if (a->dtype() == out->dtype() && b->dtype() == out->dtype()) {
    dispatch_real_and_bool(out->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* pa = a->data_as<T>();
      const T* pb = b->data_as<T>();
      T* y = out->data_as<T>();
      for_each_broadcast_run<3>(out->sizes(), {cond->sizes(), a->sizes(), b->sizes()},
                                [&](int64_t o, int64_t len, const auto& in, const auto& step) {
                                  const uint8_t* rc = c + in[0];
                                  const T* ra = pa + in[1];
                                  const T* rb = pb + in[2];
                                  const int64_t sc = step[0], sa = step[1], sb = step[2];
                                  if (sc == 0) {
                                    // One condition for the run (a mask over rows): one side's run.
                                    const T* from = rc[0] ? ra : rb;
                                    if (rc[0] ? sa : sb) {
                                      std::copy(from, from + len, y + o);
                                    } else {
                                      std::fill(y + o, y + o + len, from[0]);
                                    }
                                  } else if (sa == 1 && sb == 1) {
                                    for (int64_t i = 0; i < len; ++i) y[o + i] = rc[i] ? ra[i] : rb[i];
                                  } else if (sa == 0 && sb == 1) {
                                    // where(mask, scalar, x): a ReLU backward of the exported graphs.
                                    const T va = ra[0];
                                    for (int64_t i = 0; i < len; ++i) y[o + i] = rc[i] ? va : rb[i];
                                  } else if (sa == 1 && sb == 0) {
                                    const T vb = rb[0];
                                    for (int64_t i = 0; i < len; ++i) y[o + i] = rc[i] ? ra[i] : vb;
                                  } else {
                                    for (int64_t i = 0; i < len; ++i) y[o + i] = rc[i * sc] ? ra[i * sa] : rb[i * sb];
                                  }
                                });
    });
    return;
  }
  const bool integral = !is_floating(out->dtype());
  BroadcastIndex ic(out->sizes(), cond->sizes()), ia(out->sizes(), a->sizes()), ib(out->sizes(), b->sizes());
  for (int64_t i = 0; i < n; ++i, ic.advance(), ia.advance(), ib.advance()) {
    const TensorImpl* src = c[ic.index()] ? a : b;
    const int64_t j = c[ic.index()] ? ia.index() : ib.index();
    if (integral) {
      store_from<int64_t>(out->dtype(), out->data(), i, load_as<int64_t>(src->dtype(), src->data(), j));
    } else {
      store_from<double>(out->dtype(), out->data(), i, load_as<double>(src->dtype(), src->data(), j));
    }
  }
}

// allclose.out(self, other, rtol, atol, equal_nan, dummy_param, out) and the functional
// allclose.Tensor(...) -> out: a one-element bool tensor, true when self and other (same shape and
// dtype) are close everywhere. As ExecuTorch defines it: a floating element is close when rtol and
// atol are both 0 and it equals the other, or when |a - b| is finite and at most atol + |rtol * b|
// (so NaNs and infinities are never close; equal_nan is ignored); other dtypes compare bytes.
void allclose_out(KernelContext& ctx, Args args) {
  const char* op = "allclose.out";
  if (!check_arg_count(ctx, args, 7, op)) return;
  TensorImpl* a = tensor_arg(ctx, args, 0, op);
  TensorImpl* b = tensor_arg(ctx, args, 1, op);
  TensorImpl* out = tensor_arg(ctx, args, 6, op);
  if (!a || !b || !out || !require_contiguous(ctx, op, {a, b, out})) return;
  if (a->dtype() != b->dtype() || !std::equal(a->sizes().begin(), a->sizes().end(), b->sizes().begin(), b->sizes().end())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: self and other must have one shape and dtype", op);
    return;
  }
  if (out->dtype() != ScalarType::kBool || out->numel() != 1) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: out must be a bool tensor of one element", op);
    return;
  }
  const double rtol = args[2]->scalar_as_double(), atol = args[3]->scalar_as_double();
  bool close = true;
  if (!is_floating(a->dtype())) {
    close = std::memcmp(a->data(), b->data(), a->nbytes()) == 0;
  } else {
    for (int64_t i = 0; i < a->numel() && close; ++i) {
      const double x = load_as<double>(a->dtype(), a->data(), i), y = load_as<double>(b->dtype(), b->data(), i);
      // float-sized elements subtract in float, as ExecuTorch's kernel does.
      const double diff = a->dtype() == ScalarType::kDouble ? std::fabs(x - y)
                                                            : std::fabs(static_cast<double>(static_cast<float>(x) - static_cast<float>(y)));
      close = (rtol == 0 && atol == 0) ? x == y : std::isfinite(diff) && diff <= atol + std::fabs(rtol * y);
    }
  }
  out->data_as<bool>()[0] = close;
}

}  // namespace

void register_compare_kernels(KernelRegistry& r) {
  const uint32_t all = kRealBoolDtypes;
  r.add("aten::allclose.out", kernel(allclose_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::allclose.Tensor", kernel(allclose_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::eq.Scalar_out", half_kernel<eq_scalar_out>(kRealBoolDtypes));
  r.add("aten::ne.Scalar_out", half_kernel<ne_scalar_out>(kRealBoolDtypes));
  r.add("aten::lt.Scalar_out", half_kernel<lt_scalar_out>(kRealBoolDtypes));
  r.add("aten::le.Scalar_out", half_kernel<le_scalar_out>(kRealBoolDtypes));
  r.add("aten::gt.Scalar_out", half_kernel<gt_scalar_out>(kRealBoolDtypes));
  r.add("aten::ge.Scalar_out", half_kernel<ge_scalar_out>(kRealBoolDtypes));
  r.add("aten::eq.Tensor_out", kernel(eq_tensor_out, all | kHalfDtypes));
  r.add("aten::ne.Tensor_out", kernel(ne_tensor_out, all | kHalfDtypes));
  r.add("aten::lt.Tensor_out", kernel(lt_tensor_out, all | kHalfDtypes));
  r.add("aten::le.Tensor_out", kernel(le_tensor_out, all | kHalfDtypes));
  r.add("aten::gt.Tensor_out", kernel(gt_tensor_out, all | kHalfDtypes));
  r.add("aten::ge.Tensor_out", kernel(ge_tensor_out, all | kHalfDtypes));
  r.add("aten::where.self_out", half_kernel<where_self_out>(kRealBoolDtypes));
}

}  // namespace etscope::runtime::kernels
