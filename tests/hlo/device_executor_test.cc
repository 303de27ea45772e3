// DeviceGemmExecutor: which modules it takes (on any machine) and, on a GPU, that it computes
// what the host interpreter with the CUDA dot backend computes, to the bit.
#include "fp8dot/hlo/device_executor.h"

#include <gtest/gtest.h>

#include "fp8dot/cuda_device.h"
#include "fp8dot/hlo/hlo_parser.h"
#include "fp8dot/hlo/interpreter.h"
#include "fp8dot/npy.h"
#include "hlo/hlo_test_util.h"
#include "fp8dot/hlo/fp8_gemm_rewriter.h"
#include "status_matchers.h"

namespace fp8dot::hlo {
namespace {

// `text` parsed and run through the FP8 GEMM rewriter.
StatusOr<std::unique_ptr<HloModule>> Fused(const std::string& text) {
  FP8_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, ParseHloModule(text, "test.hlo"));
  FP8_RETURN_IF_ERROR(Fp8GemmRewriter().Run(module.get()).status());
  return module;
}

StatusOr<std::vector<Value>> RandomArguments(const HloModule& module) {
  std::vector<Value> arguments;
  const HloComputation& entry = *module.entry_computation();
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    FP8_ASSIGN_OR_RETURN(Value argument,
                         RandomValue(entry.parameter_instruction(i)->shape(), 100 + i));
    arguments.push_back(std::move(argument));
  }
  return arguments;
}

TEST(DeviceExecutorTest, RefusesModulesWithOtherOpsByName) {
  FP8_ASSERT_OK_AND_ASSIGN(std::unique_ptr<HloModule> module, Fused(R"(HloModule m
ENTRY e {
  x = f8e4m3fn[16,32] parameter(0)
  y = f8e4m3fn[32,16] parameter(1)
  d = f32[16,16] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = f32[16,16] tanh(d)
})"));
  FP8_ASSERT_OK_AND_ASSIGN(std::vector<Value> arguments, RandomArguments(*module));
  StatusOr<std::unique_ptr<DeviceGemmExecutor>> executor =
      DeviceGemmExecutor::Prepare(*module, arguments);
  EXPECT_EQ(executor.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(executor.status().message().find("%t (line 6): opcode tanh"), std::string::npos)
      << executor.status().message();
}

// A chain of two fused GEMMs: the first quantises its output to e4m3 (scale_d = 1/s, computed
// on the host) and reports amax; the second consumes that FP8 output on the device.
constexpr char kTwoGemms[] = R"(HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f8e4m3fn[64,128] parameter(0)
  w = f8e4m3fn[128,64] parameter(1)
  v = f8e4m3fn[64,32] parameter(2)
  s = f32[] parameter(3)
  d = f32[64,64] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s_b = f32[64,64] broadcast(s), dimensions={}
  d_s = f32[64,64] divide(d, s_b)
  lo = f32[] constant(-448)
  hi = f32[] constant(448)
  lo_b = f32[64,64] broadcast(lo), dimensions={}
  hi_b = f32[64,64] broadcast(hi), dimensions={}
  c = f32[64,64] clamp(lo_b, d_s, hi_b)
  q = f8e4m3fn[64,64] convert(c)
  abs = f32[64,64] abs(d)
  ninf = f32[] constant(-inf)
  amax = f32[] reduce(abs, ninf), dimensions={0,1}, to_apply=max
  e = f32[64,32] dot(q, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,highest}
  ROOT t = (f32[64,32], f32[]) tuple(e, amax)
})";

TEST(DeviceExecutorTest, TwoChainedGemmsAreGemmOnlyAfterFusion) {
  FP8_ASSERT_OK_AND_ASSIGN(std::unique_ptr<HloModule> module, Fused(kTwoGemms));
  int gemms = 0;
  for (const HloInstruction* instruction : module->entry_computation()->instructions()) {
    gemms += instruction->opcode() == HloOpcode::kCustomCall;
    EXPECT_NE(instruction->opcode(), HloOpcode::kReduce);
  }
  EXPECT_EQ(gemms, 2);
  FP8_ASSERT_OK_AND_ASSIGN(std::vector<Value> arguments, RandomArguments(*module));
  StatusOr<std::unique_ptr<DeviceGemmExecutor>> executor =
      DeviceGemmExecutor::Prepare(*module, arguments);
  if (QueryCudaDevice().ok()) {
    EXPECT_TRUE(executor.ok()) << executor.status().ToString();
  } else {
    EXPECT_NE(executor.status().code(), StatusCode::kUnimplemented)  // supported, just no GPU
        << executor.status().ToString();
  }
}

TEST(DeviceExecutorTest, MatchesTheHostInterpreterOnTheGpu) {
  if (!QueryCudaDevice().ok()) GTEST_SKIP() << "no GPU: " << QueryCudaDevice().status().message();
  FP8_ASSERT_OK_AND_ASSIGN(std::unique_ptr<HloModule> module, Fused(kTwoGemms));
  FP8_ASSERT_OK_AND_ASSIGN(const std::vector<Value> arguments, RandomArguments(*module));
  HloInterpreter interpreter({.dot_backend = Backend::kCuda});
  FP8_ASSERT_OK_AND_ASSIGN(Value expected, interpreter.Evaluate(*module, arguments));
  StatusOr<std::unique_ptr<DeviceGemmExecutor>> executor =
      DeviceGemmExecutor::Prepare(*module, arguments);
  ASSERT_TRUE(executor.ok()) << executor.status().ToString();
  FP8_ASSERT_OK((*executor)->Run());
  FP8_ASSERT_OK_AND_ASSIGN(Value got, (*executor)->Result());
  // The same cuBLASLt plans on the same bytes: the same bits.
  EXPECT_EQ(EncodeValueBytes(got), EncodeValueBytes(expected));
}

}  // namespace
}  // namespace fp8dot::hlo
