// GPU benchmark: TFLOP/s of fp8dot's CUDA plans against cuBLASLt called directly with the same
// settings (a minimal hand-written cublasLtMatmul loop below), over the shape suite.
//
//   gpu_bench [shapes.txt] [--csv out.csv] [--quick] [--configs NAME,NAME,...]
//             [--own-tiles TILE,TILE,...]   (the own-kernel config once per tile, e.g. 256x128c2)
//             [--sustain SECONDS]   (also run each side alone for SECONDS: energy per call, clock)
// (--help lists them). An unknown flag or config name, a value out of range or a malformed shape
// line stops it with a message before it looks for a GPU.
//
// Per shape and configuration (bf16; FP8 fast and promoted, each also autotuned over the
// heuristic's top 8; per-row/column scales; 1x128 blocks; the 1x128 x 128x128 recipe;
// e4m3 x e5m2): D = bf16, A row-major [M,K], B column-major [K,N] (the TN layout, read in
// place). The block-scale configs hand fp8dot its scales in cuBLASLt's own layout
// (OperandScale::minor_to_major: lhs 1x128 M-major {0,1}, rhs 128x128 {0,1}), as the direct
// call gets them; the "row-major" variants use fp8dot's default row-major scales, which it
// reorders on the device at every run.
// "cuBLASLt direct" always takes the heuristic's first algorithm, on inputs already padded the
// way cuBLASLt needs them (K to 16 bytes, N to 16 for FP8) and scales already in its layout;
// fp8dot's time includes any padding, transposes and scale reordering it does. For shapes that
// need padding, two more baselines: the direct call with cuBLASLt's m unpadded (the GEMM
// fp8dot runs), and the direct call preceded by the padding a user would do (one
// cudaMemcpy2DAsync per operand into zero-padded buffers). "launches" counts the nodes of one
// plan run captured in a CUDA graph (kernels, copies, memsets; the direct call is 1).
// Timing: CUDA events around batches of back-to-back calls (~20 ms each) after warm-up. fp8dot
// and the direct call are timed in interleaved batches (A B B A ..., 12 each, median of each),
// so both see the same clocks; other baselines take the median of 5 batches of their own;
// inputs rotate among several copies when one set fits in L2. For M <= 128, and for calls of
// under 4 GFLOP (1000^3: a few microseconds, where a loop of calls times the host and the
// process as much as the GPU), the plan is also timed as a replayed CUDA graph of 20 calls.
// 2*M*N*K flops per call.
// --sustain: at the power limit the clock, hence the speed, follows each kernel's energy per
// call, and interleaved batches average the two kernels' clocks. So each side also runs alone
// in phases of back-to-back batches (A B B A, SECONDS/2 each), and a table at the end gives per
// side the time and energy (NVML's counter) per call, the mean SM clock while a batch runs and
// the share of those samples the power limit held down.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/memory_floor.h"
#include "bench/power_meter.h"
#include "cuda/captured_graph.h"
#include "cuda/kernels/fill_random.h"
#include "cuda/lt_matmul.h"
#include "cuda/streaming_copies.h"
#include "fp8dot/arithmetic.h"
#include "fp8dot/cuda_backend.h"
#include "fp8dot/cuda_buffer.h"
#include "fp8dot/cuda_device.h"

