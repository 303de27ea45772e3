// HloInterpreter: one test per op with values computed by hand or by an independent formula,
// the GEMM custom calls against the dots they came from, the fixtures end to end, and errors.
#include "fp8dot/hlo/interpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "fp8dot/hlo/fp8_gemm_rewriter.h"
#include "fp8dot/hlo/hlo_parser.h"
#include "fp8dot/hlo/hlo_verifier.h"
#include "hlo/hlo_test_util.h"
#include "status_matchers.h"

namespace fp8dot::hlo {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
using P = PrimitiveType;

Value Arr(P type, std::vector<int64_t> dims, std::vector<double> values) {
  return Value::Array(Shape::MakeArray(type, std::move(dims)), std::move(values));
}

std::unique_ptr<HloModule> Parse(const std::string& text) {
  StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "test.hlo");
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return nullptr;
  Status verified = VerifyHloModule(**module);
  EXPECT_TRUE(verified.ok()) << verified.ToString();
  return std::move(*module);
}

StatusOr<Value> Eval(const std::string& text, const std::vector<Value>& args,
                     Backend backend = Backend::kCpuReference) {
  std::unique_ptr<HloModule> module = Parse(text);
  if (module == nullptr) return InvalidArgument("parse failed");
  HloInterpreter interpreter({.dot_backend = backend});
  return interpreter.Evaluate(*module, args);
}

// Evaluates a module whose entry root is an array and returns its elements as doubles (exact
// for integers up to 2^53; tests of larger integers read Value::integers).
std::vector<double> EvalValues(const std::string& text, const std::vector<Value>& args) {
  StatusOr<Value> value = Eval(text, args);
  EXPECT_TRUE(value.ok()) << value.status().ToString();
  return value.ok() ? value->AsDoubles() : std::vector<double>{};
}

// A module with one entry computation: `params` is "p0 = f32[3] parameter(0)\n..." and `body`
// the instructions ending with ROOT.
std::string Module(const std::string& body, const std::string& extra = "") {
  return Substitute(R"(HloModule m
$extra
ENTRY main {
$body
}
)",
                    {{"extra", extra}, {"body", body}});
}

void ExpectValues(const std::vector<double>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(actual[i])) << "element " << i << " = " << actual[i];
    } else {
      EXPECT_EQ(actual[i], expected[i]) << "element " << i;
      EXPECT_EQ(std::signbit(actual[i]), std::signbit(expected[i])) << "sign of element " << i;
    }
  }
}

double F32(double x) { return static_cast<double>(static_cast<float>(x)); }

// ---- Leaves -------------------------------------------------------------------------------------

TEST(InterpreterTest, ParameterAndConstantWithInfAndNan) {
  StatusOr<Value> value = Eval(Module(R"(
  p = s32[] parameter(0)
  c = f32[2,3]{1,0} constant({ {1, 2.5, -3}, {inf, -inf, nan} })
  ROOT t = (s32[], f32[2,3]{1,0}) tuple(p, c))"),
                               {Value::Scalar(P::kS32, 7)});
  ASSERT_TRUE(value.ok()) << value.status().ToString();
  ASSERT_EQ(value->elements.size(), 2u);
  EXPECT_EQ(value->elements[0].integers, (std::vector<int64_t>{7}));
  ExpectValues(value->elements[1].values, {1, 2.5, -3, kInf, -kInf, kNaN});
}

TEST(InterpreterTest, IotaAlongEachDimension) {
  ExpectValues(EvalValues(Module("ROOT i = s32[2,3] iota(), iota_dimension=1"), {}),
               {0, 1, 2, 0, 1, 2});
  ExpectValues(EvalValues(Module("ROOT i = f32[2,3] iota(), iota_dimension=0"), {}),
               {0, 0, 0, 1, 1, 1});
}

// ---- Convert ------------------------------------------------------------------------------------

TEST(InterpreterTest, ConvertFloatToIntTruncatesSaturatesAndZeroesNan) {
  ExpectValues(EvalValues(Module("p = f32[6] parameter(0)\nROOT c = s8[6] convert(p)"),
                          {Arr(P::kF32, {6}, {2.9, -2.9, 300, -300, kNaN, kInf})}),
               {2, -2, 127, -128, 0, 127});
}

TEST(InterpreterTest, ConvertToFp8RoundsToNearestEvenAndOverflowsToNan) {
  // e4m3fn near 0.3: 0.28125 and 0.3125 (spacing 2^-5); 464 is the midpoint of 448 and 480
  // (480 does not exist: 448 is the max) -> NaN under IEEE overflow, like ml_dtypes.
  ExpectValues(EvalValues(Module("p = f32[5] parameter(0)\nROOT c = f8e4m3fn[5] convert(p)"),
                          {Arr(P::kF32, {5}, {0.3, 448, 500, -1e6, 0.001})}),
               {0.3125, 448, kNaN, kNaN, 0.001953125});
  ExpectValues(EvalValues(Module("p = f32[3] parameter(0)\nROOT c = f8e5m2[3] convert(p)"),
                          {Arr(P::kF32, {3}, {1e6, 3.1, -0.0})}),
               {kInf, 3.0, -0.0});
}

TEST(InterpreterTest, ConvertToBf16TiesToEvenAndPredIsNonZero) {
  ExpectValues(EvalValues(Module("p = f32[3] parameter(0)\nROOT c = bf16[3] convert(p)"),
                          {Arr(P::kF32, {3}, {1.00390625, 1.01171875, -2.0})}),
               {1.0, 1.015625, -2.0});
  ExpectValues(EvalValues(Module("p = f32[3] parameter(0)\nROOT c = pred[3] convert(p)"),
                          {Arr(P::kF32, {3}, {0, -0.5, 2})}),
               {0, 1, 1});
}

// ---- Elementwise binary -------------------------------------------------------------------------

std::vector<double> Binary(const std::string& op, P type, std::vector<double> a,
                           std::vector<double> b) {
  const int64_t n = static_cast<int64_t>(a.size());
  return EvalValues(
      Module(Substitute(R"(a = $type[$n] parameter(0)
b = $type[$n] parameter(1)
ROOT r = $type[$n] $op(a, b))",
                        {{"type", PrimitiveTypeName(type)}, {"n", std::to_string(n)}, {"op", op}})),
      {Arr(type, {n}, std::move(a)), Arr(type, {n}, std::move(b))});
}

TEST(InterpreterTest, FloatArithmeticRoundsToF32) {
  ExpectValues(Binary("add", P::kF32, {1, 1e8, 0.1}, {1e-8, 1, 0.2}),
               {1, 1e8, F32(F32(0.1) + F32(0.2))});
  ExpectValues(Binary("subtract", P::kF32, {1, 3}, {0.25, 5}), {0.75, -2});
  ExpectValues(Binary("multiply", P::kF32, {3, 1e30}, {0.5, 1e30}), {1.5, kInf});
  ExpectValues(Binary("divide", P::kF32, {1, 1, -1, 0}, {3, 0, 0, 0}),
               {F32(1.0 / 3.0), kInf, -kInf, kNaN});
  ExpectValues(Binary("remainder", P::kF32, {7, -7, 5.5}, {3, 3, 2}), {1, -1, 1.5});
  ExpectValues(Binary("power", P::kF32, {2, 9, -8}, {10, 0.5, 3}), {1024, 3, -512});
  ExpectValues(Binary("atan2", P::kF32, {1, -1}, {1, 0}), {F32(M_PI / 4), F32(-M_PI / 2)});
}

TEST(InterpreterTest, MaximumAndMinimumPropagateNan) {
  ExpectValues(Binary("maximum", P::kF32, {1, kNaN, -0.0}, {2, 1, 0.0}), {2, kNaN, 0.0});
  ExpectValues(Binary("minimum", P::kF32, {1, 3, -0.0}, {2, kNaN, 0.0}), {1, kNaN, -0.0});
}

TEST(InterpreterTest, Bf16ArithmeticRoundsAfterEachOp) {
  // 1 + 2^-9 is not a bf16: the sum rounds back to 1.
  ExpectValues(Binary("add", P::kBF16, {1, 256}, {0.001953125, 1}), {1, 256});
}

TEST(InterpreterTest, IntegerArithmeticWraps) {
  ExpectValues(Binary("add", P::kS8, {100, -100}, {100, -100}), {-56, 56});
  ExpectValues(Binary("subtract", P::kU8, {0, 5}, {1, 3}), {255, 2});
  ExpectValues(Binary("multiply", P::kS32, {65536, -3}, {65536, 7}), {0, -21});
  ExpectValues(Binary("divide", P::kS32, {7, -7, 5, -2147483648.0}, {2, 2, 0, -1}),
               {3, -3, -1, -2147483648.0});
  ExpectValues(Binary("remainder", P::kS32, {7, -7, 5}, {3, 3, 0}), {1, -1, 5});
  ExpectValues(Binary("power", P::kS32, {3, 2, 2}, {4, -1, 31}), {81, 0, -2147483648.0});
  ExpectValues(Binary("maximum", P::kS32, {3, -4}, {2, 5}), {3, 5});
  ExpectValues(Binary("minimum", P::kU8, {3, 200}, {2, 5}), {2, 5});
}

TEST(InterpreterTest, BitwiseAndShifts) {
  ExpectValues(Binary("and", P::kS32, {12, -1}, {10, 7}), {8, 7});
  ExpectValues(Binary("or", P::kS32, {12, -8}, {3, 1}), {15, -7});
  ExpectValues(Binary("xor", P::kU8, {255, 5}, {15, 5}), {240, 0});
  ExpectValues(Binary("shift-left", P::kS8, {1, 3, 1}, {7, 1, 8}), {-128, 6, 0});
  ExpectValues(Binary("shift-right-logical", P::kS8, {-128, 64, -1}, {1, 2, 8}), {64, 16, 0});
  ExpectValues(Binary("shift-right-arithmetic", P::kS8, {-128, 64, -1, 5}, {1, 2, 8, 9}),
               {-64, 16, -1, 0});
}

TEST(InterpreterTest, LogicalOpsOnPred) {
  ExpectValues(Binary("and", P::kPred, {0, 0, 1, 1}, {0, 1, 0, 1}), {0, 0, 0, 1});
  ExpectValues(Binary("or", P::kPred, {0, 0, 1, 1}, {0, 1, 0, 1}), {0, 1, 1, 1});
  ExpectValues(Binary("xor", P::kPred, {0, 0, 1, 1}, {0, 1, 0, 1}), {0, 1, 1, 0});
  ExpectValues(EvalValues(Module("p = pred[2] parameter(0)\nROOT n = pred[2] not(p)"),
                          {Arr(P::kPred, {2}, {0, 1})}),
               {1, 0});
  ExpectValues(EvalValues(Module("p = s32[2] parameter(0)\nROOT n = s32[2] not(p)"),
                          {Arr(P::kS32, {2}, {0, 5})}),
               {-1, -6});
}

