// Fp8SliceGemm (see fp8_slice_gemm.h): CUTLASS 3 Hopper kernels (TMA loads, warp-specialised
// wgmma), one per tile shape and accumulation mode, batched over the K slices.
//
// Constraints (checked by SliceGemmRejection): e4m3 x e4m3; K a multiple of slices * 128, so
// every slice is whole 128-K tiles (the emulation's KSplit{slices, 128}); pointers 16-byte
// aligned and K a multiple of 16 (TMA).
#include "cuda/kernels/fp8_slice_gemm.h"

#include <cutlass/cutlass.h>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/kernel_hardware_info.h>
#include <cute/tensor.hpp>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/kernel/gemm_universal.hpp>

#include "cuda/cuda_status.h"

namespace fp8dot::cuda {
namespace {

constexpr int64_t kTileK = 128;
constexpr int kMaxSlices = 64;

// One CUTLASS GEMM: A (M x K_slice, row-major) . B (N x K_slice, K contiguous) -> D (f32,
// row-major), batched over the slices. The epilogue is D = 1 * accumulator: exact.
template <class TileShape, class MainloopSchedule, class EpilogueSchedule>
struct SliceGemmKernel {
  using Element = cutlass::float_e4m3_t;
  static constexpr int kOperandAlignment = 16;  // elements (16 bytes: TMA's minimum)
  static constexpr int kOutputAlignment = 4;    // f32 elements
  using ClusterShape = cute::Shape<cute::_1, cute::_1, cute::_1>;

  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float,  //
      void, cutlass::layout::RowMajor, kOutputAlignment,              // no C
      float, cutlass::layout::RowMajor, kOutputAlignment,             // D
      EpilogueSchedule>::CollectiveOp;

  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,       //
      Element, cutlass::layout::RowMajor, kOperandAlignment,     // A: K contiguous
      Element, cutlass::layout::ColumnMajor, kOperandAlignment,  // B: K contiguous
      float, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
          sizeof(typename Epilogue::SharedStorage))>,
      MainloopSchedule>::CollectiveOp;

  using Kernel =
      cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop, Epilogue>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
};

using Tile64x128 = cute::Shape<cute::_64, cute::_128, cute::_128>;
using Tile128x128 = cute::Shape<cute::_128, cute::_128, cute::_128>;

// 64-row tiles: ping-pong (two consumer warp groups on alternate tiles, one's epilogue hidden
// behind the other's mainloop). 128-row tiles: cooperative (both warp groups on one tile).
using Fast64 =
    SliceGemmKernel<Tile64x128, cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8FastAccum,
                    cutlass::epilogue::TmaWarpSpecialized>;
using Promoted64 = SliceGemmKernel<Tile64x128, cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                                   cutlass::epilogue::TmaWarpSpecialized>;
using Fast128 =
    SliceGemmKernel<Tile128x128, cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8FastAccum,
                    cutlass::epilogue::TmaWarpSpecializedCooperative>;
using Promoted128 = SliceGemmKernel<Tile128x128, cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                                    cutlass::epilogue::TmaWarpSpecializedCooperative>;

Status CutlassStatus(cutlass::Status status, const char* what, const std::string& context) {
  return Internal("%s: CUTLASS %s [%s]", what, cutlassGetStatusString(status), context.c_str());
}

template <class KernelConfig>
class SliceGemm final : public Fp8SliceGemm {
  using Gemm = typename KernelConfig::Gemm;
  using Kernel = typename KernelConfig::Kernel;

 public:
  SliceGemm(const SliceGemmConfig& config, const std::string& context, int sm_count)
      : Fp8SliceGemm(config), context_(context), sm_count_(sm_count) {}

  typename Gemm::Arguments Arguments(const void* a, const void* b, float* partials) const {
    const int64_t k_slice = config_.k / config_.slices;
    typename Kernel::StrideA stride_a = cute::make_stride(config_.k, cute::Int<1>{}, k_slice);
    typename Kernel::StrideB stride_b = cute::make_stride(config_.k, cute::Int<1>{}, k_slice);
    typename Kernel::StrideD stride_d =
        cute::make_stride(config_.n, cute::Int<1>{}, config_.m * config_.n);
    cutlass::KernelHardwareInfo hardware;
    cudaGetDevice(&hardware.device_id);
    hardware.sm_count = sm_count_;
    typename Gemm::Arguments arguments{
        cutlass::gemm::GemmUniversalMode::kGemm,
        {static_cast<int>(config_.m), static_cast<int>(config_.n), static_cast<int>(k_slice),
         config_.slices},
        {static_cast<const typename KernelConfig::Element*>(a), stride_a,
         static_cast<const typename KernelConfig::Element*>(b), stride_b},
        {{}, nullptr, stride_d, partials, stride_d},
        hardware};
    arguments.epilogue.thread.alpha = 1.0f;
    arguments.epilogue.thread.beta = 0.0f;
    return arguments;
  }

