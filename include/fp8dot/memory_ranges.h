// The memory one call reads and writes, for the checks that refuse an output placed over other
// memory of the same call: a kernel that writes an output while it still reads an input (or
// another output) there gives a silently wrong result, so such calls are refused up front.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "fp8dot/status.h"

namespace fp8dot {

struct MemoryRange {
  const char* name;   // as the error names it: "output", "lhs scale"
  const void* start;  // null: the buffer is absent and overlaps nothing
  int64_t bytes;
  bool written;  // the call writes it; ranges that are only read may share memory
};

bool Overlap(const MemoryRange& a, const MemoryRange& b);

// OK, or INVALID_ARGUMENT "<call>: <a> and <b> overlap; every output needs memory of its own"
// for the first pair that overlaps where at least one of the two is written.
Status CheckOutputsHaveOwnMemory(const char* call, std::initializer_list<MemoryRange> ranges);

}  // namespace fp8dot
