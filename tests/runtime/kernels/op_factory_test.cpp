// Tests of tensor factories and fills (op_factory.cpp).
#include <cmath>
#include <numeric>
#include <string>

#include "runtime/kernels/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::testing::KernelCall;
using etscope::testing::ramp;

TEST_CASE("full_like and scalar_tensor", "[kernels][copy]") {
  KernelCall c;
  EValue* fl = c.f32({2, 2});
  REQUIRE_FALSE(c.run("aten::full_like.out", {c.f32({2, 2}), c.integer(1), c.integer(1), fl, fl}).failed());
  CHECK(c.t(fl).values<float>() == std::vector<float>{1, 1, 1, 1});
  EValue* st = c.i64({});
  REQUIRE_FALSE(c.run("aten::scalar_tensor.out", {c.integer(0), st, st}).failed());
  CHECK(c.t(st).data_as<int64_t>()[0] == 0);
  EValue* sf = c.f32({});
  REQUIRE_FALSE(c.run("aten::scalar_tensor.out", {c.dbl(-0.5), sf, sf}).failed());
  CHECK(c.t(sf).data_as<float>()[0] == -0.5f);
  auto ctx = c.run("aten::full_like.out", {c.f32({2, 3}), c.integer(1), c.none(), fl, fl});
  REQUIRE(ctx.failed());
}

TEST_CASE("rand and randn fill their output from the runtime's random stream", "[kernels][qweight]") {
  KernelCall c;
  const int64_t n = 20000;
  EValue* u = c.f32({n});
  REQUIRE_FALSE(c.run("aten::rand.out", {c.int_list({n}), u, u}).failed());
  const auto uv = c.t(u).values<float>();
  CHECK(*std::min_element(uv.begin(), uv.end()) >= 0.0f);
  CHECK(*std::max_element(uv.begin(), uv.end()) < 1.0f);
  CHECK(std::accumulate(uv.begin(), uv.end(), 0.0) / n == Approx(0.5).margin(0.02));
  EValue* g = c.tensor<double>(ScalarType::kDouble, {100, 200});
  REQUIRE_FALSE(c.run("aten::randn.out", {c.int_list({100, 200}), g, g}).failed());
  const auto gv = c.t(g).values<double>();
  const double mean = std::accumulate(gv.begin(), gv.end(), 0.0) / n;
  double var = 0;
  for (double x : gv) var += (x - mean) * (x - mean);
  CHECK(mean == Approx(0.0).margin(0.03));
  CHECK(var / n == Approx(1.0).margin(0.05));
  // Two calls draw different numbers; integer outputs and wrong ranks are refused.
  EValue* u2 = c.f32({n});
  REQUIRE_FALSE(c.run("aten::rand.out", {c.int_list({n}), u2, u2}).failed());
  CHECK(c.t(u2).values<float>() != uv);
  EValue* bad = c.i64({2});
  CHECK(c.run("aten::rand.out", {c.int_list({2}), bad, bad}).failed());
  CHECK(c.run("aten::randn.out", {c.int_list({2, 1}), u, u}).failed());
}

TEST_CASE("arange / zeros / ones / cumsum", "[kernels][shape]") {
  KernelCall c;
  EValue* a = c.i64({5}, {}, 8);
  REQUIRE_FALSE(c.run("aten::arange.out", {c.integer(5), a, a}).failed());
  CHECK(c.t(a).values<int64_t>() == std::vector<int64_t>{0, 1, 2, 3, 4});
  EValue* af = c.f32({4}, {}, 8);
  REQUIRE_FALSE(c.run("aten::arange.start_out", {c.integer(1), c.dbl(2.5), c.dbl(0.5), af, af}).failed());
  CHECK(c.t(af).values<float>() == std::vector<float>{1, 1.5f, 2});
  REQUIRE(c.run("aten::arange.start_out", {c.integer(0), c.integer(5), c.integer(0), af, af}).failed());
  EValue* z = c.f32({2});
  REQUIRE_FALSE(c.run("aten::ones.out", {c.int_list({2}), z, z}).failed());
  CHECK(c.t(z).values<float>() == std::vector<float>{1, 1});
  REQUIRE_FALSE(c.run("aten::zeros.out", {c.int_list({2}), z, z}).failed());
  CHECK(c.t(z).values<float>() == std::vector<float>{0, 0});
  EValue* cs = c.i64({2, 3});
  REQUIRE_FALSE(c.run("aten::cumsum.out", {c.tensor<int32_t>(ScalarType::kInt, {2, 3}, {1, 2, 3, 4, 5, 6}), c.integer(-1),
                                           c.integer(static_cast<int64_t>(ScalarType::kLong)), cs, cs})
                    .failed());
  CHECK(c.t(cs).values<int64_t>() == std::vector<int64_t>{1, 3, 6, 4, 9, 15});
  EValue* c0 = c.f32({2, 3});
  REQUIRE_FALSE(c.run("aten::cumsum.out", {c.f32({2, 3}, ramp(6)), c.integer(0), c.none(), c0, c0}).failed());
  CHECK(c.t(c0).values<float>() == std::vector<float>{0, 1, 2, 3, 5, 7});
  REQUIRE(c.run("aten::cumsum.out", {c.f32({2}), c.integer(0), c.integer(static_cast<int64_t>(ScalarType::kLong)), c0, c0}).failed());
}

TEST_CASE("full.out resizes and fills, converting the value", "[kernels][slice]") {
  KernelCall c;
  EValue* f = c.f32({2, 3}, {}, 6);
  REQUIRE_FALSE(c.run("aten::full.out", {c.int_list({3, 2}), c.dbl(1.5), f, f}).failed());
  CHECK(c.t(f).size(0) == 3);
  CHECK(c.t(f).values<float>() == std::vector<float>(6, 1.5f));
  EValue* b = c.boolean({2});
  REQUIRE_FALSE(c.run("aten::full.out", {c.int_list({2}), c.integer(3), b, b}).failed());
  CHECK(c.t(b).values<bool>() == std::vector<bool>{true, true});
  REQUIRE(c.run("aten::full.out", {c.int_list({2, 2}), c.integer(0), b, b}).failed());
}
