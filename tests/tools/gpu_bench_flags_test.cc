// gpu_bench's command line: a mistyped flag or value stops it with a message naming it, before
// it looks for a GPU (so these run in CI, where there is none), instead of measuring something
// other than what was asked.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tools/cli_runner.h"

namespace fp8dot {
namespace {

using testing::CliRun;

CliRun RunGpuBench(const std::string& args) {
  return testing::RunProgram(FP8DOT_GPU_BENCH_PATH, args);
}

void ExpectRefused(const CliRun& run, const std::string& text) {
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find(text), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "");  // no table started
}

TEST(GpuBenchFlagsTest, SustainTakesSecondsFromZeroTo600) {
  ExpectRefused(RunGpuBench("--sustain abc"), "--sustain");
  ExpectRefused(RunGpuBench("--sustain abc"), "abc");
  ExpectRefused(RunGpuBench("--sustain 601"), "601");
  ExpectRefused(RunGpuBench("--sustain -1"), "--sustain");
  ExpectRefused(RunGpuBench("--sustain"), "--sustain");
}

TEST(GpuBenchFlagsTest, ConfigsMustBeKnownNames) {
  const CliRun run = RunGpuBench("--configs 'fp8 fast,fp8 fastt'");
  ExpectRefused(run, "fp8 fastt");
  // The message lists the names it knows.
  EXPECT_NE(run.err.find("fp8 promoted tuned"), std::string::npos) << run.err;
}

TEST(GpuBenchFlagsTest, UnknownFlagsAndMissingShapeFilesAreRefused) {
  ExpectRefused(RunGpuBench("--sustian 2"), "--sustian");
  ExpectRefused(RunGpuBench("no/such/shapes.txt"), "no/such/shapes.txt");
  ExpectRefused(RunGpuBench("--quick=maybe"), "--quick");
  ExpectRefused(RunGpuBench("--csv"), "--csv");
  // With a shape file that exists (the tests run in the build folder).
  ExpectRefused(RunGpuBench("--csv no/such/folder/out.csv " FP8DOT_SOURCE_DIR "/bench/shapes.txt"),
                "cannot write no/such/folder/out.csv");
}

TEST(GpuBenchFlagsTest, MalformedShapeLinesAreRefusedWithTheirLineNumber) {
  const std::string path = testing::TempPath("shapes.txt");
  for (const char* bad :
       {"4096 4096", "4096 4096 4096 1", "4096 x 4096", "0 128 128", "64 -1 128"}) {
    {
      std::ofstream file(path);
      file << "# M N K\n4096 4096 4096\n\n" << bad << "\n";
    }
    ExpectRefused(RunGpuBench(path),
                  path + ":4: expected three positive integers M N K, got '" + bad + "'");
  }
  {
    std::ofstream file(path);
    file << "# only a comment\n";
  }
  ExpectRefused(RunGpuBench(path), "holds no shape");
}

TEST(GpuBenchFlagsTest, HelpListsEveryFlag) {
  const CliRun run = RunGpuBench("--help");
  EXPECT_EQ(run.exit_code, 0);
  for (const char* flag : {"--csv", "--quick", "--configs", "--own-tiles", "--sustain"}) {
    EXPECT_NE(run.out.find(flag), std::string::npos) << flag << " missing from:\n" << run.out;
  }
}

}  // namespace
}  // namespace fp8dot
