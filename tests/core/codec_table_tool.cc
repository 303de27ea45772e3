// Helper for the ml_dtypes agreement test: reads raw little-endian f32 or f64 values on stdin and
// writes fp8dot's encoding of each (1 or 2 bytes) to stdout.
// Usage: codec_table_tool <f8e4m3fn|f8e5m2|bf16|f16> <f32|f64> [saturate]
#include <cstdio>
#include <cstring>
#include <vector>

#include "fp8dot/float_codec.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: codec_table_tool TYPE f32|f64 [saturate]\n");
    return 2;
  }
  auto type = fp8dot::ParseDType(argv[1]);
  if (!type.ok() || fp8dot::DTypeSizeInBytes(*type) > 2) {
    std::fprintf(stderr, "bad type %s\n", argv[1]);
    return 2;
  }
  const bool f64 = std::strcmp(argv[2], "f64") == 0;
  const auto overflow = argc > 3 ? fp8dot::Overflow::kSaturate : fp8dot::Overflow::kIeee;
  const size_t in_size = f64 ? 8 : 4;
  const int out_size = fp8dot::DTypeSizeInBytes(*type);
  std::vector<unsigned char> in(in_size), out(static_cast<size_t>(out_size));
  while (std::fread(in.data(), 1, in_size, stdin) == in_size) {
    double value;
    if (f64) {
      std::memcpy(&value, in.data(), 8);
    } else {
      float f;
      std::memcpy(&f, in.data(), 4);
      value = f;
    }
    fp8dot::StoreElement(*type, value, out.data(), 0, overflow);
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  return 0;
}
