// The block-scaled FP8 GEMM kernel (block_scaled_gemm.h) and its launcher.
//
// Constraints: sm_90a (wgmma, setmaxnreg); K-major FP8 operands with 16-byte aligned rows (the
// copy engine's rule); B's scales cover 128 columns, so block_n divides 128 and a tile needs one
// B scale per K-block.
//
// Shape of the work:
//   - persistent: one CTA per SM walks the output tiles (grouped by 8 tile-rows so that a wave's
//     A and B blocks stay in L2);
//   - warp-specialised: the last warpgroup is the producer (one thread issues the bulk tensor
//     copies of A and B into a ring of shared-memory stages); the other warpgroups are the math,
//     64 rows of the tile each;
//   - per K-block of 128 (one stage), a math warpgroup runs 4 wgmma k32 steps into a fresh
//     `partial` (the tensor core's own, limited-precision accumulation over 128 products), waits
//     for them, frees the stage, and promotes: acc += partial * (scale_a * scale_b) in FP32. The
//     other math warpgroup's wgmma runs meanwhile, so the tensor core does not wait for the
//     promotion;
//   - the epilogue writes FP32 accumulators to D (bf16 or f32) straight from registers, while
//     the producer is already loading the next tile's stages.
//
// Numerics: each promotion is a rounded f32 multiply, then a rounded f32 add (no FMA), with the
// scale product rounded to f32 first: exactly the CPU emulation's promoted block-scaled mode
// (src/cpu/emulated_dot.cc, promotion interval 128), so the two agree bit for bit.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>

#include "cuda/cuda_status.h"
#include "cuda/kernels/block_scaled_gemm.h"
#include "cuda/kernels/hopper_primitives.cuh"
#include "cuda/kernels/wgmma_fp8.cuh"

namespace fp8dot::cuda {
namespace {

using hopper::WgmmaLhs;

constexpr int kBlockK = 128;  // one scale block of K = one 128-byte row of an FP8 tile
constexpr int kWgmmaK = 32;
constexpr int kWarpgroupThreads = 128;
constexpr int kMathRows = 64;              // rows per math warpgroup (wgmma's M)
constexpr int kScaleColumns = 128;         // columns one B scale covers
constexpr int kSharedBudget = 200 * 1024;  // operand stages; the limit is 227 KB per block
constexpr int kMaxStages = 8;
constexpr int kTileRowsPerGroup = 8;  // rasterisation: tile-rows per group
constexpr uint32_t kProducerRegisters = 40, kMathRegisters = 232;

template <int kBlockM, int kBlockN>
struct TileShape {
  static constexpr int kMathWarpgroups = kBlockM / kMathRows;
  static constexpr int kThreads = (kMathWarpgroups + 1) * kWarpgroupThreads;
  static constexpr int kLhsTileBytes = kBlockM * kBlockK;
  static constexpr int kRhsTileBytes = kBlockN * kBlockK;
  static constexpr int kStageBytes = kLhsTileBytes + kRhsTileBytes;
  static constexpr int kStages = std::min(kMaxStages, kSharedBudget / kStageBytes);
  // Stages, their two barriers each, and slack to align the dynamic shared memory to 1024 bytes
  // (128-byte swizzled tiles must start there).
  static constexpr int kSharedBytes = kStages * kStageBytes + 2 * kStages * 8 + 1024;
  static_assert(kBlockM % kMathRows == 0 && kScaleColumns % kBlockN == 0);
  static_assert(kLhsTileBytes % 1024 == 0 && kRhsTileBytes % 1024 == 0);
};

struct KernelArgs {
  int m, n, k_blocks;
  int tile_rows, tile_cols;  // tiles along M and N
  const float* lhs_scale;
  int64_t lhs_scale_row_stride, lhs_scale_block_stride;
  const float* rhs_scale;
  int64_t rhs_scale_row_stride, rhs_scale_block_stride;
  void* output;
  int64_t output_ld;
  bool paired_stores;  // two adjacent outputs can be written as one aligned vector
};

struct TileOrigin {
  int row, col;  // of D
};

// Tile `index` of the grouped order: groups of kTileRowsPerGroup tile-rows, column by column
// inside a group, so that consecutive CTAs share A blocks and a wave's B blocks are few.
template <int kBlockM, int kBlockN>
__device__ TileOrigin TileAt(int index, const KernelArgs& args) {
  const int group_tiles = kTileRowsPerGroup * args.tile_cols;
  const int group = index / group_tiles;
  const int first_row = group * kTileRowsPerGroup;
  const int group_rows = min(args.tile_rows - first_row, kTileRowsPerGroup);
  const int in_group = index - group * group_tiles;
  return {(first_row + in_group % group_rows) * kBlockM, (in_group / group_rows) * kBlockN};
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

template <int kBlockM, int kBlockN, WgmmaLhs kLhs, typename Out>
__global__ void __launch_bounds__(TileShape<kBlockM, kBlockN>::kThreads, 1)
    block_scaled_gemm_kernel(const __grid_constant__ CUtensorMap lhs_map,
                             const __grid_constant__ CUtensorMap rhs_map, const KernelArgs args) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Shape = TileShape<kBlockM, kBlockN>;
  using Wgmma = hopper::WgmmaFp8<kBlockN, kLhs>;
  constexpr int kStages = Shape::kStages;
  constexpr int kRegisters = Wgmma::kRegisters;

  extern __shared__ uint8_t shared_unaligned[];
  uint8_t* shared = reinterpret_cast<uint8_t*>(
      (reinterpret_cast<uintptr_t>(shared_unaligned) + 1023) & ~uintptr_t{1023});
  uint8_t* lhs_tiles = shared;
  uint8_t* rhs_tiles = lhs_tiles + kStages * Shape::kLhsTileBytes;
  uint64_t* full = reinterpret_cast<uint64_t*>(rhs_tiles + kStages * Shape::kRhsTileBytes);
  uint64_t* empty = full + kStages;

  const int warpgroup = threadIdx.x / kWarpgroupThreads;
  const int lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    hopper::PrefetchTensorMap(&lhs_map);
    hopper::PrefetchTensorMap(&rhs_map);
    for (int s = 0; s < kStages; ++s) {
      hopper::BarrierInit(&full[s], 1);
      hopper::BarrierInit(&empty[s], Shape::kMathWarpgroups * 4);  // one arrival per math warp
    }
    hopper::FenceBarrierInit();
  }
  __syncthreads();

