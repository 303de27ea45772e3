// Emulation of the accumulation each AccumulationMode performs on the GPU, one output element at
// a time. FP8 modes use the tensor-core accumulator model (fp8dot/accumulator_model.h); the other
// modes round the inputs to the type the tensor cores read (TF32, bf16, f16; split into 3, 6 or 9
// products for the _X3/_X6/_X9 algorithms) and accumulate in f32 (or f16/bf16/f64 as named).
#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu/canonical_operands.h"
#include "cpu/dot_epilogue.h"
#include "fp8dot/cpu_backend.h"

namespace fp8dot {
namespace {

// ---------------------------------------------------------------------------------------------
// FP8: the tensor-core accumulator, over each run of the kernel's split of K (one run: all of K)
// in fast mode, flushed into an f32 register every promotion_interval K-elements in promoted
// mode, as cuBLASLt / DeepGEMM do. The runs' f32 results are added in order.

// The OperandAlignmentExponent of every element of a gathered operand, computed once per batch
// entry instead of once per product: the operand-exponent alignment adds a row's and a
// column's. Zeros, infinities and NaNs get the floor: their products are zero (whose exponents
// AddGroup ignores) or not finite (which it adds without aligning), and ilogb's INT_MAX for an
// infinity would overflow the sum.
void OperandAlignmentExponents(const double* values, int64_t count, int floor,
                               std::vector<int>& exponents) {
  exponents.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const double value = values[i];
    exponents[static_cast<size_t>(i)] =
        value == 0.0 || !std::isfinite(value) ? floor : OperandAlignmentExponent(value, floor);
  }
}

// a_exponents / b_exponents: the row's OperandAlignmentExponents, or null to align each product
// by its own exponent (ProductAlignment::kProductValue). run_ends: KSliceEnds of the dot's K.
float Fp8DotProduct(const cpu::CanonicalOperands& operands, const Fp8AccumulatorModel& model,
                    bool promoted, const std::vector<int64_t>& run_ends, const double* a_row,
                    const double* b_row, const int* a_exponents, const int* b_exponents, int64_t m,
                    int64_t n) {
  // Block scales are applied when a block's partial sum is promoted, so a block always promotes
  // at its end and no tensor-core step straddles two blocks.
  const bool block_scaled = IsBlockScale(operands.lhs_scale_mode);
  const int64_t scale_block = operands.ScaleBlockK();
  Fp8Accumulator accumulator(model);
  // One tensor-core step's products and their alignment exponents; per thread, not per output
  // element (two allocations per element were a tenth of a small dot's time).
  thread_local std::vector<double> group;
  thread_local std::vector<int> exponents;
  group.resize(static_cast<size_t>(model.group_size));
  exponents.resize(static_cast<size_t>(model.group_size));
  float sum = 0.0f;  // the runs' results, added in f32
  int64_t k0 = 0;
  bool first_run = true;
  for (const int64_t run_end : run_ends) {
    float promoted_sum = 0.0f;  // the run's FP32 register
    while (k0 < run_end) {
      const int64_t block_end = (k0 / scale_block + 1) * scale_block;
      const int count =
          static_cast<int>(std::min<int64_t>({model.group_size, run_end - k0, block_end - k0}));
      double* products = group.data();
      int* product_exponents = exponents.data();
      for (int i = 0; i < count; ++i) products[i] = a_row[k0 + i] * b_row[k0 + i];
      if (a_exponents != nullptr) {
        for (int i = 0; i < count; ++i) {
          product_exponents[i] = a_exponents[k0 + i] + b_exponents[k0 + i];
        }
      } else {
        for (int i = 0; i < count; ++i) {
          product_exponents[i] = products[i] == 0.0 ? 0 : BinaryExponent(products[i]);
        }
      }
      accumulator.AddGroup(products, product_exponents, count);
      k0 += count;
      const bool at_block_end = block_scaled && k0 % scale_block == 0;
      if (promoted && (k0 % model.promotion_interval == 0 || at_block_end || k0 == run_end)) {
        const float partial = static_cast<float>(accumulator.value());
        if (block_scaled) {
          const int64_t kb = (k0 - 1) / scale_block;
          const float scale = operands.LhsScale(m, kb) * operands.RhsScale(n, kb);
          promoted_sum = model.fused_promotion ? std::fma(partial, scale, promoted_sum)
                                               : promoted_sum + partial * scale;
        } else {
          promoted_sum += partial;
        }
        accumulator.Reset();
      }
    }
    const float run = promoted ? promoted_sum : static_cast<float>(accumulator.value());
    sum = first_run ? run : sum + run;  // (0 + run would turn -0 into +0)
    first_run = false;
    accumulator.Reset();
  }
  if (block_scaled) return sum;
  return sum * (operands.LhsScale(m, 0) * operands.RhsScale(n, 0));
}

// ---------------------------------------------------------------------------------------------
// Non-FP8 modes.

enum class InputRounding { kNone, kTf32, kBf16, kF16 };
enum class Accumulator { kF32, kF16, kBf16, kF64 };

struct ModeRecipe {
  InputRounding rounding;
  int splits;         // each input is a sum of this many values of the rounded type
  int product_count;  // how many of the split products are summed (3, 6, 9 ...)
  Accumulator accumulator;
};

ModeRecipe RecipeFor(AccumulationMode mode) {
  switch (mode) {
    case AccumulationMode::kTf32:
      return {InputRounding::kTf32, 1, 1, Accumulator::kF32};
    case AccumulationMode::kTf32x3:
      return {InputRounding::kTf32, 2, 3, Accumulator::kF32};
    case AccumulationMode::kBf16:
      return {InputRounding::kBf16, 1, 1, Accumulator::kF32};
    case AccumulationMode::kBf16x3:
      return {InputRounding::kBf16, 3, 3, Accumulator::kF32};
    case AccumulationMode::kBf16x6:
      return {InputRounding::kBf16, 3, 6, Accumulator::kF32};
    case AccumulationMode::kBf16x9:
      return {InputRounding::kBf16, 3, 9, Accumulator::kF32};
    case AccumulationMode::kF16:
      return {InputRounding::kF16, 1, 1, Accumulator::kF32};
    case AccumulationMode::kF16Accumulate:
      return {InputRounding::kF16, 1, 1, Accumulator::kF16};
    case AccumulationMode::kBf16Accumulate:
      return {InputRounding::kBf16, 1, 1, Accumulator::kBf16};
    case AccumulationMode::kF64:
      return {InputRounding::kNone, 1, 1, Accumulator::kF64};
    default:
      return {InputRounding::kNone, 1, 1, Accumulator::kF32};
  }
}

double RoundInput(double x, InputRounding rounding) {
  switch (rounding) {
    case InputRounding::kNone:
      return x;
    case InputRounding::kTf32: {
      // f32 exponent range, 10 fraction bits, round to nearest even.
      if (x == 0.0 || !std::isfinite(x)) return x;
      const double quantum = std::ldexp(1.0, std::ilogb(x) - 10);
      return static_cast<float>(std::nearbyint(x / quantum) * quantum);
    }
    case InputRounding::kBf16:
      return RoundToDType(x, DType::kBF16);
    case InputRounding::kF16:
      return RoundToDType(x, DType::kF16);
  }
  return x;
}

// Products of split parts in order of decreasing significance: (0,0) | (0,1) (1,0) | (1,1)
// (0,2) (2,0) | (1,2) (2,1) (2,2). XLA's _X3 sums the first 3, _X6 the first 6, _X9 all.
constexpr int kSplitProductOrder[9][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}, {0, 2},
                                          {2, 0}, {1, 2}, {2, 1}, {2, 2}};