// ---- Compare ------------------------------------------------------------------------------------

TEST(InterpreterTest, CompareAllDirectionsWithNan) {
  const std::vector<double> a = {1, 2, 3, kNaN}, b = {2, 2, 2, kNaN};
  const std::pair<const char*, std::vector<double>> cases[] = {
      {"EQ", {0, 1, 0, 0}}, {"NE", {1, 0, 1, 1}}, {"LT", {1, 0, 0, 0}},
      {"LE", {1, 1, 0, 0}}, {"GT", {0, 0, 1, 0}}, {"GE", {0, 1, 1, 0}}};
  for (const auto& [direction, expected] : cases) {
    SCOPED_TRACE(direction);
    ExpectValues(EvalValues(Module(Substitute(R"(a = f32[4] parameter(0)
b = f32[4] parameter(1)
ROOT c = pred[4] compare(a, b), direction=$direction)",
                                              {{"direction", direction}})),
                            {Arr(P::kF32, {4}, a), Arr(P::kF32, {4}, b)}),
                 expected);
  }
}

TEST(InterpreterTest, CompareTotalOrderOrdersNanAndSignedZero) {
  ExpectValues(
      EvalValues(Module("a = f32[3] parameter(0)\nb = f32[3] parameter(1)\n"
                        "ROOT c = pred[3] compare(a, b), direction=LT, type=TOTALORDER"),
                 {Arr(P::kF32, {3}, {-0.0, 1, kInf}), Arr(P::kF32, {3}, {0.0, kNaN, kNaN})}),
      {1, 1, 1});
  ExpectValues(EvalValues(Module("a = s32[2] parameter(0)\nb = s32[2] parameter(1)\n"
                                 "ROOT c = pred[2] compare(a, b), direction=GE"),
                          {Arr(P::kS32, {2}, {-1, 4}), Arr(P::kS32, {2}, {0, 4})}),
               {0, 1});
}

// ---- Unary math ---------------------------------------------------------------------------------

TEST(InterpreterTest, UnaryMathMatchesLibmRoundedToF32) {
  const std::vector<double> x = {0.5, 1.25, 2.0, 3.75};
  const std::pair<const char*, double (*)(double)> cases[] = {
      {"abs", [](double v) { return std::fabs(v); }},
      {"negate", [](double v) { return -v; }},
      {"exponential", [](double v) { return std::exp(v); }},
      {"exponential-minus-one", [](double v) { return std::expm1(v); }},
      {"log", [](double v) { return std::log(v); }},
      {"log-plus-one", [](double v) { return std::log1p(v); }},
      {"tanh", [](double v) { return std::tanh(v); }},
      {"sqrt", [](double v) { return std::sqrt(v); }},
      {"rsqrt", [](double v) { return 1 / std::sqrt(v); }},
      {"cbrt", [](double v) { return std::cbrt(v); }},
      {"floor", [](double v) { return std::floor(v); }},
      {"ceil", [](double v) { return std::ceil(v); }},
      {"sign", [](double v) { return v > 0 ? 1.0 : -1.0; }},
      {"cosine", [](double v) { return std::cos(v); }},
      {"sine", [](double v) { return std::sin(v); }},
      {"logistic", [](double v) { return 1 / (1 + std::exp(-v)); }},
      {"erf", [](double v) { return std::erf(v); }},
  };
  for (const auto& [op, fn] : cases) {
    SCOPED_TRACE(op);
    std::vector<double> expected;
    for (double v : x) expected.push_back(F32(fn(v)));
    ExpectValues(EvalValues(Module(Substitute(R"(p = f32[4] parameter(0)
ROOT r = f32[4] $op(p))",
                                              {{"op", op}})),
                            {Arr(P::kF32, {4}, x)}),
                 expected);
  }
}

TEST(InterpreterTest, RoundingModesSignAndIsFinite) {
  const Value x = Arr(P::kF32, {5}, {2.5, -0.5, 3.5, -2.5, 0.0});
  ExpectValues(
      EvalValues(Module("p = f32[5] parameter(0)\nROOT r = f32[5] round-nearest-even(p)"), {x}),
      {2, -0.0, 4, -2, 0});
  ExpectValues(
      EvalValues(Module("p = f32[5] parameter(0)\nROOT r = f32[5] round-nearest-afz(p)"), {x}),
      {3, -1, 4, -3, 0});
  ExpectValues(EvalValues(Module("p = f32[4] parameter(0)\nROOT r = f32[4] sign(p)"),
                          {Arr(P::kF32, {4}, {-3, 0.0, -0.0, kNaN})}),
               {-1, 0.0, -0.0, kNaN});
  ExpectValues(EvalValues(Module("p = f32[4] parameter(0)\nROOT r = pred[4] is-finite(p)"),
                          {Arr(P::kF32, {4}, {1, kInf, -kInf, kNaN})}),
               {1, 0, 0, 0});
  ExpectValues(EvalValues(Module("p = s32[2] parameter(0)\nROOT r = s32[2] abs(p)"),
                          {Arr(P::kS32, {2}, {-5, -2147483648.0})}),
               {5, -2147483648.0});
}

// ---- Select, clamp, reduce-precision ------------------------------------------------------------

TEST(InterpreterTest, SelectPicksByPredicate) {
  ExpectValues(EvalValues(Module("p = pred[3] parameter(0)\na = f32[3] parameter(1)\n"
                                 "b = f32[3] parameter(2)\nROOT s = f32[3] select(p, a, b)"),
                          {Arr(P::kPred, {3}, {1, 0, 1}), Arr(P::kF32, {3}, {1, 2, 3}),
                           Arr(P::kF32, {3}, {-1, -2, -3})}),
               {1, -2, 3});
}

TEST(InterpreterTest, ClampWithScalarBounds) {
  ExpectValues(EvalValues(Module("lo = f32[] constant(-448)\nhi = f32[] constant(448)\n"
                                 "p = f32[4] parameter(0)\nROOT c = f32[4] clamp(lo, p, hi)"),
                          {Arr(P::kF32, {4}, {-1000, 3, 1000, kInf})}),
               {-448, 3, 448, 448});
}

TEST(InterpreterTest, ReducePrecisionRoundsMantissaAndExponent) {
  // To f16's 5 exponent / 10 mantissa bits: 1 + 2^-11 ties to 1; 65520 overflows; 1e-6 is below
  // the smallest normal (2^-14) and flushes to zero.
  ExpectValues(
      EvalValues(Module("p = f32[4] parameter(0)\n"
                        "ROOT r = f32[4] reduce-precision(p), exponent_bits=5, mantissa_bits=10"),
                 {Arr(P::kF32, {4}, {1.00048828125, 1.00146484375, 65520, 1e-6})}),
      {1.0, 1.001953125, kInf, 0.0});
}

// ---- Data movement ------------------------------------------------------------------------------

TEST(InterpreterTest, BroadcastMapsOperandDims) {
  ExpectValues(EvalValues(Module("p = f32[3] parameter(0)\n"
                                 "ROOT b = f32[2,3] broadcast(p), dimensions={1}"),
                          {Arr(P::kF32, {3}, {1, 2, 3})}),
               {1, 2, 3, 1, 2, 3});
  ExpectValues(EvalValues(Module("p = f32[2] parameter(0)\n"
                                 "ROOT b = f32[2,3] broadcast(p), dimensions={0}"),
                          {Arr(P::kF32, {2}, {1, 2})}),
               {1, 1, 1, 2, 2, 2});
}

