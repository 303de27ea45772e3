#include "fp8dot/dot_spec.h"
#include "status_matchers.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fp8dot {
namespace {

DotSpec Matmul(int64_t m, int64_t n, int64_t k, DType lhs = DType::kF8E4M3FN,
               DType rhs = DType::kF8E4M3FN) {
  DotSpec spec;
  spec.lhs = {lhs, {m, k}, {}};
  spec.rhs = {rhs, {k, n}, {}};
  return spec;
}

std::string ErrorOf(const DotSpec& spec) {
  StatusOr<CanonicalDot> dot = ValidateDotSpec(spec);
  return dot.ok() ? "OK" : dot.status().message();
}

TEST(DotSpecTest, CanonicalisesAMatmul) {
  FP8_ASSERT_OK_AND_ASSIGN(CanonicalDot dot, ValidateDotSpec(Matmul(64, 32, 256)));
  EXPECT_EQ(dot.batch, 1);
  EXPECT_EQ(dot.m, 64);
  EXPECT_EQ(dot.n, 32);
  EXPECT_EQ(dot.k, 256);
  EXPECT_EQ(dot.output_dims, (Dims{64, 32}));
  EXPECT_EQ(dot.accumulation, AccumulationMode::kFp8Fast);
}

TEST(DotSpecTest, CanonicalisesAGeneralDotGeneral) {
  // lhs [b=2, k1=8, m=3, k2=16], rhs [n1=5, k2=16, b=2, n2=7, k1=8]
  DotSpec spec;
  spec.lhs = {DType::kF32, {2, 8, 3, 16}, {}};
  spec.rhs = {DType::kF32, {5, 16, 2, 7, 8}, {}};
  spec.dimension_numbers = {{0}, {2}, {1, 3}, {4, 1}};
  FP8_ASSERT_OK_AND_ASSIGN(CanonicalDot dot, ValidateDotSpec(spec));
  EXPECT_EQ(dot.batch, 2);
  EXPECT_EQ(dot.m, 3);
  EXPECT_EQ(dot.n, 35);
  EXPECT_EQ(dot.k, 128);
  EXPECT_EQ(dot.lhs_free_dimensions, (std::vector<int64_t>{2}));
  EXPECT_EQ(dot.rhs_free_dimensions, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(dot.output_dims, (Dims{2, 3, 5, 7}));
  EXPECT_EQ(dot.accumulation, AccumulationMode::kTf32);
}

TEST(DotSpecTest, RejectsMismatchedAndBadDims) {
  DotSpec spec = Matmul(64, 64, 128);
  spec.rhs.dims = {96, 64};
  EXPECT_EQ(ErrorOf(spec),
            "lhs contracting dim 1 has size 128 but rhs contracting dim 0 has size 96");
  spec = Matmul(64, 64, 128);
  spec.dimension_numbers.lhs_contracting_dimensions = {2};
  EXPECT_EQ(ErrorOf(spec),
            "lhs contracting dim 2 is out of range for rank 2 (f8e4m3fn[64,128]{1,0})");
  spec = Matmul(64, 64, 128);
  spec.dimension_numbers = {{1}, {1}, {1}, {0}};
  EXPECT_EQ(ErrorOf(spec), "lhs dim 1 appears more than once in the batch/contracting dims");
  spec = Matmul(64, 64, 128);
  spec.dimension_numbers.rhs_contracting_dimensions = {};
  EXPECT_EQ(ErrorOf(spec), "lhs has 1 contracting dims but rhs has 0");
  spec = Matmul(64, 0, 128);
  EXPECT_EQ(ErrorOf(spec), "rhs f8e4m3fn[128,0]{1,0}: every dim must be positive");
  spec = Matmul(64, 64, 128);
  spec.lhs.minor_to_major = {1, 1};
  EXPECT_EQ(ErrorOf(spec), "lhs: layout [1,1] is not a permutation of the dims of [64,128]");
}

TEST(DotSpecTest, RejectsUnsupportedTypePairs) {
  EXPECT_EQ(ErrorOf(Matmul(8, 8, 8, DType::kF8E4M3FN, DType::kF32)),
            "unsupported operand type pair f8e4m3fn x f32: an FP8 operand needs an FP8 partner "
            "(convert the other operand, or dequantise both)");
  EXPECT_EQ(ErrorOf(Matmul(8, 8, 8, DType::kBF16, DType::kF16)),
            "unsupported operand type pair bf16 x f16: non-FP8 operands must have the same type");
  // e5m2 x e5m2 is valid (it runs as an upcast GEMM on the GPU) but not a native FP8 pair.
  EXPECT_EQ(ErrorOf(Matmul(8, 8, 8, DType::kF8E5M2, DType::kF8E5M2)), "OK");
  EXPECT_FALSE(IsNativeFp8Pair(DType::kF8E5M2, DType::kF8E5M2));
  EXPECT_TRUE(IsNativeFp8Pair(DType::kF8E5M2, DType::kF8E4M3FN));
}

TEST(DotSpecTest, ScaleShapesPerMode) {
  DotSpec spec = Matmul(256, 384, 512);
  spec.precision_config.operand_precision = {Precision::kHighest, Precision::kHighest};
  FP8_ASSERT_OK_AND_ASSIGN(CanonicalDot dot, ValidateDotSpec(spec));
  EXPECT_EQ(ExpectedScaleDims(ScaleMode::kOuterVector, true, dot), (Dims{256}));
  EXPECT_EQ(ExpectedScaleDims(ScaleMode::kOuterVector, false, dot), (Dims{384}));
  EXPECT_EQ(ExpectedScaleDims(ScaleMode::kBlock1x128, true, dot), (Dims{256, 4}));
  EXPECT_EQ(ExpectedScaleDims(ScaleMode::kBlock1x128, false, dot), (Dims{4, 384}));
  EXPECT_EQ(ExpectedScaleDims(ScaleMode::kBlock128x128, true, dot), (Dims{2, 4}));
  EXPECT_EQ(ExpectedScaleDims(ScaleMode::kBlock128x128, false, dot), (Dims{4, 3}));
  spec.lhs_scale = {ScaleMode::kBlock1x128, {256, 4}};
  spec.rhs_scale = {ScaleMode::kBlock128x128, {4, 3}};
  EXPECT_EQ(ErrorOf(spec), "OK");
  spec.rhs_scale.dims = {4, 2};
  EXPECT_EQ(ErrorOf(spec), "rhs scale (mode 128x128) must have shape [4,3], got [4,2]");
  spec.lhs_scale = {ScaleMode::kTensor, {2}};
  spec.rhs_scale = {ScaleMode::kTensor, {}};
  EXPECT_EQ(ErrorOf(spec), "lhs scale (mode tensor) must be a scalar ([] or [1]), got [2]");
}

TEST(DotSpecTest, BlockScaleRules) {
  DotSpec spec = Matmul(256, 256, 320);
  spec.precision_config.operand_precision = {Precision::kHighest, Precision::kHighest};
  // Partial blocks: K = 320 is 2.5 blocks, so the scales have 3 (the last covers 64 of K).
  spec.lhs_scale = {ScaleMode::kBlock1x128, {256, 2}};
  spec.rhs_scale = {ScaleMode::kBlock1x128, {3, 256}};
  EXPECT_EQ(ErrorOf(spec), "lhs scale (mode 1x128) must have shape [256,3], got [256,2]");
  spec.lhs_scale = {ScaleMode::kBlock1x128, {256, 3}};
  EXPECT_EQ(ErrorOf(spec), "OK");
  // M = 200 is 1 full and 1 partial row block; N = 2112 (DeepSeek-V3) is 16.5 column blocks.
  spec = Matmul(200, 2112, 256);
  spec.precision_config.operand_precision = {Precision::kHighest, Precision::kHighest};
  spec.lhs_scale = {ScaleMode::kBlock128x128, {1, 2}};
  spec.rhs_scale = {ScaleMode::kBlock1x128, {2, 2112}};
  EXPECT_EQ(ErrorOf(spec), "lhs scale (mode 128x128) must have shape [2,2], got [1,2]");
  spec.lhs_scale = {ScaleMode::kBlock128x128, {2, 2}};
  EXPECT_EQ(ErrorOf(spec), "OK");
  spec.lhs_scale = {ScaleMode::kBlock1x128, {200, 2}};
  spec.rhs_scale = {ScaleMode::kBlock128x128, {2, 16}};
  EXPECT_EQ(ErrorOf(spec), "rhs scale (mode 128x128) must have shape [2,17], got [2,16]");
  spec.rhs_scale = {ScaleMode::kBlock128x128, {2, 17}};
  EXPECT_EQ(ErrorOf(spec), "OK");
  spec = Matmul(256, 256, 256);
  spec.precision_config.operand_precision = {Precision::kHighest, Precision::kHighest};
  spec.lhs_scale = {ScaleMode::kBlock128x128, {2, 2}};
  spec.rhs_scale = {ScaleMode::kBlock128x128, {2, 2}};
  EXPECT_EQ(ErrorOf(spec),
            "block scales 128x128 x 128x128 are not supported (allowed: 1x128 x 1x128, 1x128 x "
            "128x128, 128x128 x 1x128)");
  spec.rhs_scale = {ScaleMode::kTensor, {}};
  EXPECT_EQ(ErrorOf(spec),
            "block scales must be used on both operands, got lhs 128x128 and rhs tensor");
  spec.lhs_scale = {ScaleMode::kBlock1x128, {256, 2}};
  spec.rhs_scale = {ScaleMode::kBlock1x128, {2, 256}};
  spec.precision_config.operand_precision = {Precision::kDefault, Precision::kDefault};
  EXPECT_EQ(
      ErrorOf(spec),
      "fast accumulation (precision DEFAULT,DEFAULT, algorithm ALG_UNSET) cannot be used with "
      "block scales: use HIGHEST or ALG_DOT_ANY_F8_ANY_F8_F32");
}

TEST(DotSpecTest, OutputOptionRules) {
  DotSpec spec = Matmul(16, 32, 64);
  spec.beta = 1.0;
  EXPECT_EQ(ErrorOf(spec), "beta is 1 but no C matrix was given");
  spec.c = TensorSpec{DType::kF32, {16, 31}, {}};
  EXPECT_EQ(ErrorOf(spec), "C must have the output's dims [16,32], got [16,31]");
  spec.c = TensorSpec{DType::kBF16, {16, 32}, {}};
  EXPECT_EQ(ErrorOf(spec), "C must have the output type f32, got bf16");
  spec.output_type = DType::kF8E4M3FN;
  EXPECT_EQ(ErrorOf(spec), "OK");  // FP8 D takes a bf16 C
  spec.c = TensorSpec{DType::kF32, {16, 32}, {}};
  EXPECT_EQ(ErrorOf(spec), "C must be bf16 or f16 when the output is f8e4m3fn, got f32");

  spec = Matmul(16, 32, 64);
  spec.epilogue = Epilogue::kBiasRelu;
  EXPECT_EQ(ErrorOf(spec), "epilogue BIAS_RELU needs a bias, but none was given");
  spec.bias = TensorSpec{DType::kF32, {16}, {}};
  EXPECT_EQ(ErrorOf(spec), "bias must have one value per output column, shape [32], got [16]");
  spec.bias = TensorSpec{DType::kF32, {32}, {}};
  EXPECT_EQ(ErrorOf(spec), "OK");
  spec.epilogue = Epilogue::kRelu;
  EXPECT_EQ(ErrorOf(spec), "epilogue RELU takes no bias, but one was given (use a BIAS epilogue)");

  spec = Matmul(16, 32, 64);
  spec.output_scale = true;
  EXPECT_EQ(ErrorOf(spec), "an output scale (scale_d) needs an FP8 output type, got f32");
  spec.output_type = DType::kF8E5M2;
  EXPECT_EQ(ErrorOf(spec), "OK");
  spec.alpha = INFINITY;
  EXPECT_EQ(ErrorOf(spec), "alpha and beta must be finite, got alpha=inf beta=0");
}

TEST(DotSpecTest, ParsesNames) {
  FP8_EXPECT_OK_AND_EQ(ParseScaleMode("1x128"), ScaleMode::kBlock1x128);
  FP8_EXPECT_OK_AND_EQ(ParseScaleMode("row"), ScaleMode::kOuterVector);
  FP8_EXPECT_OK_AND_EQ(ParseEpilogue("bias_gelu"), Epilogue::kBiasGelu);
  FP8_EXPECT_OK_AND_EQ(ParseEpilogue("none"), Epilogue::kDefault);
  EXPECT_EQ(ParseScaleMode("64x64").status().message(),
            "unknown scale mode '64x64' (expected none, tensor, outer, 1x128 or 128x128)");
}

TEST(DotSpecTest, InferScaleModeReadsTheModeOffTheShape) {
  CanonicalDot dot;
  dot.m = 256;
  dot.n = 384;
  dot.k = 512;
  FP8_EXPECT_OK_AND_EQ(InferScaleMode({}, true, dot), ScaleMode::kTensor);
  FP8_EXPECT_OK_AND_EQ(InferScaleMode({1}, false, dot), ScaleMode::kTensor);
  FP8_EXPECT_OK_AND_EQ(InferScaleMode({256}, true, dot), ScaleMode::kOuterVector);
  FP8_EXPECT_OK_AND_EQ(InferScaleMode({384}, false, dot), ScaleMode::kOuterVector);
  FP8_EXPECT_OK_AND_EQ(InferScaleMode({256, 4}, true, dot), ScaleMode::kBlock1x128);
  FP8_EXPECT_OK_AND_EQ(InferScaleMode({4, 384}, false, dot), ScaleMode::kBlock1x128);
  FP8_EXPECT_OK_AND_EQ(InferScaleMode({2, 4}, true, dot), ScaleMode::kBlock128x128);
  FP8_EXPECT_OK_AND_EQ(InferScaleMode({4, 3}, false, dot), ScaleMode::kBlock128x128);
  StatusOr<ScaleMode> wrong = InferScaleMode({384}, true, dot);
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(wrong.status().message(),
            "lhs scale of shape [384] fits no scale mode for M=256 N=384 K=512 (tensor [], outer "
            "[256], 1x128 [256,4], 128x128 [2,4])");
}

}  // namespace
}  // namespace fp8dot
