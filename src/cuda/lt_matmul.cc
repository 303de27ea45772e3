#include "cuda/lt_matmul.h"

#include <algorithm>
#include <mutex>

#include "cuda/cuda_status.h"

namespace fp8dot::cuda {
namespace {

bool IsAligned(const void* pointer, uint32_t alignment) {
  return reinterpret_cast<uintptr_t>(pointer) % alignment == 0;
}

template <typename T>
cublasStatus_t SetDesc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute,
                       const T& value) {
  return cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(value));
}

template <typename T>
cublasStatus_t SetLayout(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attribute,
                         const T& value) {
  return cublasLtMatrixLayoutSetAttribute(layout, attribute, &value, sizeof(value));
}

// A column-major rows x cols matrix, strided-batched when batch > 1.
Status CreateLayout(cublasLtMatrixLayout_t* layout, cudaDataType_t type, int64_t rows, int64_t cols,
                    int64_t ld, int64_t batch, int64_t stride, const std::string& context) {
  FP8_CUBLAS_RETURN_IF_ERROR(cublasLtMatrixLayoutCreate(layout, type, static_cast<uint64_t>(rows),
                                                        static_cast<uint64_t>(cols), ld),
                             context);
  if (batch > 1) {
    const int32_t count = static_cast<int32_t>(batch);
    FP8_CUBLAS_RETURN_IF_ERROR(SetLayout(*layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, count),
                               context);
    FP8_CUBLAS_RETURN_IF_ERROR(
        SetLayout(*layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, stride), context);
  }
  return OkStatus();
}

template <typename T>
T ReadAlgoConfig(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attribute) {
  T value{};
  size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attribute, &value, sizeof(value), &written) !=
      CUBLAS_STATUS_SUCCESS) {
    return T{};
  }
  return value;
}

}  // namespace

StatusOr<cublasLtHandle_t> LtHandle() {
  static std::once_flag once;
  static cublasLtHandle_t handle = nullptr;
  static cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  std::call_once(once, [] { status = cublasLtCreate(&handle); });
  FP8_CUBLAS_RETURN_IF_ERROR(status, "creating the cuBLASLt handle");
  return handle;
}

