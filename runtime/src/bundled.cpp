#include "etscope/runtime/bundled.h"

#include <array>
#include <cmath>
#include <cstring>

#include "etscope/formats/tensor_stats.h"

namespace etscope::runtime {

namespace {

// A Method as a case target.
class MethodTarget final : public CaseTarget {
 public:
  explicit MethodTarget(Method& m) : m_(m) {}
  size_t case_inputs() const override { return m_.num_inputs(); }
  const EValue& case_input(size_t i) const override { return m_.input(i); }
  Status set_case_tensor(size_t i, std::span<const uint8_t> data, std::span<const int64_t> sizes) override {
    return m_.set_input(i, data, sizes);
  }
  Status set_case_scalar(size_t i, const EValue& value) override { return m_.set_scalar_input(i, value); }
  const std::string& case_method() const override { return m_.name(); }

 private:
  Method& m_;
};

}  // namespace

Status load_bundled_inputs(Method& method, const BundledProgram& bundled, const BundledTestCase& test) {
  MethodTarget target(method);
  return load_bundled_inputs(target, bundled, test);
}

Status load_bundled_inputs(CaseTarget& method, const BundledProgram& bundled, const BundledTestCase& test) {
  if (test.inputs.size() != method.case_inputs()) {
    return make_error(ErrorCode::kInvalidArgument, "%s: test case has %zu inputs, method '%s' takes %zu",
                      bundled.name().c_str(), test.inputs.size(), method.case_method().c_str(), method.case_inputs());
  }
  for (size_t i = 0; i < test.inputs.size(); ++i) {
    const BundledValue& v = test.inputs[i];
    const std::string what = bundled.name() + ": input " + std::to_string(i);
    switch (v.kind) {
      case BundledValue::Kind::kTensor: {
        const EValue& slot = method.case_input(i);
        if (slot.tag == Tag::kTensor && slot.tensor->dtype() != v.dtype) {
          return Error(ErrorCode::kInvalidArgument, what + ": bundled dtype " + scalar_type_name(v.dtype) +
                                                        " differs from the method's " + scalar_type_name(slot.tensor->dtype()));
        }
        std::vector<int64_t> sizes(v.sizes.begin(), v.sizes.end());
        ETSCOPE_TRY(method.set_case_tensor(i, bundled.bytes(v.data), sizes));
        break;
      }
      case BundledValue::Kind::kInt: {
        EValue e;
        e.tag = Tag::kInt;
        e.scalar.i = v.int_value;
        ETSCOPE_TRY(method.set_case_scalar(i, e));
        break;
      }
      case BundledValue::Kind::kBool: {
        EValue e;
        e.tag = Tag::kBool;
        e.scalar.b = v.bool_value;
        ETSCOPE_TRY(method.set_case_scalar(i, e));
        break;
      }
      case BundledValue::Kind::kDouble: {
        EValue e;
        e.tag = Tag::kDouble;
        e.scalar.d = v.double_value;
        ETSCOPE_TRY(method.set_case_scalar(i, e));
        break;
      }
      case BundledValue::Kind::kNone:
        return Error(ErrorCode::kNotSupported, what + ": None inputs are not supported");
    }
  }
  return ok_status();
}

namespace {

OutputCheck check_tensor(const TensorImpl& actual, const BundledProgram& bundled, const BundledValue& expected, double rtol,
                         double atol) {
  OutputCheck r;
  if (actual.dtype() != expected.dtype) {
    r.problem = "dtype " + scalar_type_name(actual.dtype()) + " != expected " + scalar_type_name(expected.dtype);
    return r;
  }
  bool same_shape = actual.dim() == static_cast<int>(expected.sizes.size());
  for (int d = 0; same_shape && d < actual.dim(); ++d) same_shape = actual.size(d) == expected.sizes[static_cast<size_t>(d)];
  if (!same_shape) {
    r.problem = "shape differs from the expected shape";
    return r;
  }
  const auto want = bundled.bytes(expected.data);
  const int64_t n = actual.numel();
  if (n == 0) {
    r.passed = true;
    return r;
  }
  if (actual.data() == nullptr) {
    r.problem = "output has no data";
    return r;
  }
  const auto* got = static_cast<const uint8_t*>(actual.data());
  bool passed = true;
  const bool numeric = is_numeric(actual.dtype());
  // Expected values are stored in row-major order; the output may have another dim order (e.g.
  // nonzero's, which the exporter plans column-major), so elements are compared by position.
  const bool row_major = actual.contiguous();
  const size_t es = actual.element_size();
  std::array<int64_t, kMaxDims> coord{};
  int64_t physical = 0;  // element offset of the current position in `actual`
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0 && !row_major) {
      for (int d = actual.dim() - 1; d >= 0; --d) {
        const size_t k = static_cast<size_t>(d);
        physical += actual.strides()[k];
        if (++coord[k] < actual.size(d)) break;
        physical -= actual.strides()[k] * coord[k];
        coord[k] = 0;
      }
    }
    const uint64_t at = static_cast<uint64_t>(row_major ? i : physical);
    if (!is_floating_type(actual.dtype()) && std::memcmp(got + at * es, want.data() + static_cast<size_t>(i) * es, es) != 0) {
      passed = false;
    }
    const double a = numeric ? element_as_double(actual.dtype(), got, at) : 0.0;
    const double e = numeric ? element_as_double(actual.dtype(), want.data(), static_cast<uint64_t>(i)) : 0.0;
    if (numeric) {
      // Error statistics use float32 values, as ExecuTorch's helper does.
      const double af = static_cast<float>(a), ef = static_cast<float>(e);
      const double diff = std::abs(af - ef);
      if (std::isfinite(diff)) {
        r.max_abs_error = std::max(r.max_abs_error, diff);
        r.max_rel_error = std::max(r.max_rel_error, diff / std::max({std::abs(af), std::abs(ef), 1e-8}));
      }
    }
    if (!is_floating_type(actual.dtype())) continue;
    bool ok;
    if (std::isnan(a) || std::isnan(e)) {
      ok = std::isnan(a) && std::isnan(e);
    } else if (std::isinf(a) || std::isinf(e)) {
      ok = a == e;
    } else if (rtol == 0.0 && atol == 0.0) {
      ok = a == e;
    } else {
      const double diff = std::abs(a - e);
      ok = std::isfinite(diff) && diff <= atol + std::abs(rtol * e);
    }
    passed &= ok;
  }
  r.passed = passed;
  return r;
}

}  // namespace

