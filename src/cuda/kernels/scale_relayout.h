// Scale tensors in the order cuBLASLt reads them. fp8dot documents row-major scale shapes
// (dot_spec.h); cuBLASLt wants, in its column-major view of D^T = B^T A^T:
//   OUTER_VEC_32F   one per row of its operand, padded to the padded row count
//   VEC128_32F      element (row, k-block) at k_block * rows + row   ("outer-dim-major")
//   BLK128x128_32F  element (row-block, k-block) at row_block * round_up(k_blocks, 4) + k_block
// This kernel copies a 2-D strided f32 array into another, filling the padding with 1.0.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "fp8dot/status.h"

namespace fp8dot::cuda {

struct ScaleRelayoutParams {
  const float* source = nullptr;
  float* dest = nullptr;
  int64_t rows = 0, cols = 0;            // the logical scale array
  int64_t dest_rows = 0, dest_cols = 0;  // >= rows, cols: the extra entries get 1.0
  int64_t source_row_stride = 0, source_col_stride = 0;
  int64_t dest_row_stride = 0, dest_col_stride = 0;
};

// Runs one or two relayouts (the lhs's and the rhs's) in a single launch: at small M the
// launch, not the copy, is the cost.
Status LaunchScaleRelayouts(const ScaleRelayoutParams* jobs, int count, cudaStream_t stream,
                            const std::string& context);

}  // namespace fp8dot::cuda
