// Autotuning: time the heuristic's top candidates for a plan on scratch data and keep the
// fastest, remembering the winner in an optional text cache file ("key<TAB>algorithm" lines).
// Candidates are timed as the GPU runs them in practice: each one's runs are captured into a
// CUDA graph (no host cost in the time), and A and B come in enough copies that rotating through
// them streams the operands from HBM, as a model's weights arrive (and as the benchmarks time).
// The heuristic's first choice is always among the candidates and wins ties (a candidate must
// beat it by more than the noise margin), so tuning never picks a slower algorithm on purpose.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <mutex>
#include <optional>

#include "cuda/captured_graph.h"
#include "cuda/cuda_events.h"
#include "cuda/cuda_status.h"
#include "cuda/dot_plan.h"
#include "cuda/kernels/fill_random.h"
#include "cuda/own_gemm.h"
#include "cuda/streaming_copies.h"
#include "fp8dot/arithmetic.h"

namespace fp8dot::cuda {
namespace {

constexpr int kWarmupReplays = 1;
// Runs per timed graph: enough for about kReplayMs at a nominal 1000 TFLOP/s, within these bounds
// (20 runs of a 16384^3 GEMM would make tuning take seconds per candidate).
constexpr int kMinTimedRuns = 3;
constexpr int kMaxTimedRuns = 20;
constexpr double kReplayMs = 0.5;
constexpr int kRepeats = 3;
// A candidate must be this much faster than the heuristic's first choice to replace it: the
// same configuration timed twice moves by about this much.
constexpr double kNoiseMargin = 0.02;
constexpr int kConfirmRounds = 3;
// The own kernel's tiles an engine race times: the plan's choice and the cost model's next three
// held the fastest tile on 10 of the 12 small-M shapes of an H100 sweep and one within 2.1% of
// it on the other two (bench/results/2026-12-05-h100-session34.md, call 4).
constexpr int kOwnTileCandidates = 4;

std::mutex cache_file_mutex;

// Elements spanned by a strided [batch][outer][inner] layout.
int64_t Extent(int64_t batch, int64_t batch_stride, int64_t outer, int64_t ld, int64_t inner) {
  return (batch - 1) * batch_stride + (outer - 1) * ld + inner;
}

int64_t OperandExtent(const PreparedTensor& t, int64_t batch, int64_t rows, int64_t cols) {
  return t.cols_contiguous ? Extent(batch, t.batch_stride, rows, t.ld, cols)
                           : Extent(batch, t.batch_stride, cols, t.ld, rows);
}

// A stream of our own: a graph cannot be captured on the legacy default stream.
class OwnedStream {
 public:
  static StatusOr<OwnedStream> Create(const std::string& context) {
    OwnedStream stream;
    FP8_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream.stream_, cudaStreamNonBlocking),
                             context);
    return stream;
  }
  OwnedStream(OwnedStream&& other) noexcept : stream_(other.stream_) { other.stream_ = nullptr; }
  OwnedStream& operator=(OwnedStream&&) = delete;
  ~OwnedStream() {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  cudaStream_t get() const { return stream_; }

 private:
  OwnedStream() = default;
  cudaStream_t stream_ = nullptr;
};

struct Scratch {
  std::vector<DeviceBuffer> a, b;  // operand sets, rotated
  DeviceBuffer c, d, scales, scalar, bias;
};

int TimedRuns(int64_t batch, int64_t m, int64_t n, int64_t k) {
  const double nominal_ms = 2.0 * static_cast<double>(batch) * static_cast<double>(m) *
                            static_cast<double>(n) * static_cast<double>(k) / 1e12;
  return static_cast<int>(
      std::clamp(std::ceil(kReplayMs / nominal_ms), double{kMinTimedRuns}, double{kMaxTimedRuns}));
}

// Median ms per call of a graph of `calls` calls: warm-up replays, then kRepeats timed ones.
StatusOr<double> MedianMsPerCall(const CapturedGraph& graph, int calls, cudaStream_t stream,
                                 const EventPair& events, const std::string& context) {
  for (int w = 0; w < kWarmupReplays; ++w) FP8_RETURN_IF_ERROR(graph.Replay(stream, context));
  std::vector<double> repeats;
  for (int r = 0; r < kRepeats; ++r) {
    FP8_CUDA_RETURN_IF_ERROR(cudaEventRecord(events.start(), stream), context);
    FP8_RETURN_IF_ERROR(graph.Replay(stream, context));
    FP8_CUDA_RETURN_IF_ERROR(cudaEventRecord(events.stop(), stream), context);
    FP8_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(events.stop()), context);
    float ms = 0;
    FP8_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, events.start(), events.stop()), context);
    repeats.push_back(ms / calls);
  }
  return Median(repeats);
}

