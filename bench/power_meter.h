// The GPU's energy counter, SM clock and throttle reasons, read through NVML (the driver's
// management library), for gpu_bench's sustained runs: at the power limit a kernel's speed is
// set by its energy per call, which the interleaved timings cannot see.
//
// NVML is loaded at run time (dlopen of the driver's libnvidia-ml.so.1), so gpu_bench builds
// where only the CUDA toolkit is (no nvml.h there) and runs without it, saying so. The few
// entry points used are declared here with NVML's C ABI (nvml.h, stable since NVML 2).
#pragma once

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdint>
#include <string>

namespace fp8dot::bench {

struct PowerSample {
  uint64_t energy_mj = 0;  // since the driver loaded
  unsigned sm_clock_mhz = 0;
  uint64_t throttle_reasons = 0;  // NVML's clocks event reasons bit mask
};

// NVML's reasons that mean the power limit held the clock down.
constexpr uint64_t kSoftwarePowerCap = 0x4;
constexpr uint64_t kHardwarePowerBrake = 0x80;

class PowerMeter {
 public:
  // The meter of CUDA device `device`, or one whose error() says why there is none.
  explicit PowerMeter(int device) {
    library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library_ == nullptr) {
      error_ = "NVML not found (libnvidia-ml.so.1)";
      return;
    }
    if (!Load(init_, "nvmlInit_v2") || !Load(by_bus_id_, "nvmlDeviceGetHandleByPciBusId_v2") ||
        !Load(energy_, "nvmlDeviceGetTotalEnergyConsumption") ||
        !Load(clock_, "nvmlDeviceGetClockInfo") ||
        !Load(reasons_, "nvmlDeviceGetCurrentClocksThrottleReasons")) {
      return;
    }
    char bus_id[32] = {};
    if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) != cudaSuccess) {
      error_ = "cudaDeviceGetPCIBusId failed";
    } else if (const int rc = init_(); rc != 0) {
      error_ = "nvmlInit_v2 returned " + std::to_string(rc);
    } else if (const int rc = by_bus_id_(bus_id, &device_); rc != 0) {
      error_ = "nvmlDeviceGetHandleByPciBusId_v2(" + std::string(bus_id) + ") returned " +
               std::to_string(rc);
    }
  }
  ~PowerMeter() {
    if (library_ != nullptr) dlclose(library_);
  }
  PowerMeter(const PowerMeter&) = delete;
  PowerMeter& operator=(const PowerMeter&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  // Now; false (and error() set) when NVML fails.
  bool Sample(PowerSample& sample) {
    unsigned long long energy = 0, reasons = 0;
    constexpr int kSmClock = 1;  // NVML_CLOCK_SM
    if (const int rc = energy_(device_, &energy); rc != 0) {
      error_ = "nvmlDeviceGetTotalEnergyConsumption returned " + std::to_string(rc);
      return false;
    }
    if (clock_(device_, kSmClock, &sample.sm_clock_mhz) != 0 || reasons_(device_, &reasons) != 0) {
      error_ = "NVML's clock or throttle-reason query failed";
      return false;
    }
    sample.energy_mj = energy;
    sample.throttle_reasons = reasons;
    return true;
  }

 private:
  using Device = void*;  // nvmlDevice_t
  template <typename Function>
  bool Load(Function& function, const char* name) {
    function = reinterpret_cast<Function>(dlsym(library_, name));
    if (function == nullptr) error_ = std::string("NVML has no ") + name;
    return function != nullptr;
  }

  void* library_ = nullptr;
  Device device_ = nullptr;
  std::string error_;
  int (*init_)() = nullptr;
  int (*by_bus_id_)(const char*, Device*) = nullptr;
  int (*energy_)(Device, unsigned long long*) = nullptr;
  int (*clock_)(Device, int, unsigned*) = nullptr;
  int (*reasons_)(Device, unsigned long long*) = nullptr;
};

}  // namespace fp8dot::bench
