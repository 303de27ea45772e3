// Device gather: copies a tensor given by offset tables (any dot_general layout) into the
// canonical [batch][rows_padded][cols_padded] row-major layout cuBLASLt is given, zero-padding
// rows and columns and optionally converting the element type on the way.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "fp8dot/dtype.h"
#include "fp8dot/status.h"

namespace fp8dot::cuda {

enum class GatherConversion {
  kCopy,             // same type (1, 2 or 4 bytes)
  kE5M2ToF16,        // exact: every e5m2 value (inf and NaN too) is an f16 with 8 zero low bits
  kFp8ToF32Scaled,   // FP8 x its block scale, in f32 (the upcast path for block scales)
};

struct GatherParams {
  const void* source = nullptr;
  void* dest = nullptr;  // [batch][rows_padded][cols_padded]
  GatherConversion conversion = GatherConversion::kCopy;
  DType source_type = DType::kF32;
  // Element offsets in `source`: element (b, r, c) is at batch_offsets[b] + row_offsets[r] +
  // col_offsets[c] (device arrays), or, when `affine`, at b*batch_stride + r*row_stride +
  // c*col_stride (no table loads: the common case of a plain transpose or padding).
  const int64_t* batch_offsets = nullptr;
  const int64_t* row_offsets = nullptr;
  const int64_t* col_offsets = nullptr;
  bool affine = false;
  int64_t batch_stride = 0, row_stride = 0, col_stride = 0;
  int64_t batch = 1, rows = 0, cols = 0, rows_padded = 0, cols_padded = 0;
  // The source is contiguous along rows rather than cols: read each tile row-fastest so the
  // loads stay coalesced, and transpose it through shared memory.
  bool read_rows_fastest = false;
  // kFp8ToF32Scaled: element (r, c) is multiplied by
  // scale[(r / scale_row_block) * scale_row_stride + (c / 128) * scale_block_stride].
  const float* scale = nullptr;
  int64_t scale_row_block = 1, scale_row_stride = 0, scale_block_stride = 0;
};

// Checks the parameters and launches the gather on `stream`.
Status LaunchGather(const GatherParams& params, cudaStream_t stream, const std::string& context);
// One or two gathers with the same conversion and element size, in a single launch.
Status LaunchGathers(const GatherParams* params, int count, cudaStream_t stream,
                     const std::string& context);

}  // namespace fp8dot::cuda
