#include "cpu/parallel_for.h"

#include <gtest/gtest.h>

#include <atomic>
#include <limits>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace fp8dot::cpu {
namespace {

// Every index once, whatever the split.
void ExpectEachIndexOnce(int64_t count, int64_t work_per_item) {
  std::vector<std::atomic<int>> visits(static_cast<size_t>(count));
  ParallelFor(count, work_per_item, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) visits[static_cast<size_t>(i)]++;
  });
  for (int64_t i = 0; i < count; ++i) {
    EXPECT_EQ(visits[static_cast<size_t>(i)].load(), 1) << "index " << i << " of " << count;
  }
}

TEST(ParallelForTest, VisitsEveryIndexOnce) {
  for (int64_t count : {1, 2, 3, 7, 64, 1000}) {
    ExpectEachIndexOnce(count, 1);
    ExpectEachIndexOnce(count, kMinWorkPerThread);                    // one thread's worth per item
    ExpectEachIndexOnce(count, std::numeric_limits<int64_t>::max());  // count · work overflows
  }
}

TEST(ParallelForTest, NothingToDoCallsNothing) {
  bool called = false;
  ParallelFor(0, 100, [&](int64_t, int64_t) { called = true; });
  EXPECT_FALSE(called);
}

// A unit test's 16×16 dot: starting threads would cost more than the work.
TEST(ParallelForTest, SmallWorkRunsOnTheCallingThread) {
  const std::thread::id caller = std::this_thread::get_id();
  int calls = 0;
  ParallelFor(16, /*work_per_item=*/16 * 16, [&](int64_t begin, int64_t end) {
    ++calls;
    EXPECT_EQ(std::this_thread::get_id(), caller);
    EXPECT_EQ(begin, 0);
    EXPECT_EQ(end, 16);
  });
  EXPECT_EQ(calls, 1);
}

TEST(ParallelForTest, LargeWorkUsesTheHardwareThreads) {
  const unsigned hardware = std::thread::hardware_concurrency();
  if (hardware < 2) GTEST_SKIP() << "one hardware thread";
  std::mutex mutex;
  std::set<std::thread::id> threads;
  ParallelFor(hardware, /*work_per_item=*/kMinWorkPerThread, [&](int64_t, int64_t) {
    std::lock_guard<std::mutex> lock(mutex);
    threads.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(threads.size(), hardware);
}

}  // namespace
}  // namespace fp8dot::cpu
