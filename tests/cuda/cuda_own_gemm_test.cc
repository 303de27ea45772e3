// fp8dot's own block-scaled GEMM kernel (GemmEngine::kOwn) on the GPU: bit-identical to the CPU
// emulation of promoted, block-scaled accumulation (with fused promotions) on fresh random data,
// for every tile, both lhs types, both output types, ragged M, and scales in either layout; the
// engine is named in the plan; dots it cannot run are refused with the reason.
#include <optional>
#include <utility>
#include <vector>

#include "cuda/cuda_test_util.h"
#include "status_matchers.h"

namespace fp8dot {
namespace {

constexpr DType kE4M3 = DType::kF8E4M3FN;
constexpr DType kE5M2 = DType::kF8E5M2;

struct OwnCase {
  int64_t m, n, k;
  DType lhs_type = kE4M3;
  DType output_type = DType::kF32;
  bool column_major_scales = false;  // lhs scale M-major, rhs scale K-block-minor
  bool row_major_rhs_scale = false;  // with column_major_scales: only the lhs scale M-major
  Distribution distribution = Distribution::kSymmetric;
  // lhs 1x128 with rhs 128x128 (the forward recipe) or 1x128 (the wgrad GEMM's), or tensor or
  // row/column scales on both.
  ScaleMode lhs_scale_mode = ScaleMode::kBlock1x128;
  ScaleMode rhs_scale_mode = ScaleMode::kBlock128x128;
};

constexpr ScaleMode kColumnBlocks = ScaleMode::kBlock1x128;

StatusOr<DotProblem> BlockScaledProblem(const OwnCase& c, uint64_t seed) {
  DotProblemOptions o;
  o.m = c.m;
  o.n = c.n;
  o.k = c.k;
  o.lhs_type = c.lhs_type;
  o.rhs_type = kE4M3;
  o.output_type = c.output_type;
  o.lhs_scale_mode = c.lhs_scale_mode;
  o.rhs_scale_mode = c.rhs_scale_mode;
  o.precision_config.operand_precision = {Precision::kHighest, Precision::kHighest};
  o.distribution = c.distribution;
  o.seed = seed;
  FP8_ASSIGN_OR_RETURN(DotProblem p, MakeDotProblem(o));
  if (c.column_major_scales && IsBlockScale(c.lhs_scale_mode)) {
    FP8_ASSIGN_OR_RETURN(*p.lhs_scale, testing::WithLayout(*p.lhs_scale, {0, 1}));
    p.spec.lhs_scale.minor_to_major = {0, 1};
    if (!c.row_major_rhs_scale) {
      FP8_ASSIGN_OR_RETURN(*p.rhs_scale, testing::WithLayout(*p.rhs_scale, {0, 1}));
      p.spec.rhs_scale.minor_to_major = {0, 1};
    }
  }
  return p;
}

std::string Label(const OwnCase& c, const std::string& tile) {
  return StrFormat(
      "M=%lld N=%lld K=%lld %s x e4m3 -> %s, scales %s, tile %s%s", static_cast<long long>(c.m),
      static_cast<long long>(c.n), static_cast<long long>(c.k), DTypeName(c.lhs_type),
      DTypeName(c.output_type),
      (std::string(ScaleModeName(c.lhs_scale_mode)) + " x " + ScaleModeName(c.rhs_scale_mode))
          .c_str(),
      tile.empty() ? "(plan's choice)" : tile.c_str(),
      !c.column_major_scales  ? ""
      : c.row_major_rhs_scale ? ", column-major lhs scales"
                              : ", column-major scales");
}

// Runs `c` on the own kernel (options.engine kOwn, or kAuto choosing it) and expects every
// element equal to the emulation's (the emulation promotes every 128-K block, as the kernel),
// and the plan's explain to contain `explained` when given.
void ExpectBitIdentical(const OwnCase& c, const CudaDotOptions& options, uint64_t seed,
                        const char* explained = nullptr) {
  const std::string label = Label(c, options.own_tile);
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, BlockScaledProblem(c, seed));
  StatusOr<testing::GpuRun> run = testing::RunOnGpu(p, options);
  ASSERT_TRUE(run.ok()) << label << ": " << run.status().ToString();
  // Block scales: one FMA per 128-K block; outer scales: partial sums of the asked interval.
  const bool block_scaled = IsBlockScale(c.lhs_scale_mode);
  ASSERT_EQ(run->info.fused_promotion, block_scaled) << label;
  ASSERT_EQ(run->info.promotion_interval,
            options.own_promotion_interval == 0 ? 128 : options.own_promotion_interval)
      << label;
  Fp8AccumulatorModel model;
  model.fused_promotion = block_scaled;
  model.promotion_interval = run->info.promotion_interval;
  model.split = run->info.k_split;  // split-K: the runs the kernel adds, in its order
  FP8_ASSERT_OK_AND_ASSIGN(DotResult emulated, EmulatedDot(p.spec, p.arguments(), model));
  const int64_t total = emulated.output.element_count();
  int64_t identical = 0, nonfinite = 0, first_difference = -1;
  for (int64_t i = 0; i < total; ++i) {
    const double gpu = run->result.output.GetPhysical(i);
    const double cpu = emulated.output.GetPhysical(i);
    nonfinite += !std::isfinite(gpu);
    if (gpu == cpu) {
      ++identical;
    } else if (first_difference < 0) {
      first_difference = i;
    }
  }
  EXPECT_EQ(nonfinite, 0) << label << ": unwritten (poisoned) elements";
  EXPECT_EQ(identical, total)
      << label << ": first difference at element " << first_difference << " (row "
      << first_difference / c.n << ", col " << first_difference % c.n << "): GPU "
      << (first_difference >= 0 ? run->result.output.GetPhysical(first_difference) : 0.0)
      << " vs emulation "
      << (first_difference >= 0 ? emulated.output.GetPhysical(first_difference) : 0.0) << "\n"
      << run->explain;
  EXPECT_NE(run->info.engine.find("fp8dot block-scaled"), std::string::npos) << run->info.engine;
  if (explained != nullptr) {
    EXPECT_NE(run->explain.find(explained), std::string::npos)
        << label << ": expected '" << explained << "' in\n"
        << run->explain;
  }
}

// The same with the own kernel forced, on the given tile ("": the plan's choice).
void ExpectBitIdentical(const OwnCase& c, const std::string& tile, uint64_t seed) {
  CudaDotOptions options;
  options.engine = GemmEngine::kOwn;
  options.own_tile = tile;
  ExpectBitIdentical(c, options, seed);
}

// The explain's line on how the stage's scales are staged (plan_explain.cc).
constexpr char kCopyEngineStaging[] = "scales arrive with its operand tiles";
constexpr char kProducerWarpStaging[] = "producer warps copy each stage's scales";

// Above M = 64 the scales that producer warps would stage are reordered first
// (OwnGemmReordersScales).
constexpr char kReorderedScales[] = "reordered on the device at every run";

// Runs `c` on each of `tiles`, expecting the explain to name `staging` (kReorderedScales instead
// of producer warps' staging above M = 64).
void ExpectEveryTileBitIdentical(const OwnCase& c, const char* staging,
                                 const std::vector<const char*>& tiles, uint64_t& seed) {
  for (const char* tile : tiles) {
    CudaDotOptions options;
    options.engine = GemmEngine::kOwn;
    options.own_tile = tile;
    const bool reordered = staging == kProducerWarpStaging && c.m > 64;
    ExpectBitIdentical(c, options, ++seed, reordered ? kReorderedScales : staging);
  }
}

TEST(CudaOwnGemmTest, EveryTileIsBitIdenticalToTheEmulation) {
  FP8_SKIP_WITHOUT_GPU();
  // Ragged M (not a multiple of any block_m), an odd number of 128-column tiles (so a 2-CTA
  // cluster's second tile falls past N), several K blocks, and M spanning several tile-rows.
  // Row-major lhs scales are staged by the producer's warps at M <= 64 (on every tile: M = 50
  // leaves the larger tiles' other rows zero-filled) and reordered above; M-major lhs scales
  // whose K-blocks start on 16 bytes by the copy engine with the operand tiles, whichever the
  // rhs 128x128 scales' layout (K-blocks contiguous, cuBLASLt's, or column blocks): their one
  // scale per stage is a cp.async either way.
  const std::vector<const char*> tiles = {"256x128c2", "256x128", "256x64", "192x128",
                                          "128x128c2", "128x128", "128x64", "128x32",
                                          "64x128",    "64x64",   "64x32",  "64x16"};
  uint64_t seed = 9100;
  ExpectEveryTileBitIdentical({.m = 50, .n = 384, .k = 640}, kProducerWarpStaging, tiles, seed);
  ExpectEveryTileBitIdentical({.m = 200, .n = 384, .k = 640}, kProducerWarpStaging, tiles, seed);
  ExpectEveryTileBitIdentical({.m = 600, .n = 640, .k = 384, .output_type = DType::kBF16},
                              kProducerWarpStaging, tiles, seed);
  ExpectEveryTileBitIdentical({.m = 200, .n = 384, .k = 1024, .column_major_scales = true},
                              kCopyEngineStaging, tiles, seed);
  ExpectEveryTileBitIdentical({.m = 600,
                               .n = 512,
                               .k = 640,
                               .output_type = DType::kBF16,
                               .column_major_scales = true,
                               .row_major_rhs_scale = true},
                              kCopyEngineStaging, tiles, seed);
}

// Split-K: each tile's K-blocks cut into runs that different CTAs promote on their own; the last
// run to finish adds the runs in order. Uneven runs (K = 5 blocks in 3 runs of 2, 2, 1), more
// runs asked for than K has blocks (named and run as fewer), several tile-rows and a ragged
// last one, a partial last K-block, both output types.
TEST(CudaOwnGemmTest, SplitKIsBitIdenticalToTheEmulation) {
  FP8_SKIP_WITHOUT_GPU();
  struct SplitCase {
    OwnCase shape;
    const char* tile;
    int runs;  // what the plan must report
  };
  const SplitCase cases[] = {
      {{.m = 64, .n = 256, .k = 640}, "64x128s3", 3},
      {{.m = 64, .n = 256, .k = 640}, "64x128s4", 3},  // 5 blocks: runs of 2 leave 3
      {{.m = 200, .n = 384, .k = 2048, .output_type = DType::kBF16}, "128x64s4", 4},
      {{.m = 130, .n = 512, .k = 1024, .lhs_type = kE5M2}, "64x32s8", 8},
      {{.m = 96, .n = 128, .k = 512}, "128x128s16", 4},  // more runs than blocks
      {{.m = 7, .n = 640, .k = 7168, .distribution = Distribution::kMixedMagnitude}, "64x64s6", 6},
  };
  uint64_t seed = 9700;
  for (const SplitCase& c : cases) {
    ExpectBitIdentical(c.shape, c.tile, ++seed);
    FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, BlockScaledProblem(c.shape, seed));
    CudaDotOptions options;
    options.engine = GemmEngine::kOwn;
    options.own_tile = c.tile;
    FP8_ASSERT_OK_AND_ASSIGN(std::unique_ptr<CudaDotPlan> plan,
                             CudaDotPlan::Create(p.spec, options));
    EXPECT_EQ(plan->info().k_split.slices, c.runs) << c.tile;
    EXPECT_NE(plan->Explain().find(StrFormat("K cut into %d runs", c.runs)), std::string::npos)
        << plan->Explain();
  }
}

