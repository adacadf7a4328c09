// XNNPACK delegate: the payload reader on ExecuTorch's own payloads, execution on etscope's
// kernels against ExecuTorch's XNNPACK outputs, the ETDump's delegate events against the ones
// ExecuTorch's runtime recorded, and hostile payloads (every byte flipped, truncations).
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#if defined(__x86_64__)
#include <xmmintrin.h>
#endif
#include <nlohmann/json.hpp>

#include "etscope/etdump/etdump_reader.h"
#include "etscope/etdump/etdump_writer.h"
#include "etscope/formats/npy.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/formats/tensor_stats.h"
#include "etscope/formats/xnnpack_payload.h"
#include "etscope/runtime/method.h"
#include "etscope_fb/xnnpack_generated.h"
#include "testing/test_json.h"
#include "testing/test_util.h"

using namespace etscope;
using etscope::testing::fixture;
using etscope::testing::load_json;

namespace {

template <typename T>
T must(Result<T> r) {
  if (!r.ok()) FAIL(r.error().message());
  return std::move(r).value();
}

const std::string kConv = "simple_conv_xnnpack/simple_conv_xnnpack";

std::unique_ptr<runtime::Method> load_with_input(const Program& p, const NpyArray& input, EventTracer* tracer = nullptr) {
  runtime::MethodOptions mo;
  mo.tracer = tracer;
  auto m = must(runtime::Method::load(p, "forward", mo));
  REQUIRE(m->set_input(0, input.data, input.shape).ok());
  return m;
}

// The profiling events of a dump's first Execute block: names, or delegate ids with their
// integer id and metadata size, each with its chain and instruction.
std::vector<std::string> first_execute_profile(const etdump::EtDumpFile& f) {
  std::vector<std::string> out;
  for (const auto& b : f.blocks) {
    if (b.name != "Execute") continue;
    for (uint32_t i = 0; i < b.event_count; ++i) {
      const etdump::Event& e = f.events[b.first_event + i];
      if (e.kind != etdump::EventKind::kProfile) continue;
      const std::string s = e.delegate ? "delegate:" + f.delegate_refs[e.ref].id_str + " int " +
                                             std::to_string(f.delegate_refs[e.ref].id_int) + " meta " +
                                             std::to_string(f.delegate_refs[e.ref].metadata.size)
                                       : f.names[e.ref];
      out.push_back(s + " @" + std::to_string(e.chain) + "/" + std::to_string(e.instruction));
    }
    break;
  }
  return out;
}

}  // namespace

TEST_CASE("xnnpack payload of simple_conv_xnnpack reads as ExecuTorch wrote it", "[xnnpack][formats]") {
  Program p = must(PteReader::open(fixture(kConv + ".pte")));
  REQUIRE(p.plans.size() == 1);
  REQUIRE(p.plans[0].delegates.size() == 1);
  const Delegate& d = p.plans[0].delegates[0];
  CHECK(d.id == xnn::kBackendId);
  xnn::Graph g = must(xnn::parse_xnnpack_delegate(p, d, "simple_conv_xnnpack.pte: delegate 0"));
  CHECK(g.has_header);
  CHECK(g.external_count == 2);
  REQUIRE(g.values.size() == 6);
  REQUIRE(g.nodes.size() == 3);
  // NCHW input -> transpose to NHWC -> convolution with fused ReLU -> transpose back.
  CHECK(g.nodes[0].kind == xnn::NodeKind::kTranspose);
  CHECK(g.nodes[0].dims_a == std::vector<uint32_t>{0, 2, 3, 1});
  const xnn::Node& conv = g.nodes[1];
  CHECK(conv.kind == xnn::NodeKind::kConv2d);
  CHECK(conv.conv.kernel_h == 3);
  CHECK(conv.conv.padding == std::array<uint32_t, 4>{1, 1, 1, 1});
  CHECK(conv.conv.group_in == 3);
  CHECK(conv.conv.group_out == 16);
  CHECK(conv.output_min == 0.0f);
  CHECK(std::isinf(conv.output_max));
  const xnn::TensorValue& filter = g.values[static_cast<size_t>(conv.inputs[1])];
  CHECK(filter.is_constant);
  CHECK(filter.shape == std::vector<int64_t>{16, 3, 3, 3});
  CHECK(filter.constant.size() == 16 * 27 * 4);
  CHECK_FALSE(filter.constant_key.empty());  // ExecuTorch 1.5 puts weights in named data
  CHECK(g.nodes[2].dims_a == std::vector<uint32_t>{0, 3, 1, 2});
  REQUIRE(g.inputs.size() == 1);
  REQUIRE(g.outputs.size() == 1);
  CHECK(g.values[static_cast<size_t>(g.inputs[0])].external_id == 0);
  CHECK(g.values[static_cast<size_t>(g.outputs[0])].external_id == 1);
  CHECK(g.values[static_cast<size_t>(g.outputs[0])].shape == std::vector<int64_t>{1, 16, 32, 32});
}

// A NaN in the image stays NaN through the convolution and its fused ReLU, as in XNNPACK (its
// clamp takes the bound first, and max and min return their second operand for a NaN): ExecuTorch
// 1.5.1's runtime on this input gives 144 NaN outputs, the 3x3 window around it in 16 channels.
// (etscope's clamp took the sum first and turned them into zeros.)
TEST_CASE("xnnpack float convolution keeps a NaN input NaN as XNNPACK does", "[xnnpack][runtime]") {
  Program p = must(PteReader::open(fixture(kConv + ".pte")));
  NpyArray input = must(read_npy(fixture(kConv + ".input0.npy")));
  REQUIRE(input.shape.size() == 4);
  const int64_t h = input.shape[2], w = input.shape[3];
  float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(input.data.data() + (5 * w + 5) * sizeof(float), &nan, sizeof(float));  // channel 0, (5, 5)
  auto m = load_with_input(p, input);
  REQUIRE(m->execute().ok());
  const TensorImpl& out = *m->output(0).tensor;
  REQUIRE(out.numel() == 16 * h * w);
  int64_t nans = 0, inside = 0;
  for (int64_t c = 0; c < 16; ++c) {
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        const bool is_nan = std::isnan(out.data_as<float>()[(c * h + y) * w + x]);
        nans += is_nan;
        inside += is_nan && y >= 4 && y <= 6 && x >= 4 && x <= 6;
      }
    }
  }
  CHECK(nans == 144);
  CHECK(inside == 144);
}

