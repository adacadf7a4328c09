#include "render/memory_json.h"

namespace etscope::cli {
namespace {

Json lifetime_json(const inspect::Lifetime& l) {
  if (l.empty()) return nullptr;
  return Json{{"start", l.start}, {"end", l.end}};
}

Json level_json(const inspect::DebugBufferLevel& level) {
  return Json{{"bytes_needed", level.bytes_needed}, {"data_bytes", level.data_bytes},
              {"tensors", level.entries.size()}};
}

}  // namespace

Json state_json(const inspect::StateSummary& s) {
  return Json{{"buffers", s.buffers},       {"bytes", s.bytes},       {"context_len", s.context_len},
              {"kv_buffers", s.kv_buffers}, {"kv_bytes", s.kv_bytes}, {"kv_bytes_per_token", number_json(s.kv_bytes_per_token)}};
}

Json memory_plan_json(const inspect::MemoryPlan& plan, const inspect::DebugBufferPlan& debug, size_t top) {
  Json arenas = Json::array();
  for (const inspect::Arena& a : plan.arenas()) {
    arenas.push_back(Json{{"memory_id", a.memory_id},
                          {"size", a.size},
                          {"tensor_count", a.tensor_count},
                          {"peak_bytes", a.peak_bytes},
                          {"peak_step", a.peak_step},
                          {"peak_data_bytes", a.peak_data_bytes},
                          {"utilisation", a.utilisation},
                          {"never_used_bytes", a.never_used_bytes},
                          {"greedy_bytes", a.greedy_bytes},
                          {"potential_saving", a.potential_saving()},
                          {"live_bytes", a.live_bytes},
                          {"live_data_bytes", a.live_data_bytes}});
  }
  Json tensors = Json::array();
  for (const inspect::PlannedTensor& t : plan.tensors()) {
    tensors.push_back(Json{{"value", t.value},
                           {"dtype", scalar_type_name(t.dtype)},
                           {"sizes", t.sizes},
                           {"upper_bound", t.dynamism == ShapeDynamism::kDynamicBound},
                           {"nbytes", t.nbytes},
                           {"reserved", t.reserved},
                           {"memory_id", t.memory_id},
                           {"offset", t.offset},
                           {"end", t.end()},
                           {"placed", t.placed},
                           {"lifetime", lifetime_json(t.lifetime)},
                           {"role", inspect::to_string(t.role)},
                           {"data_kind", to_string(t.data_kind)},
                           {"requires_grad", t.requires_grad},
                           {"fqn", t.fqn},
                           {"name", t.name},
                           {"op_name", t.op_name},
                           {"producer", t.producer},
                           {"group", t.group},
                           {"view_of", t.view_of}});
  }
  Json groups = Json::array();
  for (const inspect::SharingGroup& g : plan.sharing_groups()) {
    Json values = Json::array();
    for (size_t i : g.tensors) values.push_back(plan.tensors()[i].value);
    groups.push_back(Json{{"memory_id", g.memory_id}, {"offset", g.offset}, {"values", values}, {"aliases", g.aliases}});
  }
  Json conflicts = Json::array();
  for (const inspect::Conflict& c : plan.conflicts()) {
    conflicts.push_back(Json{{"values", {plan.tensors()[c.first].value, plan.tensors()[c.second].value}},
                             {"memory_id", c.memory_id},
                             {"overlap", {c.overlap_begin, c.overlap_end}},
                             {"steps", lifetime_json(c.steps)},
                             {"message", c.message}});
  }
  Json largest = Json::array();
  for (size_t i : plan.largest(top)) largest.push_back(plan.tensors()[i].value);
  return Json{{"name", plan.plan_name()},
              {"instruction_count", plan.instruction_count()},
              {"step_labels", plan.step_labels()},
              {"arenas", arenas},
              {"tensors", tensors},
              {"sharing_groups", groups},
              {"conflicts", conflicts},
              {"largest", largest},
              {"debug_buffer", Json{{"alignment", debug.alignment},
                                    {"intermediate", level_json(debug.intermediate)},
                                    {"program_outputs", level_json(debug.program_outputs)}}},
              {"problems", plan.problems()},
              {"notes", plan.notes()}};
}

}  // namespace etscope::cli
