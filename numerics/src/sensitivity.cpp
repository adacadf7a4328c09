#include "etscope/numerics/sensitivity.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <utility>

#include "etscope/core/event_names.h"
#include "etscope/etdump/etdump_reader.h"
#include "etscope/formats/blob.h"
#include "etscope/inspect/event_index.h"
#include "etscope/inspect/numeric_gap.h"

namespace etscope::numerics {
namespace {

bool floating(ScalarType t) {
  return t == ScalarType::kFloat || t == ScalarType::kDouble || t == ScalarType::kHalf || t == ScalarType::kBFloat16;
}

inspect::GapValue view_of(const OutputTensor& t) {
  inspect::GapValue v;
  v.kind = inspect::GapValue::Kind::kTensor;
  v.tensor.dtype = t.dtype;
  v.tensor.shape = t.shape;
  v.tensor.bytes = t.bytes;
  return v;
}

/// A layer's operator: (chain, instruction, ordinal of the delegate event within the call).
using OpKey = std::tuple<int32_t, int32_t, uint32_t>;

/// Median time (target unit, ms) of each delegate event of the "Execute" runs in `trace`.
Result<std::map<OpKey, double>> delegate_event_times(std::vector<uint8_t> trace) {
  auto blob = Blob::from_bytes("sensitivity.etdp", trace);
  ETSCOPE_ASSIGN_OR_RETURN(etdump::EtDumpFile dump, etdump::EtDumpReader::read(blob));
  ETSCOPE_ASSIGN_OR_RETURN(inspect::Inspector in,
                           inspect::Inspector::build(std::make_shared<const etdump::EtDumpFile>(std::move(dump)), nullptr, nullptr));
  std::map<OpKey, double> out;
  for (const inspect::EventBlock& b : in.blocks()) {
    if (b.name != events::kBlockExecute) continue;
    std::map<std::pair<int32_t, int32_t>, uint32_t> ordinal;
    for (const inspect::Event& e : b.events) {
      if (!e.is_delegated_op.value_or(false) || !e.perf) continue;
      const uint32_t k = ordinal[{e.chain, e.instruction_id}]++;
      out.emplace(OpKey{e.chain, e.instruction_id, k}, e.perf->p50);
    }
  }
  return out;
}

/// The innermost module of a layer's operator in `profile`: the delegate event of its call that
/// logged the layer's output (its delegate debug handle), else the call's event of its ordinal.
std::string module_of(const inspect::Inspector* profile, const runtime::QuantizerSite& site) {
  if (profile == nullptr) return "";
  for (const inspect::EventBlock& b : profile->blocks()) {
    if (b.name != events::kBlockExecute) continue;
    const inspect::Event* by_ordinal = nullptr;
    uint32_t k = 0;
    for (const inspect::Event& e : b.events) {
      if (!e.is_delegated_op.value_or(false) || e.chain != static_cast<int32_t>(site.chain) ||
          e.instruction_id != static_cast<int32_t>(site.instruction)) {
        continue;
      }
      if (e.delegate_id_int && (*e.delegate_id_int == site.delegate_debug_handle || *e.delegate_id_int == site.event_debug_handle)) {
        const std::string text = inspect::innermost_module_text(e);
        if (!text.empty()) return text;
      }
      if (e.perf && k++ == site.event) by_ordinal = &e;
    }
    if (by_ordinal != nullptr) return inspect::innermost_module_text(*by_ordinal);
  }
  return "";
}

/// Drives the emulating runner: one execution per set of quantizers, its outputs' SQNR.
struct Emulator {
  runner::Runner& runner;
  const std::vector<OutputTensor>* reference;  // null: the float emulation itself
  size_t executions = 0;

