#include "render/delegate_render.h"

#include <cmath>

#include "etscope/formats/xnnpack_payload.h"
#include "render/format.h"

namespace etscope::cli {
namespace {

std::string dims_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

template <typename T>
std::string list_text(const std::vector<T>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

const char* quant_kind(xnn::Quantization::Kind k) {
  switch (k) {
    case xnn::Quantization::Kind::kNone: return "none";
    case xnn::Quantization::Kind::kPerTensor: return "per_tensor";
    case xnn::Quantization::Kind::kPerChannel: return "per_channel";
    case xnn::Quantization::Kind::kPerRowDynamic: return "per_row_dynamic";
    case xnn::Quantization::Kind::kPerBlock: return "per_block";
  }
  return "none";
}

std::string quant_text(const xnn::Quantization& q) {
  switch (q.kind) {
    case xnn::Quantization::Kind::kNone: return "";
    case xnn::Quantization::Kind::kPerTensor:
      return " scale " + float_string(q.scale) + " zp " + std::to_string(q.zero_point);
    case xnn::Quantization::Kind::kPerChannel:
      return " per-channel(axis " + std::to_string(q.axis) + ", " + std::to_string(q.scales.size()) + " scales)";
    case xnn::Quantization::Kind::kPerRowDynamic:
      return " dynamic per row(" + std::to_string(q.non_batch_dims) + " non-batch dims)";
    case xnn::Quantization::Kind::kPerBlock:
      return " per-block(axis " + std::to_string(q.axis) + ", block " + std::to_string(q.block_size) + ", " +
             std::to_string(q.scales.size()) + " scales)";
  }
  return "";
}

std::string value_text(const xnn::Graph& g, int32_t index) {
  if (index < 0) return "-";
  const xnn::TensorValue& v = g.values[static_cast<size_t>(index)];
  std::string s = "v" + std::to_string(v.id) + " " + xnn::to_string(v.type) + dims_text(v.shape);
  if (v.is_constant) s += " const";
  if (v.flags & xnn::kFlagExternalInput) s += " in#" + std::to_string(v.external_id);
  if (v.flags & xnn::kFlagExternalOutput) s += " out#" + std::to_string(v.external_id);
  return s + quant_text(v.quant);
}

std::string attributes_text(const xnn::Node& n) {
  std::string s;
  switch (n.kind) {
    case xnn::NodeKind::kConv2d:
    case xnn::NodeKind::kDepthwiseConv2d:
    case xnn::NodeKind::kConvTranspose2d:
    case xnn::NodeKind::kAvgPool2d:
    case xnn::NodeKind::kMaxPool2d:
    case xnn::NodeKind::kArgMaxPool2d: {
      const xnn::ConvParams& c = n.conv;
      s = "kernel " + std::to_string(c.kernel_h) + "x" + std::to_string(c.kernel_w) + " stride " + std::to_string(c.stride_h) + "x" +
          std::to_string(c.stride_w) + " pad " + list_text(std::vector<uint32_t>(c.padding.begin(), c.padding.end())) +
          " dilation " + std::to_string(c.dilation_h) + "x" + std::to_string(c.dilation_w);
      if (c.groups > 0 && n.kind != xnn::NodeKind::kAvgPool2d && n.kind != xnn::NodeKind::kMaxPool2d) {
        s += " groups " + std::to_string(c.groups) + " (" + std::to_string(c.group_in) + "->" + std::to_string(c.group_out) + ")";
      }
      break;
    }
    case xnn::NodeKind::kTranspose: s = "perm " + list_text(n.dims_a); break;
    case xnn::NodeKind::kReshape: s = "shape " + list_text(n.dims_a); break;
    case xnn::NodeKind::kSlice: s = "offsets " + list_text(n.dims_a) + " sizes " + list_text(n.dims_b); break;
    case xnn::NodeKind::kConstantPad:
      s = "before " + list_text(n.dims_a) + " after " + list_text(n.dims_b) + " value " + float_string(n.alpha);
      break;
    case xnn::NodeKind::kConcat2:
    case xnn::NodeKind::kConcat3:
    case xnn::NodeKind::kConcat4:
    case xnn::NodeKind::kConcat5: s = "axis " + std::to_string(n.axis); break;
    case xnn::NodeKind::kResizeBilinear2d: s = "size " + std::to_string(n.new_h) + "x" + std::to_string(n.new_w); break;
    case xnn::NodeKind::kLeakyRelu: s = "slope " + float_string(n.alpha); break;
    case xnn::NodeKind::kElu: s = "alpha " + float_string(n.alpha); break;
    default: break;
  }
  if (!std::isinf(n.output_min) || !std::isinf(n.output_max)) {
    s += (s.empty() ? "" : " ") + std::string("range [") + float_string(n.output_min) + ", " + float_string(n.output_max) + "]";
  }
  if (n.flags != 0) s += (s.empty() ? "" : " ") + std::string("flags ") + std::to_string(n.flags);
  return s;
}

Json value_json(const xnn::TensorValue& v) {
  Json j{{"id", v.id}, {"type", xnn::to_string(v.type)}, {"shape", v.shape}, {"constant", v.is_constant}};
  if (v.flags & xnn::kFlagExternalInput) j["input"] = v.external_id;
  if (v.flags & xnn::kFlagExternalOutput) j["output"] = v.external_id;
  if (!v.constant_key.empty()) j["named_data_key"] = v.constant_key;
  if (v.quant.kind != xnn::Quantization::Kind::kNone) {
    Json q{{"kind", quant_kind(v.quant.kind)}};
    if (v.quant.kind == xnn::Quantization::Kind::kPerTensor) {
      q["scale"] = v.quant.scale;
      q["zero_point"] = v.quant.zero_point;
    } else if (v.quant.kind == xnn::Quantization::Kind::kPerRowDynamic) {
      q["non_batch_dims"] = v.quant.non_batch_dims;
    } else {
      q["axis"] = v.quant.axis;
      q["scales"] = v.quant.scales.size();
      if (v.quant.block_size) q["block_size"] = v.quant.block_size;
    }
    j["quantization"] = std::move(q);
  }
  return j;
}

}  // namespace

bool print_delegates(std::ostream& out, const Program& program, const ExecutionPlan& plan) {
  bool all_read = true;
  out << "method " << plan.name << ": " << plan.delegates.size() << " delegate" << (plan.delegates.size() == 1 ? "" : "s") << "\n";
  for (size_t d = 0; d < plan.delegates.size(); ++d) {
    const Delegate& del = plan.delegates[d];
    out << "  delegate " << d << ": " << del.id << ", " << human_bytes(del.data.size) << (del.inline_data ? " inline" : " in a segment");
    if (del.id != xnn::kBackendId) {
      out << " (etscope does not read this backend's payload)\n";
      continue;
    }
    auto g = xnn::parse_xnnpack_delegate(program, del, program.name() + ": delegate " + std::to_string(d));
    if (!g.ok()) {
      all_read = false;
      out << "\n    error: " << g.error().message() << "\n";
      continue;
    }
    out << ", XNNPACK graph version " << g->version << ", " << g->nodes.size() << " nodes, " << g->values.size() << " values\n";
    for (size_t i = 0; i < g->nodes.size(); ++i) {
      const xnn::Node& n = g->nodes[i];
      out << "    " << i << "  " << xnn::to_string(n.kind) << "  handle " << n.debug_handle << "\n      in:";
      for (size_t k = 0; k < n.inputs.size(); ++k) out << (k ? "," : "") << " " << value_text(*g, n.inputs[k]);
      out << "\n      out:";
      for (size_t k = 0; k < n.outputs.size(); ++k) out << (k ? "," : "") << " " << value_text(*g, n.outputs[k]);
      const std::string attrs = attributes_text(n);
      if (!attrs.empty()) out << "\n      " << attrs;
      out << "\n";
    }
  }
  return all_read;
}

Json delegates_json(const Program& program, const ExecutionPlan& plan) {
  Json list = Json::array();
  for (size_t d = 0; d < plan.delegates.size(); ++d) {
    const Delegate& del = plan.delegates[d];
    Json j{{"index", d}, {"backend", del.id}, {"bytes", del.data.size}, {"inline", del.inline_data}};
    if (del.id == xnn::kBackendId) {
      auto g = xnn::parse_xnnpack_delegate(program, del, program.name() + ": delegate " + std::to_string(d));
      if (!g.ok()) {
        j["error"] = g.error().message();
      } else {
        Json nodes = Json::array();
        for (const xnn::Node& n : g->nodes) {
          Json in = Json::array(), outs = Json::array();
          for (int32_t v : n.inputs) in.push_back(v < 0 ? Json() : Json(g->values[static_cast<size_t>(v)].id));
          for (int32_t v : n.outputs) outs.push_back(g->values[static_cast<size_t>(v)].id);
          nodes.push_back(Json{{"kind", xnn::to_string(n.kind)}, {"debug_handle", n.debug_handle}, {"inputs", std::move(in)},
                               {"outputs", std::move(outs)}, {"attributes", attributes_text(n)}});
        }
        Json values = Json::array();
        for (const xnn::TensorValue& v : g->values) values.push_back(value_json(v));
        j["graph"] = Json{{"version", g->version}, {"nodes", std::move(nodes)}, {"values", std::move(values)}};
      }
    }
    list.push_back(std::move(j));
  }
  return Json{{"method", plan.name}, {"delegates", std::move(list)}};
}

}  // namespace etscope::cli
