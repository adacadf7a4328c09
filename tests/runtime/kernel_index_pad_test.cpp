// Advanced indexing (index.Tensor, index_put), nonzero, masked_select, reflection/replication
// padding, strided-view copies and topk: small hand-checked values here, and the refusals of
// arguments ExecuTorch's kernels reject. Their agreement with ExecuTorch on many shapes and
// dtypes is proven by the conformance suite (op_conformance_test.cpp).
#include <cstdint>
#include <string>

#include "runtime/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::testing::KernelCall;

TEST_CASE("index.Tensor selects rows with negative and broadcast indices and refuses out-of-range ones", "[kernels][index]") {
  KernelCall c;
  EValue* x = c.f32({3, 2}, {0, 1, 10, 11, 20, 21});
  EValue* out = c.f32({2, 2});
  REQUIRE_FALSE(c.run("aten::index.Tensor_out", {x, c.tensor_list({c.i64({2}, {2, -3})}), out, out}).failed());
  CHECK(c.t(out).values<float>() == std::vector<float>{20, 21, 0, 1});
  // x[:, [1]] keeps dimension 0 in front; x[[0, 2], [1]] broadcasts the two index tensors.
  EValue* col = c.f32({3, 1});
  REQUIRE_FALSE(c.run("aten::index.Tensor_out", {x, c.tensor_list({nullptr, c.i64({1}, {1})}), col, col}).failed());
  CHECK(c.t(col).values<float>() == std::vector<float>{1, 11, 21});
  EValue* pair = c.f32({2});
  REQUIRE_FALSE(c.run("aten::index.Tensor_out", {x, c.tensor_list({c.i64({2}, {0, 2}), c.i64({1}, {1})}), pair, pair}).failed());
  CHECK(c.t(pair).values<float>() == std::vector<float>{1, 21});
  // A bool mask selects the rows where it is true.
  EValue* masked = c.f32({2, 2});
  REQUIRE_FALSE(c.run("aten::index.Tensor_out", {x, c.tensor_list({c.boolean({3}, {true, false, true})}), masked, masked}).failed());
  CHECK(c.t(masked).values<float>() == std::vector<float>{0, 1, 20, 21});

  EValue* one_row = c.f32({1, 2});
  auto bad = c.run("aten::index.Tensor_out", {x, c.tensor_list({c.i64({1}, {3})}), one_row, one_row});
  REQUIRE(bad.failed());
  CHECK(std::string(bad.message()).find("out of range") != std::string::npos);
  REQUIRE(c.run("aten::index.Tensor_out", {x, c.tensor_list({c.i64({1}, {-4})}), one_row, one_row}).failed());
  REQUIRE(c.run("aten::index.Tensor_out", {x, c.tensor_list({c.i64({2}, {0, 1}), c.i64({3}, {0, 1, 0})}), out, out}).failed());
  REQUIRE(c.run("aten::index.Tensor_out", {x, c.tensor_list({c.boolean({2}, {true, true})}), out, out}).failed());
  REQUIRE(c.run("aten::index.Tensor_out", {x, c.tensor_list({c.f32({1}, {0})}), out, out}).failed());
  REQUIRE(c.run("aten::index.Tensor_out", {x, c.tensor_list({c.i64({1}, {0}), c.i64({1}, {0}), c.i64({1}, {0})}), out, out}).failed());
  REQUIRE(c.run("aten::index.Tensor_out", {x, c.tensor_list({nullptr}), out, out}).failed());
  // A mask bigger than the scratch sized at load is refused, not read past.
  REQUIRE(c.run("aten::index.Tensor_out", {x, c.tensor_list({c.boolean({3}, {true, true, true})}), out, out}, 8).failed());
}

TEST_CASE("index_put sets or accumulates broadcast values and refuses bad indices", "[kernels][index]") {
  KernelCall c;
  EValue* x = c.f32({3, 2}, {0, 0, 0, 0, 0, 0});
  EValue* out = c.f32({3, 2});
  REQUIRE_FALSE(c.run("aten::index_put.out", {x, c.tensor_list({c.i64({2}, {0, 0})}), c.f32({2}, {1, 2}), c.boolean_scalar(true), out}).failed());
  CHECK(c.t(out).values<float>() == std::vector<float>{2, 4, 0, 0, 0, 0});
  REQUIRE_FALSE(c.run("aten::index_put.out", {x, c.tensor_list({c.i64({1}, {-1})}), c.f32({}, {5}), c.boolean_scalar(false), out}).failed());
  CHECK(c.t(out).values<float>() == std::vector<float>{0, 0, 0, 0, 5, 5});
  REQUIRE(c.run("aten::index_put.out", {x, c.tensor_list({c.i64({1}, {3})}), c.f32({}, {5}), c.boolean_scalar(false), out}).failed());
  REQUIRE(c.run("aten::index_put.out", {x, c.tensor_list({c.i64({1}, {0})}), c.f32({3}, {1, 2, 3}), c.boolean_scalar(false), out}).failed());
  REQUIRE(c.run("aten::index_put.out", {x, c.tensor_list({c.i64({1}, {0})}), c.i64({}, {1}), c.boolean_scalar(false), out}).failed());
}

