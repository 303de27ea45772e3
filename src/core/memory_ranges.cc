#include "fp8dot/memory_ranges.h"

namespace fp8dot {

bool Overlap(const MemoryRange& a, const MemoryRange& b) {
  if (a.start == nullptr || b.start == nullptr || a.bytes <= 0 || b.bytes <= 0) return false;
  const auto a0 = reinterpret_cast<uintptr_t>(a.start), b0 = reinterpret_cast<uintptr_t>(b.start);
  return a0 < b0 + static_cast<uintptr_t>(b.bytes) && b0 < a0 + static_cast<uintptr_t>(a.bytes);
}

Status CheckOutputsHaveOwnMemory(const char* call, std::initializer_list<MemoryRange> ranges) {
  for (auto a = ranges.begin(); a != ranges.end(); ++a) {
    for (auto b = a + 1; b != ranges.end(); ++b) {
      if ((a->written || b->written) && Overlap(*a, *b)) {
        return InvalidArgument("%s: %s and %s overlap; every output needs memory of its own", call,
                               a->name, b->name);
      }
    }
  }
  return OkStatus();
}

}  // namespace fp8dot