TEST(InterpreterTest, ReshapeTransposeCopyReverse) {
  const Value x = Arr(P::kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectValues(EvalValues(Module("p = f32[2,3] parameter(0)\nROOT r = f32[3,2] reshape(p)"), {x}),
               {1, 2, 3, 4, 5, 6});
  ExpectValues(EvalValues(Module("p = f32[2,3] parameter(0)\n"
                                 "ROOT t = f32[3,2] transpose(p), dimensions={1,0}"),
                          {x}),
               {1, 4, 2, 5, 3, 6});
  ExpectValues(EvalValues(Module("p = f32[2,3] parameter(0)\nROOT c = f32[2,3]{0,1} copy(p)"), {x}),
               {1, 2, 3, 4, 5, 6});
  ExpectValues(EvalValues(Module("p = f32[2,3] parameter(0)\n"
                                 "ROOT r = f32[2,3] reverse(p), dimensions={1}"),
                          {x}),
               {3, 2, 1, 6, 5, 4});
}

TEST(InterpreterTest, TransposeOfRank3) {
  // out[i][j][k] = in[k][i][j] with dimensions={2,0,1}? No: output dim d is operand dim perm[d].
  // in: [2,1,3] -> out dims [3,2,1] with perm {2,0,1}: out[c][a][b] = in[a][b][c].
  std::vector<double> in = {1, 2, 3, 4, 5, 6};  // in[a][0][c] = 1 + 3a + c
  std::vector<double> expected;
  for (int c = 0; c < 3; ++c)
    for (int a = 0; a < 2; ++a) expected.push_back(1 + 3 * a + c);
  ExpectValues(EvalValues(Module("p = f32[2,1,3] parameter(0)\n"
                                 "ROOT t = f32[3,2,1] transpose(p), dimensions={2,0,1}"),
                          {Arr(P::kF32, {2, 1, 3}, in)}),
               expected);
}

TEST(InterpreterTest, BitcastWithDefaultLayoutsIsAReshape) {
  ExpectValues(EvalValues(Module("p = f32[2,3]{1,0} parameter(0)\nROOT b = f32[6]{0} bitcast(p)"),
                          {Arr(P::kF32, {2, 3}, {1, 2, 3, 4, 5, 6})}),
               {1, 2, 3, 4, 5, 6});
}

TEST(InterpreterTest, BitcastGoesThroughThePhysicalOrder) {
  // t = transpose of x stored column-major ({0,1}): its bytes are x's row-major bytes, so the
  // bitcast to a row-major [2,3] gives x back (XLA's transpose-as-bitcast).
  ExpectValues(EvalValues(Module("p = f32[2,3]{1,0} parameter(0)\n"
                                 "t = f32[3,2]{0,1} transpose(p), dimensions={1,0}\n"
                                 "ROOT b = f32[2,3]{1,0} bitcast(t)"),
                          {Arr(P::kF32, {2, 3}, {1, 2, 3, 4, 5, 6})}),
               {1, 2, 3, 4, 5, 6});
  // A column-major [2,3] parameter viewed as a row-major [3,2]: physical order is column-major.
  ExpectValues(EvalValues(Module("p = f32[2,3]{0,1} parameter(0)\n"
                                 "ROOT b = f32[3,2]{1,0} bitcast(p)"),
                          {Arr(P::kF32, {2, 3}, {1, 2, 3, 4, 5, 6})}),
               {1, 4, 2, 5, 3, 6});
}

TEST(InterpreterTest, SliceWithStrides) {
  std::vector<double> x(24);
  for (int i = 0; i < 24; ++i) x[static_cast<size_t>(i)] = i;  // x[r][c] = 4r + c, [6,4]
  ExpectValues(EvalValues(Module("p = f32[6,4] parameter(0)\n"
                                 "ROOT s = f32[3,2] slice(p), slice={[0:6:2], [1:3]}"),
                          {Arr(P::kF32, {6, 4}, x)}),
               {1, 2, 9, 10, 17, 18});
}

TEST(InterpreterTest, DynamicSliceClampsStartIndices) {
  const Value x = Arr(P::kF32, {3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  const std::string body =
      "p = f32[3,3] parameter(0)\ni = s32[] parameter(1)\nj = s32[] parameter(2)\n"
      "ROOT d = f32[2,2] dynamic-slice(p, i, j), dynamic_slice_sizes={2,2}";
  ExpectValues(EvalValues(Module(body), {x, Value::Scalar(P::kS32, 1), Value::Scalar(P::kS32, 0)}),
               {3, 4, 6, 7});
  // 5 -> 1 and -3 -> 0.
  ExpectValues(EvalValues(Module(body), {x, Value::Scalar(P::kS32, 5), Value::Scalar(P::kS32, -3)}),
               {3, 4, 6, 7});
}

TEST(InterpreterTest, DynamicUpdateSliceClampsStartIndices) {
  const Value x = Arr(P::kF32, {3, 3}, {0, 0, 0, 0, 0, 0, 0, 0, 0});
  const Value u = Arr(P::kF32, {2, 2}, {1, 2, 3, 4});
  const std::string body =
      "p = f32[3,3] parameter(0)\nu = f32[2,2] parameter(1)\ni = s32[] parameter(2)\n"
      "j = s32[] parameter(3)\nROOT d = f32[3,3] dynamic-update-slice(p, u, i, j)";
  ExpectValues(
      EvalValues(Module(body), {x, u, Value::Scalar(P::kS32, 0), Value::Scalar(P::kS32, 1)}),
      {0, 1, 2, 0, 3, 4, 0, 0, 0});
  ExpectValues(
      EvalValues(Module(body), {x, u, Value::Scalar(P::kS32, 9), Value::Scalar(P::kS32, 9)}),
      {0, 0, 0, 0, 1, 2, 0, 3, 4});
}

TEST(InterpreterTest, ConcatenateAlongEachDim) {
  const Value a = Arr(P::kF32, {2, 1}, {1, 2});
  const Value b = Arr(P::kF32, {2, 2}, {3, 4, 5, 6});
  ExpectValues(EvalValues(Module("a = f32[2,1] parameter(0)\nb = f32[2,2] parameter(1)\n"
                                 "ROOT c = f32[2,3] concatenate(a, b), dimensions={1}"),
                          {a, b}),
               {1, 3, 4, 2, 5, 6});
  ExpectValues(EvalValues(Module("a = f32[1,2] parameter(0)\nb = f32[2,2] parameter(1)\n"
                                 "ROOT c = f32[3,2] concatenate(a, b), dimensions={0}"),
                          {Arr(P::kF32, {1, 2}, {1, 2}), b}),
               {1, 2, 3, 4, 5, 6});
}

TEST(InterpreterTest, PadWithInteriorAndNegativePadding) {
  const Value x = Arr(P::kF32, {3}, {1, 2, 3});
  // low 1, high 2, interior 1: [0, 1, 0, 2, 0, 3, 0, 0]
  ExpectValues(EvalValues(Module("p = f32[3] parameter(0)\nz = f32[] constant(0)\n"
                                 "ROOT r = f32[8] pad(p, z), padding=1_2_1"),
                          {x}),
               {0, 1, 0, 2, 0, 3, 0, 0});
  // low -1, high -1, interior 1: [1, 0, 2, 0, 3] minus both ends -> [0, 2, 0]
  ExpectValues(EvalValues(Module("p = f32[3] parameter(0)\nz = f32[] constant(9)\n"
                                 "ROOT r = f32[3] pad(p, z), padding=-1_-1_1"),
                          {x}),
               {9, 2, 9});
  // 2-D: one row of padding on top, interior column padding.
  ExpectValues(EvalValues(Module("p = f32[1,2] parameter(0)\nz = f32[] constant(0)\n"
                                 "ROOT r = f32[2,3] pad(p, z), padding=1_0x0_0_1"),
                          {Arr(P::kF32, {1, 2}, {5, 6})}),
               {0, 0, 0, 5, 0, 6});
}

// ---- Reduce, call, tuples
// -------------------------------------------------------------------------

const char kAddF32[] = R"(
add {
  x0 = f32[] parameter(0)
  y0 = f32[] parameter(1)
  ROOT s0 = f32[] add(x0, y0)
}
max {
  x1 = f32[] parameter(0)
  y1 = f32[] parameter(1)
  ROOT s1 = f32[] maximum(x1, y1)
}
sum_of_squares {
  acc = f32[] parameter(0)
  x2 = f32[] parameter(1)
  sq = f32[] multiply(x2, x2)
  ROOT s2 = f32[] add(acc, sq)
}
)";

TEST(InterpreterTest, ReduceOneAndSeveralDims) {
  std::vector<double> x(24);
  for (int i = 0; i < 24; ++i) x[static_cast<size_t>(i)] = i;  // [2,3,4]: 12a + 4b + c
  const Value v = Arr(P::kF32, {2, 3, 4}, x);
  // Over dim 2: sum_c (12a + 4b + c) = 48a + 16b + 6.
  ExpectValues(EvalValues(Module("p = f32[2,3,4] parameter(0)\nz = f32[] constant(0)\n"
                                 "ROOT r = f32[2,3] reduce(p, z), dimensions={2}, to_apply=add",
                                 kAddF32),
                          {v}),
               {6, 22, 38, 54, 70, 86});
  // Over dims {0,2}: sum_a sum_c = 2*(16b + 6) + 48 = 32b + 60.
  ExpectValues(EvalValues(Module("p = f32[2,3,4] parameter(0)\nz = f32[] constant(0)\n"
                                 "ROOT r = f32[3] reduce(p, z), dimensions={0,2}, to_apply=add",
                                 kAddF32),
                          {v}),
               {60, 92, 124});
  // All dims with max and a -inf init.
  ExpectValues(EvalValues(Module("p = f32[2,3,4] parameter(0)\nz = f32[] constant(-inf)\n"
                                 "ROOT r = f32[] reduce(p, z), dimensions={0,1,2}, to_apply=max",
                                 kAddF32),
                          {v}),
               {23});
}

TEST(InterpreterTest, ReduceWithAComputationEvaluatedPerElement) {
  // sum of squares of 1..4 plus init 0.5 = 30.5 (to_apply is not a single op: evaluated by the
  // interpreter for each element pair).
  ExpectValues(EvalValues(Module("p = f32[4] parameter(0)\nz = f32[] constant(0.5)\n"
                                 "ROOT r = f32[] reduce(p, z), dimensions={0}, "
                                 "to_apply=sum_of_squares",
                                 kAddF32),
                          {Arr(P::kF32, {4}, {1, 2, 3, 4})}),
               {30.5});
}

TEST(InterpreterTest, ReduceAccumulatesInTheElementType) {
  // bf16 sum of 1 + 256 * 2^-9: every step rounds back to 1 in bf16.
  std::vector<double> x(257, 0.001953125);
  x[0] = 1;
  const char add_bf16[] = R"(
add_bf16 {
  x0 = bf16[] parameter(0)
  y0 = bf16[] parameter(1)
  ROOT s0 = bf16[] add(x0, y0)
}
)";
  ExpectValues(EvalValues(Module("p = bf16[257] parameter(0)\nz = bf16[] constant(0)\n"
                                 "ROOT r = bf16[] reduce(p, z), dimensions={0}, to_apply=add_bf16",
                                 add_bf16),
                          {Arr(P::kBF16, {257}, x)}),
               {1});
}

TEST(InterpreterTest, CallTupleAndGetTupleElement) {
  const char callee[] = R"(
axpy {
  ca = f32[] parameter(0)
  cx = f32[2] parameter(1)
  ab = f32[2] broadcast(ca), dimensions={}
  ax = f32[2] multiply(ab, cx)
  ROOT t = (f32[2], f32[]) tuple(ax, ca)
}
)";
  ExpectValues(EvalValues(Module("a = f32[] parameter(0)\nx = f32[2] parameter(1)\n"
                                 "c = (f32[2], f32[]) call(a, x), to_apply=axpy\n"
                                 "ROOT g = f32[2] get-tuple-element(c), index=0",
                                 callee),
                          {Value::Scalar(P::kF32, 3), Arr(P::kF32, {2}, {1, -2})}),
               {3, -6});
}

// ---- Scatter
// --------------------------------------------------------------------------------------

const char kScatterComputations[] = R"(
set {
  old = f32[] parameter(0)
  ROOT new = f32[] parameter(1)
}
add {
  sa = f32[] parameter(0)
  sb = f32[] parameter(1)
  ROOT ss = f32[] add(sa, sb)
}
)";

TEST(InterpreterTest, ScatterSetOfARowLikeJaxAtSet) {
  // x.at[i].set(v) for x: f32[3,2], v: f32[2], as jax emits it.
  ExpectValues(
      EvalValues(Module("x = f32[3,2] parameter(0)\ni = s32[1] parameter(1)\nv = f32[2] "
                        "parameter(2)\nROOT s = f32[3,2] scatter(x, i, v), update_window_dims={0}, "
                        "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                        "index_vector_dim=0, indices_are_sorted=true, unique_indices=true, "
                        "to_apply=set",
                        kScatterComputations),
                 {Arr(P::kF32, {3, 2}, {0, 0, 0, 0, 0, 0}), Arr(P::kS32, {1}, {1}),
                  Arr(P::kF32, {2}, {7, 8})}),
      {0, 0, 7, 8, 0, 0});
}

