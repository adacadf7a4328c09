// pte_bench: synthesizes ~2 MB programs and times reading and rendering them.
//
//   pte_bench generate OUT_DIR            writes structure_2mb.pte and weights_2mb.pte
//   pte_bench time FILE [ITERATIONS]      in-process: read + text + JSON, min/median per step
//
// "structure_2mb" is a conv/relu chain whose FlatBuffer alone is ~2 MB (tens of thousands of
// values and instructions: the expensive case for a parser). "weights_2mb" is a small graph with
// 2 MB of constants (the common case for real models).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>

#include "etscope/formats/pte_reader.h"
#include "etscope/formats/pte_writer.h"
#include "render/json_output.h"
#include "render/program_text.h"

using namespace etscope;

namespace {

Value int_value(int64_t v) {
  Value x;
  x.kind = ValueKind::kInt;
  x.int_value = v;
  return x;
}

Value tensor(std::vector<int32_t> sizes, std::optional<Allocation> alloc, uint32_t constant = 0) {
  Value v;
  v.kind = ValueKind::kTensor;
  v.tensor.dtype = ScalarType::kFloat;
  v.tensor.sizes = std::move(sizes);
  for (size_t i = 0; i < v.tensor.sizes.size(); ++i) v.tensor.dim_order.push_back(static_cast<uint8_t>(i));
  v.tensor.allocation = alloc;
  v.tensor.data_buffer_idx = constant;
  return v;
}

int32_t push(ExecutionPlan& plan, Value v) {
  plan.values.push_back(std::move(v));
  return static_cast<int32_t>(plan.values.size() - 1);
}

int32_t int_list(ExecutionPlan& plan, std::initializer_list<int64_t> items) {
  Value list;
  list.kind = ValueKind::kIntList;
  for (int64_t i : items) list.int_list.push_back(push(plan, int_value(i)));
  return push(plan, std::move(list));
}

// A chain of `blocks` conv+relu pairs over 1x16x32x32 activations, ping-ponging two arena slots.
ProgramSpec conv_chain(size_t blocks, size_t weight_floats) {
  ProgramSpec spec;
  ExecutionPlan plan;
  plan.name = "forward";
  plan.operators = {{"aten::convolution", "out"}, {"aten::relu", "out"}};
  const std::vector<int32_t> act = {1, 16, 32, 32};
  const uint64_t act_bytes = 16 * 32 * 32 * 4;
  int32_t x = push(plan, tensor(act, Allocation{1, 0}));
  plan.inputs = {x};
  Chain chain;
  for (size_t b = 0; b < blocks; ++b) {
    spec.constants.push_back(std::vector<uint8_t>(weight_floats * 4, static_cast<uint8_t>(b)));
    int32_t w = push(plan, tensor({static_cast<int32_t>(weight_floats)}, std::nullopt,
                                  static_cast<uint32_t>(spec.constants.size())));
    int32_t stride = int_list(plan, {1, 1});
    int32_t pad = int_list(plan, {1, 1});
    int32_t dil = int_list(plan, {1, 1});
    Value transposed;
    transposed.kind = ValueKind::kBool;
    int32_t tr = push(plan, transposed);
    int32_t outpad = int_list(plan, {0, 0});
    int32_t groups = push(plan, int_value(1));
    Value none;
    int32_t bias = push(plan, none);
    int32_t conv_out = push(plan, tensor(act, Allocation{1, act_bytes}));
    Instruction conv;
    conv.op_index = 0;
    conv.args = {x, w, bias, stride, pad, dil, tr, outpad, groups, conv_out, conv_out};
    chain.instructions.push_back(conv);
    int32_t relu_out = push(plan, tensor(act, Allocation{1, 0}));
    Instruction relu;
    relu.op_index = 1;
    relu.args = {conv_out, relu_out, relu_out};
    chain.instructions.push_back(relu);
    x = relu_out;
  }
  plan.outputs = {x};
  plan.chains = {chain};
  plan.non_const_buffer_sizes = {0, static_cast<int64_t>(2 * act_bytes)};
  spec.plans = {plan};
  return spec;
}

int generate(const std::string& dir) {
  struct Variant {
    const char* name;
    size_t blocks;
    size_t weight_floats;
  };
  // Block counts chosen so each file is close to 2 MB.
  for (Variant v : {Variant{"structure_2mb.pte", 2900, 4}, Variant{"weights_2mb.pte", 16, 32768}}) {
    auto bytes = PteWriter::write(conv_chain(v.blocks, v.weight_floats));
    if (!bytes.ok()) {
      std::fprintf(stderr, "pte_bench: %s\n", bytes.error().message().c_str());
      return 1;
    }
    const std::string path = dir + "/" + v.name;
    if (auto s = write_file_bytes(path, *bytes); !s.ok()) {
      std::fprintf(stderr, "pte_bench: %s\n", s.error().message().c_str());
      return 1;
    }
    std::printf("%s: %zu bytes, %zu instructions\n", path.c_str(), bytes->size(), 2 * v.blocks);
  }
  return 0;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int time_file(const std::string& path, int iterations) {
  std::vector<double> read_ms, text_ms, json_ms;
  for (int i = 0; i < iterations; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto p = PteReader::open(path);
    if (!p.ok()) {
      std::fprintf(stderr, "pte_bench: %s\n", p.error().message().c_str());
      return 1;
    }
    read_ms.push_back(ms_since(t0));
    t0 = std::chrono::steady_clock::now();
    std::ostringstream text;
    cli::print_program_header(text, *p);
    for (const auto& plan : p->plans) cli::print_plan_summary(text, plan);
    text_ms.push_back(ms_since(t0));
    t0 = std::chrono::steady_clock::now();
    std::string json = cli::dump_json(cli::program_json(*p));
    json_ms.push_back(ms_since(t0));
  }
  auto report = [](const char* what, std::vector<double> v) {
    std::sort(v.begin(), v.end());
    std::printf("  %-14s min %8.3f ms  median %8.3f ms\n", what, v.front(), v[v.size() / 2]);
  };
  std::printf("%s (%d iterations)\n", path.c_str(), iterations);
  report("read+verify", read_ms);
  report("text summary", text_ms);
  report("json", json_ms);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "generate") == 0) return generate(argv[2]);
  if (argc >= 3 && std::strcmp(argv[1], "time") == 0) return time_file(argv[2], argc >= 4 ? std::atoi(argv[3]) : 20);
  std::fprintf(stderr, "usage: pte_bench generate DIR | pte_bench time FILE [ITERATIONS]\n");
  return 2;
}
