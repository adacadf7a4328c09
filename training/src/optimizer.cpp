#include "etscope/training/optimizer.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace etscope::training {
namespace {

bool finite_non_negative(double v) { return std::isfinite(v) && v >= 0; }

// The checks both optimizers make of their parameters: float32, contiguous, a gradient of the
// same shape.
Status check_parameters(std::span<const Parameter> params, const char* kind) {
  for (const Parameter& p : params) {
    if (p.value == nullptr || p.grad == nullptr) {
      return Error(ErrorCode::kInvalidArgument, std::string(kind) + ": parameter '" + p.name + "' has no tensor or gradient");
    }
    if (p.value->dtype() != ScalarType::kFloat || p.grad->dtype() != ScalarType::kFloat) {
      return Error(ErrorCode::kNotSupported, std::string(kind) + ": parameter '" + p.name + "' is " +
                                                 scalar_type_name(p.value->dtype()) + "; only float32 parameters can be trained");
    }
    if (!std::equal(p.value->sizes().begin(), p.value->sizes().end(), p.grad->sizes().begin(), p.grad->sizes().end())) {
      return Error(ErrorCode::kInvalidArgument, std::string(kind) + ": the gradient of '" + p.name + "' has another shape");
    }
    if (!p.value->contiguous() || !p.grad->contiguous()) {
      return Error(ErrorCode::kNotSupported, std::string(kind) + ": parameter '" + p.name + "' is not contiguous");
    }
  }
  return ok_status();
}

std::vector<int32_t> sizes_of(const TensorImpl& t) {
  return std::vector<int32_t>(t.sizes().begin(), t.sizes().end());
}

// Buffers keyed by "<prefix>/<parameter>", one float per parameter element.
class Buffers {
 public:
  void bind(std::span<const Parameter> params, const std::string& prefix) {
    for (const Parameter& p : params) {
      Entry& e = entries_[prefix + "/" + p.name];
      e.sizes = sizes_of(*p.value);
      e.values.assign(static_cast<size_t>(p.value->numel()), 0.0f);
    }
  }
  std::vector<float>& at(const std::string& prefix, const std::string& name) { return entries_.at(prefix + "/" + name).values; }
  void export_to(std::vector<StateTensor>* out) const {
    for (const auto& [key, e] : entries_) out->push_back({key, e.sizes, e.values});
  }
  Status import_from(const std::vector<StateTensor>& state, const char* kind) {
    for (auto& [name, e] : entries_) {
      const std::string& key = name;  // a structured binding cannot be captured before C++20 clang 16
      auto it = std::find_if(state.begin(), state.end(), [&](const StateTensor& t) { return t.key == key; });
      if (it == state.end()) return Error(ErrorCode::kInvalidArgument, std::string(kind) + " state: no entry '" + key + "'");
      if (it->values.size() != e.values.size()) {
        return Error(ErrorCode::kInvalidArgument, std::string(kind) + " state: '" + key + "' has " +
                                                      std::to_string(it->values.size()) + " values, the parameter " +
                                                      std::to_string(e.values.size()));
      }
      e.values = it->values;
    }
    return ok_status();
  }

 private:
  struct Entry {
    std::vector<int32_t> sizes;
    std::vector<float> values;
  };
  std::map<std::string, Entry> entries_;
};

// ExecuTorch's SGD (extension/training/optimizer/sgd.cpp), element by element in its arithmetic:
// each `a + b * alpha` and `a * alpha` is computed in double and stored as float.
//   d = grad (+ weight_decay * p)
//   momentum: buf = d on the first step, else buf = momentum * buf + (1 - dampening) * d;
//             d = d + momentum * buf (nesterov) or d = buf
//   p = p - lr * d
// What both optimizers keep: per-parameter buffers and the step count, saved and restored alike.
class BufferedOptimizer : public Optimizer {
 public:
  int64_t steps() const final { return steps_; }
  std::vector<StateTensor> state() const final {
    std::vector<StateTensor> out;
    buffers_.export_to(&out);
    return out;
  }
  Status load_state(const std::vector<StateTensor>& state, int64_t steps) final {
    ETSCOPE_TRY(buffers_.import_from(state, kind()));
    steps_ = steps;
    return ok_status();
  }

