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
#include "etscope/formats/tensor_stats.h"
#include "etscope/inspect/event_index.h"
#include "etscope/inspect/numeric_gap.h"

namespace etscope::numerics {
namespace {

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

/// Where a layer sits in the model: its module (from the delegate event of its call that logged
/// the output of a node with one of `handles`, else the call's event of ordinal `ordinal`).
struct Placed {
  std::string text;  ///< "path (Type)"
  std::string path;  ///< The module's path ("" for the root)
};

std::optional<Placed> placed(const inspect::Event& e) {
  const etrecord::ModuleFrame* f = inspect::innermost_module(e);
  if (f == nullptr) return std::nullopt;
  return Placed{inspect::innermost_module_text(e), f->path};
}

std::optional<Placed> place(const inspect::Inspector* profile, const runtime::QuantizerSite& site, std::initializer_list<int32_t> handles,
                            std::optional<uint32_t> ordinal) {
  if (profile == nullptr) return std::nullopt;
  for (const inspect::EventBlock& b : profile->blocks()) {
    if (b.name != events::kBlockExecute) continue;
    const inspect::Event* by_ordinal = nullptr;
    uint32_t k = 0;
    for (const inspect::Event& e : b.events) {
      if (!e.is_delegated_op.value_or(false) || e.chain != static_cast<int32_t>(site.chain) ||
          e.instruction_id != static_cast<int32_t>(site.instruction)) {
        continue;
      }
      const bool handle = e.delegate_id_int && std::find(handles.begin(), handles.end(), *e.delegate_id_int) != handles.end();
      if (handle && inspect::innermost_module(e) != nullptr) return placed(e);
      if (e.perf && ordinal && k++ == *ordinal) by_ordinal = &e;
    }
    if (by_ordinal != nullptr && inspect::innermost_module(*by_ordinal) != nullptr) return placed(*by_ordinal);
  }
  return std::nullopt;
}

/// Names the layer's modules: its own (none for the quantization of a float tensor) and its
/// readers', and the module paths an export must leave unquantized to keep its values in float.
void name_modules(const inspect::Inspector* profile, LayerSensitivity& l) {
  auto add_path = [&](const std::string& path) {
    if (path.empty()) return;  // the root: not a module an exporter can leave out
    if (std::find(l.exclude.begin(), l.exclude.end(), path) == l.exclude.end()) l.exclude.push_back(path);
  };
  if (!l.site.from_float) {
    if (auto p = place(profile, l.site, {l.site.delegate_debug_handle, l.site.event_debug_handle}, l.site.event)) {
      l.module = p->text;
      add_path(p->path);
    }
  }
  for (int32_t h : l.site.reader_debug_handles) {
    auto p = place(profile, l.site, {h}, std::nullopt);
    if (!p) continue;
    if (std::find(l.reader_modules.begin(), l.reader_modules.end(), p->text) == l.reader_modules.end()) l.reader_modules.push_back(p->text);
    add_path(p->path);
  }
}

/// Each delegate operator's median time on `r` (traced): `first`'s inputs, one warm-up and
/// `timed` executions.
Result<std::map<OpKey, double>> time_operators(runner::Runner& r, const InputSet& first, int timed) {
  ETSCOPE_TRY(apply_input_set(first, r));
  if (auto done = r.run(1, timed); !done.ok()) return done.error();
  ETSCOPE_ASSIGN_OR_RETURN(std::vector<uint8_t> trace, r.trace_bytes());
  return delegate_event_times(std::move(trace));
}

/// Drives the emulating runner: one execution per input set for a set of quantizers, and the
/// outputs' figure against the reference.
struct Emulator {
  runner::Runner& runner;
  const std::vector<InputSet>& inputs;
  const std::vector<std::vector<OutputTensor>>* reference;
  size_t executions = 0;