// A long K (131 blocks: more stages than the ring holds many times over, and B scale rows longer
// than a cache line) with both ways of staging A's scales and both layouts of B's, and split-K
// runs that start in the middle of it.
TEST(CudaOwnGemmTest, LongKIsBitIdenticalToTheEmulation) {
  FP8_SKIP_WITHOUT_GPU();
  constexpr int64_t kK = 131 * 128;
  uint64_t seed = 10400;
  ExpectEveryTileBitIdentical({.m = 60, .n = 200, .k = kK}, kProducerWarpStaging,
                              {"256x128", "128x128", "64x16"}, seed);
  ExpectEveryTileBitIdentical({.m = 96, .n = 200, .k = kK}, kProducerWarpStaging,
                              {"256x128", "128x128", "64x16"}, seed);
  ExpectEveryTileBitIdentical({.m = 96, .n = 200, .k = kK, .column_major_scales = true},
                              kCopyEngineStaging, {"256x128", "128x128c2", "64x64"}, seed);
  ExpectEveryTileBitIdentical({.m = 64,
                               .n = 256,
                               .k = kK,
                               .output_type = DType::kBF16,
                               .column_major_scales = true,
                               .row_major_rhs_scale = true,
                               .distribution = Distribution::kMixedMagnitude},
                              kCopyEngineStaging, {"64x64s2", "64x32s3"}, seed);
}

