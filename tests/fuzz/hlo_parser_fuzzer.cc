// Asserts: any bytes parse or give a Status (no crash, no abort, no UB); whatever parses verifies
// without crashing, prints, re-parses, prints identically again, and verifies as the original did.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fp8dot/hlo/hlo_parser.h"
#include "fp8dot/hlo/hlo_verifier.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using fp8dot::fuzz::Fail;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto module = fp8dot::hlo::ParseHloModule(text, "fuzz.hlo");
  if (!module.ok()) return 0;
  const fp8dot::Status verified = fp8dot::hlo::VerifyHloModule(**module);
  const std::string printed = (*module)->ToString();
  auto reparsed = fp8dot::hlo::ParseHloModule(printed, "printed.hlo");
  if (!reparsed.ok()) {
    Fail("the printer's text does not parse", reparsed.status().ToString() + "\n" + printed);
  }
  const std::string reprinted = (*reparsed)->ToString();
  if (reprinted != printed)
    Fail("print(parse(print(m))) != print(m)", printed + "\n---\n" + reprinted);
  const fp8dot::Status reverified = fp8dot::hlo::VerifyHloModule(**reparsed);
  if (verified.ok() != reverified.ok()) {
    Fail("the verifier disagrees on the printed module",
         verified.ToString() + "\nvs\n" + reverified.ToString() + "\n" + printed);
  }
  return 0;
}