TEST_CASE("nonzero and masked_select size their outputs by the data", "[kernels][index]") {
  KernelCall c;
  EValue* nz = c.i64({4, 2}, {}, 8);
  REQUIRE_FALSE(c.run("aten::nonzero.out", {c.f32({2, 2}, {0, 3, 4, 0}), nz}).failed());
  CHECK(c.t(nz).values<int64_t>() == std::vector<int64_t>{0, 1, 1, 0});
  EValue* sel = c.f32({4}, {}, 4);
  REQUIRE_FALSE(c.run("aten::masked_select.out", {c.f32({2, 2}, {1, 2, 3, 4}), c.boolean({2}, {false, true}), sel}).failed());
  CHECK(c.t(sel).values<float>() == std::vector<float>{2, 4});
  REQUIRE(c.run("aten::masked_select.out", {c.f32({2, 2}), c.boolean({3}), sel}).failed());
  REQUIRE(c.run("aten::nonzero.out", {c.f32({2, 2}), c.f32({4, 2})}).failed());
}

TEST_CASE("reflection and replication padding mirror or repeat the edges and refuse pads too large", "[kernels][pad]") {
  KernelCall c;
  EValue* x = c.f32({1, 3}, {1, 2, 3});
  EValue* r = c.f32({1, 6});
  REQUIRE_FALSE(c.run("aten::reflection_pad1d.out", {x, c.int_list({2, 1}), r}).failed());
  CHECK(c.t(r).values<float>() == std::vector<float>{3, 2, 1, 2, 3, 2});
  EValue* p = c.f32({1, 6});
  REQUIRE_FALSE(c.run("aten::replication_pad1d.out", {x, c.int_list({2, 1}), p}).failed());
  CHECK(c.t(p).values<float>() == std::vector<float>{1, 1, 1, 2, 3, 3});
  auto too_big = c.run("aten::reflection_pad1d.out", {x, c.int_list({3, 0}), r});
  REQUIRE(too_big.failed());
  CHECK(std::string(too_big.message()).find("smaller than dimension") != std::string::npos);
  REQUIRE(c.run("aten::reflection_pad2d.out", {x, c.int_list({1, 1}), r}).failed());
  REQUIRE(c.run("aten::replication_pad1d.out", {c.f32({1, 0}), c.int_list({1, 1}), p}).failed());
  REQUIRE(c.run("aten::replication_pad1d.out", {x, c.int_list({int64_t{1} << 62, 0}), p}).failed());
}

