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
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bindings/dot_pointers.h"
#include "bindings/dot_request.h"
#include "bindings/quantize_request.h"
#include "fp8dot/cpu_backend.h"
#include "fp8dot/cuda_backend.h"
#include "fp8dot/cuda_device.h"
#include "fp8dot/quantize.h"
#include "fp8dot/run_dot.h"
#ifdef FP8DOT_HAVE_XLA_FFI
#include "jax/ffi_handlers.h"
#endif

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
      double alpha, double beta, bool output_scale, bool amax, const std::string& engine) {
    DotRequest request;
    request.lhs = SpecOfArgument(lhs, "lhs");
    request.rhs = SpecOfArgument(rhs, "rhs");
    if (dimension_numbers) {
      auto& [lhs_contracting, rhs_contracting, lhs_batch, rhs_batch] = *dimension_numbers;
      request.dimension_numbers = {lhs_batch, rhs_batch, lhs_contracting, rhs_contracting};
    }
    request.precision = {precision.first, precision.second};
    request.algorithm = algorithm.value_or("");
    request.output_type = ValueOrThrow(DTypeFromFrameworkName(out_dtype));
    if (lhs_scale) request.lhs_scale = SpecOfArgument(*lhs_scale, "lhs_scale");
    if (rhs_scale) request.rhs_scale = SpecOfArgument(*rhs_scale, "rhs_scale");
    request.lhs_scale_mode = lhs_scale_mode.value_or("");
    request.rhs_scale_mode = rhs_scale_mode.value_or("");
    if (bias) request.bias = SpecOfArgument(*bias, "bias");
    if (c) request.c = SpecOfArgument(*c, "c");
    request.epilogue = epilogue.value_or("");
    request.alpha = alpha;
    request.beta = beta;
    request.output_scale = output_scale;
    request.compute_amax = amax;
    spec_ = ValueOrThrow(MakeDotSpec(request));
    dot_ = ValueOrThrow(ValidateDotSpec(spec_));
    cuda_options_.engine = ValueOrThrow(ParseGemmEngine(engine));
  }

  std::vector<int64_t> output_shape() const { return dot_.output_dims; }
  std::string output_dtype() const { return FrameworkDTypeName(spec_.output_type); }
  std::string accumulation() const { return AccumulationModeName(dot_.accumulation); }
  std::string lhs_scale_mode() const { return ScaleModeName(spec_.lhs_scale.mode); }
  std::string rhs_scale_mode() const { return ScaleModeName(spec_.rhs_scale.mode); }
  // The scale layouts (minor-to-major; empty = row-major) the CUDA engines read in place for
  // the dot's scale modes (InPlaceScaleLayout).
  std::pair<std::vector<int64_t>, std::vector<int64_t>> in_place_scale_layouts() const {
    return {InPlaceScaleLayout(spec_.lhs_scale.mode, true),
            InPlaceScaleLayout(spec_.rhs_scale.mode, false)};
  }
  std::tuple<int64_t, int64_t, int64_t, int64_t> gemm() const {
    return {dot_.batch, dot_.m, dot_.n, dot_.k};
  }
  std::string key() const { return DotSpecKey(spec_); }

  // Runs on host memory with a CPU backend (or "cuda"/"auto", which copy through the GPU) and
  // writes the row-major result to `out`. Returns (amax or None, backend that ran, milliseconds).
  std::tuple<std::optional<double>, std::string, double> RunHost(
      const std::string& backend_name, uintptr_t lhs, uintptr_t rhs, uintptr_t lhs_scale,
      uintptr_t rhs_scale, uintptr_t bias, uintptr_t c, uintptr_t output_scale, uintptr_t out) {
    const Backend backend = BackendWithEngine(backend_name);
    RunDotOptions options;
    options.engine = cuda_options_.engine;
    DotRunInfo info;
    StatusOr<std::optional<double>> amax = [&] {
      nb::gil_scoped_release release;
      return RunDotInto(backend, spec_,
                        Pointers(lhs, rhs, lhs_scale, rhs_scale, bias, c, output_scale),
                        reinterpret_cast<void*>(out), options, &info);
    }();
    if (!amax.ok()) Raise(amax.status());
    return {*amax, BackendName(info.backend), info.milliseconds};
  }

  // Enqueues the dot on `stream` over device pointers (CudaDotPlan::Run); the plan is made on
  // the first call and kept.
  void RunCuda(uintptr_t lhs, uintptr_t rhs, uintptr_t lhs_scale, uintptr_t rhs_scale,
               uintptr_t bias, uintptr_t c, uintptr_t output_scale, uintptr_t out, uintptr_t amax,
               uintptr_t stream) {
    const CudaDotBuffers buffers =
        CudaBuffersOf(Pointers(lhs, rhs, lhs_scale, rhs_scale, bias, c, output_scale),
                      reinterpret_cast<void*>(out), reinterpret_cast<float*>(amax));
    ThrowIfError(Plan()->Run(buffers, reinterpret_cast<CudaStream>(stream)));
  }

  // Makes (and autotunes) the CUDA plan now, for callers that will run the dot where a plan
  // cannot be made: inside a CUDA graph capture (an XLA command buffer).
  void PrepareCuda() { Plan(); }

  // The GEMM engine the CUDA plan runs ("cuBLASLt", or the own kernel and its tile): the
  // plan's own answer for the current GPU. Without a plan yet, a plan is made to ask and then
  // freed, so that asking (fp8dot.torch.explain) keeps no workspace alive.
  // With autotuning on, the answer is the race's, so the plan is made and kept (a race run
  // only to ask would be run again by the first dot).
  std::string CudaEngine() {
    const CudaDotOptions options = PlanOptions();
    if (plan_ != nullptr || options.autotune_candidates > 1) return Plan()->info().engine;
    return ValueOrThrow(CudaDotPlan::Create(spec_, options))->info().engine;
  }

  std::string Explain(const std::string& backend_name) {
    const Backend backend = ResolveBackend(BackendWithEngine(backend_name));
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
  static DotPointers Pointers(uintptr_t lhs, uintptr_t rhs, uintptr_t lhs_scale,
                              uintptr_t rhs_scale, uintptr_t bias, uintptr_t c,
                              uintptr_t output_scale) {
    auto pointer = [](uintptr_t address) { return reinterpret_cast<const void*>(address); };
    return {pointer(lhs),  pointer(rhs), pointer(lhs_scale),   pointer(rhs_scale),
            pointer(bias), pointer(c),   pointer(output_scale)};
  }

  // The backend named, which must be the CUDA backend (or auto) when an engine is asked for.
  Backend BackendWithEngine(const std::string& backend_name) const {
    const Backend backend = ValueOrThrow(ParseBackend(backend_name));
    if (IsCpuBackend(backend) && cuda_options_.engine != GemmEngine::kAuto) {
      Raise(
          InvalidArgument("engine '%s' is one of the CUDA backend's GEMM engines, but backend "
                          "'%s' runs on the CPU",
                          GemmEngineName(cuda_options_.engine), backend_name.c_str()));
    }
    return backend;
  }

  // The engine asked for, with the process's autotuning setting (fp8dot.set_autotune): the
  // options every plan made on a caller's behalf has, so the JAX FFI handlers find the plans
  // made here while tracing.
  CudaDotOptions PlanOptions() const {
    CudaDotOptions options = ValueOrThrow(DefaultCudaDotOptions());
    options.engine = cuda_options_.engine;
    return options;
  }

  // The plan for the current device and autotuning setting: one Dot may run on several GPUs, a
  // plan's memory and descriptors belong to the device it was made on, and the JAX handlers
  // look plans up with the setting their program was traced with.
  CudaDotPlan* Plan() {
    const int device = ValueOrThrow(CurrentCudaDevice());
    const CudaDotOptions options = PlanOptions();
    if (plan_ == nullptr || plan_device_ != device ||
        plan_autotune_ != std::tie(options.autotune_candidates, options.autotune_cache_path)) {
      plan_ = ValueOrThrow(GetCachedCudaDotPlan(spec_, options));
      plan_device_ = device;
      plan_autotune_ = {options.autotune_candidates, options.autotune_cache_path};
    }
    return plan_;
  }

  DotSpec spec_;
  CanonicalDot dot_;
  CudaDotOptions cuda_options_;                 // the engine asked for
  CudaDotPlan* plan_ = nullptr;                 // owned by the process-wide cache
  int plan_device_ = -1;                        // the device plan_ was made for
  std::tuple<int, std::string> plan_autotune_;  // and the autotuning it was made with
};

