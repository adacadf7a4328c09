#include "etscope/training/trainer.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>

#include "etscope/core/event_names.h"
#include "etscope/core/event_tracer.h"
#include "etscope/formats/ptd_writer.h"
#include "labels.h"

namespace etscope::training {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point a) { return std::chrono::duration<double, std::milli>(Clock::now() - a).count(); }

int64_t integer_at(const TensorImpl& t, int64_t i) { return label_at(t.dtype(), t.data(), i); }

double float_at(const TensorImpl& t, int64_t i) {
  return t.dtype() == ScalarType::kDouble ? t.data_as<double>()[i] : static_cast<double>(t.data_as<float>()[i]);
}

}  // namespace

struct Trainer::Impl {
  std::unique_ptr<runner::Runner> runner;
  TrainingLayout layout;
  std::vector<InputSpec> inputs;
  std::vector<Parameter> params;
  std::vector<std::vector<float>> backup;  // parameters before the last update
  bool have_backup = false;
  int label_input = -1;  // the integer [B] input accuracy compares output 1 with, or -1
  int64_t label_count = 0;  // B

  bool rolled_back = false;  // the last step's loss was not finite and the weights went back

  std::string where() const { return runner->program().name() + ": method '" + layout.method + "'"; }
  Result<StepResult> pass(const std::vector<std::vector<uint8_t>>& batch, const char* block);
  // Label k of the batch, read from the bytes given (the program's planned memory may reuse the
  // input's bytes for later values, so the input tensor no longer holds them after execution).
  int64_t label_at(const std::vector<std::vector<uint8_t>>& batch, int64_t k) const {
    return training::label_at(inputs[static_cast<size_t>(label_input)].dtype, batch[static_cast<size_t>(label_input)].data(), k);
  }
  Error non_finite(double loss) const;
};

Trainer::Trainer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Trainer::~Trainer() = default;
runner::Runner& Trainer::runner() { return *impl_->runner; }
const TrainingLayout& Trainer::layout() const { return impl_->layout; }
const std::vector<InputSpec>& Trainer::inputs() const { return impl_->inputs; }
std::span<const Parameter> Trainer::parameters() const { return impl_->params; }

Result<std::unique_ptr<Trainer>> Trainer::load(const runner::RunnerOptions& options) {
  auto impl = std::make_unique<Impl>();
  ETSCOPE_ASSIGN_OR_RETURN(impl->runner, runner::Runner::load(options));
  const Program& program = impl->runner->program();
  const std::string& method = impl->runner->method_name();
  const auto layout = training_layout(program, method);
  if (!layout) {
    return Error(ErrorCode::kInvalidArgument, program.name() + ": method '" + method +
                                                  "' is not a training program (no __et_training_gradients_index_" + method +
                                                  " / __et_training_parameters_index_" + method +
                                                  " methods: export it with torch.export's _export_forward_backward)");
  }
  impl->layout = *layout;
  const std::string where = impl->where();
  if (layout->forward_outputs() == 0 || layout->gradient_count() != layout->parameter_count()) {
    return Error(ErrorCode::kInvalidArgument, where + ": needs a loss output and one gradient per parameter");
  }
  runtime::Method& m = impl->runner->method();
  const EValue& loss = m.output(0);
  if (loss.tag != Tag::kTensor || loss.tensor->numel() != 1 ||
      (loss.tensor->dtype() != ScalarType::kFloat && loss.tensor->dtype() != ScalarType::kDouble)) {
    return Error(ErrorCode::kInvalidArgument, where + ": output 0 is not a floating-point scalar loss");
  }
  for (size_t i = 0; i < m.num_inputs(); ++i) {
    const EValue& in = m.input(i);
    if (in.tag != Tag::kTensor) {
      return Error(ErrorCode::kNotSupported, where + ": input " + std::to_string(i) + " is not a tensor");
    }
    impl->inputs.push_back({in.tensor->dtype(), std::vector<int64_t>(in.tensor->sizes().begin(), in.tensor->sizes().end())});
  }
  const ExecutionPlan* plan = program.find_plan(method);
  for (size_t i = 0; i < layout->parameter_count(); ++i) {
    const size_t out = layout->parameters_begin + i;
    const size_t grad = layout->gradients_begin + i;
    const std::string& name = layout->parameter_names[i];
    const EValue& p = m.output(out);
    const EValue& g = m.output(grad);
    if (p.tag != Tag::kTensor || g.tag != Tag::kTensor) {
      return Error(ErrorCode::kInvalidArgument, where + ": parameter '" + name + "' or its gradient is not a tensor");
    }
    const TensorDataKind kind = plan->values[static_cast<size_t>(plan->outputs[out])].tensor.data_kind;
    if (kind != TensorDataKind::kPlannedWithInit && kind != TensorDataKind::kExternalMutable && kind != TensorDataKind::kPlanned) {
      return Error(ErrorCode::kNotSupported, where + ": parameter '" + name + "' is " + to_string(kind) +
                                                 " data of the program, which training may not write");
    }
    impl->params.push_back({name, p.tensor, g.tensor});
  }
  // Accuracy: output 1 against the last integer input of shape [B].
  for (size_t i = impl->inputs.size(); i-- > 0;) {
    const InputSpec& in = impl->inputs[i];
    if (is_label_dtype(in.dtype) && in.sizes.size() == 1) {
      impl->label_input = static_cast<int>(i);
      impl->label_count = in.sizes[0];
      break;
    }
  }
  return std::unique_ptr<Trainer>(new Trainer(std::move(impl)));
}

