// stagehand: the command-line front end. Each subcommand lives in its own file; this one only
// parses the command line and reports errors in one place.

#include "cli/commands.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <exception>

int main(int argc, char** argv) {
  CLI::App app{"Stagehand: a GPU proving coordinator for Groth16 (BLS12-381)", "stagehand"};
  app.require_subcommand(1);
  stagehand::cli::add_run_command(app);
  stagehand::cli::add_replay_command(app);
  stagehand::cli::add_explore_command(app);
  stagehand::cli::add_bench_command(app);
  stagehand::cli::add_prove_command(app);
  stagehand::cli::add_setup_command(app);
  stagehand::cli::add_export_vk_command(app);
  stagehand::cli::add_serve_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  try {
    return stagehand::cli::run_selected(app);
  } catch (const std::exception& error) {
    fmt::print(stderr, "stagehand: error: {}\n", error.what());
    return 1;
  }
}