TEST(InterpreterTest, ScatterAddWithRepeatedIndicesAccumulates) {
  // x.at[idx].add(v) with idx = [0, 2, 0]: x[0] += 1 + 3, x[2] += 2.
  ExpectValues(
      EvalValues(Module("x = f32[4] parameter(0)\ni = s32[3,1] parameter(1)\nv = f32[3] "
                        "parameter(2)\nROOT s = f32[4] scatter(x, i, v), update_window_dims={}, "
                        "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                        "index_vector_dim=1, to_apply=add",
                        kScatterComputations),
                 {Arr(P::kF32, {4}, {10, 10, 10, 10}), Arr(P::kS32, {3, 1}, {0, 2, 0}),
                  Arr(P::kF32, {3}, {1, 2, 3})}),
      {14, 10, 12, 10});
}

TEST(InterpreterTest, ScatterSkipsOutOfBoundsIndices) {
  ExpectValues(
      EvalValues(
          Module("x = f32[3] parameter(0)\ni = s32[] parameter(1)\nv = f32[] "
                 "parameter(2)\nROOT s = f32[3] scatter(x, i, v), update_window_dims={}, "
                 "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                 "index_vector_dim=0, to_apply=set",
                 kScatterComputations),
          {Arr(P::kF32, {3}, {1, 2, 3}), Value::Scalar(P::kS32, 3), Value::Scalar(P::kF32, 9)}),
      {1, 2, 3});
}

// ---- Dots
// -----------------------------------------------------------------------------------------

TEST(InterpreterTest, DotMatmulBatchedAndContractingFirst) {
  // [[1,2],[3,4]] . [[5,6],[7,8]] = [[19,22],[43,50]]
  const Value a = Arr(P::kF32, {2, 2}, {1, 2, 3, 4});
  const Value b = Arr(P::kF32, {2, 2}, {5, 6, 7, 8});
  ExpectValues(EvalValues(Module("a = f32[2,2] parameter(0)\nb = f32[2,2] parameter(1)\n"
                                 "ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, "
                                 "rhs_contracting_dims={0}, operand_precision={highest,highest}"),
                          {a, b}),
               {19, 22, 43, 50});
  // a^T . b: contract dim 0 of both: [[1*5+3*7, 1*6+3*8], [2*5+4*7, 2*6+4*8]]
  ExpectValues(EvalValues(Module("a = f32[2,2] parameter(0)\nb = f32[2,2] parameter(1)\n"
                                 "ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={0}, "
                                 "rhs_contracting_dims={0}, operand_precision={highest,highest}"),
                          {a, b}),
               {26, 30, 38, 44});
  // Batched: two 1x2 . 2x1 products.
  ExpectValues(
      EvalValues(Module("a = f32[2,1,2] parameter(0)\nb = f32[2,2,1] parameter(1)\n"
                        "ROOT d = f32[2,1,1] dot(a, b), lhs_batch_dims={0}, "
                        "rhs_batch_dims={0}, lhs_contracting_dims={2}, "
                        "rhs_contracting_dims={1}"),
                 {Arr(P::kF32, {2, 1, 2}, {1, 2, 3, 4}), Arr(P::kF32, {2, 2, 1}, {5, 6, 7, 8})}),
      {17, 53});
}

TEST(InterpreterTest, Fp8DotRunsWithItsResolvedAccumulation) {
  const std::string text = Module(
      "a = f8e4m3fn[2,2] parameter(0)\nb = f8e4m3fn[2,2] parameter(1)\n"
      "ROOT d = bf16[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  std::unique_ptr<HloModule> module = Parse(text);
  ASSERT_NE(module, nullptr);
  HloInterpreter interpreter({.dot_backend = Backend::kCpuEmulation});
  StatusOr<Value> value = interpreter.Evaluate(
      *module, {Arr(P::kF8E4M3FN, {2, 2}, {1, 2, 3, 4}), Arr(P::kF8E4M3FN, {2, 2}, {5, 6, 7, 8})});
  ASSERT_TRUE(value.ok()) << value.status().ToString();
  ExpectValues(value->values, {19, 22, 43, 50});
  ASSERT_EQ(interpreter.gemm_records().size(), 1u);
  EXPECT_EQ(interpreter.gemm_records()[0].accumulation, AccumulationMode::kFp8Fast);
  EXPECT_NE(interpreter.gemm_records()[0].instruction.find("%d (line"), std::string::npos);
}

TEST(InterpreterTest, IntegerDotIsAClearError) {
  StatusOr<Value> value =
      Eval(Module("a = s32[2,2] parameter(0)\nb = s32[2,2] parameter(1)\n"
                  "ROOT d = s32[2,2] dot(a, b), lhs_contracting_dims={1}, "
                  "rhs_contracting_dims={0}"),
           {Arr(P::kS32, {2, 2}, {1, 2, 3, 4}), Arr(P::kS32, {2, 2}, {1, 2, 3, 4})});
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(value.status().message().find("%d (line"), std::string::npos)
      << value.status().message();
  EXPECT_NE(value.status().message().find("float operands"), std::string::npos);
}

// ---- GEMM custom calls
// ----------------------------------------------------------------------------

std::string GemmConfig(double alpha, double beta, const std::string& epilogue, bool damax) {
  std::ostringstream s;
  s << R"({"gemm_backend_config":{"alpha_real":)" << alpha << R"(,"alpha_imag":0,"beta":)" << beta
    << R"(,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],)"
    << R"("rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},)"
    << R"("precision_config":{"operand_precision":["DEFAULT","DEFAULT"],"algorithm":"ALG_UNSET"},)"
    << R"("epilogue":")" << epilogue << R"(","damax_output":)" << (damax ? "true" : "false")
    << "}}";
  return s.str();
}

TEST(InterpreterTest, Fp8GemmCustomCallWithCBiasScaleDAndAmax) {
  // A.B = [[19,22],[43,50]]; D = alpha*sa*sb*A.B + C + bias = 0.5*2*1*A.B + C + bias.
  // C = [[1,1],[-100,0]], bias = [0.5, -2]: D = [[20.5, 21], [-56.5, 48]]; amax = 56.5;
  // out = f8e4m3fn(D * scale_d=2) = [[41 -> 40, 42 -> 40? ...]] computed below with e4m3 spacing.
  const std::string text = Module(Substitute(R"(a = f8e4m3fn[2,2] parameter(0)
b = f8e4m3fn[2,2] parameter(1)
c = bf16[2,2] parameter(2)
sa = f32[] parameter(3)
sb = f32[] parameter(4)
sd = f32[] parameter(5)
bias = bf16[2] parameter(6)
g = (f8e4m3fn[2,2], f32[], s8[16]) custom-call(a, b, c, sa, sb, sd, bias), custom_call_target="__cublas$lt$matmul$f8", backend_config=$config
d = f8e4m3fn[2,2] get-tuple-element(g), index=0
amax = f32[] get-tuple-element(g), index=1
ROOT t = (f8e4m3fn[2,2], f32[]) tuple(d, amax))",
                                             {{"config", GemmConfig(0.5, 1, "BIAS", true)}}));
  StatusOr<Value> value =
      Eval(text,
           {Arr(P::kF8E4M3FN, {2, 2}, {1, 2, 3, 4}), Arr(P::kF8E4M3FN, {2, 2}, {5, 6, 7, 8}),
            Arr(P::kBF16, {2, 2}, {1, 1, -100, 0}), Value::Scalar(P::kF32, 2),
            Value::Scalar(P::kF32, 1), Value::Scalar(P::kF32, 2), Arr(P::kBF16, {2}, {0.5, -2})},
           Backend::kCpuReference);
  ASSERT_TRUE(value.ok()) << value.status().ToString();
  // D * 2 = [[41, 42], [-113, 96]] in e4m3fn (spacing 8 in [64,128), 4 in [32,64)):
  // 41 -> 40, 42 -> 40 (tie to even mantissa: 40 = 1.25*32, 44 = 1.375*32 -> 40), -113 -> -112,
  // 96 -> 96.
  ExpectValues(value->elements[0].values, {40, 40, -112, 96});
  ExpectValues(value->elements[1].values, {56.5});
}

TEST(InterpreterTest, CustomCallWithTheWrongOperandsIsAClearError) {
  const std::string text = Module(Substitute(R"(a = f8e4m3fn[2,2] parameter(0)
b = f8e4m3fn[2,2] parameter(1)
ROOT g = (f32[2,2], s8[16]) custom-call(a, b), custom_call_target="__cublas$lt$matmul$f8", backend_config=$config)",
                                             {{"config", GemmConfig(1, 0, "DEFAULT", false)}}));
  StatusOr<Value> value = Eval(
      text, {Arr(P::kF8E4M3FN, {2, 2}, {1, 2, 3, 4}), Arr(P::kF8E4M3FN, {2, 2}, {1, 2, 3, 4})});
  ASSERT_FALSE(value.ok());
  EXPECT_NE(value.status().message().find("%g (line 6)"), std::string::npos)
      << value.status().message();
  EXPECT_NE(value.status().message().find("takes 4 operands (a, b, a_scale, b_scale), got 2"),
            std::string::npos)
      << value.status().message();
}

TEST(InterpreterTest, PlainCublasLtMatmulCustomCall) {
  const std::string text = Module(Substitute(R"(a = bf16[2,2] parameter(0)
b = bf16[2,2] parameter(1)
c = f32[2,2] parameter(2)
g = (f32[2,2], s8[16]) custom-call(a, b, c), custom_call_target="__cublas$lt$matmul", backend_config=$config
ROOT d = f32[2,2] get-tuple-element(g), index=0)",
                                             {{"config", GemmConfig(2, 1, "DEFAULT", false)}}));
  ExpectValues(
      EvalValues(text, {Arr(P::kBF16, {2, 2}, {1, 2, 3, 4}), Arr(P::kBF16, {2, 2}, {5, 6, 7, 8}),
                        Arr(P::kF32, {2, 2}, {1, 0, 0, -100})}),
      {39, 44, 86, 0});
}

