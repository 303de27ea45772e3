// QuantizeOnCpu, the reference quantiser: values worked out by hand, and the rule checked
// against a direct computation from its definition on random data.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "dot/activation_rule.h"
#include "fp8dot/cpu_backend.h"
#include "fp8dot/float_codec.h"
#include "fp8dot/random.h"
#include "status_matchers.h"

namespace fp8dot {
namespace {

struct Quantized {
  std::vector<uint8_t> q, q_transposed;
  std::vector<float> scale, transposed_scale;
  float amax = 0;
};

// Runs QuantizeOnCpu with every output the spec produces.
// `up`: the second input of QuantizeActivation::kSwiGlu.
StatusOr<Quantized> QuantizeAll(const QuantizeSpec& spec, const void* input,
                                const float* given_scale = nullptr, const void* up = nullptr) {
  FP8_ASSIGN_OR_RETURN(QuantizeOutputs outputs, ValidateQuantizeSpec(spec));
  Quantized result;
  auto count = [](const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return static_cast<size_t>(n);
  };
  QuantizeBuffers buffers;
  buffers.input = input;
  buffers.up = up;
  buffers.given_scale = given_scale;
  if (spec.row_major) {
    result.q.resize(count(outputs.output_dims));
    buffers.output = result.q.data();
  }
  if (outputs.has_scale) {
    result.scale.resize(count(outputs.scale_dims));
    buffers.scale = result.scale.data();
  }
  if (spec.transposed) {
    result.q_transposed.resize(count(outputs.transposed_output_dims));
    buffers.transposed_output = result.q_transposed.data();
  }
  if (outputs.has_transposed_scale) {
    result.transposed_scale.resize(count(outputs.transposed_scale_dims));
    buffers.transposed_scale = result.transposed_scale.data();
  }
  if (spec.compute_amax) buffers.amax = &result.amax;
  FP8_RETURN_IF_ERROR(QuantizeOnCpu(spec, buffers));
  return result;
}

std::vector<uint16_t> Bf16(const std::vector<double>& values) {
  std::vector<uint16_t> out;
  for (double v : values) out.push_back(EncodeBF16(v));
  return out;
}

std::vector<float> Decode(const std::vector<uint8_t>& q, DType type) {
  std::vector<float> out;
  for (uint8_t b : q) out.push_back(type == DType::kF8E4M3FN ? DecodeF8E4M3FN(b) : DecodeF8E5M2(b));
  return out;
}

TEST(CpuQuantizeTest, TensorScaleMapsTheAmaxToTheTypesMax) {
  const std::vector<uint16_t> x = Bf16({1, -2, 3, 896, 0.5, 0, -0.25, 7});
  QuantizeSpec spec;
  spec.rows = 2;
  spec.cols = 4;
  spec.compute_amax = true;
  FP8_ASSERT_OK_AND_ASSIGN(Quantized result, QuantizeAll(spec, x.data()));
  EXPECT_EQ(result.scale, std::vector<float>{2.0f});  // 896 / 448
  EXPECT_EQ(result.amax, 896.0f);
  EXPECT_EQ(Decode(result.q, DType::kF8E4M3FN),
            (std::vector<float>{0.5, -1, 1.5, 448, 0.25, 0, -0.125, 3.5}));
}

TEST(CpuQuantizeTest, RowScalesAndTheirTransposeUseTheirOwnDims) {
  const std::vector<uint16_t> x = Bf16({1, -2, 3, 896, 0.5, 0, -0.25, 7});
  QuantizeSpec spec;
  spec.rows = 2;
  spec.cols = 4;
  spec.granularity = ScaleGranularity::kRow;
  spec.transposed = true;
  FP8_ASSERT_OK_AND_ASSIGN(Quantized result, QuantizeAll(spec, x.data()));
  EXPECT_EQ(result.scale, (std::vector<float>{2.0f, 7.0f / 448.0f}));
  EXPECT_EQ(Decode(result.q, DType::kF8E4M3FN),
            (std::vector<float>{0.5, -1, 1.5, 448, 32, 0, -16, 448}));
  // qᵀ is [4, 2]; its rows are x's columns, each scaled by its own amax.
  EXPECT_EQ(result.transposed_scale,
            (std::vector<float>{1.0f / 448, 2.0f / 448, 3.0f / 448, 896.0f / 448}));
  EXPECT_EQ(Decode(result.q_transposed, DType::kF8E4M3FN),
            (std::vector<float>{448, 224, -448, 0, 448, -36, 448, 3.5}));  // -37.3 rounds to -36
}

// The rule, written out from its definition for one group: the test's own oracle.
float ExpectedScale(const std::vector<float>& group, int margin, DType type) {
  float amax = 0;
  for (float v : group) {
    if (std::isnan(v)) return 1.0f;
    amax = std::max(amax, std::fabs(v));
  }
  const float scale = amax * std::ldexp(1.0f, margin) / static_cast<float>(DTypeMaxFinite(type));
  return amax > 0 ? scale : 1.0f;
}

TEST(CpuQuantizeTest, BlockScalesOnPartialBlocksMatchTheDefinition) {
  const int64_t rows = 131, cols = 200;  // neither a multiple of 128
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor input,
                           RandomTensor(DType::kF32, {rows, cols}, Distribution::kHeavyTailed, 7));
  const float* x = static_cast<const float*>(input.data());
  for (ScaleGranularity granularity : {ScaleGranularity::k1x128, ScaleGranularity::k128x128}) {
    for (DType type : {DType::kF8E4M3FN, DType::kF8E5M2}) {
      SCOPED_TRACE(std::string(ScaleGranularityName(granularity)) + " " + DTypeName(type));
      QuantizeSpec spec;
      spec.input_type = DType::kF32;
      spec.output_type = type;
      spec.rows = rows;
      spec.cols = cols;
      spec.granularity = granularity;
      spec.transposed = true;
      spec.margin = -1;
      FP8_ASSERT_OK_AND_ASSIGN(Quantized result, QuantizeAll(spec, x));
      const int64_t block_rows = granularity == ScaleGranularity::k1x128 ? 1 : 128;
      const int64_t row_blocks = (rows + block_rows - 1) / block_rows, col_blocks = 2;
      ASSERT_EQ(result.scale.size(), static_cast<size_t>(row_blocks * col_blocks));
      for (int64_t br = 0; br < row_blocks; ++br) {
        for (int64_t bc = 0; bc < col_blocks; ++bc) {
          std::vector<float> group;
          for (int64_t r = br * block_rows; r < std::min(rows, (br + 1) * block_rows); ++r) {
            for (int64_t c = bc * 128; c < std::min(cols, (bc + 1) * 128); ++c) {
              group.push_back(x[r * cols + c]);
            }
          }
          const float scale = ExpectedScale(group, -1, type);
          ASSERT_EQ(result.scale[static_cast<size_t>(br * col_blocks + bc)], scale);
        }
      }
      // Every element: q = RNE(x · (1 / scale)) saturated, exactly; and qᵀ is q transposed whenever
      // the scales are shared (128x128), else cast with the columns' own scales.
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          const float scale =
              result.scale[static_cast<size_t>((r / block_rows) * col_blocks + c / 128)];
          const uint8_t expected =
              type == DType::kF8E4M3FN
                  ? EncodeF8E4M3FN(x[r * cols + c] / scale, Overflow::kSaturate)
                  : EncodeF8E5M2(x[r * cols + c] / scale, Overflow::kSaturate);
          ASSERT_EQ(result.q[static_cast<size_t>(r * cols + c)], expected) << r << "," << c;
          if (granularity == ScaleGranularity::k128x128) {
            ASSERT_EQ(result.q_transposed[static_cast<size_t>(c * rows + r)], expected);
          }
        }
      }
      if (granularity == ScaleGranularity::k1x128) {
        ASSERT_EQ(result.transposed_scale.size(), static_cast<size_t>(cols * 2));
        for (int64_t c = 0; c < cols; ++c) {
          for (int64_t br = 0; br < 2; ++br) {
            std::vector<float> group;
            for (int64_t r = br * 128; r < std::min(rows, (br + 1) * 128); ++r) {
              group.push_back(x[r * cols + c]);
            }
            ASSERT_EQ(result.transposed_scale[static_cast<size_t>(c * 2 + br)],
                      ExpectedScale(group, -1, type));
          }
        }
      }
    }
  }
}

