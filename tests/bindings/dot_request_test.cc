// MakeDotSpec and the pointer views: what both framework bindings (the nanobind module and the XLA
// FFI handlers) turn their requests into, and the names they give types by.
#include "bindings/dot_request.h"
#include "bindings/dot_pointers.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "status_matchers.h"

namespace fp8dot {
namespace {

DotRequest Matmul(int64_t m, int64_t n, int64_t k) {
  DotRequest request;
  request.lhs = {DType::kF8E4M3FN, {m, k}, {}};
  request.rhs = {DType::kF8E4M3FN, {k, n}, {}};
  request.output_type = DType::kBF16;
  return request;
}

// The error of making the DotSpec and then validating it, as both bindings do.
std::string ErrorOf(const DotRequest& request) {
  StatusOr<DotSpec> spec = MakeDotSpec(request);
  if (!spec.ok()) return spec.status().message();
  StatusOr<CanonicalDot> dot = ValidateDotSpec(*spec);
  return dot.ok() ? "OK" : dot.status().message();
}

TEST(DotRequestTest, DefaultsAreAMatmulOrABatchedMatmul) {
  FP8_ASSERT_OK_AND_ASSIGN(DotSpec spec, MakeDotSpec(Matmul(64, 32, 256)));
  EXPECT_EQ(spec.dimension_numbers.lhs_contracting_dimensions, (std::vector<int64_t>{1}));
  EXPECT_EQ(spec.dimension_numbers.rhs_contracting_dimensions, (std::vector<int64_t>{0}));
  EXPECT_EQ(spec.output_type, DType::kBF16);
  EXPECT_EQ(spec.epilogue, Epilogue::kDefault);
  DotRequest batched = Matmul(64, 32, 256);
  batched.lhs.dims = {4, 64, 256};
  batched.rhs.dims = {4, 256, 32};
  FP8_ASSERT_OK_AND_ASSIGN(DotSpec batched_spec, MakeDotSpec(batched));
  EXPECT_EQ(batched_spec.dimension_numbers.lhs_batch_dimensions, (std::vector<int64_t>{0}));
  DotRequest mixed = Matmul(64, 32, 256);
  mixed.lhs.dims = {4, 64, 256};
  EXPECT_EQ(ErrorOf(mixed),
            "lhs has rank 3 and rhs rank 2: without dimension_numbers both must be matrices "
            "[M,K] x [K,N] or batches of them [B,M,K] x [B,K,N]");
}

TEST(DotRequestTest, PrecisionNamesDecideTheAccumulation) {
  DotRequest request = Matmul(64, 32, 256);
  request.precision = {"highest", "DEFAULT"};
  FP8_ASSERT_OK_AND_ASSIGN(DotSpec spec, MakeDotSpec(request));
  FP8_ASSERT_OK_AND_ASSIGN(CanonicalDot dot, ValidateDotSpec(spec));
  EXPECT_EQ(dot.accumulation, AccumulationMode::kFp8Promoted);
  request.precision = {"DEFAULT", "DEFAULT"};
  FP8_ASSERT_OK_AND_ASSIGN(spec, MakeDotSpec(request));
  FP8_ASSERT_OK_AND_ASSIGN(dot, ValidateDotSpec(spec));
  EXPECT_EQ(dot.accumulation, AccumulationMode::kFp8Fast);
  request.precision = {"fastest", "DEFAULT"};
  EXPECT_NE(ErrorOf(request).find("fastest"), std::string::npos) << ErrorOf(request);
  request.precision = {"DEFAULT", "DEFAULT"};
  request.algorithm = "ALG_DOT_ANY_F8_ANY_F8_F32";
  FP8_ASSERT_OK_AND_ASSIGN(spec, MakeDotSpec(request));
  FP8_ASSERT_OK_AND_ASSIGN(dot, ValidateDotSpec(spec));
  EXPECT_EQ(dot.accumulation, AccumulationMode::kFp8Promoted);
}

TEST(DotRequestTest, ScaleModesAreNamedOrReadOffTheShapes) {
  DotRequest request = Matmul(256, 384, 512);
  request.lhs_scale = TensorSpec{DType::kF32, {256, 4}, {}};  // 1x128: [M, K/128]
  request.rhs_scale = TensorSpec{DType::kF32, {4, 3}, {}};    // 128x128: [K/128, N/128]
  request.precision = {"HIGHEST", "HIGHEST"};
  FP8_ASSERT_OK_AND_ASSIGN(DotSpec spec, MakeDotSpec(request));
  EXPECT_EQ(spec.lhs_scale.mode, ScaleMode::kBlock1x128);
  EXPECT_EQ(spec.rhs_scale.mode, ScaleMode::kBlock128x128);
  request.lhs_scale = TensorSpec{DType::kF32, {}, {}};
  request.rhs_scale = TensorSpec{DType::kF32, {384}, {}};
  FP8_ASSERT_OK_AND_ASSIGN(spec, MakeDotSpec(request));
  EXPECT_EQ(spec.lhs_scale.mode, ScaleMode::kTensor);
  EXPECT_EQ(spec.rhs_scale.mode, ScaleMode::kOuterVector);
  request.rhs_scale_mode = "tensor";  // named, and then the shape must fit it
  EXPECT_NE(ErrorOf(request).find("must be a scalar"), std::string::npos) << ErrorOf(request);
}

TEST(DotRequestTest, BadScalesAndModesNameTheProblem) {
  DotRequest request = Matmul(64, 32, 256);
  request.lhs_scale = TensorSpec{DType::kBF16, {}, {}};
  EXPECT_EQ(ErrorOf(request), "lhs_scale must be float32, got bfloat16");
  request = Matmul(64, 32, 256);
  request.rhs_scale_mode = "tensor";
  EXPECT_EQ(ErrorOf(request), "rhs_scale_mode tensor without rhs_scale");
  request = Matmul(64, 32, 256);
  request.lhs_scale = TensorSpec{DType::kF32, {3, 5}, {}};
  EXPECT_NE(ErrorOf(request).find("lhs"), std::string::npos) << ErrorOf(request);
}

TEST(DotRequestTest, ABiasMeansTheBiasEpilogueUnlessOneIsNamed) {
  DotRequest request = Matmul(64, 32, 256);
  request.bias = TensorSpec{DType::kBF16, {32}, {}};
  FP8_ASSERT_OK_AND_ASSIGN(DotSpec spec, MakeDotSpec(request));
  EXPECT_EQ(spec.epilogue, Epilogue::kBias);
  request.epilogue = "BIAS_GELU";
  FP8_ASSERT_OK_AND_ASSIGN(spec, MakeDotSpec(request));
  EXPECT_EQ(spec.epilogue, Epilogue::kBiasGelu);
  request.epilogue = "SOFTMAX";
  EXPECT_NE(ErrorOf(request).find("SOFTMAX"), std::string::npos) << ErrorOf(request);
}

TEST(DotRequestTest, FrameworkTypeNames) {
  for (DType dtype : kAllDTypes) {
    FP8_ASSERT_OK_AND_ASSIGN(DType parsed, DTypeFromFrameworkName(FrameworkDTypeName(dtype)));
    EXPECT_EQ(parsed, dtype);
    FP8_ASSERT_OK_AND_ASSIGN(parsed, DTypeFromFrameworkName(DTypeName(dtype)));  // HLO's
    EXPECT_EQ(parsed, dtype);
  }
  FP8_ASSERT_OK_AND_ASSIGN(DType torch_name, DTypeFromFrameworkName("torch.float8_e5m2"));
  EXPECT_EQ(torch_name, DType::kF8E5M2);
  StatusOr<DType> bad = DTypeFromFrameworkName("int8");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "dtype int8 is not supported (float8_e4m3fn, float8_e5m2, bfloat16, float16, float32, "
            "float64)");
}

TEST(DotPointersTest, HostViewsAreTheSpecsArgumentsOverTheCallersMemory) {
  DotRequest request = Matmul(4, 8, 128);
  request.lhs_scale = TensorSpec{DType::kF32, {4, 1}, {0, 1}};  // 1x128, column-major
  request.rhs_scale = TensorSpec{DType::kF32, {1, 8}, {}};
  request.bias = TensorSpec{DType::kBF16, {8}, {}};
  request.precision = {"HIGHEST", "HIGHEST"};
  FP8_ASSERT_OK_AND_ASSIGN(DotSpec spec, MakeDotSpec(request));
  std::vector<uint8_t> lhs(4 * 128), rhs(128 * 8);
  std::vector<float> lhs_scale(4, 2.0f), rhs_scale(8, 0.5f);
  std::vector<uint16_t> bias(8);
  const DotPointers pointers{lhs.data(),  rhs.data(), lhs_scale.data(), rhs_scale.data(),
                             bias.data(), nullptr,    nullptr};
  FP8_ASSERT_OK_AND_ASSIGN(HostDotViews views, HostDotViews::Make(spec, pointers));
  const DotArguments arguments = views.arguments();
  ASSERT_NE(arguments.lhs, nullptr);
  EXPECT_EQ(arguments.lhs->data(), lhs.data());  // a view, not a copy
  EXPECT_EQ(arguments.rhs->dims(), (Dims{128, 8}));
  EXPECT_EQ(arguments.lhs_scale->minor_to_major(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(arguments.rhs_scale->data(), rhs_scale.data());
  EXPECT_EQ(arguments.bias->dtype(), DType::kBF16);
  EXPECT_EQ(arguments.c, nullptr);
  EXPECT_EQ(arguments.output_scale, nullptr);

  float amax = 0;
  const CudaDotBuffers buffers = CudaBuffersOf(pointers, lhs.data(), &amax);
  EXPECT_EQ(buffers.lhs, lhs.data());
  EXPECT_EQ(buffers.lhs_scale, lhs_scale.data());
  EXPECT_EQ(buffers.bias, bias.data());
  EXPECT_EQ(buffers.c, nullptr);
  EXPECT_EQ(buffers.output, lhs.data());
  EXPECT_EQ(buffers.amax, &amax);
}

TEST(DotPointersTest, AMissingPointerIsAnError) {
  FP8_ASSERT_OK_AND_ASSIGN(DotSpec spec, MakeDotSpec(Matmul(4, 8, 128)));
  std::vector<uint8_t> lhs(4 * 128);
  EXPECT_FALSE(HostDotViews::Make(spec, DotPointers{lhs.data(), nullptr}).ok());
}

}  // namespace
}  // namespace fp8dot
