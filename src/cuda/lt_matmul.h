// One cuBLASLt matmul: its descriptors, layouts and algorithm, owned together (RAII).
//
// cuBLAS is column-major. fp8dot computes the row-major D[M,N] = A[M,K] . B[K,N] as the
// column-major D^T[N,M] = B^T . A^T, so cuBLASLt's "A" is fp8dot's rhs and its "B" is fp8dot's
// lhs; with both K-contiguous that is the "TN" layout Hopper's FP8 kernels require. This class
// knows nothing of that mapping: it takes cuBLASLt's own view (LtMatmulConfig).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fp8dot/dot_spec.h"
#include "fp8dot/k_split.h"
#include "fp8dot/status.h"

namespace fp8dot::cuda {

// The process-wide cuBLASLt handle (created on first use).
StatusOr<cublasLtHandle_t> LtHandle();

// Pointer alignment the candidates assume (cudaMalloc's); 16 bytes is the FP8 minimum.
inline constexpr uint32_t kPreferredAlignment = 256;

// cuBLASLt's view of the problem: op(A)[m,k] . op(B)[k,n] -> D[m,n], all column-major.
struct LtMatmulConfig {
  cudaDataType_t a_type = CUDA_R_32F, b_type = CUDA_R_32F, c_type = CUDA_R_32F, d_type = CUDA_R_32F;
  cublasComputeType_t compute_type = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale_type = CUDA_R_32F;
  cublasOperation_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0;
  int64_t batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0, stride_d = 0;  // elements
  std::optional<int8_t> fast_accum;                                // FP8 GEMMs only
  // Scale modes (cublasLtMatmulMatrixScale_t); set when the A/B scale pointers will be.
  std::optional<int32_t> a_scale_mode, b_scale_mode;
  int32_t sm_count_target = 0;  // CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET when > 0
  bool d_scale = false;         // D_SCALE_POINTER will be set
  bool amax_d = false;          // AMAX_D_POINTER will be set
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  std::optional<cudaDataType_t> bias_type;  // with a bias epilogue
};

// Device pointers that may change from run to run.
struct LtPointers {
  const void* a_scale = nullptr;
  const void* b_scale = nullptr;
  const void* d_scale = nullptr;
  void* amax_d = nullptr;
  const void* bias = nullptr;
};

class LtMatmul {
 public:
  // Creates the descriptors and asks the heuristic for up to `max_candidates` algorithms that fit
  // `workspace_bytes`, assuming 16-byte aligned pointers. `placeholder` is any valid device
  // pointer: the heuristic sees it wherever a pointer attribute will be set at run time.
  // With max_candidates > 1 and an output too small to give every SM two 128x128 tiles, each
  // unsplit candidate also comes in split-K variants (2, 3, 4, 6, 8 slices, f32 reduction) that
  // cuBLASLt accepts: the heuristic rarely splits K for M <= 128, which leaves most SMs idle.
  // Fails (with cuBLASLt's status) when cuBLASLt has no algorithm for the configuration.
  static StatusOr<std::unique_ptr<LtMatmul>> Create(const LtMatmulConfig& config,
                                                    size_t workspace_bytes, int max_candidates,
                                                    const void* placeholder,
                                                    const std::string& context);
  ~LtMatmul();
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;

  // Host-side descriptor updates only: safe between runs and inside graph capture.
  Status SetPointers(const LtPointers& pointers);
  // alpha, beta: host values of the scale type (f32).
  Status Run(float alpha, float beta, const void* a, const void* b, const void* c, void* d,
             void* workspace, size_t workspace_bytes, cudaStream_t stream) const;

  int candidate_count() const { return static_cast<int>(candidates_.size()); }
  void ChooseCandidate(int index) { chosen_ = index; }
  int chosen() const { return chosen_; }
  // The most workspace a run uses (Run passes an algorithm exactly its own): the chosen
  // candidate's, or the unaligned pointers' algorithm's. 0 when neither takes any.
  size_t RunWorkspaceBytes() const;
  // Stable text for a candidate ("id=66 tile=... stages=... splitK=1 ..."), used in Explain()
  // and as the key of the autotuning cache.
  std::string AlgorithmDescription(int index) const;
  // The candidates assume pointers aligned to this many bytes (kPreferredAlignment unless the
  // heuristic had nothing for it); Run() takes this algorithm for pointers that are not.
  uint32_t candidates_alignment() const { return candidates_alignment_; }
  std::string UnalignedAlgorithmDescription() const;
  // How candidate `index` cuts K: CUBLASLT_ALGO_CONFIG_SPLITK_NUM slices of whole K-tiles (the
  // tile's K from CUBLASLT_ALGO_CONFIG_STAGES_ID, e.g. 128 for MATMUL_STAGES_128xAUTO; 0 when
  // the stages ID does not say), and the reduction scheme's name ("none", "compute type", ...).
  KSplit CandidateKSplit(int index) const;
  const char* CandidateReductionName(int index) const;
  // CUBLASLT_MATMUL_DESC_FAST_ACCUM as the descriptor holds it now.
  StatusOr<int> ReadFastAccum() const;
  const LtMatmulConfig& config() const { return config_; }

 private:
  LtMatmul() = default;
  void AddSplitKVariants(cublasLtHandle_t handle, size_t workspace_bytes);
  LtMatmulConfig config_;
  std::string context_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr, d_ = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> candidates_;
  int chosen_ = 0;
  uint32_t candidates_alignment_ = kPreferredAlignment;
  std::optional<cublasLtMatmulHeuristicResult_t> unaligned_candidate_;  // for 16-byte pointers
};

// "id=66 tile=... stages=... splitK=1 ... workspace=..." for one heuristic result.
std::string DescribeAlgorithm(const cublasLtMatmulHeuristicResult_t& result);
const char* ComputeTypeName(cublasComputeType_t type);
const char* CudaDataTypeName(cudaDataType_t type);
const char* ScaleModeEnumName(int32_t mode);
const char* EpilogueEnumName(cublasLtEpilogue_t epilogue);

// fp8dot's enums in cuBLASLt's terms.
cudaDataType_t CudaType(DType type);
int32_t LtScaleMode(ScaleMode mode);  // cublasLtMatmulMatrixScale_t
cublasLtEpilogue_t LtEpilogue(Epilogue epilogue);

}  // namespace fp8dot::cuda
