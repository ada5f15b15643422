#pragma once
// The subcommands of the stagehand command line. Each `add_*` registers its options on the app
// and remembers what to run; `run_selected` runs the one the user chose.

#include <CLI/CLI.hpp>

#include <functional>

namespace stagehand::cli {

void add_bench_command(CLI::App& app);
void add_bench_prove_command(CLI::App* bench);  // under bench (bench_prove_command.cpp)
void add_run_command(CLI::App& app);
void add_replay_command(CLI::App& app);
void add_explore_command(CLI::App& app);
void add_prove_command(CLI::App& app);
void add_setup_command(CLI::App& app);
void add_export_vk_command(CLI::App& app);  // beside setup (setup_command.cpp)
void add_serve_command(CLI::App& app);

// Registered by the add_* functions: what to run when that subcommand was parsed.
void on_selected(CLI::App* subcommand, std::function<int()> action);
int run_selected(CLI::App& app);

}  // namespace stagehand::cli
