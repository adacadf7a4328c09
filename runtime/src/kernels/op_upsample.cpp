// upsample_bilinear2d.vec_out and upsample_nearest2d.vec_out on NCHW float tensors.
//
// The output size comes from output_size, or else from scale_factors (floor(in * scale)). Source
// coordinates follow ATen's CPU kernels: with a given scale factor the step is 1 / scale, else
// in / out; bilinear maps pixel centres ((dst + 0.5) * step - 0.5, clamped at 0) unless
// align_corners, which maps the corner pixels onto each other ((in - 1) / (out - 1) * dst);
// nearest picks floor(dst * step), clamped to the last row / column.
#include <algorithm>
#include <cmath>

#include "kernels/register.h"
#include "kernels/util/kernel_util.h"

namespace etscope::rt::kernels {
namespace {

struct UpsampleShape {
  int64_t n = 0, c = 0, ih = 0, iw = 0, oh = 0, ow = 0;
  bool has_scale = false;
  double scale_h = 0, scale_w = 0;
};

// Reads input / output_size / scale_factors (exactly one of the two must be given) and resizes out.
bool upsample_shape(KernelContext& ctx, const TensorImpl& in, TensorImpl& out, const EValue& output_size,
                    const EValue& scale_factors, UpsampleShape* s, const char* op) {
  if (in.dim() != 4 || out.dim() != 4) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: input and output must be 4-D (NCHW)", op);
    return false;
  }
  if (in.dtype() != out.dtype() || !dispatch_float(in.dtype(), [](auto) {})) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: input and output must share a float32 or float64 dtype", op);
    return false;
  }
  if (!require_contiguous(ctx, op, {&in, &out})) return false;
  s->n = in.size(0), s->c = in.size(1), s->ih = in.size(2), s->iw = in.size(3);
  const bool has_size = output_size.tag == Tag::kIntList;
  const bool has_scale = scale_factors.tag == Tag::kDoubleList;
  if (has_size == has_scale) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: exactly one of output_size and scale_factors must be given", op);
    return false;
  }
  if (has_size) {
    if (output_size.int_list.size() != 2) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: output_size must have 2 items", op);
      return false;
    }
    s->oh = output_size.int_list[0]->scalar.i;
    s->ow = output_size.int_list[1]->scalar.i;
  } else {
    if (scale_factors.double_list.size() != 2) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: scale_factors must have 2 items", op);
      return false;
    }
    s->scale_h = scale_factors.double_list[0];
    s->scale_w = scale_factors.double_list[1];
    if (!(s->scale_h > 0 && s->scale_w > 0 && s->scale_h < 1e9 && s->scale_w < 1e9)) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: scale factors must be positive and finite", op);
      return false;
    }
    s->has_scale = true;
    s->oh = static_cast<int64_t>(std::floor(static_cast<double>(s->ih) * s->scale_h));
    s->ow = static_cast<int64_t>(std::floor(static_cast<double>(s->iw) * s->scale_w));
  }
  if (s->oh <= 0 || s->ow <= 0 || s->ih <= 0 || s->iw <= 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: input and output spatial sizes must be positive", op);
    return false;
  }
  const int64_t sizes[4] = {s->n, s->c, s->oh, s->ow};
  return resize_or_fail(ctx, &out, sizes, op);
}

// Step between output and input coordinates along one axis.
template <typename T>
T step(int64_t in, int64_t out, bool align_corners, bool has_scale, double scale) {
  if (align_corners) return out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0);
  return has_scale ? static_cast<T>(1.0 / scale) : static_cast<T>(in) / static_cast<T>(out);
}

// One axis of bilinear interpolation: source indices i0, i1 and their weights.
template <typename T>
struct Tap {
  int64_t i0, i1;
  T w0, w1;
};

