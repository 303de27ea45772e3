// Asserts: ParseGemmBackendConfig never crashes or throws on any bytes (JSON or not); a config it
// accepts prints (ToJson) to JSON that parses back and prints identically.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fp8dot/hlo/gemm_backend_config.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using fp8dot::fuzz::Fail;
  const std::string json(reinterpret_cast<const char*>(data), size);
  auto config = fp8dot::hlo::ParseGemmBackendConfig(json);
  if (!config.ok()) return 0;
  const std::string printed = config->ToJson();
  auto reparsed = fp8dot::hlo::ParseGemmBackendConfig(printed);
  if (!reparsed.ok())
    Fail("ToJson's text does not parse", reparsed.status().ToString() + "\n" + printed);
  const std::string reprinted = reparsed->ToJson();
  if (reprinted != printed)
    Fail("ToJson(parse(ToJson(c))) != ToJson(c)", printed + "\n---\n" + reprinted);
  return 0;
}
