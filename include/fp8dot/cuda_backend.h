// The CUDA backend: a DotSpec executed by cuBLASLt on a Hopper GPU.
//
//   D = epilogue(alpha * scale_a * scale_b * (A . B) + beta * C + bias)
//   for FP8 outputs: D_out = saturate(D * scale_d), amax = max |D| (before scale_d)
//
// Two levels:
//   CudaDot        host tensors in, host result out (copies in, runs, copies back); for the CLI
//                  and the tests. Plans come from a process-wide cache keyed by the DotSpec.
//   CudaDotPlan    made once per DotSpec: owns the cuBLASLt descriptors, layouts, the chosen
//                  algorithm, the workspace and any scratch buffers; Run() enqueues the dot on a
//                  stream with device buffers and allocates nothing, so it can be captured in a
//                  CUDA graph. One plan serves one stream at a time (its scratch is shared).
//
// The accumulation comes from ValidateDotSpec -> ResolveAccumulation only: an FP8 plan sets
// CUBLASLT_MATMUL_DESC_FAST_ACCUM to 1 exactly when that mode is kFp8Fast, and Explain() shows
// the value read back from the descriptor.
//
// Without a CUDA build (or without a Hopper GPU) every entry point returns UNAVAILABLE.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "fp8dot/dot_arguments.h"
#include "fp8dot/k_split.h"
#include "fp8dot/quantize.h"

struct CUstream_st;

