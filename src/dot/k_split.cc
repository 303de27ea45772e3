#include "fp8dot/k_split.h"

#include <algorithm>

namespace fp8dot {

std::vector<int64_t> KSliceEnds(int64_t k, const KSplit& split) {
  if (split.slices <= 1 || split.tile < 1) return {k};
  const int64_t tiles = (k + split.tile - 1) / split.tile;
  const int64_t tiles_per_slice = std::max<int64_t>(1, (tiles + split.slices - 1) / split.slices);
  std::vector<int64_t> ends;
  for (int64_t end = tiles_per_slice * split.tile; end < k; end += tiles_per_slice * split.tile) {
    ends.push_back(end);
  }
  ends.push_back(k);
  return ends;
}

}  // namespace fp8dot
