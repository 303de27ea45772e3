// The own GEMM's host-side rules (block_scaled_gemm.h): its tiles, how a problem is cut into
// units of work for one, which tile a problem gets, and which problems the kernel refuses. The
// kernel and its launch are in block_scaled_gemm.cu; nothing here needs a CUDA compiler.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cuda/kernels/block_scaled_gemm.h"

namespace fp8dot::cuda {
namespace {

constexpr int kBlockK = kBlockScaledGemmBlockK;
constexpr int kMaxSplitKBlockM = kBlockScaledGemmMaxSplitKRows;

}  // namespace

BlockScaledGemmWorkLayout BlockScaledGemmLayoutOf(const BlockScaledGemmTile& tile, int64_t m,
                                                  int64_t n, int64_t k) {
  BlockScaledGemmWorkLayout layout{};
  layout.k_blocks = static_cast<int>(std::max<int64_t>(1, (k + kBlockK - 1) / kBlockK));
  const int splits = std::clamp(tile.k_splits, 1, layout.k_blocks);
  layout.blocks_per_split = (layout.k_blocks + splits - 1) / splits;
  layout.k_splits = (layout.k_blocks + layout.blocks_per_split - 1) / layout.blocks_per_split;
  const int tile_cols = static_cast<int>((n + tile.block_n - 1) / tile.block_n);
  layout.unit_rows = static_cast<int>((m + tile.block_m - 1) / tile.block_m);
  layout.unit_cols = (tile_cols + tile.cluster - 1) / tile.cluster;
  layout.block_m = tile.block_m;
  layout.block_n = tile.block_n;
  layout.cluster = tile.cluster;
  return layout;
}

const char* MathScheduleDescription(MathSchedule schedule) {
  switch (schedule) {
    case MathSchedule::kTwoPartialSums:
      return "each math warpgroup keeps two partial sums in turn (block k + 1 on the tensor "
             "core while block k is promoted)";
    case MathSchedule::kOnePartialSum:
      return "one partial sum per math warpgroup: it waits for each block's wgmma and promotes "
             "while the other warpgroups' wgmma run";
    case MathSchedule::kTakingTurns:
      return "one partial sum per math warpgroup, the warpgroups issuing their wgmma in turn: "
             "each promotes while the others' wgmma run";
  }
  return "?";
}

const char* GemmScalingName(GemmScaling scaling) {
  switch (scaling) {
    case GemmScaling::kColumnBlocks:
      return "1x128 x 1x128";
    case GemmScaling::kOuter:
      return "row or tensor";
    default:
      return "1x128 x 128x128";
  }
}

std::string BlockScaledGemmTile::ToString() const {
  // Appended piece by piece: one expression of temporaries trips GCC 12's -Wrestrict at -O3.
  std::string text = std::to_string(block_m);
  text += 'x';
  text += std::to_string(block_n);
  if (cluster > 1) text += 'c', text += std::to_string(cluster);
  if (k_splits > 1) text += 's', text += std::to_string(k_splits);
  return text;
}

StatusOr<BlockScaledGemmTile> ParseBlockScaledGemmTile(const std::string& text) {
  constexpr int kMaxSplits = 64;
  const size_t suffix = text.find('s');
  const std::string base = text.substr(0, suffix);
  std::string known;
  std::optional<BlockScaledGemmTile> found;
  for (const BlockScaledGemmTile& tile : BlockScaledGemmTiles()) {
    if (tile.ToString() == base) found = tile;
    known += (known.empty() ? "" : ", ") + tile.ToString();
  }
  if (!found) {
    return InvalidArgument(
        "the own kernel has no tile '%s' (it has %s, each with an optional split-K suffix "
        "s2..s%d)",
        text.c_str(), known.c_str(), kMaxSplits);
  }
  if (suffix == std::string::npos) return *found;
  const std::string digits = text.substr(suffix + 1);
  const bool numeric = !digits.empty() && digits.size() <= 2 &&
                       digits.find_first_not_of("0123456789") == std::string::npos;
  found->k_splits = numeric ? std::stoi(digits) : 0;
  if (found->k_splits < 2 || found->k_splits > kMaxSplits) {
    return InvalidArgument("own GEMM tile '%s': the split after 's' must be 2 to %d", text.c_str(),
                           kMaxSplits);
  }
  if (found->block_m > kMaxSplitKBlockM) {
    return InvalidArgument("own GEMM tile '%s': split-K runs on tiles of up to %d rows",
                           text.c_str(), kMaxSplitKBlockM);
  }
  return *found;
}

int EffectiveKSplits(const BlockScaledGemmTile& tile, int64_t k) {
  return BlockScaledGemmLayoutOf(tile, 1, 1, k).k_splits;
}

int64_t BlockScaledGemmWorkUnits(const BlockScaledGemmTile& tile, int64_t m, int64_t n, int64_t k) {
  const BlockScaledGemmWorkLayout layout = BlockScaledGemmLayoutOf(tile, m, n, k);
  return layout.Tiles() * layout.k_splits;
}

size_t BlockScaledGemmWorkspaceBytes(const BlockScaledGemmTile& tile, int64_t m, int64_t n,
                                     int64_t k) {
  return BlockScaledGemmLayoutOf(tile, m, n, k).WorkspaceBytes();
}

std::vector<BlockScaledGemmTile> BlockScaledGemmTiles() {
  std::vector<BlockScaledGemmTile> tiles;
#define FP8DOT_LIST_TILE(M, N, C) tiles.push_back({M, N, C});
  FP8DOT_OWN_GEMM_TILES(FP8DOT_LIST_TILE)
#undef FP8DOT_LIST_TILE
  return tiles;
}

bool BlockScaledGemmTileTakes(const BlockScaledGemmTile& tile, GemmScaling scaling,
                              int promotion_blocks) {
  if (scaling == GemmScaling::kOuter && promotion_blocks > 1 &&
      SlicesPerWarpgroup(tile.block_m) == 2) {
    return false;
  }
  return BlockScaledGemmBuildsTile(scaling, tile.block_n);
}

namespace {

// The cost model's constants, in SM clocks (CostedTiles' comment says what each is and where
// it was fitted).
constexpr double kFlopsPerClock = 8192, kSmBytesPerClock = 24, kL2BytesPerClock = 3000;
constexpr double kHandshakeClocks = 50, kClocksPerRun = 4000;
constexpr double kDramEfficiency = 0.81, kUnhiddenShareWhenDramBound = 0.3;

// Tensor-core clocks of one K-block of `tile`.
double MmaClocks(const BlockScaledGemmTile& tile) {
  return 2.0 * kBlockK * tile.block_m * tile.block_n / kFlopsPerClock;
}

int64_t Waves(int64_t units, int sm_count) { return (units + sm_count - 1) / sm_count; }

// The large tiles, between which the plan and autotuning decide by measured rules (the cost
// model's byte terms do not tell them apart): three math warpgroups of one slice, two of two
// slices, and the latter in pairs of CTAs sharing A.
constexpr BlockScaledGemmTile kThreeWarpgroupTile{192, 128, 1, 1};
constexpr BlockScaledGemmTile kTwoSliceTile{256, 128, 1, 1};
constexpr BlockScaledGemmTile kPairedTile{256, 128, 2, 1};
constexpr BlockScaledGemmTile kLargeTiles[] = {kThreeWarpgroupTile, kTwoSliceTile, kPairedTile};

bool SameTile(const BlockScaledGemmTile& a, const BlockScaledGemmTile& b) {
  return a.block_m == b.block_m && a.block_n == b.block_n && a.cluster == b.cluster;
}

// Whether N's tiles fill every CTA of `tile`'s clusters (no cluster with an idle CTA).
bool ClustersFillN(const BlockScaledGemmTile& tile, int64_t n) {
  return (n + tile.block_n - 1) / tile.block_n % tile.cluster == 0;
}

struct CostedTile {
  double cost;
  BlockScaledGemmTile tile;
};

// Every tile and split the kernel has for `scaling` and `promotion_blocks`, with the cost model's
// estimate, cheapest first (ties in the tiles' listed order).
std::vector<CostedTile> CostedTiles(int64_t m, int64_t n, int64_t k, const GemmDevice& device,
                                    GemmScaling scaling, int promotion_blocks) {
  // A rough model in SM clocks, its constants fitted to tile sweeps on the H200 (DeepGEMM's
  // shapes; bench/results/2026-12-01-h200-own-gemm-splitk/fit_heuristic.py):
  //   - per K-block, a CTA needs the tensor-core time of its tile (~8192 FP8 flops per clock)
  //     or the time to pull its operands at ~24 bytes per clock, whichever is longer, plus
  //     ~50 clocks of handshakes;
  //   - all CTAs together pull operands from L2 at ~3000 bytes per clock;
  //   - split-K adds a reduction: the runs' FP32 sums written and read once more, and ~4000
  //     clocks per run (the last run's fence, arrival count and one L2 round trip per run);
  //   - where the GPU's DRAM is known, reading each operand byte once from it at 81% of its
  //     peak; a tile bound by that pays another 30% of its SM or L2 time, which does not
  //     overlap the reads (pipeline fill, epilogue). Fitted to the small-M sweeps of an H100
  //     (2026-12-06, bench/results/2026-12-06-h100-session41.md: there the tiles that read
  //     fewer bytes per SM, often split, are no faster, DRAM being the bound) with every pick
  //     on the H200's sweep of 2026-12-03 kept, where more DRAM bandwidth leaves the SMs' bytes
  //     the bound. Large problems are never DRAM-bound here.
  const double dram_bytes_per_clock = kDramEfficiency * device.dram_bytes_per_clock;
  const double dram_time =
      dram_bytes_per_clock > 0 ? static_cast<double>(m + n) * k / dram_bytes_per_clock : 0.0;
  std::vector<CostedTile> costed;
  for (BlockScaledGemmTile tile : BlockScaledGemmTiles()) {
    // Clusters sharing A measure level with the same tile alone on the H200 (no faster): only
    // taken when asked for.
    if (tile.cluster > 1) continue;
    if (!BlockScaledGemmTileTakes(tile, scaling, promotion_blocks)) continue;
    for (const int splits : {1, 2, 3, 4, 6, 8}) {
      // Split-K runs end on 128-K blocks, which may be inside a longer promotion interval.
      if (splits > 1 && (tile.block_m > kMaxSplitKBlockM || promotion_blocks > 1)) break;
      tile.k_splits = splits;
      const BlockScaledGemmWorkLayout layout = BlockScaledGemmLayoutOf(tile, m, n, k);
      if (layout.k_splits != splits) continue;  // K too short: the same as fewer splits
      const int64_t tiles = layout.Tiles();
      // Split only to fill the SMs.
      if (splits > 1 && tiles * (splits - 1) >= device.sm_count) continue;
      const int64_t units = tiles * splits;
      const double block_bytes = (tile.block_m + tile.block_n) * kBlockK;
      const double per_block =
          std::max(MmaClocks(tile), block_bytes / kSmBytesPerClock) + kHandshakeClocks;
      const double sm_time =
          static_cast<double>(Waves(units, device.sm_count)) * layout.blocks_per_split * per_block;
      const double l2_time =
          static_cast<double>(units) * layout.blocks_per_split * block_bytes / kL2BytesPerClock;
      const double reduction =
          splits == 1 ? 0.0
                      : kClocksPerRun * splits + 2.0 * static_cast<double>(units) * tile.block_m *
                                                     tile.block_n * 4 / kL2BytesPerClock;
      const double on_chip_time = std::max(sm_time, l2_time);
      const double time =
          std::max(on_chip_time, dram_time + kUnhiddenShareWhenDramBound * on_chip_time);
      costed.push_back({time + reduction, tile});
    }
  }
  std::stable_sort(costed.begin(), costed.end(),
                   [](const CostedTile& a, const CostedTile& b) { return a.cost < b.cost; });
  return costed;
}

}  // namespace

double DramBytesPerClock(double memory_bytes_per_second, int sm_clock_khz) {
  if (memory_bytes_per_second <= 0 || sm_clock_khz <= 0) return 0;
  return memory_bytes_per_second / (sm_clock_khz * 1e3);
}

BlockScaledGemmTile ChooseBlockScaledGemmTile(int64_t m, int64_t n, int64_t k,
                                              const GemmDevice& device, GemmScaling scaling,
                                              int promotion_blocks) {
  const std::vector<CostedTile> costed = CostedTiles(m, n, k, device, scaling, promotion_blocks);
  BlockScaledGemmTile best = costed.empty() ? BlockScaledGemmTile{} : costed.front().tile;
  // Where 256x128 wins, the problem keeps the tensor cores busy, and the byte terms above (fitted
  // on small tiles) no longer tell the large tiles apart. The 192x128 tile keeps the tensor core
  // busier than 256x128's two-slice warpgroups but has more tiles, and rounds M into more waves
  // (4096 rows: 256x128 stays); the two are compared by tensor time per wave, with 256x128 at
  // `efficiency` of 192x128's rate and `clocks_per_tile` for each tile's epilogue and pipeline
  // fill, fitted per scaling to tile sweeps on the H200 (both tiles forced):
  //   - tensor or row scales promoted every block (192x128's warpgroups take turns): 256x128 at
  //     192x128's rate and 5000 clocks, so that it is taken wherever it needs no more tensor
  //     time per wave. Sustained at the power limit (gpu_bench --sustain, H200, 2026-12-06,
  //     bench/results/2026-12-06-session44.md) 256x128 ran 2.3-3.7% faster than 192x128 on all
  //     seven large GEMMs measured (level in interleaved batches and per clock: the difference
  //     is the clock each holds under the power limit), as on an H100 (session 42); 192x128
  //     stays where 256-row tiles waste a wave (4096x2112x7168: 1.14x as fast). Fitted on
  //     2026-12-04's interleaved sweeps it was 0.93.
  //   - A 1x128 x B 128x128 (2026-12-04, bench/results/2026-12-04-h200-block-tile-choice.md: the
  //     training GEMMs and DeepGEMM's M = 4096 shapes, 192x128 0.74-1.28x as fast): 0.92 and
  //     none measurable; the rule picks the faster tile on all 22;
  //   - A 1x128 x B 1x128 (2026-12-05, bench/results/2026-12-05-h200-session28.md: the six
  //     training wgrads, 192x128 0.68-1.12x as fast, its promotion's per-column scale products
  //     overlapping two other warpgroups' wgmma rather than one): the same constants pick the
  //     faster tile on all six.
  double efficiency = 0, clocks_per_tile = 0;
  if (scaling == GemmScaling::kOuter && promotion_blocks == 1) {
    efficiency = 1.0, clocks_per_tile = 5000;
  } else if (scaling == GemmScaling::kBlocks || scaling == GemmScaling::kColumnBlocks) {
    efficiency = 0.92, clocks_per_tile = 0;
  }
  if (SameTile(best, kTwoSliceTile) && efficiency > 0) {
    const auto tensor_time = [&](const BlockScaledGemmTile& tile, double tile_efficiency) {
      const BlockScaledGemmWorkLayout layout = BlockScaledGemmLayoutOf(tile, m, n, k);
      return static_cast<double>(Waves(layout.Tiles(), device.sm_count)) *
             (layout.blocks_per_split * (MmaClocks(tile) / tile_efficiency + kHandshakeClocks) +
              clocks_per_tile);
    };
    if (tensor_time(kThreeWarpgroupTile, 1.0) < tensor_time(best, efficiency)) {
      best = kThreeWarpgroupTile;
    }
  }
  // Tensor or row scales promoted every block on 256x128 with K >= 4096 (the range measured):
  // pairs of CTAs sharing A (256x128c2), where N's tiles pair up without an idle CTA. At the
  // power limit it ran 0.2-1.7% faster than 256x128 on all seven large GEMMs measured, at an SM
  // clock up to 21 MHz higher (H200, 2026-12-06, bench/results/2026-12-06-session44.md), level in
  // interleaved batches; on an H100 (session 42) 9-16% faster at K >= 16384. With it the plan
  // was at or above cuBLASLt's fast GEMM on 7 of the suite's 13 shapes (interleaved, an H100,
  // 2026-12-07, bench/results/2026-12-07-session45.md; 5 of 13 before).
  if (scaling == GemmScaling::kOuter && promotion_blocks == 1 && SameTile(best, kTwoSliceTile) &&
      BlockScaledGemmLayoutOf(best, m, n, k).k_blocks >= 32 && ClustersFillN(kPairedTile, n)) {
    best = kPairedTile;
  }
  // A 1x128 x B 128x128 on a GPU with less DRAM bandwidth per SM clock than the H200 (the H100:
  // 1692 bytes against 2429): 256x128c2 on the GEMMs of at least twice 8192^3's work, and on
  // those of 8192^3's work whose N is at least twice M. On an H100 (2026-12-07,
  // bench/results/2026-12-07-session46.md) it ran 6-10% faster than 192x128 on the four
  // largest GEMMs of the suite (1.011-1.026x cuBLASLt against 0.922-0.955x interleaved; at the
  // power limit 1.007 against 0.909 at 16384^3, 1.012 against 0.943 at 8192x28672x8192); at
  // 2^39 it was ahead on 4096x16384x8192 and 8192x16384x4096 by 4-5% on two cards (sessions
  // 47 and 48, 2.6% on a third in session 46), and behind by 4-8% on the same shapes
  // transposed (16384x4096x8192, 8192x4096x16384) and by 2% on 8192^3; at 4096x2112x7168
  // 192x128 is 1.37x as fast. On the H200 192x128 was ahead on all of them (session 44). Which
  // property of the H100 makes pairs sharing A pay is not isolated; DRAM per clock is what
  // tells the two GPUs apart, and wide N (more B columns per wave of tiles) what tells the
  // shapes of 2^39 apart.
  constexpr double kPairedBlockScalesBelowDramBytesPerClock = 2000;
  constexpr double kPairedBlockScalesMinWork = 0x1p40;      // M * N * K
  constexpr double kPairedWideBlockScalesMinWork = 0x1p39;  // with N >= 2M
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  if (scaling == GemmScaling::kBlocks && best.block_m >= kThreeWarpgroupTile.block_m &&
      device.dram_bytes_per_clock > 0 &&
      device.dram_bytes_per_clock < kPairedBlockScalesBelowDramBytesPerClock &&
      (work >= kPairedBlockScalesMinWork ||
       (work >= kPairedWideBlockScalesMinWork && n >= 2 * m)) &&
      ClustersFillN(kPairedTile, n)) {
    best = kPairedTile;
  }
  return best;
}

std::vector<BlockScaledGemmTile> RankBlockScaledGemmTiles(int64_t m, int64_t n, int64_t k,
                                                          const GemmDevice& device,
                                                          GemmScaling scaling, int promotion_blocks,
                                                          int count) {
  std::vector<BlockScaledGemmTile> ranked;
  if (count < 1) return ranked;
  const auto add = [&](const BlockScaledGemmTile& tile) {
    if (static_cast<int>(ranked.size()) == count) return;
    const std::string name = tile.ToString();
    const bool listed = std::any_of(ranked.begin(), ranked.end(),
                                    [&](const auto& other) { return other.ToString() == name; });
    if (!listed) ranked.push_back(tile);
  };
  const BlockScaledGemmTile plan =
      ChooseBlockScaledGemmTile(m, n, k, device, scaling, promotion_blocks);
  add(plan);
  // Where the plan takes a large tile, the other large tiles come next: which of them is fastest
  // differs between GPUs and between cards at the power limit (on an H100 256x128c2 ran 9-16%
  // faster than 192x128 at K >= 16384 with both scalings, bench/results/2026-12-06-session42.md;
  // on an H200 192x128 stays ahead with block scales, session 44).
  if (plan.block_m >= kThreeWarpgroupTile.block_m) {
    for (const BlockScaledGemmTile& tile : kLargeTiles) {
      if (ClustersFillN(tile, n) && BlockScaledGemmTileTakes(tile, scaling, promotion_blocks)) {
        add(tile);
      }
    }
  }
  for (const CostedTile& costed : CostedTiles(m, n, k, device, scaling, promotion_blocks)) {
    add(costed.tile);
  }
  return ranked;
}

std::string BlockScaledGemmRejection(const BlockScaledGemmParams& p) {
  if (p.rhs_type != DType::kF8E4M3FN) return "the own GEMM needs an e4m3 rhs";
  if (p.lhs_type != DType::kF8E4M3FN && p.lhs_type != DType::kF8E5M2) {
    return "the own GEMM needs an FP8 lhs";
  }
  if (p.output_type != DType::kBF16 && p.output_type != DType::kF32) {
    return "the own GEMM writes bf16 or f32 only";
  }
  if (p.m < 1 || p.n < 1 || p.k < 1 || p.m > INT32_MAX || p.n > INT32_MAX) {
    return "the own GEMM needs 1 <= M, N < 2^31";
  }
  const auto aligned = [](const void* pointer) {
    return reinterpret_cast<uintptr_t>(pointer) % 16 == 0;
  };
  if (p.lhs_row_bytes % 16 != 0 || p.rhs_row_bytes % 16 != 0 || !aligned(p.lhs) ||
      !aligned(p.rhs)) {
    return "the own GEMM needs 16-byte aligned operand rows";
  }
  if (!BlockScaledGemmTileTakes(p.tile, p.scaling, p.promotion_blocks)) {
    return "the own GEMM has no tile " + p.tile.ToString() + " for " + GemmScalingName(p.scaling) +
           " scales promoted every " + std::to_string(p.promotion_blocks * kBlockK) + " K";
  }
  if (p.promotion_blocks < 1 || (p.scaling != GemmScaling::kOuter && p.promotion_blocks != 1)) {
    return "the own GEMM promotes every K-block of 128 with block scales, and every 1 or more "
           "blocks with outer scales (asked: " +
           std::to_string(p.promotion_blocks) + ")";
  }
  return "";
}

}  // namespace fp8dot::cuda
