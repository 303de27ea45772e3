// fp8dot: FP8 matrix products where the PrecisionConfig decides the accumulation.
#include <cstdio>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "fp8dot: FP8 matrix products on Hopper GPUs (and the CPU) whose PrecisionConfig decides the "
      "accumulation: DEFAULT -> fast, HIGHEST -> promoted to FP32."};
  app.require_subcommand(1);
  int exit_code = 0;
  fp8dot::cli::AddDotCommand(app, exit_code);
  fp8dot::cli::AddAccuracyCommand(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  return exit_code;
}
