// How the CUDA plan reaches each tensor of a dot: operands, C and the bias read in place or
// gathered on the device (transposed, padded, converted), and operand scales read in place or
// reordered into cuBLASLt's layout. Decided once when a plan is made (Prepare*); the device
// copies then run at every CudaDotPlan::Run.
#pragma once

#include <string>

#include "cuda/kernels/operand_gather.h"
#include "cuda/kernels/scale_relayout.h"
#include "cuda/tensor_index.h"
#include "fp8dot/cuda_buffer.h"
#include "fp8dot/dot_spec.h"

namespace fp8dot::cuda {

// cuBLASLt FP8 kernels need 16-byte aligned pointers and leading dimensions.
inline constexpr int64_t kAlignmentBytes = 16;

// How one tensor (lhs, rhs, C or the bias) reaches cuBLASLt or the epilogue kernel: read in
// place, or first gathered on the device into [batch][rows][cols_padded] (transposed, padded
// and/or converted).
struct PreparedTensor {
  bool present = false;
  bool gathered = false;
  DType source_type = DType::kF32;
  DType target_type = DType::kF32;  // what cuBLASLt / the epilogue reads
  bool cols_contiguous = true;      // else rows contiguous (cuBLASLt flips the op)
  int64_t ld = 0;                   // elements between rows (or between cols)
  int64_t batch_stride = 0;         // elements
  GatherParams gather;              // tables and dest fixed at Create; source (and scale) at Run
  DeviceBuffer tables;              // int64 offsets: batch, rows, cols
  DeviceBuffer copy;
  std::string how;  // one line for Explain()

  const void* Resolve(const void* user) const { return gathered ? copy.data() : user; }
};

// An operand's scale as cuBLASLt reads it (native FP8 GEMMs only).
struct PreparedScale {
  ScaleMode mode = ScaleMode::kNone;
  bool relayout = false;
  ScaleRelayoutParams params;  // source set at Run
  DeviceBuffer copy;
  std::string how;

  const float* Resolve(const float* user) const { return relayout ? copy.as<const float>() : user; }
};

// What one tensor must look like for cuBLASLt (or the epilogue kernel).
struct TensorRequest {
  const char* name = "";
  const TensorSpec* spec = nullptr;
  TensorIndex index;
  DType target_type = DType::kF32;
  GatherConversion conversion = GatherConversion::kCopy;
  int64_t rows_padded = 0;  // 0: the tensor's own row count
  int64_t cols_padded = 0;
  bool allow_rows_contiguous = false;  // cuBLASLt may read it transposed (non-FP8 operands)
  const char* rows_name = "rows";
  const char* cols_name = "cols";
};

// Reads the tensor in place when its strides already are what cuBLASLt needs (and nothing is
// padded or converted); else plans a gather into [batch][rows_padded][cols_padded] and allocates
// its destination. `how` says which, for Explain().
StatusOr<PreparedTensor> PrepareTensor(const TensorRequest& request, const std::string& context);

// Element strides of an operand scale's two logical axes, (row, k-block), in the caller's buffer,
// from the spec's shape and layout (dot_spec.h): row = M (lhs) or N (rhs), or their 128-blocks;
// k-block = K/128. Outer-vector scales have one axis (row). Empty layout = row-major.
struct ScaleStrides {
  int64_t row = 1, block = 0;
};
ScaleStrides SourceScaleStrides(const OperandScale& scale, bool is_lhs);

// cuBLASLt's layout for one operand's scale (see kernels/scale_relayout.h). `rows` is the
// operand's free extent (M for the lhs, N for the rhs), `rows_padded` what cuBLASLt sees. The
// caller's scale is read in place when it already is in cuBLASLt's layout (e.g. a column-major,
// M-major, lhs 1x128 scale), else reordered on the device at every run.
StatusOr<PreparedScale> PrepareScale(const OperandScale& scale, bool is_lhs, int64_t rows,
                                     int64_t rows_padded, int64_t k);

}  // namespace fp8dot::cuda