TEST_CASE("xnnpack simple_conv_xnnpack runs and matches ExecuTorch's XNNPACK output", "[xnnpack][runtime]") {
  Program p = must(PteReader::open(fixture(kConv + ".pte")));
  NpyArray input = must(read_npy(fixture(kConv + ".input0.npy")));
  auto m = load_with_input(p, input);
  REQUIRE(m->execute().ok());
  const TensorImpl& out = *m->output(0).tensor;
  // ExecuTorch's runtime (XNNPACK backend) on the same input, as summarised by the export script.
  const nlohmann::json want = load_json(fixture(kConv + ".run.json"))["runtime_outputs"][0];
  REQUIRE(out.numel() == want["numel"].get<int64_t>());
  const float* o = out.data_as<float>();
  double sum = 0, mx = -1e30;
  for (int64_t i = 0; i < out.numel(); ++i) {
    sum += o[i];
    mx = std::max(mx, static_cast<double>(o[i]));
  }
  CHECK(sum == Approx(want["sum"].get<double>()).epsilon(1e-5));
  CHECK(mx == Approx(want["max"].get<double>()).epsilon(1e-5));
  const auto& first = want["first"];
  for (size_t i = 0; i < first.size(); ++i) CHECK(o[i] == Approx(first[i].get<double>()).epsilon(1e-4).margin(1e-6));
}

TEST_CASE("xnnpack delegate events are recorded as ExecuTorch's runtime records them", "[xnnpack][etdump]") {
  Program p = must(PteReader::open(fixture(kConv + ".pte")));
  NpyArray input = must(read_npy(fixture(kConv + ".input0.npy")));
  etdump::EtDumpWriter writer({});
  auto m = load_with_input(p, input, &writer);
  REQUIRE(m->execute().ok());
  etdump::EtDumpFile ours = must(etdump::EtDumpReader::read(etscope::testing::blob_of(must(writer.finish()), "ours.etdp")));
  etdump::EtDumpFile theirs = must(etdump::EtDumpReader::open(fixture(kConv + ".profile.etdp")));
  // The first execution block of each: the same events, in the same order, with the same ids.
  const std::vector<std::string> want = first_execute_profile(theirs);
  REQUIRE(want.size() == 5);
  CHECK(want[0] == "delegate:Transpose (ND, X32) #1 int -1 meta 0 @0/0");
  CHECK(first_execute_profile(ours) == want);
}

TEST_CASE("xnnpack payloads with any byte flipped or cut load cleanly or fail with one line", "[xnnpack][corrupt]") {
  const auto blob = etscope::testing::load(fixture(kConv + ".pte"));
  const std::vector<uint8_t> original(blob->bytes().begin(), blob->bytes().end());
  Program base = must(PteReader::read(etscope::testing::blob_of(original, "mutant.pte")));
  const FileRange payload = base.plans[0].delegates[0].data;
  NpyArray input = must(read_npy(fixture(kConv + ".input0.npy")));
  size_t loaded = 0, refused = 0;
  for (uint64_t off = payload.offset; off < payload.offset + payload.size; ++off) {
    for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xff}}) {
      std::vector<uint8_t> bytes = original;
      bytes[off] ^= flip;
      auto p = PteReader::read(etscope::testing::blob_of(bytes, "mutant.pte"));
      if (!p.ok()) continue;
      auto m = runtime::Method::load(*p, "forward");
      if (!m.ok()) {
        ++refused;
        INFO(m.error().message());
        CHECK(m.error().message().rfind("mutant.pte", 0) == 0);
        CHECK(m.error().message().find('\n') == std::string::npos);
        continue;
      }
      ++loaded;
      // What loads must run within its buffers (ASan watches); its numbers may differ.
      if ((*m)->set_input(0, input.data, input.shape).ok()) (void)(*m)->execute();
    }
  }
  CHECK(refused > 100);
  CHECK(loaded > 100);
  // A payload cut anywhere is refused by the reader.
  const auto bytes = std::span<const uint8_t>(original).subspan(static_cast<size_t>(payload.offset), static_cast<size_t>(payload.size));
  for (size_t len = 0; len < bytes.size(); len += 7) {
    auto g = xnn::parse_xnnpack_payload(bytes.first(len), {}, "cut");
    CHECK_FALSE(g.ok());
  }
}

// ---------------------------------------------------------------------------------------------
// The programs of tests/fixtures/executorch/xnnpack (samples/export/export_xnnpack.py): fp32 CNNs,
// MobileNetV3-small, a transformer encoder, pt2e per-channel and dynamically quantized models,
// 4-bit groupwise weights, fp16, a partially delegated model, and most node kinds.

namespace {

// The programs of a fixture directory (xnnpack/ or xnnpack_dynamic/), as "dir/name".
std::vector<std::string> xnnpack_models(const std::string& dir = "xnnpack") {
  std::vector<std::string> names;
  const nlohmann::json index = load_json(fixture(dir + "/index.json"));
  for (auto it = index.begin(); it != index.end(); ++it) {
    const std::string& file = it.key();
    if (file.size() > 4 && file.compare(file.size() - 4, 4, ".pte") == 0) names.push_back(dir + "/" + file.substr(0, file.size() - 4));
  }
  return names;
}

bool exists(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  std::fclose(f);
  return true;
}

// Sets a method's inputs from `<prefix>.input<i>.npy`.
void set_inputs(runtime::Method& m, const std::string& prefix) {
  for (size_t i = 0; i < m.num_inputs(); ++i) {
    NpyArray in = must(read_npy(fixture(prefix + ".input" + std::to_string(i) + ".npy")));
    REQUIRE(m.set_input(i, in.data, in.shape).ok());
  }
}

// Loads `forward` of a fixture program (Program kept alive by the caller) with its stored inputs.
std::unique_ptr<runtime::Method> load_fixture(const Program& p, const std::string& base, EventTracer* tracer = nullptr,
                                              runtime::MatrixTiles tiles = runtime::MatrixTiles::kAuto) {
  runtime::MethodOptions mo;
  mo.tracer = tracer;
  mo.matrix_tiles = tiles;
  auto m = must(runtime::Method::load(p, "forward", mo));
  set_inputs(*m, base);
  return m;
}

// The method's outputs against ExecuTorch's `<prefix>.output<o>.npy`: same dtype and shape, f32
// within 1e-4 relative (+1e-5 absolute); f16 within a few units in the last place (XNNPACK
// accumulates in f16, etscope in f32 rounded to f16 after each node).
void check_outputs(const runtime::Method& m, const std::string& prefix) {
  for (size_t o = 0; o < m.num_outputs(); ++o) {
    NpyArray want = must(read_npy(fixture(prefix + ".output" + std::to_string(o) + ".npy")));
    const TensorImpl& got = *m.output(o).tensor;
    REQUIRE(got.dtype() == want.dtype);
    REQUIRE(std::vector<int64_t>(got.sizes().begin(), got.sizes().end()) == want.shape);
    const bool half = got.dtype() == ScalarType::kHalf;
    const double rtol = half ? 4e-3 : 1e-4, atol = half ? 1e-3 : 1e-5;
    size_t bad = 0;
    double worst = 0;
    for (int64_t i = 0; i < got.numel(); ++i) {
      const double g = element_as_double(got.dtype(), static_cast<const uint8_t*>(got.data()), static_cast<size_t>(i));
      const double w = element_as_double(want.dtype, want.data.data(), static_cast<size_t>(i));
      worst = std::max(worst, std::abs(g - w));
      if (!(std::abs(g - w) <= atol + rtol * std::abs(w))) ++bad;
    }
    INFO(prefix << " output " << o << ": max abs error " << worst);
    CHECK(bad == 0);
  }
}

// Executes the method and checks its outputs against `<prefix>.output<o>.npy`.
void execute_and_check(runtime::Method& m, const std::string& prefix) {
  Status s = m.execute();
  if (!s.ok()) FAIL(prefix << ": " << s.error().message());
  check_outputs(m, prefix);
}

}  // namespace

