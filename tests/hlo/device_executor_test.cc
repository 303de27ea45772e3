// DeviceGemmExecutor: which modules it takes (on any machine) and, on a GPU, that it computes
// what the host interpreter with the CUDA dot backend computes, to the bit.
#include "fp8dot/hlo/device_executor.h"

#include <gtest/gtest.h>

#include "fp8dot/cuda_device.h"
#include "fp8dot/hlo/hlo_parser.h"
#include "fp8dot/hlo/interpreter.h"
#include "fp8dot/npy.h"
#include "hlo/hlo_test_util.h"
#include "hlo/passes/fp8_gemm_rewriter.h"

namespace fp8dot::hlo {
namespace {

std::unique_ptr<HloModule> Fused(const std::string& text) {
  std::unique_ptr<HloModule> module = ParseOrDie(text);
  EXPECT_TRUE(Fp8GemmRewriter().Run(module.get()).ok());
  return module;
}

std::vector<Value> RandomArguments(const HloModule& module) {
  std::vector<Value> arguments;
  const HloComputation& entry = *module.entry_computation();
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    arguments.push_back(*RandomValue(entry.parameter_instruction(i)->shape(), 100 + i));
  }
  return arguments;
}

TEST(DeviceExecutorTest, RefusesModulesWithOtherOpsByName) {
  std::unique_ptr<HloModule> module = Fused(R"(HloModule m
ENTRY e {
  x = f8e4m3fn[16,32] parameter(0)
  y = f8e4m3fn[32,16] parameter(1)
  d = f32[16,16] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = f32[16,16] tanh(d)
})");
  StatusOr<std::unique_ptr<DeviceGemmExecutor>> executor =
      DeviceGemmExecutor::Prepare(*module, RandomArguments(*module));
  EXPECT_EQ(executor.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(executor.status().message().find("%t (line 6): opcode tanh"), std::string::npos)
      << executor.status().message();
}

TEST(DeviceExecutorTest, MatchesTheHostInterpreterOnTheGpu) {
  if (!QueryCudaDevice().ok()) GTEST_SKIP() << "no GPU: " << QueryCudaDevice().status().message();
  // The training step: an FP8-output GEMM with amax (scales through 1/s) and two gradient GEMMs.
  for (const char* fixture : {"jax_fp8_scaled_dot.hlo", "jax_fp8_train_step.hlo"}) {
    std::unique_ptr<HloModule> module = Fused(ReadTestdata(fixture));
    const std::vector<Value> arguments = RandomArguments(*module);
    HloInterpreter interpreter({.dot_backend = DotBackend::kCuda});
    Value expected = *interpreter.Evaluate(*module, arguments);
    StatusOr<std::unique_ptr<DeviceGemmExecutor>> executor =
        DeviceGemmExecutor::Prepare(*module, arguments);
    ASSERT_TRUE(executor.ok()) << fixture << ": " << executor.status().ToString();
    ASSERT_TRUE((*executor)->Run().ok());
    Value got = *(*executor)->Result();
    EXPECT_EQ(EncodeValueBytes(got), EncodeValueBytes(expected)) << fixture;
  }
}

}  // namespace
}  // namespace fp8dot::hlo
