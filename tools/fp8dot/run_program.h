// Runs a helper program (the accuracy plot's python3) without a shell: the arguments reach it
// exactly as given, so quotes, `$(...)` or `;` in a file name are only characters.
#pragma once

#include <string>
#include <vector>

#include "fp8dot/status.h"

namespace fp8dot::cli {

// Runs argv[0] (looked up on PATH) with `argv`, waits for it, and fails unless it exits 0. The
// error names `what`, the program and its exit status.
Status RunProgram(const std::vector<std::string>& argv, const std::string& what);

}  // namespace fp8dot::cli
