// torch.ops.fp8dot.scaled_mm as a C++ kernel, so that an eager call (and each call from a
// torch.compile'd graph) costs the dispatcher and one cached-plan lookup, not a Python function.
// python/fp8dot/torch/ops.py loads this library (fp8dot/_torch_ops.so) when the package was
// built with torch and defines the same op in Python otherwise: one schema, one fake kernel, the
// same results.
//
// Built against PyTorch's stable ABI (TORCH_TARGET_VERSION 2.10), so the one binary runs under
// every torch from 2.10 on. Thin on purpose, as src/python/module.cc: tensor metadata becomes a
// DotRequest, and MakeDotSpec and ValidateDotSpec decide everything.
#include <torch/csrc/stable/library.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bindings/dot_pointers.h"
#include "bindings/dot_request.h"
#include "fp8dot/run_dot.h"
#include "torch/tensor_bridge.h"

namespace fp8dot::torch_ops {
namespace {

constexpr char kOp[] = "scaled_mm";

// One call signature's validated dot, and its CUDA plan when it runs on the GPU.
struct PreparedDot {
  DotSpec spec;
  std::vector<int64_t> output_dims;
  CudaDotPlan* plan = nullptr;  // owned by the process-wide plan cache
};

struct ScaledMmCall {
  const Tensor& lhs;
  const Tensor& rhs;
  const Tensor* lhs_scale;  // null: absent
  const Tensor* rhs_scale;
  const Tensor* bias;
  const Tensor* out_scale;
  ScalarType out_dtype;
  const std::string& lhs_precision;
  const std::string& rhs_precision;
  bool compute_amax;

  std::string Signature() const {
    SignatureWriter signature;
    for (const Tensor* tensor : {&lhs, &rhs, lhs_scale, rhs_scale, bias, out_scale}) {
      signature.AddTensor(tensor);
    }
    signature.AddInt(static_cast<int64_t>(out_dtype));
    signature.AddText(lhs_precision);
    signature.AddText(rhs_precision);
    signature.AddInt(compute_amax);
    return signature.Take();
  }

  DotRequest Request() const {
    DotRequest request;
    request.lhs = ValueOrFail(SpecOf(lhs, "lhs"));
    request.rhs = ValueOrFail(SpecOf(rhs, "rhs"));
    if (lhs_scale) request.lhs_scale = ValueOrFail(SpecOf(*lhs_scale, "lhs_scale"));
    if (rhs_scale) request.rhs_scale = ValueOrFail(SpecOf(*rhs_scale, "rhs_scale"));
    if (bias) request.bias = ValueOrFail(SpecOf(*bias, "bias"));
    if (out_scale) {
      // Every backend reads it as one float32: checked here, where MakeDotSpec learns only that
      // there is one.
      if (out_scale->scalar_type() != ScalarType::Float || out_scale->numel() != 1) {
        Fail("out_scale must be one float32, got " + TorchName(out_scale->scalar_type()) +
             " with " + std::to_string(out_scale->numel()) + " elements");
      }
      request.output_scale = true;
    }
    request.precision = {lhs_precision, rhs_precision};
    request.output_type = ValueOrFail(DTypeOf(out_dtype, "out_dtype"));
    request.compute_amax = compute_amax;
    return request;
  }

