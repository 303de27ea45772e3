// The gather kernel (see operand_gather.h) and its launcher.
#include <cuda_fp8.h>

#include "cuda/cuda_status.h"
#include "cuda/kernels/hopper_primitives.cuh"
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
  hopper::LetDependentGridsStart();  // see padded_copy_kernel
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

// ---- Padded copy ----------------------------------------------------------------------------
// The common padding case: a plain copy whose source rows are already contiguous along cols
// (e.g. K = 1000 FP8 operands padded to 1008). Rows are moved as raw bytes in V-byte vectors,
// one vector per thread, with no shared-memory transpose; the padding is written as zeros.
struct CopyJob {
  const uint8_t* source;
  uint8_t* dest;
  int64_t batch, rows, rows_padded;
  int64_t row_bytes;           // bytes of data per source row (cols * element)
  int64_t dest_row_bytes;      // cols_padded * element
  int64_t source_row_stride;   // bytes
  int64_t source_batch_stride; // bytes
  int64_t chunks_per_row;      // dest_row_bytes / V
};
struct CopyJobs {
  CopyJob job[kMaxJobs];
  int64_t end[kMaxJobs];  // cumulative chunk counts
  int count;
};

template <int V>
struct VectorOf;
template <>
struct VectorOf<16> {
  using type = uint4;
};
template <>
struct VectorOf<8> {
  using type = uint2;
};
template <>
struct VectorOf<4> {
  using type = uint32_t;
};
template <>
struct VectorOf<2> {
  using type = uint16_t;
};
template <>
struct VectorOf<1> {
  using type = uint8_t;
};

// `Index`: uint32_t where every chunk index fits in 31 bits, so that the three divisions per
// chunk are 32-bit ones (a 64-bit division is a loop of some 70 instructions), else int64_t.
template <int V, typename Index>
__global__ void padded_copy_kernel(const CopyJobs jobs) {
  using Vec = typename VectorOf<V>::type;
  // The own GEMM that reads this copy is launched as a programmatic dependent: its set-up may
  // overlap this grid, and it waits for this grid's end before it reads (a plain launch after
  // this grid ignores the hint).
  hopper::LetDependentGridsStart();
  const Index total = static_cast<Index>(jobs.end[jobs.count - 1]);
  const Index first_end = static_cast<Index>(jobs.end[0]);
  for (Index i = blockIdx.x * Index{blockDim.x} + threadIdx.x; i < total;
       i += Index{gridDim.x} * blockDim.x) {
    const bool second = i >= first_end;
    const CopyJob& p = second ? jobs.job[1] : jobs.job[0];
    const Index local = second ? i - first_end : i;
    const Index chunks_per_row = static_cast<Index>(p.chunks_per_row);
    const Index rows_padded = static_cast<Index>(p.rows_padded);
    const int64_t chunk = local % chunks_per_row;
    const Index dest_row = local / chunks_per_row;  // b * rows_padded + r
    const int64_t r = dest_row % rows_padded;
    const int64_t b = dest_row / rows_padded;
    const int64_t byte = chunk * V;
    union {
      Vec vector;
      uint8_t bytes[V];
    } value;
    value.vector = Vec{};
    if (r < p.rows && byte < p.row_bytes) {
      const uint8_t* row = p.source + b * p.source_batch_stride + r * p.source_row_stride;
      if (byte + V <= p.row_bytes) {
        value.vector = *reinterpret_cast<const Vec*>(row + byte);
      } else {
#pragma unroll
        for (int t = 0; t < V; ++t) value.bytes[t] = byte + t < p.row_bytes ? row[byte + t] : 0;
      }
    }
    *reinterpret_cast<Vec*>(p.dest + int64_t{dest_row} * p.dest_row_bytes + byte) = value.vector;
  }
}

// True when `p` is a plain copy with contiguous source rows (the padded-copy kernel's case).
bool IsPaddedCopy(const GatherParams& p) {
  return p.conversion == GatherConversion::kCopy && p.affine && !p.read_rows_fastest &&
         (p.col_stride == 1 || p.cols == 1);
}

// The widest vector (16, 8, 4, 2 or 1 bytes) every address and stride of `p` is aligned to.
int CopyVectorBytes(const GatherParams& p) {
  const int64_t element = DTypeSizeInBytes(p.source_type);
  int64_t v = 16;
  auto fits = [&](int64_t bytes) { return bytes % v == 0; };
  while (v > 1 && !(fits(static_cast<int64_t>(reinterpret_cast<uintptr_t>(p.source))) &&
                    fits(static_cast<int64_t>(reinterpret_cast<uintptr_t>(p.dest))) &&
                    (p.rows <= 1 || fits(p.row_stride * element)) &&
                    (p.batch <= 1 || fits(p.batch_stride * element)) &&
                    fits(p.cols_padded * element))) {
    v /= 2;
  }
  return static_cast<int>(v);
}

template <int V>
Status LaunchPaddedCopy(const GatherParams* params, int count, cudaStream_t stream,
                        const std::string& context) {
  constexpr int kThreads = 256;
  CopyJobs jobs{};
  jobs.count = count;
  int64_t total = 0;
  for (int j = 0; j < count; ++j) {
    const GatherParams& p = params[j];
    const int64_t element = DTypeSizeInBytes(p.source_type);
    CopyJob& c = jobs.job[j];
    c.source = static_cast<const uint8_t*>(p.source);
    c.dest = static_cast<uint8_t*>(p.dest);
    c.batch = p.batch;
    c.rows = p.rows;
    c.rows_padded = p.rows_padded;
    c.row_bytes = p.cols * element;
    c.dest_row_bytes = p.cols_padded * element;
    c.source_row_stride = p.row_stride * element;
    c.source_batch_stride = p.batch_stride * element;
    c.chunks_per_row = c.dest_row_bytes / V;
    total += p.batch * p.rows_padded * c.chunks_per_row;
    jobs.end[j] = total;
  }
  const int blocks =
      static_cast<int>(std::min<int64_t>((total + kThreads - 1) / kThreads, int64_t{1} << 16));
  if (total <= INT32_MAX) {
    padded_copy_kernel<V, uint32_t><<<blocks, kThreads, 0, stream>>>(jobs);
  } else {
    padded_copy_kernel<V, int64_t><<<blocks, kThreads, 0, stream>>>(jobs);
  }
  FP8_CUDA_RETURN_IF_LAUNCH_FAILED("padded_copy_kernel", context);
  return OkStatus();
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
  bool padded_copy = true;
  int vector_bytes = 16;
  for (int j = 0; j < count; ++j) {
    padded_copy = padded_copy && IsPaddedCopy(params[j]);
    vector_bytes = std::min(vector_bytes, CopyVectorBytes(params[j]));
  }
  if (padded_copy) {
    switch (vector_bytes) {
      case 16:
        return LaunchPaddedCopy<16>(params, count, stream, context);
      case 8:
        return LaunchPaddedCopy<8>(params, count, stream, context);
      case 4:
        return LaunchPaddedCopy<4>(params, count, stream, context);
      case 2:
        return LaunchPaddedCopy<2>(params, count, stream, context);
      default:
        return LaunchPaddedCopy<1>(params, count, stream, context);
    }
  }
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
