// OperandScale::minor_to_major: scale tensors in a non-row-major layout (e.g. the M-major lhs
// 1x128 layout cuBLASLt reads) are validated, checked against the arguments, and give exactly
// the result of the same scales in row-major on every CPU backend.
#include <gtest/gtest.h>

#include <cstring>

#include "cpu/cpu_test_util.h"
#include "status_matchers.h"

namespace fp8dot {
namespace {

// The same logical values as `tensor`, stored in `layout`.
StatusOr<HostTensor> WithLayout(const HostTensor& tensor, const std::vector<int64_t>& layout) {
  FP8_ASSIGN_OR_RETURN(HostTensor out, HostTensor::Create(tensor.dtype(), tensor.dims(), layout));
  std::vector<int64_t> index(tensor.dims().size(), 0);
  for (int64_t i = 0; i < tensor.element_count(); ++i) {
    out.Set(index, tensor.Get(index));
    for (int64_t d = tensor.rank() - 1; d >= 0; --d) {
      if (++index[static_cast<size_t>(d)] < tensor.dim(d)) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
  return out;
}

struct ModePair {
  ScaleMode lhs, rhs;
};

StatusOr<DotProblem> MakeProblem(ModePair modes, uint64_t seed) {
  DotProblemOptions options;
  options.m = 256;
  options.n = 256;
  options.k = 512;  // 4 K blocks: a column-major [M, 4] differs from row-major everywhere
  options.output_type = DType::kF32;
  options.precision_config.operand_precision = {Precision::kHighest, Precision::kHighest};
  options.lhs_scale_mode = modes.lhs;
  options.rhs_scale_mode = modes.rhs;
  options.seed = seed;
  return MakeDotProblem(options);
}

// `problem` with both scales moved to column-major ({0, 1}), spec included.
StatusOr<DotProblem> ColumnMajorScales(const DotProblem& problem) {
  DotProblem out = problem;
  for (auto [tensor, scale] : {std::pair{&out.lhs_scale, &out.spec.lhs_scale},
                               std::pair{&out.rhs_scale, &out.spec.rhs_scale}}) {
    if (!tensor->has_value() || (*tensor)->rank() != 2) continue;
    FP8_ASSIGN_OR_RETURN(*tensor, WithLayout(**tensor, {0, 1}));
    scale->minor_to_major = {0, 1};
  }
  return out;
}

TEST(ScaleLayoutTest, ColumnMajorScalesGiveTheRowMajorResultOnEveryCpuBackend) {
  for (ModePair modes : {ModePair{ScaleMode::kBlock1x128, ScaleMode::kBlock1x128},
                         ModePair{ScaleMode::kBlock1x128, ScaleMode::kBlock128x128},
                         ModePair{ScaleMode::kBlock128x128, ScaleMode::kBlock1x128}}) {
    SCOPED_TRACE(std::string(ScaleModeName(modes.lhs)) + " x " + ScaleModeName(modes.rhs));
    FP8_ASSERT_OK_AND_ASSIGN(const DotProblem row_major, MakeProblem(modes, 11));
    FP8_ASSERT_OK_AND_ASSIGN(const DotProblem column_major, ColumnMajorScales(row_major));
    ASSERT_NE(column_major.lhs_scale->minor_to_major(), row_major.lhs_scale->minor_to_major());
    // The bytes differ (so a backend ignoring the layout would fail), the values do not.
    ASSERT_NE(0, std::memcmp(column_major.lhs_scale->data(), row_major.lhs_scale->data(),
                             static_cast<size_t>(row_major.lhs_scale->size_in_bytes())));

    using Backend = StatusOr<DotResult> (*)(const DotSpec&, const DotArguments&);
    for (auto [name, backend] :
         {std::pair<const char*, Backend>{"reference", &ReferenceDot},
          std::pair<const char*, Backend>{"reference-exact",
                                          [](const DotSpec&s, const DotArguments&a) {
                                            StatusOr<HostTensor> t = ReferenceDotExact(s, a);
                                            if (!t.ok()) return StatusOr<DotResult>(t.status());
                                            DotResult r;
                                            r.output = *std::move(t);
                                            return StatusOr<DotResult>(std::move(r));
                                          }},
          std::pair<const char*, Backend>{"blas", &BlasDot},
          std::pair<const char*, Backend>{"emulated", [](const DotSpec&s, const DotArguments&a) {
                                            return EmulatedDot(s, a);
                                          }}}) {
      SCOPED_TRACE(name);
      StatusOr<DotResult> expected = backend(row_major.spec, row_major.arguments());
      StatusOr<DotResult> actual = backend(column_major.spec, column_major.arguments());
      ASSERT_TRUE(expected.ok()) << expected.status().message();
      ASSERT_TRUE(actual.ok()) << actual.status().message();
      ASSERT_EQ(actual->output.dims(), expected->output.dims());
      EXPECT_EQ(0, std::memcmp(actual->output.data(), expected->output.data(),
                               static_cast<size_t>(expected->output.size_in_bytes())));
    }
  }
}

TEST(ScaleLayoutTest, SpecFromArgumentsTakesTheScaleLayout) {
  FP8_ASSERT_OK_AND_ASSIGN(const DotProblem source,
                           MakeProblem({ScaleMode::kBlock1x128, ScaleMode::kBlock1x128}, 3));
  FP8_ASSERT_OK_AND_ASSIGN(const DotProblem problem, ColumnMajorScales(source));
  DotSpec spec = problem.spec;
  spec.lhs_scale.minor_to_major.clear();
  spec.rhs_scale.minor_to_major.clear();
  spec = SpecFromArguments(problem.arguments(), spec);
  EXPECT_EQ(spec.lhs_scale.minor_to_major, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(spec.rhs_scale.minor_to_major, (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE(CheckArgumentsMatchSpec(spec, problem.arguments()).ok());

  // Row-major scale tensors keep the empty (row-major) layout in the spec.
  FP8_ASSERT_OK_AND_ASSIGN(const DotProblem row_major,
                           MakeProblem({ScaleMode::kBlock1x128, ScaleMode::kBlock1x128}, 3));
  DotSpec row_spec = SpecFromArguments(row_major.arguments(), row_major.spec);
  EXPECT_TRUE(row_spec.lhs_scale.minor_to_major.empty());
  EXPECT_TRUE(row_spec.rhs_scale.minor_to_major.empty());
}

TEST(ScaleLayoutTest, ExplicitRowMajorEqualsTheDefault) {
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem problem,
                           MakeProblem({ScaleMode::kBlock1x128, ScaleMode::kBlock128x128}, 5));
  problem.spec.lhs_scale.minor_to_major = {1, 0};
  problem.spec.rhs_scale.minor_to_major = {1, 0};
  EXPECT_TRUE(ValidateDotSpec(problem.spec).ok());
  EXPECT_TRUE(CheckArgumentsMatchSpec(problem.spec, problem.arguments()).ok());
}

TEST(ScaleLayoutTest, LayoutThatIsNotAPermutationIsRejected) {
  FP8_ASSERT_OK_AND_ASSIGN(const DotProblem problem,
                           MakeProblem({ScaleMode::kBlock1x128, ScaleMode::kBlock1x128}, 7));
  for (std::vector<int64_t> layout :
       {std::vector<int64_t>{0, 0}, std::vector<int64_t>{0}, std::vector<int64_t>{0, 2},
        std::vector<int64_t>{2, 1, 0}, std::vector<int64_t>{-1, 0}}) {
    DotSpec spec = problem.spec;
    spec.lhs_scale.minor_to_major = layout;
    StatusOr<CanonicalDot> dot = ValidateDotSpec(spec);
    ASSERT_FALSE(dot.ok()) << DimsToString(layout);
    EXPECT_EQ(dot.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(dot.status().message().find("lhs scale"), std::string::npos)
        << dot.status().message();
    EXPECT_NE(dot.status().message().find("layout"), std::string::npos) << dot.status().message();
  }
  // Tensor and outer-vector scales take only their trivial layouts.
  DotSpec spec = problem.spec;
  spec.lhs_scale = {ScaleMode::kTensor, {}, {0}};
  spec.rhs_scale = {ScaleMode::kTensor, {}, {}};
  EXPECT_FALSE(ValidateDotSpec(spec).ok());
  spec.lhs_scale = {ScaleMode::kOuterVector, {256}, {0}};
  spec.rhs_scale = {ScaleMode::kOuterVector, {256}, {0}};
  EXPECT_TRUE(ValidateDotSpec(spec).ok());
}

TEST(ScaleLayoutTest, ScaleTensorLayoutMustMatchTheSpec) {
  FP8_ASSERT_OK_AND_ASSIGN(const DotProblem row_major,
                           MakeProblem({ScaleMode::kBlock1x128, ScaleMode::kBlock1x128}, 9));
  FP8_ASSERT_OK_AND_ASSIGN(const DotProblem column_major, ColumnMajorScales(row_major));
  // Column-major tensors against a row-major spec, and the other way round.
  Status status = CheckArgumentsMatchSpec(row_major.spec, column_major.arguments());
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("lhs scale is f32[256,4]{0,1}"), std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("expects f32[256,4]{1,0}"), std::string::npos)
      << status.message();
  status = CheckArgumentsMatchSpec(column_major.spec, row_major.arguments());
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("expects f32[256,4]{0,1}"), std::string::npos)
      << status.message();
  EXPECT_FALSE(ReferenceDot(column_major.spec, row_major.arguments()).ok());
  EXPECT_TRUE(CheckArgumentsMatchSpec(column_major.spec, column_major.arguments()).ok());
}

}  // namespace
}  // namespace fp8dot
