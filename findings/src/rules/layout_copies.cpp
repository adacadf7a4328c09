// layout-copies: permute/transpose/clone chains whose result feeds a matrix product. The copy
// moves every element once per run so that the product can read its operand in another order;
// matrix kernels can read a transposed operand directly. Copies of constants are constant-work's.
#include <algorithm>
#include <map>
#include <set>

#include "etscope/core/text.h"
#include "rules/rules.h"

namespace etscope::findings {

void rule_layout_copies(const Context& ctx, std::vector<Found>& out) {
  const std::vector<Call>& calls = ctx.calls();
  const std::vector<bool> constant_call = constant_calls(ctx);
  // Copies grouped by the value they start from (the first copy's input).
  std::map<int32_t, std::vector<size_t>> by_source;
  std::map<int32_t, std::set<std::string>> products;
  for (size_t k = 0; k < calls.size(); ++k) {
    const Call& c = calls[k];
    if (c.delegate || constant_call[k] || !is_layout_copy(c.op) || c.inputs.empty() || c.outputs.size() != 1) continue;
    // Skip copies fed by another copy: the chain is counted from its first link.
    const int32_t w = ctx.writer(c.inputs.front(), k);
    if (w >= 0 && is_layout_copy(calls[static_cast<size_t>(w)].op) && !constant_call[static_cast<size_t>(w)]) continue;
    // Follow the chain of copies forward to a matrix product.
    std::vector<size_t> chain{k};
    std::set<std::string> reached;
    std::vector<size_t> frontier{k};
    while (!frontier.empty() && chain.size() < 16) {
      const size_t at = frontier.back();
      frontier.pop_back();
      for (int32_t v : calls[at].outputs) {
        for (size_t r : ctx.readers(v, at)) {
          if (is_matrix_product(calls[r].op)) {
            reached.insert(calls[r].op + " at instruction " + std::to_string(calls[r].instruction));
          } else if (!calls[r].delegate && is_layout_copy(calls[r].op) && calls[r].outputs.size() == 1 &&
                     std::find(chain.begin(), chain.end(), r) == chain.end()) {
            chain.push_back(r);
            frontier.push_back(r);
          }
        }
      }
    }
    if (reached.empty()) continue;
    std::vector<size_t>& group = by_source[c.inputs.front()];
    group.insert(group.end(), chain.begin(), chain.end());
    products[c.inputs.front()].insert(reached.begin(), reached.end());
  }

  for (auto& [source, group] : by_source) {
    std::sort(group.begin(), group.end());
    group.erase(std::unique(group.begin(), group.end()), group.end());
    Found f;
    Finding& fi = f.finding;
    fi.rule = "layout-copies";
    const TensorInfo* t = ctx.tensor(source);
    const bool state = t && (t->data_kind == TensorDataKind::kPlannedWithInit || t->data_kind == TensorDataKind::kExternalMutable);
    const std::string copies = std::to_string(group.size()) + " layout copies";
    fi.what = (group.size() == 1 ? "a layout copy" : copies) + " of " + ctx.describe_value(source) +
              " on every run only to feed " + (products[source].size() == 1 ? "a matrix product" : "matrix products");
    std::string ops;
    uint64_t moved = 0;
    for (size_t k : group) {
      fi.where.push_back(ctx.place(calls[k]));
      ops += (ops.empty() ? "" : ", ") + calls[k].op + " #" + std::to_string(calls[k].instruction);
      for (int32_t v : calls[k].outputs) moved += ctx.tensor(v) ? ctx.tensor(v)->nbytes : 0;
    }
    fi.evidence.push_back("copies: " + ops + " (" + bytes_text(moved) + " written per run)");
    std::string reached;
    for (const std::string& p : products[source]) reached += (reached.empty() ? "" : ", ") + p;
    fi.evidence.push_back("feeding: " + reached);
    ctx.cost(fi, group);
    if (state) {
      fi.advice = "A trainable weight is transposed afresh for each product that reads it: ExecuTorch's training export "
                  "decomposes linear and its backward this way and offers no switch against it, and constant propagation "
                  "cannot fold a weight that changes every step. What it costs is the runtime's: a kernel library whose mm "
                  "reads a transposed operand (or an optimizer step that also keeps the transposed copy) saves it.";
    } else {
      fi.advice = "Let the matrix product read the operand as it is: keep aten.linear / matmul undecomposed for a delegate "
                  "(XnnpackPartitioner takes fully connected and batched matrix products with transposed operands), or "
                  "reorder the model so that the producer writes the layout the product wants.";
    }
    f.calls = group;
    out.push_back(std::move(f));
  }
}

}  // namespace etscope::findings
