// fp8dot_scaled_mm (include/fp8dot/c_api.h): errors come back as text; on the GPU it computes
// the same dot as the C++ API, on fresh random data against the exact reference.
#include "fp8dot/c_api.h"

#include "cuda/cuda_test_util.h"
#include "status_matchers.h"

namespace fp8dot {
namespace {

TEST(CApiTest, BadArgumentsAreReportedAsText) {
  char error[256] = {};
  EXPECT_NE(fp8dot_scaled_mm(nullptr, nullptr, nullptr, nullptr, nullptr, 4, 4, 0, "f8e4m3fn",
                             "f8e4m3fn", "bf16", "default", nullptr, error, sizeof(error)),
            0);
  EXPECT_NE(std::string(error).find("m, n, k must be >= 1"), std::string::npos) << error;
  EXPECT_NE(fp8dot_scaled_mm(nullptr, nullptr, nullptr, nullptr, nullptr, 16, 16, 16, "f8e4m3fn",
                             "f8e4m3fn", "bf16", "sometimes", nullptr, error, sizeof(error)),
            0);
  EXPECT_NE(std::string(error).find("sometimes"), std::string::npos) << error;
  char tiny[8];
  EXPECT_NE(fp8dot_scaled_mm(nullptr, nullptr, nullptr, nullptr, nullptr, 4, 4, 0, "f8e4m3fn",
                             "f8e4m3fn", "bf16", "default", nullptr, tiny, sizeof(tiny)),
            0);
  EXPECT_EQ(std::string(tiny).size(), 7u);  // truncated, NUL-terminated
}

TEST(CApiTest, ScaledMmMatchesTheReferenceInBothModes) {
  FP8_SKIP_WITHOUT_GPU();
  for (Precision precision : {Precision::kDefault, Precision::kHighest}) {
    DotProblemOptions o;
    o.m = 64;
    o.n = 128;
    o.k = 512;
    o.output_type = DType::kBF16;
    o.lhs_scale_mode = o.rhs_scale_mode = ScaleMode::kTensor;
    o.precision_config.operand_precision = {precision, precision};
    o.seed = 77;
    FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(o));
    FP8_ASSERT_OK_AND_ASSIGN(
        p.rhs, testing::WithLayout(p.rhs, {0, 1}));  // column-major B, as torch._scaled_mm takes it
    p.spec.rhs = TensorSpec::Of(p.rhs);
    FP8_ASSERT_OK_AND_ASSIGN(const CanonicalDot dot, ValidateDotSpec(p.spec));
    StatusOr<testing::GpuBuffers> g = testing::MakeGpuBuffers(p, dot);
    FP8_ASSERT_OK(g.status());
    char error[512] = {};
    ASSERT_EQ(fp8dot_scaled_mm(g->pointers.lhs, g->pointers.rhs, g->pointers.lhs_scale,
                               g->pointers.rhs_scale, g->pointers.output, o.m, o.n, o.k, "f8e4m3fn",
                               "f8e4m3fn", "bf16",
                               precision == Precision::kDefault ? "default" : "highest", nullptr,
                               error, sizeof(error)),
              0)
        << error;
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    FP8_ASSERT_OK_AND_ASSIGN(DotResult got, testing::Download(*g, p.spec, dot));
    FP8_ASSERT_OK_AND_ASSIGN(const HostTensor exact, ReferenceDotExact(p.spec, p.arguments()));
    FP8_ASSERT_OK_AND_ASSIGN(const ErrorStats stats, CompareToReference(got.output, exact));
    EXPECT_EQ(stats.nonfinite_mismatches, 0);
    const AccumulationMode mode = precision == Precision::kDefault ? AccumulationMode::kFp8Fast
                                                                   : AccumulationMode::kFp8Promoted;
    EXPECT_LT(stats.relative_frobenius,
              testing::AccumulationTolerance(mode, o.k) + 1.1 * std::ldexp(1.0, -8));
  }
}

}  // namespace
}  // namespace fp8dot
