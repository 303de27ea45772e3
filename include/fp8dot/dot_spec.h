// DotSpec: everything about one scaled dot except the data — operand shapes and layouts,
// StableHLO dot_general dimension numbers, PrecisionConfig, scales, C, bias, epilogue, output.
//
//   D = epilogue(alpha * scale_a * scale_b * (A . B) + beta * C + bias)
//   for FP8 outputs: D_out = saturate(D * scale_d), amax = max |D| (before scale_d)
//
// A = lhs, B = rhs, canonicalised to batched GEMMs: A[batch, M, K], B[batch, K, N] with
// M = product of the lhs free dims, N = product of the rhs free dims, K = product of the
// contracting dims (in the order listed). D has dims batch..., lhs free..., rhs free...
// (StableHLO).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fp8dot/dtype.h"
#include "fp8dot/precision.h"
#include "fp8dot/status.h"
#include "fp8dot/tensor.h"

namespace fp8dot {

// Whether a layout as TensorSpec and OperandScale give it (a minor_to_major permutation; empty
// means row-major) is row-major for a tensor of `rank` dims.
bool IsRowMajorLayout(const std::vector<int64_t>& minor_to_major, size_t rank);

struct TensorSpec {
  DType dtype = DType::kF32;
  Dims dims;
  std::vector<int64_t> minor_to_major;  // empty means row-major

  static TensorSpec Of(const HostTensor& tensor) {
    return {tensor.dtype(), tensor.dims(), tensor.minor_to_major()};
  }
  std::string ToString() const;  // "f8e4m3fn[64,128]{1,0}"
};

// StableHLO dot_general dimension numbers.
struct DotDimensionNumbers {
  std::vector<int64_t> lhs_batch_dimensions;
  std::vector<int64_t> rhs_batch_dimensions;
  std::vector<int64_t> lhs_contracting_dimensions;
  std::vector<int64_t> rhs_contracting_dimensions;

  // A[M,K] . B[K,N], optionally with one leading batch dim on both.
  static DotDimensionNumbers Matmul(bool batched = false);
};

// How one operand is scaled. Shapes are in canonical GEMM terms (f32 elements), scales are shared
// by all batch entries:
//   mode          lhs (A: M x K)            rhs (B: K x N)
//   kNone         no scale (1.0)            no scale
//   kTensor       []  (or [1])              [] (or [1])
//   kOuterVector  [M]   one per row         [N]   one per column
//   kBlock1x128   [M, ⌈K/128⌉]              [⌈K/128⌉, N]
//   kBlock128x128 [⌈M/128⌉, ⌈K/128⌉]        [⌈K/128⌉, ⌈N/128⌉]
// (K/128 below is short for ⌈K/128⌉.) Blocked dims need not be multiples of 128: a partial last
// block (DeepSeek-V3's N = 2112) has a scale like any other, applied to the elements it has.
// Block modes need promoted accumulation; the pairs 1x128 x 1x128, 1x128 x 128x128 and
// 128x128 x 1x128 are allowed (cuBLASLt's rule).
enum class ScaleMode { kNone, kTensor, kOuterVector, kBlock1x128, kBlock128x128 };
const char* ScaleModeName(ScaleMode mode);  // "none", "tensor", "outer", "1x128", "128x128"
StatusOr<ScaleMode> ParseScaleMode(std::string_view text);
bool IsBlockScale(ScaleMode mode);

struct OperandScale {
  ScaleMode mode = ScaleMode::kNone;
  Dims dims;  // of the f32 scale tensor
  // Layout of the scale tensor (a permutation of its dims, as TensorSpec::minor_to_major);
  // empty means row-major. {0, 1} on a lhs 1x128 scale [M, K/128] is column-major, i.e. M-major
  // ((m, kb) at kb*M + m): the layout cuBLASLt's VEC128_32F reads, which the CUDA backend then
  // uses in place, without a reordering launch. The same holds for {0, 1} on a rhs 128x128 scale
  // [K/128, N/128] when K/128 is a multiple of 4 (docs/cuda-backend.md, "Scales").
  std::vector<int64_t> minor_to_major;
};

// XLA's gemm_backend_config epilogue names.
enum class Epilogue { kDefault, kBias, kRelu, kBiasRelu, kGelu, kBiasGelu };
const char* EpilogueName(Epilogue epilogue);  // "DEFAULT", "BIAS", "RELU", ...
StatusOr<Epilogue> ParseEpilogue(std::string_view text);
bool EpilogueHasBias(Epilogue epilogue);

struct DotSpec {
  TensorSpec lhs;
  TensorSpec rhs;
  DotDimensionNumbers dimension_numbers = DotDimensionNumbers::Matmul();
  PrecisionConfig precision_config;
  DType output_type = DType::kF32;