// The split-K workspace's arrival counters are left at zero by every launch: the same plan run
// again (and again, on other data) gives the bit-identical answer, not a stale reduction.
TEST(CudaOwnGemmTest, SplitKPlansCanBeRunAgain) {
  FP8_SKIP_WITHOUT_GPU();
  const OwnCase shape{.m = 64, .n = 512, .k = 4096};
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem first, BlockScaledProblem(shape, 9801));
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem second, BlockScaledProblem(shape, 9802));
  FP8_ASSERT_OK_AND_ASSIGN(CanonicalDot dot, ValidateDotSpec(first.spec));
  CudaDotOptions options;
  options.engine = GemmEngine::kOwn;
  options.own_tile = "64x64s4";
  FP8_ASSERT_OK_AND_ASSIGN(std::unique_ptr<CudaDotPlan> plan,
                           CudaDotPlan::Create(first.spec, options));
  Fp8AccumulatorModel model;
  model.fused_promotion = true;
  model.split = plan->info().k_split;
  ASSERT_EQ(model.split.slices, 4);
  for (int round = 0; round < 3; ++round) {
    const DotProblem& p = round == 1 ? second : first;
    FP8_ASSERT_OK_AND_ASSIGN(testing::GpuBuffers g, testing::MakeGpuBuffers(p, dot));
    FP8_ASSERT_OK(plan->Run(g.pointers, nullptr));
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    FP8_ASSERT_OK_AND_ASSIGN(DotResult gpu, testing::Download(g, p.spec, dot));
    FP8_ASSERT_OK_AND_ASSIGN(DotResult emulated, EmulatedDot(p.spec, p.arguments(), model));
    int64_t differences = 0;
    for (int64_t i = 0; i < gpu.output.element_count(); ++i) {
      differences += gpu.output.GetPhysical(i) != emulated.output.GetPhysical(i);
    }
    EXPECT_EQ(differences, 0) << "round " << round;
  }
}

// Runs enqueued back to back in one stream, no synchronisation between them. The own GEMM is a
// programmatic dependent launch, and at M <= 128 lets the next start early: it may start while
// the kernel before it still runs, and must see that kernel's memory all the same: the scales this
// run's reordering kernel wrote (row-major scales at M > 64), or, with scales read in place, the
// previous run's GEMM leaving the split-K counters at zero. Alternating data, a D per run, each
// bit-identical to the emulation.
TEST(CudaOwnGemmTest, RunsBackToBackInOneStreamSeeTheKernelsBeforeThem) {
  FP8_SKIP_WITHOUT_GPU();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  uint64_t seed = 9900;
  for (const bool column_major_scales : {false, true}) {
    for (const char* tile : {"64x64s4", "128x64s2", "128x128"}) {
      const OwnCase shape{
          .m = 128, .n = 512, .k = 4096, .column_major_scales = column_major_scales};
      const std::string label = Label(shape, tile);
      FP8_ASSERT_OK_AND_ASSIGN(DotProblem first, BlockScaledProblem(shape, ++seed));
      FP8_ASSERT_OK_AND_ASSIGN(DotProblem second, BlockScaledProblem(shape, ++seed));
      FP8_ASSERT_OK_AND_ASSIGN(CanonicalDot dot, ValidateDotSpec(first.spec));
      CudaDotOptions options;
      options.engine = GemmEngine::kOwn;
      options.own_tile = tile;
      FP8_ASSERT_OK_AND_ASSIGN(std::unique_ptr<CudaDotPlan> plan,
                               CudaDotPlan::Create(first.spec, options));
      EXPECT_NE(plan->Explain().find("launch: programmatic dependent"), std::string::npos)
          << plan->Explain();
      EXPECT_NE(plan->Explain().find("lets the next kernel start"), std::string::npos)
          << plan->Explain();
      Fp8AccumulatorModel model;
      model.fused_promotion = true;
      model.split = plan->info().k_split;
      FP8_ASSERT_OK_AND_ASSIGN(DotResult first_emulated,
                               EmulatedDot(first.spec, first.arguments(), model));
      FP8_ASSERT_OK_AND_ASSIGN(DotResult second_emulated,
                               EmulatedDot(second.spec, second.arguments(), model));
      constexpr int kRuns = 8;
      std::vector<testing::GpuBuffers> buffers;
      for (int run = 0; run < kRuns; ++run) {
        FP8_ASSERT_OK_AND_ASSIGN(testing::GpuBuffers g,
                                 testing::MakeGpuBuffers(run % 2 ? second : first, dot));
        buffers.push_back(std::move(g));
      }
      for (const testing::GpuBuffers& g : buffers) FP8_ASSERT_OK(plan->Run(g.pointers, stream));
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess) << label;
      for (int run = 0; run < kRuns; ++run) {
        const DotProblem& p = run % 2 ? second : first;
        const DotResult& emulated = run % 2 ? second_emulated : first_emulated;
        FP8_ASSERT_OK_AND_ASSIGN(DotResult gpu, testing::Download(buffers[run], p.spec, dot));
        int64_t differences = 0;
        for (int64_t i = 0; i < gpu.output.element_count(); ++i) {
          differences += gpu.output.GetPhysical(i) != emulated.output.GetPhysical(i);
        }
        EXPECT_EQ(differences, 0) << label << ", run " << run;
      }
    }
  }
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

