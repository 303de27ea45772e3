// Parses HLO text as XLA prints it and as JAX exports it
// (jax.jit(f).lower(...).compiler_ir('hlo').as_hlo_text()). docs/hlo.md lists what is accepted.
#pragma once

#include <memory>
#include <string_view>

#include "fp8dot/hlo/hlo_ir.h"
#include "fp8dot/status.h"

namespace fp8dot::hlo {

// The module in `text`. Malformed text gives INVALID_ARGUMENT whose message is
//   "<filename>:<line>:<col>: error: <what was expected>\n<source line>\n<caret>"
// for the first error found. Never crashes and never aborts, whatever the input (the parser is
// fuzzed). The result is not verified: call VerifyHloModule for shape checks.
StatusOr<std::unique_ptr<HloModule>> ParseHloModule(std::string_view text,
                                                    std::string_view filename = "<hlo>");

// Reads the file at `path` and parses it (NOT_FOUND if it cannot be read).
StatusOr<std::unique_ptr<HloModule>> ParseHloModuleFile(const std::string& path);

// A shape in HLO notation, e.g. "f32[2,3]{1,0}" or "(f32[2], s32[])".
StatusOr<Shape> ParseShape(std::string_view text);

}  // namespace fp8dot::hlo
