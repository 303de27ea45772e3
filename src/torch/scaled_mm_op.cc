// fp8dot._torch_ops: torch.ops.fp8dot.scaled_mm as a C++ kernel, so that an eager call (and
// each call from a torch.compile'd graph) costs the dispatcher and one cached-plan lookup, not a
// Python function. python/fp8dot/torch/ops.py loads this library when it was built and defines
// the same op in Python otherwise; the schema, the fake kernel and the results are the same.
//
// Built against PyTorch's stable ABI (torch/csrc/stable, TORCH_TARGET_VERSION 2.10), so the one
// binary runs under every torch from 2.10 on, whichever version it was compiled against.
//
// Thin on purpose, as src/python/module.cc: tensor metadata becomes a DotRequest, MakeDotSpec
// and ValidateDotSpec decide everything, errors carry the library's one-line message (torch
// raises them as RuntimeError, as it does for its own operators).
#include <torch/csrc/inductor/aoti_torch/c/shim.h>
#include <torch/csrc/stable/accelerator.h>
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/tensor.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "bindings/dot_pointers.h"
#include "bindings/dot_request.h"
#include "fp8dot/cuda_backend.h"
#include "fp8dot/run_dot.h"

// Declared by shim.h only for CUDA builds of torch (USE_CUDA) and defined in libtorch_cuda:
// weak, so this library loads under a CPU-only torch too and says so when given a CUDA tensor.
extern "C" __attribute__((weak)) AOTITorchError aoti_torch_get_current_cuda_stream(
    int32_t device_index, void** ret_stream);