TEST_CASE("xnnpack fixtures run and match ExecuTorch's XNNPACK outputs", "[xnnpack][runtime][fixtures]") {
  const std::vector<std::string> models = xnnpack_models();
  REQUIRE(models.size() >= 10);
  for (const std::string& base : models) {
    INFO(base);
    Program p = must(PteReader::open(fixture(base + ".pte")));
    auto m = load_fixture(p, base);
    execute_and_check(*m, base);
  }
}

// MethodOptions::threads splits convolutions and fully connected layers (fp32, int8, qd8; by rows
// and, for a single row, by outputs) into blocks of independent outputs: every output byte is the
// same on one thread as on two or three (every node split: min_split_ops 0), and the method says
// how many it has.
TEST_CASE("xnnpack programs compute the same bytes on 1, 2 and 3 threads", "[xnnpack][runtime][fixtures][threads]") {
  std::vector<std::string> models = xnnpack_models();
  for (const char* q : {"xnnq_mbv2_pool", "xnnq_resnet_block", "xnnq_mixed", "xnnq_clamps", "xnnq_conv_windows", "xnnq_adds", "xnnq_concats"}) {
    models.push_back(std::string("xnnpack_quantized/") + q);
  }
  for (const char* q : {"qd8_4w_g32", "qd8_4w_g256_wide", "qd8_8w_odd"}) models.push_back(std::string("xnnpack_qd8/") + q);
  for (const std::string& base : models) {
    INFO(base);
    Program p = must(PteReader::open(fixture(base + ".pte")));
    std::vector<std::vector<uint8_t>> first;
    for (uint32_t threads : {1u, 2u, 3u}) {
      runtime::MethodOptions mo;
      mo.threads = threads;
      mo.min_split_ops = 0;
      auto m = must(runtime::Method::load(p, "forward", mo));
      CHECK(m->threads() == threads);
      set_inputs(*m, base);
      REQUIRE(m->execute().ok());
      for (size_t o = 0; o < m->num_outputs(); ++o) {
        const TensorImpl& t = *m->output(o).tensor;
        const auto* b = static_cast<const uint8_t*>(t.data());
        std::vector<uint8_t> bytes(b, b + t.nbytes());
        if (threads == 1) {
          first.push_back(std::move(bytes));
        } else {
          INFO("output " << o << " on " << threads << " threads");
          CHECK(bytes == first.at(o));
        }
      }
    }
  }
}

namespace {

// The method's f32 output 0 against ExecuTorch's `<prefix>.output0.npy`, bit for bit.
void execute_and_check_bits(runtime::Method& m, const std::string& prefix) {
  Status s = m.execute();
  if (!s.ok()) FAIL(prefix << ": " << s.error().message());
  NpyArray want = must(read_npy(fixture(prefix + ".output0.npy")));
  const TensorImpl& got = *m.output(0).tensor;
  REQUIRE(got.dtype() == ScalarType::kFloat);
  REQUIRE(std::vector<int64_t>(got.sizes().begin(), got.sizes().end()) == want.shape);
  REQUIRE(static_cast<size_t>(got.numel()) * 4 == want.data.size());
  size_t differ = 0;
  double worst = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    float w;
    std::memcpy(&w, want.data.data() + 4 * i, 4);
    const float g = got.data_as<float>()[i];
    differ += std::memcmp(&g, &w, 4) != 0;
    worst = std::max(worst, std::abs(static_cast<double>(g) - w));
  }
  INFO(prefix << ": " << differ << " of " << got.numel() << " differ, max abs error " << worst);
  CHECK(differ == 0);
}

}  // namespace

// Fully connected layers on dynamically quantized rows (qd8: torchao 8da4w / 8da8w, ExecuTorch's
// LLM linears): XNNPACK quantizes each row with its own zero point and scale, sums in int32 and
// scales in float in its kernels' order, and etscope does the same, so every output equals
// ExecuTorch's bit for bit: qcint8 and blockwise qbint4 filters (blocks of 32 to 256 and a whole
// row), odd K, several rows, with and without bias, an all-zero row, an all-positive row and one
// of large values (tests/fixtures/executorch/xnnpack_qd8, export_xnnpack_qd8.py), prefill-sized
// ones of 16-40 rows, the older fixtures, a graph input quantized on arrival, and a dynamic graph
// at every shape. Each with the integer sums on AMX tiles wherever the machine has them (forced,
// for every layer), by default (layers of 12 rows and more, not blocks of 32), and never.
TEST_CASE("xnnpack qd8 fully connected layers equal ExecuTorch's outputs bit for bit", "[xnnpack][runtime][fixtures][qd8]") {
  std::vector<std::string> models = {"xnnpack/xnn_4bit", "xnnpack/xnn_dqlinear", "xnnpack_handmade/xnnh_dq_legacy"};
  for (const char* name : {"qd8_4w_g32", "qd8_4w_g64_nobias", "qd8_4w_g128", "qd8_4w_g256_wide", "qd8_4w_row", "qd8_8w_odd",
                           "qd8_8w_nobias", "qd8_8w_rows40", "qd8_4w_g64_rows19", "qd8_4w_row_rows24", "qd8_4w_g32_rows16"}) {
    models.push_back(std::string("xnnpack_qd8/") + name);
  }
  const runtime::MatrixTiles tiles = GENERATE(runtime::MatrixTiles::kAlways, runtime::MatrixTiles::kAuto, runtime::MatrixTiles::kOff);
  INFO("matrix tiles " << static_cast<int>(tiles));
  for (const std::string& base : models) {
    INFO(base);
    Program p = must(PteReader::open(fixture(base + ".pte")));
    auto m = load_fixture(p, base, nullptr, tiles);
    execute_and_check_bits(*m, base);
    set_inputs(*m, base);
    execute_and_check_bits(*m, base);  // a second execution on the same load
    // Rows with infinities (export_xnnpack_qd8.py --infinities): an infinite range, XNNPACK's
    // zero point NaN before its clamp (qmin after it; converting the NaN was undefined behaviour).
    if (exists(fixture(base + ".inf.input0.npy"))) {
      set_inputs(*m, base + ".inf");
      execute_and_check_bits(*m, base + ".inf");
    }
  }
  const std::string dyn = "xnnpack_dynamic/xnn_dyn_dqlinear";
  Program p = must(PteReader::open(fixture(dyn + ".pte")));
  auto m = load_fixture(p, dyn, nullptr, tiles);
  execute_and_check_bits(*m, dyn);
  int shapes = 0;
  for (int k = 0; exists(fixture(dyn + ".shape" + std::to_string(k) + ".input0.npy")); ++k, ++shapes) {
    set_inputs(*m, dyn + ".shape" + std::to_string(k));
    execute_and_check_bits(*m, dyn + ".shape" + std::to_string(k));
  }
  CHECK(shapes >= 2);
}

