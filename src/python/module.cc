// fp8dot._core, the Python binding. Thin on purpose: it turns Python's descriptions of arrays
// (a dtype name, a shape, element strides, a data pointer) into DotSpecs and HostTensor views,
// and Status errors into exceptions. Every rule (validation, the accumulation a precision
// resolves to, scale shapes, layouts) is the C++ library's; the Python package (python/fp8dot)
// only reads attributes off numpy arrays and torch tensors and allocates outputs.
//
// Data pointers travel as integers: the Python caller holds the arrays alive for the call and
// guarantees that each pointer belongs to the array whose description built the Dot.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "fp8dot/cuda_backend.h"
#include "fp8dot/cuda_device.h"
#include "fp8dot/run_dot.h"

namespace nb = nanobind;

namespace fp8dot {
namespace {

// An error from the library as the Python exception a user expects: bad input is a ValueError,
// anything the machine or a backend could not do is a RuntimeError. The message is the
// library's one line.
[[noreturn]] void Raise(const Status& status) {
  if (status.code() == StatusCode::kInvalidArgument)
    throw nb::value_error(status.message().c_str());
  throw std::runtime_error(status.message());
}

void ThrowIfError(const Status& status) {
  if (!status.ok()) Raise(status);
}

template <typename T>
T ValueOrThrow(StatusOr<T> result) {
  if (!result.ok()) Raise(result.status());
  return std::move(result).value();
}

Status WithContext(const Status& status, const std::string& what) {
  if (status.ok()) return status;
  return Status(status.code(), what + ": " + status.message());
}

// numpy/ml_dtypes and torch name the types differently from HLO ("float8_e4m3fn" vs "f8e4m3fn").
StatusOr<DType> DTypeFromFrameworkName(std::string name) {
  if (name.rfind("torch.", 0) == 0) name = name.substr(6);
  static const std::pair<const char*, DType> kNames[] = {
      {"float8_e4m3fn", DType::kF8E4M3FN},
      {"float8_e5m2", DType::kF8E5M2},
      {"bfloat16", DType::kBF16},
      {"float16", DType::kF16},
      {"float32", DType::kF32},
      {"float64", DType::kF64},
  };
  for (const auto& [framework_name, dtype] : kNames) {
    if (name == framework_name) return dtype;
  }
  if (StatusOr<DType> hlo_name = ParseDType(name); hlo_name.ok()) return hlo_name;
  return InvalidArgument(
      "dtype %s is not supported (float8_e4m3fn, float8_e5m2, bfloat16, float16, float32, "
      "float64)",
      name.c_str());
}

const char* FrameworkName(DType dtype) {
  switch (dtype) {
    case DType::kF8E4M3FN:
      return "float8_e4m3fn";
    case DType::kF8E5M2:
      return "float8_e5m2";
    case DType::kBF16:
      return "bfloat16";
    case DType::kF16:
      return "float16";
    case DType::kF32:
      return "float32";
    case DType::kF64:
      return "float64";
    default:
      return DTypeName(dtype);
  }
}

// (dtype name, shape, element strides): what python/fp8dot/_arrays.py reads off an array.
using ArrayDescription = std::tuple<std::string, std::vector<int64_t>, std::vector<int64_t>>;

StatusOr<TensorSpec> SpecOfArray(const ArrayDescription& array) {
  const auto& [dtype_name, dims, strides] = array;
  FP8_ASSIGN_OR_RETURN(DType dtype, DTypeFromFrameworkName(dtype_name));
  FP8_ASSIGN_OR_RETURN(std::vector<int64_t> layout, LayoutFromStrides(dims, strides));
  return TensorSpec{dtype, dims, std::move(layout)};
}

TensorSpec SpecOfArgument(const ArrayDescription& array, const std::string& what) {
  StatusOr<TensorSpec> spec = SpecOfArray(array);
  if (!spec.ok()) Raise(WithContext(spec.status(), what));
  return std::move(spec).value();
}

OperandScale ScaleOfArgument(const ArrayDescription& array, const std::string& what) {
  const TensorSpec spec = SpecOfArgument(array, what);
  if (spec.dtype != DType::kF32) {
    throw nb::value_error((what + " must be float32, got " + FrameworkName(spec.dtype)).c_str());
  }
  return OperandScale{ScaleMode::kNone, spec.dims, spec.minor_to_major};
}

// The modes of the given operand scales: named by the caller or read off their shapes
// (InferScaleMode), which needs the canonical GEMM of the unscaled dot.
void ResolveScaleModes(DotSpec& spec, bool has_lhs_scale,
                       const std::optional<std::string>& lhs_mode, bool has_rhs_scale,
                       const std::optional<std::string>& rhs_mode) {
  DotSpec unscaled = spec;
  unscaled.lhs_scale = {};
  unscaled.rhs_scale = {};
  const CanonicalDot dot = ValueOrThrow(ValidateDotSpec(unscaled));
  auto resolve = [&](OperandScale& scale, const std::optional<std::string>& mode, bool is_lhs) {
    scale.mode = mode ? ValueOrThrow(ParseScaleMode(*mode))
                      : ValueOrThrow(InferScaleMode(scale.dims, is_lhs, dot));
    if (scale.mode == ScaleMode::kTensor) scale.minor_to_major.clear();
  };
  if (has_lhs_scale) resolve(spec.lhs_scale, lhs_mode, /*is_lhs=*/true);
  if (has_rhs_scale) resolve(spec.rhs_scale, rhs_mode, /*is_lhs=*/false);
}

PrecisionConfig PrecisionOf(const std::pair<std::string, std::string>& precision,
                            const std::optional<std::string>& algorithm) {
  PrecisionConfig config;
  config.operand_precision = {ValueOrThrow(ParsePrecision(precision.first)),
                              ValueOrThrow(ParsePrecision(precision.second))};
  if (algorithm) config.algorithm = ValueOrThrow(ParseAlgorithm(*algorithm));
  return config;
}

// One validated scaled dot: the DotSpec built from array descriptions and options, and the
// CUDA plan once it has run on the GPU. The Python package caches Dots by their arguments'
// descriptions, so a training step builds each once.
class Dot {
 public:
  Dot(const ArrayDescription& lhs, const ArrayDescription& rhs,
      std::optional<std::tuple<std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>,
                               std::vector<int64_t>>>
          dimension_numbers,
      const std::pair<std::string, std::string>& precision,
      const std::optional<std::string>& algorithm, const std::string& out_dtype,
      const std::optional<ArrayDescription>& lhs_scale,
      const std::optional<ArrayDescription>& rhs_scale,
      const std::optional<std::string>& lhs_scale_mode,
      const std::optional<std::string>& rhs_scale_mode, const std::optional<ArrayDescription>& bias,
      const std::optional<ArrayDescription>& c, const std::optional<std::string>& epilogue,
      double alpha, double beta, bool output_scale, bool amax) {
    spec_.lhs = SpecOfArgument(lhs, "lhs");
    spec_.rhs = SpecOfArgument(rhs, "rhs");
    if (dimension_numbers) {
      auto& [lhs_contracting, rhs_contracting, lhs_batch, rhs_batch] = *dimension_numbers;
      spec_.dimension_numbers = {lhs_batch, rhs_batch, lhs_contracting, rhs_contracting};
    } else {
      spec_.dimension_numbers = DefaultDimensionNumbers();
    }
    spec_.precision_config = PrecisionOf(precision, algorithm);
    spec_.output_type = ValueOrThrow(DTypeFromFrameworkName(out_dtype));
    if (lhs_scale) spec_.lhs_scale = ScaleOfArgument(*lhs_scale, "lhs_scale");
    if (rhs_scale) spec_.rhs_scale = ScaleOfArgument(*rhs_scale, "rhs_scale");
    if (lhs_scale_mode && !lhs_scale) throw nb::value_error("lhs_scale_mode without lhs_scale");
    if (rhs_scale_mode && !rhs_scale) throw nb::value_error("rhs_scale_mode without rhs_scale");
    if (bias) spec_.bias = SpecOfArgument(*bias, "bias");
    if (c) spec_.c = SpecOfArgument(*c, "c");
    if (epilogue) {
      spec_.epilogue = ValueOrThrow(ParseEpilogue(*epilogue));
    } else if (bias) {
      spec_.epilogue = Epilogue::kBias;
    }
    spec_.alpha = alpha;
    spec_.beta = beta;
    spec_.output_scale = output_scale;
    spec_.compute_amax = amax;
    ResolveScaleModes(spec_, lhs_scale.has_value(), lhs_scale_mode, rhs_scale.has_value(),
                      rhs_scale_mode);
    dot_ = ValueOrThrow(ValidateDotSpec(spec_));
  }

