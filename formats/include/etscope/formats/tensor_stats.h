// Element decoding and summary statistics of raw tensor bytes (constants, .ptd entries, debug
// buffers, bundled inputs).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "etscope/core/scalar_type.h"

namespace etscope {

/// True when etscope can turn elements of `type` into numbers: integer, floating-point
/// (f16, bf16, f32, f64), bool and the quantized integer containers.
bool is_numeric(ScalarType type);

/// True for the floating-point types: f16, bf16, f32, f64.
bool is_floating_type(ScalarType type);

/// Element `index` of dense `bytes` as a double. The caller guarantees `is_numeric(type)` and
/// that the element lies inside `bytes`.
double element_as_double(ScalarType type, const uint8_t* bytes, uint64_t index);

struct TensorStats {
  uint64_t count = 0;        ///< Elements examined.
  uint64_t nan_count = 0;
  uint64_t inf_count = 0;
  uint64_t finite_count = 0;
  double min = 0.0;          ///< Over finite elements; 0 when there are none.
  double max = 0.0;
  double mean = 0.0;
  double std = 0.0;          ///< Population standard deviation over finite elements.
  std::vector<double> first_values;
};

/// Statistics of `numel` elements of `type` stored densely in `bytes`. Returns nullopt when the
/// type is not numeric or `bytes` holds fewer than numel elements.
std::optional<TensorStats> compute_tensor_stats(ScalarType type, std::span<const uint8_t> bytes,
                                                uint64_t numel, size_t first_n = 8);

/// IEEE half and bfloat16 to float.
float half_to_float(uint16_t bits);
float bfloat16_to_float(uint16_t bits);

}  // namespace etscope
