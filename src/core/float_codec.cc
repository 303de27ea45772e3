// One generic encoder/decoder for small binary float formats, parameterised by exponent and
// mantissa width and by how the format spends its top exponent (IEEE inf/NaN, or "fn": only the
// all-ones pattern is NaN). Encode rounds its double argument once.
#include "fp8dot/float_codec.h"

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "fp8dot/arithmetic.h"

namespace fp8dot {
namespace {

struct FloatFormat {
  int exponent_bits;
  int mantissa_bits;
  bool ieee_top_exponent;  // true: exponent all-ones is inf/NaN; false ("fn"): only S.1111.111 is
                           // NaN
};

constexpr FloatFormat kE4M3FN{4, 3, false};
constexpr FloatFormat kE5M2{5, 2, true};
constexpr FloatFormat kBF16{8, 7, true};
constexpr FloatFormat kF16{5, 10, true};

constexpr int Bias(const FloatFormat& f) { return (1 << (f.exponent_bits - 1)) - 1; }
constexpr uint32_t ExponentMask(const FloatFormat& f) { return (1u << f.exponent_bits) - 1; }
constexpr uint32_t MantissaMask(const FloatFormat& f) { return (1u << f.mantissa_bits) - 1; }
constexpr uint32_t SignBit(const FloatFormat& f) {
  return 1u << (f.exponent_bits + f.mantissa_bits);
}

double MaxFinite(const FloatFormat& f) {
  int max_exponent = static_cast<int>(ExponentMask(f)) - Bias(f) - (f.ieee_top_exponent ? 1 : 0);
  // "fn" formats lose the all-ones mantissa in the top binade to NaN.
  double max_mantissa = f.ieee_top_exponent ? 2.0 - PowerOfTwo(-f.mantissa_bits)
                                            : 2.0 - PowerOfTwo(1 - f.mantissa_bits);
  return max_mantissa * PowerOfTwo(max_exponent);
}

uint32_t NanBits(const FloatFormat& f, bool negative) {
  uint32_t sign = negative ? SignBit(f) : 0;
  if (f.ieee_top_exponent) {
    // Quiet NaN: top mantissa bit set (what ml_dtypes and IEEE narrowing produce).
    return sign | (ExponentMask(f) << f.mantissa_bits) | (1u << (f.mantissa_bits - 1));
  }
  return sign | (ExponentMask(f) << f.mantissa_bits) | MantissaMask(f);
}

uint32_t InfBits(const FloatFormat& f, bool negative) {
  return (negative ? SignBit(f) : 0) | (ExponentMask(f) << f.mantissa_bits);
}

uint32_t Encode(const FloatFormat& f, double value, Overflow overflow) {
  const bool negative = std::signbit(value);
  const uint32_t sign = negative ? SignBit(f) : 0;
  const double max_finite = MaxFinite(f);
  if (std::isnan(value)) return NanBits(f, negative);
  double magnitude = std::fabs(value);
  if (std::isinf(magnitude)) {
    if (overflow == Overflow::kSaturate)
      magnitude = max_finite;
    else
      return f.ieee_top_exponent ? InfBits(f, negative) : NanBits(f, negative);
  }
  if (magnitude == 0.0) return sign;

  const int min_normal_exponent = 1 - Bias(f);
  // Exponents and powers of two from the bits, not std::ilogb and std::ldexp: the library calls
  // were most of a conversion's time. A multiplication by 2^-q rounds as a division by 2^q does
  // (the same real number), and the scalings here are exact.
  // Subnormals have the smallest normal exponent's spacing.
  const int exponent = std::max(BinaryExponent(magnitude), min_normal_exponent);
  const int quantum_exponent = exponent - f.mantissa_bits;
  // Scale so that one unit in the last place is 1, round half to even, scale back.
  const double rounded =
      std::nearbyint(magnitude * PowerOfTwo(-quantum_exponent)) * PowerOfTwo(quantum_exponent);

  if (rounded > max_finite) {
    if (overflow == Overflow::kSaturate) return sign | Encode(f, max_finite, overflow);
    return f.ieee_top_exponent ? InfBits(f, negative) : NanBits(f, negative);
  }
  if (rounded == 0.0) return sign;
  int rounded_exponent = BinaryExponent(rounded);
  if (rounded_exponent < min_normal_exponent) {
    uint32_t mantissa =
        static_cast<uint32_t>(rounded * PowerOfTwo(f.mantissa_bits - min_normal_exponent));
    return sign | mantissa;
  }
  uint32_t biased = static_cast<uint32_t>(rounded_exponent + Bias(f));
  uint32_t mantissa =
      static_cast<uint32_t>(rounded * PowerOfTwo(f.mantissa_bits - rounded_exponent)) &
      MantissaMask(f);
  return sign | (biased << f.mantissa_bits) | mantissa;
}

double Decode(const FloatFormat& f, uint32_t bits) {
  const bool negative = (bits & SignBit(f)) != 0;
  const uint32_t biased = (bits >> f.mantissa_bits) & ExponentMask(f);
  const uint32_t mantissa = bits & MantissaMask(f);
  double magnitude;
  if (biased == ExponentMask(f) && f.ieee_top_exponent) {
    magnitude = mantissa == 0 ? INFINITY : NAN;
  } else if (biased == ExponentMask(f) && mantissa == MantissaMask(f)) {
    magnitude = NAN;
  } else if (biased == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - Bias(f) - f.mantissa_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(mantissa | (1u << f.mantissa_bits)),
                           static_cast<int>(biased) - Bias(f) - f.mantissa_bits);
  }
  return negative ? -magnitude : magnitude;
}

template <size_t N>
std::array<float, N> BuildTable(const FloatFormat& f) {
  std::array<float, N> table{};
  for (uint32_t bits = 0; bits < N; ++bits) table[bits] = static_cast<float>(Decode(f, bits));
  return table;
}

const std::array<float, 256>& E4M3Table() {
  static const auto table = BuildTable<256>(kE4M3FN);
  return table;
}
const std::array<float, 256>& E5M2Table() {
  static const auto table = BuildTable<256>(kE5M2);
  return table;
}
const std::array<float, 65536>& F16Table() {
  static const auto table = BuildTable<65536>(kF16);
  return table;
}

float EncodeF32(double value, Overflow overflow) {
  float rounded = static_cast<float>(value);
  if (overflow == Overflow::kSaturate && std::isinf(rounded)) {
    return std::copysign(FLT_MAX, rounded);
  }
  return rounded;
}

}  // namespace

