// Scale layouts (OperandScale::minor_to_major) on the GPU: scales handed in cuBLASLt's own
// layout are read in place (no reordering launch), every other layout is reordered, and both
// give the reference result. The scales differ along every row and K block, so a scale read in
// the wrong order shows up as an error.
#include "cuda/cuda_test_util.h"
#include "status_matchers.h"

namespace fp8dot {
namespace {

using testing::ExpectMatchesReference;
using testing::WithLayout;

constexpr DType kE4M3 = DType::kF8E4M3FN;
constexpr DType kE5M2 = DType::kF8E5M2;

struct LayoutCase {
  ScaleMode lhs_mode, rhs_mode;
  std::vector<int64_t> lhs_layout, rhs_layout;  // empty: row-major
  int64_t m, n, k;
  bool lhs_in_place, rhs_in_place;  // expected on a native FP8 pair
};

StatusOr<DotProblem> StructuredProblem(const LayoutCase& c, DType lhs_type, DType rhs_type,
                                       uint64_t seed) {
  DotProblemOptions o;
  o.m = c.m;
  o.n = c.n;
  o.k = c.k;
  o.lhs_type = lhs_type;
  o.rhs_type = rhs_type;
  o.output_type = DType::kF32;
  o.lhs_scale_mode = c.lhs_mode;
  o.rhs_scale_mode = c.rhs_mode;
  o.precision_config.operand_precision = {Precision::kHighest, Precision::kHighest};
  o.seed = seed;
  FP8_ASSIGN_OR_RETURN(DotProblem p, MakeDotProblem(o));
  // Scale (i, j) = 2^((3i + 5j) % 7 - 3): every row and every K-block different.
  for (auto [tensor, scale, layout] :
       {std::tuple{&p.lhs_scale, &p.spec.lhs_scale, &c.lhs_layout},
        std::tuple{&p.rhs_scale, &p.spec.rhs_scale, &c.rhs_layout}}) {
    HostTensor& s = **tensor;
    for (int64_t i = 0; i < s.dim(0); ++i) {
      for (int64_t j = 0; j < s.dim(1); ++j) {
        s.Set({i, j}, std::ldexp(1.0, static_cast<int>((3 * i + 5 * j) % 7) - 3));
      }
    }
    if (!layout->empty()) {
      FP8_ASSIGN_OR_RETURN(s, WithLayout(s, *layout));
      scale->minor_to_major = *layout;
    }
  }
  return p;
}

const std::vector<int64_t> kColumnMajor = {0, 1};
const std::vector<int64_t> kRowMajor = {1, 0};

const LayoutCase kCases[] = {
    // lhs 1x128 M-major (cuBLASLt's VEC128 layout): in place; rhs 1x128 row-major: in place.
    {ScaleMode::kBlock1x128, ScaleMode::kBlock1x128, kColumnMajor, {}, 256, 384, 512, true, true},
    // The other way round: both reordered.
    {ScaleMode::kBlock1x128, ScaleMode::kBlock1x128, kRowMajor, kColumnMajor, 256, 384, 512, false,
     false},
    // rhs 128x128 [K/128, N/128] column-major with K/128 = 4: cuBLASLt's BLK128x128 layout.
    {ScaleMode::kBlock1x128, ScaleMode::kBlock128x128, kColumnMajor, kColumnMajor, 256, 384, 512,
     true, true},
    // K/128 = 3: cuBLASLt's 128x128 rows are padded to 4, so it is reordered whatever the layout.
    {ScaleMode::kBlock1x128, ScaleMode::kBlock128x128, kColumnMajor, kColumnMajor, 128, 256, 384,
     true, false},
    // lhs 128x128 row-major is cuBLASLt's layout (K/128 = 4); column-major is not.
    {ScaleMode::kBlock128x128, ScaleMode::kBlock1x128, {}, {}, 256, 384, 512, true, true},
    {ScaleMode::kBlock128x128,
     ScaleMode::kBlock1x128,
     kColumnMajor,
     {},
     256,
     384,
     512,
     false,
     true},
    // M = 64 (a single 1x128 K block would make every layout the same: K/128 = 2 here).
    {ScaleMode::kBlock1x128, ScaleMode::kBlock1x128, kColumnMajor, {}, 64, 256, 256, true, true},
};

std::string CaseLabel(const LayoutCase& c, DType lhs, DType rhs) {
  auto layout = [](const std::vector<int64_t>& l) {
    return l.empty() ? std::string("default") : DimsToString(l);
  };
  return StrFormat("%s x %s, scales %s %s x %s %s, M=%lld N=%lld K=%lld", DTypeName(lhs),
                   DTypeName(rhs), ScaleModeName(c.lhs_mode), layout(c.lhs_layout).c_str(),
                   ScaleModeName(c.rhs_mode), layout(c.rhs_layout).c_str(),
                   static_cast<long long>(c.m), static_cast<long long>(c.n),
                   static_cast<long long>(c.k));
}

// The Explain() line of one operand's scale.
std::string ScaleLine(const std::string& explain, const char* operand) {
  const size_t at = explain.find(std::string(operand) + " scale:");
  if (at == std::string::npos) return "";
  return explain.substr(at, explain.find('\n', at) - at);
}

TEST(CudaScaleLayoutTest, ScalesInCublasLtLayoutAreReadInPlaceOthersReordered) {
  FP8_SKIP_WITHOUT_GPU();
  uint64_t seed = 900;
  for (const LayoutCase& c : kCases) {
    const std::string label = CaseLabel(c, kE4M3, kE4M3);
    FP8_ASSERT_OK_AND_ASSIGN(const DotProblem p, StructuredProblem(c, kE4M3, kE4M3, ++seed));
    ExpectMatchesReference(p, label);
    // cuBLASLt's layouts: auto takes the own kernel at small M, which reads every layout in place.
    CudaDotOptions options;
    options.engine = GemmEngine::kCublasLt;
    StatusOr<std::unique_ptr<CudaDotPlan>> plan = CudaDotPlan::Create(p.spec, options);
    FP8_ASSERT_OK(plan.status());
    const std::string explain = (*plan)->Explain();
    for (auto [operand, in_place] : {std::pair{"lhs", c.lhs_in_place}, {"rhs", c.rhs_in_place}}) {
      const std::string line = ScaleLine(explain, operand);
      EXPECT_NE(line.find(in_place ? "read in place" : "reordered on the device"),
                std::string::npos)
          << label << ": " << operand << " scale should be "
          << (in_place ? "read in place" : "reordered") << "\n"
          << explain;
    }
  }
}

TEST(CudaScaleLayoutTest, AnyScaleLayoutOnE4M3xE5M2AndTheUpcast) {
  FP8_SKIP_WITHOUT_GPU();
  uint64_t seed = 950;
  for (auto [lhs, rhs] : {std::pair{kE4M3, kE5M2}, std::pair{kE5M2, kE5M2}}) {
    for (const LayoutCase& c : kCases) {
      FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, StructuredProblem(c, lhs, rhs, ++seed));
      ExpectMatchesReference(std::move(p), CaseLabel(c, lhs, rhs));
    }
  }
}

TEST(CudaScaleLayoutTest, PlanCacheKeysOnTheScaleLayout) {
  FP8_SKIP_WITHOUT_GPU();
  const LayoutCase& c = kCases[0];
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem column_major, StructuredProblem(c, kE4M3, kE4M3, 990));
  DotSpec row_major = column_major.spec;
  row_major.lhs_scale.minor_to_major.clear();
  DotSpec explicit_row_major = row_major;
  explicit_row_major.lhs_scale.minor_to_major = kRowMajor;
  StatusOr<CudaDotPlan*> a = GetCachedCudaDotPlan(column_major.spec);
  StatusOr<CudaDotPlan*> b = GetCachedCudaDotPlan(row_major);
  StatusOr<CudaDotPlan*> b2 = GetCachedCudaDotPlan(explicit_row_major);
  FP8_ASSERT_OK(a.status());
  FP8_ASSERT_OK(b.status());
  FP8_ASSERT_OK(b2.status());
  EXPECT_NE(*a, *b);
  EXPECT_EQ(*b, *b2);
  // The host API takes the column-major scale tensors and gives the reference's answer.
  StatusOr<DotResult> gpu = CudaDot(column_major.spec, column_major.arguments());
  FP8_ASSERT_OK(gpu.status());
  StatusOr<HostTensor> exact = ReferenceDotExact(column_major.spec, column_major.arguments());
  FP8_ASSERT_OK(exact.status());
  StatusOr<ErrorStats> error = CompareToReference(gpu->output, *exact, 1.0);
  FP8_ASSERT_OK(error.status());
  EXPECT_LE(error->relative_frobenius, 8.0 * std::ldexp(1.0, -13));
  // A row-major scale tensor against the column-major spec is a clear error.
  DotProblem mismatched = column_major;
  mismatched.lhs_scale = mismatched.lhs_scale->ToRowMajor();
  StatusOr<DotResult> bad = CudaDot(column_major.spec, mismatched.arguments());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("lhs scale"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace fp8dot