double OtherDotProduct(const ModeRecipe& recipe, const double* a_row, const double* b_row,
                       int64_t k_size) {
  double sum = 0.0;
  for (int64_t k = 0; k < k_size; ++k) {
    double a_parts[3] = {0, 0, 0}, b_parts[3] = {0, 0, 0};
    double a_rest =
        recipe.accumulator == Accumulator::kF64 ? a_row[k] : static_cast<float>(a_row[k]);
    double b_rest =
        recipe.accumulator == Accumulator::kF64 ? b_row[k] : static_cast<float>(b_row[k]);
    for (int s = 0; s < recipe.splits; ++s) {
      a_parts[s] = RoundInput(a_rest, recipe.rounding);
      b_parts[s] = RoundInput(b_rest, recipe.rounding);
      a_rest -= a_parts[s];
      b_rest -= b_parts[s];
    }
    for (int p = 0; p < recipe.product_count; ++p) {
      const double a_part = a_parts[kSplitProductOrder[p][0]];
      const double b_part = b_parts[kSplitProductOrder[p][1]];
      switch (recipe.accumulator) {
        case Accumulator::kF32:  // one FMA per product, as the tensor core's f32 adder
          sum = std::fmaf(static_cast<float>(a_part), static_cast<float>(b_part),
                          static_cast<float>(sum));
          break;
        case Accumulator::kF16:
          sum = RoundToDType(sum + a_part * b_part, DType::kF16);
          break;
        case Accumulator::kBf16:
          sum = RoundToDType(sum + a_part * b_part, DType::kBF16);
          break;
        case Accumulator::kF64:
          sum = std::fma(a_part, b_part, sum);
          break;
      }
    }
  }
  return sum;
}

