// Copies and shape changes: alias_copy, detach_copy / lift_fresh_copy, clone, _to_copy, copy,
// squeeze_copy, unsqueeze_copy, expand_copy, cat, dim_order_ops::_to_dim_order_copy /
// _clone_dim_order (dtype conversion and dim-order change), and the fills full, full_like, fill,
// scalar_tensor, empty, and the random fills rand and randn.
#include "kernels/register.h"
#include "kernels/util/half_via_float.h"
#include "kernels/util/elementwise_util.h"
#include "kernels/util/random.h"

namespace etscope::runtime::kernels {
namespace {

// Calls f(in_index, out_index) for every element of two tensors of the same sizes, each laid
// out in its own dim order (strides).
template <typename F>
void walk_strided(const TensorImpl& in, const TensorImpl& out, F f) {
  const int rank = in.dim();
  std::array<int64_t, kMaxDims> counter{};
  int64_t xi = 0, yi = 0;
  for (int64_t i = 0; i < in.numel(); ++i) {
    f(xi, yi);
    for (int d = rank - 1; d >= 0; --d) {
      xi += in.stride(d), yi += out.stride(d);
      if (++counter[static_cast<size_t>(d)] < in.size(d)) break;
      xi -= in.stride(d) * counter[static_cast<size_t>(d)];
      yi -= out.stride(d) * counter[static_cast<size_t>(d)];
      counter[static_cast<size_t>(d)] = 0;
    }
  }
}

// out = in (same sizes), converting dtypes and honouring both tensors' dim orders (strides).
// Half and bfloat16 convert through double (exact for both).
void copy_strided(const TensorImpl& in, TensorImpl& out) {
  const int64_t n = in.numel();
  const bool same_order = std::equal(in.dim_order().begin(), in.dim_order().end(), out.dim_order().begin());
  if (in.dtype() == out.dtype() && same_order) {
    if (out.data() != in.data()) std::memmove(out.data(), in.data(), in.nbytes());
    return;
  }
  if (!is_supported_dtype(in.dtype()) || !is_supported_dtype(out.dtype())) {
    walk_strided(in, out, [&](int64_t xi, int64_t yi) {
      store_from<double>(out.dtype(), out.data(), yi, load_as<double>(in.dtype(), in.data(), xi));
    });
    return;
  }
  dispatch_real_and_bool(in.dtype(), [&](auto in_tag) {
    using I = typename decltype(in_tag)::type;
    dispatch_real_and_bool(out.dtype(), [&](auto out_tag) {
      using O = typename decltype(out_tag)::type;
      const I* x = in.data_as<I>();
      O* y = out.data_as<O>();
      if (same_order) {
        for (int64_t i = 0; i < n; ++i) y[i] = convert<O>(x[i]);
        return;
      }
      walk_strided(in, out, [&](int64_t xi, int64_t yi) { y[yi] = convert<O>(x[xi]); });
    });
  });
}

// Fails the call unless every tensor has a dtype the copies handle (real, bool, half, bfloat16).
bool supported(KernelContext& ctx, const char* op, std::initializer_list<const TensorImpl*> ts) {
  for (const TensorImpl* t : ts) {
    if (!is_elementwise_dtype(t->dtype())) {
      ctx.fail(ErrorCode::kNotSupported, "%s: unsupported dtype %s", op, scalar_type_name(t->dtype()).c_str());
      return false;
    }
  }
  return true;
}

// A contiguous copy into an output whose shape the caller has already set.
bool same_bytes_copy(KernelContext& ctx, const TensorImpl& in, TensorImpl& out, const char* op) {
  if (in.dtype() != out.dtype() || in.numel() != out.numel()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output dtype or element count does not match", op);
    return false;
  }
  if (out.data() != in.data()) std::memmove(out.data(), in.data(), in.nbytes());
  return true;
}

// alias_copy.out(self, out), detach_copy.out and lift_fresh_copy.out (same arguments): plain
// copies (the last two are autograd-only distinctions ExecuTorch keeps in the graph).
template <int Which>
void plain_copy_out(KernelContext& ctx, Args args) {
  static constexpr const char* names[] = {"alias_copy.out", "detach_copy.out", "lift_fresh_copy.out"};
  const char* op = names[Which];
  if (!check_arg_count(ctx, args, 2, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 1, op);
  if (!in || !out || !require_contiguous(ctx, op, {in, out}) || !resize_or_fail(ctx, out, in->sizes(), op)) return;
  same_bytes_copy(ctx, *in, *out, op);
}

// _to_copy.out(self, non_blocking, memory_format?, out): converts to out's dtype.
void to_copy_out(KernelContext& ctx, Args args) {
  const char* op = "_to_copy.out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  if (!in || !out || !supported(ctx, op, {in, out})) return;
  if (out->dim() != in->dim() || !resize_or_fail(ctx, out, in->sizes(), op)) {
    if (!ctx.failed()) ctx.fail(ErrorCode::kInvalidArgument, "%s: output rank must match the input's", op);
    return;
  }
  copy_strided(*in, *out);
}

// copy.out(self, src, non_blocking, out): out (self's shape and dtype) = src broadcast to that
// shape and converted.
void copy_out(KernelContext& ctx, Args args) {
  const char* op = "copy.out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* self = tensor_arg(ctx, args, 0, op);
  TensorImpl* src = tensor_arg(ctx, args, 1, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  if (!self || !src || !out || !supported(ctx, op, {self, src, out}) || !require_contiguous(ctx, op, {self, src, out})) return;
  std::array<int64_t, kMaxDims> shape{};
  int dim = 0;
  if (out->dtype() != self->dtype() || !broadcast_shape(self->sizes(), src->sizes(), &shape, &dim) ||
      dim != self->dim() || !std::equal(self->sizes().begin(), self->sizes().end(), shape.begin())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: src must broadcast to self's shape and out have self's dtype", op);
    return;
  }
  if (!resize_or_fail(ctx, out, self->sizes(), op)) return;
  if (!is_supported_dtype(src->dtype()) || !is_supported_dtype(out->dtype())) {
    BroadcastIndex bi(out->sizes(), src->sizes());
    for (int64_t i = 0; i < out->numel(); ++i, bi.advance()) {
      store_from<double>(out->dtype(), out->data(), i, load_as<double>(src->dtype(), src->data(), bi.index()));
    }
    return;
  }
  dispatch_real_and_bool(src->dtype(), [&](auto in_tag) {
    using I = typename decltype(in_tag)::type;
    dispatch_real_and_bool(out->dtype(), [&](auto out_tag) {
      using O = typename decltype(out_tag)::type;
      const I* x = src->data_as<I>();
      O* y = out->data_as<O>();
      BroadcastIndex bi(out->sizes(), src->sizes());
      for (int64_t i = 0; i < out->numel(); ++i, bi.advance()) y[i] = convert<O>(x[bi.index()]);
    });
  });
}

// clone.out(self, memory_format?, out): copies into out's own dim order.
void clone_out(KernelContext& ctx, Args args) {
  const char* op = "clone.out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  if (!in || !out || !supported(ctx, op, {in, out})) return;
  if (in->dtype() != out->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output dtype must match the input's", op);
    return;
  }
  if (out->dim() != in->dim() || !resize_or_fail(ctx, out, in->sizes(), op)) {
    if (!ctx.failed()) ctx.fail(ErrorCode::kInvalidArgument, "%s: output rank must match the input's", op);
    return;
  }
  copy_strided(*in, *out);
}

// dim_order_ops::_to_dim_order_copy.out(self, non_blocking, dim_order?, out) and
// _clone_dim_order.out (same arguments): converts dtype and lays the data out in out's dim order,
// which must equal dim_order when that is given.
void dim_order_copy(KernelContext& ctx, Args args, const char* op) {
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  if (!in || !out || !supported(ctx, op, {in, out})) return;
  if (out->dim() != in->dim()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output rank %d differs from the input's %d", op, out->dim(), in->dim());
    return;
  }
  if (!args[2]->is_none()) {
    IntList order;
    if (!int_list_arg(ctx, args, 2, &order, op)) return;
    bool match = order.size == static_cast<size_t>(out->dim());
    for (size_t i = 0; match && i < order.size; ++i) match = order[i] == out->dim_order()[i];
    if (!match) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: dim_order does not match the output tensor's dim order", op);
      return;
    }
  }
  if (!resize_or_fail(ctx, out, in->sizes(), op)) return;
  copy_strided(*in, *out);
}
void to_dim_order_copy_out(KernelContext& ctx, Args args) { dim_order_copy(ctx, args, "_to_dim_order_copy.out"); }
void clone_dim_order_out(KernelContext& ctx, Args args) { dim_order_copy(ctx, args, "_clone_dim_order.out"); }

// squeeze_copy.dims_out(self, dims, out): drops the listed dimensions that have size 1. Also
// serves squeeze_copy.dim_out(self, dim, out): an Int reads as a one-item list.
void squeeze_copy_dims_out(KernelContext& ctx, Args args) {
  const char* op = "squeeze_copy.dims_out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  IntList dims;
  if (!in || !out || !int_list_arg(ctx, args, 1, &dims, op) || !require_contiguous(ctx, op, {in, out})) return;
  uint32_t drop = 0;
  for (size_t k = 0; k < dims.size; ++k) {
    const int64_t d = normalize_dim(dims[k], in->dim());
    if (d < 0) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: dim %lld is out of range", op, static_cast<long long>(dims[k]));
      return;
    }
    if (in->dim() > 0 && in->size(static_cast<int>(d)) == 1) drop |= 1u << d;
  }
  std::array<int64_t, kMaxDims> sizes{};
  size_t n = 0;
  for (int d = 0; d < in->dim(); ++d) {
    if (!(drop & (1u << d))) sizes[n++] = in->size(d);
  }
  if (out->dim() != static_cast<int>(n)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output has rank %d, expected %zu", op, out->dim(), n);
    return;
  }
  if (!resize_or_fail(ctx, out, {sizes.data(), n}, op)) return;
  same_bytes_copy(ctx, *in, *out, op);
}

// unsqueeze_copy.out(self, dim, out): inserts a size-1 dimension at dim (in [-rank-1, rank]).
void unsqueeze_copy_out(KernelContext& ctx, Args args) {
  const char* op = "unsqueeze_copy.out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  if (!in || !out || !require_contiguous(ctx, op, {in, out})) return;
  const int64_t d = args[1]->tag == Tag::kInt ? normalize_dim(args[1]->scalar.i, in->dim() + 1) : -1;
  if (d < 0 || in->dim() + 1 > kMaxDims || out->dim() != in->dim() + 1) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: dim is out of range or output rank is not input rank + 1", op);
    return;
  }
  std::array<int64_t, kMaxDims> sizes{};
  for (int i = 0, j = 0; i <= in->dim(); ++i) sizes[static_cast<size_t>(i)] = i == d ? 1 : in->size(j++);
  if (!resize_or_fail(ctx, out, {sizes.data(), static_cast<size_t>(in->dim() + 1)}, op)) return;
  same_bytes_copy(ctx, *in, *out, op);
}

// expand_copy.out(self, size, implicit, out): broadcasts self to size (-1 keeps a dimension).
void expand_copy_out(KernelContext& ctx, Args args) {
  const char* op = "expand_copy.out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  IntList size;
  if (!in || !out || !int_list_arg(ctx, args, 1, &size, op) || !require_contiguous(ctx, op, {in, out})) return;
  if (size.size < static_cast<size_t>(in->dim()) || in->dtype() != out->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: size has fewer dimensions than self, or dtypes differ", op);
    return;
  }
  const size_t lead = size.size - static_cast<size_t>(in->dim());
  for (size_t i = 0; i < size.size; ++i) {
    const int64_t have = i < lead ? -2 : in->size(static_cast<int>(i - lead));
    if (size[i] == -1 && have != -2) {
      size.values[i] = have;
    } else if (size[i] < 0 || (have != -2 && have != 1 && have != size[i])) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: cannot expand dimension %zu to %lld", op, i,
               static_cast<long long>(size[i]));
      return;
    }
  }
  if (!resize_or_fail(ctx, out, size.span(), op)) return;
  // The trailing dimensions self already has whole are copied as one block per position of the
  // broadcast leading ones (a [32,96] -> [12,32,96] expand is 12 block copies, not 36,864).
  const int r = out->dim(), ri = in->dim();
  int whole = 0;
  int64_t inner = 1;
  while (whole < ri && in->size(ri - 1 - whole) == out->size(r - 1 - whole)) inner *= in->size(ri - 1 - whole++);
  if (inner == 0 || out->numel() == 0) return;
  const size_t block = static_cast<size_t>(inner) * in->element_size();
  const auto* src = static_cast<const uint8_t*>(in->data());
  auto* dst = static_cast<uint8_t*>(out->data());
  BroadcastIndex bi(out->sizes().first(static_cast<size_t>(r - whole)), in->sizes().first(static_cast<size_t>(ri - whole)));
  const int64_t blocks = out->numel() / inner;
  for (int64_t i = 0; i < blocks; ++i, bi.advance()) {
    std::memmove(dst + static_cast<size_t>(i) * block, src + static_cast<size_t>(bi.index()) * block, block);
  }
}