// A plan held to fewer SMs (CudaDotOptions::sm_count_target) runs a persistent grid that small.
// On one SM, one CTA runs a tile's runs one after another, so its last run always finds every
// other run counted in and adds them at once (its own sums from registers): the path that on a
// whole GPU only timing takes. 128x128s2 keeps the path where every run counts in.
TEST(CudaOwnGemmTest, PlansHeldToFewerSmsAreBitIdenticalToTheEmulation) {
  FP8_SKIP_WITHOUT_GPU();
  uint64_t seed = 12500;
  for (const int sms : {1, 3}) {
    for (const char* tile : {"64x64s4", "128x64s3", "64x32s2", "128x128s2", "128x128", "64x64"}) {
      CudaDotOptions options;
      options.engine = GemmEngine::kOwn;
      options.own_tile = tile;
      options.sm_count_target = sms;
      const std::string grid = StrFormat("persistent grid of up to %d CTAs", sms);
      ExpectBitIdentical({.m = 130, .n = 384, .k = 1536, .output_type = DType::kBF16}, options,
                         ++seed, grid.c_str());
      ExpectBitIdentical({.m = 64,
                          .n = 256,
                          .k = 1024,
                          .lhs_scale_mode = ScaleMode::kTensor,
                          .rhs_scale_mode = ScaleMode::kTensor},
                         options, ++seed, grid.c_str());
    }
  }
  // The plan's own choice for one SM, and a target above the device's SMs (all of them).
  CudaDotOptions options;
  options.engine = GemmEngine::kOwn;
  options.sm_count_target = 1;
  ExpectBitIdentical({.m = 64, .n = 512, .k = 4096}, options, ++seed,
                     "persistent grid of up to 1 CTAs");
  options.sm_count_target = 1 << 20;
  ExpectBitIdentical({.m = 64, .n = 512, .k = 4096}, options, ++seed);
}

// The plan's tile is chosen for the GPU it runs on: its SMs and its DRAM, whose peak the driver
// reports (cudaDevAttrMemoryClockRate, cudaDevAttrGlobalMemoryBusWidth; an H100 SXM 3.35 TB/s,
// an H200 4.8), and Explain says so; a forced tile says it was forced.
TEST(CudaOwnGemmTest, PlansNameTheGpuTheirTileWasChosenFor) {
  FP8_SKIP_WITHOUT_GPU();
  FP8_ASSERT_OK_AND_ASSIGN(const CudaDeviceInfo device, QueryCudaDevice());
  EXPECT_GT(device.memory_bytes_per_second, 1e12) << device.name;
  EXPECT_GT(device.sm_clock_khz, 1000000) << device.name;
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, BlockScaledProblem({.m = 64, .n = 4096, .k = 7168}, 9));
  CudaDotOptions options;
  options.engine = GemmEngine::kOwn;
  FP8_ASSERT_OK_AND_ASSIGN(std::unique_ptr<CudaDotPlan> plan, CudaDotPlan::Create(p.spec, options));
  const std::string chosen = StrFormat(
      "tile choice: the cost model's for %d SMs and DRAM at %.0f bytes per SM clock (peak)",
      device.multiprocessor_count, device.memory_bytes_per_second / (device.sm_clock_khz * 1e3));
  EXPECT_NE(plan->Explain().find(chosen), std::string::npos) << chosen << "\n" << plan->Explain();
  options.own_tile = "64x32";
  FP8_ASSERT_OK_AND_ASSIGN(plan, CudaDotPlan::Create(p.spec, options));
  EXPECT_NE(plan->Explain().find("tile choice: CudaDotOptions::own_tile '64x32'"),
            std::string::npos)
      << plan->Explain();
  EXPECT_NE(plan->Explain().find("launch: programmatic dependent"), std::string::npos)
      << plan->Explain();
  EXPECT_NE(plan->Explain().find("lets the next kernel start"), std::string::npos)
      << plan->Explain();
  // Above M = 128 it is still a dependent, but the next kernel starts as it ends.
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem large,
                           BlockScaledProblem({.m = 256, .n = 4096, .k = 7168}, 10));
  options.own_tile.clear();
  FP8_ASSERT_OK_AND_ASSIGN(plan, CudaDotPlan::Create(large.spec, options));
  EXPECT_NE(plan->Explain().find("launch: programmatic dependent"), std::string::npos)
      << plan->Explain();
  EXPECT_NE(plan->Explain().find("the next kernel starts as it ends"), std::string::npos)
      << plan->Explain();
  // Held to fewer SMs, the GEMM's grid does not wait on SMs kept for other streams.
  options.sm_count_target = 64;
  FP8_ASSERT_OK_AND_ASSIGN(plan, CudaDotPlan::Create(p.spec, options));
  EXPECT_NE(plan->Explain().find("launch: plain"), std::string::npos) << plan->Explain();
}

TEST(CudaOwnGemmTest, TypesLayoutsAndShapesAreBitIdenticalToTheEmulation) {
  FP8_SKIP_WITHOUT_GPU();
  const OwnCase cases[] = {
      {.m = 1, .n = 128, .k = 128},
      {.m = 64, .n = 256, .k = 7168},
      {.m = 333, .n = 1024, .k = 1024, .lhs_type = kE5M2},
      {.m = 256, .n = 512, .k = 2048, .output_type = DType::kBF16},
      {.m = 130, .n = 640, .k = 384, .lhs_type = kE5M2, .output_type = DType::kBF16},
      {.m = 512, .n = 384, .k = 512, .column_major_scales = true},
      {.m = 256, .n = 256, .k = 4096, .distribution = Distribution::kPositive},
      {.m = 192, .n = 256, .k = 1024, .distribution = Distribution::kMixedMagnitude},
      // Partial blocks: N = 2112 (DeepSeek-V3) ends 64 columns into its last B-scale block;
      // K = 336 ends 80 elements into its last block (not a whole k32 step: the copy engine
      // fills the rest of the step with zeros).
      {.m = 64, .n = 2112, .k = 7168, .output_type = DType::kBF16},
      {.m = 130, .n = 200, .k = 336},
      {.m = 300, .n = 2112, .k = 320, .lhs_type = kE5M2},
      // D's rows not 16-byte aligned (N * 2 bytes): the epilogue stores from registers, in
      // pairs (N even) or one output at a time (N odd), instead of through the copy engine.
      {.m = 65, .n = 100, .k = 384, .output_type = DType::kBF16},
      {.m = 70, .n = 101, .k = 256, .output_type = DType::kBF16},
      {.m = 257, .n = 99, .k = 512},
  };
  uint64_t seed = 9200;
  for (const OwnCase& c : cases) ExpectBitIdentical(c, "", ++seed);
}

TEST(CudaOwnGemmTest, MatchesTheExactReferenceWithinThePromotedBound) {
  FP8_SKIP_WITHOUT_GPU();
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, BlockScaledProblem({.m = 384, .n = 512, .k = 4096}, 9301));
  CudaDotOptions options;
  options.engine = GemmEngine::kOwn;
  testing::ExpectMatchesReference(p, "own kernel vs exact", 0.0, options);
}

