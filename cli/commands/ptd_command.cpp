// etscope ptd: what is inside a .ptd tensor-data file.
#include <cstdio>
#include <iostream>

#include "commands/command.h"
#include "etscope/formats/ptd_reader.h"
#include "etscope/formats/tensor_stats.h"
#include "render/format.h"
#include "render/json_output.h"
#include "render/program_text.h"

namespace etscope::cli {
namespace {

std::string dim_order_string(const std::vector<uint8_t>& order) {
  std::string s = "(";
  for (size_t i = 0; i < order.size(); ++i) s += (i ? "," : "") + std::to_string(order[i]);
  return s + ")";
}

class PtdCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("ptd", "Show what is inside an ExecuTorch tensor-data file (.ptd)");
    sub->add_option("file", file_, "Tensor-data file (.ptd)")->required();
    report_format_.add_to(sub, "see docs/json.md");
    sub->add_option("--tensor", key_, "Statistics and first values of the tensor stored under KEY");
    return sub;
  }

  Result<int> run() override {
    json_ = report_format_.json();
    ETSCOPE_ASSIGN_OR_RETURN(TensorDataFile f, PtdReader::open(file_));
    if (!key_.empty()) return show_tensor(f);
    if (json_) {
      std::cout << dump_json(tensor_data_file_json(f)) << "\n";
      return 0;
    }
    std::cout << f.name() << ": ExecuTorch tensor data FT01 (" << (f.legacy ? "legacy 0.6 layout" : "current layout")
              << "), " << f.blob->size() << " bytes\n";
    std::cout << "  segments   " << f.segments.size() << ", " << bytes_text(f.segment_data_size) << " at offset "
              << f.segment_base_offset << "\n";
    if (f.legacy) std::cout << "  alignment  " << f.tensor_alignment << "\n";
    std::cout << "  entries    " << f.entries.size() << "\n";
    size_t width = 3;
    for (const auto& e : f.entries) width = std::max(width, e.key.size());
    for (const auto& e : f.entries) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%-*s", static_cast<int>(width), e.key.c_str());
      std::cout << "    " << buf << "  ";
      if (e.layout) {
        std::cout << shape_text(e.layout->dtype, e.layout->sizes) << "  dim_order " << dim_order_string(e.layout->dim_order);
      } else {
        std::cout << "(opaque blob)";
      }
      std::cout << "  " << e.data.size << " B  segment " << e.segment_index << "\n";
    }
    return 0;
  }

 private:
  Result<int> show_tensor(const TensorDataFile& f) {
    const TensorDataEntry* e = f.find(key_);
    if (e == nullptr) {
      return Error(ErrorCode::kNotFound, f.name() + ": no entry '" + key_ + "' (" + std::to_string(f.entries.size()) +
                                             " entries; list them with `etscope ptd " + f.name() + "`)");
    }
    if (!e->layout) {
      return Error(ErrorCode::kInvalidArgument, f.name() + ": entry '" + key_ + "' is an opaque blob without a tensor layout");
    }
    auto stats = compute_tensor_stats(e->layout->dtype, f.bytes(e->data), e->layout->numel);
    if (!stats) {
      return Error(ErrorCode::kNotSupported, f.name() + ": entry '" + key_ + "' has dtype " +
                                                 scalar_type_name(e->layout->dtype) + ", which etscope cannot summarise");
    }
    if (json_) {
      Json j{{"file", f.name()}, {"key", key_}, {"dtype", scalar_type_name(e->layout->dtype)},
             {"sizes", e->layout->sizes}, {"stats", tensor_stats_json(*stats)}};
      std::cout << dump_json(j) << "\n";
    } else {
      print_tensor_stats(std::cout, "'" + key_ + "'", e->layout->dtype, e->layout->sizes, *stats);
    }
    return 0;
  }

  std::string file_;
  std::string key_;
  bool json_ = false;
  ReportFormat report_format_;
};

}  // namespace

std::unique_ptr<Command> make_ptd_command() { return std::make_unique<PtdCommand>(); }

}  // namespace etscope::cli
