// The block-scaled FP8 GEMM kernel (block_scaled_gemm.h) and its launcher; the host-side rules
// (tiles, units of work, the tile a problem gets, what is refused) are in
// block_scaled_gemm_tiles.cc.
//
// Constraints: sm_90a (wgmma, setmaxnreg); K-major FP8 operands with 16-byte aligned rows (the
// copy engine's rule); B 128x128's scales cover 128 columns, so with block scales block_n
// divides 128 and a tile needs one B scale per K-block (the 192-column tile takes outer scales
// only).
//
// Shape of the work:
//   - persistent: one CTA per SM walks the output tiles (grouped by 8 tile-rows so that a wave's
//     A and B blocks stay in L2); with kCluster = 2, two CTAs take neighbouring column tiles of
//     the same rows and load A once between them (TMA multicast);
//   - warp-specialised: the last warpgroup produces. One thread issues the bulk tensor copies of
//     A (block_m x 128) and B (block_n x 128) into a ring of shared-memory stages. The stage's
//     scales come with them: with M-major A scales (and N-major B 1x128 ones) one lane of a
//     second warp has the copy engine bring them in the same barrier phase, and B 128x128's one
//     scale by cp.async; from other layouts that warp copies A's with 32 lanes of cp.async (and
//     a third warp B 1x128's). The other warpgroups are the math, one per 64-row slice of the
//     tile (two slices each for 256-row tiles);
//   - per K-block of 128 (one stage) and slice, a math warpgroup runs 4 wgmma k32 steps into a
//     partial sum (the tensor core's own, limited-precision accumulation over 128 products) and
//     promotes it: acc = fma(partial, scale_a * scale_b, acc) in FP32. Warpgroups of one slice
//     (tiles of up to 128 rows; with B 1x128 the 64-row ones) keep two partial sums in turn, so
//     block k + 1 is on the tensor core while block k is promoted; the others (192- and 256-row
//     tiles, short of registers) wait for each block's wgmma before promoting, while the other
//     warpgroups' wgmma run;
//   - with tensor or row scales (GemmScaling::kOuter) the tensor core sums promotion_blocks
//     K-blocks per partial sum, partial sums are added in f32, and the scales multiply D (each
//     math warpgroup copies its tile's scales into shared memory by cp.async when the tile
//     starts, so the epilogue does not wait for global memory);
//   - split-K (tiles of up to 128 rows, for problems with fewer tiles than SMs): a unit of work
//     is one run of a tile's K-blocks; each run leaves its FP32 sums in the workspace and counts
//     itself in, unless it finds the others all in (then it is last at once); the last run of a
//     tile adds all runs in order, its own from registers, and writes D;
//   - the epilogue stages D (bf16 or f32) in swizzled shared memory and stores it with bulk
//     tensor copies that run on while the warpgroup starts its next tile (from registers when
//     D's rows are not 16-byte aligned); the producer is already loading that tile's stages.
//
// Numerics: each block-scaled promotion is one fused multiply-add with the scale product rounded
// to f32 first; the CPU emulation models exactly that (Fp8AccumulatorModel::fused_promotion), and
// the outer-scaled promotion its promoted mode with promotion_interval, so the two agree bit for
// bit.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <limits>
#include <optional>

#include "cuda/cuda_status.h"
#include "cuda/kernels/block_scaled_gemm.h"
#include "cuda/kernels/hopper_primitives.cuh"
#include "cuda/kernels/wgmma_fp8.cuh"

