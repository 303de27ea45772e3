// How the CUDA plan reaches operand scales, decided on the host (no GPU needed): a scale in the
// layout InPlaceScaleLayout (dot_spec.h) names is read in place by cuBLASLt's plans, for every
// scale mode on either operand; one in another layout is reordered at every run. The GPU tests
// (cuda_scale_layout_test.cc) run both ways.
#include <gtest/gtest.h>

#include "cuda/operand_preparation.h"
#include "fp8dot/dot_spec.h"

namespace fp8dot {
namespace {

TEST(ScalePreparationTest, TheInPlaceLayoutOfEveryModeIsReadInPlace) {
  CanonicalDot dot;
  dot.m = 256, dot.n = 512, dot.k = 1024;  // nothing padded; 8 K-blocks (a multiple of 4)
  for (const bool is_lhs : {true, false}) {
    for (const ScaleMode mode : {ScaleMode::kTensor, ScaleMode::kOuterVector,
                                 ScaleMode::kBlock1x128, ScaleMode::kBlock128x128}) {
      SCOPED_TRACE(std::string(is_lhs ? "lhs " : "rhs ") + ScaleModeName(mode));
      OperandScale scale;
      scale.mode = mode;
      scale.dims = ExpectedScaleDims(mode, is_lhs, dot);
      scale.minor_to_major = InPlaceScaleLayout(mode, is_lhs);
      const int64_t rows = is_lhs ? dot.m : dot.n;
      StatusOr<cuda::PreparedScale> prepared = cuda::PrepareScale(scale, is_lhs, rows, rows, dot.k);
      ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
      EXPECT_FALSE(prepared->relayout) << prepared->how;
      EXPECT_NE(prepared->how.find("in place"), std::string::npos) << prepared->how;
    }
  }
  EXPECT_EQ(InPlaceScaleLayout(ScaleMode::kBlock1x128, true), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(InPlaceScaleLayout(ScaleMode::kBlock1x128, false), std::vector<int64_t>{});
  EXPECT_EQ(InPlaceScaleLayout(ScaleMode::kBlock128x128, true), std::vector<int64_t>{});
  EXPECT_EQ(InPlaceScaleLayout(ScaleMode::kBlock128x128, false), (std::vector<int64_t>{0, 1}));
}

// The other layout of each 2-D scale is not read in place: the plan reorders it (here, without a
// GPU, the reordering buffer's allocation fails instead).
TEST(ScalePreparationTest, TheOtherLayoutOfABlockScaleIsReordered) {
  CanonicalDot dot;
  dot.m = 256, dot.n = 512, dot.k = 1024;
  for (const bool is_lhs : {true, false}) {
    for (const ScaleMode mode : {ScaleMode::kBlock1x128, ScaleMode::kBlock128x128}) {
      SCOPED_TRACE(std::string(is_lhs ? "lhs " : "rhs ") + ScaleModeName(mode));
      OperandScale scale;
      scale.mode = mode;
      scale.dims = ExpectedScaleDims(mode, is_lhs, dot);
      scale.minor_to_major = InPlaceScaleLayout(mode, is_lhs).empty() ? std::vector<int64_t>{0, 1}
                                                                      : std::vector<int64_t>{};
      const int64_t rows = is_lhs ? dot.m : dot.n;
      StatusOr<cuda::PreparedScale> prepared = cuda::PrepareScale(scale, is_lhs, rows, rows, dot.k);
      EXPECT_TRUE(!prepared.ok() || prepared->relayout);
    }
  }
}

}  // namespace
}  // namespace fp8dot
