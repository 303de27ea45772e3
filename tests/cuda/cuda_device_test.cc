#include "fp8dot/cuda_device.h"

#include <gtest/gtest.h>

namespace fp8dot {
namespace {

TEST(CudaDeviceTest, ReportsAHopperGpuOrWhyNot) {
  StatusOr<CudaDeviceInfo> device = QueryCudaDevice();
  if (!device.ok()) {
    EXPECT_EQ(device.status().code(), StatusCode::kUnavailable);
    EXPECT_FALSE(device.status().message().empty());
    GTEST_SKIP() << "no GPU: " << device.status().message();
  }
  EXPECT_TRUE(CudaBackendBuilt());
  EXPECT_GE(device->compute_major, 9);
  EXPECT_GT(device->multiprocessor_count, 0);
  EXPECT_FALSE(device->name.empty());
}

}  // namespace
}  // namespace fp8dot