  Result<double> sqnr(const std::vector<uint8_t>& on) {
    ETSCOPE_TRY(runner.method().set_quantizers(on));
    if (auto done = runner.execute_once(events::kBlockExecute.data()); !done.ok()) return done.error();
    ++executions;
    return outputs_sqnr(*reference, snapshot_outputs(runner));
  }
};

}  // namespace

std::vector<OutputTensor> snapshot_outputs(const runner::Runner& runner) {
  std::vector<OutputTensor> out;
  for (size_t i = 0; i < runner.num_outputs(); ++i) {
    const EValue& v = runner.output(i);
    if (!v.is_tensor() || v.tensor == nullptr) continue;
    const TensorImpl& t = *v.tensor;
    OutputTensor o;
    o.dtype = t.dtype();
    o.shape.assign(t.sizes().begin(), t.sizes().end());
    o.bytes.resize(t.nbytes());
    const auto* src = static_cast<const uint8_t*>(t.data());
    if (src == nullptr || o.bytes.empty()) {
      out.push_back(std::move(o));
      continue;
    }
    if (t.contiguous()) {
      std::memcpy(o.bytes.data(), src, o.bytes.size());
    } else {
      // Row-major order from the tensor's strides (another dim order).
      const size_t es = t.element_size();
      std::vector<int64_t> idx(static_cast<size_t>(t.dim()), 0);
      for (int64_t k = 0; k < t.numel(); ++k) {
        int64_t off = 0;
        for (int d = 0; d < t.dim(); ++d) off += idx[static_cast<size_t>(d)] * t.stride(d);
        std::memcpy(o.bytes.data() + static_cast<size_t>(k) * es, src + static_cast<size_t>(off) * es, es);
        for (int d = t.dim() - 1; d >= 0; --d) {
          if (++idx[static_cast<size_t>(d)] < t.size(d)) break;
          idx[static_cast<size_t>(d)] = 0;
        }
      }
    }
    out.push_back(std::move(o));
  }
  return out;
}

Result<double> outputs_sqnr(const std::vector<OutputTensor>& reference, const std::vector<OutputTensor>& outputs) {
  if (reference.size() != outputs.size()) {
    return Error(ErrorCode::kInvalidArgument, "the reference has " + std::to_string(reference.size()) + " tensor outputs, the program " +
                                                  std::to_string(outputs.size()));
  }
  std::optional<double> lowest;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!floating(reference[i].dtype) || !floating(outputs[i].dtype)) continue;
    if (reference[i].shape != outputs[i].shape) {
      return Error(ErrorCode::kInvalidArgument, "output " + std::to_string(i) + ": the reference's shape differs from the program's");
    }
    ETSCOPE_ASSIGN_OR_RETURN(double snr, inspect::compare_values(inspect::GapMetric::kSNR, view_of(reference[i]), view_of(outputs[i])));
    lowest = lowest ? std::min(*lowest, snr) : snr;
  }
  if (!lowest) return Error(ErrorCode::kInvalidArgument, "no floating output to measure an SQNR on");
  return *lowest;
}

