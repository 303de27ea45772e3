// The quantisation kernels (quantize.h) and their launchers.
//
// Constraints and layout, shared by all three kernels:
//   - one CTA of 256 threads per 128x128 tile of the row-major input [rows, cols];
//   - a thread holds an 8-element row segment in each of 8 passes (16 threads per tile row,
//     16 rows per pass), so a warp reads two whole 128-element rows: 512 contiguous bytes of
//     bf16, loaded as 16-byte vectors when the input allows it;
//   - memory bound: every input byte is read once per kernel and every output byte written
//     once. qᵀ goes through shared memory (the tile as f32, rows padded by one float so the
//     transposed reads hit 32 different banks).
// Numerics are quantize_rule.h's, so the output equals QuantizeOnCpu bit for bit.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <climits>

#include "cuda/cuda_status.h"
#include "cuda/kernels/quantize.h"
#include "dot/quantize_rule.h"

namespace fp8dot::cuda {
namespace {

using quantize_rule::FloatFromBits;
using quantize_rule::MagnitudeBits;
using quantize_rule::ScaledForCast;
using quantize_rule::ScaleFromAmax;

constexpr int kTile = 128;
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kVector = 8;                                // elements per row segment
constexpr int kSegmentsPerRow = kTile / kVector;          // 16 threads per tile row
constexpr int kRowsPerPass = kThreads / kSegmentsPerRow;  // 16
constexpr int kPasses = kTile / kRowsPerPass;             // 8
constexpr int kStagedStride = kTile + 1;
constexpr size_t kStagedBytes = sizeof(float) * kTile * kStagedStride;

__device__ inline float ToFloat(float v) { return v; }
__device__ inline float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ inline float ToFloat(__half v) { return __half2float(v); }

// Where a thread's data sits in its tile.
struct TileCoordinates {
  int64_t tile_row, tile_col, row_tiles, col_tiles;
  int64_t row0, col0;  // the tile's first element
  int segment_col;     // the thread's first column inside the tile
  int pass_row;        // the thread's row inside each pass

  __device__ TileCoordinates(int64_t rows, int64_t cols) {
    row_tiles = (rows + kTile - 1) / kTile;
    col_tiles = (cols + kTile - 1) / kTile;
    tile_row = blockIdx.x / col_tiles;
    tile_col = blockIdx.x % col_tiles;
    row0 = tile_row * kTile;
    col0 = tile_col * kTile;
    segment_col = (threadIdx.x % kSegmentsPerRow) * kVector;
    pass_row = threadIdx.x / kSegmentsPerRow;
  }
  __device__ int64_t Row(int pass) const { return row0 + pass * kRowsPerPass + pass_row; }
};

// The thread's 8 passes x 8 elements as f32; elements outside the matrix are 0, which changes
// no amax and is never stored.
template <typename T>
__device__ void LoadTile(const T* input, int64_t rows, int64_t cols, bool vector,
                         const TileCoordinates& at, float (&v)[kPasses][kVector]) {
  const int64_t c0 = at.col0 + at.segment_col;
#pragma unroll
  for (int pass = 0; pass < kPasses; ++pass) {
    const int64_t r = at.Row(pass);
    const T* source = input + r * cols + c0;
    if (vector && r < rows && c0 < cols) {
      if constexpr (sizeof(T) == 2) {
        const uint4 raw = __ldg(reinterpret_cast<const uint4*>(source));
        const T* elements = reinterpret_cast<const T*>(&raw);
#pragma unroll
        for (int j = 0; j < kVector; ++j) v[pass][j] = ToFloat(elements[j]);
      } else {
        const float4 low = __ldg(reinterpret_cast<const float4*>(source));
        const float4 high = __ldg(reinterpret_cast<const float4*>(source) + 1);
        v[pass][0] = low.x, v[pass][1] = low.y, v[pass][2] = low.z, v[pass][3] = low.w;
        v[pass][4] = high.x, v[pass][5] = high.y, v[pass][6] = high.z, v[pass][7] = high.w;
      }
    } else {
#pragma unroll
      for (int j = 0; j < kVector; ++j) {
        v[pass][j] = r < rows && c0 + j < cols ? ToFloat(source[j]) : 0.0f;
      }
    }
  }
}

// The magnitude-bit maxima a thread sees: per pass (its row segment) and per column.
struct ThreadAmax {
  unsigned row[kPasses];
  unsigned column[kVector];
  unsigned all;

