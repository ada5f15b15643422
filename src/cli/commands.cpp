#include "cli/commands.hpp"

#include <map>
#include <stdexcept>

namespace stagehand::cli {
namespace {
std::map<CLI::App*, std::function<int()>>& actions() {
  static std::map<CLI::App*, std::function<int()>> registered;
  return registered;
}
}  // namespace

void on_selected(CLI::App* subcommand, std::function<int()> action) { actions()[subcommand] = std::move(action); }

int run_selected(CLI::App& app) {
  // The deepest parsed subcommand with an action wins (bench -> bench sim).
  for (CLI::App* current = &app;;) {
    auto chosen = current->get_subcommands();
    if (chosen.empty()) break;
    current = chosen.front();
    auto found = actions().find(current);
    if (found != actions().end() && current->get_subcommands().empty()) return found->second();
  }
  throw std::logic_error("no action for the chosen subcommand");
}

}  // namespace stagehand::cli
