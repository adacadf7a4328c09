// Inspector: ExecuTorch's Python Inspector semantics over etscope's ETDump and ETRecord readers.
//
// Sections:
//   [1] time scales and statistics
//   [2] signatures: the keys ExecuTorch groups events and runs by
//   [3] building event blocks from run blocks
//   [4] linking events to the ETRecord (debug handles, graph nodes)
// The aggregates (module totals, per-type summary, module tree, delegate summaries, run time and
// shares) are in inspector_aggregates.cpp.
//
// Every quirk reproduced here is ExecuTorch's (../shared/spec/semantics.md §3); the comments say
// which, so that nobody "fixes" one and loses agreement with the numbers users already trust.
#include "etscope/inspect/inspector.h"

#include "etscope/core/event_tracer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "etscope/core/event_names.h"
#include "etscope/core/stats.h"
#include "etscope/formats/xnnpack_payload.h"
#include "etscope/inspect/consistency.h"
#include "record_match.h"

namespace etscope::inspect {

// ---------------------------------------------------------------------------------------------
// [1] time scales and statistics
// ---------------------------------------------------------------------------------------------

const char* to_string(TimeScale scale) {
  switch (scale) {
    case TimeScale::kNs: return "ns";
    case TimeScale::kUs: return "us";
    case TimeScale::kMs: return "ms";
    case TimeScale::kS: return "s";
    case TimeScale::kCycles: return "cycles";
  }
  return "?";
}

Result<TimeScale> parse_time_scale(std::string_view text) {
  for (TimeScale s : {TimeScale::kNs, TimeScale::kUs, TimeScale::kMs, TimeScale::kS, TimeScale::kCycles}) {
    if (text == to_string(s)) return s;
  }
  return Error(ErrorCode::kInvalidArgument, "unknown time scale '" + std::string(text) + "' (expected ns, us, ms, s or cycles)");
}

double units_per_second(TimeScale s) {
  switch (s) {
    case TimeScale::kNs: return 1e9;
    case TimeScale::kUs: return 1e6;
    case TimeScale::kMs: return 1e3;
    case TimeScale::kS: return 1.0;
    case TimeScale::kCycles: return 1.0;
  }
  return 1.0;
}

namespace {

constexpr uint64_t kMaxU32 = 0xFFFFFFFFull;

}  // namespace

Result<uint64_t> elapsed_ticks(uint64_t start, uint64_t end) {
  if (start <= end) return end - start;
  // ExecuTorch assumes a wrapped 32-bit clock and computes (2^32 - 1 - start) + end, one tick
  // short of modular arithmetic; we keep its number.
  if (start > kMaxU32 || end > kMaxU32) {
    return make_error(ErrorCode::kCorrupt, "event ends (%llu) before it starts (%llu) and the timestamps are not 32-bit",
                      static_cast<unsigned long long>(end), static_cast<unsigned long long>(start));
  }
  return (kMaxU32 - start) + end;
}

uint64_t elapsed_ticks_or_zero(uint64_t start, uint64_t end) {
  const Result<uint64_t> ticks = elapsed_ticks(start, end);
  return ticks.ok() ? *ticks : 0;
}

namespace {

// numpy.mean's summation: blocks of eight partial sums, split in halves above 128 values, so
// that averages agree with ExecuTorch's to the last bit.
double pairwise_sum(const double* a, size_t n) {
  if (n < 8) {
    double s = 0.0;
    for (size_t i = 0; i < n; ++i) s += a[i];
    return s;
  }
  if (n <= 128) {
    double r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    size_t i = 8;
    for (; i < n - (n % 8); i += 8) {
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    }
    double s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) s += a[i];
    return s;
  }
  size_t half = n / 2;
  half -= half % 8;
  return pairwise_sum(a, half) + pairwise_sum(a + half, n - half);
}

PerfData make_perf(std::vector<double> raw) {
  PerfData p;
  p.raw = std::move(raw);
  std::vector<double> sorted = p.raw;
  std::sort(sorted.begin(), sorted.end());
  p.p10 = percentile_sorted(sorted, 10);
  p.p50 = percentile_sorted(sorted, 50);
  p.p90 = percentile_sorted(sorted, 90);
  p.avg = pairwise_sum(p.raw.data(), p.raw.size()) / static_cast<double>(p.raw.size());
  p.min = sorted.front();
  p.max = sorted.back();
  for (double v : p.raw) p.total += v;
  return p;
}

// ---------------------------------------------------------------------------------------------
// [2] signatures
// ---------------------------------------------------------------------------------------------

constexpr int64_t kNone = INT64_MIN;     // Python's None in an optional int field.
constexpr uint32_t kNoStr = UINT32_MAX;  // None in an optional string field (interned ids).

// InstructionEventSignature: (instruction_id, chain_index, delegate int, delegate str), raw.
struct GroupKey {
  int32_t instruction;
  int32_t chain;
  int64_t delegate_int;
  uint32_t delegate_str;
  bool operator==(const GroupKey&) const = default;
};
struct GroupKeyHash {
  size_t operator()(const GroupKey& k) const {
    uint64_t h = static_cast<uint32_t>(k.instruction) * 0x9E3779B97F4A7C15ull;
    h ^= (static_cast<uint64_t>(static_cast<uint32_t>(k.chain)) + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2));
    h ^= (static_cast<uint64_t>(k.delegate_int) + 0x85EBCA77C2B2AE63ull + (h << 6) + (h >> 2));
    h ^= (static_cast<uint64_t>(k.delegate_str) + 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2));
    return static_cast<size_t>(h);
  }
};

