// etscope inspect: ExecuTorch's Inspector table (per-event statistics of a profiled run), joined
// with the ETRecord when one is given, as text, CSV, TSV or JSON; the per-type summary and the
// module tree with totals; with --aot-intermediates, the numeric gap between the AOT reference
// and the run (ExecuTorch's calculate_numeric_gap).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "commands/command.h"
#include "etscope/inspect/inspector.h"
#include "etscope/inspect/numeric_gap.h"
#include "etscope/inspect/run_trace.h"
#include "render/inspector_render.h"
#include "render/numeric_gap_render.h"
#include "render/program_json.h"

namespace etscope::cli {
namespace {

// Options and loading shared with `etscope trace`.
struct InspectInputs {
  std::string etdump, etrecord, debug_buffer;
  std::string source = "ns", target = "ms";
  std::string method = "forward";
};

void add_input_options(CLI::App* sub, InspectInputs& in) {
  sub->add_option("--etdump", in.etdump, "ETDump trace (.etdp)")->required();
  sub->add_option("--etrecord", in.etrecord, "ETRecord archive of the same program (module hierarchy, stack traces, op types)");
  sub->add_option("--debug-buffer", in.debug_buffer, "Debug buffer (.bin) the run wrote next to the ETDump");
  sub->add_option("--source-time-scale", in.source, "Unit of the ETDump's timestamps")
      ->check(CLI::IsMember({"ns", "us", "ms", "s", "cycles"}))->capture_default_str();
  sub->add_option("--target-time-scale", in.target, "Unit of the reported times")
      ->check(CLI::IsMember({"ns", "us", "ms", "s", "cycles"}))->capture_default_str();
  sub->add_option("--method", in.method, "Method whose ETRecord debug maps are used")->capture_default_str();
}

Result<inspect::Inspector> load_inspector(const InspectInputs& in) {
  inspect::InspectorOptions options;
  ETSCOPE_ASSIGN_OR_RETURN(options.source, inspect::parse_time_scale(in.source));
  ETSCOPE_ASSIGN_OR_RETURN(options.target, inspect::parse_time_scale(in.target));
  options.method = in.method;
  ETSCOPE_ASSIGN_OR_RETURN(etdump::EtdumpFile dump, etdump::EtdumpReader::open(in.etdump));
  std::shared_ptr<const etrecord::EtRecord> record;
  if (!in.etrecord.empty()) {
    ETSCOPE_ASSIGN_OR_RETURN(etrecord::EtRecord r, etrecord::EtRecordReader::open(in.etrecord));
    record = std::make_shared<const etrecord::EtRecord>(std::move(r));
  }
  std::shared_ptr<const Blob> buffer;
  if (!in.debug_buffer.empty()) {
    ETSCOPE_ASSIGN_OR_RETURN(buffer, Blob::open_file(in.debug_buffer));
  }
  return inspect::Inspector::build(std::make_shared<const etdump::EtdumpFile>(std::move(dump)), std::move(record), std::move(buffer), options);
}

class InspectCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("inspect", "Per-operator timing statistics of a profiled run, like ExecuTorch's Inspector");
    add_input_options(sub, inputs_);
    sub->add_option("--format", format_, "Output format")->check(CLI::IsMember({"table", "csv", "tsv", "json"}))->capture_default_str();
    sub->add_option("--sort", sort_, "Row order within a block")->check(CLI::IsMember({"order", "avg", "total", "name"}))->capture_default_str();
    sub->add_option("--top", top_, "Show at most N rows per block (0: all)")->check(CLI::NonNegativeNumber);
    sub->add_option("--block", block_, "Only blocks with this name (e.g. Execute)");
    sub->add_flag("--operator-calls", operator_calls_, "Keep OPERATOR_CALL rows (ExecuTorch's table drops them)");
    sub->add_flag("--by-type", by_type_, "Summary by operator type (count, total, share of the run)");
    sub->add_flag("--modules", modules_, "Module tree with totals (needs --etrecord)");
    sub->add_option("--aot-intermediates", aot_, "AOT intermediate outputs (.ptd, index FILE.json beside it) to compare the run with "
                                                 "(samples/export/write_aot_intermediates.py)");
    sub->add_option("--aot-index", aot_index_, "Index of the AOT intermediates (default: FILE.json beside the .ptd, if any)");
    sub->add_option("--gap", gap_, "Numeric gap metric with --aot-intermediates: L1, MSE or SNR (default L1)");
    return sub;
  }

