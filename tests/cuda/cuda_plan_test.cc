// The plan as an object: clear errors for bad input, the host API, the plan cache, CUDA graph
// capture, autotuning with its cache file.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "cuda/cuda_test_util.h"
#include "scoped_autotune_setting.h"
#include "status_matchers.h"

namespace fp8dot {
namespace {

using testing::ExpectMatchesReference;

TEST(CudaPlanTest, BlockScalesWithFastAccumulationAreRejected) {
  FP8_SKIP_WITHOUT_GPU();
  DotProblemOptions o;
  o.m = 128;
  o.n = 128;
  o.k = 256;
  o.lhs_scale_mode = o.rhs_scale_mode = ScaleMode::kBlock1x128;
  o.precision_config.operand_precision = {Precision::kHighest, Precision::kHighest};
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(o));
  p.spec.precision_config.operand_precision = {Precision::kDefault, Precision::kDefault};
  StatusOr<std::unique_ptr<CudaDotPlan>> plan = CudaDotPlan::Create(p.spec);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(plan.status().message().find("fast accumulation"), std::string::npos)
      << plan.status().message();
}

TEST(CudaPlanTest, MissingAndMisalignedBuffersAreClearErrors) {
  FP8_SKIP_WITHOUT_GPU();
  DotProblemOptions o;
  o.lhs_scale_mode = o.rhs_scale_mode = ScaleMode::kTensor;
  o.output_type = DType::kBF16;
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(o));
  FP8_ASSERT_OK_AND_ASSIGN(p.rhs,
                           testing::WithLayout(p.rhs, {0, 1}));  // TN: both operands read in place
  p.spec.rhs = TensorSpec::Of(p.rhs);
  StatusOr<std::unique_ptr<CudaDotPlan>> plan = CudaDotPlan::Create(p.spec);
  FP8_ASSERT_OK(plan.status());
  FP8_ASSERT_OK_AND_ASSIGN(const CanonicalDot dot, ValidateDotSpec(p.spec));
  StatusOr<testing::GpuBuffers> buffers = testing::MakeGpuBuffers(p, dot);
  FP8_ASSERT_OK(buffers.status());

  CudaDotBuffers missing = buffers->pointers;
  missing.rhs_scale = nullptr;
  Status status = (*plan)->Run(missing, nullptr);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("rhs scale buffer is missing"), std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("M=64 N=64 K=256"), std::string::npos) << status.message();

  CudaDotBuffers misaligned = buffers->pointers;
  misaligned.lhs = static_cast<const uint8_t*>(misaligned.lhs) + 8;
  status = (*plan)->Run(misaligned, nullptr);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("not 16-byte aligned"), std::string::npos) << status.message();

  CudaDotBuffers extra = buffers->pointers;
  extra.amax = reinterpret_cast<float*>(buffers->pointers.output);
  status = (*plan)->Run(extra, nullptr);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
}

