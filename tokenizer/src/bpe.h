// The byte-pair-encoding merge loop both BPE tokenizers share (Hugging Face merges and tiktoken
// ranks): repeatedly merge the adjacent pair with the lowest rank, the leftmost one on a tie.
//
// A priority queue of candidate pairs over a linked list of symbols makes a word of n symbols
// cost O(n log n) instead of the O(n^2) of rescanning every pair after each merge; a queued pair
// whose symbols have since merged with something else is recognised and skipped when popped.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <vector>

namespace etscope::tokenizer {

struct BpeMerge {
  uint32_t rank;   ///< lower merges first
  int64_t merged;  ///< id of the merged symbol
};

/// Merges `symbols` (ids) in place. `lookup(left, right)` returns the merge of two adjacent ids,
/// or nullopt when they do not merge.
template <typename Lookup>
void bpe_merge(std::vector<int64_t>& symbols, Lookup&& lookup) {
  const size_t n = symbols.size();
  if (n < 2) return;
  std::vector<int32_t> prev(n), next(n);
  for (size_t i = 0; i < n; ++i) {
    prev[i] = static_cast<int32_t>(i) - 1;
    next[i] = i + 1 < n ? static_cast<int32_t>(i + 1) : -1;
  }
  struct Candidate {
    uint32_t rank;
    int32_t pos;  // index of the left symbol; merged symbols keep the left one's index
    int64_t left, right, merged;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
  auto push = [&](int32_t pos) {
    if (pos < 0 || next[pos] < 0) return;
    const int64_t l = symbols[pos], r = symbols[next[pos]];
    if (auto m = lookup(l, r)) queue.push({m->rank, pos, l, r, m->merged});
  };
  for (size_t i = 0; i + 1 < n; ++i) push(static_cast<int32_t>(i));
  std::vector<bool> dead(n, false);
  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    const int32_t r = next[c.pos];
    if (dead[c.pos] || r < 0 || symbols[c.pos] != c.left || symbols[r] != c.right) continue;
    symbols[c.pos] = c.merged;
    dead[r] = true;
    next[c.pos] = next[r];
    if (next[r] >= 0) prev[next[r]] = c.pos;
    push(prev[c.pos]);
    push(c.pos);
  }
  size_t out = 0;
  for (int32_t i = 0; i >= 0; i = next[i]) symbols[out++] = symbols[i];
  symbols.resize(out);
}

}  // namespace etscope::tokenizer
