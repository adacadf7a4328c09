// Running a bundled program's test cases: feeding a case's inputs to a Method and checking the
// outputs against the expected ones with ExecuTorch's comparison rules (formats.md §5.3).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "etscope/formats/bundled_program.h"
#include "etscope/runtime/method.h"

namespace etscope::runtime {

/// What bundled cases are fed to and read from: etscope's Method, or another engine executing
/// the same method (runner/engine.h), through these few calls.
class CaseTarget {
 public:
  virtual ~CaseTarget() = default;
  virtual size_t case_inputs() const = 0;
  virtual const EValue& case_input(size_t i) const = 0;
  virtual Status set_case_tensor(size_t i, std::span<const uint8_t> data, std::span<const int64_t> sizes) = 0;
  virtual Status set_case_scalar(size_t i, const EValue& value) = 0;
  virtual const std::string& case_method() const = 0;
};

/// Sets every input of `target` from test case `test`. The bundled program must outlive the
/// next execution (unplanned inputs borrow its bytes). Errors name the case and input.
Status load_bundled_inputs(CaseTarget& target, const BundledProgram& bundled, const BundledTestCase& test);
Status load_bundled_inputs(Method& method, const BundledProgram& bundled, const BundledTestCase& test);

struct OutputCheck {
  bool passed = false;
  double max_abs_error = 0.0;  ///< Largest |actual - expected| (float32 view, as ExecuTorch's helper).
  double max_rel_error = 0.0;  ///< Largest |a - e| / max(|a|, |e|, 1e-8).
  std::string problem;         ///< Why it failed when the values were not even comparable.
};

struct CaseCheck {
  bool passed = false;
  std::vector<OutputCheck> outputs;
};

/// Compares the method's current outputs with the case's expected outputs. Floating outputs
/// match when |a - e| <= atol + |rtol * e| element-wise (NaN equals NaN, equal infinities match,
/// rtol = atol = 0 means exact); others must be byte-identical; dtype and shape must agree.
CaseCheck verify_bundled_outputs(const Method& method, const BundledProgram& bundled, const BundledTestCase& test,
                                 double rtol, double atol);
/// The same for outputs given one by one (another engine's).
CaseCheck verify_bundled_outputs(std::span<const EValue* const> outputs, const BundledProgram& bundled,
                                 const BundledTestCase& test, double rtol, double atol);

}  // namespace etscope::runtime
