// XLA FFI handlers: one scaled dot_general on XLA's buffers, the DotSpec made by MakeDotSpec from
// the buffers' types and shapes and the call's attributes (the layout is in ffi_handlers.h).
#include "jax/ffi_handlers.h"

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bindings/dot_pointers.h"
#include "bindings/dot_request.h"
#include "fp8dot/run_dot.h"
#include "xla/ffi/api/ffi.h"
#ifdef FP8DOT_HAVE_CUDA
#include "fp8dot/cuda_backend.h"
#endif

namespace ffi = xla::ffi;

namespace fp8dot {
namespace {

ffi::Error ToFfiError(const Status& status) {
  const ffi::ErrorCode code = status.code() == StatusCode::kInvalidArgument
                                  ? ffi::ErrorCode::kInvalidArgument
                                  : ffi::ErrorCode::kInternal;
  return ffi::Error(code, "fp8dot_scaled_dot: " + status.message());
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
  const auto dims = buffer.dimensions();
  // The layout spelled out as the Python binding's LayoutFromStrides spells it, so that the
  // DotSpec checked while tracing keys the same plan as the one run here.
  return TensorSpec{dtype, Dims(dims.begin(), dims.end()),
                    RowMajorLayout(static_cast<int64_t>(dims.size()))};
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
  size_t output_bytes = 0;
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
  if (lhs_scale_mode != "none") {
    FP8_RETURN_IF_ERROR(take("lhs_scale", request.lhs_scale, call.pointers.lhs_scale));
    request.lhs_scale_mode = lhs_scale_mode;
  }
  if (rhs_scale_mode != "none") {
    FP8_RETURN_IF_ERROR(take("rhs_scale", request.rhs_scale, call.pointers.rhs_scale));
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
  call.output_bytes = (*output)->size_bytes();
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
  FP8_ASSIGN_OR_RETURN(const HostDotViews views, HostDotViews::Make(call.spec, call.pointers));
  FP8_ASSIGN_OR_RETURN(DotResult result,
                       RunDot(Backend::kCpuEmulation, call.spec, views.arguments()));
  std::memcpy(call.output, result.output.data(), call.output_bytes);
  if (call.amax != nullptr) *call.amax = static_cast<float>(result.amax.value_or(0.0));
  return OkStatus();
}

ffi::Error ScaledDotCpu(ffi::RemainingArgs args, ffi::RemainingRets rets,
                        ffi::Dictionary attributes) {
  StatusOr<ScaledDotCall> call = DecodeCall(args, rets, attributes);
  if (!call.ok()) return ToFfiError(call.status());
  if (Status status = RunOnHost(*call); !status.ok()) return ToFfiError(status);
  return ffi::Error::Success();
}

#ifdef FP8DOT_HAVE_CUDA
ffi::Error ScaledDotCuda(CudaStream stream, ffi::RemainingArgs args, ffi::RemainingRets rets,
                         ffi::Dictionary attributes) {
  StatusOr<ScaledDotCall> call = DecodeCall(args, rets, attributes);
  if (!call.ok()) return ToFfiError(call.status());
  StatusOr<CudaDotPlan*> plan = GetCachedCudaDotPlan(call->spec);
  if (!plan.ok()) return ToFfiError(plan.status());
  const CudaDotBuffers buffers = CudaBuffersOf(call->pointers, call->output, call->amax);
  if (Status status = (*plan)->Run(buffers, stream); !status.ok()) return ToFfiError(status);
  return ffi::Error::Success();
}
#endif

}  // namespace
}  // namespace fp8dot

XLA_FFI_DEFINE_HANDLER_SYMBOL(Fp8dotScaledDotCpu, fp8dot::ScaledDotCpu,
                              xla::ffi::Ffi::Bind().RemainingArgs().RemainingRets().Attrs());

#ifdef FP8DOT_HAVE_CUDA
XLA_FFI_DEFINE_HANDLER_SYMBOL(Fp8dotScaledDotCuda, fp8dot::ScaledDotCuda,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<xla::ffi::PlatformStream<fp8dot::CudaStream>>()
                                  .RemainingArgs()
                                  .RemainingRets()
                                  .Attrs(),
                              {xla::ffi::Traits::kCmdBufferCompatible});
#endif
