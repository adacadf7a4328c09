// executorch_prim:: operators, which ExecuTorch registers by hand (no generated wrapper): scalar
// arithmetic on symbolic sizes, sym_size / sym_numel, and et_view (an aliasing view).
//
// Their arguments are [inputs..., out] where out is an EValue the kernel overwrites (value and
// tag). Int op Int stays Int (truediv excepted); any Double operand makes a Double; Bool counts as
// Int. floordiv and mod follow Python (floor) semantics.
#include <cmath>

#include "kernels/register.h"
#include "kernels/util/elementwise_util.h"
#include "kernels/util/kernel_util.h"

namespace etscope::runtime::kernels {
namespace {

bool is_number(const EValue& v) { return v.tag == Tag::kInt || v.tag == Tag::kDouble || v.tag == Tag::kBool; }
int64_t as_int(const EValue& v) { return v.tag == Tag::kBool ? (v.scalar.b ? 1 : 0) : v.scalar.i; }

void set_int(EValue& out, int64_t v) {
  out.tag = Tag::kInt;
  out.scalar.i = v;
}
void set_double(EValue& out, double v) {
  out.tag = Tag::kDouble;
  out.scalar.d = v;
}
void set_bool(EValue& out, bool v) {
  out.tag = Tag::kBool;
  out.scalar.b = v;
}

// Checks [a, b, out] (or [a, out] when unary) and returns whether the inputs are both integral.
bool scalar_args(KernelContext& ctx, Args args, size_t inputs, const char* op, bool* integral) {
  if (!check_arg_count(ctx, args, inputs + 1, op)) return false;
  *integral = true;
  for (size_t i = 0; i < inputs; ++i) {
    if (!is_number(*args[i])) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: argument %zu is a %s, not a number", op, i, to_string(args[i]->tag));
      return false;
    }
    *integral &= args[i]->tag != Tag::kDouble;
  }
  return true;
}

template <typename IntOp, typename DoubleOp>
void arith(KernelContext& ctx, Args args, const char* op, IntOp iop, DoubleOp dop) {
  bool integral = false;
  if (!scalar_args(ctx, args, 2, op, &integral)) return;
  EValue& out = *args.back();
  if (integral) {
    set_int(out, iop(as_int(*args[0]), as_int(*args[1])));
  } else {
    set_double(out, dop(args[0]->scalar_as_double(), args[1]->scalar_as_double()));
  }
}

template <typename Cmp>
void compare(KernelContext& ctx, Args args, const char* op, Cmp cmp) {
  bool integral = false;
  if (!scalar_args(ctx, args, 2, op, &integral)) return;
  set_bool(*args.back(), integral ? cmp(as_int(*args[0]), as_int(*args[1]))
                                  : cmp(args[0]->scalar_as_double(), args[1]->scalar_as_double()));
}

int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t floor_mod(int64_t a, int64_t b) {
  const int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

bool nonzero_divisor(KernelContext& ctx, Args args, const char* op) {
  if (args.size() >= 2 && args[0]->tag != Tag::kDouble && args[1]->tag != Tag::kDouble && as_int(*args[1]) == 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: integer division by zero", op);
    return false;
  }
  return true;
}

void add_scalar(KernelContext& ctx, Args args) {
  arith(
      ctx, args, "executorch_prim::add.Scalar", [](int64_t a, int64_t b) { return a + b; },
      [](double a, double b) { return a + b; });
}
void sub_scalar(KernelContext& ctx, Args args) {
  arith(
      ctx, args, "executorch_prim::sub.Scalar", [](int64_t a, int64_t b) { return a - b; },
      [](double a, double b) { return a - b; });
}
void mul_scalar(KernelContext& ctx, Args args) {
  arith(
      ctx, args, "executorch_prim::mul.Scalar", [](int64_t a, int64_t b) { return a * b; },
      [](double a, double b) { return a * b; });
}
void floordiv_scalar(KernelContext& ctx, Args args) {
  const char* op = "executorch_prim::floordiv.Scalar";
  if (!nonzero_divisor(ctx, args, op)) return;
  arith(ctx, args, op, floor_div, [](double a, double b) { return std::floor(a / b); });
}
void mod_scalar(KernelContext& ctx, Args args) {
  const char* op = "executorch_prim::mod.Scalar";
  if (!nonzero_divisor(ctx, args, op)) return;
  arith(ctx, args, op, floor_mod, [](double a, double b) {
    const double r = std::fmod(a, b);
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  });
}
void truediv_scalar(KernelContext& ctx, Args args) {
  bool integral = false;
  if (!scalar_args(ctx, args, 2, "executorch_prim::truediv.Scalar", &integral)) return;
  set_double(*args.back(), args[0]->scalar_as_double() / args[1]->scalar_as_double());
}
void sym_max_scalar(KernelContext& ctx, Args args) {
  arith(
      ctx, args, "executorch_prim::sym_max.Scalar", [](int64_t a, int64_t b) { return std::max(a, b); },
      [](double a, double b) { return std::max(a, b); });
}
void sym_min_scalar(KernelContext& ctx, Args args) {
  arith(
      ctx, args, "executorch_prim::sym_min.Scalar", [](int64_t a, int64_t b) { return std::min(a, b); },
      [](double a, double b) { return std::min(a, b); });
}

void eq_scalar(KernelContext& ctx, Args args) {
  compare(ctx, args, "executorch_prim::eq.Scalar", [](auto a, auto b) { return a == b; });
}
void gt_scalar(KernelContext& ctx, Args args) {
  compare(ctx, args, "executorch_prim::gt.Scalar", [](auto a, auto b) { return a > b; });
}
void lt_scalar(KernelContext& ctx, Args args) {
  compare(ctx, args, "executorch_prim::lt.Scalar", [](auto a, auto b) { return a < b; });
}
void ge_scalar(KernelContext& ctx, Args args) {
  compare(ctx, args, "executorch_prim::ge.Scalar", [](auto a, auto b) { return a >= b; });
}
void le_scalar(KernelContext& ctx, Args args) {
  compare(ctx, args, "executorch_prim::le.Scalar", [](auto a, auto b) { return a <= b; });
}

void neg_scalar(KernelContext& ctx, Args args) {
  bool integral = false;
  if (!scalar_args(ctx, args, 1, "executorch_prim::neg.Scalar", &integral)) return;
  if (integral) {
    set_int(*args.back(), -as_int(*args[0]));
  } else {
    set_double(*args.back(), -args[0]->scalar_as_double());
  }
}

// sym_size.int(self, dim, out)
void sym_size_int(KernelContext& ctx, Args args) {
  const char* op = "executorch_prim::sym_size.int";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* t = tensor_arg(ctx, args, 0, op);
  if (!t) return;
  const int64_t d = args[1]->tag == Tag::kInt ? normalize_dim(args[1]->scalar.i, t->dim()) : -1;
  if (d < 0 || t->dim() == 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: dim is out of range for a rank-%d tensor", op, t->dim());
    return;
  }
  set_int(*args.back(), t->size(static_cast<int>(d)));
}

// sym_numel(self, out)
void sym_numel(KernelContext& ctx, Args args) {
  const char* op = "executorch_prim::sym_numel";
  if (!check_arg_count(ctx, args, 2, op)) return;
  TensorImpl* t = tensor_arg(ctx, args, 0, op);
  if (!t) return;
  set_int(*args.back(), t->numel());
}

// _local_scalar_dense(self, out): the value of a one-element tensor as a Scalar (Int for integer
// tensors, Double for floating ones, Bool for bool), as ExecuTorch's prim-op library gives it.
void local_scalar_dense(KernelContext& ctx, Args args) {
  const char* op = "aten::_local_scalar_dense";
  if (!check_arg_count(ctx, args, 2, op)) return;
  TensorImpl* t = tensor_arg(ctx, args, 0, op);
  if (!t) return;
  if (t->numel() != 1) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: the tensor has %lld elements, not one", op, static_cast<long long>(t->numel()));
    return;
  }
  const ScalarType d = t->dtype();
  if (d == ScalarType::kBool) {
    set_bool(*args.back(), load_as<bool>(d, t->data(), 0));
  } else if (is_floating(d)) {
    set_double(*args.back(), load_as<double>(d, t->data(), 0));
  } else if (is_elementwise_dtype(d)) {
    set_int(*args.back(), load_as<int64_t>(d, t->data(), 0));
  } else {
    ctx.fail(ErrorCode::kNotSupported, "%s: unsupported dtype %s", op, scalar_type_name(d).c_str());
  }
}

// et_view.default(self, size, out): out becomes a view of self's memory with the new shape (one
// size may be -1); no bytes are copied.
void et_view(KernelContext& ctx, Args args) {
  const char* op = "executorch_prim::et_view.default";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* self = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  IntList size;
  if (!self || !out || !int_list_arg(ctx, args, 1, &size, op) || !require_contiguous(ctx, op, {self, out})) return;
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < size.size; ++i) {
    if (size[i] == -1 && infer < 0) {
      infer = static_cast<int>(i);
    } else if (size[i] < 0) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: invalid size %lld", op, static_cast<long long>(size[i]));
      return;
    } else {
      known *= size[i];
    }
  }
  if (infer >= 0) size.values[static_cast<size_t>(infer)] = known == 0 ? 0 : self->numel() / known;
  int64_t numel = 1;
  for (size_t i = 0; i < size.size; ++i) numel *= size[i];
  if (numel != self->numel() || out->dtype() != self->dtype() || out->dim() != static_cast<int>(size.size)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: view changes the element count, rank or dtype", op);
    return;
  }
  // The view owns no storage, so its planned capacity (often 0) says nothing: a dynamic view takes
  // self's byte count as its capacity; a static one must already have the requested sizes.
  if (out->dynamic()) {
    Status st = out->init(out->dtype(), size.span(), out->dim_order(), true, self->nbytes());
    if (!st.ok()) {
      ctx.fail(st.error().code(), "%s: output: %s", op, st.error().message().c_str());
      return;
    }
  } else if (!resize_or_fail(ctx, out, size.span(), op)) {
    return;
  }
  out->set_data(self->data());
}

}  // namespace

