// The gather kernel (see operand_gather.h) and its launcher.
#include <cuda_fp8.h>

#include "cuda/cuda_status.h"
#include "cuda/kernels/operand_gather.h"

namespace fp8dot::cuda {
namespace {

// ---- Tile sizes ------------------------------------------------------------------------------
constexpr int kTile = 32;      // a 32x32 tile of (row, col) per iteration of a block
constexpr int kBlockRows = 8;  // blockDim = (32, 8): each thread moves 4 elements per phase
static_assert(kTile % kBlockRows == 0, "the block must cover the tile in whole passes");

constexpr int64_t kScaleBlockK = 128;

__device__ inline float DecodeFp8(uint8_t bits, bool e4m3) {
  const __half_raw h = __nv_cvt_fp8_to_halfraw(bits, e4m3 ? __NV_E4M3 : __NV_E5M2);
  return __half2float(__half(h));
}

template <typename In, typename Out, GatherConversion kConversion>
__device__ inline Out Convert(In value, const GatherParams& p, int64_t r, int64_t c) {
  if constexpr (kConversion == GatherConversion::kCopy) {
    return value;
  } else if constexpr (kConversion == GatherConversion::kE5M2ToF16) {
    return static_cast<Out>(static_cast<uint16_t>(value) << 8);
  } else {
    const float scale = p.scale[(r / p.scale_row_block) * p.scale_row_stride +
                                (c / kScaleBlockK) * p.scale_block_stride];
    return DecodeFp8(value, p.source_type == DType::kF8E4M3FN) * scale;
  }
}

// ---- Kernel ----------------------------------------------------------------------------------
// Up to two gathers of the same types in one launch (the lhs and the rhs): at small sizes the
// launch, not the copy, is the cost.
constexpr int kMaxJobs = 2;
static_assert(kMaxJobs == 2, "gather_kernel picks its job with job == 0 ? job[0] : job[1]");
struct GatherJobs {
  GatherParams job[kMaxJobs];
  int count;
};

// Grid-stride over tiles: x over column tiles, y over row tiles, z over batch entries; the jobs
// one after the other.
template <typename In, typename Out, GatherConversion kConversion>
__global__ void gather_kernel(const GatherJobs jobs) {
  __shared__ Out tile[kTile][kTile + 1];  // (row, col); +1 keeps the transposed reads off one bank
  for (int job = 0; job < jobs.count; ++job) {
    // A static index keeps the parameters in the constant bank (a dynamic one copies the
    // whole array to local memory).
    const GatherParams& p = job == 0 ? jobs.job[0] : jobs.job[1];
    const In* source = static_cast<const In*>(p.source);
    Out* dest = static_cast<Out*>(p.dest);
    const int64_t row_tiles = (p.rows_padded + kTile - 1) / kTile;
    const int64_t col_tiles = (p.cols_padded + kTile - 1) / kTile;
    for (int64_t b = blockIdx.z; b < p.batch; b += gridDim.z) {
      const int64_t base = p.affine ? b * p.batch_stride : p.batch_offsets[b];
      for (int64_t tr = blockIdx.y; tr < row_tiles; tr += gridDim.y) {
        for (int64_t tc = blockIdx.x; tc < col_tiles; tc += gridDim.x) {
          const int64_t r0 = tr * kTile, c0 = tc * kTile;
          // Phase 1: load, with threadIdx.x along the source's contiguous direction.
#pragma unroll
          for (int pass = 0; pass < kTile / kBlockRows; ++pass) {
            const int j = threadIdx.y + pass * kBlockRows;
            const int local_r = p.read_rows_fastest ? threadIdx.x : j;
            const int local_c = p.read_rows_fastest ? j : threadIdx.x;
            const int64_t r = r0 + local_r, c = c0 + local_c;
            Out value = Out(0);
            if (r < p.rows && c < p.cols) {
              const int64_t offset = p.affine ? r * p.row_stride + c * p.col_stride
                                              : p.row_offsets[r] + p.col_offsets[c];
              value = Convert<In, Out, kConversion>(source[base + offset], p, r, c);
            }
            tile[local_r][local_c] = value;
          }
          __syncthreads();
          // Phase 2: store, threadIdx.x along the destination's columns (coalesced).
#pragma unroll
          for (int pass = 0; pass < kTile / kBlockRows; ++pass) {
            const int j = threadIdx.y + pass * kBlockRows;
            const int64_t r = r0 + j, c = c0 + threadIdx.x;
            if (r < p.rows_padded && c < p.cols_padded) {
              dest[(b * p.rows_padded + r) * p.cols_padded + c] = tile[j][threadIdx.x];
            }
          }
          __syncthreads();
        }
      }
    }
  }
}

// ---- Launcher --------------------------------------------------------------------------------
template <typename In, typename Out, GatherConversion kConversion>
Status Launch(const GatherJobs& jobs, cudaStream_t stream, const std::string& context) {
  constexpr int64_t kMaxGridYZ = 65535;
  int64_t row_tiles = 1, col_tiles = 1, batch = 1;
  for (int j = 0; j < jobs.count; ++j) {
    row_tiles = std::max(row_tiles, (jobs.job[j].rows_padded + kTile - 1) / kTile);
    col_tiles = std::max(col_tiles, (jobs.job[j].cols_padded + kTile - 1) / kTile);
    batch = std::max(batch, jobs.job[j].batch);
  }
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(col_tiles, 1 << 20)),
                  static_cast<unsigned>(std::min(row_tiles, kMaxGridYZ)),
                  static_cast<unsigned>(std::min(batch, kMaxGridYZ)));
  gather_kernel<In, Out, kConversion><<<grid, dim3(kTile, kBlockRows), 0, stream>>>(jobs);
  FP8_CUDA_RETURN_IF_LAUNCH_FAILED("gather_kernel", context);
  return OkStatus();
}

