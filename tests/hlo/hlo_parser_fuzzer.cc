// libFuzzer entry: any bytes must parse or give a Status, and whatever parses must print,
// re-parse and verify without crashing. Seed corpus: tests/hlo/testdata/*.hlo.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fp8dot/hlo/hlo_parser.h"
#include "fp8dot/hlo/hlo_verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto module = fp8dot::hlo::ParseHloModule(text, "fuzz.hlo");
  if (!module.ok()) return 0;
  (void)fp8dot::hlo::VerifyHloModule(**module);
  const std::string printed = (*module)->ToString();
  auto reparsed = fp8dot::hlo::ParseHloModule(printed, "printed.hlo");
  if (!reparsed.ok()) __builtin_trap();  // the printer must produce parseable text
  return 0;
}