// Profile/Debug event signature: (name, instruction or None, delegate int or None, str or None).
struct SubSignature {
  bool present = false;
  uint32_t name = kNoStr;  // Interned; kNoStr = "".
  int64_t instruction = kNone;
  int64_t delegate_int = kNone;
  uint32_t delegate_str = kNoStr;
  bool operator==(const SubSignature&) const = default;
};

struct EventSignature {
  int32_t instruction = 0;
  SubSignature profile;
  SubSignature debug;
  bool operator==(const EventSignature&) const = default;
};

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h;
}

uint64_t hash_sub(uint64_t h, const SubSignature& s) {
  h = mix(h, s.present);
  h = mix(h, s.name);
  h = mix(h, static_cast<uint64_t>(s.instruction));
  h = mix(h, static_cast<uint64_t>(s.delegate_int));
  return mix(h, s.delegate_str);
}

struct EventSignatureHash {
  size_t operator()(const EventSignature& e) const {
    return static_cast<size_t>(hash_sub(hash_sub(mix(0, static_cast<uint32_t>(e.instruction)), e.profile), e.debug));
  }
};

// One run's contribution to one event: its profile event (if any) and debug events.
struct Instance {
  uint32_t profile = UINT32_MAX;  // Raw event index.
  uint32_t debug_begin = 0;       // Into Builder::debug_lists.
  uint32_t debug_count = 0;
};

// What etscope's overflow markers say a run (or a group of runs) lost.
struct Drops {
  uint64_t values = 0, events = 0, executions = 0;
  bool uncounted = false;
  void add(const std::string& marker, uint64_t count) {
    uncounted |= count == 0;  // dumps written before etscope counted
    if (marker == events::kMarkerDebugOverflow) values += count;
    else if (marker == events::kMarkerEventOverflow) events += count;
    else executions += count;
  }
  void merge(const Drops& o) {
    values += o.values, events += o.events, executions += o.executions;
    uncounted |= o.uncounted;
  }
};

struct RunGroup {
  Drops drops;
  std::string name;
  int32_t bundled_input_index = -1;
  std::vector<EventSignature> signatures;  // The run signature's events, in order.
  uint64_t hash = 0;
  std::vector<std::vector<Instance>> instances;  // Per signature, per run.
  std::vector<uint32_t> runs;
  std::vector<uint32_t> outputs;
  std::vector<uint32_t> inputs;
};

// Interns strings (names and delegate string ids) into one id space for cheap comparisons.
class Interner {
 public:
  uint32_t id(const std::string& s) {
    if (s.empty()) return kNoStr;
    auto [it, inserted] = ids_.emplace(s, static_cast<uint32_t>(strings_.size()));
    if (inserted) strings_.push_back(s);
    return it->second;
  }
  const std::string& str(uint32_t id) const {
    static const std::string kEmpty;
    return id == kNoStr ? kEmpty : strings_[id];
  }