  __device__ explicit ThreadAmax(const float (&v)[kPasses][kVector]) {
    all = 0;
#pragma unroll
    for (int j = 0; j < kVector; ++j) column[j] = 0;
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
      row[pass] = 0;
#pragma unroll
      for (int j = 0; j < kVector; ++j) {
        const unsigned bits = MagnitudeBits(v[pass][j]);
        row[pass] = max(row[pass], bits);
        column[j] = max(column[j], bits);
      }
      all = max(all, row[pass]);
    }
  }

  // Each row's max over the 16 threads that share it (the lanes of one half-warp).
  __device__ void ReduceRows() {
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
#pragma unroll
      for (int offset = kSegmentsPerRow / 2; offset > 0; offset /= 2) {
        row[pass] = max(row[pass], __shfl_xor_sync(0xffffffffu, row[pass], offset));
      }
    }
  }
};

// The max over the CTA, returned to every thread. Contains a barrier: call it from all threads.
__device__ unsigned BlockMax(unsigned value, unsigned* warp_max) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    value = max(value, __shfl_xor_sync(0xffffffffu, value, offset));
  }
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = value;
  __syncthreads();
  unsigned result = 0;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) result = max(result, warp_max[w]);
  return result;
}

// Each tile column's max into column_max[kTile] (shared). Contains barriers.
__device__ void ColumnMax(const ThreadAmax& amax, int segment_col, unsigned* column_max) {
  if (threadIdx.x < kTile) column_max[threadIdx.x] = 0;
  __syncthreads();
#pragma unroll
  for (int j = 0; j < kVector; ++j) atomicMax(&column_max[segment_col + j], amax.column[j]);
  __syncthreads();
}

// 8 values cast to FP8 with one scale, packed little-endian into 8 bytes.
template <__nv_fp8_interpretation_t kFormat>
__device__ uint64_t CastEight(const float (&v)[kVector], float scale) {
  uint64_t packed = 0;
#pragma unroll
  for (int j = 0; j < kVector; j += 2) {
    const float2 pair = make_float2(ScaledForCast(v[j], scale), ScaledForCast(v[j + 1], scale));
    const uint64_t bytes = __nv_cvt_float2_to_fp8x2(pair, __NV_SATFINITE, kFormat);
    packed |= bytes << (8 * j);
  }
  return packed;
}

// Stores 8 FP8 bytes at `destination` (valid = how many of them lie inside the matrix).
__device__ void StoreEight(uint8_t* destination, uint64_t packed, int valid, bool vector) {
  if (vector && valid >= kVector) {
    *reinterpret_cast<uint64_t*>(destination) = packed;
    return;
  }
  for (int j = 0; j < kVector && j < valid; ++j) destination[j] = (packed >> (8 * j)) & 0xff;
}

