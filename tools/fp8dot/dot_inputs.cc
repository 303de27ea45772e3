#include "dot_inputs.h"

#include <cctype>
#include <climits>
#include <cmath>
#include <tuple>

#include "fp8dot/npy.h"

namespace fp8dot::cli {

const CLI::Validator& IntegerValidator() {
  // Runs ahead of CLI::Range, which calls text that is no number "not in range".
  static const CLI::Validator validator(
      [](std::string& text) -> std::string {
        int64_t value = 0;
        return CLI::detail::lexical_cast(text, value) ? std::string()
                                                      : "'" + text + "' is not an integer";
      },
      "INTEGER", "integer");
  return validator;
}

void AddDotFlags(CLI::App& command, DotFlags& flags) {
  const CLI::Range kDimRange(int64_t{1}, int64_t{1} << 40);
  for (auto [name, value, help] : {
           std::tuple{"--m", &flags.m, "Rows of A and D (random inputs)"},
           std::tuple{"--n", &flags.n, "Columns of B and D (random inputs)"},
           std::tuple{"--k", &flags.k, "Contracted dim (random inputs)"},
       }) {
    command.add_option(name, *value, help)->check(IntegerValidator())->check(kDimRange);
  }
  command.add_option("--batch", flags.batch, "Leading batch dim on both operands (0: none)")
      ->check(IntegerValidator())
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  command.add_option("--lhs-type", flags.lhs_type,
                     "Element type of A: f8e4m3fn (default), f8e5m2, bf16, f16, f32, f64");
  command.add_option("--rhs-type", flags.rhs_type, "Element type of B (default f8e4m3fn)");
  command.add_option("--out-type", flags.out_type, "Output type: f32, bf16, f16, f8e4m3fn, f8e5m2");
  command.add_option("--precision", flags.precision,
                     "operand_precision as lhs,rhs (default, high, highest); one value sets both");
  command.add_option("--algorithm", flags.algorithm,
                     "PrecisionConfig algorithm: unset, any_f8_any_f8_f32, "
                     "any_f8_any_f8_f32_fast_accum, tf32_tf32_f32, f32_f32_f32, ...");
  command.add_option("--lhs-scale-mode", flags.lhs_scale_mode,
                     "none, tensor, outer (per row), 1x128, 128x128");
  command.add_option("--rhs-scale-mode", flags.rhs_scale_mode,
                     "none, tensor, outer (per column), 1x128, 128x128");
  command.add_option("--lhs", flags.lhs_path, ".npy file for A (instead of random)");
  command.add_option("--rhs", flags.rhs_path, ".npy file for B (instead of random)");
  command.add_option("--lhs-scale", flags.lhs_scale_path,
                     ".npy f32 scale for A (needs --lhs-scale-mode)");
  command.add_option("--rhs-scale", flags.rhs_scale_path,
                     ".npy f32 scale for B (needs --rhs-scale-mode)");
  command.add_option("--lhs-batch-dims", flags.lhs_batch_dims, "dot_general lhs_batch_dimensions")
      ->delimiter(',');
  command.add_option("--rhs-batch-dims", flags.rhs_batch_dims, "dot_general rhs_batch_dimensions")
      ->delimiter(',');
  command
      .add_option("--lhs-contracting-dims", flags.lhs_contracting_dims,
                  "dot_general lhs_contracting_dimensions")
      ->delimiter(',');
  command
      .add_option("--rhs-contracting-dims", flags.rhs_contracting_dims,
                  "dot_general rhs_contracting_dimensions")
      ->delimiter(',');
  command.add_option("--epilogue", flags.epilogue,
                     "default, bias, relu, bias_relu, gelu, bias_gelu");
  command.add_option("--alpha", flags.alpha, "D = alpha * scale_a * scale_b * A.B + beta * C");
  command.add_option("--beta", flags.beta, "Non-zero: a random C is added");
  command.add_option("--output-scale", flags.output_scale, "scale_d for FP8 outputs")->expected(1);
  command.add_flag("--amax", flags.amax, "Also compute amax = max |D|");
  command.add_option("--distribution", flags.distribution,
                     "Random inputs: symmetric, positive, heavy-tailed, mixed");
  command.add_option("--seed", flags.seed, "Random seed");
  AddBackendFlags(command, flags.backend);
  command.add_option("--accumulator-bits", flags.accumulator_bits,
                     "Emulation: fraction bits kept by the FP8 fast accumulator");
  command.add_option("--accumulator-rounding", flags.accumulator_rounding,
                     "Emulation: truncate or nearest");
  command.add_option("--accumulator-group", flags.accumulator_group,
                     "Emulation: products per tensor-core accumulator step");
  command.add_option("--promotion-interval", flags.promotion_interval,
                     "K-elements between FP32 promotions in promoted mode: the emulation's, and "
                     "with --engine own the kernel's (a multiple of 128; tensor or row scales)");
  command.add_flag("--fused-promotion", flags.fused_promotion,
                   "Emulation: block-scaled promotions as one FMA (fp8dot's own kernel) instead "
                   "of a multiply and an add (cuBLASLt)");
  command.add_option("--accumulator-alignment", flags.accumulator_alignment,
                     "Emulation: align products by their operands' exponent sum (operands, the "
                     "H200) or by their own exponent (product)");
  command.add_option("--max-memory", flags.max_memory,
                     "Most host memory one dot problem may take (operands, scales, C, bias, "
                     "output, reference), checked before anything is allocated: bytes or "
                     "512M, 8G, 1T (default: half the physical memory)");
  command.add_option("--split-k", flags.split_k,
                     "Emulation: split-K slices of 128-element K-tiles, each accumulated on its "
                     "own: S, or K=S,K=S,... per K (what --backend cuda --explain prints)");
}

StatusOr<PrecisionConfig> ParsePrecisionConfig(const std::string& precision,
                                               const std::string& algorithm) {
  PrecisionConfig config;
  config.operand_precision.clear();
  size_t start = 0;
  while (true) {
    const size_t comma = precision.find(',', start);
    FP8_ASSIGN_OR_RETURN(Precision p, ParsePrecision(precision.substr(start, comma - start)));
    config.operand_precision.push_back(p);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (config.operand_precision.size() == 1)
    config.operand_precision.push_back(config.operand_precision[0]);
  if (config.operand_precision.size() != 2) {
    return InvalidArgument("--precision takes one or two values (lhs,rhs), got '%s'",
                           precision.c_str());
  }
  FP8_ASSIGN_OR_RETURN(config.algorithm, ParseAlgorithm(algorithm));
  return config;
}

StatusOr<DotProblemOptions> ToProblemOptions(const DotFlags& flags) {
  DotProblemOptions options;
  options.batch = flags.batch;
  options.m = flags.m;
  options.n = flags.n;
  options.k = flags.k;
  std::optional<DType> lhs_type, rhs_type;  // as given on the command line
  if (!flags.lhs_type.empty()) {
    FP8_ASSIGN_OR_RETURN(lhs_type, ParseDType(flags.lhs_type));
  }
  if (!flags.rhs_type.empty()) {
    FP8_ASSIGN_OR_RETURN(rhs_type, ParseDType(flags.rhs_type));
  }
  options.lhs_type = lhs_type.value_or(DType::kF8E4M3FN);
  options.rhs_type = rhs_type.value_or(DType::kF8E4M3FN);
  FP8_ASSIGN_OR_RETURN(options.output_type, ParseDType(flags.out_type));
  FP8_ASSIGN_OR_RETURN(options.precision_config,
                       ParsePrecisionConfig(flags.precision, flags.algorithm));
  FP8_ASSIGN_OR_RETURN(options.lhs_scale_mode, ParseScaleMode(flags.lhs_scale_mode));
  FP8_ASSIGN_OR_RETURN(options.rhs_scale_mode, ParseScaleMode(flags.rhs_scale_mode));
  FP8_ASSIGN_OR_RETURN(options.epilogue, ParseEpilogue(flags.epilogue));
  FP8_ASSIGN_OR_RETURN(options.distribution, ParseDistribution(flags.distribution));
  options.alpha = flags.alpha;
  options.beta = flags.beta;
  if (!flags.output_scale.empty()) {
    const double scale = flags.output_scale[0];
    // D is divided by it: 0, inf and NaN give zeros or NaNs, a negative one flips the sign.
    if (!std::isfinite(scale) || scale <= 0) {
      return InvalidArgument("--output-scale must be a finite number > 0, got %g", scale);
    }
    options.output_scale = scale;
  }
  options.compute_amax = flags.amax;
  if (!flags.max_memory.empty()) {
    FP8_ASSIGN_OR_RETURN(options.memory_limit_bytes,
                         ParseByteSize(flags.max_memory, "--max-memory"));
  }
  options.seed = flags.seed;

  if (flags.lhs_path.empty() != flags.rhs_path.empty()) {
    return InvalidArgument("--lhs and --rhs must be given together");
  }
  if (!flags.lhs_path.empty()) {
    FP8_ASSIGN_OR_RETURN(options.lhs, ReadNpy(flags.lhs_path, lhs_type));
    FP8_ASSIGN_OR_RETURN(options.rhs, ReadNpy(flags.rhs_path, rhs_type));
  }
  const bool custom_dims = !flags.lhs_batch_dims.empty() || !flags.rhs_batch_dims.empty() ||
                           !flags.lhs_contracting_dims.empty() ||
                           !flags.rhs_contracting_dims.empty();
  if (custom_dims) {
    if (flags.lhs_path.empty()) {
      return InvalidArgument("--*-batch-dims and --*-contracting-dims need --lhs/--rhs inputs");
    }
    options.dimension_numbers =
        DotDimensionNumbers{flags.lhs_batch_dims, flags.rhs_batch_dims, flags.lhs_contracting_dims,
                            flags.rhs_contracting_dims};
  }
  auto load_scale = [](const std::string& path, ScaleMode mode, const char* side,
                       std::optional<HostTensor>& out) -> Status {
    if (path.empty()) return OkStatus();
    if (mode == ScaleMode::kNone) {
      return InvalidArgument("--%s-scale needs --%s-scale-mode (tensor, outer, 1x128, 128x128)",
                             side, side);
    }
    FP8_ASSIGN_OR_RETURN(out, ReadNpy(path, DType::kF32));
    return OkStatus();
  };
  FP8_RETURN_IF_ERROR(
      load_scale(flags.lhs_scale_path, options.lhs_scale_mode, "lhs", options.lhs_scale));
  FP8_RETURN_IF_ERROR(
      load_scale(flags.rhs_scale_path, options.rhs_scale_mode, "rhs", options.rhs_scale));
  return options;
}

StatusOr<int64_t> ParseByteSize(const std::string& text, const char* option) {
  size_t end = 0;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
  int shift = -1;
  const std::string unit = text.substr(end);
  if (unit.empty()) shift = 0;
  if (unit == "K" || unit == "k") shift = 10;
  if (unit == "M" || unit == "m") shift = 20;
  if (unit == "G" || unit == "g") shift = 30;
  if (unit == "T" || unit == "t") shift = 40;
  if (end == 0 || end > 15 || shift < 0) {
    return InvalidArgument("%s takes a byte count such as 4096, 512M, 8G or 1T, got '%s'", option,
                           text.c_str());
  }
  const int64_t count = std::stoll(text.substr(0, end));
  if (count <= 0 || count > (INT64_MAX >> shift)) {
    return InvalidArgument("%s must be > 0 and < 2^63 bytes, got '%s'", option, text.c_str());
  }
  return count << shift;
}

Status RefuseOptions(const CLI::App& command, std::initializer_list<const char*> names,
                     const char* why) {
  for (const char* name : names) {
    if (command.count(name) > 0) return InvalidArgument("%s: %s", name, why);
  }
  return OkStatus();
}

Status RefuseRandomShapeOptionsWithFiles(const CLI::App& command, const DotFlags& flags) {
  if (flags.lhs_path.empty() && flags.rhs_path.empty()) return OkStatus();
  return RefuseOptions(command, {"--m", "--n", "--k", "--batch", "--distribution"},
                       "shapes random operands only; with --lhs/--rhs files the files' shapes "
                       "and values are used");
}

StatusOr<BackendChoice> ToBackendChoice(const DotFlags& flags) {
  BackendChoice choice;
  FP8_ASSIGN_OR_RETURN(choice.backend, ToBackend(flags.backend));
  FP8_ASSIGN_OR_RETURN(choice.engine, ToGemmEngine(flags.backend, choice.backend));
  FP8_ASSIGN_OR_RETURN(choice.sm_count_target, ToSmCountTarget(flags.backend, choice.backend));
  choice.model.fused_promotion = flags.fused_promotion;
  choice.model.mantissa_bits = flags.accumulator_bits;
  choice.model.group_size = flags.accumulator_group;
  choice.model.promotion_interval = flags.promotion_interval;
  FP8_ASSIGN_OR_RETURN(choice.model.rounding,
                       ParseAccumulatorRounding(flags.accumulator_rounding.c_str()));
  if (flags.accumulator_alignment == "operands") {
    choice.model.alignment = ProductAlignment::kOperandExponents;
  } else if (flags.accumulator_alignment == "product") {
    choice.model.alignment = ProductAlignment::kProductValue;
  } else {
    return InvalidArgument("unknown --accumulator-alignment '%s' (expected operands or product)",
                           flags.accumulator_alignment.c_str());
  }
  FP8_ASSIGN_OR_RETURN(choice.split_k, ParseSplitKChoice(flags.split_k));
  FP8_RETURN_IF_ERROR(choice.model.Validate());
  return choice;
}

}  // namespace fp8dot::cli