  const int tiles = args.tile_rows * args.tile_cols;
  if (warpgroup == Shape::kMathWarpgroups) {
    // ---- Producer: one thread keeps the ring of stages full.
    if constexpr (Shape::kMathWarpgroups > 1) hopper::ReleaseRegisters<kProducerRegisters>();
    if (threadIdx.x % kWarpgroupThreads != 0) return;
    int stage = 0;
    uint32_t phase = 0;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      const TileOrigin origin = TileAt<kBlockM, kBlockN>(tile, args);
      for (int kb = 0; kb < args.k_blocks; ++kb) {
        hopper::BarrierWait(&empty[stage], phase ^ 1);
        hopper::BarrierArriveExpectBytes(&full[stage], Shape::kStageBytes);
        hopper::TmaLoad2d(lhs_tiles + stage * Shape::kLhsTileBytes, &lhs_map, &full[stage],
                          kb * kBlockK, origin.row);
        hopper::TmaLoad2d(rhs_tiles + stage * Shape::kRhsTileBytes, &rhs_map, &full[stage],
                          kb * kBlockK, origin.col);
        if (++stage == kStages) stage = 0, phase ^= 1;
      }
    }
    return;
  }

  // ---- Math: 64 rows of the tile per warpgroup. In wgmma's accumulator layout this thread
  // holds rows r and r + 8 (r below), columns 8j + 2(lane % 4) and the next, for j < N / 8.
  if constexpr (Shape::kMathWarpgroups > 1) hopper::AcquireRegisters<kMathRegisters>();
  const int row_in_tile =
      warpgroup * kMathRows + (threadIdx.x % kWarpgroupThreads) / 32 * 16 + lane / 4;
  Out* output = static_cast<Out*>(args.output);
  float partial[kRegisters];
#pragma unroll
  for (int i = 0; i < kRegisters; ++i) partial[i] = 0.0f;
  int stage = 0;
  uint32_t phase = 0;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const TileOrigin origin = TileAt<kBlockM, kBlockN>(tile, args);
    const int row0 = origin.row + row_in_tile, row1 = row0 + 8;
    const bool has_row0 = row0 < args.m, has_row1 = row1 < args.m;
    const float* lhs_scale0 = args.lhs_scale + row0 * args.lhs_scale_row_stride;
    const float* lhs_scale1 = args.lhs_scale + row1 * args.lhs_scale_row_stride;
    const float* rhs_scale =
        args.rhs_scale + (origin.col / kScaleColumns) * args.rhs_scale_row_stride;

