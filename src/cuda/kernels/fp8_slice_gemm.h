// fp8dot's own Hopper FP8 GEMM for small M: K cut into equal slices, every slice a batch of one
// CUTLASS TMA + wgmma kernel, each writing its f32 partial product:
//   partials[s][m][n] = sum over k in slice s of A[m][k] * B[n][k]
// A is M x K row-major, B is N x K row-major (K contiguous in both: the TN layout), and the
// slices are added (in order) and scaled by the epilogue kernel (dot_epilogue.h).
//
// Why: at M <= 128 a GEMM has too few output tiles to occupy 132 SMs, and cuBLASLt's
// heuristic answers with narrow tiles that re-read A from L2 once per tile. Cutting K instead
// gives every SM a full-width tile over a K slice.
//
// Accumulation is what the CUDA backend promises for each mode, so the CPU emulation reproduces it
// bit for bit (KSplit{slices, 128}):
//   fast:     one wgmma accumulator over the whole slice (CUBLASLT_MATMUL_DESC_FAST_ACCUM = 1);
//   promoted: the wgmma accumulator is added into f32 registers every 128 K-elements and cleared.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

#include "fp8dot/dtype.h"
#include "fp8dot/status.h"

namespace fp8dot::cuda {

// The CTA tile (M x N, K = 128 always). 64x128 for M <= 64, 128x128 (two consumer warp groups)
// above.
enum class SliceGemmTile { k64x128, k128x128 };
const char* SliceGemmTileName(SliceGemmTile tile);  // "64x128x128", "128x128x128"

struct SliceGemmConfig {
  SliceGemmTile tile = SliceGemmTile::k64x128;
  bool fast_accumulation = true;
  DType lhs_type = DType::kF8E4M3FN;
  DType rhs_type = DType::kF8E4M3FN;
  int64_t m = 0, n = 0, k = 0;
  int slices = 1;
};

// Why `config` cannot run (empty when it can): types other than e4m3 x e4m3, K not a multiple of
// slices * 128, M, N not positive, or a slice count outside 1..64.
std::string SliceGemmRejection(const SliceGemmConfig& config);

class Fp8SliceGemm {
 public:
  // Fails with SliceGemmRejection()'s text, or when CUTLASS cannot implement the problem.
  static StatusOr<std::unique_ptr<Fp8SliceGemm>> Create(const SliceGemmConfig& config,
                                                        const std::string& context);
  virtual ~Fp8SliceGemm() = default;

  // a, b: 16-byte aligned; partials: [slices][m][n] f32, 16-byte aligned. The TMA descriptors
  // are rebuilt (on the host) only when a pointer changes.
  virtual Status Run(const void* a, const void* b, float* partials, cudaStream_t stream) = 0;
  const SliceGemmConfig& config() const { return config_; }

 protected:
  explicit Fp8SliceGemm(const SliceGemmConfig& config) : config_(config) {}
  SliceGemmConfig config_;
};

}  // namespace fp8dot::cuda
