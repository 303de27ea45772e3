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
#include "status_matchers.h"

#include <fstream>

#include <nlohmann/json.hpp>

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
  int k_slices = 1;  // the recorded plan's split of K
  ModeAgreement fast, promoted;
};

// How the recording's plan cut K (the sidecar `fp8dot accuracy --record` writes next to each
// output); one run over K when there is none (the crafted probes).
KSplit RecordedKSplit(const std::string& path) {
  std::ifstream in(path);
  if (!in) return KSplit{};
  const nlohmann::json json = nlohmann::json::parse(in);
  return KSplit{json.at("k_slices").get<int>(), json.at("k_tile").get<int>()};
}

// Runs the emulation on a recorded case and compares it with the recorded H200 outputs.
StatusOr<CaseAgreement> CompareCase(const std::string& prefix) {
  CaseAgreement result;
  result.name = fs::path(prefix).filename().string();
  FP8_ASSIGN_OR_RETURN(HostTensor lhs, ReadNpy(prefix + ".lhs.npy"));
  FP8_ASSIGN_OR_RETURN(HostTensor rhs, ReadNpy(prefix + ".rhs.npy"));
  result.k = lhs.dim(1);
  DotArguments arguments{&lhs, &rhs};
  for (bool fast : {true, false}) {
    FP8_ASSIGN_OR_RETURN(HostTensor gpu, ReadNpy(prefix + (fast ? ".fast.npy" : ".promoted.npy")));
    DotSpec spec = SpecFromArguments(arguments, DotSpec());
    const Precision precision = fast ? Precision::kDefault : Precision::kHighest;
    spec.precision_config.operand_precision = {precision, precision};
    Fp8AccumulatorModel model;
    model.split = RecordedKSplit(prefix + (fast ? ".fast.json" : ".promoted.json"));
    result.k_slices = model.split.slices;
    FP8_ASSIGN_OR_RETURN(DotResult emulated, EmulatedDot(spec, arguments, model));
    FP8_ASSIGN_OR_RETURN(HostTensor exact, ReferenceDotExact(spec, arguments));
    ModeAgreement& mode = fast ? result.fast : result.promoted;
    mode.total = gpu.element_count();
    for (int64_t i = 0; i < mode.total; ++i) {
      mode.identical += gpu.GetPhysical(i) == emulated.output.GetPhysical(i);
    }
    FP8_ASSIGN_OR_RETURN(const ErrorStats gpu_error, CompareToReference(gpu, exact));
    FP8_ASSIGN_OR_RETURN(const ErrorStats emulation_error,
                         CompareToReference(emulated.output, exact));
    mode.gpu_error = gpu_error.relative_frobenius;
    mode.emulation_error = emulation_error.relative_frobenius;
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
  // K=1024 and 4096: 23 e4m3 x e4m3 cases and 24 e4m3 x e5m2 cases each.
  ASSERT_EQ(cases.size(), 94u);
  for (const std::string& prefix : cases) {
    FP8_ASSERT_OK_AND_ASSIGN(CaseAgreement agreement, CompareCase(prefix));
    EXPECT_EQ(agreement.fast.identical, agreement.fast.total) << agreement.name << " fast";
    EXPECT_EQ(agreement.promoted.identical, agreement.promoted.total)
        << agreement.name << " promoted";
  }
}

// Prints the agreement table (docs/accuracy.md quotes it) and requires every output of every
// recorded case to be bit-identical to the H200's, in both modes: the emulation (operand-exponent
// alignment, 13 truncated fraction bits, groups of 32, promotion every 128, the plan's split of K)
// reproduces the tensor cores exactly on these inputs.
TEST(GoldenTest, RandomCasesAreBitIdentical) {
  const std::vector<std::string> cases = CasePrefixes(kGoldenDir + "/random");
  ASSERT_GE(cases.size(), 20u);
  std::printf(
      "| case | K | split-K slices | fast identical | promoted identical | fast error H200 | "
      "fast error emulation | promoted error H200 | promoted error emulation |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  int64_t identical = 0, total = 0;
  for (const std::string& prefix : cases) {
    FP8_ASSERT_OK_AND_ASSIGN(CaseAgreement a, CompareCase(prefix));
    std::printf("| %s | %lld | %d | %.3f | %.3f | %.3e | %.3e | %.3e | %.3e |\n", a.name.c_str(),
                static_cast<long long>(a.k), a.k_slices,
                double(a.fast.identical) / double(a.fast.total),
                double(a.promoted.identical) / double(a.promoted.total), a.fast.gpu_error,
                a.fast.emulation_error, a.promoted.gpu_error, a.promoted.emulation_error);
    EXPECT_EQ(a.fast.identical, a.fast.total) << a.name << " fast";
    EXPECT_EQ(a.promoted.identical, a.promoted.total) << a.name << " promoted";
    identical += a.fast.identical + a.promoted.identical;
    total += a.fast.total + a.promoted.total;
  }
  std::printf("%lld of %lld outputs identical\n", static_cast<long long>(identical),
              static_cast<long long>(total));
}

}  // namespace
}  // namespace fp8dot
