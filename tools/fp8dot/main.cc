// fp8dot: FP8 matrix products where the PrecisionConfig decides the accumulation.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <new>
#include <string>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "fp8dot: FP8 matrix products on Hopper GPUs (and the CPU) whose PrecisionConfig decides the "
      "accumulation: DEFAULT -> fast, HIGHEST -> promoted to FP32."};
  // A file-size limit (ulimit -f) makes a write fail with EFBIG, which the checked writer
  // reports, instead of killing the process.
  std::signal(SIGXFSZ, SIG_IGN);
  app.require_subcommand(1);
  int exit_code = 0;
  fp8dot::cli::AddDotCommand(app, exit_code);
  fp8dot::cli::AddAccuracyCommand(app, exit_code);
  fp8dot::cli::AddRunCommand(app, exit_code);
  fp8dot::cli::AddExplainCommand(app, exit_code);
  fp8dot::cli::AddProbeCommand(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const std::bad_alloc&) {
    // Tensors check their size up front; this catches the working buffers of a huge problem.
    std::fprintf(stderr, "fp8dot: error: out of host memory\n");
    return 1;
  } catch (const CLI::ParseError& error) {
    // One line, like every other fp8dot error.
    std::fprintf(stderr, "fp8dot: error: %s (see --help)\n", error.what());
    return error.get_exit_code() != 0 ? error.get_exit_code() : 2;
  }
  return exit_code;
}
