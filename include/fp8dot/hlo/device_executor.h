// DeviceGemmExecutor: runs a module whose entry computation is, once the FP8 GEMM rewriter has
// fused it, GEMMs over its inputs, with every array resident on the GPU.
//
// Supported instructions: parameter, constant, the GEMM custom calls (gemm_call.h), including
// one GEMM's output feeding another, get-tuple-element, tuple, and scalar arithmetic on scales
// (convert, reshape, bitcast, multiply, divide of one-element values), which is done on the host
// while preparing. Anything else is UNIMPLEMENTED with the instruction named: such modules run on
// the host interpreter (fp8dot run without --device-resident).
//
// Prepare() uploads the inputs and makes the cuBLASLt plans once; Run() enqueues the plans back
// to back and returns their device time; Result() downloads the root. Without a GPU (or a CUDA
// build) Prepare() fails with UNAVAILABLE.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "fp8dot/cuda_buffer.h"
#include "fp8dot/hlo/hlo_ir.h"
#include "fp8dot/hlo/interpreter_value.h"

namespace fp8dot::hlo {

class DeviceGemmExecutor {
 public:
  static StatusOr<std::unique_ptr<DeviceGemmExecutor>> Prepare(const HloModule& module,
                                                               const std::vector<Value>& arguments);
  // Device milliseconds of all GEMMs of one evaluation (CUDA events).
  StatusOr<double> Run();
  StatusOr<Value> Result() const;
  int64_t gemm_count() const { return static_cast<int64_t>(gemms_.size()); }
  ~DeviceGemmExecutor();

 private:
  struct Gemm;
  struct DeviceArray {
    DeviceBuffer buffer;
    Shape shape;  // what the bytes hold, row-major
  };

  DeviceGemmExecutor() = default;
  // Prepare's steps, for one instruction of the entry computation at a time, in post order.
  Status PrepareInstruction(const HloInstruction& instruction, const std::vector<Value>& arguments);
  Status ComputeScaleOnHost(const HloInstruction& instruction);
  Status BindGemmOutput(const HloInstruction& instruction);
  Status AddGemm(const HloInstruction& instruction);
  Status BindGemmInputs(Gemm& gemm);
  StatusOr<const void*> GemmInput(const HloInstruction& gemm, int index);
  StatusOr<const DeviceArray*> Upload(const HloInstruction* instruction);
  StatusOr<Value> Download(const HloInstruction* instruction) const;

  const HloComputation* entry_ = nullptr;
  std::map<const HloInstruction*, Value> host_values_;   // parameters, constants, scalars
  std::map<const HloInstruction*, DeviceArray> arrays_;  // uploaded host values
  std::vector<std::unique_ptr<Gemm>> gemms_;
  // get-tuple-element(gemm, i) -> the device array holding it (D or amax)
  std::map<const HloInstruction*, const DeviceArray*> gemm_outputs_;
};

}  // namespace fp8dot::hlo
