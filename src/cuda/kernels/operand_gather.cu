// The gather kernel (see operand_gather.h) and its launcher.
#include <cuda_fp8.h>

#include "cuda/cuda_status.h"
#include "cuda/kernels/operand_gather.h"

namespace fp8dot::cuda {
namespace {

// ---- Tile sizes ------------------------------------------------------------------------------
constexpr int kTile = 32;        // a 32x32 tile of (row, col) per iteration of a block
constexpr int kBlockRows = 8;    // blockDim = (32, 8): each thread moves 4 elements per phase
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
// Grid-stride over tiles: x over column tiles, y over row tiles, z over batch entries.
template <typename In, typename Out, GatherConversion kConversion>
__global__ void gather_kernel(const GatherParams p) {
  __shared__ Out tile[kTile][kTile + 1];  // (row, col); +1 keeps the transposed reads off one bank
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
        for (int j = threadIdx.y; j < kTile; j += kBlockRows) {
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
        for (int j = threadIdx.y; j < kTile; j += kBlockRows) {
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

// ---- Launcher --------------------------------------------------------------------------------
template <typename In, typename Out, GatherConversion kConversion>
Status Launch(const GatherParams& p, cudaStream_t stream, const std::string& context) {
  constexpr int64_t kMaxGridYZ = 65535;
  const int64_t row_tiles = (p.rows_padded + kTile - 1) / kTile;
  const int64_t col_tiles = (p.cols_padded + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(col_tiles, 1 << 20)),
                  static_cast<unsigned>(std::min(row_tiles, kMaxGridYZ)),
                  static_cast<unsigned>(std::min(p.batch, kMaxGridYZ)));
  gather_kernel<In, Out, kConversion><<<grid, dim3(kTile, kBlockRows), 0, stream>>>(p);
  FP8_CUDA_RETURN_IF_LAUNCH_FAILED("gather_kernel", context);
  return OkStatus();
}

}  // namespace

Status LaunchGather(const GatherParams& p, cudaStream_t stream, const std::string& context) {
  if (p.source == nullptr || p.dest == nullptr ||
      (!p.affine && (p.batch_offsets == nullptr || p.row_offsets == nullptr ||
                     p.col_offsets == nullptr))) {
    return Internal("gather: null pointer [%s]", context.c_str());
  }
  if (p.batch <= 0 || p.rows <= 0 || p.cols <= 0 || p.rows_padded < p.rows ||
      p.cols_padded < p.cols) {
    return Internal("gather: bad extents batch=%lld rows=%lld/%lld cols=%lld/%lld [%s]",
                    static_cast<long long>(p.batch), static_cast<long long>(p.rows),
                    static_cast<long long>(p.rows_padded), static_cast<long long>(p.cols),
                    static_cast<long long>(p.cols_padded), context.c_str());
  }
  switch (p.conversion) {
    case GatherConversion::kCopy:
      switch (DTypeSizeInBytes(p.source_type)) {
        case 1:
          return Launch<uint8_t, uint8_t, GatherConversion::kCopy>(p, stream, context);
        case 2:
          return Launch<uint16_t, uint16_t, GatherConversion::kCopy>(p, stream, context);
        case 4:
          return Launch<uint32_t, uint32_t, GatherConversion::kCopy>(p, stream, context);
        case 8:
          return Launch<uint64_t, uint64_t, GatherConversion::kCopy>(p, stream, context);
        default:
          break;
      }
      break;
    case GatherConversion::kE5M2ToF16:
      if (p.source_type != DType::kF8E5M2) break;
      return Launch<uint8_t, uint16_t, GatherConversion::kE5M2ToF16>(p, stream, context);
    case GatherConversion::kFp8ToF32Scaled:
      if (!IsFp8(p.source_type) || p.scale == nullptr) break;
      return Launch<uint8_t, float, GatherConversion::kFp8ToF32Scaled>(p, stream, context);
  }
  return Internal("gather: unsupported conversion from %s [%s]", DTypeName(p.source_type),
                  context.c_str());
}

}  // namespace fp8dot::cuda