// An output over memory the dot reads (or amax over the output) would be a silently wrong
// result: refused, naming both buffers. C over D is the one overlap allowed (an in-place
// update), and gives the same bits as a separate C.
TEST(CudaPlanTest, OutputOverlappingAnotherBufferIsRefusedExceptInPlaceC) {
  FP8_SKIP_WITHOUT_GPU();
  DotProblemOptions o;
  o.m = 128;
  o.n = 128;
  o.k = 256;
  o.lhs_scale_mode = o.rhs_scale_mode = ScaleMode::kTensor;
  o.output_type = DType::kBF16;
  o.compute_amax = true;
  o.seed = 91;
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(o));
  FP8_ASSERT_OK_AND_ASSIGN(p.c,
                           RandomTensor(DType::kBF16, {128, 128}, Distribution::kSymmetric, 92));
  p.spec.c = TensorSpec::Of(*p.c);
  p.spec.beta = 0.5;
  FP8_ASSERT_OK_AND_ASSIGN(std::unique_ptr<CudaDotPlan> plan, CudaDotPlan::Create(p.spec));
  FP8_ASSERT_OK_AND_ASSIGN(const CanonicalDot dot, ValidateDotSpec(p.spec));
  FP8_ASSERT_OK_AND_ASSIGN(testing::GpuBuffers buffers, testing::MakeGpuBuffers(p, dot));

  struct Case {
    const char* what;
    CudaDotBuffers pointers;
  };
  std::vector<Case> cases;
  // lhs is 128x256 e4m3 (32 KiB), the output 128x128 bf16 (32 KiB): the output written from
  // lhs's middle on overlaps it.
  CudaDotBuffers over_lhs = buffers.pointers;
  over_lhs.output = const_cast<uint8_t*>(static_cast<const uint8_t*>(over_lhs.lhs) + 4096);
  cases.push_back({"lhs and output overlap", over_lhs});
  CudaDotBuffers over_rhs = buffers.pointers;
  over_rhs.output = const_cast<void*>(over_rhs.rhs);
  cases.push_back({"rhs and output overlap", over_rhs});
  CudaDotBuffers over_scale = buffers.pointers;
  over_scale.output = const_cast<float*>(over_scale.rhs_scale);
  cases.push_back({"rhs scale and output overlap", over_scale});
  CudaDotBuffers c_inside = buffers.pointers;
  c_inside.c = static_cast<const uint8_t*>(c_inside.output) + 256;  // not C == D: shifted
  cases.push_back({"C and output overlap", c_inside});
  CudaDotBuffers amax_in_output = buffers.pointers;
  amax_in_output.amax = reinterpret_cast<float*>(static_cast<uint8_t*>(amax_in_output.output) + 64);
  cases.push_back({"output and amax overlap", amax_in_output});
  for (const Case& c : cases) {
    const Status status = plan->Run(c.pointers, nullptr);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << c.what;
    EXPECT_NE(status.message().find(c.what), std::string::npos) << status.message();
    EXPECT_NE(status.message().find("M=128 N=128 K=256"), std::string::npos) << status.message();
  }

  // A separate C, checked against the reference, then C in D's own memory: the same bits.
  FP8_ASSERT_OK(plan->Run(buffers.pointers, nullptr));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  FP8_ASSERT_OK_AND_ASSIGN(DotResult separate, testing::Download(buffers, p.spec, dot));
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor exact, ReferenceDotExact(p.spec, p.arguments()));
  FP8_ASSERT_OK_AND_ASSIGN(ErrorStats error, CompareToReference(separate.output, exact, 1.0));
  EXPECT_EQ(error.nonfinite_mismatches, 0);
  EXPECT_LE(error.relative_frobenius, testing::Tolerance(p.spec, dot));
  const size_t out_bytes = buffers.output.size();
  ASSERT_EQ(
      cudaMemcpy(buffers.pointers.output, buffers.pointers.c, out_bytes, cudaMemcpyDeviceToDevice),
      cudaSuccess);
  CudaDotBuffers in_place = buffers.pointers;
  in_place.c = in_place.output;
  FP8_ASSERT_OK(plan->Run(in_place, nullptr));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  FP8_ASSERT_OK_AND_ASSIGN(DotResult updated, testing::Download(buffers, p.spec, dot));
  EXPECT_EQ(std::memcmp(updated.output.data(), separate.output.data(), out_bytes), 0);
  EXPECT_EQ(updated.amax, separate.amax);
}

