// CudaDotPlan: turns a validated DotSpec into one cuBLASLt matmul plus the device copies it needs
// (Create), and enqueues them (Run).
//
// The decisions, in order:
//   1. Accumulation: CanonicalDot::accumulation (ValidateDotSpec -> ResolveAccumulation) is the
//      only input. FP8 pairs set CUBLASLT_MATMUL_DESC_FAST_ACCUM = (mode == kFp8Fast) in
//      FastAccumFor() below, nowhere else; f32 maps TF32 vs FP32 to the compute type.
//   2. Types (ResolveTypes): native FP8 pairs run as they are; e5m2 x e5m2 is converted exactly to
//   f16 (or, with
//      block scales, scaled into f32) and runs as an upcast GEMM.
//   3. Layout (PrepareOperands, operand_preparation.h): D[M,N] row-major is cuBLASLt's column-major
//   D^T = B^T . A^T, so cuBLASLt's A is
//      the rhs and its B the lhs, both wanted K-contiguous ("TN", required for FP8). An operand
//      is read in place when its layout is already strided that way with 16-byte aligned leading
//      dims; otherwise it is gathered on the device. K is zero-padded to 16 bytes of elements, N
//      to keep D's and C's rows 16-byte aligned (D is then sliced back).
//   4. Epilogue (TryFusedGemm, else UnfusedGemm): first try everything fused in cuBLASLt (scales,
//   alpha/beta + C, bias,
//      relu/gelu, scale_d, amax). If cuBLASLt has no algorithm for that combination, compute
//      S = scaled A.B in f32 and run fp8dot's epilogue kernel, and say why in Explain().
//   5. Scales (PrepareScales): in cuBLASLt's layout, in place or reordered at every run.
// Run() enqueues, in order: buffer checks, device copies, the GEMM, then the slice of padded D or
// fp8dot's epilogue kernel.
#include "cuda/dot_plan.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cuda/cuda_status.h"
#include "cuda/kernels/dot_epilogue.h"
#include "fp8dot/arithmetic.h"
#include "fp8dot/cuda_device.h"
#include "fp8dot/memory_ranges.h"

namespace fp8dot {
namespace cuda {
namespace {

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

// ---- Create, step 2: types ---------------------------------------------------------------------

// What the operands become and how the accumulation is computed.
struct TypePlan {
  bool fp8 = false;     // an FP8 accumulation mode
  bool native = false;  // a pair cuBLASLt runs as FP8 (all but e5m2 x e5m2)
  bool upcast = false;  // FP8 mode, no native kernel: operands converted on the device
  bool scales_in_gather = false;
  DType lhs_type = DType::kF32, rhs_type = DType::kF32;  // what cuBLASLt reads
  GatherConversion conversion = GatherConversion::kCopy;
  ComputeChoice compute;
};

StatusOr<TypePlan> ResolveTypes(const DotSpec& spec, const CanonicalDot& dot) {
  TypePlan t;
  t.fp8 = IsFp8Accumulation(dot.accumulation);
  t.native = IsNativeFp8Pair(spec.lhs.dtype, spec.rhs.dtype);
  t.upcast = t.fp8 && !t.native;
  FP8_ASSIGN_OR_RETURN(t.compute, ComputeFor(dot.accumulation, t.upcast));
  t.lhs_type = spec.lhs.dtype;
  t.rhs_type = spec.rhs.dtype;
  if (t.upcast) {
    const bool block_scales = IsBlockScale(spec.lhs_scale.mode);
    t.conversion = block_scales ? GatherConversion::kFp8ToF32Scaled : GatherConversion::kE5M2ToF16;
    t.lhs_type = t.rhs_type = block_scales ? DType::kF32 : DType::kF16;
    t.scales_in_gather = block_scales;
  }
  return t;
}

// ---- Create, steps 3-5: one attempt at a given cuBLASLt m ---------------------------------------

// Builds the plan's tensors and GEMM for cuBLASLt's m = `lt.m`. Kept as one object so each step
// is a short method over the same plan, types and context.
class PlanBuilder {
 public:
  PlanBuilder(CudaDotPlan::Impl& plan, const TypePlan& types, LtShape lt)
      : plan_(plan),
        spec_(plan.spec),
        dot_(plan.info.dot),
        types_(types),
        lt_(lt),
        has_scales_(spec_.lhs_scale.mode != ScaleMode::kNone ||
                    spec_.rhs_scale.mode != ScaleMode::kNone) {}

  Status Build() {
    plan_.gemm.reset();
    plan_.fused = false;
    plan_.fused_rejection.clear();
    FP8_RETURN_IF_ERROR(PrepareOperands());
    FP8_ASSIGN_OR_RETURN(plan_.fused, TryFusedGemm());
    if (!plan_.fused) FP8_RETURN_IF_ERROR(UnfusedGemm());
    for (const std::string& r : rejections_) {
      plan_.fused_rejection += (plan_.fused_rejection.empty() ? "" : "; ") + r;
    }
    FP8_RETURN_IF_ERROR(AllocateGemmOutput());
    if (plan_.scales_in_gemm) FP8_RETURN_IF_ERROR(PrepareScales());
    plan_.lt = lt_;
    return OkStatus();
  }

