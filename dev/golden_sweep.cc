// Sweeps accumulator-model parameters against the H200 golden vectors and prints, per setting,
// the fraction of outputs identical to the H200's (fast and promoted) over the K <= 4096 cases.
// Built with the project (target golden_sweep): build/golden_sweep [tests/cpu/testdata/h200/random]
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "fp8dot/cpu_backend.h"
#include "fp8dot/npy.h"

namespace fp8dot {
namespace {

struct GoldenCase {
  std::string name;
  HostTensor lhs, rhs, fast, promoted;
};

// Every PREFIX.lhs.npy in `dir` with its rhs and the H200's fast and promoted outputs.
StatusOr<std::vector<GoldenCase>> LoadCases(const std::string& dir) {
  std::vector<GoldenCase> cases;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string path = entry.path().string();
    const std::string suffix = ".lhs.npy";
    if (path.size() < suffix.size() || !path.ends_with(suffix)) continue;
    const std::string prefix = path.substr(0, path.size() - suffix.size());
    GoldenCase c{prefix, {}, {}, {}, {}};
    FP8_ASSIGN_OR_RETURN(c.lhs, ReadNpy(prefix + ".lhs.npy"));
    FP8_ASSIGN_OR_RETURN(c.rhs, ReadNpy(prefix + ".rhs.npy"));
    FP8_ASSIGN_OR_RETURN(c.fast, ReadNpy(prefix + ".fast.npy"));
    FP8_ASSIGN_OR_RETURN(c.promoted, ReadNpy(prefix + ".promoted.npy"));
    if (c.lhs.dim(1) <= 4096) cases.push_back(std::move(c));
  }
  if (error) return NotFound("cannot list %s: %s", dir.c_str(), error.message().c_str());
  if (cases.empty()) return NotFound("no golden cases (*.lhs.npy) in %s", dir.c_str());
  return cases;
}

// Outputs of `model` identical to the H200's, per mode (0 fast, 1 promoted).
StatusOr<std::vector<int64_t>> CountIdentical(const std::vector<GoldenCase>& cases,
                                              const Fp8AccumulatorModel& model) {
  std::vector<int64_t> same = {0, 0};
  for (const GoldenCase& c : cases) {
    DotArguments args{&c.lhs, &c.rhs};
    for (int mode = 0; mode < 2; ++mode) {
      DotSpec spec = SpecFromArguments(args, DotSpec());
      const Precision p = mode == 0 ? Precision::kDefault : Precision::kHighest;
      spec.precision_config.operand_precision = {p, p};
      FP8_ASSIGN_OR_RETURN(DotResult r, EmulatedDot(spec, args, model));
      const HostTensor& gpu = mode == 0 ? c.fast : c.promoted;
      for (int64_t i = 0; i < gpu.element_count(); ++i) {
        same[static_cast<size_t>(mode)] += gpu.GetPhysical(i) == r.output.GetPhysical(i);
      }
    }
  }
  return same;
}

Status Sweep(const std::string& dir) {
  FP8_ASSIGN_OR_RETURN(std::vector<GoldenCase> cases, LoadCases(dir));
  int64_t total = 0;
  for (const GoldenCase& c : cases) total += c.fast.element_count();
  std::printf("bits group interval rounding | fast identical | promoted identical\n");
  for (int bits : {12, 13, 14}) {
    for (int group : {16, 32, 64}) {
      for (int interval : {64, 128, 256}) {
        if (interval % group) continue;
        for (auto rounding : {AccumulatorRounding::kTruncate, AccumulatorRounding::kNearestEven}) {
          const Fp8AccumulatorModel model{bits, rounding, group, interval};
          FP8_ASSIGN_OR_RETURN(std::vector<int64_t> same, CountIdentical(cases, model));
          std::printf("%d %d %d %s | %.4f | %.4f\n", bits, group, interval,
                      AccumulatorRoundingName(rounding),
                      static_cast<double>(same[0]) / static_cast<double>(total),
                      static_cast<double>(same[1]) / static_cast<double>(total));
          std::fflush(stdout);
        }
      }
    }
  }
  return OkStatus();
}

}  // namespace
}  // namespace fp8dot

int main(int argc, char** argv) {
  const fp8dot::Status status =
      fp8dot::Sweep(argc > 1 ? argv[1] : "tests/cpu/testdata/h200/random");
  if (!status.ok()) {
    std::fprintf(stderr, "golden_sweep: error: %s\n", status.message().c_str());
    return 1;
  }
  return 0;
}