template <typename T, __nv_fp8_interpretation_t kFormat>
__global__ void __launch_bounds__(kThreads) quantize_cast_kernel(const QuantizeCastParams p) {
  extern __shared__ float staged[];  // [kTile][kStagedStride], only when qᵀ is written
  __shared__ unsigned warp_max[kWarps];
  __shared__ unsigned column_max[kTile];

  const TileCoordinates at(p.rows, p.cols);
  float v[kPasses][kVector];
  LoadTile(static_cast<const T*>(p.input), p.rows, p.cols, p.vector_input, at, v);
  ThreadAmax amax(v);

  // The amaxes this tile needs: 1x128 rows, 128x128 and the tensor's (the whole CTA), and the
  // columns for 1x128 scales of qᵀ.
  if (p.granularity == ScaleGranularity::k1x128) amax.ReduceRows();
  unsigned tile_max = 0;
  if (p.granularity == ScaleGranularity::k128x128 || p.amax_bits != nullptr) {
    tile_max = BlockMax(amax.all, warp_max);
  }
  if (p.amax_bits != nullptr && threadIdx.x == 0) atomicMax(p.amax_bits, tile_max);
  const bool transposed = p.transposed_output != nullptr;
  if (transposed && p.granularity == ScaleGranularity::k1x128) {
    ColumnMax(amax, at.segment_col, column_max);
  }
  const float tile_scale = ScaleFromAmax(FloatFromBits(tile_max), p.margin_factor, p.type_max);
  if (p.granularity == ScaleGranularity::k128x128 && threadIdx.x == 0) {
    p.block_scale[at.tile_row * at.col_tiles + at.tile_col] = tile_scale;
  }

  // q: each thread casts and stores its own segments.
  const int64_t c0 = at.col0 + at.segment_col;
#pragma unroll
  for (int pass = 0; pass < kPasses; ++pass) {
    const int64_t r = at.Row(pass);
    float scale = tile_scale;
    if (p.granularity == ScaleGranularity::kTensor) scale = __ldg(p.scale);
    if (p.granularity == ScaleGranularity::kRow) scale = r < p.rows ? __ldg(p.scale + r) : 1.0f;
    if (p.granularity == ScaleGranularity::k1x128) {
      scale = ScaleFromAmax(FloatFromBits(amax.row[pass]), p.margin_factor, p.type_max);
      if (at.segment_col == 0 && r < p.rows) {
        p.block_scale[r * at.col_tiles + at.tile_col] = scale;
      }
    }
    if (p.output != nullptr && r < p.rows && c0 < p.cols) {
      StoreEight(static_cast<uint8_t*>(p.output) + r * p.cols + c0,
                 CastEight<kFormat>(v[pass], scale), static_cast<int>(p.cols - c0),
                 p.vector_output);
    }
    if (transposed) {
#pragma unroll
      for (int j = 0; j < kVector; ++j) {
        staged[(pass * kRowsPerPass + at.pass_row) * kStagedStride + at.segment_col + j] =
            v[pass][j];
      }
    }
  }
  if (!transposed) return;
  __syncthreads();

  // qᵀ: a warp step covers 8 tile columns x 4 row octets; lane l reads column l % 8 of the
  // octet l / 8, so the 32 lanes' shared-memory reads fall in 32 different banks and each
  // column's 4 octets make one 32-byte store.
  if (p.granularity == ScaleGranularity::k1x128 && threadIdx.x < kTile &&
      at.col0 + threadIdx.x < p.cols) {
    p.transposed_block_scale[(at.col0 + threadIdx.x) * at.row_tiles + at.tile_row] =
        ScaleFromAmax(FloatFromBits(column_max[threadIdx.x]), p.margin_factor, p.type_max);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  constexpr int kColumnOctets = kTile / 8, kRowOctetQuads = kTile / 8 / 4;
#pragma unroll
  for (int step = warp; step < kColumnOctets * kRowOctetQuads; step += kWarps) {
    const int tile_column = (step % kColumnOctets) * 8 + lane % 8;
    const int row_octet = (step / kColumnOctets) * 4 + lane / 8;
    const int64_t out_row = at.col0 + tile_column;
    const int64_t out_col = at.row0 + row_octet * 8;
    if (out_row >= p.cols || out_col >= p.rows) continue;
    float scale = tile_scale;
    if (p.granularity == ScaleGranularity::kTensor) scale = __ldg(p.scale);
    if (p.granularity == ScaleGranularity::kRow) scale = __ldg(p.transposed_scale + out_row);
    if (p.granularity == ScaleGranularity::k1x128) {
      scale = ScaleFromAmax(FloatFromBits(column_max[tile_column]), p.margin_factor, p.type_max);
    }
    float column[kVector];
#pragma unroll
    for (int i = 0; i < kVector; ++i) {
      column[i] = staged[(row_octet * 8 + i) * kStagedStride + tile_column];
    }
    StoreEight(static_cast<uint8_t*>(p.transposed_output) + out_row * p.rows + out_col,
               CastEight<kFormat>(column, scale), static_cast<int>(p.rows - out_col),
               p.vector_transposed_output);
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) amax_kernel(const AmaxParams p) {
  __shared__ unsigned warp_max[kWarps];
  __shared__ unsigned column_max[kTile];

  const TileCoordinates at(p.rows, p.cols);
  float v[kPasses][kVector];
  LoadTile(static_cast<const T*>(p.input), p.rows, p.cols, p.vector_input, at, v);
  ThreadAmax amax(v);

  if (p.tensor_bits != nullptr) {
    const unsigned tile_max = BlockMax(amax.all, warp_max);
    if (threadIdx.x == 0) atomicMax(p.tensor_bits, tile_max);
  }
  if (p.row_bits != nullptr) {
    amax.ReduceRows();
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
      const int64_t r = at.Row(pass);
      if (at.segment_col == 0 && r < p.rows) atomicMax(p.row_bits + r, amax.row[pass]);
    }
  }
  if (p.column_bits != nullptr) {
    ColumnMax(amax, at.segment_col, column_max);
    if (threadIdx.x < kTile && at.col0 + threadIdx.x < p.cols) {
      atomicMax(p.column_bits + at.col0 + threadIdx.x, column_max[threadIdx.x]);
    }
  }
}

__global__ void scales_from_amax_kernel(float* first, int64_t first_count, float* second,
                                        int64_t second_count, float margin_factor, float type_max) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < first_count + second_count;
       i += int64_t{gridDim.x} * blockDim.x) {
    float* value = i < first_count ? first + i : second + (i - first_count);
    *value = ScaleFromAmax(*value, margin_factor, type_max);
  }
}