namespace fp8dot::cuda {
namespace {

using hopper::WgmmaLhs;

constexpr int kBlockK = kBlockScaledGemmBlockK;
constexpr int kWgmmaK = 32;
constexpr int kWarpgroupThreads = 128;
constexpr int kSliceRows = 64;      // rows per wgmma (its M)
constexpr int kScaleColumns = 128;  // columns one B scale covers
constexpr int kSharedLimit = 227 * 1024;
constexpr int kMaxStages = 16;
constexpr int kTileRowsPerGroup = 8;  // rasterisation: tile-rows per group
constexpr int kMaxSplitKBlockM = kBlockScaledGemmMaxSplitKRows;
// Register budgets after setmaxnreg: 2 math warpgroups take 232 each, 3 take 152, the producer
// warpgroup keeps 40 or 56. They must add up to no more than the CTA was launched with (ptxas's
// count under __launch_bounds__: 168 a thread for 384 threads, 128 for 512), or setmaxnreg.inc
// waits for ever: 128 x 40 + 256 x 232 = 384 x 168 and 128 x 56 + 384 x 152 = 512 x 128 exactly
// (a producer of 48 hung every two-warpgroup tile on the H200, 2026-12-03). With 32 the scale
// warp's two ways of staging scales spilled.
template <int kMathWarpgroups>
constexpr uint32_t kProducerRegisters = kMathWarpgroups == 3 ? 56 : 40;
template <int kMathWarpgroups>
constexpr uint32_t kMathRegisters = MathRegistersPerThread(kMathWarpgroups);
// The main loop's schedule (MathSchedule says why each tile has its own), as a constant that
// device code can read.
template <int kBlockM, int kBlockN, GemmScaling kScaling>
constexpr MathSchedule kMathSchedule = MathScheduleOf(kBlockM, kBlockN, kScaling);

template <int kBlockM, int kBlockN, int kOutBytes, GemmScaling kScaling>
struct TileShape {
  // 256-row tiles: 2 math warpgroups of 2 slices each; otherwise one slice per warpgroup (1, 2
  // or 3 of them).
  static constexpr int kSlices = SlicesPerWarpgroup(kBlockM);
  static constexpr int kMathWarpgroups = MathWarpgroups(kBlockM);
  static constexpr int kMathWarps = kMathWarpgroups * 4;
  static constexpr int kThreads = (kMathWarpgroups + 1) * kWarpgroupThreads;
  static constexpr int kLhsTileBytes = kBlockM * kBlockK;
  static constexpr int kRhsTileBytes = kBlockN * kBlockK;
  // A's scales, then B's: one per tile, or one per column (B 1x128); none with outer scales,
  // which apply to D. Each part starts on 128 bytes, as the copy engine's bulk tensor copies
  // into shared memory must.
  static constexpr int kLhsScaleBytes = kBlockM * 4;
  static constexpr int kRhsScaleBytes =
      kScaling == GemmScaling::kColumnBlocks ? (kBlockN * 4 + 127) / 128 * 128 : 128;
  static constexpr int kScaleBytes =
      kScaling == GemmScaling::kOuter ? 16 : kLhsScaleBytes + kRhsScaleBytes;
  static constexpr int kStageBytes = kLhsTileBytes + kRhsTileBytes + kScaleBytes;
  // The epilogue stages D in shared memory for the copy engine's stores: boxes of 64 rows by
  // up to 128 bytes of columns (the widest swizzled box), each swizzled like the operand tiles
  // so that the math threads' writes hit distinct banks. A warpgroup stages all its slices, or
  // one at a time for f32 256-row tiles (whose whole output would halve the stages).
  static constexpr int kBoxColumns = std::min(kBlockN, 128 / kOutBytes);
  static constexpr int kBoxRowBytes = kBoxColumns * kOutBytes;
  static constexpr int kBoxBytes = kSliceRows * kBoxRowBytes;
  static constexpr int kStagedSliceBytes = kSliceRows * kBlockN * kOutBytes;
  static constexpr int kStagedSlices = kSlices * kStagedSliceBytes <= 32 * 1024 ? kSlices : 1;
  static constexpr int kOutputBytes = kMathWarpgroups * kStagedSlices * kStagedSliceBytes;
  // Outer scales: a math warpgroup's copy of the tile's column scales and its rows' scales,
  // copied when the tile starts so that the epilogue finds them there.
  static constexpr int kOuterScaleFloats =
      kScaling == GemmScaling::kOuter ? kBlockN + kSlices * kSliceRows : 0;
  static constexpr int kOuterScaleBytes = kMathWarpgroups * kOuterScaleFloats * 4;
  static constexpr int kAlignmentSlack = 1024;  // 128-byte swizzled tiles start on 1024 bytes
  // An mbarrier whose first phase has completed (the main loop's wait past a unit's last block),
  // then split-K's "this CTA adds the runs" (one int).
  static constexpr int kFlagBytes = 16;
  static constexpr int kStages = std::min(
      kMaxStages, (kSharedLimit - kAlignmentSlack - kOutputBytes - kOuterScaleBytes - kFlagBytes) /
                      (kStageBytes + 16));
  static constexpr int kSharedBytes =
      kOutputBytes + kStages * (kStageBytes + 16) + kOuterScaleBytes + kFlagBytes + kAlignmentSlack;
  static constexpr int kMathThreads = kMathWarpgroups * kWarpgroupThreads;
  static_assert(kBlockM % (kSliceRows * kSlices) == 0);
  static_assert(kScaling == GemmScaling::kOuter || kScaleColumns % kBlockN == 0);
  static_assert(kLhsTileBytes % 1024 == 0 && kRhsTileBytes % 1024 == 0);
  static_assert(kLhsScaleBytes % 128 == 0 && kScaleBytes % 16 == 0 && kOuterScaleBytes % 16 == 0);
  static_assert(kBoxBytes % 256 == 0 && kStagedSliceBytes % 1024 == 0 && kStages >= 2);
};

struct KernelArgs {
  int m, n, k_blocks;
  // Split-K: each tile's K-blocks are cut into k_splits runs of blocks_per_split (the last may
  // be shorter, none is empty), one unit of work each. A run leaves its FP32 sums in
  // split_partials; the tile's last run to finish adds them in run order and writes D.
  int k_splits, blocks_per_split;
  float* split_partials;  // [tile][run][kSlices * kRegisters / 4][math thread] float4s
  int* split_arrivals;    // [tile]: runs finished; reset to 0 by the last (zero between launches)
  // The stage's block scales come with its operand tiles (StagedScalesOf says when they can):
  // A's, and B 1x128's, through the copy engine (lhs_scale_map, rhs_scale_map); B 128x128's one
  // by a cp.async of the scale warp's lane 0. Otherwise producer warps copy them with cp.async.
  bool scale_maps;
  // cp.async: the A scales are M-major (row stride 1), their K-blocks 16-byte aligned and
  // M % 4 == 0.
  bool lhs_scale_vectors;
  int promotion_blocks;  // outer scales: K-blocks summed by the tensor core per promotion
  // cp.async, B 1x128: its scales are N-major (column stride 1), their K-blocks 16-byte aligned
  // and N % 4 == 0.
  bool rhs_scale_vectors;
  int unit_rows, unit_cols;  // units of work (a cluster's tiles: one row, kCluster columns)
  const float* lhs_scale;
  int64_t lhs_scale_row_stride, lhs_scale_block_stride;
  const float* rhs_scale;
  int64_t rhs_scale_row_stride, rhs_scale_block_stride;
  void* output;
  int64_t output_ld;
  // D's rows are 16-byte aligned: the epilogue stores through the copy engine (output_map).
  // Otherwise the math threads store from registers, pairs of outputs as one vector when
  // paired_stores says they are aligned.
  bool tma_store;
  bool paired_stores;
  // BlockScaledGemmParams::lets_next_grid_start_early: the next grid may be scheduled once
  // every CTA has issued its last copies.
  bool lets_next_grid_start_early;
};

// A position in the ring of shared-memory stages: the stage, and the parity of its barriers'
// current phase (flipped at every wrap-around).
struct StageRing {
  int stage = 0;
  uint32_t phase = 0;
  __device__ void Advance(int stages) {
    if (++stage == stages) stage = 0, phase ^= 1;
  }
};

struct TileOrigin {
  int row, col;  // of D
};

// This CTA's tile of unit `index` in the grouped order: groups of kTileRowsPerGroup unit-rows,
// column by column inside a group, so that consecutive clusters share A blocks and a wave's B
// blocks are few. A unit is one tile-row by kCluster tile-columns; CTA `rank` of the cluster
// takes column `rank` (past N on the last unit when the tile-columns are odd: the CTA then
// computes zeros and stores nothing, but still shares its A copies).
template <int kBlockM, int kBlockN, int kCluster>
__device__ TileOrigin TileAt(int index, int rank, const KernelArgs& args) {
  const int group_units = kTileRowsPerGroup * args.unit_cols;
  const int group = index / group_units;
  const int first_row = group * kTileRowsPerGroup;
  const int group_rows = min(args.unit_rows - first_row, kTileRowsPerGroup);
  const int in_group = index - group * group_units;
  return {(first_row + in_group % group_rows) * kBlockM,
          ((in_group / group_rows) * kCluster + rank) * kBlockN};
}

// threadIdx.x read afresh (the compiler cannot reuse an earlier read): for code after the main
// loop, where keeping it live costs a register the 128-row pipelined tiles do not have.
__device__ inline int ThreadIndex() {
  int index;
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(index));
  return index;
}

// Elementwise a + b, each rounded to f32 (no contraction into a later multiply).
__device__ inline float4 Add(float4 a, float4 b) {
  return make_float4(__fadd_rn(a.x, b.x), __fadd_rn(a.y, b.y), __fadd_rn(a.z, b.z),
                     __fadd_rn(a.w, b.w));
}

template <typename Out>
__device__ void StorePair(Out* destination, float first, float second, bool has_second,
                          bool paired) {
  if constexpr (std::is_same_v<Out, float>) {
    if (paired && has_second) {
      *reinterpret_cast<float2*>(destination) = make_float2(first, second);
      return;
    }
    destination[0] = first;
    if (has_second) destination[1] = second;
  } else {
    if (paired && has_second) {
      *reinterpret_cast<__nv_bfloat162*>(destination) = __floats2bfloat162_rn(first, second);
      return;
    }
    destination[0] = __float2bfloat16_rn(first);
    if (has_second) destination[1] = __float2bfloat16_rn(second);
  }
}

// Two adjacent elements of D into a staging box at a 32-bit shared address: through a generic
// pointer they were generic stores, each after 64-bit address arithmetic.
template <typename Out>
__device__ void StageSharedPair(uint32_t address, float first, float second) {
  if constexpr (std::is_same_v<Out, float>) {
    hopper::StoreShared(address, make_float2(first, second));
  } else {
    const __nv_bfloat162 pair = __floats2bfloat162_rn(first, second);
    uint32_t bits;
    memcpy(&bits, &pair, sizeof(bits));
    hopper::StoreShared(address, bits);
  }
}

template <int kBlockM, int kBlockN, int kCluster, WgmmaLhs kLhs, typename Out, GemmScaling kScaling>
__global__ void __launch_bounds__(TileShape<kBlockM, kBlockN, sizeof(Out), kScaling>::kThreads, 1)
    block_scaled_gemm_kernel(const __grid_constant__ CUtensorMap lhs_map,
                             const __grid_constant__ CUtensorMap rhs_map,
                             const __grid_constant__ CUtensorMap lhs_scale_map,
                             const __grid_constant__ CUtensorMap rhs_scale_map,
                             const __grid_constant__ CUtensorMap output_map,
                             const KernelArgs args) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Shape = TileShape<kBlockM, kBlockN, sizeof(Out), kScaling>;
  constexpr bool kColumnScales = kScaling == GemmScaling::kColumnBlocks;
  constexpr bool kOuterScales = kScaling == GemmScaling::kOuter;
  // Producer warps that stage the scales: A's and B 128x128's one (warp 1), B 1x128's (warp 2);
  // with scale maps, lane 0 of warp 1 alone.
  constexpr int kScaleWarps = kOuterScales ? 0 : kColumnScales ? 2 : 1;
  using Wgmma = hopper::WgmmaFp8<kBlockN, kLhs>;
  constexpr int kStages = Shape::kStages;
  constexpr int kSlices = Shape::kSlices;
  constexpr int kRegisters = Wgmma::kRegisters;
  constexpr MathSchedule kSchedule = kMathSchedule<kBlockM, kBlockN, kScaling>;
  constexpr bool kPipelined = kSchedule == MathSchedule::kTwoPartialSums;
  constexpr bool kTakesTurns = kSchedule == MathSchedule::kTakingTurns;
  // Split-K's reduction needs registers too: only the tiles of up to 128 rows (those that
  // problems with few tiles use) have them.
  constexpr bool kSplitK = kBlockM <= kMaxSplitKBlockM;
  constexpr int kTurnBarrier = 8;  // named barriers 8.. (0-4: __syncthreads, math, staging)

  extern __shared__ uint8_t shared_unaligned[];
  uint8_t* shared = reinterpret_cast<uint8_t*>(
      (reinterpret_cast<uintptr_t>(shared_unaligned) + 1023) & ~uintptr_t{1023});
  uint8_t* output_staging = shared;  // [math warpgroup][staged slice][box][64 rows][box row]
  uint8_t* lhs_tiles = output_staging + Shape::kOutputBytes;
  uint8_t* rhs_tiles = lhs_tiles + kStages * Shape::kLhsTileBytes;
  float* scales = reinterpret_cast<float*>(rhs_tiles + kStages * Shape::kRhsTileBytes);
  float* outer_scales = scales + kStages * Shape::kScaleBytes / 4;  // [math warpgroup][floats]
  uint64_t* full = reinterpret_cast<uint64_t*>(outer_scales + Shape::kOuterScaleBytes / 4);
  uint64_t* empty = full + kStages;
  uint64_t* completed = empty + kStages;  // its phase of parity 0 has completed: waits pass
  int* adds_the_runs = reinterpret_cast<int*>(completed + 1);  // split-K: this CTA is last
  // Stage s's scales: A's block_m (one per tile row), then B's one (or block_n: B 1x128).
  const auto lhs_scales = [&](int stage) { return scales + stage * Shape::kScaleBytes / 4; };
  const auto rhs_scale = [&](int stage) { return lhs_scales(stage) + Shape::kLhsScaleBytes / 4; };