// Plans pick their algorithm for 256-byte aligned pointers (cudaMalloc's); pointers that are only
// 16-byte aligned run the heuristic's 16-byte algorithm instead, with the same result quality.
TEST(CudaPlanTest, SixteenByteAlignedPointersRunCorrectly) {
  FP8_SKIP_WITHOUT_GPU();
  DotProblemOptions o;
  o.m = 128;
  o.n = 256;
  o.k = 1024;
  o.output_type = DType::kBF16;
  o.seed = 16;
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(o));
  FP8_ASSERT_OK_AND_ASSIGN(p.rhs,
                           testing::WithLayout(p.rhs, {0, 1}));  // TN: both operands read in place
  p.spec.rhs = TensorSpec::Of(p.rhs);
  FP8_ASSERT_OK_AND_ASSIGN(const CanonicalDot dot, ValidateDotSpec(p.spec));
  StatusOr<std::unique_ptr<CudaDotPlan>> plan = CudaDotPlan::Create(p.spec);
  FP8_ASSERT_OK(plan.status());
  std::printf("%s", (*plan)->Explain().c_str());
  constexpr size_t kOffset = 16;
  const size_t out_bytes = static_cast<size_t>(dot.m * dot.n * 2);
  StatusOr<DeviceBuffer> lhs = DeviceBuffer::Allocate(p.lhs.size_in_bytes() + kOffset, "lhs");
  StatusOr<DeviceBuffer> rhs = DeviceBuffer::Allocate(p.rhs.size_in_bytes() + kOffset, "rhs");
  StatusOr<DeviceBuffer> out = DeviceBuffer::Allocate(out_bytes + kOffset, "out");
  FP8_ASSERT_OK(lhs.status());
  FP8_ASSERT_OK(rhs.status());
  FP8_ASSERT_OK(out.status());
  uint8_t* lhs_at = lhs->as<uint8_t>() + kOffset;
  uint8_t* rhs_at = rhs->as<uint8_t>() + kOffset;
  uint8_t* out_at = out->as<uint8_t>() + kOffset;
  ASSERT_EQ(cudaMemcpy(lhs_at, p.lhs.data(), static_cast<size_t>(p.lhs.size_in_bytes()),
                       cudaMemcpyHostToDevice),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpy(rhs_at, p.rhs.data(), static_cast<size_t>(p.rhs.size_in_bytes()),
                       cudaMemcpyHostToDevice),
            cudaSuccess);
  ASSERT_EQ(cudaMemset(out_at, 0xFF, out_bytes), cudaSuccess);  // poison: NaN in bf16
  CudaDotBuffers buffers;
  buffers.lhs = lhs_at;
  buffers.rhs = rhs_at;
  buffers.output = out_at;
  FP8_ASSERT_OK((*plan)->Run(buffers, nullptr));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor d, HostTensor::Create(DType::kBF16, dot.output_dims));
  ASSERT_EQ(cudaMemcpy(d.data(), out_at, out_bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  FP8_ASSERT_OK_AND_ASSIGN(const HostTensor exact, ReferenceDotExact(p.spec, p.arguments()));
  FP8_ASSERT_OK_AND_ASSIGN(const ErrorStats error, CompareToReference(d, exact));
  EXPECT_EQ(error.nonfinite_mismatches, 0);
  EXPECT_LT(error.relative_frobenius,
            testing::AccumulationTolerance(AccumulationMode::kFp8Fast, dot.k) +
                1.1 * std::ldexp(1.0, -8));
}

TEST(CudaPlanTest, OutOfDeviceMemoryIsResourceExhausted) {
  FP8_SKIP_WITHOUT_GPU();
  DotProblemOptions o;
  CudaDotOptions options;
  options.workspace_bytes = size_t{1} << 50;  // 1 PiB of workspace
  FP8_ASSERT_OK_AND_ASSIGN(const DotProblem p, MakeDotProblem(o));
  StatusOr<std::unique_ptr<CudaDotPlan>> plan = CudaDotPlan::Create(p.spec, options);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kResourceExhausted) << plan.status().ToString();
  EXPECT_NE(plan.status().message().find("cudaErrorMemoryAllocation"), std::string::npos)
      << plan.status().message();
  // The process is still usable afterwards.
  ExpectMatchesReference(p, "after an out-of-memory error");
}

