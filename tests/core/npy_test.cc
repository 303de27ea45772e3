#include "fp8dot/npy.h"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>

#include "fp8dot/random.h"
#include "status_matchers.h"

namespace fp8dot {
namespace {

// Regression (tests/fuzz: npy_fuzzer empty-array-memcpy-null): a zero-element array parses
// without copying into the empty tensor's null buffer (UBSan in the sanitizer build).
TEST(NpyTest, ZeroElementArraysRoundTrip) {
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor empty, HostTensor::Create(DType::kF32, {0, 4}));
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor back, ParseNpy(SerializeNpy(empty)));
  EXPECT_EQ(back.dims(), (Dims{0, 4}));
  EXPECT_EQ(back.element_count(), 0);
  const std::string path = ::testing::TempDir() + "/npy_test_empty.npy";
  FP8_ASSERT_OK(WriteNpy(path, empty));
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor read, ReadNpy(path));
  EXPECT_EQ(read.dims(), (Dims{0, 4}));
  std::remove(path.c_str());
}

TEST(NpyTest, RoundTripsEveryType) {
  for (DType type : kAllDTypes) {
    FP8_ASSERT_OK_AND_ASSIGN(HostTensor t, RandomTensor(type, {3, 5}, Distribution::kSymmetric, 3));
    std::string bytes = SerializeNpy(t);
    EXPECT_EQ((bytes.find('\n') + 1) % 64, 0u) << "header must be 64-byte aligned";
    FP8_ASSERT_OK_AND_ASSIGN(HostTensor back, ParseNpy(bytes));
    EXPECT_EQ(back.dtype(), type);
    EXPECT_EQ(back.dims(), t.dims());
    for (int64_t i = 0; i < t.element_count(); ++i)
      EXPECT_EQ(back.GetPhysical(i), t.GetPhysical(i));
  }
}

TEST(NpyTest, HeaderForEachType) {
  auto header = [](DType type, Dims dims) -> std::string {
    StatusOr<HostTensor> tensor = HostTensor::Create(type, dims);
    if (!tensor.ok()) {
      ADD_FAILURE() << tensor.status().ToString();
      return "";
    }
    std::string bytes = SerializeNpy(*tensor);
    return bytes.substr(10, bytes.find('}') - 9);
  };
  EXPECT_EQ(header(DType::kF32, {3, 4}),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }");
  EXPECT_EQ(header(DType::kF8E4M3FN, {3}),
            "{'descr': [('float8_e4m3fn', '|u1')], 'fortran_order': False, 'shape': (3,), }");
  EXPECT_EQ(header(DType::kBF16, {}),
            "{'descr': [('bfloat16', '<u2')], 'fortran_order': False, 'shape': (), }");
}

TEST(NpyTest, FortranOrderLoadsColumnMajor) {
  std::string header = "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }";
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size() + 1) +
                      '\0' + header + "\n";
  for (int i = 0; i < 6; ++i) {
    float value = static_cast<float>(i);
    bytes.append(reinterpret_cast<const char*>(&value), 4);
  }
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor t, ParseNpy(bytes));
  EXPECT_EQ(t.minor_to_major(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(t.Get({1, 0}), 1.0);  // column-major: (1, 0) is the second value
  EXPECT_EQ(t.Get({0, 1}), 2.0);
}

TEST(NpyTest, UntypedBytesNeedATypeHint) {
  std::string header = "{'descr': '<V1', 'fortran_order': False, 'shape': (2,), }";
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size() + 1) +
                      '\0' + header + "\n" + "\x38\x40";
  EXPECT_EQ(ParseNpy(bytes, std::nullopt, "a.npy").status().message(),
            "a.npy: descr '<V1' does not say which 1-byte float it holds; name the type "
            "(e.g. --lhs-type f8e4m3fn)");
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor t, ParseNpy(bytes, DType::kF8E4M3FN));
  EXPECT_EQ(t.GetPhysical(0), 1.0);
  EXPECT_EQ(t.GetPhysical(1), 2.0);
  EXPECT_EQ(ParseNpy(bytes, DType::kBF16).status().message(),
            "<bytes>: descr '<V1' holds 1-byte elements but bf16 has 2 bytes");
}

TEST(NpyTest, TypedFileRejectsAConflictingHint) {
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor tensor, HostTensor::Create(DType::kF32, {2}));
  std::string bytes = SerializeNpy(tensor);
  EXPECT_EQ(ParseNpy(bytes, DType::kF8E4M3FN, "x.npy").status().message(),
            "x.npy: holds f32 but f8e4m3fn was requested");
}

