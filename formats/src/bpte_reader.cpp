// Reading bundled programs (.bpte, formats.md §5).
#include <cstring>

#include "etscope/formats/bpte_reader.h"
#include "etscope/core/checked.h"
#include "etscope/formats/file_kind.h"
#include "etscope/formats/pte_reader.h"
#include "etscope_fb/bundled_program_generated.h"
#include "etscope/flatbuffer_util/flatbuffer_util.h"

namespace etscope {
namespace {

namespace bfb = ::etscope::fb::bpte;

Status read_value(const std::string& what, const uint8_t* base, const bfb::Value* v, BundledValue* out) {
  if (v == nullptr) return make_error(ErrorCode::kCorrupt, "%s is null", what.c_str());
  if (v->val_type() != bfb::ValueUnion::NONE && v->val() == nullptr) {
    return make_error(ErrorCode::kCorrupt, "%s: value has no data", what.c_str());
  }
  switch (v->val_type()) {
    case bfb::ValueUnion::NONE:
      out->kind = BundledValue::Kind::kNone;
      return ok_status();
    case bfb::ValueUnion::Int:
      out->kind = BundledValue::Kind::kInt;
      out->int_value = v->val_as_Int()->int_val();
      return ok_status();
    case bfb::ValueUnion::Bool:
      out->kind = BundledValue::Kind::kBool;
      out->bool_value = v->val_as_Bool()->bool_val();
      return ok_status();
    case bfb::ValueUnion::Double:
      out->kind = BundledValue::Kind::kDouble;
      out->double_value = v->val_as_Double()->double_val();
      return ok_status();
    case bfb::ValueUnion::Tensor: {
      const bfb::Tensor* t = v->val_as_Tensor();
      out->kind = BundledValue::Kind::kTensor;
      out->dtype = static_cast<ScalarType>(static_cast<int8_t>(t->scalar_type()));
      out->sizes = flatbuffer_util::to_vector<int32_t>(t->sizes());
      out->dim_order = flatbuffer_util::to_vector<uint8_t>(t->dim_order());
      uint64_t numel = 0;
      ETSCOPE_TRY(flatbuffer_util::tensor_byte_size(what, out->dtype, out->sizes, &numel, &out->nbytes));
      if (!out->dim_order.empty()) {
        ETSCOPE_TRY(flatbuffer_util::check_dim_order(what, out->dim_order, out->sizes.size()));
      }
      out->data = flatbuffer_util::payload_range(base, t->data());
      if (out->data.size < out->nbytes) {
        return make_error(ErrorCode::kCorrupt, "%s: tensor data holds %llu bytes, its shape needs %llu",
                          what.c_str(), static_cast<unsigned long long>(out->data.size),
                          static_cast<unsigned long long>(out->nbytes));
      }
      out->data.size = out->nbytes;
      return ok_status();
    }
  }
  return make_error(ErrorCode::kCorrupt, "%s: unknown value kind %d", what.c_str(),
                    static_cast<int>(v->val_type()));
}

}  // namespace

Result<BundledProgram> BpteReader::read(std::shared_ptr<const Blob> blob) {
  const std::string& name = blob->name();
  std::span<const uint8_t> bytes = blob->bytes();
  if (bytes.empty()) return Error(ErrorCode::kTruncated, name + ": file is empty");
  if (bytes.size() < 8) {
    return make_error(ErrorCode::kTruncated, "%s: file is %zu bytes, too short for a bundled program",
                      name.c_str(), bytes.size());
  }
  const std::string id = printable_identifier(bytes, 4);
  if (id == "BP04" || id == "BP05") {
    return Error(ErrorCode::kNotSupported, name + ": bundled program " + id +
                                               " is a pre-release 2023 layout; re-export it with ExecuTorch 0.2 or later");
  }
  if (id != "BP06" && id != "BP07" && id != "BP08") {
    FileKind kind = sniff_file_kind(bytes);
    if (kind == FileKind::kUnknown || kind == FileKind::kBundledProgram) {
      return Error(kind == FileKind::kBundledProgram ? ErrorCode::kNotSupported : ErrorCode::kWrongKind,
                   name + ": not a supported bundled program: identifier '" + id + "' (expected BP08)");
    }
    return Error(ErrorCode::kWrongKind, name + ": not a bundled program (.bpte): this is " +
                                            describe_file_kind(kind));
  }
  if (bytes.size() > flatbuffer_util::kMaxFlatBufferSize) {
    return make_error(ErrorCode::kNotSupported, "%s: bundled programs over 2 GiB are not supported", name.c_str());
  }
  flatbuffers::Verifier verifier(bytes.data(), bytes.size(), flatbuffer_util::verifier_options());
  if (!verifier.VerifyBuffer<bfb::BundledProgram>(nullptr)) {
    return make_error(ErrorCode::kCorrupt,
                      "%s: FlatBuffer verification failed: the bundled program is truncated or corrupt",
                      name.c_str());
  }
  const bfb::BundledProgram* root = flatbuffers::GetRoot<bfb::BundledProgram>(bytes.data());
  BundledProgram out;
  out.blob = blob;
  out.file_identifier = id;
  out.version = root->version();
  if (root->program() == nullptr || root->program()->size() == 0) {
    return Error(ErrorCode::kCorrupt, name + ": bundled program has no embedded program");
  }
  out.program_range = flatbuffer_util::payload_range(bytes.data(), root->program());
  if (const auto* suites = root->method_test_suites()) {
    for (size_t s = 0; s < suites->size(); ++s) {
      const bfb::BundledMethodTestSuite* suite = suites->Get(static_cast<flatbuffers::uoffset_t>(s));
      if (suite == nullptr) return make_error(ErrorCode::kCorrupt, "%s: test suite %zu is null", name.c_str(), s);
      BundledTestSuite dst;
      dst.method_name = flatbuffer_util::to_string(suite->method_name());
      if (const auto* cases = suite->test_cases()) {
        for (size_t c = 0; c < cases->size(); ++c) {
          const bfb::BundledMethodTestCase* tc = cases->Get(static_cast<flatbuffers::uoffset_t>(c));
          const std::string where = name + ": method '" + dst.method_name + "' test case " + std::to_string(c);
          if (tc == nullptr) return Error(ErrorCode::kCorrupt, where + " is null");
          BundledTestCase test;
          if (const auto* inputs = tc->inputs()) {
            test.inputs.resize(inputs->size());
            for (size_t i = 0; i < inputs->size(); ++i) {
              ETSCOPE_TRY(read_value(where + " input " + std::to_string(i), bytes.data(),
                                     inputs->Get(static_cast<flatbuffers::uoffset_t>(i)), &test.inputs[i]));
            }
          }
          if (const auto* outputs = tc->expected_outputs()) {
            test.expected_outputs.resize(outputs->size());
            for (size_t i = 0; i < outputs->size(); ++i) {
              ETSCOPE_TRY(read_value(where + " expected output " + std::to_string(i), bytes.data(),
                                     outputs->Get(static_cast<flatbuffers::uoffset_t>(i)),
                                     &test.expected_outputs[i]));
            }
          }
          dst.cases.push_back(std::move(test));
        }
      }
      out.suites.push_back(std::move(dst));
    }
  }
  auto embedded = Blob::from_bytes(name + " (embedded program)", out.bytes(out.program_range));
  auto program = PteReader::read(embedded);
  if (!program.ok()) return program.error();
  out.program = std::move(program).value();
  return out;
}

Result<BundledProgram> BpteReader::open(const std::string& path) {
  ETSCOPE_ASSIGN_OR_RETURN(auto blob, Blob::open_file(path));
  return read(std::move(blob));
}

}  // namespace etscope