StatusOr<std::unique_ptr<LtMatmul>> LtMatmul::Create(const LtMatmulConfig& config,
                                                     size_t workspace_bytes, int max_candidates,
                                                     const void* placeholder,
                                                     const std::string& context) {
  FP8_ASSIGN_OR_RETURN(cublasLtHandle_t handle, LtHandle());
  std::unique_ptr<LtMatmul> matmul(new LtMatmul());
  matmul->config_ = config;
  matmul->context_ = context;
  const LtMatmulConfig& c = config;

  FP8_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescCreate(&matmul->desc_, c.compute_type, c.scale_type),
                             context);
  cublasLtMatmulDesc_t desc = matmul->desc_;
  FP8_CUBLAS_RETURN_IF_ERROR(SetDesc(desc, CUBLASLT_MATMUL_DESC_TRANSA, c.trans_a), context);
  FP8_CUBLAS_RETURN_IF_ERROR(SetDesc(desc, CUBLASLT_MATMUL_DESC_TRANSB, c.trans_b), context);
  if (c.fast_accum.has_value()) {
    FP8_CUBLAS_RETURN_IF_ERROR(SetDesc(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, *c.fast_accum),
                               context);
  }
  if (c.sm_count_target > 0) {
    FP8_CUBLAS_RETURN_IF_ERROR(
        SetDesc(desc, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, c.sm_count_target), context);
  }
  if (c.a_scale_mode.has_value()) {
    FP8_CUBLAS_RETURN_IF_ERROR(SetDesc(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, *c.a_scale_mode),
                               context);
    FP8_CUBLAS_RETURN_IF_ERROR(SetDesc(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, placeholder),
                               context);
  }
  if (c.b_scale_mode.has_value()) {
    FP8_CUBLAS_RETURN_IF_ERROR(SetDesc(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, *c.b_scale_mode),
                               context);
    FP8_CUBLAS_RETURN_IF_ERROR(SetDesc(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, placeholder),
                               context);
  }
  if (c.d_scale) {
    FP8_CUBLAS_RETURN_IF_ERROR(SetDesc(desc, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, placeholder),
                               context);
  }
  if (c.amax_d) {
    FP8_CUBLAS_RETURN_IF_ERROR(SetDesc(desc, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, placeholder),
                               context);
  }
  FP8_CUBLAS_RETURN_IF_ERROR(SetDesc(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, c.epilogue), context);
  if (c.bias_type.has_value()) {
    const int32_t bias_type = *c.bias_type;
    FP8_CUBLAS_RETURN_IF_ERROR(SetDesc(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, bias_type),
                               context);
    FP8_CUBLAS_RETURN_IF_ERROR(SetDesc(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, placeholder),
                               context);
  }

  const bool a_transposed = c.trans_a != CUBLAS_OP_N, b_transposed = c.trans_b != CUBLAS_OP_N;
  FP8_RETURN_IF_ERROR(CreateLayout(&matmul->a_, c.a_type, a_transposed ? c.k : c.m,
                                   a_transposed ? c.m : c.k, c.lda, c.batch, c.stride_a, context));
  FP8_RETURN_IF_ERROR(CreateLayout(&matmul->b_, c.b_type, b_transposed ? c.n : c.k,
                                   b_transposed ? c.k : c.n, c.ldb, c.batch, c.stride_b, context));
  FP8_RETURN_IF_ERROR(
      CreateLayout(&matmul->c_, c.c_type, c.m, c.n, c.ldc, c.batch, c.stride_c, context));
  FP8_RETURN_IF_ERROR(
      CreateLayout(&matmul->d_, c.d_type, c.m, c.n, c.ldd, c.batch, c.stride_d, context));

  cublasLtMatmulPreference_t preference = nullptr;
  FP8_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulPreferenceCreate(&preference), context);
  struct PreferenceGuard {
    cublasLtMatmulPreference_t p;
    ~PreferenceGuard() { cublasLtMatmulPreferenceDestroy(p); }
  } guard{preference};
  const uint64_t workspace = workspace_bytes;
  FP8_CUBLAS_RETURN_IF_ERROR(
      cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                           &workspace, sizeof(workspace)),
      context);
  // The heuristic's top `count` algorithms for pointers aligned to `alignment` bytes.
  auto heuristic = [&](uint32_t alignment,
                       int count) -> StatusOr<std::vector<cublasLtMatmulHeuristicResult_t>> {
    for (auto attribute :
         {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
          CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
      FP8_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulPreferenceSetAttribute(
                                     preference, attribute, &alignment, sizeof(alignment)),
                                 context);
    }
    std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(count));
    int returned = 0;
    FP8_CUBLAS_RETURN_IF_ERROR(
        cublasLtMatmulAlgoGetHeuristic(handle, desc, matmul->a_, matmul->b_, matmul->c_, matmul->d_,
                                       preference, count, results.data(), &returned),
        context);
    results.resize(static_cast<size_t>(returned));
    return results;
  };
  // NOTE: what the heuristic may pick depends on the alignment it is promised. Buffers from
  // cudaMalloc are 256-byte aligned, and with that promise cuBLASLt (like a direct call or torch,
  // which promise nothing and so get the default of 256) may pick kernels it would not for
  // 16-byte aligned pointers, the FP8 minimum callers are allowed. So the candidates assume 256,
  // and Run() falls back to the best 16-byte algorithm for pointers that are not.
  FP8_ASSIGN_OR_RETURN(matmul->candidates_,
                       heuristic(kPreferredAlignment, std::max(1, max_candidates)));
  FP8_ASSIGN_OR_RETURN(std::vector<cublasLtMatmulHeuristicResult_t> unaligned, heuristic(16, 1));
  if (matmul->candidates_.empty()) {
    if (unaligned.empty()) {
      return Unimplemented("cuBLASLt has no algorithm for this configuration [%s]",
                           context.c_str());
    }
    matmul->candidates_ = unaligned;
    matmul->candidates_alignment_ = 16;
  }
  if (!unaligned.empty()) matmul->unaligned_candidate_ = unaligned.front();
  if (max_candidates > 1) matmul->AddSplitKVariants(handle, workspace_bytes);
  return matmul;
}

