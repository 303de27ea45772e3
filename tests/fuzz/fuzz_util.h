// Shared by the libFuzzer targets in tests/fuzz: a property failure prints what broke and aborts,
// which libFuzzer records as a crash (its input saved as crash-<sha1>).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace fp8dot::fuzz {

[[noreturn]] inline void Fail(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "FUZZ PROPERTY FAILED: %s\n%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace fp8dot::fuzz
