// Hostile and extreme input to the CLI (issue #13): failed writes are errors that leave no file,
// paths are never shell code, wrong answers are not reported as right, every error is one line
// with exit code 1, and a problem too big for memory is refused before any work.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "fp8dot/npy.h"
#include "fp8dot/random.h"
#include "status_matchers.h"
#include "tools/cli_runner.h"

namespace fp8dot {
namespace {

namespace fs = std::filesystem;
using testing::CliRun;
using testing::ExpectOneLineError;
using testing::RunCli;
using testing::ShellQuote;
using testing::TempPath;

// A fresh, empty folder for this test.
std::string FreshFolder(const std::string& name) {
  const std::string folder = TempPath(name);
  fs::remove_all(folder);
  fs::create_directories(folder);
  return folder;
}

// ---- 1. Checked writes ---------------------------------------------------------------------

TEST(HardeningCliTest, DotOutputToDevFullIsAnError) {
  CliRun run = RunCli("dot --m 64 --n 64 --k 32 --backend cpu --no-reference --output /dev/full");
  ExpectOneLineError(run, "'/dev/full' failed: No space left on device");
  EXPECT_EQ(run.exit_code, 1);
}

TEST(HardeningCliTest, DotOutputPastTheFileSizeLimitLeavesNoFile) {
  // A 16 KB output under a 4 KB file-size limit: a truncated write, like a full disk.
  const std::string folder = FreshFolder("out");
  const std::string out = folder + "/d.npy";
  CliRun run = RunCli("dot --m 64 --n 64 --k 32 --backend cpu --no-reference --output " + out,
                      "ulimit -f 8; exec ");
  ExpectOneLineError(run, "File too large");
  EXPECT_TRUE(fs::is_empty(folder)) << "a truncated file or temporary was left behind";
}

TEST(HardeningCliTest, AccuracyCsvToDevFullIsAnError) {
  ExpectOneLineError(
      RunCli("accuracy --k-values 64 --distributions positive --m 4 --n 4 --backend cpu "
             "--csv /dev/full"),
      "'/dev/full' failed: No space left on device");
}

TEST(HardeningCliTest, AccuracyRecordIntoAMissingFolderIsAnError) {
  ExpectOneLineError(
      RunCli("accuracy --k-values 64 --distributions positive --m 4 --n 4 --backend cpu "
             "--record " +
             TempPath("no/such/folder")),
      "No such file or directory");
}

TEST(HardeningCliTest, ProbeRecordWritesEachCaseAllOrNone) {
  const std::string folder = FreshFolder("probe_record");
  const std::string prefix = folder + "/probe_k256_f8e4m3fnxf8e4m3fn_swamp_j4";
  // The first case's promoted output cannot be written (a folder is in its way): the case's
  // other files, written before it, must not stay behind.
  fs::create_directories(prefix + ".promoted.npy");
  CliRun run = RunCli("probe --backend cpu --length 256 --record " + folder);
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("swamp_j4.promoted.npy"), std::string::npos) << run.err;
  for (const char* suffix : {".lhs.npy", ".rhs.npy", ".fast.npy"}) {
    EXPECT_FALSE(fs::exists(prefix + suffix)) << prefix + suffix << " was left behind";
  }
  // Nothing but the folder in the way remains.
  EXPECT_EQ(std::distance(fs::directory_iterator(folder), fs::directory_iterator()), 1);
}

// ---- 2. No shell ----------------------------------------------------------------------------

TEST(HardeningCliTest, AccuracyPlotPathsArePassedLiterally) {
  const std::string folder = FreshFolder("plot");
  // Inside the old std::system's single quotes, these names closed the quote and ran mkdir (in
  // the working directory: a path in `$(...)` would add folders to the file name).
  const std::string marker = "HardeningCliTest_plot_ran";
  fs::remove_all(marker);
  const std::string csv = folder + "/a'$(mkdir " + marker + ")'.csv";
  const std::string png = folder + "/p'$(mkdir " + marker + ")'.png";
  CliRun run =
      RunCli("accuracy --k-values 64 --distributions positive --m 4 --n 4 --backend cpu --csv " +
             ShellQuote(csv) + " --plot " + ShellQuote(png));
  EXPECT_FALSE(fs::exists(marker)) << "a file name ran a shell command";
  EXPECT_TRUE(fs::exists(csv)) << run.err;
  if (std::system("python3 -c 'import matplotlib' 2>/dev/null") == 0) {
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_TRUE(fs::exists(png)) << run.err;
  } else {
    ExpectOneLineError(run, "plotting");
  }
}

// ---- 3. Wrong answers are not reported as right ------------------------------------------

TEST(HardeningCliTest, OutputScaleMustBeFiniteAndPositive) {
  for (const char* scale : {"0", "-1", "nan", "inf"}) {
    ExpectOneLineError(
        RunCli(std::string("dot --out-type f8e4m3fn --backend cpu --output-scale ") + scale),
        "--output-scale must be a finite number > 0, got ");
  }
  CliRun run =
      RunCli("dot --m 8 --n 8 --k 32 --out-type f8e4m3fn --backend cpu --output-scale 0.5");
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

// Writes a [rows, cols] f32 .npy of ones, with `first` at [0, 0].
std::string OnesNpy(const std::string& name, int64_t rows, int64_t cols, double first) {
  const std::string path = TempPath(name);
  StatusOr<HostTensor> tensor = HostTensor::Create(DType::kF32, {rows, cols});
  EXPECT_TRUE(tensor.ok());
  for (int64_t i = 0; i < rows * cols; ++i) tensor->SetPhysical(i, i == 0 ? first : 1.0);
  EXPECT_TRUE(WriteNpy(path, *tensor).ok());
  return path;
}

TEST(HardeningCliTest, AnInfInAnInputIsReportedNotErrorZero) {
  // Row 0 of D is inf in the reference and the output: equal, so no mismatch, but it must show.
  const std::string a = OnesNpy("a.npy", 4, 8, INFINITY), b = OnesNpy("b.npy", 8, 4, 1.0);
  CliRun run = RunCli("dot --lhs " + a + " --rhs " + b + " --backend cpu --cpu-path reference");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("NaN/inf elements: reference 4, output 4, mismatches 0 (of 16)"),
            std::string::npos)
      << run.out;
}

TEST(HardeningCliTest, AccuracyRefusesOperandFiles) {
  // The rows were labelled with the sweep's M, N, K while computing on the files' shapes.
  const std::string a = OnesNpy("a.npy", 4, 8, 1.0), b = OnesNpy("b.npy", 8, 4, 1.0);
  ExpectOneLineError(RunCli("accuracy --backend cpu --lhs " + a + " --rhs " + b),
                     "--lhs: accuracy sweeps random [M,K] x [K,N] operands");
}

// ---- 4. One clear line, exit code 1 ---------------------------------------------------------

TEST(HardeningCliTest, OptionErrorsExitOneWithTheCommandName) {
  for (const char* args : {"dot --no-such-option", "dot --m -5", "dot --m", "accuracy --k-values x",
                           "probe --length 1", "run"}) {
    CliRun run = RunCli(args);
    EXPECT_EQ(run.exit_code, 1) << args << ": " << run.err;
    const std::string command = std::string(args).substr(0, std::string(args).find(' '));
    ExpectOneLineError(run, "fp8dot " + command + ": error: ");
  }
  ExpectOneLineError(RunCli("frobnicate"), "fp8dot: error: ");
}

TEST(HardeningCliTest, ANonIntegerDimensionSaysSo) {
  ExpectOneLineError(RunCli("dot --m abc"), "--m: 'abc' is not an integer");
  ExpectOneLineError(RunCli("dot --batch 1.5"), "--batch: '1.5' is not an integer");
}

TEST(HardeningCliTest, OptionsTheModeIgnoresAreRefused) {
  const std::string a = OnesNpy("a.npy", 4, 8, 1.0), b = OnesNpy("b.npy", 8, 4, 1.0);
  for (const char* option : {"--m 4", "--n 4", "--k 8", "--batch 2", "--distribution positive"}) {
    ExpectOneLineError(RunCli("dot --backend cpu --lhs " + a + " --rhs " + b + " " + option),
                       std::string(option).substr(0, std::string(option).find(' ')) +
                           ": shapes random operands only");
  }
  ExpectOneLineError(RunCli("dot --backend cpu --explain"),
                     "--explain prints the CUDA plan: it needs --backend cuda");
  ExpectOneLineError(RunCli("accuracy --backend cpu --out-type bf16"),
                     "--out-type: accuracy sweeps random");
  ExpectOneLineError(RunCli("accuracy --backend cpu --k 64"), "--k: accuracy sweeps random");
  ExpectOneLineError(RunCli("probe --backend cpu --m 4"), "--m: probe runs its own crafted");
}

TEST(HardeningCliTest, ProbeRunsEveryBuiltInCaseForEveryFp8Pair) {
  for (const char* lhs : {"f8e4m3fn", "f8e5m2"}) {
    for (const char* rhs : {"f8e4m3fn", "f8e5m2"}) {
      CliRun run = RunCli(std::string("probe --backend cpu --length 256 --lhs-type ") + lhs +
                          " --rhs-type " + rhs);
      EXPECT_EQ(run.exit_code, 0) << lhs << " x " << rhs << ": " << run.err;
      EXPECT_NE(run.out.find("| carry_alignment |"), std::string::npos) << run.out;
      EXPECT_NE(run.out.find("| subnormal_lhs |"), std::string::npos) << run.out;
    }
  }
}

// ---- 5. Memory ---------------------------------------------------------------------------------

TEST(HardeningCliTest, AProblemPastTheMemoryLimitFailsBeforeFillingInputs) {
  // This spent minutes filling 20 GB of inputs before failing; the budget check comes first.
  const auto start = std::chrono::steady_clock::now();
  CliRun run = RunCli("dot --m 100000 --n 100000 --k 100000 --backend cpu --max-memory 64G");
  ExpectOneLineError(run,
                     "needs 140000000000 bytes (operands 20000000000, scales 0, C 0, bias 0, "
                     "output 40000000000, f64 reference 80000000000), more than the memory limit "
                     "of 68719476736 bytes (set it with --max-memory)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  ExpectOneLineError(RunCli("dot --m 64 --n 64 --k 64 --backend cpu --max-memory 1K"),
                     "more than the memory limit of 1024 bytes");
  EXPECT_EQ(RunCli("dot --m 8 --n 8 --k 32 --backend cpu --max-memory 1M").exit_code, 0);
  ExpectOneLineError(RunCli("dot --max-memory 12Q"),
                     "--max-memory takes a byte count such as 4096, 512M, 8G or 1T, got '12Q'");
}

}  // namespace
}  // namespace fp8dot
