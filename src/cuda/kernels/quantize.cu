// The quantisation kernels (quantize.h) and their launchers.
//
// The cast kernel, which does the work, is memory bound and is written for it:
//   - persistent: a grid of (SMs x CTAs per SM) CTAs of 256 threads walks the 128x128 tiles of
//     the row-major input [rows, cols];
//   - loads always in flight: for 2-byte inputs each CTA double-buffers (cp.async brings the
//     next tile into shared memory while it works on one); for f32, three single-buffered CTAs
//     per SM overlap one another;
//   - each tile is read from shared memory at most three times (block scales' amaxes, q, qᵀ),
//     never again from HBM; the tensor's amax is taken from what the cast reads anyway; its
//     16-byte chunks are XOR-swizzled by row octet so that both the row reads (q) and the
//     column reads (qᵀ) hit 32 different banks;
//   - few instructions per element: the issue slots, not HBM, were the limit (ncu: 70% SM, 51-58%
//     DRAM throughput), so addresses are computed once per tile and stepped, and tile positions
//     use 32-bit division;
//   - a group's scale becomes one reciprocal; each element costs a multiplication and half a
//     paired conversion (quantize_rule.h).
// Numerics are quantize_rule.h's, so the output equals QuantizeOnCpu bit for bit.
//
// With an activation (kSwiGlu: x = SiLU(gate) · up; kGelu: x = GELU(input); activation_rule.h)
// every kernel computes x from its inputs where it would read x, rounds it to the input type as
// the framework would store it, and goes on as with a plain input. The cast stages GELU's input
// as a plain one (cp.async, double-buffered) and applies GELU to each tile in shared memory
// while the next streams in: loaded synchronously into one buffer, the GELU cast took 1.8x the
// plain cast's time (H200, 2026-12-05), the loads, the arithmetic and the quantisation one
// after the other; staged, 1.6x (H100). GELU's exp (~30 instructions an element; the
// hardware's approximate exp would break bit-identity with the CPU) is not all that bounds it:
// with GELU looked up in a 4096-entry shared table instead it was still 1.6x (not applied;
// bench/results/2026-12-05-h100-session34.md). SwiGLU, whose gate and up tiles double-buffered
// would leave one CTA per SM, still loads synchronously into one buffer (LoadActivationTile).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <type_traits>

#include "cuda/cuda_status.h"
#include "cuda/kernels/quantize.h"
#include "dot/activation_rule.h"
#include "dot/quantize_rule.h"

namespace fp8dot::cuda {
namespace {

using quantize_rule::FloatFromBits;
using quantize_rule::InverseScale;
using quantize_rule::IsUsableGivenScale;
using quantize_rule::MagnitudeBits;
using quantize_rule::ResolveGivenScale;
using quantize_rule::ScaledForCast;
using quantize_rule::ScaleFromAmax;

constexpr int kTile = 128;
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kVector = 8;                                // elements per row segment
constexpr int kSegmentsPerRow = kTile / kVector;          // 16 threads per tile row
constexpr int kRowsPerPass = kThreads / kSegmentsPerRow;  // 16
constexpr int kPasses = kTile / kRowsPerPass;             // 8

__device__ inline float ToFloat(float v) { return v; }
__device__ inline float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ inline float ToFloat(__half v) { return __half2float(v); }

// A value rounded to T (to nearest even), as the framework would store it.
template <typename T>
__device__ T FromFloat(float v) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(v);
  } else if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(v);
  } else {
    return v;
  }
}

using Activation = QuantizeActivation;

template <Activation kActivation>
constexpr bool kReadsUp = QuantizeActivationTakesUp(kActivation);

// x in T (activation_rule.h), the element the quantisation reads: from the input (kSwiGlu: the
// gate) and, where kReadsUp, up (ignored otherwise).
template <Activation kActivation, typename T>
__device__ T ActivationElement(T input, T up) {
  if constexpr (kActivation == Activation::kSwiGlu) {
    return FromFloat<T>(activation_rule::SwiGlu(ToFloat(input), ToFloat(up)));
  } else if constexpr (kActivation == Activation::kGelu) {
    return FromFloat<T>(activation_rule::Gelu(ToFloat(input)));
  } else {
    return input;
  }
}

// 16 bytes of x from the same 16 bytes of the input and up.
template <Activation kActivation, typename T>
__device__ uint4 ActivationChunk(uint4 input, uint4 up) {
  constexpr int kPerChunk = 16 / static_cast<int>(sizeof(T));
  uint4 result;
  const T* in = reinterpret_cast<const T*>(&input);
  const T* u = reinterpret_cast<const T*>(&up);
  T* x = reinterpret_cast<T*>(&result);
#pragma unroll
  for (int j = 0; j < kPerChunk; ++j) x[j] = ActivationElement<kActivation>(in[j], u[j]);
  return result;
}

