// How a GPU kernel cuts the contracted dimension K into independently accumulated slices
// (cuBLASLt's split-K). Both the CUDA backend (which reads it from the algorithm it runs) and the
// CPU emulation (which reproduces it) use this one description.
#pragma once

#include <cstdint>
#include <vector>

namespace fp8dot {

// How the GPU kernel cuts K (cuBLASLt's split-K): K is divided into tiles of `tile` elements and
// the tiles into `slices` runs of ceil(tiles / slices) consecutive tiles each (the last run may be
// shorter). Each run is accumulated on its own from zero, fast or promoted alike, and the runs'
// f32 results are added in order (CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE). The H200 runs at
// M = N = 16..64, K = 16384..262144 end exactly there (docs/accuracy.md, section 4).
struct KSplit {
  int slices = 1;  // 1: one run over all of K
  int tile = 128;  // K-elements per kernel tile (MATMUL_STAGES_128xAUTO: 128)
};

// The end of each run of `split` over [0, k): ascending, the last one is k ({k} when there is
// one slice or the tile is unknown).
std::vector<int64_t> KSliceEnds(int64_t k, const KSplit& split);

}  // namespace fp8dot