TEST(CudaPlanTest, HostApiMatchesTheReferenceAndCachesPlans) {
  FP8_SKIP_WITHOUT_GPU();
  DotProblemOptions o;
  o.m = 96;
  o.n = 64;
  o.k = 512;
  o.output_type = DType::kF8E4M3FN;
  o.output_scale = 4.0;
  o.compute_amax = true;
  o.epilogue = Epilogue::kBiasRelu;
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(o));
  FP8_ASSERT_OK_AND_ASSIGN(const HostTensor exact, ReferenceDotExact(p.spec, p.arguments()));
  testing::FitOutputScale(p, exact);  // 4.0 would saturate most of D
  CudaDotStats stats;
  StatusOr<DotResult> result = CudaDot(p.spec, p.arguments(), &stats);
  FP8_ASSERT_OK(result.status());
  FP8_ASSERT_OK_AND_ASSIGN(
      ErrorStats error, CompareToReference(result->output, exact, p.output_scale->GetPhysical(0)));
  FP8_ASSERT_OK_AND_ASSIGN(const CanonicalDot dot, ValidateDotSpec(p.spec));
  EXPECT_EQ(error.nonfinite_mismatches, 0);
  EXPECT_LE(error.relative_frobenius, testing::Tolerance(p.spec, dot)) << stats.plan->Explain();
  EXPECT_GT(stats.milliseconds, 0.0);
  EXPECT_NE(stats.plan->Explain().find("cuda plan"), std::string::npos);
  ASSERT_TRUE(result->amax.has_value());
  StatusOr<CudaDotPlan*> first = GetCachedCudaDotPlan(p.spec);
  StatusOr<CudaDotPlan*> second = GetCachedCudaDotPlan(p.spec);
  FP8_ASSERT_OK(first.status());
  FP8_ASSERT_OK(second.status());
  EXPECT_EQ(*first, *second);
  // Wrong arguments for the spec: a clear error, not a crash.
  DotArguments wrong = p.arguments();
  wrong.bias = nullptr;
  StatusOr<DotResult> bad = CudaDot(p.spec, wrong);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

// CudaDotOptions::sm_count_target reaches cuBLASLt's descriptor (Explain names it) and the
// result still matches the reference, for fast and promoted accumulation; the cached plans of
// two targets are two plans; a negative target is an error that names it.
TEST(CudaPlanTest, SmCountTargetReachesCublasLtAndANegativeOneIsAnError) {
  FP8_SKIP_WITHOUT_GPU();
  for (const Precision precision : {Precision::kDefault, Precision::kHighest}) {
    DotProblemOptions o;
    o.m = 256;
    o.n = 512;
    o.k = 2048;
    o.seed = 1700;
    o.precision_config.operand_precision = {precision, precision};
    FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(o));
    FP8_ASSERT_OK_AND_ASSIGN(const CanonicalDot dot, ValidateDotSpec(p.spec));
    CudaDotOptions options;
    options.engine = GemmEngine::kCublasLt;
    options.sm_count_target = 16;
    StatusOr<testing::GpuRun> run = testing::RunOnGpu(p, options);
    FP8_ASSERT_OK(run.status());
    EXPECT_NE(run->explain.find("CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET = 16"), std::string::npos)
        << run->explain;
    FP8_ASSERT_OK_AND_ASSIGN(const HostTensor exact, ReferenceDotExact(p.spec, p.arguments()));
    FP8_ASSERT_OK_AND_ASSIGN(const ErrorStats error, CompareToReference(run->result.output, exact));
    EXPECT_EQ(error.nonfinite_mismatches, 0);
    EXPECT_LE(error.relative_frobenius, testing::Tolerance(p.spec, dot)) << run->explain;
    FP8_ASSERT_OK_AND_ASSIGN(CudaDotPlan * held, GetCachedCudaDotPlan(p.spec, options));
    options.sm_count_target = 0;
    FP8_ASSERT_OK_AND_ASSIGN(CudaDotPlan * whole, GetCachedCudaDotPlan(p.spec, options));
    EXPECT_NE(held, whole);
    EXPECT_EQ(whole->Explain().find("SM_COUNT_TARGET"), std::string::npos);
    options.sm_count_target = -1;
    StatusOr<std::unique_ptr<CudaDotPlan>> refused = CudaDotPlan::Create(p.spec, options);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(refused.status().message().find("sm_count_target -1"), std::string::npos)
        << refused.status().message();
  }
}

