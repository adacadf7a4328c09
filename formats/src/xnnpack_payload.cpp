// XNNPACK delegate payload reader. Sections: [names] [header] [values] [nodes] [graph]
#include "etscope/formats/xnnpack_payload.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "etscope/core/checked.h"
#include "etscope_fb/xnnpack_generated.h"
#include "etscope/flatbuffer_util/flatbuffer_util.h"

namespace etscope::xnn {
namespace fb = ::etscope::fb::xnn;

// ---------------------------------------------------------------------------------------------
// [names]

const char* to_string(ElementType t) {
  switch (t) {
    case ElementType::kInvalid: return "invalid";
    case ElementType::kF32: return "f32";
    case ElementType::kF16: return "f16";
    case ElementType::kQInt8: return "qint8";
    case ElementType::kQUInt8: return "quint8";
    case ElementType::kQInt32: return "qint32";
    case ElementType::kQCInt8: return "qcint8";
    case ElementType::kQCInt32: return "qcint32";
    case ElementType::kQCInt4: return "qcint4";
    case ElementType::kQDInt8: return "qdint8";
    case ElementType::kQBInt4: return "qbint4";
    case ElementType::kQPInt8: return "qpint8";
    case ElementType::kInt32: return "int32";
    case ElementType::kPF32: return "pf32";
    case ElementType::kBF16: return "bf16";
  }
  return "invalid";
}

const char* to_string(NodeKind k) {
  static constexpr const char* kNames[kNodeKindCount] = {
      "Add", "FullyConnected", "Softmax", "Sigmoid", "StaticTranspose", "Clamp", "Conv2d", "Div",
      "StaticResizeBilinear2D", "StaticConstantPad", "AvgPooling2d", "Minimum", "DepthwiseConv2d", "MaxPooling2d",
      "Multiply", "Subtract", "Floor", "Convert", "GlobalAvgPooling2d", "StaticReshape", "ArgMaxPooling2d",
      "SquareRoot", "Ceiling", "Hardswish", "LeakyReLU", "Maximum", "Negate", "Square", "ELU", "Abs", "PReLU",
      "Concatenate2", "Concatenate3", "Concatenate4", "StaticSlice", "ScaledDotProductAttention",
      "BatchMatrixMultiply", "Concatenate5", "ConvTranspose2d", "ReciprocalSquareRoot", "Log", "Gelu", "Tanh", "Exp",
      "Sin", "Copy", "Cos"};
  const size_t i = static_cast<size_t>(k);
  return i < kNodeKindCount ? kNames[i] : "?";
}

std::optional<uint64_t> tensor_bytes(ElementType type, std::span<const int64_t> shape) {
  uint64_t numel = 1;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    auto n = checked::mul(numel, static_cast<uint64_t>(d));
    if (!n) return std::nullopt;
    numel = *n;
  }
  switch (type) {
    case ElementType::kQCInt4:
    case ElementType::kQBInt4: {
      // Two a byte along the last dimension, each row starting on a byte.
      if (shape.empty()) return uint64_t{1};
      const uint64_t last = static_cast<uint64_t>(shape.back());
      return last == 0 ? uint64_t{0} : numel / last * ((last + 1) / 2);
    }
    case ElementType::kF16:
    case ElementType::kBF16: return checked::mul(numel, 2);
    case ElementType::kQInt8:
    case ElementType::kQUInt8:
    case ElementType::kQCInt8:
    case ElementType::kQDInt8:
    case ElementType::kQPInt8: return numel;
    case ElementType::kF32:
    case ElementType::kPF32:
    case ElementType::kQInt32:
    case ElementType::kQCInt32:
    case ElementType::kInt32: return checked::mul(numel, 4);
    case ElementType::kInvalid: break;
  }
  return std::nullopt;
}