void LtMatmul::AddSplitKVariants(cublasLtHandle_t handle, size_t workspace_bytes) {
  constexpr int kSplitKVariants[] = {2, 3, 4, 6, 8};
  int device = 0, sm_count = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return;  // no variants; the heuristic's candidates stand
  }
  const int64_t output_tiles =
      ((config_.m + 127) / 128) * ((config_.n + 127) / 128) * config_.batch;
  if (output_tiles >= 2 * static_cast<int64_t>(sm_count)) return;
  const size_t heuristic_count = candidates_.size();
  for (size_t i = 0; i < heuristic_count; ++i) {
    if (ReadAlgoConfig<int32_t>(candidates_[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM) > 1) continue;
    for (const int32_t slices : kSplitKVariants) {
      if (config_.k < 128 * slices) break;
      cublasLtMatmulHeuristicResult_t variant = candidates_[i];
      const uint32_t reduction = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
      if (cublasLtMatmulAlgoConfigSetAttribute(&variant.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM,
                                               &slices, sizeof(slices)) != CUBLAS_STATUS_SUCCESS ||
          cublasLtMatmulAlgoConfigSetAttribute(&variant.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME,
                                               &reduction,
                                               sizeof(reduction)) != CUBLAS_STATUS_SUCCESS ||
          cublasLtMatmulAlgoCheck(handle, desc_, a_, b_, c_, d_, &variant.algo, &variant) !=
              CUBLAS_STATUS_SUCCESS ||
          variant.workspaceSize > workspace_bytes) {
        continue;  // this algorithm does not split K (or not this way): not a candidate
      }
      candidates_.push_back(variant);
    }
  }
}

LtMatmul::~LtMatmul() {
  if (d_ != nullptr) cublasLtMatrixLayoutDestroy(d_);
  if (c_ != nullptr) cublasLtMatrixLayoutDestroy(c_);
  if (b_ != nullptr) cublasLtMatrixLayoutDestroy(b_);
  if (a_ != nullptr) cublasLtMatrixLayoutDestroy(a_);
  if (desc_ != nullptr) cublasLtMatmulDescDestroy(desc_);
}

Status LtMatmul::SetPointers(const LtPointers& p) {
  if (config_.a_scale_mode.has_value()) {
    FP8_CUBLAS_RETURN_IF_ERROR(SetDesc(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, p.a_scale),
                               context_);
  }
  if (config_.b_scale_mode.has_value()) {
    FP8_CUBLAS_RETURN_IF_ERROR(SetDesc(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, p.b_scale),
                               context_);
  }
  if (config_.d_scale) {
    FP8_CUBLAS_RETURN_IF_ERROR(SetDesc(desc_, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, p.d_scale),
                               context_);
  }
  if (config_.amax_d) {
    FP8_CUBLAS_RETURN_IF_ERROR(SetDesc(desc_, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, p.amax_d),
                               context_);
  }
  if (config_.bias_type.has_value()) {
    FP8_CUBLAS_RETURN_IF_ERROR(SetDesc(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, p.bias), context_);
  }
  return OkStatus();
}

Status LtMatmul::Run(float alpha, float beta, const void* a, const void* b, const void* c, void* d,
                     void* workspace, size_t workspace_bytes, cudaStream_t stream) const {
  FP8_ASSIGN_OR_RETURN(cublasLtHandle_t handle, LtHandle());
  const bool aligned = IsAligned(a, candidates_alignment_) && IsAligned(b, candidates_alignment_) &&
                       IsAligned(c, candidates_alignment_) && IsAligned(d, candidates_alignment_);
  if (!aligned && !unaligned_candidate_.has_value()) {
    return InvalidArgument(
        "cuBLASLt has no algorithm for pointers that are not %u-byte aligned [%s]",
        candidates_alignment_, context_.c_str());
  }
  const cublasLtMatmulHeuristicResult_t& candidate =
      aligned ? candidates_[static_cast<size_t>(chosen_)] : *unaligned_candidate_;
  if (candidate.workspaceSize > workspace_bytes) {
    return Internal("algorithm needs %zu workspace bytes, the plan has %zu [%s]",
                    candidate.workspaceSize, workspace_bytes, context_.c_str());
  }
  // Exactly the algorithm's workspace, none when it takes none: a run of an algorithm without
  // workspace then writes no memory of the plan's (RunWorkspaceBytes; runs on several streams
  // need no ordering).
  const size_t used = candidate.workspaceSize;
  FP8_CUBLAS_RETURN_IF_ERROR(
      cublasLtMatmul(handle, desc_, &alpha, a, a_, b, b_, &beta, c, c_, d, d_, &candidate.algo,
                     used > 0 ? workspace : nullptr, used, stream),
      context_);
  return OkStatus();
}