// An LLM's RMSNorm as ExecuTorch's exporter writes it (tests/fixtures/executorch/xnnpack_rmsnorm,
// export_xnnpack_rmsnorm.py): XNNPACK's reciprocal square root is a 14-bit estimate and one
// Newton-Raphson step (not 1 / sqrt correctly rounded; zeros and subnormals give NaN, +inf 0, a
// subnormal square of the estimate is flushed), and the mean of squares outside the delegate is
// ExecuTorch's float sum in order. Both reach bit for bit here: rsqrt alone on values over 60
// decades and the special ones, and RMSNorm before an 8da4w linear, whose rows quantized to int8
// turn any last-place difference in the norm into a quantization step (the 8da4w LLM exports'
// logits differed by 0.14 that way).
// HardSwish too: XNNPACK's x * min(max(fma(x, 1/6, 1/2), 0), 1), not x * clamp(x + 3, 0, 6) / 6.
// And a depthwise convolution of 81 taps, more than the per-pixel tap lists hold.
TEST_CASE("xnnpack RMSNorm rsqrt HardSwish and a 9x9 depthwise equal ExecuTorch's outputs bit for bit", "[xnnpack][runtime][fixtures][qd8]") {
  for (const char* name : {"rsqrt_values", "rmsnorm_8da4w", "hardswish_values", "depthwise_9x9"}) {
    const std::string base = std::string("xnnpack_rmsnorm/") + name;
    INFO(base);
    // XNNPACK's reciprocal square root is its AVX-512 kernel's estimate and Newton step: a build
    // without AVX-512 computes 1 / sqrt(x) (a baseline build: 717 and 5848 values differ).
    const bool rsqrt = std::string(name) == "rsqrt_values" || std::string(name) == "rmsnorm_8da4w";
    if (rsqrt && !runtime::xnnpack_float_kernels_as_xnnpack()) {
      WARN(base << ": not compared bit for bit, this runtime is not built for AVX-512F");
      continue;
    }
    Program p = must(PteReader::open(fixture(base + ".pte")));
    auto m = load_fixture(p, base);
    execute_and_check_bits(*m, base);
  }
}

// Float activations between quantized convolutions (dequantize, op, quantize), which XNNPACK runs
// as one 256-entry table per chain and etscope too (runtime/src/xnnpack/lookup_tables.cpp):
// chains of HardSwish, sigmoid then tanh, and GELU; a sigmoid whose quantized output a Multiply
// with a graph input reads (no raw integers: it stays nodes); ops that stay nodes in XNNPACK too
// (a dequantized value two ops read, a chain ending in floats). Bit for bit; that the tables give
// what the nodes give on inputs reaching many of the 256 integers: the logging test below.
TEST_CASE("xnnpack float activations between int8 layers run as lookup tables bit for bit", "[xnnpack][runtime][fixtures][quantized]") {
  const std::string base = "xnnpack/xnn_qunary";
  Program p = must(PteReader::open(fixture(base + ".pte")));
  auto m = load_fixture(p, base);
  execute_and_check_bits(*m, base);
}

// Graph forms ExecuTorch 1.5.1's runtime still runs but its exporter no longer writes
// (tests/fixtures/executorch/xnnpack_handmade, payloads edited by export_xnnpack_handmade.py):
// a graph input quantized per row on arrival (dq_datatype) instead of through a Convert node, and
// argmax pooling with a 2x3 window, padding, ties and its int32 indices widened to int64.
TEST_CASE("xnnpack graph forms the exporter no longer writes run as ExecuTorch runs them", "[xnnpack][runtime][fixtures]") {
  for (const char* name : {"xnnh_dq_legacy", "xnnh_argmax_pool"}) {
    INFO(name);
    const std::string base = std::string("xnnpack_handmade/") + name;
    Program p = must(PteReader::open(fixture(base + ".pte")));
    auto m = load_fixture(p, base);
    execute_and_check(*m, base);
    execute_and_check(*m, base);  // a second execution reads what the first left nowhere
  }
}

// Programs exported with dynamic shapes (XNNPACK graphs declared at their upper bounds): one
// loaded method runs at every shape ExecuTorch ran, smaller and larger in turn and back to the
// first, and matches ExecuTorch's outputs each time; an input above the bound is refused.
TEST_CASE("xnnpack dynamic-shape fixtures match ExecuTorch at every shape", "[xnnpack][runtime][fixtures][dynamic]") {
  const std::vector<std::string> models = xnnpack_models("xnnpack_dynamic");
  REQUIRE(models.size() >= 4);
  size_t shapes_run = 0;
  for (const std::string& base : models) {
    INFO(base);
    Program p = must(PteReader::open(fixture(base + ".pte")));
    auto m = load_fixture(p, base);
    execute_and_check(*m, base);
    for (int k = 0; exists(fixture(base + ".shape" + std::to_string(k) + ".input0.npy")); ++k) {
      const std::string prefix = base + ".shape" + std::to_string(k);
      set_inputs(*m, prefix);
      execute_and_check(*m, prefix);
      ++shapes_run;
    }
    set_inputs(*m, base);
    execute_and_check(*m, base);
    if (exists(fixture(base + ".oversize.input0.npy"))) {
      bool refused = false;
      std::string message;
      for (size_t i = 0; i < m->num_inputs() && !refused; ++i) {
        NpyArray in = must(read_npy(fixture(base + ".oversize.input" + std::to_string(i) + ".npy")));
        Status st = m->set_input(i, in.data, in.shape);
        if (!st.ok()) refused = true, message = st.error().message();
      }
      if (!refused) {
        Status st = m->execute();
        refused = !st.ok();
        if (refused) message = st.error().message();
      }
      CHECK(refused);
      CHECK(message.find('\n') == std::string::npos);
    }
  }
  CHECK(shapes_run >= 2 * models.size());
}

