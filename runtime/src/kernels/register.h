// Registration entry points, one per kernel source file. register_kernels.cpp calls them all;
// explicit calls (rather than static initializers) keep kernels from being dropped by the linker.
#pragma once

#include "etscope/runtime/kernel.h"

namespace etscope::rt::kernels {

void register_binary_kernels(KernelRegistry& r);          // op_binary.cpp
void register_linear_algebra_kernels(KernelRegistry& r);  // op_linear_algebra.cpp
void register_activation_kernels(KernelRegistry& r);      // op_activation.cpp
void register_view_kernels(KernelRegistry& r);            // op_view.cpp
void register_convolution_kernels(KernelRegistry& r);     // op_convolution.cpp
void register_pool_kernels(KernelRegistry& r);            // op_pool.cpp
void register_reduce_kernels(KernelRegistry& r);          // op_reduce.cpp
void register_compare_kernels(KernelRegistry& r);         // op_compare.cpp
void register_copy_kernels(KernelRegistry& r);            // op_copy.cpp
void register_index_kernels(KernelRegistry& r);           // op_index.cpp
void register_norm_kernels(KernelRegistry& r);            // op_norm.cpp
void register_prim_kernels(KernelRegistry& r);            // op_prim.cpp

}  // namespace etscope::rt::kernels