Status CheckParams(const GatherParams& p, const std::string& context) {
  if (p.source == nullptr || p.dest == nullptr ||
      (!p.affine &&
       (p.batch_offsets == nullptr || p.row_offsets == nullptr || p.col_offsets == nullptr))) {
    return Internal("gather: null pointer [%s]", context.c_str());
  }
  if (p.batch <= 0 || p.rows <= 0 || p.cols <= 0 || p.rows_padded < p.rows ||
      p.cols_padded < p.cols) {
    return Internal("gather: bad extents batch=%lld rows=%lld/%lld cols=%lld/%lld [%s]",
                    static_cast<long long>(p.batch), static_cast<long long>(p.rows),
                    static_cast<long long>(p.rows_padded), static_cast<long long>(p.cols),
                    static_cast<long long>(p.cols_padded), context.c_str());
  }
  return OkStatus();
}

}  // namespace

Status LaunchGathers(const GatherParams* params, int count, cudaStream_t stream,
                     const std::string& context) {
  if (count <= 0) return OkStatus();
  if (count > kMaxJobs) return Internal("gather: %d jobs [%s]", count, context.c_str());
  GatherJobs jobs{};
  jobs.count = count;
  for (int j = 0; j < count; ++j) {
    FP8_RETURN_IF_ERROR(CheckParams(params[j], context));
    if (params[j].conversion != params[0].conversion ||
        DTypeSizeInBytes(params[j].source_type) != DTypeSizeInBytes(params[0].source_type)) {
      return Internal("gather: jobs of one launch must share their types [%s]", context.c_str());
    }
    jobs.job[j] = params[j];
  }
  const GatherParams& p = params[0];
  switch (p.conversion) {
    case GatherConversion::kCopy:
      switch (DTypeSizeInBytes(p.source_type)) {
        case 1:
          return Launch<uint8_t, uint8_t, GatherConversion::kCopy>(jobs, stream, context);
        case 2:
          return Launch<uint16_t, uint16_t, GatherConversion::kCopy>(jobs, stream, context);
        case 4:
          return Launch<uint32_t, uint32_t, GatherConversion::kCopy>(jobs, stream, context);
        case 8:
          return Launch<uint64_t, uint64_t, GatherConversion::kCopy>(jobs, stream, context);
        default:
          break;
      }
      break;
    case GatherConversion::kE5M2ToF16:
      if (p.source_type != DType::kF8E5M2) break;
      return Launch<uint8_t, uint16_t, GatherConversion::kE5M2ToF16>(jobs, stream, context);
    case GatherConversion::kFp8ToF32Scaled:
      for (int j = 0; j < count; ++j) {
        if (!IsFp8(params[j].source_type) || params[j].scale == nullptr) {
          return Internal("gather: FP8 upcast needs FP8 data and a scale [%s]", context.c_str());
        }
      }
      return Launch<uint8_t, float, GatherConversion::kFp8ToF32Scaled>(jobs, stream, context);
  }
  return Internal("gather: unsupported conversion from %s [%s]", DTypeName(p.source_type),
                  context.c_str());
}

Status LaunchGather(const GatherParams& params, cudaStream_t stream, const std::string& context) {
  return LaunchGathers(&params, 1, stream, context);
}

}  // namespace fp8dot::cuda
