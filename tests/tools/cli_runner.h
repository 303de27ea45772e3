// Runs the fp8dot binary (FP8DOT_CLI_PATH), or another of the project's programs, as a user would.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>

namespace fp8dot::testing {

struct CliRun {
  int exit_code;
  std::string out;  // stdout
  std::string err;  // stderr
};

// A path in the test temp dir, unique per test (ctest runs tests in parallel processes).
inline std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/" +
         ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "_" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + name;
}

// `program` with `args` (shell words); `shell_prefix` runs before it in the same shell command
// (e.g. "ulimit -f 8; exec ").
inline CliRun RunProgram(const std::string& program, const std::string& args,
                         const std::string& shell_prefix = "") {
  const std::string err_path = TempPath("stderr.txt");
  const std::string command = shell_prefix + program + " " + args + " 2>" + err_path;
  CliRun run{-1, "", ""};
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) run.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  FILE* err = fopen(err_path.c_str(), "r");
  while (err != nullptr && (n = fread(buffer.data(), 1, buffer.size(), err)) > 0) {
    run.err.append(buffer.data(), n);
  }
  if (err != nullptr) fclose(err);
  return run;
}

inline CliRun RunCli(const std::string& args, const std::string& shell_prefix = "") {
  return RunProgram(FP8DOT_CLI_PATH, args, shell_prefix);
}

// `text` quoted for /bin/sh: every character reaches the program literally.
inline std::string ShellQuote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// A failed command prints exactly one line, on stderr, and exits non-zero.
inline void ExpectOneLineError(const CliRun& run, const std::string& text) {
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find(text), std::string::npos) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
}

}  // namespace fp8dot::testing
