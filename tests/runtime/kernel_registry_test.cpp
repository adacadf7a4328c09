// The registry's per-kernel dtype lists and the ATen-named size queries of dynamic shapes.
#include <algorithm>

#include "runtime/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::runtime::KernelRegistry;
using etscope::testing::KernelCall;

TEST_CASE("every registered kernel lists the dtypes it accepts", "[kernels][registry]") {
  const KernelRegistry& r = KernelRegistry::portable();
  for (const std::string& name : r.names()) {
    const auto* k = r.find(name);
    REQUIRE(k != nullptr);
    if (name.rfind("executorch_prim::", 0) == 0) continue;  // scalar ops take no tensors
    INFO(name);
    CHECK_FALSE(k->dtype_list().empty());
  }
  const auto conv = r.find("aten::convolution.out")->dtype_list();
  CHECK(conv == std::vector<ScalarType>{ScalarType::kHalf, ScalarType::kFloat, ScalarType::kDouble, ScalarType::kBFloat16});
  const auto lnot = r.find("aten::logical_not.out")->dtype_list();
  CHECK(std::find(lnot.begin(), lnot.end(), ScalarType::kBool) != lnot.end());
  CHECK(r.find("aten::sym_size.int") != nullptr);
  CHECK(r.find("aten::sym_size.int")->codegen_wrapped == false);
}

TEST_CASE("aten::sym_size.int and aten::sym_numel read a tensor's shape", "[kernels][registry]") {
  KernelCall c;
  EValue* x = c.f32({2, 7, 3});
  EValue* out = c.integer(0);
  REQUIRE_FALSE(c.run("aten::sym_size.int", {x, c.integer(-2), out}).failed());
  CHECK(out->to_int() == 7);
  REQUIRE_FALSE(c.run("aten::sym_numel", {x, out}).failed());
  CHECK(out->to_int() == 42);
  REQUIRE(c.run("aten::sym_size.int", {x, c.integer(3), out}).failed());
}
