#include "etscope/training/loop.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "etscope/core/event_names.h"
#include "etscope/formats/blob.h"
#include "etscope/formats/ptd_reader.h"
#include "etscope/formats/ptd_writer.h"
#include "etscope/inspect/inspector.h"

namespace etscope::training {
namespace {

// Keys of the trainer's own entries in the optimizer state file.
constexpr const char* kStepKey = "trainer.step";
constexpr const char* kKindKey = "trainer.optimizer";  // 0 sgd, 1 adamw
constexpr const char* kOrderKey = "trainer.order";     // shuffle (0/1), seed, batches per epoch

int64_t kind_code(const Optimizer& o) { return std::strcmp(o.kind(), "sgd") == 0 ? 0 : 1; }

Percentiles percentiles(const std::vector<double>& v) { return {inspect::percentile(v, 50), inspect::percentile(v, 90)}; }

uint64_t peak_rss() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<uint64_t>(u.ru_maxrss) * 1024;
}

template <typename T>
std::span<const uint8_t> bytes_of(const std::vector<T>& v) {
  return {reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(T)};
}

Status save(Trainer& trainer, const Optimizer& optimizer, const Dataset& data, const LoopOptions& o, int64_t step,
            const std::string& path) {
  ETSCOPE_ASSIGN_OR_RETURN(auto weights, trainer.parameters_ptd());
  const std::vector<StateTensor> state = optimizer.state();
  const std::vector<int64_t> step_v{step}, kind_v{kind_code(optimizer)};
  const std::vector<int64_t> order_v{o.shuffle ? 1 : 0, static_cast<int64_t>(o.seed), static_cast<int64_t>(data.batches())};
  std::vector<PtdTensor> tensors{{kStepKey, ScalarType::kLong, {1}, {}, bytes_of(step_v)},
                                 {kKindKey, ScalarType::kLong, {1}, {}, bytes_of(kind_v)},
                                 {kOrderKey, ScalarType::kLong, {3}, {}, bytes_of(order_v)}};
  for (const StateTensor& t : state) tensors.push_back({t.key, ScalarType::kFloat, t.sizes, {}, bytes_of(t.values)});
  ETSCOPE_ASSIGN_OR_RETURN(auto state_bytes, PtdWriter::write(tensors));
  // The state first: a parameters file is only ever next to the state it continues from.
  ETSCOPE_TRY(write_file_bytes(optimizer_state_path(path), state_bytes));
  return write_file_bytes(path, weights);
}

Result<int64_t> resume(Trainer& trainer, Optimizer& optimizer, const Dataset& data, const LoopOptions& o) {
  ETSCOPE_ASSIGN_OR_RETURN(TensorDataFile weights, PtdReader::open(o.resume_from));
  const std::string state_path = optimizer_state_path(o.resume_from);
  auto state = PtdReader::open(state_path);
  if (!state.ok()) return Error(state.error().code(), "--resume needs the optimizer state beside the weights: " + state.error().message());
  auto int64s = [&](const char* key, size_t n) -> Result<std::vector<int64_t>> {
    const TensorDataEntry* e = state->find(key);
    if (e == nullptr || !e->layout || e->layout->dtype != ScalarType::kLong || e->data.size != n * sizeof(int64_t)) {
      return Error(ErrorCode::kInvalidArgument, state_path + ": no valid '" + key + "' entry (not a state file of etscope train?)");
    }
    std::vector<int64_t> v(n);
    std::memcpy(v.data(), state->bytes(e->data).data(), e->data.size);
    return v;
  };
  ETSCOPE_ASSIGN_OR_RETURN(auto step, int64s(kStepKey, 1));
  ETSCOPE_ASSIGN_OR_RETURN(auto kind, int64s(kKindKey, 1));
  ETSCOPE_ASSIGN_OR_RETURN(auto order, int64s(kOrderKey, 3));
  if (kind[0] != kind_code(optimizer)) {
    return Error(ErrorCode::kInvalidArgument, state_path + ": saved by the " + (kind[0] == 0 ? "sgd" : "adamw") +
                                                  " optimizer; resume with the same --optimizer");
  }
  if (order[0] != (o.shuffle ? 1 : 0) || order[1] != static_cast<int64_t>(o.seed) ||
      order[2] != static_cast<int64_t>(data.batches())) {
    return Error(ErrorCode::kInvalidArgument, state_path + ": saved with other data or order (" + std::to_string(order[2]) +
                                                  " batches per epoch, shuffle " + (order[0] ? "on" : "off") + ", seed " +
                                                  std::to_string(order[1]) + "); resume with the same --data, --shuffle and --seed");
  }
  if (step[0] < 0) return Error(ErrorCode::kInvalidArgument, state_path + ": negative step count");
  std::vector<StateTensor> buffers;
  for (const TensorDataEntry& e : state->entries) {
    if (!e.layout || e.layout->dtype != ScalarType::kFloat || e.key.rfind("trainer.", 0) == 0) continue;
    StateTensor t{e.key, e.layout->sizes, std::vector<float>(e.data.size / sizeof(float))};
    std::memcpy(t.values.data(), state->bytes(e.data).data(), t.values.size() * sizeof(float));
    buffers.push_back(std::move(t));
  }
  ETSCOPE_TRY(trainer.load_parameters(weights));
  ETSCOPE_TRY(optimizer.load_state(buffers, step[0]));
  return step[0];
}

Result<ValidationPoint> validate(Trainer& trainer, const Dataset& val, int64_t step) {
  ValidationPoint p;
  p.step = step;
  std::vector<std::vector<uint8_t>> batch;
  const auto order = val.order(false, 0, 0);
  double loss = 0, right = 0;
  bool has_accuracy = true;
  for (size_t b = 0; b < val.batches(); ++b) {
    val.batch(b, order, &batch);
    auto r = trainer.forward_backward(batch, events::kBlockEval.data());
    if (!r.ok()) return Error(r.error().code(), "validation batch " + std::to_string(b) + ": " + r.error().message());
    loss += r->loss;
    has_accuracy = has_accuracy && r->accuracy.has_value();
    if (r->accuracy) right += *r->accuracy;
  }
  const auto n = static_cast<double>(val.batches());
  p.loss = loss / n;
  if (has_accuracy) p.accuracy = right / n;
  return p;
}

}  // namespace