  OperandScale lhs_scale;
  OperandScale rhs_scale;

  double alpha = 1.0;
  double beta = 0.0;            // needs c when non-zero
  std::optional<TensorSpec> c;  // dims of D; type of D, or bf16/f16 when D is FP8
  Epilogue epilogue = Epilogue::kDefault;
  std::optional<TensorSpec> bias;  // dims = the rhs free dims (one value per output column)
  bool output_scale = false;       // scale_d, f32 scalar; FP8 outputs only
  bool compute_amax = false;       // amax of D before scale_d
};

// The batched GEMM a valid DotSpec describes.
struct CanonicalDot {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  Dims output_dims;                          // batch..., lhs free..., rhs free...
  std::vector<int64_t> lhs_free_dimensions;  // increasing
  std::vector<int64_t> rhs_free_dimensions;
  AccumulationMode accumulation = AccumulationMode::kF32;
};

// Every field of `spec` as text: two specs have the same key exactly when they describe the same
// dot (a row-major scale layout, given or not, keys the same). The one key plans are cached and
// tuned by; adding a field to DotSpec fails to compile until the key covers it.
std::string DotSpecKey(const DotSpec& spec);

// Checks everything DESIGN.md §1.4 lists and resolves the accumulation mode. Every error names
// the offending part and value, e.g. "lhs contracting dim 1 has size 64 but rhs contracting
// dim 0 has size 32".
StatusOr<CanonicalDot> ValidateDotSpec(const DotSpec& spec);

// Expected dims of an operand's scale tensor for a mode (see the table above).
Dims ExpectedScaleDims(ScaleMode mode, bool is_lhs, const CanonicalDot& dot);

// The layout of a `mode` scale that the CUDA backend's engines read in place, without reordering
// it at every run (docs/cuda-backend.md, "Scales"): {0, 1} for a lhs 1x128 scale [M, K/128]
// (M-major) and a rhs 128x128 scale [K/128, N/128] (K-blocks side by side); row-major ({}) for
// every other one, rhs 1x128 [K/128, N] included (N-major so). cuBLASLt still reorders where it
// pads M or N, and 128x128 blocks where K/128 % 4 != 0. Framework bindings ask their compilers
// to hand scales over in it (fp8dot.jax).
std::vector<int64_t> InPlaceScaleLayout(ScaleMode mode, bool is_lhs);

// How many 128-element scale blocks cover `extent` elements: ⌈extent/128⌉ (the last may be
// partial).
inline constexpr int64_t kScaleBlockSize = 128;
inline constexpr int64_t ScaleBlockCount(int64_t extent) {
  return (extent + kScaleBlockSize - 1) / kScaleBlockSize;
}

// The scale mode whose shape (the table above) `scale_dims` has, for callers that pass a scale
// tensor without naming its mode (the Python API). Modes are tried in the table's order, so a
// shape two modes share means the same scaling either way ([1] is a tensor scale, not one row;
// [1, K/128] for M = 1 is 1x128). The error lists every mode's expected shape.
StatusOr<ScaleMode> InferScaleMode(const Dims& scale_dims, bool is_lhs, const CanonicalDot& dot);

// True when cuBLASLt runs this FP8 type pair natively (everything but e5m2 x e5m2).
bool IsNativeFp8Pair(DType lhs, DType rhs);

}  // namespace fp8dot