// Shapes within the bounds that the graph cannot propagate (ExecuTorch: "Propagating input shapes
// failed", error 0x1) are refused with one line naming the node; the method then runs a valid
// shape again, as ExecuTorch's does.
TEST_CASE("xnnpack dynamic graphs refuse shapes they cannot propagate and recover", "[xnnpack][runtime][dynamic]") {
  struct Case {
    const char* model;
    std::vector<std::vector<int64_t>> shapes;
    const char* says;
  };
  // A static dimension changed (the weights want 64 features), and two inputs that share one
  // dynamic dimension given different lengths.
  for (const Case& c : {Case{"xnn_dyn_mlp", {{3, 32}}, "differs from the weight's 64"},
                        Case{"xnn_dyn_conv1d", {{1, 4, 20}, {1, 4, 24}}, "XNNPACK node"}}) {
    INFO(c.model);
    const std::string base = std::string("xnnpack_dynamic/") + c.model;
    Program p = must(PteReader::open(fixture(base + ".pte")));
    auto m = load_fixture(p, base);
    for (size_t i = 0; i < c.shapes.size(); ++i) {
      int64_t n = 1;
      for (int64_t d : c.shapes[i]) n *= d;
      std::vector<uint8_t> zeros(static_cast<size_t>(n) * 4, 0);
      REQUIRE(m->set_input(i, zeros, c.shapes[i]).ok());
    }
    Status s = m->execute();
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.error().message(), Catch::Contains(c.says));
    CHECK(s.error().message().find('\n') == std::string::npos);
    set_inputs(*m, base + ".shape0");
    execute_and_check(*m, base + ".shape0");
  }
}

namespace {

// Runs the method and compares its output with ExecuTorch's (`want`), in output quantization
// steps: none may differ when `steps` is 0, none by more than `steps` otherwise.
void check_within_steps(runtime::Method& m, const std::string& want_path, double steps) {
  Status s = m.execute();
  if (!s.ok()) FAIL(s.error().message());
  NpyArray want = must(read_npy(want_path));
  const TensorImpl& got = *m.output(0).tensor;
  REQUIRE(got.dtype() == ScalarType::kFloat);
  REQUIRE(static_cast<size_t>(got.numel()) * 4 == want.data.size());
  // The output's step: the smallest gap between distinct values ExecuTorch produced.
  std::vector<float> w(static_cast<size_t>(got.numel()));
  std::memcpy(w.data(), want.data.data(), want.data.size());
  std::vector<float> sorted = w;
  std::sort(sorted.begin(), sorted.end());
  double step = 1e30;
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i] != sorted[i - 1]) step = std::min(step, static_cast<double>(sorted[i] - sorted[i - 1]));
  }
  size_t differ = 0;
  double worst = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    const float g = got.data_as<float>()[i];
    differ += g != w[i];
    worst = std::max(worst, std::abs(static_cast<double>(g) - w[i]));
  }
  INFO("differ " << differ << " of " << w.size() << ", max " << worst << ", step " << step);
  if (steps == 0) {
    CHECK(differ == 0);
  } else {
    CHECK(worst <= steps * step * 1.001);
  }
}

// pt2e int8 programs where rounding ties decide (tests/fixtures/executorch/xnnpack_quantized):
// integer layers, XNNPACK's fixed-point add and its mean must round exactly as XNNPACK does, or
// one-step differences grow layer by layer (a float emulation is up to 22 steps off).
struct QuantizedCase {
  const char* model;
  double steps;  // allowed difference, in output quantization steps
};
const QuantizedCase kQuantizedCases[] = {{"xnnq_resnet_block", 0}, {"xnnq_mbv2_pool", 0}, {"xnnq_mixed", 0}, {"xnnq_clamps", 0}, {"xnnq_conv_windows", 0}, {"xnnq_adds", 0}, {"xnnq_concats", 0}};

}  // namespace

// Each with its convolutions' and linears' integer sums on AMX tiles wherever the machine has
// them (forced for every GEMM: partial row tiles, inputs not a multiple of 64), by default, and
// never: the same integers.
TEST_CASE("xnnpack int8 programs round as XNNPACK does", "[xnnpack][runtime][quantized]") {
  const runtime::MatrixTiles tiles = GENERATE(runtime::MatrixTiles::kAlways, runtime::MatrixTiles::kAuto, runtime::MatrixTiles::kOff);
  INFO("matrix tiles " << static_cast<int>(tiles));
  for (const QuantizedCase& c : kQuantizedCases) {
    INFO(c.model);
    const std::string base = std::string("xnnpack_quantized/") + c.model;
    Program p = must(PteReader::open(fixture(base + ".pte")));
    auto m = load_fixture(p, base, nullptr, tiles);
    check_within_steps(*m, fixture(base + ".output0.npy"), c.steps);
  }
}

// NaN and infinities converted to int8 (export_xnnpack_quantized.py's nonfinite_input): NaN
// has no integer, and passed through a min/max clamp it reached undefined casts (UBSan).
// XNNPACK's x86 kernels give it the top of the range, and so must etscope.
TEST_CASE("xnnpack int8 programs convert NaN and infinities as XNNPACK does", "[xnnpack][runtime][quantized]") {
  for (const QuantizedCase& c : kQuantizedCases) {
    INFO(c.model);
    const std::string base = std::string("xnnpack_quantized/") + c.model;
    Program p = must(PteReader::open(fixture(base + ".pte")));
    auto m = load_fixture(p, base);
    NpyArray x = must(read_npy(fixture(base + ".input0.npy")));
    std::vector<float> v(x.data.size() / 4);
    std::memcpy(v.data(), x.data.data(), x.data.size());
    for (size_t i = 0; i < v.size(); i += 7) v[i] = std::numeric_limits<float>::quiet_NaN();
    for (size_t i = 1; i < v.size(); i += 11) v[i] = std::numeric_limits<float>::infinity();
    for (size_t i = 2; i < v.size(); i += 13) v[i] = -std::numeric_limits<float>::infinity();
    std::memcpy(x.data.data(), v.data(), x.data.size());
    REQUIRE(m->set_input(0, x.data).ok());
    check_within_steps(*m, fixture(base + ".nonfinite.output0.npy"), c.steps);
  }
}

