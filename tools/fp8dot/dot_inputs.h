// Command-line options shared by subcommands that build a dot (types, precision, scales, ...),
// and their conversion into DotProblemOptions with clear errors.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "backend_runner.h"
#include "fp8dot/dot_problem.h"

namespace fp8dot::cli {

struct DotFlags {
  int64_t m = 64, n = 64, k = 256, batch = 0;
  // Empty: f8e4m3fn for random inputs, the file's type for .npy inputs.
  std::string lhs_type, rhs_type;
  std::string out_type = "f32";
  std::string precision = "default,default";
  std::string algorithm = "unset";
  std::string lhs_scale_mode = "none", rhs_scale_mode = "none";
  std::string lhs_path, rhs_path, lhs_scale_path, rhs_scale_path;
  std::vector<int64_t> lhs_batch_dims, rhs_batch_dims, lhs_contracting_dims, rhs_contracting_dims;
  std::string epilogue = "default";
  double alpha = 1.0, beta = 0.0;
  std::vector<double> output_scale;  // zero or one value
  bool amax = false;
  std::string distribution = "symmetric";
  uint64_t seed = 1;
  BackendFlags backend{.backend = "auto"};
  int accumulator_bits = Fp8AccumulatorModel().mantissa_bits;
  std::string accumulator_rounding = "truncate";
  int accumulator_group = Fp8AccumulatorModel().group_size;
  int promotion_interval = Fp8AccumulatorModel().promotion_interval;
  std::string accumulator_alignment = "operands";
  bool fused_promotion = false;
  std::string split_k = "1";
  std::string max_memory;  // empty: DefaultMemoryLimitBytes()
};

// Registers the options on `command`.
void AddDotFlags(CLI::App& command, DotFlags& flags);
// "default,highest" -> PrecisionConfig; one value applies to both operands.
StatusOr<PrecisionConfig> ParsePrecisionConfig(const std::string& precision,
                                               const std::string& algorithm);
StatusOr<DotProblemOptions> ToProblemOptions(const DotFlags& flags);
// "4096", "512M", "8G", "1T" (binary units) -> bytes; the error names `option`.
StatusOr<int64_t> ParseByteSize(const std::string& text, const char* option);
// Fails when any option in `names` was given on `command`'s line: a mode that would ignore an
// option refuses it instead. The error names the first such option and `why`.
Status RefuseOptions(const CLI::App& command, std::initializer_list<const char*> names,
                     const char* why);
// The options that only shape random operands, refused together with --lhs/--rhs files.
Status RefuseRandomShapeOptionsWithFiles(const CLI::App& command, const DotFlags& flags);
StatusOr<BackendChoice> ToBackendChoice(const DotFlags& flags);

}  // namespace fp8dot::cli
