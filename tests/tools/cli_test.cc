// Runs the fp8dot binary as a user would and checks what it prints and its exit code.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "fp8dot/cpu_backend.h"
#include "fp8dot/cuda_device.h"
#include "fp8dot/dot_problem.h"
#include "fp8dot/npy.h"
#include "fp8dot/random.h"
#include "status_matchers.h"
#include "tools/cli_runner.h"

namespace fp8dot {
namespace {

using testing::CliRun;
using testing::ExpectOneLineError;
using testing::RunCli;
using testing::TempPath;

TEST(CliTest, DefaultPrecisionIsFastAccumulation) {
  CliRun run = RunCli(
      "dot --m 64 --n 64 --k 4096 --lhs-type f8e4m3fn --rhs-type f8e4m3fn "
      "--precision default,default --backend cpu");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("accumulation: fp8-fast"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("operand_precision={DEFAULT,DEFAULT}"), std::string::npos);
  EXPECT_NE(run.out.find("error:        relative Frobenius"), std::string::npos);
}

TEST(CliTest, AnyHighestOperandIsPromoted) {
  CliRun run = RunCli(
      "dot --m 64 --n 64 --k 4096 --lhs-type f8e4m3fn --rhs-type f8e4m3fn "
      "--precision default,highest --backend cpu");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("accumulation: fp8-promoted"), std::string::npos) << run.out;
}

TEST(CliTest, FastAccumAlgorithmOverridesPrecision) {
  CliRun run = RunCli(
      "dot --m 64 --n 64 --k 4096 --precision highest,highest "
      "--algorithm any_f8_any_f8_f32_fast_accum --backend cpu");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("accumulation: fp8-fast"), std::string::npos) << run.out;
}

TEST(CliTest, BadInputsExitWithOneLineReasons) {
  ExpectOneLineError(RunCli("dot --lhs-type f8e6m2"), "unknown element type 'f8e6m2'");
  ExpectOneLineError(RunCli("dot --lhs-type f8e5m2 --rhs-type f8e5m2 --require-fp8 --backend cpu"),
                     "--require-fp8: f8e5m2 x f8e5m2 has no native FP8 GEMM");
  ExpectOneLineError(RunCli("dot --lhs-type bf16 --rhs-type bf16 --require-fp8 --backend cpu"),
                     "--require-fp8: bf16 x bf16 is not an FP8 dot");
  ExpectOneLineError(RunCli("dot --precision default,medium"), "unknown precision 'medium'");
  ExpectOneLineError(
      RunCli("dot --lhs-scale-mode 1x128 --rhs-scale-mode 1x128 --k 256 --backend cpu"),
      "fast accumulation (precision DEFAULT,DEFAULT, algorithm ALG_UNSET) cannot be "
      "used with block scales");
  ExpectOneLineError(RunCli("dot --backend tpu"), "unknown --backend 'tpu'");

  // Mismatched K from files.
  const std::string a = TempPath("a.npy"), b = TempPath("b.npy");
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor a_tensor,
                           RandomTensor(DType::kF8E4M3FN, {16, 64}, Distribution::kSymmetric, 1));
  FP8_ASSERT_OK(WriteNpy(a, a_tensor));
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor b_tensor,
                           RandomTensor(DType::kF8E4M3FN, {32, 16}, Distribution::kSymmetric, 2));
  FP8_ASSERT_OK(WriteNpy(b, b_tensor));
  ExpectOneLineError(RunCli("dot --lhs " + a + " --rhs " + b + " --backend cpu"),
                     "lhs contracting dim 1 has size 64 but rhs contracting dim 0 has size 32");

  // A scale of the wrong shape.
  const std::string scale = TempPath("scale.npy");
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor scale_tensor, UniformTensor(DType::kF32, {63}, 1, 2, 3));
  FP8_ASSERT_OK(WriteNpy(scale, scale_tensor));
  ExpectOneLineError(
      RunCli("dot --m 64 --lhs-scale-mode outer --lhs-scale " + scale + " --backend cpu"),
      "lhs scale (mode outer) must have shape [64], got [63]");
  ExpectOneLineError(RunCli("dot --lhs /nonexistent.npy --rhs /nonexistent.npy"),
                     "cannot open '/nonexistent.npy'");
  // A problem larger than the machine is an error, not an abort.
  ExpectOneLineError(RunCli("dot --m 1000000 --n 1000 --k 1000000 --backend cpu"),
                     "more than the memory limit of");
  // CLI11's own validation also answers in one line.
  ExpectOneLineError(RunCli("dot --m -5"), "--m");
}

TEST(CliTest, OutputFileHoldsTheResult) {
  const std::string out = TempPath("d.npy");
  CliRun run = RunCli(
      "dot --m 8 --n 4 --k 32 --seed 5 --out-type bf16 --cpu-path reference "
      "--backend cpu --output " +
      out);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor d, ReadNpy(out));
  EXPECT_EQ(d.dtype(), DType::kBF16);
  EXPECT_EQ(d.dims(), (Dims{8, 4}));
  // The same problem built in-process gives the same bits.
  DotProblemOptions options;
  options.m = 8;
  options.n = 4;
  options.k = 32;
  options.seed = 5;
  options.output_type = DType::kBF16;
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(options));
  FP8_ASSERT_OK_AND_ASSIGN(DotResult want, ReferenceDot(p.spec, p.arguments()));
  for (int64_t i = 0; i < 32; ++i) EXPECT_EQ(d.GetPhysical(i), want.output.GetPhysical(i));
}