// Integer layers hand raw int8 integers to the integer layers after them (plan_raw_values in
// runtime/src/xnnpack) unless an execution logs intermediate outputs, which computes through
// floats, and chains of float nodes between int8 values run as lookup tables unless logged: both
// give the same bytes, on the fixtures' inputs, on ones with NaN and infinities and on ones
// scaled to reach other integers, on one and two threads, and a logged execution between two
// plain ones changes nothing.
TEST_CASE("xnnpack int8 programs give the same bytes with and without intermediate logging", "[xnnpack][runtime][quantized]") {
  std::vector<std::string> models = {"xnnpack/xnn_qcnn", "xnnpack/xnn_qunary"};
  for (const QuantizedCase& c : kQuantizedCases) models.push_back(std::string("xnnpack_quantized/") + c.model);
  auto bytes_of = [](const runtime::Method& m) {
    std::vector<std::vector<uint8_t>> out;
    for (size_t o = 0; o < m.num_outputs(); ++o) {
      const TensorImpl& t = *m.output(o).tensor;
      const auto* b = static_cast<const uint8_t*>(t.data());
      out.emplace_back(b, b + t.nbytes());
    }
    return out;
  };
  for (const std::string& base : models) {
    for (const char* variant : {"as given", "with NaN and infinities", "times 0.05", "times 4", "times 40"}) {
      for (uint32_t threads : {1u, 2u}) {
        INFO(base << " input " << variant << " on " << threads << " threads");
        Program p = must(PteReader::open(fixture(base + ".pte")));
        std::vector<uint8_t> buffer(16 << 20);
        etdump::EtDumpWriterOptions options;
        options.debug_buffer = buffer;
        etdump::EtDumpWriter writer(options);
        runtime::MethodOptions mo;
        mo.tracer = &writer;
        mo.threads = threads;
        mo.min_split_ops = 0;
        auto m = must(runtime::Method::load(p, "forward", mo));
        NpyArray x = must(read_npy(fixture(base + ".input0.npy")));
        std::vector<float> v(x.data.size() / 4);
        std::memcpy(v.data(), x.data.data(), x.data.size());
        if (variant[0] == 'w') {
          for (size_t i = 0; i < v.size(); i += 7) v[i] = std::numeric_limits<float>::quiet_NaN();
          for (size_t i = 1; i < v.size(); i += 11) v[i] = -std::numeric_limits<float>::infinity();
        } else if (variant[0] == 't') {
          const float scale = std::stof(std::string(variant + 6));
          for (float& f : v) f *= scale;
        }
        std::memcpy(x.data.data(), v.data(), x.data.size());
        // Each execution sets the input again: a memory plan may reuse the input's bytes once it
        // is read (xnn_qunary's portable ELU writes over it), in ExecuTorch's runtime as here.
        auto run = [&](DebugLevel level) {
          writer.set_debug_level(level);
          REQUIRE(m->set_input(0, x.data).ok());
          REQUIRE(m->execute().ok());
          return bytes_of(*m);
        };
        const auto plain = run(DebugLevel::kNone);
        CHECK(run(DebugLevel::kIntermediateOutputs) == plain);
        REQUIRE_FALSE(writer.debug_buffer_overflowed());
        CHECK(run(DebugLevel::kNone) == plain);
      }
    }
  }
}

// A Clamp after a float node runs fused into it (one pass, the ranges combined, as XNNPACK's
// runtime runs it) unless the execution is observed: then the producer's own output, unclamped,
// is logged as before. Both give ExecuTorch's outputs bit for bit.
TEST_CASE("xnnpack clamps fused into their producers equal ExecuTorch's outputs and logged producers stay unclamped", "[xnnpack][runtime][fixtures]") {
  if (!runtime::xnnpack_float_kernels_as_xnnpack()) {
    WARN("xnn_exact_clamps: not compared bit for bit, this runtime is not built for AVX-512F");
    return;
  }
  const std::string base = "xnnpack_exact/xnn_exact_clamps";
  Program p = must(PteReader::open(fixture(base + ".pte")));
  NpyArray want = must(read_npy(fixture(base + ".output0.npy")));
  auto differ = [&](const runtime::Method& m) {
    const TensorImpl& got = *m.output(0).tensor;
    REQUIRE(want.data.size() == static_cast<size_t>(got.numel()) * 4);
    size_t n = 0;
    for (size_t i = 0; i < want.data.size(); i += 4) n += std::memcmp(want.data.data() + i, static_cast<const uint8_t*>(got.data()) + i, 4) != 0;
    return n;
  };
  std::vector<uint8_t> buffer(16 << 20);
  etdump::EtDumpWriterOptions options;
  options.debug_buffer = buffer;
  etdump::EtDumpWriter writer(options);
  auto m = load_fixture(p, base, &writer);
  for (DebugLevel level : {DebugLevel::kNone, DebugLevel::kIntermediateOutputs, DebugLevel::kNone}) {
    writer.set_debug_level(level);
    REQUIRE(m->execute().ok());
    CHECK(differ(*m) == 0);
  }
  REQUIRE_FALSE(writer.debug_buffer_overflowed());
  // The delegate's first event (the first convolution and its Clamp to [-0.5, 1.5]) logs the
  // convolution's own output, then the Clamp's: the two differ, the second clamps the first.
  etdump::EtDumpFile f = must(etdump::EtDumpReader::read(etscope::testing::blob_of(must(writer.finish()), "clamps.etdp")));
  std::vector<std::vector<float>> logged;
  for (const etdump::Event& e : f.events) {
    if (e.kind != etdump::EventKind::kDebug || e.instruction != 0 || e.chain != 0) continue;
    for (const etdump::LoggedTensor& t : f.values[e.ref].tensors) {
      REQUIRE((t.offset >= 0 && static_cast<uint64_t>(t.offset) + t.nbytes <= buffer.size()));
      logged.emplace_back(t.nbytes / 4);
      std::memcpy(logged.back().data(), buffer.data() + t.offset, t.nbytes);
    }
  }
  REQUIRE(logged.size() >= 2);
  const std::vector<float>& conv = logged[0];
  const std::vector<float>& clamped = logged[1];
  REQUIRE(conv.size() == 8 * 11 * 14);
  REQUIRE(clamped.size() == conv.size());
  size_t outside = 0, wrong = 0;
  for (size_t k = 0; k < conv.size(); ++k) {
    outside += conv[k] < -0.5f || conv[k] > 1.5f;
    wrong += clamped[k] != std::min(std::max(conv[k], -0.5f), 1.5f);
  }
  CHECK(outside > 100);
  CHECK(wrong == 0);
}

