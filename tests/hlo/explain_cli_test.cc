// `fp8dot explain` on hand-written __cublas$lt$matmul$f8 calls: whatever the call looks like,
// explain prints its summary or a one-line error naming the call, never crashes (issue #13).
// Also `fp8dot run`'s resource limits on hostile modules.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "tools/cli_runner.h"

namespace fp8dot {
namespace {

using testing::CliRun;
using testing::ExpectOneLineError;
using testing::RunCli;
using testing::TempPath;

constexpr char kConfig[] =
    R"({"gemm_backend_config":{"alpha_real":1,"alpha_imag":0,"beta":0,)"
    R"("dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],)"
    R"("rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},)"
    R"("precision_config":{"operand_precision":["DEFAULT","DEFAULT"],"algorithm":"ALG_UNSET"},)"
    R"("epilogue":"DEFAULT","damax_output":false}})";

// An entry computation with parameters a, b (of `types`), sa, sb and ROOT `root`.
std::string WriteModule(const std::string& a_type, const std::string& b_type,
                        const std::string& root) {
  const std::string path = TempPath("module.hlo");
  std::ofstream(path) << "HloModule m\n\nENTRY main {\n  a = " << a_type
                      << "[2,2] parameter(0)\n  b = " << b_type
                      << "[2,2] parameter(1)\n  sa = f32[] parameter(2)\n"
                      << "  sb = f32[] parameter(3)\n  ROOT " << root
                      << ", custom_call_target=\"__cublas$lt$matmul$f8\", backend_config="
                      << kConfig << "\n}\n";
  return path;
}

TEST(ExplainCliTest, WellFormedFp8GemmIsSummarized) {
  CliRun run = RunCli(
      "explain --summary " +
      WriteModule("f8e4m3fn", "f8e4m3fn", "g = (f32[2,2], s8[16]) custom-call(a, b, sa, sb)"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("%g: f8e4m3fn x f8e4m3fn -> f32[2,2]"), std::string::npos) << run.out;
}

TEST(ExplainCliTest, Fp8GemmWithoutOperandsIsAnError) {
  CliRun run = RunCli("explain --summary " +
                      WriteModule("f8e4m3fn", "f8e4m3fn", "g = (f32[2,2], s8[16]) custom-call()"));
  ExpectOneLineError(run, "%g (line 8): __cublas$lt$matmul$f8 with beta=0");
  EXPECT_NE(run.err.find("takes 4 operands (a, b, a_scale, b_scale), got 0"), std::string::npos)
      << run.err;
}

TEST(ExplainCliTest, Fp8GemmWithOneOperandIsAnError) {
  CliRun run = RunCli("explain --summary " +
                      WriteModule("f8e4m3fn", "f8e4m3fn", "g = (f32[2,2], s8[16]) custom-call(a)"));
  ExpectOneLineError(run, "takes 4 operands (a, b, a_scale, b_scale), got 1");
}

TEST(ExplainCliTest, Fp8GemmWithAnEmptyTupleResultIsAnError) {
  CliRun run = RunCli("explain --summary " +
                      WriteModule("f8e4m3fn", "f8e4m3fn", "g = () custom-call(a, b, sa, sb)"));
  ExpectOneLineError(run, "%g (line 8): the result tuple is empty");
}

TEST(ExplainCliTest, Fp8GemmWithANonTupleResultIsSummarized) {
  // A bare D result is what the interpreter accepts too; explain reads D from it.
  CliRun run = RunCli("explain --summary " + WriteModule("f8e4m3fn", "f8e4m3fn",
                                                         "g = f32[2,2] custom-call(a, b, sa, sb)"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("%g: f8e4m3fn x f8e4m3fn -> f32[2,2]"), std::string::npos) << run.out;
}

TEST(ExplainCliTest, Fp8GemmWithIntegerOperandsIsAnError) {
  CliRun run = RunCli("explain --summary " +
                      WriteModule("s32", "s8", "g = (f32[2,2], s8[16]) custom-call(a, b, sa, sb)"));
  ExpectOneLineError(run, "%g (line 8): a is s32[2,2]");
}

TEST(ExplainCliTest, Fp8GemmWithoutOperandPrecisionsNamesTheCall) {
  std::string text;
  {
    std::ifstream in(
        WriteModule("f8e4m3fn", "f8e4m3fn", "g = (f32[2,2], s8[16]) custom-call(a, b, sa, sb)"));
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string precision = R"("operand_precision":["DEFAULT","DEFAULT"])";
  text.replace(text.find(precision), precision.size(), R"("operand_precision":[])");
  const std::string path = TempPath("no_precision.hlo");
  std::ofstream(path) << text;
  ExpectOneLineError(RunCli("explain --summary " + path),
                     "%g (line 8): operand_precision must have 2 entries (lhs, rhs), got 0");
}

TEST(RunCliLimitsTest, MaxEvaluationStepsStopsADoublingCallChain) {
  // c(i) calls c(i-1) twice: 2^40 calls. The flag's limit stops it at once.
  std::string text =
      "HloModule m\nc0 {\n  p0 = f32[] parameter(0)\n  ROOT n0 = f32[] negate(p0)\n}\n";
  for (int i = 1; i < 40; ++i) {
    const std::string n = std::to_string(i), prev = std::to_string(i - 1);
    text += "c" + n + " {\n  p" + n + " = f32[] parameter(0)\n  a" + n + " = f32[] call(p" + n +
            "), to_apply=c" + prev + "\n  ROOT b" + n + " = f32[] call(a" + n + "), to_apply=c" +
            prev + "\n}\n";
  }
  text += "ENTRY e {\n  x = f32[] parameter(0)\n  ROOT y = f32[] call(x), to_apply=c39\n}\n";
  const std::string path = TempPath("chain.hlo");
  std::ofstream(path) << text;
  CliRun run = RunCli("run " + path + " --no-rewrite --max-evaluation-steps 1000");
  ExpectOneLineError(run, "evaluation stopped after 1000 instructions evaluated");
  EXPECT_NE(run.err.find("--max-evaluation-steps"), std::string::npos) << run.err;
  CliRun zero = RunCli("run " + path + " --max-evaluation-steps 0");
  EXPECT_NE(zero.exit_code, 0);
  EXPECT_NE(zero.err.find("--max-evaluation-steps"), std::string::npos) << zero.err;
}

}  // namespace
}  // namespace fp8dot