template <typename T>
Tap<T> bilinear_tap(T st, int64_t dst, int64_t in, bool align_corners) {
  T src = align_corners ? st * static_cast<T>(dst) : st * (static_cast<T>(dst) + T(0.5)) - T(0.5);
  if (src < T(0)) src = T(0);
  int64_t i0 = static_cast<int64_t>(src);
  if (i0 > in - 1) i0 = in - 1;
  const int64_t i1 = i0 < in - 1 ? i0 + 1 : i0;
  const T l1 = std::min(src - static_cast<T>(i0), T(1));
  return {i0, i1, T(1) - l1, l1};
}

// upsample_bilinear2d.vec_out(input, output_size?, align_corners, scale_factors?, out)
void upsample_bilinear2d_out(KernelContext& ctx, Args args) {
  const char* op = "upsample_bilinear2d.vec_out";
  if (!check_arg_count(ctx, args, 5, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 4, op);
  UpsampleShape s;
  if (!in || !out || !upsample_shape(ctx, *in, *out, *args[1], *args[3], &s, op)) return;
  const bool align = args[2]->tag == Tag::kBool && args[2]->scalar.b;
  dispatch_float(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T sh = step<T>(s.ih, s.oh, align, s.has_scale, s.scale_h);
    const T sw = step<T>(s.iw, s.ow, align, s.has_scale, s.scale_w);
    const T* x = in->data_as<T>();
    T* y = out->data_as<T>();
    for (int64_t plane = 0; plane < s.n * s.c; ++plane) {
      const T* xp = x + plane * s.ih * s.iw;
      T* yp = y + plane * s.oh * s.ow;
      for (int64_t oy = 0; oy < s.oh; ++oy) {
        const Tap<T> ty = bilinear_tap(sh, oy, s.ih, align);
        const T* r0 = xp + ty.i0 * s.iw;
        const T* r1 = xp + ty.i1 * s.iw;
        for (int64_t ox = 0; ox < s.ow; ++ox) {
          const Tap<T> tx = bilinear_tap(sw, ox, s.iw, align);
          yp[oy * s.ow + ox] = ty.w0 * (tx.w0 * r0[tx.i0] + tx.w1 * r0[tx.i1]) + ty.w1 * (tx.w0 * r1[tx.i0] + tx.w1 * r1[tx.i1]);
        }
      }
    }
  });
}

// upsample_nearest2d.vec_out(input, output_size?, scale_factors?, out)
void upsample_nearest2d_out(KernelContext& ctx, Args args) {
  const char* op = "upsample_nearest2d.vec_out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  UpsampleShape s;
  if (!in || !out || !upsample_shape(ctx, *in, *out, *args[1], *args[2], &s, op)) return;
  dispatch_float(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const float sh = step<float>(s.ih, s.oh, false, s.has_scale, s.scale_h);
    const float sw = step<float>(s.iw, s.ow, false, s.has_scale, s.scale_w);
    auto src = [](float st, int64_t dst, int64_t in_size) {
      return std::min(static_cast<int64_t>(std::floor(static_cast<float>(dst) * st)), in_size - 1);
    };
    const T* x = in->data_as<T>();
    T* y = out->data_as<T>();
    for (int64_t plane = 0; plane < s.n * s.c; ++plane) {
      const T* xp = x + plane * s.ih * s.iw;
      T* yp = y + plane * s.oh * s.ow;
      for (int64_t oy = 0; oy < s.oh; ++oy) {
        const T* row = xp + src(sh, oy, s.ih) * s.iw;
        for (int64_t ox = 0; ox < s.ow; ++ox) yp[oy * s.ow + ox] = row[src(sw, ox, s.iw)];
      }
    }
  });
}

}  // namespace

void register_upsample_kernels(KernelRegistry& r) {
  r.add("aten::upsample_bilinear2d.vec_out", kernel(upsample_bilinear2d_out, kFloatDtypes));
  r.add("aten::upsample_nearest2d.vec_out", kernel(upsample_nearest2d_out, kFloatDtypes));
}

}  // namespace etscope::rt::kernels