namespace fp8dot {
namespace {

using torch::headeronly::ScalarType;
using torch::stable::Tensor;

[[noreturn]] void Fail(const std::string& message) { throw std::runtime_error(message); }

template <typename T>
T ValueOrFail(StatusOr<T> result) {
  if (!result.ok()) Fail(result.status().message());
  return std::move(result).value();
}

// torch's spelling of the types a user may pass by mistake ("int8", not ScalarType's "Char").
std::string TorchName(ScalarType type) {
  switch (type) {
    case ScalarType::Byte:
      return "torch.uint8";
    case ScalarType::Char:
      return "torch.int8";
    case ScalarType::Short:
      return "torch.int16";
    case ScalarType::Int:
      return "torch.int32";
    case ScalarType::Long:
      return "torch.int64";
    case ScalarType::Bool:
      return "torch.bool";
    case ScalarType::Float:
      return "torch.float32";
    default:
      return torch::headeronly::toString(type);
  }
}

StatusOr<DType> DTypeOf(ScalarType type, const char* what) {
  switch (type) {
    case ScalarType::Float8_e4m3fn:
      return DType::kF8E4M3FN;
    case ScalarType::Float8_e5m2:
      return DType::kF8E5M2;
    case ScalarType::BFloat16:
      return DType::kBF16;
    case ScalarType::Half:
      return DType::kF16;
    case ScalarType::Float:
      return DType::kF32;
    case ScalarType::Double:
      return DType::kF64;
    default:
      return InvalidArgument(
          "%s: dtype %s is not one fp8dot reads (float8_e4m3fn, float8_e5m2, "
          "bfloat16, float16, float32, float64)",
          what, TorchName(type).c_str());
  }
}

int32_t ShimDType(DType type) {
  switch (type) {
    case DType::kF8E4M3FN:
      return aoti_torch_dtype_float8_e4m3fn();
    case DType::kF8E5M2:
      return aoti_torch_dtype_float8_e5m2();
    case DType::kBF16:
      return aoti_torch_dtype_bfloat16();
    case DType::kF16:
      return aoti_torch_dtype_float16();
    case DType::kF32:
      return aoti_torch_dtype_float32();
    case DType::kF64:
      return aoti_torch_dtype_float64();
  }
  return aoti_torch_dtype_float32();
}

std::vector<int64_t> ToVector(torch::headeronly::IntHeaderOnlyArrayRef values) {
  return {values.begin(), values.end()};
}

StatusOr<TensorSpec> SpecOf(const Tensor& tensor, const char* what) {
  FP8_ASSIGN_OR_RETURN(DType dtype, DTypeOf(tensor.scalar_type(), what));
  std::vector<int64_t> dims = ToVector(tensor.sizes());
  StatusOr<std::vector<int64_t>> layout = LayoutFromStrides(dims, ToVector(tensor.strides()));
  if (!layout.ok()) {
    return Status(layout.status().code(), std::string(what) + ": " + layout.status().message());
  }
  return TensorSpec{dtype, std::move(dims), std::move(layout).value()};
}

// Where a call's tensors live: one device for all of them, or an error naming the odd one.
struct Placement {
  bool cuda = false;
  int32_t device_index = -1;
};

Placement PlacementOf(const Tensor& lhs,
                      std::initializer_list<std::pair<const char*, const Tensor*>> others) {
  Placement placement{lhs.is_cuda(), lhs.is_cuda() ? lhs.get_device_index() : -1};
  if (!placement.cuda && !lhs.is_cpu()) Fail("scaled_mm: lhs must be a CPU or CUDA tensor");
  for (const auto& [what, tensor] : others) {
    if (tensor == nullptr) continue;
    const int32_t index = tensor->is_cuda() ? tensor->get_device_index() : -1;
    if (tensor->is_cuda() != placement.cuda || index != placement.device_index) {
      Fail(std::string("scaled_mm: ") + what +
           " is on another device than lhs: every tensor "
           "of one dot must be on the same device");
    }
  }
  return placement;
}

// One validated dot for a call signature, and its CUDA plan once it ran on the GPU.
struct PreparedDot {
  DotSpec spec;
  std::vector<int64_t> output_dims;
  CudaDotPlan* plan = nullptr;  // owned by the process-wide plan cache
};

// The call signature: every tensor's dtype, device, shape and strides, and the options. Bytes,
// not a structure: building it is a few memcpys, and a training step repeats few signatures.
class SignatureWriter {
 public:
  void Tensor(const torch::stable::Tensor* tensor) {
    if (tensor == nullptr) return Int(-1);
    Int(static_cast<int64_t>(tensor->scalar_type()));
    Int(tensor->is_cuda() ? tensor->get_device_index() : -1);
    Ints(tensor->sizes());
    Ints(tensor->strides());
  }
  void Int(int64_t value) { Append(&value, sizeof value); }
  void Text(const std::string& text) {
    Int(static_cast<int64_t>(text.size()));
    Append(text.data(), text.size());
  }
  std::string Take() { return std::move(bytes_); }

