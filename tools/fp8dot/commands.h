// The fp8dot subcommands. Each Add*Command registers its options on the app; the callback
// returns the process exit code through `exit_code`.
#pragma once

#include <CLI/CLI.hpp>

namespace fp8dot::cli {

void AddDotCommand(CLI::App& app, int& exit_code);
void AddAccuracyCommand(CLI::App& app, int& exit_code);
void AddRunCommand(CLI::App& app, int& exit_code);
void AddExplainCommand(CLI::App& app, int& exit_code);
void AddProbeCommand(CLI::App& app, int& exit_code);

}  // namespace fp8dot::cli
