// fp8dot's own Hopper FP8 GEMM (sm_90a): D[M,N] = sum over K-blocks of 128 of
// (A_kb . B_kb) * scale_a[m, kb] * scale_b[n / 128, kb], the DeepSeek recipe (A 1x128,
// B 128x128; or B 1x128, scale_b[n, kb], for the weight-gradient GEMM), with every block's
// partial sum promoted into FP32 registers where the scales are applied; or, with row or tensor
// scales, promoted every promotion_blocks K-blocks and scaled at the end (GemmScaling).
// block_scaled_gemm.cu says how, and why it is bit-identical to the CPU emulation.
//
// Operands are K-major (TN): lhs [M][K] and rhs [N][K], rows `ld` bytes apart (a multiple of 16,
// as the copy engine requires), e4m3 or e5m2 lhs, e4m3 rhs. D is row-major bf16 or f32. Any M,
// N, K >= 1: ragged tiles are zero-filled by the copy engine and masked on the way out.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "fp8dot/dtype.h"
#include "fp8dot/status.h"

namespace fp8dot::cuda {

// One CTA computes block_m x block_n of D: 64 (one math warpgroup), 128 (two) or 256 (two, of
// 2 x 64 rows each) by 16, 32, 64 or 128 columns (each divides the 128 columns one B scale
// covers). With cluster = 2, two CTAs computing neighbouring column tiles of the same rows
// load A once between them (each copies half into both, TMA multicast). With k_splits > 1
// (split-K, for problems with fewer tiles than SMs), each tile's K-blocks are cut into that many
// runs, computed by different CTAs; the last to finish adds the runs' FP32 sums in order and
// writes D (KSplit's rule, so the emulation models it), through the plan's workspace.
struct BlockScaledGemmTile {
  int block_m = 128;
  int block_n = 128;
  int cluster = 1;
  int k_splits = 1;
  std::string ToString() const;  // "128x64", "256x128c2", "64x128s4"
};

// The tiles the kernel is instantiated for (k_splits 1; any k_splits runs on each).
std::vector<BlockScaledGemmTile> BlockScaledGemmTiles();

// "64x128", "128x128c2", "64x128s4" (k_splits 4): INVALID_ARGUMENT naming the known tiles when
// the kernel has no such tile.
StatusOr<BlockScaledGemmTile> ParseBlockScaledGemmTile(const std::string& text);

// The number of runs `tile` really cuts K into (k_splits, less when K has too few blocks for
// that many non-empty runs of equal length).
int EffectiveKSplits(const BlockScaledGemmTile& tile, int64_t k);

// The units of work a launch of `tile` has on an M x N x K problem, one CTA's each: its tiles
// times the runs EffectiveKSplits cuts K into.
int64_t BlockScaledGemmWorkUnits(const BlockScaledGemmTile& tile, int64_t m, int64_t n, int64_t k);

// K per block scale and per pipeline stage: one 128-byte row of an FP8 tile.
constexpr int kBlockScaledGemmBlockK = 128;
// Split-K runs on tiles of up to this many rows (the kernel's in-kernel reduction fits these).
constexpr int kBlockScaledGemmMaxSplitKRows = 128;

// The tiles the kernel is instantiated for, as X(block_m, block_n, CTAs per cluster sharing A):
// the launcher's dispatch and BlockScaledGemmTiles both expand it.
#define FP8DOT_OWN_GEMM_TILES(X) \
  X(256, 128, 2)                 \
  X(256, 128, 1)                 \
  X(256, 64, 1)                  \
  X(192, 128, 1)                 \
  X(128, 192, 1)                 \
  X(128, 128, 2)                 \
  X(128, 128, 1)                 \
  X(128, 64, 1)                  \
  X(128, 32, 1)                  \
  X(64, 128, 1)                  \
  X(64, 64, 1)                   \
  X(64, 32, 1)                   \
  X(64, 16, 1)

// How an M x N x K problem is cut into units of work, one CTA's each: the tiles, in clusters,
// times the runs of K-blocks that split-K cuts each tile's K into (equal length, the last may be
// shorter, none empty: fewer runs than k_splits when K has too few blocks).
struct BlockScaledGemmWorkLayout {
  int k_blocks, k_splits, blocks_per_split;
  int unit_rows, unit_cols;  // in clusters of tiles
  int block_m, block_n, cluster;
  int64_t Tiles() const { return int64_t{unit_rows} * unit_cols * cluster; }
  // Split-K's workspace: one arrival count per tile, then each run's FP32 sums.
  size_t ArrivalBytes() const {
    return (static_cast<size_t>(Tiles()) * sizeof(int) + 255) / 256 * 256;
  }
  size_t WorkspaceBytes() const {
    if (k_splits == 1) return 0;
    return ArrivalBytes() + static_cast<size_t>(Tiles()) * k_splits * block_m * block_n * 4;
  }
};
BlockScaledGemmWorkLayout BlockScaledGemmLayoutOf(const BlockScaledGemmTile& tile, int64_t m,
                                                  int64_t n, int64_t k);

// How the scales apply.
enum class GemmScaling {
  // A 1x128, B 128x128: each 128-K block's partial sum is promoted into f32 with
  // scale_a(m, kb) * scale_b(n / 128, kb).
  kBlocks,
  // A 1x128, B 1x128 (the weight-gradient GEMM): the same with scale_b(n, kb).
  kColumnBlocks,
  // A per row or one tensor scale, B per column or one: the tensor core sums promotion_blocks
  // K-blocks into a partial sum, partial sums are added in f32, and D = sum * scale_a(m) *
  // scale_b(n) at the end (promoted accumulation with a promotion interval of its own).
  kOuter,
};
const char* GemmScalingName(GemmScaling scaling);  // "1x128 x 128x128", ..., "row or tensor"

// Whether the kernel is built for tiles `block_n` wide with `scaling`: a tile wider than the 128
// columns one B 128x128 scale covers would need two B scales per K-block, so outer scales only.
constexpr bool BlockScaledGemmBuildsTile(GemmScaling scaling, int block_n) {
  return block_n <= 128 || scaling == GemmScaling::kOuter;
}

// Whether the kernel has `tile` for `scaling` promoted every `promotion_blocks` K-blocks: with
// block scales (either B) every tile of up to 128 columns; with kOuter every tile, but the
// 256-row ones only when they promote every block (their warpgroups' two slices leave no
// registers for a partial sum that outlives a block); the 192-column tile with kOuter only (it
// would need two B 128x128 scales per block).
bool BlockScaledGemmTileTakes(const BlockScaledGemmTile& tile, GemmScaling scaling,
                              int promotion_blocks);

// A tile's rows are 64-row slices (a wgmma's M), one per math warpgroup, two on 256-row tiles.
constexpr int SlicesPerWarpgroup(int block_m) { return block_m == 256 ? 2 : 1; }
constexpr int MathWarpgroups(int block_m) { return block_m / 64 / SlicesPerWarpgroup(block_m); }

// Registers a math thread has after setmaxnreg: 232 with one or two math warpgroups, 152 with
// three (with the producer warpgroup's share, exactly what the CTA is launched with).
constexpr int MathRegistersPerThread(int math_warpgroups) {
  return math_warpgroups == 3 ? 152 : 232;
}

// How a tile's math warpgroups keep the tensor core busy (the kernel's main loop; the plan's
// explain names it). A warpgroup owns 64-row slices of the tile (two on 256-row tiles) and, per
// slice and K-block, runs the wgmma into a partial sum that it then promotes into its f32
// accumulators; what it can overlap depends on the registers left for partial sums.
enum class MathSchedule {
  // One slice and two partial sums in turn: block k + 1 is on the tensor core while block k is
  // promoted. Needs registers for three 64 x block_n sums and ~40 more.
  kTwoPartialSums,
  // One partial sum: the warpgroup waits for each block's wgmma and promotes it while the other
  // warpgroups' wgmma run. With B 1x128 on several warpgroups even where two sums would fit:
  // measured faster (H200, 2026-12-04: 128x64 1.05-1.07x), and it leaves 128x128 the registers
  // for the per-column scales.
  kOnePartialSum,
  // kOnePartialSum, the warpgroups issuing their wgmma in turn: warpgroup w only once w - 1 has
  // issued its own. Left alone they fall into step (released by the same stage barrier), their
  // groups complete together and the tensor core idles while all of them promote. Outer scales
  // on one-slice tiles of several warpgroups (192x128, 128x192; H200, 2026-12-04, promoted
  // every 128: 1.05-1.18x and 1.11-1.14x). Measured and left out: block scales on 192x128
  // (0.96-1.00x), B 1x128 on 128x128 (0.96-0.98x), the 256-row tiles (0.97-0.99x).
  kTakingTurns,
};
constexpr MathSchedule MathScheduleOf(int block_m, int block_n, GemmScaling scaling) {
  const int slices = SlicesPerWarpgroup(block_m);
  const int warpgroups = MathWarpgroups(block_m);
  const int registers_per_sum = block_n / 2;  // a 64 x block_n f32 sum, per thread
  const bool column_scales = scaling == GemmScaling::kColumnBlocks;
  if (slices == 1 && 3 * registers_per_sum + 40 <= MathRegistersPerThread(warpgroups) &&
      !(column_scales && warpgroups > 1)) {
    return MathSchedule::kTwoPartialSums;
  }
  if (scaling == GemmScaling::kOuter && slices == 1 && warpgroups > 1) {
    return MathSchedule::kTakingTurns;
  }
  return MathSchedule::kOnePartialSum;
}
const char* MathScheduleDescription(MathSchedule schedule);  // for explain

// The GPU a tile is chosen for.
struct GemmDevice {
  int sm_count = 0;  // the SMs the GEMM may use
  // DRAM's peak bytes per SM clock (DramBytesPerClock); 0 where unknown, and the cost model
  // then leaves DRAM out.
  double dram_bytes_per_clock = 0;
};

// Peak DRAM bytes per peak SM clock from the driver's figures (CudaDeviceInfo); 0 if either is.
double DramBytesPerClock(double memory_bytes_per_second, int sm_clock_khz);

// The tile and split whose estimated time (tensor-core time or operand bytes, whichever bounds
// it, per wave, or the time to read the operands from DRAM; plus split-K's reduction) is the
// least on `device`, among the tiles for `scaling` and `promotion_blocks` (no split-K when that
// is above 1); then the measured rules between the large tiles (192x128, 256x128, 256x128c2).
BlockScaledGemmTile ChooseBlockScaledGemmTile(int64_t m, int64_t n, int64_t k,
                                              const GemmDevice& device, GemmScaling scaling,
                                              int promotion_blocks);

// The plan's choice (ChooseBlockScaledGemmTile) first, then, where that is a large tile, the
// other large tiles, then the cost model's next cheapest distinct tiles and splits, `count` in
// all at most: the candidates autotuning times, since
// which of them is fastest depends on the GPU's memory (bench/results/
// 2026-12-05-h100-session34.md: on an H100 other tiles ran 6-16% faster than the H200-fitted
// choice on 7 of 12 small-M shapes).
std::vector<BlockScaledGemmTile> RankBlockScaledGemmTiles(int64_t m, int64_t n, int64_t k,
                                                          const GemmDevice& device,
                                                          GemmScaling scaling, int promotion_blocks,
                                                          int count);

// Device memory a launch of `tile` on an M x N x K problem needs (0 without split-K). It must
// be zero-filled once when allocated; the kernel leaves it so after each launch.
size_t BlockScaledGemmWorkspaceBytes(const BlockScaledGemmTile& tile, int64_t m, int64_t n,
                                     int64_t k);

struct BlockScaledGemmParams {
  const void* lhs = nullptr;  // [M][K], rows lhs_row_bytes apart
  const void* rhs = nullptr;  // [N][K], rows rhs_row_bytes apart
  DType lhs_type = DType::kF8E4M3FN, rhs_type = DType::kF8E4M3FN;
  int64_t lhs_row_bytes = 0, rhs_row_bytes = 0;
  int64_t m = 0, n = 0, k = 0;
  // scale_a(m, kb) = lhs_scale[m * lhs_scale_row_stride + kb * lhs_scale_block_stride];
  // scale_b(nb, kb) = rhs_scale[nb * rhs_scale_row_stride + kb * rhs_scale_block_stride],
  // nb = n / 128 (kBlocks) or n (kColumnBlocks); kOuter reads kb = 0 only, and a row stride of
  // 0 is one tensor scale. Strides in elements.
  GemmScaling scaling = GemmScaling::kBlocks;
  const float* lhs_scale = nullptr;
  int64_t lhs_scale_row_stride = 0, lhs_scale_block_stride = 0;
  const float* rhs_scale = nullptr;
  int64_t rhs_scale_row_stride = 0, rhs_scale_block_stride = 0;
  int promotion_blocks = 1;  // kOuter: K-blocks of 128 the tensor core sums per promotion
  void* output = nullptr;    // [M][N], rows output_ld elements apart
  DType output_type = DType::kBF16;
  int64_t output_ld = 0;
  BlockScaledGemmTile tile;
  int sm_count = 0;  // CTAs of the persistent grid (at most one per unit of work)
  // A programmatic dependent launch: the grid may start while the kernel before it in the
  // stream still runs (its set-up overlaps that kernel's last CTAs; it waits for that kernel's
  // memory before touching any).
  bool dependent_launch = false;
  // Lets the next kernel, if launched as a dependent, start once every CTA has issued its last
  // operand copies, on the SMs this grid frees as it finishes.
  bool lets_next_grid_start_early = false;
  // BlockScaledGemmWorkspaceBytes(tile, m, n, k) bytes, zero-filled when allocated. Launches
  // sharing a workspace must not overlap (like cuBLASLt's).
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};

// Whether each stage's block scales arrive with its operand tiles (the copy engine brings A's
// and B 1x128's, a cp.async of the scale warp B 128x128's one), which takes M-major A scales (and
// N-major B 1x128 scales) with 16-byte aligned bases and rows; otherwise producer warps copy them
// (cp.async), from any layout. Null scale pointers count as aligned (a plan's layout-only
// answer).
bool BlockScaledGemmStagesScalesByCopyEngine(const BlockScaledGemmParams& params);

// Why these operands cannot run on the kernel ("" when they can): types, alignment, sizes.
std::string BlockScaledGemmRejection(const BlockScaledGemmParams& params);

// Encodes the two tensor maps (a host call, no device work) and enqueues the kernel.
Status LaunchBlockScaledGemm(const BlockScaledGemmParams& params, cudaStream_t stream,
                             const std::string& context);

}  // namespace fp8dot::cuda
