#include "etscope/inspect/run_trace.h"

#include "etscope/inspect/event_index.h"
#include "etscope/inspect/engine_identity.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace etscope::inspect {
namespace {

// JSON string literal. Written by hand rather than through nlohmann::json because a trace of a
// million events is streamed, never held as a document.
void put_string(std::ostream& o, const std::string& s) {
  o << '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': o << "\\\""; break;
      case '\\': o << "\\\\"; break;
      case '\n': o << "\\n"; break;
      case '\r': o << "\\r"; break;
      case '\t': o << "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o << buf;
        } else {
          o << static_cast<char>(c);
        }
    }
  }
  o << '"';
}

void put_number(std::ostream& o, double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  o << buf;
}

// A duration in the target unit: enough digits for small values in large units.
void put_number_exact(std::ostream& o, double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  o << buf;
}

}  // namespace

void write_run_trace(const Inspector& inspector, std::ostream& o, const RunTraceOptions& options) {
  const etdump::EtDumpFile& dump = inspector.dump();
  // Raw event -> Inspector event, so each drawn bar carries what the join knows about it.
  const EventIndex index(inspector);
  uint64_t t0 = UINT64_MAX;
  for (const etdump::Event& e : dump.events) {
    // Markers are not events: an overflow marker's start is 0, not a time.
    if (e.kind == etdump::EventKind::kProfile && !dump.is_marker(e)) t0 = std::min(t0, e.start);
  }
  if (t0 == UINT64_MAX) t0 = 0;
  // Cycles have no rate: draw one cycle as one microsecond.
  const TimeScale source = inspector.options().source;
  const double to_us = source == TimeScale::kCycles ? 1.0 : 1e6 / units_per_second(source);
  // Durations in the target unit, as the Inspector's tables show them.
  const TimeScale target = inspector.options().target;
  const double to_target = source == TimeScale::kCycles || target == TimeScale::kCycles
                               ? 1.0
                               : units_per_second(target) / units_per_second(source);
  const std::string duration_key = std::string("duration_") + to_string(target);

  o << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"source\":";
  put_string(o, dump.name());
  o << ",\"producer\":\"etscope trace\",\"time_scale\":";
  put_string(o, to_string(inspector.options().source));
  o << ",\"target_time_scale\":";
  put_string(o, to_string(target));
  o << ",\"tracks\":\"" << (options.per_run_tracks ? "per-run" : "joined") << "\"";
  // Which engine made the timings: null for a dump without etscope's engine marker.
  const EngineIdentity engine = dump_engine(dump);
  o << ",\"engine\":";
  if (engine.known()) put_string(o, engine.name); else o << "null";
  o << ",\"engine_version\":";
  if (engine.known()) put_string(o, engine.version); else o << "null";
  o << "},\"traceEvents\":[\n";
  o << "{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":";
  put_string(o, "ExecuTorch run: " + dump.name() + " (engine " + engine.text() + ")");
  o << "}}";
  std::map<std::string, int> seen_names;  // runs of each block name so far
  std::map<std::string, int> name_tracks;  // joined: block name -> tid
  auto put_track = [&](int tid, const std::string& name) {
    o << ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":" << tid << ",\"name\":\"thread_name\",\"args\":{\"name\":";
    put_string(o, name);
    o << "}},\n{\"ph\":\"M\",\"pid\":1,\"tid\":" << tid << ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" << tid << "}}";
  };
  for (uint32_t r = 0; r < dump.blocks.size(); ++r) {
    const etdump::RunBlock& run = dump.blocks[r];
    const std::string block_name = run.name.empty() ? std::string("run") : run.name;
    const int n = ++seen_names[run.name];
    const std::string run_name = block_name + " #" + std::to_string(n);
    int tid;
    if (options.per_run_tracks) {
      tid = static_cast<int>(r) + 1;
      put_track(tid, run_name);
    } else {
      auto [it, added] = name_tracks.emplace(block_name, static_cast<int>(name_tracks.size()) + 1);
      tid = it->second;
      if (added) put_track(tid, block_name);
      // The run as a parent slice around its events.
      uint64_t lo = UINT64_MAX, hi = 0;
      for (uint32_t i = run.first_event; i < run.first_event + run.event_count; ++i) {
        const etdump::Event& e = dump.events[i];
        if (e.kind != etdump::EventKind::kProfile || dump.is_marker(e)) continue;
        lo = std::min(lo, e.start);
        hi = std::max(hi, e.start + elapsed_ticks_or_zero(e.start, e.end));
      }
      if (lo != UINT64_MAX) {
        o << ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":" << tid << ",\"name\":";
        put_string(o, run_name);
        o << ",\"cat\":\"run\",\"ts\":";
        put_number(o, static_cast<double>(lo - std::min(lo, t0)) * to_us);
        o << ",\"dur\":";
        put_number(o, static_cast<double>(hi - lo) * to_us);
        o << ",\"args\":{\"block\":" << r << "}}";
      }
    }
    for (uint32_t i = run.first_event; i < run.first_event + run.event_count; ++i) {
      const etdump::Event& e = dump.events[i];
      if (e.kind != etdump::EventKind::kProfile || dump.is_marker(e)) continue;
      const Event* ev = index.find(i);
      std::string name = dump.name_of(e);
      std::string delegate_id;
      if (e.delegate) {
        const etdump::DelegateRef& d = dump.delegate_refs[e.ref];
        delegate_id = d.id_int != -1 ? std::to_string(d.id_int) : d.id_str;
        if (name.empty()) name = delegate_id;
      }
      const uint64_t dur = elapsed_ticks_or_zero(e.start, e.end);
      o << ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":" << tid << ",\"name\":";
      put_string(o, name);
      o << ",\"cat\":\"" << events::category_name(events::classify(name, e.delegate)) << "\",\"ts\":";
      put_number(o, static_cast<double>(e.start - std::min(e.start, t0)) * to_us);
      o << ",\"dur\":";
      put_number(o, static_cast<double>(dur) * to_us);
      o << ",\"args\":{\"instruction\":" << e.instruction << ",\"chain\":" << e.chain << ",\"" << duration_key << "\":";
      put_number_exact(o, static_cast<double>(dur) * to_target);
      if (!delegate_id.empty()) {
        o << ",\"delegate_debug_identifier\":";
        put_string(o, delegate_id);
      }
      if (ev != nullptr) {
        if (ev->delegate_backend_name) {
          o << ",\"delegate_backend\":";
          put_string(o, *ev->delegate_backend_name);
        }
        if (ev->debug_handles) {
          o << ",\"debug_handles\":[";
          for (size_t k = 0; k < ev->debug_handles->size(); ++k) o << (k ? "," : "") << (*ev->debug_handles)[k];
          o << "]";
        }
        if (!ev->op_types.empty()) {
          o << ",\"op_types\":[";
          for (size_t k = 0; k < ev->op_types.size(); ++k) {
            if (k) o << ",";
            put_string(o, ev->op_types[k]);
          }
          o << "]";
        }
        if (!ev->nodes.empty()) {
          const NodeLink& node = ev->nodes.front();
          o << ",\"node\":";
          put_string(o, node.node_name);
          o << ",\"module_hierarchy\":[";
          for (size_t k = 0; k < node.module_stack.size(); ++k) {
            if (k) o << ",";
            const etrecord::ModuleFrame& f = node.module_stack[k];
            put_string(o, (f.path.empty() ? std::string("<root>") : f.path) + " (" + f.type + ")");
          }
          o << "],\"stack_trace\":";
          put_string(o, node.stack_trace);
        }
      }
      o << "}}";
    }
  }
  o << "\n]}\n";
}

}  // namespace etscope::inspect