Result<Sensitivity> quantization_sensitivity(const runner::RunnerOptions& options,
                                             const std::function<Status(runner::Runner&)>& set_inputs,
                                             const inspect::Inspector* profile, const SensitivityOptions& sensitivity) {
  if (options.engine != runner::EngineKind::kEtscope) {
    return Error(ErrorCode::kNotSupported, options.model + ": quantization sensitivity runs on etscope's engine (ExecuTorch's runtime "
                                                           "cannot compute a quantized layer on floats)");
  }
  const int timed = std::max(1, sensitivity.timing_runs);
  Sensitivity out;
  out.target_sqnr_db = sensitivity.target_sqnr_db;

  // 1. The program as it is (integer kernels): its outputs and each operator's time.
  runner::RunnerOptions as_is = options;
  as_is.trace = true;
  as_is.debug_level = DebugLevel::kNone;
  as_is.emulate_quantization = false;
  std::vector<OutputTensor> program_outputs;
  std::map<OpKey, double> int8_times;
  {
    ETSCOPE_ASSIGN_OR_RETURN(auto r, runner::Runner::load(as_is));
    ETSCOPE_TRY(set_inputs(*r));
    if (auto done = r->run(1, timed); !done.ok()) return done.error();
    program_outputs = snapshot_outputs(*r);
    ETSCOPE_ASSIGN_OR_RETURN(std::vector<uint8_t> trace, r->trace_bytes());
    ETSCOPE_ASSIGN_OR_RETURN(int8_times, delegate_event_times(std::move(trace)));
  }

  // 2. Every quantizer off, timed: each layer's float time, and the reference-less reference.
  runner::RunnerOptions emulated = as_is;
  emulated.emulate_quantization = true;
  std::vector<runtime::QuantizerSite> sites;
  std::vector<OutputTensor> float_outputs;
  std::map<OpKey, double> float_times;
  {
    ETSCOPE_ASSIGN_OR_RETURN(auto r, runner::Runner::load(emulated));
    sites = r->method().quantizers();
    if (sites.empty()) {
      return Error(ErrorCode::kInvalidArgument, options.model + ": no quantized layer in the program's XNNPACK delegates: nothing to "
                                                                "rank (a float program, or one quantized outside XNNPACK)");
    }
    ETSCOPE_TRY(set_inputs(*r));
    ETSCOPE_TRY(r->method().set_quantizers(std::vector<uint8_t>(sites.size(), 0)));
    if (auto done = r->run(1, timed); !done.ok()) return done.error();
    float_outputs = snapshot_outputs(*r);
    ETSCOPE_ASSIGN_OR_RETURN(std::vector<uint8_t> trace, r->trace_bytes());
    ETSCOPE_ASSIGN_OR_RETURN(float_times, delegate_event_times(std::move(trace)));
  }
  const std::vector<OutputTensor>& reference = sensitivity.reference.empty() ? float_outputs : sensitivity.reference;
  out.reference = sensitivity.reference.empty() ? "the program's float emulation (activations unquantized, weights dequantized)"
                                                 : sensitivity.reference_name;
  {
    Result<double> s = outputs_sqnr(reference, program_outputs);
    if (!s.ok()) return Error(ErrorCode::kInvalidArgument, options.model + ": against " + out.reference + ": " + s.error().message());
    out.program_sqnr_db = *s;
  }
  ETSCOPE_ASSIGN_OR_RETURN(out.float_sqnr_db, outputs_sqnr(reference, float_outputs));
  if (!(out.float_sqnr_db >= kForeignReferenceDb)) {
    out.warnings.push_back(out.reference + " stays " + std::to_string(out.float_sqnr_db) + " dB from the program even with no layer "
                           "quantized: is it an export of the same model with the same weights?");
  }

  // 3. The experiments, untraced.
  runner::RunnerOptions quiet = emulated;
  quiet.trace = false;
  ETSCOPE_ASSIGN_OR_RETURN(auto r, runner::Runner::load(quiet));
  ETSCOPE_TRY(set_inputs(*r));
  Emulator em{*r, &reference};
  const size_t n = sites.size();
  std::vector<uint8_t> on(n, 1);
  ETSCOPE_ASSIGN_OR_RETURN(out.emulated_sqnr_db, em.sqnr(on));
  for (size_t i = 0; i < n; ++i) {
    LayerSensitivity l;
    l.site = sites[i];
    l.module = module_of(profile, sites[i]);
    on[i] = 0;
    ETSCOPE_ASSIGN_OR_RETURN(l.float_sqnr_db, em.sqnr(on));
    std::vector<uint8_t> alone(n, 0);
    alone[i] = 1;
    ETSCOPE_ASSIGN_OR_RETURN(l.alone_sqnr_db, em.sqnr(alone));
    on[i] = 1;
    l.recovered_db = l.float_sqnr_db - out.emulated_sqnr_db;
    const OpKey key{static_cast<int32_t>(l.site.chain), static_cast<int32_t>(l.site.instruction), l.site.event};
    if (auto t = int8_times.find(key); t != int8_times.end()) l.int8_ms = t->second;
    if (auto t = float_times.find(key); t != float_times.end()) l.float_ms = t->second;
    out.layers.push_back(std::move(l));
  }
  // Most recovered first; a NaN (an output that became NaN) last.
  auto rank_value = [](const LayerSensitivity& l) { return std::isnan(l.recovered_db) ? -std::numeric_limits<double>::infinity() : l.recovered_db; };
  std::stable_sort(out.layers.begin(), out.layers.end(),
                   [&](const LayerSensitivity& a, const LayerSensitivity& b) { return rank_value(a) > rank_value(b); });

  // 4. The suggestion: layers off in ranking order until the target holds, then pruned.
  auto position = [&](size_t layer) {
    const runtime::QuantizerSite& s = out.layers[layer].site;
    for (size_t k = 0; k < n; ++k) {
      if (sites[k].chain == s.chain && sites[k].instruction == s.instruction && sites[k].node == s.node) return k;
    }
    return n;  // unreachable: every layer is a site
  };
  out.keep_float_sqnr_db = out.emulated_sqnr_db;
  if (!(out.emulated_sqnr_db >= out.target_sqnr_db)) {
    std::vector<uint8_t> cur(n, 1);
    for (size_t k = 0; k < n && !out.target_reached; ++k) {
      cur[position(k)] = 0;
      out.keep_float.push_back(k);
      ETSCOPE_ASSIGN_OR_RETURN(double s, em.sqnr(cur));
      out.cumulative_sqnr_db.push_back(s);
      out.keep_float_sqnr_db = s;
      out.target_reached = s >= out.target_sqnr_db;
    }
    if (out.target_reached) {
      // Drop, latest first, each layer the target does without.
      for (size_t j = out.keep_float.size(); j-- > 0;) {
        const size_t p = position(out.keep_float[j]);
        cur[p] = 1;
        ETSCOPE_ASSIGN_OR_RETURN(double s, em.sqnr(cur));
        if (s >= out.target_sqnr_db) {
          out.keep_float.erase(out.keep_float.begin() + static_cast<std::ptrdiff_t>(j));
          out.keep_float_sqnr_db = s;
        } else {
          cur[p] = 0;
        }
      }
      std::sort(out.keep_float.begin(), out.keep_float.end());
    }
  } else {
    out.target_reached = true;
  }
  out.executions = em.executions;
  return out;
}

}  // namespace etscope::numerics
