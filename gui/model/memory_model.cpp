#include "model/memory_model.h"

#include <algorithm>

#include "model/text_format.h"

namespace etscope::gui {
namespace {

// Layout of the columns, as `etscope memory --svg` does it: widths proportional to arena size,
// never under 8% so small arenas stay visible, with a small gap between arenas.
constexpr double kMinShare = 0.08;
constexpr double kGap = 0.02;

// Value indices an instruction touches (list items included).
void touched_values(const ExecutionPlan& plan, const Instruction& in, std::vector<int32_t>& out) {
  auto add = [&](int32_t v) {
    if (v < 0 || static_cast<size_t>(v) >= plan.values.size()) return;
    const Value& value = plan.values[static_cast<size_t>(v)];
    if (value.kind == ValueKind::kTensorList || value.kind == ValueKind::kOptionalTensorList) {
      for (int32_t item : value.tensor_list) {
        if (item >= 0) out.push_back(item);
      }
    } else {
      out.push_back(v);
    }
  };
  for (int32_t a : in.args) add(a);
  add(in.move_from);
  add(in.move_to);
  add(in.cond_value);
  add(in.free_value);
}

}  // namespace

Result<MemoryModel> MemoryModel::build(const Program& program, size_t plan_index) {
  const ExecutionPlan& ep = program.plans.at(plan_index);
  ETSCOPE_ASSIGN_OR_RETURN(inspect::MemoryPlan plan, inspect::MemoryPlan::build(program, ep));
  MemoryModel m(std::move(plan));
  const auto& arenas = m.plan_.arenas();
  const auto& tensors = m.plan_.tensors();

  uint64_t total = 0;
  for (const inspect::Arena& a : arenas) total += a.size;
  std::vector<double> share(arenas.size());
  double share_sum = 0;
  for (size_t k = 0; k < arenas.size(); ++k) {
    share[k] = total == 0 ? 1.0 : std::max(kMinShare, static_cast<double>(arenas[k].size) / static_cast<double>(total));
    share_sum += share[k];
  }
  const double usable = 1.0 - kGap * static_cast<double>(arenas.empty() ? 0 : arenas.size() - 1);
  double x = 0;
  for (size_t k = 0; k < arenas.size(); ++k) {
    ArenaColumn col;
    col.arena = static_cast<uint32_t>(k);
    col.memory_id = arenas[k].memory_id;
    col.size = arenas[k].size;
    col.x0 = x;
    col.x1 = x + usable * share[k] / share_sum;
    col.peak_bytes = arenas[k].peak_bytes;
    col.peak_step = arenas[k].peak_step;
    col.utilisation = arenas[k].utilisation;
    x = col.x1 + kGap;
    m.columns_.push_back(std::move(col));
  }

  std::vector<bool> conflict(tensors.size(), false);
  for (const inspect::Conflict& c : m.plan_.conflicts()) conflict[c.first] = conflict[c.second] = true;
  std::vector<int64_t> rect_of_value(ep.values.size(), -1);
  m.role_counts_.assign(6, 0);
  for (size_t i = 0; i < tensors.size(); ++i) {
    const inspect::PlannedTensor& t = tensors[i];
    ++m.role_counts_[static_cast<size_t>(t.role)];
    if (!t.placed || t.lifetime.empty()) continue;
    auto col = std::find_if(m.columns_.begin(), m.columns_.end(),
                            [&](const ArenaColumn& c) { return c.memory_id == t.memory_id; });
    if (col == m.columns_.end()) continue;
    MemoryRect r;
    r.tensor = static_cast<uint32_t>(i);
    r.column = static_cast<uint32_t>(col - m.columns_.begin());
    r.begin = t.offset;
    r.end = t.end();
    r.first_step = t.lifetime.start;
    r.last_step = t.lifetime.end;
    r.role = t.role;
    r.conflict = conflict[i];
    if (t.value >= 0 && static_cast<size_t>(t.value) < rect_of_value.size()) {
      rect_of_value[static_cast<size_t>(t.value)] = static_cast<int64_t>(m.rects_.size());
    }
    m.rects_.push_back(r);
  }
  for (size_t r = 0; r < m.rects_.size(); ++r) m.columns_[m.rects_[r].column].rects.push_back(static_cast<uint32_t>(r));
  for (ArenaColumn& col : m.columns_) {
    std::stable_sort(col.rects.begin(), col.rects.end(),
                     [&](uint32_t a, uint32_t b) { return m.rects_[a].begin < m.rects_[b].begin; });
  }
  m.draw_order_.resize(m.rects_.size());
  for (size_t r = 0; r < m.rects_.size(); ++r) m.draw_order_[r] = static_cast<uint32_t>(r);
  std::stable_sort(m.draw_order_.begin(), m.draw_order_.end(), [&](uint32_t a, uint32_t b) {
    return m.rects_[a].end - m.rects_[a].begin > m.rects_[b].end - m.rects_[b].begin;
  });

  std::vector<int32_t> values;
  for (const Chain& chain : ep.chains) {
    for (const Instruction& in : chain.instructions) {
      values.clear();
      touched_values(ep, in, values);
      std::vector<uint32_t> rects;
      for (int32_t v : values) {
        const int64_t r = rect_of_value[static_cast<size_t>(v)];
        if (r >= 0 && std::find(rects.begin(), rects.end(), static_cast<uint32_t>(r)) == rects.end()) {
          rects.push_back(static_cast<uint32_t>(r));
        }
      }
      m.step_rects_.push_back(std::move(rects));
    }
  }
  return m;
}

int64_t MemoryModel::hit(size_t column, double byte, int64_t step, double slack) const {
  if (column >= columns_.size()) return -1;
  int64_t best = -1;
  uint64_t best_size = UINT64_MAX;
  for (uint32_t idx : columns_[column].rects) {
    const MemoryRect& r = rects_[idx];
    if (static_cast<double>(r.begin) - slack > byte) break;  // sorted by begin
    if (byte >= static_cast<double>(r.end) + slack || step < r.first_step || step > r.last_step) continue;
    if (r.end - r.begin < best_size) {
      best = idx;
      best_size = r.end - r.begin;
    }
  }
  return best;
}

std::string MemoryModel::describe(size_t rect) const {
  const MemoryRect& r = rects_.at(rect);
  const inspect::PlannedTensor& t = plan_.tensors()[r.tensor];
  const int64_t T = plan_.instruction_count();
  auto step_name = [&](int64_t s) {
    return s < 0 ? std::string("start") : s >= T ? std::string("end") : std::to_string(s);
  };
  std::string s = t.name + "\n";
  s += "value %" + std::to_string(t.value) + ", " + inspect::to_string(t.role);
  if (!t.fqn.empty()) s += " '" + t.fqn + "'";
  s += "\n" + shape_text(t.dtype, t.sizes) + ", " + std::to_string(t.nbytes) + " bytes";
  if (t.nbytes >= 1024) s += " (" + bytes_text(t.nbytes) + ")";
  s += "\narena " + std::to_string(t.memory_id) + " [" + std::to_string(r.begin) + ", " + std::to_string(r.end) + ")";
  s += "\nlive from step " + step_name(r.first_step) + " to " + step_name(r.last_step) + " (" +
       std::to_string(r.last_step - r.first_step + 1) + " steps)";
  if (t.producer >= 0) s += "\nwritten by step " + std::to_string(t.producer) + " " + t.op_name;
  if (t.view_of >= 0) s += "\nview of %" + std::to_string(t.view_of);
  if (r.conflict) s += "\nCONFLICT: overlaps another live tensor";
  return s;
}

const std::vector<uint32_t>& MemoryModel::rects_at_step(int64_t step) const {
  static const std::vector<uint32_t> kNone;
  if (step < 0 || static_cast<size_t>(step) >= step_rects_.size()) return kNone;
  return step_rects_[static_cast<size_t>(step)];
}

}  // namespace etscope::gui