namespace {

// ---------------------------------------------------------------------------------------------
// [header]

// The optional header: 4 bytes (unused), "XH00", u16 header length, u32 flatbuffer offset,
// u32 flatbuffer size, u32 constant offset, u64 constant size; all little-endian.
constexpr size_t kHeaderMin = 30;

// A name from the file, fit for a one-line message: control and non-ASCII bytes as '?', long
// names cut.
std::string printable(const std::string& s) {
  std::string out;
  for (char c : s.substr(0, 96)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return s.size() > 96 ? out + "..." : out;
}

uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

struct Ctx {
  std::string where;
  std::span<const uint8_t> payload;
  std::span<const uint8_t> constant_region;
  const NamedDataLookup* named = nullptr;
  const fb::Graph* root = nullptr;
  const uint8_t* fb_original = nullptr;  // the graph's bytes in the payload
  const uint8_t* fb_parsed = nullptr;    // the bytes parsed (an aligned copy when those are not)
  std::unordered_map<uint32_t, int32_t> index_of;  // value id -> index
  Error corrupt(const std::string& text) const { return Error(ErrorCode::kCorrupt, where + ": " + text); }
};

// ---------------------------------------------------------------------------------------------
// [values]

// The bytes of constant entry `index` (1-based; 0 means "not a constant").
Result<std::span<const uint8_t>> constant_bytes(const Ctx& ctx, uint32_t index, std::string* key_out,
                                                const std::string& what) {
  // With a header, constants are entries of the offset table (ExecuTorch reads the inline
  // table only from payloads without one).
  if (ctx.constant_region.data() != nullptr) {
    const auto* table = ctx.root->constants();
    if (table == nullptr || index >= table->size()) {
      return ctx.corrupt(what + ": constant " + std::to_string(index) + " is out of range (" +
                         std::to_string(table ? table->size() : 0) + " entries)");
    }
    const fb::ConstantRef* ref = table->Get(index);
    if (ref->key() != nullptr && ref->key()->size() > 0) {
      const std::string key = ref->key()->str();
      std::optional<std::span<const uint8_t>> found = (*ctx.named) ? (*ctx.named)(key) : std::nullopt;
      if (!found) return ctx.corrupt(what + ": constant '" + printable(key) + "' is not in the program's named data");
      if (key_out != nullptr) *key_out = key;
      return *found;
    }
    if (!checked::range_fits(ref->offset(), ref->size(), ctx.constant_region.size())) {
      return ctx.corrupt(what + ": constant " + std::to_string(index) + " (offset " + std::to_string(ref->offset()) + ", " +
                         std::to_string(ref->size()) + " bytes) lies outside the payload's constant region of " +
                         std::to_string(ctx.constant_region.size()) + " bytes");
    }
    return ctx.constant_region.subspan(static_cast<size_t>(ref->offset()), static_cast<size_t>(ref->size()));
  }
  const auto* inline_table = ctx.root->inline_constants();
  if (inline_table == nullptr || index >= inline_table->size() || inline_table->Get(index)->bytes() == nullptr) {
    return ctx.corrupt(what + ": constant " + std::to_string(index) + " is out of range");
  }
  const auto* v = inline_table->Get(index)->bytes();
  // Spans must point into the caller's payload, not into an aligned copy of the graph.
  return std::span<const uint8_t>(ctx.fb_original + (v->Data() - ctx.fb_parsed), v->size());
}

Result<std::vector<float>> read_scales(const Ctx& ctx, const flatbuffers::Vector<float>* inline_scales, uint32_t constant,
                                       uint32_t count, bool bf16, const std::string& what) {
  std::vector<float> out;
  if (constant != 0) {
    ETSCOPE_ASSIGN_OR_RETURN(std::span<const uint8_t> bytes, constant_bytes(ctx, constant, nullptr, what + " scales"));
    const size_t width = bf16 ? 2 : 4;
    if (bytes.size() / width < count) {
      return ctx.corrupt(what + ": its scales hold " + std::to_string(bytes.size()) + " bytes, " + std::to_string(count) +
                         " scales need " + std::to_string(size_t{count} * width));
    }
    out.resize(count);
    for (size_t i = 0; i < count; ++i) {
      if (bf16) {
        const uint32_t bits = uint32_t{load_u16(bytes.data() + 2 * i)} << 16;
        std::memcpy(&out[i], &bits, 4);
      } else {
        std::memcpy(&out[i], bytes.data() + 4 * i, 4);
      }
    }
    return out;
  }
  return flatbuffer_util::to_vector<float>(inline_scales);
}

Status read_value(Ctx& ctx, const fb::Value* v, size_t index, Graph* g) {
  const std::string what = "value " + std::to_string(index);
  const fb::Tensor* t = nullptr;
  const fb::QuantizedTensor* q = nullptr;
  if (v == nullptr) return ctx.corrupt(what + " is missing");
  switch (v->tensor_type()) {
    case fb::AnyTensor::Tensor: t = v->tensor_as_Tensor(); break;
    case fb::AnyTensor::QuantizedTensor:
      q = v->tensor_as_QuantizedTensor();
      if (q == nullptr) return ctx.corrupt(what + " is a quantized tensor without its table");
      t = q->base();
      break;
    default: return ctx.corrupt(what + " is neither a tensor nor a quantized tensor");
  }
  if (t == nullptr) return ctx.corrupt(what + " has no tensor");
  TensorValue out;
  out.id = t->id();
  const std::string named = what + " (id " + std::to_string(out.id) + ")";
  const auto code = static_cast<int>(t->element_type());
  if (code <= 0 || code > static_cast<int>(ElementType::kBF16)) {
    return ctx.corrupt(named + ": unknown element type " + std::to_string(code));
  }
  out.type = static_cast<ElementType>(code);
  const auto rq = static_cast<int>(t->runtime_quantize_to());
  if (rq < 0 || rq > static_cast<int>(ElementType::kBF16)) return ctx.corrupt(named + ": unknown run-time quantization type");
  out.runtime_quantize_to = static_cast<ElementType>(rq);
  if (t->shape() != nullptr) {
    if (t->shape()->size() > 6) return ctx.corrupt(named + ": rank " + std::to_string(t->shape()->size()) + " is above XNNPACK's 6");
    for (uint32_t d : *t->shape()) out.shape.push_back(d);
  }
  std::optional<uint64_t> nbytes = tensor_bytes(out.type, out.shape);
  if (!nbytes) return ctx.corrupt(named + ": its shape's element count overflows");
  out.nbytes = *nbytes;
  for (int64_t d : out.shape) out.numel *= static_cast<uint64_t>(d);
  out.flags = t->value_flags();
  if ((out.flags & ~(kFlagExternalInput | kFlagExternalOutput)) != 0) {
    return ctx.corrupt(named + ": unknown flag bits " + std::to_string(out.flags));
  }
  out.external_id = t->external();
  if (t->constant() != 0) {
    ETSCOPE_ASSIGN_OR_RETURN(out.constant, constant_bytes(ctx, t->constant(), &out.constant_key, named));
    if (out.constant.size() < out.nbytes) {
      return ctx.corrupt(named + ": its constant holds " + std::to_string(out.constant.size()) + " bytes, the tensor needs " +
                         std::to_string(out.nbytes));
    }
    out.constant = out.constant.first(static_cast<size_t>(out.nbytes));
    out.is_constant = true;
    if (out.flags != 0) return ctx.corrupt(named + ": a constant cannot be a graph input or output");
  }
  if (q != nullptr) {
    Quantization& qp = out.quant;
    switch (q->quantization_type()) {
      case fb::Quantization::TensorScale: {
        const auto* p = q->quantization_as_TensorScale();
        if (p == nullptr) return ctx.corrupt(named + ": its quantization parameters are missing");
        qp.kind = Quantization::Kind::kPerTensor;
        qp.scale = p->scale();
        qp.zero_point = p->zero_point();
        break;
      }
      case fb::Quantization::ChannelScales: {
        const auto* p = q->quantization_as_ChannelScales();
        if (p == nullptr) return ctx.corrupt(named + ": its quantization parameters are missing");
        qp.kind = Quantization::Kind::kPerChannel;
        if (p->axis() < 0 || static_cast<size_t>(p->axis()) >= out.shape.size()) {
          return ctx.corrupt(named + ": per-channel axis " + std::to_string(p->axis()) + " is outside its rank");
        }
        qp.axis = static_cast<uint32_t>(p->axis());
        const uint64_t channels = static_cast<uint64_t>(out.shape[qp.axis]);
        ETSCOPE_ASSIGN_OR_RETURN(qp.scales, read_scales(ctx, p->scales(), p->scales_constant(),
                                                        static_cast<uint32_t>(std::min<uint64_t>(channels, UINT32_MAX)), false, named));
        if (qp.scales.size() != channels) {
          return ctx.corrupt(named + ": " + std::to_string(qp.scales.size()) + " scales for " + std::to_string(channels) + " channels");
        }
        qp.zero_point = out.type == ElementType::kQCInt4 ? 8 : 0;
        break;
      }
      case fb::Quantization::BlockScales: {
        const auto* p = q->quantization_as_BlockScales();
        if (p == nullptr) return ctx.corrupt(named + ": its quantization parameters are missing");
        qp.kind = Quantization::Kind::kPerBlock;
        if (out.shape.size() != 2) return ctx.corrupt(named + ": blockwise quantization needs a 2-D tensor");
        if (p->block_size() <= 0 || out.shape[1] % p->block_size() != 0) {
          return ctx.corrupt(named + ": block size " + std::to_string(p->block_size()) + " does not divide " +
                             std::to_string(out.shape[1]) + " input channels");
        }
        qp.axis = static_cast<uint32_t>(std::max(p->axis(), 0));
        qp.block_size = static_cast<uint32_t>(p->block_size());
        const uint64_t count = static_cast<uint64_t>(out.shape[0]) * static_cast<uint64_t>(out.shape[1] / p->block_size());
        ETSCOPE_ASSIGN_OR_RETURN(qp.scales, read_scales(ctx, p->scales(), p->scales_constant(),
                                                        static_cast<uint32_t>(std::min<uint64_t>(count, UINT32_MAX)), true, named));
        if (qp.scales.size() != count) {
          return ctx.corrupt(named + ": " + std::to_string(qp.scales.size()) + " block scales, expected " + std::to_string(count));
        }
        qp.zero_point = 8;
        break;
      }
      case fb::Quantization::RowDynamic: {
        const auto* p = q->quantization_as_RowDynamic();
        if (p == nullptr) return ctx.corrupt(named + ": its quantization parameters are missing");
        qp.kind = Quantization::Kind::kPerRowDynamic;
        if (p->non_batch_dims() < 0 || static_cast<size_t>(p->non_batch_dims()) > out.shape.size()) {
          return ctx.corrupt(named + ": " + std::to_string(p->non_batch_dims()) + " non-batch dimensions for rank " +
                             std::to_string(out.shape.size()));
        }
        qp.non_batch_dims = static_cast<uint32_t>(p->non_batch_dims());
        if (out.is_constant) return ctx.corrupt(named + ": a dynamically quantized tensor cannot be a constant");
        break;
      }
      default: return ctx.corrupt(named + ": quantized tensor without quantization parameters");
    }
  }
  if (!ctx.index_of.emplace(out.id, static_cast<int32_t>(g->values.size())).second) {
    return ctx.corrupt(named + ": id " + std::to_string(out.id) + " is defined twice");
  }
  g->values.push_back(std::move(out));
  return ok_status();
}

// ---------------------------------------------------------------------------------------------
// [nodes]

struct NodeReader {
  Ctx& ctx;
  Node& node;
  std::string what;

  Status in(uint32_t id, bool optional = false) {
    if (optional && id == kNoValue) {
      node.inputs.push_back(-1);
      return ok_status();
    }
    auto it = ctx.index_of.find(id);
    if (it == ctx.index_of.end()) return ctx.corrupt(what + ": input id " + std::to_string(id) + " is not a value of the graph");
    node.inputs.push_back(it->second);
    return ok_status();
  }
  Status out(uint32_t id) {
    auto it = ctx.index_of.find(id);
    if (it == ctx.index_of.end()) return ctx.corrupt(what + ": output id " + std::to_string(id) + " is not a value of the graph");
    node.outputs.push_back(it->second);
    return ok_status();
  }
  template <typename T>
  Status table(const T* t) {
    if (t == nullptr) return ctx.corrupt(what + ": its attributes are missing");
    node.flags = t->flags();
    return ok_status();
  }
  Status binary(const fb::Binary* t) {
    ETSCOPE_TRY(table(t));
    ETSCOPE_TRY(in(t->a()));
    ETSCOPE_TRY(in(t->b()));
    return out(t->out());
  }
  Status unary(const fb::Unary* t) {
    ETSCOPE_TRY(table(t));
    ETSCOPE_TRY(in(t->x()));
    return out(t->out());
  }
  Status conv(const fb::Conv* t) {
    ETSCOPE_TRY(table(t));
    ConvParams& c = node.conv;
    c.padding = {t->pad_top(), t->pad_right(), t->pad_bottom(), t->pad_left()};
    c.kernel_h = t->kernel_h();
    c.kernel_w = t->kernel_w();
    c.stride_h = t->stride_h();
    c.stride_w = t->stride_w();
    c.dilation_h = t->dilation_h();
    c.dilation_w = t->dilation_w();
    c.group_in = t->group_in();
    c.group_out = t->group_out();
    c.groups = t->groups();
    c.adjustment_h = t->extra_h();
    c.adjustment_w = t->extra_w();
    ETSCOPE_TRY(in(t->x()));
    ETSCOPE_TRY(in(t->weight()));
    ETSCOPE_TRY(in(t->bias(), true));
    return out(t->out());
  }
  Status pool(const fb::Pool* t) {
    ETSCOPE_TRY(table(t));
    ConvParams& c = node.conv;
    c.padding = {t->pad_top(), t->pad_right(), t->pad_bottom(), t->pad_left()};
    c.kernel_h = t->window_h();
    c.kernel_w = t->window_w();
    c.stride_h = t->stride_h();
    c.stride_w = t->stride_w();
    c.dilation_h = t->dilation_h();
    c.dilation_w = t->dilation_w();
    ETSCOPE_TRY(in(t->x()));
    return out(t->out());
  }
  Status dims(const flatbuffers::Vector<uint32_t>* v, std::vector<uint32_t>* to, const char* name) {
    if (v == nullptr) return ctx.corrupt(what + ": its " + name + " are missing");
    if (v->size() > 6) return ctx.corrupt(what + ": " + std::to_string(v->size()) + " " + name + ", XNNPACK allows 6");
    *to = flatbuffer_util::to_vector<uint32_t>(v);
    return ok_status();
  }
  Status concat(const fb::Concat* t, int n) {
    ETSCOPE_TRY(table(t));
    node.axis = t->axis();
    const uint32_t ids[5] = {t->in1(), t->in2(), t->in3(), t->in4(), t->in5()};
    for (int i = 0; i < n; ++i) ETSCOPE_TRY(in(ids[i]));
    return out(t->out());
  }

  Status read(const fb::Node* n) {
    using O = fb::Op;
    const auto tag = static_cast<int>(n->op_type());
    if (tag <= 0 || tag > static_cast<int>(kNodeKindCount)) {
      return Error(ErrorCode::kNotSupported, ctx.where + ": " + what + " has an unknown kind (tag " + std::to_string(tag) + ")");
    }
    node.kind = static_cast<NodeKind>(tag - 1);
    what += " (" + std::string(to_string(node.kind)) + ")";
    node.debug_handle = n->debug_handle();
    if (const fb::OutputRange* r = n->output_range()) {
      node.output_min = r->low();
      node.output_max = r->high();
      if (!(node.output_min <= node.output_max)) return ctx.corrupt(what + ": its output range is empty");
    }
    switch (n->op_type()) {
      case O::Add: return binary(n->op_as_Add());
      case O::Divide: return binary(n->op_as_Divide());
      case O::Minimum: return binary(n->op_as_Minimum());
      case O::Maximum: return binary(n->op_as_Maximum());
      case O::Multiply: return binary(n->op_as_Multiply());
      case O::Subtract: return binary(n->op_as_Subtract());
      case O::PReLU: return binary(n->op_as_PReLU());
      case O::BatchMatMul: return binary(n->op_as_BatchMatMul());
      case O::Softmax: return unary(n->op_as_Softmax());
      case O::Sigmoid: return unary(n->op_as_Sigmoid());
      case O::Clamp: return unary(n->op_as_Clamp());
      case O::Floor: return unary(n->op_as_Floor());
      case O::Convert: return unary(n->op_as_Convert());
      case O::GlobalAvgPool2d: return unary(n->op_as_GlobalAvgPool2d());
      case O::Sqrt: return unary(n->op_as_Sqrt());
      case O::Ceil: return unary(n->op_as_Ceil());
      case O::HardSwish: return unary(n->op_as_HardSwish());
      case O::Negate: return unary(n->op_as_Negate());
      case O::Square: return unary(n->op_as_Square());
      case O::Abs: return unary(n->op_as_Abs());
      case O::RSqrt: return unary(n->op_as_RSqrt());
      case O::Log: return unary(n->op_as_Log());
      case O::Gelu: return unary(n->op_as_Gelu());
      case O::Tanh: return unary(n->op_as_Tanh());
      case O::Exp: return unary(n->op_as_Exp());
      case O::Sin: return unary(n->op_as_Sin());
      case O::Copy: return unary(n->op_as_Copy());
      case O::Cos: return unary(n->op_as_Cos());
      case O::Conv2d: return conv(n->op_as_Conv2d());
      case O::DepthwiseConv2d: return conv(n->op_as_DepthwiseConv2d());
      case O::ConvTranspose2d: return conv(n->op_as_ConvTranspose2d());
      case O::AvgPool2d: return pool(n->op_as_AvgPool2d());
      case O::MaxPool2d: return pool(n->op_as_MaxPool2d());
      case O::Concat2: return concat(n->op_as_Concat2(), 2);
      case O::Concat3: return concat(n->op_as_Concat3(), 3);
      case O::Concat4: return concat(n->op_as_Concat4(), 4);
      case O::Concat5: return concat(n->op_as_Concat5(), 5);
      case O::FullyConnected: {
        const fb::Linear* t = n->op_as_FullyConnected();
        ETSCOPE_TRY(table(t));
        ETSCOPE_TRY(in(t->x()));
        ETSCOPE_TRY(in(t->weight()));
        ETSCOPE_TRY(in(t->bias(), true));
        return out(t->out());
      }
      case O::Transpose: {
        const fb::Permute* t = n->op_as_Transpose();
        ETSCOPE_TRY(table(t));
        ETSCOPE_TRY(dims(t->perm(), &node.dims_a, "permutation entries"));
        ETSCOPE_TRY(in(t->x()));
        return out(t->out());
      }
      case O::ResizeBilinear2d: {
        const fb::ResizeBilinear* t = n->op_as_ResizeBilinear2d();
        ETSCOPE_TRY(table(t));
        node.new_h = t->height();
        node.new_w = t->width();
        ETSCOPE_TRY(in(t->x()));
        return out(t->out());
      }
      case O::ConstantPad: {
        const fb::Pad* t = n->op_as_ConstantPad();
        ETSCOPE_TRY(table(t));
        ETSCOPE_TRY(dims(t->before(), &node.dims_a, "leading paddings"));
        ETSCOPE_TRY(dims(t->after(), &node.dims_b, "trailing paddings"));
        node.alpha = t->value();
        ETSCOPE_TRY(in(t->x()));
        return out(t->out());
      }
      case O::StaticReshape: {
        const fb::Reshape* t = n->op_as_StaticReshape();
        ETSCOPE_TRY(table(t));
        ETSCOPE_TRY(dims(t->shape(), &node.dims_a, "new dimensions"));
        ETSCOPE_TRY(in(t->x()));
        return out(t->out());
      }
      case O::StaticSlice: {
        const fb::Slice* t = n->op_as_StaticSlice();
        ETSCOPE_TRY(table(t));
        ETSCOPE_TRY(dims(t->begin(), &node.dims_a, "slice offsets"));
        ETSCOPE_TRY(dims(t->size(), &node.dims_b, "slice sizes"));
        if (node.dims_a.size() != node.dims_b.size()) return ctx.corrupt(what + ": offsets and sizes differ in count");
        ETSCOPE_TRY(in(t->x()));
        return out(t->out());
      }
      case O::LeakyReLU: {
        const fb::LeakyRelu* t = n->op_as_LeakyReLU();
        ETSCOPE_TRY(table(t));
        node.alpha = t->slope();
        ETSCOPE_TRY(in(t->x()));
        return out(t->out());
      }
      case O::ELU: {
        const fb::Elu* t = n->op_as_ELU();
        ETSCOPE_TRY(table(t));
        node.alpha = t->alpha();
        ETSCOPE_TRY(in(t->x()));
        return out(t->out());
      }
      case O::ArgMaxPool2d: {
        const fb::ArgMaxPool* t = n->op_as_ArgMaxPool2d();
        ETSCOPE_TRY(table(t));
        node.conv.padding = {t->pad_top(), t->pad_right(), t->pad_bottom(), t->pad_left()};
        node.conv.kernel_h = t->window_h();
        node.conv.kernel_w = t->window_w();
        node.conv.stride_h = t->window_h();
        node.conv.stride_w = t->window_w();
        ETSCOPE_TRY(in(t->x()));
        ETSCOPE_TRY(out(t->out_values()));
        return out(t->out_indices());
      }
      case O::SDPA: {
        const fb::Attention* t = n->op_as_SDPA();
        ETSCOPE_TRY(table(t));
        for (uint32_t id : {t->q(), t->k(), t->v(), t->scale(), t->mask()}) ETSCOPE_TRY(in(id));
        return out(t->out());
      }
      case O::NONE: break;
    }
    return ctx.corrupt(what + " has no operator");
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// [graph]

Result<Graph> parse_xnnpack_payload(std::span<const uint8_t> payload, const NamedDataLookup& named, const std::string& where) {
  Ctx ctx;
  ctx.where = where;
  ctx.payload = payload;
  ctx.named = &named;
  Graph g;
  std::span<const uint8_t> fbytes = payload;
  if (payload.size() >= kHeaderMin && std::memcmp(payload.data() + 4, "XH00", 4) == 0) {
    const uint16_t header_len = load_u16(payload.data() + 8);
    const uint64_t fb_off = checked::load_u32(payload.data() + 10), fb_size = checked::load_u32(payload.data() + 14);
    const uint64_t c_off = checked::load_u32(payload.data() + 18), c_size = checked::load_u64(payload.data() + 22);
    if (header_len < kHeaderMin || header_len > payload.size()) {
      return ctx.corrupt("XNNPACK header length " + std::to_string(header_len) + " is impossible in a payload of " +
                         std::to_string(payload.size()) + " bytes");
    }
    if (!checked::range_fits(fb_off, fb_size, payload.size()) || !checked::range_fits(c_off, c_size, payload.size())) {
      return ctx.corrupt("the XNNPACK header places its graph or constants outside the " + std::to_string(payload.size()) +
                         "-byte payload");
    }
    g.has_header = true;
    g.flatbuffer_offset = fb_off;
    g.flatbuffer_size = fb_size;
    g.constant_offset = c_off;
    g.constant_size = c_size;
    fbytes = payload.subspan(static_cast<size_t>(fb_off), static_cast<size_t>(fb_size));
    // An empty constant region still selects the offset table over inline constants.
    static const uint8_t kEmpty = 0;
    ctx.constant_region = c_size == 0 ? std::span<const uint8_t>(&kEmpty, 0)
                                      : payload.subspan(static_cast<size_t>(c_off), static_cast<size_t>(c_size));
  } else {
    g.flatbuffer_size = payload.size();
  }
  // ExecuTorch writes "XN01" and still reads the older "XN00" (the same layout).
  if (fbytes.size() < 8 || (!flatbuffers::BufferHasIdentifier(fbytes.data(), "XN01") &&
                            !flatbuffers::BufferHasIdentifier(fbytes.data(), "XN00"))) {
    return ctx.corrupt("not an XNNPACK graph (no \"XN01\" or \"XN00\" identifier)");
  }
  // The header may place the graph at any offset (and a hostile program its payload anywhere):
  // flatbuffers reads tables in place, so a misaligned graph is parsed from an aligned copy.
  std::vector<uint64_t> aligned;
  ctx.fb_original = fbytes.data();
  if (reinterpret_cast<uintptr_t>(fbytes.data()) % alignof(uint64_t) != 0) {
    aligned.resize((fbytes.size() + 7) / 8);
    std::memcpy(aligned.data(), fbytes.data(), fbytes.size());
    fbytes = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(aligned.data()), fbytes.size());
  }
  ctx.fb_parsed = fbytes.data();
  flatbuffers::Verifier verifier(fbytes.data(), fbytes.size(), flatbuffer_util::verifier_options());
  if (!verifier.VerifyBuffer<fb::Graph>(nullptr)) return ctx.corrupt("the XNNPACK graph fails flatbuffer verification");
  ctx.root = fb::GetGraph(fbytes.data());
  const fb::Graph* root = ctx.root;
  g.version = flatbuffer_util::to_string(root->version());
  g.external_count = root->external_count();
  if (g.external_count > 4096) return ctx.corrupt(std::to_string(g.external_count) + " graph inputs and outputs (at most 4096)");
  const auto* values = root->values();
  const auto* nodes = root->nodes();
  if (values == nullptr || nodes == nullptr) return ctx.corrupt("the XNNPACK graph has no values or no nodes");
  if (values->size() > kMaxGraphItems || nodes->size() > kMaxGraphItems) {
    return ctx.corrupt("the XNNPACK graph has " + std::to_string(values->size()) + " values and " + std::to_string(nodes->size()) +
                       " nodes, beyond etscope's limit");
  }
  g.values.reserve(values->size());
  for (flatbuffers::uoffset_t i = 0; i < values->size(); ++i) ETSCOPE_TRY(read_value(ctx, values->Get(i), i, &g));
  g.nodes.resize(nodes->size());
  for (flatbuffers::uoffset_t i = 0; i < nodes->size(); ++i) {
    NodeReader r{ctx, g.nodes[i], "node " + std::to_string(i)};
    if (nodes->Get(i) == nullptr) return ctx.corrupt(r.what + " is missing");
    ETSCOPE_TRY(r.read(nodes->Get(i)));
  }
  // Graph inputs and outputs: the flagged values, by external id (the DelegateCall argument).
  std::vector<uint8_t> ext_used(g.external_count, 0);
  for (size_t i = 0; i < g.values.size(); ++i) {
    const TensorValue& v = g.values[i];
    if (v.flags == 0) continue;
    if (v.external_id >= g.external_count) {
      return ctx.corrupt("value " + std::to_string(i) + " (id " + std::to_string(v.id) + "): external id " +
                         std::to_string(v.external_id) + " is not below the graph's " + std::to_string(g.external_count));
    }
    if (ext_used[v.external_id]++) {
      return ctx.corrupt("external id " + std::to_string(v.external_id) + " is used by two values");
    }
    if (v.flags == (kFlagExternalInput | kFlagExternalOutput)) {
      return ctx.corrupt("value " + std::to_string(i) + " is both a graph input and a graph output");
    }
    (v.flags & kFlagExternalInput ? g.inputs : g.outputs).push_back(static_cast<int32_t>(i));
  }
  auto by_external = [&](int32_t a, int32_t b) {
    return g.values[static_cast<size_t>(a)].external_id < g.values[static_cast<size_t>(b)].external_id;
  };
  std::sort(g.inputs.begin(), g.inputs.end(), by_external);
  std::sort(g.outputs.begin(), g.outputs.end(), by_external);
  return g;
}

Result<Graph> parse_xnnpack_delegate(const Program& program, const Delegate& delegate, const std::string& where) {
  NamedDataLookup named = [&program](std::string_view key) -> std::optional<std::span<const uint8_t>> {
    for (const NamedDataEntry& e : program.named_data) {
      if (e.key == key && e.segment_index < program.segments.size()) return program.bytes(program.segments[e.segment_index]);
    }
    return std::nullopt;
  };
  return parse_xnnpack_payload(program.bytes(delegate.data), named, where);
}

}  // namespace etscope::xnn