// cat.out(tensors, dim, out): 1-D empty tensors are skipped, as in ATen.
void cat_out(KernelContext& ctx, Args args) {
  const char* op = "cat.out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  if (!out) return;
  if (args[0]->tag != Tag::kTensorList || args[1]->tag != Tag::kInt) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: expected a tensor list and an int dim", op);
    return;
  }
  const int rank = out->dim();
  const int64_t d = normalize_dim(args[1]->scalar.i, rank);
  if (d < 0 || rank == 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: dim is out of range", op);
    return;
  }
  std::array<int64_t, kMaxDims> sizes{};
  bool first = true;
  for (const TensorImpl* t : args[0]->tensor_list) {
    if (t == nullptr || (t->dim() == 1 && t->numel() == 0)) continue;
    if (t->dim() != rank || !t->contiguous() || !is_elementwise_dtype(t->dtype())) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: inputs must be contiguous with the output's rank", op);
      return;
    }
    for (int i = 0; i < rank; ++i) {
      if (i == d) continue;
      if (!first && sizes[static_cast<size_t>(i)] != t->size(i)) {
        ctx.fail(ErrorCode::kInvalidArgument, "%s: sizes differ outside dimension %lld", op, static_cast<long long>(d));
        return;
      }
      sizes[static_cast<size_t>(i)] = t->size(i);
    }
    sizes[static_cast<size_t>(d)] = (first ? 0 : sizes[static_cast<size_t>(d)]) + t->size(static_cast<int>(d));
    first = false;
  }
  if (first) {
    for (int i = 0; i < rank; ++i) sizes[static_cast<size_t>(i)] = out->size(i);
    sizes[static_cast<size_t>(d)] = 0;
  }
  if (!require_contiguous(ctx, op, {out}) || !supported(ctx, op, {out}) ||
      !resize_or_fail(ctx, out, {sizes.data(), static_cast<size_t>(rank)}, op)) {
    return;
  }
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < rank; ++i) {
    if (i < d) outer *= sizes[static_cast<size_t>(i)];
    if (i > d) inner *= sizes[static_cast<size_t>(i)];
  }
  const int64_t out_row = sizes[static_cast<size_t>(d)] * inner;
  int64_t col = 0;
  for (const TensorImpl* t : args[0]->tensor_list) {
    if (t == nullptr || (t->dim() == 1 && t->numel() == 0)) continue;
    const int64_t row = t->size(static_cast<int>(d)) * inner;
    for (int64_t o = 0; o < outer; ++o) {
      if (t->dtype() == out->dtype()) {
        const size_t es = out->element_size();
        std::memmove(static_cast<uint8_t*>(out->data()) + static_cast<size_t>(o * out_row + col) * es,
                    static_cast<const uint8_t*>(t->data()) + static_cast<size_t>(o * row) * es,
                    static_cast<size_t>(row) * es);
      } else {
        for (int64_t i = 0; i < row; ++i) {
          store_from<double>(out->dtype(), out->data(), o * out_row + col + i,
                             load_as<double>(t->dtype(), t->data(), o * row + i));
        }
      }
    }
    col += row;
  }
}