 private:
  void Ints(torch::headeronly::IntHeaderOnlyArrayRef values) {
    Int(static_cast<int64_t>(values.size()));
    Append(values.data(), values.size() * sizeof(int64_t));
  }
  void Append(const void* data, size_t size) {
    bytes_.append(static_cast<const char*>(data), size);
  }
  std::string bytes_;
};

const Tensor* PointerOf(const std::optional<Tensor>& tensor) {
  return tensor.has_value() ? &*tensor : nullptr;
}

const void* DataOf(const Tensor* tensor) {
  return tensor == nullptr ? nullptr : tensor->data_ptr();
}

Tensor EmptyTensor(const std::vector<int64_t>& dims, DType dtype, const Placement& placement) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  AtenTensorHandle handle = nullptr;
  TORCH_ERROR_CODE_CHECK(aoti_torch_empty_strided(
      static_cast<int64_t>(dims.size()), dims.data(), strides.data(), ShimDType(dtype),
      placement.cuda ? aoti_torch_device_type_cuda() : aoti_torch_device_type_cpu(),
      placement.cuda ? placement.device_index : 0, &handle));
  return Tensor(handle);
}

DotRequest RequestOf(const Tensor& lhs, const Tensor& rhs, const Tensor* lhs_scale,
                     const Tensor* rhs_scale, const Tensor* bias, const Tensor* out_scale,
                     ScalarType out_dtype, const std::string& lhs_precision,
                     const std::string& rhs_precision, bool compute_amax) {
  DotRequest request;
  request.lhs = ValueOrFail(SpecOf(lhs, "lhs"));
  request.rhs = ValueOrFail(SpecOf(rhs, "rhs"));
  if (lhs_scale != nullptr) request.lhs_scale = ValueOrFail(SpecOf(*lhs_scale, "lhs_scale"));
  if (rhs_scale != nullptr) request.rhs_scale = ValueOrFail(SpecOf(*rhs_scale, "rhs_scale"));
  if (bias != nullptr) request.bias = ValueOrFail(SpecOf(*bias, "bias"));
  if (out_scale != nullptr) {
    // Read as one float32 by every backend: the binding checks what MakeDotSpec only counts.
    if (out_scale->scalar_type() != ScalarType::Float || out_scale->numel() != 1) {
      Fail("out_scale must be one float32, got " + TorchName(out_scale->scalar_type()) + " with " +
           std::to_string(out_scale->numel()) + " elements");
    }
    request.output_scale = true;
  }
  request.precision = {lhs_precision, rhs_precision};
  request.output_type = ValueOrFail(DTypeOf(out_dtype, "out_dtype"));
  request.compute_amax = compute_amax;
  return request;
}

// The prepared dot of a signature: made (and validated) on its first call, then found by one
// hash lookup. Dots are never freed, as the plans they point to.
template <typename MakeRequest>
PreparedDot& PrepareDot(std::string signature, const MakeRequest& make_request) {
  static std::mutex mutex;
  static auto* dots = new std::unordered_map<std::string, std::unique_ptr<PreparedDot>>();
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<PreparedDot>& slot = (*dots)[signature];
  if (slot == nullptr) {
    auto dot = std::make_unique<PreparedDot>();
    dot->spec = ValueOrFail(MakeDotSpec(make_request()));
    dot->output_dims = ValueOrFail(ValidateDotSpec(dot->spec)).output_dims;
    slot = std::move(dot);
  }
  return *slot;
}

// "auto" runs host data on the CPU emulation of the resolved accumulation and GPU data on the
// GPU; a CPU backend cannot read GPU data.
Backend BackendFor(const std::string& name, const Placement& placement) {
  const Backend backend = ValueOrFail(ParseBackend(name));
  if (backend == Backend::kAuto) return placement.cuda ? Backend::kCuda : Backend::kCpuEmulation;
  if (placement.cuda && backend != Backend::kCuda) {
    Fail("scaled_mm: backend '" + name +
         "' runs host data; the tensors are on cuda:" + std::to_string(placement.device_index));
  }
  return backend;
}

void RunOnGpu(PreparedDot& dot, const DotPointers& pointers, const Placement& placement,
              Tensor& output, Tensor* amax) {
  if (aoti_torch_get_current_cuda_stream == nullptr) {
    Fail("scaled_mm: this torch was built without CUDA, so fp8dot cannot find its CUDA stream");
  }
  const int32_t current = torch::stable::accelerator::getCurrentDeviceIndex();
  if (placement.device_index != current) {
    Fail("scaled_mm: the tensors are on cuda:" + std::to_string(placement.device_index) +
         " but the current CUDA device is cuda:" + std::to_string(current) +
         ": fp8dot runs on the current device (torch.cuda.set_device)");
  }
  if (dot.plan == nullptr) dot.plan = ValueOrFail(GetCachedCudaDotPlan(dot.spec));
  void* stream = nullptr;
  TORCH_ERROR_CODE_CHECK(aoti_torch_get_current_cuda_stream(placement.device_index, &stream));
  const CudaDotBuffers buffers = CudaBuffersOf(
      pointers, output.data_ptr(), amax ? static_cast<float*>(amax->data_ptr()) : nullptr);
  const Status status = dot.plan->Run(buffers, static_cast<CudaStream>(stream));
  if (!status.ok()) Fail(status.message());
}

void RunOnHost(const PreparedDot& dot, Backend backend, const DotPointers& pointers, Tensor& output,
               Tensor* amax) {
  const HostDotViews views = ValueOrFail(HostDotViews::Make(dot.spec, pointers));
  const DotResult result = ValueOrFail(RunDot(backend, dot.spec, views.arguments()));
  std::memcpy(output.data_ptr(), result.output.data(),
              static_cast<size_t>(result.output.size_in_bytes()));
  if (amax != nullptr) *static_cast<float*>(amax->data_ptr()) = static_cast<float>(*result.amax);
}

// torch.ops.fp8dot.scaled_mm: D[M,N] = lhs_scale · rhs_scale · (lhs[M,K] · rhs[K,N]) + bias, and
// max |D| (a 0-d float32 tensor, empty when compute_amax is false).
std::tuple<Tensor, Tensor> ScaledMm(Tensor lhs, Tensor rhs, std::optional<Tensor> lhs_scale,
                                    std::optional<Tensor> rhs_scale, std::optional<Tensor> bias,
                                    std::optional<Tensor> out_scale, ScalarType out_dtype,
                                    std::string lhs_precision, std::string rhs_precision,
                                    bool compute_amax, std::string backend_name) {
  const Tensor* lhs_scale_tensor = PointerOf(lhs_scale);
  const Tensor* rhs_scale_tensor = PointerOf(rhs_scale);
  const Tensor* bias_tensor = PointerOf(bias);
  const Tensor* out_scale_tensor = PointerOf(out_scale);
  const Placement placement = PlacementOf(lhs, {{"rhs", &rhs},
                                                {"lhs_scale", lhs_scale_tensor},
                                                {"rhs_scale", rhs_scale_tensor},
                                                {"bias", bias_tensor},
                                                {"out_scale", out_scale_tensor}});
  const Backend backend = BackendFor(backend_name, placement);

  SignatureWriter signature;
  for (const Tensor* tensor : std::initializer_list<const Tensor*>{
           &lhs, &rhs, lhs_scale_tensor, rhs_scale_tensor, bias_tensor, out_scale_tensor}) {
    signature.Tensor(tensor);
  }
  signature.Int(static_cast<int64_t>(out_dtype));
  signature.Text(lhs_precision);
  signature.Text(rhs_precision);
  signature.Int(compute_amax);
  PreparedDot& dot = PrepareDot(signature.Take(), [&] {
    return RequestOf(lhs, rhs, lhs_scale_tensor, rhs_scale_tensor, bias_tensor, out_scale_tensor,
                     out_dtype, lhs_precision, rhs_precision, compute_amax);
  });

  const DotPointers pointers{
      lhs.data_ptr(),      rhs.data_ptr(), DataOf(lhs_scale_tensor), DataOf(rhs_scale_tensor),
      DataOf(bias_tensor), nullptr,        DataOf(out_scale_tensor)};
  Tensor output = EmptyTensor(dot.output_dims, dot.spec.output_type, placement);
  Tensor amax = EmptyTensor(compute_amax ? std::vector<int64_t>{} : std::vector<int64_t>{0},
                            DType::kF32, placement);
  Tensor* amax_output = compute_amax ? &amax : nullptr;
  if (backend == Backend::kCuda && placement.cuda) {
    RunOnGpu(dot, pointers, placement, output, amax_output);
  } else {
    RunOnHost(dot, backend, pointers, output, amax_output);
  }
  return {output, amax};
}

}  // namespace
}  // namespace fp8dot

STABLE_TORCH_LIBRARY_FRAGMENT(fp8dot, m) {
  m.def(
      "scaled_mm(Tensor lhs, Tensor rhs, Tensor? lhs_scale, Tensor? rhs_scale, Tensor? bias, "
      "Tensor? out_scale, ScalarType out_dtype, str lhs_precision, str rhs_precision, "
      "bool compute_amax, str backend) -> (Tensor, Tensor)");
}

STABLE_TORCH_LIBRARY_IMPL(fp8dot, CPU, m) { m.impl("scaled_mm", TORCH_BOX(&fp8dot::ScaledMm)); }

STABLE_TORCH_LIBRARY_IMPL(fp8dot, CUDA, m) { m.impl("scaled_mm", TORCH_BOX(&fp8dot::ScaledMm)); }
