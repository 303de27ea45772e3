// TensorMapCache (src/cuda/kernels/tensor_map_cache.h) with a stand-in for the driver's encoder:
// which requests reuse a map, which encode again, and that a failed encode is not kept.
#include "cuda/kernels/tensor_map_cache.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace fp8dot::cuda {
namespace {

// Encodes by writing a serial number into the map, so a test can tell which encode a map is.
struct CountingEncoder {
  std::vector<TensorMap2dRequest> encoded;
  bool fail = false;
  StatusOr<CUtensorMap> operator()(const TensorMap2dRequest& request) {
    if (fail) return Internal("encode failed");
    encoded.push_back(request);
    CUtensorMap map{};
    const uint64_t serial = encoded.size();
    std::memcpy(&map, &serial, sizeof(serial));
    return map;
  }
};

uint64_t SerialOf(const StatusOr<CUtensorMap>& map) {
  uint64_t serial = 0;
  std::memcpy(&serial, &*map, sizeof(serial));
  return serial;
}

const char kBuffer[64] = {};

TensorMap2dRequest Operand() {
  return {kBuffer, CU_TENSOR_MAP_DATA_TYPE_UINT8, 4096, 7168, 7168, 128,
          64,      CU_TENSOR_MAP_SWIZZLE_128B};
}

TEST(TensorMapCacheTest, AnEqualRequestTakesTheMapOfItsFirstEncode) {
  TensorMapCache<4> cache;
  CountingEncoder encoder;
  const auto encode = [&](const TensorMap2dRequest& r) { return encoder(r); };
  EXPECT_EQ(SerialOf(cache.Get(Operand(), encode)), 1u);
  EXPECT_EQ(SerialOf(cache.Get(Operand(), encode)), 1u);
  EXPECT_EQ(encoder.encoded.size(), 1u);
}

TEST(TensorMapCacheTest, EveryFieldOfTheRequestTellsMapsApart) {
  std::vector<TensorMap2dRequest> requests(9, Operand());
  requests[1].data = kBuffer + 16;
  requests[2].type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  requests[3].rows = 4095;
  requests[4].columns = 7040;
  requests[5].row_bytes = 7296;
  requests[6].box_columns = 64;
  requests[7].box_rows = 128;
  requests[8].swizzle = CU_TENSOR_MAP_SWIZZLE_64B;
  TensorMapCache<16> cache;
  CountingEncoder encoder;
  const auto encode = [&](const TensorMap2dRequest& r) { return encoder(r); };
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(SerialOf(cache.Get(requests[i], encode)), i + 1) << "request " << i;
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(SerialOf(cache.Get(requests[i], encode)), i + 1) << "request " << i << " again";
  }
  EXPECT_EQ(encoder.encoded.size(), requests.size());
}

TEST(TensorMapCacheTest, AFullCacheReplacesItsOldestMap) {
  TensorMapCache<2> cache;
  CountingEncoder encoder;
  const auto encode = [&](const TensorMap2dRequest& r) { return encoder(r); };
  TensorMap2dRequest a = Operand(), b = Operand(), c = Operand();
  b.rows = 1, c.rows = 2;
  EXPECT_EQ(SerialOf(cache.Get(a, encode)), 1u);
  EXPECT_EQ(SerialOf(cache.Get(b, encode)), 2u);
  EXPECT_EQ(SerialOf(cache.Get(c, encode)), 3u);  // replaces a
  EXPECT_EQ(SerialOf(cache.Get(b, encode)), 2u);
  EXPECT_EQ(SerialOf(cache.Get(c, encode)), 3u);
  EXPECT_EQ(SerialOf(cache.Get(a, encode)), 4u);  // encoded again, replaces b
  EXPECT_EQ(SerialOf(cache.Get(c, encode)), 3u);
  EXPECT_EQ(SerialOf(cache.Get(b, encode)), 5u);
}

TEST(TensorMapCacheTest, AFailedEncodeIsReturnedAndNotKept) {
  TensorMapCache<4> cache;
  CountingEncoder encoder;
  const auto encode = [&](const TensorMap2dRequest& r) { return encoder(r); };
  encoder.fail = true;
  const StatusOr<CUtensorMap> failed = cache.Get(Operand(), encode);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("encode failed"), std::string::npos);
  encoder.fail = false;
  EXPECT_EQ(SerialOf(cache.Get(Operand(), encode)), 1u);
}

}  // namespace
}  // namespace fp8dot::cuda