// Element `at` of up, where the activation reads it.
template <Activation kActivation, typename T>
__device__ T UpElement(const T* up, int64_t at) {
  if constexpr (kReadsUp<kActivation>) {
    return up[at];
  } else {
    return T(0.0f);
  }
}
// The 16 bytes of up from element `at` (16-byte aligned), where the activation reads it.
template <Activation kActivation, typename T>
__device__ uint4 UpChunk(const T* up, int64_t at) {
  if constexpr (kReadsUp<kActivation>) {
    return __ldg(reinterpret_cast<const uint4*>(up + at));
  } else {
    return uint4{};
  }
}

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
//
// With an activation, the elements are x (ActivationElement).
template <typename T, Activation kActivation>
__device__ void LoadTile(const T* input, const T* up, int64_t rows, int64_t cols, bool vector,
                         const TileCoordinates& at, float (&v)[kPasses][kVector]) {
  const int64_t c0 = at.col0 + at.segment_col;
#pragma unroll
  for (int pass = 0; pass < kPasses; ++pass) {
    const int64_t r = at.Row(pass);
    const T* source = input + r * cols + c0;
    if (vector && r < rows && c0 < cols) {
      if constexpr (kActivation != Activation::kNone) {
#pragma unroll
        for (int half = 0; half < kVector * static_cast<int>(sizeof(T)) / 16; ++half) {
          constexpr int kPerChunk = 16 / static_cast<int>(sizeof(T));
          const uint4 raw = ActivationChunk<kActivation, T>(
              __ldg(reinterpret_cast<const uint4*>(source) + half),
              UpChunk<kActivation>(up, r * cols + c0 + half * kPerChunk));
          const T* elements = reinterpret_cast<const T*>(&raw);
#pragma unroll
          for (int j = 0; j < kPerChunk; ++j) v[pass][half * kPerChunk + j] = ToFloat(elements[j]);
        }
      } else if constexpr (sizeof(T) == 2) {
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
        v[pass][j] = r < rows && c0 + j < cols
                         ? ToFloat(ActivationElement<kActivation>(
                               source[j], UpElement<kActivation>(up, r * cols + c0 + j)))
                         : 0.0f;
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

// 8 values cast to FP8 with one inverse scale (quantize_rule.h), as 8 bytes little-endian:
// four paired conversions and two byte permutes.
template <__nv_fp8_interpretation_t kFormat>
__device__ uint2 CastEight(const float (&v)[kVector], float inverse) {
  uint32_t pairs[kVector / 2];
#pragma unroll
  for (int j = 0; j < kVector; j += 2) {
    pairs[j / 2] = __nv_cvt_float2_to_fp8x2(
        make_float2(ScaledForCast(v[j], inverse), ScaledForCast(v[j + 1], inverse)), __NV_SATFINITE,
        kFormat);
  }
  return make_uint2(__byte_perm(pairs[0], pairs[1], 0x5410),
                    __byte_perm(pairs[2], pairs[3], 0x5410));
}

// Stores 8 FP8 bytes at `destination` (valid = how many of them lie inside the matrix).
// `streaming`: the bytes are not read again soon (qᵀ waits for the backward pass), so they are
// stored evict-first and leave L2 to the input the cast is still reading.
__device__ void StoreEight(uint8_t* destination, uint2 packed, int64_t valid, bool vector,
                           bool streaming = false) {
  if (vector && valid >= kVector) {
    if (streaming) {
      __stcs(reinterpret_cast<uint2*>(destination), packed);
    } else {
      *reinterpret_cast<uint2*>(destination) = packed;
    }
    return;
  }
  const uint64_t bytes = (uint64_t{packed.y} << 32) | packed.x;
  for (int j = 0; j < kVector && j < valid; ++j) destination[j] = (bytes >> (8 * j)) & 0xff;
}

// A 128x128 tile of T in shared memory: row r, 16-byte chunk k at
//   r * kRowBytes + 16 * (k ^ ((r / 8) % 8)).
// A row's 8 consecutive chunks stay in 8 different bank groups (the q reads), and the same chunk
// of 8 row octets lands in 8 different bank groups (the qᵀ reads).
template <typename T>
struct StagedTile {
  static constexpr int kRowBytes = kTile * static_cast<int>(sizeof(T));  // 256 or 512
  static constexpr int kChunks = kRowBytes / 16;
  static constexpr int kPerChunk = 16 / static_cast<int>(sizeof(T));  // elements per chunk
  static constexpr int kPerWord = 4 / static_cast<int>(sizeof(T));    // elements per 4 bytes
  static constexpr int kBytes = kTile * kRowBytes;
  // 2-byte inputs: two buffers (32 KiB each), the next tile loading while this one is cast, 3
  // CTAs per SM. f32: one 64 KiB buffer, so that 3 CTAs fit on an SM and overlap each other's
  // loads and casts; double-buffered, only one would fit, and its 8 warps could not keep HBM
  // busy (measured: 2.1 TB/s on a 16384x2048 f32 tensor).
  static constexpr int kStages = sizeof(T) == 4 ? 1 : 2;
  // Which chunks of a tile a thread copies (LoadTileAsync's, and so ActivateOwnChunks'): chunk
  // column CopyChunk() of rows CopyFirstRow() + i * kRowsPerCopy. (LoadActivationTile spreads
  // its loads the same way but computes its own: with these calls ptxas spilled its kernels.)
  static constexpr int kRowsPerCopy = kThreads / kChunks;  // 16 (2-byte inputs) or 8 (f32)
  __device__ static int CopyChunk() { return threadIdx.x % kChunks; }
  __device__ static int CopyFirstRow() { return threadIdx.x / kChunks; }

  __device__ static int ChunkOffset(int r, int k) {
    return r * kRowBytes + 16 * (k ^ ((r >> 3) & 7));
  }
  // Element e of a 4-byte word of the tile.
  __device__ static float WordElement(uint32_t word, int e) {
    if constexpr (sizeof(T) == 4) {
      return __uint_as_float(word);
    } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      return __uint_as_float(e == 0 ? word << 16 : word & 0xffff0000u);
    } else {
      return __half2float(__ushort_as_half(static_cast<unsigned short>(word >> (16 * e))));
    }
  }
  // The 8 elements of row r from column c (a multiple of 8).
  __device__ static void Row8(const uint8_t* tile, int r, int c, float (&v)[kVector]) {
#pragma unroll
    for (int half = 0; half < kVector / kPerChunk; ++half) {
      const uint4 raw =
          *reinterpret_cast<const uint4*>(tile + ChunkOffset(r, c / kPerChunk + half));
      const uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
      for (int j = 0; j < kPerChunk; ++j) {
        v[half * kPerChunk + j] = WordElement(words[j / kPerWord], j % kPerWord);
      }
    }
  }
};

// Starts copying tile (row0, col0) of the input into `tile`: 16-byte cp.async copies where the
// input allows them (chunks past the matrix are zero-filled), plain loads otherwise. Elements
// past the matrix are 0, which changes no amax and is never stored.
//
// A thread copies the same chunk column k of every kRowsPerCopy-th row, so its source pointer
// and shared offsets are computed once per tile and stepped (this loop ran 43 instructions per
// 16-byte copy when it divided and multiplied per chunk: a sixth of the kernel's instructions).
template <typename T>
__device__ void LoadTileAsync(const T* input, int64_t rows, int64_t cols, int64_t row0,
                              int64_t col0, bool vector, uint8_t* tile) {
  using Tile = StagedTile<T>;
  constexpr int kRowsPerCopy = Tile::kRowsPerCopy;
  const int k = Tile::CopyChunk(), first_row = Tile::CopyFirstRow();
  const int64_t col = col0 + int64_t{k} * Tile::kPerChunk;
  if (vector) {
    const bool full_tile = row0 + kTile <= rows && col0 + kTile <= cols;
    const T* source = input + (row0 + first_row) * cols + col;
    const int64_t source_step = kRowsPerCopy * cols;
    const unsigned shared = static_cast<unsigned>(__cvta_generic_to_shared(tile));
#pragma unroll
    for (int copy = 0; copy < kTile / kRowsPerCopy; ++copy, source += source_step) {
      const int r = first_row + copy * kRowsPerCopy;
      const bool inside = full_tile || (row0 + r < rows && col < cols);
      asm volatile(
          "cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared + Tile::ChunkOffset(r, k)),
          "l"(inside ? source : input), "r"(inside ? 16 : 0));
    }
    return;
  }
  for (int r = first_row; r < kTile; r += kRowsPerCopy) {
    T* elements = reinterpret_cast<T*>(tile + Tile::ChunkOffset(r, k));
    const int64_t row = row0 + r;
    for (int j = 0; j < Tile::kPerChunk; ++j) {
      elements[j] = row < rows && col + j < cols ? input[row * cols + col + j] : T(0.0f);
    }
  }
}

// Computes tile (row0, col0) of x into `tile` (an activation's cast stage): a thread takes the
// chunks LoadTileAsync would copy, loads the input's (and up's) synchronously, a batch of them
// in flight before the first is used, and stores x's chunk. Elements past the matrix are 0, as
// there.
template <Activation kActivation, typename T>
__device__ void LoadActivationTile(const T* input, const T* up, int64_t rows, int64_t cols,
                                   int64_t row0, int64_t col0, bool vector, uint8_t* tile) {
  using Tile = StagedTile<T>;
  constexpr int kRowsPerCopy = Tile::kRowsPerCopy;
  constexpr int kCopies = kTile / kRowsPerCopy;
  constexpr int kBatch = 4;  // 8 loads of 16 bytes in flight per thread
  const int k = threadIdx.x % Tile::kChunks, first_row = threadIdx.x / Tile::kChunks;
  const int64_t col = col0 + int64_t{k} * Tile::kPerChunk;
  if (vector) {
    const bool full_tile = row0 + kTile <= rows && col0 + kTile <= cols;
    const int64_t first = (row0 + first_row) * cols + col, step = kRowsPerCopy * cols;
#pragma unroll
    for (int batch = 0; batch < kCopies; batch += kBatch) {
      uint4 in[kBatch], u[kBatch];
#pragma unroll
      for (int i = 0; i < kBatch; ++i) {
        const int r = first_row + (batch + i) * kRowsPerCopy;
        const bool inside = full_tile || (row0 + r < rows && col < cols);
        const int64_t offset = first + (batch + i) * step;
        in[i] = inside ? __ldg(reinterpret_cast<const uint4*>(input + offset)) : uint4{};
        u[i] = inside ? UpChunk<kActivation>(up, offset) : uint4{};
      }
#pragma unroll
      for (int i = 0; i < kBatch; ++i) {
        const int r = first_row + (batch + i) * kRowsPerCopy;
        *reinterpret_cast<uint4*>(tile + Tile::ChunkOffset(r, k)) =
            ActivationChunk<kActivation, T>(in[i], u[i]);
      }
    }
    return;
  }
  for (int r = first_row; r < kTile; r += kRowsPerCopy) {
    T* elements = reinterpret_cast<T*>(tile + Tile::ChunkOffset(r, k));
    const int64_t row = row0 + r;
    for (int j = 0; j < Tile::kPerChunk; ++j) {
      const int64_t at = row * cols + col + j;
      elements[j] = row < rows && col + j < cols
                        ? ActivationElement<kActivation>(input[at], UpElement<kActivation>(up, at))
                        : T(0.0f);
    }
  }
}

__device__ void CommitLoads() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ void WaitForAllButNewestLoads() { asm volatile("cp.async.wait_group 1;\n" ::); }
__device__ void WaitForAllLoads() { asm volatile("cp.async.wait_group 0;\n" ::); }

// One staged tile: its amaxes (where the scales or `amax` need them), then q (row segments),
// then qᵀ (column segments).
template <typename T, __nv_fp8_interpretation_t kFormat>
__device__ void QuantizeTile(const QuantizeCastParams& p, const uint8_t* tile, int64_t tile_row,
                             int64_t tile_col, int64_t row_tiles, int64_t col_tiles,
                             unsigned* warp_max, unsigned* column_max, float tensor_scale,
                             unsigned& amax_seen) {
  using Tile = StagedTile<T>;
  const int64_t row0 = tile_row * kTile, col0 = tile_col * kTile;
  const int segment_col = (threadIdx.x % kSegmentsPerRow) * kVector;
  const int pass_row = threadIdx.x / kSegmentsPerRow;
  const bool transposed = p.transposed_output != nullptr;
  const bool blocks =
      p.granularity == ScaleGranularity::k1x128 || p.granularity == ScaleGranularity::k128x128;
  const bool column_scales = transposed && p.granularity == ScaleGranularity::k1x128;

  // Block scales need the amaxes before the cast: per row segment (1x128), per column (1x128 of
  // qᵀ), of the tile (128x128). The tensor's amax (`amax_bits`) is only an output: without block
  // scales it is taken from the values the cast reads anyway (q's, else qᵀ's), and each thread
  // keeps its max over all its tiles (`amax_seen`) for one reduction at the kernel's end.
  unsigned row_max[kPasses] = {}, tile_max = 0;
  const bool amax_in_q = !blocks && p.amax_bits != nullptr && p.output != nullptr;
  const bool amax_in_transposed = !blocks && p.amax_bits != nullptr && p.output == nullptr;
  if (blocks) {
    unsigned column_bits[kVector] = {}, all = 0;
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
      float v[kVector];
      Tile::Row8(tile, pass * kRowsPerPass + pass_row, segment_col, v);
#pragma unroll
      for (int j = 0; j < kVector; ++j) {
        const unsigned bits = MagnitudeBits(v[j]);
        row_max[pass] = max(row_max[pass], bits);
        column_bits[j] = max(column_bits[j], bits);
      }
      all = max(all, row_max[pass]);
    }
    if (p.granularity == ScaleGranularity::k1x128) {
#pragma unroll
      for (int pass = 0; pass < kPasses; ++pass) {
#pragma unroll
        for (int offset = kSegmentsPerRow / 2; offset > 0; offset /= 2) {
          row_max[pass] = max(row_max[pass], __shfl_xor_sync(0xffffffffu, row_max[pass], offset));
        }
      }
    }
    if (p.granularity == ScaleGranularity::k128x128) tile_max = BlockMax(all, warp_max);
    amax_seen = max(amax_seen, all);
    if (column_scales) {
      if (threadIdx.x < kTile) column_max[threadIdx.x] = 0;
      __syncthreads();
#pragma unroll
      for (int j = 0; j < kVector; ++j) atomicMax(&column_max[segment_col + j], column_bits[j]);
      __syncthreads();
    }
  }
  float tile_scale = 1.0f;  // kRow and k1x128 scale per row or column below
  if (p.granularity == ScaleGranularity::k128x128) {
    tile_scale = ScaleFromAmax(FloatFromBits(tile_max), p.margin_factor, p.type_max);
    if (threadIdx.x == 0) p.block_scale[tile_row * col_tiles + tile_col] = tile_scale;
  }
  if (p.granularity == ScaleGranularity::kTensor) tile_scale = tensor_scale;
  const float tile_inverse = InverseScale(tile_scale);  // tensor and 128x128, for q and qᵀ

  // q: each thread casts its row segments. Its output offset is stepped from pass to pass.
  const int64_t c0 = col0 + segment_col;
  if (p.output != nullptr || p.granularity == ScaleGranularity::k1x128) {
    int64_t q_offset = (row0 + pass_row) * p.cols + c0;
    const int64_t q_step = kRowsPerPass * p.cols;
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass, q_offset += q_step) {
      const int r = pass * kRowsPerPass + pass_row;
      const int64_t row = row0 + r;
      if (row >= p.rows) break;
      float scale = tile_scale;
      if (p.granularity == ScaleGranularity::kRow) scale = __ldg(p.scale + row);
      if (p.granularity == ScaleGranularity::k1x128) {
        scale = ScaleFromAmax(FloatFromBits(row_max[pass]), p.margin_factor, p.type_max);
        if (segment_col == 0) {
          p.block_scale[p.column_major_scales ? tile_col * p.rows + row
                                              : row * col_tiles + tile_col] = scale;
        }
      }
      if (p.output != nullptr && c0 < p.cols) {
        float v[kVector];
        Tile::Row8(tile, r, segment_col, v);
        if (amax_in_q) {
#pragma unroll
          for (int j = 0; j < kVector; ++j) amax_seen = max(amax_seen, MagnitudeBits(v[j]));
        }
        const bool shared_scale = p.granularity == ScaleGranularity::kTensor ||
                                  p.granularity == ScaleGranularity::k128x128;
        StoreEight(static_cast<uint8_t*>(p.output) + q_offset,
                   CastEight<kFormat>(v, shared_scale ? tile_inverse : InverseScale(scale)),
                   p.cols - c0, p.vector_output);
      }
    }
  }
  if (!transposed) return;

  // qᵀ: a warp step reads one 4-byte word (kPerWord columns) of one chunk from 8 rows, lane
  // l taking word l % 4 of row octet l / 4 (+ 8 in odd warps): the octets' swizzle puts the 32
  // lanes in 32 banks, and the 8 rows of an octet share one swizzled offset. Each column
  // becomes 8 bytes of a qᵀ row. A thread keeps its row octet in every step, and its chunk
  // advances by kWarps / 2, so its shared and output offsets are stepped, not recomputed.
  if (column_scales && threadIdx.x < kTile && col0 + threadIdx.x < p.cols) {
    const int64_t col = col0 + threadIdx.x;
    p.transposed_block_scale[p.column_major_scales ? tile_row * p.cols + col
                                                   : col * row_tiles + tile_row] =
        ScaleFromAmax(FloatFromBits(column_max[threadIdx.x]), p.margin_factor, p.type_max);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int octet = (warp % 2) * 8 + lane / 4;
  const int64_t out_col = row0 + octet * 8;
  if (out_col >= p.rows) return;
  constexpr int kChunkStep = kWarps / 2;
  const int first_column = (warp / 2) * Tile::kPerChunk + (lane % 4) * Tile::kPerWord;
  const uint8_t* octet_words = tile + octet * 8 * Tile::kRowBytes + 4 * (lane % 4);
  uint8_t* transposed_output = static_cast<uint8_t*>(p.transposed_output);
  int64_t out_offset = (col0 + first_column) * p.rows + out_col;
  const int64_t out_step = int64_t{kChunkStep} * Tile::kPerChunk * p.rows;
#pragma unroll
  for (int step = 0; step < Tile::kChunks / kChunkStep; ++step, out_offset += out_step) {
    const int chunk = warp / 2 + step * kChunkStep;
    const uint8_t* words = octet_words + 16 * (chunk ^ (octet & 7));
    uint32_t raw[kVector];
#pragma unroll
    for (int i = 0; i < kVector; ++i) {
      raw[i] = *reinterpret_cast<const uint32_t*>(words + i * Tile::kRowBytes);
    }
#pragma unroll
    for (int e = 0; e < Tile::kPerWord; ++e) {
      const int c = first_column + step * kChunkStep * Tile::kPerChunk + e;
      const int64_t out_row = col0 + c;
      if (out_row >= p.cols) continue;
      float column[kVector];
#pragma unroll
      for (int i = 0; i < kVector; ++i) column[i] = Tile::WordElement(raw[i], e);
      if (amax_in_transposed) {
#pragma unroll
        for (int i = 0; i < kVector; ++i) amax_seen = max(amax_seen, MagnitudeBits(column[i]));
      }
      float inverse = tile_inverse;
      if (p.granularity == ScaleGranularity::kRow) {
        inverse = InverseScale(__ldg(p.transposed_scale + out_row));
      } else if (p.granularity == ScaleGranularity::k1x128) {
        inverse =
            InverseScale(ScaleFromAmax(FloatFromBits(column_max[c]), p.margin_factor, p.type_max));
      }
      const uint2 packed = CastEight<kFormat>(column, inverse);
      StoreEight(transposed_output + out_offset + e * p.rows, packed, p.rows - out_col,
                 p.vector_transposed_output, /*streaming=*/true);
    }
  }
}

// The order in which the CTAs take tiles: down bands of kBandRows tile rows, column by column
// within a band. The tiles in flight at one time then form a block some 8 tiles high, so both
// q's rows and qᵀ's rows are written in runs of 1 KiB or more instead of one 128-byte piece per
// row (what a plain row-by-row order gives qᵀ).
struct TilePosition {
  static constexpr int kBandRows = 8;
  int row = 0, col = 0;
  // 32-bit: TileCount keeps the tile count within int (a 64-bit division is a subroutine call).
  __device__ TilePosition(int tile, int row_tiles, int col_tiles) {
    const int64_t band_tiles = int64_t{kBandRows} * col_tiles;
    const int band =
        band_tiles > tile
            ? 0
            : static_cast<int>(static_cast<unsigned>(tile) / static_cast<unsigned>(band_tiles));
    const int band_rows = min(kBandRows, row_tiles - band * kBandRows);
    const int in_band = tile - band * kBandRows * col_tiles;
    row = band * kBandRows + in_band % band_rows;
    col = in_band / band_rows;
  }
};

// kTensor: the scale of q and qᵀ. A given scale to resolve (resolve_given_scale) is resolved
// here, and CTA 0 writes the result out as q's scale. amax_bits holds max |x| by now if the
// given scale is unusable (the amax pass has finished, and the cast's atomicMax adds nothing
// new to it); if it is usable, the cast's CTAs are updating it and the value read is ignored.
__device__ float TensorScale(const QuantizeCastParams& p) {
  if (!p.resolve_given_scale) return __ldg(p.scale);
  const float amax = FloatFromBits(*static_cast<volatile unsigned*>(p.amax_bits));
  const float scale = ResolveGivenScale(__ldg(p.scale), amax, p.margin_factor, p.type_max);
  if (blockIdx.x == 0 && threadIdx.x == 0) *p.block_scale = scale;
  return scale;
}

// Applies the activation in place to the chunks of `tile` that this thread copied (the chunks
// LoadTileAsync gives it), once its copies have landed: cp.async.wait_group makes a thread's
// own copies visible to it, so no barrier is needed before, and the next tile's copies stay in
// flight meanwhile. Elements past the matrix stay 0 (the activations here map 0 to 0).
template <Activation kActivation, typename T>
__device__ void ActivateOwnChunks(uint8_t* tile) {
  using Tile = StagedTile<T>;
  constexpr int kRowsPerCopy = Tile::kRowsPerCopy;
  const int k = Tile::CopyChunk(), first_row = Tile::CopyFirstRow();
#pragma unroll
  for (int copy = 0; copy < kTile / kRowsPerCopy; ++copy) {
    uint4* chunk =
        reinterpret_cast<uint4*>(tile + Tile::ChunkOffset(first_row + copy * kRowsPerCopy, k));
    *chunk = ActivationChunk<kActivation, T>(*chunk, uint4{});
  }
}

// How a cast kernel stages a tile. Without an activation, or with one of the input alone
// (GELU), by cp.async into kStages buffers, the next tile streaming in while this one is cast
// (the activation applied in place, ActivateOwnChunks); with one that also reads up (SwiGLU),
// synchronously into one buffer (LoadActivationTile): gate's and up's tiles double-buffered
// would take 128 KiB, one CTA per SM.
template <Activation kActivation>
constexpr bool kActivatesInPlace = kActivation != Activation::kNone && !kReadsUp<kActivation>;
template <typename T, Activation kActivation>
constexpr int kCastStages = kReadsUp<kActivation> ? 1 : StagedTile<T>::kStages;

template <typename T, __nv_fp8_interpretation_t kFormat, Activation kActivation>
__global__ void __launch_bounds__(kThreads) quantize_cast_kernel(const QuantizeCastParams p) {
  using Tile = StagedTile<T>;
  extern __shared__ __align__(16) uint8_t staged[];  // kCastStages tiles
  __shared__ unsigned warp_max[kWarps];
  __shared__ unsigned column_max[kTile];

  // kTensor: the scale of q and qᵀ, the same in every tile. By value: read from shared memory
  // per tile instead, it made the cast 8-20% slower (code generation, not the reads: ncu).
  const float tensor_scale = p.granularity == ScaleGranularity::kTensor ? TensorScale(p) : 0.0f;
  const int row_tiles = static_cast<int>((p.rows + kTile - 1) / kTile);
  const int col_tiles = static_cast<int>((p.cols + kTile - 1) / kTile);
  const int tiles = row_tiles * col_tiles;  // <= INT_MAX (TileCount)
  const T* input = static_cast<const T*>(p.input);
  unsigned amax_seen = 0;  // max |x| of this thread's elements (magnitude bits), for amax_bits
  auto load = [&](TilePosition at, int stage) {
    const int64_t row0 = int64_t{at.row} * kTile, col0 = int64_t{at.col} * kTile;
    if constexpr (kReadsUp<kActivation>) {
      LoadActivationTile<kActivation>(input, static_cast<const T*>(p.up), p.rows, p.cols, row0,
                                      col0, p.vector_input, staged + stage * Tile::kBytes);
    } else {
      LoadTileAsync(input, p.rows, p.cols, row0, col0, p.vector_input,
                    staged + stage * Tile::kBytes);
    }
  };
  if constexpr (kCastStages<T, kActivation> == 1) {
    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      const TilePosition at(static_cast<int>(tile), row_tiles, col_tiles);
      load(at, 0);
      CommitLoads();
      WaitForAllLoads();
      if constexpr (kActivatesInPlace<kActivation>) ActivateOwnChunks<kActivation, T>(staged);
      __syncthreads();
      QuantizeTile<T, kFormat>(p, staged, at.row, at.col, row_tiles, col_tiles, warp_max,
                               column_max, tensor_scale, amax_seen);
      __syncthreads();  // the buffer is refilled next iteration
    }
  } else {
    TilePosition at(blockIdx.x, row_tiles, col_tiles);  // the grid has at most `tiles` CTAs
    if (static_cast<int>(blockIdx.x) < tiles) load(at, 0);
    CommitLoads();
    int stage = 0;
    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x, stage ^= 1) {
      // The next tile streams into the other buffer while this one is worked on.
      const int64_t next_tile = tile + gridDim.x;
      const TilePosition next =
          next_tile < tiles ? TilePosition(static_cast<int>(next_tile), row_tiles, col_tiles) : at;
      if (next_tile < tiles) load(next, stage ^ 1);
      CommitLoads();
      WaitForAllButNewestLoads();
      if constexpr (kActivatesInPlace<kActivation>) {
        ActivateOwnChunks<kActivation, T>(staged + stage * Tile::kBytes);
      }
      __syncthreads();
      QuantizeTile<T, kFormat>(p, staged + stage * Tile::kBytes, at.row, at.col, row_tiles,
                               col_tiles, warp_max, column_max, tensor_scale, amax_seen);
      __syncthreads();  // this buffer is refilled next iteration
      at = next;
    }
  }
  if (p.amax_bits != nullptr) {
    const unsigned cta_max = BlockMax(amax_seen, warp_max);
    if (threadIdx.x == 0) atomicMax(p.amax_bits, cta_max);
  }
}

