// CudaDotPlan's insides, shared by the files that build (dot_plan.cc), explain
// (plan_explain.cc) and tune (autotune.cc) a plan.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cuda/lt_matmul.h"
#include "cuda/operand_preparation.h"
#include "cuda/own_gemm.h"
#include "cuda/stream_handoff.h"
#include "fp8dot/cuda_backend.h"
#include "fp8dot/cuda_buffer.h"

namespace fp8dot::cuda {

// cuBLASLt's view of the problem. fp8dot's row-major D[M,N] = lhs[M,K] . rhs[K,N] is cuBLASLt's
// column-major D^T[N,M] = rhs^T . lhs^T: cuBLASLt's A is fp8dot's rhs, its B the lhs, its m is
// fp8dot's N and its n fp8dot's M. Named apart so that the two views cannot be confused.
struct LtShape {
  int64_t m = 0;  // fp8dot's N, or N padded to 16 for FP8 kernels that need it (rhs rows)
  int64_t n = 0;  // fp8dot's M (lhs rows)
  int64_t k = 0;  // fp8dot's K, zero-padded to 16 bytes of elements
};

// The current GPU (QueryCudaDevice) as the own kernel's tile choice sees it for a plan: the SMs
// the GEMM may use (CudaDotOptions::sm_count_target where it is set, at most the device's; else
// all) and its DRAM's bytes per SM clock.
StatusOr<GemmDevice> PlanGemmDevice(const CudaDotOptions& options);

}  // namespace fp8dot::cuda

struct fp8dot::CudaDotPlan::Impl {
  DotSpec spec;
  CudaDotOptions options;
  CudaPlanInfo info;
  std::string context;  // "f8e4m3fn x f8e4m3fn -> bf16, batch=1 M=.. N=.. K=.."

  // The three ways a plan runs.
  bool upcast = false;            // e5m2 x e5m2: operands converted (f16, or f32 with block scales)
  bool fused = false;             // everything in one cuBLASLt call (else S, then our epilogue)
  bool scales_in_gemm = false;    // cuBLASLt applies the A/B scales (native FP8)
  bool scales_in_gather = false;  // block scales folded into the f32 upcast
  std::string fused_rejection;    // why the fused path was not taken

  cuda::PreparedTensor lhs, rhs, c, bias;
  cuda::PreparedScale lhs_scale, rhs_scale;
  std::unique_ptr<cuda::LtMatmul> gemm;  // the cuBLASLt engine, or null when `own` runs
  std::optional<cuda::OwnGemm> own;      // the own kernel engine (kOwn, or kAuto's choice)
  std::string engine_reason;             // why kAuto chose the engine it runs
  DeviceBuffer workspace;
  DeviceBuffer gemm_output;  // S in f32 (unfused), or the padded D (fused with N or M padded)
  cuda::LtShape lt;          // the GEMM as cuBLASLt sees it
  int64_t n_padded = 0;      // D's leading dim (>= lt.m)
  std::string compute_note;  // when the compute type is not an exact match for the mode

  // Runs may come from several threads and streams: one enqueues at a time, each after the
  // last run's stream (the buffers above are shared by every run).
  std::mutex run_mutex;
  cuda::StreamHandoff stream_handoff;
};

namespace fp8dot::cuda {

// autotune.cc: times the heuristic's candidates on scratch data and keeps the fastest; uses and
// updates options.autotune_cache_path.
Status Autotune(CudaDotPlan::Impl& plan);

// What racing the two engines on a dot decided (autotune.cc).
struct EngineRace {
  std::unique_ptr<CudaDotPlan> plan;   // the winner's, built with the engine forced
  std::string reason;                  // why it won, for Explain's engine line
  bool raced = false;                  // timed now, or remembered from an earlier race
  double own_ms = 0, cublaslt_ms = 0;  // per run, whole plans (own: the fastest tile's); 0 when
                                       // not timed
};

// Autotuning on a dot the own kernel can run, with kAuto (or with kOwn and no forced tile: then
// the tiles alone are raced): builds a plan on cuBLASLt (tuned as usual) and one on the own
// kernel per candidate tile (OwnGemmTileCandidates: autotune_candidates of them, four at most),
// times whole runs of each in turn in CUDA graphs on the same scratch data (operands streaming
// from HBM), and keeps the fastest. The static rule's choice (`own_first`: the own kernel with
// the plan's tile, else cuBLASLt) stays unless another is faster by more than the noise margin.
// The winner, engine and tile, is remembered in options.autotune_cache_path, and taken from
// there when it is already in it.
StatusOr<EngineRace> RaceEngines(const DotSpec& spec, const CanonicalDot& dot,
                                 const CudaDotOptions& options, bool own_first,
                                 const std::string& context);

// plan_explain.cc
std::string ExplainPlan(const CudaDotPlan::Impl& plan);

}  // namespace fp8dot::cuda