size_t LtMatmul::RunWorkspaceBytes() const {
  const size_t chosen = candidates_[static_cast<size_t>(chosen_)].workspaceSize;
  return std::max(chosen, unaligned_candidate_ ? unaligned_candidate_->workspaceSize : 0);
}

std::string LtMatmul::AlgorithmDescription(int index) const {
  return DescribeAlgorithm(candidates_[static_cast<size_t>(index)]);
}

std::string LtMatmul::UnalignedAlgorithmDescription() const {
  return unaligned_candidate_.has_value() ? DescribeAlgorithm(*unaligned_candidate_) : "none";
}

std::string DescribeAlgorithm(const cublasLtMatmulHeuristicResult_t& r) {
  const cublasLtMatmulAlgo_t& algo = r.algo;
  return StrFormat(
      "id=%d tile=%u stages=%u splitK=%d reduction=%u swizzle=%u custom=%u cluster=%u "
      "workspace=%zu",
      ReadAlgoConfig<int32_t>(algo, CUBLASLT_ALGO_CONFIG_ID),
      ReadAlgoConfig<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_TILE_ID),
      ReadAlgoConfig<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID),
      ReadAlgoConfig<int32_t>(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM),
      ReadAlgoConfig<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME),
      ReadAlgoConfig<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING),
      ReadAlgoConfig<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION),
      static_cast<unsigned>(ReadAlgoConfig<uint16_t>(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID)),
      r.workspaceSize);
}

namespace {

// K-elements per tile of a cublasLtMatmulStages_t: the number before the "x" of its name.
int StagesTileK(uint32_t stages) {
  if (stages >= CUBLASLT_MATMUL_STAGES_16x1 && stages <= CUBLASLT_MATMUL_STAGES_128x6) {
    return 16 << ((stages - CUBLASLT_MATMUL_STAGES_16x1) / 6);  // 16, 32, 64, 128 x 1..6
  }
  switch (stages) {
    case CUBLASLT_MATMUL_STAGES_32x10:
    case CUBLASLT_MATMUL_STAGES_32xAUTO:
      return 32;
    case CUBLASLT_MATMUL_STAGES_8x3:
    case CUBLASLT_MATMUL_STAGES_8x4:
    case CUBLASLT_MATMUL_STAGES_8x5:
    case CUBLASLT_MATMUL_STAGES_8xAUTO:
      return 8;
    case CUBLASLT_MATMUL_STAGES_16x10:
    case CUBLASLT_MATMUL_STAGES_16xAUTO:
      return 16;
    case CUBLASLT_MATMUL_STAGES_64xAUTO:
      return 64;
    case CUBLASLT_MATMUL_STAGES_128xAUTO:
      return 128;
    case CUBLASLT_MATMUL_STAGES_256xAUTO:
      return 256;
    case CUBLASLT_MATMUL_STAGES_768xAUTO:
      return 768;
    default:
      return 0;
  }
}

}  // namespace

KSplit LtMatmul::CandidateKSplit(int index) const {
  const cublasLtMatmulAlgo_t& algo = candidates_[static_cast<size_t>(index)].algo;
  KSplit split;
  split.slices = std::max(1, ReadAlgoConfig<int32_t>(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM));
  split.tile = StagesTileK(ReadAlgoConfig<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID));
  return split;
}

const char* LtMatmul::CandidateReductionName(int index) const {
  switch (ReadAlgoConfig<uint32_t>(candidates_[static_cast<size_t>(index)].algo,
                                   CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME)) {
    case CUBLASLT_REDUCTION_SCHEME_NONE:
      return "none";
    case CUBLASLT_REDUCTION_SCHEME_INPLACE:
      return "in place (in the output type)";
    case CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE:
      return "in f32 workspace (compute type)";
    case CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE:
      return "in the output type";
    default:
      return "?";
  }
}

StatusOr<int> LtMatmul::ReadFastAccum() const {
  int8_t value = -1;
  size_t written = 0;
  FP8_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescGetAttribute(desc_, CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                                                            &value, sizeof(value), &written),
                             context_);
  return static_cast<int>(value);
}