  const int warpgroup = threadIdx.x / kWarpgroupThreads;
  const int warp_in_group = (threadIdx.x % kWarpgroupThreads) / 32;
  const int lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    hopper::PrefetchTensorMap(&lhs_map);
    hopper::PrefetchTensorMap(&rhs_map);
    if (args.tma_store) hopper::PrefetchTensorMap(&output_map);
    if (args.scale_maps) {
      hopper::PrefetchTensorMap(&lhs_scale_map);
      if (kColumnScales) hopper::PrefetchTensorMap(&rhs_scale_map);
    }
    for (int s = 0; s < kStages; ++s) {
      // The copy thread and the scale warps' lanes.
      hopper::BarrierInit(&full[s], 1 + (args.scale_maps ? 1 : kScaleWarps * 32));
      // Released by every math warp of every CTA whose A copies land here.
      hopper::BarrierInit(&empty[s], Shape::kMathWarps * kCluster);
    }
    hopper::BarrierInit(completed, 1);
    hopper::BarrierArrive(completed);
    hopper::FenceBarrierInit();
  }
  __syncthreads();
  if constexpr (kCluster > 1) hopper::ClusterSync();
  // Launched as a programmatic dependent of the kernel before it in the stream, this grid's
  // set-up above overlaps that kernel's last CTAs; its memory (operands, scales, the split-K
  // workspace, D) is touched only from here on.
  hopper::WaitForPriorGrids();

  const int rank = kCluster > 1 ? static_cast<int>(hopper::ClusterRank()) : 0;
  const int first_unit = blockIdx.x / kCluster, unit_stride = gridDim.x / kCluster;
  // A unit of work is one run of K-blocks of one cluster's tiles; a tile's runs are
  // consecutive units, so that they run side by side.
  // Computed where each loop starts, after the register budgets changed: kept from here, the
  // 256-row f32 tiles spilled it.
  const auto units_of_work = [&] { return args.unit_rows * args.unit_cols * args.k_splits; };
  const auto blocks_of = [&](int unit) {
    const int first = (unit % args.k_splits) * args.blocks_per_split;
    return min(args.k_blocks - first, args.blocks_per_split);
  };
  if (warpgroup == Shape::kMathWarpgroups) {
    // ---- Producer warpgroup: warp 0 copies the operand tiles, warp 1 the scales (A's, and B's
    // one per tile), warp 2 B's per-column scales (B 1x128; a warp of its own, as the
    // producer's few registers do not hold both loops). Outer scales are not copied: they
    // apply to D.
    if constexpr (Shape::kMathWarpgroups > 1) {
      hopper::ReleaseRegisters<kProducerRegisters<Shape::kMathWarpgroups>>();
    }
    if (warp_in_group > kScaleWarps || (warp_in_group == 0 && lane != 0) ||
        (args.scale_maps && (warp_in_group > 1 || lane != 0))) {
      return;
    }
    const bool copies_tiles = warp_in_group == 0;
    const int units = units_of_work();
    StageRing ring;
    for (int unit = first_unit; unit < units; unit += unit_stride) {
      const TileOrigin origin =
          TileAt<kBlockM, kBlockN, kCluster>(unit / args.k_splits, rank, args);
      const bool has_columns = origin.col < args.n;
      const float* rhs_scale_row =
          args.rhs_scale + (origin.col / kScaleColumns) * args.rhs_scale_row_stride;
      // The bounds once per unit: the copies' asm statements clobber memory, so a bound written
      // into the loop's condition was recomputed (a division) at every block, on the one thread
      // that issues every stage's copies (H200, 2026-12-03: 64-row tiles 1.37-1.44x faster at
      // M <= 128).
      const int first_block = (unit % args.k_splits) * args.blocks_per_split;
      const int end_block = first_block + blocks_of(unit);
      for (int kb = first_block; kb < end_block; ++kb) {
        uint64_t* filled = &full[ring.stage];
        hopper::BarrierWait(&empty[ring.stage], ring.phase ^ 1);
        if (copies_tiles) {
          hopper::BarrierArriveExpectBytes(filled, Shape::kLhsTileBytes + Shape::kRhsTileBytes);
          if constexpr (kCluster == 1) {
            hopper::TmaLoad2d(lhs_tiles + ring.stage * Shape::kLhsTileBytes, &lhs_map, filled,
                              kb * kBlockK, origin.row);
          } else {
            // This CTA copies its share of A's rows into every CTA of the cluster.
            constexpr int kShareRows = kBlockM / kCluster;
            hopper::TmaLoad2dMulticast(
                lhs_tiles + ring.stage * Shape::kLhsTileBytes + rank * kShareRows * kBlockK,
                &lhs_map, filled, kb * kBlockK, origin.row + rank * kShareRows,
                (1u << kCluster) - 1);
          }
          hopper::TmaLoad2d(rhs_tiles + ring.stage * Shape::kRhsTileBytes, &rhs_map, filled,
                            kb * kBlockK, origin.col);
        } else if (!kOuterScales && args.scale_maps) {
          // Lane 0 of warp 1: the copy engine brings A's scales (and B 1x128's) in the same
          // phase as the tiles; every CTA of a cluster copies its own A scales (the same rows;
          // they are small). Rows and columns past the edges arrive as zeros. B 128x128's one
          // scale is no box the copy engine takes (a box starts on 16 bytes): a cp.async.
          hopper::BarrierExpectBytes(filled, (kBlockM + (kColumnScales ? kBlockN : 0)) * 4);
          hopper::TmaLoad2d(lhs_scales(ring.stage), &lhs_scale_map, filled, origin.row, kb);
          if constexpr (kColumnScales) {
            hopper::TmaLoad2d(rhs_scale(ring.stage), &rhs_scale_map, filled, origin.col, kb);
            hopper::BarrierArrive(filled);
          } else {
            if (has_columns) {
              hopper::CopyAsync4(rhs_scale(ring.stage),
                                 rhs_scale_row + kb * args.rhs_scale_block_stride);
            } else {
              rhs_scale(ring.stage)[0] = 0.0f;
            }
            hopper::BarrierArriveWhenCopiesLand(filled);
          }
        } else if (kColumnScales && warp_in_group == 2) {
          // One B scale per column, the same way as A's rows (columns past N: zeros).
          float* stage_columns = rhs_scale(ring.stage);
          const float* block_columns = args.rhs_scale + kb * args.rhs_scale_block_stride;
          for (int c = 4 * lane; c < kBlockN && args.rhs_scale_vectors; c += 4 * 32) {
            const int col = origin.col + c;
            if (col < args.n) {
              hopper::CopyAsync16(stage_columns + c, block_columns + col);
            } else {
              stage_columns[c] = stage_columns[c + 1] = stage_columns[c + 2] =
                  stage_columns[c + 3] = 0.0f;
            }
          }
          for (int c = lane; c < kBlockN && !args.rhs_scale_vectors; c += 32) {
            const int col = origin.col + c;
            if (col < args.n) {
              hopper::CopyAsync4(stage_columns + c,
                                 block_columns + col * args.rhs_scale_row_stride);
            } else {
              stage_columns[c] = 0.0f;
            }
          }
          hopper::BarrierArriveWhenCopiesLand(filled);
        } else {
          float* stage_scales = lhs_scales(ring.stage);
          const float* block_scales = args.lhs_scale + kb * args.lhs_scale_block_stride;
          if (args.lhs_scale_vectors) {
            // M-major scales with 16-byte aligned K-blocks: 4 rows per copy (M % 4 == 0, so a
            // group of 4 rows is all inside M or all past it).
            for (int r = 4 * lane; r < kBlockM; r += 4 * 32) {
              const int row = origin.row + r;
              if (row < args.m) {
                hopper::CopyAsync16(stage_scales + r, block_scales + row);
              } else {
                stage_scales[r] = stage_scales[r + 1] = stage_scales[r + 2] = stage_scales[r + 3] =
                    0.0f;
              }
            }
          }
          for (int r = lane; r < kBlockM && !args.lhs_scale_vectors; r += 32) {
            const int row = origin.row + r;
            if (row < args.m) {
              hopper::CopyAsync4(stage_scales + r, args.lhs_scale +
                                                       row * args.lhs_scale_row_stride +
                                                       kb * args.lhs_scale_block_stride);
            } else {
              stage_scales[r] = 0.0f;  // rows past M: their partial sums are zero anyway
            }
          }
          if (kColumnScales) {
            // B 1x128: warp 2 copies its scales.
          } else if (lane == 0 && has_columns) {
            hopper::CopyAsync4(rhs_scale(ring.stage),
                               rhs_scale_row + kb * args.rhs_scale_block_stride);
          } else if (lane == 0) {
            rhs_scale(ring.stage)[0] = 0.0f;
          }
          hopper::BarrierArriveWhenCopiesLand(filled);
        }
        ring.Advance(kStages);
      }
    }
    // Every copy this CTA issues is issued: the next kernel may start on the SMs this grid
    // frees as its CTAs finish (it waits for all of this grid before touching memory).
    if (copies_tiles && args.lets_next_grid_start_early) hopper::LetDependentGridsStart();
    if constexpr (kCluster > 1) {
      // The other CTAs' math warps still arrive on this CTA's barriers: stay until every stage
      // has been released once more, i.e. by all of them.
      if (copies_tiles) {
        for (int i = 0; i < kStages; ++i) {
          hopper::BarrierWait(&empty[ring.stage], ring.phase ^ 1);
          ring.Advance(kStages);
        }
      }
    }
    return;
  }

  // ---- Math: slices of 64 rows. In wgmma's accumulator layout this thread holds rows r and
  // r + 8 of each slice (r below), columns 8j + 2(lane % 4) and the next, for j < N / 8.
  if constexpr (Shape::kMathWarpgroups > 1) {
    hopper::AcquireRegisters<kMathRegisters<Shape::kMathWarpgroups>>();
  }
  // A constant where there is one math warpgroup: issue_block's slice offsets fold away.
  const int first_slice_row = Shape::kMathWarpgroups == 1 ? 0 : warpgroup * kSlices * kSliceRows;
  const int row_in_slice = warp_in_group * 16 + lane / 4;
  Out* output = static_cast<Out*>(args.output);

  // One K-block of one slice on the tensor core: the 4 wgmma k32 steps into `partial`, committed
  // as one group. Returns the block's promotion factors for this thread's two rows, read from
  // shared memory now, while the stage is certainly still filled: scale_a * scale_b, or scale_a
  // alone with B 1x128 (promote_block multiplies in each column's scale_b).
  // continue_sum: add to `partial` rather than start it (outer scales: one partial sum over
  // several blocks).
  // Shared memory is addressed here through the shared window's 32-bit addresses: one LDS per
  // scale, and the descriptors of stage 0's tiles (A: this warpgroup's first slice) made once and
  // moved on by a block's stage and slice in their low word. Generic pointers took 64-bit
  // arithmetic and generic loads between two wgmma groups (H200, 2026-12-03: 1.00-1.06x with
  // block scales, 1.01-1.11x with tensor scales).
  const uint32_t scales_address = hopper::SharedAddress(scales);
  // The 256-row f32 tiles with outer scales have no registers to spare: ptxas spills with each
  // of the choices below that cost registers elsewhere (A's uniform address, the staging stores
  // by shared address, the wait closing the K loop's body), so they keep the plain forms.
  constexpr bool kShortOfRegisters = kSlices == 2 && kOuterScales && sizeof(Out) == 4;
  // A's address is the same in every lane of a warp; read through a shuffle, ptxas knows it is
  // and keeps the descriptors in uniform registers instead of moving them there before every
  // wgmma. With the stage's shuffle in issue_block, the K loop of the 256x128 tile went from 240
  // to 201 instructions per block, 128x128's from 262 to 237 (H200, 2026-12-03: block scales
  // +2.4-5.6% at M = 4096, tensor scales promoted +2-6%).
  constexpr bool kUniformLhsAddress = !kShortOfRegisters;
  // The epilogue's stores into the staging boxes by 32-bit shared address (STS; through a
  // pointer they were generic stores after 64-bit address arithmetic).
  constexpr bool kStagesBySharedAddress = !kShortOfRegisters;
  uint32_t lhs_address = hopper::SharedAddress(lhs_tiles) + first_slice_row * kBlockK;
  if constexpr (kUniformLhsAddress) lhs_address = __shfl_sync(0xFFFFFFFFu, lhs_address, 0);
  const uint64_t lhs_descriptor = hopper::SwizzledK128Descriptor(lhs_address);
  const uint64_t rhs_descriptor = hopper::SwizzledK128Descriptor(hopper::SharedAddress(rhs_tiles));
  // Every group waits for the warpgroup before to have issued its own. The last warpgroup gives
  // warpgroup 0 its first turn here, and warpgroup 0 takes the turn left after the last group at
  // the end, so that every arrival meets a wait and no barrier is left half-arrived.
  if (kTakesTurns && warpgroup == Shape::kMathWarpgroups - 1) {
    hopper::NamedBarrierArrive(kTurnBarrier, 2 * kWarpgroupThreads);
  }
  const auto take_turn = [&] {
    if constexpr (kTakesTurns) {
      hopper::NamedBarrierSync(kTurnBarrier + warpgroup, 2 * kWarpgroupThreads);
    }
  };
  const auto pass_turn = [&] {
    if constexpr (kTakesTurns) {
      hopper::NamedBarrierArrive(kTurnBarrier + (warpgroup + 1) % Shape::kMathWarpgroups,
                                 2 * kWarpgroupThreads);
    }
  };
  const auto issue_block = [&](float(&partial)[kRegisters], int stage, int slice_row,
                               bool continue_sum = false) {
    // The stage is the same in every lane; read through a shuffle, ptxas knows it is and keeps
    // what is built from it (descriptors, scale addresses) in uniform registers.
    stage = __shfl_sync(0xFFFFFFFFu, stage, 0);
    float2 promote = make_float2(1.0f, 1.0f);  // outer scales
    if constexpr (!kOuterScales) {
      const uint32_t stage_scales = scales_address + stage * Shape::kScaleBytes;
      const uint32_t rows = stage_scales + (slice_row + row_in_slice) * 4;
      promote = make_float2(hopper::LoadSharedFloat(rows), hopper::LoadSharedFloat(rows + 8 * 4));
      if constexpr (!kColumnScales) {
        // B's one scale: lane 0 reads it and hands it on, so that the only read of it is
        // ordered before the stage's release by lane 0's own arrive (release_stage).
        float scale_b = 0.0f;
        if (lane == 0) scale_b = hopper::LoadSharedFloat(stage_scales + Shape::kLhsScaleBytes);
        scale_b = __shfl_sync(0xFFFFFFFFu, scale_b, 0);
        promote = make_float2(__fmul_rn(promote.x, scale_b), __fmul_rn(promote.y, scale_b));
      }
    }
    constexpr int kDescriptorUnit = 16;  // descriptors count 16 bytes
    const uint64_t a = hopper::AdvanceDescriptor(
        lhs_descriptor,
        (stage * Shape::kLhsTileBytes + (slice_row - first_slice_row) * kBlockK) / kDescriptorUnit);
    const uint64_t b =
        hopper::AdvanceDescriptor(rhs_descriptor, stage * Shape::kRhsTileBytes / kDescriptorUnit);
#pragma unroll
    for (int i = 0; i < kRegisters; ++i) hopper::FenceRegister(partial[i]);
    take_turn();
    hopper::WgmmaFence();
#pragma unroll
    for (int step = 0; step < kBlockK / kWgmmaK; ++step) {
      constexpr uint32_t kStepUnits = kWgmmaK / kDescriptorUnit;
      Wgmma::Run(partial, hopper::AdvanceDescriptor(a, step * kStepUnits),
                 hopper::AdvanceDescriptor(b, step * kStepUnits), step > 0 || continue_sum);
    }
    hopper::WgmmaCommitGroup();
    pass_turn();
    return promote;
  };
  // The stage is free once this warpgroup's wgmma that read it have completed. Lane 0's arrive
  // releases only lane 0's own reads: with block scales the warp's barrier first orders the
  // other lanes' reads of the stage's A scales before it (the memory model's rule; in hardware
  // their values are in registers long before). With outer scales no lane reads the stage: the
  // barrier, no instruction but a fence to ptxas's scheduling, cost the promoted loop up to 7%
  // (H100, 2026-12-05).
  const auto release_stage = [&](int stage) {
    if constexpr (!kOuterScales) __syncwarp();
    if (lane == 0) hopper::BarrierArrive(&empty[stage]);
    // The stage's A also came from the other CTAs: they may refill it only when this CTA is
    // done with it too. Lane c + 1 tells CTA c.
    if constexpr (kCluster > 1) {
      if (lane >= 1 && lane <= kCluster && lane - 1 != rank) {
        hopper::BarrierArriveInCta(&empty[stage], lane - 1);
      }
    }
  };
  const auto promote_block = [&](float(&acc)[kRegisters], float(&partial)[kRegisters],
                                 float2 promote, int stage) {
    if constexpr (kColumnScales) {
      // This thread's columns 8j + 2(lane % 4) and the next: their B scales side by side, read
      // by 32-bit shared address. Through rhs_scale's pointer they were 64-bit generic loads:
      // the shared window's base is aligned at run time, which hides its address space from
      // the compiler.
      const uint32_t column_scales =
          scales_address + stage * Shape::kScaleBytes + Shape::kLhsScaleBytes + 8 * (lane % 4);
#pragma unroll
      for (int j = 0; j < kRegisters / 4; ++j) {
        const float2 scale_b = hopper::LoadSharedFloat2(column_scales + 32 * j);
#pragma unroll
        for (int i = 4 * j; i < 4 * j + 4; ++i) {
          hopper::FenceRegister(partial[i]);
          const float factor =
              __fmul_rn(i % 4 < 2 ? promote.x : promote.y, i % 2 == 0 ? scale_b.x : scale_b.y);
          acc[i] = __fmaf_rn(partial[i], factor, acc[i]);
        }
      }
    } else {
#pragma unroll
      for (int i = 0; i < kRegisters; ++i) {
        hopper::FenceRegister(partial[i]);
        acc[i] = __fmaf_rn(partial[i], i % 4 < 2 ? promote.x : promote.y, acc[i]);
      }
    }
  };
  // Outer scales: an interval's partial sum into the f32 registers, once its wgmma completed.
  const auto add_partial = [&](float(&acc)[kRegisters], float(&partial)[kRegisters]) {
#pragma unroll
    for (int r = 0; r < kRegisters; ++r) {
      hopper::FenceRegister(partial[r]);
      acc[r] = __fadd_rn(acc[r], partial[r]);
    }
  };
  // A block's wgmma have completed: free its stage and promote its partial sum. B 1x128's scales
  // are read from the stage, so it is freed after the promotion; otherwise before, so that the
  // producer can refill it meanwhile.
  const auto finish_block = [&](float(&acc)[kRegisters], float(&partial)[kRegisters],
                                float2 promote, int stage, bool release) {
    if (!kColumnScales && release) release_stage(stage);
    promote_block(acc, partial, promote, stage);
    if (kColumnScales && release) release_stage(stage);
  };

  // Waits until the ring's current stage is filled (its full barrier by address: no pointer
  // conversion in the loop).
  const uint32_t full_address = hopper::SharedAddress(full);
  const auto wait_filled = [&](const StageRing& at) {
    hopper::BarrierWait(full_address + at.stage * static_cast<uint32_t>(sizeof(uint64_t)),
                        at.phase);
  };
  // The same where `filled` says the stage holds a block of this unit, and otherwise a wait that
  // passes at once (on `completed`): without a branch, ptxas starts it before the promotion just
  // written and reads its answer after it, as in DeepGEMM's unrolled K loop, so that no barrier
  // round trip lies between the promotion and the next wgmma. (A wait written before the
  // promotion made the 256-row tiles 3-6% slower: the promotion then waits whenever the data is
  // late. A branch around the wait keeps ptxas from moving it.)
  const auto wait_filled_if = [&](const StageRing& at, bool filled) {
    // `completed` follows the full and empty barriers: an offset from full_address, so that no
    // register holds its address through the K loop.
    constexpr uint32_t kCompletedOffset = 2 * kStages * sizeof(uint64_t);
    hopper::BarrierWait(full_address + (filled ? at.stage * static_cast<uint32_t>(sizeof(uint64_t))
                                               : kCompletedOffset),
                        filled ? at.phase : 0u);
  };

  // Outer scales: this warpgroup's rows' scales and the tile's column scales into its part of
  // outer_scales (zeros past M and N), by cp.async, so that the K loop hides their latency. Read
  // from global memory in the epilogue, they cost two round trips per tile (columns through
  // shared memory, then rows) while the tensor core waited.
  // Computed where used, from threadIdx.x read afresh: no register kept through the K loop.
  const auto outer_scales_of_warpgroup = [&] {
    return hopper::SharedAddress(outer_scales) +
           ThreadIndex() / kWarpgroupThreads * Shape::kOuterScaleFloats * 4;
  };
  const auto fetch_outer_scales = [&](const TileOrigin& at) {
    const uint32_t outer_scales_address = outer_scales_of_warpgroup();
    const int thread = ThreadIndex() % kWarpgroupThreads;
    for (int c = thread; c < kBlockN; c += kWarpgroupThreads) {
      const int col = at.col + c;
      if (col < args.n) {
        hopper::CopyAsync4(outer_scales_address + c * 4,
                           args.rhs_scale + col * args.rhs_scale_row_stride);
      } else {
        hopper::StoreShared(outer_scales_address + c * 4, 0u);
      }
    }
    const uint32_t rows_address = outer_scales_address + kBlockN * 4;
    for (int r = thread; r < kSlices * kSliceRows; r += kWarpgroupThreads) {
      const int row = at.row + first_slice_row + r;
      if (row < args.m) {
        hopper::CopyAsync4(rows_address + r * 4, args.lhs_scale + row * args.lhs_scale_row_stride);
      } else {
        hopper::StoreShared(rows_address + r * 4, 0u);
      }
    }
  };

  const int units = units_of_work();
  StageRing ring;
  for (int unit = first_unit; unit < units; unit += unit_stride) {
    const TileOrigin origin = TileAt<kBlockM, kBlockN, kCluster>(unit / args.k_splits, rank, args);
    const int blocks = blocks_of(unit);
    // With split-K only the tile's last run needs them: it fetches them in the epilogue.
    const bool splits_k = kSplitK && args.k_splits > 1;
    if (kOuterScales && !splits_k) fetch_outer_scales(origin);
    float acc[kSlices][kRegisters];
#pragma unroll
    for (int v = 0; v < kSlices; ++v) {
#pragma unroll
      for (int i = 0; i < kRegisters; ++i) acc[v][i] = 0.0f;
    }

    if constexpr (kOuterScales && kSlices == 1) {
      // Tensor or row scales apply to D at the end: the tensor core sums promotion_blocks
      // K-blocks (counted from K's start, as the emulation's promotion_interval) into one
      // partial sum, which is then added to the f32 registers. Each block's stage is freed once
      // the next block's wgmma are issued and its own have completed.
      float partial0[kRegisters];
      const int end_block = (unit % args.k_splits) * args.blocks_per_split + blocks;
      int kb = (unit % args.k_splits) * args.blocks_per_split;
      int held_stage = 0;  // the stage of the last block issued: its wgmma may still run
      int interval_end = 0;
      // Where the interval that starts at kb ends without the unit's end: intervals follow one
      // another, so one division per unit, not one per interval between two wgmma groups.
      int boundary = (kb / args.promotion_blocks + 1) * args.promotion_blocks;
      // The first block of the interval that starts at kb, into `sum` (its stage waited for
      // here, or already). The buffers are named at each call, not indexed, so that ptxas sees
      // which registers each wgmma group owns.
      const auto issue_first_block = [&](float(&sum)[kRegisters], bool waited = false) {
        interval_end = min(end_block, boundary);
        boundary += args.promotion_blocks;
        if (!waited) wait_filled(ring);
        issue_block(sum, ring.stage, first_slice_row, false);
      };
      // The interval before (in `previous`) has completed once only the block just issued may
      // still run: free its last stage and add its sum.
      const auto add_previous = [&](float(&previous)[kRegisters]) {
        hopper::WgmmaWaitGroup<1>();
        release_stage(held_stage);
        add_partial(acc[0], previous);
      };
      // The interval's other blocks, each freeing the stage of the block before it.
      const auto issue_other_blocks = [&](float(&sum)[kRegisters]) {
        held_stage = ring.stage;
        ring.Advance(kStages);
        for (++kb; kb < interval_end; ++kb) {
          wait_filled(ring);
          issue_block(sum, ring.stage, first_slice_row, true);
          hopper::WgmmaWaitGroup<1>();
          release_stage(held_stage);
          held_stage = ring.stage;
          ring.Advance(kStages);
        }
      };
      const auto finish = [&](float(&sum)[kRegisters]) {
        hopper::WgmmaWaitGroup<0>();
        release_stage(held_stage);
        add_partial(acc[0], sum);
      };
      if constexpr (kPipelined) {
        // Two partial sums in turn, one interval each: interval j's sum is added once interval
        // j + 1's first block is on the tensor core, so the addition costs no tensor-core time.
        float partial1[kRegisters];
        issue_first_block(partial0);
        issue_other_blocks(partial0);
        while (true) {
          if (kb == end_block) {
            finish(partial0);
            break;
          }
          issue_first_block(partial1);
          add_previous(partial0);
          issue_other_blocks(partial1);
          if (kb == end_block) {
            finish(partial1);
            break;
          }
          issue_first_block(partial0);
          add_previous(partial1);
          issue_other_blocks(partial0);
        }
      } else {
        // One partial sum (no registers for two: the 192-row tile's three warpgroups, the
        // 128x192 tile's wide sums): each interval's wgmma are waited for before its sum is
        // added, while the other warpgroups' wgmma run. The wait for the next interval's first
        // block closes the loop's body (wait_filled_if says why).
        wait_filled(ring);
        while (kb < end_block) {
          issue_first_block(partial0, true);
          issue_other_blocks(partial0);
          finish(partial0);
          wait_filled_if(ring, kb < end_block);
        }
      }
    } else if constexpr (kPipelined) {
      // Two partial sums in turn: block kb + 1 is on the tensor core while block kb is promoted,
      // so the promotion costs no tensor-core time. The two buffers are named, not indexed,
      // so that ptxas sees which registers each wgmma group owns (the loop is unrolled by two).
      // With several math warpgroups the wait for the next block closes each half
      // (wait_filled_if says why); a lone warpgroup's (64-row tiles) stays at the half's top,
      // where its small-M tiles measured 0.5-1.5% faster (H100, 2026-12-05).
      constexpr bool kWaitClosesHalf = Shape::kMathWarpgroups > 1;
      float partial0[kRegisters], partial1[kRegisters];
      wait_filled(ring);
      int pending_stage = ring.stage;
      float2 pending = issue_block(partial0, ring.stage, first_slice_row);
      ring.Advance(kStages);
      if constexpr (kWaitClosesHalf) wait_filled_if(ring, 1 < blocks);
      for (int kb = 1;; kb += 2) {
        if (kb < blocks) {
          if constexpr (!kWaitClosesHalf) wait_filled(ring);
          const float2 next = issue_block(partial1, ring.stage, first_slice_row);
          hopper::WgmmaWaitGroup<1>();
          finish_block(acc[0], partial0, pending, pending_stage, true);
          pending = next, pending_stage = ring.stage;
          ring.Advance(kStages);
          if constexpr (kWaitClosesHalf) wait_filled_if(ring, kb + 1 < blocks);
        } else {
          hopper::WgmmaWaitGroup<0>();
          finish_block(acc[0], partial0, pending, pending_stage, true);
          break;
        }
        if (kb + 1 < blocks) {
          if constexpr (!kWaitClosesHalf) wait_filled(ring);
          const float2 next = issue_block(partial0, ring.stage, first_slice_row);
          hopper::WgmmaWaitGroup<1>();
          finish_block(acc[0], partial1, pending, pending_stage, true);
          pending = next, pending_stage = ring.stage;
          ring.Advance(kStages);
          if constexpr (kWaitClosesHalf) wait_filled_if(ring, kb + 2 < blocks);
        } else {
          hopper::WgmmaWaitGroup<0>();
          finish_block(acc[0], partial1, pending, pending_stage, true);
          break;
        }
      }
    } else {
      // Too few registers for two partial sums: each block waits for its wgmma, then promotes,
      // while the other math warpgroups' wgmma run. With outer scales (256-row tiles, which
      // promote every block: two slices leave no registers for a sum over several) the factor is
      // 1, and fma(partial, 1, acc) rounds as acc + partial does. The wait for the next block
      // closes the loop's body (wait_filled_if says why).
      constexpr bool kWaitClosesBody = !kShortOfRegisters;
      float partial[kRegisters];
      if constexpr (kWaitClosesBody) wait_filled(ring);
      for (int kb = 0; kb < blocks; ++kb) {
        if constexpr (!kWaitClosesBody) wait_filled(ring);
#pragma unroll
        for (int v = 0; v < kSlices; ++v) {
          const float2 promote = issue_block(partial, ring.stage, first_slice_row + v * kSliceRows);
          hopper::WgmmaWaitGroup<0>();
          // The stage is free after the last slice's wgmma.
          finish_block(acc[v], partial, promote, ring.stage, v == kSlices - 1);
        }
        ring.Advance(kStages);
        if constexpr (kWaitClosesBody) wait_filled_if(ring, kb + 1 < blocks);
      }
    }

    if (splits_k) {
      // The tile's last run to finish adds the runs in order (as the emulation's KSplit does)
      // and writes D below; the others leave their FP32 sums in the workspace, count themselves
      // in and are done with the tile. A run that finds every other run already counted in is
      // the last without leaving its sums: it neither stores them nor waits for the release
      // that would publish them, and it adds its own from registers. That needs room for a
      // second copy of the sums: tiles of up to 32 a thread (larger ones spilled) leave theirs
      // and read them back.
      const int math_thread = ThreadIndex();  // the math warpgroups come first
      const int run = unit % args.k_splits;
      const int tile = (unit / args.k_splits) * kCluster + rank;
      int* arrivals = &args.split_arrivals[tile];
      constexpr int kVectors = kSlices * kRegisters / 4;
      constexpr bool kSumsInRegisters = kSlices * kRegisters <= 32;
      const auto slot = [&](int r) {
        return reinterpret_cast<float4*>(args.split_partials) +
               static_cast<int64_t>(tile * args.k_splits + r) * kVectors * Shape::kMathThreads +
               math_thread;
      };
      // This run's sums, four at a time (j: constant after unrolling, so acc stays in registers).
      const auto own = [&](int j) {
        const float* a = &acc[j / (kRegisters / 4)][4 * (j % (kRegisters / 4))];
        return make_float4(a[0], a[1], a[2], a[3]);
      };
      const auto set_own = [&](int j, float4 value) {
        float* a = &acc[j / (kRegisters / 4)][4 * (j % (kRegisters / 4))];
        a[0] = value.x, a[1] = value.y, a[2] = value.z, a[3] = value.w;
      };
      bool last_already = false;
      if constexpr (kSumsInRegisters) {
        // The barriers around thread 0's write of adds_the_runs order it after every math
        // thread's read of its last value; the acquire makes the other runs' sums visible to
        // all after the second.
        hopper::NamedBarrierSync(1, Shape::kMathThreads);
        if (math_thread == 0) *adds_the_runs = hopper::LoadAcquire(arrivals) == args.k_splits - 1;
        hopper::NamedBarrierSync(1, Shape::kMathThreads);
        last_already = *adds_the_runs;
      }
      if (!last_already) {
#pragma unroll
        for (int j = 0; j < kVectors; ++j) __stcg(slot(run) + j * Shape::kMathThreads, own(j));
        // The barrier orders every math thread's stores before thread 0's release on the
        // tile's count, which publishes them all (one GPU-scope fence per run, not one per
        // thread).
        hopper::NamedBarrierSync(1, Shape::kMathThreads);
        if (math_thread == 0) {
          *adds_the_runs = hopper::AcquireReleaseIncrement(arrivals) == args.k_splits - 1;
        }
        hopper::NamedBarrierSync(1, Shape::kMathThreads);
        if (!*adds_the_runs) continue;
      }
      if (math_thread == 0) *arrivals = 0;  // every run has arrived: ready for the next launch
      // sum = ((run 0 + run 1) + run 2) + ..., each run's loads in flight together: one L2
      // round trip per run read.
      if constexpr (kSumsInRegisters) {
        // The runs before this one into `sum`, then this run's sums from registers, then the
        // runs after it into acc.
        float4 sum[kVectors];
        for (int r = 0; r < run; ++r) {
          float4 next[kVectors];
#pragma unroll
          for (int j = 0; j < kVectors; ++j) next[j] = __ldcg(slot(r) + j * Shape::kMathThreads);
#pragma unroll
          for (int j = 0; j < kVectors; ++j) sum[j] = r == 0 ? next[j] : Add(sum[j], next[j]);
        }
        if (run > 0) {
#pragma unroll
          for (int j = 0; j < kVectors; ++j) set_own(j, Add(sum[j], own(j)));
        }
        for (int r = run + 1; r < args.k_splits; ++r) {
          float4 next[kVectors];
#pragma unroll
          for (int j = 0; j < kVectors; ++j) next[j] = __ldcg(slot(r) + j * Shape::kMathThreads);
#pragma unroll
          for (int j = 0; j < kVectors; ++j) set_own(j, Add(own(j), next[j]));
        }
      } else {
        // Every run read back, this one's included (its store above is this thread's own).
        for (int r = 0; r < args.k_splits; ++r) {
          float4 next[kVectors];
#pragma unroll
          for (int j = 0; j < kVectors; ++j) next[j] = __ldcg(slot(r) + j * Shape::kMathThreads);
#pragma unroll
          for (int j = 0; j < kVectors; ++j) {
            float* a = &acc[j / (kRegisters / 4)][4 * (j % (kRegisters / 4))];
            a[0] = r == 0 ? next[j].x : __fadd_rn(a[0], next[j].x);
            a[1] = r == 0 ? next[j].y : __fadd_rn(a[1], next[j].y);
            a[2] = r == 0 ? next[j].z : __fadd_rn(a[2], next[j].z);
            a[3] = r == 0 ? next[j].w : __fadd_rn(a[3], next[j].w);
          }
        }
      }
    }

    // The warpgroup's staging boxes for the copy engine's stores of D.
    uint8_t* staging = output_staging + warpgroup * Shape::kStagedSlices * Shape::kStagedSliceBytes;
    const int staging_barrier = 2 + warpgroup;  // 0: __syncthreads, 1: all math threads
    const bool stores_output = ThreadIndex() % kWarpgroupThreads == 0;  // issues the D copies
    if constexpr (kOuterScales) {
      // D = f32(sum * f32(scale_a * scale_b)), as the emulation scales a promoted sum. A row
      // stride of 0 is one tensor scale. The column scales are read one pair at a time: all
      // kept in flight, the 256-row tiles have no registers for them (ptxas spilled).
      if (splits_k) fetch_outer_scales(origin);
      hopper::CopyAsyncWaitAll();
      hopper::NamedBarrierSync(staging_barrier, kWarpgroupThreads);  // every thread's copies
      const uint32_t outer_scales_address = outer_scales_of_warpgroup();
      const uint32_t rows_address = outer_scales_address + kBlockN * 4;
#pragma unroll
      for (int v = 0; v < kSlices; ++v) {
        float scale_a[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          scale_a[h] =
              hopper::LoadSharedFloat(rows_address + (v * kSliceRows + row_in_slice + 8 * h) * 4);
        }
#pragma unroll
        for (int j = 0; j < kRegisters / 4; ++j) {
          const float2 scale_b =
              hopper::LoadSharedFloat2InPlace(outer_scales_address + (8 * j + 2 * (lane % 4)) * 4);
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            float* d = &acc[v][4 * j + 2 * h];
            d[0] = __fmul_rn(d[0], __fmul_rn(scale_a[h], scale_b.x));
            d[1] = __fmul_rn(d[1], __fmul_rn(scale_a[h], scale_b.y));
          }
        }
      }
      // The next tile's copies overwrite the scales once every thread has read them: the copy
      // engine's path passes a staging barrier first, the other path needs one of its own.
      if (!args.tma_store) hopper::NamedBarrierSync(staging_barrier, kWarpgroupThreads);
    }

    if (args.tma_store) {
      // Through the copy engine: the warpgroup writes its slices into its staging boxes, then
      // one thread stores each box with a bulk tensor copy, which goes on while the warpgroup
      // starts its next tile. Before a staging slot is written again, the copies that read it
      // must have done so.
#pragma unroll
      for (int v = 0; v < kSlices; ++v) {
        uint8_t* slice = staging + (v % Shape::kStagedSlices) * Shape::kStagedSliceBytes;
        if (v % Shape::kStagedSlices == 0) {
          if (stores_output) hopper::BulkWaitGroupRead<0>();
          hopper::NamedBarrierSync(staging_barrier, kWarpgroupThreads);
        }
        // The copy engine's swizzle XORs a row's 16-byte chunk index with the row's place in
        // its group of 8 (128-byte rows; of 4 or 2 for 64- or 32-byte rows), the same for rows
        // r and r + 8. This thread's two columns are at byte 2 * (lane % 4) * sizeof(Out) of
        // an 8-column group, so the XOR folds into one per-thread constant.
        const int key = (row_in_slice * Shape::kBoxRowBytes >> 7) & (Shape::kBoxRowBytes / 16 - 1);
        const int lane_bytes = 2 * (lane % 4) * static_cast<int>(sizeof(Out)) ^ key << 4;
        uint8_t* row_start = slice + row_in_slice * Shape::kBoxRowBytes;
        const uint32_t row_address = hopper::SharedAddress(row_start);
#pragma unroll
        for (int j = 0; j < kRegisters / 4; ++j) {
          constexpr int kGroupBytes = 8 * sizeof(Out);
          const int box = 8 * j / Shape::kBoxColumns;
          const int group_byte = (8 * j % Shape::kBoxColumns) * static_cast<int>(sizeof(Out));
          static_assert(kGroupBytes >= 16);
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            const int offset =
                box * Shape::kBoxBytes + half * 8 * Shape::kBoxRowBytes + (group_byte ^ lane_bytes);
            const float first = acc[v][4 * j + 2 * half], second = acc[v][4 * j + 2 * half + 1];
            if constexpr (kStagesBySharedAddress) {
              StageSharedPair<Out>(row_address + offset, first, second);
            } else {
              StorePair(reinterpret_cast<Out*>(row_start + offset), first, second, true, true);
            }
          }
        }
        hopper::FenceSharedForCopyEngine();
        hopper::NamedBarrierSync(staging_barrier, kWarpgroupThreads);
        if (stores_output) {
          const int row = origin.row + first_slice_row + v * kSliceRows;
#pragma unroll
          for (int box = 0; box < kBlockN / Shape::kBoxColumns; ++box) {
            const int col = origin.col + box * Shape::kBoxColumns;
            if (row < args.m && col < args.n) {
              hopper::TmaStore2d(&output_map, slice + box * Shape::kBoxBytes, col, row);
            }
          }
          hopper::BulkCommitGroup();
        }
      }
      continue;
    }
    const int col0 = origin.col + 2 * (lane % 4);