template <typename T, Activation kActivation>
__global__ void __launch_bounds__(kThreads) amax_kernel(const AmaxParams p) {
  __shared__ unsigned warp_max[kWarps];
  __shared__ unsigned column_max[kTile];

  const TileCoordinates at(p.rows, p.cols);
  float v[kPasses][kVector];
  LoadTile<T, kActivation>(static_cast<const T*>(p.input), static_cast<const T*>(p.up), p.rows,
                           p.cols, p.vector_input, at, v);
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

// max |x| of a whole tensor as magnitude bits: a grid-stride stream of 16-byte loads, the max
// taken on the raw bits (bf16 and f16 two at a time, as unsigned 16-bit lanes: their NaNs also
// sort above inf), converted to f32 bits once per thread. One atomicMax per CTA.
//
// The stream runs from the end of the tensor to its start, with loads that stay in L2: the
// cast kernel that follows takes its tiles from the start, so its first reads find what was
// read last here still in L2 (most of a tensor of L2's size, the first part of a larger one).
template <typename T, Activation kActivation>
__global__ void __launch_bounds__(kThreads)
    tensor_amax_kernel(const T* input, const T* up, int64_t count, bool vector,
                       unsigned* tensor_bits, const float* skip_when_usable) {
  __shared__ unsigned warp_max[kWarps];
  // A usable given scale makes this pass unneeded (quantize.h): the whole grid returns at once.
  if (skip_when_usable != nullptr && IsUsableGivenScale(__ldg(skip_when_usable))) return;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  unsigned thread_max = 0;
  if (vector) {  // count % 8 == 0 and 16-byte aligned
    const uint4* chunks = reinterpret_cast<const uint4*>(input);
    const int64_t chunk_count = count * static_cast<int64_t>(sizeof(T)) / 16;
    unsigned lanes = 0;  // f32 bits, or two 16-bit magnitudes
#pragma unroll 4
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < chunk_count; i += stride) {
      const int64_t chunk = chunk_count - 1 - i;
      uint4 raw;
      if constexpr (kActivation != Activation::kNone) {
        raw = ActivationChunk<kActivation, T>(__ldg(chunks + chunk),
                                              UpChunk<kActivation>(up, chunk * (16 / sizeof(T))));
      } else {
        raw = __ldg(chunks + chunk);
      }
      const unsigned words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        if constexpr (sizeof(T) == 4) {
          lanes = max(lanes, words[w] & 0x7fffffffu);
        } else {
          lanes = __vmaxu2(lanes, words[w] & 0x7fff7fffu);
        }
      }
    }
    if constexpr (sizeof(T) == 4) {
      thread_max = lanes;
    } else {
      const unsigned short high = static_cast<unsigned short>(max(lanes & 0xffffu, lanes >> 16));
      T element;
      memcpy(&element, &high, sizeof element);
      thread_max = MagnitudeBits(ToFloat(element));
    }
  } else {
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count; i += stride) {
      const int64_t at = count - 1 - i;
      const T x = ActivationElement<kActivation>(input[at], UpElement<kActivation>(up, at));
      thread_max = max(thread_max, MagnitudeBits(ToFloat(x)));
    }
  }
  const unsigned block_max = BlockMax(thread_max, warp_max);
  if (threadIdx.x == 0) atomicMax(tensor_bits, block_max);
}

