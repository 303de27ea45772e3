// The own-kernel engine of a CudaDotPlan (GemmEngine::kOwn): which dots it takes, and the
// launch of src/cuda/kernels/block_scaled_gemm.h with a plan's prepared operands.
#pragma once

#include <string>
#include <vector>

#include "cuda/kernels/block_scaled_gemm.h"
#include "cuda/operand_preparation.h"
#include "fp8dot/cuda_backend.h"

namespace fp8dot::cuda {

// What a plan keeps to launch the own kernel.
struct OwnGemm {
  BlockScaledGemmTile tile;
  ScaleStrides lhs_scale, rhs_scale;  // row stride 0: one tensor scale
  GemmScaling scaling = GemmScaling::kBlocks;
  int promotion_blocks = 1;       // K-blocks of 128 per promotion (kOuter; 1 with block scales)
  GemmDevice device;              // what the tile was chosen for; its SMs bound the persistent grid
  bool dependent_launch = false;  // OwnGemmLaunchesAsDependent
  bool lets_next_grid_start_early = false;  // OwnGemmLetsNextGridStartEarly
  size_t workspace_bytes = 0;               // split-K's, zero-filled once (the kernel leaves it so)
};

// How the kernel applies `spec`'s scales; INVALID_ARGUMENT naming them when it cannot.
StatusOr<GemmScaling> OwnGemmScaling(const DotSpec& spec);

// Why the own kernel cannot run `spec` ("" when it can), in terms of the spec.
std::string OwnGemmRejection(const DotSpec& spec, const CanonicalDot& dot);

// The kernel's configuration for an eligible spec on `device`: the tile (and split-K) the
// options ask for (INVALID_ARGUMENT when the kernel has no such tile), else the heuristic's.
StatusOr<OwnGemm> MakeOwnGemm(const DotSpec& spec, const CanonicalDot& dot,
                              const CudaDotOptions& options, const GemmDevice& device);

// The tiles an engine race times for an eligible spec (autotune.cc), by name: the one the options
// force, else the plan's choice and the cost model's next cheapest (RankBlockScaledGemmTiles),
// `count` at most.
StatusOr<std::vector<std::string>> OwnGemmTileCandidates(const DotSpec& spec,
                                                         const CanonicalDot& dot,
                                                         const CudaDotOptions& options,
                                                         const GemmDevice& device, int count);

// Whether GemmEngine::kAuto takes the own kernel for an eligible dot: where it measured faster
// than cuBLASLt on the H200 (docs/own-gemm.md), i.e. rhs 128x128 scales and M <= 64 (1.11-1.46x
// on DeepGEMM's six shapes), or M <= 128 with the heuristic's tile and split-K filling the GPU in
// one wave (1.04-1.39x on its four shapes of that kind; the two others 0.95x and 0.99x),
// bench/results/2026-12-03-h200-c1c1fc4-own-gemm-producer-loop.md; or M >= 4096 with N >= 2048
// and K >= 512 (1.01-1.21x on DeepGEMM's six M = 4096 shapes, 1.00-1.06x on the 13 GEMMs of
// the training benchmarks), bench/results/2026-12-03-h200-556ca5d-training-shapes-and-peer.md;
// with rhs 1x128 scales (the wgrad's), at M >= 2048 and K >= 2048 where the plan takes the
// 192x128 tile (1.01-1.09x on the 12 of the training benchmarks' 13 GEMMs where it does; the
// 13th, 2048x2048x16384, keeps 256x128, 0.98-0.99x), bench/results/2026-12-05-h200-session28.md.
bool OwnGemmIsFaster(const DotSpec& spec, const CanonicalDot& dot, const GemmDevice& device);

// Whether the plan's GEMM is a programmatic dependent launch (BlockScaledGemmParams::
// dependent_launch), whose launch and set-up overlap the end of the kernel before it: always, but
// not with CudaDotOptions::sm_count_target, whose SMs left free are for other streams, not for
// this grid's waiting CTAs. Measured on an H100 (bench/results/2026-12-06-session42.md, calls
// 1-2): without the early start below, on the 14 shapes above M = 128 of the suite and
// DeepGEMM's, both scalings, 0.97-1.12x the plain launch (median 1.007; 1000^3 1.12, 4096^3
// 1.01-1.03); session 41's loss of up to 15% on 16384^3 and 8192x8192x28672 did not repeat.
bool OwnGemmLaunchesAsDependent(const CudaDotOptions& options);

// Whether the plan's GEMM also lets the next kernel start early (BlockScaledGemmParams::
// lets_next_grid_start_early): as a dependent launch at M <= 128, where the two together measured
// 1.00-1.11x in CUDA graphs and 1.00-1.21x in a loop of calls on an H100 (DeepGEMM's 12 small-M
// shapes, tensor scales promoted and A 1x128 x B 128x128; bench/results/
// 2026-12-06-h100-session41.md, call 3). Not above: the next kernel's CTAs would wait on SMs
// that a long GEMM's last wave frees, and on 8192x8192x28672 that measured 0.97x (session 42,
// call 1).
bool OwnGemmLetsNextGridStartEarly(const CanonicalDot& dot, const CudaDotOptions& options);

// Whether a plan reorders 1x128 scales that the copy engine cannot stage (not M-major, or N-major
// for rhs 1x128, with 16-byte aligned K-blocks: fp8dot's default row-major ones) into that layout
// on the device at every run, as cuBLASLt's plans do, rather than have the producer warps stage
// them by per-row cp.async: wherever M > 64. Measured on the H200, 2026-12-04
// (bench/results/2026-12-04-h200-own-scale-reorder.md), the plan with row-major scales against
// cuBLASLt: the 192-row tile 0.57-0.61x staged, 1.05-1.11x reordered; M = 128 (tiles of up to
// 128 rows) 0.75-1.05x staged, 0.88-1.15x reordered; at M = 64 the reorder's second launch
// costs what it saves in a loop of calls (1.03-1.10x staged, 0.86-1.15x reordered).
bool OwnGemmReordersScales(const BlockScaledGemmParams& launch_shape);

// The kernel's parameters that the plan decides (shape, scale strides and scaling, tile, D's row
// stride); a run adds the pointers, types and workspace.
BlockScaledGemmParams OwnGemmLaunchShape(const OwnGemm& gemm, const CanonicalDot& dot);

// One line for Explain() and CudaPlanInfo::engine.
std::string OwnGemmDescription(const OwnGemm& gemm);

}  // namespace fp8dot::cuda