 protected:
  Buffers buffers_;
  int64_t steps_ = 0;
};

class Sgd final : public BufferedOptimizer {
 public:
  explicit Sgd(const SgdOptions& o) : o_(o) {}
  const char* kind() const override { return "sgd"; }
  template <bool kDecay, bool kMomentum, bool kFirst, bool kNesterov>
  void update(float* __restrict w, const float* __restrict g, float* __restrict buf, int64_t n) const {
    const double decay = o_.weight_decay, momentum = o_.momentum, keep = 1 - o_.dampening, neg_lr = -1 * o_.lr;
    for (int64_t i = 0; i < n; ++i) {
      float d = g[i];
      if constexpr (kDecay) d = static_cast<float>(d + static_cast<double>(w[i]) * decay);
      if constexpr (kMomentum) {
        if constexpr (kFirst) {
          buf[i] = d;
        } else {
          buf[i] = static_cast<float>(static_cast<double>(buf[i]) * momentum);
          buf[i] = static_cast<float>(buf[i] + static_cast<double>(d) * keep);
        }
        d = kNesterov ? static_cast<float>(d + static_cast<double>(buf[i]) * momentum) : buf[i];
      }
      w[i] = static_cast<float>(w[i] + static_cast<double>(d) * neg_lr);
    }
  }


  Status bind(std::span<const Parameter> params) override {
    if (!finite_non_negative(o_.lr) || !finite_non_negative(o_.momentum) || !finite_non_negative(o_.weight_decay) ||
        !std::isfinite(o_.dampening)) {
      return Error(ErrorCode::kInvalidArgument, "sgd: lr, momentum and weight decay must be finite and not negative");
    }
    if (o_.nesterov && (o_.momentum <= 0 || o_.dampening != 0)) {
      return Error(ErrorCode::kInvalidArgument, "sgd: nesterov momentum needs a momentum and zero dampening");
    }
    ETSCOPE_TRY(check_parameters(params, "sgd"));
    if (o_.momentum != 0) buffers_.bind(params, "sgd.momentum_buffer");
    return ok_status();
  }

  void step(std::span<const Parameter> params) override {
    for (const Parameter& p : params) {
      float* w = p.value->data_as<float>();
      const float* g = p.grad->data_as<float>();
      float* buf = o_.momentum != 0 ? buffers_.at("sgd.momentum_buffer", p.name).data() : nullptr;
      const int64_t n = p.value->numel();
      // One loop per combination of the options, so that each is a plain loop the compiler
      // vectorises (the options in locals, no branch inside); the arithmetic is the same.
      const bool decay = o_.weight_decay != 0;
      if (buf == nullptr) {
        decay ? update<true, false, false, false>(w, g, buf, n) : update<false, false, false, false>(w, g, buf, n);
      } else if (steps_ == 0) {
        if (o_.nesterov) {
          decay ? update<true, true, true, true>(w, g, buf, n) : update<false, true, true, true>(w, g, buf, n);
        } else {
          decay ? update<true, true, true, false>(w, g, buf, n) : update<false, true, true, false>(w, g, buf, n);
        }
      } else if (o_.nesterov) {
        decay ? update<true, true, false, true>(w, g, buf, n) : update<false, true, false, true>(w, g, buf, n);
      } else {
        decay ? update<true, true, false, false>(w, g, buf, n) : update<false, true, false, false>(w, g, buf, n);
      }
    }
    ++steps_;
  }


 private:
  SgdOptions o_;
};

// torch.optim.AdamW (single-tensor path, the one PyTorch takes for CPU tensors), in float32 with
// its scalars rounded to float as ATen does, the bias corrections in double:
//   p *= 1 - lr * weight_decay
//   m = lerp(m, g, 1 - beta1);  v = v * beta2 + (1 - beta2) * g * g
//   denom = sqrt(v or max(v_max, v)) / sqrt(1 - beta2^t) + eps
//   p += -(lr / (1 - beta1^t)) * m / denom
class AdamW final : public BufferedOptimizer {
 public:
  explicit AdamW(const AdamWOptions& o) : o_(o) {}
  const char* kind() const override { return "adamw"; }

