// CPU fast path vs OpenBLAS sgemm on the same data already in f32: the fast path pays for the
// FP8 upcast and scales on top of the sgemm, so its ratio to sgemm is what this reports.
// Usage: cpu_gemm_bench [M N K ...]   (default 2048 2048 2048); prints a markdown table.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fp8dot/cpu_backend.h"
#include "fp8dot/dot_problem.h"

namespace {

template <typename F>
double MedianMilliseconds(int repeats, const F& run) {
  run();  // warm-up: thread pool start, page faults
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<long long> shapes = {2048, 2048, 2048};
  if (argc > 1) {
    shapes.clear();
    for (int i = 1; i < argc; ++i) shapes.push_back(std::atoll(argv[i]));
  }
  if (shapes.size() % 3 != 0) {
    std::fprintf(stderr, "usage: cpu_gemm_bench [M N K ...]\n");
    return 2;
  }
  std::printf(
      "| M | N | K | sgemm f32 ms | fp8dot BlasDot e4m3 ms | GFLOP/s sgemm | GFLOP/s fp8dot | "
      "ratio |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < shapes.size(); i += 3) {
    fp8dot::DotProblemOptions options;
    options.m = shapes[i];
    options.n = shapes[i + 1];
    options.k = shapes[i + 2];
    options.lhs_scale_mode = fp8dot::ScaleMode::kTensor;
    options.rhs_scale_mode = fp8dot::ScaleMode::kTensor;
    options.precision_config.operand_precision = {fp8dot::Precision::kHighest,
                                                  fp8dot::Precision::kHighest};
    auto problem = fp8dot::MakeDotProblem(options);
    if (!problem.ok()) {
      std::fprintf(stderr, "%s\n", problem.status().ToString().c_str());
      return 1;
    }
    const int m = static_cast<int>(options.m), n = static_cast<int>(options.n),
              k = static_cast<int>(options.k);
    std::vector<float> a(static_cast<size_t>(m) * k), b(static_cast<size_t>(k) * n),
        c(static_cast<size_t>(m) * n);
    for (size_t j = 0; j < a.size(); ++j)
      a[j] = static_cast<float>(problem->lhs.GetPhysical(static_cast<int64_t>(j)));
    for (size_t j = 0; j < b.size(); ++j)
      b[j] = static_cast<float>(problem->rhs.GetPhysical(static_cast<int64_t>(j)));
    const double sgemm_ms = MedianMilliseconds(5, [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), k, b.data(),
                  n, 0.0f, c.data(), n);
    });
    bool failed = false;
    const double fp8dot_ms = MedianMilliseconds(
        5, [&] { failed |= !fp8dot::BlasDot(problem->spec, problem->arguments()).ok(); });
    if (failed) {
      std::fprintf(stderr, "BlasDot failed\n");
      return 1;
    }
    const double flops = 2.0 * m * n * static_cast<double>(k);
    std::printf("| %d | %d | %d | %.1f | %.1f | %.1f | %.1f | %.2f |\n", m, n, k, sgemm_ms,
                fp8dot_ms, flops / sgemm_ms / 1e6, flops / fp8dot_ms / 1e6, sgemm_ms / fp8dot_ms);
  }
  return 0;
}
