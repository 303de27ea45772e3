// Splits [0, count) into one contiguous range per hardware thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace fp8dot::cpu {

template <typename Body>  // Body: void(int64_t begin, int64_t end)
void ParallelFor(int64_t count, const Body& body) {
  if (count <= 0) return;
  const int64_t threads =
      std::clamp<int64_t>(static_cast<int64_t>(std::thread::hardware_concurrency()), 1, count);
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
