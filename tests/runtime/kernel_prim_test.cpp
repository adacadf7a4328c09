// executorch_prim:: scalar operators, sym_size / sym_numel and et_view.
#include <string>

#include "runtime/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::Tag;
using etscope::testing::KernelCall;

TEST_CASE("executorch_prim scalar arithmetic keeps Int and promotes to Double", "[kernels][prim]") {
  KernelCall c;
  auto run2 = [&](const char* op, EValue* a, EValue* b) {
    EValue* out = c.none();
    auto ctx = c.run(std::string("executorch_prim::") + op, {a, b, out});
    REQUIRE_FALSE(ctx.failed());
    return out;
  };
  EValue* v = run2("add.Scalar", c.integer(2), c.integer(3));
  CHECK(v->tag == Tag::kInt);
  CHECK(v->scalar.i == 5);
  v = run2("mul.Scalar", c.integer(2), c.dbl(1.5));
  CHECK(v->tag == Tag::kDouble);
  CHECK(v->scalar.d == 3.0);
  CHECK(run2("sub.Scalar", c.integer(2), c.integer(7))->scalar.i == -5);
  CHECK(run2("floordiv.Scalar", c.integer(-7), c.integer(2))->scalar.i == -4);
  CHECK(run2("mod.Scalar", c.integer(-7), c.integer(3))->scalar.i == 2);
  v = run2("truediv.Scalar", c.integer(7), c.integer(2));
  CHECK(v->tag == Tag::kDouble);
  CHECK(v->scalar.d == 3.5);
  v = run2("lt.Scalar", c.integer(1), c.dbl(1.5));
  CHECK(v->tag == Tag::kBool);
  CHECK(v->scalar.b);
  CHECK_FALSE(run2("eq.Scalar", c.integer(1), c.integer(2))->scalar.b);
  CHECK(run2("ge.Scalar", c.integer(2), c.integer(2))->scalar.b);
  CHECK_FALSE(run2("gt.Scalar", c.integer(2), c.integer(2))->scalar.b);
  CHECK(run2("le.Scalar", c.integer(2), c.integer(2))->scalar.b);
  EValue* out = c.none();
  REQUIRE_FALSE(c.run("executorch_prim::neg.Scalar", {c.integer(4), out}).failed());
  CHECK(out->scalar.i == -4);
  auto ctx = c.run("executorch_prim::floordiv.Scalar", {c.integer(1), c.integer(0), c.none()});
  REQUIRE(ctx.failed());
  ctx = c.run("executorch_prim::add.Scalar", {c.f32({1}), c.integer(0), c.none()});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("add.Scalar") != std::string::npos);
  CHECK_FALSE(etscope::runtime::KernelRegistry::portable().find("executorch_prim::add.Scalar")->codegen_wrapped);
}

TEST_CASE("sym_size / sym_numel and et_view", "[kernels][prim]") {
  KernelCall c;
  EValue* t = c.f32({2, 3, 4});
  EValue* out = c.none();
  REQUIRE_FALSE(c.run("executorch_prim::sym_size.int", {t, c.integer(-1), out}).failed());
  CHECK(out->scalar.i == 4);
  REQUIRE_FALSE(c.run("executorch_prim::sym_numel", {t, out}).failed());
  CHECK(out->scalar.i == 24);
  REQUIRE(c.run("executorch_prim::sym_size.int", {t, c.integer(3), out}).failed());

  EValue* view = c.f32({6, 4}, {}, 24);
  REQUIRE_FALSE(c.run("executorch_prim::et_view.default", {t, c.int_list({-1, 4}), view}).failed());
  CHECK(c.t(view).data() == c.t(t).data());
  CHECK(c.t(view).size(0) == 6);
  REQUIRE(c.run("executorch_prim::et_view.default", {t, c.int_list({5, 4}), view}).failed());
  // A dynamic view with no planned capacity of its own still aliases self.
  EValue* small = c.f32({1, 1}, {}, 1);
  REQUIRE_FALSE(c.run("executorch_prim::et_view.default", {t, c.int_list({4, 6}), small}).failed());
  CHECK(c.t(small).data() == c.t(t).data());
  CHECK(c.t(small).numel() == 24);
  // A static output must already have the requested sizes.
  REQUIRE(c.run("executorch_prim::et_view.default", {t, c.int_list({4, 6}), c.f32({6, 4})}).failed());
}