namespace fp8dot {
namespace {

constexpr int kWarmupCalls = 3;
constexpr int kBatches = 5;
constexpr double kTargetBatchMs = 20.0;
constexpr int kGraphCalls = 20;
constexpr int kInterleavedBatches = 12;  // per side, fp8dot vs the direct call
constexpr int kInterleavedWarmupBatches = 3;
constexpr size_t kWorkspaceBytes = size_t{32} << 20;

#define BENCH_CUDA(call)                                                                      \
  do {                                                                                        \
    cudaError_t bench_error_ = (call);                                                        \
    if (bench_error_ != cudaSuccess) {                                                        \
      return Internal("%s: %s (line %d)", #call, cudaGetErrorString(bench_error_), __LINE__); \
    }                                                                                         \
  } while (0)
#define BENCH_CUBLAS(call)                                                                        \
  do {                                                                                            \
    cublasStatus_t bench_status_ = (call);                                                        \
    if (bench_status_ != CUBLAS_STATUS_SUCCESS) {                                                 \
      return Internal("%s: %s (line %d)", #call, cublasLtGetStatusName(bench_status_), __LINE__); \
    }                                                                                             \
  } while (0)

struct Shape {
  int64_t m, n, k;
};

struct Config {
  const char* name;
  DType lhs, rhs;
  bool fast;  // DEFAULT precision (fast accumulation for FP8) vs HIGHEST (promoted)
  ScaleMode lhs_scale = ScaleMode::kTensor, rhs_scale = ScaleMode::kTensor;
  int autotune = 0;  // CudaDotOptions::autotune_candidates
  // OperandScale::minor_to_major of the scales fp8dot is given (empty: row-major).
  std::vector<int64_t> lhs_scale_layout = {}, rhs_scale_layout = {};
  GemmEngine engine = GemmEngine::kAuto;  // CudaDotOptions::engine
  std::string own_tile = "";              // CudaDotOptions::own_tile
  int own_promotion_interval = 0;         // CudaDotOptions::own_promotion_interval
  // The direct call accumulates fast although fp8dot promotes: #15's target, promoted
  // accumulation at the speed of fast accumulation.
  bool direct_fast = false;
  DType output = DType::kBF16;  // D's type (the model's weight gradients are f32)
};

// cuBLASLt's own layouts: lhs 1x128 [M, K/128] M-major; rhs 128x128 [K/128, N/128] with K/128
// contiguous (in place when K/128 % 4 == 0). rhs 1x128 [K/128, N] is already row-major.
const std::vector<int64_t> kCublasLtOrder = {0, 1};

constexpr DType kE4M3 = DType::kF8E4M3FN;
constexpr DType kE5M2 = DType::kF8E5M2;
constexpr ScaleMode k1x128 = ScaleMode::kBlock1x128;
constexpr ScaleMode k128x128 = ScaleMode::kBlock128x128;

// Tensor scales unless a config names others.
const Config kConfigs[] = {
    {.name = "bf16",
     .lhs = DType::kBF16,
     .rhs = DType::kBF16,
     .fast = true,
     .lhs_scale = ScaleMode::kNone,
     .rhs_scale = ScaleMode::kNone},
    {.name = "fp8 fast", .lhs = kE4M3, .rhs = kE4M3, .fast = true},
    {.name = "fp8 fast tuned", .lhs = kE4M3, .rhs = kE4M3, .fast = true, .autotune = 8},
    {.name = "fp8 promoted", .lhs = kE4M3, .rhs = kE4M3, .fast = false},
    {.name = "fp8 promoted tuned", .lhs = kE4M3, .rhs = kE4M3, .fast = false, .autotune = 8},
    {.name = "row/col scales",
     .lhs = kE4M3,
     .rhs = kE4M3,
     .fast = false,
     .lhs_scale = ScaleMode::kOuterVector,
     .rhs_scale = ScaleMode::kOuterVector},
    {.name = "1x128 blocks",
     .lhs = kE4M3,
     .rhs = kE4M3,
     .fast = false,
     .lhs_scale = k1x128,
     .rhs_scale = k1x128,
     .lhs_scale_layout = kCublasLtOrder},
    {.name = "1x128 row-major",
     .lhs = kE4M3,
     .rhs = kE4M3,
     .fast = false,
     .lhs_scale = k1x128,
     .rhs_scale = k1x128},
    {.name = "1x128 x 128x128",
     .lhs = kE4M3,
     .rhs = kE4M3,
     .fast = false,
     .lhs_scale = k1x128,
     .rhs_scale = k128x128,
     .lhs_scale_layout = kCublasLtOrder,
     .rhs_scale_layout = kCublasLtOrder},
    {.name = "1x128 x 128x128 row-major",
     .lhs = kE4M3,
     .rhs = kE4M3,
     .fast = false,
     .lhs_scale = k1x128,
     .rhs_scale = k128x128},
    // fp8dot's own kernel, against cuBLASLt given the same scales in its own layout.
    {.name = "1x128 x 128x128 own",
     .lhs = kE4M3,
     .rhs = kE4M3,
     .fast = false,
     .lhs_scale = k1x128,
     .rhs_scale = k128x128,
     .lhs_scale_layout = kCublasLtOrder,
     .rhs_scale_layout = kCublasLtOrder,
     .engine = GemmEngine::kOwn},
    // The own kernel with rhs 1x128 (the weight-gradient GEMM's scales).
    {.name = "1x128 blocks own",
     .lhs = kE4M3,
     .rhs = kE4M3,
     .fast = false,
     .lhs_scale = k1x128,
     .rhs_scale = k1x128,
     .lhs_scale_layout = kCublasLtOrder,
     .engine = GemmEngine::kOwn},
    // The own kernel with tensor scales, promoted every 128 K (cuBLASLt's interval) and every
    // 1024 (a point between promoted and fast accumulation).
    {.name = "fp8 promoted own",
     .lhs = kE4M3,
     .rhs = kE4M3,
     .fast = false,
     .engine = GemmEngine::kOwn},
    {.name = "fp8 promoted own i1024",
     .lhs = kE4M3,
     .rhs = kE4M3,
     .fast = false,
     .engine = GemmEngine::kOwn,
     .own_promotion_interval = 1024},
    // The same every 128 against cuBLASLt's fast accumulation (the direct call's).
    {.name = "fp8 promoted own vs fast",
     .lhs = kE4M3,
     .rhs = kE4M3,
     .fast = false,
     .engine = GemmEngine::kOwn,
     .direct_fast = true},
    // Promoted every 128 as a tuned plan runs it (cuBLASLt and the own kernel's candidate tiles
    // raced), against cuBLASLt's fast accumulation: what HIGHEST costs a user who tunes (#15).
    {.name = "fp8 promoted tuned vs fast",
     .lhs = kE4M3,
     .rhs = kE4M3,
     .fast = false,
     .autotune = 8,
     .direct_fast = true},
    // The engine the plan picks when asked to tune: both engines raced on the dot.
    {.name = "1x128 x 128x128 auto tuned",
     .lhs = kE4M3,
     .rhs = kE4M3,
     .fast = false,
     .lhs_scale = k1x128,
     .rhs_scale = k128x128,
     .autotune = 8,
     .lhs_scale_layout = kCublasLtOrder,
     .rhs_scale_layout = kCublasLtOrder},
    {.name = "e4m3 x e5m2 fast", .lhs = kE4M3, .rhs = kE5M2, .fast = true},
    // The seed rule's gradient GEMMs: an e5m2 gradient (lhs) times e4m3, promoted. The plan's
    // engine, and the own kernel, against cuBLASLt's promoted GEMM of the same types; then the
    // same with f32 D (wgrad into f32 master weights' gradients).
    {.name = "e5m2 x e4m3 promoted", .lhs = kE5M2, .rhs = kE4M3, .fast = false},
    {.name = "e5m2 x e4m3 promoted own",
     .lhs = kE5M2,
     .rhs = kE4M3,
     .fast = false,
     .engine = GemmEngine::kOwn},
    {.name = "e5m2 x e4m3 promoted f32",
     .lhs = kE5M2,
     .rhs = kE4M3,
     .fast = false,
     .output = DType::kF32},
    {.name = "e5m2 x e4m3 promoted own f32",
     .lhs = kE5M2,
     .rhs = kE4M3,
     .fast = false,
     .engine = GemmEngine::kOwn,
     .output = DType::kF32},
};

StatusOr<std::vector<Shape>> ReadShapes(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot open %s", path.c_str());
  std::vector<Shape> shapes;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t") == std::string::npos || line[0] == '#') continue;
    std::istringstream fields(line);
    Shape s{};
    std::string rest;
    if (!(fields >> s.m >> s.n >> s.k) || fields >> rest || s.m <= 0 || s.n <= 0 || s.k <= 0) {
      return InvalidArgument("%s:%d: expected three positive integers M N K, got '%s'",
                             path.c_str(), number, line.c_str());
    }
    shapes.push_back(s);
  }
  if (shapes.empty()) return InvalidArgument("%s holds no shape (M N K lines)", path.c_str());
  return shapes;
}

DotSpec MakeSpec(const Shape& s, const Config& c) {
  DotSpec spec;
  spec.lhs = {c.lhs, {s.m, s.k}, {}};
  spec.rhs = {c.rhs, {s.k, s.n}, {0, 1}};  // column-major B: K contiguous (TN)
  spec.output_type = c.output;
  if (!c.fast) spec.precision_config.operand_precision = {Precision::kHighest, Precision::kHighest};
  CanonicalDot dot;
  dot.m = s.m;
  dot.n = s.n;
  dot.k = s.k;
  spec.lhs_scale = {c.lhs_scale, ExpectedScaleDims(c.lhs_scale, true, dot), c.lhs_scale_layout};
  spec.rhs_scale = {c.rhs_scale, ExpectedScaleDims(c.rhs_scale, false, dot), c.rhs_scale_layout};
  return spec;
}

// ---- Timing ----------------------------------------------------------------------------------

// A batch's pair of CUDA events, created when first recorded.
struct BatchEvents {
  cudaEvent_t start = nullptr, stop = nullptr;
  BatchEvents() = default;
  ~BatchEvents() {
    if (start != nullptr) cudaEventDestroy(start);
    if (stop != nullptr) cudaEventDestroy(stop);
  }
  BatchEvents(const BatchEvents&) = delete;
  BatchEvents& operator=(const BatchEvents&) = delete;
};

// Times batches of back-to-back calls on a stream with CUDA events. call(i) gets a count of all
// calls so far (for rotating inputs).
class BatchTimer {
 public:
  explicit BatchTimer(cudaStream_t stream) : stream_(stream) {}

  // Milliseconds per call over `calls` back-to-back calls.
  template <typename Call>
  StatusOr<double> Batch(const Call& call, int calls) {
    FP8_RETURN_IF_ERROR(Enqueue(call, calls, events_));
    FP8_ASSIGN_OR_RETURN(const double ms, WaitMs(events_));
    return ms / calls;
  }

  // Enqueues `calls` back-to-back calls between `events`, without waiting (--sustain keeps two
  // batches queued).
  template <typename Call>
  Status Enqueue(const Call& call, int calls, BatchEvents& events) {
    if (events.start == nullptr) BENCH_CUDA(cudaEventCreate(&events.start));
    if (events.stop == nullptr) BENCH_CUDA(cudaEventCreate(&events.stop));
    BENCH_CUDA(cudaEventRecord(events.start, stream_));
    for (int i = 0; i < calls; ++i) FP8_RETURN_IF_ERROR(call(counter_++));
    BENCH_CUDA(cudaEventRecord(events.stop, stream_));
    return OkStatus();
  }

  // Waits for an enqueued batch: its milliseconds.
  StatusOr<double> WaitMs(const BatchEvents& events) {
    BENCH_CUDA(cudaEventSynchronize(events.stop));
    float ms = 0;
    BENCH_CUDA(cudaEventElapsedTime(&ms, events.start, events.stop));
    return static_cast<double>(ms);
  }

  // Warms `call` up and returns how many calls make a batch of about kTargetBatchMs.
  template <typename Call>
  StatusOr<int> CallsPerBatch(const Call& call) {
    FP8_RETURN_IF_ERROR(Batch(call, kWarmupCalls).status());
    FP8_ASSIGN_OR_RETURN(double estimate, Batch(call, 3));
    return std::clamp(static_cast<int>(kTargetBatchMs / std::max(estimate, 1e-4)), 5, 500);
  }

 private:
  cudaStream_t stream_;
  BatchEvents events_;
  int counter_ = 0;
};

// Median milliseconds per call of call(i), over kBatches batches.
template <typename Call>
StatusOr<double> TimeCalls(cudaStream_t stream, const Call& call) {
  BatchTimer timer(stream);
  FP8_ASSIGN_OR_RETURN(const int calls, timer.CallsPerBatch(call));
  std::vector<double> times;
  for (int b = 0; b < kBatches; ++b) {
    FP8_ASSIGN_OR_RETURN(double t, timer.Batch(call, calls));
    times.push_back(t);
  }
  return Median(times);
}

// Median milliseconds per call of call_a(i) and of call_b(i), timed in interleaved batches
// (A B B A A B ...) after a shared warm-up, so that both see the same clocks.
// NOTE: at the H200's power limit the clocks drift by several percent within a second; timed one
// after the other, the same cuBLASLt kernel measured 0.91-1.18x itself (2026-11-30, 0180e40).
template <typename CallA, typename CallB>
StatusOr<std::pair<double, double>> TimeInterleaved(cudaStream_t stream, const CallA& call_a,
                                                    const CallB& call_b) {
  BatchTimer timer(stream);
  FP8_RETURN_IF_ERROR(timer.Batch(call_b, kWarmupCalls).status());
  FP8_ASSIGN_OR_RETURN(const int calls, timer.CallsPerBatch(call_a));
  for (int w = 0; w < kInterleavedWarmupBatches; ++w) {
    FP8_RETURN_IF_ERROR(timer.Batch(call_a, calls).status());
    FP8_RETURN_IF_ERROR(timer.Batch(call_b, calls).status());
  }
  std::vector<double> a_times, b_times;
  for (int b = 0; b < kInterleavedBatches; ++b) {
    const bool a_first = b % 4 == 0 || b % 4 == 3;  // A B B A: linear drift cancels
    for (int half = 0; half < 2; ++half) {
      if ((half == 0) == a_first) {
        FP8_ASSIGN_OR_RETURN(double t, timer.Batch(call_a, calls));
        a_times.push_back(t);
      } else {
        FP8_ASSIGN_OR_RETURN(double t, timer.Batch(call_b, calls));
        b_times.push_back(t);
      }
    }
  }
  return std::make_pair(Median(a_times), Median(b_times));
}

// Milliseconds per call of call(i) from replays of a CUDA graph of kGraphCalls calls.
template <typename Call>
StatusOr<double> TimeGraph(cudaStream_t stream, const Call& call) {
  FP8_ASSIGN_OR_RETURN(cuda::CapturedGraph graph,
                       cuda::CapturedGraph::Capture(stream, kGraphCalls, call, "gpu_bench"));
  FP8_ASSIGN_OR_RETURN(double per_replay,
                       TimeCalls(stream, [&](int) { return graph.Replay(stream, "gpu_bench"); }));
  return per_replay / kGraphCalls;
}

// Nodes (kernels, copies, memsets) one call enqueues, read from a CUDA graph capture of it.
template <typename Call>
StatusOr<size_t> CountLaunches(cudaStream_t stream, const Call& call) {
  cudaGraph_t graph = nullptr;
  BENCH_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  Status captured = call(0);
  BENCH_CUDA(cudaStreamEndCapture(stream, &graph));
  FP8_RETURN_IF_ERROR(captured);
  size_t nodes = 0;
  BENCH_CUDA(cudaGraphGetNodes(graph, nullptr, &nodes));
  cudaGraphDestroy(graph);
  return nodes;
}

// One side of a --sustain run: its calls alone, back to back, in phases.
struct SustainedSide {
  int64_t calls = 0;
  double ms = 0;                      // CUDA-event time of those calls
  double wall_ms = 0;                 // the phases' host time (the GPU busy throughout)
  double energy_mj = 0;               // NVML's counter over the phases
  double clock_sum_mhz = 0;           // SM-clock samples while a batch runs
  int batches = 0, power_capped = 0;  // those samples, and those the power limit held down

  double MsPerCall() const { return ms / static_cast<double>(calls); }
  double EnergyPerCallMj() const { return energy_mj / static_cast<double>(calls); }
  double MeanClockMhz() const { return clock_sum_mhz / batches; }
  double MeanWatts() const { return energy_mj / wall_ms; }
};

// --sustain: call_a and call_b each alone, in phases A B B A of `seconds` / 2. A phase keeps
// two batches queued, so that the GPU never waits for the host: the meter is read around the
// phase (energy) and, while the next batch runs, after each batch (clock, power cap).
template <typename CallA, typename CallB>
StatusOr<std::pair<SustainedSide, SustainedSide>> TimeSustained(cudaStream_t stream,
                                                                bench::PowerMeter& meter,
                                                                double seconds, const CallA& call_a,
                                                                const CallB& call_b) {
  BatchTimer timer(stream);  // warms each up, sizes its batches and rotates the inputs
  FP8_ASSIGN_OR_RETURN(const int calls_a, timer.CallsPerBatch(call_a));
  FP8_ASSIGN_OR_RETURN(const int calls_b, timer.CallsPerBatch(call_b));
  BatchEvents events[2];
  std::pair<SustainedSide, SustainedSide> sides;
  auto phase = [&](const auto& call, int calls, SustainedSide& side) -> Status {
    bench::PowerSample start, now;
    BENCH_CUDA(cudaStreamSynchronize(stream));
    if (!meter.Sample(start)) return Internal("power meter: %s", meter.error().c_str());
    const auto begin = std::chrono::steady_clock::now();
    auto elapsed_ms = [&] {
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin)
          .count();
    };
    FP8_RETURN_IF_ERROR(timer.Enqueue(call, calls, events[0]));
    for (int oldest = 0;; oldest ^= 1) {
      const bool more = elapsed_ms() < seconds * 500;
      if (more) FP8_RETURN_IF_ERROR(timer.Enqueue(call, calls, events[oldest ^ 1]));
      FP8_ASSIGN_OR_RETURN(const double ms, timer.WaitMs(events[oldest]));
      side.calls += calls;
      side.ms += ms;
      if (!meter.Sample(now)) return Internal("power meter: %s", meter.error().c_str());
      if (!more) break;
      // The GPU is running the next batch.
      side.clock_sum_mhz += now.sm_clock_mhz;
      side.batches += 1;
      side.power_capped +=
          (now.throttle_reasons & (bench::kSoftwarePowerCap | bench::kHardwarePowerBrake)) != 0;
    }
    side.energy_mj += static_cast<double>(now.energy_mj - start.energy_mj);
    side.wall_ms += elapsed_ms();
    return OkStatus();
  };
  FP8_RETURN_IF_ERROR(phase(call_a, calls_a, sides.first));
  FP8_RETURN_IF_ERROR(phase(call_b, calls_b, sides.second));
  FP8_RETURN_IF_ERROR(phase(call_b, calls_b, sides.second));
  FP8_RETURN_IF_ERROR(phase(call_a, calls_a, sides.first));
  return sides;
}

// ---- cuBLASLt called directly ------------------------------------------------------------------

// The plain cuBLASLt call a user would write for this configuration: TN, D of its type, the same
// FAST_ACCUM and scale modes, default preferences, 32 MiB workspace, heuristic's first choice.
// Scales are given in cuBLASLt's own layout (no relayout), dims already padded as cuBLASLt needs.
class DirectGemm {
 public:
  std::string algorithm() const { return cuda::DescribeAlgorithm(heuristic_); }
  static StatusOr<std::unique_ptr<DirectGemm>> Create(cublasLtHandle_t handle, const Config& c,
                                                      int64_t m, int64_t n, int64_t k) {
    auto g = std::unique_ptr<DirectGemm>(new DirectGemm());
    g->handle_ = handle;
    const bool fp8 = c.lhs != DType::kBF16;
    BENCH_CUBLAS(cublasLtMatmulDescCreate(&g->desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t t = CUBLAS_OP_T, nop = CUBLAS_OP_N;
    BENCH_CUBLAS(
        cublasLtMatmulDescSetAttribute(g->desc_, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t)));
    BENCH_CUBLAS(
        cublasLtMatmulDescSetAttribute(g->desc_, CUBLASLT_MATMUL_DESC_TRANSB, &nop, sizeof(nop)));
    if (fp8) {
      const int8_t fast = c.fast || c.direct_fast ? 1 : 0;
      BENCH_CUBLAS(cublasLtMatmulDescSetAttribute(g->desc_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast,
                                                  sizeof(fast)));
      const int32_t a_mode = cuda::LtScaleMode(c.rhs_scale);
      const int32_t b_mode = cuda::LtScaleMode(c.lhs_scale);
      BENCH_CUBLAS(cublasLtMatmulDescSetAttribute(g->desc_, CUBLASLT_MATMUL_DESC_A_SCALE_MODE,
                                                  &a_mode, sizeof(a_mode)));
      BENCH_CUBLAS(cublasLtMatmulDescSetAttribute(g->desc_, CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
                                                  &b_mode, sizeof(b_mode)));
      g->scaled_ = true;
    }
    BENCH_CUBLAS(cublasLtMatrixLayoutCreate(&g->a_, cuda::CudaType(c.rhs), k, m, k));
    BENCH_CUBLAS(cublasLtMatrixLayoutCreate(&g->b_, cuda::CudaType(c.lhs), k, n, k));
    BENCH_CUBLAS(cublasLtMatrixLayoutCreate(&g->d_, cuda::CudaType(c.output), m, n, m));
    cublasLtMatmulPreference_t preference;
    BENCH_CUBLAS(cublasLtMatmulPreferenceCreate(&preference));
    const uint64_t workspace = kWorkspaceBytes;
    BENCH_CUBLAS(cublasLtMatmulPreferenceSetAttribute(
        preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace)));
    // The heuristic must see the scale pointers (their presence selects the kernels).
    g->SetScales(&g->dummy_, &g->dummy_);
    int returned = 0;
    BENCH_CUBLAS(cublasLtMatmulAlgoGetHeuristic(handle, g->desc_, g->a_, g->b_, g->d_, g->d_,
                                                preference, 1, &g->heuristic_, &returned));
    cublasLtMatmulPreferenceDestroy(preference);
    if (returned == 0) return Unimplemented("direct cuBLASLt: no algorithm");
    FP8_ASSIGN_OR_RETURN(g->workspace_, DeviceBuffer::Allocate(kWorkspaceBytes, "workspace"));
    return g;
  }
  ~DirectGemm() {
    if (d_) cublasLtMatrixLayoutDestroy(d_);
    if (b_) cublasLtMatrixLayoutDestroy(b_);
    if (a_) cublasLtMatrixLayoutDestroy(a_);
    if (desc_) cublasLtMatmulDescDestroy(desc_);
  }
  void SetScales(const void* a_scale, const void* b_scale) {
    if (!scaled_) return;
    cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scale,
                                   sizeof(a_scale));
    cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scale,
                                   sizeof(b_scale));
  }
  Status Run(const void* a, const void* b, void* d, cudaStream_t stream) {
    const float alpha = 1.0f, beta = 0.0f;
    BENCH_CUBLAS(cublasLtMatmul(handle_, desc_, &alpha, a, a_, b, b_, &beta, d, d_, d, d_,
                                &heuristic_.algo, workspace_.data(), workspace_.size(), stream));
    return OkStatus();
  }

