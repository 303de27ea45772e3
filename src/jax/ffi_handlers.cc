// XLA FFI handlers: one scaled dot_general on XLA's buffers, the DotSpec made by MakeDotSpec from
// the buffers' types and shapes and the call's attributes (the layout is in ffi_handlers.h).
#include "jax/ffi_handlers.h"

#include <algorithm>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "bindings/dot_pointers.h"
#include "bindings/dot_request.h"
#include "fp8dot/cpu_backend.h"
#include "fp8dot/cuda_backend.h"
#include "fp8dot/quantize.h"
#include "fp8dot/run_dot.h"
#include "fp8dot/tensor.h"
#include "xla/ffi/api/ffi.h"
#ifdef FP8DOT_HAVE_CUDA
#include "fp8dot/cuda_backend.h"
#endif

namespace ffi = xla::ffi;

namespace fp8dot {
namespace {

ffi::Error ToFfiError(const Status& status, const char* target = "fp8dot_scaled_dot") {
  const ffi::ErrorCode code = status.code() == StatusCode::kInvalidArgument
                                  ? ffi::ErrorCode::kInvalidArgument
                                  : ffi::ErrorCode::kInternal;
  return ffi::Error(code, std::string(target) + ": " + status.message());
}

// XLA does not catch C++ exceptions from a handler (an allocation or thread failure would end
// the process): they come back as the call's error.
template <typename Body>
ffi::Error Guarded(const char* target, const Body& body) {
  try {
    return body();
  } catch (const std::exception& exception) {
    return ffi::Error(ffi::ErrorCode::kInternal, std::string(target) + ": " + exception.what());
  } catch (...) {
    return ffi::Error(ffi::ErrorCode::kInternal, std::string(target) + ": an unknown exception");
  }
}

StatusOr<DType> DTypeOfBuffer(ffi::DataType type, const char* what) {
  switch (type) {
    case ffi::DataType::F8E4M3FN:
      return DType::kF8E4M3FN;
    case ffi::DataType::F8E5M2:
      return DType::kF8E5M2;
    case ffi::DataType::BF16:
      return DType::kBF16;
    case ffi::DataType::F16:
      return DType::kF16;
    case ffi::DataType::F32:
      return DType::kF32;
    case ffi::DataType::F64:
      return DType::kF64;
    default:
      return InvalidArgument("%s has XLA element type %d, which fp8dot does not take", what,
                             static_cast<int>(type));
  }
}

StatusOr<TensorSpec> SpecOfBuffer(const ffi::AnyBuffer& buffer, const char* what) {
  FP8_ASSIGN_OR_RETURN(DType dtype, DTypeOfBuffer(buffer.element_type(), what));
  const auto extents = buffer.dimensions();
  Dims dims(extents.begin(), extents.end());
  // Row-major. The Python binding spells the same memory by LayoutFromStrides ({0, 1} for an
  // [M, 1] scale); DotSpecKey keys both spellings alike, so the DotSpec checked while tracing
  // finds the plan run here (a plan made here instead would be made inside a command buffer's
  // capture).
  return TensorSpec{dtype, std::move(dims), {}};
}

template <typename T>
StatusOr<T> Attribute(const ffi::Dictionary& attributes, const char* name) {
  ffi::ErrorOr<T> value = attributes.get<T>(name);
  if (value.has_error()) {
    return InvalidArgument("attribute %s is missing or has the wrong type (%s)", name,
                           value.error().message().c_str());
  }
  return *value;
}

StatusOr<std::vector<int64_t>> DimsAttribute(const ffi::Dictionary& attributes, const char* name) {
  FP8_ASSIGN_OR_RETURN(ffi::Span<const int64_t> span,
                       Attribute<ffi::Span<const int64_t>>(attributes, name));
  return std::vector<int64_t>(span.begin(), span.end());
}

StatusOr<std::string> StringAttribute(const ffi::Dictionary& attributes, const char* name) {
  FP8_ASSIGN_OR_RETURN(std::string_view text, Attribute<std::string_view>(attributes, name));
  return std::string(text);
}

// One call's buffers in the order ffi_handlers.h lists, and the DotSpec they and the attributes
// describe.
struct ScaledDotCall {
  DotSpec spec;
  DotPointers pointers;
  void* output = nullptr;
  float* amax = nullptr;
};

StatusOr<ScaledDotCall> DecodeCall(const ffi::RemainingArgs& args, const ffi::RemainingRets& rets,
                                   const ffi::Dictionary& attributes) {
  ScaledDotCall call;
  DotRequest request;
  size_t next = 0;
  // The next operand's buffer, its spec into `spec` and its data pointer into `data`.
  auto take = [&](const char* what, std::optional<TensorSpec>& spec, const void*& data) -> Status {
    if (next >= args.size()) {
      return InvalidArgument("the call has %zu operands; %s is missing", args.size(), what);
    }
    ffi::ErrorOr<ffi::AnyBuffer> buffer = args.get<ffi::AnyBuffer>(next++);
    if (buffer.has_error()) return InvalidArgument("%s is not an array", what);
    FP8_ASSIGN_OR_RETURN(spec, SpecOfBuffer(*buffer, what));
    data = buffer->untyped_data();
    return OkStatus();
  };
  std::optional<TensorSpec> lhs, rhs, output_scale;
  FP8_RETURN_IF_ERROR(take("lhs", lhs, call.pointers.lhs));
  FP8_RETURN_IF_ERROR(take("rhs", rhs, call.pointers.rhs));
  request.lhs = *lhs;
  request.rhs = *rhs;

  DotDimensionNumbers dimension_numbers;
  FP8_ASSIGN_OR_RETURN(dimension_numbers.lhs_contracting_dimensions,
                       DimsAttribute(attributes, "lhs_contracting"));
  FP8_ASSIGN_OR_RETURN(dimension_numbers.rhs_contracting_dimensions,
                       DimsAttribute(attributes, "rhs_contracting"));
  FP8_ASSIGN_OR_RETURN(dimension_numbers.lhs_batch_dimensions,
                       DimsAttribute(attributes, "lhs_batch"));
  FP8_ASSIGN_OR_RETURN(dimension_numbers.rhs_batch_dimensions,
                       DimsAttribute(attributes, "rhs_batch"));
  request.dimension_numbers = dimension_numbers;
  FP8_ASSIGN_OR_RETURN(request.precision[0], StringAttribute(attributes, "lhs_precision"));
  FP8_ASSIGN_OR_RETURN(request.precision[1], StringAttribute(attributes, "rhs_precision"));
  FP8_ASSIGN_OR_RETURN(request.algorithm, StringAttribute(attributes, "algorithm"));
  FP8_ASSIGN_OR_RETURN(request.epilogue, StringAttribute(attributes, "epilogue"));
  FP8_ASSIGN_OR_RETURN(request.alpha, Attribute<double>(attributes, "alpha"));
  FP8_ASSIGN_OR_RETURN(request.beta, Attribute<double>(attributes, "beta"));
  FP8_ASSIGN_OR_RETURN(request.output_scale, Attribute<bool>(attributes, "output_scale"));
  FP8_ASSIGN_OR_RETURN(request.compute_amax, Attribute<bool>(attributes, "compute_amax"));
  FP8_ASSIGN_OR_RETURN(const bool has_bias, Attribute<bool>(attributes, "has_bias"));
  FP8_ASSIGN_OR_RETURN(const bool has_c, Attribute<bool>(attributes, "has_c"));

  FP8_ASSIGN_OR_RETURN(std::string lhs_scale_mode, StringAttribute(attributes, "lhs_scale_mode"));
  FP8_ASSIGN_OR_RETURN(std::string rhs_scale_mode, StringAttribute(attributes, "rhs_scale_mode"));
  // A scale's layout is the one the call declared for its operand (XLA lays the buffer out so);
  // calls without the attribute (programs compiled before fp8dot declared any) are row-major.
  auto take_scale = [&](const char* what, const char* layout_attribute,
                        std::optional<TensorSpec>& spec, const void*& data) -> Status {
    FP8_RETURN_IF_ERROR(take(what, spec, data));
    if (!attributes.contains(layout_attribute)) return OkStatus();
    FP8_ASSIGN_OR_RETURN(std::vector<int64_t> layout, DimsAttribute(attributes, layout_attribute));
    if (!layout.empty()) spec->minor_to_major = std::move(layout);
    return OkStatus();
  };
  if (lhs_scale_mode != "none") {
    FP8_RETURN_IF_ERROR(
        take_scale("lhs_scale", "lhs_scale_layout", request.lhs_scale, call.pointers.lhs_scale));
    request.lhs_scale_mode = lhs_scale_mode;
  }
  if (rhs_scale_mode != "none") {
    FP8_RETURN_IF_ERROR(
        take_scale("rhs_scale", "rhs_scale_layout", request.rhs_scale, call.pointers.rhs_scale));
    request.rhs_scale_mode = rhs_scale_mode;
  }
  if (has_bias) FP8_RETURN_IF_ERROR(take("bias", request.bias, call.pointers.bias));
  if (has_c) FP8_RETURN_IF_ERROR(take("c", request.c, call.pointers.c));
  if (request.output_scale) {
    FP8_RETURN_IF_ERROR(take("output_scale", output_scale, call.pointers.output_scale));
    if (output_scale->dtype != DType::kF32 || ElementCount(output_scale->dims) != 1) {
      return InvalidArgument("output_scale must be one float32, got %s",
                             output_scale->ToString().c_str());
    }
  }
  if (next != args.size()) {
    return InvalidArgument("the call has %zu operands, the attributes describe %zu", args.size(),
                           next);
  }

  const size_t expected_results = request.compute_amax ? 2 : 1;
  if (rets.size() != expected_results) {
    return InvalidArgument("the call has %zu results, expected %zu", rets.size(), expected_results);
  }
  ffi::ErrorOr<ffi::Result<ffi::AnyBuffer>> output = rets.get<ffi::AnyBuffer>(0);
  if (output.has_error()) return InvalidArgument("the output is not an array");
  FP8_ASSIGN_OR_RETURN(TensorSpec output_spec, SpecOfBuffer(**output, "the output"));
  request.output_type = output_spec.dtype;
  FP8_ASSIGN_OR_RETURN(call.spec, MakeDotSpec(request));
  FP8_ASSIGN_OR_RETURN(CanonicalDot dot, ValidateDotSpec(call.spec));
  if (output_spec.dims != dot.output_dims) {
    return InvalidArgument("the output is %s, the dot gives %s%s", output_spec.ToString().c_str(),
                           DTypeName(call.spec.output_type), DimsToString(dot.output_dims).c_str());
  }
  call.output = (*output)->untyped_data();
  if (request.compute_amax) {
    ffi::ErrorOr<ffi::Result<ffi::AnyBuffer>> amax = rets.get<ffi::AnyBuffer>(1);
    if (amax.has_error() || (*amax)->element_type() != ffi::DataType::F32 ||
        (*amax)->element_count() != 1) {
      return InvalidArgument("the amax result must be f32[]");
    }
    call.amax = static_cast<float*>((*amax)->untyped_data());
  }
  return call;
}

Status RunOnHost(const ScaledDotCall& call) {
  FP8_ASSIGN_OR_RETURN(const std::optional<double> amax,
                       RunDotInto(Backend::kCpuEmulation, call.spec, call.pointers, call.output));
  if (call.amax != nullptr) *call.amax = static_cast<float>(amax.value_or(0.0));
  return OkStatus();
}

ffi::Error ScaledDotCpu(ffi::RemainingArgs args, ffi::RemainingRets rets,
                        ffi::Dictionary attributes) {
  return Guarded("fp8dot_scaled_dot", [&]() -> ffi::Error {
    StatusOr<ScaledDotCall> call = DecodeCall(args, rets, attributes);
    if (!call.ok()) return ToFfiError(call.status());
    if (Status status = RunOnHost(*call); !status.ok()) return ToFfiError(status);
    return ffi::Error::Success();
  });
}

#ifdef FP8DOT_HAVE_CUDA
// The options of the plan the call's Dot made while tracing: the autotuning the process had
// then (fp8dot.set_autotune), which the call carries, not the one it has now.
StatusOr<CudaDotOptions> PlanOptionsOf(const ffi::Dictionary& attributes) {
  FP8_ASSIGN_OR_RETURN(const int64_t candidates,
                       Attribute<int64_t>(attributes, "autotune_candidates"));
  FP8_ASSIGN_OR_RETURN(std::string cache, StringAttribute(attributes, "autotune_cache"));
  if (candidates < 0 || candidates > std::numeric_limits<int>::max()) {
    return InvalidArgument("autotune_candidates %lld is not a number of candidates",
                           static_cast<long long>(candidates));
  }
  return AutotunedCudaDotOptions(
      {.candidates = static_cast<int>(candidates), .cache_path = std::move(cache)});
}

ffi::Error ScaledDotCuda(CudaStream stream, ffi::RemainingArgs args, ffi::RemainingRets rets,
                         ffi::Dictionary attributes) {
  return Guarded("fp8dot_scaled_dot", [&]() -> ffi::Error {
    StatusOr<ScaledDotCall> call = DecodeCall(args, rets, attributes);
    if (!call.ok()) return ToFfiError(call.status());
    StatusOr<CudaDotOptions> options = PlanOptionsOf(attributes);
    if (!options.ok()) return ToFfiError(options.status());
    StatusOr<CudaDotPlan*> plan = GetCachedCudaDotPlan(call->spec, *options);
    if (!plan.ok()) return ToFfiError(plan.status());
    const CudaDotBuffers buffers = CudaBuffersOf(call->pointers, call->output, call->amax);
    if (Status status = (*plan)->Run(buffers, stream); !status.ok()) return ToFfiError(status);
    return ffi::Error::Success();
  });
}
#endif

// ---- fp8dot_quantize -----------------------------------------------------------------------

constexpr char kQuantizeTarget[] = "fp8dot_quantize";

// One quantisation call: the spec from x's buffer, the attributes and the first FP8 result, and
// the buffers in ffi_handlers.h's order.
struct QuantizeCall {
  QuantizeSpec spec;
  QuantizeBuffers buffers;
};

StatusOr<QuantizeCall> DecodeQuantizeCall(const ffi::RemainingArgs& args,
                                          const ffi::RemainingRets& rets,
                                          const ffi::Dictionary& attributes) {
  QuantizeCall call;
  QuantizeSpec& spec = call.spec;
  FP8_ASSIGN_OR_RETURN(std::string granularity, StringAttribute(attributes, "granularity"));
  FP8_ASSIGN_OR_RETURN(spec.granularity, ParseScaleGranularity(granularity));
  if (attributes.contains("scale_layout")) {  // absent: row-major (programs from before it)
    FP8_ASSIGN_OR_RETURN(std::string scale_layout, StringAttribute(attributes, "scale_layout"));
    FP8_ASSIGN_OR_RETURN(spec.scale_layout, ParseScaleLayout(scale_layout));
  }
  if (attributes.contains("activation")) {  // absent: none (programs from before it)
    FP8_ASSIGN_OR_RETURN(std::string activation, StringAttribute(attributes, "activation"));
    FP8_ASSIGN_OR_RETURN(spec.activation, ParseQuantizeActivation(activation));
  }
  FP8_ASSIGN_OR_RETURN(spec.row_major, Attribute<bool>(attributes, "row_major"));
  FP8_ASSIGN_OR_RETURN(spec.transposed, Attribute<bool>(attributes, "transposed"));
  FP8_ASSIGN_OR_RETURN(spec.given_scale, Attribute<bool>(attributes, "given_scale"));
  FP8_ASSIGN_OR_RETURN(spec.compute_amax, Attribute<bool>(attributes, "compute_amax"));
  FP8_ASSIGN_OR_RETURN(const int64_t margin, Attribute<int64_t>(attributes, "margin"));
  spec.margin = static_cast<int>(std::clamp<int64_t>(margin, -1000, 1000));

  const bool takes_up = QuantizeActivationTakesUp(spec.activation);
  const size_t expected_args = 1 + (takes_up ? 1 : 0) + (spec.given_scale ? 1 : 0);
  if (args.size() != expected_args) {
    return InvalidArgument("the call has %zu operands, expected %zu", args.size(), expected_args);
  }
  ffi::ErrorOr<ffi::AnyBuffer> x = args.get<ffi::AnyBuffer>(0);
  if (x.has_error()) return InvalidArgument("x is not an array");
  FP8_ASSIGN_OR_RETURN(spec.input_type, DTypeOfBuffer(x->element_type(), "x"));
  const auto dims = x->dimensions();
  if (dims.size() != 2) return InvalidArgument("x must be a matrix, got rank %zu", dims.size());
  spec.rows = dims[0];
  spec.cols = dims[1];
  call.buffers.input = x->untyped_data();
  if (takes_up) {
    ffi::ErrorOr<ffi::AnyBuffer> up = args.get<ffi::AnyBuffer>(1);
    if (up.has_error() || up->element_type() != x->element_type() ||
        !std::equal(up->dimensions().begin(), up->dimensions().end(), dims.begin(), dims.end())) {
      return InvalidArgument("up must be an array of x's shape and type");
    }
    call.buffers.up = up->untyped_data();
  }
  if (spec.given_scale) {
    ffi::ErrorOr<ffi::AnyBuffer> scale = args.get<ffi::AnyBuffer>(takes_up ? 2 : 1);
    if (scale.has_error() || scale->element_type() != ffi::DataType::F32 ||
        scale->element_count() != 1) {
      return InvalidArgument("the given scale must be one float32");
    }
    call.buffers.given_scale = static_cast<const float*>(scale->untyped_data());
  }

  // Results, in order: q, scale, q_t, scale_t, amax (each when the spec produces it).
  size_t next = 0;
  auto take = [&](const char* what, const std::vector<int64_t>& expected_dims,
                  std::optional<DType> expected_type, void*& data) -> Status {
    if (next >= rets.size()) return InvalidArgument("result %s is missing", what);
    ffi::ErrorOr<ffi::Result<ffi::AnyBuffer>> result = rets.get<ffi::AnyBuffer>(next++);
    if (result.has_error()) return InvalidArgument("result %s is not an array", what);
    FP8_ASSIGN_OR_RETURN(DType type, DTypeOfBuffer((*result)->element_type(), what));
    const auto result_dims = (*result)->dimensions();
    if (std::vector<int64_t>(result_dims.begin(), result_dims.end()) != expected_dims ||
        (expected_type && type != *expected_type)) {
      return InvalidArgument("result %s is %s%s, expected %s", what, DTypeName(type),
                             DimsToString(Dims(result_dims.begin(), result_dims.end())).c_str(),
                             DimsToString(expected_dims).c_str());
    }
    if (!expected_type) spec.output_type = type;
    data = (*result)->untyped_data();
    return OkStatus();
  };
  // The result shapes do not depend on the FP8 type, which comes from the first FP8 result.
  spec.output_type = DType::kF8E4M3FN;
  FP8_ASSIGN_OR_RETURN(QuantizeOutputs outputs, ValidateQuantizeSpec(spec));
  void* scale = nullptr;
  void* transposed_scale = nullptr;
  void* amax = nullptr;
  if (spec.row_major) {
    FP8_RETURN_IF_ERROR(take("q", outputs.output_dims, std::nullopt, call.buffers.output));
  }
  if (outputs.has_scale) FP8_RETURN_IF_ERROR(take("scale", outputs.scale_dims, DType::kF32, scale));
  if (spec.transposed) {
    std::optional<DType> type;  // q_t's type must be q's, when there is a q
    if (spec.row_major) type = spec.output_type;
    FP8_RETURN_IF_ERROR(
        take("q_t", outputs.transposed_output_dims, type, call.buffers.transposed_output));
  }
  if (outputs.has_transposed_scale) {
    FP8_RETURN_IF_ERROR(
        take("scale_t", outputs.transposed_scale_dims, DType::kF32, transposed_scale));
  }
  if (spec.compute_amax) FP8_RETURN_IF_ERROR(take("amax", {}, DType::kF32, amax));
  if (next != rets.size()) {
    return InvalidArgument("the call has %zu results, the attributes describe %zu", rets.size(),
                           next);
  }
  call.buffers.scale = static_cast<float*>(scale);
  call.buffers.transposed_scale = static_cast<float*>(transposed_scale);
  call.buffers.amax = static_cast<float*>(amax);
  return call;  // QuantizeOnCpu/QuantizeOnCuda check the spec with the real FP8 type
}

ffi::Error QuantizeCpu(ffi::RemainingArgs args, ffi::RemainingRets rets,
                       ffi::Dictionary attributes) {
  return Guarded(kQuantizeTarget, [&]() -> ffi::Error {
    StatusOr<QuantizeCall> call = DecodeQuantizeCall(args, rets, attributes);
    if (!call.ok()) return ToFfiError(call.status(), kQuantizeTarget);
    if (Status status = QuantizeOnCpu(call->spec, call->buffers); !status.ok()) {
      return ToFfiError(status, kQuantizeTarget);
    }
    return ffi::Error::Success();
  });
}

#ifdef FP8DOT_HAVE_CUDA
ffi::Error QuantizeCuda(CudaStream stream, ffi::RemainingArgs args, ffi::RemainingRets rets,
                        ffi::Dictionary attributes) {
  return Guarded(kQuantizeTarget, [&]() -> ffi::Error {
    StatusOr<QuantizeCall> call = DecodeQuantizeCall(args, rets, attributes);
    if (!call.ok()) return ToFfiError(call.status(), kQuantizeTarget);
    if (Status status = QuantizeOnCuda(call->spec, call->buffers, stream); !status.ok()) {
      return ToFfiError(status, kQuantizeTarget);
    }
    return ffi::Error::Success();
  });
}
#endif

}  // namespace
}  // namespace fp8dot