#pragma unroll
    for (int v = 0; v < kSlices; ++v) {
      const int row0 = origin.row + first_slice_row + v * kSliceRows + row_in_slice;
      const int row1 = row0 + 8;
#pragma unroll
      for (int j = 0; j < kRegisters / 4; ++j) {
        const int col = col0 + 8 * j;
        if (col >= args.n) continue;
        const bool has_second = col + 1 < args.n;
        if (row0 < args.m) {
          StorePair(output + static_cast<int64_t>(row0) * args.output_ld + col, acc[v][4 * j],
                    acc[v][4 * j + 1], has_second, args.paired_stores);
        }
        if (row1 < args.m) {
          StorePair(output + static_cast<int64_t>(row1) * args.output_ld + col, acc[v][4 * j + 2],
                    acc[v][4 * j + 3], has_second, args.paired_stores);
        }
      }
    }
  }
  if (kTakesTurns && warpgroup == 0) {
    hopper::NamedBarrierSync(kTurnBarrier, 2 * kWarpgroupThreads);
  }
  // Shared memory must outlive the copies reading it.
  if (args.tma_store && ThreadIndex() % kWarpgroupThreads == 0) hopper::BulkWaitAll();
#endif
}

// ---- Host side -----------------------------------------------------------------------------

PFN_cuTensorMapEncodeTiled_v12000 TensorMapEncoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encoder = [] {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000,
                                         cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      return PFN_cuTensorMapEncodeTiled_v12000{nullptr};
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
  }();
  return encoder;
}

