// StatsModel: the Op statistics view's tables, computed once from an Inspector at load time
// (per-event rows, per-type summary, module tree), with the filtered and sorted row order cached
// under its inputs so a frame that changes nothing costs nothing.
#pragma once

#include <cstdint>
#include <string>

#include "etscope/core/text.h"
#include <unordered_map>
#include <vector>

#include "etscope/inspect/inspector.h"
#include "model/instruction_ref.h"

namespace etscope::gui {

enum class StatsColumn : uint8_t { kName, kInstruction, kCount, kAvg, kP10, kP50, kP90, kMin, kMax, kTotal, kShare, kModule };

/// One Inspector event with its statistics; durations in microseconds (the `_us` fields).
struct StatsRow {
  uint32_t event = 0;          ///< Index into EventBlock::events.
  std::string name;
  InstructionRef instruction;  ///< Invalid for framework events.
  std::string module;          ///< Module path from the ETRecord, or "".
  uint64_t count = 0;          ///< Samples (runs) with a duration.
  double avg_us = 0, p10_us = 0, p50_us = 0, p90_us = 0, min_us = 0, max_us = 0;
  double total_us = 0;         ///< Sum of the samples.
  double share = 0;            ///< inspect::share_of_run: avg / the block's run time, 0..1.
  events::EventClass kind = events::EventClass::kOther;
  bool framework = false;      ///< kind is kFramework (Method::execute and friends).
  bool operator_call = false;  ///< kind is kOperatorCall or kDelegateCall: the executor's wrappers.
};

struct StatsBlock {
  std::string label;           ///< "#1 Execute: 10 runs, 8 events".
  std::vector<StatsRow> rows;  ///< In Inspector order.
  std::vector<inspect::TypeSummary> summary;  ///< Times in microseconds.
  inspect::ModuleNode modules;                ///< Times in microseconds.
  double run_time_us = 0;      ///< inspect::Inspector::run_time of the block.
  std::string run_time_source; ///< How it was defined ("Method::execute avg", ...).
  size_t runs = 0;
};

struct StatsQuery {
  std::string filter;          ///< TextFilter syntax, matched against name and module.
  StatsColumn column = StatsColumn::kTotal;
  bool ascending = false;
  bool hide_framework = false; ///< Leave out framework events and OPERATOR_CALL wrappers.
  /// OPERATOR_CALL rows (each kernel's call as the executor times it) are left out unless this is
  /// set, as `etscope inspect` leaves them out unless --operator-calls: the kernel stands for them.
  bool show_operator_calls = false;
  bool operator==(const StatsQuery& o) const {
    return filter == o.filter && column == o.column && ascending == o.ascending && hide_framework == o.hide_framework &&
           show_operator_calls == o.show_operator_calls;
  }
};

class StatsModel {
 public:
  /// Reads every block of `inspector`, which must report microseconds (TimeScale::kUs as its
  /// target, as load_session opens profiles): every duration of the model is in microseconds.
  /// The model copies what it needs; the inspector need not outlive it.
  static StatsModel build(const inspect::Inspector& inspector);

  const std::vector<StatsBlock>& blocks() const { return blocks_; }
  /// The block to show first: inspect::main_block (0 when there are none).
  size_t default_block() const { return default_block_; }
  /// The unit of every duration: "us".
  const char* unit() const { return inspect::to_string(inspect::TimeScale::kUs); }
  /// A duration of the model (microseconds) as the CLI writes it, by core/text.h's one policy:
  /// three significant figures in the unit that suits it ("3.56 ms", "845 us"), never "3,557.866".
  static std::string time_text(double us) { return duration_text_us(us); }
  /// Whether any event has a module path (an ETRecord with module metadata was loaded).
  bool has_modules() const { return has_modules_; }

  /// Row indices of block `block` that pass `query`, in its order (ties by Inspector order).
  /// Cached: asking again with the same block and query returns the same vector unchanged.
  const std::vector<uint32_t>& rows(size_t block, const StatsQuery& query) const;
  /// The row that times instruction `ref` in block `block`: its kernel or delegate event, else its
  /// OPERATOR_CALL / DELEGATE_CALL wrapper; null when the block has none. Constant time (an
  /// index built with the model), so views may ask per frame and per graph node.
  const StatsRow* row_of(size_t block, const InstructionRef& ref) const;
  /// How many times rows() actually filtered and sorted (for tests).
  size_t recomputations() const { return recomputations_; }

 private:
  std::vector<StatsBlock> blocks_;
  size_t default_block_ = 0;
  bool has_modules_ = false;
  /// Per block: (chain, instruction) packed as in row_of() -> the row it answers with.
  std::vector<std::unordered_map<uint64_t, uint32_t>> instruction_rows_;
  mutable bool cache_valid_ = false;
  mutable size_t cache_block_ = 0;
  mutable StatsQuery cache_query_;
  mutable std::vector<uint32_t> cache_rows_;
  mutable size_t recomputations_ = 0;
};

/// Sorts `rows` (indices into `all`) by `column`; ties keep Inspector order.
void sort_stats_rows(const std::vector<StatsRow>& all, StatsColumn column, bool ascending, std::vector<uint32_t>& rows);

}  // namespace etscope::gui
