// CudaDotPlan's insides, shared by the files that build (dot_plan.cc), explain
// (plan_explain.cc) and tune (autotune.cc) a plan.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cuda/kernels/operand_gather.h"
#include "cuda/kernels/scale_relayout.h"
#include "cuda/lt_matmul.h"
#include "cuda/tensor_index.h"
#include "fp8dot/cuda_backend.h"
#include "fp8dot/cuda_buffer.h"

namespace fp8dot::cuda {

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

  const float* Resolve(const float* user) const {
    return relayout ? copy.as<const float>() : user;
  }
};

}  // namespace fp8dot::cuda

struct fp8dot::CudaDotPlan::Impl {
  DotSpec spec;
  CudaDotOptions options;
  CudaPlanInfo info;
  std::string context;  // "f8e4m3fn x f8e4m3fn -> bf16, batch=1 M=.. N=.. K=.."

  // The three ways a plan runs.
  bool upcast = false;           // e5m2 x e5m2: operands converted (f16, or f32 with block scales)
  bool fused = false;            // everything in one cuBLASLt call (else S, then our epilogue)
  bool scales_in_gemm = false;   // cuBLASLt applies the A/B scales (native FP8)
  bool scales_in_gather = false; // block scales folded into the f32 upcast
  std::string fused_rejection;   // why the fused path was not taken

  cuda::PreparedTensor lhs, rhs, c, bias;
  cuda::PreparedScale lhs_scale, rhs_scale;
  std::unique_ptr<cuda::LtMatmul> gemm;
  DeviceBuffer workspace;
  DeviceBuffer gemm_output;  // S in f32 (unfused), or the padded D (fused with N padded)
  int64_t k_padded = 0;
  int64_t gemm_m = 0;    // cuBLASLt's m: N, or N padded to 16 for FP8 kernels that need it
  int64_t n_padded = 0;  // D's leading dim (>= gemm_m)
  std::string compute_note;   // when the compute type is not an exact match for the mode
  std::string autotune_note;  // what autotuning did
};

namespace fp8dot::cuda {

// autotune.cc: times the heuristic's candidates on scratch data and keeps the fastest; uses and
// updates options.autotune_cache_path.
Status Autotune(CudaDotPlan::Impl& plan);

// plan_explain.cc
std::string ExplainPlan(const CudaDotPlan::Impl& plan);

// plan_cache.cc: every field of the spec, as text (the plan cache's key).
std::string DotSpecKey(const DotSpec& spec);

}  // namespace fp8dot::cuda