// Run() allocates nothing and synchronises nothing, so a whole plan (gathers, relayouts, GEMM,
// epilogue) can be captured into a CUDA graph and replayed.
TEST(CudaPlanTest, RunsInsideCudaGraphCapture) {
  FP8_SKIP_WITHOUT_GPU();
  DotProblemOptions o;
  o.m = 100;  // N=70 not aligned for an FP8 D: padded and sliced back
  o.n = 70;
  o.k = 200;  // K padded
  o.output_type = DType::kF8E4M3FN;
  o.output_scale = 1.0;
  o.compute_amax = true;
  o.lhs_scale_mode = o.rhs_scale_mode = ScaleMode::kOuterVector;
  o.epilogue = Epilogue::kBias;
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(o));
  FP8_ASSERT_OK_AND_ASSIGN(const HostTensor exact, ReferenceDotExact(p.spec, p.arguments()));
  testing::FitOutputScale(p, exact);
  FP8_ASSERT_OK_AND_ASSIGN(const CanonicalDot dot, ValidateDotSpec(p.spec));
  StatusOr<std::unique_ptr<CudaDotPlan>> plan = CudaDotPlan::Create(p.spec);
  FP8_ASSERT_OK(plan.status());
  StatusOr<testing::GpuBuffers> buffers = testing::MakeGpuBuffers(p, dot);
  FP8_ASSERT_OK(buffers.status());

  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  const Status captured = (*plan)->Run(buffers->pointers, stream);
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  FP8_ASSERT_OK(captured);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  for (int replay = 0; replay < 3; ++replay) ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  StatusOr<DotResult> result = testing::Download(*buffers, p.spec, dot);
  FP8_ASSERT_OK(result.status());
  FP8_ASSERT_OK_AND_ASSIGN(
      ErrorStats error, CompareToReference(result->output, exact, p.output_scale->GetPhysical(0)));
  EXPECT_EQ(error.nonfinite_mismatches, 0);
  EXPECT_LE(error.relative_frobenius, testing::Tolerance(p.spec, dot)) << (*plan)->Explain();
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

// The bytes of a run's output, after the device finished.
std::vector<uint8_t> OutputBytes(const testing::GpuBuffers& buffers) {
  std::vector<uint8_t> bytes(buffers.output.size());
  EXPECT_EQ(cudaMemcpy(bytes.data(), buffers.output.data(), bytes.size(), cudaMemcpyDeviceToHost),
            cudaSuccess);
  return bytes;
}

// Two problems of one spec (seeds first_seed and first_seed + 1) and one plan for them, each
// run alone first: its output matches the reference, and is kept to compare later runs with.
// The outputs are poisoned again afterwards.
struct TwoProblemsOnOnePlan {
  std::unique_ptr<CudaDotPlan> plan;
  std::vector<testing::GpuBuffers> buffers;
  std::vector<std::vector<uint8_t>> alone;  // each output run alone
};

void RunEachAlone(DotProblemOptions o, const CudaDotOptions& options, uint64_t first_seed,
                  TwoProblemsOnOnePlan& two) {
  std::vector<DotProblem> problems;
  for (uint64_t seed : {first_seed, first_seed + 1}) {
    o.seed = seed;
    FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(o));
    problems.push_back(std::move(p));
  }
  FP8_ASSERT_OK_AND_ASSIGN(const CanonicalDot dot, ValidateDotSpec(problems[0].spec));
  FP8_ASSERT_OK_AND_ASSIGN(two.plan, CudaDotPlan::Create(problems[0].spec, options));
  for (const DotProblem& p : problems) {
    FP8_ASSERT_OK_AND_ASSIGN(testing::GpuBuffers g, testing::MakeGpuBuffers(p, dot));
    FP8_ASSERT_OK(two.plan->Run(g.pointers, nullptr));
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    FP8_ASSERT_OK_AND_ASSIGN(const HostTensor exact, ReferenceDotExact(p.spec, p.arguments()));
    FP8_ASSERT_OK_AND_ASSIGN(const DotResult result, testing::Download(g, p.spec, dot));
    FP8_ASSERT_OK_AND_ASSIGN(const ErrorStats error, CompareToReference(result.output, exact, 1.0));
    EXPECT_EQ(error.nonfinite_mismatches, 0);
    EXPECT_LE(error.relative_frobenius, testing::Tolerance(p.spec, dot)) << two.plan->Explain();
    two.alone.push_back(OutputBytes(g));
    ASSERT_EQ(cudaMemset(g.output.data(), 0xFF, g.output.size()), cudaSuccess);  // poison again
    two.buffers.push_back(std::move(g));
  }
  ASSERT_NE(two.alone[0], two.alone[1]);
}

