// CudaDotPlan::Explain(): what the plan does, in the order it happens, for `fp8dot dot --explain`.
#include "cuda/dot_plan.h"

namespace fp8dot::cuda {
namespace {

void Line(std::string& out, const std::string& text) { out += "  " + text + "\n"; }

std::string Header(const CudaDotPlan::Impl& plan) {
  const DotSpec& spec = plan.spec;
  std::string out = "cuda plan: " + plan.context + "\n";
  Line(out, StrFormat("accumulation: %s, from operand_precision={%s,%s} algorithm=%s",
                      AccumulationModeName(plan.info.dot.accumulation),
                      PrecisionName(spec.precision_config.operand_precision[0]),
                      PrecisionName(spec.precision_config.operand_precision[1]),
                      AlgorithmName(spec.precision_config.algorithm)));
  Line(out, "engine: " + plan.info.engine +
                (plan.engine_reason.empty() ? "" : " (" + plan.engine_reason + ")"));
  return out;
}

// Where the own plan's tile came from: the autotune race (its winner; the engine line has the
// times), CudaDotOptions::own_tile, or the cost model for the plan's GPU.
std::string TileChoice(const CudaDotPlan::Impl& plan) {
  const OwnGemm& own = *plan.own;
  if (plan.info.autotune.ran) return "tile choice: the autotune race's fastest (engine: above)";
  if (!plan.options.own_tile.empty()) {
    return StrFormat("tile choice: CudaDotOptions::own_tile '%s'", plan.options.own_tile.c_str());
  }
  const double dram = own.device.dram_bytes_per_clock;
  if (dram <= 0) {
    return StrFormat(
        "tile choice: the cost model's for %d SMs (the driver reports no DRAM bandwidth: left "
        "out)",
        own.device.sm_count);
  }
  return StrFormat(
      "tile choice: the cost model's for %d SMs and DRAM at %.0f bytes per SM clock (peak)",
      own.device.sm_count, dram);
}

std::string ExplainOwnPlan(const CudaDotPlan::Impl& plan) {
  const OwnGemm& own = *plan.own;
  std::string out = Header(plan);
  Line(out, StrFormat("GEMM: D[M,N] = A[M,K] . B[N,K]^T, both K-major; tile %s x 128 (K), "
                      "persistent grid of up to %d CTAs",
                      own.tile.ToString().c_str(), own.device.sm_count));
  Line(out, !own.dependent_launch ? "launch: plain (sm_count_target keeps SMs for other streams)"
            : own.lets_next_grid_start_early
                ? "launch: programmatic dependent (its set-up overlaps the kernel before it); lets "
                  "the next kernel start on the SMs it frees as it finishes"
                : "launch: programmatic dependent (its set-up overlaps the kernel before it); the "
                  "next kernel starts as it ends (early at M <= 128)");
  Line(out, TileChoice(plan));
  Line(out, std::string("schedule: ") + MathScheduleDescription(MathScheduleOf(
                                            own.tile.block_m, own.tile.block_n, own.scaling)));
  Line(out, plan.lhs.how);
  Line(out, plan.rhs.how);
  const auto source = [](const PreparedScale& scale) {
    return scale.relayout ? "reordered on the device at every run" : "read in place";
  };
  Line(out,
       StrFormat("scales: lhs %s (row stride %lld, block stride %lld) %s, rhs %s (column "
                 "stride %lld, block stride %lld) %s (stride 0: one scale)",
                 ScaleModeName(plan.spec.lhs_scale.mode), static_cast<long long>(own.lhs_scale.row),
                 static_cast<long long>(own.lhs_scale.block), source(plan.lhs_scale),
                 ScaleModeName(plan.spec.rhs_scale.mode), static_cast<long long>(own.rhs_scale.row),
                 static_cast<long long>(own.rhs_scale.block), source(plan.rhs_scale)));
  if (own.scaling == GemmScaling::kOuter) {
    Line(out, StrFormat("accumulation: the wgmma partial sum of every %d K promoted into f32 "
                        "registers (acc += partial), D = f32(acc * f32(scale_a * scale_b)) at "
                        "the end (emulated with Fp8AccumulatorModel::promotion_interval %d)",
                        plan.info.promotion_interval, plan.info.promotion_interval));
  } else {
    // The layout decides, as long as the run's scale pointers are 16-byte aligned (the launch
    // shape has none: they count as aligned).
    Line(out, BlockScaledGemmStagesScalesByCopyEngine(OwnGemmLaunchShape(own, plan.info.dot))
                  ? "scale staging: each stage's scales arrive with its operand tiles (lhs "
                    "scales and rhs 1x128 scales through the copy engine, an rhs 128x128 scale "
                    "by a cp.async of the scale warp; producer warps copy them instead if a "
                    "run's scale pointers are not 16-byte aligned)"
                  : "scale staging: producer warps copy each stage's scales (cp.async); the copy "
                    "engine would bring them with the operand tiles from M-major lhs scales "
                    "(and N-major rhs 1x128 scales), rows 16-byte aligned");
    Line(out,
         "accumulation: each 128-K block's wgmma partial sum promoted into f32 registers: "
         "acc = fma(partial, f32(scale_a * scale_b), acc), one rounding (emulated with "
         "Fp8AccumulatorModel::fused_promotion)");
  }
  Line(out, StrFormat("epilogue: D staged in shared memory and stored by the copy engine as %s "
                      "(from the registers when its rows are not 16-byte aligned)",
                      DTypeName(plan.spec.output_type)));
  const std::vector<int64_t> ends = KSliceEnds(plan.info.dot.k, plan.info.k_split);
  if (ends.size() > 1) {
    Line(out, StrFormat("split-K: K cut into %zu runs of up to %lld K-elements, each promoted on "
                        "its own by its own CTA; the last to finish adds them in order (f32) and "
                        "writes D (workspace %zu bytes)",
                        ends.size(), static_cast<long long>(ends.front()), plan.workspace.size()));
  } else {
    Line(out, "split-K: none (one accumulation over all of K per output)");
  }
  return out;
}

}  // namespace

std::string ExplainPlan(const CudaDotPlan::Impl& plan) {
  if (plan.own) return ExplainOwnPlan(plan);
  const DotSpec& spec = plan.spec;
  const CanonicalDot& dot = plan.info.dot;
  const LtMatmulConfig& config = plan.gemm->config();
  std::string out = Header(plan);
  if (plan.upcast) {
    Line(out,
         "type pair: e5m2 x e5m2 has no cuBLASLt FP8 GEMM -> upcast GEMM (" +
             std::string(plan.scales_in_gather ? "f32, block scales folded in" : "f16, exact") +
             "), not FP8 speed");
  } else if (plan.info.native_fp8) {
    Line(out, "type pair: native cuBLASLt FP8 GEMM");
  }
  Line(out,
       StrFormat("GEMM: D^T[N,M] = B^T . A^T column-major: cuBLASLt A = rhs, B = lhs; "
                 "m=%lld n=%lld k=%lld%s batch=%lld",
                 static_cast<long long>(config.m), static_cast<long long>(config.n),
                 static_cast<long long>(config.k),
                 plan.lt.k != dot.k
                     ? StrFormat(" (K padded from %lld)", static_cast<long long>(dot.k)).c_str()
                     : "",
                 static_cast<long long>(config.batch)));
  Line(out, StrFormat("transa=%s transb=%s%s, lda=%lld ldb=%lld ldd=%lld%s",
                      config.trans_a == CUBLAS_OP_T ? "T" : "N",
                      config.trans_b == CUBLAS_OP_T ? "T" : "N",
                      config.trans_a == CUBLAS_OP_T && config.trans_b == CUBLAS_OP_N ? " (TN)" : "",
                      static_cast<long long>(config.lda), static_cast<long long>(config.ldb),
                      static_cast<long long>(config.ldd),
                      plan.n_padded != dot.n ? StrFormat(" (N padded from %lld, sliced back)",
                                                         static_cast<long long>(dot.n))
                                                   .c_str()
                                             : ""));
  Line(out, plan.lhs.how);
  Line(out, plan.rhs.how);
  Line(out, StrFormat("types: A %s, B %s, C %s, D %s; compute %s, scale type %s",
                      CudaDataTypeName(config.a_type), CudaDataTypeName(config.b_type),
                      CudaDataTypeName(config.c_type), CudaDataTypeName(config.d_type),
                      ComputeTypeName(config.compute_type), CudaDataTypeName(config.scale_type)));
  if (!plan.compute_note.empty()) Line(out, "note: " + plan.compute_note);
  if (plan.info.fast_accum >= 0) {
    Line(out, StrFormat("CUBLASLT_MATMUL_DESC_FAST_ACCUM = %d (read back from the descriptor)",
                        plan.info.fast_accum));
  } else {
    Line(out, "CUBLASLT_MATMUL_DESC_FAST_ACCUM: not set (not an FP8 GEMM)");
  }
  if (config.sm_count_target > 0) {
    Line(out,
         StrFormat("CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET = %d (CudaDotOptions::sm_count_target)",
                   config.sm_count_target));
  }
  if (plan.scales_in_gemm) {
    Line(out, plan.lhs_scale.how);
    Line(out, plan.rhs_scale.how);
  } else if (spec.lhs_scale.mode != ScaleMode::kNone || spec.rhs_scale.mode != ScaleMode::kNone) {
    Line(out, StrFormat("scales: lhs %s, rhs %s, applied %s", ScaleModeName(spec.lhs_scale.mode),
                        ScaleModeName(spec.rhs_scale.mode),
                        plan.scales_in_gather ? "in the upcast gather" : "in fp8dot's epilogue"));
  }
  if (plan.c.present) Line(out, plan.c.how);
  if (plan.bias.present) Line(out, plan.bias.how);
  if (plan.fused) {
    Line(out, StrFormat("epilogue: fused in cuBLASLt: %s, alpha=%g beta=%g%s%s",
                        EpilogueEnumName(config.epilogue), spec.alpha, spec.beta,
                        config.d_scale ? ", D scale" : "", config.amax_d ? ", amax D" : ""));
  } else {
    Line(out, StrFormat("epilogue: fp8dot's epilogue kernel on S (f32, ld %lld): %s, alpha=%g "
                        "beta=%g%s%s",
                        static_cast<long long>(plan.n_padded), EpilogueName(spec.epilogue),
                        spec.alpha, spec.beta, spec.output_scale ? ", D scale" : "",
                        spec.compute_amax ? ", amax" : ""));
    Line(out, "  (not fused because: " + plan.fused_rejection + ")");
  }
  Line(out, StrFormat(
                "algorithm: %s (%s of %d candidates)%s",
                plan.gemm->AlgorithmDescription(plan.gemm->chosen()).c_str(),
                plan.gemm->chosen() == 0 ? "first" : "autotuned pick", plan.gemm->candidate_count(),
                plan.info.autotune.ran ? ("; " + plan.info.autotune.ToString()).c_str() : ""));
  const std::string unaligned = plan.gemm->UnalignedAlgorithmDescription();
  if (unaligned != plan.gemm->AlgorithmDescription(plan.gemm->chosen())) {
    Line(out, StrFormat("  for pointers not %u-byte aligned: %s", plan.gemm->candidates_alignment(),
                        unaligned.c_str()));
  }
  const KSplit& split = plan.info.k_split;
  if (split.slices > 1 && split.tile <= 0) {
    Line(out, StrFormat("split-K: %d slices (the algorithm's tile K is unknown), reduced %s",
                        split.slices, plan.gemm->CandidateReductionName(plan.gemm->chosen())));
  } else if (split.slices > 1) {
    const std::vector<int64_t> ends = KSliceEnds(plan.gemm->config().k, split);
    Line(out, StrFormat("split-K: K cut into %zu slices of up to %lld K-elements (%lld tiles of "
                        "%d), each accumulated on its own, reduced %s",
                        ends.size(), static_cast<long long>(ends.front()),
                        static_cast<long long>(split.tile > 0 ? ends.front() / split.tile : 0),
                        split.tile, plan.gemm->CandidateReductionName(plan.gemm->chosen())));
  } else {
    Line(out, "split-K: none (one accumulation over all of K per output)");
  }
  return out;
}

}  // namespace fp8dot::cuda

namespace fp8dot {

std::string AutotuneSummary::ToString() const {
  if (!ran) return "autotuning: off";
  std::string text = "autotuning";
  if (from_cache) {
    text = StrFormat("autotuning: taken from the cache file (candidate #%d)", chosen);
  } else if (candidates > 0) {
    text = StrFormat("autotuning: %d candidates timed, first %.4f ms, chosen #%d %.4f ms",
                     candidates, first_ms, chosen, chosen_ms);
  }
  if (engines_raced) {
    text += own_ms > 0 ? StrFormat("; engines raced: own %.4f ms, cuBLASLt %.4f ms a call", own_ms,
                                   cublaslt_ms)
                       : "; engine taken from the cache file";
  }
  return text;
}

}  // namespace fp8dot
