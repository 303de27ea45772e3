// Every FP8 type pair (e5m2 x e5m2 through the upcast), every output type, every scale mode,
// against the exact CPU reference.
#include "cuda/cuda_test_util.h"
#include "status_matchers.h"

namespace fp8dot {
namespace {

using testing::ExpectMatchesReference;

constexpr DType kE4M3 = DType::kF8E4M3FN;
constexpr DType kE5M2 = DType::kF8E5M2;

PrecisionConfig Promoted() {
  PrecisionConfig config;
  config.operand_precision = {Precision::kHighest, Precision::kHighest};
  return config;
}

TEST(CudaDotTypesTest, EveryFp8PairEveryOutputTypeBothAccumulations) {
  FP8_SKIP_WITHOUT_GPU();
  const std::pair<DType, DType> pairs[] = {
      {kE4M3, kE4M3}, {kE4M3, kE5M2}, {kE5M2, kE4M3}, {kE5M2, kE5M2}};
  const DType outputs[] = {DType::kBF16, DType::kF16, DType::kF32, kE4M3, kE5M2};
  uint64_t seed = 100;
  for (auto [lhs, rhs] : pairs) {
    for (DType out : outputs) {
      for (bool fast : {true, false}) {
        DotProblemOptions o;
        o.m = 64;
        o.n = 96;
        o.k = 256;
        o.lhs_type = lhs;
        o.rhs_type = rhs;
        o.output_type = out;
        o.lhs_scale_mode = o.rhs_scale_mode = ScaleMode::kTensor;
        if (!fast) o.precision_config = Promoted();
        if (IsFp8(out)) o.output_scale = 1.0;  // refitted to the data by the helper
        o.seed = ++seed;
        StatusOr<DotProblem> p = MakeDotProblem(o);
        FP8_ASSERT_OK(p.status());
        ExpectMatchesReference(*p, std::string(DTypeName(lhs)) + "x" + DTypeName(rhs) + "->" +
                                       DTypeName(out) + (fast ? " fast" : " promoted"));
      }
    }
  }
}

struct ScaleCase {
  ScaleMode lhs, rhs;
  int64_t m, n, k;
  DType out;
};

void RunScaleCases(DType lhs_type, DType rhs_type, uint64_t seed) {
  const ScaleCase cases[] = {
      {ScaleMode::kNone, ScaleMode::kNone, 64, 64, 256, DType::kBF16},
      {ScaleMode::kTensor, ScaleMode::kNone, 64, 64, 256, DType::kBF16},
      {ScaleMode::kTensor, ScaleMode::kTensor, 128, 64, 512, DType::kF32},
      {ScaleMode::kOuterVector, ScaleMode::kOuterVector, 128, 192, 256, DType::kBF16},
      {ScaleMode::kOuterVector, ScaleMode::kTensor, 96, 64, 256, DType::kF32},
      // N=200 with an FP8 D pads N to 208: the rhs scale vector must be padded too.
      {ScaleMode::kOuterVector, ScaleMode::kOuterVector, 64, 200, 256, DType::kF8E4M3FN},
      {ScaleMode::kBlock1x128, ScaleMode::kBlock1x128, 256, 384, 512, DType::kBF16},
      {ScaleMode::kBlock1x128, ScaleMode::kBlock128x128, 256, 384, 512, DType::kBF16},
      {ScaleMode::kBlock128x128, ScaleMode::kBlock1x128, 256, 384, 512, DType::kF32},
      // K/128 = 3 is not a multiple of 4: the 128x128 scale rows are padded to 4.
      {ScaleMode::kBlock128x128, ScaleMode::kBlock1x128, 256, 256, 384, DType::kBF16},
      {ScaleMode::kBlock1x128, ScaleMode::kBlock128x128, 128, 256, 384, DType::kF32},
      // 1x128 rhs scales with N padded (FP8 D, N=200).
      {ScaleMode::kBlock1x128, ScaleMode::kBlock1x128, 64, 200, 256, DType::kF8E4M3FN},
      // Partial blocks: DeepSeek-V3's N = 2112 (16.5 column blocks); K = 320 and 336 end 64 and
      // 80 elements into their last block; M = 130 and 200 inside their last row block.
      {ScaleMode::kBlock1x128, ScaleMode::kBlock128x128, 64, 2112, 7168, DType::kBF16},
      {ScaleMode::kBlock1x128, ScaleMode::kBlock1x128, 130, 200, 320, DType::kF32},
      {ScaleMode::kBlock128x128, ScaleMode::kBlock1x128, 200, 256, 320, DType::kBF16},
      {ScaleMode::kBlock1x128, ScaleMode::kBlock128x128, 70, 200, 336, DType::kF32},
      // 1x128 lhs scales with M not a multiple of 16 (cuBLASLt then runs M padded) on whole
      // blocks, with an FP8 D.
      {ScaleMode::kBlock1x128, ScaleMode::kBlock1x128, 130, 256, 384, DType::kF8E4M3FN},
  };
  for (const ScaleCase& c : cases) {
    DotProblemOptions o;
    o.m = c.m;
    o.n = c.n;
    o.k = c.k;
    o.lhs_type = lhs_type;
    o.rhs_type = rhs_type;
    o.output_type = c.out;
    o.lhs_scale_mode = c.lhs;
    o.rhs_scale_mode = c.rhs;
    o.precision_config = Promoted();  // block scales need it; the others do not care
    if (IsFp8(c.out)) o.output_scale = 1.0;
    o.seed = ++seed;
    StatusOr<DotProblem> p = MakeDotProblem(o);
    FP8_ASSERT_OK(p.status());
    ExpectMatchesReference(
        *p, StrFormat("%s x %s scales %s x %s M=%lld N=%lld K=%lld -> %s", DTypeName(lhs_type),
                      DTypeName(rhs_type), ScaleModeName(c.lhs), ScaleModeName(c.rhs),
                      static_cast<long long>(c.m), static_cast<long long>(c.n),
                      static_cast<long long>(c.k), DTypeName(c.out)));
  }
}

TEST(CudaDotTypesTest, EveryScaleModeOnANativeFp8Pair) {
  FP8_SKIP_WITHOUT_GPU();
  RunScaleCases(kE4M3, kE4M3, 200);
}

TEST(CudaDotTypesTest, EveryScaleModeOnE4M3xE5M2) {
  FP8_SKIP_WITHOUT_GPU();
  RunScaleCases(kE4M3, kE5M2, 300);
}

TEST(CudaDotTypesTest, EveryScaleModeOnTheE5M2xE5M2Upcast) {
  FP8_SKIP_WITHOUT_GPU();
  RunScaleCases(kE5M2, kE5M2, 400);
}

// Scales that differ along M (lhs) and along K-blocks catch a transposed scale layout: with
// uniform random scales a wrong order would still be a permutation of the right values.
TEST(CudaDotTypesTest, BlockScaleOrderIsNotTransposed) {
  FP8_SKIP_WITHOUT_GPU();
  for (auto [lhs_mode, rhs_mode] : {std::pair{ScaleMode::kBlock1x128, ScaleMode::kBlock1x128},
                                    std::pair{ScaleMode::kBlock128x128, ScaleMode::kBlock1x128},
                                    std::pair{ScaleMode::kBlock1x128, ScaleMode::kBlock128x128}}) {
    DotProblemOptions o;
    o.m = 256;
    o.n = 256;
    o.k = 512;
    o.output_type = DType::kF32;
    o.lhs_scale_mode = lhs_mode;
    o.rhs_scale_mode = rhs_mode;
    o.precision_config = Promoted();
    // (Held in the StatusOr: moving it out makes GCC 12 warn maybe-uninitialized on the scales.)
    StatusOr<DotProblem> problem = MakeDotProblem(o);
    FP8_ASSERT_OK(problem);
    DotProblem& p = *problem;
    // Scale (i, j) = 2^((3i + 5j) % 7 - 3): every row and every K-block different.
    for (std::optional<HostTensor>* scale : {&p.lhs_scale, &p.rhs_scale}) {
      HostTensor& s = **scale;
      for (int64_t i = 0; i < s.dim(0); ++i) {
        for (int64_t j = 0; j < s.dim(1); ++j) {
          s.Set({i, j}, std::ldexp(1.0, static_cast<int>((3 * i + 5 * j) % 7) - 3));
        }
      }
    }
    ExpectMatchesReference(p, StrFormat("structured scales %s x %s", ScaleModeName(lhs_mode),
                                        ScaleModeName(rhs_mode)));
  }
}

}  // namespace
}  // namespace fp8dot