const char* ComputeTypeName(cublasComputeType_t type) {
  switch (type) {
    case CUBLAS_COMPUTE_32F:
      return "CUBLAS_COMPUTE_32F";
    case CUBLAS_COMPUTE_32F_FAST_TF32:
      return "CUBLAS_COMPUTE_32F_FAST_TF32";
    case CUBLAS_COMPUTE_32F_FAST_16BF:
      return "CUBLAS_COMPUTE_32F_FAST_16BF";
    case CUBLAS_COMPUTE_32F_FAST_16F:
      return "CUBLAS_COMPUTE_32F_FAST_16F";
    case CUBLAS_COMPUTE_64F:
      return "CUBLAS_COMPUTE_64F";
    default:
      return "CUBLAS_COMPUTE_?";
  }
}

const char* CudaDataTypeName(cudaDataType_t type) {
  switch (type) {
    case CUDA_R_8F_E4M3:
      return "CUDA_R_8F_E4M3";
    case CUDA_R_8F_E5M2:
      return "CUDA_R_8F_E5M2";
    case CUDA_R_16BF:
      return "CUDA_R_16BF";
    case CUDA_R_16F:
      return "CUDA_R_16F";
    case CUDA_R_32F:
      return "CUDA_R_32F";
    case CUDA_R_64F:
      return "CUDA_R_64F";
    default:
      return "CUDA_R_?";
  }
}

const char* ScaleModeEnumName(int32_t mode) {
  switch (mode) {
    case CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F:
      return "SCALAR_32F";
    case CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F:
      return "OUTER_VEC_32F";
    case CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F:
      return "VEC128_32F";
    case CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F:
      return "BLK128x128_32F";
    default:
      return "?";
  }
}

const char* EpilogueEnumName(cublasLtEpilogue_t epilogue) {
  switch (epilogue) {
    case CUBLASLT_EPILOGUE_DEFAULT:
      return "CUBLASLT_EPILOGUE_DEFAULT";
    case CUBLASLT_EPILOGUE_BIAS:
      return "CUBLASLT_EPILOGUE_BIAS";
    case CUBLASLT_EPILOGUE_RELU:
      return "CUBLASLT_EPILOGUE_RELU";
    case CUBLASLT_EPILOGUE_RELU_BIAS:
      return "CUBLASLT_EPILOGUE_RELU_BIAS";
    case CUBLASLT_EPILOGUE_GELU:
      return "CUBLASLT_EPILOGUE_GELU";
    case CUBLASLT_EPILOGUE_GELU_BIAS:
      return "CUBLASLT_EPILOGUE_GELU_BIAS";
    default:
      return "CUBLASLT_EPILOGUE_?";
  }
}

cudaDataType_t CudaType(DType type) {
  switch (type) {
    case DType::kF8E4M3FN:
      return CUDA_R_8F_E4M3;
    case DType::kF8E5M2:
      return CUDA_R_8F_E5M2;
    case DType::kBF16:
      return CUDA_R_16BF;
    case DType::kF16:
      return CUDA_R_16F;
    case DType::kF32:
      return CUDA_R_32F;
    case DType::kF64:
      return CUDA_R_64F;
  }
  return CUDA_R_32F;
}

int32_t LtScaleMode(ScaleMode mode) {
  switch (mode) {
    case ScaleMode::kOuterVector:
      return CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    case ScaleMode::kBlock1x128:
      return CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    case ScaleMode::kBlock128x128:
      return CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
    case ScaleMode::kNone:
    case ScaleMode::kTensor:
      break;
  }
  return CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
}

cublasLtEpilogue_t LtEpilogue(Epilogue epilogue) {
  switch (epilogue) {
    case Epilogue::kDefault:
      return CUBLASLT_EPILOGUE_DEFAULT;
    case Epilogue::kBias:
      return CUBLASLT_EPILOGUE_BIAS;
    case Epilogue::kRelu:
      return CUBLASLT_EPILOGUE_RELU;
    case Epilogue::kBiasRelu:
      return CUBLASLT_EPILOGUE_RELU_BIAS;
    case Epilogue::kGelu:
      return CUBLASLT_EPILOGUE_GELU;
    case Epilogue::kBiasGelu:
      return CUBLASLT_EPILOGUE_GELU_BIAS;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

}  // namespace fp8dot::cuda
