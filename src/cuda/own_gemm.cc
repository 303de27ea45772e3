#include "cuda/own_gemm.h"

namespace fp8dot::cuda {

namespace {

bool IsOuterScale(ScaleMode mode) {
  return mode == ScaleMode::kTensor || mode == ScaleMode::kOuterVector;
}

}  // namespace

StatusOr<GemmScaling> OwnGemmScaling(const DotSpec& spec) {
  const ScaleMode lhs = spec.lhs_scale.mode, rhs = spec.rhs_scale.mode;
  if (lhs == ScaleMode::kBlock1x128 && rhs == ScaleMode::kBlock128x128) return GemmScaling::kBlocks;
  if (lhs == ScaleMode::kBlock1x128 && rhs == ScaleMode::kBlock1x128) {
    return GemmScaling::kColumnBlocks;
  }
  if (IsOuterScale(lhs) && IsOuterScale(rhs)) return GemmScaling::kOuter;
  return InvalidArgument(
      "the own kernel takes lhs 1x128 with rhs 128x128 or 1x128 block scales, or tensor or "
      "row/column scales on both (this dot: %s and %s)",
      ScaleModeName(lhs), ScaleModeName(rhs));
}

std::string OwnGemmRejection(const DotSpec& spec, const CanonicalDot& dot) {
  if (StatusOr<GemmScaling> scaling = OwnGemmScaling(spec); !scaling.ok()) {
    return scaling.status().message();
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
                              const CudaDotOptions& options, const GemmDevice& device) {
  OwnGemm gemm;
  FP8_ASSIGN_OR_RETURN(gemm.scaling, OwnGemmScaling(spec));
  const int interval = options.own_promotion_interval;
  if (interval != 0 && (interval < 0 || interval % kScaleBlockSize != 0 ||
                        (gemm.scaling != GemmScaling::kOuter && interval != kScaleBlockSize))) {
    return InvalidArgument(
        "own_promotion_interval %d: the own kernel promotes every multiple of %lld K-elements "
        "with tensor or row scales, and every %lld with block scales",
        interval, static_cast<long long>(kScaleBlockSize), static_cast<long long>(kScaleBlockSize));
  }
  gemm.promotion_blocks = interval == 0 ? 1 : static_cast<int>(interval / kScaleBlockSize);
  gemm.tile =
      ChooseBlockScaledGemmTile(dot.m, dot.n, dot.k, device, gemm.scaling, gemm.promotion_blocks);
  if (!options.own_tile.empty()) {
    FP8_ASSIGN_OR_RETURN(gemm.tile, ParseBlockScaledGemmTile(options.own_tile));
    if (!BlockScaledGemmTileTakes(gemm.tile, gemm.scaling, gemm.promotion_blocks)) {
      std::string takes;
      for (const BlockScaledGemmTile& tile : BlockScaledGemmTiles()) {
        if (BlockScaledGemmTileTakes(tile, gemm.scaling, gemm.promotion_blocks)) {
          takes += (takes.empty() ? "" : ", ") + tile.ToString();
        }
      }
      return InvalidArgument(
          "the own kernel has no tile '%s' for %s scales promoted every %d K; for them it "
          "has %s",
          options.own_tile.c_str(), GemmScalingName(gemm.scaling),
          gemm.promotion_blocks * static_cast<int>(kScaleBlockSize), takes.c_str());
    }
  }
  // Split-K runs are cut in 128-K blocks, so with a longer promotion interval a run could end
  // inside an interval, which the emulation does not model: such plans do not split K.
  if (gemm.promotion_blocks > 1 && gemm.tile.k_splits > 1) {
    if (!options.own_tile.empty()) {
      return InvalidArgument(
          "the own kernel's split-K (tile '%s') needs own_promotion_interval 128, not %d",
          options.own_tile.c_str(), interval);
    }
    gemm.tile.k_splits = 1;
  }
  // "64x128s8" on a K of 4 blocks runs (and is named) as 64x128s4.
  gemm.tile.k_splits = EffectiveKSplits(gemm.tile, dot.k);
  gemm.workspace_bytes = BlockScaledGemmWorkspaceBytes(gemm.tile, dot.m, dot.n, dot.k);
  gemm.lhs_scale = SourceScaleStrides(spec.lhs_scale, true);
  gemm.rhs_scale = SourceScaleStrides(spec.rhs_scale, false);
  // One tensor scale: every row (column) reads element 0.
  if (spec.lhs_scale.mode == ScaleMode::kTensor) gemm.lhs_scale = {0, 0};
  if (spec.rhs_scale.mode == ScaleMode::kTensor) gemm.rhs_scale = {0, 0};
  gemm.device = device;
  gemm.dependent_launch = OwnGemmLaunchesAsDependent(options);
  gemm.lets_next_grid_start_early = OwnGemmLetsNextGridStartEarly(dot, options);
  return gemm;
}

StatusOr<std::vector<std::string>> OwnGemmTileCandidates(const DotSpec& spec,
                                                         const CanonicalDot& dot,
                                                         const CudaDotOptions& options,
                                                         const GemmDevice& device, int count) {
  if (!options.own_tile.empty()) return std::vector<std::string>{options.own_tile};
  FP8_ASSIGN_OR_RETURN(const OwnGemm gemm, MakeOwnGemm(spec, dot, options, device));
  std::vector<std::string> names;
  for (const BlockScaledGemmTile& tile : RankBlockScaledGemmTiles(
           dot.m, dot.n, dot.k, device, gemm.scaling, gemm.promotion_blocks, count)) {
    names.push_back(tile.ToString());
  }
  return names;
}

bool OwnGemmIsFaster(const DotSpec& spec, const CanonicalDot& dot, const GemmDevice& device) {
  // A 1x128 x B 128x128: faster on every M = 64 shape measured; at M = 128 where the plan's
  // units fit in one wave (at M = 128 with more units than SMs cuBLASLt was faster); from
  // M = 4096 on every shape measured (N >= 2048, K >= 512); in between nothing was measured.
  // A 1x128 x B 1x128 (the wgrad's): faster wherever the plan takes 192x128 on the training
  // GEMMs (12 of 13, M 2048-16384, K >= 2048); level or slower on 256x128. Tensor and row scales
  // are left to autotuning's race (level with cuBLASLt's promoted GEMM).
  constexpr int64_t kAnyWaveRows = 64, kOneWaveRows = 128;
  constexpr int64_t kLargeRows = 4096, kLargeMinN = 2048, kLargeMinK = 512;
  constexpr int64_t kColumnScalesMinRows = 2048, kColumnScalesMinK = 2048;
  const StatusOr<GemmScaling> scaling = OwnGemmScaling(spec);
  if (!scaling.ok()) return false;
  if (*scaling == GemmScaling::kColumnBlocks) {
    if (dot.m < kColumnScalesMinRows || dot.k < kColumnScalesMinK) return false;
    const BlockScaledGemmTile tile =
        ChooseBlockScaledGemmTile(dot.m, dot.n, dot.k, device, GemmScaling::kColumnBlocks, 1);
    return tile.block_m == 192;
  }
  if (*scaling != GemmScaling::kBlocks) return false;
  if (dot.m >= kLargeRows) return dot.n >= kLargeMinN && dot.k >= kLargeMinK;
  if (dot.m > kOneWaveRows) return false;
  if (dot.m <= kAnyWaveRows) return true;
  const BlockScaledGemmTile tile =
      ChooseBlockScaledGemmTile(dot.m, dot.n, dot.k, device, GemmScaling::kBlocks, 1);
  return BlockScaledGemmWorkUnits(tile, dot.m, dot.n, dot.k) <= device.sm_count;
}

bool OwnGemmLaunchesAsDependent(const CudaDotOptions& options) {
  return options.sm_count_target == 0;
}

bool OwnGemmLetsNextGridStartEarly(const CanonicalDot& dot, const CudaDotOptions& options) {
  constexpr int64_t kMaxRows = 128;
  return dot.m <= kMaxRows && OwnGemmLaunchesAsDependent(options);
}

bool OwnGemmReordersScales(const BlockScaledGemmParams& launch_shape) {
  const bool has_block_scales = launch_shape.scaling != GemmScaling::kOuter;
  return has_block_scales && launch_shape.m > 64 &&
         !BlockScaledGemmStagesScalesByCopyEngine(launch_shape);
}

BlockScaledGemmParams OwnGemmLaunchShape(const OwnGemm& gemm, const CanonicalDot& dot) {
  BlockScaledGemmParams p;
  p.m = dot.m;
  p.n = dot.n;
  p.k = dot.k;
  p.lhs_scale_row_stride = gemm.lhs_scale.row;
  p.lhs_scale_block_stride = gemm.lhs_scale.block;
  p.rhs_scale_row_stride = gemm.rhs_scale.row;
  p.rhs_scale_block_stride = gemm.rhs_scale.block;
  p.scaling = gemm.scaling;
  p.promotion_blocks = gemm.promotion_blocks;
  p.output_ld = dot.n;
  p.tile = gemm.tile;
  p.sm_count = gemm.device.sm_count;
  p.dependent_launch = gemm.dependent_launch;
  p.lets_next_grid_start_early = gemm.lets_next_grid_start_early;
  return p;
}

std::string OwnGemmDescription(const OwnGemm& gemm) {
  return "fp8dot block-scaled " + gemm.tile.ToString();
}

}  // namespace fp8dot::cuda