TEST(NpyTest, MalformedInputsGiveClearErrors) {
  EXPECT_EQ(ParseNpy("hello").status().message(),
            "<bytes>: not a .npy file (missing the \\x93NUMPY magic)");
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor tensor, HostTensor::Create(DType::kF32, {2, 2}));
  std::string good = SerializeNpy(tensor);
  EXPECT_EQ(ParseNpy(good.substr(0, good.size() - 1)).status().message(),
            "<bytes>: shape [2,2] of f32 needs 16 data bytes, the file has 15");
  std::string bad_header = good;
  bad_header.replace(bad_header.find("'shape'"), 7, "'shapf'");
  EXPECT_EQ(ParseNpy(bad_header).status().message(),
            "<bytes>: header offset 41: unexpected key 'shapf' (expected descr, fortran_order, "
            "shape)");
  std::string big_endian = good;
  big_endian.replace(big_endian.find("<f4"), 3, ">f4");
  EXPECT_NE(ParseNpy(big_endian).status().message().find("unsupported descr '>f4'"),
            std::string::npos);
  EXPECT_EQ(ReadNpy("/nonexistent/x.npy").status().code(), StatusCode::kNotFound);
}

// Cheap in-process fuzzing: random mutations of valid files must give a Status, never a crash
// (the ASan/UBSan CI job runs this too).
TEST(NpyTest, FuzzedFilesNeverCrash) {
  std::mt19937 engine(1);
  std::vector<std::string> seeds;
  for (DType type : kAllDTypes) {
    FP8_ASSERT_OK_AND_ASSIGN(HostTensor seed,
                             RandomTensor(type, {2, 3}, Distribution::kSymmetric, 1));
    seeds.push_back(SerializeNpy(seed));
  }
  int parsed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string bytes = seeds[engine() % seeds.size()];
    const int mutations = 1 + static_cast<int>(engine() % 4);
    for (int j = 0; j < mutations; ++j) {
      const size_t pos = engine() % bytes.size();
      switch (engine() % 3) {
        case 0:
          bytes[pos] = static_cast<char>(engine());
          break;
        case 1:
          bytes.erase(pos, 1 + engine() % 8);
          break;
        case 2:
          bytes.insert(pos, 1, "(),:'0123456789 "[engine() % 16]);
          break;
      }
      if (bytes.empty()) bytes.assign(1, 'x');
    }
    parsed += ParseNpy(bytes).ok();
  }
  EXPECT_LT(parsed, 20000);  // most mutations must be rejected, not silently accepted
}

// A header's shape is checked against the file size before anything is allocated or read.
TEST(NpyTest, ReadNpyChecksTheShapeAgainstTheFileSizeFirst) {
  const std::string path = ::testing::TempDir() + "/npy_huge_claim.npy";
  {
    // 10^11 f64 elements (800 GB, under HostTensor's 1 TiB cap) claimed by a 128-byte file.
    std::ofstream file(path, std::ios::binary);
    file << SerializeNpyRaw("'<f8'", {100000000000}, "");
  }
  StatusOr<HostTensor> read = ReadNpy(path);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("shape [100000000000] of f64 needs 800000000000 data "
                                         "bytes, the file has 0"),
            std::string::npos)
      << read.status().message();
  // Past int64: said so, no wrap-around.
  {
    std::ofstream file(path, std::ios::binary);
    file << SerializeNpyRaw("'<f8'", {1000000000000000, 1000000000000000}, "");
  }
  read = ReadNpy(path);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("needs more than 2^63 data bytes"), std::string::npos)
      << read.status().message();
}

long MaxRssKb() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// Reading a .npy peaks at about the tensor's own size (it used to hold three copies).
TEST(NpyTest, ReadNpyReadsStraightIntoTheTensor) {
  const std::string path = ::testing::TempDir() + "/npy_peak.npy";
  constexpr int64_t kElements = int64_t{32} << 20;  // 128 MiB of f32
  {
    std::ofstream file(path, std::ios::binary);
    file << SerializeNpyRaw("'<f4'", {kElements}, "");
    const std::string chunk(1 << 20, '\0');
    for (int64_t written = 0; written < kElements * 4; written += chunk.size()) file << chunk;
  }
  const long before_kb = MaxRssKb();
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor tensor, ReadNpy(path));
  EXPECT_EQ(tensor.element_count(), kElements);
  const long grown_mib = (MaxRssKb() - before_kb) / 1024;
  EXPECT_LE(grown_mib, 128 + 64) << "peak memory grew by " << grown_mib << " MiB for 128 MiB";
  std::remove(path.c_str());
}

}  // namespace
}  // namespace fp8dot