__global__ void resolve_given_scale_kernel(const float* given, float* scale, float margin_factor,
                                           float type_max) {
  *scale = ResolveGivenScale(*given, *scale, margin_factor, type_max);  // *scale: the amax
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

// The persistent grid: as many CTAs as fit on the device at once (never more than tiles).
// The shared-memory opt-in and the occupancy query are done once per kernel and device.
template <typename T, __nv_fp8_interpretation_t kFormat, Activation kActivation>
Status LaunchCast(const QuantizeCastParams& p, int tiles, cudaStream_t stream,
                  const std::string& context) {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> resident_ctas[kMaxDevices];  // 0 = not known yet
  constexpr size_t kSharedBytes = kCastStages<T, kActivation> * StagedTile<T>::kBytes;
  auto kernel = quantize_cast_kernel<T, kFormat, kActivation>;
  int device = 0;
  FP8_CUDA_RETURN_IF_ERROR(cudaGetDevice(&device), context);
  if (device < 0 || device >= kMaxDevices) {
    return Internal("quantize: device %d [%s]", device, context.c_str());
  }
  int ctas = resident_ctas[device].load(std::memory_order_relaxed);
  if (ctas == 0) {
    FP8_CUDA_RETURN_IF_ERROR(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(kSharedBytes)),
        context);
    // All of L1 as shared memory: the occupancy the grid is sized for.
    FP8_CUDA_RETURN_IF_ERROR(
        cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                             cudaSharedmemCarveoutMaxShared),
        context);
    int per_sm = 0, sms = 0;
    FP8_CUDA_RETURN_IF_ERROR(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, kSharedBytes),
        context);
    FP8_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                             context);
    if (per_sm < 1) {
      return Internal("quantize: the kernel does not fit on an SM [%s]", context.c_str());
    }
    ctas = per_sm * sms;
    resident_ctas[device].store(ctas, std::memory_order_relaxed);
  }
  kernel<<<std::min(ctas, tiles), kThreads, kSharedBytes, stream>>>(p);
  FP8_CUDA_RETURN_IF_LAUNCH_FAILED("quantize_cast_kernel", context);
  return OkStatus();
}

