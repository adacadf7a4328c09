// The XNNPACK node kinds etscope knows, one NodeOps row each (node_table.cpp): how a node of the
// kind is checked at load, how it runs on floats and, for int8 layers, in integers, and the
// name XNNPACK's profiler gives its operator. The functions a row names live in node_checks.cpp,
// float_nodes.cpp, quantized_nodes.cpp and events.cpp.
#pragma once

#include <cstdint>
#include <string>

#include "xnnpack/delegate_state.h"

namespace etscope::runtime::xnnpack {

/// Checks node i (its type checks common to all kinds already passed) and infers its outputs'
/// shapes (DelegateState::set_out); grows `scratch` to what the node needs.
using CheckFn = Status (*)(DelegateState& m, size_t i, Scratch* scratch);
/// Computes a node whose checks passed, fused activation range included.
using RunFn = void (*)(DelegateState& m, const Node& n);
/// An operator name that depends on the node's types or attributes.
using EventFn = std::string (*)(const DelegateState& m, const Node& n);

/// Traits of a node kind that other passes read.
enum NodeTrait : uint8_t {
  /// XNNPACK fuses a Clamp that alone reads the node's output into the node's operator.
  kFusesClamp = 1,
  /// Only moves elements (so it may move int32 argmax indices).
  kMovesElements = 2,
  /// Its output's dimensions do not follow its input's (intermediate-output logging).
  kNewLayout = 4,
  /// One input, each output element a function of the input element at its place (XNNPACK's
  /// unary elementwise operators): a lookup-table chain may take it (lookup_tables.cpp).
  kUnaryElementwise = 8,
  /// XNNPACK's binary elementwise operators: with a one-element constant operand, elementwise in
  /// the other one.
  kBinaryElementwise = 16,
};

struct NodeOps {
  NodeKind kind;
  CheckFn check;        ///< Null: etscope does not execute the kind.
  RunFn run;            ///< On floats (quantized values are held as the floats they stand for).
  RunFn run_integer;    ///< In integers when DelegateState::integer_layer(n), else null.
  /// XNNPACK's operator name; "{bits}" stands for the input's element width (X8, X16, X32) and
  /// "{real}" for its type (F32, F16, S8, U8). Null when `event_fn` computes it.
  const char* event;
  EventFn event_fn;
  uint8_t traits;
};

/// The row of a node kind (every kind has one).
const NodeOps& node_ops(NodeKind kind);
inline bool has_trait(NodeKind kind, NodeTrait t) { return (node_ops(kind).traits & t) != 0; }

/// A concatenation of 2 to 5 inputs.
inline bool concatenation(NodeKind k) {
  return k == NodeKind::kConcat2 || k == NodeKind::kConcat3 || k == NodeKind::kConcat4 || k == NodeKind::kConcat5;
}

// node_checks.cpp
Status check_unary(DelegateState& m, size_t i, Scratch* scratch);
Status check_binary(DelegateState& m, size_t i, Scratch* scratch);
Status check_softmax(DelegateState& m, size_t i, Scratch* scratch);
Status check_conv(DelegateState& m, size_t i, Scratch* scratch);
Status check_fully_connected(DelegateState& m, size_t i, Scratch* scratch);
Status check_batch_matmul(DelegateState& m, size_t i, Scratch* scratch);
Status check_global_avg_pool(DelegateState& m, size_t i, Scratch* scratch);
Status check_pool(DelegateState& m, size_t i, Scratch* scratch);
Status check_argmax_pool(DelegateState& m, size_t i, Scratch* scratch);
Status check_transpose(DelegateState& m, size_t i, Scratch* scratch);
Status check_reshape(DelegateState& m, size_t i, Scratch* scratch);
Status check_slice(DelegateState& m, size_t i, Scratch* scratch);
Status check_constant_pad(DelegateState& m, size_t i, Scratch* scratch);
Status check_concat(DelegateState& m, size_t i, Scratch* scratch);
Status check_resize_bilinear(DelegateState& m, size_t i, Scratch* scratch);
Status refuse_attention(DelegateState& m, size_t i, Scratch* scratch);

// float_nodes.cpp (elementwise nodes: elementwise_ops.h)
void run_clamp(DelegateState& m, const Node& n);
void run_copy(DelegateState& m, const Node& n);
void run_softmax(DelegateState& m, const Node& n);  // vector_math.cpp, with the four below
void run_gelu(DelegateState& m, const Node& n);
void run_exp(DelegateState& m, const Node& n);
void run_log(DelegateState& m, const Node& n);
void run_sigmoid(DelegateState& m, const Node& n);
void run_tanh(DelegateState& m, const Node& n);
void run_conv2d(DelegateState& m, const Node& n);
void run_depthwise_conv2d(DelegateState& m, const Node& n);
void run_conv_transpose2d(DelegateState& m, const Node& n);
void run_fully_connected(DelegateState& m, const Node& n);
void run_batch_matmul(DelegateState& m, const Node& n);
void run_global_avg_pool(DelegateState& m, const Node& n);
void run_pool(DelegateState& m, const Node& n);
void run_argmax_pool(DelegateState& m, const Node& n);
void run_transpose(DelegateState& m, const Node& n);
void run_slice_or_pad(DelegateState& m, const Node& n);
void run_concat(DelegateState& m, const Node& n);
void run_resize_bilinear(DelegateState& m, const Node& n);

// quantized_nodes.cpp: int8 layers in integers, as XNNPACK computes them.
void run_global_avg_pool_int8(DelegateState& m, const Node& n);
void run_add_int8(DelegateState& m, const Node& n);
void run_gemm_layer_int8(DelegateState& m, const Node& n);  // convolution and fully connected
void run_depthwise_conv2d_int8(DelegateState& m, const Node& n);

// qd8_layers.cpp: fully connected layers on dynamically quantized rows, as XNNPACK computes them.
void run_fully_connected_qd8(DelegateState& m, const Node& n);

// events.cpp: operator names that depend on types or attributes.
std::string conv2d_event(const DelegateState& m, const Node& n);
std::string depthwise_conv2d_event(const DelegateState& m, const Node& n);
std::string global_avg_pool_event(const DelegateState& m, const Node& n);
std::string avg_pool_event(const DelegateState& m, const Node& n);
std::string conv_transpose2d_event(const DelegateState& m, const Node& n);
std::string fully_connected_event(const DelegateState& m, const Node& n);
std::string multiply_event(const DelegateState& m, const Node& n);

}  // namespace etscope::runtime::xnnpack