// A 2-D map over a row-major [rows][columns] tensor (rows `row_bytes` apart) whose box is
// box_columns x box_rows, swizzled as the kernel's shared-memory tiles are.
StatusOr<CUtensorMap> TensorMap2d(const char* name, const void* data, CUtensorMapDataType type,
                                  int64_t rows, int64_t columns, int64_t row_bytes, int box_columns,
                                  int box_rows, CUtensorMapSwizzle swizzle,
                                  const std::string& context) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = TensorMapEncoder();
  if (encode == nullptr) {
    return Internal("own GEMM: the driver has no cuTensorMapEncodeTiled [%s]", context.c_str());
  }
  CUtensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(columns), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(row_bytes)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_columns),
                             static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult result =
      encode(&map, type, 2, const_cast<void*>(data), dims, strides, box, element_strides,
             CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    return Internal("own GEMM: cuTensorMapEncodeTiled failed (%d) for %s [%s]",
                    static_cast<int>(result), name, context.c_str());
  }
  return map;
}

// An FP8 operand [rows][k]: one stage's tile is 128 bytes of K by `box_rows` rows, 128-byte
// swizzled for wgmma.
StatusOr<CUtensorMap> OperandMap(const char* name, const void* data, int64_t rows, int64_t k,
                                 int64_t row_bytes, int box_rows, const std::string& context) {
  return TensorMap2d(name, data, CU_TENSOR_MAP_DATA_TYPE_UINT8, rows, k, row_bytes, kBlockK,
                     box_rows, CU_TENSOR_MAP_SWIZZLE_128B, context);
}

