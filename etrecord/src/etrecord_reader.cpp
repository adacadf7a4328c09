// EtRecordReader: sorts the archive's members (formats.md §6.2) and hands each to its parser.
// Policy: a member that does not parse is listed in EtRecord::undecoded; only a bad zip, a
// missing ETRECORD_V0 and breached limits (kOutOfResources) fail the read.
#include <string_view>

#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/etrecord/graph_json.h"
#include "etscope/core/json.h"
#include "torch_save.h"
#include "zip_archive.h"

namespace etscope::etrecord {
namespace {

constexpr std::string_view kIdentifier = "ETRECORD_V0";
constexpr std::string_view kEdgeProgram = "edge_dialect_exported_program";
constexpr std::string_view kExportedProgram = "exported_program";
constexpr std::string_view kSiblingSuffixes[] = {"_state_dict", "_constants", "_example_inputs"};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool is_sibling(std::string_view name) {
  for (std::string_view s : kSiblingSuffixes) {
    if (ends_with(name, s)) return true;
  }
  return false;
}

class Reader {
 public:
  Reader(const std::string& name, const ReadLimits& limits) : name_(name), limits_(limits) {}

  Result<EtRecord> run(std::span<const uint8_t> bytes) {
    auto opened = ZipArchive::open(bytes, name_, limits_, &budget_);
    if (!opened.ok()) {
      const Error& e = opened.error();
      if (e.code() == ErrorCode::kWrongKind) {
        std::string why = bytes.empty() ? "empty file" : "not a zip file";
        return Error(ErrorCode::kWrongKind, name_ + ": not an ETRecord archive (" + why + ")");
      }
      return e;
    }
    zip_ = std::move(*opened);
    record_.path = name_;
    for (const ZipEntry& e : zip_->entries()) record_.entries.push_back(e.name);
    if (zip_->find(std::string(kIdentifier)) < 0) {
      return Error(ErrorCode::kWrongKind, name_ + ": not an ETRecord archive (no ETRECORD_V0 entry)");
    }
    for (size_t i = 0; i < zip_->entries().size(); ++i) ETSCOPE_TRY(read_member(i));
    // Every method with a program gets maps, empty when the archive has none (2023 layout).
    for (const auto& [method, g] : record_.edge_programs) record_.maps[method];
    return std::move(record_);
  }

 private:
  std::string where(const std::string& member_name) const { return name_ + ": entry '" + member_name + "'"; }

  // Keeps a member-level failure as an "undecoded" note unless it is a limit breach or a broken
  // zip, which fail the whole read.
  Status soft(const Error& e) {
    if (e.code() == ErrorCode::kOutOfResources || e.code() == ErrorCode::kInternal) return e;
    std::string msg = e.message();
    const std::string prefix = name_ + ": entry '";
    if (msg.compare(0, prefix.size(), prefix) == 0) {
      msg = msg.substr(prefix.size());
      size_t close = msg.find('\'');
      if (close != std::string::npos) msg.erase(close, 1);
    }
    record_.undecoded.push_back(std::move(msg));
    return ok_status();
  }
  void note(const std::string& member_name, const std::string& reason) {
    record_.undecoded.push_back(member_name + ": " + reason);
  }

  Status read_member(size_t index) {
    const std::string name = zip_->entries()[index].name;
    if (name == kIdentifier || (!name.empty() && name.back() == '/')) return ok_status();
    if (name == "debug_handle_map" || name == "delegate_map" || name == "instruction_id_to_num_outs_map") {
      ETSCOPE_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, zip_->read(index));
      auto j = parse_json(bytes, limits_.max_json_depth, where(name));
      if (!j.ok()) return soft(j.error());
      read_maps(name, *j);
      if (name == "delegate_map") record_delegate_key_order(bytes);
      return ok_status();
    }
    if (name == "export_graph_id") {
      ETSCOPE_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, zip_->read(index));
      auto j = parse_json(bytes, limits_.max_json_depth, where(name));
      if (!j.ok()) return soft(j.error());
      if (auto id = as_int64(*j)) {
        record_.export_graph_id = *id;
      } else {
        note(name, "not a JSON integer");
      }
      return ok_status();
    }
    if (name == "reference_outputs" || name == "representative_inputs") return tensors_member(index, name);
    if (name == "program_buffer") {
      note(name, "raw .pte bytes of a pre-release ETRecord, not decoded (extract and read with etscope pte)");
      return ok_status();
    }
    if (is_sibling(name)) return sibling(index, name);
    return program(index, name);
  }