// f64 goes to FP8 and bf16 through f32, so a double input is rounded twice: the GPU kernels the
// emulation models hold f32 values (an accumulator) when they narrow. ml_dtypes before 0.7 did
// the same; from 0.7 it rounds f64 once. numpy's float16 rounds f64 once, and so does EncodeF16.
uint8_t EncodeF8E4M3FN(double value, Overflow overflow) {
  return static_cast<uint8_t>(Encode(kE4M3FN, static_cast<float>(value), overflow));
}
uint8_t EncodeF8E5M2(double value, Overflow overflow) {
  return static_cast<uint8_t>(Encode(kE5M2, static_cast<float>(value), overflow));
}
uint16_t EncodeBF16(double value, Overflow overflow) {
  return static_cast<uint16_t>(Encode(kBF16, static_cast<float>(value), overflow));
}
uint16_t EncodeF16(double value, Overflow overflow) {
  return static_cast<uint16_t>(Encode(kF16, value, overflow));
}

float DecodeF8E4M3FN(uint8_t bits) { return E4M3Table()[bits]; }
float DecodeF8E5M2(uint8_t bits) { return E5M2Table()[bits]; }
float DecodeBF16(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float out;
  std::memcpy(&out, &wide, sizeof(out));
  return out;
}
float DecodeF16(uint16_t bits) { return F16Table()[bits]; }

const float* Fp8DecodeTable(DType type) {
  return type == DType::kF8E4M3FN ? E4M3Table().data() : E5M2Table().data();
}

double RoundToDType(double value, DType type, Overflow overflow) {
  switch (type) {
    case DType::kF8E4M3FN:
      return DecodeF8E4M3FN(EncodeF8E4M3FN(value, overflow));
    case DType::kF8E5M2:
      return DecodeF8E5M2(EncodeF8E5M2(value, overflow));
    case DType::kBF16:
      return DecodeBF16(EncodeBF16(value, overflow));
    case DType::kF16:
      return DecodeF16(EncodeF16(value, overflow));
    case DType::kF32:
      return EncodeF32(value, overflow);
    case DType::kF64:
      return value;
  }
  return value;
}

double LoadElement(DType type, const void* data, int64_t index) {
  switch (type) {
    case DType::kF8E4M3FN:
      return DecodeF8E4M3FN(static_cast<const uint8_t*>(data)[index]);
    case DType::kF8E5M2:
      return DecodeF8E5M2(static_cast<const uint8_t*>(data)[index]);
    case DType::kBF16:
      return DecodeBF16(static_cast<const uint16_t*>(data)[index]);
    case DType::kF16:
      return DecodeF16(static_cast<const uint16_t*>(data)[index]);
    case DType::kF32:
      return static_cast<const float*>(data)[index];
    case DType::kF64:
      return static_cast<const double*>(data)[index];
  }
  return 0;
}

void StoreElement(DType type, double value, void* data, int64_t index, Overflow overflow) {
  switch (type) {
    case DType::kF8E4M3FN:
      static_cast<uint8_t*>(data)[index] = EncodeF8E4M3FN(value, overflow);
      return;
    case DType::kF8E5M2:
      static_cast<uint8_t*>(data)[index] = EncodeF8E5M2(value, overflow);
      return;
    case DType::kBF16:
      static_cast<uint16_t*>(data)[index] = EncodeBF16(value, overflow);
      return;
    case DType::kF16:
      static_cast<uint16_t*>(data)[index] = EncodeF16(value, overflow);
      return;
    case DType::kF32:
      static_cast<float*>(data)[index] = EncodeF32(value, overflow);
      return;
    case DType::kF64:
      static_cast<double*>(data)[index] = value;
      return;
  }
}

}  // namespace fp8dot
