// One row per XNNPACK node kind, in NodeKind's order: to find how a node kind is checked, run
// and named, read its row.
#include "xnnpack/node_table.h"

#include <array>

#include "xnnpack/elementwise_ops.h"

namespace etscope::runtime::xnnpack {
namespace {

using K = NodeKind;

constexpr uint8_t kNone = 0;

// Event names of the elementwise nodes are XNNPACK's (as ExecuTorch 1.5.1's XNNPACK backend
// records them); layout names say how XNNPACK sees the tensor: NC (flattened), ND, NHWC.
constexpr std::array<NodeOps, xnn::kNodeKindCount> kNodeTable = {{
    // kind                  check                   run (floats)                       run (int8 in integers)      event name                                            computed name            traits
    {K::kAdd,                check_binary,           run_binary<op_add>,                run_add_int8,               "Add (ND)",                                          nullptr,                 kFusesClamp | kBinaryElementwise},
    {K::kFullyConnected,     check_fully_connected,  run_fully_connected,               run_gemm_layer_int8,        nullptr,                                             fully_connected_event,   kFusesClamp | kNewLayout},
    {K::kSoftmax,            check_softmax,          run_softmax,                       nullptr,                    "Softmax (NC, {real})",                              nullptr,                 kNone},
    {K::kSigmoid,            check_unary,            run_sigmoid,                       nullptr,                    "Sigmoid (NC)",                                      nullptr,                 kUnaryElementwise},
    {K::kTranspose,          check_transpose,        run_transpose,                     nullptr,                    "Transpose (ND, {bits})",                            nullptr,                 kMovesElements},
    {K::kClamp,              check_unary,            run_clamp,                         nullptr,                    "Clamp (NC)",                                        nullptr,                 kUnaryElementwise},
    {K::kConv2d,             check_conv,             run_conv2d,                        run_gemm_layer_int8,        nullptr,                                             conv2d_event,            kFusesClamp},
    {K::kDivide,             check_binary,           run_binary<op_divide>,             nullptr,                    "Divide (ND)",                                       nullptr,                 kFusesClamp | kBinaryElementwise},
    {K::kResizeBilinear2d,   check_resize_bilinear,  run_resize_bilinear,               nullptr,                    "Resize Bilinear (NHWC)",                            nullptr,                 kNone},
    {K::kConstantPad,        check_constant_pad,     run_slice_or_pad,                  nullptr,                    "Constant Pad (ND, {bits})",                         nullptr,                 kNone},
    {K::kAvgPool2d,          check_pool,             run_pool,                          nullptr,                    nullptr,                                             avg_pool_event,          kFusesClamp},
    {K::kMinimum,            check_binary,           run_binary<op_minimum>,            nullptr,                    "Minimum (ND)",                                      nullptr,                 kBinaryElementwise},
    {K::kDepthwiseConv2d,    check_conv,             run_depthwise_conv2d,              run_depthwise_conv2d_int8,  nullptr,                                             depthwise_conv2d_event,  kFusesClamp},
    {K::kMaxPool2d,          check_pool,             run_pool,                          nullptr,                    "Max Pooling (NHWC, {real})",                        nullptr,                 kFusesClamp},
    {K::kMultiply,           check_binary,           run_binary<op_multiply>,           nullptr,                    nullptr,                                             multiply_event,          kFusesClamp | kBinaryElementwise},
    {K::kSubtract,           check_binary,           run_binary<op_subtract>,           nullptr,                    "Subtract (ND)",                                     nullptr,                 kFusesClamp | kBinaryElementwise},
    {K::kFloor,              check_unary,            run_unary<op_floor>,               nullptr,                    "Floor (NC)",                                        nullptr,                 kUnaryElementwise},
    {K::kConvert,            check_unary,            run_copy,                          nullptr,                    "Convert (NC)",                                      nullptr,                 kUnaryElementwise},
    {K::kGlobalAvgPool2d,    check_global_avg_pool,  run_global_avg_pool,               run_global_avg_pool_int8,   nullptr,                                             global_avg_pool_event,   kFusesClamp},
    {K::kReshape,            check_reshape,          run_copy,                          nullptr,                    "Static Reshape (NC)",                               nullptr,                 kMovesElements | kNewLayout},
    {K::kArgMaxPool2d,       check_argmax_pool,      run_argmax_pool,                   nullptr,                    "ArgMax Pooling (NHWC, F32)",                        nullptr,                 kNone},
    {K::kSqrt,               check_unary,            run_unary<op_sqrt>,                nullptr,                    "Square Root (NC)",                                  nullptr,                 kUnaryElementwise},
    {K::kCeil,               check_unary,            run_unary<op_ceil>,                nullptr,                    "Ceiling (NC)",                                      nullptr,                 kUnaryElementwise},
    {K::kHardSwish,          check_unary,            run_unary<op_hardswish>,           nullptr,                    "HardSwish (NC)",                                    nullptr,                 kUnaryElementwise},
    {K::kLeakyRelu,          check_unary,            run_unary<op_leaky_relu>,          nullptr,                    "LeakyReLU (NC)",                                    nullptr,                 kUnaryElementwise},
    {K::kMaximum,            check_binary,           run_binary<op_maximum>,            nullptr,                    "Maximum (ND)",                                      nullptr,                 kBinaryElementwise},
    {K::kNegate,             check_unary,            run_unary<op_negate>,              nullptr,                    "Negate (NC)",                                       nullptr,                 kUnaryElementwise},
    {K::kSquare,             check_unary,            run_unary<op_square>,              nullptr,                    "Square (NC)",                                       nullptr,                 kUnaryElementwise},
    {K::kElu,                check_unary,            run_unary<op_elu>,                 nullptr,                    "ELU (NC)",                                          nullptr,                 kUnaryElementwise},
    {K::kAbs,                check_unary,            run_unary<op_abs>,                 nullptr,                    "Abs (NC)",                                          nullptr,                 kUnaryElementwise},
    {K::kPRelu,              check_binary,           run_binary<op_prelu>,              nullptr,                    "PReLU (ND)",                                        nullptr,                 kBinaryElementwise},
    {K::kConcat2,            check_concat,           run_concat,                        nullptr,                    "Copy (NC, {bits})",                                 nullptr,                 kMovesElements},
    {K::kConcat3,            check_concat,           run_concat,                        nullptr,                    "Copy (NC, {bits})",                                 nullptr,                 kMovesElements},
    {K::kConcat4,            check_concat,           run_concat,                        nullptr,                    "Copy (NC, {bits})",                                 nullptr,                 kMovesElements},
    {K::kSlice,              check_slice,            run_slice_or_pad,                  nullptr,                    "Slice (ND, {bits})",                                nullptr,                 kMovesElements},
    {K::kAttention,          refuse_attention,       nullptr,                           nullptr,                    nullptr,                                             nullptr,                 kNone},
    {K::kBatchMatMul,        check_batch_matmul,     run_batch_matmul,                  nullptr,                    "Batch Matrix Multiply (NC, {real}) GEMM",           nullptr,                 kNewLayout},
    {K::kConcat5,            check_concat,           run_concat,                        nullptr,                    "Copy (NC, {bits})",                                 nullptr,                 kMovesElements},
    {K::kConvTranspose2d,    check_conv,             run_conv_transpose2d,              nullptr,                    nullptr,                                             conv_transpose2d_event,  kFusesClamp},
    {K::kRSqrt,              check_unary,            run_unary<op_rsqrt>,               nullptr,                    "Reciprocal Square Root (NC)",                       nullptr,                 kUnaryElementwise},
    {K::kLog,                check_unary,            run_log,                           nullptr,                    "Log (NC)",                                          nullptr,                 kUnaryElementwise},
    {K::kGelu,               check_unary,            run_gelu,                          nullptr,                    "GELU (NC)",                                         nullptr,                 kUnaryElementwise},
    {K::kTanh,               check_unary,            run_tanh,                          nullptr,                    "TanH (NC)",                                         nullptr,                 kUnaryElementwise},
    {K::kExp,                check_unary,            run_exp,                           nullptr,                    "Exp (NC)",                                          nullptr,                 kUnaryElementwise},
    {K::kSin,                check_unary,            run_unary<op_sin>,                 nullptr,                    "Sine (NC)",                                         nullptr,                 kUnaryElementwise},
    {K::kCopy,               check_unary,            run_copy,                          nullptr,                    "Copy (NC, {bits})",                                 nullptr,                 kMovesElements},
    {K::kCos,                check_unary,            run_unary<op_cos>,                 nullptr,                    "Cosine (NC)",                                       nullptr,                 kUnaryElementwise},
}};

constexpr bool rows_in_kind_order() {
  for (size_t k = 0; k < kNodeTable.size(); ++k) {
    if (static_cast<size_t>(kNodeTable[k].kind) != k) return false;
  }
  return true;
}
static_assert(rows_in_kind_order(), "kNodeTable's row k must describe NodeKind k");

}  // namespace

const NodeOps& node_ops(NodeKind kind) { return kNodeTable[static_cast<size_t>(kind)]; }

}  // namespace etscope::runtime::xnnpack