// The handlers' signatures: every operand, result and attribute decoded by the handler itself;
// the CUDA ones also take XLA's stream. Both are command-buffer compatible once a dot's plan
// exists (fp8dot.jax makes it while tracing); quantisation never allocates.
namespace {
auto HostBinding() { return xla::ffi::Ffi::Bind().RemainingArgs().RemainingRets().Attrs(); }
#ifdef FP8DOT_HAVE_CUDA
auto CudaBinding() {
  return xla::ffi::Ffi::Bind()
      .Ctx<xla::ffi::PlatformStream<fp8dot::CudaStream>>()
      .RemainingArgs()
      .RemainingRets()
      .Attrs();
}
#endif
}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(Fp8dotScaledDotCpu, fp8dot::ScaledDotCpu, HostBinding());
XLA_FFI_DEFINE_HANDLER_SYMBOL(Fp8dotQuantizeCpu, fp8dot::QuantizeCpu, HostBinding());
#ifdef FP8DOT_HAVE_CUDA
XLA_FFI_DEFINE_HANDLER_SYMBOL(Fp8dotScaledDotCuda, fp8dot::ScaledDotCuda, CudaBinding(),
                              {xla::ffi::Traits::kCmdBufferCompatible});
XLA_FFI_DEFINE_HANDLER_SYMBOL(Fp8dotQuantizeCuda, fp8dot::QuantizeCuda, CudaBinding(),
                              {xla::ffi::Traits::kCmdBufferCompatible});
#endif
