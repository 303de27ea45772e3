#include "fp8dot/float_codec.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <thread>

#include "core/codec_reference.h"

namespace fp8dot {
namespace {

using testing::CodecReference;

float FloatFromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

struct NarrowType {
  const char* name;
  std::function<uint32_t(double, Overflow)> encode;
  std::function<double(uint32_t)> decode;
  uint32_t code_count;
  std::function<CodecReference()> reference;
};

std::vector<NarrowType> AllNarrowTypes() {
  return {
      {"f8e4m3fn", [](double x, Overflow o) { return uint32_t{EncodeF8E4M3FN(x, o)}; },
       [](uint32_t c) { return double{DecodeF8E4M3FN(static_cast<uint8_t>(c))}; }, 256,
       testing::E4M3Reference},
      {"f8e5m2", [](double x, Overflow o) { return uint32_t{EncodeF8E5M2(x, o)}; },
       [](uint32_t c) { return double{DecodeF8E5M2(static_cast<uint8_t>(c))}; }, 256,
       testing::E5M2Reference},
      {"f16", [](double x, Overflow o) { return uint32_t{EncodeF16(x, o)}; },
       [](uint32_t c) { return double{DecodeF16(static_cast<uint16_t>(c))}; }, 65536,
       testing::F16Reference},
      {"bf16", [](double x, Overflow o) { return uint32_t{EncodeBF16(x, o)}; },
       [](uint32_t c) { return double{DecodeBF16(static_cast<uint16_t>(c))}; }, 65536,
       testing::BF16Reference},
  };
}

// Checks one f32 input against the reference; NaN must stay NaN with its sign.
::testing::AssertionResult AgreesWithReference(const NarrowType& type, const CodecReference& ref,
                                               float x) {
  const uint32_t got = type.encode(x, Overflow::kIeee);
  if (std::isnan(x)) {
    const double decoded = type.decode(got);
    if (std::isnan(decoded) && std::signbit(decoded) == std::signbit(x))
      return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << type.name << ": NaN input gave code " << got;
  }
  const uint32_t want = ref.Encode(x);
  if (got == want) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << type.name << ": " << x << " (0x" << std::hex <<
         [&] {
           uint32_t b;
           std::memcpy(&b, &x, 4);
           return b;
         }() << ") encoded to 0x" << got
                                       << ", reference 0x" << want;
}

TEST(FloatCodecTest, KnownValues) {
  EXPECT_EQ(EncodeF8E4M3FN(1.0), 0x38);
  EXPECT_EQ(EncodeF8E4M3FN(448.0), 0x7E);
  EXPECT_EQ(EncodeF8E4M3FN(-448.0), 0xFE);
  EXPECT_EQ(EncodeF8E4M3FN(464.0), 0x7E);  // tie between 448 and (virtual) 480 -> even -> 448
  EXPECT_EQ(EncodeF8E4M3FN(465.0), 0x7F);  // overflow -> NaN
  EXPECT_EQ(EncodeF8E4M3FN(INFINITY), 0x7F);
  EXPECT_EQ(EncodeF8E4M3FN(std::ldexp(1.0, -9)), 0x01);   // smallest subnormal
  EXPECT_EQ(EncodeF8E4M3FN(std::ldexp(1.0, -10)), 0x00);  // half of it: tie -> even (0)
  EXPECT_EQ(EncodeF8E5M2(57344.0), 0x7B);
  EXPECT_EQ(EncodeF8E5M2(61440.0), 0x7C);  // tie -> even -> inf
  EXPECT_EQ(EncodeF8E5M2(-INFINITY), 0xFC);
  EXPECT_EQ(EncodeF8E5M2(std::ldexp(1.0, -16)), 0x01);
  EXPECT_EQ(EncodeBF16(1.0), 0x3F80);
  EXPECT_EQ(EncodeF16(65504.0), 0x7BFF);
  EXPECT_EQ(EncodeF16(65520.0), 0x7C00);
  EXPECT_EQ(DecodeF8E4M3FN(0x7E), 448.0f);
  EXPECT_TRUE(std::isnan(DecodeF8E4M3FN(0x7F)));
  EXPECT_TRUE(std::isnan(DecodeF8E4M3FN(0xFF)));
  EXPECT_EQ(DecodeF8E4M3FN(0x78), 256.0f);  // e4m3fn uses the top exponent for finite values
  EXPECT_TRUE(std::isinf(DecodeF8E5M2(0x7C)));
  EXPECT_TRUE(std::isnan(DecodeF8E5M2(0x7D)));
  EXPECT_EQ(DecodeF8E5M2(0x80), 0.0f);
  EXPECT_TRUE(std::signbit(DecodeF8E5M2(0x80)));
}

TEST(FloatCodecTest, SaturatingConversionClampsToMax) {
  EXPECT_EQ(EncodeF8E4M3FN(1e6, Overflow::kSaturate), 0x7E);
  EXPECT_EQ(EncodeF8E4M3FN(-1e6, Overflow::kSaturate), 0xFE);
  EXPECT_EQ(EncodeF8E4M3FN(INFINITY, Overflow::kSaturate), 0x7E);
  EXPECT_EQ(EncodeF8E5M2(-INFINITY, Overflow::kSaturate), 0xFB);
  EXPECT_EQ(EncodeF8E5M2(70000.0, Overflow::kSaturate), 0x7B);
  EXPECT_TRUE(std::isnan(DecodeF8E4M3FN(EncodeF8E4M3FN(NAN, Overflow::kSaturate))));
  EXPECT_EQ(RoundToDType(1e6, DType::kF16, Overflow::kSaturate), 65504.0);
  EXPECT_EQ(RoundToDType(1e39, DType::kF32, Overflow::kSaturate), FLT_MAX);
  // In range, saturation changes nothing.
  EXPECT_EQ(EncodeF8E4M3FN(3.3, Overflow::kSaturate), EncodeF8E4M3FN(3.3));
}

TEST(FloatCodecTest, EveryCodeRoundTrips) {
  for (const NarrowType& type : AllNarrowTypes()) {
    for (uint32_t code = 0; code < type.code_count; ++code) {
      const double value = type.decode(code);
      const uint32_t again = type.encode(value, Overflow::kIeee);
      if (std::isnan(value)) {
        ASSERT_TRUE(std::isnan(type.decode(again))) << type.name << " code " << code;
        ASSERT_EQ(std::signbit(type.decode(again)), std::signbit(value)) << type.name;
      } else {
        ASSERT_EQ(again, code) << type.name << " code " << code << " value " << value;
      }
    }
  }
}

TEST(FloatCodecTest, BoundariesTiesAndSubnormalsMatchReference) {
  for (const NarrowType& type : AllNarrowTypes()) {
    const CodecReference ref = type.reference();
    std::vector<double> points = ref.Midpoints();
    const std::vector<double> values = ref.Values();
    points.insert(points.end(), values.begin(), values.end());
    for (double point : points) {
      const float center = static_cast<float>(point);
      // The point itself and its f32 neighbours decide ties and near-ties.
      for (float x : {center, std::nextafter(center, 0.0f), std::nextafter(center, INFINITY),
                      -center, -std::nextafter(center, INFINITY)}) {
        ASSERT_TRUE(AgreesWithReference(type, ref, x));
      }
    }
    for (float special : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, FLT_MAX, -FLT_MAX, FLT_MIN,
                          FLT_TRUE_MIN, -FLT_TRUE_MIN}) {
      ASSERT_TRUE(AgreesWithReference(type, ref, special));
    }
  }
}

TEST(FloatCodecTest, RandomF32BitPatternsMatchReference) {
  std::mt19937 engine(20261130);
  for (const NarrowType& type : AllNarrowTypes()) {
    const CodecReference ref = type.reference();
    for (int i = 0; i < (1 << 20); ++i) {
      ASSERT_TRUE(AgreesWithReference(type, ref, FloatFromBits(engine())));
    }
  }
}

TEST(FloatCodecTest, F64InputsRoundThroughF32LikeMlDtypes) {
  // 1 + 2^-4 + 2^-40 is just above the e4m3 midpoint between 1 and 1.125. ml_dtypes rounds f64
  // to f32 first, which lands exactly on the midpoint, and the tie goes to even: 1.0.
  const double above_midpoint = 1.0 + 0.0625 + std::ldexp(1.0, -40);
  EXPECT_EQ(DecodeF8E4M3FN(EncodeF8E4M3FN(above_midpoint)), 1.0f);
  EXPECT_EQ(DecodeBF16(EncodeBF16(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40))), 1.0f);
  // numpy's float16 rounds f64 once: the 2^-40 decides.
  EXPECT_EQ(DecodeF16(EncodeF16(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40))),
            1.0f + std::ldexp(1.0f, -10));
}