  // The own kernel reads the operands as cuBLASLt would (K-major, rows 16-byte aligned), applies
  // the block scales itself (in the caller's layout, or reordered: PrepareOwnScales) and writes D
  // in place.
  Status BuildOwn(OwnGemm own) {
    plan_.gemm.reset();  // what a cuBLASLt attempt may have left
    plan_.gemm_output = DeviceBuffer();
    plan_.scales_in_gemm = false;
    FP8_RETURN_IF_ERROR(PrepareOperands());
    FP8_RETURN_IF_ERROR(PrepareOwnScales(own));
    plan_.own = own;
    plan_.fused = true;
    plan_.n_padded = dot_.n;
    plan_.lt = lt_;
    return OkStatus();
  }

 private:
  // lhs rows = M, rhs rows = N (padded with zero rows up to cuBLASLt's n and m, D is then sliced
  // back), both cols = K (padded to lt.k).
  Status PrepareOperands() {
    const DotDimensionNumbers& dnums = spec_.dimension_numbers;
    TensorRequest lhs;
    lhs.name = "lhs";
    lhs.spec = &spec_.lhs;
    lhs.index = IndexTensor(spec_.lhs, dnums.lhs_batch_dimensions, dot_.lhs_free_dimensions,
                            dnums.lhs_contracting_dimensions);
    lhs.target_type = types_.lhs_type;
    lhs.conversion = types_.conversion;
    lhs.cols_padded = lt_.k;
    lhs.rows_padded = lt_.n;
    lhs.allow_rows_contiguous = !types_.fp8;
    lhs.rows_name = "M";
    lhs.cols_name = "K";
    TensorRequest rhs = lhs;
    rhs.name = "rhs";
    rhs.spec = &spec_.rhs;
    rhs.index = IndexTensor(spec_.rhs, dnums.rhs_batch_dimensions, dot_.rhs_free_dimensions,
                            dnums.rhs_contracting_dimensions);
    rhs.target_type = types_.rhs_type;
    rhs.rows_padded = lt_.m;
    rhs.rows_name = "N";
    FP8_ASSIGN_OR_RETURN(plan_.lhs, PrepareTensor(lhs, plan_.context));
    FP8_ASSIGN_OR_RETURN(plan_.rhs, PrepareTensor(rhs, plan_.context));
    return OkStatus();
  }

  // C and bias, viewed as [batch][M][N] and [1][1][N], with rows `n_padded` long.
  Status PrepareCAndBias(int64_t n_padded) {
    plan_.c = PreparedTensor();
    plan_.bias = PreparedTensor();
    if (spec_.c.has_value()) {
      const auto batch_rank =
          static_cast<int64_t>(spec_.dimension_numbers.lhs_batch_dimensions.size());
      const auto m_rank = static_cast<int64_t>(dot_.lhs_free_dimensions.size());
      const auto out_rank = static_cast<int64_t>(dot_.output_dims.size());
      TensorRequest r;
      r.name = "C";
      r.spec = &*spec_.c;
      r.index = IndexTensor(*spec_.c, Range(0, batch_rank), Range(batch_rank, batch_rank + m_rank),
                            Range(batch_rank + m_rank, out_rank));
      r.target_type = spec_.c->dtype;
      r.cols_padded = n_padded;
      r.rows_name = "M";
      r.cols_name = "N";
      FP8_ASSIGN_OR_RETURN(plan_.c, PrepareTensor(r, plan_.context));
    }
    if (spec_.bias.has_value()) {
      TensorRequest r;
      r.name = "bias";
      r.spec = &*spec_.bias;
      r.index =
          IndexTensor(*spec_.bias, {}, {}, Range(0, static_cast<int64_t>(spec_.bias->dims.size())));
      r.target_type = spec_.bias->dtype;
      r.cols_padded = n_padded;
      r.rows_name = "-";
      r.cols_name = "N";
      FP8_ASSIGN_OR_RETURN(plan_.bias, PrepareTensor(r, plan_.context));
    }
    return OkStatus();
  }

  // What every attempt shares; `with_scales`: the A/B scale pointers are set (native FP8 only).
  LtMatmulConfig BaseConfig(int64_t n_padded, bool with_scales) const {
    LtMatmulConfig config;
    config.a_type = CudaType(plan_.rhs.target_type);
    config.b_type = CudaType(plan_.lhs.target_type);
    config.compute_type = types_.compute.type;
    config.trans_a = plan_.rhs.cols_contiguous ? CUBLAS_OP_T : CUBLAS_OP_N;
    config.trans_b = plan_.lhs.cols_contiguous ? CUBLAS_OP_N : CUBLAS_OP_T;
    config.m = lt_.m;
    config.n = lt_.n;
    config.k = lt_.k;
    config.lda = plan_.rhs.ld;
    config.ldb = plan_.lhs.ld;
    config.ldd = n_padded;
    config.batch = dot_.batch;
    config.stride_a = plan_.rhs.batch_stride;
    config.stride_b = plan_.lhs.batch_stride;
    config.stride_d = lt_.n * n_padded;
    config.fast_accum = types_.native ? FastAccumFor(dot_.accumulation) : std::nullopt;
    config.sm_count_target = plan_.options.sm_count_target;
    if (with_scales && spec_.rhs_scale.mode != ScaleMode::kNone) {
      config.a_scale_mode = LtScaleMode(spec_.rhs_scale.mode);
    }
    if (with_scales && spec_.lhs_scale.mode != ScaleMode::kNone) {
      config.b_scale_mode = LtScaleMode(spec_.lhs_scale.mode);
    }
    return config;
  }

