// The CLI's one --backend flag: `dot` and `run` take the same values, and --cpu-path narrows `cpu`.
// Also `run --outputs` for integer arrays of any rank (the one .npy writer).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "tools/cli_runner.h"

namespace fp8dot::testing {
namespace {

const char kDot[] = "dot --m 8 --n 16 --k 64 --seed 3 ";

std::string Fixture(const std::string& name) {
  return std::string(FP8DOT_SOURCE_DIR) + "/tests/hlo/testdata/" + name;
}

TEST(BackendCliTest, DotTakesEveryBackendName) {
  const std::pair<const char*, const char*> cases[] = {
      {"cpu", "cpu (emulation of the accumulation)"},
      {"cpu-emulation", "cpu (emulation of the accumulation)"},
      {"cpu-blas", "cpu (OpenBLAS, f32 accumulation)"},
      {"cpu-reference", "cpu (reference, exact products and f64 sums)"},
      {"cpu --cpu-path blas", "cpu (OpenBLAS, f32 accumulation)"},
      {"cpu --cpu-path reference", "cpu (reference, exact products and f64 sums)"},
  };
  for (const auto& [flags, backend] : cases) {
    CliRun run = RunCli(std::string(kDot) + "--backend " + flags);
    ASSERT_EQ(run.exit_code, 0) << flags << ": " << run.err;
    EXPECT_NE(run.out.find(std::string("backend:      ") + backend), std::string::npos)
        << flags << ": " << run.out;
  }
}

TEST(BackendCliTest, RunTakesTheSameNames) {
  for (const char* backend : {"cpu", "cpu-emulation", "cpu-blas", "cpu-reference"}) {
    CliRun run = RunCli("run " + Fixture("jax_fp8_scaled_dot.hlo") + " --backend " + backend);
    ASSERT_EQ(run.exit_code, 0) << backend << ": " << run.err;
    const std::string resolved = std::string(backend) == "cpu" ? "cpu-emulation" : backend;
    EXPECT_NE(run.out.find("backend:      " + resolved + ": dots and GEMM custom calls on the CPU"),
              std::string::npos)
        << run.out;
  }
}

TEST(BackendCliTest, ContradictionsAndUnknownNamesAreOneLineErrors) {
  ExpectOneLineError(RunCli(std::string(kDot) + "--backend cpu-blas --cpu-path reference"),
                     "--cpu-path reference contradicts --backend cpu-blas (use --backend cpu)");
  ExpectOneLineError(RunCli(std::string(kDot) + "--backend cpu --cpu-path fast"),
                     "unknown --cpu-path 'fast' (expected emulation, blas or reference)");
  ExpectOneLineError(RunCli("run " + Fixture("jax_fp8_scaled_dot.hlo") + " --backend gpu"),
                     "unknown --backend 'gpu' (expected auto, cpu, cpu-emulation, cpu-blas, "
                     "cpu-reference or cuda)");
  ExpectOneLineError(
      RunCli("run " + Fixture("jax_fp8_scaled_dot.hlo") + " --backend cpu --device-resident"),
      "--device-resident needs --backend cuda");
}

// --engine picks the cuda backend's GEMM: refused with any other backend, with an unknown name,
// and by `run` (whose executor picks each GEMM's engine itself).
TEST(BackendCliTest, EngineIsForTheCudaBackendOnly) {
  ExpectOneLineError(RunCli(std::string(kDot) + "--backend cpu --engine own"),
                     "--engine own picks the cuda backend's GEMM, but the backend is "
                     "cpu-emulation");
  ExpectOneLineError(RunCli(std::string(kDot) + "--backend cuda --engine fast"),
                     "unknown GEMM engine 'fast' (expected auto, cublaslt or own)");
  ExpectOneLineError(
      RunCli("run " + Fixture("jax_fp8_scaled_dot.hlo") + " --backend cpu --engine own"),
      "--engine own: run's executor chooses each GEMM's engine itself (auto); --engine is for "
      "dot, accuracy and probe");
  CliRun run = RunCli(std::string(kDot) + "--backend cpu --engine auto");
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

// --sm-count-target holds the cuda backend's GEMM to fewer SMs: refused with any other backend,
// negative, or by `run`; 0 (all SMs) is accepted anywhere.
TEST(BackendCliTest, SmCountTargetIsForTheCudaBackendOnly) {
  ExpectOneLineError(RunCli(std::string(kDot) + "--backend cpu --sm-count-target 8"),
                     "--sm-count-target 8 holds the cuda backend's GEMM to fewer SMs, but the "
                     "backend is cpu-emulation");
  ExpectOneLineError(RunCli(std::string(kDot) + "--backend cuda --sm-count-target -2"),
                     "--sm-count-target -2: a count of SMs, 0 (all of them) or more");
  ExpectOneLineError(
      RunCli("run " + Fixture("jax_fp8_scaled_dot.hlo") + " --backend cpu --sm-count-target 4"),
      "--sm-count-target 4: run's executor plans each GEMM with the process's defaults; "
      "--sm-count-target is for dot, accuracy and probe");
  CliRun run = RunCli(std::string(kDot) + "--backend cpu --sm-count-target 0");
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

TEST(BackendCliTest, IntegerOutputsOfRankThreeHaveANumpyShape) {
  const std::string module = TempPath("iota.hlo"), dir = TempPath("out");
  std::ofstream(module) << R"(HloModule iota3
ENTRY main {
  ROOT i = s32[2,2,3] iota(), iota_dimension=2
}
)";
  CliRun run = RunCli("run " + module + " --outputs " + dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::ifstream file(dir + "/out0.npy", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_NE(bytes.find("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2, 3), }"),
            std::string::npos)
      << bytes.substr(0, 128);
  ASSERT_EQ(bytes.size(), 128u + 12 * 4);  // a 64-byte aligned header, then 12 int32
  EXPECT_EQ(bytes[128 + 4 * 5], 2);        // element [0][1][2] = 2
}

}  // namespace
}  // namespace fp8dot::testing