// Fills every element of out with a Scalar EValue, converted to out's dtype.
bool fill(KernelContext& ctx, TensorImpl& out, const EValue& v, const char* op) {
  if (v.tag != Tag::kInt && v.tag != Tag::kDouble && v.tag != Tag::kBool) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: fill value must be a scalar", op);
    return false;
  }
  const bool ok = dispatch_real_and_bool(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T value = v.tag == Tag::kInt    ? convert<T>(v.scalar.i)
                    : v.tag == Tag::kBool ? convert<T>(v.scalar.b)
                                          : convert<T>(v.scalar.d);
    T* y = out.data_as<T>();
    std::fill(y, y + out.numel(), value);
  });
  if (!ok) ctx.fail(ErrorCode::kNotSupported, "%s: unsupported dtype %s", op, scalar_type_name(out.dtype()).c_str());
  return ok;
}

// full_like.out(self, fill_value, memory_format?, out)
void full_like_out(KernelContext& ctx, Args args) {
  const char* op = "full_like.out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  if (!in || !out) return;
  if (out->dim() != in->dim()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output rank differs from self's", op);
    return;
  }
  if (!resize_or_fail(ctx, out, in->sizes(), op)) return;
  fill(ctx, *out, *args[1], op);
}

// scalar_tensor.out(s, out): a 0-dim tensor holding s.
void scalar_tensor_out(KernelContext& ctx, Args args) {
  const char* op = "scalar_tensor.out";
  if (!check_arg_count(ctx, args, 2, op)) return;
  TensorImpl* out = tensor_arg(ctx, args, 1, op);
  if (!out) return;
  if (out->numel() != 1) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output must hold one element", op);
    return;
  }
  fill(ctx, *out, *args[0], op);
}

