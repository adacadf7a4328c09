// Registration entry points, one per kernel source file. register_kernels.cpp calls them all;
// explicit calls (rather than static initializers) keep kernels from being dropped by the linker.
#pragma once

#include <string_view>

#include "etscope/runtime/kernel.h"

namespace etscope::runtime::kernels {

/// Kernel::dtypes bit of one element type, and the sets kernels commonly accept.
constexpr uint32_t dtype_bit(ScalarType t) { return uint32_t{1} << static_cast<int>(t); }
constexpr uint32_t kFloatDtypes = dtype_bit(ScalarType::kFloat) | dtype_bit(ScalarType::kDouble);
constexpr uint32_t kHalfDtypes = dtype_bit(ScalarType::kHalf) | dtype_bit(ScalarType::kBFloat16);
constexpr uint32_t kIntDtypes = dtype_bit(ScalarType::kByte) | dtype_bit(ScalarType::kChar) |
                                dtype_bit(ScalarType::kShort) | dtype_bit(ScalarType::kInt) |
                                dtype_bit(ScalarType::kLong);
constexpr uint32_t kBoolDtype = dtype_bit(ScalarType::kBool);
constexpr uint32_t kRealDtypes = kFloatDtypes | kIntDtypes;
constexpr uint32_t kRealBoolDtypes = kRealDtypes | kBoolDtype;

/// A codegen-wrapped kernel (aten::, dim_order_ops::) accepting `dtypes`.
inline Kernel kernel(KernelFn run, uint32_t dtypes, ScratchFn scratch = nullptr) {
  return Kernel{run, scratch, true, dtypes};
}

/// The kernel of aten::mm.out or aten::addmm.out reading its matrix operands stored transposed
/// (trans_a: mat1 arrives [k, m]; trans_b: mat2 arrives [n, k]), float32 and float64: what a
/// transpose folded into the product at load runs (Method::Impl::fold_transposes). nullptr for
/// other operators. Not in the registry: no program names these kernels.
const Kernel* transposed_product_kernel(std::string_view op, bool trans_a, bool trans_b);
/// What a transpose of a transpose (of the same two dimensions) runs once the pair is folded: a
/// copy of args[0], the first transpose's input, into the last argument.
const Kernel* transposed_twice_kernel();
/// What each step of such a pair runs when the first one's input is not kept until the second: a
/// copy of args[0]'s bytes into the last argument, which keeps its shape (same dtype and count).
const Kernel* flat_copy_kernel();

void register_activation_kernels(KernelRegistry& r);        // op_activation.cpp
void register_arithmetic_kernels(KernelRegistry& r);        // op_arithmetic.cpp
void register_bitwise_kernels(KernelRegistry& r);           // op_bitwise.cpp
void register_compare_kernels(KernelRegistry& r);           // op_compare.cpp
void register_convolution_kernels(KernelRegistry& r);       // op_convolution.cpp
void register_copy_kernels(KernelRegistry& r);              // op_copy.cpp
void register_distance_kernels(KernelRegistry& r);          // op_distance.cpp
void register_dropout_kernels(KernelRegistry& r);           // op_dropout.cpp
void register_factory_kernels(KernelRegistry& r);           // op_factory.cpp
void register_grid_sample_kernels(KernelRegistry& r);       // op_grid_sample.cpp
void register_index_kernels(KernelRegistry& r);             // op_index.cpp
void register_linear_algebra_kernels(KernelRegistry& r);    // op_linear_algebra.cpp
void register_llm_kernels(KernelRegistry& r);               // op_llm.cpp
void register_logical_kernels(KernelRegistry& r);           // op_logical.cpp
void register_mask_kernels(KernelRegistry& r);              // op_mask.cpp
void register_norm_kernels(KernelRegistry& r);              // op_norm.cpp
void register_pad_kernels(KernelRegistry& r);               // op_pad.cpp
void register_pool_kernels(KernelRegistry& r);              // op_pool.cpp
void register_prim_kernels(KernelRegistry& r);              // op_prim.cpp
void register_quantize_kernels(KernelRegistry& r);          // op_quantize.cpp
void register_quantized_weight_kernels(KernelRegistry& r);  // op_quantized_weight.cpp
void register_reduce_kernels(KernelRegistry& r);            // op_reduce.cpp
void register_shape_kernels(KernelRegistry& r);             // op_shape.cpp
void register_slice_kernels(KernelRegistry& r);             // op_slice.cpp
void register_sort_kernels(KernelRegistry& r);              // op_sort.cpp
void register_unary_kernels(KernelRegistry& r);             // op_unary.cpp
void register_upsample_kernels(KernelRegistry& r);          // op_upsample.cpp
void register_view_kernels(KernelRegistry& r);              // op_view.cpp

}  // namespace etscope::runtime::kernels