// How many copies of A and B to rotate through (streaming_copies.h), for this device's L2.
StatusOr<int> OperandSets(int64_t operand_bytes, const std::string& context) {
  int device = 0, l2_bytes = 0;
  FP8_CUDA_RETURN_IF_ERROR(cudaGetDevice(&device), context);
  FP8_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device),
                           context);
  return StreamingCopies(operand_bytes, l2_bytes);
}

StatusOr<DeviceBuffer> RandomBuffer(int64_t count, DType type, uint64_t seed, float low, float high,
                                    const char* what) {
  FP8_ASSIGN_OR_RETURN(
      DeviceBuffer buffer,
      DeviceBuffer::Allocate(static_cast<size_t>(count * DTypeSizeInBytes(type)), what));
  FP8_RETURN_IF_ERROR(LaunchFillRandom(buffer.data(), type, count, seed, low, high, nullptr));
  return buffer;
}

// Copies of two operands with random values in [-2, 2]: as many as stream from HBM (fewer when
// memory is short, at least one).
struct OperandCopies {
  std::vector<DeviceBuffer> first, second;
};

StatusOr<OperandCopies> StreamingOperandCopies(int64_t first_count, DType first_type,
                                               int64_t second_count, DType second_type,
                                               const std::string& context) {
  FP8_ASSIGN_OR_RETURN(const int sets, OperandSets(first_count * DTypeSizeInBytes(first_type) +
                                                       second_count * DTypeSizeInBytes(second_type),
                                                   context));
  OperandCopies copies;
  for (int set = 0; set < sets; ++set) {
    StatusOr<DeviceBuffer> first =
        RandomBuffer(first_count, first_type, 10 + set, -2.0f, 2.0f, "scratch operand");
    StatusOr<DeviceBuffer> second = first.ok() ? RandomBuffer(second_count, second_type, 100 + set,
                                                              -2.0f, 2.0f, "scratch operand")
                                               : StatusOr<DeviceBuffer>(first.status());
    if (!second.ok()) {
      if (set == 0) return second.status();
      break;  // short of memory: time on the copies there are (partly from L2)
    }
    copies.first.push_back(std::move(*first));
    copies.second.push_back(std::move(*second));
  }
  return copies;
}

DType DTypeOf(cudaDataType_t type) {
  switch (type) {
    case CUDA_R_8F_E4M3:
      return DType::kF8E4M3FN;
    case CUDA_R_8F_E5M2:
      return DType::kF8E5M2;
    case CUDA_R_16BF:
      return DType::kBF16;
    case CUDA_R_16F:
      return DType::kF16;
    default:
      return DType::kF32;
  }
}

StatusOr<std::string> LookUp(const std::string& path, const std::string& key) {
  std::lock_guard<std::mutex> lock(cache_file_mutex);
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const size_t tab = line.find('\t');
    if (tab != std::string::npos && line.compare(0, tab, key) == 0) return line.substr(tab + 1);
  }
  return NotFound("no entry");
}

void Remember(const std::string& path, const std::string& key, const std::string& algorithm) {
  std::lock_guard<std::mutex> lock(cache_file_mutex);
  std::ofstream out(path, std::ios::app);
  out << key << '\t' << algorithm << '\n';
}

// The cache keys' part for CudaDotOptions::sm_count_target: none when unset, so that entries
// written before it existed still match.
std::string SmCountKey(const CudaDotOptions& options) {
  return options.sm_count_target > 0 ? StrFormat("|sms=%d", options.sm_count_target) : "";
}

// The autotuning cache's key: every field of the problem and of the plan's GEMM path.
std::string CacheKey(const CudaDotPlan::Impl& plan) {
  return plan.context + "|" + std::string(plan.fused ? "fused" : "unfused") + "|" +
         DotSpecKey(plan.spec) + StrFormat("|ws=%zu", plan.options.workspace_bytes) +
         SmCountKey(plan.options);
}