  std::vector<int64_t> output_shape() const { return dot_.output_dims; }
  std::string output_dtype() const { return FrameworkName(spec_.output_type); }
  std::string accumulation() const { return AccumulationModeName(dot_.accumulation); }
  std::string lhs_scale_mode() const { return ScaleModeName(spec_.lhs_scale.mode); }
  std::string rhs_scale_mode() const { return ScaleModeName(spec_.rhs_scale.mode); }
  std::tuple<int64_t, int64_t, int64_t, int64_t> gemm() const {
    return {dot_.batch, dot_.m, dot_.n, dot_.k};
  }
  std::string key() const { return DotSpecKey(spec_); }

  // Runs on host memory with a CPU backend (or "cuda"/"auto", which copy through the GPU) and
  // writes the row-major result to `out`. Returns (amax or None, backend that ran, milliseconds).
  std::tuple<std::optional<double>, std::string, double> RunHost(
      const std::string& backend_name, uintptr_t lhs, uintptr_t rhs, uintptr_t lhs_scale,
      uintptr_t rhs_scale, uintptr_t bias, uintptr_t c, uintptr_t output_scale, uintptr_t out) {
    const Backend backend = ValueOrThrow(ParseBackend(backend_name));
    std::optional<HostTensor> lhs_view, rhs_view, lhs_scale_view, rhs_scale_view, bias_view, c_view,
        output_scale_view;
    DotArguments arguments;
    arguments.lhs = View(lhs_view, spec_.lhs, lhs);
    arguments.rhs = View(rhs_view, spec_.rhs, rhs);
    arguments.lhs_scale = ScaleView(lhs_scale_view, spec_.lhs_scale, lhs_scale);
    arguments.rhs_scale = ScaleView(rhs_scale_view, spec_.rhs_scale, rhs_scale);
    if (spec_.bias) arguments.bias = View(bias_view, *spec_.bias, bias);
    if (spec_.c) arguments.c = View(c_view, *spec_.c, c);
    if (spec_.output_scale) {
      arguments.output_scale =
          View(output_scale_view, TensorSpec{DType::kF32, {}, {}}, output_scale);
    }
    DotRunInfo info;
    StatusOr<DotResult> result = [&] {
      nb::gil_scoped_release release;
      return RunDot(backend, spec_, arguments, {}, &info);
    }();
    if (!result.ok()) Raise(result.status());
    const HostTensor& output = result->output;
    std::memcpy(reinterpret_cast<void*>(out), output.data(),
                static_cast<size_t>(output.size_in_bytes()));
    return {result->amax, BackendName(info.backend), info.milliseconds};
  }