StatusOr<int> TileCount(int64_t rows, int64_t cols, const std::string& context) {
  const int64_t tiles = ((rows + kTile - 1) / kTile) * ((cols + kTile - 1) / kTile);
  if (tiles > INT_MAX) {
    return InvalidArgument("quantize: %lldx%lld needs %lld tiles, more than one launch holds [%s]",
                           static_cast<long long>(rows), static_cast<long long>(cols),
                           static_cast<long long>(tiles), context.c_str());
  }
  return static_cast<int>(tiles);
}

template <typename T, __nv_fp8_interpretation_t kFormat>
Status LaunchCast(const QuantizeCastParams& p, int tiles, cudaStream_t stream,
                  const std::string& context) {
  const bool transposed = p.transposed_output != nullptr;
  const size_t shared_bytes = transposed ? kStagedBytes : 0;
  if (transposed) {
    FP8_CUDA_RETURN_IF_ERROR(
        cudaFuncSetAttribute(quantize_cast_kernel<T, kFormat>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize, int{kStagedBytes}),
        context);
  }
  quantize_cast_kernel<T, kFormat><<<tiles, kThreads, shared_bytes, stream>>>(p);
  FP8_CUDA_RETURN_IF_LAUNCH_FAILED("quantize_cast_kernel", context);
  return OkStatus();
}

template <typename T>
Status LaunchCastForOutput(const QuantizeCastParams& p, int tiles, cudaStream_t stream,
                           const std::string& context) {
  return p.output_type == DType::kF8E4M3FN ? LaunchCast<T, __NV_E4M3>(p, tiles, stream, context)
                                           : LaunchCast<T, __NV_E5M2>(p, tiles, stream, context);
}

}  // namespace

Status LaunchQuantizeCast(const QuantizeCastParams& p, cudaStream_t stream,
                          const std::string& context) {
  FP8_ASSIGN_OR_RETURN(int tiles, TileCount(p.rows, p.cols, context));
  switch (p.input_type) {
    case DType::kF32:
      return LaunchCastForOutput<float>(p, tiles, stream, context);
    case DType::kBF16:
      return LaunchCastForOutput<__nv_bfloat16>(p, tiles, stream, context);
    case DType::kF16:
      return LaunchCastForOutput<__half>(p, tiles, stream, context);
    default:
      return Internal("quantize: input type %s [%s]", DTypeName(p.input_type), context.c_str());
  }
}

Status LaunchAmax(const AmaxParams& p, cudaStream_t stream, const std::string& context) {
  FP8_ASSIGN_OR_RETURN(int tiles, TileCount(p.rows, p.cols, context));
  switch (p.input_type) {
    case DType::kF32:
      amax_kernel<float><<<tiles, kThreads, 0, stream>>>(p);
      break;
    case DType::kBF16:
      amax_kernel<__nv_bfloat16><<<tiles, kThreads, 0, stream>>>(p);
      break;
    case DType::kF16:
      amax_kernel<__half><<<tiles, kThreads, 0, stream>>>(p);
      break;
    default:
      return Internal("amax: input type %s [%s]", DTypeName(p.input_type), context.c_str());
  }
  FP8_CUDA_RETURN_IF_LAUNCH_FAILED("amax_kernel", context);
  return OkStatus();
}

Status LaunchScalesFromAmax(float* first, int64_t first_count, float* second, int64_t second_count,
                            float margin_factor, float type_max, cudaStream_t stream,
                            const std::string& context) {
  const int64_t total = first_count + second_count;
  const int blocks = static_cast<int>(std::min<int64_t>((total + kThreads - 1) / kThreads, 1024));
  scales_from_amax_kernel<<<blocks, kThreads, 0, stream>>>(first, first_count, second, second_count,
                                                           margin_factor, type_max);
  FP8_CUDA_RETURN_IF_LAUNCH_FAILED("scales_from_amax_kernel", context);
  return OkStatus();
}

}  // namespace fp8dot::cuda