    float acc[kRegisters];
#pragma unroll
    for (int i = 0; i < kRegisters; ++i) acc[i] = 0.0f;
    // Scales are read one K-block ahead, so their latency hides behind a block's wgmma.
    float next_scale0 = has_row0 ? __ldg(lhs_scale0) : 0.0f;
    float next_scale1 = has_row1 ? __ldg(lhs_scale1) : 0.0f;
    float next_scale_b = __ldg(rhs_scale);
    for (int kb = 0; kb < args.k_blocks; ++kb) {
      const float scale0 = next_scale0, scale1 = next_scale1, scale_b = next_scale_b;
      if (kb + 1 < args.k_blocks) {
        const int64_t a_offset = (kb + 1) * args.lhs_scale_block_stride;
        if (has_row0) next_scale0 = __ldg(lhs_scale0 + a_offset);
        if (has_row1) next_scale1 = __ldg(lhs_scale1 + a_offset);
        next_scale_b = __ldg(rhs_scale + (kb + 1) * args.rhs_scale_block_stride);
      }

      hopper::BarrierWait(&full[stage], phase);
      const uint64_t a = hopper::SwizzledK128Descriptor(lhs_tiles + stage * Shape::kLhsTileBytes +
                                                        warpgroup * kMathRows * kBlockK);
      const uint64_t b = hopper::SwizzledK128Descriptor(rhs_tiles + stage * Shape::kRhsTileBytes);
      hopper::WgmmaFence();
#pragma unroll
      for (int step = 0; step < kBlockK / kWgmmaK; ++step) {
        constexpr uint64_t kStepDescriptorUnits = kWgmmaK / 16;  // descriptors count 16 bytes
        Wgmma::Run(partial, a + step * kStepDescriptorUnits, b + step * kStepDescriptorUnits,
                   step > 0);
      }
      hopper::WgmmaCommitGroup();
      hopper::WgmmaWaitGroup<0>();
      if (lane == 0) hopper::BarrierArrive(&empty[stage]);
      if (++stage == kStages) stage = 0, phase ^= 1;

      const float promote0 = __fmul_rn(scale0, scale_b), promote1 = __fmul_rn(scale1, scale_b);
#pragma unroll
      for (int i = 0; i < kRegisters; ++i) {
        acc[i] = __fadd_rn(acc[i], __fmul_rn(partial[i], i % 4 < 2 ? promote0 : promote1));
      }
    }

    const int col0 = origin.col + 2 * (lane % 4);
#pragma unroll
    for (int j = 0; j < kRegisters / 4; ++j) {
      const int col = col0 + 8 * j;
      if (col >= args.n) continue;
      const bool has_second = col + 1 < args.n;
      if (has_row0) {
        StorePair(output + row0 * args.output_ld + col, acc[4 * j], acc[4 * j + 1], has_second,
                  args.paired_stores);
      }
      if (has_row1) {
        StorePair(output + row1 * args.output_ld + col, acc[4 * j + 2], acc[4 * j + 3], has_second,
                  args.paired_stores);
      }
    }
  }
#endif
}

// ---- Host side
// -----------------------------------------------------------------------------------

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

// A 2-D map over an FP8 operand [rows][k] (rows `row_bytes` apart) whose box is one stage's
// tile: 128 bytes of K by `box_rows` rows, 128-byte swizzled for wgmma.
StatusOr<CUtensorMap> OperandMap(const char* name, const void* data, int64_t rows, int64_t k,
                                 int64_t row_bytes, int box_rows, const std::string& context) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = TensorMapEncoder();
  if (encode == nullptr) {
    return Internal("own GEMM: the driver has no cuTensorMapEncodeTiled [%s]", context.c_str());
  }
  CUtensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(k), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(row_bytes)};
  const cuuint32_t box[2] = {kBlockK, static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult result =
      encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<void*>(data), dims, strides, box,
             element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    return Internal("own GEMM: cuTensorMapEncodeTiled failed (%d) for %s [%s]",
                    static_cast<int>(result), name, context.c_str());
  }
  return map;
}

