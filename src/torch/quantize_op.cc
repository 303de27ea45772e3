// torch.ops.fp8dot.quantize as a C++ kernel (fp8dot/_torch_ops.so; src/torch/scaled_mm_op.cc
// says why and how): a matrix to FP8 with its scales, optionally its transpose in the same pass
// and its amax, through QuantizeOnCuda (one fused kernel) or QuantizeOnCpu (the same bytes).
// MakeQuantizeSpec (src/bindings) decides what is valid, as for fp8dot.quantize.
#include <torch/csrc/stable/library.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bindings/quantize_request.h"
#include "fp8dot/cpu_backend.h"
#include "fp8dot/cuda_backend.h"
#include "torch/tensor_bridge.h"

namespace fp8dot::torch_ops {
namespace {

constexpr char kOp[] = "quantize";

struct PreparedQuantize {
  QuantizeSpec spec;
  QuantizeOutputs outputs;
};

PreparedQuantize Prepare(const Tensor& x, ScalarType out_dtype, const std::string& granularity,
                         bool row_major, bool transposed, const Tensor* scale, int64_t margin,
                         bool compute_amax, const std::string& scale_layout, const Tensor* up,
                         const std::string& activation) {
  QuantizeRequest request;
  request.input = ValueOrFail(SpecOf(x, "quantize input"));
  if (up != nullptr) request.up = ValueOrFail(SpecOf(*up, "quantize up"));
  request.activation = activation;
  request.output_type = ValueOrFail(DTypeOf(out_dtype, "out_dtype"));
  request.granularity = granularity;
  request.row_major = row_major;
  request.transposed = transposed;
  if (scale != nullptr) {
    // Delayed scaling's scale: read as one float32.
    if (scale->scalar_type() != ScalarType::Float || scale->numel() != 1) {
      Fail("scale must be one float32 (a delayed-scaling scale), got " +
           TorchName(scale->scalar_type()) + " with " + std::to_string(scale->numel()) +
           " elements");
    }
    request.given_scale = true;
  }
  request.margin = static_cast<int>(margin);
  if (request.margin != margin) Fail("margin " + std::to_string(margin) + " is out of range");
  request.compute_amax = compute_amax;
  request.scale_layout = scale_layout;
  auto [spec, outputs] = ValueOrFail(MakeQuantizeSpec(request));
  return {spec, std::move(outputs)};
}

// (q, scale, q_t, scale_t, amax) of fp8dot.quantize; what the call does not produce (q without
// row_major, scale_t that is q's, amax not asked for) comes back as an empty
// [0] tensor, which fp8dot.torch.quantize turns into None or the shared scale. Column-major
// scales come back as column-major tensors (strides (1, rows)). With an activation, it is
// quantised instead of x: "swiglu" (or "" with `up`) SiLU(x) · up, "gelu" GELU(x)
// (QuantizeActivation).
std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor> Quantize(
    Tensor x, ScalarType out_dtype, std::string granularity, bool row_major, bool transposed,
    std::optional<Tensor> scale, int64_t margin, bool compute_amax, std::string scale_layout,
    std::optional<Tensor> up, std::string activation) {
  static auto* quantizations = new CallCache<PreparedQuantize>();
  const Tensor* given_scale = PointerOf(scale);
  const Tensor* up_input = PointerOf(up);
  const Placement placement = PlacementOf(kOp, x, {{"scale", given_scale}, {"up", up_input}});
  CheckStorages(kOp, {{"input", &x}, {"scale", given_scale}, {"up", up_input}});
  const CudaStream stream = placement.cuda ? CurrentCudaStream(kOp, placement) : nullptr;
  SignatureWriter signature;
  signature.AddTensor(&x);
  signature.AddInt(static_cast<int64_t>(out_dtype));
  signature.AddText(granularity);
  signature.AddInt(row_major);
  signature.AddInt(transposed);
  signature.AddTensor(given_scale);
  signature.AddInt(margin);
  signature.AddInt(compute_amax);
  signature.AddText(scale_layout);
  signature.AddTensor(up_input);
  signature.AddText(activation);
  const PreparedQuantize& prepared = quantizations->Find(signature.Take(), [&] {
    return Prepare(x, out_dtype, granularity, row_major, transposed, given_scale, margin,
                   compute_amax, scale_layout, up_input, activation);
  });
  const QuantizeSpec& spec = prepared.spec;
  const QuantizeOutputs& outputs = prepared.outputs;

  const std::vector<int64_t> absent = {0};
  auto output = [&](bool present, const std::vector<int64_t>& dims, DType dtype,
                    const std::vector<int64_t>& layout = {}) {
    return present ? EmptyTensor(dims, dtype, placement, layout)
                   : EmptyTensor(absent, dtype, placement);
  };
  Tensor q = output(spec.row_major, outputs.output_dims, spec.output_type);
  Tensor q_scale =
      output(outputs.has_scale, outputs.scale_dims, DType::kF32, outputs.scale_minor_to_major);
  Tensor q_t = output(spec.transposed, outputs.transposed_output_dims, spec.output_type);
  Tensor q_t_scale = output(outputs.has_transposed_scale, outputs.transposed_scale_dims,
                            DType::kF32, outputs.scale_minor_to_major);
  Tensor amax = output(spec.compute_amax, {}, DType::kF32);
  auto floats = [](bool present, Tensor& tensor) {
    return present ? static_cast<float*>(tensor.data_ptr()) : nullptr;
  };
  const QuantizeBuffers buffers{x.data_ptr(),
                                static_cast<const float*>(DataOf(given_scale)),
                                spec.row_major ? q.data_ptr() : nullptr,
                                floats(outputs.has_scale, q_scale),
                                spec.transposed ? q_t.data_ptr() : nullptr,
                                floats(outputs.has_transposed_scale, q_t_scale),
                                floats(spec.compute_amax, amax),
                                DataOf(up_input)};
  const Status status =
      placement.cuda ? QuantizeOnCuda(spec, buffers, stream) : QuantizeOnCpu(spec, buffers);
  if (!status.ok()) Fail(status.message());
  return {q, q_scale, q_t, q_t_scale, amax};
}

}  // namespace
}  // namespace fp8dot::torch_ops

STABLE_TORCH_LIBRARY_FRAGMENT(fp8dot, m) {
  m.def(
      "quantize(Tensor x, ScalarType out_dtype, str granularity, bool row_major, "
      "bool transposed, Tensor? scale, int margin, bool compute_amax, "
      "str scale_layout=\"row-major\", Tensor? up=None, str activation=\"\") "
      "-> (Tensor, Tensor, Tensor, Tensor, Tensor)");
}

STABLE_TORCH_LIBRARY_IMPL(fp8dot, CPU, m) {
  m.impl("quantize", TORCH_BOX(&fp8dot::torch_ops::Quantize));
}

STABLE_TORCH_LIBRARY_IMPL(fp8dot, CUDA, m) {
  m.impl("quantize", TORCH_BOX(&fp8dot::torch_ops::Quantize));
}