// One validated quantisation (quantize.h) of a dense row-major matrix: its outputs' shapes, and
// runs on host or device pointers. Cached by the Python package like Dots.
class Quantizer {
 public:
  Quantizer(const ArrayDescription& input, const std::string& out_dtype,
            const std::string& granularity, bool row_major, bool transposed, bool given_scale,
            int margin, bool amax, const std::string& scale_layout,
            const std::optional<ArrayDescription>& up, const std::string& activation) {
    QuantizeRequest request;
    request.input = SpecOfArgument(input, "quantize input");
    if (up.has_value()) request.up = SpecOfArgument(*up, "quantize up");
    request.activation = activation;
    request.output_type = ValueOrThrow(DTypeFromFrameworkName(out_dtype));
    request.granularity = granularity;
    request.row_major = row_major;
    request.transposed = transposed;
    request.given_scale = given_scale;
    request.margin = margin;
    request.compute_amax = amax;
    request.scale_layout = scale_layout;
    std::tie(spec_, outputs_) = ValueOrThrow(MakeQuantizeSpec(request));
  }

  // Whether the 2-D scales are column-major (ScaleLayout::kColumnMajor): each is then the
  // transpose of a row-major [K-blocks, rows] array.
  bool column_major_scales() const { return !outputs_.scale_minor_to_major.empty(); }