std::string optimizer_state_path(const std::string& parameters_path) {
  const std::string ext = ".ptd";
  if (parameters_path.size() > ext.size() && parameters_path.compare(parameters_path.size() - ext.size(), ext.size(), ext) == 0) {
    return parameters_path.substr(0, parameters_path.size() - ext.size()) + ".optim.ptd";
  }
  return parameters_path + ".optim.ptd";
}

Result<LoopSummary> run_loop(Trainer& trainer, Optimizer& optimizer, const Dataset& data, const Dataset* validation,
                             const LoopOptions& o, const LoopCallbacks& callbacks, Curve* curve) {
  if (data.batch_size() != static_cast<size_t>(trainer.inputs().front().sizes.front())) {
    return Error(ErrorCode::kInvalidArgument, "the data's batch size differs from the program's");
  }
  if (validation != nullptr && validation->batches() == 0) {
    return Error(ErrorCode::kInvalidArgument, "the validation data holds less than one batch");
  }
  ETSCOPE_TRY(optimizer.bind(trainer.parameters()));
  int64_t done_before = 0;
  if (!o.resume_from.empty()) {
    ETSCOPE_ASSIGN_OR_RETURN(done_before, resume(trainer, optimizer, data, o));
  }
  const auto per_epoch = static_cast<int64_t>(data.batches());
  const int64_t todo = o.steps > 0 ? o.steps : o.epochs * per_epoch;
  if (todo <= 0) return Error(ErrorCode::kInvalidArgument, "nothing to do: give --steps or --epochs");

  LoopSummary s;
  s.batches_per_epoch = data.batches();
  s.dropped_samples = data.dropped();
  *curve = Curve{};
  curve->first_step = done_before + 1;
  std::vector<std::vector<uint8_t>> batch;
  std::vector<uint32_t> order;
  int64_t order_epoch = -1;
  const auto start = std::chrono::steady_clock::now();
  auto save_to = [&](const std::string& path, int64_t step) -> Status {
    ETSCOPE_TRY(save(trainer, optimizer, data, o, step, path));
    s.saved.push_back(path);
    if (callbacks.on_save) callbacks.on_save(path);
    return ok_status();
  };
  for (int64_t k = 0; k < todo; ++k) {
    const int64_t global = done_before + k;  // 0-based step index over all runs
    const int64_t epoch = global / per_epoch;
    if (epoch != order_epoch) {
      order = data.order(o.shuffle, o.seed, static_cast<uint64_t>(epoch));
      order_epoch = epoch;
    }
    data.batch(static_cast<size_t>(global % per_epoch), order, &batch);
    auto r = trainer.step(batch, optimizer);
    if (!r.ok()) {
      const std::string what = "step " + std::to_string(global + 1) + ": " + r.error().message();
      if (!o.save_path.empty() && trainer.rolled_back()) {
        // The parameters went back to the last ones with a finite loss; the optimizer's state
        // has moved past them, so no state file is left beside them (a resume from this pair
        // would not be exact): an older one from --save-every is removed.
        ETSCOPE_ASSIGN_OR_RETURN(auto weights, trainer.parameters_ptd());
        ETSCOPE_TRY(write_file_bytes(o.save_path, weights));
        std::remove(optimizer_state_path(o.save_path).c_str());
        s.saved.push_back(o.save_path);
        if (callbacks.on_save) callbacks.on_save(o.save_path);
        return Error(r.error().code(), what + "; stopped, the last parameters with a finite loss (those of step " +
                                           std::to_string(global) + ") are in " + o.save_path);
      }
      return Error(r.error().code(), what + "; stopped");
    }
    curve->loss.push_back(r->loss);
    curve->accuracy.push_back(r->accuracy);
    curve->forward_backward_ms.push_back(r->forward_backward_ms);
    curve->optimizer_ms.push_back(r->optimizer_ms);
    curve->step_ms.push_back(r->forward_backward_ms + r->optimizer_ms);
    ++s.steps;
    if (callbacks.on_step) {
      StepEvent e{global + 1, done_before + todo, epoch, &*r,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
      callbacks.on_step(e);
    }
    const bool last = k + 1 == todo;
    if (validation != nullptr && ((o.eval_every > 0 && (global + 1) % o.eval_every == 0) || last)) {
      ETSCOPE_ASSIGN_OR_RETURN(ValidationPoint p, validate(trainer, *validation, global + 1));
      curve->val.push_back(p);
      if (callbacks.on_validation) callbacks.on_validation(p);
    }
    if (!o.save_path.empty() && (last || (o.save_every > 0 && (global + 1) % o.save_every == 0))) {
      ETSCOPE_TRY(save_to(o.save_path, global + 1));
    }
  }
  s.total_steps = done_before + todo;
  s.epochs = static_cast<double>(s.total_steps) / static_cast<double>(per_epoch);
  s.forward_backward_ms = percentiles(curve->forward_backward_ms);
  s.optimizer_ms = percentiles(curve->optimizer_ms);
  s.final_loss = curve->loss.back();
  s.final_accuracy = curve->accuracy.back();
  s.peak_rss_bytes = peak_rss();
  return s;
}

}  // namespace etscope::training
