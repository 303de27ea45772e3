// CudaDotPlan: turns a validated DotSpec into one cuBLASLt matmul plus the device copies it needs
// (Create), and enqueues them (Run).
//
// The decisions, in order:
//   1. Accumulation: CanonicalDot::accumulation (ValidateDotSpec -> ResolveAccumulation) is the
//      only input. FP8 pairs set CUBLASLT_MATMUL_DESC_FAST_ACCUM = (mode == kFp8Fast) in
//      FastAccumFor() below, nowhere else; f32 maps TF32 vs FP32 to the compute type.
//   2. Types: native FP8 pairs run as they are; e5m2 x e5m2 is converted exactly to f16 (or, with
//      block scales, scaled into f32) and runs as an upcast GEMM.
//   3. Layout: D[M,N] row-major is cuBLASLt's column-major D^T = B^T . A^T, so cuBLASLt's A is
//      the rhs and its B the lhs, both wanted K-contiguous ("TN", required for FP8). An operand
//      is read in place when its layout is already strided that way with 16-byte aligned leading
//      dims; otherwise it is gathered on the device. K is zero-padded to 16 bytes of elements, N
//      to keep D's and C's rows 16-byte aligned (D is then sliced back).
//   4. Epilogue: first try everything fused in cuBLASLt (scales, alpha/beta + C, bias,
//      relu/gelu, scale_d, amax). If cuBLASLt has no algorithm for that combination, compute
//      S = scaled A.B in f32 and run fp8dot's epilogue kernel, and say why in Explain().
#include "cuda/dot_plan.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cuda/cuda_status.h"
#include "cuda/kernels/dot_epilogue.h"
#include "fp8dot/cuda_device.h"