  // Shapes of (q, scale, qᵀ, scaleᵀ); None for what the spec does not produce.
  using Shape = std::optional<std::vector<int64_t>>;
  std::tuple<Shape, Shape, Shape, Shape> shapes() const {
    auto shape = [](bool present, const std::vector<int64_t>& dims) -> Shape {
      return present ? Shape(dims) : std::nullopt;
    };
    return {shape(spec_.row_major, outputs_.output_dims),
            shape(outputs_.has_scale, outputs_.scale_dims),
            shape(spec_.transposed, outputs_.transposed_output_dims),
            shape(outputs_.has_transposed_scale, outputs_.transposed_scale_dims)};
  }

  void RunHost(uintptr_t input, uintptr_t given_scale, uintptr_t output, uintptr_t scale,
               uintptr_t transposed_output, uintptr_t transposed_scale, uintptr_t amax,
               uintptr_t up) {
    const QuantizeBuffers buffers =
        Buffers(input, given_scale, output, scale, transposed_output, transposed_scale, amax, up);
    nb::gil_scoped_release release;
    ThrowIfError(QuantizeOnCpu(spec_, buffers));
  }

  void RunCuda(uintptr_t input, uintptr_t given_scale, uintptr_t output, uintptr_t scale,
               uintptr_t transposed_output, uintptr_t transposed_scale, uintptr_t amax,
               uintptr_t up, uintptr_t stream) {
    ThrowIfError(QuantizeOnCuda(
        spec_,
        Buffers(input, given_scale, output, scale, transposed_output, transposed_scale, amax, up),
        reinterpret_cast<CudaStream>(stream)));
  }

 private:
  static QuantizeBuffers Buffers(uintptr_t input, uintptr_t given_scale, uintptr_t output,
                                 uintptr_t scale, uintptr_t transposed_output,
                                 uintptr_t transposed_scale, uintptr_t amax, uintptr_t up) {
    auto floats = [](uintptr_t address) { return reinterpret_cast<float*>(address); };
    return {reinterpret_cast<const void*>(input),
            floats(given_scale),
            reinterpret_cast<void*>(output),
            floats(scale),
            reinterpret_cast<void*>(transposed_output),
            floats(transposed_scale),
            floats(amax),
            reinterpret_cast<const void*>(up)};
  }

  QuantizeSpec spec_;
  QuantizeOutputs outputs_;
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