  Result<int> run() override {
    if (!aot_.empty() || !aot_index_.empty() || !gap_.empty()) return run_gap();
    ETSCOPE_ASSIGN_OR_RETURN(inspect::Inspector in, load_inspector(inputs_));
    InspectTableOptions opt;
    opt.sort = sort_ == "avg" ? EventSort::kAvg : sort_ == "total" ? EventSort::kTotal : sort_ == "name" ? EventSort::kName : EventSort::kOrder;
    opt.top = top_;
    opt.operator_calls = operator_calls_;
    opt.block = block_;
    if (!block_.empty()) {
      bool any = false;
      for (const auto& b : in.blocks()) any |= b.name == block_;
      if (!any) return Error(ErrorCode::kNotFound, inputs_.etdump + ": no event block named '" + block_ + "'");
    }
    if (format_ == "json") {
      std::cout << dump_json(inspector_json(in, opt)) << "\n";
      return 0;
    }
    if (format_ == "csv" || format_ == "tsv") {
      render_event_rows(in, opt, format_ == "csv" ? ',' : '\t', std::cout);
      return 0;
    }
    if (by_type_ || modules_) {
      if (by_type_) render_type_summary(in, opt, std::cout);
      if (modules_) {
        if (by_type_) std::cout << "\n";
        render_module_tree(in, opt, std::cout);
      }
      return 0;
    }
    render_event_table(in, opt, std::cout);
    return 0;
  }

 private:
  // The numeric gap table (--aot-intermediates / --gap).
  Result<int> run_gap() {
    if (aot_.empty() || inputs_.debug_buffer.empty() || inputs_.etrecord.empty()) {
      std::cerr << "etscope: the numeric gap needs --aot-intermediates FILE.ptd, --debug-buffer and --etrecord\n";
      return 2;
    }
    ETSCOPE_ASSIGN_OR_RETURN(inspect::GapMetric metric, inspect::parse_gap_metric(gap_.empty() ? "L1" : gap_));
    // The index written beside the .ptd (FILE.json), when present: op names and output order.
    std::string index_path = aot_index_;
    if (index_path.empty()) {
      std::filesystem::path beside = aot_;
      beside.replace_extension(".json");
      std::error_code ec;
      if (std::filesystem::is_regular_file(beside, ec)) index_path = beside.string();
    }
    ETSCOPE_ASSIGN_OR_RETURN(inspect::AotIntermediates aot, inspect::load_aot_intermediates(aot_, index_path));
    ETSCOPE_ASSIGN_OR_RETURN(inspect::Inspector in, load_inspector(inputs_));
    ETSCOPE_ASSIGN_OR_RETURN(std::vector<inspect::GapRow> rows, inspect::calculate_numeric_gap(in, aot, metric));
    if (format_ == "json") {
      std::cout << dump_json(gap_json(rows, metric)) << "\n";
    } else if (format_ == "csv" || format_ == "tsv") {
      render_gap_rows(rows, metric, format_ == "csv" ? ',' : '\t', std::cout);
    } else {
      render_gap_table(rows, metric, std::cout);
    }
    return 0;
  }

  InspectInputs inputs_;
  std::string aot_, aot_index_, gap_;
  std::string format_ = "table", sort_ = "order", block_;
  size_t top_ = 0;
  bool operator_calls_ = false, by_type_ = false, modules_ = false;
};

}  // namespace

std::unique_ptr<Command> make_inspect_command() { return std::make_unique<InspectCommand>(); }

// `etscope trace` lives here to share the inputs and their loading with `inspect`.
namespace {

class TraceCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("trace", "Write a profiled run as a Chrome trace (Perfetto, chrome://tracing)");
    add_input_options(sub, inputs_);
    sub->add_option("-o,--output", output_, "Trace JSON to write")->required();
    return sub;
  }

  Result<int> run() override;

 private:
  InspectInputs inputs_;
  std::string output_;
};

Result<int> TraceCommand::run() {
  ETSCOPE_ASSIGN_OR_RETURN(inspect::Inspector in, load_inspector(inputs_));
  std::ofstream out(output_, std::ios::binary | std::ios::trunc);
  if (!out) return Error(ErrorCode::kIo, output_ + ": cannot open for writing");
  inspect::write_run_trace(in, out);
  out.close();
  if (!out) return Error(ErrorCode::kIo, output_ + ": write failed");
  size_t events = 0;
  for (const auto& e : in.dump().events) events += e.kind == etdump::EventKind::kProfile;
  std::cout << output_ << ": " << events << " events on " << in.dump().blocks.size() << " tracks; open it in https://ui.perfetto.dev or chrome://tracing\n";
  return 0;
}

}  // namespace

std::unique_ptr<Command> make_trace_command() { return std::make_unique<TraceCommand>(); }

}  // namespace etscope::cli