  DotPointers Pointers() const {
    return {lhs.data_ptr(), rhs.data_ptr(), DataOf(lhs_scale), DataOf(rhs_scale),
            DataOf(bias),   nullptr,        DataOf(out_scale)};
  }
};

PreparedDot Prepare(const ScaledMmCall& call, const Placement& placement) {
  PreparedDot dot;
  dot.spec = ValueOrFail(MakeDotSpec(call.Request()));
  dot.output_dims = ValueOrFail(ValidateDotSpec(dot.spec)).output_dims;
  if (placement.cuda) dot.plan = ValueOrFail(GetCachedCudaDotPlan(dot.spec));
  return dot;
}

// "auto" runs host data on the CPU emulation of the resolved accumulation and GPU data on the
// GPU; a CPU backend cannot read GPU data.
Backend BackendFor(const std::string& name, const Placement& placement) {
  const Backend backend = ValueOrFail(ParseBackend(name));
  if (backend == Backend::kAuto) return placement.cuda ? Backend::kCuda : Backend::kCpuEmulation;
  if (placement.cuda && backend != Backend::kCuda) {
    Fail(std::string(kOp) + ": backend '" + name +
         "' runs host data; the tensors are on cuda:" + std::to_string(placement.device_index));
  }
  return backend;
}

// D[M,N] = lhs_scale · rhs_scale · (lhs[M,K] · rhs[K,N]) + bias, and max |D| (a 0-d float32
// tensor; empty when compute_amax is false).
std::tuple<Tensor, Tensor> ScaledMm(Tensor lhs, Tensor rhs, std::optional<Tensor> lhs_scale,
                                    std::optional<Tensor> rhs_scale, std::optional<Tensor> bias,
                                    std::optional<Tensor> out_scale, ScalarType out_dtype,
                                    std::string lhs_precision, std::string rhs_precision,
                                    bool compute_amax, std::string backend_name) {
  static auto* dots = new CallCache<PreparedDot>();
  const ScaledMmCall call{lhs,
                          rhs,
                          PointerOf(lhs_scale),
                          PointerOf(rhs_scale),
                          PointerOf(bias),
                          PointerOf(out_scale),
                          out_dtype,
                          lhs_precision,
                          rhs_precision,
                          compute_amax};
  const Placement placement = PlacementOf(kOp, lhs,
                                          {{"rhs", &rhs},
                                           {"lhs_scale", call.lhs_scale},
                                           {"rhs_scale", call.rhs_scale},
                                           {"bias", call.bias},
                                           {"out_scale", call.out_scale}});
  CheckStorages(kOp, {{"lhs", &lhs},
                      {"rhs", &rhs},
                      {"lhs_scale", call.lhs_scale},
                      {"rhs_scale", call.rhs_scale},
                      {"bias", call.bias},
                      {"out_scale", call.out_scale}});
  const Backend backend = BackendFor(backend_name, placement);
  // Before a plan is made: plans are made for, and cached by, the current device.
  const CudaStream stream = placement.cuda ? CurrentCudaStream(kOp, placement) : nullptr;
  const PreparedDot& dot = dots->Find(call.Signature(), [&] { return Prepare(call, placement); });

  Tensor output = EmptyTensor(dot.output_dims, dot.spec.output_type, placement);
  Tensor amax = EmptyTensor(compute_amax ? std::vector<int64_t>{} : std::vector<int64_t>{0},
                            DType::kF32, placement);
  Tensor* amax_output = compute_amax ? &amax : nullptr;
  if (placement.cuda) {
    const CudaDotBuffers buffers =
        CudaBuffersOf(call.Pointers(), output.data_ptr(),
                      amax_output ? static_cast<float*>(amax.data_ptr()) : nullptr);
    const Status status = dot.plan->Run(buffers, stream);
    if (!status.ok()) Fail(status.message());
  } else {
    const std::optional<double> amax_value =
        ValueOrFail(RunDotInto(backend, dot.spec, call.Pointers(), output.data_ptr()));
    if (amax_output != nullptr) {
      *static_cast<float*>(amax.data_ptr()) = static_cast<float>(amax_value.value_or(0.0));
    }
  }
  return {output, amax};
}

}  // namespace
}  // namespace fp8dot::torch_ops

STABLE_TORCH_LIBRARY_FRAGMENT(fp8dot, m) {
  m.def(
      "scaled_mm(Tensor lhs, Tensor rhs, Tensor? lhs_scale, Tensor? rhs_scale, Tensor? bias, "
      "Tensor? out_scale, ScalarType out_dtype, str lhs_precision, str rhs_precision, "
      "bool compute_amax, str backend) -> (Tensor, Tensor)");
}

STABLE_TORCH_LIBRARY_IMPL(fp8dot, CPU, m) {
  m.impl("scaled_mm", TORCH_BOX(&fp8dot::torch_ops::ScaledMm));
}

STABLE_TORCH_LIBRARY_IMPL(fp8dot, CUDA, m) {
  m.impl("scaled_mm", TORCH_BOX(&fp8dot::torch_ops::ScaledMm));
}

// This library links its own copy of fp8dot (statically, its symbols hidden), so it has its own
// autotuning setting (cuda_backend.h, SetDefaultAutotune): fp8dot.torch passes the package's
// setting (fp8dot.set_autotune) on through this function, by ctypes. 0; -1 when candidates < 0;
// -2 when it could not be stored (nothing throws through the C boundary).
extern "C" __attribute__((visibility("default"))) int fp8dot_torch_set_autotune(
    int candidates, const char* cache_path) noexcept {
  try {
    const fp8dot::Status status = fp8dot::SetDefaultAutotune(
        {.candidates = candidates, .cache_path = cache_path != nullptr ? cache_path : ""});
    return status.ok() ? 0 : -1;
  } catch (...) {
    return -2;
  }
}

// The candidates of this library's setting (what its plans will be made with), -1 when the
// environment's FP8DOT_AUTOTUNE is malformed (-2 on any other failure): for the tests that
// check the two copies agree.
extern "C" __attribute__((visibility("default"))) int fp8dot_torch_autotune_candidates() noexcept {
  try {
    const fp8dot::StatusOr<fp8dot::AutotuneSetting> setting = fp8dot::DefaultAutotune();
    return setting.ok() ? setting->candidates : -1;
  } catch (...) {
    return -2;
  }
}