 private:
  DirectGemm() = default;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic_{};
  DeviceBuffer workspace_;
  bool scaled_ = false;
  float dummy_ = 0;  // any non-null address for the heuristic
};

// ---- One measurement ---------------------------------------------------------------------------

struct Result {
  double fp8dot_ms = NAN, direct_ms = NAN;
  double graph_ms = NAN, direct_graph_ms = NAN;  // graph_timed: CUDA graphs, interleaved
  // Padded shapes only: the direct call with cuBLASLt's m = N unpadded, and the direct call
  // after the user's own padding copies (see the header).
  double direct_m_unpadded_ms = NAN, direct_with_padding_ms = NAN;
  size_t launches = 0;
  std::string note;
  SustainedSide sustained_fp8dot, sustained_direct;  // --sustain only (calls > 0)
};

StatusOr<DeviceBuffer> Random(int64_t count, DType type, uint64_t seed, float low, float high) {
  FP8_ASSIGN_OR_RETURN(
      DeviceBuffer b,
      DeviceBuffer::Allocate(static_cast<size_t>(count * DTypeSizeInBytes(type)), "bench input"));
  FP8_RETURN_IF_ERROR(cuda::LaunchFillRandom(b.data(), type, count, seed, low, high, nullptr));
  return b;
}