  // Keeps the GEMM when cuBLASLt has an algorithm for `config`; else records why not. Only
  // running out of memory is an error.
  StatusOr<bool> TryGemm(const LtMatmulConfig& config, const std::string& attempt) {
    const CudaDotOptions& options = plan_.options;
    StatusOr<std::unique_ptr<LtMatmul>> gemm =
        LtMatmul::Create(config, options.workspace_bytes, std::max(1, options.autotune_candidates),
                         plan_.workspace.data(), plan_.context);
    if (gemm.ok()) {
      plan_.gemm = std::move(gemm).value();
      return true;
    }
    if (gemm.status().code() == StatusCode::kResourceExhausted) return gemm.status();
    rejections_.push_back(attempt + ": " + gemm.status().message());
    return false;
  }

  // Everything in one cuBLASLt call: scales, alpha/beta + C, bias, activation, scale_d, amax.
  // Not for the upcast path, nor for scaled non-FP8 dots (cuBLASLt scales only FP8 operands).
  StatusOr<bool> TryFusedGemm() {
    if (types_.upcast || (!types_.native && has_scales_)) {
      rejections_.push_back(types_.upcast ? "the upcast GEMM takes no FP8 scales or FP8 output"
                                          : "cuBLASLt applies operand scales to FP8 operands only");
      return false;
    }
    const DType out = spec_.output_type;
    const DType c_type = spec_.c ? spec_.c->dtype : (IsFp8(out) ? DType::kBF16 : out);
    const bool n_aligned = lt_.m * DTypeSizeInBytes(out) % kAlignmentBytes == 0 &&
                           lt_.m * DTypeSizeInBytes(c_type) % kAlignmentBytes == 0;
    const int64_t n_padded = n_aligned ? lt_.m : RoundUp(lt_.m, 16);
    FP8_RETURN_IF_ERROR(PrepareCAndBias(n_padded));
    LtMatmulConfig config = BaseConfig(n_padded, types_.native);
    config.d_type = CudaType(out);
    config.c_type = CudaType(c_type);
    config.ldc = plan_.c.present ? plan_.c.ld : n_padded;
    config.stride_c = plan_.c.present ? plan_.c.batch_stride : config.stride_d;
    config.d_scale = spec_.output_scale;
    config.amax_d = spec_.compute_amax;
    config.epilogue = LtEpilogue(spec_.epilogue);
    if (spec_.bias) config.bias_type = CudaType(spec_.bias->dtype);
    FP8_ASSIGN_OR_RETURN(const bool created, TryGemm(config, "fused"));
    if (!created) return false;
    plan_.n_padded = n_padded;
    plan_.scales_in_gemm = types_.native;
    return true;
  }

  // S = (scaled) A.B in f32, then fp8dot's epilogue kernel. First with cuBLASLt applying the
  // scales; failing that (some scale-mode pairs, e.g. OUTER_VEC x SCALAR, have no kernel),
  // per-tensor and per-row/column scales move into the epilogue too.
  Status UnfusedGemm() {
    plan_.n_padded = RoundUp(lt_.m, kAlignmentBytes / 4);
    FP8_RETURN_IF_ERROR(PrepareCAndBias(dot_.n));  // the epilogue reads C and bias with any ld
    std::vector<bool> attempts = {types_.native};
    const bool scales_movable =
        !IsBlockScale(spec_.lhs_scale.mode) && !IsBlockScale(spec_.rhs_scale.mode);
    if (types_.native && has_scales_ && scales_movable) attempts.push_back(false);
    for (bool with_scales : attempts) {
      LtMatmulConfig config = BaseConfig(plan_.n_padded, with_scales);
      config.d_type = config.c_type = CUDA_R_32F;
      config.ldc = plan_.n_padded;
      config.stride_c = config.stride_d;
      FP8_ASSIGN_OR_RETURN(
          const bool created,
          TryGemm(config, with_scales ? "unfused with scales in cuBLASLt" : "unfused"));
      if (created) {
        plan_.scales_in_gemm = with_scales;
        return OkStatus();
      }
    }
    std::string all;
    for (const std::string& r : rejections_) all += "\n  " + r;
    return Unimplemented("cuBLASLt has no algorithm for this dot [%s]:%s", plan_.context.c_str(),
                         all.c_str());
  }

  // S in f32 (unfused), or the padded D (fused with N or M padded); none when D is written in
  // place.
  Status AllocateGemmOutput() {
    const int64_t d_element = plan_.fused ? DTypeSizeInBytes(spec_.output_type) : 4;
    if (plan_.fused && plan_.n_padded == dot_.n && lt_.n == dot_.m) return OkStatus();
    FP8_ASSIGN_OR_RETURN(
        plan_.gemm_output,
        DeviceBuffer::Allocate(static_cast<size_t>(dot_.batch * lt_.n * plan_.n_padded * d_element),
                               plan_.fused ? "padded D" : "S (f32 GEMM output)"));
    return OkStatus();
  }

