#include "render/delegate_render.h"

#include <cmath>

#include "etscope/formats/xnnpack_payload.h"
#include "etscope/inspect/program_description.h"
#include "render/format.h"

namespace etscope::cli {
namespace {

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


Json value_json(const xnn::TensorValue& v) {
  Json j{{"id", v.id}, {"type", xnn::to_string(v.type)}, {"shape", v.shape}, {"constant", v.is_constant}};
  if (v.flags & xnn::kFlagExternalInput) j["input"] = v.external_id;
  if (v.flags & xnn::kFlagExternalOutput) j["output"] = v.external_id;
  if (!v.constant_key.empty()) j["named_data_key"] = v.constant_key;
  if (v.runtime_quantize_to != xnn::ElementType::kInvalid) j["quantized_on_arrival_to"] = xnn::to_string(v.runtime_quantize_to);
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
  for (size_t i = 0; i < plan.delegates.size(); ++i) {
    const Delegate& del = plan.delegates[i];
    const inspect::DelegateGraphDescription d = inspect::describe_delegate_graph(program, plan, i);
    out << "  delegate " << i << ": " << del.id << ", " << bytes_text(del.data.size) << (del.inline_data ? " inline" : " in a segment");
    if (del.id != xnn::kBackendId) {
      out << " (" << d.error << ")\n";
      continue;
    }
    if (!d.error.empty()) {
      all_read = false;
      out << "\n    error: " << d.error << "\n";
      continue;
    }
    out << ", " << d.summary << "\n";
    for (const inspect::DelegateNodeRow& n : d.nodes) {
      out << "    " << n.index << "  " << n.kind << "  handle " << n.debug_handle << "\n      in:";
      for (size_t k = 0; k < n.inputs.size(); ++k) out << (k ? "," : "") << " " << n.inputs[k];
      out << "\n      out:";
      for (size_t k = 0; k < n.outputs.size(); ++k) out << (k ? "," : "") << " " << n.outputs[k];
      if (!n.attributes.empty()) out << "\n      " << n.attributes;
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
      xnn::Graph g;
      const inspect::DelegateGraphDescription desc = inspect::describe_delegate_graph(program, plan, d, &g);
      if (!desc.error.empty()) {
        j["error"] = desc.error;
      } else {
        Json nodes = Json::array();
        for (size_t i = 0; i < g.nodes.size(); ++i) {
          const xnn::Node& n = g.nodes[i];
          Json in = Json::array(), outs = Json::array();
          for (int32_t v : n.inputs) in.push_back(v < 0 ? Json() : Json(g.values[static_cast<size_t>(v)].id));
          for (int32_t v : n.outputs) outs.push_back(g.values[static_cast<size_t>(v)].id);
          nodes.push_back(Json{{"kind", xnn::to_string(n.kind)}, {"debug_handle", n.debug_handle}, {"inputs", std::move(in)},
                               {"outputs", std::move(outs)}, {"attributes", desc.nodes[i].attributes}});
        }
        Json values = Json::array();
        for (const xnn::TensorValue& v : g.values) values.push_back(value_json(v));
        j["graph"] = Json{{"version", g.version}, {"nodes", std::move(nodes)}, {"values", std::move(values)}};
      }
    }
    list.push_back(std::move(j));
  }
  return Json{{"method", plan.name}, {"delegates", std::move(list)}};
}

}  // namespace etscope::cli