  Status program(size_t index, const std::string& name) {
    ETSCOPE_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, zip_->read(index));
    if (bytes.empty() || (bytes[0] != '{' && bytes[0] != ' ' && bytes[0] != '\n')) {
      note(name, bytes.empty() ? "empty member" : "not JSON, not decoded");
      return ok_status();
    }
    auto j = parse_json(bytes, limits_.max_json_depth, where(name));
    if (!j.ok()) return soft(j.error());
    std::vector<std::string> notes;
    auto g = parse_exported_program(*j, name, where(name), limits_, 0, &notes);
    for (const std::string& n : notes) ETSCOPE_TRY(soft(Error(ErrorCode::kCorrupt, n)));
    if (!g.ok()) return soft(g.error());
    const std::string edge_prefix = std::string(kEdgeProgram) + "/";
    if (name == kEdgeProgram) {
      record_.edge_programs["forward"] = std::move(*g);
    } else if (name.compare(0, edge_prefix.size(), edge_prefix) == 0) {
      record_.edge_programs[name.substr(edge_prefix.size())] = std::move(*g);
    } else if (name == kExportedProgram) {
      record_.exported_program = std::move(*g);
    } else {
      record_.graph_map[name] = std::move(*g);
    }
    return ok_status();
  }

  Status sibling(size_t index, const std::string& name) {
    if (zip_->entries()[index].size == 0) return ok_status();  // `_example_inputs` of a program without any
    ETSCOPE_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, zip_->read(index));
    auto v = read_torch_save(bytes, where(name), limits_, &budget_);
    if (!v.ok()) return soft(v.error());
    std::vector<NamedTensor> tensors;
    collect_tensors(*v, "", &tensors);
    record_.saved_tensors[name] = std::move(tensors);
    return ok_status();
  }

  Status tensors_member(size_t index, const std::string& name) {
    ETSCOPE_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, zip_->read(index));
    auto v = read_torch_save(bytes, where(name), limits_, &budget_);
    if (!v.ok()) return soft(v.error());
    using Kind = SavedValue::Kind;
    size_t skipped = 0;
    // One test case: a sequence of values; tensors are kept, anything else counted.
    auto case_of = [&](const SavedValue& c) {
      std::vector<TensorValue> out;
      if (c.kind == Kind::kTensor) {
        out.push_back(c.tensor);
        return out;
      }
      for (const SavedValue& x : c.items) {
        if (x.kind == Kind::kTensor) {
          out.push_back(x.tensor);
        } else {
          ++skipped;
        }
      }
      return out;
    };
    auto cases_of = [&](const SavedValue& list) {
      std::vector<std::vector<TensorValue>> cases;
      for (const SavedValue& c : list.items) cases.push_back(case_of(c));
      return cases;
    };
    if (name == "reference_outputs") {
      // {method: [outputs of case 0, ...]}; a bare list means "forward".
      if (v->kind == Kind::kDict) {
        for (const auto& [method, cases] : v->entries) {
          if (cases.kind == Kind::kSequence) {
            record_.reference_outputs[method] = cases_of(cases);
          } else {
            note(name, "method '" + method + "' holds no list of test cases");
          }
        }
      } else if (v->kind == Kind::kSequence) {
        record_.reference_outputs["forward"] = cases_of(*v);
      } else {
        note(name, "unexpected top-level value");
      }
    } else {
      // The inputs of one `forward` test case, or (if a user saved several) a list of cases.
      if (v->kind != Kind::kSequence) {
        note(name, "unexpected top-level value");
      } else {
        bool nested = !v->items.empty() && v->items.front().kind == Kind::kSequence;
        if (nested) {
          record_.representative_inputs["forward"] = cases_of(*v);
        } else {
          record_.representative_inputs["forward"] = {case_of(*v)};
        }
      }
    }
    if (skipped > 0) note(name, std::to_string(skipped) + " non-tensor values not decoded");
    return ok_status();
  }

  // ---- debug maps (§6.5) --------------------------------------------------------------------

  static bool handles_of(const Json& v, std::vector<int64_t>* out) {
    out->clear();
    if (auto i = as_int64(v)) {
      out->push_back(*i);
      return true;
    }
    if (!v.is_array()) return false;
    for (const Json& x : v) {
      auto i = as_int64(x);
      if (!i) return false;
      out->push_back(*i);
    }
    return true;
  }

  // nlohmann::json sorts object keys; the Inspector's substring fallback walks a delegate map in
  // the JSON's order, so read that order once more with an order-keeping parse (the depth limit
  // was already enforced on these bytes).
  void record_delegate_key_order(const std::vector<uint8_t>& bytes) {
    try {
      const nlohmann::ordered_json oj = nlohmann::ordered_json::parse(bytes.begin(), bytes.end());
      if (!oj.is_object()) return;
      for (const auto& method : oj.items()) {
        auto m = record_.maps.find(method.key());
        if (m == record_.maps.end() || !method.value().is_object()) continue;
        for (const auto& instr : method.value().items()) {
          auto id = parse_int(instr.key());
          if (!id) continue;
          auto d = m->second.delegate_map.find(*id);
          const nlohmann::ordered_json& entry = instr.value();
          if (d == m->second.delegate_map.end() || !entry.is_object()) continue;
          auto dm = entry.find("delegate_map");
          if (dm == entry.end() || !dm->is_object()) continue;
          for (const auto& key : dm->items()) {
            if (d->second.debug_map.count(key.key()) != 0) d->second.key_order.push_back(key.key());
          }
        }
      }
    } catch (const nlohmann::ordered_json::exception&) {
      // Already reported by the first parse; map order stays.
    }
  }

  void read_maps(const std::string& name, const Json& j) {
    if (!j.is_object()) {
      note(name, "not a JSON object");
      return;
    }
    size_t bad = 0;
    for (auto m = j.begin(); m != j.end(); ++m) {
      if (!m.value().is_object()) {
        ++bad;
        continue;
      }
      MethodMaps& maps = record_.maps[m.key()];
      for (auto e = m.value().begin(); e != m.value().end(); ++e) {
        auto instr = parse_int(e.key());
        if (!instr) {
          ++bad;
          continue;
        }
        const Json& v = e.value();
        if (name == "debug_handle_map") {
          std::vector<int64_t> handles;
          if (handles_of(v, &handles)) {
            maps.debug_handle_map[*instr] = std::move(handles);
          } else {
            ++bad;
          }
        } else if (name == "instruction_id_to_num_outs_map") {
          if (auto n = as_int64(v)) {
            maps.instruction_id_to_num_outs[*instr] = *n;
          } else {
            ++bad;
          }
        } else {
          DelegateEntry entry;
          entry.backend = string_member(v, "name");
          if (const Json* dm = member(v, "delegate_map"); dm != nullptr && dm->is_object()) {
            for (auto d = dm->begin(); d != dm->end(); ++d) {
              std::vector<int64_t> handles;
              if (handles_of(d.value(), &handles)) {
                entry.debug_map[d.key()] = std::move(handles);
              } else {
                ++bad;
              }
            }
          }
          if (!v.is_object()) ++bad;
          maps.delegate_map[*instr] = std::move(entry);
        }
      }
    }
    if (bad > 0) note(name, std::to_string(bad) + " entries not understood");
  }

  std::string name_;
  ReadLimits limits_;
  ReadBudget budget_;
  std::unique_ptr<ZipArchive> zip_;
  EtRecord record_;
};

}  // namespace

Result<EtRecord> EtRecordReader::open(const std::string& path, const ReadLimits& limits) {
  ETSCOPE_ASSIGN_OR_RETURN(std::shared_ptr<const Blob> blob, Blob::open_file(path));
  return read(std::move(blob), limits);
}

Result<EtRecord> EtRecordReader::read(std::shared_ptr<const Blob> blob, const ReadLimits& limits) {
  if (blob == nullptr) return Error(ErrorCode::kInvalidArgument, "etrecord: no input");
  Reader reader(blob->name(), limits);
  return reader.run(blob->bytes());
}

}  // namespace etscope::etrecord
