// `fp8dot run`: runs the binary as a user would and checks what it prints, the files it writes
// and its one-line errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

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

std::string Fixture(const std::string& name) {
  return std::string(FP8DOT_SOURCE_DIR) + "/tests/hlo/testdata/" + name;
}

std::string WriteText(const std::string& name, const std::string& text) {
  const std::string path = TempPath(name);
  std::ofstream(path) << text;
  return path;
}

TEST(RunCliTest, ScaledDotFusesRunsAndPrintsChecksums) {
  CliRun run = RunCli("run " + Fixture("jax_fp8_scaled_dot.hlo") + " --backend cpu --seed 3");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("rewrite:      changed, 1 __cublas$lt$matmul$f8"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("accumulation fp8-fast"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("out0:         bf16[16,64] dtype=bf16 sum="), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("hash="), std::string::npos);
  // Same seed, same checksum; another seed, another one.
  CliRun again = RunCli("run " + Fixture("jax_fp8_scaled_dot.hlo") + " --seed 3");
  CliRun other = RunCli("run " + Fixture("jax_fp8_scaled_dot.hlo") + " --seed 4");
  const auto out0 = [](const std::string& out) { return out.substr(out.find("out0:")); };
  EXPECT_EQ(out0(run.out), out0(again.out));
  EXPECT_NE(out0(run.out), out0(other.out));
}

TEST(RunCliTest, CompareReportsTheErrorOfTheFusedGemm) {
  CliRun run =
      RunCli("run " + Fixture("jax_fp8_scaled_dot.hlo") + " --cpu-path reference --compare");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string label = "compare out0: max abs error / max |original| ";
  const size_t at = run.out.find(label);
  ASSERT_NE(at, std::string::npos) << run.out;
  EXPECT_NE(run.out.find("relative Frobenius"), std::string::npos);
  // With the reference backend both runs have exact sums: only bf16 rounding can differ.
  const double max_relative = std::stod(run.out.substr(at + label.size()));
  EXPECT_LE(max_relative, 1.0 / 128) << run.out;
}

TEST(RunCliTest, RepeatReportsTheWarmMedian) {
  CliRun run = RunCli("run " + Fixture("jax_fp8_scaled_dot.hlo") + " --repeat 3");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("warm median"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("over 2 runs"), std::string::npos) << run.out;
  // One line per GEMM and per output however many runs: repeats change numbers, not length.
  const std::string single = RunCli("run " + Fixture("jax_fp8_scaled_dot.hlo")).out;
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'),
            std::count(single.begin(), single.end(), '\n'));
  ExpectOneLineError(RunCli("run " + Fixture("jax_fp8_scaled_dot.hlo") + " --repeat 0"),
                     "--repeat");
}

TEST(RunCliTest, DeviceResidentNeedsCudaAndAGemmOnlyModule) {
  ExpectOneLineError(RunCli("run " + Fixture("jax_fp8_scaled_dot.hlo") + " --device-resident"),
                     "--device-resident needs --backend cuda");
  // ops.hlo has elementwise ops: refused by name, before any GPU work.
  CliRun unsupported =
      RunCli("run " + Fixture("ops.hlo") + " --backend cuda --device-resident --no-rewrite");
  EXPECT_NE(unsupported.exit_code, 0);
  EXPECT_NE(unsupported.err.find("the device executor runs modules made of GEMMs"),
            std::string::npos)
      << unsupported.err;
}

TEST(RunCliTest, NoRewriteRunsThePlainDot) {
  CliRun run = RunCli("run " + Fixture("jax_fp8_scaled_dot.hlo") + " --no-rewrite");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("rewrite:      skipped"), std::string::npos);
  EXPECT_NE(run.out.find("%dot.11 (line 17)"), std::string::npos) << run.out;
}

TEST(RunCliTest, NpyInputsAndOutputs) {
  const std::string a = TempPath("a.npy"), b = TempPath("b.npy"), sa = TempPath("sa.npy"),
                    sb = TempPath("sb.npy"), dir = TempPath("out");
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor a_tensor,
                           RandomTensor(DType::kF8E4M3FN, {16, 32}, Distribution::kSymmetric, 1));
  FP8_ASSERT_OK(WriteNpy(a, a_tensor));
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor b_tensor,
                           RandomTensor(DType::kF8E4M3FN, {32, 64}, Distribution::kSymmetric, 2));
  FP8_ASSERT_OK(WriteNpy(b, b_tensor));
  ASSERT_TRUE(WriteNpy(sa, HostTensor::Scalar(DType::kF32, 0.5)).ok());
  ASSERT_TRUE(WriteNpy(sb, HostTensor::Scalar(DType::kF32, 2.0)).ok());
  CliRun run =
      RunCli("run " + Fixture("jax_fp8_scaled_dot.hlo") + " --cpu-path reference --inputs " + a +
             "," + b + "," + sa + "," + sb + " --outputs " + dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("inputs:       4 .npy files"), std::string::npos);
  StatusOr<HostTensor> out0 = ReadNpy(dir + "/out0.npy");
  ASSERT_TRUE(out0.ok()) << out0.status().ToString();
  EXPECT_EQ(out0->ShapeString(), "bf16[16,64]{1,0}");
  // D = (A . B) * 0.5 * 2 = A . B, rounded to bf16: check one element by hand.
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor ta, ReadNpy(a));
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor tb, ReadNpy(b));
  double d00 = 0;
  for (int64_t k = 0; k < 32; ++k) d00 += ta.Get({0, k}) * tb.Get({k, 0});
  EXPECT_EQ(out0->Get({0, 0}), RoundToDType(d00, DType::kBF16));
}