  Result<SqnrFigure> figure(const std::vector<uint8_t>& on) {
    ETSCOPE_TRY(runner.method().set_quantizers(on));
    ETSCOPE_ASSIGN_OR_RETURN(auto outputs, run_input_sets(runner, inputs));
    executions += inputs.size();
    return sqnr_figure(*reference, outputs);
  }
};

/// Index of the largest value of row r of a [rows, cols] floating tensor.
size_t argmax_row(const OutputTensor& t, int64_t r, int64_t cols) {
  size_t best = 0;
  double best_v = -std::numeric_limits<double>::infinity();
  for (int64_t c = 0; c < cols; ++c) {
    const double v = element_as_double(t.dtype, t.bytes.data(), static_cast<uint64_t>(r * cols + c));
    if (v > best_v) {
      best_v = v;
      best = static_cast<size_t>(c);
    }
  }
  return best;
}

}  // namespace

Status apply_input_set(const InputSet& in, runner::Runner& r) {
  Status st = in.set(r);
  if (st.ok()) return st;
  // A set named after its file is named by the error already.
  if (st.error().message().find(in.name) != std::string::npos) return st.error();
  return st.error().with_context(in.name);
}

Result<std::vector<std::vector<OutputTensor>>> run_input_sets(runner::Runner& r, const std::vector<InputSet>& inputs) {
  std::vector<std::vector<OutputTensor>> out;
  for (const InputSet& in : inputs) {
    ETSCOPE_TRY(apply_input_set(in, r));
    if (auto done = r.execute_once(events::kBlockExecute.data()); !done.ok()) return done.error().with_context(in.name);
    out.push_back(snapshot_outputs(r));
  }
  return out;
}

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
    if (!is_floating_type(reference[i].dtype) || !is_floating_type(outputs[i].dtype)) continue;
    if (reference[i].shape != outputs[i].shape) {
      return Error(ErrorCode::kInvalidArgument, "output " + std::to_string(i) + ": the reference's shape differs from the program's");
    }
    ETSCOPE_ASSIGN_OR_RETURN(double snr, inspect::compare_values(inspect::GapMetric::kSNR, view_of(reference[i]), view_of(outputs[i])));
    lowest = lowest ? std::min(*lowest, snr) : snr;
  }
  if (!lowest) return Error(ErrorCode::kInvalidArgument, "no floating output to measure an SQNR on");
  return *lowest;
}

Result<SqnrFigure> sqnr_figure(const std::vector<std::vector<OutputTensor>>& reference,
                               const std::vector<std::vector<OutputTensor>>& outputs) {
  if (reference.size() != outputs.size() || outputs.empty()) {
    return Error(ErrorCode::kInvalidArgument, "the reference covers " + std::to_string(reference.size()) + " input sets, the run " +
                                                  std::to_string(outputs.size()));
  }
  SqnrFigure f;
  double sum = 0;
  f.worst_db = std::numeric_limits<double>::infinity();
  size_t rows = 0, agree = 0;
  for (size_t k = 0; k < outputs.size(); ++k) {
    Result<double> s = outputs_sqnr(reference[k], outputs[k]);
    if (!s.ok()) return outputs.size() == 1 ? s.error() : s.error().with_context("input set " + std::to_string(k));
    f.per_input_db.push_back(*s);
    sum += *s;
    f.worst_db = std::min(f.worst_db, *s);
    // Top-1: the first floating output, when it is [N, C] logits.
    for (size_t i = 0; i < outputs[k].size(); ++i) {
      const OutputTensor& o = outputs[k][i];
      if (!is_floating_type(o.dtype)) continue;
      if (o.shape.size() == 2 && o.shape[1] > 1 && is_floating_type(reference[k][i].dtype)) {
        for (int64_t r = 0; r < o.shape[0]; ++r) {
          ++rows;
          agree += argmax_row(o, r, o.shape[1]) == argmax_row(reference[k][i], r, o.shape[1]);
        }
      }
      break;
    }
  }
  f.mean_db = sum / static_cast<double>(outputs.size());  // +inf when any is (never -inf: an SNR is finite or +inf or NaN)
  if (rows > 0) f.top1 = static_cast<double>(agree) / static_cast<double>(rows);
  return f;
}