CaseCheck verify_bundled_outputs(const Method& method, const BundledProgram& bundled, const BundledTestCase& test,
                                 double rtol, double atol) {
  std::vector<const EValue*> outputs;
  for (size_t i = 0; i < method.num_outputs(); ++i) outputs.push_back(&method.output(i));
  return verify_bundled_outputs(outputs, bundled, test, rtol, atol);
}

CaseCheck verify_bundled_outputs(std::span<const EValue* const> outputs, const BundledProgram& bundled,
                                 const BundledTestCase& test, double rtol, double atol) {
  CaseCheck c;
  c.passed = true;
  if (test.expected_outputs.size() != outputs.size()) {
    OutputCheck o;
    o.problem = "the case expects " + std::to_string(test.expected_outputs.size()) + " outputs, the method has " +
                std::to_string(outputs.size());
    c.outputs.push_back(o);
    c.passed = false;
    return c;
  }
  for (size_t i = 0; i < test.expected_outputs.size(); ++i) {
    const BundledValue& e = test.expected_outputs[i];
    const EValue& a = *outputs[i];
    OutputCheck o;
    if (e.kind != BundledValue::Kind::kTensor || a.tag != Tag::kTensor) {
      o.problem = "only tensor outputs can be verified";
    } else {
      o = check_tensor(*a.tensor, bundled, e, rtol, atol);
    }
    c.passed &= o.passed;
    c.outputs.push_back(std::move(o));
  }
  return c;
}

}  // namespace etscope::runtime