  Status bind(std::span<const Parameter> params) override {
    if (!finite_non_negative(o_.lr) || !finite_non_negative(o_.weight_decay) || !(o_.eps >= 0 && std::isfinite(o_.eps))) {
      return Error(ErrorCode::kInvalidArgument, "adamw: lr, eps and weight decay must be finite and not negative");
    }
    if (!(o_.beta1 >= 0 && o_.beta1 < 1 && o_.beta2 >= 0 && o_.beta2 < 1)) {
      return Error(ErrorCode::kInvalidArgument, "adamw: betas must lie in [0, 1)");
    }
    ETSCOPE_TRY(check_parameters(params, "adamw"));
    buffers_.bind(params, "adamw.exp_avg");
    buffers_.bind(params, "adamw.exp_avg_sq");
    if (o_.amsgrad) buffers_.bind(params, "adamw.max_exp_avg_sq");
    return ok_status();
  }

  void step(std::span<const Parameter> params) override {
    ++steps_;
    const auto t = static_cast<double>(steps_);
    const double bias1 = 1 - std::pow(o_.beta1, t);
    const double bias2_sqrt = std::sqrt(1 - std::pow(o_.beta2, t));
    const auto decay = static_cast<float>(1 - o_.lr * o_.weight_decay);
    const auto w1 = static_cast<float>(1 - o_.beta1);
    const auto b2 = static_cast<float>(o_.beta2);
    const auto w2 = static_cast<float>(1 - o_.beta2);
    const auto bc2 = static_cast<float>(bias2_sqrt);
    const auto eps = static_cast<float>(o_.eps);
    const auto step_size = static_cast<float>(-(o_.lr / bias1));
    for (const Parameter& p : params) {
      float* w = p.value->data_as<float>();
      const float* g = p.grad->data_as<float>();
      float* m = buffers_.at("adamw.exp_avg", p.name).data();
      float* v = buffers_.at("adamw.exp_avg_sq", p.name).data();
      float* vmax = o_.amsgrad ? buffers_.at("adamw.max_exp_avg_sq", p.name).data() : nullptr;
      const Scalars k{decay, w1, b2, w2, bc2, eps, step_size};
      const int64_t n = p.value->numel();
      // One loop per combination of the options, each a plain loop the compiler vectorises.
      if (w1 < 0.5f) {
        vmax != nullptr ? update<true, true>(w, g, m, v, vmax, n, k) : update<true, false>(w, g, m, v, vmax, n, k);
      } else {
        vmax != nullptr ? update<false, true>(w, g, m, v, vmax, n, k) : update<false, false>(w, g, m, v, vmax, n, k);
      }
    }
  }


 private:
  struct Scalars {
    float decay, w1, b2, w2, bc2, eps, step_size;
  };
  // kLerpFromM: lerp's two formulas, as ATen picks by the weight.
  template <bool kLerpFromM, bool kAmsgrad>
  static void update(float* __restrict w, const float* __restrict g, float* __restrict m, float* __restrict v, float* __restrict vmax, int64_t n,
                     const Scalars k) {
    for (int64_t i = 0; i < n; ++i) {
      w[i] = w[i] * k.decay;
      m[i] = kLerpFromM ? m[i] + k.w1 * (g[i] - m[i]) : g[i] - (g[i] - m[i]) * (1 - k.w1);
      v[i] = v[i] * k.b2;
      v[i] = v[i] + k.w2 * g[i] * g[i];
      float second = v[i];
      if constexpr (kAmsgrad) second = vmax[i] = std::max(vmax[i], v[i]);
      const float denom = std::sqrt(second) / k.bc2 + k.eps;
      w[i] = w[i] + k.step_size * m[i] / denom;
    }
  }


  AdamWOptions o_;
};

}  // namespace

std::unique_ptr<Optimizer> Optimizer::sgd(const SgdOptions& options) { return std::make_unique<Sgd>(options); }
std::unique_ptr<Optimizer> Optimizer::adamw(const AdamWOptions& options) { return std::make_unique<AdamW>(options); }

}  // namespace etscope::training