// D [m][n]: a box is one staging box of the epilogue (TileShape), swizzled by its row length.
template <typename Shape, typename Out>
StatusOr<CUtensorMap> OutputMap(const BlockScaledGemmParams& p, const std::string& context) {
  constexpr CUtensorMapSwizzle kSwizzle = Shape::kBoxRowBytes == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                          : Shape::kBoxRowBytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                                                      : CU_TENSOR_MAP_SWIZZLE_32B;
  static_assert(Shape::kBoxRowBytes >= 32);
  return TensorMap2d("output", p.output,
                     std::is_same_v<Out, float> ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                                : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                     p.m, p.n, p.output_ld * static_cast<int64_t>(sizeof(Out)), Shape::kBoxColumns,
                     kSliceRows, kSwizzle, context);
}

// A float array [outer][inner] with inner contiguous and rows outer_stride elements apart, read
// by the copy engine in boxes of box_inner x 1. A box must start on 16 bytes of the inner
// dimension (the H200 raises an illegal instruction otherwise, after a clean encode): the
// kernel's boxes start at multiples of block_m or block_n.
struct ScaleArray {
  const float* data;
  int64_t inner, outer, outer_stride;
  int box_inner;
  // The copy engine can read it in place: base and row stride multiples of 16 bytes (one row:
  // any stride), rows not overlapping.
  bool Mappable() const {
    return reinterpret_cast<uintptr_t>(data) % 16 == 0 &&
           (outer == 1 || (outer_stride % 4 == 0 && outer_stride >= inner));
  }
  StatusOr<CUtensorMap> Map(const char* name, const std::string& context) const {
    const int64_t row_bytes = outer == 1 ? (inner * 4 + 15) / 16 * 16 : outer_stride * 4;
    return TensorMap2d(name, data, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, outer, inner, row_bytes,
                       box_inner, 1, CU_TENSOR_MAP_SWIZZLE_NONE, context);
  }
};

