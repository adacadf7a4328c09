// upsample_bilinear2d.vec_out and upsample_nearest2d.vec_out on NCHW float tensors, and the
// antialiased _upsample_bilinear2d_aa.out.
//
// The output size comes from output_size, or else from scale_factors (floor(in * scale)). Source
// coordinates follow ATen's CPU kernels: with a given scale factor the step is 1 / scale, else
// in / out; bilinear maps pixel centres ((dst + 0.5) * step - 0.5, clamped at 0) unless
// align_corners, which maps the corner pixels onto each other ((in - 1) / (out - 1) * dst);
// nearest picks floor(dst * step), clamped to the last row / column.
#include <algorithm>
#include <cmath>

#include "kernels/register.h"
#include "kernels/util/half_via_float.h"
#include "kernels/util/elementwise_util.h"
#include "kernels/util/kernel_util.h"

namespace etscope::runtime::kernels {
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

// One output coordinate of the antialiased (triangle-filter) resize along one axis: the input
// range [lo, hi) it reads and the filter's centre, inverse scale and normalising sum. As ATen and
// ExecuTorch define it: the filter widens to the scale when downsampling (support = max(scale, 1)),
// centres on scale * (i + 0.5) whatever align_corners says, and falls back to the nearest input
// when no input has a positive weight.
struct AaTap {
  int64_t lo = 0, hi = 0, fallback = -1;
  float center = 0, invscale = 1, total = 1;

  static float filter(float x) {
    x = std::fabs(x);
    return x < 1.0f ? 1.0f - x : 0.0f;
  }
  AaTap(int64_t dst, float scale, int64_t in) {
    center = scale * (static_cast<float>(dst) + 0.5f);
    const float support = scale >= 1.0f ? scale : 1.0f;
    invscale = scale >= 1.0f ? 1.0f / scale : 1.0f;
    // Both bounds are clamped in float before the conversion, so no cast can overflow.
    lo = static_cast<int64_t>(std::clamp(center - support + 0.5f, 0.0f, static_cast<float>(in)));
    hi = static_cast<int64_t>(std::clamp(center + support + 0.5f, 0.0f, static_cast<float>(in)));
    total = 0.0f;
    for (int64_t x = lo; x < hi; ++x) total += filter((static_cast<float>(x) - center + 0.5f) * invscale);
    if (hi <= lo || !(total > 0.0f)) {
      fallback = std::clamp(static_cast<int64_t>(std::clamp(center, 0.0f, static_cast<float>(in))), int64_t{0}, in - 1);
      lo = fallback;
      hi = fallback + 1;
      total = 1.0f;
    }
  }
  float weight(int64_t x) const {
    if (fallback >= 0) return x == fallback ? 1.0f : 0.0f;
    return filter((static_cast<float>(x) - center + 0.5f) * invscale) / total;
  }
};

// _upsample_bilinear2d_aa.out(input, output_size, align_corners, scales_h?, scales_w?, out): the
// antialiased bilinear resize of torch.nn.functional.interpolate(..., antialias=True), in any dim
// order (contiguous or channels-last), for every real dtype and half / bfloat16.
void upsample_bilinear2d_aa_out(KernelContext& ctx, Args args) {
  const char* op = "_upsample_bilinear2d_aa.out";
  if (!check_arg_count(ctx, args, 6, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 5, op);
  IntList size;
  if (!in || !out || !int_list_arg(ctx, args, 1, &size, op)) return;
  if (in->dim() != 4 || out->dim() != 4 || in->dtype() != out->dtype() || !is_elementwise_dtype(in->dtype()) ||
      in->dtype() == ScalarType::kBool) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: input and output must be 4-D tensors of one numeric dtype", op);
    return;
  }
  if (size.size != 2 || size[0] <= 0 || size[1] <= 0 || in->size(2) <= 0 || in->size(3) <= 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output_size must be two positive sizes of a non-empty input", op);
    return;
  }
  const int64_t sizes[4] = {in->size(0), in->size(1), size[0], size[1]};
  if (!resize_or_fail(ctx, out, sizes, op)) return;
  const bool align = args[2]->tag == Tag::kBool && args[2]->scalar.b;
  const bool has_scales = args[3]->tag == Tag::kDouble && args[4]->tag == Tag::kDouble;
  auto axis_scale = [&](int64_t i, int64_t o, double given) {
    if (align) return o > 1 ? static_cast<float>(static_cast<double>(i - 1) / static_cast<double>(o - 1)) : 0.0f;
    const double s = has_scales ? given : static_cast<double>(o) / static_cast<double>(i);
    return s > 0 ? static_cast<float>(1.0 / s) : static_cast<float>(static_cast<double>(i) / static_cast<double>(o));
  };
  const float sh = axis_scale(in->size(2), size[0], has_scales ? args[3]->scalar.d : 0.0);
  const float sw = axis_scale(in->size(3), size[1], has_scales ? args[4]->scalar.d : 0.0);
  if (!(std::isfinite(sh) && std::isfinite(sw) && sh >= 0 && sw >= 0 && sh < 1e9f && sw < 1e9f)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: scales must be positive and finite", op);
    return;
  }
  const auto is = in->strides();
  const auto os = out->strides();
  const ScalarType dt = in->dtype();
  for (int64_t oh = 0; oh < size[0]; ++oh) {
    const AaTap th(oh, sh, in->size(2));
    for (int64_t ow = 0; ow < size[1]; ++ow) {
      const AaTap tw(ow, sw, in->size(3));
      for (int64_t n = 0; n < in->size(0); ++n) {
        for (int64_t c = 0; c < in->size(1); ++c) {
          const int64_t base = n * is[0] + c * is[1];
          double acc = 0;
          for (int64_t ih = th.lo; ih < th.hi; ++ih) {
            const float wh = th.weight(ih);
            for (int64_t iw = tw.lo; iw < tw.hi; ++iw) {
              acc += static_cast<double>(load_as<float>(dt, in->data(), base + ih * is[2] + iw * is[3]) * wh * tw.weight(iw));
            }
          }
          store_from<double>(dt, out->data(), n * os[0] + c * os[1] + oh * os[2] + ow * os[3], acc);
        }
      }
    }
  }
}

}  // namespace

void register_upsample_kernels(KernelRegistry& r) {
  r.add("aten::_upsample_bilinear2d_aa.out", kernel(upsample_bilinear2d_aa_out, kRealDtypes | kHalfDtypes));
  r.add("aten::upsample_bilinear2d.vec_out", half_kernel<upsample_bilinear2d_out>(kFloatDtypes));
  r.add("aten::upsample_nearest2d.vec_out", half_kernel<upsample_nearest2d_out>(kFloatDtypes));
}

}  // namespace etscope::runtime::kernels