TEST(CliTest, GeneralDotGeneralFromFiles) {
  const std::string a = TempPath("g_a.npy"), b = TempPath("g_b.npy");
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor a_tensor,
                           RandomTensor(DType::kBF16, {2, 32, 8}, Distribution::kSymmetric, 1));
  FP8_ASSERT_OK(WriteNpy(a, a_tensor));
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor b_tensor,
                           RandomTensor(DType::kBF16, {6, 2, 32}, Distribution::kSymmetric, 2));
  FP8_ASSERT_OK(WriteNpy(b, b_tensor));
  CliRun run = RunCli("dot --lhs " + a + " --rhs " + b +
                      " --lhs-batch-dims 0 --rhs-batch-dims 1 --lhs-contracting-dims 1 "
                      "--rhs-contracting-dims 2 --backend cpu --cpu-path blas");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("-> f32[2,8,6]"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("accumulation: f32"), std::string::npos) << run.out;
}

TEST(CliTest, AccuracySweepShowsFastLosingToPromoted) {
  CliRun run =
      RunCli("accuracy --k-values 1024 --distributions positive --m 8 --n 8 --backend cpu");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const size_t row = run.out.find("| 1024 | positive | ");
  ASSERT_NE(row, std::string::npos) << run.out;
  double fast = 0, promoted = 0;
  ASSERT_EQ(std::sscanf(run.out.c_str() + row, "| 1024 | positive | %lf | %lf", &fast, &promoted),
            2);
  EXPECT_GT(fast, 10 * promoted);
}

TEST(CliTest, AccuracySplitKPerKChangesOnlyThatK) {
  // A 6-way split of K=16384 bounds the fast accumulator's runs: on same-sign data the error
  // drops (the H200 at M=N=16: 4.73e-2 split vs 2.5e-1 in one run, docs/accuracy.md).
  const std::string record = TempPath("split_record");
  std::filesystem::create_directories(record);
  CliRun run = RunCli(
      "accuracy --k-values 64,16384 --distributions positive --m 2 --n 2 "
      "--backend cpu --split-k 16384=6 --record " +
      record);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("| 64 | positive | "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("| 1, 1 |"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("| 6, 6 |"), std::string::npos) << run.out;
  CliRun one_run = RunCli(
      "accuracy --k-values 16384 --distributions positive --m 2 --n 2 "
      "--backend cpu");
  ASSERT_EQ(one_run.exit_code, 0) << one_run.err;
  double split_fast = 0, whole_fast = 0;
  ASSERT_EQ(std::sscanf(run.out.c_str() + run.out.find("| 16384 | positive | "),
                        "| 16384 | positive | %lf", &split_fast),
            1);
  ASSERT_EQ(std::sscanf(one_run.out.c_str() + one_run.out.find("| 16384 | positive | "),
                        "| 16384 | positive | %lf", &whole_fast),
            1);
  EXPECT_LT(split_fast * 3, whole_fast);
  // The recorded sidecar says how K was cut.
  std::ifstream json(record + "/f8e4m3fnxf8e4m3fn_k16384_positive.fast.json");
  std::string text((std::istreambuf_iterator<char>(json)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"k_slices\": 6, \"k_tile\": 128"), std::string::npos) << text;

  ExpectOneLineError(RunCli("accuracy --k-values 64 --split-k 64=0"),
                     "--split-k: '0' in '64=0' is not an integer >= 1");
  ExpectOneLineError(RunCli("dot --backend cpu --split-k 6,7"),
                     "--split-k: '6' in '6,7' is not K=S");
  ExpectOneLineError(RunCli("dot --backend cpu --accumulator-alignment sideways"),
                     "unknown --accumulator-alignment 'sideways'");
}

TEST(CliTest, AccuracyPlotsAPngWhenMatplotlibIsThere) {
  if (std::system("python3 -c 'import matplotlib' 2>/dev/null") != 0) {
    GTEST_SKIP() << "matplotlib is not installed";
  }
  const std::string csv = TempPath("acc.csv"), png = TempPath("acc.png");
  CliRun run = RunCli(
      "accuracy --k-values 64,256 --distributions positive --m 4 --n 4 "
      "--backend cpu --csv " +
      csv + " --plot " + png);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::FILE* file = std::fopen(png.c_str(), "rb");
  ASSERT_NE(file, nullptr);
  unsigned char magic[8] = {};
  EXPECT_EQ(std::fread(magic, 1, 8, file), 8u);
  std::fclose(file);
  EXPECT_EQ(magic[1], 'P');  // \x89PNG
  EXPECT_EQ(magic[2], 'N');
  ExpectOneLineError(RunCli("accuracy --plot x.png --k-values 64"), "--plot draws from the CSV");
}

TEST(CliTest, EverySubcommandHasHelp) {
  for (const char* command : {"--help", "dot --help", "accuracy --help", "probe --help",
                              "explain --help", "run --help"}) {
    CliRun run = RunCli(command);
    EXPECT_EQ(run.exit_code, 0) << command;
    EXPECT_NE(run.out.find("Options:"), std::string::npos) << command << run.out;
  }
  CliRun none = RunCli("");
  EXPECT_NE(none.exit_code, 0);
}

TEST(CliTest, CudaBackendWithoutAGpuSaysWhy) {
  if (QueryCudaDevice().ok()) GTEST_SKIP() << "a GPU is present: covered by the GPU tests";
  CliRun run = RunCli("dot --backend cuda");
  ExpectOneLineError(run, "fp8dot dot: error: ");
  CliRun automatic = RunCli("dot --m 8 --n 8 --k 64 --backend auto");
  EXPECT_EQ(automatic.exit_code, 0) << automatic.err;
  EXPECT_NE(automatic.out.find("backend:      cpu"), std::string::npos);
}

}  // namespace
}  // namespace fp8dot