// Chooses the candidate the cache file remembers for `key`; false when there is none.
bool ChooseRemembered(const CudaDotPlan::Impl& plan, const std::string& key, LtMatmul& gemm) {
  if (plan.options.autotune_cache_path.empty()) return false;
  StatusOr<std::string> remembered = LookUp(plan.options.autotune_cache_path, key);
  if (!remembered.ok()) return false;
  for (int i = 0; i < gemm.candidate_count(); ++i) {
    if (gemm.AlgorithmDescription(i) == *remembered) {
      gemm.ChooseCandidate(i);
      return true;
    }
  }
  return false;
}

// Scratch operands with the plan's exact layouts, filled with random finite values; as many
// copies of A and B as stream from HBM (fewer when memory is short).
StatusOr<Scratch> MakeScratch(const CudaDotPlan::Impl& plan, const LtMatmulConfig& c) {
  Scratch s;
  const int64_t a_count = OperandExtent(plan.rhs, c.batch, c.m, c.k);
  const int64_t b_count = OperandExtent(plan.lhs, c.batch, c.n, c.k);
  FP8_ASSIGN_OR_RETURN(
      OperandCopies copies,
      StreamingOperandCopies(a_count, DTypeOf(c.a_type), b_count, DTypeOf(c.b_type), plan.context));
  s.a = std::move(copies.first);
  s.b = std::move(copies.second);
  FP8_ASSIGN_OR_RETURN(s.c, RandomBuffer(Extent(c.batch, c.stride_c, c.n, c.ldc, c.m),
                                         DTypeOf(c.c_type), 3, -1.0f, 1.0f, "autotune C"));
  FP8_ASSIGN_OR_RETURN(
      s.d, DeviceBuffer::Allocate(static_cast<size_t>(Extent(c.batch, c.stride_d, c.n, c.ldd, c.m) *
                                                      DTypeSizeInBytes(DTypeOf(c.d_type))),
                                  "autotune D"));
  const int64_t k_blocks = ScaleBlockCount(plan.info.dot.k);
  const int64_t scale_count = std::max(c.m, c.n) * (k_blocks + 4);
  FP8_ASSIGN_OR_RETURN(s.scales, RandomBuffer(scale_count, DType::kF32, 4, 0.5f, 2.0f, "scales"));
  FP8_ASSIGN_OR_RETURN(s.scalar, RandomBuffer(4, DType::kF32, 5, 0.5f, 1.0f, "scalar"));
  FP8_ASSIGN_OR_RETURN(s.bias, RandomBuffer(c.m, c.bias_type ? DTypeOf(*c.bias_type) : DType::kF32,
                                            6, -1.0f, 1.0f, "autotune bias"));
  return s;
}

// Times candidates of one plan's GEMM on scratch data: each candidate's runs (rotating operand
// sets) captured into a CUDA graph, replayed kRepeats times.
class CandidateTimer {
 public:
  static StatusOr<CandidateTimer> Create(CudaDotPlan::Impl& plan, Scratch scratch) {
    CandidateTimer timer(plan, std::move(scratch));
    Scratch& s = timer.scratch_;
    LtPointers pointers{s.scales.data(), s.scales.data(), s.scalar.data(), s.scalar.as<float>() + 1,
                        s.bias.data()};
    FP8_RETURN_IF_ERROR(plan.gemm->SetPointers(pointers));
    FP8_ASSIGN_OR_RETURN(EventPair events, EventPair::Create(plan.context));
    FP8_ASSIGN_OR_RETURN(OwnedStream stream, OwnedStream::Create(plan.context));
    timer.events_.emplace(std::move(events));
    timer.stream_.emplace(std::move(stream));
    return timer;
  }

  // Median ms per call of candidate `i`; -1 if the candidate cannot run.
  StatusOr<double> Time(int i) {
    LtMatmul& gemm = *plan_.gemm;
    gemm.ChooseCandidate(i);
    const int operand_sets = static_cast<int>(scratch_.a.size());
    const float alpha = static_cast<float>(plan_.spec.alpha);
    const float beta = static_cast<float>(plan_.spec.beta);
    cudaStream_t stream = stream_->get();
    auto run = [&](int call) {
      const size_t set = static_cast<size_t>(call % operand_sets);
      return gemm.Run(alpha, beta, scratch_.a[set].data(), scratch_.b[set].data(),
                      scratch_.c.data(), scratch_.d.data(), plan_.workspace.data(),
                      plan_.workspace.size(), stream);
    };
    StatusOr<CapturedGraph> graph = CapturedGraph::Capture(stream, timed_runs_, run, plan_.context);
    if (!graph.ok()) return -1.0;  // a candidate that cannot run is simply not a candidate
    return MedianMsPerCall(*graph, timed_runs_, stream, *events_, plan_.context);
  }

