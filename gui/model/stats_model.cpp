#include "model/stats_model.h"

#include <algorithm>

#include "etscope/inspect/event_index.h"
#include "etscope/inspect/profile.h"
#include "model/text_format.h"

namespace etscope::gui {
namespace {

uint64_t instruction_key(const InstructionRef& ref) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(ref.chain)) << 32) | static_cast<uint32_t>(ref.instruction);
}

double key_of(const StatsRow& r, StatsColumn column) {
  switch (column) {
    case StatsColumn::kInstruction:
      return r.instruction.valid() ? static_cast<double>(r.instruction.chain) * 1e9 + r.instruction.instruction : -1.0;
    case StatsColumn::kCount: return static_cast<double>(r.count);
    case StatsColumn::kAvg: return r.avg_us;
    case StatsColumn::kP10: return r.p10_us;
    case StatsColumn::kP50: return r.p50_us;
    case StatsColumn::kP90: return r.p90_us;
    case StatsColumn::kMin: return r.min_us;
    case StatsColumn::kMax: return r.max_us;
    case StatsColumn::kTotal: return r.total_us;
    case StatsColumn::kShare: return r.share;
    case StatsColumn::kName:
    case StatsColumn::kModule: return 0;
  }
  return 0;
}

}  // namespace

void sort_stats_rows(const std::vector<StatsRow>& all, StatsColumn column, bool ascending, std::vector<uint32_t>& rows) {
  std::stable_sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) {
    const StatsRow& x = all[a];
    const StatsRow& y = all[b];
    if (column == StatsColumn::kName || column == StatsColumn::kModule) {
      const int c = column == StatsColumn::kName ? x.name.compare(y.name) : x.module.compare(y.module);
      return ascending ? c < 0 : c > 0;
    }
    const double kx = key_of(x, column), ky = key_of(y, column);
    return ascending ? kx < ky : kx > ky;
  });
}

StatsModel StatsModel::build(const inspect::Inspector& inspector) {
  StatsModel m;
  const auto& blocks = inspector.blocks();
  for (size_t b = 0; b < blocks.size(); ++b) {
    const inspect::EventBlock& block = blocks[b];
    StatsBlock out;
    out.runs = block.runs.size();
    const inspect::RunTime run = inspector.run_time(b);
    out.run_time_us = run.value;
    out.run_time_source = inspect::to_string(run.source);
    for (size_t e = 0; e < block.events.size(); ++e) {
      const inspect::Event& ev = block.events[e];
      StatsRow row;
      row.event = static_cast<uint32_t>(e);
      row.name = ev.name.empty() ? ev.delegate_identifier_text() : ev.name;
      row.kind = ev.kind();
      row.framework = row.kind == events::EventClass::kFramework;
      row.operator_call = row.kind == events::EventClass::kOperatorCall || row.kind == events::EventClass::kDelegateCall;
      if (!row.framework && ev.chain >= 0) row.instruction = {ev.chain, ev.instruction_id};
      row.module = inspect::module_path_text(ev);
      m.has_modules_ = m.has_modules_ || !row.module.empty();
      if (ev.perf) {
        const inspect::PerfData& p = *ev.perf;
        row.count = p.raw.size();
        row.avg_us = p.avg, row.p10_us = p.p10, row.p50_us = p.p50, row.p90_us = p.p90, row.min_us = p.min, row.max_us = p.max;
        row.total_us = p.total;
        row.share = inspect::share_of_run(ev, run).value_or(0.0);
      }
      out.rows.push_back(std::move(row));
    }
    out.summary = inspector.summary_by_type(b);
    out.modules = inspector.module_tree(b);
    out.label = "#" + std::to_string(b) + " " + block.name + ": " + count_text(out.runs, "run") + ", " +
                count_text(block.events.size(), "event");
    // row_of's answers: the first kernel or delegate event of each instruction, else its first
    // wrapper.
    std::unordered_map<uint64_t, uint32_t> index;
    for (size_t r = 0; r < out.rows.size(); ++r) {
      const StatsRow& row = out.rows[r];
      if (!row.instruction.valid()) continue;
      auto [it, inserted] = index.emplace(instruction_key(row.instruction), static_cast<uint32_t>(r));
      if (!inserted && out.rows[it->second].operator_call && !row.operator_call) it->second = static_cast<uint32_t>(r);
    }
    m.instruction_rows_.push_back(std::move(index));
    m.blocks_.push_back(std::move(out));
  }
  m.default_block_ = inspect::main_block(inspector).value_or(0);
  return m;
}

const StatsRow* StatsModel::row_of(size_t block, const InstructionRef& ref) const {
  if (block >= instruction_rows_.size() || !ref.valid()) return nullptr;
  const auto& index = instruction_rows_[block];
  auto it = index.find(instruction_key(ref));
  return it == index.end() ? nullptr : &blocks_[block].rows[it->second];
}

const std::vector<uint32_t>& StatsModel::rows(size_t block, const StatsQuery& query) const {
  if (cache_valid_ && cache_block_ == block && cache_query_ == query) return cache_rows_;
  ++recomputations_;
  cache_valid_ = true;
  cache_block_ = block;
  cache_query_ = query;
  cache_rows_.clear();
  if (block >= blocks_.size()) return cache_rows_;
  const auto& all = blocks_[block].rows;
  const TextFilter filter(query.filter);
  for (size_t i = 0; i < all.size(); ++i) {
    const StatsRow& r = all[i];
    if (query.hide_framework && (r.framework || r.operator_call)) continue;
    if (!query.show_operator_calls && r.operator_call) continue;
    if (!filter.empty() && !filter.matches(r.module.empty() ? r.name : r.name + "\n" + r.module)) continue;
    cache_rows_.push_back(static_cast<uint32_t>(i));
  }
  sort_stats_rows(all, query.column, query.ascending, cache_rows_);
  return cache_rows_;
}

}  // namespace etscope::gui