 private:
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<std::string> strings_;
};

std::string metadata_text(const etdump::EtDumpFile& dump, const FileRange& r) {
  if (r.size == 0 || r.offset + r.size > dump.blob->size()) return {};
  return std::string(reinterpret_cast<const char*>(dump.blob->data() + r.offset), r.size);
}

}  // namespace

events::EventClass Event::kind() const { return events::classify(name, is_delegated_op.value_or(false)); }
bool Event::is_operator_call() const { return events::is_operator_call_name(name); }
bool Event::is_framework() const { return events::is_framework_name(name); }

std::string Event::delegate_identifier_text() const {
  if (delegate_id_int) return std::to_string(*delegate_id_int);
  if (delegate_id_str) return *delegate_id_str;
  return {};
}

// ---------------------------------------------------------------------------------------------
// [3] building event blocks
// ---------------------------------------------------------------------------------------------

namespace {

struct Builder {
  const etdump::EtDumpFile& dump;
  Interner strings;
  std::vector<uint32_t> debug_lists;  // Raw indices of debug events, referenced by Instances.

  // Name/delegate fields of a raw event as ids: names are the reader's own (already interned)
  // indices into dump.names, delegate string ids go through `strings`.
  void profile_ids(const etdump::Event& e, uint32_t* name, int64_t* dint, uint32_t* dstr) {
    *dint = -1;
    *dstr = kNoStr;
    uint32_t n = e.ref;
    if (e.delegate) {
      const etdump::DelegateRef& d = dump.delegate_refs[e.ref];
      *dint = d.id_int;
      *dstr = strings.id(d.id_str);
      n = d.name;
    }
    // Python's signature reads `name or ""`: no name and an empty name are the same.
    *name = n < dump.names.size() && !dump.names[n].empty() ? n : kNoStr;
  }
  const std::string& name_str(uint32_t id) const {
    static const std::string kEmpty;
    return id == kNoStr ? kEmpty : dump.names[id];
  }
};

SubSignature sub_signature(uint32_t name, int32_t instruction, int64_t dint, uint32_t dstr) {
  SubSignature s;
  s.present = true;
  s.name = name;
  s.instruction = instruction == -1 ? kNone : instruction;
  s.delegate_int = dint == -1 ? kNone : dint;
  s.delegate_str = dstr;
  return s;
}

// Fills name / delegate identifier / is_delegated_op from one signature, as ExecuTorch's
// _populate_event_signature_fields does: the debug signature, applied second, overwrites.
void apply_signature(const SubSignature& s, const Builder& b, Event* ev) {
  const Interner& strings = b.strings;
  if (!s.present) return;
  ev->delegate_id_int.reset();
  ev->delegate_id_str.reset();
  if (s.delegate_int != kNone) {
    ev->delegate_id_int = s.delegate_int;
  } else if (s.delegate_str != kNoStr) {
    ev->delegate_id_str = strings.str(s.delegate_str);
  }
  const bool delegated = ev->delegate_id_int || ev->delegate_id_str;
  const std::string name = delegated ? ev->delegate_identifier_text() : b.name_str(s.name);
  if (!name.empty()) ev->name = name;
  ev->is_delegated_op = delegated;
}

}  // namespace