TEST(CudaOwnGemmTest, ExplainNamesTheEngineAndTheTile) {
  FP8_SKIP_WITHOUT_GPU();
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, BlockScaledProblem({.m = 256, .n = 256, .k = 256}, 9401));
  CudaDotOptions options;
  options.engine = GemmEngine::kOwn;
  options.own_tile = "64x64";
  FP8_ASSERT_OK_AND_ASSIGN(std::unique_ptr<CudaDotPlan> plan, CudaDotPlan::Create(p.spec, options));
  EXPECT_EQ(plan->info().engine, "fp8dot block-scaled 64x64");
  EXPECT_NE(plan->Explain().find("engine: fp8dot block-scaled 64x64"), std::string::npos)
      << plan->Explain();
  EXPECT_NE(plan->Explain().find("schedule: each math warpgroup keeps two partial sums in turn"),
            std::string::npos)
      << plan->Explain();
  EXPECT_EQ(plan->info().fast_accum, 0);
}

// GemmEngine::kAuto takes the own kernel where it measured faster (M <= 64; M <= 128 in one
// wave; M >= 4096) and cuBLASLt elsewhere; kCublasLt is cuBLASLt; kOwn is the own kernel.
TEST(CudaOwnGemmTest, AutoTakesTheOwnKernelWhereItIsFaster) {
  FP8_SKIP_WITHOUT_GPU();
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem small,
                           BlockScaledProblem({.m = 64, .n = 4096, .k = 7168}, 9601));
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem large,
                           BlockScaledProblem({.m = 4096, .n = 4096, .k = 7168}, 9601));
  std::unique_ptr<CudaDotPlan> plan;
  for (const DotProblem* p : {&small, &large}) {
    FP8_ASSERT_OK_AND_ASSIGN(plan, CudaDotPlan::Create(p->spec));
    EXPECT_EQ(plan->info().engine.rfind("fp8dot block-scaled ", 0), 0u) << plan->info().engine;
    EXPECT_NE(plan->Explain().find("(auto: the own kernel measured faster"), std::string::npos)
        << plan->Explain();
  }
  CudaDotOptions options;
  options.engine = GemmEngine::kCublasLt;
  FP8_ASSERT_OK_AND_ASSIGN(plan, CudaDotPlan::Create(small.spec, options));
  EXPECT_EQ(plan->info().engine, "cuBLASLt");
  for (const OwnCase& c : {OwnCase{.m = 128, .n = 24576, .k = 1536},     // two waves
                           OwnCase{.m = 1024, .n = 4096, .k = 7168}}) {  // not measured
    FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, BlockScaledProblem(c, 9602));
    FP8_ASSERT_OK_AND_ASSIGN(plan, CudaDotPlan::Create(p.spec));
    EXPECT_EQ(plan->info().engine, "cuBLASLt") << c.m << "x" << c.n << "x" << c.k;
    options.engine = GemmEngine::kOwn;
    FP8_ASSERT_OK_AND_ASSIGN(plan, CudaDotPlan::Create(p.spec, options));
    EXPECT_EQ(plan->info().engine.rfind("fp8dot block-scaled ", 0), 0u) << plan->info().engine;
    options.engine = GemmEngine::kCublasLt;
  }
  // A dot the own kernel cannot run (tensor scales) stays with cuBLASLt under kAuto.
  DotProblemOptions o;
  o.m = 64;
  o.n = 4096;
  o.k = 7168;
  o.lhs_scale_mode = o.rhs_scale_mode = ScaleMode::kTensor;
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem tensor_scaled, MakeDotProblem(o));
  FP8_ASSERT_OK_AND_ASSIGN(plan, CudaDotPlan::Create(tensor_scaled.spec));
  EXPECT_EQ(plan->info().engine, "cuBLASLt");
}

// rhs 1x128 (the weight-gradient GEMM's scales: one per column and K-block), which the kernel
// promotes with a scale product per element: every tile that takes it, both output types, the
// scales' vector and element-wise copies (N % 4, column-major scales), ragged M and N, a partial
// K-block and split-K, all bit-identical to the emulation (the same fused promotion).
TEST(CudaOwnGemmTest, ColumnScalesAreBitIdenticalToTheEmulation) {
  FP8_SKIP_WITHOUT_GPU();
  uint64_t seed = 9800;
  const std::vector<const char*> tiles = {"256x128", "256x128c2", "256x64", "192x128",
                                          "128x128", "128x128c2", "128x64", "128x32",
                                          "64x128",  "64x64",     "64x32",  "64x16"};
  ExpectEveryTileBitIdentical({.m = 40, .n = 384, .k = 640, .rhs_scale_mode = kColumnBlocks},
                              kProducerWarpStaging, tiles, seed);
  ExpectEveryTileBitIdentical({.m = 200, .n = 384, .k = 640, .rhs_scale_mode = kColumnBlocks},
                              kProducerWarpStaging, tiles, seed);
  ExpectEveryTileBitIdentical(
      {.m = 300, .n = 200, .k = 384, .output_type = DType::kBF16, .rhs_scale_mode = kColumnBlocks},
      kProducerWarpStaging, tiles, seed);
  // M-major lhs scales and N-major rhs 1x128 scales (their row-major layout): the copy engine.
  ExpectEveryTileBitIdentical({.m = 200,
                               .n = 384,
                               .k = 640,
                               .column_major_scales = true,
                               .row_major_rhs_scale = true,
                               .rhs_scale_mode = kColumnBlocks},
                              kCopyEngineStaging, tiles, seed);
  const OwnCase cases[] = {
      {.m = 70, .n = 99, .k = 336, .output_type = DType::kBF16, .rhs_scale_mode = kColumnBlocks},
      {.m = 129, .n = 260, .k = 1024, .column_major_scales = true, .rhs_scale_mode = kColumnBlocks},
      {.m = 64,
       .n = 4096,
       .k = 7168,
       .lhs_type = kE5M2,
       .output_type = DType::kBF16,
       .rhs_scale_mode = kColumnBlocks},
      {.m = 256,
       .n = 512,
       .k = 2048,
       .distribution = Distribution::kMixedMagnitude,
       .rhs_scale_mode = kColumnBlocks},
  };
  for (const OwnCase& c : cases) ExpectBitIdentical(c, "", ++seed);
  ExpectBitIdentical({.m = 64, .n = 256, .k = 1280, .rhs_scale_mode = kColumnBlocks}, "64x64s4",
                     ++seed);
}