// The creation ops' common start: args[0] is the int list `size`, args[out_index] the output,
// which must have as many dimensions and is resized to it. Returns the output or nullptr (failed).
TensorImpl* sized_output(KernelContext& ctx, Args args, size_t out_index, const char* op) {
  if (!check_arg_count(ctx, args, out_index + 1, op)) return nullptr;
  TensorImpl* out = tensor_arg(ctx, args, out_index, op);
  IntList size;
  if (!out || !int_list_arg(ctx, args, 0, &size, op)) return nullptr;
  if (out->dim() != static_cast<int>(size.size)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output has rank %d, size has %zu items", op, out->dim(), size.size);
    return nullptr;
  }
  return resize_or_fail(ctx, out, size.span(), op) ? out : nullptr;
}

// full.out(size, fill_value, out): out resized to `size`, every element fill_value.
void full_out(KernelContext& ctx, Args args) {
  const char* op = "full.out";
  TensorImpl* out = sized_output(ctx, args, 2, op);
  if (out != nullptr) fill(ctx, *out, *args[1], op);
}

// rand.out(size, out) / randn.out(size, out): out resized to `size`, filled from the runtime's
// random stream with uniform numbers in [0, 1) or standard normal ones (float types only).
template <bool Normal>
void random_out(KernelContext& ctx, Args args) {
  const char* op = Normal ? "randn.out" : "rand.out";
  TensorImpl* out = sized_output(ctx, args, 1, op);
  if (out == nullptr) return;
  if (!is_floating(out->dtype())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: out must have a floating dtype, got %s", op,
             scalar_type_name(out->dtype()).c_str());
    return;
  }
  const auto n = static_cast<uint64_t>(out->numel());
  const RandomDraws draws(Normal ? 2 * n : n);
  for (uint64_t i = 0; i < n; ++i) {
    store_from<double>(out->dtype(), out->data(), static_cast<int64_t>(i), Normal ? draws.normal(i) : draws.uniform(i));
  }
}