TEST(CpuQuantizeTest, NanZeroAndGivenScale) {
  // A NaN makes its group's amax NaN: scale 1, the NaN stays NaN, other groups are unaffected.
  std::vector<float> x(2 * 128, 1.0f);
  x[5] = std::numeric_limits<float>::quiet_NaN();
  for (int i = 128; i < 256; ++i) x[i] = 0.0f;  // an all-zero group: scale 1
  QuantizeSpec spec;
  spec.input_type = DType::kF32;
  spec.rows = 2;
  spec.cols = 128;
  spec.granularity = ScaleGranularity::k1x128;
  spec.compute_amax = true;
  FP8_ASSERT_OK_AND_ASSIGN(Quantized result, QuantizeAll(spec, x.data()));
  EXPECT_EQ(result.scale, (std::vector<float>{1.0f, 1.0f}));
  EXPECT_TRUE(std::isnan(result.amax));
  EXPECT_TRUE(std::isnan(DecodeF8E4M3FN(result.q[5])));
  EXPECT_EQ(DecodeF8E4M3FN(result.q[6]), 1.0f);
  EXPECT_EQ(DecodeF8E4M3FN(result.q[200]), 0.0f);

  // A given scale is used as is, and values beyond the type saturate (e5m2 max 57344).
  std::vector<float> big = {1e6f, -std::numeric_limits<float>::infinity(), 3.0f, -0.5f};
  QuantizeSpec given;
  given.input_type = DType::kF32;
  given.output_type = DType::kF8E5M2;
  given.rows = 1;
  given.cols = 4;
  given.given_scale = true;
  given.compute_amax = true;
  const float scale = 0.5f;
  FP8_ASSERT_OK_AND_ASSIGN(Quantized saturated, QuantizeAll(given, big.data(), &scale));
  EXPECT_EQ(saturated.scale, std::vector<float>{0.5f});
  EXPECT_EQ(Decode(saturated.q, DType::kF8E5M2), (std::vector<float>{57344, -57344, 6, -1}));
  EXPECT_TRUE(std::isinf(saturated.amax));
}

