// The overlap rule every call with caller-given outputs checks (quantize, the CUDA dot plan).
#include "fp8dot/memory_ranges.h"

#include <gtest/gtest.h>

#include "status_matchers.h"

namespace fp8dot {
namespace {

TEST(MemoryRangesTest, OverlapIsAnySharedByte) {
  char memory[64];
  const MemoryRange first{"a", memory, 16, true};
  EXPECT_TRUE(Overlap(first, {"b", memory + 15, 1, false}));   // the last byte
  EXPECT_FALSE(Overlap(first, {"b", memory + 16, 8, false}));  // adjacent
  EXPECT_TRUE(Overlap(first, {"b", memory + 4, 4, false}));    // inside
  EXPECT_TRUE(Overlap({"b", memory, 64, false}, first));       // around
  EXPECT_FALSE(Overlap(first, {"absent", nullptr, 16, true}));
  EXPECT_FALSE(Overlap(first, {"empty", memory, 0, true}));
}

TEST(MemoryRangesTest, OnlyPairsWithAWrittenRangeMustNotOverlap) {
  char memory[64];
  // Two inputs may share memory; an output may not share it with anything.
  FP8_EXPECT_OK(CheckOutputsHaveOwnMemory(
      "call",
      {{"x", memory, 32, false}, {"y", memory, 32, false}, {"out", memory + 32, 32, true}}));
  const Status status = CheckOutputsHaveOwnMemory(
      "call",
      {{"x", memory, 32, false}, {"out", memory + 32, 16, true}, {"amax", memory + 40, 4, true}});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "call: out and amax overlap; every output needs memory of its own");
  EXPECT_EQ(
      CheckOutputsHaveOwnMemory("call", {{"x", memory, 33, false}, {"out", memory + 32, 8, true}})
          .message(),
      "call: x and out overlap; every output needs memory of its own");
}

}  // namespace
}  // namespace fp8dot