namespace fp8dot {

using CudaStream = CUstream_st*;  // the same type as cudaStream_t; nullptr = default stream

// Which GEMM implementation a plan runs.
//   kCublasLt  cuBLASLt (every dot the backend supports).
//   kOwn       fp8dot's own Hopper kernel (src/cuda/kernels/block_scaled_gemm.h): FP8 operands
//              with A 1x128 and B 128x128 or 1x128 block scales, promoted accumulation, bf16/f32
//              D, no C/bias/activation/output scale/amax, no batch. Asking for it on another dot
//              is an INVALID_ARGUMENT that says why.
//   kAuto      on a dot both engines can run: with autotuning (autotune_candidates > 1), the
//              fastest of cuBLASLt and the own kernel on each of four candidate tiles, timed
//              when the plan is made (cached in autotune_cache_path);
//              without, the own kernel where it measured faster on the H200 (B 128x128 at
//              M <= 64, at M <= 128 with the plan's tile and split-K filling the GPU in one
//              wave, and at M >= 4096 with N >= 2048 and K >= 512: 1.00-1.59x; B 1x128 at
//              M >= 2048 and K >= 2048 where the plan's tile is 192x128: 1.01-1.09x) and
//              cuBLASLt elsewhere (docs/own-gemm.md). The own kernel also takes the dots
//              cuBLASLt has no kernel for.
enum class GemmEngine { kAuto, kCublasLt, kOwn };
const char* GemmEngineName(GemmEngine engine);  // "auto", "cublaslt", "own"
StatusOr<GemmEngine> ParseGemmEngine(std::string_view text);

struct CudaDotOptions {
  // cuBLASLt workspace owned by the plan (split-K and stream-K kernels use it).
  size_t workspace_bytes = size_t{32} << 20;
  // 0: take the heuristic's first algorithm. N > 0: time the heuristic's top N candidates on
  // scratch data when the plan is made and keep the fastest (never slower than the first); with
  // kAuto and N > 1, also race the two engines (GemmEngine); with kOwn, N > 1 and no own_tile,
  // race the own kernel's tiles (its plan's choice and the cost model's next, min(N, 4) in all).
  int autotune_candidates = 0;
  // With autotuning: a text file that remembers the winner per problem across processes.
  std::string autotune_cache_path;
  GemmEngine engine = GemmEngine::kAuto;
  // The own kernel's tile, e.g. "256x128c2" (rows x columns, c2: two CTAs share A; a suffix
  // "s4": split-K into 4 runs); "" lets the plan choose. Used whenever the own kernel runs (kOwn,
  // or kAuto's choice). For tuning and tests; an unknown tile is an error listing the known ones.
  std::string own_tile;
  // K-elements the own kernel lets the tensor core sum between promotions into f32, with tensor
  // or row scales: a positive multiple of 128 (fewer promotions: faster, less exact; 0 = 128,
  // cuBLASLt's interval). Block scales promote every 128 (another value is an error).
  int own_promotion_interval = 0;
  // The SMs the GEMM may run on, at most (0: all of them), so that kernels running beside it on
  // other streams (a collective's, say) keep the rest: cuBLASLt's SM count target, and the own
  // kernel's persistent grid (its tile is chosen for that many SMs). A count above the device's
  // means all of them; a negative one is an error.
  int sm_count_target = 0;
};

// Device pointers for one run. Every tensor uses the layout its DotSpec gives (the same bytes a
// HostTensor of that spec holds); scales use the spec's scale shapes and layouts (OperandScale).
// Null = absent.
struct CudaDotBuffers {
  const void* lhs = nullptr;
  const void* rhs = nullptr;
  const float* lhs_scale = nullptr;     // when spec.lhs_scale.mode != kNone
  const float* rhs_scale = nullptr;     // when spec.rhs_scale.mode != kNone
  const void* c = nullptr;              // when spec.c
  const void* bias = nullptr;           // when spec.bias
  const float* output_scale = nullptr;  // f32 scalar, when spec.output_scale
  void* output = nullptr;               // row-major CanonicalDot::output_dims, spec.output_type
  float* amax = nullptr;                // one f32, when spec.compute_amax
};

// What autotuning did for a plan (CudaDotOptions::autotune_candidates > 1).
struct AutotuneSummary {
  bool ran = false;         // autotuning was asked for
  bool from_cache = false;  // the winner came from CudaDotOptions::autotune_cache_path
  int candidates = 0;       // timed
  int chosen = 0;           // index among the heuristic's candidates; 0 = its first choice
  double first_ms = 0;      // per call, in a CUDA graph on operands streaming from HBM
  double chosen_ms = 0;
  // kAuto on a dot both engines can run: whole plans on each engine were timed (or the winner
  // taken from the cache file), and the faster kept. Not set where cuBLASLt had no kernel for
  // the dot (nothing to race).
  bool engines_raced = false;
  double own_ms = 0, cublaslt_ms = 0;  // per call, as first_ms (own: its fastest tile's); 0
                                       // when from the cache
  // "autotuning: 8 candidates timed, first 0.1234 ms, chosen #2 0.1100 ms"
  std::string ToString() const;
};

// What a plan decided (all of it is also in Explain()).
struct CudaPlanInfo {
  CanonicalDot dot;
  std::string engine;       // "cuBLASLt", or "fp8dot block-scaled 128x128" (the own kernel, tile)
  bool native_fp8 = false;  // a cuBLASLt FP8 GEMM (false for e5m2 x e5m2 and non-FP8 dots)
  int fast_accum = -1;      // CUBLASLT_MATMUL_DESC_FAST_ACCUM read back; -1 when not FP8
  bool fused_epilogue = false;  // epilogue in cuBLASLt (else fp8dot's epilogue kernel)
  std::string compute_type;     // "CUBLAS_COMPUTE_32F", ...
  std::string algorithm;        // the chosen cuBLASLt algorithm, in words
  // How the chosen algorithm cuts K (split-K): each slice accumulates on its own, the slices are
  // added in f32. The CPU emulation reproduces a plan's output given this (accumulator_model.h).
  KSplit k_split;
  // Promotions are one FMA (Fp8AccumulatorModel::fused_promotion): the own kernel's block-scaled
  // modes.
  bool fused_promotion = false;
  // K-elements between promotions (Fp8AccumulatorModel::promotion_interval) when the own kernel
  // runs the dot; 0 for cuBLASLt (whose promoted mode the model's default describes).
  int promotion_interval = 0;
  int64_t k_padded = 0, n_padded = 0;
  AutotuneSummary autotune;
};

class CudaDotPlan {
 public:
  // Validates `spec`, decides layouts, padding, conversions and the epilogue path, creates the
  // descriptors and picks an algorithm. Allocates the plan's device memory (RESOURCE_EXHAUSTED
  // when it does not fit).
  static StatusOr<std::unique_ptr<CudaDotPlan>> Create(const DotSpec& spec,
                                                       const CudaDotOptions& options = {});
  ~CudaDotPlan();
  CudaDotPlan(const CudaDotPlan&) = delete;
  CudaDotPlan& operator=(const CudaDotPlan&) = delete;