template <typename T, Activation kActivation>
Status LaunchCastForOutput(const QuantizeCastParams& p, int tiles, cudaStream_t stream,
                           const std::string& context) {
  return p.output_type == DType::kF8E4M3FN
             ? LaunchCast<T, __NV_E4M3, kActivation>(p, tiles, stream, context)
             : LaunchCast<T, __NV_E5M2, kActivation>(p, tiles, stream, context);
}

template <typename T>
Status LaunchCastForActivation(const QuantizeCastParams& p, int tiles, cudaStream_t stream,
                               const std::string& context) {
  switch (p.activation) {
    case Activation::kNone:
      return LaunchCastForOutput<T, Activation::kNone>(p, tiles, stream, context);
    case Activation::kSwiGlu:
      return LaunchCastForOutput<T, Activation::kSwiGlu>(p, tiles, stream, context);
    case Activation::kGelu:
      return LaunchCastForOutput<T, Activation::kGelu>(p, tiles, stream, context);
  }
  return Internal("quantize: activation %d [%s]", static_cast<int>(p.activation), context.c_str());
}

}  // namespace

Status LaunchQuantizeCast(const QuantizeCastParams& p, cudaStream_t stream,
                          const std::string& context) {
  FP8_ASSIGN_OR_RETURN(int tiles, TileCount(p.rows, p.cols, context));
  switch (p.input_type) {
    case DType::kF32:
      return LaunchCastForActivation<float>(p, tiles, stream, context);
    case DType::kBF16:
      return LaunchCastForActivation<__nv_bfloat16>(p, tiles, stream, context);
    case DType::kF16:
      return LaunchCastForActivation<__half>(p, tiles, stream, context);
    default:
      return Internal("quantize: input type %s [%s]", DTypeName(p.input_type), context.c_str());
  }
}