Result<Sensitivity> quantization_sensitivity(const runner::RunnerOptions& options, const std::vector<InputSet>& inputs,
                                             const inspect::Inspector* profile, const SensitivityOptions& sensitivity) {
  if (options.engine != runner::EngineKind::kEtscope) {
    return Error(ErrorCode::kNotSupported, options.model + ": quantization sensitivity runs on etscope's engine (ExecuTorch's runtime "
                                                           "cannot compute a quantized layer on floats)");
  }
  if (inputs.empty()) return Error(ErrorCode::kInvalidArgument, options.model + ": quantization sensitivity needs at least one input set");
  if (!sensitivity.reference.empty() && sensitivity.reference.size() != inputs.size()) {
    return Error(ErrorCode::kInvalidArgument, sensitivity.reference_name + ": " + std::to_string(sensitivity.reference.size()) +
                                                  " reference runs for " + std::to_string(inputs.size()) + " input sets");
  }
  const int timed = std::max(1, sensitivity.timing_runs);
  Sensitivity out;
  out.target_sqnr_db = sensitivity.target_sqnr_db;
  for (const InputSet& in : inputs) out.inputs.push_back(in.name);

  // 1. The program as it is (integer kernels): on the first input set each operator's time, then
  // its outputs on every set.
  runner::RunnerOptions as_is = options;
  as_is.trace = true;
  as_is.debug_level = DebugLevel::kNone;
  as_is.emulate_quantization = false;
  std::vector<std::vector<OutputTensor>> program_outputs;
  std::map<OpKey, double> int8_times;
  {
    ETSCOPE_ASSIGN_OR_RETURN(auto r, runner::Runner::load(as_is));
    ETSCOPE_ASSIGN_OR_RETURN(int8_times, time_operators(*r, inputs.front(), timed));
    ETSCOPE_ASSIGN_OR_RETURN(program_outputs, run_input_sets(*r, inputs));
  }

  // 2. Every quantizer off: each layer's float time (timed on the first input set), and the
  // reference-less reference.
  runner::RunnerOptions emulated = as_is;
  emulated.emulate_quantization = true;
  std::vector<runtime::QuantizerSite> sites;
  std::map<OpKey, double> float_times;
  {
    ETSCOPE_ASSIGN_OR_RETURN(auto r, runner::Runner::load(emulated));
    sites = r->method().quantizers();
    if (sites.empty()) {
      return Error(ErrorCode::kInvalidArgument, options.model + ": no quantized layer in the program's XNNPACK delegates: nothing to "
                                                                "rank (a float program, or one quantized outside XNNPACK)");
    }
    ETSCOPE_TRY(r->method().set_quantizers(std::vector<uint8_t>(sites.size(), 0)));
    ETSCOPE_ASSIGN_OR_RETURN(float_times, time_operators(*r, inputs.front(), timed));
  }

  // 3. The experiments, untraced.
  runner::RunnerOptions quiet = emulated;
  quiet.trace = false;
  ETSCOPE_ASSIGN_OR_RETURN(auto r, runner::Runner::load(quiet));
  const size_t n = sites.size();
  // Each layer's float filter from the float export: the first unused constant of its shape
  // (searched from where the last match was, exports keep their layers' order) that the runtime
  // accepts as the one its int8 filter was rounded from.
  if (sensitivity.float_program != nullptr) {
    const std::vector<runtime::DelegateConstant> constants = sensitivity.float_program->delegate_float_constants();
    std::vector<uint8_t> used(constants.size(), 0);
    size_t cursor = 0;
    for (size_t k = 0; k < n; ++k) {
      if (sites[k].filter_shape.empty()) continue;
      ++out.filtered_layers;
      for (size_t t = 0; t < constants.size(); ++t) {
        const size_t c = (cursor + t) % constants.size();
        if (used[c] || constants[c].shape != sites[k].filter_shape) continue;
        if (!r->method().set_float_filter(k, constants[c].values).ok()) continue;
        used[c] = 1;
        cursor = c + 1;
        ++out.float_filters;
        break;
      }
    }
  } else {
    for (const runtime::QuantizerSite& site : sites) out.filtered_layers += !site.filter_shape.empty();
  }
  ETSCOPE_TRY(r->method().set_quantizers(std::vector<uint8_t>(n, 0)));
  ETSCOPE_ASSIGN_OR_RETURN(const std::vector<std::vector<OutputTensor>> float_outputs, run_input_sets(*r, inputs));
  const std::vector<std::vector<OutputTensor>>& reference = sensitivity.reference.empty() ? float_outputs : sensitivity.reference;
  out.reference = sensitivity.reference.empty() ? "the program's float emulation (activations unquantized, weights dequantized)"
                                                 : sensitivity.reference_name;
  {
    Result<SqnrFigure> f = sqnr_figure(reference, program_outputs);
    if (!f.ok()) return Error(ErrorCode::kInvalidArgument, options.model + ": against " + out.reference + ": " + f.error().message());
    out.program = std::move(f).value();
  }
  ETSCOPE_ASSIGN_OR_RETURN(out.all_float, sqnr_figure(reference, float_outputs));
  if (!(out.all_float.mean_db >= kForeignReferenceDb)) {
    out.warnings.push_back(out.reference + " stays " + std::to_string(out.all_float.mean_db) + " dB from the program even with no layer "
                           "quantized: is it an export of the same model with the same weights?");
  }
  Emulator em{*r, inputs, &reference};
  std::vector<uint8_t> on(n, 1);
  ETSCOPE_ASSIGN_OR_RETURN(out.emulated, em.figure(on));
  for (size_t i = 0; i < n; ++i) {
    LayerSensitivity l;
    l.site = sites[i];
    name_modules(profile, l);
    on[i] = 0;
    ETSCOPE_ASSIGN_OR_RETURN(l.float_sqnr, em.figure(on));
    std::vector<uint8_t> alone(n, 0);
    alone[i] = 1;
    ETSCOPE_ASSIGN_OR_RETURN(l.alone_sqnr, em.figure(alone));
    on[i] = 1;
    l.recovered_db = l.float_sqnr.mean_db - out.emulated.mean_db;
    const OpKey key{static_cast<int32_t>(l.site.chain), static_cast<int32_t>(l.site.instruction), l.site.event};
    if (auto t = int8_times.find(key); t != int8_times.end()) l.int8_ms = t->second;
    if (auto t = float_times.find(key); t != float_times.end()) l.float_ms = t->second;
    out.layers.push_back(std::move(l));
  }
  // Most recovered first; NaN (an output that became NaN, or inf - inf) last.
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
  out.keep_float_sqnr = out.emulated;
  if (out.emulated.mean_db >= out.target_sqnr_db) {
    out.target_reached = true;
  } else if (!(out.all_float.mean_db >= out.target_sqnr_db)) {
    // Not even every layer in float reaches it: no set of layers to suggest.
    out.warnings.push_back("the target of " + std::to_string(out.target_sqnr_db) + " dB is out of reach: with every layer in float the "
                           "outputs reach " + std::to_string(out.all_float.mean_db) + " dB (" +
                           (out.float_filters < out.filtered_layers ? "filters the float export does not give stay dequantized int8; "
                                                                    : "") +
                           "what remains is not these quantizers')");
  } else {
    std::vector<uint8_t> cur(n, 1);
    for (size_t k = 0; k < n && !out.target_reached; ++k) {
      cur[position(k)] = 0;
      out.keep_float.push_back(k);
      ETSCOPE_ASSIGN_OR_RETURN(out.keep_float_sqnr, em.figure(cur));
      out.cumulative_sqnr_db.push_back(out.keep_float_sqnr.mean_db);
      out.target_reached = out.keep_float_sqnr.mean_db >= out.target_sqnr_db;
    }
    if (out.target_reached) {
      // Drop, latest first, each layer the target does without.
      for (size_t j = out.keep_float.size(); j-- > 0;) {
        const size_t p = position(out.keep_float[j]);
        cur[p] = 1;
        ETSCOPE_ASSIGN_OR_RETURN(SqnrFigure f, em.figure(cur));
        if (f.mean_db >= out.target_sqnr_db) {
          out.keep_float.erase(out.keep_float.begin() + static_cast<std::ptrdiff_t>(j));
          out.keep_float_sqnr = std::move(f);
        } else {
          cur[p] = 0;
        }
      }
      std::sort(out.keep_float.begin(), out.keep_float.end());
    }
    for (size_t k : out.keep_float) {
      for (const std::string& p : out.layers[k].exclude) {
        if (std::find(out.exclude_modules.begin(), out.exclude_modules.end(), p) == out.exclude_modules.end()) out.exclude_modules.push_back(p);
      }
    }
  }
  out.executions = em.executions;
  return out;
}

}  // namespace etscope::numerics