TEST_CASE("strided view copies stay inside self", "[kernels][view]") {
  KernelCall c;
  EValue* x = c.f32({3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  EValue* d = c.f32({2});
  REQUIRE_FALSE(c.run("aten::diagonal_copy.out", {x, c.integer(1), c.integer(0), c.integer(1), d}).failed());
  CHECK(c.t(d).values<float>() == std::vector<float>{1, 5});
  EValue* u = c.f32({3, 2, 2});
  REQUIRE_FALSE(c.run("aten::unfold_copy.out", {x, c.integer(1), c.integer(2), c.integer(1), u}).failed());
  CHECK(c.t(u).values<float>() == std::vector<float>{0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 7, 8});
  EValue* s = c.f32({2, 2});
  REQUIRE_FALSE(c.run("aten::as_strided_copy.out", {x, c.int_list({2, 2}), c.int_list({4, 1}), c.integer(1), s}).failed());
  CHECK(c.t(s).values<float>() == std::vector<float>{1, 2, 5, 6});
  REQUIRE(c.run("aten::as_strided_copy.out", {x, c.int_list({2, 2}), c.int_list({8, 1}), c.integer(0), s}).failed());
  REQUIRE(c.run("aten::as_strided_copy.out", {x, c.int_list({2, 2}), c.int_list({-1, 1}), c.integer(4), s}).failed());
  REQUIRE(c.run("aten::as_strided_copy.out", {x, c.int_list({2, 2}), c.int_list({int64_t{1} << 62, 1}), c.integer(0), s}).failed());
  REQUIRE(c.run("aten::unfold_copy.out", {x, c.integer(1), c.integer(4), c.integer(1), u}).failed());
  REQUIRE(c.run("aten::unfold_copy.out", {x, c.integer(1), c.integer(2), c.integer(0), u}).failed());
  REQUIRE(c.run("aten::diagonal_copy.out", {x, c.integer(0), c.integer(1), c.integer(1), d}).failed());
}

TEST_CASE("topk returns the k largest or smallest with their positions and NaN counts as largest", "[kernels][sort]") {
  KernelCall c;
  EValue* x = c.f32({5}, {3, NAN, 1, 5, 3});
  EValue* v = c.f32({3}, {}, 3);
  EValue* i = c.i64({3}, {}, 3);
  REQUIRE_FALSE(c.run("aten::topk.values", {x, c.integer(3), c.integer(-1), c.boolean_scalar(true), c.boolean_scalar(true), v, i}).failed());
  const auto vals = c.t(v).values<float>();
  CHECK(std::isnan(vals[0]));
  CHECK(vals[1] == 5);
  CHECK(vals[2] == 3);
  // The two 3s tie: which one comes is the selection algorithm's (ExecuTorch's) choice.
  const auto first = c.t(i).values<int64_t>();
  CHECK(first[0] == 1);
  CHECK(first[1] == 3);
  CHECK((first[2] == 0 || first[2] == 4));
  REQUIRE_FALSE(c.run("aten::topk.values", {x, c.integer(2), c.integer(0), c.boolean_scalar(false), c.boolean_scalar(true), v, i}).failed());
  CHECK(c.t(v).values<float>() == std::vector<float>{1, 3});
  CHECK(c.t(i).values<int64_t>()[0] == 2);
  REQUIRE(c.run("aten::topk.values", {x, c.integer(6), c.integer(0), c.boolean_scalar(true), c.boolean_scalar(true), v, i}).failed());
  REQUIRE(c.run("aten::topk.values", {x, c.integer(1), c.integer(1), c.boolean_scalar(true), c.boolean_scalar(true), v, i}).failed());
  REQUIRE(c.run("aten::topk.values", {x, c.integer(1), c.integer(0), c.boolean_scalar(true), c.boolean_scalar(true), v, i}, 8).failed());
}

TEST_CASE("repeat_interleave.Tensor lists each position as often as it repeats and checks output_size", "[kernels][index]") {
  KernelCall c;
  EValue* out = c.i64({5}, {}, 8);
  REQUIRE_FALSE(c.run("aten::repeat_interleave.Tensor_out", {c.i64({4}, {1, 0, 3, 1}), c.none(), out, out}).failed());
  CHECK(c.t(out).values<int64_t>() == std::vector<int64_t>{0, 2, 2, 2, 3});
  REQUIRE_FALSE(c.run("aten::repeat_interleave.Tensor_out", {c.i64({2}, {2, 1}), c.integer(3), out, out}).failed());
  CHECK(c.t(out).values<int64_t>() == std::vector<int64_t>{0, 0, 1});
  REQUIRE(c.run("aten::repeat_interleave.Tensor_out", {c.i64({2}, {2, 1}), c.integer(4), out, out}).failed());
  REQUIRE(c.run("aten::repeat_interleave.Tensor_out", {c.i64({2}, {-1, 1}), c.none(), out, out}).failed());
  REQUIRE(c.run("aten::repeat_interleave.Tensor_out", {c.i64({1}, {int64_t{1} << 50}), c.none(), out, out}).failed());
  REQUIRE(c.run("aten::repeat_interleave.Tensor_out", {c.i64({2}, {5, 5}), c.none(), out, out}).failed());
}

TEST_CASE("bit shifts by a negative amount or the type's width or more give 0 or -1 and never hit undefined behaviour", "[kernels][pointwise]") {
  KernelCall c;
  EValue* out = c.tensor<int32_t>(ScalarType::kInt, {4});
  REQUIRE_FALSE(c.run("aten::bitwise_left_shift.Tensor_out",
                      {c.tensor<int32_t>(ScalarType::kInt, {4}, {1, -1, 3, 1}), c.tensor<int32_t>(ScalarType::kInt, {4}, {31, 1, 32, -1}), out}).failed());
  CHECK(c.t(out).values<int32_t>() == std::vector<int32_t>{INT32_MIN, -2, 0, 0});
  REQUIRE_FALSE(c.run("aten::bitwise_right_shift.Tensor_out",
                      {c.tensor<int32_t>(ScalarType::kInt, {4}, {-8, 8, -8, 8}), c.tensor<int32_t>(ScalarType::kInt, {4}, {2, 2, 40, 40}), out}).failed());
  CHECK(c.t(out).values<int32_t>() == std::vector<int32_t>{-2, 2, -1, 0});
  REQUIRE(c.run("aten::bitwise_left_shift.Tensor_out", {c.f32({4}), c.f32({4}), c.f32({4})}).failed());
}
