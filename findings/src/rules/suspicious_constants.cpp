// suspicious-constants: constants that look broken: NaN or Inf in a float weight, a weight
// matrix of zeros only, a bool constant holding bytes other than 0 and 1 (formats/bool_constants.h).
#include "etscope/core/text.h"
#include "etscope/formats/bool_constants.h"
#include "etscope/formats/tensor_stats.h"
#include "rules/rules.h"

namespace etscope::findings {
namespace {

// The calls that read value `v`, as places.
std::vector<Place> readers_of(const Context& ctx, int32_t v) {
  std::vector<Place> out;
  for (const Call& c : ctx.calls()) {
    for (int32_t in : c.inputs) {
      if (in == v) {
        out.push_back(ctx.place(c));
        break;
      }
    }
  }
  return out;
}

}  // namespace

void rule_suspicious_constants(const Context& ctx, std::vector<Found>& out) {
  const ExecutionPlan& plan = *ctx.plan();
  const Program& program = *ctx.program();
  for (size_t v = 0; v < plan.values.size(); ++v) {
    const Value& value = plan.values[v];
    if (value.kind != ValueKind::kTensor || value.tensor.data_kind != TensorDataKind::kConstant) continue;
    const TensorInfo& t = value.tensor;
    if (t.dtype == ScalarType::kBool || t.numel == 0 || t.data.size < t.nbytes) continue;
    const std::optional<TensorStats> stats = compute_tensor_stats(t.dtype, program.bytes(t.data), t.numel, 0);
    if (!stats) continue;
    const int32_t id = static_cast<int32_t>(v);
    // Infinities in a tensor whose finite elements are all 0 are a mask or a fill value
    // (masked_fill's -inf, a causal mask of 0 and -inf): meant. In weights they are not.
    const bool mask_like = stats->nan_count == 0 && stats->min == 0 && stats->max == 0;
    if (stats->nan_count || (stats->inf_count && !mask_like)) {
      Found f;
      f.finding.rule = "suspicious-constants";
      f.finding.severity = Severity::kHigh;
      f.finding.what = "constant " + ctx.describe_value(id) + " holds " + count_text(stats->nan_count, "NaN") + " and " +
                       count_text(stats->inf_count, "Inf");
      f.finding.where = readers_of(ctx, id);
      f.finding.evidence.push_back(std::to_string(stats->finite_count) + " of " + std::to_string(stats->count) +
                                   " elements are finite");
      f.finding.advice = "Every output that depends on it is NaN or Inf: check the checkpoint that was loaded before export "
                         "(a diverged training run, a failed conversion) and export again.";
      out.push_back(std::move(f));
    } else if (t.sizes.size() >= 2 && t.numel >= 16 && stats->min == 0 && stats->max == 0) {
      Found f;
      f.finding.rule = "suspicious-constants";
      f.finding.severity = Severity::kMedium;
      f.finding.what = "weight " + ctx.describe_value(id) + " is all zeros";
      f.finding.where = readers_of(ctx, id);
      f.finding.evidence.push_back(std::to_string(t.numel) + " elements, every one 0 (" + bytes_text(t.nbytes) + ")");
      f.finding.bytes = t.nbytes;
      f.finding.advice = "A weight matrix of zeros usually means the weights were not loaded before export (a module "
                         "initialised to zeros, a state dict whose keys did not match): check load_state_dict's result.";
      out.push_back(std::move(f));
    }
  }
  for (const NonBinaryBool& b : non_binary_bool_tensors(program)) {
    if (b.plan != ctx.method()) continue;
    Found f;
    f.finding.rule = "suspicious-constants";
    f.finding.severity = Severity::kMedium;
    f.finding.what = "bool " + ctx.describe_value(b.value) + " holds " + count_text(b.bad_bytes, "byte") +
                     " other than 0 and 1 (first: element " + std::to_string(b.first_bad) + " = " +
                     std::to_string(b.first_bad_byte) + ")";
    f.finding.where = readers_of(ctx, b.value);
    for (const std::string& r : b.readers) f.finding.evidence.push_back("read by " + r);
    f.finding.advice = "ExecuTorch's kernels read any non-zero byte as true, so it runs, but the export wrote the mask as "
                       "bytes of another dtype (ExecuTorch 1.5.1's LLM exporter does this without use_sdpa_with_kv_cache): "
                       "export with use_sdpa_with_kv_cache or cast the mask to bool before export.";
    out.push_back(std::move(f));
  }
}

}  // namespace etscope::findings