  m.def(
      "set_autotune",
      [](int candidates, const std::string& cache_path) {
        ThrowIfError(SetDefaultAutotune({.candidates = candidates, .cache_path = cache_path}));
      },
      nb::arg("candidates"), nb::arg("cache_path") = "",
      "Autotuning for the plans fp8dot makes on the caller's behalf (SetDefaultAutotune).");
  m.def(
      "autotune_setting",
      []() {
        const AutotuneSetting setting = ValueOrThrow(DefaultAutotune());
        return std::make_pair(setting.candidates, setting.cache_path);
      },
      "(candidates, cache_path) of the process's autotuning setting (DefaultAutotune).");

#ifdef FP8DOT_HAVE_XLA_FFI
  m.def(
      "xla_ffi_handlers",
      []() {
        nb::dict dot, quantize, targets;
        dot["cpu"] = nb::capsule(reinterpret_cast<void*>(&Fp8dotScaledDotCpu));
        quantize["cpu"] = nb::capsule(reinterpret_cast<void*>(&Fp8dotQuantizeCpu));
#ifdef FP8DOT_HAVE_CUDA
        dot["CUDA"] = nb::capsule(reinterpret_cast<void*>(&Fp8dotScaledDotCuda));
        quantize["CUDA"] = nb::capsule(reinterpret_cast<void*>(&Fp8dotQuantizeCuda));
#endif
        targets["fp8dot_scaled_dot"] = dot;
        targets["fp8dot_quantize"] = quantize;
        return targets;
      },
      "fp8dot's XLA FFI handlers: {target: {platform: capsule}} (jax.ffi.register_ffi_target).");
#endif

  nb::class_<Dot>(m, "Dot")
      .def(nb::init<const ArrayDescription&, const ArrayDescription&,
                    std::optional<std::tuple<std::vector<int64_t>, std::vector<int64_t>,
                                             std::vector<int64_t>, std::vector<int64_t>>>,
                    const std::pair<std::string, std::string>&, const std::optional<std::string>&,
                    const std::string&, const std::optional<ArrayDescription>&,
                    const std::optional<ArrayDescription>&, const std::optional<std::string>&,
                    const std::optional<std::string>&, const std::optional<ArrayDescription>&,
                    const std::optional<ArrayDescription>&, const std::optional<std::string>&,
                    double, double, bool, bool, const std::string&>(),
           nb::arg("lhs"), nb::arg("rhs"), nb::arg("dimension_numbers").none(),
           nb::arg("precision"), nb::arg("algorithm").none(), nb::arg("out_dtype"),
           nb::arg("lhs_scale").none(), nb::arg("rhs_scale").none(),
           nb::arg("lhs_scale_mode").none(), nb::arg("rhs_scale_mode").none(),
           nb::arg("bias").none(), nb::arg("c").none(), nb::arg("epilogue").none(),
           nb::arg("alpha"), nb::arg("beta"), nb::arg("output_scale"), nb::arg("amax"),
           nb::arg("engine") = "auto")
      .def_prop_ro("output_shape", &Dot::output_shape)
      .def_prop_ro("output_dtype", &Dot::output_dtype)
      .def_prop_ro("accumulation", &Dot::accumulation)
      .def_prop_ro("lhs_scale_mode", &Dot::lhs_scale_mode)
      .def_prop_ro("rhs_scale_mode", &Dot::rhs_scale_mode)
      .def_prop_ro("in_place_scale_layouts", &Dot::in_place_scale_layouts,
                   "(lhs, rhs) scale layouts the CUDA engines read in place")
      .def_prop_ro("gemm", &Dot::gemm, "(batch, M, N, K) of the canonical GEMM")
      .def_prop_ro("key", &Dot::key)
      .def("run_host", &Dot::RunHost)
      .def("run_cuda", &Dot::RunCuda)
      .def("prepare_cuda", &Dot::PrepareCuda)
      .def("cuda_engine", &Dot::CudaEngine)
      .def("explain", &Dot::Explain, nb::arg("backend"));

  nb::class_<Quantizer>(m, "Quantizer")
      .def(nb::init<const ArrayDescription&, const std::string&, const std::string&, bool, bool,
                    bool, int, bool, const std::string&, const std::optional<ArrayDescription>&,
                    const std::string&>(),
           nb::arg("input"), nb::arg("out_dtype"), nb::arg("granularity"), nb::arg("row_major"),
           nb::arg("transposed"), nb::arg("given_scale"), nb::arg("margin"), nb::arg("amax"),
           nb::arg("scale_layout") = "row-major", nb::arg("up") = nb::none(),
           nb::arg("activation") = "")
      .def_prop_ro("shapes", &Quantizer::shapes, "(q, scale, q_t, scale_t) shapes or None")
      .def_prop_ro("column_major_scales", &Quantizer::column_major_scales,
                   "whether the 2-D scales are column-major (each a transposed row-major array)")
      .def("run_host", &Quantizer::RunHost)
      .def("run_cuda", &Quantizer::RunCuda);
}