// The stage's block scales as the copy engine reads them with its operand tiles: A's block_m
// scales of a K-block (M-major), and with B 1x128 its block_n scales (N-major). Nothing when a
// layout does not allow it; the producer's scale warps then copy them with cp.async, from any
// layout. (B 128x128's one scale per stage is a cp.async from any layout; outer scales apply
// to D and are not staged.)
struct StagedScales {
  ScaleArray lhs;
  std::optional<ScaleArray> rhs;  // B 1x128's
};

std::optional<StagedScales> StagedScalesOf(const BlockScaledGemmParams& p) {
  const int64_t k_blocks = std::max<int64_t>(1, (p.k + kBlockK - 1) / kBlockK);
  if (p.scaling == GemmScaling::kOuter || (p.lhs_scale_row_stride != 1 && p.m > 1)) {
    return std::nullopt;
  }
  const StagedScales staged{
      {p.lhs_scale, p.m, k_blocks, p.lhs_scale_block_stride, p.tile.block_m},
      p.scaling == GemmScaling::kColumnBlocks
          ? std::optional<ScaleArray>(
                {p.rhs_scale, p.n, k_blocks, p.rhs_scale_block_stride, p.tile.block_n})
          : std::nullopt};
  const bool rhs_mappable =
      !staged.rhs || ((p.rhs_scale_row_stride == 1 || p.n == 1) && staged.rhs->Mappable());
  if (!staged.lhs.Mappable() || !rhs_mappable) return std::nullopt;
  return staged;
}

// The tensor maps of StagedScalesOf (zeros where there are none).
struct ScaleMaps {
  bool used = false;
  CUtensorMap lhs{}, rhs{};
};

StatusOr<ScaleMaps> ScaleMapsFor(const BlockScaledGemmParams& p, const std::string& context) {
  ScaleMaps maps;
  const std::optional<StagedScales> staged = StagedScalesOf(p);
  if (!staged) return maps;
  maps.used = true;
  FP8_ASSIGN_OR_RETURN(maps.lhs, staged->lhs.Map("lhs scales", context));
  if (staged->rhs) {
    FP8_ASSIGN_OR_RETURN(maps.rhs, staged->rhs->Map("rhs scales", context));
  }
  return maps;
}

