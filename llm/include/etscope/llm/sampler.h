// Choosing the next token from logits: greedy (temperature 0), or sampling from the softmax at a
// temperature, optionally restricted to the smallest set of tokens whose probability reaches
// top_p (nucleus sampling), with a seeded generator so that a seed reproduces a generation.
#pragma once

#include <cstdint>
#include <span>

namespace etscope::llm {

class Sampler {
 public:
  /// temperature <= 0: greedy. top_p outside (0, 1): no nucleus restriction.
  Sampler(double temperature, double top_p, uint64_t seed);
  /// The chosen token id; greedy picks the first largest logit (as torch.argmax). NaN logits are
  /// never chosen unless every logit is NaN (then 0). `logits` must not be empty.
  int64_t sample(std::span<const float> logits);

 private:
  double next_uniform();
  double temperature_, top_p_;
  uint64_t state_;
};

}  // namespace etscope::llm