// The 192-column tile (outer scales only) refuses rhs 1x128, naming the tiles that take it; kAuto
// (without autotuning) leaves a small rhs 1x128 dot to cuBLASLt (it takes the own kernel only at
// M >= 2048 and K >= 2048 where the plan's tile is 192x128: own_gemm_rules_test).
TEST(CudaOwnGemmTest, ColumnScalesOnTheWideTileAreRefused) {
  FP8_SKIP_WITHOUT_GPU();
  FP8_ASSERT_OK_AND_ASSIGN(
      DotProblem p,
      BlockScaledProblem({.m = 64, .n = 256, .k = 256, .rhs_scale_mode = kColumnBlocks}, 9901));
  CudaDotOptions options;
  options.engine = GemmEngine::kOwn;
  options.own_tile = "128x192";
  const StatusOr<std::unique_ptr<CudaDotPlan>> refused = CudaDotPlan::Create(p.spec, options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("for 1x128 x 1x128 scales"), std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("256x128"), std::string::npos)
      << refused.status().message();
  FP8_ASSERT_OK_AND_ASSIGN(std::unique_ptr<CudaDotPlan> plan, CudaDotPlan::Create(p.spec));
  EXPECT_EQ(plan->info().engine, "cuBLASLt");
}

// Tensor and row/column scales on the own kernel: the tensor core sums own_promotion_interval
// K-elements before each promotion into f32, and the scales multiply D at the end, as the
// emulation's promoted mode with that promotion_interval. Every tile that takes it, both output
// types, every interval from 128 to more than K, intervals that end inside a split-K run, mixed
// tensor and row scales and a partial K-block, all bit-identical.
TEST(CudaOwnGemmTest, OuterScalesWithAnyPromotionIntervalAreBitIdenticalToTheEmulation) {
  FP8_SKIP_WITHOUT_GPU();
  constexpr ScaleMode kTensor = ScaleMode::kTensor, kRow = ScaleMode::kOuterVector;
  uint64_t seed = 10000;
  CudaDotOptions options;
  options.engine = GemmEngine::kOwn;
  for (const char* tile : {"256x128", "256x128c2", "256x64", "192x128", "128x192", "128x128",
                           "128x128c2", "128x64", "128x32", "64x128", "64x64", "64x32", "64x16"}) {
    options.own_tile = tile;
    ExpectBitIdentical(
        {.m = 200, .n = 384, .k = 640, .lhs_scale_mode = kTensor, .rhs_scale_mode = kTensor},
        options, ++seed);
    ExpectBitIdentical({.m = 300,
                        .n = 200,
                        .k = 384,
                        .output_type = DType::kBF16,
                        .lhs_scale_mode = kRow,
                        .rhs_scale_mode = kRow},
                       options, ++seed);
  }
  options.own_tile = "";
  for (const int interval : {128, 256, 384, 1024, 8192}) {
    options.own_promotion_interval = interval;
    ExpectBitIdentical(
        {.m = 130, .n = 520, .k = 2048, .lhs_scale_mode = kRow, .rhs_scale_mode = kRow}, options,
        ++seed);
    ExpectBitIdentical({.m = 64,
                        .n = 256,
                        .k = 4096,
                        .lhs_type = kE5M2,
                        .output_type = DType::kBF16,
                        .distribution = Distribution::kPositive,
                        .lhs_scale_mode = kTensor,
                        .rhs_scale_mode = kRow},
                       options, ++seed);
  }
  // Intervals of several blocks on the tiles that keep two partial sums in turn (pipelined) and
  // on the 192-row tile's one, K ending inside an interval and inside a block.
  for (const auto& [tile, interval] : std::vector<std::pair<const char*, int>>{{"128x128", 384},
                                                                               {"128x64", 256},
                                                                               {"64x64", 1024},
                                                                               {"192x128", 512},
                                                                               {"128x192", 256}}) {
    options.own_tile = tile;
    options.own_promotion_interval = interval;
    ExpectBitIdentical({.m = 250,
                        .n = 264,
                        .k = 1000,
                        .distribution = Distribution::kPositive,
                        .lhs_scale_mode = kRow,
                        .rhs_scale_mode = kRow},
                       options, ++seed);
  }
  // Split-K (promotions every 128 K: runs end on interval boundaries).
  options.own_tile = "64x64s3";
  options.own_promotion_interval = 128;
  ExpectBitIdentical(
      {.m = 64, .n = 256, .k = 1152, .lhs_scale_mode = kRow, .rhs_scale_mode = kTensor}, options,
      ++seed);
  options.own_tile = "";
  options.own_promotion_interval = 512;
  ExpectBitIdentical({.m = 77,
                      .n = 136,
                      .k = 1000,
                      .output_type = DType::kBF16,
                      .distribution = Distribution::kMixedMagnitude,
                      .lhs_scale_mode = kTensor,
                      .rhs_scale_mode = kTensor},
                     options, ++seed);
}

// Outer scales where a CTA runs several tiles in turn (more tiles than the H200's 132 SMs): each
// tile's row and column scales are copied into shared memory when the tile starts and read in its
// epilogue, so a tile that read its predecessor's (or whose copies overwrote scales still being
// read) differs from the emulation. Row scales on both sides make every tile's scales its own;
// the last case's rows are not 16-byte aligned, so D is stored from registers.
TEST(CudaOwnGemmTest, OuterScalesOfSeveralTilesPerCtaAreBitIdenticalToTheEmulation) {
  FP8_SKIP_WITHOUT_GPU();
  constexpr ScaleMode kRow = ScaleMode::kOuterVector;
  uint64_t seed = 10700;
  struct TileCase {
    const char* tile;
    int64_t m, n, k;
    DType output_type;
  };
  for (const TileCase& t : std::vector<TileCase>{{"192x128", 576, 6144, 256, DType::kBF16},
                                                 {"256x128", 512, 8704, 128, DType::kF32},
                                                 {"128x64", 384, 5120, 256, DType::kBF16},
                                                 {"64x16", 256, 2176, 256, DType::kF32},
                                                 {"64x16", 256, 2170, 256, DType::kBF16}}) {
    ExpectBitIdentical({.m = t.m,
                        .n = t.n,
                        .k = t.k,
                        .output_type = t.output_type,
                        .lhs_scale_mode = kRow,
                        .rhs_scale_mode = kRow},
                       t.tile, ++seed);
  }
}