// After the device finished: each output is the one its problem gave alone.
void ExpectOutputsAsAlone(const TwoProblemsOnOnePlan& two) {
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ(OutputBytes(two.buffers[i]), two.alone[i]) << "problem " << i;
}

// Runs two problems of one spec through one plan on two streams at once, 20 rounds: each
// output must be the one its problem gives alone, whatever ran beside it.
void ExpectRunsOnTwoStreamsMatchRunsAlone(DotProblemOptions o, const CudaDotOptions& options = {}) {
  TwoProblemsOnOnePlan two;
  RunEachAlone(o, options, 71, two);
  if (::testing::Test::HasFatalFailure()) return;
  if (options.workspace_bytes == 0) {  // the algorithm takes no workspace: no ordering
    EXPECT_NE(two.plan->info().algorithm.find("workspace=0"), std::string::npos)
        << two.plan->info().algorithm;
  }
  cudaStream_t streams[2] = {nullptr, nullptr};
  for (cudaStream_t& stream : streams) {
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  }
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 2; ++i) FP8_ASSERT_OK(two.plan->Run(two.buffers[i].pointers, streams[i]));
  }
  ExpectOutputsAsAlone(two);
  for (cudaStream_t stream : streams) cudaStreamDestroy(stream);
}

TEST(CudaPlanTest, RunsOfOnePlanOnTwoStreamsDoNotShareItsBuffersAtOnce) {
  FP8_SKIP_WITHOUT_GPU();
  // e5m2 x e5m2 converts both operands into the plan's own buffers before the GEMM, and the
  // unaligned N pads D there: the runs are ordered across streams.
  DotProblemOptions o;
  o.m = 384;
  o.n = 1000;
  o.k = 2048;
  o.lhs_type = o.rhs_type = DType::kF8E5M2;
  o.output_type = DType::kBF16;
  o.lhs_scale_mode = o.rhs_scale_mode = ScaleMode::kTensor;
  ExpectRunsOnTwoStreamsMatchRunsAlone(o);
  // e4m3 with aligned shapes and no workspace is one cuBLASLt call on the caller's buffers that
  // writes no memory of the plan's: the runs are not ordered, and must not need to be.
  o.n = 1024;
  o.lhs_type = o.rhs_type = DType::kF8E4M3FN;
  CudaDotOptions no_workspace;
  no_workspace.workspace_bytes = 0;
  ExpectRunsOnTwoStreamsMatchRunsAlone(o, no_workspace);
}

