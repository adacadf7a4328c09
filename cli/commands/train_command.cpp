// etscope train: fine-tune a joint forward+backward program on .npy or CIFAR-10 data with SGD or
// AdamW; progress, the curve files, saved weights and a per-step profile. The loop, the
// optimizers and every number are the training library's; this file arranges and prints them.
#include <unistd.h>

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "commands/command.h"
#include "commands/store_options.h"
#include "etscope/formats/blob.h"
#include "etscope/core/text.h"
#include "etscope/inspect/training_curve.h"
#include "etscope/training/loop.h"
#include "etscope/training/trainer.h"
#include "render/format.h"
#include "render/json_output.h"

namespace etscope::cli {
namespace {

std::string ends_with_lower(const std::string& s, size_t n) {
  std::string t = s.size() >= n ? s.substr(s.size() - n) : s;
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return t;
}

std::string loss_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string eta_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<long long>(seconds + 0.5);
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, (s / 60) % 60);
  else if (s >= 60) std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%llds", s);
  return buf;
}

class TrainCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("train", "Fine-tune a training program (joint forward+backward .pte) with SGD or AdamW");
    sub->add_option("model", model_, "Training program (.pte) exported with torch.export's _export_forward_backward")->required();
    sub->add_option("--ptd", ptd_files_, "Tensor-data file with external weights (repeatable); with --resume the last one is "
                                         "the checkpoint to continue from");
    sub->add_option("--method", method_, "Training method (default: forward)");
    sub->add_option("--data", data_files_, "One .npy per program input (first dimension = samples), or one CIFAR-10 binary file")
        ->required();
    sub->add_option("--val", val_files_, "Validation data, as --data (loss and accuracy without updates)");
    auto* steps = sub->add_option("--steps", loop_.steps, "Optimizer steps to take");
    auto* epochs = sub->add_option("--epochs", loop_.epochs, "Whole passes over the data (the last partial batch is dropped)");
    steps->excludes(epochs);
    epochs->excludes(steps);
    sub->add_option("--optimizer", optimizer_, "sgd (default; ExecuTorch's SGD) or adamw (torch.optim.AdamW)")
        ->check(CLI::IsMember({"sgd", "adamw"}));
    lr_opt_ = sub->add_option("--lr", lr_, "Learning rate (default 0.001)");
    sub->add_option("--momentum", momentum_, "SGD momentum (default 0)");
    sub->add_option("--dampening", dampening_, "SGD dampening (default 0)");
    wd_opt_ = sub->add_option("--weight-decay", weight_decay_, "Weight decay (default: 0 for sgd, 0.01 for adamw)");
    sub->add_flag("--nesterov", nesterov_, "SGD: Nesterov momentum");
    sub->add_option("--betas", betas_text_, "AdamW: beta1,beta2 (default 0.9,0.999)");
    sub->add_option("--eps", eps_, "AdamW: epsilon (default 1e-8)");
    sub->add_flag("--amsgrad", amsgrad_, "AdamW: the AMSGrad variant");
    sub->add_flag("--shuffle", loop_.shuffle, "A new random order of the samples every epoch (see --seed)");
    sub->add_option("--seed", loop_.seed, "Seed of --shuffle's order (default 0)");
    sub->add_option("--save", loop_.save_path, "Write the trained parameters here (.ptd) and the optimizer state beside it (.optim.ptd)");
    sub->add_option("--save-every", loop_.save_every, "Also save every K steps");
    sub->add_option("--eval-every", loop_.eval_every, "Validate every K steps (default: after the last step)");
    sub->add_flag("--resume", resume_, "Continue from the last --ptd file and its .optim.ptd (written by --save)");
    sub->add_option("--curve", curve_path_, "Loss, accuracy, validation and step times per step: .json or .csv");
    sub->add_option("--plot", plot_path_, "SVG of the loss (and accuracy) against the step");
    sub->add_option("--etdump", etdump_path_, "Record every step (forward-backward, then Optimizer::step) as an ETDump");
    sub->add_option("--max-memory", max_memory_, "Most the program may allocate at load, e.g. 512M or 8G (default: the machine's memory)");
    format_.add_to(sub, "one object with the summary, hyper-parameters and files written");
    store_option_ = add_store_option(sub, store_location_)->expected(0, 1);
    sub->add_option("--tag", tags_, "With --store: key=value tags of the stored run (repeatable)");
    return sub;
  }

  Result<int> run() override {
    if (int code = check_usage(); code != 0) return code;
    json_ = format_.json();
    runner::RunnerOptions options;
    options.model = model_;
    options.ptd_files = ptd_files_;
    options.method = method_;
    const bool store = store_option_->count() > 0;
    options.trace = !etdump_path_.empty() || store;
    if (!max_memory_.empty()) options.max_memory = *parse_byte_count(max_memory_);
    ETSCOPE_ASSIGN_OR_RETURN(auto trainer, training::Trainer::load(options));
    ETSCOPE_ASSIGN_OR_RETURN(training::Dataset data, training::Dataset::open(data_files_, trainer->inputs()));
    std::optional<training::Dataset> val;
    if (!val_files_.empty()) {
      ETSCOPE_ASSIGN_OR_RETURN(val, training::Dataset::open(val_files_, trainer->inputs()));
    }
    if (resume_) loop_.resume_from = ptd_files_.back();

    std::unique_ptr<training::Optimizer> optimizer;
    std::string hyper;
    if (optimizer_ == "adamw") {
      training::AdamWOptions o;
      o.lr = lr_opt_->count() ? lr_ : 1e-3;
      o.weight_decay = wd_opt_->count() ? weight_decay_ : 1e-2;
      o.beta1 = betas_.first;
      o.beta2 = betas_.second;
      o.eps = eps_;
      o.amsgrad = amsgrad_;
      optimizer = training::Optimizer::adamw(o);
      hyper = "adamw lr " + number_text(o.lr) + ", betas " + number_text(o.beta1) + "," + number_text(o.beta2) + ", eps " +
              number_text(o.eps) + ", weight decay " + number_text(o.weight_decay) + (o.amsgrad ? ", amsgrad" : "");
    } else {
      training::SgdOptions o;
      o.lr = lr_opt_->count() ? lr_ : 1e-3;
      o.momentum = momentum_;
      o.dampening = dampening_;
      o.weight_decay = wd_opt_->count() ? weight_decay_ : 0.0;
      o.nesterov = nesterov_;
      optimizer = training::Optimizer::sgd(o);
      hyper = "sgd lr " + number_text(o.lr) + ", momentum " + number_text(o.momentum) + ", dampening " +
              number_text(o.dampening) + ", weight decay " + number_text(o.weight_decay) + (o.nesterov ? ", nesterov" : "");
    }

    const TrainingLayout& layout = trainer->layout();
    size_t numel = 0;
    for (const auto& p : trainer->parameters()) numel += static_cast<size_t>(p.value->numel());
    batch_size_ = data.batch_size();
    say("%s: method %s, %zu parameters (%zu values), batch %zu\n", model_.c_str(), layout.method.c_str(),
        trainer->parameters().size(), numel, data.batch_size());
    say("data       %s: %zu samples, %zu batches per epoch\n", data.description().c_str(), data.samples(), data.batches());
    if (data.dropped() > 0) {
      say("           the last partial batch (%zu samples) is dropped from every epoch\n", data.dropped());
    }
    if (val) say("validation %s: %zu batches\n", val->description().c_str(), val->batches());
    say("optimizer  %s\n", hyper.c_str());
    std::fflush(stdout);

    tty_ = isatty(STDERR_FILENO) != 0;
    training::LoopCallbacks callbacks;
    callbacks.on_step = [&](const training::StepEvent& e) { progress(e); };
    callbacks.on_validation = [&](const training::ValidationPoint& p) {
      clear_bar();
      if (json_ && !tty_) return;
      std::fprintf(stderr, "validation after step %lld: loss %s%s\n", static_cast<long long>(p.step), loss_text(p.loss).c_str(),
                   p.accuracy ? ("  accuracy " + loss_text(*p.accuracy)).c_str() : "");
    };
    training::Curve curve;
    auto summary = training::run_loop(*trainer, *optimizer, data, val ? &*val : nullptr, loop_, callbacks, &curve);
    clear_bar();
    // What was recorded up to a failure is written too: the curve up to the bad step is the clue.
    ETSCOPE_TRY(write_outputs(*trainer, curve));
    if (!summary.ok()) return summary.error();
    if (store) ETSCOPE_TRY(record_in_store(*trainer, curve));
    report(*summary, curve, hyper);
    return 0;
  }

 private:
  int check_usage() {
    auto usage = [](const std::string& message) {
      std::fprintf(stderr, "etscope train: %s\n", message.c_str());
      return 2;
    };
    if (loop_.steps <= 0 && loop_.epochs <= 0) return usage("give --steps N or --epochs N (at least 1)");
    if (loop_.steps < 0 || loop_.epochs < 0) return usage("--steps and --epochs cannot be negative");
    if (loop_.save_every < 0 || loop_.eval_every < 0) return usage("--save-every and --eval-every cannot be negative");
    if (loop_.save_every > 0 && loop_.save_path.empty()) return usage("--save-every needs --save FILE");
    if (loop_.eval_every > 0 && val_files_.empty()) return usage("--eval-every needs --val data");
    if (resume_ && ptd_files_.empty()) return usage("--resume needs --ptd CHECKPOINT.ptd (a file written by --save)");
    if (optimizer_ == "sgd" && (betas_opt_given() || amsgrad_)) return usage("--betas, --eps and --amsgrad are AdamW's (add --optimizer adamw)");
    if (optimizer_ == "adamw" && (momentum_ != 0 || dampening_ != 0 || nesterov_)) {
      return usage("--momentum, --dampening and --nesterov are SGD's");
    }
    if (!parse_betas()) return usage("--betas takes two numbers as A,B (got '" + betas_text_ + "')");
    if (!max_memory_.empty() && (!parse_byte_count(max_memory_) || *parse_byte_count(max_memory_) == 0)) {
      return usage("--max-memory takes a byte count such as 512M or 8G (got '" + max_memory_ + "')");
    }
    if (!curve_path_.empty()) {
      const std::string ext = ends_with_lower(curve_path_, 5);
      if (ext != ".json" && ends_with_lower(curve_path_, 4) != ".csv") return usage("--curve takes a .json or .csv file name");
    }
    // Outputs must not destroy inputs. The checkpoint a run resumes from may be saved over: it
    // was read whole at load and the new one is renamed into place.
    std::vector<std::string> inputs = data_files_;
    inputs.insert(inputs.end(), val_files_.begin(), val_files_.end());
    inputs.push_back(model_);
    std::vector<std::string> ptd_inputs = ptd_files_;
    if (resume_) ptd_inputs.pop_back();
    inputs.insert(inputs.end(), ptd_inputs.begin(), ptd_inputs.end());
    std::vector<std::string> outputs{loop_.save_path, curve_path_, plot_path_, etdump_path_};
    if (!loop_.save_path.empty()) outputs.push_back(training::optimizer_state_path(loop_.save_path));
    for (const std::string& out : outputs) {
      if (out.empty()) continue;
      Status s = check_not_an_input(out, inputs);
      if (!s.ok()) return usage(s.error().message());
      // Fail before training, not after it: the directory must take new files.
      const std::filesystem::path parent = std::filesystem::path(out).parent_path();
      const std::string dir = parent.empty() ? "." : parent.string();
      if (access(dir.c_str(), W_OK | X_OK) != 0) return usage(out + ": cannot write into " + dir);
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      for (size_t j = i + 1; j < outputs.size(); ++j) {
        if (!outputs[i].empty() && outputs[i] == outputs[j]) return usage(outputs[i] + " is named as two outputs");
      }
    }
    return 0;
  }

  bool betas_opt_given() const { return !betas_text_.empty() || eps_ != 1e-8; }

  // "A,B" -> betas_; false when it is not two numbers.
  bool parse_betas() {
    if (betas_text_.empty()) return true;
    const size_t comma = betas_text_.find(',');
    if (comma == std::string::npos) return false;
    char* end = nullptr;
    const std::string a = betas_text_.substr(0, comma), b = betas_text_.substr(comma + 1);
    betas_.first = std::strtod(a.c_str(), &end);
    if (a.empty() || *end != '\0') return false;
    betas_.second = std::strtod(b.c_str(), &end);
    return !b.empty() && *end == '\0';
  }

  void progress(const training::StepEvent& e) {
    const training::StepResult& r = *e.result;
    if (first_ < 0) first_ = e.step;  // after --resume, the first step of this run is not 1
    const double rate = e.elapsed_s > 0 ? static_cast<double>(e.step - first_ + 1) / e.elapsed_s : 0;
    const double eta = rate > 0 ? static_cast<double>(e.total - e.step) / rate : NAN;
    std::string acc = r.accuracy ? "  acc " + loss_text(*r.accuracy) : "";
    char line[256];
    std::snprintf(line, sizeof line, "step %lld/%lld  epoch %lld  loss %s%s  %.1f steps/s  ETA %s", static_cast<long long>(e.step),
                  static_cast<long long>(e.total), static_cast<long long>(e.epoch + 1), loss_text(r.loss).c_str(), acc.c_str(), rate,
                  eta_text(eta).c_str());
    if (tty_) {
      const int width = 24;
      const int filled = e.total > 0 ? static_cast<int>(e.step * width / e.total) : width;
      std::fprintf(stderr, "\r[%.*s%*s] %s\033[K", filled, "########################", width - filled, "", line);
      bar_shown_ = true;
      return;
    }
    if (json_) return;
    // Plain lines: about twenty over the run, and the first and last step.
    const int64_t every = std::max<int64_t>(1, (e.total - first_ + 1) / 20);
    if (e.step == first_ || e.step == e.total || (e.step - first_) % every == 0) std::fprintf(stderr, "%s\n", line);
  }

  void clear_bar() {
    if (bar_shown_) std::fprintf(stderr, "\n");
    bar_shown_ = false;
  }

  Status write_outputs(training::Trainer& trainer, const training::Curve& curve) {
    if (!curve_path_.empty()) {
      const bool csv = ends_with_lower(curve_path_, 4) == ".csv";
      ETSCOPE_TRY(write_file_text(curve_path_, csv ? inspect::curve_csv(curve) : inspect::curve_json(curve)));
      files_["curve"] = curve_path_;
    }
    if (!plot_path_.empty()) {
      inspect::CurveSvgOptions o;
      const size_t slash = model_.find_last_of('/');
      o.title = (slash == std::string::npos ? model_ : model_.substr(slash + 1)) + ": " + optimizer_ + ", lr " +
                number_text(lr_opt_->count() ? lr_ : 1e-3);
      ETSCOPE_TRY(write_file_text(plot_path_, inspect::curve_svg(curve, o)));
      files_["plot"] = plot_path_;
    }
    if (!etdump_path_.empty()) {
      ETSCOPE_ASSIGN_OR_RETURN(auto files, trainer.runner().write_trace(etdump_path_, ""));
      files_["etdump"] = Json{{"path", etdump_path_}, {"events", files.events}, {"bytes", files.etdump_bytes}};
    }
    return ok_status();
  }

  // --store: the training run's ETDump (every step's forward-backward and optimizer update) and
  // its curve go into the run store.
  Status record_in_store(training::Trainer& trainer, const training::Curve& curve) {
    store::ImportRequest req;
    req.etdump = etdump_path_;
    req.pte = model_;
    req.method = trainer.layout().method;
    req.source = "train";
    req.curve = curve;
    ETSCOPE_ASSIGN_OR_RETURN(StoredRun stored, store_run(store_location_, tags_, std::move(req), &trainer.runner()));
    files_["store"] = Json{{"run_id", stored.run_id}, {"location", stored.location}};
    return ok_status();
  }

  // A batch's accuracy as what it counts: "7/8 right (87.5%)". The trainer's share is right/batch,
  // so the count is recovered exactly by rounding.
  std::string batch_accuracy_text(double accuracy) const {
    if (batch_size_ == 0 || !std::isfinite(accuracy)) return loss_text(accuracy);
    const auto right = static_cast<unsigned long long>(std::llround(accuracy * static_cast<double>(batch_size_)));
    return std::to_string(right) + "/" + std::to_string(batch_size_) + " right (" + significant_text(accuracy * 100) + "%)";
  }

  void report(const training::LoopSummary& s, const training::Curve& curve, const std::string& hyper) {
    auto ms = [](double v) { return duration_text_ms(v); };
    say("steps      %lld (%lld in all, %.2f epochs)\n", static_cast<long long>(s.steps), static_cast<long long>(s.total_steps), s.epochs);
    say("fwd+bwd    median %s  p90 %s\n", ms(s.forward_backward_ms.p50).c_str(), ms(s.forward_backward_ms.p90).c_str());
    say("optimizer  median %s  p90 %s\n", ms(s.optimizer_ms.p50).c_str(), ms(s.optimizer_ms.p90).c_str());
    say("peak RSS   %s\n", bytes_text(s.peak_rss_bytes).c_str());
    say("loss       first %s  final %s\n", loss_text(curve.loss.front()).c_str(), loss_text(s.final_loss).c_str());
    if (s.final_accuracy) say("accuracy   final batch %s\n", batch_accuracy_text(*s.final_accuracy).c_str());
    if (!curve.val.empty()) {
      const auto& v = curve.val.back();
      say("validation loss %s%s (after step %lld)\n", loss_text(v.loss).c_str(),
          v.accuracy ? ("  accuracy " + loss_text(*v.accuracy)).c_str() : "", static_cast<long long>(v.step));
    }
    if (!s.saved.empty()) {
      say("saved      %s (+ %s)\n", s.saved.back().c_str(), training::optimizer_state_path(s.saved.back()).c_str());
    }
    for (const auto& [key, value] : files_.items()) {
      if (key == "store") {
        say("store      run %lld in %s\n", static_cast<long long>(value["run_id"].get<int64_t>()), value["location"].get<std::string>().c_str());
      } else if (key == "etdump") {
        say("etdump     %s: %zu events\n", etdump_path_.c_str(), value["events"].get<size_t>());
      } else {
        say("%-10s %s\n", key.c_str(), value.get<std::string>().c_str());
      }
    }
    if (!json_) return;
    Json j{{"file", model_},
           {"method", trainer_method_or_default()},
           {"optimizer", hyper},
           {"steps", s.steps},
           {"total_steps", s.total_steps},
           {"epochs", s.epochs},
           {"batches_per_epoch", s.batches_per_epoch},
           {"dropped_samples", s.dropped_samples},
           {"forward_backward_ms", Json{{"p50", s.forward_backward_ms.p50}, {"p90", s.forward_backward_ms.p90}}},
           {"optimizer_ms", Json{{"p50", s.optimizer_ms.p50}, {"p90", s.optimizer_ms.p90}}},
           {"peak_rss_bytes", s.peak_rss_bytes},
           {"first_loss", number_json(curve.loss.front())},
           {"final_loss", number_json(s.final_loss)},
           {"final_accuracy", s.final_accuracy ? number_json(*s.final_accuracy) : Json(nullptr)},
           {"saved", s.saved},
           {"files", files_}};
    if (!curve.val.empty()) {
      const auto& v = curve.val.back();
      j["validation"] = Json{{"step", v.step}, {"loss", number_json(v.loss)}, {"accuracy", v.accuracy ? number_json(*v.accuracy) : Json(nullptr)}};
    }
    std::printf("%s\n", dump_json(j).c_str());
  }

  std::string trainer_method_or_default() const { return method_.empty() ? "forward" : method_; }

  __attribute__((format(printf, 2, 3))) void say(const char* fmt, ...) const {
    if (json_) return;
    va_list ap;
    va_start(ap, fmt);
    std::vprintf(fmt, ap);
    va_end(ap);
  }

  std::string model_, method_;
  size_t batch_size_ = 0;  ///< Samples per step: what a batch accuracy counts.
  std::vector<std::string> ptd_files_, data_files_, val_files_;
  training::LoopOptions loop_;
  std::string optimizer_ = "sgd";
  CLI::Option* lr_opt_ = nullptr;
  CLI::Option* wd_opt_ = nullptr;
  double lr_ = 1e-3, momentum_ = 0, dampening_ = 0, weight_decay_ = 0, eps_ = 1e-8;
  std::pair<double, double> betas_{0.9, 0.999};
  bool nesterov_ = false, amsgrad_ = false, resume_ = false;
  std::string curve_path_, plot_path_, etdump_path_;
  std::string max_memory_, betas_text_;
  ReportFormat format_;
  bool json_ = false, tty_ = false, bar_shown_ = false;
  int64_t first_ = -1;
  Json files_ = Json::object();
  std::string store_location_;
  std::vector<std::string> tags_;
  CLI::Option* store_option_ = nullptr;
};

}  // namespace

std::unique_ptr<Command> make_train_command() { return std::make_unique<TrainCommand>(); }

}  // namespace etscope::cli
