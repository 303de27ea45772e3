// Verifier: every fixture verifies; each shape rule rejects a wrong declared shape with a message
// naming the instruction and its line.
#include "fp8dot/hlo/hlo_verifier.h"

#include <gtest/gtest.h>

#include "hlo/hlo_test_util.h"

namespace fp8dot::hlo {
namespace {

// The verifier's message for a module whose ENTRY body is `body` (after "HloModule m\n" and a
// sum computation), or "OK".
std::string Verify(const std::string& body) {
  const std::string text = Substitute(R"(HloModule m
sum {
  sum.a = f32[] parameter(0)
  sum.b = f32[] parameter(1)
  ROOT sum.s = f32[] add(sum.a, sum.b)
}
ENTRY e {
$body}
)",
                                      {{"body", body}});
  std::unique_ptr<HloModule> module = ParseOrDie(text);
  if (module == nullptr) return "parse error";
  Status status = VerifyHloModule(*module);
  return status.ok() ? "OK" : status.message();
}

TEST(HloVerifierTest, FixturesVerify) {
  for (const char* fixture : kFixtures) {
    std::unique_ptr<HloModule> module = ParseOrDie(ReadTestdata(fixture));
    ASSERT_NE(module, nullptr);
    Status status = VerifyHloModule(*module);
    EXPECT_TRUE(status.ok()) << fixture << ": " << status.ToString();
  }
}

TEST(HloVerifierTest, ElementwiseShapesMustMatch) {
  EXPECT_EQ(Verify("  p = f32[2,3] parameter(0)\n  q = f32[3,2] parameter(1)\n"
                   "  ROOT a = f32[2,3] add(p, q)\n"),
            "%a (line 10) add: operands have different shapes: f32[2,3]{1,0} vs f32[3,2]{1,0}");
  EXPECT_EQ(Verify("  p = f32[2,3] parameter(0)\n  ROOT a = f32[3,2] exponential(p)\n"),
            "%a (line 9) exponential: declared shape f32[3,2] does not match the inferred shape "
            "f32[2,3]");
  EXPECT_EQ(Verify("  p = f32[2] parameter(0)\n  ROOT c = f32[2] compare(p, p), direction=GT\n"),
            "%c (line 9) compare: declared shape f32[2] does not match the inferred shape "
            "pred[2]");
}

TEST(HloVerifierTest, AsyncFusionStartAndDone) {
  // fusion-start/fusion-done as XLA's optimized dumps write them (the fused computation is `sum`).
  EXPECT_EQ(
      Verify("  p = f32[] parameter(0)\n"
             "  s = ((f32[], f32[]), f32[], u32[]) fusion-start(p, p), kind=kLoop, calls=sum\n"
             "  ROOT d = f32[] fusion-done(s)\n"),
      "OK");
  EXPECT_EQ(Verify("  p = f32[] parameter(0)\n"
                   "  s = ((f32[]), f32[], u32[]) fusion-start(p, p), kind=kLoop, calls=sum\n"
                   "  ROOT d = f32[] fusion-done(s)\n"),
            "%s (line 9) fusion-start: element 0 (f32[]) must be the operands' shapes (f32[], "
            "f32[])");
  EXPECT_EQ(Verify("  p = f32[] parameter(0)\n"
                   "  s = ((f32[], f32[]), s32[2], u32[]) fusion-start(p, p), kind=kLoop, "
                   "calls=sum\n"
                   "  ROOT d = s32[2] fusion-done(s)\n"),
            "%s (line 9) fusion-start: element 1 s32[2]{0} must be the result of %sum, f32[]");
  EXPECT_EQ(Verify("  p = f32[] parameter(0)\n"
                   "  s = (f32[], f32[]) fusion-start(p), kind=kLoop, calls=sum\n"
                   "  ROOT d = f32[] fusion-done(s)\n"),
            "%s (line 9) fusion-start: shape must be ((operands...), result, context scalar), "
            "got (f32[], f32[])");
  EXPECT_EQ(Verify("  p = (f32[], f32[], u32[]) parameter(0)\n"
                   "  ROOT d = f32[] fusion-done(p)\n"),
            "%d (line 9) fusion-done: operand must be a fusion-start, got parameter %p");
  EXPECT_EQ(
      Verify("  p = f32[] parameter(0)\n"
             "  s = ((f32[], f32[]), f32[], u32[]) fusion-start(p, p), kind=kLoop, calls=sum\n"
             "  ROOT d = f16[] fusion-done(s)\n"),
      "%d (line 10) fusion-done: declared shape f16[] does not match the inferred shape "
      "f32[]");
}

TEST(HloVerifierTest, DotDimensions) {
  EXPECT_EQ(Verify("  a = f8e4m3fn[2,16,32] parameter(0)\n  b = f8e5m2[2,32,8] parameter(1)\n"
                   "  ROOT d = bf16[2,16,8] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, "
                   "lhs_contracting_dims={2}, rhs_contracting_dims={1}\n"),
            "OK");
  EXPECT_EQ(Verify("  a = f32[16,32] parameter(0)\n  b = f32[16,8] parameter(1)\n"
                   "  ROOT d = f32[16,8] dot(a, b), lhs_contracting_dims={1}, "
                   "rhs_contracting_dims={0}\n"),
            "%d (line 10) dot: contracting dimension 0 has size 32 in lhs f32[16,32]{1,0} but 16 "
            "in rhs f32[16,8]{1,0}");
  EXPECT_EQ(Verify("  a = f32[16,32] parameter(0)\n  b = f32[32,8] parameter(1)\n"
                   "  ROOT d = f32[8,16] dot(a, b), lhs_contracting_dims={1}, "
                   "rhs_contracting_dims={0}\n"),
            "%d (line 10) dot: declared shape f32[8,16] does not match the inferred shape "
            "f32[16,8]");
  EXPECT_EQ(Verify("  a = f32[16,32] parameter(0)\n  b = f32[32,8] parameter(1)\n"
                   "  ROOT d = f32[16,8] dot(a, b), lhs_contracting_dims={2}, "
                   "rhs_contracting_dims={0}\n"),
            "%d (line 10) dot: lhs_contracting_dims {2} has dimension 2 out of range for rank 2");
}

TEST(HloVerifierTest, DataMovement) {
  EXPECT_EQ(Verify("  p = f32[2,3] parameter(0)\n  ROOT t = f32[2,3] transpose(p), "
                   "dimensions={1,0}\n"),
            "%t (line 9) transpose: declared shape f32[2,3] does not match the inferred shape "
            "f32[3,2]");
  EXPECT_EQ(Verify("  p = f32[] parameter(0)\n  ROOT b = f32[2,3] broadcast(p), dimensions={0}\n"),
            "%b (line 9) broadcast: dimensions={0} must have one entry per operand dimension (0)");
  EXPECT_EQ(Verify("  p = f32[3] parameter(0)\n  ROOT b = f32[2,3] broadcast(p), dimensions={0}\n"),
            "%b (line 9) broadcast: operand dimension 0 (size 3) maps to result dimension 0 of "
            "size 2");
  EXPECT_EQ(Verify("  p = f32[2,3] parameter(0)\n  ROOT r = f32[5] reshape(p)\n"),
            "%r (line 9) reshape: f32[2,3]{1,0} and f32[5]{0} have different sizes");
  EXPECT_EQ(Verify("  p = f32[2,3] parameter(0)\n  ROOT r = s32[6] bitcast(p)\n"), "OK");
  EXPECT_EQ(Verify("  p = f32[4] parameter(0)\n  ROOT s = f32[2] slice(p), slice={[0:4:3]}\n"),
            "OK");
  EXPECT_EQ(Verify("  p = f32[4] parameter(0)\n  ROOT s = f32[2] slice(p), slice={[0:5]}\n"),
            "%s (line 9) slice: slice [0:5:1] is invalid for dimension 0 of size 4");
  EXPECT_EQ(Verify("  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
                   "  ROOT q = f32[9] pad(p, z), padding=1_2_1\n"),
            "%q (line 10) pad: declared shape f32[9] does not match the inferred shape f32[10]");
  EXPECT_EQ(Verify("  p = f32[4,3] parameter(0)\n  i = s32[] parameter(1)\n"
                   "  ROOT d = f32[2,3] dynamic-slice(p, i), dynamic_slice_sizes={2,3}\n"),
            "%d (line 10) dynamic-slice: expected 3 operands, got 2");
  EXPECT_EQ(Verify("  p = f32[4,3] parameter(0)\n  q = f32[4,2] parameter(1)\n"
                   "  ROOT c = f32[8,3] concatenate(p, q), dimensions={0}\n"),
            "%c (line 10) concatenate: operand 1 f32[4,2]{1,0} does not match operand 0 "
            "f32[4,3]{1,0} outside dimension 0");
  EXPECT_EQ(Verify("  ROOT i = s32[4] iota(), iota_dimension=1\n"),
            "%i (line 8) iota: iota_dimension=1 out of range for s32[4]{0}");
}

TEST(HloVerifierTest, ReduceTupleCallAndSelect) {
  EXPECT_EQ(Verify("  p = f32[4,3] parameter(0)\n  z = f32[] constant(0)\n"
                   "  ROOT r = f32[3] reduce(p, z), dimensions={1}, to_apply=sum\n"),
            "%r (line 10) reduce: declared shape f32[3] does not match the inferred shape f32[4]");
  EXPECT_EQ(Verify("  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=sum\n"),
            "%c (line 9) call: %sum takes 2 parameters, got 1 operands");
  EXPECT_EQ(Verify("  p = f32[] parameter(0)\n  t = (f32[], f32[]) tuple(p, p)\n"
                   "  ROOT g = f32[] get-tuple-element(t), index=2\n"),
            "%g (line 10) get-tuple-element: index=2 out of range for (f32[], f32[])");
  EXPECT_EQ(Verify("  p = f32[2] parameter(0)\n  c = f32[2] parameter(1)\n"
                   "  ROOT s = f32[2] select(c, p, p)\n"),
            "%s (line 10) select: predicate must be pred, got f32[2]{0}");
  EXPECT_EQ(Verify("  p = f32[2] parameter(0)\n  lo = f32[3] parameter(1)\n"
                   "  ROOT s = f32[2] clamp(lo, p, p)\n"),
            "%s (line 10) clamp: bound f32[3]{0} must be a scalar or the shape of the operand "
            "f32[2]{0}");
}

TEST(HloVerifierTest, ScatterAndCustomCall) {
  const std::string scatter =
      "  x = f32[8] parameter(0)\n  i = s32[1] parameter(1)\n  v = f32[] parameter(2)\n"
      "  ROOT s = f32[8] scatter(x, i, v), update_window_dims={}, inserted_window_dims={0}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=0, to_apply=sum\n";
  EXPECT_EQ(Verify(scatter), "OK");
  std::string bad = scatter;
  bad.replace(bad.find("inserted_window_dims={0}"), 24, "inserted_window_dims={}");
  EXPECT_EQ(Verify(bad),
            "%s (line 11) scatter: update_window_dims {} and inserted_window_dims {} must cover "
            "the operand's rank 1");
  EXPECT_EQ(Verify("  p = f32[2] parameter(0)\n  ROOT c = (f32[7], s8[0]) custom-call(p), "
                   "custom_call_target=\"anything\"\n"),
            "OK");
}

// ---- Hostile and extreme input (issue #13) ------------------------------------------------------

TEST(HloVerifierTest, PadOfMinInt64IsRejectedNotWrapped) {
  // low + high + size used to wrap: -2^63 + -2^63 + 4 = 4, so this verified and produced output.
  EXPECT_EQ(Verify("  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
                   "  ROOT q = f32[4] pad(p, z), "
                   "padding=-9223372036854775808_-9223372036854775808\n"),
            "%q (line 10) pad: padding -9223372036854775808_-9223372036854775808_0 is invalid for "
            "dimension 0 of size 4 (negative interior or size, or a size beyond int64)");
  EXPECT_EQ(
      Verify("  p = f32[3] parameter(0)\n  z = f32[] constant(0)\n"
             "  ROOT q = f32[1] pad(p, z), padding=0_0_4611686018427387904\n"),
      "%q (line 10) pad: padding 0_0_4611686018427387904 is invalid for dimension 0 of size 3 "
      "(negative interior or size, or a size beyond int64)");
  // Negative padding within bounds is still fine.
  EXPECT_EQ(Verify("  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
                   "  ROOT q = f32[3] pad(p, z), padding=-2_1\n"),
            "OK");
}

TEST(HloVerifierTest, ConcatenateWhoseSizeOverflowsIsRejected) {
  // Two 2^62-element arrays... four of them: the sum used to wrap to a negative size.
  EXPECT_EQ(Verify("  p = f32[4611686018427387904] parameter(0)\n"
                   "  ROOT c = f32[1] concatenate(p, p), dimensions={0}\n"),
            "%c (line 9) concatenate: the sizes along dimension 0 overflow int64 at operand 1 "
            "f32[4611686018427387904]{0}");
}

TEST(HloVerifierTest, SliceWithAHugeStrideHasOneElement) {
  // (limit - start + stride - 1) / stride overflowed for stride near 2^63.
  EXPECT_EQ(Verify("  p = f32[3] parameter(0)\n"
                   "  ROOT s = f32[1] slice(p), slice={[0:3:9223372036854775807]}\n"),
            "OK");
}

TEST(HloVerifierTest, ShapesWithMoreElementsThanInt64AreRejected) {
  EXPECT_EQ(Verify("  z = f32[] constant(0)\n"
                   "  ROOT b = f32[4294967296,4294967296] broadcast(z), dimensions={}\n"),
            "%b (line 9) broadcast: shape f32[4294967296,4294967296]{1,0} has more elements than "
            "fit in int64");
  EXPECT_EQ(Verify("  ROOT i = (f32[2], s32[3037000500,3037000500]) parameter(0)\n"),
            "%i (line 8) parameter: shape s32[3037000500,3037000500]{1,0} has more elements than "
            "fit in int64");
  // Bitcast's byte sizes overflow even when the element counts fit.
  EXPECT_EQ(Verify("  p = f64[2305843009213693952] parameter(0)\n"
                   "  ROOT b = s8[0] bitcast(p)\n"),
            "%b (line 9) bitcast: f64[2305843009213693952]{0} and s8[0]{0} have different sizes");
}

TEST(HloVerifierTest, ScatterUpdatesMustMatchIndicesAndFitTheOperand) {
  // updates' scatter dim (5) larger than the indices' (1): the interpreter read past them.
  EXPECT_EQ(Verify("  x = f32[8] parameter(0)\n  i = s32[1,1] parameter(1)\n"
                   "  v = f32[5] parameter(2)\n"
                   "  ROOT s = f32[8] scatter(x, i, v), update_window_dims={}, "
                   "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                   "index_vector_dim=1, to_apply=sum\n"),
            "%s (line 11) scatter: updates f32[5]{0} dimension 0 (size 5) does not match indices "
            "s32[1,1]{1,0} dimension 0");
  // A window of 9 into an operand of 8.
  EXPECT_EQ(Verify("  x = f32[8] parameter(0)\n  i = s32[1] parameter(1)\n"
                   "  v = f32[9] parameter(2)\n"
                   "  ROOT s = f32[8] scatter(x, i, v), update_window_dims={0}, "
                   "inserted_window_dims={}, scatter_dims_to_operand_dims={0}, "
                   "index_vector_dim=0, to_apply=sum\n"),
            "%s (line 11) scatter: updates f32[9]{0} window dimension 0 (size 9) exceeds operand "
            "f32[8]{0}");
  // A result that is not the operand's shape.
  EXPECT_EQ(Verify("  x = f32[8] parameter(0)\n  i = s32[1] parameter(1)\n"
                   "  v = f32[] parameter(2)\n"
                   "  ROOT s = f32[100] scatter(x, i, v), update_window_dims={}, "
                   "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                   "index_vector_dim=0, to_apply=sum\n"),
            "%s (line 11) scatter: declared shape f32[100] does not match the inferred shape "
            "f32[8]");
}

}  // namespace
}  // namespace fp8dot::hlo
