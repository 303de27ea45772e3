// GemmEngine names (cuda_backend.h); built with and without CUDA, so the CLI and the bindings
// parse the option either way.
#include "fp8dot/cuda_backend.h"

namespace fp8dot {

const char* GemmEngineName(GemmEngine engine) {
  switch (engine) {
    case GemmEngine::kAuto:
      return "auto";
    case GemmEngine::kCublasLt:
      return "cublaslt";
    case GemmEngine::kOwn:
      return "own";
  }
  return "?";
}

StatusOr<GemmEngine> ParseGemmEngine(std::string_view text) {
  for (GemmEngine engine : {GemmEngine::kAuto, GemmEngine::kCublasLt, GemmEngine::kOwn}) {
    if (text == GemmEngineName(engine)) return engine;
  }
  return InvalidArgument("unknown GEMM engine '%.*s' (expected auto, cublaslt or own)",
                         static_cast<int>(text.size()), text.data());
}

}  // namespace fp8dot