  Status CheckImplementable() {
    const auto arguments = Arguments(nullptr, nullptr, nullptr);
    const cutlass::Status status = Gemm::can_implement(arguments);
    if (status != cutlass::Status::kSuccess) {
      return CutlassStatus(status, "fp8 slice GEMM cannot run this problem", context_);
    }
    if (Gemm::get_workspace_size(arguments) != 0) {
      return Internal("fp8 slice GEMM unexpectedly needs a workspace [%s]", context_.c_str());
    }
    return OkStatus();
  }

  Status Run(const void* a, const void* b, float* partials, cudaStream_t stream) override {
    if (a != a_ || b != b_ || partials != partials_) {
      // Encodes the TMA descriptors on the host and sets the kernel's shared-memory limit.
      const cutlass::Status status =
          gemm_.initialize(Arguments(a, b, partials), /*workspace=*/nullptr, stream);
      if (status != cutlass::Status::kSuccess) {
        a_ = b_ = partials_ = nullptr;
        return CutlassStatus(status, "fp8 slice GEMM initialize", context_);
      }
      a_ = a, b_ = b, partials_ = partials;
    }
    const cutlass::Status status = gemm_.run(stream);
    FP8_CUDA_RETURN_IF_LAUNCH_FAILED("fp8 slice GEMM", context_);
    if (status != cutlass::Status::kSuccess) {
      return CutlassStatus(status, "fp8 slice GEMM launch", context_);
    }
    return OkStatus();
  }

 private:
  Gemm gemm_;
  std::string context_;
  int sm_count_;
  const void* a_ = nullptr;
  const void* b_ = nullptr;
  const float* partials_ = nullptr;
};

template <class KernelConfig>
StatusOr<std::unique_ptr<Fp8SliceGemm>> Make(const SliceGemmConfig& config,
                                             const std::string& context, int sm_count) {
  auto gemm = std::make_unique<SliceGemm<KernelConfig>>(config, context, sm_count);
  FP8_RETURN_IF_ERROR(gemm->CheckImplementable());
  return std::unique_ptr<Fp8SliceGemm>(std::move(gemm));
}

}  // namespace

const char* SliceGemmTileName(SliceGemmTile tile) {
  return tile == SliceGemmTile::k64x128 ? "64x128x128" : "128x128x128";
}

std::string SliceGemmRejection(const SliceGemmConfig& config) {
  if (config.lhs_type != DType::kF8E4M3FN || config.rhs_type != DType::kF8E4M3FN) {
    return std::string("operand types ") + DTypeName(config.lhs_type) + " x " +
           DTypeName(config.rhs_type) + " (the slice GEMM is built for f8e4m3fn x f8e4m3fn)";
  }
  if (config.m <= 0 || config.n <= 0 || config.k <= 0) return "an empty problem";
  if (config.m > INT32_MAX || config.n > INT32_MAX || config.k > INT32_MAX) {
    return "a dimension over 2^31 - 1";
  }
  if (config.slices < 1 || config.slices > kMaxSlices) {
    return "slices " + std::to_string(config.slices) + " outside 1.." + std::to_string(kMaxSlices);
  }
  if (config.k % (config.slices * kTileK) != 0) {
    return "K = " + std::to_string(config.k) + " is not a multiple of slices (" +
           std::to_string(config.slices) + ") x 128";
  }
  if (config.n % 4 != 0) return "N not a multiple of 4 (16-byte aligned f32 partial rows)";
  return "";
}

StatusOr<std::unique_ptr<Fp8SliceGemm>> Fp8SliceGemm::Create(const SliceGemmConfig& config,
                                                             const std::string& context) {
  if (const std::string why = SliceGemmRejection(config); !why.empty()) {
    return InvalidArgument("fp8 slice GEMM: %s [%s]", why.c_str(), context.c_str());
  }
  int device = 0;
  FP8_CUDA_RETURN_IF_ERROR(cudaGetDevice(&device), context);
  int sm_count = 0;
  FP8_CUDA_RETURN_IF_ERROR(
      cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device), context);
  const bool wide = config.tile == SliceGemmTile::k128x128;
  if (config.fast_accumulation) {
    return wide ? Make<Fast128>(config, context, sm_count)
                : Make<Fast64>(config, context, sm_count);
  }
  return wide ? Make<Promoted128>(config, context, sm_count)
              : Make<Promoted64>(config, context, sm_count);
}

}  // namespace fp8dot::cuda
