// A DotSpec together with the tensors it runs on: what the CLI, the tests and the benchmarks pass
// around. MakeDotProblem uses the tensors the caller gives and fills every other tensor the spec
// needs with fresh random data.
#pragma once

#include <cstdint>
#include <optional>

#include "fp8dot/dot_arguments.h"
#include "fp8dot/random.h"

namespace fp8dot {

struct DotProblem {
  DotSpec spec;
  HostTensor lhs;
  HostTensor rhs;
  std::optional<HostTensor> lhs_scale;
  std::optional<HostTensor> rhs_scale;
  std::optional<HostTensor> c;
  std::optional<HostTensor> bias;
  std::optional<HostTensor> output_scale;

  DotArguments arguments() const;
};

struct DotProblemOptions {
  int64_t batch = 0;  // 0: plain [M,K] x [K,N]; otherwise a leading batch dim on both operands
  int64_t m = 64, n = 64, k = 256;
  DType lhs_type = DType::kF8E4M3FN;
  DType rhs_type = DType::kF8E4M3FN;
  DType output_type = DType::kF32;
  PrecisionConfig precision_config;
  ScaleMode lhs_scale_mode = ScaleMode::kNone;
  ScaleMode rhs_scale_mode = ScaleMode::kNone;
  Epilogue epilogue = Epilogue::kDefault;
  double alpha = 1.0;
  double beta = 0.0;                   // non-zero: a random C is generated
  std::optional<double> output_scale;  // FP8 outputs
  bool compute_amax = false;
  Distribution distribution = Distribution::kSymmetric;
  uint64_t seed = 1;

  // Given tensors are used as they are (their dims override batch/m/n/k and the types);
  // the others are drawn at random.
  std::optional<HostTensor> lhs, rhs, lhs_scale, rhs_scale;
  // Default: A[M,K] x B[K,N], with a leading batch dim on both when batch > 0 (or when given
  // rank-3 operands).
  std::optional<DotDimensionNumbers> dimension_numbers;
  // The most bytes the whole problem may take: operands, scales, C, bias, the output and the f64
  // reference, counted before anything is allocated. Unset: DefaultMemoryLimitBytes().
  std::optional<int64_t> memory_limit_bytes;
};

// Half the machine's physical memory (sysconf), or INT64_MAX when it cannot be read.
int64_t DefaultMemoryLimitBytes();

// Random operands are drawn from `distribution`, scales uniform in [0.25, 4), C and bias
// symmetric; given tensors are moved into the problem (pass std::move(options) to avoid copies).
// Fails with the validation error when the options describe an invalid dot, with
// RESOURCE_EXHAUSTED (bytes needed and the limit) before any allocation when the problem needs
// more than memory_limit_bytes, and when output_scale is not finite and > 0.
StatusOr<DotProblem> MakeDotProblem(DotProblemOptions options);

}  // namespace fp8dot
