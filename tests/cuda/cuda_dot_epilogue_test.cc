// Bias, relu, gelu, alpha/beta with C, the output scale and amax, on each output type,
// against the exact CPU reference (src/cpu/dot_epilogue.cc is the definition).
#include "cuda/cuda_test_util.h"
#include "status_matchers.h"

namespace fp8dot {
namespace {

using testing::ExpectMatchesReference;

// cuBLASLt's GELU may evaluate tanh differently from the reference's f64 tanh: a few f32 ulps
// of the activation, far below the output rounding of any 16-bit type. Allowed: 2^-12.
constexpr double kGeluSlack = 0x1.0p-12;

TEST(CudaDotEpilogueTest, EveryEpilogueOnEachOutputType) {
  FP8_SKIP_WITHOUT_GPU();
  const Epilogue epilogues[] = {Epilogue::kBias, Epilogue::kRelu, Epilogue::kBiasRelu,
                                Epilogue::kGelu, Epilogue::kBiasGelu};
  const DType outputs[] = {DType::kBF16, DType::kF16, DType::kF32, DType::kF8E4M3FN};
  uint64_t seed = 500;
  for (Epilogue epilogue : epilogues) {
    for (DType out : outputs) {
      for (ScaleMode scale : {ScaleMode::kTensor, ScaleMode::kOuterVector}) {
        DotProblemOptions o;
        o.m = 96;
        o.n = 128;
        o.k = 256;
        o.output_type = out;
        o.epilogue = epilogue;
        o.lhs_scale_mode = o.rhs_scale_mode = scale;
        if (IsFp8(out)) o.output_scale = 1.0;
        o.seed = ++seed;
        StatusOr<DotProblem> p = MakeDotProblem(o);
        FP8_ASSERT_OK(p.status());
        const bool gelu = epilogue == Epilogue::kGelu || epilogue == Epilogue::kBiasGelu;
        ExpectMatchesReference(*p,
                               StrFormat("epilogue %s -> %s, %s scales", EpilogueName(epilogue),
                                         DTypeName(out), ScaleModeName(scale)),
                               gelu ? kGeluSlack : 0.0);
      }
    }
  }
}

TEST(CudaDotEpilogueTest, AlphaBetaAndC) {
  FP8_SKIP_WITHOUT_GPU();
  struct Case {
    DType out;
    double alpha, beta;
    Epilogue epilogue;
  };
  const Case cases[] = {
      {DType::kBF16, 0.5, 1.0, Epilogue::kDefault},
      {DType::kF16, 2.0, -0.75, Epilogue::kBiasRelu},
      {DType::kF32, -1.5, 0.25, Epilogue::kDefault},
      {DType::kF8E4M3FN, 1.0, 1.0, Epilogue::kDefault},  // C is bf16 with an FP8 D
      {DType::kF8E5M2, 0.75, -2.0, Epilogue::kBias},
  };
  uint64_t seed = 600;
  for (const Case& c : cases) {
    DotProblemOptions o;
    o.batch = 2;
    o.m = 64;
    o.n = 80;
    o.k = 192;
    o.output_type = c.out;
    o.alpha = c.alpha;
    o.beta = c.beta;
    o.epilogue = c.epilogue;
    o.lhs_scale_mode = o.rhs_scale_mode = ScaleMode::kTensor;
    if (IsFp8(c.out)) o.output_scale = 1.0;
    o.seed = ++seed;
    StatusOr<DotProblem> p = MakeDotProblem(o);
    FP8_ASSERT_OK(p.status());
    ExpectMatchesReference(*p, StrFormat("alpha=%g beta=%g C -> %s %s", c.alpha, c.beta,
                                         DTypeName(c.out), EpilogueName(c.epilogue)));
  }
}

// An FP8 D with an f16 C (the other type cuBLASLt allows next to an FP8 D).
TEST(CudaDotEpilogueTest, F16CWithFp8Output) {
  FP8_SKIP_WITHOUT_GPU();
  DotProblemOptions o;
  o.m = 64;
  o.n = 64;
  o.k = 256;
  o.output_type = DType::kF8E4M3FN;
  o.output_scale = 1.0;
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(o));
  FP8_ASSERT_OK_AND_ASSIGN(p.c, RandomTensor(DType::kF16, {64, 64}, Distribution::kSymmetric, 7));
  p.spec.c = TensorSpec::Of(*p.c);
  p.spec.beta = 0.5;
  ExpectMatchesReference(p, "f16 C, e4m3 D");
}

TEST(CudaDotEpilogueTest, AmaxAndOutputScale) {
  FP8_SKIP_WITHOUT_GPU();
  uint64_t seed = 700;
  for (DType out : {DType::kF8E4M3FN, DType::kF8E5M2}) {
    for (Epilogue epilogue : {Epilogue::kDefault, Epilogue::kBiasRelu}) {
      DotProblemOptions o;
      o.batch = 3;  // amax covers every batch entry
      o.m = 64;
      o.n = 128;
      o.k = 384;
      o.output_type = out;
      o.epilogue = epilogue;
      o.output_scale = 1.0;
      o.compute_amax = true;
      o.lhs_scale_mode = o.rhs_scale_mode = ScaleMode::kTensor;
      o.seed = ++seed;
      StatusOr<DotProblem> p = MakeDotProblem(o);
      FP8_ASSERT_OK(p.status());
      ExpectMatchesReference(
          *p, StrFormat("amax + scale_d -> %s %s", DTypeName(out), EpilogueName(epilogue)));
    }
  }
  // amax with a non-FP8 output (cuBLASLt may not fuse it: then fp8dot's epilogue computes it).
  DotProblemOptions o;
  o.output_type = DType::kBF16;
  o.compute_amax = true;
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem problem, MakeDotProblem(o));
  ExpectMatchesReference(problem, "amax with bf16 D");
}

// The output scale saturates instead of overflowing to NaN (e4m3) or inf (e5m2).
TEST(CudaDotEpilogueTest, Fp8OutputSaturates) {
  FP8_SKIP_WITHOUT_GPU();
  for (DType out : {DType::kF8E4M3FN, DType::kF8E5M2}) {
    DotProblemOptions o;
    o.m = 32;
    o.n = 32;
    o.k = 128;
    o.output_type = out;
    o.output_scale = 1e6;  // every |D| * scale_d is far beyond the type's max
    o.distribution = Distribution::kPositive;
    FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(o));
    StatusOr<testing::GpuRun> run = testing::RunOnGpu(p);
    FP8_ASSERT_OK(run.status());
    for (int64_t i = 0; i < run->result.output.element_count(); ++i) {
      ASSERT_EQ(run->result.output.GetPhysical(i), DTypeMaxFinite(out))
          << DTypeName(out) << " element " << i;
    }
  }
}

}  // namespace
}  // namespace fp8dot
