// DotSpecKey: the one key plans are cached and tuned by. Two specs that differ in any field get
// different keys; a layout keys by the memory it describes (row-major given or not, the
// spellings of a layout with size-1 dims alike).
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "fp8dot/dot_spec.h"

namespace fp8dot {
namespace {

DotSpec BaseSpec() {
  DotSpec spec;
  spec.lhs = {DType::kF8E4M3FN, {64, 256}, {}};
  spec.rhs = {DType::kF8E4M3FN, {256, 128}, {}};
  spec.output_type = DType::kBF16;
  spec.lhs_scale = {ScaleMode::kTensor, {}, {}};
  spec.rhs_scale = {ScaleMode::kTensor, {}, {}};
  return spec;
}

TEST(DotSpecKeyTest, EveryFieldChangesTheKey) {
  const std::vector<std::pair<const char*, std::function<void(DotSpec&)>>> edits = {
      {"lhs type", [](DotSpec& s) { s.lhs.dtype = DType::kF8E5M2; }},
      {"lhs layout",
       [](DotSpec& s) {
         s.lhs.minor_to_major = {0, 1};
       }},
      {"rhs dims",
       [](DotSpec& s) {
         s.rhs.dims = {256, 64};
       }},
      {"contracting dims",
       [](DotSpec& s) { s.dimension_numbers.rhs_contracting_dimensions = {1}; }},
      {"batch dims", [](DotSpec& s) { s.dimension_numbers.lhs_batch_dimensions = {0}; }},
      {"lhs precision",
       [](DotSpec& s) { s.precision_config.operand_precision[0] = Precision::kHighest; }},
      {"rhs precision",
       [](DotSpec& s) { s.precision_config.operand_precision[1] = Precision::kHigh; }},
      {"algorithm",
       [](DotSpec& s) { s.precision_config.algorithm = Algorithm::kAnyF8AnyF8F32FastAccum; }},
      {"output type", [](DotSpec& s) { s.output_type = DType::kF32; }},
      {"lhs scale mode",
       [](DotSpec& s) {
         s.lhs_scale = {ScaleMode::kBlock1x128, {64, 2}, {}};
       }},
      {"rhs scale layout",
       [](DotSpec& s) {
         s.rhs_scale = {ScaleMode::kBlock128x128, {2, 1}, {0, 1}};
       }},
      {"alpha", [](DotSpec& s) { s.alpha = 0.5; }},
      {"beta", [](DotSpec& s) { s.beta = 1.0; }},
      {"C",
       [](DotSpec& s) {
         s.c = TensorSpec{DType::kBF16, {64, 128}, {}};
       }},
      {"epilogue", [](DotSpec& s) { s.epilogue = Epilogue::kRelu; }},
      {"bias",
       [](DotSpec& s) {
         s.bias = TensorSpec{DType::kBF16, {128}, {}};
       }},
      {"output scale", [](DotSpec& s) { s.output_scale = true; }},
      {"amax", [](DotSpec& s) { s.compute_amax = true; }},
  };
  std::set<std::string> keys = {DotSpecKey(BaseSpec())};
  for (const auto& [name, edit] : edits) {
    DotSpec spec = BaseSpec();
    edit(spec);
    EXPECT_TRUE(keys.insert(DotSpecKey(spec)).second) << name << " did not change the key";
  }
}

TEST(DotSpecKeyTest, ARowMajorScaleLayoutKeysTheSameGivenOrNot) {
  DotSpec implicit = BaseSpec();
  implicit.lhs_scale = {ScaleMode::kBlock1x128, {64, 2}, {}};
  DotSpec given = implicit;
  given.lhs_scale.minor_to_major = {1, 0};
  EXPECT_EQ(DotSpecKey(implicit), DotSpecKey(given));
  EXPECT_EQ(DotSpecKey(BaseSpec()), DotSpecKey(BaseSpec()));
}

TEST(DotSpecKeyTest, TwoSpellingsOfOneLayoutKeyTheSame) {
  // [64, 1] and [1, 128] scales and a [1, 256] lhs: {0, 1} and {1, 0} are the same memory.
  DotSpec row_major = BaseSpec();
  row_major.lhs = {DType::kF8E4M3FN, {1, 256}, {}};
  row_major.lhs_scale = {ScaleMode::kBlock1x128, {1, 2}, {}};
  row_major.rhs_scale = {ScaleMode::kBlock1x128, {2, 128}, {}};
  DotSpec spelled = row_major;
  spelled.lhs.minor_to_major = {0, 1};
  spelled.lhs_scale.minor_to_major = {0, 1};
  EXPECT_EQ(DotSpecKey(row_major), DotSpecKey(spelled));

  DotSpec column = BaseSpec();  // M = 64, K = 128: the lhs 1x128 scale is [64, 1]
  column.lhs = {DType::kF8E4M3FN, {64, 128}, {}};
  column.rhs = {DType::kF8E4M3FN, {128, 128}, {}};
  column.lhs_scale = {ScaleMode::kBlock1x128, {64, 1}, {0, 1}};
  DotSpec as_row_major = column;
  as_row_major.lhs_scale.minor_to_major = {1, 0};
  EXPECT_EQ(DotSpecKey(column), DotSpecKey(as_row_major));

  // A layout that really differs still changes the key, and one that is not a permutation
  // keys as given (no crash: keys are made before validation too).
  DotSpec transposed = BaseSpec();
  transposed.lhs_scale = {ScaleMode::kBlock1x128, {64, 2}, {0, 1}};
  DotSpec not_transposed = transposed;
  not_transposed.lhs_scale.minor_to_major = {1, 0};
  EXPECT_NE(DotSpecKey(transposed), DotSpecKey(not_transposed));
  DotSpec invalid = transposed;
  invalid.lhs_scale.minor_to_major = {0, 0};
  EXPECT_NE(DotSpecKey(invalid), DotSpecKey(transposed));
}

}  // namespace
}  // namespace fp8dot
