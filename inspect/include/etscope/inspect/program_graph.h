// ProgramGraph: an execution plan as an operator graph, the picture Model Explorer and Netron
// draw, from the .pte alone: one node per kernel or delegate call, one per method input and
// output, and an edge wherever a value one instruction writes is read by a later one (or a view
// of it: a planned tensor no instruction writes, at the offset the writer used). Constants
// (weights) are not nodes: they are listed on the node that reads them. With an ETRecord, each
// node carries the nn.Module stack of its graph nodes (through the plan's debug handle map, as
// the Inspector links events), and a delegate call the ATen ops lowered into it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "etscope/etrecord/etrecord.h"
#include "etscope/formats/program.h"

namespace etscope::inspect {

enum class GraphNodeKind : uint8_t { kInput, kOutput, kKernel, kDelegate };

struct ProgramGraphNode {
  GraphNodeKind kind = GraphNodeKind::kKernel;
  int32_t chain = -1, instruction = -1;  ///< kKernel / kDelegate: where it sits in the plan.
  int64_t step = -1;                     ///< Flattened instruction step; -1 inputs, T outputs.
  int32_t io_index = -1;                 ///< kInput / kOutput: position among the plan's.
  std::string op;                        ///< "aten::convolution.out", "XnnpackBackend", "input 0".
  std::string shape;                     ///< First written tensor's (inputs: the input's) "f32[1,3,32,32]".
  std::vector<int32_t> constants;        ///< Constant tensor values it reads.
  std::vector<int64_t> debug_handles;    ///< From the ETRecord's maps; empty without one.
  /// nn.Module stack shared by its graph nodes (the longest common prefix), outermost first,
  /// without the root module.
  std::vector<etrecord::ModuleFrame> modules;
  /// kDelegate with an ETRecord: the ops lowered into it (graph node targets, in graph order).
  /// Without one, given the program, an XNNPACK delegate's payload nodes ("xnnpack::Conv2d", in
  /// node order).
  std::vector<std::string> delegated_ops;
};

struct ProgramGraphEdge {
  uint32_t from = 0, to = 0;     ///< Node indices.
  std::vector<int32_t> values;   ///< The values flowing along it (at least one).
};

struct ProgramGraph {
  std::vector<ProgramGraphNode> nodes;  ///< Inputs, then instructions in plan order, then outputs.
  std::vector<ProgramGraphEdge> edges;  ///< By (from, to), one per pair.
  /// Node of each flattened step (instruction), or -1 for steps that are not nodes (moves,
  /// jumps, frees).
  std::vector<int32_t> node_of_step;
};

/// Builds the graph of `plan`; `record` (may be null) adds modules and delegated ops of method
/// `plan.name`; `program` (may be null; the plan's program) adds the XNNPACK payload's nodes to
/// delegates the record does not describe. Never fails: the reader has range-checked every index
/// the plan holds, and a payload that does not read adds nothing.
ProgramGraph build_program_graph(const ExecutionPlan& plan, const etrecord::EtRecord* record, const Program* program = nullptr);

}  // namespace etscope::inspect
