// A fused GEMM custom call as XLA writes it: its target names, and its backend_config in XLA's
// JSON form:
//   {"operation_queue_id":"0","wait_on_operation_queues":[],
//    "gemm_backend_config":{"alpha_real":1,"alpha_imag":0,"beta":0,
//      "dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],...},
//      "precision_config":{"operand_precision":["DEFAULT","DEFAULT"],"algorithm":"ALG_UNSET"},
//      "epilogue":"DEFAULT","damax_output":false,"lhs_stride":"512","rhs_stride":"512",
//      "grad_x":false,"grad_y":false},"force_earliest_schedule":false}
// The precision_config is carried over from the dot untouched: the accumulation is resolved at
// execution, by ResolveAccumulation, like every other dot.
#pragma once

#include <string>

#include "fp8dot/dot_spec.h"
#include "fp8dot/precision.h"
#include "fp8dot/status.h"

namespace fp8dot::hlo {

// custom_call_target of a fused FP8 GEMM, and of a non-FP8 one (XLA's names).
inline constexpr char kCublasLtMatmulF8Target[] = "__cublas$lt$matmul$f8";
inline constexpr char kCublasLtMatmulTarget[] = "__cublas$lt$matmul";

struct GemmBackendConfig {
  double alpha_real = 1.0;
  double alpha_imag = 0.0;
  double beta = 0.0;
  DotDimensionNumbers dot_dimension_numbers;
  PrecisionConfig precision_config;
  Epilogue epilogue = Epilogue::kDefault;
  bool damax_output = false;  // the custom call also returns amax of D
  int64_t lhs_stride = 0;     // elements between batch entries (informational, as XLA)
  int64_t rhs_stride = 0;
  bool grad_x = false;
  bool grad_y = false;

  std::string ToJson() const;
};

// Accepts the full backend_config (with "gemm_backend_config" inside) or the inner object.
// Errors name the missing or malformed field.
StatusOr<GemmBackendConfig> ParseGemmBackendConfig(const std::string& json);

}  // namespace fp8dot::hlo
