// What kind of work an operator does, by its name: the vocabulary the rules share.
#include <string>
#include <string_view>

#include "rules/rules.h"

namespace etscope::findings {
namespace {

// "aten::permute_copy.out" -> "permute_copy".
std::string_view base_name(std::string_view op) {
  const size_t ns = op.find("::");
  if (ns != std::string_view::npos) op.remove_prefix(ns + 2);
  const size_t dot = op.find('.');
  if (dot != std::string_view::npos) op = op.substr(0, dot);
  return op;
}

bool one_of(std::string_view name, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    if (name == n) return true;
  }
  return false;
}

}  // namespace

bool is_layout_copy(const std::string& op) {
  return one_of(base_name(op), {"permute_copy", "t_copy", "transpose_copy", "clone", "_clone_dim_order", "expand_copy",
                                "contiguous", "permute", "transpose"});
}

bool is_matrix_product(const std::string& op) {
  return one_of(base_name(op), {"mm", "bmm", "addmm", "baddbmm", "linear", "matmul", "convolution", "_convolution",
                                "conv1d", "conv2d", "addbmm", "quantized_linear", "_weight_int8pack_mm"});
}

bool is_dtype_conversion(const std::string& op) {
  return one_of(base_name(op), {"_to_copy", "_to_dim_order_copy", "to"});
}

}  // namespace etscope::findings