template <typename T>
Status LaunchTensorAmax(const AmaxParams& p, cudaStream_t stream, const std::string& context) {
  int device = 0, sms = 0;
  FP8_CUDA_RETURN_IF_ERROR(cudaGetDevice(&device), context);
  FP8_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                           context);
  const int64_t count = p.rows * p.cols;
  const int64_t per_cta = int64_t{kThreads} * 16 * 4;  // four 16-byte loads per thread at least
  const int ctas = static_cast<int>(std::max<int64_t>(
      1, std::min<int64_t>(int64_t{sms} * 8, (count * sizeof(T) + per_cta - 1) / per_cta)));
  auto kernel = tensor_amax_kernel<T, Activation::kNone>;
  if (p.activation == Activation::kSwiGlu) kernel = tensor_amax_kernel<T, Activation::kSwiGlu>;
  if (p.activation == Activation::kGelu) kernel = tensor_amax_kernel<T, Activation::kGelu>;
  kernel<<<ctas, kThreads, 0, stream>>>(static_cast<const T*>(p.input), static_cast<const T*>(p.up),
                                        count, p.vector_input, p.tensor_bits, p.skip_when_usable);
  FP8_CUDA_RETURN_IF_LAUNCH_FAILED("tensor_amax_kernel", context);
  return OkStatus();
}