  // Enqueues the dot on `stream` (after the last run's work where that was another stream). Checks
  // that every buffer the spec needs is given (and no other) and 16-byte aligned, and that the
  // output and amax overlap no other buffer (C may be the output itself, for an in-place update:
  // same type, row-major); returns errors from CUDA/cuBLASLt with the call and the shape.
  Status Run(const CudaDotBuffers& buffers, CudaStream stream);

  // Several lines: types, layouts, transposes, padding, scale modes, FAST_ACCUM, algorithm.
  std::string Explain() const;
  const CudaPlanInfo& info() const;
  const DotSpec& spec() const;

  struct Impl;  // src/cuda/dot_plan.h

 private:
  explicit CudaDotPlan(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Autotuning for the plans fp8dot makes on a caller's behalf, without CudaDotOptions from the
// caller: the torch ops and layers, the JAX FFI handlers, the C API, `fp8dot run` and the Python
// package's dots. Off (0 candidates) unless set here or, when first asked, by the environment:
// FP8DOT_AUTOTUNE=N (CudaDotOptions::autotune_candidates) and FP8DOT_AUTOTUNE_CACHE=path
// (autotune_cache_path). Plans already made keep the setting they were made with; autotuning
// runs the GPU when a plan is made, so a plan made inside a CUDA graph capture fails with it.
struct AutotuneSetting {
  int candidates = 0;
  std::string cache_path;  // "" = remember the winners in this process only
};
// INVALID_ARGUMENT (and no change) when candidates < 0.
Status SetDefaultAutotune(const AutotuneSetting& setting);
// The setting: the last SetDefaultAutotune's, else the environment's (INVALID_ARGUMENT naming
// the variable when FP8DOT_AUTOTUNE is not a non-negative integer).
StatusOr<AutotuneSetting> DefaultAutotune();
// CudaDotOptions{} with `setting`'s candidates and cache file (0 or 1 candidates: no autotuning,
// the same options either way).
CudaDotOptions AutotunedCudaDotOptions(const AutotuneSetting& setting);
// AutotunedCudaDotOptions(DefaultAutotune()): the options of every plan made on a caller's behalf.
StatusOr<CudaDotOptions> DefaultCudaDotOptions();

// A plan for `spec` from the process-wide cache (made on first use; thread-safe lookup), for the
// current device. The plan lives until the process ends. Runs of one plan on several streams
// or threads are ordered (a run waits for the last run: the plan's buffers are shared);
// replays of a CUDA graph that captured a run are the caller's to order against other runs.
StatusOr<CudaDotPlan*> GetCachedCudaDotPlan(const DotSpec& spec, const CudaDotOptions& options);
// The same with DefaultCudaDotOptions().
StatusOr<CudaDotPlan*> GetCachedCudaDotPlan(const DotSpec& spec);

struct CudaDotStats {
  double milliseconds = 0;  // device time of CudaDotPlan::Run (CUDA events), copies excluded
  const CudaDotPlan* plan = nullptr;  // the cached plan that ran (Explain(), info())
};

// Copies the arguments to the GPU, runs the cached plan for `spec` (made with `options`), copies
// D (and amax) back.
StatusOr<DotResult> CudaDot(const DotSpec& spec, const DotArguments& arguments,
                            CudaDotStats* stats = nullptr, const CudaDotOptions& options = {});

// Enqueues a quantisation (quantize.h) on `stream` over device pointers, bit-identical to
// QuantizeOnCpu. One pass over the input for 1x128 and 128x128 scales and for a given scale;
// tensor and row scales from this input's amax need it first, so those read the input twice
// (an amax pass, then the cast). Allocates nothing and synchronises nothing, so it can be
// captured in a CUDA graph. Pointers: 16-byte alignment and a multiple of 8 columns (and rows,
// for qᵀ) take the vectorised path; anything else is handled too, more slowly.
Status QuantizeOnCuda(const QuantizeSpec& spec, const QuantizeBuffers& buffers, CudaStream stream);

}  // namespace fp8dot