  // 1x128 scales the copy engine cannot stage, reordered into its layout at every run where
  // OwnGemmReordersScales says so.
  Status PrepareOwnScales(OwnGemm& own) {
    if (!OwnGemmReordersScales(OwnGemmLaunchShape(own, dot_))) return OkStatus();
    if (spec_.lhs_scale.mode == ScaleMode::kBlock1x128) {
      const int64_t rows = RoundUp(dot_.m, 4);
      FP8_ASSIGN_OR_RETURN(plan_.lhs_scale,
                           PrepareScale(spec_.lhs_scale, true, dot_.m, rows, dot_.k));
      if (plan_.lhs_scale.relayout) own.lhs_scale = {.row = 1, .block = rows};
    }
    if (spec_.rhs_scale.mode == ScaleMode::kBlock1x128) {
      const int64_t columns = RoundUp(dot_.n, 4);
      FP8_ASSIGN_OR_RETURN(plan_.rhs_scale,
                           PrepareScale(spec_.rhs_scale, false, dot_.n, columns, dot_.k));
      if (plan_.rhs_scale.relayout) own.rhs_scale = {.row = 1, .block = columns};
    }
    return OkStatus();
  }

  // Scales in cuBLASLt's layout (only when cuBLASLt applies them; the other paths apply them in
  // the gather or the epilogue).
  Status PrepareScales() {
    FP8_ASSIGN_OR_RETURN(plan_.lhs_scale,
                         PrepareScale(spec_.lhs_scale, true, dot_.m, lt_.n, dot_.k));
    FP8_ASSIGN_OR_RETURN(plan_.rhs_scale,
                         PrepareScale(spec_.rhs_scale, false, dot_.n, lt_.m, dot_.k));
    return OkStatus();
  }