template <typename T>
void LaunchTileAmax(const AmaxParams& p, int tiles, cudaStream_t stream) {
  auto kernel = amax_kernel<T, Activation::kNone>;
  if (p.activation == Activation::kSwiGlu) kernel = amax_kernel<T, Activation::kSwiGlu>;
  if (p.activation == Activation::kGelu) kernel = amax_kernel<T, Activation::kGelu>;
  kernel<<<tiles, kThreads, 0, stream>>>(p);
}

Status LaunchAmax(const AmaxParams& p, cudaStream_t stream, const std::string& context) {
  if (p.row_bits == nullptr && p.column_bits == nullptr) {
    switch (p.input_type) {
      case DType::kF32:
        return LaunchTensorAmax<float>(p, stream, context);
      case DType::kBF16:
        return LaunchTensorAmax<__nv_bfloat16>(p, stream, context);
      case DType::kF16:
        return LaunchTensorAmax<__half>(p, stream, context);
      default:
        return Internal("amax: input type %s [%s]", DTypeName(p.input_type), context.c_str());
    }
  }
  FP8_ASSIGN_OR_RETURN(int tiles, TileCount(p.rows, p.cols, context));
  switch (p.input_type) {
    case DType::kF32:
      LaunchTileAmax<float>(p, tiles, stream);
      break;
    case DType::kBF16:
      LaunchTileAmax<__nv_bfloat16>(p, tiles, stream);
      break;
    case DType::kF16:
      LaunchTileAmax<__half>(p, tiles, stream);
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

Status LaunchResolveGivenScale(const float* given, float* scale, float margin_factor,
                               float type_max, cudaStream_t stream, const std::string& context) {
  resolve_given_scale_kernel<<<1, 1, 0, stream>>>(given, scale, margin_factor, type_max);
  FP8_CUDA_RETURN_IF_LAUNCH_FAILED("resolve_given_scale_kernel", context);
  return OkStatus();
}

}  // namespace fp8dot::cuda