Result<Inspector> Inspector::build(std::shared_ptr<const etdump::EtDumpFile> dump, std::shared_ptr<const etrecord::EtRecord> record,
                                   std::shared_ptr<const Blob> debug_buffer, const InspectorOptions& options) {
  if ((options.source == TimeScale::kCycles) != (options.target == TimeScale::kCycles)) {
    return Error(ErrorCode::kInvalidArgument, "time scales: cycles can only be converted to cycles (source and target must both be cycles or both be times)");
  }
  if (!dump) return Error(ErrorCode::kInvalidArgument, "inspector: no ETDump");
  Inspector out;
  out.dump_ = dump;
  out.record_ = std::move(record);
  out.debug_buffer_ = std::move(debug_buffer);
  out.options_ = options;
  const etdump::EtDumpFile& file = *dump;
  const std::string& fname = file.name();
  const double factor = units_per_second(options.source) / units_per_second(options.target);

  Builder b{file, {}, {}};
  std::vector<RunGroup> groups;
  std::unordered_multimap<uint64_t, size_t> group_by_hash;

  // Scratch reused across runs.
  struct Group {
    GroupKey key;
    std::vector<uint32_t> profiles;
    std::vector<uint32_t> debugs;
  };
  std::vector<Group> run_groups;
  std::unordered_map<GroupKey, uint32_t, GroupKeyHash> group_index;
  std::vector<EventSignature> sigs;
  std::vector<Instance> sig_instances;
  std::unordered_map<EventSignature, uint32_t, EventSignatureHash> sig_index;

  uint32_t skipped = 0;
  for (uint32_t r = 0; r < file.blocks.size(); ++r) {
    const etdump::RunBlock& run = file.blocks[r];
    if (run.event_count == 0) continue;
    // Warm-up executions (etscope records them as "Warmup" blocks) are left out, or counted as
    // ordinary executions when asked; --skip-runs drops the first executions of dumps that do
    // not mark warm-up (ExecuTorch's runtime).
    std::string run_name = run.name;
    if (run_name == events::kBlockWarmup) {
      if (!options.include_warmup) continue;
      run_name = events::kBlockExecute;
    }
    if (run_name == events::kBlockExecute && skipped < options.skip_runs) {
      ++skipped;
      continue;
    }
    // InstructionEvents: group by the raw key, in order of first appearance.
    run_groups.clear();
    group_index.clear();
    std::vector<uint32_t> outputs, inputs;
    Drops drops;
    for (uint32_t i = run.first_event; i < run.first_event + run.event_count; ++i) {
      const etdump::Event& e = file.events[i];
      // etscope's markers are not events: the overflow markers say what this run lost, the
      // engine marker which engine ran it (dump_engine reads it).
      if (file.is_marker(e)) {
        if (events::is_overflow_marker_name(file.names[e.ref])) drops.add(file.names[e.ref], e.end);
        continue;
      }
      if (e.kind == etdump::EventKind::kDebug && e.chain == -1 && e.instruction == kProgramInputInstruction &&
          !file.values[e.ref].output) {
        inputs.push_back(e.ref);  // The program's inputs, as etscope's runtime logs them.
        continue;
      }
      GroupKey key{e.instruction, e.chain, -1, kNoStr};
      if (e.kind == etdump::EventKind::kProfile) {
        uint32_t name;
        b.profile_ids(e, &name, &key.delegate_int, &key.delegate_str);
      } else if (e.kind == etdump::EventKind::kDebug) {
        const etdump::LoggedValue& v = file.values[e.ref];
        key.delegate_int = v.delegate_id_int;
        key.delegate_str = b.strings.id(v.delegate_id_str);
      } else {
        continue;  // Allocation events: ExecuTorch's Inspector raises; we leave them out.
      }
      auto [it, inserted] = group_index.emplace(key, static_cast<uint32_t>(run_groups.size()));
      if (inserted) run_groups.push_back(Group{key, {}, {}});
      Group& g = run_groups[it->second];
      if (e.kind == etdump::EventKind::kProfile) {
        g.profiles.push_back(i);
      } else if (file.values[e.ref].output) {
        outputs.push_back(e.ref);  // Run outputs are not part of any event.
      } else {
        g.debugs.push_back(i);
      }
    }
    // EventSignatures; a repeated signature keeps its first position and its last instance.
    sigs.clear();
    sig_instances.clear();
    sig_index.clear();
    for (const Group& g : run_groups) {
      if (g.profiles.empty() && g.debugs.empty()) continue;
      SubSignature debug_sig;
      Instance inst;
      if (!g.debugs.empty()) {
        const etdump::LoggedValue& v = file.values[file.events[g.debugs.front()].ref];
        // ETDumpGen writes no names on debug events, and etscope's reader keeps none: "".
        debug_sig = sub_signature(kNoStr, g.key.instruction, v.delegate_id_int, b.strings.id(v.delegate_id_str));
        inst.debug_begin = static_cast<uint32_t>(b.debug_lists.size());
        inst.debug_count = static_cast<uint32_t>(g.debugs.size());
        b.debug_lists.insert(b.debug_lists.end(), g.debugs.begin(), g.debugs.end());
      }
      auto put = [&](const EventSignature& s, const Instance& in) {
        auto [it, inserted] = sig_index.emplace(s, static_cast<uint32_t>(sigs.size()));
        if (inserted) {
          sigs.push_back(s);
          sig_instances.push_back(in);
        } else {
          sig_instances[it->second] = in;
        }
      };
      if (g.profiles.empty()) {
        put(EventSignature{g.key.instruction, {}, debug_sig}, inst);
        continue;
      }
      for (uint32_t p : g.profiles) {
        uint32_t name;
        int64_t dint;
        uint32_t dstr;
        b.profile_ids(file.events[p], &name, &dint, &dstr);
        Instance in = inst;
        in.profile = p;
        put(EventSignature{g.key.instruction, sub_signature(name, file.events[p].instruction, dint, dstr), debug_sig}, in);
      }
    }
    // RunSignature: (name, signatures, bundled_input_index); equal runs share one block.
    uint64_t h = mix(std::hash<std::string>{}(run_name), static_cast<uint32_t>(run.bundled_input_index));
    for (const EventSignature& s : sigs) h = mix(h, EventSignatureHash{}(s));
    size_t gi = groups.size();
    for (auto [lo, hi] = group_by_hash.equal_range(h); lo != hi; ++lo) {
      const RunGroup& cand = groups[lo->second];
      if (cand.name == run_name && cand.bundled_input_index == run.bundled_input_index && cand.signatures == sigs) {
        gi = lo->second;
        break;
      }
    }
    if (gi == groups.size()) {
      RunGroup g;
      g.name = run_name;
      g.bundled_input_index = run.bundled_input_index;
      g.signatures = sigs;
      g.hash = h;
      g.instances.resize(sigs.size());
      g.outputs = outputs;
      g.inputs = inputs;
      groups.push_back(std::move(g));
      group_by_hash.emplace(h, gi);
    }
    RunGroup& g = groups[gi];
    g.runs.push_back(r);
    g.drops.merge(drops);
    for (size_t s = 0; s < sigs.size(); ++s) g.instances[s].push_back(sig_instances[s]);
  }

  // Events from each group's signatures and per-run instances.
  for (RunGroup& g : groups) {
    EventBlock block;
    block.name = g.name;
    block.bundled_input_index = g.bundled_input_index;
    block.runs = std::move(g.runs);
    block.run_outputs = std::move(g.outputs);
    block.run_inputs = std::move(g.inputs);
    block.values_dropped = g.drops.values;
    block.events_dropped = g.drops.events;
    block.executions_dropped = g.drops.executions;
    block.drops_uncounted = g.drops.uncounted;
    block.events.reserve(g.signatures.size());
    for (size_t s = 0; s < g.signatures.size(); ++s) {
      const EventSignature& sig = g.signatures[s];
      Event ev;
      ev.instruction_id = sig.instruction;
      apply_signature(sig.profile, b, &ev);
      if (ev.name == events::kDelegateInit) ev.instruction_id = events::delegate_init_instruction(ev.instruction_id);
      std::vector<double> samples;
      const size_t n_runs = g.instances[s].size();
      samples.reserve(n_runs);
      ev.start_times.reserve(n_runs);
      ev.raw_events.reserve(n_runs);
      bool any_metadata = false;
      for (const Instance& in : g.instances[s]) {
        if (in.profile == UINT32_MAX) continue;
        const etdump::Event& pe = file.events[in.profile];
        double sample;
        if (ev.is_delegated_op.value_or(false)) {
          // Delegate timestamps go through the default converter t / factor first, then the
          // elapsed-time rule is applied to the converted (float) values.
          const double s0 = static_cast<double>(pe.start) / factor, s1 = static_cast<double>(pe.end) / factor;
          if (s0 <= s1) {
            sample = s1 - s0;
          } else if (s0 <= static_cast<double>(kMaxU32) && s1 <= static_cast<double>(kMaxU32)) {
            sample = (static_cast<double>(kMaxU32) - s0) + s1;
          } else {
            return make_error(ErrorCode::kCorrupt, "%s: delegate event '%s' ends before it starts", fname.c_str(), ev.name.c_str());
          }
        } else {
          auto ticks = elapsed_ticks(pe.start, pe.end);
          if (!ticks.ok()) return ticks.error().with_context(fname + ": event '" + ev.name + "'");
          sample = static_cast<double>(*ticks) / factor;
        }
        samples.push_back(sample);
        ev.start_times.push_back(pe.start);
        ev.raw_events.push_back(in.profile);
        ev.chain = pe.chain;
        if (pe.delegate) {
          std::string md = metadata_text(file, file.delegate_refs[pe.ref].metadata);
          if (!md.empty() && !any_metadata) {
            any_metadata = true;
            ev.delegate_metadata.resize(ev.raw_events.size() - 1);  // "" for the runs before
          }
          if (any_metadata) ev.delegate_metadata.push_back(std::move(md));
        } else if (any_metadata) {
          ev.delegate_metadata.emplace_back();
        }
      }
      if (!samples.empty()) ev.perf = make_perf(std::move(samples));
      apply_signature(sig.debug, b, &ev);
      for (const Instance& in : g.instances[s]) {
        if (in.debug_count == 0) continue;
        for (uint32_t k = 0; k < in.debug_count; ++k) ev.debug_values.push_back(file.events[b.debug_lists[in.debug_begin + k]].ref);
        if (ev.raw_events.empty()) ev.chain = file.events[b.debug_lists[in.debug_begin]].chain;
        break;
      }
      block.events.push_back(std::move(ev));
    }
    out.blocks_.push_back(std::move(block));
  }
  if (out.record_) out.link_record();
  return out;
}