void register_prim_kernels(KernelRegistry& r) {
  auto prim = [&r](const char* name, KernelFn fn) {
    r.add(std::string("executorch_prim::") + name, {fn, nullptr, false});
  };
  prim("add.Scalar", add_scalar);
  prim("sub.Scalar", sub_scalar);
  prim("mul.Scalar", mul_scalar);
  prim("floordiv.Scalar", floordiv_scalar);
  prim("floordiv.int", floordiv_scalar);
  prim("truediv.Scalar", truediv_scalar);
  prim("mod.Scalar", mod_scalar);
  prim("mod.int", mod_scalar);
  prim("sym_max.Scalar", sym_max_scalar);
  prim("sym_min.Scalar", sym_min_scalar);
  prim("eq.Scalar", eq_scalar);
  prim("gt.Scalar", gt_scalar);
  prim("lt.Scalar", lt_scalar);
  prim("ge.Scalar", ge_scalar);
  prim("le.Scalar", le_scalar);
  prim("neg.Scalar", neg_scalar);
  prim("sym_size.int", sym_size_int);
  prim("sym_numel", sym_numel);
  prim("et_view.default", et_view);
  // ExecuTorch's emitter writes the size queries of dynamic shapes under their ATen names
  // (exir's ReplaceSymSizeOpPass), and its prim-op library registers them there; keep both.
  const uint32_t any_tensor = kRealBoolDtypes | kHalfDtypes;
  r.add("aten::sym_size.int", {sym_size_int, nullptr, false, any_tensor});
  r.add("aten::sym_numel", {sym_numel, nullptr, false, any_tensor});
  r.add("aten::_local_scalar_dense", {local_scalar_dense, nullptr, false, any_tensor});
}

}  // namespace etscope::runtime::kernels