  CudaDotPlan::Impl& plan_;
  const DotSpec& spec_;
  const CanonicalDot& dot_;
  const TypePlan& types_;
  const LtShape lt_;
  const bool has_scales_;
  std::vector<std::string> rejections_;  // why an attempt had no cuBLASLt algorithm
};

// The engine decision: kOwn is taken, or refused with the reason; kAuto takes the own kernel
// where it can run the dot and measured faster than cuBLASLt (OwnGemmIsFaster), else cuBLASLt.
StatusOr<bool> ChooseOwnEngine(const CudaDotPlan::Impl& plan, const CanonicalDot& dot) {
  if (plan.options.engine == GemmEngine::kCublasLt) return false;
  const std::string rejection = OwnGemmRejection(plan.spec, dot);
  if (plan.options.engine == GemmEngine::kAuto) {
    if (!rejection.empty()) return false;
    FP8_ASSIGN_OR_RETURN(const GemmDevice device, PlanGemmDevice(plan.options));
    return OwnGemmIsFaster(plan.spec, dot, device);
  }
  if (!rejection.empty()) {
    return InvalidArgument("engine=own: %s [%s]", rejection.c_str(), plan.context.c_str());
  }
  return true;
}

// The shapes cuBLASLt is asked for, in order, until one has a kernel: its m (our N) as it is,
// then padded to 16 (native FP8 with m = 17 or 1 has none on the H200; m = 1000 and 130 do).
// Block scales with partial blocks may have none either (cuBLASLt 13.1 on the H200: N = 200 with
// K = 320 or 336; N = 2112 with K = 7168 has one): then K zero-padded to whole 128-blocks, and N
// too. With 1x128 lhs scales cuBLASLt needs its n (our M) aligned (M = 130 and 70 have none):
// then M padded to 16 as well (one GEMM without C or amax, which would see the padded rows). Zero
// padding adds nothing to a block's sum; D is sliced back.
std::vector<LtShape> CublasLtShapes(const CudaDotPlan::Impl& plan, const TypePlan& types) {
  const DotSpec& spec = plan.spec;
  const CanonicalDot& dot = plan.info.dot;
  const int64_t k = RoundUp(dot.k, kAlignmentBytes / DTypeSizeInBytes(types.lhs_type));
  std::vector<LtShape> shapes;
  const auto add = [&](int64_t m, int64_t n, int64_t shape_k) {  // once each
    for (const LtShape& s : shapes) {
      if (s.m == m && s.n == n && s.k == shape_k) return;
    }
    shapes.push_back({.m = m, .n = n, .k = shape_k});
  };
  add(dot.n, dot.m, k);
  if (!types.native) return shapes;
  add(RoundUp(dot.n, 16), dot.m, k);
  const bool block_scaled = IsBlockScale(spec.lhs_scale.mode) || IsBlockScale(spec.rhs_scale.mode);
  if (block_scaled) {
    const int64_t whole_k = RoundUp(dot.k, kScaleBlockSize);
    add(RoundUp(dot.n, 16), dot.m, whole_k);
    add(RoundUp(dot.n, kScaleBlockSize), dot.m, whole_k);
  }
  if (spec.lhs_scale.mode == ScaleMode::kBlock1x128 && dot.m % 16 != 0 && dot.batch == 1 &&
      !spec.c && !spec.compute_amax) {
    for (size_t i = 0, count = shapes.size(); i < count; ++i) {
      add(shapes[i].m, RoundUp(dot.m, 16), shapes[i].k);
    }
  }
  return shapes;
}

// The own kernel's plan (OwnGemmRejection is empty for the spec): operands prepared as for
// cuBLASLt, the split-K workspace zero-filled once, and the plan's info.
Status BuildOwnPlan(CudaDotPlan::Impl& plan, const TypePlan& types) {
  const CanonicalDot& dot = plan.info.dot;
  FP8_ASSIGN_OR_RETURN(const GemmDevice device, PlanGemmDevice(plan.options));
  FP8_ASSIGN_OR_RETURN(const OwnGemm gemm, MakeOwnGemm(plan.spec, dot, plan.options, device));
  const int64_t k = RoundUp(dot.k, kAlignmentBytes);
  FP8_RETURN_IF_ERROR(
      PlanBuilder(plan, types, LtShape{.m = dot.n, .n = dot.m, .k = k}).BuildOwn(gemm));
  if (gemm.workspace_bytes > 0) {
    FP8_ASSIGN_OR_RETURN(
        plan.workspace, DeviceBuffer::Allocate(gemm.workspace_bytes, "own GEMM split-K workspace"));
    FP8_CUDA_RETURN_IF_ERROR(cudaMemset(plan.workspace.data(), 0, gemm.workspace_bytes),
                             plan.context);
  }
  CudaPlanInfo& info = plan.info;
  info.engine = OwnGemmDescription(gemm);
  info.k_split = {.slices = gemm.tile.k_splits, .tile = static_cast<int>(kScaleBlockSize)};
  info.native_fp8 = true;
  info.fast_accum = 0;
  info.fused_promotion = gemm.scaling != GemmScaling::kOuter;
  info.promotion_interval = gemm.promotion_blocks * static_cast<int>(kScaleBlockSize);
  info.compute_type = StrFormat("f32 registers, promoted every %d K", info.promotion_interval);
  info.fused_epilogue = true;
  info.k_padded = plan.lt.k;
  info.n_padded = plan.n_padded;
  info.algorithm = info.engine;
  return OkStatus();
}

Status BuildGemm(CudaDotPlan::Impl& plan, const TypePlan& types) {
  Status built = OkStatus();
  for (const LtShape& shape : CublasLtShapes(plan, types)) {
    built = PlanBuilder(plan, types, shape).Build();
    if (built.code() != StatusCode::kUnimplemented) break;
  }
  return built;
}

// ---- Run, step 1: buffer checks -----------------------------------------------------------------

// D goes straight into the caller's output: fused, and neither N nor M padded.
bool OutputInPlace(const CudaDotPlan::Impl& plan) {
  return plan.fused && plan.n_padded == plan.info.dot.n && plan.lt.n == plan.info.dot.m;
}

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

// The output and amax in memory of their own: D written over an operand, scale or bias that
// the GEMM still reads (or amax over any of them) is a silently wrong result. C may be D itself
// when it has D's type and row-major layout: an in-place update (cuBLASLt's C == D, or our
// epilogue reading each element before it writes it).
Status CheckOutputMemory(const CudaDotPlan::Impl& plan, const CudaDotBuffers& b) {
  const DotSpec& spec = plan.spec;
  const CanonicalDot& dot = plan.info.dot;
  auto bytes = [](const TensorSpec& t) { return ElementCount(t.dims) * DTypeSizeInBytes(t.dtype); };
  auto scale_bytes = [](const OperandScale& s) { return 4 * ElementCount(s.dims); };
  const int64_t output_bytes = dot.batch * dot.m * dot.n * DTypeSizeInBytes(spec.output_type);
  const bool c_in_place = spec.c && b.c == b.output && spec.c->dtype == spec.output_type &&
                          IsRowMajorLayout(spec.c->minor_to_major, spec.c->dims.size());
  const Status status = CheckOutputsHaveOwnMemory(
      "dot", {{"lhs", b.lhs, bytes(spec.lhs), false},
              {"rhs", b.rhs, bytes(spec.rhs), false},
              {"lhs scale", b.lhs_scale, scale_bytes(spec.lhs_scale), false},
              {"rhs scale", b.rhs_scale, scale_bytes(spec.rhs_scale), false},
              {"C", c_in_place ? nullptr : b.c, spec.c ? bytes(*spec.c) : 0, false},
              {"bias", b.bias, spec.bias ? bytes(*spec.bias) : 0, false},
              {"output scale", b.output_scale, 4, false},
              {"output", b.output, output_bytes, true},
              {"amax", b.amax, 4, true}});
  if (status.ok()) return status;
  return InvalidArgument("%s [%s]", status.message().c_str(), plan.context.c_str());
}

// Every buffer the spec needs is given (and no other), aligned as the plan reads it.
Status CheckBuffers(const CudaDotPlan::Impl& plan, const CudaDotBuffers& b) {
  const DotSpec& spec = plan.spec;
  const std::string& context = plan.context;
  FP8_RETURN_IF_ERROR(CheckPresence("lhs", b.lhs, true, context));
  FP8_RETURN_IF_ERROR(CheckPresence("rhs", b.rhs, true, context));
  FP8_RETURN_IF_ERROR(CheckPresence("output", b.output, true, context));
  FP8_RETURN_IF_ERROR(
      CheckPresence("lhs scale", b.lhs_scale, spec.lhs_scale.mode != ScaleMode::kNone, context));
  FP8_RETURN_IF_ERROR(
      CheckPresence("rhs scale", b.rhs_scale, spec.rhs_scale.mode != ScaleMode::kNone, context));
  FP8_RETURN_IF_ERROR(CheckPresence("C", b.c, spec.c.has_value(), context));
  FP8_RETURN_IF_ERROR(CheckPresence("bias", b.bias, spec.bias.has_value(), context));
  FP8_RETURN_IF_ERROR(CheckPresence("output scale", b.output_scale, spec.output_scale, context));
  FP8_RETURN_IF_ERROR(CheckPresence("amax", b.amax, spec.compute_amax, context));
  // Gathered tensors are read element by element; in-place ones by cuBLASLt.
  auto in_place_alignment = [](const PreparedTensor& t) -> uintptr_t {
    return t.gathered ? static_cast<uintptr_t>(DTypeSizeInBytes(t.source_type))
                      : static_cast<uintptr_t>(kAlignmentBytes);
  };
  FP8_RETURN_IF_ERROR(CheckAlignment("lhs", b.lhs, in_place_alignment(plan.lhs), context));
  FP8_RETURN_IF_ERROR(CheckAlignment("rhs", b.rhs, in_place_alignment(plan.rhs), context));
  if (plan.c.present) {
    FP8_RETURN_IF_ERROR(CheckAlignment("C", b.c, in_place_alignment(plan.c), context));
  }
  if (plan.bias.present) {
    FP8_RETURN_IF_ERROR(CheckAlignment("bias", b.bias, in_place_alignment(plan.bias), context));
  }
  FP8_RETURN_IF_ERROR(CheckAlignment(
      "output", b.output,
      OutputInPlace(plan) ? kAlignmentBytes : DTypeSizeInBytes(spec.output_type), context));
  FP8_RETURN_IF_ERROR(CheckAlignment("lhs scale", b.lhs_scale, 4, context));
  FP8_RETURN_IF_ERROR(CheckAlignment("rhs scale", b.rhs_scale, 4, context));
  FP8_RETURN_IF_ERROR(CheckAlignment("output scale", b.output_scale, 4, context));
  FP8_RETURN_IF_ERROR(CheckAlignment("amax", b.amax, 4, context));
  return CheckOutputMemory(plan, b);
}

// ---- Run, step 2: device copies -----------------------------------------------------------------

// Fills in the run's source pointers of a gathered tensor; false when `t` is read in place.
bool SetGatherSource(const CudaDotPlan::Impl& plan, PreparedTensor& t, const void* source,
                     const float* scale, const OperandScale& spec_scale, bool is_lhs) {
  if (!t.gathered) return false;
  t.gather.source = source;
  if (plan.scales_in_gather && IsBlockScale(spec_scale.mode)) {
    // Index of the scale of element (row, k): lhs [M, KB] or [M/128, KB]; rhs [KB, N] or
    // [KB, N/128], in the spec's scale layout.
    const bool block2d = spec_scale.mode == ScaleMode::kBlock128x128;
    const ScaleStrides strides = SourceScaleStrides(spec_scale, is_lhs);
    t.gather.scale = scale;
    t.gather.scale_row_block = block2d ? kScaleBlockSize : 1;
    t.gather.scale_row_stride = strides.row;
    t.gather.scale_block_stride = strides.block;
  }
  return true;
}

// Operands, C and bias gathered where the plan says so; scales reordered into cuBLASLt's layout.
Status EnqueueCopies(CudaDotPlan::Impl& plan, const CudaDotBuffers& b, cudaStream_t stream) {
  const DotSpec& spec = plan.spec;
  // The operands share one launch (same conversion and element size by construction).
  GatherParams operands[2];
  int operand_count = 0;
  if (SetGatherSource(plan, plan.lhs, b.lhs, b.lhs_scale, spec.lhs_scale, true)) {
    operands[operand_count++] = plan.lhs.gather;
  }
  if (SetGatherSource(plan, plan.rhs, b.rhs, b.rhs_scale, spec.rhs_scale, false)) {
    operands[operand_count++] = plan.rhs.gather;
  }
  FP8_RETURN_IF_ERROR(LaunchGathers(operands, operand_count, stream, plan.context));
  for (auto [t, user] : {std::pair{&plan.c, b.c}, std::pair{&plan.bias, b.bias}}) {
    if (t->present && SetGatherSource(plan, *t, user, nullptr, {}, false)) {
      FP8_RETURN_IF_ERROR(LaunchGather(t->gather, stream, plan.context));
    }
  }
  ScaleRelayoutParams relayouts[2];
  int relayout_count = 0;
  for (auto [prepared, user] :
       {std::pair{&plan.lhs_scale, b.lhs_scale}, std::pair{&plan.rhs_scale, b.rhs_scale}}) {
    if (!prepared->relayout) continue;
    prepared->params.source = user;
    relayouts[relayout_count++] = prepared->params;
  }
  return LaunchScaleRelayouts(relayouts, relayout_count, stream, plan.context);
}

// ---- Run, step 3: the GEMM ----------------------------------------------------------------------

// Returns where the GEMM wrote D (or S): the caller's output, or the plan's gemm_output.
StatusOr<void*> EnqueueGemm(CudaDotPlan::Impl& plan, const CudaDotBuffers& b, cudaStream_t stream) {
  const DotSpec& spec = plan.spec;
  if (plan.own) {
    BlockScaledGemmParams p = OwnGemmLaunchShape(*plan.own, plan.info.dot);
    p.lhs = plan.lhs.Resolve(b.lhs);
    p.rhs = plan.rhs.Resolve(b.rhs);
    p.lhs_type = plan.lhs.target_type;
    p.rhs_type = plan.rhs.target_type;
    p.lhs_row_bytes = plan.lhs.ld;  // FP8: one byte per element
    p.rhs_row_bytes = plan.rhs.ld;
    p.lhs_scale = plan.lhs_scale.Resolve(b.lhs_scale);
    p.rhs_scale = plan.rhs_scale.Resolve(b.rhs_scale);
    p.output = b.output;
    p.output_type = spec.output_type;
    p.workspace = plan.workspace.data();
    p.workspace_bytes = plan.workspace.size();
    FP8_RETURN_IF_ERROR(LaunchBlockScaledGemm(p, stream, plan.context));
    return b.output;
  }
  LtPointers pointers;
  if (plan.scales_in_gemm) {  // cuBLASLt's A is the rhs, its B the lhs
    pointers.a_scale = plan.rhs_scale.Resolve(b.rhs_scale);
    pointers.b_scale = plan.lhs_scale.Resolve(b.lhs_scale);
  }
  if (plan.fused) {
    pointers.d_scale = b.output_scale;
    pointers.amax_d = b.amax;
    pointers.bias = plan.bias.Resolve(b.bias);
  }
  FP8_RETURN_IF_ERROR(plan.gemm->SetPointers(pointers));
  void* d = OutputInPlace(plan) ? b.output : plan.gemm_output.data();
  const void* c = d;  // beta = 0: not read
  if (plan.fused && plan.c.present) c = plan.c.Resolve(b.c);
  if (plan.fused && !plan.c.present && IsFp8(spec.output_type)) c = nullptr;  // C type != D type
  const float alpha = plan.fused ? static_cast<float>(spec.alpha) : 1.0f;
  const float beta = plan.fused ? static_cast<float>(spec.beta) : 0.0f;
  FP8_RETURN_IF_ERROR(plan.gemm->Run(alpha, beta, plan.rhs.Resolve(b.rhs), plan.lhs.Resolve(b.lhs),
                                     c, d, plan.workspace.data(), plan.workspace.size(), stream));
  return d;
}

// ---- Run, step 4: back to the caller's D --------------------------------------------------------

// Fused with N padded: slice the padding off.
Status EnqueueSliceOfPaddedD(const CudaDotPlan::Impl& plan, const void* d, void* output,
                             cudaStream_t stream) {
  const CanonicalDot& dot = plan.info.dot;
  const size_t element = static_cast<size_t>(DTypeSizeInBytes(plan.spec.output_type));
  FP8_CUDA_RETURN_IF_ERROR(
      cudaMemcpy2DAsync(output, static_cast<size_t>(dot.n) * element, d,
                        static_cast<size_t>(plan.n_padded) * element,
                        static_cast<size_t>(dot.n) * element,
                        static_cast<size_t>(dot.batch * dot.m), cudaMemcpyDeviceToDevice, stream),
      plan.context);
  return OkStatus();
}

// Unfused: fp8dot's epilogue kernel turns S into D.
Status EnqueueEpilogue(const CudaDotPlan::Impl& plan, const CudaDotBuffers& b, const void* s,
                       cudaStream_t stream) {
  const DotSpec& spec = plan.spec;
  const CanonicalDot& dot = plan.info.dot;
  EpilogueParams e;
  e.s = static_cast<const float*>(s);
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
  e.activation = ActivationOf(spec.epilogue);
  e.out = b.output;
  e.out_type = spec.output_type;
  e.scale_d = b.output_scale;
  e.amax = b.amax;
  return LaunchEpilogue(e, stream, plan.context);
}

}  // namespace

StatusOr<GemmDevice> PlanGemmDevice(const CudaDotOptions& options) {
  FP8_ASSIGN_OR_RETURN(const CudaDeviceInfo device, QueryCudaDevice());
  GemmDevice gemm_device;
  gemm_device.sm_count = options.sm_count_target > 0
                             ? std::min(options.sm_count_target, device.multiprocessor_count)
                             : device.multiprocessor_count;
  gemm_device.dram_bytes_per_clock =
      DramBytesPerClock(device.memory_bytes_per_second, device.sm_clock_khz);
  return gemm_device;
}

}  // namespace cuda

CudaDotPlan::CudaDotPlan(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaDotPlan::~CudaDotPlan() = default;
const CudaPlanInfo& CudaDotPlan::info() const { return impl_->info; }
const DotSpec& CudaDotPlan::spec() const { return impl_->spec; }
std::string CudaDotPlan::Explain() const { return cuda::ExplainPlan(*impl_); }

StatusOr<std::unique_ptr<CudaDotPlan>> CudaDotPlan::Create(const DotSpec& spec,
                                                           const CudaDotOptions& options) {
  FP8_ASSIGN_OR_RETURN(CanonicalDot dot, ValidateDotSpec(spec));
  if (options.sm_count_target < 0) {
    return InvalidArgument("sm_count_target %d: the SMs a GEMM may use, at most (0: all of them)",
                           options.sm_count_target);
  }
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

  FP8_ASSIGN_OR_RETURN(const cuda::TypePlan types, cuda::ResolveTypes(spec, dot));
  plan.upcast = types.upcast;
  plan.scales_in_gather = types.scales_in_gather;
  plan.compute_note = types.compute.note;
  CudaPlanInfo& info = plan.info;
  const bool tunes_own_tile = options.engine == GemmEngine::kOwn && options.own_tile.empty();
  if ((options.engine == GemmEngine::kAuto || tunes_own_tile) && options.autotune_candidates > 1 &&
      cuda::OwnGemmRejection(spec, dot).empty()) {
    // The own kernel can run it and the user asked for tuning: time the candidates (kAuto: both
    // engines; kOwn: the kernel's tiles) rather than trust the static rules, which decide only
    // who must be beaten.
    FP8_ASSIGN_OR_RETURN(const cuda::GemmDevice device, cuda::PlanGemmDevice(options));
    const bool own_first = tunes_own_tile || cuda::OwnGemmIsFaster(spec, dot, device);
    FP8_ASSIGN_OR_RETURN(cuda::EngineRace race,
                         cuda::RaceEngines(spec, dot, options, own_first, plan.context));
    Impl& won = *race.plan->impl_;
    won.options.engine = options.engine;
    AutotuneSummary& summary = won.info.autotune;
    summary.ran = true;
    summary.engines_raced = race.raced;
    summary.own_ms = race.own_ms;
    summary.cublaslt_ms = race.cublaslt_ms;
    won.engine_reason = std::move(race.reason);
    return std::move(race.plan);
  }
  FP8_ASSIGN_OR_RETURN(const bool own, cuda::ChooseOwnEngine(plan, dot));
  if (own) {
    if (options.engine == GemmEngine::kAuto) {
      plan.engine_reason = "auto: the own kernel measured faster than cuBLASLt on dots like this";
    }
    FP8_RETURN_IF_ERROR(cuda::BuildOwnPlan(plan, types));
    return std::unique_ptr<CudaDotPlan>(new CudaDotPlan(std::move(impl)));
  }
  FP8_ASSIGN_OR_RETURN(plan.workspace,
                       DeviceBuffer::Allocate(options.workspace_bytes, "cuBLASLt workspace"));
  const Status cublaslt = cuda::BuildGemm(plan, types);
  // kAuto: where cuBLASLt has no kernel, the own kernel may have one (it takes any M, N, K).
  if (cublaslt.code() == StatusCode::kUnimplemented && options.engine == GemmEngine::kAuto &&
      cuda::OwnGemmRejection(spec, dot).empty()) {
    plan.workspace = DeviceBuffer();
    FP8_RETURN_IF_ERROR(cuda::BuildOwnPlan(plan, types));
    plan.engine_reason = "auto: cuBLASLt has no kernel for this dot (" + cublaslt.message() + ")";
    return std::unique_ptr<CudaDotPlan>(new CudaDotPlan(std::move(impl)));
  }
  FP8_RETURN_IF_ERROR(cublaslt);
  info.engine = "cuBLASLt";
  if (types.native) {
    FP8_ASSIGN_OR_RETURN(info.fast_accum, plan.gemm->ReadFastAccum());
  }
  if (options.autotune_candidates > 1) FP8_RETURN_IF_ERROR(cuda::Autotune(plan));

  info.native_fp8 = types.native;
  info.compute_type = cuda::ComputeTypeName(types.compute.type);
  info.fused_epilogue = plan.fused;
  info.k_padded = plan.lt.k;
  info.n_padded = plan.n_padded;
  info.algorithm = plan.gemm->AlgorithmDescription(plan.gemm->chosen());
  info.k_split = plan.gemm->CandidateKSplit(plan.gemm->chosen());
  return std::unique_ptr<CudaDotPlan>(new CudaDotPlan(std::move(impl)));
}

namespace {

// Whether a run writes device memory of the plan's own (converted or padded operands, relaid
// scales, the unfused or padded D, cuBLASLt's or split-K's workspace), which every run shares:
// only then must runs on different streams be ordered. A fused cuBLASLt call on the caller's
// buffers whose algorithm takes no workspace (the common plan) skips the ordering's driver
// calls (measured with two of them: 0.3-1.5 us of host time a run, H100, 2026-12-06).
bool RunsWritePlanMemory(const CudaDotPlan::Impl& plan) {
  for (const DeviceBuffer* buffer :
       {&plan.gemm_output, &plan.lhs.copy, &plan.rhs.copy, &plan.c.copy, &plan.bias.copy,
        &plan.lhs_scale.copy, &plan.rhs_scale.copy}) {
    if (buffer->size() > 0) return true;
  }
  if (plan.own) return plan.own->workspace_bytes > 0;
  return plan.gemm != nullptr && plan.gemm->RunWorkspaceBytes() > 0;
}

// Every launch of one run, on `stream`.
Status EnqueueRun(CudaDotPlan::Impl& plan, const CudaDotBuffers& buffers, cudaStream_t stream) {
  // amax is a running max in both cuBLASLt and our epilogue: start from 0.
  if (buffers.amax != nullptr) {
    FP8_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(buffers.amax, 0, sizeof(float), stream), plan.context);
  }
  FP8_RETURN_IF_ERROR(cuda::EnqueueCopies(plan, buffers, stream));
  FP8_ASSIGN_OR_RETURN(void* d, cuda::EnqueueGemm(plan, buffers, stream));
  if (!plan.fused) return cuda::EnqueueEpilogue(plan, buffers, d, stream);
  if (!cuda::OutputInPlace(plan)) {
    return cuda::EnqueueSliceOfPaddedD(plan, d, buffers.output, stream);
  }
  return OkStatus();
}

}  // namespace

Status CudaDotPlan::Run(const CudaDotBuffers& buffers, CudaStream stream) {
  Impl& plan = *impl_;
  FP8_RETURN_IF_ERROR(cuda::CheckBuffers(plan, buffers));
  std::lock_guard<std::mutex> lock(plan.run_mutex);
  if (!RunsWritePlanMemory(plan)) return EnqueueRun(plan, buffers, stream);
  FP8_RETURN_IF_ERROR(plan.stream_handoff.Enter(stream, plan.context));
  const Status enqueued = EnqueueRun(plan, buffers, stream);
  // Recorded even after a failed launch: what did reach the stream still uses the plan's memory.
  const Status recorded = plan.stream_handoff.Leave(stream, plan.context);
  return enqueued.ok() ? recorded : enqueued;
}

}  // namespace fp8dot