// fill.Scalar_out(self, value, out) / fill.Tensor_out(self, value (0-dim), out): self's shape,
// every element value.
void fill_scalar_out(KernelContext& ctx, Args args) {
  const char* op = "fill.Scalar_out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  if (!in || !out) return;
  if (out->dim() != in->dim() || out->dtype() != in->dtype() || !resize_or_fail(ctx, out, in->sizes(), op)) {
    if (!ctx.failed()) ctx.fail(ErrorCode::kInvalidArgument, "%s: output must have self's rank and dtype", op);
    return;
  }
  fill(ctx, *out, *args[1], op);
}
void fill_tensor_out(KernelContext& ctx, Args args) {
  const char* op = "fill.Tensor_out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* value = tensor_arg(ctx, args, 1, op);
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  if (!in || !value || !out || !supported(ctx, op, {value})) return;
  if (value->dim() != 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: value must be a 0-dim tensor", op);
    return;
  }
  if (out->dim() != in->dim() || out->dtype() != in->dtype() || !resize_or_fail(ctx, out, in->sizes(), op)) {
    if (!ctx.failed()) ctx.fail(ErrorCode::kInvalidArgument, "%s: output must have self's rank and dtype", op);
    return;
  }
  EValue v;
  if (is_floating(value->dtype())) {
    v.tag = Tag::kDouble;
    v.scalar.d = load_as<double>(value->dtype(), value->data(), 0);
  } else {
    v.tag = Tag::kInt;
    v.scalar.i = load_as<int64_t>(value->dtype(), value->data(), 0);
  }
  fill(ctx, *out, v, op);
}