TEST(RunCliTest, IntegerAndPredOutputsAreWrittenAsNpy) {
  const std::string module = WriteText("int.hlo", R"(HloModule int_ops
ENTRY main {
  p = s32[3] parameter(0)
  two = s32[] constant(2)
  b = s32[3] broadcast(two), dimensions={}
  m = s32[3] multiply(p, b)
  c = pred[3] compare(p, b), direction=GT
  ROOT t = (s32[3], pred[3]) tuple(m, c)
}
)");
  const std::string input = TempPath("p.npy"), dir = TempPath("out");
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor p, HostTensor::Create(DType::kF32, {3}));
  p.SetPhysical(0, 1);
  p.SetPhysical(1, 2);
  p.SetPhysical(2, 3);
  FP8_ASSERT_OK(WriteNpy(input, p));
  CliRun run = RunCli("run " + module + " --inputs " + input + " --outputs " + dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("out0:         s32[3] dtype=s32 sum=12 abs_sum=12"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("out1:         pred[3] dtype=pred sum=1 abs_sum=1"), std::string::npos)
      << run.out;
  // The .npy header says '<i4' / '|b1' and the data follows.
  std::ifstream file(dir + "/out0.npy", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_NE(bytes.find("'descr': '<i4'"), std::string::npos);
  EXPECT_EQ(bytes.size() % 4, 0u);
  ASSERT_GE(bytes.size(), 12u);
  EXPECT_EQ(bytes[bytes.size() - 4], 6);  // last element 3 * 2, little-endian
  std::ifstream pred_file(dir + "/out1.npy", std::ios::binary);
  std::string pred_bytes((std::istreambuf_iterator<char>(pred_file)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(pred_bytes.find("'descr': '|b1'"), std::string::npos);
  EXPECT_EQ(pred_bytes.substr(pred_bytes.size() - 3), std::string("\0\0\1", 3));
}

TEST(RunCliTest, AFailedOutputRemovesTheOutputsAlreadyWritten) {
  const std::string module = WriteText("two_outputs.hlo", R"(HloModule two_outputs
ENTRY main {
  p = f32[3] parameter(0)
  n = f32[3] negate(p)
  ROOT t = (f32[3], f32[3]) tuple(p, n)
}
)");
  const std::string input = TempPath("p.npy"), dir = TempPath("out");
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor p, HostTensor::Create(DType::kF32, {3}));
  FP8_ASSERT_OK(WriteNpy(input, p));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/out1.npy/taken");  // out1.npy cannot be written
  CliRun run = RunCli("run " + module + " --inputs " + input + " --outputs " + dir);
  ExpectOneLineError(run, dir + "/out1.npy");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_FALSE(std::filesystem::exists(dir + "/out0.npy")) << "a half-written set of outputs";
  int entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 1);  // only the folder in out1.npy's place, no temporaries
}

TEST(RunCliTest, CudaWithoutAGpuIsAOneLineError) {
  CliRun run = RunCli("run " + Fixture("jax_fp8_scaled_dot.hlo") + " --backend cuda");
  if (run.exit_code == 0) {
    EXPECT_NE(run.out.find("device "), std::string::npos) << run.out;  // per-GEMM device time
    return;
  }
  ExpectOneLineError(run, "fp8dot run: error: %custom-call");
}

TEST(RunCliTest, BadInputsExitWithOneLineReasons) {
  ExpectOneLineError(RunCli("run /nonexistent.hlo"), "fp8dot run: error: ");
  ExpectOneLineError(RunCli("run " + Fixture("jax_fp8_scaled_dot.hlo") + " --backend tpu"),
                     "unknown --backend 'tpu' (expected auto, cpu, cpu-emulation, cpu-blas, "
                     "cpu-reference or cuda)");
  ExpectOneLineError(RunCli("run " + Fixture("jax_fp8_scaled_dot.hlo") + " --cpu-path fast"),
                     "fp8dot run: error: ");
  ExpectOneLineError(RunCli("run " + Fixture("jax_fp8_scaled_dot.hlo") + " --inputs a.npy"),
                     "--inputs: main.14 takes 4 parameters, got 1 files");
  ExpectOneLineError(RunCli("run " + Fixture("jax_fp8_scaled_dot.hlo") + " --compare --no-rewrite"),
                     "cannot be combined with --no-rewrite");
  const std::string f32_input = TempPath("a.npy");
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor f32_input_tensor,
                           RandomTensor(DType::kF32, {16, 32}, Distribution::kSymmetric, 1));
  FP8_ASSERT_OK(WriteNpy(f32_input, f32_input_tensor));
  ExpectOneLineError(RunCli("run " + Fixture("jax_fp8_scaled_dot.hlo") + " --inputs " + f32_input +
                            "," + f32_input + "," + f32_input + "," + f32_input),
                     "for parameter 0 (%Arg_0.1 (line 7)): ");
  const std::string unsupported = WriteText("sort.hlo", R"(HloModule s
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY main {
  p = f32[4] parameter(0)
  ROOT s = f32[4] sort(p), dimensions={0}, to_apply=lt
}
)");
  ExpectOneLineError(RunCli("run " + unsupported),
                     "fp8dot run: error: %s (line 9): sort is not supported by the interpreter");
}

}  // namespace
}  // namespace fp8dot
