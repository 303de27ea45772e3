// Canonicalisation of dot_general: batch dims, non-TN layouts, permuted and multiple contracting
// dims, and dims that are not multiples of 16 (padded on the device and sliced back).
#include "cuda/cuda_test_util.h"
#include "status_matchers.h"

namespace fp8dot {
namespace {

using testing::ExpectMatchesReference;
using testing::RunOnGpu;
using testing::WithLayout;

// The TN layout cuBLASLt's FP8 kernels want is read in place; the default row-major B[K,N]
// (N contiguous) is transposed on the device.
TEST(CudaDotLayoutTest, TnIsReadInPlaceOtherLayoutsAreGathered) {
  FP8_SKIP_WITHOUT_GPU();
  DotProblemOptions o;
  o.m = 128;
  o.n = 64;
  o.k = 256;
  o.output_type = DType::kBF16;
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem row_major, MakeDotProblem(o));
  ExpectMatchesReference(row_major, "A row-major, B row-major [K,N]");
  StatusOr<testing::GpuRun> run = RunOnGpu(row_major);
  FP8_ASSERT_OK(run.status());
  EXPECT_NE(run->explain.find("rhs f8e4m3fn[256,64]{1,0}: gathered"), std::string::npos)
      << run->explain;
  EXPECT_NE(run->explain.find("lhs f8e4m3fn[128,256]{1,0}: read in place"), std::string::npos)
      << run->explain;

  DotProblem tn = row_major;
  FP8_ASSERT_OK_AND_ASSIGN(tn.rhs,
                           WithLayout(row_major.rhs, {0, 1}));  // B column-major: K contiguous
  tn.spec.rhs = TensorSpec::Of(tn.rhs);
  ExpectMatchesReference(tn, "TN");
  run = RunOnGpu(tn);
  FP8_ASSERT_OK(run.status());
  EXPECT_NE(run->explain.find("rhs f8e4m3fn[256,64]{0,1}: read in place"), std::string::npos)
      << run->explain;
  EXPECT_NE(run->explain.find("(TN)"), std::string::npos) << run->explain;

  DotProblem both_column_major = tn;
  FP8_ASSERT_OK_AND_ASSIGN(both_column_major.lhs,
                           WithLayout(row_major.lhs, {0, 1}));  // A column-major: M contiguous
  both_column_major.spec.lhs = TensorSpec::Of(both_column_major.lhs);
  ExpectMatchesReference(both_column_major, "A column-major, B column-major");
}

TEST(CudaDotLayoutTest, BatchedStridedGemm) {
  FP8_SKIP_WITHOUT_GPU();
  uint64_t seed = 800;
  for (DType out : {DType::kBF16, DType::kF32, DType::kF8E4M3FN}) {
    DotProblemOptions o;
    o.batch = 4;
    o.m = 64;
    o.n = 48;
    o.k = 160;
    o.output_type = out;
    o.lhs_scale_mode = ScaleMode::kOuterVector;
    o.rhs_scale_mode = ScaleMode::kOuterVector;
    o.epilogue = Epilogue::kBias;
    if (IsFp8(out)) o.output_scale = 1.0;
    o.seed = ++seed;
    FP8_ASSERT_OK_AND_ASSIGN(DotProblem problem, MakeDotProblem(o));
    ExpectMatchesReference(problem, std::string("batch=4 -> ") + DTypeName(out));
  }
}

// A general dot_general: lhs [K1, B, M, K2], rhs [N, K2, B, K1] with contracting dims
// (0,3) x (3,1), batch dim 1 x 2, and a C in column-major layout.
TEST(CudaDotLayoutTest, GeneralDimensionNumbers) {
  FP8_SKIP_WITHOUT_GPU();
  DotProblemOptions o;
  FP8_ASSERT_OK_AND_ASSIGN(
      o.lhs, RandomTensor(DType::kF8E4M3FN, {4, 2, 48, 64}, Distribution::kSymmetric, 11));
  FP8_ASSERT_OK_AND_ASSIGN(
      o.rhs, RandomTensor(DType::kF8E5M2, {40, 64, 2, 4}, Distribution::kSymmetric, 12));
  o.dimension_numbers = DotDimensionNumbers{{1}, {2}, {0, 3}, {3, 1}};
  o.output_type = DType::kF32;
  o.beta = 1.0;
  o.precision_config.operand_precision = {Precision::kHighest, Precision::kDefault};
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(o));
  ExpectMatchesReference(p, "general dimension numbers");
  FP8_ASSERT_OK_AND_ASSIGN(p.c, WithLayout(*p.c, {1, 2, 0}));
  p.spec.c = TensorSpec::Of(*p.c);
  ExpectMatchesReference(p, "general dimension numbers, C not row-major");
}

TEST(CudaDotLayoutTest, DimsThatAreNotMultiplesOf16) {
  FP8_SKIP_WITHOUT_GPU();
  struct Case {
    int64_t batch, m, n, k;
    DType out;
    Epilogue epilogue;
  };
  const Case cases[] = {
      {0, 33, 17, 100, DType::kBF16, Epilogue::kDefault},
      {2, 33, 17, 100, DType::kF8E4M3FN, Epilogue::kBiasGelu},
      {0, 1, 1, 1, DType::kF32, Epilogue::kDefault},
      {0, 7, 130, 40, DType::kF16, Epilogue::kBias},
      {0, 1000, 1000, 1000, DType::kBF16, Epilogue::kDefault},  // in the benchmark suite
      {0, 1000, 1000, 1000, DType::kF8E4M3FN, Epilogue::kDefault},
  };
  uint64_t seed = 900;
  for (const Case& c : cases) {
    DotProblemOptions o;
    o.batch = c.batch;
    o.m = c.m;
    o.n = c.n;
    o.k = c.k;
    o.output_type = c.out;
    o.epilogue = c.epilogue;
    o.beta = c.m == 33 ? 0.5 : 0.0;
    if (IsFp8(c.out)) o.output_scale = 1.0;
    o.seed = ++seed;
    FP8_ASSERT_OK_AND_ASSIGN(DotProblem problem, MakeDotProblem(o));
    ExpectMatchesReference(
        problem,
        StrFormat("batch=%lld M=%lld N=%lld K=%lld -> %s %s", static_cast<long long>(c.batch),
                  static_cast<long long>(c.m), static_cast<long long>(c.n),
                  static_cast<long long>(c.k), DTypeName(c.out), EpilogueName(c.epilogue)),
        c.epilogue == Epilogue::kBiasGelu ? 0x1.0p-12 : 0.0);
  }
}

}  // namespace
}  // namespace fp8dot
