// QuantizeSpec validation: what each granularity produces, and errors that name the bad field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fp8dot/quantize.h"
#include "status_matchers.h"

namespace fp8dot {
namespace {

using ::testing::HasSubstr;

QuantizeSpec Spec(int64_t rows, int64_t cols, ScaleGranularity granularity, bool transposed) {
  QuantizeSpec spec;
  spec.rows = rows;
  spec.cols = cols;
  spec.granularity = granularity;
  spec.transposed = transposed;
  return spec;
}

TEST(QuantizeSpecTest, ScaleShapesPerGranularityRoundPartialBlocksUp) {
  FP8_ASSERT_OK_AND_ASSIGN(QuantizeOutputs tensor,
                           ValidateQuantizeSpec(Spec(200, 300, ScaleGranularity::kTensor, true)));
  EXPECT_EQ(tensor.output_dims, (std::vector<int64_t>{200, 300}));
  EXPECT_EQ(tensor.transposed_output_dims, (std::vector<int64_t>{300, 200}));
  EXPECT_TRUE(tensor.has_scale);
  EXPECT_TRUE(tensor.scale_dims.empty());
  EXPECT_FALSE(tensor.has_transposed_scale);

  FP8_ASSERT_OK_AND_ASSIGN(QuantizeOutputs row,
                           ValidateQuantizeSpec(Spec(200, 300, ScaleGranularity::kRow, true)));
  EXPECT_EQ(row.scale_dims, (std::vector<int64_t>{200}));
  EXPECT_TRUE(row.has_transposed_scale);
  EXPECT_EQ(row.transposed_scale_dims, (std::vector<int64_t>{300}));

  FP8_ASSERT_OK_AND_ASSIGN(QuantizeOutputs blocks_1x128,
                           ValidateQuantizeSpec(Spec(200, 300, ScaleGranularity::k1x128, true)));
  EXPECT_EQ(blocks_1x128.scale_dims, (std::vector<int64_t>{200, 3}));
  EXPECT_EQ(blocks_1x128.transposed_scale_dims, (std::vector<int64_t>{300, 2}));

  FP8_ASSERT_OK_AND_ASSIGN(QuantizeOutputs blocks_128x128,
                           ValidateQuantizeSpec(Spec(200, 300, ScaleGranularity::k128x128, true)));
  EXPECT_EQ(blocks_128x128.scale_dims, (std::vector<int64_t>{2, 3}));
  EXPECT_FALSE(blocks_128x128.has_transposed_scale);  // qᵀ's scales are these, transposed

  FP8_ASSERT_OK_AND_ASSIGN(QuantizeOutputs row_only,
                           ValidateQuantizeSpec(Spec(4, 4, ScaleGranularity::kRow, false)));
  EXPECT_FALSE(row_only.has_transposed_scale);
  EXPECT_TRUE(row_only.transposed_output_dims.empty());
}

// The scale cast with is written even when one is given: it is the input's own when the given
// one is not usable.
TEST(QuantizeSpecTest, AGivenScaleIsWrittenAsTheScaleCastWith) {
  QuantizeSpec spec = Spec(8, 8, ScaleGranularity::kTensor, false);
  spec.given_scale = true;
  FP8_ASSERT_OK_AND_ASSIGN(QuantizeOutputs outputs, ValidateQuantizeSpec(spec));
  EXPECT_TRUE(outputs.has_scale);
  EXPECT_TRUE(outputs.scale_dims.empty());  // one value
}

TEST(QuantizeSpecTest, ErrorsNameWhatIsWrong) {
  QuantizeSpec spec = Spec(8, 8, ScaleGranularity::kTensor, false);
  spec.input_type = DType::kF8E4M3FN;
  EXPECT_THAT(ValidateQuantizeSpec(spec).status().message(), HasSubstr("input type f8e4m3fn"));
  spec = Spec(8, 8, ScaleGranularity::kTensor, false);
  spec.output_type = DType::kBF16;
  EXPECT_THAT(ValidateQuantizeSpec(spec).status().message(), HasSubstr("not an FP8 type"));
  EXPECT_THAT(ValidateQuantizeSpec(Spec(0, 8, ScaleGranularity::kTensor, false)).status().message(),
              HasSubstr("0x8"));
  EXPECT_THAT(ValidateQuantizeSpec(
                  Spec(int64_t{1} << 40, int64_t{1} << 40, ScaleGranularity::kTensor, false))
                  .status()
                  .message(),
              HasSubstr("overflow"));
  spec = Spec(8, 8, ScaleGranularity::kTensor, false);
  spec.row_major = false;
  EXPECT_THAT(ValidateQuantizeSpec(spec).status().message(), HasSubstr("neither"));
  spec = Spec(8, 8, ScaleGranularity::k1x128, false);
  spec.given_scale = true;
  EXPECT_THAT(ValidateQuantizeSpec(spec).status().message(), HasSubstr("not 1x128"));
  spec = Spec(8, 8, ScaleGranularity::kTensor, false);
  spec.margin = 65;
  EXPECT_THAT(ValidateQuantizeSpec(spec).status().message(), HasSubstr("margin 65"));
  EXPECT_THAT(ParseScaleGranularity("2x128").status().message(), HasSubstr("'2x128'"));
  FP8_EXPECT_OK_AND_EQ(ParseScaleGranularity("128x128"), ScaleGranularity::k128x128);
}

// Column-major 1x128 scales keep their shapes and say their layout as dot_spec.h writes
// layouts, so a scaled dot given them reads them as written; the other granularities have one
// layout, and asking for another is an error naming it.
TEST(QuantizeSpecTest, ColumnMajorScalesAreFor1x128AndNameTheirLayout) {
  QuantizeSpec spec = Spec(200, 300, ScaleGranularity::k1x128, true);
  FP8_ASSERT_OK_AND_ASSIGN(QuantizeOutputs row_major, ValidateQuantizeSpec(spec));
  EXPECT_TRUE(row_major.scale_minor_to_major.empty());
  spec.scale_layout = ScaleLayout::kColumnMajor;
  FP8_ASSERT_OK_AND_ASSIGN(QuantizeOutputs column_major, ValidateQuantizeSpec(spec));
  EXPECT_EQ(column_major.scale_dims, (std::vector<int64_t>{200, 3}));
  EXPECT_EQ(column_major.transposed_scale_dims, (std::vector<int64_t>{300, 2}));
  EXPECT_EQ(column_major.scale_minor_to_major, (std::vector<int64_t>{0, 1}));
  for (ScaleGranularity other :
       {ScaleGranularity::kTensor, ScaleGranularity::kRow, ScaleGranularity::k128x128}) {
    spec.granularity = other;
    EXPECT_THAT(ValidateQuantizeSpec(spec).status().message(),
                HasSubstr(std::string("column-major scales are for 1x128 granularity, whose "
                                      "scales have a row per operand row; ") +
                          ScaleGranularityName(other)));
  }
  FP8_EXPECT_OK_AND_EQ(ParseScaleLayout("column-major"), ScaleLayout::kColumnMajor);
  FP8_EXPECT_OK_AND_EQ(ParseScaleLayout("row-major"), ScaleLayout::kRowMajor);
  EXPECT_THAT(ParseScaleLayout("m-major").status().message(),
              HasSubstr("unknown scale layout 'm-major' (row-major or column-major)"));
}

TEST(QuantizeSpecTest, BuffersMustMatchTheSpec) {
  QuantizeSpec spec = Spec(8, 8, ScaleGranularity::k1x128, true);
  float input[64];
  uint8_t output[64], transposed_output[64];
  float scales[16], transposed_scales[16];
  QuantizeBuffers buffers;
  buffers.input = input;
  buffers.output = output;
  buffers.scale = scales;
  buffers.transposed_output = transposed_output;
  EXPECT_THAT(CheckQuantizeBuffers(spec, buffers).message(), HasSubstr("transposed_scale is null"));
  buffers.transposed_scale = transposed_scales;
  FP8_EXPECT_OK(CheckQuantizeBuffers(spec, buffers));
  buffers.amax = scales;
  EXPECT_THAT(CheckQuantizeBuffers(spec, buffers).message(),
              HasSubstr("amax is given but the spec does not use it"));
}

TEST(QuantizeSpecTest, TheSwiGluActivationTakesUpAndOnlyIt) {
  QuantizeSpec spec = Spec(8, 8, ScaleGranularity::kTensor, false);
  uint16_t gate[64], up[64];
  uint8_t output[64];
  float scale = 0;
  QuantizeBuffers buffers;
  buffers.input = gate;
  buffers.output = output;
  buffers.scale = &scale;
  buffers.up = up;
  EXPECT_THAT(CheckQuantizeBuffers(spec, buffers).message(),
              HasSubstr("up is given but the spec does not use it"));
  spec.activation = QuantizeActivation::kSwiGlu;
  FP8_EXPECT_OK(CheckQuantizeBuffers(spec, buffers));
  buffers.up = nullptr;
  EXPECT_THAT(CheckQuantizeBuffers(spec, buffers).message(),
              HasSubstr("up is null (the second input of the swiglu activation)"));
  buffers.up = output;  // q written over up while it is read
  EXPECT_THAT(CheckQuantizeBuffers(spec, buffers).message(), HasSubstr("up and output overlap"));
  FP8_EXPECT_OK_AND_EQ(ParseQuantizeActivation("swiglu"), QuantizeActivation::kSwiGlu);
  FP8_EXPECT_OK_AND_EQ(ParseQuantizeActivation("none"), QuantizeActivation::kNone);
  FP8_EXPECT_OK_AND_EQ(ParseQuantizeActivation("gelu"), QuantizeActivation::kGelu);
  EXPECT_THAT(ParseQuantizeActivation("relu").status().message(),
              HasSubstr("unknown quantize activation 'relu' (none, swiglu or gelu)"));
  // GELU has one input: up is refused with it.
  spec.activation = QuantizeActivation::kGelu;
  buffers.up = up;
  EXPECT_THAT(CheckQuantizeBuffers(spec, buffers).message(),
              HasSubstr("up is given but the spec does not use it"));
  buffers.up = nullptr;
  FP8_EXPECT_OK(CheckQuantizeBuffers(spec, buffers));
  spec.activation = static_cast<QuantizeActivation>(7);
  EXPECT_THAT(CheckQuantizeBuffers(spec, buffers).message(),
              HasSubstr("activation 7 is none of none, swiglu or gelu"));
}

TEST(QuantizeSpecTest, OutputsMayNotOverlapEachOtherTheInputOrTheGivenScale) {
  // Delayed scaling's call: q, qT, the scale and the amax, with a given scale.
  QuantizeSpec spec = Spec(8, 8, ScaleGranularity::kTensor, true);
  spec.input_type = DType::kF32;  // 256 bytes
  spec.given_scale = true;
  spec.compute_amax = true;
  float input[64], given = 0.5f, scale = 0, amax = 0;
  uint8_t output[64], transposed_output[64];
  QuantizeBuffers buffers;
  buffers.input = input;
  buffers.given_scale = &given;
  buffers.output = output;
  buffers.scale = &scale;
  buffers.transposed_output = transposed_output;
  buffers.amax = &amax;
  FP8_EXPECT_OK(CheckQuantizeBuffers(spec, buffers));
  // The scale written over the given scale, the amax zeroed over it, q over the input's last
  // bytes, qT over q's second half: each a silently wrong result, each refused.
  QuantizeBuffers aliased = buffers;
  aliased.scale = &given;
  EXPECT_THAT(CheckQuantizeBuffers(spec, aliased).message(),
              HasSubstr("given_scale and scale overlap"));
  aliased = buffers;
  aliased.amax = &given;
  EXPECT_THAT(CheckQuantizeBuffers(spec, aliased).message(),
              HasSubstr("given_scale and amax overlap"));
  aliased = buffers;
  aliased.output = reinterpret_cast<uint8_t*>(input) + 255;  // its first byte, the input's last
  EXPECT_THAT(CheckQuantizeBuffers(spec, aliased).message(), HasSubstr("input and output overlap"));
  aliased = buffers;
  aliased.transposed_output = output + 32;
  EXPECT_THAT(CheckQuantizeBuffers(spec, aliased).message(),
              HasSubstr("output and transposed_output overlap"));
  // Adjacent is not overlapping; and the input and the given scale may share memory (both are
  // only read).
  aliased = buffers;
  uint8_t after[256 + 64];  // the input's 256 bytes, then q's 64
  aliased.input = reinterpret_cast<const float*>(after);
  aliased.output = after + 256;
  aliased.given_scale = reinterpret_cast<const float*>(after);
  FP8_EXPECT_OK(CheckQuantizeBuffers(spec, aliased));
}

}  // namespace
}  // namespace fp8dot