// A given scale that is not a positive finite number (a delayed-scaling history with no amax
// yet) is replaced by the input's own scale: the same bytes and scale as without one.
TEST(CpuQuantizeTest, AnUnusableGivenScaleFallsBackToTheInputsOwn) {
  const std::vector<uint16_t> x = Bf16({1, -2, 3, 896, 0.5, 0, -0.25, 7});
  QuantizeSpec spec;
  spec.rows = 2;
  spec.cols = 4;
  spec.transposed = true;
  spec.compute_amax = true;
  FP8_ASSERT_OK_AND_ASSIGN(Quantized current, QuantizeAll(spec, x.data()));
  ASSERT_EQ(current.scale, std::vector<float>{2.0f});  // 896 / 448
  spec.given_scale = true;
  for (const float unusable : {0.0f, -0.0f, -2.0f, std::numeric_limits<float>::quiet_NaN(),
                               std::numeric_limits<float>::infinity()}) {
    SCOPED_TRACE(unusable);
    FP8_ASSERT_OK_AND_ASSIGN(Quantized fallback, QuantizeAll(spec, x.data(), &unusable));
    EXPECT_EQ(fallback.scale, current.scale);
    EXPECT_EQ(fallback.q, current.q);
    EXPECT_EQ(fallback.q_transposed, current.q_transposed);
    EXPECT_EQ(fallback.amax, 896.0f);
  }
  // A usable one is cast with as given (896 saturates).
  const float one = 1.0f;
  FP8_ASSERT_OK_AND_ASSIGN(Quantized given, QuantizeAll(spec, x.data(), &one));
  EXPECT_EQ(given.scale, std::vector<float>{1.0f});
  EXPECT_EQ(Decode(given.q, DType::kF8E4M3FN)[3], 448.0f);
}

TEST(CpuQuantizeTest, TransposedOnlyStillWritesTheScales) {
  const std::vector<uint16_t> x = Bf16({1, -2, 3, 896, 0.5, 0, -0.25, 7});
  QuantizeSpec spec;
  spec.rows = 2;
  spec.cols = 4;
  spec.row_major = false;
  spec.transposed = true;
  FP8_ASSERT_OK_AND_ASSIGN(Quantized result, QuantizeAll(spec, x.data()));
  EXPECT_TRUE(result.q.empty());
  EXPECT_EQ(result.scale, std::vector<float>{2.0f});
  EXPECT_EQ(Decode(result.q_transposed, DType::kF8E4M3FN),
            (std::vector<float>{0.5, 0.25, -1, 0, 1.5, -0.125, 448, 3.5}));

  spec.granularity = ScaleGranularity::k1x128;  // q's own scales: one per row of x
  FP8_ASSERT_OK_AND_ASSIGN(Quantized blocks, QuantizeAll(spec, x.data()));
  EXPECT_EQ(blocks.scale, (std::vector<float>{2.0f, 7.0f / 448.0f}));
  EXPECT_EQ(blocks.transposed_scale,
            (std::vector<float>{1.0f / 448, 2.0f / 448, 3.0f / 448, 896.0f / 448}));
}

