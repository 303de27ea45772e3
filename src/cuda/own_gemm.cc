#include "cuda/own_gemm.h"

namespace fp8dot::cuda {

std::string OwnGemmRejection(const DotSpec& spec, const CanonicalDot& dot) {
  if (spec.lhs_scale.mode != ScaleMode::kBlock1x128 ||
      (spec.rhs_scale.mode != ScaleMode::kBlock128x128 &&
       spec.rhs_scale.mode != ScaleMode::kBlock1x128)) {
    return StrFormat(
        "the own kernel takes lhs 1x128 and rhs 128x128 or 1x128 block scales (this dot: %s "
        "and %s)",
        ScaleModeName(spec.lhs_scale.mode), ScaleModeName(spec.rhs_scale.mode));
  }
  if (spec.rhs.dtype != DType::kF8E4M3FN ||
      (spec.lhs.dtype != DType::kF8E4M3FN && spec.lhs.dtype != DType::kF8E5M2)) {
    return StrFormat("the own kernel takes an e4m3 or e5m2 lhs and an e4m3 rhs (this dot: %s x %s)",
                     DTypeName(spec.lhs.dtype), DTypeName(spec.rhs.dtype));
  }
  if (dot.accumulation != AccumulationMode::kFp8Promoted) {
    return StrFormat("the own kernel promotes (this dot resolved to %s)",
                     AccumulationModeName(dot.accumulation));
  }
  if (spec.output_type != DType::kBF16 && spec.output_type != DType::kF32) {
    return StrFormat("the own kernel writes bf16 or f32 (this dot: %s)",
                     DTypeName(spec.output_type));
  }
  if (spec.c || spec.bias || spec.epilogue != Epilogue::kDefault || spec.alpha != 1.0 ||
      spec.output_scale || spec.compute_amax) {
    return "the own kernel has no epilogue yet (C, beta, alpha, bias, activation, output scale, "
           "amax)";
  }
  if (dot.batch != 1) return "the own kernel runs one GEMM (batch 1)";
  if (dot.m > INT32_MAX || dot.n > INT32_MAX) return "the own kernel needs M, N < 2^31";
  return "";
}

StatusOr<OwnGemm> MakeOwnGemm(const DotSpec& spec, const CanonicalDot& dot,
                              const CudaDotOptions& options, int sm_count) {
  OwnGemm gemm;
  gemm.rhs_scale_per_column = spec.rhs_scale.mode == ScaleMode::kBlock1x128;
  gemm.tile = ChooseBlockScaledGemmTile(dot.m, dot.n, dot.k, sm_count, gemm.rhs_scale_per_column);
  if (!options.own_tile.empty()) {
    FP8_ASSIGN_OR_RETURN(gemm.tile, ParseBlockScaledGemmTile(options.own_tile));
    if (gemm.rhs_scale_per_column && !BlockScaledGemmTileTakesColumnScales(gemm.tile)) {
      std::string takes;
      for (const BlockScaledGemmTile& tile : BlockScaledGemmTiles()) {
        if (BlockScaledGemmTileTakesColumnScales(tile)) {
          takes += (takes.empty() ? "" : ", ") + tile.ToString();
        }
      }
      return InvalidArgument(
          "the own kernel's tile '%s' takes rhs 128x128 scales only, not 1x128 (it has no "
          "registers for the per-column promotion); with 1x128 it has %s",
          options.own_tile.c_str(), takes.c_str());
    }
  }
  // "64x128s8" on a K of 4 blocks runs (and is named) as 64x128s4.
  gemm.tile.k_splits = EffectiveKSplits(gemm.tile, dot.k);
  gemm.workspace_bytes = BlockScaledGemmWorkspaceBytes(gemm.tile, dot.m, dot.n, dot.k);
  gemm.lhs_scale = SourceScaleStrides(spec.lhs_scale, true);
  gemm.rhs_scale = SourceScaleStrides(spec.rhs_scale, false);
  gemm.sm_count = sm_count;
  return gemm;
}

bool OwnGemmIsFaster(const DotSpec& spec, const CanonicalDot& dot, int sm_count) {
  constexpr int64_t kMaxRows = 64;
  // Measured with rhs 128x128 scales only; rhs 1x128 is left to autotuning's race.
  if (dot.m > kMaxRows || spec.rhs_scale.mode != ScaleMode::kBlock128x128) return false;
  const BlockScaledGemmTile tile =
      ChooseBlockScaledGemmTile(dot.m, dot.n, dot.k, sm_count, /*rhs_scale_per_column=*/false);
  return BlockScaledGemmWorkUnits(tile, dot.m, dot.n, dot.k) <= sm_count;
}

std::string OwnGemmDescription(const OwnGemm& gemm) {
  return "fp8dot block-scaled " + gemm.tile.ToString();
}

}  // namespace fp8dot::cuda