namespace fp8dot {
namespace cuda {
namespace {

constexpr int64_t kAlignmentBytes = 16;
constexpr int64_t kScaleBlock = 128;

int64_t RoundUp(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
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

// The only place an accumulation mode becomes CUBLASLT_MATMUL_DESC_FAST_ACCUM.
std::optional<int8_t> FastAccumFor(AccumulationMode mode) {
  if (mode == AccumulationMode::kFp8Fast) return int8_t{1};
  if (mode == AccumulationMode::kFp8Promoted) return int8_t{0};
  return std::nullopt;
}

// How each resolved mode is computed. Modes cuBLASLt has no exact counterpart for run at a
// higher precision, and the note says so; modes it cannot run at all are rejected.
struct ComputeChoice {
  cublasComputeType_t type = CUBLAS_COMPUTE_32F;
  std::string note;
};
StatusOr<ComputeChoice> ComputeFor(AccumulationMode mode, bool upcast) {
  switch (mode) {
    case AccumulationMode::kFp8Fast:
    case AccumulationMode::kFp8Promoted:
      if (upcast) {
        return ComputeChoice{CUBLAS_COMPUTE_32F,
                             "e5m2 x e5m2 has no cuBLASLt FP8 kernel: exact upcast, FP32 "
                             "accumulation (more precise than the requested mode)"};
      }
      return ComputeChoice{CUBLAS_COMPUTE_32F, ""};
    case AccumulationMode::kF32:
      return ComputeChoice{CUBLAS_COMPUTE_32F, ""};
    case AccumulationMode::kTf32:
      return ComputeChoice{CUBLAS_COMPUTE_32F_FAST_TF32, ""};
    case AccumulationMode::kBf16:
      return ComputeChoice{CUBLAS_COMPUTE_32F_FAST_16BF, ""};
    case AccumulationMode::kF16:
      return ComputeChoice{CUBLAS_COMPUTE_32F_FAST_16F, ""};
    case AccumulationMode::kTf32x3:
    case AccumulationMode::kBf16x3:
    case AccumulationMode::kBf16x6:
    case AccumulationMode::kBf16x9:
      return ComputeChoice{CUBLAS_COMPUTE_32F,
                           std::string(AccumulationModeName(mode)) +
                               " has no cuBLASLt compute type: runs as full FP32 (more precise)"};
    case AccumulationMode::kF16Accumulate:
    case AccumulationMode::kBf16Accumulate:
    case AccumulationMode::kF64:
      break;
  }
  return Unimplemented(
      "accumulation mode %s is not implemented on the CUDA backend (use --backend cpu)",
      AccumulationModeName(mode));
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

Activation ActivationOf(Epilogue epilogue) {
  if (epilogue == Epilogue::kRelu || epilogue == Epilogue::kBiasRelu) return Activation::kRelu;
  if (epilogue == Epilogue::kGelu || epilogue == Epilogue::kBiasGelu) return Activation::kGelu;
  return Activation::kNone;
}

std::vector<int64_t> Range(int64_t begin, int64_t end) {
  std::vector<int64_t> out;
  for (int64_t i = begin; i < end; ++i) out.push_back(i);
  return out;
}

// ---- Tensors ---------------------------------------------------------------------------------

struct TensorRequest {
  const char* name = "";
  const TensorSpec* spec = nullptr;
  TensorIndex index;
  DType target_type = DType::kF32;
  GatherConversion conversion = GatherConversion::kCopy;
  int64_t rows_padded = 0;  // 0: the tensor's own row count
  int64_t cols_padded = 0;
  bool allow_rows_contiguous = false;  // cuBLASLt may read it transposed (non-FP8 operands)
  const char* rows_name = "rows";
  const char* cols_name = "cols";
};

StatusOr<PreparedTensor> PrepareTensor(const TensorRequest& r, const std::string& context) {
  PreparedTensor t;
  t.present = true;
  t.source_type = r.spec->dtype;
  t.target_type = r.target_type;
  const auto batch = static_cast<int64_t>(r.index.batch.size());
  const auto rows = static_cast<int64_t>(r.index.rows.size());
  const auto cols = static_cast<int64_t>(r.index.cols.size());
  const int64_t rows_padded = std::max(rows, r.rows_padded);
  const int64_t element = DTypeSizeInBytes(r.target_type);
  auto aligned = [&](int64_t elements) { return elements * element % kAlignmentBytes == 0; };

  if (r.conversion == GatherConversion::kCopy && r.cols_padded == cols && rows_padded == rows) {
    if (std::optional<AffineStrides> s = FindAffineStrides(r.index)) {
      const bool batch_ok = batch == 1 || aligned(s->batch);
      const int64_t row_ld = rows == 1 ? cols : s->row;  // any ld >= cols fits a single row
      const int64_t col_ld = cols == 1 ? rows : s->col;
      if (batch_ok && (cols == 1 || s->col == 1) && row_ld >= cols && aligned(row_ld)) {
        t.cols_contiguous = true;
        t.ld = row_ld;
        t.batch_stride = s->batch;
        t.how = StrFormat("%s %s: read in place (%s contiguous, ld=%lld)", r.name,
                          r.spec->ToString().c_str(), r.cols_name, static_cast<long long>(t.ld));
        return t;
      }
      if (r.allow_rows_contiguous && batch_ok && (rows == 1 || s->row == 1) && col_ld >= rows &&
          aligned(col_ld)) {
        t.cols_contiguous = false;
        t.ld = col_ld;
        t.batch_stride = s->batch;
        t.how =
            StrFormat("%s %s: read in place (%s contiguous, cuBLASLt op flipped, ld=%lld)", r.name,
                      r.spec->ToString().c_str(), r.rows_name, static_cast<long long>(t.ld));
        return t;
      }
    }
  }

  // Gather into [batch][rows_padded][cols_padded].
  t.gathered = true;
  t.cols_contiguous = true;
  t.ld = r.cols_padded;
  t.batch_stride = rows_padded * r.cols_padded;
  GatherParams& g = t.gather;
  if (std::optional<AffineStrides> s = FindAffineStrides(r.index)) {
    g.affine = true;
    g.batch_stride = s->batch;
    g.row_stride = s->row;
    g.col_stride = s->col;
  } else {
    std::vector<int64_t> tables = r.index.batch;
    tables.insert(tables.end(), r.index.rows.begin(), r.index.rows.end());
    tables.insert(tables.end(), r.index.cols.begin(), r.index.cols.end());
    FP8_ASSIGN_OR_RETURN(t.tables, DeviceBuffer::Allocate(tables.size() * sizeof(int64_t), r.name));
    FP8_CUDA_RETURN_IF_ERROR(cudaMemcpy(t.tables.data(), tables.data(),
                                        tables.size() * sizeof(int64_t), cudaMemcpyHostToDevice),
                             context);
    g.batch_offsets = t.tables.as<const int64_t>();
    g.row_offsets = g.batch_offsets + batch;
    g.col_offsets = g.row_offsets + rows;
  }
  FP8_ASSIGN_OR_RETURN(
      t.copy, DeviceBuffer::Allocate(
                  static_cast<size_t>(batch * rows_padded * r.cols_padded * element), r.name));
  g.dest = t.copy.data();
  g.conversion = r.conversion;
  g.source_type = r.spec->dtype;
  g.batch = batch;
  g.rows = rows;
  g.cols = cols;
  g.rows_padded = rows_padded;
  g.cols_padded = r.cols_padded;
  auto step = [](const std::vector<int64_t>& offsets) {
    return offsets.size() > 1 ? std::abs(offsets[1] - offsets[0]) : INT64_MAX;
  };
  g.read_rows_fastest = step(r.index.rows) < step(r.index.cols);

  std::vector<std::string> what;
  if (g.read_rows_fastest) what.push_back(StrFormat("transposed (%s contiguous)", r.rows_name));
  if (rows_padded != rows) {
    what.push_back(StrFormat("%s padded %lld->%lld", r.rows_name, static_cast<long long>(rows),
                             static_cast<long long>(rows_padded)));
  }
  if (r.cols_padded != cols) {
    what.push_back(StrFormat("%s padded %lld->%lld", r.cols_name, static_cast<long long>(cols),
                             static_cast<long long>(r.cols_padded)));
  }
  if (r.conversion == GatherConversion::kE5M2ToF16) what.push_back("converted e5m2->f16 (exact)");
  if (r.conversion == GatherConversion::kFp8ToF32Scaled) {
    what.push_back("converted to f32 with its block scales applied");
  }
  if (what.empty()) what.push_back("layout not strided as cuBLASLt needs");
  std::string joined;
  for (const std::string& w : what) joined += (joined.empty() ? "" : ", ") + w;
  t.how = StrFormat("%s %s: gathered on the device into [%lld][%lld][%lld] %s (%s)", r.name,
                    r.spec->ToString().c_str(), static_cast<long long>(batch),
                    static_cast<long long>(rows_padded), static_cast<long long>(r.cols_padded),
                    DTypeName(r.target_type), joined.c_str());
  return t;
}

// ---- Scales ------------------------------------------------------------------------------------

// Element strides of an operand scale's two logical axes, (row, k-block), in the caller's buffer,
// from the spec's shape and layout (dot_spec.h): row = M (lhs) or N (rhs), or their 128-blocks;
// k-block = K/128. Outer-vector scales have one axis (row). Empty layout = row-major.
struct ScaleStrides {
  int64_t row = 1, block = 0;
};
ScaleStrides SourceScaleStrides(const OperandScale& scale, bool is_lhs) {
  const auto rank = static_cast<int64_t>(scale.dims.size());
  std::vector<int64_t> layout =
      scale.minor_to_major.empty() ? RowMajorLayout(rank) : scale.minor_to_major;
  std::vector<int64_t> strides(static_cast<size_t>(rank), 1);
  int64_t stride = 1;
  for (int64_t d : layout) {
    strides[static_cast<size_t>(d)] = stride;
    stride *= scale.dims[static_cast<size_t>(d)];
  }
  if (rank != 2) return {1, 0};
  // lhs [rows, KB]; rhs [KB, rows].
  return is_lhs ? ScaleStrides{strides[0], strides[1]} : ScaleStrides{strides[1], strides[0]};
}

std::string ScaleLayoutName(const OperandScale& scale) {
  if (scale.minor_to_major.empty()) return "row-major";
  const std::string text = DimsToString(scale.minor_to_major);  // "[0,1]"
  std::string name = "{";
  name.append(text, 1, text.size() - 2);
  name += "}";
  return name;
}

// cuBLASLt's layout for one operand's scale (see kernels/scale_relayout.h). `rows` is the
// operand's free extent (M for the lhs, N for the rhs), `rows_padded` what cuBLASLt sees. The
// caller's scale is [rows, ...] (lhs) or [K/128, ...] (rhs) in the spec's layout; it is read in
// place when that already is cuBLASLt's layout (e.g. a column-major, M-major, lhs 1x128 scale),
// else reordered on the device at every run.
StatusOr<PreparedScale> PrepareScale(const OperandScale& scale, bool is_lhs, int64_t rows,
                                     int64_t rows_padded, int64_t k, const std::string& context) {
  const ScaleMode mode = scale.mode;
  PreparedScale s;
  s.mode = mode;
  const char* name = is_lhs ? "lhs" : "rhs";
  const int64_t k_blocks = k / kScaleBlock;
  const ScaleStrides source = SourceScaleStrides(scale, is_lhs);
  ScaleRelayoutParams& p = s.params;
  switch (mode) {
    case ScaleMode::kNone:
      s.how = StrFormat("%s scale: none", name);
      return s;
    case ScaleMode::kTensor:
      s.how = StrFormat("%s scale: per tensor (SCALAR_32F), in place", name);
      return s;
    case ScaleMode::kOuterVector:
      p = {nullptr, nullptr, rows, 1, rows_padded, 1, 1, 0, 1, 0};
      break;
    case ScaleMode::kBlock1x128:
      // Wanted: (row, kb) at kb * rows_padded + row ("outer-dim-major").
      p = {nullptr,  nullptr,    rows,         k_blocks, rows_padded,
           k_blocks, source.row, source.block, 1,        rows_padded};
      break;
    case ScaleMode::kBlock128x128: {
      // Wanted: (row block, kb) at rb * round_up(KB, 4) + kb (16-byte aligned rows).
      const int64_t row_blocks = rows / kScaleBlock;
      const int64_t ld = RoundUp(k_blocks, 4);
      p = {nullptr, nullptr, row_blocks, k_blocks, row_blocks, ld, source.row, source.block, ld, 1};
      break;
    }
  }
  // In place when nothing is padded and every axis longer than 1 has cuBLASLt's stride.
  const bool same_extents = p.dest_rows == p.rows && p.dest_cols == p.cols;
  const bool rows_match = p.rows <= 1 || p.source_row_stride == p.dest_row_stride;
  const bool cols_match = p.cols <= 1 || p.source_col_stride == p.dest_col_stride;
  s.relayout = !(same_extents && rows_match && cols_match);
  if (s.relayout) {
    FP8_ASSIGN_OR_RETURN(s.copy,
                         DeviceBuffer::Allocate(static_cast<size_t>(p.dest_rows * p.dest_cols) * 4,
                                                "scale relayout"));
    p.dest = s.copy.as<float>();
  }
  s.how = StrFormat(
      "%s scale: %s %s (%s), %s", name, ScaleModeName(mode), ScaleLayoutName(scale).c_str(),
      ScaleModeEnumName(LtScaleMode(mode)),
      s.relayout
          ? StrFormat("reordered on the device into cuBLASLt's layout [%lld x %lld] at every run",
                      static_cast<long long>(p.dest_rows), static_cast<long long>(p.dest_cols))
                .c_str()
          : "already in cuBLASLt's layout: read in place");
  (void)context;
  return s;
}

// ---- Checks at run time ------------------------------------------------------------------------

Status CheckPresence(const char* name, const void* pointer, bool needed,
                     const std::string& context) {
  if (needed && pointer == nullptr) {
    return InvalidArgument("%s buffer is missing [%s]", name, context.c_str());
  }
  if (!needed && pointer != nullptr) {
    return InvalidArgument("%s buffer was given but the dot does not use one [%s]", name,
                           context.c_str());
  }
  return OkStatus();
}

Status CheckAlignment(const char* name, const void* pointer, uintptr_t alignment,
                      const std::string& context) {
  if (pointer != nullptr && reinterpret_cast<uintptr_t>(pointer) % alignment != 0) {
    return InvalidArgument("%s pointer %p is not %zu-byte aligned (cuBLASLt needs it) [%s]", name,
                           pointer, static_cast<size_t>(alignment), context.c_str());
  }
  return OkStatus();
}

}  // namespace
}  // namespace cuda

using cuda::GatherConversion;
using cuda::LtMatmul;
using cuda::LtMatmulConfig;
using cuda::PreparedTensor;
using cuda::TensorRequest;

CudaDotPlan::CudaDotPlan(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaDotPlan::~CudaDotPlan() = default;
const CudaPlanInfo& CudaDotPlan::info() const { return impl_->info; }
const DotSpec& CudaDotPlan::spec() const { return impl_->spec; }
std::string CudaDotPlan::Explain() const { return cuda::ExplainPlan(*impl_); }

StatusOr<std::unique_ptr<CudaDotPlan>> CudaDotPlan::Create(const DotSpec& spec,
                                                           const CudaDotOptions& options) {
  FP8_ASSIGN_OR_RETURN(CanonicalDot dot, ValidateDotSpec(spec));
  FP8_RETURN_IF_ERROR(QueryCudaDevice().status());
  auto impl = std::make_unique<Impl>();
  Impl& plan = *impl;
  plan.spec = spec;
  plan.options = options;
  plan.info.dot = dot;
  plan.context = StrFormat("%s x %s -> %s, batch=%lld M=%lld N=%lld K=%lld, %s",
                           spec.lhs.ToString().c_str(), spec.rhs.ToString().c_str(),
                           DTypeName(spec.output_type), static_cast<long long>(dot.batch),
                           static_cast<long long>(dot.m), static_cast<long long>(dot.n),
                           static_cast<long long>(dot.k), AccumulationModeName(dot.accumulation));
  const std::string& context = plan.context;

  // 1-2. Accumulation and types.
  const bool fp8 = IsFp8Accumulation(dot.accumulation);
  const bool native = IsNativeFp8Pair(spec.lhs.dtype, spec.rhs.dtype);
  plan.upcast = fp8 && !native;
  plan.info.native_fp8 = native;
  const bool block_scales = IsBlockScale(spec.lhs_scale.mode);
  FP8_ASSIGN_OR_RETURN(cuda::ComputeChoice compute,
                       cuda::ComputeFor(dot.accumulation, plan.upcast));
  plan.info.compute_type = cuda::ComputeTypeName(compute.type);
  DType lhs_type = spec.lhs.dtype, rhs_type = spec.rhs.dtype;
  GatherConversion conversion = GatherConversion::kCopy;
  if (plan.upcast) {
    conversion = block_scales ? GatherConversion::kFp8ToF32Scaled : GatherConversion::kE5M2ToF16;
    lhs_type = rhs_type = block_scales ? DType::kF32 : DType::kF16;
    plan.scales_in_gather = block_scales;
  }
  plan.k_padded = cuda::RoundUp(dot.k, cuda::kAlignmentBytes / DTypeSizeInBytes(lhs_type));
  plan.info.k_padded = plan.k_padded;

  FP8_ASSIGN_OR_RETURN(plan.workspace,
                       DeviceBuffer::Allocate(options.workspace_bytes, "cuBLASLt workspace"));

  // 3. Operands: lhs rows = M, rhs rows = N (padded with zero rows up to cuBLASLt's m = gemm_m,
  // D is then sliced back), both cols = K.
  const DotDimensionNumbers& dnums = spec.dimension_numbers;
  auto build = [&](const int64_t gemm_m) -> Status {
    TensorRequest lhs_request;
    lhs_request.name = "lhs";
    lhs_request.spec = &spec.lhs;
    lhs_request.index =
        cuda::IndexTensor(spec.lhs, dnums.lhs_batch_dimensions, dot.lhs_free_dimensions,
                          dnums.lhs_contracting_dimensions);
    lhs_request.target_type = lhs_type;
    lhs_request.conversion = conversion;
    lhs_request.cols_padded = plan.k_padded;
    lhs_request.allow_rows_contiguous = !fp8;
    lhs_request.rows_name = "M";
    lhs_request.cols_name = "K";
    TensorRequest rhs_request = lhs_request;
    rhs_request.name = "rhs";
    rhs_request.spec = &spec.rhs;
    rhs_request.index =
        cuda::IndexTensor(spec.rhs, dnums.rhs_batch_dimensions, dot.rhs_free_dimensions,
                          dnums.rhs_contracting_dimensions);
    rhs_request.target_type = rhs_type;
    rhs_request.rows_padded = gemm_m;
    rhs_request.rows_name = "N";
    FP8_ASSIGN_OR_RETURN(plan.lhs, cuda::PrepareTensor(lhs_request, context));
    FP8_ASSIGN_OR_RETURN(plan.rhs, cuda::PrepareTensor(rhs_request, context));

    // C and bias, viewed as [batch][M][N] and [1][1][N].
    const auto batch_rank = static_cast<int64_t>(dnums.lhs_batch_dimensions.size());
    const auto m_rank = static_cast<int64_t>(dot.lhs_free_dimensions.size());
    const auto out_rank = static_cast<int64_t>(dot.output_dims.size());
    auto prepare_aux = [&](int64_t n_padded) -> Status {
      plan.c = PreparedTensor();
      plan.bias = PreparedTensor();
      if (spec.c.has_value()) {
        TensorRequest r;
        r.name = "C";
        r.spec = &*spec.c;
        r.index = cuda::IndexTensor(*spec.c, cuda::Range(0, batch_rank),
                                    cuda::Range(batch_rank, batch_rank + m_rank),
                                    cuda::Range(batch_rank + m_rank, out_rank));
        r.target_type = spec.c->dtype;
        r.cols_padded = n_padded;
        r.rows_name = "M";
        r.cols_name = "N";
        FP8_ASSIGN_OR_RETURN(plan.c, cuda::PrepareTensor(r, context));
      }
      if (spec.bias.has_value()) {
        TensorRequest r;
        r.name = "bias";
        r.spec = &*spec.bias;
        r.index = cuda::IndexTensor(*spec.bias, {}, {},
                                    cuda::Range(0, static_cast<int64_t>(spec.bias->dims.size())));
        r.target_type = spec.bias->dtype;
        r.cols_padded = n_padded;
        r.rows_name = "-";
        r.cols_name = "N";
        FP8_ASSIGN_OR_RETURN(plan.bias, cuda::PrepareTensor(r, context));
      }
      return OkStatus();
    };

    // cuBLASLt's view; `with_scales`: the A/B scale pointers are set (native FP8 only).
    auto base_config = [&](int64_t n_padded, bool with_scales) {
      LtMatmulConfig config;
      config.a_type = cuda::CudaType(plan.rhs.target_type);
      config.b_type = cuda::CudaType(plan.lhs.target_type);
      config.compute_type = compute.type;
      config.trans_a = plan.rhs.cols_contiguous ? CUBLAS_OP_T : CUBLAS_OP_N;
      config.trans_b = plan.lhs.cols_contiguous ? CUBLAS_OP_N : CUBLAS_OP_T;
      config.m = gemm_m;
      config.n = dot.m;
      config.k = plan.k_padded;
      config.lda = plan.rhs.ld;
      config.ldb = plan.lhs.ld;
      config.ldd = n_padded;
      config.batch = dot.batch;
      config.stride_a = plan.rhs.batch_stride;
      config.stride_b = plan.lhs.batch_stride;
      config.stride_d = dot.m * n_padded;
      config.fast_accum = native ? cuda::FastAccumFor(dot.accumulation) : std::nullopt;
      if (with_scales && spec.rhs_scale.mode != ScaleMode::kNone) {
        config.a_scale_mode = cuda::LtScaleMode(spec.rhs_scale.mode);
      }
      if (with_scales && spec.lhs_scale.mode != ScaleMode::kNone) {
        config.b_scale_mode = cuda::LtScaleMode(spec.lhs_scale.mode);
      }
      return config;
    };
    auto try_create = [&](const LtMatmulConfig& config) -> StatusOr<std::unique_ptr<LtMatmul>> {
      return LtMatmul::Create(config, options.workspace_bytes,
                              std::max(1, options.autotune_candidates), plan.workspace.data(),
                              context);
    };
    std::vector<std::string> rejections;

    // 4a. Everything fused in cuBLASLt (not for the upcast path, nor for scaled non-FP8 dots:
    // cuBLASLt scales only FP8 operands).
    const bool has_scales =
        spec.lhs_scale.mode != ScaleMode::kNone || spec.rhs_scale.mode != ScaleMode::kNone;
    if (!plan.upcast && (native || !has_scales)) {
      const DType out = spec.output_type;
      const DType c_type = spec.c ? spec.c->dtype : (IsFp8(out) ? DType::kBF16 : out);
      const bool n_aligned = gemm_m * DTypeSizeInBytes(out) % cuda::kAlignmentBytes == 0 &&
                             gemm_m * DTypeSizeInBytes(c_type) % cuda::kAlignmentBytes == 0;
      const int64_t n_padded = n_aligned ? gemm_m : cuda::RoundUp(gemm_m, 16);
      FP8_RETURN_IF_ERROR(prepare_aux(n_padded));
      LtMatmulConfig config = base_config(n_padded, native);
      config.d_type = cuda::CudaType(out);
      config.c_type = cuda::CudaType(c_type);
      config.ldc = plan.c.present ? plan.c.ld : n_padded;
      config.stride_c = plan.c.present ? plan.c.batch_stride : config.stride_d;
      config.d_scale = spec.output_scale;
      config.amax_d = spec.compute_amax;
      config.epilogue = cuda::LtEpilogue(spec.epilogue);
      if (spec.bias) config.bias_type = cuda::CudaType(spec.bias->dtype);
      StatusOr<std::unique_ptr<LtMatmul>> gemm = try_create(config);
      if (gemm.ok()) {
        plan.gemm = std::move(gemm).value();
        plan.fused = true;
        plan.n_padded = n_padded;
        plan.scales_in_gemm = native;
      } else {
        if (gemm.status().code() == StatusCode::kResourceExhausted) return gemm.status();
        rejections.push_back("fused: " + gemm.status().message());
      }
    } else {
      rejections.push_back(plan.upcast ? "the upcast GEMM takes no FP8 scales or FP8 output"
                                       : "cuBLASLt applies operand scales to FP8 operands only");
    }

    // 4b. S = (scaled) A.B in f32, then fp8dot's epilogue kernel. First with cuBLASLt applying
    // the scales; failing that (some scale-mode pairs, e.g. OUTER_VEC x SCALAR, have no kernel),
    // per-tensor and per-row/column scales move into the epilogue too.
    if (!plan.fused) {
      plan.n_padded = cuda::RoundUp(gemm_m, cuda::kAlignmentBytes / 4);
      FP8_RETURN_IF_ERROR(prepare_aux(dot.n));  // the epilogue reads C and bias with any ld
      std::vector<bool> attempts = {native};
      const bool scales_movable =
          !IsBlockScale(spec.lhs_scale.mode) && !IsBlockScale(spec.rhs_scale.mode);
      if (native && has_scales && scales_movable) attempts.push_back(false);
      for (bool with_scales : attempts) {
        LtMatmulConfig config = base_config(plan.n_padded, with_scales);
        config.d_type = config.c_type = CUDA_R_32F;
        config.ldc = plan.n_padded;
        config.stride_c = config.stride_d;
        StatusOr<std::unique_ptr<LtMatmul>> gemm = try_create(config);
        if (gemm.ok()) {
          plan.gemm = std::move(gemm).value();
          plan.scales_in_gemm = with_scales;
          break;
        }
        if (gemm.status().code() == StatusCode::kResourceExhausted) return gemm.status();
        rejections.push_back(
            std::string(with_scales ? "unfused with scales in cuBLASLt: " : "unfused: ") +
            gemm.status().message());
      }
      if (plan.gemm == nullptr) {
        std::string all;
        for (const std::string& r : rejections) all += "\n  " + r;
        return Unimplemented("cuBLASLt has no algorithm for this dot [%s]:%s", context.c_str(),
                             all.c_str());
      }
    }
    for (const std::string& r : rejections) {
      plan.fused_rejection += (plan.fused_rejection.empty() ? "" : "; ") + r;
    }
    plan.info.fused_epilogue = plan.fused;
    plan.info.n_padded = plan.n_padded;
    const int64_t d_element = plan.fused ? DTypeSizeInBytes(spec.output_type) : 4;
    if (!plan.fused || plan.n_padded != dot.n) {
      FP8_ASSIGN_OR_RETURN(
          plan.gemm_output,
          DeviceBuffer::Allocate(static_cast<size_t>(dot.batch * dot.m * plan.n_padded * d_element),
                                 plan.fused ? "padded D" : "S (f32 GEMM output)"));
    }

    // Scales in cuBLASLt's layout (native FP8 only; the other paths apply them elsewhere).
    if (plan.scales_in_gemm) {
      FP8_ASSIGN_OR_RETURN(plan.lhs_scale,
                           cuda::PrepareScale(spec.lhs_scale, true, dot.m, dot.m, dot.k, context));
      FP8_ASSIGN_OR_RETURN(
          plan.rhs_scale, cuda::PrepareScale(spec.rhs_scale, false, dot.n, gemm_m, dot.k, context));
    }
    plan.gemm_m = gemm_m;
    return OkStatus();
  };
  // cuBLASLt's m as it is first; native FP8 with m not a multiple of 16 may have no kernel
  // (m=17 and m=1 have none on the H200; m=1000 and m=130 do): then pad it to 16.
  std::vector<int64_t> gemm_ms = {dot.n};
  if (native && dot.n % 16 != 0) gemm_ms.push_back(cuda::RoundUp(dot.n, 16));
  Status built = OkStatus();
  for (int64_t gemm_m : gemm_ms) {
    plan.gemm.reset();
    plan.fused = false;
    plan.fused_rejection.clear();
    built = build(gemm_m);
    if (built.code() != StatusCode::kUnimplemented) break;
  }
  FP8_RETURN_IF_ERROR(built);
  if (native) {
    FP8_ASSIGN_OR_RETURN(plan.info.fast_accum, plan.gemm->ReadFastAccum());
  }
  plan.compute_note = compute.note;
  if (options.autotune_candidates > 1) FP8_RETURN_IF_ERROR(cuda::Autotune(plan));
  plan.info.algorithm = plan.gemm->AlgorithmDescription(plan.gemm->chosen());
  plan.info.k_split = plan.gemm->CandidateKSplit(plan.gemm->chosen());
  return std::unique_ptr<CudaDotPlan>(new CudaDotPlan(std::move(impl)));
}

Status CudaDotPlan::Run(const CudaDotBuffers& b, CudaStream stream) {
  Impl& plan = *impl_;
  const DotSpec& spec = plan.spec;
  const CanonicalDot& dot = plan.info.dot;
  const std::string& context = plan.context;

  // Presence and alignment.
  FP8_RETURN_IF_ERROR(cuda::CheckPresence("lhs", b.lhs, true, context));
  FP8_RETURN_IF_ERROR(cuda::CheckPresence("rhs", b.rhs, true, context));
  FP8_RETURN_IF_ERROR(cuda::CheckPresence("output", b.output, true, context));
  FP8_RETURN_IF_ERROR(cuda::CheckPresence("lhs scale", b.lhs_scale,
                                          spec.lhs_scale.mode != ScaleMode::kNone, context));
  FP8_RETURN_IF_ERROR(cuda::CheckPresence("rhs scale", b.rhs_scale,
                                          spec.rhs_scale.mode != ScaleMode::kNone, context));
  FP8_RETURN_IF_ERROR(cuda::CheckPresence("C", b.c, spec.c.has_value(), context));
  FP8_RETURN_IF_ERROR(cuda::CheckPresence("bias", b.bias, spec.bias.has_value(), context));
  FP8_RETURN_IF_ERROR(
      cuda::CheckPresence("output scale", b.output_scale, spec.output_scale, context));
  FP8_RETURN_IF_ERROR(cuda::CheckPresence("amax", b.amax, spec.compute_amax, context));
  auto in_place_alignment = [](const PreparedTensor& t) -> uintptr_t {
    return t.gathered ? static_cast<uintptr_t>(DTypeSizeInBytes(t.source_type))
                      : static_cast<uintptr_t>(cuda::kAlignmentBytes);
  };
  FP8_RETURN_IF_ERROR(cuda::CheckAlignment("lhs", b.lhs, in_place_alignment(plan.lhs), context));
  FP8_RETURN_IF_ERROR(cuda::CheckAlignment("rhs", b.rhs, in_place_alignment(plan.rhs), context));
  if (plan.c.present) {
    FP8_RETURN_IF_ERROR(cuda::CheckAlignment("C", b.c, in_place_alignment(plan.c), context));
  }
  if (plan.bias.present) {
    FP8_RETURN_IF_ERROR(
        cuda::CheckAlignment("bias", b.bias, in_place_alignment(plan.bias), context));
  }
  const bool output_in_place = plan.fused && plan.n_padded == dot.n;
  FP8_RETURN_IF_ERROR(cuda::CheckAlignment(
      "output", b.output,
      output_in_place ? cuda::kAlignmentBytes : DTypeSizeInBytes(spec.output_type), context));
  FP8_RETURN_IF_ERROR(cuda::CheckAlignment("lhs scale", b.lhs_scale, 4, context));
  FP8_RETURN_IF_ERROR(cuda::CheckAlignment("rhs scale", b.rhs_scale, 4, context));
  FP8_RETURN_IF_ERROR(cuda::CheckAlignment("output scale", b.output_scale, 4, context));
  FP8_RETURN_IF_ERROR(cuda::CheckAlignment("amax", b.amax, 4, context));

  // amax is a running max in both cuBLASLt and our epilogue: start from 0.
  if (b.amax != nullptr) {
    FP8_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(b.amax, 0, sizeof(float), stream), context);
  }

  // Device copies: operands, scales, C, bias.
  // Fills in the run's pointers; returns false when `t` is read in place.
  auto set_source = [&](PreparedTensor& t, const void* source, const float* scale,
                        const OperandScale& spec_scale, bool is_lhs) {
    if (!t.gathered) return false;
    t.gather.source = source;
    if (plan.scales_in_gather && IsBlockScale(spec_scale.mode)) {
      // Index of the scale of element (row, k): lhs [M, KB] or [M/128, KB]; rhs [KB, N] or
      // [KB, N/128], in the spec's scale layout.
      const bool block2d = spec_scale.mode == ScaleMode::kBlock128x128;
      const cuda::ScaleStrides strides = cuda::SourceScaleStrides(spec_scale, is_lhs);
      t.gather.scale = scale;
      t.gather.scale_row_block = block2d ? cuda::kScaleBlock : 1;
      t.gather.scale_row_stride = strides.row;
      t.gather.scale_block_stride = strides.block;
    }
    return true;
  };
  // The operands share one launch (same conversion and element size by construction).
  cuda::GatherParams operands[2];
  int operand_count = 0;
  if (set_source(plan.lhs, b.lhs, b.lhs_scale, spec.lhs_scale, true)) {
    operands[operand_count++] = plan.lhs.gather;
  }
  if (set_source(plan.rhs, b.rhs, b.rhs_scale, spec.rhs_scale, false)) {
    operands[operand_count++] = plan.rhs.gather;
  }
  FP8_RETURN_IF_ERROR(cuda::LaunchGathers(operands, operand_count, stream, context));
  for (auto [t, user] : {std::pair{&plan.c, b.c}, std::pair{&plan.bias, b.bias}}) {
    if (t->present && set_source(*t, user, nullptr, {}, false)) {
      FP8_RETURN_IF_ERROR(cuda::LaunchGather(t->gather, stream, context));
    }
  }
  cuda::ScaleRelayoutParams relayouts[2];
  int relayout_count = 0;
  for (auto [prepared, user] :
       {std::pair{&plan.lhs_scale, b.lhs_scale}, std::pair{&plan.rhs_scale, b.rhs_scale}}) {
    if (!prepared->relayout) continue;
    prepared->params.source = user;
    relayouts[relayout_count++] = prepared->params;
  }
  FP8_RETURN_IF_ERROR(cuda::LaunchScaleRelayouts(relayouts, relayout_count, stream, context));

  // The GEMM.
  cuda::LtPointers pointers;
  if (plan.scales_in_gemm) {
    pointers.a_scale = plan.rhs_scale.Resolve(b.rhs_scale);
    pointers.b_scale = plan.lhs_scale.Resolve(b.lhs_scale);
  }
  if (plan.fused) {
    pointers.d_scale = b.output_scale;
    pointers.amax_d = b.amax;
    pointers.bias = plan.bias.Resolve(b.bias);
  }
  FP8_RETURN_IF_ERROR(plan.gemm->SetPointers(pointers));
  void* d = output_in_place ? b.output : plan.gemm_output.data();
  const void* c = d;  // beta = 0: not read
  if (plan.fused && plan.c.present) c = plan.c.Resolve(b.c);
  if (plan.fused && !plan.c.present && IsFp8(spec.output_type)) c = nullptr;  // C type != D type
  const float alpha = plan.fused ? static_cast<float>(spec.alpha) : 1.0f;
  const float beta = plan.fused ? static_cast<float>(spec.beta) : 0.0f;
  FP8_RETURN_IF_ERROR(plan.gemm->Run(alpha, beta, plan.rhs.Resolve(b.rhs), plan.lhs.Resolve(b.lhs),
                                     c, d, plan.workspace.data(), plan.workspace.size(), stream));

  // Back to the caller's D: slice off the padding, or run our epilogue.
  if (plan.fused && !output_in_place) {
    const size_t element = static_cast<size_t>(DTypeSizeInBytes(spec.output_type));
    FP8_CUDA_RETURN_IF_ERROR(
        cudaMemcpy2DAsync(b.output, static_cast<size_t>(dot.n) * element, d,
                          static_cast<size_t>(plan.n_padded) * element,
                          static_cast<size_t>(dot.n) * element,
                          static_cast<size_t>(dot.batch * dot.m), cudaMemcpyDeviceToDevice, stream),
        context);
  }
  if (!plan.fused) {
    cuda::EpilogueParams e;
    e.s = static_cast<const float*>(d);
    e.s_ld = plan.n_padded;
    e.batch = dot.batch;
    e.m = dot.m;
    e.n = dot.n;
    e.alpha = static_cast<float>(spec.alpha);
    if (!plan.scales_in_gemm && !plan.scales_in_gather) {
      e.lhs_scale = b.lhs_scale;
      e.lhs_scale_per_row = spec.lhs_scale.mode == ScaleMode::kOuterVector;
      e.rhs_scale = b.rhs_scale;
      e.rhs_scale_per_column = spec.rhs_scale.mode == ScaleMode::kOuterVector;
    }
    if (plan.c.present) {
      e.c = plan.c.Resolve(b.c);
      e.c_type = plan.c.target_type;
      e.c_ld = plan.c.ld;
      e.c_batch_stride = plan.c.batch_stride;
      e.beta = static_cast<float>(spec.beta);
    }
    if (plan.bias.present) {
      e.bias = plan.bias.Resolve(b.bias);
      e.bias_type = plan.bias.target_type;
    }
    e.activation = cuda::ActivationOf(spec.epilogue);
    e.out = b.output;
    e.out_type = spec.output_type;
    e.scale_d = b.output_scale;
    e.amax = b.amax;
    FP8_RETURN_IF_ERROR(cuda::LaunchEpilogue(e, stream, context));
  }
  return OkStatus();
}

}  // namespace fp8dot
