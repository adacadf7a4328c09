// etscope kernels: the operators etscope's runtime can execute, with the dtypes each accepts.
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands/command.h"
#include "etscope/core/text.h"
#include "etscope/runtime/kernel.h"

namespace etscope::cli {
namespace {

class KernelsCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("kernels", "Operators the runtime has kernels for, with the dtypes each accepts");
    sub->add_option("--format", format_, "table (default) or json: an array of {name, dtypes}")
        ->check(CLI::IsMember({"table", "json"}));
    return sub;
  }

  Result<int> run() override {
    const runtime::KernelRegistry& registry = runtime::KernelRegistry::portable();
    const std::vector<std::string> names = registry.names();
    if (format_ == "json") {
      nlohmann::json out = nlohmann::json::array();
      for (const std::string& name : names) {
        nlohmann::json dtypes = nlohmann::json::array();
        for (ScalarType t : registry.find(name)->dtype_list()) dtypes.push_back(scalar_type_name(t));
        out.push_back({{"name", name}, {"dtypes", std::move(dtypes)}});
      }
      std::cout << out.dump(2) << "\n";
      return 0;
    }
    size_t width = 0;
    for (const std::string& name : names) width = std::max(width, name.size());
    for (const std::string& name : names) {
      std::string dtypes;
      for (ScalarType t : registry.find(name)->dtype_list()) dtypes += (dtypes.empty() ? "" : " ") + scalar_type_short_name(t);
      std::cout << name << std::string(width - name.size() + 2, ' ') << (dtypes.empty() ? "-" : dtypes) << "\n";
    }
    std::cout << count_text(names.size(), "kernel") << "\n";
    return 0;
  }

 private:
  std::string format_ = "table";
};

}  // namespace

std::unique_ptr<Command> make_kernels_command() { return std::make_unique<KernelsCommand>(); }

}  // namespace etscope::cli