// The operands fp8dot and the direct call read: `sets` copies that stream from HBM, and scales
// large enough for every scale mode and layout.
struct Inputs {
  int sets = 0;
  std::vector<DeviceBuffer> lhs, rhs;
  DeviceBuffer lhs_scale, rhs_scale, output;
};

// cuBLASLt's m and k for this shape (N padded to 16 for FP8, K as fp8dot pads it).
struct LtDims {
  int64_t m = 0, k = 0;
};

StatusOr<Inputs> MakeInputs(const Shape& s, const Config& c, LtDims lt, int64_t l2_bytes) {
  Inputs in;
  const int64_t k_blocks = std::max<int64_t>(1, s.k / 128);
  const int64_t scale_count = (std::max(lt.m, s.m) + 128) * (RoundUp(k_blocks, 4) + 1);
  const int64_t set_bytes = (s.m + lt.m) * lt.k * DTypeSizeInBytes(c.lhs);
  in.sets = cuda::StreamingCopies(set_bytes, l2_bytes);
  for (int i = 0; i < in.sets; ++i) {
    FP8_ASSIGN_OR_RETURN(DeviceBuffer a, Random(s.m * lt.k, c.lhs, 10 + i, -2.0f, 2.0f));
    FP8_ASSIGN_OR_RETURN(DeviceBuffer b, Random(lt.m * lt.k, c.rhs, 100 + i, -2.0f, 2.0f));
    in.lhs.push_back(std::move(a));
    in.rhs.push_back(std::move(b));
  }
  FP8_ASSIGN_OR_RETURN(in.lhs_scale, Random(scale_count, DType::kF32, 7, 0.5f, 2.0f));
  FP8_ASSIGN_OR_RETURN(in.rhs_scale, Random(scale_count, DType::kF32, 8, 0.5f, 2.0f));
  FP8_ASSIGN_OR_RETURN(
      in.output,
      DeviceBuffer::Allocate(static_cast<size_t>(s.m * lt.m * DTypeSizeInBytes(c.output)), "D"));
  BENCH_CUDA(cudaDeviceSynchronize());
  return in;
}