// The stream a plan last ran on may be gone by its next run (the autotuner races plans on a
// stream of its own and destroys it; a framework's side streams come and go), and a stream
// created later may get the destroyed one's handle: runs alternate between two problems, each
// on a new stream, the one before destroyed with its run still pending. Every output must be
// the one its problem gives alone: the plan neither touches a destroyed stream nor takes a new
// stream for the old one (it tells them apart by CUDA's stream ID, not the handle).
TEST(CudaPlanTest, RunsAfterTheLastRunsStreamWasDestroyed) {
  FP8_SKIP_WITHOUT_GPU();
  DotProblemOptions o;
  o.m = 512;
  o.n = 1000;
  o.k = 4096;
  o.lhs_type = o.rhs_type = DType::kF8E5M2;  // converted into the plan's own buffers
  o.output_type = DType::kBF16;
  o.lhs_scale_mode = o.rhs_scale_mode = ScaleMode::kTensor;
  TwoProblemsOnOnePlan two;
  RunEachAlone(o, {}, 73, two);
  if (HasFatalFailure()) return;
  cudaStream_t previous = nullptr;
  for (int round = 0; round < 12; ++round) {
    cudaStream_t stream = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    FP8_ASSERT_OK(two.plan->Run(two.buffers[round % 2].pointers, stream));
    if (previous != nullptr) {
      ASSERT_EQ(cudaStreamDestroy(previous), cudaSuccess);
    }
    previous = stream;
  }
  ASSERT_EQ(cudaStreamDestroy(previous), cudaSuccess);
  FP8_ASSERT_OK(two.plan->Run(two.buffers[0].pointers, nullptr));  // the legacy stream, last
  ExpectOutputsAsAlone(two);
}

TEST(CudaPlanTest, AutotuningPicksACandidateAndRemembersIt) {
  FP8_SKIP_WITHOUT_GPU();
  const std::string cache_path = ::testing::TempDir() + "fp8dot_autotune_test.txt";
  std::remove(cache_path.c_str());
  DotProblemOptions o;
  o.m = 512;
  o.n = 512;
  o.k = 1024;
  o.output_type = DType::kBF16;
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(o));
  CudaDotOptions options;
  options.autotune_candidates = 8;
  options.autotune_cache_path = cache_path;
  ExpectMatchesReference(p, "autotuned", 0.0, options);
  StatusOr<std::unique_ptr<CudaDotPlan>> plan = CudaDotPlan::Create(p.spec, options);
  FP8_ASSERT_OK(plan.status());
  EXPECT_NE((*plan)->Explain().find("autotuning: taken from"), std::string::npos)
      << (*plan)->Explain();
  std::ifstream in(cache_path);
  std::string line;
  ASSERT_TRUE(static_cast<bool>(std::getline(in, line)));
  EXPECT_NE(line.find("id="), std::string::npos) << line;
}

// Plans made on a caller's behalf (the torch ops, the JAX handlers, the C API) take the
// process's autotuning setting: SetDefaultAutotune, or FP8DOT_AUTOTUNE in the environment.
TEST(CudaPlanTest, PlansMadeOnACallersBehalfTakeTheProcessAutotuning) {
  FP8_SKIP_WITHOUT_GPU();
  DotProblemOptions o;
  o.m = 384;  // a shape no other test of this process caches a plan for
  o.n = 640;
  o.k = 1152;
  o.output_type = DType::kBF16;
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(o));
  const testing::ScopedAutotuneSetting restore;
  FP8_ASSERT_OK(SetDefaultAutotune({.candidates = 4}));
  FP8_ASSERT_OK_AND_ASSIGN(CudaDotOptions options, DefaultCudaDotOptions());
  ExpectMatchesReference(p, "autotuned by the process's setting", 0.0, options);
  StatusOr<CudaDotPlan*> plan = GetCachedCudaDotPlan(p.spec);
  FP8_ASSERT_OK(SetDefaultAutotune({.candidates = 0}));
  FP8_ASSERT_OK(plan.status());
  EXPECT_TRUE((*plan)->info().autotune.ran) << (*plan)->Explain();
  EXPECT_GT((*plan)->info().autotune.candidates, 0) << (*plan)->Explain();
  // Off again: the same spec gets another plan, made without autotuning.
  StatusOr<CudaDotPlan*> untuned = GetCachedCudaDotPlan(p.spec);
  FP8_ASSERT_OK(untuned.status());
  EXPECT_NE(*untuned, *plan);
  EXPECT_FALSE((*untuned)->info().autotune.ran) << (*untuned)->Explain();
}

}  // namespace
}  // namespace fp8dot
