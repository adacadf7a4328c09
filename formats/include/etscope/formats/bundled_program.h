// BundledProgram and BpteReader: ExecuTorch bundled programs (.bpte, "BP08", also BP06/BP07).
//
// A bundled program wraps a complete .pte with per-method test cases: inputs and expected
// outputs. The embedded program is copied into its own aligned Blob and parsed with PteReader,
// so its offsets are relative to its own first byte.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "etscope/formats/blob.h"
#include "etscope/formats/program.h"
#include "etscope/core/result.h"
#include "etscope/core/scalar_type.h"

namespace etscope {

struct BundledValue {
  enum class Kind : uint8_t { kNone, kTensor, kInt, kBool, kDouble };
  Kind kind = Kind::kNone;
  ScalarType dtype = ScalarType::kFloat;   ///< kTensor.
  std::vector<int32_t> sizes;              ///< kTensor.
  std::vector<uint8_t> dim_order;          ///< kTensor.
  FileRange data;                          ///< kTensor: absolute range in the .bpte.
  uint64_t nbytes = 0;                     ///< kTensor: numel * element size.
  int64_t int_value = 0;
  bool bool_value = false;
  double double_value = 0.0;
};

struct BundledTestCase {
  std::vector<BundledValue> inputs;
  std::vector<BundledValue> expected_outputs;
};

struct BundledTestSuite {
  std::string method_name;
  std::vector<BundledTestCase> cases;
};

struct BundledProgram {
  std::shared_ptr<const Blob> blob;
  std::string file_identifier;   ///< "BP08", "BP07" or "BP06".
  uint32_t version = 0;
  std::vector<BundledTestSuite> suites;
  FileRange program_range;       ///< Where the embedded .pte sits in the .bpte.
  Program program;               ///< The embedded program, parsed from its own Blob.

  std::span<const uint8_t> bytes(FileRange range) const {
    return blob->bytes().subspan(static_cast<size_t>(range.offset),
                                 static_cast<size_t>(range.size));
  }
  const std::string& name() const { return blob->name(); }
};


}  // namespace etscope