// ---------------------------------------------------------------------------------------------
// [4] linking to the ETRecord
// ---------------------------------------------------------------------------------------------

void Inspector::link_record() {
  const etrecord::EtRecord& rec = *record_;
  const std::string fallback = options_.method.empty() ? "forward" : options_.method;
  for (EventBlock& block : blocks_) {
    std::vector<KernelEvent> calls;
    for (const Event& ev : block.events) {
      const events::EventClass kind = ev.kind();
      if (ev.delegate_id_int || ev.delegate_id_str) continue;
      if (kind == events::EventClass::kNativeCall) {
        calls.push_back(KernelEvent{ev.chain, ev.instruction_id, operator_base_name(ev.name), ev.name, false});
      } else if (kind == events::EventClass::kDelegateCall) {
        calls.push_back(KernelEvent{ev.chain, ev.instruction_id, "", ev.name, true});
      }
    }
    const std::string own = record_method_for(calls, rec);
    block.method = own.empty() ? fallback : own;
    link_block(block);
  }
}

void Inspector::link_block(EventBlock& block) {
  const etrecord::EtRecord& rec = *record_;
  const std::string& method = block.method;
  // The Inspector resolves handles only when the ETRecord has maps for the method; a 2023-era
  // ETRecord has none, and ExecuTorch raises where we leave the events unlinked.
  if (const etrecord::MethodMaps* maps_ptr = rec.method_maps(method)) {
    const etrecord::MethodMaps& maps = *maps_ptr;
    const etrecord::Graph* reference = rec.reference_graph(method);
    {
      // Per instruction, the integer ids delegates logged outputs under, and (for those
      // instructions) the instruction's handles in order; the reference graph's handle index is
      // built once, only when there are such ids.
      std::map<int32_t, std::set<int64_t>> logged_ids, instruction_handles;
      for (const Event& ev : block.events) {
        if (!ev.delegate_id_int || ev.debug_values.empty()) continue;
        logged_ids[ev.instruction_id].insert(*ev.delegate_id_int);
        auto handles = maps.debug_handle_map.find(ev.instruction_id);
        if (handles != maps.debug_handle_map.end()) {
          instruction_handles[ev.instruction_id].insert(handles->second.begin(), handles->second.end());
        }
      }
      std::map<int64_t, std::vector<const etrecord::GraphNode*>> nodes_of;
      if (!logged_ids.empty() && reference != nullptr) nodes_of = reference->debug_handle_index();
      auto nodes_for = [&](int64_t h) -> const std::vector<const etrecord::GraphNode*>& {
        static const std::vector<const etrecord::GraphNode*> kNone;
        auto it = nodes_of.find(h);
        return it == nodes_of.end() ? kNone : it->second;
      };
      for (Event& ev : block.events) {
        auto handles = maps.debug_handle_map.find(ev.instruction_id);
        if (handles == maps.debug_handle_map.end()) continue;
        auto outs = maps.instruction_id_to_num_outs.find(ev.instruction_id);
        ev.num_outputs = outs == maps.instruction_id_to_num_outs.end() ? 1 : outs->second;
        auto delegate = maps.delegate_map.find(ev.instruction_id);
        if (!ev.delegate_id_int && !ev.delegate_id_str) {
          ev.debug_handles = handles->second;
          if (ev.name == events::kDelegateCall && delegate != maps.delegate_map.end()) ev.delegate_backend_name = delegate->second.backend;
          continue;
        }
        if (delegate == maps.delegate_map.end()) {
          ev.debug_handles = handles->second;
          continue;
        }
        ev.delegate_backend_name = delegate->second.backend;
        const etrecord::DelegateEntry& entry = delegate->second;
        const std::string id = ev.delegate_identifier_text();
        ev.debug_handles.reset();
        if (ev.delegate_id_str) {
          // A string identifier can match a key directly; only a miss falls back to substrings.
          if (const std::vector<int64_t>* h = entry.handles_for(id)) ev.debug_handles = *h;
          continue;
        }
        // etscope's XNNPACK executor logs each node's output with the node's own debug handle as
        // the integer id (the serializer copies the edge node's handle into the node); XNNPACK
        // records no delegate debug ids, so its entry's map is empty and the id is the handle.
        // ExecuTorch's runtime never writes such events, so its Inspector's answers are unchanged.
        // A node can stand for several edge nodes (a convolution with the batch norm and ReLU
        // fused into it): it also takes the instruction's handles between its own and the next
        // logged node's (edge handles are numbered in graph order) whose edge nodes read what the
        // node's edge nodes produce (not, say, a weight's dequantize).
        if (entry.debug_map.empty() && entry.backend == xnn::kBackendId) {
          const int64_t h = *ev.delegate_id_int;
          const std::set<int64_t>& logged = logged_ids[ev.instruction_id];
          const std::set<int64_t>& all = instruction_handles[ev.instruction_id];
          auto next = logged.upper_bound(h);
          std::vector<int64_t> covered{h};
          if (reference != nullptr) {
            std::set<std::string> produced;
            for (const etrecord::GraphNode* node : nodes_for(h)) produced.insert(node->output_names.begin(), node->output_names.end());
            const auto stop = next == logged.end() ? all.end() : all.lower_bound(*next);
            for (auto x = all.upper_bound(h); x != all.end() && x != stop; ++x) {
              bool reads = false;
              for (const etrecord::GraphNode* node : nodes_for(*x)) {
                for (const std::string& in : node->input_names) reads |= produced.count(in) > 0;
              }
              if (!reads) continue;
              covered.push_back(*x);
              for (const etrecord::GraphNode* node : nodes_for(*x)) produced.insert(node->output_names.begin(), node->output_names.end());
            }
          }
          ev.debug_handles = std::move(covered);
          continue;
        }
        // An integer identifier never equals the JSON's string keys, so ExecuTorch takes the
        // exact key and then every key that is a substring of the id, the last one (in the
        // JSON's order) winning.
        if (auto it = entry.debug_map.find(id); it != entry.debug_map.end()) ev.debug_handles = it->second;
        for (const std::string& key : entry.keys_in_order()) {
          if (id.find(key) != std::string::npos) ev.debug_handles = entry.debug_map.at(key);
        }
      }
    }
  }

  // Graph association through the reference graph (the edge dialect program, including the
  // original programs of lowered modules, as ExecuTorch's operator graph nests them).
  const etrecord::Graph* graph = rec.reference_graph(method);
  if (graph == nullptr) return;
  {
    for (Event& ev : block.events) {
      if (ev.is_framework() || !ev.debug_handles) continue;
      for (int64_t h : *ev.debug_handles) {
        for (const etrecord::GraphNode* node : graph->nodes_for_handle(h)) {
          if (node->skipped_by_inspector()) continue;
          const std::string key = node->name + "_";
          bool seen = false;
          for (const NodeLink& l : ev.nodes) seen |= l.node_name == key;
          if (!seen) ev.nodes.push_back(NodeLink{key, node->stack_trace, node->nn_module_stack});
          if (!node->target.empty()) ev.op_types.push_back(node->target);
        }
      }
    }
  }
}

}  // namespace etscope::inspect
