// Corruption sweep: every real artifact, truncated at every length and with every byte flipped
// three ways, fed to every reader, and on success rendered as text and JSON. Each attempt must end
// in a clean error or a consistent read: no crash, no hang, no sanitizer report (CI runs this
// under AddressSanitizer and UBSan).
#include <catch2/catch.hpp>
#include <algorithm>
#include <sstream>

#include "etscope/formats/bpte_reader.h"
#include "etscope/formats/ptd_reader.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/formats/tensor_stats.h"
#include "render/delegate_render.h"
#include "render/json_output.h"
#include "render/program_text.h"
#include "testing/test_util.h"

using namespace etscope;

namespace {

// Reads `bytes` with every reader and renders what reads; returns how many readers accepted it.
int exercise(const std::vector<uint8_t>& bytes) {
  auto blob = etscope::testing::blob_of(bytes, "mutant");
  int accepted = 0;
  auto check_error = [](const Error& e) {
    // Every error is one line that names the file.
    CHECK(e.message().rfind("mutant", 0) == 0);
    CHECK(e.message().find('\n') == std::string::npos);
  };
  std::ostringstream sink;
  auto render = [&](const Program& p) {
    etscope::cli::print_program_header(sink, p);
    for (const auto& plan : p.plans) {
      etscope::cli::print_plan_summary(sink, plan);
      etscope::cli::print_instructions(sink, plan);
      etscope::cli::print_values(sink, plan);
      for (const Value& v : plan.values) {
        if (v.kind == ValueKind::kTensor && v.tensor.data_kind == TensorDataKind::kConstant) {
          (void)compute_tensor_stats(v.tensor.dtype, p.bytes(v.tensor.data), v.tensor.numel);
        }
      }
    }
    sink << etscope::cli::dump_json(etscope::cli::program_json(p));
    // What `pte --delegates` reads: every XNNPACK payload.
    for (const auto& plan : p.plans) {
      etscope::cli::print_delegates(sink, p, plan);
      sink << etscope::cli::dump_json(etscope::cli::delegates_json(p, plan));
    }
  };
  if (auto p = PteReader::read(blob); p.ok()) {
    ++accepted;
    render(*p);
  } else {
    check_error(p.error());
  }
  if (auto f = PtdReader::read(blob); f.ok()) {
    ++accepted;
    for (const auto& e : f->entries) {
      if (e.layout) (void)compute_tensor_stats(e.layout->dtype, f->bytes(e.data), e.layout->numel);
    }
    sink << etscope::cli::dump_json(etscope::cli::tensor_data_file_json(*f));
  } else {
    check_error(f.error());
  }
  if (auto b = BpteReader::read(blob); b.ok()) {
    ++accepted;
    render(b->program);
    sink << etscope::cli::dump_json(etscope::cli::bundled_program_json(*b));
  } else {
    check_error(b.error());
  }
  return accepted;
}

std::vector<std::string> sweep_files() {
  std::vector<std::string> files;
  for (const char* ext : {".pte", ".ptd", ".bpte"}) {
    for (const auto& f : etscope::testing::real_artifacts_with_extension(ext)) files.push_back(f);
  }
  return files;
}

}  // namespace

TEST_CASE("truncation at every length fails cleanly or reads consistently", "[sweep]") {
  for (const std::string& name : sweep_files()) {
    INFO(name);
    auto blob = etscope::testing::load(etscope::testing::real_artifact(name));
    std::vector<uint8_t> whole(blob->data(), blob->data() + blob->size());
    CHECK(exercise(whole) == 1);
    size_t step = whole.size() > 16384 ? whole.size() / 4096 : 1;
    for (size_t len = 0; len < whole.size(); len += step) {
      std::vector<uint8_t> cut(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(len));
      exercise(cut);
    }
  }
}

// Flips every byte of every artifact with `mask`. One test case per mask, so that CTest runs them
// side by side (the sweep takes minutes under the sanitizers).
static void flip_every_byte(uint8_t mask) {
  for (const std::string& name : sweep_files()) {
    INFO(name);
    auto blob = etscope::testing::load(etscope::testing::real_artifact(name));
    std::vector<uint8_t> bytes(blob->data(), blob->data() + blob->size());
    size_t step = bytes.size() > 16384 ? bytes.size() / 4096 : 1;
    for (size_t pos = 0; pos < bytes.size(); pos += step) {
      const uint8_t original = bytes[pos];
      bytes[pos] = static_cast<uint8_t>(original ^ mask);
      exercise(bytes);
      bytes[pos] = original;
    }
  }
}

TEST_CASE("single-byte corruption at every offset (low bit flipped) fails cleanly or reads consistently", "[sweep]") {
  flip_every_byte(0x01);
}

TEST_CASE("single-byte corruption at every offset (high bit flipped) fails cleanly or reads consistently", "[sweep]") {
  flip_every_byte(0x80);
}

TEST_CASE("single-byte corruption at every offset (all bits flipped) fails cleanly or reads consistently", "[sweep]") {
  flip_every_byte(0xff);
}

TEST_CASE("XNNPACK-delegated programs cut or flipped anywhere fail cleanly or read consistently", "[sweep][xnnpack]") {
  for (const char* name : {"simple_conv_xnnpack/simple_conv_xnnpack.pte", "xnnpack/xnn_convt.pte", "xnnpack/xnn_dqlinear.pte"}) {
    INFO(name);
    auto blob = etscope::testing::load(etscope::testing::fixture(name));
    std::vector<uint8_t> bytes(blob->data(), blob->data() + blob->size());
    CHECK(exercise(bytes) == 1);
    const size_t step = std::max<size_t>(1, bytes.size() / 2048);
    for (size_t pos = 0; pos < bytes.size(); pos += step) {
      std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(pos));
      exercise(cut);
      const uint8_t original = bytes[pos];
      for (uint8_t mask : {uint8_t{0x01}, uint8_t{0xff}}) {
        bytes[pos] = static_cast<uint8_t>(original ^ mask);
        exercise(bytes);
      }
      bytes[pos] = original;
    }
  }
}
