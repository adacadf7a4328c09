// view_copy, permute_copy.
#include "kernels/register.h"
#include "kernels/util/kernel_util.h"

namespace etscope::rt::kernels {
namespace {

// view_copy.out(self, size, out): same bytes, new shape; one size may be -1.
void view_copy_out(KernelContext& ctx, Args args) {
  const char* name = "view_copy.out";
  if (!check_arg_count(ctx, args, 3, name)) return;
  TensorImpl* a = tensor_arg(ctx, args, 0, name);
  TensorImpl* out = tensor_arg(ctx, args, 2, name);
  IntList size;
  if (!a || !out || !int_list_arg(ctx, args, 1, &size, name) || !require_contiguous(ctx, name, {a, out})) return;
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < size.size; ++i) {
    if (size[i] == -1) {
      if (infer >= 0) {
        ctx.fail(ErrorCode::kInvalidArgument, "%s: more than one -1 in size", name);
        return;
      }
      infer = static_cast<int>(i);
    } else {
      known *= size[i];
    }
  }
  if (infer >= 0) size.values[static_cast<size_t>(infer)] = known == 0 ? 0 : a->numel() / known;
  if (!resize_or_fail(ctx, out, size.span(), name)) return;
  if (out->numel() != a->numel() || out->dtype() != a->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: view changes the element count or dtype", name);
    return;
  }
  if (out->data() != a->data()) std::memmove(out->data(), a->data(), a->nbytes());
}

// permute_copy.out(self, dims, out)
void permute_copy_out(KernelContext& ctx, Args args) {
  const char* name = "permute_copy.out";
  if (!check_arg_count(ctx, args, 3, name)) return;
  TensorImpl* a = tensor_arg(ctx, args, 0, name);
  TensorImpl* out = tensor_arg(ctx, args, 2, name);
  IntList dims;
  if (!a || !out || !int_list_arg(ctx, args, 1, &dims, name) || !require_contiguous(ctx, name, {a, out})) return;
  const int rank = a->dim();
  if (static_cast<int>(dims.size) != rank || out->dtype() != a->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: dims must list every dimension once", name);
    return;
  }
  std::array<int64_t, kMaxDims> perm{}, out_sizes{}, in_strides{};
  uint32_t seen = 0;
  for (int i = 0; i < rank; ++i) {
    const int64_t d = normalize_dim(dims[static_cast<size_t>(i)], rank);
    if (d < 0 || (seen & (1u << d))) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: dims must list every dimension once", name);
      return;
    }
    seen |= 1u << d;
    perm[static_cast<size_t>(i)] = d;
    out_sizes[static_cast<size_t>(i)] = a->size(static_cast<int>(d));
    in_strides[static_cast<size_t>(i)] = a->stride(static_cast<int>(d));
  }
  if (!resize_or_fail(ctx, out, {out_sizes.data(), static_cast<size_t>(rank)}, name)) return;
  const size_t es = a->element_size();
  const auto* src = static_cast<const uint8_t*>(a->data());
  auto* dst = static_cast<uint8_t*>(out->data());
  std::array<int64_t, kMaxDims> counter{};
  int64_t in_index = 0;
  const int64_t n = out->numel();
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(dst + static_cast<size_t>(i) * es, src + static_cast<size_t>(in_index) * es, es);
    for (int d = rank - 1; d >= 0; --d) {
      in_index += in_strides[static_cast<size_t>(d)];
      if (++counter[static_cast<size_t>(d)] < out_sizes[static_cast<size_t>(d)]) break;
      in_index -= in_strides[static_cast<size_t>(d)] * counter[static_cast<size_t>(d)];
      counter[static_cast<size_t>(d)] = 0;
    }
  }
}

}  // namespace

void register_view_kernels(KernelRegistry& r) {
  r.add("aten::view_copy.out", {view_copy_out});
  r.add("aten::permute_copy.out", {permute_copy_out});
}

}  // namespace etscope::rt::kernels