// All 2^32 f32 bit patterns for every narrow type. Minutes of CPU: opt in with
// FP8DOT_EXHAUSTIVE=1 (scripts/exhaustive-codec-test.sh runs it).
TEST(FloatCodecTest, ExhaustiveF32MatchesReference) {
  if (std::getenv("FP8DOT_EXHAUSTIVE") == nullptr) {
    GTEST_SKIP() << "set FP8DOT_EXHAUSTIVE=1 to check all 2^32 f32 inputs";
  }
  for (const NarrowType& type : AllNarrowTypes()) {
    const CodecReference ref = type.reference();
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    std::vector<uint64_t> failures(threads, 0);
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        for (uint64_t bits = t; bits < (uint64_t{1} << 32); bits += threads) {
          if (!AgreesWithReference(type, ref, FloatFromBits(static_cast<uint32_t>(bits))))
            ++failures[t];
        }
      });
    }
    for (auto& worker : workers) worker.join();
    uint64_t total = 0;
    for (uint64_t f : failures) total += f;
    EXPECT_EQ(total, 0u) << type.name;
  }
}

TEST(FloatCodecTest, ElementAccessForEveryType) {
  for (DType type : kAllDTypes) {
    std::vector<uint8_t> buffer(16 * 8, 0xAB);
    StoreElement(type, -1.5, buffer.data(), 3);
    EXPECT_EQ(LoadElement(type, buffer.data(), 3), -1.5) << DTypeName(type);
  }
}

}  // namespace
}  // namespace fp8dot