TEST_CASE("xnnpack fixtures record the delegate events ExecuTorch's runtime records", "[xnnpack][etdump][fixtures]") {
  std::vector<std::string> models = xnnpack_models();
  for (const std::string& d : xnnpack_models("xnnpack_dynamic")) models.push_back(d);
  for (const std::string& base : models) {
    INFO(base);
    const std::string theirs_path = exists(fixture(base + ".profile.etdp")) ? fixture(base + ".profile.etdp") : fixture(base + ".etdp");
    Program p = must(PteReader::open(fixture(base + ".pte")));
    etdump::EtDumpWriter writer({});
    auto m = load_fixture(p, base, &writer);
    REQUIRE(m->execute().ok());
    etdump::EtDumpFile ours = must(etdump::EtDumpReader::read(etscope::testing::blob_of(must(writer.finish()), "ours.etdp")));
    etdump::EtDumpFile theirs = must(etdump::EtDumpReader::open(theirs_path));
    CHECK(first_execute_profile(ours) == first_execute_profile(theirs));
  }
}

namespace {

// The XNNPACK graph flatbuffer of a program's first delegate, read in place from its bytes.
const etscope::fb::xnn::Graph* first_delegate_graph(const std::vector<uint8_t>& bytes) {
  Program p = must(PteReader::read(etscope::testing::blob_of(bytes, "hostile.pte")));
  xnn::Graph g = must(xnn::parse_xnnpack_delegate(p, p.plans[0].delegates[0], "hostile.pte"));
  REQUIRE(g.has_header);
  return etscope::fb::xnn::GetGraph(bytes.data() + p.plans[0].delegates[0].data.offset + g.flatbuffer_offset);
}

// Where a field of a flatbuffer table stored in `bytes` is (it must be stored, not defaulted).
size_t field_offset(const std::vector<uint8_t>& bytes, const void* table, uint16_t field) {
  const uint8_t* at = static_cast<const flatbuffers::Table*>(table)->GetAddressOf(field);
  REQUIRE(at != nullptr);
  return static_cast<size_t>(at - bytes.data());
}

// Loads the program in `bytes` and checks that it is refused with one line that names the node.
void expect_refused(const std::vector<uint8_t>& bytes, const std::string& node, const std::string& says) {
  Program p = must(PteReader::read(etscope::testing::blob_of(bytes, "hostile.pte")));
  auto m = runtime::Method::load(p, "forward");
  REQUIRE_FALSE(m.ok());
  INFO(m.error().message());
  CHECK(m.error().message().rfind("hostile.pte", 0) == 0);
  CHECK_THAT(m.error().message(), Catch::Contains(node) && Catch::Contains(says));
  CHECK(m.error().message().find('\n') == std::string::npos);
}

}  // namespace

// A payload's window, stride and dilation are 32-bit numbers from the file: the largest
// ones must be refused with one line, never overflow (UBSan watches the sanitizer build).
TEST_CASE("xnnpack windows of hostile size are refused at load", "[xnnpack][corrupt]") {
  const auto blob = etscope::testing::load(fixture("xnnpack/xnn_cnn.pte"));
  const std::vector<uint8_t> original(blob->bytes().begin(), blob->bytes().end());
  const etscope::fb::xnn::Pool* pool = nullptr;
  for (const auto* node : *first_delegate_graph(original)->nodes()) {
    if (node->op_type() == etscope::fb::xnn::Op::MaxPool2d) pool = node->op_as_MaxPool2d();
  }
  REQUIRE(pool != nullptr);
  using P = etscope::fb::xnn::Pool;
  for (auto fields : {std::vector<uint16_t>{P::VT_WINDOW_H, P::VT_DILATION_H}, std::vector<uint16_t>{P::VT_WINDOW_W},
                      std::vector<uint16_t>{P::VT_STRIDE_H, P::VT_WINDOW_H, P::VT_DILATION_H}}) {
    std::vector<uint8_t> bytes = original;
    for (uint16_t f : fields) std::memset(bytes.data() + field_offset(original, pool, f), 0xff, 4);
    expect_refused(bytes, "MaxPooling2d", "");
  }
}

// Argmax pooling's window and padding are 32-bit numbers from the file too: a 1x1 window
// (XNNPACK refuses it), padding as large as the window, and windows too large for the input
// are refused with one line naming the node.
TEST_CASE("xnnpack argmax pooling of hostile size is refused at load", "[xnnpack][corrupt]") {
  const auto blob = etscope::testing::load(fixture("xnnpack_handmade/xnnh_argmax_pool.pte"));
  const std::vector<uint8_t> original(blob->bytes().begin(), blob->bytes().end());
  const etscope::fb::xnn::ArgMaxPool* pool = nullptr;
  for (const auto* node : *first_delegate_graph(original)->nodes()) {
    if (node->op_type() == etscope::fb::xnn::Op::ArgMaxPool2d) pool = node->op_as_ArgMaxPool2d();
  }
  REQUIRE(pool != nullptr);
  using A = etscope::fb::xnn::ArgMaxPool;
  struct Case {
    std::vector<uint16_t> fields;
    uint32_t value;
    const char* says;
  };
  for (const Case& c : {Case{{A::VT_WINDOW_H, A::VT_WINDOW_W}, 1, "fewer than 2 elements"},
                        Case{{A::VT_PAD_TOP}, 2, "padding is not smaller than its window"},
                        Case{{A::VT_PAD_LEFT, A::VT_PAD_RIGHT}, 0xffffffffu, "padding is not smaller than its window"},
                        Case{{A::VT_WINDOW_H, A::VT_WINDOW_W}, 0xffffffffu, "does not fit the padded input"},
                        Case{{A::VT_WINDOW_H}, 9, "does not fit the padded input"}}) {
    INFO(c.says);
    std::vector<uint8_t> bytes = original;
    for (uint16_t f : c.fields) std::memcpy(bytes.data() + field_offset(original, pool, f), &c.value, 4);
    expect_refused(bytes, "ArgMaxPooling2d", c.says);
  }
}