// empty.out(size, memory_format?, out): only the shape; contents are unspecified.
// dim_order_ops::_empty_dim_order.out(size, dim_order?, out) is the same, with a dim order that,
// when given, must be out's.
template <bool DimOrder>
void empty_out(KernelContext& ctx, Args args) {
  const char* op = DimOrder ? "_empty_dim_order.out" : "empty.out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  IntList size;
  if (!out || !int_list_arg(ctx, args, 0, &size, op)) return;
  if (out->dim() != static_cast<int>(size.size)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output has rank %d, size has %zu items", op, out->dim(), size.size);
    return;
  }
  if (DimOrder && !args[1]->is_none()) {
    IntList order;
    if (!int_list_arg(ctx, args, 1, &order, op)) return;
    bool same = order.size == static_cast<size_t>(out->dim());
    for (size_t i = 0; same && i < order.size; ++i) same = order[i] == out->dim_order()[i];
    if (!same) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: dim_order differs from the output's", op);
      return;
    }
  }
  resize_or_fail(ctx, out, size.span(), op);
}

}  // namespace

void register_copy_kernels(KernelRegistry& r) {
  r.add("aten::alias_copy.out", kernel(plain_copy_out<0>, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::detach_copy.out", kernel(plain_copy_out<1>, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::lift_fresh_copy.out", kernel(plain_copy_out<2>, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::_to_copy.out", kernel(to_copy_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::copy.out", kernel(copy_out, kRealBoolDtypes | kHalfDtypes));
  // copy_(self, src, non_blocking) -> self: the return value is the out argument, written in place.
  r.add("aten::copy_", kernel(copy_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::rand.out", kernel(random_out<false>, kFloatDtypes | kHalfDtypes));
  r.add("aten::randn.out", kernel(random_out<true>, kFloatDtypes | kHalfDtypes));
  r.add("aten::fill.Scalar_out", half_kernel<fill_scalar_out>(kRealBoolDtypes));
  r.add("aten::fill.Tensor_out", half_kernel<fill_tensor_out>(kRealBoolDtypes));
  r.add("aten::empty.out", kernel(empty_out<false>, kRealBoolDtypes | kHalfDtypes));
  r.add("dim_order_ops::_empty_dim_order.out", kernel(empty_out<true>, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::clone.out", kernel(clone_out, kRealBoolDtypes | kHalfDtypes));
  r.add("dim_order_ops::_to_dim_order_copy.out", kernel(to_dim_order_copy_out, kRealBoolDtypes | kHalfDtypes));
  r.add("dim_order_ops::_clone_dim_order.out", kernel(clone_dim_order_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::squeeze_copy.dims_out", kernel(squeeze_copy_dims_out, kRealBoolDtypes));
  r.add("aten::squeeze_copy.dim_out", kernel(squeeze_copy_dims_out, kRealBoolDtypes));
  r.add("aten::unsqueeze_copy.out", kernel(unsqueeze_copy_out, kRealBoolDtypes));
  r.add("aten::expand_copy.out", kernel(expand_copy_out, kRealBoolDtypes));
  r.add("aten::cat.out", kernel(cat_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::full_like.out", half_kernel<full_like_out>(kRealBoolDtypes));
  r.add("aten::full.out", half_kernel<full_out>(kRealBoolDtypes));
  r.add("aten::scalar_tensor.out", half_kernel<scalar_tensor_out>(kRealBoolDtypes));
}

}  // namespace etscope::runtime::kernels
