// etscope etdump: the raw events of an ETDump trace.
#include <cstdio>
#include <iostream>

#include "commands/command.h"
#include "etscope/etdump/etdump_reader.h"
#include "etscope/core/text.h"
#include "etscope/inspect/engine_identity.h"
#include "render/format.h"
#include "render/json_output.h"

namespace etscope::cli {
namespace {

const char* type_name(etdump::LoggedValue::Type t) {
  using T = etdump::LoggedValue::Type;
  switch (t) {
    case T::kNull: return "None";
    case T::kInt: return "Int";
    case T::kBool: return "Bool";
    case T::kFloat: return "Float";
    case T::kDouble: return "Double";
    case T::kTensor: return "Tensor";
    case T::kTensorList: return "TensorList";
    case T::kString: return "String";
  }
  return "?";
}

class EtdumpCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("etdump", "List the run blocks and raw events of an ETDump trace (.etdp)");
    sub->add_option("file", file_, "ETDump trace (.etdp)")->required();
    report_format_.add_to(sub, "see docs/json.md");
    return sub;
  }

  Result<int> run() override {
    json_ = report_format_.json();
    ETSCOPE_ASSIGN_OR_RETURN(etdump::EtDumpFile f, etdump::EtDumpReader::open(file_));
    if (json_) {
      std::cout << dump_json(to_json(f)) << "\n";
      return 0;
    }
    std::printf("%s: ETDump ED00%s, %zu run blocks, %zu events\n", f.name().c_str(),
                f.size_prefixed ? " (size-prefixed)" : "", f.blocks.size(), f.events.size());
    std::printf("engine: %s\n", inspect::dump_engine(f).text().c_str());
    for (size_t b = 0; b < f.blocks.size(); ++b) {
      const etdump::RunBlock& block = f.blocks[b];
      std::printf("\nblock %zu %s: %u events", b, block.name.c_str(), block.event_count);
      if (block.bundled_input_index >= 0) std::printf(", bundled input %d", block.bundled_input_index);
      std::printf("\n");
      for (uint32_t i = 0; i < block.event_count; ++i) {
        const etdump::Event& e = f.events[block.first_event + i];
        switch (e.kind) {
          case etdump::EventKind::kProfile: {
            std::string name = f.name_of(e);
            if (e.delegate) {
              const auto& d = f.delegate_refs[e.ref];
              name = "delegate " + (d.id_str.empty() ? std::to_string(d.id_int) : d.id_str) + (name.empty() ? "" : " " + name);
            }
            std::printf("  %5u  %-40s chain %2d instr %4d  %12.3f us\n", i, name.c_str(), e.chain, e.instruction,
                        duration_in(static_cast<double>(e.end - e.start), TimeUnit::kUs));
            break;
          }
          case etdump::EventKind::kDebug: {
            const etdump::LoggedValue& v = f.values[e.ref];
            std::string what = type_name(v.type);
            for (const auto& t : v.tensors) {
              std::vector<int32_t> sizes(t.sizes.begin(), t.sizes.end());
              what += " " + shape_text(t.dtype, sizes) + " @" + std::to_string(t.offset);
            }
            std::printf("  %5u  %-40s chain %2d instr %4d  %s%s\n", i, v.output ? "program output" : "value", e.chain,
                        e.instruction, what.c_str(), "");
            break;
          }
          case etdump::EventKind::kAllocation:
            std::printf("  %5u  allocation by allocator %u: %llu bytes\n", i, e.ref, static_cast<unsigned long long>(e.start));
            break;
        }
      }
    }
    return 0;
  }

 private:
  static Json to_json(const etdump::EtDumpFile& f) {
    Json blocks = Json::array();
    for (const auto& block : f.blocks) {
      Json events = Json::array();
      for (uint32_t i = 0; i < block.event_count; ++i) {
        const etdump::Event& e = f.events[block.first_event + i];
        Json j{{"kind", e.kind == etdump::EventKind::kProfile ? "profile" : e.kind == etdump::EventKind::kDebug ? "debug" : "allocation"}};
        if (e.kind == etdump::EventKind::kProfile) {
          j["name"] = f.name_of(e);
          j["chain_index"] = e.chain;
          j["instruction_id"] = e.instruction;
          j["start_time"] = e.start;
          j["end_time"] = e.end;
          if (e.delegate) {
            j["delegate_debug_id_int"] = f.delegate_refs[e.ref].id_int;
            j["delegate_debug_id_str"] = f.delegate_refs[e.ref].id_str;
          }
        } else if (e.kind == etdump::EventKind::kDebug) {
          const auto& v = f.values[e.ref];
          j["chain_index"] = e.chain;
          j["instruction_id"] = e.instruction;
          j["type"] = type_name(v.type);
          j["output"] = v.output;
          Json tensors = Json::array();
          for (const auto& t : v.tensors) {
            tensors.push_back({{"dtype", scalar_type_name(t.dtype)}, {"sizes", t.sizes}, {"strides", t.strides},
                               {"offset", t.offset}, {"nbytes", t.nbytes}});
          }
          if (!v.tensors.empty()) j["tensors"] = tensors;
          if (v.type == etdump::LoggedValue::Type::kInt) j["value"] = v.int_value;
          if (v.type == etdump::LoggedValue::Type::kBool) j["value"] = v.bool_value;
          if (v.type == etdump::LoggedValue::Type::kFloat || v.type == etdump::LoggedValue::Type::kDouble) j["value"] = v.double_value;
        } else {
          j["allocator_id"] = e.ref;
          j["allocation_size"] = e.start;
        }
        events.push_back(std::move(j));
      }
      blocks.push_back({{"name", block.name}, {"bundled_input_index", block.bundled_input_index},
                        {"allocators", block.allocators}, {"events", std::move(events)}});
    }
    Json j{{"file", f.name()}, {"size_prefixed", f.size_prefixed}, {"version", f.version}};
    put_engine_json(j, inspect::dump_engine(f));
    j["run_data"] = std::move(blocks);
    return j;
  }

  std::string file_;
  bool json_ = false;
  ReportFormat report_format_;
};

}  // namespace

std::unique_ptr<Command> make_etdump_command() { return std::make_unique<EtdumpCommand>(); }

}  // namespace etscope::cli
