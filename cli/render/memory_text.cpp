#include "render/memory_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "etscope/core/text.h"
#include "etscope/inspect/program_description.h"
#include "render/format.h"

namespace etscope::cli {
namespace {

using inspect::Arena;
using inspect::MemoryPlan;
using inspect::PlannedTensor;

std::string step_name(int64_t step, int64_t T) {
  if (step < 0) return "start";
  if (step >= T) return "end";
  return std::to_string(step);
}

std::string lifetime_string(const inspect::Lifetime& l, int64_t T) {
  if (l.empty()) return "unused";
  return step_name(l.start, T) + ".." + step_name(l.end, T);
}

std::string pad(std::string s, size_t width, bool right = false) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

std::string percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", v * 100.0);
  return buf;
}

}  // namespace

void print_state_summary(std::ostream& out, const inspect::StateSummary& s) {
  if (s.buffers == 0) return;
  out << "\nstate across executions: " << count_text(s.buffers, "mutable buffer") << ", " << bytes_text(s.bytes)
      << " (in the peak, never waste)\n";
  if (s.kv_buffers > 0) {
    out << "  KV caches: " << count_text(s.kv_buffers, "buffer") << " with the context of " << s.context_len << " tokens, "
        << bytes_text(s.kv_bytes) << " = " << bytes_text(static_cast<uint64_t>(std::llround(s.kv_bytes_per_token)))
        << " per token of context (planned at the bound: a shorter context would need proportionally less)\n";
  }
}

void print_memory_summary(std::ostream& out, const MemoryPlan& plan, const inspect::DebugBufferPlan& debug,
                          size_t top) {
  const int64_t T = plan.instruction_count();
  size_t placed = 0;
  for (const PlannedTensor& t : plan.tensors()) placed += t.placed ? 1 : 0;
  out << "method " << plan.plan_name() << ": " << T << " instructions (steps: start, 0.." << (T - 1)
      << ", end), " << plan.arenas().size() << " arena" << (plan.arenas().size() == 1 ? "" : "s") << ", "
      << plan.tensors().size() << " planned tensors";
  if (placed != plan.tensors().size()) out << " (" << plan.tensors().size() - placed << " with invalid placement)";
  out << "\n\n";

  out << "  arena        size        peak   at step   util   data peak  never used  greedy bound  could save\n";
  for (const Arena& a : plan.arenas()) {
    out << "  " << pad("#" + std::to_string(a.memory_id), 6) << pad(bytes_text(a.size), 10, true) << "  "
        << pad(bytes_text(a.peak_bytes), 10, true) << "  " << pad(step_name(a.peak_step, T), 8, true) << "  "
        << pad(percent(a.utilisation), 6, true) << "  " << pad(bytes_text(a.peak_data_bytes), 10, true) << "  "
        << pad(bytes_text(a.never_used_bytes), 10, true) << "  " << pad(bytes_text(a.greedy_bytes), 12, true)
        << "  " << pad(bytes_text(a.potential_saving()), 10, true) << "\n";
  }
  out << "  (peak counts each tensor's 16-byte-aligned slot; data peak only its bytes; greedy bound is\n"
         "   ExecuTorch's greedy planner re-run over these lifetimes)\n";
  out << "  conflicts: " << plan.conflicts().size() << (plan.conflicts().empty() ? "" : "  <-- BROKEN PLAN") << "\n";

  const auto largest = plan.largest(top);
  if (!largest.empty()) {
    out << "\nlargest planned tensors\n";
    out << "  value  shape                        bytes  arena  range                   live          role        "
           "name\n";
    for (size_t i : largest) {
      const PlannedTensor& t = plan.tensors()[i];
      std::string range = t.placed ? "[" + std::to_string(t.offset) + ", " + std::to_string(t.end()) + ")" : "invalid";
      out << "  " << pad("%" + std::to_string(t.value), 6) << " " << pad(inspect::tensor_type_text(t.dtype, t.sizes, t.dynamism), 24) << " "
          << pad(bytes_text(t.nbytes), 10, true) << "  " << pad(std::to_string(t.memory_id), 5) << "  "
          << pad(range, 22) << "  " << pad(lifetime_string(t.lifetime, T), 12) << "  "
          << pad(inspect::to_string(t.role), 10) << "  " << t.name << "\n";
    }
  }

  size_t alias_sets = 0, reused = 0;
  for (const auto& g : plan.sharing_groups()) (g.aliases ? alias_sets : reused) += 1;
  out << "\nshared storage: " << plan.sharing_groups().size() << " offsets hold more than one tensor ("
      << alias_sets << " with aliases live together, " << reused << " reused over time)\n";
  size_t shown = 0;
  for (const auto& g : plan.sharing_groups()) {
    if (shown == top) {
      out << "  ...\n";
      break;
    }
    ++shown;
    out << "  arena " << g.memory_id << " @ " << g.offset << (g.aliases ? "  aliases: " : "  reused:  ");
    for (size_t k = 0; k < g.tensors.size(); ++k) {
      const PlannedTensor& t = plan.tensors()[g.tensors[k]];
      out << (k ? ", " : "") << "%" << t.value << " (" << lifetime_string(t.lifetime, T) << ")";
    }
    out << "\n";
  }

  out << "\nETDump debug buffer for one execution (writes " << debug.alignment << "-byte aligned)\n";
  out << "  intermediate outputs  " << pad(bytes_text(debug.intermediate.bytes_needed), 10, true) << "  ("
      << debug.intermediate.bytes_needed << " B, " << debug.intermediate.entries.size() << " tensor writes)\n";
  out << "  program outputs only  " << pad(bytes_text(debug.program_outputs.bytes_needed), 10, true) << "  ("
      << debug.program_outputs.bytes_needed << " B, " << debug.program_outputs.entries.size() << " tensor writes)\n";

  for (const std::string& note : plan.notes()) out << "note: " << note << "\n";
}

