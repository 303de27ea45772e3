// Quantisation to FP8 for the GEMMs fp8dot runs: a high-precision matrix in, its FP8 copy (and,
// in the same pass, its transpose) and the dequantisation scales out.
//
//   input  x [rows, cols], row-major, f32 / bf16 / f16; cols is the GEMM's contracting dim
//   output q [rows, cols] FP8, row-major          x ≈ q · scale       (spec.row_major)
//          qᵀ [cols, rows] FP8, row-major         xᵀ ≈ qᵀ · scaleᵀ    (spec.transposed)
//
// The scales are the ones fp8dot's scaled dots take for a contracting-last operand
// (dot_spec.h), one per group of x:
//
//   granularity  scale of q                    scale of qᵀ (its contracting dim is `rows`)
//   kTensor      f32[] (one value)             the same value
//   kRow         f32[rows]                     f32[cols]                 (own scales)
//   k1x128       f32[rows, ⌈cols/128⌉]          f32[cols, ⌈rows/128⌉]      (own scales)
//   k128x128     f32[⌈rows/128⌉, ⌈cols/128⌉]    that array transposed (a view: no own buffer)
//
// The rule, the same on every backend and bit for bit (src/dot/quantize_rule.h):
//   amax  = max |x| over the group (NaN if the group holds a NaN)
//   scale = amax · 2^margin / max(FP8 type) in f32, or 1 when amax is not > 0
//   q     = x · (1 / scale) in f32 (the reciprocal correctly rounded, one multiplication),
//           rounded to nearest even, saturated to ±max A partial last
// block (cols or rows not a multiple of 128) takes the amax of the elements it has.
//
// Backends: QuantizeOnCpu (cpu_backend.h, the reference) and QuantizeOnCuda (cuda_backend.h).
//
// 1x128 scales keep their shapes in either layout of spec.scale_layout; only their order in
// memory differs. kRowMajor: a row's K-blocks side by side. kColumnMajor: a K-block's rows side
// by side ([⌈cols/128⌉][rows] in memory for q's, [⌈rows/128⌉][cols] for qᵀ's): the layout both
// GEMM engines read in place (cuBLASLt's VEC128 scales where it pads no rows; the own kernel's
// copy engine, when the operand's rows are a multiple of 4), so a GEMM that takes them does not
// reorder them first.
//
// kTensor with a given scale (delayed scaling) casts with that scale instead, and writes it as
// q's scale; a given scale that is not a positive finite number (delayed scaling's first step,
// whose history has no amax yet) is replaced by the input's own scale, as without one, so a
// layer never needs a pass of its own to find out. `amax` can report max |x| of the whole input
// in any mode (for a delayed-scaling history).
//
// An activation (spec.activation) makes x a function of the inputs, computed on the way in so
// that x itself is never written: kSwiGlu quantises x = SiLU(input) · up (the product a gated
// MLP hands its down projection, from its gate and up projections), kGelu x = GELU(input) with
// GELU's tanh form (the activation between an MLP's two projections; jax.nn.gelu's default,
// torch's approximate="tanh"). Each is computed in f32 by src/dot/activation_rule.h and rounded
// to the input type, as the framework would store it; everything above then applies to that x.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fp8dot/dtype.h"
#include "fp8dot/status.h"

namespace fp8dot {

enum class ScaleGranularity { kTensor, kRow, k1x128, k128x128 };

// What is quantised: the input itself, or an activation of it (above).
// (One byte: it rides in the padding of the CUDA kernels' parameter blocks.)
enum class QuantizeActivation : uint8_t { kNone, kSwiGlu, kGelu };
// Whether the activation reads QuantizeBuffers::up besides the input (SwiGLU's second input).
constexpr bool QuantizeActivationTakesUp(QuantizeActivation activation) {
  return activation == QuantizeActivation::kSwiGlu;
}

// How 1x128 scales lie in memory (above); the other granularities have one layout.
enum class ScaleLayout { kRowMajor, kColumnMajor };

const char* ScaleGranularityName(
    ScaleGranularity granularity);  // "tensor", "row", "1x128", "128x128"
StatusOr<ScaleGranularity> ParseScaleGranularity(const std::string& name);
const char* ScaleLayoutName(ScaleLayout layout);  // "row-major", "column-major"
StatusOr<ScaleLayout> ParseScaleLayout(const std::string& name);
const char* QuantizeActivationName(QuantizeActivation activation);  // "none", "swiglu", "gelu"
StatusOr<QuantizeActivation> ParseQuantizeActivation(const std::string& name);

struct QuantizeSpec {
  DType input_type = DType::kBF16;  // f32, bf16 or f16
  DType output_type = DType::kF8E4M3FN;
  int64_t rows = 0, cols = 0;
  ScaleGranularity granularity = ScaleGranularity::kTensor;
  bool row_major = true;      // write q
  bool transposed = false;    // write qᵀ
  bool given_scale = false;   // kTensor only: cast with QuantizeBuffers::given_scale (if usable)
  int margin = 0;             // scale = amax · 2^margin / max; |margin| <= 64
  bool compute_amax = false;  // write max |x| of the whole input to QuantizeBuffers::amax
  ScaleLayout scale_layout = ScaleLayout::kRowMajor;  // kColumnMajor: k1x128 only
  QuantizeActivation activation = QuantizeActivation::kNone;
};

// Pointers for one quantisation: host pointers for the CPU backend, device pointers for CUDA.
// Each is required exactly when the spec asks for it (QuantizeOutputs says which), else null.
struct QuantizeBuffers {
  const void* input = nullptr;         // [rows, cols], row-major, dense (kSwiGlu: the gate)
  const float* given_scale = nullptr;  // one f32, when spec.given_scale
  void* output = nullptr;              // q, when spec.row_major
  float* scale = nullptr;              // q's scales (with a given scale: the one cast with)
  void* transposed_output = nullptr;   // qᵀ, when spec.transposed
  float* transposed_scale = nullptr;   // qᵀ's own scales (kRow, k1x128 with spec.transposed)
  float* amax = nullptr;               // one f32, when spec.compute_amax
  const void* up = nullptr;            // kSwiGlu only: like input, the up projection
};

// What a valid spec produces: which buffers it needs and the scale arrays' shapes.
struct QuantizeOutputs {
  std::vector<int64_t> output_dims;             // {rows, cols}; empty when !row_major
  std::vector<int64_t> scale_dims;              // {} = one value
  bool has_scale = false;                       // the kernel writes q's scales (always)
  std::vector<int64_t> transposed_output_dims;  // {cols, rows}; empty when !transposed
  std::vector<int64_t> transposed_scale_dims;
  bool has_transposed_scale = false;  // qᵀ has scales of its own (kRow, k1x128)
  // The scales' layout as dot_spec.h writes layouts (minor-to-major; {} = row-major): {0, 1}
  // for column-major 1x128 scales, q's and qᵀ's alike. A scaled dot given a scale with this
  // layout reads it as the quantisation wrote it.
  std::vector<int64_t> scale_minor_to_major;
};

// Checks the spec (types, extents, options that go together) and says what it produces.
// Errors name the field that is wrong.
StatusOr<QuantizeOutputs> ValidateQuantizeSpec(const QuantizeSpec& spec);

// Checks that `buffers` has exactly the pointers `spec` needs.
Status CheckQuantizeBuffers(const QuantizeSpec& spec, const QuantizeBuffers& buffers);

}  // namespace fp8dot
