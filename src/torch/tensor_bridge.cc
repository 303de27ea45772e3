// torch tensors (stable ABI) as fp8dot specs, devices, outputs and signatures.
#include "torch/tensor_bridge.h"

#include <torch/csrc/inductor/aoti_torch/c/shim.h>
#include <torch/csrc/stable/accelerator.h>

#include <stdexcept>

#include "bindings/dot_request.h"

// Declared by shim.h only for CUDA builds of torch (USE_CUDA) and defined in libtorch_cuda:
// weak, so the ops load under a CPU-only torch too and say so when given a CUDA tensor.
extern "C" __attribute__((weak)) AOTITorchError aoti_torch_get_current_cuda_stream(
    int32_t device_index, void** ret_stream);

namespace fp8dot::torch_ops {
namespace {

std::vector<int64_t> ToVector(torch::headeronly::IntHeaderOnlyArrayRef values) {
  return {values.begin(), values.end()};
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

}  // namespace

void Fail(const std::string& message) { throw std::runtime_error(message); }

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
    case ScalarType::Half:
      return "torch.float16";
    case ScalarType::Float:
      return "torch.float32";
    case ScalarType::Double:
      return "torch.float64";
    case ScalarType::BFloat16:
      return "torch.bfloat16";
    case ScalarType::Float8_e4m3fn:
      return "torch.float8_e4m3fn";
    case ScalarType::Float8_e5m2:
      return "torch.float8_e5m2";
    default:
      return std::string("torch.") + torch::headeronly::toString(type);
  }
}

StatusOr<DType> DTypeOf(ScalarType type, const char* what) {
  // The frameworks' type names and the types fp8dot reads: the bindings' one rule.
  StatusOr<DType> dtype = DTypeFromFrameworkName(TorchName(type));
  if (!dtype.ok()) return InvalidArgument("%s: %s", what, dtype.status().message().c_str());
  return dtype;
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

void CheckStorages(const char* op,
                   std::initializer_list<std::pair<const char*, const Tensor*>> tensors) {
  // torch lets a storage shrink under the tensors that view it (FSDP2 resizes a gathered
  // parameter's storage to 0 bytes between its passes): the kernels would read past its end.
  // Checked on every call, not only where a call's spec is first made: a cached spec says
  // nothing of the next tensors' storage.
  for (const auto& [what, tensor] : tensors) {
    if (tensor == nullptr || tensor->numel() == 0) continue;
    int64_t offset = 0;
    int64_t storage_bytes = 0;
    TORCH_ERROR_CODE_CHECK(aoti_torch_get_storage_offset(tensor->get(), &offset));
    TORCH_ERROR_CODE_CHECK(aoti_torch_get_storage_size(tensor->get(), &storage_bytes));
    int64_t last = offset;
    const auto sizes = tensor->sizes();
    const auto strides = tensor->strides();
    for (size_t i = 0; i < sizes.size(); ++i) last += (sizes[i] - 1) * strides[i];
    const int64_t needed = (last + 1) * static_cast<int64_t>(tensor->element_size());
    if (needed > storage_bytes) {
      Fail(std::string(op) + ": " + what + ": its storage holds " + std::to_string(storage_bytes) +
           " bytes but its shape, strides and offset reach " + std::to_string(needed) +
           " bytes (a storage resized after this tensor was made, such as a sharded model's "
           "gathered parameter freed between passes)");
    }
  }
}

Placement PlacementOf(const char* op, const Tensor& first,
                      std::initializer_list<std::pair<const char*, const Tensor*>> others) {
  if (!first.is_cuda() && !first.is_cpu()) {
    Fail(std::string(op) + ": fp8dot runs CPU and CUDA tensors only");
  }
  const Placement placement{first.is_cuda(), first.is_cuda() ? first.get_device_index() : -1};
  for (const auto& [what, tensor] : others) {
    if (tensor == nullptr) continue;
    const int32_t index = tensor->is_cuda() ? tensor->get_device_index() : -1;
    if (tensor->is_cuda() != placement.cuda || index != placement.device_index) {
      Fail(std::string(op) + ": " + what +
           " is on another device: every tensor of one call must be on the same device");
    }
  }
  return placement;
}

CudaStream CurrentCudaStream(const char* op, const Placement& placement) {
  if (aoti_torch_get_current_cuda_stream == nullptr) {
    Fail(std::string(op) + ": this torch was built without CUDA, so it has no CUDA stream");
  }
  const int32_t current = torch::stable::accelerator::getCurrentDeviceIndex();
  if (placement.device_index != current) {
    Fail(std::string(op) + ": the tensors are on cuda:" + std::to_string(placement.device_index) +
         " but the current CUDA device is cuda:" + std::to_string(current) +
         ": fp8dot runs on the current device (torch.cuda.set_device)");
  }
  void* stream = nullptr;
  TORCH_ERROR_CODE_CHECK(aoti_torch_get_current_cuda_stream(placement.device_index, &stream));
  return static_cast<CudaStream>(stream);
}

Tensor EmptyTensor(const std::vector<int64_t>& dims, DType dtype, const Placement& placement,
                   const std::vector<int64_t>& minor_to_major) {
  const std::vector<int64_t> strides = LayoutStrides(dims, minor_to_major);
  AtenTensorHandle handle = nullptr;
  TORCH_ERROR_CODE_CHECK(aoti_torch_empty_strided(
      static_cast<int64_t>(dims.size()), dims.data(), strides.data(), ShimDType(dtype),
      placement.cuda ? aoti_torch_device_type_cuda() : aoti_torch_device_type_cpu(),
      placement.cuda ? placement.device_index : 0, &handle));
  return Tensor(handle);
}

const Tensor* PointerOf(const std::optional<Tensor>& tensor) {
  return tensor.has_value() ? &*tensor : nullptr;
}

const void* DataOf(const Tensor* tensor) {
  return tensor == nullptr ? nullptr : tensor->data_ptr();
}

void SignatureWriter::AddTensor(const Tensor* tensor) {
  if (tensor == nullptr) return AddInt(-1);
  AddInt(static_cast<int64_t>(tensor->scalar_type()));
  AddInt(tensor->is_cuda() ? tensor->get_device_index() : -1);
  const auto sizes = tensor->sizes();
  const auto strides = tensor->strides();
  AddInt(static_cast<int64_t>(sizes.size()));
  Append(sizes.data(), sizes.size() * sizeof(int64_t));
  Append(strides.data(), strides.size() * sizeof(int64_t));
}

void SignatureWriter::AddText(const std::string& text) {
  AddInt(static_cast<int64_t>(text.size()));
  Append(text.data(), text.size());
}

void SignatureWriter::Append(const void* data, size_t size) {
  bytes_.append(static_cast<const char*>(data), size);
}

}  // namespace fp8dot::torch_ops