  // Enqueues the dot on `stream` over device pointers (CudaDotPlan::Run); the plan is made on
  // the first call and kept.
  void RunCuda(uintptr_t lhs, uintptr_t rhs, uintptr_t lhs_scale, uintptr_t rhs_scale,
               uintptr_t bias, uintptr_t c, uintptr_t output_scale, uintptr_t out, uintptr_t amax,
               uintptr_t stream) {
    CudaDotBuffers buffers;
    buffers.lhs = reinterpret_cast<const void*>(lhs);
    buffers.rhs = reinterpret_cast<const void*>(rhs);
    buffers.lhs_scale = reinterpret_cast<const float*>(lhs_scale);
    buffers.rhs_scale = reinterpret_cast<const float*>(rhs_scale);
    buffers.bias = reinterpret_cast<const void*>(bias);
    buffers.c = reinterpret_cast<const void*>(c);
    buffers.output_scale = reinterpret_cast<const float*>(output_scale);
    buffers.output = reinterpret_cast<void*>(out);
    buffers.amax = reinterpret_cast<float*>(amax);
    ThrowIfError(Plan()->Run(buffers, reinterpret_cast<CudaStream>(stream)));
  }

  std::string Explain(const std::string& backend_name) {
    const Backend backend = ResolveBackend(ValueOrThrow(ParseBackend(backend_name)));
    std::string text = StrFormat(
        "scaled dot %s x %s -> %s%s, precision %s,%s, algorithm %s: %s accumulation; scales "
        "%s x %s; backend %s\n",
        spec_.lhs.ToString().c_str(), spec_.rhs.ToString().c_str(), DTypeName(spec_.output_type),
        DimsToString(dot_.output_dims).c_str(),
        PrecisionName(spec_.precision_config.operand_precision[0]),
        PrecisionName(spec_.precision_config.operand_precision[1]),
        AlgorithmName(spec_.precision_config.algorithm), AccumulationModeName(dot_.accumulation),
        ScaleModeName(spec_.lhs_scale.mode), ScaleModeName(spec_.rhs_scale.mode),
        BackendName(backend));
    if (backend == Backend::kCuda) text += Plan()->Explain();
    return text;
  }