void print_arena_map(std::ostream& out, const MemoryPlan& plan, size_t arena_index, int columns, int max_rows) {
  const Arena& a = plan.arenas()[arena_index];
  const int64_t T = plan.instruction_count();
  const int64_t steps = T + 2;
  const int64_t per_row = std::max<int64_t>(1, (steps + max_rows - 1) / max_rows);
  const double cell = a.size == 0 ? 0.0 : static_cast<double>(a.size) / columns;
  out << "\narena " << a.memory_id << " map: " << bytes_text(a.size) << ", " << columns << " columns of ";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", cell);
  out << buf << " B; one row per " << (per_row == 1 ? "step" : std::to_string(per_row) + " steps")
      << "; '#' full, '+' partly live, '.' free\n";
  if (a.size == 0) return;
  std::string ruler(static_cast<size_t>(columns), ' ');
  std::string left = "0", right = std::to_string(a.size);
  ruler.replace(0, left.size(), left);
  if (right.size() < ruler.size()) ruler.replace(ruler.size() - right.size(), right.size(), right);
  out << "  " << pad("step", 10) << pad("live", 10, true) << "  |" << ruler << "|\n";

  // Tensors of this arena that are placed and live somewhere.
  std::vector<const PlannedTensor*> members;
  for (const PlannedTensor& t : plan.tensors()) {
    if (t.placed && t.memory_id == a.memory_id && !t.lifetime.empty() && t.nbytes > 0) members.push_back(&t);
  }
  for (int64_t row_start = -1; row_start <= T; row_start += per_row) {
    const int64_t row_end = std::min<int64_t>(T, row_start + per_row - 1);
    std::vector<double> coverage(static_cast<size_t>(columns), 0.0);
    uint64_t live = 0;
    bool peak = false;
    for (int64_t s = row_start; s <= row_end; ++s) {
      live = std::max(live, a.live_bytes[static_cast<size_t>(s + 1)]);
      peak = peak || s == a.peak_step;
      // Per cell, the bytes covered at this step (tensor ranges may overlap only for aliases,
      // so clamp at the cell size).
      std::vector<double> covered(static_cast<size_t>(columns), 0.0);
      for (const PlannedTensor* t : members) {
        if (!t->lifetime.contains(s)) continue;
        const double b = static_cast<double>(t->offset), e = static_cast<double>(t->end());
        int c0 = static_cast<int>(b / cell), c1 = std::min(columns - 1, static_cast<int>((e - 1e-9) / cell));
        for (int c = std::max(0, c0); c <= c1; ++c) {
          const double lo = std::max(b, c * cell), hi = std::min(e, (c + 1) * cell);
          if (hi > lo) covered[static_cast<size_t>(c)] += hi - lo;
        }
      }
      for (int c = 0; c < columns; ++c) {
        coverage[static_cast<size_t>(c)] =
            std::max(coverage[static_cast<size_t>(c)], std::min(1.0, covered[static_cast<size_t>(c)] / cell));
      }
    }
    std::string bar;
    for (double f : coverage) bar += f >= 0.999 ? '#' : f > 0.0 ? '+' : '.';
    std::string label = row_start == row_end ? step_name(row_start, T)
                                             : step_name(row_start, T) + "-" + step_name(row_end, T);
    out << "  " << pad(label, 10) << pad(bytes_text(live), 10, true) << "  |" << bar << "|"
        << (peak ? "  <- peak" : "") << "\n";
  }
}

}  // namespace etscope::cli