#if defined(__x86_64__)
// XNNPACK runs its operators with denormals flushed (MXCSR's FTZ and DAZ) and so does etscope's
// delegate (runtime/src/float_env.h): a delegate call leaves the caller's mode as it found it,
// flushing or not, on one thread and on two, and its outputs do not depend on that mode.
TEST_CASE("xnnpack delegate calls flush denormals and leave the caller's floating-point mode as it was", "[xnnpack][runtime]") {
  const std::string base = "xnnpack/xnn_cnn";
  Program p = must(PteReader::open(fixture(base + ".pte")));
  const unsigned original = _mm_getcsr();
  std::vector<std::vector<uint8_t>> first;
  for (uint32_t threads : {1u, 2u}) {
    for (unsigned mode : {original & ~0x8040u, original | 0x8040u}) {
      INFO(threads << " threads, caller's MXCSR " << mode);
      runtime::MethodOptions mo;
      mo.threads = threads;
      mo.min_split_ops = 0;
      auto m = must(runtime::Method::load(p, "forward", mo));
      set_inputs(*m, base);
      _mm_setcsr(mode);
      const bool ran = m->execute().ok();
      const unsigned after = _mm_getcsr();
      _mm_setcsr(original);
      REQUIRE(ran);
      CHECK(after == mode);
      std::vector<std::vector<uint8_t>> out;
      for (size_t o = 0; o < m->num_outputs(); ++o) {
        const TensorImpl& t = *m->output(o).tensor;
        const auto* b = static_cast<const uint8_t*>(t.data());
        out.emplace_back(b, b + t.nbytes());
      }
      if (first.empty()) first = out;
      CHECK(out == first);
    }
  }
}
#endif

// The values inside an XNNPACK graph share workspace ranges when their lifetimes do not overlap
// (runtime/src/xnnpack/xnnpack_delegate.cpp, plan_workspace), as XNNPACK's runtime plans its
// memory: two programs of many short-lived values load within less memory than their graphs'
// internal values take together (one range each took more), and still give ExecuTorch's outputs
// (the int8 one bit for bit; the other's sine, cosine, exp and log differ from XNNPACK's in the
// last place).
TEST_CASE("xnnpack graph values share workspace memory by lifetime", "[xnnpack][runtime][fixtures]") {
  for (const char* name : {"xnn_qunary", "xnn_ops_more"}) {
    const std::string base = std::string("xnnpack/") + name;
    INFO(base);
    Program p = must(PteReader::open(fixture(base + ".pte")));
    uint64_t internal = 0;
    for (const Delegate& d : p.plans[0].delegates) {
      const xnn::Graph g = must(xnn::parse_xnnpack_delegate(p, d, base));
      for (const xnn::TensorValue& v : g.values) {
        if (!v.is_constant && (v.flags & (xnn::kFlagExternalInput | xnn::kFlagExternalOutput)) == 0) internal += v.numel * 4;
      }
    }
    auto loads_within = [&](uint64_t budget) {
      runtime::MethodOptions mo;
      mo.max_memory = budget;
      return runtime::Method::load(p, "forward", mo).ok();
    };
    uint64_t lo = 0, hi = uint64_t{1} << 32;  // the least budget it loads within: in (lo, hi]
    REQUIRE(loads_within(hi));
    while (hi - lo > 1024) {
      const uint64_t mid = lo + (hi - lo) / 2;
      (loads_within(mid) ? hi : lo) = mid;
    }
    INFO("internal values " << internal << " bytes, least budget " << hi << " bytes");
    CHECK(hi < internal);
    runtime::MethodOptions mo;
    mo.max_memory = hi;
    auto m = must(runtime::Method::load(p, "forward", mo));
    REQUIRE(m->set_input(0, must(read_npy(fixture(base + ".input0.npy"))).data).ok());
    if (base == "xnnpack/xnn_qunary") {
      execute_and_check_bits(*m, base);
    } else {
      execute_and_check(*m, base);
    }
  }
}

// Float programs etscope computes as ExecuTorch does, bit for bit (samples/export/
// export_xnnpack_exact.py, outputs from ExecuTorch's engine on a CPU with AVX-512F): ExecuTorch's
// layer norm (rows of 40 in float, of 256 and 300 by Welford's method in 8 lanes), convolutions
// of 1 to 3 channels (kernel rows read in the image, edge windows copied, or in a padded copy),
// depthwise
// convolutions (taps column by column where XNNPACK's depthwise kernels take them), means and
// average poolings (XNNPACK's order of additions, a reciprocal's product), bilinear resizes
// (XNNPACK's coordinates, no fused multiply-add) and deconvolutions (per output phase, the taps
// that reach it) everywhere; GELU, tanh,
// exp, sigmoid, sqrt and log (XNNPACK's approximations), XNNPACK's softmax (its exp, its sum's order, denormals
// flushed) and batch matrix products (sums from zero with fused multiply-adds) where the runtime
// is built for AVX-512F.
TEST_CASE("xnnpack float stems depthwise convolutions pools resizes deconvolutions unary functions softmax attention and layer norms equal ExecuTorch's outputs bit for bit", "[xnnpack][runtime][fixtures]") {
  for (const char* name :
       {"xnn_exact_layer_norm", "xnn_exact_stems", "xnn_exact_wide_stems", "xnn_exact_depthwise", "xnn_exact_pools", "xnn_exact_resize", "xnn_exact_deconv", "xnn_exact_gemms", "xnn_exact_unary",
        "xnn_exact_softmax", "xnn_exact_attention"}) {
    INFO(name);
    const std::string n = name;
    const bool everywhere = n != "xnn_exact_unary" && n != "xnn_exact_softmax" && n != "xnn_exact_attention";
    if (!everywhere && !runtime::xnnpack_float_kernels_as_xnnpack()) {
      WARN(name << ": not compared bit for bit, this runtime is not built for AVX-512F");
      continue;
    }
    const std::string base = std::string("xnnpack_exact/") + name;
    Program p = must(PteReader::open(fixture(base + ".pte")));
    auto m = load_fixture(p, base);
    REQUIRE(m->execute().ok());
    NpyArray want = must(read_npy(fixture(base + ".output0.npy")));
    const TensorImpl& got = *m->output(0).tensor;
    REQUIRE(std::vector<int64_t>(got.sizes().begin(), got.sizes().end()) == want.shape);
    REQUIRE(want.data.size() == static_cast<size_t>(got.numel()) * 4);
    size_t differ = 0;
    for (size_t i = 0; i < want.data.size(); i += 4) differ += std::memcmp(want.data.data() + i, static_cast<const uint8_t*>(got.data()) + i, 4) != 0;
    CHECK(differ == 0);
  }
}
