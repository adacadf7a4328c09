// dtype-round-trip: a tensor converted to another dtype and, a few operators later, back again.
// Both conversions copy the tensor; unless the operators between need the other dtype, neither
// is wanted (x.half() ... .float() left in a model).
#include <set>
#include <string_view>

#include "etscope/core/scalar_type.h"
#include "etscope/core/text.h"
#include "etscope/formats/tensor_stats.h"
#include "rules/rules.h"

namespace etscope::findings {
namespace {

// Operators that move or combine elements without reducing or accumulating: a round trip
// around them loses precision for nothing. Around a matrix product or a reduction (RMSNorm's
// mean in float, a softmax) a conversion to a wider type and back is deliberate.
bool is_cheap_elementwise(const std::string& op) {
  if (is_layout_copy(op)) return true;
  static const std::set<std::string_view> names = {
      "add", "sub", "mul", "div", "neg", "abs", "relu", "clamp", "hardtanh", "where", "maximum", "minimum",
      "view_copy", "et_view", "slice_copy", "select_copy", "squeeze_copy", "unsqueeze_copy", "cat", "_to_copy",
      "_to_dim_order_copy", "sigmoid", "tanh", "exp", "gelu", "silu", "hardswish", "hardsigmoid", "leaky_relu", "elu",
      "sqrt", "rsqrt", "reciprocal", "pow", "square"};
  std::string_view base = op;
  const size_t ns = base.find("::");
  if (ns != std::string_view::npos) base.remove_prefix(ns + 2);
  const size_t dot = base.find('.');
  if (dot != std::string_view::npos) base = base.substr(0, dot);
  return names.contains(base);
}

}  // namespace

void rule_dtype_round_trip(const Context& ctx, std::vector<Found>& out) {
  const std::vector<Call>& calls = ctx.calls();
  for (size_t k = 0; k < calls.size(); ++k) {
    const Call& c = calls[k];
    if (c.delegate || !is_dtype_conversion(c.op) || c.inputs.empty() || c.outputs.size() != 1) continue;
    const TensorInfo* from = ctx.tensor(c.inputs.front());
    const TensorInfo* to = ctx.tensor(c.outputs.front());
    if (!from || !to || from->dtype == to->dtype || ctx.is_constant(c.inputs.front())) continue;
    // The region the converted tensor reaches: operators in the new dtype, 4 calls deep. The
    // round trip is pointless only when every operator in it is elementwise (the result differs
    // by at most the rounding of the narrower type) and nothing else reads it: a reduction or a
    // matrix product reading it (RMSNorm's mean in float, a bf16 linear) makes it deliberate.
    std::vector<size_t> frontier{k}, between, back;
    std::set<size_t> seen{k};
    bool escapes = false;
    for (int depth = 0; depth < 4 && !frontier.empty() && !escapes; ++depth) {
      std::vector<size_t> next;
      for (size_t at : frontier) {
        for (int32_t v : calls[at].outputs) {
          for (size_t r : ctx.readers(v, at)) {
            if (!seen.insert(r).second) continue;
            const Call& rc = calls[r];
            const TensorInfo* o = rc.outputs.empty() ? nullptr : ctx.tensor(rc.outputs.front());
            if (!rc.delegate && is_dtype_conversion(rc.op) && o && o->dtype == from->dtype) {
              back.push_back(r);
            } else if (!rc.delegate && o && o->dtype == to->dtype && is_cheap_elementwise(rc.op)) {
              between.push_back(r);
              next.push_back(r);
            } else {
              escapes = true;
            }
          }
        }
      }
      frontier = std::move(next);
    }
    if (escapes || !frontier.empty() || back.empty()) continue;
    Found f;
    Finding& fi = f.finding;
    fi.rule = "dtype-round-trip";
    const std::string a = scalar_type_short_name(from->dtype), b = scalar_type_short_name(to->dtype);
    const Call& rc = calls[back.front()];
    fi.what = "a tensor goes " + a + " -> " + b + " -> " + a + " (" + c.op + " #" + std::to_string(c.instruction) + ", " + rc.op +
              " #" + std::to_string(rc.instruction) + ")";
    std::vector<size_t> cost{k};
    cost.insert(cost.end(), back.begin(), back.end());
    for (size_t at : cost) fi.where.push_back(ctx.place(calls[at]));
    std::string mid;
    for (size_t m : between) mid += (mid.empty() ? "" : ", ") + calls[m].op;
    fi.evidence.push_back(ctx.describe_value(c.inputs.front()) + " -> " + ctx.describe_value(c.outputs.front()) + " -> " +
                          ctx.describe_value(rc.outputs.front()) + (mid.empty() ? " with nothing between" : "; between: " + mid));
    ctx.cost(fi, cost);
    if (mid.empty()) {
      fi.advice = "The conversions cancel: remove both (a .to(" + b + ") followed by .to(" + a + ") in the model).";
    } else if (is_floating_type(from->dtype) && is_floating_type(to->dtype) && element_size(to->dtype) > element_size(from->dtype)) {
      fi.advice = mid + " only combines elements, so computing it in " + b + " and rounding back to " + a +
                  " gives the " + a + " result to within its last bit: compute in " + a + " and drop both conversions.";
    } else {
      fi.advice = "Computing " + mid + " in " + b + " only loses precision and costs two copies: compute in " + a +
                  " and drop both conversions.";
    }
    f.calls = cost;
    out.push_back(std::move(f));
  }
}

}  // namespace etscope::findings