// `column_major` holds the [rows][blocks] array `row_major` holds, transposed in memory.
void ExpectTransposedInMemory(const std::vector<float>& column_major,
                              const std::vector<float>& row_major, int64_t rows, int64_t blocks) {
  ASSERT_EQ(column_major.size(), static_cast<size_t>(rows * blocks));
  ASSERT_EQ(row_major.size(), column_major.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t b = 0; b < blocks; ++b) {
      ASSERT_EQ(column_major[static_cast<size_t>(b * rows + r)],
                row_major[static_cast<size_t>(r * blocks + b)])
          << r << "," << b;
    }
  }
}

// Column-major 1x128 scales are the row-major ones transposed in memory (q's [K-blocks][rows],
// qᵀ's [row blocks][cols]); q and qᵀ are the same bytes. Partial blocks on both edges, with q
// alone, qᵀ alone and both.
TEST(CpuQuantizeTest, ColumnMajorBlockScalesAreTheRowMajorOnesTransposed) {
  const int64_t rows = 131, cols = 300;  // 3 K-blocks of q, 2 of qᵀ, the last ones partial
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor input,
                           RandomTensor(DType::kBF16, {rows, cols}, Distribution::kHeavyTailed, 8));
  for (int outputs = 0; outputs < 3; ++outputs) {
    SCOPED_TRACE(outputs);
    QuantizeSpec spec;
    spec.input_type = DType::kBF16;
    spec.rows = rows;
    spec.cols = cols;
    spec.granularity = ScaleGranularity::k1x128;
    spec.row_major = outputs != 1;
    spec.transposed = outputs != 0;
    FP8_ASSERT_OK_AND_ASSIGN(Quantized row_major, QuantizeAll(spec, input.data()));
    spec.scale_layout = ScaleLayout::kColumnMajor;
    FP8_ASSERT_OK_AND_ASSIGN(Quantized column_major, QuantizeAll(spec, input.data()));
    EXPECT_EQ(column_major.q, row_major.q);
    EXPECT_EQ(column_major.q_transposed, row_major.q_transposed);
    ExpectTransposedInMemory(column_major.scale, row_major.scale, rows, 3);
    if (spec.transposed) {
      ExpectTransposedInMemory(column_major.transposed_scale, row_major.transposed_scale, cols, 2);
    }
  }
}

TEST(CpuQuantizeTest, SwiGluQuantisesTheProductItsFrameworkWouldStore) {
  // SiLU(0)·5 = 0, SiLU(20)·3 = 60 exactly (1 + e^-20 rounds to 1), SiLU(-100)·7 = -0, and
  // SiLU(1)·2 = 2 / (1 + e^-1) = 1.4621172 -> bf16 1.4609375.
  const std::vector<uint16_t> gate = Bf16({0, 20, -100, 1}), up = Bf16({5, 3, 7, 2});
  QuantizeSpec spec;
  spec.rows = 1;
  spec.cols = 4;
  spec.compute_amax = true;
  spec.activation = QuantizeActivation::kSwiGlu;
  FP8_ASSERT_OK_AND_ASSIGN(Quantized result, QuantizeAll(spec, gate.data(), nullptr, up.data()));
  EXPECT_EQ(result.amax, 60.0f);
  EXPECT_EQ(result.scale, std::vector<float>{60.0f / 448.0f});
  // 1.4609375 · 448 / 60 = 10.9 -> e4m3 11 (step 1 in [8, 16)); 448 / 60 is taken as the f32
  // reciprocal of the scale.
  EXPECT_EQ(Decode(result.q, DType::kF8E4M3FN), (std::vector<float>{0, 448, 0, 11}));
}