// Padded shapes: the direct call with cuBLASLt's m = N unpadded, and the direct call after the
// user's own padding copies.
Status TimePaddingBaselines(cublasLtHandle_t handle, const Shape& s, const Config& c, LtDims lt,
                            const Inputs& in, DirectGemm& direct, cudaStream_t stream, Result& r) {
  const int64_t m = lt.m, k = lt.k;
  const int sets = in.sets;
  const std::vector<DeviceBuffer>& lhs = in.lhs;
  const std::vector<DeviceBuffer>& rhs = in.rhs;
  // The direct call on the GEMM fp8dot runs: cuBLASLt's m = N as it is (K still padded).
  if (m != s.n) {
    StatusOr<std::unique_ptr<DirectGemm>> unpadded = DirectGemm::Create(handle, c, s.n, s.m, k);
    if (unpadded.ok()) {
      (*unpadded)->SetScales(in.rhs_scale.data(), in.lhs_scale.data());
      StatusOr<double> t = TimeCalls(stream, [&](int i) {
        return (*unpadded)->Run(rhs[static_cast<size_t>(i % sets)].data(),
                                lhs[static_cast<size_t>(i % sets)].data(), in.output.data(),
                                stream);
      });
      if (t.ok()) r.direct_m_unpadded_ms = *t;
    } else {
      r.note += " [direct m unpadded: " + unpadded.status().message() + "]";
    }
  }
  // The user's padding, then the direct call: the unpadded operands (lhs [M,K] row-major,
  // rhs [N,K], i.e. B column-major) are copied into zero-padded [M,K'] and [m,K'] buffers.
  const size_t element = static_cast<size_t>(DTypeSizeInBytes(c.lhs));
  FP8_ASSIGN_OR_RETURN(DeviceBuffer padded_a,
                       DeviceBuffer::Allocate(static_cast<size_t>(s.m * k) * element, "pad"));
  FP8_ASSIGN_OR_RETURN(DeviceBuffer padded_b,
                       DeviceBuffer::Allocate(static_cast<size_t>(m * k) * element, "pad"));
  BENCH_CUDA(cudaMemset(padded_a.data(), 0, padded_a.size()));
  BENCH_CUDA(cudaMemset(padded_b.data(), 0, padded_b.size()));
  StatusOr<double> t = TimeCalls(stream, [&](int i) -> Status {
    const size_t set = static_cast<size_t>(i % sets);
    BENCH_CUDA(cudaMemcpy2DAsync(padded_a.data(), static_cast<size_t>(k) * element, lhs[set].data(),
                                 static_cast<size_t>(s.k) * element,
                                 static_cast<size_t>(s.k) * element, static_cast<size_t>(s.m),
                                 cudaMemcpyDeviceToDevice, stream));
    BENCH_CUDA(cudaMemcpy2DAsync(padded_b.data(), static_cast<size_t>(k) * element, rhs[set].data(),
                                 static_cast<size_t>(s.k) * element,
                                 static_cast<size_t>(s.k) * element, static_cast<size_t>(s.n),
                                 cudaMemcpyDeviceToDevice, stream));
    return direct.Run(padded_b.data(), padded_a.data(), in.output.data(), stream);
  });
  if (t.ok()) r.direct_with_padding_ms = *t;
  return OkStatus();
}

// What the table's note column says about fp8dot's plan.
std::string PlanNotes(const CudaDotPlan& plan, const Config& c, bool padded) {
  std::string note;
  if (!plan.info().fused_epilogue) note += " [fp8dot epilogue kernel]";
  if (padded) note += " [padded]";
  if (c.autotune > 0 || plan.info().k_split.slices > 1 || c.engine == GemmEngine::kOwn) {
    note += " [" + plan.info().algorithm + "]";
  }
  // What tuning measured: "autotuning: 8 candidates timed, first ...".
  if (c.autotune > 0) note += " [" + plan.info().autotune.ToString() + "]";
  return note;
}