 private:
  DotDimensionNumbers DefaultDimensionNumbers() const {
    const size_t lhs_rank = spec_.lhs.dims.size(), rhs_rank = spec_.rhs.dims.size();
    if (lhs_rank == 2 && rhs_rank == 2) return DotDimensionNumbers::Matmul();
    if (lhs_rank == 3 && rhs_rank == 3) return DotDimensionNumbers::Matmul(/*batched=*/true);
    throw nb::value_error(
        StrFormat("lhs has rank %zu and rhs rank %zu: without dimension_numbers both must be "
                  "matrices [M,K] x [K,N] or batches of them [B,M,K] x [B,K,N]",
                  lhs_rank, rhs_rank)
            .c_str());
  }

  static const HostTensor* View(std::optional<HostTensor>& slot, const TensorSpec& spec,
                                uintptr_t data) {
    slot = ValueOrThrow(HostTensor::View(
        spec.dtype, spec.dims,
        spec.minor_to_major.empty() ? RowMajorLayout(static_cast<int64_t>(spec.dims.size()))
                                    : spec.minor_to_major,
        reinterpret_cast<const void*>(data)));
    return &*slot;
  }

  static const HostTensor* ScaleView(std::optional<HostTensor>& slot, const OperandScale& scale,
                                     uintptr_t data) {
    if (scale.mode == ScaleMode::kNone) return nullptr;
    return View(slot, TensorSpec{DType::kF32, scale.dims, scale.minor_to_major}, data);
  }

  CudaDotPlan* Plan() {
    if (plan_ == nullptr) plan_ = ValueOrThrow(GetCachedCudaDotPlan(spec_));
    return plan_;
  }

  DotSpec spec_;
  CanonicalDot dot_;
  CudaDotPlan* plan_ = nullptr;  // owned by the process-wide cache
};

std::string ResolveAccumulationName(const std::string& lhs_dtype, const std::string& rhs_dtype,
                                    const std::pair<std::string, std::string>& precision,
                                    const std::optional<std::string>& algorithm) {
  return AccumulationModeName(ValueOrThrow(ResolveAccumulation(
      ValueOrThrow(DTypeFromFrameworkName(lhs_dtype)),
      ValueOrThrow(DTypeFromFrameworkName(rhs_dtype)), PrecisionOf(precision, algorithm))));
}

}  // namespace
}  // namespace fp8dot

