// Sweeps accumulator-model parameters against the H200 golden vectors and prints, per setting,
// the fraction of outputs identical to the H200's (fast and promoted) over the K <= 4096 cases.
// Build (from the repository root, after scripts/build.sh):
//   g++ -std=c++20 -O2 -Iinclude dev/golden_sweep.cc build/libfp8dot_cpu.a build/libfp8dot_dot.a \
//     build/libfp8dot_core.a -lopenblas -lpthread -o /tmp/golden_sweep && /tmp/golden_sweep
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "fp8dot/cpu_backend.h"
#include "fp8dot/npy.h"

using namespace fp8dot;

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "tests/cpu/testdata/h200/random";
  struct Case {
    std::string name;
    HostTensor lhs, rhs, fast, promoted;
  };
  std::vector<Case> cases;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string p = entry.path().string();
    if (p.size() < 8 || p.substr(p.size() - 8) != ".lhs.npy") continue;
    std::string prefix = p.substr(0, p.size() - 8);
    Case c{prefix, *ReadNpy(prefix + ".lhs.npy"), *ReadNpy(prefix + ".rhs.npy"),
           *ReadNpy(prefix + ".fast.npy"), *ReadNpy(prefix + ".promoted.npy")};
    if (c.lhs.dim(1) <= 4096) cases.push_back(std::move(c));
  }
  std::printf("bits group interval rounding | fast identical | promoted identical\n");
  for (int bits : {12, 13, 14}) {
    for (int group : {16, 32, 64}) {
      for (int interval : {64, 128, 256}) {
        if (interval % group) continue;
        for (auto rounding : {AccumulatorRounding::kTruncate, AccumulatorRounding::kNearestEven}) {
          Fp8AccumulatorModel model{bits, rounding, group, interval};
          int64_t same[2] = {0, 0}, total = 0;
          for (const Case& c : cases) {
            DotArguments args{&c.lhs, &c.rhs};
            for (int mode = 0; mode < 2; ++mode) {
              DotSpec spec = SpecFromArguments(args, DotSpec());
              Precision p = mode == 0 ? Precision::kDefault : Precision::kHighest;
              spec.precision_config.operand_precision = {p, p};
              DotResult r = *EmulatedDot(spec, args, model);
              const HostTensor& gpu = mode == 0 ? c.fast : c.promoted;
              for (int64_t i = 0; i < gpu.element_count(); ++i)
                same[mode] += gpu.GetPhysical(i) == r.output.GetPhysical(i);
            }
            total += c.fast.element_count();
          }
          std::printf("%d %d %d %s | %.4f | %.4f\n", bits, group, interval,
                      AccumulatorRoundingName(rounding), double(same[0]) / total,
                      double(same[1]) / total);
          std::fflush(stdout);
        }
      }
    }
  }
}