std::vector<double> EmulatedScaledProducts(const cpu::CanonicalOperands& operands,
                                           const DotArguments& arguments,
                                           const Fp8AccumulatorModel& model) {
  const AccumulationMode mode = operands.dot.accumulation;
  const int64_t k = operands.dot.k;
  if (IsFp8Accumulation(mode)) {
    const bool promoted = mode == AccumulationMode::kFp8Promoted;
    const bool by_operands = model.alignment == ProductAlignment::kOperandExponents;
    std::vector<int> lhs_exponents, rhs_exponents;
    // Once per dot: a vector per output element took a sixth of a 512x256x64 dot's time.
    const std::vector<int64_t> run_ends = KSliceEnds(k, model.split);
    const auto prepare_batch = [&](const double* a, const double* b) {
      if (!by_operands) return;
      OperandAlignmentExponents(a, operands.dot.m * k,
                                DTypeMinNormalExponent(arguments.lhs->dtype()), lhs_exponents);
      OperandAlignmentExponents(b, operands.dot.n * k,
                                DTypeMinNormalExponent(arguments.rhs->dtype()), rhs_exponents);
    };
    return cpu::ForEachOutput(
        operands, arguments,
        [&](const double* a_row, const double* b_row, int64_t m, int64_t n) {
          return static_cast<double>(
              Fp8DotProduct(operands, model, promoted, run_ends, a_row, b_row,
                            by_operands ? lhs_exponents.data() + m * k : nullptr,
                            by_operands ? rhs_exponents.data() + n * k : nullptr, m, n));
        },
        prepare_batch);
  }
  const ModeRecipe recipe = RecipeFor(mode);
  return cpu::ForEachOutput(
      operands, arguments, [&](const double* a_row, const double* b_row, int64_t m, int64_t n) {
        // Non-FP8 dots take tensor scales only; they multiply the f32 result.
        const double scale = static_cast<float>(operands.LhsScale(m, 0) * operands.RhsScale(n, 0));
        return OtherDotProduct(recipe, a_row, b_row, k) * scale;
      });
}

}  // namespace

StatusOr<DotResult> EmulatedDot(const DotSpec& spec, const DotArguments& arguments,
                                const Fp8AccumulatorModel& model) {
  FP8_RETURN_IF_ERROR(model.Validate());
  FP8_ASSIGN_OR_RETURN(cpu::CanonicalOperands operands, cpu::Canonicalize(spec, arguments));
  return cpu::MakeResult(spec, operands, arguments,
                         EmulatedScaledProducts(operands, arguments, model),
                         cpu::EpilogueArithmetic::kComputeType);
}

}  // namespace fp8dot