// A launch of `grid` CTAs of `threads` threads, in clusters of `cluster` (a plain launch when it
// is 1), programmatic dependent or not. Holds the attributes config.attrs points at, hence not
// copyable.
struct KernelLaunch {
  cudaLaunchAttribute attributes[2]{};
  cudaLaunchConfig_t config{};
  // `dependent`: a programmatic dependent launch, which may start while the kernel before it in
  // the stream still runs (the kernel waits for it before touching memory).
  KernelLaunch(int grid, int threads, int shared_bytes, int cluster, cudaStream_t stream,
               bool dependent) {
    config.gridDim = dim3(grid);
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = shared_bytes;
    config.stream = stream;
    config.attrs = attributes;
    if (cluster > 1) {
      cudaLaunchAttribute& cluster_dims = attributes[config.numAttrs++];
      cluster_dims.id = cudaLaunchAttributeClusterDimension;
      cluster_dims.val.clusterDim = {static_cast<unsigned>(cluster), 1, 1};
    }
    if (dependent) {
      cudaLaunchAttribute& serialization = attributes[config.numAttrs++];
      serialization.id = cudaLaunchAttributeProgrammaticStreamSerialization;
      serialization.val.programmaticStreamSerializationAllowed = 1;
    }
  }
  KernelLaunch(const KernelLaunch&) = delete;
  KernelLaunch& operator=(const KernelLaunch&) = delete;
};

template <int kBlockM, int kBlockN, int kCluster, WgmmaLhs kLhs, typename Out, GemmScaling kScaling>
Status Launch(const BlockScaledGemmParams& p, cudaStream_t stream, const std::string& context) {
  using Shape = TileShape<kBlockM, kBlockN, sizeof(Out), kScaling>;
  auto kernel = block_scaled_gemm_kernel<kBlockM, kBlockN, kCluster, kLhs, Out, kScaling>;
  // Host-side attributes, once per kernel: the shared-memory limit, and how many clusters fit
  // on the GPU at once. The persistent grid takes at most that many, and at most the plan's SMs
  // (p.sm_count: the device's, or fewer when the plan leaves some to other kernels).
  static const StatusOr<int> resident_clusters = [&]() -> StatusOr<int> {
    FP8_CUDA_RETURN_IF_ERROR(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             Shape::kSharedBytes),
        context);
    if constexpr (kCluster == 1) return std::numeric_limits<int>::max();
    const KernelLaunch launch(kCluster * p.sm_count, Shape::kThreads, Shape::kSharedBytes, kCluster,
                              nullptr, false);
    int clusters = 0;
    FP8_CUDA_RETURN_IF_ERROR(cudaOccupancyMaxActiveClusters(&clusters, kernel, &launch.config),
                             context);
    return clusters;
  }();
  FP8_RETURN_IF_ERROR(resident_clusters.status());
  const int resident_units = std::min(*resident_clusters, std::max(1, p.sm_count / kCluster));

  FP8_ASSIGN_OR_RETURN(
      const CUtensorMap lhs_map,
      OperandMap("lhs", p.lhs, p.m, p.k, p.lhs_row_bytes, kBlockM / kCluster, context));
  FP8_ASSIGN_OR_RETURN(const CUtensorMap rhs_map,
                       OperandMap("rhs", p.rhs, p.n, p.k, p.rhs_row_bytes, kBlockN, context));
  KernelArgs args{};
  args.m = static_cast<int>(p.m);
  args.n = static_cast<int>(p.n);
  const BlockScaledGemmWorkLayout layout = BlockScaledGemmLayoutOf(p.tile, p.m, p.n, p.k);
  args.k_blocks = layout.k_blocks;
  args.k_splits = layout.k_splits;
  args.blocks_per_split = layout.blocks_per_split;
  args.unit_rows = layout.unit_rows;
  args.unit_cols = layout.unit_cols;
  if (layout.k_splits > 1) {
    if (kBlockM > kMaxSplitKBlockM) {
      return InvalidArgument("own GEMM: split-K runs on tiles of up to %d rows, not %s [%s]",
                             kMaxSplitKBlockM, p.tile.ToString().c_str(), context.c_str());
    }
    if (p.workspace == nullptr || p.workspace_bytes < layout.WorkspaceBytes()) {
      return InvalidArgument("own GEMM: tile %s needs a workspace of %zu bytes, got %zu [%s]",
                             p.tile.ToString().c_str(), layout.WorkspaceBytes(), p.workspace_bytes,
                             context.c_str());
    }
    args.split_arrivals = static_cast<int*>(p.workspace);
    args.split_partials =
        reinterpret_cast<float*>(static_cast<char*>(p.workspace) + layout.ArrivalBytes());
  }
  args.lhs_scale = p.lhs_scale;
  args.lhs_scale_vectors = p.lhs_scale_row_stride == 1 && p.m % 4 == 0 &&
                           p.lhs_scale_block_stride % 4 == 0 &&
                           reinterpret_cast<uintptr_t>(p.lhs_scale) % 16 == 0;
  args.rhs_scale_vectors = p.rhs_scale_row_stride == 1 && p.n % 4 == 0 &&
                           p.rhs_scale_block_stride % 4 == 0 &&
                           reinterpret_cast<uintptr_t>(p.rhs_scale) % 16 == 0;
  FP8_ASSIGN_OR_RETURN(const ScaleMaps scale_maps, ScaleMapsFor(p, context));
  args.scale_maps = scale_maps.used;
  args.promotion_blocks = p.promotion_blocks;
  args.lhs_scale_row_stride = p.lhs_scale_row_stride;
  args.lhs_scale_block_stride = p.lhs_scale_block_stride;
  args.rhs_scale = p.rhs_scale;
  args.rhs_scale_row_stride = p.rhs_scale_row_stride;
  args.rhs_scale_block_stride = p.rhs_scale_block_stride;
  args.output = p.output;
  args.output_ld = p.output_ld;
  args.tma_store =
      (p.output_ld * sizeof(Out)) % 16 == 0 && reinterpret_cast<uintptr_t>(p.output) % 16 == 0;
  args.paired_stores =
      p.output_ld % 2 == 0 && reinterpret_cast<uintptr_t>(p.output) % (2 * sizeof(Out)) == 0;
  CUtensorMap output_map{};
  if (args.tma_store) {
    FP8_ASSIGN_OR_RETURN(output_map, (OutputMap<Shape, Out>(p, context)));
  }
  const int units = args.unit_rows * args.unit_cols * args.k_splits;
  const int grid = kCluster * std::max(1, std::min(units, resident_units));
  args.lets_next_grid_start_early = p.lets_next_grid_start_early;
  const KernelLaunch launch(grid, Shape::kThreads, Shape::kSharedBytes, kCluster, stream,
                            p.dependent_launch);
  FP8_CUDA_RETURN_IF_ERROR(cudaLaunchKernelEx(&launch.config, kernel, lhs_map, rhs_map,
                                              scale_maps.lhs, scale_maps.rhs, output_map, args),
                           context);
  return OkStatus();
}

template <WgmmaLhs kLhs, typename Out, GemmScaling kScaling>
Status LaunchForTile(const BlockScaledGemmParams& p, cudaStream_t stream,
                     const std::string& context) {
  const BlockScaledGemmTile& t = p.tile;
#define FP8DOT_LAUNCH_TILE(M, N, C)                                    \
  if constexpr (BlockScaledGemmBuildsTile(kScaling, N)) {              \
    if (t.block_m == M && t.block_n == N && t.cluster == C) {          \
      return Launch<M, N, C, kLhs, Out, kScaling>(p, stream, context); \
    }                                                                  \
  }
  FP8DOT_OWN_GEMM_TILES(FP8DOT_LAUNCH_TILE)
#undef FP8DOT_LAUNCH_TILE
  return Internal("own GEMM: no kernel for tile %s [%s]", t.ToString().c_str(), context.c_str());
}

template <WgmmaLhs kLhs, typename Out>
Status LaunchForOutput(const BlockScaledGemmParams& p, cudaStream_t stream,
                       const std::string& context) {
  switch (p.scaling) {
    case GemmScaling::kColumnBlocks:
      return LaunchForTile<kLhs, Out, GemmScaling::kColumnBlocks>(p, stream, context);
    case GemmScaling::kOuter:
      return LaunchForTile<kLhs, Out, GemmScaling::kOuter>(p, stream, context);
    default:
      return LaunchForTile<kLhs, Out, GemmScaling::kBlocks>(p, stream, context);
  }
}

template <WgmmaLhs kLhs>
Status LaunchForLhs(const BlockScaledGemmParams& p, cudaStream_t stream,
                    const std::string& context) {
  if (p.output_type == DType::kBF16) {
    return LaunchForOutput<kLhs, __nv_bfloat16>(p, stream, context);
  }
  return LaunchForOutput<kLhs, float>(p, stream, context);
}

}  // namespace

bool BlockScaledGemmStagesScalesByCopyEngine(const BlockScaledGemmParams& params) {
  return StagedScalesOf(params).has_value();
}

Status LaunchBlockScaledGemm(const BlockScaledGemmParams& p, cudaStream_t stream,
                             const std::string& context) {
  if (std::string why = BlockScaledGemmRejection(p); !why.empty()) {
    return InvalidArgument("%s [%s]", why.c_str(), context.c_str());
  }
  if (p.lhs_type == DType::kF8E5M2) return LaunchForLhs<WgmmaLhs::kE5m2>(p, stream, context);
  return LaunchForLhs<WgmmaLhs::kE4m3>(p, stream, context);
}

}  // namespace fp8dot::cuda
