// HLO text in, rewritten HLO out: one test per pattern the FP8 GEMM rewriter fuses, and the
// near misses it must leave alone. Numerics against the interpreter: interpreter tests.
#include "fp8dot/hlo/fp8_gemm_rewriter.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "fp8dot/hlo/hlo_parser.h"
#include "fp8dot/hlo/hlo_verifier.h"
#include "hlo/hlo_test_util.h"
#include "fp8dot/hlo/gemm_backend_config.h"
#include "status_matchers.h"

namespace fp8dot::hlo {
namespace {

struct Rewritten {
  std::unique_ptr<HloModule> module;
  bool changed = false;
  std::vector<std::string> near_misses;
};

Rewritten Rewrite(const std::string& text) {
  Rewritten out;
  out.module = ParseOrDie(text);
  if (out.module == nullptr) return out;
  EXPECT_TRUE(VerifyHloModule(*out.module).ok());
  Fp8GemmRewriter rewriter;
  StatusOr<bool> changed = rewriter.Run(out.module.get());
  EXPECT_TRUE(changed.ok()) << changed.status().ToString();
  out.changed = changed.ok() && *changed;
  out.near_misses = rewriter.near_misses();
  Status verified = VerifyHloModule(*out.module);
  EXPECT_TRUE(verified.ok()) << verified.ToString() << "\n" << out.module->ToString();
  return out;
}

// The FP8 GEMM custom calls of `module` (none if it is null: Rewrite failed the test already).
std::vector<HloInstruction*> Fp8Gemms(const HloModule* module) {
  std::vector<HloInstruction*> gemms;
  if (module == nullptr) return gemms;
  for (HloComputation* computation : module->computations()) {
    for (HloInstruction* instruction : computation->instructions()) {
      if (instruction->opcode() == HloOpcode::kCustomCall &&
          instruction->custom_call_target() == kCublasLtMatmulF8Target) {
        gemms.push_back(instruction);
      }
    }
  }
  return gemms;
}

GemmBackendConfig ConfigOf(const HloInstruction* gemm) {
  StatusOr<GemmBackendConfig> config = ParseGemmBackendConfig(gemm->backend_config());
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  return config.ok() ? *config : GemmBackendConfig();
}

StatusOr<AccumulationMode> ResolvedMode(const HloInstruction* gemm) {
  FP8_ASSIGN_OR_RETURN(const GemmBackendConfig config,
                       ParseGemmBackendConfig(gemm->backend_config()));
  const std::optional<DType> lhs = ToDType(gemm->operand(0)->shape().element_type());
  const std::optional<DType> rhs = ToDType(gemm->operand(1)->shape().element_type());
  if (!lhs.has_value() || !rhs.has_value()) {
    return InvalidArgument("%s: operand types are not fp8dot types", gemm->name().c_str());
  }
  return ResolveAccumulation(*lhs, *rhs, config.precision_config);
}

// A scaled dot as XLA's gemm_rewriter_fp8_test writes it; `dequant_type` is the dequantisation
// type, `precision` is appended to the dot's attributes (e.g. ", operand_precision={...}", or "").
std::string ScaledDot(const std::string& dequant_type, const std::string& precision,
                      const std::string& lhs = "f8e4m3fn", const std::string& rhs = "f8e4m3fn") {
  return Substitute(R"(HloModule test
ENTRY test {
  x = $lhs[16,32] parameter(0)
  y = $rhs[32,16] parameter(1)
  x_c = $type[16,32] convert(x)
  y_c = $type[32,16] convert(y)
  x_scale = $type[] parameter(2)
  y_scale = $type[] parameter(3)
  x_scale_bcast = $type[16,32] broadcast(x_scale), dimensions={}
  y_scale_bcast = $type[32,16] broadcast(y_scale), dimensions={}
  x_unscaled = $type[16,32] multiply(x_c, x_scale_bcast)
  y_unscaled = $type[32,16] multiply(y_c, y_scale_bcast)
  ROOT out = $type[16,16] dot(x_unscaled, y_unscaled), lhs_contracting_dims={1}, rhs_contracting_dims={0}$precision
}
)",
                    {{"lhs", lhs}, {"rhs", rhs}, {"type", dequant_type}, {"precision", precision}});
}

TEST(Fp8GemmRewriterTest, FusesScaledDotAndDefaultPrecisionResolvesToFast) {
  Rewritten r = Rewrite(ScaledDot("f32", ""));
  ASSERT_TRUE(r.changed);
  std::vector<HloInstruction*> gemms = Fp8Gemms(r.module.get());
  ASSERT_EQ(gemms.size(), 1u);
  const HloInstruction* gemm = gemms[0];
  // (x, y, x_scale, y_scale): the FP8 parameters themselves, no convert left.
  ASSERT_EQ(gemm->operand_count(), 4);
  EXPECT_EQ(gemm->operand(0)->name(), "x");
  EXPECT_EQ(gemm->operand(1)->name(), "y");
  EXPECT_EQ(gemm->operand(2)->name(), "x_scale");
  EXPECT_EQ(gemm->operand(3)->name(), "y_scale");
  EXPECT_EQ(gemm->shape().ToString(), "(f32[16,16]{1,0}, s8[0]{0})");
  const HloInstruction* root = r.module->entry_computation()->root_instruction();
  EXPECT_EQ(root->opcode(), HloOpcode::kGetTupleElement);
  EXPECT_EQ(root->operand(0), gemm);
  const GemmBackendConfig config = ConfigOf(gemm);
  EXPECT_EQ(config.alpha_real, 1.0);
  EXPECT_EQ(config.beta, 0.0);
  EXPECT_EQ(config.epilogue, Epilogue::kDefault);
  EXPECT_EQ(config.dot_dimension_numbers.lhs_contracting_dimensions, (std::vector<int64_t>{1}));
  EXPECT_EQ(config.dot_dimension_numbers.rhs_contracting_dimensions, (std::vector<int64_t>{0}));
  FP8_EXPECT_OK_AND_EQ(ResolvedMode(gemm), AccumulationMode::kFp8Fast);
  // Nothing of the dequantisation survives.
  EXPECT_EQ(r.module->ToString().find("multiply"), std::string::npos) << r.module->ToString();
  EXPECT_NE(gemm->backend_config().find("\"operand_precision\":[\"DEFAULT\",\"DEFAULT\"]"),
            std::string::npos);
}

TEST(Fp8GemmRewriterTest, HighestPrecisionIsCarriedAndResolvesToPromoted) {
  Rewritten r = Rewrite(ScaledDot("f32", ", operand_precision={highest,highest}"));
  ASSERT_EQ(Fp8Gemms(r.module.get()).size(), 1u);
  FP8_EXPECT_OK_AND_EQ(ResolvedMode(Fp8Gemms(r.module.get())[0]), AccumulationMode::kFp8Promoted);
  r = Rewrite(ScaledDot("f32", ", operand_precision={default,highest}"));
  ASSERT_EQ(Fp8Gemms(r.module.get()).size(), 1u);
  FP8_EXPECT_OK_AND_EQ(ResolvedMode(Fp8Gemms(r.module.get())[0]), AccumulationMode::kFp8Promoted);
  r = Rewrite(ScaledDot("f32",
                        ", operand_precision={highest,highest}, "
                        "algorithm=dot_any_f8_any_f8_f32_fast_accum"));
  ASSERT_EQ(Fp8Gemms(r.module.get()).size(), 1u);
  FP8_EXPECT_OK_AND_EQ(ResolvedMode(Fp8Gemms(r.module.get())[0]), AccumulationMode::kFp8Fast);
}

TEST(Fp8GemmRewriterTest, FusesBf16DequantisationWhichXlaLeavesAlone) {
  Rewritten r = Rewrite(ScaledDot("bf16", ""));
  ASSERT_EQ(Fp8Gemms(r.module.get()).size(), 1u);
  const HloInstruction* gemm = Fp8Gemms(r.module.get())[0];
  EXPECT_EQ(gemm->shape().tuple_shapes(0).ToString(), "bf16[16,16]{1,0}");
  // bf16 scales are converted to the f32 scalars cuBLASLt takes.
  EXPECT_EQ(gemm->operand(2)->opcode(), HloOpcode::kConvert);
  EXPECT_EQ(gemm->operand(2)->shape().ToString(), "f32[]");
}

TEST(Fp8GemmRewriterTest, FusesE4m3xE5m2AndLeavesE5m2xE5m2WithAReason) {
  Rewritten mixed = Rewrite(ScaledDot("f32", "", "f8e4m3fn", "f8e5m2"));
  EXPECT_EQ(Fp8Gemms(mixed.module.get()).size(), 1u);
  Rewritten both = Rewrite(ScaledDot("f32", "", "f8e5m2", "f8e5m2"));
  EXPECT_FALSE(both.changed);
  ASSERT_EQ(both.near_misses.size(), 1u);
  EXPECT_EQ(both.near_misses[0],
            "%out (line 13): stays a dot: f8e5m2 x f8e5m2 has no cuBLASLt FP8 GEMM (it runs as "
            "the dot it is)");
}

TEST(Fp8GemmRewriterTest, DividedScalesBecomeReciprocals) {
  std::string text = ScaledDot("f32", "");
  text.replace(text.find("multiply(x_c"), 8, "divide  ");
  Rewritten r = Rewrite(text);
  ASSERT_EQ(Fp8Gemms(r.module.get()).size(), 1u);
  const HloInstruction* a_scale = Fp8Gemms(r.module.get())[0]->operand(2);
  ASSERT_EQ(a_scale->opcode(), HloOpcode::kDivide);
  EXPECT_EQ(a_scale->operand(0)->literal().values[0], 1.0);
  EXPECT_EQ(a_scale->operand(1)->name(), "x_scale");
}

TEST(Fp8GemmRewriterTest, DirectFp8DotAndUnscaledConvertsFuseWithUnitScales) {
  Rewritten r = Rewrite(R"(HloModule test
ENTRY test {
  x = f8e4m3fn[16,32] parameter(0)
  y = f8e4m3fn[32,16] parameter(1)
  ROOT out = f32[16,16] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_EQ(Fp8Gemms(r.module.get()).size(), 1u);
  const HloInstruction* gemm = Fp8Gemms(r.module.get())[0];
  EXPECT_EQ(gemm->operand(2)->literal().values[0], 1.0);
  EXPECT_EQ(gemm->operand(3)->literal().values[0], 1.0);
}

TEST(Fp8GemmRewriterTest, MovesDataMovementOntoTheFp8Values) {
  Rewritten r = Rewrite(R"(HloModule test
ENTRY test {
  x = f8e4m3fn[32,16] parameter(0)
  y = f8e4m3fn[2,16,16] parameter(1)
  x_f = f32[32,16] convert(x)
  y_f = f32[2,16,16] convert(y)
  s = f32[] parameter(2)
  s_x = f32[32,16] broadcast(s), dimensions={}
  s_y = f32[2,16,16] broadcast(s), dimensions={}
  x_dq = f32[32,16] multiply(x_f, s_x)
  y_dq = f32[2,16,16] multiply(y_f, s_y)
  x_t = f32[16,32] transpose(x_dq), dimensions={1,0}
  y_r = f32[32,16] reshape(y_dq)
  ROOT out = f32[16,16] dot(x_t, y_r), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_EQ(Fp8Gemms(r.module.get()).size(), 1u);
  const HloInstruction* gemm = Fp8Gemms(r.module.get())[0];
  EXPECT_EQ(gemm->operand(0)->opcode(), HloOpcode::kTranspose);
  EXPECT_EQ(gemm->operand(0)->shape().ToString(), "f8e4m3fn[16,32]{1,0}");
  EXPECT_EQ(gemm->operand(0)->operand(0)->name(), "x");
  EXPECT_EQ(gemm->operand(1)->opcode(), HloOpcode::kReshape);
  EXPECT_EQ(gemm->operand(1)->shape().ToString(), "f8e4m3fn[32,16]{1,0}");
}

TEST(Fp8GemmRewriterTest, FusesAlphaVectorBiasAndRelu) {
  Rewritten r = Rewrite(R"(HloModule test
ENTRY test {
  x = f8e4m3fn[16,32] parameter(0)
  y = f8e4m3fn[32,16] parameter(1)
  bias = f32[16] parameter(2)
  d = f32[16,16] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  three = f32[] constant(3)
  three_b = f32[16,16] broadcast(three), dimensions={}
  d1 = f32[16,16] multiply(d, three_b)
  bias_b = f32[16,16] broadcast(bias), dimensions={1}
  d2 = f32[16,16] add(d1, bias_b)
  zero = f32[] constant(0)
  zero_b = f32[16,16] broadcast(zero), dimensions={}
  ROOT d3 = f32[16,16] maximum(d2, zero_b)
})");
  ASSERT_EQ(Fp8Gemms(r.module.get()).size(), 1u);
  const HloInstruction* gemm = Fp8Gemms(r.module.get())[0];
  const GemmBackendConfig config = ConfigOf(gemm);
  EXPECT_EQ(config.alpha_real, 3.0);
  EXPECT_EQ(config.epilogue, Epilogue::kBiasRelu);
  ASSERT_EQ(gemm->operand_count(), 5);  // x, y, 1, 1, bias
  EXPECT_EQ(gemm->operand(4)->name(), "bias");
  EXPECT_EQ(r.module->entry_computation()->root_instruction()->operand(0), gemm);
}

std::string ReadPassesTestdata(const std::string& name) {
  std::ifstream file(std::string(FP8DOT_SOURCE_DIR) + "/tests/hlo/passes/testdata/" + name);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// jax.nn.gelu(approximate=True) after a bias, as jax 0.10 exports it (x^3 as x*x*x, the bias
// behind reshape/broadcast chains).
TEST(Fp8GemmRewriterTest, FusesJaxBiasAndTanhGelu) {
  Rewritten r = Rewrite(ReadPassesTestdata("jax_bias_gelu.hlo"));
  ASSERT_EQ(Fp8Gemms(r.module.get()).size(), 1u);
  const HloInstruction* gemm = Fp8Gemms(r.module.get())[0];
  EXPECT_EQ(ConfigOf(gemm).epilogue, Epilogue::kBiasGelu);
  EXPECT_EQ(r.module->entry_computation()->root_instruction()->operand(0), gemm);
  EXPECT_EQ(r.module->ToString().find("tanh"), std::string::npos);
}

// XLA's own test form (gemm_rewriter_fp8_test: ScaledABUnscaledDApproxGeluActivationF8): bf16
// dequantisation, d * (d * d) for the cube.
TEST(Fp8GemmRewriterTest, FusesXlasGeluForm) {
  Rewritten r = Rewrite(R"(HloModule test
ENTRY test {
  x = f8e4m3fn[16,32] parameter(0)
  y = f8e4m3fn[32,16] parameter(1)
  x_bf16 = bf16[16,32] convert(x)
  y_bf16 = bf16[32,16] convert(y)
  dot = bf16[16,16] dot(x_bf16, y_bf16), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  mul.0 = bf16[16,16] multiply(dot, dot)
  mul.1 = bf16[16,16] multiply(dot, mul.0)
  const.0 = bf16[] constant(0.044715)
  bcast.0 = bf16[16,16] broadcast(const.0), dimensions={}
  mul.2 = bf16[16,16] multiply(mul.1, bcast.0)
  add.0 = bf16[16,16] add(dot, mul.2)
  const.1 = bf16[] constant(0.797884583)
  bcast.1 = bf16[16,16] broadcast(const.1), dimensions={}
  mul.3 = bf16[16,16] multiply(add.0, bcast.1)
  tanh = bf16[16,16] tanh(mul.3)
  const.2 = bf16[] constant(1)
  bcast.2 = bf16[16,16] broadcast(const.2), dimensions={}
  add.2 = bf16[16,16] add(tanh, bcast.2)
  const.3 = bf16[] constant(0.5)
  bcast.3 = bf16[16,16] broadcast(const.3), dimensions={}
  mul.4 = bf16[16,16] multiply(add.2, bcast.3)
  ROOT out = bf16[16,16] multiply(dot, mul.4)
})");
  // Fused as XLA fuses it; cuBLASLt's GELU then runs in f32 instead of the HLO's bf16 steps.
  ASSERT_EQ(Fp8Gemms(r.module.get()).size(), 1u);
  EXPECT_EQ(ConfigOf(Fp8Gemms(r.module.get())[0]).epilogue, Epilogue::kGelu);
  EXPECT_EQ(r.module->entry_computation()->root_instruction()->operand(0),
            Fp8Gemms(r.module.get())[0]);
}

TEST(Fp8GemmRewriterTest, GeluWhosePreActivationHasAnotherUserIsNotFused) {
  std::string text = ReadPassesTestdata("jax_bias_gelu.hlo");
  // Also return the pre-activation: fusing GELU would lose it.
  text.replace(text.find("ROOT mul.13 = f32[16,16]{1,0} multiply(add.11, mul.12)"),
               std::string("ROOT mul.13 = f32[16,16]{1,0} multiply(add.11, mul.12)").size(),
               "mul.13 = f32[16,16]{1,0} multiply(add.11, mul.12)\n  ROOT t = (f32[16,16]{1,0}, "
               "f32[16,16]{1,0}) tuple(mul.13, add.11)");
  text.replace(text.find("->f32[16,16]{1,0}}"), std::string("->f32[16,16]{1,0}}").size(),
               "->(f32[16,16]{1,0}, f32[16,16]{1,0})}");
  Rewritten r = Rewrite(text);
  ASSERT_EQ(Fp8Gemms(r.module.get()).size(), 1u);
  EXPECT_EQ(ConfigOf(Fp8Gemms(r.module.get())[0]).epilogue, Epilogue::kBias);
  EXPECT_NE(r.module->ToString().find("tanh"), std::string::npos);
}

TEST(Fp8GemmRewriterTest, BiasAlongTheRowsIsNotAVectorBias) {
  // broadcast over dim 0 adds one value per row: cuBLASLt's bias is per column.
  Rewritten r = Rewrite(R"(HloModule test
ENTRY test {
  x = f8e4m3fn[16,32] parameter(0)
  y = f8e4m3fn[32,16] parameter(1)
  bias = f32[16] parameter(2)
  d = f32[16,16] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bias_b = f32[16,16] broadcast(bias), dimensions={0}
  ROOT d2 = f32[16,16] add(d, bias_b)
})");
  ASSERT_EQ(Fp8Gemms(r.module.get()).size(), 1u);
  EXPECT_EQ(ConfigOf(Fp8Gemms(r.module.get())[0]).epilogue, Epilogue::kDefault);
  EXPECT_EQ(r.module->entry_computation()->root_instruction()->opcode(), HloOpcode::kAdd);
}

TEST(Fp8GemmRewriterTest, FoldsTheOutputConvertIntoTheGemm) {
  // The fixture JAX exported: an f32 dot converted to bf16. cuBLASLt rounds its f32 result to
  // D's type once, as the convert does, so the GEMM writes bf16 and the convert goes.
  Rewritten r = Rewrite(ReadTestdata("jax_fp8_scaled_dot.hlo"));
  ASSERT_EQ(Fp8Gemms(r.module.get()).size(), 1u);
  const HloInstruction* gemm = Fp8Gemms(r.module.get())[0];
  EXPECT_EQ(gemm->shape().tuple_shapes(0).ToString(), "bf16[16,64]{1,0}");
  EXPECT_EQ(r.module->entry_computation()->root_instruction()->operand(0), gemm);
  EXPECT_EQ(r.module->ToString().find(" convert("), std::string::npos) << r.module->ToString();
}

TEST(Fp8GemmRewriterTest, FusesMatrixBiasAsBetaOne) {
  Rewritten r = Rewrite(R"(HloModule test
ENTRY test {
  x = f8e4m3fn[16,32] parameter(0)
  y = f8e4m3fn[32,16] parameter(1)
  c = f32[16,16] parameter(2)
  d = f32[16,16] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT out = f32[16,16] add(d, c)
})");
  ASSERT_EQ(Fp8Gemms(r.module.get()).size(), 1u);
  const HloInstruction* gemm = Fp8Gemms(r.module.get())[0];
  EXPECT_EQ(ConfigOf(gemm).beta, 1.0);
  EXPECT_EQ(gemm->operand(2)->name(), "c");  // (x, y, C, a_scale, b_scale)
}

// The JAX-style training step: the forward dot fuses its amax and its FP8 quantisation (through
// jnp.clip's call) and runs fast; both gradient dots stay HIGHEST and run promoted.
TEST(Fp8GemmRewriterTest, TrainStepForwardFastWithAmaxAndQuantisationGradientsPromoted) {
  Rewritten r = Rewrite(ReadTestdata("jax_fp8_train_step.hlo"));
  std::vector<HloInstruction*> gemms = Fp8Gemms(r.module.get());
  ASSERT_EQ(gemms.size(), 3u) << r.module->ToString();
  int fast = 0, promoted = 0;
  for (const HloInstruction* gemm : gemms) {
    const GemmBackendConfig config = ConfigOf(gemm);
    FP8_ASSERT_OK_AND_ASSIGN(const AccumulationMode mode, ResolvedMode(gemm));
    if (mode == AccumulationMode::kFp8Fast) {
      ++fast;
      EXPECT_TRUE(config.damax_output);
      EXPECT_EQ(gemm->shape().ToString(), "(f8e4m3fn[2,16,64]{2,1,0}, f32[], s8[0]{0})");
      // (x, w, x_scale, w_scale, 1 / y_scale): the HLO divides by y_scale.
      ASSERT_EQ(gemm->operand_count(), 5);
      EXPECT_EQ(gemm->operand(4)->opcode(), HloOpcode::kDivide);
    } else {
      ++promoted;
      EXPECT_EQ(mode, AccumulationMode::kFp8Promoted);
      EXPECT_FALSE(config.damax_output);
      EXPECT_EQ(gemm->operand(0)->shape().element_type(), PrimitiveType::kF8E5M2);  // dy
    }
  }
  EXPECT_EQ(fast, 1);
  EXPECT_EQ(promoted, 2);
  // The reduce and the clip are gone: the tuple takes the GEMM's outputs directly.
  const std::string text = r.module->ToString();
  EXPECT_EQ(text.find(" reduce("), std::string::npos) << text;
  EXPECT_EQ(text.find("to_apply=clip"), std::string::npos) << text;
}

// Exported by jax 0.10.2 (examples/jax/export_modules.py, scaled_dot_fp8_output): jnp.clip is a
// call to maximum/minimum, and amax reads the dot before the output scale.
TEST(Fp8GemmRewriterTest, RealJaxExportFusesQuantisationThroughClipAndAmax) {
  std::ifstream file(std::string(FP8DOT_SOURCE_DIR) +
                     "/tests/hlo/passes/testdata/jax_scaled_dot_fp8_output.hlo");
  std::stringstream text;
  text << file.rdbuf();
  Rewritten r = Rewrite(text.str());
  ASSERT_EQ(Fp8Gemms(r.module.get()).size(), 1u) << r.module->ToString();
  const HloInstruction* gemm = Fp8Gemms(r.module.get())[0];
  EXPECT_EQ(gemm->shape().ToString(), "(f8e4m3fn[64,128]{1,0}, f32[], s8[0]{0})");
  EXPECT_TRUE(ConfigOf(gemm).damax_output);
  FP8_EXPECT_OK_AND_EQ(ResolvedMode(gemm), AccumulationMode::kFp8Fast);
  const HloInstruction* root = r.module->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kTuple);
  EXPECT_EQ(root->operand(0)->operand(0), gemm);
  EXPECT_EQ(root->operand(1)->operand(0), gemm);
  EXPECT_TRUE(r.near_misses.empty());
}

TEST(Fp8GemmRewriterTest, InlineMinMaxClipIsAQuantisation) {
  Rewritten r = Rewrite(R"(HloModule test
ENTRY test {
  x = f8e4m3fn[16,32] parameter(0)
  y = f8e4m3fn[32,16] parameter(1)
  s = f32[] parameter(2)
  d = f32[16,16] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s_b = f32[16,16] broadcast(s), dimensions={}
  d_s = f32[16,16] multiply(s_b, d)
  hi = f32[] constant(57344)
  hi_b = f32[16,16] broadcast(hi), dimensions={}
  lo = f32[] constant(-57344)
  lo_b = f32[16,16] broadcast(lo), dimensions={}
  d_min = f32[16,16] minimum(d_s, hi_b)
  d_clip = f32[16,16] maximum(lo_b, d_min)
  ROOT q = f8e5m2[16,16] convert(d_clip)
})");
  ASSERT_EQ(Fp8Gemms(r.module.get()).size(), 1u);
  const HloInstruction* gemm = Fp8Gemms(r.module.get())[0];
  EXPECT_EQ(gemm->shape().tuple_shapes(0).ToString(), "f8e5m2[16,16]{1,0}");
  EXPECT_EQ(gemm->operand(4)->name(), "s");  // multiplied, not divided: scale_d = s
}

TEST(Fp8GemmRewriterTest, FlaxQuantiseDequantiseChainRunsTheDotInFp8) {
  // Flax fp8_ops: q = convert<f8>(clamp(x / s)), then convert(q) * s feeds the dot.
  Rewritten r = Rewrite(R"(HloModule test
ENTRY test {
  x = f32[16,32] parameter(0)
  w = f32[32,16] parameter(1)
  s = f32[] parameter(2)
  s_x = f32[16,32] broadcast(s), dimensions={}
  x_s = f32[16,32] divide(x, s_x)
  lo = f32[] constant(-448)
  hi = f32[] constant(448)
  lo_b = f32[16,32] broadcast(lo), dimensions={}
  hi_b = f32[16,32] broadcast(hi), dimensions={}
  x_c = f32[16,32] clamp(lo_b, x_s, hi_b)
  x_q = f8e4m3fn[16,32] convert(x_c)
  x_f = f32[16,32] convert(x_q)
  x_dq = f32[16,32] multiply(x_f, s_x)
  s_w = f32[32,16] broadcast(s), dimensions={}
  w_s = f32[32,16] divide(w, s_w)
  lo_w = f32[32,16] broadcast(lo), dimensions={}
  hi_w = f32[32,16] broadcast(hi), dimensions={}
  w_c = f32[32,16] clamp(lo_w, w_s, hi_w)
  w_q = f8e4m3fn[32,16] convert(w_c)
  w_f = f32[32,16] convert(w_q)
  w_dq = f32[32,16] multiply(w_f, s_w)
  ROOT out = f32[16,16] dot(x_dq, w_dq), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_EQ(Fp8Gemms(r.module.get()).size(), 1u);
  const HloInstruction* gemm = Fp8Gemms(r.module.get())[0];
  EXPECT_EQ(gemm->operand(0)->name(), "x_q");  // quantised once, consumed as FP8
  EXPECT_EQ(gemm->operand(1)->name(), "w_q");
}

TEST(Fp8GemmRewriterTest, InvalidEpilogueIsDroppedAndReported) {
  // An f32 bias cannot go with an FP8 output (cuBLASLt wants bf16/f16 there): the rewriter
  // keeps the quantisation out of the GEMM and says why.
  Rewritten r = Rewrite(R"(HloModule test
ENTRY test {
  x = f8e4m3fn[16,32] parameter(0)
  y = f8e4m3fn[32,16] parameter(1)
  bias = f32[16] parameter(2)
  s = f32[] parameter(3)
  d = f32[16,16] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bias_b = f32[16,16] broadcast(bias), dimensions={1}
  d1 = f32[16,16] add(d, bias_b)
  s_b = f32[16,16] broadcast(s), dimensions={}
  d2 = f32[16,16] multiply(d1, s_b)
  lo = f32[] constant(-448)
  hi = f32[] constant(448)
  lo_b = f32[16,16] broadcast(lo), dimensions={}
  hi_b = f32[16,16] broadcast(hi), dimensions={}
  c = f32[16,16] clamp(lo_b, d2, hi_b)
  ROOT q = f8e4m3fn[16,16] convert(c)
})");
  ASSERT_EQ(Fp8Gemms(r.module.get()).size(), 1u);
  const HloInstruction* gemm = Fp8Gemms(r.module.get())[0];
  EXPECT_EQ(gemm->shape().tuple_shapes(0).element_type(), PrimitiveType::kF32);
  EXPECT_EQ(ConfigOf(gemm).epilogue, Epilogue::kBias);
  ASSERT_EQ(r.near_misses.size(), 1u);
  EXPECT_EQ(r.near_misses[0],
            "%d (line 7): fused with a shorter epilogue: bias must be bf16 or f16 when the "
            "output is f8e4m3fn, got f32");
}

TEST(Fp8GemmRewriterTest, NonFp8DotsAreNotTouchedOrReported) {
  Rewritten r = Rewrite(R"(HloModule test
ENTRY test {
  x = bf16[16,32] parameter(0)
  y = bf16[32,16] parameter(1)
  ROOT out = f32[16,16] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  EXPECT_FALSE(r.changed);
  EXPECT_TRUE(r.near_misses.empty());
}

TEST(Fp8GemmRewriterTest, HalfFp8DotIsReported) {
  Rewritten r = Rewrite(R"(HloModule test
ENTRY test {
  x = f8e4m3fn[16,32] parameter(0)
  x_f = f32[16,32] convert(x)
  y = f32[32,16] parameter(1)
  ROOT out = f32[16,16] dot(x_f, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  EXPECT_FALSE(r.changed);
  ASSERT_EQ(r.near_misses.size(), 1u);
  EXPECT_EQ(r.near_misses[0],
            "%out (line 6): stays a dot: rhs: operand y is not FP8 data (no convert from an FP8 "
            "type)");
}

TEST(GemmBackendConfigTest, RoundTripsAndReadsXlaOutput) {
  GemmBackendConfig config;
  config.alpha_real = 2.5;
  config.beta = 1.0;
  config.dot_dimension_numbers = {{0}, {0}, {2}, {1}};
  config.precision_config = {{Precision::kHighest, Precision::kDefault}, Algorithm::kAnyF8AnyF8F32};
  config.epilogue = Epilogue::kBiasGelu;
  config.damax_output = true;
  FP8_ASSERT_OK_AND_ASSIGN(GemmBackendConfig back, ParseGemmBackendConfig(config.ToJson()));
  EXPECT_EQ(back.alpha_real, 2.5);
  EXPECT_EQ(back.beta, 1.0);
  EXPECT_EQ(back.dot_dimension_numbers.rhs_contracting_dimensions, (std::vector<int64_t>{1}));
  EXPECT_EQ(back.dot_dimension_numbers.lhs_batch_dimensions, (std::vector<int64_t>{0}));
  EXPECT_EQ(back.precision_config.operand_precision[0], Precision::kHighest);
  EXPECT_EQ(back.precision_config.algorithm, Algorithm::kAnyF8AnyF8F32);
  EXPECT_EQ(back.epilogue, Epilogue::kBiasGelu);
  EXPECT_TRUE(back.damax_output);
  // As XLA prints it (field order differs, ints as strings).
  FP8_ASSERT_OK_AND_ASSIGN(
      GemmBackendConfig xla,
      ParseGemmBackendConfig(
          R"({"operation_queue_id":"0","wait_on_operation_queues":[],"gemm_backend_config":{"alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["1"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},"alpha_imag":0,"precision_config":{"operand_precision":["DEFAULT","DEFAULT"],"algorithm":"ALG_UNSET"},"epilogue":"DEFAULT","lhs_stride":"512","rhs_stride":"512","grad_x":false,"grad_y":false,"damax_output":false},"force_earliest_schedule":false})"));
  EXPECT_EQ(xla.dot_dimension_numbers.rhs_contracting_dimensions, (std::vector<int64_t>{1}));
  EXPECT_EQ(xla.lhs_stride, 512);
}

TEST(GemmBackendConfigTest, MalformedConfigsNameTheProblem) {
  EXPECT_EQ(ParseGemmBackendConfig("{").status().message(),
            "backend_config is not a JSON object: {");
  EXPECT_EQ(ParseGemmBackendConfig(R"({"gemm_backend_config":{}})").status().message(),
            "gemm_backend_config: missing dot_dimension_numbers");
  EXPECT_EQ(
      ParseGemmBackendConfig(R"({"dot_dimension_numbers":{"lhs_contracting_dimensions":["x"]}})")
          .status()
          .message(),
      "gemm_backend_config: lhs_contracting_dimensions holds 'x', not an integer");
  EXPECT_EQ(ParseGemmBackendConfig(R"({"dot_dimension_numbers":{},"epilogue":"SWISH"})")
                .status()
                .message(),
            "unknown epilogue 'SWISH' (expected none, bias, relu, bias_relu, gelu or bias_gelu)");
}

}  // namespace
}  // namespace fp8dot::hlo
