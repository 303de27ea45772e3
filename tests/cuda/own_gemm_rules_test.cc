// The own GEMM engine's host-side rules, which need no GPU and run wherever the CUDA backend is
// built (CI included): kAuto's choice of engine, the plan's tile choice, which tiles take which
// scales, and how a run's scales are staged. The kernels themselves are tested on the GPU
// (cuda_own_gemm_test.cc).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda/kernels/block_scaled_gemm.h"
#include "cuda/own_gemm.h"
#include "gtest/gtest.h"

namespace fp8dot {
namespace {

// The GPUs the rules were measured on, as their drivers describe them (CudaDeviceInfo): 132 SMs
// at a peak clock of 1980 MHz; DRAM at a peak of 4.8 TB/s (H200) or 3.35 TB/s (H100 SXM).
const cuda::GemmDevice kH200{132, cuda::DramBytesPerClock(4.8e12, 1980000)};
const cuda::GemmDevice kH100{132, cuda::DramBytesPerClock(3.35e12, 1980000)};

// The rule behind kAuto without a GPU (it needs only the shape and the SM count): the own kernel
// for B 128x128 at M <= 64 whatever the waves, at M <= 128 when the plan's units fit one wave of
// 132 SMs (the H200's count), from M = 4096 on (with N >= 2048 and K >= 512, as measured),
// nowhere in between; for B 1x128 where the plan takes 192x128 at M >= 2048 and K >= 2048; never
// for tensor or row scales.
TEST(OwnGemmRulesTest, TheAutoRuleFollowsTheMeasurements) {
  DotSpec spec;
  spec.lhs_scale.mode = ScaleMode::kBlock1x128;
  spec.rhs_scale.mode = ScaleMode::kBlock128x128;
  const auto own = [&](int64_t m, int64_t n, int64_t k) {
    CanonicalDot dot;
    dot.m = m, dot.n = n, dot.k = k;
    return cuda::OwnGemmIsFaster(spec, dot, kH200);
  };
  EXPECT_TRUE(own(64, 2112, 7168));
  EXPECT_TRUE(own(64, 32768, 512));   // two waves of 64x128 tiles: measured faster too
  EXPECT_TRUE(own(128, 4096, 7168));  // 128x64 tiles in 2 runs of K: 128 units
  EXPECT_TRUE(own(128, 2112, 7168));
  EXPECT_FALSE(own(128, 24576, 1536));  // 192 units of 128x128
  EXPECT_FALSE(own(128, 32768, 512));
  EXPECT_FALSE(own(129, 2112, 7168));
  EXPECT_FALSE(own(2048, 2048, 16384));
  EXPECT_TRUE(own(4096, 4096, 7168));
  EXPECT_TRUE(own(4096, 2112, 7168));
  EXPECT_TRUE(own(16384, 2048, 2048));
  EXPECT_TRUE(own(4096, 32768, 512));
  EXPECT_FALSE(own(8192, 8192, 256));   // K not measured
  EXPECT_FALSE(own(8192, 1024, 4096));  // N not measured
  // B 1x128 (the wgrad's): where the plan takes 192x128, at M >= 2048 and K >= 2048 (1.01-1.09x
  // cuBLASLt on 12 of the 13 training GEMMs); not on 256x128 (2048x2048x16384: 0.98-0.99x), nor
  // where nothing was measured.
  spec.rhs_scale.mode = ScaleMode::kBlock1x128;
  EXPECT_TRUE(own(16384, 4096, 8192));
  EXPECT_TRUE(own(4096, 16384, 8192));
  EXPECT_TRUE(own(6144, 2048, 16384));
  EXPECT_TRUE(own(16384, 2048, 2048));
  EXPECT_TRUE(own(8192, 16384, 4096));
  EXPECT_FALSE(own(2048, 2048, 16384));
  EXPECT_FALSE(own(64, 2112, 7168));
  EXPECT_FALSE(own(16384, 4096, 1024));
  spec.lhs_scale.mode = spec.rhs_scale.mode = ScaleMode::kTensor;  // left to autotuning
  EXPECT_FALSE(own(8192, 8192, 8192));
}

// With tensor or row scales promoted every block, large problems take 256x128 wherever it needs
// no more tensor time per wave than 192x128 (whose three warpgroups take turns at the tensor
// core), and 192x128 where 256-row tiles round M into a wasted wave; longer promotion intervals
// never take 256x128 (its two slices per warpgroup cannot hold them).
TEST(OwnGemmRulesTest, TensorScalesPromotedEveryBlockTakeTheTileWhoseWarpgroupsTakeTurns) {
  const auto tile = [&](int64_t m, int64_t n, int64_t k, cuda::GemmScaling scaling) {
    return cuda::ChooseBlockScaledGemmTile(m, n, k, kH200, scaling, 1).ToString();
  };
  constexpr cuda::GemmScaling kOuter = cuda::GemmScaling::kOuter;
  // Where N's 128-column tiles pair up and K >= 4096, two CTAs share A (256x128c2).
  EXPECT_EQ(tile(4096, 4096, 4096, kOuter), "256x128c2");   // 6 waves of 192 rows against 4
  EXPECT_EQ(tile(4096, 7168, 16384, kOuter), "256x128c2");  // 10 against 7
  EXPECT_EQ(tile(4096, 2112, 7168, kOuter), "192x128");     // 3 waves each, 256's last nearly empty
  EXPECT_EQ(tile(16384, 2048, 2048, kOuter), "256x128");    // short K: more epilogues
  EXPECT_EQ(tile(8192, 8192, 256, kOuter), "256x128");
  EXPECT_EQ(tile(2048, 5504, 16384, kOuter), "256x128");    // 43 tiles of N: one would idle
  EXPECT_EQ(tile(6144, 2048, 16384, kOuter), "256x128c2");  // training GEMMs: 3 waves against 4
  EXPECT_EQ(tile(4096, 4224, 4096, kOuter), "256x128");     // 33 tiles of N
  EXPECT_EQ(tile(4096, 4096, 3968, kOuter), "256x128");     // 31 K-blocks: not measured
  EXPECT_NE(cuda::ChooseBlockScaledGemmTile(8192, 8192, 8192, kH200, kOuter, 8).block_m, 256);
  // Block scales keep the tile alone (192x128 or 256x128).
  EXPECT_EQ(tile(8192, 8192, 8192, cuda::GemmScaling::kBlocks).find('c'), std::string::npos);
}

// 192x128's speed over 256x128's on one shape, both tiles forced on the H200.
struct MeasuredLargeTiles {
  int64_t m, n, k;
  double speed_192_over_256;
};

// The plan takes the faster of the two on each measured shape.
void ExpectTheFasterLargeTile(cuda::GemmScaling scaling,
                              const std::vector<MeasuredLargeTiles>& measured) {
  for (const MeasuredLargeTiles& shape : measured) {
    const std::string tile =
        cuda::ChooseBlockScaledGemmTile(shape.m, shape.n, shape.k, kH200, scaling, 1).ToString();
    EXPECT_EQ(tile.substr(0, 7), shape.speed_192_over_256 > 1 ? "192x128" : "256x128")
        << GemmScalingName(scaling) << " " << shape.m << "x" << shape.n << "x" << shape.k;
  }
}

// With tensor scales promoted every block, on the large GEMMs where the two differ most: each
// tile alone at the power limit (gpu_bench --sustain 2, H200, 2026-12-06,
// bench/results/2026-12-06-session44.md; each tile's speed against cuBLASLt's fast GEMM).
TEST(OwnGemmRulesTest, TensorScalesTakeTheLargeTileFasterAtThePowerLimit) {
  ExpectTheFasterLargeTile(cuda::GemmScaling::kOuter, {{16384, 16384, 16384, 0.941 / 0.976},
                                                       {8192, 8192, 28672, 0.965 / 0.994},
                                                       {8192, 28672, 8192, 0.946 / 0.972},
                                                       {28672, 8192, 8192, 0.943 / 0.971},
                                                       {8192, 8192, 8192, 0.946 / 0.968},
                                                       {8192, 16384, 4096, 0.949 / 0.982},
                                                       {16384, 4096, 8192, 0.960 / 0.983},
                                                       {4096, 2112, 7168, 0.883 / 0.775}});
}

// With tensor scales promoted every block, 256x128c2 over 256x128 at the power limit on the
// seven large GEMMs of the same runs (each tile's sustained speed against cuBLASLt's fast GEMM):
// faster on all seven, so the plan pairs the CTAs there.
TEST(OwnGemmRulesTest, TensorScalesShareAInPairsWhereMeasuredFaster) {
  struct Measured {
    int64_t m, n, k;
    double paired_over_alone;
  };
  const std::vector<Measured> measured = {
      {16384, 16384, 16384, 0.993 / 0.976}, {8192, 8192, 28672, 0.999 / 0.994},
      {8192, 28672, 8192, 0.981 / 0.972},   {28672, 8192, 8192, 0.979 / 0.971},
      {8192, 8192, 8192, 0.971 / 0.968},    {8192, 16384, 4096, 0.990 / 0.982},
      {16384, 4096, 8192, 0.985 / 0.983}};
  for (const Measured& shape : measured) {
    ASSERT_GT(shape.paired_over_alone, 1.0);
    EXPECT_EQ(cuda::ChooseBlockScaledGemmTile(shape.m, shape.n, shape.k, kH200,
                                              cuda::GemmScaling::kOuter, 1)
                  .ToString(),
              "256x128c2")
        << shape.m << "x" << shape.n << "x" << shape.k;
  }
}

// With A 1x128 x B 128x128 on an H100, the large tiles forced on the suite's large GEMMs
// (interleaved against cuBLASLt, 2026-12-07, bench/results/2026-12-07-session46.md): pairs of
// CTAs sharing A (256x128c2) 6-10% faster than 192x128 on the four of at least twice 8192^3's
// work, so the plan pairs them there on the H100 and not on the H200, where 192x128 was ahead
// on all (session 44); at 8192^3's work the wide-N GEMMs too (the medians of sessions 46-48 at
// 8192x16384x4096, of 47-48 at 4096x16384x8192; session 48's at 8192x4096x16384); on the
// others it keeps the H200's pick, within 3% of the faster or the faster itself.
TEST(OwnGemmRulesTest, BlockScalesShareAInPairsOnTheH100WhereMeasuredFaster) {
  struct Measured {
    int64_t m, n, k;
    double tile_192, tile_256c2;  // own / cuBLASLt
  };
  const std::vector<Measured> measured = {
      {16384, 16384, 16384, 0.922, 1.020}, {8192, 8192, 28672, 0.923, 1.011},
      {8192, 28672, 8192, 0.935, 1.021},   {28672, 8192, 8192, 0.955, 1.026},
      {8192, 8192, 8192, 1.044, 1.026},    {8192, 16384, 4096, 1.008, 1.045},
      {4096, 16384, 8192, 0.976, 1.023},   {16384, 4096, 8192, 1.090, 1.025},
      {8192, 4096, 16384, 1.048, 1.009},   {4096, 2112, 7168, 1.175, 0.857}};
  for (const Measured& shape : measured) {
    const std::string h100 = cuda::ChooseBlockScaledGemmTile(shape.m, shape.n, shape.k, kH100,
                                                             cuda::GemmScaling::kBlocks, 1)
                                 .ToString();
    const std::string h200 = cuda::ChooseBlockScaledGemmTile(shape.m, shape.n, shape.k, kH200,
                                                             cuda::GemmScaling::kBlocks, 1)
                                 .ToString();
    EXPECT_EQ(h200.find('c'), std::string::npos) << h200;
    const double picked = h100 == "256x128c2" ? shape.tile_256c2 : shape.tile_192;
    EXPECT_GE(picked, std::max(shape.tile_192, shape.tile_256c2) * 0.97)
        << shape.m << "x" << shape.n << "x" << shape.k << ": " << h100;
    if (shape.tile_256c2 > shape.tile_192 * 1.05) {
      EXPECT_EQ(h100, "256x128c2") << shape.m << "x" << shape.n << "x" << shape.k;
    }
    if (h100 != "256x128c2") {
      EXPECT_EQ(h100, h200) << shape.m << "x" << shape.n << "x" << shape.k;
    }
  }
}

// With A 1x128 x B 128x128, on each shape where the tiles were measured more than 1% apart: the
// training GEMMs and DeepGEMM's M = 4096 shapes (H200, 2026-12-04,
// bench/results/2026-12-04-h200-block-tile-choice.md).
TEST(OwnGemmRulesTest, BlockScalesTakeTheFasterLargeTile) {
  ExpectTheFasterLargeTile(
      cuda::GemmScaling::kBlocks,
      {{2048, 2048, 16384, 0.744}, {2048, 5504, 16384, 1.029},  {4096, 2112, 7168, 1.281},
       {4096, 4096, 7168, 0.964},  {4096, 7168, 2048, 0.981},   {4096, 16384, 8192, 1.032},
       {4096, 24576, 1536, 1.047}, {5504, 2048, 16384, 1.026},  {6144, 2048, 16384, 1.059},
       {8192, 4096, 16384, 1.026}, {8192, 8192, 8192, 1.086},   {8192, 16384, 4096, 1.077},
       {8192, 28672, 8192, 1.069}, {16384, 2048, 2048, 1.038},  {16384, 2048, 5504, 1.034},
       {16384, 2048, 6144, 1.035}, {16384, 4096, 8192, 1.081},  {16384, 5504, 2048, 1.043},
       {16384, 6144, 2048, 1.068}, {16384, 16384, 16384, 1.040}});
}

// With B 1x128, on each training wgrad (H200, 2026-12-05,
// bench/results/2026-12-05-h200-session28.md; each tile's time taken against cuBLASLt's in the
// same interleaved batches, so that clock drift between the two tiles' runs cancels).
TEST(OwnGemmRulesTest, ColumnScalesTakeTheFasterLargeTile) {
  ExpectTheFasterLargeTile(cuda::GemmScaling::kColumnBlocks, {{2048, 2048, 16384, 0.677},
                                                              {2048, 5504, 16384, 1.054},
                                                              {4096, 16384, 8192, 1.050},
                                                              {5504, 2048, 16384, 1.053},
                                                              {6144, 2048, 16384, 1.045},
                                                              {16384, 4096, 8192, 1.120}});
}

// Which way the kernel stages a stage's scales is a host decision on the layout and the scale
// pointers' alignment (no GPU needed): the copy engine for M-major lhs scales (and N-major rhs
// 1x128 ones) with 16-byte aligned bases and K-block strides, producer warps otherwise.
TEST(OwnGemmRulesTest, ScaleStagingFollowsTheLayoutAndTheAlignment) {
  const auto at = [](uintptr_t address) { return reinterpret_cast<const float*>(address); };
  cuda::BlockScaledGemmParams p;
  p.m = 256, p.n = 512, p.k = 1024;  // 8 K-blocks, 4 column blocks
  p.tile = {128, 128};
  p.scaling = cuda::GemmScaling::kBlocks;
  p.lhs_scale = at(4096), p.lhs_scale_row_stride = 1, p.lhs_scale_block_stride = 256;
  p.rhs_scale = at(8192), p.rhs_scale_row_stride = 8, p.rhs_scale_block_stride = 1;
  EXPECT_TRUE(cuda::BlockScaledGemmStagesScalesByCopyEngine(p));  // cuBLASLt's layouts
  p.rhs_scale_row_stride = 1, p.rhs_scale_block_stride = 4;
  EXPECT_TRUE(cuda::BlockScaledGemmStagesScalesByCopyEngine(p));  // any rhs 128x128 layout
  p.rhs_scale = at(8196);
  EXPECT_TRUE(cuda::BlockScaledGemmStagesScalesByCopyEngine(p));  // its one scale: a cp.async
  p.lhs_scale = nullptr, p.rhs_scale = nullptr;
  EXPECT_TRUE(cuda::BlockScaledGemmStagesScalesByCopyEngine(p));  // a plan's layout-only answer

  cuda::BlockScaledGemmParams q = p;
  q.lhs_scale = at(4100);  // not 16-byte aligned
  EXPECT_FALSE(cuda::BlockScaledGemmStagesScalesByCopyEngine(q));
  q = p;
  q.lhs_scale_row_stride = 8, q.lhs_scale_block_stride = 1;  // row-major [M][K/128]
  EXPECT_FALSE(cuda::BlockScaledGemmStagesScalesByCopyEngine(q));
  q = p;
  q.m = 258, q.lhs_scale_block_stride = 258;  // K-blocks 1032 bytes apart
  EXPECT_FALSE(cuda::BlockScaledGemmStagesScalesByCopyEngine(q));
  q.lhs_scale_block_stride = 260;  // padded to 16 bytes
  EXPECT_TRUE(cuda::BlockScaledGemmStagesScalesByCopyEngine(q));
  q = p;
  q.lhs_scale_block_stride = 200;  // K-blocks overlapping
  EXPECT_FALSE(cuda::BlockScaledGemmStagesScalesByCopyEngine(q));
  q = p;
  q.m = 1, q.lhs_scale_row_stride = 5, q.lhs_scale_block_stride = 4;  // one row: any row stride
  EXPECT_TRUE(cuda::BlockScaledGemmStagesScalesByCopyEngine(q));
  q.lhs_scale_block_stride = 1;  // its K-blocks 4 bytes apart: no copy-engine map
  EXPECT_FALSE(cuda::BlockScaledGemmStagesScalesByCopyEngine(q));
  q = p;
  q.k = 128, q.lhs_scale_block_stride = 3;  // one K-block: its stride is never used
  EXPECT_TRUE(cuda::BlockScaledGemmStagesScalesByCopyEngine(q));

  // rhs 1x128: its scales too, N-major ([K/128][N], their row-major layout).
  q = p;
  q.scaling = cuda::GemmScaling::kColumnBlocks;
  q.rhs_scale_row_stride = 1, q.rhs_scale_block_stride = 512;
  EXPECT_TRUE(cuda::BlockScaledGemmStagesScalesByCopyEngine(q));
  q.rhs_scale_row_stride = 8, q.rhs_scale_block_stride = 1;  // K-blocks contiguous
  EXPECT_FALSE(cuda::BlockScaledGemmStagesScalesByCopyEngine(q));
  q.n = 510, q.rhs_scale_row_stride = 1, q.rhs_scale_block_stride = 510;
  EXPECT_FALSE(cuda::BlockScaledGemmStagesScalesByCopyEngine(q));

  // Tensor or row scales apply to D: nothing is staged.
  q = p;
  q.scaling = cuda::GemmScaling::kOuter;
  EXPECT_FALSE(cuda::BlockScaledGemmStagesScalesByCopyEngine(q));
}

// Which 1x128 scales a plan reorders at every run (OwnGemmReordersScales): those the copy engine
// cannot stage, unless M <= 64, where the producer warps stage them as fast in a loop of calls.
TEST(OwnGemmRulesTest, PlansReorderUnstageableScalesAboveSixtyFourRows) {
  cuda::BlockScaledGemmParams p;  // a plan's layout-only shape: no pointers
  p.n = 4096, p.k = 7168;         // 56 K-blocks
  p.tile = {64, 128};
  p.scaling = cuda::GemmScaling::kBlocks;
  p.rhs_scale_row_stride = 56, p.rhs_scale_block_stride = 1;
  const auto reorders = [&](int64_t m, int64_t lhs_row_stride, int64_t lhs_block_stride) {
    cuda::BlockScaledGemmParams q = p;
    q.m = m, q.lhs_scale_row_stride = lhs_row_stride, q.lhs_scale_block_stride = lhs_block_stride;
    return cuda::OwnGemmReordersScales(q);
  };
  EXPECT_FALSE(reorders(64, 56, 1));  // row-major [M][K/128]: producer staging at M <= 64
  EXPECT_FALSE(reorders(1, 56, 1));
  EXPECT_TRUE(reorders(65, 56, 1));
  EXPECT_TRUE(reorders(128, 56, 1));
  EXPECT_TRUE(reorders(8192, 56, 1));
  EXPECT_FALSE(reorders(128, 1, 128));  // M-major: staged by the copy engine as it is
  EXPECT_FALSE(reorders(8192, 1, 8192));
  EXPECT_TRUE(reorders(130, 1, 130));  // M-major, K-blocks not 16-byte aligned

  cuda::BlockScaledGemmParams wgrad = p;  // rhs 1x128 with its K-blocks side by side
  wgrad.scaling = cuda::GemmScaling::kColumnBlocks;
  wgrad.m = 4096, wgrad.lhs_scale_row_stride = 1, wgrad.lhs_scale_block_stride = 4096;
  EXPECT_TRUE(cuda::OwnGemmReordersScales(wgrad));
  wgrad.rhs_scale_row_stride = 1, wgrad.rhs_scale_block_stride = 4096;  // N-major
  EXPECT_FALSE(cuda::OwnGemmReordersScales(wgrad));

  cuda::BlockScaledGemmParams outer = p;  // tensor or row scales apply to D: nothing to reorder
  outer.scaling = cuda::GemmScaling::kOuter;
  outer.m = 8192, outer.lhs_scale_row_stride = 1, outer.rhs_scale_row_stride = 1;
  EXPECT_FALSE(cuda::OwnGemmReordersScales(outer));
}

// Every tile of up to 128 columns takes block scales (B 1x128 on every one since 2026-12-04);
// tensor scales take every tile, and the 256-row tiles only with promotion every 128.
TEST(OwnGemmRulesTest, TilesTakeTheScalesTheyHaveRegistersFor) {
  using cuda::GemmScaling;
  const auto takes = [](int m, int n, GemmScaling scaling, int promotion_blocks = 1) {
    return cuda::BlockScaledGemmTileTakes({m, n, 1, 1}, scaling, promotion_blocks);
  };
  EXPECT_TRUE(takes(128, 128, GemmScaling::kColumnBlocks));
  EXPECT_TRUE(takes(64, 128, GemmScaling::kColumnBlocks));
  EXPECT_TRUE(takes(256, 64, GemmScaling::kColumnBlocks));
  EXPECT_TRUE(takes(192, 128, GemmScaling::kColumnBlocks));
  EXPECT_TRUE(takes(256, 128, GemmScaling::kColumnBlocks));
  EXPECT_FALSE(takes(128, 192, GemmScaling::kColumnBlocks));
  EXPECT_FALSE(takes(128, 192, GemmScaling::kBlocks));  // two B scales per K-block
  EXPECT_TRUE(takes(128, 192, GemmScaling::kOuter));
  EXPECT_TRUE(takes(256, 128, GemmScaling::kOuter));
  EXPECT_FALSE(takes(256, 128, GemmScaling::kOuter, 2));
  EXPECT_TRUE(takes(192, 128, GemmScaling::kOuter, 8));
}

// The tiles an autotuning race times: the plan's choice first, then distinct tiles the kernel
// takes for the scaling, `count` at most; they include the tile an H100 sweep found fastest
// where it differs from the plan's (bench/results/2026-12-05-h100-session34.md, call 4).
TEST(OwnGemmRulesTest, TheTilesARaceTimesStartWithThePlansAndHoldTheMeasuredBest) {
  using cuda::GemmScaling;
  constexpr int kCount = 4;  // as many as autotune.cc races
  const auto names = [&](int64_t m, int64_t n, int64_t k, GemmScaling scaling,
                         int promotion_blocks = 1, int count = 4) {
    std::vector<std::string> listed;
    for (const cuda::BlockScaledGemmTile& tile :
         cuda::RankBlockScaledGemmTiles(m, n, k, kH200, scaling, promotion_blocks, count)) {
      EXPECT_TRUE(cuda::BlockScaledGemmTileTakes(tile, scaling, promotion_blocks))
          << tile.ToString();
      EXPECT_EQ(cuda::EffectiveKSplits(tile, k), tile.k_splits) << tile.ToString();
      if (promotion_blocks > 1) {
        EXPECT_EQ(tile.k_splits, 1) << tile.ToString();
      }
      listed.push_back(tile.ToString());
    }
    return listed;
  };
  const auto holds = [](const std::vector<std::string>& listed, const std::string& tile) {
    return std::find(listed.begin(), listed.end(), tile) != listed.end();
  };
  struct Measured {
    int64_t m, n, k;
    GemmScaling scaling;
    const char* fastest;
  };
  const Measured measured[] = {
      {64, 4096, 7168, GemmScaling::kOuter, "64x32"},
      {128, 4096, 7168, GemmScaling::kOuter, "64x64"},
      {64, 24576, 1536, GemmScaling::kBlocks, "64x64"},
      {64, 4096, 7168, GemmScaling::kBlocks, "64x32"},
      {128, 24576, 1536, GemmScaling::kBlocks, "64x128"},
      {128, 7168, 16384, GemmScaling::kBlocks, "128x64"},
      {128, 4096, 7168, GemmScaling::kBlocks, "64x64"},
  };
  for (const Measured& shape : measured) {
    const std::vector<std::string> listed = names(shape.m, shape.n, shape.k, shape.scaling);
    ASSERT_EQ(listed.size(), static_cast<size_t>(kCount));
    EXPECT_EQ(listed.front(),
              cuda::ChooseBlockScaledGemmTile(shape.m, shape.n, shape.k, kH200, shape.scaling, 1)
                  .ToString());
    EXPECT_NE(listed.front(), shape.fastest) << "the plan already takes it";
    EXPECT_TRUE(holds(listed, shape.fastest)) << shape.m << "x" << shape.n << "x" << shape.k;
    for (size_t i = 0; i < listed.size(); ++i) {
      for (size_t j = 0; j < i; ++j) EXPECT_NE(listed[i], listed[j]);
    }
  }
  // Large problems: the plan's tile first, then the other large tiles (which is fastest differs
  // between GPUs), then the cost model's.
  EXPECT_EQ(names(8192, 8192, 8192, GemmScaling::kBlocks),
            (std::vector<std::string>{"192x128", "256x128", "256x128c2", "128x128"}));
  EXPECT_EQ(names(8192, 8192, 8192, GemmScaling::kOuter),
            (std::vector<std::string>{"256x128c2", "192x128", "256x128", "128x192"}));
  EXPECT_EQ(names(16384, 4096, 8192, GemmScaling::kColumnBlocks, 1, 3),
            (std::vector<std::string>{"192x128", "256x128", "256x128c2"}));
  // 43 tiles of N do not pair up: no cluster.
  EXPECT_EQ(names(2048, 5504, 16384, GemmScaling::kBlocks, 1, 3),
            (std::vector<std::string>{"192x128", "256x128", "128x128"}));
  for (const std::string& tile : names(8192, 8192, 8192, GemmScaling::kOuter, 8)) {
    EXPECT_EQ(tile.find('s'), std::string::npos) << tile;  // a longer interval never splits K
  }
  EXPECT_EQ(names(64, 4096, 7168, GemmScaling::kBlocks, 1, 1), std::vector<std::string>{"64x64s2"});
  EXPECT_TRUE(names(64, 4096, 7168, GemmScaling::kBlocks, 1, 0).empty());
  for (const std::string& tile : names(128, 4096, 7168, GemmScaling::kBlocks, 1, 64)) {
    EXPECT_EQ(tile.find("128x192"), std::string::npos);  // no tile B 128x128 scales cannot run
  }
}

// The main loop's schedule per tile and scaling (the kernel reads the same constexpr rule).
TEST(OwnGemmRulesTest, EachTileHasTheScheduleItsRegistersAllow) {
  using cuda::GemmScaling;
  using cuda::MathSchedule;
  constexpr GemmScaling kBlocks = GemmScaling::kBlocks, kColumns = GemmScaling::kColumnBlocks,
                        kOuter = GemmScaling::kOuter;
  static_assert(cuda::MathScheduleOf(64, 128, kBlocks) == MathSchedule::kTwoPartialSums);
  static_assert(cuda::MathScheduleOf(128, 128, kBlocks) == MathSchedule::kTwoPartialSums);
  static_assert(cuda::MathScheduleOf(128, 128, kOuter) == MathSchedule::kTwoPartialSums);
  static_assert(cuda::MathScheduleOf(64, 64, kColumns) == MathSchedule::kTwoPartialSums);
  static_assert(cuda::MathScheduleOf(128, 64, kColumns) == MathSchedule::kOnePartialSum);
  static_assert(cuda::MathScheduleOf(128, 128, kColumns) == MathSchedule::kOnePartialSum);
  static_assert(cuda::MathScheduleOf(192, 128, kBlocks) == MathSchedule::kOnePartialSum);
  static_assert(cuda::MathScheduleOf(192, 128, kOuter) == MathSchedule::kTakingTurns);
  static_assert(cuda::MathScheduleOf(128, 192, kOuter) == MathSchedule::kTakingTurns);
  static_assert(cuda::MathScheduleOf(256, 128, kOuter) == MathSchedule::kOnePartialSum);
  static_assert(cuda::MathScheduleOf(256, 64, kColumns) == MathSchedule::kOnePartialSum);
  EXPECT_NE(std::string(cuda::MathScheduleDescription(MathSchedule::kTakingTurns)).find("in turn"),
            std::string::npos);
}

// The own GEMM is a programmatic dependent launch unless SMs are kept for other streams, and lets
// the next kernel start early only at M <= 128, where that measured faster.
TEST(OwnGemmRulesTest, PlansLaunchAsDependentsAndSmallOnesLetTheNextStartEarly) {
  CanonicalDot dot;
  dot.n = 4096, dot.k = 7168;
  CudaDotOptions options;
  EXPECT_TRUE(cuda::OwnGemmLaunchesAsDependent(options));
  for (const int64_t m : {1, 64, 128}) {
    dot.m = m;
    EXPECT_TRUE(cuda::OwnGemmLetsNextGridStartEarly(dot, options)) << m;
  }
  for (const int64_t m : {129, 4096, 16384}) {
    dot.m = m;
    EXPECT_FALSE(cuda::OwnGemmLetsNextGridStartEarly(dot, options)) << m;
  }
  dot.m = 64;
  options.sm_count_target = 100;
  EXPECT_FALSE(cuda::OwnGemmLaunchesAsDependent(options));
  EXPECT_FALSE(cuda::OwnGemmLetsNextGridStartEarly(dot, options));
}

// The tile choice weighs the GPU's DRAM: on an H100, where reading the operands once bounds a
// small-M GEMM, the plan takes the tiles a sweep measured fastest there rather than those that
// read fewer bytes per SM (bench/results/2026-12-06-h100-session41.md: the old picks 7-14%
// slower); with the H200's DRAM and with none known, every pick stays what it was, since the
// H200's sweeps fitted the model without a DRAM term. Large problems are never DRAM-bound.
TEST(OwnGemmRulesTest, TheTileChoiceWeighsTheGpusDram) {
  using cuda::GemmScaling;
  const cuda::GemmDevice unknown_dram{132, 0};
  const auto tile = [](const cuda::GemmDevice& device, int64_t m, int64_t n, int64_t k,
                       GemmScaling scaling) {
    return cuda::ChooseBlockScaledGemmTile(m, n, k, device, scaling, 1).ToString();
  };
  struct Shape {
    int64_t m, n, k;
  };
  const Shape shapes[] = {
      // DeepGEMM's 18 shapes, the suite's other 9, then the training GEMMs
      // (bench/training_shapes.txt).
      {64, 2112, 7168},      {64, 24576, 1536},   {64, 32768, 512},    {64, 7168, 16384},
      {64, 4096, 7168},      {64, 7168, 2048},    {128, 2112, 7168},   {128, 24576, 1536},
      {128, 32768, 512},     {128, 7168, 16384},  {128, 4096, 7168},   {128, 7168, 2048},
      {4096, 2112, 7168},    {4096, 24576, 1536}, {4096, 32768, 512},  {4096, 7168, 16384},
      {4096, 4096, 7168},    {4096, 7168, 2048},  {4096, 4096, 4096},  {8192, 8192, 8192},
      {16384, 16384, 16384}, {8192, 28672, 8192}, {8192, 8192, 28672}, {28672, 8192, 8192},
      {1000, 1000, 1000},    {8192, 8192, 256},   {8192, 16384, 4096}, {8192, 4096, 16384},
      {16384, 4096, 8192},   {4096, 16384, 8192}, {16384, 6144, 2048}, {16384, 2048, 6144},
      {6144, 2048, 16384},   {16384, 2048, 2048}, {2048, 2048, 16384}, {16384, 5504, 2048},
      {16384, 2048, 5504},   {5504, 2048, 16384}, {2048, 5504, 16384}};
  for (const GemmScaling scaling :
       {GemmScaling::kBlocks, GemmScaling::kColumnBlocks, GemmScaling::kOuter}) {
    for (const Shape& s : shapes) {
      EXPECT_EQ(tile(kH200, s.m, s.n, s.k, scaling), tile(unknown_dram, s.m, s.n, s.k, scaling))
          << GemmScalingName(scaling) << " " << s.m << "x" << s.n << "x" << s.k;
      // (The H100 pairs block scales on the largest GEMMs: BlockScalesShareAInPairs... above.)
      const double work = static_cast<double>(s.m) * s.n * s.k;
      const bool paired_on_h100 =
          scaling == GemmScaling::kBlocks && (work >= 0x1p40 || (work >= 0x1p39 && s.n >= 2 * s.m));
      if (s.m >= 1000 && !paired_on_h100) {
        EXPECT_EQ(tile(kH100, s.m, s.n, s.k, scaling), tile(kH200, s.m, s.n, s.k, scaling))
            << GemmScalingName(scaling) << " " << s.m << "x" << s.n << "x" << s.k;
      }
    }
  }
  // The H200's picks as fitted, where the H100's differ.
  EXPECT_EQ(tile(kH200, 64, 4096, 7168, GemmScaling::kBlocks), "64x64s2");
  EXPECT_EQ(tile(kH200, 128, 4096, 7168, GemmScaling::kOuter), "128x64s2");
  // On the H100: the fastest tile measured (64x7168x16384: 64x64, 1.5% behind 64x128 and 5%
  // ahead of the old 64x128s2).
  EXPECT_EQ(tile(kH100, 64, 4096, 7168, GemmScaling::kBlocks), "64x32");
  EXPECT_EQ(tile(kH100, 128, 4096, 7168, GemmScaling::kBlocks), "64x64");
  EXPECT_EQ(tile(kH100, 64, 7168, 16384, GemmScaling::kBlocks), "64x64");
  EXPECT_EQ(tile(kH100, 64, 4096, 7168, GemmScaling::kOuter), "64x32");
  EXPECT_EQ(tile(kH100, 128, 4096, 7168, GemmScaling::kOuter), "64x64");
  // And where the H100 measured the old pick fastest, it stays.
  EXPECT_EQ(tile(kH100, 128, 2112, 7168, GemmScaling::kBlocks), "64x64s2");
  EXPECT_EQ(tile(kH100, 128, 7168, 2048, GemmScaling::kOuter), "128x64");
  EXPECT_EQ(tile(kH100, 64, 32768, 512, GemmScaling::kBlocks), "64x128");
  EXPECT_DOUBLE_EQ(cuda::DramBytesPerClock(3.35e12, 1980000), 3.35e12 / 1.98e9);
  EXPECT_EQ(cuda::DramBytesPerClock(0, 1980000), 0);
  EXPECT_EQ(cuda::DramBytesPerClock(3.35e12, 0), 0);
}

}  // namespace
}  // namespace fp8dot
