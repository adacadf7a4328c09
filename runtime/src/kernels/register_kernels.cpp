#include "kernels/register.h"

namespace etscope::runtime {

void register_portable_kernels(KernelRegistry& registry) {
  kernels::register_activation_kernels(registry);
  kernels::register_arithmetic_kernels(registry);
  kernels::register_bitwise_kernels(registry);
  kernels::register_compare_kernels(registry);
  kernels::register_convolution_kernels(registry);
  kernels::register_copy_kernels(registry);
  kernels::register_distance_kernels(registry);
  kernels::register_dropout_kernels(registry);
  kernels::register_factory_kernels(registry);
  kernels::register_grid_sample_kernels(registry);
  kernels::register_index_kernels(registry);
  kernels::register_linear_algebra_kernels(registry);
  kernels::register_logical_kernels(registry);
  kernels::register_mask_kernels(registry);
  kernels::register_norm_kernels(registry);
  kernels::register_pad_kernels(registry);
  kernels::register_pool_kernels(registry);
  kernels::register_prim_kernels(registry);
  kernels::register_quantize_kernels(registry);
  kernels::register_quantized_weight_kernels(registry);
  kernels::register_reduce_kernels(registry);
  kernels::register_shape_kernels(registry);
  kernels::register_slice_kernels(registry);
  kernels::register_sort_kernels(registry);
  kernels::register_unary_kernels(registry);
  kernels::register_llm_kernels(registry);
  kernels::register_upsample_kernels(registry);
  kernels::register_view_kernels(registry);
}

}  // namespace etscope::runtime
