// Asserts: ParseNpy never crashes on any bytes, without a type hint and with each DType as the
// hint; a tensor it returns holds exactly element_count * element size bytes, and SerializeNpy of
// it parses back (without a hint) to the same element type and dims.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "fp8dot/dtype.h"
#include "fp8dot/npy.h"
#include "fuzz_util.h"

namespace {

void Check(std::string_view bytes, std::optional<fp8dot::DType> hint) {
  using fp8dot::fuzz::Fail;
  auto tensor = fp8dot::ParseNpy(bytes, hint, "fuzz.npy");
  if (!tensor.ok()) return;
  const int64_t expected_bytes =
      tensor->element_count() * fp8dot::DTypeSizeInBytes(tensor->dtype());
  if (tensor->size_in_bytes() != expected_bytes) {
    Fail("the parsed tensor's buffer does not match its dims",
         std::to_string(tensor->size_in_bytes()) + " vs " + std::to_string(expected_bytes));
  }
  const std::string written = fp8dot::SerializeNpy(*tensor);
  auto reread = fp8dot::ParseNpy(written, std::nullopt, "written.npy");
  if (!reread.ok()) Fail("SerializeNpy's bytes do not parse", reread.status().ToString());
  if (reread->dtype() != tensor->dtype() || reread->dims() != tensor->dims()) {
    Fail("SerializeNpy -> ParseNpy changes the element type or dims");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  Check(bytes, std::nullopt);
  for (fp8dot::DType hint : fp8dot::kAllDTypes) Check(bytes, hint);
  return 0;
}