// Block scales where a CTA runs several tiles in turn (more units of work than the H200's 132
// SMs) on the tiles that wait for each block's wgmma before promoting it (192 and 256 rows): the
// stage ring runs on from one tile into the next, and K's blocks (5 or 3) are no multiple of the
// ring's 3 stages, so each tile starts at another stage and barrier phase. A tile that read a
// stage before it was filled, or a stage of the next tile, differs from the emulation. Both ways
// of staging the scales, both B scale granularities, both output types, a 2-CTA cluster.
TEST(CudaOwnGemmTest, BlockScalesOfSeveralTilesPerCtaAreBitIdenticalToTheEmulation) {
  FP8_SKIP_WITHOUT_GPU();
  uint64_t seed = 10800;
  struct TileCase {
    const char* tile;
    OwnCase shape;
  };
  const TileCase cases[] = {
      {"256x128",
       {.m = 512, .n = 8704, .k = 640, .output_type = DType::kBF16, .column_major_scales = true}},
      {"256x128c2", {.m = 512, .n = 8704, .k = 640, .column_major_scales = true}},
      {"192x128", {.m = 576, .n = 6144, .k = 384}},
      {"192x128",
       {.m = 576,
        .n = 6144,
        .k = 384,
        .output_type = DType::kBF16,
        .column_major_scales = true,
        .rhs_scale_mode = kColumnBlocks}},
  };
  for (const TileCase& c : cases) ExpectBitIdentical(c.shape, c.tile, ++seed);
}

// An interval that is not a multiple of 128, another interval than 128 with block scales, a tile
// without registers for a longer outer promotion and a tile wider than a B scale block are
// refused with the reason.
TEST(CudaOwnGemmTest, PromotionIntervalsAndTilesTheKernelCannotRunAreRefused) {
  FP8_SKIP_WITHOUT_GPU();
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem outer,
                           BlockScaledProblem({.m = 64,
                                               .n = 256,
                                               .k = 512,
                                               .lhs_scale_mode = ScaleMode::kTensor,
                                               .rhs_scale_mode = ScaleMode::kTensor},
                                              10100));
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem blocks,
                           BlockScaledProblem({.m = 64, .n = 256, .k = 512}, 10101));
  CudaDotOptions options;
  options.engine = GemmEngine::kOwn;
  const auto expect_refused = [&](const DotProblem& p, const std::string& part) {
    StatusOr<std::unique_ptr<CudaDotPlan>> plan = CudaDotPlan::Create(p.spec, options);
    ASSERT_FALSE(plan.ok()) << part;
    EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(plan.status().message().find(part), std::string::npos) << plan.status().message();
  };
  options.own_promotion_interval = 100;
  expect_refused(outer, "multiple of 128");
  options.own_promotion_interval = 256;
  expect_refused(blocks, "every 128 with block scales");
  options.own_tile = "64x64s2";
  expect_refused(outer, "split-K (tile '64x64s2') needs own_promotion_interval 128");
  options.own_tile = "256x128";  // promotes every block only
  expect_refused(outer, "for row or tensor scales promoted every 256 K");
  expect_refused(outer, "192x128, 128x192, 128x128c2");  // the message names the tiles it has
  options.own_promotion_interval = 0;
  options.own_tile = "128x192";  // two B 128x128 blocks per tile
  expect_refused(blocks, "no tile '128x192' for 1x128 x 128x128 scales");
}

// With autotuning, kAuto times whole plans on both engines (CUDA graphs, the same scratch data)
// and keeps the faster: on the H200 the own kernel at 64x2112x7168 with block scales (1.38x
// cuBLASLt in bench/results) and cuBLASLt with tensor scales promoted at 64x4096x7168 (the own
// kernel 0.79x in CUDA graphs, 2026-12-04, bench/results/2026-12-04-h200-own-gemm-turns/), both
// far outside the 2% noise margin. The winner goes into the cache file, the next plan takes it
// from there, and the plan it makes computes the dot.
TEST(CudaOwnGemmTest, AutotuningRacesTheEnginesAndKeepsTheFaster) {
  FP8_SKIP_WITHOUT_GPU();
  const std::string cache_path = ::testing::TempDir() + "/fp8dot_engine_race_test.txt";
  std::remove(cache_path.c_str());
  CudaDotOptions options;
  options.autotune_candidates = 4;
  options.autotune_cache_path = cache_path;
  struct Race {
    OwnCase shape;
    std::optional<bool> own_wins;  // where one engine is far ahead on every Hopper GPU measured
  };
  const OwnCase own_faster{.m = 64, .n = 2112, .k = 7168, .output_type = DType::kBF16};
  // Tensor scales promoted: cuBLASLt won this race on the H200 against the plan's tile alone
  // (64x64s2); the own 64x32 runs level with cuBLASLt's fast GEMM on an H100, so which engine
  // wins now depends on the GPU.
  const OwnCase either_faster{.m = 64,
                              .n = 4096,
                              .k = 7168,
                              .output_type = DType::kBF16,
                              .lhs_scale_mode = ScaleMode::kTensor,
                              .rhs_scale_mode = ScaleMode::kTensor};
  for (const Race& race : {Race{own_faster, true}, Race{either_faster, std::nullopt}}) {
    const std::string label = Label(race.shape, "");
    FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, BlockScaledProblem(race.shape, 9701));
    FP8_ASSERT_OK_AND_ASSIGN(std::unique_ptr<CudaDotPlan> plan,
                             CudaDotPlan::Create(p.spec, options));
    const AutotuneSummary& summary = plan->info().autotune;
    ASSERT_TRUE(summary.engines_raced) << label;
    ASSERT_GT(summary.own_ms, 0.0) << label;
    ASSERT_GT(summary.cublaslt_ms, 0.0) << label;
    const bool own = plan->info().engine.rfind("fp8dot block-scaled ", 0) == 0;
    const double winner = own ? summary.own_ms : summary.cublaslt_ms;
    const double loser = own ? summary.cublaslt_ms : summary.own_ms;
    EXPECT_LE(winner, loser * 1.02) << label << ": the slower engine was kept";
    if (race.own_wins) {
      EXPECT_EQ(own, *race.own_wins) << label << ": own " << summary.own_ms << " ms, cuBLASLt "
                                     << summary.cublaslt_ms << " ms";
    }
    // The own kernel ran with each of its candidate tiles, and the fastest is named.
    EXPECT_NE(plan->Explain().find("(autotune: own "), std::string::npos) << plan->Explain();
    EXPECT_NE(plan->Explain().find("the fastest of 4 tiles"), std::string::npos) << plan->Explain();

    FP8_ASSERT_OK_AND_ASSIGN(std::unique_ptr<CudaDotPlan> again,
                             CudaDotPlan::Create(p.spec, options));
    EXPECT_EQ(again->info().engine, plan->info().engine) << label;
    EXPECT_EQ(again->info().autotune.own_ms, 0.0) << label << ": timed again, not cached";
    EXPECT_NE(again->Explain().find("the engine the cache file remembers"), std::string::npos)
        << again->Explain();
  }
  ExpectBitIdentical(own_faster, options, 9701);
  std::remove(cache_path.c_str());
}