// Runs `text` before and after Fp8GemmRewriter on the same random inputs; returns the max
// relative error |rewritten - original| / max|original| over the first output.
double RewrittenVsOriginal(const std::string& text, Backend backend, int64_t* custom_calls) {
  std::unique_ptr<HloModule> original = Parse(text);
  std::unique_ptr<HloModule> rewritten = Parse(text);
  if (original == nullptr || rewritten == nullptr) return kInf;  // Parse failed the test
  StatusOr<bool> changed = Fp8GemmRewriter().Run(rewritten.get());
  EXPECT_TRUE(changed.ok() && *changed) << changed.status().ToString();
  *custom_calls = 0;
  for (const HloInstruction* instruction : rewritten->entry_computation()->instructions()) {
    *custom_calls += instruction->opcode() == HloOpcode::kCustomCall;
  }
  std::vector<Value> arguments;
  const HloComputation* entry = original->entry_computation();
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    StatusOr<Value> value = RandomValue(entry->parameter_instruction(i)->shape(), 100 + i);
    EXPECT_TRUE(value.ok()) << value.status().ToString();
    if (!value.ok()) return kInf;
    arguments.push_back(*value);
  }
  HloInterpreter a({.dot_backend = backend}), b({.dot_backend = backend});
  StatusOr<Value> x = a.Evaluate(*rewritten, arguments);
  StatusOr<Value> y = b.Evaluate(*original, arguments);
  EXPECT_TRUE(x.ok()) << x.status().ToString();
  EXPECT_TRUE(y.ok()) << y.status().ToString();
  if (!x.ok() || !y.ok()) return kInf;
  const Value& xv = x->IsTuple() ? x->elements[0] : *x;
  const Value& yv = y->IsTuple() ? y->elements[0] : *y;
  double max_diff = 0, max_ref = 0;
  for (size_t i = 0; i < xv.values.size(); ++i) {
    max_diff = std::fmax(max_diff, std::fabs(xv.values[i] - yv.values[i]));
    max_ref = std::fmax(max_ref, std::fabs(yv.values[i]));
  }
  return max_diff / max_ref;
}

std::string ReadFixture(const std::string& name) {
  std::ifstream file(std::string(FP8DOT_SOURCE_DIR) + "/tests/hlo/testdata/" + name);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(InterpreterTest, FusedGemmMatchesThePlainDotExactlyWithTheReferenceBackend) {
  // Reference backend: exact products and f64 sums on both sides, so the only difference is the
  // f32 rounding of the dequantised operands (exact here: random scales are rounded f32 values
  // and FP8 x f32 products fit in f32) and of the final bf16 output.
  int64_t custom_calls = 0;
  const double error = RewrittenVsOriginal(ReadFixture("jax_fp8_scaled_dot.hlo"),
                                           Backend::kCpuReference, &custom_calls);
  EXPECT_EQ(custom_calls, 1);
  EXPECT_LE(error, 1.0 / 256);  // at most one bf16 rounding apart
}

TEST(InterpreterTest, FusedGemmMatchesThePlainDotWithinFastAccumulationError) {
  // Emulation: the fused FP8 GEMM accumulates with Hopper's fast FP8 accumulator, the plain f32
  // dot with TF32 inputs: both within ~1e-2 of each other relative to the largest output.
  int64_t custom_calls = 0;
  const double error = RewrittenVsOriginal(ReadFixture("jax_fp8_scaled_dot.hlo"),
                                           Backend::kCpuEmulation, &custom_calls);
  EXPECT_EQ(custom_calls, 1);
  EXPECT_LE(error, 2e-2);
}

TEST(InterpreterTest, TrainStepFixtureRunsRewritten) {
  std::unique_ptr<HloModule> module = Parse(ReadFixture("jax_fp8_train_step.hlo"));
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(Fp8GemmRewriter().Run(module.get()).ok());
  std::vector<Value> arguments;
  const HloComputation* entry = module->entry_computation();
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    FP8_ASSERT_OK_AND_ASSIGN(Value argument,
                             RandomValue(entry->parameter_instruction(i)->shape(), 7 + i));
    arguments.push_back(std::move(argument));
  }
  HloInterpreter interpreter;
  StatusOr<Value> value = interpreter.Evaluate(*module, arguments);
  ASSERT_TRUE(value.ok()) << value.status().ToString();
  ASSERT_EQ(value->elements.size(), 4u);
  EXPECT_EQ(value->elements[0].shape.ToString(false), "f8e4m3fn[2,16,64]");
  EXPECT_GT(value->elements[1].values[0], 0);  // amax
  // Forward dot fast, gradient dots (operand_precision=highest) promoted.
  int fast = 0, promoted = 0;
  for (const GemmRecord& gemm : interpreter.gemm_records()) {
    fast += gemm.accumulation == AccumulationMode::kFp8Fast;
    promoted += gemm.accumulation == AccumulationMode::kFp8Promoted;
  }
  EXPECT_EQ(fast, 1);
  EXPECT_EQ(promoted, 2);
}

TEST(InterpreterTest, OpsFixtureRunsWithoutItsOpaqueCustomCalls) {
  // ops.hlo has one of every op; its two custom calls are not runnable (f32 operands for the FP8
  // GEMM, an unknown target). Drop them and return sum in cc2's place.
  std::string text = ReadFixture("ops.hlo");
  std::string kept;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("custom-call") != std::string::npos ||
        line.find("get-tuple-element(cc)") != std::string::npos) {
      continue;
    }
    const size_t root = line.find("c_int, cc2)");
    if (root != std::string::npos) line.replace(root, 11, "c_int, sum)");
    kept += line + "\n";
  }
  std::vector<double> p0(24);
  for (int i = 0; i < 24; ++i) p0[static_cast<size_t>(i)] = 0.25 * i - 2;
  StatusOr<Value> value =
      Eval(kept, {Arr(P::kF32, {4, 6}, p0), Value::Scalar(P::kS32, 1), Value::Scalar(P::kF32, 2)});
  ASSERT_TRUE(value.ok()) << value.status().ToString();
  ASSERT_EQ(value->elements.size(), 9u);
  ExpectValues(value->elements[5].values, {1, 2.5, -3, kInf, -kInf, kNaN});  // c_arr
  EXPECT_EQ(value->elements[6].integers, (std::vector<int64_t>{1, 0, 1}));   // c_pred
  EXPECT_EQ(value->elements[7].integers, (std::vector<int64_t>{-7}));        // c_int
  // sum = p0 + iota along dim 1.
  std::vector<double> sum(24);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 6; ++c)
      sum[static_cast<size_t>(6 * r + c)] = p0[static_cast<size_t>(6 * r + c)] + c;
  ExpectValues(value->elements[8].values, sum);
}

TEST(InterpreterTest, OpsFixtureNamesTheUnrunnableCustomCall) {
  std::vector<double> p0(24, 1.0);
  StatusOr<Value> value =
      Eval(ReadFixture("ops.hlo"),
           {Arr(P::kF32, {4, 6}, p0), Value::Scalar(P::kS32, 1), Value::Scalar(P::kF32, 2)});
  ASSERT_FALSE(value.ok());
  EXPECT_NE(value.status().message().find("%cc (line 48)"), std::string::npos)
      << value.status().message();
}

// ---- Errors
// -----------------------------------------------------------------------------------------

TEST(InterpreterTest, UnsupportedOpNamesTheOpAndItsLine) {
  StatusOr<Value> value = Eval(Module("p = f32[4] parameter(0)\n"
                                      "ROOT s = f32[4] sort(p), dimensions={0}, to_apply=lt",
                                      R"(
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
)"),
                               {Arr(P::kF32, {4}, {4, 3, 2, 1})});
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(value.status().message(), "%s (line 11): sort is not supported by the interpreter");
}

TEST(InterpreterTest, UnknownCustomCallTargetIsAClearError) {
  StatusOr<Value> value = Eval(Module("p = f32[2] parameter(0)\n"
                                      "ROOT c = f32[2] custom-call(p), custom_call_target=\"foo\""),
                               {Arr(P::kF32, {2}, {1, 2})});
  ASSERT_FALSE(value.ok());
  EXPECT_NE(value.status().message().find("custom-call target \"foo\" is not supported"),
            std::string::npos)
      << value.status().message();
}

TEST(InterpreterTest, ArgumentsMustMatchTheParameters) {
  const std::string text = Module("p = f32[2] parameter(0)\nROOT n = f32[2] negate(p)");
  StatusOr<Value> none = Eval(text, {});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("takes 1 parameters, got 0"), std::string::npos);
  StatusOr<Value> wrong = Eval(text, {Arr(P::kF32, {3}, {1, 2, 3})});
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("is f32[2], but the argument is f32[3]"),
            std::string::npos)
      << wrong.status().message();
}

TEST(InterpreterTest, CudaBackendRunsOrSaysUnavailable) {
  const std::string text = Module(
      "a = f8e4m3fn[16,32] parameter(0)\nb = f8e4m3fn[32,16] parameter(1)\n"
      "ROOT d = f32[16,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  FP8_ASSERT_OK_AND_ASSIGN(Value a, RandomValue(Shape::MakeArray(P::kF8E4M3FN, {16, 32}), 1));
  FP8_ASSERT_OK_AND_ASSIGN(Value b, RandomValue(Shape::MakeArray(P::kF8E4M3FN, {32, 16}), 2));
  std::vector<Value> arguments = {a, b};
  StatusOr<Value> cuda = Eval(text, arguments, Backend::kCuda);
  if (!cuda.ok()) {
    EXPECT_EQ(cuda.status().code(), StatusCode::kUnavailable) << cuda.status().ToString();
    EXPECT_NE(cuda.status().message().find("%d (line"), std::string::npos);
    return;
  }
  StatusOr<Value> cpu = Eval(text, arguments, Backend::kCpuReference);
  ASSERT_TRUE(cpu.ok());
  for (size_t i = 0; i < cpu->values.size(); ++i) {
    EXPECT_NEAR(cuda->values[i], cpu->values[i], 1e-2 * (1 + std::fabs(cpu->values[i])));
  }
}

// ---- Values
// -----------------------------------------------------------------------------------------

TEST(InterpreterValueTest, HostTensorRoundTripAndIntegerConversion) {
  StatusOr<HostTensor> tensor = HostTensor::Create(DType::kF32, {3});
  ASSERT_TRUE(tensor.ok());
  tensor->SetPhysical(0, 1);
  tensor->SetPhysical(1, -2);
  tensor->SetPhysical(2, 3);
  StatusOr<Value> ints = ValueFromHostTensor(*tensor, Shape::MakeArray(P::kS32, {3}));
  ASSERT_TRUE(ints.ok()) << ints.status().ToString();
  EXPECT_EQ(ints->integers, (std::vector<int64_t>{1, -2, 3}));
  tensor->SetPhysical(1, 0.5);
  StatusOr<Value> bad = ValueFromHostTensor(*tensor, Shape::MakeArray(P::kS32, {3}), "x.npy");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("x.npy: element 1 is 0.5"), std::string::npos)
      << bad.status().message();
  StatusOr<Value> wrong_type = ValueFromHostTensor(*tensor, Shape::MakeArray(P::kBF16, {3}));
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_NE(wrong_type.status().message().find("expected element type bf16, got f32"),
            std::string::npos);
  StatusOr<HostTensor> pred = ValueToHostTensor(Arr(P::kPred, {1}, {1}), "out0");
  ASSERT_FALSE(pred.ok());
}