// One forward-backward pass: loss and accuracy, whatever the loss's value.
Result<StepResult> Trainer::Impl::pass(const std::vector<std::vector<uint8_t>>& batch, const char* block) {
  runtime::Method& method = runner->method();
  if (batch.size() != inputs.size()) {
    return Error(ErrorCode::kInvalidArgument, where() + ": " + std::to_string(batch.size()) + " inputs given, it takes " +
                                                  std::to_string(inputs.size()));
  }
  for (size_t i = 0; i < batch.size(); ++i) ETSCOPE_TRY(method.set_input(i, batch[i], inputs[i].sizes));
  StepResult r;
  const auto a = Clock::now();
  Status s = method.execute(block);
  r.forward_backward_ms = ms_since(a);
  if (!s.ok()) {
    // A label past the classes fails in the loss's gather or nll_loss: say what the labels were.
    if (label_input < 0) return s.error();
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int64_t k = 0; k < label_count; ++k) {
      lo = std::min(lo, label_at(batch, k));
      hi = std::max(hi, label_at(batch, k));
    }
    return Error(s.error().code(), s.error().message() + " (this batch's labels, input " + std::to_string(label_input) +
                                       ", lie in [" + std::to_string(lo) + ", " + std::to_string(hi) + "])");
  }
  r.loss = float_at(*method.output(0).tensor, 0);
  if (layout.forward_outputs() >= 2 && label_input >= 0 && method.output(1).tag == Tag::kTensor) {
    const TensorImpl& pred = *method.output(1).tensor;
    const int64_t b = label_count;
    const bool indices = is_label_dtype(pred.dtype()) && pred.numel() == b;
    const bool logits = (pred.dtype() == ScalarType::kFloat || pred.dtype() == ScalarType::kDouble) && pred.dim() == 2 &&
                        pred.size(0) == b && pred.size(1) > 0;
    if (indices || logits) {
      int64_t right = 0;
      for (int64_t k = 0; k < b; ++k) {
        int64_t guess = 0;
        if (indices) {
          guess = integer_at(pred, k);
        } else {
          for (int64_t c = 1; c < pred.size(1); ++c) {
            if (float_at(pred, k * pred.size(1) + c) > float_at(pred, k * pred.size(1) + guess)) guess = c;
          }
        }
        right += guess == label_at(batch, k);
      }
      r.accuracy = static_cast<double>(right) / static_cast<double>(b);
    }
  }
  return r;
}

Error Trainer::Impl::non_finite(double loss) const {
  return Error(ErrorCode::kInvalidArgument, where() + ": the loss is " + (std::isnan(loss) ? "NaN" : "infinite"));
}

Result<StepResult> Trainer::forward_backward(const std::vector<std::vector<uint8_t>>& batch, const char* block) {
  ETSCOPE_ASSIGN_OR_RETURN(StepResult r, impl_->pass(batch, block));
  if (!std::isfinite(r.loss)) return impl_->non_finite(r.loss);
  return r;
}

Result<StepResult> Trainer::step(const std::vector<std::vector<uint8_t>>& batch, Optimizer& optimizer) {
  Impl& m = *impl_;
  ETSCOPE_ASSIGN_OR_RETURN(StepResult r, m.pass(batch, events::kBlockExecute.data()));
  if (!std::isfinite(r.loss)) {
    // The previous update made these weights: go back to the ones before it, the last whose loss
    // was finite.
    if (m.have_backup) {
      for (size_t i = 0; i < m.params.size(); ++i) {
        std::memcpy(m.params[i].value->data(), m.backup[i].data(), m.backup[i].size() * sizeof(float));
      }
      m.rolled_back = true;
    }
    return m.non_finite(r.loss);
  }
  // Keep the weights this finite loss came from (outside the optimizer's timing and event).
  m.backup.resize(m.params.size());
  for (size_t i = 0; i < m.params.size(); ++i) {
    const float* w = m.params[i].value->data_as<float>();
    m.backup[i].assign(w, w + m.params[i].value->numel());
  }
  m.have_backup = true;
  const auto a = Clock::now();
  {
    MethodScope scope(m.runner->tracer(), events::kOptimizerStep.data());
    optimizer.step(m.params);
  }
  r.optimizer_ms = ms_since(a);
  return r;
}

bool Trainer::rolled_back() const { return impl_->rolled_back; }

Result<std::vector<uint8_t>> Trainer::parameters_ptd() const {
  std::vector<PtdTensor> tensors;
  for (const Parameter& p : impl_->params) {
    const TensorImpl& t = *p.value;
    tensors.push_back({p.name, t.dtype(), std::vector<int32_t>(t.sizes().begin(), t.sizes().end()),
                       std::vector<uint8_t>(t.dim_order().begin(), t.dim_order().end()),
                       std::span<const uint8_t>(static_cast<const uint8_t*>(t.data()), t.nbytes())});
  }
  // 128-byte segments: what ExecuTorch's to_executorch() writes for a split program's external
  // weights (FlatTensorConfig's default), so the file is laid out as ExecuTorch's own.
  return PtdWriter::write(tensors);
}

Status Trainer::load_parameters(const TensorDataFile& file) {
  for (const Parameter& p : impl_->params) {
    const TensorDataEntry* e = file.find(p.name);
    if (e == nullptr) return Error(ErrorCode::kInvalidArgument, file.name() + ": no entry '" + p.name + "'");
    const TensorImpl& t = *p.value;
    const std::vector<int32_t> sizes(t.sizes().begin(), t.sizes().end());
    if (!e->layout || e->layout->dtype != t.dtype() || e->layout->sizes != sizes || e->data.size != t.nbytes()) {
      return Error(ErrorCode::kInvalidArgument, file.name() + ": '" + p.name + "' has another dtype or shape than the parameter");
    }
    std::memcpy(t.data(), file.bytes(e->data).data(), t.nbytes());
  }
  impl_->have_backup = false;
  return ok_status();
}

}  // namespace etscope::training
