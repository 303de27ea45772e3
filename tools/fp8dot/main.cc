// fp8dot: FP8 matrix products where the PrecisionConfig decides the accumulation.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <new>
#include <string>

#include "commands.h"

namespace {

// "fp8dot dot" when the first argument names a subcommand, else "fp8dot".
std::string CommandName(CLI::App& app, int argc, char** argv) {
  if (argc <= 1) return "fp8dot";
  try {
    return "fp8dot " + app.get_subcommand(argv[1])->get_name();
  } catch (const CLI::OptionNotFound&) {
    return "fp8dot";
  }
}

}  // namespace

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
    std::fprintf(stderr, "%s: error: out of host memory\n", CommandName(app, argc, argv).c_str());
    return 1;
  } catch (const CLI::ParseError& error) {
    // One line and exit code 1, like every other fp8dot error.
    std::string message = error.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    std::fprintf(stderr, "%s: error: %s (see --help)\n", CommandName(app, argc, argv).c_str(),
                 message.c_str());
    return 1;
  }
  return exit_code;
}