TEST(CpuQuantizeTest, GeluQuantisesTheActivationItsFrameworkWouldStore) {
  // GELU(0) = 0, GELU(6) = 6 exactly (1 + e^-y rounds to 1), GELU(-12) = -0, and
  // GELU(1) = 0.8411920 -> bf16 0.83984375.
  const std::vector<uint16_t> input = Bf16({0, 6, -12, 1});
  QuantizeSpec spec;
  spec.rows = 1;
  spec.cols = 4;
  spec.compute_amax = true;
  spec.activation = QuantizeActivation::kGelu;
  FP8_ASSERT_OK_AND_ASSIGN(Quantized result, QuantizeAll(spec, input.data()));
  EXPECT_EQ(result.amax, 6.0f);
  EXPECT_EQ(result.scale, std::vector<float>{6.0f / 448.0f});
  // 0.83984375 · 448 / 6 = 62.7 -> e4m3 64 (step 4 in [32, 64)).
  EXPECT_EQ(Decode(result.q, DType::kF8E4M3FN), (std::vector<float>{0, 448, 0, 64}));
}

// The activation applied on the way in equals quantising what the framework would have stored
// (the activation in f32, rounded to bf16), in every granularity and mode.
void ExpectActivationEqualsQuantisingItsStoredValue(QuantizeActivation activation) {
  const int64_t rows = 131, cols = 200;  // partial blocks both ways
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor gate,
                           RandomTensor(DType::kBF16, {rows, cols}, Distribution::kSymmetric, 11));
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor up,
                           RandomTensor(DType::kBF16, {rows, cols}, Distribution::kSymmetric, 12));
  const bool swiglu = activation == QuantizeActivation::kSwiGlu;
  // x as a framework's elementwise kernel would write it: f32, rounded to bf16.
  std::vector<uint16_t> product(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows * cols; ++i) {
    const float g = static_cast<float>(LoadElement(DType::kBF16, gate.data(), i));
    const float u = static_cast<float>(LoadElement(DType::kBF16, up.data(), i));
    product[static_cast<size_t>(i)] =
        EncodeBF16(swiglu ? activation_rule::SwiGlu(g, u) : activation_rule::Gelu(g));
  }
  const float unusable = 0.0f, given = 0.0123f;
  for (ScaleGranularity granularity : {ScaleGranularity::kTensor, ScaleGranularity::kRow,
                                       ScaleGranularity::k1x128, ScaleGranularity::k128x128}) {
    for (int mode = 0; mode < 4; ++mode) {  // q, qᵀ, both with the amax, given scales
      const bool given_scale = mode >= 2 && granularity == ScaleGranularity::kTensor;
      if (mode >= 2 && !given_scale) continue;
      SCOPED_TRACE(std::string(ScaleGranularityName(granularity)) + " mode " +
                   std::to_string(mode));
      QuantizeSpec spec;
      spec.output_type = mode == 1 ? DType::kF8E5M2 : DType::kF8E4M3FN;
      spec.rows = rows;
      spec.cols = cols;
      spec.granularity = granularity;
      spec.row_major = mode != 1;
      spec.transposed = mode != 0;
      spec.compute_amax = mode >= 1;
      spec.given_scale = given_scale;
      const float* scale = mode == 2 ? &unusable : mode == 3 ? &given : nullptr;
      FP8_ASSERT_OK_AND_ASSIGN(Quantized plain, QuantizeAll(spec, product.data(), scale));
      spec.activation = activation;
      FP8_ASSERT_OK_AND_ASSIGN(Quantized fused,
                               QuantizeAll(spec, gate.data(), scale, swiglu ? up.data() : nullptr));
      EXPECT_EQ(fused.q, plain.q);
      EXPECT_EQ(fused.q_transposed, plain.q_transposed);
      EXPECT_EQ(fused.scale, plain.scale);
      EXPECT_EQ(fused.transposed_scale, plain.transposed_scale);
      EXPECT_EQ(fused.amax, plain.amax);
      if (spec.compute_amax) {
        EXPECT_GT(fused.amax, 1.0f);  // inputs in [-4, 4]: products up to ~16, GELU to ~4
      }
    }
  }
}

TEST(CpuQuantizeTest, SwiGluEqualsQuantisingTheRoundedProductInEveryMode) {
  ExpectActivationEqualsQuantisingItsStoredValue(QuantizeActivation::kSwiGlu);
}

TEST(CpuQuantizeTest, GeluEqualsQuantisingTheRoundedActivationInEveryMode) {
  ExpectActivationEqualsQuantisingItsStoredValue(QuantizeActivation::kGelu);
}

}  // namespace
}  // namespace fp8dot
