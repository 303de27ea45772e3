// The CPU emulation against golden vectors recorded on an H200 through the CUDA backend
// (tests/cpu/testdata/h200/README.md says how they were produced).
//   probe/   crafted single dot products (fp8dot probe --record): must agree bit for bit.
//   random/  fp8dot accuracy --record, M=N=16: agreement fraction and error statistics.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include "fp8dot/cpu_backend.h"
#include "fp8dot/error_metrics.h"
#include "fp8dot/npy.h"

namespace fp8dot {
namespace {

namespace fs = std::filesystem;

const std::string kGoldenDir = std::string(FP8DOT_SOURCE_DIR) + "/tests/cpu/testdata/h200";

struct ModeAgreement {
  int64_t identical = 0;
  int64_t total = 0;
  double gpu_error = 0;        // relative Frobenius error of the H200 result vs exact
  double emulation_error = 0;  // same for the emulation
};

struct CaseAgreement {
  std::string name;
  int64_t k = 0;
  ModeAgreement fast, promoted;
};

// Runs the emulation on a recorded case and compares it with the recorded H200 outputs.
CaseAgreement CompareCase(const std::string& prefix) {
  CaseAgreement result;
  result.name = fs::path(prefix).filename().string();
  HostTensor lhs = *ReadNpy(prefix + ".lhs.npy");
  HostTensor rhs = *ReadNpy(prefix + ".rhs.npy");
  result.k = lhs.dim(1);
  DotArguments arguments{&lhs, &rhs};
  for (bool fast : {true, false}) {
    HostTensor gpu = *ReadNpy(prefix + (fast ? ".fast.npy" : ".promoted.npy"));
    DotSpec spec = SpecFromArguments(arguments, DotSpec());
    const Precision precision = fast ? Precision::kDefault : Precision::kHighest;
    spec.precision_config.operand_precision = {precision, precision};
    Fp8AccumulatorModel model;
    // cuBLASLt's plan at M=N=16, K=16384 splits K in 6 (read back from the algorithm by
    // `fp8dot dot --backend cuda --explain` on the H200, 2026-11-30).
    if (result.k == 16384) model.split.slices = 6;
    DotResult emulated = *EmulatedDot(spec, arguments, model);
    HostTensor exact = *ReferenceDotExact(spec, arguments);
    ModeAgreement& mode = fast ? result.fast : result.promoted;
    mode.total = gpu.element_count();
    for (int64_t i = 0; i < mode.total; ++i) {
      mode.identical += gpu.GetPhysical(i) == emulated.output.GetPhysical(i);
    }
    mode.gpu_error = CompareToReference(gpu, exact)->relative_frobenius;
    mode.emulation_error = CompareToReference(emulated.output, exact)->relative_frobenius;
  }
  return result;
}

std::vector<std::string> CasePrefixes(const std::string& dir) {
  std::vector<std::string> prefixes;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string path = entry.path().string();
    const std::string suffix = ".lhs.npy";
    if (path.size() > suffix.size() &&
        path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) {
      prefixes.push_back(path.substr(0, path.size() - suffix.size()));
    }
  }
  std::sort(prefixes.begin(), prefixes.end());
  return prefixes;
}

TEST(GoldenTest, CraftedProbesAgreeBitForBit) {
  const std::vector<std::string> cases = CasePrefixes(kGoldenDir + "/probe");
  ASSERT_EQ(cases.size(), 42u);  // 21 cases at K=1024 and at K=4096
  for (const std::string& prefix : cases) {
    CaseAgreement agreement = CompareCase(prefix);
    EXPECT_EQ(agreement.fast.identical, agreement.fast.total) << agreement.name << " fast";
    EXPECT_EQ(agreement.promoted.identical, agreement.promoted.total)
        << agreement.name << " promoted";
  }
}

// Prints the agreement table (docs/accuracy.md quotes it) and guards what the model achieves
// today (issue #5 is still open; these bounds are the measured state, not a fit):
// - same-sign data, fast, K <= 4096: the emulation reproduces the H200 bit for bit (>= 99%);
// - fast error statistics within 30% of the H200's for K <= 4096 (worst today: 26%, mixed data
//   at K=64). At K=16384 cuBLASLt's kernel splits K and the H200's fast error is 2-5x lower than
//   the one-accumulator model's: not asserted, documented in docs/accuracy.md;
// - promoted error statistics within 30% at every K (worst today: 26%, mixed data at K=64, where
//   promoted and fast are the same; 14% at K >= 256).
TEST(GoldenTest, RandomCasesAgreementAndErrorStatistics) {
  const std::vector<std::string> cases = CasePrefixes(kGoldenDir + "/random");
  ASSERT_EQ(cases.size(), 20u);  // K in {64, 256, 1024, 4096, 16384} x 4 distributions
  std::printf(
      "| case | K | fast identical | promoted identical | fast error H200 | fast error emulation | "
      "promoted error H200 | promoted error emulation |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (const std::string& prefix : cases) {
    CaseAgreement a = CompareCase(prefix);
    const double fast_identical = double(a.fast.identical) / double(a.fast.total);
    std::printf("| %s | %lld | %.3f | %.3f | %.3e | %.3e | %.3e | %.3e |\n", a.name.c_str(),
                static_cast<long long>(a.k), fast_identical,
                double(a.promoted.identical) / double(a.promoted.total), a.fast.gpu_error,
                a.fast.emulation_error, a.promoted.gpu_error, a.promoted.emulation_error);
    if (a.k <= 4096) {
      EXPECT_NEAR(a.fast.emulation_error / a.fast.gpu_error, 1.0, 0.30) << a.name;
      if (a.name.find("positive") != std::string::npos) {
        EXPECT_GE(fast_identical, 0.99) << a.name;
      }
    }
    EXPECT_NEAR(a.promoted.emulation_error / a.promoted.gpu_error, 1.0, 0.30) << a.name;
  }
}

}  // namespace
}  // namespace fp8dot