// `meter` (may be null): also time each side alone for `sustain_seconds` (--sustain).
StatusOr<Result> Measure(cublasLtHandle_t handle, const Shape& s, const Config& c, int64_t l2_bytes,
                         cudaStream_t stream, bench::PowerMeter* meter, double sustain_seconds) {
  Result r;
  const DotSpec spec = MakeSpec(s, c);
  CudaDotOptions options;
  options.autotune_candidates = c.autotune;
  options.engine = c.engine;
  options.own_tile = c.own_tile;
  options.own_promotion_interval = c.own_promotion_interval;
  FP8_ASSIGN_OR_RETURN(std::unique_ptr<CudaDotPlan> plan, CudaDotPlan::Create(spec, options));
  const bool fp8 = c.lhs != DType::kBF16;
  // What cuBLASLt itself gets: K padded to 16 bytes, N (its m) to 16 for FP8.
  const int64_t k = plan->info().k_padded;
  const int64_t m = fp8 ? RoundUp(s.n, 16) : s.n;
  // Input sets: enough copies that rotating through them streams from HBM, not L2.
  FP8_ASSIGN_OR_RETURN(Inputs inputs, MakeInputs(s, c, {m, k}, l2_bytes));
  const int sets = inputs.sets;
  const std::vector<DeviceBuffer>& lhs = inputs.lhs;
  const std::vector<DeviceBuffer>& rhs = inputs.rhs;
  const DeviceBuffer& lhs_scale = inputs.lhs_scale;
  const DeviceBuffer& rhs_scale = inputs.rhs_scale;
  DeviceBuffer& output = inputs.output;

  auto plan_call = [&](int i) {
    CudaDotBuffers b;
    b.lhs = lhs[static_cast<size_t>(i % sets)].data();
    b.rhs = rhs[static_cast<size_t>(i % sets)].data();
    if (c.lhs_scale != ScaleMode::kNone) b.lhs_scale = lhs_scale.as<const float>();
    if (c.rhs_scale != ScaleMode::kNone) b.rhs_scale = rhs_scale.as<const float>();
    b.output = output.data();
    return plan->Run(b, stream);
  };
  FP8_ASSIGN_OR_RETURN(r.launches, CountLaunches(stream, plan_call));

  StatusOr<std::unique_ptr<DirectGemm>> direct = DirectGemm::Create(handle, c, m, s.m, k);
  auto direct_call = [&](int i) {
    return (*direct)->Run(rhs[static_cast<size_t>(i % sets)].data(),
                          lhs[static_cast<size_t>(i % sets)].data(), output.data(), stream);
  };
  if (direct.ok()) (*direct)->SetScales(rhs_scale.data(), lhs_scale.data());
  const bool graph_timed = s.m <= 128 || 2.0 * s.m * s.n * s.k < 4e9;
  if (graph_timed && direct.ok()) {
    // A loop of calls at small M times the host (cublasLtMatmul's own cost); graphs time the GPU.
    FP8_ASSIGN_OR_RETURN(cuda::CapturedGraph plan_graph,
                         cuda::CapturedGraph::Capture(stream, kGraphCalls, plan_call, "fp8dot"));
    FP8_ASSIGN_OR_RETURN(
        cuda::CapturedGraph direct_graph,
        cuda::CapturedGraph::Capture(stream, kGraphCalls, direct_call, "direct call"));
    FP8_ASSIGN_OR_RETURN(auto t,
                         TimeInterleaved(
                             stream, [&](int) { return plan_graph.Replay(stream, "fp8dot"); },
                             [&](int) { return direct_graph.Replay(stream, "direct call"); }));
    r.graph_ms = t.first / kGraphCalls;
    r.direct_graph_ms = t.second / kGraphCalls;
  } else if (graph_timed) {
    FP8_ASSIGN_OR_RETURN(r.graph_ms, TimeGraph(stream, plan_call));
  }
  if (direct.ok()) {
    StatusOr<std::pair<double, double>> t = TimeInterleaved(stream, plan_call, direct_call);
    if (t.ok()) {
      r.fp8dot_ms = t->first;
      r.direct_ms = t->second;
    } else {
      r.note = t.status().message();
      FP8_ASSIGN_OR_RETURN(r.fp8dot_ms, TimeCalls(stream, plan_call));
    }
    if ((*direct)->algorithm() != plan->info().algorithm && c.autotune == 0 &&
        c.engine != GemmEngine::kOwn) {
      r.note += " [algorithm differs: fp8dot " + plan->info().algorithm + "; direct " +
                (*direct)->algorithm() + "]";
    }
  } else {
    r.note = direct.status().message();
    FP8_ASSIGN_OR_RETURN(r.fp8dot_ms, TimeCalls(stream, plan_call));
  }
  if (meter != nullptr && direct.ok()) {
    FP8_ASSIGN_OR_RETURN(std::tie(r.sustained_fp8dot, r.sustained_direct),
                         TimeSustained(stream, *meter, sustain_seconds, plan_call, direct_call));
  }
  const bool padded = s.k != k || (fp8 && m != s.n);
  if (padded && direct.ok()) {
    FP8_RETURN_IF_ERROR(TimePaddingBaselines(handle, s, c, {m, k}, inputs, **direct, stream, r));
  }
  r.note += PlanNotes(*plan, c, padded);
  return r;
}

// The memory floor (memory_floor.h) of FP8 operands and a bf16 D for shape `s`: the fastest of a
// few launch shapes, timed like the plans' graph column (rotating inputs, CUDA graph of 20).
StatusOr<double> MeasureMemoryFloor(const Shape& s, int64_t l2_bytes, int multiprocessors,
                                    cudaStream_t stream) {
  const int64_t a_bytes = RoundUp(s.m * s.k, 16), b_bytes = RoundUp(s.n * s.k, 16);
  const int64_t d_bytes = RoundUp(s.m * s.n * 2, 16);
  const int sets = cuda::StreamingCopies(a_bytes + b_bytes, l2_bytes);
  std::vector<DeviceBuffer> a, b;
  for (int i = 0; i < sets; ++i) {
    FP8_ASSIGN_OR_RETURN(DeviceBuffer x, Random(a_bytes, DType::kF8E4M3FN, 10 + i, -2.0f, 2.0f));
    FP8_ASSIGN_OR_RETURN(DeviceBuffer y, Random(b_bytes, DType::kF8E4M3FN, 100 + i, -2.0f, 2.0f));
    a.push_back(std::move(x));
    b.push_back(std::move(y));
  }
  FP8_ASSIGN_OR_RETURN(DeviceBuffer d, DeviceBuffer::Allocate(static_cast<size_t>(d_bytes), "D"));
  FP8_ASSIGN_OR_RETURN(DeviceBuffer sink, DeviceBuffer::Allocate(size_t{1} << 20, "sink"));
  double best = std::numeric_limits<double>::infinity();
  for (int loads_in_flight : {4, 8}) {
    for (int blocks_per_sm : {2, 4, 8}) {
      for (int threads : {256, 512, 1024}) {
        FP8_ASSIGN_OR_RETURN(double ms, TimeGraph(stream, [&](int i) {
                               const size_t set = static_cast<size_t>(i % sets);
                               return bench::LaunchMemoryFloor(
                                   a[set].data(), a_bytes, b[set].data(), b_bytes, d.data(),
                                   d_bytes, sink.as<unsigned>(), multiprocessors * blocks_per_sm,
                                   threads, loads_in_flight, stream);
                             }));
        best = std::min(best, ms);
      }
    }
  }
  return best;
}