 private:
  CandidateTimer(CudaDotPlan::Impl& plan, Scratch scratch)
      : plan_(plan),
        scratch_(std::move(scratch)),
        timed_runs_(TimedRuns(plan.gemm->config().batch, plan.gemm->config().m,
                              plan.gemm->config().n, plan.gemm->config().k)) {}
  CudaDotPlan::Impl& plan_;
  Scratch scratch_;
  int timed_runs_;
  std::optional<EventPair> events_;
  std::optional<OwnedStream> stream_;
};

// The fastest candidate; a challenger replaces the heuristic's first choice only when it is
// faster by more than the noise margin over kConfirmRounds alternating rounds. Fills `summary`.
StatusOr<int> PickFastest(CandidateTimer& timer, int candidates, const std::string& context,
                          AutotuneSummary& summary) {
  // NOTE: the clocks ramp up under load; the first candidate timed on an idle GPU looked up to
  // 8% slower than it is and lost to worse kernels (H200, 2026-11-30). So: warm up first, and
  // confirm a winner against the first choice in alternating rounds before switching.
  FP8_RETURN_IF_ERROR(timer.Time(0).status());
  std::vector<double> times(static_cast<size_t>(candidates), -1.0);
  for (int i = 0; i < candidates; ++i) {
    FP8_ASSIGN_OR_RETURN(times[static_cast<size_t>(i)], timer.Time(i));
  }
  int best = -1;
  for (int i = 0; i < candidates; ++i) {
    const double t = times[static_cast<size_t>(i)];
    if (t > 0 && (best < 0 || t < times[static_cast<size_t>(best)])) best = i;
  }
  if (best < 0) return Internal("autotuning: no candidate ran [%s]", context.c_str());
  if (best != 0 && times[0] > 0) {
    double first_total = 0, best_total = 0;
    for (int round = 0; round < kConfirmRounds; ++round) {
      FP8_ASSIGN_OR_RETURN(double first, timer.Time(0));
      FP8_ASSIGN_OR_RETURN(double challenger, timer.Time(best));
      first_total += first;
      best_total += challenger;
    }
    times[0] = first_total / kConfirmRounds;
    times[static_cast<size_t>(best)] = best_total / kConfirmRounds;
    if (best_total > first_total * (1.0 - kNoiseMargin)) best = 0;  // not clearly faster
  }
  summary.candidates = candidates;
  summary.chosen = best;
  summary.first_ms = times[0];
  summary.chosen_ms = times[static_cast<size_t>(best)];
  return best;
}

// ---- Racing the engines ----------------------------------------------------------------------

// Buffers for whole runs of a dot both engines take (operands, scales and D: the own kernel has
// no C, bias or amax), the operands in as many copies as stream from HBM.
struct RaceScratch {
  std::vector<DeviceBuffer> lhs, rhs;
  DeviceBuffer lhs_scale, rhs_scale, output;
};

StatusOr<RaceScratch> MakeRaceScratch(const DotSpec& spec, const CanonicalDot& dot,
                                      const std::string& context) {
  RaceScratch s;
  FP8_ASSIGN_OR_RETURN(
      OperandCopies copies,
      StreamingOperandCopies(ElementCount(spec.lhs.dims), spec.lhs.dtype,
                             ElementCount(spec.rhs.dims), spec.rhs.dtype, context));
  s.lhs = std::move(copies.first);
  s.rhs = std::move(copies.second);
  FP8_ASSIGN_OR_RETURN(s.lhs_scale, RandomBuffer(ElementCount(spec.lhs_scale.dims), DType::kF32, 7,
                                                 0.5f, 2.0f, "engine race lhs scale"));
  FP8_ASSIGN_OR_RETURN(s.rhs_scale, RandomBuffer(ElementCount(spec.rhs_scale.dims), DType::kF32, 8,
                                                 0.5f, 2.0f, "engine race rhs scale"));
  FP8_ASSIGN_OR_RETURN(
      s.output, DeviceBuffer::Allocate(static_cast<size_t>(ElementCount(dot.output_dims) *
                                                           DTypeSizeInBytes(spec.output_type)),
                                       "engine race output"));
  return s;
}

