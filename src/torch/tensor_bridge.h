// What fp8dot's C++ torch ops share: torch tensors (PyTorch's stable ABI) as fp8dot TensorSpecs,
// the device a call runs on, new outputs, the current CUDA stream, call signatures for the
// ops' caches, and library errors as exceptions (torch raises them as RuntimeError, as it does
// for its own operators).
#pragma once

#include <torch/csrc/stable/tensor.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fp8dot/cuda_backend.h"
#include "fp8dot/dtype.h"
#include "fp8dot/status.h"
#include "fp8dot/tensor.h"

namespace fp8dot::torch_ops {

using torch::headeronly::ScalarType;
using torch::stable::Tensor;

[[noreturn]] void Fail(const std::string& message);

template <typename T>
T ValueOrFail(StatusOr<T> result) {
  if (!result.ok()) Fail(result.status().message());
  return std::move(result).value();
}

// torch's spelling of a type ("torch.int8", not ScalarType's "Char"), which
// DTypeFromFrameworkName reads.
std::string TorchName(ScalarType type);
// The fp8dot type of a torch type, or INVALID_ARGUMENT naming `what` and the types accepted.
StatusOr<DType> DTypeOf(ScalarType type, const char* what);
// The tensor's type, shape and layout; a layout that is not dense is INVALID_ARGUMENT.
StatusOr<TensorSpec> SpecOf(const Tensor& tensor, const char* what);
// Fails naming the op and the tensor where a tensor's elements reach past the end of its
// storage; null tensors (absent optional ones) are skipped. Every call, before its cache lookup.
void CheckStorages(const char* op,
                   std::initializer_list<std::pair<const char*, const Tensor*>> tensors);

// Where a call runs: the device of all its tensors.
struct Placement {
  bool cuda = false;
  int32_t device_index = -1;  // cuda only
};

// The placement of `first` and of every other tensor given (null: absent), or an error naming
// the first tensor on another device. `op` names the operator in the message.
Placement PlacementOf(const char* op, const Tensor& first,
                      std::initializer_list<std::pair<const char*, const Tensor*>> others);

// The current CUDA stream of the placement's device, after checking that device is the current
// one (fp8dot's plans run on the current device).
CudaStream CurrentCudaStream(const char* op, const Placement& placement);

// A new tensor on the placement's device, row-major or in the layout given (minor-to-major, as
// TensorSpec's).
Tensor EmptyTensor(const std::vector<int64_t>& dims, DType dtype, const Placement& placement,
                   const std::vector<int64_t>& minor_to_major = {});

const Tensor* PointerOf(const std::optional<Tensor>& tensor);
const void* DataOf(const Tensor* tensor);

// A call's signature as bytes — every tensor's type, device, shape and strides, and the
// options — for the ops' caches of validated calls: a few memcpys and one hash per call.
class SignatureWriter {
 public:
  void AddTensor(const Tensor* tensor);  // null: an absent optional tensor
  void AddInt(int64_t value) { Append(&value, sizeof value); }
  void AddText(const std::string& text);
  std::string Take() { return std::move(bytes_); }

 private:
  void Append(const void* data, size_t size);
  std::string bytes_;
};

// Validated calls by signature: made on a signature's first call, then found by one hash
// lookup. Never freed, as the plans they point to. An entry is immutable once made; the CUDA plan
// it points to orders its own runs across streams (cuda_backend.h).
template <typename Prepared>
class CallCache {
 public:
  template <typename Make>
  const Prepared& Find(std::string signature, const Make& make) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto it = calls_.find(signature);
      if (it != calls_.end()) return *it->second;
    }
    // Made outside the lock (it may build a CUDA plan); a throw leaves no entry behind. When two
    // threads make the same signature, the first one stored is kept.
    auto made = std::make_unique<Prepared>(make());
    std::lock_guard<std::mutex> lock(mutex_);
    return *calls_.try_emplace(std::move(signature), std::move(made)).first->second;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<Prepared>> calls_;
};

}  // namespace fp8dot::torch_ops
