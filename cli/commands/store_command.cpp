// etscope store add: import an ETDump (with its ETRecord and program when given) into the run store.
#include <cstdio>

#include "commands/command.h"
#include "commands/store_options.h"

namespace etscope::cli {
namespace {

class StoreCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("store", "Keep profiled runs for comparison and history (see docs/store.md)");
    sub->require_subcommand(1);
    add_ = sub->add_subcommand("add", "Import an ETDump into the run store (the same bytes twice are one run)");
    add_->add_option("etdump", etdump_, "The run's ETDump (.etdp)")->required();
    add_->add_option("--etrecord", etrecord_, "Its ETRecord: debug handles of the operators");
    add_->add_option("--pte", pte_, "Its program: name, methods, operators and arenas are stored with the run");
    add_->add_option("--method", method_, "The method the dump ran (default forward)");
    add_->add_option("--tag", tags_, "key=value (repeatable), e.g. --tag device=pixel8 --tag commit=abc123");
    add_->add_option("--device", device_, "The device the run was made on (default: this machine)");
    add_store_option(add_, location_);
    return sub;
  }

  Result<int> run() override {
    ETSCOPE_ASSIGN_OR_RETURN(auto tags, parse_tags(tags_));
    ETSCOPE_ASSIGN_OR_RETURN(auto store, open_store(location_));
    store::ImportRequest req;
    req.etdump = etdump_;
    req.etrecord = etrecord_;
    req.pte = pte_;
    req.method = method_;
    req.tags = tags;
    req.environment = store::this_machine();
    if (!device_.empty()) req.environment.device = device_;
    ETSCOPE_ASSIGN_OR_RETURN(store::ImportResult r, store->add(req));
    for (const std::string& w : r.warnings) std::fprintf(stderr, "etscope: %s: warning: %s\n", etdump_.c_str(), w.c_str());
    std::printf("%s run %lld in %s\n", r.created ? "stored" : "already stored as", static_cast<long long>(r.run_id),
                store->location().c_str());
    return 0;
  }

 private:
  CLI::App* add_ = nullptr;
  std::string etdump_, etrecord_, pte_, method_, location_, device_;
  std::vector<std::string> tags_;
};

}  // namespace

std::unique_ptr<Command> make_store_command() { return std::make_unique<StoreCommand>(); }

}  // namespace etscope::cli
