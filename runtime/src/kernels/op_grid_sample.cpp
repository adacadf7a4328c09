// grid_sampler_2d.out(input, grid, interpolation_mode, padding_mode, align_corners, out), as
// F.grid_sample: input [N, C, H, W] is sampled at the normalised (x, y) positions of grid
// [N, Ho, Wo, 2] (-1 and 1 are the outer edges, or the corner pixels' centres with
// align_corners) into out [N, C, Ho, Wo]. Interpolation 0 is bilinear, 1 nearest (rounding half
// to even); padding 0 reads zeros outside, 1 clamps to the border, 2 reflects at the edges.
// Bicubic (2) is refused. Coordinates are computed in the input's type, as PyTorch does.
#include <cmath>

#include "kernels/register.h"
#include "kernels/util/half_via_float.h"
#include "kernels/util/elementwise_util.h"

namespace etscope::runtime::kernels {
namespace {

// Reflects x into [low, high] given doubled bounds (so that half-pixel bounds stay integral).
template <typename T>
T reflect(T x, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return T(0);
  const T low = static_cast<T>(twice_low) / 2;
  const T span = static_cast<T>(twice_high - twice_low) / 2;
  x = std::abs(x - low);
  const T extra = std::fmod(x, span);
  // The parity of the number of flips, kept in floating point: x may be huge or NaN.
  const bool even = std::fmod(std::floor(x / span), T(2)) == 0;
  return even ? extra + low : span - extra + low;
}

template <typename T>
T clip(T x, int64_t size) {
  return std::min(static_cast<T>(size - 1), std::max(x, T(0)));
}

// The pixel coordinate a normalised grid value stands for, after padding.
template <typename T>
T source_index(T coord, int64_t size, int64_t padding, bool align_corners) {
  T x = align_corners ? (coord + 1) / 2 * static_cast<T>(size - 1) : ((coord + 1) * static_cast<T>(size) - 1) / 2;
  if (padding == 1) {
    x = clip(x, size);
  } else if (padding == 2) {
    x = align_corners ? reflect(x, 0, 2 * (size - 1)) : reflect(x, -1, 2 * size - 1);
    x = clip(x, size);
  }
  return x;
}

void grid_sampler_2d_out(KernelContext& ctx, Args args) {
  const char* op = "grid_sampler_2d.out";
  if (!check_arg_count(ctx, args, 6, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* grid = tensor_arg(ctx, args, 1, op);
  TensorImpl* out = tensor_arg(ctx, args, 5, op);
  if (!in || !grid || !out || !require_contiguous(ctx, op, {in, grid, out})) return;
  if (args[2]->tag != Tag::kInt || args[3]->tag != Tag::kInt || args[4]->tag != Tag::kBool) {
    ctx.fail(ErrorCode::kCorrupt, "%s: interpolation_mode and padding_mode must be ints, align_corners a bool", op);
    return;
  }
  const int64_t mode = args[2]->scalar.i, padding = args[3]->scalar.i;
  const bool align = args[4]->scalar.b;
  if (mode != 0 && mode != 1) {
    ctx.fail(ErrorCode::kNotSupported, "%s: interpolation mode %lld is not supported (bilinear 0 and nearest 1 are)", op,
             static_cast<long long>(mode));
    return;
  }
  if (padding < 0 || padding > 2) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: padding mode %lld is not 0 (zeros), 1 (border) or 2 (reflection)", op,
             static_cast<long long>(padding));
    return;
  }
  if (in->dim() != 4 || grid->dim() != 4 || grid->size(0) != in->size(0) || grid->size(3) != 2 ||
      grid->dtype() != in->dtype() || out->dtype() != in->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: needs input [N, C, H, W] and grid [N, Ho, Wo, 2] of one float dtype", op);
    return;
  }
  const int64_t n = in->size(0), c = in->size(1), h = in->size(2), w = in->size(3);
  const int64_t ho = grid->size(1), wo = grid->size(2);
  const int64_t sizes[4] = {n, c, ho, wo};
  if (!resize_or_fail(ctx, out, sizes, op)) return;
  const bool ok = dispatch_float(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in->data_as<T>();
    const T* g = grid->data_as<T>();
    T* y = out->data_as<T>();
    auto at = [&](const T* plane, int64_t iy, int64_t ix) -> T {
      return iy >= 0 && iy < h && ix >= 0 && ix < w ? plane[iy * w + ix] : T(0);
    };
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t i = 0; i < ho; ++i) {
        for (int64_t j = 0; j < wo; ++j) {
          const T* gp = g + ((b * ho + i) * wo + j) * 2;
          const T ix = source_index(gp[0], w, padding, align);
          const T iy = source_index(gp[1], h, padding, align);
          for (int64_t ch = 0; ch < c; ++ch) {
            const T* plane = x + (b * c + ch) * h * w;
            T v = 0;
            if (!std::isfinite(ix) || !std::isfinite(iy)) {
              v = padding == 0 || mode == 1 ? T(0) : std::nan("");
            } else if (ix < -2 || iy < -2 || ix > static_cast<T>(w + 1) || iy > static_cast<T>(h + 1)) {
              v = 0;  // far outside (only with zeros padding): every neighbour reads zero
            } else if (mode == 1) {
              v = at(plane, static_cast<int64_t>(std::nearbyint(iy)), static_cast<int64_t>(std::nearbyint(ix)));
            } else {
              const T fx = std::floor(ix), fy = std::floor(iy);
              const int64_t x0 = static_cast<int64_t>(fx), y0 = static_cast<int64_t>(fy);
              const T tx = ix - fx, ty = iy - fy;
              v = at(plane, y0, x0) * (1 - tx) * (1 - ty) + at(plane, y0, x0 + 1) * tx * (1 - ty) +
                  at(plane, y0 + 1, x0) * (1 - tx) * ty + at(plane, y0 + 1, x0 + 1) * tx * ty;
            }
            y[((b * c + ch) * ho + i) * wo + j] = v;
          }
        }
      }
    }
  });
  if (!ok) ctx.fail(ErrorCode::kNotSupported, "%s: only float32 and float64 are supported", op);
}

}  // namespace

void register_grid_sample_kernels(KernelRegistry& r) {
  r.add("aten::grid_sampler_2d.out", half_kernel<grid_sampler_2d_out>(kFloatDtypes));
}

}  // namespace etscope::runtime::kernels