// kOwn with autotuning and no tile forced: the kernel's candidate tiles raced alone, the fastest
// kept (remembered per tile in the cache file, apart from kAuto's engine entries), its result
// bit-identical to the emulation like any tile's.
TEST(CudaOwnGemmTest, AutotuningTheOwnEngineRacesItsTiles) {
  FP8_SKIP_WITHOUT_GPU();
  const std::string cache_path = ::testing::TempDir() + "/fp8dot_own_tile_race_test.txt";
  std::remove(cache_path.c_str());
  CudaDotOptions options;
  options.engine = GemmEngine::kOwn;
  options.autotune_candidates = 4;
  options.autotune_cache_path = cache_path;
  const OwnCase shape{.m = 128, .n = 4096, .k = 7168, .output_type = DType::kBF16};
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, BlockScaledProblem(shape, 9801));
  FP8_ASSERT_OK_AND_ASSIGN(std::unique_ptr<CudaDotPlan> plan, CudaDotPlan::Create(p.spec, options));
  EXPECT_EQ(plan->info().engine.rfind("fp8dot block-scaled ", 0), 0u) << plan->info().engine;
  EXPECT_FALSE(plan->info().autotune.engines_raced);  // cuBLASLt is not an entrant
  EXPECT_GT(plan->info().autotune.own_ms, 0.0);
  EXPECT_NE(plan->Explain().find("the fastest of 4 tiles"), std::string::npos) << plan->Explain();
  EXPECT_NE(plan->Explain().find("tile choice: the autotune race's fastest"), std::string::npos)
      << plan->Explain();
  // A second plan takes the kept tile from the cache file.
  FP8_ASSERT_OK_AND_ASSIGN(std::unique_ptr<CudaDotPlan> again,
                           CudaDotPlan::Create(p.spec, options));
  EXPECT_EQ(again->info().engine, plan->info().engine);
  EXPECT_NE(again->Explain().find("the tile the cache file remembers"), std::string::npos)
      << again->Explain();
  // kAuto's entry for the same dot is its own (an engine race, not this tile).
  CudaDotOptions automatic = options;
  automatic.engine = GemmEngine::kAuto;
  FP8_ASSERT_OK_AND_ASSIGN(std::unique_ptr<CudaDotPlan> raced,
                           CudaDotPlan::Create(p.spec, automatic));
  EXPECT_TRUE(raced->info().autotune.engines_raced);
  EXPECT_GT(raced->info().autotune.cublaslt_ms, 0.0) << raced->Explain();
  options.autotune_cache_path.clear();
  ExpectBitIdentical(shape, options, 9801, "the fastest of 4 tiles");
  std::remove(cache_path.c_str());
}

TEST(CudaOwnGemmTest, DotsTheKernelCannotRunAreRefusedWithTheReason) {
  FP8_SKIP_WITHOUT_GPU();
  CudaDotOptions options;
  options.engine = GemmEngine::kOwn;
  DotProblemOptions o;
  o.m = o.n = o.k = 256;
  o.lhs_scale_mode = ScaleMode::kBlock128x128;  // a pair cuBLASLt takes and the kernel does not
  o.rhs_scale_mode = ScaleMode::kBlock1x128;
  o.precision_config.operand_precision = {Precision::kHighest, Precision::kHighest};
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem other_blocks, MakeDotProblem(o));
  StatusOr<std::unique_ptr<CudaDotPlan>> plan = CudaDotPlan::Create(other_blocks.spec, options);
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(plan.status().message().find("lhs 1x128 with rhs 128x128 or 1x128"), std::string::npos)
      << plan.status().message();
  // Tensor scales run, but only promoted.
  o.lhs_scale_mode = o.rhs_scale_mode = ScaleMode::kTensor;
  o.precision_config.operand_precision = {Precision::kDefault, Precision::kDefault};
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem fast, MakeDotProblem(o));
  plan = CudaDotPlan::Create(fast.spec, options);
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(plan.status().message().find("the own kernel promotes"), std::string::npos)
      << plan.status().message();

  FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, BlockScaledProblem({.m = 256, .n = 256, .k = 256}, 9501));
  p.spec.alpha = 2.0;
  plan = CudaDotPlan::Create(p.spec, options);
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(plan.status().message().find("no epilogue"), std::string::npos)
      << plan.status().message();

  p.spec.alpha = 1.0;
  options.own_tile = "96x128";
  plan = CudaDotPlan::Create(p.spec, options);
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(plan.status().message().find("no tile '96x128' (it has 256x128c2,"), std::string::npos)
      << plan.status().message();
  for (const char* bad :
       {"64x128s1", "64x128s", "64x128s99", "64x128sx", "256x128s2", "x128s2", "s4", "64x128s2s"}) {
    options.own_tile = bad;
    plan = CudaDotPlan::Create(p.spec, options);
    EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(plan.status().message().find(bad), std::string::npos) << plan.status().message();
  }
}

}  // namespace
}  // namespace fp8dot