template <int kBlockM, int kBlockN, WgmmaLhs kLhs, typename Out>
Status Launch(const BlockScaledGemmParams& p, cudaStream_t stream, const std::string& context) {
  using Shape = TileShape<kBlockM, kBlockN>;
  auto kernel = block_scaled_gemm_kernel<kBlockM, kBlockN, kLhs, Out>;
  // Raising the kernel's shared-memory limit is a host-side attribute: done once per kernel.
  static const cudaError_t attribute = cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Shape::kSharedBytes);
  FP8_CUDA_RETURN_IF_ERROR(attribute, context);

  FP8_ASSIGN_OR_RETURN(const CUtensorMap lhs_map,
                       OperandMap("lhs", p.lhs, p.m, p.k, p.lhs_row_bytes, kBlockM, context));
  FP8_ASSIGN_OR_RETURN(const CUtensorMap rhs_map,
                       OperandMap("rhs", p.rhs, p.n, p.k, p.rhs_row_bytes, kBlockN, context));
  KernelArgs args{};
  args.m = static_cast<int>(p.m);
  args.n = static_cast<int>(p.n);
  args.k_blocks = static_cast<int>((p.k + kBlockK - 1) / kBlockK);
  args.tile_rows = static_cast<int>((p.m + kBlockM - 1) / kBlockM);
  args.tile_cols = static_cast<int>((p.n + kBlockN - 1) / kBlockN);
  args.lhs_scale = p.lhs_scale;
  args.lhs_scale_row_stride = p.lhs_scale_row_stride;
  args.lhs_scale_block_stride = p.lhs_scale_block_stride;
  args.rhs_scale = p.rhs_scale;
  args.rhs_scale_row_stride = p.rhs_scale_row_stride;
  args.rhs_scale_block_stride = p.rhs_scale_block_stride;
  args.output = p.output;
  args.output_ld = p.output_ld;
  args.paired_stores =
      p.output_ld % 2 == 0 && reinterpret_cast<uintptr_t>(p.output) % (2 * sizeof(Out)) == 0;
  const int tiles = args.tile_rows * args.tile_cols;
  const int grid = std::max(1, std::min(tiles, p.sm_count));
  kernel<<<grid, Shape::kThreads, Shape::kSharedBytes, stream>>>(lhs_map, rhs_map, args);
  FP8_CUDA_RETURN_IF_LAUNCH_FAILED("block_scaled_gemm_kernel", context);
  return OkStatus();
}

template <WgmmaLhs kLhs, typename Out>
Status LaunchForTile(const BlockScaledGemmParams& p, cudaStream_t stream,
                     const std::string& context) {
  const BlockScaledGemmTile& t = p.tile;
  if (t.block_m == 128 && t.block_n == 128) return Launch<128, 128, kLhs, Out>(p, stream, context);
  if (t.block_m == 128 && t.block_n == 64) return Launch<128, 64, kLhs, Out>(p, stream, context);
  if (t.block_m == 128 && t.block_n == 32) return Launch<128, 32, kLhs, Out>(p, stream, context);
  if (t.block_m == 64 && t.block_n == 128) return Launch<64, 128, kLhs, Out>(p, stream, context);
  if (t.block_m == 64 && t.block_n == 64) return Launch<64, 64, kLhs, Out>(p, stream, context);
  if (t.block_m == 64 && t.block_n == 32) return Launch<64, 32, kLhs, Out>(p, stream, context);
  return Internal("own GEMM: no kernel for tile %s [%s]", t.ToString().c_str(), context.c_str());
}

template <WgmmaLhs kLhs>
Status LaunchForLhs(const BlockScaledGemmParams& p, cudaStream_t stream,
                    const std::string& context) {
  if (p.output_type == DType::kBF16) return LaunchForTile<kLhs, __nv_bfloat16>(p, stream, context);
  return LaunchForTile<kLhs, float>(p, stream, context);
}

}  // namespace

std::string BlockScaledGemmTile::ToString() const {
  return std::to_string(block_m) + "x" + std::to_string(block_n);
}

std::vector<BlockScaledGemmTile> BlockScaledGemmTiles() {
  return {{128, 128}, {128, 64}, {128, 32}, {64, 128}, {64, 64}, {64, 32}};
}

BlockScaledGemmTile ChooseBlockScaledGemmTile(int64_t m, int64_t n, int64_t k, int sm_count) {
  (void)k;  // every tile walks all of K; only the tile count and per-tile cost differ
  BlockScaledGemmTile best;
  double best_cost = INFINITY;
  for (const BlockScaledGemmTile& tile : BlockScaledGemmTiles()) {
    const int64_t tiles =
        ((m + tile.block_m - 1) / tile.block_m) * ((n + tile.block_n - 1) / tile.block_n);
    const int64_t waves = (tiles + sm_count - 1) / std::max(sm_count, 1);
    // Per K-block on one SM: the tensor cores do 2 * 128 * block_m * block_n flops at ~8192
    // per clock; the operands are (block_m + block_n) * 128 bytes at ~64 bytes per clock from
    // L2. A tile costs whichever is larger.
    const double mma = 2.0 * kBlockK * tile.block_m * tile.block_n / 8192.0;
    const double bytes = (tile.block_m + tile.block_n) * kBlockK / 64.0;
    const double cost = static_cast<double>(waves) * std::max(mma, bytes);
    if (cost < best_cost) best_cost = cost, best = tile;
  }
  return best;
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
  return "";
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
