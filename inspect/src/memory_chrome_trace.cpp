#include "etscope/inspect/memory_chrome_trace.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>

namespace etscope::inspect {
namespace {

// Placed tensors in the order ExecuTorch's profiler meets them: by first use.
std::vector<size_t> insertion_order(const MemoryPlan& plan) {
  std::vector<size_t> order;
  for (size_t i = 0; i < plan.tensors().size(); ++i) {
    const PlannedTensor& t = plan.tensors()[i];
    // Views are left out, as the profiler skips memory.view nodes; their bases cover the bytes.
    if (t.placed && !t.lifetime.empty() && t.view_of < 0) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return plan.tensors()[a].lifetime.start < plan.tensors()[b].lifetime.start;
  });
  return order;
}

}  // namespace

size_t memory_chrome_trace_event_count(const MemoryPlan& plan) {
  size_t n = 0;
  for (size_t i : insertion_order(plan)) {
    const Lifetime& l = plan.tensors()[i].lifetime;
    n += static_cast<size_t>(l.end - l.start + 1);
  }
  return n;
}

std::string memory_chrome_trace(const MemoryPlan& plan) {
  using Json = nlohmann::ordered_json;
  const std::vector<size_t> order = insertion_order(plan);
  Json events = Json::array();
  int64_t tid = 0;
  for (int64_t step = -1; step <= plan.instruction_count(); ++step) {
    bool any = false;
    for (size_t i : order) {
      const PlannedTensor& t = plan.tensors()[i];
      if (!t.lifetime.contains(step)) continue;
      any = true;
      Json args;
      args["op_name"] = t.op_name;
      args["Memory ID"] = t.memory_id;
      args["fqn"] = t.fqn;
      args["source"] = "None";
      args["bytes"] = t.nbytes;
      Json e;
      e["name"] = t.name;
      e["cat"] = "memory_allocation";
      e["ph"] = "X";
      e["ts"] = t.offset;
      e["dur"] = t.nbytes;
      e["pid"] = t.memory_id;
      e["tid"] = tid;
      e["args"] = std::move(args);
      events.push_back(std::move(e));
    }
    if (any) ++tid;
  }
  Json root;
  root["traceEvents"] = std::move(events);
  // Names come from the file and need not be UTF-8; replace bad bytes instead of throwing.
  return root.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace etscope::inspect