// Median ms per run of a whole plan (every launch it makes) on the race's data.
StatusOr<double> TimePlan(CudaDotPlan& plan, const RaceScratch& s, int runs, cudaStream_t stream,
                          const EventPair& events, const std::string& context) {
  const auto run = [&](int call) {
    const size_t set = static_cast<size_t>(call) % s.lhs.size();
    CudaDotBuffers buffers;
    buffers.lhs = s.lhs[set].data();
    buffers.rhs = s.rhs[set].data();
    buffers.lhs_scale = s.lhs_scale.as<float>();
    buffers.rhs_scale = s.rhs_scale.as<float>();
    buffers.output = s.output.data();
    return plan.Run(buffers, stream);
  };
  FP8_ASSIGN_OR_RETURN(const CapturedGraph graph,
                       CapturedGraph::Capture(stream, runs, run, context));
  return MedianMsPerCall(graph, runs, stream, events, context);
}

}  // namespace

StatusOr<EngineRace> RaceEngines(const DotSpec& spec, const CanonicalDot& dot,
                                 const CudaDotOptions& options, bool own_first,
                                 const std::string& context) {
  const auto plan_on = [&](GemmEngine engine, const std::string& own_tile) {
    CudaDotOptions forced = options;
    forced.engine = engine;
    forced.own_tile = own_tile;
    return CudaDotPlan::Create(spec, forced);
  };
  EngineRace race;
  // kAuto races cuBLASLt and the own kernel's tiles, kOwn its tiles alone; each remembers its
  // winner in an entry of its own.
  const bool races_cublaslt = options.engine != GemmEngine::kOwn;
  const std::string key = (races_cublaslt ? "engine|" : "own tile|") + DotSpecKey(spec) +
                          "|own_tile=" + options.own_tile +
                          StrFormat("|interval=%d", options.own_promotion_interval) +
                          SmCountKey(options);
  if (!options.autotune_cache_path.empty()) {
    // "cuBLASLt", "own <tile>", or "own" (files from before tiles were raced: the plan's tile).
    StatusOr<std::string> remembered = LookUp(options.autotune_cache_path, key);
    if (remembered.ok() && (*remembered == "cuBLASLt" || remembered->rfind("own", 0) == 0)) {
      const bool own = *remembered != "cuBLASLt";
      const std::string tile =
          own && remembered->size() > 4 ? remembered->substr(4) : options.own_tile;
      // An entry this build cannot follow (a tile it does not have) is raced again.
      StatusOr<std::unique_ptr<CudaDotPlan>> remembered_plan =
          plan_on(own ? GemmEngine::kOwn : GemmEngine::kCublasLt, tile);
      if (remembered_plan.ok()) {
        race.raced = races_cublaslt;
        race.reason = races_cublaslt ? "autotune: the engine the cache file remembers for this dot"
                                     : "autotune: the tile the cache file remembers for this dot";
        race.plan = std::move(*remembered_plan);
        return race;
      }
    }
  }
  FP8_ASSIGN_OR_RETURN(const GemmDevice device, PlanGemmDevice(options));
  FP8_ASSIGN_OR_RETURN(
      const std::vector<std::string> tiles,
      OwnGemmTileCandidates(spec, dot, options, device,
                            std::min(options.autotune_candidates, kOwnTileCandidates)));
  // The entrants, the static rule's favourite first: it keeps the win unless another is faster
  // by more than the noise margin.
  struct Entrant {
    std::unique_ptr<CudaDotPlan> plan;
    std::string own_tile;  // "" for cuBLASLt
    double total_ms = 0;
  };
  std::vector<Entrant> entrants;
  for (const std::string& tile : tiles) {
    FP8_ASSIGN_OR_RETURN(std::unique_ptr<CudaDotPlan> own, plan_on(GemmEngine::kOwn, tile));
    entrants.push_back({std::move(own), tile});
  }
  StatusOr<std::unique_ptr<CudaDotPlan>> cublaslt = Unimplemented("the own engine was asked for");
  if (races_cublaslt) cublaslt = plan_on(GemmEngine::kCublasLt, "");
  if (!cublaslt.ok() && cublaslt.status().code() != StatusCode::kUnimplemented) {
    return cublaslt.status();
  }
  if (cublaslt.ok()) {
    const auto at = own_first ? entrants.end() : entrants.begin();
    entrants.insert(at, Entrant{std::move(*cublaslt), ""});
  }
  if (entrants.size() == 1) {  // one tile, and no cuBLASLt kernel to race it against
    race.reason = races_cublaslt ? "autotune: cuBLASLt has no kernel for this dot"
                                 : "autotune: the own kernel has one tile for this dot";
    race.plan = std::move(entrants.front().plan);
    return race;
  }

  FP8_ASSIGN_OR_RETURN(const RaceScratch scratch, MakeRaceScratch(spec, dot, context));
  FP8_ASSIGN_OR_RETURN(const EventPair events, EventPair::Create(context));
  FP8_ASSIGN_OR_RETURN(const OwnedStream stream, OwnedStream::Create(context));
  const int runs = TimedRuns(dot.batch, dot.m, dot.n, dot.k);
  // As in PickFastest: warm every entrant up (the clocks ramp up under load), then time them in
  // turn, round after round, so that a drift of the clock reaches them all alike.
  for (Entrant& entrant : entrants) {
    FP8_RETURN_IF_ERROR(
        TimePlan(*entrant.plan, scratch, runs, stream.get(), events, context).status());
  }
  for (int round = 0; round < kConfirmRounds; ++round) {
    for (Entrant& entrant : entrants) {
      FP8_ASSIGN_OR_RETURN(const double ms,
                           TimePlan(*entrant.plan, scratch, runs, stream.get(), events, context));
      entrant.total_ms += ms;
    }
  }
  Entrant* fastest = &entrants.front();
  const Entrant* fastest_own = nullptr;
  for (Entrant& entrant : entrants) {
    if (entrant.total_ms < fastest->total_ms) fastest = &entrant;
    if (entrant.own_tile.empty()) {
      race.cublaslt_ms = entrant.total_ms / kConfirmRounds;
    } else if (fastest_own == nullptr || entrant.total_ms < fastest_own->total_ms) {
      fastest_own = &entrant;
    }
  }
  Entrant& winner = fastest->total_ms < entrants.front().total_ms * (1.0 - kNoiseMargin)
                        ? *fastest
                        : entrants.front();
  race.raced = cublaslt.ok();
  race.own_ms = fastest_own->total_ms / kConfirmRounds;
  race.reason =
      StrFormat("autotune: own %.4f ms a call (%s", race.own_ms, fastest_own->own_tile.c_str());
  if (tiles.size() > 1) race.reason += StrFormat(", the fastest of %zu tiles", tiles.size());
  race.reason += ")";
  if (cublaslt.ok()) race.reason += StrFormat(", cuBLASLt %.4f ms", race.cublaslt_ms);
  if (!options.autotune_cache_path.empty()) {
    Remember(options.autotune_cache_path, key,
             winner.own_tile.empty() ? "cuBLASLt" : "own " + winner.own_tile);
  }
  race.plan = std::move(winner.plan);
  return race;
}

Status Autotune(CudaDotPlan::Impl& plan) {
  LtMatmul& gemm = *plan.gemm;
  AutotuneSummary& summary = plan.info.autotune;
  summary = AutotuneSummary();
  summary.ran = true;
  const std::string key = CacheKey(plan);
  if (ChooseRemembered(plan, key, gemm)) {
    summary.from_cache = true;
    summary.chosen = gemm.chosen();
    return OkStatus();
  }
  FP8_ASSIGN_OR_RETURN(Scratch scratch, MakeScratch(plan, gemm.config()));
  FP8_ASSIGN_OR_RETURN(CandidateTimer timer, CandidateTimer::Create(plan, std::move(scratch)));
  FP8_ASSIGN_OR_RETURN(const int best,
                       PickFastest(timer, gemm.candidate_count(), plan.context, summary));
  gemm.ChooseCandidate(best);
  if (!plan.options.autotune_cache_path.empty()) {
    Remember(plan.options.autotune_cache_path, key, gemm.AlgorithmDescription(best));
  }
  return OkStatus();
}

}  // namespace fp8dot::cuda
