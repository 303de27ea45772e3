// Development sweep: fp8dot's own slice GEMM (src/cuda/kernels/fp8_slice_gemm.h) over tiles and
// slice counts on the small-M shapes, against the time a pure read of the same operand bytes
// takes (the HBM floor). Same method as gpu_bench's graph timing: inputs rotate among enough
// copies to stream from HBM, a CUDA graph of 20 calls, median of 7 replays.
//
//   slice_gemm_sweep [M,N,K ...]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "cuda/kernels/dot_epilogue.h"
#include "cuda/kernels/fill_random.h"
#include "cuda/kernels/fp8_slice_gemm.h"

namespace fp8dot::cuda {
namespace {

constexpr int kGraphCalls = 20;
constexpr int kReplays = 7;

#define SWEEP_CHECK(call)                                                                  \
  do {                                                                                     \
    cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s: %s (line %d)\n", #call, cudaGetErrorString(e_), __LINE__); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)
#define SWEEP_OK(expr)                                                \
  do {                                                                \
    Status s_ = (expr);                                               \
    if (!s_.ok()) {                                                   \
      std::fprintf(stderr, "%s: %s\n", #expr, s_.ToString().c_str()); \
      std::exit(1);                                                   \
    }                                                                 \
  } while (0)

// Reads `bytes` (multiple of 16) and writes one word per block so the reads are not dead.
__global__ void read_kernel(const uint4* data, int64_t count, unsigned* sink) {
  unsigned x = 0;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    const uint4 v = __ldg(data + i);
    x ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (x == 0x12345678u) sink[blockIdx.x] = x;
}

// Median microseconds per call of `call(i)` (i = the call's index, for rotating inputs).
double TimeGraph(cudaStream_t stream, const std::function<void(int)>& call) {
  cudaGraph_t graph;
  SWEEP_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < kGraphCalls; ++i) call(i);
  SWEEP_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  SWEEP_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  cudaEvent_t start, stop;
  SWEEP_CHECK(cudaEventCreate(&start));
  SWEEP_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < 3; ++i) SWEEP_CHECK(cudaGraphLaunch(exec, stream));
  std::vector<float> ms;
  for (int r = 0; r < kReplays; ++r) {
    SWEEP_CHECK(cudaEventRecord(start, stream));
    SWEEP_CHECK(cudaGraphLaunch(exec, stream));
    SWEEP_CHECK(cudaEventRecord(stop, stream));
    SWEEP_CHECK(cudaEventSynchronize(stop));
    float t = 0;
    SWEEP_CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  SWEEP_CHECK(cudaGraphExecDestroy(exec));
  SWEEP_CHECK(cudaGraphDestroy(graph));
  SWEEP_CHECK(cudaEventDestroy(start));
  SWEEP_CHECK(cudaEventDestroy(stop));
  return ms[ms.size() / 2] * 1e3 / kGraphCalls;
}

void Sweep(int64_t m, int64_t n, int64_t k, cudaStream_t stream) {
  const int64_t set_bytes = m * k + n * k;
  int l2 = 0;
  SWEEP_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  const int sets = static_cast<int>(std::min<int64_t>(32, 3 * l2 / set_bytes + 1));
  std::vector<void*> a(sets), b(sets);
  for (int s = 0; s < sets; ++s) {
    SWEEP_CHECK(cudaMalloc(&a[s], m * k));
    SWEEP_CHECK(cudaMalloc(&b[s], n * k));
    SWEEP_OK(LaunchFillRandom(a[s], DType::kF8E4M3FN, m * k, 1 + s, -2.0f, 2.0f, stream));
    SWEEP_OK(LaunchFillRandom(b[s], DType::kF8E4M3FN, n * k, 100 + s, -2.0f, 2.0f, stream));
  }
  void* d = nullptr;
  SWEEP_CHECK(cudaMalloc(&d, m * n * 2));
  unsigned* sink = nullptr;
  SWEEP_CHECK(cudaMalloc(&sink, 4096 * sizeof(unsigned)));
  const double flops = 2.0 * m * n * k;

  // The floor: reading B and A once each from HBM.
  const double read_us = TimeGraph(stream, [&](int i) {
    read_kernel<<<132 * 8, 512, 0, stream>>>(static_cast<const uint4*>(b[i % sets]), n * k / 16,
                                             sink);
    read_kernel<<<132, 512, 0, stream>>>(static_cast<const uint4*>(a[i % sets]), m * k / 16, sink);
  });
  const double read1_us = TimeGraph(stream, [&](int i) {
    read_kernel<<<132 * 8, 512, 0, stream>>>(static_cast<const uint4*>(b[i % sets]), n * k / 16,
                                             sink);
  });
  std::printf("%ld,%ld,%ld read A+B: %.2f us (%.2f TB/s), B alone %.2f us (%.2f TB/s), %d sets\n",
              m, n, k, read_us, set_bytes / read_us * 1e-6, read1_us, n * k / read1_us * 1e-6,
              sets);

  for (SliceGemmTile tile : {SliceGemmTile::k64x128, SliceGemmTile::k128x128}) {
    if (tile == SliceGemmTile::k128x128 && m < 128) continue;
    for (bool fast : {true, false}) {
      for (int slices : {1, 2, 4, 7, 8, 14, 16}) {
        SliceGemmConfig config{tile, fast, DType::kF8E4M3FN, DType::kF8E4M3FN, m, n, k, slices};
        if (!SliceGemmRejection(config).empty()) continue;
        auto gemm = Fp8SliceGemm::Create(config, "sweep");
        SWEEP_OK(gemm.status());
        float* partials = nullptr;
        SWEEP_CHECK(cudaMalloc(&partials, slices * m * n * sizeof(float)));
        EpilogueParams epilogue;
        epilogue.s = partials;
        epilogue.s_ld = n;
        epilogue.slices = slices;
        epilogue.s_slice_stride = m * n;
        epilogue.m = m;
        epilogue.n = n;
        epilogue.out = d;
        epilogue.out_type = DType::kBF16;
        const double gemm_us = TimeGraph(stream, [&](int i) {
          SWEEP_OK((*gemm)->Run(a[i % sets], b[i % sets], partials, stream));
        });
        const double total_us = TimeGraph(stream, [&](int i) {
          SWEEP_OK((*gemm)->Run(a[i % sets], b[i % sets], partials, stream));
          SWEEP_OK(LaunchEpilogue(epilogue, stream, "sweep"));
        });
        std::printf(
            "%ld,%ld,%ld %-11s %-8s slices=%2d gemm %7.2f us (%4.0f TFLOP/s)  +epilogue %7.2f us "
            "(%4.0f TFLOP/s, %.2f TB/s)\n",
            m, n, k, SliceGemmTileName(tile), fast ? "fast" : "promoted", slices, gemm_us,
            flops / gemm_us * 1e-6, total_us, flops / total_us * 1e-6, set_bytes / total_us * 1e-6);
        SWEEP_CHECK(cudaFree(partials));
      }
    }
  }
  for (int s = 0; s < sets; ++s) {
    SWEEP_CHECK(cudaFree(a[s]));
    SWEEP_CHECK(cudaFree(b[s]));
  }
  SWEEP_CHECK(cudaFree(d));
  SWEEP_CHECK(cudaFree(sink));
}

}  // namespace
}  // namespace fp8dot::cuda

int main(int argc, char** argv) {
  std::vector<std::string> shapes(argv + 1, argv + argc);
  if (shapes.empty()) shapes = {"128,7168,2048", "64,4096,7168", "128,4096,7168"};
  cudaStream_t stream;
  SWEEP_CHECK(cudaStreamCreate(&stream));
  for (const std::string& shape : shapes) {
    long m = 0, n = 0, k = 0;
    if (std::sscanf(shape.c_str(), "%ld,%ld,%ld", &m, &n, &k) != 3) {
      std::fprintf(stderr, "bad shape '%s' (want M,N,K)\n", shape.c_str());
      return 2;
    }
    fp8dot::cuda::Sweep(m, n, k, stream);
  }
  return 0;
}