NB_MODULE(_core, m) {
  using namespace fp8dot;
  m.doc() = "fp8dot's C++ library: scaled FP8 dots whose PrecisionConfig decides the accumulation";
  m.attr("__version__") = FP8DOT_VERSION;
  // The Python package caches Dots for the life of the process, so some are alive when the
  // interpreter tears modules down; that is not a reference leak worth a warning at every exit.
  nb::set_leak_warnings(false);
  m.attr("cuda_built") = CudaBackendBuilt();

  m.def("resolve_accumulation", &ResolveAccumulationName, nb::arg("lhs_dtype"),
        nb::arg("rhs_dtype"), nb::arg("precision"), nb::arg("algorithm") = nb::none(),
        "The accumulation mode ResolveAccumulation gives the types and PrecisionConfig.");
  m.def(
      "cuda_device",
      []() -> std::optional<std::string> {
        StatusOr<CudaDeviceInfo> info = QueryCudaDevice();
        if (!info.ok()) return std::nullopt;
        return info->name;
      },
      "The name of the Hopper GPU fp8dot would run on, or None.");
  m.def(
      "cuda_unavailable_reason",
      []() -> std::string {
        StatusOr<CudaDeviceInfo> info = QueryCudaDevice();
        return info.ok() ? "" : info.status().message();
      },
      "Why the CUDA backend cannot run here ('' when it can).");
  m.def(
      "resolve_backend",
      [](const std::string& name) {
        return std::string(BackendName(ResolveBackend(ValueOrThrow(ParseBackend(name)))));
      },
      nb::arg("backend"), "The backend a name resolves to on this machine (auto -> cuda or cpu).");

  nb::class_<Dot>(m, "Dot")
      .def(nb::init<const ArrayDescription&, const ArrayDescription&,
                    std::optional<std::tuple<std::vector<int64_t>, std::vector<int64_t>,
                                             std::vector<int64_t>, std::vector<int64_t>>>,
                    const std::pair<std::string, std::string>&, const std::optional<std::string>&,
                    const std::string&, const std::optional<ArrayDescription>&,
                    const std::optional<ArrayDescription>&, const std::optional<std::string>&,
                    const std::optional<std::string>&, const std::optional<ArrayDescription>&,
                    const std::optional<ArrayDescription>&, const std::optional<std::string>&,
                    double, double, bool, bool>(),
           nb::arg("lhs"), nb::arg("rhs"), nb::arg("dimension_numbers").none(),
           nb::arg("precision"), nb::arg("algorithm").none(), nb::arg("out_dtype"),
           nb::arg("lhs_scale").none(), nb::arg("rhs_scale").none(),
           nb::arg("lhs_scale_mode").none(), nb::arg("rhs_scale_mode").none(),
           nb::arg("bias").none(), nb::arg("c").none(), nb::arg("epilogue").none(),
           nb::arg("alpha"), nb::arg("beta"), nb::arg("output_scale"), nb::arg("amax"))
      .def_prop_ro("output_shape", &Dot::output_shape)
      .def_prop_ro("output_dtype", &Dot::output_dtype)
      .def_prop_ro("accumulation", &Dot::accumulation)
      .def_prop_ro("lhs_scale_mode", &Dot::lhs_scale_mode)
      .def_prop_ro("rhs_scale_mode", &Dot::rhs_scale_mode)
      .def_prop_ro("gemm", &Dot::gemm, "(batch, M, N, K) of the canonical GEMM")
      .def_prop_ro("key", &Dot::key)
      .def("run_host", &Dot::RunHost)
      .def("run_cuda", &Dot::RunCuda)
      .def("explain", &Dot::Explain, nb::arg("backend"));
}
