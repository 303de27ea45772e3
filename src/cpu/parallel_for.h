// Splits [0, count) into contiguous ranges, one per thread, with no more threads than the work
// pays for: a thread is started per call, which costs tens of microseconds, so a small problem
// (a unit test's 16×16 dot, a decode step) runs on the calling thread alone.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <thread>
#include <vector>

namespace fp8dot::cpu {

// Element operations a thread must get to be worth starting (about 50-100 µs of work).
inline constexpr int64_t kMinWorkPerThread = int64_t{1} << 17;

// std::thread::hardware_concurrency reads /sys on every call (several µs, as long as a small
// dot itself): asked once per process.
inline int64_t HardwareThreads() {
  static const int64_t threads = std::max(1u, std::thread::hardware_concurrency());
  return threads;
}

// `work_per_item`: element operations of one item (a row of N·K products, a row of K values).
template <typename Body>  // Body: void(int64_t begin, int64_t end)
void ParallelFor(int64_t count, int64_t work_per_item, const Body& body) {
  if (count <= 0) return;
  int64_t work = 0;  // count · work_per_item, saturated
  if (__builtin_mul_overflow(count, std::max<int64_t>(work_per_item, 1), &work)) {
    work = std::numeric_limits<int64_t>::max();
  }
  const int64_t worth = std::max<int64_t>(1, work / kMinWorkPerThread);
  const int64_t threads = std::min<int64_t>({HardwareThreads(), count, worth});
  if (threads <= 1) {
    body(0, count);
    return;
  }
  std::vector<std::thread> workers;
  const int64_t chunk = (count + threads - 1) / threads;
  for (int64_t begin = 0; begin < count; begin += chunk) {
    workers.emplace_back(
        [&body, begin, end = std::min(count, begin + chunk)] { body(begin, end); });
  }
  for (std::thread& worker : workers) worker.join();
}

}  // namespace fp8dot::cpu