// The same kernel's bandwidth on one long read (1 GiB), where launch and ramp-up do not count:
// the HBM's sustained read rate, in TB/s.
StatusOr<double> MeasureSustainedRead(int multiprocessors, cudaStream_t stream) {
  constexpr int64_t kBytes = int64_t{1} << 30;
  FP8_ASSIGN_OR_RETURN(DeviceBuffer data, Random(kBytes, DType::kF8E4M3FN, 7, -2.0f, 2.0f));
  FP8_ASSIGN_OR_RETURN(DeviceBuffer sink, DeviceBuffer::Allocate(size_t{1} << 20, "sink"));
  double best = std::numeric_limits<double>::infinity();
  for (int loads_in_flight : {4, 8}) {
    for (int blocks_per_sm : {4, 8}) {
      FP8_ASSIGN_OR_RETURN(double ms, TimeCalls(stream, [&](int) {
                             return bench::LaunchMemoryFloor(data.data(), kBytes, data.data(), 0,
                                                             nullptr, 0, sink.as<unsigned>(),
                                                             multiprocessors * blocks_per_sm, 512,
                                                             loads_in_flight, stream);
                           }));
      best = std::min(best, ms);
    }
  }
  return static_cast<double>(kBytes) / (best * 1e9);
}

double Tflops(const Shape& s, double ms) {
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) /
         (ms * 1e9);
}

struct Flags {
  std::string shapes_path = "bench/shapes.txt", csv_path;
  bool quick = false;
  std::vector<std::string> configs;  // empty: all (--configs "fp8 fast,fp8 fast tuned")
  // --own-tiles 256x128c2,128x128: the own-kernel configs run once per tile (else the plan's).
  std::vector<std::string> own_tiles;
  double sustain_seconds = 0;  // --sustain: 0 off
};

// The flags, or the exit code of a refused command line (CLI11 has printed why) or of --help.
std::variant<Flags, int> ParseFlags(int argc, char** argv) {
  Flags flags;
  CLI::App app("TFLOP/s of fp8dot's CUDA plans against cuBLASLt called directly", "gpu_bench");
  app.add_option("shapes", flags.shapes_path, "the shape suite, one M N K per line");
  app.add_option("--csv", flags.csv_path, "also write every row to this CSV file");
  app.add_flag("--quick", flags.quick, "only the first two shapes");
  std::vector<std::string> config_names;
  for (const Config& c : kConfigs) config_names.emplace_back(c.name);
  app.add_option("--configs", flags.configs, "only these configs, comma-separated")
      ->delimiter(',')
      ->check(CLI::IsMember(config_names));
  app.add_option("--own-tiles", flags.own_tiles,
                 "run the own-kernel configs once per tile, e.g. 256x128c2,128x128")
      ->delimiter(',');
  app.add_option("--sustain", flags.sustain_seconds,
                 "also run each side alone for SECONDS: energy per call, clock (0: off)")
      ->check(CLI::Range(0.0, 600.0));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return flags;
}

// One table row (and CSV line) for shape `s` and config `c`.
void PrintRow(const Shape& s, const Config& c, const StatusOr<Result>& r, std::FILE* csv) {
  const std::string shape = StrFormat("%lld,%lld,%lld", static_cast<long long>(s.m),
                                      static_cast<long long>(s.n), static_cast<long long>(s.k));
  if (!r.ok()) {
    // Invalid combinations (block scales on K=1000) say why and move on.
    std::string message = r.status().message().substr(0, 90);
    std::replace(message.begin(), message.end(), '|', '/');
    std::printf("| %s | %s | n/a | n/a | | | | | | | | | %s |\n", shape.c_str(), c.name,
                message.c_str());
    if (csv) std::fprintf(csv, "%s,%s,,,,,,,,n/a\n", shape.c_str(), c.name);
    return;
  }
  auto tflops = [&](double ms) {
    return std::isnan(ms) ? std::string() : StrFormat("%.0f", Tflops(s, ms));
  };
  auto ratio = [](double direct_ms, double ms) {
    return std::isnan(direct_ms) ? std::string() : StrFormat("%.3f", direct_ms / ms);
  };
  std::printf("| %s | %s | %.0f | %s | %s | %s | %s | %s | %zu | %s | %s | %s | %s |\n",
              shape.c_str(), c.name, Tflops(s, r->fp8dot_ms),
              std::isnan(r->direct_ms) ? "n/a" : tflops(r->direct_ms).c_str(),
              ratio(r->direct_ms, r->fp8dot_ms).c_str(), tflops(r->graph_ms).c_str(),
              tflops(r->direct_graph_ms).c_str(), ratio(r->direct_graph_ms, r->graph_ms).c_str(),
              r->launches, tflops(r->direct_m_unpadded_ms).c_str(),
              tflops(r->direct_with_padding_ms).c_str(),
              ratio(r->direct_with_padding_ms, r->fp8dot_ms).c_str(), r->note.c_str());
  std::fflush(stdout);
  if (csv) {
    std::fprintf(csv, "%s,%s,%.6f,%.6f,%.6f,%.6f,%zu,%.6f,%.6f,%s\n", shape.c_str(), c.name,
                 r->fp8dot_ms, r->direct_ms, r->graph_ms, r->direct_graph_ms, r->launches,
                 r->direct_m_unpadded_ms, r->direct_with_padding_ms, r->note.c_str());
  }
}

// A row of the --sustain table: fp8dot's side `a` against the direct call's `b`.
std::string SustainedRow(const Shape& s, const Config& c, const SustainedSide& a,
                         const SustainedSide& b) {
  const double ratio = b.MsPerCall() / a.MsPerCall();
  return StrFormat(
      "| %lld,%lld,%lld | %s | %.0f | %.0f | %.3f | %.1f | %.1f | %.3f | %.0f | %.0f | %.0f | %.0f "
      "| "
      "%.0f%% | %.0f%% | %.3f |",
      static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k), c.name,
      Tflops(s, a.MsPerCall()), Tflops(s, b.MsPerCall()), ratio, a.EnergyPerCallMj(),
      b.EnergyPerCallMj(), b.EnergyPerCallMj() / a.EnergyPerCallMj(), a.MeanWatts(), b.MeanWatts(),
      a.MeanClockMhz(), b.MeanClockMhz(), 100.0 * a.power_capped / a.batches,
      100.0 * b.power_capped / b.batches, ratio * b.MeanClockMhz() / a.MeanClockMhz());
}