TEST(InterpreterValueTest, RoundToElementTypeWrapsIntegers) {
  EXPECT_EQ(RoundToElementType(128, P::kS8), -128);
  EXPECT_EQ(RoundToElementType(-1, P::kU16), 65535);
  EXPECT_EQ(RoundToElementType(4294967296.0 + 5, P::kU32), 5);
  EXPECT_EQ(RoundToElementType(kNaN, P::kS32), 0);
  EXPECT_EQ(RoundToElementType(-0.5, P::kPred), 1);
  EXPECT_EQ(ConvertFloatToInteger(1e10, P::kS32), 2147483647);
  EXPECT_EQ(ConvertFloatToInteger(-1, P::kU8), 0);
}

TEST(InterpreterValueTest, RandomValuesAreNeverAllZeroAndDeterministic) {
  for (P type : {P::kF32, P::kF8E4M3FN, P::kS32, P::kU8, P::kPred}) {
    StatusOr<Value> a = RandomValue(Shape::MakeArray(type, {1}), 3);
    StatusOr<Value> b = RandomValue(Shape::MakeArray(type, {1}), 3);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_NE(a->AsDoubles()[0], 0) << PrimitiveTypeName(type);
    EXPECT_EQ(a->values, b->values);
    EXPECT_EQ(a->integers, b->integers);
  }
}

// ---- Hostile and extreme input (issue #13) ------------------------------------------------------

// Parses without verifying: what a caller that skips the verifier hands the interpreter.
StatusOr<Value> EvalUnverified(const std::string& text, const std::vector<Value>& args,
                               InterpreterOptions options = {}) {
  FP8_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, ParseHloModule(text, "test.hlo"));
  HloInterpreter interpreter(options);
  return interpreter.Evaluate(*module, args);
}

TEST(InterpreterLimitsTest, ArraysBeyondMaxElementsAreResourceExhaustedBeforeAllocating) {
  // 2^40 and 2^60 elements used to escape as std::length_error / bad_alloc (abort).
  for (const std::string& body :
       {std::string("z = f32[] constant(0)\nROOT b = f32[1099511627776] broadcast(z), "
                    "dimensions={}"),
        std::string("ROOT b = s32[1152921504606846976] iota(), iota_dimension=0"),
        std::string("p = f32[2] parameter(0)\nz = f32[] constant(0)\n"
                    "ROOT b = f32[1099511627778] pad(p, z), padding=0_0_1099511627776")}) {
    StatusOr<Value> value =
        EvalUnverified(Module(body), body.find("parameter") != std::string::npos
                                         ? std::vector<Value>{Arr(P::kF32, {2}, {1, 2})}
                                         : std::vector<Value>{});
    ASSERT_FALSE(value.ok()) << body;
    EXPECT_EQ(value.status().code(), StatusCode::kResourceExhausted) << value.status().ToString();
    EXPECT_NE(value.status().message().find(
                  "elements, more than the interpreter's limit of 268435456 per array "
                  "(InterpreterOptions::max_elements)"),
              std::string::npos)
        << value.status().message();
  }
  // The limit is an option.
  StatusOr<Value> small =
      EvalUnverified(Module("p = f32[5] parameter(0)\nROOT n = f32[5] negate(p)"),
                     {Arr(P::kF32, {5}, {1, 2, 3, 4, 5})}, {.max_elements = 4});
  ASSERT_FALSE(small.ok());
  EXPECT_EQ(small.status().message(),
            "%p (line 4): f32[5]{0} has 5 elements, more than the interpreter's limit of 4 per "
            "array (InterpreterOptions::max_elements)");
}

TEST(InterpreterLimitsTest, RandomValueRefusesHugeShapes) {
  StatusOr<Value> value = RandomValue(Shape::MakeArray(P::kF32, {int64_t{1} << 40}), 1);
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.status().code(), StatusCode::kResourceExhausted);
}

// c0 negates; c(i) calls c(i-1) twice: calling c39 evaluates 2^40 computations.
std::string DoublingCallChain(int levels) {
  std::string text =
      "HloModule m\nc0 {\n  p0 = f32[] parameter(0)\n  ROOT n0 = f32[] negate(p0)\n}\n";
  for (int i = 1; i < levels; ++i) {
    const std::string n = std::to_string(i), prev = std::to_string(i - 1);
    text += "c" + n + " {\n  p" + n + " = f32[] parameter(0)\n  a" + n + " = f32[] call(p" + n +
            "), to_apply=c" + prev + "\n  ROOT b" + n + " = f32[] call(a" + n + "), to_apply=c" +
            prev + "\n}\n";
  }
  return text + "ENTRY e {\n  x = f32[] parameter(0)\n  ROOT y = f32[] call(x), to_apply=c" +
         std::to_string(levels - 1) + "\n}\n";
}

TEST(InterpreterLimitsTest, DoublingCallChainStopsAtTheEvaluationBudget) {
  // 2^40 calls used to run for days.
  StatusOr<Value> value = EvalUnverified(DoublingCallChain(40), {Value::Scalar(P::kF32, 1)},
                                         {.max_evaluation_steps = 10000});
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(value.status().message().find(
                "evaluation stopped after 10000 instructions evaluated (calls included), the limit "
                "InterpreterOptions::max_evaluation_steps (fp8dot run --max-evaluation-steps)"),
            std::string::npos)
      << value.status().message();
  // A chain that fits the budget runs: 2^10 negations of 1.
  FP8_ASSERT_OK_AND_ASSIGN(Value small,
                           EvalUnverified(DoublingCallChain(11), {Value::Scalar(P::kF32, 1)},
                                          {.max_evaluation_steps = 10000}));
  ExpectValues(small.values, {1});
}

TEST(InterpreterTest, ConvertFloatToIntSaturatesForEveryWidth) {
  const std::vector<double> input = {kNaN, kInf, -kInf, 3e9, -3e9, 2.5};
  ExpectValues(EvalValues(Module("p = f32[6] parameter(0)\nROOT c = s32[6] convert(p)"),
                          {Arr(P::kF32, {6}, input)}),
               {0, 2147483647, -2147483648.0, 2147483647, -2147483648.0, 2});
  ExpectValues(EvalValues(Module("p = f32[6] parameter(0)\nROOT c = u8[6] convert(p)"),
                          {Arr(P::kF32, {6}, input)}),
               {0, 255, 0, 255, 0, 2});
  ExpectValues(EvalValues(Module("p = f32[6] parameter(0)\nROOT c = u32[6] convert(p)"),
                          {Arr(P::kF32, {6}, input)}),
               {0, 4294967295.0, 0, 3e9, 0, 2});
  ExpectValues(EvalValues(Module("p = f64[3] parameter(0)\nROOT c = s64[3] convert(p)"),
                          {Arr(P::kF64, {3}, {kNaN, 1e15, -2.5})}),
               {0, 1e15, -2});
}

// ---- Exact s64/u64 values (issue #13) -----------------------------------------------------------
// Integers used to be doubles, so s64/u64 values beyond 2^53 were refused (or, before that, wrong).
// These values are exact now; every expectation below is an integer a double cannot hold.

constexpr int64_t kS64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kS64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kTwoTo53 = int64_t{1} << 53;
constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();

// Evaluates a module whose entry root is a pred/integer array and returns its elements exactly
// (shape.h's form: u64 as its bit pattern).
std::vector<int64_t> EvalIntegers(const std::string& text, const std::vector<Value>& args = {}) {
  StatusOr<Value> value = Eval(text, args);
  EXPECT_TRUE(value.ok()) << value.status().ToString();
  if (!value.ok()) return {};
  EXPECT_TRUE(value->values.empty()) << "pred/integer elements are held in Value::integers";
  return value->integers;
}

int64_t Bits(uint64_t u64) { return static_cast<int64_t>(u64); }

TEST(InterpreterExactIntegerTest, S64ArithmeticBeyond2To53IsExact) {
  // 2^53 + 1 has no double; + 1 gives 2^53 + 2 exactly.
  EXPECT_EQ(EvalIntegers(Module("a = s64[] constant(9007199254740993)\nb = s64[] constant(1)\n"
                                "ROOT c = s64[] add(a, b)")),
            (std::vector<int64_t>{kTwoTo53 + 2}));
  // 2^52 * 4 + 1 = 2^54 + 1 (the old interpreter refused the 2^54 on the way).
  EXPECT_EQ(EvalIntegers(Module("a = s64[] constant(4503599627370496)\nb = s64[] constant(4)\n"
                                "m = s64[] multiply(a, b)\none = s64[] constant(1)\n"
                                "ROOT c = s64[] add(m, one)")),
            (std::vector<int64_t>{(int64_t{1} << 54) + 1}));
  // Products and powers wrap modulo 2^64: (2^62 + 3) * 4 = 2^64 + 12 -> 12, (2^62 + 3)^4 = 81 +
  // multiples of 2^64 -> 81, and 3^40 (about 1.2e19) -> 3^40 - 2^64.
  uint64_t three_to_40 = 1;
  for (int i = 0; i < 40; ++i) three_to_40 *= 3;
  EXPECT_EQ(EvalIntegers(Module("a = s64[2] constant({4611686018427387907, 3})\n"
                                "b = s64[2] constant({4, 40})\n"
                                "m = s64[2] multiply(a, b)\np = s64[2] power(a, b)\n"
                                "ROOT t = s64[4] concatenate(m, p), dimensions={0}")),
            (std::vector<int64_t>{12, 120, 81, Bits(three_to_40)}));
  // s32 arithmetic is exact two's complement too: 65537^2 = 2^32 + 2^17 + 1 wraps to 131073.
  EXPECT_EQ(EvalIntegers(Module("a = s32[] constant(65537)\nROOT m = s32[] multiply(a, a)")),
            (std::vector<int64_t>{131073}));
}

