// Helpers shared by the GPU tests: skipping without a GPU, running a DotProblem through a
// CudaDotPlan on poisoned outputs, and the error tolerance each accumulation mode earns.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "fp8dot/cpu_backend.h"
#include "fp8dot/cuda_backend.h"
#include "fp8dot/cuda_buffer.h"
#include "fp8dot/cuda_device.h"
#include "fp8dot/dot_problem.h"
#include "fp8dot/error_metrics.h"
#include "status_matchers.h"

// GPU tests skip visibly (with the reason) where there is no Hopper GPU, e.g. in CI.
#define FP8_SKIP_WITHOUT_GPU()                                                              \
  do {                                                                                      \
    ::fp8dot::StatusOr<::fp8dot::CudaDeviceInfo> fp8_device_ = ::fp8dot::QueryCudaDevice(); \
    if (!fp8_device_.ok()) GTEST_SKIP() << fp8_device_.status().message();                  \
  } while (0)

namespace fp8dot::testing {

// ---- Tolerances ---------------------------------------------------------------------------------
// Relative Frobenius error ||D - D_exact|| / ||D_exact|| allowed for symmetric random data.
//
// Accumulation (the measured H200 values are in docs/FACTS.md, "Accuracy" table):
//   fp8-fast: the tensor core keeps ~14 mantissa bits of the running sum (unit roundoff
//     u ~ 2^-14); K products reach a 32-wide accumulator K/32 times, and random rounding errors
//     add like a random walk: ~ u sqrt(K/32) relative. Measured: 1.8e-4 at K=256, 1.2e-3 at
//     K=4096. Allowed: 4 * 2^-13 * sqrt(K/32), 5-10x above the measurement.
//   fp8-promoted: the same ~14-bit partial sums, but promoted to FP32 every 128 K-elements,
//     so the error does not grow with K. Measured 1.1e-4 at every K. Allowed: 8 * 2^-13 ~ 1e-3.
//   f32 (FP32, or bf16/f16 inputs whose products are exact in f32): u = 2^-24 per add,
//     random walk over K terms: allowed 16 * 2^-24 * sqrt(K) (~1e-5 at K=512: TF32's ~2^-11
//     would fail it, so the FP32 test can tell the two apart).
//   tf32: inputs rounded to 10 mantissa bits (u = 2^-11) before exact products: allowed 4 * 2^-11.
// Output rounding: each element is rounded once to the output type (unit roundoff 2^-(p+1)
// with p stored mantissa bits), which adds at most that much relative error per element and so
// at most that much to the relative Frobenius norm: allowed 1.1 * 2^-(p+1).
inline double AccumulationTolerance(AccumulationMode mode, int64_t k) {
  const double kd = static_cast<double>(k);
  switch (mode) {
    case AccumulationMode::kFp8Fast:
      return 4.0 * std::ldexp(1.0, -13) * std::sqrt(std::max(1.0, kd / 32.0));
    case AccumulationMode::kFp8Promoted:
      return 8.0 * std::ldexp(1.0, -13);
    case AccumulationMode::kTf32:
      return 4.0 * std::ldexp(1.0, -11);
    default:
      return 16.0 * std::ldexp(1.0, -24) * std::sqrt(kd);
  }
}

inline double OutputRoundingTolerance(DType out) {
  return 1.1 * std::ldexp(1.0, -(DTypeMantissaBits(out) + 1));
}

// e5m2 x e5m2 runs as an exact upcast GEMM with FP32 accumulation whatever the mode asks for.
inline double Tolerance(const DotSpec& spec, const CanonicalDot& dot) {
  AccumulationMode mode = dot.accumulation;
  if (IsFp8Accumulation(mode) && !IsNativeFp8Pair(spec.lhs.dtype, spec.rhs.dtype)) {
    mode = AccumulationMode::kF32;
  }
  return AccumulationTolerance(mode, dot.k) + OutputRoundingTolerance(spec.output_type);
}

// ---- Problems -----------------------------------------------------------------------------------

// The same values in another layout (minor_to_major).
inline StatusOr<HostTensor> WithLayout(const HostTensor& tensor,
                                       const std::vector<int64_t>& minor_to_major) {
  FP8_ASSIGN_OR_RETURN(HostTensor out,
                       HostTensor::Create(tensor.dtype(), tensor.dims(), minor_to_major));
  const HostTensor row_major = tensor.ToRowMajor();
  std::vector<int64_t> index(static_cast<size_t>(tensor.rank()), 0);
  for (int64_t i = 0; i < row_major.element_count(); ++i) {
    out.Set(index, row_major.GetPhysical(i));
    for (int64_t d = tensor.rank() - 1; d >= 0; --d) {
      if (++index[static_cast<size_t>(d)] < tensor.dim(d)) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
  return out;
}

// For FP8 outputs: an output scale that maps the largest |D| to ~80% of the type's max, so the
// test measures rounding, not saturation.
inline void FitOutputScale(DotProblem& problem, const HostTensor& exact) {
  if (!problem.output_scale.has_value()) return;
  double max_abs = 0;
  for (int64_t i = 0; i < exact.element_count(); ++i) {
    max_abs = std::fmax(max_abs, std::fabs(exact.GetPhysical(i)));
  }
  const double scale = 0.8 * DTypeMaxFinite(problem.spec.output_type) / std::fmax(max_abs, 1e-30);
  problem.output_scale = HostTensor::Scalar(DType::kF32, scale);
}

// ---- Running on the GPU ------------------------------------------------------------------------

struct GpuRun {
  DotResult result;
  CudaPlanInfo info;
  std::string explain;
};

inline StatusOr<DeviceBuffer> Upload(const HostTensor* tensor) {
  if (tensor == nullptr) return DeviceBuffer();
  FP8_ASSIGN_OR_RETURN(
      DeviceBuffer buffer,
      DeviceBuffer::Allocate(static_cast<size_t>(tensor->size_in_bytes()), "test"));
  if (cudaMemcpy(buffer.data(), tensor->data(), buffer.size(), cudaMemcpyHostToDevice) !=
      cudaSuccess) {
    return Internal("upload failed");
  }
  return buffer;
}

// Device buffers for a problem; the output and amax are poisoned with 0xFF bytes (NaN in every
// output type), so an element the plan fails to write shows up as a NaN.
struct GpuBuffers {
  DeviceBuffer lhs, rhs, lhs_scale, rhs_scale, c, bias, output_scale, output, amax;
  CudaDotBuffers pointers;
};

inline StatusOr<GpuBuffers> MakeGpuBuffers(const DotProblem& p, const CanonicalDot& dot) {
  GpuBuffers g;
  FP8_ASSIGN_OR_RETURN(g.lhs, Upload(&p.lhs));
  FP8_ASSIGN_OR_RETURN(g.rhs, Upload(&p.rhs));
  FP8_ASSIGN_OR_RETURN(g.lhs_scale, Upload(p.lhs_scale ? &*p.lhs_scale : nullptr));
  FP8_ASSIGN_OR_RETURN(g.rhs_scale, Upload(p.rhs_scale ? &*p.rhs_scale : nullptr));
  FP8_ASSIGN_OR_RETURN(g.c, Upload(p.c ? &*p.c : nullptr));
  FP8_ASSIGN_OR_RETURN(g.bias, Upload(p.bias ? &*p.bias : nullptr));
  FP8_ASSIGN_OR_RETURN(g.output_scale, Upload(p.output_scale ? &*p.output_scale : nullptr));
  const size_t out_bytes =
      static_cast<size_t>(ElementCount(dot.output_dims) * DTypeSizeInBytes(p.spec.output_type));
  FP8_ASSIGN_OR_RETURN(g.output, DeviceBuffer::Allocate(out_bytes, "output"));
  if (cudaMemset(g.output.data(), 0xFF, out_bytes) != cudaSuccess) return Internal("poison");
  if (p.spec.compute_amax) {
    FP8_ASSIGN_OR_RETURN(g.amax, DeviceBuffer::Allocate(sizeof(float), "amax"));
    if (cudaMemset(g.amax.data(), 0xFF, sizeof(float)) != cudaSuccess) return Internal("poison");
  }
  g.pointers = {g.lhs.data(),
                g.rhs.data(),
                g.lhs_scale.as<const float>(),
                g.rhs_scale.as<const float>(),
                g.c.data(),
                g.bias.data(),
                g.output_scale.as<const float>(),
                g.output.data(),
                g.amax.as<float>()};
  return g;
}

inline StatusOr<DotResult> Download(const GpuBuffers& g, const DotSpec& spec,
                                    const CanonicalDot& dot) {
  DotResult result;
  result.accumulation = dot.accumulation;
  FP8_ASSIGN_OR_RETURN(result.output, HostTensor::Create(spec.output_type, dot.output_dims));
  if (cudaMemcpy(result.output.data(), g.output.data(), g.output.size(), cudaMemcpyDeviceToHost) !=
      cudaSuccess) {
    return Internal("download failed: %s", cudaGetErrorString(cudaGetLastError()));
  }
  if (spec.compute_amax) {
    float amax = 0;
    if (cudaMemcpy(&amax, g.amax.data(), sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) {
      return Internal("download failed");
    }
    result.amax = amax;
  }
  return result;
}

// Plans `p.spec`, runs it once on the default stream and brings the result back.
inline StatusOr<GpuRun> RunOnGpu(const DotProblem& p, const CudaDotOptions& options = {}) {
  FP8_ASSIGN_OR_RETURN(CanonicalDot dot, ValidateDotSpec(p.spec));
  FP8_ASSIGN_OR_RETURN(std::unique_ptr<CudaDotPlan> plan, CudaDotPlan::Create(p.spec, options));
  FP8_ASSIGN_OR_RETURN(GpuBuffers g, MakeGpuBuffers(p, dot));
  FP8_RETURN_IF_ERROR(plan->Run(g.pointers, nullptr));
  if (cudaDeviceSynchronize() != cudaSuccess) {
    return Internal("kernel failed: %s", cudaGetErrorString(cudaGetLastError()));
  }
  GpuRun run;
  FP8_ASSIGN_OR_RETURN(run.result, Download(g, p.spec, dot));
  run.info = plan->info();
  run.explain = plan->Explain();
  return run;
}

// Runs `p` on the GPU and checks D (and amax) against the exact reference within the mode's
// tolerance (times `slack` for extra rounding steps, e.g. a GELU approximation); every element
// must be written (no NaN left from the poison). Returns the relative Frobenius error.
inline double ExpectMatchesReference(DotProblem p, const std::string& label, double extra = 0.0,
                                     const CudaDotOptions& options = {}) {
  StatusOr<CanonicalDot> dot = ValidateDotSpec(p.spec);
  EXPECT_TRUE(dot.ok()) << label << ": " << dot.status().ToString();
  if (!dot.ok()) return -1;
  StatusOr<HostTensor> exact = ReferenceDotExact(p.spec, p.arguments());
  EXPECT_TRUE(exact.ok()) << label << ": " << exact.status().ToString();
  if (!exact.ok()) return -1;
  FitOutputScale(p, *exact);
  StatusOr<GpuRun> run = RunOnGpu(p, options);
  EXPECT_TRUE(run.ok()) << label << ": " << run.status().ToString();
  if (!run.ok()) return -1;
  const double scale_d = p.output_scale ? p.output_scale->GetPhysical(0) : 1.0;
  StatusOr<ErrorStats> error = CompareToReference(run->result.output, *exact, scale_d);
  EXPECT_TRUE(error.ok()) << label;
  if (!error.ok()) return -1;
  const double tolerance = Tolerance(p.spec, *dot) + extra;
  EXPECT_EQ(error->nonfinite_mismatches, 0) << label << ": unwritten or NaN elements\n" << run->explain;
  EXPECT_LE(error->relative_frobenius, tolerance)
      << label << ": relative Frobenius error " << error->relative_frobenius << " > tolerance "
      << tolerance << " (max abs " << error->max_abs << ")\n"
      << run->explain;
  if (p.spec.compute_amax) {
    double amax = 0;
    for (int64_t i = 0; i < exact->element_count(); ++i) {
      amax = std::fmax(amax, std::fabs(exact->GetPhysical(i)));
    }
    // amax is taken from D in f32 before the output conversion: only the accumulation error.
    EXPECT_TRUE(run->result.amax.has_value()) << label;
    if (run->result.amax.has_value()) {
      EXPECT_NEAR(*run->result.amax, amax,
                  AccumulationTolerance(dot->accumulation, dot->k) * amax * 4 + 1e-6)
          << label << ": amax";
    }
  }
  return error->relative_frobenius;
}

}  // namespace fp8dot::testing
