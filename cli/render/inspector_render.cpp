#include "render/inspector_render.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "etscope/inspect/event_index.h"
#include "etscope/inspect/logged_tensor.h"
#include "render/format.h"
#include "render/json_output.h"

namespace etscope::cli {
namespace {

using inspect::Event;
using inspect::EventBlock;

std::string unit(const inspect::Inspector& in) { return inspect::to_string(in.options().target); }

bool block_selected(const EventBlock& b, const InspectTableOptions& opt) { return opt.block.empty() || b.name == opt.block; }

// A debug event with no timing (n = 0), such as an intermediate output a delegate logged under
// its debug identifier.
bool untimed(const Event& e) { return !e.perf || e.perf->raw.empty(); }

// Indices of the rows to show for one block: filtered, sorted, cut to --top.
std::vector<size_t> rows_of(const EventBlock& b, const InspectTableOptions& opt) {
  std::vector<size_t> rows;
  for (size_t i = 0; i < b.events.size(); ++i) {
    if (!opt.operator_calls && b.events[i].is_operator_call()) continue;
    if (!opt.debug_events && untimed(b.events[i])) continue;
    rows.push_back(i);
  }
  auto avg = [&](size_t i) { return b.events[i].perf ? b.events[i].perf->avg : -1.0; };
  auto total = [&](size_t i) { return b.events[i].perf ? b.events[i].perf->total : 0.0; };
  switch (opt.sort) {
    case EventSort::kOrder: break;
    case EventSort::kAvg:
      std::stable_sort(rows.begin(), rows.end(), [&](size_t x, size_t y) { return avg(x) > avg(y); });
      break;
    case EventSort::kTotal:
      std::stable_sort(rows.begin(), rows.end(), [&](size_t x, size_t y) { return total(x) > total(y); });
      break;
    case EventSort::kName:
      std::stable_sort(rows.begin(), rows.end(), [&](size_t x, size_t y) { return b.events[x].name < b.events[y].name; });
      break;
  }
  if (opt.top > 0 && rows.size() > opt.top) rows.resize(opt.top);
  return rows;
}

// ExecuTorch's op_types cell: the list when it has fewer than 5 items, else a summary string.
std::string op_types_text(const Event& e) {
  const auto& t = e.op_types;
  if (t.empty()) return "";
  if (t.size() < 5) {
    std::string s;
    for (size_t i = 0; i < t.size(); ++i) s += (i ? ", " : "") + t[i];
    return s;
  }
  return "['" + t[0] + "', '" + t[1] + "' ... '" + t.back() + "'] (" + std::to_string(t.size()) + " total)";
}

std::string fixed(double v, int digits = 4) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// A column-aligned table: headers, then rows of cells; numeric columns right-aligned.
void print_table(std::ostream& out, const std::vector<std::string>& headers, const std::vector<bool>& right,
                 const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(headers.size());
  for (size_t c = 0; c < headers.size(); ++c) width[c] = headers[c].size();
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s = " ";
    for (size_t c = 0; c < cells.size(); ++c) {
      const size_t pad = width[c] - cells[c].size();
      const bool last = c + 1 == cells.size();
      if (right[c]) s += std::string(pad, ' ') + cells[c];
      else s += cells[c] + (last ? "" : std::string(pad, ' '));
      if (!last) s += "  ";
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out << s << "\n";
  };
  line(headers);
  std::vector<std::string> rule;
  for (size_t w : width) rule.push_back(std::string(w, '-'));
  line(rule);
  for (const auto& r : rows) line(r);
}

std::string block_title(const inspect::Inspector& in, size_t bi) {
  const EventBlock& b = in.blocks()[bi];
  // The method is named when the ETRecord has several, or the block is not forward's.
  const bool multi = in.record() != nullptr && in.record()->maps.size() > 1;
  const bool named = !b.method.empty() && (multi || b.method != "forward");
  std::string s = "block " + std::to_string(bi) + " '" + b.name + "'" + (named ? " (method " + b.method + ")" : "") +
                  ": " + count_text(b.runs.size(), "run") + ", " + count_text(b.events.size(), "event");
  if (b.bundled_input_index >= 0) s += ", bundled input " + std::to_string(b.bundled_input_index);
  if (const inspect::RunTime t = in.run_time(bi); t.source != inspect::RunTimeSource::kNone) {
    s += "; run time " + significant_text(t.value) + " " + unit(in) + " (" + inspect::to_string(t.source) + ")";
  }
  return s;
}

Json module_stack_json(const std::vector<etrecord::ModuleFrame>& stack) {
  // ExecuTorch's dict: key -> [path, type], outermost first.
  Json m = Json::object();
  for (const auto& f : stack) m[f.key] = Json::array({f.path, f.type});
  return m;
}

Json perf_json(const Event& e) {
  if (!e.perf) return nullptr;
  const inspect::PerfData& p = *e.perf;
  return Json{{"raw", p.raw}, {"p10", p.p10}, {"p50", p.p50}, {"p90", p.p90}, {"avg", p.avg}, {"min", p.min}, {"max", p.max}, {"total", p.total}};
}

Json value_json(const inspect::Inspector& in, uint32_t vi) {
  const etdump::LoggedValue& v = in.dump().values[vi];
  Json j;
  using T = etdump::LoggedValue::Type;
  switch (v.type) {
    case T::kInt: j["int"] = v.int_value; return j;
    case T::kBool: j["bool"] = v.bool_value; return j;
    case T::kFloat:
    case T::kDouble: j["double"] = v.double_value; return j;
    case T::kNull: j["none"] = true; return j;
    case T::kString: j["string"] = true; return j;
    case T::kTensor:
    case T::kTensorList: break;
  }
  Json tensors = Json::array();
  for (const etdump::LoggedTensor& t : v.tensors) {
    Json tj{{"dtype", scalar_type_name(t.dtype)}, {"shape", t.sizes}, {"offset", t.offset}, {"nbytes", t.nbytes}};
    if (const Blob* buf = in.debug_buffer(); buf != nullptr) {
      const inspect::LoggedTensorStats logged = inspect::logged_tensor_stats(t, *buf, 8);
      if (!logged.in_buffer) {
        tj["stats"] = nullptr;
        tj["problem"] = "outside the debug buffer";
      } else if (const auto& st = logged.stats) {
        tj["stats"] = Json{{"min", st->min}, {"max", st->max}, {"mean", st->mean}, {"std", st->std}, {"nan", st->nan_count},
                           {"inf", st->inf_count}, {"first", st->first_values}};
      }
    }
    tensors.push_back(std::move(tj));
  }
  j[v.type == T::kTensor ? "tensor" : "tensor_list"] = v.type == T::kTensor && !tensors.empty() ? tensors[0] : tensors;
  return j;
}

Json event_json(const inspect::Inspector& in, const Event& e) {
  Json j;
  j["event_name"] = e.name;
  j["instruction_id"] = e.instruction_id;
  j["chain"] = e.chain;
  if (e.delegate_id_int) j["delegate_debug_identifier"] = *e.delegate_id_int;
  else if (e.delegate_id_str) j["delegate_debug_identifier"] = *e.delegate_id_str;
  else j["delegate_debug_identifier"] = nullptr;
  j["is_delegated_op"] = e.is_delegated_op ? Json(*e.is_delegated_op) : Json(nullptr);
  j["delegate_backend_name"] = e.delegate_backend_name ? Json(*e.delegate_backend_name) : Json(nullptr);
  j["debug_handles"] = e.debug_handles ? Json(*e.debug_handles) : Json(nullptr);
  j["num_outputs"] = e.num_outputs;
  j["op_types"] = e.op_types;
  j["perf"] = perf_json(e);
  j["start_time"] = e.start_times;
  Json st = Json::object(), mh = Json::object();
  for (const inspect::NodeLink& l : e.nodes) {
    st[l.node_name] = l.stack_trace;
    mh[l.node_name] = module_stack_json(l.module_stack);
  }
  j["stack_traces"] = st;
  j["module_hierarchy"] = mh;
  Json dd = Json::array();
  for (uint32_t v : e.debug_values) dd.push_back(value_json(in, v));
  j["debug_data"] = dd;
  if (!e.delegate_metadata.empty()) j["delegate_debug_metadata"] = e.delegate_metadata;
  return j;
}

Json module_node_json(const inspect::ModuleNode& n) {
  Json j{{"module", n.path.empty() ? std::string("<root>") : n.path},
         {"type", n.type},
         {"total", n.total},
         {"events", n.events},
         {"share", n.share},
         {"key", n.key}};
  Json c = Json::array();
  for (const auto& ch : n.children) c.push_back(module_node_json(ch));
  j["children"] = c;
  return j;
}

void print_module_node(std::ostream& out, const inspect::ModuleNode& n, int depth, const std::string& u) {
  std::string label = n.path.empty() ? "<root>" : n.path;
  const std::string type = inspect::short_type_name(n.type);
  std::string left = std::string(static_cast<size_t>(depth) * 2, ' ') + label + (type.empty() ? "" : " (" + type + ")");
  char buf[512];
  // Durations and shares with three significant figures, as every other etscope text.
  std::snprintf(buf, sizeof buf, "  %-56s %10s %s %6s%%  %s\n", left.c_str(), significant_text(n.total).c_str(), u.c_str(),
                significant_text(100.0 * n.share).c_str(), count_text(n.events, "event").c_str());
  out << buf;
  for (const auto& c : n.children) print_module_node(out, c, depth + 1, u);
}

}  // namespace

void render_engine_line(const inspect::Inspector& in, std::ostream& out) {
  out << "engine: " << inspect::dump_engine(in.dump()).text() << "\n\n";
}

void render_event_table(const inspect::Inspector& in, const InspectTableOptions& opt, std::ostream& out) {
  const std::string u = " (" + unit(in) + ")";
  bool first = true;
  size_t hidden = 0;
  for (size_t bi = 0; bi < in.blocks().size(); ++bi) {
    const EventBlock& b = in.blocks()[bi];
    if (!block_selected(b, opt)) continue;
    if (!first) out << "\n";
    first = false;
    out << block_title(in, bi) << "\n";
    if (!opt.debug_events) {
      // Untimed debug events bury the timed rows (108 of 283 on an intermediate-level dump).
      hidden += static_cast<size_t>(std::count_if(b.events.begin(), b.events.end(), untimed));
    }
    const inspect::RunTime run = in.run_time(bi);
    std::vector<std::vector<std::string>> rows;
    for (size_t i : rows_of(b, opt)) {
      const Event& e = b.events[i];
      std::vector<std::string> r{std::to_string(i), e.name, std::to_string(e.instruction_id), e.perf ? std::to_string(e.perf->raw.size()) : "0"};
      for (double v : e.perf ? std::vector<double>{e.perf->avg, e.perf->p10, e.perf->p50, e.perf->p90, e.perf->min, e.perf->max, e.perf->total}
                             : std::vector<double>{}) {
        r.push_back(fixed(v));
      }
      if (!e.perf) r.insert(r.end(), 7, "-");
      const std::optional<double> share = inspect::share_of_run(e, run);
      r.push_back(share && !e.is_framework() ? fixed(100.0 * *share, 1) + "%" : "");
      r.push_back(op_types_text(e));
      r.push_back(inspect::innermost_module_text(e));
      r.push_back(e.delegate_backend_name.value_or(""));
      rows.push_back(std::move(r));
    }
    print_table(out, {"#", "event", "instr", "n", "avg" + u, "p10", "p50", "p90", "min", "max", "total", "share", "op_types", "module", "backend"},
                {true, false, true, true, true, true, true, true, true, true, true, true, false, false, false}, rows);
  }
  if (hidden > 0) {
    out << "\n(" << count_text(hidden, "debug event") << " without timings not shown: --debug-events lists them)\n";
  }
}

void render_event_rows(const inspect::Inspector& in, const InspectTableOptions& opt, char sep, std::ostream& out) {
  const std::string u = " (" + unit(in) + ")";
  const std::vector<std::string> headers{"event_block_name", "event_name", "instruction_id", "chain", "samples", "p10" + u, "p50" + u, "p90" + u,
                                         "avg" + u, "min" + u, "max" + u, "total" + u, "op_types", "delegate_debug_identifier",
                                         "is_delegated_op", "delegate_backend_name", "debug_handles", "module", "stack_trace", "raw" + u,
                                         "start_time"};
  for (size_t c = 0; c < headers.size(); ++c) out << (c ? std::string(1, sep) : "") << delimited_cell(headers[c], sep);
  out << "\n";
  InspectTableOptions every = opt;
  every.debug_events = true;  // A data file keeps every event, as ExecuTorch's dataframe does.
  for (const EventBlock& b : in.blocks()) {
    if (!block_selected(b, opt)) continue;
    for (size_t i : rows_of(b, every)) {
      const Event& e = b.events[i];
      std::vector<std::string> r{b.name, e.name, std::to_string(e.instruction_id), std::to_string(e.chain), std::to_string(e.perf ? e.perf->raw.size() : 0)};
      if (e.perf) {
        for (double v : {e.perf->p10, e.perf->p50, e.perf->p90, e.perf->avg, e.perf->min, e.perf->max, e.perf->total}) r.push_back(number_text(v));
      } else {
        r.insert(r.end(), 7, "");
      }
      r.push_back(Json(e.op_types).dump());
      r.push_back(e.delegate_identifier_text());
      r.push_back(e.is_delegated_op ? (*e.is_delegated_op ? "True" : "False") : "");
      r.push_back(e.delegate_backend_name.value_or(""));
      r.push_back(e.debug_handles ? Json(*e.debug_handles).dump() : "");
      r.push_back(inspect::innermost_module_text(e));
      r.push_back(e.nodes.empty() ? "" : e.nodes.front().stack_trace);
      std::string raw, starts;
      if (e.perf) {
        for (size_t k = 0; k < e.perf->raw.size(); ++k) raw += (k ? " " : "") + number_text(e.perf->raw[k]);
      }
      for (size_t k = 0; k < e.start_times.size(); ++k) starts += (k ? " " : "") + std::to_string(e.start_times[k]);
      r.push_back(raw);
      r.push_back(starts);
      for (size_t c = 0; c < r.size(); ++c) out << (c ? std::string(1, sep) : "") << delimited_cell(r[c], sep);
      out << "\n";
    }
  }
}

void render_type_summary(const inspect::Inspector& in, const InspectTableOptions& opt, std::ostream& out) {
  const std::string u = " (" + unit(in) + ")";
  bool first = true;
  for (size_t bi = 0; bi < in.blocks().size(); ++bi) {
    const EventBlock& b = in.blocks()[bi];
    if (!block_selected(b, opt)) continue;
    std::vector<inspect::TypeSummary> types = in.summary_by_type(bi);
    if (types.empty()) continue;
    if (!first) out << "\n";
    first = false;
    out << block_title(in, bi) << "\nsummary by operator type:\n";
    std::vector<std::vector<std::string>> rows;
    size_t n = 0;
    for (const auto& t : types) {
      if (opt.top > 0 && n++ >= opt.top) break;
      rows.push_back({t.type, std::to_string(t.count), fixed(t.avg), fixed(t.total), fixed(100.0 * t.share, 1) + "%",
                      fixed(100.0 * t.cumulative_share, 1) + "%"});
    }
    print_table(out, {"type", "count", "avg" + u, "total" + u, "share", "cdf"}, {false, true, true, true, true, true}, rows);
    for (const inspect::DelegateSummary& d : in.delegate_summaries(bi)) {
      out << "  " << events::kDelegateCall << " instruction " << d.instruction_id << " (" << (d.backend.empty() ? "?" : d.backend) << "): " << fixed(d.call_avg)
          << " " << unit(in) << ", " << d.sub_events.size() << " delegate events " << fixed(d.sub_events_avg) << ", unattributed "
          << fixed(d.unattributed) << "\n";
    }
  }
}

void render_module_tree(const inspect::Inspector& in, const InspectTableOptions& opt, std::ostream& out) {
  if (in.record() == nullptr) {
    out << "module tree: needs an ETRecord (--etrecord)\n";
    return;
  }
  bool first = true;
  for (size_t bi = 0; bi < in.blocks().size(); ++bi) {
    const EventBlock& b = in.blocks()[bi];
    if (!block_selected(b, opt)) continue;
    inspect::ModuleNode root = in.module_tree(bi);
    if (root.children.empty()) continue;
    if (!first) out << "\n";
    first = false;
    out << block_title(in, bi) << "\nmodule tree (average time per run, " << unit(in) << "):\n";
    for (const auto& c : root.children) print_module_node(out, c, 0, unit(in));
  }
  std::vector<std::string> top = in.top_level_modules();
  if (!top.empty()) {
    out << "\nfind_total_for_module (all blocks, " << unit(in) << "):\n";
    for (const std::string& m : top) out << "  " << m << "  " << significant_text(in.find_total_for_module(m)) << "\n";
  }
}

void render_type_rows(const inspect::Inspector& in, const InspectTableOptions& opt, char sep, std::ostream& out) {
  const std::string u = " (" + unit(in) + ")";
  const std::vector<std::string> headers = {"event_block_name", "block", "type", "count", "avg" + u, "total" + u, "share", "cdf"};
  for (size_t c = 0; c < headers.size(); ++c) out << (c ? std::string(1, sep) : "") << delimited_cell(headers[c], sep);
  out << "\n";
  for (size_t bi = 0; bi < in.blocks().size(); ++bi) {
    const EventBlock& b = in.blocks()[bi];
    if (!block_selected(b, opt)) continue;
    size_t n = 0;
    for (const auto& t : in.summary_by_type(bi)) {
      if (opt.top > 0 && n++ >= opt.top) break;
      const std::vector<std::string> row = {b.name, std::to_string(bi), t.type, std::to_string(t.count), number_text(t.avg),
                                            number_text(t.total), number_text(t.share), number_text(t.cumulative_share)};
      for (size_t c = 0; c < row.size(); ++c) out << (c ? std::string(1, sep) : "") << delimited_cell(row[c], sep);
      out << "\n";
    }
  }
}

namespace {

void module_rows(const inspect::ModuleNode& n, const std::string& block_name, size_t bi, const std::string& parent, char sep,
                 std::ostream& out) {
  const std::string path = n.path.empty() ? "<root>" : n.path;
  const std::vector<std::string> row = {block_name, std::to_string(bi), path, parent, n.type, number_text(n.total),
                                        number_text(n.share), std::to_string(n.events)};
  for (size_t c = 0; c < row.size(); ++c) out << (c ? std::string(1, sep) : "") << delimited_cell(row[c], sep);
  out << "\n";
  for (const auto& c : n.children) module_rows(c, block_name, bi, path, sep, out);
}

}  // namespace

void render_module_rows(const inspect::Inspector& in, const InspectTableOptions& opt, char sep, std::ostream& out) {
  const std::string u = " (" + unit(in) + ")";
  const std::vector<std::string> headers = {"event_block_name", "block", "module", "parent", "type", "total" + u, "share", "events"};
  for (size_t c = 0; c < headers.size(); ++c) out << (c ? std::string(1, sep) : "") << delimited_cell(headers[c], sep);
  out << "\n";
  if (in.record() == nullptr) return;
  for (size_t bi = 0; bi < in.blocks().size(); ++bi) {
    const EventBlock& b = in.blocks()[bi];
    if (!block_selected(b, opt)) continue;
    const inspect::ModuleNode root = in.module_tree(bi);
    for (const auto& c : root.children) module_rows(c, b.name, bi, "", sep, out);
  }
}

Json inspector_json(const inspect::Inspector& in, const InspectTableOptions& opt) {
  Json j;
  j["etdump"] = in.dump().name();
  j["etrecord"] = in.record() ? Json(in.record()->path) : Json(nullptr);
  j["debug_buffer"] = in.debug_buffer() ? Json(in.debug_buffer()->name()) : Json(nullptr);
  put_engine_json(j, inspect::dump_engine(in.dump()));
  j["source_time_scale"] = inspect::to_string(in.options().source);
  j["target_time_scale"] = inspect::to_string(in.options().target);
  Json blocks = Json::array();
  for (size_t bi = 0; bi < in.blocks().size(); ++bi) {
    const EventBlock& b = in.blocks()[bi];
    if (!block_selected(b, opt)) continue;
    Json bj;
    bj["name"] = b.name;
    bj["method"] = b.method;
    bj["bundled_input_index"] = b.bundled_input_index;
    bj["runs"] = b.runs;
    const inspect::RunTime run = in.run_time(bi);
    bj["run_time"] = Json{{"value", run.value}, {"source", inspect::to_string(run.source)}};
    Json events = Json::array();
    InspectTableOptions all = opt;
    all.operator_calls = true;
    all.debug_events = true;
    for (size_t i : rows_of(b, all)) events.push_back(event_json(in, b.events[i]));
    bj["events"] = events;
    Json outs = Json::array();
    for (uint32_t v : b.run_outputs) outs.push_back(value_json(in, v));
    bj["run_outputs"] = outs;
    Json types = Json::array();
    for (const auto& t : in.summary_by_type(bi)) {
      types.push_back(Json{{"type", t.type}, {"count", t.count}, {"avg", t.avg}, {"total", t.total}, {"share", t.share}});
    }
    bj["summary_by_type"] = types;
    Json dels = Json::array();
    for (const auto& d : in.delegate_summaries(bi)) {
      dels.push_back(Json{{"instruction_id", d.instruction_id}, {"backend", d.backend}, {"call_avg", d.call_avg},
                          {"sub_events_avg", d.sub_events_avg}, {"unattributed", d.unattributed}, {"sub_events", d.sub_events}});
    }
    bj["delegates"] = dels;
    bj["module_tree"] = in.record() ? module_node_json(in.module_tree(bi)) : Json(nullptr);
    blocks.push_back(std::move(bj));
  }
  j["blocks"] = blocks;
  Json totals = Json::object();
  for (const std::string& m : in.top_level_modules()) totals[m] = in.find_total_for_module(m);
  j["module_totals"] = totals;
  return j;
}

}  // namespace etscope::cli