TEST(InterpreterExactIntegerTest, U64WrapsAtTwoTo64) {
  EXPECT_EQ(EvalIntegers(Module("a = u64[] constant(18446744073709551615)\n"
                                "b = u64[] constant(1)\nROOT c = u64[] add(a, b)")),
            (std::vector<int64_t>{0}));
  // 0 - 1 = 2^64 - 1; 2^63 + 2^63 = 0; (2^64 - 1) / 3 is exact in u64.
  EXPECT_EQ(EvalIntegers(Module("a = u64[3] constant({0, 9223372036854775808, "
                                "18446744073709551615})\n"
                                "b = u64[3] constant({1, 9223372036854775808, 3})\n"
                                "s = u64[3] subtract(a, b)\nadd = u64[3] add(a, b)\n"
                                "d = u64[3] divide(a, b)\n"
                                "ROOT t = u64[9] concatenate(s, add, d), dimensions={0}")),
            (std::vector<int64_t>{Bits(kU64Max), 0, Bits(kU64Max - 3), 1, 0, 2, 0, 1,
                                  Bits(6148914691236517205u)}));
}

TEST(InterpreterExactIntegerTest, DivisionFollowsXlaAtTheEdges) {
  // INT64_MIN / -1 = INT64_MIN, INT64_MIN % -1 = 0, x / 0 = -1, x % 0 = x; u64 x / 0 = 2^64 - 1.
  EXPECT_EQ(EvalIntegers(Module("a = s64[3] constant({-9223372036854775808, 9007199254740993, "
                                "-7})\nb = s64[3] constant({-1, 0, 2})\n"
                                "d = s64[3] divide(a, b)\nr = s64[3] remainder(a, b)\n"
                                "ROOT t = s64[6] concatenate(d, r), dimensions={0}")),
            (std::vector<int64_t>{kS64Min, -1, -3, 0, kTwoTo53 + 1, -1}));
  EXPECT_EQ(EvalIntegers(Module("a = u64[] constant(18446744073709551613)\n"
                                "b = u64[] constant(0)\nROOT d = u64[] divide(a, b)")),
            (std::vector<int64_t>{Bits(kU64Max)}));
}

TEST(InterpreterExactIntegerTest, UnaryBitwiseAndShiftOpsOnS64AndU64) {
  EXPECT_EQ(
      EvalIntegers(Module("a = s64[4] constant({-9223372036854775808, 9007199254740993, "
                          "-9007199254740993, 0})\n"
                          "abs = s64[4] abs(a)\nneg = s64[4] negate(a)\nsgn = s64[4] sign(a)\n"
                          "ROOT t = s64[12] concatenate(abs, neg, sgn), dimensions={0}")),
      (std::vector<int64_t>{kS64Min, kTwoTo53 + 1, kTwoTo53 + 1, 0,   // abs(MIN) wraps
                            kS64Min, -kTwoTo53 - 1, kTwoTo53 + 1, 0,  // -MIN wraps
                            -1, 1, -1, 0}));
  // u64 2^64 - 1: popcnt 64, clz 0; 1: clz 63; not, and, shifts on the top bit.
  EXPECT_EQ(
      EvalIntegers(Module("a = u64[2] constant({18446744073709551615, 1})\n"
                          "p = u64[2] popcnt(a)\nz = u64[2] count-leading-zeros(a)\n"
                          "n = u64[2] not(a)\nk = u64[] constant(63)\n"
                          "kb = u64[2] broadcast(k), dimensions={}\n"
                          "l = u64[2] shift-left(a, kb)\n"
                          "r = u64[2] shift-right-logical(a, kb)\n"
                          "ROOT t = u64[12] concatenate(p, z, n, l, r, kb), "
                          "dimensions={0}")),
      (std::vector<int64_t>{64, 1, 0, 63, 0, Bits(kU64Max - 1), kS64Min, kS64Min, 1, 0, 63, 63}));
  // Arithmetic shift of a negative s64 keeps the sign; by 64 or more it gives the sign.
  EXPECT_EQ(EvalIntegers(Module("a = s64[2] constant({-9223372036854775807, 9223372036854775807})\n"
                                "b = s64[2] constant({62, 64})\n"
                                "ROOT r = s64[2] shift-right-arithmetic(a, b)")),
            (std::vector<int64_t>{-2, 0}));
}

TEST(InterpreterExactIntegerTest, U64ComparesUnsignedAndS64Signed) {
  // As u64, 2^63 + 1 > 2^63 and 2^64 - 1 > 1 (held as int64 bits, 2^64 - 1 is -1: the compare
  // must read them unsigned).
  EXPECT_EQ(EvalIntegers(Module("a = u64[2] constant({9223372036854775809, 18446744073709551615})\n"
                                "b = u64[2] constant({9223372036854775808, 1})\n"
                                "ROOT c = pred[2] compare(a, b), direction=GT")),
            (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(EvalIntegers(Module("a = s64[2] constant({-1, 9007199254740993})\n"
                                "b = s64[2] constant({1, 9007199254740992})\n"
                                "ROOT c = pred[2] compare(a, b), direction=LT")),
            (std::vector<int64_t>{1, 0}));
  // max/min/clamp order u64 unsigned: max(2^64 - 1, 1) is 2^64 - 1.
  EXPECT_EQ(EvalIntegers(Module("a = u64[2] constant({18446744073709551615, 5})\n"
                                "b = u64[2] constant({1, 9223372036854775808})\n"
                                "mx = u64[2] maximum(a, b)\nmn = u64[2] minimum(a, b)\n"
                                "lo = u64[] constant(3)\nhi = u64[] constant(9223372036854775809)\n"
                                "c = u64[2] clamp(lo, a, hi)\n"
                                "ROOT t = u64[6] concatenate(mx, mn, c), dimensions={0}")),
            (std::vector<int64_t>{Bits(kU64Max), kS64Min, 1, 5, kS64Min + 1, 5}));
}

TEST(InterpreterExactIntegerTest, ConvertSaturatesAtTheS64AndU64Extremes) {
  const Value in = Arr(P::kF32, {5}, {kInf, -kInf, kNaN, 1e30, -1e30});
  EXPECT_EQ(EvalIntegers(Module("p = f32[5] parameter(0)\nROOT c = s64[5] convert(p)"), {in}),
            (std::vector<int64_t>{kS64Max, kS64Min, 0, kS64Max, kS64Min}));
  EXPECT_EQ(EvalIntegers(Module("p = f32[5] parameter(0)\nROOT c = u64[5] convert(p)"), {in}),
            (std::vector<int64_t>{Bits(kU64Max), 0, 0, Bits(kU64Max), 0}));
  // Below the saturation point float -> integer is exact: f64 2^63 - 1024 and 2^64 - 2048.
  EXPECT_EQ(EvalIntegers(Module("p = f64[2] parameter(0)\nROOT c = u64[2] convert(p)"),
                         {Arr(P::kF64, {2}, {9223372036854774784.0, 18446744073709549568.0})}),
            (std::vector<int64_t>{Bits(9223372036854774784u), Bits(18446744073709549568u)}));
  // Integer -> integer wraps: s64 -1 -> u64 2^64 - 1; u64 2^63 + 5 -> s32 5; s8 -> u64
  // sign-extends.
  EXPECT_EQ(EvalIntegers(Module("a = s64[] constant(-1)\nROOT c = u64[] convert(a)")),
            (std::vector<int64_t>{Bits(kU64Max)}));
  EXPECT_EQ(EvalIntegers(Module("a = u64[] constant(9223372036854775813)\n"
                                "ROOT c = s32[] convert(a)")),
            (std::vector<int64_t>{5}));
  EXPECT_EQ(EvalIntegers(Module("a = s8[] constant(-2)\nROOT c = u64[] convert(a)")),
            (std::vector<int64_t>{Bits(kU64Max - 1)}));
}

TEST(InterpreterExactIntegerTest, IntegerToFloatRoundsOnceToTheTarget) {
  // u64 2^64 - 1 -> f64 and f32 is 2^64 (the nearest of either type).
  ExpectValues(EvalValues(Module("a = u64[] constant(18446744073709551615)\n"
                                 "ROOT c = f64[] convert(a)"),
                          {}),
               {18446744073709551616.0});
  ExpectValues(EvalValues(Module("a = u64[] constant(18446744073709551615)\n"
                                 "ROOT c = f32[] convert(a)"),
                          {}),
               {18446744073709551616.0});
  // 2^63 + 2^39 + 1 is just above the midpoint between two f32s (2^63, 2^63 + 2^40): f32 rounds
  // it up. Through f64 first it would become the midpoint 2^63 + 2^39 and then round to even,
  // down to 2^63.
  ExpectValues(EvalValues(Module("a = u64[] constant(9223372586610589697)\n"
                                 "ROOT c = f32[] convert(a)"),
                          {}),
               {9223373136366403584.0});
  ExpectValues(EvalValues(Module("a = s64[2] constant({-9223372036854775808, -9007199254740993})\n"
                                 "ROOT c = f64[2] convert(a)"),
                          {}),
               {-9223372036854775808.0, -9007199254740992.0});
  // u64 beyond f16's range overflows to inf.
  ExpectValues(EvalValues(Module("a = u64[] constant(18446744073709551615)\n"
                                 "ROOT c = f16[] convert(a)"),
                          {}),
               {kInf});
}

TEST(InterpreterExactIntegerTest, ReduceOverS64WrapsExactly) {
  const char add_s64[] = R"(
add_s64 {
  x = s64[] parameter(0)
  y = s64[] parameter(1)
  ROOT s = s64[] add(x, y)
}
add_twice {
  x2 = s64[] parameter(0)
  y2 = s64[] parameter(1)
  a2 = s64[] add(x2, y2)
  ROOT s2 = s64[] add(a2, y2)
}
)";
  // Four times 2^62 + 1 is 2^64 + 4: it wraps to 4. The single-op body runs on the fast path,
  // the two-op one through the interpreter per element: both exact.
  const Value in = Value::Integers(Shape::MakeArray(P::kS64, {4}),
                                   std::vector<int64_t>(4, (int64_t{1} << 62) + 1));
  EXPECT_EQ(EvalIntegers(Module("p = s64[4] parameter(0)\nz = s64[] constant(0)\n"
                                "ROOT r = s64[] reduce(p, z), dimensions={0}, to_apply=add_s64",
                                add_s64),
                         {in}),
            (std::vector<int64_t>{4}));
  EXPECT_EQ(EvalIntegers(Module("p = s64[4] parameter(0)\nz = s64[] constant(1)\n"
                                "ROOT r = s64[] reduce(p, z), dimensions={0}, to_apply=add_twice",
                                add_s64),
                         {in}),
            (std::vector<int64_t>{9}));  // 1 + 2 * (2^64 + 4) wraps to 9
}

TEST(InterpreterExactIntegerTest, ReduceOfIntegersWithAFloatBodyConvertsThem) {
  // The verifier lets an s32 input reach an f32 to_apply (XLA's mixed precision): its parameters
  // get the elements converted to f32, as they did when every element was a double.
  ExpectValues(EvalValues(Module("p = s32[3] parameter(0)\nz = f32[] constant(0.5)\n"
                                 "ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add",
                                 kAddF32),
                          {Arr(P::kS32, {3}, {1, 2, 3})}),
               {6.5});
  ExpectValues(EvalValues(Module("p = s32[3] parameter(0)\nz = f32[] constant(0.5)\n"
                                 "ROOT r = f32[] reduce(p, z), dimensions={0}, "
                                 "to_apply=sum_of_squares",
                                 kAddF32),
                          {Arr(P::kS32, {3}, {1, 2, 3})}),
               {14.5});
}

TEST(InterpreterExactIntegerTest, DataMovementKeepsS64ValuesExact) {
  // Every data-movement op on values a double cannot hold: broadcast, transpose, reshape,
  // reverse, slice, pad, select, dynamic-update-slice, bitcast through a layout, call, tuple.
  const char callee[] = R"(
identity {
  ROOT x = s64[2,2] parameter(0)
}
)";
  const std::string body =
      "a = s64[2] constant({9007199254740993, -9223372036854775807})\n"
      "b = s64[2,2] broadcast(a), dimensions={1}\n"
      "t = s64[2,2] transpose(b), dimensions={1,0}\n"
      "r = s64[4] reshape(t)\n"
      "v = s64[4] reverse(r), dimensions={0}\n"
      "s = s64[2] slice(v), slice={[1:3]}\n"
      "z = s64[] constant(9223372036854775807)\n"
      "p = s64[4] pad(s, z), padding=1_1\n"
      "m = pred[4] constant({true, false, true, false})\n"
      "sel = s64[4] select(m, p, v)\n"
      "i = s64[] constant(1)\n"
      "u = s64[4] dynamic-update-slice(sel, a, i)\n"
      "c = s64[2,2]{0,1} bitcast(t)\n"
      "k = s64[2,2] call(c), to_apply=identity\n"
      "kr = s64[4] reshape(k)\n"
      "ROOT o = s64[8] concatenate(u, kr), dimensions={0}";
  constexpr int64_t kA = kTwoTo53 + 1, kB = kS64Min + 1;
  // t = {{A, A}, {B, B}}; r = {A, A, B, B}; v = {B, B, A, A}; s = {B, A};
  // p = {MAX, B, A, MAX}; sel = {MAX, B, A, A}; u = {MAX, A, B, A}.
  // bitcast to {0,1}: t's buffer {A, A, B, B} read column-major is {{A, B}, {A, B}}.
  EXPECT_EQ(EvalIntegers(Module(body, callee)),
            (std::vector<int64_t>{kS64Max, kA, kB, kA, kA, kB, kA, kB}));
}