// The sustained read rate and the memory floor of each M <= 128 shape.
Status PrintMemoryFloors(const std::vector<std::pair<Shape, double>>& floors, int multiprocessors,
                         cudaStream_t stream) {
  FP8_ASSIGN_OR_RETURN(double sustained, MeasureSustainedRead(multiprocessors, stream));
  std::printf("\n# Sustained HBM read (1 GiB, same kernel): %.2f TB/s\n", sustained);
  std::printf(
      "\n# Memory floor: reading the FP8 operands once from HBM and writing a bf16 D, nothing "
      "else (bench/memory_floor.h), timed like the graph column\n"
      "| M,N,K | MB moved | floor (us) | TB/s | as TFLOP/s |\n|---|---|---|---|---|\n");
  for (const auto& [s, ms] : floors) {
    const double bytes = static_cast<double>(s.m * s.k + s.n * s.k + 2 * s.m * s.n);
    std::printf("| %lld,%lld,%lld | %.1f | %.2f | %.2f | %.0f |\n", static_cast<long long>(s.m),
                static_cast<long long>(s.n), static_cast<long long>(s.k), bytes * 1e-6, ms * 1e3,
                bytes / (ms * 1e9), Tflops(s, ms));
  }
  return OkStatus();
}

}  // namespace
}  // namespace fp8dot

int main(int argc, char** argv) {
  using namespace fp8dot;
  std::variant<Flags, int> parsed = ParseFlags(argc, argv);
  if (const int* exit_code = std::get_if<int>(&parsed)) return *exit_code;
  const Flags& flags = std::get<Flags>(parsed);
  StatusOr<std::vector<Shape>> shapes = ReadShapes(flags.shapes_path);
  if (!shapes.ok()) {
    std::fprintf(stderr, "gpu_bench: %s\n", shapes.status().message().c_str());
    return 1;
  }
  std::FILE* csv = flags.csv_path.empty() ? nullptr : std::fopen(flags.csv_path.c_str(), "w");
  if (!flags.csv_path.empty() && csv == nullptr) {
    std::fprintf(stderr, "gpu_bench: --csv: cannot write %s: %s\n", flags.csv_path.c_str(),
                 std::strerror(errno));
    return 1;
  }
  if (csv) {
    // A row on disk as soon as it is printed: a run its caller's timeout cuts keeps its rows.
    std::setvbuf(csv, nullptr, _IOLBF, 1 << 12);
    std::fprintf(
        csv,
        "m,n,k,config,fp8dot_ms,direct_ms,graph_ms,direct_graph_ms,launches,direct_m_unpadded_ms,"
        "direct_with_padding_ms,note\n");
  }
  StatusOr<CudaDeviceInfo> device = QueryCudaDevice();
  if (!device.ok()) {
    std::fprintf(stderr, "gpu_bench: %s\n", device.status().message().c_str());
    return 77;
  }
  if (flags.quick) shapes->resize(std::min<size_t>(shapes->size(), 2));
  std::unique_ptr<bench::PowerMeter> meter;
  if (flags.sustain_seconds > 0) {
    int cuda_device = 0;
    cudaGetDevice(&cuda_device);
    meter = std::make_unique<bench::PowerMeter>(cuda_device);
    if (!meter->ok()) {
      std::fprintf(stderr, "gpu_bench: --sustain: %s\n", meter->error().c_str());
      return 1;
    }
  }
  cublasLtHandle_t handle;
  if (cublasLtCreate(&handle) != CUBLAS_STATUS_SUCCESS) return 1;
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  int l2 = 0;
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
  std::printf(
      "# gpu_bench on %s (%d SMs at up to %d MHz, L2 %d MiB, DRAM %.2f TB/s peak), TFLOP/s, D = "
      "bf16, TN\n",
      device->name.c_str(), device->multiprocessor_count, device->sm_clock_khz / 1000, l2 >> 20,
      device->memory_bytes_per_second / 1e12);
  std::printf(
      "| M,N,K | config | fp8dot | cuBLASLt direct | fp8dot/direct | graph (small) | direct "
      "graph | graph fp8dot/direct | launches "
      "| direct, m unpadded | direct + user padding | fp8dot / (direct + padding) | note |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);
  std::vector<std::pair<Shape, double>> floors;  // M <= 128 shapes: their memory floor (ms)
  std::vector<std::string> sustained;            // --sustain: the table's rows
  std::deque<std::string> variant_names;         // Config::name of the --own-tiles variants
  for (const Shape& s : *shapes) {
    if (s.m <= 128) {
      StatusOr<double> floor = MeasureMemoryFloor(s, l2, device->multiprocessor_count, stream);
      if (!floor.ok()) {
        std::fprintf(stderr, "gpu_bench: memory floor: %s\n", floor.status().message().c_str());
        return 1;
      }
      floors.emplace_back(s, *floor);
      if (csv) {
        std::fprintf(csv, "%lld,%lld,%lld,memory floor,,,%.6f,,1,,,\n", static_cast<long long>(s.m),
                     static_cast<long long>(s.n), static_cast<long long>(s.k), *floor);
      }
    }
    for (const Config& c : kConfigs) {
      const std::vector<std::string>& only = flags.configs;
      if (!only.empty() && std::find(only.begin(), only.end(), c.name) == only.end()) continue;
      std::vector<Config> variants = {c};
      if (c.engine == GemmEngine::kOwn && !flags.own_tiles.empty()) {
        variants.clear();
        for (const std::string& tile : flags.own_tiles) {
          Config variant = c;
          variant.own_tile = tile;
          variant.name = variant_names.emplace_back(std::string(c.name) + " " + tile).c_str();
          variants.push_back(variant);
        }
      }
      for (const Config& variant : variants) {
        const StatusOr<Result> r =
            Measure(handle, s, variant, l2, stream, meter.get(), flags.sustain_seconds);
        PrintRow(s, variant, r, csv);
        if (r.ok() && r->sustained_fp8dot.calls > 0) {
          sustained.push_back(SustainedRow(s, variant, r->sustained_fp8dot, r->sustained_direct));
        }
        if (!r.ok()) (void)cudaGetLastError();
      }
    }
  }
  if (!floors.empty()) {
    const Status printed = PrintMemoryFloors(floors, device->multiprocessor_count, stream);
    if (!printed.ok()) {
      std::fprintf(stderr, "gpu_bench: sustained read: %s\n", printed.message().c_str());
      return 1;
    }
  }
  if (!sustained.empty()) {
    std::printf(
        "\n# Sustained: each side alone, back to back, in phases A B B A of %.1f s; energy from "
        "NVML's counter, the SM clock sampled as each ~20 ms batch ends while the next runs, "
        "'capped' the share of those samples where the power limit held the clock down\n"
        "| M,N,K | config | fp8dot TFLOP/s | direct TFLOP/s | fp8dot/direct | fp8dot mJ/call | "
        "direct mJ/call | energy direct/fp8dot | fp8dot W | direct W | fp8dot MHz | direct MHz | "
        "fp8dot capped | direct capped | fp8dot/direct per clock |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
        flags.sustain_seconds / 2);
    for (const std::string& row : sustained) std::printf("%s\n", row.c_str());
  }
  if (csv) std::fclose(csv);
  cudaStreamDestroy(stream);
  cublasLtDestroy(handle);
  return 0;
}