TEST(InterpreterExactIntegerTest, S64IndicesAreReadExactly) {
  const Value x = Arr(P::kF32, {4}, {10, 11, 12, 13});
  const std::string slice =
      "x = f32[4] parameter(0)\ni = $type[] parameter(1)\n"
      "ROOT d = f32[2] dynamic-slice(x, i), dynamic_slice_sizes={2}";
  auto run = [&](P type, int64_t index) {
    return EvalValues(Module(Substitute(slice, {{"type", PrimitiveTypeName(type)}})),
                      {x, Value::Integers(Shape::MakeScalar(type), {index})});
  };
  ExpectValues(run(P::kS64, 1), {11, 12});
  // Clamped like XLA: INT64_MIN -> 0, 2^53 + 1 -> 2; u64 2^64 - 1 is huge, not -1: -> 2.
  ExpectValues(run(P::kS64, kS64Min), {10, 11});
  ExpectValues(run(P::kS64, kTwoTo53 + 1), {12, 13});
  ExpectValues(run(P::kU64, Bits(kU64Max)), {12, 13});
  // A scatter at an s64 index far out of range is skipped, not wrapped into range.
  ExpectValues(
      EvalValues(
          Module("x = f32[3] parameter(0)\ni = s64[] parameter(1)\nv = f32[] "
                 "parameter(2)\nROOT s = f32[3] scatter(x, i, v), update_window_dims={}, "
                 "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                 "index_vector_dim=0, to_apply=add",
                 kAddF32),
          {Arr(P::kF32, {3}, {1, 2, 3}), Value::Integers(Shape::MakeScalar(P::kS64), {kS64Max}),
           Value::Scalar(P::kF32, 5)}),
      {1, 2, 3});
}

TEST(InterpreterValueTest, EncodesS64AndU64BytesExactly) {
  // Checksums (fp8dot run's hash) and .npy outputs read these bytes.
  const Value s64 = Value::Integers(Shape::MakeArray(P::kS64, {2}), {kTwoTo53 + 1, kS64Min});
  EXPECT_EQ(EncodeValueBytes(s64),
            (std::vector<uint8_t>{0x01, 0, 0, 0, 0, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0x80}));
  const Value u64 = Value::Integers(Shape::MakeArray(P::kU64, {1}), {Bits(kU64Max - 1)});
  EXPECT_EQ(EncodeValueBytes(u64),
            (std::vector<uint8_t>{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}));
  // Narrow types: their low bytes.
  const Value s16 = Value::Integers(Shape::MakeArray(P::kS16, {1}), {-2});
  EXPECT_EQ(EncodeValueBytes(s16), (std::vector<uint8_t>{0xfe, 0xff}));
}

TEST(InterpreterValueTest, IntegersAreWrappedToTheirType) {
  // Value::Integers and WrapToIntegerType: sign-extended for signed, zero-extended for unsigned.
  EXPECT_EQ(Value::Integers(Shape::MakeArray(P::kS8, {2}), {128, -129}).integers,
            (std::vector<int64_t>{-128, 127}));
  EXPECT_EQ(Value::Integers(Shape::MakeArray(P::kU32, {1}), {-1}).integers,
            (std::vector<int64_t>{4294967295}));
  EXPECT_EQ(Value::Integers(Shape::MakeArray(P::kPred, {2}), {2, 0}).integers,
            (std::vector<int64_t>{1, 0}));
  // A float tensor feeds an s64 parameter exactly when its values are integers in range.
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor tensor, HostTensor::Create(DType::kF64, {2}));
  tensor.SetPhysical(0, 1152921504606846976.0);  // 2^60
  tensor.SetPhysical(1, -9223372036854775808.0);
  FP8_ASSERT_OK_AND_ASSIGN(Value s64, ValueFromHostTensor(tensor, Shape::MakeArray(P::kS64, {2})));
  EXPECT_EQ(s64.integers, (std::vector<int64_t>{int64_t{1} << 60, kS64Min}));
  tensor.SetPhysical(1, 9223372036854775808.0);  // 2^63: out of s64's range
  EXPECT_FALSE(ValueFromHostTensor(tensor, Shape::MakeArray(P::kS64, {2})).ok());
  EXPECT_EQ(ConvertFloatToInteger(kInf, P::kU64), Bits(kU64Max));
  EXPECT_EQ(IntegerToFloat(Bits(kU64Max), P::kU64, P::kBF16), 18446744073709551616.0);
}

TEST(InterpreterTest, ModulesThatFailTheVerifierAreRefused) {
  // transpose dimensions={0,0} read past the operand; the verifier's error comes back instead.
  StatusOr<Value> transpose =
      EvalUnverified(Module("p = f32[2,3] parameter(0)\nROOT t = f32[2,2] transpose(p), "
                            "dimensions={0,0}"),
                     {Arr(P::kF32, {2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_FALSE(transpose.ok());
  EXPECT_EQ(transpose.status().message(),
            "%t (line 5) transpose: dimensions {0,0} repeats dimension 0");
  // scatter: updates f32[5] against indices s32[1,1] read past the indices; result f32[100]
  // against an f32[8] operand.
  const std::string sum = R"(
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
})";
  StatusOr<Value> scatter = EvalUnverified(
      Module("x = f32[8] parameter(0)\ni = s32[1,1] parameter(1)\nv = f32[5] parameter(2)\n"
             "ROOT s2 = f32[8] scatter(x, i, v), update_window_dims={}, inserted_window_dims={0}, "
             "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=sum",
             sum),
      {Arr(P::kF32, {8}, std::vector<double>(8, 0)), Arr(P::kS32, {1, 1}, {0}),
       Arr(P::kF32, {5}, {1, 2, 3, 4, 5})});
  ASSERT_FALSE(scatter.ok());
  EXPECT_NE(scatter.status().message().find("does not match indices"), std::string::npos)
      << scatter.status().message();
  // EvaluateComputation called from outside verifies too.
  FP8_ASSERT_OK_AND_ASSIGN(std::unique_ptr<HloModule> module,
                           ParseHloModule(Module("p = f32[2,3] parameter(0)\nROOT t = f32[2,2] "
                                                 "transpose(p), dimensions={0,0}"),
                                          "test.hlo"));
  HloInterpreter interpreter;
  StatusOr<Value> direct = interpreter.EvaluateComputation(
      *module->entry_computation(), {Arr(P::kF32, {2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_FALSE(direct.ok());
  EXPECT_NE(direct.status().message().find("repeats dimension 0"), std::string::npos);
}

TEST(InterpreterTest, VariadicReduceWhoseBodyReturnsOneScalarIsAnError) {
  // result->elements.at(j) threw std::out_of_range (abort) for a body that is not a tuple.
  const std::string first = R"(
first {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  ROOT r = f32[] add(a, c)
})";
  StatusOr<Value> value = EvalUnverified(
      Module("x = f32[4] parameter(0)\ni = s32[4] parameter(1)\nz = f32[] constant(0)\n"
             "zi = s32[] constant(0)\n"
             "ROOT r2 = (f32[], s32[]) reduce(x, i, z, zi), dimensions={0}, to_apply=first",
             first),
      {Arr(P::kF32, {4}, {1, 2, 3, 4}), Arr(P::kS32, {4}, {0, 1, 2, 3})});
  ASSERT_FALSE(value.ok());
  EXPECT_NE(value.status().message().find(
                "reduce: to_apply %first returns f32[] but the init values are (f32[], s32[])"),
            std::string::npos)
      << value.status().message();
}

}  // namespace
}  // namespace fp8dot::hlo
